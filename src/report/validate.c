#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/array.h"
#include "pmbot/json.h"
#include "pmbot/report.h"
#include "pmbot/strmap.h"
#include "isodate.h"
#include "pmbot/text.h"
#include "pmbot/labels.h"
#include "pmbot/banned.h"

/*
 * ReportIR v1 validation. The schema layer mirrors
 * docs/schemas/report-ir.v1.schema.json; the rule layer runs on every item
 * whose stable_id is usable, so one bad item never hides another's errors.
 *
 * It reads the report's compact document (report->doc), JSON and YAML
 * alike: members are walked in the text's order, as the jansson tree
 * iterates them, so diagnostics come in the same order either way.
 */

typedef pmbot_jnode jnode;

static int is_string(const jnode *n)
{
	return n && n->type == PMBOT_JSTRING;
}

/* The string's bytes, or NULL when `n` is not a string. */
static const char *string_of(const jnode *n)
{
	return is_string(n) ? n->v.s : NULL;
}

/* A string with at least one byte: a usable id or reference. */
static int is_filled(const jnode *n)
{
	return is_string(n) && n->len;
}

/* Every member of container `n`, with its index `i`; none for a scalar. */
#define FOREACH_MEMBER(n, i, m) \
	for ((i) = 0, (m) = pmbot_jnode_first(n); (m); \
	     (m) = ++(i) < (n)->len ? pmbot_jnode_next(m) : NULL)

enum kind { K_EPIC = 1, K_FEATURE = 2, K_TASK = 4, K_ALL = 7 };

enum ftype {
	F_STRING,          /* non-empty string */
	F_TEXT,            /* any string */
	F_STRING_OR_NULL,
	F_NUMBER_NONNEG,
	F_STRING_LIST,
	F_MILESTONES,
	F_TASK_TYPE
};

struct field {
	const char *name;
	enum ftype type;
	unsigned kinds;
	int required;
};

/* Indices into item_fields, in its order (the order fields are checked in). */
enum {
	FI_STABLE_ID, FI_TITLE, FI_AREA, FI_PRIORITY, FI_STATUS, FI_SIZE, FI_ESTIMATE,
	FI_RISK, FI_BLOCKED_BY, FI_DEPENDS_ON, FI_LINKS, FI_ACCEPTANCE, FI_OWNERS,
	FI_OBJECTIVE, FI_MILESTONES, FI_FEATURES, FI_EPIC_ID, FI_GOAL, FI_TASKS,
	FI_FEATURE_ID, FI_TYPE
};

static const struct field item_fields[] = {
	[FI_STABLE_ID] = { "stable_id", F_STRING, K_ALL, 1 },
	[FI_TITLE] = { "title", F_STRING, K_ALL, 1 },
	[FI_AREA] = { "area", F_TEXT, K_ALL, 0 },
	[FI_PRIORITY] = { "priority", F_TEXT, K_ALL, 0 },
	[FI_STATUS] = { "status", F_TEXT, K_ALL, 0 },
	[FI_SIZE] = { "size", F_TEXT, K_ALL, 0 },
	[FI_ESTIMATE] = { "estimate_hrs", F_NUMBER_NONNEG, K_ALL, 0 },
	[FI_RISK] = { "risk", F_TEXT, K_ALL, 0 },
	[FI_BLOCKED_BY] = { "blocked_by", F_STRING_LIST, K_ALL, 0 },
	[FI_DEPENDS_ON] = { "depends_on", F_STRING_LIST, K_ALL, 0 },
	[FI_LINKS] = { "links", F_STRING_LIST, K_ALL, 0 },
	[FI_ACCEPTANCE] = { "acceptance_criteria", F_STRING_LIST, K_ALL, 0 },
	[FI_OWNERS] = { "owners", F_STRING_LIST, K_ALL, 0 },
	[FI_OBJECTIVE] = { "objective", F_TEXT, K_EPIC, 0 },
	[FI_MILESTONES] = { "milestones", F_MILESTONES, K_EPIC, 0 },
	[FI_FEATURES] = { "features", F_STRING_LIST, K_EPIC, 0 },
	[FI_EPIC_ID] = { "epic_id", F_STRING_OR_NULL, K_FEATURE, 0 },
	[FI_GOAL] = { "goal", F_TEXT, K_FEATURE, 0 },
	[FI_TASKS] = { "tasks", F_STRING_LIST, K_FEATURE, 0 },
	[FI_FEATURE_ID] = { "feature_id", F_STRING_OR_NULL, K_TASK, 0 },
	[FI_TYPE] = { "type", F_TASK_TYPE, K_TASK, 0 },
};

#define N_ITEM_FIELDS (sizeof(item_fields) / sizeof(item_fields[0]))

/*
 * A task type is open (spec 000 gives examples): one lower-case word, so
 * that `type:<type>`, stable id prefixes and mermaid classes need no
 * escaping. '_' is left out to keep one spelling per word ("load-test").
 */
