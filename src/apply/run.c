#include "apply_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "pmbot/json.h"
#include "pmbot/datetime.h"
#include "pmbot/banned.h"

typedef struct {
	pmbot_backend *backend;
	const pmbot_config *config;
	pmbot_audit *audit;
	const char *actor;
	const pmbot_apply_hooks *hooks;
	const json_t *bundle;
	const char **repos;          /* borrowed from the bundle, sorted, unique */
	size_t n_repos, alloc_repos;
	/* What every read must answer for: the issues the changesets name, by
	 * stable id (found or proven absent before any create) or by number. */
	pmbot_read_need *needs;      /* strings borrowed from the bundle */
	size_t n_needs, alloc_needs;
	char *project_owner;         /* NULL: no project needed */
	long project_number;
	const pmbot_state *state;    /* own_state, or the caller's start->state */
	pmbot_state *own_state;      /* the last read's, owned */
	pmbot_apply_index idx;
	int have_idx;
	const json_t *sel;           /* the selected changesets (borrowed) */
	/* Changesets a create carried out with it: changeset_id -> the
	 * create's changeset_id (both borrowed from the bundle). */
	pmbot_strmap fused;
	/* What the create being built asked to carry (borrowed, or NULL). */
	const json_t *fuse_parent, *fuse_project;
	/* The selected set_parent / add_to_project by target key (fuse_index). */
	pmbot_strmap fuse_parents, fuse_projects;
	pmbot_buf *fuse_keys;        /* the keys, one per selected changeset */
	size_t n_fuse_keys;
	struct group *group;         /* NULL: the backend has no group commit */
} run_ctx;

/*
 * Group commit (backend hold and commit): the changesets settled since the
 * backend was held, whose audit events are held too and whose
 * hooks->after waits until both are durable.
 */
typedef struct {
	const json_t *cs;
	json_t *r;                   /* its result entry (borrowed) */
	const char *status;
} pending;

struct group {
	int on;
	size_t n;
	pending items[PMBOT_APPLY_GROUP_MAX];
};

/* What happened to one changeset. */
typedef struct {
	const char *status;          /* applied, already_applied, denied, failed */
	const char *reason;          /* reason code when not applied */
	pmbot_buf message;
	json_t *result;              /* owned */
	int attempts;
	int recovered;               /* the write landed although the call failed */
	int exhausted;               /* retries ran out */
	int paused;                  /* the backend's write budget stopped it unsent */
} outcome;

