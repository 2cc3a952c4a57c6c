#include "pmbot/render.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmbot/report.h"
#include "pmbot/array.h"
#include "pmbot/banned.h"

#define N_TYPES ((size_t)PMBOT_NODE_BENCHMARK + 1)

/* ---- heading -> field ------------------------------------------------ */

typedef struct {
	const char *heading;
	pmbot_field_kind kind;
} heading_map;

/* Matched against the whole heading. */
static const heading_map exact_map[] = {
	{ "Area", PMBOT_FIELD_AREA },
	{ "Priority", PMBOT_FIELD_PRIORITY },
	{ "Size", PMBOT_FIELD_SIZE },
	{ "Estimate (hrs)", PMBOT_FIELD_ESTIMATE },
	{ "Estimate (hours)", PMBOT_FIELD_ESTIMATE },
	{ "Estimate", PMBOT_FIELD_ESTIMATE },
	{ "Risk", PMBOT_FIELD_RISK },
	{ "Blocked by", PMBOT_FIELD_BLOCKED_BY },
	{ "Depends on", PMBOT_FIELD_BLOCKED_BY },
	{ "Dependencies", PMBOT_FIELD_BLOCKED_BY },
	{ "Actual (hrs)", PMBOT_FIELD_ACTUAL },
	{ "Actual (hours)", PMBOT_FIELD_ACTUAL },
	{ "Actual", PMBOT_FIELD_ACTUAL },
	{ "Status", PMBOT_FIELD_STATUS },
	{ "Goal", PMBOT_FIELD_GOAL },
	{ "Objective", PMBOT_FIELD_OBJECTIVE },
	{ "Acceptance criteria", PMBOT_FIELD_ACCEPTANCE },
	{ "Epic acceptance", PMBOT_FIELD_ACCEPTANCE },
	{ "Definition of done", PMBOT_FIELD_ACCEPTANCE },
	{ "Milestones", PMBOT_FIELD_MILESTONES },
	{ "Links", PMBOT_FIELD_LINKS },
};

/*
 * Matched against the heading without a trailing "(...)" note, so
 * "Objective (North Star)" or "Acceptance criteria (DoD)" map too. Size,
 * estimate and actual are left out: their note is a unit ("Estimate
 * (days)" is not hours).
 */
static const heading_map base_map[] = {
	{ "Area", PMBOT_FIELD_AREA },
	{ "Priority", PMBOT_FIELD_PRIORITY },
	{ "Risk", PMBOT_FIELD_RISK },
	{ "Blocked by", PMBOT_FIELD_BLOCKED_BY },
	{ "Depends on", PMBOT_FIELD_BLOCKED_BY },
	{ "Dependencies", PMBOT_FIELD_BLOCKED_BY },
	{ "Status", PMBOT_FIELD_STATUS },
	{ "Goal", PMBOT_FIELD_GOAL },
	{ "Objective", PMBOT_FIELD_OBJECTIVE },
	{ "Acceptance criteria", PMBOT_FIELD_ACCEPTANCE },
	{ "Epic acceptance", PMBOT_FIELD_ACCEPTANCE },
	{ "Definition of done", PMBOT_FIELD_ACCEPTANCE },
	{ "Milestones", PMBOT_FIELD_MILESTONES },
	{ "Links", PMBOT_FIELD_LINKS },
};

static pmbot_field_kind map_lookup(const heading_map *map, size_t n, const char *h)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pmbot_body_heading_eq(h, map[i].heading))
			return map[i].kind;
	return PMBOT_FIELD_OTHER;
}

pmbot_field_kind pmbot_form_heading_kind(const char *heading)
{
	pmbot_field_kind k;
	size_t len = strlen(heading), open;
	char *base;

	k = map_lookup(exact_map, sizeof(exact_map) / sizeof(exact_map[0]), heading);
	if (k != PMBOT_FIELD_OTHER)
		return k;
	while (len && isspace((unsigned char)heading[len - 1]))
		len--;
	if (!len || heading[len - 1] != ')')
		return PMBOT_FIELD_OTHER;
	for (open = len - 1; open > 0 && heading[open] != '('; open--)
		;
	if (heading[open] != '(' || !open)
		return PMBOT_FIELD_OTHER;
	if (!(base = strndup(heading, open)))
		return PMBOT_FIELD_OTHER;
	k = map_lookup(base_map, sizeof(base_map) / sizeof(base_map[0]), base);
	free(base);
	return k;
}

