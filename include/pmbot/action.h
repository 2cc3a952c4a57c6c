#ifndef PMBOT_ACTION_H
#define PMBOT_ACTION_H

#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/config.h"
#include "pmbot/diag.h"

/*
 * `pm-bot action`, the pure part: what a GitHub Actions event is
 * (GITHUB_EVENT_NAME plus the webhook payload at GITHUB_EVENT_PATH), what
 * pm-bot does about it, the `/pm-bot` command a comment holds, and whether a
 * commenter may approve. No network, no git, no output: the caller fetches
 * permissions and plans, and these functions only decide.
 */

typedef enum {
	PMBOT_EV_PULL_REQUEST,
	PMBOT_EV_ISSUE_COMMENT,
	PMBOT_EV_PUSH,
	PMBOT_EV_SCHEDULE,
	PMBOT_EV_WORKFLOW_DISPATCH,
	PMBOT_EV_OTHER
} pmbot_event_kind;

/*
 * The fields of a payload pm-bot uses. Every string is owned by the event
 * and released by pmbot_event_free(); NULL means "not in this kind of
 * event" (or, for sender and comment_author, a payload without that user).
 */
typedef struct {
	pmbot_event_kind kind;
	char *name;            /* GITHUB_EVENT_NAME as given */
	char *action;          /* payload "action", or NULL */
	char *repo;            /* repository.full_name, "OWNER/NAME" */
	char *default_branch;  /* repository.default_branch */
	long number;           /* pull request or issue number; 0 when none */
	int is_pull_request;   /* a pull_request event, or an issue_comment on a PR (issue.pull_request) */
	/* pull_request events only; NULL otherwise. head_sha is 40 lower-case hex digits.
	 * head_repo is NULL when the head repository was deleted. */
	char *head_sha, *head_repo, *base_ref, *base_repo;
	/* pull_request events only: the head repository differs from the base
	 * repository (ASCII case-insensitively), or is gone. 0 for other events. */
	int is_fork;
	/* issue_comment events only (0 / NULL otherwise). comment_author is NULL
	 * when the payload's comment.user is null. */
	long long comment_id;
	char *comment_body;
	char *comment_author;
	int comment_author_is_bot; /* comment.user.type is "Bot", or the login ends in "[bot]" */
	char *ref, *after;     /* push events only: the full ref and the 40-hex commit after the push */
	char *sender;          /* sender.login; NULL when the payload has no sender (schedule) */
} pmbot_event;

/* Largest payload accepted: GitHub caps webhook payloads at 25 MB. */
#define PMBOT_EVENT_MAX_BYTES ((size_t)25 << 20)

/*
 * Parse the payload (`len` bytes of JSON at `json`) of the event named
 * `event_name`. The name picks the kind: "pull_request", "issue_comment",
 * "push", "schedule", "workflow_dispatch"; any other name (including
 * "pull_request_target") is PMBOT_EV_OTHER.
 *
 * What each kind requires (anything missing or of the wrong type is an
 * EVENT_FIELD error at its JSON Pointer, e.g. "/pull_request/head/sha";
 * every problem is reported, not only the first):
 * - every kind except schedule and other: `repository` with `full_name`
 *   ("OWNER/NAME") and `default_branch` (a usable branch name). schedule
 *   payloads of older GitHub versions hold only `schedule`, so for schedule
 *   and other events `repository` may be absent (repo and default_branch
 *   are then NULL: schedule runs on the default branch, GITHUB_REF names it);
 *   when present it is checked the same way.
 * - pull_request: `action`, `number`, `pull_request.head.sha` (40 hex
 *   digits), `pull_request.head.repo` (an object with `full_name`, or null),
 *   `pull_request.base.ref`, `pull_request.base.repo.full_name`.
 * - issue_comment: `action`, `issue.number`, `comment.id`, `comment.body`,
 *   `comment.user` (an object with `login`, or null); `issue.pull_request`
 *   present and not null marks a comment on a pull request.
 * - push: `ref`, `after` (40 hex digits).
 * - `sender`, when present and not null, needs a `login` (all kinds).
 * Fields pm-bot does not use are not looked at.
 *
 * The payload is parsed strictly: duplicate keys, invalid UTF-8 and
 * "\u0000" are EVENT_PARSE errors, as are bytes that are not JSON (with the
 * line and column) and a payload over PMBOT_EVENT_MAX_BYTES. A root that
 * is not an object is EVENT_FIELD at "". A NULL or empty `event_name` is
 * EVENT_FIELD at "" too. Diagnostics carry no file name: the caller can set
 * GITHUB_EVENT_PATH with pmbot_diag_list_set_file().
 *
 * On success `*out` is a new event the caller frees with pmbot_event_free().
 * PMBOT_EINVALID when the payload was rejected (errors added to `diags`),
 * PMBOT_ERROR when out of memory; `*out` is NULL then.
 */
