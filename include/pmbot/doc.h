#ifndef PMBOT_DOC_H
#define PMBOT_DOC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "pmbot/common.h"
#include "pmbot/diag.h"
#include "pmbot/strmap.h"

/*
 * Documents from outside (reports, configuration, forms, state files):
 * JSON and YAML read into jansson values with a source map, under limits,
 * so every later diagnostic can name a line. Nothing here knows ReportIR.
 */

/*
 * Limits on hostile input. pmbot_limits_default() fills the defaults.
 * Depth counts containers: a scalar root is depth 0, `[1]` is 1, `[[1]]`
 * is 2, so max_depth 64 admits 64 nested arrays/objects and refuses the
 * 65th. Alias nodes are the values (containers and scalars, keys not
 * counted) that YAML aliases expand to, summed over the whole document:
 * `*a` where `a: &a [1, 2]` costs 3. Alias bytes are the string and key
 * bytes those copies hold, summed the same way: a few aliases of one long
 * string stay under the node budget yet would multiply the text. max_depth also bounds recursion
 * elsewhere (jansson frees and copies values recursively, and so does
 * pmbot_json_canonical), so keep it in the hundreds at most.
 */
typedef struct {
	size_t max_bytes;       /* Markdown file size (INPUT_TOO_LARGE); 64 MiB */
	size_t max_depth;       /* array/object nesting (INPUT_TOO_DEEP); 64 */
	size_t max_alias_nodes; /* YAML nodes produced by aliases (YAML_ALIAS_LIMIT); 10000 */
	size_t max_alias_bytes; /* string and key bytes aliases copy (YAML_ALIAS_LIMIT); 4 MiB */
} pmbot_limits;

/* Fill `*lim` with the defaults above. */
void pmbot_limits_default(pmbot_limits *lim);

/*
 * Source map: JSON Pointer -> 1-based line and column in the source file.
 * Every value of a parsed document has an entry (object members at the
 * position of their key; the root at ""). Pointers are RFC 6901 strings as
 * pmbot_json_pointer_push() writes them ("~0" for '~', "~1" for '/') and
 * are compared byte for byte. Columns count characters, not bytes. The map
 * keeps all pointer text in one arena: about 32 bytes per entry plus the
 * text, amortised O(1) add and find (4 GiB of pointer text at most).
 */
typedef struct pmbot_srcmap pmbot_srcmap;

/* A new empty map; the caller owns it. NULL when out of memory. */
PMBOT_WARN_UNUSED pmbot_srcmap *pmbot_srcmap_new(void);

/* Free `map` and every pointer it copied. NULL is allowed. */
void pmbot_srcmap_free(pmbot_srcmap *map);

/*
 * Record the position of `pointer` (copied; the map owns the copy). A
 * pointer recorded again takes the later position. 0, or -1 when out of
 * memory (the map is unchanged and stays usable).
 */
int pmbot_srcmap_add(pmbot_srcmap *map, const char *pointer, int line, int column);
/* pmbot_srcmap_add of the `len` bytes at `pointer` (no NUL needed): parsers know the length. */
int pmbot_srcmap_addn(pmbot_srcmap *map, const char *pointer, size_t len, int line, int column);

/*
 * Position of `pointer`, or of its nearest ancestor that has one: tokens
 * are dropped from the end ("/a/b~1c/0" -> "/a/b~1c" -> "/a" -> ""), so
 * "/ab" never falls back to "/a". Returns 1 when found; 0 when no entry
 * matches (empty or NULL map, or no ancestor recorded), with `*line` and
 * `*column` then set to 0. `line` and `column` may be NULL.
 */
int pmbot_srcmap_find(const pmbot_srcmap *map, const char *pointer, int *line, int *column);

