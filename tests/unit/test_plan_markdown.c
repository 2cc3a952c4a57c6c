#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

#include "pmbot/buf.h"
#include "pmbot/plan.h"
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

#define DOT "\xc2\xb7"
#define LQ "\xe2\x80\x9c"
#define RQ "\xe2\x80\x9d"
#define ARROW "\xe2\x86\x92"
#define DASH "\xe2\x80\x94"
#define CRSYM "\xe2\x90\x8d"

#define HASH "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
/* plan_hash of tests/fixtures/bundles/small.json */
#define SMALL_HASH "07e8ec48865892eecfb0bc9cc5b909629e0f589918c1fab5a675e2948d02762f"

/* ---- helpers ------------------------------------------------------------ */

static json_t *fixture(const char *name)
{
	char path[256];
	json_error_t err;
	json_t *b;

	snprintf(path, sizeof(path), "tests/fixtures/bundles/%s", name);
	b = json_load_file(path, 0, &err);
	if (!b)
		fail_msg("%s: %s", path, err.text);
	return b;
}

/* Render into a fresh string the caller frees. */
static char *render(const json_t *bundle, size_t max_chars, const char *hint)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_plan_markdown(&out, bundle, max_chars, hint), PMBOT_OK);
	return pmbot_buf_detach(&out, NULL);
}

static char *render_fixture(const char *name)
{
	json_t *b = fixture(name);
	char *md = render(b, 0, NULL);

	json_decref(b);
	return md;
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

/* Parse with cmark-gfm (tables on), as GitHub would. */
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

/* The literals of the fenced code blocks with info `info`, in order, joined by "\x01". */
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

static void assert_valid_utf8(const char *s)
{
	size_t bad = 0;

	if (!pmbot_utf8_valid(s, strlen(s), &bad, NULL, NULL))
		fail_msg("invalid UTF-8 at byte %zu", bad);
}

static json_t *jload(const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, 0, &err);

	if (!v)
		fail_msg("bad test JSON: %s", err.text);
	return v;
}

static json_t *new_bundle(void)
{
	return jload("{\"schema_version\":\"changeset_bundle/v1\",\"plan_hash\":\"" HASH "\","
		"\"target\":\"octo/app\",\"changesets\":[],\"fingerprint\":[],\"conflicts\":[],"
		"\"orphaned\":[],\"diagnostics\":[]}");
}

static void add_cs(json_t *bundle, const char *op, const char *sid, json_t *payload,
	json_t *before, json_t *after)
{
	json_t *cs = json_object(), *arr = json_object_get(bundle, "changesets");
	char id[16];

	snprintf(id, sizeof(id), "cs-%04zu", json_array_size(arr) + 1);
	assert_int_equal(json_object_set_new(cs, "changeset_id", json_string(id)), 0);
	assert_int_equal(json_object_set_new(cs, "operation", json_string(op)), 0);
	assert_int_equal(json_object_set_new(cs, "target",
		json_pack("{s:s, s:s}", "repo", "octo/app", "stable_id", sid)), 0);
	assert_int_equal(json_object_set_new(cs, "payload", payload), 0);
	if (before)
		assert_int_equal(json_object_set_new(cs, "before", before), 0);
	if (after)
		assert_int_equal(json_object_set_new(cs, "after", after), 0);
	assert_int_equal(json_object_set_new(cs, "requires_approval", json_true()), 0);
	assert_int_equal(json_object_set_new(cs, "status", json_string("proposed")), 0);
	assert_int_equal(json_array_append_new(arr, cs), 0);
}

/* `lines` lines "line k of ID\n", line `changed` (if < lines) rewritten. */
static char *body(const char *sid, size_t lines, size_t changed)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t k;

	for (k = 0; k < lines; k++)
		assert_int_equal(pmbot_buf_printf(&b, "%s %zu of %s\n",
			k == changed ? "changed" : "line", k, sid), 0);
	return pmbot_buf_detach(&b, NULL);
}