PMBOT_WARN_UNUSED int pmbot_event_parse(pmbot_event **out, const char *event_name, const char *json,
	size_t len, pmbot_diag_list *diags);

/* Release `ev` and every string it owns. NULL is a no-op. */
void pmbot_event_free(pmbot_event *ev);

/* What to do with an event, decided from the event alone. */
typedef enum {
	PMBOT_ACT_IGNORE,
	PMBOT_ACT_PLAN_PR,
	PMBOT_ACT_COMMAND,
	PMBOT_ACT_PLAN_PUSH,
	PMBOT_ACT_FIELD_SYNC
} pmbot_event_action;

/*
 * Decide what to do with `ev`:
 * - pull_request opened | synchronize | reopened -> PLAN_PR (fork or not:
 *   the caller routes fork plans to the step summary);
 * - issue_comment created, by an author that is not a bot, whose body holds
 *   a `/pm-bot` line (pmbot_command_parse() is not PMBOT_CMD_NONE) ->
 *   COMMAND, on pull requests and plain issues alike (the caller decides
 *   whether a plain issue is the field-sync tracking issue, and logs and
 *   ignores PMBOT_CMD_UNKNOWN); edited or deleted comments, bot comments,
 *   comments without an author and comments without a command -> IGNORE;
 * - push to "refs/heads/<default_branch>" -> PLAN_PUSH; a push that deletes
 *   that branch (`after` all zeros) and pushes to other refs -> IGNORE;
 * - schedule, workflow_dispatch -> FIELD_SYNC;
 * - anything else -> IGNORE.
 * When `why` is not NULL it receives a one-line reason (static storage,
 * never NULL) for every answer, meant for the log.
 */
pmbot_event_action pmbot_event_decide(const pmbot_event *ev, const char **why);

typedef enum {
	PMBOT_CMD_NONE,    /* no `/pm-bot` line */
	PMBOT_CMD_PLAN,    /* `/pm-bot plan` */
	PMBOT_CMD_APPLY,   /* `/pm-bot apply <64 hex>`; `hash` holds it */
	PMBOT_CMD_UNKNOWN  /* a `/pm-bot` line pm-bot does not understand; `word` says what */
} pmbot_command_kind;

/*
 * A parsed command. `hash` is the plan hash of an APPLY in lower case, ""
 * otherwise. `word`, for UNKNOWN only (else ""), is the first word that was
 * not understood: the unknown subcommand ("deploy"), the bad hash, "apply"
 * when the hash is missing, the first extra word after a complete command,
 * or "" for a bare `/pm-bot`. It is cut to 31 bytes at a UTF-8 boundary
 * and control characters are replaced by '?', so it is safe to log (still
 * user text: quote it).
 */
typedef enum {
	PMBOT_CMD_FAULT_NONE = 0, /* understood, or no command */
	PMBOT_CMD_FAULT_WORD,     /* an unknown subcommand (or none: bare `/pm-bot`) */
	PMBOT_CMD_FAULT_HASH,     /* `apply` with a word that is not a 64-hex hash */
	PMBOT_CMD_FAULT_NO_HASH,  /* `apply` alone */
	PMBOT_CMD_FAULT_EXTRA     /* a word after a complete command */
} pmbot_command_fault;

typedef struct {
	pmbot_command_kind kind;
	char hash[65];
	char word[32];
	pmbot_command_fault fault; /* why an UNKNOWN was not understood */
} pmbot_command;

/*
 * GitHub refuses comments over 65,536 characters, 4 bytes each at most: a
 * longer body is not a comment GitHub took, and holds no command.
 */
#define PMBOT_COMMAND_MAX_BYTES ((size_t)65536 * 4)

