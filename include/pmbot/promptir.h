#ifndef PMBOT_PROMPTIR_H
#define PMBOT_PROMPTIR_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/diag.h"
#include "pmbot/repo.h"

/*
 * Prompt IR v1 (spec 004, "Symphony-IR: Prompt IR Specification"): the
 * structured form of a prompt between an intent and the model, the
 * governance checks that inspect it before any token is spent, and the
 * plugins that rewrite it (context digest, budget optimizer) with an audit
 * record per rewrite. Mode B only: nothing here touches git, the network,
 * the state or the apply stage.
 *
 * Deviations from the spec's Python reference, on purpose:
 * - Ids and clocks come from the caller. The spec generates `ir_id` as
 *   uuid4()[:8] and `created_at` from the clock; here the caller passes an
 *   id of 8 lower-case hex characters (commands derive it from the SHA-256
 *   of their canonical input and a counter) and an RFC 3339 time ($PMBOT_NOW
 *   fixes it), so the same input gives the same bytes.
 * - Hashes (IRTransformation before/after, pmbot_promptir_hash) are taken
 *   over pm-bot's canonical JSON (pmbot_json_canonical), not over Python's
 *   json.dumps(sort_keys=True) text: they are stable across pm-bot runs but
 *   not equal to the reference implementation's hashes.
 * - The budget formula is computed exactly in integer tenths, so
 *   int(3000 * 1.1 * 1.3) is 4290 by construction rather than by luck of
 *   binary floating point.
 */

/* ---- Phase --------------------------------------------------------------- */

typedef enum {
	PMBOT_PHASE_PLANNING = 0,
	PMBOT_PHASE_RESEARCH,
	PMBOT_PHASE_IMPLEMENTATION,
	PMBOT_PHASE_REVIEW,
	PMBOT_PHASE_SYNTHESIS
} pmbot_phase;

/* Number of phases; every value below it is a valid pmbot_phase. */
#define PMBOT_PHASE_COUNT 5

/*
 * The spec's string value: "planning", "research", "implementation",
 * "review", "synthesis". Static storage; NULL for an out-of-range value.
 */
const char *pmbot_phase_name(pmbot_phase phase);

/*
 * Map a phase name from a plan to a phase the way the spec's orchestrator
 * does: ASCII case-insensitive, "analysis" is an alias of planning and
 * "integration" of synthesis, anything else (NULL included) is
 * implementation. Always sets `*out`. Returns 0 when `name` was a phase
 * value or an alias, 1 when it fell back to implementation.
 * (Deserialization is stricter: pmbot_promptir_from_json accepts only the
 * five exact values, as PhaseType(value) does.)
 */
PMBOT_WARN_UNUSED int pmbot_phase_parse(pmbot_phase *out, const char *name);

/* ---- The IR -------------------------------------------------------------- */

/* The id length: 8 lower-case hex characters. */
#define PMBOT_PROMPTIR_ID_LEN 8

/* Largest token_budget accepted (a 32-bit int, as prompt budgets are). */
#define PMBOT_PROMPTIR_MAX_BUDGET 2147483647LL

/* The default ContextDigestPlugin threshold (the spec's max_context_refs). */
#define PMBOT_PROMPTIR_DEFAULT_MAX_REFS 10

/* The marker that replaces digested context references. */
#define PMBOT_PROMPTIR_DIGEST_MARKER "__CONTEXT_DIGEST__"

/*
 * One Prompt IR. Every pointer is owned by the IR and released by
 * pmbot_promptir_free(): the strings and the arrays are malloc'd, the two
 * json_t members hold one reference each. A caller that edits a field
 * directly keeps that rule (replace a string with a malloc'd one and free
 * the old; edit the json_t objects in place). Strings are UTF-8 without
 * NUL bytes.
 */