static void add_body_update(json_t *bundle, const char *sid, size_t lines, size_t changed)
{
	char *before = body(sid, lines, SIZE_MAX), *after = body(sid, lines, changed);

	add_cs(bundle, "update_issue_body", sid, json_pack("{s:s}", "body", after),
		json_pack("{s:s}", "body", before), json_pack("{s:s}", "body", after));
	free(before);
	free(after);
}

/* ---- exact output ----------------------------------------------------------- */

static const char *const small_md =
	"## pm-bot plan for `octo/app`\n"
	"\n"
	"| Change | Count |\n"
	"| :-- | --: |\n"
	"| Creates | 1 |\n"
	"| Updates | 4 |\n"
	"| Relationships | 3 |\n"
	"| Project | 2 |\n"
	"| Conflicts | 1 |\n"
	"| Orphaned | 1 |\n"
	"| Diagnostics | 1 |\n"
	"\n"
	"**10 changes** to 2 issues.\n"
	"\n"
	"### Changes\n"
	"\n"
	"<details><summary><code>T-2</code> Add login page " DOT " new issue " DOT " 4 changes</summary>\n"
	"\n"
	"- `cs-0001` **create\\_issue**: new issue " LQ "Add login page" RQ ", "
	"labels `prio:P1`, `type:task`\n"
	"- `cs-0006` **set\\_parent**: parent *(none)* " ARROW " `F-1`\n"
	/* A report's issue URL is a code span: no cross-reference lands in octo/app#7. */
	"- `cs-0007` **add\\_dependency**: blocked by `octo/app#7`\n"
	"- `cs-0009` **add\\_to\\_project** *(auto-approved)*: add to project `octo/3`\n"
	"\n"
	"</details>\n"
	"\n"
	"<details><summary><code>F-1</code> Checkout v2 " DOT " 6 changes</summary>\n"
	"\n"
	"- `cs-0002` **update\\_issue\\_title**: title "
	LQ "Checkout" RQ " " ARROW " " LQ "Checkout v2" RQ "\n"
	"- `cs-0003` **update\\_issue\\_body**: body:\n"
	"  ```diff\n"
	"  --- current body\n"
	"  +++ planned body\n"
	"  @@ -2,4 +2,4 @@\n"
	"   Ship checkout\n"
	"   \n"
	"   ## Priority\n"
	"  -P2\n"
	"  +P0\n"
	"  ```\n"
	"- `cs-0004` **add\\_labels**: add `prio:P0`\n"
	"- `cs-0005` **remove\\_labels**: remove `prio:P2`\n"
	"- `cs-0008` **remove\\_dependency**: no longer blocked by `T-9`\n"
	"- `cs-0010` **set\\_project\\_field**: field `Priority`: `P2` " ARROW " `P0`\n"
	"\n"
	"</details>\n"
	"\n"
	"### Conflicts\n"
	"\n"
	"Edited by someone else since pm-bot last wrote them: left as they are, not overwritten.\n"
	"\n"
	"- `T-5` octo/app#12: `body_edited`, last written `4a1f`, now `9c2e`\n"
	"\n"
	"### Orphaned issues\n"
	"\n"
	"Managed by pm-bot but no longer in any report: left open, not closed.\n"
	"\n"
	"- `T-9` octo/app#20\n"
	"\n"
	"### Diagnostics\n"
	"\n"
	"| Severity | Code | Location | Message |\n"
	"| --- | --- | --- | --- |\n"
	"| warning | `MARKER_UNTRUSTED` | `plans/q3.md:12` `/items/3` | "
	/* U+200C after '#': the message's reference links nothing (text from an issue). */
	"octo/app#\xe2\x80\x8c" "30 carries the marker of T-7 but its author eve is not trusted |\n"
	"\n"
	"---\n"
	"\n"
	"Plan hash: `" SMALL_HASH "`\n"
	"\n"
	"To apply exactly this plan, comment:\n"
	"\n"
	"```\n"
	"/pm-bot apply " SMALL_HASH "\n"
	"```\n";

