#ifndef PMBOT_LLM_H
#define PMBOT_LLM_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/diag.h"
#include "pmbot/repo.h"
#include "pmbot/source.h"

/*
 * The public header of src/llm/, Mode B, in five parts:
 *  1. model providers: one chat completion over libcurl,
 *  2. the JSON Schema (draft-07) validator for the schemas pm-bot ships,
 *  3. capabilities: prompt templates, output schemas, the class policy,
 *  4. Prompt IR, governance, plugins and the context resolved from git,
 *  5. one capability run, up to and after the model call (parts 2 to 4).
 */

/* ==== 1. Model providers ================================================ */

/*
 * Model providers (Mode B): one chat completion over libcurl, against an
 * OpenAI-compatible endpoint (OpenAI, Ollama, llama.cpp, vLLM, ... at
 * {url}/chat/completions) or Anthropic's Messages API ({url}/messages).
 * docs/llm.md, section "Providers", describes the behaviour for users.
 *
 * libcurl must be loaded and initialised by the program before the first
 * client is made (pmbot_net_global_init once, before any thread exists;
 * pmbot_net_global_cleanup after the last client is freed), as for the
 * GitHub client. A client is not safe to share between threads. Nothing
 * here prints or exits.
 *
 * The API key is never written to any error message: it is refused without
 * being quoted, and every message built from an answer (which a server may
 * use to echo the key back) has the key replaced by "[REDACTED]" before it is
 * shortened, so not even a prefix of it survives.
 *
 * Returns, besides 0, PMBOT_ERROR (out of memory, libcurl failed to start),
 * PMBOT_EINVALID (a bad setting or argument) and PMBOT_ENOTFOUND (no provider
 * configured):
 *   PMBOT_LLM_EHTTP        the final answer was not 2xx: a 4xx other than 429
 *                          (never retried), or a 429/500/502/503/504 still
 *                          there after the last attempt, or another status.
 *                          The error holds the status and the provider's own
 *                          message.
 *   PMBOT_LLM_ETRANSPORT   no complete answer (cannot resolve or connect,
 *                          timeout, connection cut, partial body) after the
 *                          last attempt
 *   PMBOT_LLM_ETOOBIG      the answer passed max_response bytes (not retried)
 *   PMBOT_LLM_EBADRESPONSE a 2xx answer that is not JSON or holds no text
 *                          (not retried)
 */

#define PMBOT_LLM_DEFAULT_OPENAI_URL "https://api.openai.com/v1"
#define PMBOT_LLM_DEFAULT_ANTHROPIC_URL "https://api.anthropic.com/v1"
#define PMBOT_LLM_ANTHROPIC_VERSION "2023-06-01"

#define PMBOT_LLM_DEFAULT_CONNECT_TIMEOUT_MS 10000L
#define PMBOT_LLM_DEFAULT_TIMEOUT_MS 300000L
#define PMBOT_LLM_DEFAULT_MAX_RESPONSE ((size_t)4 << 20)
#define PMBOT_LLM_DEFAULT_MAX_ATTEMPTS 3
#define PMBOT_LLM_DEFAULT_RETRY_BASE_MS 1000L
#define PMBOT_LLM_DEFAULT_MAX_WAIT_MS 60000LL

typedef enum {
	PMBOT_LLM_NONE = 0,
	PMBOT_LLM_OPENAI = 1,    /* any OpenAI-compatible chat-completions endpoint */
	PMBOT_LLM_ANTHROPIC = 2  /* Anthropic Messages API */
} pmbot_llm_provider;

/* "openai", "anthropic", or "none". Static storage. */
const char *pmbot_llm_provider_name(pmbot_llm_provider p);

/*
 * An environment lookup: the value of `name`, or NULL when unset. The
 * string is borrowed; it must stay valid until the lookup returns to
 * pmbot_llm_config_from_getenv, which copies it.
 */
typedef const char *(*pmbot_llm_getenv_fn)(void *payload, const char *name);

