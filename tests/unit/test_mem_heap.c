#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cmocka.h>

#include "pmbot/common.h"
#include "pmbot/mem.h"
#include "helpers/hugepage.h"
#include "pmbot/banned.h"

/*
 * pmbot_mem_huge_heap() as pm-bot's main makes it: first, on a heap that
 * holds nothing yet. A program of its own, so that no other test's blocks
 * are in the heap before it (test_mem.c checks what the user's tunables
 * do). main() makes the calls before cmocka allocates anything.
 */

#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
#define HAVE_MALLINFO2 1
#endif

static int heap_rc;
static char *first_small;

/* Is the mapping holding `at` advised as huge pages? */
static int advised(const void *at)
{
	char flags[512];

	assert_int_equal(hugepage_vma_flags(flags, sizeof(flags), at), 0);
	return hugepage_advised(flags);
}

/*
 * Every block after the call lies in huge-page mappings: the first, small
 * one (the block the call keeps below the heap's first 2 MiB boundary
 * holds the small pages), and a large one from its first byte to its
 * last. A second call changes nothing. Skipped where the kernel refuses
 * the advice, where there is no smaps to read it back, and under a
 * sanitizer or valgrind, whose allocators do not use glibc's heap.
 */
static void test_mem_heap__blocks_after_the_call_lie_in_huge_pages(void **state)
{
#ifdef HAVE_MALLINFO2
	/* Under glibc's mmap threshold once pmbot_mem_keep_freed() has raised it. */
	const size_t big = (size_t)8 << 20;
	char flags[512];
	char *large;

	(void)state;
	if (!hugepage_kernel_takes_advice() || mallinfo2().arena == 0 || getenv("GLIBC_TUNABLES") ||
	    hugepage_vma_flags(flags, sizeof(flags), first_small) < 0)
		skip();
	assert_int_equal(heap_rc, 1);
	assert_true(advised(first_small));
	assert_non_null(large = malloc(big));
	memset(large, 3, big);
	assert_true(advised(large));
	assert_true(advised(large + big - 1));
	assert_int_equal(pmbot_mem_huge_heap(), 0);
	free(large);
#else
	(void)state;
	assert_int_equal(heap_rc, 0);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mem_heap__blocks_after_the_call_lie_in_huge_pages),
	};
	int rc;

	(void)pmbot_mem_keep_freed();
	heap_rc = pmbot_mem_huge_heap();
	if (!(first_small = malloc(64)))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(first_small);
	return rc;
}
