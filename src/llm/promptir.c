#include "pmbot/llm.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/utf8.h"
#include "pmbot/array.h"
#include "pmbot/banned.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define SHOW_MAX 64

static const char *const phase_names[PMBOT_PHASE_COUNT] = {
	"planning", "research", "implementation", "review", "synthesis"
};

/* Same order as pmbot_phase. */
static const int phase_multiplier_tenths[PMBOT_PHASE_COUNT] = { 12, 13, 10, 8, 11 };

static const char *const ir_keys[] = {
	"ir_id", "role", "intent", "phase", "context_refs", "constraints",
	"output_requirements", "token_budget", "priority", "model_hint",
	"temperature_hint", "schema_id", "ir_version", "metadata", "created_at"
};

const char *pmbot_phase_name(pmbot_phase phase)
{
	return (size_t)phase < PMBOT_PHASE_COUNT ? phase_names[phase] : NULL;
}

/* ASCII only: the C library's strcasecmp follows the locale. */
static int ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int ascii_caseeq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (ascii_lower((unsigned char)*a) != ascii_lower((unsigned char)*b))
			return 0;
	return *a == *b;
}

int pmbot_phase_parse(pmbot_phase *out, const char *name)
{
	size_t i;

	*out = PMBOT_PHASE_IMPLEMENTATION;
	if (!name)
		return 1;
	for (i = 0; i < PMBOT_PHASE_COUNT; i++) {
		if (ascii_caseeq(name, phase_names[i])) {
			*out = (pmbot_phase)i;
			return 0;
		}
	}
	if (ascii_caseeq(name, "analysis")) {
		*out = PMBOT_PHASE_PLANNING;
		return 0;
	}
	if (ascii_caseeq(name, "integration")) {
		*out = PMBOT_PHASE_SYNTHESIS;
		return 0;
	}
	return 1;
}

static int valid_id(const char *id)
{
	size_t i;

	if (!id)
		return 0;
	for (i = 0; i < PMBOT_PROMPTIR_ID_LEN; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return 0;
	return id[i] == '\0';
}

static int digits(const char *s, int n, int *val)
{
	int i, v = 0;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	*val = v;
	return 1;
}

/* RFC 3339 date-time with an explicit offset, calendar checked. */
static int valid_datetime(const char *s)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, se, oh, om, dim;

	if (!digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' ||
	    !digits(s + 8, 2, &d) || s[10] != 'T' || !digits(s + 11, 2, &h) ||
	    s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &se))
		return 0;
	if (mo < 1 || mo > 12 || h > 23 || mi > 59 || se > 59)
		return 0;
	dim = mdays[mo - 1];
	if (mo == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
		dim = 29;
	if (d < 1 || d > dim)
		return 0;
	s += 19;
	if (*s == '.') {
		if (s[1] < '0' || s[1] > '9')
			return 0;
		for (s++; *s >= '0' && *s <= '9'; s++)
			;
	}
	if (*s == 'Z')
		return s[1] == '\0';
	if ((*s != '+' && *s != '-') || !digits(s + 1, 2, &oh) || s[3] != ':' ||
	    !digits(s + 4, 2, &om) || s[6] != '\0')
		return 0;
	return oh <= 23 && om <= 59;
}

static int valid_text(const char *s)
{
	return s && pmbot_utf8_valid(s, strlen(s), NULL, NULL, NULL);
}

