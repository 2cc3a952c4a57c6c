#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "action_int.h"
#include "pmbot/actionflow.h"
#include "pmbot/fs.h"
#include "pmbot/ghops.h"
#include "pmbot/github.h"
#include "pmbot/json.h"
#include "pmbot/plan.h"
#include "pmbot/source.h"
#include "pmbot/banned.h"

#define DEFAULT_BOT "github-actions[bot]"

void slot_clear(struct slot *s)
{
	free(s->body);
	memset(s, 0, sizeof(*s));
}

static void slot_parse(struct slot *s)
{
	s->has_meta = s->body &&
		pmbot_comment_parse(&s->meta, s->body, strlen(s->body)) == PMBOT_OK;
}

int slot_find(struct action *a, struct slot *s, int is_issue, long number)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	int r;

	slot_clear(s);
	s->is_issue = is_issue;
	s->number = number;
	if (is_issue) {
		long found = 0;

		r = pmbot_gh_issue_find(&found, &s->body, a->gh.client, a->slug,
			ACTION_HEADER_PREFIX, a->self, &err);
		if (r == 0 && number && found != number) {
			free(s->body);
			s->body = NULL;
		} else if (r == 0) {
			s->number = found;
		}
	} else {
		r = pmbot_gh_comment_find(&s->comment_id, &s->body, a->gh.client, a->slug, number,
			ACTION_HEADER_PREFIX, a->self, &err);
	}
	if (r < 0)
		fprintf(stderr, "pm-bot: cannot read pm-bot's %s: %s\n",
			is_issue ? "tracking issue" : "plan comment",
			cmd_show_msg(err.len ? err.buf : "unknown error"));
	pmbot_buf_free(&err);
	if (r < 0)
		return EXIT_RUNTIME;
	slot_parse(s);
	/* A pm-bot header of the wrong kind is not ours to reuse here. */
	if (s->has_meta && strcmp(s->meta.kind, is_issue ? "field-sync" : "plan")) {
		free(s->body);
		s->body = NULL;
		s->has_meta = 0;
		s->comment_id = 0;
	}
	return EXIT_OK;
}

int slot_write(struct action *a, struct slot *s, const char *body, int *forbidden)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	char *copy;
	int r;

	*forbidden = 0;
	if (s->is_issue)
		r = pmbot_gh_issue_upsert(&s->number, a->gh.client, a->slug, s->number,
			"pm-bot: Projects field sync", body, &err);
	else
		r = pmbot_gh_comment_upsert(&s->comment_id, a->gh.client, a->slug, s->number,
			s->comment_id, body, &err);
	if (r == PMBOT_GH_EFORBIDDEN) {
		*forbidden = 1;
		printf("::warning::pm-bot cannot write to this repository with this token (%s); "
			"the plan is in the job summary\n", cmd_show_msg(err.len ? err.buf : "forbidden"));
		pmbot_buf_free(&err);
		return EXIT_OK;
	}
	if (r < 0) {
		fprintf(stderr, "pm-bot: cannot write the plan %s: %s\n",
			s->is_issue ? "issue" : "comment",
			cmd_show_msg(err.len ? err.buf : "unknown error"));
		pmbot_buf_free(&err);
		return EXIT_RUNTIME;
	}
	pmbot_buf_free(&err);
	if (!(copy = strdup(body)))
		return EXIT_RUNTIME;
	free(s->body);
	s->body = copy;
	slot_parse(s);
	return EXIT_OK;
}

/* Re-read the slot's text from GitHub (the lock must see the latest). */
static int slot_reread(struct action *a, struct slot *s)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	char *body = NULL;
	int r;

	if (s->is_issue) {
		long number = s->number;

		r = slot_find(a, s, 1, number);
		return r;
	}
	r = pmbot_gh_comment_get(&body, a->gh.client, a->slug, s->comment_id, &err);
	if (r < 0) {
		fprintf(stderr, "pm-bot: cannot read the plan comment: %s\n",
			cmd_show_msg(err.len ? err.buf : "unknown error"));
		pmbot_buf_free(&err);
		return EXIT_RUNTIME;
	}
	pmbot_buf_free(&err);
	free(s->body);
	s->body = body;
	slot_parse(s);
	return EXIT_OK;
}

/* The slot's text with its header line replaced by `meta`'s. */
static int with_header(pmbot_buf *out, const struct slot *s, const pmbot_comment_meta *meta)
{
	const char *rest = s->body ? strchr(s->body, '\n') : NULL;

	if (pmbot_comment_header(out, meta) < 0)
		return -1;
	if (rest && pmbot_buf_puts(out, rest) < 0)
		return -1;
	return 0;
}

