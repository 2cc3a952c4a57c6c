#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

#include "pmbot/action.h"
#include "pmbot/source.h"
#include "pmbot/fs.h"
#include "pmbot/plan.h"
#include "pmbot/render.h"
#include "pmbot/state.h"
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

/*
 * The plan comment. Bundles are real: pmbot_plan_build over a report's
 * WorkGraph against an empty state (every item is created), edited only
 * where a test needs a conflict or an item that already exists.
 */

#define TARGET "acme/widgets"
#define REPORT_FILE "plans/gauges.md"
#define HEAD_SHA "0123456789abcdef0123456789abcdef01234567"
#define HASH64 "89abcdef0123456789abcdef0123456789abcdef0123456789abcdef01234567"

/* ---- helpers -------------------------------------------------------------- */

static char *read_text(const char *path)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	if (pmbot_fs_read(&b, path) < 0)
		fail_msg("cannot read %s", path);
	return pmbot_buf_detach(&b, NULL);
}

static pmbot_workgraph *load_report(const char *text)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = NULL;
	pmbot_limits lim;
	int rc;

	pmbot_limits_default(&lim);
	rc = pmbot_workgraph_load(&g, REPORT_FILE, text, strlen(text), &lim, &d);
	if (rc != PMBOT_OK || d.errors)
		fail_msg("test report rejected: %s", d.count ? d.items[0].message : "?");
	pmbot_diag_list_free(&d);
	return g;
}

/*
 * A report of feature "feat:f", more `features` (", {…}" members or "") and
 * `tasks` (JSON array members).
 */
static char *report_of(const char *features, const char *tasks)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_buf_printf(&b, "# Generated\n\n```pm-bot:report-ir/v1\n"
		"{\"schema_version\": \"report_ir/v1\",\n"
		" \"report\": {\"title\": \"T\", \"generated_at\": \"2026-11-01\", "
		"\"scope\": {\"org\": \"acme\"}},\n"
		" \"features\": [{\"stable_id\": \"feat:f\", \"title\": \"F\", \"area\": \"ui\", "
		"\"priority\": \"P1\"}%s],\n \"tasks\": [%s]}\n```\n", features, tasks), 0);
	return pmbot_buf_detach(&b, NULL);
}

/* The bundle of `g` planned against an empty state (new reference). */
static json_t *plan_empty(const pmbot_workgraph *g)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_config *config = NULL;
	pmbot_formset *forms = NULL;
	pmbot_state *st = NULL;
	pmbot_plan_input in;
	json_t *bundle = NULL;

	assert_int_equal(pmbot_config_default(&config, TARGET), PMBOT_OK);
	assert_int_equal(pmbot_formset_new(&forms, &config->labels), PMBOT_OK);
	assert_int_equal(pmbot_state_new(&st), PMBOT_OK);
	memset(&in, 0, sizeof(in));
	in.graph = g;
	in.config = config;
	in.forms = forms;
	in.state = st;
	in.target = TARGET;
	if (pmbot_plan_build(&bundle, &in, &d) != PMBOT_OK)
		fail_msg("test plan rejected: %s %s", d.count ? d.items[0].code : "?",
			d.count ? d.items[0].message : "");
	assert_non_null(bundle);
	pmbot_diag_list_free(&d);
	pmbot_state_free(st);
	pmbot_formset_free(forms);
	pmbot_config_free(config);
	return bundle;
}

struct fixture {
	pmbot_workgraph *graph;
	json_t *bundle;
};

static void gauges(struct fixture *f)
{
	char *text = read_text("tests/fixtures/plan/gauges.md");

	f->graph = load_report(text);
	free(text);
	f->bundle = plan_empty(f->graph);
}

static void fixture_of(struct fixture *f, char *report)
{
	f->graph = load_report(report);
	free(report);
	f->bundle = plan_empty(f->graph);
}

static void fixture_free(struct fixture *f)
{
	pmbot_workgraph_free(f->graph);
	json_decref(f->bundle);
}

/* Drop every create_issue of `sid`: as if the issue existed already. */
static void drop_creates(json_t *bundle, const char *sid)
{
	json_t *cs = json_object_get(bundle, "changesets");
	size_t i = json_array_size(cs), dropped = 0;

	while (i--) {
		json_t *c = json_array_get(cs, i);

		if (!strcmp(json_string_value(json_object_get(c, "operation")), "create_issue") &&
		    !strcmp(json_string_value(json_object_get(json_object_get(c, "target"),
			    "stable_id")), sid)) {
			assert_int_equal(json_array_remove(cs, i), 0);
			dropped++;
		}
	}
	assert_int_equal(dropped, 1);
}

static void add_conflict(json_t *bundle, const char *sid)
{
	json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:s}", "stable_id", sid, "ref", TARGET "#7",
		"reason", "body edited by a human", "expected_rev", "aaaa", "actual_rev", "bbbb");

	assert_non_null(c);
	assert_int_equal(json_array_append_new(json_object_get(bundle, "conflicts"), c), 0);
}

static void meta_init(pmbot_comment_meta *m, const char *kind, long number, const char *head,
	const char *hash, const char *status, const char *run)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->kind, sizeof(m->kind), "%s", kind);
	m->number = number;
	snprintf(m->head, sizeof(m->head), "%s", head);
	snprintf(m->plan_hash, sizeof(m->plan_hash), "%s", hash);
	snprintf(m->status, sizeof(m->status), "%s", status);
	snprintf(m->run, sizeof(m->run), "%s", run);
}

static char *header_of(const pmbot_comment_meta *m)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_comment_header(&b, m), PMBOT_OK);
	return pmbot_buf_detach(&b, NULL);
}

static char *render(const pmbot_comment_input *in)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_comment_render(&b, in), PMBOT_OK);
	return pmbot_buf_detach(&b, NULL);
}

static char *mermaid(const pmbot_workgraph *g, const json_t *bundle, size_t max_nodes)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_comment_mermaid(&b, g, bundle, max_nodes), PMBOT_OK);
	return pmbot_buf_detach(&b, NULL);
}

