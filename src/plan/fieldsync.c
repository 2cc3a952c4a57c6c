#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmbot/plan.h"
#include "pmbot/render.h"

#include "plan_int.h"
#include "pmbot/banned.h"

/*
 * The field sync reads what pm-bot (or a person) already put on each
 * managed issue and mirrors it onto the board. It shares the planner's
 * accumulator and value rules (plan_int.h), so that an item the planner
 * just created and the sync reading it back agree on every value: a plan
 * followed by a field sync changes nothing.
 */

enum value_kind { V_TEXT, V_HOURS };

/* Label prefix slots of pmbot_label_scheme, or -1 for none. */
enum { L_NONE = -1, L_AREA, L_PRIO, L_SIZE, L_STATUS };

static const struct {
	const char *field;        /* board field and canonical heading */
	pmbot_field_kind kind;    /* what form headings map to it */
	int label;                /* L_* */
	enum value_kind value;
} synced[] = {
	{ "Area", PMBOT_FIELD_AREA, L_AREA, V_TEXT },
	{ "Priority", PMBOT_FIELD_PRIORITY, L_PRIO, V_TEXT },
	{ "Size", PMBOT_FIELD_SIZE, L_SIZE, V_TEXT },
	{ "Estimate (hrs)", PMBOT_FIELD_ESTIMATE, L_NONE, V_HOURS },
	{ "Risk", PMBOT_FIELD_RISK, L_NONE, V_TEXT },
	{ "Blocked by", PMBOT_FIELD_BLOCKED_BY, L_NONE, V_TEXT },
	{ "Actual (hrs)", PMBOT_FIELD_ACTUAL, L_NONE, V_HOURS },
	{ "Status", PMBOT_FIELD_STATUS, L_STATUS, V_TEXT },
};

#define N_SYNCED (sizeof(synced) / sizeof(synced[0]))

struct managed {
	const pmbot_issue *issue;
	const char *repo;   /* borrowed: the caller's spelling, for targets */
	char *ref;          /* owned */
	char *key;          /* owned: lower-case repo, '\n', stable_id */
	pmbot_body body;    /* owned */
	int ambiguous;
};

struct syncer {
	const pmbot_fieldsync_input *in;
	const pmbot_state *st;
	const char *const *repos;   /* in->repos, or config->repos */
	size_t n_repos;
	pmbot_plan_acc acc;
	struct managed *ms;
	size_t n_ms;
	pmbot_strmap by_key;        /* key -> struct managed* (first claim) */
	const pmbot_pfield *fields[N_SYNCED]; /* NULL: not on the board, or of the wrong type */
	pmbot_buf msg;
	pmbot_buf show[2];          /* pmbot_diag_show() of two values in one message */
};

static int issue_diag(struct syncer *s, const char *ref, int line, pmbot_severity sev,
	const char *code, const char *msg)
{
	if (sev == PMBOT_SEV_ERROR)
		s->acc.errors++;
	return pmbot_diag_add(s->acc.diags, sev, code, ref, "", line, 0, "%s", msg);
}

static const char *field_type_name(pmbot_pfield_type t)
{
	switch (t) {
	case PMBOT_PFIELD_TEXT:
		return "text";
	case PMBOT_PFIELD_NUMBER:
		return "number";
	case PMBOT_PFIELD_SINGLE_SELECT:
		return "single select";
	case PMBOT_PFIELD_DATE:
		return "date";
	}
	return "unknown";
}

/* The board fields to write, with one FIELDSYNC_FIELD_TYPE per field that cannot take its value. */
static int resolve_fields(struct syncer *s)
{
	size_t i;

	for (i = 0; i < N_SYNCED; i++) {
		const pmbot_pfield *f = pmbot_state_field(s->st, synced[i].field);
		int ok;

		if (!f)
			continue;
		ok = synced[i].value == V_HOURS ? f->type == PMBOT_PFIELD_NUMBER
			: f->type == PMBOT_PFIELD_TEXT || f->type == PMBOT_PFIELD_SINGLE_SELECT;
		if (ok) {
			s->fields[i] = f;
			continue;
		}
		if (pmbot_diag_add(s->acc.diags, PMBOT_SEV_WARNING, "FIELDSYNC_FIELD_TYPE", NULL, "", 0, 0,
			"the project field '%s' is a %s field, but the field sync writes %s: it is left "
			"alone", f->name, field_type_name(f->type),
			synced[i].value == V_HOURS ? "hours into number fields"
				: "text into text and single select fields") < 0)
			return -1;
	}
	return 0;
}