int pmbot_report_type_word_ok(const char *s, size_t len)
{
	size_t i;

	if (!len || s[0] < 'a' || s[0] > 'z')
		return 0;
	for (i = 1; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return 0;
	return 1;
}

struct item {
	enum kind kind;
	/* "/<list>/<index>": "/features/4294967295" at most, the index of a
	 * document node being 32 bits. In place: no allocation per item. */
	char ptr[24];
	const char *list;      /* "epics", "features", "tasks" */
	size_t index;
	const jnode *obj;      /* borrowed from the document */
	const char *id;        /* borrowed; NULL when unusable */
	const char *type;      /* task type (default "task") */
	const char *parent;    /* resolved parent id, borrowed */
	const char *parent_src; /* member that set it: "epic_id", "features", … */
	/*
	 * Borrowed, NULL when absent: the members the rules read after
	 * check_item (a slot per field would cost 96 more bytes per item).
	 */
	const jnode *title, *area, *priority, *size, *status;
	const jnode *refs[2];  /* depends_on, blocked_by */
	const jnode *parent_ref; /* a feature's epic_id, a task's feature_id */
	const jnode *children; /* an epic's features, a feature's tasks */
	unsigned triage;       /* bit 0: area blank or absent; bit 1: priority */
};

struct ctx {
	const pmbot_report *r;
	pmbot_diag_list *diags;
	pmbot_buf path;        /* scratch JSON Pointer */
	int oom;
	size_t errors;
	struct item *items;    /* for "did you mean" on unknown references, and lookup() */
	size_t n_items;
	size_t suggested;      /* references a suggestion was looked for */
	char hint[160];        /* the last suggestion, " (did you mean '…'?)" or "" */
	pmbot_report_index *ix; /* the links found go here; NULL: none kept */
};

static void vdiag(struct ctx *c, pmbot_severity sev, const char *code, const char *path,
	const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static void vdiag(struct ctx *c, pmbot_severity sev, const char *code, const char *path,
	const char *fmt, va_list ap)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	int line = 0, col = 0;

	if (pmbot_report_find(c->r, path, &line, &col) < 0)
		c->oom = 1;
	if (pmbot_buf_vprintf(&msg, fmt, ap) < 0 ||
	    pmbot_diag_add(c->diags, sev, code, c->r->file, path, line, col, "%s", msg.buf) < 0)
		c->oom = 1;
	if (sev == PMBOT_SEV_ERROR)
		c->errors++;
	pmbot_buf_free(&msg);
}

__attribute__((format(printf, 4, 5)))
static void err(struct ctx *c, const char *code, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(c, PMBOT_SEV_ERROR, code, path, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 4, 5)))
static void warn(struct ctx *c, const char *code, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(c, PMBOT_SEV_WARNING, code, path, fmt, ap);
	va_end(ap);
}

/* Set c->path to `base` + "/" + token; returns c->path.buf. */
static const char *child(struct ctx *c, const char *base, const char *token)
{
	pmbot_buf_clear(&c->path);
	if (pmbot_buf_puts(&c->path, base) < 0 || pmbot_json_pointer_push(&c->path, token) < 0)
		c->oom = 1;
	return c->path.buf;
}

/* Pointer strings must outlive c->path reuse: callers copy with ptr_dup. */
static char *ptr_join(const char *base, const char *token, size_t index, int is_index)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	if (pmbot_buf_puts(&b, base) < 0 ||
	    (is_index ? pmbot_json_pointer_push_index(&b, index)
		      : pmbot_json_pointer_push(&b, token)) < 0) {
		pmbot_buf_free(&b);
		return NULL;
	}
	return pmbot_buf_detach(&b, NULL);
}

static const char *type_name(const jnode *v)
{
	switch (v->type) {
	case PMBOT_JOBJECT: return "object";
	case PMBOT_JARRAY: return "array";
	case PMBOT_JSTRING: return "string";
	case PMBOT_JINTEGER: return "integer";
	case PMBOT_JREAL: return "number";
	case PMBOT_JTRUE:
	case PMBOT_JFALSE: return "boolean";
	case PMBOT_JNULL: return "null";
	}
	return "value";
}

