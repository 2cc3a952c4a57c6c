#ifndef PMBOT_WORKGRAPH_H
#define PMBOT_WORKGRAPH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/diag.h"
#include "pmbot/doc.h"
#include "pmbot/report.h"
#include "pmbot/strmap.h"

/*
 * WorkGraph v1: the work items of a plan and the edges between them
 * (docs/schemas/workgraph.v1.schema.json). Built from a validated report;
 * the order of nodes (by stable_id) and edges (by type, from, to) does not
 * depend on the order of the report, so the same plan gives the same bytes.
 */

typedef enum {
	PMBOT_NODE_EPIC,
	PMBOT_NODE_FEATURE,
	PMBOT_NODE_TASK,
	PMBOT_NODE_BUG,
	PMBOT_NODE_SPIKE,
	PMBOT_NODE_TEST,
	PMBOT_NODE_CHORE,
	PMBOT_NODE_BENCHMARK,
	PMBOT_NODE_OTHER /* an open task type: the node's type_name says which */
} pmbot_node_type;

typedef enum {
	PMBOT_EDGE_PARENT_CHILD,
	PMBOT_EDGE_DEPENDS_ON,
	PMBOT_EDGE_BLOCKED_BY,
	PMBOT_EDGE_RELATED
} pmbot_edge_type;

/* "epic", "feature", …; NULL for an out-of-range value. */
const char *pmbot_node_type_name(pmbot_node_type t);
/*
 * Parse a type name; 0 on success, -1 if not a lower-case word. Any word
 * that is not one of the eight known types parses as PMBOT_NODE_OTHER.
 */
PMBOT_WARN_UNUSED int pmbot_node_type_parse(pmbot_node_type *out, const char *name);
/* "parent_child", "depends_on", "blocked_by", "related". */
const char *pmbot_edge_type_name(pmbot_edge_type t);

typedef struct {
	const char *stable_id; /* the graph's strings (pmbot_workgraph_add_node_ref: its caller's) */
	pmbot_node_type type;
	/* The graph's documents' or static: any type, open ones too. */
	const char *type_name;
	/*
	 * The node's values, read where they are, in one of the graph's
	 * documents (no jansson object is built a node): the report's item
	 * itself, or for a node added by pmbot_workgraph_add_node() its node
	 * object (`is_object`). Members are read through pmbot_wg_node_get(),
	 * the whole workgraph/v1 node object made by pmbot_workgraph_node_json().
	 * NULL in a graph that is only checked (pmbot_workgraph_add_node_ref).
	 */
	const pmbot_jnode *item;
	/*
	 * Area and priority, blank code points trimmed, the triage defaults of
	 * spec 000 ("triage", "Triage") when the item has none: document
	 * strings, the graph's or static. NULL in a graph only checked.
	 */
	const pmbot_jnode *area, *priority;
	int needs_human;       /* area or priority defaulted */
	int is_object;         /* `item` is a workgraph/v1 node object */
	char *source_path;     /* the graph's strings: JSON Pointer of the item in the report */
	int line;              /* line of the item in the report, 0 if unknown */
	char *file;            /* the graph's strings: the report it came from, may be NULL */
} pmbot_wg_node;

typedef struct {
	/*
	 * The graph's strings: a node's id is its node's `stable_id` pointer
	 * itself (a node added by pmbot_workgraph_add_node_ref: its caller's).
	 */
	char *from_id;
	char *to_id;           /* a stable_id, or a GitHub issue URL */
	pmbot_edge_type type;
	int external;          /* 1 when to_id is an issue URL outside the plan */
	/*
	 * The graph's own: the places + 1 of the nodes the ends name. Before
	 * finish, in add order where the builder knew them (0 where not); once
	 * finish has run (the graph's ends_placed), in `nodes`, 0 for an end
	 * no node has: read through pmbot_workgraph_edge_from() and _to().
	 */
	uint32_t from_at, to_at;
} pmbot_wg_edge;

/*
 * Edge directions: parent_child goes parent -> child; depends_on goes item ->
 * dependency; blocked_by goes item -> blocker. Every edge built from a
 * report has provenance "report_ir".
 */
typedef struct {
	pmbot_wg_node *nodes;
	size_t n_nodes;
	pmbot_wg_edge *edges;
	size_t n_edges;
	pmbot_strmap index;    /* stable_id -> pmbot_wg_node*, valid after finish
	                          (before: its place + 1, in add order) */
	int index_has_nodes;   /* index maps to nodes (finish or a merge ran):
	                          until then every value is a place + 1 */
	size_t *parent;        /* per node: index of its parent or PMBOT_WG_NONE,
	                          valid after finish */
	uint32_t *edges_at;    /* pmbot_workgraph_edges_from()'s ranges, set by
	                          finish; NULL: it searches */
	int ends_placed;       /* every edge's from_at and to_at are places in
	                          `nodes` (finish set them); 0: ends are looked up */
	size_t alloc_nodes;
	size_t alloc_edges;
	/*
	 * Owned: the blocks the nodes' and edges' strings live in (the
	 * graph's strings), freed with the graph, moved by a merge.
	 */
	struct pmbot_wg_block *strings;
	/* Owned: the documents the nodes' values are read from, moved by a merge. */
	pmbot_jdoc **docs;
	size_t n_docs, alloc_docs;
} pmbot_workgraph;