static size_t code_points(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static size_t occurrences(const char *s, const char *what)
{
	size_t n = 0, len = strlen(what);

	while ((s = strstr(s, what))) {
		n++;
		s += len;
	}
	return n;
}

static void assert_valid_utf8(const char *s)
{
	size_t bad = 0;

	if (!pmbot_utf8_valid(s, strlen(s), &bad, NULL, NULL))
		fail_msg("invalid UTF-8 at byte %zu", bad);
}

/* `s` holds `a` before `b`, both present. */
static void assert_before(const char *s, const char *a, const char *b)
{
	const char *pa = strstr(s, a), *pb = strstr(s, b);

	if (!pa || !pb || pa >= pb)
		fail_msg("expected \"%s\" before \"%s\"", a, b);
}

static cmark_node *parse_gfm(const char *md, cmark_parser **parser)
{
	cmark_syntax_extension *table;
	cmark_node *doc;

	cmark_gfm_core_extensions_ensure_registered();
	*parser = cmark_parser_new(CMARK_OPT_DEFAULT);
	assert_non_null(*parser);
	table = cmark_find_syntax_extension("table");
	assert_non_null(table);
	assert_int_equal(cmark_parser_attach_syntax_extension(*parser, table), 1);
	cmark_parser_feed(*parser, md, strlen(md));
	doc = cmark_parser_finish(*parser);
	assert_non_null(doc);
	return doc;
}

/* HTML as GitHub would build it, raw HTML kept, so an injection would show. */
static char *to_html(const char *md)
{
	cmark_parser *parser;
	cmark_node *doc = parse_gfm(md, &parser);
	char *html = cmark_render_html(doc, CMARK_OPT_UNSAFE, cmark_parser_get_syntax_extensions(parser));

	cmark_node_free(doc);
	cmark_parser_free(parser);
	return html;
}

/* The literals of the fenced code blocks with info `info`, joined by "\x01". */
static char *code_blocks(const char *md, const char *info, size_t *count)
{
	cmark_parser *parser;
	cmark_node *doc = parse_gfm(md, &parser);
	cmark_iter *it = cmark_iter_new(doc);
	pmbot_buf all = PMBOT_BUF_INIT;
	cmark_event_type ev;

	*count = 0;
	while ((ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
		cmark_node *n = cmark_iter_get_node(it);

		if (ev != CMARK_EVENT_ENTER || cmark_node_get_type(n) != CMARK_NODE_CODE_BLOCK ||
		    strcmp(cmark_node_get_fence_info(n), info))
			continue;
		if ((*count)++)
			assert_int_equal(pmbot_buf_putc(&all, '\x01'), 0);
		assert_int_equal(pmbot_buf_puts(&all, cmark_node_get_literal(n)), 0);
	}
	cmark_iter_free(it);
	cmark_node_free(doc);
	cmark_parser_free(parser);
	return pmbot_buf_detach(&all, NULL);
}

/* The first block of the document is an HTML block that is exactly `line`. */
static void assert_first_block_is(const char *md, const char *line)
{
	cmark_parser *parser;
	cmark_node *doc = parse_gfm(md, &parser), *first = cmark_node_first_child(doc);
	const char *lit;

	assert_non_null(first);
	assert_int_equal(cmark_node_get_type(first), CMARK_NODE_HTML_BLOCK);
	lit = cmark_node_get_literal(first);
	assert_int_equal(strncmp(lit, line, strlen(line)), 0);
	assert_string_equal(lit + strlen(line), "\n");
	cmark_node_free(doc);
	cmark_parser_free(parser);
}

/* ---- header ---------------------------------------------------------------- */

static void test_header__is_canonical_json_inside_an_html_comment(void **state)
{
	pmbot_comment_meta m;
	char *h;

	(void)state;
	meta_init(&m, "plan", 12, HEAD_SHA, HASH64, "planned", "");
	h = header_of(&m);
	assert_string_equal(h, "<!-- pm-bot:plan {\"head\":\"" HEAD_SHA "\",\"kind\":\"plan\","
		"\"number\":12,\"plan_hash\":\"" HASH64 "\",\"run\":\"\",\"status\":\"planned\","
		"\"v\":1} -->");
	free(h);
}

static void test_header__appends_to_what_the_buffer_holds(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	pmbot_comment_meta m;

	(void)state;
	meta_init(&m, "plan", 3, "", "", "invalid", "");
	assert_int_equal(pmbot_buf_puts(&b, "x"), 0);
	assert_int_equal(pmbot_comment_header(&b, &m), PMBOT_OK);
	assert_int_equal(strncmp(b.buf, "x" PMBOT_COMMENT_PREFIX, strlen(PMBOT_COMMENT_PREFIX) + 1), 0);
	assert_non_null(strstr(b.buf, "\"head\":\"\""));
	assert_non_null(strstr(b.buf, "\"plan_hash\":\"\""));
	pmbot_buf_free(&b);
}

static void test_header__never_holds_a_double_dash_and_reads_back_the_same(void **state)
{
	static const char *const runs[] = { "1-2", "1--2", "9---9", "--", "-", "a-b--c---d----" };
	pmbot_comment_meta m, back;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		const char *json;
		json_t *o;
		char *h;
		size_t jl;

		meta_init(&m, "field-sync", 4, HEAD_SHA, "", "applying", runs[i]);
		h = header_of(&m);
		json = h + strlen(PMBOT_COMMENT_PREFIX);
		jl = strlen(json) - strlen(" -->");
		/* the only "--" is the one that closes the comment */
		assert_int_equal(occurrences(h, "--"), 2);
		assert_non_null(strstr(h, "-->"));
		assert_ptr_equal(strstr(h, "-->"), h + strlen(h) - 3);
		assert_null(memchr(json, '>', jl));
		/* any JSON reader gets the values back */
		o = json_loadb(json, jl, 0, NULL);
		assert_non_null(o);
		assert_string_equal(json_string_value(json_object_get(o, "run")), runs[i]);
		assert_string_equal(json_string_value(json_object_get(o, "kind")), "field-sync");
		json_decref(o);
		assert_int_equal(pmbot_comment_parse(&back, h, strlen(h)), PMBOT_OK);
		assert_string_equal(back.run, runs[i]);
		free(h);
	}
}

static void test_header__keeps_a_single_dash_readable(void **state)
{
	pmbot_comment_meta m;
	char *h;

	(void)state;
	meta_init(&m, "field-sync", 4, "", "", "planned", "");
	h = header_of(&m);
	assert_non_null(strstr(h, "\"kind\":\"field-sync\""));
	free(h);
}

static void test_header__the_longest_header_is_455_code_points(void **state)
{
	pmbot_comment_meta m;
	char run[64];
	char *h;

	(void)state;
	memset(run, '-', sizeof(run) - 1);
	run[sizeof(run) - 1] = '\0';
	meta_init(&m, "field-sync", LONG_MAX, HEAD_SHA, HASH64, "applying", run);
	h = header_of(&m);
	/* 63 dashes: 32 kept, 31 written as \u002d */
	assert_int_equal(occurrences(h, "\\u002d"), 31);
	assert_int_equal(strlen(h), 455 - strlen("no_changes") + strlen("applying"));
	free(h);
	snprintf(m.status, sizeof(m.status), "no_changes");
	m.run[0] = '\0';
	h = header_of(&m);
	assert_true(strlen(h) < 455);
	free(h);
}

static void test_header__rejects_invalid_meta_and_leaves_the_buffer(void **state)
{
	pmbot_comment_meta bad[16];
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t n = 0, i;

	(void)state;
	meta_init(&bad[n++], "review", 1, "", "", "planned", "");
	meta_init(&bad[n++], "plan", 1, "", "", "done", "");
	meta_init(&bad[n++], "plan", -1, "", "", "planned", "");
	meta_init(&bad[n++], "plan", 1, "0123456789abcdef0123456789abcdef0123456", "", "planned", "");
	meta_init(&bad[n++], "plan", 1, "0123456789ABCDEF0123456789abcdef01234567", "", "planned", "");
	meta_init(&bad[n++], "plan", 1, "", "0123", "planned", "");
	meta_init(&bad[n++], "plan", 1, "", HEAD_SHA, "planned", "");
	meta_init(&bad[n++], "plan", 1, "", "", "applying", "");
	meta_init(&bad[n++], "plan", 1, "", "", "applied", "42");
	meta_init(&bad[n++], "plan", 1, "", "", "applying", "4 2");
	meta_init(&bad[n++], "plan", 1, "", "", "applying", "4>2");
	meta_init(&bad[n++], "plan", 1, "", "", "applying", "\"x\"");
	meta_init(&bad[n++], "plan", 1, "", "", "planned", "");
	memset(bad[n - 1].kind, 'p', sizeof(bad[n - 1].kind)); /* not NUL-terminated */
	assert_int_equal(pmbot_buf_puts(&b, "kept"), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(pmbot_comment_header(&b, &bad[i]), PMBOT_EINVALID);
		assert_string_equal(b.buf, "kept");
	}
	assert_int_equal(pmbot_comment_header(&b, NULL), PMBOT_EINVALID);
	pmbot_buf_free(&b);
}

/* ---- parse ------------------------------------------------------------------ */

static void test_parse__reads_back_every_kind_and_status(void **state)
{
	static const char *const statuses[] = {
		"planned", "no_changes", "invalid", "applying", "applied", "failed", "stale",
	};
	pmbot_comment_meta m, back;
	size_t i, k;

	(void)state;
	for (k = 0; k < 2; k++)
		for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
			int applying = !strcmp(statuses[i], "applying");
			pmbot_buf b = PMBOT_BUF_INIT;

			meta_init(&m, k ? "field-sync" : "plan", (long)(i * 1000 + k), k ? "" : HEAD_SHA,
				i % 2 ? HASH64 : "", statuses[i], applying ? "1234567-2" : "");
			assert_int_equal(pmbot_comment_header(&b, &m), PMBOT_OK);
			assert_int_equal(pmbot_buf_puts(&b, "\n\nanything at all\n"), 0);
			assert_int_equal(pmbot_comment_parse(&back, b.buf, b.len), PMBOT_OK);
			assert_memory_equal(&back, &m, sizeof(m));
			pmbot_buf_free(&b);
		}
}

static void test_parse__a_comment_without_the_prefix_is_not_found(void **state)
{
	static const char *const bodies[] = {
		"", "hello", "<!-- pm-bot:plan", " <!-- pm-bot:plan {} -->", "<!-- pm-bot:plans {} -->",
		"<!--pm-bot:plan {} -->", "## pm-bot plan\n<!-- pm-bot:plan {} -->",
	};
	pmbot_comment_meta m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		assert_int_equal(pmbot_comment_parse(&m, bodies[i], strlen(bodies[i])), PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_comment_parse(&m, NULL, 0), PMBOT_ENOTFOUND);
}

static void test_parse__rejects_malformed_headers_and_zeroes_the_result(void **state)
{
#define J(rest) "<!-- pm-bot:plan {\"head\":\"\",\"kind\":\"plan\",\"number\":5," \
	"\"plan_hash\":\"\",\"run\":\"\",\"status\":\"planned\"" rest
	static const char *const bodies[] = {
		J(",\"v\":1}"),                               /* no " -->" */
		J(",\"v\":1} -->x"),                          /* text after the comment */
		J(",\"v\":1}-->"),                            /* no space before it */
		J(",\"v\":1} --> -->"),                       /* the comment ends early */
		J(",\"v\":1}\n -->"),                         /* closed on a later line */
		J(",\"v\":2} -->"),
		J(",\"v\":\"1\"} -->"),
		J("} -->"),                                   /* v missing */
		J(",\"v\":1,\"extra\":0} -->"),
		J(",\"v\":1,\"v\":1} -->"),                   /* duplicate key */
		J(",\"v\":1 -->"),                            /* not JSON */
		J(",\"v\":1}} -->"),
		"<!-- pm-bot:plan [] -->",
		"<!-- pm-bot:plan  -->",
		"<!-- pm-bot:plan -->",
		"<!-- pm-bot:plan {\"head\":\"\",\"kind\":\"plan\",\"number\":-5,\"plan_hash\":\"\","
			"\"run\":\"\",\"status\":\"planned\",\"v\":1} -->",
		"<!-- pm-bot:plan {\"head\":\"\",\"kind\":\"plan\",\"number\":5.0,\"plan_hash\":\"\","
			"\"run\":\"\",\"status\":\"planned\",\"v\":1} -->",
		"<!-- pm-bot:plan {\"head\":\"\",\"kind\":\"plan\",\"number\":5,\"plan_hash\":\"\","
			"\"run\":\"\",\"status\":\"busy\",\"v\":1} -->",
		"<!-- pm-bot:plan {\"head\":\"\",\"kind\":\"plan\",\"number\":5,\"plan_hash\":\"\","
			"\"run\":\"7\",\"status\":\"planned\",\"v\":1} -->",
		"<!-- pm-bot:plan {\"head\":\"\",\"kind\":\"plan\",\"number\":5,\"plan_hash\":\"\","
			"\"run\":\"a\\u0000b\",\"status\":\"applying\",\"v\":1} -->",
		"<!-- pm-bot:plan {\"head\":\"\",\"kind\":\"plan\",\"number\":5,\"plan_hash\":\"\","
			"\"run\":\"\",\"status\":\"planned\",\"v\":1,\"x\":\"\xff\"} -->",
		"<!-- pm-bot:plan {\"head\":\"\",\"kind\":\"plan\",\"number\":5,\"plan_hash\":\"\","
			"\"run\":\"" "0123456789012345678901234567890123456789012345678901234567890123"
			"\",\"status\":\"applying\",\"v\":1} -->",
	};
#undef J
	pmbot_comment_meta m, zero;
	pmbot_buf big = PMBOT_BUF_INIT;
	size_t i;

	(void)state;
	memset(&zero, 0, sizeof(zero));
	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		memset(&m, 0x5a, sizeof(m));
		if (pmbot_comment_parse(&m, bodies[i], strlen(bodies[i])) != PMBOT_EINVALID)
			fail_msg("accepted: %s", bodies[i]);
		assert_memory_equal(&m, &zero, sizeof(m));
	}
	/* a valid header padded past 1024 bytes of JSON with whitespace */
	assert_int_equal(pmbot_buf_puts(&big, PMBOT_COMMENT_PREFIX "{"), 0);
	for (i = 0; i < 1024; i++)
		assert_int_equal(pmbot_buf_putc(&big, ' '), 0);
	assert_int_equal(pmbot_buf_puts(&big, "\"head\":\"\",\"kind\":\"plan\",\"number\":5,"
		"\"plan_hash\":\"\",\"run\":\"\",\"status\":\"planned\",\"v\":1} -->"), 0);
	assert_int_equal(pmbot_comment_parse(&m, big.buf, big.len), PMBOT_EINVALID);
	/* 900 spaces of padding are still within the limit */
	pmbot_buf_clear(&big);
	assert_int_equal(pmbot_buf_puts(&big, PMBOT_COMMENT_PREFIX "{"), 0);
	for (i = 0; i < 900; i++)
		assert_int_equal(pmbot_buf_putc(&big, ' '), 0);
	assert_int_equal(pmbot_buf_puts(&big, "\"head\":\"\",\"kind\":\"plan\",\"number\":5,"
		"\"plan_hash\":\"\",\"run\":\"\",\"status\":\"planned\",\"v\":1} -->"), 0);
	assert_int_equal(pmbot_comment_parse(&m, big.buf, big.len), PMBOT_OK);
	assert_int_equal(m.number, 5);
	pmbot_buf_free(&big);
}

