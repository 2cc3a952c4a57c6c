#include "pmbot/workgraph.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "pmbot/report.h"
#include "pmbot/array.h"
#include "check.h"
#include "pmbot/banned.h"

static const char *const node_type_names[] = {
	"epic", "feature", "task", "bug", "spike", "test", "chore", "benchmark"
};
static const char *const edge_type_names[] = {
	"parent_child", "depends_on", "blocked_by", "related"
};

#define N_NODE_TYPES (sizeof(node_type_names) / sizeof(node_type_names[0]))
#define N_EDGE_TYPES (sizeof(edge_type_names) / sizeof(edge_type_names[0]))

const char *pmbot_node_type_name(pmbot_node_type t)
{
	return (size_t)t < N_NODE_TYPES ? node_type_names[t] : NULL;
}

int pmbot_node_type_parse(pmbot_node_type *out, const char *name)
{
	size_t i;

	for (i = 0; i < N_NODE_TYPES; i++) {
		if (!strcmp(node_type_names[i], name)) {
			*out = (pmbot_node_type)i;
			return 0;
		}
	}
	if (!pmbot_report_type_word_ok(name, strlen(name)))
		return -1;
	*out = PMBOT_NODE_OTHER;
	return 0;
}

const char *pmbot_edge_type_name(pmbot_edge_type t)
{
	return (size_t)t < N_EDGE_TYPES ? edge_type_names[t] : NULL;
}

int pmbot_workgraph_new(pmbot_workgraph **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? PMBOT_OK : PMBOT_ERROR;
}

/*
 * The graph's strings (paths, file names, edge ends) live in blocks freed
 * together: a string each was a malloc and a free each, tens of thousands
 * for a big report, and a merge moves the blocks with the nodes.
 */
struct pmbot_wg_block {
	struct pmbot_wg_block *next;
	size_t used, size;
	char data[];
};

#define BLOCK_MIN 4096
#define BLOCK_MAX (1024 * 1024)

/* Bytes to skip from `used` in `b` for an address that is a multiple of `align`. */
static size_t pad_for(const struct pmbot_wg_block *b, size_t align)
{
	return (size_t)(-(uintptr_t)(b->data + b->used) & (align - 1));
}

/*
 * `size` bytes at an address that is a multiple of `align` (a power of two,
 * at most malloc's) among the graph's blocks, or NULL.
 */
static void *block_alloc(pmbot_workgraph *g, size_t size, size_t align)
{
	struct pmbot_wg_block *b = g->strings;
	size_t pad = b ? pad_for(b, align) : 0;

	if (!b || b->size - b->used < pad || b->size - b->used - pad < size) {
		/* Each block twice the last, to a cap: few blocks for a big graph, a small one for a small. */
		size_t bsize = b ? (b->size < BLOCK_MAX / 2 ? b->size * 2 : BLOCK_MAX) : BLOCK_MIN;

		if (bsize < size + align)
			bsize = size + align;
		if (!(b = malloc(sizeof(*b) + bsize)))
			return NULL;
		b->next = g->strings;
		b->used = 0;
		b->size = bsize;
		g->strings = b;
		pad = pad_for(b, align);
	}
	b->used += pad + size;
	return b->data + b->used - size;
}

char *pmbot_workgraph_strdup(pmbot_workgraph *g, const char *s)
{
	size_t len = strlen(s) + 1;
	char *d = block_alloc(g, len, 1);

	if (d)
		memcpy(d, s, len);
	return d;
}

const pmbot_jnode *pmbot_workgraph_string_node(pmbot_workgraph *g, const char *s, size_t len)
{
	pmbot_jnode *n = block_alloc(g, sizeof(*n), _Alignof(pmbot_jnode));
	char *d = n ? block_alloc(g, len + 1, 1) : NULL;

	if (!d)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	memset(n, 0, sizeof(*n));
	n->type = PMBOT_JSTRING;
	n->v.s = d;
	n->len = (uint32_t)len;
	return n;
}

int pmbot_workgraph_keep_doc(pmbot_workgraph *g, pmbot_jdoc *doc)
{
	pmbot_jdoc **p = pmbot_array_grow(g->docs, &g->alloc_docs, g->n_docs + 1, sizeof(*p));

	if (!p) {
		pmbot_jdoc_free(doc);
		return PMBOT_ERROR;
	}
	g->docs = p;
	g->docs[g->n_docs++] = doc;
	return PMBOT_OK;
}

void pmbot_workgraph_free(pmbot_workgraph *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->n_docs; i++)
		pmbot_jdoc_free(g->docs[i]);
	free(g->docs);
	while (g->strings) {
		struct pmbot_wg_block *next = g->strings->next;

		free(g->strings);
		g->strings = next;
	}
	free(g->nodes);
	free(g->edges);
	free(g->parent);
	free(g->edges_at);
	pmbot_strmap_free(&g->index);
	free(g);
}

/* Room for one more node or edge: 0 or -1 (the graph unchanged). */
static int grow_nodes(pmbot_workgraph *g)
{
	pmbot_wg_node *p = pmbot_array_grow(g->nodes, &g->alloc_nodes, g->n_nodes + 1, sizeof(*p));

	if (!p)
		return -1;
	g->nodes = p;
	return 0;
}

static int grow_edges(pmbot_workgraph *g)
{
	pmbot_wg_edge *p = pmbot_array_grow(g->edges, &g->alloc_edges, g->n_edges + 1, sizeof(*p));

	if (!p)
		return -1;
	g->edges = p;
	return 0;
}

/* A node's values: its item and fields (none for a graph only checked). */
typedef struct {
	const pmbot_jnode *item, *area, *priority;
	int needs_human, is_object;
} node_values;

