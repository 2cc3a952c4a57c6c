#include <stdlib.h>
#include <string.h>

#include "pmbot/workgraph.h"
#include "pmbot/banned.h"

int pmbot_workgraph_to_json(json_t **out, const pmbot_workgraph *g)
{
	json_t *doc = json_object(), *nodes = json_array(), *edges = json_array();
	size_t i;
	int err = 0;

	*out = NULL;
	if (!doc || !nodes || !edges) {
		json_decref(doc);
		json_decref(nodes);
		json_decref(edges);
		return PMBOT_ERROR;
	}
	err |= json_object_set_new(doc, "schema_version", json_string("workgraph/v1"));
	err |= json_object_set_new(doc, "nodes", nodes);
	err |= json_object_set_new(doc, "edges", edges);
	for (i = 0; i < g->n_nodes && !err; i++) {
		json_t *node = NULL;

		err |= pmbot_workgraph_node_json(&node, &g->nodes[i]) < 0 ||
			json_array_append_new(nodes, node) < 0;
	}
	for (i = 0; i < g->n_edges && !err; i++) {
		const pmbot_wg_edge *e = &g->edges[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "from_id", e->from_id, "to_id", e->to_id,
			"edge_type", pmbot_edge_type_name(e->type), "provenance", "report_ir");

		if (o && e->external)
			err |= json_object_set_new(o, "external", json_true());
		err |= json_array_append_new(edges, o);
	}
	if (err) {
		json_decref(doc);
		return PMBOT_ERROR;
	}
	*out = doc;
	return PMBOT_OK;
}

/*
 * Mermaid labels are quoted; '"' and markup characters go in as entities.
 * Mermaid reads "%%{init: …}%%" directives anywhere in the text, inside
 * labels too, so '%' is an entity as well; line breaks become spaces, so a
 * label can never start a "click" (interaction) line of its own.
 */
static int mermaid_text(pmbot_buf *out, const char *s)
{
	int err = 0;

	for (; *s && !err; s++) {
		switch (*s) {
		case '"': err = pmbot_buf_puts(out, "#quot;"); break;
		case '<': err = pmbot_buf_puts(out, "#lt;"); break;
		case '>': err = pmbot_buf_puts(out, "#gt;"); break;
		case '#': err = pmbot_buf_puts(out, "#35;"); break;
		case '%': err = pmbot_buf_puts(out, "#37;"); break;
		case '\n':
		case '\r':
		case '\t': err = pmbot_buf_putc(out, ' '); break;
		default: err = pmbot_buf_putc(out, *s);
		}
	}
	return err;
}

/* The place of the node `n` (an edge end), or PMBOT_WG_NONE. */
static size_t place_of(const pmbot_workgraph *g, const pmbot_wg_node *n)
{
	return n ? (size_t)(n - g->nodes) : PMBOT_WG_NONE;
}

int pmbot_workgraph_mermaid(pmbot_buf *out, const pmbot_workgraph *g)
{
	size_t i, ext = 0;
	int err = 0;

	err |= pmbot_buf_puts(out, "flowchart TD\n");
	for (i = 0; i < g->n_nodes; i++) {
		const pmbot_wg_node *n = &g->nodes[i];

		err |= pmbot_buf_printf(out, "  n%zu[\"", i);
		err |= mermaid_text(out, n->stable_id);
		err |= pmbot_buf_puts(out, "<br/>");
		err |= mermaid_text(out, pmbot_jnode_str(pmbot_wg_node_get(n, "title")));
		err |= pmbot_buf_printf(out, "\"]:::%s\n", n->type_name);
	}
	for (i = 0; i < g->n_edges; i++) {
		const pmbot_wg_edge *e = &g->edges[i];
		size_t from = place_of(g, pmbot_workgraph_edge_from(g, e)),
		       to = place_of(g, pmbot_workgraph_edge_to(g, e));
		char target[32];

		if (from == PMBOT_WG_NONE)
			continue;
		if (e->external) {
			snprintf(target, sizeof(target), "x%zu", ext++);
			err |= pmbot_buf_printf(out, "  %s[\"", target);
			err |= mermaid_text(out, e->to_id);
			err |= pmbot_buf_puts(out, "\"]:::external\n");
		} else if (to == PMBOT_WG_NONE) {
			continue;
		} else {
			snprintf(target, sizeof(target), "n%zu", to);
		}
		if (e->type == PMBOT_EDGE_PARENT_CHILD)
			err |= pmbot_buf_printf(out, "  n%zu --> %s\n", from, target);
		else
			err |= pmbot_buf_printf(out, "  n%zu -. %s .-> %s\n", from,
				e->type == PMBOT_EDGE_DEPENDS_ON ? "depends on" :
				e->type == PMBOT_EDGE_BLOCKED_BY ? "blocked by" : "related", target);
	}
	err |= pmbot_buf_puts(out,
		"  classDef epic fill:#e8d5ff,stroke:#6f42c1\n"
		"  classDef feature fill:#d5e8ff,stroke:#0969da\n"
		"  classDef external fill:#eeeeee,stroke:#888888,stroke-dasharray:3 3\n");
	return err ? PMBOT_ERROR : PMBOT_OK;
}