/* Sleep `ms` milliseconds (> 0). Tests inject one that only records. */
typedef void (*pmbot_llm_sleep_fn)(void *payload, long long ms);

/*
 * Provider settings. The strings are owned by the config (malloc'd): free
 * them with pmbot_llm_config_free(), which also wipes the key. Numbers zero
 * or negative mean the default.
 */
typedef struct {
	pmbot_llm_provider provider;
	char *url;      /* base URL, http(s), no credentials, query or fragment,
	                   no trailing '/' */
	char *model;    /* sent as is */
	char *api_key;  /* NULL: no key (a local server) */
	long connect_timeout_ms; /* default PMBOT_LLM_DEFAULT_CONNECT_TIMEOUT_MS */
	long timeout_ms;         /* one whole attempt; default 300 s */
	size_t max_response;     /* bytes of answer body; default 4 MiB */
	int max_attempts;        /* attempts in all, first one included; default 3 */
	long retry_base_ms;      /* first back-off, doubled each time; default 1000 */
	long long max_wait_ms;   /* longest single wait (retry-after is capped
	                            to it); default 60000 */
	pmbot_llm_sleep_fn sleep; /* NULL: nanosleep */
	void *sleep_payload;
} pmbot_llm_config;

/* Fill `cfg` with no provider, no strings and the default numbers. */
void pmbot_llm_config_init(pmbot_llm_config *cfg);

/* Free the strings of `cfg` (wiping the key first) and re-initialise it. */
void pmbot_llm_config_free(pmbot_llm_config *cfg);

/*
 * Read the configuration from the environment (empty values count as unset):
 *   PM_BOT_LLM_PROVIDER  "openai" or "anthropic" (exact, lower case)
 *   PM_BOT_LLM_URL       base URL; default PMBOT_LLM_DEFAULT_OPENAI_URL or
 *                        PMBOT_LLM_DEFAULT_ANTHROPIC_URL
 *   PM_BOT_LLM_MODEL     required
 *   PM_BOT_LLM_API_KEY   required only when the URL is the provider's own
 *                        hosted default; a local server needs none
 * `*out` is initialised first and owned by the caller afterwards (free it
 * with pmbot_llm_config_free, also on failure). On failure the reason is
 * appended to `err` (may be NULL; caller owns it) and never quotes the key.
 * PMBOT_ENOTFOUND when no provider is set; PMBOT_EINVALID for an unknown
 * provider, a bad URL, no model, a missing key for a hosted API or a key
 * that cannot go into an HTTP header; PMBOT_ERROR when out of memory.
 */
int pmbot_llm_config_from_env(pmbot_llm_config *out, pmbot_buf *err);

/* The same, with `getenv_fn(payload, name)` instead of getenv(3)
 * (NULL: getenv(3)). */
int pmbot_llm_config_from_getenv(pmbot_llm_config *out, pmbot_llm_getenv_fn getenv_fn,
	void *payload, pmbot_buf *err);

/* Counters, for tests and --stats. */
typedef struct {
	unsigned long requests;  /* HTTP exchanges attempted, retries included */
	unsigned long retries;   /* attempts after the first */
	long long waited_ms;     /* time slept between attempts */
	long last_status;        /* HTTP status of the last answer; 0: none */
} pmbot_llm_stats;

typedef struct pmbot_llm_client pmbot_llm_client;

/*
 * Make a client from `cfg` (borrowed; its strings are copied, so the config
 * may be freed afterwards). The settings are checked as by the env reader.
 * `*out` is new and owned by the caller: pmbot_llm_client_free() it. On
 * failure `*out` is NULL and the reason is appended to `err` (may be NULL).
 * PMBOT_EINVALID or PMBOT_ERROR.
 */
PMBOT_WARN_UNUSED int pmbot_llm_client_new(pmbot_llm_client **out, const pmbot_llm_config *cfg, pmbot_buf *err);

