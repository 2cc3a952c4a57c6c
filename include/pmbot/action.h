#ifndef PMBOT_ACTION_H
#define PMBOT_ACTION_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/source.h"
#include "pmbot/diag.h"
#include "pmbot/github.h"
#include "pmbot/note.h"
#include "pmbot/repo.h"
#include "pmbot/workgraph.h"

/*
 * The public header of src/action/, `pm-bot action`, in five parts:
 *  1. events, commands and the approval policy (pure; this part),
 *  2. the plan comment (pure),
 *  3. the GitHub calls the Action makes,
 *  4. the apply lock and the pull-request rules (policy over part 3),
 *  5. one whole run.
 */

/* ==== 1. Events, commands, approvals ==================================== */

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

/* ==== 2. The plan comment ================================================ */

/*
 * The plan comment of `pm-bot action`: the one comment pm-bot keeps on a
 * pull request (kind "plan"), or the body of the field-sync tracking issue
 * (kind "field-sync"). Its first line is a hidden header that identifies
 * the comment and doubles as the apply lock:
 *
 *   <!-- pm-bot:plan {"head":"…","kind":"plan","number":12,"plan_hash":"…",
 *   "run":"","status":"planned","v":1} -->                    (one line)
 *
 * The JSON is canonical (json.h: sorted keys, one line) except that a '-'
 * right after a '-' is written \u002d and every '>' \u003e, so the JSON can
 * never end the HTML comment ("-->") nor hold "--". Any JSON reader gets
 * the same values back ("field-sync" stays readable: a single '-' is kept).
 * The rest of the body is Markdown for people; pm-bot reads nothing of it
 * back except the last apply's line, in the known shapes only
 * (pmbot_comment_history()).
 * Whether a comment is pm-bot's also depends on its author (the token's own
 * login), which is the caller's check: parse looks at the text only.
 * Pure: no I/O; the same input always gives the same bytes.
 */

/* What the header records. Every string is NUL-terminated inside its array. */
typedef struct {
	char kind[16];          /* "plan" | "field-sync" */
	long number;            /* PR or tracking issue number, >= 0 */
	char head[41];          /* 40 lower-case hex (the PR head commit) or "" */
	char plan_hash[65];     /* 64 lower-case hex or "" */
	char status[16];        /* planned | no_changes | invalid | applying |
	                           applied | failed | stale | paused (the write
	                           budget stopped the apply of plan_hash, the
	                           approved one; a re-run continues it) */
	char run[64];           /* the lock owner (GITHUB_RUN_ID) while status is
	                           "applying", else ""; printable ASCII */
} pmbot_comment_meta;

/* Literal start of every pm-bot comment body. */
#define PMBOT_COMMENT_PREFIX "<!-- pm-bot:plan "

/* Default and GitHub's limit for a comment body, in Unicode code points. */
#define PMBOT_COMMENT_MAX_CHARS ((size_t)65536)

/* Default cap on the Mermaid diagram's nodes. */
#define PMBOT_COMMENT_MAX_NODES ((size_t)50)

/*
 * Append the header line for `meta` to `out` (which owns it, as always):
 * "<!-- pm-bot:plan {…} -->" without a line break. `meta` must be valid:
 * each field as documented above, and `run` is non-empty exactly when
 * `status` is "applying". 0; PMBOT_EINVALID for an invalid `meta`;
 * PMBOT_ERROR when out of memory or past `out`'s cap. `out` is left as it
 * was on failure.
 */
int pmbot_comment_header(pmbot_buf *out, const pmbot_comment_meta *meta);

/*
 * Read the header of a comment body (`len` bytes, need not be
 * NUL-terminated). The body must start with PMBOT_COMMENT_PREFIX, else
 * PMBOT_ENOTFOUND (not a pm-bot comment). Then the first line (ending at
 * '\n', a '\r' before it ignored) must be the prefix, a JSON object of at
 * most 1024 bytes, and " -->" ending the line; the object must hold exactly
 * v (1), kind, number, head, plan_hash, status and run, each valid as for
 * pmbot_comment_header(), no duplicate key; else PMBOT_EINVALID. Nothing
 * after the first line is looked at. `*out` is filled on PMBOT_OK and
 * zeroed otherwise.
 */
PMBOT_WARN_UNUSED int pmbot_comment_parse(pmbot_comment_meta *out, const char *body, size_t len);

