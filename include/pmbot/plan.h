#ifndef PMBOT_PLAN_H
#define PMBOT_PLAN_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/source.h"
#include "pmbot/diag.h"
#include "pmbot/hash.h"
#include "pmbot/render.h"
#include "pmbot/state.h"
#include "pmbot/workgraph.h"

/*
 * The public header of src/plan/, in three parts:
 *  1. planning: WorkGraph + state + config -> ChangesetBundle v1,
 *  2. a plan file read back (pmbot_bundle_load), hostile until checked,
 *  3. Projects v2 field sync, the plan of the scheduled run.
 * The plan's inputs under a run's rules are in pmbot/inputs.h, which also
 * fills the apply check's start (pmbot/apply.h) and so stays apart.
 */

/* ==== 1. Planning ======================================================= */

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
	pmbot_buf *canonical;           /* borrowed, may be NULL: gets the bundle's
					 * canonical JSON appended (pmbot_json_canonical's
					 * bytes), serialised with the plan hash */
	int lean;                       /* with `canonical`: `*out` has no "changesets"
					 * member (they are in the bytes only), which
					 * keeps a large plan's memory to its text */
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

/* ==== 2. A plan file read back ========================================== */

/*
 * A ChangesetBundle v1 read back from a file (a plan `pm-bot plan --out`
 * wrote, a proposal of `pm-bot advise`, an approved plan the Action kept in
 * its cache): hostile input until checked. pmbot_bundle_check() holds it
 * to the shape every reader relies on (docs/schemas/
 * changeset-bundle.v1.schema.json, the parts pm-bot reads), so that apply,
 * the staleness check and the Action read typed values, never NULL where a
 * string was expected:
 *
 *   schema_version  "changeset_bundle/v1"
 *   plan_hash       64 lower-case hex
 *   target          "OWNER/NAME" (no whitespace, one '/')
 *   source          object; kind and config_blob strings, commit a string
 *                   or null, backend {kind: "file"|"github", state:
 *                   string}, reports [{path: non-empty string, blob:
 *                   string}], each optional
 *   changesets      array of {changeset_id, idempotency_key (non-empty),
 *                   operation (pmbot_operation_parse()), status: strings;
 *                   requires_approval: boolean; target: {repo: string and
 *                   stable_id (non-empty string) or number (integer >= 1)};
 *                   payload: object; before, after: objects when present}
 *   fingerprint     array of {ref, node_id, updated_at}: strings
 *   conflicts       array of objects with stable_id a string (optional)
 *   orphaned, diagnostics  arrays (optional); summary an object (optional)
 *
 * Other members are left alone (they are not read). Whether plan_hash is
 * the hash of the changesets and fingerprint is the staleness check's
 * question (pmbot_apply_check()), not the loader's.
 */

/* A plan file larger than this is refused before it is parsed. */
#define PMBOT_BUNDLE_MAX_BYTES ((size_t)256 << 20)

/*
 * Check `bundle` as above. Each fault is one diagnostic PLAN_INVALID
 * (error) with the JSON Pointer of the member at fault and what it must
 * be; at most 20 are listed, the first fault of each changeset or entry.
 * PMBOT_OK, PMBOT_EINVALID (faults listed), PMBOT_ERROR (out of memory).
 */
PMBOT_WARN_UNUSED int pmbot_bundle_check(const json_t *bundle, pmbot_diag_list *diags);

/*
 * Parse `len` bytes of JSON text (duplicate keys refused) and check the
 * result. `*out` receives the bundle (owned by the caller: json_decref())
 * on PMBOT_OK and is NULL otherwise. Not JSON: PLAN_INVALID with the line
 * and column jansson reports. PMBOT_OK, PMBOT_EINVALID, PMBOT_ERROR.
 */
PMBOT_WARN_UNUSED int pmbot_bundle_parse(json_t **out, const char *text, size_t len,
	pmbot_diag_list *diags);

/*
 * pmbot_bundle_parse() of the file at `path` (at most
 * PMBOT_BUNDLE_MAX_BYTES; diagnostics name `path` as their file).
 * PMBOT_ENOTFOUND when there is no such file, PMBOT_ERROR when it cannot
 * be read (both with a diagnostic PLAN_READ), else as pmbot_bundle_parse().
 */
