#include "state_int.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/array.h"
#include "pmbot/datetime.h"
#include "pmbot/doc.h"
#include "pmbot/json.h"
#include "pmbot/strmap.h"
#include "pmbot/banned.h"

/*
 * Reading a State file: parsed with source positions, every value checked,
 * every problem a diagnostic with its JSON Pointer and line.
 */

/* The most keys an object of a State has (an issue's thirteen). */
#define KNOWN_MAX 16

typedef struct {
	const char *file;
	const pmbot_jdoc *doc;
	/*
	 * Positions by pointer, made from `doc` for the first diagnostic: a
	 * State (megabytes of pm-bot's own writing) almost never has one.
	 */
	pmbot_srcmap *map;
	pmbot_diag_list *diags;
	pmbot_buf path;      /* JSON Pointer of the value being checked */
	pmbot_buf show[2];   /* scratch for user text quoted in messages */
	pmbot_buf scratch;
	pmbot_jshare share;  /* the scalars the items' values share: a few options and numbers */
	/*
	 * The members of the object check_keys() went through last, by their
	 * key's place in its table: member() takes a key of the table from
	 * there rather than scanning the object again (an issue has thirteen
	 * members and all are read: 130,000 scans for 10,000 issues).
	 */
	const pmbot_jnode *known_obj;
	const char *const *known;
	size_t n_known;
	const pmbot_jnode *known_at[KNOWN_MAX];
	int oom;             /* set by anything that ran out of memory; checked once at the end */
} pctx;

/* The document is read through these, named as the jansson calls they replace (NULL-safe alike). */
typedef pmbot_jnode jv;

static int j_is(const jv *v, int type)
{
	return v && v->type == type;
}

#define j_is_string(v) j_is((v), PMBOT_JSTRING)
#define j_is_null(v) j_is((v), PMBOT_JNULL)
#define j_is_object(v) j_is((v), PMBOT_JOBJECT)
#define j_is_array(v) j_is((v), PMBOT_JARRAY)
#define j_is_integer(v) j_is((v), PMBOT_JINTEGER)
#define j_is_real(v) j_is((v), PMBOT_JREAL)
#define j_is_number(v) (j_is_integer(v) || j_is_real(v))

static const char *j_str(const jv *v)
{
	return j_is_string(v) ? v->v.s : NULL;
}

static size_t j_len(const jv *v)
{
	return j_is_string(v) ? v->len : 0;
}

static size_t j_size(const jv *v)
{
	return j_is_array(v) ? v->len : 0;
}

/* Element i of an array walked in order: `cur` is element i - 1 (NULL for i 0). */
static const jv *j_step(const jv *arr, const jv *cur)
{
	return cur ? pmbot_jnode_next(cur) : pmbot_jnode_first(arr);
}

/* A parsed issue and where it came from, so later checks can point at it. */
typedef struct {
	pmbot_issue is;
	size_t repo_index;
	size_t issue_index;
} issue_entry;

#define REQ 1
#define NULLABLE 2
#define NONEMPTY 4

/* Line and column of `path` (or its nearest ancestor), as the source map has them. */
static void find_pos(pctx *c, const char *path, int *line, int *column)
{
	if (!c->map && pmbot_jdoc_srcmap(&c->map, c->doc) < 0)
		c->oom = 1;
	pmbot_srcmap_find(c->map, path, line, column);
}

/* User text goes into messages through pmbot_diag_show(). */
static const char *show(pctx *c, int slot, const char *s)
{
	const char *r = pmbot_diag_show(&c->show[slot], s, SHOW_MAX);

	if (r[0] == '?' && !r[1] && strcmp(s, "?"))
		c->oom = 1;
	return r;
}

static void vreport(pctx *c, pmbot_severity sev, const char *code, const char *path,
	const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static void vreport(pctx *c, pmbot_severity sev, const char *code, const char *path,
	const char *fmt, va_list ap)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	int line = 0, column = 0;

	if (pmbot_buf_vprintf(&msg, fmt, ap) < 0) {
		c->oom = 1;
		goto done;
	}
	find_pos(c, path, &line, &column);
	if (pmbot_diag_add(c->diags, sev, code, c->file, path, line, column, "%s", msg.buf) < 0)
		c->oom = 1;
done:
	pmbot_buf_free(&msg);
}

