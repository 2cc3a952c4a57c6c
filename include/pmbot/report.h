#ifndef PMBOT_REPORT_H
#define PMBOT_REPORT_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/common.h"
#include "pmbot/diag.h"

/*
 * Report ingestion: a Markdown report goes in, the JSON value of its
 * ReportIR block comes out with a source map, so that every later
 * diagnostic can name the line of the Markdown file it is about.
 */

/*
 * Limits on hostile input. pmbot_limits_default() fills the defaults.
 * Depth counts containers: a scalar root is depth 0, `[1]` is 1, `[[1]]`
 * is 2, so max_depth 64 admits 64 nested arrays/objects and refuses the
 * 65th. Alias nodes are the values (containers and scalars, keys not
 * counted) that YAML aliases expand to, summed over the whole document:
 * `*a` where `a: &a [1, 2]` costs 3. max_depth also bounds recursion
 * elsewhere (jansson frees and copies values recursively, and so does
 * pmbot_json_canonical), so keep it in the hundreds at most.
 */
typedef struct {
	size_t max_bytes;       /* Markdown file size (INPUT_TOO_LARGE); 64 MiB */
	size_t max_depth;       /* array/object nesting (INPUT_TOO_DEEP); 64 */
	size_t max_alias_nodes; /* YAML nodes produced by aliases (YAML_ALIAS_LIMIT); 10000 */
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

typedef enum {
	PMBOT_FORMAT_JSON = 0,
	PMBOT_FORMAT_YAML = 1
} pmbot_format;

/*
 * A fenced code block found in the Markdown. Content and info string are
 * what CommonMark makes of them: container prefixes ("> ", list item
 * indentation) and the fence's indentation are stripped from `text`, line
 * ends are "\n" (also for CRLF files), and `info` is trimmed with
 * backslash escapes and entities resolved.
 */
typedef struct {
	char *text;          /* owned: the block's content, NUL-terminated */
	size_t len;          /* bytes of `text` */
	char *info;          /* owned: the info string (see above) */
	int fence_line;      /* 1-based line of the opening fence */
	int content_line;    /* line of the first content line: fence_line + 1 */
	int content_column;  /* 1-based file column of text column 1: the
	                      * column of the fence's first character */
	int canonical;       /* 1: pm-bot:report-ir/v1 (or the legacy alias);
	                      * 0: chosen by the json/yaml fallback */
	pmbot_format format; /* how the block is parsed */
} pmbot_block;

/* A loaded report: its block and the parsed value. */
typedef struct {
	char *file;          /* owned copy of the name given to load; NULL if none */
	pmbot_block block;   /* owned: the chosen block */
	json_t *root;        /* owned reference: the parsed block */
	pmbot_srcmap *map;   /* owned: positions in the Markdown file */
} pmbot_report;

/*
 * Find the ReportIR block of a Markdown document (cmark-gfm) and parse it,
 * following spec 000 (user documentation: docs/report-format.md). In order:
 *
 * - `len` over lim->max_bytes: INPUT_TOO_LARGE. Invalid UTF-8 or a NUL byte
 *   anywhere in the file: INVALID_UTF8 at its line and column.
 * - Fenced blocks (backticks or tildes, any depth of list items and block
 *   quotes; indented code blocks never count) whose trimmed info string is
 *   exactly pm-bot:report-ir/v1 or pm-bot:report_ir/v1 are canonical. One:
 *   parsed as JSON when its first non-whitespace character is '{' or '[',
 *   else as YAML. Two or more: REPORT_AMBIGUOUS_BLOCK at the second one's
 *   fence, the message naming the line of each.
 * - No canonical block: every fenced block whose first info word is json,
 *   yaml or yml (any case) is parsed quietly (JSON for json, else YAML);
 *   candidates are those whose top level is an object with
 *   "schema_version": "report_ir/v1". One: it is the report (canonical 0).
 *   Several: REPORT_AMBIGUOUS_BLOCK naming their lines. None:
 *   REPORT_NO_BLOCK at line 1, the message explaining the canonical info
 *   string and naming near misses (info strings starting "pm-bot:") and
 *   json/yaml blocks that did not parse.
 *
 * Parse errors of the chosen block are the report's (REPORT_PARSE_JSON, …),
 * at lines of the Markdown file. `file` (may be NULL) is copied into the
 * report and every diagnostic; `lim` NULL means pmbot_limits_default();
 * `diags` must not be NULL. `markdown` need not be NUL-terminated (NULL is
 * allowed when `len` is 0).
 *
 * On success `*out` is a new report the caller owns and frees with
 * pmbot_report_free(); otherwise `*out` is NULL. Returns PMBOT_EINVALID
 * (with at least one error diagnostic) when the input is rejected,
 * PMBOT_ERROR on runtime failure (out of memory). Same input, same report
 * and diagnostics.
 */
PMBOT_WARN_UNUSED int pmbot_report_load(pmbot_report **out, const char *file,
	const char *markdown, size_t len, const pmbot_limits *lim,
	pmbot_diag_list *diags);

/* Free `report` and everything it owns. NULL is allowed. */
void pmbot_report_free(pmbot_report *report);

/*
 * Validate a loaded report: the schema layer (shape and types, JSON Schema
 * docs/schemas/report-ir.v1.schema.json) and the rule layer (unique ids,
 * references, parent agreement, triage warnings). Every problem is
 * reported, never only the first. Returns PMBOT_OK when no error was
 * added (warnings allowed), PMBOT_EINVALID when any was, PMBOT_ERROR on
 * runtime failure.
 */
int pmbot_report_validate(const pmbot_report *report, pmbot_diag_list *diags);

/*
 * Is `s` (`len` bytes) a task type: an ASCII lower-case letter, then
 * lower-case letters, digits or '-'? Returns 1 or 0.
 */
int pmbot_report_type_word_ok(const char *s, size_t len);

/* Is `s` a GitHub issue URL (https://github.com/OWNER/REPO/issues/N)? */
int pmbot_report_is_issue_url(const char *s);

#endif
