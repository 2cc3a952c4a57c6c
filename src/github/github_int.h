#ifndef PMBOT_GITHUB_INT_H
#define PMBOT_GITHUB_INT_H

#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/hash.h"

/*
 * Internal to src/github/: the ETag cache behind conditional GETs. Not part
 * of the public API.
 *
 * One file per cached URL, named by the key, holding one line of canonical
 * JSON ({"etag", "next", "url", "version": 1}), a newline, and the raw body.
 * The key is the SHA-256 of "GET\n<url>\n<token identity>", where the
 * identity is itself the SHA-256 of the token ("anonymous" without one): two
 * tokens with different access never share an entry, and neither the key
 * nor the file holds the token.
 */

typedef struct {
	char *etag;     /* owned */
	char *next_url; /* owned, NULL when the page had no next link */
	pmbot_buf body;
} pmbot_github_cache_entry;

/* Release what `e` holds; it stays reusable. */
void pmbot_github_cache_entry_free(pmbot_github_cache_entry *e);

/* The cache key of a GET of `url` by `token_id`. 0 or -1. */
int pmbot_github_cache_key(char out[PMBOT_SHA256_HEX_SIZE], const char *url,
	const char *token_id);

/*
 * Load the entry `key` of `dir` for `url` into `e` (empty before), body at
 * most `max` bytes. 0 when found; PMBOT_ENOTFOUND when missing, for another
 * URL, malformed or too big (the cache is only a hint); PMBOT_ERROR when
 * out of memory.
 */
int pmbot_github_cache_load(pmbot_github_cache_entry *e, const char *dir, const char *key,
	const char *url, size_t max);

/*
 * Write an entry atomically (pmbot_fs_write_atomic), creating `dir` (0700:
 * cached answers may come from private repositories). `next_url` may be
 * NULL. 0, or -1 with errno set.
 */
int pmbot_github_cache_store(const char *dir, const char *key, const char *url,
	const char *etag, const char *next_url, const char *body, size_t len);

/* Remove the entry `key` (a corrupt body); a missing file is fine. */
void pmbot_github_cache_drop(const char *dir, const char *key);

/*
 * Do `base` and `url` (absolute URLs) have the same origin: scheme, host
 * (ASCII case-insensitively) and port (the scheme's default when none is
 * written)? A URL with credentials in it, or one curl cannot parse, is
 * never the same origin (nor is anything when memory runs out). 1 yes, 0 no.
 */
int pmbot_github_same_origin(const char *base, const char *url);

#endif
