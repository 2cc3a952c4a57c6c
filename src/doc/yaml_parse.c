#include "pmbot/doc.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "pmbot/buf.h"
#include "pmbot/json.h"
#include "pmbot/strmap.h"
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

_Static_assert(sizeof(json_int_t) == sizeof(long long), "json_int_t is long long");

#define TAG_PREFIX "tag:yaml.org,2002:"
#define NONE SIZE_MAX

/* A mapping or sequence being built. */
typedef struct {
	json_t *value;  /* owned until attached to its parent */
	int is_map;
	size_t base;    /* pointer length of this container */
	size_t index;   /* next sequence index */
	size_t key_off; /* pending mapping key in ctx.keys, NONE before a key */
	size_t nodes;   /* values in the subtree, itself included */
	size_t height;  /* container levels in the subtree, itself included */
	size_t anchor;  /* slot in ctx.anchors defined on this node, or NONE */
	size_t anchor_gen;
} yframe;

typedef struct {
	char *name;
	json_t *value;  /* NULL while the anchored node is still open */
	char *pointer;  /* where the anchored node is, to copy positions */
	size_t nodes;
	size_t height;
	size_t gen;     /* bumped on each (re)definition */
} yanchor;

/*
 * libyaml counts characters in mark.index but also breaks lines at NEL,
 * LS and PS; the Markdown around the block only breaks at '\n'. Positions
 * are therefore recomputed from mark.index with a cursor that only moves
 * forward (marks arrive in document order), so it costs O(n) in total.
 */
typedef struct {
	size_t index;
	size_t off;
	int line;
	int col;
} ycursor;

typedef struct {
	const char *file;
	const unsigned char *text;
	size_t len;
	int line_base;
	int col_base;
	const pmbot_limits *lim;
	pmbot_diag_list *diags;
	pmbot_srcmap *map;
	yframe *frames;
	size_t nframes;
	size_t aframes;
	yanchor *anchors;
	size_t nanchors;
	size_t aanchors;
	pmbot_strmap anchor_index; /* name -> slot + 1 */
	pmbot_buf ptr;             /* pointer of the node being read */
	pmbot_buf keys;            /* pending mapping keys, one per open mapping */
	pmbot_buf scratch;
	size_t alias_nodes;
	size_t alias_bytes;
	json_t *root;
	int documents;
	ycursor cur;
} yctx;

static void cursor_to(yctx *y, size_t index, int *line, int *col)
{
	if (index < y->cur.index)
		y->cur = (ycursor){ 0, 0, 1, 1 };
	while (y->cur.index < index && y->cur.off < y->len) {
		unsigned char ch = y->text[y->cur.off];

		y->cur.off += pmbot_utf8_seqlen(ch);
		y->cur.index++;
		if (ch == '\n') {
			y->cur.line++;
			y->cur.col = 1;
		} else {
			y->cur.col++;
		}
	}
	*line = y->cur.line;
	*col = y->cur.col;
}