static void test_plan_markdown__small_bundle_renders_exactly(void **state)
{
	char *md = render_fixture("small.json");

	(void)state;
	assert_string_equal(md, small_md);
	free(md);
}

static void test_plan_markdown__set_issue_type_reads_old_to_new_and_counts_as_an_update(void **state)
{
	json_t *bundle = new_bundle();
	char *md;

	(void)state;
	add_cs(bundle, "set_issue_type", "T-1", json_pack("{s:s}", "issue_type", "Task"),
		json_pack("{s:n}", "issue_type"), NULL);
	add_cs(bundle, "set_issue_type", "T-2", json_pack("{s:s}", "issue_type", "Epic"),
		json_pack("{s:s}", "issue_type", "Bug*"), NULL);
	md = render(bundle, 0, NULL);
	assert_non_null(strstr(md, "| Updates | 2 |"));
	assert_non_null(strstr(md, "- `cs-0001` **set\\_issue\\_type**: issue type *(none)* " ARROW
		" " LQ "Task" RQ "\n"));
	/* A type's name is text from GitHub: escaped like a title. */
	assert_non_null(strstr(md, "- `cs-0002` **set\\_issue\\_type**: issue type " LQ "Bug\\*" RQ
		" " ARROW " " LQ "Epic" RQ "\n"));
	free(md);
	json_decref(bundle);
}

static void test_plan_markdown__no_changes_says_so_and_offers_no_command(void **state)
{
	char *md = render_fixture("no-changes.json");

	(void)state;
	assert_string_equal(md,
		"## pm-bot plan for `octo/app`\n"
		"\n"
		"| Change | Count |\n"
		"| :-- | --: |\n"
		"| Creates | 0 |\n"
		"| Updates | 0 |\n"
		"| Relationships | 0 |\n"
		"| Project | 0 |\n"
		"| Conflicts | 0 |\n"
		"| Orphaned | 0 |\n"
		"| Diagnostics | 0 |\n"
		"\n"
		"**No changes.** GitHub already matches the reports.\n"
		"\n"
		"---\n"
		"\n"
		"Plan hash: `a74ba85bc43fa3867721e60a9b161745cbe9d3172ec3017930cf9ca194d4458b`\n"
		"\n"
		"Nothing to apply.\n");
	assert_null(strstr(md, "/pm-bot apply"));
	free(md);
}

static void set_backend(json_t *bundle, const char *kind)
{
	assert_int_equal(json_object_set_new(json_object_get(bundle, "source"), "backend",
		json_pack("{s:s}", "kind", kind)), 0);
}

/* A plan against the state file speaks of the state file and of the local command. */
static void test_plan_markdown__a_local_plan_offers_the_local_command(void **state)
{
	json_t *none = fixture("no-changes.json"), *small = fixture("small.json");
	char *md;

	(void)state;
	set_backend(none, "file");
	md = render(none, 0, NULL);
	assert_non_null(strstr(md, "**No changes.** The state file already matches the reports.\n"));
	assert_null(strstr(md, "GitHub"));
	free(md);
	set_backend(small, "file");
	md = render(small, 0, "out/plan `1`.json");
	assert_non_null(strstr(md, "To apply exactly this plan, run "
		"``pm-bot apply --plan out/plan `1`.json --approve " SMALL_HASH "``.\n"));
	assert_null(strstr(md, "/pm-bot apply"));
	free(md);
	md = render(small, 0, NULL);
	assert_non_null(strstr(md, "save it with `pm-bot plan --out plan.json` and run "
		"`pm-bot apply --plan plan.json --approve " SMALL_HASH "`.\n"));
	free(md);
	/* Against GitHub the comment command stays. */
	set_backend(small, "github");
	md = render(small, 0, "plan.json");
	assert_non_null(strstr(md, "/pm-bot apply " SMALL_HASH));
	free(md);
	json_decref(none);
	json_decref(small);
}

