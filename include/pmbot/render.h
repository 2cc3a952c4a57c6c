#ifndef PMBOT_RENDER_H
#define PMBOT_RENDER_H

#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/diag.h"
#include "pmbot/hash.h"
#include "pmbot/labels.h"
#include "pmbot/strmap.h"
#include "pmbot/text.h"
#include "pmbot/workgraph.h"

/*
 * Issue rendering: WorkGraph nodes become GitHub issues (title, body,
 * labels) that the repository's issue forms and the Projects field-sync
 * workflow understand, and issue bodies are parsed back into heading values
 * and pm-bot's identity marker. Pure: no git, no network, no I/O; the same
 * input always gives the same bytes. docs/issue-format.md describes the
 * format for users.
 *
 * Diagnostic codes: FORM_* (issue forms), RENDER_* (rendering), BODY_*
 * (parsing bodies back). Rendering diagnostics carry the node's
 * source_path and line (the report item) and no file: the caller sets it
 * with pmbot_diag_list_set_file().
 */

/* GitHub's own limits, in characters (Unicode code points). */
/* PMBOT_ISSUE_TITLE_MAX and PMBOT_LABEL_MAX are in text.h, for `validate` too. */
#define PMBOT_ISSUE_BODY_MAX 65536

/* What GitHub writes under a form heading the author left empty. */
#define PMBOT_NO_RESPONSE "_No response_"

/* ------------------------------------------------------------------ */
/* Issue forms (src/render/forms.c)                                    */
/* ------------------------------------------------------------------ */

/*
 * Which node field a form heading shows. Headings are matched
 * case-insensitively with whitespace runs collapsed; the table is in
 * docs/issue-format.md. AREA..ACTUAL are the tracked single-line fields
 * the Projects field sync reads.
 */
typedef enum {
	PMBOT_FIELD_OTHER = 0,  /* no node field: always _No response_ */
	PMBOT_FIELD_AREA,
	PMBOT_FIELD_PRIORITY,
	PMBOT_FIELD_SIZE,
	PMBOT_FIELD_ESTIMATE,   /* "Estimate (hrs)" */
	PMBOT_FIELD_RISK,
	PMBOT_FIELD_BLOCKED_BY, /* depends_on + blocked_by targets */
	PMBOT_FIELD_ACTUAL,     /* "Actual (hrs)": never in a plan, empty */
	PMBOT_FIELD_STATUS,
	PMBOT_FIELD_GOAL,
	PMBOT_FIELD_OBJECTIVE,
	PMBOT_FIELD_ACCEPTANCE, /* "- [ ] " list */
	PMBOT_FIELD_MILESTONES, /* "- " list */
	PMBOT_FIELD_LINKS       /* "- " list */
} pmbot_field_kind;

/* One heading of a form: a non-markdown body block. */
typedef struct {
	char *label;            /* owned: heading text, trimmed, never NULL */
	char *id;               /* owned: the block's id, NULL when absent */
	pmbot_field_kind kind;  /* pmbot_form_heading_kind(label) */
	int required;           /* validations.required was true */
	int line;               /* line of the block in the form file, 0 if unknown */
} pmbot_form_field;

/*
 * A parsed issue form. Everything is owned by the form and released by
 * pmbot_form_free().
 */
typedef struct {
	char *path;             /* owned: file path, "(built-in)" for built-ins */
	char *name;             /* owned: the form's name */
	/*
	 * Owned: what goes before the item title. The form's `title` with a
	 * trailing "<placeholder>" removed and one space appended when it is
	 * not empty and does not end in a space ("[feat] <summary>" ->
	 * "[feat] "); "" when the form has no title.
	 */
	char *title_prefix;
	char **labels;          /* owned: default labels, in form order */
	size_t n_labels, alloc_labels;
	pmbot_form_field *fields; /* owned: headings, in form order */
	size_t n_fields, alloc_fields;
	int has_type;           /* 0: the form maps to no work-item type */
	pmbot_node_type type;   /* valid when has_type; PMBOT_NODE_OTHER for an open type */
	const char *type_name;  /* borrowed from the form: its type's name, when has_type */
	const char *type_label; /* borrowed from labels: the label that named the type, or NULL */
	int builtin;            /* 1 for pm-bot's built-in forms */
} pmbot_form;