/* Free the client and its libcurl handle, wiping the key. NULL is a no-op. */
void pmbot_llm_client_free(pmbot_llm_client *c);

/* Copy the counters into `out`. */
void pmbot_llm_client_stats(pmbot_llm_stats *out, const pmbot_llm_client *c);

/*
 * Why the model stopped in the last successful completion, as the provider
 * said it (OpenAI "finish_reason": "stop", "length"; Anthropic "stop_reason":
 * "end_turn", "max_tokens"), or "" when unknown or after a failure. Owned by
 * `c`, valid until its next request. "length"/"max_tokens" mean the text was
 * cut at max_tokens.
 */
const char *pmbot_llm_last_stop_reason(const pmbot_llm_client *c);

/*
 * One completion: `system` (may be NULL or "": none) and `user` (required)
 * are sent as one system and one user message; the model's text replaces the
 * content of `text_out` (caller owns it; its cap applies: PMBOT_LLM_ETOOBIG).
 *   OpenAI:    POST {url}/chat/completions, "Authorization: Bearer <key>"
 *              (when there is a key), body {"max_tokens","messages":[system,
 *              user],"model","temperature"}; the text is
 *              choices[0].message.content.
 *   Anthropic: POST {url}/messages, "x-api-key: <key>" (when there is a key)
 *              and "anthropic-version: 2023-06-01", body {"max_tokens",
 *              "messages":[user],"model","system","temperature"}; the text is
 *              the concatenated "text" of the content[] blocks of type "text".
 * Bodies are canonical JSON (same arguments, same bytes). `temperature` must
 * be finite; a negative one is left out of the body (the model's default;
 * some reasoning models accept no other). `max_tokens` must be > 0. The
 * strings must be valid UTF-8. Bad arguments give PMBOT_EINVALID and send
 * nothing.
 * Up to max_attempts attempts: 429/500/502/503/504 and transport failures are
 * retried after retry-after-ms / retry-after (seconds) when the answer has
 * one, else retry_base_ms doubled each time, every wait capped at
 * max_wait_ms. On failure the reason (method, URL, status, the provider's
 * message with control characters escaped; never the key) is appended to
 * `err` (may be NULL) and `text_out` is left empty.
 */
int pmbot_llm_complete(pmbot_buf *text_out, pmbot_llm_client *c, const char *system,
	const char *user, double temperature, long max_tokens, pmbot_buf *err);

/* ==== 2. The JSON Schema validator ====================================== */