/* A standing conflict is not "matches", even with no changeset. */
static void test_plan_markdown__a_conflict_without_changes_is_not_a_match(void **state)
{
	json_t *b = fixture("no-changes.json");
	char *md;

	(void)state;
	assert_int_equal(json_array_append_new(json_object_get(b, "conflicts"),
		json_pack("{s:s, s:s, s:s, s:s, s:s}", "stable_id", "task:a", "ref", "octo/app#4",
			"reason", "body_edited", "expected_rev", HASH, "actual_rev", HASH)), 0);
	md = render(b, 0, NULL);
	assert_non_null(strstr(md, "**Nothing to apply, but 1 conflict needs a person** (see "
		"Conflicts): GitHub does not match the reports.\n"));
	assert_null(strstr(md, "already matches"));
	free(md);
	json_decref(b);
}

static void test_plan_markdown__appends_to_existing_content(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	json_t *b = fixture("small.json");

	(void)state;
	assert_int_equal(pmbot_buf_puts(&out, "<!-- pm-bot -->\n"), 0);
	assert_int_equal(pmbot_plan_markdown(&out, b, 0, NULL), PMBOT_OK);
	assert_true(!strncmp(out.buf, "<!-- pm-bot -->\n## pm-bot plan", 30));
	assert_string_equal(out.buf + 16, small_md);
	pmbot_buf_free(&out);
	json_decref(b);
}

static void test_plan_markdown__same_bundle_gives_same_bytes(void **state)
{
	json_t *b = fixture("small.json"), *copy;
	char *one = render(b, 0, NULL), *two = render(b, 0, NULL), *text, *three;

	(void)state;
	assert_string_equal(one, two);
	/* Key order in the bundle does not matter. */
	text = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
	copy = jload(text);
	three = render(copy, 0, NULL);
	assert_string_equal(one, three);
	free(one);
	free(two);
	free(three);
	free(text);
	json_decref(copy);
	json_decref(b);
}

static void test_plan_markdown__summary_counts_come_from_the_bundle_else_from_changesets(
	void **state)
{
	json_t *b = fixture("small.json");
	char *md;

	(void)state;
	/* The fixture's summary agrees with its changesets: without it, same text. */
	assert_int_equal(json_object_del(b, "summary"), 0);
	md = render(b, 0, NULL);
	assert_string_equal(md, small_md);
	free(md);
	/* The bundle's own summary wins when present. */
	assert_int_equal(json_object_set_new(b, "summary", json_pack("{s:i}", "creates", 7)), 0);
	md = render(b, 0, NULL);
	assert_non_null(strstr(md, "| Creates | 7 |\n| Updates | 4 |\n"));
	free(md);
	json_decref(b);
}

static void test_plan_markdown__errors_withhold_the_approve_command(void **state)
{
	json_t *b = fixture("small.json");
	char *md;

	(void)state;
	json_object_set_new(json_array_get(json_object_get(b, "diagnostics"), 0), "severity",
		json_string("error"));
	md = render(b, 0, NULL);
	assert_non_null(strstr(md,
		"**1 error**: fix it (see Diagnostics) before this plan can be applied.\n"));
	assert_non_null(strstr(md, "Plan hash: `" SMALL_HASH "`\n"));
	assert_null(strstr(md, "/pm-bot apply"));
	assert_non_null(strstr(md, "This plan has errors and cannot be approved.\n"));
	free(md);
	json_decref(b);
}

static void test_plan_markdown__shows_a_status_other_than_proposed(void **state)
{
	json_t *b = fixture("small.json");
	char *md;

	(void)state;
	json_object_set_new(json_array_get(json_object_get(b, "changesets"), 3), "status",
		json_string("failed"));
	md = render(b, 0, NULL);
	assert_non_null(strstr(md, "- `cs-0004` **add\\_labels** *(failed)*: add `prio:P0`\n"));
	assert_int_equal(occurrences(md, "*("), 2 + 1); /* (none), (auto-approved), (failed) */
	free(md);
	json_decref(b);
}