PMBOT_WARN_UNUSED int pmbot_bundle_load(json_t **out, const char *path, pmbot_diag_list *diags);

/*
 * pmbot_bundle_load() that also leaves the file's bytes in `text` (an
 * initialised buffer, emptied first), whatever the outcome: a caller that
 * needs the bundle again later can parse those bytes again instead of
 * holding the parsed tree, five times their size, or reading a file that
 * may have changed since.
 */
PMBOT_WARN_UNUSED int pmbot_bundle_load_text(json_t **out, pmbot_buf *text, const char *path,
	pmbot_diag_list *diags);

/*
 * Typed reads of a bundle pmbot_bundle_check() accepted (borrowed from it;
 * NULL when the optional member is absent or null).
 */
const char *pmbot_bundle_plan_hash(const json_t *bundle);
const char *pmbot_bundle_target(const json_t *bundle);
const char *pmbot_bundle_source_kind(const json_t *bundle);    /* "proposal", ... */
const char *pmbot_bundle_source_commit(const json_t *bundle);
const char *pmbot_bundle_backend_kind(const json_t *bundle);   /* "file" | "github" */
const char *pmbot_bundle_backend_state(const json_t *bundle);
size_t pmbot_bundle_report_count(const json_t *bundle);
const char *pmbot_bundle_report_path(const json_t *bundle, size_t i);

/*
 * Does the plan show drift (what `pm-bot plan --detailed-exitcode` exits 3
 * for)? 1 when it has a changeset or a standing conflict, 0 when there is
 * nothing to do: a conflict is drift too, since "nothing to do" would hide
 * it. `bundle` is borrowed; NULL is 0.
 */
int pmbot_bundle_has_drift(const json_t *bundle);

/* ==== 3. Projects v2 field sync ========================================= */

/*
 * Projects v2 field sync: the scheduled / workflow_dispatch run of
 * `pm-bot action`. It needs no report: every managed issue's project field
 * values come from the issue itself (its labels, then its body's
 * "### Heading" values), and the plan writes them onto the board. The
 * result is a ChangesetBundle v1 (include/pmbot/plan.h) holding only
 * add_to_project and set_project_field changesets, built with the
 * planner's own code for ids, idempotency keys, ordering, denied and
 * auto-approved operations, fingerprint and plan_hash, so
 * pmbot_apply_check() and pmbot_apply_run() take it like any plan.
 *
 * Managed issues: the issues, open AND closed (a closed item's Status is
 * still shown on the board), of the synced repositories whose body has one
 * well-formed pm-bot marker and whose author is trusted
 * (config->trusted_authors, or self_login), exactly as the planner decides:
 * an untrusted author's marker is a MARKER_UNTRUSTED warning and the issue
 * is ignored; two trusted issues of one repository with the same marker are
 * a DUPLICATE_MARKER warning and neither is synced.
 *
 * Derivation, per managed issue and per board field (field names compare
 * ASCII case-insensitively; a field the board does not have is skipped
 * silently):
 *
 *   board field      label (config scheme)   body heading       value
 *   Area             area: ("area:")         Area               text
 *   Priority         prio: ("prio:")         Priority           text
 *   Size             size: ("size:")         Size               text
 *   Status           status: ("status:")     Status             text
 *   Estimate (hrs)   -                       Estimate (hrs)     hours
 *   Risk             -                       Risk               text
 *   Blocked by       -                       Blocked by         text
 *   Actual (hrs)     -                       Actual (hrs)       hours
 *
 *  - A label beats a heading. A label counts when it starts with the
 *    scheme prefix (ASCII case-insensitive; an empty prefix never counts)
 *    and something follows it: "prio:P1" gives "P1", the value the planner
 *    writes for priority P1. Labels of one prefix with values that differ
 *    beyond ASCII case are a FIELDSYNC_LABEL_CONFLICT warning and that
 *    field is left alone for the issue (neither label nor heading is used).
 *  - A heading counts when pmbot_form_heading_kind() maps it to the field
 *    ("Estimate (hours)", "Depends on", ...) or pmbot_body_heading_eq()
 *    equals it to the field's name ("Size (Epic)"); the first such heading
 *    of the body is used; its value is pmbot_body_parse()'s (first line,
 *    "_No response_" is empty).
 *  - Hours go through pmbot_body_parse_hours() ("4", "4.5", "~4", "4 hrs",
 *    "4h") and are written as reals; anything else is a
 *    FIELDSYNC_BAD_NUMBER warning (file: the issue ref, line: the heading's
 *    line in the body) and the field is left alone.
 *  - As in the planner, triage defaults are for people to fill in: on an
 *    issue labelled needs-human, Area "triage" and Priority "Triage" are
 *    not synced.
 *  - An empty or missing value never clears a field.
 *  - Types: text values go to single-select fields (matched to the first
 *    option equal ignoring ASCII case, written with the option's exact
 *    name) and text fields; hours go to number fields. A board field of
 *    another type is never written: one FIELDSYNC_FIELD_TYPE warning per
 *    field per plan.
 *  - A text value that is no option of a single-select field is a
 *    PROJECT_UNKNOWN_OPTION error (file: the issue ref; line: the heading's
 *    line, 0 for a label; the message names the options that exist and
 *    where the value came from); that field gets no changeset, the rest of
 *    the plan is still built.
 *
 * The derived value is compared with the item's current value on the board
 * (numbers by value, options and text exactly): only a difference is a
 * set_project_field {field: the board's name, value}, before {value or
 * null}. A managed issue that is not on the board gets add_to_project
 * {project: "OWNER/NUMBER"} first, then every derived value. When the
 * config denies add_to_project, such an issue gets no field changesets
 * either (they could not land), and OPERATION_DENIED counts the
 * add_to_project.
 *
 * Targets are {"repo", "stable_id"}, the repo spelled as in `repos` (as the
 * planner spells its target), so pmbot_apply_run() resolves them by
 * trusted marker. The bundle's `target` is repos[0]; `fingerprint` lists
 * every issue that has a changeset; `conflicts` and `orphaned` are empty;
 * `summary.project` equals `summary.total`. Same input, same bytes: the
 * order of issues, labels and items in the state document changes nothing.
 */

