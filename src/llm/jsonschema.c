#include "pmbot/llm.h"

#include <stdarg.h>
#include <stdio.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/common.h"
#include "pmbot/json.h"
#include "pmbot/strmap.h"
#include "pmbot/banned.h"

#define DRAFT07 "http://json-schema.org/draft-07/schema#"
#define DEFS_PREFIX "#/definitions/"
#define SHOW_CHARS 60

/* ---- text for messages ---- */

/*
 * Python's quoting of a string, as jsonschema's messages show names. A
 * member name from the instance comes from the model: `cut` shortens it
 * like a value; names and patterns from the schema stay whole.
 */
static int put_name(pmbot_buf *out, const char *s, int cut)
{
	char q = (strchr(s, '\'') && !strchr(s, '"')) ? '"' : '\'';
	size_t chars = 0;
	int err = 0;

	err |= pmbot_buf_putc(out, q);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (cut && (ch & 0xc0) != 0x80 && ++chars > SHOW_CHARS) {
			err |= pmbot_buf_puts(out, "...");
			break;
		}
		if (ch == '\\' || ch == (unsigned char)q)
			err |= pmbot_buf_putc(out, '\\') | pmbot_buf_putc(out, (char)ch);
		else if (ch == '\n')
			err |= pmbot_buf_puts(out, "\\n");
		else if (ch == '\r')
			err |= pmbot_buf_puts(out, "\\r");
		else if (ch == '\t')
			err |= pmbot_buf_puts(out, "\\t");
		else if (ch < 0x20 || ch == 0x7f)
			err |= pmbot_buf_printf(out, "\\x%02x", ch);
		else
			err |= pmbot_buf_putc(out, (char)ch);
	}
	err |= pmbot_buf_putc(out, q);
	return err ? -1 : 0;
}

/* A value in a message: its canonical JSON, cut on a code point boundary. */
static int put_value(pmbot_buf *out, const json_t *v)
{
	pmbot_buf tmp = PMBOT_BUF_INIT;
	size_t i, chars = 0;
	int err = -1;

	if (pmbot_json_canonical(&tmp, v) < 0)
		goto done;
	for (i = 0; i < tmp.len; i++) {
		if (((unsigned char)tmp.buf[i] & 0xc0) != 0x80 && ++chars > SHOW_CHARS)
			break;
	}
	if (pmbot_buf_put(out, tmp.buf, i) < 0)
		goto done;
	if (i < tmp.len && pmbot_buf_puts(out, "...") < 0)
		goto done;
	err = 0;
done:
	pmbot_buf_free(&tmp);
	return err;
}

static size_t utf8_chars(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/* ---- values ---- */

/* JSON Schema equality: numbers by value, so 1 and 1.0 are the same. */
static int value_equal(const json_t *a, const json_t *b)
{
	size_t i;

	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		return json_number_value(a) == json_number_value(b);
	}
	if (json_typeof(a) != json_typeof(b))
		return 0;
	switch (json_typeof(a)) {
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
			!memcmp(json_string_value(a), json_string_value(b), json_string_length(a));
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return 0;
		for (i = 0; i < json_array_size(a); i++)
			if (!value_equal(json_array_get(a, i), json_array_get(b, i)))
				return 0;
		return 1;
	case JSON_OBJECT: {
		const char *key;
		json_t *va, *vb;

		if (json_object_size(a) != json_object_size(b))
			return 0;
		json_object_foreach((json_t *)a, key, va) {
			if (!(vb = json_object_get(b, key)) || !value_equal(va, vb))
				return 0;
		}
		return 1;
	}
	default:
		return 1;
	}
}

static const char *const type_names[] = {
	"array", "boolean", "integer", "null", "number", "object", "string"
};

static int known_type(const char *t)
{
	size_t i;

	for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (!strcmp(t, type_names[i]))
			return 1;
	return 0;
}

static int has_type(const json_t *v, const char *t)
{
	if (!strcmp(t, "integer")) {
		double d;

		if (json_is_integer(v))
			return 1;
		d = json_is_real(v) ? json_real_value(v) : 0.5;
		return pmbot_json_is_whole(d);
	}
	if (!strcmp(t, "number"))
		return json_is_number(v);
	if (!strcmp(t, "string"))
		return json_is_string(v);
	if (!strcmp(t, "object"))
		return json_is_object(v);
	if (!strcmp(t, "array"))
		return json_is_array(v);
	if (!strcmp(t, "boolean"))
		return json_is_boolean(v);
	return !strcmp(t, "null") && json_is_null(v);
}

