#ifndef PMBOT_CAPABILITY_H
#define PMBOT_CAPABILITY_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/diag.h"

/*
 * LLM capabilities (spec 003): contract-first model outputs. Each
 * capability has a versioned prompt template (src/llm/prompts/<name>.md)
 * and an output schema (docs/schemas/llm/<schema>.schema.json, draft-07,
 * checked by src/llm/jsonschema.c); both are compiled into the binary.
 * This module renders prompts, enforces the class policy before a provider
 * runs, and parses and validates what the model answered. It never calls a
 * model and never writes: a result is a draft or a proposal for a human.
 *
 *   id                          class               prompt / schema
 *   report_ir_draft             read_only_advice    report_ir_draft.v1 / report_ir_draft
 *   board_strategy_review       read_only_advice    board_strategy_review.v1 / board_strategy_review
 *   issue_adjustment_proposal   mutation_proposal   issue_adjustment_proposal.v1 / issue_adjustment_proposal
 *   issue_replanner             mutation_proposal   (alias: the same prompt and schema, its own id)
 *
 * report_ir_draft is read_only_advice: its output is a draft report file a
 * human edits and commits, not a change to any issue.
 */

typedef enum {
	PMBOT_CAPABILITY_READ_ONLY_ADVICE = 0,
	PMBOT_CAPABILITY_MUTATION_PROPOSAL
} pmbot_capability_class;

/* A registry entry. Static storage, read-only; the strings too. */
typedef struct {
	const char *id;             /* "issue_replanner" */
	pmbot_capability_class cls;
	const char *version;        /* prompt version, "v1" */
	const char *prompt_name;    /* "issue_adjustment_proposal.v1": the template
	                               file without ".md"; audit prompt_version */
	const char *schema_name;    /* "issue_adjustment_proposal" */
	const char *schema_version; /* "issue_adjustment_proposal/v1"; audit schema_version */
} pmbot_capability;

/* Files compiled in by scripts/embed-files.sh (name = base name). */
typedef struct {
	const char *name;
	const char *text;
} pmbot_embedded_file;

/* Every embedded prompt and schema, then a { NULL, NULL } entry. */
extern const pmbot_embedded_file pmbot_llm_files[];
extern const size_t pmbot_llm_files_count;

/* The largest model output run_output parses (JSON_TOO_LARGE beyond): 4 MiB. */
#define PMBOT_CAPABILITY_MAX_OUTPUT ((size_t)4 << 20)

/* "read_only_advice" / "mutation_proposal"; static storage, NULL if out of range. */
const char *pmbot_capability_class_name(pmbot_capability_class cls);

/*
 * Find capability `id` (exact, case-sensitive) at prompt `version` ("v1";
 * NULL: the newest). `*out` points into the static registry (never freed).
 * PMBOT_OK, or PMBOT_ENOTFOUND (`*out` NULL) for an unknown id or version.
 */
int pmbot_capability_find(const pmbot_capability **out, const char *id, const char *version);

/* Number of registry entries, and entry `i` (NULL when i >= count); for listings. */
size_t pmbot_capability_count(void);
const pmbot_capability *pmbot_capability_at(size_t i);

/*
 * The embedded prompt template / schema text of `cap`, byte for byte the
 * committed file (static storage, NUL-terminated), or NULL if missing from
 * the build.
 */
const char *pmbot_capability_prompt_text(const pmbot_capability *cap);
const char *pmbot_capability_schema_text(const pmbot_capability *cap);

/*
 * The parsed schema of `cap`: `*out` is a new reference the caller owns.
 * PMBOT_OK, or PMBOT_ERROR (missing from the build, not JSON, out of memory).
 */
int pmbot_capability_schema(json_t **out, const pmbot_capability *cap);

/*
 * A system message to send with every rendered prompt (static storage): it
 * only says to answer with one JSON object; the template carries the rest.
 */
const char *pmbot_capability_system_prompt(void);

/*
 * The variables the template of `cap` needs from the caller: `*out` is a new
 * array (caller owns) of the placeholder names in byte order, without
 * duplicates, without the built-in "schema". PMBOT_OK or PMBOT_ERROR.
 * report_ir_draft: constraints, context, report, repository, today;
 * board_strategy_review: board, constraints, context;
 * issue_adjustment_proposal / issue_replanner: constraints, context, issues,
 * repository, request.
 */
int pmbot_capability_variables(json_t **out, const pmbot_capability *cap);

/*
 * Render a template: every "{{name}}" (name: [a-z_][a-z0-9_]*) is replaced
 * by vars[name], a string inserted verbatim, or any other JSON value as its
 * canonical JSON. Inserted text is never expanded again, so a value holding
 * "{{x}}" stays literal. Appends to `out` (the caller owns it); `vars` is
 * borrowed and may be NULL (no variables).
 *
 * Strict both ways, so a typo cannot silently send an empty prompt:
 * PROMPT_PLACEHOLDER when the template names a variable `vars` lacks (path
 * "", the message names it) or `vars` has a member the template never uses
 * (path "/<member>"); PROMPT_TEMPLATE when a "{{" does not start a
 * well-formed placeholder (path "", message with the byte offset);
 * PROMPT_VARS when `vars` is neither NULL nor an object. Every problem is
 * reported. PMBOT_OK; PMBOT_EINVALID (diagnostics added, `out` left as it
 * was); PMBOT_ERROR when out of memory or `out`'s cap is reached (`out` left
 * as it was).
 */
