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

/* Limits on hostile input. pmbot_limits_default() fills the defaults. */
typedef struct {
	size_t max_bytes;       /* Markdown file size (INPUT_TOO_LARGE); 64 MiB */
	size_t max_depth;       /* array/object nesting (INPUT_TOO_DEEP); 64 */
	size_t max_alias_nodes; /* YAML nodes produced by aliases (YAML_ALIAS_LIMIT); 10000 */
} pmbot_limits;

void pmbot_limits_default(pmbot_limits *lim);

/*
 * Source map: JSON Pointer -> 1-based line and column in the source file.
 * Every value of a parsed document has an entry (object members at the
 * position of their key).
 */
typedef struct pmbot_srcmap pmbot_srcmap;

/* A new empty map; the caller owns it. NULL when out of memory. */
pmbot_srcmap *pmbot_srcmap_new(void);
void pmbot_srcmap_free(pmbot_srcmap *map);

/* Record the position of `pointer` (copied). 0 or -1. */
int pmbot_srcmap_add(pmbot_srcmap *map, const char *pointer, int line, int column);

/*
 * Position of `pointer`, or of its nearest ancestor that has one (the root
 * at worst). Returns 1 when found, 0 when the map is empty or NULL.
 */
int pmbot_srcmap_find(const pmbot_srcmap *map, const char *pointer, int *line, int *column);

/*
 * Parse `len` bytes of JSON (RFC 8259; jansson with JSON_REJECT_DUPLICATES)
 * or YAML 1.2 (libyaml, core schema resolution of plain scalars) into `*out`
 * (a new reference the caller owns). Line 1 of `text` is line `line_base` of
 * the source file and its columns are shifted by `col_base`, so diagnostics
 * and the source map (optional: pass NULL) speak of the source file.
 *
 * Rejections: REPORT_PARSE_JSON / REPORT_PARSE_YAML, DUPLICATE_KEY,
 * YAML_ALIAS_LIMIT, INPUT_TOO_LARGE, INPUT_TOO_DEEP, INVALID_UTF8 — each
 * returns PMBOT_EINVALID with diagnostics added; PMBOT_ERROR on runtime
 * failure. `file` (may be NULL) is recorded in the diagnostics.
 */
int pmbot_json_parse(json_t **out, pmbot_srcmap *map, const char *file,
	const char *text, size_t len, int line_base, int col_base,
	const pmbot_limits *lim, pmbot_diag_list *diags);
int pmbot_yaml_parse(json_t **out, pmbot_srcmap *map, const char *file,
	const char *text, size_t len, int line_base, int col_base,
	const pmbot_limits *lim, pmbot_diag_list *diags);

typedef enum {
	PMBOT_FORMAT_JSON = 0,
	PMBOT_FORMAT_YAML = 1
} pmbot_format;

/* A fenced code block found in the Markdown. */
typedef struct {
	char *text;          /* owned: the block's content, NUL-terminated */
	size_t len;
	char *info;          /* owned: the info string as written */
	int fence_line;      /* 1-based line of the opening fence */
	int content_line;    /* line of the first content line */
	int content_column;  /* 1-based column where content starts */
	int canonical;       /* 1: pm-bot:report-ir/v1 (or the legacy alias) */
	pmbot_format format; /* how the block is parsed */
} pmbot_block;

/* A loaded report: its block and the parsed value. */
typedef struct {
	char *file;          /* owned: name used in diagnostics */
	pmbot_block block;
	json_t *root;        /* owned reference: the parsed block */
	pmbot_srcmap *map;   /* owned */
} pmbot_report;

/*
 * Find the ReportIR block of a Markdown document (cmark-gfm) and parse it,
 * following spec 000: exactly one canonical block (parsed as JSON when its
 * first non-space character is '{' or '[', else YAML); none: exactly one
 * fenced json/yaml block whose top level has schema_version report_ir/v1;
 * REPORT_NO_BLOCK and REPORT_AMBIGUOUS_BLOCK otherwise.
 *
 * On success `*out` is a new report the caller frees with
 * pmbot_report_free(). Returns PMBOT_EINVALID (with diagnostics) when the
 * input is rejected, PMBOT_ERROR on runtime failure.
 */
int pmbot_report_load(pmbot_report **out, const char *file,
	const char *markdown, size_t len, const pmbot_limits *lim,
	pmbot_diag_list *diags);

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

/* Is `s` a GitHub issue URL (https://github.com/OWNER/REPO/issues/N)? */
int pmbot_report_is_issue_url(const char *s);

#endif