/* The text position (1-based) of byte `off`. */
static void byte_pos(const yctx *y, size_t off, int *line, int *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off && i < y->len; i++) {
		if (y->text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if ((y->text[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

/* Add an error at a 1-based text line/column; returns PMBOT_EINVALID. */
__attribute__((format(printf, 6, 7)))
static int fail_at(yctx *y, const char *code, const char *path, int line, int col,
	const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	va_list ap;
	int err = PMBOT_ERROR;

	va_start(ap, fmt);
	if (pmbot_buf_vprintf(&msg, fmt, ap) < 0) {
		va_end(ap);
		goto done;
	}
	va_end(ap);
	if (pmbot_diag_add(y->diags, PMBOT_SEV_ERROR, code, y->file, path,
			y->line_base + line - 1, y->col_base + col, "%s", msg.buf) < 0)
		goto done;
	err = PMBOT_EINVALID;
done:
	pmbot_buf_free(&msg);
	return err;
}

/* Same, at a libyaml mark. `path` NULL means the current pointer. */
__attribute__((format(printf, 5, 6)))
static int fail_mark(yctx *y, const char *code, const char *path,
	const yaml_mark_t *m, const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	va_list ap;
	int line, col, err = PMBOT_ERROR;

	va_start(ap, fmt);
	if (pmbot_buf_vprintf(&msg, fmt, ap) < 0) {
		va_end(ap);
		goto done;
	}
	va_end(ap);
	cursor_to(y, m->index, &line, &col);
	err = fail_at(y, code, path ? path : y->ptr.buf, line, col, "%s", msg.buf);
done:
	pmbot_buf_free(&msg);
	return err;
}

static int map_add(yctx *y, const yaml_mark_t *m)
{
	int line, col;

	cursor_to(y, m->index, &line, &col);
	return pmbot_srcmap_addn(y->map, y->ptr.buf, y->ptr.len, y->line_base + line - 1,
		y->col_base + col) < 0 ? PMBOT_ERROR : PMBOT_OK;
}

/*
 * pmbot_json_pointer_push* with fast paths, same bytes: most keys need no
 * escaping and indices need no printf. At ~15 values per report item the
 * general functions were a third of the source map's cost.
 */
static int push_key(pmbot_buf *ptr, const char *key, size_t len)
{
	if (memchr(key, '~', len) || memchr(key, '/', len))
		return pmbot_json_pointer_push(ptr, key);
	return pmbot_buf_putc(ptr, '/') < 0 || pmbot_buf_put(ptr, key, len) < 0 ? -1 : 0;
}

static int push_index(pmbot_buf *ptr, size_t index)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + index % 10);
		index /= 10;
	} while (index);
	tmp[--i] = '/';
	return pmbot_buf_put(ptr, tmp + i, sizeof(tmp) - i);
}

/* Core-schema forms (YAML 1.2.2, 10.3.2). */

static int is_null_form(const char *s, size_t n)
{
	return n == 0 || (n == 1 && s[0] == '~') ||
		(n == 4 && (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) ||
			!memcmp(s, "NULL", 4)));
}

/* 1 true, 0 false, -1 not a bool. */
static int bool_form(const char *s, size_t n)
{
	if (n == 4 && (!memcmp(s, "true", 4) || !memcmp(s, "True", 4) ||
			!memcmp(s, "TRUE", 4)))
		return 1;
	if (n == 5 && (!memcmp(s, "false", 5) || !memcmp(s, "False", 5) ||
			!memcmp(s, "FALSE", 5)))
		return 0;
	return -1;
}

static int digit_in(char ch, int radix)
{
	int d;

	if (ch >= '0' && ch <= '9')
		d = ch - '0';
	else if (ch >= 'a' && ch <= 'f')
		d = ch - 'a' + 10;
	else if (ch >= 'A' && ch <= 'F')
		d = ch - 'A' + 10;
	else
		return -1;
	return d < radix ? d : -1;
}

/*
 * [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+. Returns 1 with `*v` set, 0 when
 * not an integer form, -1 when an integer form out of json_int_t range.
 */
static int int_form(const char *s, size_t n, json_int_t *v)
{
	unsigned long long mag = 0, lim = (unsigned long long)LLONG_MAX;
	int radix = 10, neg = 0, range = 1;
	size_t i = 0;

	if (n > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
		radix = s[1] == 'o' ? 8 : 16;
		i = 2;
	} else if (n && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == n)
		return 0;
	if (neg)
		lim++;
	for (; i < n; i++) {
		int d = digit_in(s[i], radix);

		if (d < 0)
			return 0;
		if (mag > (lim - (unsigned)d) / (unsigned)radix)
			range = 0;
		else
			mag = mag * (unsigned)radix + (unsigned)d;
	}
	if (!range)
		return -1;
	if (neg)
		*v = mag > (unsigned long long)LLONG_MAX ? LLONG_MIN : -(json_int_t)mag;
	else
		*v = (json_int_t)mag;
	return 1;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int float_form(const char *s, size_t n)
{
	size_t i = 0, d;

	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	if (i < n && s[i] == '.') {
		for (d = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	} else {
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
		if (i < n && s[i] == '.')
			for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
				;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			i++;
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	return i == n;
}

/* [-+]?(\.inf|\.Inf|\.INF) | \.nan|\.NaN|\.NAN */
static int inf_nan_form(const char *s, size_t n)
{
	if (n == 4 && (!memcmp(s, ".nan", 4) || !memcmp(s, ".NaN", 4) ||
			!memcmp(s, ".NAN", 4)))
		return 1;
	if (n == 5 && (s[0] == '-' || s[0] == '+')) {
		s++;
		n--;
	}
	return n == 4 && (!memcmp(s, ".inf", 4) || !memcmp(s, ".Inf", 4) ||
		!memcmp(s, ".INF", 4));
}

/*
 * strtod follows LC_NUMERIC; swap '.' for the locale's radix character the
 * way jansson does, so a caller's setlocale() cannot change the value.
 * 1 with `*d` set, 0 when out of range, -1 out of memory.
 */
static int to_double(yctx *y, const char *s, size_t n, double *d)
{
	const char *radix = localeconv()->decimal_point;
	char *end;
	size_t i;

	pmbot_buf_clear(&y->scratch);
	for (i = 0; i < n; i++) {
		int err = s[i] == '.' ? pmbot_buf_puts(&y->scratch, radix) :
			pmbot_buf_putc(&y->scratch, s[i]);

		if (err < 0)
			return -1;
	}
	errno = 0;
	*d = strtod(y->scratch.buf, &end);
	if (*end || (errno == ERANGE && fabs(*d) > 1.0) || !isfinite(*d))
		return 0;
	return 1;
}

/* "!!int" for a standard tag, the tag as resolved otherwise. */
#define TAG_FMT "%s%s"
#define TAG_ARGS(tag) (tag_std(tag) ? "!!" : ""), ((tag) + (tag_std(tag) ? sizeof(TAG_PREFIX) - 1 : 0))

static int tag_std(const char *tag)
{
	return !strncmp(tag, TAG_PREFIX, sizeof(TAG_PREFIX) - 1);
}

static int tag_is(const char *tag, const char *name)
{
	size_t n = sizeof(TAG_PREFIX) - 1;

	return !strncmp(tag, TAG_PREFIX, n) && !strcmp(tag + n, name);
}

/* What a scalar's tag asks for; WANT_ANY is the core schema. */
typedef enum {
	WANT_ANY,
	WANT_STR,
	WANT_NULL,
	WANT_BOOL,
	WANT_INT,
	WANT_FLOAT
} want;

static int scalar_want(yctx *y, const yaml_event_t *ev, want *w)
{
	const char *tag = (const char *)ev->data.scalar.tag;

	/* Only untagged plain scalars resolve; "!" is YAML's "a string". */
	if (!tag)
		*w = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? WANT_ANY : WANT_STR;
	else if (!strcmp(tag, "!") || tag_is(tag, "str"))
		*w = WANT_STR;
	else if (tag_is(tag, "null"))
		*w = WANT_NULL;
	else if (tag_is(tag, "bool"))
		*w = WANT_BOOL;
	else if (tag_is(tag, "int"))
		*w = WANT_INT;
	else if (tag_is(tag, "float"))
		*w = WANT_FLOAT;
	else if (tag_is(tag, "map") || tag_is(tag, "seq"))
		return fail_mark(y, "REPORT_PARSE_YAML", NULL, &ev->start_mark,
			"tag " TAG_FMT " on a scalar", TAG_ARGS(tag));
	else
		return fail_mark(y, "REPORT_PARSE_YAML", NULL, &ev->start_mark,
			"unsupported tag " TAG_FMT, TAG_ARGS(tag));
	return PMBOT_OK;
}

static int make_string(const char *s, size_t n, json_t **out)
{
	/* The input passed pmbot_utf8_valid and libyaml escapes encode whole
	 * code points, so jansson need not check again. */
	*out = json_stringn_nocheck(s, n);
	return *out ? PMBOT_OK : PMBOT_ERROR;
}

/*
 * Resolve a scalar event to a new JSON value in `*out`: the core schema
 * for untagged plain scalars, strings for quoted and block ones, and the
 * standard tags as written.
 */
static int resolve_scalar(yctx *y, const yaml_event_t *ev, json_t **out)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	const yaml_mark_t *m = &ev->start_mark;
	json_int_t iv;
	double dv;
	int b, rc;
	want w;

	*out = NULL;
	if (memchr(s, '\0', n))
		return fail_mark(y, "INVALID_UTF8", NULL, m,
			"a scalar holds U+0000, which a report string cannot");
	if ((rc = scalar_want(y, ev, &w)) < 0)
		return rc;
	if (w == WANT_STR)
		return make_string(s, n, out);
	if ((w == WANT_ANY || w == WANT_NULL) && is_null_form(s, n)) {
		*out = json_null();
		return PMBOT_OK;
	}
	if ((w == WANT_ANY || w == WANT_BOOL) && (b = bool_form(s, n)) >= 0) {
		*out = json_boolean(b);
		return PMBOT_OK;
	}
	if ((w == WANT_ANY || w == WANT_INT) && (rc = int_form(s, n, &iv)) != 0) {
		if (rc < 0)
			return fail_mark(y, "REPORT_PARSE_YAML", NULL, m,
				"integer %.*s is out of range", (int)n, s);
		*out = json_integer(iv);
		return *out ? PMBOT_OK : PMBOT_ERROR;
	}
	if ((w == WANT_ANY || w == WANT_FLOAT) && float_form(s, n)) {
		if ((rc = to_double(y, s, n, &dv)) <= 0)
			return rc < 0 ? PMBOT_ERROR : fail_mark(y, "REPORT_PARSE_YAML", NULL, m,
				"number %.*s is out of range", (int)n, s);
		*out = json_real(dv);
		return *out ? PMBOT_OK : PMBOT_ERROR;
	}
	if ((w == WANT_ANY || w == WANT_FLOAT) && inf_nan_form(s, n))
		return fail_mark(y, "REPORT_PARSE_YAML", NULL, m,
			"%.*s is not a finite number, which JSON cannot hold", (int)n, s);
	switch (w) {
	case WANT_NULL:
		return fail_mark(y, "REPORT_PARSE_YAML", NULL, m,
			"!!null value must be empty, ~ or null");
	case WANT_BOOL:
		return fail_mark(y, "REPORT_PARSE_YAML", NULL, m,
			"!!bool value must be true or false");
	case WANT_INT:
		return fail_mark(y, "REPORT_PARSE_YAML", NULL, m,
			"!!int value is not an integer");
	case WANT_FLOAT:
		return fail_mark(y, "REPORT_PARSE_YAML", NULL, m,
			"!!float value is not a number");
	default:
		return make_string(s, n, out);
	}
}

/* A collection tag must be absent, "!" or the matching standard tag. */
static int check_collection_tag(yctx *y, const yaml_event_t *ev, const char *tag,
	const char *kind)
{
	if (!tag || !strcmp(tag, "!") || tag_is(tag, kind))
		return PMBOT_OK;
	if (tag_is(tag, "str") || tag_is(tag, "int") || tag_is(tag, "float") ||
	    tag_is(tag, "bool") || tag_is(tag, "null") || tag_is(tag, "map") ||
	    tag_is(tag, "seq"))
		return fail_mark(y, "REPORT_PARSE_YAML", NULL, &ev->start_mark,
			"tag " TAG_FMT " on a %s", TAG_ARGS(tag),
			!strcmp(kind, "map") ? "mapping" : "sequence");
	return fail_mark(y, "REPORT_PARSE_YAML", NULL, &ev->start_mark,
		"unsupported tag " TAG_FMT, TAG_ARGS(tag));
}

static yanchor *find_anchor(const yctx *y, const char *name)
{
	void *slot;

	if (!pmbot_strmap_get(&y->anchor_index, name, &slot))
		return NULL;
	return &y->anchors[(uintptr_t)slot - 1];
}

/*
 * Define (or redefine: the latest definition wins) anchor `name`. Its
 * value stays NULL until the node is complete. Sets `*slot`.
 */
static int define_anchor(yctx *y, const char *name, size_t *slot)
{
	yanchor *a = find_anchor(y, name);
	char *pointer = NULL, *copy = NULL;
	int err = PMBOT_ERROR;

	if (!(pointer = strdup(y->ptr.buf)))
		goto done;
	if (a) {
		json_decref(a->value);
		free(a->pointer);
		a->value = NULL;
		a->pointer = pointer;
		pointer = NULL;
		a->gen++;
		*slot = (size_t)(a - y->anchors);
		err = PMBOT_OK;
		goto done;
	}
	if (y->nanchors == y->aanchors) {
		size_t n = y->aanchors ? y->aanchors * 2 : 8;
		yanchor *p = realloc(y->anchors, n * sizeof(*p));

		if (!p)
			goto done;
		y->anchors = p;
		y->aanchors = n;
	}
	if (!(copy = strdup(name)) || pmbot_strmap_put(&y->anchor_index, copy,
			(void *)(uintptr_t)(y->nanchors + 1), NULL) < 0)
		goto done;
	a = &y->anchors[y->nanchors];
	memset(a, 0, sizeof(*a));
	a->name = copy;
	a->pointer = pointer;
	copy = pointer = NULL;
	*slot = y->nanchors++;
	err = PMBOT_OK;
done:
	free(copy);
	free(pointer);
	return err;
}

/*
 * The node of anchor `slot` is complete. When the name was redefined inside
 * the node (`&a [&a 1]`), the later definition wins, as in serialization
 * order, and `gen` no longer matches.
 */
static void complete_anchor(yctx *y, size_t slot, size_t gen, json_t *value,
	size_t nodes, size_t height)
{
	yanchor *a = &y->anchors[slot];

	if (a->gen != gen)
		return;
	json_decref(a->value);
	a->value = json_incref(value);
	a->nodes = nodes;
	a->height = height;
}

/* Take `value` (a new reference) into the open container, or as the root. */
static int attach(yctx *y, json_t *value, size_t nodes, size_t height)
{
	yframe *top;

	if (!y->nframes) {
		y->root = value;
		pmbot_buf_clear(&y->ptr);
		return PMBOT_OK;
	}
	top = &y->frames[y->nframes - 1];
	if (top->is_map) {
		/* Keys come from validated text (see make_string). */
		if (json_object_set_new_nocheck(top->value, y->keys.buf + top->key_off,
				value) < 0)
			return PMBOT_ERROR;
		pmbot_buf_truncate(&y->keys, top->key_off);
		top->key_off = NONE;
	} else {
		if (json_array_append_new(top->value, value) < 0)
			return PMBOT_ERROR;
		top->index++;
	}
	top->nodes += nodes;
	if (height + 1 > top->height)
		top->height = height + 1;
	pmbot_buf_truncate(&y->ptr, top->base);
	return PMBOT_OK;
}

/* The key text of a scalar value: strings as they are, others as JSON. */
static int key_text(yctx *y, const json_t *v)
{
	if (json_is_string(v))
		return pmbot_buf_put(&y->keys, json_string_value(v), json_string_length(v));
	return pmbot_json_canonical(&y->keys, v);
}

/* String and key bytes of `v`; `left` + 1 once they pass `left` (the walk stops). */
static size_t value_bytes(const json_t *v, size_t left)
{
	const char *key;
	json_t *m;
	size_t i, n = 0;

	if (json_is_string(v))
		return json_string_length(v);
	if (json_is_array(v)) {
		json_array_foreach(v, i, m) {
			n += value_bytes(m, left - n);
			if (n > left)
				return left + 1;
		}
	} else if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, m) {
			n += strlen(key);
			if (n <= left)
				n += value_bytes(m, left - n);
			if (n > left)
				return left + 1;
		}
	}
	return n;
}

/*
 * Charge an alias's copy of `v` to the byte budget: the node budget alone
 * lets a few aliases of one long string multiply the text (9,000 copies of
 * a 10 KB string is 90 MB from a 73 KB file), and each copy is held again
 * by the document and the map. Recursion is bounded by the depth limit.
 */
static int spend_alias_bytes(yctx *y, const json_t *v, const yaml_mark_t *m)
{
	size_t left = y->lim->max_alias_bytes - y->alias_bytes;
	size_t n = value_bytes(v, left);

	if (n > left)
		return fail_mark(y, "YAML_ALIAS_LIMIT", NULL, m,
			"aliases expand to more than %zu bytes of text", y->lim->max_alias_bytes);
	y->alias_bytes += n;
	return PMBOT_OK;
}

/* A mapping key event: resolve it, refuse duplicates, record its position. */
static int read_key(yctx *y, const yaml_event_t *ev)
{
	yframe *top = &y->frames[y->nframes - 1];
	json_t *v = NULL;
	size_t off = y->keys.len, slot;
	int err, first = 0;

	if (ev->type == YAML_MAPPING_START_EVENT || ev->type == YAML_SEQUENCE_START_EVENT)
		return fail_mark(y, "REPORT_PARSE_YAML", NULL, &ev->start_mark,
			"a mapping key must be a scalar");
	if (ev->type == YAML_ALIAS_EVENT) {
		const char *name = (const char *)ev->data.alias.anchor;
		yanchor *a = find_anchor(y, name);

		if (!a)
			return fail_mark(y, "REPORT_PARSE_YAML", NULL, &ev->start_mark,
				"alias *%s has no anchor before it", name);
		if (!a->value || json_is_object(a->value) || json_is_array(a->value))
			return fail_mark(y, "REPORT_PARSE_YAML", NULL, &ev->start_mark,
				"a mapping key must be a scalar (*%s is a collection)", name);
		if (y->alias_nodes >= y->lim->max_alias_nodes)
			return fail_mark(y, "YAML_ALIAS_LIMIT", NULL, &ev->start_mark,
				"aliases expand to more than %zu nodes", y->lim->max_alias_nodes);
		if ((err = spend_alias_bytes(y, a->value, &ev->start_mark)) < 0)
			return err;
		y->alias_nodes++;
		v = json_incref(a->value);
	} else if ((err = resolve_scalar(y, ev, &v)) < 0) {
		return err;
	}
	err = PMBOT_ERROR;
	if (ev->type == YAML_SCALAR_EVENT && ev->data.scalar.anchor) {
		if (define_anchor(y, (const char *)ev->data.scalar.anchor, &slot) < 0)
			goto done;
		complete_anchor(y, slot, y->anchors[slot].gen, v, 1, 0);
	}
	if (key_text(y, v) < 0 || pmbot_buf_putc(&y->keys, '\0') < 0)
		goto done;
	if (push_key(&y->ptr, y->keys.buf + off, y->keys.len - 1 - off) < 0)
		goto done;
	if (json_object_get(top->value, y->keys.buf + off)) {
		/* The first occurrence was recorded at exactly this pointer. */
		pmbot_srcmap_find(y->map, y->ptr.buf, &first, NULL);
		err = fail_mark(y, "DUPLICATE_KEY", NULL, &ev->start_mark,
			"duplicate key; first defined on line %d", first);
		goto done;
	}
	if ((err = map_add(y, &ev->start_mark)) < 0)
		goto done;
	top->key_off = off;
	err = PMBOT_OK;
done:
	json_decref(v);
	return err;
}

/*
 * Give every value inside an alias's copy the position of the value it
 * was copied from, so diagnostics about the copy point at real text.
 */
static int copy_positions(yctx *y, const yanchor *a)
{
	typedef struct {
		const json_t *v;
		void *iter;
		size_t index;
		size_t src_base;
		size_t dst_base;
	} wframe;
	pmbot_buf src = PMBOT_BUF_INIT;
	wframe *stack = NULL;
	size_t n = 0, base = y->ptr.len;
	int err = PMBOT_ERROR;

	if (!json_is_object(a->value) && !json_is_array(a->value))
		return PMBOT_OK;
	if (!(stack = malloc((a->height + 1) * sizeof(*stack))) ||
	    pmbot_buf_puts(&src, a->pointer) < 0)
		goto done;
	stack[n++] = (wframe){ a->value, json_object_iter((json_t *)a->value), 0,
		src.len, y->ptr.len };
	while (n) {
		wframe *f = &stack[n - 1];
		const json_t *child;
		int line, col, rc;

		pmbot_buf_truncate(&src, f->src_base);
		pmbot_buf_truncate(&y->ptr, f->dst_base);
		if (json_is_object(f->v)) {
			const char *key;

			if (!f->iter) {
				n--;
				continue;
			}
			key = json_object_iter_key(f->iter);
			child = json_object_iter_value(f->iter);
			f->iter = json_object_iter_next((json_t *)f->v, f->iter);
			rc = push_key(&src, key, strlen(key)) |
				push_key(&y->ptr, key, strlen(key));
		} else {
			if (f->index >= json_array_size(f->v)) {
				n--;
				continue;
			}
			child = json_array_get(f->v, f->index);
			rc = push_index(&src, f->index) | push_index(&y->ptr, f->index);
			f->index++;
		}
		if (rc < 0)
			goto done;
		pmbot_srcmap_find(y->map, src.buf, &line, &col);
		if (pmbot_srcmap_addn(y->map, y->ptr.buf, y->ptr.len, line, col) < 0)
			goto done;
		if ((json_is_object(child) || json_is_array(child)) && n <= a->height)
			stack[n++] = (wframe){ child, json_object_iter((json_t *)child), 0,
				src.len, y->ptr.len };
	}
	err = PMBOT_OK;
done:
	pmbot_buf_truncate(&y->ptr, base);
	free(stack);
	pmbot_buf_free(&src);
	return err;
}

static int read_alias(yctx *y, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	yanchor *a = find_anchor(y, name);
	json_t *copy;
	int err;

	if (!a)
		return fail_mark(y, "REPORT_PARSE_YAML", NULL, &ev->start_mark,
			"alias *%s has no anchor before it", name);
	if (!a->value)
		return fail_mark(y, "REPORT_PARSE_YAML", NULL, &ev->start_mark,
			"alias *%s is inside the node it names", name);
	if (a->nodes > y->lim->max_alias_nodes - y->alias_nodes)
		return fail_mark(y, "YAML_ALIAS_LIMIT", NULL, &ev->start_mark,
			"aliases expand to more than %zu nodes", y->lim->max_alias_nodes);
	if (y->nframes + a->height > y->lim->max_depth)
		return fail_mark(y, "INPUT_TOO_DEEP", NULL, &ev->start_mark,
			"alias *%s nests deeper than %zu levels", name, y->lim->max_depth);
	if ((err = spend_alias_bytes(y, a->value, &ev->start_mark)) < 0)
		return err;
	y->alias_nodes += a->nodes;
	if ((err = copy_positions(y, a)) < 0)
		return err;
	if (!(copy = json_deep_copy(a->value)))
		return PMBOT_ERROR;
	return attach(y, copy, a->nodes, a->height);
}

static int open_collection(yctx *y, const yaml_event_t *ev)
{
	int is_map = ev->type == YAML_MAPPING_START_EVENT;
	const char *tag = (const char *)(is_map ? ev->data.mapping_start.tag :
		ev->data.sequence_start.tag);
	const char *anchor = (const char *)(is_map ? ev->data.mapping_start.anchor :
		ev->data.sequence_start.anchor);
	yframe *f;
	int err;

	if ((err = check_collection_tag(y, ev, tag, is_map ? "map" : "seq")) < 0)
		return err;
	if (y->nframes + 1 > y->lim->max_depth)
		return fail_mark(y, "INPUT_TOO_DEEP", NULL, &ev->start_mark,
			"nesting deeper than %zu levels", y->lim->max_depth);
	if (y->nframes == y->aframes) {
		size_t n = y->aframes ? y->aframes * 2 : 16;
		yframe *p = realloc(y->frames, n * sizeof(*p));

		if (!p)
			return PMBOT_ERROR;
		y->frames = p;
		y->aframes = n;
	}
	f = &y->frames[y->nframes];
	memset(f, 0, sizeof(*f));
	f->is_map = is_map;
	f->base = y->ptr.len;
	f->key_off = NONE;
	f->nodes = 1;
	f->height = 1;
	f->anchor = NONE;
	if (!(f->value = is_map ? json_object() : json_array()))
		return PMBOT_ERROR;
	y->nframes++;
	if (anchor) {
		if (define_anchor(y, anchor, &f->anchor) < 0)
			return PMBOT_ERROR;
		f->anchor_gen = y->anchors[f->anchor].gen;
	}
	return PMBOT_OK;
}

static int close_collection(yctx *y)
{
	yframe f;

	if (!y->nframes)
		return PMBOT_ERROR;
	f = y->frames[--y->nframes];

	if (f.anchor != NONE)
		complete_anchor(y, f.anchor, f.anchor_gen, f.value, f.nodes, f.height);
	return attach(y, f.value, f.nodes, f.height);
}

/* A node event in value position (or the root). */
static int read_value(yctx *y, const yaml_event_t *ev)
{
	json_t *v;
	size_t slot;
	int err;

	if (y->nframes && !y->frames[y->nframes - 1].is_map &&
	    push_index(&y->ptr, y->frames[y->nframes - 1].index) < 0)
		return PMBOT_ERROR;
	/* A member's entry is its key's, recorded by read_key. */
	if ((!y->nframes || !y->frames[y->nframes - 1].is_map) &&
	    map_add(y, &ev->start_mark) < 0)
		return PMBOT_ERROR;
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return read_alias(y, ev);
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT:
		return open_collection(y, ev);
	default:
		break;
	}
	if ((err = resolve_scalar(y, ev, &v)) < 0)
		return err;
	if (ev->data.scalar.anchor) {
		if (define_anchor(y, (const char *)ev->data.scalar.anchor, &slot) < 0) {
			json_decref(v);
			return PMBOT_ERROR;
		}
		complete_anchor(y, slot, y->anchors[slot].gen, v, 1, 0);
	}
	return attach(y, v, 1, 0);
}

