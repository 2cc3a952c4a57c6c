#include "pmbot/mem.h"

#include <stdlib.h>
#include <string.h>
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

int pmbot_mem_keep_freed(void)
{
#ifdef __GLIBC__
	const char *tunables = getenv("GLIBC_TUNABLES");

	if (tunables && (strstr(tunables, "glibc.malloc.mmap_threshold") ||
			 strstr(tunables, "glibc.malloc.trim_threshold")))
		return 0;
	/* Setting either stops glibc's own raising of both, so set both. */
	if (!mallopt(M_MMAP_THRESHOLD, KEEP_MMAP_THRESHOLD) ||
	    !mallopt(M_TRIM_THRESHOLD, 2 * KEEP_MMAP_THRESHOLD))
		return PMBOT_ERROR;
	return 1;
#else
	return 0;
#endif
}