#define PMBOT_WG_NONE ((size_t)-1)

/*
 * Tests only: 1 (the default) sorts nodes and edges by keys of their ids;
 * 0 sorts with qsort, for a test to compare.
 */
extern int pmbot_workgraph__fast;

/* A new empty graph the caller frees with pmbot_workgraph_free(). */
PMBOT_WARN_UNUSED int pmbot_workgraph_new(pmbot_workgraph **out);
void pmbot_workgraph_free(pmbot_workgraph *g);

/*
 * A copy of `s` among the graph's strings (owned by `g`, valid until it
 * is freed, or until the graph it was merged into is), for a node's or
 * an edge's string fields; NULL when out of memory.
 */
char *pmbot_workgraph_strdup(pmbot_workgraph *g, const char *s);

/*
 * Add a node from its workgraph/v1 node object `json`, which is consumed
 * (even on failure) and must hold a string "stable_id"; the graph keeps a
 * document of it. Returns 0, PMBOT_EINVALID for a duplicate stable_id,
 * PMBOT_ERROR when out of memory. Invalidates node pointers.
 */
int pmbot_workgraph_add_node(pmbot_workgraph *g, pmbot_node_type type, json_t *json,
	const char *source_path, int line);

/*
 * Member `name` of the node's values (borrowed), or NULL when its node
 * object has none (a report item's null member is left out). Area,
 * priority and needs_human are the node's own fields.
 */
const pmbot_jnode *pmbot_wg_node_get(const pmbot_wg_node *n, const char *name);

/*
 * The node's workgraph/v1 object (a new reference the caller owns): for a
 * report item its stable_id, title, type, area, priority, needs_human and
 * the members status, size, estimate_hrs, risk, goal, objective,
 * acceptance_criteria, owners, links and milestones it has (not null), in
 * that order. PMBOT_OK or PMBOT_ERROR.
 */
int pmbot_workgraph_node_json(json_t **out, const pmbot_wg_node *n);

/*
 * pmbot_workgraph_add_node for a graph that is only checked (finish and
 * its diagnostics read a node's id, type, path and line, never its json):
 * the node's `json` is NULL and `stable_id` and `type_name` (an open
 * type's name, PMBOT_NODE_OTHER; ignored for a known type) are borrowed,
 * so they must outlive the graph. Such a graph must not reach an output
 * or a renderer. Same returns as pmbot_workgraph_add_node.
 */
int pmbot_workgraph_add_node_ref(pmbot_workgraph *g, pmbot_node_type type,
	const char *stable_id, const char *type_name, const char *source_path, int line);

/*
 * Add an edge: an id that names a node already added is that node's
 * `stable_id`, any other is copied. 0 or PMBOT_ERROR.
 */
int pmbot_workgraph_add_edge(pmbot_workgraph *g, pmbot_edge_type type,
	const char *from_id, const char *to_id, int external);

/*
 * Sort nodes and edges into canonical order and rebuild the index; then
 * check the graph: parent_child must form a forest (a node with two parents
 * is CONFLICTING_PARENT, a cycle is PARENT_CYCLE with its path, both
 * errors); depends_on/blocked_by cycles are DEPENDENCY_CYCLE warnings with
 * their path. Returns PMBOT_OK, PMBOT_EINVALID when an error was added, or
 * PMBOT_ERROR. `file` (may be NULL) goes into the diagnostics.
 */
int pmbot_workgraph_finish(pmbot_workgraph *g, const char *file, pmbot_diag_list *diags);

/*
 * Build the WorkGraph of a report that passed pmbot_report_validate().
 * Adds MISSING_AREA / MISSING_PRIORITY warnings only through validation,
 * not here. The graph takes the report's document (report->doc is NULL
 * after), which its nodes are read from. Returns as
 * pmbot_workgraph_finish(); `*out` is set (caller frees) whenever the
 * return is not PMBOT_ERROR.
 */
int pmbot_workgraph_from_report(pmbot_workgraph **out, pmbot_report *report,
	pmbot_diag_list *diags);

/*
 * pmbot_workgraph_from_report() of a report that passed
 * pmbot_report_validate_index() into `ix`: the graph takes its map of the
 * ids as its index (ix->ids is left empty) and its nodes the document's
 * strings as their ids, and its edges are validation's links, so no id is
 * put, copied or looked up again (an issue URL in depends_on or
 * blocked_by is looked up once). The same graph and diagnostics; an `ix`
 * that is not this report's (another count of ids) is PMBOT_ERROR.
 */
