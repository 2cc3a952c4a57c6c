#ifndef PMBOT_APPLY_H
#define PMBOT_APPLY_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/source.h"
#include "pmbot/diag.h"
#include "pmbot/hash.h"
#include "pmbot/state.h"

/*
 * Applying an approved ChangesetBundle (include/pmbot/plan.h): approval
 * checks, compilation to the apply flow, execution, and the audit ledger.
 * docs/apply.md describes it for users.
 *
 * Managed issues are found by their identity marker (pmbot_body_parse) on
 * issues whose author `config` trusts (pmbot_config_author_trusted); a
 * NULL config trusts only the default, github-actions[bot]. A caller that
 * also trusts the token's own login (the planner's self_login) adds it to
 * config->trusted_authors first.
 */

/*
 * Decide whether a fresh plan may execute under the approval of `approved`
 * (the bundle a human approved by its plan_hash). Both bundles' plan_hash
 * must be the SHA-256 of their own changesets and fingerprint (plan.h's
 * rule), so an edited plan file is refused (PLAN_HASH_MISMATCH; a bundle
 * without plan_hash or changesets[] is BUNDLE_INVALID). Then:
 *  - same plan_hash: everything is approved;
 *  - a resumed apply: every changeset of `fresh` is in `approved` with the
 *    same idempotency key, operation, target and payload (changeset ids may
 *    differ: they are renumbered), `fresh` has no conflict `approved` did
 *    not have (compared whole), and every approved changeset missing from
 *    `fresh` is visibly applied in `state` (pmbot_changeset_is_applied
 *    with `config`): the approval still holds for what is left;
 *  - anything else is stale: PMBOT_EINVALID with one STALE_PLAN diagnostic
 *    naming the first difference (path: /changesets/N or /conflicts/N).
 * Returns PMBOT_OK when `fresh` may run, PMBOT_ERROR when out of memory.
 * Costs O(issues + changesets).
 */
int pmbot_apply_check(const json_t *approved, const json_t *fresh, const pmbot_state *state,
	const pmbot_config *config, pmbot_diag_list *diags);

/*
 * pmbot_apply_check() in two steps, for a caller that plans again after
 * reading the approved plan: the approved changesets are needed only when
 * the two plan_hash differ (a resumed apply), so they need not be held
 * while the fresh plan is made (for 25,544 changesets, 60 MB of tree).
 *
 * pmbot_apply_check_bundle() makes the checks pmbot_apply_check() makes of
 * each bundle alone, with the same diagnostics, `which` ("approved",
 * "fresh") naming it in them: a ChangesetBundle (BUNDLE_INVALID) whose
 * plan_hash is its own (PLAN_HASH_MISMATCH). PMBOT_OK, PMBOT_EINVALID,
 * PMBOT_ERROR (out of memory).
 *
 * pmbot_apply_check_fresh() is the rest, for an `approved` that
 * pmbot_apply_check_bundle() passed and whose changesets may have been
 * deleted since, `text` (`len` bytes) being the plan file it was parsed
 * from: `fresh` checked alone, then, its plan_hash approved's, PMBOT_OK;
 * otherwise `text` is parsed again (it must give the same plan_hash, else
 * STALE_PLAN) and held against `fresh` by pmbot_apply_check(). Returns and
 * diagnostics as pmbot_apply_check()'s.
 */
int pmbot_apply_check_bundle(const json_t *bundle, const char *which, pmbot_diag_list *diags);
int pmbot_apply_check_fresh(const json_t *approved, const char *text, size_t len,
	const json_t *fresh, const pmbot_state *state, const pmbot_config *config,
	pmbot_diag_list *diags);

