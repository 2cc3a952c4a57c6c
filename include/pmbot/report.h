#ifndef PMBOT_REPORT_H
#define PMBOT_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/doc.h"
#include "pmbot/strmap.h"

/*
 * Report ingestion: a Markdown report goes in, the JSON value of its
 * ReportIR block comes out with a source map, so that every later
 * diagnostic can name the line of the Markdown file it is about.
 */

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
	char *text;          /* owned: the block's content, NUL-terminated; in
	                      * a report, NULL unless pmbot_report_load() */
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

struct pmbot_report_pos;

/*
 * A loaded report: its block and the parsed value as a compact document
 * (`doc`: validation, the WorkGraph and plan read it; no jansson tree is
 * kept, the nodes a reader keeps are converted one by one).
 * Positions are read through pmbot_report_find(): a JSON block's document
 * carries them (no map built unless many lookups ask for one), a YAML
 * block keeps its source map, and its document's node positions are the
 * map's.
 */
typedef struct {
	char *file;          /* owned copy of the name given to load; NULL if none */
	pmbot_block block;   /* owned: the chosen block */
	pmbot_jdoc *doc;     /* owned: the block as a compact document (JSON and YAML);
	                      * a YAML block's is converted from its parsed tree */
	pmbot_srcmap *map;   /* owned: a YAML block's positions; NULL for JSON */
	struct pmbot_report_pos *pos; /* owned: lookups so far (see pmbot_report_find) */
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

/*
 * pmbot_report_load for a reader of the values only: the report keeps no
 * text (`block.text` NULL, `block.len` 0). A block longer than the pieces
 * the Markdown is read in (128 KB) that stands in `markdown` as it is
 * (fence at column 1, "\n" line ends) is parsed where it lies, never
 * copied: for a 3 MB report that is 3 MB of pages not written.
 */
PMBOT_WARN_UNUSED int pmbot_report_load_values(pmbot_report **out, const char *file,
	const char *markdown, size_t len, const pmbot_limits *lim,
	pmbot_diag_list *diags);

/*
 * pmbot_report_load_values of the text in `markdown`, which it takes: the
 * buffer is freed as soon as no block needs it (after extraction, or after
 * the parse of a block read where it lies), before anything else is built
 * from them. `markdown` is left empty (and reusable) whatever the outcome.
 */
PMBOT_WARN_UNUSED int pmbot_report_load_buf(pmbot_report **out, const char *file,
	pmbot_buf *markdown, const pmbot_limits *lim, pmbot_diag_list *diags);

/* Free `report` and everything it owns. NULL is allowed. */
void pmbot_report_free(pmbot_report *report);

/*
 * Position in the Markdown file of the value at JSON Pointer `pointer`, or
 * of its nearest ancestor, exactly as pmbot_srcmap_find() answers on the
 * map pmbot_json_parse() / pmbot_yaml_parse() fills. A JSON block walks its
 * document; after a few dozen walks it builds that map once (kept by the
 * report, hence the lookups are not thread-safe), so a report full of
 * diagnostics costs O(values), not O(values x diagnostics). `line` and
 * `column` may be NULL and are 0 when nothing matches. Returns 1 when
 * found, 0 when not, PMBOT_ERROR when out of memory (position 0).
 */
int pmbot_report_find(const pmbot_report *report, const char *pointer,
	int *line, int *column);

/*
 * Validate a loaded report: the schema layer (shape and types, JSON Schema
 * docs/schemas/report-ir.v1.schema.json) and the rule layer (unique ids,
 * references, parent agreement, triage warnings). Every problem is
 * reported, never only the first. Only report->doc is read, so a JSON and a YAML block of the same value give the same diagnostics
 * in the same order; a report without a document is PMBOT_ERROR. Returns PMBOT_OK when no error was
 * added (warnings allowed), PMBOT_EINVALID when any was, PMBOT_ERROR on
 * runtime failure.
 */
int pmbot_report_validate(const pmbot_report *report, pmbot_diag_list *diags);

/* What a reference from one item to another says. */
typedef enum {
	PMBOT_LINK_PARENT,      /* `from` is the parent of `to` */
	PMBOT_LINK_DEPENDS_ON,  /* `from` depends on `to` */
	PMBOT_LINK_BLOCKED_BY   /* `from` is blocked by `to` */
} pmbot_link_kind;

/* A reference between two items of a report, by their places (below). */
typedef struct {
	uint32_t from, to;
	uint32_t kind;          /* a pmbot_link_kind */
} pmbot_report_link;

/*
 * What validation resolved, for a caller that adds the items in their
 * places (the WorkGraph of a check) and need not look an id up again.
 * Places count the epics, then the features, then the tasks, in document
 * order, from 0.
 */
typedef struct {
	pmbot_strmap ids;           /* stable_id -> place + 1 (a uintptr_t); the keys
	                               are report->doc's strings, borrowed */
	pmbot_report_link *links;   /* owned: every reference naming an item of the
	                               report (epic_id, feature_id, a features or
	                               tasks entry, depends_on, blocked_by), as
	                               often as it is written */
	size_t n_links, alloc_links;
} pmbot_report_index;

#define PMBOT_REPORT_INDEX_INIT { PMBOT_STRMAP_INIT, NULL, 0, 0 }

/* Free what `ix` holds (not the document its keys are in); reusable after. */
void pmbot_report_index_free(pmbot_report_index *ix);

/*
 * pmbot_report_validate that, when it returns PMBOT_OK, also hands over
 * what it resolved: into `*ix` (empty, PMBOT_REPORT_INDEX_INIT, the
 * caller's to free; left empty on any other return). It must not outlive
 * report->doc.
 */
int pmbot_report_validate_index(pmbot_report_index *ix, const pmbot_report *report,
	pmbot_diag_list *diags);

/*
 * Is `s` (`len` bytes) a task type: an ASCII lower-case letter, then
 * lower-case letters, digits or '-'? Returns 1 or 0.
 */
int pmbot_report_type_word_ok(const char *s, size_t len);

/* Is `s` a GitHub issue URL (https://github.com/OWNER/REPO/issues/N)? */
int pmbot_report_is_issue_url(const char *s);

/*
 * The diagnostics of `diags` with severity `sev`, in list order, as a new
 * array (`*out`, the caller's) of {"code", "path", "line", "column",
 * "message"}. 0, or PMBOT_ERROR (`*out` NULL) when out of memory or a
 * diagnostic lacks a string.
 */
int pmbot_diag_list_to_json(json_t **out, const pmbot_diag_list *diags, pmbot_severity sev);

/*
 * One file's outcome as `validate --json` prints it: `*out` is a new object
 * (the caller's), {"file", "valid": no errors, "errors": [...],
 * "warnings": [...]} and "blob" when `blob` is not NULL (a report read from
 * git). Sorts `diags` first (pmbot_diag_list_sort()). 0, or PMBOT_ERROR
 * (`*out` NULL).
 */
int pmbot_report_result(json_t **out, const char *file, const char *blob,
	pmbot_diag_list *diags);

#endif
