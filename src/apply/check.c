#include "apply_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/plan.h"
#include "pmbot/render.h"
#include "pmbot/banned.h"

int pmbot_apply_ieq(const char *a, const char *b)
{
	if (!a || !b)
		return 0;
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
	return *a == *b;
}

int pmbot_apply_repeat_safe(pmbot_operation op)
{
	/*
	 * Every write but a create converges on the same end state when sent
	 * twice; a second create is a second issue.
	 */
	return (size_t)op < PMBOT_OP_COUNT && op != PMBOT_OP_CREATE_ISSUE;
}

static int lower_into(pmbot_buf *b, const char *s)
{
	for (; *s; s++)
		if (pmbot_buf_putc(b, (char)tolower((unsigned char)*s)) < 0)
			return -1;
	return 0;
}

static int entry_key(pmbot_buf *key, const char *repo, const char *stable_id)
{
	if (lower_into(key, repo) < 0 || pmbot_buf_putc(key, '\n') < 0 ||
	    pmbot_buf_puts(key, stable_id) < 0)
		return -1;
	return 0;
}

int pmbot_apply_author_trusted(const pmbot_config *cfg, const char *login, int is_bot)
{
	if (cfg)
		return pmbot_config_author_trusted(cfg, login, is_bot);
	/* The default trust list: the Actions bot in its REST and GraphQL spellings. */
	return is_bot && (pmbot_apply_ieq(login, "github-actions[bot]") ||
		pmbot_apply_ieq(login, "github-actions"));
}

void pmbot_apply_index_free(pmbot_apply_index *idx)
{
	size_t i;

	for (i = 0; i < idx->n_entries; i++) {
		free(idx->entries[i]->key);
		free(idx->entries[i]->repo);
		free(idx->entries[i]->node_id);
		free(idx->entries[i]);
	}
	free(idx->entries);
	for (i = 0; i < idx->n_items * 2; i++)
		free(idx->item_keys[i]);
	free(idx->item_keys);
	pmbot_strmap_free(&idx->map);
	pmbot_strmap_free(&idx->items);
	memset(idx, 0, sizeof(*idx));
}

int pmbot_apply_index_add(pmbot_apply_index *idx, const char *repo, const char *stable_id,
	long number, long long database_id, const char *node_id)
{
	pmbot_buf key = PMBOT_BUF_INIT;
	pmbot_apply_entry *e = NULL;
	void *existing = NULL;
	int err = PMBOT_ERROR, rc;

	if (entry_key(&key, repo, stable_id) < 0)
		goto done;
	if (pmbot_strmap_get(&idx->map, key.buf, &existing)) {
		((pmbot_apply_entry *)existing)->count++;
		err = PMBOT_OK;
		goto done;
	}
	if (idx->n_entries == idx->alloc_entries) {
		size_t alloc = idx->alloc_entries ? idx->alloc_entries * 2 : 64;
		pmbot_apply_entry **p = realloc(idx->entries, alloc * sizeof(*p));

		if (!p)
			goto done;
		idx->entries = p;
		idx->alloc_entries = alloc;
	}
	if (!(e = calloc(1, sizeof(*e))))
		goto done;
	e->repo = strdup(repo);
	e->node_id = strdup(node_id ? node_id : "");
	e->key = pmbot_buf_detach(&key, NULL);
	if (!e->repo || !e->node_id || !e->key)
		goto done;
	e->number = number;
	e->database_id = database_id;
	e->count = 1;
	if ((rc = pmbot_strmap_put(&idx->map, e->key, e, NULL)) != 0)
		goto done;
	idx->entries[idx->n_entries++] = e;
	e = NULL;
	err = PMBOT_OK;
done:
	if (e) {
		free(e->key);
		free(e->repo);
		free(e->node_id);
		free(e);
	}
	pmbot_buf_free(&key);
	return err;
}