/* The caller's spelling of `repo` when it is synced, else NULL. */
static const char *synced_repo(const struct syncer *s, const char *repo)
{
	size_t i;

	for (i = 0; i < s->n_repos; i++)
		if (!strcasecmp(s->repos[i], repo))
			return s->repos[i];
	return NULL;
}

static int check_repos(struct syncer *s)
{
	size_t i, j;

	for (i = 0; i < s->n_repos; i++) {
		int seen = 0;

		for (j = 0; j < i; j++)
			seen |= !strcasecmp(s->repos[i], s->repos[j]);
		if (seen || pmbot_config_repo_allowed(s->in->config, s->repos[i]))
			continue;
		s->acc.errors++;
		if (pmbot_diag_add(s->acc.diags, PMBOT_SEV_ERROR, "REPO_NOT_ALLOWED", NULL, "", 0, 0,
			"%s is not in the configuration's repos allowlist: its issues are not synced",
			s->repos[i]) < 0)
			return -1;
	}
	return 0;
}

/* 1: the configured board is in the state; 0: it is not (NO_PROJECT added); -1. */
static int check_project(struct syncer *s)
{
	const pmbot_config *cfg = s->in->config;
	const pmbot_project *pj = s->st ? s->st->project : NULL;

	if (cfg->project_owner && pj && !strcasecmp(cfg->project_owner, pj->owner) &&
	    cfg->project_number == pj->number)
		return 1;
	s->acc.errors++;
	if (!cfg->project_owner)
		return pmbot_diag_add(s->acc.diags, PMBOT_SEV_ERROR, "NO_PROJECT", NULL, "", 0, 0,
			"the configuration names no project (project.owner, project.number): "
			"there is no board to sync") < 0 ? -1 : 0;
	return pmbot_diag_add(s->acc.diags, PMBOT_SEV_ERROR, "NO_PROJECT", NULL, "", 0, 0,
		"project %s/%ld is not in the state: nothing is synced", cfg->project_owner,
		cfg->project_number) < 0 ? -1 : 0;
}

char *pmbot_plan_issue_key(const char *repo, const char *stable_id)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	char *key = NULL;
	size_t i;

	for (i = 0; repo[i]; i++)
		if (pmbot_buf_putc(&b, (char)tolower((unsigned char)repo[i])) < 0)
			goto done;
	if (pmbot_buf_putc(&b, '\n') < 0 || pmbot_buf_puts(&b, stable_id) < 0)
		goto done;
	key = pmbot_buf_detach(&b, NULL);
done:
	pmbot_buf_free(&b);
	return key;
}

/* Trusted markers of the synced repositories, as the planner indexes its target's. */
static int index_managed(struct syncer *s)
{
	const pmbot_state *st = s->st;
	pmbot_buf ref = PMBOT_BUF_INIT;
	pmbot_body body;
	size_t i;
	int err = -1;

	memset(&body, 0, sizeof(body));
	if (!(s->ms = calloc(st->n_issues ? st->n_issues : 1, sizeof(*s->ms))))
		return -1;
	for (i = 0; i < st->n_issues; i++) {
		const pmbot_issue *is = &st->issues[i];
		const char *repo = synced_repo(s, is->repo);
		struct managed *m;
		void *prev = NULL;

		if (!repo || !pmbot_config_repo_allowed(s->in->config, repo))
			continue;
		if (pmbot_body_parse(&body, is->body, strlen(is->body), NULL) < 0)
			goto done;
		if (body.marker != PMBOT_MARKER_OK) {
			pmbot_body_free(&body);
			continue;
		}
		pmbot_buf_clear(&ref);
		if (pmbot_issue_ref(&ref, is->repo, is->number) < 0)
			goto done;
		if (!pmbot_plan_author_trusted(s->in->config, s->in->self_login, is)) {
			if (pmbot_plan_diag_untrusted(&s->acc, ref.buf, body.stable_id, is->author) < 0)
				goto done;
			pmbot_body_free(&body);
			continue;
		}
		m = &s->ms[s->n_ms];
		m->issue = is;
		m->repo = repo;
		m->ref = pmbot_buf_detach(&ref, NULL);
		m->key = pmbot_plan_issue_key(is->repo, body.stable_id);
		m->body = body;
		memset(&body, 0, sizeof(body));
		s->n_ms++;
		if (!m->ref || !m->key)
			goto done;
		switch (pmbot_strmap_put(&s->by_key, m->key, m, &prev)) {
		case -1:
			goto done;
		case 1: {
			struct managed *first = prev;

			m->ambiguous = 1;
			if (!first->ambiguous) {
				first->ambiguous = 1;
				if (pmbot_plan_diag_duplicate(&s->acc, m->body.stable_id, first->ref,
					m->ref) < 0)
					goto done;
			}
			break;
		}
		}
	}
	err = 0;
done:
	pmbot_body_free(&body);
	pmbot_buf_free(&ref);
	return err;
}

