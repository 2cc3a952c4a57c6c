#ifndef PMBOT_ACTIONRUN_H
#define PMBOT_ACTIONRUN_H

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/note.h"
#include "pmbot/repo.h"

struct pmbot_github_client;

/*
 * One run of `pm-bot action`: the workflow event read and decided, then
 * planned, shown and (when approved) applied under the Action's rules
 * (docs/action.md, docs/security.md): approvals need the permission the
 * default branch's configuration asks for and a fresh plan hash; closed or
 * merged pull requests and a corrupt ledger refuse to apply; a fork's pull
 * request is shown in the job summary only and re-planned only for someone
 * with write permission; applies hold the apply lock (pmbot/actionflow.h).
 * Nothing here prints: what the run has to tell goes through `notes`.
 */
typedef struct pmbot_action pmbot_action;

/* The workflow's environment, read by the caller (all may be NULL). */
typedef struct {
	const char *event_name;   /* $GITHUB_EVENT_NAME */
	const char *event_path;   /* $GITHUB_EVENT_PATH */
	const char *run_id;       /* $GITHUB_RUN_ID: the lock's holder; NULL or "": "local" */
	const char *repository;   /* $GITHUB_REPOSITORY, when the event names none */
	const char *ref;          /* $GITHUB_REF: a schedule's default branch */
	const char *sha;          /* $GITHUB_SHA: a push without `after` */
	const char *runner_temp;  /* $RUNNER_TEMP: where the ledger and cache go */
	const char *output;       /* $GITHUB_OUTPUT: the step's outputs are appended */
	const char *step_summary; /* $GITHUB_STEP_SUMMARY: the plan is appended */
	int cache_dir_set;        /* $PMBOT_GITHUB_CACHE_DIR is set: no default cache dir */
	const char *server_url;   /* $GITHUB_SERVER_URL: links in the log line
	                             (pmbot_action_server_url()) */
} pmbot_action_env;

typedef struct {
	const char *dir;          /* the git work tree ($GITHUB_WORKSPACE); NULL: "." */
	const char *config_path;  /* NULL: PMBOT_CONFIG_PATH */
	const char *audit_path;   /* NULL: $RUNNER_TEMP/pm-bot/audit.jsonl (see docs/action.md) */
	const char *cache_dir;    /* the caller's GitHub cache directory; NULL: none chosen.
	                             An approved plan is kept in its plans/ for the runs
	                             that continue a paused apply (docs/action.md) */
	long long now;            /* unix seconds for the lock; 0: the clock */
} pmbot_action_opts;

/*
 * A new run (`*out` owned by the caller: pmbot_action_free()). `env`,
 * `o` and `notes` (may be NULL) are borrowed for the run's life.
 * PMBOT_OK or PMBOT_ERROR (out of memory).
 */
PMBOT_WARN_UNUSED int pmbot_action_new(pmbot_action **out, const pmbot_action_env *env,
	const pmbot_action_opts *o, const pmbot_notes *notes);

/*
 * Read and decide the event. PMBOT_OK: pmbot_action_ignored() says whether
 * there is anything to do; PMBOT_EINVALID: no event, a bad event or no
 * repository named; PMBOT_ERROR: the event could not be read.
 */
PMBOT_WARN_UNUSED int pmbot_action_decide(pmbot_action *a);

/* 1 when the decided event needs nothing (result "ignored"). */
int pmbot_action_ignored(const pmbot_action *a);

/*
 * The GitHub connection, opened by the caller once the run knows its
 * default cache directory (`cache_dir`, may be NULL: the caller's own
 * choice). PMBOT_OK with `*client` (borrowed, outlives the run) and
 * `*self_login` (may be NULL), or negative (the caller told why).
 */
typedef int (*pmbot_action_github_fn)(void *ctx, const char *cache_dir,
	struct pmbot_github_client **client, const char **self_login);

/*
 * Run a decided event against `repo` (borrowed: the work tree) and GitHub.
 * PMBOT_OK (also for refusals the rules call for: denied, stale, busy;
 * pmbot_action_result() says which); PMBOT_EINVALID for invalid reports
 * or configuration; PMBOT_ERROR for runtime failures.
 */
PMBOT_WARN_UNUSED int pmbot_action_run(pmbot_action *a, pmbot_repo *repo,
	pmbot_action_github_fn open_github, void *ctx);

/*
 * Append the outputs (result, plan_hash, changes, conflicts) to
 * env->output and the summary to env->step_summary. 0 or PMBOT_ERROR.
 */
PMBOT_WARN_UNUSED int pmbot_action_finish(pmbot_action *a);

/* The `result` output (borrowed): one of pmbot_action_results(). */
const char *pmbot_action_result(const pmbot_action *a);

/* One row of the table of results and the exit status each one has. */
typedef struct {
	const char *result;   /* the `result` output */
	int exit_code;        /* 0 handled, 1 runtime failure, 2 invalid input */
	const char *meaning;  /* one line, for docs/action.md */
} pmbot_action_result_row;

/* The table (static storage); *n receives its length. */
const pmbot_action_result_row *pmbot_action_results(size_t *n);

/* The exit status of `result` in the table, -1 when it is not in it. */
int pmbot_action_result_exit(const char *result);

/*
 * Make the result and `rc` (from decide/run/finish: PMBOT_*) agree with
 * the table: the more severe wins, and a failure's result becomes
 * "failed", invalid input's "invalid". Returns the PMBOT_* to exit by.
 * Call before pmbot_action_finish() so the outputs say the same.
 */
int pmbot_action_conclude(pmbot_action *a, int rc);

/*
 * Append the job log's one summary line to `out` (the caller owns it):
 * "pm-bot: RESULT, N changes, plan 07e8ec48, comment URL" (parts only when
 * known; the URL on the server pmbot_action_server_url() gives for
 * env.server_url). Starts with "pm-bot:", never with "::". 0, or -1 out of memory.
 */
PMBOT_WARN_UNUSED int pmbot_action_log_line(pmbot_buf *out, const pmbot_action *a);

/*
 * The web address links are made from, for $GITHUB_SERVER_URL `value`:
 * appended to `out` (the caller owns it) without a trailing '/'. Taken
 * only when it is https://HOST[:PORT] (HOST: dot-separated labels of
 * letters, digits and '-'; PORT: 1 to 5 digits), or http://127.0.0.1[:PORT]
 * or http://localhost[:PORT] (a local rehearsal), with at most one '/'
 * after it and at most 200 bytes: the value is outside input, and a path,
 * query, user name, space or control character in it could make the log
 * line point elsewhere. Otherwise "https://github.com" is appended.
 * 0 (value taken, or NULL/"" and the default); PMBOT_EINVALID (a value
 * given but refused: the default was appended); PMBOT_ERROR (out of memory).
 */
int pmbot_action_server_url(pmbot_buf *out, const char *value);

/* The plan's hash ("" when none; borrowed) and the job summary so far (borrowed). */
const char *pmbot_action_plan_hash(const pmbot_action *a);
const char *pmbot_action_summary(const pmbot_action *a);

void pmbot_action_free(pmbot_action *a);

#endif