/*
 * The planner's rules, held against every bundle whatever wrote it (the
 * planner, the field sync, a model's proposal, a hand-edited file), so
 * that nothing applied does what a plan never does. Each changeset of
 * `changesets` is checked against `state`, markers trusted as `config`
 * says (the caller adds the token's own login first, as for the index):
 *  - ISSUE_NOT_MANAGED: an operation other than create_issue whose target,
 *    or set_parent's parent (GitHub writes the parent too), is named by
 *    number and is not an issue pm-bot manages: it does not exist, its
 *    author is not trusted, it has no well-formed marker, or another
 *    trusted issue carries the same marker. A target named by stable id
 *    only ever resolves to a managed issue (or fails at execution).
 *    Blockers may be any issue, as in plans.
 *  - LABEL_NOT_OWNED: remove_labels of a label outside pm-bot's scheme
 *    (pmbot_plan_label_owned(): labels people set are never removed).
 *  - BODY_EDITED: update_issue_body of an issue whose current body no
 *    longer matches its marker's rev: a person edited it, the planner's
 *    conflict, never overwritten.
 *  - MARKER_INVALID: the body of create_issue or update_issue_body does
 *    not carry exactly pm-bot's rendering of the marker for that item: one
 *    well-formed marker, naming the item (create_issue: target.stable_id,
 *    which it must have; update_issue_body: the managed issue's stable
 *    id), whose rev is the body's own (pmbot_body_rev). So no write
 *    creates, moves, forges or removes a marker.
 * A malformed changeset passes: the executor refuses it (UNKNOWN_OPERATION,
 * BAD_BINDING, BAD_PAYLOAD). pmbot_apply_run() applies the same rules to
 * every selected changeset before its first write.
 * Every violation is an error diagnostic (path /changesets/N) in `diags`.
 * PMBOT_OK, PMBOT_EINVALID when any rule is broken, PMBOT_ERROR when out of
 * memory or an argument is missing. O(issues + changesets).
 */
int pmbot_apply_rules_check(const json_t *changesets, const pmbot_state *state,
	const pmbot_config *config, pmbot_diag_list *diags);

/*
 * The fingerprint of a proposal: {ref, node_id, updated_at} of every
 * existing issue `changesets` touch (each target, by number or by stable
 * id through trusted markers; set_parent's parent; the blocker of
 * add_dependency / remove_dependency), sorted by ref. `*out` is a new
 * array the caller owns. 0 or PMBOT_ERROR.
 */
int pmbot_proposal_fingerprint(json_t **out, const json_t *changesets, const pmbot_state *state,
	const pmbot_config *config);

/*
 * A model's issue_adjustment_proposal answer (`answer`, already checked
 * against the capability's schema) as a ChangesetBundle v1 for `target`
 * (OWNER/NAME), marked with `source` (borrowed; {"kind": "proposal", …}):
 *  - the body of create_issue and update_issue_body is pm-bot's rendering
 *    of the model's text: the text, a blank line and pm-bot's marker for
 *    the item (create_issue's target.stable_id, else the managed issue's),
 *    with the text's own rev. A marker line in the model's text is refused
 *    (MARKER_INVALID): only pm-bot writes markers;
 *  - before (and after) values from `state` as plan.h gives them, so the
 *    reviewer sees the same Markdown (pmbot_plan_markdown) as for a plan;
 *  - changeset ids "cs-0001"…, idempotency keys (plan.h's shape, with the
 *    payload's hash), requires_approval true, status "proposed";
 *  - pmbot_proposal_fingerprint() and the plan_hash over both; bundle_id
 *    "proposal-<16 hex>"; summary {total, diagnostics: 0}.
 * Then pmbot_apply_rules_check(): a proposal apply would refuse is refused
 * now, with the same diagnostics; and the bundle must pass the plan loader
 * (pmbot_bundle_check(), PLAN_INVALID), so apply can read what advise wrote. `*out` (new, the caller's) is set only on
 * PMBOT_OK; PMBOT_EINVALID with diagnostics in `diags`; PMBOT_ERROR when
 * out of memory or `answer` has no changesets[].
 */
int pmbot_proposal_bundle(json_t **out, const json_t *answer, const pmbot_state *state,
	const pmbot_config *config, const char *target, const json_t *source,
	pmbot_diag_list *diags);

/*
 * May the proposal `bundle` (source.kind "proposal": it has no reports to
 * plan again) run against `state`? Its plan_hash must be its own
 * (PLAN_HASH_MISMATCH; BUNDLE_INVALID without plan_hash, changesets[] or
 * fingerprint[], or with a fingerprint entry that is not {ref, node_id,
 * updated_at} strings); every fingerprinted issue must still exist with
 * the same node_id and updated_at; and every issue the bundle touches now
 * (as pmbot_proposal_fingerprint() counts them, markers trusted as
 * `config` says) must be in its fingerprint, so an issue named by stable
 * id, a parent or a blocker edited since cannot slip through. Anything
 * else is STALE_PLAN (path /fingerprint). One error diagnostic in `diags`.
 * PMBOT_OK, PMBOT_EINVALID, PMBOT_ERROR when out of memory.
 */
