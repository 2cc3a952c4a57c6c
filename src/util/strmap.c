#include "pmbot/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "pmbot/banned.h"

static size_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return (size_t)h;
}

void pmbot_strmap_free(pmbot_strmap *m)
{
	free(m->keys);
	free(m->values);
	free(m->hashes);
	memset(m, 0, sizeof(*m));
}

/*
 * Keys with equal hashes are rare: strcmp runs about once per hit, and not
 * at all when the caller looks up with the stored pointer itself (a graph's
 * edges share their nodes' ids), which spares a cache miss on the key.
 */
static size_t find_slot(const char **keys, const size_t *hashes, size_t cap, const char *key,
	size_t h)
{
	size_t i = h & (cap - 1);

	while (keys[i] && (hashes[i] != h || (keys[i] != key && strcmp(keys[i], key))))
		i = (i + 1) & (cap - 1);
	return i;
}

static int rehash(pmbot_strmap *m, size_t cap)
{
	const char **keys = calloc(cap, sizeof(*keys));
	void **values = calloc(cap, sizeof(*values));
	size_t *hashes = calloc(cap, sizeof(*hashes));
	size_t i;

	if (!keys || !values || !hashes) {
		free(keys);
		free(values);
		free(hashes);
		return -1;
	}
	for (i = 0; i < m->cap; i++) {
		size_t slot;

		if (!m->keys[i])
			continue;
		/* Keys are unique: the first free slot is theirs, no compare needed. */
		slot = m->hashes[i] & (cap - 1);
		while (keys[slot])
			slot = (slot + 1) & (cap - 1);
		keys[slot] = m->keys[i];
		values[slot] = m->values[i];
		hashes[slot] = m->hashes[i];
	}
	free(m->keys);
	free(m->values);
	free(m->hashes);
	m->keys = keys;
	m->values = values;
	m->hashes = hashes;
	m->cap = cap;
	return 0;
}

int pmbot_strmap_reserve(pmbot_strmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 16;

	while (n * 2 > cap)
		cap *= 2;
	return cap == m->cap ? 0 : rehash(m, cap);
}

int pmbot_strmap_put(pmbot_strmap *m, const char *key, void *value, void **existing)
{
	size_t h = hash_str(key), slot = 0;

	/* Look first: a duplicate must be reported even when growing would fail. */
	if (m->cap) {
		slot = find_slot(m->keys, m->hashes, m->cap, key, h);
		if (m->keys[slot]) {
			if (existing)
				*existing = m->values[slot];
			return 1;
		}
	}
	if ((m->count + 1) * 2 > m->cap) {
		if (rehash(m, m->cap ? m->cap * 2 : 16) < 0)
			return -1;
		slot = find_slot(m->keys, m->hashes, m->cap, key, h);
	}
	m->keys[slot] = key;
	m->values[slot] = value;
	m->hashes[slot] = h;
	m->count++;
	return 0;
}

int pmbot_strmap_get_key(const pmbot_strmap *m, const char *key, const char **stored,
	void **value)
{
	size_t slot;

	if (!m->cap)
		return 0;
	slot = find_slot(m->keys, m->hashes, m->cap, key, hash_str(key));
	if (!m->keys[slot])
		return 0;
	if (stored)
		*stored = m->keys[slot];
	if (value)
		*value = m->values[slot];
	return 1;
}

int pmbot_strmap_get(const pmbot_strmap *m, const char *key, void **value)
{
	return pmbot_strmap_get_key(m, key, NULL, value);
}
