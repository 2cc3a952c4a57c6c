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
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/*
 * Keys with equal hashes are rare: strcmp runs about once per hit, and not
 * at all when the caller looks up with the stored pointer itself (a graph's
 * edges share their nodes' ids), which spares a cache miss on the key.
 */
static pmbot_strmap_slot *find_slot(pmbot_strmap_slot *slots, size_t cap, const char *key,
	size_t h)
{
	size_t i = h & (cap - 1);

	while (slots[i].key && (slots[i].hash != h ||
				(slots[i].key != key && strcmp(slots[i].key, key))))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int rehash(pmbot_strmap *m, size_t cap)
{
	pmbot_strmap_slot *slots = calloc(cap, sizeof(*slots));
	size_t i;

	if (!slots)
		return -1;
	for (i = 0; i < m->cap; i++) {
		size_t at;

		if (!m->slots[i].key)
			continue;
		/* Keys are unique: the first free slot is theirs, no compare needed. */
		at = m->slots[i].hash & (cap - 1);
		while (slots[at].key)
			at = (at + 1) & (cap - 1);
		slots[at] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
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
	size_t h = hash_str(key);
	pmbot_strmap_slot *slot = NULL;

	/* Look first: a duplicate must be reported even when growing would fail. */
	if (m->cap) {
		slot = find_slot(m->slots, m->cap, key, h);
		if (slot->key) {
			if (existing)
				*existing = slot->value;
			return 1;
		}
	}
	if ((m->count + 1) * 2 > m->cap) {
		if (rehash(m, m->cap ? m->cap * 2 : 16) < 0)
			return -1;
		slot = find_slot(m->slots, m->cap, key, h);
	}
	slot->key = key;
	slot->value = value;
	slot->hash = h;
	m->count++;
	return 0;
}

int pmbot_strmap_get_key(const pmbot_strmap *m, const char *key, const char **stored,
	void **value)
{
	const pmbot_strmap_slot *slot;

	if (!m->cap)
		return 0;
	slot = find_slot(m->slots, m->cap, key, hash_str(key));
	if (!slot->key)
		return 0;
	if (stored)
		*stored = slot->key;
	if (value)
		*value = slot->value;
	return 1;
}

int pmbot_strmap_get(const pmbot_strmap *m, const char *key, void **value)
{
	return pmbot_strmap_get_key(m, key, NULL, value);
}
