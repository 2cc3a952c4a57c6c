#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/json.h"
#include "pmbot/text.h"
#include "pmbot/workgraph.h"
#include "../../src/workgraph/check.h"
#include "pmbot/banned.h"

static pmbot_workgraph *load(const char *md, pmbot_diag_list *d, int expect)
{
	pmbot_workgraph *g = NULL;

	assert_int_equal(pmbot_workgraph_load(&g, "plan.md", md, strlen(md), NULL, d), expect);
	return g;
}

static char *canonical(const pmbot_workgraph *g)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	json_t *doc = NULL;

	assert_int_equal(pmbot_workgraph_to_json(&doc, g), 0);
	assert_int_equal(pmbot_json_canonical(&b, doc), 0);
	json_decref(doc);
	return pmbot_buf_detach(&b, NULL);
}

#define HEAD "```pm-bot:report-ir/v1\n" \
	"schema_version: report_ir/v1\n" \
	"report: {title: T, generated_at: 2026-02-22, scope: {org: acme}}\n"

static const char *plan_a = HEAD
	"epics:\n"
	"  - {stable_id: 'epic:e', title: E, area: core, priority: P1, features: ['feat:f']}\n"
	"features:\n"
	"  - {stable_id: 'feat:f', title: F, area: core, priority: P1, epic_id: 'epic:e', size: M,\n"
	"     depends_on: ['feat:g']}\n"
	"  - {stable_id: 'feat:g', title: G, goal: 'do g', estimate_hrs: 4}\n"
	"tasks:\n"
	"  - {stable_id: 'bug:b', type: bug, title: B, area: core, priority: P2, feature_id: 'feat:f',\n"
	"     blocked_by: ['https://github.com/acme/x/issues/9']}\n"
	"```\n";

/* The same plan with items and lists in another order. */
static const char *plan_b = HEAD
	"tasks:\n"
	"  - {stable_id: 'bug:b', feature_id: 'feat:f', type: bug, title: B, priority: P2, area: core,\n"
	"     blocked_by: ['https://github.com/acme/x/issues/9']}\n"
	"features:\n"
	"  - {stable_id: 'feat:g', estimate_hrs: 4, title: G, goal: 'do g'}\n"
	"  - {stable_id: 'feat:f', depends_on: ['feat:g'], title: F, area: core, priority: P1, size: M}\n"
	"epics:\n"
	"  - {stable_id: 'epic:e', title: E, area: core, priority: P1, features: ['feat:f']}\n"
	"```\n";

static void test_workgraph__maps_items_edges_and_triage_defaults(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = load(plan_a, &d, PMBOT_OK);
	char *json = canonical(g);

	(void)state;
	assert_string_equal(json,
		"{\"edges\":["
		"{\"edge_type\":\"parent_child\",\"from_id\":\"epic:e\",\"provenance\":\"report_ir\",\"to_id\":\"feat:f\"},"
		"{\"edge_type\":\"parent_child\",\"from_id\":\"feat:f\",\"provenance\":\"report_ir\",\"to_id\":\"bug:b\"},"
		"{\"edge_type\":\"depends_on\",\"from_id\":\"feat:f\",\"provenance\":\"report_ir\",\"to_id\":\"feat:g\"},"
		"{\"edge_type\":\"blocked_by\",\"external\":true,\"from_id\":\"bug:b\",\"provenance\":\"report_ir\","
		"\"to_id\":\"https://github.com/acme/x/issues/9\"}],"
		"\"nodes\":["
		"{\"area\":\"core\",\"needs_human\":false,\"priority\":\"P2\",\"stable_id\":\"bug:b\",\"title\":\"B\",\"type\":\"bug\"},"
		"{\"area\":\"core\",\"needs_human\":false,\"priority\":\"P1\",\"stable_id\":\"epic:e\",\"title\":\"E\",\"type\":\"epic\"},"
		"{\"area\":\"core\",\"needs_human\":false,\"priority\":\"P1\",\"size\":\"M\",\"stable_id\":\"feat:f\",\"title\":\"F\",\"type\":\"feature\"},"
		"{\"area\":\"triage\",\"estimate_hrs\":4,\"goal\":\"do g\",\"needs_human\":true,\"priority\":\"Triage\",\"stable_id\":\"feat:g\",\"title\":\"G\",\"type\":\"feature\"}],"
		"\"schema_version\":\"workgraph/v1\"}");
	assert_non_null(pmbot_diag_list_find(&d, "MISSING_AREA"));
	assert_string_equal(pmbot_workgraph_parent(g, pmbot_workgraph_find(g, "bug:b"))->stable_id, "feat:f");
	assert_null(pmbot_workgraph_parent(g, pmbot_workgraph_find(g, "epic:e")));
	free(json);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_workgraph__blank_area_and_priority_are_triaged(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = load(HEAD
		"tasks:\n"
		"  - {stable_id: 'task:a', title: A, area: '   ', priority: \"\\u00a0\\n\"}\n"
		"  - {stable_id: 'task:b', title: B, area: '_No response_', priority: P1}\n"
		"  - {stable_id: 'task:c', title: C, area: \"\\u00a0core\\u200b\", priority: ' P2 '}\n"
		"```\n", &d, PMBOT_OK);
	char *json = canonical(g);

	(void)state;
	assert_string_equal(json, "{\"edges\":[],\"nodes\":["
		"{\"area\":\"triage\",\"needs_human\":true,\"priority\":\"Triage\",\"stable_id\":\"task:a\",\"title\":\"A\",\"type\":\"task\"},"
		"{\"area\":\"triage\",\"needs_human\":true,\"priority\":\"P1\",\"stable_id\":\"task:b\",\"title\":\"B\",\"type\":\"task\"},"
		/* No label starts or ends with an invisible character. */
		"{\"area\":\"core\",\"needs_human\":false,\"priority\":\"P2\",\"stable_id\":\"task:c\",\"title\":\"C\",\"type\":\"task\"}],"
		"\"schema_version\":\"workgraph/v1\"}");
	free(json);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_workgraph__output_does_not_depend_on_report_order(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *a = load(plan_a, &d, PMBOT_OK), *b = load(plan_b, &d, PMBOT_OK);
	char *ja = canonical(a), *jb = canonical(b);

	(void)state;
	assert_string_equal(ja, jb);
	free(ja);
	free(jb);
	pmbot_workgraph_free(a);
	pmbot_workgraph_free(b);
	pmbot_diag_list_free(&d);
}

static void test_workgraph__dependency_cycles_are_warnings_with_their_path(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"tasks:\n"
		"  - {stable_id: 'task:a', title: A, area: x, priority: p, depends_on: ['task:b']}\n"
		"  - {stable_id: 'task:b', title: B, area: x, priority: p, blocked_by: ['task:c']}\n"
		"  - {stable_id: 'task:c', title: C, area: x, priority: p, depends_on: ['task:a']}\n"
		"  - {stable_id: 'task:d', title: D, area: x, priority: p, depends_on: ['task:d']}\n"
		"```\n";
	pmbot_workgraph *g = load(md, &d, PMBOT_OK);
	const pmbot_diag *x;
	size_t i, n = 0;

	(void)state;
	assert_non_null(g);
	for (i = 0; i < d.count; i++)
		n += !strcmp(d.items[i].code, "DEPENDENCY_CYCLE");
	assert_int_equal(n, 2);
	x = pmbot_diag_list_find(&d, "DEPENDENCY_CYCLE");
	assert_int_equal(x->severity, PMBOT_SEV_WARNING);
	assert_string_equal(x->message, "dependency cycle: task:a -> task:b -> task:c -> task:a");
	assert_string_equal(x->path, "/tasks/0");
	assert_int_equal(x->line, 5);
	assert_string_equal(d.items[d.count - 1].message, "dependency cycle: task:d -> task:d");
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_workgraph__a_cycle_through_both_dependency_kinds_is_one_warning(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"tasks:\n"
		"  - {stable_id: 'task:a', title: A, area: x, priority: p, depends_on: ['task:b']}\n"
		"  - {stable_id: 'task:b', title: B, area: x, priority: p, depends_on: ['task:a'],\n"
		"     blocked_by: ['task:a']}\n"
		"```\n";
	pmbot_workgraph *g = load(md, &d, PMBOT_OK);
	size_t i, n = 0;

	(void)state;
	for (i = 0; i < d.count; i++)
		n += !strcmp(d.items[i].code, "DEPENDENCY_CYCLE");
	assert_int_equal(n, 1);
	assert_string_equal(pmbot_diag_list_find(&d, "DEPENDENCY_CYCLE")->message,
		"dependency cycle: task:a -> task:b -> task:a");
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static json_t *node(const char *id)
{
	return json_pack("{s:s, s:s}", "stable_id", id, "title", id);
}

/* Finish sorts nodes and edges whether they arrive in order or not. */
static void test_workgraph__finish_orders_nodes_and_edges_from_any_start(void **state)
{
	static const char *const ids[2][3] = { { "a", "b", "c" }, { "c", "a", "b" } };
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	size_t k, i;

	(void)state;
	for (k = 0; k < 2; k++) {
		pmbot_workgraph *g = NULL;

		assert_int_equal(pmbot_workgraph_new(&g), 0);
		for (i = 0; i < 3; i++)
			assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK, node(ids[k][i]),
				NULL, 0), 0);
		/* In order for k 0; out of order, with a duplicate, for k 1. */
		assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_DEPENDS_ON,
			ids[k][0], ids[k][1], 0), 0);
		assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_DEPENDS_ON,
			ids[k][0], ids[k][2], 0), 0);
		assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_DEPENDS_ON,
			ids[k][0], ids[k][1], 0), 0);
		assert_int_equal(pmbot_workgraph_finish(g, "r.md", &d), PMBOT_OK);
		assert_int_equal(g->n_nodes, 3);
		assert_string_equal(g->nodes[0].stable_id, "a");
		assert_string_equal(g->nodes[1].stable_id, "b");
		assert_string_equal(g->nodes[2].stable_id, "c");
		assert_int_equal(g->n_edges, 2);
		assert_string_equal(g->edges[0].from_id, ids[k][0]);
		assert_true(strcmp(g->edges[0].to_id, g->edges[1].to_id) < 0);
		assert_ptr_equal(pmbot_workgraph_find(g, "b"), &g->nodes[1]);
		/* a -> b, a -> c for k 0; c -> a, c -> b for k 1. */
		assert_ptr_equal(pmbot_workgraph_edge_from(g, &g->edges[0]), &g->nodes[2 * k]);
		assert_ptr_equal(pmbot_workgraph_edge_from(g, &g->edges[1]), &g->nodes[2 * k]);
		assert_ptr_equal(pmbot_workgraph_edge_to(g, &g->edges[0]), &g->nodes[1 - k]);
		assert_ptr_equal(pmbot_workgraph_edge_to(g, &g->edges[1]), &g->nodes[2 - k]);
		pmbot_workgraph_free(g);
	}
	pmbot_diag_list_free(&d);
}

