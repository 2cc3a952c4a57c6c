#include "apply_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/hash.h"
#include "pmbot/plan.h"
#include "pmbot/render.h"
#include "pmbot/text.h"
#include "pmbot/banned.h"

/*
 * A model's proposal (issue_adjustment_proposal) made into a ChangesetBundle
 * by pm-bot: the model chooses operations, targets and payloads; pm-bot
 * writes every marker, the before values a reviewer compares against, the
 * ids and keys, and the fingerprint. Then the bundle must pass the same
 * rules the executor enforces, so a proposal that could never apply is
 * refused while a human can still ask again.
 */

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

int pmbot_proposal_fingerprint(json_t **out, const json_t *changesets, const pmbot_state *state,
	const pmbot_config *config)
{
	pmbot_apply_index idx;
	json_t *refs = NULL, *fp = NULL, *r;
	size_t i;
	int err = PMBOT_ERROR;

	*out = NULL;
	if (pmbot_apply_index_build(&idx, state, config) < 0)
		return PMBOT_ERROR;
	if (pmbot_apply_touched(&refs, changesets, state, &idx) < 0 || !(fp = json_array()))
		goto done;
	json_array_foreach(refs, i, r) {
		const pmbot_issue *is = pmbot_state_issue(state, json_string_value(r));

		if (json_array_append_new(fp, json_pack("{s:O, s:s, s:s}", "ref", r, "node_id",
			is && is->node_id ? is->node_id : "", "updated_at",
			is && is->updated_at ? is->updated_at : "")) < 0)
			goto done;
	}
	*out = fp;
	fp = NULL;
	err = PMBOT_OK;
done:
	pmbot_apply_index_free(&idx);
	json_decref(refs);
	json_decref(fp);
	return err;
}

/* The length of the blank lines (spaces and tabs only) that open `s`. */
static size_t leading_blank_lines(const char *s, size_t len)
{
	size_t i = 0, end = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) {
		if (s[i] == '\n' || s[i] == '\r') {
			i += (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n') ? 2 : 1;
			end = i;
		} else {
			i++;
		}
	}
	return end;
}

/*
 * The model's text as pm-bot writes it: neutralised like report text (no
 * mention, cross-reference or link; docs/security.md), after pm-bot's
 * marker with the rev of exactly those bytes and a blank line, as
 * pmbot_render_issue() lays out every body: a model that keeps a form's
 * sections would otherwise have the marker read into the last one. Blank
 * lines that open the text go: after a leading marker the rev skips them,
 * and the rev must be of the bytes written.
 */
static json_t *marked_body(const char *text, size_t len, const char *sid)
{
	char rev[PMBOT_SHA256_HEX_SIZE];
	pmbot_buf t = PMBOT_BUF_INIT, b = PMBOT_BUF_INIT;
	json_t *j = NULL;
	const char *s;
	size_t skip;

	if (pmbot_text_neutralise(&t, text, len, PMBOT_TEXT_CODE_SPANS) < 0)
		goto done;
	skip = leading_blank_lines(t.buf, t.len);
	s = t.len ? t.buf + skip : "";
	if (pmbot_body_rev(rev, s, t.len - skip) == 0 &&
	    pmbot_buf_printf(&b, "<!-- pm-bot:id=%s rev=%s -->", sid, rev) == 0 &&
	    (t.len == skip || (pmbot_buf_puts(&b, "\n\n") == 0 &&
				pmbot_buf_put(&b, s, t.len - skip) == 0)))
		j = json_stringn(b.buf, b.len);
done:
	pmbot_buf_free(&t);
	pmbot_buf_free(&b);
	return j;
}

/* A title the model proposes, neutralised as report titles are. -1 when out of memory. */
static int neutral_title(json_t *payload)
{
	const json_t *t = json_object_get(payload, "title");
	pmbot_buf b = PMBOT_BUF_INIT;
	int rc = -1;

	if (!json_is_string(t))
		return 0;
	if (pmbot_text_neutralise(&b, json_string_value(t), json_string_length(t),
		PMBOT_TEXT_CODE_SPANS) == 0 &&
	    json_object_set_new(payload, "title", json_stringn(b.buf, b.len)) == 0)
		rc = 0;
	pmbot_buf_free(&b);
	return rc;
}

/* The item whose marker a body of `cs` must carry, or NULL when there is none to name. */
static char *body_owner(const json_t *cs, const pmbot_issue *current)
{
	const char *sid = str(json_object_get(cs, "target"), "stable_id");
	pmbot_body body;
	char *id = NULL;

	if (sid)
		return strdup(sid);
	if (!current || !current->body ||
	    pmbot_body_parse(&body, current->body, strlen(current->body), NULL) < 0)
		return NULL;
	if (body.marker == PMBOT_MARKER_OK)
		id = strdup(body.stable_id);
	pmbot_body_free(&body);
	return id;
}