/*
 * Is `path` an issue form file: its last component ends in ".yml" or
 * ".yaml" and is not "config.yml"/"config.yaml" (the template chooser's
 * configuration)? Returns 1 or 0.
 */
int pmbot_form_is_form_path(const char *path);

/*
 * Parse the bytes of an issue form (.github/ISSUE_TEMPLATE/<name>.yml).
 * The type comes from a label "<scheme type prefix><type>" (for example
 * "type:feature"), else from a top-level `type` key, else from the form's
 * name ("Feature", "Bug report" -> feature, bug); when none names a type,
 * `has_type` is 0 (not an error). `scheme` may be NULL (the default).
 *
 * Rejections, each an error with file `path` and the line: FORM_YAML
 * (the YAML does not parse; the message names the parser's code),
 * FORM_NOT_MAPPING, FORM_MISSING_NAME, FORM_BAD_FIELD (a key of the wrong
 * type), FORM_MISSING_BODY, FORM_BAD_BLOCK (a body entry that is not a
 * mapping or has an unknown `type`), FORM_MISSING_LABEL, FORM_UNSAFE_LABEL
 * (a heading with a line break or an HTML comment delimiter),
 * FORM_DUPLICATE_LABEL, FORM_DUPLICATE_ID, FORM_NO_FIELDS (only markdown
 * blocks), FORM_AMBIGUOUS_TYPE (labels name two types).
 *
 * On success `*out` is a new form the caller frees with pmbot_form_free().
 * Returns PMBOT_EINVALID (nothing stored) when rejected, PMBOT_ERROR when
 * out of memory.
 */
PMBOT_WARN_UNUSED int pmbot_form_parse(pmbot_form **out, const char *path, const char *text,
	size_t len, const pmbot_label_scheme *scheme, pmbot_diag_list *diags);

/*
 * pm-bot's built-in form for `type` (docs/issue-format.md lists them):
 * the descriptive headings, then Area, Priority, Size, Estimate (hrs),
 * Risk, Blocked by, Actual (hrs); title prefixes "[epic] ", "[feat] ",
 * "[task] ", "[bug] ", "[spike] ", "[test] ", "[chore] ", "[bench] ".
 * `*out` is new and the caller frees it. 0, PMBOT_EINVALID for an unknown
 * type, PMBOT_ERROR when out of memory.
 */
int pmbot_form_builtin(pmbot_form **out, pmbot_node_type type);
/*
 * The built-in form for an open task type `type` (a lower-case word): the
 * task built-in's headings, name `type`, title prefix "[<type>] ". `*out`
 * is new and the caller frees it. 0, PMBOT_EINVALID when `type` is not a
 * lower-case word, PMBOT_ERROR when out of memory.
 */
int pmbot_form_builtin_open(pmbot_form **out, const char *type);

/* Release a form and everything it owns. NULL is allowed. */
void pmbot_form_free(pmbot_form *form);

/* The node field a heading maps to (PMBOT_FIELD_OTHER when none). */
pmbot_field_kind pmbot_form_heading_kind(const char *heading);

/*
 * A form set: the repository's forms by work-item type, with the built-in
 * form for every type the repository has no form for.
 */
typedef struct pmbot_formset pmbot_formset;

/*
 * A new set holding only the built-in forms; the caller frees it with
 * pmbot_formset_free(). `scheme` (may be NULL) is copied. 0 or PMBOT_ERROR.
 */
PMBOT_WARN_UNUSED int pmbot_formset_new(pmbot_formset **out, const pmbot_label_scheme *scheme);

/*
 * Add the form at `path` (`len` bytes; the caller read them from git).
 * Paths that are not forms (pmbot_form_is_form_path) are skipped. A form
 * without a type is skipped with a FORM_UNKNOWN_TYPE warning. When two
 * forms have the same type the one whose path sorts first (byte order)
 * wins, whatever the order of the calls, with a FORM_DUPLICATE_TYPE
 * warning. Returns PMBOT_OK (added or skipped), PMBOT_EINVALID when
 * pmbot_form_parse() rejected the form (the set is unchanged), or
 * PMBOT_ERROR.
 */
int pmbot_formset_add(pmbot_formset *set, const char *path, const char *text,
	size_t len, pmbot_diag_list *diags);

/*
 * The form for the type named `type` (borrowed from the set; valid until
 * it is freed): the repository's when it has one, else the built-in of a
 * known type. NULL for an open type the repository has no form for (the
 * caller renders it with pmbot_form_builtin_open() and warns) and for a
 * name that is not a type.
 */