/* "#/definitions/<token>" -> the definition, or NULL. */
static const json_t *resolve_ref(const json_t *root, const char *ref)
{
	pmbot_buf name = PMBOT_BUF_INIT;
	const json_t *defs, *target = NULL;
	const char *p;

	if (strncmp(ref, DEFS_PREFIX, strlen(DEFS_PREFIX)))
		return NULL;
	for (p = ref + strlen(DEFS_PREFIX); *p; p++) {
		char ch = *p;

		if (ch == '/')
			goto done;
		if (ch == '~') {
			if (p[1] != '0' && p[1] != '1')
				goto done;
			ch = *++p == '0' ? '~' : '/';
		}
		if (pmbot_buf_putc(&name, ch) < 0)
			goto done;
	}
	defs = json_object_get(root, "definitions");
	if (name.len && json_is_object(defs))
		target = json_object_get(defs, name.buf);
done:
	pmbot_buf_free(&name);
	return target;
}

/* ---- schema check ---- */

typedef struct {
	pmbot_diag_list *diags;
	const json_t *root;
	pmbot_buf ptr;
	int oom;
} cctx;

static void problem(cctx *c, const char *code, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void problem(cctx *c, const char *code, const char *key, const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	size_t len = c->ptr.len;
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = pmbot_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	if (err < 0 || (key && pmbot_json_pointer_push(&c->ptr, key) < 0) ||
	    pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, code, NULL, c->ptr.buf, 0, 0,
			"%s", msg.buf) < 0)
		c->oom = 1;
	pmbot_buf_truncate(&c->ptr, len);
	pmbot_buf_free(&msg);
}

/*
 * The part of the regular expression syntax where POSIX ERE and ECMA-262
 * give the same verdicts; NULL when `p` stays inside it.
 */
static const char *pattern_problem(const char *p)
{
	for (; *p; p++) {
		if (*p == '\\') {
			if (!p[1] || !strchr(".[]{}()*+?^$|\\", p[1]))
				return "escapes other than of .[]{}()*+?^$|\\ differ between POSIX and ECMA-262";
			p++;
		} else if (*p == '.') {
			return "'.' outside brackets differs on newlines between POSIX and ECMA-262";
		} else if (*p == '(' && p[1] == '?') {
			return "'(?' groups are not POSIX";
		} else if (*p == '[') {
			p++;
			if (*p == '^')
				p++;
			if (*p == ']')
				return "']' first in brackets differs between POSIX and ECMA-262";
			for (; *p != ']'; p++) {
				if (!*p)
					return "unterminated bracket expression";
				if (*p == '\\')
					return "a backslash in brackets differs between POSIX and ECMA-262";
				if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '='))
					return "POSIX bracket classes are not ECMA-262";
			}
		}
	}
	return NULL;
}

static int is_count(const json_t *v)
{
	return json_is_integer(v) && json_integer_value(v) >= 0;
}

static int is_annotation(const char *key)
{
	return !strcmp(key, "$id") || !strcmp(key, "$comment") || !strcmp(key, "title") ||
		!strcmp(key, "description") || !strcmp(key, "default") || !strcmp(key, "examples");
}

static void check_schema(cctx *c, const json_t *s, int is_root);

static void check_sub(cctx *c, const char *key, const json_t *s)
{
	size_t len = c->ptr.len;

	if (pmbot_json_pointer_push(&c->ptr, key) < 0) {
		c->oom = 1;
		return;
	}
	check_schema(c, s, 0);
	pmbot_buf_truncate(&c->ptr, len);
}

static void check_sub2(cctx *c, const char *key, const char *key2, const json_t *s)
{
	size_t len = c->ptr.len;

	if (pmbot_json_pointer_push(&c->ptr, key) < 0)
		c->oom = 1;
	else
		check_sub(c, key2, s);
	pmbot_buf_truncate(&c->ptr, len);
}

static void check_keyword(cctx *c, const json_t *parent, const char *key, const json_t *v,
	int is_root);