int pmbot_apply_index_add_item(pmbot_apply_index *idx, const char *ref, const char *item_id)
{
	pmbot_buf key = PMBOT_BUF_INIT;
	char *id = NULL, *k = NULL;
	void *existing = NULL;
	int err = PMBOT_ERROR;

	if (lower_into(&key, ref) < 0)
		goto done;
	if (pmbot_strmap_get(&idx->items, key.buf, &existing)) {
		err = PMBOT_OK;
		goto done;
	}
	if (idx->n_items * 2 + 2 > idx->alloc_items) {
		size_t alloc = idx->alloc_items ? idx->alloc_items * 2 : 64;
		char **p = realloc(idx->item_keys, alloc * sizeof(*p));

		if (!p)
			goto done;
		idx->item_keys = p;
		idx->alloc_items = alloc;
	}
	if (!(id = strdup(item_id)) || !(k = pmbot_buf_detach(&key, NULL)))
		goto done;
	if (pmbot_strmap_put(&idx->items, k, id, NULL) != 0)
		goto done;
	idx->item_keys[idx->n_items * 2] = k;
	idx->item_keys[idx->n_items * 2 + 1] = id;
	idx->n_items++;
	k = id = NULL;
	err = PMBOT_OK;
done:
	free(id);
	free(k);
	pmbot_buf_free(&key);
	return err;
}

int pmbot_apply_index_build(pmbot_apply_index *idx, const pmbot_state *state,
	const pmbot_config *config)
{
	size_t i;
	int err = PMBOT_ERROR;

	memset(idx, 0, sizeof(*idx));
	for (i = 0; i < state->n_issues; i++) {
		const pmbot_issue *is = &state->issues[i];
		pmbot_body body;
		int rc;

		if (!is->body || !pmbot_apply_author_trusted(config, is->author, is->author_is_bot))
			continue;
		if (pmbot_body_parse(&body, is->body, strlen(is->body), NULL) < 0)
			goto done;
		rc = body.marker == PMBOT_MARKER_OK ?
			pmbot_apply_index_add(idx, is->repo, body.stable_id, is->number,
				is->database_id, is->node_id) : 0;
		pmbot_body_free(&body);
		if (rc < 0)
			goto done;
	}
	if (state->project) {
		for (i = 0; i < state->project->n_items; i++) {
			const pmbot_pitem *it = &state->project->items[i];

			if (it->issue && it->id &&
			    pmbot_apply_index_add_item(idx, it->issue, it->id) < 0)
				goto done;
		}
	}
	err = PMBOT_OK;
done:
	if (err)
		pmbot_apply_index_free(idx);
	return err;
}

const pmbot_apply_entry *pmbot_apply_index_find(const pmbot_apply_index *idx,
	const char *repo, const char *stable_id)
{
	pmbot_buf key = PMBOT_BUF_INIT;
	void *v = NULL;

	if (entry_key(&key, repo, stable_id) < 0 || !pmbot_strmap_get(&idx->map, key.buf, &v))
		v = NULL;
	pmbot_buf_free(&key);
	return v;
}

const char *pmbot_apply_index_item(const pmbot_apply_index *idx, const char *ref)
{
	pmbot_buf key = PMBOT_BUF_INIT;
	void *v = NULL;

	if (lower_into(&key, ref) < 0 || !pmbot_strmap_get(&idx->items, key.buf, &v))
		v = NULL;
	pmbot_buf_free(&key);
	return v;
}