int pmbot_apply_check_proposal(const json_t *bundle, const pmbot_state *state,
	const pmbot_config *config, pmbot_diag_list *diags);

/*
 * Is changeset `cs` already true in `state`?
 *   create_issue        a trusted issue in target.repo carries the marker
 *                       (one or more: a second create would be wrong either way)
 *   update_issue_title  the title is payload.title, byte for byte
 *   update_issue_body   the body is payload.body, byte for byte
 *   add_labels          every label present (names compare case-insensitively,
 *                       as GitHub does)
 *   remove_labels       no label present
 *   set_parent          the parent is payload.parent
 *   add_dependency      payload.blocker is in blocked_by
 *   remove_dependency   payload.blocker is not in blocked_by
 *   add_to_project      the state's project is payload.project and has an
 *                       item for the issue
 *   set_project_field   the item's value of the field (looked up by name,
 *                       case-insensitively) equals payload.value: numbers by
 *                       value, single-select option names case-insensitively,
 *                       other strings exactly; null means unset
 * A target or binding that does not resolve (no trusted marker, two trusted
 * issues with the marker, no such number) is not applied. Builds a marker
 * index of the whole state on every call (O(issues)); the executor and
 * pmbot_apply_check build it once. 1 yes, 0 no (also for malformed input).
 */
int pmbot_changeset_is_applied(const json_t *cs, const pmbot_state *state,
	const pmbot_config *config);

/*
 * The apply flow: the bundle compiled into a Flow IR 1.0.0 document (spec
 * 001; docs/schemas/apply-flow.v1.schema.json):
 *   {"version":"1.0.0",
 *    "flow":{"name":"pm-bot.apply.<bundle_id>","timeout_ms":<sum of the
 *            nodes' worst cases, capped at 2^31-1>},
 *    "constants":{"policyRef":"pm-bot.yml#<16 hex of the policy's SHA-256>",
 *                 "policy":<pmbot_config_to_json(config), {} when NULL>},
 *    "inputs_schema":{},
 *    "graph":{"nodes":[{id, type, with, timeout_ms, retry:{max, backoff_ms}}],
 *             "edges":[{from, to, on:"success"}]},
 *    "metadata":{generated_at, source_file, bundle_id, plan_hash}}
 * One node per changeset, in bundle order: id = changeset_id, type
 * "github.<operation>", with = {idempotency_key, operation, target,
 * payload} (deep copies), timeout_ms 30000; a success edge from each node
 * to the next. Only operations that are safe to repeat (every one but
 * create_issue; spec 002's purity rule) get retry {max 2, backoff_ms 1000};
 * creates and unknown operations get {0, 0}. Unknown operations compile
 * (the executor denies them, audited). `source_file` NULL or "" is "-".
 * `generated_at` is $PMBOT_NOW (which must be RFC 3339 UTC) or the clock;
 * everything else is a function of the inputs.
 * `*out` is a new reference the caller owns. PMBOT_EINVALID when `bundle`
 * has no bundle_id, no changesets[] or a changeset without an operation
 * string; PMBOT_ERROR when out of memory or PMBOT_NOW is malformed.
 */
int pmbot_flow_compile(json_t **out, const json_t *bundle, const pmbot_config *config,
	const char *source_file);

/*
 * Validate a flow document against spec 001's rules, reporting every
 * problem as an error with its JSON Pointer: FLOW_VERSION (not
 * major.minor.patch, or a major other than 1), FLOW_MISSING (a required
 * member), FLOW_TYPE (wrong JSON type), FLOW_EMPTY_STRING (any empty string
 * outside the opaque constants.policy, inputs_schema and nodes' `with`),
 * FLOW_ID (flow.name or a node id not matching ^[a-zA-Z0-9_.-]+$),
 * FLOW_DUPLICATE_ID, FLOW_NO_NODES, FLOW_EDGE_REF (an edge end naming no
 * node), FLOW_EDGE_ON (`on` not success|failure), FLOW_RANGE (timeout_ms,
 * retry.max, retry.backoff_ms not an integer in 0..2^31-1), FLOW_TIMESTAMP
 * (generated_at not RFC 3339 UTC), FLOW_CYCLE (the message names the
 * cycle, "a -> b -> a"), FLOW_RETRY_UNSAFE (retry.max > 0 on a type that is
 * not "github.<operation safe to repeat>"). Unknown members are ignored.
 * PMBOT_OK, PMBOT_EINVALID, or PMBOT_ERROR when out of memory.
 */
