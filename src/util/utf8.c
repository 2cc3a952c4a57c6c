#include "pmbot/utf8.h"

#include <stdint.h>
#include <string.h>
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
				i += 8;
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
