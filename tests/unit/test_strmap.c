#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/strmap.h"
#include "pmbot/banned.h"

#define MANY 100000

static void test_strmap__empty_map_finds_nothing(void **state)
{
	pmbot_strmap m = PMBOT_STRMAP_INIT;
	void *v = (void *)&m;

	(void)state;
	assert_int_equal(pmbot_strmap_get(&m, "anything", &v), 0);
	assert_ptr_equal(v, &m);
	assert_int_equal(pmbot_strmap_get(&m, "", NULL), 0);
	pmbot_strmap_free(&m);
	assert_int_equal(m.count, 0);
	assert_int_equal(m.cap, 0);
}

static void test_strmap__put_then_get_by_content(void **state)
{
	pmbot_strmap m = PMBOT_STRMAP_INIT;
	int one = 1, two = 2, empty = 0;
	char probe[16];
	void *v = NULL;

	(void)state;
	assert_int_equal(pmbot_strmap_put(&m, "task:one", &one, NULL), 0);
	assert_int_equal(pmbot_strmap_put(&m, "task:two", &two, NULL), 0);
	assert_int_equal(pmbot_strmap_put(&m, "", &empty, NULL), 0);
	assert_int_equal(m.count, 3);
	/* A different buffer with the same bytes finds the entry. */
	snprintf(probe, sizeof(probe), "task:%s", "two");
	assert_int_equal(pmbot_strmap_get(&m, probe, &v), 1);
	assert_ptr_equal(v, &two);
	assert_int_equal(pmbot_strmap_get(&m, "task:one", &v), 1);
	assert_ptr_equal(v, &one);
	assert_int_equal(pmbot_strmap_get(&m, "", &v), 1);
	assert_ptr_equal(v, &empty);
	assert_int_equal(pmbot_strmap_get(&m, "task:one", NULL), 1);
	assert_int_equal(pmbot_strmap_get(&m, "task:on", &v), 0);
	assert_int_equal(pmbot_strmap_get(&m, "task:one ", &v), 0);
	assert_int_equal(pmbot_strmap_get(&m, "TASK:ONE", &v), 0);
	pmbot_strmap_free(&m);
}

/* get_key gives the key as put, whether asked with it or with a copy. */
static void test_strmap__get_key_gives_the_pointer_put(void **state)
{
	pmbot_strmap m = PMBOT_STRMAP_INIT;
	char put[] = "task:a", copy[] = "task:a", other[] = "task:b";
	const char *stored = NULL;
	int one = 1;
	void *v = NULL;

	(void)state;
	assert_int_equal(pmbot_strmap_put(&m, put, &one, NULL), 0);
	assert_int_equal(pmbot_strmap_get_key(&m, copy, &stored, &v), 1);
	assert_ptr_equal(stored, put);
	assert_ptr_equal(v, &one);
	stored = NULL;
	assert_int_equal(pmbot_strmap_get_key(&m, put, &stored, NULL), 1);
	assert_ptr_equal(stored, put);
	stored = NULL;
	assert_int_equal(pmbot_strmap_get_key(&m, other, &stored, &v), 0);
	assert_null(stored);
	pmbot_strmap_free(&m);
}

static void test_strmap__null_values_are_values(void **state)
{
	pmbot_strmap m = PMBOT_STRMAP_INIT;
	void *v = (void *)&m, *existing = (void *)&m;

	(void)state;
	assert_int_equal(pmbot_strmap_put(&m, "k", NULL, NULL), 0);
	assert_int_equal(pmbot_strmap_get(&m, "k", &v), 1);
	assert_null(v);
	assert_int_equal(pmbot_strmap_put(&m, "k", &v, &existing), 1);
	assert_null(existing);
	pmbot_strmap_free(&m);
}

static void test_strmap__duplicate_put_reports_and_keeps_the_first_value(void **state)
{
	pmbot_strmap m = PMBOT_STRMAP_INIT;
	int first = 1, second = 2;
	void *existing = NULL, *v = NULL;
	char again[] = "feat:x";

	(void)state;
	assert_int_equal(pmbot_strmap_put(&m, "feat:x", &first, &existing), 0);
	assert_null(existing);
	assert_int_equal(pmbot_strmap_put(&m, again, &second, &existing), 1);
	assert_ptr_equal(existing, &first);
	assert_int_equal(pmbot_strmap_put(&m, again, &second, NULL), 1);
	assert_int_equal(m.count, 1);
	assert_int_equal(pmbot_strmap_get(&m, "feat:x", &v), 1);
	assert_ptr_equal(v, &first);
	pmbot_strmap_free(&m);
}

static void test_strmap__free_leaves_a_reusable_map(void **state)
{
	pmbot_strmap m = PMBOT_STRMAP_INIT;
	int x = 5;
	void *v = NULL;

	(void)state;
	assert_int_equal(pmbot_strmap_put(&m, "a", &x, NULL), 0);
	pmbot_strmap_free(&m);
	assert_null(m.slots);
	assert_int_equal(pmbot_strmap_get(&m, "a", &v), 0);
	assert_int_equal(pmbot_strmap_put(&m, "a", &x, NULL), 0);
	assert_int_equal(pmbot_strmap_get(&m, "a", &v), 1);
	assert_ptr_equal(v, &x);
	pmbot_strmap_free(&m);
}

