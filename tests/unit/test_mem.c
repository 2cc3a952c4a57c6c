#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cmocka.h>

#include "pmbot/common.h"
#include "pmbot/mem.h"
#include "helpers/hugepage.h"
#include "pmbot/banned.h"

/* mallinfo2 (glibc 2.33) says where glibc put a block: heap or own mapping. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
#define HAVE_MALLINFO2 1
#endif

/* A malloc setting the user chose in GLIBC_TUNABLES stays the user's. */
static void test_mem__a_users_malloc_tunable_is_left_alone(void **state)
{
	(void)state;
#ifdef __GLIBC__
	assert_int_equal(setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=1:"
		"glibc.malloc.mxfast=64", 1), 0);
	assert_int_equal(pmbot_mem_keep_freed(), 0);
	assert_int_equal(setenv("GLIBC_TUNABLES", "glibc.cpu.x86_rep_movsb_threshold=1:"
		"glibc.malloc.mxfast=0:glibc.malloc.mmap_threshold=1", 1), 0);
	assert_int_equal(pmbot_mem_keep_freed(), 0);
	/*
	 * Either setting alone leaves the other to pm-bot: it is tried (a
	 * sanitizer's allocator refuses it, PMBOT_ERROR, where glibc says 1).
	 */
	assert_int_equal(setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=1", 1), 0);
	assert_int_not_equal(pmbot_mem_keep_freed(), 0);
	assert_int_equal(unsetenv("GLIBC_TUNABLES"), 0);
#else
	assert_int_equal(pmbot_mem_keep_freed(), 0);
#endif
}

/*
 * A user's top_pad or hugetlb tunable keeps pmbot_mem_huge_heap() from
 * touching the heap at all: it does not grow by the 64 MiB the call
 * reserves. (What the call does is test_mem_heap.c's, in a fresh heap.)
 */
static void test_mem__a_users_heap_tunable_is_left_alone(void **state)
{
#ifdef HAVE_MALLINFO2
	size_t arena = mallinfo2().arena;

	(void)state;
	assert_int_equal(setenv("GLIBC_TUNABLES", "glibc.malloc.top_pad=131072", 1), 0);
	assert_int_equal(pmbot_mem_huge_heap(), 0);
	assert_int_equal(setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0", 1), 0);
	assert_int_equal(pmbot_mem_huge_heap(), 0);
	assert_int_equal(unsetenv("GLIBC_TUNABLES"), 0);
	assert_true(mallinfo2().arena == arena);
	/* Nor under strict overcommit, which would charge the reservation. */
	{
		char path[] = "/tmp/pmbot-overcommit-XXXXXX";
		int fd = mkstemp(path);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "2\n", 2), 2);
		close(fd);
		pmbot_mem__overcommit_path = path;
		assert_int_equal(pmbot_mem_huge_heap(), 0);
		pmbot_mem__overcommit_path = "/proc/sys/vm/overcommit_memory";
		unlink(path);
		assert_true(mallinfo2().arena == arena);
	}
#else
	(void)state;
	assert_int_equal(pmbot_mem_huge_heap(), 0);
#endif
}

/*
 * Once set, a 4 MiB block comes from the heap and stays there when freed,
 * ready for the next allocation (glibc's defaults map it apart and unmap
 * it); a block over 16 MiB is still mapped apart and returned at once.
 * Under a sanitizer or valgrind, whose allocators ignore glibc's settings
 * (and whose mallinfo2 says nothing), skipped.
 */
static void test_mem__freed_blocks_stay_for_the_next_allocation(void **state)
{
#ifdef HAVE_MALLINFO2
	const size_t small = (size_t)4 << 20, big = (size_t)20 << 20;
	struct mallinfo2 m0, m1, m2, m3;
	char *p;

	(void)state;
	assert_int_equal(unsetenv("GLIBC_TUNABLES"), 0);
	m0 = mallinfo2();
	if (pmbot_mem_keep_freed() != 1 || m0.arena == 0)
		skip();
	assert_non_null(p = malloc(small));
	memset(p, 1, small);
	m1 = mallinfo2();
	/* Not mapped apart (glibc's default maps anything over 128 KiB). */
	assert_true(m1.hblkhd == m0.hblkhd);
	assert_true(m1.arena >= m0.arena + small);
	free(p);
	m2 = mallinfo2();
	/* Not trimmed either: the heap keeps it. */
	assert_true(m2.arena == m1.arena);
	assert_non_null(p = malloc(big));
	m3 = mallinfo2();
	assert_true(m3.hblkhd >= m2.hblkhd + big);
	free(p);
	assert_true(mallinfo2().hblkhd == m2.hblkhd);
#else
	(void)state;
	skip();
#endif
}

/*
 * Small blocks freed beyond what the thread cache holds (seven of a size)
 * are merged at once: none waits in a fast bin, as glibc's defaults would
 * keep the rest. Skipped where test 2 is.
 */
static void test_mem__freed_small_blocks_skip_the_fast_bins(void **state)
{
#ifdef HAVE_MALLINFO2
	void *p[32];
	size_t i;

	(void)state;
	assert_int_equal(unsetenv("GLIBC_TUNABLES"), 0);
	if (pmbot_mem_keep_freed() != 1 || mallinfo2().arena == 0)
		skip();
	for (i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		assert_non_null(p[i] = malloc(24));
	for (i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		free(p[i]);
	assert_true(mallinfo2().smblks == 0);
	assert_true(mallinfo2().fsmblks == 0);
#else
	(void)state;
	skip();
#endif
}

/*
 * A block of 2 MiB or more has its whole 2 MiB windows advised as huge
 * pages, and is an ordinary block: written whole, freed with free(). A
 * small block is left alone. Skipped where the kernel refuses the advice
 * (no transparent huge pages), or has no smaps to read it back.
 */
static void test_mem__a_large_block_asks_for_huge_pages(void **state)
{
	const uintptr_t window = (uintptr_t)2 << 20;
	size_t n = 6 << 20;
	char flags[512];
	char *small, *large;
	uintptr_t from;

	(void)state;
	if (!hugepage_kernel_takes_advice())
		skip();
	assert_non_null(small = pmbot_mem_alloc_large(1 << 20));
	memset(small, 1, 1 << 20);
	if (hugepage_vma_flags(flags, sizeof(flags), small) < 0) {
		free(small);
		skip();
	}
	assert_false(hugepage_advised(flags));
	assert_non_null(large = pmbot_mem_alloc_large(n));
	memset(large, 2, n);
	from = ((uintptr_t)large + window - 1) & ~(window - 1);
	/* 6 MiB hold two whole windows wherever they start. */
	assert_true(from + 2 * window <= (uintptr_t)large + n);
	assert_int_equal(hugepage_vma_flags(flags, sizeof(flags), (void *)from), 0);
	assert_true(hugepage_advised(flags));
	assert_int_equal(hugepage_vma_flags(flags, sizeof(flags), (void *)(from + 2 * window - 1)), 0);
	assert_true(hugepage_advised(flags));
	assert_int_equal(large[n - 1], 2);
	free(large);
	free(small);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mem__a_users_malloc_tunable_is_left_alone),
		cmocka_unit_test(test_mem__a_users_heap_tunable_is_left_alone),
		cmocka_unit_test(test_mem__freed_blocks_stay_for_the_next_allocation),
		cmocka_unit_test(test_mem__freed_small_blocks_skip_the_fast_bins),
		cmocka_unit_test(test_mem__a_large_block_asks_for_huge_pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