static int has_label(const pmbot_issue *is, const char *label)
{
	size_t i;

	for (i = 0; i < is->n_labels; i++)
		if (!strcasecmp(is->labels[i], label))
			return 1;
	return 0;
}

/*
 * The value of field `i` from the labels: `*value` borrowed from the label
 * (NULL: no label), `*label` the label itself. PMBOT_EINVALID after a
 * FIELDSYNC_LABEL_CONFLICT warning.
 */
static int label_value(struct syncer *s, const struct managed *m, size_t i, const char **value,
	const char **label)
{
	const pmbot_label_scheme *sc = &s->in->config->labels;
	const char *prefixes[4] = { sc->area, sc->prio, sc->size, sc->status };
	const char *prefix;
	size_t k, plen;

	*value = NULL;
	*label = NULL;
	if (synced[i].label == L_NONE)
		return 0;
	prefix = prefixes[synced[i].label];
	if (!prefix || !*prefix)
		return 0;
	plen = strlen(prefix);
	for (k = 0; k < m->issue->n_labels; k++) {
		const char *l = m->issue->labels[k];

		if (strncasecmp(l, prefix, plen) || !l[plen])
			continue;
		if (!*value) {
			*value = l + plen;
			*label = l;
			continue;
		}
		if (strcasecmp(*value, l + plen)) {
			pmbot_buf_clear(&s->msg);
			pmbot_buf_printf(&s->msg, "%s has the labels '%s' and '%s': its '%s' is left "
				"alone until one of them is removed", m->ref,
				pmbot_diag_show(&s->show[0], *label, 100),
				pmbot_diag_show(&s->show[1], l, 100), synced[i].field);
			*value = NULL;
			return issue_diag(s, m->ref, 0, PMBOT_SEV_WARNING, "FIELDSYNC_LABEL_CONFLICT",
				s->msg.buf) < 0 ? PMBOT_ERROR : PMBOT_EINVALID;
		}
	}
	return 0;
}

/* The first body heading that names field `i` (borrowed), or NULL. */
static const pmbot_body_field *heading_of(const struct managed *m, size_t i)
{
	size_t k;

	for (k = 0; k < m->body.n_fields; k++) {
		const pmbot_body_field *bf = &m->body.fields[k];

		if (pmbot_form_heading_kind(bf->heading) == synced[i].kind ||
		    pmbot_body_heading_eq(bf->heading, synced[i].field))
			return bf;
	}
	return NULL;
}