static void test_plan_markdown__rejects_what_is_not_a_bundle_and_keeps_content(void **state)
{
	static const char *const bad[] = {
		"[]",
		"{\"changesets\":[]}",
		"{\"plan_hash\":\"0123\",\"changesets\":[]}",
		"{\"plan_hash\":\"" "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef" "\"}",
		"{\"plan_hash\":42}",
	};
	pmbot_buf out = PMBOT_BUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_buf_puts(&out, "keep"), 0);
	assert_int_equal(pmbot_plan_markdown(&out, NULL, 0, NULL), PMBOT_ERROR);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *b = jload(bad[i]);

		assert_int_equal(pmbot_plan_markdown(&out, b, 0, NULL), PMBOT_ERROR);
		json_decref(b);
	}
	assert_string_equal(out.buf, "keep");
	pmbot_buf_free(&out);
}

static void test_plan_markdown__buffer_cap_fails_and_keeps_content(void **state)
{
	pmbot_buf out;
	json_t *b = fixture("small.json");

	(void)state;
	pmbot_buf_init(&out, 500);
	assert_int_equal(pmbot_buf_puts(&out, "keep"), 0);
	assert_int_equal(pmbot_plan_markdown(&out, b, 0, NULL), PMBOT_ERROR);
	assert_string_equal(out.buf, "keep");
	pmbot_buf_free(&out);
	json_decref(b);
}

/* ---- escaping ------------------------------------------------------------- */

static void test_plan_markdown__escapes_user_text_exactly(void **state)
{
	char *md = render_fixture("escaping.json");

	(void)state;
	assert_string_equal(md,
		"## pm-bot plan for `octo/app`\n"
		"\n"
		"| Change | Count |\n"
		"| :-- | --: |\n"
		"| Creates | 1 |\n"
		"| Updates | 1 |\n"
		"| Relationships | 0 |\n"
		"| Project | 0 |\n"
		"| Conflicts | 0 |\n"
		"| Orphaned | 0 |\n"
		"| Diagnostics | 1 |\n"
		"\n"
		"**2 changes** to 2 issues.\n"
		"\n"
		"**1 error**: fix it (see Diagnostics) before this plan can be applied.\n"
		"\n"
		"### Changes\n"
		"\n"
		"<details><summary><code>T-&lt;1&gt;</code> Fix &lt;script&gt;alert(1)&lt;/script&gt; "
		"&#124; &#42;bold&#42; &#96;code&#96; &#36;x&#36; &amp; &#126;&#126;s&#126;&#126; "
		"&#91;l&#93;(u) " DOT " new issue " DOT " 1 change</summary>\n"
		"\n"
		"- `cs-0001` **create\\_issue**: new issue "
		LQ "Fix \\<script\\>alert(1)\\</script\\> \\| \\*bold\\* \\`code\\` \\$x\\$ "
		"\\& \\~\\~s\\~\\~ \\[l\\](u)" RQ ", labels `area:a|b`, ``odd`label``\n"
		"\n"
		"</details>\n"
		"\n"
		"<details><summary><code>other/lib#42</code> " DOT " 1 change</summary>\n"
		"\n"
		"- `cs-0002` **update\\_issue\\_body**: body:\n"
		"  `````diff\n"
		"  --- current body\n"
		"  +++ planned body\n"
		"  @@ -1,5 +1,5 @@\n"
		"   ```\n"
		"   code\n"
		"  -```\n"
		"  -line\n"
		"  +````\n"
		"  +line" CRSYM "\n"
		"   end\n"
		"  \\ No newline at end of file\n"
		"  `````\n"
		"\n"
		"</details>\n"
		"\n"
		"### Diagnostics\n"
		"\n"
		"| Severity | Code | Location | Message |\n"
		"| --- | --- | --- | --- |\n"
		"| error | `LIMIT_SUB_ISSUES` | `plans/a\\|b.md:3` `/items/0` | "
		"parent F-1 would have 101 sub-issues \\| limit \\<100\\> |\n"
		"\n"
		"---\n"
		"\n"
		"Plan hash: `a65bd5525da1c1b72464d056ca72f519b87c9a8de6f8ea7e86f30e25c74f4d79`\n"
		"\n"
		"This plan has errors and cannot be approved.\n");
	free(md);
}

