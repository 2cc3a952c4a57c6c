#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/fs.h"
#include "pmbot/render.h"
#include "pmbot/text.h"
#include "pmbot/banned.h"

/* ---- helpers ------------------------------------------------------------ */

static pmbot_workgraph *graph(void)
{
	pmbot_workgraph *g = NULL;

	assert_int_equal(pmbot_workgraph_new(&g), PMBOT_OK);
	return g;
}

/* Add a node from JSON text; its source path is /features/<n>. */
static void node(pmbot_workgraph *g, pmbot_node_type type, const char *json)
{
	json_error_t jerr;
	json_t *j = json_loads(json, 0, &jerr);
	char path[32];

	if (!j)
		fail_msg("bad test JSON: %s", jerr.text);
	snprintf(path, sizeof(path), "/features/%zu", g->n_nodes);
	assert_int_equal(pmbot_workgraph_add_node(g, type, j, path, 10 + (int)g->n_nodes), 0);
}

static void finish(pmbot_workgraph *g)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	assert_int_equal(pmbot_workgraph_finish(g, "plan.md", &d), PMBOT_OK);
	pmbot_diag_list_free(&d);
}

static pmbot_form *builtin(pmbot_node_type t)
{
	pmbot_form *f = NULL;

	assert_int_equal(pmbot_form_builtin(&f, t), PMBOT_OK);
	return f;
}

static pmbot_form *fixture(const char *name)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf b = PMBOT_BUF_INIT;
	pmbot_form *f = NULL;
	char path[256];

	snprintf(path, sizeof(path), "tests/fixtures/forms/%s", name);
	assert_int_equal(pmbot_fs_read(&b, path), 0);
	assert_int_equal(pmbot_form_parse(&f, path, b.buf, b.len, NULL, &d), PMBOT_OK);
	pmbot_buf_free(&b);
	pmbot_diag_list_free(&d);
	return f;
}

static int render(pmbot_rendered_issue *out, const pmbot_workgraph *g, const char *id,
	const pmbot_form *form, const pmbot_render_opts *opts, pmbot_diag_list *d)
{
	const pmbot_wg_node *n = pmbot_workgraph_find(g, id);

	assert_non_null(n);
	return pmbot_render_issue(out, g, n, form, opts, d);
}

static char *repeat(const char *unit, size_t times)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t i;

	for (i = 0; i < times; i++)
		assert_int_equal(pmbot_buf_puts(&b, unit), 0);
	return pmbot_buf_detach(&b, NULL);
}

/* ---- body -------------------------------------------------------------- */

