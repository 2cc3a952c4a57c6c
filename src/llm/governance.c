#include "pmbot/llm.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/json.h"
#include "pmbot/banned.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define SHOW_MAX 64
#define RECENT_MAX 10

typedef enum {
	TYPE_CONTEXT_REF = 0,
	TYPE_INTENT,
	TYPE_CONSTRAINT
} policy_type;

static const char *const type_names[] = { "context_ref", "intent", "constraint" };

typedef struct {
	char *name;
	policy_type type;
	int deny;
	char **patterns;
	size_t n_patterns;
} policy;

struct pmbot_governance {
	policy *policies;
	size_t n_policies;
	unsigned long long total;
	unsigned long long denied;
	json_t *recent; /* the last RECENT_MAX check log entries, oldest first */
};

typedef struct {
	const char *name;
	policy_type type;
	int deny;
	const char *patterns[3];
} default_policy;

/* The spec's table, in its order. */
static const default_policy defaults[] = {
	{ "protected_paths", TYPE_CONTEXT_REF, 1, { "/sys/", "/etc/", "C:\\Windows\\System32\\" } },
	{ "destructive_actions", TYPE_INTENT, 0, { "delete all", "drop database", "rm -rf" } },
	{ "sensitive_constraints", TYPE_CONSTRAINT, 1, { "ignore policy", "bypass", "override" } },
};

static const char *const policy_keys[] = {
	"name", "type", "forbidden_patterns", "forbidden_keywords", "action"
};

static void policy_clear(policy *p)
{
	size_t i;

	free(p->name);
	for (i = 0; i < p->n_patterns; i++)
		free(p->patterns[i]);
	free(p->patterns);
	memset(p, 0, sizeof(*p));
}

void pmbot_governance_free(pmbot_governance *gov)
{
	size_t i;

	if (!gov)
		return;
	for (i = 0; i < gov->n_policies; i++)
		policy_clear(&gov->policies[i]);
	free(gov->policies);
	json_decref(gov->recent);
	free(gov);
}

static int add_default(policy *p, const default_policy *d)
{
	size_t i;

	p->type = d->type;
	p->deny = d->deny;
	if (!(p->name = strdup(d->name)) ||
	    !(p->patterns = calloc(N_OF(d->patterns), sizeof(*p->patterns))))
		return -1;
	for (i = 0; i < N_OF(d->patterns); i++) {
		if (!(p->patterns[i] = strdup(d->patterns[i])))
			return -1;
		p->n_patterns++;
	}
	return 0;
}

/* ---- custom policy validation ------------------------------------------- */

typedef struct {
	pmbot_diag_list *diags;
	pmbot_buf path;
	pmbot_buf show;
	int bad;
	int oom;
} checker;

static const char *show(checker *c, const char *s)
{
	return pmbot_diag_show(&c->show, s, SHOW_MAX);
}

static void fail(checker *c, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(checker *c, const char *key, const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	size_t mark = c->path.len;
	va_list ap;

	c->bad = 1;
	va_start(ap, fmt);
	if (pmbot_buf_vprintf(&msg, fmt, ap) < 0)
		c->oom = 1;
	va_end(ap);
	if (key && pmbot_json_pointer_push(&c->path, key) < 0)
		c->oom = 1;
	if (pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "GOVERNANCE_POLICY", NULL, c->path.buf,
			0, 0, "%s", msg.buf) < 0)
		c->oom = 1;
	pmbot_buf_truncate(&c->path, mark);
	pmbot_buf_free(&msg);
}

static int is_clean_string(const json_t *v)
{
	return json_is_string(v) && json_string_length(v) &&
		strlen(json_string_value(v)) == json_string_length(v);
}

static int name_taken(const policy *p, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(p[i].name, name))
			return 1;
	return 0;
}