int slot_lock(struct action *a, struct slot *s)
{
	pmbot_comment_meta meta;
	pmbot_buf body = PMBOT_BUF_INIT;
	int rc, forbidden = 0;

	/* The label lock excludes other runs (action_lock); this only tells readers. */
	if ((rc = slot_reread(a, s)) != EXIT_OK)
		return rc;
	if (!s->has_meta)
		return EXIT_RUNTIME;
	meta = s->meta;
	snprintf(meta.status, sizeof(meta.status), "applying");
	snprintf(meta.run, sizeof(meta.run), "%s", a->run_id);
	if (with_header(&body, s, &meta) < 0) {
		pmbot_buf_free(&body);
		return EXIT_RUNTIME;
	}
	rc = slot_write(a, s, body.buf, &forbidden);
	pmbot_buf_free(&body);
	if (rc != EXIT_OK)
		return rc;
	return forbidden ? EXIT_RUNTIME : EXIT_OK;
}

/* Is workflow run `run_id` still going? Unknown (-1): the lock's age decides. */
static int run_alive_unknown(void *ctx, const char *run_id)
{
	(void)ctx;
	(void)run_id;
	return -1;
}

static void lock_for(struct action *a, pmbot_lock *l, const char *key)
{
	memset(l, 0, sizeof(*l));
	l->repo = a->slug;
	l->key = key;
	l->run_id = a->run_id;
	l->now = (long long)time(NULL);
	l->run_alive = run_alive_unknown;
}

int action_lock(struct action *a, const char *key)
{
	pmbot_lock l;
	pmbot_buf err = PMBOT_BUF_INIT;
	char *holder = NULL;
	int r;

	lock_for(a, &l, key);
	r = pmbot_lock_take(&holder, &l, a->gh.client, &err);
	if (r == PMBOT_LOCK_EBUSY) {
		fprintf(stderr, "pm-bot: run %s is applying this plan; not applying twice (%s)\n",
			holder && *holder ? holder : "(unknown)", err.len ? err.buf : "busy");
		a->result = "busy";
	} else if (r < 0) {
		fprintf(stderr, "pm-bot: cannot take the apply lock: %s\n",
			err.len ? err.buf : "unknown error");
	}
	free(holder);
	pmbot_buf_free(&err);
	return r == 0 ? EXIT_OK : r == PMBOT_LOCK_EBUSY ? EXIT_INVALID : EXIT_RUNTIME;
}

void action_unlock(struct action *a, const char *key)
{
	pmbot_lock l;
	pmbot_buf err = PMBOT_BUF_INIT;

	lock_for(a, &l, key);
	if (pmbot_lock_release(&l, a->gh.client, &err) < 0)
		fprintf(stderr, "pm-bot: warning: cannot release the apply lock: %s\n",
			err.len ? err.buf : "unknown error");
	pmbot_buf_free(&err);
}

void action_audit(struct action *a, const char *event, json_t *fields)
{
	pmbot_buf line = PMBOT_BUF_INIT;

	if (!fields)
		return;
	if (a->audit && pmbot_audit_append(a->audit, event, fields) < 0)
		fputs("pm-bot: cannot write the audit ledger\n", stderr);
	if (json_object_set_new(fields, "event", json_string(event)) == 0 &&
	    pmbot_json_canonical(&line, fields) == 0)
		printf("%s\n", line.buf);
	fflush(stdout);
	pmbot_buf_free(&line);
	json_decref(fields);
}

void action_react(struct action *a, const char *content)
{
	pmbot_buf err = PMBOT_BUF_INIT;

	if (a->ev->comment_id &&
	    pmbot_gh_reaction_add(a->gh.client, a->slug, a->ev->comment_id, content, &err) < 0)
		fprintf(stderr, "pm-bot: warning: cannot react to the comment: %s\n",
			cmd_show_msg(err.len ? err.buf : "unknown error"));
	pmbot_buf_free(&err);
}

