#ifndef PMBOT_MEM_H
#define PMBOT_MEM_H

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

#endif
