#include "pmbot/doc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/buf.h"
#include "pmbot/banned.h"

/*
 * Every pointer string lives in one arena (a pmbot_buf, addressed by
 * offset so growing it never invalidates an entry); entries sit in a dense
 * array and a power-of-two open-addressing table indexes them. Three
 * allocations that grow geometrically instead of one per entry: about 32
 * bytes per entry plus the pointer text (4 GiB of text at most). Slots carry the hash, so probing
 * past other pointers touches only the table, not the entries or arena.
 */
typedef struct {
	uint32_t off;
	uint32_t len;
	int line;
	int column;
} entry;

typedef struct {
	uint32_t hash;
	uint32_t index; /* entry index + 1; 0 is empty */
} slot;

struct pmbot_srcmap {
	pmbot_buf arena;
	entry *entries;
	size_t count;
	size_t alloc;
	slot *slots;
	size_t nslots;  /* power of two, 0 when empty */
};

/*
 * Eight bytes per step, then murmur3's finalizer so that pointers that
 * differ in one digit land far apart. Only this process ever sees the
 * values, so byte order does not matter.
 */
static uint32_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	if (len) {
		w = 0;
		memcpy(&w, s, len);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (uint32_t)h;
}

pmbot_srcmap *pmbot_srcmap_new(void)
{
	pmbot_srcmap *map = calloc(1, sizeof(*map));

	if (map)
		pmbot_buf_init(&map->arena, UINT32_MAX);
	return map;
}

void pmbot_srcmap_free(pmbot_srcmap *map)
{
	if (!map)
		return;
	pmbot_buf_free(&map->arena);
	free(map->entries);
	free(map->slots);
	free(map);
}

static size_t slot_of(const pmbot_srcmap *map, const char *s, size_t len, uint32_t hash)
{
	size_t mask = map->nslots - 1, i = hash & mask;

	for (;; i = (i + 1) & mask) {
		const entry *e;

		if (!map->slots[i].index)
			return i;
		if (map->slots[i].hash != hash)
			continue;
		e = &map->entries[map->slots[i].index - 1];
		if (e->len == len && !memcmp(map->arena.buf + e->off, s, len))
			return i;
	}
}

static int rehash(pmbot_srcmap *map, size_t nslots)
{
	slot *slots = calloc(nslots, sizeof(*slots));
	size_t i, mask = nslots - 1;

	if (!slots)
		return -1;
	for (i = 0; i < map->nslots; i++) {
		size_t j;

		if (!map->slots[i].index)
			continue;
		for (j = map->slots[i].hash & mask; slots[j].index; j = (j + 1) & mask)
			;
		slots[j] = map->slots[i];
	}
	free(map->slots);
	map->slots = slots;
	map->nslots = nslots;
	return 0;
}

int pmbot_srcmap_add(pmbot_srcmap *map, const char *pointer, int line, int column)
{
	return pmbot_srcmap_addn(map, pointer, strlen(pointer), line, column);
}

/* Later records of the same pointer overwrite the earlier position. */
int pmbot_srcmap_addn(pmbot_srcmap *map, const char *pointer, size_t len, int line, int column)
{
	uint32_t hash = hash_bytes(pointer, len);
	size_t i;
	entry *e;

	if (len > UINT32_MAX || map->count >= UINT32_MAX - 1)
		return -1;
	/* Load factor at most 1/2 keeps linear probing short. */
	if ((map->count + 1) * 2 > map->nslots &&
	    rehash(map, map->nslots ? map->nslots * 2 : 64) < 0)
		return -1;
	i = slot_of(map, pointer, len, hash);
	if (map->slots[i].index) {
		e = &map->entries[map->slots[i].index - 1];
		e->line = line;
		e->column = column;
		return 0;
	}
	if (map->count == map->alloc) {
		size_t alloc = map->alloc ? map->alloc * 2 : 64;
		entry *p = realloc(map->entries, alloc * sizeof(*p));

		if (!p)
			return -1;
		map->entries = p;
		map->alloc = alloc;
	}
	e = &map->entries[map->count];
	e->off = (uint32_t)map->arena.len;
	if (pmbot_buf_put(&map->arena, pointer, len) < 0)
		return -1;
	e->len = (uint32_t)len;
	e->line = line;
	e->column = column;
	map->slots[i].hash = hash;
	map->slots[i].index = (uint32_t)(++map->count);
	return 0;
}

int pmbot_srcmap_find(const pmbot_srcmap *map, const char *pointer, int *line, int *column)
{
	size_t len;

	if (line)
		*line = 0;
	if (column)
		*column = 0;
	if (!map || !map->count || !pointer)
		return 0;
	len = strlen(pointer);
	for (;;) {
		size_t i = slot_of(map, pointer, len, hash_bytes(pointer, len));

		if (map->slots[i].index) {
			const entry *e = &map->entries[map->slots[i].index - 1];

			if (line)
				*line = e->line;
			if (column)
				*column = e->column;
			return 1;
		}
		if (!len)
			return 0;
		/* "~1" escapes '/', so the last '/' always starts the last token. */
		while (len && pointer[len - 1] != '/')
			len--;
		if (len)
			len--;
	}
}