/*
 * The history line a re-rendered plan comment keeps: what the last apply
 * on the pull request did, after a re-plan (`/pm-bot plan`, a push)
 * replaced its notice. Appends to `out` (which owns it) one of
 *
 *   *Last apply: 15 of 15 changes applied, approved by `alice` (plan `07e8ec48`).*
 *   *Last apply: failed, 3 of 5 changes applied, 2 failed, approved by `alice` (plan `07e8ec48`).*
 *   *Last apply: paused, approved by `alice` (plan `07e8ec48`).*
 *
 * read from `body` (`len` bytes), the comment's previous text: a pm-bot
 * plan header (pmbot_comment_parse()), then, in the lines before its first
 * heading (at most 40), the first that is either `pm-bot action`'s apply
 * notice ("**Applied** A of T changes, approved by @LOGIN." and its
 * "**Apply failed**…" and "**Paused: ….** Approved by @LOGIN." forms; the
 * plan is the header's plan_hash when its status is applied, failed or
 * paused) or a history line as above (so it is carried across re-plans).
 * The body is untrusted: counts must be 1 to 9 digits, the login
 * [A-Za-z0-9-]{1,39} with an optional "[bot]", the plan 8 lower-case hex,
 * and the line is rebuilt from those fields alone; the login goes in a
 * code span (a re-plan mentions nobody). Nothing is appended when nothing
 * parses. No line break is appended. 0 (also when nothing was found);
 * PMBOT_ERROR when out of memory or past `out`'s cap (`out` left as it was).
 */
int pmbot_comment_history(pmbot_buf *out, const char *body, size_t len);

/* Why an approval no longer matches the plan (`pm-bot action`'s `/pm-bot apply H`). */
typedef struct {
	const char *approver;             /* the approval's author; NULL: "?" */
	const char *approved;             /* the approved plan_hash (64 hex) */
	const char *fresh_hash;           /* the plan now; NULL or "": "none" */
	const pmbot_comment_meta *shown;  /* the comment's header when the approval came,
	                                     NULL when no plan was shown */
	const char *head;                 /* the pull request's head commit now (40 hex) */
	int invalid;                      /* the reports are invalid now */
	const json_t *approved_bundle;    /* the approved plan, when the runner kept it
	                                     (its hash checked by the caller); may be NULL */
	const json_t *fresh_bundle;       /* the plan now; may be NULL */
	const pmbot_diag_list *check;     /* pmbot_apply_check(approved, fresh)'s; may be NULL */
} pmbot_comment_stale;

/*
 * Append the notice of a stale approval to `out` (which owns it):
 * "**Not applied: the plan is stale.** @LOGIN approved `H`, but … (hash
 * `F`). What moved:" and a list of what pm-bot can name, in this order:
 * no plan was shown; the head moved from the shown header's commit to
 * `head` (7 hex each); the plan shown was not the approved one (8 hex
 * each); the reports are invalid now; with both bundles, each issue whose
 * fingerprint differs ("`acme/w#8` was updated at `T` (the approved plan
 * saw `T0`)", "is another issue now", "is new to the plan", "is no longer
 * in the plan"); each STALE_PLAN message of `check`. When none applies, one
 * line says GitHub changed (and, without the approved plan, that pm-bot
 * cannot name what). At most 10 lines, then "- … and N more". Outside text
 * (refs, times, messages, a login that is not one) is escaped as the rest
 * of the comment is; a valid login is @-mentioned (the approver asked).
 * 0, or PMBOT_ERROR (out of memory, `out`'s cap; `out` left as it was).
 * Same input, same bytes.
 */
int pmbot_comment_stale_notice(pmbot_buf *out, const pmbot_comment_stale *st);

typedef struct {
	const pmbot_comment_meta *meta;  /* required: the header */
	const json_t *bundle;            /* ChangesetBundle v1 (plan.h); may be NULL
	                                    (invalid reports): no diagram, no plan */
	const pmbot_workgraph *graph;    /* may be NULL: no diagram */
	const pmbot_diag_list *diags;    /* its errors and warnings are listed; may be NULL */
	const char *notice;              /* Markdown shown first (apply result, stale,
	                                    denied); valid UTF-8; may be NULL */
	const json_t *results;           /* pmbot_apply_run()'s results; may be NULL */
	size_t max_chars;                /* 0: PMBOT_COMMENT_MAX_CHARS */
} pmbot_comment_input;

