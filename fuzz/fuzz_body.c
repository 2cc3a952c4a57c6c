/*
 * libFuzzer target for pmbot_body_parse(), pmbot_body_get() and
 * pmbot_body_rev(): issue bodies are written by anyone who can open or edit
 * an issue, and the field sync and the planner read them (headings, the
 * identity marker and its rev).
 *
 * Input: the issue body, passed with its exact length and no terminator.
 * Properties checked (abort on failure):
 *  - parsing succeeds (or runs out of memory) and adds only the marker
 *    warnings; every field has a heading and a value, lines increase;
 *  - the marker status agrees with the rest: OK exactly when there is an
 *    id (no whitespace, no comment delimiter) and a 64-hex rev; a marker
 *    line exactly when the status is not NONE;
 *  - every heading finds a value through pmbot_body_get();
 *  - appending a well-formed marker line gives a body whose marker is OK
 *    (when there was none) or MULTIPLE, and whose rev is the same: the rev
 *    ignores marker lines, so pm-bot's own marker never changes it;
 *  - so does putting the marker and a blank line first, as pm-bot writes
 *    bodies, with the same fields and values (the rev when the body does
 *    not open with a blank line: after a leading marker those are skipped);
 *  - a second parse gives the same result.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/buf.h"
#include "pmbot/diag.h"
#include "pmbot/hash.h"
#include "pmbot/render.h"

#include "fuzz_util.h"
#include "pmbot/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MARKER "<!-- pm-bot:id=epic:fuzz rev=" \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef -->"

static int lower_hex(const char *s, size_t n)
{
	size_t i;

	if (strlen(s) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* Is the first line of s[0..len) empty or spaces and tabs only? */
static int opens_blank(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i == len || s[i] == '\n' || s[i] == '\r';
}

/* Parse `len` bytes at `text`; describe the result in `out`. 0, or -1 out of memory. */
static int parse(pmbot_buf *out, pmbot_body *b, const char *text, size_t len)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	size_t i;
	int rc, last = 0;

	rc = pmbot_body_parse(b, text, len, &diags);
	if (rc == PMBOT_ERROR) {
		CHECK(b->n_fields == 0 && !b->fields && !b->stable_id);
		pmbot_diag_list_free(&diags);
		return -1;
	}
	CHECK(rc == 0);
	CHECK(diags.errors == 0);
	fuzz_check_diags(&diags, out);
	for (i = 0; i < diags.count; i++)
		CHECK(!strcmp(diags.items[i].code, "BODY_MARKER_MALFORMED") ||
			!strcmp(diags.items[i].code, "BODY_MARKER_MULTIPLE"));
	for (i = 0; i < b->n_fields; i++) {
		const pmbot_body_field *f = &b->fields[i];

		CHECK(f->heading && f->value);
		CHECK(f->line > last);
		last = f->line;
		CHECK(pmbot_body_heading_eq(f->heading, f->heading) == 1);
		CHECK(pmbot_body_get(b, f->heading) != NULL);
		CHECK(pmbot_buf_printf(out, "%d %s\n%s\n", f->line, f->heading, f->value) == 0);
	}
	switch (b->marker) {
	case PMBOT_MARKER_OK:
		CHECK(b->stable_id && b->stable_id[0]);
		CHECK(!strpbrk(b->stable_id, " \t\r\n\f\v"));
		CHECK(!strstr(b->stable_id, "<!--") && !strstr(b->stable_id, "-->"));
		CHECK(lower_hex(b->rev, 64));
		CHECK(b->marker_line > 0);
		break;
	case PMBOT_MARKER_NONE:
		CHECK(b->marker_line == 0);
		/* fall through */
	case PMBOT_MARKER_MALFORMED:
	case PMBOT_MARKER_MULTIPLE:
		CHECK(!b->stable_id && b->rev[0] == '\0');
		if (b->marker != PMBOT_MARKER_NONE)
			CHECK(b->marker_line > 0);
		break;
	default:
		CHECK(0);
	}
	CHECK(pmbot_buf_printf(out, "marker %d %d %s %s\n", (int)b->marker, b->marker_line,
		b->stable_id ? b->stable_id : "-", b->rev) == 0);
	pmbot_diag_list_free(&diags);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *exact = fuzz_exact_copy(data, size);
	pmbot_buf one = PMBOT_BUF_INIT, two = PMBOT_BUF_INIT, marked = PMBOT_BUF_INIT;
	pmbot_body b1, b2, b3;
	char rev1[PMBOT_SHA256_HEX_SIZE], rev2[PMBOT_SHA256_HEX_SIZE];
	int r1, r2;

	memset(&b1, 0, sizeof(b1));
	memset(&b2, 0, sizeof(b2));
	memset(&b3, 0, sizeof(b3));
	r1 = parse(&one, &b1, exact, size);
	r2 = parse(&two, &b2, exact, size);
	if (r1 == 0 && r2 == 0)
		CHECK(fuzz_same(&one, &two));
	if (r1 == 0 && pmbot_body_rev(rev1, exact, size) == 0) {
		CHECK(lower_hex(rev1, 64));
		if (size)
			CHECK(pmbot_buf_put(&marked, exact, size) == 0);
		CHECK(pmbot_buf_puts(&marked, "\n" MARKER) == 0);
		pmbot_buf_clear(&two);
		if (parse(&two, &b3, marked.buf, marked.len) == 0) {
			if (b1.marker == PMBOT_MARKER_NONE) {
				CHECK(b3.marker == PMBOT_MARKER_OK);
				CHECK(!strcmp(b3.stable_id, "epic:fuzz"));
			} else {
				CHECK(b3.marker == PMBOT_MARKER_MULTIPLE);
			}
			/* The fields before the marker are the same ones. */
			CHECK(b3.n_fields == b1.n_fields);
			CHECK(pmbot_body_rev(rev2, marked.buf, marked.len) == 0);
			CHECK(!strcmp(rev1, rev2));
		}
		pmbot_body_free(&b3);
		pmbot_buf_clear(&marked);
		pmbot_buf_clear(&two);
		CHECK(pmbot_buf_puts(&marked, MARKER "\n\n") == 0);
		if (size)
			CHECK(pmbot_buf_put(&marked, exact, size) == 0);
		if (parse(&two, &b3, marked.buf, marked.len) == 0) {
			size_t i;

			CHECK(b3.marker == (b1.marker == PMBOT_MARKER_NONE ? PMBOT_MARKER_OK :
				PMBOT_MARKER_MULTIPLE));
			CHECK(b3.n_fields == b1.n_fields);
			for (i = 0; i < b1.n_fields; i++) {
				CHECK(!strcmp(b3.fields[i].heading, b1.fields[i].heading));
				CHECK(!strcmp(b3.fields[i].value, b1.fields[i].value));
			}
			CHECK(pmbot_body_rev(rev2, marked.buf, marked.len) == 0);
			if (!opens_blank(exact, size))
				CHECK(!strcmp(rev1, rev2));
		}
	}
	pmbot_body_free(&b1);
	pmbot_body_free(&b2);
	pmbot_body_free(&b3);
	pmbot_buf_free(&one);
	pmbot_buf_free(&two);
	pmbot_buf_free(&marked);
	free(exact);
	return 0;
}
