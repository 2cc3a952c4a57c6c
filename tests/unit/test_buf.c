#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/banned.h"

static void test_buf__init_is_empty_with_a_usable_string(void **state)
{
	pmbot_buf b;

	(void)state;
	pmbot_buf_init(&b, 0);
	assert_non_null(b.buf);
	assert_string_equal(b.buf, "");
	assert_int_equal(b.len, 0);
	assert_int_equal(b.max, PMBOT_BUF_DEFAULT_MAX);
	pmbot_buf_init(&b, 10);
	assert_int_equal(b.max, 10);
	pmbot_buf_free(&b);
}

static void test_buf__static_initializer_has_default_cap(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	(void)state;
	assert_non_null(b.buf);
	assert_string_equal(b.buf, "");
	assert_int_equal(b.max, PMBOT_BUF_DEFAULT_MAX);
	assert_int_equal(pmbot_buf_puts(&b, "x"), 0);
	assert_string_equal(b.buf, "x");
	pmbot_buf_free(&b);
}

static void test_buf__appends_stay_nul_terminated(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_buf_put(&b, "abcXYZ", 3), 0);
	assert_int_equal(b.len, 3);
	assert_string_equal(b.buf, "abc");
	assert_int_equal(pmbot_buf_putc(&b, '-'), 0);
	assert_int_equal(pmbot_buf_puts(&b, "def"), 0);
	assert_int_equal(b.len, 7);
	assert_string_equal(b.buf, "abc-def");
	assert_int_equal(pmbot_buf_put(&b, NULL, 0), 0);
	assert_int_equal(b.len, 7);
	pmbot_buf_free(&b);
}

static void test_buf__keeps_embedded_nul_bytes(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_buf_put(&b, "a\0b", 3), 0);
	assert_int_equal(pmbot_buf_putc(&b, '\0'), 0);
	assert_int_equal(b.len, 4);
	assert_memory_equal(b.buf, "a\0b\0", 5);
	pmbot_buf_free(&b);
}

static void test_buf__write_past_cap_fails_and_leaves_content_unchanged(void **state)
{
	pmbot_buf b;

	(void)state;
	pmbot_buf_init(&b, 8);
	assert_int_equal(pmbot_buf_puts(&b, "12345"), 0);
	assert_int_equal(pmbot_buf_puts(&b, "6789"), PMBOT_ETOOBIG);
	assert_int_equal(b.len, 5);
	assert_string_equal(b.buf, "12345");
	assert_int_equal(pmbot_buf_printf(&b, "%d", 6789), PMBOT_ETOOBIG);
	assert_int_equal(b.len, 5);
	assert_string_equal(b.buf, "12345");
	/* Exactly reaching the cap is allowed; one more byte is not. */
	assert_int_equal(pmbot_buf_puts(&b, "678"), 0);
	assert_int_equal(b.len, 8);
	assert_string_equal(b.buf, "12345678");
	assert_int_equal(pmbot_buf_putc(&b, '9'), PMBOT_ETOOBIG);
	assert_string_equal(b.buf, "12345678");
	assert_int_equal(pmbot_buf_grow(&b, 1), PMBOT_ETOOBIG);
	assert_int_equal(pmbot_buf_grow(&b, 0), 0);
	pmbot_buf_free(&b);
}

static void test_buf__printf_into_spare_room_still_respects_the_cap(void **state)
{
	pmbot_buf b;
	char text[601];

	(void)state;
	memset(text, 'h', 600);
	text[600] = '\0';
	pmbot_buf_init(&b, 1000);
	assert_int_equal(pmbot_buf_put(&b, text, 40), 0);
	assert_int_equal(pmbot_buf_put(&b, text, 600), 0);
	assert_int_equal(pmbot_buf_put(&b, text, 100), 0);
	/* Doubling left more room allocated (>= 256) than the cap allows (260). */
	assert_int_equal(b.len, 740);
	assert_true(b.cap - b.len > 300);
	memset(text, 't', 300);
	text[300] = '\0';
	assert_int_equal(pmbot_buf_printf(&b, "%s", text), PMBOT_ETOOBIG);
	assert_int_equal(b.len, 740);
	assert_int_equal(b.buf[740], '\0');
	assert_int_equal(strlen(b.buf), 740);
	assert_int_equal(pmbot_buf_printf(&b, "%.260s", text), 0);
	assert_int_equal(b.len, 1000);
	assert_int_equal(b.buf[999], 't');
	assert_int_equal(b.buf[1000], '\0');
	pmbot_buf_free(&b);
}