/*
 * Append the whole comment body to `out`, in this order:
 *  1. the header line (pmbot_comment_header) and a blank line;
 *  2. `notice` as given (the caller escapes what it puts in), ending in a
 *     blank line;
 *  3. with `results`: "### Apply result", a table counting applied,
 *     already applied, failed, denied and pending entries (other statuses
 *     are not counted), then each failed or denied entry with its
 *     changeset id, idempotency key, reason and message;
 *  4. when `diags` holds errors: "### Reports are invalid" and each error
 *     as `file:line` `CODE` `pointer`: message;
 *  5. when `diags` holds warnings (valid plans too): "### Warnings" and
 *     each warning in the same form;
 *  6. with `graph` and `bundle`: pmbot_comment_mermaid(…, 50 nodes);
 *  7. with `bundle`: pmbot_plan_markdown() with the budget that is left.
 * Text from the results, the diagnostics and the graph is escaped (no
 * HTML, emphasis, links or code can start in it and no line break ends a
 * block); each message is cut at 300 code points, at most 20 results,
 * 50 errors and 50 warnings are listed, then "… and N more".
 *
 * Budget: the whole body is at most `max_chars` Unicode code points. Parts
 * are kept in the order above while they fit: the notice is cut at a line
 * end when it alone does not fit (with a note), lists stop early (with
 * "… and N more"), the diagram is dropped when pmbot_plan_markdown() could
 * not fit its title, summary and plan hash after it, and when even those do
 * not fit the plan becomes the single line "Plan hash: `…`", or nothing.
 * The header is never cut: PMBOT_EINVALID when it and a line break do not
 * fit (a header is at most 455 code points).
 *
 * 0; PMBOT_EINVALID when `meta` is NULL or invalid, `notice` is not valid
 * UTF-8, or `max_chars` leaves no room for the header; PMBOT_ERROR when the bundle is
 * not one pmbot_plan_markdown() takes, out of memory, or past `out`'s cap.
 * `out` is left as it was on failure. Same input, same bytes.
 */
int pmbot_comment_render(pmbot_buf *out, const pmbot_comment_input *in);

/*
 * Append a Markdown block with a Mermaid diagram of the part of `graph`
 * that `bundle` touches (also for the step summary):
 *
 *   ```mermaid
 *   flowchart TD
 *     n0["epic:x: Title"]:::changed
 *     n1["task:y: Title"]:::created
 *     n0 --> n1
 *     classDef …
 *   ```
 *   *… and N more items not shown.*        (only when capped)
 *
 * Touched stable_ids: every changeset's target.stable_id, every
 * payload.parent and payload.blocker binding with a stable_id, and every
 * conflict's stable_id. Class `conflict` for conflicts, else `created` for
 * create_issue targets, else `changed` for other changeset targets; an item
 * only named by a binding has no class. Labels are "stable_id: title" (the
 * graph's title; the stable_id alone when the graph lacks the item), cut at
 * 80 code points with "…", every character Mermaid or Markdown could read
 * as syntax written as a Mermaid entity (#quot; #lt; #gt; #35; #37; #96; …:
 * '%' so no "%%{init …}%%" directive survives), line breaks and other
 * control characters as spaces (so no "click" line). Edges: the graph's parent_child ("-->"),
 * depends_on and blocked_by ("-. depends on .->", "-. blocked by .->")
 * between shown nodes, in the graph's order.
 *
 * At most `max_nodes` nodes (0: PMBOT_COMMENT_MAX_NODES): conflicts first,
 * then created, then changed, then bound-only items, each group by
 * stable_id; shown nodes are numbered n0, n1, … in stable_id order.
 * Nothing is appended when nothing is touched or `graph` or `bundle` is
 * NULL. 0, or PMBOT_ERROR (out of memory, `out`'s cap; `out` left as it
 * was). Same input, same bytes.
 */
int pmbot_comment_mermaid(pmbot_buf *out, const pmbot_workgraph *graph, const json_t *bundle,
	size_t max_nodes);

/*
 * A reply to a command (an unknown word, a malformed hash, `help`, a
 * denial), shown in the PR's one pm-bot comment rather than in a second
 * comment: a block right after the header line,
 *
 *   <!-- pm-bot:reply -->
 *   > Reply to `login`: REPLY
 *
 * then a blank line. The block is transient: a later render (a plan)
 * leaves it out, and a new reply replaces it.
 */