/* ---- forms ------------------------------------------------------------ */

void pmbot_form_free(pmbot_form *form)
{
	size_t i;

	if (!form)
		return;
	free(form->path);
	free(form->name);
	free(form->title_prefix);
	for (i = 0; i < form->n_labels; i++)
		free(form->labels[i]);
	free(form->labels);
	for (i = 0; i < form->n_fields; i++) {
		free(form->fields[i].label);
		free(form->fields[i].id);
	}
	free(form->fields);
	free(form);
}

int pmbot_form_is_form_path(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (!strcmp(base, "config.yml") || !strcmp(base, "config.yaml"))
		return 0;
	return (n > 4 && !strcmp(base + n - 4, ".yml")) ||
		(n > 5 && !strcmp(base + n - 5, ".yaml"));
}

/* A type named by one word: the type names, "feat" and "bench", any case. */
static int type_from_word(pmbot_node_type *out, const char *w, size_t len)
{
	static const struct {
		const char *word;
		pmbot_node_type type;
	} alias[] = { { "feat", PMBOT_NODE_FEATURE }, { "bench", PMBOT_NODE_BENCHMARK } };
	size_t t;

	for (t = 0; t < N_TYPES; t++) {
		const char *name = pmbot_node_type_name((pmbot_node_type)t);

		if (name && strlen(name) == len && !strncasecmp(name, w, len)) {
			*out = (pmbot_node_type)t;
			return 1;
		}
	}
	for (t = 0; t < sizeof(alias) / sizeof(alias[0]); t++) {
		if (strlen(alias[t].word) == len && !strncasecmp(alias[t].word, w, len)) {
			*out = alias[t].type;
			return 1;
		}
	}
	return 0;
}

/* The type a name speaks of: the whole name trimmed, else its first word. */
static int type_from_name(pmbot_node_type *out, const char *name)
{
	size_t len, w = 0;

	while (isspace((unsigned char)*name))
		name++;
	len = strlen(name);
	while (len && isspace((unsigned char)name[len - 1]))
		len--;
	if (type_from_word(out, name, len))
		return 1;
	while (w < len && isalnum((unsigned char)name[w]))
		w++;
	return w && type_from_word(out, name, w);
}

typedef struct {
	const char *path;
	pmbot_srcmap *map;
	pmbot_diag_list *diags;
	size_t errors;
	int oom;
} form_ctx;