static void check_ref(cctx *c, const json_t *s, const json_t *ref, int is_root)
{
	const json_t *target;
	const char *key;
	json_t *v;
	size_t hops = 0, limit;

	json_object_foreach((json_t *)s, key, v) {
		/* The root's $schema and definitions are not siblings in draft-07's sense. */
		if (is_root && (!strcmp(key, "$schema") || !strcmp(key, "definitions")))
			check_keyword(c, s, key, v, is_root);
		else if (strcmp(key, "$ref") && !is_annotation(key))
			problem(c, "JSONSCHEMA_UNSUPPORTED", key,
				"keyword beside $ref (draft-07 ignores it): %s", key);
	}
	if (!json_is_string(ref)) {
		problem(c, "JSONSCHEMA_INVALID", "$ref", "$ref must be a string");
		return;
	}
	if (!(target = resolve_ref(c->root, json_string_value(ref)))) {
		problem(c, "JSONSCHEMA_INVALID", "$ref",
			"$ref does not name an entry of the root's definitions: %s",
			json_string_value(ref));
		return;
	}
	/* A chain of plain $refs longer than the definitions must loop. */
	limit = json_object_size(json_object_get(c->root, "definitions"));
	while (json_is_object(target) && json_is_string(json_object_get(target, "$ref"))) {
		if (++hops > limit) {
			problem(c, "JSONSCHEMA_INVALID", "$ref", "$ref chain is a cycle: %s",
				json_string_value(ref));
			return;
		}
		target = resolve_ref(c->root, json_string_value(json_object_get(target, "$ref")));
	}
}

static void check_type(cctx *c, const json_t *v)
{
	size_t i, j;

	if (json_is_string(v)) {
		if (!known_type(json_string_value(v)))
			problem(c, "JSONSCHEMA_INVALID", "type", "unknown type %s", json_string_value(v));
		return;
	}
	if (!json_is_array(v) || !json_array_size(v)) {
		problem(c, "JSONSCHEMA_INVALID", "type",
			"type must be a type name or a non-empty list of them");
		return;
	}
	for (i = 0; i < json_array_size(v); i++) {
		const json_t *t = json_array_get(v, i);

		if (!json_is_string(t) || !known_type(json_string_value(t))) {
			problem(c, "JSONSCHEMA_INVALID", "type", "type lists an unknown type");
			return;
		}
		for (j = 0; j < i; j++) {
			if (json_equal(t, json_array_get(v, j))) {
				problem(c, "JSONSCHEMA_INVALID", "type", "type lists %s twice",
					json_string_value(t));
				return;
			}
		}
	}
}

static void check_pattern(cctx *c, const json_t *v)
{
	const char *why;
	regex_t re;

	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
		problem(c, "JSONSCHEMA_INVALID", "pattern", "pattern must be a string");
		return;
	}
	if ((why = pattern_problem(json_string_value(v)))) {
		problem(c, "JSONSCHEMA_INVALID", "pattern", "pattern is not portable: %s", why);
		return;
	}
	if (regcomp(&re, json_string_value(v), REG_EXTENDED | REG_NOSUB)) {
		problem(c, "JSONSCHEMA_INVALID", "pattern", "pattern does not compile: %s",
			json_string_value(v));
		return;
	}
	regfree(&re);
}