/*
 * An edge to an id no node has yet has no node at its end; a node added
 * with that id after finish is its end once finish runs again, not the
 * place finish gave before.
 */
static void test_workgraph__an_edge_ends_where_the_last_finish_put_its_nodes(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = NULL;

	(void)state;
	assert_int_equal(pmbot_workgraph_new(&g), 0);
	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK, node("b"), NULL, 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_DEPENDS_ON, "b", "a", 0), 0);
	assert_int_equal(pmbot_workgraph_finish(g, "r.md", &d), PMBOT_OK);
	assert_true(g->ends_placed);
	assert_ptr_equal(pmbot_workgraph_edge_from(g, &g->edges[0]), &g->nodes[0]);
	assert_null(pmbot_workgraph_edge_to(g, &g->edges[0]));

	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK, node("a"), NULL, 0), 0);
	assert_false(g->ends_placed);
	assert_int_equal(pmbot_workgraph_finish(g, "r.md", &d), PMBOT_OK);
	assert_true(g->ends_placed);
	assert_string_equal(g->nodes[0].stable_id, "a");
	assert_ptr_equal(pmbot_workgraph_edge_from(g, &g->edges[0]), &g->nodes[1]);
	assert_ptr_equal(pmbot_workgraph_edge_to(g, &g->edges[0]), &g->nodes[0]);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_workgraph__parent_cycles_and_two_parents_are_errors(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = NULL;
	const pmbot_diag *x;

	(void)state;
	assert_int_equal(pmbot_workgraph_new(&g), 0);
	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_EPIC, node("a"), "/epics/0", 3), 0);
	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_FEATURE, node("b"), "/features/0", 4), 0);
	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK, node("c"), "/tasks/0", 5), 0);
	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK, node("d"), "/tasks/1", 6), 0);
	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK, node("a"), NULL, 0), PMBOT_EINVALID);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_PARENT_CHILD, "a", "b", 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_PARENT_CHILD, "b", "c", 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_PARENT_CHILD, "c", "a", 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_PARENT_CHILD, "a", "d", 0), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_PARENT_CHILD, "b", "d", 0), 0);
	assert_int_equal(pmbot_workgraph_finish(g, "p.md", &d), PMBOT_EINVALID);
	assert_non_null(x = pmbot_diag_list_find(&d, "PARENT_CYCLE"));
	assert_int_equal(x->severity, PMBOT_SEV_ERROR);
	assert_string_equal(x->message, "parent/child cycle: a -> c -> b -> a");
	assert_non_null(x = pmbot_diag_list_find(&d, "CONFLICTING_PARENT"));
	assert_string_equal(x->path, "/tasks/1");
	assert_string_equal(x->message, "'d' has two parents: 'a' and 'b'");
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_workgraph__a_long_cycle_is_shortened_to_one_line(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = NULL;
	char id[16], next[16];
	int i;

	(void)state;
	assert_int_equal(pmbot_workgraph_new(&g), 0);
	for (i = 0; i < 20; i++) {
		snprintf(id, sizeof(id), "t%02d", i);
		snprintf(next, sizeof(next), "t%02d", (i + 1) % 20);
		assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK, node(id), NULL, 0), 0);
		assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_DEPENDS_ON, id, next, 0), 0);
	}
	assert_int_equal(pmbot_workgraph_finish(g, NULL, &d), PMBOT_OK);
	assert_int_equal(d.count, 1);
	assert_string_equal(d.items[0].message, "dependency cycle: t00 -> t01 -> t02 -> t03 -> "
		"t04 -> t05 -> t06 -> t07 -> … (10 more) -> t17 -> t18 -> t19 -> t00");
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_workgraph__tree_lists_children_under_parents_with_dependencies(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = load(plan_a, &d, PMBOT_OK);
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_workgraph_tree(&out, g), 0);
	assert_string_equal(out.buf,
		"- epic:e [epic] E\n"
		"  - feat:f [feature] F (depends on feat:g)\n"
		"    - bug:b [bug] B (blocked by https://github.com/acme/x/issues/9)\n"
		"- feat:g [feature] G\n");
	pmbot_buf_free(&out);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_workgraph__mermaid_is_a_flowchart_with_escaped_labels(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"features:\n"
		"  - {stable_id: 'feat:a', title: 'Say \"hi\" <b>#1</b>', area: x, priority: p}\n"
		"tasks:\n"
		"  - {stable_id: 'task:b', title: B, area: x, priority: p, feature_id: 'feat:a',\n"
		"     depends_on: ['https://github.com/o/r/issues/2']}\n"
		"```\n";
	pmbot_workgraph *g = load(md, &d, PMBOT_OK);
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_workgraph_mermaid(&out, g), 0);
	assert_non_null(strstr(out.buf, "flowchart TD\n"));
	assert_non_null(strstr(out.buf,
		"  n0[\"feat:a<br/>Say #quot;hi#quot; #lt;b#gt;#35;1#lt;/b#gt;\"]:::feature\n"));
	assert_non_null(strstr(out.buf, "  n0 --> n1\n"));
	assert_non_null(strstr(out.buf, "  x0[\"https://github.com/o/r/issues/2\"]:::external\n"));
	assert_non_null(strstr(out.buf, "  n1 -. depends on .-> x0\n"));
	assert_null(strstr(out.buf, "\"Say"));
	pmbot_buf_free(&out);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_workgraph__mermaid_labels_hold_no_directive_and_start_no_click_line(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"features:\n"
		"  - {stable_id: 'feat:a', title: \"%%{init: {'securityLevel':'loose'}}%%\\nclick n0 "
		"call alert(1)\", area: x, priority: p}\n"
		"```\n";
	pmbot_workgraph *g = load(md, &d, PMBOT_OK);
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_workgraph_mermaid(&out, g), 0);
	assert_null(strchr(out.buf, '%'));
	assert_null(strstr(out.buf, "\nclick"));
	assert_non_null(strstr(out.buf,
		"  n0[\"feat:a<br/>#37;#37;{init: {'securityLevel':'loose'}}#37;#37; click n0 call alert(1)\"]"));
	pmbot_buf_free(&out);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_workgraph__invalid_report_gives_no_graph(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = load(HEAD "tasks: [{title: no-id}]\n```\n", &d, PMBOT_EINVALID);

	(void)state;
	assert_null(g);
	assert_non_null(pmbot_diag_list_find(&d, "SCHEMA_REQUIRED"));
	pmbot_diag_list_free(&d);
}