int pmbot_flow_validate(const json_t *flow, pmbot_diag_list *diags);

/*
 * Audit ledger: JSON Lines. Each line is the canonical JSON (json.h) of one
 * event object holding the caller's fields plus
 *   "event"  proposal | approval | denial | attempt | success | failure |
 *            dead_letter | capability_run (a Mode B model call, docs/llm.md) |
 *            pause (the write budget stopped the run; docs/apply.md)
 *   "seq"    1-based line number
 *   "at"     RFC 3339 UTC ($PMBOT_NOW fixes it)
 *   "prev"   hex SHA-256 of the previous line's bytes without its newline;
 *            64 zeros on the first line
 * so that editing, removing, inserting or reordering any line but the last
 * breaks the chain, unless whoever edits recomputes every later line too.
 * The chain alone proves only that the file is consistent; that it is the
 * ledger that was written, extended only by appends, is proven against a
 * head published earlier (pmbot_audit_head, pmbot_audit_verify_head):
 * see docs/apply.md, "What the chain proves".
 */
typedef struct pmbot_audit pmbot_audit;

/*
 * Open (create, with missing parent directories) the ledger at `path` for
 * appending; the chain continues from its last line. The file is locked
 * (flock) while open. `*out` is new; pmbot_audit_close() frees it.
 * PMBOT_EINVALID when the existing chain is broken (AUDIT_BROKEN, as
 * pmbot_audit_verify), another process holds the ledger (AUDIT_LOCKED) or
 * $PMBOT_NOW is malformed (AUDIT_CLOCK); PMBOT_ERROR on I/O failure
 * (AUDIT_IO). `*out` is NULL on failure.
 */
PMBOT_WARN_UNUSED int pmbot_audit_open(pmbot_audit **out, const char *path, pmbot_diag_list *diags);

/* Close the ledger and free `audit`. NULL is a no-op. */
void pmbot_audit_close(pmbot_audit *audit);

/*
 * Open the ledger at `path`, append one event and close it: what a command
 * that records a single event does (`pm-bot plan --audit`, the LLM
 * commands). `fields` is borrowed, as for pmbot_audit_append(). 0; the
 * returns and diagnostics of pmbot_audit_open() and pmbot_audit_append().
 */
PMBOT_WARN_UNUSED int pmbot_audit_record(const char *path, const char *event, const json_t *fields,
	pmbot_diag_list *diags);

/*
 * Append to `out` the path of a repository's own ledger, where the LLM
 * commands record their runs: `repo_dir` (NULL: ".") + "/.pm-bot/audit.jsonl".
 * 0, or the error of pmbot_buf_printf().
 */
int pmbot_audit_repo_path(pmbot_buf *out, const char *repo_dir);

/*
 * The fields of a "proposal" event for the plan `bundle` (borrowed):
 * {"plan_hash": its plan_hash, "changesets": how many it has}. A new
 * object the caller owns; NULL when out of memory or when the bundle has
 * no plan_hash.
 */
json_t *pmbot_audit_proposal_fields(const json_t *bundle);

/*
 * Append one event: `fields` (borrowed; an object or NULL; it must not hold
 * the keys event, seq, at or prev) plus the four chain members. Written
 * with one write() on an O_APPEND descriptor and fsync'd before returning,
 * so a crash never loses an event that was reported done; a failed write is
 * truncated away. 0; PMBOT_EINVALID for an unknown event or bad `fields`;
 * PMBOT_ERROR on I/O failure.
 */
PMBOT_WARN_UNUSED int pmbot_audit_append(pmbot_audit *audit, const char *event, const json_t *fields);

/*
 * Group commit (the executor, for a backend with hold and commit): after
 * pmbot_audit_hold(), appends build the chain in memory only, and
 * pmbot_audit_flush() writes every line held with one write() and one
 * fsync, so a group of changesets costs one fsync instead of two each.
 * Lines are the same bytes, in the same order, as without holding; what is
 * held is lost with the process, so hold only lines the caller may lose
 * (the executor holds a group's events until the state they describe is
 * on disk). pmbot_audit_flush() ends the hold: PMBOT_OK (also when nothing
 * is held), or PMBOT_ERROR when the write failed, the file cut back and
 * the lines dropped. pmbot_audit_discard() drops the held lines and
 * rewinds the chain to the file's last line. pmbot_audit_head() counts
 * held lines; pmbot_audit_close() discards them. NULL is a no-op for each.
 */
