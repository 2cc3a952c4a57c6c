#ifndef PMBOT_JSONSCHEMA_H
#define PMBOT_JSONSCHEMA_H

#include <jansson.h>

#include "pmbot/buf.h"
#include "pmbot/diag.h"

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

#endif