static void report(pctx *c, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void report_at(pctx *c, pmbot_severity sev, const char *code, const char *path,
	const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void report(pctx *c, const char *code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(c, PMBOT_SEV_ERROR, code, c->path.buf, fmt, ap);
	va_end(ap);
}

static void report_at(pctx *c, pmbot_severity sev, const char *code, const char *path,
	const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(c, sev, code, path, fmt, ap);
	va_end(ap);
}

static int line_of(pctx *c, const char *path)
{
	int line = 0;

	find_pos(c, path, &line, NULL);
	return line;
}

static size_t push_key(pctx *c, const char *key)
{
	size_t mark = c->path.len;

	if (pmbot_json_pointer_push(&c->path, key) < 0)
		c->oom = 1;
	return mark;
}

static size_t push_index(pctx *c, size_t index)
{
	size_t mark = c->path.len;

	if (pmbot_json_pointer_push_index(&c->path, index) < 0)
		c->oom = 1;
	return mark;
}

static void pop(pctx *c, size_t mark)
{
	pmbot_buf_truncate(&c->path, mark);
}

/*
 * A string for the state: the document's own (its block goes to the state,
 * pmbot_jdoc_take_strings) or a literal, never freed on its own.
 */
static char *keep_str(const char *s)
{
	return (char *)s;
}

static void type_error(pctx *c, const jv *v, const char *expected)
{
	report(c, "STATE_SCHEMA", "expected %s, found %s", expected, pmbot_jnode_type_name(v));
}

/*
 * Report every member of `obj` not in `known`. pm-bot writes keys sorted
 * and the tables are sorted, so the search starts after the last match
 * and mostly hits at once.
 */
static void check_keys(pctx *c, const jv *obj, const char *const *known, size_t n)
{
	const jv *m = NULL;
	size_t i, t, hint = 0, mark;
	uint32_t k;

	c->known_obj = n <= KNOWN_MAX ? obj : NULL;
	c->known = known;
	c->n_known = n;
	if (c->known_obj)
		memset(c->known_at, 0, n * sizeof(c->known_at[0]));
	for (k = 0; k < obj->len; k++) {
		m = j_step(obj, m);
		for (t = 0, i = hint; t < n; t++, i = i + 1 < n ? i + 1 : 0)
			if (!strcmp(m->key, known[i]))
				break;
		if (t < n) {
			/* The parser let no key repeat: this is the member. */
			if (c->known_obj)
				c->known_at[i] = m;
			hint = i + 1 < n ? i + 1 : 0;
			continue;
		}
		mark = push_key(c, m->key);
		report(c, "STATE_SCHEMA", "unknown key `%s`", show(c, 0, m->key));
		pop(c, mark);
	}
}

/* Member `key` of `obj` (borrowed), or NULL; a missing required key is reported. */
static const jv *member(pctx *c, const jv *obj, const char *key, int flags)
{
	const jv *v = NULL;
	size_t i = 0;

	/*
	 * By pointer: the key is a literal, mostly merged with the table's
	 * own; one that is not is found by the scan, as any other.
	 */
	if (obj && obj == c->known_obj)
		while (i < c->n_known && c->known[i] != key)
			i++;
	if (obj && obj == c->known_obj && i < c->n_known)
		v = c->known_at[i];
	else
		v = pmbot_jnode_get(obj, key);

	if (!v && (flags & REQ))
		report(c, "STATE_SCHEMA", "missing required key `%s`", key);
	return v;
}

typedef int (*str_check)(const char *s);

/*
 * The string member `key` (borrowed), or NULL when it is absent, null
 * (NULLABLE) or was reported: not a string, empty (NONEMPTY) or refused by
 * `check`, whose verdict names `what` the string must be.
 */
static const char *get_str(pctx *c, const jv *obj, const char *key, int flags,
	str_check check, const char *what)
{
	const jv *v = member(c, obj, key, flags);
	const char *s = NULL;
	size_t mark;

	if (!v)
		return NULL;
	/* The pointer is only for a message: a good value (nearly all) goes without it. */
	if (j_is_string(v) && (!(flags & NONEMPTY) || j_len(v)) &&
	    (!check || check(j_str(v))))
		return j_str(v);
	mark = push_key(c, key);
	if (j_is_null(v) && (flags & NULLABLE))
		;
	else if (!j_is_string(v))
		type_error(c, v, flags & NULLABLE ? "a string or null" : "a string");
	else if ((flags & NONEMPTY) && !j_len(v))
		report(c, "STATE_SCHEMA", "`%s` must not be empty", key);
	else if (check && !check(j_str(v)))
		report(c, "STATE_SCHEMA", "`%s` is not %s", show(c, 0, j_str(v)), what);
	else
		s = j_str(v);
	pop(c, mark);
	return s;
}

/* An integer in min..max; reals with no fraction count, as in JSON Schema. 1 when set. */
static int int_value(const jv *v, long long min, long long max, long long *out)
{
	double d;

	if (j_is_integer(v)) {
		if (v->v.i < min || v->v.i > max)
			return 0;
		*out = v->v.i;
		return 1;
	}
	if (!j_is_real(v))
		return 0;
	d = v->v.r;
	if (!pmbot_json_is_whole(d) || d < (double)min || d > (double)max)
		return 0;
	*out = (long long)d;
	return 1;
}

static int get_int(pctx *c, const jv *obj, const char *key, long long min, long long max,
	long long *out)
{
	const jv *v = member(c, obj, key, REQ);
	size_t mark;

	if (!v)
		return 0;
	/* As in get_str(): the pointer is made only for a message. */
	if (j_is_number(v) && int_value(v, min, max, out))
		return 1;
	mark = push_key(c, key);
	if (!j_is_number(v))
		type_error(c, v, "an integer");
	else
		report(c, "STATE_SCHEMA", "`%s` must be an integer from %lld to %lld", key, min, max);
	pop(c, mark);
	return 0;
}

static int is_open_closed(const char *s)
{
	return !strcmp(s, "open") || !strcmp(s, "closed");
}

static int is_author_type(const char *s)
{
	return !strcmp(s, "Bot") || !strcmp(s, "User");
}

static int is_time(const char *s)
{
	long long t;

	return pmbot_datetime_parse(&t, s) == 0;
}

static int is_login(const char *s)
{
	return pmbot_state__valid_owner(s, strlen(s));
}

static int is_field_type(const char *s)
{
	size_t i;

	for (i = 0; i < N_OF(pmbot_state__field_type_names); i++)
		if (!strcmp(s, pmbot_state__field_type_names[i]))
			return 1;
	return 0;
}

/*
 * qsort, after one pass that finds the array already in order: pm-bot
 * writes a State sorted, so the sorts of a read mostly have nothing to do.
 * Every order here is total (ties go by position), so the result is the same.
 */
static void sort_unless_sorted(void *base, size_t n, size_t size,
	int (*cmp)(const void *, const void *))
{
	const char *p = base;
	size_t i;

	for (i = 1; i < n; i++)
		if (cmp(p + (i - 1) * size, p + i * size) > 0) {
			qsort(base, n, size, cmp);
			return;
		}
}

typedef struct {
	const char *s;
	size_t index;
} indexed_str;

static int indexed_bytes_cmp(const void *pa, const void *pb)
{
	const indexed_str *a = pa, *b = pb;
	int c = strcmp(a->s, b->s);

	return c ? c : (a->index > b->index) - (a->index < b->index);
}

static int indexed_ref_cmp(const void *pa, const void *pb)
{
	const indexed_str *a = pa, *b = pb;
	int c = pmbot_state__ref_cmp(a->s, b->s);

	return c ? c : (a->index > b->index) - (a->index < b->index);
}

/*
 * The array member `key` of strings passing `check`, as a sorted malloc'd
 * array (`cmp` decides the order and what counts as a duplicate; each
 * duplicate is reported where it appears the second time). NULL with
 * `*n` 0 when absent or empty.
 */
static char **get_str_set(pctx *c, const jv *obj, const char *key, str_check check,
	const char *what, int (*sort_cmp)(const void *, const void *),
	int (*cmp)(const char *, const char *), const char *dup_what, size_t *n_out)
{
	const jv *v = member(c, obj, key, 0), *e = NULL;
	indexed_str *tmp = NULL;
	char **out = NULL;
	size_t n, i, k = 0, mark = c->path.len, mark2;

	*n_out = 0;
	if (!v)
		return NULL;
	/* As in get_str(): the pointer gets `key` only for a message. */
	if (!j_is_array(v)) {
		push_key(c, key);
		type_error(c, v, "an array of strings");
		goto done;
	}
	if (!(n = j_size(v)))
		goto done;
	/*
	 * malloc, not calloc: glibc's calloc skips the thread cache, and only
	 * the first k and *n_out entries are ever read. n is a count of the
	 * document's nodes: the products cannot overflow.
	 */
	if (!(tmp = malloc(n * sizeof(*tmp))) || !(out = malloc(n * sizeof(*out)))) {
		c->oom = 1;
		goto done;
	}
	for (i = 0; i < n; i++) {
		e = j_step(v, e);

		/* As in get_str(): the pointer is made only for a message. */
		if (j_is_string(e) && j_len(e) &&
		    (!check || check(j_str(e)))) {
			tmp[k++] = (indexed_str){ j_str(e), i };
			continue;
		}
		if (c->path.len == mark)
			push_key(c, key);
		mark2 = push_index(c, i);
		if (!j_is_string(e))
			type_error(c, e, "a string");
		else if (!j_len(e))
			report(c, "STATE_SCHEMA", "an entry of `%s` must not be empty", key);
		else if (check && !check(j_str(e)))
			report(c, "STATE_SCHEMA", "`%s` is not %s",
				show(c, 0, j_str(e)), what);
		else
			tmp[k++] = (indexed_str){ j_str(e), i };
		pop(c, mark2);
	}
	sort_unless_sorted(tmp, k, sizeof(*tmp), sort_cmp);
	for (i = 0; i < k; i++) {
		if (i && !cmp(tmp[i - 1].s, tmp[i].s)) {
			size_t first = tmp[i - 1].index;

			if (c->path.len == mark)
				push_key(c, key);
			mark2 = push_index(c, tmp[i].index);
			report(c, "STATE_DUPLICATE", "%s `%s` is listed twice (first as entry %zu)",
				dup_what, show(c, 0, tmp[i].s), first);
			pop(c, mark2);
			continue;
		}
		if (!(out[*n_out] = keep_str(tmp[i].s)))
			break;
		(*n_out)++;
	}
done:
	pop(c, mark);
	free(tmp);
	if (!*n_out) {
		free(out);
		out = NULL;
	}
	return out;
}

/* Sorted, as pm-bot writes them (check_keys). */
static const char *const issue_keys[] = {
	"author", "author_type", "blocked_by", "body", "database_id", "issue_type", "labels",
	"node_id", "number", "parent", "state", "title", "updated_at"
};

/* The issue at c->path into `is` (zeroed first). 1 when it is valid. */
static int parse_issue(pctx *c, const jv *v, const char *repo, pmbot_issue *is)
{
	size_t errors = c->diags->errors, i, mark;
	const jv *blocked, *b;
	const char *s;
	long long n = 0;

	memset(is, 0, sizeof(*is));
	if (!j_is_object(v)) {
		type_error(c, v, "an object");
		return 0;
	}
	check_keys(c, v, issue_keys, N_OF(issue_keys));
	if (get_int(c, v, "number", 1, NUMBER_MAX, &n))
		is->number = (long)n;
	get_int(c, v, "database_id", 1, ID_MAX, &is->database_id);
	is->node_id = keep_str(get_str(c, v, "node_id", REQ | NONEMPTY, NULL, NULL));
	is->title = keep_str(get_str(c, v, "title", REQ | NONEMPTY, NULL, NULL));
	s = get_str(c, v, "body", NULLABLE, NULL, NULL);
	is->body = keep_str(s ? s : "");
	is->labels = get_str_set(c, v, "labels", NULL, NULL, indexed_bytes_cmp, strcmp, "label",
		&is->n_labels);
	s = get_str(c, v, "state", REQ, is_open_closed, "`open` or `closed`");
	is->closed = s && !strcmp(s, "closed");
	is->author = keep_str(get_str(c, v, "author", REQ | NONEMPTY, NULL, NULL));
	s = get_str(c, v, "author_type", REQ, is_author_type, "`Bot` or `User`");
	is->author_is_bot = s && !strcmp(s, "Bot");
	is->updated_at = keep_str(get_str(c, v, "updated_at", REQ, is_time,
		"an RFC 3339 date-time like 2026-11-02T10:00:00Z"));
	is->parent = keep_str(get_str(c, v, "parent", NULLABLE, pmbot_state__valid_ref,
		"an issue ref OWNER/NAME#NUMBER"));
	is->blocked_by = get_str_set(c, v, "blocked_by", pmbot_state__valid_ref,
		"an issue ref OWNER/NAME#NUMBER", indexed_ref_cmp, pmbot_state__ref_cmp, "blocker",
		&is->n_blocked_by);
	is->issue_type = keep_str(get_str(c, v, "issue_type", NULLABLE | NONEMPTY, NULL, NULL));
	is->repo = keep_str(repo);
	if (repo && is->number) {
		size_t rn = strlen(repo), n2;
		long num;

		if (is->parent && !pmbot_state__ref_split(is->parent, &n2, &num) &&
		    !pmbot_state__key_cmp(repo, rn, is->number, is->parent, n2, num)) {
			mark = push_key(c, "parent");
			report(c, "STATE_SCHEMA", "an issue cannot be its own parent");
			pop(c, mark);
		}
		blocked = pmbot_jnode_get(v, "blocked_by");
		for (i = 0, b = NULL; j_is_array(blocked) && i < j_size(blocked); i++) {
			s = j_str(b = j_step(blocked, b));
			if (!s || pmbot_state__ref_split(s, &n2, &num) ||
			    pmbot_state__key_cmp(repo, rn, is->number, s, n2, num))
				continue;
			mark = push_key(c, "blocked_by");
			push_index(c, i);
			report(c, "STATE_SCHEMA", "an issue cannot block itself");
			pop(c, mark);
		}
	}
	return repo && c->diags->errors == errors && !c->oom;
}

static int issue_cmp(const pmbot_issue *a, const pmbot_issue *b)
{
	return pmbot_state__key_cmp(a->repo, strlen(a->repo), a->number, b->repo, strlen(b->repo), b->number);
}

/* Document order of two entries. */
static int origin_cmp(const issue_entry *a, const issue_entry *b)
{
	if (a->repo_index != b->repo_index)
		return a->repo_index < b->repo_index ? -1 : 1;
	return (a->issue_index > b->issue_index) - (a->issue_index < b->issue_index);
}

static int entry_cmp(const void *pa, const void *pb)
{
	const issue_entry *a = pa, *b = pb;
	int c = issue_cmp(&a->is, &b->is);

	return c ? c : origin_cmp(a, b);
}

static int doc_order_cmp(const void *pa, const void *pb)
{
	return origin_cmp(*(const issue_entry *const *)pa, *(const issue_entry *const *)pb);
}

static int database_id_cmp(const void *pa, const void *pb)
{
	const issue_entry *a = *(const issue_entry *const *)pa, *b = *(const issue_entry *const *)pb;

	if (a->is.database_id != b->is.database_id)
		return a->is.database_id < b->is.database_id ? -1 : 1;
	return origin_cmp(a, b);
}

/* A lower-cased copy of `s` kept in `keys` (freed by the caller) for case-insensitive maps. */
static const char *folded_key(pctx *c, char ***keys, size_t *n, size_t *alloc, const char *s)
{
	char **grown, *k;
	size_t i;

	if (!(grown = pmbot_array_grow(*keys, alloc, *n + 1, sizeof(*grown))) || !(k = strdup(s))) {
		if (grown)
			*keys = grown;
		c->oom = 1;
		return NULL;
	}
	*keys = grown;
	for (i = 0; k[i]; i++)
		k[i] = (char)pmbot_state__fold((unsigned char)k[i]);
	(*keys)[(*n)++] = k;
	return k;
}

static void issue_path(pctx *c, const issue_entry *e, const char *key)
{
	pmbot_buf_clear(&c->scratch);
	if (pmbot_buf_printf(&c->scratch, "/repositories/%zu/issues/%zu", e->repo_index,
			e->issue_index) < 0 || (key && pmbot_json_pointer_push(&c->scratch, key) < 0))
		c->oom = 1;
}

/*
 * Duplicate issue numbers, database ids and node ids among the entries
 * (sorted by issue). Each repeat is reported where it appears, naming the
 * line of the first one in the document.
 */
static void check_issue_duplicates(pctx *c, const issue_entry *e, size_t n)
{
	pmbot_strmap nodes = PMBOT_STRMAP_INIT;
	const issue_entry **order = NULL;
	size_t i, group = 0;
	int first;

	for (i = 1; i < n; i++) {
		if (issue_cmp(&e[i - 1].is, &e[i].is)) {
			group = i;
			continue;
		}
		issue_path(c, &e[group], "number");
		first = line_of(c, c->scratch.buf);
		issue_path(c, &e[i], "number");
		report_at(c, PMBOT_SEV_ERROR, "STATE_DUPLICATE", c->scratch.buf,
			"issue %s#%ld is listed twice (first at line %d)",
			show(c, 0, e[i].is.repo), e[i].is.number, first);
	}
	if (!n)
		return;
	if (!(order = calloc(n, sizeof(*order)))) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < n; i++)
		order[i] = &e[i];
	sort_unless_sorted(order, n, sizeof(*order), database_id_cmp);
	for (i = 1, group = 0; i < n; i++) {
		if (order[i]->is.database_id != order[i - 1]->is.database_id) {
			group = i;
			continue;
		}
		issue_path(c, order[group], "database_id");
		first = line_of(c, c->scratch.buf);
		issue_path(c, order[i], "database_id");
		report_at(c, PMBOT_SEV_ERROR, "STATE_DUPLICATE", c->scratch.buf,
			"database_id %lld is used twice (first at line %d)",
			order[i]->is.database_id, first);
	}
	sort_unless_sorted(order, n, sizeof(*order), doc_order_cmp);
	for (i = 0; i < n; i++) {
		void *prev = NULL;
		int r = pmbot_strmap_put(&nodes, order[i]->is.node_id, (void *)order[i], &prev);

		if (r < 0) {
			c->oom = 1;
			break;
		}
		if (r == 0)
			continue;
		issue_path(c, prev, "node_id");
		first = line_of(c, c->scratch.buf);
		issue_path(c, order[i], "node_id");
		report_at(c, PMBOT_SEV_ERROR, "STATE_DUPLICATE", c->scratch.buf,
			"node_id `%s` is used twice (first at line %d)",
			show(c, 0, order[i]->is.node_id), first);
	}
	free(order);
	pmbot_strmap_free(&nodes);
}

/* Issues of every repository entry, into `*entries` (unsorted). */
static void parse_repositories(pctx *c, const jv *repos, issue_entry **entries, size_t *n)
{
	pmbot_strmap seen = PMBOT_STRMAP_INIT;
	char **keys = NULL;
	size_t n_keys = 0, alloc_keys = 0, total = 0, ri, ii, mark, mark2, mark3;
	static const char *const repo_keys[] = { "issues", "repo" };
	const jv *r;

	*entries = NULL;
	*n = 0;
	mark = push_key(c, "repositories");
	if (!j_is_array(repos)) {
		type_error(c, repos, "an array");
		goto done;
	}
	for (ri = 0, r = NULL; ri < j_size(repos); ri++) {
		const jv *issues = pmbot_jnode_get(r = j_step(repos, r), "issues");

		total += j_is_array(issues) ? j_size(issues) : 0;
	}
	if (total && !(*entries = calloc(total, sizeof(**entries)))) {
		c->oom = 1;
		goto done;
	}
	for (ri = 0, r = NULL; ri < j_size(repos) && !c->oom; ri++) {
		const jv *issues, *is = NULL;
		const char *repo, *key;
		void *prev;

		r = j_step(repos, r);
		mark2 = push_index(c, ri);
		if (!j_is_object(r)) {
			type_error(c, r, "an object");
			pop(c, mark2);
			continue;
		}
		check_keys(c, r, repo_keys, N_OF(repo_keys));
		repo = get_str(c, r, "repo", REQ, pmbot_state__valid_repo, "a repository OWNER/NAME");
		if (repo && (key = folded_key(c, &keys, &n_keys, &alloc_keys, repo)) &&
		    pmbot_strmap_put(&seen, key, (void *)(size_t)ri, &prev) == 1) {
			mark3 = push_key(c, "repo");
			report(c, "STATE_DUPLICATE", "repository `%s` is listed twice (first as entry %zu)",
				show(c, 0, repo), (size_t)prev);
			pop(c, mark3);
			repo = NULL;
		}
		issues = member(c, r, "issues", REQ);
		if (issues && !j_is_array(issues)) {
			mark3 = push_key(c, "issues");
			type_error(c, issues, "an array");
			pop(c, mark3);
		}
		mark3 = push_key(c, "issues");
		for (ii = 0; j_is_array(issues) && ii < j_size(issues); ii++) {
			issue_entry *e = &(*entries)[*n];
			size_t mark4 = push_index(c, ii);

			if (parse_issue(c, is = j_step(issues, is), repo, &e->is)) {
				e->repo_index = ri;
				e->issue_index = ii;
				(*n)++;
			} else {
				pmbot_state__issue_drop(&e->is, 0);
			}
			pop(c, mark4);
		}
		pop(c, mark3);
		pop(c, mark2);
	}
done:
	pop(c, mark);
	pmbot_strmap_free(&seen);
	pmbot_state__strings_free(keys, n_keys);
}

static const char *const field_keys[] = { "id", "name", "options", "type" };
static const char *const option_keys[] = { "id", "name" };

/* The options of a single-select field at c->path; 1 when valid. */
static int parse_options(pctx *c, const jv *opts, pmbot_pfield *f)
{
	const jv *cur = NULL;
	pmbot_strmap ids = PMBOT_STRMAP_INIT, names = PMBOT_STRMAP_INIT;
	size_t errors = c->diags->errors, i, mark, mark2;

	mark = push_key(c, "options");
	if (!j_is_array(opts)) {
		type_error(c, opts, "an array");
		goto done;
	}
	if (j_size(opts) &&
	    !(f->options = calloc(j_size(opts), sizeof(*f->options)))) {
		c->oom = 1;
		goto done;
	}
	for (i = 0; i < j_size(opts) && !c->oom; i++) {
		const jv *o = cur = j_step(opts, cur);
		const char *id, *name;
		void *prev;

		mark2 = push_index(c, i);
		if (!j_is_object(o)) {
			type_error(c, o, "an object");
			pop(c, mark2);
			continue;
		}
		check_keys(c, o, option_keys, N_OF(option_keys));
		id = get_str(c, o, "id", REQ | NONEMPTY, NULL, NULL);
		name = get_str(c, o, "name", REQ | NONEMPTY, NULL, NULL);
		if (id && pmbot_strmap_put(&ids, id, (void *)i, &prev) == 1)
			report(c, "STATE_DUPLICATE", "option id `%s` is used twice in this field "
				"(first by option %zu)", show(c, 0, id), (size_t)prev);
		if (name && pmbot_strmap_put(&names, name, (void *)i, &prev) == 1)
			report(c, "STATE_DUPLICATE", "option `%s` is listed twice in this field "
				"(first as option %zu)", show(c, 0, name), (size_t)prev);
		if (id && name) {
			f->options[f->n_options].id = keep_str(id);
			f->options[f->n_options++].name = keep_str(name);
		}
		pop(c, mark2);
	}
done:
	pop(c, mark);
	pmbot_strmap_free(&ids);
	pmbot_strmap_free(&names);
	return c->diags->errors == errors;
}

static void parse_fields(pctx *c, const jv *fields, pmbot_project *p)
{
	const jv *cur = NULL;
	pmbot_strmap ids = PMBOT_STRMAP_INIT, names = PMBOT_STRMAP_INIT;
	char **keys = NULL;
	size_t n_keys = 0, alloc_keys = 0, i, mark, mark2;

	mark = push_key(c, "fields");
	if (!j_is_array(fields)) {
		type_error(c, fields, "an array");
		goto done;
	}
	if (j_size(fields) &&
	    !(p->fields = calloc(j_size(fields), sizeof(*p->fields)))) {
		c->oom = 1;
		goto done;
	}
	for (i = 0; i < j_size(fields) && !c->oom; i++) {
		const jv *o = cur = j_step(fields, cur), *opts;
		pmbot_pfield *f = &p->fields[p->n_fields];
		size_t errors = c->diags->errors, t, mark3;
		const char *id, *name, *type, *key;
		void *prev;

		mark2 = push_index(c, i);
		if (!j_is_object(o)) {
			type_error(c, o, "an object");
			pop(c, mark2);
			continue;
		}
		check_keys(c, o, field_keys, N_OF(field_keys));
		id = get_str(c, o, "id", REQ | NONEMPTY, NULL, NULL);
		name = get_str(c, o, "name", REQ | NONEMPTY, NULL, NULL);
		type = get_str(c, o, "type", REQ, is_field_type,
			"a field type: text, number, single_select or date");
		if (id && pmbot_strmap_put(&ids, id, (void *)i, &prev) == 1) {
			mark3 = push_key(c, "id");
			report(c, "STATE_DUPLICATE", "field id `%s` is used twice (first by field %zu)",
				show(c, 0, id), (size_t)prev);
			pop(c, mark3);
		}
		if (name && (key = folded_key(c, &keys, &n_keys, &alloc_keys, name)) &&
		    pmbot_strmap_put(&names, key, (void *)i, &prev) == 1) {
			mark3 = push_key(c, "name");
			report(c, "STATE_DUPLICATE", "field `%s` is listed twice, ignoring case "
				"(first as field %zu)", show(c, 0, name), (size_t)prev);
			pop(c, mark3);
		}
		for (t = 0; type && t < N_OF(pmbot_state__field_type_names) && strcmp(type, pmbot_state__field_type_names[t]); t++)
			;
		f->type = (pmbot_pfield_type)t;
		opts = pmbot_jnode_get(o, "options");
		if (type && f->type == PMBOT_PFIELD_SINGLE_SELECT) {
			if (member(c, o, "options", REQ))
				parse_options(c, opts, f);
		} else if (type && opts) {
			mark3 = push_key(c, "options");
			report(c, "STATE_SCHEMA", "only single_select fields have options");
			pop(c, mark3);
		}
		f->id = keep_str(id);
		f->name = keep_str(name);
		if (c->diags->errors == errors && !c->oom)
			p->n_fields++;
		else
			pmbot_state__field_drop(f, 0);
		pop(c, mark2);
	}
done:
	pop(c, mark);
	pmbot_strmap_free(&ids);
	pmbot_strmap_free(&names);
	pmbot_state__strings_free(keys, n_keys);
}

/* Does `v` fit field `f`? On a mismatch, report at c->path. */
/* 1 when check_value() has nothing to say of `v`: it fits field `f`. */
static int value_fits(const pmbot_pfield *f, const jv *v)
{
	size_t i;

	switch (f->type) {
	case PMBOT_PFIELD_NUMBER:
		return j_is_number(v);
	case PMBOT_PFIELD_TEXT:
		return j_is_string(v);
	case PMBOT_PFIELD_DATE:
		return j_is_string(v) && pmbot_state__valid_date(j_str(v));
	case PMBOT_PFIELD_SINGLE_SELECT:
		/* The first byte tells most options apart without a call. */
		for (i = 0; j_is_string(v) && i < f->n_options; i++)
			if (f->options[i].name[0] == j_str(v)[0] && !strcmp(f->options[i].name, j_str(v)))
				return 1;
		return 0;
	}
	return 0;
}

/* Report at c->path how `v` does not fit field `f` (value_fits() said so). */
static void check_value(pctx *c, const pmbot_pfield *f, const jv *v)
{
	size_t i;

	switch (f->type) {
	case PMBOT_PFIELD_NUMBER:
		if (!j_is_number(v))
			type_error(c, v, "a number (number field)");
		return;
	case PMBOT_PFIELD_TEXT:
		if (!j_is_string(v))
			type_error(c, v, "a string (text field)");
		return;
	case PMBOT_PFIELD_DATE:
		if (!j_is_string(v))
			type_error(c, v, "a date string (date field)");
		else if (!pmbot_state__valid_date(j_str(v)))
			report(c, "STATE_SCHEMA", "`%s` is not a date YYYY-MM-DD",
				show(c, 0, j_str(v)));
		return;
	case PMBOT_PFIELD_SINGLE_SELECT:
		if (!j_is_string(v)) {
			type_error(c, v, "an option name (single_select field)");
			return;
		}
		pmbot_buf_clear(&c->scratch);
		for (i = 0; i < f->n_options; i++)
			if (pmbot_buf_printf(&c->scratch, "%s`%s`", i ? ", " : "",
					show(c, 0, f->options[i].name)) < 0)
				c->oom = 1;
		report(c, "STATE_SCHEMA", "`%s` is not an option of field `%s`; options: %s",
			show(c, 0, j_str(v)), show(c, 1, f->name),
			f->n_options ? c->scratch.buf : "none");
		return;
	}
}

static void check_values(pctx *c, const jv *values, const pmbot_project *p)
{
	const jv *v = NULL;
	const char *key;
	size_t mark, i;
	uint32_t k;

	for (k = 0; k < values->len; k++) {
		const pmbot_pfield *f = NULL;

		v = j_step(values, v);
		key = v->key;
		for (i = 0; i < p->n_fields && !f; i++)
			if (p->fields[i].name[0] == key[0] && !strcmp(p->fields[i].name, key))
				f = &p->fields[i];
		/* The pointer is made only for a message: nearly every value fits. */
		if (f && value_fits(f, v))
			continue;
		mark = push_key(c, key);
		if (f) {
			check_value(c, f, v);
		} else {
			for (i = 0; i < p->n_fields && !pmbot_state__ieq(p->fields[i].name, key); i++)
				;
			if (i < p->n_fields)
				report(c, "STATE_SCHEMA", "no field is called `%s`; did you mean `%s`?",
					show(c, 0, key), show(c, 1, p->fields[i].name));
			else
				report(c, "STATE_SCHEMA", "no field is called `%s`", show(c, 0, key));
		}
		pop(c, mark);
	}
}

typedef struct {
	pmbot_pitem it;
	size_t index;
	size_t repo_len; /* `it.issue` split once: its repo's length, its number */
	long number;
} item_entry;

/* pmbot_state__ref_cmp() of the two issue refs, then the input order. */
static int item_entry_cmp(const void *pa, const void *pb)
{
	const item_entry *a = pa, *b = pb;
	int c = pmbot_state__key_cmp(a->it.issue, a->repo_len, a->number, b->it.issue,
		b->repo_len, b->number);

	return c ? c : (a->index > b->index) - (a->index < b->index);
}

static const char *const item_keys[] = { "id", "issue", "values" };

static void parse_items(pctx *c, const jv *items, pmbot_project *p)
{
	const jv *cur = NULL;
	pmbot_strmap ids = PMBOT_STRMAP_INIT;
	item_entry *e = NULL;
	size_t n = 0, i, group, mark, mark2, mark3;
	int first;

	mark = push_key(c, "items");
	if (!j_is_array(items)) {
		type_error(c, items, "an array");
		goto done;
	}
	if (j_size(items) && !(e = calloc(j_size(items), sizeof(*e)))) {
		c->oom = 1;
		goto done;
	}
	for (i = 0; i < j_size(items) && !c->oom; i++) {
		const jv *o = cur = j_step(items, cur), *values;
		size_t errors = c->diags->errors;
		const char *id, *issue;
		void *prev;

		mark2 = push_index(c, i);
		if (!j_is_object(o)) {
			type_error(c, o, "an object");
			pop(c, mark2);
			continue;
		}
		check_keys(c, o, item_keys, N_OF(item_keys));
		id = get_str(c, o, "id", REQ | NONEMPTY, NULL, NULL);
		issue = get_str(c, o, "issue", REQ, pmbot_state__valid_ref, "an issue ref OWNER/NAME#NUMBER");
		if (id && pmbot_strmap_put(&ids, id, (void *)i, &prev) == 1) {
			mark3 = push_key(c, "id");
			report(c, "STATE_DUPLICATE", "item id `%s` is used twice (first by item %zu)",
				show(c, 0, id), (size_t)prev);
			pop(c, mark3);
		}
		values = pmbot_jnode_get(o, "values");
		mark3 = push_key(c, "values");
		if (values && !j_is_object(values))
			type_error(c, values, "an object");
		else if (values)
			check_values(c, values, p);
		pop(c, mark3);
		/* A valid ref (get_str checked it) splits. */
		if (c->diags->errors == errors && !c->oom &&
		    !pmbot_state__ref_split(issue, &e[n].repo_len, &e[n].number)) {
			e[n].it.id = keep_str(id);
			e[n].it.issue = keep_str(issue);
			/* Shared, not copied: the rest of the parsed file is released after the read. */
			/* The one piece of the document a state keeps as jansson values. */
			if (values ? pmbot_jnode_to_json_shared(&e[n].it.values, values, &c->share) < 0 :
			    !(e[n].it.values = json_object()))
				c->oom = 1;
			e[n++].index = i;
		}
		pop(c, mark2);
	}
	if (n)
		sort_unless_sorted(e, n, sizeof(*e), item_entry_cmp);
	for (i = 1, group = 0; i < n; i++) {
		if (pmbot_state__key_cmp(e[i - 1].it.issue, e[i - 1].repo_len, e[i - 1].number,
			e[i].it.issue, e[i].repo_len, e[i].number)) {
			group = i;
			continue;
		}
		pmbot_buf_clear(&c->scratch);
		if (pmbot_buf_printf(&c->scratch, "/project/items/%zu/issue", e[group].index) < 0)
			c->oom = 1;
		first = line_of(c, c->scratch.buf);
		pmbot_buf_clear(&c->scratch);
		if (pmbot_buf_printf(&c->scratch, "/project/items/%zu/issue", e[i].index) < 0)
			c->oom = 1;
		report_at(c, PMBOT_SEV_ERROR, "STATE_DUPLICATE", c->scratch.buf,
			"issue `%s` has two project items (first at line %d)",
			show(c, 0, e[i].it.issue), first);
	}
	if (n && !(p->items = calloc(n, sizeof(*p->items))))
		c->oom = 1;
	for (i = 0; i < n; i++) {
		if (p->items)
			p->items[p->n_items++] = e[i].it;
		else
			pmbot_state__item_drop(&e[i].it, 0);
	}
done:
	pop(c, mark);
	free(e);
	pmbot_strmap_free(&ids);
}

static const char *const project_keys[] = { "fields", "items", "node_id", "number", "owner" };

static pmbot_project *parse_project(pctx *c, const jv *v)
{
	pmbot_project *p;
	const jv *m;
	long long n = 0;
	size_t mark = push_key(c, "project");

	if (!j_is_object(v)) {
		type_error(c, v, "an object or null");
		pop(c, mark);
		return NULL;
	}
	if (!(p = calloc(1, sizeof(*p)))) {
		c->oom = 1;
		pop(c, mark);
		return NULL;
	}
	check_keys(c, v, project_keys, N_OF(project_keys));
	p->owner = keep_str(get_str(c, v, "owner", REQ, is_login, "a GitHub login"));
	if (get_int(c, v, "number", 1, NUMBER_MAX, &n))
		p->number = (long)n;
	p->node_id = keep_str(get_str(c, v, "node_id", REQ | NONEMPTY, NULL, NULL));
	if ((m = pmbot_jnode_get(v, "fields")))
		parse_fields(c, m, p);
	if ((m = pmbot_jnode_get(v, "items")))
		parse_items(c, m, p);
	pop(c, mark);
	return p;
}

/* The issues of one repository: st->issues[lo, hi), sorted by number. */
typedef struct {
	const char *repo;      /* as a ref spells it; NULL until the first lookup */
	size_t len;
	size_t lo;
	size_t hi;
} repo_run;

/*
 * pmbot_state_issue() for the refs of a valid state (checked already, so
 * split without checking again), remembering the last repository's run:
 * refs mostly name issues of the repository they are in, and then a
 * lookup is a binary search on numbers.
 */
static int has_issue(const pmbot_state *st, repo_run *run, const char *ref)
{
	const char *hash = strchr(ref, '#');
	size_t n, lo, hi;
	long num = 0;
	const char *p;

	if (!hash)
		return 0;
	n = (size_t)(hash - ref);
	for (p = hash + 1; *p; p++)
		num = num * 10 + (*p - '0');
	if (!run->repo || pmbot_state__fold_cmp(ref, n, run->repo, run->len)) {
		for (lo = 0, hi = st->n_issues; lo < hi;) {
			size_t mid = lo + (hi - lo) / 2;

			if (pmbot_state__issue_key_cmp(ref, n, 0, &st->issues[mid]) > 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		run->lo = lo;
		for (hi = st->n_issues; lo < hi;) {
			size_t mid = lo + (hi - lo) / 2;

			if (pmbot_state__issue_key_cmp(ref, n, LONG_MAX, &st->issues[mid]) > 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		run->hi = lo;
		run->repo = ref;
		run->len = n;
	}
	for (lo = run->lo, hi = run->hi; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->issues[mid].number == num)
			return 1;
		if (st->issues[mid].number < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* STATE_REF warnings, walking the document in its own order. */
static void check_refs(pctx *c, const pmbot_state *st, const jv *root)
{
	repo_run run = { NULL, 0, 0, 0 };
	const jv *repos = pmbot_jnode_get(root, "repositories"), *items, *r = NULL, *it = NULL;
	size_t ri, ii, k;

	for (ri = 0; ri < j_size(repos); ri++) {
		const jv *issues = pmbot_jnode_get(r = j_step(repos, r), "issues"), *is = NULL;

		for (ii = 0; ii < j_size(issues); ii++) {
			const jv *blocked, *b = NULL;

			is = j_step(issues, is);
			const char *parent = j_str(pmbot_jnode_get(is, "parent"));

			if (parent && !has_issue(st, &run, parent)) {
				pmbot_buf_clear(&c->scratch);
				if (pmbot_buf_printf(&c->scratch, "/repositories/%zu/issues/%zu/parent",
						ri, ii) < 0)
					c->oom = 1;
				report_at(c, PMBOT_SEV_WARNING, "STATE_REF", c->scratch.buf,
					"parent `%s` is not in the state", show(c, 0, parent));
			}
			blocked = pmbot_jnode_get(is, "blocked_by");
			for (k = 0; k < j_size(blocked); k++) {
				const char *ref = j_str(b = j_step(blocked, b));

				if (has_issue(st, &run, ref))
					continue;
				pmbot_buf_clear(&c->scratch);
				if (pmbot_buf_printf(&c->scratch,
						"/repositories/%zu/issues/%zu/blocked_by/%zu", ri, ii, k) < 0)
					c->oom = 1;
				report_at(c, PMBOT_SEV_WARNING, "STATE_REF", c->scratch.buf,
					"blocker `%s` is not in the state", show(c, 0, ref));
			}
		}
	}
	items = pmbot_jnode_get(pmbot_jnode_get(root, "project"), "items");
	for (k = 0; k < j_size(items); k++) {
		const char *ref = j_str(pmbot_jnode_get(it = j_step(items, it), "issue"));

		if (ref && has_issue(st, &run, ref))
			continue;
		pmbot_buf_clear(&c->scratch);
		if (pmbot_buf_printf(&c->scratch, "/project/items/%zu/issue", k) < 0)
			c->oom = 1;
		report_at(c, PMBOT_SEV_WARNING, "STATE_REF", c->scratch.buf,
			"project item for `%s`, which is not in the state", show(c, 0, ref));
	}
}

static const char *const root_keys[] = { "extra", "project", "repositories", "schema_version" };

/* Validate `root` into `st`. Diagnostics go to c->diags. */
static void validate(pctx *c, const jv *root, pmbot_state *st)
{
	issue_entry *entries = NULL;
	const jv *v;
	const char *version;
	size_t n = 0, i, mark;

	if (!j_is_object(root)) {
		type_error(c, root, "an object");
		return;
	}
	if (!(v = member(c, root, "schema_version", REQ)))
		return;
	mark = push_key(c, "schema_version");
	if (!j_is_string(v)) {
		type_error(c, v, "a string");
		pop(c, mark);
		return;
	}
	version = j_str(v);
	if (strcmp(version, STATE_SCHEMA_VERSION)) {
		report(c, "STATE_VERSION", "schema_version `%s` is not supported: this pm-bot "
			"reads " STATE_SCHEMA_VERSION, show(c, 0, version));
		pop(c, mark);
		return;
	}
	pop(c, mark);
	check_keys(c, root, root_keys, N_OF(root_keys));
	if ((v = pmbot_jnode_get(root, "repositories")))
		parse_repositories(c, v, &entries, &n);
	if ((v = pmbot_jnode_get(root, "project")) && !j_is_null(v))
		st->project = parse_project(c, v);
	if ((v = pmbot_jnode_get(root, "extra")) && !j_is_null(v)) {
		mark = push_key(c, "extra");
		if (!j_is_object(v))
			type_error(c, v, "an object or null");
		else if (pmbot_jnode_to_json(&st->extra, v) < 0)
			c->oom = 1;
		pop(c, mark);
	}
	if (n)
		sort_unless_sorted(entries, n, sizeof(*entries), entry_cmp);
	if (!c->oom)
		check_issue_duplicates(c, entries, n);
	if (n && !(st->issues = calloc(n, sizeof(*st->issues))))
		c->oom = 1;
	for (i = 0; i < n; i++) {
		if (st->issues)
			st->issues[st->n_issues++] = entries[i].is;
		else
			pmbot_state__issue_drop(&entries[i].is, 0);
	}
	st->alloc_issues = st->n_issues;
	free(entries);
	if (!c->diags->errors && !c->oom)
		check_refs(c, st, root);
}

/* `owned` (may be NULL) holds `text` and is freed once the document is parsed. */
static int parse(pmbot_state **out, const char *file, const char *text, size_t len,
	pmbot_buf *owned, pmbot_diag_list *diags)
{
	pmbot_diag_list local = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;
	pmbot_jdoc *doc = NULL;
	pmbot_limits lim;
	pctx c;
	size_t i, errors;
	int err = PMBOT_ERROR, rc;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	pmbot_buf_init(&c.path, 0);
	pmbot_buf_init(&c.show[0], 0);
	pmbot_buf_init(&c.show[1], 0);
	pmbot_buf_init(&c.scratch, 0);
	pmbot_limits_default(&lim);
	lim.max_bytes = PMBOT_STATE_MAX_BYTES;
	lim.max_depth = STATE_MAX_DEPTH;
	/*
	 * A compact document, not a jansson tree: the state keeps copies of
	 * what it needs, so the values are read once and dropped together.
	 */
	rc = pmbot_jdoc_parse(&doc, file, text, len, 1, 0, &lim, &local);
	/* The document holds all that is read from here on: its positions too. */
	if (owned)
		pmbot_buf_free(owned);
	if (rc == PMBOT_ERROR)
		goto done;
	if (rc != PMBOT_OK) {
		/* One code for "not a JSON document", whatever the parser's reason. */
		for (i = 0; i < local.count; i++)
			local.items[i].code = "STATE_PARSE";
		err = pmbot_diag_list_move(diags, &local) < 0 ? PMBOT_ERROR : PMBOT_EINVALID;
		goto done;
	}
	if (pmbot_state_new(&st) < 0)
		goto done;
	/* The state's strings are the document's: taken, not copied (keep_str). */
	st->strings = pmbot_jdoc_take_strings(doc);
	c.file = file;
	c.doc = doc;
	c.diags = &local;
	validate(&c, pmbot_jdoc_root(doc), st);
	errors = local.errors;
	if (c.oom || pmbot_diag_list_move(diags, &local) < 0)
		goto done;
	if (errors) {
		err = PMBOT_EINVALID;
		goto done;
	}
	*out = st;
	st = NULL;
	err = PMBOT_OK;
done:
	pmbot_state_free(st);
	pmbot_jdoc_free(doc);
	pmbot_srcmap_free(c.map);
	pmbot_diag_list_free(&local);
	pmbot_buf_free(&c.path);
	pmbot_buf_free(&c.show[0]);
	pmbot_buf_free(&c.show[1]);
	pmbot_buf_free(&c.scratch);
	pmbot_jshare_free(&c.share);
	return err;
}

int pmbot_state_parse(pmbot_state **out, const char *file, const char *text, size_t len,
	pmbot_diag_list *diags)
{
	return parse(out, file, text, len, NULL, diags);
}

int pmbot_state_parse_buf(pmbot_state **out, const char *file, pmbot_buf *text,
	pmbot_diag_list *diags)
{
	return parse(out, file, text->buf, text->len, text, diags);
}

int pmbot_backend_read(pmbot_state **out, pmbot_backend *b, const char *const *repos,
	size_t n_repos, const char *project_owner, long project_number, const pmbot_read_scope *scope,
	pmbot_buf *err)
{
	if (scope && b->read_scoped)
		return b->read_scoped(out, b, repos, n_repos, project_owner, project_number, scope, err);
	return b->read(out, b, repos, n_repos, project_owner, project_number, err);
}