void pmbot_audit_hold(pmbot_audit *audit);
PMBOT_WARN_UNUSED int pmbot_audit_flush(pmbot_audit *audit);
void pmbot_audit_discard(pmbot_audit *audit);

/*
 * The SHA-256 of the ledger's last line (64 zeros when empty) and, when
 * `lines` is not NULL, how many lines it has: the head to publish where the
 * ledger's writer cannot change it later (the plan comment, the job
 * summary), for pmbot_audit_verify_head() to check against.
 */
void pmbot_audit_head(char out[PMBOT_SHA256_HEX_SIZE], size_t *lines, const pmbot_audit *audit);

/*
 * Verify a ledger's chain. `*lines` (may be NULL) gets the number of lines
 * when it holds. PMBOT_OK; PMBOT_EINVALID with one AUDIT_BROKEN diagnostic
 * (file `path`, `line` = the first broken line, 1-based, path the member
 * at fault) saying why: not a JSON object, not canonical JSON, prev not the
 * SHA-256 of the line before, seq not the line number, unknown event, bad
 * `at`, or a last line without its newline (a cut-off write); PMBOT_ERROR
 * with AUDIT_IO when the file cannot be read.
 */
int pmbot_audit_verify(const char *path, size_t *lines, pmbot_diag_list *diags);

/*
 * pmbot_audit_verify(), and the head: `head` (may be NULL) gets the SHA-256
 * of the last line (64 zeros for an empty ledger, and on failure).
 *
 * With `expect` (may be NULL), a head published earlier (64 hex digits, any
 * case), the ledger must also hold the line whose SHA-256 it is: since each
 * line holds the hash of the one before, that line fixes every line up to
 * it, so the ledger is what it was when the head was published, plus
 * appended lines. `*expect_line` (may be NULL) gets that line's number (0
 * for 64 zeros, the empty ledger's head). A ledger rewritten before that
 * line and re-chained is PMBOT_EINVALID with one AUDIT_HEAD diagnostic (as
 * is an `expect` that is not 64 hex digits, before the file is read).
 *
 * PMBOT_OK; PMBOT_EINVALID (AUDIT_BROKEN or AUDIT_HEAD); PMBOT_ERROR
 * (AUDIT_IO, or out of memory).
 */
PMBOT_WARN_UNUSED int pmbot_audit_verify_head(char head[PMBOT_SHA256_HEX_SIZE], size_t *lines,
	size_t *expect_line, const char *path, const char *expect, pmbot_diag_list *diags);

/*
 * Callbacks for the command line and for tests (e.g. a kill -9 between
 * changesets). Every member may be NULL.
 */
typedef struct {
	/* Called before each selected changeset is looked at; nonzero stops the run. */
	int (*before)(void *ctx, const json_t *changeset);
	/*
	 * Called once a changeset's outcome is durable (the backend has written
	 * it and its audit event is fsync'd): status applied, already_applied,
	 * denied or failed.
	 */
	void (*after)(void *ctx, const json_t *changeset, const char *status);
	/* Waits between retries; NULL sleeps for real (nanosleep). */
	void (*sleep_ms)(void *ctx, long ms);
	void *ctx;
	/*
	 * Group commit only: called once a group's `n` changesets are in the
	 * backend's store and before their audit events are written (a test's
	 * kill -9 there leaves a state the ledger does not describe yet).
	 */
	void (*committed)(void *ctx, size_t n);
} pmbot_apply_hooks;

/* Most changesets (set_project_field, or edges) the executor hands a backend's perform_batch at once. */
#define PMBOT_APPLY_BATCH_MAX 50

/*
 * Most changesets one group commit holds (a backend with hold and commit):
 * the state is written once per group, so a 30,000-changeset apply writes
 * it 8 times instead of 30,000. What a kill -9 loses is at most one
 * group's work in memory, which the next run does again.
 */
#define PMBOT_APPLY_GROUP_MAX 4096

