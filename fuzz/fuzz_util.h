/*
 * Helpers shared by the libFuzzer targets in fuzz/ (header-only, so
 * scripts/fuzz.sh compiles each target as one file). Not part of pm-bot.
 */
#ifndef PMBOT_FUZZ_UTIL_H
#define PMBOT_FUZZ_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pmbot/buf.h"
#include "pmbot/diag.h"
#include "pmbot/json.h"

/* A broken property aborts, so libFuzzer keeps the input. */
#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

/*
 * A heap copy of exactly `len` bytes, with no terminator, so a parser that
 * reads past the length it was given trips ASan. NULL only for len 0.
 */
static inline char *fuzz_exact_copy(const uint8_t *data, size_t len)
{
	char *p;

	if (len == 0)
		return NULL;
	p = malloc(len);
	CHECK(p != NULL);
	memcpy(p, data, len);
	return p;
}

/* A NUL-terminated heap copy (the string stops at the first NUL in `data`). */
static inline char *fuzz_string_copy(const uint8_t *data, size_t len)
{
	char *p = malloc(len + 1);

	CHECK(p != NULL);
	if (len)
		memcpy(p, data, len);
	p[len] = '\0';
	return p;
}

/*
 * Every diagnostic has a code, a JSON Pointer path and a message, and the
 * counters agree with the items; the formatted lines go to `out` so two
 * runs can be compared byte for byte.
 */
static inline void fuzz_check_diags(const pmbot_diag_list *diags, pmbot_buf *out)
{
	size_t i, errors = 0;

	for (i = 0; i < diags->count; i++) {
		const pmbot_diag *d = &diags->items[i];

		CHECK(d->code && d->code[0]);
		CHECK(d->path && (d->path[0] == '\0' || d->path[0] == '/'));
		CHECK(d->message);
		CHECK(d->line >= 0 && d->column >= 0);
		if (d->severity == PMBOT_SEV_ERROR)
			errors++;
		CHECK(pmbot_diag_format(out, d) == 0);
		CHECK(pmbot_buf_putc(out, '\n') == 0);
	}
	CHECK(errors == diags->errors);
	CHECK(diags->count == diags->errors + diags->warnings);
}

/* Append the canonical JSON of `v` (or "<null>") to `out`. */
static inline void fuzz_put_json(pmbot_buf *out, const json_t *v)
{
	if (!v) {
		CHECK(pmbot_buf_puts(out, "<null>") == 0);
		return;
	}
	CHECK(pmbot_json_canonical(out, v) == 0);
	CHECK(pmbot_buf_putc(out, '\n') == 0);
}

static inline int fuzz_same(const pmbot_buf *a, const pmbot_buf *b)
{
	return a->len == b->len && (a->len == 0 || !memcmp(a->buf, b->buf, a->len));
}

#endif