typedef struct pmbot_promptir {
	char *role;                  /* agent role ("architect", ...) */
	char *intent;                /* what the agent should achieve; governance reads it */
	pmbot_phase phase;
	char **context_refs;         /* "file:<path>", "diff:<rev>", "memory:<key>", marker, raw */
	size_t n_context_refs, alloc_context_refs;
	char **constraints;          /* must-follow rules; governance reads them */
	size_t n_constraints, alloc_constraints;
	json_t *output_requirements; /* object; never NULL */
	long long token_budget;      /* 0 .. PMBOT_PROMPTIR_MAX_BUDGET */
	int priority;                /* 1 (lowest) .. 10 (highest); default 5 */
	char *model_hint;            /* NULL is the spec's None (the default) */
	double temperature_hint;     /* default 0.7 */
	char *schema_id;             /* default "default" */
	char *ir_version;            /* default "1.0"; always "1.0" or "1.<anything>" */
	json_t *metadata;            /* object; never NULL; plugins write here */
	char *ir_id;                 /* never NULL */
	char *created_at;            /* RFC 3339 date-time with offset, or NULL */
} pmbot_promptir;

/*
 * Create an IR with the spec's defaults: no context refs, no constraints,
 * empty output_requirements and metadata, priority 5, model_hint NULL,
 * temperature 0.7, schema "default", version "1.0". Every string argument
 * is copied. `id` must be 8 lower-case hex characters; `created_at` an
 * RFC 3339 date-time with a "Z" or "+HH:MM" offset (calendar checked), or
 * NULL; role and intent valid UTF-8; 0 <= token_budget <= the maximum.
 * On success `*out` is a new IR the caller frees with pmbot_promptir_free().
 * PMBOT_EINVALID for a bad argument, PMBOT_ERROR when out of memory; `*out`
 * is NULL on failure.
 */
PMBOT_WARN_UNUSED int pmbot_promptir_new(pmbot_promptir **out, const char *role, const char *intent,
	pmbot_phase phase, long long token_budget, const char *id, const char *created_at);

/* Release `ir` and everything it owns. NULL is allowed. */
void pmbot_promptir_free(pmbot_promptir *ir);

/*
 * Append a copy of `ref` / `constraint` (valid UTF-8) to the IR.
 * PMBOT_OK, PMBOT_EINVALID for invalid UTF-8, PMBOT_ERROR when out of memory
 * (the IR is unchanged then).
 */
int pmbot_promptir_add_context_ref(pmbot_promptir *ir, const char *ref);
int pmbot_promptir_add_constraint(pmbot_promptir *ir, const char *constraint);

/*
 * A deep copy of `ir` with the id `new_id` (8 lower-case hex characters,
 * different from ir->ir_id: the spec's clone() always gives a new id);
 * created_at is kept. `*out` is owned by the caller. PMBOT_EINVALID for a
 * bad or unchanged id, PMBOT_ERROR when out of memory; `*out` NULL then.
 */
PMBOT_WARN_UNUSED int pmbot_promptir_clone(pmbot_promptir **out, const pmbot_promptir *ir, const char *new_id);

/*
 * The spec's to_dict(): an object with exactly the keys ir_id, role,
 * intent, phase (the string value), context_refs, constraints,
 * output_requirements, token_budget, priority, model_hint (null when
 * NULL), temperature_hint (a real), schema_id, ir_version, metadata,
 * created_at (null when NULL). Containers are deep copies: `*out` is a new
 * reference the caller json_decref()s. PMBOT_ERROR when out of memory or
 * when a string field is not valid UTF-8; `*out` NULL then.
 */
int pmbot_promptir_to_json(json_t **out, const pmbot_promptir *ir);

/*
 * The spec's from_dict(), strictly typed. Required: role, intent (strings),
 * phase (one of the five exact values), context_refs and constraints
 * (arrays of strings), output_requirements (object), token_budget (integer
 * 0 .. maximum). Optional with the defaults above: priority (integer
 * 1..10), model_hint (string or null), temperature_hint (number 0..2),
 * schema_id (string), ir_version, metadata (object), ir_id (string; when
 * absent, null or empty it is the first 8 hex characters of the SHA-256 of
 * the canonical JSON of `in`, so it stays reproducible), created_at (RFC
 * 3339 string or null; kept as written).
 * Diagnostics (errors, path = JSON Pointer into `in`; a missing field is
 * reported at the object that lacks it, ""; all problems are reported at
 * once, except that a refused version is the only one reported, since
 * another major version may define other fields):
 *   PROMPTIR_VERSION      ir_version not a string "1.0" or "1.<x>" (another
 *                         major version is refused, as the spec says)
 *   PROMPTIR_FIELD        not an object, a missing required field, a wrong
 *                         type, a value out of range, a NUL byte in a string,
 *                         a phase alias ("analysis" is for pmbot_phase_parse)
 *   PROMPTIR_UNKNOWN_KEY  a key the spec does not define (the reference
 *                         raises TypeError for it; this holds for 1.x minor
 *                         versions too, whose new fields pm-bot cannot know)
 * ir_id may be any string here (the reference accepts any); only the ids
 * pm-bot makes are 8 hex characters.
 * `in` is borrowed. On success `*out` is a new IR owned by the caller.
 * PMBOT_EINVALID when rejected (diagnostics added), PMBOT_ERROR when out of
 * memory; `*out` NULL on failure.
 */