#define PMBOT_COMMENT_REPLY_MARK "<!-- pm-bot:reply -->"

/* Cap on the reply's text, in code points (longer text is cut with "…"). */
#define PMBOT_COMMENT_REPLY_MAX_CHARS ((size_t)1000)

/*
 * Append to `out` (the caller owns it) the comment `body` (pm-bot's own
 * text, NUL-terminated) with its reply block, if any, replaced by one for
 * `reply` addressed to `login` (may be NULL: "Reply: …"). Nothing of
 * `body` is changed but the block. `reply` is flattened to one line, cut at
 * PMBOT_COMMENT_REPLY_MAX_CHARS, '<' written "&lt;" and neutralised
 * (text.h: no mention, reference or link), so it can neither leave the
 * quote nor notify anyone; `login` keeps only [A-Za-z0-9._[\]-] (others
 * become '?') in a code span, at most 40 characters.
 *
 * 0; PMBOT_ENOTFOUND when `body` has no valid pm-bot header
 * (pmbot_comment_parse()); PMBOT_EINVALID when `reply` is not valid UTF-8
 * or the result would be over `max_chars` code points (0:
 * PMBOT_COMMENT_MAX_CHARS): the caller then leaves the comment alone;
 * PMBOT_ERROR when out of memory. `out` is left as it was on failure.
 * Pure; same input, same bytes.
 */
int pmbot_comment_reply(pmbot_buf *out, const char *body, const char *login, const char *reply,
	size_t max_chars);

/* ==== 3. The GitHub calls of the Action ================================== */

/*
 * The GitHub calls `pm-bot action` makes around a pull request: who the
 * token is, the PR's head, a commenter's permission, the plan comment (find,
 * read, create or edit, react to) and the field-sync tracking issue. Each is
 * one REST request (or one list walked page by page) through the HTTP
 * client of pmbot/github.h, which handles rate limits, retries and pacing.
 *
 * Conventions shared by every function below:
 *  - `repo` is "OWNER/NAME". Owner, name and every login are sent
 *    percent-encoded (pmbot_github_path_escape), so "github-actions[bot]"
 *    travels as "github-actions%5Bbot%5D"; an empty part, "." or ".." is
 *    refused with PMBOT_EINVALID before anything is sent.
 *  - Reads ask GitHub unconditionally (PMBOT_GITHUB_NO_CACHE): every answer
 *    feeds an approval or a lock decision, and no comment or issue body is
 *    written to the ETag cache directory.
 *  - On failure a sentence saying what was attempted and why is appended to
 *    `err` (may be NULL; owned by the caller). It names method, URL, status
 *    and GitHub's message, never the token.
 *  - String outputs are new malloc'd strings the caller frees with free();
 *    every output is NULL / 0 unless the call returns 0.
 *
 * Returns: 0 on success, or
 *   PMBOT_GH_EFORBIDDEN   a write (POST/PATCH) answered 403 or 404 (that
 *                         is not a rate limit): the token may not write
 *                         here (a fork PR's read-only token, a workflow
 *                         without `issues: write` / `pull-requests: write`).
 *                         The caller degrades to the job summary. An edit of
 *                         a comment or issue deleted meanwhile also answers
 *                         404 and so lands here.
 *   PMBOT_ENOTFOUND       a read answered 404 (no such PR, comment or repo)
 *   PMBOT_EINVALID        a bad argument (see above; also a zero number, an
 *                         unknown reaction, a body that is not UTF-8)
 *   PMBOT_ERROR           out of memory, a 2xx answer lacking what the
 *                         function returns (e.g. a comment without an id),
 *                         or list pages whose Link headers lead in a circle
 *   PMBOT_GITHUB_*        the client's own codes (pmbot/github.h), passed
 *                         through: EHTTP for other non-2xx answers,
 *                         EUNKNOWN_OUTCOME for a create that may have landed
 *                         (never retried: re-read with the find function),
 *                         ETRANSPORT, ERATELIMIT, ETOOBIG, EGRAPHQL
 * (PMBOT_GH_EFORBIDDEN is in common.h)
 */

/* PMBOT_GH_EEXISTS (common.h): a create found the name taken (422 with GitHub's `already_exists` code). */

/* The token's own login: pmbot_github_viewer_login() in github.h. */

