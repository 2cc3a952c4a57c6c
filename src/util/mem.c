#include "pmbot/mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "pmbot/common.h"
#include "pmbot/banned.h"

/*
 * Half of glibc's ceiling (32 MiB on 64-bit), measured: at 32 MiB the
 * 21 MB of nodes of a 10,000-issue state stay in the heap once freed, and
 * the plan with nothing to do (a project) peaked at 67 MB instead of 58 MB.
 * The trim threshold is twice it, as glibc makes it.
 */
#define KEEP_MMAP_THRESHOLD (16 << 20)

/* Did the user set glibc.malloc.NAME in GLIBC_TUNABLES? */
static int user_set(const char *tunables, const char *name)
{
	return tunables && strstr(tunables, name);
}

int pmbot_mem_keep_freed(void)
{
#ifdef __GLIBC__
	const char *tunables = getenv("GLIBC_TUNABLES");
	int set = 0;

	if (!user_set(tunables, "glibc.malloc.mmap_threshold") &&
	    !user_set(tunables, "glibc.malloc.trim_threshold")) {
		/* Setting either stops glibc's own raising of both, so set both. */
		if (!mallopt(M_MMAP_THRESHOLD, KEEP_MMAP_THRESHOLD) ||
		    !mallopt(M_TRIM_THRESHOLD, 2 * KEEP_MMAP_THRESHOLD))
			return PMBOT_ERROR;
		set = 1;
	}
	/*
	 * No fast bins: the thread cache already reuses small blocks, and the
	 * overflow glibc keeps unmerged in fast bins is merged again by
	 * malloc_consolidate() at each large allocation or free, a walk over
	 * scattered memory that perf put at 4 % of a 10,000-item plan's time.
	 */
	if (!user_set(tunables, "glibc.malloc.mxfast")) {
		if (!mallopt(M_MXFAST, 0))
			return PMBOT_ERROR;
		set = 1;
	}
	return set;
#else
	return 0;
#endif
}

/* x86-64's and arm64's (4 KiB pages) transparent huge page. */
#define HUGE_PAGE ((uintptr_t)2 << 20)

void *pmbot_mem_alloc_large(size_t n)
{
	char *p = malloc(n);
#ifdef MADV_HUGEPAGE
	uintptr_t from, to;

	if (!p || n < HUGE_PAGE)
		return p;
	/*
	 * Only the whole windows inside the block: the pages around them
	 * may be other blocks', whose size the advice must not round up.
	 * Not aligning the block (posix_memalign) is deliberate: the holes
	 * alignment leaves in the heap cost more than the windows it wins.
	 */
	from = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	to = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);
	if (from < to)
		(void)madvise((void *)from, to - from, MADV_HUGEPAGE);
#endif
	return p;
}