static void test_workgraph__open_type_keeps_its_name_in_every_output(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf b = PMBOT_BUF_INIT;
	pmbot_workgraph *g = load(HEAD "tasks:\n"
		"  - {stable_id: 'ops:a', title: A, area: a, priority: p, type: ops}\n"
		"  - {stable_id: 'bug:b', title: B, area: a, priority: p, type: bug}\n```\n",
		&d, PMBOT_OK);

	(void)state;
	assert_non_null(g);
	assert_int_equal(g->nodes[0].type, PMBOT_NODE_BUG);
	assert_string_equal(g->nodes[0].type_name, "bug");
	assert_int_equal(g->nodes[1].type, PMBOT_NODE_OTHER);
	assert_string_equal(g->nodes[1].type_name, "ops");
	assert_int_equal(pmbot_workgraph_mermaid(&b, g), 0);
	assert_non_null(strstr(b.buf, "n1[\"ops:a<br/>A\"]:::ops\n"));
	assert_non_null(strstr(b.buf, "n0[\"bug:b<br/>B\"]:::bug\n"));
	pmbot_buf_free(&b);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_workgraph__type_names_round_trip(void **state)
{
	pmbot_node_type t;
	int i;

	(void)state;
	for (i = PMBOT_NODE_EPIC; i <= PMBOT_NODE_BENCHMARK; i++) {
		assert_int_equal(pmbot_node_type_parse(&t, pmbot_node_type_name((pmbot_node_type)i)), 0);
		assert_int_equal(t, i);
	}
	/* Any other lower-case word is an open type; anything else is no type. */
	assert_int_equal(pmbot_node_type_parse(&t, "story"), 0);
	assert_int_equal(t, PMBOT_NODE_OTHER);
	assert_int_equal(pmbot_node_type_parse(&t, "Story"), -1);
	assert_int_equal(pmbot_node_type_parse(&t, "load test"), -1);
	assert_int_equal(pmbot_node_type_parse(&t, ""), -1);
	assert_null(pmbot_node_type_name(PMBOT_NODE_OTHER));
	assert_null(pmbot_node_type_name((pmbot_node_type)99));
	assert_string_equal(pmbot_edge_type_name(PMBOT_EDGE_BLOCKED_BY), "blocked_by");
}

/* Every diagnostic of `d`, formatted, one string. */
static char *diag_text(pmbot_diag_list *d)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t i;

	pmbot_diag_list_sort(d);
	for (i = 0; i < d->count; i++)
		assert_int_equal(pmbot_diag_format(&b, &d->items[i]), 0);
	assert_int_equal(pmbot_buf_puts(&b, ""), 0);
	return pmbot_buf_detach(&b, NULL);
}

/*
 * The _buf loaders say what the borrowing ones said (`rl`, `tl`) of `md`,
 * and take the buffer: it is left empty, whatever the outcome.
 */
static void assert_buf_loaders_agree(const char *md, int rl, const char *tl)
{
	pmbot_diag_list dl = PMBOT_DIAG_LIST_INIT, dc = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text = PMBOT_BUF_INIT;
	pmbot_workgraph *g = NULL;
	char *t;

	assert_int_equal(pmbot_buf_puts(&text, md), 0);
	assert_int_equal(pmbot_workgraph_load_buf(&g, "plan.md", &text, NULL, &dl), rl);
	assert_int_equal(text.len, 0);
	assert_non_null(text.buf);
	assert_true((g != NULL) == (rl == PMBOT_OK));
	assert_string_equal(t = diag_text(&dl), tl);
	free(t);
	assert_int_equal(pmbot_buf_puts(&text, md), 0);
	assert_int_equal(pmbot_workgraph_check_buf("plan.md", &text, NULL, &dc), rl);
	assert_int_equal(text.len, 0);
	assert_string_equal(t = diag_text(&dc), tl);
	free(t);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&dl);
	pmbot_diag_list_free(&dc);
	pmbot_buf_free(&text);
}

static void test_workgraph__check_says_what_load_says(void **state)
{
	const char *const reports[] = {
		plan_a, plan_b,
		HEAD "tasks:\n"
		"  - {stable_id: 'task:a', title: A, area: x, priority: p, depends_on: ['task:b']}\n"
		"  - {stable_id: 'task:b', title: B, area: ' ', blocked_by: ['task:a']}\n"
		"  - {stable_id: 'spike:s', type: spike, title: '@s'}\n"
		"```\n",
		HEAD "epics:\n"
		"  - {stable_id: 'epic:a', title: A, features: ['feat:f']}\n"
		"  - {stable_id: 'epic:b', title: B}\n"
		"features:\n"
		"  - {stable_id: 'feat:f', title: F, epic_id: 'epic:b'}\n"
		"```\n",
		HEAD "tasks: [{title: no-id}]\n```\n",
		"no block here\n",
		/* Valid, two children each, edges one way: a parent and a child swapped would show. */
		HEAD "epics:\n"
		"  - {stable_id: 'epic:a', title: A, features: ['feat:f', 'feat:g']}\n"
		"features:\n"
		"  - {stable_id: 'feat:f', title: F, epic_id: 'epic:a', tasks: ['task:t', 'task:u']}\n"
		"  - {stable_id: 'feat:g', title: G, epic_id: 'epic:a'}\n"
		"tasks:\n"
		"  - {stable_id: 'task:t', title: T, feature_id: 'feat:f', depends_on: ['task:u']}\n"
		"  - {stable_id: 'task:u', title: U, feature_id: 'feat:f', blocked_by: ['feat:g']}\n"
		"```\n",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(reports) / sizeof(reports[0]); i++) {
		pmbot_diag_list dl = PMBOT_DIAG_LIST_INIT, dc = PMBOT_DIAG_LIST_INIT;
		pmbot_workgraph *g = NULL;
		int rl = pmbot_workgraph_load(&g, "plan.md", reports[i], strlen(reports[i]), NULL, &dl);
		int rc = pmbot_workgraph_check("plan.md", reports[i], strlen(reports[i]), NULL, &dc);
		char *tl = diag_text(&dl), *tc = diag_text(&dc);

		assert_int_equal(rc, rl);
		assert_string_equal(tc, tl);
		/* The reports above are chosen to say something. */
		assert_true(i < 2 || dl.count > 0);
		if (i == 2)
			assert_non_null(pmbot_diag_list_find(&dc, "DEPENDENCY_CYCLE"));
		if (i == 6)
			assert_int_equal(rl, PMBOT_OK);
		assert_buf_loaders_agree(reports[i], rl, tl);
		free(tl);
		free(tc);
		pmbot_workgraph_free(g);
		pmbot_diag_list_free(&dl);
		pmbot_diag_list_free(&dc);
	}
}

/* Each generated member: present with one of a few values, or absent. */
static const char *const member_values[][5] = {
	{ "area", "core", "'  '", "\"\\u00a0web \"", "_No response_" },
	{ "priority", "P1", "' P2 '", "''", "Triage" },
	{ "status", "open", "done", "'In progress'", "x" },
	{ "size", "M", "XL", "'S'", "L" },
	{ "estimate_hrs", "4", "0.5", "12", "1e2" },
	{ "risk", "Low", "High", "'-- <!-- x'", "M" },
	{ "goal", "'do g'", "\"a\\nb\"", "'#1 @x'", "g" },
	{ "objective", "'o'", "'the objective'", "x", "y" },
	{ "acceptance_criteria", "[a, b]", "[]", "['one']", "[x]" },
	{ "owners", "['@a']", "[]", "[b, c]", "[d]" },
	{ "links", "['https://example.com']", "[]", "[x]", "[y]" },
	{ "milestones", "[{title: M1, target_date: '2026-03-01'}]", "[]",
	  "[{title: M2}]", "[{title: M3}]" },
};

/*
 * 400 generated items (members present or not, in a generated order,
 * blank areas and priorities among them) build the same nodes, members in
 * the same order, whether the item is walked once (pmbot_workgraph__fast)
 * or each member looked up.
 */