static void test_parse__looks_only_at_the_first_line(void **state)
{
	pmbot_comment_meta m, back;
	pmbot_buf b = PMBOT_BUF_INIT;
	char *other;

	(void)state;
	meta_init(&m, "plan", 9, HEAD_SHA, HASH64, "planned", "");
	meta_init(&back, "plan", 1, "", "", "applying", "666");
	other = header_of(&back);
	assert_int_equal(pmbot_comment_header(&b, &m), PMBOT_OK);
	/* GitHub may hand bodies back with CRLF; a later header is only text */
	assert_int_equal(pmbot_buf_printf(&b, "\r\n%s\n\xff\xfe not UTF-8\n", other), 0);
	assert_int_equal(pmbot_comment_parse(&back, b.buf, b.len), PMBOT_OK);
	assert_memory_equal(&back, &m, sizeof(m));
	/* the length bounds the read: the body need not be NUL-terminated */
	assert_int_equal(pmbot_comment_parse(&back, b.buf, (size_t)(strstr(b.buf, "\r\n") - b.buf)),
		PMBOT_OK);
	assert_int_equal(pmbot_comment_parse(&back, b.buf, (size_t)(strstr(b.buf, "\r\n") - b.buf) - 1),
		PMBOT_EINVALID);
	free(other);
	pmbot_buf_free(&b);
}

/* ---- Mermaid ------------------------------------------------------------------ */

static void test_mermaid__draws_every_created_item_and_the_edges_among_them(void **state)
{
	struct fixture f;
	char *md;

	(void)state;
	gauges(&f);
	md = mermaid(f.graph, f.bundle, 0);
	assert_string_equal(md,
		"```mermaid\n"
		"flowchart TD\n"
		"  n0[\"epic:gauges: Gauges\"]:::created\n"
		"  n1[\"feat:dial: Dial\"]:::created\n"
		"  n2[\"feat:needle: Needle\"]:::created\n"
		"  n3[\"task:calibrate: Calibrate\"]:::created\n"
		"  n4[\"task:paint: Paint the needle\"]:::created\n"
		"  n5[\"task:wire: Wire the gauge\"]:::created\n"
		"  n0 --> n1\n"
		"  n0 --> n2\n"
		"  n1 --> n3\n"
		"  n1 --> n5\n"
		"  n2 --> n4\n"
		"  n2 -. depends on .-> n1\n"
		"  n5 -. blocked by .-> n3\n"
		"  classDef created fill:#dafbe1,stroke:#1a7f37\n"
		"  classDef changed fill:#fff8c5,stroke:#9a6700\n"
		"  classDef conflict fill:#ffebe9,stroke:#cf222e,stroke-width:2px\n"
		"```\n");
	free(md);
	fixture_free(&f);
}

static void test_mermaid__styles_conflicts_over_creates_over_changes(void **state)
{
	struct fixture f;
	char *md;

	(void)state;
	gauges(&f);
	/* task:wire and feat:dial exist: only their relationships remain */
	drop_creates(f.bundle, "task:wire");
	drop_creates(f.bundle, "feat:dial");
	add_conflict(f.bundle, "task:calibrate");
	md = mermaid(f.graph, f.bundle, 0);
	assert_non_null(strstr(md, "  n1[\"feat:dial: Dial\"]:::changed\n"));
	assert_non_null(strstr(md, "  n5[\"task:wire: Wire the gauge\"]:::changed\n"));
	assert_non_null(strstr(md, "  n3[\"task:calibrate: Calibrate\"]:::conflict\n"));
	assert_non_null(strstr(md, "  n0[\"epic:gauges: Gauges\"]:::created\n"));
	free(md);
	fixture_free(&f);
}

static void test_mermaid__items_only_named_by_a_binding_have_no_class(void **state)
{
	struct fixture f;
	json_t *cs;
	size_t i;
	char *md;

	(void)state;
	gauges(&f);
	/* keep only task:wire's changesets: it names task:calibrate as blocker, feat:dial as parent */
	cs = json_object_get(f.bundle, "changesets");
	for (i = json_array_size(cs); i--;)
		if (strcmp(json_string_value(json_object_get(json_object_get(json_array_get(cs, i),
			    "target"), "stable_id")), "task:wire"))
			assert_int_equal(json_array_remove(cs, i), 0);
	md = mermaid(f.graph, f.bundle, 0);
	assert_non_null(strstr(md, "  n0[\"feat:dial: Dial\"]\n"));
	assert_non_null(strstr(md, "  n1[\"task:calibrate: Calibrate\"]\n"));
	assert_non_null(strstr(md, "  n2[\"task:wire: Wire the gauge\"]:::created\n"));
	assert_non_null(strstr(md, "  n0 --> n2\n"));
	assert_non_null(strstr(md, "  n2 -. blocked by .-> n1\n"));
	/* neither the epic nor the needle is touched */
	assert_null(strstr(md, "epic:gauges"));
	assert_null(strstr(md, "n3"));
	free(md);
	fixture_free(&f);
}

static void test_mermaid__nothing_touched_appends_nothing(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	struct fixture f;

	(void)state;
	gauges(&f);
	assert_int_equal(json_array_clear(json_object_get(f.bundle, "changesets")), 0);
	assert_int_equal(pmbot_buf_puts(&b, "x"), 0);
	assert_int_equal(pmbot_comment_mermaid(&b, f.graph, f.bundle, 0), PMBOT_OK);
	assert_int_equal(pmbot_comment_mermaid(&b, NULL, f.bundle, 0), PMBOT_OK);
	assert_int_equal(pmbot_comment_mermaid(&b, f.graph, NULL, 0), PMBOT_OK);
	assert_string_equal(b.buf, "x");
	pmbot_buf_free(&b);
	fixture_free(&f);
}

/*
 * n tasks "task:tNNNNN", each blocked by the one before; the first 100
 * under feat:f, each further 100 under a feature "feat:gN" of their own
 * (GitHub allows 100 sub-issues per parent).
 */
static char *chain_report(size_t n)
{
	pmbot_buf t = PMBOT_BUF_INIT, feats = PMBOT_BUF_INIT;
	size_t i;
	char *r;

	for (i = 100; i < n; i += 100)
		assert_int_equal(pmbot_buf_printf(&feats, ", {\"stable_id\": \"feat:g%zu\", "
			"\"title\": \"G\", \"area\": \"ui\", \"priority\": \"P1\"}", i / 100), 0);
	for (i = 0; i < n; i++) {
		char feature[32];

		snprintf(feature, sizeof(feature), i < 100 ? "feat:f" : "feat:g%zu", i / 100);
		assert_int_equal(pmbot_buf_printf(&t, "%s{\"stable_id\": \"task:t%05zu\", \"title\": "
			"\"Task %zu\", \"feature_id\": \"%s\", \"area\": \"ui\", \"priority\": \"P2\"",
			i ? ",\n" : "", i, i, feature), 0);
		if (i)
			assert_int_equal(pmbot_buf_printf(&t, ", \"blocked_by\": [\"task:t%05zu\"]",
				i - 1), 0);
		assert_int_equal(pmbot_buf_putc(&t, '}'), 0);
	}
	r = report_of(feats.buf, t.buf);
	pmbot_buf_free(&t);
	pmbot_buf_free(&feats);
	return r;
}