static void form_diag(form_ctx *c, pmbot_severity sev, const char *code,
	const char *pointer, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void form_diag(form_ctx *c, pmbot_severity sev, const char *code,
	const char *pointer, const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	int line = 0, col = 0;
	va_list ap;

	va_start(ap, fmt);
	if (pmbot_buf_vprintf(&msg, fmt, ap) < 0)
		c->oom = 1;
	va_end(ap);
	if (c->map)
		pmbot_srcmap_find(c->map, pointer, &line, &col);
	if (!c->oom && pmbot_diag_add(c->diags, sev, code, c->path, pointer, line, col,
			"%s", msg.buf) < 0)
		c->oom = 1;
	if (sev == PMBOT_SEV_ERROR)
		c->errors++;
	pmbot_buf_free(&msg);
}

static int push_label(pmbot_form *f, const char *s, size_t len)
{
	char **p;

	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (!len)
		return 0;
	if (!(p = pmbot_array_grow(f->labels, &f->alloc_labels, f->n_labels + 1, sizeof(*p))))
		return -1;
	f->labels = p;
	if (!(f->labels[f->n_labels] = strndup(s, len)))
		return -1;
	f->n_labels++;
	return 0;
}

static void parse_labels(form_ctx *c, pmbot_form *f, const json_t *labels)
{
	size_t i;

	if (!labels)
		return;
	if (json_is_string(labels)) {
		const char *s = json_string_value(labels), *comma;

		/* GitHub accepts "bug, triage" as well as a list. */
		for (;;) {
			comma = strchr(s, ',');
			if (push_label(f, s, comma ? (size_t)(comma - s) : strlen(s)) < 0)
				c->oom = 1;
			if (!comma)
				break;
			s = comma + 1;
		}
		return;
	}
	if (!json_is_array(labels)) {
		form_diag(c, PMBOT_SEV_ERROR, "FORM_BAD_FIELD", "/labels",
			"labels must be a list of strings or a comma-separated string");
		return;
	}
	for (i = 0; i < json_array_size(labels); i++) {
		const json_t *l = json_array_get(labels, i);
		char ptr[64];

		if (!json_is_string(l)) {
			snprintf(ptr, sizeof(ptr), "/labels/%zu", i);
			form_diag(c, PMBOT_SEV_ERROR, "FORM_BAD_FIELD", ptr,
				"a label must be a string");
			continue;
		}
		if (push_label(f, json_string_value(l), json_string_length(l)) < 0)
			c->oom = 1;
	}
}

/*
 * The title prefix: the form's title whitespace-collapsed, without a
 * trailing "<placeholder>" (GitHub pre-fills the title, the author
 * overwrites the placeholder), ending in exactly one space.
 */
static void parse_title(form_ctx *c, pmbot_form *f, const json_t *title)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	if (title && !json_is_string(title)) {
		form_diag(c, PMBOT_SEV_ERROR, "FORM_BAD_FIELD", "/title",
			"title must be a string (quote it: title: \"[feat] \")");
		return;
	}
	if (title && pmbot_render_neutralise_title(&b, json_string_value(title),
			json_string_length(title)) < 0)
		goto done;
	if (b.len && b.buf[b.len - 1] == '>') {
		char *lt = strrchr(b.buf, '<');

		if (lt && !memchr(lt, '>', (size_t)(b.buf + b.len - 1 - lt)))
			pmbot_buf_truncate(&b, (size_t)(lt - b.buf));
	}
	while (b.len && b.buf[b.len - 1] == ' ')
		pmbot_buf_truncate(&b, b.len - 1);
	if (b.len && pmbot_buf_putc(&b, ' ') < 0)
		goto done;
	f->title_prefix = pmbot_buf_detach(&b, NULL);
done:
	if (!f->title_prefix)
		c->oom = 1;
	pmbot_buf_free(&b);
}

/* Append a heading (label copied, `id` copied when not NULL). 0 or -1. */
static int add_form_field(pmbot_form *f, const char *label, size_t len, const char *id,
	int required, int line)
{
	pmbot_form_field *p = pmbot_array_grow(f->fields, &f->alloc_fields, f->n_fields + 1,
		sizeof(*p));
	int err = -1;

	if (!p)
		goto done;
	f->fields = p;
	p += f->n_fields;
	memset(p, 0, sizeof(*p));
	if (!(p->label = strndup(label, len)) || (id && !(p->id = strdup(id)))) {
		free(p->label);
		goto done;
	}
	p->kind = pmbot_form_heading_kind(p->label);
	p->required = required;
	p->line = line;
	f->n_fields++;
	err = 0;
done:
	return err;
}

static int label_unsafe(const char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
		if (!strncmp(s, "<!--", 4) || !strncmp(s, "-->", 3))
			return 1;
	}
	return 0;
}