/* Every way of adding a node; `placed`: the index holds its id already. */
static int add_node(pmbot_workgraph *g, pmbot_node_type type, const char *id,
	const char *type_name, const node_values *v, const char *source_path, int line,
	int placed)
{
	pmbot_wg_node *n;
	char *path = NULL;

	if (!id || !type_name || !pmbot_report_type_word_ok(type_name, strlen(type_name)))
		return PMBOT_EINVALID;
	/* An edge's id may name the new node: its ends are looked up until finish. */
	g->ends_placed = 0;
	/*
	 * The id of a node with values is one of the graph's strings, so
	 * edges can share it and outlive a node a merge drops. A placed one
	 * is already: its index's key, in a document the graph keeps.
	 */
	if (grow_nodes(g) < 0 || (source_path && !(path = pmbot_workgraph_strdup(g, source_path))) ||
	    (v && !placed && !(id = pmbot_workgraph_strdup(g, id))))
		return PMBOT_ERROR;
	/*
	 * The index is rebuilt by finish; here it catches duplicates and
	 * gives each id its place + 1 (add order). A graph only checked has
	 * validation's map of the same (placed).
	 */
	switch (placed ? 0 : pmbot_strmap_put(&g->index, id, (void *)(uintptr_t)(g->n_nodes + 1), NULL)) {
	case 1: return PMBOT_EINVALID;
	case -1: return PMBOT_ERROR;
	}
	n = &g->nodes[g->n_nodes];
	memset(n, 0, sizeof(*n));
	n->source_path = path;
	n->stable_id = id;
	n->type = type;
	n->type_name = type_name;
	if (v) {
		n->item = v->item;
		n->area = v->area;
		n->priority = v->priority;
		n->needs_human = v->needs_human;
		n->is_object = v->is_object;
	}
	n->line = line;
	g->n_nodes++;
	return PMBOT_OK;
}

int pmbot_workgraph_add_node(pmbot_workgraph *g, pmbot_node_type type, json_t *json,
	const char *source_path, int line)
{
	pmbot_jdoc *doc = NULL;
	const pmbot_jnode *root;
	node_values v;
	int rc;

	/* The object as a document of the graph's: every node's values are read alike. */
	rc = json ? pmbot_jdoc_from_json(&doc, json, NULL) : PMBOT_ERROR;
	json_decref(json);
	if (rc != PMBOT_OK || pmbot_workgraph_keep_doc(g, doc) < 0)
		return PMBOT_ERROR;
	root = pmbot_jdoc_root(doc);
	v.item = root;
	v.area = pmbot_jnode_get(root, "area");
	v.priority = pmbot_jnode_get(root, "priority");
	v.needs_human = pmbot_jnode_get(root, "needs_human") &&
		pmbot_jnode_get(root, "needs_human")->type == PMBOT_JTRUE;
	v.is_object = 1;
	/* An open type has no enum value of its own: its name is the node's "type". */
	return add_node(g, type, pmbot_jnode_str(pmbot_jnode_get(root, "stable_id")),
		type == PMBOT_NODE_OTHER ? pmbot_jnode_str(pmbot_jnode_get(root, "type")) :
		pmbot_node_type_name(type), &v, source_path, line, 0);
}

int pmbot_workgraph_add_item(pmbot_workgraph *g, pmbot_node_type type, const char *stable_id,
	const char *type_name, const pmbot_jnode *item, const pmbot_jnode *area,
	const pmbot_jnode *priority, int needs_human, const char *source_path, int line)
{
	node_values v = { item, area, priority, needs_human, 0 };

	return add_node(g, type, stable_id,
		type == PMBOT_NODE_OTHER ? type_name : pmbot_node_type_name(type), &v,
		source_path, line, 0);
}

int pmbot_workgraph__add_item_placed(pmbot_workgraph *g, pmbot_node_type type,
	const char *stable_id, const char *type_name, const pmbot_jnode *item,
	const pmbot_jnode *area, const pmbot_jnode *priority, int needs_human,
	const char *source_path, int line)
{
	node_values v = { item, area, priority, needs_human, 0 };

	return add_node(g, type, stable_id,
		type == PMBOT_NODE_OTHER ? type_name : pmbot_node_type_name(type), &v,
		source_path, line, 1);
}

int pmbot_workgraph_add_node_ref(pmbot_workgraph *g, pmbot_node_type type,
	const char *stable_id, const char *type_name, const char *source_path, int line)
{
	return add_node(g, type, stable_id,
		type == PMBOT_NODE_OTHER ? type_name : pmbot_node_type_name(type),
		NULL, source_path, line, 0);
}

void pmbot_workgraph__take_index(pmbot_workgraph *g, pmbot_strmap *ids)
{
	pmbot_strmap_free(&g->index);
	g->index = *ids;
	memset(ids, 0, sizeof(*ids));
}

int pmbot_workgraph__add_node_placed(pmbot_workgraph *g, pmbot_node_type type,
	const char *stable_id, const char *type_name, const char *source_path, int line)
{
	return add_node(g, type, stable_id,
		type == PMBOT_NODE_OTHER ? type_name : pmbot_node_type_name(type),
		NULL, source_path, line, 1);
}

/*
 * An edge's end: the node's own id when `id` names a node, so looking the
 * end up again (finish, the planner) compares pointers, not strings; else
 * a copy among the graph's strings. NULL when out of memory.
 */
char *pmbot_workgraph__edge_end(pmbot_workgraph *g, const char *id, int *is_node)
{
	const char *node_id;
	int found = pmbot_strmap_get_key(&g->index, id, &node_id, NULL);

	if (is_node)
		*is_node = found;
	return found ? (char *)node_id : pmbot_workgraph_strdup(g, id);
}

int pmbot_workgraph__add_edge_ends(pmbot_workgraph *g, pmbot_edge_type type, char *from_end,
	char *to_end, int external)
{
	return pmbot_workgraph__add_edge_placed(g, type, from_end, to_end, external, 0, 0);
}

