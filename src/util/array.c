#include "pmbot/array.h"

#include <stdint.h>
#include <stdlib.h>

#include "pmbot/mem.h"
#include "pmbot/banned.h"

void *pmbot_array_grow(void *items, size_t *alloc, size_t need, size_t size)
{
	size_t n;
	void *p;

	if (need <= *alloc && items)
		return items;
	n = *alloc > SIZE_MAX / 2 ? SIZE_MAX : *alloc * 2;
	if (n < need)
		n = need;
	if (n < 8)
		n = 8;
	if (!size || n > SIZE_MAX / size)
		return NULL;
	/* A large first block is a caller sizing what it will fill: pmbot_mem_alloc_large. */
	if (!(p = items ? realloc(items, n * size) : pmbot_mem_alloc_large(n * size)))
		return NULL;
	*alloc = n;
	return p;
}