int action_authorize(struct action *a, const pmbot_config *config, const char *plan_hash)
{
	pmbot_buf err = PMBOT_BUF_INIT, reason = PMBOT_BUF_INIT;
	const char *login = a->ev->comment_author;
	char *perm = NULL;
	int rc;

	if (!login) {
		a->result = "denied";
		return EXIT_INVALID;
	}
	if (pmbot_gh_permission(&perm, a->gh.client, a->slug, login, &err) < 0) {
		fprintf(stderr, "pm-bot: cannot read %s's permission: %s\n", cmd_show(login),
			cmd_show_msg(err.len ? err.buf : "unknown error"));
		rc = EXIT_RUNTIME;
		goto done;
	}
	if (pmbot_approval_check(&reason, config, login, perm) == PMBOT_OK) {
		rc = EXIT_OK;
		goto done;
	}
	action_audit(a, "denial", json_pack("{s:s, s:s, s:s, s:I, s:s, s:s}", "actor", login,
		"permission", perm, "plan_hash", plan_hash, "pr", (json_int_t)a->ev->number,
		"reason", "NOT_AUTHORIZED", "message", reason.len ? reason.buf : "not allowed"));
	fprintf(stderr, "pm-bot: %s may not approve: %s\n", cmd_show(login),
		cmd_show_msg(reason.buf));
	action_react(a, "-1");
	a->result = "denied";
	rc = EXIT_INVALID;
done:
	free(perm);
	pmbot_buf_free(&err);
	pmbot_buf_free(&reason);
	return rc;
}

void action_set_outputs(struct action *a, const json_t *bundle)
{
	const char *h = json_string_value(json_object_get(bundle, "plan_hash"));

	snprintf(a->plan_hash, sizeof(a->plan_hash), "%s", h ? h : "");
	a->changes = (long)pmbot_plan_count(bundle);
	a->conflicts = (long)json_array_size(json_object_get(bundle, "conflicts"));
}

int action_show(struct action *a, struct slot *s, const pmbot_comment_input *in)
{
	pmbot_buf body = PMBOT_BUF_INIT;
	int rc, forbidden = 0;

	if (pmbot_comment_render(&body, in) < 0) {
		fputs("pm-bot: cannot render the plan comment\n", stderr);
		pmbot_buf_free(&body);
		return EXIT_RUNTIME;
	}
	/* The job summary always gets the plan, visible even when nothing can be posted. */
	pmbot_buf_puts(&a->summary, strchr(body.buf, '\n') ? strchr(body.buf, '\n') + 1 : body.buf);
	if (!s) {
		pmbot_buf_free(&body);
		return EXIT_OK;
	}
	rc = slot_write(a, s, body.buf, &forbidden);
	if (rc == EXIT_OK && forbidden)
		a->result = "summary_only";
	pmbot_buf_free(&body);
	return rc;
}

/* The plan of the PR head, shown in the PR's comment (or only in the summary). */
struct pr_plan {
	struct plan_inputs in;
	pmbot_diag_list diags;
	json_t *bundle;
	int load_rc;
};

static void pr_plan_free(struct pr_plan *p)
{
	json_decref(p->bundle);
	plan_inputs_free(&p->in);
	pmbot_diag_list_free(&p->diags);
	memset(p, 0, sizeof(*p));
}

static int pr_plan_make(struct action *a, struct pr_plan *p, const char *head)
{
	struct plan_opts o = a->gopts;

	memset(p, 0, sizeof(*p));
	o.repo = a->dir;
	o.rev = head;
	o.config_rev = a->default_rev;
	o.config_path = a->config_path;
	o.backend = "github";
	o.gh = &a->gh;
	p->load_rc = plan_inputs_load(&p->in, &o, &p->diags);
	if (p->load_rc == EXIT_OK)
		p->load_rc = plan_inputs_plan(&p->bundle, &p->in, &p->diags);
	cmd_print_diags(stderr, &p->diags);
	if (p->load_rc == EXIT_RUNTIME)
		return EXIT_RUNTIME;
	if (p->bundle)
		action_set_outputs(a, p->bundle);
	return p->load_rc;
}

static void meta_for(pmbot_comment_meta *m, const char *kind, long number, const char *head,
	const char *hash, const char *status)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->kind, sizeof(m->kind), "%s", kind);
	m->number = number;
	snprintf(m->head, sizeof(m->head), "%s", head ? head : "");
	snprintf(m->plan_hash, sizeof(m->plan_hash), "%s", hash ? hash : "");
	snprintf(m->status, sizeof(m->status), "%s", status);
}

/*
 * Plan `head` of PR `number` and show it: in its one comment unless
 * `summary_only`. `notice` (may be NULL) goes first. Exit 2 when the
 * reports are invalid.
 */
