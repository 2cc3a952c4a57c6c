#ifndef PMBOT_JSON_H
#define PMBOT_JSON_H

#include <jansson.h>

#include "pmbot/buf.h"

/*
 * Canonical JSON: object keys sorted by their UTF-8 bytes, no whitespace,
 * UTF-8 written as is (only '"', '\\' and control characters are escaped),
 * integers as integers, reals in the shortest digits that read back to the
 * same double, laid out as JavaScript does (plain decimals from 1e-7 up to
 * 1e21, else an exponent: 1e+21, 1e-7) and always with a '.' or an
 * exponent so they stay reals (10.0 prints as 10.0).
 * The same value always gives the same bytes: documents, hashes and plan
 * identities are built on this.
 */

/* Append the canonical form of `v` to `out`. 0, or negative on failure
 * (out of memory, buffer cap, or a non-finite real). */
int pmbot_json_canonical(pmbot_buf *out, const json_t *v);

/* Append `s` (len bytes, valid UTF-8) as a canonical JSON string literal. */
int pmbot_json_quote(pmbot_buf *out, const char *s, size_t len);

/*
 * Escape one JSON Pointer reference token ("~" -> "~0", "/" -> "~1") and
 * append "/token" to `out`.
 */
int pmbot_json_pointer_push(pmbot_buf *out, const char *token);

/* Append "/<index>" to `out`. */
int pmbot_json_pointer_push_index(pmbot_buf *out, size_t index);

/*
 * A new array of the `n` strings of `v` (the caller owns it), or NULL when
 * out of memory or a string is not UTF-8.
 */
json_t *pmbot_json_strings(char *const *v, size_t n);

/* Compare two JSON values structurally (reals and integers never equal). */
int pmbot_json_equal(const json_t *a, const json_t *b);

/*
 * 1 when `d` is finite and has no fraction (-0.0 counts), else 0. In place
 * of floor(), the one function pm-bot took from libm: without it the
 * library is not loaded at every start.
 */
int pmbot_json_is_whole(double d);

/* "an object", "a string", "an integer", "a number", "a boolean", "null": for messages. Static storage. */
const char *pmbot_json_type_name(const json_t *v);

#endif