static int type_rank(pmbot_node_type t)
{
	return t == PMBOT_NODE_EPIC ? 0 : t == PMBOT_NODE_FEATURE ? 1 : 2;
}

struct edge_index {
	size_t *first; /* per node: offset into `edges`, n + 1 entries */
	size_t *edges; /* indices into g->edges of non-parent edges, grouped by source */
};

static int tree_line(pmbot_buf *out, const pmbot_workgraph *g, const struct edge_index *ix,
	size_t i, int depth)
{
	const pmbot_wg_node *n = &g->nodes[i];
	size_t k;
	int err = 0, d;

	for (d = 0; d < depth; d++)
		err |= pmbot_buf_puts(out, "  ");
	err |= pmbot_buf_printf(out, "- %s [%s] %s", n->stable_id, n->type_name,
		pmbot_jnode_str(pmbot_wg_node_get(n, "title")));
	for (k = ix->first[i]; k < ix->first[i + 1]; k++) {
		const pmbot_wg_edge *e = &g->edges[ix->edges[k]];

		err |= pmbot_buf_printf(out, "%s%s %s", k == ix->first[i] ? " (" : "; ",
			e->type == PMBOT_EDGE_DEPENDS_ON ? "depends on" :
			e->type == PMBOT_EDGE_BLOCKED_BY ? "blocked by" : "related to", e->to_id);
	}
	if (ix->first[i + 1] > ix->first[i])
		err |= pmbot_buf_putc(out, ')');
	err |= pmbot_buf_putc(out, '\n');
	return err;
}

static int build_edge_index(struct edge_index *ix, const pmbot_workgraph *g)
{
	size_t n = g->n_nodes, i, *fill;

	ix->first = calloc(n + 1, sizeof(*ix->first));
	ix->edges = malloc((g->n_edges ? g->n_edges : 1) * sizeof(*ix->edges));
	fill = calloc(n + 1, sizeof(*fill));
	if (!ix->first || !ix->edges || !fill) {
		free(fill);
		return -1;
	}
	for (i = 0; i < g->n_edges; i++) {
		size_t from = place_of(g, pmbot_workgraph_edge_from(g, &g->edges[i]));

		if (g->edges[i].type != PMBOT_EDGE_PARENT_CHILD && from != PMBOT_WG_NONE)
			ix->first[from + 1]++;
	}
	for (i = 0; i < n; i++)
		ix->first[i + 1] += ix->first[i];
	for (i = 0; i < g->n_edges; i++) {
		size_t from = place_of(g, pmbot_workgraph_edge_from(g, &g->edges[i]));

		if (g->edges[i].type != PMBOT_EDGE_PARENT_CHILD && from != PMBOT_WG_NONE)
			ix->edges[ix->first[from] + fill[from]++] = i;
	}
	free(fill);
	return 0;
}

/* Depth-first with an explicit stack: a deep chain must not exhaust the C stack. */
int pmbot_workgraph_tree(pmbot_buf *out, const pmbot_workgraph *g)
{
	size_t n = g->n_nodes, i, r, top = 0;
	size_t *first = calloc(n + 2, sizeof(*first)), *kids = malloc((n ? n : 1) * sizeof(*kids));
	size_t *fill = calloc(n + 1, sizeof(*fill));
	size_t *stack = malloc((n ? n : 1) * sizeof(*stack));
	int *depth = malloc((n ? n : 1) * sizeof(*depth));
	struct edge_index ix = { NULL, NULL };
	int err = 0, rank;

	if (!first || !kids || !fill || !stack || !depth || !g->parent ||
	    build_edge_index(&ix, g) < 0) {
		err = -1;
		goto done;
	}
	for (i = 0; i < n; i++)
		if (g->parent[i] != PMBOT_WG_NONE)
			first[g->parent[i] + 1]++;
	for (i = 0; i < n; i++)
		first[i + 1] += first[i];
	for (i = 0; i < n; i++)
		if (g->parent[i] != PMBOT_WG_NONE)
			kids[first[g->parent[i]] + fill[g->parent[i]]++] = i;
	/* Roots by type (epics, features, tasks), each group in stable_id order. */
	for (rank = 0; rank < 3 && !err; rank++) {
		for (r = 0; r < n && !err; r++) {
			if (g->parent[r] != PMBOT_WG_NONE || type_rank(g->nodes[r].type) != rank)
				continue;
			stack[top] = r;
			depth[top++] = 0;
			while (top && !err) {
				size_t cur = stack[--top], c;
				int d = depth[top];

				err |= tree_line(out, g, &ix, cur, d);
				/* Push children in reverse so they print in stable_id order. */
				for (c = first[cur + 1]; c > first[cur]; c--) {
					stack[top] = kids[c - 1];
					depth[top++] = d + 1;
				}
			}
		}
	}
done:
	free(first);
	free(kids);
	free(fill);
	free(stack);
	free(depth);
	free(ix.first);
	free(ix.edges);
	return err ? PMBOT_ERROR : PMBOT_OK;
}