/*
 * The parts of a pull request the action decides on. Every member is a
 * malloc'd string owned by the struct: release with pmbot_gh_pull_clear().
 *   head_sha   the head commit, 40 (or 64) lower-case hex digits
 *   head_repo  full_name of the head repository; "" when GitHub no longer
 *              knows it (a deleted fork), which never equals base_repo
 *   base_repo  full_name of the base repository
 *   state      "open" or "closed" (a merged PR is "closed")
 *   merged     1 when GitHub says the PR was merged, else 0
 */
typedef struct {
	char *head_sha;
	char *head_repo;
	char *base_repo;
	char *state;
	int merged;
} pmbot_gh_pull;

/*
 * GET /repos/{o}/{r}/pulls/{number}. `*out` is filled (and owned by the
 * caller) on 0 and zeroed otherwise. PMBOT_ERROR when the answer lacks
 * one of the fields (`merged` included) or the head sha is not hex.
 */
int pmbot_gh_pull_get(pmbot_gh_pull *out, pmbot_github_client *c, const char *repo,
	long number, pmbot_buf *err);

/* Free the members of `p` and zero it; NULL and a zeroed struct are fine. */
void pmbot_gh_pull_clear(pmbot_gh_pull *p);

/*
 * `login`'s role on `repo`: GET /repos/{o}/{r}/collaborators/{login}/permission.
 * `*out` is one of "admin", "maintain", "write", "triage", "read", "none"
 * (new string, caller frees). `role_name` is used when it is one of the five
 * base roles, since `permission` reports maintain as "write" and triage as
 * "read"; a custom role (or an empty role_name, as GitHub gives for bots)
 * falls back to its base, `permission`. A 404 (no such user) is "none" and
 * returns 0. PMBOT_ERROR when neither field holds a known role.
 */
int pmbot_gh_permission(char **out, pmbot_github_client *c, const char *repo, const char *login,
	pmbot_buf *err);

/*
 * The oldest comment on issue or PR `number` whose body starts with
 * `header_prefix` (byte for byte) and whose author's login equals `author`
 * (ASCII case-insensitively, as GitHub compares logins):
 * GET /repos/{o}/{r}/issues/{number}/comments?per_page=100, then each
 * Link rel="next" page until a match, so a PR whose plan comment is among
 * the first hundred costs one request. `*id` is the comment id, 0 when no
 * comment matches (return 0). `body` may be NULL; else `*body` gets a copy
 * of the matching body (caller frees), NULL when none. `header_prefix` and
 * `author` must be non-empty.
 */
int pmbot_gh_comment_find(long long *id, char **body, pmbot_github_client *c, const char *repo,
	long number, const char *header_prefix, const char *author, pmbot_buf *err);

/*
 * Called for each comment, oldest first: its id, its author's login (NULL
 * when GitHub gives none), whether the author is a bot (user.type "Bot" or
 * a login ending in "[bot]") and its body ("" when null), all borrowed for
 * the call. Non-zero stops the listing.
 */
typedef int (*pmbot_gh_comment_fn)(void *payload, long long id, const char *login, int is_bot,
	const char *body);

/*
 * Every comment on issue or PR `number` to `fn`:
 * GET /repos/{o}/{r}/issues/{number}/comments?per_page=100 and each Link
 * rel="next" page, until `fn` stops it. 0, or < 0 with `err` told why.
 */
int pmbot_gh_comment_each(pmbot_github_client *c, const char *repo, long number,
	pmbot_gh_comment_fn fn, void *payload, pmbot_buf *err);

/*
 * The current body of comment `id`: GET /repos/{o}/{r}/issues/comments/{id}
 * (a lock re-read: never from a cache). `*body`: new string, caller frees;
 * "" for a comment GitHub reports with a null body. PMBOT_ENOTFOUND when the
 * comment was deleted.
 */
int pmbot_gh_comment_get(char **body, pmbot_github_client *c, const char *repo, long long id,
	pmbot_buf *err);

/*
 * Write a comment with `body` (UTF-8; GitHub refuses more than 65,536
 * characters with EHTTP 422, the caller keeps within it):
 *   id == 0  create: POST /repos/{o}/{r}/issues/{number}/comments {"body"}.
 *            A write that is never retried (a repeat would post twice):
 *            after PMBOT_GITHUB_EUNKNOWN_OUTCOME, find the comment again.
 *   id > 0   edit: PATCH /repos/{o}/{r}/issues/comments/{id} {"body"},
 *            repeat-safe and retried like a GET; `number` is not used.
 * `*out_id` gets the comment's id (from GitHub's answer).
 */
