#include <stdlib.h>
#include <string.h>

#include "pmbot/workgraph.h"
#include "pmbot/text.h"
#include "pmbot/banned.h"

static const char *const copied_fields[] = {
	"status", "size", "estimate_hrs", "risk", "goal", "objective",
	"acceptance_criteria", "owners", "links", "milestones"
};

/* Blank and "_No response_" are missing too: the rule validate warns by. */
static int has_text(const json_t *v)
{
	return json_is_string(v) && !pmbot_text_is_blank(json_string_value(v), json_string_length(v));
}

/*
 * `v` without blank code points at either end (a label must not start or
 * end with an invisible one); `v` itself, shared, when it has none.
 */
static json_t *trimmed(json_t *v)
{
	const char *s = json_string_value(v);
	size_t len = json_string_length(v), a, b;

	pmbot_text_trim_blank(&a, &b, s, len);
	return a == 0 && b == len ? json_incref(v) : json_stringn(s + a, b - a);
}

int pmbot_workgraph__fast = 1;

/*
 * The item's members a node takes, read in one walk over the item rather
 * than a hash lookup each (fourteen an item); with pmbot_workgraph__fast
 * off, looked up one by one as the comparison test wants.
 */
enum { M_STABLE_ID, M_TITLE, M_AREA, M_PRIORITY, M_COPIED };

static const char *const member_names[M_COPIED] = { "stable_id", "title", "area", "priority" };

#define N_COPIED (sizeof(copied_fields) / sizeof(copied_fields[0]))

/* `got`: M_COPIED + N_COPIED members, in the order of the names. */
static void item_members(json_t **got, json_t *item)
{
	const size_t n_copied = N_COPIED;
	const char *key;
	json_t *v;
	size_t k;

	memset(got, 0, (M_COPIED + n_copied) * sizeof(*got));
	if (!pmbot_workgraph__fast) {
		for (k = 0; k < M_COPIED; k++)
			got[k] = json_object_get(item, member_names[k]);
		for (k = 0; k < n_copied; k++)
			got[M_COPIED + k] = json_object_get(item, copied_fields[k]);
		return;
	}
	json_object_foreach(item, key, v) {
		for (k = 0; k < M_COPIED + n_copied; k++) {
			const char *name = k < M_COPIED ? member_names[k] : copied_fields[k - M_COPIED];

			if (key[0] == name[0] && !strcmp(key, name)) {
				got[k] = v;
				break;
			}
		}
	}
}

static json_t *node_json(json_t *item, const char *type)
{
	json_t *got[M_COPIED + N_COPIED];
	json_t *n = json_object(), *area, *prio;
	size_t i;
	int err = 0;

	if (!n)
		return NULL;
	item_members(got, item);
	area = got[M_AREA];
	prio = got[M_PRIORITY];
	err |= json_object_set(n, "stable_id", got[M_STABLE_ID]);
	err |= json_object_set(n, "title", got[M_TITLE]);
	err |= json_object_set_new(n, "type", json_string(type));
	/* Triage policy of spec 000: never guess, mark for a human. */
	err |= json_object_set_new(n, "area", has_text(area) ? trimmed(area) : json_string("triage"));
	err |= json_object_set_new(n, "priority",
		has_text(prio) ? trimmed(prio) : json_string("Triage"));
	err |= json_object_set_new(n, "needs_human", json_boolean(!has_text(area) || !has_text(prio)));
	for (i = 0; i < sizeof(copied_fields) / sizeof(copied_fields[0]); i++) {
		json_t *v = got[M_COPIED + i];

		if (v && !json_is_null(v))
			err |= json_object_set(n, copied_fields[i], v);
	}
	if (err) {
		json_decref(n);
		return NULL;
	}
	return n;
}

static const char *jstr(const pmbot_jnode *n)
{
	return n && n->type == PMBOT_JSTRING ? n->v.s : NULL;
}

/* has_text of a document value. */
static int has_jtext(const pmbot_jnode *v)
{
	return v && v->type == PMBOT_JSTRING && !pmbot_text_is_blank(v->v.s, v->len);
}

/* trimmed() of a document string: checked UTF-8 when read, cut at blank code points. */
static json_t *jtrimmed(const pmbot_jnode *v)
{
	size_t a, b;

	pmbot_text_trim_blank(&a, &b, v->v.s, v->len);
	return json_stringn_nocheck(v->v.s + a, b - a);
}

