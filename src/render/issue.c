#include "pmbot/render.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmbot/array.h"
#include "pmbot/json.h"
#include "pmbot/text.h"
#include "pmbot/banned.h"

/* The members of a node that rendering reads (its document's values); NULL when absent. */
typedef struct {
	const pmbot_jnode *title, *area, *priority, *size, *estimate_hrs, *risk, *status, *goal,
		*objective, *acceptance_criteria, *milestones, *links;
	int needs_human;
} node_members;

typedef struct {
	const pmbot_wg_node *node;
	pmbot_diag_list *diags;
	int oom;
	node_members m;
} render_ctx;

#define MEMBER(name) { #name, offsetof(node_members, name) }

static const struct {
	const char *name;
	size_t off;
} member_keys[] = {
	MEMBER(title), MEMBER(size), MEMBER(estimate_hrs),
	MEMBER(risk), MEMBER(status), MEMBER(goal), MEMBER(objective),
	MEMBER(acceptance_criteria), MEMBER(milestones), MEMBER(links)
};

/*
 * One walk over the node's values instead of a lookup per heading and
 * label (sixteen an item); a key names at most one member. Area, priority
 * and needs_human are the node's own (triage defaults applied).
 */
static void read_members(node_members *m, const pmbot_wg_node *node)
{
	const pmbot_jnode *v, *item = node->item;
	uint32_t i;
	size_t k;

	memset(m, 0, sizeof(*m));
	m->area = node->area;
	m->priority = node->priority;
	m->needs_human = node->needs_human;
	if (!pmbot_render__fast || !item || item->type != PMBOT_JOBJECT) {
		for (k = 0; k < sizeof(member_keys) / sizeof(member_keys[0]); k++)
			*(const pmbot_jnode **)((char *)m + member_keys[k].off) =
				pmbot_wg_node_get(node, member_keys[k].name);
		return;
	}
	for (i = 0, v = pmbot_jnode_first(item); i < item->len; i++, v = pmbot_jnode_next(v)) {
		/* A report item's null member is no member (pmbot_wg_node_get). */
		if (v->type == PMBOT_JNULL && !node->is_object)
			continue;
		for (k = 0; k < sizeof(member_keys) / sizeof(member_keys[0]); k++) {
			if (v->key[0] == member_keys[k].name[0] && !strcmp(v->key, member_keys[k].name)) {
				*(const pmbot_jnode **)((char *)m + member_keys[k].off) = v;
				break;
			}
		}
	}
}