static int digits(const char *s, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

static int num(const char *s, int n)
{
	int v = 0, i;

	for (i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

/* YYYY-MM-DD with a real month and day. Returns characters consumed or 0. */
static size_t iso_date(const char *s)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, m, d, leap;

	if (strlen(s) < 10 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) ||
	    s[7] != '-' || !digits(s + 8, 2))
		return 0;
	y = num(s, 4);
	m = num(s + 5, 2);
	d = num(s + 8, 2);
	if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return 0;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (m == 2 && d == 29 && !leap)
		return 0;
	return 10;
}

static int is_date(const char *s)
{
	return iso_date(s) == 10 && s[10] == '\0';
}

int pmbot_report_is_issue_url(const char *s)
{
	static const char prefix[] = "https://github.com/";
	const char *p;
	int segs = 0;

	if (strncmp(s, prefix, sizeof(prefix) - 1))
		return 0;
	p = s + sizeof(prefix) - 1;
	/* owner/repo/issues/N with non-empty owner and repo */
	for (segs = 0; segs < 2; segs++) {
		const char *start = p;

		while (*p && *p != '/') {
			if (!isalnum((unsigned char)*p) && !strchr("-_.", *p))
				return 0;
			p++;
		}
		if (p == start || *p != '/')
			return 0;
		p++;
	}
	if (strncmp(p, "issues/", 7))
		return 0;
	p += 7;
	if (!isdigit((unsigned char)*p) || *p == '0')
		return 0;
	while (isdigit((unsigned char)*p))
		p++;
	return *p == '\0';
}

/* Levenshtein distance, capped: only used for short key names. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[64], prev, tmp;

	if (la >= 63 || lb >= 63)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t best = prev + (a[i - 1] != b[j - 1]);

			tmp = row[j];
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

static const char *suggest(const char *key, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t best_d = 3, i;

	for (i = 0; i < n; i++) {
		size_t d = edit_distance(key, names[i]);

		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
	}
	return best;
}

/*
 * The nearest stable id of kind `want` (any kind when -1) to an unknown
 * reference, as " (did you mean '<id>'?)" in c->hint, or "". Bounded so a
 * report full of bad references costs little: the first few references
 * get a suggestion, each from a bounded number of candidates.
 */
static const char *suggest_id(struct ctx *c, const char *ref, int want)
{
	const char *best = NULL;
	size_t best_d = 3, i, seen = 0, len = strlen(ref);

	c->hint[0] = '\0';
	if (c->suggested++ >= 16)
		return c->hint;
	for (i = 0; i < c->n_items && seen < 4096; i++) {
		const struct item *t = &c->items[i];
		size_t tl, d;

		if (!t->id || (want >= 0 && t->kind != (enum kind)want))
			continue;
		seen++;
		tl = strlen(t->id);
		if (tl + 2 < len || len + 2 < tl)
			continue;
		if ((d = edit_distance(ref, t->id)) < best_d) {
			best_d = d;
			best = t->id;
		}
	}
	if (best && strlen(best) < sizeof(c->hint) - 24)
		snprintf(c->hint, sizeof(c->hint), " (did you mean '%s'?)", best);
	return c->hint;
}

static void unknown_key(struct ctx *c, const char *base, const char *key,
	const char *const *names, size_t n)
{
	const char *s;

	if (!strncmp(key, "x_", 2))
		return;
	s = suggest(key, names, n);
	if (s)
		warn(c, "UNKNOWN_FIELD", child(c, base, key),
			"unknown field '%s' is ignored; did you mean '%s'? (extensions go under x_ keys)",
			key, s);
	else
		warn(c, "UNKNOWN_FIELD", child(c, base, key),
			"unknown field '%s' is ignored (extensions go under x_ keys)", key);
}

/* Check a required/optional string member; returns it when it is a string. */
static const char *check_string(struct ctx *c, const jnode *obj, const char *base,
	const char *key, int required, int nonempty)
{
	const jnode *v = pmbot_jnode_get(obj, key);

	if (!v) {
		if (required)
			err(c, "SCHEMA_REQUIRED", base, "missing required field '%s'", key);
		return NULL;
	}
	if (!is_string(v)) {
		err(c, "SCHEMA_TYPE", child(c, base, key), "'%s' must be a string, not %s", key,
			type_name(v));
		return NULL;
	}
	if (nonempty && !v->len) {
		err(c, "SCHEMA_VALUE", child(c, base, key), "'%s' must not be empty", key);
		return NULL;
	}
	return v->v.s;
}

static void check_string_list(struct ctx *c, const jnode *v, const char *path, const char *key)
{
	const jnode *e;
	size_t i;

	if (v->type != PMBOT_JARRAY) {
		err(c, "SCHEMA_TYPE", path, "'%s' must be an array of strings, not %s", key,
			type_name(v));
		return;
	}
	FOREACH_MEMBER(v, i, e) {
		char *p;

		if (is_filled(e))
			continue;
		if (!(p = ptr_join(path, NULL, i, 1))) {
			c->oom = 1;
			return;
		}
		if (is_string(e))
			err(c, "SCHEMA_VALUE", p, "entries of '%s' must not be empty", key);
		else
			err(c, "SCHEMA_TYPE", p, "entries of '%s' must be strings, not %s", key,
				type_name(e));
		free(p);
	}
}

static void check_milestones(struct ctx *c, const jnode *v, const char *scratch_path)
{
	static const char *const names[] = { "title", "target_date" };
	char *path = strdup(scratch_path); /* c->path is reused below */
	const jnode *m, *member;
	size_t i, k;

	if (!path) {
		c->oom = 1;
		return;
	}
	if (v->type != PMBOT_JARRAY) {
		err(c, "SCHEMA_TYPE", path, "'milestones' must be an array of objects, not %s",
			type_name(v));
		free(path);
		return;
	}
	FOREACH_MEMBER(v, i, m) {
		char *p = ptr_join(path, NULL, i, 1);
		const char *date;

		if (!p) {
			c->oom = 1;
			break;
		}
		if (m->type != PMBOT_JOBJECT) {
			err(c, "SCHEMA_TYPE", p, "a milestone must be an object, not %s", type_name(m));
			free(p);
			continue;
		}
		check_string(c, m, p, "title", 0, 1);
		date = check_string(c, m, p, "target_date", 0, 1);
		if (date && !is_date(date))
			err(c, "SCHEMA_FORMAT", child(c, p, "target_date"),
				"'target_date' must be an ISO-8601 date (YYYY-MM-DD), not '%s'", date);
		FOREACH_MEMBER(m, k, member)
			if (strcmp(member->key, "title") && strcmp(member->key, "target_date"))
				unknown_key(c, p, member->key, names, 2);
		free(p);
	}
	free(path);
}

static void check_task_type(struct ctx *c, const jnode *v, const char *path)
{
	const char *s = v->v.s;
	size_t a = 0, b = v->len, i;
	pmbot_buf low = PMBOT_BUF_INIT;

	if (pmbot_report_type_word_ok(s, b))
		return;
	/* Suggest only what the user most likely meant: same word, cased or padded. */
	pmbot_text_trim_blank(&a, &b, s, b);
	for (i = a; i < b; i++)
		if (pmbot_buf_putc(&low, (char)tolower((unsigned char)s[i])) < 0) {
			c->oom = 1;
			goto done;
		}
	if (low.len && pmbot_report_type_word_ok(low.buf, low.len))
		err(c, "SCHEMA_VALUE", path, "task type '%s' is not a lower-case word "
			"(a-z, then a-z, 0-9 or '-'); did you mean '%s'?", s, low.buf);
	else
		err(c, "SCHEMA_VALUE", path, "task type '%s' is not a lower-case word "
			"(a-z, then a-z, 0-9 or '-'), e.g. task, bug, spike, test, chore, benchmark", s);
done:
	pmbot_buf_free(&low);
}

/* The path of a member is built only when there is something to report. */
#define MEMBER_PATH child(c, base, f->name)

static void check_item_field(struct ctx *c, const struct field *f, const jnode *v, const char *base)
{
	const jnode *e;
	size_t i;

	switch (f->type) {
	case F_STRING:
	case F_TEXT:
		if (!is_string(v))
			err(c, "SCHEMA_TYPE", MEMBER_PATH, "'%s' must be a string, not %s", f->name, type_name(v));
		else if (f->type == F_STRING && !v->len)
			err(c, "SCHEMA_VALUE", MEMBER_PATH, "'%s' must not be empty", f->name);
		break;
	case F_STRING_OR_NULL:
		if (!is_string(v) && v->type != PMBOT_JNULL)
			err(c, "SCHEMA_TYPE", MEMBER_PATH, "'%s' must be a string or null, not %s", f->name,
				type_name(v));
		else if (is_string(v) && !v->len)
			err(c, "SCHEMA_VALUE", MEMBER_PATH, "'%s' must not be empty (use null for none)", f->name);
		break;
	case F_NUMBER_NONNEG:
		if (v->type != PMBOT_JINTEGER && v->type != PMBOT_JREAL)
			err(c, "SCHEMA_TYPE", MEMBER_PATH, "'%s' must be a number of hours without units, not %s",
				f->name, type_name(v));
		else if (v->type == PMBOT_JINTEGER ? v->v.i < 0 : v->v.r < 0)
			err(c, "SCHEMA_VALUE", MEMBER_PATH, "'%s' must not be negative", f->name);
		break;
	case F_STRING_LIST:
		/* The path is built only for a list with something to report. */
		i = 0;
		if (v->type == PMBOT_JARRAY)
			FOREACH_MEMBER(v, i, e)
				if (!is_filled(e))
					break;
		if (v->type != PMBOT_JARRAY || i < v->len)
			check_string_list(c, v, MEMBER_PATH, f->name);
		break;
	case F_MILESTONES:
		check_milestones(c, v, MEMBER_PATH);
		break;
	case F_TASK_TYPE:
		if (!is_string(v)) {
			err(c, "SCHEMA_TYPE", MEMBER_PATH, "'type' must be a string, not %s", type_name(v));
			break;
		}
		check_task_type(c, v, MEMBER_PATH);
		break;
	}
}

#undef MEMBER_PATH

/*
 * The field of `kind` named `key` (`len` bytes), or -1. This runs for
 * every member of every item: the key's length picks the few names to
 * try, and each compare has a constant size, so it is a load or two, not
 * a call. The names are item_fields' (a field missing here would be an
 * UNKNOWN_FIELD warning in the tests).
 */
static inline int field_of(const char *key, size_t len, enum kind kind)
{
	int f = -1;

#define TRY(name, fi) \
	if (!memcmp(key, name, sizeof(name) - 1)) { \
		f = (fi); \
		break; \
	}
	switch (len) {
	case 4:
		TRY("area", FI_AREA) TRY("size", FI_SIZE) TRY("risk", FI_RISK)
		TRY("goal", FI_GOAL) TRY("type", FI_TYPE)
		break;
	case 5:
		TRY("title", FI_TITLE) TRY("links", FI_LINKS) TRY("tasks", FI_TASKS)
		break;
	case 6:
		TRY("status", FI_STATUS) TRY("owners", FI_OWNERS)
		break;
	case 7:
		TRY("epic_id", FI_EPIC_ID)
		break;
	case 8:
		TRY("priority", FI_PRIORITY) TRY("features", FI_FEATURES)
		break;
	case 9:
		TRY("stable_id", FI_STABLE_ID) TRY("objective", FI_OBJECTIVE)
		break;
	case 10:
		TRY("blocked_by", FI_BLOCKED_BY) TRY("depends_on", FI_DEPENDS_ON)
		TRY("milestones", FI_MILESTONES) TRY("feature_id", FI_FEATURE_ID)
		break;
	case 12:
		TRY("estimate_hrs", FI_ESTIMATE)
		break;
	case 19:
		TRY("acceptance_criteria", FI_ACCEPTANCE)
		break;
	default:
		break;
	}
#undef TRY
	return f >= 0 && (item_fields[f].kinds & kind) ? f : -1;
}

static void check_item(struct ctx *c, struct item *it, const char *base)
{
	const char *names[N_ITEM_FIELDS];
	const jnode *fv[N_ITEM_FIELDS] = { NULL };
	size_t i, n;
	size_t found = 0;
	const jnode *v;
	int f;

	/* One pass over the members finds every field: no lookup per field. */
	FOREACH_MEMBER(it->obj, i, v)
		if ((f = field_of(v->key, v->key_len, it->kind)) >= 0) {
			fv[f] = v;
			found++;
		}
	for (i = 0; i < N_ITEM_FIELDS; i++) {
		const struct field *fd = &item_fields[i];

		if (!(fd->kinds & it->kind))
			continue;
		v = fv[i];
		if (!v) {
			if (fd->required)
				err(c, "SCHEMA_REQUIRED", base, "missing required field '%s'", fd->name);
			continue;
		}
		check_item_field(c, fd, v, base);
	}
	/* Keys are unique, so when every member is a field none is unknown. */
	if (found < it->obj->len) {
		/* The kind's fields, in table order: what "did you mean" picks from. */
		for (i = n = 0; i < N_ITEM_FIELDS; i++)
			if (item_fields[i].kinds & it->kind)
				names[n++] = item_fields[i].name;
		FOREACH_MEMBER(it->obj, i, v)
			if (field_of(v->key, v->key_len, it->kind) < 0)
				unknown_key(c, base, v->key, names, n);
	}
	it->title = fv[FI_TITLE];
	it->area = fv[FI_AREA];
	it->priority = fv[FI_PRIORITY];
	/* Read twice later (the label check, the triage warnings): worked out once. */
	if (!is_string(it->area) || pmbot_text_is_blank(it->area->v.s, it->area->len))
		it->triage |= 1;
	if (!is_string(it->priority) || pmbot_text_is_blank(it->priority->v.s, it->priority->len))
		it->triage |= 2;
	it->size = fv[FI_SIZE];
	it->status = fv[FI_STATUS];
	it->refs[0] = fv[FI_DEPENDS_ON];
	it->refs[1] = fv[FI_BLOCKED_BY];
	/* field_of matched only the fields of the item's kind: one of each pair is NULL. */
	it->parent_ref = fv[FI_EPIC_ID] ? fv[FI_EPIC_ID] : fv[FI_FEATURE_ID];
	it->children = fv[FI_FEATURES] ? fv[FI_FEATURES] : fv[FI_TASKS];
	v = fv[FI_STABLE_ID];
	if (is_filled(v))
		it->id = v->v.s;
	/*
	 * Only a task's type is read (field_of matches "type" for tasks only;
	 * any other item's is an unknown field, and the rules read it->type
	 * of tasks alone).
	 */
	it->type = is_string(fv[FI_TYPE]) ? fv[FI_TYPE]->v.s : "task";
}

static void check_report_meta(struct ctx *c, const jnode *root)
{
	static const char *const report_keys[] = { "title", "generated_at", "scope", "source" };
	static const char *const scope_keys[] = { "org", "repos" };
	static const char *const source_keys[] = { "kind", "url", "prompt_hash" };
	const jnode *report = pmbot_jnode_get(root, "report"), *scope, *source, *v;
	const char *s;
	size_t i;

	if (!report) {
		err(c, "SCHEMA_REQUIRED", "", "missing required field 'report'");
		return;
	}
	if (report->type != PMBOT_JOBJECT) {
		err(c, "SCHEMA_TYPE", "/report", "'report' must be an object, not %s", type_name(report));
		return;
	}
	check_string(c, report, "/report", "title", 1, 1);
	s = check_string(c, report, "/report", "generated_at", 1, 1);
	if (s && !pmbot_report_isodate_valid(s))
		err(c, "SCHEMA_FORMAT", "/report/generated_at",
			"'generated_at' must be an ISO-8601 date or date-time "
			"(2026-02-22 or 2026-02-22T10:00:00Z), not '%s'", s);
	FOREACH_MEMBER(report, i, v)
		if (strcmp(v->key, "title") && strcmp(v->key, "generated_at") &&
		    strcmp(v->key, "scope") && strcmp(v->key, "source"))
			unknown_key(c, "/report", v->key, report_keys, 4);
	scope = pmbot_jnode_get(report, "scope");
	if (!scope) {
		err(c, "SCHEMA_REQUIRED", "/report", "missing required field 'scope'");
	} else if (scope->type != PMBOT_JOBJECT) {
		err(c, "SCHEMA_TYPE", "/report/scope", "'scope' must be an object, not %s",
			type_name(scope));
	} else {
		check_string(c, scope, "/report/scope", "org", 1, 1);
		if ((v = pmbot_jnode_get(scope, "repos")))
			check_string_list(c, v, "/report/scope/repos", "repos");
		FOREACH_MEMBER(scope, i, v)
			if (strcmp(v->key, "org") && strcmp(v->key, "repos"))
				unknown_key(c, "/report/scope", v->key, scope_keys, 2);
	}
	source = pmbot_jnode_get(report, "source");
	if (source && source->type != PMBOT_JOBJECT) {
		err(c, "SCHEMA_TYPE", "/report/source", "'source' must be an object, not %s",
			type_name(source));
	} else if (source) {
		check_string(c, source, "/report/source", "kind", 0, 0);
		check_string(c, source, "/report/source", "url", 0, 0);
		check_string(c, source, "/report/source", "prompt_hash", 0, 0);
		FOREACH_MEMBER(source, i, v)
			if (strcmp(v->key, "kind") && strcmp(v->key, "url") &&
			    strcmp(v->key, "prompt_hash"))
				unknown_key(c, "/report/source", v->key, source_keys, 3);
	}
}

static const char *kind_name(enum kind k)
{
	return k == K_EPIC ? "epic" : k == K_FEATURE ? "feature" : "task";
}

/* Recommended ids: <prefix>:<slug>, prefix matching the item, slug [a-z0-9-:_]+. */
static void check_id_format(struct ctx *c, const struct item *it, const char *base)
{
	const char *colon = strchr(it->id, ':'), *p;
	size_t plen;
	const char *want;

	if (!colon || colon == it->id || !colon[1]) {
		warn(c, "STABLE_ID_FORMAT", child(c, base, "stable_id"),
			"stable_id '%s' should look like '<prefix>:<slug>' (e.g. '%s:%s')", it->id,
			it->kind == K_FEATURE ? "feat" : it->kind == K_EPIC ? "epic" : "task", "my-item");
		return;
	}
	for (p = colon + 1; *p; p++) {
		if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && !strchr("-:_", *p)) {
			warn(c, "STABLE_ID_FORMAT", child(c, base, "stable_id"),
				"stable_id '%s' should use only lowercase letters, digits, '-', ':' and '_' after its prefix",
				it->id);
			return;
		}
	}
	plen = (size_t)(colon - it->id);
	if (it->kind == K_EPIC)
		want = "epic";
	else if (it->kind == K_FEATURE)
		want = "feat";
	else if (!strcmp(it->type, "benchmark"))
		want = strncmp(it->id, "bench", plen) || plen != 5 ? "benchmark" : "bench";
	else
		want = it->type;
	if (strlen(want) != plen || strncmp(it->id, want, plen))
		warn(c, "STABLE_ID_FORMAT", child(c, base, "stable_id"), "stable_id '%s' of a %s should start with '%s:'",
			it->id, it->kind == K_TASK ? it->type : kind_name(it->kind), want);
}

