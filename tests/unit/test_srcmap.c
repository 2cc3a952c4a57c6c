#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/doc.h"
#include "pmbot/banned.h"

static void assert_pos(const pmbot_srcmap *map, const char *pointer, int line, int col)
{
	int l = -1, c = -1;

	assert_int_equal(pmbot_srcmap_find(map, pointer, &l, &c), 1);
	assert_int_equal(l, line);
	assert_int_equal(c, col);
}

static void test_srcmap__find_returns_the_exact_entry(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();

	(void)state;
	assert_non_null(map);
	assert_int_equal(pmbot_srcmap_add(map, "", 1, 1), 0);
	assert_int_equal(pmbot_srcmap_add(map, "/tasks", 3, 5), 0);
	assert_int_equal(pmbot_srcmap_add(map, "/tasks/0", 4, 7), 0);
	assert_int_equal(pmbot_srcmap_add(map, "/tasks/0/title", 5, 9), 0);
	assert_pos(map, "", 1, 1);
	assert_pos(map, "/tasks", 3, 5);
	assert_pos(map, "/tasks/0", 4, 7);
	assert_pos(map, "/tasks/0/title", 5, 9);
	pmbot_srcmap_free(map);
}

static void test_srcmap__find_falls_back_to_the_nearest_ancestor(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();

	(void)state;
	assert_int_equal(pmbot_srcmap_add(map, "", 1, 1), 0);
	assert_int_equal(pmbot_srcmap_add(map, "/tasks", 3, 5), 0);
	assert_int_equal(pmbot_srcmap_add(map, "/tasks/0", 4, 7), 0);
	assert_pos(map, "/tasks/0/title/x/y", 4, 7);
	assert_pos(map, "/tasks/1", 3, 5);
	assert_pos(map, "/epics/0", 1, 1);
	/* "/task" is not an ancestor of "/tasks": tokens compare whole. */
	assert_pos(map, "/task", 1, 1);
	pmbot_srcmap_free(map);
}

static void test_srcmap__escaped_slash_is_part_of_the_token(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();

	(void)state;
	assert_int_equal(pmbot_srcmap_add(map, "", 1, 1), 0);
	assert_int_equal(pmbot_srcmap_add(map, "/a", 2, 2), 0);
	assert_int_equal(pmbot_srcmap_add(map, "/a~1b", 3, 3), 0);
	assert_int_equal(pmbot_srcmap_add(map, "/c~0d", 4, 4), 0);
	assert_pos(map, "/a~1b", 3, 3);
	assert_pos(map, "/a~1b/0", 3, 3);
	/* The parent of "/a~1c" is the root, not "/a". */
	assert_pos(map, "/a~1c", 1, 1);
	assert_pos(map, "/c~0d/e", 4, 4);
	assert_pos(map, "/c~1d", 1, 1);
	pmbot_srcmap_free(map);
}

static void test_srcmap__find_without_any_ancestor_returns_zero(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	int line = 9, col = 9;

	(void)state;
	assert_int_equal(pmbot_srcmap_add(map, "/a", 2, 2), 0);
	assert_int_equal(pmbot_srcmap_find(map, "/b/c", &line, &col), 0);
	assert_int_equal(line, 0);
	assert_int_equal(col, 0);
	assert_pos(map, "/a/c", 2, 2);
	pmbot_srcmap_free(map);
}

static void test_srcmap__find_on_an_empty_or_null_map_returns_zero(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	int line = 9, col = 9;

	(void)state;
	assert_int_equal(pmbot_srcmap_find(map, "", &line, &col), 0);
	assert_int_equal(line, 0);
	assert_int_equal(col, 0);
	line = col = 9;
	assert_int_equal(pmbot_srcmap_find(NULL, "/a", &line, &col), 0);
	assert_int_equal(line, 0);
	assert_int_equal(col, 0);
	assert_int_equal(pmbot_srcmap_find(map, "/a", NULL, NULL), 0);
	pmbot_srcmap_free(map);
	pmbot_srcmap_free(NULL);
}

static void test_srcmap__a_later_add_of_the_same_pointer_wins(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();

	(void)state;
	assert_int_equal(pmbot_srcmap_add(map, "/a", 2, 2), 0);
	assert_int_equal(pmbot_srcmap_add(map, "/a", 7, 3), 0);
	assert_pos(map, "/a", 7, 3);
	pmbot_srcmap_free(map);
}

static void test_srcmap__add_copies_the_pointer(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	char p[] = "/abc";

	(void)state;
	assert_int_equal(pmbot_srcmap_add(map, p, 5, 6), 0);
	p[1] = 'x';
	assert_pos(map, "/abc", 5, 6);
	assert_int_equal(pmbot_srcmap_find(map, p, NULL, NULL), 0);
	pmbot_srcmap_free(map);
}

/* Far more entries than the initial tables: every one survives growth. */
static void test_srcmap__keeps_every_entry_of_a_large_map(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	enum { N = 200000 };
	char p[64];
	int i;

	(void)state;
	assert_int_equal(pmbot_srcmap_add(map, "", 1, 1), 0);
	for (i = 0; i < N; i++) {
		snprintf(p, sizeof(p), "/tasks/%d/title", i);
		assert_int_equal(pmbot_srcmap_add(map, p, i + 2, i % 80 + 1), 0);
	}
	for (i = 0; i < N; i++) {
		snprintf(p, sizeof(p), "/tasks/%d/title", i);
		assert_pos(map, p, i + 2, i % 80 + 1);
	}
	assert_pos(map, "/tasks/5/goal", 1, 1);
	pmbot_srcmap_free(map);
}

static void test_srcmap__addn_takes_a_slice(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	int line = 0, col = 0;

	(void)state;
	assert_non_null(map);
	/* "/a/bc" of a longer text: no NUL after the slice. */
	assert_int_equal(pmbot_srcmap_addn(map, "/a/bcdef", 5, 7, 3), 0);
	assert_int_equal(pmbot_srcmap_find(map, "/a/bc", &line, &col), 1);
	assert_int_equal(line, 7);
	assert_int_equal(col, 3);
	/* Not "/a/bcdef"; a child falls back to it; add of the C string is the same entry. */
	assert_int_equal(pmbot_srcmap_find(map, "/a/bcdef", &line, &col), 0);
	assert_int_equal(pmbot_srcmap_find(map, "/a/bc/0", &line, &col), 1);
	assert_int_equal(line, 7);
	assert_int_equal(pmbot_srcmap_add(map, "/a/bc", 9, 1), 0);
	assert_int_equal(pmbot_srcmap_find(map, "/a/bc", &line, &col), 1);
	assert_int_equal(line, 9);
	assert_int_equal(pmbot_srcmap_find(map, "/a", &line, &col), 0);
	pmbot_srcmap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srcmap__find_returns_the_exact_entry),
		cmocka_unit_test(test_srcmap__find_falls_back_to_the_nearest_ancestor),
		cmocka_unit_test(test_srcmap__escaped_slash_is_part_of_the_token),
		cmocka_unit_test(test_srcmap__find_without_any_ancestor_returns_zero),
		cmocka_unit_test(test_srcmap__find_on_an_empty_or_null_map_returns_zero),
		cmocka_unit_test(test_srcmap__a_later_add_of_the_same_pointer_wins),
		cmocka_unit_test(test_srcmap__add_copies_the_pointer),
		cmocka_unit_test(test_srcmap__keeps_every_entry_of_a_large_map),
		cmocka_unit_test(test_srcmap__addn_takes_a_slice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