/* A new jansson copy of `v`, or NULL (also for a NULL `v`, as json_object_set_new wants). */
static json_t *jcopy(const pmbot_jnode *v)
{
	json_t *j = NULL;

	return v && pmbot_jnode_to_json(&j, v) == PMBOT_OK ? j : NULL;
}

/* item_members() of a document item: the same members, by the same two ways. */
static void jitem_members(const pmbot_jnode **got, const pmbot_jnode *item)
{
	const size_t n_copied = N_COPIED;
	const pmbot_jnode *m;
	uint32_t i;
	size_t k;

	memset(got, 0, (M_COPIED + n_copied) * sizeof(*got));
	if (!pmbot_workgraph__fast) {
		for (k = 0; k < M_COPIED; k++)
			got[k] = pmbot_jnode_get(item, member_names[k]);
		for (k = 0; k < n_copied; k++)
			got[M_COPIED + k] = pmbot_jnode_get(item, copied_fields[k]);
		return;
	}
	/* An item that is not an object (a report not validated) has no members. */
	m = item->type == PMBOT_JOBJECT ? pmbot_jnode_first(item) : NULL;
	for (i = 0; m; m = ++i < item->len ? pmbot_jnode_next(m) : NULL) {
		for (k = 0; k < M_COPIED + n_copied; k++) {
			const char *name = k < M_COPIED ? member_names[k] : copied_fields[k - M_COPIED];

			/* The parser refuses duplicate keys: the first match is the only one. */
			if (m->key[0] == name[0] && !strcmp(m->key, name)) {
				got[k] = m;
				break;
			}
		}
	}
}

/* json_object_set_new of a member whose name is a literal: no strlen, no UTF-8 check. */
#define SET(obj, lit, v) json_object_setn_new_nocheck(obj, lit, sizeof(lit) - 1, v)

/*
 * node_json() of a document item: the same members in the same order with
 * the same values, copied out of the document (no jansson tree of the
 * report is needed).
 */
static json_t *node_jjson(const pmbot_jnode *item, const char *type)
{
	const pmbot_jnode *got[M_COPIED + N_COPIED], *area, *prio;
	json_t *n = json_object();
	size_t i;
	int err = 0, has_area, has_prio;

	if (!n)
		return NULL;
	jitem_members(got, item);
	area = got[M_AREA];
	prio = got[M_PRIORITY];
	err |= SET(n, "stable_id", jcopy(got[M_STABLE_ID]));
	err |= SET(n, "title", jcopy(got[M_TITLE]));
	/* A type is a checked word: from the document or a literal. */
	err |= SET(n, "type", json_stringn_nocheck(type, strlen(type)));
	/* Triage policy of spec 000: never guess, mark for a human. */
	has_area = has_jtext(area);
	has_prio = has_jtext(prio);
	err |= SET(n, "area", has_area ? jtrimmed(area) : json_stringn_nocheck("triage", 6));
	err |= SET(n, "priority", has_prio ? jtrimmed(prio) : json_stringn_nocheck("Triage", 6));
	err |= SET(n, "needs_human", json_boolean(!has_area || !has_prio));
	for (i = 0; i < N_COPIED; i++) {
		const pmbot_jnode *v = got[M_COPIED + i];

		if (v && v->type != PMBOT_JNULL)
			err |= json_object_setn_new_nocheck(n, copied_fields[i],
				strlen(copied_fields[i]), jcopy(v));
	}
	if (err) {
		json_decref(n);
		return NULL;
	}
	return n;
}

#undef SET

static int add_list_edges(pmbot_workgraph *g, pmbot_edge_type type, const char *from,
	json_t *list)
{
	size_t i;
	json_t *e;

	json_array_foreach(list, i, e) {
		const char *to = json_string_value(e);
		int external;

		if (!to)
			continue;
		external = !pmbot_strmap_get(&g->index, to, NULL) && pmbot_report_is_issue_url(to);
		if (pmbot_workgraph_add_edge(g, type, from, to, external) < 0)
			return PMBOT_ERROR;
	}
	return PMBOT_OK;
}

/* add_list_edges over a document's array (a JSON report). */
static int add_jlist_edges(pmbot_workgraph *g, pmbot_edge_type type, const char *from,
	const pmbot_jnode *list)
{
	const pmbot_jnode *e = list && list->type == PMBOT_JARRAY ? pmbot_jnode_first(list) : NULL;
	uint32_t i;

	for (i = 0; e; e = ++i < list->len ? pmbot_jnode_next(e) : NULL) {
		const char *to = jstr(e);
		int external;

		if (!to)
			continue;
		external = !pmbot_strmap_get(&g->index, to, NULL) && pmbot_report_is_issue_url(to);
		if (pmbot_workgraph_add_edge(g, type, from, to, external) < 0)
			return PMBOT_ERROR;
	}
	return PMBOT_OK;
}