int pmbot_promptir_from_json(pmbot_promptir **out, const json_t *in, pmbot_diag_list *diags);

/* 16 hex characters and a NUL. */
#define PMBOT_PROMPTIR_HASH_SIZE 17

/*
 * The spec's IR hash: the first 16 hex characters of the SHA-256 of the
 * canonical JSON of pmbot_promptir_to_json(ir). PMBOT_OK or PMBOT_ERROR.
 */
int pmbot_promptir_hash(char out[PMBOT_PROMPTIR_HASH_SIZE], const pmbot_promptir *ir);

/*
 * The BudgetOptimizerPlugin formula,
 *   int(budget * phase_multiplier * (1 + (priority - 5) * 0.1)),
 * with the multipliers 1.2 / 1.3 / 1.0 / 0.8 / 1.1 (planning, research,
 * implementation, review, synthesis), computed exactly in integer tenths
 * and truncated. `*multiplier_tenths` (may be NULL) receives the phase
 * multiplier times ten (12 for planning). PMBOT_OK, or PMBOT_EINVALID for a
 * phase out of range, a priority outside 1..10 or a budget outside
 * 0..PMBOT_PROMPTIR_MAX_BUDGET.
 */
int pmbot_promptir_adjust_budget(long long *out, int *multiplier_tenths,
	long long budget, pmbot_phase phase, int priority);

/* ---- Governance (src/llm/governance.c) ----------------------------------- */

/*
 * The spec's IRGovernanceChecker. Policies are checked in order: the three
 * defaults first, exactly as the spec's table,
 *   protected_paths        context_ref  "/sys/", "/etc/", "C:\Windows\System32\"  deny
 *   destructive_actions    intent       "delete all", "drop database", "rm -rf"   flag
 *   sensitive_constraints  constraint   "ignore policy", "bypass", "override"     deny
 * then the custom ones. Custom policies are added to the defaults, never
 * replace them (the reference replaces; a repository configuration must not
 * be able to switch the defaults off).
 * Matching is substring matching, as the spec says; like the reference
 * implementation, context_ref patterns are case-sensitive and intent /
 * constraint keywords are case-insensitive (ASCII letters are folded;
 * other characters compare as bytes).
 * A checker keeps counters across checks (the violations report); it is
 * not thread-safe.
 */
typedef struct pmbot_governance pmbot_governance;

/*
 * Create a checker with the default policies plus `custom` (NULL for none),
 * a JSON array of objects
 *   {"name": str, "type": "context_ref"|"intent"|"constraint",
 *    "forbidden_patterns": [str, ...]    (context_ref only)
 *    "forbidden_keywords": [str, ...]    (intent and constraint only)
 *    "action": "deny"|"flag"}
 * Every problem is a GOVERNANCE_POLICY error whose path is
 * `pointer_prefix` (NULL = "", e.g. "/llm/policies" for the config file)
 * followed by the JSON Pointer inside `custom`: not an array or object, a
 * missing, empty or mistyped member, an unknown type or action, the list
 * that does not belong to the type, an empty pattern (it would match
 * everything), an unknown key, a name used twice (defaults included).
 * `custom` is borrowed. `*out` is owned by the caller (pmbot_governance_free).
 * PMBOT_EINVALID when rejected (diagnostics added), PMBOT_ERROR when out of
 * memory; `*out` NULL on failure.
 */
PMBOT_WARN_UNUSED int pmbot_governance_new(pmbot_governance **out, const json_t *custom,
	const char *pointer_prefix, pmbot_diag_list *diags);

/* Release a checker. NULL is allowed. */
void pmbot_governance_free(pmbot_governance *gov);