static void test_buf__one_large_reservation_is_not_rounded_up(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t i, cap;

	(void)state;
	assert_int_equal(pmbot_buf_grow(&b, 1000000), 0);
	assert_int_equal(b.cap, 1000001);
	/* Small appends after it still double, so n appends cost O(n). */
	for (i = 0; i < 1000001; i++)
		assert_int_equal(pmbot_buf_putc(&b, 'x'), 0);
	cap = b.cap;
	assert_int_equal(cap, 2000002);
	assert_int_equal(b.len, 1000001);
	pmbot_buf_free(&b);
}

static void test_buf__huge_grow_is_refused_without_overflow(void **state)
{
	pmbot_buf b;

	(void)state;
	pmbot_buf_init(&b, SIZE_MAX);
	assert_int_equal(pmbot_buf_puts(&b, "abc"), 0);
	/* len + extra + 1 would wrap around to a tiny allocation. */
	assert_int_equal(pmbot_buf_grow(&b, SIZE_MAX - 1), PMBOT_ETOOBIG);
	assert_int_equal(pmbot_buf_grow(&b, SIZE_MAX), PMBOT_ETOOBIG);
	assert_string_equal(b.buf, "abc");
	pmbot_buf_free(&b);

	pmbot_buf_init(&b, 0);
	assert_int_equal(pmbot_buf_grow(&b, PMBOT_BUF_DEFAULT_MAX + 1), PMBOT_ETOOBIG);
	assert_int_equal(b.len, 0);
	pmbot_buf_free(&b);
}

static void test_buf__buf_is_never_null_after_free(void **state)
{
	pmbot_buf b;

	(void)state;
	pmbot_buf_init(&b, 100);
	pmbot_buf_free(&b);
	assert_non_null(b.buf);
	assert_string_equal(b.buf, "");
	assert_int_equal(pmbot_buf_puts(&b, "hello"), 0);
	pmbot_buf_free(&b);
	assert_non_null(b.buf);
	assert_string_equal(b.buf, "");
	assert_int_equal(b.len, 0);
	/* The cap survives a free so the buffer is reusable as configured. */
	assert_int_equal(b.max, 100);
	pmbot_buf_free(&b);
}

static void test_buf__detach_hands_over_the_content(void **state)
{
	pmbot_buf b;
	size_t len = 99;
	char *s;

	(void)state;
	pmbot_buf_init(&b, 50);
	assert_int_equal(pmbot_buf_puts(&b, "owned text"), 0);
	s = pmbot_buf_detach(&b, &len);
	assert_non_null(s);
	assert_string_equal(s, "owned text");
	assert_int_equal(len, 10);
	assert_non_null(b.buf);
	assert_string_equal(b.buf, "");
	assert_int_equal(b.len, 0);
	assert_int_equal(b.max, 50);
	assert_int_equal(pmbot_buf_puts(&b, "again"), 0);
	assert_string_equal(b.buf, "again");
	assert_string_equal(s, "owned text");
	free(s);
	pmbot_buf_free(&b);
}

static void test_buf__detach_of_empty_buffer_returns_freeable_empty_string(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t len = 99;
	char *s;

	(void)state;
	s = pmbot_buf_detach(&b, &len);
	assert_non_null(s);
	assert_string_equal(s, "");
	assert_int_equal(len, 0);
	assert_ptr_not_equal(s, pmbot_buf__empty);
	assert_non_null(b.buf);
	free(s);
	s = pmbot_buf_detach(&b, NULL);
	assert_non_null(s);
	free(s);
}

static void test_buf__printf_grows_past_any_initial_allocation(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	char *big = malloc(10001);
	size_t i;

	(void)state;
	assert_non_null(big);
	memset(big, 'q', 10000);
	big[10000] = '\0';
	assert_int_equal(pmbot_buf_printf(&b, "<%s|%d>", big, 42), 0);
	assert_int_equal(b.len, 10000 + 5);
	assert_int_equal(b.buf[0], '<');
	assert_int_equal(b.buf[10000], 'q');
	assert_string_equal(b.buf + 10001, "|42>");
	for (i = 0; i < 1000; i++)
		assert_int_equal(pmbot_buf_printf(&b, "%03zu,", i), 0);
	assert_int_equal(b.len, 10005 + 4000);
	assert_memory_equal(b.buf + 10005, "000,001,002,", 12);
	assert_string_equal(b.buf + b.len - 4, "999,");
	assert_true(b.cap > b.len);
	free(big);
	pmbot_buf_free(&b);
}