/*
 * Parse `len` bytes of JSON (strict RFC 8259, duplicate keys rejected)
 * or YAML 1.2 (libyaml, core schema resolution of plain scalars) into `*out`
 * (a new reference the caller owns). Line 1 of `text` is line `line_base` of
 * the source file and its columns are shifted by `col_base`, so diagnostics
 * and the source map (optional: pass NULL) speak of the source file.
 *
 * Rejections: REPORT_PARSE_JSON / REPORT_PARSE_YAML, DUPLICATE_KEY,
 * YAML_ALIAS_LIMIT, INPUT_TOO_LARGE, INPUT_TOO_DEEP, INVALID_UTF8 — each
 * returns PMBOT_EINVALID with diagnostics added; PMBOT_ERROR on runtime
 * failure. `file` (may be NULL) is recorded in the diagnostics.
 *
 * Both stop at the first problem and add exactly one error, with `file`,
 * the JSON Pointer of the offending key or value where it is known ("" when
 * not) and its line/column in file terms: file line = line_base + (text
 * line - 1), file column = col_base + text column (1-based, in characters;
 * lines end at '\n' only). Checks run in this order: `len` over lim->max_bytes
 * (INPUT_TOO_LARGE), invalid UTF-8 or a NUL byte (INVALID_UTF8, at the
 * first bad byte), then nesting and syntax. `lim` NULL means
 * pmbot_limits_default(). `text` need not be NUL-terminated (and may be
 * NULL when `len` is 0).
 *
 * JSON: one pass of pm-bot's own parser builds the jansson values and the
 * map together (jansson's loader reads a character at a time and would
 * need a second pass for positions); on a rejection its error code, line,
 * column and message are jansson's. Any value may be the root. Recursion
 * stops at lim->max_depth. An escaped \u0000 is INVALID_UTF8, since the
 * strings are C strings downstream. After a failure the map may hold
 * entries for what was read; discard it.
 *
 * YAML: exactly one document (an empty stream or a second document is
 * REPORT_PARSE_YAML). Untagged plain scalars resolve by the YAML 1.2 core
 * schema (null, bool, int in decimal / 0o / 0x, float); `.inf` and `.nan`,
 * and integers outside json_int_t, are REPORT_PARSE_YAML; everything else,
 * and every quoted or block scalar, is a string. Tags !!str !!int !!float
 * !!bool !!null !!map !!seq and the non-specific "!" are honoured, any
 * other tag is refused. Keys must be scalars and become strings (non-string
 * keys as their JSON text: `1` -> "1", `~` -> "null"); DUPLICATE_KEY is
 * reported at the second key and names the first one's line. An alias
 * expands to a deep copy (its values are mapped to the text they were
 * copied from); `<<` is an ordinary key. On failure the map may hold
 * entries for what was read before the error: discard it.
 *
 * On success `*out` holds a new reference the caller owns; otherwise it
 * is NULL. Same input, same value, map and diagnostics.
 */
PMBOT_WARN_UNUSED int pmbot_json_parse(json_t **out, pmbot_srcmap *map, const char *file,
	const char *text, size_t len, int line_base, int col_base,
	const pmbot_limits *lim, pmbot_diag_list *diags);
PMBOT_WARN_UNUSED int pmbot_yaml_parse(json_t **out, pmbot_srcmap *map, const char *file,
	const char *text, size_t len, int line_base, int col_base,
	const pmbot_limits *lim, pmbot_diag_list *diags);

/*
 * A compact read-only JSON document: what pmbot_json_parse() reads, held
 * without a jansson tree, for the big documents pm-bot reads whole and
 * keeps little of (a State file). The same parser reads it, so it accepts
 * and refuses exactly what pmbot_json_parse() does, with the same
 * diagnostics; only the values are held differently.
 *
 * Nodes sit in one array in document order (a container before its
 * members, members in the order of the text; a YAML document is converted
 * from its jansson value by pmbot_jdoc_from_json()),
 * strings and keys in one arena: 32 bytes a value plus the decoded
 * text, two allocations that grow by doubling. Every node keeps its
 * position (file terms, as the source map records it: object members at
 * their key), so no map is built unless a caller asks for one.
 */
typedef struct pmbot_jdoc pmbot_jdoc;

typedef enum {
	PMBOT_JNULL,
	PMBOT_JTRUE,
	PMBOT_JFALSE,
	PMBOT_JINTEGER,
	PMBOT_JREAL,
	PMBOT_JSTRING,
	PMBOT_JARRAY,
	PMBOT_JOBJECT
} pmbot_jtype;

/*
 * One value; owned by its document, valid until pmbot_jdoc_free(). 32
 * bytes: a document's nodes are most of its memory, and every page of them
 * is a page fault. A scalar is one node; an array or object counts its
 * subtree in v.skip, where its value would be.
 */
typedef struct pmbot_jnode {
	const char *key;       /* member of an object: its key (NUL-terminated); else NULL */
	union {
		const char *s; /* PMBOT_JSTRING: NUL-terminated, no NUL inside */
		json_int_t i;  /* PMBOT_JINTEGER */
		double r;      /* PMBOT_JREAL */
		uint32_t skip; /* PMBOT_JARRAY, PMBOT_JOBJECT: nodes in the subtree, itself included */
	} v;
	uint32_t key_len : 29; /* under 256 MiB: the document is */
	uint32_t type : 3;     /* pmbot_jtype */
	uint32_t len;          /* string: bytes; array, object: members */
	int line;
	int column;
} pmbot_jnode;

/*
 * pmbot_json_parse() into a compact document (no source map: the nodes
 * carry positions). Same arguments, limits, checks, return codes and
 * diagnostics. Also PMBOT_ERROR for a `len` over 256 MiB whatever `lim`
 * says (a key's length has 29 bits). On success `*out` is new and the
 * caller frees it; otherwise NULL.
 */
PMBOT_WARN_UNUSED int pmbot_jdoc_parse(pmbot_jdoc **out, const char *file,
	const char *text, size_t len, int line_base, int col_base,
	const pmbot_limits *lim, pmbot_diag_list *diags);