/* The list of patterns under `key`; `p` gets copies when every entry is good. */
static void read_patterns(checker *c, const json_t *list, const char *key, policy *p)
{
	const json_t *item;
	size_t i, mark = c->path.len;
	int ok = 1;

	if (!json_is_array(list) || !json_array_size(list)) {
		fail(c, key, "'%s' must be a non-empty array of strings", key);
		return;
	}
	if (pmbot_json_pointer_push(&c->path, key) < 0)
		c->oom = 1;
	json_array_foreach(list, i, item) {
		size_t at = c->path.len;

		if (is_clean_string(item))
			continue;
		ok = 0;
		if (pmbot_json_pointer_push_index(&c->path, i) < 0)
			c->oom = 1;
		if (json_is_string(item) && !json_string_length(item))
			fail(c, NULL, "an empty entry of '%s' would match everything", key);
		else if (json_is_string(item))
			fail(c, NULL, "an entry of '%s' holds a NUL byte", key);
		else
			fail(c, NULL, "every entry of '%s' must be a string", key);
		pmbot_buf_truncate(&c->path, at);
	}
	pmbot_buf_truncate(&c->path, mark);
	if (!ok)
		return;
	if (!(p->patterns = calloc(json_array_size(list), sizeof(*p->patterns)))) {
		c->oom = 1;
		return;
	}
	json_array_foreach(list, i, item) {
		if (!(p->patterns[i] = strdup(json_string_value(item)))) {
			c->oom = 1;
			return;
		}
		p->n_patterns++;
	}
}

static int known_policy_key(const char *key)
{
	size_t i;

	for (i = 0; i < N_OF(policy_keys); i++)
		if (!strcmp(key, policy_keys[i]))
			return 1;
	return 0;
}

/* Validate custom[i] into `p` (left empty when the policy is bad). */
static void read_policy(checker *c, const json_t *o, const policy *prev, size_t n_prev, policy *p)
{
	const json_t *name = json_object_get(o, "name"), *type = json_object_get(o, "type");
	const json_t *action = json_object_get(o, "action"), *value;
	const char *key, *list_key = NULL, *other_key = NULL;
	int type_ok = 0, was_bad = c->bad;
	size_t i;

	c->bad = 0;
	if (!json_is_object(o)) {
		fail(c, NULL, "a policy must be an object with name, type, "
			"forbidden_patterns or forbidden_keywords, and action");
		goto done;
	}
	json_object_foreach((json_t *)o, key, value) {
		if (!known_policy_key(key))
			fail(c, key, "unknown policy key '%s'", show(c, key));
	}
	if (!name)
		fail(c, NULL, "the policy has no 'name'");
	else if (!is_clean_string(name))
		fail(c, "name", "'name' must be a non-empty string");
	else if (name_taken(prev, n_prev, json_string_value(name)))
		fail(c, "name", "policy name '%s' is already used (the default policies "
			"always apply and cannot be replaced)", show(c, json_string_value(name)));
	if (!type) {
		fail(c, NULL, "the policy has no 'type'");
	} else {
		for (i = 0; i < N_OF(type_names); i++) {
			if (json_is_string(type) && !strcmp(json_string_value(type), type_names[i])) {
				p->type = (policy_type)i;
				type_ok = 1;
			}
		}
		if (!type_ok)
			fail(c, "type", "'type' must be \"context_ref\", \"intent\" or \"constraint\"");
	}
	if (!action)
		fail(c, NULL, "the policy has no 'action'");
	else if (json_is_string(action) && !strcmp(json_string_value(action), "deny"))
		p->deny = 1;
	else if (!json_is_string(action) || strcmp(json_string_value(action), "flag"))
		fail(c, "action", "'action' must be \"deny\" or \"flag\"");
	if (type_ok) {
		list_key = p->type == TYPE_CONTEXT_REF ? "forbidden_patterns" : "forbidden_keywords";
		other_key = p->type == TYPE_CONTEXT_REF ? "forbidden_keywords" : "forbidden_patterns";
		/* A list under the other key would silently match nothing. */
		if (json_object_get(o, other_key))
			fail(c, other_key, "a %s policy takes '%s', not '%s'",
				type_names[p->type], list_key, other_key);
		if (!json_object_get(o, list_key))
			fail(c, NULL, "a %s policy needs '%s'", type_names[p->type], list_key);
		else
			read_patterns(c, json_object_get(o, list_key), list_key, p);
	}
	if (!c->bad && !c->oom && !(p->name = strdup(json_string_value(name))))
		c->oom = 1;
done:
	if (c->bad || c->oom)
		policy_clear(p);
	c->bad |= was_bad;
}