/*
 * The effective policies, in check order, as a JSON array of the objects
 * described above. `*out` is a new reference. PMBOT_OK or PMBOT_ERROR.
 */
int pmbot_governance_policies(json_t **out, const pmbot_governance *gov);

/*
 * The outcome of one check. `violations` is a JSON array (owned; one
 * reference) of objects, in policy order, then field order, then pattern
 * order, one per (policy, field, pattern) that matched:
 *   {"policy":  policy name,
 *    "type":    "context_ref" | "intent" | "constraint",
 *    "action":  "deny" | "flag",
 *    "matched": the pattern or keyword as the policy spells it,
 *    "field":   JSON Pointer into the IR: "/context_refs/0", "/intent",
 *               "/constraints/2",
 *    "message": the spec's violation string, e.g. "DENY: protected_paths -
 *               Context ref '/etc/passwd' matches forbidden pattern '/etc/'"}
 * `approved` is 1 when no violation has the action deny (flags do not
 * block), else 0.
 */
typedef struct {
	int approved;
	json_t *violations;
} pmbot_governance_result;

#define PMBOT_GOVERNANCE_RESULT_INIT { 0, NULL }

/* Release what a result owns and reset it to PMBOT_GOVERNANCE_RESULT_INIT. */
void pmbot_governance_result_free(pmbot_governance_result *r);

/*
 * Check `ir` against every policy and count the check. `*out` must be
 * initialized (PMBOT_GOVERNANCE_RESULT_INIT) or freed; it is overwritten.
 * A denial is an outcome, not a failure: PMBOT_OK either way; PMBOT_ERROR
 * when out of memory (`*out` is left empty and nothing is counted).
 */
int pmbot_governance_check(pmbot_governance_result *out, pmbot_governance *gov,
	const pmbot_promptir *ir);

/*
 * The spec's get_violations_report():
 *   {"total_checks": n, "approved": a, "denied": d,
 *    "approval_rate": a / n as a real (1.0 when n is 0),
 *    "recent_violations": the last 10 checks, oldest first, each
 *      {"ir_id", "role", "approved": bool, "violations": [... as above]}}
 * (The reference logs every check there, violations or not, and so does
 * this; it adds a wall-clock timestamp, which is left out for determinism.)
 * `*out` is a new reference. PMBOT_OK or PMBOT_ERROR.
 */
int pmbot_governance_report(json_t **out, const pmbot_governance *gov);

/* ---- Plugins and the pipeline (src/llm/plugins.c) ------------------------ */

/*
 * A plugin. The pipeline hands `transform` a private clone of the current
 * IR (with a fresh id) to edit in place, never the caller's IR, and never
 * an IR that governance denied.
 * `transform` returns 1 when it changed the clone (it then writes a
 * one-line description into `description`, which starts empty), 0 when it
 * has nothing to do (the clone is dropped, nothing is recorded), or a
 * negative value on failure: as in the spec, the failure is reported (a
 * PROMPTIR_PLUGIN warning) and the pipeline goes on with the IR from
 * before the plugin. `name` is the spec's applied_by (the plugin class
 * name) and `type` the transformation_type; both static strings.
 */
typedef struct {
	const char *name;
	const char *type;
	int (*transform)(pmbot_promptir *ir, pmbot_buf *description, void *ctx);
	void *ctx;
} pmbot_promptir_plugin;

typedef struct {
	/*
	 * ContextDigestPlugin threshold: more context refs than this are
	 * digested. 0 means PMBOT_PROMPTIR_DEFAULT_MAX_REFS (10).
	 */
	size_t max_context_refs;
	/* The IRTransformation timestamp (RFC 3339, e.g. $PMBOT_NOW); NULL writes null. */
	const char *timestamp;
	/* Further plugins, run in this order after the two built-in ones. */
	const pmbot_promptir_plugin *plugins;
	size_t n_plugins;
} pmbot_promptir_pipeline_opts;