/*
 * The compact document of a parsed jansson value, for a YAML report: the
 * same nodes a JSON text of that value would give (members in the value's
 * order, which pmbot_yaml_parse() keeps from the text), each at the
 * position pmbot_srcmap_find() answers in `map` for the value's pointer
 * (so an object member at its key, an alias's copy at the text it was
 * copied from); `map` NULL gives every node position 0. `value` is only
 * read and `map` not kept. The strings are copied: the document owes
 * nothing to `value` afterwards. PMBOT_OK with `*out` new (the caller
 * frees it with pmbot_jdoc_free()), or PMBOT_ERROR (out of memory, NULL
 * `value`, over 256 MiB of strings or 2^32 values) with `*out` NULL.
 */
PMBOT_WARN_UNUSED int pmbot_jdoc_from_json(pmbot_jdoc **out, const json_t *value,
	const pmbot_srcmap *map);

/* Free `doc` and every node and string of it. NULL is allowed. */
void pmbot_jdoc_free(pmbot_jdoc *doc);

/*
 * The block every string and key of `doc` lives in, handed to the caller
 * (who frees it, after the last use of any string of it, nodes included);
 * pmbot_jdoc_free() then leaves it alone. So a reader can keep strings
 * without copying them. NULL for a document of no bytes.
 */
void *pmbot_jdoc_take_strings(pmbot_jdoc *doc);

/* The root value (borrowed from `doc`). */
const pmbot_jnode *pmbot_jdoc_root(const pmbot_jdoc *doc);

/* First member of an array or object with members (borrowed), else NULL. */
static inline const pmbot_jnode *pmbot_jnode_first(const pmbot_jnode *n)
{
	return n && (n->type == PMBOT_JARRAY || n->type == PMBOT_JOBJECT) && n->len ? n + 1 : NULL;
}

/* The member after `n` in its container; only for a member that is not the last. */
static inline const pmbot_jnode *pmbot_jnode_next(const pmbot_jnode *n)
{
	return n + (n->type == PMBOT_JARRAY || n->type == PMBOT_JOBJECT ? n->v.skip : 1);
}

/* The string of `n` (borrowed), or NULL: not a string, or NULL `n`. */
static inline const char *pmbot_jnode_str(const pmbot_jnode *n)
{
	return n && n->type == PMBOT_JSTRING ? n->v.s : NULL;
}

/* Member `key` of object `obj` (borrowed), or NULL: not an object, no such key, or NULL `obj`. */
const pmbot_jnode *pmbot_jnode_get(const pmbot_jnode *obj, const char *key);

/* Element `index` of array `arr` (borrowed; O(index)), or NULL. */
const pmbot_jnode *pmbot_jnode_at(const pmbot_jnode *arr, size_t index);

/* As pmbot_json_type_name(): "an object", "a string", ..., "null". */
const char *pmbot_jnode_type_name(const pmbot_jnode *n);

/*
 * The value `n` and everything under it as jansson values (a new
 * reference the caller owns; objects keep the document's member order),
 * for the few places that keep a piece of a document. PMBOT_OK or
 * PMBOT_ERROR (out of memory; `*out` NULL).
 */
PMBOT_WARN_UNUSED int pmbot_jnode_to_json(json_t **out, const pmbot_jnode *n);

/*
 * Scalars that repeat across many values kept as jansson (a project
 * field's option, a size, a small number): one jansson value each, shared
 * by reference, so the 10,000 items of a state hold a few hundred strings
 * instead of tens of thousands of allocations. The share holds a
 * reference to each value; pmbot_jshare_free() drops them (values still
 * held elsewhere live on). A shared value must never be changed in place.
 */
#define PMBOT_JSHARE_INTS 1024
#define PMBOT_JSHARE_MAX_LEN 64 /* longer strings are rarely repeated: copied */

typedef struct {
	pmbot_strmap strings;          /* content -> json_t* (a reference held) */
	json_t *ints[PMBOT_JSHARE_INTS]; /* 0 .. PMBOT_JSHARE_INTS - 1, each a reference held */
	json_t *reals[PMBOT_JSHARE_INTS]; /* 0.0, 1.0, ...: whole reals, as ints */
} pmbot_jshare;

#define PMBOT_JSHARE_INIT { PMBOT_STRMAP_INIT, { NULL }, { NULL } }

void pmbot_jshare_free(pmbot_jshare *share);

/*
 * A new reference to a string holding the `len` bytes of `s` (valid UTF-8
 * without NUL, and `s[len]` is NUL), shared through `share` when it is
 * short. NULL when out of memory.
 */
json_t *pmbot_jshare_string(pmbot_jshare *share, const char *s, size_t len);

/*
 * pmbot_jnode_to_json with its short strings and small non-negative
 * whole numbers, integers and reals (in arrays and objects too), from
 * `share`: the containers are new, the scalars may be shared.
 */
PMBOT_WARN_UNUSED int pmbot_jnode_to_json_shared(json_t **out, const pmbot_jnode *n,
	pmbot_jshare *share);

/*
 * The source map pmbot_json_parse() would have filled for the same text
 * (new, caller frees), for diagnostics that look positions up by
 * pointer. PMBOT_OK or PMBOT_ERROR.
 */
PMBOT_WARN_UNUSED int pmbot_jdoc_srcmap(pmbot_srcmap **out, const pmbot_jdoc *doc);

#endif