/*
 * Execute `bundle`'s changesets that are in `run` (an array of changeset
 * ids, every one of which must be in the bundle; NULL: all) in bundle
 * order through `backend`, after compiling and validating the flow.
 *
 * 1. Denials first, for every selected changeset, before anything is
 *    written: the operation is unknown (UNKNOWN_OPERATION), in
 *    deny_operations (OPERATION_DENIED), or the target repository (for
 *    set_parent also the parent's, which GitHub writes) is not in the
 *    allowlist (REPO_NOT_ALLOWED). Each is a `denial` audit event and status
 *    "denied"; if any, nothing runs and the return is PMBOT_EINVALID.
 * 2. The state is read once through backend->read (pmbot_apply_run_from()
 *    may start from the caller's read instead): every repository a
 *    selected changeset's target, parent or blocker names, and the project
 *    of the first add_to_project payload, else config's project when a
 *    set_project_field needs it. Trusted markers are indexed and the index
 *    follows every create_issue and add_to_project result. Then the
 *    planner's rules (pmbot_apply_rules_check: ISSUE_NOT_MANAGED,
 *    LABEL_NOT_OWNED, BODY_EDITED, MARKER_INVALID) are checked for every
 *    selected changeset against that state, still before any write, and
 *    denied as in 1.
 * 3. Per changeset: hooks->before; skipped as "already_applied" (a
 *    `success` event with status already_applied) when
 *    pmbot_changeset_is_applied() says so, which makes a re-run after an
 *    interruption converge; args built as state.h documents (stable ids
 *    resolved by trusted marker; project field and option resolved by name;
 *    failures ISSUE_NOT_FOUND, AMBIGUOUS_MARKER, BAD_BINDING, BAD_PAYLOAD,
 *    NO_PROJECT, NO_PROJECT_ITEM, UNKNOWN_FIELD, UNKNOWN_OPTION naming the
 *    options, BAD_VALUE); an `attempt` event per try; backend->perform.
 *    A failed create is never retried: the state is re-read and, when the
 *    marker is now there, the create counts as applied ("recovered").
 *    Repeat-safe operations that fail with PMBOT_ERROR are retried up to
 *    the node's retry.max after its backoff, re-reading the state first and
 *    stopping when the change turns out to have landed; a refusal
 *    (PMBOT_EINVALID: BACKEND_REFUSED) is not retried. Then a `success` or
 *    `failure` event (and `dead_letter` when the retries ran out), and
 *    hooks->after. The first failure stops the run.
 * 4. Batches: when backend->perform_batch is not NULL, runs of two or more
 *    consecutive set_project_field changesets (up to PMBOT_APPLY_BATCH_MAX;
 *    a changeset whose args cannot be built ends the run and goes the
 *    normal way) are looked at first (already applied or not; args built),
 *    then hooks->before is called for each (a stop sends only those before
 *    it), an `attempt` event written for each to send, and all of them
 *    sent in one perform_batch call. Each is then settled in bundle order
 *    with its own `success` or `failure` event and hooks->after. The batch
 *    send is each changeset's first attempt: when any entry failed with
 *    PMBOT_ERROR the state is re-read once (after the retry backoff) and
 *    entries that landed count as applied ("recovered"); every entry still
 *    failed (refused ones too) is sent alone through step 3's path, from
 *    attempt 2, so retries, backoff and dead_letter work as for one
 *    changeset. Once one fails for good the run stops, but the batch's
 *    later entries are still recorded: applied when they landed, failed
 *    (not retried) when not. Runs of consecutive add_dependency (or
 *    remove_dependency) changesets go the same way, a lone one included,
 *    when the backend has PMBOT_BACKEND_BATCHES_EDGES.
 * 5. Fused creates, when the backend has PMBOT_BACKEND_FUSES: each run of
 *    consecutive create_issue changesets executes parents first (by depth
 *    among the selected set_parent changesets; results stay in bundle
 *    order), and a create's args carry parent_node_id for its selected
 *    set_parent whose parent resolves now, project_node_id for its
 *    add_to_project on the board read, and issue_type (what follows the
 *    type label prefix) with config issue_types auto. What the create's
 *    result says landed (parent_node_id, item_id) settles those
 *    changesets: at their turn they are recorded "applied" with result
 *    {"with": "<the create's changeset_id>"}, and never sent; the rest go
 *    as usual. A re-run finds them already applied.
 * 6. A pause: when backend->perform (or perform_batch, for an entry) answers
 *    PMBOT_BACKEND_EPAUSED, nothing of that changeset was sent (a write
 *    of a multi-request operation may have been, and is completed by the
 *    next run): it stays "pending" with reason BUDGET_SPENT, a `pause`
 *    event {reason: BUDGET_SPENT, resumes_after: RFC 3339 UTC of
 *    backend->resume_at, message} is appended, no later changeset is
 *    looked at, and the return is PMBOT_BACKEND_EPAUSED with `err` holding
 *    pmbot_apply_progress()'s line over this run's changesets. A run of the
 *    same plan later skips what landed (already_applied) and goes on.
 * Every event carries bundle_id, plan_hash, changeset_id, idempotency_key,
 * operation, target and `actor` (when not NULL). `audit` may be NULL (no
 * ledger). Proposal and approval events are the caller's to append.
 *
 * `*results` (new; the caller owns it) is an array, one entry per selected
 * changeset in order: {changeset_id, idempotency_key, status: applied |
 * already_applied | denied | failed | pending, reason?, message?, result?,
 * attempts?, recovered?}. It is NULL only when the arguments are unusable
 * or memory ran out. Returns PMBOT_OK when every selected changeset is
 * applied or already applied (also when none is selected), PMBOT_EINVALID
 * when something was denied or the arguments are unusable (not a bundle,
 * `run` naming an unknown id, an invalid flow), PMBOT_ERROR on failure
 * (including a stop by hooks->before and the flow's timeout running out),
 * PMBOT_BACKEND_EPAUSED on a pause (5.); `err` (may be NULL) says why.
 */
