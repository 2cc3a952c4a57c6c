#ifndef PMBOT_MEM_H
#define PMBOT_MEM_H

#include <stddef.h>

/*
 * How the process's allocator treats freed memory. Only a program's main
 * calls this, once, before it allocates much: it is a process-wide choice,
 * not something a library may make for its caller.
 */

/*
 * Keep freed memory for the allocations that follow instead of handing it
 * back to the kernel: a pm-bot command is a short batch whose large
 * buffers (a file's text, a document's nodes, a plan's JSON) come and go
 * one after another, and each page given back is faulted in and zeroed
 * again by the next one, about 2 µs a page. glibc learns this by itself,
 * raising its mmap threshold (and its trim threshold, twice that) each time
 * a large block is freed, up to 32 MiB on 64-bit systems; this starts at
 * 16 MiB rather than paying a munmap and a refault per step to learn it.
 * Larger blocks are still mapped apart and returned when freed. Freed
 * small blocks are merged at once rather than parked in glibc's fast bins
 * (M_MXFAST 0), which are merged again at every large allocation or free.
 *
 * glibc only; elsewhere nothing changes. A setting the user made through
 * GLIBC_TUNABLES (glibc.malloc.mmap_threshold or trim_threshold for the
 * thresholds, glibc.malloc.mxfast for the fast bins) is left as it is.
 * Returns 1 when anything was set, 0 when all was left alone, PMBOT_ERROR
 * when glibc refused a setting.
 */
int pmbot_mem_keep_freed(void);

/*
 * Back the heap with transparent huge pages: one fault and one TLB entry
 * for every 2 MiB the process writes, where 4 KiB pages take 512. A
 * fault costs the kernel far more than the bytes it maps: on the 2-core
 * VMs pm-bot is measured on, about 10 µs a 4 KiB page (40 ms for 16 MiB)
 * against 1 ms for 16 MiB in huge pages. `pm-bot validate` of the
 * 10,000-item report took 1,000-1,600 faults and about 28 ms of CPU; with
 * this, 113 faults (the shared libraries' pages, mostly) and about 14 ms.
 *
 * glibc's heap is reserved 64 MiB ahead (M_TOP_PAD: address space, not
 * memory) and advised (madvise MADV_HUGEPAGE, which the default "madvise"
 * setting of transparent huge pages honours) from its first 2 MiB
 * boundary on. One block, held for the life of the process, fills the
 * heap below that boundary, so that no later block lands in small pages.
 * The cost: a 2 MiB window the process writes into is resident whole,
 * written or not. At 10,000 items the peaks rose by 2.5 MB (validate,
 * 12.8 to 15.3 MB) to 6 MB (the plan with nothing to do, 46 to 52 MB).
 *
 * Like pmbot_mem_keep_freed(), a process-wide choice for a program's main
 * to make, once, early. glibc 2.33 or later only; a user's
 * glibc.malloc.top_pad or glibc.malloc.hugetlb in GLIBC_TUNABLES leaves it
 * to the user; so does strict overcommit (vm.overcommit_memory 2, which
 * charges the reserved 64 MiB against the commit limit as if written);
 * under another allocator (a sanitizer's, valgrind's), or
 * where glibc could not grow its heap by brk, nothing is advised (the top
 * pad stays set: address space only). Returns 1 when the
 * heap is advised, 0 when nothing was done, PMBOT_ERROR when glibc
 * refused the setting or had no memory.
 */
int pmbot_mem_huge_heap(void);

/* Internal, for its tests: where pmbot_mem_huge_heap() reads the overcommit mode. */
extern const char *pmbot_mem__overcommit_path;

/*
 * malloc(n) (free() it; NULL when out of memory) for a block about to be
 * written whole: a file's text, a parsed document's nodes and strings. The
 * 2 MiB windows wholly inside a block of 2 MiB or more are advised to the
 * kernel as huge pages (madvise MADV_HUGEPAGE, which the default "madvise"
 * setting of transparent huge pages honours): one fault and one TLB entry
 * where there were 512. Measured on the 10,000-item report: `validate` 2,168
 * page faults to about 1,000-1,700 and 7 % less time, the plan with nothing
 * to do 11,110 to about 6,000. The cost is what a window holds beyond what
 * is written, under 2 MiB a block; how many windows a block holds depends
 * on where the heap starts, so peaks vary by about that much from run to
 * run. Where the kernel has no huge pages, or refuses, nothing changes.
 */
void *pmbot_mem_alloc_large(size_t n);

#endif