static void say(pmbot_buf *why, const char **code, const char *c, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void say(pmbot_buf *why, const char **code, const char *c, const char *fmt, ...)
{
	va_list ap;

	if (code)
		*code = c;
	if (why) {
		pmbot_buf_clear(why);
		va_start(ap, fmt);
		pmbot_buf_vprintf(why, fmt, ap);
		va_end(ap);
	}
}

int pmbot_apply_resolve(pmbot_apply_issue *out, const json_t *binding,
	const pmbot_state *state, const pmbot_apply_index *idx, const char **code,
	pmbot_buf *why)
{
	const char *repo = json_string_value(json_object_get(binding, "repo"));
	const char *sid = json_string_value(json_object_get(binding, "stable_id"));
	const json_t *num = json_object_get(binding, "number");

	memset(out, 0, sizeof(*out));
	if (!repo || (!sid && !json_is_integer(num)) || (sid && num)) {
		say(why, code, "BAD_BINDING", "a binding must be {repo, stable_id} or {repo, number}");
		return PMBOT_EINVALID;
	}
	if (sid) {
		const pmbot_apply_entry *e = pmbot_apply_index_find(idx, repo, sid);

		if (!e) {
			say(why, code, "ISSUE_NOT_FOUND",
				"no issue in %s carries a trusted marker for '%s'", repo, sid);
			return PMBOT_ENOTFOUND;
		}
		if (e->count > 1) {
			/* Never guess which of two trusted issues is the real one. */
			say(why, code, "AMBIGUOUS_MARKER",
				"two or more trusted issues in %s carry the marker '%s'", repo, sid);
			return PMBOT_EINVALID;
		}
		out->repo = e->repo;
		out->number = e->number;
		out->database_id = e->database_id;
		out->node_id = e->node_id;
		return PMBOT_OK;
	} else {
		long n = (long)json_integer_value(num);
		const pmbot_issue *is = pmbot_state_issue_at(state, repo, n);

		if (!is) {
			say(why, code, "ISSUE_NOT_FOUND", "issue %s#%ld does not exist", repo, n);
			return PMBOT_ENOTFOUND;
		}
		out->repo = is->repo;
		out->number = is->number;
		out->database_id = is->database_id;
		out->node_id = is->node_id;
		return PMBOT_OK;
	}
}

static int has_label(const pmbot_issue *is, const char *label)
{
	size_t i;

	/* GitHub treats label names case-insensitively. */
	for (i = 0; i < is->n_labels; i++)
		if (pmbot_apply_ieq(is->labels[i], label))
			return 1;
	return 0;
}

/* Every label of `labels` present (want 1) or absent (want 0)? */
static int labels_are(const pmbot_issue *is, const json_t *labels, int want)
{
	size_t i;
	json_t *l;

	if (!json_is_array(labels))
		return 0;
	json_array_foreach(labels, i, l) {
		if (!json_is_string(l) || has_label(is, json_string_value(l)) != want)
			return 0;
	}
	return 1;
}

static int blocked_by_has(const pmbot_issue *is, const char *ref)
{
	size_t i;

	for (i = 0; i < is->n_blocked_by; i++)
		if (pmbot_apply_ieq(is->blocked_by[i], ref))
			return 1;
	return 0;
}

int pmbot_apply_project_parse(const char *s, size_t *owner_len, long *number)
{
	const char *slash = s ? strrchr(s, '/') : NULL;
	char *end;

	if (!slash || slash == s || !isdigit((unsigned char)slash[1]))
		return -1;
	errno = 0;
	*number = strtol(slash + 1, &end, 10);
	if (errno || *end || *number <= 0)
		return -1;
	*owner_len = (size_t)(slash - s);
	return 0;
}

int pmbot_apply_project_is(const pmbot_project *p, const char *spec)
{
	size_t olen;
	long number;

	if (!p || !p->owner || pmbot_apply_project_parse(spec, &olen, &number) < 0)
		return 0;
	return strlen(p->owner) == olen && !strncasecmp(p->owner, spec, olen) &&
		p->number == number;
}

static int field_value_is(const pmbot_state *state, const pmbot_pitem *it,
	const char *field, const json_t *want)
{
	const pmbot_pfield *f = pmbot_state_field(state, field);
	const json_t *have = json_object_get(it->values, f ? f->name : field);

	if (!have && f)
		have = json_object_get(it->values, field);
	if (json_is_null(want) || !want)
		return !have || json_is_null(have);
	if (!have)
		return 0;
	if (json_is_number(want) && json_is_number(have))
		return json_number_value(want) == json_number_value(have);
	if (!json_is_string(want) || !json_is_string(have))
		return 0;
	if (f && f->type == PMBOT_PFIELD_SINGLE_SELECT)
		return pmbot_apply_ieq(json_string_value(want), json_string_value(have));
	return !strcmp(json_string_value(want), json_string_value(have));
}

int pmbot_apply_is_applied(const json_t *cs, const pmbot_state *state,
	const pmbot_apply_index *idx)
{
	const char *opname = json_string_value(json_object_get(cs, "operation"));
	const json_t *target = json_object_get(cs, "target");
	const json_t *payload = json_object_get(cs, "payload");
	pmbot_buf ref = PMBOT_BUF_INIT;
	pmbot_apply_issue t, other;
	const pmbot_issue *is;
	pmbot_operation op;
	int yes = 0;

	if (!opname || pmbot_operation_parse(&op, opname) != PMBOT_OK || !json_is_object(payload))
		return 0;
	if (op == PMBOT_OP_CREATE_ISSUE) {
		const char *repo = json_string_value(json_object_get(target, "repo"));
		const char *sid = json_string_value(json_object_get(target, "stable_id"));

		/* Landed once or more: either way another create would be wrong. */
		return repo && sid && pmbot_apply_index_find(idx, repo, sid) != NULL;
	}
	if (pmbot_apply_resolve(&t, target, state, idx, NULL, NULL) != PMBOT_OK)
		return 0;
	if (!(is = pmbot_state_issue_at(state, t.repo, t.number)))
		return 0;
	if (pmbot_issue_ref(&ref, is->repo, is->number) < 0)
		goto done;
	switch (op) {
	case PMBOT_OP_UPDATE_ISSUE_TITLE: {
		const char *s = json_string_value(json_object_get(payload, "title"));

		yes = s && is->title && !strcmp(s, is->title);
		break;
	}
	case PMBOT_OP_UPDATE_ISSUE_BODY: {
		const char *s = json_string_value(json_object_get(payload, "body"));

		yes = s && is->body && !strcmp(s, is->body);
		break;
	}
	case PMBOT_OP_ADD_LABELS:
	case PMBOT_OP_REMOVE_LABELS:
		yes = labels_are(is, json_object_get(payload, "labels"), op == PMBOT_OP_ADD_LABELS);
		break;
	case PMBOT_OP_SET_PARENT: {
		pmbot_buf pref = PMBOT_BUF_INIT;

		if (is->parent && pmbot_apply_resolve(&other, json_object_get(payload, "parent"),
			state, idx, NULL, NULL) == PMBOT_OK &&
		    pmbot_issue_ref(&pref, other.repo, other.number) == 0)
			yes = pmbot_apply_ieq(is->parent, pref.buf);
		pmbot_buf_free(&pref);
		break;
	}
	case PMBOT_OP_ADD_DEPENDENCY:
	case PMBOT_OP_REMOVE_DEPENDENCY: {
		pmbot_buf bref = PMBOT_BUF_INIT;

		if (pmbot_apply_resolve(&other, json_object_get(payload, "blocker"), state, idx,
			NULL, NULL) == PMBOT_OK &&
		    pmbot_issue_ref(&bref, other.repo, other.number) == 0)
			yes = blocked_by_has(is, bref.buf) == (op == PMBOT_OP_ADD_DEPENDENCY);
		pmbot_buf_free(&bref);
		break;
	}
	case PMBOT_OP_ADD_TO_PROJECT:
		yes = pmbot_apply_project_is(state->project,
			json_string_value(json_object_get(payload, "project"))) &&
			pmbot_state_item(state, ref.buf) != NULL;
		break;
	case PMBOT_OP_SET_PROJECT_FIELD: {
		const pmbot_pitem *it = pmbot_state_item(state, ref.buf);
		const char *field = json_string_value(json_object_get(payload, "field"));

		yes = it && field && field_value_is(state, it, field, json_object_get(payload, "value"));
		break;
	}
	case PMBOT_OP_SET_ISSUE_TYPE: {
		const char *s = json_string_value(json_object_get(payload, "issue_type"));

		/* GitHub names types case-insensitively (the planner matches them so too). */
		yes = s && is->issue_type && pmbot_apply_ieq(s, is->issue_type);
		break;
	}
	default:
		break;
	}
done:
	pmbot_buf_free(&ref);
	return yes;
}

int pmbot_changeset_is_applied(const json_t *cs, const pmbot_state *state,
	const pmbot_config *config)
{
	pmbot_apply_index idx;
	int yes;

	if (!cs || !state || pmbot_apply_index_build(&idx, state, config) < 0)
		return 0;
	yes = pmbot_apply_is_applied(cs, state, &idx);
	pmbot_apply_index_free(&idx);
	return yes;
}

/* The plan_hash rule of plan.h, computed here so that an edited plan file is caught. */
static int bundle_hash(char out[PMBOT_SHA256_HEX_SIZE], const json_t *bundle)
{
	json_t *cs = json_object_get(bundle, "changesets");
	json_t *fp = json_object_get(bundle, "fingerprint");
	json_t *o;
	int err;

	o = json_pack("{s:O, s:o}", "changesets", cs, "fingerprint",
		fp ? json_incref(fp) : json_array());
	if (!o)
		return -1;
	err = pmbot_sha256_json(out, o);
	json_decref(o);
	return err;
}

int pmbot_apply_check_bundle(const json_t *b, const char *which, pmbot_diag_list *diags)
{
	const char *hash = json_string_value(json_object_get(b, "plan_hash"));
	char have[PMBOT_SHA256_HEX_SIZE];
	const json_t *fp = json_object_get(b, "fingerprint");

	if (!json_is_object(b) || !hash || !json_is_array(json_object_get(b, "changesets")) ||
	    (fp && !json_is_array(fp))) {
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "BUNDLE_INVALID", NULL, "", 0, 0,
			"the %s plan is not a ChangesetBundle (plan_hash and changesets[] required)",
			which);
		return PMBOT_EINVALID;
	}
	if (bundle_hash(have, b) < 0)
		return PMBOT_ERROR;
	if (strcmp(have, hash)) {
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "PLAN_HASH_MISMATCH", NULL, "/plan_hash", 0, 0,
			"the %s plan says plan_hash %.12s… but its changesets and fingerprint hash "
			"to %.12s…: the plan file was edited", which, hash, have);
		return PMBOT_EINVALID;
	}
	return PMBOT_OK;
}

