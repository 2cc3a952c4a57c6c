#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include "../../src/report/isodate.h"
#include "pmbot/banned.h"

static const char *const valid[] = {
	/* calendar dates, extended and basic */
	"2026-02-22", "20260222", "2024-02-29", "20240229", "2000-02-29", "0000-01-01",
	"9999-12-31",
	/* date-times as accepted before issue 14: RFC 3339 forms stay valid */
	"2026-02-22T10:00:00Z", "2026-02-22T10:00", "2026-02-22t10:00:00z",
	"2026-02-22 10:00:00", "2026-02-22T10:00:00.123+01:00", "2026-02-22T23:59:60Z",
	"2026-02-22T10:00:00-23:59",
	/* offsets */
	"2026-02-22T10:00:00+0100", "2026-02-22T10:00:00+01", "2026-02-22T10:00-05",
	"20260222T100000+01:00",
	/* basic date-times */
	"20260222T100000Z", "20260222T1000", "20260222T100000.5+0100", "20260222t100000,25z",
	/* fractions with a comma, hour 24 as midnight at the end of the day */
	"2026-02-22T10:00:00,5Z", "2026-02-22T24:00:00Z", "2026-02-22T24:00",
	"2026-02-22T24:00:00.000", "20260222T240000",
	/* week dates; 2026 and 2020 are long years, 2015 too */
	"2026-W08", "2026-W08-7", "2026W087", "2026W08", "2026-W53-1", "2020-W53",
	"2015W537", "2026-W01-1T00:00Z", "2026W087T100000Z",
	/* ordinal dates */
	"2026-053", "2026053", "2024-366", "2026-365", "2026-053T10:00:00Z", "2026053T1000+01",
};

static const char *const invalid[] = {
	"", "2026", "2026-02", "202602", "26-02-22", "2026/02/22", "22.02.2026",
	/* the calendar */
	"2026-02-29", "1900-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "2026-01-00",
	"20260230", "2026-W00", "2026-W54", "2025-W53", "2027W53", "2026-W08-0", "2026-W08-8",
	"2026-000", "2026-366", "2026366", "2024-367",
	/* times */
	"2026-02-22T25:00", "2026-02-22T24:01", "2026-02-22T24:00:01", "2026-02-22T24:00:00.1",
	"2026-02-22T10:60", "2026-02-22T10:00:61", "2026-02-22T10", "20260222T10",
	"2026-02-22T", "2026-02-22T10:00:00.", "2026-02-22T10:00.5", "2026-02-22T1:00",
	/* mixing basic and extended date and time */
	"2026-02-22T100000Z", "20260222T10:00:00Z", "2026-0222", "202602-22", "2026-W087",
	"2026W08-7", "20260222 100000",
	/* a time on a week without a day */
	"2026-W08T10:00", "2026W08T1000",
	/* offsets */
	"2026-02-22T10:00:00+24:00", "2026-02-22T10:00:00+01:60", "2026-02-22T10:00:00+1",
	"2026-02-22T10:00:00+01:0", "2026-02-22T10:00:00+010", "2026-02-22T10:00:00ZZ",
	"2026-02-22T10:00:00 Z", "2026-02-22T10:00:00+01:00x", "2026-02-22Z",
	/* trailing or leading junk, non-ASCII digits */
	" 2026-02-22", "2026-02-22 ", "2026-02-22\n", "２０２６-02-22", "+2026-02-22",
};

static void test_valid(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(valid) / sizeof(*valid); i++) {
		if (!pmbot_report_isodate_valid(valid[i]))
			fail_msg("refused valid '%s'", valid[i]);
	}
}

static void test_invalid(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(invalid) / sizeof(*invalid); i++) {
		if (pmbot_report_isodate_valid(invalid[i]))
			fail_msg("accepted invalid '%s'", invalid[i]);
	}
}

/* Every proper prefix of a value must be judged without reading past its end. */
static void test_prefixes(void **state)
{
	char b[64];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(valid) / sizeof(*valid); i++)
		for (n = 0; valid[i][n]; n++) {
			snprintf(b, sizeof(b), "%.*s", (int)n, valid[i]);
			(void)pmbot_report_isodate_valid(b);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_prefixes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