static void parse_block(form_ctx *c, pmbot_form *f, const json_t *block, size_t i,
	pmbot_strmap *ids)
{
	static const char *const types[] = { "markdown", "textarea", "input",
		"dropdown", "checkboxes" };
	pmbot_buf ptr = PMBOT_BUF_INIT;
	const json_t *type, *id, *attrs, *label, *valid, *req;
	pmbot_form_field *field;
	const char *ls;
	size_t t, k, ll;
	int line = 0, col = 0;

	/* Out of memory is recorded and parsing goes on: the caller fails anyway. */
	if (pmbot_buf_printf(&ptr, "/body/%zu", i) < 0)
		c->oom = 1;
	if (!json_is_object(block)) {
		form_diag(c, PMBOT_SEV_ERROR, "FORM_BAD_BLOCK", ptr.buf,
			"a body entry must be a mapping");
		goto done;
	}
	type = json_object_get(block, "type");
	for (t = 0; json_is_string(type) && t < sizeof(types) / sizeof(types[0]); t++)
		if (!strcmp(json_string_value(type), types[t]))
			break;
	if (!json_is_string(type) || t == sizeof(types) / sizeof(types[0])) {
		form_diag(c, PMBOT_SEV_ERROR, "FORM_BAD_BLOCK", ptr.buf,
			"a body entry needs a type: markdown, textarea, input, dropdown or checkboxes");
		goto done;
	}
	if (t == 0)
		goto done; /* markdown: text for the author, no heading */
	id = json_object_get(block, "id");
	if (id && !json_is_string(id)) {
		size_t mark = ptr.len;

		if (pmbot_buf_puts(&ptr, "/id") < 0)
			c->oom = 1;
		form_diag(c, PMBOT_SEV_ERROR, "FORM_BAD_FIELD", ptr.buf, "id must be a string");
		pmbot_buf_truncate(&ptr, mark);
		id = NULL;
	}
	if (id) {
		void *prev = NULL;
		int r = pmbot_strmap_put(ids, json_string_value(id), (void *)block, &prev);

		if (r < 0)
			c->oom = 1;
		if (r == 1)
			form_diag(c, PMBOT_SEV_ERROR, "FORM_DUPLICATE_ID", ptr.buf,
				"id \"%s\" is used by another body entry", json_string_value(id));
	}
	attrs = json_object_get(block, "attributes");
	label = json_is_object(attrs) ? json_object_get(attrs, "label") : NULL;
	ls = json_is_string(label) ? json_string_value(label) : "";
	while (isspace((unsigned char)*ls))
		ls++;
	ll = strlen(ls);
	while (ll && isspace((unsigned char)ls[ll - 1]))
		ll--;
	if (!ll) {
		form_diag(c, PMBOT_SEV_ERROR, "FORM_MISSING_LABEL", ptr.buf,
			"a %s entry needs attributes.label (its heading)", json_string_value(type));
		goto done;
	}
	valid = json_object_get(block, "validations");
	req = json_is_object(valid) ? json_object_get(valid, "required") : NULL;
	if (pmbot_buf_puts(&ptr, "/attributes/label") < 0)
		c->oom = 1;
	if (c->map)
		pmbot_srcmap_find(c->map, ptr.buf, &line, &col);
	if (add_form_field(f, ls, ll, id ? json_string_value(id) : NULL, json_is_true(req),
			line) < 0) {
		c->oom = 1;
		goto done;
	}
	field = &f->fields[f->n_fields - 1];
	if (label_unsafe(field->label))
		form_diag(c, PMBOT_SEV_ERROR, "FORM_UNSAFE_LABEL", ptr.buf,
			"a heading must be one line without \"<!--\" or \"-->\"");
	for (k = 0; k + 1 < f->n_fields; k++)
		if (pmbot_body_heading_eq(f->fields[k].label, field->label))
			form_diag(c, PMBOT_SEV_ERROR, "FORM_DUPLICATE_LABEL", ptr.buf,
				"heading \"%s\" repeats \"%s\" (line %d): the body could not tell them apart",
				field->label, f->fields[k].label, f->fields[k].line);
done:
	pmbot_buf_free(&ptr);
}

/*
 * The type: a label with the scheme's type prefix, else a top-level
 * `type` (GitHub's issue type), else the name.
 */
