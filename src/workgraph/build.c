#include <stdlib.h>
#include <string.h>

#include "pmbot/workgraph.h"
#include "pmbot/text.h"
#include "pmbot/array.h"
#include "check.h"
#include "pmbot/banned.h"

int pmbot_workgraph__fast = 1;

/* Blank and "_No response_" are missing too: the rule validate warns by. */
static int has_text(const pmbot_jnode *v)
{
	return v && v->type == PMBOT_JSTRING && !pmbot_text_is_blank(v->v.s, v->len);
}

/*
 * The area or priority of an item: its string without blank code points at
 * either end (a label must not start or end with an invisible one), the
 * document's own when nothing was cut; `dflt` (spec 000's triage default:
 * never guess, mark for a human) when it has no text, which sets
 * `*needs_human`. NULL when out of memory.
 */
static const pmbot_jnode *label_value(pmbot_workgraph *g, const pmbot_jnode *v,
	const pmbot_jnode *dflt, int *needs_human)
{
	size_t a, b;

	if (!has_text(v)) {
		*needs_human = 1;
		return dflt;
	}
	pmbot_text_trim_blank(&a, &b, v->v.s, v->len);
	return a == 0 && b == v->len ? v : pmbot_workgraph_string_node(g, v->v.s + a, b - a);
}

static const pmbot_jnode triage_area = {
	.v.s = "triage", .type = PMBOT_JSTRING, .len = 6
};
static const pmbot_jnode triage_priority = {
	.v.s = "Triage", .type = PMBOT_JSTRING, .len = 6
};

/*
 * An edge of `type` from `from` (an edge end: a node's own id) to each
 * string of array `list`, each looked up once. `outside`: only to the
 * issue URLs that name no node (the edges between nodes are validation's
 * links).
 */
static int add_list_edges(pmbot_workgraph *g, pmbot_edge_type type, char *from,
	const pmbot_jnode *list, int outside)
{
	const pmbot_jnode *e = list && list->type == PMBOT_JARRAY ? pmbot_jnode_first(list) : NULL;
	uint32_t i;

	for (i = 0; e; e = ++i < list->len ? pmbot_jnode_next(e) : NULL) {
		const char *to = pmbot_jnode_str(e);
		char *end;
		int is_node;

		if (!to || (outside && !pmbot_report_is_issue_url(to)))
			continue;
		end = pmbot_workgraph__edge_end(g, to, &is_node);
		if (outside && is_node)
			continue;
		if (pmbot_workgraph__add_edge_ends(g, type, from, end,
			!is_node && pmbot_report_is_issue_url(to)) < 0)
			return PMBOT_ERROR;
	}
	return PMBOT_OK;
}

/* The edges of a graph only checked (check.h), as they are found. */
typedef struct {
	pmbot_wg_iedge *items;
	size_t count, alloc;
} iedges;

static int iedge_add(iedges *l, pmbot_edge_type type, size_t from1, size_t to1)
{
	pmbot_wg_iedge *p;

	/* An end that is no node: no check reads the edge. */
	if (!from1 || !to1)
		return PMBOT_OK;
	if (!(p = pmbot_array_grow(l->items, &l->alloc, l->count + 1, sizeof(*p))))
		return PMBOT_ERROR;
	l->items = p;
	p[l->count].from = (uint32_t)(from1 - 1);
	p[l->count].to = (uint32_t)(to1 - 1);
	p[l->count].type = (uint32_t)type;
	l->count++;
	return PMBOT_OK;
}

/* The edge type of a link, or -1. */
static int link_type(const pmbot_report_link *lk)
{
	static const pmbot_edge_type types[] = {
		[PMBOT_LINK_PARENT] = PMBOT_EDGE_PARENT_CHILD,
		[PMBOT_LINK_DEPENDS_ON] = PMBOT_EDGE_DEPENDS_ON,
		[PMBOT_LINK_BLOCKED_BY] = PMBOT_EDGE_BLOCKED_BY,
	};

	return lk->kind < sizeof(types) / sizeof(types[0]) ? (int)types[lk->kind] : -1;
}