static void test_workgraph__one_walk_builds_the_nodes_of_the_lookups(void **state)
{
	const size_t n_members = sizeof(member_values) / sizeof(member_values[0]);
	pmbot_buf md = PMBOT_BUF_INIT;
	unsigned long seed = 7;
	pmbot_diag_list d1 = PMBOT_DIAG_LIST_INIT, d2 = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *fast, *general;
	size_t i, k;

	(void)state;
	assert_int_equal(pmbot_buf_puts(&md, HEAD "tasks:\n"), 0);
	for (i = 0; i < 400; i++) {
		size_t start = (size_t)(seed % n_members);

		assert_int_equal(pmbot_buf_printf(&md, "  - {stable_id: 'task:t%zu', title: T%zu",
			i, i), 0);
		for (k = 0; k < n_members; k++) {
			size_t m = (start + k) % n_members;

			seed = seed * 6364136223846793005UL + 1442695040888963407UL;
			if ((seed >> 33) % 5 == 4)
				continue;
			assert_int_equal(pmbot_buf_printf(&md, ", %s: %s", member_values[m][0],
				member_values[m][1 + (seed >> 40) % 4]), 0);
		}
		assert_int_equal(pmbot_buf_puts(&md, "}\n"), 0);
	}
	assert_int_equal(pmbot_buf_puts(&md, "```\n"), 0);
	pmbot_workgraph__fast = 1;
	assert_int_equal(pmbot_workgraph_load(&fast, "plan.md", md.buf, md.len, NULL, &d1), PMBOT_OK);
	pmbot_workgraph__fast = 0;
	assert_int_equal(pmbot_workgraph_load(&general, "plan.md", md.buf, md.len, NULL, &d2),
		PMBOT_OK);
	pmbot_workgraph__fast = 1;
	assert_int_equal(fast->n_nodes, 400);
	assert_int_equal(general->n_nodes, 400);
	for (i = 0; i < 400; i++) {
		json_t *ja = NULL, *jb = NULL;
		char *a, *b;

		assert_int_equal(pmbot_workgraph_node_json(&ja, &fast->nodes[i]), PMBOT_OK);
		assert_int_equal(pmbot_workgraph_node_json(&jb, &general->nodes[i]), PMBOT_OK);
		a = json_dumps(ja, JSON_COMPACT);
		b = json_dumps(jb, JSON_COMPACT);
		json_decref(ja);
		json_decref(jb);

		/* Not sorted: the members' order is part of what must match. */
		assert_non_null(a);
		assert_non_null(b);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	pmbot_workgraph_free(fast);
	pmbot_workgraph_free(general);
	pmbot_diag_list_free(&d1);
	pmbot_diag_list_free(&d2);
	pmbot_buf_free(&md);
}

/*
 * The node object an item should give, worked out the plain way from a
 * jansson tree of the same block (the way nodes were built before the
 * document): the members named below by lookup, the triage defaults of
 * spec 000 for a blank area or priority, copied members unless null.
 */
static json_t *expected_node(json_t *item, const char *type)
{
	static const char *const copied[] = {
		"status", "size", "estimate_hrs", "risk", "goal", "objective",
		"acceptance_criteria", "owners", "links", "milestones"
	};
	json_t *n = json_object(), *area = json_object_get(item, "area");
	json_t *prio = json_object_get(item, "priority");
	int has_area = json_is_string(area) &&
		!pmbot_text_is_blank(json_string_value(area), json_string_length(area));
	int has_prio = json_is_string(prio) &&
		!pmbot_text_is_blank(json_string_value(prio), json_string_length(prio));
	size_t i, a, b;

	assert_non_null(n);
	assert_int_equal(json_object_set(n, "stable_id", json_object_get(item, "stable_id")), 0);
	assert_int_equal(json_object_set(n, "title", json_object_get(item, "title")), 0);
	assert_int_equal(json_object_set_new(n, "type", json_string(type)), 0);
	if (has_area)
		pmbot_text_trim_blank(&a, &b, json_string_value(area), json_string_length(area));
	assert_int_equal(json_object_set_new(n, "area", has_area ?
		json_stringn(json_string_value(area) + a, b - a) : json_string("triage")), 0);
	if (has_prio)
		pmbot_text_trim_blank(&a, &b, json_string_value(prio), json_string_length(prio));
	assert_int_equal(json_object_set_new(n, "priority", has_prio ?
		json_stringn(json_string_value(prio) + a, b - a) : json_string("Triage")), 0);
	assert_int_equal(json_object_set_new(n, "needs_human",
		json_boolean(!has_area || !has_prio)), 0);
	for (i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		json_t *v = json_object_get(item, copied[i]);

		if (v && !json_is_null(v))
			assert_int_equal(json_object_set(n, copied[i], v), 0);
	}
	return n;
}

/*
 * Every node of `g` (built from report `r`'s document) holds what
 * expected_node() works out from a jansson parse of the same block, the
 * members in the same order.
 */
static void assert_nodes_as_the_tree_says(const pmbot_workgraph *g, const pmbot_report *r)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	json_t *tree = NULL;
	size_t i;

	assert_int_equal(pmbot_json_parse(&tree, NULL, "t", r->block.text, r->block.len, 1, 0,
		NULL, &d), PMBOT_OK);
	for (i = 0; i < g->n_nodes; i++) {
		const pmbot_wg_node *n = &g->nodes[i];
		const char *p = n->source_path, *slash = strchr(p + 1, '/');
		char list[16];
		json_t *want, *got = NULL;
		char *a, *b;

		assert_non_null(slash);
		assert_true((size_t)(slash - p - 1) < sizeof(list));
		memcpy(list, p + 1, (size_t)(slash - p - 1));
		list[slash - p - 1] = '\0';
		want = expected_node(json_array_get(json_object_get(tree, list),
			strtoul(slash + 1, NULL, 10)), n->type_name);
		assert_int_equal(pmbot_workgraph_node_json(&got, n), PMBOT_OK);
		a = json_dumps(want, JSON_COMPACT);
		b = json_dumps(got, JSON_COMPACT);
		assert_non_null(a);
		assert_non_null(b);
		assert_string_equal(b, a);
		free(a);
		free(b);
		json_decref(want);
		json_decref(got);
	}
	json_decref(tree);
	pmbot_diag_list_free(&d);
}

/* Every member of every node (in the members' order), edge and parent of `g`, one string. */
static char *graph_text(const pmbot_workgraph *g)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t i;

	if (!g)
		return strdup("(no graph)");
	for (i = 0; i < g->n_nodes; i++) {
		const pmbot_wg_node *n = &g->nodes[i];
		const pmbot_wg_node *p = pmbot_workgraph_parent(g, n);
		json_t *nj = NULL;
		char *j;

		if (n->item)
			assert_int_equal(pmbot_workgraph_node_json(&nj, n), PMBOT_OK);
		j = json_dumps(nj, JSON_COMPACT | JSON_ENCODE_ANY);
		json_decref(nj);
		assert_non_null(j);
		assert_int_equal(pmbot_buf_printf(&b, "%s %d %s %s:%d %s parent=%s %s\n", n->stable_id,
			(int)n->type, n->type_name, n->file ? n->file : "-", n->line,
			n->source_path ? n->source_path : "-", p ? p->stable_id : "-", j), 0);
		free(j);
	}
	for (i = 0; i < g->n_edges; i++)
		assert_int_equal(pmbot_buf_printf(&b, "%s -%s-> %s%s\n", g->edges[i].from_id,
			pmbot_edge_type_name(g->edges[i].type), g->edges[i].to_id,
			g->edges[i].external ? " (external)" : ""), 0);
	assert_int_equal(pmbot_buf_puts(&b, ""), 0);
	return pmbot_buf_detach(&b, NULL);
}

/*
 * Load `md` (a Markdown report with a JSON block), validate it when
 * `validate` (else build what the parser gave, as a caller may), build its
 * graph with the one-walk shortcut and without, and check that both give
 * the same graph (nodes with their members in the same order, edges,
 * parents, lines), return and diagnostics, and that every node holds what
 * the plain reading of a jansson tree of the block gives. Returns the
 * build's return code; `*seen_cycle` is set when there was a
 * DEPENDENCY_CYCLE.
 */
static int same_both_ways(const char *md, int validate, int *seen_cycle)
{
	char *first = NULL, *first_diags = NULL;
	int fast, rc_first = 0;

	/* Fast, slow, and (validated) from validation's index. */
	for (fast = 1; fast >= (validate ? -1 : 0); fast--) {
		pmbot_diag_list dd = PMBOT_DIAG_LIST_INIT, dl = PMBOT_DIAG_LIST_INIT;
		pmbot_report_index ix = PMBOT_REPORT_INDEX_INIT;
		pmbot_workgraph *gd = NULL;
		pmbot_report *r = NULL;
		char *td, *xd;
		int rd;

		/* A report for each build: the graph takes its document. */
		assert_int_equal(pmbot_report_load(&r, "plan.json.md", md, strlen(md), NULL, &dl),
			PMBOT_OK);
		if (validate && (fast < 0 ? pmbot_report_validate_index(&ix, r, &dl) :
			pmbot_report_validate(r, &dl)) < 0) {
			char *t = diag_text(&dl);

			fail_msg("%s", t);
		}
		pmbot_workgraph__fast = fast != 0;
		rd = fast < 0 ? pmbot_workgraph_from_report_index(&gd, r, &ix, &dd) :
			pmbot_workgraph_from_report(&gd, r, &dd);
		pmbot_workgraph__fast = 1;
		pmbot_report_index_free(&ix);
		if (gd)
			assert_nodes_as_the_tree_says(gd, r);
		td = graph_text(gd);
		xd = diag_text(&dd);
		*seen_cycle |= pmbot_diag_list_find(&dd, "DEPENDENCY_CYCLE") != NULL;
		/* The shortcut and the lookups agree. */
		if (!first) {
			first = td;
			first_diags = xd;
			rc_first = rd;
		} else {
			assert_int_equal(rd, rc_first);
			assert_string_equal(td, first);
			assert_string_equal(xd, first_diags);
			free(td);
			free(xd);
		}
		assert_null(r->doc);
		pmbot_workgraph_free(gd);
		pmbot_report_free(r);
		pmbot_diag_list_free(&dd);
		pmbot_diag_list_free(&dl);
	}
	free(first);
	free(first_diags);
	return rc_first;
}

#define JHEAD "# Plan\n\n```pm-bot:report-ir/v1\n{\"schema_version\": \"report_ir/v1\",\n" \
	"\"report\": {\"title\": \"T\", \"generated_at\": \"2026-02-22\", \"scope\": {\"org\": \"acme\"}},\n"

