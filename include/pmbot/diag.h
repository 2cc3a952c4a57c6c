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
 * Log-safe text: the one escaper of outside text (report values, file
 * names, ids, titles, logins, comment words, model output) printed to a log
 * or a terminal. Appends `len` bytes of `s` to `out` so that
 *  - control characters (newline, CR, ESC, DEL...) are written \xNN, so a
 *    value can neither end a line nor start one: no output line can begin
 *    with the `::` of a GitHub Actions workflow command;
 *  - a value that itself begins with "::" has its first ':' written \x3a
 *    (it may be printed at the start of a line);
 *  - C1 controls, bidirectional overrides, U+2028/U+2029 and U+FEFF are
 *    written \uNNNN, bytes that are not UTF-8 (and NUL) \xNN;
 *  - after `max_chars` characters the rest is cut as "...[N more bytes]".
 * A backslash is left as is: the output is for people, not to be decoded.
 * Returns 0, or -1 when `out` is full or out of memory.
 */
int pmbot_log_escape(pmbot_buf *out, const char *s, size_t len, size_t max_chars);

/* Caps for the parts of a printed line. */
#define PMBOT_LOG_NAME_MAX 300      /* a file name, a JSON pointer, an id, a login */
#define PMBOT_LOG_MESSAGE_MAX 2000  /* a diagnostic message or a model's summary */

/*
 * pmbot_log_escape() of the C string `s` (NULL shows "(null)") into
 * `scratch`, cleared first. Returns its buffer (borrowed, valid until
 * `scratch` changes), or "?" when out of memory.
 */
const char *pmbot_log_show(pmbot_buf *scratch, const char *s, size_t max_chars);

/*
 * User text inside a diagnostic message: escaped as pmbot_log_escape()
 * does, and '`' too, cut after `max_chars` characters with a bare "...".
 * Writes into `scratch` (cleared first) and returns its buffer (borrowed),
 * or "?" when out of memory.
 */
const char *pmbot_diag_show(pmbot_buf *scratch, const char *s, size_t max_chars);

/* "error" or "warning". */
const char *pmbot_severity_name(pmbot_severity sev);

/*
 * Append "file:line:column: error CODE path: message\n" to `out`. An
 * unknown file, line or column is left out; the empty (root) pointer is
 * written "(root)". The file, the pointer and the message are written
 * log-safe (pmbot_log_escape(), capped at PMBOT_LOG_NAME_MAX and
 * PMBOT_LOG_MESSAGE_MAX): the result is exactly one line whatever they hold.
 */
int pmbot_diag_format(pmbot_buf *out, const pmbot_diag *d);

/* Cap on an annotation's title (the diagnostic's code). */
#define PMBOT_ANNOTATION_TITLE_MAX 120

/*
 * Append `d` as one GitHub Actions workflow command to `out` (which owns
 * it), for the job log of `pm-bot action`, where it becomes an annotation
 * on the report's line:
 *
 *   ::error file=F,line=L,col=C,title=CODE::POINTER: MESSAGE\n
 *
 * ("::warning" for a warning; file, line and col only when known, line and
 * col only with a file; the pointer only when not the root). `file` should
 * be the repository-relative path of the report. Every value is first made
 * log-safe as pmbot_log_escape() does (control characters other than line
 * breaks and invisible code points written \xNN / \uNNNN, capped: file
 * and pointer at PMBOT_LOG_NAME_MAX, the code at PMBOT_ANNOTATION_TITLE_MAX,
 * the message at PMBOT_LOG_MESSAGE_MAX), then encoded as the runner
 * decodes: '%' as %25, CR as %0D, LF as %0A, and in properties also ':' as
 * %3A and ',' as %2C. So the result is exactly one line, whose only "::"
 * are the command's own. 0, or -1 when out of memory or past `out`'s cap
 * (`out` is then left as it was).
 */
int pmbot_diag_annotation(pmbot_buf *out, const pmbot_diag *d);

#endif