/*
 * Replace the model's body by pm-bot's rendering of it. A marker in the
 * model's text is refused, never kept: only pm-bot writes markers.
 * PMBOT_OK, PMBOT_EINVALID (a diagnostic added) or PMBOT_ERROR.
 */
static int render_body(json_t *payload, const json_t *cs, const pmbot_issue *current, size_t i,
	pmbot_diag_list *diags)
{
	const json_t *text = json_object_get(payload, "body");
	pmbot_body body;
	char *sid = NULL;
	int rc = PMBOT_ERROR, marker;

	if (!json_is_string(text))
		return PMBOT_OK;
	if (pmbot_body_parse(&body, json_string_value(text), json_string_length(text), NULL) < 0)
		return PMBOT_ERROR;
	marker = body.marker;
	pmbot_body_free(&body);
	if (marker != PMBOT_MARKER_NONE) {
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "MARKER_INVALID", NULL, "", 0, 0,
			"changeset %zu (%s): the model's body carries a pm-bot marker line; markers are "
			"written only by pm-bot", i + 1, str(cs, "operation"));
		return PMBOT_EINVALID;
	}
	/* Nothing to mark: the rules refuse it below with the reason. */
	if (!(sid = body_owner(cs, current)))
		return PMBOT_OK;
	if (json_object_set_new(payload, "body", marked_body(json_string_value(text),
		json_string_length(text), sid)) == 0)
		rc = PMBOT_OK;
	free(sid);
	return rc;
}

/* What the changed things are now, for the reviewer's diff (plan.h's before/after). */
static int before_after(json_t *c, const pmbot_state *st, const pmbot_issue *is)
{
	const char *op = str(c, "operation");
	const json_t *payload = json_object_get(c, "payload");
	json_t *before = NULL, *after = NULL;
	pmbot_buf ref = PMBOT_BUF_INIT;
	int err = -1;

	if (!is || !op)
		return 0;
	if (!strcmp(op, "update_issue_title") || !strcmp(op, "update_issue_body")) {
		const char *key = !strcmp(op, "update_issue_title") ? "title" : "body";
		const char *now = !strcmp(key, "title") ? is->title : is->body;

		before = json_pack("{s:s}", key, now ? now : "");
		if (json_object_get(payload, key))
			after = json_pack("{s:O}", key, json_object_get(payload, key));
	} else if (!strcmp(op, "set_parent")) {
		before = is->parent ? json_pack("{s:s}", "parent", is->parent) :
			json_pack("{s:n}", "parent");
	} else if (!strcmp(op, "set_issue_type")) {
		before = is->issue_type ? json_pack("{s:s}", "issue_type", is->issue_type) :
			json_pack("{s:n}", "issue_type");
	} else if (!strcmp(op, "set_project_field")) {
		const pmbot_pitem *it;
		const json_t *v = NULL;

		if (pmbot_issue_ref(&ref, is->repo, is->number) < 0)
			goto done;
		it = pmbot_state_item(st, ref.buf);
		if (it && str(payload, "field"))
			v = json_object_get(it->values, str(payload, "field"));
		before = v ? json_pack("{s:O}", "value", v) : json_pack("{s:n}", "value");
	} else {
		err = 0;
		goto done;
	}
	if (!before)
		goto done;
	/* set_new takes the reference whatever it returns. */
	err = json_object_set_new(c, "before", before);
	before = NULL;
	if (!err && after)
		err = json_object_set_new(c, "after", after);
	after = NULL;
	err = err ? -1 : 0;
done:
	json_decref(before);
	json_decref(after);
	pmbot_buf_free(&ref);
	return err;
}

/*
 * Name a managed issue by its stable id, as plans do, whatever number the
 * model used: one item is then one item in the reviewer's Markdown, and its
 * key is the planner's. Other bindings stay as they are (the rules judge them).
 */
static int by_stable_id(json_t *parent, const char *key, const pmbot_state *st,
	const pmbot_apply_index *idx, const pmbot_config *cfg)
{
	json_t *b = json_object_get(parent, key);
	pmbot_buf sid = PMBOT_BUF_INIT, why = PMBOT_BUF_INIT;
	const pmbot_issue *is;
	int r, err = 0;

	if (!json_is_integer(json_object_get(b, "number")))
		return 0;
	r = pmbot_apply_managed(&sid, b, key, st, idx, cfg, &why);
	is = pmbot_state_issue_at(st, str(b, "repo"),
		(long)json_integer_value(json_object_get(b, "number")));
	if (r < 0)
		err = -1;
	else if (r == 1 && is)
		err = json_object_set_new(parent, key, json_pack("{s:s, s:s}", "repo", is->repo,
			"stable_id", sid.buf));
	pmbot_buf_free(&sid);
	pmbot_buf_free(&why);
	return err ? -1 : 0;
}