static int same_changeset(const json_t *a, const json_t *b, const char **what)
{
	static const char *const keys[] = { "operation", "target", "payload" };
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!pmbot_json_equal(json_object_get(a, keys[i]), json_object_get(b, keys[i]))) {
			*what = keys[i];
			return 0;
		}
	}
	return 1;
}

static int stale(pmbot_diag_list *diags, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int stale(pmbot_diag_list *diags, const char *path, const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	pmbot_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	pmbot_diag_add(diags, PMBOT_SEV_ERROR, "STALE_PLAN", NULL, path, 0, 0,
		"the plan changed since it was approved: %s", msg.buf);
	pmbot_buf_free(&msg);
	return PMBOT_EINVALID;
}

int pmbot_apply_check(const json_t *approved, const json_t *fresh, const pmbot_state *state,
	const pmbot_config *config, pmbot_diag_list *diags)
{
	pmbot_strmap keys = PMBOT_STRMAP_INIT, used = PMBOT_STRMAP_INIT;
	pmbot_buf path = PMBOT_BUF_INIT;
	pmbot_apply_index idx;
	const json_t *acs, *fcs, *aconf, *fconf, *cs;
	int have_idx = 0, err;
	size_t i, j;

	if ((err = pmbot_apply_check_bundle(approved, "approved", diags)) != PMBOT_OK ||
	    (err = pmbot_apply_check_bundle(fresh, "fresh", diags)) != PMBOT_OK)
		return err;
	if (!strcmp(json_string_value(json_object_get(approved, "plan_hash")),
		    json_string_value(json_object_get(fresh, "plan_hash"))))
		return PMBOT_OK;

	err = PMBOT_ERROR;
	acs = json_object_get(approved, "changesets");
	fcs = json_object_get(fresh, "changesets");
	json_array_foreach(acs, i, cs) {
		const char *key = json_string_value(json_object_get(cs, "idempotency_key"));

		if (!key) {
			err = stale(diags, "/changesets", "approved changeset %zu has no idempotency_key", i);
			goto done;
		}
		if (pmbot_strmap_put(&keys, key, (void *)cs, NULL) < 0)
			goto done;
	}
	/* Every fresh changeset must be one the human approved, unchanged. */
	json_array_foreach(fcs, i, cs) {
		const char *key = json_string_value(json_object_get(cs, "idempotency_key"));
		const char *what = NULL;
		void *a = NULL;

		pmbot_buf_clear(&path);
		if (pmbot_buf_printf(&path, "/changesets/%zu", i) < 0)
			goto done;
		if (!key || !pmbot_strmap_get(&keys, key, &a)) {
			err = stale(diags, path.buf, "%s is not in the approved plan",
				key ? key : "a changeset without idempotency_key");
			goto done;
		}
		if (!same_changeset(a, cs, &what)) {
			err = stale(diags, path.buf, "%s has a different %s", key, what);
			goto done;
		}
		if (pmbot_strmap_put(&used, key, a, NULL) < 0)
			goto done;
	}
	/* A conflict the approver never saw is a difference too. */
	aconf = json_object_get(approved, "conflicts");
	fconf = json_object_get(fresh, "conflicts");
	json_array_foreach(fconf, i, cs) {
		const json_t *c;
		int seen = 0;

		json_array_foreach(aconf, j, c) {
			if (pmbot_json_equal(c, cs)) {
				seen = 1;
				break;
			}
		}
		if (!seen) {
			pmbot_buf_clear(&path);
			if (pmbot_buf_printf(&path, "/conflicts/%zu", i) < 0)
				goto done;
			err = stale(diags, path.buf, "a new conflict on '%s'",
				json_string_value(json_object_get(cs, "stable_id")));
			goto done;
		}
	}
	/* What the fresh plan no longer holds must be visibly done, not lost. */
	json_array_foreach(acs, i, cs) {
		const char *key = json_string_value(json_object_get(cs, "idempotency_key"));

		if (pmbot_strmap_get(&used, key, NULL))
			continue;
		if (!have_idx) {
			if (pmbot_apply_index_build(&idx, state, config) < 0)
				goto done;
			have_idx = 1;
		}
		if (!pmbot_apply_is_applied(cs, state, &idx)) {
			pmbot_buf_clear(&path);
			if (pmbot_buf_printf(&path, "/changesets/%zu", i) < 0)
				goto done;
			err = stale(diags, path.buf,
				"approved %s is neither in the fresh plan nor applied", key);
			goto done;
		}
	}
	err = PMBOT_OK;
done:
	if (have_idx)
		pmbot_apply_index_free(&idx);
	pmbot_strmap_free(&keys);
	pmbot_strmap_free(&used);
	pmbot_buf_free(&path);
	return err;
}

int pmbot_apply_check_fresh(const json_t *approved, const char *text, size_t len,
	const json_t *fresh, const pmbot_state *state, const pmbot_config *config,
	pmbot_diag_list *diags)
{
	const char *hash = json_string_value(json_object_get(approved, "plan_hash"));
	json_t *whole = NULL;
	int err;

	if ((err = pmbot_apply_check_bundle(fresh, "fresh", diags)) != PMBOT_OK)
		return err;
	if (hash && !strcmp(hash, json_string_value(json_object_get(fresh, "plan_hash"))))
		return PMBOT_OK;
	if ((err = pmbot_bundle_parse(&whole, text, len, diags)) != PMBOT_OK)
		return err;
	if (!hash || strcmp(hash, json_string_value(json_object_get(whole, "plan_hash"))))
		err = stale(diags, "/plan_hash", "the approved plan's text is not the plan checked");
	else
		err = pmbot_apply_check(whole, fresh, state, config, diags);
	json_decref(whole);
	return err;
}

static int bad_fingerprint(pmbot_diag_list *diags, size_t i, const char *what)
{
	pmbot_diag_add(diags, PMBOT_SEV_ERROR, "BUNDLE_INVALID", NULL, "/fingerprint", 0, 0,
		"fingerprint entry %zu %s", i, what);
	return PMBOT_EINVALID;
}

int pmbot_apply_check_proposal(const json_t *bundle, const pmbot_state *state,
	const pmbot_config *config, pmbot_diag_list *diags)
{
	const json_t *fp = json_object_get(bundle, "fingerprint"), *e, *ref;
	pmbot_apply_index idx;
	json_t *touched = NULL;
	size_t i, j;
	int err, have_idx = 0;

	if ((err = pmbot_apply_check_bundle(bundle, "proposal", diags)) != PMBOT_OK)
		return err;
	if (!json_is_array(fp)) {
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "BUNDLE_INVALID", NULL, "/fingerprint", 0, 0,
			"the proposal has no fingerprint[]: its freshness cannot be proven");
		return PMBOT_EINVALID;
	}
	/* Every member is checked before it is read: the file is outside input. */
	json_array_foreach(fp, i, e) {
		const char *r = json_string_value(json_object_get(e, "ref"));
		const char *node = json_string_value(json_object_get(e, "node_id"));
		const char *at = json_string_value(json_object_get(e, "updated_at"));
		const pmbot_issue *is;

		if (!json_is_object(e) || !r || !node || !at)
			return bad_fingerprint(diags, i, "is not {ref, node_id, updated_at} (strings)");
		if (!(is = pmbot_state_issue(state, r)))
			return stale(diags, "/fingerprint", "%s no longer exists", r);
		if (!is->node_id || strcmp(is->node_id, node))
			return stale(diags, "/fingerprint", "%s is another issue now (node %s, was %s)", r,
				is->node_id ? is->node_id : "(none)", node);
		if (!is->updated_at || strcmp(is->updated_at, at))
			return stale(diags, "/fingerprint", "%s changed since the proposal was made "
				"(updated %s, then %s)", r, is->updated_at ? is->updated_at : "(never)", at);
	}
	/* What it touches now must be what was fingerprinted then: nothing slips past unseen. */
	err = PMBOT_ERROR;
	if (pmbot_apply_index_build(&idx, state, config) < 0)
		goto done;
	have_idx = 1;
	if (pmbot_apply_touched(&touched, json_object_get(bundle, "changesets"), state, &idx) < 0)
		goto done;
	json_array_foreach(touched, i, ref) {
		int seen = 0;

		json_array_foreach(fp, j, e)
			seen |= pmbot_apply_ieq(json_string_value(json_object_get(e, "ref")),
				json_string_value(ref));
		if (!seen) {
			err = stale(diags, "/fingerprint", "the proposal touches %s, which it did not "
				"fingerprint when it was made", json_string_value(ref));
			goto done;
		}
	}
	err = PMBOT_OK;
done:
	if (have_idx)
		pmbot_apply_index_free(&idx);
	json_decref(touched);
	return err;
}