static void check_keyword(cctx *c, const json_t *parent, const char *key, const json_t *v,
	int is_root)
{
	if (!strcmp(key, "$schema")) {
		if (!is_root || !json_is_string(v) || strcmp(json_string_value(v), DRAFT07))
			problem(c, "JSONSCHEMA_UNSUPPORTED", key,
				"only the root may name a $schema, and only draft-07's");
	} else if (!strcmp(key, "$id") || !strcmp(key, "$comment") || !strcmp(key, "title") ||
			!strcmp(key, "description")) {
		if (!json_is_string(v))
			problem(c, "JSONSCHEMA_INVALID", key, "%s must be a string", key);
	} else if (!strcmp(key, "default") || !strcmp(key, "const")) {
		/* any value */
	} else if (!strcmp(key, "examples")) {
		if (!json_is_array(v))
			problem(c, "JSONSCHEMA_INVALID", key, "%s must be an array", key);
	} else if (!strcmp(key, "type")) {
		check_type(c, v);
	} else if (!strcmp(key, "enum")) {
		if (!json_is_array(v) || !json_array_size(v))
			problem(c, "JSONSCHEMA_INVALID", key, "%s must be a non-empty array", key);
	} else if (!strcmp(key, "required")) {
		size_t i;

		if (!json_is_array(v)) {
			problem(c, "JSONSCHEMA_INVALID", key, "%s must be an array of names", key);
			return;
		}
		for (i = 0; i < json_array_size(v); i++) {
			if (!json_is_string(json_array_get(v, i))) {
				problem(c, "JSONSCHEMA_INVALID", key, "%s must be an array of names", key);
				return;
			}
		}
	} else if (!strcmp(key, "properties") || !strcmp(key, "definitions")) {
		const char *name;
		json_t *sub;

		if (!strcmp(key, "definitions") && !is_root) {
			problem(c, "JSONSCHEMA_UNSUPPORTED", key, "only the root may hold %s", key);
			return;
		}
		if (!json_is_object(v)) {
			problem(c, "JSONSCHEMA_INVALID", key, "%s must be an object of schemas", key);
			return;
		}
		json_object_foreach((json_t *)v, name, sub)
			check_sub2(c, key, name, sub);
	} else if (!strcmp(key, "additionalProperties") || !strcmp(key, "if") ||
			!strcmp(key, "then") || !strcmp(key, "else")) {
		check_sub(c, key, v);
	} else if (!strcmp(key, "items")) {
		if (json_is_array(v))
			problem(c, "JSONSCHEMA_UNSUPPORTED", key, "array-form %s is not supported", key);
		else
			check_sub(c, key, v);
	} else if (!strcmp(key, "allOf")) {
		size_t i;
		char idx[24];

		if (!json_is_array(v) || !json_array_size(v)) {
			problem(c, "JSONSCHEMA_INVALID", key, "%s must be a non-empty array of schemas", key);
			return;
		}
		for (i = 0; i < json_array_size(v); i++) {
			snprintf(idx, sizeof(idx), "%zu", i);
			check_sub2(c, key, idx, json_array_get(v, i));
		}
	} else if (!strcmp(key, "minItems") || !strcmp(key, "maxItems") ||
			!strcmp(key, "minLength") || !strcmp(key, "maxLength")) {
		if (!is_count(v))
			problem(c, "JSONSCHEMA_INVALID", key, "%s must be a non-negative integer", key);
	} else if (!strcmp(key, "minimum") || !strcmp(key, "maximum") ||
			!strcmp(key, "exclusiveMinimum") || !strcmp(key, "exclusiveMaximum")) {
		if (!json_is_number(v))
			problem(c, "JSONSCHEMA_INVALID", key, "%s must be a number", key);
	} else if (!strcmp(key, "uniqueItems")) {
		if (!json_is_boolean(v))
			problem(c, "JSONSCHEMA_INVALID", key, "%s must be a boolean", key);
		else if (json_is_true(v) && !is_count(json_object_get(parent, "maxItems")))
			problem(c, "JSONSCHEMA_UNSUPPORTED", key,
				"uniqueItems needs a maxItems beside it (it compares every pair)");
	} else if (!strcmp(key, "pattern")) {
		check_pattern(c, v);
	} else {
		problem(c, "JSONSCHEMA_UNSUPPORTED", key, "keyword %s is not supported", key);
	}
}

static void check_schema(cctx *c, const json_t *s, int is_root)
{
	const json_t *ref;
	const char *key;
	json_t *v;

	if (c->oom || json_is_boolean(s))
		return;
	if (!json_is_object(s)) {
		problem(c, "JSONSCHEMA_INVALID", NULL, "a schema must be an object or a boolean");
		return;
	}
	if ((ref = json_object_get(s, "$ref"))) {
		check_ref(c, s, ref, is_root);
		return;
	}
	json_object_foreach((json_t *)s, key, v)
		check_keyword(c, s, key, v, is_root);
}

int pmbot_jsonschema_check(pmbot_diag_list *diags, const json_t *schema)
{
	cctx c = { diags, schema, PMBOT_BUF_INIT, 0 };
	size_t before = diags->errors;
	int err;

	check_schema(&c, schema, 1);
	if (c.oom)
		err = PMBOT_ERROR;
	else
		err = diags->errors > before ? PMBOT_EINVALID : PMBOT_OK;
	pmbot_buf_free(&c.ptr);
	return err;
}

/* ---- validation ---- */

typedef struct {
	const json_t *root;
	pmbot_diag_list *diags;
	pmbot_buf ptr;        /* JSON Pointer of the value being validated */
	pmbot_buf msg;
	pmbot_strmap regexes; /* pattern text (borrowed from the schema) -> regex_t */
	int quiet;            /* inside `if`: failures are counted, not reported */
	size_t failures;
	int full;             /* PMBOT_JSONSCHEMA_MAX_ERRORS reported: stop */
	int oom;
} vctx;

/* Report c->msg at the current pointer, or at its member `key`. */
static void report(vctx *c, const char *code, const char *key)
{
	size_t len = c->ptr.len;

	c->failures++;
	if (c->quiet || c->oom || c->full)
		return;
	if (c->diags->count >= PMBOT_JSONSCHEMA_MAX_ERRORS) {
		c->full = 1;
		return;
	}
	if (key && pmbot_json_pointer_push(&c->ptr, key) < 0)
		c->oom = 1;
	else if (pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, code, NULL, c->ptr.buf, 0, 0,
			"%s", c->msg.buf) < 0)
		c->oom = 1;
	pmbot_buf_truncate(&c->ptr, len);
}