static void test_render__body_lists_form_headings_with_values_on_the_next_line(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = builtin(PMBOT_NODE_FEATURE);
	char rev[PMBOT_SHA256_HEX_SIZE], marker[128];
	const char *content =
		"### Goal\nShip the parser\n\n"
		"### Acceptance criteria\n- [ ] parses\n- [ ] documented\n\n"
		/* report text never links (pmbot/text.h) */
		"### Links\n- https:" PMBOT_TEXT_ZWNJ "//example.com/design\n\n"
		"### Area\ncore\n\n"
		"### Priority\nP1\n\n"
		"### Size\nM\n\n"
		"### Estimate (hrs)\n4.5\n\n"
		"### Risk\nLow\n\n"
		"### Blocked by\nfeat:b, https:" PMBOT_TEXT_ZWNJ "//github.com/acme/x/issues/9\n\n"
		"### Actual (hrs)\n_No response_";

	(void)state;
	node(g, PMBOT_NODE_FEATURE, "{\"stable_id\":\"feat:a\",\"title\":\"Parser\","
		"\"goal\":\"Ship the parser\",\"area\":\"core\",\"priority\":\"P1\",\"size\":\"M\","
		"\"estimate_hrs\":4.5,\"risk\":\"Low\",\"needs_human\":false,"
		"\"acceptance_criteria\":[\"parses\",\"documented\"],"
		"\"links\":[\"https://example.com/design\"]}");
	node(g, PMBOT_NODE_FEATURE, "{\"stable_id\":\"feat:b\",\"title\":\"B\","
		"\"area\":\"core\",\"priority\":\"P2\"}");
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_DEPENDS_ON, "feat:a", "feat:b", 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_BLOCKED_BY, "feat:a",
		"https://github.com/acme/x/issues/9", 1), 0);
	finish(g);
	assert_int_equal(render(&iss, g, "feat:a", f, NULL, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);

	assert_int_equal(pmbot_sha256_hex(rev, content, strlen(content)), 0);
	/* The marker first, then a blank line: no section parser reads it into a field. */
	snprintf(marker, sizeof(marker), "<!-- pm-bot:id=feat:a rev=%s -->\n\n", rev);
	assert_int_equal(iss.body_len, strlen(marker) + strlen(content));
	assert_memory_equal(iss.body, marker, strlen(marker));
	assert_string_equal(iss.body + strlen(marker), content);
	assert_string_equal(iss.rev, rev);
	assert_string_equal(iss.title, "[feat] Parser");
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__missing_values_and_unmapped_headings_get_no_response(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = fixture("feature.yml");
	pmbot_body b;

	(void)state;
	node(g, PMBOT_NODE_FEATURE, "{\"stable_id\":\"feat:a\",\"title\":\"T\","
		"\"area\":\"core\",\"priority\":\"P1\"}");
	finish(g);
	assert_int_equal(render(&iss, g, "feat:a", f, NULL, &d), PMBOT_OK);
	assert_non_null(strstr(iss.body, "### Goal\n_No response_\n\n"));
	assert_non_null(strstr(iss.body, "### ADR impact?\n_No response_\n\n"));
	assert_non_null(strstr(iss.body, "### Area\ncore\n\n"));
	assert_int_equal(pmbot_body_parse(&b, iss.body, iss.body_len, NULL), 0);
	assert_string_equal(pmbot_body_get(&b, "Size"), "");
	assert_string_equal(pmbot_body_get(&b, "Blocked by"), "");
	assert_string_equal(pmbot_body_get(&b, "Priority"), "P1");
	pmbot_body_free(&b);
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__epic_form_maps_objective_size_epic_and_dependencies(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = fixture("epic.yml");

	(void)state;
	node(g, PMBOT_NODE_EPIC, "{\"stable_id\":\"epic:e\",\"title\":\"E\",\"area\":\"core\","
		"\"priority\":\"P0\",\"size\":\"XL\",\"objective\":\"Why\\nand how\","
		"\"milestones\":[{\"title\":\"M1\",\"target_date\":\"2026-03-01\"},{\"title\":\"M2\"}]}");
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_BLOCKED_BY, "epic:e",
		"https://github.com/acme/x/issues/1", 1), 0);
	finish(g);
	assert_int_equal(render(&iss, g, "epic:e", f, NULL, &d), PMBOT_OK);
	assert_non_null(strstr(iss.body, "### Objective (North Star)\nWhy\nand how\n\n"));
	assert_non_null(strstr(iss.body, "### Size (Epic)\nXL\n\n"));
	assert_non_null(strstr(iss.body,
		"### Milestones (vertical slices)\n- M1 (2026-03-01)\n- M2\n\n"));
	assert_non_null(strstr(iss.body, "### Dependencies (Blocked By / Blocks)\n"
		"https:" PMBOT_TEXT_ZWNJ "//github.com/acme/x/issues/1\n\n"));
	assert_non_null(strstr(iss.body, "### Scope In / Out\n_No response_\n\n"));
	assert_string_equal(iss.title, "[epic] E");
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__goal_falls_back_to_objective_and_back(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *feat = builtin(PMBOT_NODE_FEATURE), *epic = builtin(PMBOT_NODE_EPIC);

	(void)state;
	node(g, PMBOT_NODE_FEATURE, "{\"stable_id\":\"a\",\"title\":\"T\",\"objective\":\"O\"}");
	node(g, PMBOT_NODE_EPIC, "{\"stable_id\":\"b\",\"title\":\"T\",\"goal\":\"G\"}");
	finish(g);
	assert_int_equal(render(&iss, g, "a", feat, NULL, &d), PMBOT_OK);
	assert_non_null(strstr(iss.body, "### Goal\nO\n\n"));
	pmbot_rendered_issue_free(&iss);
	assert_int_equal(render(&iss, g, "b", epic, NULL, &d), PMBOT_OK);
	assert_non_null(strstr(iss.body, "### Objective\nG\n\n"));
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(feat);
	pmbot_form_free(epic);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__estimates_render_as_the_shortest_exact_number(void **state)
{
	static const struct {
		const char *json;
		const char *text;
		double value;
	} cases[] = {
		{ "4", "4", 4 }, { "4.0", "4", 4 }, { "4.5", "4.5", 4.5 }, { "0.1", "0.1", 0.1 },
		{ "1e21", "1e+21", 1e21 }, { "0.30000000000000004", "0.30000000000000004",
			0.30000000000000004 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
		pmbot_rendered_issue iss;
		pmbot_workgraph *g = graph();
		pmbot_form *f = builtin(PMBOT_NODE_TASK);
		char json[128];
		pmbot_body b;
		double h = -1;

		snprintf(json, sizeof(json), "{\"stable_id\":\"t\",\"title\":\"T\","
			"\"estimate_hrs\":%s}", cases[i].json);
		node(g, PMBOT_NODE_TASK, json);
		finish(g);
		assert_int_equal(render(&iss, g, "t", f, NULL, &d), PMBOT_OK);
		assert_int_equal(pmbot_body_parse(&b, iss.body, iss.body_len, NULL), 0);
		assert_string_equal(pmbot_body_get(&b, "Estimate (hrs)"), cases[i].text);
		assert_int_equal(pmbot_body_parse_hours(&h, pmbot_body_get(&b, "Estimate (hrs)")), 0);
		assert_true(h == cases[i].value);
		pmbot_body_free(&b);
		pmbot_rendered_issue_free(&iss);
		pmbot_form_free(f);
		pmbot_workgraph_free(g);
		pmbot_diag_list_free(&d);
	}
}

static void test_render__dependencies_merge_sort_dedupe_and_use_issue_refs(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = builtin(PMBOT_NODE_TASK);
	pmbot_strmap refs = PMBOT_STRMAP_INIT;
	pmbot_render_opts opts = { NULL, &refs };

	(void)state;
	node(g, PMBOT_NODE_TASK, "{\"stable_id\":\"t:a\",\"title\":\"A\"}");
	node(g, PMBOT_NODE_TASK, "{\"stable_id\":\"t:b\",\"title\":\"B\"}");
	node(g, PMBOT_NODE_TASK, "{\"stable_id\":\"t:c\",\"title\":\"C\"}");
	node(g, PMBOT_NODE_TASK, "{\"stable_id\":\"t:d\",\"title\":\"D\"}");
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_DEPENDS_ON, "t:a", "t:c", 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_BLOCKED_BY, "t:a", "t:b", 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_DEPENDS_ON, "t:a", "t:b", 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_RELATED, "t:a", "t:d", 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_PARENT_CHILD, "t:a", "t:d", 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_DEPENDS_ON, "t:d", "t:a", 0), 0);
	finish(g);
	assert_int_equal(render(&iss, g, "t:a", f, NULL, &d), PMBOT_OK);
	assert_non_null(strstr(iss.body, "### Blocked by\nt:b, t:c\n\n"));
	pmbot_rendered_issue_free(&iss);

	assert_int_equal(pmbot_strmap_put(&refs, "t:c", "#12", NULL), 0);
	assert_int_equal(render(&iss, g, "t:a", f, &opts, &d), PMBOT_OK);
	assert_non_null(strstr(iss.body, "### Blocked by\n#12, t:b\n\n"));
	pmbot_rendered_issue_free(&iss);
	pmbot_strmap_free(&refs);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

#define Z PMBOT_TEXT_ZWNJ

static void test_render__report_text_never_mentions_or_links(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = builtin(PMBOT_NODE_FEATURE);
	const char *marker;

	(void)state;
	node(g, PMBOT_NODE_FEATURE, "{\"stable_id\":\"feat:a\","
		"\"title\":\"Ask @octocat about acme/widgets#12 and #3\","
		"\"goal\":\"Ping @acme/core-team.\\nSee https://x.example/a and www.example.com,"
		" or run `@octocat #12 https://x` as is\","
		"\"area\":\"@area-owner\",\"risk\":\"GH-4 &#64;octocat\","
		"\"acceptance_criteria\":[\"@octocat approves acme/widgets#1\", \"`ok @x`\"],"
		"\"links\":[\"https://x.example/a\", \"www.example.com\"]}");
	finish(g);
	assert_int_equal(render(&iss, g, "feat:a", f, NULL, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);
	/* the form's prefix is pm-bot's, the rest the report's */
	assert_string_equal(iss.title,
		"[feat] Ask @" Z "octocat about acme/widgets#" Z "12 and #" Z "3");
	assert_non_null(strstr(iss.body, "### Goal\nPing @" Z "acme/core-team.\n"
		"See https:" Z "//x.example/a and www" Z ".example.com, "
		"or run `@octocat #12 https://x` as is\n\n"));
	assert_non_null(strstr(iss.body, "### Area\n@" Z "area-owner\n\n"));
	assert_non_null(strstr(iss.body, "### Risk\nGH-" Z "4 &#64;" Z "octocat\n\n"));
	assert_non_null(strstr(iss.body, "### Acceptance criteria\n"
		"- [ ] @" Z "octocat approves acme/widgets#" Z "1\n- [ ] `ok @x`\n\n"));
	assert_non_null(strstr(iss.body, "### Links\n- https:" Z "//x.example/a\n"
		"- www" Z ".example.com\n\n"));
	/* pm-bot's marker is its own, untouched; labels are not Markdown */
	marker = strstr(iss.body, "<!-- pm-bot:id=feat:a rev=");
	assert_non_null(marker);
	assert_ptr_equal(marker, iss.body);
	assert_memory_equal(marker + strlen("<!-- pm-bot:id=feat:a rev=") + 64, " -->\n\n###", 9);
	assert_int_equal(strchr(marker, '\n') - marker, strlen("<!-- pm-bot:id=feat:a rev=") + 64 + 4);
	assert_string_equal(iss.labels[0], "area:@area-owner");
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__only_pm_bots_own_issue_references_link_under_blocked_by(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = builtin(PMBOT_NODE_TASK);
	pmbot_strmap refs = PMBOT_STRMAP_INIT;
	pmbot_render_opts opts = { NULL, &refs };

	(void)state;
	node(g, PMBOT_NODE_TASK, "{\"stable_id\":\"t:a\",\"title\":\"A\"}");
	node(g, PMBOT_NODE_TASK, "{\"stable_id\":\"t:b\",\"title\":\"B\"}");
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_DEPENDS_ON, "t:a", "t:b", 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_BLOCKED_BY, "t:a",
		"https://github.com/acme/widgets/issues/1", 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_BLOCKED_BY, "t:a", "t:`@x", 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_BLOCKED_BY, "t:a", "t:@y`", 0), 0);
	finish(g);
	/* the report's targets, as it wrote them: no link, no code span across entries */
	assert_int_equal(render(&iss, g, "t:a", f, NULL, &d), PMBOT_OK);
	assert_non_null(strstr(iss.body, "### Blocked by\nhttps:" Z "//github.com/acme/widgets/"
		"issues/1, t:@" Z "y`, t:`@" Z "x, t:b\n\n"));
	pmbot_rendered_issue_free(&iss);
	/* the issue pm-bot resolved a target to is its own word, and links */
	assert_int_equal(pmbot_strmap_put(&refs, "t:b", "#12", NULL), 0);
	assert_int_equal(pmbot_strmap_put(&refs, "https://github.com/acme/widgets/issues/1",
		"acme/widgets#1", NULL), 0);
	assert_int_equal(render(&iss, g, "t:a", f, &opts, &d), PMBOT_OK);
	assert_non_null(strstr(iss.body, "### Blocked by\n#12, acme/widgets#1, t:@" Z "y`, t:`@" Z "x\n\n"));
	pmbot_rendered_issue_free(&iss);
	pmbot_strmap_free(&refs);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__hostile_values_cannot_inject_headings_or_markers(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = builtin(PMBOT_NODE_FEATURE);
	pmbot_body b;
	char rev[PMBOT_SHA256_HEX_SIZE];
	size_t i;
	const char *p;

	(void)state;
	node(g, PMBOT_NODE_FEATURE, "{\"stable_id\":\"feat:a\",\"title\":\"T\\n### Priority\","
		"\"area\":\"core\\n### Priority\\nP0\",\"priority\":\"P2\","
		"\"risk\":\"### Area\","
		"\"goal\":\"ok\\n### Area\\nevil\\n<!-- pm-bot:id=feat:evil rev="
		"0000000000000000000000000000000000000000000000000000000000000000 -->\\n-->\\n"
		"```\\n<pre>\","
		"\"acceptance_criteria\":[\"a\\r\\n### Risk\", \"--!> x\"]}");
	finish(g);
	assert_int_equal(render(&iss, g, "feat:a", f, NULL, &d), PMBOT_OK);
	assert_int_equal(pmbot_body_parse(&b, iss.body, iss.body_len, &d), 0);
	assert_int_equal(d.count, 0);
	/* The headings are the form's, no more. */
	assert_int_equal(b.n_fields, f->n_fields);
	for (i = 0; i < f->n_fields; i++)
		assert_string_equal(b.fields[i].heading, f->fields[i].label);
	assert_int_equal(b.marker, PMBOT_MARKER_OK);
	assert_string_equal(b.stable_id, "feat:a");
	assert_string_equal(pmbot_body_get(&b, "Area"), "core ### Priority P0");
	assert_string_equal(pmbot_body_get(&b, "Priority"), "P2");
	assert_string_equal(pmbot_body_get(&b, "Risk"), "\\### Area");
	assert_non_null(strstr(iss.body, "### Goal\nok\n\\### Area\nevil\n&lt;!-- pm-bot:id=feat:evil"));
	assert_non_null(strstr(iss.body, "--&gt;\n\\```\n&lt;pre>\n\n"));
	assert_non_null(strstr(iss.body, "- [ ] a ### Risk\n- [ ] --!&gt; x\n"));
	/* Only the marker, the first line, opens or closes a comment. */
	assert_ptr_equal(strstr(iss.body, "<!--"), iss.body);
	assert_null(strstr(iss.body + 1, "<!--"));
	p = strstr(iss.body, "-->");
	assert_ptr_equal(p, strchr(iss.body, '\n') - 3);
	assert_null(strstr(p + 1, "-->"));
	assert_string_equal(iss.title, "[feat] T ### Priority");
	assert_int_equal(pmbot_body_rev(rev, iss.body, iss.body_len), 0);
	assert_string_equal(rev, b.rev);
	pmbot_body_free(&b);
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__same_node_renders_the_same_bytes(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue a, b;
	pmbot_workgraph *g = graph();
	pmbot_form *f = fixture("feature.yml");
	size_t i;

	(void)state;
	node(g, PMBOT_NODE_FEATURE, "{\"stable_id\":\"f\",\"title\":\"T\",\"area\":\"x\","
		"\"priority\":\"P1\",\"goal\":\"g\",\"estimate_hrs\":2}");
	finish(g);
	assert_int_equal(render(&a, g, "f", f, NULL, &d), PMBOT_OK);
	assert_int_equal(render(&b, g, "f", f, NULL, &d), PMBOT_OK);
	assert_int_equal(a.body_len, b.body_len);
	assert_memory_equal(a.body, b.body, a.body_len);
	assert_string_equal(a.title, b.title);
	assert_int_equal(a.n_labels, b.n_labels);
	for (i = 0; i < a.n_labels; i++)
		assert_string_equal(a.labels[i], b.labels[i]);
	pmbot_rendered_issue_free(&a);
	pmbot_rendered_issue_free(&b);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

#define PLAN_HEAD "```pm-bot:report-ir/v1\n" \
	"schema_version: report_ir/v1\n" \
	"report: {title: T, generated_at: 2026-02-22, scope: {org: acme}}\n"

static void test_render__report_order_does_not_change_the_bodies(void **state)
{
	static const char *plans[2] = {
		PLAN_HEAD "features:\n"
		"  - {stable_id: 'feat:f', title: F, area: core, priority: P1, depends_on: ['feat:g', 'feat:h']}\n"
		"  - {stable_id: 'feat:g', title: G, goal: 'do g'}\n"
		"  - {stable_id: 'feat:h', title: H, area: cli, priority: P2}\n```\n",
		PLAN_HEAD "features:\n"
		"  - {stable_id: 'feat:h', priority: P2, title: H, area: cli}\n"
		"  - {stable_id: 'feat:g', goal: 'do g', title: G}\n"
		"  - {priority: P1, stable_id: 'feat:f', depends_on: ['feat:h', 'feat:g'], title: F, area: core}\n```\n",
	};
	char *bodies[2][3];
	int p;
	size_t i;

	(void)state;
	for (p = 0; p < 2; p++) {
		pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
		pmbot_workgraph *g = NULL;
		pmbot_form *f = builtin(PMBOT_NODE_FEATURE);

		assert_int_equal(pmbot_workgraph_load(&g, "plan.md", plans[p], strlen(plans[p]),
			NULL, &d), PMBOT_OK);
		assert_int_equal(g->n_nodes, 3);
		for (i = 0; i < 3; i++) {
			pmbot_rendered_issue iss;

			assert_int_equal(pmbot_render_issue(&iss, g, &g->nodes[i], f, NULL, &d), 0);
			bodies[p][i] = iss.body;
			iss.body = NULL;
			pmbot_rendered_issue_free(&iss);
		}
		pmbot_form_free(f);
		pmbot_workgraph_free(g);
		pmbot_diag_list_free(&d);
	}
	for (i = 0; i < 3; i++) {
		assert_string_equal(bodies[0][i], bodies[1][i]);
		free(bodies[0][i]);
		free(bodies[1][i]);
	}
}

/* ---- title ------------------------------------------------------------ */

static void test_render__title_is_prefix_plus_title_with_newlines_as_spaces(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = fixture("feature.yml");
	const char *rest;

	(void)state;
	node(g, PMBOT_NODE_FEATURE, "{\"stable_id\":\"f\",\"title\":\"  Two\\r\\nlines \\t here \"}");
	finish(g);
	assert_int_equal(render(&iss, g, "f", f, NULL, &d), PMBOT_OK);
	assert_string_equal(iss.title, "[feat] Two lines here");
	assert_int_equal(pmbot_render_title_strip(&rest, iss.title, f), PMBOT_OK);
	assert_string_equal(rest, "Two lines here");
	assert_int_equal(pmbot_render_title_strip(&rest, "Other title", f), PMBOT_ENOTFOUND);
	assert_string_equal(rest, "Other title");
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static int render_title_of(const char *title, pmbot_diag_list *d)
{
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = builtin(PMBOT_NODE_FEATURE); /* prefix "[feat] ": 7 characters */
	json_t *j = json_pack("{s:s,s:s}", "stable_id", "f", "title", title);
	int rc;

	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_FEATURE, j, "/features/3", 42), 0);
	finish(g);
	rc = render(&iss, g, "f", f, NULL, d);
	if (rc) {
		assert_null(iss.title);
		assert_null(iss.body);
	} else {
		assert_int_equal(strncmp(iss.title, "[feat] ", 7), 0);
	}
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	return rc;
}

static void test_render__title_of_256_characters_fits_257_is_reported(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	char *fits = repeat("x", 249), *over = repeat("x", 250);
	const pmbot_diag *diag;

	(void)state;
	assert_int_equal(render_title_of(fits, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);
	assert_int_equal(render_title_of(over, &d), PMBOT_EINVALID);
	diag = pmbot_diag_list_find(&d, "RENDER_TITLE_TOO_LONG");
	assert_non_null(diag);
	assert_string_equal(diag->path, "/features/3/title");
	assert_int_equal(diag->line, 42);
	assert_non_null(strstr(diag->message, "257"));
	free(fits);
	free(over);
	pmbot_diag_list_free(&d);
}

static void test_render__title_length_counts_characters_not_bytes(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	char *fits = repeat("\xc3\xa9", 249), *over = repeat("\xf0\x9f\x99\x82", 250);

	(void)state;
	assert_int_equal(render_title_of(fits, &d), PMBOT_OK);
	assert_int_equal(render_title_of(over, &d), PMBOT_EINVALID);
	assert_non_null(pmbot_diag_list_find(&d, "RENDER_TITLE_TOO_LONG"));
	free(fits);
	free(over);
	pmbot_diag_list_free(&d);
}

static void test_render__title_of_only_whitespace_is_reported(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(render_title_of(" \n\t ", &d), PMBOT_EINVALID);
	assert_non_null(pmbot_diag_list_find(&d, "RENDER_TITLE_EMPTY"));
	pmbot_diag_list_free(&d);
}

/* ---- limits and ids --------------------------------------------------- */

static void test_render__body_over_65536_characters_is_reported_not_cut(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = builtin(PMBOT_NODE_TASK);
	char *goal = repeat("\xe6\x97\xa5", 65536); /* 3 bytes, 1 character each */

	(void)state;
	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK,
		json_pack("{s:s,s:s,s:s}", "stable_id", "t", "title", "T", "goal", goal), NULL, 0), 0);
	finish(g);
	assert_int_equal(render(&iss, g, "t", f, NULL, &d), PMBOT_EINVALID);
	assert_non_null(pmbot_diag_list_find(&d, "RENDER_BODY_TOO_LONG"));
	assert_null(iss.body);
	pmbot_rendered_issue_free(&iss);
	pmbot_diag_list_free(&d);

	/* 60,000 characters (180,000 bytes) fit. */
	goal[60000 * 3] = '\0';
	pmbot_workgraph_free(g);
	g = graph();
	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK,
		json_pack("{s:s,s:s,s:s}", "stable_id", "t", "title", "T", "goal", goal), NULL, 0), 0);
	finish(g);
	assert_int_equal(render(&iss, g, "t", f, NULL, &d), PMBOT_OK);
	assert_true(iss.body_len > 180000);
	pmbot_rendered_issue_free(&iss);
	free(goal);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__rejects_stable_ids_unsafe_in_the_marker(void **state)
{
	static const char *const bad[] = { "feat: x", "feat:a-->", "a\tb", "a<!--b", "a--!>",
		"a\xe2\x80\xa8" "b", "a\xc2\xa0" "b", "" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
		pmbot_rendered_issue iss;
		pmbot_workgraph *g = graph();
		pmbot_form *f = builtin(PMBOT_NODE_TASK);
		const pmbot_diag *diag;

		assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK,
			json_pack("{s:s,s:s}", "stable_id", bad[i], "title", "T"), "/tasks/0", 7), 0);
		finish(g);
		assert_int_equal(render(&iss, g, bad[i], f, NULL, &d), PMBOT_EINVALID);
		diag = pmbot_diag_list_find(&d, "RENDER_UNSAFE_ID");
		assert_non_null(diag);
		assert_string_equal(diag->path, "/tasks/0/stable_id");
		pmbot_form_free(f);
		pmbot_workgraph_free(g);
		pmbot_diag_list_free(&d);
	}
}