int pmbot_apply_run(json_t **results, const json_t *bundle, const json_t *run,
	pmbot_backend *backend, const pmbot_config *config, pmbot_audit *audit,
	const char *actor, const pmbot_apply_hooks *hooks, pmbot_buf *err);

/*
 * A state the caller has just read through the backend it hands
 * pmbot_apply_run_from(), and what that read was asked for. On GitHub the
 * read before the first apply of new items scans the whole repository to
 * prove them absent; the staleness check (pmbot_apply_check) has just paid
 * for that scan, and the executor may start from its answer instead of
 * paying again. Everything is borrowed and must outlive the call.
 */
typedef struct {
	const pmbot_state *state;       /* what the read gave */
	const pmbot_backend *backend;   /* the backend that read it */
	const char *const *repos;       /* the repositories it read */
	size_t n_repos;
	const char *project_owner;      /* the project it read; NULL: none */
	long project_number;
	const pmbot_read_scope *scope;  /* what it was asked to answer for; NULL:
	                                   every issue of `repos` */
} pmbot_apply_start;

/*
 * pmbot_apply_run(), except that step 2 starts from `start->state` without
 * reading when `start` (may be NULL) covers that read: `start->backend` is
 * `backend`, `start->repos` holds (ASCII case folded) every repository step
 * 2 would read, its project is step 2's project when there is one, and its
 * scope is NULL or names every issue step 2 would need (same repository,
 * same stable id or number). Otherwise step 2 reads as pmbot_apply_run()
 * does. Re-reads after a failed write (a create that may have landed,
 * retries, batches) always read through the backend.
 *
 * `start->state` must be the state the caller checked the plan against
 * (pmbot_apply_check), read after the approval was verified and with
 * nothing written through the backend since: a read of our own would
 * answer the same, only later. It is not changed, and not kept after the
 * call. Codes and ownership as pmbot_apply_run().
 */
int pmbot_apply_run_from(json_t **results, const json_t *bundle, const json_t *run,
	pmbot_backend *backend, const pmbot_config *config, pmbot_audit *audit,
	const char *actor, const pmbot_apply_hooks *hooks, const pmbot_apply_start *start,
	pmbot_buf *err);

/*
 * The progress line of a paused apply, replacing what `out` held:
 * "K of N applied; resumes after T", N = `total` (the approved plan's
 * changesets: a resumed run's fresh plan holds only what is left), K = N
 * minus the entries of `results` (pmbot_apply_run's) that are neither
 * applied nor already_applied, T = `resume_at` (epoch seconds) as RFC 3339
 * UTC ("2026-11-25T19:30:00Z"). PMBOT_OK, or PMBOT_ERROR when out of memory
 * or `resume_at` is out of range.
 */
int pmbot_apply_progress(pmbot_buf *out, size_t total, const json_t *results, long long resume_at);

#endif
