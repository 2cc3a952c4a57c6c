#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/datetime.h"
#include "pmbot/banned.h"

static void test_datetime__parses_rfc3339_with_offsets_and_fractions(void **unused)
{
	long long t = 0;

	(void)unused;
	assert_int_equal(pmbot_datetime_parse(&t, "1970-01-01T00:00:00Z"), PMBOT_OK);
	assert_int_equal(t, 0);
	assert_int_equal(pmbot_datetime_parse(&t, "2026-11-02T10:00:00Z"), PMBOT_OK);
	assert_int_equal(t, 1793613600LL);
	assert_int_equal(pmbot_datetime_parse(&t, "2026-11-02T11:30:00.999+01:30"), PMBOT_OK);
	assert_int_equal(t, 1793613600LL);
	assert_int_equal(pmbot_datetime_parse(&t, "2026-11-02t05:00:00-05:00"), PMBOT_OK);
	assert_int_equal(t, 1793613600LL);
	assert_int_equal(pmbot_datetime_parse(&t, "2024-02-29T00:00:00z"), PMBOT_OK);
	assert_int_equal(pmbot_datetime_parse(&t, "1969-12-31T23:59:59Z"), PMBOT_OK);
	assert_int_equal(t, -1);
}

static void test_datetime__refuses_invalid_calendar_and_syntax(void **unused)
{
	static const char *const bad[] = {
		"", "2026-11-02", "2026-11-02T10:00:00", "2026-02-29T00:00:00Z",
		"2100-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-31T00:00:00Z",
		"2026-11-02T24:00:00Z", "2026-11-02T10:60:00Z", "2026-11-02T10:00:60Z",
		"2026-11-02 10:00:00Z", "2026-11-02T10:00:00.Z", "2026-11-02T10:00:00+0100",
		"2026-11-02T10:00:00+24:00", "2026-11-02T10:00:00Zjunk", "26-11-02T10:00:00Z",
	};
	long long t;
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (pmbot_datetime_parse(&t, bad[i]) != PMBOT_EINVALID)
			fail_msg("accepted `%s`", bad[i]);
	assert_int_equal(pmbot_datetime_parse(&t, NULL), PMBOT_EINVALID);
}

static void test_datetime__formats_utc_and_round_trips(void **unused)
{
	static const long long samples[] = { 0, 1, 86399, 86400, 951782400LL, 1793613600LL,
		-1, -86401, 253402300799LL };
	pmbot_buf b = PMBOT_BUF_INIT;
	long long t;
	size_t i;

	(void)unused;
	assert_int_equal(pmbot_datetime_format(&b, 1793613600LL), PMBOT_OK);
	assert_string_equal(b.buf, "2026-11-02T10:00:00Z");
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		pmbot_buf_clear(&b);
		assert_int_equal(pmbot_datetime_format(&b, samples[i]), PMBOT_OK);
		assert_int_equal(pmbot_datetime_parse(&t, b.buf), PMBOT_OK);
		assert_int_equal(t, samples[i]);
	}
	pmbot_buf_clear(&b);
	assert_int_equal(pmbot_datetime_format(&b, 253402300800LL), PMBOT_EINVALID);
	pmbot_buf_free(&b);
}

static void test_datetime__dates_are_checked_against_the_calendar(void **unused)
{
	(void)unused;
	assert_int_equal(pmbot_datetime_date_valid("2024-02-29"), 1);
	assert_int_equal(pmbot_datetime_date_valid("2023-02-29"), 0);
	assert_int_equal(pmbot_datetime_date_valid("2026-13-01"), 0);
	assert_int_equal(pmbot_datetime_date_valid("2026-11-2"), 0);
	assert_int_equal(pmbot_datetime_date_valid("2026-11-02T00:00:00Z"), 0);
	assert_int_equal(pmbot_datetime_date_valid(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_datetime__parses_rfc3339_with_offsets_and_fractions),
		cmocka_unit_test(test_datetime__refuses_invalid_calendar_and_syntax),
		cmocka_unit_test(test_datetime__formats_utc_and_round_trips),
		cmocka_unit_test(test_datetime__dates_are_checked_against_the_calendar),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