static void test_render__accepts_ordinary_stable_ids(void **state)
{
	static const char *const good[] = { "feat:docs-contracts", "bug:a_b:c", "t-1", "épique:x" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
		pmbot_rendered_issue iss;
		pmbot_workgraph *g = graph();
		pmbot_form *f = builtin(PMBOT_NODE_TASK);
		pmbot_body b;

		assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK,
			json_pack("{s:s,s:s}", "stable_id", good[i], "title", "T"), NULL, 0), 0);
		finish(g);
		assert_int_equal(render(&iss, g, good[i], f, NULL, &d), PMBOT_OK);
		assert_int_equal(pmbot_body_parse(&b, iss.body, iss.body_len, NULL), 0);
		assert_int_equal(b.marker, PMBOT_MARKER_OK);
		assert_string_equal(b.stable_id, good[i]);
		pmbot_body_free(&b);
		pmbot_rendered_issue_free(&iss);
		pmbot_form_free(f);
		pmbot_workgraph_free(g);
		pmbot_diag_list_free(&d);
	}
}

/* ---- labels ----------------------------------------------------------- */

static void expect_labels(const pmbot_rendered_issue *iss, const char *const *want, size_t n)
{
	size_t i;

	assert_int_equal(iss->n_labels, n);
	for (i = 0; i < n; i++)
		assert_string_equal(iss->labels[i], want[i]);
}