/* The edges of validation's links (pmbot_report_validate_index), in the places they name. */
static int links_iedges(iedges *l, const pmbot_report_index *ix)
{
	size_t i;

	if (ix->n_links && !(l->items = pmbot_array_grow(l->items, &l->alloc, l->count + ix->n_links,
		sizeof(*l->items))))
		return PMBOT_ERROR;
	for (i = 0; i < ix->n_links; i++) {
		const pmbot_report_link *lk = &ix->links[i];
		int type = link_type(lk);

		if (type < 0 || iedge_add(l, (pmbot_edge_type)type, (size_t)lk->from + 1,
			(size_t)lk->to + 1) < 0)
			return PMBOT_ERROR;
	}
	return PMBOT_OK;
}

/* The same links as edges between the nodes they name, whose ids are the ends. */
static int links_edges(pmbot_workgraph *g, const pmbot_report_index *ix)
{
	size_t i;

	for (i = 0; i < ix->n_links; i++) {
		const pmbot_report_link *lk = &ix->links[i];
		int type = link_type(lk);

		if (type < 0 || lk->from >= g->n_nodes || lk->to >= g->n_nodes ||
		    pmbot_workgraph__add_edge_placed(g, (pmbot_edge_type)type,
			(char *)g->nodes[lk->from].stable_id, (char *)g->nodes[lk->to].stable_id, 0,
			lk->from + 1, lk->to + 1) < 0)
			return PMBOT_ERROR;
	}
	return PMBOT_OK;
}

/*
 * Add item `i` of list `k` (epics, features, tasks), document node `ji`.
 * `lean`: the graph is only checked (pmbot_workgraph_check), so the node
 * borrows its id and type from the document instead of holding the node
 * object nothing will read, and takes no file name. `placed`: the graph
 * has validation's index (pmbot_workgraph__take_index). `file`: the
 * graph's copy of the report's name (one for every node), may be NULL.
 */
static int add_item(pmbot_workgraph *g, size_t k, size_t i, const pmbot_jnode *ji,
	int lean, int placed, char *file)
{
	static const char *const lists[] = { "/epics/", "/features/", "/tasks/" };
	static const char *const types[] = { "epic", "feature", "task" };
	const char *type = types[k], *task_type;
	char path[48], digits[24];
	size_t d = sizeof(digits), len = strlen(lists[k]);
	const pmbot_jnode *id, *area, *priority;
	pmbot_node_type t;
	int r, needs_human = 0;

	task_type = k < 2 ? NULL : pmbot_jnode_str(pmbot_jnode_get(ji, "type"));
	if (task_type)
		type = task_type;
	if (pmbot_node_type_parse(&t, type) < 0)
		return PMBOT_EINVALID;
	/* The item's JSON Pointer, written here: one for each of thousands of items. */
	do {
		digits[--d] = (char)('0' + i % 10);
		i /= 10;
	} while (i);
	memcpy(path, lists[k], len);
	memcpy(path + len, digits + d, sizeof(digits) - d);
	path[len + sizeof(digits) - d] = '\0';
	/* A node object always has these (validation sees to it): an item without is refused. */
	if (!(id = pmbot_jnode_get(ji, "stable_id")) || !pmbot_jnode_get(ji, "title"))
		return PMBOT_ERROR;
	if (lean)
		return pmbot_workgraph__add_node_placed(g, t, pmbot_jnode_str(id), type, path, ji->line);
	area = label_value(g, pmbot_jnode_get(ji, "area"), &triage_area, &needs_human);
	priority = label_value(g, pmbot_jnode_get(ji, "priority"), &triage_priority, &needs_human);
	if (!area || !priority)
		return PMBOT_ERROR;
	r = placed ? pmbot_workgraph__add_item_placed(g, t, pmbot_jnode_str(id), type, ji, area,
			priority, needs_human, path, ji->line) :
		pmbot_workgraph_add_item(g, t, pmbot_jnode_str(id), type, ji, area, priority,
			needs_human, path, ji->line);
	if (r < 0)
		return r;
	g->nodes[g->n_nodes - 1].file = file;
	return PMBOT_OK;
}