/*
 * The renderer's refusals, checked here with its codes so that a report
 * that validates also plans. Labels are measured with the default scheme
 * and the title without a form's prefix: both come from configuration
 * and forms that validate does not read.
 */
static void check_render_rules(struct ctx *c, const struct item *it, const char *base)
{
	static const pmbot_label_scheme scheme = PMBOT_LABEL_SCHEME_DEFAULT;
	static const int keys[4] = { FI_AREA, FI_PRIORITY, FI_SIZE, FI_STATUS };
	const jnode *const vals[4] = { it->area, it->priority, it->size, it->status };
	const char *prefixes[4] = { scheme.area, scheme.prio, scheme.size, scheme.status };
	const jnode *t = it->title, *v;
	size_t chars, i, a, b;

	if (!pmbot_text_id_safe(it->id))
		err(c, "RENDER_UNSAFE_ID", child(c, base, "stable_id"),
			"stable id \"%s\" cannot go into the issue marker: it has whitespace, "
			"a control character or an HTML comment delimiter", it->id);
	/* An empty title is SCHEMA_VALUE already. */
	if (is_filled(t)) {
		if (pmbot_text_shown_chars(&chars, t->v.s, t->len) < 0) {
			c->oom = 1;
			return;
		}
		if (!chars)
			err(c, "RENDER_TITLE_EMPTY", child(c, base, "title"),
				"the item has no title to render");
		else if (chars > PMBOT_ISSUE_TITLE_MAX)
			err(c, "RENDER_TITLE_TOO_LONG", child(c, base, "title"),
				"the issue title would be %zu characters; GitHub allows %d",
				chars, PMBOT_ISSUE_TITLE_MAX);
	}
	/* The built-in `type:<type>`; a repository form's own type label may replace it. */
	if (it->kind == K_TASK && pmbot_report_type_word_ok(it->type, strlen(it->type)) &&
	    strlen(scheme.type) + strlen(it->type) > PMBOT_LABEL_MAX)
		err(c, "RENDER_LABEL_TOO_LONG", child(c, base, "type"),
			"label \"%s%s\" is %zu characters; GitHub allows %d", scheme.type, it->type,
			strlen(scheme.type) + strlen(it->type), PMBOT_LABEL_MAX);
	for (i = 0; i < 4; i++) {
		v = vals[i];
		/*
		 * Flattening only drops bytes and a character is at least one,
		 * so a value whose bytes fit has a label that fits: most are
		 * never measured.
		 */
		if (!is_string(v) || v->len + strlen(prefixes[i]) <= PMBOT_LABEL_MAX)
			continue;
		a = 0;
		b = v->len;
		/* Area and priority: triaged when blank, trimmed otherwise (build.c). */
		if (i < 2) {
			if (it->triage & (1u << i))
				continue;
			pmbot_text_trim_blank(&a, &b, v->v.s, b);
		}
		if (pmbot_text_flat_chars(&chars, v->v.s + a, b - a) < 0) {
			c->oom = 1;
			return;
		}
		if (chars + strlen(prefixes[i]) > PMBOT_LABEL_MAX)
			err(c, "RENDER_LABEL_TOO_LONG", child(c, base, item_fields[keys[i]].name),
				"label \"%s%.*s\" is %zu characters; GitHub allows %d", prefixes[i],
				(int)(b - a), v->v.s + a, chars + strlen(prefixes[i]),
				PMBOT_LABEL_MAX);
	}
}