static int show_pr_plan(struct action *a, long number, const char *head, int summary_only,
	const char *notice)
{
	struct pr_plan p;
	struct slot s;
	pmbot_comment_meta meta;
	pmbot_comment_input ci;
	const char *status;
	int rc;

	memset(&s, 0, sizeof(s));
	rc = pr_plan_make(a, &p, head);
	if (rc == EXIT_RUNTIME)
		goto done;
	if (rc == EXIT_INVALID)
		status = "invalid";
	else
		status = pmbot_plan_count(p.bundle) ? "planned" : "no_changes";
	a->result = status;
	meta_for(&meta, "plan", number, head, a->plan_hash, status);
	memset(&ci, 0, sizeof(ci));
	ci.meta = &meta;
	/* An invalid plan shows its diagnostics only: no items, no text read from GitHub. */
	ci.bundle = rc == EXIT_INVALID ? NULL : p.bundle;
	ci.graph = rc == EXIT_INVALID ? NULL : p.in.graph;
	ci.diags = &p.diags;
	ci.notice = notice;
	if (!summary_only && slot_find(a, &s, 0, number) != EXIT_OK) {
		rc = EXIT_RUNTIME;
		goto done;
	}
	if (action_show(a, summary_only ? NULL : &s, &ci) != EXIT_OK) {
		rc = EXIT_RUNTIME;
		goto done;
	}
	if (summary_only)
		a->result = "summary_only";
	if (!strcmp(status, "invalid"))
		rc = EXIT_INVALID;
done:
	slot_clear(&s);
	pr_plan_free(&p);
	return rc;
}

static int on_pull_request(struct action *a)
{
	if (a->ev->is_fork)
		printf("::notice::pm-bot: a pull request from a fork gets its plan in the job summary only\n");
	return show_pr_plan(a, a->ev->number, a->ev->head_sha, a->ev->is_fork, NULL);
}

static int on_push(struct action *a)
{
	char head[PMBOT_OID_HEX_SIZE];
	const char *sha = a->ev->after ? a->ev->after : getenv("GITHUB_SHA");

	if (!sha || pmbot_repo_resolve(head, a->repo, sha) < 0) {
		fprintf(stderr, "pm-bot: the pushed commit %s is not in %s\n", cmd_show(sha ? sha : "(none)"),
			cmd_show(a->dir));
		return EXIT_RUNTIME;
	}
	return show_pr_plan(a, 0, head, 1, NULL);
}

/* Results of an apply, for the comment's notice. */
static int results_notice(pmbot_buf *out, const json_t *results, const char *login, int ok)
{
	size_t i, applied = 0, failed = 0;
	json_t *r;

	json_array_foreach(results, i, r) {
		const char *st = json_string_value(json_object_get(r, "status"));

		if (st && (!strcmp(st, "applied") || !strcmp(st, "already_applied")))
			applied++;
		else if (st && (!strcmp(st, "failed") || !strcmp(st, "denied")))
			failed++;
	}
	if (ok)
		return pmbot_buf_printf(out, "**Applied** %zu of %zu changes, approved by @%s.",
			applied, json_array_size(results), login) < 0 ? -1 : 0;
	return pmbot_buf_printf(out, "**Apply failed**: %zu of %zu changes applied, %zu failed; "
		"approved by @%s. Comment `/pm-bot plan` to see what remains.",
		applied, json_array_size(results), failed, login) < 0 ? -1 : 0;
}

/*
 * A closed or merged pull request is over: approving it writes nothing.
 * EXIT_OK when open; EXIT_INVALID (audited, reacted to, result "denied").
 */
static int refuse_closed(struct action *a, const pmbot_gh_pull *pull, const char *hash)
{
	const char *reason = pull->merged ? "PR_MERGED" : "PR_CLOSED";

	if (!strcmp(pull->state, "open"))
		return EXIT_OK;
	action_audit(a, "denial", json_pack("{s:s?, s:s, s:I, s:s}", "actor", a->ev->comment_author,
		"plan_hash", hash, "pr", (json_int_t)a->ev->number, "reason", reason));
	fprintf(stderr, "pm-bot: pull request #%ld is %s: nothing is applied\n", a->ev->number,
		pull->merged ? "merged" : "closed");
	action_react(a, "-1");
	a->result = "denied";
	return EXIT_INVALID;
}