typedef struct {
	const pmbot_config *config;     /* required: scheme, trust, repos allowlist, project */
	/*
	 * Issues of the synced repositories and the board. NULL (nothing was
	 * read) is the NO_PROJECT error.
	 */
	const pmbot_state *state;
	/*
	 * "OWNER/NAME" of the repositories whose managed issues are synced
	 * (case-insensitive; a name given twice is synced once). n_repos 0:
	 * every repository of config->repos. One not in config->repos is a
	 * REPO_NOT_ALLOWED error and its issues are not synced.
	 */
	const char *const *repos;
	size_t n_repos;
	const json_t *source;           /* borrowed, deep-copied into the bundle; may be NULL ({}) */
	const char *self_login;         /* also trusted for markers; may be NULL */
} pmbot_fieldsync_input;

/*
 * Build the field sync bundle described above. The project is config's
 * (project.owner/number); when the config names none, or the state is NULL
 * or holds another project or none, that is a NO_PROJECT error and the
 * bundle has no changesets.
 *
 * Same return contract as pmbot_plan_build(): `*out` is the bundle (a new
 * reference the caller owns) whenever the return is not PMBOT_ERROR; the
 * diagnostics are added to `diags` (which is sorted) and copied into the
 * bundle; an error among them makes the return PMBOT_EINVALID, else
 * PMBOT_OK. PMBOT_ERROR (and `*out` NULL) when out of memory, or when the
 * arguments are unusable: `in`, `in->config` or `diags` NULL, or no
 * repository to sync at all (n_repos 0 and an empty allowlist: the bundle
 * would have no target).
 */
int pmbot_fieldsync_build(json_t **out, const pmbot_fieldsync_input *in, pmbot_diag_list *diags);

/*
 * The changeset ids of `bundle` (borrowed) that `config`'s auto_approve
 * lets run without an approval, in bundle order: `*out` is a new array the
 * caller owns. A set_project_field of an issue whose add_to_project is in
 * the bundle and not pre-approved itself is left out: the value could not
 * land before the issue is on the board, so it waits with the
 * add_to_project for a person's approval. 0, or PMBOT_ERROR (`*out` NULL)
 * when out of memory.
 */
PMBOT_WARN_UNUSED int pmbot_fieldsync_auto_approved(json_t **out, const json_t *bundle,
	const pmbot_config *config);

#endif