/*
 * Values a member may hold; the last two of goal, objective and
 * milestones are odd, so they go only where the member is not checked
 * (a task takes epic and feature members with an UNKNOWN_FIELD warning).
 */
static const char *const jmember_values[][6] = {
	{ "area", "\"core\"", "\"  \"", "\"\\u00a0web \"", "\"_No response_\"", "\"\\u200bx\\u200b\"" },
	{ "priority", "\"P1\"", "\" P2 \"", "\"\"", "\"Triage\"", "\"\\t\\n\"" },
	{ "status", "\"open\"", "\"done\"", "\"In progress\"", "\"x\"", "\"\\u00e9t\\u00e9\"" },
	{ "size", "\"M\"", "\"XL\"", "\"S\"", "\"L\"", "\"\"" },
	{ "estimate_hrs", "4", "0.5", "12", "1e2", "-0.0" },
	{ "risk", "\"Low\"", "\"High\"", "\"-- <!-- x\"", "\"M\"", "\"\\\"q\\\"\"" },
	{ "goal", "\"do g\"", "\"a\\nb\"", "\"g\"", "null", "{\"a\": [1, 2.5, null, true, 7]}" },
	{ "objective", "\"o\"", "\"the objective\"", "\"\"", "null", "false" },
	{ "milestones", "[{\"title\": \"M1\", \"target_date\": \"2026-03-01\"}]", "[]",
	  "[{\"title\": \"M2\"}]", "{\"m\": {\"n\": [[], {}]}}", "null" },
	{ "acceptance_criteria", "[\"a\", \"b\"]", "[]", "[\"one\"]", "[\"x\"]", "[\"\\u00fc\"]" },
	{ "owners", "[\"@a\"]", "[]", "[\"b\", \"c\"]", "[\"d\"]", "[\"e\"]" },
	{ "links", "[\"https://example.com\"]", "[]", "[\"x\"]", "[\"y\"]", "[\"z\"]" },
	{ "x_extra", "1", "\"x\"", "null", "[1]", "{}" },
	{ "type", "\"bug\"", "\"spike\"", "\"ops\"", "\"load-test\"", "\"chore\"" },
};

/* The list (0 epics, 1 features, 2 tasks) whose items have member `f` checked, or -1. */
static int checked_in(size_t f)
{
	const char *name = jmember_values[f][0];

	return !strcmp(name, "goal") ? 1 : !strcmp(name, "objective") ||
		!strcmp(name, "milestones") ? 0 : -1;
}

/* A generated report of `n` items with edges of every kind; the caller frees it. */
static char *generated_report(size_t n, unsigned long seed)
{
	const size_t n_members = sizeof(jmember_values) / sizeof(jmember_values[0]);
	static const char *const lists[] = { "epics", "features", "tasks" };
	pmbot_buf md = PMBOT_BUF_INIT;
	size_t k, i, m;

	assert_int_equal(pmbot_buf_puts(&md, JHEAD), 0);
	for (k = 0; k < 3; k++) {
		assert_int_equal(pmbot_buf_printf(&md, "\"%s\": [\n", lists[k]), 0);
		for (i = k; i < n; i += 3) {
			size_t start;

			seed = seed * 6364136223846793005UL + 1442695040888963407UL;
			start = (size_t)((seed >> 33) % n_members);
			assert_int_equal(pmbot_buf_printf(&md, "%s  {\"stable_id\": \"%c:%zu\", "
				"\"title\": \"T%zu\"", i < 3 ? "" : ",\n", "efx"[k], i, i), 0);
			for (m = 0; m < n_members; m++) {
				size_t f = (start + m) % n_members;

				seed = seed * 6364136223846793005UL + 1442695040888963407UL;
				if ((seed >> 33) % 3 == 2 || (f == n_members - 1 && k < 2))
					continue;
				assert_int_equal(pmbot_buf_printf(&md, ", \"%s\": %s", jmember_values[f][0],
					jmember_values[f][1 + (seed >> 40) % (checked_in(f) == (int)k ? 3 : 5)]), 0);
			}
			/*
			 * Parents by id and by list (agreeing, as validation wants),
			 * dependencies inside and outside the plan, so cycles too.
			 */
			if (k > 0 && (seed >> 20) % 4)
				assert_int_equal(pmbot_buf_printf(&md, ", \"%s\": \"%c:%zu\"",
					k == 1 ? "epic_id" : "feature_id", "ef"[k - 1], i - 1), 0);
			else if (k == 2 && (seed >> 20) % 4 == 0)
				assert_int_equal(pmbot_buf_puts(&md, ", \"feature_id\": null"), 0);
			if (k < 2 && i + 1 < n && (seed >> 26) % 3 == 0)
				assert_int_equal(pmbot_buf_printf(&md, ", \"%s\": [\"%c:%zu\"]",
					k ? "tasks" : "features", "fx"[k], i + 1), 0);
			if ((seed >> 28) % 3 == 0) {
				size_t j = (size_t)((seed >> 30) % n);

				assert_int_equal(pmbot_buf_printf(&md, ", \"depends_on\": [\"%c:%zu\", "
					"\"https://github.com/acme/x/issues/%zu\"]", "efx"[j % 3], j, i + 1), 0);
			}
			if (i >= 3 && (seed >> 32) % 4 == 0)
				assert_int_equal(pmbot_buf_printf(&md, ", \"blocked_by\": [\"%c:%zu\"]",
					"efx"[k], i - 3), 0);
			assert_int_equal(pmbot_buf_puts(&md, "}"), 0);
		}
		assert_int_equal(pmbot_buf_printf(&md, "]%s\n", k < 2 ? "," : ""), 0);
	}
	assert_int_equal(pmbot_buf_puts(&md, "}\n```\n"), 0);
	return pmbot_buf_detach(&md, NULL);
}

/*
 * A JSON report's graph is built from its document: the same graph,
 * return and diagnostics as from its tree, for generated reports (odd
 * members, blank areas and priorities, open types, edges in and out of
 * the plan, cycles, two parents) and for reports that skipped validation.
 */
static void test_workgraph__the_document_builds_the_graph_of_the_tree(void **state)
{
	static const char *const unvalidated[] = {
		/* A node needs a stable id and a title; a string id; a type that is a word. */
		JHEAD "\"tasks\": [{\"title\": \"no id\"}]}\n```\n",
		JHEAD "\"tasks\": [{\"stable_id\": \"t:1\"}]}\n```\n",
		JHEAD "\"tasks\": [{\"stable_id\": 5, \"title\": \"n\"}]}\n```\n",
		JHEAD "\"tasks\": [{\"stable_id\": \"t:1\", \"title\": \"n\", \"type\": \"Bad Type\"}]}\n```\n",
		JHEAD "\"tasks\": [{\"stable_id\": \"t:1\", \"title\": \"a\"}, "
		"{\"stable_id\": \"t:1\", \"title\": \"b\"}]}\n```\n",
		/* Lists that are not lists, items that are not objects, a type that is not a string. */
		JHEAD "\"epics\": {\"a\": 1}, \"features\": 3, \"tasks\": [7, "
		"{\"stable_id\": \"t:2\", \"title\": [1], \"type\": 9, \"area\": 4, \"priority\": null}]}\n```\n",
		"```pm-bot:report-ir/v1\n[1, 2]\n```\n",
		/* Items that are arrays: no members, so no node. */
		JHEAD "\"tasks\": [[\"stable_id\", \"title\"], {\"a\": 1}]}\n```\n",
		/* Two parents; a parent cycle. */
		JHEAD "\"epics\": [{\"stable_id\": \"e:0\", \"title\": \"a\", \"features\": [\"f:1\"]},\n"
		"{\"stable_id\": \"e:3\", \"title\": \"b\", \"features\": [\"f:1\"]}],\n"
		"\"features\": [{\"stable_id\": \"f:1\", \"title\": \"c\", \"tasks\": [\"e:0\"]}]}\n```\n",
	};
	static const int unvalidated_rc[] = {
		PMBOT_ERROR, PMBOT_ERROR, PMBOT_EINVALID, PMBOT_EINVALID, PMBOT_EINVALID,
		PMBOT_ERROR, PMBOT_OK, PMBOT_ERROR, PMBOT_EINVALID,
	};
	size_t i, sizes[] = { 1, 2, 3, 7, 30, 300 };
	int seen_cycle = 0;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned long seed;

		for (seed = 1; seed < 4; seed++) {
			char *md = generated_report(sizes[i], seed * 977 + i);
			int rc = same_both_ways(md, 1, &seen_cycle);

			assert_int_equal(rc, PMBOT_OK);
			free(md);
		}
	}
	/* The generator makes dependency cycles somewhere. */
	assert_true(seen_cycle);
	for (i = 0; i < sizeof(unvalidated) / sizeof(unvalidated[0]); i++)
		assert_int_equal(same_both_ways(unvalidated[i], 0, &seen_cycle), unvalidated_rc[i]);
}