int pmbot_workgraph__add_edge_placed(pmbot_workgraph *g, pmbot_edge_type type, char *from_end,
	char *to_end, int external, uint32_t from_at, uint32_t to_at)
{
	pmbot_wg_edge *e;

	if (!from_end || !to_end || grow_edges(g) < 0)
		return PMBOT_ERROR;
	g->ends_placed = 0;
	e = &g->edges[g->n_edges];
	e->from_id = from_end;
	e->to_id = to_end;
	e->type = type;
	e->external = external;
	e->from_at = from_at;
	e->to_at = to_at;
	g->n_edges++;
	return PMBOT_OK;
}

int pmbot_workgraph_add_edge(pmbot_workgraph *g, pmbot_edge_type type,
	const char *from_id, const char *to_id, int external)
{
	char *from = pmbot_workgraph__edge_end(g, from_id, NULL);

	return pmbot_workgraph__add_edge_ends(g, type, from,
		from ? pmbot_workgraph__edge_end(g, to_id, NULL) : NULL, external);
}

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const pmbot_wg_node *)a)->stable_id,
		((const pmbot_wg_node *)b)->stable_id);
}

static int edge_cmp(const void *pa, const void *pb)
{
	const pmbot_wg_edge *a = pa, *b = pb;
	int c;

	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if ((c = strcmp(a->from_id, b->from_id)))
		return c;
	return strcmp(a->to_id, b->to_id);
}

const pmbot_jnode *pmbot_wg_node_get(const pmbot_wg_node *n, const char *name)
{
	const pmbot_jnode *v = n->item ? pmbot_jnode_get(n->item, name) : NULL;

	/* A report item's null member is left out of its node object (node_json). */
	return v && (n->is_object || v->type != PMBOT_JNULL) ? v : NULL;
}

/* The members a report item's node object copies as they are, in its order. */
static const char *const copied_fields[] = {
	"status", "size", "estimate_hrs", "risk", "goal", "objective",
	"acceptance_criteria", "owners", "links", "milestones"
};

#define N_COPIED (sizeof(copied_fields) / sizeof(copied_fields[0]))

/* json_object_set_new of a member whose name is a literal: no strlen, no UTF-8 check. */
#define SET(obj, lit, v) json_object_setn_new_nocheck(obj, lit, sizeof(lit) - 1, v)

/* A new jansson copy of `v`, or NULL (also for a NULL `v`, as json_object_set_new wants). */
static json_t *jcopy(const pmbot_jnode *v)
{
	json_t *j = NULL;

	return v && pmbot_jnode_to_json(&j, v) == PMBOT_OK ? j : NULL;
}

int pmbot_workgraph_node_json(json_t **out, const pmbot_wg_node *n)
{
	const pmbot_jnode *got[N_COPIED], *m;
	json_t *o;
	size_t k;
	uint32_t i;
	int err = 0;

	*out = NULL;
	if (!n->item)
		return PMBOT_ERROR;
	if (n->is_object)
		return pmbot_jnode_to_json(out, n->item);
	if (!(o = json_object()))
		return PMBOT_ERROR;
	/* One walk over the item for the copied members (the parser refused duplicate keys). */
	memset(got, 0, sizeof(got));
	m = n->item->type == PMBOT_JOBJECT ? pmbot_jnode_first(n->item) : NULL;
	for (i = 0; m; m = ++i < n->item->len ? pmbot_jnode_next(m) : NULL)
		for (k = 0; k < N_COPIED; k++)
			if (!got[k] && m->key[0] == copied_fields[k][0] && !strcmp(m->key, copied_fields[k]))
				got[k] = m;
	err |= SET(o, "stable_id", jcopy(pmbot_jnode_get(n->item, "stable_id")));
	err |= SET(o, "title", jcopy(pmbot_jnode_get(n->item, "title")));
	err |= SET(o, "type", json_stringn_nocheck(n->type_name, strlen(n->type_name)));
	err |= SET(o, "area", jcopy(n->area));
	err |= SET(o, "priority", jcopy(n->priority));
	err |= SET(o, "needs_human", json_boolean(n->needs_human));
	for (k = 0; k < N_COPIED; k++)
		if (got[k] && got[k]->type != PMBOT_JNULL)
			err |= json_object_setn_new_nocheck(o, copied_fields[k],
				strlen(copied_fields[k]), jcopy(got[k]));
	if (err) {
		json_decref(o);
		return PMBOT_ERROR;
	}
	*out = o;
	return PMBOT_OK;
}

#undef SET

const pmbot_wg_node *pmbot_workgraph_find(const pmbot_workgraph *g, const char *stable_id)
{
	void *v = NULL;

	return pmbot_strmap_get(&g->index, stable_id, &v) ? v : NULL;
}

const pmbot_wg_node *pmbot_workgraph_edge_from(const pmbot_workgraph *g, const pmbot_wg_edge *e)
{
	if (g->ends_placed)
		return e->from_at ? &g->nodes[e->from_at - 1] : NULL;
	return pmbot_workgraph_find(g, e->from_id);
}

const pmbot_wg_node *pmbot_workgraph_edge_to(const pmbot_workgraph *g, const pmbot_wg_edge *e)
{
	if (g->ends_placed)
		return e->to_at ? &g->nodes[e->to_at - 1] : NULL;
	return pmbot_workgraph_find(g, e->to_id);
}

