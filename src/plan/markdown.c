#include "pmbot/plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/common.h"
#include "pmbot/json.h"
#include "pmbot/operation.h"
#include "pmbot/strmap.h"
#include "pmbot/text.h"
#include "pmbot/banned.h"

/*
 * The plan as GitHub-flavoured Markdown. Every part is rendered on its own
 * (head, one section per item, one entry per conflict, orphan and
 * diagnostic, foot) so that a cut only ever drops whole parts: nothing is
 * split inside a UTF-8 sequence, a fence or a <details> element.
 */

#define MD_DEFAULT_MAX ((size_t)65536)
#define MD_DIFF_CONTEXT 3

/* U+FFFD for NUL, as CommonMark does; U+240D to make a CR in a diff visible. */
#define MD_REPLACEMENT "\xef\xbf\xbd"
#define MD_CR_SYMBOL "\xe2\x90\x8d"

typedef struct {
	size_t off, len, chars;
} md_span;

/* Rendered parts of one kind, back to back in `text`. */
typedef struct {
	pmbot_buf text;
	md_span *spans;
	size_t n, alloc;
	size_t mark;
} md_list;

typedef struct {
	char *key;      /* stable_id, or "OWNER/NAME#N" for outside issues */
	size_t *cs;     /* changeset indexes, bundle order */
	size_t n, alloc;
} md_item;

typedef struct {
	const json_t *bundle, *changesets;
	md_item *items;
	size_t n_items, alloc_items;
	size_t n_changes, n_errors, n_diffs, n_conflicts;
	const char *hash;
	const char *plan_file;  /* the JSON's path, or NULL */
	int local;              /* made against a state file, not GitHub */
} md_plan;

static size_t utf8_chars(const char *s, size_t len)
{
	size_t n = 0, i;

	for (i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int is_op(const json_t *cs, const char *op)
{
	const char *have = jstr(cs, "operation");

	return have && !strcmp(have, op);
}

/* ---- escaping ----------------------------------------------------------- */

/*
 * Every value from a report or an issue is cut at MD_VALUE_MAX code points
 * ("…" marks the cut): a 30,000-character id from a forged marker must not
 * crowd the items out of the comment.
 */
#define MD_VALUE_MAX 400
#define MD_ELLIPSIS "\xe2\x80\xa6"


static size_t md_cap(const char *s, size_t len, int *cut)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n++ == MD_VALUE_MAX) {
			*cut = 1;
			return i;
		}
	*cut = 0;
	return len;
}


/*
 * Inline Markdown text: backslash before every character that could start
 * emphasis, code, a link, raw HTML, an entity, a table cell, strikethrough
 * or math. Line breaks become spaces so a value never ends a block.
 */
static int put_text(pmbot_buf *b, const char *s, size_t len)
{
	size_t i;
	int cut;

	len = md_cap(s, len, &cut);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		int err;

		if (c == '\n' || c == '\r')
			err = pmbot_buf_putc(b, ' ');
		else if (!c)
			err = pmbot_buf_puts(b, MD_REPLACEMENT);
		else if (strchr("\\`*_[]<>&|~$", c))
			err = pmbot_buf_putc(b, '\\') < 0 ? -1 : pmbot_buf_putc(b, (char)c);
		else
			err = pmbot_buf_putc(b, (char)c);
		/* Never a mention or a link (pmbot/text.h). */
		if (!err && pmbot_text_needs_zwnj(s, len, i))
			err = pmbot_buf_puts(b, PMBOT_TEXT_ZWNJ);
		if (err < 0)
			return -1;
	}
	return cut ? pmbot_buf_puts(b, MD_ELLIPSIS) : 0;
}

static int put_textz(pmbot_buf *b, const char *s)
{
	return put_text(b, s, strlen(s));
}

static int put_jtext(pmbot_buf *b, const json_t *v)
{
	return put_text(b, json_string_value(v), json_string_length(v));
}

/*
 * A code span whose fence is longer than any backtick run inside. In a
 * table `|` must still be escaped: GFM splits cells before it sees code.
 */