/* Start c->msg with `v` shown; 0 or -1 (then c->oom is set). */
static int msg_value(vctx *c, const json_t *v)
{
	pmbot_buf_clear(&c->msg);
	if (put_value(&c->msg, v) < 0) {
		c->oom = 1;
		return -1;
	}
	return 0;
}

static void validate(vctx *c, const json_t *s, const json_t *inst, int depth);

static void kw_type(vctx *c, const json_t *t, const json_t *inst)
{
	size_t i;
	int err = 0;

	if (json_is_string(t)) {
		if (has_type(inst, json_string_value(t)))
			return;
	} else {
		for (i = 0; i < json_array_size(t); i++)
			if (has_type(inst, json_string_value(json_array_get(t, i))))
				return;
	}
	if (c->quiet) {
		c->failures++;
		return;
	}
	if (msg_value(c, inst) < 0)
		return;
	err |= pmbot_buf_puts(&c->msg, " is not of type ");
	if (json_is_string(t)) {
		err |= put_name(&c->msg, json_string_value(t), 0);
	} else {
		for (i = 0; i < json_array_size(t); i++) {
			if (i)
				err |= pmbot_buf_puts(&c->msg, ", ");
			err |= put_name(&c->msg, json_string_value(json_array_get(t, i)), 0);
		}
	}
	if (err)
		c->oom = 1;
	report(c, "SCHEMA_TYPE", NULL);
}

static void kw_enum(vctx *c, const json_t *e, const json_t *inst)
{
	size_t i;

	for (i = 0; i < json_array_size(e); i++)
		if (value_equal(inst, json_array_get(e, i)))
			return;
	if (c->quiet) {
		c->failures++;
		return;
	}
	if (msg_value(c, inst) < 0)
		return;
	if (pmbot_buf_puts(&c->msg, " is not one of ") < 0 || put_value(&c->msg, e) < 0)
		c->oom = 1;
	report(c, "SCHEMA_ENUM", NULL);
}

static void kw_const(vctx *c, const json_t *k, const json_t *inst)
{
	if (value_equal(inst, k))
		return;
	if (c->quiet) {
		c->failures++;
		return;
	}
	if (msg_value(c, k) < 0)
		return;
	if (pmbot_buf_puts(&c->msg, " was expected") < 0)
		c->oom = 1;
	report(c, "SCHEMA_CONST", NULL);
}

/* "VALUE<text><bound>" where bound is the keyword's value from the schema. */
static void fail_bound(vctx *c, const char *code, const json_t *inst, const char *text,
	const json_t *bound, const char *close)
{
	if (c->quiet) {
		c->failures++;
		return;
	}
	if (msg_value(c, inst) < 0)
		return;
	if (pmbot_buf_puts(&c->msg, text) < 0 || put_value(&c->msg, bound) < 0 ||
	    pmbot_buf_puts(&c->msg, close) < 0)
		c->oom = 1;
	report(c, code, NULL);
}

static const regex_t *get_regex(vctx *c, const char *pattern)
{
	void *found;
	regex_t *re;

	if (pmbot_strmap_get(&c->regexes, pattern, &found))
		return found;
	if (!(re = malloc(sizeof(*re)))) {
		c->oom = 1;
		return NULL;
	}
	if (regcomp(re, pattern, REG_EXTENDED | REG_NOSUB)) {
		/* pmbot_jsonschema_check() compiled it already; only memory can fail here. */
		free(re);
		c->oom = 1;
		return NULL;
	}
	if (pmbot_strmap_put(&c->regexes, pattern, re, NULL) < 0) {
		regfree(re);
		free(re);
		c->oom = 1;
		return NULL;
	}
	return re;
}

static void kw_string(vctx *c, const json_t *s, const json_t *inst)
{
	const char *str = json_string_value(inst);
	size_t len = json_string_length(inst), chars = utf8_chars(str, len);
	const json_t *k;

	if ((k = json_object_get(s, "minLength")) && chars < (size_t)json_integer_value(k))
		fail_bound(c, "SCHEMA_MIN_LENGTH", inst, " is too short (minLength ", k, ")");
	if ((k = json_object_get(s, "maxLength")) && chars > (size_t)json_integer_value(k))
		fail_bound(c, "SCHEMA_MAX_LENGTH", inst, " is too long (maxLength ", k, ")");
	if ((k = json_object_get(s, "pattern"))) {
		const regex_t *re = get_regex(c, json_string_value(k));

		if (!re || (strlen(str) == len && !regexec(re, str, 0, NULL, 0)))
			return;
		if (c->quiet) {
			c->failures++;
			return;
		}
		if (msg_value(c, inst) < 0)
			return;
		if (pmbot_buf_puts(&c->msg, " does not match ") < 0 ||
		    put_name(&c->msg, json_string_value(k), 0) < 0)
			c->oom = 1;
		report(c, "SCHEMA_PATTERN", NULL);
	}
}