/* Write it->ptr from its list and index. */
static void item_ptr(struct item *it)
{
	char digits[12], *o = it->ptr;
	size_t index = it->index, n = 0, len = strlen(it->list);

	do {
		digits[n++] = (char)('0' + index % 10);
		index /= 10;
	} while (index);
	*o++ = '/';
	memcpy(o, it->list, len);
	o += len;
	*o++ = '/';
	while (n)
		*o++ = digits[--n];
	*o = '\0';
}

/* Resolve an id (the map holds place + 1 among c->items); NULL when unknown. */
static struct item *lookup(struct ctx *c, pmbot_strmap *ids, const char *id)
{
	void *v = NULL;

	return pmbot_strmap_get(ids, id, &v) ? &c->items[(uintptr_t)v - 1] : NULL;
}

/*
 * Note that `from` names `to` (found by lookup), for a caller keeping the
 * index. A reference to the wrong kind of item is an error already, so
 * the links are read only when there is none.
 */
static void link(struct ctx *c, const struct item *from, const struct item *to,
	pmbot_link_kind kind)
{
	pmbot_report_index *ix = c->ix;
	pmbot_report_link *l;

	if (!ix || c->oom)
		return;
	if (!(l = pmbot_array_grow(ix->links, &ix->alloc_links, ix->n_links + 1, sizeof(*l)))) {
		c->oom = 1;
		return;
	}
	ix->links = l;
	l += ix->n_links++;
	l->from = (uint32_t)(from - c->items);
	l->to = (uint32_t)(to - c->items);
	l->kind = (uint32_t)kind;
}