static int handle(yctx *y, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (y->documents++)
			return fail_mark(y, "REPORT_PARSE_YAML", "", &ev->start_mark,
				"a second YAML document; a report block holds exactly one");
		return PMBOT_OK;
	case YAML_STREAM_END_EVENT:
		if (!y->documents)
			return fail_mark(y, "REPORT_PARSE_YAML", "", &ev->start_mark,
				"no YAML document");
		return PMBOT_OK;
	case YAML_SCALAR_EVENT:
	case YAML_ALIAS_EVENT:
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT:
		if (y->nframes && y->frames[y->nframes - 1].is_map &&
		    y->frames[y->nframes - 1].key_off == NONE)
			return read_key(y, ev);
		return read_value(y, ev);
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		return close_collection(y);
	default:
		return PMBOT_OK;
	}
}

static int parser_error(yctx *y, const yaml_parser_t *p)
{
	int line, col;

	if (p->error == YAML_MEMORY_ERROR)
		return PMBOT_ERROR;
	if (p->error == YAML_READER_ERROR) {
		/* The reader runs ahead of the events: the current path is not
		 * where the bad character is. */
		byte_pos(y, p->problem_offset, &line, &col);
		if (p->problem_value >= 0)
			return fail_at(y, "REPORT_PARSE_YAML", "", line, col,
				"%s (#x%x)", p->problem ? p->problem : "cannot read",
				(unsigned)p->problem_value);
		return fail_at(y, "REPORT_PARSE_YAML", "", line, col, "%s",
			p->problem ? p->problem : "cannot read");
	}
	if (p->context) {
		int cline, ccol;

		cursor_to(y, p->context_mark.index, &cline, &ccol);
		return fail_mark(y, "REPORT_PARSE_YAML", NULL, &p->problem_mark,
			"%s (%s at line %d, column %d)", p->problem ? p->problem : "syntax error",
			p->context, y->line_base + cline - 1, y->col_base + ccol);
	}
	return fail_mark(y, "REPORT_PARSE_YAML", NULL, &p->problem_mark, "%s",
		p->problem ? p->problem : "syntax error");
}