const pmbot_form *pmbot_formset_find_type(const pmbot_formset *set, const char *type);

/* pmbot_formset_find_type() for a known type; NULL for PMBOT_NODE_OTHER. */
const pmbot_form *pmbot_formset_find(const pmbot_formset *set, pmbot_node_type type);

/* How many repository forms (not built-ins) the set holds. */
size_t pmbot_formset_count(const pmbot_formset *set);

/* Release the set and its forms. NULL is allowed. */
void pmbot_formset_free(pmbot_formset *set);

/* ------------------------------------------------------------------ */
/* Rendering (src/render/issue.c)                                      */
/* ------------------------------------------------------------------ */

typedef struct {
	/* Label prefixes; NULL: PMBOT_LABEL_SCHEME_DEFAULT. Borrowed. */
	const pmbot_label_scheme *scheme;
	/*
	 * Optional, borrowed: stable_id -> const char * (an issue URL or
	 * "#123") for dependency targets that already have an issue; the
	 * reference replaces the stable id under "Blocked by".
	 */
	const pmbot_strmap *issue_refs;
} pmbot_render_opts;

/* A rendered issue; every member is owned (pmbot_rendered_issue_free). */
typedef struct {
	char *title;
	char *body;
	size_t body_len;
	/*
	 * Sorted by bytes, no duplicates; one block: the pointers, then the
	 * bytes they point into (one free, no label freed alone).
	 */
	char **labels;
	size_t n_labels;
	char rev[PMBOT_SHA256_HEX_SIZE]; /* the marker's rev */
} pmbot_rendered_issue;

/*
 * Render `node`, a node of `g`, with `form` (usually
 * pmbot_formset_find(set, node->type); opts may be NULL). `g` must have
 * gone through pmbot_workgraph_finish(): the node's depends_on and
 * blocked_by edges are looked up in its sorted edge list.
 *
 * Title: form->title_prefix + the neutralised title
 * (pmbot_render_neutralise_title, then pmbot_text_neutralise with code
 * spans kept: report text never mentions or links, pmbot/text.h).
 * Body: the marker "<!-- pm-bot:id=<stable_id> rev=<hex> -->", a blank
 * line ("\n\n"), then for each form heading in order
 * "### <label>\n<value>", fields separated by one blank line, no trailing
 * newline; a form without fields gives the marker alone. rev =
 * pmbot_body_rev() of the fields, the same with the marker first or last.
 * The marker stands first so that parsers reading a section up to the next
 * heading never read it into the last field (docs/issue-format.md).
 * Values: single-line fields through
 * pmbot_render_neutralise_line(), goal/objective through
 * pmbot_render_neutralise_block(), lists one "- " (acceptance criteria:
 * "- [ ] ") item per line; "_No response_" when there is nothing. Every
 * value and list item then goes through pmbot_text_neutralise() (code
 * spans kept); "Blocked by" entries the report wrote go through it each
 * (no code spans), those from opts->issue_refs (pm-bot's own resolved
 * references) are written as they are and link. The marker is untouched.
 * `form` NULL means an open type the repository has no form for: the
 * item renders with pmbot_form_builtin_open() and a RENDER_NO_FORM warning.
 * Labels: <type prefix><type> (the form's own type label instead when it
 * has one, e.g. "type:bench" for a benchmark), and <prefix><value> for area, priority,
 * size and status when present (value through
 * pmbot_render_neutralise_title), the form's default labels (minus those
 * with a scheme prefix the node has a value for), "needs-human" when
 * needs_human is true; sorted, de-duplicated.
 *
 * Errors (all reported, never cut): RENDER_TITLE_TOO_LONG (over 256
 * characters), RENDER_TITLE_EMPTY, RENDER_BODY_TOO_LONG (over 65,536),
 * RENDER_LABEL_TOO_LONG (over 50), RENDER_UNSAFE_ID (a stable id with
 * whitespace, a control character or an HTML comment delimiter).
 *
 * On success `*out` is filled and the caller releases it with
 * pmbot_rendered_issue_free(); on failure it is left empty (freeing it is
 * harmless). Returns 0, PMBOT_EINVALID or PMBOT_ERROR.
 */
int pmbot_render_issue(pmbot_rendered_issue *out, const pmbot_workgraph *g,
	const pmbot_wg_node *node, const pmbot_form *form,
	const pmbot_render_opts *opts, pmbot_diag_list *diags);

