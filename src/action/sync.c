#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_int.h"
#include "pmbot/plan.h"
#include "pmbot/source.h"
#include "pmbot/banned.h"

/* Everything one field-sync plan needs, read fresh from the default branch and GitHub. */
struct sync {
	pmbot_config *config;
	pmbot_backend *backend;
	pmbot_state *state;
	pmbot_diag_list diags;
	json_t *bundle;
};

static void sync_free(struct sync *y)
{
	json_decref(y->bundle);
	pmbot_state_free(y->state);
	if (y->backend)
		y->backend->free(y->backend);
	pmbot_config_free(y->config);
	pmbot_diag_list_free(&y->diags);
	memset(y, 0, sizeof(*y));
}

/* (Re-)read the state and build the plan; the config and backend are kept. EXIT_*. */
static int sync_plan(struct pmbot_action *a, struct sync *y)
{
	pmbot_fieldsync_input fi;
	pmbot_buf err = PMBOT_BUF_INIT;
	json_t *source;
	int r;

	json_decref(y->bundle);
	y->bundle = NULL;
	pmbot_state_free(y->state);
	y->state = NULL;
	pmbot_diag_list_free(&y->diags);
	r = y->backend->read(&y->state, y->backend, (const char *const *)y->config->repos.items,
		y->config->repos.count, y->config->project_owner, y->config->project_number, &err);
	if (r < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot read the state: %s",
			(err.len ? err.buf : "unknown error"));
		pmbot_buf_free(&err);
		return RC_RUNTIME;
	}
	pmbot_buf_free(&err);
	if (!(source = json_pack("{s:s}", "commit", a->default_rev)))
		return RC_RUNTIME;
	memset(&fi, 0, sizeof(fi));
	fi.config = y->config;
	fi.state = y->state;
	fi.source = source;
	fi.self_login = a->self_login;
	r = pmbot_fieldsync_build(&y->bundle, &fi, &y->diags);
	json_decref(source);
	pmbot_note_diags(a->notes, &y->diags);
	if (r == PMBOT_ERROR)
		return RC_RUNTIME;
	pmbot_action__set_outputs(a, y->bundle);
	return r == PMBOT_EINVALID ? RC_INVALID : RC_OK;
}

static int sync_open(struct pmbot_action *a, struct sync *y)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	int r;

	memset(y, 0, sizeof(*y));
	r = pmbot_source_config_at(&y->config, NULL, a->repo, a->default_rev,
		a->config_path ? a->config_path : PMBOT_CONFIG_PATH, a->slug, &y->diags, &err);
	pmbot_note_diags(a->notes, &y->diags);
	if (r == PMBOT_EINVALID) {
		pmbot_buf_free(&err);
		return RC_INVALID;
	}
	if (r < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot read the configuration: %s", err.buf);
		pmbot_buf_free(&err);
		return RC_RUNTIME;
	}
	if (a->self_login && pmbot_config_trust(y->config, a->self_login) == PMBOT_ERROR)
		return RC_RUNTIME;
	if (pmbot_github_backend_open(&y->backend, a->client, a->self_login, &err) < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "%s",
			(err.len ? err.buf : "cannot open the GitHub backend"));
		pmbot_buf_free(&err);
		return RC_RUNTIME;
	}
	pmbot_buf_free(&err);
	return sync_plan(a, y);
}

static int sync_apply(struct pmbot_action *a, struct sync *y, const json_t *run, const char *actor,
	json_t **results)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_apply_start start;
	int r;

	/*
	 * From the state the plan was made of (read whole, under the lock): only
	 * the tracking issue's comment was written since, and field updates do
	 * not look at issues' comments.
	 */
	memset(&start, 0, sizeof(start));
	start.state = y->state;
	start.backend = y->backend;
	start.repos = (const char *const *)y->config->repos.items;
	start.n_repos = y->config->repos.count;
	start.project_owner = y->config->project_owner;
	start.project_number = y->config->project_number;
	r = pmbot_apply_run_from(results, y->bundle, run, y->backend, y->config, a->audit, actor, NULL,
		&start, &err);
	if (r != PMBOT_OK)
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "%s", (err.len ? err.buf : "apply stopped"));
	pmbot_buf_free(&err);
	return r;
}