/*
 * Give `child_it` the parent `parent`, named by `src`. A different parent
 * given before is CONFLICTING_PARENT at `base` + "/" + `key` (or at `base`
 * when `key` is NULL): the path is built only then, most items agree.
 */
static void set_parent(struct ctx *c, struct item *child_it, const char *parent,
	const char *src, const char *base, const char *key)
{
	if (!child_it->parent) {
		child_it->parent = parent;
		child_it->parent_src = src;
		return;
	}
	if (!strcmp(child_it->parent, parent))
		return;
	err(c, "CONFLICTING_PARENT", key ? child(c, base, key) : base,
		"'%s' gets parent '%s' here but '%s' through %s", child_it->id, parent,
		child_it->parent, child_it->parent_src);
}

static void check_refs(struct ctx *c, struct item *it, pmbot_strmap *ids, const char *base)
{
	static const char *const dep_keys[] = { "depends_on", "blocked_by" };
	const jnode *v, *e;
	size_t i, k;
	struct item *t;

	/* An empty id is SCHEMA_VALUE already: one error for one problem. */
	if (it->kind == K_FEATURE && is_filled(v = it->parent_ref)) {
		const char *ref = v->v.s;

		if ((t = lookup(c, ids, ref)))
			link(c, t, it, PMBOT_LINK_PARENT);
		if (!t || t->kind != K_EPIC)
			err(c, "UNKNOWN_EPIC", child(c, base, "epic_id"), t ?
				"epic_id '%s' names a %s, not an epic" : "epic_id '%s' names no epic%s",
				ref, t ? kind_name(t->kind) : suggest_id(c, ref, K_EPIC));
		else
			set_parent(c, it, ref, "its epic_id", base, "epic_id");
	}
	if (it->kind == K_TASK && is_filled(v = it->parent_ref)) {
		const char *ref = v->v.s;

		if ((t = lookup(c, ids, ref)))
			link(c, t, it, PMBOT_LINK_PARENT);
		if (!t || t->kind != K_FEATURE)
			err(c, "UNKNOWN_FEATURE", child(c, base, "feature_id"), t ?
				"feature_id '%s' names a %s, not a feature" : "feature_id '%s' names no feature%s",
				ref, t ? kind_name(t->kind) : suggest_id(c, ref, K_FEATURE));
		else
			set_parent(c, it, ref, "its feature_id", base, "feature_id");
	}
	for (k = 0; k < 2; k++) {
		v = it->refs[k];
		if (!v || v->type != PMBOT_JARRAY)
			continue;
		FOREACH_MEMBER(v, i, e) {
			const char *ref = string_of(e);
			char *p;

			if (!ref || !*ref)
				continue;
			if ((t = lookup(c, ids, ref))) {
				link(c, it, t, k ? PMBOT_LINK_BLOCKED_BY : PMBOT_LINK_DEPENDS_ON);
				continue;
			}
			if (pmbot_report_is_issue_url(ref))
				continue;
			if (!(p = ptr_join(child(c, base, dep_keys[k]), NULL, i, 1))) {
				c->oom = 1;
				return;
			}
			err(c, "UNKNOWN_DEPENDENCY", p,
				"%s entry '%s' is neither a stable_id in this report nor a GitHub issue URL%s",
				dep_keys[k], ref, suggest_id(c, ref, -1));
			free(p);
		}
	}
}