static void test_render__labels_follow_the_scheme_sorted_and_unique(void **state)
{
	static const char *const want[] = { "area:core", "needs-human", "prio:Triage",
		"size:M", "status:in progress", "type:bug" };
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = builtin(PMBOT_NODE_BUG);

	(void)state;
	node(g, PMBOT_NODE_BUG, "{\"stable_id\":\"bug:x\",\"title\":\"X\",\"area\":\"core\","
		"\"priority\":\"Triage\",\"size\":\"M\",\"status\":\"in\\nprogress\",\"needs_human\":true}");
	finish(g);
	assert_int_equal(render(&iss, g, "bug:x", f, NULL, &d), PMBOT_OK);
	expect_labels(&iss, want, sizeof(want) / sizeof(want[0]));
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static pmbot_form *form_text(const char *text)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_form *f = NULL;

	assert_int_equal(pmbot_form_parse(&f, "t/f.yml", text, strlen(text), NULL, &d), PMBOT_OK);
	pmbot_diag_list_free(&d);
	return f;
}

static void test_render__open_type_without_form_uses_task_builtin_and_warns(void **state)
{
	static const char *const want[] = { "area:core", "prio:P1", "type:ops" };
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *task = builtin(PMBOT_NODE_TASK);

	(void)state;
	node(g, PMBOT_NODE_OTHER, "{\"stable_id\":\"ops:x\",\"type\":\"ops\",\"title\":\"X\","
		"\"area\":\"core\",\"priority\":\"P1\",\"goal\":\"G\"}");
	finish(g);
	assert_string_equal(g->nodes[0].type_name, "ops");
	assert_int_equal(render(&iss, g, "ops:x", NULL, NULL, &d), PMBOT_OK);
	assert_string_equal(iss.title, "[ops] X");
	expect_labels(&iss, want, 3);
	assert_int_equal(d.errors, 0);
	assert_int_equal(d.count, 1);
	assert_string_equal(d.items[0].code, "RENDER_NO_FORM");
	assert_int_equal(d.items[0].severity, PMBOT_SEV_WARNING);
	assert_string_equal(d.items[0].path, "/features/0/type");
	assert_int_equal(d.items[0].line, 10);
	/* The task built-in's headings. */
	assert_string_equal(task->fields[0].label, "Goal");
	assert_non_null(strstr(iss.body, "### Goal\n"));
	assert_non_null(strstr(iss.body, "### Acceptance criteria\n"));
	assert_non_null(strstr(iss.body, "### Links\n"));
	assert_non_null(strstr(iss.body, "### Blocked by\n"));
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(task);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__repository_form_names_an_open_type_by_label(void **state)
{
	static const char *const want[] = { "area:core", "prio:P1", "type:ops" };
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = form_text("name: Operations\ntitle: '[OPS] '\nlabels: [type:ops]\n"
		"body: [{type: textarea, attributes: {label: Goal}}]\n");

	(void)state;
	assert_int_equal(f->type, PMBOT_NODE_OTHER);
	assert_string_equal(f->type_name, "ops");
	node(g, PMBOT_NODE_OTHER, "{\"stable_id\":\"ops:x\",\"type\":\"ops\",\"title\":\"X\","
		"\"area\":\"core\",\"priority\":\"P1\"}");
	finish(g);
	assert_int_equal(render(&iss, g, "ops:x", f, NULL, &d), PMBOT_OK);
	assert_string_equal(iss.title, "[OPS] X");
	expect_labels(&iss, want, 3);
	assert_int_equal(d.count, 0);
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__repository_type_label_wins(void **state)
{
	static const char *const builtin_want[] = { "area:core", "prio:P1", "type:benchmark" };
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = form_text("name: Perf run\nlabels: [type:bench, perf]\n"
		"body: [{type: textarea, attributes: {label: Goal}}]\n");
	pmbot_form *b = builtin(PMBOT_NODE_BENCHMARK);
	static const char *const with_perf[] = { "area:core", "perf", "prio:P1", "type:bench" };

	(void)state;
	assert_int_equal(f->type, PMBOT_NODE_BENCHMARK);
	node(g, PMBOT_NODE_BENCHMARK, "{\"stable_id\":\"bench:x\",\"type\":\"benchmark\","
		"\"title\":\"X\",\"area\":\"core\",\"priority\":\"P1\"}");
	finish(g);
	assert_int_equal(render(&iss, g, "bench:x", f, NULL, &d), PMBOT_OK);
	expect_labels(&iss, with_perf, 4);
	pmbot_rendered_issue_free(&iss);
	assert_int_equal(render(&iss, g, "bench:x", b, NULL, &d), PMBOT_OK);
	expect_labels(&iss, builtin_want, 3);
	assert_string_equal(iss.title, "[bench] X");
	pmbot_rendered_issue_free(&iss);
	assert_int_equal(d.count, 0);
	pmbot_form_free(f);
	/* A label that only differs in case leaves the label as it always was. */
	f = form_text("name: Perf\nlabels: [type:Benchmark]\n"
		"body: [{type: textarea, attributes: {label: Goal}}]\n");
	assert_int_equal(render(&iss, g, "bench:x", f, NULL, &d), PMBOT_OK);
	expect_labels(&iss, builtin_want, 3);
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_form_free(b);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

/*
 * Labels are sorted by bytes and each is kept once, however many the form
 * gives and in whatever order: a few (sorted by insertion) and more than
 * sixteen (by qsort), repeats among them and with the scheme's own.
 */
static void test_render__many_form_labels_are_sorted_and_unique(void **state)
{
	static const char *const few[] = { "a", "area:core", "b", "prio:P1", "type:task" };
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_buf text = PMBOT_BUF_INIT, want = PMBOT_BUF_INIT;
	const char *many[24];
	pmbot_form *f;
	size_t i, n = 0;
	int k;

	(void)state;
	node(g, PMBOT_NODE_TASK, "{\"stable_id\":\"task:x\",\"title\":\"X\","
		"\"area\":\"core\",\"priority\":\"P1\"}");
	finish(g);
	f = form_text("name: Task\nlabels: [b, type:task, a, b]\n"
		"body: [{type: textarea, attributes: {label: Goal}}]\n");
	assert_int_equal(render(&iss, g, "task:x", f, NULL, &d), PMBOT_OK);
	expect_labels(&iss, few, sizeof(few) / sizeof(few[0]));
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);

	/* z19 down to z00, z07 again: with the scheme's three, 24 to sort. */
	assert_int_equal(pmbot_buf_puts(&text, "name: Task\nlabels: ["), 0);
	for (k = 19; k >= 0; k--)
		assert_int_equal(pmbot_buf_printf(&text, "z%02d, ", k), 0);
	assert_int_equal(pmbot_buf_puts(&text, "z07]\n"
		"body: [{type: textarea, attributes: {label: Goal}}]\n"), 0);
	f = form_text(text.buf);
	assert_int_equal(render(&iss, g, "task:x", f, NULL, &d), PMBOT_OK);
	many[n++] = "area:core";
	many[n++] = "prio:P1";
	many[n++] = "type:task";
	/* Each "zNN" and its NUL, 4 bytes: pointers once the buffer is whole. */
	for (k = 0; k < 20; k++)
		assert_int_equal(pmbot_buf_printf(&want, "z%02d%c", k, '\0'), 0);
	for (i = 0; i < 20; i++)
		many[n++] = want.buf + 4 * i;
	expect_labels(&iss, many, n);
	assert_int_equal(d.count, 0);
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_buf_free(&text);
	pmbot_buf_free(&want);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__form_default_labels_yield_to_the_nodes_values(void **state)
{
	static const char *const with_status[] = { "area:core", "prio:P1", "roadmap",
		"status:done", "type:feature" };
	static const char *const without[] = { "area:core", "prio:P1", "roadmap",
		"status:backlog", "type:feature" };
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = fixture("feature.yml"); /* type:feature, status:backlog, roadmap */

	(void)state;
	node(g, PMBOT_NODE_FEATURE, "{\"stable_id\":\"a\",\"title\":\"A\",\"area\":\"core\","
		"\"priority\":\"P1\",\"status\":\"done\",\"needs_human\":false}");
	node(g, PMBOT_NODE_FEATURE, "{\"stable_id\":\"b\",\"title\":\"B\",\"area\":\"core\","
		"\"priority\":\"P1\"}");
	finish(g);
	assert_int_equal(render(&iss, g, "a", f, NULL, &d), PMBOT_OK);
	expect_labels(&iss, with_status, 5);
	pmbot_rendered_issue_free(&iss);
	assert_int_equal(render(&iss, g, "b", f, NULL, &d), PMBOT_OK);
	expect_labels(&iss, without, 5);
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__labels_use_a_custom_scheme(void **state)
{
	static const char *const want[] = { "Area/core", "P/P0", "kind/task" };
	pmbot_label_scheme s = { "kind/", "Area/", "P/", "S/", "St/" };
	pmbot_render_opts opts = { &s, NULL };
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = builtin(PMBOT_NODE_TASK);

	(void)state;
	node(g, PMBOT_NODE_TASK, "{\"stable_id\":\"a\",\"title\":\"A\",\"area\":\"core\","
		"\"priority\":\"P0\"}");
	finish(g);
	assert_int_equal(render(&iss, g, "a", f, &opts, &d), PMBOT_OK);
	expect_labels(&iss, want, 3);
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__label_over_50_characters_is_reported(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = builtin(PMBOT_NODE_TASK);
	char *fits = repeat("a", 45), *over = repeat("\xc3\xa9", 46); /* "area:" is 5 */

	(void)state;
	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK,
		json_pack("{s:s,s:s,s:s}", "stable_id", "a", "title", "A", "area", fits), NULL, 0), 0);
	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK,
		json_pack("{s:s,s:s,s:s}", "stable_id", "b", "title", "B", "area", over), NULL, 0), 0);
	finish(g);
	assert_int_equal(render(&iss, g, "a", f, NULL, &d), PMBOT_OK);
	pmbot_rendered_issue_free(&iss);
	assert_int_equal(d.count, 0);
	assert_int_equal(render(&iss, g, "b", f, NULL, &d), PMBOT_EINVALID);
	assert_non_null(pmbot_diag_list_find(&d, "RENDER_LABEL_TOO_LONG"));
	assert_int_equal(iss.n_labels, 0);
	free(fits);
	free(over);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_render__reports_every_problem_of_an_item(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_workgraph *g = graph();
	pmbot_form *f = builtin(PMBOT_NODE_TASK);
	char *title = repeat("t", 300), *area = repeat("a", 60);

	(void)state;
	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK,
		json_pack("{s:s,s:s,s:s}", "stable_id", "a b", "title", title, "area", area), NULL, 0), 0);
	finish(g);
	assert_int_equal(render(&iss, g, "a b", f, NULL, &d), PMBOT_EINVALID);
	assert_non_null(pmbot_diag_list_find(&d, "RENDER_UNSAFE_ID"));
	assert_non_null(pmbot_diag_list_find(&d, "RENDER_TITLE_TOO_LONG"));
	assert_non_null(pmbot_diag_list_find(&d, "RENDER_LABEL_TOO_LONG"));
	assert_int_equal(d.errors, 3);
	free(title);
	free(area);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

/* ---- shortcuts against the general path ---------------------------------- */

static const char *const pieces[] = {
	"a", "b", "Z", "0", "7", " ", "  ", "\t", "-", "--", "<", "<!--", "-->", "--!>", "#",
	"###", "```", "~~~", "<pre", "<!", "<?", ">", "_No response_", "_", "@", "@team", "#12",
	"`", "``", "&lt;", "&#64;", "\\", "www.", "://", "gh-1", "|", "\n", "\r\n", "\x01",
	"\xc2\x85", "\xe2\x80\xa8", "\xe2\x80\x8c", "\xc3\xa9", "x y", "P1", "checkout",
};

static unsigned long gen_next(unsigned long *seed)
{
	*seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
	return *seed >> 33;
}

/* A value: absent (NULL) now and then, often plain words, else pieces. */
static json_t *gen_string(unsigned long *seed)
{
	static const char *const words[] = { "Ship", "the", "parser", "P2", "M", "Low" };
	pmbot_buf b = PMBOT_BUF_INIT;
	unsigned long r = gen_next(seed), n = r % 6, i;
	json_t *v;

	if (r % 7 == 0)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned long k = gen_next(seed);

		if (r % 2)
			assert_int_equal(pmbot_buf_puts(&b, words[k % 6]), 0);
		else
			assert_int_equal(pmbot_buf_puts(&b, pieces[k %
				(sizeof(pieces) / sizeof(pieces[0]))]), 0);
		if (r % 2 && i + 1 < n)
			assert_int_equal(pmbot_buf_putc(&b, ' '), 0);
	}
	v = json_stringn(b.buf, b.len);
	pmbot_buf_free(&b);
	return v;
}