static void detect_type(form_ctx *c, pmbot_form *f, const json_t *root,
	const char *type_prefix)
{
	size_t plen = strlen(type_prefix), i;
	const json_t *type;
	pmbot_node_type t;

	for (i = 0; plen && i < f->n_labels; i++) {
		const char *l = f->labels[i];

		const char *name;

		if (strncmp(l, type_prefix, plen))
			continue;
		/* Any lower-case word names a type here: a label is how a new type is named. */
		if (type_from_word(&t, l + plen, strlen(l + plen)))
			name = pmbot_node_type_name(t);
		else if (pmbot_report_type_word_ok(l + plen, strlen(l + plen)))
			t = PMBOT_NODE_OTHER, name = l + plen;
		else
			continue;
		if (f->has_type && strcmp(name, f->type_name)) {
			form_diag(c, PMBOT_SEV_ERROR, "FORM_AMBIGUOUS_TYPE", "/labels",
				"labels name two work-item types (%s and %s)", f->type_name, name);
			return;
		}
		f->has_type = 1;
		f->type = t;
		f->type_name = name;
		f->type_label = l;
	}
	if (f->has_type)
		return;
	type = json_object_get(root, "type");
	if (json_is_string(type) &&
	    type_from_name(&t, json_string_value(type))) {
		f->has_type = 1;
		f->type = t;
		f->type_name = pmbot_node_type_name(t);
		return;
	}
	if (f->name && type_from_name(&t, f->name)) {
		f->has_type = 1;
		f->type = t;
		f->type_name = pmbot_node_type_name(t);
	}
}

int pmbot_form_parse(pmbot_form **out, const char *path, const char *text,
	size_t len, const pmbot_label_scheme *scheme, pmbot_diag_list *diags)
{
	static const pmbot_label_scheme def = PMBOT_LABEL_SCHEME_DEFAULT;
	pmbot_diag_list yaml = PMBOT_DIAG_LIST_INIT;
	form_ctx c = { path, NULL, diags, 0, 0 };
	pmbot_strmap ids = PMBOT_STRMAP_INIT;
	pmbot_form *f = NULL;
	json_t *root = NULL;
	const json_t *name, *body;
	pmbot_limits lim;
	size_t i;
	int err = PMBOT_ERROR, r;

	*out = NULL;
	if (!scheme)
		scheme = &def;
	if (!(c.map = pmbot_srcmap_new()))
		goto done;
	pmbot_limits_default(&lim);
	r = pmbot_yaml_parse(&root, c.map, path, text, len, 1, 0, &lim, &yaml);
	if (r == PMBOT_ERROR)
		goto done;
	if (r < 0) {
		/* One code for every way a form fails to load as YAML. */
		for (i = 0; i < yaml.count; i++) {
			const pmbot_diag *d = &yaml.items[i];

			if (pmbot_diag_add(diags, d->severity, "FORM_YAML", path, d->path,
					d->line, d->column, "%s: %s", d->code, d->message) < 0)
				goto done;
		}
		if (!yaml.errors && pmbot_diag_add(diags, PMBOT_SEV_ERROR, "FORM_YAML", path,
				"", 0, 0, "the form is not valid YAML") < 0)
			goto done;
		err = PMBOT_EINVALID;
		goto done;
	}
	if (!json_is_object(root)) {
		form_diag(&c, PMBOT_SEV_ERROR, "FORM_NOT_MAPPING", "",
			"an issue form is a mapping with name and body");
		err = c.oom ? PMBOT_ERROR : PMBOT_EINVALID;
		goto done;
	}
	if (!(f = calloc(1, sizeof(*f))) || !(f->path = strdup(path ? path : "")))
		goto done;
	name = json_object_get(root, "name");
	if (!json_is_string(name) || !json_string_length(name))
		form_diag(&c, PMBOT_SEV_ERROR, "FORM_MISSING_NAME", name ? "/name" : "",
			"an issue form needs a name (a string)");
	else if (!(f->name = strdup(json_string_value(name))))
		goto done;
	parse_title(&c, f, json_object_get(root, "title"));
	parse_labels(&c, f, json_object_get(root, "labels"));
	body = json_object_get(root, "body");
	if (!json_is_array(body) || !json_array_size(body)) {
		form_diag(&c, PMBOT_SEV_ERROR, "FORM_MISSING_BODY", body ? "/body" : "",
			"an issue form needs a non-empty body list");
	} else {
		for (i = 0; i < json_array_size(body) && !c.oom; i++)
			parse_block(&c, f, json_array_get(body, i), i, &ids);
		if (!f->n_fields && !c.errors)
			form_diag(&c, PMBOT_SEV_ERROR, "FORM_NO_FIELDS", "/body",
				"the body has only markdown entries: no heading to fill");
	}
	if (c.oom)
		goto done;
	detect_type(&c, f, root, scheme->type ? scheme->type : "");
	if (c.oom)
		goto done;
	if (c.errors) {
		err = PMBOT_EINVALID;
		goto done;
	}
	*out = f;
	f = NULL;
	err = PMBOT_OK;
done:
	pmbot_form_free(f);
	pmbot_strmap_free(&ids);
	pmbot_diag_list_free(&yaml);
	pmbot_srcmap_free(c.map);
	json_decref(root);
	return err;
}