int pmbot_governance_new(pmbot_governance **out, const json_t *custom,
	const char *pointer_prefix, pmbot_diag_list *diags)
{
	checker c = { diags, PMBOT_BUF_INIT, PMBOT_BUF_INIT, 0, 0 };
	pmbot_governance *gov = NULL;
	size_t i, n_custom;
	int err = PMBOT_ERROR;

	*out = NULL;
	if (pmbot_buf_puts(&c.path, pointer_prefix ? pointer_prefix : "") < 0)
		goto done;
	if (custom && !json_is_array(custom)) {
		fail(&c, NULL, "custom policies must be an array of policy objects");
		goto done;
	}
	n_custom = custom ? json_array_size(custom) : 0;
	if (!(gov = calloc(1, sizeof(*gov))) || !(gov->recent = json_array()) ||
	    !(gov->policies = calloc(N_OF(defaults) + n_custom, sizeof(*gov->policies))))
		goto done;
	for (i = 0; i < N_OF(defaults); i++) {
		gov->n_policies++;
		if (add_default(&gov->policies[i], &defaults[i]) < 0)
			goto done;
	}
	for (i = 0; i < n_custom; i++) {
		size_t mark = c.path.len;

		if (pmbot_json_pointer_push_index(&c.path, i) < 0)
			goto done;
		read_policy(&c, json_array_get(custom, i), gov->policies, gov->n_policies,
			&gov->policies[gov->n_policies]);
		pmbot_buf_truncate(&c.path, mark);
		if (c.oom)
			goto done;
		if (gov->policies[gov->n_policies].name)
			gov->n_policies++;
	}
	if (c.bad)
		goto done;
	*out = gov;
	gov = NULL;
	err = PMBOT_OK;
done:
	if (err && c.bad && !c.oom)
		err = PMBOT_EINVALID;
	pmbot_governance_free(gov);
	pmbot_buf_free(&c.path);
	pmbot_buf_free(&c.show);
	return err;
}

static json_t *policy_json(const policy *p)
{
	json_t *o = json_object(), *list = json_array();
	size_t i;
	int err = !o || !list;

	for (i = 0; i < p->n_patterns && !err; i++)
		err |= json_array_append_new(list, json_string(p->patterns[i]));
	err |= json_object_set_new(o, "name", json_string(p->name));
	err |= json_object_set_new(o, "type", json_string(type_names[p->type]));
	err |= json_object_set_new(o, p->type == TYPE_CONTEXT_REF ?
		"forbidden_patterns" : "forbidden_keywords", list);
	err |= json_object_set_new(o, "action", json_string(p->deny ? "deny" : "flag"));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int pmbot_governance_policies(json_t **out, const pmbot_governance *gov)
{
	json_t *a = json_array();
	size_t i;
	int err = PMBOT_ERROR;

	*out = NULL;
	if (!a)
		goto done;
	for (i = 0; i < gov->n_policies; i++)
		if (json_array_append_new(a, policy_json(&gov->policies[i])) < 0)
			goto done;
	*out = a;
	a = NULL;
	err = PMBOT_OK;
done:
	json_decref(a);
	return err;
}

/* ---- checking ------------------------------------------------------------ */

static int ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* strstr that folds ASCII letters (the reference lowercases both sides). */
static int contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle), i;

	for (; *hay; hay++) {
		for (i = 0; i < n && hay[i]; i++)
			if (ascii_lower((unsigned char)hay[i]) != ascii_lower((unsigned char)needle[i]))
				break;
		if (i == n)
			return 1;
	}
	return n == 0;
}

static int add_violation(json_t *list, const policy *p, const char *pattern,
	const char *field, const char *message)
{
	json_t *v = json_object();
	int err = !v;

	err |= json_object_set_new(v, "policy", json_string(p->name));
	err |= json_object_set_new(v, "type", json_string(type_names[p->type]));
	err |= json_object_set_new(v, "action", json_string(p->deny ? "deny" : "flag"));
	err |= json_object_set_new(v, "matched", json_string(pattern));
	err |= json_object_set_new(v, "field", json_string(field));
	err |= json_object_set_new(v, "message", json_string(message));
	if (err) {
		json_decref(v);
		return -1;
	}
	return json_array_append_new(list, v);
}

/* One field against one policy; the message wording is the reference's. */
static int check_field(json_t *list, const policy *p, const char *value, const char *field,
	pmbot_buf *msg)
{
	const char *action = p->deny ? "DENY" : "FLAG";
	size_t i;
	int err = 0;

	for (i = 0; i < p->n_patterns && !err; i++) {
		const char *pat = p->patterns[i];
		int hit = p->type == TYPE_CONTEXT_REF ? strstr(value, pat) != NULL :
			contains_nocase(value, pat);

		if (!hit)
			continue;
		pmbot_buf_clear(msg);
		if (p->type == TYPE_CONTEXT_REF)
			err |= pmbot_buf_printf(msg, "%s: %s - Context ref '%s' matches forbidden "
				"pattern '%s'", action, p->name, value, pat);
		else
			err |= pmbot_buf_printf(msg, "%s: %s - %s contains forbidden keyword '%s'",
				action, p->name, p->type == TYPE_INTENT ? "Intent" : "Constraint", pat);
		err |= add_violation(list, p, pat, field, msg->buf);
	}
	return err ? -1 : 0;
}