static void test_plan_markdown__user_text_never_becomes_markup(void **state)
{
	char *md = render_fixture("escaping.json");
	char *html = to_html(md);

	(void)state;
	/* No tag, emphasis, strikethrough or link from the title. */
	assert_null(strstr(html, "<script>"));
	assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_null(strstr(html, "<em>"));
	assert_null(strstr(html, "<del>"));
	assert_null(strstr(html, "<a "));
	assert_non_null(strstr(html, "[l](u)"));
	/* The summary table has 7 rows of 2 cells, the diagnostics row 4: a `|` split none. */
	assert_int_equal(occurrences(html, "<td"), 7 * 2 + 4);
	assert_non_null(strstr(html, "parent F-1 would have 101 sub-issues | limit &lt;100&gt;</td>"));
	/* The code span with a backtick keeps it. */
	assert_non_null(strstr(html, "<code>odd`label</code>"));
	free(html);
	free(md);
}

static void test_plan_markdown__diff_fence_outlasts_backticks_and_shows_cr(void **state)
{
	char *md = render_fixture("escaping.json"), *blocks;
	size_t n;

	(void)state;
	blocks = code_blocks(md, "diff", &n);
	assert_int_equal(n, 1);
	/* The body's own fences stay content, and the CR is visible, not a line end. */
	assert_string_equal(blocks,
		"--- current body\n+++ planned body\n@@ -1,5 +1,5 @@\n ```\n code\n-```\n-line\n"
		"+````\n+line" CRSYM "\n end\n\\ No newline at end of file\n");
	free(blocks);
	free(md);
}

/* ---- cut ---------------------------------------------------------------- */

static void test_plan_markdown__cut_of_2000_items_keeps_summary_hash_and_note(void **state)
{
	json_t *b = new_bundle();
	char *md, *blocks, key[256];
	size_t i, shown, n;

	(void)state;
	for (i = 0; i < 2000; i++) {
		char sid[16], title[64];

		snprintf(sid, sizeof(sid), "T-%04zu", i);
		snprintf(title, sizeof(title), "T\xc3\xa2" "che \xe2\x82\xac %zu \xf0\x9f\x9a\x80", i);
		add_cs(b, "update_issue_title", sid, json_pack("{s:s}", "title", title),
			json_pack("{s:s}", "title", "Old"), json_pack("{s:s}", "title", title));
	}
	for (i = 0; i < 2000; i++) {
		char sid[16];

		snprintf(sid, sizeof(sid), "T-%04zu", i);
		add_body_update(b, sid, 12, i % 12);
	}
	md = render(b, 0, "out/plan_*1*.json");

	assert_true(code_points(md) <= 65536);
	assert_valid_utf8(md);
	/* Nearly full: less than one more item would have fit. */
	assert_true(code_points(md) > 65536 - 1000);
	/* The summary counts every change, shown or not. */
	assert_non_null(strstr(md, "| Updates | 4000 |\n"));
	assert_non_null(strstr(md, "**4000 changes** to 2000 issues.\n"));
	assert_non_null(strstr(md, "Plan hash: `" HASH "`\n"));
	/* Whole sections only, a prefix of the items. */
	shown = occurrences(md, "<details>");
	assert_true(shown > 0 && shown < 2000);
	assert_int_equal(occurrences(md, "</details>"), shown);
	snprintf(key, sizeof(key), "<code>T-%04zu</code>", shown - 1);
	assert_non_null(strstr(md, key));
	snprintf(key, sizeof(key), "<code>T-%04zu</code>", shown);
	assert_null(strstr(md, key));
	snprintf(key, sizeof(key),
		"> **This plan was cut to fit in one comment.** Left out: %zu of 2000 items. "
		"The full plan is the JSON bundle: `out/plan_*1*.json`.\n", 2000 - shown);
	assert_non_null(strstr(md, key));
	/* Every diff fence is closed: the last fenced block is the command. */
	free(code_blocks(md, "diff", &n));
	assert_int_equal(n, shown);
	blocks = code_blocks(md, "", &n);
	assert_int_equal(n, 1);
	assert_string_equal(blocks, "/pm-bot apply " HASH "\n");
	free(blocks);
	free(md);
	json_decref(b);
}