/* Every node's edges of every type, as a scan of all edges finds them, are edges_from's range. */
static void assert_edge_ranges(const pmbot_workgraph *g)
{
	size_t i, j, first, end;
	int t;

	for (i = 0; i < g->n_nodes; i++) {
		for (t = PMBOT_EDGE_PARENT_CHILD; t <= PMBOT_EDGE_RELATED; t++) {
			size_t n = 0;

			pmbot_workgraph_edges_from(g, (pmbot_edge_type)t, &g->nodes[i], &first, &end);
			for (j = 0; j < g->n_edges; j++) {
				if (g->edges[j].type != (pmbot_edge_type)t ||
				    strcmp(g->edges[j].from_id, g->nodes[i].stable_id))
					continue;
				if (j < first || j >= end)
					fail_msg("%s: %s edge %zu outside [%zu, %zu)", g->nodes[i].stable_id,
						pmbot_edge_type_name((pmbot_edge_type)t), j, first, end);
				n++;
			}
			assert_int_equal(end - first, n);
		}
	}
}

/* Every edge's ends are the nodes their ids name, or NULL where none does. */
static void assert_edge_ends(const pmbot_workgraph *g)
{
	size_t i;

	for (i = 0; i < g->n_edges; i++) {
		const pmbot_wg_edge *e = &g->edges[i];

		assert_ptr_equal(pmbot_workgraph_edge_from(g, e), pmbot_workgraph_find(g, e->from_id));
		assert_ptr_equal(pmbot_workgraph_edge_to(g, e), pmbot_workgraph_find(g, e->to_id));
	}
}

/*
 * The edges from a node, by type: finish's ranges, and the search of a
 * merged graph not finished again, are every edge from it, for generated
 * reports with edges of every kind, in the plan and out of it. So are
 * each edge's ends: placed by finish, looked up in a merged graph until
 * it is finished again.
 */
static void test_workgraph__edges_from_are_every_edge_from_the_node(void **state)
{
	size_t sizes[] = { 1, 7, 30, 300 }, i, with_ranges = 0;
	unsigned long seed;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (seed = 1; seed < 4; seed++) {
			pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
			pmbot_workgraph *g = NULL, *merged = NULL;
			char *md = generated_report(sizes[i], seed * 131 + i);

			if (pmbot_workgraph_load(&g, "plan.md", md, strlen(md), NULL, &d) == PMBOT_OK) {
				with_ranges += g->edges_at != NULL;
				assert_edge_ranges(g);
				assert_true(g->ends_placed);
				assert_edge_ends(g);
				assert_int_equal(pmbot_workgraph_new(&merged), PMBOT_OK);
				assert_int_equal(pmbot_workgraph_merge(merged, g, &d), PMBOT_OK);
				assert_null(merged->edges_at);
				assert_edge_ranges(merged);
				assert_false(merged->ends_placed);
				assert_edge_ends(merged);
				assert_int_equal(pmbot_workgraph_finish(merged, "plan.md", &d), PMBOT_OK);
				assert_true(merged->ends_placed);
				assert_edge_ends(merged);
				pmbot_workgraph_free(merged);
			}
			pmbot_workgraph_free(g);
			pmbot_diag_list_free(&d);
			free(md);
		}
	}
	assert_true(with_ranges > 0);
}

/*
 * pmbot_workgraph_check says what pmbot_workgraph_load says of generated
 * JSON reports too; the largest is longer than the pieces the Markdown is
 * read in, so its block is parsed where it lies.
 */
static void test_workgraph__check_says_what_load_says_of_a_json_report(void **state)
{
	size_t i, sizes[] = { 3, 30, 300, 1500 };

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *md = generated_report(sizes[i], 31 + i);

		if (sizes[i] == 1500)
			assert_true(strlen(md) > 128 * 1024);
		pmbot_diag_list dl = PMBOT_DIAG_LIST_INIT, dc = PMBOT_DIAG_LIST_INIT;
		pmbot_workgraph *g = NULL;
		int rl = pmbot_workgraph_load(&g, "plan.md", md, strlen(md), NULL, &dl);
		int rc = pmbot_workgraph_check("plan.md", md, strlen(md), NULL, &dc);
		char *tl = diag_text(&dl), *tc = diag_text(&dc);

		assert_true(rl == PMBOT_OK || rl == PMBOT_EINVALID);
		assert_int_equal(rc, rl);
		assert_string_equal(tc, tl);
		/* Warnings at least: blank areas, unknown members, dependencies. */
		assert_true(dl.count > 0);
		assert_buf_loaders_agree(md, rl, tl);
		free(tl);
		free(tc);
		free(md);
		pmbot_workgraph_free(g);
		pmbot_diag_list_free(&dl);
		pmbot_diag_list_free(&dc);
	}
}

/*
 * A merge moves nodes and edges with their strings: the reports' graphs
 * are freed before the merged one is read. A stable id in both is named
 * with both reports and the second node dropped.
 */
static void test_workgraph__a_merge_keeps_the_strings_of_what_it_moved(void **state)
{
	static const char *const a_md = HEAD "tasks:\n"
		"  - {stable_id: 'task:a1', title: A1, area: x, priority: p,\n"
		"     depends_on: ['https://github.com/acme/x/issues/1']}\n"
		"  - {stable_id: 'task:a2', title: A2, area: x, priority: p, blocked_by: ['task:a1']}\n"
		"```\n";
	static const char *const b_md = "# B\n\n" JHEAD "\"tasks\": [\n"
		"{\"stable_id\": \"task:b1\", \"title\": \"B1\", \"area\": \"x\", \"priority\": \"p\"},\n"
		"{\"stable_id\": \"task:a1\", \"title\": \"again\", \"area\": \"x\", \"priority\": \"p\"}]}\n"
		"```\n";
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *dst = NULL, *a = NULL, *b = NULL;
	const pmbot_diag *dup;
	char *json;

	(void)state;
	assert_int_equal(pmbot_workgraph_new(&dst), PMBOT_OK);
	assert_int_equal(pmbot_workgraph_load(&a, "a.md", a_md, strlen(a_md), NULL, &d), PMBOT_OK);
	assert_int_equal(pmbot_workgraph_load(&b, "b.md", b_md, strlen(b_md), NULL, &d), PMBOT_OK);
	assert_int_equal(pmbot_workgraph_merge(dst, a, &d), PMBOT_OK);
	pmbot_workgraph_free(a);
	assert_int_equal(pmbot_workgraph_merge(dst, b, &d), PMBOT_EINVALID);
	pmbot_workgraph_free(b);
	assert_non_null(dup = pmbot_diag_list_find(&d, "DUPLICATE_STABLE_ID"));
	assert_string_equal(dup->file, "b.md");
	assert_string_equal(dup->path, "/tasks/1");
	assert_int_equal(dup->line, 10);
	assert_string_equal(dup->message, "stable_id 'task:a1' is also used by a.md");
	assert_int_equal(pmbot_workgraph_finish(dst, NULL, &d), PMBOT_OK);
	assert_int_equal(dst->n_nodes, 3);
	assert_string_equal(pmbot_workgraph_find(dst, "task:a2")->file, "a.md");
	assert_string_equal(pmbot_workgraph_find(dst, "task:a2")->source_path, "/tasks/1");
	assert_string_equal(pmbot_workgraph_find(dst, "task:b1")->file, "b.md");
	assert_string_equal(pmbot_workgraph_find(dst, "task:b1")->source_path, "/tasks/0");
	assert_int_equal(pmbot_workgraph_find(dst, "task:b1")->line, 9);
	json = canonical(dst);
	assert_non_null(strstr(json, "\"edges\":["
		"{\"edge_type\":\"depends_on\",\"external\":true,\"from_id\":\"task:a1\","
		"\"provenance\":\"report_ir\",\"to_id\":\"https://github.com/acme/x/issues/1\"},"
		"{\"edge_type\":\"blocked_by\",\"from_id\":\"task:a2\",\"provenance\":\"report_ir\","
		"\"to_id\":\"task:a1\"}]"));
	assert_non_null(strstr(json, "\"title\":\"A1\""));
	assert_null(strstr(json, "again"));
	free(json);
	pmbot_workgraph_free(dst);
	pmbot_diag_list_free(&d);
}

/*
 * A node reads its values from the report's document: area and priority
 * trimmed of blanks (a copy only then) or the triage defaults, and its
 * node object made from them. A node added from an object reads that
 * object as it is, null members too.
 */
