#ifndef PMBOT_ARRAY_H
#define PMBOT_ARRAY_H

#include <stddef.h>

/*
 * Growing arrays: the one place that decides how much room to add, so no
 * list grows one element at a time (quadratic copying) and no size
 * multiplication overflows.
 *
 * Return `items` (an array of `*alloc` elements of `size` bytes, NULL when
 * `*alloc` is 0) with room for at least `need` elements: unchanged when it
 * already has it, else reallocated to max(need, 2 * *alloc, 8) elements and
 * `*alloc` updated. NULL when out of memory or when the size would overflow:
 * then `items` and `*alloc` are unchanged and still the caller's. `need`
 * must be at least 1. An `*alloc` below the real room is safe (the array is
 * reallocated), so arrays allocated elsewhere may start with 0.
 *
 *	T *p = pmbot_array_grow(l->items, &l->alloc, l->count + 1, sizeof(*p));
 *	if (!p)
 *		goto fail;
 *	l->items = p;
 */
void *pmbot_array_grow(void *items, size_t *alloc, size_t need, size_t size);

#endif