/*
 * A small JSON Schema (draft-07) validator for the schemas pm-bot ships
 * itself (docs/schemas/llm/), not for schemas from users. It knows only
 * this subset, and pmbot_jsonschema_check() refuses a schema that uses
 * anything else, so no keyword is ever silently ignored:
 *
 *   boolean schemas (true / false), type (a name or a list of names),
 *   enum, const, required, properties, additionalProperties (boolean or
 *   schema), items (one schema), minItems, maxItems, uniqueItems,
 *   minLength, maxLength (in code points), minimum, maximum,
 *   exclusiveMinimum, exclusiveMaximum (numbers, as in draft-07), pattern,
 *   allOf, if / then / else, $ref to "#/definitions/<name>" (siblings of
 *   $ref are refused rather than ignored), definitions; and the
 *   annotations $schema (draft-07's URI only), $id, $comment, title,
 *   description, default, examples.
 *
 * Semantics are draft-07's: "integer" also accepts a real with no
 * fractional part; enum and const compare numbers by value (1 equals 1.0);
 * pattern is an unanchored search. Patterns run as POSIX extended regular
 * expressions, so the check accepts only the part of the syntax where
 * POSIX ERE and ECMA-262 agree: no '.' outside a bracket expression (the
 * two differ on newlines), no backslash inside one, and outside brackets a
 * backslash only before one of .[]{}()*+?^$|\ . A string holding a NUL
 * byte never matches a pattern.
 *
 * Instance errors are diagnostics: severity error, line and column 0,
 * `path` the JSON Pointer of the offending value in the instance (for
 * SCHEMA_REQUIRED the pointer of the missing member, so "/draft", not the
 * object holding it). Codes and messages (VALUE is the value's canonical
 * JSON cut after 60 characters with "...", 'NAME' a name quoted as Python
 * writes a string, cut the same way when it is a member of the instance):
 *
 *   SCHEMA_REQUIRED    'NAME' is a required property
 *   SCHEMA_TYPE        VALUE is not of type 'T' (several: 'T1', 'T2')
 *   SCHEMA_ENUM        VALUE is not one of ENUM (ENUM as VALUE)
 *   SCHEMA_CONST       CONST was expected (CONST as VALUE)
 *   SCHEMA_ADDITIONAL  Additional properties are not allowed ('NAME' was
 *                      unexpected), one per member, at the member
 *   SCHEMA_FALSE       False schema does not allow VALUE
 *   SCHEMA_MIN_LENGTH  VALUE is too short (minLength N)
 *   SCHEMA_MAX_LENGTH  VALUE is too long (maxLength N)
 *   SCHEMA_MIN_ITEMS   VALUE is too short (minItems N)
 *   SCHEMA_MAX_ITEMS   VALUE is too long (maxItems N)
 *   SCHEMA_UNIQUE      VALUE has non-unique elements
 *   SCHEMA_MINIMUM     VALUE is less than the minimum of N
 *   SCHEMA_MAXIMUM     VALUE is greater than the maximum of N
 *   SCHEMA_EXCLUSIVE_MINIMUM  VALUE is less than or equal to the minimum of N
 *   SCHEMA_EXCLUSIVE_MAXIMUM  VALUE is greater than or equal to the maximum of N
 *   SCHEMA_PATTERN     VALUE does not match 'PATTERN'
 *   SCHEMA_TOO_DEEP    validation nested deeper than 256 schema levels
 *                      (a recursive schema on a deep value; that branch stops)
 *   SCHEMA_TOO_MANY    more than 1000 errors; validation stopped there
 *                      (path "": the first 1000 found, in document order,
 *                      are kept, so a huge bad output costs bounded memory)
 *
 * Every failing keyword is reported, not only the first; the `if` branch
 * is evaluated silently and only decides between `then` and `else`.
 * uniqueItems compares every pair, so the check requires a maxItems beside
 * it, and an array already longer than maxItems is not compared.
 */

/* How deep the validator follows schemas before SCHEMA_TOO_DEEP. */
#define PMBOT_JSONSCHEMA_MAX_DEPTH 256

/* How many errors one validation reports before SCHEMA_TOO_MANY. */
#define PMBOT_JSONSCHEMA_MAX_ERRORS 1000

/*
 * Check that `schema` is a well-formed schema of the subset above.
 * Problems are added to `diags` with `path` a JSON Pointer into the schema:
 * JSONSCHEMA_UNSUPPORTED (a keyword outside the subset, an array-form
 * `items`, a $ref with siblings, another $schema, uniqueItems without
 * maxItems) or JSONSCHEMA_INVALID (a
 * keyword's value is malformed, a pattern does not compile or is not
 * portable, a $ref does not resolve or the $refs form a cycle).
 * PMBOT_OK, PMBOT_EINVALID (diagnostics added), or PMBOT_ERROR when out
 * of memory.
 */
int pmbot_jsonschema_check(pmbot_diag_list *diags, const json_t *schema);

/*
 * Validate `instance` against `schema` (both borrowed). The schema is
 * checked first: when it is outside the subset its JSONSCHEMA_* diagnostics
 * are added and the result is PMBOT_ERROR (a schema is pm-bot's own code,
 * so that is a bug, not bad input). Otherwise the instance's SCHEMA_*
 * diagnostics are appended to `diags` sorted by path, then code, then
 * message, without exact duplicates. PMBOT_OK when the instance is valid,
 * PMBOT_EINVALID when it is not, PMBOT_ERROR when out of memory.
 */