/* Characters, as GitHub counts them: UTF-8 lead bytes. */
static size_t count_chars(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/*
 * The characters of `s` when they are more than `max`, else 0. A character
 * takes at least one byte, so a text of at most `max` bytes (nearly every
 * body: GitHub allows 65,536 characters) is not counted.
 */
static size_t chars_over(const char *s, size_t len, size_t max)
{
	size_t n;

	if (len <= max && pmbot_render__fast)
		return 0;
	n = count_chars(s, len);
	return n > max ? n : 0;
}

static void render_vdiag(render_ctx *c, pmbot_severity sev, const char *code,
	const char *member, const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static void render_vdiag(render_ctx *c, pmbot_severity sev, const char *code,
	const char *member, const char *fmt, va_list ap)
{
	pmbot_buf ptr = PMBOT_BUF_INIT, msg = PMBOT_BUF_INIT;
	int err = 0;

	err |= pmbot_buf_vprintf(&msg, fmt, ap);
	err |= pmbot_buf_puts(&ptr, c->node->source_path ? c->node->source_path : "");
	if (member)
		err |= pmbot_json_pointer_push(&ptr, member);
	if (err || pmbot_diag_add(c->diags, sev, code, NULL, ptr.buf,
			c->node->line, 0, "%s", msg.buf) < 0)
		c->oom = 1;
	pmbot_buf_free(&ptr);
	pmbot_buf_free(&msg);
}

static void render_diag(render_ctx *c, const char *code, const char *member,
	const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void render_diag(render_ctx *c, const char *code, const char *member,
	const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	render_vdiag(c, PMBOT_SEV_ERROR, code, member, fmt, ap);
	va_end(ap);
}

static void render_warn(render_ctx *c, const char *code, const char *member,
	const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void render_warn(render_ctx *c, const char *code, const char *member,
	const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	render_vdiag(c, PMBOT_SEV_WARNING, code, member, fmt, ap);
	va_end(ap);
}

/*
 * pmbot_buf_put() for the many short appends of a body: straight into the
 * room the buffer already has (render_body() makes it first), the library
 * call only to grow. `s` never points into `b`.
 */
static inline int append(pmbot_buf *b, const char *s, size_t n)
{
	if (b->cap - b->len > n && b->max - b->len >= n) {
		memcpy(b->buf + b->len, s, n);
		b->len += n;
		b->buf[b->len] = '\0';
		return 0;
	}
	return pmbot_buf_put(b, s, n);
}

static int is_string(const pmbot_jnode *v)
{
	return v && v->type == PMBOT_JSTRING;
}

/*
 * The raw text of a scalar member (before neutralisation), without a copy:
 * a string's bytes, a number's shortest text that reads back to the same
 * value (written in `tmp`); "" when absent or of another type.
 */
static void scalar_text(const pmbot_jnode *v, char tmp[40], const char **s, size_t *len)
{
	double d;
	int prec;

	*s = "";
	*len = 0;
	if (is_string(v)) {
		*s = v->v.s;
		*len = v->len;
		return;
	}
	if (v && v->type == PMBOT_JINTEGER && pmbot_render__fast) {
		/* The digits of printf's JSON_INTEGER_FORMAT, without a printf per estimate. */
		json_int_t n = v->v.i;
		unsigned long long u = n < 0 ? 0ULL - (unsigned long long)n : (unsigned long long)n;
		char rev[24];
		size_t k = 0, i = 0;

		do {
			rev[k++] = (char)('0' + u % 10);
			u /= 10;
		} while (u);
		if (n < 0)
			tmp[i++] = '-';
		while (k)
			tmp[i++] = rev[--k];
		tmp[i] = '\0';
	} else if (v && v->type == PMBOT_JINTEGER) {
		snprintf(tmp, 40, "%" JSON_INTEGER_FORMAT, v->v.i);
	} else if (v && v->type == PMBOT_JREAL && isfinite(d = v->v.r)) {
		for (prec = 1; prec <= 17; prec++) {
			snprintf(tmp, 40, "%.*g", prec, d);
			if (strtod(tmp, NULL) == d)
				break;
		}
	} else {
		return;
	}
	*s = tmp;
	*len = strlen(tmp);
}

static int put_scalar(pmbot_buf *out, const pmbot_jnode *v)
{
	char tmp[40];
	const char *s;
	size_t len;

	scalar_text(v, tmp, &s, &len);
	return pmbot_buf_put(out, s, len);
}

/*
 * Report text as it goes on GitHub: never a mention, an issue reference or
 * a link (pmbot/text.h), over the Markdown that `safe` already made of it
 * (so the rule sees the bytes GitHub reads), code spans kept.
 */
static int put_unlinked(pmbot_buf *out, const pmbot_buf *safe)
{
	return pmbot_text_neutralise(out, safe->buf, safe->len, PMBOT_TEXT_CODE_SPANS);
}

/* One line of report text, neutralised as a line and then unlinked. */
static int put_line_text(pmbot_buf *out, const char *s, size_t len)
{
	pmbot_buf safe = PMBOT_BUF_INIT;
	int err;

	/* Most values are their own safe line: unlinked straight from the report. */
	if (pmbot_render__fast && pmbot_render__line_is_safe(s, len))
		return pmbot_text_neutralise(out, s, len, PMBOT_TEXT_CODE_SPANS);
	if (!(err = pmbot_render_neutralise_line(&safe, s, len)))
		err = put_unlinked(out, &safe);
	pmbot_buf_free(&safe);
	return err;
}

static int put_line_value(pmbot_buf *out, const pmbot_jnode *v)
{
	char tmp[40];
	const char *s;
	size_t len;

	scalar_text(v, tmp, &s, &len);
	return put_line_text(out, s, len);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The "Blocked by" value: every depends_on and blocked_by target of the
 * node (an issue reference when the caller knows one), sorted, without
 * repeats, ", " between, then neutralised as one line.
 *
 * Who may link here: a reference from opts->issue_refs is pm-bot's own
 * word, the issue it resolved the dependency to from the graph and the
 * state, so it stays a link ("#12"). A target as the report wrote it (a
 * stable id, a GitHub issue URL, anything a report can put there) is
 * report text and never links: it gets the U+200C of pmbot/text.h, with
 * no code span kept (entries are joined, and a backtick in one could pair
 * with one in the next). The dependency itself is still made, through
 * GitHub's dependency API, for issues pm-bot manages.
 */
struct dep {
	const char *text;
	int own; /* pm-bot's resolved reference, not the report's text */
};

static int dep_cmp(const void *a, const void *b)
{
	const struct dep *x = a, *y = b;
	int c = strcmp(x->text, y->text);

	return c ? c : x->own - y->own;
}

static int put_deps(pmbot_buf *out, const pmbot_workgraph *g, const pmbot_wg_node *node,
	const pmbot_render_opts *opts)
{
	static const pmbot_edge_type types[2] = { PMBOT_EDGE_DEPENDS_ON, PMBOT_EDGE_BLOCKED_BY };
	size_t first[2], end[2], i, n = 0, k;
	struct dep *refs = NULL;
	pmbot_buf raw = PMBOT_BUF_INIT;
	int err = -1;

	for (k = 0; k < 2; k++) {
		pmbot_workgraph_edges_from(g, types[k], node, &first[k], &end[k]);
		n += end[k] - first[k];
	}
	if (!n)
		return 0;
	if (!(refs = malloc(n * sizeof(*refs))))
		goto done;
	for (k = 0, n = 0; k < 2; k++) {
		for (i = first[k]; i < end[k]; i++) {
			void *ref = NULL;

			refs[n].text = g->edges[i].to_id;
			refs[n].own = opts && opts->issue_refs &&
				pmbot_strmap_get(opts->issue_refs, refs[n].text, &ref) && ref;
			if (refs[n].own)
				refs[n].text = ref;
			n++;
		}
	}
	qsort(refs, n, sizeof(*refs), dep_cmp);
	for (i = 0; i < n; i++) {
		if (i && !strcmp(refs[i].text, refs[i - 1].text) && refs[i].own == refs[i - 1].own)
			continue;
		if (raw.len && pmbot_buf_puts(&raw, ", ") < 0)
			goto done;
		if (refs[i].own ? pmbot_buf_puts(&raw, refs[i].text) < 0 :
		    pmbot_text_neutralise(&raw, refs[i].text, strlen(refs[i].text), 0) < 0)
			goto done;
	}
	err = pmbot_render_neutralise_line(out, raw.buf, raw.len);
done:
	free(refs);
	pmbot_buf_free(&raw);
	return err ? -1 : 0;
}

/* One list line per array item ("- " or "- [ ] " before it); empty items skipped. */
static int put_list(pmbot_buf *out, const pmbot_jnode *arr, const char *bullet, int milestones)
{
	pmbot_buf raw = PMBOT_BUF_INIT, item = PMBOT_BUF_INIT;
	size_t i, n, start = out->len;
	const pmbot_jnode *v = NULL;
	int err = 0, is_array = arr && arr->type == PMBOT_JARRAY;

	if (!is_array && !is_string(arr))
		return 0;
	n = is_array ? arr->len : 1;
	for (i = 0; i < n && !err; i++) {
		size_t at = out->len;

		v = !is_array ? arr : i ? pmbot_jnode_next(v) : pmbot_jnode_first(arr);
		pmbot_buf_clear(&raw);
		pmbot_buf_clear(&item);
		if (milestones && v->type == PMBOT_JOBJECT) {
			const pmbot_jnode *date = pmbot_jnode_get(v, "target_date");

			err |= put_scalar(&raw, pmbot_jnode_get(v, "title"));
			if (is_string(date) && date->len) {
				err |= pmbot_buf_puts(&raw, " (");
				err |= put_scalar(&raw, date);
				err |= pmbot_buf_putc(&raw, ')');
			}
		} else if (pmbot_render__fast && is_string(v) &&
			   pmbot_render__line_is_safe(v->v.s, v->len)) {
			/* A safe line is its own item: no copies before unlinking it. */
			if (!v->len)
				continue;
			if (out->len > start)
				err |= pmbot_buf_putc(out, '\n');
			err |= pmbot_buf_puts(out, bullet);
			/* Each item is a block of its own: its code spans pair inside it. */
			err |= pmbot_text_neutralise(out, v->v.s, v->len, PMBOT_TEXT_CODE_SPANS);
			if (err)
				pmbot_buf_truncate(out, at);
			continue;
		} else {
			err |= put_scalar(&raw, v);
		}
		err |= pmbot_render_neutralise_line(&item, raw.buf, raw.len);
		if (err || !item.len)
			continue;
		if (out->len > start)
			err |= pmbot_buf_putc(out, '\n');
		err |= pmbot_buf_puts(out, bullet);
		/* Each item is a block of its own: its code spans pair inside it. */
		err |= put_unlinked(out, &item);
	}
	pmbot_buf_free(&raw);
	pmbot_buf_free(&item);
	return err ? -1 : 0;
}

static int put_block_value(pmbot_buf *out, const pmbot_jnode *first, const pmbot_jnode *second)
{
	const pmbot_jnode *v = is_string(first) && first->len ? first : second;
	pmbot_buf safe = PMBOT_BUF_INIT;
	int err;

	if (!is_string(v))
		return 0;
	err = pmbot_render_neutralise_block(&safe, v->v.s, v->len);
	if (!err)
		err = put_unlinked(out, &safe);
	pmbot_buf_free(&safe);
	return err;
}

/* The value under one heading, into `out` (left empty when there is none). */
static int field_value(pmbot_buf *out, const pmbot_form_field *field,
	const pmbot_workgraph *g, const render_ctx *c, const pmbot_render_opts *opts)
{
	const node_members *m = &c->m;

	switch (field->kind) {
	case PMBOT_FIELD_AREA:
		return put_line_value(out, m->area);
	case PMBOT_FIELD_PRIORITY:
		return put_line_value(out, m->priority);
	case PMBOT_FIELD_SIZE:
		return put_line_value(out, m->size);
	case PMBOT_FIELD_ESTIMATE:
		return put_line_value(out, m->estimate_hrs);
	case PMBOT_FIELD_RISK:
		return put_line_value(out, m->risk);
	case PMBOT_FIELD_STATUS:
		return put_line_value(out, m->status);
	case PMBOT_FIELD_BLOCKED_BY:
		return put_deps(out, g, c->node, opts);
	case PMBOT_FIELD_GOAL:
		return put_block_value(out, m->goal, m->objective);
	case PMBOT_FIELD_OBJECTIVE:
		return put_block_value(out, m->objective, m->goal);
	case PMBOT_FIELD_ACCEPTANCE:
		return put_list(out, m->acceptance_criteria, "- [ ] ", 0);
	case PMBOT_FIELD_MILESTONES:
		return put_list(out, m->milestones, "- ", 1);
	case PMBOT_FIELD_LINKS:
		return put_list(out, m->links, "- ", 0);
	case PMBOT_FIELD_ACTUAL:
	case PMBOT_FIELD_OTHER:
		break;
	}
	return 0;
}

static int render_body(render_ctx *c, pmbot_rendered_issue *out, const pmbot_workgraph *g,
	const pmbot_form *form, const pmbot_render_opts *opts, int id_ok)
{
	static const char no_rev[64] = { 0 };
	pmbot_buf body = PMBOT_BUF_INIT;
	size_t i, chars, rev_at, fields_at;
	int err = 0;

	/*
	 * The marker first: whole-section issue-form parsers read a section
	 * up to the next heading, so a marker after the last heading would be
	 * part of that field's value; before the first heading no parser
	 * reads it. The blank line after it ends the HTML comment's block
	 * for every Markdown reader, also those that end HTML at a blank line.
	 * The fields are rendered in place after it, and their rev written
	 * into the marker once they are hashed: one buffer, no copy.
	 */
	err |= pmbot_buf_grow(&body, 1024);
	err |= pmbot_buf_puts(&body, "<!-- pm-bot:id=");
	err |= pmbot_buf_puts(&body, id_ok ? c->node->stable_id : "");
	err |= pmbot_buf_puts(&body, " rev=");
	rev_at = body.len;
	err |= pmbot_buf_put(&body, no_rev, sizeof(no_rev));
	err |= pmbot_buf_puts(&body, " -->\n\n");
	fields_at = body.len;
	for (i = 0; i < form->n_fields && !err; i++) {
		const char *label = form->fields[i].label;
		size_t at;

		err |= i ? append(&body, "\n\n### ", 6) : append(&body, "### ", 4);
		err |= append(&body, label, strlen(label));
		err |= append(&body, "\n", 1);
		at = body.len;
		err |= field_value(&body, &form->fields[i], g, c, opts);
		if (!err && body.len == at)
			err |= append(&body, PMBOT_NO_RESPONSE, sizeof(PMBOT_NO_RESPONSE) - 1);
	}
	if (err)
		goto done;
	err = -1;
	if (pmbot_body_rev(out->rev, body.buf + fields_at, body.len - fields_at) < 0)
		goto done;
	memcpy(body.buf + rev_at, out->rev, sizeof(no_rev));
	/* A form without fields gives the marker alone. */
	if (body.len == fields_at)
		pmbot_buf_truncate(&body, fields_at - 2);
	if ((chars = chars_over(body.buf, body.len, PMBOT_ISSUE_BODY_MAX)))
		render_diag(c, "RENDER_BODY_TOO_LONG", NULL,
			"the issue body would be %zu characters; GitHub allows %d",
			chars, PMBOT_ISSUE_BODY_MAX);
	if ((out->body = pmbot_buf_detach(&body, &out->body_len)))
		err = 0;
done:
	pmbot_buf_free(&body);
	return err ? -1 : 0;
}

static int render_title(render_ctx *c, pmbot_rendered_issue *out, const pmbot_form *form)
{
	const pmbot_jnode *t = c->m.title;
	pmbot_buf title = PMBOT_BUF_INIT, safe = PMBOT_BUF_INIT;
	size_t chars, start;
	int err = 0;

	/* The form's prefix is pm-bot's own text; only the report's title is neutralised. */
	err |= pmbot_buf_puts(&title, form->title_prefix ? form->title_prefix : "");
	start = title.len;
	if (is_string(t))
		err |= pmbot_render_neutralise_title(&safe, t->v.s, t->len);
	/* GitHub links "#12" and "owner/repo#12" in titles too. */
	if (!err)
		err |= put_unlinked(&title, &safe);
	pmbot_buf_free(&safe);
	if (err) {
		pmbot_buf_free(&title);
		return -1;
	}
	if (title.len == start)
		render_diag(c, "RENDER_TITLE_EMPTY", "title", "the item has no title to render");
	if ((chars = chars_over(title.buf, title.len, PMBOT_ISSUE_TITLE_MAX)))
		render_diag(c, "RENDER_TITLE_TOO_LONG", "title",
			"the issue title would be %zu characters with the prefix \"%s\"; "
			"GitHub allows %d", chars, form->title_prefix ? form->title_prefix : "",
			PMBOT_ISSUE_TITLE_MAX);
	if (!(out->title = pmbot_buf_detach(&title, NULL)))
		return -1;
	return 0;
}

/*
 * The labels as render_labels() makes them: each one's bytes and NUL in
 * `text`, where each starts in `at`. The issue gets them as one block: an
 * allocation a label, and a free, were a fifth of rendering an issue.
 */
typedef struct {
	pmbot_buf text;
	size_t *at;        /* `small`, or owned when there are more */
	size_t n, alloc;
	size_t small[8];
} label_list;

static void label_list_init(label_list *l)
{
	pmbot_buf_init(&l->text, 0);
	l->at = l->small;
	l->n = 0;
	l->alloc = sizeof(l->small) / sizeof(l->small[0]);
}

static void label_list_free(label_list *l)
{
	pmbot_buf_free(&l->text);
	if (l->at != l->small)
		free(l->at);
}

/* End the label begun at `start` in l->text: 0 or -1. */
static int label_end(label_list *l, size_t start)
{
	if (l->n == l->alloc) {
		size_t *p = l->at == l->small ? NULL : l->at, n = l->alloc;

		if (!(p = pmbot_array_grow(p, &n, l->n + 1, sizeof(*p))))
			return -1;
		if (l->at == l->small)
			memcpy(p, l->small, sizeof(l->small));
		l->at = p;
		l->alloc = n;
	}
	l->at[l->n++] = start;
	return pmbot_buf_putc(&l->text, '\0');
}

static int label_put(label_list *l, const char *a, const char *b)
{
	size_t start = l->text.len;

	return pmbot_buf_puts(&l->text, a) < 0 || pmbot_buf_puts(&l->text, b) < 0 ?
		-1 : label_end(l, start);
}

/* <prefix><value> when the node has the member; `*added` says whether it did. */
static int scheme_label(label_list *l, const char *prefix, const pmbot_jnode *v, int *added)
{
	size_t start = l->text.len, prefix_len = strlen(prefix);
	char tmp[40];
	const char *s;
	size_t len;

	*added = 0;
	scalar_text(v, tmp, &s, &len);
	if (pmbot_buf_put(&l->text, prefix, prefix_len) < 0 ||
	    pmbot_render_neutralise_title(&l->text, s, len) < 0)
		return -1;
	if (l->text.len - start == prefix_len) {
		pmbot_buf_truncate(&l->text, start);
		return 0;
	}
	*added = 1;
	return label_end(l, start);
}

/* Sort `v` (n labels) by bytes: insertion for the usual few, else qsort. */
static void sort_labels(char **v, size_t n)
{
	size_t i, j;

	if (n > 16) {
		qsort(v, n, sizeof(*v), str_cmp);
		return;
	}
	for (i = 1; i < n; i++) {
		char *x = v[i];

		for (j = i; j && strcmp(v[j - 1], x) > 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/*
 * The issue's labels from `l`: one block, the pointers then the bytes
 * they point into, sorted, without repeats. 0 or -1.
 */
static int labels_take(pmbot_rendered_issue *out, const label_list *l)
{
	size_t i, w;
	char *bytes;

	if (l->n > (SIZE_MAX - l->text.len) / sizeof(char *) ||
	    !(out->labels = malloc(l->n * sizeof(char *) + l->text.len)))
		return -1;
	bytes = (char *)(out->labels + l->n);
	memcpy(bytes, l->text.buf, l->text.len);
	for (i = 0; i < l->n; i++)
		out->labels[i] = bytes + l->at[i];
	sort_labels(out->labels, l->n);
	for (i = 0, w = 0; i < l->n; i++)
		if (!w || strcmp(out->labels[i], out->labels[w - 1]))
			out->labels[w++] = out->labels[i];
	out->n_labels = w;
	return 0;
}

static int render_labels(render_ctx *c, pmbot_rendered_issue *out, const pmbot_form *form,
	const pmbot_label_scheme *s)
{
	const node_members *m = &c->m;
	const char *prefixes[5] = { s->type, s->area, s->prio, s->size, s->status };
	int have[5] = { 0, 0, 0, 0, 0 };
	label_list l;
	size_t i, k;
	int err = -1;

	label_list_init(&l);
	for (k = 0; k < 5; k++)
		if (!prefixes[k])
			prefixes[k] = "";
	/*
	 * The repository form's own type label wins ("type:bench" for a
	 * benchmark): its issues are then labelled as the organisation's are.
	 * One that only differs in case stays "type:<type>", as it always was.
	 */
	if (form->type_label && prefixes[0][0] &&
	    !strncmp(form->type_label, prefixes[0], strlen(prefixes[0])) &&
	    strcasecmp(form->type_label + strlen(prefixes[0]), c->node->type_name)) {
		if (label_put(&l, form->type_label, "") < 0)
			goto done;
	} else if (label_put(&l, prefixes[0], c->node->type_name) < 0) {
		goto done;
	}
	have[0] = 1;
	if (scheme_label(&l, prefixes[1], m->area, &have[1]) < 0 ||
	    scheme_label(&l, prefixes[2], m->priority, &have[2]) < 0 ||
	    scheme_label(&l, prefixes[3], m->size, &have[3]) < 0 ||
	    scheme_label(&l, prefixes[4], m->status, &have[4]) < 0)
		goto done;
	for (i = 0; i < form->n_labels; i++) {
		const char *f = form->labels[i];
		int owned = 0;

		/* The node's own value replaces a form default of the same kind. */
		for (k = 0; k < 5; k++)
			if (have[k] && prefixes[k][0] &&
			    !strncmp(f, prefixes[k], strlen(prefixes[k])))
				owned = 1;
		if (owned)
			continue;
		if (label_put(&l, f, "") < 0)
			goto done;
	}
	if (m->needs_human && label_put(&l, PMBOT_LABEL_NEEDS_HUMAN, "") < 0)
		goto done;
	if (labels_take(out, &l) < 0)
		goto done;
	for (i = 0; i < out->n_labels; i++) {
		size_t chars = chars_over(out->labels[i], strlen(out->labels[i]), PMBOT_LABEL_MAX);

		if (chars)
			render_diag(c, "RENDER_LABEL_TOO_LONG", NULL,
				"label \"%s\" is %zu characters; GitHub allows %d",
				out->labels[i], chars, PMBOT_LABEL_MAX);
	}
	err = 0;
done:
	label_list_free(&l);
	return err;
}

void pmbot_rendered_issue_free(pmbot_rendered_issue *issue)
{
	free(issue->title);
	free(issue->body);
	free(issue->labels);
	memset(issue, 0, sizeof(*issue));
}

int pmbot_render_issue(pmbot_rendered_issue *out, const pmbot_workgraph *g,
	const pmbot_wg_node *node, const pmbot_form *form,
	const pmbot_render_opts *opts, pmbot_diag_list *diags)
{
	static const pmbot_label_scheme def = PMBOT_LABEL_SCHEME_DEFAULT;
	render_ctx c = { node, diags, 0, { 0 } };
	size_t errors = diags->errors;
	pmbot_form *open = NULL;
	int id_ok, err = PMBOT_ERROR;

	memset(out, 0, sizeof(*out));
	read_members(&c.m, node);
	/* An open type the repository has no form for: the task built-in, named after it. */
	if (!form) {
		if ((err = pmbot_form_builtin_open(&open, node->type_name)) < 0)
			goto done;
		err = PMBOT_ERROR;
		form = open;
		render_warn(&c, "RENDER_NO_FORM", "type",
			"the repository has no issue form for type '%s' (no form with the label "
			"%s%s): rendered with pm-bot's built-in task form", node->type_name,
			opts && opts->scheme && opts->scheme->type ? opts->scheme->type : def.type,
			node->type_name);
	}
	id_ok = node->stable_id && pmbot_text_id_safe(node->stable_id);
	if (!id_ok)
		render_diag(&c, "RENDER_UNSAFE_ID", "stable_id",
			"stable id \"%s\" cannot go into the issue marker: it has whitespace, "
			"a control character or an HTML comment delimiter",
			node->stable_id ? node->stable_id : "");
	if (render_title(&c, out, form) < 0 ||
	    render_labels(&c, out, form, opts && opts->scheme ? opts->scheme : &def) < 0 ||
	    render_body(&c, out, g, form, opts, id_ok) < 0 || c.oom)
		goto done;
	err = diags->errors > errors ? PMBOT_EINVALID : PMBOT_OK;
done:
	if (err)
		pmbot_rendered_issue_free(out);
	pmbot_form_free(open);
	return err;
}

int pmbot_render_title_strip(const char **rest, const char *title, const pmbot_form *form)
{
	const char *p = form->title_prefix ? form->title_prefix : "";
	size_t n = strlen(p);

	*rest = title;
	if (strncmp(title, p, n))
		return PMBOT_ENOTFOUND;
	*rest = title + n;
	return PMBOT_OK;
}