/*
 * Find the command in a comment body, read as GitHub shows it: the body is
 * parsed as CommonMark (cmark-gfm) and only the lines of paragraphs that are
 * direct children of the document are looked at. The command is the first
 * such line that, with leading and trailing spaces and tabs removed, is
 * "/pm-bot" alone or followed by a space or tab ("/pm-botx" is not one).
 *
 * So nothing counts inside code (fenced or indented blocks, `code spans`),
 * block quotes (including a line joined to a quote by lazy continuation:
 * GitHub shows it inside the quote), lists, headings, tables' cells, link
 * texts, images or emphasis: a line must start with plain paragraph text,
 * and a line ends only where the rendering breaks it. Quoting or pasting
 * pm-bot's plan comment, which shows the apply command in a code block,
 * approves nothing. Raw HTML (a block, or inline such as `<!-- … -->` or
 * `<details>`) can hide what follows it, so no line after the first raw
 * HTML counts; on the line holding it, HTML before the prefix means no
 * command and HTML after it makes the command UNKNOWN.
 *
 * Words are separated by spaces and tabs and compared exactly ("plan",
 * "apply"); the hash may be in upper case. Only the first `/pm-bot` line
 * counts, even when it is UNKNOWN. `word` is always valid UTF-8 (cmark
 * replaces invalid sequences and NUL bytes by U+FFFD).
 *
 * pmbot_command_parse() takes a NUL-terminated `body` (NULL: no command);
 * pmbot_command_parse_bytes() takes `len` bytes at `body`, which need not be
 * terminated nor UTF-8. A body over PMBOT_COMMAND_MAX_BYTES holds no
 * command (cutting it could turn what follows a code span's opening
 * backtick into text).
 *
 * Returns PMBOT_OK whatever the body holds (`out->kind` says what: NONE,
 * PLAN, APPLY or UNKNOWN); PMBOT_ERROR when `out` is NULL or memory ran out
 * (`out->kind` is NONE then).
 */
PMBOT_WARN_UNUSED int pmbot_command_parse(pmbot_command *out, const char *body);
PMBOT_WARN_UNUSED int pmbot_command_parse_bytes(pmbot_command *out, const char *body, size_t len);

/* One `/pm-bot` command, for `help` and "did you mean" (one table). */
typedef struct {
	const char *name;   /* "plan" */
	const char *usage;  /* "/pm-bot plan" */
	const char *what;   /* one line: what it does */
} pmbot_command_info;

/* The commands pm-bot knows, in help order; *n receives the count (static storage). */
const pmbot_command_info *pmbot_command_table(size_t *n);

/*
 * The reply to an UNKNOWN command, one line of Markdown appended to `out`
 * (the caller owns it): `help` lists the commands; an `apply` whose hash is
 * malformed says "`abc…` is not a 64-hex plan hash"; an unknown word within
 * edit distance 2 of a command asks "did you mean `apply`?". The
 * commenter's word is hostile: only [A-Za-z0-9._-] are kept (others become
 * '?'), it is cut to 40 characters and shown in a code span, so it can
 * neither mention, link nor start a workflow command. *is_help is 1 for
 * `help`. 0, or -1 when out of memory. Deterministic.
 */
PMBOT_WARN_UNUSED int pmbot_command_reply(pmbot_buf *out, int *is_help, const pmbot_command *cmd);

/*
 * Approval policy: may `login`, whose permission on the repository is
 * `permission` (GitHub's word: admin, maintain, write, triage, read, none),
 * approve a plan under `config`? The permission must be a known word other
 * than "none" and at least config->min_permission, and when
 * config->approvers is not empty, `login` must be listed (ASCII
 * case-insensitively). A NULL or empty `login` or a NULL `permission` is
 * denied. GitHub's legacy `permission` field folds maintain into write and
 * triage into read; pass `role_name` when the policy needs those.
 *
 * A one-line human reason for the answer, yes or no, is appended to
 * `reason` when it is not NULL (user text in it is escaped with
 * pmbot_diag_show()). Returns PMBOT_OK when allowed, PMBOT_EINVALID when
 * denied, PMBOT_ERROR when the reason could not be written (out of memory;
 * treat as denied).
 */
int pmbot_approval_check(pmbot_buf *reason, const pmbot_config *config, const char *login,
	const char *permission);

#endif
