#include "pmbot/mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
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

/* x86-64's and arm64's (4 KiB pages) transparent huge page. */
#define HUGE_PAGE ((uintptr_t)2 << 20)

/*
 * How much heap pmbot_mem_huge_heap() reserves and advises: more than the
 * largest 10,000-item run keeps in its heap (the plan with a project,
 * 67 MB peak, of which the heap holds under 64 MiB); what outgrows it is
 * mapped on in 4 KiB pages, as before.
 */
#define HUGE_HEAP (64 << 20)

/* mallinfo2 (glibc 2.33) tells glibc's heap from another allocator's. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33) && defined(MADV_HUGEPAGE)
#define HAVE_HUGE_HEAP 1
static int huge_heap_done;
/*
 * The block that keeps the heap's first, partial window, held for the
 * process's life, and the probe block's address. Both volatile: nothing
 * reads them, and compilers drop an allocation that nothing reads (gcc 16
 * dropped the spacer; clang, the probe's malloc and free).
 */
static void *volatile huge_heap_spacer;
static void *volatile huge_heap_probe;
#endif

const char *pmbot_mem__overcommit_path = "/proc/sys/vm/overcommit_memory";

#ifdef HAVE_HUGE_HEAP
/*
 * Does the kernel count address space as memory (vm.overcommit_memory 2)?
 * Then a reserved top pad is charged against the commit limit as if it
 * were written, and on a small machine or container it can make a later
 * allocation fail. Unreadable (no /proc): as the default, 0.
 */
static int strict_overcommit(void)
{
	char mode[4] = "";
	ssize_t n;
	int fd = open(pmbot_mem__overcommit_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, mode, sizeof(mode) - 1);
	close(fd);
	return n > 0 && mode[0] == '2';
}
#endif

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

int pmbot_mem_huge_heap(void)
{
#ifdef HAVE_HUGE_HEAP
	const char *tunables = getenv("GLIBC_TUNABLES");
	uintptr_t first, top, from, to, end;
	struct mallinfo2 mi;
	void *p;

	if (huge_heap_done || user_set(tunables, "glibc.malloc.top_pad") ||
	    user_set(tunables, "glibc.malloc.hugetlb") || strict_overcommit())
		return 0;
	/*
	 * glibc grows its heap by what a request needs plus the top pad: a
	 * block one byte larger than the free top (none yet, at a program's
	 * start) makes it reserve the pad now.
	 */
	if (!mallopt(M_TOP_PAD, HUGE_HEAP))
		return PMBOT_ERROR;
	if (!(p = malloc(mallinfo2().keepcost + 1)))
		return PMBOT_ERROR;
	huge_heap_probe = p;
	free(p);
	first = (uintptr_t)huge_heap_probe;
	end = (uintptr_t)sbrk(0);
	mi = mallinfo2();
	/*
	 * The block and the free top must lie in glibc's one contiguous heap
	 * below the break, [end - arena, end): under a sanitizer's or
	 * valgrind's allocator, or where the heap could not grow by brk and
	 * glibc mapped the block elsewhere, the range below the break is other
	 * memory, and nothing is advised.
	 */
	if (end == (uintptr_t)-1 || !mi.keepcost || mi.keepcost > mi.arena || mi.arena > end ||
	    first < end - mi.arena || first >= end)
		return 0;
	top = end - mi.keepcost;
	from = (top + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	to = end & ~(HUGE_PAGE - 1);
	if (from >= to || madvise((void *)from, to - from, MADV_HUGEPAGE) < 0)
		return 0;
	huge_heap_done = 1;
	/*
	 * Taken from the top's start, a block up to the first window keeps
	 * every later block out of the small pages below it: its 8-byte size
	 * and glibc's rounding to 16 leave the next block's 16-byte header
	 * just below the window, in one small page.
	 */
	if (from - top >= 64 && !(huge_heap_spacer = malloc(from - top - 24)))
		return PMBOT_ERROR;
	return 1;
#else
	return 0;
#endif
}

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