static void kw_number(vctx *c, const json_t *s, const json_t *inst)
{
	double d = json_number_value(inst);
	const json_t *k;

	if ((k = json_object_get(s, "minimum")) && d < json_number_value(k))
		fail_bound(c, "SCHEMA_MINIMUM", inst, " is less than the minimum of ", k, "");
	if ((k = json_object_get(s, "maximum")) && d > json_number_value(k))
		fail_bound(c, "SCHEMA_MAXIMUM", inst, " is greater than the maximum of ", k, "");
	if ((k = json_object_get(s, "exclusiveMinimum")) && d <= json_number_value(k))
		fail_bound(c, "SCHEMA_EXCLUSIVE_MINIMUM", inst,
			" is less than or equal to the minimum of ", k, "");
	if ((k = json_object_get(s, "exclusiveMaximum")) && d >= json_number_value(k))
		fail_bound(c, "SCHEMA_EXCLUSIVE_MAXIMUM", inst,
			" is greater than or equal to the maximum of ", k, "");
}

static void kw_array(vctx *c, const json_t *s, const json_t *inst, int depth)
{
	size_t n = json_array_size(inst), i, j, len = c->ptr.len;
	const json_t *k;

	if ((k = json_object_get(s, "minItems")) && n < (size_t)json_integer_value(k))
		fail_bound(c, "SCHEMA_MIN_ITEMS", inst, " is too short (minItems ", k, ")");
	if ((k = json_object_get(s, "maxItems")) && n > (size_t)json_integer_value(k))
		fail_bound(c, "SCHEMA_MAX_ITEMS", inst, " is too long (maxItems ", k, ")");
	/* Pairs are compared only up to maxItems, which the check made sure is there. */
	else if (json_is_true(json_object_get(s, "uniqueItems"))) {
		int dup = 0;

		for (i = 1; i < n && !dup; i++)
			for (j = 0; j < i && !dup; j++)
				dup = value_equal(json_array_get(inst, i), json_array_get(inst, j));
		if (dup && c->quiet) {
			c->failures++;
		} else if (dup && msg_value(c, inst) == 0) {
			if (pmbot_buf_puts(&c->msg, " has non-unique elements") < 0)
				c->oom = 1;
			report(c, "SCHEMA_UNIQUE", NULL);
		}
	}
	if (!(k = json_object_get(s, "items")))
		return;
	for (i = 0; i < n && !c->oom; i++) {
		if (pmbot_json_pointer_push_index(&c->ptr, i) < 0) {
			c->oom = 1;
			break;
		}
		validate(c, k, json_array_get(inst, i), depth + 1);
		pmbot_buf_truncate(&c->ptr, len);
	}
}

static void kw_object(vctx *c, const json_t *s, const json_t *inst, int depth)
{
	const json_t *req = json_object_get(s, "required");
	const json_t *props = json_object_get(s, "properties");
	const json_t *extra = json_object_get(s, "additionalProperties");
	size_t i, len = c->ptr.len;
	const char *key;
	json_t *v;

	for (i = 0; i < json_array_size(req); i++) {
		const char *name = json_string_value(json_array_get(req, i));

		if (json_object_get(inst, name))
			continue;
		if (c->quiet) {
			c->failures++;
			continue;
		}
		pmbot_buf_clear(&c->msg);
		if (put_name(&c->msg, name, 0) < 0 ||
		    pmbot_buf_puts(&c->msg, " is a required property") < 0)
			c->oom = 1;
		report(c, "SCHEMA_REQUIRED", name);
	}
	json_object_foreach((json_t *)inst, key, v) {
		const json_t *sub = props ? json_object_get(props, key) : NULL;

		if (c->oom)
			break;
		if (!sub && json_is_false(extra)) {
			if (c->quiet) {
				c->failures++;
				continue;
			}
			pmbot_buf_clear(&c->msg);
			if (pmbot_buf_puts(&c->msg, "Additional properties are not allowed (") < 0 ||
			    put_name(&c->msg, key, 1) < 0 ||
			    pmbot_buf_puts(&c->msg, " was unexpected)") < 0)
				c->oom = 1;
			report(c, "SCHEMA_ADDITIONAL", key);
			continue;
		}
		if (!sub && !(sub = extra))
			continue;
		if (pmbot_json_pointer_push(&c->ptr, key) < 0) {
			c->oom = 1;
			break;
		}
		validate(c, sub, v, depth + 1);
		pmbot_buf_truncate(&c->ptr, len);
	}
}