/* Epic `features` and feature `tasks` lists name children; they must agree with the children. */
static void check_child_lists(struct ctx *c, struct item *it, pmbot_strmap *ids, const char *base)
{
	const char *key = it->kind == K_EPIC ? "features" : "tasks";
	enum kind want = it->kind == K_EPIC ? K_FEATURE : K_TASK;
	const jnode *v = it->children, *e;
	size_t i;

	if (it->kind == K_TASK || !v || v->type != PMBOT_JARRAY)
		return;
	FOREACH_MEMBER(v, i, e) {
		const char *ref = string_of(e);
		struct item *t;
		char *p;

		if (!ref || !*ref)
			continue;
		if ((t = lookup(c, ids, ref)))
			link(c, it, t, PMBOT_LINK_PARENT);
		if (t && t->kind == want && (!t->parent || !strcmp(t->parent, it->id))) {
			t->parent = it->id;
			t->parent_src = it->kind == K_EPIC ? "an epic's features list"
				: "a feature's tasks list";
			continue;
		}
		if (!(p = ptr_join(child(c, base, key), NULL, i, 1))) {
			c->oom = 1;
			return;
		}
		if (!t || t->kind != want)
			err(c, want == K_FEATURE ? "UNKNOWN_FEATURE" : "UNKNOWN_TASK", p, t ?
				"%s lists '%s', which is a %s, not a %s" : "%s lists '%s', which names no %s%s",
				key, ref, t ? kind_name(t->kind) : kind_name(want), t ? kind_name(want) :
				suggest_id(c, ref, (int)want));
		else
			set_parent(c, t, it->id, it->kind == K_EPIC ? "an epic's features list"
				: "a feature's tasks list", p, NULL);
		free(p);
	}
}

