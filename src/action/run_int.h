#ifndef PMBOT_ACTION_RUN_INT_H
#define PMBOT_ACTION_RUN_INT_H

#include "pmbot/action.h"
#include "pmbot/apply.h"
#include "pmbot/buf.h"
#include "pmbot/note.h"
#include "pmbot/repo.h"

/* Results inside the run (exit-status-like); pmbot_action_run() maps them to PMBOT_*. */
enum { RC_OK = 0, RC_RUNTIME = 1, RC_INVALID = 2 };

/*
 * One run of `pm-bot action` (run.c: events, pull requests and commands;
 * sync.c: the Projects field sync). docs/action.md is the user's
 * description.
 */
struct pmbot_action {
	pmbot_action_env env;
	pmbot_action_opts opts;
	const pmbot_notes *notes;
	pmbot_event *own_ev;
	int what;                    /* pmbot_event_action */
	const pmbot_event *ev;
	const char *slug;            /* "OWNER/NAME": the event's, else $GITHUB_REPOSITORY */
	const char *default_branch;  /* the event's, else from $GITHUB_REF (schedule payloads
	                                may carry no repository) */
	const char *dir;             /* the git work tree ($GITHUB_WORKSPACE) */
	const char *config_path;     /* NULL: .github/pm-bot.yml */
	struct pmbot_github_client *client; /* borrowed */
	const char *self_login;      /* the token's login, NULL when it could not be read */
	pmbot_repo *repo;            /* borrowed */
	char default_rev[PMBOT_OID_HEX_SIZE]; /* the default branch's commit: config and policy */
	const char *run_id;          /* $GITHUB_RUN_ID: the lock owner */
	const char *self;            /* the token's login, else github-actions[bot] */
	pmbot_audit *audit;          /* NULL when the ledger could not be used (audit_corrupt) */
	int audit_corrupt;           /* the ledger is corrupt: plans go on, applies refuse */
	/* What GITHUB_OUTPUT receives at the end. */
	const char *result;
	char plan_hash[65];
	long changes, conflicts;
	pmbot_buf summary;           /* appended to GITHUB_STEP_SUMMARY */
	long comment_number;         /* the PR or issue pm-bot's text was last written on */
	long long comment_id;        /* its comment (0: the tracking issue's body, or none) */
	pmbot_buf cache_dir;         /* the default cache under $RUNNER_TEMP, when used */
	pmbot_buf server_url;        /* links' server: pmbot_action_server_url(env.server_url) */
};

/*
 * Where a plan is shown: a pull request's comment, or the body of the
 * field-sync tracking issue. Only text pm-bot itself wrote (its header,
 * authored by its own login) is ever taken for one.
 */
struct slot {
	int is_issue;                /* the tracking issue's body, else a PR comment */
	long number;                 /* the PR or the tracking issue (0: none yet) */
	long long comment_id;        /* PR comment id, 0 when there is none yet */
	char *body;                  /* owned: the text now, NULL when none */
	pmbot_comment_meta meta;     /* parsed header, valid when has_meta */
	int has_meta;
};

/* Find pm-bot's comment on PR `number` (is_issue 0) or the tracking issue (1). RC_*. */
int pmbot_action__slot_find(struct pmbot_action *a, struct slot *s, int is_issue, long number);

/*
 * Replace the slot's text with `body` (creating it when there is none).
 * Sets *forbidden, and succeeds, when the token may not write (fork PRs,
 * read-only tokens). RC_*.
 */
int pmbot_action__slot_write(struct pmbot_action *a, struct slot *s, const char *body, int *forbidden);

/*
 * Mark the slot "applying" by this run (its header's status and run), for
 * readers; the exclusion itself is pmbot_action__lock()'s. RC_*.
 */
int pmbot_action__slot_lock(struct pmbot_action *a, struct slot *s);

/*
 * Take the apply lock `key` ("pr-12", "field-sync"; pmbot_lock_take()) for
 * this run. RC_OK held, RC_INVALID busy (result "busy"), RC_RUNTIME.
 */
int pmbot_action__lock(struct pmbot_action *a, const char *key);

/*
 * An approved apply refused because the ledger is corrupt (a write nobody
 * could audit is not made): says so, reacts 👎, result "failed". RC_RUNTIME.
 */
int pmbot_action__refuse_unledgered(struct pmbot_action *a);

/*
 * Append " Audit ledger head: `H` (N events)." to `out` when the run has a
 * sound ledger: published in the comment after an apply, so that a later
 * reader can check the ledger against it (pm-bot audit verify --head H).
 * 0, or -1 when out of memory.
 */
int pmbot_action__ledger_note(pmbot_buf *out, const struct pmbot_action *a);

/* Release a lock pmbot_action__lock() took; a failure is only warned about. */
void pmbot_action__unlock(struct pmbot_action *a, const char *key);

void pmbot_action__slot_clear(struct slot *s);

/* Append one JSON line to stdout and to the audit ledger (approval, denial). */
void pmbot_action__audit(struct pmbot_action *a, const char *event, json_t *fields);

/* React to the command comment; a failure is only warned about. */
void pmbot_action__react(struct pmbot_action *a, const char *content);

/*
 * Answer the commenter on the pull request: `text` (pm-bot's own words,
 * user text in it already escaped) becomes the reply block of pm-bot's
 * comment (pmbot_comment_reply()), one edit. Nothing is written when the
 * event is not on a pull request, when the PR has no pm-bot comment yet
 * (a stranger's comment never creates one), while an apply is running, or
 * when the reply would not fit the comment: the log says so. Failures are
 * only warned about; the caller has logged `text` already.
 */
void pmbot_action__reply(struct pmbot_action *a, const char *text);

/*
 * May the commenter approve under `config`? RC_OK yes; RC_INVALID no
 * (audited, reacted to, result "denied"); RC_RUNTIME when GitHub could
 * not say.
 */
int pmbot_action__authorize(struct pmbot_action *a, const pmbot_config *config, const char *plan_hash);

/* Render `in` and write it into the slot; falls back to the summary when forbidden. RC_*. */
int pmbot_action__show(struct pmbot_action *a, struct slot *s, const pmbot_comment_input *in);

/* Set the outputs from a bundle (plan_hash, changes, conflicts). */
void pmbot_action__set_outputs(struct pmbot_action *a, const json_t *bundle);

/* schedule / workflow_dispatch, and `/pm-bot apply|plan` on the tracking issue. */
int pmbot_action__field_sync(struct pmbot_action *a, const pmbot_command *cmd);

/*
 * schedule / workflow_dispatch: continue the applies the write budget
 * paused, as their approval's comment would (at most a few per run,
 * stopping when the budget pauses again); each is found from the cache's
 * hint and believed only when GitHub agrees. The run's outputs stay as
 * they were. *spent is 1 when the write budget has no room left (an apply
 * paused again, or the budget was spent before one could start). RC_*.
 */
int pmbot_action__resume_paused(struct pmbot_action *a, int *spent);

/* Header prefix of every pm-bot comment and tracking-issue body. */
#define ACTION_HEADER_PREFIX "<!-- pm-bot:plan "

#endif