static void validate(vctx *c, const json_t *s, const json_t *inst, int depth)
{
	const json_t *k;
	size_t i;

	/* Quiet `if` branches still run when full: they decide nothing reported. */
	if (c->oom || (c->full && !c->quiet) || json_is_true(s))
		return;
	if (json_is_false(s)) {
		if (c->quiet) {
			c->failures++;
			return;
		}
		pmbot_buf_clear(&c->msg);
		if (pmbot_buf_puts(&c->msg, "False schema does not allow ") < 0 ||
		    put_value(&c->msg, inst) < 0)
			c->oom = 1;
		report(c, "SCHEMA_FALSE", NULL);
		return;
	}
	if (depth > PMBOT_JSONSCHEMA_MAX_DEPTH) {
		pmbot_buf_clear(&c->msg);
		if (pmbot_buf_printf(&c->msg, "validation nested deeper than %d schema levels",
				PMBOT_JSONSCHEMA_MAX_DEPTH) < 0)
			c->oom = 1;
		report(c, "SCHEMA_TOO_DEEP", NULL);
		return;
	}
	if ((k = json_object_get(s, "$ref"))) {
		validate(c, resolve_ref(c->root, json_string_value(k)), inst, depth + 1);
		return;
	}
	if ((k = json_object_get(s, "type")))
		kw_type(c, k, inst);
	if ((k = json_object_get(s, "enum")))
		kw_enum(c, k, inst);
	if ((k = json_object_get(s, "const")))
		kw_const(c, k, inst);
	if (json_is_string(inst))
		kw_string(c, s, inst);
	else if (json_is_number(inst))
		kw_number(c, s, inst);
	else if (json_is_array(inst))
		kw_array(c, s, inst, depth);
	else if (json_is_object(inst))
		kw_object(c, s, inst, depth);
	if ((k = json_object_get(s, "allOf")))
		for (i = 0; i < json_array_size(k); i++)
			validate(c, json_array_get(k, i), inst, depth + 1);
	if ((k = json_object_get(s, "if"))) {
		size_t before = c->failures;
		int passed;

		c->quiet++;
		validate(c, k, inst, depth + 1);
		c->quiet--;
		passed = c->failures == before;
		c->failures = before;
		k = json_object_get(s, passed ? "then" : "else");
		if (k)
			validate(c, k, inst, depth + 1);
	}
}

static int diag_order(const void *pa, const void *pb)
{
	const pmbot_diag *a = pa, *b = pb;
	int r;

	if ((r = strcmp(a->path, b->path)))
		return r;
	if ((r = strcmp(a->code, b->code)))
		return r;
	return strcmp(a->message, b->message);
}

static void free_regexes(pmbot_strmap *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++) {
		if (m->slots[i].key) {
			regfree(m->slots[i].value);
			free(m->slots[i].value);
		}
	}
	pmbot_strmap_free(m);
}

int pmbot_jsonschema_validate(pmbot_diag_list *diags, const json_t *schema,
	const json_t *instance)
{
	pmbot_diag_list found = PMBOT_DIAG_LIST_INIT;
	vctx c = { schema, &found, PMBOT_BUF_INIT, PMBOT_BUF_INIT, PMBOT_STRMAP_INIT, 0, 0, 0, 0 };
	size_t i, kept = 0;
	int err;

	if ((err = pmbot_jsonschema_check(diags, schema)) < 0) {
		err = PMBOT_ERROR;
		goto done;
	}
	validate(&c, schema, instance, 0);
	err = PMBOT_ERROR;
	if (c.oom)
		goto done;
	if (c.full && pmbot_diag_add(&found, PMBOT_SEV_ERROR, "SCHEMA_TOO_MANY", NULL, "", 0, 0,
			"more than %d errors; validation stopped there", PMBOT_JSONSCHEMA_MAX_ERRORS) < 0)
		goto done;
	if (found.count > 1)
		qsort(found.items, found.count, sizeof(*found.items), diag_order);
	for (i = 0; i < found.count; i++) {
		pmbot_diag *d = &found.items[i];

		if (kept && !diag_order(&found.items[kept - 1], d)) {
			free(d->file);
			free(d->path);
			free(d->message);
			found.errors--;
			continue;
		}
		found.items[kept++] = *d;
	}
	found.count = kept;
	if (pmbot_diag_list_move(diags, &found) < 0)
		goto done;
	err = kept ? PMBOT_EINVALID : PMBOT_OK;
done:
	pmbot_diag_list_free(&found);
	free_regexes(&c.regexes);
	pmbot_buf_free(&c.ptr);
	pmbot_buf_free(&c.msg);
	return err;
}