/* The default branch's configuration, for decisions made before any plan. EXIT_*. */
static int load_policy(struct action *a, pmbot_config **config)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	int r;

	r = pmbot_source_config_at(config, NULL, a->repo, a->default_rev,
		a->config_path ? a->config_path : PMBOT_CONFIG_PATH, a->slug, &diags);
	pmbot_diag_list_free(&diags);
	if (r == PMBOT_EINVALID)
		return EXIT_INVALID;
	if (r < 0) {
		fprintf(stderr, "pm-bot: cannot read the configuration: %s\n",
			pmbot_repo_last_error(a->repo));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static int on_apply(struct action *a, const pmbot_command *cmd)
{
	pmbot_gh_pull pull;
	struct pr_plan p;
	struct slot s;
	pmbot_buf err = PMBOT_BUF_INIT, notice = PMBOT_BUF_INIT, key = PMBOT_BUF_INIT;
	pmbot_comment_meta meta;
	pmbot_comment_input ci;
	pmbot_config *policy = NULL;
	json_t *results = NULL;
	int rc, r, locked = 0;

	memset(&pull, 0, sizeof(pull));
	memset(&p, 0, sizeof(p));
	memset(&s, 0, sizeof(s));
	if (pmbot_gh_pull_get(&pull, a->gh.client, a->slug, a->ev->number, &err) < 0) {
		fprintf(stderr, "pm-bot: cannot read pull request #%ld: %s\n", a->ev->number,
			cmd_show_msg(err.len ? err.buf : "unknown error"));
		rc = EXIT_RUNTIME;
		goto done;
	}
	if ((rc = refuse_closed(a, &pull, cmd->hash)) != EXIT_OK)
		goto done;
	if ((rc = load_policy(a, &policy)) == EXIT_RUNTIME)
		goto done;
	if (rc == EXIT_INVALID) {
		rc = show_pr_plan(a, a->ev->number, pull.head_sha, 0, NULL);
		goto done;
	}
	if ((rc = action_authorize(a, policy, cmd->hash)) != EXIT_OK)
		goto done;
	/* The lock covers planning too: a plan made before another run applied is stale. */
	if (pmbot_buf_printf(&key, "pr-%ld", a->ev->number) < 0) {
		rc = EXIT_RUNTIME;
		goto done;
	}
	if ((rc = action_lock(a, key.buf)) != EXIT_OK) {
		action_react(a, "confused");
		goto done;
	}
	locked = 1;
	if ((rc = pr_plan_make(a, &p, pull.head_sha)) == EXIT_RUNTIME)
		goto done;
	if ((rc = slot_find(a, &s, 0, a->ev->number)) != EXIT_OK)
		goto done;
	/* Stale: no plan shown, the head moved since, or the plan is not the one approved. */
	if (!s.has_meta || strcmp(s.meta.head, pull.head_sha) || p.load_rc != EXIT_OK ||
	    strcmp(a->plan_hash, cmd->hash)) {
		action_audit(a, "denial", json_pack("{s:s, s:s, s:s, s:I, s:s}", "actor",
			a->ev->comment_author, "plan_hash", cmd->hash, "fresh_hash", a->plan_hash,
			"pr", (json_int_t)a->ev->number, "reason", "STALE_PLAN"));
		pmbot_buf_printf(&notice, "**Not applied: the plan is stale.** @%s approved `%s`, but "
			"the pull request or GitHub changed since; the current plan is below (hash `%s`).",
			a->ev->comment_author, cmd->hash, a->plan_hash[0] ? a->plan_hash : "none");
		slot_clear(&s);
		rc = show_pr_plan(a, a->ev->number, pull.head_sha, 0, notice.buf);
		action_react(a, "confused");
		a->result = "stale";
		goto done;
	}
	if (a->audit_corrupt) {
		fputs("pm-bot: the audit ledger is corrupt: nothing is applied until it is repaired "
			"or moved away\n", stderr);
		action_react(a, "-1");
		a->result = "failed";
		rc = EXIT_RUNTIME;
		goto done;
	}
	if ((rc = slot_lock(a, &s)) != EXIT_OK) {
		action_react(a, "confused");
		goto done;
	}
	action_audit(a, "approval", json_pack("{s:s, s:s, s:s, s:I, s:I, s:s}", "actor",
		a->ev->comment_author, "how", "/pm-bot apply", "plan_hash", cmd->hash,
		"pr", (json_int_t)a->ev->number, "changesets", (json_int_t)pmbot_plan_count(p.bundle),
		"head", pull.head_sha));
	pmbot_buf_clear(&err);
	r = pmbot_apply_run(&results, p.bundle, NULL, p.in.backend, p.in.config, a->audit,
		a->ev->comment_author, NULL, &err);
	if (r != PMBOT_OK)
		fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(err.len ? err.buf : "apply stopped"));
	a->result = r == PMBOT_OK ? "applied" : "failed";
	results_notice(&notice, results, a->ev->comment_author, r == PMBOT_OK);
	meta_for(&meta, "plan", a->ev->number, pull.head_sha, a->plan_hash, a->result);
	memset(&ci, 0, sizeof(ci));
	ci.meta = &meta;
	ci.bundle = p.bundle;
	ci.graph = p.in.graph;
	ci.diags = &p.diags;
	ci.notice = notice.buf;
	ci.results = results;
	rc = action_show(a, &s, &ci);
	action_react(a, r == PMBOT_OK ? "+1" : "-1");
	if (rc == EXIT_OK && r != PMBOT_OK)
		rc = r == PMBOT_EINVALID ? EXIT_INVALID : EXIT_RUNTIME;
done:
	if (locked)
		action_unlock(a, key.buf);
	json_decref(results);
	slot_clear(&s);
	pr_plan_free(&p);
	pmbot_config_free(policy);
	pmbot_gh_pull_clear(&pull);
	pmbot_buf_free(&err);
	pmbot_buf_free(&notice);
	pmbot_buf_free(&key);
	return rc;
}

