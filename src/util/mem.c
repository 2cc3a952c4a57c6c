#include "pmbot/mem.h"

#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "pmbot/common.h"
#include "pmbot/banned.h"

/* glibc's DEFAULT_MMAP_THRESHOLD_MAX: 32 MiB on 64-bit, 16 MiB on 32-bit. */
#define KEEP_MMAP_THRESHOLD ((int)(4 * 1024 * 1024 * sizeof(long)))

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