static void test_buf__printf_of_nothing_succeeds(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_buf_printf(&b, "%s", ""), 0);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.buf, "");
	pmbot_buf_free(&b);
}

static void test_buf__truncate_shrinks_and_never_grows(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	(void)state;
	pmbot_buf_truncate(&b, 0);
	pmbot_buf_truncate(&b, 5);
	assert_string_equal(b.buf, "");
	assert_int_equal(pmbot_buf_puts(&b, "abcdef"), 0);
	pmbot_buf_truncate(&b, 10);
	assert_int_equal(b.len, 6);
	assert_string_equal(b.buf, "abcdef");
	pmbot_buf_truncate(&b, 6);
	assert_string_equal(b.buf, "abcdef");
	pmbot_buf_truncate(&b, 3);
	assert_int_equal(b.len, 3);
	assert_string_equal(b.buf, "abc");
	assert_int_equal(pmbot_buf_puts(&b, "Z"), 0);
	assert_string_equal(b.buf, "abcZ");
	pmbot_buf_free(&b);
}

static void test_buf__clear_empties_but_keeps_the_allocation(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	char *before;
	size_t cap;

	(void)state;
	assert_int_equal(pmbot_buf_puts(&b, "some content"), 0);
	before = b.buf;
	cap = b.cap;
	pmbot_buf_clear(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.buf, "");
	assert_ptr_equal(b.buf, before);
	assert_int_equal(b.cap, cap);
	pmbot_buf_free(&b);
}

static void test_buf__appending_its_own_content_survives_reallocation(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	int i;

	(void)state;
	assert_int_equal(pmbot_buf_puts(&b, "0123456789"), 0);
	/* Each doubling outgrows the allocation, so grow must move the data. */
	for (i = 0; i < 10; i++)
		assert_int_equal(pmbot_buf_put(&b, b.buf, b.len), 0);
	assert_int_equal(b.len, 10240);
	for (i = 0; i < 1024; i++)
		assert_memory_equal(b.buf + 10 * i, "0123456789", 10);
	assert_int_equal(b.buf[b.len], '\0');
	assert_int_equal(pmbot_buf_put(&b, b.buf + 3, 4), 0);
	assert_string_equal(b.buf + b.len - 4, "3456");
	pmbot_buf_free(&b);
}

static void test_buf__putu_writes_what_printf_writes(void **state)
{
	static const size_t v[] = { 0, 7, 10, 99, 100, 12345, 4294967295u, (size_t)-1 };
	pmbot_buf a = PMBOT_BUF_INIT, b = PMBOT_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(pmbot_buf_putu(&a, v[i]), 0);
		assert_int_equal(pmbot_buf_printf(&b, "%zu", v[i]), 0);
		assert_int_equal(pmbot_buf_putc(&a, ','), 0);
		assert_int_equal(pmbot_buf_putc(&b, ','), 0);
	}
	assert_string_equal(a.buf, b.buf);
	assert_int_equal(strncmp(a.buf, "0,7,10,99,100,12345,", 20), 0);
	pmbot_buf_free(&a);
	pmbot_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf__init_is_empty_with_a_usable_string),
		cmocka_unit_test(test_buf__static_initializer_has_default_cap),
		cmocka_unit_test(test_buf__appends_stay_nul_terminated),
		cmocka_unit_test(test_buf__keeps_embedded_nul_bytes),
		cmocka_unit_test(test_buf__write_past_cap_fails_and_leaves_content_unchanged),
		cmocka_unit_test(test_buf__printf_into_spare_room_still_respects_the_cap),
		cmocka_unit_test(test_buf__one_large_reservation_is_not_rounded_up),
		cmocka_unit_test(test_buf__huge_grow_is_refused_without_overflow),
		cmocka_unit_test(test_buf__buf_is_never_null_after_free),
		cmocka_unit_test(test_buf__detach_hands_over_the_content),
		cmocka_unit_test(test_buf__detach_of_empty_buffer_returns_freeable_empty_string),
		cmocka_unit_test(test_buf__printf_grows_past_any_initial_allocation),
		cmocka_unit_test(test_buf__printf_of_nothing_succeeds),
		cmocka_unit_test(test_buf__truncate_shrinks_and_never_grows),
		cmocka_unit_test(test_buf__clear_empties_but_keeps_the_allocation),
		cmocka_unit_test(test_buf__appending_its_own_content_survives_reallocation),
		cmocka_unit_test(test_buf__putu_writes_what_printf_writes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
