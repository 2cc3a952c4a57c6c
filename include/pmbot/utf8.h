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

/* Length in bytes of the UTF-8 sequence starting with byte `c` (1 for invalid). */
size_t pmbot_utf8_seqlen(unsigned char c);

/*
 * Decode the well-formed sequence at `s` (at most `left` bytes): its length,
 * with the code point in `*cp`; 0 when the bytes there are not well-formed
 * UTF-8 or are a NUL byte.
 */
size_t pmbot_utf8_decode(const char *s, size_t left, unsigned long *cp);

#endif