/*
 * The graph is read from the report's document alone (JSON and YAML
 * blocks both have one): no jansson tree of the report is built, and item
 * nodes carry their lines, so no position is looked up.
 */
static int build(pmbot_workgraph **out, pmbot_report *report,
	pmbot_diag_list *diags, int lean, pmbot_report_index *ix)
{
	static const char *const lists[] = { "epics", "features", "tasks" };
	const pmbot_jnode *root = report->doc ? pmbot_jdoc_root(report->doc) : NULL;
	pmbot_workgraph *g = NULL;
	size_t k, i;
	iedges edges = { NULL, 0, 0 };
	char *file = NULL;
	size_t n = 0, at;
	int rc = PMBOT_ERROR, r;

	*out = NULL;
	if (!root || pmbot_workgraph_new(&g) < 0 ||
	    (!lean && report->file && !(file = pmbot_workgraph_strdup(g, report->file))))
		goto done;
	/* The nodes read their values from the document: the graph keeps it. */
	if (!lean) {
		r = pmbot_workgraph_keep_doc(g, report->doc);
		report->doc = NULL;
		if (r < 0)
			goto done;
	}
	for (k = 0; k < 3; k++) {
		const pmbot_jnode *list = pmbot_jnode_get(root, lists[k]);

		n += list && list->type == PMBOT_JARRAY ? list->len : 0;
	}
	/*
	 * Every item is a node: the array and the index sized once, never
	 * rehashed. Given what validation resolved, in the same places, the
	 * graph takes its map of the ids for the index and its links for the
	 * edges: no id is put or looked up twice. A report that passed
	 * validation has one id for each item.
	 */
	if (lean && !ix)
		goto done;
	if (ix) {
		if (ix->ids.count != n)
			goto done;
		pmbot_workgraph__take_index(g, &ix->ids);
		if (lean && links_iedges(&edges, ix) < 0)
			goto done;
	}
	if (n && (!(g->nodes = pmbot_array_grow(g->nodes, &g->alloc_nodes, n, sizeof(*g->nodes))) ||
	    pmbot_strmap_reserve(&g->index, n) < 0))
		goto done;
	for (k = 0; k < 3; k++) {
		const pmbot_jnode *list = pmbot_jnode_get(root, lists[k]);
		const pmbot_jnode *ji = list && list->type == PMBOT_JARRAY ? pmbot_jnode_first(list) : NULL;

		for (i = 0; ji; ji = ++i < list->len ? pmbot_jnode_next(ji) : NULL) {
			if ((r = add_item(g, k, i, ji, lean, ix != NULL, file)) < 0) {
				rc = r;
				goto done;
			}
		}
	}
	/*
	 * The items again, in the order their nodes were added: node `at` is
	 * the item's, whose own id is every edge's end on its side.
	 */
	for (k = 0, at = 0; k < 3 && !lean; k++) {
		const pmbot_jnode *list = pmbot_jnode_get(root, lists[k]);
		const pmbot_jnode *it = list && list->type == PMBOT_JARRAY ? pmbot_jnode_first(list) : NULL;

		for (i = 0; it; it = ++i < list->len ? pmbot_jnode_next(it) : NULL, at++) {
			char *id = (char *)g->nodes[at].stable_id;
			const char *parent;

			if (ix) {
				if (add_list_edges(g, PMBOT_EDGE_DEPENDS_ON, id,
					pmbot_jnode_get(it, "depends_on"), 1) < 0 ||
				    add_list_edges(g, PMBOT_EDGE_BLOCKED_BY, id,
					pmbot_jnode_get(it, "blocked_by"), 1) < 0)
					goto done;
				continue;
			}
			parent = pmbot_jnode_str(pmbot_jnode_get(it, k == 1 ? "epic_id" : "feature_id"));

			if (k > 0 && parent && pmbot_workgraph__add_edge_ends(g, PMBOT_EDGE_PARENT_CHILD,
				pmbot_workgraph__edge_end(g, parent, NULL), id, 0) < 0)
				goto done;
			if (k < 2 && add_list_edges(g, PMBOT_EDGE_PARENT_CHILD, id,
				pmbot_jnode_get(it, k == 0 ? "features" : "tasks"), 0) < 0)
				goto done;
			if (add_list_edges(g, PMBOT_EDGE_DEPENDS_ON, id,
				pmbot_jnode_get(it, "depends_on"), 0) < 0 ||
			    add_list_edges(g, PMBOT_EDGE_BLOCKED_BY, id,
				pmbot_jnode_get(it, "blocked_by"), 0) < 0)
				goto done;
		}
	}
	if (!lean && ix && links_edges(g, ix) < 0)
		goto done;
	rc = lean ? pmbot_workgraph__check_finish(g, edges.items, edges.count, report->file, diags) :
		pmbot_workgraph_finish(g, report->file, diags);
	if (rc != PMBOT_ERROR) {
		*out = g;
		g = NULL;
	}
done:
	free(edges.items);
	pmbot_workgraph_free(g);
	return rc;
}