static void test_workgraph__a_node_reads_its_values_from_the_document(void **state)
{
	static const char *const md = JHEAD "\"tasks\": [\n"
		"{\"stable_id\": \"task:a\", \"title\": \"A\", \"area\": \" web\\u00a0\","
		" \"risk\": \"low\"},\n"
		"{\"stable_id\": \"task:b\", \"title\": \"B\", \"area\": \"web\", \"priority\": \"P1\"}]}\n"
		"```\n";
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = NULL;
	const pmbot_wg_node *a, *b, *c;
	json_t *j = NULL;
	char *text;

	(void)state;
	assert_int_equal(pmbot_workgraph_load(&g, "plan.md", md, strlen(md), NULL, &d), PMBOT_OK);
	a = pmbot_workgraph_find(g, "task:a");
	b = pmbot_workgraph_find(g, "task:b");
	assert_non_null(a);
	assert_non_null(b);
	/* Trimmed: a string of the graph's; untrimmed: the document's own value. */
	assert_string_equal(a->area->v.s, "web");
	assert_int_equal(a->area->len, 3);
	assert_ptr_equal(b->area, pmbot_jnode_get(b->item, "area"));
	assert_string_equal(a->priority->v.s, "Triage");
	assert_true(a->needs_human);
	assert_false(b->needs_human);
	assert_null(pmbot_wg_node_get(a, "size"));
	assert_string_equal(pmbot_jnode_str(pmbot_wg_node_get(a, "risk")), "low");
	assert_int_equal(pmbot_workgraph_node_json(&j, a), PMBOT_OK);
	text = json_dumps(j, JSON_COMPACT);
	assert_string_equal(text, "{\"stable_id\":\"task:a\",\"title\":\"A\",\"type\":\"task\","
		"\"area\":\"web\",\"priority\":\"Triage\",\"needs_human\":true,\"risk\":\"low\"}");
	free(text);
	json_decref(j);

	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK, json_pack("{s:s, s:s, s:n}",
		"stable_id", "task:c", "title", "C", "size"), NULL, 0), PMBOT_OK);
	c = &g->nodes[g->n_nodes - 1];
	assert_true(c->is_object);
	assert_non_null(pmbot_wg_node_get(c, "size"));
	assert_int_equal(pmbot_wg_node_get(c, "size")->type, PMBOT_JNULL);
	assert_null(c->area);
	assert_int_equal(pmbot_workgraph_node_json(&j, c), PMBOT_OK);
	text = json_dumps(j, JSON_COMPACT);
	assert_string_equal(text, "{\"stable_id\":\"task:c\",\"title\":\"C\",\"size\":null}");
	free(text);
	json_decref(j);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

/*
 * An edge's end that names a node is that node's own id string (lookups
 * compare pointers), and it stays readable when a merge drops the node
 * as a duplicate: the string belongs to the graph, not to the node.
 */
static void test_workgraph__an_edge_shares_its_nodes_id_and_outlives_a_dropped_one(void **state)
{
	static const char *const a_md = HEAD "tasks:\n"
		"  - {stable_id: 'task:a1', title: A1, area: x, priority: p}\n"
		"```\n";
	static const char *const b_md = HEAD "tasks:\n"
		"  - {stable_id: 'task:b1', title: B1, area: x, priority: p,\n"
		"     depends_on: ['task:a1', 'https://github.com/acme/x/issues/1']}\n"
		"  - {stable_id: 'task:a1', title: again, area: x, priority: p, blocked_by: ['task:b1']}\n"
		"```\n";
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *dst = NULL, *a = NULL, *b = NULL;
	char id[] = "task:a1";
	size_t i, seen = 0;

	(void)state;
	assert_int_equal(pmbot_workgraph_load(&a, "a.md", a_md, strlen(a_md), NULL, &d), PMBOT_OK);
	assert_int_equal(pmbot_workgraph_load(&b, "b.md", b_md, strlen(b_md), NULL, &d), PMBOT_OK);
	for (i = 0; i < b->n_edges; i++) {
		const pmbot_wg_edge *e = &b->edges[i];
		const pmbot_wg_node *to = pmbot_workgraph_find(b, e->to_id);

		assert_ptr_equal(e->from_id, pmbot_workgraph_find(b, e->from_id)->stable_id);
		if (e->external) {
			assert_null(to);
			continue;
		}
		assert_non_null(to);
		assert_ptr_equal(e->to_id, to->stable_id);
		seen++;
	}
	assert_int_equal(seen, 2);
	/* A copy of an id finds the node by content. */
	assert_string_equal(pmbot_workgraph_find(b, id)->stable_id, "task:a1");
	assert_ptr_not_equal(pmbot_workgraph_find(b, id)->stable_id, id);

	assert_int_equal(pmbot_workgraph_new(&dst), PMBOT_OK);
	assert_int_equal(pmbot_workgraph_merge(dst, a, &d), PMBOT_OK);
	pmbot_workgraph_free(a);
	assert_int_equal(pmbot_workgraph_merge(dst, b, &d), PMBOT_EINVALID);
	pmbot_workgraph_free(b);
	assert_int_equal(pmbot_workgraph_finish(dst, NULL, &d), PMBOT_OK);
	assert_int_equal(dst->n_nodes, 2);
	for (i = 0, seen = 0; i < dst->n_edges; i++) {
		const pmbot_wg_edge *e = &dst->edges[i];

		/* The dropped node's edges name its id still, and find the node kept. */
		if (!strcmp(e->to_id, "task:a1") || !strcmp(e->from_id, "task:a1")) {
			assert_string_equal(pmbot_workgraph_find(dst, "task:a1")->file, "a.md");
			seen++;
		}
	}
	assert_int_equal(seen, 2);
	pmbot_workgraph_free(dst);
	pmbot_diag_list_free(&d);
}

/*
 * Finish sorts by keys of the ids' first 16 bytes: the same order as
 * qsort with strcmp (pmbot_workgraph__fast off), for ids that share long
 * prefixes, end inside or past 16 bytes, or hold bytes over 0x7f, and for
 * edges of every type that repeat (one kept, the first's external flag).
 */
static void test_workgraph__the_sort_by_keys_is_the_order_of_strcmp(void **state)
{
	static const char *const parts[] = {
		"", "a", "task:t0", "task:t01800", "feature:f00000001", "feature:f00000001x",
		"\xc3\xa9", "~", "https://github.com/acme/x/issues/1", "0123456789abcdef",
		"0123456789abcde", "0123456789abcdef0",
	};
	const size_t n_parts = sizeof(parts) / sizeof(parts[0]);
	unsigned long seed = 99;
	char *texts[2] = { NULL, NULL }, *diags[2] = { NULL, NULL };
	int fast, rc[2];

	(void)state;
	for (fast = 1; fast >= 0; fast--) {
		pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
		pmbot_workgraph *g = NULL;
		char ids[600][64];
		size_t i, n = 0;

		seed = 99;
		assert_int_equal(pmbot_workgraph_new(&g), 0);
		for (i = 0; i < 600; i++) {
			seed = seed * 6364136223846793005UL + 1442695040888963407UL;
			snprintf(ids[n], sizeof(ids[n]), "%s%s%lu", parts[(seed >> 33) % n_parts],
				parts[(seed >> 40) % n_parts], (seed >> 50) % 3);
			/* A repeated id is refused: keep the ids that went in. */
			if (pmbot_workgraph_add_node(g, PMBOT_NODE_TASK, node(ids[n]), NULL, 0) == PMBOT_OK)
				n++;
		}
		for (i = 0; i < 1500; i++) {
			seed = seed * 6364136223846793005UL + 1442695040888963407UL;
			assert_int_equal(pmbot_workgraph_add_edge(g, (pmbot_edge_type)((seed >> 20) % 4),
				ids[(seed >> 24) % n], ids[(seed >> 40) % n], (int)((seed >> 60) & 1)), 0);
		}
		pmbot_workgraph__fast = fast;
		rc[fast] = pmbot_workgraph_finish(g, "r.md", &d);
		pmbot_workgraph__fast = 1;
		for (i = 1; i < g->n_nodes; i++)
			assert_true(strcmp(g->nodes[i - 1].stable_id, g->nodes[i].stable_id) < 0);
		texts[fast] = graph_text(g);
		diags[fast] = diag_text(&d);
		pmbot_workgraph_free(g);
		pmbot_diag_list_free(&d);
	}
	/* Two parents and cycles among the edges: errors and warnings, the same. */
	assert_int_equal(rc[1], PMBOT_EINVALID);
	assert_int_equal(rc[1], rc[0]);
	assert_string_equal(texts[1], texts[0]);
	assert_string_equal(diags[1], diags[0]);
	for (fast = 0; fast < 2; fast++) {
		free(texts[fast]);
		free(diags[fast]);
	}
}

/* Every diagnostic of `d` in list order (not sorted), one string. */
static char *diag_text_in_order(const pmbot_diag_list *d)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t i;

	for (i = 0; i < d->count; i++)
		assert_int_equal(pmbot_diag_format(&b, &d->items[i]), 0);
	assert_int_equal(pmbot_buf_puts(&b, ""), 0);
	return pmbot_buf_detach(&b, NULL);
}

/*
 * The finish of a graph only checked (edges as node places, only those
 * between nodes) says what finish of the full graph says, in the same
 * order, with the same return: random graphs of every edge type, repeats,
 * both dependency kinds, edges to ids no node has and to issue URLs,
 * nodes in and out of order, sorted by keys and by qsort.
 */
