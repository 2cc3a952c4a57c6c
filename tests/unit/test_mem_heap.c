#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cmocka.h>

#include "pmbot/common.h"
#include "pmbot/mem.h"
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

/* The flags of the mapping holding `at`, from /proc/self/smaps; -1 without it. */
static int vma_flags(char *flags, size_t size, const void *at)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, found = -1;

	if (!f)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char dash;

		if (sscanf(line, "%lx%c%lx ", &lo, &dash, &hi) == 3 && dash == '-')
			in = (uintptr_t)at >= lo && (uintptr_t)at < hi;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(flags, size, "%s", line + 8);
			found = 0;
		}
	}
	fclose(f);
	return found;
}

/* Asked of the kernel, not of sysfs, which a chroot does not mount. */
static int kernel_takes_huge_page_advice(void)
{
#ifdef MADV_HUGEPAGE
	size_t n = (size_t)4 << 20;
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ok;

	if (p == MAP_FAILED)
		return 0;
	ok = madvise(p, n, MADV_HUGEPAGE) == 0;
	munmap(p, n);
	return ok;
#else
	return 0;
#endif
}

/* " hg" (MADV_HUGEPAGE) among the two-letter flags smaps lists. */
static int advised(const void *at)
{
	char flags[512];

	assert_int_equal(vma_flags(flags, sizeof(flags), at), 0);
	return strstr(flags, " hg") != NULL;
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
	if (!kernel_takes_huge_page_advice() || mallinfo2().arena == 0 || getenv("GLIBC_TUNABLES") ||
	    vma_flags(flags, sizeof(flags), first_small) < 0)
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