static void free_strings(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void pmbot_promptir_free(pmbot_promptir *ir)
{
	if (!ir)
		return;
	free(ir->role);
	free(ir->intent);
	free_strings(ir->context_refs, ir->n_context_refs);
	free_strings(ir->constraints, ir->n_constraints);
	json_decref(ir->output_requirements);
	free(ir->model_hint);
	free(ir->schema_id);
	free(ir->ir_version);
	json_decref(ir->metadata);
	free(ir->ir_id);
	free(ir->created_at);
	free(ir);
}

/* An IR with the spec's defaults and no role, intent or id yet. */
static pmbot_promptir *ir_alloc(void)
{
	pmbot_promptir *ir = calloc(1, sizeof(*ir));

	if (!ir)
		return NULL;
	ir->phase = PMBOT_PHASE_IMPLEMENTATION;
	ir->priority = 5;
	ir->temperature_hint = 0.7;
	ir->schema_id = strdup("default");
	ir->ir_version = strdup("1.0");
	ir->output_requirements = json_object();
	ir->metadata = json_object();
	if (!ir->schema_id || !ir->ir_version || !ir->output_requirements || !ir->metadata) {
		pmbot_promptir_free(ir);
		return NULL;
	}
	return ir;
}

int pmbot_promptir_new(pmbot_promptir **out, const char *role, const char *intent,
	pmbot_phase phase, long long token_budget, const char *id, const char *created_at)
{
	pmbot_promptir *ir = NULL;
	int err = PMBOT_EINVALID;

	*out = NULL;
	if (!valid_text(role) || !valid_text(intent) || !valid_id(id) ||
	    (created_at && !valid_datetime(created_at)) ||
	    (size_t)phase >= PMBOT_PHASE_COUNT ||
	    token_budget < 0 || token_budget > PMBOT_PROMPTIR_MAX_BUDGET)
		goto done;
	err = PMBOT_ERROR;
	if (!(ir = ir_alloc()))
		goto done;
	ir->phase = phase;
	ir->token_budget = token_budget;
	ir->role = strdup(role);
	ir->intent = strdup(intent);
	ir->ir_id = strdup(id);
	if (created_at)
		ir->created_at = strdup(created_at);
	if (!ir->role || !ir->intent || !ir->ir_id || (created_at && !ir->created_at))
		goto done;
	*out = ir;
	ir = NULL;
	err = PMBOT_OK;
done:
	pmbot_promptir_free(ir);
	return err;
}

static int push_string(char ***v, size_t *n, size_t *alloc, const char *s)
{
	char **p, *copy = NULL;
	int err = PMBOT_EINVALID;

	if (!valid_text(s))
		goto done;
	err = PMBOT_ERROR;
	if (!(copy = strdup(s)) || !(p = pmbot_array_grow(*v, alloc, *n + 1, sizeof(*p))))
		goto done;
	p[*n] = copy;
	copy = NULL;
	*v = p;
	(*n)++;
	err = PMBOT_OK;
done:
	free(copy);
	return err;
}

int pmbot_promptir_add_context_ref(pmbot_promptir *ir, const char *ref)
{
	return push_string(&ir->context_refs, &ir->n_context_refs, &ir->alloc_context_refs, ref);
}

int pmbot_promptir_add_constraint(pmbot_promptir *ir, const char *constraint)
{
	return push_string(&ir->constraints, &ir->n_constraints, &ir->alloc_constraints, constraint);
}

static int dup_strings(char ***out, char *const *v, size_t n)
{
	char **copy = NULL;
	size_t i = 0;
	int err = -1;

	*out = NULL;
	if (n && !(copy = calloc(n, sizeof(*copy))))
		goto done;
	for (; i < n; i++)
		if (!(copy[i] = strdup(v[i])))
			goto done;
	*out = copy;
	copy = NULL;
	err = 0;
done:
	if (copy)
		free_strings(copy, i);
	return err;
}

static char *dup_or_null(const char *s, int *err)
{
	char *d;

	if (!s)
		return NULL;
	if (!(d = strdup(s)))
		*err = 1;
	return d;
}

int pmbot_promptir_clone(pmbot_promptir **out, const pmbot_promptir *ir, const char *new_id)
{
	pmbot_promptir *c = NULL;
	int err = PMBOT_EINVALID, oom = 0;

	*out = NULL;
	if (!valid_id(new_id) || (ir->ir_id && !strcmp(new_id, ir->ir_id)))
		goto done;
	err = PMBOT_ERROR;
	if (!(c = calloc(1, sizeof(*c))))
		goto done;
	c->phase = ir->phase;
	c->token_budget = ir->token_budget;
	c->priority = ir->priority;
	c->temperature_hint = ir->temperature_hint;
	c->role = dup_or_null(ir->role, &oom);
	c->intent = dup_or_null(ir->intent, &oom);
	c->model_hint = dup_or_null(ir->model_hint, &oom);
	c->schema_id = dup_or_null(ir->schema_id, &oom);
	c->ir_version = dup_or_null(ir->ir_version, &oom);
	c->created_at = dup_or_null(ir->created_at, &oom);
	c->ir_id = dup_or_null(new_id, &oom);
	if (oom)
		goto done;
	if (dup_strings(&c->context_refs, ir->context_refs, ir->n_context_refs) < 0)
		goto done;
	c->n_context_refs = ir->n_context_refs;
	if (dup_strings(&c->constraints, ir->constraints, ir->n_constraints) < 0)
		goto done;
	c->n_constraints = ir->n_constraints;
	c->output_requirements = ir->output_requirements ?
		json_deep_copy(ir->output_requirements) : json_object();
	c->metadata = ir->metadata ? json_deep_copy(ir->metadata) : json_object();
	if (!c->output_requirements || !c->metadata)
		goto done;
	*out = c;
	c = NULL;
	err = PMBOT_OK;
done:
	pmbot_promptir_free(c);
	return err;
}

static json_t *string_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *object_copy(const json_t *v)
{
	return v ? json_deep_copy(v) : json_object();
}

int pmbot_promptir_to_json(json_t **out, const pmbot_promptir *ir)
{
	json_t *o = json_object();
	const char *phase = pmbot_phase_name(ir->phase);
	int err = 0;

	*out = NULL;
	if (!o || !phase || !ir->ir_id)
		goto done;
	/* set_new consumes its value, NULL included, so one failure check at the end suffices. */
	err |= json_object_set_new(o, "ir_id", json_string(ir->ir_id));
	err |= json_object_set_new(o, "role", string_or_null(ir->role));
	err |= json_object_set_new(o, "intent", string_or_null(ir->intent));
	err |= json_object_set_new(o, "phase", json_string(phase));
	err |= json_object_set_new(o, "context_refs",
		pmbot_json_strings(ir->context_refs, ir->n_context_refs));
	err |= json_object_set_new(o, "constraints",
		pmbot_json_strings(ir->constraints, ir->n_constraints));
	err |= json_object_set_new(o, "output_requirements", object_copy(ir->output_requirements));
	err |= json_object_set_new(o, "token_budget", json_integer(ir->token_budget));
	err |= json_object_set_new(o, "priority", json_integer(ir->priority));
	err |= json_object_set_new(o, "model_hint", string_or_null(ir->model_hint));
	err |= json_object_set_new(o, "temperature_hint", json_real(ir->temperature_hint));
	err |= json_object_set_new(o, "schema_id", string_or_null(ir->schema_id));
	err |= json_object_set_new(o, "ir_version", string_or_null(ir->ir_version));
	err |= json_object_set_new(o, "metadata", object_copy(ir->metadata));
	err |= json_object_set_new(o, "created_at", string_or_null(ir->created_at));
	if (err)
		goto done;
	*out = o;
	o = NULL;
done:
	json_decref(o);
	return *out ? PMBOT_OK : PMBOT_ERROR;
}

int pmbot_promptir_hash(char out[PMBOT_PROMPTIR_HASH_SIZE], const pmbot_promptir *ir)
{
	char hex[PMBOT_SHA256_HEX_SIZE];
	json_t *j = NULL;
	int err = PMBOT_ERROR;

	if (pmbot_promptir_to_json(&j, ir) < 0 || pmbot_sha256_json(hex, j) < 0)
		goto done;
	memcpy(out, hex, PMBOT_PROMPTIR_HASH_SIZE - 1);
	out[PMBOT_PROMPTIR_HASH_SIZE - 1] = '\0';
	err = PMBOT_OK;
done:
	json_decref(j);
	return err;
}

int pmbot_promptir_adjust_budget(long long *out, int *multiplier_tenths,
	long long budget, pmbot_phase phase, int priority)
{
	long long mult;

	if ((size_t)phase >= PMBOT_PHASE_COUNT || priority < 1 || priority > 10 ||
	    budget < 0 || budget > PMBOT_PROMPTIR_MAX_BUDGET)
		return PMBOT_EINVALID;
	mult = phase_multiplier_tenths[phase];
	/*
	 * multiplier * (1 + (priority - 5) / 10) = (mult / 10) * ((priority + 5) / 10):
	 * one division at the end truncates like int() on the exact product.
	 */
	*out = budget * mult * (priority + 5) / 100;
	if (multiplier_tenths)
		*multiplier_tenths = (int)mult;
	return PMBOT_OK;
}

/* ---- from_json ----------------------------------------------------------- */

typedef struct {
	pmbot_diag_list *diags;
	pmbot_buf path;
	pmbot_buf show;
	int bad;
	int oom;
} reader;

/* User text goes into messages through here; one such value per message. */
static const char *show(reader *r, const char *s)
{
	return pmbot_diag_show(&r->show, s, SHOW_MAX);
}

static void fail(reader *r, const char *code, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void fail(reader *r, const char *code, const char *key, const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	size_t mark = r->path.len;
	va_list ap;

	r->bad = 1;
	va_start(ap, fmt);
	if (pmbot_buf_vprintf(&msg, fmt, ap) < 0)
		r->oom = 1;
	va_end(ap);
	if (key && pmbot_json_pointer_push(&r->path, key) < 0)
		r->oom = 1;
	if (pmbot_diag_add(r->diags, PMBOT_SEV_ERROR, code, NULL, r->path.buf, 0, 0,
			"%s", msg.buf) < 0)
		r->oom = 1;
	pmbot_buf_truncate(&r->path, mark);
	pmbot_buf_free(&msg);
}

static int has_nul(const json_t *s)
{
	return strlen(json_string_value(s)) != json_string_length(s);
}

/* As elsewhere in pm-bot, a missing member is reported at the object that lacks it. */
static void missing(reader *r, const char *key)
{
	fail(r, "PROMPTIR_FIELD", NULL, "required field '%s' is missing", key);
}

/* A string member; `*dst` is left alone when the member is absent. */
static void read_string(reader *r, const json_t *in, const char *key, int required,
	int nullable, char **dst)
{
	const json_t *v = json_object_get(in, key);

	if (!v) {
		if (required)
			missing(r, key);
		return;
	}
	if (nullable && json_is_null(v)) {
		free(*dst);
		*dst = NULL;
		return;
	}
	if (!json_is_string(v)) {
		fail(r, "PROMPTIR_FIELD", key, "'%s' must be a string%s", key,
			nullable ? " or null" : "");
		return;
	}
	if (has_nul(v)) {
		fail(r, "PROMPTIR_FIELD", key, "'%s' holds a NUL byte", key);
		return;
	}
	free(*dst);
	if (!(*dst = strdup(json_string_value(v))))
		r->oom = 1;
}

static void read_string_array(reader *r, const json_t *in, const char *key,
	char ***dst, size_t *n, size_t *alloc)
{
	const json_t *v = json_object_get(in, key), *item;
	size_t i, mark;

	if (!v) {
		missing(r, key);
		return;
	}
	if (!json_is_array(v)) {
		fail(r, "PROMPTIR_FIELD", key, "'%s' must be an array of strings", key);
		return;
	}
	mark = r->path.len;
	if (pmbot_json_pointer_push(&r->path, key) < 0)
		r->oom = 1;
	json_array_foreach(v, i, item) {
		size_t at = r->path.len;
		int e;

		if (pmbot_json_pointer_push_index(&r->path, i) < 0)
			r->oom = 1;
		if (!json_is_string(item))
			fail(r, "PROMPTIR_FIELD", NULL, "every entry of '%s' must be a string", key);
		else if (has_nul(item))
			fail(r, "PROMPTIR_FIELD", NULL, "an entry of '%s' holds a NUL byte", key);
		else if ((e = push_string(dst, n, alloc, json_string_value(item))) == PMBOT_EINVALID)
			fail(r, "PROMPTIR_FIELD", NULL, "an entry of '%s' is not valid UTF-8", key);
		else if (e < 0)
			r->oom = 1;
		pmbot_buf_truncate(&r->path, at);
	}
	pmbot_buf_truncate(&r->path, mark);
}

static void read_object(reader *r, const json_t *in, const char *key, int required, json_t **dst)
{
	const json_t *v = json_object_get(in, key);
	json_t *copy;

	if (!v) {
		if (required)
			missing(r, key);
		return;
	}
	if (!json_is_object(v)) {
		fail(r, "PROMPTIR_FIELD", key, "'%s' must be an object", key);
		return;
	}
	if (!(copy = json_deep_copy(v))) {
		r->oom = 1;
		return;
	}
	json_decref(*dst);
	*dst = copy;
}

static void read_integer(reader *r, const json_t *in, const char *key, int required,
	long long lo, long long hi, long long *dst)
{
	const json_t *v = json_object_get(in, key);

	if (!v) {
		if (required)
			missing(r, key);
		return;
	}
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		fail(r, "PROMPTIR_FIELD", key, "'%s' must be an integer from %lld to %lld",
			key, lo, hi);
		return;
	}
	*dst = json_integer_value(v);
}

static void read_phase(reader *r, const json_t *in, pmbot_phase *dst)
{
	const json_t *v = json_object_get(in, "phase");
	size_t i;

	if (!v) {
		missing(r, "phase");
		return;
	}
	if (json_is_string(v) && !has_nul(v)) {
		for (i = 0; i < PMBOT_PHASE_COUNT; i++) {
			if (!strcmp(json_string_value(v), phase_names[i])) {
				*dst = (pmbot_phase)i;
				return;
			}
		}
	}
	fail(r, "PROMPTIR_FIELD", "phase", "'phase' must be one of the strings planning, "
		"research, implementation, review, synthesis");
}

static int known_key(const char *key)
{
	size_t i;

	for (i = 0; i < N_OF(ir_keys); i++)
		if (!strcmp(key, ir_keys[i]))
			return 1;
	return 0;
}

int pmbot_promptir_from_json(pmbot_promptir **out, const json_t *in, pmbot_diag_list *diags)
{
	reader r = { diags, PMBOT_BUF_INIT, PMBOT_BUF_INIT, 0, 0 };
	pmbot_promptir *ir = NULL;
	const json_t *v;
	const char *key;
	char hex[PMBOT_SHA256_HEX_SIZE];
	json_t *value;
	int err = PMBOT_ERROR;

	*out = NULL;
	if (!json_is_object(in)) {
		fail(&r, "PROMPTIR_FIELD", NULL, "a Prompt IR must be a JSON object");
		goto done;
	}
	/* Another major version may mean other fields: say only that. */
	v = json_object_get(in, "ir_version");
	if (v && (!json_is_string(v) || has_nul(v) ||
			(strcmp(json_string_value(v), "1.0") &&
			 strncmp(json_string_value(v), "1.", 2)))) {
		if (json_is_string(v))
			fail(&r, "PROMPTIR_VERSION", "ir_version",
				"unsupported IR version '%s' (1.x is supported)",
				show(&r, json_string_value(v)));
		else
			fail(&r, "PROMPTIR_VERSION", "ir_version",
				"'ir_version' must be a string such as \"1.0\"");
		goto done;
	}
	if (!(ir = ir_alloc()))
		goto done;
	read_string(&r, in, "role", 1, 0, &ir->role);
	read_string(&r, in, "intent", 1, 0, &ir->intent);
	read_phase(&r, in, &ir->phase);
	read_string_array(&r, in, "context_refs", &ir->context_refs, &ir->n_context_refs,
		&ir->alloc_context_refs);
	read_string_array(&r, in, "constraints", &ir->constraints, &ir->n_constraints,
		&ir->alloc_constraints);
	read_object(&r, in, "output_requirements", 1, &ir->output_requirements);
	read_integer(&r, in, "token_budget", 1, 0, PMBOT_PROMPTIR_MAX_BUDGET, &ir->token_budget);
	{
		long long prio = ir->priority;

		read_integer(&r, in, "priority", 0, 1, 10, &prio);
		ir->priority = (int)prio;
	}
	read_string(&r, in, "model_hint", 0, 1, &ir->model_hint);
	v = json_object_get(in, "temperature_hint");
	if (v && (!json_is_number(v) || !isfinite(json_number_value(v)) ||
			json_number_value(v) < 0 || json_number_value(v) > 2))
		fail(&r, "PROMPTIR_FIELD", "temperature_hint",
			"'temperature_hint' must be a number from 0 to 2");
	else if (v)
		ir->temperature_hint = json_number_value(v);
	read_string(&r, in, "schema_id", 0, 0, &ir->schema_id);
	read_string(&r, in, "ir_version", 0, 0, &ir->ir_version);
	read_object(&r, in, "metadata", 0, &ir->metadata);
	read_string(&r, in, "ir_id", 0, 1, &ir->ir_id);
	read_string(&r, in, "created_at", 0, 1, &ir->created_at);
	if (ir->created_at && !valid_datetime(ir->created_at)) {
		fail(&r, "PROMPTIR_FIELD", "created_at",
			"created_at '%s' is not an RFC 3339 date-time with an offset",
			show(&r, ir->created_at));
	}
	json_object_foreach((json_t *)in, key, value) {
		if (!known_key(key))
			fail(&r, "PROMPTIR_UNKNOWN_KEY", key,
				"unknown key '%s' (Prompt IR 1.x defines no such field)", show(&r, key));
	}
	if (r.oom || r.bad)
		goto done;
	if (!ir->ir_id || !ir->ir_id[0]) {
		free(ir->ir_id);
		if (pmbot_sha256_json(hex, in) < 0 || !(ir->ir_id = strndup(hex, PMBOT_PROMPTIR_ID_LEN)))
			goto done;
	}
	*out = ir;
	ir = NULL;
	err = PMBOT_OK;
done:
	if (err && !r.oom && r.bad)
		err = PMBOT_EINVALID;
	pmbot_promptir_free(ir);
	pmbot_buf_free(&r.path);
	pmbot_buf_free(&r.show);
	return err;
}