int pmbot_workgraph_from_report(pmbot_workgraph **out, pmbot_report *report,
	pmbot_diag_list *diags)
{
	return build(out, report, diags, 0, NULL);
}

int pmbot_workgraph_from_report_index(pmbot_workgraph **out, pmbot_report *report,
	pmbot_report_index *ix, pmbot_diag_list *diags)
{
	return build(out, report, diags, 0, ix);
}

/* `out` NULL: check only (the lean graph is dropped). */
/* `owned` (may be NULL) holds `markdown`: pmbot_report_load_buf. */
static int load(pmbot_workgraph **out, const char *file, const char *markdown, size_t len,
	pmbot_buf *owned, const pmbot_limits *lim, pmbot_diag_list *diags)
{
	pmbot_report *report = NULL;
	pmbot_workgraph *g = NULL;
	pmbot_report_index ix = PMBOT_REPORT_INDEX_INIT;
	int rc;

	if (out)
		*out = NULL;
	if ((rc = owned ? pmbot_report_load_buf(&report, file, owned, lim, diags)
		: pmbot_report_load_values(&report, file, markdown, len, lim, diags)) < 0)
		goto done;
	if ((rc = pmbot_report_validate_index(&ix, report, diags)) < 0)
		goto done;
	if ((rc = build(&g, report, diags, !out, &ix)) < 0)
		goto done;
	if (out) {
		*out = g;
		g = NULL;
	}
done:
	pmbot_report_index_free(&ix);
	pmbot_workgraph_free(g);
	pmbot_report_free(report);
	return rc;
}

int pmbot_workgraph_load(pmbot_workgraph **out, const char *file,
	const char *markdown, size_t len, const pmbot_limits *lim,
	pmbot_diag_list *diags)
{
	return load(out, file, markdown, len, NULL, lim, diags);
}

int pmbot_workgraph_check(const char *file, const char *markdown, size_t len,
	const pmbot_limits *lim, pmbot_diag_list *diags)
{
	return load(NULL, file, markdown, len, NULL, lim, diags);
}

int pmbot_workgraph_load_buf(pmbot_workgraph **out, const char *file, pmbot_buf *markdown,
	const pmbot_limits *lim, pmbot_diag_list *diags)
{
	return load(out, file, markdown->buf, markdown->len, markdown, lim, diags);
}

int pmbot_workgraph_check_buf(const char *file, pmbot_buf *markdown, const pmbot_limits *lim,
	pmbot_diag_list *diags)
{
	return load(NULL, file, markdown->buf, markdown->len, markdown, lim, diags);
}