static void test_mermaid__caps_nodes_conflicts_first_and_counts_the_rest(void **state)
{
	struct fixture f;
	char *md, label[64];

	(void)state;
	fixture_of(&f, chain_report(60));
	add_conflict(f.bundle, "task:t00059");
	md = mermaid(f.graph, f.bundle, 10);
	/* 61 touched (feat:f and 60 tasks): the conflict, then created by stable_id */
	assert_int_equal(occurrences(md, "[\""), 10);
	assert_non_null(strstr(md, "\n*\xe2\x80\xa6 and 51 more items not shown.*\n"));
	assert_non_null(strstr(md, "  n0[\"feat:f: F\"]:::created\n"));
	assert_non_null(strstr(md, "  n1[\"task:t00000: Task 0\"]:::created\n"));
	assert_non_null(strstr(md, "  n8[\"task:t00007: Task 7\"]:::created\n"));
	snprintf(label, sizeof(label), "  n9[\"task:t00059: Task 59\"]:::conflict\n");
	assert_non_null(strstr(md, label));
	assert_null(strstr(md, "task:t00008"));
	/* edges only among shown nodes: t1 blocked by t0, but nothing reaches t59 */
	assert_non_null(strstr(md, "  n2 -. blocked by .-> n1\n"));
	assert_null(strstr(md, ".-> n9\n"));
	assert_non_null(strstr(md, "  n0 --> n9\n"));
	free(md);
	/* the default cap is 50 */
	md = mermaid(f.graph, f.bundle, 0);
	assert_int_equal(occurrences(md, "[\""), 50);
	assert_non_null(strstr(md, " and 11 more items not shown.*\n"));
	free(md);
	fixture_free(&f);
}

static void test_mermaid__hostile_titles_and_ids_cannot_break_the_diagram(void **state)
{
	static const char title[] =
		"\\\\a\\\"]:::x\\n  n0 --> n1 <b> `x` ``` & #35; | [y] --> \\u0007 ";
	struct fixture f;
	pmbot_buf tasks = PMBOT_BUF_INIT;
	char *md, *lit, *line;
	size_t blocks, nodes = 0;

	(void)state;
	assert_int_equal(pmbot_buf_printf(&tasks, "{\"stable_id\": \"task:\\\"]`<x>`\", "
		"\"title\": \"%s\", \"feature_id\": \"feat:f\", \"area\": \"ui\", \"priority\": \"P1\"}",
		title), 0);
	fixture_of(&f, report_of("", tasks.buf));
	pmbot_buf_free(&tasks);
	md = mermaid(f.graph, f.bundle, 0);
	/* one fence, and cmark reads the whole diagram inside it */
	lit = code_blocks(md, "mermaid", &blocks);
	assert_int_equal(blocks, 1);
	assert_int_equal(strncmp(lit, "flowchart TD\n", 13), 0);
	assert_non_null(strstr(lit, "classDef conflict"));
	for (line = lit; (line = strstr(line, "\n  n")); line++) {
		const char *open = strstr(line, "[\""), *end = strchr(line + 1, '\n');
		const char *close;

		if (!open || open > end)
			continue;
		nodes++;
		close = strstr(open + 2, "\"]");
		assert_non_null(close);
		/* the quoted label holds no quote, bracket, angle bracket or backtick of its own */
		for (; open + 2 < close; open++)
			assert_null(strchr("\"[]<>`|\\\n\r\x07", open[2]));
		assert_true(close + 2 <= end);
	}
	assert_int_equal(nodes, 2);
	/* the line break in the title is a space: "n0 --> n1" stays inside the label */
	assert_non_null(strstr(lit, "[\"task:#quot;#93;#96;#lt;x#gt;#96;: #92;a#quot;#93;:::x   "
		"n0 --#gt; n1 #lt;b#gt; #96;x#96; #96;#96;#96; #amp; #35;35; #124; #91;y#93; --#gt;   \"]"));
	free(lit);
	free(md);
	fixture_free(&f);
}

static void test_mermaid__labels_hold_no_directive_and_start_no_click_line(void **state)
{
	struct fixture f;
	pmbot_buf tasks = PMBOT_BUF_INIT;
	char *md, *lit, *line;
	size_t blocks;

	(void)state;
	assert_int_equal(pmbot_buf_puts(&tasks, "{\"stable_id\": \"task:d\", \"title\": "
		"\"%%{init: {'theme':'dark','securityLevel':'loose'}}%%\\nclick n0 call alert(1)"
		"\\r\\nclick n0 href 'https://evil.example'\", \"feature_id\": \"feat:f\", "
		"\"area\": \"ui\", \"priority\": \"P1\"}"), 0);
	fixture_of(&f, report_of("", tasks.buf));
	pmbot_buf_free(&tasks);
	md = mermaid(f.graph, f.bundle, 0);
	lit = code_blocks(md, "mermaid", &blocks);
	assert_int_equal(blocks, 1);
	assert_null(strstr(lit, "%%"));
	assert_null(strchr(lit, '%'));
	for (line = lit; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		while (*line == ' ')
			line++;
		assert_int_not_equal(strncmp(line, "click", 5), 0);
	}
	assert_non_null(strstr(lit, "[\"task:d: #37;#37;{init: {'theme':'dark','securityLevel':'loose'}}"
		"#37;#37; click n0 call"));
	free(lit);
	free(md);
	fixture_free(&f);
}

/* (The renderer refuses stable ids holding "--", so only titles carry comment delimiters.) */
static void test_render__hostile_titles_and_ids_cannot_reach_the_header_or_a_fence(void **state)
{
	static const char *const hostile[] = {
		"-->", "--!>", "<!-- x -->", "```", "~~~", "</details>", "\\u003e", "]\\\"`",
	};
	pmbot_buf tasks = PMBOT_BUF_INIT;
	pmbot_comment_meta m, back;
	pmbot_comment_input in;
	struct fixture f;
	char *body, *hdr, *lit;
	size_t i, blocks;

	(void)state;
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		assert_int_equal(pmbot_buf_printf(&tasks, "%s{\"stable_id\": \"task:%zu]\\\"`<x>\", "
			"\"title\": \"%s\\n```\\n%s -->\", \"feature_id\": \"feat:f\", \"area\": \"ui\", "
			"\"priority\": \"P1\"}", i ? ", " : "", i, hostile[i], hostile[i]), 0);
	fixture_of(&f, report_of("", tasks.buf));
	pmbot_buf_free(&tasks);
	meta_init(&m, "plan", 8, HEAD_SHA, json_string_value(json_object_get(f.bundle,
		"plan_hash")), "planned", "");
	memset(&in, 0, sizeof(in));
	in.meta = &m;
	in.bundle = f.bundle;
	in.graph = f.graph;
	body = render(&in);
	hdr = header_of(&m);
	assert_first_block_is(body, hdr);
	assert_int_equal(pmbot_comment_parse(&back, body, strlen(body)), PMBOT_OK);
	assert_memory_equal(&back, &m, sizeof(m));
	/* one diagram holding every node, and the approve command in its own block */
	lit = code_blocks(body, "mermaid", &blocks);
	assert_int_equal(blocks, 1);
	assert_int_equal(occurrences(lit, "[\""), 1 + sizeof(hostile) / sizeof(hostile[0]));
	assert_non_null(strstr(lit, "classDef conflict"));
	free(lit);
	lit = code_blocks(body, "", &blocks);
	assert_int_equal(blocks, 1);
	assert_int_equal(strncmp(lit, "/pm-bot apply ", 14), 0);
	free(lit);
	free(hdr);
	free(body);
	fixture_free(&f);
}

static void test_mermaid__labels_are_cut_at_80_code_points(void **state)
{
	pmbot_buf tasks = PMBOT_BUF_INIT, title = PMBOT_BUF_INIT, want = PMBOT_BUF_INIT;
	struct fixture f;
	size_t i;
	char *md;

	(void)state;
	/* "task:long: " is 11 code points; then 200 'é' (two bytes each) */
	for (i = 0; i < 200; i++)
		assert_int_equal(pmbot_buf_puts(&title, "\xc3\xa9"), 0);
	assert_int_equal(pmbot_buf_printf(&tasks, "{\"stable_id\": \"task:long\", \"title\": \"%s\", "
		"\"area\": \"ui\", \"priority\": \"P1\"}", title.buf), 0);
	fixture_of(&f, report_of("", tasks.buf));
	md = mermaid(f.graph, f.bundle, 0);
	assert_int_equal(pmbot_buf_puts(&want, "[\"task:long: "), 0);
	for (i = 0; i < 79 - 11; i++)
		assert_int_equal(pmbot_buf_puts(&want, "\xc3\xa9"), 0);
	assert_int_equal(pmbot_buf_puts(&want, "\xe2\x80\xa6\"]:::created\n"), 0);
	assert_non_null(strstr(md, want.buf));
	assert_valid_utf8(md);
	free(md);
	pmbot_buf_free(&tasks);
	pmbot_buf_free(&title);
	pmbot_buf_free(&want);
	fixture_free(&f);
}

/* ---- render ----------------------------------------------------------------------- */

static json_t *results_of(const char *json)
{
	json_error_t err;
	json_t *r = json_loads(json, 0, &err);

	if (!r)
		fail_msg("bad test JSON: %s", err.text);
	return r;
}

