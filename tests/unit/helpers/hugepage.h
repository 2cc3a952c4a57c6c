#ifndef PMBOT_TEST_HUGEPAGE_H
#define PMBOT_TEST_HUGEPAGE_H

#include <stddef.h>

/*
 * Test helpers: what the kernel says of the memory a test allocated, for
 * test_mem.c and test_mem_heap.c.
 */

/*
 * The two-letter flags of the mapping holding `at`, from
 * /proc/self/smaps, into `flags` (`size` bytes, NUL-terminated): 0 when
 * found, -1 when this system has no such file or no mapping holds `at`.
 */
int hugepage_vma_flags(char *flags, size_t size, const void *at);

/* 1 when the flags hold " hg" (MADV_HUGEPAGE), else 0. */
int hugepage_advised(const char *flags);

/*
 * 1 when madvise(MADV_HUGEPAGE) works here: asked of the kernel itself,
 * not of sysfs, which a chroot (make check-distros) does not mount.
 */
int hugepage_kernel_takes_advice(void);

#endif