/* The first edge of type `t` from `from` or after, in finish's order. */
static size_t edge_search(const pmbot_workgraph *g, pmbot_edge_type t, const char *from)
{
	size_t lo = 0, hi = g->n_edges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const pmbot_wg_edge *e = &g->edges[mid];
		int c = e->type != t ? (e->type < t ? -1 : 1) : strcmp(e->from_id, from);

		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void pmbot_workgraph_edges_from(const pmbot_workgraph *g, pmbot_edge_type t,
	const pmbot_wg_node *node, size_t *first, size_t *end)
{
	size_t i = (size_t)(node - g->nodes), k = 2 * ((size_t)t * g->n_nodes + i);

	if (g->edges_at && i < g->n_nodes && (size_t)t < N_EDGE_TYPES) {
		*first = g->edges_at[k];
		*end = g->edges_at[k + 1];
		return;
	}
	*first = *end = edge_search(g, t, node->stable_id);
	while (*end < g->n_edges && g->edges[*end].type == t &&
	       !strcmp(g->edges[*end].from_id, node->stable_id))
		(*end)++;
}

const pmbot_wg_node *pmbot_workgraph_parent(const pmbot_workgraph *g,
	const pmbot_wg_node *node)
{
	size_t i = (size_t)(node - g->nodes);

	if (!g->parent || i >= g->n_nodes || g->parent[i] == PMBOT_WG_NONE)
		return NULL;
	return &g->nodes[g->parent[i]];
}

static size_t node_index(const pmbot_workgraph *g, const char *id)
{
	const pmbot_wg_node *n = pmbot_workgraph_find(g, id);

	return n ? (size_t)(n - g->nodes) : PMBOT_WG_NONE;
}

static int add_diag_at(pmbot_diag_list *diags, const pmbot_workgraph *g, size_t node,
	pmbot_severity sev, const char *code, const char *file, const char *msg)
{
	const pmbot_wg_node *n = &g->nodes[node];

	return pmbot_diag_add(diags, sev, code, file, n->source_path ? n->source_path : "",
		n->line, 0, "%s", msg);
}

/*
 * Append "a -> b -> … -> a" for the cycle that starts at `stack[from]`. A
 * long cycle is shortened in the middle so one warning stays one line.
 */
static int cycle_path(pmbot_buf *out, const pmbot_workgraph *g, const size_t *stack,
	size_t from, size_t depth)
{
	size_t i, n = depth - from;
	int err = 0;

	for (i = from; i < depth; i++) {
		if (n > 12 && i == from + 8) {
			err |= pmbot_buf_printf(out, "… (%zu more) -> ", n - 10);
			i = depth - 3;
		}
		err |= pmbot_buf_printf(out, "%s -> ", g->nodes[stack[i]].stable_id);
	}
	err |= pmbot_buf_puts(out, g->nodes[stack[from]].stable_id);
	return err ? -1 : 0;
}

/* With at most one parent per node, following parents finds every cycle. */
static int check_parents(pmbot_workgraph *g, const char *file, pmbot_diag_list *diags,
	int *errors)
{
	unsigned char *state = calloc(g->n_nodes ? g->n_nodes : 1, 1);
	size_t *stack = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof(*stack));
	pmbot_buf msg = PMBOT_BUF_INIT;
	size_t i;
	int err = PMBOT_ERROR;

	if (!state || !stack)
		goto done;
	for (i = 0; i < g->n_nodes; i++) {
		size_t cur = i, depth = 0, k;

		/* 0 unvisited, 1 on the current walk, 2 finished */
		while (cur != PMBOT_WG_NONE && state[cur] == 0) {
			state[cur] = 1;
			stack[depth++] = cur;
			cur = g->parent[cur];
		}
		if (cur != PMBOT_WG_NONE && state[cur] == 1) {
			for (k = 0; stack[k] != cur; k++)
				;
			pmbot_buf_clear(&msg);
			if (pmbot_buf_puts(&msg, "parent/child cycle: ") < 0 ||
			    cycle_path(&msg, g, stack, k, depth) < 0 ||
			    add_diag_at(diags, g, cur, PMBOT_SEV_ERROR, "PARENT_CYCLE", file, msg.buf) < 0)
				goto done;
			(*errors)++;
		}
		for (k = 0; k < depth; k++)
			state[stack[k]] = 2;
	}
	err = PMBOT_OK;
done:
	pmbot_buf_free(&msg);
	free(state);
	free(stack);
	return err;
}

/*
 * Iterative DFS over the "waits on" edges (depends_on and blocked_by):
 * node i's targets are adj[first[i]..first[i + 1]), in edge order (type,
 * then target). Each back edge is one DEPENDENCY_CYCLE warning with its
 * path. `adj` is changed (repeats dropped).
 */
static int check_waits(pmbot_workgraph *g, const size_t *first, size_t *adj, const char *file,
	pmbot_diag_list *diags)
{
	size_t n = g->n_nodes ? g->n_nodes : 1;
	size_t *stack = malloc(n * sizeof(*stack)), *next = calloc(n, sizeof(*next));
	unsigned char *state = calloc(n, 1);
	pmbot_buf msg = PMBOT_BUF_INIT;
	size_t i;
	int err = PMBOT_ERROR;

	if (!stack || !next || !state)
		goto done;
	/*
	 * depends_on and blocked_by to the same item are one "waits on": the
	 * repeat is dropped (order kept), so such a cycle is one warning, not
	 * two. `stack` is free until the DFS and marks what a node has.
	 */
	for (i = 0; i < g->n_nodes; i++)
		stack[i] = PMBOT_WG_NONE;
	for (i = 0; i < g->n_nodes; i++) {
		size_t k;

		for (k = first[i]; k < first[i + 1]; k++) {
			if (stack[adj[k]] == i)
				adj[k] = PMBOT_WG_NONE;
			else
				stack[adj[k]] = i;
		}
		next[i] = first[i];
	}
	for (i = 0; i < g->n_nodes; i++) {
		size_t depth = 0;

		if (state[i])
			continue;
		stack[depth++] = i;
		state[i] = 1;
		while (depth) {
			size_t cur = stack[depth - 1];

			if (next[cur] == first[cur + 1]) {
				state[cur] = 2;
				depth--;
				continue;
			}
			{
				size_t to = adj[next[cur]++], k;

				if (to == PMBOT_WG_NONE)
					continue;
				if (state[to] == 0) {
					state[to] = 1;
					stack[depth++] = to;
				} else if (state[to] == 1) {
					for (k = 0; stack[k] != to; k++)
						;
					pmbot_buf_clear(&msg);
					if (pmbot_buf_puts(&msg, "dependency cycle: ") < 0 ||
					    cycle_path(&msg, g, stack, k, depth) < 0 ||
					    add_diag_at(diags, g, to, PMBOT_SEV_WARNING, "DEPENDENCY_CYCLE",
						file, msg.buf) < 0)
						goto done;
				}
			}
		}
	}
	err = PMBOT_OK;
done:
	pmbot_buf_free(&msg);
	free(stack);
	free(next);
	free(state);
	return err;
}