static int collect_items(struct ctx *c, const jnode *root, struct item **out, size_t *n_out)
{
	static const char *const lists[] = { "epics", "features", "tasks" };
	static const enum kind kinds[] = { K_EPIC, K_FEATURE, K_TASK };
	struct item *items = NULL;
	const jnode *v[3], *obj;
	size_t n = 0, total = 0, k, i;

	for (k = 0; k < 3; k++)
		if ((v[k] = pmbot_jnode_get(root, lists[k])) && v[k]->type == PMBOT_JARRAY)
			total += v[k]->len;
	if (total && !(items = calloc(total, sizeof(*items))))
		return -1;
	for (k = 0; k < 3; k++) {
		if (!v[k])
			continue;
		if (v[k]->type != PMBOT_JARRAY) {
			err(c, "SCHEMA_TYPE", child(c, "", lists[k]), "'%s' must be an array of objects, not %s",
				lists[k], type_name(v[k]));
			continue;
		}
		FOREACH_MEMBER(v[k], i, obj) {
			items[n].kind = kinds[k];
			items[n].list = lists[k];
			items[n].index = i;
			items[n].obj = obj;
			item_ptr(&items[n]);
			if (obj->type != PMBOT_JOBJECT)
				err(c, "SCHEMA_TYPE", items[n].ptr, "an item of '%s' must be an object, not %s",
					lists[k], type_name(obj));
			else
				check_item(c, &items[n], items[n].ptr);
			n++;
		}
	}
	*out = items;
	*n_out = n;
	return 0;
}

/* pmbot_report_validate_index, `ix` NULL when the caller keeps no index. */
static int validate(pmbot_report_index *ix, const pmbot_report *report, pmbot_diag_list *diags)
{
	static const char *const top_keys[] = {
		"schema_version", "report", "epics", "features", "tasks", "notes"
	};
	struct ctx c = { report, diags, PMBOT_BUF_INIT, 0, 0, NULL, 0, 0, "", ix };
	pmbot_strmap ids = PMBOT_STRMAP_INIT;
	struct item *items = NULL;
	size_t n = 0, i, k;
	const jnode *root = pmbot_jdoc_root(report->doc), *v;
	const char *sv;
	int rc = PMBOT_ERROR;

	/* pmbot_report_load gives every report its document. */
	if (!root)
		goto done;
	if (root->type != PMBOT_JOBJECT) {
		err(&c, "SCHEMA_TYPE", "", "a ReportIR document must be an object, not %s",
			type_name(root));
		rc = PMBOT_EINVALID;
		goto done;
	}
	v = pmbot_jnode_get(root, "schema_version");
	sv = string_of(v);
	if (!v)
		err(&c, "SCHEMA_REQUIRED", "", "missing required field 'schema_version' (report_ir/v1)");
	else if (!sv)
		err(&c, "SCHEMA_TYPE", "/schema_version", "'schema_version' must be a string, not %s",
			type_name(v));
	else if (strcmp(sv, "report_ir/v1"))
		err(&c, "SCHEMA_VERSION", "/schema_version",
			"unsupported schema_version '%s': this pm-bot reads report_ir/v1", sv);
	check_report_meta(&c, root);
	if ((v = pmbot_jnode_get(root, "notes")) && v->type != PMBOT_JARRAY)
		err(&c, "SCHEMA_TYPE", "/notes", "'notes' must be an array, not %s", type_name(v));
	FOREACH_MEMBER(root, k, v) {
		for (i = 0; i < 6; i++)
			if (!strcmp(v->key, top_keys[i]))
				break;
		if (i == 6)
			unknown_key(&c, "", v->key, top_keys, 6);
	}
	if (collect_items(&c, root, &items, &n) < 0)
		goto done;
	c.items = items;
	c.n_items = n;
	/* Every id goes in at most once: one table, never rehashed. */
	if (pmbot_strmap_reserve(&ids, n) < 0)
		goto done;

	for (i = 0; i < n; i++) {
		void *at = NULL;
		char *p;

		if (!items[i].id)
			continue;
		p = items[i].ptr;
		switch (pmbot_strmap_put(&ids, items[i].id, (void *)(uintptr_t)(i + 1), &at)) {
		case -1:
			goto done;
		case 1: {
			const struct item *prev = &items[(uintptr_t)at - 1];
			int line = 0, col = 0;

			if (pmbot_report_find(report, prev->ptr, &line, &col) < 0)
				c.oom = 1;
			err(&c, "DUPLICATE_STABLE_ID", child(&c, p, "stable_id"),
				"stable_id '%s' is already used by %s (line %d); ids must be unique across epics, features and tasks",
				items[i].id, prev->ptr, line);
			items[i].id = NULL;
			break;
		}
		default:
			check_id_format(&c, &items[i], p);
			check_render_rules(&c, &items[i], p);
		}
	}
	for (i = 0; i < n; i++) {
		char *p;

		if (!items[i].id)
			continue;
		p = items[i].ptr;
		check_child_lists(&c, &items[i], &ids, p);
		check_refs(&c, &items[i], &ids, p);
		if (items[i].triage & 1)
			warn(&c, "MISSING_AREA", p,
				"'%s' has no area: it is set to 'triage' and labelled needs-human", items[i].id);
		if (items[i].triage & 2)
			warn(&c, "MISSING_PRIORITY", p,
				"'%s' has no priority: it is set to 'Triage' and labelled needs-human", items[i].id);
	}
	rc = c.errors ? PMBOT_EINVALID : PMBOT_OK;
done:
	if (c.oom)
		rc = PMBOT_ERROR;
	if (rc == PMBOT_OK && ix) {
		ix->ids = ids;
		memset(&ids, 0, sizeof(ids));
	} else if (ix) {
		pmbot_report_index_free(ix);
	}
	pmbot_strmap_free(&ids);
	free(items);
	pmbot_buf_free(&c.path);
	return rc;
}

int pmbot_report_validate(const pmbot_report *report, pmbot_diag_list *diags)
{
	return validate(NULL, report, diags);
}

void pmbot_report_index_free(pmbot_report_index *ix)
{
	pmbot_strmap_free(&ix->ids);
	free(ix->links);
	memset(ix, 0, sizeof(*ix));
}

int pmbot_report_validate_index(pmbot_report_index *ix, const pmbot_report *report,
	pmbot_diag_list *diags)
{
	return validate(ix, report, diags);
}