static void test_render__puts_header_notice_results_errors_diagram_and_plan_in_order(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_comment_input in;
	pmbot_comment_meta m, back;
	struct fixture f;
	json_t *results;
	char *body, *hdr;
	size_t blocks;
	char *lit;

	(void)state;
	gauges(&f);
	meta_init(&m, "plan", 12, HEAD_SHA, json_string_value(json_object_get(f.bundle,
		"plan_hash")), "failed", "");
	results = results_of("[{\"changeset_id\":\"cs-0001\",\"idempotency_key\":\"k1\","
		"\"status\":\"applied\"},{\"changeset_id\":\"cs-0002\",\"idempotency_key\":\"k2\","
		"\"status\":\"failed\",\"reason\":\"BACKEND_REFUSED\",\"message\":\"HTTP 422\"},"
		"{\"changeset_id\":\"cs-0003\",\"idempotency_key\":\"k3\",\"status\":\"pending\"}]");
	assert_int_equal(pmbot_diag_add(&diags, PMBOT_SEV_ERROR, "LIMIT_SUB_ISSUES", REPORT_FILE,
		"/epics/0", 14, 3, "too many sub-issues"), 0);
	memset(&in, 0, sizeof(in));
	in.meta = &m;
	in.bundle = f.bundle;
	in.graph = f.graph;
	in.diags = &diags;
	in.notice = "**Apply failed** at `cs-0002`.\n";
	in.results = results;
	body = render(&in);
	hdr = header_of(&m);
	assert_int_equal(strncmp(body, hdr, strlen(hdr)), 0);
	assert_int_equal(strncmp(body + strlen(hdr), "\n\n**Apply failed**", 18), 0);
	assert_before(body, "**Apply failed**", "### Apply result");
	assert_before(body, "### Apply result", "### Reports are invalid");
	assert_before(body, "### Reports are invalid", "```mermaid\n");
	assert_before(body, "```mermaid\n", "## pm-bot plan for ");
	assert_non_null(strstr(body, "| Applied | 1 |\n| Already applied | 0 |\n| Failed | 1 |\n"
		"| Denied | 0 |\n| Pending | 1 |\n"));
	assert_non_null(strstr(body, "- `cs-0002` `k2` **failed**: `BACKEND_REFUSED` \xe2\x80\x94 "
		"HTTP 422\n"));
	assert_non_null(strstr(body, "- `plans/gauges.md:14` `LIMIT_SUB_ISSUES` `/epics/0`: "
		"too many sub-issues\n"));
	/* the plan ends the body with its approve command, and one line break */
	assert_non_null(strstr(body, "/pm-bot apply "));
	assert_int_equal(body[strlen(body) - 1], '\n');
	assert_int_not_equal(body[strlen(body) - 2], '\n');
	/* Markdown readers see the same thing: the header is a block of its own */
	assert_first_block_is(body, hdr);
	lit = code_blocks(body, "mermaid", &blocks);
	assert_int_equal(blocks, 1);
	free(lit);
	assert_int_equal(pmbot_comment_parse(&back, body, strlen(body)), PMBOT_OK);
	assert_memory_equal(&back, &m, sizeof(m));
	free(hdr);
	free(body);
	json_decref(results);
	pmbot_diag_list_free(&diags);
	fixture_free(&f);
}

static void test_render__invalid_reports_list_every_error_with_its_location(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_comment_input in;
	pmbot_comment_meta m;
	char *body, *html;

	(void)state;
	meta_init(&m, "plan", 3, HEAD_SHA, "", "invalid", "");
	assert_int_equal(pmbot_diag_add(&diags, PMBOT_SEV_ERROR, "SCHEMA_REQUIRED", "plans/a.md",
		"/tasks/0", 12, 5, "missing required field 'title'"), 0);
	assert_int_equal(pmbot_diag_add(&diags, PMBOT_SEV_WARNING, "MISSING_AREA", "plans/a.md",
		"/tasks/1", 20, 5, "no area"), 0);
	assert_int_equal(pmbot_diag_add(&diags, PMBOT_SEV_ERROR, "REPORT_PARSE_JSON", "plans/b.md",
		"", 0, 0, "unexpected <b>token</b> *here*\n# not a heading"), 0);
	assert_int_equal(pmbot_diag_add(&diags, PMBOT_SEV_ERROR, "NO_REPORTS", NULL, "", 0, 0,
		"no report matched"), 0);
	memset(&in, 0, sizeof(in));
	in.meta = &m;
	in.diags = &diags;
	body = render(&in);
	assert_non_null(strstr(body, "### Reports are invalid\n\n3 errors: fix them and push again"));
	assert_non_null(strstr(body, "- `plans/a.md:12` `SCHEMA_REQUIRED` `/tasks/0`: missing "
		"required field 'title'\n"));
	assert_non_null(strstr(body, "- `plans/b.md` `REPORT_PARSE_JSON` (root): unexpected "
		"\\<b\\>token\\</b\\> \\*here\\* # not a heading\n"));
	assert_non_null(strstr(body, "- `NO_REPORTS` (root): no report matched\n"));
	/* Warnings are listed too, after the errors, in the same form. */
	assert_non_null(strstr(body, "### Warnings\n\n1 warning: it does not stop the plan"));
	assert_non_null(strstr(body, "- `plans/a.md:20` `MISSING_AREA` `/tasks/1`: no area\n"));
	assert_true(strstr(body, "### Warnings") > strstr(body, "`NO_REPORTS`"));
	/* no bundle: no diagram and no plan */
	assert_null(strstr(body, "```mermaid"));
	assert_null(strstr(body, "## pm-bot plan"));
	html = to_html(body);
	assert_null(strstr(html, "<b>"));
	assert_null(strstr(html, "<h1>"));
	assert_null(strstr(html, "<em>"));
	free(html);
	free(body);
	pmbot_diag_list_free(&diags);
}

static void test_render__caps_the_error_and_result_lists(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_comment_input in;
	pmbot_comment_meta m;
	json_t *results = json_array();
	pmbot_buf msg = PMBOT_BUF_INIT;
	char *body;
	size_t i;

	(void)state;
	for (i = 0; i < 400; i++)
		assert_int_equal(pmbot_buf_putc(&msg, 'm'), 0);
	for (i = 0; i < 120; i++)
		assert_int_equal(pmbot_diag_add(&diags, PMBOT_SEV_ERROR, "E_CODE", "r.md", "/x",
			(int)i + 1, 1, "%s", msg.buf), 0);
	for (i = 0; i < 30; i++)
		assert_int_equal(json_array_append_new(results, json_pack("{s:s, s:s, s:s, s:s}",
			"changeset_id", "cs", "idempotency_key", "k", "status", "denied", "reason",
			"OPERATION_DENIED")), 0);
	meta_init(&m, "plan", 3, "", "", "failed", "");
	memset(&in, 0, sizeof(in));
	in.meta = &m;
	in.diags = &diags;
	in.results = results;
	body = render(&in);
	assert_non_null(strstr(body, "120 errors: fix them"));
	assert_int_equal(occurrences(body, "`E_CODE`"), 50);
	assert_non_null(strstr(body, "\n*\xe2\x80\xa6 and 70 more errors.*\n"));
	assert_int_equal(occurrences(body, "**denied**"), 20);
	assert_non_null(strstr(body, "| Denied | 30 |"));
	assert_non_null(strstr(body, "\n*\xe2\x80\xa6 and 10 more results.*\n"));
	/* messages are cut at 300 code points */
	assert_null(strstr(body, msg.buf + 99));
	assert_non_null(strstr(body, msg.buf + 100));
	assert_non_null(strstr(body, "m\xe2\x80\xa6\n"));
	free(body);
	pmbot_buf_free(&msg);
	json_decref(results);
	pmbot_diag_list_free(&diags);
}

static void test_render__hostile_results_are_escaped(void **state)
{
	pmbot_comment_input in;
	pmbot_comment_meta m;
	json_t *results;
	char *body, *html;

	(void)state;
	results = results_of("[{\"changeset_id\":\"cs-0001`x\",\"idempotency_key\":\"``k\","
		"\"status\":\"failed\",\"reason\":\"R\",\"message\":\"<img src=x onerror=alert(1)>"
		"\\n\\n# Hi [link](http://x) --> _u_ \\r| a | b |\"}]");
	meta_init(&m, "plan", 3, "", "", "failed", "");
	memset(&in, 0, sizeof(in));
	in.meta = &m;
	in.results = results;
	body = render(&in);
	html = to_html(body);
	assert_null(strstr(html, "<img"));
	assert_null(strstr(html, "<h1>"));
	assert_null(strstr(html, "<a "));
	assert_null(strstr(html, "<em>"));
	assert_null(strstr(html, "<table>\n<thead>\n<tr>\n<th>a"));
	assert_non_null(strstr(html, "<code>cs-0001`x</code>"));
	assert_non_null(strstr(html, "<code>``k</code>"));
	free(html);
	free(body);
	json_decref(results);
}

/*
 * Issue 12, finding 3: anyone can open issues with a forged marker whose id
 * is 30,000 characters of mentions and links. A 7-item plan still shows its
 * 7 items and the approve command; the diagnostics are capped, and nothing
 * in them mentions or links.
 */
static void test_render__forged_marker_ids_cannot_hide_items_or_mention(void **state)
{
	pmbot_comment_input in;
	pmbot_comment_meta m;
	pmbot_buf id = PMBOT_BUF_INIT;
	struct fixture f;
	json_t *diags;
	char *body, cmd[128];
	size_t i;

	(void)state;
	fixture_of(&f, chain_report(6));
	while (id.len < 30000)
		assert_int_equal(pmbot_buf_puts(&id, "@octocat @acme/admins acme/secret#1 #12 "
			"https://evil.example/x www.evil.example "), 0);
	diags = json_object_get(f.bundle, "diagnostics");
	for (i = 0; i < 2; i++) {
		json_t *d = json_pack("{s:s, s:s, s:s, s:s+}", "code", "MARKER_UNTRUSTED",
			"severity", "warning", "path", "", "message", "acme/widgets#90 carries the marker of ",
			id.buf);

		assert_non_null(d);
		assert_int_equal(json_array_append_new(diags, d), 0);
	}
	meta_init(&m, "plan", 12, HEAD_SHA, json_string_value(json_object_get(f.bundle,
		"plan_hash")), "planned", "");
	memset(&in, 0, sizeof(in));
	in.meta = &m;
	in.bundle = f.bundle;
	in.graph = f.graph;
	body = render(&in);
	assert_int_equal(occurrences(body, "<details>"), 7);
	assert_null(strstr(body, "Left out"));
	snprintf(cmd, sizeof(cmd), "```\n/pm-bot apply %s\n```\n",
		json_string_value(json_object_get(f.bundle, "plan_hash")));
	assert_non_null(strstr(body, cmd));
	assert_int_equal(occurrences(body, "| warning | `MARKER_UNTRUSTED` |"), 2);
	assert_true(strlen(body) < 20000);
	/* Readable, but no mention, reference or autolink survives. */
	assert_null(strstr(body, "@octocat"));
	assert_null(strstr(body, "@acme"));
	assert_null(strstr(body, "#12"));
	assert_null(strstr(body, "secret#1"));
	assert_null(strstr(body, "https://"));
	assert_null(strstr(body, "www.evil"));
	assert_non_null(strstr(body, "@\xe2\x80\x8c" "octocat @\xe2\x80\x8c" "acme/admins "
		"acme/secret#\xe2\x80\x8c" "1 #\xe2\x80\x8c" "12 https:\xe2\x80\x8c//evil.example/x "
		"www\xe2\x80\x8c.evil.example"));
	free(body);
	pmbot_buf_free(&id);
	fixture_free(&f);
}

