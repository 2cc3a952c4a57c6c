/*
 * libFuzzer target for report ingestion: Markdown extraction, JSON/YAML
 * parsing, ReportIR validation and the WorkGraph with its three outputs.
 *
 * Beyond "does not crash" it checks properties every input must keep, and
 * aborts when one breaks so libFuzzer saves the input:
 *  - a second load of the same bytes gives the same bytes everywhere
 *    (diagnostics, canonical JSON, Mermaid, tree): pm-bot promises
 *    determinism, and a difference points at uninitialised memory or an
 *    order that depends on addresses;
 *  - every diagnostic has a code, a JSON Pointer path and a message;
 *  - the canonical JSON of the graph is valid UTF-8 that jansson reads back
 *    to an equal value with the same canonical bytes.
 *  - the Markdown read in pieces of a few bytes (where a long file is cut:
 *    at block starts, inside lists, quotes and paragraphs) gives the blocks
 *    one parse gives, at the same lines and columns.
 * The input is passed with its exact length and no terminator, so reading
 * past `len` is caught by ASan.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pmbot/buf.h"
#include "pmbot/diag.h"
#include "pmbot/json.h"
#include "pmbot/report.h"
#include "pmbot/utf8.h"
#include "pmbot/workgraph.h"
#include "../src/report/extract.h"
#include "pmbot/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

/* Everything one load produced, as bytes to compare between runs. */
typedef struct {
	int rc;
	pmbot_buf diags;
	pmbot_buf json;
	pmbot_buf mermaid;
	pmbot_buf tree;
} run_result;

static void result_init(run_result *r)
{
	r->rc = 0;
	pmbot_buf_init(&r->diags, 0);
	pmbot_buf_init(&r->json, 0);
	pmbot_buf_init(&r->mermaid, 0);
	pmbot_buf_init(&r->tree, 0);
}

static void result_free(run_result *r)
{
	pmbot_buf_free(&r->diags);
	pmbot_buf_free(&r->json);
	pmbot_buf_free(&r->mermaid);
	pmbot_buf_free(&r->tree);
}

static void check_diags(const pmbot_diag_list *diags, pmbot_buf *out)
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
	}
	CHECK(errors == diags->errors);
	CHECK(diags->count == diags->errors + diags->warnings);
}

/* The canonical bytes read back to the same value and the same bytes. */
static void check_canonical(const pmbot_buf *canon, const json_t *doc)
{
	pmbot_buf again = PMBOT_BUF_INIT;
	json_error_t err;
	json_t *back;

	CHECK(pmbot_utf8_valid(canon->buf, canon->len, NULL, NULL, NULL));
	back = json_loadb(canon->buf, canon->len, JSON_DECODE_ANY, &err);
	CHECK(back != NULL);
	CHECK(pmbot_json_equal(doc, back));
	CHECK(pmbot_json_canonical(&again, back) == 0);
	CHECK(again.len == canon->len && !memcmp(again.buf, canon->buf, canon->len));
	json_decref(back);
	pmbot_buf_free(&again);
}

static void run_once(run_result *r, const uint8_t *data, size_t size)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = NULL;
	pmbot_limits lim;
	json_t *doc = NULL;

	pmbot_limits_default(&lim);
	r->rc = pmbot_workgraph_load(&g, "fuzz.md", (const char *)data, size, &lim, &diags);
	CHECK(r->rc == PMBOT_OK || r->rc == PMBOT_EINVALID || r->rc == PMBOT_ERROR);
	/* A rejected report must say why. */
	if (r->rc == PMBOT_EINVALID)
		CHECK(diags.errors > 0);
	if (r->rc == PMBOT_OK) {
		CHECK(g != NULL);
		CHECK(diags.errors == 0);
	}
	check_diags(&diags, &r->diags);
	if (r->rc == PMBOT_OK && g) {
		if (pmbot_workgraph_to_json(&doc, g) == 0) {
			CHECK(doc != NULL);
			CHECK(pmbot_json_canonical(&r->json, doc) == 0);
			check_canonical(&r->json, doc);
		}
		(void)pmbot_workgraph_mermaid(&r->mermaid, g);
		(void)pmbot_workgraph_tree(&r->tree, g);
	}
	json_decref(doc);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&diags);
}

static int same(const pmbot_buf *a, const pmbot_buf *b)
{
	return a->len == b->len && !memcmp(a->buf, b->buf, a->len);
}

/* Every field of every block, as bytes (0: out of memory). */
static int describe_blocks(pmbot_buf *b, const char *md, size_t len, size_t chunk)
{
	pmbot_extract_list list = PMBOT_EXTRACT_LIST_INIT;
	size_t i;
	int ok = pmbot_extract_blocks_chunked(&list, md, len, chunk, 0) == 0;

	for (i = 0; ok && i < list.count; i++) {
		const pmbot_block *k = &list.items[i].block;

		ok = pmbot_buf_printf(b, "%d %d %d %d %d [%s] %zu:", (int)list.items[i].kind,
			k->fence_line, k->content_line, k->content_column, (int)k->format, k->info,
			k->len) == 0 && pmbot_buf_put(b, k->text, k->len) == 0;
	}
	pmbot_extract_list_free(&list);
	return ok;
}

static void check_pieces(const char *md, size_t len)
{
	static const size_t chunks[] = { 1, 5, 16, 100 };
	pmbot_buf whole = PMBOT_BUF_INIT, part = PMBOT_BUF_INIT;
	size_t i;

	if (describe_blocks(&whole, md, len, SIZE_MAX)) {
		for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
			pmbot_buf_clear(&part);
			if (describe_blocks(&part, md, len, chunks[i]))
				CHECK(same(&whole, &part));
		}
	}
	pmbot_buf_free(&whole);
	pmbot_buf_free(&part);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run_result one, two;

	result_init(&one);
	result_init(&two);
	run_once(&one, data, size);
	/* Out of memory is the one outcome allowed to differ between runs. */
	if (one.rc != PMBOT_ERROR) {
		run_once(&two, data, size);
		CHECK(one.rc == two.rc);
		CHECK(same(&one.diags, &two.diags));
		CHECK(same(&one.json, &two.json));
		CHECK(same(&one.mermaid, &two.mermaid));
		CHECK(same(&one.tree, &two.tree));
	}
	result_free(&one);
	result_free(&two);
	check_pieces((const char *)data, size);
	return 0;
}