static int put_code(pmbot_buf *b, const char *s, size_t len, int in_table)
{
	size_t run = 0, longest = 0, i;
	int pad, cut;

	if (!len)
		return pmbot_buf_puts(b, "*(empty)*");
	/* A code span links and mentions nothing: only the length needs a cap. */
	len = md_cap(s, len, &cut);
	for (i = 0; i < len; i++) {
		run = s[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	/* CommonMark strips one space from each end, and a fence touching a backtick would merge. */
	pad = s[0] == '`' || s[len - 1] == '`' || (s[0] == ' ' && s[len - 1] == ' ');
	for (i = 0; i <= longest; i++)
		if (pmbot_buf_putc(b, '`') < 0)
			return -1;
	if (pad && pmbot_buf_putc(b, ' ') < 0)
		return -1;
	for (i = 0; i < len; i++) {
		char c = s[i];
		int err;

		if (c == '\n' || c == '\r')
			err = pmbot_buf_putc(b, ' ');
		else if (!c)
			err = pmbot_buf_puts(b, MD_REPLACEMENT);
		else if (c == '|' && in_table)
			err = pmbot_buf_puts(b, "\\|");
		else
			err = pmbot_buf_putc(b, c);
		if (err < 0)
			return -1;
	}
	if (cut && pmbot_buf_puts(b, MD_ELLIPSIS) < 0)
		return -1;
	if (pad && pmbot_buf_putc(b, ' ') < 0)
		return -1;
	for (i = 0; i <= longest; i++)
		if (pmbot_buf_putc(b, '`') < 0)
			return -1;
	return 0;
}

static int put_codez(pmbot_buf *b, const char *s, int in_table)
{
	return put_code(b, s, strlen(s), in_table);
}

/*
 * Text inside raw HTML (<summary>): entities for what HTML reads, and for
 * Markdown's punctuation too, in case a renderer parses Markdown there.
 */
static int put_html(pmbot_buf *b, const char *s, size_t len, int in_code)
{
	size_t i;
	int cut;

	len = md_cap(s, len, &cut);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		int err;

		if (c == '\n' || c == '\r')
			err = pmbot_buf_putc(b, ' ');
		else if (!c)
			err = pmbot_buf_puts(b, MD_REPLACEMENT);
		else if (c == '&')
			err = pmbot_buf_puts(b, "&amp;");
		else if (c == '<')
			err = pmbot_buf_puts(b, "&lt;");
		else if (c == '>')
			err = pmbot_buf_puts(b, "&gt;");
		else if (c == '"')
			err = pmbot_buf_puts(b, "&quot;");
		else if (strchr("\\`*_[]|~$", c))
			err = pmbot_buf_printf(b, "&#%d;", c);
		else
			err = pmbot_buf_putc(b, (char)c);
		/* GitHub finds mentions in text nodes (not in <code>), after entities are decoded. */
		if (!err && !in_code && pmbot_text_needs_zwnj(s, len, i))
			err = pmbot_buf_puts(b, PMBOT_TEXT_ZWNJ);
		if (err < 0)
			return -1;
	}
	return cut ? pmbot_buf_puts(b, MD_ELLIPSIS) : 0;
}

/* A JSON value for people: a string as code, null as "none", else canonical JSON. */
static int put_value(pmbot_buf *b, const json_t *v, int in_table)
{
	pmbot_buf tmp = PMBOT_BUF_INIT;
	int err;

	if (!v || json_is_null(v))
		return pmbot_buf_puts(b, "*(none)*");
	if (json_is_string(v))
		return put_code(b, json_string_value(v), json_string_length(v), in_table);
	err = pmbot_json_canonical(&tmp, v) < 0 ? -1 : put_code(b, tmp.buf, tmp.len, in_table);
	pmbot_buf_free(&tmp);
	return err;
}

/*
 * An issue ref ("OWNER/NAME#N") that pm-bot read from GitHub (a conflict,
 * an orphan, a parent): as text, so GitHub links it.
 */
static int put_ref(pmbot_buf *b, const json_t *ref)
{
	const char *s = json_string_value(ref), *hash;
	size_t len = json_string_length(ref);

	if (!s)
		return pmbot_buf_puts(b, "*(none)*");
	hash = strrchr(s, '#');
	if (!hash || put_text(b, s, (size_t)(hash - s)) < 0 || pmbot_buf_putc(b, '#') < 0)
		return put_jtext(b, ref);
	return put_text(b, hash + 1, len - (size_t)(hash + 1 - s));
}

/* A binding: {repo, stable_id} as code, {repo, number} as a linked ref. */
static int put_binding(pmbot_buf *b, const json_t *bind)
{
	const json_t *sid = json_object_get(bind, "stable_id");
	const json_t *num = json_object_get(bind, "number");
	const char *repo = jstr(bind, "repo");

	if (json_is_string(sid))
		return put_code(b, json_string_value(sid), json_string_length(sid), 0);
	if (json_is_integer(num)) {
		pmbot_buf ref = PMBOT_BUF_INIT;
		int err;

		/* The report named it: a code span, so no cross-reference lands in that issue. */
		err = pmbot_buf_printf(&ref, "%s#%" JSON_INTEGER_FORMAT, repo ? repo : "",
			json_integer_value(num)) < 0 || put_code(b, ref.buf, ref.len, 0) < 0;
		pmbot_buf_free(&ref);
		return err ? -1 : 0;
	}
	return put_value(b, bind, 0);
}

static int put_labels(pmbot_buf *b, const json_t *labels)
{
	size_t i;

	if (!json_array_size(labels))
		return pmbot_buf_puts(b, "*(none)*");
	for (i = 0; i < json_array_size(labels); i++)
		if ((i && pmbot_buf_puts(b, ", ") < 0) ||
		    put_value(b, json_array_get(labels, i), 0) < 0)
			return -1;
	return 0;
}

/* “title” in inline text. */
static int put_quoted(pmbot_buf *b, const json_t *s)
{
	if (!json_is_string(s))
		return pmbot_buf_puts(b, "*(none)*");
	if (pmbot_buf_puts(b, "\xe2\x80\x9c") < 0 || put_jtext(b, s) < 0)
		return -1;
	return pmbot_buf_puts(b, "\xe2\x80\x9d");
}

/* ---- parts ---------------------------------------------------------------- */

static void list_free(md_list *l)
{
	pmbot_buf_free(&l->text);
	free(l->spans);
}

static void list_begin(md_list *l)
{
	l->mark = l->text.len;
}

static int list_end(md_list *l)
{
	md_span sp;

	if (l->n == l->alloc) {
		size_t na = l->alloc ? l->alloc * 2 : 16;
		md_span *p = realloc(l->spans, na * sizeof(*p));

		if (!p)
			return -1;
		l->spans = p;
		l->alloc = na;
	}
	sp.off = l->mark;
	sp.len = l->text.len - l->mark;
	sp.chars = utf8_chars(l->text.buf + sp.off, sp.len);
	l->spans[l->n++] = sp;
	return 0;
}

static int put_span(pmbot_buf *out, const md_list *l, size_t i)
{
	return pmbot_buf_put(out, l->text.buf + l->spans[i].off, l->spans[i].len);
}

/* ---- items ---------------------------------------------------------------- */

static int item_push(md_item *it, size_t cs)
{
	if (it->n == it->alloc) {
		size_t na = it->alloc ? it->alloc * 2 : 4;
		size_t *p = realloc(it->cs, na * sizeof(*p));

		if (!p)
			return -1;
		it->cs = p;
		it->alloc = na;
	}
	it->cs[it->n++] = cs;
	return 0;
}

/* The item a changeset belongs to: its target's stable_id, else its ref. */
static int item_key(pmbot_buf *key, const json_t *cs)
{
	const json_t *t = json_object_get(cs, "target");
	const char *sid = jstr(t, "stable_id"), *repo = jstr(t, "repo");
	const json_t *num = json_object_get(t, "number");

	if (sid)
		return pmbot_buf_puts(key, sid);
	if (json_is_integer(num))
		return pmbot_buf_printf(key, "%s#%" JSON_INTEGER_FORMAT, repo ? repo : "",
			json_integer_value(num));
	return pmbot_buf_puts(key, "(no target)");
}

static int group_items(md_plan *p)
{
	pmbot_strmap map = PMBOT_STRMAP_INIT;
	pmbot_buf key = PMBOT_BUF_INIT;
	size_t i;
	int rc = -1;

	for (i = 0; i < json_array_size(p->changesets); i++) {
		const json_t *cs = json_array_get(p->changesets, i);
		void *found;
		md_item *it;

		pmbot_buf_clear(&key);
		if (item_key(&key, cs) < 0)
			goto done;
		if (pmbot_strmap_get(&map, key.buf, &found)) {
			it = &p->items[(uintptr_t)found - 1];
		} else {
			if (p->n_items == p->alloc_items) {
				size_t na = p->alloc_items ? p->alloc_items * 2 : 16;
				md_item *np = realloc(p->items, na * sizeof(*np));

				if (!np)
					goto done;
				p->items = np;
				p->alloc_items = na;
			}
			it = &p->items[p->n_items];
			memset(it, 0, sizeof(*it));
			if (!(it->key = strdup(key.buf)))
				goto done;
			p->n_items++;
			/* Keys live in the items, which outlive the map. */
			if (pmbot_strmap_put(&map, it->key, (void *)(uintptr_t)p->n_items, NULL) < 0)
				goto done;
		}
		if (item_push(it, i) < 0)
			goto done;
		p->n_diffs += is_op(cs, "update_issue_body");
	}
	rc = 0;
done:
	pmbot_strmap_free(&map);
	pmbot_buf_free(&key);
	return rc;
}

/* The title an item will have, when the plan says. */
static const json_t *item_title(const md_plan *p, const md_item *it)
{
	size_t i;

	for (i = 0; i < it->n; i++) {
		const json_t *cs = json_array_get(p->changesets, it->cs[i]);
		const char *op = jstr(cs, "operation");
		const json_t *t;

		if (!op)
			continue;
		if (!strcmp(op, "create_issue") &&
		    json_is_string(t = json_object_get(json_object_get(cs, "payload"), "title")))
			return t;
		if (!strcmp(op, "update_issue_title")) {
			t = json_object_get(json_object_get(cs, "after"), "title");
			if (json_is_string(t))
				return t;
			t = json_object_get(json_object_get(cs, "payload"), "title");
			if (json_is_string(t))
				return t;
		}
	}
	return NULL;
}

/* How many of an item's changesets are `op`. */
static size_t item_count(const md_plan *p, const md_item *it, const char *op)
{
	size_t n = 0, i;

	for (i = 0; i < it->n; i++)
		n += is_op(json_array_get(p->changesets, it->cs[i]), op);
	return n;
}

/* Body text of before/after, else of the payload. */
static const json_t *body_of(const json_t *cs, const char *side)
{
	const json_t *v = json_object_get(json_object_get(cs, side), "body");

	if (!v && !strcmp(side, "after"))
		v = json_object_get(json_object_get(cs, "payload"), "body");
	return json_is_string(v) ? v : NULL;
}

/*
 * A fenced diff inside a list item: every line indented by two spaces, and
 * a fence longer than any backtick run in the diff so no line can close it.
 */
static int put_diff_fence(pmbot_buf *b, const pmbot_buf *diff)
{
	size_t run = 0, longest = 0, fence, i;

	for (i = 0; i < diff->len; i++) {
		run = diff->buf[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	fence = longest >= 3 ? longest + 1 : 3;
	if (pmbot_buf_puts(b, "  ") < 0)
		return -1;
	for (i = 0; i < fence; i++)
		if (pmbot_buf_putc(b, '`') < 0)
			return -1;
	if (pmbot_buf_puts(b, "diff\n  ") < 0)
		return -1;
	for (i = 0; i < diff->len; i++) {
		char c = diff->buf[i];
		int err;

		/* A CR would end the line for Markdown and let text escape the fence. */
		if (c == '\r')
			err = pmbot_buf_puts(b, MD_CR_SYMBOL);
		else if (!c)
			err = pmbot_buf_puts(b, MD_REPLACEMENT);
		else if (c == '\n')
			err = pmbot_buf_puts(b, i + 1 < diff->len ? "\n  " : "\n");
		else
			err = pmbot_buf_putc(b, c);
		if (err < 0)
			return -1;
	}
	if (pmbot_buf_puts(b, "  ") < 0)
		return -1;
	for (i = 0; i < fence; i++)
		if (pmbot_buf_putc(b, '`') < 0)
			return -1;
	return pmbot_buf_putc(b, '\n');
}

static int put_body_change(pmbot_buf *b, const json_t *cs, int compact)
{
	const json_t *before = body_of(cs, "before"), *after = body_of(cs, "after");
	pmbot_buf diff = PMBOT_BUF_INIT;
	size_t minus = 0, plus = 0, i;
	int rc = -1;

	if (pmbot_diff_unified(&diff, before ? json_string_value(before) : "",
		    before ? json_string_length(before) : 0,
		    after ? json_string_value(after) : "", after ? json_string_length(after) : 0,
		    "current body", "planned body", MD_DIFF_CONTEXT) < 0)
		goto done;
	if (!diff.len) {
		rc = pmbot_buf_puts(b, "body unchanged in text\n");
		goto done;
	}
	if (!compact) {
		rc = pmbot_buf_puts(b, "body:\n") < 0 ? -1 : put_diff_fence(b, &diff);
		goto done;
	}
	/* Count changed lines, skipping the two header lines. */
	for (i = 0; i < diff.len; i++) {
		if (i && diff.buf[i - 1] != '\n')
			continue;
		if (diff.buf[i] == '-' && strncmp(diff.buf + i, "--- ", 4))
			minus++;
		else if (diff.buf[i] == '+' && strncmp(diff.buf + i, "+++ ", 4))
			plus++;
	}
	rc = pmbot_buf_printf(b,
		"body: %zu line%s removed, %zu line%s added (diff left out to fit the comment)\n",
		minus, minus == 1 ? "" : "s", plus, plus == 1 ? "" : "s");
done:
	pmbot_buf_free(&diff);
	return rc < 0 ? -1 : 0;
}

/* One changeset as a bullet; body diffs follow it, nested. */
static int put_changeset(pmbot_buf *b, const json_t *cs, int compact)
{
	const char *op = jstr(cs, "operation"), *status = jstr(cs, "status");
	const json_t *id = json_object_get(cs, "changeset_id");
	const json_t *pl = json_object_get(cs, "payload");
	const json_t *before = json_object_get(cs, "before");
	const json_t *after = json_object_get(cs, "after");
	int err = 0;

	if (!op)
		op = "(no operation)";
	if (pmbot_buf_puts(b, "- ") < 0 ||
	    (json_is_string(id) && (put_value(b, id, 0) < 0 || pmbot_buf_putc(b, ' ') < 0)) ||
	    pmbot_buf_puts(b, "**") < 0 || put_textz(b, op) < 0 || pmbot_buf_puts(b, "**") < 0)
		return -1;
	/* The suffix goes before the description: a body diff ends the bullet. */
	if (json_is_false(json_object_get(cs, "requires_approval")) &&
	    pmbot_buf_puts(b, " *(auto-approved)*") < 0)
		return -1;
	/* A fresh plan's changesets are "proposed"; only another state is news. */
	if (status && strcmp(status, "proposed") && strcmp(status, "pending") &&
	    (pmbot_buf_puts(b, " *(") < 0 || put_textz(b, status) < 0 ||
		    pmbot_buf_puts(b, ")*") < 0))
		return -1;
	if (pmbot_buf_puts(b, ": ") < 0)
		return -1;

	if (!strcmp(op, "create_issue")) {
		err = pmbot_buf_puts(b, "new issue ") < 0 ||
			put_quoted(b, json_object_get(pl, "title")) < 0 ||
			pmbot_buf_puts(b, ", labels ") < 0 ||
			put_labels(b, json_object_get(pl, "labels")) < 0;
	} else if (!strcmp(op, "update_issue_title")) {
		const json_t *to = json_object_get(after, "title");

		if (!to)
			to = json_object_get(pl, "title");
		err = pmbot_buf_puts(b, "title ") < 0 ||
			put_quoted(b, json_object_get(before, "title")) < 0 ||
			pmbot_buf_puts(b, " \xe2\x86\x92 ") < 0 || put_quoted(b, to) < 0;
	} else if (!strcmp(op, "update_issue_body")) {
		return put_body_change(b, cs, compact);
	} else if (!strcmp(op, "add_labels")) {
		err = pmbot_buf_puts(b, "add ") < 0 ||
			put_labels(b, json_object_get(pl, "labels")) < 0;
	} else if (!strcmp(op, "remove_labels")) {
		err = pmbot_buf_puts(b, "remove ") < 0 ||
			put_labels(b, json_object_get(pl, "labels")) < 0;
	} else if (!strcmp(op, "set_parent")) {
		err = pmbot_buf_puts(b, "parent ") < 0 ||
			put_ref(b, json_object_get(before, "parent")) < 0 ||
			pmbot_buf_puts(b, " \xe2\x86\x92 ") < 0 ||
			put_binding(b, json_object_get(pl, "parent")) < 0;
	} else if (!strcmp(op, "set_issue_type")) {
		err = pmbot_buf_puts(b, "issue type ") < 0 ||
			put_quoted(b, json_object_get(before, "issue_type")) < 0 ||
			pmbot_buf_puts(b, " \xe2\x86\x92 ") < 0 ||
			put_quoted(b, json_object_get(pl, "issue_type")) < 0;
	} else if (!strcmp(op, "add_dependency")) {
		err = pmbot_buf_puts(b, "blocked by ") < 0 ||
			put_binding(b, json_object_get(pl, "blocker")) < 0;
	} else if (!strcmp(op, "remove_dependency")) {
		err = pmbot_buf_puts(b, "no longer blocked by ") < 0 ||
			put_binding(b, json_object_get(pl, "blocker")) < 0;
	} else if (!strcmp(op, "add_to_project")) {
		err = pmbot_buf_puts(b, "add to project ") < 0 ||
			put_value(b, json_object_get(pl, "project"), 0) < 0;
	} else if (!strcmp(op, "set_project_field")) {
		err = pmbot_buf_puts(b, "field ") < 0 ||
			put_value(b, json_object_get(pl, "field"), 0) < 0 ||
			pmbot_buf_puts(b, ": ") < 0;
		if (!err && json_is_object(before))
			err = put_value(b, json_object_get(before, "value"), 0) < 0 ||
				pmbot_buf_puts(b, " \xe2\x86\x92 ") < 0;
		if (!err)
			err = put_value(b, json_object_get(pl, "value"), 0) < 0;
	} else {
		err = put_value(b, pl, 0) < 0;
	}
	if (err)
		return -1;
	return pmbot_buf_putc(b, '\n');
}

static int put_item(pmbot_buf *b, const md_plan *p, const md_item *it, int compact)
{
	const json_t *title = item_title(p, it);
	size_t i;

	if (pmbot_buf_puts(b, "<details><summary><code>") < 0 ||
	    put_html(b, it->key, strlen(it->key), 1) < 0 || pmbot_buf_puts(b, "</code>") < 0)
		return -1;
	if (title && (pmbot_buf_putc(b, ' ') < 0 ||
		    put_html(b, json_string_value(title), json_string_length(title), 0) < 0))
		return -1;
	if (item_count(p, it, "create_issue") && pmbot_buf_puts(b, " \xc2\xb7 new issue") < 0)
		return -1;
	if (pmbot_buf_printf(b, " \xc2\xb7 %zu change%s</summary>\n\n", it->n,
		    it->n == 1 ? "" : "s") < 0)
		return -1;
	for (i = 0; i < it->n; i++)
		if (put_changeset(b, json_array_get(p->changesets, it->cs[i]), compact) < 0)
			return -1;
	return pmbot_buf_puts(b, "\n</details>\n\n");
}

/* ---- other sections --------------------------------------------------------- */

static int put_conflict(pmbot_buf *b, const json_t *c)
{
	const json_t *sid = json_object_get(c, "stable_id"), *ref = json_object_get(c, "ref");
	const json_t *reason = json_object_get(c, "reason");

	if (pmbot_buf_puts(b, "- ") < 0 || put_value(b, sid, 0) < 0)
		return -1;
	if (json_is_string(ref) && (pmbot_buf_putc(b, ' ') < 0 || put_ref(b, ref) < 0))
		return -1;
	if (pmbot_buf_puts(b, ": ") < 0 || put_value(b, reason, 0) < 0)
		return -1;
	if ((json_object_get(c, "expected_rev") || json_object_get(c, "actual_rev")) &&
	    (pmbot_buf_puts(b, ", last written ") < 0 ||
		    put_value(b, json_object_get(c, "expected_rev"), 0) < 0 ||
		    pmbot_buf_puts(b, ", now ") < 0 ||
		    put_value(b, json_object_get(c, "actual_rev"), 0) < 0))
		return -1;
	return pmbot_buf_putc(b, '\n');
}

static int put_orphan(pmbot_buf *b, const json_t *o)
{
	const json_t *ref = json_object_get(o, "ref");

	if (pmbot_buf_puts(b, "- ") < 0 || put_value(b, json_object_get(o, "stable_id"), 0) < 0)
		return -1;
	if (json_is_string(ref) && (pmbot_buf_putc(b, ' ') < 0 || put_ref(b, ref) < 0))
		return -1;
	return pmbot_buf_putc(b, '\n');
}

static int put_diag_row(pmbot_buf *b, const json_t *d)
{
	const char *sev = jstr(d, "severity"), *file = jstr(d, "file"), *path = jstr(d, "path");
	const json_t *line = json_object_get(d, "line"), *msg = json_object_get(d, "message");
	pmbot_buf loc = PMBOT_BUF_INIT;
	int err;

	err = pmbot_buf_puts(b, "| ") < 0 || put_textz(b, sev ? sev : "error") < 0 ||
		pmbot_buf_puts(b, " | ") < 0 || put_value(b, json_object_get(d, "code"), 1) < 0 ||
		pmbot_buf_puts(b, " | ") < 0;
	if (!err && file) {
		err = pmbot_buf_puts(&loc, file) < 0;
		if (!err && json_integer_value(line) > 0)
			err = pmbot_buf_printf(&loc, ":%" JSON_INTEGER_FORMAT,
				json_integer_value(line)) < 0;
		if (!err)
			err = put_code(b, loc.buf, loc.len, 1) < 0;
	}
	if (!err && path && *path)
		err = (file && pmbot_buf_putc(b, ' ') < 0) || put_codez(b, path, 1) < 0;
	if (!err && !file && !(path && *path))
		err = pmbot_buf_puts(b, "\xe2\x80\x94") < 0;
	if (!err)
		err = pmbot_buf_puts(b, " | ") < 0 ||
			(json_is_string(msg) && put_jtext(b, msg) < 0) ||
			pmbot_buf_puts(b, " |\n") < 0;
	pmbot_buf_free(&loc);
	return err ? -1 : 0;
}

/* ---- whole document ----------------------------------------------------------- */

static const char *const md_rows[] = {
	"creates", "Creates", "updates", "Updates", "relationships", "Relationships",
	"project", "Project", "conflicts", "Conflicts", "orphaned", "Orphaned",
	"diagnostics", "Diagnostics",
};

/* The summary row an operation counts in (the operation table's). */
static const char *op_group(const char *op)
{
	pmbot_operation o;

	return op && pmbot_operation_parse(&o, op) == PMBOT_OK ?
		pmbot_operation_info_of(o)->summary : "";
}

/* Counts by the bundle's summary; what it lacks is counted here. */
static size_t summary_count(const md_plan *p, const char *key)
{
	const json_t *v = json_object_get(json_object_get(p->bundle, "summary"), key);
	size_t n = 0, i;

	if (json_is_integer(v) && json_integer_value(v) >= 0)
		return (size_t)json_integer_value(v);
	if (!strcmp(key, "conflicts") || !strcmp(key, "orphaned") || !strcmp(key, "diagnostics"))
		return json_array_size(json_object_get(p->bundle, key));
	for (i = 0; i < json_array_size(p->changesets); i++)
		n += !strcmp(op_group(jstr(json_array_get(p->changesets, i), "operation")), key);
	return n;
}

static int put_head(pmbot_buf *b, const md_plan *p)
{
	const char *target = jstr(p->bundle, "target");
	size_t i;

	if (pmbot_buf_puts(b, "## pm-bot plan") < 0 ||
	    (target && (pmbot_buf_puts(b, " for ") < 0 || put_codez(b, target, 0) < 0)) ||
	    pmbot_buf_puts(b, "\n\n| Change | Count |\n| :-- | --: |\n") < 0)
		return -1;
	for (i = 0; i < sizeof(md_rows) / sizeof(md_rows[0]); i += 2)
		if (pmbot_buf_printf(b, "| %s | %zu |\n", md_rows[i + 1],
			    summary_count(p, md_rows[i])) < 0)
			return -1;
	if (!p->n_changes && p->n_conflicts) {
		/* Unresolved drift is not a match, whatever the changeset count says. */
		if (pmbot_buf_printf(b, "\n**Nothing to apply, but %zu conflict%s need%s a person** "
			    "(see Conflicts): %s does not match the reports.\n", p->n_conflicts,
			    p->n_conflicts == 1 ? "" : "s", p->n_conflicts == 1 ? "s" : "",
			    p->local ? "the state file" : "GitHub") < 0)
			return -1;
	} else if (!p->n_changes) {
		if (pmbot_buf_printf(b, "\n**No changes.** %s already matches the reports.\n",
			    p->local ? "The state file" : "GitHub") < 0)
			return -1;
	} else if (pmbot_buf_printf(b, "\n**%zu change%s** to %zu issue%s.\n", p->n_changes,
			   p->n_changes == 1 ? "" : "s", p->n_items, p->n_items == 1 ? "" : "s") < 0) {
		return -1;
	}
	if (p->n_errors && pmbot_buf_printf(b,
		    "\n**%zu error%s**: fix %s (see Diagnostics) before this plan can be applied.\n",
		    p->n_errors, p->n_errors == 1 ? "" : "s", p->n_errors == 1 ? "it" : "them") < 0)
		return -1;
	return pmbot_buf_putc(b, '\n');
}

static int put_foot(pmbot_buf *b, const md_plan *p)
{
	if (pmbot_buf_printf(b, "---\n\nPlan hash: `%s`\n\n", p->hash) < 0)
		return -1;
	if (!p->n_changes)
		return pmbot_buf_puts(b, "Nothing to apply.\n");
	if (p->n_errors)
		return pmbot_buf_puts(b, "This plan has errors and cannot be approved.\n");
	if (p->local) {
		pmbot_buf cmd = PMBOT_BUF_INIT;
		int err;

		if (!p->plan_file)
			return pmbot_buf_printf(b, "To apply exactly this plan, save it with "
				"`pm-bot plan --out plan.json` and run "
				"`pm-bot apply --plan plan.json --approve %s`.\n", p->hash);
		err = pmbot_buf_printf(&cmd, "pm-bot apply --plan %s --approve %s", p->plan_file,
			p->hash) < 0 || pmbot_buf_puts(b, "To apply exactly this plan, run ") < 0 ||
			put_codez(b, cmd.buf, 0) < 0 || pmbot_buf_puts(b, ".\n") < 0;
		pmbot_buf_free(&cmd);
		return err ? -1 : 0;
	}
	return pmbot_buf_printf(b,
		"To apply exactly this plan, comment:\n\n```\n/pm-bot apply %s\n```\n", p->hash);
}

typedef struct {
	size_t total[4], shown[4], diffs_cut;
} md_cut;

enum { CUT_ITEMS, CUT_CONFLICTS, CUT_ORPHANS, CUT_DIAGS };

static int put_note(pmbot_buf *b, const md_cut *c, const char *hint)
{
	static const char *const what[4][2] = {
		{ "item", "items" }, { "conflict", "conflicts" },
		{ "orphaned issue", "orphaned issues" }, { "diagnostic", "diagnostics" },
	};
	int first = 1, k;

	if (pmbot_buf_puts(b, "> **This plan was cut to fit in one comment.**") < 0)
		return -1;
	for (k = 0; k < 4; k++) {
		size_t left = c->total[k] - c->shown[k];

		if (!left)
			continue;
		if (pmbot_buf_printf(b, "%s %zu of %zu %s", first ? " Left out:" : ",", left,
			    c->total[k], what[k][c->total[k] != 1]) < 0)
			return -1;
		first = 0;
	}
	if (!first && pmbot_buf_putc(b, '.') < 0)
		return -1;
	if (c->diffs_cut && pmbot_buf_printf(b, " %zu body diff%s shortened to line counts.",
			    c->diffs_cut, c->diffs_cut == 1 ? "" : "s") < 0)
		return -1;
	if (pmbot_buf_puts(b, " The full plan is the JSON bundle") < 0)
		return -1;
	if (hint && *hint && (pmbot_buf_puts(b, ": ") < 0 || put_codez(b, hint, 0) < 0))
		return -1;
	return pmbot_buf_puts(b, ".\n\n");
}

/* Section openings; every section but the items ends with a blank line of its own. */
static const char *const md_heads[4] = {
	"### Changes\n\n",
	"### Conflicts\n\nEdited by someone else since pm-bot last wrote them: "
	"left as they are, not overwritten.\n\n",
	"### Orphaned issues\n\nManaged by pm-bot but no longer in any report: "
	"left open, not closed.\n\n",
	"### Diagnostics\n\n| Severity | Code | Location | Message |\n| --- | --- | --- | --- |\n",
};

static size_t heading_chars(size_t k)
{
	return utf8_chars(md_heads[k], strlen(md_heads[k])) + (k != CUT_ITEMS);
}

static int valid_hash(const char *h)
{
	size_t i;

	if (!h || strlen(h) != 64)
		return 0;
	for (i = 0; i < 64; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
			return 0;
	return 1;
}

typedef struct {
	md_plan p;
	md_list parts[4];      /* items (in full), conflicts, orphans, diagnostics */
	md_list compact;       /* items with their body diffs shortened, as needed */
	size_t *compact_of;    /* per item: index in `compact`, or SIZE_MAX for in full */
	pmbot_buf head, foot;
	md_cut cut;
} md_doc;

/* Append the parts `d->cut.shown` keeps; a heading only when its section shows something. */
static int assemble(pmbot_buf *out, const md_doc *d, int cut, const char *hint)
{
	size_t k, i;

	if (pmbot_buf_put(out, d->head.buf, d->head.len) < 0)
		return -1;
	for (k = 0; k < 4; k++) {
		if (!d->cut.shown[k])
			continue;
		if (pmbot_buf_puts(out, md_heads[k]) < 0)
			return -1;
		for (i = 0; i < d->cut.shown[k]; i++) {
			int err;

			if (k == CUT_ITEMS && d->compact_of[i] != SIZE_MAX)
				err = put_span(out, &d->compact, d->compact_of[i]);
			else
				err = put_span(out, &d->parts[k], i);
			if (err < 0)
				return -1;
		}
		if (k != CUT_ITEMS && pmbot_buf_putc(out, '\n') < 0)
			return -1;
	}
	if (cut && put_note(out, &d->cut, hint) < 0)
		return -1;
	return pmbot_buf_put(out, d->foot.buf, d->foot.len);
}

/*
 * Items are rendered on demand, in order: a plan far over the limit only
 * pays for the diffs of the items it shows.
 */
static int render_items_to(md_doc *d, size_t n)
{
	md_list *l = &d->parts[CUT_ITEMS];

	while (l->n < n) {
		list_begin(l);
		if (put_item(&l->text, &d->p, &d->p.items[l->n], 0) < 0 || list_end(l) < 0)
			return -1;
	}
	return 0;
}

static int render_others(md_doc *d)
{
	static const char *const keys[4] = { NULL, "conflicts", "orphaned", "diagnostics" };
	size_t i, k;

	for (k = 1; k < 4; k++) {
		const json_t *arr = json_object_get(d->p.bundle, keys[k]);

		for (i = 0; i < json_array_size(arr); i++) {
			const json_t *e = json_array_get(arr, i);
			pmbot_buf *b = &d->parts[k].text;
			int err;

			list_begin(&d->parts[k]);
			err = k == CUT_CONFLICTS ? put_conflict(b, e) :
				k == CUT_ORPHANS ? put_orphan(b, e) : put_diag_row(b, e);
			if (err < 0 || list_end(&d->parts[k]) < 0)
				return -1;
		}
	}
	for (k = 0; k < 4; k++)
		d->cut.total[k] = d->cut.shown[k] = k == CUT_ITEMS ? d->p.n_items : d->parts[k].n;
	for (i = 0; i < d->p.n_items; i++)
		d->compact_of[i] = SIZE_MAX;
	return 0;
}

/*
 * Does the whole plan fit? Adds up what assemble() would write uncut,
 * rendering items only until the sum passes `max_chars`. 1 yes, 0 no, -1.
 */
static int fits_whole(md_doc *d, size_t max_chars)
{
	size_t total = utf8_chars(d->head.buf, d->head.len) + utf8_chars(d->foot.buf, d->foot.len);
	size_t k, i;

	for (k = 0; k < 4; k++)
		if (d->cut.total[k])
			total += heading_chars(k);
	for (k = 1; k < 4; k++)
		for (i = 0; i < d->parts[k].n; i++)
			total += d->parts[k].spans[i].chars;
	for (i = 0; i < d->p.n_items && total <= max_chars; i++) {
		if (render_items_to(d, i + 1) < 0)
			return -1;
		total += d->parts[CUT_ITEMS].spans[i].chars;
	}
	return total <= max_chars;
}

/*
 * Choose what fits in `max_chars`. The head, the foot, every heading and
 * the note at its longest (every count at its total) are reserved first;
 * then conflicts, diagnostics and orphans, each within its own small share
 * (1/MD_SECTION_SHARE of `max_chars`: their text comes from issues anyone
 * can open, and must not crowd the items out); then items in order: each
 * in full, else with its body diffs shortened, else the cut starts there
 * and every later item is left out; then more conflicts, diagnostics and
 * orphans with whatever is left.
 */
#define MD_SECTION_SHARE 16

static int choose_parts(md_doc *d, size_t max_chars, const char *hint)
{
	/* Pass 0: each other section up to its share; 1: the items; 2: what is left. */
	static const size_t order[3][4] = {
		{ CUT_CONFLICTS, CUT_DIAGS, CUT_ORPHANS, 4 },
		{ CUT_ITEMS, 4, 4, 4 },
		{ CUT_CONFLICTS, CUT_DIAGS, CUT_ORPHANS, 4 },
	};
	pmbot_buf note = PMBOT_BUF_INIT;
	md_cut worst = d->cut;
	size_t fixed, budget, share, pass, o, i, k;

	worst.diffs_cut = d->p.n_diffs;
	for (k = 0; k < 4; k++)
		worst.shown[k] = 0;
	if (put_note(&note, &worst, hint) < 0) {
		pmbot_buf_free(&note);
		return -1;
	}
	fixed = utf8_chars(d->head.buf, d->head.len) + utf8_chars(d->foot.buf, d->foot.len) +
		utf8_chars(note.buf, note.len);
	pmbot_buf_free(&note);
	for (k = 0; k < 4; k++)
		if (d->cut.total[k])
			fixed += heading_chars(k);
	budget = fixed < max_chars ? max_chars - fixed : 0;
	share = max_chars / MD_SECTION_SHARE;
	d->cut.diffs_cut = 0;
	for (k = 0; k < 4; k++)
		d->cut.shown[k] = 0;
	for (pass = 0; pass < 3; pass++) for (o = 0; o < 4 && order[pass][o] < 4; o++) {
		size_t limit = budget, used = 0;

		k = order[pass][o];
		if (pass == 0 && share < limit)
			limit = share;
		for (i = d->cut.shown[k]; i < d->cut.total[k]; i++) {
			size_t need, bodies = 0;

			if (k == CUT_ITEMS && render_items_to(d, i + 1) < 0)
				return -1;
			need = d->parts[k].spans[i].chars;

			if (k == CUT_ITEMS && need > budget)
				bodies = item_count(&d->p, &d->p.items[i], "update_issue_body");
			if (bodies) {
				list_begin(&d->compact);
				if (put_item(&d->compact.text, &d->p, &d->p.items[i], 1) < 0 ||
				    list_end(&d->compact) < 0)
					return -1;
				need = d->compact.spans[d->compact.n - 1].chars;
				if (need <= budget) {
					d->compact_of[i] = d->compact.n - 1;
					d->cut.diffs_cut += bodies;
				}
			}
			if (need > budget || (pass == 0 && used + need > limit))
				break;
			budget -= need;
			used += need;
			d->cut.shown[k]++;
		}
	}
	return 0;
}

int pmbot_plan_markdown(pmbot_buf *out, const json_t *bundle, size_t max_chars,
	const char *full_json_hint)
{
	md_doc d;
	const json_t *diags;
	const char *kind;
	size_t orig = out->len, i, k;
	int rc = PMBOT_ERROR, fits;

	memset(&d, 0, sizeof(d));
	for (k = 0; k < 4; k++)
		pmbot_buf_init(&d.parts[k].text, 0);
	pmbot_buf_init(&d.compact.text, 0);
	pmbot_buf_init(&d.head, 0);
	pmbot_buf_init(&d.foot, 0);
	if (!max_chars)
		max_chars = MD_DEFAULT_MAX;
	if (!json_is_object(bundle) || !valid_hash(jstr(bundle, "plan_hash")))
		goto done;
	d.p.bundle = bundle;
	d.p.hash = jstr(bundle, "plan_hash");
	d.p.changesets = json_object_get(bundle, "changesets");
	d.p.n_changes = json_array_size(d.p.changesets);
	d.p.n_conflicts = json_array_size(json_object_get(bundle, "conflicts"));
	d.p.plan_file = full_json_hint && *full_json_hint ? full_json_hint : NULL;
	kind = jstr(json_object_get(json_object_get(bundle, "source"), "backend"), "kind");
	d.p.local = kind && !strcmp(kind, "file");
	diags = json_object_get(bundle, "diagnostics");
	for (i = 0; i < json_array_size(diags); i++) {
		const char *sev = jstr(json_array_get(diags, i), "severity");

		/* Without a severity it counts as an error: never offer to approve it. */
		d.p.n_errors += !sev || !strcmp(sev, "error");
	}
	if (group_items(&d.p) < 0)
		goto done;
	if (!(d.compact_of = malloc((d.p.n_items + 1) * sizeof(*d.compact_of))))
		goto done;
	if (render_others(&d) < 0 || put_head(&d.head, &d.p) < 0 || put_foot(&d.foot, &d.p) < 0)
		goto done;
	if ((fits = fits_whole(&d, max_chars)) < 0)
		goto done;
	if (!fits && choose_parts(&d, max_chars, full_json_hint) < 0)
		goto done;
	if (assemble(out, &d, !fits, full_json_hint) < 0)
		goto done;
	rc = PMBOT_OK;
done:
	if (rc != PMBOT_OK)
		pmbot_buf_truncate(out, orig);
	for (i = 0; i < d.p.n_items; i++) {
		free(d.p.items[i].key);
		free(d.p.items[i].cs);
	}
	free(d.p.items);
	for (k = 0; k < 4; k++)
		list_free(&d.parts[k]);
	list_free(&d.compact);
	free(d.compact_of);
	pmbot_buf_free(&d.head);
	pmbot_buf_free(&d.foot);
	return rc;
}