static void ctx_free(yctx *y)
{
	size_t i;

	for (i = 0; i < y->nframes; i++)
		json_decref(y->frames[i].value);
	free(y->frames);
	for (i = 0; i < y->nanchors; i++) {
		free(y->anchors[i].name);
		free(y->anchors[i].pointer);
		json_decref(y->anchors[i].value);
	}
	free(y->anchors);
	pmbot_strmap_free(&y->anchor_index);
	pmbot_buf_free(&y->ptr);
	pmbot_buf_free(&y->keys);
	pmbot_buf_free(&y->scratch);
	json_decref(y->root);
}

/* The checks both loaders share, on the raw bytes. */
static int check_bytes(yctx *y)
{
	size_t bad = 0;
	int line = 0, col = 0;

	if (y->len > y->lim->max_bytes)
		return fail_at(y, "INPUT_TOO_LARGE", "", 1, 1,
			"%zu bytes of YAML; the limit is %zu", y->len, y->lim->max_bytes);
	if (!pmbot_utf8_valid((const char *)y->text, y->len, &bad, &line, &col)) {
		if (y->text[bad])
			return fail_at(y, "INVALID_UTF8", "", line, col,
				"invalid UTF-8 (byte 0x%02x)", y->text[bad]);
		return fail_at(y, "INVALID_UTF8", "", line, col, "NUL byte");
	}
	return PMBOT_OK;
}