static void say(pmbot_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(pmbot_buf *b, const char *fmt, ...)
{
	va_list ap;

	if (!b)
		return;
	pmbot_buf_clear(b);
	va_start(ap, fmt);
	pmbot_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

/* Put `p` in front of what `b` says. */
static void prefix(pmbot_buf *b, const char *p)
{
	pmbot_buf t = PMBOT_BUF_INIT;

	if (pmbot_buf_puts(&t, p) == 0 && pmbot_buf_put(&t, b->buf, b->len) == 0)
		say(b, "%s", t.buf);
	pmbot_buf_free(&t);
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Case-insensitive first, as GitHub compares names, so spellings of one repo end up adjacent. */
static int cmp_repo(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	int c = strcasecmp(x, y);

	return c ? c : strcmp(x, y);
}

static int repos_add(run_ctx *c, const char *repo)
{
	const char **p;

	if (!repo)
		return 0;
	if (c->n_repos == c->alloc_repos) {
		size_t alloc = c->alloc_repos ? c->alloc_repos * 2 : 8;

		if (!(p = realloc(c->repos, alloc * sizeof(*p))))
			return -1;
		c->repos = p;
		c->alloc_repos = alloc;
	}
	c->repos[c->n_repos++] = repo;
	return 0;
}

/* Note that reads must answer for the issue `binding` ({repo, stable_id} or {repo, number}) names. */
static int needs_add(run_ctx *c, const json_t *binding)
{
	const char *repo = str(binding, "repo"), *sid = str(binding, "stable_id");
	json_int_t number = json_integer_value(json_object_get(binding, "number"));
	pmbot_read_need *p;

	if (!repo || (!sid && number <= 0))
		return 0;
	if (c->n_needs == c->alloc_needs) {
		size_t alloc = c->alloc_needs ? c->alloc_needs * 2 : 16;

		if (!(p = realloc(c->needs, alloc * sizeof(*p))))
			return -1;
		c->needs = p;
		c->alloc_needs = alloc;
	}
	c->needs[c->n_needs].repo = repo;
	c->needs[c->n_needs].stable_id = sid;
	c->needs[c->n_needs].number = sid ? 0 : (long)number;
	c->n_needs++;
	return 0;
}

/* Which repositories and which project the selected changesets touch. */
static int plan_reads(run_ctx *c, const json_t *sel)
{
	size_t i, n = 0;
	const json_t *cs;

	json_array_foreach(sel, i, cs) {
		const json_t *payload = json_object_get(cs, "payload");
		const char *op = str(cs, "operation");

		if (repos_add(c, str(json_object_get(cs, "target"), "repo")) < 0 ||
		    repos_add(c, str(json_object_get(payload, "parent"), "repo")) < 0 ||
		    repos_add(c, str(json_object_get(payload, "blocker"), "repo")) < 0 ||
		    needs_add(c, json_object_get(cs, "target")) < 0 ||
		    needs_add(c, json_object_get(payload, "parent")) < 0 ||
		    needs_add(c, json_object_get(payload, "blocker")) < 0)
			return -1;
		if (c->project_owner || !op)
			continue;
		if (!strcmp(op, "add_to_project")) {
			const char *spec = str(payload, "project");
			size_t olen;
			long num;

			if (pmbot_apply_project_parse(spec, &olen, &num) == 0) {
				if (!(c->project_owner = strndup(spec, olen)))
					return -1;
				c->project_number = num;
			}
		}
	}
	json_array_foreach(sel, i, cs) {
		const char *op = str(cs, "operation");

		if (!c->project_owner && op && !strcmp(op, "set_project_field") &&
		    c->config->project_owner) {
			if (!(c->project_owner = strdup(c->config->project_owner)))
				return -1;
			c->project_number = c->config->project_number;
		}
	}
	if (c->n_repos)
		qsort(c->repos, c->n_repos, sizeof(*c->repos), cmp_repo);
	for (i = 0; i < c->n_repos; i++)
		if (!n || strcasecmp(c->repos[n - 1], c->repos[i]))
			c->repos[n++] = c->repos[i];
	c->n_repos = n;
	return 0;
}

/* (Re-)read the state and index its trusted markers. */
static int load(run_ctx *c, pmbot_buf *why)
{
	pmbot_buf berr = PMBOT_BUF_INIT;
	pmbot_state *st = NULL;
	pmbot_read_scope scope;
	int rc;

	/* A create is proven absent by this read before it is sent (docs/github.md). */
	scope.needs = c->needs;
	scope.n_needs = c->n_needs;
	rc = pmbot_backend_read(&st, c->backend, c->repos, c->n_repos, c->project_owner,
		c->project_number, &scope, &berr);
	while (berr.len && berr.buf[berr.len - 1] == '\n')
		pmbot_buf_truncate(&berr, berr.len - 1);
	if (rc != PMBOT_OK || !st) {
		say(why, "cannot read the state through the %s backend: %s", c->backend->name,
			berr.len ? berr.buf : "unknown error");
		pmbot_buf_free(&berr);
		if (st)
			pmbot_state_free(st);
		return PMBOT_ERROR;
	}
	pmbot_buf_free(&berr);
	if (c->have_idx)
		pmbot_apply_index_free(&c->idx);
	c->have_idx = 0;
	if (c->own_state)
		pmbot_state_free(c->own_state);
	c->state = c->own_state = st;
	if (pmbot_apply_index_build(&c->idx, st, c->config) < 0) {
		say(why, "out of memory");
		return PMBOT_ERROR;
	}
	c->have_idx = 1;
	return PMBOT_OK;
}

/* Is `nd` among the needs `scope` was read with (NULL: it read every issue)? */
/* Needs ordered by repository (ignoring case), then stable id, then number. */
static int need_cmp(const pmbot_read_need *a, const pmbot_read_need *b)
{
	int r = strcasecmp(a->repo, b->repo);

	if (r)
		return r;
	if (!a->stable_id != !b->stable_id)
		return a->stable_id ? -1 : 1;
	if (a->stable_id)
		return strcmp(a->stable_id, b->stable_id);
	return (a->number > b->number) - (a->number < b->number);
}

static int need_qsort(const void *a, const void *b)
{
	return need_cmp(*(const pmbot_read_need *const *)a, *(const pmbot_read_need *const *)b);
}

/*
 * Is each of `needs` one that `scope` (NULL: everything) names? Sorted and
 * searched, so a run of 10,000 creates does not compare every pair.
 * 1, 0, or PMBOT_ERROR when out of memory.
 */
static int scope_has_all(const pmbot_read_scope *scope, const pmbot_read_need *needs, size_t n)
{
	const pmbot_read_need **have = NULL;
	size_t i, k = 0;
	int rc = 0;

	if (!scope)
		return 1;
	if (!n)
		return 1;
	if (!(have = calloc(scope->n_needs + 1, sizeof(*have))))
		return PMBOT_ERROR;
	for (i = 0; i < scope->n_needs; i++)
		if (scope->needs[i].repo)
			have[k++] = &scope->needs[i];
	qsort(have, k, sizeof(*have), need_qsort);
	for (i = 0; i < n; i++) {
		size_t lo = 0, hi = k;
		int found = 0;

		while (lo < hi && !found) {
			size_t mid = lo + (hi - lo) / 2;
			int c = need_cmp(&needs[i], have[mid]);

			found = !c;
			if (c > 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!found)
			goto done;
	}
	rc = 1;
done:
	free(have);
	return rc;
}

/*
 * Does the caller's read answer for everything load() would ask? Only then
 * is its state as good as a read of our own: a need it was not asked for
 * may be missing from it without that proving the issue absent.
 */
static int start_covers(const run_ctx *c, const pmbot_apply_start *s)
{
	size_t i, k;

	if (!s || !s->state || s->backend != c->backend || (s->n_repos && !s->repos))
		return 0;
	for (i = 0; i < c->n_repos; i++) {
		for (k = 0; k < s->n_repos && (!s->repos[k] || strcasecmp(s->repos[k], c->repos[i])); k++)
			;
		if (k == s->n_repos)
			return 0;
	}
	if (c->project_owner && (!s->project_owner || strcasecmp(s->project_owner, c->project_owner) ||
				 s->project_number != c->project_number))
		return 0;
	/* Out of memory counts as not covered: the run reads for itself. */
	return scope_has_all(s->scope, c->needs, c->n_needs) == 1;
}

/*
 * The state the run starts from: the caller's when it covers the run (its
 * read already proved every create's item absent), else a read of our own.
 * Either way nothing has been written since, so the rules below judge the
 * state the writes will meet. Re-reads after a failed write always go to
 * the backend (load): they must see what landed.
 */
static int first_state(run_ctx *c, const pmbot_apply_start *s, pmbot_buf *why)
{
	if (!start_covers(c, s))
		return load(c, why);
	c->state = s->state;
	if (pmbot_apply_index_build(&c->idx, c->state, c->config) < 0) {
		say(why, "out of memory");
		return PMBOT_ERROR;
	}
	c->have_idx = 1;
	return PMBOT_OK;
}

static json_t *event_fields(const run_ctx *c, const json_t *cs)
{
	json_t *o = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}",
		"bundle_id", json_object_get(c->bundle, "bundle_id"),
		"plan_hash", json_object_get(c->bundle, "plan_hash"),
		"changeset_id", json_object_get(cs, "changeset_id"),
		"idempotency_key", json_object_get(cs, "idempotency_key"),
		"operation", json_object_get(cs, "operation"),
		"target", json_object_get(cs, "target"));

	if (o && c->actor && json_object_set_new(o, "actor", json_string(c->actor)) < 0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

/* Append one event; `extra` (consumed) adds members. 0 or PMBOT_ERROR. */
static int audit(const run_ctx *c, const char *event, const json_t *cs, json_t *extra)
{
	json_t *o;
	int err = PMBOT_ERROR;

	if (!c->audit) {
		json_decref(extra);
		return PMBOT_OK;
	}
	o = event_fields(c, cs);
	if (o && (!extra || json_object_update(o, extra) == 0))
		err = pmbot_audit_append(c->audit, event, o) == PMBOT_OK ? PMBOT_OK : PMBOT_ERROR;
	json_decref(o);
	json_decref(extra);
	return err;
}

/* Why a changeset may not run at all, or NULL. */
static const char *denial(const pmbot_config *cfg, const json_t *cs, pmbot_buf *why)
{
	const char *opname = str(cs, "operation");
	const char *repo = str(json_object_get(cs, "target"), "repo");
	const char *parent = str(json_object_get(json_object_get(cs, "payload"), "parent"), "repo");
	pmbot_operation op;

	if (!opname || pmbot_operation_parse(&op, opname) != PMBOT_OK) {
		say(why, "'%s' is not an operation pm-bot knows", opname ? opname : "(none)");
		return "UNKNOWN_OPERATION";
	}
	if (pmbot_config_operation_denied(cfg, op)) {
		say(why, "%s is in deny_operations", opname);
		return "OPERATION_DENIED";
	}
	if (!repo || !pmbot_config_repo_allowed(cfg, repo)) {
		say(why, "%s is not in the repos allowlist", repo ? repo : "(no repository)");
		return "REPO_NOT_ALLOWED";
	}
	/* A sub-issue is added through its parent, so the parent's repository is written too. */
	if (op == PMBOT_OP_SET_PARENT && parent && !pmbot_config_repo_allowed(cfg, parent)) {
		say(why, "%s (the parent's repository) is not in the repos allowlist", parent);
		return "REPO_NOT_ALLOWED";
	}
	return NULL;
}

static int set_issue(json_t *args, const pmbot_apply_issue *is)
{
	return json_object_set_new(args, "repo", json_string(is->repo)) |
		json_object_set_new(args, "number", json_integer(is->number));
}

static int option_names(pmbot_buf *b, const pmbot_pfield *f)
{
	size_t i;
	int err = 0;

	for (i = 0; i < f->n_options; i++)
		err |= pmbot_buf_printf(b, "%s'%s'", i ? ", " : "", f->options[i].name);
	if (!f->n_options)
		err |= pmbot_buf_puts(b, "(none)");
	return err;
}

/* The project-field part of set_project_field's args. */
static int field_args(run_ctx *c, json_t *args, const json_t *payload, const char *ref,
	outcome *out)
{
	const char *fname = str(payload, "field");
	const json_t *value = json_object_get(payload, "value");
	const char *item = pmbot_apply_index_item(&c->idx, ref);
	const pmbot_pfield *f;
	size_t i;

	if (!c->state->project) {
		out->reason = "NO_PROJECT";
		say(&out->message, "no project was read: set project.owner and project.number in the config");
		return PMBOT_EINVALID;
	}
	if (!item) {
		out->reason = "NO_PROJECT_ITEM";
		say(&out->message, "%s is not in the project (add_to_project comes first)", ref);
		return PMBOT_EINVALID;
	}
	if (!fname || !(f = pmbot_state_field(c->state, fname))) {
		pmbot_buf names = PMBOT_BUF_INIT;

		for (i = 0; i < c->state->project->n_fields; i++)
			pmbot_buf_printf(&names, "%s'%s'", i ? ", " : "", c->state->project->fields[i].name);
		out->reason = "UNKNOWN_FIELD";
		say(&out->message, "the project has no field '%s' (fields: %s)", fname ? fname : "",
			names.len ? names.buf : "(none)");
		pmbot_buf_free(&names);
		return PMBOT_EINVALID;
	}
	if (json_object_set_new(args, "item_id", json_string(item)) < 0 ||
	    json_object_set_new(args, "field", json_string(f->name)) < 0 ||
	    json_object_set_new(args, "field_id", json_string(f->id)) < 0)
		return PMBOT_ERROR;
	if (!value || json_is_null(value))
		return json_object_set_new(args, "value", json_null()) < 0 ? PMBOT_ERROR : PMBOT_OK;
	if (f->type == PMBOT_PFIELD_SINGLE_SELECT) {
		const pmbot_pfield_option *o = NULL;

		/* Exact name first; a case-only difference is accepted when it is unique. */
		for (i = 0; json_is_string(value) && i < f->n_options && !o; i++)
			if (!strcmp(f->options[i].name, json_string_value(value)))
				o = &f->options[i];
		for (i = 0; json_is_string(value) && i < f->n_options && !o; i++)
			if (pmbot_apply_ieq(f->options[i].name, json_string_value(value)))
				o = &f->options[i];
		if (!o) {
			pmbot_buf names = PMBOT_BUF_INIT;

			option_names(&names, f);
			out->reason = "UNKNOWN_OPTION";
			say(&out->message, "field '%s' has no option '%s' (options: %s)", f->name,
				json_is_string(value) ? json_string_value(value) : "(not a string)", names.buf);
			pmbot_buf_free(&names);
			return PMBOT_EINVALID;
		}
		return json_object_set_new(args, "value", json_string(o->name)) < 0 ||
			json_object_set_new(args, "option_id", json_string(o->id)) < 0 ?
			PMBOT_ERROR : PMBOT_OK;
	}
	if (f->type == PMBOT_PFIELD_NUMBER ? !json_is_number(value) : !json_is_string(value)) {
		out->reason = "BAD_VALUE";
		say(&out->message, "field '%s' takes a %s", f->name,
			f->type == PMBOT_PFIELD_NUMBER ? "number" : "string");
		return PMBOT_EINVALID;
	}
	return json_object_set_new(args, "value", json_deep_copy(value)) < 0 ? PMBOT_ERROR : PMBOT_OK;
}

static int resolve(run_ctx *c, pmbot_apply_issue *is, const json_t *binding, outcome *out)
{
	int rc = pmbot_apply_resolve(is, binding, c->state, &c->idx, &out->reason, &out->message);

	return rc == PMBOT_OK ? PMBOT_OK : PMBOT_EINVALID;
}

/* The lower-cased "repo\nstable_id" of a binding into `b`; 0, or -1 when it has no stable id. */
static int binding_key(pmbot_buf *b, const json_t *binding)
{
	const char *repo = str(binding, "repo"), *sid = str(binding, "stable_id");

	pmbot_buf_clear(b);
	if (!repo || !sid)
		return -1;
	for (; *repo; repo++)
		if (pmbot_buf_putc(b, (char)(*repo >= 'A' && *repo <= 'Z' ? *repo - 'A' + 'a' : *repo)) < 0)
			return -1;
	return pmbot_buf_printf(b, "\n%s", sid) < 0 ? -1 : 0;
}

/*
 * Index the selected set_parent and add_to_project changesets by their
 * target's key, once per run, so that each create finds its own in O(1).
 * 0 or -1.
 */
static int fuse_index(run_ctx *c)
{
	size_t i, n = json_array_size(c->sel);
	const json_t *cs;

	if (c->fuse_keys)
		return 0;
	if (!(c->fuse_keys = calloc(n + 1, sizeof(*c->fuse_keys))))
		return -1;
	c->n_fuse_keys = n;
	json_array_foreach(c->sel, i, cs) {
		const char *op = str(cs, "operation");
		pmbot_strmap *m = !op ? NULL : !strcmp(op, "set_parent") ? &c->fuse_parents :
			!strcmp(op, "add_to_project") ? &c->fuse_projects : NULL;

		pmbot_buf_init(&c->fuse_keys[i], 0);
		if (!m || !str(cs, "changeset_id") ||
		    binding_key(&c->fuse_keys[i], json_object_get(cs, "target")) < 0)
			continue;
		/* The first one per issue: a second would be the planner's error, sent as is. */
		if (pmbot_strmap_put(m, c->fuse_keys[i].buf, (void *)cs, NULL) < 0)
			return -1;
	}
	return 0;
}

/*
 * The optional create_issue args: for a backend that fuses, those that let
 * one request also carry the selected set_parent of the new issue (when
 * its parent already exists) and its add_to_project (for the board read);
 * for every backend its issue type (the kind its type label names, with
 * issue_types: auto).
 * c->fuse_parent / c->fuse_project note which changesets were asked for;
 * the result says which landed. 0 or -1.
 */
static int fuse_args(run_ctx *c, const json_t *cs, json_t *args)
{
	const json_t *l;
	const char *prefix = c->config->labels.type;
	pmbot_buf key = PMBOT_BUF_INIT;
	void *found;
	size_t i;

	c->fuse_parent = c->fuse_project = NULL;
	if (!(c->backend->flags & PMBOT_BACKEND_FUSES))
		goto type;
	if (fuse_index(c) < 0)
		return -1;
	if (binding_key(&key, json_object_get(cs, "target")) == 0) {
		if (pmbot_strmap_get(&c->fuse_parents, key.buf, &found)) {
			const json_t *other = found;
			pmbot_apply_issue p;

			/* Only a parent that exists now: one created later goes as its own changeset. */
			if (pmbot_apply_resolve(&p, json_object_get(json_object_get(other, "payload"),
				    "parent"), c->state, &c->idx, NULL, NULL) == PMBOT_OK &&
			    p.node_id && *p.node_id) {
				if (json_object_set_new(args, "parent_node_id", json_string(p.node_id)) < 0)
					goto done;
				c->fuse_parent = other;
			}
		}
		if (pmbot_strmap_get(&c->fuse_projects, key.buf, &found) && c->state->project &&
		    c->state->project->node_id && *c->state->project->node_id &&
		    pmbot_apply_project_is(c->state->project,
			    str(json_object_get((const json_t *)found, "payload"), "project"))) {
			if (json_object_set_new(args, "project_node_id",
				    json_string(c->state->project->node_id)) < 0)
				goto done;
			c->fuse_project = found;
		}
	}
	pmbot_buf_free(&key);
type:
	/* Every backend takes the type: a create that lacked it would be planned again. */
	if (!c->config->issue_types || !prefix || !*prefix)
		return 0;
	/* The planner's, by the item's type name; plans made before it named one use the label. */
	if (str(json_object_get(cs, "payload"), "issue_type"))
		return json_object_set_new(args, "issue_type", json_string(str(json_object_get(cs,
			"payload"), "issue_type"))) < 0 ? -1 : 0;
	json_array_foreach(json_object_get(args, "labels"), i, l) {
		const char *name = json_string_value(l);

		if (name && !strncmp(name, prefix, strlen(prefix)) && name[strlen(prefix)])
			return json_object_set_new(args, "issue_type",
				json_string(name + strlen(prefix))) < 0 ? -1 : 0;
	}
	return 0;
done:
	pmbot_buf_free(&key);
	return -1;
}

/* The backend `args` of state.h for `cs`, every stable id resolved. */
static int build_args(json_t **out, run_ctx *c, const json_t *cs, pmbot_operation op,
	outcome *o)
{
	const json_t *target = json_object_get(cs, "target");
	const json_t *payload = json_object_get(cs, "payload");
	pmbot_buf ref = PMBOT_BUF_INIT;
	pmbot_apply_issue t, other;
	json_t *args = json_object();
	int err = PMBOT_ERROR, rc;

	*out = NULL;
	if (!args)
		goto done;
	if (op == PMBOT_OP_CREATE_ISSUE) {
		if (!str(target, "repo") || !str(payload, "title") || !json_is_string(json_object_get(payload, "body"))) {
			o->reason = "BAD_PAYLOAD";
			say(&o->message, "create_issue needs target.repo, payload.title and payload.body");
			err = PMBOT_EINVALID;
			goto done;
		}
		if (json_object_set_new(args, "repo", json_string(str(target, "repo"))) < 0 ||
		    json_object_set_new(args, "title", json_deep_copy(json_object_get(payload, "title"))) < 0 ||
		    json_object_set_new(args, "body", json_deep_copy(json_object_get(payload, "body"))) < 0 ||
		    json_object_set_new(args, "labels", json_is_array(json_object_get(payload, "labels")) ?
			    json_deep_copy(json_object_get(payload, "labels")) : json_array()) < 0 ||
		    fuse_args(c, cs, args) < 0)
			goto done;
		goto ok;
	}
	if ((rc = resolve(c, &t, target, o)) != PMBOT_OK) {
		err = rc;
		goto done;
	}
	if (set_issue(args, &t) < 0 || pmbot_issue_ref(&ref, t.repo, t.number) < 0)
		goto done;
	switch (op) {
	case PMBOT_OP_UPDATE_ISSUE_TITLE:
	case PMBOT_OP_UPDATE_ISSUE_BODY: {
		const char *key = op == PMBOT_OP_UPDATE_ISSUE_TITLE ? "title" : "body";

		if (!json_is_string(json_object_get(payload, key))) {
			o->reason = "BAD_PAYLOAD";
			say(&o->message, "%s needs payload.%s", str(cs, "operation"), key);
			err = PMBOT_EINVALID;
			goto done;
		}
		if (json_object_set_new(args, key, json_deep_copy(json_object_get(payload, key))) < 0)
			goto done;
		break;
	}
	case PMBOT_OP_ADD_LABELS:
	case PMBOT_OP_REMOVE_LABELS:
		if (!json_is_array(json_object_get(payload, "labels"))) {
			o->reason = "BAD_PAYLOAD";
			say(&o->message, "%s needs payload.labels", str(cs, "operation"));
			err = PMBOT_EINVALID;
			goto done;
		}
		if (json_object_set_new(args, "labels", json_deep_copy(json_object_get(payload, "labels"))) < 0)
			goto done;
		break;
	case PMBOT_OP_SET_PARENT:
		if ((rc = resolve(c, &other, json_object_get(payload, "parent"), o)) != PMBOT_OK) {
			err = rc;
			goto done;
		}
		if (json_object_set_new(args, "database_id", json_integer(t.database_id)) < 0 ||
		    json_object_set_new(args, "parent_repo", json_string(other.repo)) < 0 ||
		    json_object_set_new(args, "parent_number", json_integer(other.number)) < 0 ||
		    json_object_set_new(args, "replace",
			    json_boolean(json_is_true(json_object_get(payload, "replace")))) < 0)
			goto done;
		break;
	case PMBOT_OP_ADD_DEPENDENCY:
	case PMBOT_OP_REMOVE_DEPENDENCY:
		if ((rc = resolve(c, &other, json_object_get(payload, "blocker"), o)) != PMBOT_OK) {
			err = rc;
			goto done;
		}
		if (json_object_set_new(args, "blocker_repo", json_string(other.repo)) < 0 ||
		    json_object_set_new(args, "blocker_number", json_integer(other.number)) < 0 ||
		    json_object_set_new(args, "blocker_database_id", json_integer(other.database_id)) < 0)
			goto done;
		/* Node ids let a backend batch edges through GraphQL. */
		if ((c->backend->flags & PMBOT_BACKEND_BATCHES_EDGES) && t.node_id && *t.node_id &&
		    other.node_id && *other.node_id &&
		    (json_object_set_new(args, "node_id", json_string(t.node_id)) < 0 ||
		     json_object_set_new(args, "blocker_node_id", json_string(other.node_id)) < 0))
			goto done;
		break;
	case PMBOT_OP_ADD_TO_PROJECT:
		if (!pmbot_apply_project_is(c->state->project, str(payload, "project"))) {
			o->reason = "NO_PROJECT";
			say(&o->message, "project %s was not found", str(payload, "project") ?
				str(payload, "project") : "(none)");
			err = PMBOT_EINVALID;
			goto done;
		}
		if (json_object_set_new(args, "node_id", json_string(t.node_id)) < 0)
			goto done;
		break;
	case PMBOT_OP_SET_PROJECT_FIELD:
		if ((err = field_args(c, args, payload, ref.buf, o)) != PMBOT_OK)
			goto done;
		break;
	case PMBOT_OP_SET_ISSUE_TYPE:
		if (!str(payload, "issue_type")) {
			o->reason = "BAD_PAYLOAD";
			say(&o->message, "set_issue_type needs payload.issue_type");
			err = PMBOT_EINVALID;
			goto done;
		}
		if (json_object_set_new(args, "node_id", json_string(t.node_id ? t.node_id : "")) < 0 ||
		    json_object_set_new(args, "issue_type", json_string(str(payload, "issue_type"))) < 0)
			goto done;
		break;
	default:
		goto done;
	}
ok:
	*out = args;
	args = NULL;
	err = PMBOT_OK;
done:
	if (err == PMBOT_ERROR && !o->reason) {
		o->reason = "INTERNAL";
		say(&o->message, "out of memory");
	}
	json_decref(args);
	pmbot_buf_free(&ref);
	return err;
}

static void nap(const run_ctx *c, long ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	if (c->hooks && c->hooks->sleep_ms) {
		c->hooks->sleep_ms(c->hooks->ctx, ms);
		return;
	}
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0)
		;
}

/* After a failed create: did it land anyway? 1 yes (result filled), 0 no, -1 unknown. */
static int create_landed(run_ctx *c, const json_t *cs, outcome *o)
{
	const json_t *target = json_object_get(cs, "target");
	const pmbot_apply_entry *e;
	pmbot_buf why = PMBOT_BUF_INIT;

	if (load(c, &why) != PMBOT_OK) {
		pmbot_buf_printf(&o->message, "; and then %s", why.buf);
		pmbot_buf_free(&why);
		return -1;
	}
	pmbot_buf_free(&why);
	e = pmbot_apply_index_find(&c->idx, str(target, "repo"), str(target, "stable_id"));
	if (!e)
		return 0;
	json_decref(o->result);
	o->result = json_pack("{s:I, s:I, s:s}", "number", (json_int_t)e->number,
		"database_id", (json_int_t)e->database_id, "node_id", e->node_id);
	return o->result ? 1 : -1;
}

/* Note what a success taught us, so later changesets resolve against it. */
static int remember(run_ctx *c, const json_t *cs, pmbot_operation op, const json_t *args,
	const json_t *result)
{
	if (op == PMBOT_OP_CREATE_ISSUE) {
		const json_t *target = json_object_get(cs, "target");
		const char *cid = str(cs, "changeset_id");

		/*
		 * What the create carried out with it is settled now, by its
		 * answer: those changesets are recorded as done "with" it and
		 * never sent again.
		 */
		if (cid && c->fuse_parent && str(result, "parent_node_id") &&
		    pmbot_strmap_put(&c->fused, str(c->fuse_parent, "changeset_id"), (void *)cid,
			    NULL) < 0)
			return -1;
		if (cid && c->fuse_project && str(result, "item_id")) {
			pmbot_buf ref = PMBOT_BUF_INIT;
			int err = pmbot_issue_ref(&ref, str(args, "repo"),
				(long)json_integer_value(json_object_get(result, "number")));

			if (!err)
				err = pmbot_apply_index_add_item(&c->idx, ref.buf, str(result, "item_id"));
			pmbot_buf_free(&ref);
			if (err || pmbot_strmap_put(&c->fused, str(c->fuse_project, "changeset_id"),
				       (void *)cid, NULL) < 0)
				return -1;
		}
		c->fuse_parent = c->fuse_project = NULL;
		/* A create the index already knows (recovered by a re-read) is not a second one. */
		if (pmbot_apply_index_find(&c->idx, str(target, "repo"), str(target, "stable_id")))
			return 0;
		return pmbot_apply_index_add(&c->idx, str(target, "repo"), str(target, "stable_id"),
			(long)json_integer_value(json_object_get(result, "number")),
			(long long)json_integer_value(json_object_get(result, "database_id")),
			str(result, "node_id"));
	}
	if (op == PMBOT_OP_ADD_TO_PROJECT && str(result, "item_id")) {
		pmbot_buf ref = PMBOT_BUF_INIT;
		int err = pmbot_issue_ref(&ref, str(args, "repo"),
			(long)json_integer_value(json_object_get(args, "number")));

		if (!err)
			err = pmbot_apply_index_add_item(&c->idx, ref.buf, str(result, "item_id"));
		pmbot_buf_free(&ref);
		return err;
	}
	return 0;
}

static int result_ok(pmbot_operation op, const json_t *r)
{
	if (op == PMBOT_OP_CREATE_ISSUE)
		return json_is_integer(json_object_get(r, "number")) &&
			json_is_integer(json_object_get(r, "database_id")) &&
			json_is_string(json_object_get(r, "node_id"));
	if (op == PMBOT_OP_ADD_TO_PROJECT)
		return json_is_string(json_object_get(r, "item_id"));
	return json_is_object(r);
}

/*
 * A flow node's retry policy, all the run reads of the compiled flow: kept
 * once the flow is validated, which is then freed (it is the size of the
 * plan again).
 */
typedef struct {
	long max;
	long backoff_ms;
} node_retry;

/* Perform one changeset that is neither denied nor already true. */
static int execute(run_ctx *c, const json_t *cs, const node_retry *retry, pmbot_operation op,
	outcome *o)
{
	long max = retry->max, backoff = retry->backoff_ms;
	pmbot_buf berr = PMBOT_BUF_INIT;
	json_t *args = NULL, *res = NULL;
	int rc, err = PMBOT_ERROR;

	if (!pmbot_apply_repeat_safe(op))
		max = 0; /* whatever the flow says: a blind repeat could duplicate */
	if ((rc = build_args(&args, c, cs, op, o)) != PMBOT_OK) {
		o->status = "failed";
		err = rc == PMBOT_ERROR ? PMBOT_ERROR : PMBOT_EINVALID;
		goto done;
	}
	for (;;) {
		o->attempts++;
		if (audit(c, "attempt", cs, json_pack("{s:i}", "attempt", o->attempts)) < 0) {
			o->reason = "AUDIT_FAILED";
			say(&o->message, "the attempt could not be written to the audit ledger");
			goto failed;
		}
		pmbot_buf_clear(&berr);
		json_decref(res);
		res = NULL;
		rc = c->backend->perform(&res, c->backend, op, args, &berr);
		if (rc == PMBOT_OK && result_ok(op, res))
			break;
		if (rc == PMBOT_BACKEND_EPAUSED) {
			/* Not sent: a pause, never a create to look for or a retry. */
			while (berr.len && (berr.buf[berr.len - 1] == '\n' || berr.buf[berr.len - 1] == ' '))
				pmbot_buf_truncate(&berr, berr.len - 1);
			o->paused = 1;
			o->status = "pending";
			o->reason = "BUDGET_SPENT";
			say(&o->message, "%s", berr.len ? berr.buf : "the write budget is spent");
			err = PMBOT_BACKEND_EPAUSED;
			goto done;
		}
		if (rc == PMBOT_OK) {
			rc = PMBOT_ERROR;
			say(&berr, "the %s backend answered without the expected result", c->backend->name);
		}
		while (berr.len && (berr.buf[berr.len - 1] == '\n' || berr.buf[berr.len - 1] == ' '))
			pmbot_buf_truncate(&berr, berr.len - 1);
		o->reason = rc == PMBOT_EINVALID ? "BACKEND_REFUSED" : "BACKEND_ERROR";
		say(&o->message, "%s", berr.len ? berr.buf : "the backend failed without a reason");
		if (op == PMBOT_OP_CREATE_ISSUE) {
			/* Never retried blindly: only the state says whether it landed. */
			if (create_landed(c, cs, o) == 1) {
				o->recovered = 1;
				o->status = "applied";
				o->reason = NULL;
				say(&o->message, "the issue exists although the request failed: %s", berr.buf);
				err = PMBOT_OK;
				goto done;
			}
			goto failed;
		}
		if (rc == PMBOT_EINVALID)
			goto failed;
		if (o->attempts > max) {
			o->exhausted = max > 0;
			goto failed;
		}
		nap(c, backoff);
		/* The failed call may have landed: look before repeating it. */
		{
			pmbot_buf why = PMBOT_BUF_INIT;

			if (load(c, &why) != PMBOT_OK) {
				pmbot_buf_printf(&o->message, "; and then %s", why.buf);
				pmbot_buf_free(&why);
				goto failed;
			}
			pmbot_buf_free(&why);
		}
		if (pmbot_apply_is_applied(cs, c->state, &c->idx)) {
			o->recovered = 1;
			json_decref(res);
			res = json_object();
			break;
		}
		json_decref(args);
		if (build_args(&args, c, cs, op, o) != PMBOT_OK)
			goto failed;
	}
	if (remember(c, cs, op, args, res) < 0) {
		o->reason = "INTERNAL";
		say(&o->message, "out of memory");
		goto failed;
	}
	o->status = "applied";
	o->reason = NULL;
	if (o->recovered)
		say(&o->message, "the change is visible although the request failed: %s", berr.buf);
	else
		pmbot_buf_clear(&o->message);
	json_decref(o->result);
	o->result = res;
	res = NULL;
	err = PMBOT_OK;
	goto done;
failed:
	o->status = "failed";
	err = PMBOT_ERROR;
done:
	json_decref(args);
	json_decref(res);
	pmbot_buf_free(&berr);
	return err;
}

static double elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static int set_status(json_t *r, const outcome *o)
{
	int err = json_object_set_new(r, "status", json_string(o->status));

	if (o->reason)
		err |= json_object_set_new(r, "reason", json_string(o->reason));
	if (o->message.len)
		err |= json_object_set_new(r, "message", json_string(o->message.buf));
	if (o->result)
		err |= json_object_set_new(r, "result", json_deep_copy(o->result));
	if (o->recovered)
		err |= json_object_set_new(r, "recovered", json_true());
	if (o->attempts)
		err |= json_object_set_new(r, "attempts", json_integer(o->attempts));
	return err ? PMBOT_ERROR : PMBOT_OK;
}

static void after(const run_ctx *c, const json_t *cs, const char *status)
{
	if (c->group && c->group->on) {
		/* Durable only at the group's commit: told then. */
		pending *p = &c->group->items[c->group->n++];

		p->cs = cs;
		p->status = status;
		return;
	}
	if (c->hooks && c->hooks->after)
		c->hooks->after(c->hooks->ctx, cs, status);
}

/*
 * Record a settled outcome: its result entry, its audit event(s) and
 * hooks->after. PMBOT_OK, or PMBOT_ERROR when it cannot be recorded (`err`
 * says why); a failed outcome is recorded and still returns PMBOT_OK.
 */
static int record(const run_ctx *c, const json_t *cs, json_t *r, const outcome *o, pmbot_buf *err)
{
	const char *cid = str(cs, "changeset_id");
	json_t *extra;

	if (!strcmp(o->status, "already_applied")) {
		if (set_status(r, o) < 0 || audit(c, "success", cs,
			json_pack("{s:s}", "status", "already_applied")) < 0) {
			say(err, "cannot record %s in the audit ledger", cid);
			return PMBOT_ERROR;
		}
	} else if (!strcmp(o->status, "applied")) {
		extra = json_pack("{s:s, s:O?, s:i}", "status", "applied", "result", o->result,
			"attempts", o->attempts);
		if (extra && o->recovered && json_object_set_new(extra, "recovered", json_true()) < 0) {
			json_decref(extra);
			extra = NULL;
		}
		if (!extra || set_status(r, o) < 0 || audit(c, "success", cs, extra) < 0) {
			say(err, "%s was applied but cannot be recorded in the audit ledger", cid);
			return PMBOT_ERROR;
		}
	} else if (set_status(r, o) < 0 ||
		   audit(c, "failure", cs, json_pack("{s:s, s:s, s:i}", "reason",
			   o->reason ? o->reason : "BACKEND_ERROR", "message", o->message.buf,
			   "attempts", o->attempts)) < 0 ||
		   (o->exhausted && audit(c, "dead_letter", cs, json_pack("{s:s, s:i}",
			   "reason", o->reason ? o->reason : "BACKEND_ERROR", "attempts", o->attempts)) < 0)) {
		if (err)
			pmbot_buf_puts(err, "; the audit ledger could not record it");
	}
	after(c, cs, o->status);
	if (c->group && c->group->on)
		c->group->items[c->group->n - 1].r = r;
	return PMBOT_OK;
}

/*
 * Start a group when the backend has group commit and none is open: from
 * here the backend keeps its writes in memory and the ledger its lines.
 */
static int group_open(run_ctx *c, pmbot_buf *err)
{
	pmbot_buf why = PMBOT_BUF_INIT;
	int rc;

	if (!c->group || c->group->on)
		return PMBOT_OK;
	if ((rc = c->backend->hold(c->backend, &why)) < 0) {
		while (why.len && why.buf[why.len - 1] == '\n')
			pmbot_buf_truncate(&why, why.len - 1);
		say(err, "cannot take the %s backend's lock: %s", c->backend->name, why.buf);
		pmbot_buf_free(&why);
		return PMBOT_ERROR;
	}
	pmbot_buf_free(&why);
	pmbot_audit_hold(c->audit);
	c->group->on = 1;
	c->group->n = 0;
	return PMBOT_OK;
}

/*
 * Nothing of the group reached the state file: each of its changesets
 * failed, whatever the run made of it in memory, and the ledger says so
 * (its held lines, which said otherwise, are dropped).
 */
static void group_lost(run_ctx *c, const char *why)
{
	size_t i;

	pmbot_audit_discard(c->audit);
	pmbot_audit_hold(c->audit);
	for (i = 0; i < c->group->n; i++) {
		pending *p = &c->group->items[i];
		const json_t *att = json_object_get(p->r, "attempts");

		if (strcmp(p->status, "failed")) {
			json_object_del(p->r, "result");
			json_object_del(p->r, "recovered");
			if (json_object_set_new(p->r, "status", json_string("failed")) < 0 ||
			    json_object_set_new(p->r, "reason", json_string("BACKEND_ERROR")) < 0 ||
			    json_object_set_new(p->r, "message", json_string(why)) < 0)
				continue;
			p->status = "failed";
		}
		/* Best effort: the run fails either way, and says why. */
		if (audit(c, "failure", p->cs, json_pack("{s:O?, s:O?, s:I}", "reason",
			    json_object_get(p->r, "reason"), "message", json_object_get(p->r, "message"),
			    "attempts", (json_int_t)json_integer_value(att))) < 0)
			break;
	}
	if (pmbot_audit_flush(c->audit) < 0)
		pmbot_audit_discard(c->audit);
}

/*
 * End the open group: the backend writes the state once, then the ledger
 * its held lines with one fsync (so no line claims a change the file does
 * not hold), then hooks->after for each changeset. PMBOT_OK, or
 * PMBOT_ERROR (`err` says why) when the state or the ledger could not be
 * written; when the state could not, every changeset of the group is
 * failed.
 */
static int group_commit(run_ctx *c, pmbot_buf *err)
{
	pmbot_buf why = PMBOT_BUF_INIT;
	struct group *g = c->group;
	size_t i;
	int rc = PMBOT_ERROR;

	if (!g || !g->on)
		return PMBOT_OK;
	g->on = 0;
	if (c->backend->commit(c->backend, &why) < 0) {
		while (why.len && why.buf[why.len - 1] == '\n')
			pmbot_buf_truncate(&why, why.len - 1);
		if (!why.len)
			pmbot_buf_puts(&why, "the state could not be written");
		group_lost(c, why.buf);
		say(err, "%s", why.buf);
		goto done;
	}
	if (c->hooks && c->hooks->committed)
		c->hooks->committed(c->hooks->ctx, g->n);
	if (pmbot_audit_flush(c->audit) < 0) {
		say(err, "%zu changesets were applied but the audit ledger cannot record them", g->n);
		goto done;
	}
	for (i = 0; i < g->n; i++)
		if (c->hooks && c->hooks->after)
			c->hooks->after(c->hooks->ctx, g->items[i].cs, g->items[i].status);
	rc = PMBOT_OK;
done:
	g->n = 0;
	pmbot_buf_free(&why);
	return rc;
}

/*
 * The run pauses at `cs`, which stays pending: its result says why and a
 * `pause` event records when the budget frees, so the ledger shows where
 * the next run takes over. PMBOT_BACKEND_EPAUSED, or PMBOT_ERROR when the
 * ledger cannot record it (`err` says why either way).
 */
static int pause_at(const run_ctx *c, const json_t *cs, json_t *r, const outcome *o,
	const json_t *res, pmbot_buf *err)
{
	pmbot_buf when = PMBOT_BUF_INIT;
	int rc = PMBOT_ERROR;

	if (pmbot_datetime_format(&when, c->backend->resume_at) < 0 || set_status(r, o) < 0 ||
	    audit(c, "pause", cs, json_pack("{s:s, s:s, s:s}", "reason", "BUDGET_SPENT",
		    "resumes_after", when.buf, "message", o->message.buf)) < 0) {
		say(err, "cannot record the pause before %s in the audit ledger",
			str(cs, "changeset_id"));
		goto done;
	}
	if (pmbot_apply_progress(err, json_array_size(res), res, c->backend->resume_at) < 0)
		goto done;
	rc = PMBOT_BACKEND_EPAUSED;
done:
	pmbot_buf_free(&when);
	return rc;
}

int pmbot_apply_progress(pmbot_buf *out, size_t total, const json_t *results, long long resume_at)
{
	pmbot_buf when = PMBOT_BUF_INIT;
	const json_t *r;
	size_t i, left = 0;
	int err;

	json_array_foreach(results, i, r) {
		const char *st = str(r, "status");

		if (!st || (strcmp(st, "applied") && strcmp(st, "already_applied")))
			left++;
	}
	if (left > total)
		left = total;
	err = pmbot_datetime_format(&when, resume_at) < 0 ? PMBOT_ERROR : PMBOT_OK;
	if (!err) {
		pmbot_buf_clear(out);
		err = pmbot_buf_printf(out, "%zu of %zu applied; resumes after %s", total - left,
			total, when.buf) < 0 ? PMBOT_ERROR : PMBOT_OK;
	}
	pmbot_buf_free(&when);
	return err;
}

/* One changeset of a batch. */
typedef struct {
	const json_t *cs;
	json_t *args;                /* owned; NULL when already applied */
	int code;                    /* what the batch made of it */
	outcome o;
} batch_item;

/*
 * Send the consecutive changesets of operation `op` (set_project_field,
 * add_dependency or remove_dependency) from sel[at] through
 * backend->perform_batch, up to PMBOT_APPLY_BATCH_MAX, and record each in
 * bundle order. `*used` is how many changesets were settled (0: the caller
 * takes sel[at] the normal way). Whatever the batch did not land goes the
 * normal way, its batch send counting as the first attempt. PMBOT_OK, or
 * PMBOT_ERROR when the run must stop (a failure, a stop, the timeout, the
 * ledger), `err` saying why.
 */
static int run_batch(run_ctx *c, pmbot_operation op, const json_t *sel, const json_t *pos,
	const node_retry *retries, json_t *res, size_t at, size_t *used, const struct timespec *t0,
	long long timeout, pmbot_buf *err)
{
	const char *opname = pmbot_operation_name(op);
	batch_item *it = NULL;
	const json_t **args = NULL;
	json_t **results = NULL;
	int *codes = NULL;
	pmbot_buf *errs = NULL;
	size_t n = 0, k, j, n_send = 0, stop_at = (size_t)-1;
	const char *stop_why = NULL;
	int rc = PMBOT_ERROR, reload = 0, failed = 0, stopping = 0, paused = 0;
	long backoff = 0;

	*used = 0;
	if (!(it = calloc(PMBOT_APPLY_BATCH_MAX, sizeof(*it))))
		goto oom;
	/* Pure look first (nothing written, no hook called) so a short run takes the normal path. */
	for (k = at; k < json_array_size(sel) && n < PMBOT_APPLY_BATCH_MAX; k++) {
		const json_t *cs = json_array_get(sel, k);
		batch_item *b = &it[n];

		if (!str(cs, "operation") || strcmp(str(cs, "operation"), opname))
			break;
		pmbot_buf_init(&b->o.message, 0);
		b->cs = cs;
		if (!pmbot_apply_is_applied(cs, c->state, &c->idx) &&
		    build_args(&b->args, c, cs, op, &b->o) != PMBOT_OK) {
			/* Its failure is the normal path's to report, after the batch. */
			pmbot_buf_free(&b->o.message);
			break;
		}
		n++;
	}
	/* A lone edge still goes batched: one GraphQL request instead of REST and a read-back. */
	if (n < (op == PMBOT_OP_SET_PROJECT_FIELD ? 2u : 1u)) {
		rc = PMBOT_OK;
		goto done;
	}
	for (j = 0; j < n; j++) {
		if (c->hooks && c->hooks->before && c->hooks->before(c->hooks->ctx, it[j].cs)) {
			stop_why = "stopped";
			break;
		}
		if (elapsed_ms(t0) > (double)timeout) {
			stop_why = "timeout";
			break;
		}
	}
	if (j < n) {
		stop_at = j;
		for (k = j; k < n; k++) {
			json_decref(it[k].args);
			pmbot_buf_free(&it[k].o.message);
		}
		n = j;
	}
	if (!(args = calloc(n + 1, sizeof(*args))) || !(results = calloc(n + 1, sizeof(*results))) ||
	    !(codes = calloc(n + 1, sizeof(*codes))) || !(errs = calloc(n + 1, sizeof(*errs))))
		goto oom;
	for (j = 0; j < n; j++) {
		if (!it[j].args)
			continue;
		it[j].o.attempts = 1;
		if (audit(c, "attempt", it[j].cs, json_pack("{s:i}", "attempt", 1)) < 0) {
			say(err, "cannot record the attempt of %s in the audit ledger",
				str(it[j].cs, "changeset_id"));
			goto done;
		}
		pmbot_buf_init(&errs[n_send], 0);
		args[n_send++] = it[j].args;
	}
	if (n_send) {
		for (j = 0; j < n_send; j++)
			codes[j] = PMBOT_ERROR;
		/* A backend that declines the batch leaves every entry unsent: each goes alone. */
		c->backend->perform_batch(results, codes, c->backend, op, args, n_send,
			errs);
	}
	for (j = 0, k = 0; j < n; j++) {
		batch_item *b = &it[j];
		pmbot_buf *e;

		if (!b->args) {
			b->o.status = "already_applied";
			continue;
		}
		e = &errs[k];
		b->code = codes[k];
		if (b->code == PMBOT_BACKEND_EPAUSED) {
			while (e->len && (e->buf[e->len - 1] == '\n' || e->buf[e->len - 1] == ' '))
				pmbot_buf_truncate(e, e->len - 1);
			b->o.status = "pending";
			b->o.reason = "BUDGET_SPENT";
			b->o.paused = 1;
			say(&b->o.message, "%s", e->len ? e->buf : "the write budget is spent");
			stopping = 1; /* nothing is sent alone after a pause */
			k++;
			continue;
		}
		if (b->code == PMBOT_OK && json_is_object(results[k])) {
			b->o.status = "applied";
			b->o.result = results[k];
			results[k++] = NULL;
			continue;
		}
		if (b->code == PMBOT_OK)
			b->code = PMBOT_ERROR;
		while (e->len && (e->buf[e->len - 1] == '\n' || e->buf[e->len - 1] == ' '))
			pmbot_buf_truncate(e, e->len - 1);
		b->o.status = "failed";
		b->o.reason = b->code == PMBOT_EINVALID ? "BACKEND_REFUSED" : "BACKEND_ERROR";
		say(&b->o.message, "%s", e->len ? e->buf : "the backend failed without a reason");
		if (b->code != PMBOT_EINVALID) {
			reload = 1;
			backoff = retries[(size_t)json_integer_value(json_array_get(pos, at + j))].backoff_ms;
		}
		k++;
	}
	/* A failed request may have landed: one re-read settles every entry it left unknown. */
	if (reload) {
		pmbot_buf why = PMBOT_BUF_INIT;

		nap(c, backoff);
		if (load(c, &why) != PMBOT_OK) {
			for (j = 0; j < n; j++)
				if (!strcmp(it[j].o.status, "failed"))
					pmbot_buf_printf(&it[j].o.message, "; and then %s", why.buf);
			stopping = 1;
		}
		pmbot_buf_free(&why);
		for (j = 0; !stopping && j < n; j++)
			if (!strcmp(it[j].o.status, "failed") && it[j].code != PMBOT_EINVALID &&
			    pmbot_apply_is_applied(it[j].cs, c->state, &c->idx)) {
				it[j].o.status = "applied";
				it[j].o.reason = NULL;
				it[j].o.recovered = 1;
				it[j].o.result = json_object();
				prefix(&it[j].o.message, "the change is visible although the request failed: ");
			}
	}
	for (j = 0; j < n; j++) {
		batch_item *b = &it[j];
		const char *cid = str(b->cs, "changeset_id");

		/* The first paused entry pauses the run; the rest stay pending as selected. */
		if (b->o.paused) {
			if (!failed && !paused) {
				paused = 1;
				if ((rc = pause_at(c, b->cs, json_array_get(res, at + j), &b->o, res,
					     err)) != PMBOT_BACKEND_EPAUSED)
					goto done;
				rc = PMBOT_ERROR;
			}
			continue;
		}
		/*
		 * Sent alone the normal way, unless the run is already stopping;
		 * then what the batch landed is still recorded as applied, and
		 * the rest as failed, so every attempt has its outcome.
		 */
		if (!strcmp(b->o.status, "failed") && !stopping)
			execute(c, b->cs, &retries[(size_t)json_integer_value(json_array_get(pos, at + j))],
				op, &b->o);
		if (!strcmp(b->o.status, "failed"))
			stopping = 1;
		if (!strcmp(b->o.status, "failed") && !failed) {
			failed = 1;
			say(err, "%s (%s) failed: %s (%s)", cid, opname, b->o.message.buf,
				b->o.reason ? b->o.reason : "BACKEND_ERROR");
		}
		if (!strcmp(b->o.status, "applied") && !b->o.recovered)
			pmbot_buf_clear(&b->o.message);
		if (record(c, b->cs, json_array_get(res, at + j), &b->o, err) < 0)
			goto done;
	}
	*used = n;
	if (failed)
		goto done;
	if (paused) {
		rc = PMBOT_BACKEND_EPAUSED;
		goto done;
	}
	if (stop_why) {
		const char *cid = str(json_array_get(sel, at + stop_at), "changeset_id");

		if (!strcmp(stop_why, "stopped"))
			say(err, "stopped before %s", cid);
		else
			say(err, "the flow's timeout of %lld ms ran out before %s", timeout, cid);
		goto done;
	}
	rc = PMBOT_OK;
	goto done;
oom:
	say(err, "out of memory");
done:
	for (j = 0; it && j < n; j++) {
		json_decref(it[j].args);
		json_decref(it[j].o.result);
		pmbot_buf_free(&it[j].o.message);
	}
	for (j = 0; j < n_send; j++) {
		json_decref(results[j]);
		pmbot_buf_free(&errs[j]);
	}
	free(it);
	free(args);
	free(results);
	free(codes);
	free(errs);
	return rc;
}

/*
 * The order the selected changesets run in: the bundle's, except that for
 * a backend that fuses, each run of consecutive creates goes parents first
 * (by depth among the selected set_parent changesets), so a child's create
 * finds its parent created and can carry set_parent. Results and ledger
 * entries stay one per changeset; only the order of the creates changes.
 * 0 or -1.
 */
static int create_order(size_t *order, const json_t *sel, const pmbot_backend *b)
{
	pmbot_strmap parent = PMBOT_STRMAP_INIT;
	pmbot_buf *keys = NULL;
	size_t n = json_array_size(sel), i, j, start, *depth = NULL;
	int rc = -1;

	for (i = 0; i < n; i++)
		order[i] = i;
	if (!(b->flags & PMBOT_BACKEND_FUSES) || !n)
		return 0;
	if (!(keys = calloc(2 * n, sizeof(*keys))) || !(depth = calloc(n, sizeof(*depth))))
		goto done;
	/* child key -> parent key, for set_parent between two stable ids. */
	for (i = 0; i < n; i++) {
		const json_t *cs = json_array_get(sel, i);

		pmbot_buf_init(&keys[2 * i], 0);
		pmbot_buf_init(&keys[2 * i + 1], 0);
		if (!str(cs, "operation") || strcmp(str(cs, "operation"), "set_parent"))
			continue;
		if (binding_key(&keys[2 * i], json_object_get(cs, "target")) < 0 ||
		    binding_key(&keys[2 * i + 1],
			    json_object_get(json_object_get(cs, "payload"), "parent")) < 0)
			continue;
		if (pmbot_strmap_put(&parent, keys[2 * i].buf, keys[2 * i + 1].buf, NULL) < 0)
			goto done;
	}
	for (start = 0; start < n; start = j) {
		for (j = start; j < n; j++) {
			const char *op = str(json_array_get(sel, j), "operation");

			if (!op || strcmp(op, "create_issue"))
				break;
		}
		if (j == start) {
			j++;
			continue;
		}
		for (i = start; i < j; i++) {
			pmbot_buf k = PMBOT_BUF_INIT;
			void *up;
			size_t d;

			if (binding_key(&k, json_object_get(json_array_get(sel, i), "target")) < 0) {
				pmbot_buf_free(&k);
				continue;
			}
			/* 8 levels is GitHub's deepest tree; the bound also ends a cycle. */
			for (d = 0; d < 8 && pmbot_strmap_get(&parent, k.buf, &up); d++) {
				pmbot_buf_clear(&k);
				if (pmbot_buf_puts(&k, up) < 0)
					break;
			}
			depth[i] = d;
			pmbot_buf_free(&k);
		}
		/* A stable insertion sort by depth: creates are few next to their requests. */
		for (i = start + 1; i < j; i++) {
			size_t v = order[i], m = i;

			while (m > start && depth[order[m - 1]] > depth[v]) {
				order[m] = order[m - 1];
				m--;
			}
			order[m] = v;
		}
	}
	rc = 0;
done:
	for (i = 0; keys && i < 2 * n; i++)
		pmbot_buf_free(&keys[i]);
	free(keys);
	free(depth);
	pmbot_strmap_free(&parent);
	return rc;
}

/*
 * Refuse `cs` for `code` (o->message says why): its result, a `denial`
 * event and hooks->after. The first denial names the run's error.
 * PMBOT_OK, or PMBOT_ERROR when the ledger cannot record it.
 */
static int deny(const run_ctx *c, json_t *r, const json_t *cs, const char *code, outcome *o,
	size_t *denied, pmbot_buf *err)
{
	(*denied)++;
	o->status = "denied";
	o->reason = code;
	if (set_status(r, o) < 0 ||
	    audit(c, "denial", cs, json_pack("{s:s, s:s}", "reason", code, "message",
		    o->message.buf)) < 0) {
		say(err, "cannot record the denial of %s", str(cs, "changeset_id"));
		return PMBOT_ERROR;
	}
	if (*denied == 1)
		say(err, "%s denied: %s (%s)", str(cs, "changeset_id"), o->message.buf, code);
	after(c, cs, "denied");
	return PMBOT_OK;
}

/*
 * The selected changesets (borrowed), their positions in the bundle and
 * their result objects ("pending"), in bundle order.
 */
static int select_changesets(json_t *sel, json_t *pos, json_t *results,
	const json_t *changesets, const json_t *run, pmbot_buf *err)
{
	pmbot_strmap want = PMBOT_STRMAP_INIT, have = PMBOT_STRMAP_INIT;
	const json_t *cs, *id;
	size_t i;
	int rc = PMBOT_ERROR;

	json_array_foreach(run, i, id) {
		if (!json_is_string(id)) {
			say(err, "`run` must list changeset ids");
			rc = PMBOT_EINVALID;
			goto done;
		}
		if (pmbot_strmap_put(&want, json_string_value(id), NULL, NULL) < 0)
			goto done;
	}
	json_array_foreach(changesets, i, cs) {
		const char *cid = str(cs, "changeset_id");

		if (run && (!cid || !pmbot_strmap_get(&want, cid, NULL)))
			continue;
		if ((cid && pmbot_strmap_put(&have, cid, NULL, NULL) < 0) ||
		    json_array_append(sel, (json_t *)cs) < 0 ||
		    json_array_append_new(pos, json_integer((json_int_t)i)) < 0 ||
		    json_array_append_new(results, json_pack("{s:s?, s:O?, s:s}",
			    "changeset_id", cid, "idempotency_key", json_object_get(cs, "idempotency_key"),
			    "status", "pending")) < 0)
			goto done;
	}
	json_array_foreach(run, i, id) {
		if (!pmbot_strmap_get(&have, json_string_value(id), NULL)) {
			say(err, "`run` names %s, which is not in the bundle", json_string_value(id));
			rc = PMBOT_EINVALID;
			goto done;
		}
	}
	rc = PMBOT_OK;
done:
	pmbot_strmap_free(&want);
	pmbot_strmap_free(&have);
	return rc;
}

int pmbot_apply_run(json_t **results, const json_t *bundle, const json_t *run,
	pmbot_backend *backend, const pmbot_config *config, pmbot_audit *audit_log,
	const char *actor, const pmbot_apply_hooks *hooks, pmbot_buf *err)
{
	return pmbot_apply_run_from(results, bundle, run, backend, config, audit_log, actor, hooks,
		NULL, err);
}

int pmbot_apply_run_from(json_t **results, const json_t *bundle, const json_t *run,
	pmbot_backend *backend, const pmbot_config *config, pmbot_audit *audit_log,
	const char *actor, const pmbot_apply_hooks *hooks, const pmbot_apply_start *start,
	pmbot_buf *err)
{
	run_ctx c;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *res = json_array(), *sel = json_array(), *pos = json_array(), *flow = NULL;
	const json_t *changesets = json_object_get(bundle, "changesets"), *cs, *node;
	node_retry *retries = NULL;
	long long flow_timeout;
	struct timespec t0;
	outcome o;
	size_t i, denied = 0, *order = NULL;
	int rc = PMBOT_ERROR;

	memset(&c, 0, sizeof(c));
	memset(&o, 0, sizeof(o));
	pmbot_buf_init(&o.message, 0);
	c.backend = backend;
	c.config = config;
	c.audit = audit_log;
	c.actor = actor;
	c.hooks = hooks;
	c.bundle = bundle;
	c.sel = sel;
	*results = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!res || !sel || !pos)
		goto done;
	if (!json_is_object(bundle) || !json_is_array(changesets) || !backend || !config ||
	    (run && !json_is_array(run))) {
		say(err, "apply needs a ChangesetBundle, a backend and a configuration");
		rc = PMBOT_EINVALID;
		goto done;
	}
	if ((rc = select_changesets(sel, pos, res, changesets, run, err)) != PMBOT_OK)
		goto done;
	if (!json_array_size(sel)) {
		rc = PMBOT_OK;
		goto out;
	}
	if ((rc = pmbot_flow_compile_shared(&flow, bundle, config)) != PMBOT_OK) {
		say(err, rc == PMBOT_EINVALID ? "the bundle cannot be compiled into a flow" :
			"cannot compile the apply flow (out of memory, or PMBOT_NOW is not RFC 3339 UTC)");
		goto out;
	}
	if ((rc = pmbot_flow_validate(flow, &diags)) != PMBOT_OK) {
		if (diags.count)
			say(err, "the apply flow is invalid: %s %s: %s", diags.items[0].code,
				diags.items[0].path, diags.items[0].message);
		goto out;
	}
	flow_timeout = json_integer_value(json_object_get(json_object_get(flow, "flow"), "timeout_ms"));
	/* One node per changeset of the bundle, in its order: `pos` indexes both. */
	if (!(retries = calloc(json_array_size(changesets) + 1, sizeof(*retries)))) {
		say(err, "out of memory");
		rc = PMBOT_ERROR;
		goto out;
	}
	json_array_foreach(json_object_get(json_object_get(flow, "graph"), "nodes"), i, node) {
		const json_t *retry = json_object_get(node, "retry");

		if (i >= json_array_size(changesets))
			break;
		retries[i].max = (long)json_integer_value(json_object_get(retry, "max"));
		retries[i].backoff_ms = (long)json_integer_value(json_object_get(retry, "backoff_ms"));
	}
	json_decref(flow);
	flow = NULL;

	/* Denials are decided by policy alone, so all of them come before any write. */
	json_array_foreach(sel, i, cs) {
		const char *code = denial(config, cs, &o.message);

		if (code && deny(&c, json_array_get(res, i), cs, code, &o, &denied, err) < 0) {
			rc = PMBOT_ERROR;
			goto out;
		}
	}
	if (denied) {
		rc = PMBOT_EINVALID;
		goto out;
	}
	if (plan_reads(&c, sel) < 0 || first_state(&c, start, err) != PMBOT_OK) {
		rc = PMBOT_ERROR;
		goto out;
	}
	/*
	 * Then the planner's rules against the state, whoever wrote the bundle:
	 * still before any write, so a bundle that breaks one writes nothing.
	 */
	json_array_foreach(sel, i, cs) {
		const char *code = NULL;
		int r = pmbot_apply_rule(&code, cs, c.state, &c.idx, config, &o.message);

		if (r == PMBOT_ERROR) {
			say(err, "out of memory");
			rc = PMBOT_ERROR;
			goto out;
		}
		if (r != PMBOT_OK && deny(&c, json_array_get(res, i), cs, code, &o, &denied, err) < 0) {
			rc = PMBOT_ERROR;
			goto out;
		}
	}
	if (denied) {
		rc = PMBOT_EINVALID;
		goto out;
	}

	if (!(order = calloc(json_array_size(sel), sizeof(*order))) ||
	    create_order(order, sel, backend) < 0) {
		say(err, "out of memory");
		rc = PMBOT_ERROR;
		goto out;
	}
	if (backend->hold && backend->commit) {
		if (!(c.group = calloc(1, sizeof(*c.group)))) {
			say(err, "out of memory");
			rc = PMBOT_ERROR;
			goto out;
		}
	}
	for (i = 0; i < json_array_size(sel); i++) {
		const char *cid;
		const node_retry *retry =
			&retries[(size_t)json_integer_value(json_array_get(pos, order[i]))];
		json_t *r = json_array_get(res, order[i]);
		pmbot_operation op;
		size_t used;
		void *with;

		cs = json_array_get(sel, order[i]);
		cid = str(cs, "changeset_id");
		/* A batch settles up to PMBOT_APPLY_BATCH_MAX: room for it in the group. */
		if (c.group && c.group->n + PMBOT_APPLY_BATCH_MAX > PMBOT_APPLY_GROUP_MAX &&
		    (rc = group_commit(&c, err)) != PMBOT_OK)
			goto out;
		if ((rc = group_open(&c, err)) != PMBOT_OK)
			goto out;
		/* An unknown name is refused per changeset below, never batched. */
		if (pmbot_operation_parse(&op, str(cs, "operation")) == PMBOT_OK &&
		    (op == PMBOT_OP_SET_PROJECT_FIELD ||
		     ((op == PMBOT_OP_ADD_DEPENDENCY || op == PMBOT_OP_REMOVE_DEPENDENCY) &&
		      (backend->flags & PMBOT_BACKEND_BATCHES_EDGES))) && backend->perform_batch) {
			if ((rc = run_batch(&c, op, sel, pos, retries, res, i, &used, &t0, flow_timeout,
				     err)) != PMBOT_OK)
				goto out;
			if (used) {
				i += used - 1;
				continue;
			}
		}
		if (hooks && hooks->before && hooks->before(hooks->ctx, cs)) {
			say(err, "stopped before %s", cid);
			rc = PMBOT_ERROR;
			goto out;
		}
		if (elapsed_ms(&t0) > (double)flow_timeout) {
			say(err, "the flow's timeout of %lld ms ran out before %s", flow_timeout, cid);
			rc = PMBOT_ERROR;
			goto out;
		}
		pmbot_buf_free(&o.message);
		json_decref(o.result);
		memset(&o, 0, sizeof(o));
		pmbot_buf_init(&o.message, 0);
		if (cid && pmbot_strmap_get(&c.fused, cid, &with)) {
			/* Landed with the create's request: settled by its answer, not sent again. */
			o.status = "applied";
			if (!(o.result = json_pack("{s:s}", "with", (const char *)with))) {
				say(err, "out of memory");
				rc = PMBOT_ERROR;
				goto out;
			}
		} else if (pmbot_apply_is_applied(cs, c.state, &c.idx))
			o.status = "already_applied";
		else if (execute(&c, cs, retry, op, &o) != PMBOT_OK && !o.paused)
			say(err, "%s (%s) failed: %s (%s)", cid, str(cs, "operation"), o.message.buf,
				o.reason ? o.reason : "BACKEND_ERROR");
		if (o.paused) {
			rc = pause_at(&c, cs, r, &o, res, err);
			goto out;
		}
		if (record(&c, cs, r, &o, err) < 0) {
			rc = PMBOT_ERROR;
			goto out;
		}
		if (!strcmp(o.status, "failed")) {
			rc = PMBOT_ERROR;
			goto out;
		}
	}
	rc = PMBOT_OK;
out:
	/* Whatever ended the run, what it settled is written (or failed) before it returns. */
	if (rc == PMBOT_OK) {
		rc = group_commit(&c, err);
	} else if (c.group && c.group->on) {
		pmbot_buf also = PMBOT_BUF_INIT;

		if (group_commit(&c, &also) != PMBOT_OK && err)
			pmbot_buf_printf(err, "; and %s", also.buf);
		pmbot_buf_free(&also);
	}
	*results = res;
	res = NULL;
done:
	json_decref(o.result);
	pmbot_buf_free(&o.message);
	json_decref(res);
	json_decref(sel);
	json_decref(pos);
	json_decref(flow);
	free(retries);
	pmbot_diag_list_free(&diags);
	if (c.have_idx)
		pmbot_apply_index_free(&c.idx);
	if (c.own_state)
		pmbot_state_free(c.own_state);
	pmbot_strmap_free(&c.fused);
	pmbot_strmap_free(&c.fuse_parents);
	pmbot_strmap_free(&c.fuse_projects);
	for (i = 0; c.fuse_keys && i < c.n_fuse_keys; i++)
		pmbot_buf_free(&c.fuse_keys[i]);
	free(c.fuse_keys);
	free(c.group);
	free(order);
	free(c.repos);
	free(c.needs);
	free(c.project_owner);
	return rc;
}
