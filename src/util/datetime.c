#include "pmbot/datetime.h"

#include <string.h>

#include "pmbot/banned.h"

/*
 * RFC 3339 times as GitHub writes them, and calendar dates: below every
 * module that reads or writes a time (state, the GitHub client's pauses,
 * apply's resume notes), so none of them depends on another for it.
 */

static int digits(const char *s, int n, int *out)
{
	int i, v = 0;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

static int days_in_month(int y, int m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : days[m - 1];
}

/* "YYYY-MM-DD" at `s` (10 bytes, calendar checked). 0 or -1. */
static int parse_date(const char *s, int *y, int *m, int *d)
{
	if (digits(s, 4, y) || s[4] != '-' || digits(s + 5, 2, m) || s[7] != '-' ||
	    digits(s + 8, 2, d))
		return -1;
	if (*m < 1 || *m > 12 || *d < 1 || *d > days_in_month(*y, *m))
		return -1;
	return 0;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant). */
static long long days_from_civil(long long y, int m, int d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(long long z, long long *y, int *m, int *d)
{
	long long era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

int pmbot_datetime_parse(long long *out, const char *s)
{
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	const char *p;

	if (!s || strlen(s) < 20 || parse_date(s, &y, &mo, &d) < 0 ||
	    (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) || s[13] != ':' ||
	    digits(s + 14, 2, &mi) || s[16] != ':' || digits(s + 17, 2, &sec) ||
	    h > 23 || mi > 59 || sec > 59)
		return PMBOT_EINVALID;
	p = s + 19;
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return PMBOT_EINVALID;
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) ||
		    oh > 23 || om > 59)
			return PMBOT_EINVALID;
		p += 6;
	} else {
		return PMBOT_EINVALID;
	}
	if (*p)
		return PMBOT_EINVALID;
	*out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
		sign * (oh * 3600 + om * 60);
	return PMBOT_OK;
}

int pmbot_datetime_format(pmbot_buf *out, long long t)
{
	long long days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400), rem = t - days * 86400, y;
	int m, d;

	civil_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999)
		return PMBOT_EINVALID;
	if (pmbot_buf_printf(out, "%04lld-%02d-%02dT%02lld:%02lld:%02lldZ", y, m, d,
			rem / 3600, rem / 60 % 60, rem % 60) < 0)
		return PMBOT_ERROR;
	return PMBOT_OK;
}

int pmbot_datetime_date_valid(const char *s)
{
	int y, m, d;

	return s && strlen(s) == 10 && parse_date(s, &y, &m, &d) == 0;
}