/* ---- paths and records ---- */

static int is_identifier(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* A canonical array index ("0", "17"; no sign, no leading zero) -> 1. */
static int parse_index(const char *s, size_t *out)
{
	size_t v = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > ((size_t)-1 - 9) / 10)
			return 0;
		v = v * 10 + (size_t)(*s - '0');
	}
	*out = v;
	return 1;
}

int pmbot_jsonschema_path(pmbot_buf *out, const json_t *instance, const char *pointer)
{
	pmbot_buf tok = PMBOT_BUF_INIT;
	const json_t *cur = instance;
	size_t start = out->len, idx;
	const char *p = pointer;
	int err = PMBOT_ERROR;

	if (*p && *p != '/') {
		err = PMBOT_EINVALID;
		goto done;
	}
	if (pmbot_buf_putc(out, '$') < 0)
		goto done;
	while (*p == '/') {
		pmbot_buf_clear(&tok);
		for (p++; *p && *p != '/'; p++) {
			char ch = *p;

			if (ch == '~') {
				if (p[1] != '0' && p[1] != '1') {
					err = PMBOT_EINVALID;
					goto done;
				}
				ch = *++p == '0' ? '~' : '/';
			}
			if (pmbot_buf_putc(&tok, ch) < 0)
				goto done;
		}
		if (json_is_array(cur) && parse_index(tok.buf, &idx)) {
			if (pmbot_buf_printf(out, "[%zu]", idx) < 0)
				goto done;
			cur = json_array_get(cur, idx);
			continue;
		}
		if (is_identifier(tok.buf)) {
			if (pmbot_buf_putc(out, '.') < 0 || pmbot_buf_put(out, tok.buf, tok.len) < 0)
				goto done;
		} else if (pmbot_buf_putc(out, '[') < 0 ||
			   pmbot_json_quote(out, tok.buf, tok.len) < 0 ||
			   pmbot_buf_putc(out, ']') < 0) {
			goto done;
		}
		cur = json_is_object(cur) ? json_object_get(cur, tok.buf) : NULL;
	}
	err = PMBOT_OK;
done:
	if (err)
		pmbot_buf_truncate(out, start);
	pmbot_buf_free(&tok);
	return err;
}

typedef struct {
	char *path;
	const char *code;
	const char *message;
} record;

static int record_order(const void *pa, const void *pb)
{
	const record *a = pa, *b = pb;
	int r;

	if ((r = strcmp(a->path, b->path)))
		return r;
	if ((r = strcmp(a->code, b->code)))
		return r;
	return strcmp(a->message, b->message);
}

int pmbot_jsonschema_records(json_t **out, const pmbot_diag_list *diags,
	const json_t *instance)
{
	pmbot_buf path = PMBOT_BUF_INIT;
	record *recs = NULL;
	json_t *arr = NULL;
	size_t i, n = 0;
	int err = PMBOT_ERROR, r;

	*out = NULL;
	if (diags->count && !(recs = calloc(diags->count, sizeof(*recs))))
		goto done;
	for (i = 0; i < diags->count; i++) {
		const pmbot_diag *d = &diags->items[i];

		if (d->severity != PMBOT_SEV_ERROR)
			continue;
		pmbot_buf_clear(&path);
		if ((r = pmbot_jsonschema_path(&path, instance, d->path)) < 0) {
			err = r;
			goto done;
		}
		if (!(recs[n].path = strdup(path.buf)))
			goto done;
		recs[n].code = d->code;
		recs[n++].message = d->message;
	}
	if (n)
		qsort(recs, n, sizeof(*recs), record_order);
	if (!(arr = json_array()))
		goto done;
	for (i = 0; i < n; i++) {
		json_t *o;

		if (i && !record_order(&recs[i - 1], &recs[i]))
			continue;
		o = json_pack("{s:s, s:s, s:s}", "path", recs[i].path, "code", recs[i].code,
			"message", recs[i].message);
		if (json_array_append_new(arr, o) < 0)
			goto done;
	}
	*out = arr;
	arr = NULL;
	err = PMBOT_OK;
done:
	for (i = 0; i < n; i++)
		free(recs[i].path);
	free(recs);
	json_decref(arr);
	pmbot_buf_free(&path);
	return err;
}