int pmbot_gh_comment_upsert(long long *out_id, pmbot_github_client *c, const char *repo,
	long number, long long id, const char *body, pmbot_buf *err);

/*
 * React to comment `comment_id`: POST
 * /repos/{o}/{r}/issues/comments/{comment_id}/reactions {"content"}.
 * `content` is one of GitHub's eight: "+1", "-1", "laugh", "confused",
 * "heart", "hooray", "rocket", "eyes" (else PMBOT_EINVALID). GitHub answers
 * 201 for a new reaction and 200 when this token already reacted so: both
 * are success, which also makes the request repeat-safe (retried).
 */
int pmbot_gh_reaction_add(pmbot_github_client *c, const char *repo, long long comment_id,
	const char *content, pmbot_buf *err);

/*
 * The tracking issue: the first open issue in GitHub's listing order
 * (newest first) authored by `author` (case-insensitively) whose body starts
 * with `header_prefix`: GET /repos/{o}/{r}/issues?state=open&creator={author}
 * &per_page=100, following Link rel="next" until a match, skipping pull
 * requests (the list holds both). `*number` is 0 when there is none
 * (return 0); `body` may be NULL, else `*body` gets a copy (caller frees).
 */
int pmbot_gh_issue_find(long *number, char **body, pmbot_github_client *c, const char *repo,
	const char *header_prefix, const char *author, pmbot_buf *err);

/*
 * Write the tracking issue:
 *   number == 0  create: POST /repos/{o}/{r}/issues {"title","body"};
 *                `title` is required. Never retried, as for comments.
 *   number > 0   edit: PATCH /repos/{o}/{r}/issues/{number} {"body"}, plus
 *                "title" when `title` is not NULL; repeat-safe (retried).
 * `*out_number` gets the issue's number (from GitHub's answer).
 */
int pmbot_gh_issue_upsert(long *out_number, pmbot_github_client *c, const char *repo,
	long number, const char *title, const char *body, pmbot_buf *err);

/*
 * Repository labels, the apply lock's primitive (src/action/lock.c): GitHub
 * creates a label name (compared without regard to case) at most once, so
 * a create either makes it or is told it exists, atomically. `name` has 1
 * to PMBOT_GH_LABEL_MAX bytes, a description at most PMBOT_GH_LABEL_DESC_MAX.
 */
#define PMBOT_GH_LABEL_MAX 50
#define PMBOT_GH_LABEL_DESC_MAX 100

/*
 * POST /repos/{o}/{r}/labels {"name", "color": "ededed", "description"}.
 * 0 created; PMBOT_GH_EEXISTS when the name is taken (decided on the
 * status and GitHub's error code, never its message); never retried, so
 * PMBOT_GITHUB_EUNKNOWN_OUTCOME means "read it back to know".
 */
PMBOT_WARN_UNUSED int pmbot_gh_label_create(pmbot_github_client *c, const char *repo,
	const char *name, const char *description, pmbot_buf *err);

/*
 * GET /repos/{o}/{r}/labels/{name}: `*description` gets its description
 * ("" when null; new string, caller frees). PMBOT_ENOTFOUND when there is
 * no such label.
 */
PMBOT_WARN_UNUSED int pmbot_gh_label_get(char **description, pmbot_github_client *c,
	const char *repo, const char *name, pmbot_buf *err);

/*
 * DELETE /repos/{o}/{r}/labels/{name} (repeat-safe, retried). 0 deleted,
 * PMBOT_ENOTFOUND when it was already gone (404).
 */
int pmbot_gh_label_delete(pmbot_github_client *c, const char *repo, const char *name,
	pmbot_buf *err);

/* ==== 4. The apply lock and the pull-request rules ======================= */

/*
 * Policy of `pm-bot action` that talks to GitHub (through the calls of part 3):
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

/* ==== 5. One run of pm-bot action ======================================== */

struct pmbot_github_client;

/*
 * One run of `pm-bot action`: the workflow event read and decided, then
 * planned, shown and (when approved) applied under the Action's rules
 * (docs/action.md, docs/security.md): approvals need the permission the
 * default branch's configuration asks for and a fresh plan hash; closed or
 * merged pull requests and a corrupt ledger refuse to apply; a fork's pull
 * request is shown in the job summary only and re-planned only for someone
 * with write permission; applies hold the apply lock (part 4).
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