static int check_policy(json_t *list, const policy *p, const pmbot_promptir *ir,
	pmbot_buf *field, pmbot_buf *msg)
{
	char **values = p->type == TYPE_CONTEXT_REF ? ir->context_refs : ir->constraints;
	size_t i, n = p->type == TYPE_CONTEXT_REF ? ir->n_context_refs : ir->n_constraints;
	int err = 0;

	if (p->type == TYPE_INTENT)
		return ir->intent ? check_field(list, p, ir->intent, "/intent", msg) : 0;
	for (i = 0; i < n && !err; i++) {
		pmbot_buf_clear(field);
		err |= pmbot_buf_printf(field, "/%s/%zu",
			p->type == TYPE_CONTEXT_REF ? "context_refs" : "constraints", i);
		err |= check_field(list, p, values[i], field->buf, msg);
	}
	return err ? -1 : 0;
}

static json_t *log_entry(const pmbot_promptir *ir, int approved, json_t *violations)
{
	json_t *e = json_object();
	int err = !e;

	err |= json_object_set_new(e, "ir_id", ir->ir_id ? json_string(ir->ir_id) : json_null());
	err |= json_object_set_new(e, "role", ir->role ? json_string(ir->role) : json_null());
	err |= json_object_set_new(e, "approved", json_boolean(approved));
	err |= json_object_set_new(e, "violations", json_deep_copy(violations));
	if (err) {
		json_decref(e);
		return NULL;
	}
	return e;
}

void pmbot_governance_result_free(pmbot_governance_result *r)
{
	json_decref(r->violations);
	r->violations = NULL;
	r->approved = 0;
}

int pmbot_governance_check(pmbot_governance_result *out, pmbot_governance *gov,
	const pmbot_promptir *ir)
{
	pmbot_buf field = PMBOT_BUF_INIT, msg = PMBOT_BUF_INIT;
	json_t *list = json_array(), *entry = NULL;
	size_t i;
	int approved = 1, appended, err = PMBOT_ERROR;

	pmbot_governance_result_free(out);
	if (!list)
		goto done;
	for (i = 0; i < gov->n_policies; i++) {
		size_t before = json_array_size(list);

		if (check_policy(list, &gov->policies[i], ir, &field, &msg) < 0)
			goto done;
		if (gov->policies[i].deny && json_array_size(list) > before)
			approved = 0;
	}
	if (!(entry = log_entry(ir, approved, list)))
		goto done;
	/* append_new takes the entry even when it fails. */
	appended = json_array_append_new(gov->recent, entry);
	entry = NULL;
	if (appended < 0)
		goto done;
	if (json_array_size(gov->recent) > RECENT_MAX)
		json_array_remove(gov->recent, 0);
	gov->total++;
	if (!approved)
		gov->denied++;
	out->approved = approved;
	out->violations = list;
	list = NULL;
	err = PMBOT_OK;
done:
	json_decref(list);
	json_decref(entry);
	pmbot_buf_free(&field);
	pmbot_buf_free(&msg);
	return err;
}

int pmbot_governance_report(json_t **out, const pmbot_governance *gov)
{
	json_t *o = json_object();
	unsigned long long approved = gov->total - gov->denied;
	int err = !o;

	*out = NULL;
	err |= json_object_set_new(o, "total_checks", json_integer((json_int_t)gov->total));
	err |= json_object_set_new(o, "approved", json_integer((json_int_t)approved));
	err |= json_object_set_new(o, "denied", json_integer((json_int_t)gov->denied));
	err |= json_object_set_new(o, "approval_rate",
		json_real(gov->total ? (double)approved / (double)gov->total : 1.0));
	err |= json_object_set_new(o, "recent_violations", json_deep_copy(gov->recent));
	if (err) {
		json_decref(o);
		return PMBOT_ERROR;
	}
	*out = o;
	return PMBOT_OK;
}