int pmbot_jsonschema_validate(pmbot_diag_list *diags, const json_t *schema,
	const json_t *instance);

/*
 * Append the JSON-path-like form of `pointer` (a JSON Pointer into
 * `instance`) to `out`: "$" for the root, then ".name" for a member whose
 * name is an identifier ([A-Za-z_][A-Za-z0-9_]*), "[\"other name\"]" (a
 * JSON string literal) for any other member, "[3]" for an array element,
 * e.g. "/draft/tasks/0/title" -> "$.draft.tasks[0].title". `instance`
 * decides whether a token is an index; a token past the existing values
 * (a missing member) is a member name. PMBOT_OK, PMBOT_EINVALID when
 * `pointer` is not a JSON Pointer (nonempty without a leading '/', or a
 * bad '~' escape), PMBOT_ERROR when `out` cannot grow; `out` is left as it
 * was on failure.
 */
int pmbot_jsonschema_path(pmbot_buf *out, const json_t *instance, const char *pointer);

/*
 * The error records of a capability validation payload (spec 003):
 * `*out` is a new array the caller owns of {"path", "code", "message"}
 * objects, one per error diagnostic of `diags` (warnings are left out),
 * `path` converted with pmbot_jsonschema_path() against `instance`
 * (which may be NULL: then every token is a member name), sorted by path,
 * then code, then message (bytewise), exact duplicates dropped.
 * PMBOT_OK, PMBOT_EINVALID when a diagnostic's path is not a JSON Pointer,
 * PMBOT_ERROR when out of memory; `*out` is NULL on failure.
 */
int pmbot_jsonschema_records(json_t **out, const pmbot_diag_list *diags,
	const json_t *instance);

/* ==== 3. Capabilities =================================================== */

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

/* ==== 4. Prompt IR, governance, plugins, context ======================== */

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

/* ==== 5. One capability run ============================================= */

/*
 * One capability run (Mode B: `draft`, `prompt-ir`, `advise`), up to and
 * after the model call: the Prompt IR built from the request, governance
 * and the plugins, the context resolved at a commit, the report text
 * flagged where it names a policy, the prompt rendered from the template,
 * the answer checked, and for report_ir_draft the draft as a report.
 * docs/llm.md describes the commands for users.
 *
 * Nothing here prints, exits, reads the environment or calls a model: the
 * caller reads its options, the clock and the environment into a
 * pmbot_llm_run_request, asks the provider (pmbot/llm.h) itself and hands
 * the answer back.
 */

#define PMBOT_LLM_RUN_DEFAULT_BUDGET 4000

/* What a run was asked. Every pointer is borrowed for the call it is passed to. */
typedef struct {
	const char *capability;   /* a capability id: part of the IR id */
	const char *role;         /* the IR's role: "planner", "reviewer", ... */
	const char *intent;       /* the IR's intent; governance reads it */
	const char *file;         /* the report, a "file:" context reference; may be NULL */
	const char *file_text;    /* its text read outside git (`file_len` bytes);
	                             NULL: resolved from git at the commit */
	size_t file_len;
	const char *const *contexts;    /* --context references */
	size_t n_contexts;
	const char *const *constraints; /* --constraint rules */
	size_t n_constraints;
	long budget;              /* tokens; 0: PMBOT_LLM_RUN_DEFAULT_BUDGET */
	const char *now;          /* RFC 3339, the IR's created_at and {{today}} */
} pmbot_llm_run_request;

/*
 * A prepared run. Initialise with PMBOT_LLM_RUN_INIT; everything it points
 * to is owned by the run and released by pmbot_llm_run_free(), except
 * `repo` and `config`, borrowed from the caller for the run's lifetime.
 */
