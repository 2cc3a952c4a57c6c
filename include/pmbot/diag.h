#ifndef PMBOT_DIAG_H
#define PMBOT_DIAG_H

#include <stddef.h>

#include "pmbot/buf.h"

/*
 * Diagnostics: what library code says about bad input instead of printing.
 * `code` is a stable upper-case identifier (docs/diagnostics.md lists them);
 * `path` is a JSON Pointer (RFC 6901) into the document ("" is the root);
 * `line` and `column` are 1-based positions in the source file the user
 * edits (the Markdown report, not the embedded block), 0 when unknown.
 */
typedef enum {
	PMBOT_SEV_ERROR = 0,
	PMBOT_SEV_WARNING = 1
} pmbot_severity;

typedef struct {
	const char *code;     /* static string, not owned */
	pmbot_severity severity;
	char *file;           /* owned by the list; may be NULL */
	char *path;           /* owned by the list; never NULL */
	int line;
	int column;
	char *message;        /* owned by the list; never NULL */
} pmbot_diag;

typedef struct {
	pmbot_diag *items;
	size_t count;
	size_t alloc;
	size_t errors;
	size_t warnings;
} pmbot_diag_list;

#define PMBOT_DIAG_LIST_INIT { NULL, 0, 0, 0, 0 }

/* Release every diagnostic held by `list`; the list is reusable afterwards. */
void pmbot_diag_list_free(pmbot_diag_list *list);

/*
 * Append a diagnostic. `code` must be a string with static lifetime; `file`,
 * `path` and the formatted message are copied. Returns 0, or -1 when out of
 * memory (the diagnostic is then dropped, the list stays valid).
 */
int pmbot_diag_add(pmbot_diag_list *list, pmbot_severity sev, const char *code,
	const char *file, const char *path, int line, int column,
	const char *fmt, ...) __attribute__((format(printf, 8, 9)));

/* Move every diagnostic of `src` to the end of `dst`; `src` ends empty. */
int pmbot_diag_list_move(pmbot_diag_list *dst, pmbot_diag_list *src);

/* Set `file` on every diagnostic that has none (copied). */
int pmbot_diag_list_set_file(pmbot_diag_list *list, const char *file);

/* Stable sort by file, line, column, severity, code, path. */
void pmbot_diag_list_sort(pmbot_diag_list *list);

/* Does the list hold a diagnostic with this code? (Tests use it.) */
const pmbot_diag *pmbot_diag_list_find(const pmbot_diag_list *list,
	const char *code);

/*
 * User text for a diagnostic message: control characters, DEL and '`' are
 * written as \xNN and the text is cut after `max_chars` characters with
 * "...", so a hostile value can neither forge extra diagnostic lines nor
 * flood the output. Writes into `scratch` (cleared first) and returns its
 * buffer (borrowed), or "?" when out of memory.
 */
const char *pmbot_diag_show(pmbot_buf *scratch, const char *s, size_t max_chars);

/* "error" or "warning". */
const char *pmbot_severity_name(pmbot_severity sev);

/*
 * Append "file:line:column: error CODE path: message\n" to `out`. An
 * unknown file, line or column is left out; the empty (root) pointer is
 * written "(root)".
 */
int pmbot_diag_format(pmbot_buf *out, const pmbot_diag *d);

#endif
