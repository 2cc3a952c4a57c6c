#ifndef PMBOT_ACTIONFLOW_H
#define PMBOT_ACTIONFLOW_H

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/config.h"
#include "pmbot/github.h"

/*
 * Policy of `pm-bot action` that talks to GitHub (through pmbot/ghops.h):
 * the apply lock and the rules a pull request must meet before anything of
 * it is planned or applied. Nothing here prints; every refusal comes back
 * as a code and a sentence in `err` (may be NULL; owned by the caller).
 * docs/security.md lists the rules and docs/action.md#concurrency the lock.
 */

/*
 * The apply lock of one pull request or tracking issue: a repository label
 * named PMBOT_LOCK_PREFIX + `key` (e.g. "pm-bot:lock:pr-12"), whose
 * description records the holder, "run=<run id> at=<unix seconds>".
 * GitHub creates a label name once (422 `already_exists` for the second
 * create, atomically), so two runs cannot both create it; it needs only
 * the `issues: write` permission pm-bot already has.
 */
#define PMBOT_LOCK_PREFIX "pm-bot:lock:"

/*
 * How long a holder may keep the lock before another run may take it over
 * (6 hours, GitHub-hosted runners' job limit: a holder older than that has
 * certainly stopped).
 */
#define PMBOT_LOCK_TTL_S (6 * 3600)

typedef struct {
	const char *repo;      /* "OWNER/NAME": where the label lives */
	const char *key;       /* "pr-12", "issue-7": [a-z0-9-], 1..16 bytes */
	const char *run_id;    /* $GITHUB_RUN_ID (the holder); [A-Za-z0-9._-], 1..20 bytes */
	long long now;         /* unix seconds, the caller's clock */
	long long ttl;         /* 0: PMBOT_LOCK_TTL_S */
	/*
	 * May be NULL. Asked about a holder that is not this run and whose
	 * lock is younger than the TTL: 0 when that run has finished (its lock
	 * is taken over at once), 1 when it still runs, negative when unknown
	 * (the TTL decides).
	 */
	int (*run_alive)(void *ctx, const char *run_id);
	void *run_alive_ctx;
} pmbot_lock;

/* PMBOT_LOCK_EBUSY (common.h): pmbot_lock_take() found the lock held by another live run. */

/*
 * Take the lock for `l->run_id`. Returns 0 when this run holds it:
 *  - it created the label; or
 *  - the label names this same run id (a re-run of a run that died while
 *    holding it: GitHub keeps the run id across attempts, and attempts of
 *    one run never overlap); or
 *  - the holder is dead (older than the TTL, or run_alive() says 0) and
 *    this run won the takeover: it created the marker label
 *    "<lock name>:x<holder's run id>", which exists once, so exactly one
 *    run replaces a given dead holder; the winner deletes the old label
 *    and creates its own, and if a third run created the lock in between,
 *    that run holds it and this one is busy. Markers stay (one per
 *    crashed run) so a late second taker of the same holder still loses.
 * PMBOT_LOCK_EBUSY (`*holder` set when not NULL: a new string, the holder's
 * run id or "" when its label is not pm-bot's format) when another run
 * holds it; PMBOT_EINVALID for a bad key or run id; a ghops code when
 * GitHub failed (PMBOT_GH_EFORBIDDEN: the token may not create labels).
 */
PMBOT_WARN_UNUSED int pmbot_lock_take(char **holder, const pmbot_lock *l, pmbot_github_client *c,
	pmbot_buf *err);

/*
 * Release a lock this run holds (delete the label). 0, also when it was
 * already gone; a ghops code when GitHub failed.
 */
int pmbot_lock_release(const pmbot_lock *l, pmbot_github_client *c, pmbot_buf *err);

/*
 * Parse a lock label's description: `run` (at least 21 bytes) gets the run
 * id, `*at` the time. PMBOT_OK or PMBOT_EINVALID (not pm-bot's format).
 */
int pmbot_lock_parse(char *run, size_t run_size, long long *at, const char *description);

#endif