/* Plan field `i` of `m`; `have` is the item's value (NULL: unset or no item). */
static int sync_field(struct syncer *s, const struct managed *m, const pmbot_pitem *item,
	size_t i)
{
	const pmbot_pfield *f = s->fields[i];
	const pmbot_body_field *bf = NULL;
	const char *v = NULL, *label = NULL;
	json_t *want = NULL, *value = NULL, *have;
	int line = 0, rc, err = -1;
	double hours;

	if (!f)
		return 0;
	rc = label_value(s, m, i, &v, &label);
	if (rc == PMBOT_EINVALID)
		return 0;
	if (rc < 0)
		return -1;
	if (!v && (bf = heading_of(m, i)) != NULL) {
		v = bf->value;
		line = bf->line;
	}
	if (!v || !*v)
		return 0; /* nothing known never clears a field */
	/* Triage defaults are for people to fill in, not values to sync (as the planner). */
	if (has_label(m->issue, PMBOT_LABEL_NEEDS_HUMAN) &&
	    ((synced[i].kind == PMBOT_FIELD_AREA && !strcmp(v, "triage")) ||
	     (synced[i].kind == PMBOT_FIELD_PRIORITY && !strcmp(v, "Triage"))))
		return 0;
	if (synced[i].value == V_HOURS) {
		if (pmbot_body_parse_hours(&hours, v) < 0) {
			pmbot_buf_clear(&s->msg);
			pmbot_buf_printf(&s->msg, "%s: '%s' under '### %s' is not a number of hours "
				"(e.g. 4, 4.5, 4 hrs): '%s' is left alone", m->ref,
				pmbot_diag_show(&s->show[0], v, 100),
				pmbot_diag_show(&s->show[1], bf->heading, 100), f->name);
			return issue_diag(s, m->ref, line, PMBOT_SEV_WARNING, "FIELDSYNC_BAD_NUMBER",
				s->msg.buf) < 0 ? -1 : 0;
		}
		want = json_real(hours);
	} else {
		want = json_string(v);
	}
	if (!want)
		goto done;
	rc = pmbot_plan_field_value(&value, f, want, &s->msg);
	if (rc == PMBOT_ENOTFOUND) {
		if (label)
			pmbot_buf_printf(&s->msg, " (from %s's label '%s')", m->ref,
				pmbot_diag_show(&s->show[0], label, 100));
		else
			pmbot_buf_printf(&s->msg, " (from %s's '### %s' heading)", m->ref,
				pmbot_diag_show(&s->show[0], bf->heading, 100));
		err = issue_diag(s, m->ref, line, PMBOT_SEV_ERROR, "PROJECT_UNKNOWN_OPTION",
			s->msg.buf) < 0 ? -1 : 0;
		goto done;
	}
	if (rc < 0)
		goto done;
	have = item ? json_object_get(item->values, f->name) : NULL;
	if (!value || pmbot_plan_field_same(have, value)) {
		err = 0;
		goto done;
	}
	err = pmbot_plan_acc_add(&s->acc, "set_project_field",
		json_pack("{s:s, s:s}", "repo", m->repo, "stable_id", m->body.stable_id),
		json_pack("{s:s, s:O}", "field", f->name, "value", value),
		have ? json_pack("{s:O}", "value", have) : json_pack("{s:n}", "value"), NULL);
done:
	json_decref(want);
	json_decref(value);
	return err;
}

static int sync_issue(struct syncer *s, const struct managed *m)
{
	const pmbot_project *pj = s->st->project;
	const pmbot_pitem *item = pmbot_state_item(s->st, m->ref);
	size_t before = s->acc.n_cs, i;

	if (!item) {
		pmbot_buf_clear(&s->msg);
		if (pmbot_buf_printf(&s->msg, "%s/%ld", pj->owner, pj->number) < 0 ||
		    pmbot_plan_acc_add(&s->acc, "add_to_project",
			json_pack("{s:s, s:s}", "repo", m->repo, "stable_id", m->body.stable_id),
			json_pack("{s:s}", "project", s->msg.buf), NULL, NULL) < 0)
			return -1;
		/* Without an item no field can be set: the denial says it all. */
		if (pmbot_config_operation_denied(s->in->config, PMBOT_OP_ADD_TO_PROJECT))
			return 0;
	}
	for (i = 0; i < N_SYNCED; i++)
		if (sync_field(s, m, item, i) < 0)
			return -1;
	/* An issue a changeset writes is part of the fingerprint. */
	if (s->acc.n_cs > before && pmbot_plan_acc_touch(&s->acc, m->ref) < 0)
		return -1;
	return 0;
}