/* Release the members of `issue` and leave it empty. */
void pmbot_rendered_issue_free(pmbot_rendered_issue *issue);

/*
 * A rendered issue as `render --json` prints it: `*out` is a new object
 * (the caller's), {"stable_id", "title", "labels", "body"}; `stable_id` and
 * `is` are borrowed. 0, or PMBOT_ERROR (`*out` NULL) when out of memory or
 * a string is not UTF-8.
 */
int pmbot_rendered_issue_to_json(json_t **out, const char *stable_id,
	const pmbot_rendered_issue *is);

/*
 * Set `*rest` (borrowed from `title`) to the title without the form's
 * prefix. Returns 0 when the title starts with the prefix,
 * PMBOT_ENOTFOUND (and `*rest` = title) when it does not.
 */
int pmbot_render_title_strip(const char **rest, const char *title,
	const pmbot_form *form);

/* ------------------------------------------------------------------ */
/* Neutralisation and parsing bodies back (src/render/body.c)          */
/* ------------------------------------------------------------------ */

/*
 * Neutralisation: the exact transformations that keep a value from
 * breaking the body format. Each appends to `out` and returns 0 or a
 * pmbot_buf error; each is idempotent. `s` is `len` bytes of UTF-8 (NUL
 * bytes allowed and treated as control characters).
 *
 * _title: control characters (CR and LF included) and U+0085, U+2028,
 *   U+2029 become spaces, runs of spaces become one, leading and trailing
 *   spaces go.
 * _line (single-line fields): as _title; then a value that is exactly
 *   "_No response_" becomes empty; "<!--" becomes "&lt;!--", then "-->"
 *   becomes "--&gt;" and "--!>" becomes "--!&gt;"; a value that would
 *   open a block at the start of its line is escaped: a leading ATX
 *   heading ("#".."######" then a space or the end) or code fence ("```",
 *   "~~~") gets a backslash before it, and a leading "<?", "<!", "<pre",
 *   "<script", "<style" or "<textarea" (HTML blocks that a blank line does
 *   not end) gets its "<" written "&lt;". The field-sync value read back
 *   by pmbot_body_parse() is exactly this string.
 * _block (multi-line fields): CRLF, CR, U+0085, U+2028 and U+2029 become
 *   LF; other control characters except tab become spaces; trailing
 *   whitespace of each line and leading and trailing blank lines go, runs
 *   of blank lines become one; the comment delimiters and the line-start
 *   escapes above apply to every line after its indentation (so no value
 *   holds a code fence that could swallow the headings after it); a first
 *   line that is "_No response_" once trimmed is written
 *   "\_No response\_".
 */
int pmbot_render_neutralise_title(pmbot_buf *out, const char *s, size_t len);
int pmbot_render_neutralise_line(pmbot_buf *out, const char *s, size_t len);
int pmbot_render_neutralise_block(pmbot_buf *out, const char *s, size_t len);

/*
 * Internal to src/render/, declared for its tests. `pmbot_render__fast`
 * (1) lets rendering take its shortcuts for text with nothing to change;
 * a test sets it to 0 for the general path and compares the bytes.
 * pmbot_render__line_is_safe(): 1 when the `len` bytes at `s` are their
 * own pmbot_render_neutralise_line() (flat printable ASCII, no "--", no
 * line-start escape, not "_No response_"), else 0.
 */
extern int pmbot_render__fast;
int pmbot_render__line_is_safe(const char *s, size_t len);

/* One "### Heading" of a parsed body. */
typedef struct {
	char *heading;          /* owned by the body: as written, trimmed */
	/*
	 * Owned: first non-empty line, trimmed, without the U+200C that
	 * rendering puts in against mentions (pmbot_text_unneutralise); ""
	 * when empty (then possibly one string shared by every body, which
	 * pmbot_body_free() knows: never written to, never freed elsewhere).
	 */
	char *value;
	int line;               /* 1-based line of the heading */
} pmbot_body_field;

typedef enum {
	PMBOT_MARKER_NONE = 0,  /* no marker line */
	PMBOT_MARKER_OK,        /* exactly one well-formed marker */
	PMBOT_MARKER_MALFORMED, /* exactly one marker line, not well-formed */
	PMBOT_MARKER_MULTIPLE   /* two or more marker lines */
} pmbot_marker_status;

