#ifndef PMBOT_PLAN_H
#define PMBOT_PLAN_H

#include <jansson.h>

#include "pmbot/buf.h"
#include "pmbot/source.h"
#include "pmbot/diag.h"
#include "pmbot/hash.h"
#include "pmbot/render.h"
#include "pmbot/state.h"
#include "pmbot/workgraph.h"

/*
 * Planning: WorkGraph + state + config -> ChangesetBundle v1
 * (docs/schemas/changeset-bundle.v1.schema.json), holding only the real
 * differences. Same inputs, same bytes.
 *
 * Bundle shape (canonical JSON):
 *   {"schema_version": "changeset_bundle/v1",
 *    "bundle_id": "bundle-<first 16 hex of plan_hash>",
 *    "plan_hash": "<64 hex>",
 *    "source": {...caller's object: commit, reports[{path, blob}], config_blob},
 *    "target": "OWNER/NAME",
 *    "changesets": [ {changeset_id, idempotency_key, operation, target,
 *                     payload, before?, after?, requires_approval, status} ],
 *    "fingerprint": [ {ref, node_id, updated_at} ... ] (every issue touched),
 *    "conflicts": [ {stable_id, ref, reason, expected_rev, actual_rev} ],
 *    "orphaned": [ {stable_id, ref} ],
 *    "diagnostics": [ {code, severity, file, path, line, column, message} ],
 *    "summary": {creates, updates, relationships, project, conflicts,
 *                orphaned, diagnostics, total}}
 *
 * A changeset's `target` is {"repo", "stable_id"} for items pm-bot manages
 * (never an issue number: numbers of issues created by the same plan are
 * unknown until apply, and the plan must stay the same across a resumed
 * apply); {"repo", "number"} for outside issues. Payloads per operation:
 *   create_issue        {title, body, labels[]}
 *   update_issue_title  {title}              before/after {title}
 *   update_issue_body   {body}               before/after {body}
 *   add_labels          {labels[]}
 *   remove_labels       {labels[]}
 *   set_parent          {parent: binding, replace: bool}   before {parent: ref|null}
 *   add_dependency      {blocker: binding}
 *   remove_dependency   {blocker: binding}
 *   add_to_project      {project: "OWNER/NUMBER"}
 *   set_project_field   {field, value}       before {value|null}
 *   set_issue_type      {issue_type}         before {issue_type|null}  (the
 *                       repository's name of the type, state extra.issue_types)
 * where a binding is {"repo", "stable_id"} or {"repo", "number"}.
 *
 * Order: creates, updates (title, body, labels, issue type), relationships (parents,
 * dependencies), project (items, then fields); within a group by
 * idempotency key. changeset_id is "cs-0001", … in that order.
 * idempotency_key: "<operation>:<OWNER>/<NAME>:<stable_id or #number>[:<first
 * 12 hex of sha256 of the canonical payload>]".
 * plan_hash: SHA-256 of the canonical JSON of {"changesets": […],
 * "fingerprint": […]}, so an apply can prove nothing it touches moved.
 */

typedef struct {
	const pmbot_workgraph *graph;   /* every report's items, merged */
	const pmbot_config *config;
	const pmbot_formset *forms;
	const pmbot_state *state;
	const char *target;             /* "OWNER/NAME" the items live in */
	const json_t *source;           /* borrowed, copied into the bundle; may be NULL */
	const char *self_login;         /* also trusted for markers; may be NULL */
} pmbot_plan_input;

/*
 * Build the bundle. Matching is by identity marker only, trusted only on
 * issues authored by config->trusted_authors or self_login
 * (MARKER_UNTRUSTED warning otherwise); two trusted issues with one marker
 * are DUPLICATE_MARKER and that item gets no changeset; a body whose rev no
 * longer matches (a human edited it) is a conflict, never overwritten;
 * only labels with a scheme prefix (and needs-human) are removed; only
 * dependencies pm-bot itself declared (listed under "Blocked by" in the
 * body it last wrote) are removed; managed issues whose stable_id is not
 * in the graph are orphaned, never closed. GitHub's limits (100 sub-issues
 * per parent, 8 levels, 50 dependencies each way, title and body sizes)
 * are checked against the planned end state: LIMIT_* errors.
 *
 * `*out` is the bundle (new reference) whenever the return is not
 * PMBOT_ERROR; plan errors are in the bundle's diagnostics and in `diags`,
 * and make the return PMBOT_EINVALID.
 */
int pmbot_plan_build(json_t **out, const pmbot_plan_input *in, pmbot_diag_list *diags);

