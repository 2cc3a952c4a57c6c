#ifndef PMBOT_COMMENT_H
#define PMBOT_COMMENT_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/diag.h"
#include "pmbot/workgraph.h"

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

#endif