/* Show the current plan on the tracking issue (creating it only when something waits). */
static int sync_show(struct pmbot_action *a, struct sync *y, struct slot *s, const char *status,
	const char *notice, const json_t *results)
{
	pmbot_comment_meta meta;
	pmbot_comment_input ci;

	memset(&meta, 0, sizeof(meta));
	snprintf(meta.kind, sizeof(meta.kind), "field-sync");
	meta.number = s->number;
	snprintf(meta.plan_hash, sizeof(meta.plan_hash), "%s", a->plan_hash);
	snprintf(meta.status, sizeof(meta.status), "%s", status);
	memset(&ci, 0, sizeof(ci));
	ci.meta = &meta;
	ci.bundle = y->bundle;
	ci.diags = &y->diags;
	ci.notice = notice;
	ci.results = results;
	/* Nothing waits and there is no tracking issue: do not open one to say so. */
	if (!s->number && !pmbot_plan_count(y->bundle) && !s->body)
		return pmbot_action__show(a, NULL, &ci);
	return pmbot_action__show(a, s, &ci);
}

/* The scheduled run: apply what the config pre-approves, post the rest. */
static int sync_scheduled(struct pmbot_action *a, struct sync *y, struct slot *s)
{
	pmbot_buf notice = PMBOT_BUF_INIT, actor = PMBOT_BUF_INIT;
	json_t *ids = NULL, *results = NULL;
	size_t applied = 0;
	int rc = RC_OK, r;

	if (pmbot_fieldsync_auto_approved(&ids, y->bundle, y->config) < 0 ||
	    pmbot_buf_printf(&actor, "config:%s", a->default_rev) < 0) {
		rc = RC_RUNTIME;
		goto done;
	}
	if (json_array_size(ids) && a->audit_corrupt) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "the audit ledger is corrupt: the pre-approved field updates wait until "
			"it is repaired or moved away");
		a->result = "failed";
		rc = RC_RUNTIME;
		goto done;
	}
	if (json_array_size(ids)) {
		pmbot_action__audit(a, "approval", json_pack("{s:s, s:s, s:s, s:I}", "actor", actor.buf,
			"how", "auto_approve in the default branch's configuration", "plan_hash",
			a->plan_hash, "changesets", (json_int_t)json_array_size(ids)));
		r = sync_apply(a, y, ids, actor.buf, &results);
		applied = json_array_size(ids);
		if (r != PMBOT_OK) {
			a->result = "failed";
			rc = RC_RUNTIME;
			pmbot_buf_printf(&notice, "**The pre-approved field updates failed**; see the "
				"workflow run. Nothing else was written.");
			sync_show(a, y, s, "failed", notice.buf, results);
			goto done;
		}
		pmbot_buf_printf(&notice, "Applied %zu pre-approved field update%s (`auto_approve` in "
			"the default branch's configuration, commit `%.12s`).", applied,
			applied == 1 ? "" : "s", a->default_rev);
		pmbot_action__ledger_note(&notice, a);
		/* What is left needs a human: plan it again against the state as it is now. */
		if ((rc = sync_plan(a, y)) == RC_RUNTIME)
			goto done;
	}
	if (pmbot_plan_count(y->bundle)) {
		a->result = "planned";
		if (pmbot_buf_printf(&notice, "%sThese changes need an approval: comment "
			"`/pm-bot apply %s` on this issue.", notice.len ? " " : "", a->plan_hash) < 0) {
			rc = RC_RUNTIME;
			goto done;
		}
	} else {
		a->result = applied ? "applied" : "no_changes";
	}
	if (sync_show(a, y, s, pmbot_plan_count(y->bundle) ? "planned" : "no_changes",
		notice.len ? notice.buf : NULL, NULL) != RC_OK)
		rc = RC_RUNTIME;
	if (rc == RC_OK && y->diags.errors)
		rc = RC_INVALID;
done:
	json_decref(ids);
	json_decref(results);
	pmbot_buf_free(&notice);
	pmbot_buf_free(&actor);
	return rc;
}