/*
 * Does edge `i` make one node wait on another (depends_on, blocked_by),
 * both ends in the graph? Then `*from` and `*to` are their places.
 */
static int waits_on(const pmbot_workgraph *g, const size_t *ends, size_t i,
	size_t *from, size_t *to)
{
	const pmbot_wg_edge *e = &g->edges[i];

	if (e->external || (e->type != PMBOT_EDGE_DEPENDS_ON && e->type != PMBOT_EDGE_BLOCKED_BY))
		return 0;
	*from = ends[2 * i];
	*to = ends[2 * i + 1];
	return *from != PMBOT_WG_NONE && *to != PMBOT_WG_NONE;
}

/* The "waits on" edges of the sorted graph (`ends`: each edge's ends) through check_waits. */
static int check_dependencies(pmbot_workgraph *g, const size_t *ends, const char *file,
	pmbot_diag_list *diags)
{
	size_t n = g->n_nodes ? g->n_nodes : 1;
	size_t *first = calloc(n + 1, sizeof(*first));  /* CSR offsets */
	size_t *adj = malloc((g->n_edges ? g->n_edges : 1) * sizeof(*adj));
	size_t *next = calloc(n, sizeof(*next));
	size_t i, from, to;
	int err = PMBOT_ERROR;

	if (!first || !adj || !next)
		goto done;
	/* Edges are sorted by type, then from: group dependency edges by source. */
	for (i = 0; i < g->n_edges; i++)
		if (waits_on(g, ends, i, &from, &to))
			first[from + 1]++;
	for (i = 0; i < g->n_nodes; i++)
		first[i + 1] += first[i];
	for (i = 0; i < g->n_nodes; i++)
		next[i] = first[i];
	for (i = 0; i < g->n_edges; i++)
		if (waits_on(g, ends, i, &from, &to))
			adj[next[from]++] = to;
	err = check_waits(g, first, adj, file, diags);
done:
	free(first);
	free(adj);
	free(next);
	return err;
}

/* 1 when `v` is in non-decreasing order under `cmp`. */
static int sorted(const void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	const char *p = v;
	size_t i;

	for (i = 1; i < n; i++)
		if (cmp(p + (i - 1) * size, p + i * size) > 0)
			return 0;
	return 1;
}

/*
 * A sort key: the first 16 bytes of a string as two big-endian words
 * (NUL-padded), which order as strcmp does, so most comparisons of ids
 * ("task:t01800") need no strcmp. `rest` is set when the string goes on.
 */
typedef struct {
	uint64_t a, b;
	const char *rest;
} skey;