static void test_plan_markdown__limit_counts_code_points_not_bytes(void **state)
{
	json_t *b = new_bundle();
	pmbot_buf title = PMBOT_BUF_INIT;
	char *md, *cut;
	size_t i, chars;

	(void)state;
	for (i = 0; i < 400; i++)
		assert_int_equal(pmbot_buf_puts(&title, "\xc3\xa9"), 0);
	for (i = 0; i < 50; i++) {
		char sid[16];

		snprintf(sid, sizeof(sid), "E-%02zu", i);
		add_cs(b, "create_issue", sid, json_pack("{s:s, s:s, s:[]}", "title", title.buf,
			"body", "x\n", "labels"), NULL, NULL);
	}
	md = render(b, 0, NULL);
	chars = code_points(md);
	/* Over 65,536 bytes, under 65,536 characters: not cut. */
	assert_true(strlen(md) > 65536);
	assert_true(chars <= 65536);
	assert_null(strstr(md, "cut to fit"));
	assert_int_equal(occurrences(md, "<details>"), 50);
	/* One character less and it is. */
	cut = render(b, chars - 1, NULL);
	assert_true(code_points(cut) <= chars - 1);
	assert_non_null(strstr(cut, "Left out: 1 of 50 items."));
	assert_int_equal(occurrences(cut, "<details>"), 49);
	free(cut);
	free(md);
	pmbot_buf_free(&title);
	json_decref(b);
}

static void test_plan_markdown__huge_diff_is_shortened_before_items_are_dropped(void **state)
{
	json_t *b = new_bundle();
	char *md, *before = body("BIG", 3000, SIZE_MAX), *after = body("big", 3000, SIZE_MAX);
	size_t i, n;

	(void)state;
	/* Every line differs: a 6,000-line diff, far past the 20,000 allowed. */
	add_cs(b, "update_issue_body", "BIG", json_pack("{s:s}", "body", after),
		json_pack("{s:s}", "body", before), json_pack("{s:s}", "body", after));
	for (i = 0; i < 5; i++) {
		char sid[16];

		snprintf(sid, sizeof(sid), "S-%zu", i);
		add_body_update(b, sid, 4, 1);
	}
	md = render(b, 20000, NULL);
	assert_true(code_points(md) <= 20000);
	assert_int_equal(occurrences(md, "<details>"), 6);
	assert_non_null(strstr(md, "- `cs-0001` **update\\_issue\\_body**: body: 3000 lines removed, "
		"3000 lines added (diff left out to fit the comment)\n"));
	assert_non_null(strstr(md, "> **This plan was cut to fit in one comment.** 1 body diff "
		"shortened to line counts. The full plan is the JSON bundle.\n"));
	assert_null(strstr(md, "Left out:"));
	free(code_blocks(md, "diff", &n));
	assert_int_equal(n, 5);
	free(md);
	free(before);
	free(after);
	json_decref(b);
}