/* `/pm-bot apply <hash>` on the tracking issue. */
static int sync_command_apply(struct pmbot_action *a, struct sync *y, struct slot *s,
	const pmbot_command *cmd)
{
	pmbot_buf notice = PMBOT_BUF_INIT;
	json_t *results = NULL;
	int rc, r;

	if ((rc = pmbot_action__authorize(a, y->config, cmd->hash)) != RC_OK)
		goto done;
	if (strcmp(a->plan_hash, cmd->hash) || !pmbot_plan_count(y->bundle)) {
		pmbot_action__audit(a, "denial", json_pack("{s:s, s:s, s:s, s:I, s:s}", "actor",
			a->ev->comment_author, "plan_hash", cmd->hash, "fresh_hash", a->plan_hash,
			"issue", (json_int_t)a->ev->number, "reason", "STALE_PLAN"));
		pmbot_buf_printf(&notice, "**Not applied: the plan is stale.** @%s approved `%s`, but "
			"the board or the issues changed since; the current plan is below.",
			a->ev->comment_author, cmd->hash);
		rc = sync_show(a, y, s, pmbot_plan_count(y->bundle) ? "planned" : "no_changes",
			notice.buf, NULL);
		pmbot_action__react(a, "confused");
		a->result = "stale";
		goto done;
	}
	if (a->audit_corrupt) {
		rc = pmbot_action__refuse_unledgered(a);
		goto done;
	}
	if ((rc = pmbot_action__slot_lock(a, s)) != RC_OK) {
		pmbot_action__react(a, "confused");
		goto done;
	}
	pmbot_action__audit(a, "approval", json_pack("{s:s, s:s, s:s, s:I, s:I}", "actor",
		a->ev->comment_author, "how", "/pm-bot apply", "plan_hash", cmd->hash,
		"issue", (json_int_t)a->ev->number, "changesets", (json_int_t)pmbot_plan_count(y->bundle)));
	r = sync_apply(a, y, NULL, a->ev->comment_author, &results);
	a->result = r == PMBOT_OK ? "applied" : "failed";
	pmbot_buf_printf(&notice, r == PMBOT_OK ? "**Applied**, approved by @%s."
		: "**Apply failed** (approved by @%s); see the workflow run.", a->ev->comment_author);
	pmbot_action__ledger_note(&notice, a);
	rc = sync_show(a, y, s, a->result, notice.buf, results);
	pmbot_action__react(a, r == PMBOT_OK ? "+1" : "-1");
	if (rc == RC_OK && r != PMBOT_OK)
		rc = RC_RUNTIME;
done:
	json_decref(results);
	pmbot_buf_free(&notice);
	return rc;
}

int pmbot_action__field_sync(struct pmbot_action *a, const pmbot_command *cmd)
{
	struct sync y;
	struct slot s;
	int rc, locked = 0;

	memset(&y, 0, sizeof(y));
	memset(&s, 0, sizeof(s));
	if ((rc = pmbot_action__slot_find(a, &s, 1, cmd ? a->ev->number : 0)) != RC_OK)
		goto done;
	if (cmd && (!s.has_meta || s.number != a->ev->number)) {
		pmbot_note(a->notes, PMBOT_NOTE_INFO, "issue #%ld is not pm-bot's field-sync tracking issue; ignored",
			a->ev->number);
		a->result = "ignored";
		goto done;
	}
	if (cmd)
		pmbot_action__react(a, "eyes");
	/* Runs that may apply hold the lock while they plan, so their plan is fresh. */
	if (!cmd || cmd->kind == PMBOT_CMD_APPLY) {
		if ((rc = pmbot_action__lock(a, "field-sync")) != RC_OK) {
			if (cmd)
				pmbot_action__react(a, "confused");
			goto done;
		}
		locked = 1;
	}
	if ((rc = sync_open(a, &y)) == RC_RUNTIME || !y.bundle)
		goto done;
	if (!cmd)
		rc = sync_scheduled(a, &y, &s);
	else if (cmd->kind == PMBOT_CMD_APPLY)
		rc = sync_command_apply(a, &y, &s, cmd);
	else {
		a->result = pmbot_plan_count(y.bundle) ? "planned" : "no_changes";
		rc = sync_show(a, &y, &s, a->result, NULL, NULL);
	}
done:
	if (locked)
		pmbot_action__unlock(a, "field-sync");
	pmbot_action__slot_clear(&s);
	sync_free(&y);
	return rc;
}