/*
 * The spec's PromptIRPipeline.process():
 * 1. governance: pmbot_governance_check(gov_result, gov, ir). When denied,
 *    no plugin runs: each deny violation becomes a GOVERNANCE_DENIED error
 *    (path = the violation's field) and the result is PMBOT_EINVALID.
 *    Flags become GOVERNANCE_FLAG warnings and do not stop anything.
 * 2. ContextDigestPlugin: when the IR has more than max_context_refs refs,
 *    they become the single ref "__CONTEXT_DIGEST__"; metadata gets
 *    "original_context_refs" (the refs) and "context_digest" ("Context
 *    summary: <n> files related to: <intent>").
 * 3. BudgetOptimizerPlugin: token_budget = pmbot_promptir_adjust_budget();
 *    metadata gets "original_budget" (integer) and "budget_multiplier" (a
 *    real: 1.2, 1.3, 1.0, 0.8, 1.1).
 * 4. opts->plugins, in order.
 * Each plugin works on a clone whose id is the first 8 hex characters of
 * the SHA-256 of the canonical JSON of the IR before it, a NUL byte and the
 * plugin name (reproducible, and never the id it had). Each change is
 * recorded as the spec's IRTransformation
 *   {"transformation_type", "description", "before_hash", "after_hash",
 *    "applied_by", "timestamp"}
 * with the 16-hex pmbot_promptir_hash() of the IR before and after.
 * `opts` may be NULL (defaults); `gov` and `diags` are required;
 * `gov_result` and `out_transformations` may be NULL when not wanted.
 * Diagnostics: GOVERNANCE_DENIED (error) / GOVERNANCE_FLAG (warning) per
 * violation, PROMPTIR_PLUGIN (warning, path "") per failed plugin.
 * On PMBOT_OK, `*out_ir` is the transformed IR (a new IR owned by the
 * caller; `ir` itself is never modified) and `*out_transformations` a new
 * JSON array. On failure both are NULL; `*gov_result` holds the governance
 * outcome whenever the check ran. PMBOT_EINVALID when governance denied,
 * PMBOT_ERROR when out of memory (or `gov` is NULL).
 */
int pmbot_promptir_pipeline(pmbot_promptir **out_ir, json_t **out_transformations,
	pmbot_governance_result *gov_result, const pmbot_promptir *ir,
	pmbot_governance *gov, const pmbot_promptir_pipeline_opts *opts,
	pmbot_diag_list *diags);

/* ==== Context resolution (src/llm/context.c) ============================== */

/* A file: reference keeps at most this many characters (code points). */
#define PMBOT_CONTEXT_FILE_MAX_CHARS 10000

/* A diff: reference keeps at most this many bytes, cut at a line end. */
#define PMBOT_CONTEXT_DIFF_MAX_BYTES 100000

/* A blob larger than this is not loaded at all (CONTEXT_TOO_BIG). */
#define PMBOT_CONTEXT_FILE_READ_MAX ((size_t)8 << 20)