typedef struct {
	pmbot_repo *repo;                 /* borrowed */
	const pmbot_config *config;       /* borrowed: llm.policies, the digest threshold */
	char commit[PMBOT_OID_HEX_SIZE];  /* the context is read at this commit */
	pmbot_governance *gov;
	pmbot_promptir *input_ir;         /* as built from the request */
	pmbot_promptir *ir;               /* after governance and plugins; NULL when denied */
	json_t *transformations;          /* the plugins' records */
	pmbot_governance_result gov_result;
	json_t *context;                  /* {"refs": [...]} resolved at the commit */
	json_t *flags;                    /* policy phrases found in the input text */
	int denied;                       /* governance denied: nothing may be sent */
	char *now;                        /* a copy of the request's */
	pmbot_diag_list diags;
} pmbot_llm_run;

#define PMBOT_LLM_RUN_INIT { NULL, NULL, { 0 }, NULL, NULL, NULL, NULL, \
	PMBOT_GOVERNANCE_RESULT_INIT, NULL, NULL, 0, NULL, PMBOT_DIAG_LIST_INIT }

/*
 * Prepare `r` (PMBOT_LLM_RUN_INIT or freed) for `req` against `repo` at
 * `commit` (40 hex digits) with `config`, both borrowed for the run's
 * lifetime: build the Prompt IR (the report and the context references,
 * the constraints, the budget, the id of pmbot_llm_run_ir_id()), run
 * governance and the plugins, resolve the context (the report from
 * req->file_text when given, else from git) and flag policy phrases in it
 * (pmbot_llm_run_flag_untrusted()).
 * PMBOT_OK. PMBOT_EINVALID when governance denied (r->denied set, the
 * violations in r->gov_result; nothing may be sent), when llm.policies is
 * invalid or a context reference cannot be resolved (r->diags says why;
 * r->gov_result holds any violations already found). PMBOT_ERROR when out
 * of memory. Free `r` with pmbot_llm_run_free() whatever it returns.
 */
int pmbot_llm_run_prepare(pmbot_llm_run *r, const pmbot_llm_run_request *req, pmbot_repo *repo,
	const char *commit, const pmbot_config *config);

/* Release what `r` owns and reset it to PMBOT_LLM_RUN_INIT. */
void pmbot_llm_run_free(pmbot_llm_run *r);

/*
 * The IR id of `req` at `commit`: the first 8 hex digits of SHA-256 over the
 * canonical JSON of everything asked (capability, report, commit, context
 * references, constraints, and the SHA-256 of req->file_text when given,
 * since git does not name that text), NUL-terminated into `id`. The spec
 * draws a random id; reproducible runs need this one. 0, or PMBOT_ERROR
 * when out of memory.
 */
int pmbot_llm_run_ir_id(char id[9], const pmbot_llm_run_request *req, const char *commit);

/*
 * Report text is untrusted: flag each phrase in a resolved reference that a
 * policy of `gov` names, checking each text as if it were an intent and a
 * constraint. `*out` is a new array (the caller's) of
 * {"ref", "policy", "matched", "note"} in reference and violation order;
 * the text is shown to the reviewer, never obeyed and never dropped.
 * `context` ({"refs": [{"ref", "content"}...]}) is borrowed. 0, or
 * PMBOT_ERROR (`*out` NULL) when out of memory.
 */
int pmbot_llm_run_flag_untrusted(json_t **out, pmbot_governance *gov, const json_t *context);

/*
 * Every resolved reference of `context` but `skip_ref` (may be NULL), as
 * "### <ref>\n\n<content>\n\n" each, or "(none)": the {{context}} text.
 * Appends to `out` (the caller's). 0, or PMBOT_ERROR.
 */
int pmbot_llm_run_context_text(pmbot_buf *out, const json_t *context, const char *skip_ref);

/*
 * The user message of `cap` for `r`, appended to `out` (the caller's): the
 * template's variables, and only those (the renderer refuses others),
 * taken from `extra` (borrowed, may be NULL) first, else {{report}} the
 * content of reference `report_ref` (may be NULL), {{context}} the other
 * references (pmbot_llm_run_context_text()), {{constraints}} one "- " line
 * per constraint of the IR, {{repository}} `repository` ("OWNER/NAME", may
 * be NULL), {{today}} the date of r->now, any other "(none)". Returns as
 * pmbot_capability_render_prompt(), diagnostics added to `diags`.
 */
