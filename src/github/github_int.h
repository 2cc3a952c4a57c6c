#ifndef PMBOT_GITHUB_INT_H
#define PMBOT_GITHUB_INT_H

#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/github.h"
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
 * The write budget's spent writes (src/github/budget.c): epoch-ms end
 * times of the writes sent, ascending, kept in <cache dir>/write-budget.json
 * as {"api_url", "version": 1, "writes": [ms, ...]} so the next run knows
 * what this one spent. The end of an exchange, not its start, is recorded:
 * GitHub counted the write somewhere in between, so a window computed from
 * the end frees no sooner than GitHub's does.
 */
#define PMBOT_GITHUB_BUDGET_FILE "write-budget.json"

typedef struct {
	long long *t; /* owned */
	size_t n, alloc;
} pmbot_github_spent;

void pmbot_github_spent_free(pmbot_github_spent *s);

/* Append `t`, kept ascending (an earlier clock reading is raised to the last). 0 or -1. */
int pmbot_github_spent_add(pmbot_github_spent *s, long long t);

/* Drop what no window of `b` can still count at `now`. */
void pmbot_github_spent_prune(pmbot_github_spent *s, const pmbot_github_budget *b, long long now);

/*
 * Load the file of `dir` for `api_url` into `s` (empty before). A missing
 * file is an empty record. A file that is unreadable, too big, not the
 * format above, or for another API URL is ignored (the record stays empty)
 * and `note` (appended) says why; times later than `now` (a clock that went
 * back, a forged file) count as `now`, so one file can never stop writes
 * for longer than the budget's longest window. 0, 1 when a time was
 * lowered (the caller stores the record back, so the next run sees it in
 * the past), or PMBOT_ERROR when out of memory.
 */
int pmbot_github_spent_load(pmbot_github_spent *s, const char *dir, const char *api_url,
	long long now, pmbot_buf *note);

/* Write the record atomically (pmbot_fs_write_atomic), creating `dir` 0700. 0, or -1 with errno. */
int pmbot_github_spent_store(const pmbot_github_spent *s, const char *dir, const char *api_url);

#endif
