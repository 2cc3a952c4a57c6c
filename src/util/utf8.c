#include "pmbot/utf8.h"

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "pmbot/banned.h"

size_t pmbot_utf8_decode(const char *str, size_t left, unsigned long *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = left ? pmbot_utf8_seq(s, left) : 0, i;
	unsigned long v;

	if (!n)
		return 0;
	v = n == 1 ? s[0] : n == 2 ? s[0] & 0x1fu : n == 3 ? s[0] & 0x0fu : s[0] & 0x07u;
	for (i = 1; i < n; i++)
		v = (v << 6) | (s[i] & 0x3fu);
	*cp = v;
	return n;
}

/* Does the 8-byte word hold a byte that is 0 or >= 0x80? */
static int word_not_plain_ascii(uint64_t w)
{
	return ((w - 0x0101010101010101ULL) | w) & 0x8080808080808080ULL ? 1 : 0;
}

/* Bytes from `i` on that are plain ASCII (1 to 0x7f), counted 64 at a time; a multiple of 64. */
static size_t plain_run(const unsigned char *s, size_t i, size_t len)
{
	size_t from = i;

#if defined(__SSE2__)
	const __m128i zero = _mm_setzero_si128();

	while (len - i >= 64) {
		const __m128i *p = (const __m128i *)(const void *)(s + i);
		__m128i a = _mm_loadu_si128(p), b = _mm_loadu_si128(p + 1);
		__m128i c = _mm_loadu_si128(p + 2), d = _mm_loadu_si128(p + 3);
		/* A byte's top bit: set when >= 0x80, or when it is 0 (the compare). */
		__m128i bad = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));

		bad = _mm_or_si128(bad, _mm_or_si128(
			_mm_or_si128(_mm_cmpeq_epi8(a, zero), _mm_cmpeq_epi8(b, zero)),
			_mm_or_si128(_mm_cmpeq_epi8(c, zero), _mm_cmpeq_epi8(d, zero))));
		if (_mm_movemask_epi8(bad))
			break;
		i += 64;
	}
#else
	(void)s;
	(void)len;
#endif
	return i - from;
}

/*
 * Positions are only needed on failure, so the scan does not count lines and
 * columns; it recounts the valid prefix once when it finds a bad byte.
 */
int pmbot_utf8_valid(const char *str, size_t len, size_t *bad_offset, int *line, int *column)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, j;
	int ln = 1, col = 1;

	while (i < len) {
		size_t n;

		if (len - i >= 8) {
			uint64_t w;

			memcpy(&w, s + i, 8);
			if (!word_not_plain_ascii(w)) {
				/* In a plain run (most of a report): on 64 bytes a step. */
				i += 8;
				i += plain_run(s, i, len);
				continue;
			}
		}
		if (!(n = pmbot_utf8_seq(s + i, len - i)))
			break;
		i += n;
	}
	if (i >= len)
		return 1;
	for (j = 0; j < i; j++) {
		if (s[j] == '\n') {
			ln++;
			col = 1;
		} else if ((s[j] & 0xc0) != 0x80) {
			col++;
		}
	}
	if (bad_offset)
		*bad_offset = i;
	if (line)
		*line = ln;
	if (column)
		*column = col;
	return 0;
}