int pmbot_workgraph_from_report_index(pmbot_workgraph **out, pmbot_report *report,
	pmbot_report_index *ix, pmbot_diag_list *diags);

/*
 * Load, validate and map a Markdown report in one step: pmbot_report_load,
 * pmbot_report_validate_index, pmbot_workgraph_from_report_index. `*out` is set only
 * when the report is valid (warnings allowed); the caller frees it.
 * Returns PMBOT_OK, PMBOT_EINVALID (diagnostics say why) or PMBOT_ERROR.
 */
PMBOT_WARN_UNUSED int pmbot_workgraph_load(pmbot_workgraph **out, const char *file,
	const char *markdown, size_t len, const pmbot_limits *lim,
	pmbot_diag_list *diags);

/*
 * pmbot_workgraph_load without the graph: the same checks, return code and
 * diagnostics, for a caller that only reports them (`validate`). Cheaper:
 * no WorkGraph node objects are built, and the edges are held as node
 * places, only those between nodes (src/workgraph/check.h), sorted as
 * integers. Nothing is returned to own.
 */
PMBOT_WARN_UNUSED int pmbot_workgraph_check(const char *file, const char *markdown,
	size_t len, const pmbot_limits *lim, pmbot_diag_list *diags);

/*
 * pmbot_workgraph_load and pmbot_workgraph_check of the text in
 * `markdown`, which they take (pmbot_report_load_buf): it is freed once
 * no block needs it and left empty whatever the outcome, so validation and
 * the graph are built without it.
 */
PMBOT_WARN_UNUSED int pmbot_workgraph_load_buf(pmbot_workgraph **out, const char *file,
	pmbot_buf *markdown, const pmbot_limits *lim, pmbot_diag_list *diags);
PMBOT_WARN_UNUSED int pmbot_workgraph_check_buf(const char *file, pmbot_buf *markdown,
	const pmbot_limits *lim, pmbot_diag_list *diags);

/*
 * Move every node and edge of `src` into `dst` (several reports planned
 * together); `src` is left empty and still needs pmbot_workgraph_free().
 * A stable_id in both is DUPLICATE_STABLE_ID (naming both reports) and the
 * second node is dropped. Call pmbot_workgraph_finish() on `dst` after the
 * last merge. Returns PMBOT_OK, PMBOT_EINVALID or PMBOT_ERROR.
 */
int pmbot_workgraph_merge(pmbot_workgraph *dst, pmbot_workgraph *src, pmbot_diag_list *diags);

/* Node by stable_id (borrowed), or NULL. Valid after finish. */
const pmbot_wg_node *pmbot_workgraph_find(const pmbot_workgraph *g, const char *stable_id);

/*
 * The node an edge of `g` comes from, or goes to (borrowed), or NULL where
 * its id names none (an issue URL): pmbot_workgraph_find() of the id,
 * without the lookup once finish has placed the ends. A plan of 10,000
 * items looked up 43,000 edge ends, each a cache miss in the index.
 */
const pmbot_wg_node *pmbot_workgraph_edge_from(const pmbot_workgraph *g, const pmbot_wg_edge *e);
const pmbot_wg_node *pmbot_workgraph_edge_to(const pmbot_workgraph *g, const pmbot_wg_edge *e);

/*
 * The edges of type `t` from `node` (a node of `g`): edges[*first..*end),
 * empty when there are none. Valid after finish; O(1) then, since finish
 * keeps every node's ranges (32 bytes a node): a binary search by id, as
 * the renderer asked for each node's dependencies, compared ids 380,000
 * times for 10,000 items. A graph merged and not finished again, or only
 * checked, is searched.
 */
void pmbot_workgraph_edges_from(const pmbot_workgraph *g, pmbot_edge_type t,
	const pmbot_wg_node *node, size_t *first, size_t *end);

/* The parent of `node` (borrowed), or NULL for a root. */
const pmbot_wg_node *pmbot_workgraph_parent(const pmbot_workgraph *g,
	const pmbot_wg_node *node);

/*
 * The graph as {"schema_version":"workgraph/v1","nodes":[…],"edges":[…]};
 * `*out` is a new reference the caller owns. 0 or PMBOT_ERROR.
 */
int pmbot_workgraph_to_json(json_t **out, const pmbot_workgraph *g);

/* Append a Mermaid flowchart of the graph to `out`. 0 or PMBOT_ERROR. */
int pmbot_workgraph_mermaid(pmbot_buf *out, const pmbot_workgraph *g);

/* Append an indented epic/feature/task tree with dependency notes. */
int pmbot_workgraph_tree(pmbot_buf *out, const pmbot_workgraph *g);

#endif
