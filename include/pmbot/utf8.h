#ifndef PMBOT_UTF8_H
#define PMBOT_UTF8_H

#include <stddef.h>

/*
 * Check that `len` bytes are well-formed UTF-8 (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF) and hold no NUL byte.
 * Returns 1 when valid. Otherwise returns 0 and, when the pointers are not
 * NULL, stores the byte offset of the first bad byte and its 1-based line
 * and column (columns count characters, not bytes).
 */
int pmbot_utf8_valid(const char *s, size_t len, size_t *bad_offset, int *line, int *column);

/*
 * Length in bytes of the UTF-8 sequence starting with byte `c` (1 for
 * invalid). Inline, with the next, because parsers call them per byte.
 */
static inline size_t pmbot_utf8_seqlen(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef)
		return 3;
	if (c >= 0xf0 && c <= 0xf4)
		return 4;
	return 1;
}

/*
 * Length of the well-formed sequence at `s` (at most `left` bytes, at
 * least 1), 0 when the bytes there are not well-formed UTF-8 (RFC 3629)
 * or are a NUL byte. The one rule every reader of UTF-8 applies.
 */
static inline size_t pmbot_utf8_seq(const unsigned char *s, size_t left)
{
	size_t n = pmbot_utf8_seqlen(s[0]), i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (s[0] == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (n == 1 || n > left)
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/*
 * Decode the well-formed sequence at `s` (at most `left` bytes): its length,
 * with the code point in `*cp`; 0 when the bytes there are not well-formed
 * UTF-8 or are a NUL byte.
 */
size_t pmbot_utf8_decode(const char *s, size_t left, unsigned long *cp);

#endif