static void set_gen(json_t *o, const char *key, unsigned long *seed)
{
	json_t *v = gen_string(seed);

	if (v)
		assert_int_equal(json_object_set_new(o, key, v), 0);
}

static json_t *gen_list(unsigned long *seed, int milestones)
{
	json_t *a = json_array();
	unsigned long n = gen_next(seed) % 4, i;

	assert_non_null(a);
	for (i = 0; i < n; i++) {
		json_t *v = gen_string(seed);

		if (milestones && v) {
			json_t *m = json_object();

			assert_int_equal(json_object_set_new(m, "title", v), 0);
			set_gen(m, "target_date", seed);
			v = m;
		}
		if (v)
			assert_int_equal(json_array_append_new(a, v), 0);
	}
	return a;
}

static void assert_same_issue(const pmbot_rendered_issue *a, const pmbot_rendered_issue *b)
{
	size_t i;

	assert_string_equal(a->title, b->title);
	assert_int_equal(a->body_len, b->body_len);
	assert_memory_equal(a->body, b->body, a->body_len);
	assert_string_equal(a->rev, b->rev);
	assert_int_equal(a->n_labels, b->n_labels);
	for (i = 0; i < a->n_labels; i++)
		assert_string_equal(a->labels[i], b->labels[i]);
}