/*
 * `/pm-bot plan` on a pull request from a fork runs the fork's reports
 * with this token: only someone with write permission may ask for it.
 * EXIT_OK allowed; EXIT_INVALID refused (audited, reacted to, "denied").
 */
static int may_replan_fork(struct action *a, const pmbot_gh_pull *pull)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_permission have;
	char *perm = NULL;
	int rc = EXIT_OK;

	if (pull->head_repo[0] && !strcasecmp(pull->head_repo, pull->base_repo))
		return EXIT_OK;
	if (pmbot_gh_permission(&perm, a->gh.client, a->slug, a->ev->comment_author, &err) < 0) {
		fprintf(stderr, "pm-bot: cannot read %s's permission: %s\n", a->ev->comment_author,
			err.len ? err.buf : "unknown error");
		rc = EXIT_RUNTIME;
		goto done;
	}
	if (pmbot_permission_parse(&have, perm) == PMBOT_OK && have >= PMBOT_PERM_WRITE)
		goto done;
	action_audit(a, "denial", json_pack("{s:s, s:s, s:I, s:s}", "actor", a->ev->comment_author,
		"permission", perm, "pr", (json_int_t)a->ev->number, "reason", "FORK_PLAN_NOT_ALLOWED"));
	fprintf(stderr, "pm-bot: %s may not re-plan a pull request from a fork: that needs write "
		"permission\n", a->ev->comment_author);
	action_react(a, "-1");
	a->result = "denied";
	rc = EXIT_INVALID;
done:
	free(perm);
	pmbot_buf_free(&err);
	return rc;
}

static int on_comment(struct action *a)
{
	pmbot_command cmd;
	pmbot_gh_pull pull;
	pmbot_buf err = PMBOT_BUF_INIT;
	int rc;

	if (pmbot_command_parse(&cmd, a->ev->comment_body) < 0)
		return EXIT_RUNTIME;
	if (cmd.kind == PMBOT_CMD_NONE || cmd.kind == PMBOT_CMD_UNKNOWN) {
		printf("pm-bot: not a command pm-bot knows (%s); ignored\n",
			cmd_show(cmd.kind == PMBOT_CMD_UNKNOWN ? cmd.word : "none"));
		a->result = "ignored";
		return EXIT_OK;
	}
	if (!a->ev->is_pull_request)
		return action_field_sync(a, &cmd);
	action_react(a, "eyes");
	if (cmd.kind == PMBOT_CMD_APPLY)
		return on_apply(a, &cmd);
	memset(&pull, 0, sizeof(pull));
	if (pmbot_gh_pull_get(&pull, a->gh.client, a->slug, a->ev->number, &err) < 0) {
		fprintf(stderr, "pm-bot: cannot read pull request #%ld: %s\n", a->ev->number,
			cmd_show_msg(err.len ? err.buf : "unknown error"));
		pmbot_buf_free(&err);
		return EXIT_RUNTIME;
	}
	if ((rc = may_replan_fork(a, &pull)) == EXIT_OK)
		rc = show_pr_plan(a, a->ev->number, pull.head_sha, 0, NULL);
	pmbot_gh_pull_clear(&pull);
	pmbot_buf_free(&err);
	return rc;
}