/* ---- built-in forms --------------------------------------------------- */

static const char *const tracked_headings[] = {
	"Area", "Priority", "Size", "Estimate (hrs)", "Risk", "Blocked by", "Actual (hrs)"
};

static const struct {
	const char *name;
	const char *prefix;
} builtin_meta[N_TYPES] = {
	[PMBOT_NODE_EPIC] = { "Epic", "[epic] " },
	[PMBOT_NODE_FEATURE] = { "Feature", "[feat] " },
	[PMBOT_NODE_TASK] = { "Task", "[task] " },
	[PMBOT_NODE_BUG] = { "Bug", "[bug] " },
	[PMBOT_NODE_SPIKE] = { "Spike", "[spike] " },
	[PMBOT_NODE_TEST] = { "Test", "[test] " },
	[PMBOT_NODE_CHORE] = { "Chore", "[chore] " },
	[PMBOT_NODE_BENCHMARK] = { "Benchmark", "[bench] " },
};

static int add_builtin_field(pmbot_form *f, const char *label, int required)
{
	return add_form_field(f, label, strlen(label), NULL, required, 0);
}

static int form_builtin(pmbot_form **out, pmbot_node_type type, const char *open)
{
	pmbot_form *f = NULL;
	pmbot_buf prefix = PMBOT_BUF_INIT;
	size_t i;
	int err = PMBOT_ERROR;

	*out = NULL;
	if (open ? !pmbot_report_type_word_ok(open, strlen(open)) : (size_t)type >= N_TYPES)
		return PMBOT_EINVALID;
	if (open && pmbot_buf_printf(&prefix, "[%s] ", open) < 0)
		goto done;
	if (!(f = calloc(1, sizeof(*f))) || !(f->path = strdup("(built-in)")) ||
	    !(f->name = strdup(open ? open : builtin_meta[type].name)) ||
	    !(f->title_prefix = strdup(open ? prefix.buf : builtin_meta[type].prefix)))
		goto done;
	f->has_type = 1;
	f->type = type;
	f->type_name = open ? f->name : pmbot_node_type_name(type);
	f->builtin = 1;
	if (type == PMBOT_NODE_EPIC) {
		if (add_builtin_field(f, "Objective", 1) < 0 ||
		    add_builtin_field(f, "Acceptance criteria", 0) < 0 ||
		    add_builtin_field(f, "Milestones", 0) < 0)
			goto done;
	} else if (add_builtin_field(f, "Goal", 1) < 0 ||
		   add_builtin_field(f, "Acceptance criteria", 0) < 0) {
		goto done;
	}
	if (add_builtin_field(f, "Links", 0) < 0)
		goto done;
	for (i = 0; i < sizeof(tracked_headings) / sizeof(tracked_headings[0]); i++)
		if (add_builtin_field(f, tracked_headings[i], i < 2) < 0)
			goto done;
	*out = f;
	f = NULL;
	err = PMBOT_OK;
done:
	pmbot_buf_free(&prefix);
	pmbot_form_free(f);
	return err;
}

int pmbot_form_builtin(pmbot_form **out, pmbot_node_type type)
{
	return form_builtin(out, type, NULL);
}

int pmbot_form_builtin_open(pmbot_form **out, const char *type)
{
	return form_builtin(out, PMBOT_NODE_OTHER, type);
}

/* ---- form sets ---------------------------------------------------------- */

struct pmbot_formset {
	char *type_prefix;
	pmbot_form *repo[N_TYPES];
	pmbot_form *builtin[N_TYPES];
	pmbot_form **open;      /* repository forms of open types, one per type name */
	size_t n_open, alloc_open;
	size_t count;
};