int pmbot_llm_run_render(pmbot_buf *out, const pmbot_llm_run *r, const pmbot_capability *cap,
	const char *report_ref, const json_t *extra, const char *repository, pmbot_diag_list *diags);

/*
 * What a prepared run would send for the user message `user` (`len`
 * bytes), and what it would cost, without sending it (`prompt-ir`):
 * `*out` is a new object (the caller's), {"ir": the IR after governance
 * and plugins, "transformations", "governance": {"approved": true,
 * "violations"}, "flags", "policy": `policy` (the class policy's effective
 * options, borrowed), "prompt": {"system", "user", "characters",
 * "estimated_input_tokens" (a quarter of the characters, rounded up),
 * "input_hash" (SHA-256 of `user`)}}. 0, or PMBOT_ERROR (`*out` NULL).
 */
int pmbot_llm_run_preview(json_t **out, const pmbot_llm_run *r, const json_t *policy,
	const char *user, size_t len);

/*
 * Check the model's `answer` (`len` bytes) to the user message `user` for
 * `cap` (pmbot_capability_run_output()) and describe the run for the audit
 * ledger: `*audit` gets pmbot_capability_audit_fields() of `model`,
 * `provider`, the SHA-256 of `user` and `run_id` (the IR id). Both
 * `*result` and `*audit` are new and the caller's.
 * PMBOT_OK with `*result` the checked output. PMBOT_EINVALID when the
 * answer breaks the contract: `*result` is the spec's error payload and
 * `*audit` has "outcome": "rejected". PMBOT_ERROR (both NULL) when out of
 * memory or an audit field is invalid.
 */
int pmbot_llm_run_answer(json_t **result, json_t **audit, const pmbot_capability *cap,
	const char *model, const char *provider, const char *run_id, const char *user,
	const char *answer, size_t len);

/*
 * The ledger's word for how an `advise` run of `cap` ended (static
 * storage): "advised" for read-only advice; for a mutation proposal
 * "rejected" when `refused` (the proposal broke the plan's rules) else
 * "proposed".
 */
const char *pmbot_llm_run_outcome(const pmbot_capability *cap, int refused);

/*
 * Where a proposal bundle came from: `*out` is a new object (the
 * caller's), {"kind": "proposal", "capability": cap->id, "model",
 * "provider", "input_hash"} with the last three from the run's `audit`
 * (pmbot_llm_run_answer(), borrowed). 0, or PMBOT_ERROR (`*out` NULL) when
 * out of memory or `audit` lacks one of them.
 */
int pmbot_llm_run_proposal_source(json_t **out, const pmbot_capability *cap, const json_t *audit);

/*
 * A report_ir_draft `result` as a Markdown report, appended to `out` (the
 * caller's): the title and a review notice naming `model`, `provider` and
 * `source` (the prose report), the `flags` of the run (may be NULL), the
 * assumptions and open questions, then the pm-bot:report-ir/v1 block. The
 * model's words are escaped log-safe and capped: the draft may go to a
 * terminal, and a title or a note must not forge lines of its own.
 * 0, or PMBOT_ERROR.
 */
int pmbot_llm_draft_markdown(pmbot_buf *out, const json_t *result, const json_t *flags,
	const char *model, const char *provider, const char *source);

/*
 * Check a draft (`len` bytes of Markdown named `name` in diagnostics)
 * against every ReportIR v1 rule, as the report it becomes. PMBOT_OK,
 * PMBOT_EINVALID (diagnostics added to `diags`), PMBOT_ERROR.
 */
int pmbot_llm_draft_check(pmbot_diag_list *diags, const char *markdown, size_t len,
	const char *name);

#endif
