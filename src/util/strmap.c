#include "pmbot/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "pmbot/banned.h"

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

void pmbot_strmap_free(pmbot_strmap *m)
{
	free(m->keys);
	free(m->values);
	memset(m, 0, sizeof(*m));
}

static size_t find_slot(const char **keys, size_t cap, const char *key)
{
	size_t i = (size_t)hash_str(key) & (cap - 1);

	while (keys[i] && strcmp(keys[i], key))
		i = (i + 1) & (cap - 1);
	return i;
}

static int rehash(pmbot_strmap *m, size_t cap)
{
	const char **keys = calloc(cap, sizeof(*keys));
	void **values = calloc(cap, sizeof(*values));
	size_t i;

	if (!keys || !values) {
		free(keys);
		free(values);
		return -1;
	}
	for (i = 0; i < m->cap; i++) {
		size_t slot;

		if (!m->keys[i])
			continue;
		slot = find_slot(keys, cap, m->keys[i]);
		keys[slot] = m->keys[i];
		values[slot] = m->values[i];
	}
	free(m->keys);
	free(m->values);
	m->keys = keys;
	m->values = values;
	m->cap = cap;
	return 0;
}

int pmbot_strmap_put(pmbot_strmap *m, const char *key, void *value, void **existing)
{
	size_t slot;

	/* Look first: a duplicate must be reported even when growing would fail. */
	if (m->cap) {
		slot = find_slot(m->keys, m->cap, key);
		if (m->keys[slot]) {
			if (existing)
				*existing = m->values[slot];
			return 1;
		}
	}
	if ((m->count + 1) * 2 > m->cap &&
	    rehash(m, m->cap ? m->cap * 2 : 16) < 0)
		return -1;
	slot = find_slot(m->keys, m->cap, key);
	m->keys[slot] = key;
	m->values[slot] = value;
	m->count++;
	return 0;
}

int pmbot_strmap_get(const pmbot_strmap *m, const char *key, void **value)
{
	size_t slot;

	if (!m->cap)
		return 0;
	slot = find_slot(m->keys, m->cap, key);
	if (!m->keys[slot])
		return 0;
	if (value)
		*value = m->values[slot];
	return 1;
}