void pmbot_formset_free(pmbot_formset *set)
{
	size_t t;

	if (!set)
		return;
	for (t = 0; t < N_TYPES; t++) {
		pmbot_form_free(set->repo[t]);
		pmbot_form_free(set->builtin[t]);
	}
	for (t = 0; t < set->n_open; t++)
		pmbot_form_free(set->open[t]);
	free(set->open);
	free(set->type_prefix);
	free(set);
}

int pmbot_formset_new(pmbot_formset **out, const pmbot_label_scheme *scheme)
{
	pmbot_formset *set;
	const char *prefix = scheme && scheme->type ? scheme->type : "type:";
	size_t t;
	int err = PMBOT_ERROR;

	*out = NULL;
	if (!(set = calloc(1, sizeof(*set))) || !(set->type_prefix = strdup(prefix)))
		goto done;
	for (t = 0; t < N_TYPES; t++)
		if (pmbot_form_builtin(&set->builtin[t], (pmbot_node_type)t) < 0)
			goto done;
	*out = set;
	set = NULL;
	err = PMBOT_OK;
done:
	pmbot_formset_free(set);
	return err;
}

int pmbot_formset_add(pmbot_formset *set, const char *path, const char *text,
	size_t len, pmbot_diag_list *diags)
{
	pmbot_label_scheme scheme = PMBOT_LABEL_SCHEME_DEFAULT;
	pmbot_form *f = NULL, **slot;
	int err;

	if (!pmbot_form_is_form_path(path))
		return PMBOT_OK;
	scheme.type = set->type_prefix;
	if ((err = pmbot_form_parse(&f, path, text, len, &scheme, diags)) < 0)
		return err;
	if (!f->has_type) {
		err = pmbot_diag_add(diags, PMBOT_SEV_WARNING, "FORM_UNKNOWN_TYPE", path, "", 0, 0,
			"form \"%s\" names no work-item type (no %s<type> label, type or name "
			"like \"Feature\"): pm-bot does not use it", f->name, set->type_prefix);
		pmbot_form_free(f);
		return err < 0 ? PMBOT_ERROR : PMBOT_OK;
	}
	if (f->type != PMBOT_NODE_OTHER) {
		slot = &set->repo[f->type];
	} else {
		size_t i;

		for (i = 0; i < set->n_open && strcmp(set->open[i]->type_name, f->type_name); i++)
			;
		if (i == set->n_open) {
			pmbot_form **grown = pmbot_array_grow(set->open, &set->alloc_open,
				set->n_open + 1, sizeof(*grown));

			if (!grown) {
				pmbot_form_free(f);
				return PMBOT_ERROR;
			}
			set->open = grown;
			set->open[set->n_open++] = NULL;
		}
		slot = &set->open[i];
	}
	if (*slot) {
		/* Keep the same winner whatever order git listed the files in. */
		pmbot_form *keep = strcmp(f->path, (*slot)->path) < 0 ? f : *slot;
		pmbot_form *drop = keep == f ? *slot : f;

		err = pmbot_diag_add(diags, PMBOT_SEV_WARNING, "FORM_DUPLICATE_TYPE", drop->path,
			"", 0, 0, "%s is also a %s form; pm-bot uses %s", drop->path,
			f->type_name, keep->path);
		*slot = keep;
		pmbot_form_free(drop);
		return err < 0 ? PMBOT_ERROR : PMBOT_OK;
	}
	*slot = f;
	set->count++;
	return PMBOT_OK;
}

const pmbot_form *pmbot_formset_find(const pmbot_formset *set, pmbot_node_type type)
{
	if ((size_t)type >= N_TYPES)
		return NULL;
	return set->repo[type] ? set->repo[type] : set->builtin[type];
}

const pmbot_form *pmbot_formset_find_type(const pmbot_formset *set, const char *type)
{
	pmbot_node_type t;
	size_t i;

	if (!type || pmbot_node_type_parse(&t, type) < 0)
		return NULL;
	if (t != PMBOT_NODE_OTHER)
		return set->repo[t] ? set->repo[t] : set->builtin[t];
	for (i = 0; i < set->n_open; i++)
		if (!strcmp(set->open[i]->type_name, type))
			return set->open[i];
	return NULL;
}

size_t pmbot_formset_count(const pmbot_formset *set)
{
	return set->count;
}