int pmbot_capability_render_text(pmbot_buf *out, const char *tmpl, size_t len,
	const json_t *vars, pmbot_diag_list *diags);

/*
 * Render the prompt of `cap` as above, with the built-in variable
 * "schema" set to the capability's schema text; `vars` must not hold
 * "schema" (PROMPT_PLACEHOLDER at "/schema"). Send the result as the user
 * message, pmbot_capability_system_prompt() as the system message.
 * Returns as pmbot_capability_render_text().
 */
int pmbot_capability_render_prompt(pmbot_buf *out, const pmbot_capability *cap,
	const json_t *vars, pmbot_diag_list *diags);

/*
 * The class policy, enforced before any provider runs (spec 003). Reads the
 * request options (an object, or NULL for none; borrowed) and on success
 * sets `*effective` to a new object the caller owns: a copy of the options
 * with the policy filled in:
 *  - every class: "allow_direct_github_writes": false. Any other value
 *    given (true, a string, ...) is denied.
 *  - read_only_advice: "approval_level": "low" when absent (a given
 *    string is kept; a non-string is denied).
 *  - mutation_proposal: "proposal_output_changeset_bundle": true and
 *    "require_human_approval": true when absent; any other value given
 *    (false, "true", 1, ...) is denied, and so is "approval_level": "low".
 * A denial appends the deterministic code
 * "capability_policy_denied:<capability_id>:<option>" to `denied` (the
 * first rule broken, in the order above; "request_options" when the
 * options are not an object) and returns PMBOT_EINVALID with `*effective`
 * NULL. PMBOT_ERROR when out of memory.
 */
int pmbot_capability_policy_check(json_t **effective, pmbot_buf *denied,
	const pmbot_capability *cap, const json_t *request_options);

/*
 * Validate an already parsed output against the capability's contract:
 * the schema, and for mutation_proposal capabilities the ChangesetBundle
 * compatibility rules of pmbot_capability_check_proposal(). On return
 * other than PMBOT_ERROR, `*validation` is a new object the caller owns:
 * {"errors": [{"path", "code", "message"}...], "warnings": []}, records as
 * pmbot_jsonschema_records() sorts them. PMBOT_OK when there is no error,
 * PMBOT_EINVALID when there is, PMBOT_ERROR (`*validation` NULL) when out
 * of memory or the embedded schema is broken.
 */
int pmbot_capability_validate(json_t **validation, const pmbot_capability *cap,
	const json_t *output);

/*
 * The ChangesetBundle compatibility rules a proposal must also meet, beyond
 * its schema (so they hold even if the schema and include/pmbot/source.h
 * ever drift apart), added to `diags` as SCHEMA_CHANGESET errors with the
 * JSON Pointer of the changeset (or of its member):
 *  - every changesets[i] is an object whose "operation" is one of
 *    pmbot_operation_parse()'s names and whose "requires_approval" is true;
 *  - no two changesets have the same operation, target and payload
 *    (canonical JSON): in a bundle they would share an idempotency key;
 *    the later one is reported.
 * Only what these rules read is checked; shapes are the schema's business.
 * PMBOT_OK, PMBOT_EINVALID (diagnostics added), PMBOT_ERROR when out of memory.
 */
int pmbot_capability_check_proposal(pmbot_diag_list *diags, const json_t *proposal);

/*
 * Parse and validate what the model answered (`len` bytes; `model_output`
 * may be NULL when len is 0) as spec 003 orders: JSON object only, then the
 * contract. On PMBOT_OK `*result` is the parsed object (new reference, the
 * caller owns it). On PMBOT_EINVALID `*result` is the error payload (new
 * reference):
 *   {"error": "capability_output_validation_failed:<id>",
 *    "capability_id": "<id>",
 *    "validation": {"errors": [...], "warnings": []}}
 * where a parse failure is a single record at path "$": JSON_TOO_LARGE
 * (more than PMBOT_CAPABILITY_MAX_OUTPUT bytes), JSON_DUPLICATE_KEY (an
 * object repeats a member), JSON_PARSE (not JSON: invalid syntax, invalid
 * UTF-8, a NUL, text around the value, nesting past 2048), JSON_NOT_OBJECT
 * (JSON, but not an object); otherwise the records of
 * pmbot_capability_validate(). Nothing is stripped: prose or a code fence
 * around the object is JSON_PARSE. PMBOT_ERROR (`*result` NULL) when out of
 * memory.
 */
int pmbot_capability_run_output(json_t **result, const pmbot_capability *cap,
	const char *model_output, size_t len);

/*
 * The audit metadata of one run (spec 003): `*out` is a new object the
 * caller owns, {"capability_id", "prompt_version" (cap->prompt_name),
 * "model", "provider", "input_hash", "schema_version"
 * (cap->schema_version), "run_id"}. `input_hash` is 64 lower-case hex
 * digits (pmbot_sha256_json() of the canonical input); model, provider and
 * run_id are non-empty UTF-8 strings, copied. PMBOT_OK, PMBOT_EINVALID
 * (`*out` NULL) when an argument breaks these rules, PMBOT_ERROR when out
 * of memory.
 */
int pmbot_capability_audit_fields(json_t **out, const pmbot_capability *cap,
	const char *model, const char *provider, const char *input_hash, const char *run_id);

#endif