/*
 * Is `label` pm-bot's to remove: it starts with one of `scheme`'s non-empty
 * prefixes, or is needs-human (ASCII case ignored, as GitHub compares label
 * names)? Every other label belongs to people. The planner and the
 * executor (pmbot_apply_rules_check) decide with this one function. 1 or 0.
 */
int pmbot_plan_label_owned(const pmbot_label_scheme *scheme, const char *label);

/*
 * Is `target` ("OWNER/NAME") a repository pm-bot may plan for? Callers ask
 * BEFORE reading anything of it (a report's scope names the target, so a
 * pull request could otherwise have the token read, and the plan show, a
 * private repository outside the allowlist). PMBOT_OK, or PMBOT_EINVALID
 * with a REPO_NOT_ALLOWED error in `diags` (a NULL target too);
 * PMBOT_ERROR when out of memory.
 */
PMBOT_WARN_UNUSED int pmbot_plan_check_target(const pmbot_config *config, const char *target,
	pmbot_diag_list *diags);

/* The plan_hash of `changesets` and `fingerprint` (see above). 0 or -1. */
int pmbot_plan_hash(char out[PMBOT_SHA256_HEX_SIZE], const json_t *changesets,
	const json_t *fingerprint);

/* Number of changesets in a bundle. */
size_t pmbot_plan_count(const json_t *bundle);

/*
 * The plan for humans (it becomes the pull-request comment), GitHub-
 * flavoured Markdown appended to `out` (which owns it, as always):
 *  - a title naming the target, a summary table (creates / updates /
 *    relationships / project / conflicts / orphaned / diagnostics; the
 *    bundle's `summary` where it has a count, else counted from the
 *    bundle), then "N changes to M issues" or **No changes**, and the
 *    number of errors when the diagnostics hold any;
 *  - "Changes": one <details> section per item (changesets grouped by
 *    target stable_id, or OWNER/NAME#N for outside issues, items in order
 *    of first appearance), each changeset a bullet with its id, operation
 *    and what it does; update_issue_body carries a ```diff block from
 *    pmbot_diff_unified (before.body -> after.body, 3 lines of context);
 *  - "Conflicts" (not overwritten), "Orphaned issues" (not closed),
 *    "Diagnostics" (severity, code, file:line and pointer, message);
 *  - the plan hash and, when there are changes and no error diagnostic,
 *    the exact approve command `/pm-bot apply <plan_hash>` in a code block
 *    ("Nothing to apply." / "cannot be approved" otherwise).
 * Text from the bundle is escaped (Markdown punctuation, HTML, `|` in
 * tables); code spans and fences are longer than any backtick run they
 * hold; a CR inside a diff shows as U+240D so it cannot end a line.
 *
 * Cut: `max_chars` (0: 65,536, GitHub's limit) counts Unicode code points
 * of the appended text, not bytes. When the whole plan is longer, whole
 * parts are dropped, never a piece of one (so no split UTF-8 sequence,
 * fence or <details>): the title, summary, headings, plan hash and a
 * note are reserved first; then conflicts, diagnostics and orphans are
 * kept in order while they fit, then items in order: in full, else with
 * their body diffs replaced by line counts, else the cut starts there and
 * every later item is left out. The note (a block quote before the hash)
 * says how many of each were left out and that the full plan is the JSON
 * bundle, named by `full_json_hint` (plain text shown as code, e.g. a
 * path; may be NULL). Only when `max_chars` is smaller than the reserved
 * parts (a few hundred characters) is the result longer than it.
 *
 * Same bundle, same bytes. 0, or PMBOT_ERROR when `bundle` is not an
 * object with a 64-lower-hex `plan_hash`, or on out of memory / `out`'s
 * cap; `out` is then left as it was.
 */
int pmbot_plan_markdown(pmbot_buf *out, const json_t *bundle, size_t max_chars,
	const char *full_json_hint);

/*
 * Append the plan `bundle` as plain text for a terminal to `out`: a head
 * line (target, and the state file or GitHub), then per item (in the
 * bundle's order of first appearance) its stable id, title, and one line a
 * change with a sigil: "+" added, "-" removed, "~" changed; a body change
 * as a unified diff with 1 line of context and without pm-bot's marker
 * line; field changes by field name. Then conflicts ("!"), orphans ("?"),
 * diagnostics, and a foot: the counts, the plan hash and the command that
 * applies it (`pm-bot apply --plan <plan_file or plan.json> --approve H` for
 * a plan against the state file). With `color`, SGR sequences colour the
 * sigils, the diff and the headings; without, the text has none. Outside
 * text goes through pmbot_log_escape(), so nothing in a bundle can emit a
 * control character. 0, or PMBOT_ERROR (`out` left as it was).
 */