static void test_workgraph__check_finish_says_what_finish_says(void **state)
{
	static const char *const parts[] = {
		"epic:e", "feat:f", "task:t", "bug:t", "0123456789abcdef", "a"
	};
	const size_t n_parts = sizeof(parts) / sizeof(parts[0]);
	unsigned long seed = 7;
	size_t round, errors_seen = 0, cycles_seen = 0, conflicts_seen = 0, quiet_seen = 0;
	int fast;

	(void)state;
	for (round = 0; round < 60; round++) {
		size_t n_nodes = 1 + round * 7 % 90, n_edges = round * 13 % 250, i, n = 0, m = 0;
		char (*ids)[40] = calloc(n_nodes, sizeof(*ids)), paths[90][24];
		pmbot_wg_iedge *ie = calloc(n_edges ? n_edges : 1, sizeof(*ie));
		int in_order = round % 5 == 0;

		assert_non_null(ids);
		assert_non_null(ie);
		/* Unique ids (the graph only checked borrows them: they stay put). */
		for (i = 0; i < n_nodes; i++) {
			size_t k;

			seed = seed * 6364136223846793005UL + 1442695040888963407UL;
			snprintf(ids[n], sizeof(ids[n]), "%s%05lu", in_order ? "t" :
				parts[(seed >> 33) % n_parts], in_order ? (unsigned long)i : (seed >> 40) % 500);
			snprintf(paths[n], sizeof(paths[n]), "/tasks/%zu", i);
			for (k = 0; k < n && strcmp(ids[k], ids[n]); k++)
				;
			n += k == n;
		}
		for (fast = 1; fast >= 0; fast--) {
			pmbot_diag_list d1 = PMBOT_DIAG_LIST_INIT, d2 = PMBOT_DIAG_LIST_INIT;
			pmbot_workgraph *g1 = NULL, *g2 = NULL;
			unsigned long s2 = seed;
			char *t1, *t2;
			int r1, r2;

			assert_int_equal(pmbot_workgraph_new(&g1), 0);
			assert_int_equal(pmbot_workgraph_new(&g2), 0);
			for (i = 0; i < n; i++) {
				assert_int_equal(pmbot_workgraph_add_node(g1, PMBOT_NODE_TASK, node(ids[i]),
					paths[i], (int)i + 1), PMBOT_OK);
				assert_int_equal(pmbot_workgraph_add_node_ref(g2, PMBOT_NODE_TASK, ids[i],
					"task", paths[i], (int)i + 1), PMBOT_OK);
			}
			/* A repeated id is refused by both. */
			assert_int_equal(pmbot_workgraph_add_node(g1, PMBOT_NODE_TASK, node(ids[0]),
				NULL, 0), PMBOT_EINVALID);
			assert_int_equal(pmbot_workgraph_add_node_ref(g2, PMBOT_NODE_TASK, ids[0],
				"task", NULL, 0), PMBOT_EINVALID);
			for (i = 0, m = 0; i < n_edges; i++) {
				size_t from, to, kind;
				pmbot_edge_type type;
				const char *to_id;

				s2 = s2 * 6364136223846793005UL + 1442695040888963407UL;
				from = (s2 >> 20) % n;
				/* Few targets: repeats, two parents and cycles are common. */
				to = (s2 >> 30) % (n < 12 ? n : 12 + (s2 >> 50) % (n - 11));
				kind = (s2 >> 44) % 16;
				type = (pmbot_edge_type)((s2 >> 40) % 4);
				to_id = kind == 0 ? "https://github.com/acme/x/issues/1" :
					kind == 1 ? "no:such" : ids[to];
				assert_int_equal(pmbot_workgraph_add_edge(g1, type, kind == 2 ? "no:from" : ids[from],
					to_id, kind == 0), 0);
				if (kind > 2) {
					ie[m].from = (uint32_t)from;
					ie[m].to = (uint32_t)to;
					ie[m].type = (uint32_t)type;
					m++;
				}
			}
			pmbot_workgraph__fast = fast;
			r1 = pmbot_workgraph_finish(g1, "r.md", &d1);
			r2 = pmbot_workgraph__check_finish(g2, ie, m, "r.md", &d2);
			pmbot_workgraph__fast = 1;
			t1 = diag_text_in_order(&d1);
			t2 = diag_text_in_order(&d2);
			assert_int_equal(r2, r1);
			assert_string_equal(t2, t1);
			/* Sorted as finish sorts them when there was something to say, else as they came. */
			assert_int_equal(g2->n_nodes, g1->n_nodes);
			for (i = 0; i < g1->n_nodes; i++)
				assert_string_equal(g2->nodes[i].stable_id,
					d1.count ? g1->nodes[i].stable_id : ids[i]);
			errors_seen += r1 == PMBOT_EINVALID;
			quiet_seen += !d1.count;
			cycles_seen += pmbot_diag_list_find(&d1, "DEPENDENCY_CYCLE") != NULL;
			conflicts_seen += pmbot_diag_list_find(&d1, "CONFLICTING_PARENT") != NULL;
			free(t1);
			free(t2);
			pmbot_workgraph_free(g1);
			pmbot_workgraph_free(g2);
			pmbot_diag_list_free(&d1);
			pmbot_diag_list_free(&d2);
		}
		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		free(ids);
		free(ie);
	}
	/* The graphs above are chosen to say something, and not always. */
	assert_true(errors_seen > 10 && errors_seen < 110);
	assert_true(cycles_seen > 10);
	assert_true(conflicts_seen > 10);
	/* And some say nothing (12 of them): those take check_finish's unsorted way. */
	assert_true(quiet_seen > 5);
}

/* An edge that names no node of the graph is a caller's mistake: PMBOT_ERROR. */
static void test_workgraph__check_finish_refuses_an_edge_to_no_node(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = NULL;
	pmbot_wg_iedge e[1] = { { 0, 1, PMBOT_EDGE_DEPENDS_ON } };

	(void)state;
	assert_int_equal(pmbot_workgraph_new(&g), 0);
	assert_int_equal(pmbot_workgraph_add_node_ref(g, PMBOT_NODE_TASK, "t:a", "task", "/tasks/0", 1), 0);
	assert_int_equal(pmbot_workgraph__check_finish(g, e, 1, "r.md", &d), PMBOT_ERROR);
	e[0].to = 0;
	e[0].type = 9;
	assert_int_equal(pmbot_workgraph__check_finish(g, e, 1, "r.md", &d), PMBOT_ERROR);
	e[0].type = PMBOT_EDGE_DEPENDS_ON;
	assert_int_equal(pmbot_workgraph__check_finish(g, e, 1, "r.md", &d), PMBOT_OK);
	/* A node waiting on itself is a cycle of one. */
	assert_non_null(pmbot_diag_list_find(&d, "DEPENDENCY_CYCLE"));
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workgraph__one_walk_builds_the_nodes_of_the_lookups),
		cmocka_unit_test(test_workgraph__finish_orders_nodes_and_edges_from_any_start),
		cmocka_unit_test(test_workgraph__an_edge_ends_where_the_last_finish_put_its_nodes),
		cmocka_unit_test(test_workgraph__edges_from_are_every_edge_from_the_node),
		cmocka_unit_test(test_workgraph__check_finish_says_what_finish_says),
		cmocka_unit_test(test_workgraph__check_finish_refuses_an_edge_to_no_node),
		cmocka_unit_test(test_workgraph__maps_items_edges_and_triage_defaults),
		cmocka_unit_test(test_workgraph__blank_area_and_priority_are_triaged),
		cmocka_unit_test(test_workgraph__a_cycle_through_both_dependency_kinds_is_one_warning),
		cmocka_unit_test(test_workgraph__output_does_not_depend_on_report_order),
		cmocka_unit_test(test_workgraph__dependency_cycles_are_warnings_with_their_path),
		cmocka_unit_test(test_workgraph__parent_cycles_and_two_parents_are_errors),
		cmocka_unit_test(test_workgraph__a_long_cycle_is_shortened_to_one_line),
		cmocka_unit_test(test_workgraph__tree_lists_children_under_parents_with_dependencies),
		cmocka_unit_test(test_workgraph__mermaid_is_a_flowchart_with_escaped_labels),
		cmocka_unit_test(test_workgraph__mermaid_labels_hold_no_directive_and_start_no_click_line),
		cmocka_unit_test(test_workgraph__invalid_report_gives_no_graph),
		cmocka_unit_test(test_workgraph__type_names_round_trip),
		cmocka_unit_test(test_workgraph__open_type_keeps_its_name_in_every_output),
		cmocka_unit_test(test_workgraph__check_says_what_load_says),
		cmocka_unit_test(test_workgraph__the_document_builds_the_graph_of_the_tree),
		cmocka_unit_test(test_workgraph__check_says_what_load_says_of_a_json_report),
		cmocka_unit_test(test_workgraph__a_merge_keeps_the_strings_of_what_it_moved),
		cmocka_unit_test(test_workgraph__an_edge_shares_its_nodes_id_and_outlives_a_dropped_one),
		cmocka_unit_test(test_workgraph__a_node_reads_its_values_from_the_document),
		cmocka_unit_test(test_workgraph__the_sort_by_keys_is_the_order_of_strcmp),
	};

	return cmocka_run_group_tests_name("workgraph", tests, NULL, NULL);
}
