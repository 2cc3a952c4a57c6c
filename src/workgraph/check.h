#ifndef PMBOT_WORKGRAPH_CHECK_H
#define PMBOT_WORKGRAPH_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "pmbot/workgraph.h"

/*
 * A graph only checked (pmbot_workgraph_check): its nodes added with
 * pmbot_workgraph__add_node_placed, its edges held apart as node places
 * (the order the nodes were added in), only those between two of its
 * nodes: the checks read no other. Both come from what validation
 * resolved (pmbot_report_validate_index), so no id is put, and no edge
 * string copied or looked up, a second time.
 */
typedef struct {
	uint32_t from, to;     /* places of nodes of the graph, in add order */
	uint32_t type;         /* a pmbot_edge_type */
} pmbot_wg_iedge;

/*
 * pmbot_workgraph_finish of a graph only checked: the same diagnostics in
 * the same order and the same return as finish of the graph with these
 * edges (and any others, to or from no node of the graph). `edges` (`m`,
 * the caller's) is reordered. Afterwards the parents are set, and the
 * nodes sorted when there was something to say (else they may be left in
 * add order); the graph's index and edges are not to be read. An edge
 * naming no node or an unknown type is PMBOT_ERROR.
 */
PMBOT_WARN_UNUSED int pmbot_workgraph__check_finish(pmbot_workgraph *g, pmbot_wg_iedge *edges,
	size_t m, const char *file, pmbot_diag_list *diags);

/*
 * Take `ids` (left empty) as the index of `g`, which has no node yet: the
 * id of every node to come, each mapped to its place + 1 in the order
 * they will be added (pmbot_report_validate_index() gives such a map, and
 * its keys are the document's strings, which must outlive `g`). They are
 * then added with pmbot_workgraph__add_node_placed().
 */
void pmbot_workgraph__take_index(pmbot_workgraph *g, pmbot_strmap *ids);

/*
 * pmbot_workgraph_add_node_ref for a graph given its index by
 * pmbot_workgraph__take_index(): the id is neither put nor checked again
 * (validation found each once), which spares a cache miss a node. Same
 * returns, never "a repeated id".
 */
int pmbot_workgraph__add_node_placed(pmbot_workgraph *g, pmbot_node_type type,
	const char *stable_id, const char *type_name, const char *source_path, int line);

/*
 * pmbot_workgraph_add_edge() in two steps, so that a builder looks each
 * end up once: pmbot_workgraph__edge_end() gives what an edge holds for
 * `id` (the node's own stable_id pointer when `id` names a node, setting
 * `*is_node` (may be NULL) to 1; else a copy among the graph's strings;
 * NULL when out of memory), pmbot_workgraph__add_edge_ends() adds the edge
 * of two such ends (NULL, a failed end: PMBOT_ERROR).
 */
char *pmbot_workgraph__edge_end(pmbot_workgraph *g, const char *id, int *is_node);
int pmbot_workgraph__add_edge_ends(pmbot_workgraph *g, pmbot_edge_type type, char *from_end,
	char *to_end, int external);

/*
 * pmbot_workgraph__add_edge_ends() with the places + 1 (add order) of the
 * nodes the ends are (pmbot_wg_edge.from_at, to_at; 0: not known), which
 * spare finish looking them up while the index holds places.
 */
int pmbot_workgraph__add_edge_placed(pmbot_workgraph *g, pmbot_edge_type type, char *from_end,
	char *to_end, int external, uint32_t from_at, uint32_t to_at);

/*
 * Add the node of report item `item`, a value of one of the graph's
 * documents (pmbot_workgraph_keep_doc()): `stable_id` its "stable_id"
 * (copied), `type_name` an open type's name (borrowed, as long as the
 * graph), `area` and `priority` as pmbot_wg_node says (borrowed likewise).
 * Same returns as pmbot_workgraph_add_node.
 */
int pmbot_workgraph_add_item(pmbot_workgraph *g, pmbot_node_type type, const char *stable_id,
	const char *type_name, const pmbot_jnode *item, const pmbot_jnode *area,
	const pmbot_jnode *priority, int needs_human, const char *source_path, int line);

/*
 * pmbot_workgraph_add_item for a graph given its index by
 * pmbot_workgraph__take_index(), whose keys are the strings of the
 * document `item` is in: `stable_id` is that key itself, not copied (the
 * graph keeps the document as long as the string), nor put again.
 */
int pmbot_workgraph__add_item_placed(pmbot_workgraph *g, pmbot_node_type type,
	const char *stable_id, const char *type_name, const pmbot_jnode *item,
	const pmbot_jnode *area, const pmbot_jnode *priority, int needs_human,
	const char *source_path, int line);

/*
 * Make `doc` one of the graph's documents (freed with it): taken even on
 * failure. 0, or PMBOT_ERROR when out of memory (`doc` freed).
 */
int pmbot_workgraph_keep_doc(pmbot_workgraph *g, pmbot_jdoc *doc);

/*
 * A string value among the graph's own: a document node of `len` bytes
 * from `s` (copied), for a value a node does not read from a document
 * as it is (a trimmed area). NULL when out of memory.
 */
const pmbot_jnode *pmbot_workgraph_string_node(pmbot_workgraph *g, const char *s, size_t len);

#endif
