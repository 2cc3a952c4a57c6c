#include "hugepage.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "pmbot/banned.h"

int hugepage_vma_flags(char *flags, size_t size, const void *at)
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

int hugepage_advised(const char *flags)
{
	return strstr(flags, " hg") != NULL;
}

int hugepage_kernel_takes_advice(void)
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