/*
 * Add item `i` of list `k` (epics, features, tasks): its document node
 * `ji` when the report has a document, else its jansson value `item`.
 * `lean`: the graph is only checked (pmbot_workgraph_check), so the node
 * borrows its id and type from the report instead of holding the node
 * object nothing will read, and takes no file name. `file`: the graph's
 * copy of the report's name (one for every node), may be NULL.
 */
static int add_item(pmbot_workgraph *g, const pmbot_report *report, size_t k, size_t i,
	const pmbot_jnode *ji, json_t *item, int lean, char *file, pmbot_buf *path)
{
	static const char *const lists[] = { "epics", "features", "tasks" };
	static const char *const types[] = { "epic", "feature", "task" };
	const char *type = types[k], *task_type;
	pmbot_node_type t;
	json_t *n;
	int line = 0, col = 0, r;

	task_type = k < 2 ? NULL : ji ? jstr(pmbot_jnode_get(ji, "type")) :
		json_string_value(json_object_get(item, "type"));
	if (task_type)
		type = task_type;
	if (pmbot_node_type_parse(&t, type) < 0)
		return PMBOT_EINVALID;
	pmbot_buf_clear(path);
	if (pmbot_buf_putc(path, '/') < 0 || pmbot_buf_puts(path, lists[k]) < 0 ||
	    pmbot_buf_putc(path, '/') < 0 || pmbot_buf_putu(path, i) < 0)
		return PMBOT_ERROR;
	/* A document's item nodes carry their lines: no lookup. */
	if (ji)
		line = ji->line;
	else if (pmbot_report_find(report, path->buf, &line, &col) < 0)
		return PMBOT_ERROR;
	if (lean) {
		const char *id;

		/* node_json refuses an item without these: so does the lean node. */
		if (ji) {
			const pmbot_jnode *v = pmbot_jnode_get(ji, "stable_id");

			if (!v || !pmbot_jnode_get(ji, "title"))
				return PMBOT_ERROR;
			id = jstr(v);
		} else {
			json_t *v = json_object_get(item, "stable_id");

			if (!v || !json_object_get(item, "title"))
				return PMBOT_ERROR;
			id = json_string_value(v);
		}
		return pmbot_workgraph_add_node_ref(g, t, id, type, path->buf, line);
	}
	if (!(n = ji ? node_jjson(ji, type) : node_json(item, type)))
		return PMBOT_ERROR;
	if ((r = pmbot_workgraph_add_node(g, t, n, path->buf, line)) < 0)
		return r;
	g->nodes[g->n_nodes - 1].file = file;
	return PMBOT_OK;
}

/*
 * A report with a document (JSON) is read from its nodes alone: its
 * jansson tree is not needed. The tree is read only for a report without
 * one (YAML).
 */