/*
 * 3,000 generated items (every field of every built-in form, values from
 * the pieces the rules look at, numbers whole and not) render to the same
 * title, labels, body and rev with the shortcuts (pmbot_render__fast) and
 * without; and each body is its marker, a blank line and fields whose
 * pmbot_body_rev() is the marker's rev.
 */
static void test_render__shortcuts_render_the_bytes_of_the_general_path(void **state)
{
	static const pmbot_node_type types[] = { PMBOT_NODE_EPIC, PMBOT_NODE_FEATURE,
		PMBOT_NODE_TASK, PMBOT_NODE_BUG, PMBOT_NODE_BENCHMARK };
	pmbot_form *forms[5];
	pmbot_workgraph *g = graph();
	unsigned long seed = 42;
	size_t i, k;

	(void)state;
	for (k = 0; k < 5; k++)
		forms[k] = builtin(types[k]);
	for (i = 0; i < 3000; i++) {
		json_t *j = json_object();
		char id[32];
		unsigned long r = gen_next(&seed);

		snprintf(id, sizeof(id), "task:g%zu", i);
		assert_int_equal(json_object_set_new(j, "stable_id", json_string(id)), 0);
		set_gen(j, "title", &seed);
		set_gen(j, "area", &seed);
		set_gen(j, "priority", &seed);
		set_gen(j, "size", &seed);
		set_gen(j, "status", &seed);
		set_gen(j, "risk", &seed);
		set_gen(j, "goal", &seed);
		set_gen(j, "objective", &seed);
		/* A string in place of the list is one item. */
		if (r % 5)
			assert_int_equal(json_object_set_new(j, "acceptance_criteria",
				gen_list(&seed, 0)), 0);
		else
			set_gen(j, "acceptance_criteria", &seed);
		assert_int_equal(json_object_set_new(j, "links", gen_list(&seed, 0)), 0);
		assert_int_equal(json_object_set_new(j, "milestones", gen_list(&seed, 1)), 0);
		/* The ends of the integers first, then a spread. */
		assert_int_equal(json_object_set_new(j, "estimate_hrs", i < 5 ?
			json_integer(i == 0 ? LLONG_MIN : i == 1 ? LLONG_MAX : i == 2 ? 0 :
				i == 3 ? -1 : 1000000007) : r % 3 == 0 ?
			json_integer((json_int_t)(r % 1000) - 10) :
			r % 3 == 1 ? json_real((double)(r % 10007) / 7.0) : json_string("~4 h")), 0);
		assert_int_equal(json_object_set_new(j, "needs_human", json_boolean(r % 2)), 0);
		assert_int_equal(pmbot_workgraph_add_node(g, types[r % 5], j, "/x", 1), 0);
		if (i && r % 4 == 0) {
			json_t *to = gen_string(&seed);

			assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_BLOCKED_BY, id,
				to ? json_string_value(to) : "task:g0", 1), 0);
			json_decref(to);
		}
	}
	finish(g);
	for (i = 0; i < g->n_nodes; i++) {
		const pmbot_wg_node *n = &g->nodes[i];
		const pmbot_form *f = forms[0];
		pmbot_diag_list d1 = PMBOT_DIAG_LIST_INIT, d2 = PMBOT_DIAG_LIST_INIT;
		pmbot_rendered_issue fast, general;
		char rev[PMBOT_SHA256_HEX_SIZE], marker[128];
		const char *fields;
		int rc;

		for (k = 0; k < 5; k++)
			if (types[k] == n->type)
				f = forms[k];
		pmbot_render__fast = 1;
		rc = pmbot_render_issue(&fast, g, n, f, NULL, &d1);
		pmbot_render__fast = 0;
		assert_int_equal(pmbot_render_issue(&general, g, n, f, NULL, &d2), rc);
		pmbot_render__fast = 1;
		assert_int_equal(d1.count, d2.count);
		if (rc == PMBOT_OK) {
			assert_same_issue(&fast, &general);
			snprintf(marker, sizeof(marker), "<!-- pm-bot:id=%s rev=%s -->\n\n",
				n->stable_id, fast.rev);
			assert_true(fast.body_len > strlen(marker));
			assert_memory_equal(fast.body, marker, strlen(marker));
			fields = fast.body + strlen(marker);
			assert_int_equal(pmbot_body_rev(rev, fields, strlen(fields)), 0);
			assert_string_equal(rev, fast.rev);
			assert_int_equal(pmbot_body_rev(rev, fast.body, fast.body_len), 0);
			assert_string_equal(rev, fast.rev);
		}
		pmbot_rendered_issue_free(&fast);
		pmbot_rendered_issue_free(&general);
		pmbot_diag_list_free(&d1);
		pmbot_diag_list_free(&d2);
	}
	for (k = 0; k < 5; k++)
		pmbot_form_free(forms[k]);
	pmbot_workgraph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render__body_lists_form_headings_with_values_on_the_next_line),
		cmocka_unit_test(test_render__missing_values_and_unmapped_headings_get_no_response),
		cmocka_unit_test(test_render__epic_form_maps_objective_size_epic_and_dependencies),
		cmocka_unit_test(test_render__goal_falls_back_to_objective_and_back),
		cmocka_unit_test(test_render__estimates_render_as_the_shortest_exact_number),
		cmocka_unit_test(test_render__dependencies_merge_sort_dedupe_and_use_issue_refs),
		cmocka_unit_test(test_render__report_text_never_mentions_or_links),
		cmocka_unit_test(test_render__only_pm_bots_own_issue_references_link_under_blocked_by),
		cmocka_unit_test(test_render__hostile_values_cannot_inject_headings_or_markers),
		cmocka_unit_test(test_render__same_node_renders_the_same_bytes),
		cmocka_unit_test(test_render__report_order_does_not_change_the_bodies),
		cmocka_unit_test(test_render__title_is_prefix_plus_title_with_newlines_as_spaces),
		cmocka_unit_test(test_render__title_of_256_characters_fits_257_is_reported),
		cmocka_unit_test(test_render__title_length_counts_characters_not_bytes),
		cmocka_unit_test(test_render__title_of_only_whitespace_is_reported),
		cmocka_unit_test(test_render__body_over_65536_characters_is_reported_not_cut),
		cmocka_unit_test(test_render__rejects_stable_ids_unsafe_in_the_marker),
		cmocka_unit_test(test_render__accepts_ordinary_stable_ids),
		cmocka_unit_test(test_render__labels_follow_the_scheme_sorted_and_unique),
		cmocka_unit_test(test_render__open_type_without_form_uses_task_builtin_and_warns),
		cmocka_unit_test(test_render__repository_form_names_an_open_type_by_label),
		cmocka_unit_test(test_render__repository_type_label_wins),
		cmocka_unit_test(test_render__form_default_labels_yield_to_the_nodes_values),
		cmocka_unit_test(test_render__many_form_labels_are_sorted_and_unique),
		cmocka_unit_test(test_render__labels_use_a_custom_scheme),
		cmocka_unit_test(test_render__label_over_50_characters_is_reported),
		cmocka_unit_test(test_render__reports_every_problem_of_an_item),
		cmocka_unit_test(test_render__shortcuts_render_the_bytes_of_the_general_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