static void skey_set(skey *k, const char *s)
{
	unsigned char b[16] = { 0 };
	size_t len = strnlen(s, 16);
	uint64_t a, c;

	memcpy(b, s, len);
	memcpy(&a, b, 8);
	memcpy(&c, b + 8, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	a = __builtin_bswap64(a);
	c = __builtin_bswap64(c);
#endif
	k->a = a;
	k->b = c;
	k->rest = len == 16 ? s + 16 : NULL;
}

static int skey_cmp(const skey *x, const skey *y)
{
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	/* The same 16 bytes: both ended at the same NUL, or both go on. */
	return x->rest ? strcmp(x->rest, y->rest) : 0;
}

/* A node (type 0, one key) or an edge (type, from, to) to sort. */
struct srec {
	skey k1, k2;
	int type;
};

static int srec_cmp(const struct srec *x, const struct srec *y)
{
	int c;

	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if ((c = skey_cmp(&x->k1, &y->k1)))
		return c;
	return skey_cmp(&x->k2, &y->k2);
}

/* Stable merge sort of the indices v[0..n) into `r`, as qsort's merge sort is; `tmp` holds n / 2 + 1. */
static void srec_sort(uint32_t *v, uint32_t *tmp, size_t n, const struct srec *r)
{
	size_t i, j, k, h;

	if (n <= 12) {
		for (i = 1; i < n; i++) {
			uint32_t x = v[i];

			for (j = i; j > 0 && srec_cmp(&r[v[j - 1]], &r[x]) > 0; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
		return;
	}
	h = n / 2;
	srec_sort(v, tmp, h, r);
	srec_sort(v + h, tmp, n - h, r);
	if (srec_cmp(&r[v[h - 1]], &r[v[h]]) <= 0)
		return;
	memcpy(tmp, v, h * sizeof(*v));
	/* k < j while i < h: the right half is read before it is written over. */
	for (i = 0, j = h, k = 0; i < h && j < n;)
		v[k++] = srec_cmp(&r[v[j]], &r[tmp[i]]) < 0 ? v[j++] : tmp[i++];
	while (i < h)
		v[k++] = tmp[i++];
}

/*
 * Sort nodes (edges when `edges`) as qsort with node_cmp (edge_cmp) does,
 * through keys: a comparison is mostly two integer compares instead of a
 * call through a pointer and a strcmp. `rank` (may be NULL) gets each
 * element's new place by its old one. 0, or -1 when out of memory
 * (nothing changed).
 */
static int sort_by_keys(pmbot_workgraph *g, int edges, uint32_t *rank)
{
	size_t n = edges ? g->n_edges : g->n_nodes, size = edges ? sizeof(*g->edges) :
		sizeof(*g->nodes), i, j, k;
	union {
		pmbot_wg_node node;
		pmbot_wg_edge edge;
	} held;
	struct srec *rec = NULL;
	uint32_t *v = NULL, *tmp = NULL;
	char *base = edges ? (char *)g->edges : (char *)g->nodes;
	int rc = -1;

	if (n > UINT32_MAX || !(rec = calloc(n, sizeof(*rec))) || !(v = malloc(n * sizeof(*v))) ||
	    !(tmp = malloc((n / 2 + 1) * sizeof(*tmp))))
		goto done;
	for (i = 0; i < n; i++) {
		v[i] = (uint32_t)i;
		if (edges) {
			rec[i].type = (int)g->edges[i].type;
			skey_set(&rec[i].k1, g->edges[i].from_id);
			skey_set(&rec[i].k2, g->edges[i].to_id);
		} else {
			rec[i].type = 0;
			skey_set(&rec[i].k1, g->nodes[i].stable_id);
			memset(&rec[i].k2, 0, sizeof(rec[i].k2));
		}
	}
	srec_sort(v, tmp, n, rec);
	if (rank)
		for (i = 0; i < n; i++)
			rank[v[i]] = (uint32_t)i;
	/*
	 * Element i takes element v[i], in place (no second array at the
	 * peak): each cycle of the permutation is followed once, its first
	 * element held aside; a placed element is marked v[j] == j.
	 */
	for (i = 0; i < n; i++) {
		if (v[i] == i)
			continue;
		memcpy(&held, base + i * size, size);
		for (j = i; v[j] != i; j = k) {
			k = v[j];
			memcpy(base + j * size, base + k * size, size);
			v[j] = (uint32_t)j;
		}
		memcpy(base + j * size, &held, size);
		v[j] = (uint32_t)j;
	}
	rc = 0;
done:
	free(rec);
	free(v);
	free(tmp);
	return rc;
}

/* Make g->index again, each node's id to the node. 0 or -1. */
static int index_nodes(pmbot_workgraph *g)
{
	size_t i;

	pmbot_strmap_free(&g->index);
	g->index_has_nodes = 1;
	if (pmbot_strmap_reserve(&g->index, g->n_nodes) < 0)
		return -1;
	for (i = 0; i < g->n_nodes; i++)
		if (pmbot_strmap_put(&g->index, g->nodes[i].stable_id, &g->nodes[i], NULL) < 0)
			return -1;
	return 0;
}

int pmbot_workgraph_finish(pmbot_workgraph *g, const char *file, pmbot_diag_list *diags)
{
	size_t i, out, *ends = NULL;
	uint32_t *rank = NULL;
	int errors = 0, rc = PMBOT_ERROR;
	int places = !g->index_has_nodes && g->index.count == g->n_nodes;

	g->ends_placed = 0;

	/*
	 * qsort's pointer must not be NULL, even for zero items. Reports list
	 * their items mostly in order and a merge appends to a finished graph:
	 * a run already in order skips the sort. Stable ids are unique and
	 * equal edges are deduplicated below, so the result is the same. The
	 * sort by keys is the same order; qsort stays for when memory is short
	 * and for the tests (pmbot_workgraph__fast off) to compare.
	 */
	if (g->n_nodes && !sorted(g->nodes, g->n_nodes, sizeof(*g->nodes), node_cmp)) {
		rank = places && pmbot_workgraph__fast && g->n_nodes <= UINT32_MAX ?
			malloc(g->n_nodes * sizeof(*rank)) : NULL;
		if (pmbot_workgraph__fast && sort_by_keys(g, 0, rank) == 0) {
			places = places && rank;
		} else {
			qsort(g->nodes, g->n_nodes, sizeof(*g->nodes), node_cmp);
			places = 0;
		}
	}
	if (g->n_edges && !sorted(g->edges, g->n_edges, sizeof(*g->edges), edge_cmp) &&
	    (!pmbot_workgraph__fast || sort_by_keys(g, 1, NULL) < 0))
		qsort(g->edges, g->n_edges, sizeof(*g->edges), edge_cmp);
	/* The same edge can come from both sides (epic.features and epic_id). */
	for (i = 0, out = 0; i < g->n_edges; i++) {
		if (out && !edge_cmp(&g->edges[out - 1], &g->edges[i]))
			continue;
		g->edges[out++] = g->edges[i];
	}
	g->n_edges = out;

	/*
	 * Each id to its node. An index that still holds every node's place
	 * + 1 (add order) follows the sort in place, a pass over its slots
	 * with no id hashed or compared; any other is made again.
	 */
	if (places) {
		for (i = 0; i < g->index.cap; i++) {
			pmbot_strmap_slot *sl = &g->index.slots[i];
			size_t at;

			if (!sl->key)
				continue;
			at = (size_t)(uintptr_t)sl->value - 1;
			sl->value = &g->nodes[rank ? rank[at] : at];
		}
		g->index_has_nodes = 1;
	} else if (index_nodes(g) < 0) {
		goto done;
	}
	free(g->parent);
	free(g->edges_at);
	g->edges_at = NULL;
	if (!(g->parent = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof(*g->parent))) ||
	    !(ends = malloc((g->n_edges ? g->n_edges : 1) * 2 * sizeof(*ends))))
		goto done;
	for (i = 0; i < g->n_nodes; i++)
		g->parent[i] = PMBOT_WG_NONE;
	/*
	 * Each edge's ends looked up once, for the parents and the dependency
	 * check: where the builder gave a place, and the places still hold,
	 * not at all. Edges are sorted by source: a run from one node is one
	 * lookup.
	 */
	for (i = 0; i < g->n_edges; i++) {
		pmbot_wg_edge *e = &g->edges[i];

		if (places && e->from_at)
			ends[2 * i] = rank ? rank[e->from_at - 1] : e->from_at - 1;
		else if (i && !strcmp(e->from_id, g->edges[i - 1].from_id))
			ends[2 * i] = ends[2 * i - 2];
		else
			ends[2 * i] = node_index(g, e->from_id);
		if (places && e->to_at)
			ends[2 * i + 1] = rank ? rank[e->to_at - 1] : e->to_at - 1;
		else
			ends[2 * i + 1] = node_index(g, e->to_id);
		/* Kept for pmbot_workgraph_edge_from() and _to(). */
		e->from_at = ends[2 * i] == PMBOT_WG_NONE ? 0 : (uint32_t)(ends[2 * i] + 1);
		e->to_at = ends[2 * i + 1] == PMBOT_WG_NONE ? 0 : (uint32_t)(ends[2 * i + 1] + 1);
	}
	g->ends_placed = g->n_nodes < UINT32_MAX;
	/* Sorted by type, then source: a node's edges of one type are one run. */
	if (g->n_edges < UINT32_MAX &&
	    !(g->edges_at = calloc(2 * N_EDGE_TYPES * (g->n_nodes ? g->n_nodes : 1),
		    sizeof(*g->edges_at))))
		goto done;
	for (i = 0; g->edges_at && i < g->n_edges; i++) {
		size_t k;

		if (ends[2 * i] == PMBOT_WG_NONE || (size_t)g->edges[i].type >= N_EDGE_TYPES)
			continue;
		k = 2 * ((size_t)g->edges[i].type * g->n_nodes + ends[2 * i]);
		if (g->edges_at[k] == g->edges_at[k + 1])
			g->edges_at[k] = (uint32_t)i;
		g->edges_at[k + 1] = (uint32_t)(i + 1);
	}
	for (i = 0; i < g->n_edges; i++) {
		const pmbot_wg_edge *e = &g->edges[i];
		size_t from = ends[2 * i], to = ends[2 * i + 1];

		if (e->type != PMBOT_EDGE_PARENT_CHILD || from == PMBOT_WG_NONE || to == PMBOT_WG_NONE)
			continue;
		if (g->parent[to] != PMBOT_WG_NONE) {
			if (pmbot_diag_add(diags, PMBOT_SEV_ERROR, "CONFLICTING_PARENT", file,
				g->nodes[to].source_path ? g->nodes[to].source_path : "",
				g->nodes[to].line, 0, "'%s' has two parents: '%s' and '%s'",
				e->to_id, g->nodes[g->parent[to]].stable_id, e->from_id) < 0)
				goto done;
			errors++;
			continue;
		}
		g->parent[to] = from;
	}
	if (check_parents(g, file, diags, &errors) < 0 ||
	    check_dependencies(g, ends, file, diags) < 0)
		goto done;
	rc = errors ? PMBOT_EINVALID : PMBOT_OK;
done:
	free(ends);
	free(rank);
	return rc;
}

/*
 * Stable counting sort of `src` (m edges) into `dst` by target (`by_to`)
 * or by type, then source; `count` holds 4 * n + 1 zeroed on entry.
 */
static void iedge_count_sort(pmbot_wg_iedge *dst, const pmbot_wg_iedge *src, size_t m,
	size_t *count, size_t n, int by_to)
{
	size_t i, buckets = by_to ? n : N_EDGE_TYPES * n, at = 0;

#define IKEY(e) (by_to ? (size_t)(e).to : (size_t)(e).type * n + (e).from)
	for (i = 0; i < m; i++)
		count[IKEY(src[i])]++;
	for (i = 0; i < buckets; i++) {
		size_t c = count[i];

		count[i] = at;
		at += c;
	}
	for (i = 0; i < m; i++)
		dst[count[IKEY(src[i])]++] = src[i];
#undef IKEY
	memset(count, 0, (buckets + 1) * sizeof(*count));
}

/*
 * The checks of pmbot_workgraph__check_finish over edges `e` (`*m` of
 * them, made fewer by dropping repeats), the nodes first put in finish's
 * order when `in_order`, else left in the order they came (rank[i] is i).
 */
static int check_edges(pmbot_workgraph *g, pmbot_wg_iedge *e, size_t *m_io, int in_order,
	const char *file, pmbot_diag_list *diags)
{
	size_t n = g->n_nodes, m = *m_io, i, out, *count = NULL, *first = NULL, *adj = NULL;
	uint32_t *rank = NULL;
	pmbot_wg_iedge *tmp = NULL;
	int errors = 0, rc = PMBOT_ERROR;

	if (n > UINT32_MAX || !(rank = malloc((n ? n : 1) * sizeof(*rank))) ||
	    !(count = calloc(N_EDGE_TYPES * n + 1, sizeof(*count))) ||
	    !(tmp = malloc((m ? m : 1) * sizeof(*tmp))) ||
	    !(first = calloc(n + 1, sizeof(*first))) || !(adj = malloc((m ? m : 1) * sizeof(*adj))))
		goto done;
	/* The nodes in the order of finish; each edge's ends follow their nodes. */
	for (i = 0; i < n; i++)
		rank[i] = (uint32_t)i;
	if (in_order && n && !sorted(g->nodes, n, sizeof(*g->nodes), node_cmp) &&
	    (!pmbot_workgraph__fast || sort_by_keys(g, 0, rank) < 0)) {
		qsort(g->nodes, n, sizeof(*g->nodes), node_cmp);
		/* The index still gives each id its place before the sort. */
		for (i = 0; i < n; i++) {
			void *v = NULL;

			if (!pmbot_strmap_get(&g->index, g->nodes[i].stable_id, &v))
				goto done;
			rank[(uintptr_t)v - 1] = (uint32_t)i;
		}
	}
	for (i = 0; i < m; i++) {
		if (e[i].from >= n || e[i].to >= n || e[i].type >= N_EDGE_TYPES)
			goto done;
		e[i].from = rank[e[i].from];
		e[i].to = rank[e[i].to];
	}
	/*
	 * Sorted by type, source, target as finish sorts the edges: ids order
	 * as their nodes' places, so two counting sorts of integers do.
	 */
	iedge_count_sort(tmp, e, m, count, n, 1);
	iedge_count_sort(e, tmp, m, count, n, 0);
	for (i = 0, out = 0; i < m; i++) {
		if (out && e[out - 1].type == e[i].type && e[out - 1].from == e[i].from &&
		    e[out - 1].to == e[i].to)
			continue;
		e[out++] = e[i];
	}
	m = *m_io = out;
	free(g->edges_at);
	g->edges_at = NULL;
	g->ends_placed = 0;
	free(g->parent);
	if (!(g->parent = malloc((n ? n : 1) * sizeof(*g->parent))))
		goto done;
	for (i = 0; i < n; i++)
		g->parent[i] = PMBOT_WG_NONE;
	for (i = 0; i < m && e[i].type == PMBOT_EDGE_PARENT_CHILD; i++) {
		size_t from = e[i].from, to = e[i].to;

		if (g->parent[to] != PMBOT_WG_NONE) {
			if (pmbot_diag_add(diags, PMBOT_SEV_ERROR, "CONFLICTING_PARENT", file,
				g->nodes[to].source_path ? g->nodes[to].source_path : "",
				g->nodes[to].line, 0, "'%s' has two parents: '%s' and '%s'",
				g->nodes[to].stable_id, g->nodes[g->parent[to]].stable_id,
				g->nodes[from].stable_id) < 0)
				goto done;
			errors++;
			continue;
		}
		g->parent[to] = from;
	}
	if (check_parents(g, file, diags, &errors) < 0)
		goto done;
	/* The "waits on" edges, sorted by type then source: grouped by source. */
	for (i = 0; i < m; i++)
		if (e[i].type == PMBOT_EDGE_DEPENDS_ON || e[i].type == PMBOT_EDGE_BLOCKED_BY)
			first[e[i].from + 1]++;
	for (i = 0; i < n; i++)
		first[i + 1] += first[i];
	for (i = 0; i < n; i++)
		count[i] = first[i];
	for (i = 0; i < m; i++)
		if (e[i].type == PMBOT_EDGE_DEPENDS_ON || e[i].type == PMBOT_EDGE_BLOCKED_BY)
			adj[count[e[i].from]++] = e[i].to;
	if (check_waits(g, first, adj, file, diags) < 0)
		goto done;
	rc = errors ? PMBOT_EINVALID : PMBOT_OK;
done:
	free(rank);
	free(count);
	free(tmp);
	free(first);
	free(adj);
	return rc;
}

int pmbot_workgraph__check_finish(pmbot_workgraph *g, pmbot_wg_iedge *e, size_t m,
	const char *file, pmbot_diag_list *diags)
{
	pmbot_diag_list found = PMBOT_DIAG_LIST_INIT;
	int rc, quiet;

	/*
	 * Whether a graph has a conflicting parent or a cycle does not depend
	 * on the order of its nodes; the node each message starts from does.
	 * So the nodes are checked in the order they came, and sorted by id,
	 * as finish sorts them, only to say what is wrong: the sound report,
	 * the usual one, skips the sort (5 % of validating 10,000 items).
	 */
	rc = check_edges(g, e, &m, 0, file, &found);
	quiet = rc == PMBOT_OK && !found.count;
	pmbot_diag_list_free(&found);
	if (quiet || rc == PMBOT_ERROR)
		return rc;
	return check_edges(g, e, &m, 1, file, diags);
}

int pmbot_workgraph_merge(pmbot_workgraph *dst, pmbot_workgraph *src, pmbot_diag_list *diags)
{
	size_t i;
	int rc = PMBOT_OK;

	/* Its edge ranges and ends are finish's again: until then, searched. */
	free(dst->edges_at);
	dst->edges_at = NULL;
	dst->ends_placed = 0;
	/*
	 * The strings go first, with everything that points into them: src
	 * keeps no string of its own, whatever fails below.
	 */
	if (src->strings) {
		struct pmbot_wg_block *last = src->strings;

		while (last->next)
			last = last->next;
		last->next = dst->strings;
		dst->strings = src->strings;
		src->strings = NULL;
	}
	/* So do the documents the nodes read their values from (src keeps them on failure). */
	if (src->n_docs) {
		pmbot_jdoc **docs = pmbot_array_grow(dst->docs, &dst->alloc_docs,
			dst->n_docs + src->n_docs, sizeof(*docs));

		if (!docs)
			return PMBOT_ERROR;
		dst->docs = docs;
		memcpy(dst->docs + dst->n_docs, src->docs, src->n_docs * sizeof(*docs));
		dst->n_docs += src->n_docs;
		src->n_docs = 0;
	}
	if (pmbot_strmap_reserve(&dst->index, dst->index.count + src->n_nodes) < 0)
		return PMBOT_ERROR;
	for (i = 0; i < src->n_nodes; i++) {
		pmbot_wg_node *n = &src->nodes[i];
		void *prev = NULL;

		if (grow_nodes(dst) < 0)
			return PMBOT_ERROR;
		switch (pmbot_strmap_put(&dst->index, n->stable_id, NULL, &prev)) {
		case -1:
			return PMBOT_ERROR;
		case 1: {
			/* Rare: a linear search, since growing dst moved its nodes. */
			const pmbot_wg_node *first = NULL;
			size_t k;

			for (k = 0; k < dst->n_nodes && !first; k++)
				if (!strcmp(dst->nodes[k].stable_id, n->stable_id))
					first = &dst->nodes[k];

			if (pmbot_diag_add(diags, PMBOT_SEV_ERROR, "DUPLICATE_STABLE_ID", n->file,
				n->source_path ? n->source_path : "", n->line, 0,
				"stable_id '%s' is also used by %s", n->stable_id,
				first && first->file ? first->file : "another report") < 0)
				return PMBOT_ERROR;
			rc = PMBOT_EINVALID;
			continue;
		}
		}
		dst->nodes[dst->n_nodes++] = *n;
	}
	src->n_nodes = 0;
	/* Rebuild dst's index from its own array: src's entries are gone. */
	if (index_nodes(dst) < 0)
		return PMBOT_ERROR;
	for (i = 0; i < src->n_edges; i++) {
		if (grow_edges(dst) < 0)
			return PMBOT_ERROR;
		dst->edges[dst->n_edges++] = src->edges[i];
	}
	src->n_edges = 0;
	return rc;
}