static void test_render__a_body_with_no_changes_says_so_without_a_diagram(void **state)
{
	pmbot_comment_input in;
	pmbot_comment_meta m;
	struct fixture f;
	char *body;

	(void)state;
	gauges(&f);
	assert_int_equal(json_array_clear(json_object_get(f.bundle, "changesets")), 0);
	meta_init(&m, "plan", 12, HEAD_SHA, "", "no_changes", "");
	memset(&in, 0, sizeof(in));
	in.meta = &m;
	in.bundle = f.bundle;
	in.graph = f.graph;
	body = render(&in);
	assert_null(strstr(body, "```mermaid"));
	assert_non_null(strstr(body, "**No changes.**"));
	assert_non_null(strstr(body, "Nothing to apply."));
	free(body);
	fixture_free(&f);
}

static void test_render__ten_thousand_changesets_fit_in_65536_code_points(void **state)
{
	pmbot_comment_input in;
	pmbot_comment_meta m, back;
	struct fixture f;
	char *body, *again, *hdr;

	(void)state;
	/* 5,000 tasks in 50 features: a create, a parent and a dependency each */
	fixture_of(&f, chain_report(5000));
	assert_true(pmbot_plan_count(f.bundle) >= 10000);
	meta_init(&m, "plan", 77, HEAD_SHA, json_string_value(json_object_get(f.bundle,
		"plan_hash")), "planned", "");
	memset(&in, 0, sizeof(in));
	in.meta = &m;
	in.bundle = f.bundle;
	in.graph = f.graph;
	in.notice = "Re-planned after a push.";
	body = render(&in);
	assert_true(code_points(body) <= 65536);
	assert_true(code_points(body) > 60000);
	assert_valid_utf8(body);
	hdr = header_of(&m);
	assert_int_equal(strncmp(body, hdr, strlen(hdr)), 0);
	assert_int_equal(pmbot_comment_parse(&back, body, strlen(body)), PMBOT_OK);
	assert_memory_equal(&back, &m, sizeof(m));
	assert_non_null(strstr(body, " and 5000 more items not shown.*"));
	assert_non_null(strstr(body, "This plan was cut to fit in one comment."));
	assert_non_null(strstr(body, "/pm-bot apply "));
	/* same input, same bytes */
	again = render(&in);
	assert_string_equal(again, body);
	free(again);
	free(hdr);
	free(body);
	fixture_free(&f);
}

static void test_render__never_passes_max_chars_and_keeps_the_header(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_comment_input in;
	pmbot_comment_meta m;
	struct fixture f;
	json_t *results;
	char *hdr;
	size_t max, i, hlen, with_diagram = 0, with_plan = 0, hash_only = 0;

	(void)state;
	fixture_of(&f, chain_report(40));
	meta_init(&m, "plan", 5, HEAD_SHA, json_string_value(json_object_get(f.bundle,
		"plan_hash")), "failed", "");
	for (i = 0; i < 30; i++)
		assert_int_equal(pmbot_diag_add(&diags, PMBOT_SEV_ERROR, "E_X", "r.md", "/t",
			(int)i + 1, 1, "error number %zu \xc3\xa9\xc3\xa9", i), 0);
	results = results_of("[{\"changeset_id\":\"cs-0001\",\"idempotency_key\":\"k\","
		"\"status\":\"failed\",\"reason\":\"R\",\"message\":\"m\"},"
		"{\"changeset_id\":\"cs-0002\",\"idempotency_key\":\"k\",\"status\":\"denied\"}]");
	memset(&in, 0, sizeof(in));
	in.meta = &m;
	in.bundle = f.bundle;
	in.graph = f.graph;
	in.diags = &diags;
	in.results = results;
	in.notice = "Line one of the notice \xe2\x9c\x85\nLine two\nLine three, the last";
	hdr = header_of(&m);
	hlen = code_points(hdr);
	for (max = hlen + 1; max < 12000; max += max < 3000 ? 7 : 211) {
		pmbot_buf b = PMBOT_BUF_INIT;

		in.max_chars = max;
		assert_int_equal(pmbot_comment_render(&b, &in), PMBOT_OK);
		if (code_points(b.buf) > max)
			fail_msg("max_chars %zu: body has %zu", max, code_points(b.buf));
		assert_int_equal(strncmp(b.buf, hdr, strlen(hdr)), 0);
		assert_valid_utf8(b.buf);
		with_diagram += strstr(b.buf, "```mermaid") != NULL;
		with_plan += strstr(b.buf, "## pm-bot plan") != NULL;
		hash_only += strstr(b.buf, "\nPlan hash: `") != NULL && !strstr(b.buf, "## pm-bot plan");
		/* the diagram only ever comes with the plan */
		assert_true(!strstr(b.buf, "```mermaid") || strstr(b.buf, "## pm-bot plan"));
		pmbot_buf_free(&b);
	}
	/* every degradation step was reached */
	assert_true(with_diagram > 0);
	assert_true(with_plan > with_diagram);
	assert_true(hash_only > 0);
	free(hdr);
	json_decref(results);
	pmbot_diag_list_free(&diags);
	fixture_free(&f);
}

static void test_render__drops_the_diagram_before_the_plan_summary(void **state)
{
	pmbot_comment_input in;
	pmbot_comment_meta m;
	struct fixture f;
	pmbot_buf diagram = PMBOT_BUF_INIT, plan = PMBOT_BUF_INIT;
	char *hdr, *body;

	(void)state;
	gauges(&f);
	meta_init(&m, "plan", 5, HEAD_SHA, "", "planned", "");
	hdr = header_of(&m);
	assert_int_equal(pmbot_comment_mermaid(&diagram, f.graph, f.bundle, 0), PMBOT_OK);
	assert_int_equal(pmbot_plan_markdown(&plan, f.bundle, 0, NULL), PMBOT_OK);
	memset(&in, 0, sizeof(in));
	in.meta = &m;
	in.bundle = f.bundle;
	in.graph = f.graph;
	/* room for everything */
	in.max_chars = code_points(hdr) + 2 + code_points(diagram.buf) + 1 + code_points(plan.buf);
	body = render(&in);
	assert_non_null(strstr(body, diagram.buf));
	assert_non_null(strstr(body, plan.buf));
	assert_int_equal(code_points(body), in.max_chars);
	free(body);
	/* one short: the plan is cut, and still fits with the diagram before it */
	in.max_chars--;
	body = render(&in);
	assert_non_null(strstr(body, diagram.buf));
	assert_non_null(strstr(body, "This plan was cut"));
	free(body);
	/* no room after the diagram for the plan's title, summary and hash: the plan wins */
	pmbot_buf_clear(&plan);
	assert_int_equal(pmbot_plan_markdown(&plan, f.bundle, 1, NULL), PMBOT_OK);
	assert_true(code_points(plan.buf) < code_points(diagram.buf));
	in.max_chars = code_points(hdr) + 2 + code_points(plan.buf) + 5;
	body = render(&in);
	assert_null(strstr(body, "```mermaid"));
	assert_non_null(strstr(body, "## pm-bot plan for "));
	assert_non_null(strstr(body, "/pm-bot apply "));
	assert_true(code_points(body) <= in.max_chars);
	free(body);
	free(hdr);
	pmbot_buf_free(&diagram);
	pmbot_buf_free(&plan);
	fixture_free(&f);
}

static void test_render__cuts_a_long_notice_at_a_line_end(void **state)
{
	pmbot_comment_input in;
	pmbot_comment_meta m;
	pmbot_buf notice = PMBOT_BUF_INIT;
	char *hdr, *body;
	size_t i;

	(void)state;
	meta_init(&m, "plan", 5, "", "", "stale", "");
	hdr = header_of(&m);
	for (i = 0; i < 100; i++)
		assert_int_equal(pmbot_buf_printf(&notice, "notice line %03zu\n", i), 0);
	memset(&in, 0, sizeof(in));
	in.meta = &m;
	in.notice = notice.buf;
	in.max_chars = code_points(hdr) + 2 + 500;
	body = render(&in);
	assert_true(code_points(body) <= in.max_chars);
	assert_non_null(strstr(body, "notice line 000\n"));
	assert_null(strstr(body, "notice line 099"));
	/* whole lines only, then the note */
	assert_non_null(strstr(body, "\n\n*(Notice cut to fit in this comment.)*\n"));
	assert_int_equal(strncmp(strstr(body, "\n\n*(Notice") - 15, "notice line ", 12), 0);
	free(body);
	/* the same notice with room enough is kept whole, trailing line breaks made one blank line */
	in.max_chars = 0;
	body = render(&in);
	assert_non_null(strstr(body, notice.buf));
	assert_null(strstr(body, "Notice cut"));
	free(body);
	free(hdr);
	pmbot_buf_free(&notice);
}