/*
 * Resolve `refs[0..n_refs)` in order and set `*out` to a new object the
 * caller owns (json_decref):
 *
 *   {"refs": [{"ref": <the ref as given>, "kind": <kind>,
 *              "content": <text>, "truncated": <bool>}, ...]}
 *
 * one entry per ref, in ref order (duplicates stay), so the same refs,
 * metadata and commit always give the same value. Kinds and contents:
 *
 *   "file:<path>"  kind "file": the file at `rev`, read from git objects
 *                  (pmbot_repo_read; never the work tree, the index or a
 *                  symlink target). It must be UTF-8 text without NUL
 *                  bytes. More than PMBOT_CONTEXT_FILE_MAX_CHARS code
 *                  points are cut there (never inside a character),
 *                  followed by a new line, if the cut text does not end
 *                  with one, and "[truncated: the first 10000 of <n>
 *                  characters]"; "truncated" is then true.
 *   "diff:<rev2>"  kind "diff": pmbot_repo_diff(rev2 -> rev), i.e. what
 *                  the work at `rev` changed since `rev2` ("" when nothing
 *                  did). Bytes that are not UTF-8 (and NUL) become U+FFFD.
 *                  More than PMBOT_CONTEXT_DIFF_MAX_BYTES bytes are cut
 *                  after the last whole line that fits, followed by
 *                  "[truncated: the diff is longer than 100000 bytes]".
 *   "memory:<key>" kind "memory": metadata[key]; a string as it is, any
 *                  other JSON value in canonical form (pmbot_json.h).
 *   "__CONTEXT_DIGEST__"
 *                  kind "digest": the string metadata["context_digest"].
 *   anything else  kind "raw": "[Reference: <ref>]". Nothing is read, so
 *                  no path rule applies (governance judges the text).
 *
 * Prefixes are case-sensitive, as in the spec. Every ref is checked, so
 * one call reports every problem; each diagnostic's path is the ref's
 * JSON Pointer "/context_refs/<i>" (the wrong-typed digest:
 * "/metadata/context_digest"), and its message quotes the ref:
 *
 *   CONTEXT_REF        an empty or NULL ref, a ref that is not UTF-8, "file:",
 *                      "diff:" or "memory:" with nothing after it, a path
 *                      that is absolute ("/x", "\x", "C:..."), has a ".."
 *                      segment, or is not normalised (a "." or empty
 *                      segment; '\' counts as a separator here); a
 *                      context_digest that is not a string; metadata that
 *                      is not an object (path "/metadata"). Such a ref is
 *                      never looked up.
 *   CONTEXT_NOT_FOUND  no file at that path at `rev` (or a directory,
 *                      symlink or submodule there); a memory key or
 *                      context_digest that metadata lacks (NULL metadata
 *                      lacks every key).
 *   CONTEXT_BINARY     the file holds a NUL byte or is not UTF-8.
 *   CONTEXT_TOO_BIG    the blob is larger than PMBOT_CONTEXT_FILE_READ_MAX.
 *   CONTEXT_REV        `rev` is unknown or not a commit, or `repo` / `rev`
 *                      is NULL while a file: or diff: ref needs them
 *                      (reported once, at the first such ref); or the
 *                      <rev2> of a diff: ref is.
 *
 * `rev` is resolved to a commit once, before the first file: or diff: ref,
 * and every read uses that commit, so a branch that moves during the call
 * cannot mix two states. `repo` and `rev` may be NULL when no ref needs
 * them.
 *
 * Diagnostics are appended to `diags` (owned by the caller).
 * Returns 0 with `*out` set; PMBOT_EINVALID with `*out` NULL when any ref
 * was refused (the diagnostics say why); PMBOT_ERROR with `*out` NULL for
 * a git or memory failure.
 */
int pmbot_context_resolve(json_t **out, const char *const *refs, size_t n_refs,
	const json_t *metadata, pmbot_repo *repo, const char *rev, pmbot_diag_list *diags);

/*
 * pmbot_context_resolve() over an IR's context_refs and metadata: what the
 * prompt of `ir` is built from, at commit `rev` of `repo`.
 */
int pmbot_promptir_resolve(json_t **out, const pmbot_promptir *ir, pmbot_repo *repo,
	const char *rev, pmbot_diag_list *diags);

/*
 * pmbot_promptir_resolve(), except that the reference `given_ref` (borrowed,
 * may be NULL: none) is not looked up at `rev`: its text is the `given_len`
 * bytes at `given` (borrowed), which the caller read from outside git, for
 * `pm-bot draft FILE` from the work tree or standard input. Such text gets
 * exactly a file: blob's checks and cut: CONTEXT_TOO_BIG over
 * PMBOT_CONTEXT_FILE_READ_MAX, CONTEXT_BINARY for NUL or non-UTF-8, the
 * PMBOT_CONTEXT_FILE_MAX_CHARS cut. The path rules do not apply to it (it is
 * not a repository path); every other reference is resolved as usual.
 */
int pmbot_promptir_resolve_given(json_t **out, const pmbot_promptir *ir, pmbot_repo *repo,
	const char *rev, const char *given_ref, const char *given, size_t given_len,
	pmbot_diag_list *diags);

/*
 * Read the file at `path` ("-": standard input) into `out` (cleared first;
 * the caller's, its cap set to PMBOT_CONTEXT_FILE_READ_MAX). No more than
 * the cap and one byte is ever read, so a 64 MiB file costs at most 8 MiB.
 * PMBOT_OK; PMBOT_EINVALID with CONTEXT_TOO_BIG (over the cap) or
 * CONTEXT_NOT_FOUND (no such file, a directory); PMBOT_ERROR with
 * CONTEXT_READ for any other I/O failure. Diagnostics name `path` (or
 * "standard input") as their file.
 */
int pmbot_context_read_input(pmbot_buf *out, const char *path, pmbot_diag_list *diags);

/* ==== End of context resolution ========================================== */

#endif