int pmbot_plan_text(pmbot_buf *out, const json_t *bundle, const char *plan_file, int color);

/*
 * What an apply did, one line an item of `bundle` (the plan that ran) with
 * a changeset `results` (pmbot_apply_run()'s) says was applied: "created
 * OWNER/NAME#N STABLE_ID[ with parent, board, …]" or "updated STABLE_ID:
 * title, body, labels, …" (kinds in the order of the item's changesets).
 * Items with nothing applied get no line. Outside text is escaped as in
 * pmbot_plan_text(). 0, or PMBOT_ERROR (`out` left as it was).
 */
int pmbot_plan_results_text(pmbot_buf *out, const json_t *bundle, const json_t *results);

/*
 * Append a unified diff of two texts to `out`, as GNU `diff -u` writes it:
 * "--- a_name" / "+++ b_name" (NULL: "a" / "b", no dates), then hunks
 * "@@ -l,s +l,s @@" (",1" left out; an empty side is "l,0" with l the line
 * before) with `context` unchanged lines around changes (negative: 0);
 * changes at most 2 * context lines apart share a hunk, and removed lines
 * come before added ones. Nothing is appended when the texts are equal.
 * Lines end at '\n' only (a CR is ordinary content, so CRLF and LF lines
 * differ); a last line without '\n' is followed by
 * "\ No newline at end of file". `a`/`b` may be NULL when their length is 0.
 *
 * Myers' O((N+M)·D) algorithm in linear space (memory O(N+M) lines), so
 * the diff is minimal, up to a bound of 2^22 steps: past it the region
 * between the common leading and trailing lines becomes one replace hunk,
 * which keeps two 65,536-character bodies cheap whatever they hold. The
 * bound counts steps, not time: the output is deterministic.
 * 0, or PMBOT_ERROR (out of memory, `out`'s cap; `out` left as it was).
 */
int pmbot_diff_unified(pmbot_buf *out, const char *a, size_t a_len, const char *b,
	size_t b_len, const char *a_name, const char *b_name, int context);

/* ------------------------------------------------------------------ */
/* What pm-bot manages (src/plan/managed.c)                            */
/* ------------------------------------------------------------------ */

/* One issue pm-bot manages: it carries a well-formed marker written by a trusted author. */
typedef struct {
	const pmbot_issue *issue;  /* borrowed from the state */
	char *stable_id;           /* owned: the marker's id */
	int edited;                /* the body's text no longer matches the marker's rev: a
	                              person edited it (the planner's conflict) */
	int duplicate;             /* another managed issue of the same repository carries the
	                              same id (DUPLICATE_MARKER: the planner leaves it alone) */
	const pmbot_pitem *item;   /* borrowed: its item on the state's board, NULL if none */
} pmbot_managed_issue;

/*
 * The issues of `st` that pm-bot manages, in the state's order (repository,
 * then number), by the planner's rules: a repository of config's `repos`
 * allowlist, a well-formed marker, an author config trusts or `self_login`
 * (may be NULL). `*out` is a new array of `*n` entries the caller frees
 * with pmbot_plan_managed_free(); it borrows from `st`, which must outlive
 * it. 0, or PMBOT_ERROR (out of memory; `*out` NULL).
 */
PMBOT_WARN_UNUSED int pmbot_plan_managed(pmbot_managed_issue **out, size_t *n,
	const pmbot_state *st, const pmbot_config *config, const char *self_login);

/* The first entry of `list` whose stable id is `id` (borrowed), or NULL. */
const pmbot_managed_issue *pmbot_plan_managed_find(const pmbot_managed_issue *list, size_t n,
	const char *id);

/* Free what pmbot_plan_managed() returned. NULL is allowed. */
void pmbot_plan_managed_free(pmbot_managed_issue *list, size_t n);

/*
 * A managed issue as `state list|show --format json` prints it: `*out` is
 * a new object (the caller's), {"stable_id", "issue" (its ref), "state":
 * "open"|"closed", "title", "on_board", "edited", "duplicate"}; with
 * `full` also "labels", "parent", "blocked_by", "issue_type" (null when
 * none) and "board" (the item's values, null when not on the board).
 * 0, or PMBOT_ERROR (`*out` NULL).
 */
int pmbot_plan_managed_to_json(json_t **out, const pmbot_managed_issue *m, int full);

#endif