static int build(pmbot_workgraph **out, const pmbot_report *report,
	pmbot_diag_list *diags, int lean)
{
	static const char *const lists[] = { "epics", "features", "tasks" };
	pmbot_workgraph *g = NULL;
	size_t k, i;
	json_t *items, *item;
	pmbot_buf path = PMBOT_BUF_INIT;
	char *file = NULL;
	int rc = PMBOT_ERROR, r;

	*out = NULL;
	if (pmbot_workgraph_new(&g) < 0 ||
	    (!lean && report->file && !(file = pmbot_workgraph_strdup(g, report->file))))
		goto done;
	for (k = 0; k < 3; k++) {
		const pmbot_jnode *list = NULL, *ji = NULL;
		size_t n_items;

		items = NULL;
		if (report->doc) {
			list = pmbot_jnode_get(pmbot_jdoc_root(report->doc), lists[k]);
			n_items = list && list->type == PMBOT_JARRAY ? list->len : 0;
			ji = n_items ? pmbot_jnode_first(list) : NULL;
		} else {
			items = json_object_get(report->root, lists[k]);
			n_items = json_array_size(items);
		}
		for (i = 0; i < n_items; i++) {
			if (ji && i)
				ji = pmbot_jnode_next(ji);
			item = ji ? NULL : json_array_get(items, i);
			if ((r = add_item(g, report, k, i, ji, item, lean, file, &path)) < 0) {
				rc = r;
				goto done;
			}
		}
	}
	for (k = 0; report->doc && k < 3; k++) {
		/* The same edges read from the document: no key hashing per lookup. */
		const pmbot_jnode *list = pmbot_jnode_get(pmbot_jdoc_root(report->doc), lists[k]);
		const pmbot_jnode *it = list && list->type == PMBOT_JARRAY ? pmbot_jnode_first(list) : NULL;

		for (i = 0; it; it = ++i < list->len ? pmbot_jnode_next(it) : NULL) {
			const char *id = jstr(pmbot_jnode_get(it, "stable_id"));
			const char *parent = jstr(pmbot_jnode_get(it, k == 1 ? "epic_id" : "feature_id"));

			if (k > 0 && parent &&
			    pmbot_workgraph_add_edge(g, PMBOT_EDGE_PARENT_CHILD, parent, id, 0) < 0)
				goto done;
			if (k < 2 && add_jlist_edges(g, PMBOT_EDGE_PARENT_CHILD, id,
				pmbot_jnode_get(it, k == 0 ? "features" : "tasks")) < 0)
				goto done;
			if (add_jlist_edges(g, PMBOT_EDGE_DEPENDS_ON, id,
				pmbot_jnode_get(it, "depends_on")) < 0 ||
			    add_jlist_edges(g, PMBOT_EDGE_BLOCKED_BY, id,
				pmbot_jnode_get(it, "blocked_by")) < 0)
				goto done;
		}
	}
	for (k = 0; !report->doc && k < 3; k++) {
		items = json_object_get(report->root, lists[k]);
		json_array_foreach(items, i, item) {
			const char *id = json_string_value(json_object_get(item, "stable_id"));
			const char *parent = json_string_value(json_object_get(item,
				k == 1 ? "epic_id" : "feature_id"));

			if (k > 0 && parent &&
			    pmbot_workgraph_add_edge(g, PMBOT_EDGE_PARENT_CHILD, parent, id, 0) < 0)
				goto done;
			if (k < 2 && add_list_edges(g, PMBOT_EDGE_PARENT_CHILD, id,
				json_object_get(item, k == 0 ? "features" : "tasks")) < 0)
				goto done;
			if (add_list_edges(g, PMBOT_EDGE_DEPENDS_ON, id,
				json_object_get(item, "depends_on")) < 0 ||
			    add_list_edges(g, PMBOT_EDGE_BLOCKED_BY, id,
				json_object_get(item, "blocked_by")) < 0)
				goto done;
		}
	}
	rc = pmbot_workgraph_finish(g, report->file, diags);
	if (rc != PMBOT_ERROR) {
		*out = g;
		g = NULL;
	}
done:
	pmbot_buf_free(&path);
	pmbot_workgraph_free(g);
	return rc;
}

int pmbot_workgraph_from_report(pmbot_workgraph **out, const pmbot_report *report,
	pmbot_diag_list *diags)
{
	return build(out, report, diags, 0);
}

/* `out` NULL: check only (the lean graph is dropped). */
static int load(pmbot_workgraph **out, const char *file, const char *markdown, size_t len,
	const pmbot_limits *lim, pmbot_diag_list *diags)
{
	pmbot_report *report = NULL;
	pmbot_workgraph *g = NULL;
	int rc;

	if (out)
		*out = NULL;
	if ((rc = pmbot_report_load(&report, file, markdown, len, lim, diags)) < 0)
		goto done;
	/*
	 * The values and the map are copies: a check reads nothing else of the
	 * block, so its text (the size of the report) goes before the peak.
	 */
	if (!out) {
		free(report->block.text);
		report->block.text = NULL;
		report->block.len = 0;
	}
	if ((rc = pmbot_report_validate(report, diags)) < 0)
		goto done;
	if ((rc = build(&g, report, diags, !out)) < 0)
		goto done;
	if (out) {
		*out = g;
		g = NULL;
	}
done:
	pmbot_workgraph_free(g);
	pmbot_report_free(report);
	return rc;
}

int pmbot_workgraph_load(pmbot_workgraph **out, const char *file,
	const char *markdown, size_t len, const pmbot_limits *lim,
	pmbot_diag_list *diags)
{
	return load(out, file, markdown, len, lim, diags);
}

int pmbot_workgraph_check(const char *file, const char *markdown, size_t len,
	const pmbot_limits *lim, pmbot_diag_list *diags)
{
	return load(NULL, file, markdown, len, lim, diags);
}