static void test_plan_markdown__other_sections_are_cut_by_whole_entries(void **state)
{
	json_t *b = new_bundle(), *diags = json_object_get(b, "diagnostics");
	char *md;
	size_t i, rows;

	(void)state;
	add_body_update(b, "A-1", 4, 1);
	for (i = 0; i < 3000; i++)
		assert_int_equal(json_array_append_new(diags, json_pack("{s:s, s:s, s:s, s:s, s:i, s:s}",
			"code", "LIMIT_DEPENDENCIES", "severity", "error", "file", "plans/a.md",
			"path", "/items/1", "line", (int)i + 1, "message",
			"T-1 would be blocked by 51 issues; GitHub allows 50")), 0);
	md = render(b, 0, NULL);
	assert_true(code_points(md) <= 65536);
	assert_valid_utf8(md);
	rows = occurrences(md, "| error | `LIMIT_DEPENDENCIES` |");
	assert_true(rows > 0 && rows < 3000);
	assert_non_null(strstr(md, "| Diagnostics | 3000 |\n"));
	/*
	 * Diagnostics get their share, then the item; the rest of the rows
	 * fill what is left, and the note counts what was left out.
	 */
	{
		char want[160];

		snprintf(want, sizeof(want), "Left out: %zu of 3000 diagnostics.", 3000 - rows);
		assert_non_null(strstr(md, want));
	}
	assert_non_null(strstr(md, "<details>"));
	assert_non_null(strstr(md, "### Changes"));
	assert_non_null(strstr(md, "Plan hash: `" HASH "`\n"));
	free(md);
	json_decref(b);
}

static void test_plan_markdown__tiny_limit_still_keeps_summary_and_hash(void **state)
{
	json_t *b = fixture("small.json");
	char *md = render(b, 100, NULL);

	(void)state;
	assert_non_null(strstr(md, "| Creates | 1 |\n"));
	assert_non_null(strstr(md, "Plan hash: `" SMALL_HASH "`\n"));
	assert_non_null(strstr(md, "/pm-bot apply " SMALL_HASH "\n"));
	assert_non_null(strstr(md, "Left out: 2 of 2 items, 1 of 1 conflict, 1 of 1 orphaned issue, "
		"1 of 1 diagnostic."));
	assert_null(strstr(md, "<details>"));
	assert_null(strstr(md, "###"));
	free(md);
	json_decref(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_markdown__small_bundle_renders_exactly),
		cmocka_unit_test(test_plan_markdown__set_issue_type_reads_old_to_new_and_counts_as_an_update),
		cmocka_unit_test(test_plan_markdown__no_changes_says_so_and_offers_no_command),
		cmocka_unit_test(test_plan_markdown__appends_to_existing_content),
		cmocka_unit_test(test_plan_markdown__same_bundle_gives_same_bytes),
		cmocka_unit_test(test_plan_markdown__summary_counts_come_from_the_bundle_else_from_changesets),
		cmocka_unit_test(test_plan_markdown__errors_withhold_the_approve_command),
		cmocka_unit_test(test_plan_markdown__shows_a_status_other_than_proposed),
		cmocka_unit_test(test_plan_markdown__rejects_what_is_not_a_bundle_and_keeps_content),
		cmocka_unit_test(test_plan_markdown__buffer_cap_fails_and_keeps_content),
		cmocka_unit_test(test_plan_markdown__escapes_user_text_exactly),
		cmocka_unit_test(test_plan_markdown__user_text_never_becomes_markup),
		cmocka_unit_test(test_plan_markdown__diff_fence_outlasts_backticks_and_shows_cr),
		cmocka_unit_test(test_plan_markdown__cut_of_2000_items_keeps_summary_hash_and_note),
		cmocka_unit_test(test_plan_markdown__limit_counts_code_points_not_bytes),
		cmocka_unit_test(test_plan_markdown__huge_diff_is_shortened_before_items_are_dropped),
		cmocka_unit_test(test_plan_markdown__other_sections_are_cut_by_whole_entries),
		cmocka_unit_test(test_plan_markdown__tiny_limit_still_keeps_summary_and_hash),
		cmocka_unit_test(test_plan_markdown__a_local_plan_offers_the_local_command),
		cmocka_unit_test(test_plan_markdown__a_conflict_without_changes_is_not_a_match),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
