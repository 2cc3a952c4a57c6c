#include <stddef.h>

#include "isodate.h"
#include "pmbot/banned.h"

/*
 * One value is all basic or all extended format: ISO-8601 forbids mixing, and
 * a mixed value is more likely a typo than a date. The space separator and the
 * lower-case t/z come from RFC 3339, which pm-bot accepted before ISO-8601
 * was widened; they stay accepted so that no report that validated stops
 * validating.
 */

static int dig(char c)
{
	return c >= '0' && c <= '9';
}

/* n digits at s as a number, or -1 when any is not a digit. */
static int num(const char *s, int n)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (!dig(s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static int leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Weekday of 31 December of y, 0 = Sunday; +400 years keeps it non-negative. */
static int dec31(int y)
{
	y += 400;
	return (y + y / 4 - y / 100 + y / 400) % 7;
}

/* A year has ISO week 53 when it starts on a Thursday, or is leap and starts on a Wednesday. */
static int long_year(int y)
{
	return dec31(y) == 4 || dec31(y - 1) == 3;
}

/*
 * A complete date at s in extended (ext=1) or basic (ext=0) format. Returns the
 * characters consumed, 0 when it is not one; *ext is set to the format seen.
 * Reduced precision (2026, 2026-02) is refused: it names a span, not a day, and
 * the basic 202602 is ambiguous in ISO-8601 itself. The week date without a
 * weekday (2026-W08) is the one reduced form accepted, as asked for in issue 14.
 */
static size_t date(const char *s, int *ext, int *reduced)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y = num(s, 4), a, b;

	*reduced = 0;
	if (y < 0)
		return 0;
	s += 4;
	*ext = *s == '-';
	if (*ext)
		s++;
	if (*s == 'W') {
		a = num(s + 1, 2);
		if (a < 1 || a > 53 || (a == 53 && !long_year(y)))
			return 0;
		s += 3;
		if (*ext ? (s[0] == '-' && dig(s[1])) : dig(s[0])) {
			b = s[*ext] - '0';
			if (b < 1 || b > 7)
				return 0;
			return *ext ? 10 : 8;
		}
		*reduced = 1;
		return *ext ? 8 : 7;
	}
	a = num(s, 2);
	if (a < 0)
		return 0;
	/* Three digits then no fourth (or the extended '-') is an ordinal date. */
	if (dig(s[2]) && (*ext ? s[3] != '-' && !dig(s[3]) : !dig(s[3]))) {
		a = num(s, 3);
		if (a < 1 || a > (leap(y) ? 366 : 365))
			return 0;
		return *ext ? 8 : 7;
	}
	if (*ext && s[2] != '-')
		return 0;
	b = num(s + 2 + *ext, 2);
	if (a < 1 || a > 12 || b < 1 || b > mdays[a - 1] || (a == 2 && b == 29 && !leap(y)))
		return 0;
	return *ext ? 10 : 8;
}

/* hh:mm[:ss[(.|,)f+]] or hhmm[ss[(.|,)f+]]; hour 24 only as 24:00[:00[.0+]]. */
static size_t time_of_day(const char *s, int ext)
{
	const char *p = s;
	int h = num(p, 2), m, sec = 0, nonzero = 0;

	if (h < 0 || h > 24)
		return 0;
	p += 2;
	if (ext && *p++ != ':')
		return 0;
	m = num(p, 2);
	if (m < 0 || m > 59)
		return 0;
	p += 2;
	if (ext ? *p == ':' : dig(*p)) {
		p += ext;
		sec = num(p, 2);
		/* 60 is a leap second, accepted as RFC 3339 does. */
		if (sec < 0 || sec > 60)
			return 0;
		p += 2;
		if ((*p == '.' || *p == ',') && dig(p[1])) {
			for (p++; dig(*p); p++)
				nonzero |= *p != '0';
		}
	}
	if (h == 24 && (m || sec || nonzero))
		return 0;
	return (size_t)(p - s);
}

/*
 * Z, ±hh, ±hh:mm or ±hhmm; hh 00-23, mm 00-59. Either offset form follows
 * either time format: strftime's %z writes +0100 after an extended time, and
 * that is the one mix met in real reports (issue 14's differential run).
 */
static int zone(const char *s)
{
	int h, m;

	if (!*s)
		return 1;
	if ((s[0] == 'Z' || s[0] == 'z') && !s[1])
		return 1;
	if (s[0] != '+' && s[0] != '-')
		return 0;
	h = num(s + 1, 2);
	if (h < 0 || h > 23)
		return 0;
	s += 3;
	if (!*s)
		return 1;
	if (*s == ':')
		s++;
	m = num(s, 2);
	return m >= 0 && m <= 59 && !s[2];
}

int pmbot_report_isodate_valid(const char *s)
{
	int ext, reduced;
	size_t n = date(s, &ext, &reduced);

	if (!n)
		return 0;
	s += n;
	if (!*s)
		return 1;
	/* A time needs a whole day to belong to. */
	if (reduced || !(*s == 'T' || *s == 't' || (ext && *s == ' ')))
		return 0;
	s++;
	n = time_of_day(s, ext);
	if (!n)
		return 0;
	return zone(s + n);
}
