#include "pmbot/glob.h"

#include <stdint.h>
#include <string.h>

#include "pmbot/common.h"
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

/*
 * Two levels of the classic wildcard algorithm that remembers only the
 * last star: inside a segment the units are characters and the star is
 * '*'; across segments the units are whole segments and the star is "**".
 * Every other pattern item consumes exactly one unit, which is what makes
 * forgetting earlier stars safe and keeps the work polynomial.
 */

/* Bytes that are not well-formed UTF-8 decode above U+10FFFF, so they only
 * ever equal the same byte and never an overlong spelling of a character. */
static size_t decode(const char *s, const char *e, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = pmbot_utf8_seqlen(u[0]), i;
	unsigned char lo = 0x80, hi = 0xbf;
	uint32_t c;

	if (u[0] < 0x80 || n == 1 || n > (size_t)(e - s))
		goto raw;
	if (u[0] == 0xe0)
		lo = 0xa0;
	else if (u[0] == 0xed)
		hi = 0x9f;
	else if (u[0] == 0xf0)
		lo = 0x90;
	else if (u[0] == 0xf4)
		hi = 0x8f;
	if (u[1] < lo || u[1] > hi)
		goto raw;
	c = u[0] & (0x3f >> (n - 1));
	for (i = 1; i < n; i++) {
		if (i > 1 && (u[i] < 0x80 || u[i] > 0xbf))
			goto raw;
		c = (c << 6) | (u[i] & 0x3f);
	}
	*cp = c;
	return n;
raw:
	*cp = u[0] < 0x80 ? u[0] : 0x110000u + u[0];
	return 1;
}

static int class_char(const char **q, const char *pe, uint32_t *cp)
{
	if (**q == '\\') {
		(*q)++;
		if (*q >= pe)
			return -1;
	}
	*q += decode(*q, pe, cp);
	return 0;
}

/*
 * Parse the class at *pp ('[') inside the segment ending at pe and test
 * character c against it. Returns -1 when the class is not closed in the
 * segment, else 1 / 0 for a hit / a miss, with *pp moved past the ']'.
 */
static int class_match(const char **pp, const char *pe, uint32_t c)
{
	const char *q = *pp + 1;
	int neg = 0, hit = 0, first = 1;
	uint32_t lo, hi;

	if (q < pe && (*q == '!' || *q == '^')) {
		neg = 1;
		q++;
	}
	for (;;) {
		if (q >= pe)
			return -1;
		if (*q == ']' && !first)
			break;
		first = 0;
		if (class_char(&q, pe, &lo) < 0)
			return -1;
		hi = lo;
		if (q + 1 < pe && *q == '-' && q[1] != ']') {
			q++;
			if (class_char(&q, pe, &hi) < 0)
				return -1;
		}
		if (lo <= c && c <= hi)
			hit = 1;
	}
	*pp = q + 1;
	return hit != neg;
}

/* Match one non-star pattern item against one character; advance both on
 * success only. */
static int one_match(const char **pp, const char *pe, const char **sp, const char *se)
{
	const char *p = *pp;
	uint32_t c, pc;
	size_t n = decode(*sp, se, &c);

	if (*p == '?') {
		p++;
	} else if (*p == '[') {
		if (class_match(&p, pe, c) != 1)
			return 0;
	} else {
		if (*p == '\\' && ++p >= pe)
			return 0;
		p += decode(p, pe, &pc);
		if (pc != c)
			return 0;
	}
	*pp = p;
	*sp += n;
	return 1;
}

static int seg_match(const char *p, const char *pe, const char *s, const char *se)
{
	const char *star_p = NULL, *star_s = NULL;
	uint32_t skip;

	while (s < se) {
		if (p < pe && *p == '*') {
			while (p < pe && *p == '*')
				p++;
			star_p = p;
			star_s = s;
			continue;
		}
		if (p < pe && one_match(&p, pe, &s, se))
			continue;
		if (!star_p)
			return 0;
		star_s += decode(star_s, se, &skip);
		s = star_s;
		p = star_p;
	}
	while (p < pe && *p == '*')
		p++;
	return p == pe;
}

static const char *seg_end(const char *s)
{
	const char *e = strchr(s, '/');

	return e ? e : s + strlen(s);
}

static int is_dstar(const char *p, const char *pe)
{
	return pe - p == 2 && p[0] == '*' && p[1] == '*';
}

int pmbot_glob_check(const char *pattern, size_t *bad_offset, const char **reason)
{
	const char *p = pattern, *why = NULL, *at = pattern;

	if (!pattern || !*pattern) {
		why = "empty pattern";
		goto done;
	}
	for (;;) {
		const char *pe = seg_end(p);

		if (p == pe) {
			at = p;
			why = "empty path segment (leading, trailing or double '/')";
			goto done;
		}
		while (p < pe) {
			if (*p == '\\') {
				if (p + 1 >= pe) {
					at = p;
					why = "'\\' at the end of a segment escapes nothing";
					goto done;
				}
				p += 2;
			} else if (*p == '[') {
				const char *q = p;

				if (class_match(&q, pe, 0) < 0) {
					at = p;
					why = "'[' is not closed by ']' within its segment";
					goto done;
				}
				p = q;
			} else {
				p++;
			}
		}
		if (!*pe)
			break;
		p = pe + 1;
	}
done:
	if (!why)
		return 0;
	if (bad_offset)
		*bad_offset = pattern ? (size_t)(at - pattern) : 0;
	if (reason)
		*reason = why;
	return PMBOT_EINVALID;
}

int pmbot_glob_match(const char *pattern, const char *path)
{
	const char *p = pattern, *s = path, *pe, *se;
	const char *star_p = NULL, *star_s = NULL;

	if (!path || !*path || pmbot_glob_check(pattern, NULL, NULL))
		return 0;
	while (s) {
		if (p) {
			pe = seg_end(p);
			if (is_dstar(p, pe)) {
				/* A final "**" takes every remaining segment, and at
				 * least one remains here. */
				if (!*pe)
					return 1;
				p = star_p = pe + 1;
				star_s = s;
				continue;
			}
			se = seg_end(s);
			if (seg_match(p, pe, s, se)) {
				p = *pe ? pe + 1 : NULL;
				s = *se ? se + 1 : NULL;
				continue;
			}
		}
		if (!star_p)
			return 0;
		se = seg_end(star_s);
		star_s = *se ? se + 1 : NULL;
		s = star_s;
		p = star_p;
	}
	while (p) {
		pe = seg_end(p);
		if (!is_dstar(p, pe) || !*pe)
			break;
		p = pe + 1;
	}
	return p == NULL;
}

int pmbot_glob_may_match_under(const char *pattern, const char *dir)
{
	const char *p = pattern, *s = dir, *pe, *se;

	if (!dir || pmbot_glob_check(pattern, NULL, NULL))
		return 0;
	if (!*dir)
		return 1;
	while (s) {
		pe = seg_end(p);
		if (is_dstar(p, pe))
			return 1;
		/* The pattern's last segment would have to match the directory
		 * itself, but only paths below it are asked about. */
		if (!*pe)
			return 0;
		se = seg_end(s);
		if (!seg_match(p, pe, s, se))
			return 0;
		p = pe + 1;
		s = *se ? se + 1 : NULL;
	}
	return 1;
}