static void test_strmap__hundred_thousand_keys_survive_every_rehash(void **state)
{
	pmbot_strmap m = PMBOT_STRMAP_INIT;
	char *arena = malloc((size_t)MANY * 16), *probe = malloc(16);
	size_t i, last_cap = 0, rehashes = 0;

	(void)state;
	assert_non_null(arena);
	assert_non_null(probe);
	for (i = 0; i < MANY; i++) {
		char *key = arena + i * 16;
		void *existing = NULL;

		snprintf(key, 16, "task:%zu", i);
		assert_int_equal(pmbot_strmap_put(&m, key, (void *)(uintptr_t)(i + 1), &existing), 0);
		if (m.cap != last_cap) {
			rehashes++;
			last_cap = m.cap;
		}
		/* Re-inserting the previous key right after a rehash is still a duplicate. */
		if (i) {
			assert_int_equal(pmbot_strmap_put(&m, arena + (i - 1) * 16, NULL, &existing), 1);
			assert_int_equal((uintptr_t)existing, i);
		}
	}
	assert_int_equal(m.count, MANY);
	assert_true(rehashes >= 10);
	/* The table stays a power of two at most half full. */
	assert_int_equal(m.cap & (m.cap - 1), 0);
	assert_true(m.count * 2 <= m.cap);
	for (i = 0; i < MANY; i++) {
		void *v = NULL, *existing = NULL;

		/* Look up through a separate buffer: keys match by content. */
		snprintf(probe, 16, "task:%zu", i);
		assert_int_equal(pmbot_strmap_get(&m, probe, &v), 1);
		assert_int_equal((uintptr_t)v, i + 1);
		assert_int_equal(pmbot_strmap_put(&m, probe, NULL, &existing), 1);
		assert_int_equal((uintptr_t)existing, i + 1);
		snprintf(probe, 16, "feat:%zu", i);
		assert_int_equal(pmbot_strmap_get(&m, probe, &v), 0);
	}
	snprintf(probe, 16, "task:%d", MANY);
	assert_int_equal(pmbot_strmap_get(&m, probe, NULL), 0);
	assert_int_equal(m.count, MANY);
	pmbot_strmap_free(&m);
	free(arena);
	free(probe);
}

/* A reserved map takes that many keys without growing, and still finds them. */
static void test_strmap__reserve_makes_room_up_front(void **state)
{
	static const char *const keys[] = { "a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
		"k", "l", "m", "n", "o", "p", "q", "r", "s", "t" };
	pmbot_strmap m = PMBOT_STRMAP_INIT;
	size_t i, cap, n = sizeof(keys) / sizeof(keys[0]);
	void *v = NULL;

	(void)state;
	assert_int_equal(pmbot_strmap_reserve(&m, n), 0);
	cap = m.cap;
	assert_true(cap >= 2 * n);
	for (i = 0; i < n; i++)
		assert_int_equal(pmbot_strmap_put(&m, keys[i], (void *)keys[i], NULL), 0);
	assert_int_equal(m.cap, cap);
	assert_int_equal(pmbot_strmap_reserve(&m, 3), 0);
	assert_int_equal(m.cap, cap);
	for (i = 0; i < n; i++) {
		assert_int_equal(pmbot_strmap_get(&m, keys[i], &v), 1);
		assert_ptr_equal(v, keys[i]);
	}
	assert_int_equal(pmbot_strmap_get(&m, "u", &v), 0);
	pmbot_strmap_free(&m);
}

/*
 * Callers free what they put by walking the slots: each key is met once,
 * with its own value, after as many rehashes as 1,000 keys take.
 */
static void test_strmap__walking_the_slots_meets_each_key_once(void **state)
{
	pmbot_strmap m = PMBOT_STRMAP_INIT;
	static char keys[1000][8];
	unsigned char seen[1000] = { 0 };
	size_t i, met = 0;

	(void)state;
	for (i = 0; i < 1000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%zu", i);
		assert_int_equal(pmbot_strmap_put(&m, keys[i], &seen[i], NULL), 0);
	}
	for (i = 0; i < m.cap; i++) {
		size_t at;

		if (!m.slots[i].key)
			continue;
		at = (size_t)((unsigned char *)m.slots[i].value - seen);
		assert_true(at < 1000);
		assert_ptr_equal(m.slots[i].key, keys[at]);
		assert_int_equal(seen[at], 0);
		seen[at] = 1;
		met++;
	}
	assert_int_equal(met, 1000);
	assert_int_equal(m.count, 1000);
	pmbot_strmap_free(&m);
}

static void test_strmap__keys_sharing_long_prefixes_stay_distinct(void **state)
{
	pmbot_strmap m = PMBOT_STRMAP_INIT;
	char keys[256][80];
	size_t i;

	(void)state;
	for (i = 0; i < 256; i++) {
		memset(keys[i], 'p', 70);
		/* Keys that differ only in their last byte, including high bytes. */
		keys[i][70] = (char)(i ? i : 1);
		keys[i][71] = '\0';
		if (!i)
			keys[i][70] = '\0';
	}
	for (i = 0; i < 256; i++)
		assert_int_equal(pmbot_strmap_put(&m, keys[i], keys[i], NULL), 0);
	for (i = 0; i < 256; i++) {
		void *v = NULL;

		assert_int_equal(pmbot_strmap_get(&m, keys[i], &v), 1);
		assert_ptr_equal(v, keys[i]);
	}
	pmbot_strmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strmap__empty_map_finds_nothing),
		cmocka_unit_test(test_strmap__put_then_get_by_content),
		cmocka_unit_test(test_strmap__null_values_are_values),
		cmocka_unit_test(test_strmap__duplicate_put_reports_and_keeps_the_first_value),
		cmocka_unit_test(test_strmap__free_leaves_a_reusable_map),
		cmocka_unit_test(test_strmap__hundred_thousand_keys_survive_every_rehash),
		cmocka_unit_test(test_strmap__walking_the_slots_meets_each_key_once),
		cmocka_unit_test(test_strmap__keys_sharing_long_prefixes_stay_distinct),
		cmocka_unit_test(test_strmap__reserve_makes_room_up_front),
		cmocka_unit_test(test_strmap__get_key_gives_the_pointer_put),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
