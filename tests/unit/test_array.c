#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/array.h"
#include "pmbot/banned.h"

static void test_array__grows_by_doubling_and_keeps_the_content(void **unused)
{
	int *v = NULL, *p;
	size_t alloc = 0, n, reallocs = 0;

	(void)unused;
	for (n = 0; n < 10000; n++) {
		size_t before = alloc;

		p = pmbot_array_grow(v, &alloc, n + 1, sizeof(*p));
		assert_non_null(p);
		v = p;
		reallocs += alloc != before;
		assert_true(alloc >= n + 1);
		v[n] = (int)n;
	}
	for (n = 0; n < 10000; n++)
		assert_int_equal(v[n], (int)n);
	/* 8, 16, … 16384: logarithmic, not one per element. */
	assert_int_equal(reallocs, 12);
	free(v);
}

static void test_array__room_already_there_is_not_reallocated(void **unused)
{
	size_t alloc = 0;
	char *v = pmbot_array_grow(NULL, &alloc, 3, 1), *p;

	(void)unused;
	assert_non_null(v);
	assert_int_equal(alloc, 8);
	p = pmbot_array_grow(v, &alloc, 8, 1);
	assert_ptr_equal(p, v);
	assert_int_equal(alloc, 8);
	free(p);
}

static void test_array__an_under_reported_room_is_safe(void **unused)
{
	size_t alloc = 0;
	long *v = malloc(5 * sizeof(*v)), *p;

	(void)unused;
	assert_non_null(v);
	/* An array allocated elsewhere, exactly full: grow as if it had no room. */
	p = pmbot_array_grow(v, &alloc, 6, sizeof(*v));
	assert_non_null(p);
	assert_true(alloc >= 6);
	p[5] = 1;
	free(p);
}

static void test_array__an_overflowing_size_fails_and_leaves_the_array(void **unused)
{
	size_t alloc = 0;
	char *v = pmbot_array_grow(NULL, &alloc, 1, 1);

	(void)unused;
	assert_non_null(v);
	assert_null(pmbot_array_grow(v, &alloc, SIZE_MAX / 2, 4));
	assert_int_equal(alloc, 8);
	assert_null(pmbot_array_grow(v, &alloc, 9, 0));
	assert_int_equal(alloc, 8);
	v[7] = 'x';
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_array__grows_by_doubling_and_keeps_the_content),
		cmocka_unit_test(test_array__room_already_there_is_not_reallocated),
		cmocka_unit_test(test_array__an_under_reported_room_is_safe),
		cmocka_unit_test(test_array__an_overflowing_size_fails_and_leaves_the_array),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
