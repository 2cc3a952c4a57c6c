#ifndef PMBOT_STRMAP_H
#define PMBOT_STRMAP_H

#include <stddef.h>

/*
 * A hash map from C strings to pointers, open addressing. Keys are borrowed:
 * the caller keeps every key alive and unchanged while it is in the map.
 * Lookups and inserts are O(1) on average, so duplicate detection and id
 * resolution over n items stay O(n).
 */
typedef struct {
	const char *key; /* NULL: the slot is free */
	void *value;
	size_t hash; /* the key's: probes skip strcmp, growing skips rehashing */
} pmbot_strmap_slot;

/*
 * One array of slots, not one each of keys, values and hashes: a probe
 * reads one cache line where it read three (a lookup in a map of 10,000
 * ids misses the cache on each).
 */
typedef struct {
	pmbot_strmap_slot *slots; /* cap of them; a caller may walk them */
	size_t count;
	size_t cap; /* power of two, 0 when empty */
} pmbot_strmap;

#define PMBOT_STRMAP_INIT { NULL, 0, 0 }

/* Free the map's tables (not the keys or values). */
void pmbot_strmap_free(pmbot_strmap *m);

/*
 * Insert `key` -> `value`. If the key is present, its value is left as is
 * and, when `existing` is not NULL, stored there; returns 1 in that case.
 * Returns 0 when inserted, -1 when out of memory.
 */
int pmbot_strmap_put(pmbot_strmap *m, const char *key, void *value, void **existing);

/*
 * Room for `n` keys without growing, for a caller that knows how many it
 * will put: growing rehashes every key. 0, or -1 when out of memory (the
 * map unchanged).
 */
int pmbot_strmap_reserve(pmbot_strmap *m, size_t n);

/* Set `*value` (borrowed) for `key`. Returns 1 if found, 0 if not. */
int pmbot_strmap_get(const pmbot_strmap *m, const char *key, void **value);

/*
 * pmbot_strmap_get that also sets `*stored` (when not NULL) to the key as
 * the map holds it (borrowed, the pointer put): a caller can keep that one
 * pointer instead of a copy of `key`.
 */
int pmbot_strmap_get_key(const pmbot_strmap *m, const char *key, const char **stored,
	void **value);

#endif