static void test_render__rejects_bad_input_and_leaves_the_buffer(void **state)
{
	pmbot_comment_input in;
	pmbot_comment_meta m;
	pmbot_buf b = PMBOT_BUF_INIT;
	json_t *bad = json_pack("{s:s}", "plan_hash", "nothex");
	char *hdr;

	(void)state;
	meta_init(&m, "plan", 5, "", "", "planned", "");
	hdr = header_of(&m);
	assert_int_equal(pmbot_buf_puts(&b, "kept"), 0);
	memset(&in, 0, sizeof(in));
	assert_int_equal(pmbot_comment_render(&b, &in), PMBOT_EINVALID);
	assert_int_equal(pmbot_comment_render(&b, NULL), PMBOT_EINVALID);
	in.meta = &m;
	in.notice = "bad \xff UTF-8";
	assert_int_equal(pmbot_comment_render(&b, &in), PMBOT_EINVALID);
	in.notice = NULL;
	/* the header needs its line break too */
	in.max_chars = code_points(hdr);
	assert_int_equal(pmbot_comment_render(&b, &in), PMBOT_EINVALID);
	in.max_chars = 0;
	in.bundle = bad;
	assert_int_equal(pmbot_comment_render(&b, &in), PMBOT_ERROR);
	/* no budget left for the plan still checks the bundle */
	in.max_chars = code_points(hdr) + 1;
	assert_int_equal(pmbot_comment_render(&b, &in), PMBOT_ERROR);
	m.number = -3;
	in.bundle = NULL;
	in.max_chars = 0;
	assert_int_equal(pmbot_comment_render(&b, &in), PMBOT_EINVALID);
	assert_string_equal(b.buf, "kept");
	/* the header alone, exactly at the limit */
	m.number = 5;
	in.max_chars = code_points(hdr) + 1;
	assert_int_equal(pmbot_comment_render(&b, &in), PMBOT_OK);
	assert_int_equal(strncmp(b.buf + 4, hdr, strlen(hdr)), 0);
	assert_string_equal(b.buf + 4 + strlen(hdr), "\n");
	free(hdr);
	json_decref(bad);
	pmbot_buf_free(&b);
}


static void test_render__a_valid_plan_lists_its_warnings_escaped_and_capped(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_comment_input in;
	pmbot_comment_meta m;
	struct fixture f;
	char *body, *html;
	size_t i;

	(void)state;
	gauges(&f);
	assert_int_equal(pmbot_diag_add(&diags, PMBOT_SEV_WARNING, "MISSING_AREA", "plans/<a>.md",
		"/tasks/0", 3, 1, "@alice <b>look</b>\n# here"), 0);
	for (i = 0; i < 60; i++)
		assert_int_equal(pmbot_diag_add(&diags, PMBOT_SEV_WARNING, "W_CODE", "r.md", "/x",
			(int)i + 10, 1, "w"), 0);
	meta_init(&m, "plan", 12, HEAD_SHA, "", "planned", "");
	memset(&in, 0, sizeof(in));
	in.meta = &m;
	in.bundle = f.bundle;
	in.graph = f.graph;
	in.diags = &diags;
	body = render(&in);
	assert_null(strstr(body, "### Reports are invalid"));
	assert_non_null(strstr(body, "### Warnings\n\n61 warnings: they do not stop the plan"));
	/* Escaped as errors are: no mention, no HTML, no heading. */
	assert_non_null(strstr(body, "- `plans/<a>.md:3` `MISSING_AREA` `/tasks/0`: @\xe2\x80\x8c"
		"alice \\<b\\>look\\</b\\> # here\n"));
	assert_int_equal(occurrences(body, "`W_CODE`"), 49);
	assert_non_null(strstr(body, "\n*\xe2\x80\xa6 and 11 more warnings.*\n"));
	/* The plan still follows the warnings. */
	assert_true(strstr(body, "```mermaid") > strstr(body, "### Warnings"));
	html = to_html(body);
	assert_null(strstr(html, "<b>"));
	assert_null(strstr(html, "<h1>"));
	free(html);
	free(body);
	pmbot_diag_list_free(&diags);
	fixture_free(&f);
}

static char *history_of(const char *body)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_comment_history(&b, body, strlen(body)), PMBOT_OK);
	if (!b.len)
		assert_int_equal(pmbot_buf_puts(&b, ""), 0);
	return pmbot_buf_detach(&b, NULL);
}

/* A body as pm-bot action writes it: the header of `status`, then `rest`. */
static char *body_with(const char *status, const char *rest)
{
	pmbot_comment_meta m;
	pmbot_buf b = PMBOT_BUF_INIT;

	meta_init(&m, "plan", 12, HEAD_SHA, HASH64, status, "");
	assert_int_equal(pmbot_comment_header(&b, &m), PMBOT_OK);
	assert_int_equal(pmbot_buf_printf(&b, "\n\n%s", rest), 0);
	return pmbot_buf_detach(&b, NULL);
}

static void expect_history(const char *status, const char *rest, const char *want)
{
	char *body = body_with(status, rest), *h = history_of(body);

	assert_string_equal(h, want);
	free(h);
	free(body);
}

static void test_history__is_rebuilt_from_each_apply_notice(void **state)
{
	(void)state;
	expect_history("applied", "**Applied** 15 of 15 changes, approved by @alice. Audit ledger "
		"head: `abc` (3 events).\n\n### Apply result\n",
		"*Last apply: 15 of 15 changes applied, approved by `alice` (plan `89abcdef`).*");
	expect_history("failed", "**Apply failed**: 3 of 5 changes applied, 2 failed; approved by "
		"@ci-bot[bot]. Comment `/pm-bot plan` to see what remains.\n",
		"*Last apply: failed, 3 of 5 changes applied, 2 failed, approved by `ci-bot[bot]` "
		"(plan `89abcdef`).*");
	expect_history("paused", "**Paused: 4 of 9 changes applied; the rest at 12:00 UTC.** "
		"Approved by @bob. GitHub's limits …\n",
		"*Last apply: paused, approved by `bob` (plan `89abcdef`).*");
	/* A header that is not about an apply names no plan. */
	expect_history("planned", "**Applied** 1 of 1 changes, approved by @alice.\n",
		"*Last apply: 1 of 1 changes applied, approved by `alice`.*");
}

static void test_history__is_carried_across_replans(void **state)
{
	char *first, *second, *third;

	(void)state;
	first = body_with("applied", "**Applied** 7 of 8 changes, approved by @alice.\n");
	second = history_of(first);
	free(first);
	/* The re-plan shows it after a notice of its own, then the next re-plan reads it back. */
	first = body_with("planned", "**Not applied: the plan is stale.** …\n\n- `#8` moved\n\n");
	{
		pmbot_buf b = PMBOT_BUF_INIT;

		assert_int_equal(pmbot_buf_printf(&b, "%s%s\n\n## pm-bot plan\n", first, second), 0);
		third = history_of(b.buf);
		pmbot_buf_free(&b);
	}
	assert_string_equal(third, second);
	assert_string_equal(third, "*Last apply: 7 of 8 changes applied, approved by `alice` "
		"(plan `89abcdef`).*");
	free(first);
	free(second);
	free(third);
}

static void test_history__hostile_or_unknown_text_yields_nothing(void **state)
{
	static const char *const bad[] = {
		"**Applied** 15 of 15 changes, approved by @alice`**evil**.\n",
		"**Applied** 15 of 15 changes, approved by @alice <img src=x>.\n",
		"**Applied** 1e3 of 15 changes, approved by @alice.\n",
		"**Applied** 015 of 15 changes, approved by @alice.\n",
		"**Applied** 1234567890 of 15 changes, approved by @alice.\n",
		"**Applied** 1 of 1 changes, approved by @" 
		"a234567890123456789012345678901234567890.\n",
		"**Applied** 1 of 1 changes, approved by @.\n",
		"**Applied** 1 of 1 changes, approved by alice.\n",
		" **Applied** 1 of 1 changes, approved by @alice.\n",
		"*Last apply: 1 of 1 changes applied, approved by `alice` (plan `89ABCDEF`).*\n",
		"*Last apply: 1 of 1 changes applied, approved by `alice` (plan `89abcdef`).* "
			"[x](https://evil)\n",
		"*Last apply: 1 of 1 changes applied, approved by `al[ice`.*\n",
		"*Last apply: 1 of 1 changes applied, approved by `alice`*\n",
		"*Last apply: deleted everything, approved by `alice`.*\n",
		"**Paused: soon** Approved by @bob.\n",
		"## heading\n**Applied** 1 of 1 changes, approved by @alice.\n",
		"",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_history("applied", bad[i], "");
	/* No pm-bot header, or a field-sync one: nothing is read at all. */
	{
		char *h = history_of("**Applied** 1 of 1 changes, approved by @alice.\n");
		pmbot_comment_meta m;
		pmbot_buf b = PMBOT_BUF_INIT;

		assert_string_equal(h, "");
		free(h);
		meta_init(&m, "field-sync", 4, "", "", "applied", "");
		assert_int_equal(pmbot_comment_header(&b, &m), PMBOT_OK);
		assert_int_equal(pmbot_buf_puts(&b, "\n\n**Applied** 1 of 1 changes, approved by "
			"@alice.\n"), 0);
		h = history_of(b.buf);
		assert_string_equal(h, "");
		free(h);
		pmbot_buf_free(&b);
	}
}

static void test_history__a_full_buffer_is_left_as_it_was(void **state)
{
	char *body = body_with("applied", "**Applied** 1 of 1 changes, approved by @alice.\n");
	pmbot_buf b;

	(void)state;
	pmbot_buf_init(&b, 16);
	assert_int_equal(pmbot_buf_puts(&b, "kept"), 0);
	assert_int_equal(pmbot_comment_history(&b, body, strlen(body)), PMBOT_ERROR);
	assert_int_equal(b.len, 4);
	pmbot_buf_free(&b);
	free(body);
}


#define HEAD2 "fedcba9876543210fedcba9876543210fedcba98"
#define HASH_B "bbbbbbbb0123456789abcdef0123456789abcdef0123456789abcdef01234567"

static json_t *fp_bundle(const char *updated8, const char *node9, int extra)
{
	json_t *b = json_pack("{s:s, s:[], s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}]}", "plan_hash", HASH64,
		"changesets", "fingerprint",
		"ref", TARGET "#8", "node_id", "I_8", "updated_at", updated8,
		"ref", TARGET "#9", "node_id", node9, "updated_at", "2026-01-01T00:00:00Z");

	assert_non_null(b);
	if (extra)
		assert_int_equal(json_array_append_new(json_object_get(b, "fingerprint"), json_pack(
			"{s:s, s:s, s:s}", "ref", TARGET "#10", "node_id", "I_10", "updated_at", "x")), 0);
	return b;
}

static char *stale_of(const pmbot_comment_stale *st)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_comment_stale_notice(&b, st), PMBOT_OK);
	return pmbot_buf_detach(&b, NULL);
}