int pmbot_yaml_parse(json_t **out, pmbot_srcmap *map, const char *file,
	const char *text, size_t len, int line_base, int col_base,
	const pmbot_limits *lim, pmbot_diag_list *diags)
{
	pmbot_srcmap *own = NULL;
	pmbot_limits deflim;
	yaml_parser_t parser;
	int parser_ready = 0, err;
	yctx y;

	*out = NULL;
	if (!text && len)
		return PMBOT_ERROR;
	if (!lim) {
		pmbot_limits_default(&deflim);
		lim = &deflim;
	}
	memset(&y, 0, sizeof(y));
	y.text = (const unsigned char *)(text ? text : "");
	y.file = file;
	y.len = len;
	y.line_base = line_base;
	y.col_base = col_base;
	y.lim = lim;
	y.diags = diags;
	pmbot_buf_init(&y.ptr, SIZE_MAX / 2);
	pmbot_buf_init(&y.keys, SIZE_MAX / 2);
	pmbot_buf_init(&y.scratch, 0);
	if ((err = check_bytes(&y)) < 0)
		goto done;
	y.cur = (ycursor){ 0, 0, 1, 1 };
	/* Duplicate keys name the line of the first: that needs a map. */
	err = PMBOT_ERROR;
	if (!map && !(map = own = pmbot_srcmap_new()))
		goto done;
	y.map = map;
	if (!yaml_parser_initialize(&parser))
		goto done;
	parser_ready = 1;
	yaml_parser_set_input_string(&parser, y.text, len);
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	for (;;) {
		yaml_event_t ev;
		yaml_event_type_t type;

		if (!yaml_parser_parse(&parser, &ev)) {
			err = parser_error(&y, &parser);
			goto done;
		}
		err = handle(&y, &ev);
		type = ev.type;
		yaml_event_delete(&ev);
		if (err < 0)
			goto done;
		if (type == YAML_STREAM_END_EVENT)
			break;
	}
	*out = y.root;
	y.root = NULL;
	err = PMBOT_OK;
done:
	if (parser_ready)
		yaml_parser_delete(&parser);
	ctx_free(&y);
	pmbot_srcmap_free(own);
	return err;
}