/* changeset_id, idempotency_key (plan.h's shape), requires_approval and status. */
static int identify(json_t *c, size_t i)
{
	const json_t *t = json_object_get(c, "target");
	const char *sid = str(t, "stable_id");
	char hash[PMBOT_SHA256_HEX_SIZE], id[32];
	pmbot_buf key = PMBOT_BUF_INIT;
	int err = -1;

	snprintf(id, sizeof(id), "cs-%04zu", i + 1);
	if (pmbot_sha256_json(hash, json_object_get(c, "payload")) < 0)
		goto done;
	if (sid ? pmbot_buf_printf(&key, "%s:%s:%s:%.12s", str(c, "operation"), str(t, "repo"), sid,
			hash) < 0
		: pmbot_buf_printf(&key, "%s:%s:#%lld:%.12s", str(c, "operation"), str(t, "repo"),
			(long long)json_integer_value(json_object_get(t, "number")), hash) < 0)
		goto done;
	if (json_object_set_new(c, "changeset_id", json_string(id)) < 0 ||
	    json_object_set_new(c, "idempotency_key", json_string(key.buf)) < 0 ||
	    json_object_set_new(c, "requires_approval", json_true()) < 0 ||
	    json_object_set_new(c, "status", json_string("proposed")) < 0)
		goto done;
	err = 0;
done:
	pmbot_buf_free(&key);
	return err;
}

int pmbot_proposal_bundle(json_t **out, const json_t *answer, const pmbot_state *state,
	const pmbot_config *config, const char *target, const json_t *source,
	pmbot_diag_list *diags)
{
	json_t *changesets = json_array(), *c = NULL, *fp = NULL, *b = NULL;
	const json_t *cs, *model = json_object_get(answer, "changesets");
	char hash[PMBOT_SHA256_HEX_SIZE], bid[32];
	pmbot_apply_index idx;
	size_t i;
	int rc = PMBOT_ERROR, have_idx = 0, r;

	*out = NULL;
	if (!changesets || !json_is_array(model) || !state || !config || !target)
		goto done;
	if (pmbot_apply_index_build(&idx, state, config) < 0)
		goto done;
	have_idx = 1;
	json_array_foreach(model, i, cs) {
		pmbot_apply_issue t;
		const pmbot_issue *current = NULL;
		const char *op = str(cs, "operation");

		if (!(c = json_deep_copy(cs)) || !op || !json_is_object(json_object_get(c, "payload")))
			goto done;
		if (by_stable_id(c, "target", state, &idx, config) < 0 ||
		    by_stable_id(json_object_get(c, "payload"), "parent", state, &idx, config) < 0 ||
		    by_stable_id(json_object_get(c, "payload"), "blocker", state, &idx, config) < 0)
			goto done;
		if (pmbot_apply_resolve(&t, json_object_get(c, "target"), state, &idx, NULL,
			NULL) == PMBOT_OK)
			current = pmbot_state_issue_at(state, t.repo, t.number);
		if (!strcmp(op, "create_issue") || !strcmp(op, "update_issue_body")) {
			r = render_body(json_object_get(c, "payload"), c, current, i, diags);
			if (r == PMBOT_ERROR)
				goto done;
			if (r == PMBOT_EINVALID)
				rc = PMBOT_EINVALID;
		}
		if ((!strcmp(op, "create_issue") || !strcmp(op, "update_issue_title")) &&
		    neutral_title(json_object_get(c, "payload")) < 0)
			goto done;
		if (before_after(c, state, current) < 0 || identify(c, i) < 0)
			goto done;
		r = json_array_append_new(changesets, c);
		c = NULL;
		if (r < 0)
			goto done;
	}
	if (rc == PMBOT_EINVALID)
		goto done;
	if ((r = pmbot_apply_rules_check(changesets, state, config, diags)) != PMBOT_OK) {
		rc = r;
		goto done;
	}
	if (pmbot_proposal_fingerprint(&fp, changesets, state, config) < 0 ||
	    pmbot_plan_hash(hash, changesets, fp) < 0)
		goto done;
	/* "proposal-" and the first 16 hex digits, like a plan's "bundle-". */
	snprintf(bid, sizeof(bid), "proposal-%.16s", hash);
	b = json_pack("{s:s, s:s, s:s, s:o, s:s, s:O, s:O, s:[], s:[], s:[], s:{s:I, s:I}}",
		"schema_version", "changeset_bundle/v1", "bundle_id", bid, "plan_hash", hash,
		"source", source ? json_incref((json_t *)source) : json_object(), "target", target, "changesets", changesets,
		"fingerprint", fp, "conflicts", "orphaned", "diagnostics", "summary",
		"total", (json_int_t)json_array_size(changesets), "diagnostics", (json_int_t)0);
	if (!b)
		goto done;
	/* What advise writes, apply must be able to load: held to the same loader. */
	if ((r = pmbot_bundle_check(b, diags)) != PMBOT_OK) {
		json_decref(b);
		rc = r;
		goto done;
	}
	*out = b;
	rc = PMBOT_OK;
done:
	if (have_idx)
		pmbot_apply_index_free(&idx);
	json_decref(c);
	json_decref(changesets);
	json_decref(fp);
	return rc;
}