static void test_stale__names_the_head_the_hash_and_the_issues_that_moved(void **state)
{
	pmbot_diag_list check = PMBOT_DIAG_LIST_INIT;
	pmbot_comment_stale st;
	pmbot_comment_meta shown;
	json_t *then = fp_bundle("2026-01-01T00:00:00Z", "I_9", 0);
	json_t *now = fp_bundle("2026-02-02T10:00:00Z", "I_9b", 1);
	char *n;

	(void)state;
	meta_init(&shown, "plan", 1, HEAD_SHA, HASH_B, "planned", "");
	assert_int_equal(pmbot_diag_add(&check, PMBOT_SEV_ERROR, "STALE_PLAN", NULL, "/changesets/0",
		0, 0, "the plan changed since it was approved: k has a different <b>payload</b>"), 0);
	assert_int_equal(pmbot_diag_add(&check, PMBOT_SEV_ERROR, "PLAN_HASH_MISMATCH", NULL, "", 0,
		0, "not listed"), 0);
	memset(&st, 0, sizeof(st));
	st.approver = "alice";
	st.approved = HASH64;
	st.fresh_hash = HASH_B;
	st.shown = &shown;
	st.head = HEAD2;
	st.approved_bundle = then;
	st.fresh_bundle = now;
	st.check = &check;
	n = stale_of(&st);
	assert_string_equal(n, "**Not applied: the plan is stale.** @alice approved `" HASH64 "`, "
		"but the pull request or GitHub changed since; the current plan is below (hash `"
		HASH_B "`). What moved:\n\n"
		"- the pull request's head moved from `0123456` to `fedcba9`\n"
		"- the plan shown was `bbbbbbbb`, not the approved `89abcdef`\n"
		"- `acme/widgets#8` was updated at `2026-02-02T10:00:00Z` (the approved plan saw "
		"`2026-01-01T00:00:00Z`)\n"
		"- `acme/widgets#9` is another issue now\n"
		"- `acme/widgets#10` is new to the plan\n"
		"- the plan changed since it was approved: k has a different \\<b\\>payload\\</b\\>\n");
	free(n);
	/* The other way round: an issue the approved plan touched is gone. */
	st.approved_bundle = now;
	st.fresh_bundle = then;
	st.check = NULL;
	st.shown = NULL;
	n = stale_of(&st);
	assert_non_null(strstr(n, "- no plan was shown on this pull request\n"));
	assert_non_null(strstr(n, "- `acme/widgets#10` is no longer in the plan\n"));
	assert_null(strstr(n, "head moved"));
	free(n);
	json_decref(then);
	json_decref(now);
	pmbot_diag_list_free(&check);
}

static void test_stale__without_the_approved_plan_says_it_cannot_name_what(void **state)
{
	pmbot_comment_stale st;
	pmbot_comment_meta shown;
	char *n;

	(void)state;
	meta_init(&shown, "plan", 1, HEAD_SHA, HASH64, "planned", "");
	memset(&st, 0, sizeof(st));
	st.approver = "alice";
	st.approved = HASH64;
	st.fresh_hash = "";
	st.shown = &shown;
	st.head = HEAD_SHA;
	n = stale_of(&st);
	assert_non_null(strstr(n, "(hash `none`). What moved:\n\n- GitHub changed since the plan was "
		"shown; the approved plan was not kept on this runner, so pm-bot cannot name what\n"));
	free(n);
	/* Invalid reports now: that is what moved. */
	st.invalid = 1;
	n = stale_of(&st);
	assert_non_null(strstr(n, "- the reports are invalid now (see below)\n"));
	assert_null(strstr(n, "cannot name"));
	free(n);
}

static void test_stale__hostile_values_are_escaped_and_the_list_capped(void **state)
{
	pmbot_comment_stale st;
	pmbot_comment_meta shown;
	json_t *then = json_pack("{s:[]}", "fingerprint"), *now = json_pack("{s:[]}", "fingerprint");
	char ref[64], *n;
	size_t i;

	(void)state;
	for (i = 0; i < 15; i++) {
		snprintf(ref, sizeof(ref), "a/b#%zu`](http://evil) @mallory", i);
		assert_int_equal(json_array_append_new(json_object_get(now, "fingerprint"),
			json_pack("{s:s, s:s, s:s}", "ref", ref, "node_id", "n", "updated_at", "t")), 0);
	}
	meta_init(&shown, "plan", 1, HEAD_SHA, HASH64, "planned", "");
	memset(&st, 0, sizeof(st));
	st.approver = "al`ice\n# x";
	st.approved = HASH64;
	st.shown = &shown;
	st.head = HEAD_SHA;
	st.approved_bundle = then;
	st.fresh_bundle = now;
	n = stale_of(&st);
	/* Not a login: shown in a code span, not mentioned. */
	assert_non_null(strstr(n, "**Not applied: the plan is stale.** ``al`ice # x`` approved"));
	assert_int_equal(occurrences(n, " is new to the plan\n"), 10);
	assert_non_null(strstr(n, "- ``a/b#0`](http://evil) @mallory`` is new to the plan\n"));
	assert_non_null(strstr(n, "- \xe2\x80\xa6 and 5 more\n"));
	assert_null(strchr(n, '<'));
	free(n);
	json_decref(then);
	json_decref(now);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header__is_canonical_json_inside_an_html_comment),
		cmocka_unit_test(test_header__appends_to_what_the_buffer_holds),
		cmocka_unit_test(test_header__never_holds_a_double_dash_and_reads_back_the_same),
		cmocka_unit_test(test_header__keeps_a_single_dash_readable),
		cmocka_unit_test(test_header__the_longest_header_is_455_code_points),
		cmocka_unit_test(test_header__rejects_invalid_meta_and_leaves_the_buffer),
		cmocka_unit_test(test_parse__reads_back_every_kind_and_status),
		cmocka_unit_test(test_parse__a_comment_without_the_prefix_is_not_found),
		cmocka_unit_test(test_parse__rejects_malformed_headers_and_zeroes_the_result),
		cmocka_unit_test(test_parse__looks_only_at_the_first_line),
		cmocka_unit_test(test_mermaid__draws_every_created_item_and_the_edges_among_them),
		cmocka_unit_test(test_mermaid__styles_conflicts_over_creates_over_changes),
		cmocka_unit_test(test_mermaid__items_only_named_by_a_binding_have_no_class),
		cmocka_unit_test(test_mermaid__nothing_touched_appends_nothing),
		cmocka_unit_test(test_mermaid__caps_nodes_conflicts_first_and_counts_the_rest),
		cmocka_unit_test(test_mermaid__hostile_titles_and_ids_cannot_break_the_diagram),
		cmocka_unit_test(test_mermaid__labels_hold_no_directive_and_start_no_click_line),
		cmocka_unit_test(test_mermaid__labels_are_cut_at_80_code_points),
		cmocka_unit_test(test_render__hostile_titles_and_ids_cannot_reach_the_header_or_a_fence),
		cmocka_unit_test(test_render__puts_header_notice_results_errors_diagram_and_plan_in_order),
		cmocka_unit_test(test_render__invalid_reports_list_every_error_with_its_location),
		cmocka_unit_test(test_render__caps_the_error_and_result_lists),
		cmocka_unit_test(test_render__hostile_results_are_escaped),
		cmocka_unit_test(test_render__forged_marker_ids_cannot_hide_items_or_mention),
		cmocka_unit_test(test_render__a_body_with_no_changes_says_so_without_a_diagram),
		cmocka_unit_test(test_render__ten_thousand_changesets_fit_in_65536_code_points),
		cmocka_unit_test(test_render__never_passes_max_chars_and_keeps_the_header),
		cmocka_unit_test(test_render__drops_the_diagram_before_the_plan_summary),
		cmocka_unit_test(test_render__cuts_a_long_notice_at_a_line_end),
		cmocka_unit_test(test_render__rejects_bad_input_and_leaves_the_buffer),
		cmocka_unit_test(test_render__a_valid_plan_lists_its_warnings_escaped_and_capped),
		cmocka_unit_test(test_history__is_rebuilt_from_each_apply_notice),
		cmocka_unit_test(test_history__is_carried_across_replans),
		cmocka_unit_test(test_history__hostile_or_unknown_text_yields_nothing),
		cmocka_unit_test(test_history__a_full_buffer_is_left_as_it_was),
		cmocka_unit_test(test_stale__names_the_head_the_hash_and_the_issues_that_moved),
		cmocka_unit_test(test_stale__without_the_approved_plan_says_it_cannot_name_what),
		cmocka_unit_test(test_stale__hostile_values_are_escaped_and_the_list_capped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