int pmbot_fieldsync_build(json_t **out, const pmbot_fieldsync_input *in, pmbot_diag_list *diags)
{
	struct syncer s;
	json_t *conflicts = NULL, *orphaned = NULL;
	size_t i;
	int rc = PMBOT_ERROR, project;

	if (out)
		*out = NULL;
	memset(&s, 0, sizeof(s));
	pmbot_buf_init(&s.msg, 0);
	pmbot_buf_init(&s.show[0], 0);
	pmbot_buf_init(&s.show[1], 0);
	if (!out || !in || !in->config || !diags)
		goto done;
	s.in = in;
	s.st = in->state;
	s.repos = in->n_repos ? in->repos : (const char *const *)in->config->repos.items;
	s.n_repos = in->n_repos ? in->n_repos : in->config->repos.count;
	if (!s.n_repos || !s.repos)
		goto done;
	pmbot_plan_acc_init(&s.acc, in->config, in->state, diags);
	/* The sync never conflicts or orphans: a body is only read, never written. */
	if (!(conflicts = json_array()) || !(orphaned = json_array()))
		goto done;
	if (check_repos(&s) < 0 || (project = check_project(&s)) < 0)
		goto done;
	if (project) {
		if (resolve_fields(&s) < 0 || index_managed(&s) < 0)
			goto done;
		for (i = 0; i < s.n_ms; i++)
			if (!s.ms[i].ambiguous && sync_issue(&s, &s.ms[i]) < 0)
				goto done;
	}
	if (pmbot_plan_acc_denied_diags(&s.acc) < 0 ||
	    pmbot_plan_acc_finish(out, NULL, &s.acc, in->source, s.repos[0], conflicts,
		orphaned) < 0)
		goto done;
	rc = s.acc.errors ? PMBOT_EINVALID : PMBOT_OK;
done:
	pmbot_plan_acc_free(&s.acc);
	for (i = 0; i < s.n_ms; i++) {
		free(s.ms[i].ref);
		free(s.ms[i].key);
		pmbot_body_free(&s.ms[i].body);
	}
	free(s.ms);
	pmbot_strmap_free(&s.by_key);
	pmbot_buf_free(&s.msg);
	pmbot_buf_free(&s.show[0]);
	pmbot_buf_free(&s.show[1]);
	json_decref(conflicts);
	json_decref(orphaned);
	return rc;
}

/* The key of a changeset's {repo, stable_id} target, or NULL when it has none. */
static char *target_key(const json_t *cs)
{
	const json_t *t = json_object_get(cs, "target");
	const char *repo = json_string_value(json_object_get(t, "repo"));
	const char *sid = json_string_value(json_object_get(t, "stable_id"));

	return repo && sid ? pmbot_plan_issue_key(repo, sid) : NULL;
}

int pmbot_fieldsync_auto_approved(json_t **out, const json_t *bundle, const pmbot_config *config)
{
	const json_t *all = json_object_get(bundle, "changesets"), *cs;
	json_t *ids = NULL, *waiting = NULL;
	pmbot_operation op;
	char *key = NULL;
	size_t i;
	int err = PMBOT_ERROR, pass;

	*out = NULL;
	if (!(ids = json_array()) || !(waiting = json_object()))
		goto done;
	/*
	 * Pass 0 finds the issues whose add_to_project waits for a person; pass
	 * 1 leaves their field values waiting with it, since a value cannot
	 * land on a board the issue is not on yet.
	 */
	for (pass = 0; pass < 2; pass++) {
		json_array_foreach(all, i, cs) {
			int pre;

			if (pmbot_operation_parse(&op, json_string_value(json_object_get(cs,
					"operation"))) != PMBOT_OK)
				continue;
			pre = pmbot_config_operation_auto_approved(config, op);
			free(key);
			key = NULL;
			if (pass == 0) {
				if (op == PMBOT_OP_ADD_TO_PROJECT && !pre && (key = target_key(cs)) &&
				    json_object_set_new(waiting, key, json_true()) < 0)
					goto done;
				continue;
			}
			if (!pre || (op == PMBOT_OP_SET_PROJECT_FIELD &&
				     (key = target_key(cs)) && json_object_get(waiting, key)))
				continue;
			if (json_array_append(ids, json_object_get(cs, "changeset_id")) < 0)
				goto done;
		}
	}
	*out = ids;
	ids = NULL;
	err = PMBOT_OK;
done:
	free(key);
	json_decref(ids);
	json_decref(waiting);
	return err;
}