/* The default branch's commit: where config and approval policy come from. */
static int resolve_default(struct action *a)
{
	const char *b = a->default_branch;
	pmbot_buf ref = PMBOT_BUF_INIT;
	int r = PMBOT_ENOTFOUND;

	if (b) {
		if (pmbot_buf_printf(&ref, "refs/remotes/origin/%s", b) == 0)
			r = pmbot_repo_resolve(a->default_rev, a->repo, ref.buf);
		pmbot_buf_clear(&ref);
		if (r < 0 && pmbot_buf_printf(&ref, "refs/heads/%s", b) == 0)
			r = pmbot_repo_resolve(a->default_rev, a->repo, ref.buf);
	} else {
		r = pmbot_repo_resolve(a->default_rev, a->repo, "refs/remotes/origin/HEAD");
	}
	pmbot_buf_free(&ref);
	if (r < 0) {
		fprintf(stderr, "pm-bot: the default branch%s%s is not in %s: check it out with "
			"actions/checkout and fetch-depth: 0\n", b ? " " : "", cmd_show(b ? b : ""),
			cmd_show(a->dir));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/*
 * Where the ledger (and the GitHub cache) go by default: under $RUNNER_TEMP,
 * outside the workspace, whose files come from the pull request. Without
 * $RUNNER_TEMP (a local run) <workspace>/.pm-bot, unless a path component
 * there is a symlink: a committed `.pm-bot` link must not steer a write,
 * so there is then no ledger (plans go on, applies refuse). EXIT_*.
 */
static int default_ledger(struct action *a, pmbot_buf *path)
{
	const char *tmp = getenv("RUNNER_TEMP");
	pmbot_buf dir = PMBOT_BUF_INIT, file = PMBOT_BUF_INIT;
	struct stat st;
	int rc = EXIT_RUNTIME;

	if (tmp && *tmp) {
		if (pmbot_buf_printf(&dir, "%s/pm-bot", tmp) < 0 ||
		    pmbot_buf_printf(path, "%s/audit.jsonl", dir.buf) < 0)
			goto done;
		if (!a->gopts.cache_dir && !getenv("PMBOT_GITHUB_CACHE_DIR")) {
			if (pmbot_buf_printf(&a->cache_dir, "%s/cache", dir.buf) < 0)
				goto done;
			a->gopts.cache_dir = a->cache_dir.buf;
		}
	} else if (pmbot_buf_printf(&dir, "%s/.pm-bot", a->dir) < 0 ||
		   pmbot_buf_printf(&file, "%s/audit.jsonl", dir.buf) < 0) {
		goto done;
	} else if ((lstat(dir.buf, &st) == 0 && !S_ISDIR(st.st_mode)) ||
		   (lstat(file.buf, &st) == 0 && !S_ISREG(st.st_mode))) {
		printf("::warning::pm-bot: the workspace's .pm-bot or its ledger is not a plain "
			"directory and file (a symlink?): no audit ledger is written; nothing is applied\n");
		rc = EXIT_OK;
		goto done;
	} else if (pmbot_buf_puts(path, file.buf) < 0) {
		goto done;
	}
	pmbot_fs_mkdirs(dir.buf, 0755);
	rc = EXIT_OK;
done:
	pmbot_buf_free(&dir);
	pmbot_buf_free(&file);
	return rc;
}

/* Append `text` to the file named by $name (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY). */
static int append_env_file(const char *name, const char *text, size_t len)
{
	const char *path = getenv(name);
	FILE *f;
	int rc = 0;

	if (!path || !*path)
		return 0;
	if (!(f = fopen(path, "a"))) {
		fprintf(stderr, "pm-bot: cannot open $%s (%s): %s\n", name, cmd_show(path),
			strerror(errno));
		return -1;
	}
	if (fwrite(text, 1, len, f) != len)
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

static int write_outputs(struct action *a)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	int rc = 0;

	if (pmbot_buf_printf(&out, "result=%s\nplan_hash=%s\nchanges=%ld\nconflicts=%ld\n",
		a->result ? a->result : "ignored", a->plan_hash, a->changes, a->conflicts) < 0 ||
	    append_env_file("GITHUB_OUTPUT", out.buf, out.len) < 0)
		rc = -1;
	if (a->summary.len &&
	    append_env_file("GITHUB_STEP_SUMMARY", a->summary.buf, a->summary.len) < 0)
		rc = -1;
	pmbot_buf_free(&out);
	return rc;
}

static int read_event(pmbot_event **ev)
{
	const char *name = getenv("GITHUB_EVENT_NAME"), *path = getenv("GITHUB_EVENT_PATH");
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text;
	int r;

	if (!name || !*name || !path || !*path) {
		fputs("pm-bot: action runs inside GitHub Actions: GITHUB_EVENT_NAME and "
			"GITHUB_EVENT_PATH must be set\n", stderr);
		return EXIT_INVALID;
	}
	pmbot_buf_init(&text, PMBOT_EVENT_MAX_BYTES);
	if (pmbot_fs_read(&text, path) < 0) {
		fprintf(stderr, "pm-bot: cannot read the event %s: %s\n", cmd_show(path),
			strerror(errno));
		pmbot_buf_free(&text);
		return EXIT_RUNTIME;
	}
	r = pmbot_event_parse(ev, name, text.buf, text.len, &diags);
	cmd_print_diags(stderr, &diags);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&text);
	return r == PMBOT_OK ? EXIT_OK : r == PMBOT_EINVALID ? EXIT_INVALID : EXIT_RUNTIME;
}

int cmd_action(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "repo", required_argument, NULL, 'R' },
		{ "config", required_argument, NULL, 'c' },
		{ "audit", required_argument, NULL, 'a' },
		GITHUB_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *self = cmd_lookup("action");
	struct action a;
	pmbot_event *ev = NULL;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf audit_path = PMBOT_BUF_INIT;
	const char *why = NULL, *audit_arg = NULL, *env;
	pmbot_event_action what;
	int c, rc;

	memset(&a, 0, sizeof(a));
	a.dir = getenv("GITHUB_WORKSPACE");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c >= OPT_CACHE_DIR && plan_opts_parse(&a.gopts, c, optarg) == 0)
			continue;
		switch (c) {
		case 'R': a.dir = optarg; break;
		case 'c': a.config_path = optarg; break;
		case 'a': audit_arg = optarg; break;
		default: return cmd_bad_option(self, c, argv);
		}
	}
	if (optind < argc)
		return cmd_usage_error(self, "unexpected argument '%s'", argv[optind]);
	if (!a.dir || !*a.dir)
		a.dir = ".";
	a.gopts.repo = a.dir;
	a.run_id = getenv("GITHUB_RUN_ID");
	if (!a.run_id || !*a.run_id)
		a.run_id = "local";
	pmbot_buf_init(&a.summary, 0);
	pmbot_buf_init(&a.cache_dir, 0);
	if ((rc = read_event(&ev)) != EXIT_OK)
		goto done;
	a.ev = ev;
	what = pmbot_event_decide(ev, &why);
	if (what == PMBOT_ACT_IGNORE) {
		printf("pm-bot: nothing to do for this %s event: %s\n", cmd_show(ev->name),
			cmd_show_msg(why ? why : "ignored"));
		a.result = "ignored";
		goto done;
	}
	a.slug = ev->repo ? ev->repo : getenv("GITHUB_REPOSITORY");
	a.default_branch = ev->default_branch;
	if (!a.default_branch && (env = getenv("GITHUB_REF")) && !strncmp(env, "refs/heads/", 11) &&
	    ev->kind == PMBOT_EV_SCHEDULE)
		a.default_branch = env + 11;
	if (!a.slug || !*a.slug) {
		fputs("pm-bot: neither the event nor $GITHUB_REPOSITORY names the repository\n", stderr);
		rc = EXIT_INVALID;
		goto done;
	}
	if ((rc = cmd_open_repo(&a.repo, a.dir)) != EXIT_OK || (rc = resolve_default(&a)) != EXIT_OK)
		goto done;
	if (!audit_arg && (rc = default_ledger(&a, &audit_path)) != EXIT_OK)
		goto done;
	if ((rc = github_conn_open(&a.gh, &a.gopts)) != EXIT_OK)
		goto done;
	a.self = a.gh.self_login ? a.gh.self_login : DEFAULT_BOT;
	if (!audit_arg && audit_path.len)
		audit_arg = audit_path.buf;
	if (audit_arg && pmbot_audit_open(&a.audit, audit_arg, &diags) < 0) {
		cmd_print_diags(stderr, &diags);
		/* A corrupt ledger committed to the workspace must not stop a plan; applies refuse. */
		if (!pmbot_diag_list_find(&diags, "AUDIT_BROKEN")) {
			fprintf(stderr, "pm-bot: cannot open the audit ledger %s\n", cmd_show(audit_arg));
			rc = EXIT_RUNTIME;
			goto done;
		}
		printf("::warning::pm-bot: the audit ledger is corrupt: plans are shown, nothing is "
			"applied until it is repaired or moved away\n");
		a.audit_corrupt = 1;
	} else if (!audit_arg) {
		a.audit_corrupt = 1;
	}
	switch (what) {
	case PMBOT_ACT_PLAN_PR: rc = on_pull_request(&a); break;
	case PMBOT_ACT_COMMAND: rc = on_comment(&a); break;
	case PMBOT_ACT_PLAN_PUSH: rc = on_push(&a); break;
	case PMBOT_ACT_FIELD_SYNC: rc = action_field_sync(&a, NULL); break;
	default: break;
	}
	/* A refused approval is handled, not a failure of the run. */
	if (rc == EXIT_INVALID && a.result && (!strcmp(a.result, "denied") ||
		!strcmp(a.result, "stale") || !strcmp(a.result, "busy")))
		rc = EXIT_OK;
done:
	if (write_outputs(&a) < 0 && rc == EXIT_OK)
		rc = EXIT_RUNTIME;
	pmbot_audit_close(a.audit);
	github_conn_close(&a.gh);
	pmbot_repo_free(a.repo);
	pmbot_event_free(ev);
	pmbot_buf_free(&a.summary);
	pmbot_buf_free(&audit_path);
	pmbot_buf_free(&a.cache_dir);
	pmbot_diag_list_free(&diags);
	return rc;
}
