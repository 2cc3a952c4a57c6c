#include "apply_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/plan.h"
#include "pmbot/render.h"
#include "pmbot/banned.h"

/*
 * The planner's rules, checked again on every bundle at apply time. A plan
 * obeys them by construction; a bundle from anywhere else (a model's
 * proposal, a hand-edited file) is held to them here, before anything is
 * written, because the executor itself would do whatever a changeset says.
 */

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int broken(const char **code, const char *c, pmbot_buf *why, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int broken(const char **code, const char *c, pmbot_buf *why, const char *fmt, ...)
{
	va_list ap;

	*code = c;
	if (why) {
		pmbot_buf_clear(why);
		va_start(ap, fmt);
		pmbot_buf_vprintf(why, fmt, ap);
		va_end(ap);
	}
	return PMBOT_EINVALID;
}

int pmbot_apply_managed(pmbot_buf *sid, const json_t *binding, const char *role,
	const pmbot_state *st, const pmbot_apply_index *idx, const pmbot_config *cfg,
	pmbot_buf *why)
{
	const char *repo = str(binding, "repo");
	long n = (long)json_integer_value(json_object_get(binding, "number"));
	const pmbot_issue *is = repo ? pmbot_state_issue_at(st, repo, n) : NULL;
	const pmbot_apply_entry *e;
	pmbot_body body;
	int rc = 0;

	pmbot_buf_clear(why);
	if (!is) {
		pmbot_buf_printf(why, "the %s, issue %s#%ld, does not exist", role,
			repo ? repo : "(no repository)", n);
		return 0;
	}
	if (!is->author || !pmbot_apply_author_trusted(cfg, is->author, is->author_is_bot)) {
		pmbot_buf_printf(why, "the %s, %s#%ld, was written by '%s', not by pm-bot: "
			"issues people wrote are never changed", role, is->repo, is->number,
			is->author ? is->author : "(unknown)");
		return 0;
	}
	if (pmbot_body_parse(&body, is->body ? is->body : "", is->body ? strlen(is->body) : 0,
		NULL) < 0)
		return PMBOT_ERROR;
	if (body.marker != PMBOT_MARKER_OK)
		pmbot_buf_printf(why, "the %s, %s#%ld, carries no well-formed pm-bot marker: "
			"pm-bot does not manage it", role, is->repo, is->number);
	else if (!(e = pmbot_apply_index_find(idx, is->repo, body.stable_id)) || e->count != 1 ||
		 e->number != is->number)
		pmbot_buf_printf(why, "the %s, %s#%ld, carries a marker another trusted issue "
			"also carries: pm-bot leaves both alone", role, is->repo, is->number);
	else
		rc = pmbot_buf_puts(sid, body.stable_id) < 0 ? PMBOT_ERROR : 1;
	pmbot_body_free(&body);
	return rc;
}

/*
 * Does `text` carry exactly the marker pm-bot renders for `sid`: one
 * well-formed marker line naming `sid`, whose rev is the text's own? So a
 * write can neither remove a marker, nor forge another item's, nor hide a
 * human-looking edit behind a stale rev.
 */
static int marker_rule(const char **code, const json_t *text, const char *sid, const char *what,
	pmbot_buf *why)
{
	char rev[PMBOT_SHA256_HEX_SIZE];
	const char *s = json_string_value(text);
	size_t len = json_string_length(text);
	pmbot_body body;
	int rc = PMBOT_OK;

	if (!s)
		return PMBOT_OK; /* no body at all: the executor's BAD_PAYLOAD */
	if (pmbot_body_parse(&body, s, len, NULL) < 0 || pmbot_body_rev(rev, s, len) < 0) {
		pmbot_body_free(&body);
		return PMBOT_ERROR;
	}
	switch (body.marker) {
	case PMBOT_MARKER_NONE:
		rc = broken(code, "MARKER_INVALID", why, "%s has no pm-bot marker: it would leave "
			"'%s' unmanaged; markers are written only by pm-bot's rendering", what, sid);
		break;
	case PMBOT_MARKER_MALFORMED:
	case PMBOT_MARKER_MULTIPLE:
		rc = broken(code, "MARKER_INVALID", why, "%s has %s pm-bot marker: only pm-bot's "
			"own rendering, one marker for '%s', may be written", what,
			body.marker == PMBOT_MARKER_MULTIPLE ? "more than one" : "a malformed", sid);
		break;
	case PMBOT_MARKER_OK:
		if (strcmp(body.stable_id, sid))
			rc = broken(code, "MARKER_INVALID", why, "%s carries the marker of '%s', not "
				"of '%s': a marker is never moved to another issue", what,
				body.stable_id, sid);
		else if (strcmp(body.rev, rev))
			rc = broken(code, "MARKER_INVALID", why, "%s carries a marker whose rev is not "
				"the body's own: it is not pm-bot's rendering", what);
		break;
	}
	pmbot_body_free(&body);
	return rc;
}

/*
 * A person edited the body pm-bot wrote: the planner's conflict, never
 * overwritten. A new body with the same text (only the marker's rev moves)
 * adopts their edit and overwrites nothing.
 */
static int conflict_rule(const char **code, const pmbot_issue *is, const json_t *new_body,
	pmbot_buf *why)
{
	char rev[PMBOT_SHA256_HEX_SIZE], next[PMBOT_SHA256_HEX_SIZE] = "";
	pmbot_body body;
	int rc = PMBOT_OK;

	if (!is || !is->body)
		return PMBOT_OK;
	if (pmbot_body_parse(&body, is->body, strlen(is->body), NULL) < 0 ||
	    pmbot_body_rev(rev, is->body, strlen(is->body)) < 0 ||
	    (json_is_string(new_body) && pmbot_body_rev(next, json_string_value(new_body),
		json_string_length(new_body)) < 0)) {
		pmbot_body_free(&body);
		return PMBOT_ERROR;
	}
	if (body.marker == PMBOT_MARKER_OK && strcmp(body.rev, rev) && strcmp(next, rev))
		rc = broken(code, "BODY_EDITED", why, "someone edited the body of %s#%ld since "
			"pm-bot wrote it (rev %.12s, now %.12s): a conflict, never overwritten",
			is->repo, is->number, body.rev, rev);
	pmbot_body_free(&body);
	return rc;
}

int pmbot_apply_rule(const char **code, const json_t *cs, const pmbot_state *st,
	const pmbot_apply_index *idx, const pmbot_config *cfg, pmbot_buf *why)
{
	const json_t *target = json_object_get(cs, "target");
	const json_t *payload = json_object_get(cs, "payload");
	const json_t *parent = json_object_get(payload, "parent"), *l;
	const pmbot_issue *current = NULL;
	pmbot_buf sid = PMBOT_BUF_INIT, what = PMBOT_BUF_INIT;
	pmbot_operation op;
	size_t i;
	int rc = PMBOT_OK, m;

	*code = NULL;
	if (pmbot_operation_parse(&op, str(cs, "operation")) != PMBOT_OK)
		return PMBOT_OK;
	if (op == PMBOT_OP_CREATE_ISSUE) {
		if (!str(target, "stable_id")) {
			rc = broken(code, "MARKER_INVALID", why, "create_issue needs target.stable_id: "
				"pm-bot creates only issues that carry its own marker");
			goto done;
		}
		rc = pmbot_buf_printf(&what, "the new issue's body (%s)", str(target, "stable_id")) < 0 ?
			PMBOT_ERROR : marker_rule(code, json_object_get(payload, "body"),
				str(target, "stable_id"), what.buf, why);
		goto done;
	}
	if (json_is_integer(json_object_get(target, "number"))) {
		if ((m = pmbot_apply_managed(&sid, target, "target", st, idx, cfg, why)) <= 0) {
			rc = m < 0 ? PMBOT_ERROR : broken(code, "ISSUE_NOT_MANAGED", NULL, "%s", "");
			goto done;
		}
		current = pmbot_state_issue_at(st, str(target, "repo"),
			(long)json_integer_value(json_object_get(target, "number")));
	} else if (str(target, "stable_id") && str(target, "repo")) {
		const pmbot_apply_entry *e = pmbot_apply_index_find(idx, str(target, "repo"),
			str(target, "stable_id"));

		/* A stable id only ever resolves to a managed issue; none yet is the executor's to say. */
		if (pmbot_buf_puts(&sid, str(target, "stable_id")) < 0) {
			rc = PMBOT_ERROR;
			goto done;
		}
		if (e && e->count == 1)
			current = pmbot_state_issue_at(st, e->repo, e->number);
	} else {
		goto done; /* the executor's BAD_BINDING */
	}
	/* GitHub adds a sub-issue through its parent: the parent is written too. */
	if (op == PMBOT_OP_SET_PARENT && json_is_integer(json_object_get(parent, "number"))) {
		pmbot_buf psid = PMBOT_BUF_INIT;

		m = pmbot_apply_managed(&psid, parent, "parent", st, idx, cfg, why);
		pmbot_buf_free(&psid);
		if (m <= 0) {
			rc = m < 0 ? PMBOT_ERROR : broken(code, "ISSUE_NOT_MANAGED", NULL, "%s", "");
			goto done;
		}
	}
	switch (op) {
	case PMBOT_OP_REMOVE_LABELS:
		json_array_foreach(json_object_get(payload, "labels"), i, l) {
			if (json_is_string(l) && !pmbot_plan_label_owned(&cfg->labels, json_string_value(l))) {
				rc = broken(code, "LABEL_NOT_OWNED", why, "'%s' is not a label of pm-bot's "
					"scheme (%s, %s, %s, %s, %s, needs-human): labels people set are "
					"never removed", json_string_value(l), cfg->labels.type,
					cfg->labels.area, cfg->labels.prio, cfg->labels.size,
					cfg->labels.status);
				goto done;
			}
		}
		break;
	case PMBOT_OP_UPDATE_ISSUE_BODY:
		if ((rc = conflict_rule(code, current, json_object_get(payload, "body"), why)) !=
		    PMBOT_OK)
			goto done;
		rc = pmbot_buf_printf(&what, "the new body of '%s'", sid.buf) < 0 ? PMBOT_ERROR :
			marker_rule(code, json_object_get(payload, "body"), sid.buf, what.buf, why);
		break;
	default:
		break;
	}
done:
	if (rc == PMBOT_ERROR && why) {
		pmbot_buf_clear(why);
		pmbot_buf_puts(why, "out of memory");
		*code = "INTERNAL";
	}
	pmbot_buf_free(&sid);
	pmbot_buf_free(&what);
	return rc;
}

int pmbot_apply_rules_check(const json_t *changesets, const pmbot_state *state,
	const pmbot_config *config, pmbot_diag_list *diags)
{
	pmbot_apply_index idx;
	pmbot_buf why = PMBOT_BUF_INIT, path = PMBOT_BUF_INIT;
	const json_t *cs;
	const char *code;
	size_t i;
	int rc = PMBOT_OK, r;

	if (!json_is_array(changesets) || !state || !config)
		return PMBOT_ERROR;
	if (pmbot_apply_index_build(&idx, state, config) < 0)
		return PMBOT_ERROR;
	json_array_foreach(changesets, i, cs) {
		r = pmbot_apply_rule(&code, cs, state, &idx, config, &why);
		if (r == PMBOT_ERROR) {
			rc = PMBOT_ERROR;
			break;
		}
		if (r == PMBOT_OK)
			continue;
		pmbot_buf_clear(&path);
		if (pmbot_buf_printf(&path, "/changesets/%zu", i) < 0 ||
		    pmbot_diag_add(diags, PMBOT_SEV_ERROR, code, NULL, path.buf, 0, 0, "%s: %s",
			    str(cs, "operation"), why.buf) < 0) {
			rc = PMBOT_ERROR;
			break;
		}
		rc = PMBOT_EINVALID;
	}
	pmbot_apply_index_free(&idx);
	pmbot_buf_free(&why);
	pmbot_buf_free(&path);
	return rc;
}

/* Add the issue `binding` names, when it exists, to the set `refs`. */
static int touch(json_t *refs, const json_t *binding, const pmbot_state *st,
	const pmbot_apply_index *idx)
{
	pmbot_apply_issue is;
	pmbot_buf ref = PMBOT_BUF_INIT;
	int err = 0;

	if (!binding || pmbot_apply_resolve(&is, binding, st, idx, NULL, NULL) != PMBOT_OK)
		return 0;
	if (pmbot_issue_ref(&ref, is.repo, is.number) < 0 ||
	    json_object_set_new(refs, ref.buf, json_null()) < 0)
		err = PMBOT_ERROR;
	pmbot_buf_free(&ref);
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int pmbot_apply_touched(json_t **out, const json_t *changesets, const pmbot_state *state,
	const pmbot_apply_index *idx)
{
	json_t *set = json_object(), *arr = json_array(), *v;
	const char **keys = NULL, *k;
	const json_t *cs;
	size_t i, n = 0;
	int err = PMBOT_ERROR;

	*out = NULL;
	if (!set || !arr)
		goto done;
	json_array_foreach(changesets, i, cs) {
		const json_t *payload = json_object_get(cs, "payload");

		if (touch(set, json_object_get(cs, "target"), state, idx) < 0 ||
		    touch(set, json_object_get(payload, "parent"), state, idx) < 0 ||
		    touch(set, json_object_get(payload, "blocker"), state, idx) < 0)
			goto done;
	}
	if (json_object_size(set) && !(keys = malloc(json_object_size(set) * sizeof(*keys))))
		goto done;
	json_object_foreach(set, k, v)
		keys[n++] = k;
	if (n)
		qsort(keys, n, sizeof(*keys), cmp_str);
	for (i = 0; i < n; i++)
		if (json_array_append_new(arr, json_string(keys[i])) < 0)
			goto done;
	*out = arr;
	arr = NULL;
	err = PMBOT_OK;
done:
	free(keys);
	json_decref(set);
	json_decref(arr);
	return err;
}