/* A parsed issue body; release with pmbot_body_free(). */
typedef struct {
	pmbot_body_field *fields; /* owned: every "### " heading, in body order */
	size_t n_fields;
	pmbot_marker_status marker;
	char *stable_id;        /* owned: the marker's id when marker is OK, else NULL */
	char rev[PMBOT_SHA256_HEX_SIZE]; /* the marker's rev when OK, else "" */
	int marker_line;        /* line of the (first) marker line, 0 when none */
	/*
	 * Owned: one block holding every heading of `fields` (then they are
	 * not allocations of their own), or NULL. Only pmbot_body_free()
	 * reads it.
	 */
	char *heading_block;
} pmbot_body;

/*
 * Parse an issue body the way the Projects field sync reads it. The marker
 * is read wherever it stands (first as pm-bot writes it, last as earlier
 * versions did); a marker line ends the section it is in and is never part
 * of a value. Lines end
 * in LF, CRLF or CR. A heading is a line that is "###" then whitespace
 * and text, with any whitespace around it; its value is the first
 * non-empty line after it, trimmed of spaces and tabs, unless an ATX
 * heading of any level or a marker line comes first; "_No response_" is
 * the empty value. A marker line is a line whose trimmed text starts with
 * "<!--", optional whitespace, "pm-bot:"; it is well-formed when it is
 * exactly "<!--" [ws] "pm-bot:id=" ID ws "rev=" 64 lower-case hex [ws]
 * "-->" with ID free of whitespace, control characters and comment
 * delimiters.
 *
 * Marker problems are also added to `diags` (may be NULL) as warnings
 * BODY_MARKER_MALFORMED / BODY_MARKER_MULTIPLE with their line.
 * On success `*out` is filled (the caller releases it with
 * pmbot_body_free()); 0 or PMBOT_ERROR (out of memory; `*out` empty).
 */
PMBOT_WARN_UNUSED int pmbot_body_parse(pmbot_body *out, const char *body, size_t len,
	pmbot_diag_list *diags);

/*
 * pmbot_body_parse(), reading only the values under headings equal to
 * `heading` (by pmbot_body_heading_eq()); every other field is listed with
 * the value "". The marker, the fields' headings and lines, and
 * pmbot_body_get(out, heading) are what pmbot_body_parse() gives. For a
 * caller that needs one field of many bodies. Same ownership and returns.
 */
PMBOT_WARN_UNUSED int pmbot_body_parse_only(pmbot_body *out, const char *body, size_t len,
	pmbot_diag_list *diags, const char *heading);

/* Release the members of `body` and leave it empty. */
void pmbot_body_free(pmbot_body *body);

/*
 * The value (borrowed from `body`) under the first heading equal to
 * `heading` ignoring ASCII case, surrounding whitespace and the width of
 * whitespace runs; "Size (Epic)" is read as "Size". NULL when no such
 * heading exists ("" when it exists and is empty).
 */
const char *pmbot_body_get(const pmbot_body *body, const char *heading);

/* Do two headings name the same field by the rule of pmbot_body_get()? 1 or 0. */
int pmbot_body_heading_eq(const char *a, const char *b);

/*
 * The rev of a body: the hex SHA-256 of the body with every marker line
 * (and its line ending) removed, line endings turned into LF, the blank
 * lines (empty or spaces and tabs only) between a marker line that comes
 * first and the first other line removed, and trailing whitespace at the
 * end removed. So a body pm-bot wrote hashes to its marker's rev until
 * somebody edits more than line endings, and a body with the marker first
 * hashes as the same body with it last; blank lines opening a body without
 * a marker before them count, so revs written before the move stay. 0 or
 * PMBOT_ERROR.
 */
int pmbot_body_rev(char out[PMBOT_SHA256_HEX_SIZE], const char *body, size_t len);

/*
 * Parse an hours value ("Estimate (hrs)", "Actual (hrs)"): optional "~",
 * an optional sign, a decimal number (fraction and exponent allowed), an
 * optional unit h, hr, hrs, hour or hours (any case, spaces allowed
 * before it), surrounding whitespace ignored: "4", "4.5", "~4", "4 hrs",
 * "4h". Returns 0 and sets `*out`, or PMBOT_EINVALID (`*out` untouched).
 */
int pmbot_body_parse_hours(double *out, const char *value);

#endif
