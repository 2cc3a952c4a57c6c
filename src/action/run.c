#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "run_int.h"
#include "pmbot/action.h"
#include "pmbot/fs.h"
#include "pmbot/github.h"
#include "pmbot/json.h"
#include "pmbot/inputs.h"
#include "pmbot/plan.h"
#include "pmbot/source.h"
#include "pmbot/banned.h"

#define DEFAULT_BOT "github-actions[bot]"

void pmbot_action__slot_clear(struct slot *s)
{
	free(s->body);
	memset(s, 0, sizeof(*s));
}

static void slot_parse(struct slot *s)
{
	s->has_meta = s->body &&
		pmbot_comment_parse(&s->meta, s->body, strlen(s->body)) == PMBOT_OK;
}

int pmbot_action__slot_find(struct pmbot_action *a, struct slot *s, int is_issue, long number)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	int r;

	pmbot_action__slot_clear(s);
	s->is_issue = is_issue;
	s->number = number;
	if (is_issue) {
		long found = 0;

		r = pmbot_gh_issue_find(&found, &s->body, a->client, a->slug,
			ACTION_HEADER_PREFIX, a->self, &err);
		if (r == 0 && number && found != number) {
			free(s->body);
			s->body = NULL;
		} else if (r == 0) {
			s->number = found;
		}
	} else {
		r = pmbot_gh_comment_find(&s->comment_id, &s->body, a->client, a->slug, number,
			ACTION_HEADER_PREFIX, a->self, &err);
	}
	if (r < 0)
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot read pm-bot's %s: %s",
			is_issue ? "tracking issue" : "plan comment",
			(err.len ? err.buf : "unknown error"));
	pmbot_buf_free(&err);
	if (r < 0)
		return RC_RUNTIME;
	slot_parse(s);
	/* A pm-bot header of the wrong kind is not ours to reuse here. */
	if (s->has_meta && strcmp(s->meta.kind, is_issue ? "field-sync" : "plan")) {
		free(s->body);
		s->body = NULL;
		s->has_meta = 0;
		s->comment_id = 0;
	}
	return RC_OK;
}

int pmbot_action__slot_write(struct pmbot_action *a, struct slot *s, const char *body, int *forbidden)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	char *copy;
	int r;

	*forbidden = 0;
	if (s->is_issue)
		r = pmbot_gh_issue_upsert(&s->number, a->client, a->slug, s->number,
			"pm-bot: Projects field sync", body, &err);
	else
		r = pmbot_gh_comment_upsert(&s->comment_id, a->client, a->slug, s->number,
			s->comment_id, body, &err);
	if (r == PMBOT_GH_EFORBIDDEN) {
		*forbidden = 1;
		pmbot_note(a->notes, PMBOT_NOTE_WARNING, "pm-bot cannot write to this repository with this token (%s); "
			"the plan is in the job summary", (err.len ? err.buf : "forbidden"));
		pmbot_buf_free(&err);
		return RC_OK;
	}
	if (r < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot write the plan %s: %s",
			s->is_issue ? "issue" : "comment",
			(err.len ? err.buf : "unknown error"));
		pmbot_buf_free(&err);
		return RC_RUNTIME;
	}
	pmbot_buf_free(&err);
	if (!(copy = strdup(body)))
		return RC_RUNTIME;
	free(s->body);
	s->body = copy;
	slot_parse(s);
	return RC_OK;
}

/* Re-read the slot's text from GitHub (the lock must see the latest). */
static int slot_reread(struct pmbot_action *a, struct slot *s)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	char *body = NULL;
	int r;

	if (s->is_issue) {
		long number = s->number;

		r = pmbot_action__slot_find(a, s, 1, number);
		return r;
	}
	r = pmbot_gh_comment_get(&body, a->client, a->slug, s->comment_id, &err);
	if (r < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot read the plan comment: %s",
			(err.len ? err.buf : "unknown error"));
		pmbot_buf_free(&err);
		return RC_RUNTIME;
	}
	pmbot_buf_free(&err);
	free(s->body);
	s->body = body;
	slot_parse(s);
	return RC_OK;
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

int pmbot_action__slot_lock(struct pmbot_action *a, struct slot *s)
{
	pmbot_comment_meta meta;
	pmbot_buf body = PMBOT_BUF_INIT;
	int rc, forbidden = 0;

	/* The label lock excludes other runs (action_lock); this only tells readers. */
	if ((rc = slot_reread(a, s)) != RC_OK)
		return rc;
	if (!s->has_meta)
		return RC_RUNTIME;
	meta = s->meta;
	snprintf(meta.status, sizeof(meta.status), "applying");
	snprintf(meta.run, sizeof(meta.run), "%s", a->run_id);
	if (with_header(&body, s, &meta) < 0) {
		pmbot_buf_free(&body);
		return RC_RUNTIME;
	}
	rc = pmbot_action__slot_write(a, s, body.buf, &forbidden);
	pmbot_buf_free(&body);
	if (rc != RC_OK)
		return rc;
	return forbidden ? RC_RUNTIME : RC_OK;
}

/* Is workflow run `run_id` still going? Unknown (-1): the lock's age decides. */
static int run_alive_unknown(void *ctx, const char *run_id)
{
	(void)ctx;
	(void)run_id;
	return -1;
}

static void lock_for(struct pmbot_action *a, pmbot_lock *l, const char *key)
{
	memset(l, 0, sizeof(*l));
	l->repo = a->slug;
	l->key = key;
	l->run_id = a->run_id;
	l->now = a->opts.now ? a->opts.now : (long long)time(NULL);
	l->run_alive = run_alive_unknown;
}

int pmbot_action__lock(struct pmbot_action *a, const char *key)
{
	pmbot_lock l;
	pmbot_buf err = PMBOT_BUF_INIT;
	char *holder = NULL;
	int r;

	lock_for(a, &l, key);
	r = pmbot_lock_take(&holder, &l, a->client, &err);
	if (r == PMBOT_LOCK_EBUSY) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "run %s is applying this plan; not applying twice (%s)",
			holder && *holder ? holder : "(unknown)", err.len ? err.buf : "busy");
		a->result = "busy";
	} else if (r < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot take the apply lock: %s",
			err.len ? err.buf : "unknown error");
	}
	free(holder);
	pmbot_buf_free(&err);
	return r == 0 ? RC_OK : r == PMBOT_LOCK_EBUSY ? RC_INVALID : RC_RUNTIME;
}

void pmbot_action__unlock(struct pmbot_action *a, const char *key)
{
	pmbot_lock l;
	pmbot_buf err = PMBOT_BUF_INIT;

	lock_for(a, &l, key);
	if (pmbot_lock_release(&l, a->client, &err) < 0)
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "warning: cannot release the apply lock: %s",
			err.len ? err.buf : "unknown error");
	pmbot_buf_free(&err);
}

void pmbot_action__audit(struct pmbot_action *a, const char *event, json_t *fields)
{
	pmbot_buf line = PMBOT_BUF_INIT;

	if (!fields)
		return;
	if (a->audit && pmbot_audit_append(a->audit, event, fields) < 0)
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot write the audit ledger");
	if (json_object_set_new(fields, "event", json_string(event)) == 0 &&
	    pmbot_json_canonical(&line, fields) == 0)
		pmbot_note(a->notes, PMBOT_NOTE_RECORD, "%s", line.buf);
	pmbot_buf_free(&line);
	json_decref(fields);
}

void pmbot_action__react(struct pmbot_action *a, const char *content)
{
	pmbot_buf err = PMBOT_BUF_INIT;

	if (a->ev->comment_id &&
	    pmbot_gh_reaction_add(a->client, a->slug, a->ev->comment_id, content, &err) < 0)
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "warning: cannot react to the comment: %s",
			(err.len ? err.buf : "unknown error"));
	pmbot_buf_free(&err);
}

void pmbot_action__reply(struct pmbot_action *a, const char *text)
{
	pmbot_buf body = PMBOT_BUF_INIT;
	struct slot s;
	int r, forbidden = 0;

	memset(&s, 0, sizeof(s));
	if (!a->ev->is_pull_request || a->ev->number <= 0)
		return;
	if (pmbot_action__slot_find(a, &s, 0, a->ev->number) != RC_OK)
		goto done;
	/* A stranger's comment never makes pm-bot start a comment of its own. */
	if (!s.body || !s.has_meta) {
		pmbot_note(a->notes, PMBOT_NOTE_NOTICE, "pm-bot: no plan comment on this pull request "
			"yet; the reply is in the job log only");
		goto done;
	}
	/* An apply that is running writes its result there: do not race it. */
	if (!strcmp(s.meta.status, "applying")) {
		pmbot_note(a->notes, PMBOT_NOTE_NOTICE, "pm-bot: an apply is running; the reply is in "
			"the job log only");
		goto done;
	}
	r = pmbot_comment_reply(&body, s.body, a->ev->comment_author, text, 0);
	if (r == PMBOT_EINVALID || r == PMBOT_ENOTFOUND) {
		pmbot_note(a->notes, PMBOT_NOTE_NOTICE, "pm-bot: the reply does not fit in the plan "
			"comment; it is in the job log only");
		goto done;
	}
	if (r < 0 || pmbot_action__slot_write(a, &s, body.buf, &forbidden) != RC_OK) {
		pmbot_note(a->notes, PMBOT_NOTE_WARNING, "cannot write the reply to the plan comment");
		goto done;
	}
	if (!forbidden) {
		a->comment_number = s.number;
		a->comment_id = s.comment_id;
	}
done:
	pmbot_action__slot_clear(&s);
	pmbot_buf_free(&body);
}

int pmbot_action__authorize(struct pmbot_action *a, const pmbot_config *config, const char *plan_hash)
{
	pmbot_buf err = PMBOT_BUF_INIT, reason = PMBOT_BUF_INIT, line = PMBOT_BUF_INIT;
	const char *login = a->ev->comment_author;
	char *perm = NULL;
	int rc;

	if (!login) {
		a->result = "denied";
		return RC_INVALID;
	}
	if (pmbot_gh_permission(&perm, a->client, a->slug, login, &err) < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot read %s's permission: %s", (login),
			(err.len ? err.buf : "unknown error"));
		rc = RC_RUNTIME;
		goto done;
	}
	if (pmbot_approval_check(&reason, config, login, perm) == PMBOT_OK) {
		rc = RC_OK;
		goto done;
	}
	pmbot_action__audit(a, "denial", json_pack("{s:s, s:s, s:s, s:I, s:s, s:s}", "actor", login,
		"permission", perm, "plan_hash", plan_hash, "pr", (json_int_t)a->ev->number,
		"reason", "NOT_AUTHORIZED", "message", reason.len ? reason.buf : "not allowed"));
	pmbot_note(a->notes, PMBOT_NOTE_ERROR, "%s may not approve: %s", (login),
		(reason.buf));
	/* The reason names the permission needed and the one held (approval policy). */
	if (pmbot_buf_printf(&a->summary, "Approval refused: %s\n", reason.buf) < 0) {
		rc = RC_RUNTIME;
		goto done;
	}
	pmbot_action__react(a, "-1");
	if (pmbot_buf_puts(&line, "Approval refused: ") == 0 && pmbot_buf_puts(&line, reason.buf) == 0)
		pmbot_action__reply(a, line.buf);
	a->result = "denied";
	rc = RC_INVALID;
done:
	free(perm);
	pmbot_buf_free(&err);
	pmbot_buf_free(&reason);
	pmbot_buf_free(&line);
	return rc;
}

void pmbot_action__set_outputs(struct pmbot_action *a, const json_t *bundle)
{
	const char *h = json_string_value(json_object_get(bundle, "plan_hash"));

	snprintf(a->plan_hash, sizeof(a->plan_hash), "%s", h ? h : "");
	a->changes = (long)pmbot_plan_count(bundle);
	a->conflicts = (long)json_array_size(json_object_get(bundle, "conflicts"));
}

int pmbot_action__show(struct pmbot_action *a, struct slot *s, const pmbot_comment_input *in)
{
	pmbot_buf body = PMBOT_BUF_INIT;
	int rc, forbidden = 0;

	if (pmbot_comment_render(&body, in) < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot render the plan comment");
		pmbot_buf_free(&body);
		return RC_RUNTIME;
	}
	/* The job summary always gets the plan, visible even when nothing can be posted. */
	pmbot_buf_puts(&a->summary, strchr(body.buf, '\n') ? strchr(body.buf, '\n') + 1 : body.buf);
	if (!s) {
		pmbot_buf_free(&body);
		return RC_OK;
	}
	rc = pmbot_action__slot_write(a, s, body.buf, &forbidden);
	if (rc == RC_OK && forbidden)
		a->result = "summary_only";
	else if (rc == RC_OK) {
		a->comment_number = s->number;
		a->comment_id = s->is_issue ? 0 : s->comment_id;
	}
	pmbot_buf_free(&body);
	return rc;
}

/* The plan of the PR head, shown in the PR's comment (or only in the summary). */
struct pr_plan {
	pmbot_inputs in;
	pmbot_diag_list diags;
	json_t *bundle;
	int load_rc;
};

static void pr_plan_free(struct pr_plan *p)
{
	json_decref(p->bundle);
	pmbot_inputs_free(&p->in);
	pmbot_diag_list_free(&p->diags);
	memset(p, 0, sizeof(*p));
}

static int rc_of(int r)
{
	return r == PMBOT_OK ? RC_OK : r == PMBOT_EINVALID ? RC_INVALID : RC_RUNTIME;
}

static int pr_plan_make(struct pmbot_action *a, struct pr_plan *p, const char *head)
{
	pmbot_inputs_opts o;

	memset(p, 0, sizeof(*p));
	memset(&o, 0, sizeof(o));
	o.repo = a->repo;
	o.workdir = a->dir;
	o.rev = head;
	o.config_rev = a->default_rev;
	o.config_path = a->config_path;
	o.current_repo = a->env.repository && *a->env.repository ? a->env.repository : a->slug;
	o.backend = "github";
	o.client = a->client;
	o.self_login = a->self_login;
	o.notes = a->notes;
	p->load_rc = rc_of(pmbot_inputs_load(&p->in, &o, &p->diags));
	if (p->load_rc == RC_OK)
		p->load_rc = rc_of(pmbot_inputs_plan(&p->bundle, &p->in, a->notes, &p->diags));
	pmbot_note_diags(a->notes, &p->diags);
	if (p->load_rc == RC_RUNTIME)
		return RC_RUNTIME;
	if (p->bundle)
		pmbot_action__set_outputs(a, p->bundle);
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

static void keep_shown(struct pmbot_action *a, long number, const json_t *bundle);

/*
 * The notice of a re-rendered comment: the caller's `notice` (may be NULL),
 * then the history line rebuilt from what the comment said before
 * (pmbot_comment_history(): a re-plan keeps what the last apply did).
 * 0 or -1; `out` is empty when there is nothing to say.
 */
static int replan_notice(pmbot_buf *out, const struct slot *s, const char *notice)
{
	pmbot_buf hist = PMBOT_BUF_INIT;
	int err = 0;

	if (s->body && pmbot_comment_history(&hist, s->body, strlen(s->body)) < 0)
		err = -1;
	if (!err && notice && *notice)
		err = pmbot_buf_puts(out, notice);
	while (out->len && out->buf[out->len - 1] == '\n')
		pmbot_buf_truncate(out, out->len - 1);
	if (!err && hist.len)
		err = pmbot_buf_printf(out, "%s%s", out->len ? "\n\n" : "", hist.buf);
	pmbot_buf_free(&hist);
	return err ? -1 : 0;
}

/*
 * Plan `head` of PR `number` and show it: in its one comment unless
 * `summary_only`. `notice` (may be NULL) goes first, then the history
 * line of the last apply. Exit 2 when the reports are invalid.
 */
static int show_pr_plan(struct pmbot_action *a, long number, const char *head, int summary_only,
	const char *notice)
{
	struct pr_plan p;
	struct slot s;
	pmbot_comment_meta meta;
	pmbot_comment_input ci;
	pmbot_buf full = PMBOT_BUF_INIT;
	const char *status;
	int rc;

	memset(&s, 0, sizeof(s));
	rc = pr_plan_make(a, &p, head);
	if (rc == RC_RUNTIME)
		goto done;
	if (rc == RC_INVALID)
		status = "invalid";
	else
		status = pmbot_plan_count(p.bundle) ? "planned" : "no_changes";
	a->result = status;
	meta_for(&meta, "plan", number, head, a->plan_hash, status);
	memset(&ci, 0, sizeof(ci));
	ci.meta = &meta;
	/* An invalid plan shows its diagnostics only: no items, no text read from GitHub. */
	ci.bundle = rc == RC_INVALID ? NULL : p.bundle;
	ci.graph = rc == RC_INVALID ? NULL : p.in.graph;
	ci.diags = &p.diags;
	ci.notice = notice;
	if (!summary_only && pmbot_action__slot_find(a, &s, 0, number) != RC_OK) {
		rc = RC_RUNTIME;
		goto done;
	}
	if (!summary_only) {
		if (replan_notice(&full, &s, notice) < 0) {
			rc = RC_RUNTIME;
			goto done;
		}
		ci.notice = full.len ? full.buf : NULL;
	}
	if (pmbot_action__show(a, summary_only ? NULL : &s, &ci) != RC_OK) {
		rc = RC_RUNTIME;
		goto done;
	}
	/* What was shown is what an approval names: kept to say later what moved. */
	if (!summary_only && rc == RC_OK && p.bundle && pmbot_plan_count(p.bundle) &&
	    a->comment_number == number)
		keep_shown(a, number, p.bundle);
	/* A push always plans into the summary: its result is the plan's. */
	if (summary_only && number)
		a->result = "summary_only";
	if (!strcmp(status, "invalid"))
		rc = RC_INVALID;
done:
	pmbot_buf_free(&full);
	pmbot_action__slot_clear(&s);
	pr_plan_free(&p);
	return rc;
}

static int on_pull_request(struct pmbot_action *a)
{
	if (a->ev->is_fork)
		pmbot_note(a->notes, PMBOT_NOTE_NOTICE, "pm-bot: a pull request from a fork gets its plan in the job summary only");
	return show_pr_plan(a, a->ev->number, a->ev->head_sha, a->ev->is_fork, NULL);
}

static int on_push(struct pmbot_action *a)
{
	char head[PMBOT_OID_HEX_SIZE];
	const char *sha = a->ev->after ? a->ev->after : a->env.sha;

	if (!sha || pmbot_repo_resolve(head, a->repo, sha, NULL) < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "the pushed commit %s is not in %s", (sha ? sha : "(none)"),
			(a->dir));
		return RC_RUNTIME;
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

/* Writes an apply run makes after the apply: the plan comment, the lock's release, a reaction. */
#define AFTER_APPLY_WRITES 3

/* The run's GitHub cache directory (chosen, or the default under $RUNNER_TEMP), or NULL. */
static const char *cache_dir_of(const struct pmbot_action *a)
{
	if (a->opts.cache_dir && *a->opts.cache_dir)
		return a->opts.cache_dir;
	return a->cache_dir.len ? a->cache_dir.buf : NULL;
}

/*
 * Keep the approved plan `bundle` (whose plan_hash is `hash`) as
 * <cache>/plans/<hash>.json, for a later run continuing its apply after a
 * pause: a re-run of the workflow has only the approval comment's hash, and
 * the fresh plan then holds only what is left. Not fatal: without it a
 * paused apply needs a new approval.
 */
static void keep_approved(struct pmbot_action *a, const json_t *bundle, const char *hash)
{
	const char *dir = cache_dir_of(a);
	pmbot_buf path = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;

	if (!dir)
		return;
	if (pmbot_buf_printf(&path, "%s/plans", dir) < 0 || pmbot_fs_mkdirs(path.buf, 0700) < 0 ||
	    pmbot_buf_printf(&path, "/%s.json", hash) < 0 || pmbot_json_canonical(&text, bundle) < 0 ||
	    pmbot_fs_write_atomic(path.buf, text.buf, text.len) < 0)
		pmbot_note(a->notes, PMBOT_NOTE_WARNING, "cannot keep the approved plan in %s (%s): "
			"if the apply pauses, continuing it will need a new approval", dir, strerror(errno));
	pmbot_buf_free(&path);
	pmbot_buf_free(&text);
}

/*
 * Keep the plan last shown on PR `number` as <cache>/plans/shown-pr-<N>.json
 * (one per pull request, replaced by the next): when an approval of it
 * comes too late, the run compares it with the fresh plan to say which
 * issues moved. The Actions cache carries plans/ between runs where its
 * scope allows (a comment's run sees what comment runs kept). Not fatal.
 */
static void keep_shown(struct pmbot_action *a, long number, const json_t *bundle)
{
	const char *dir = cache_dir_of(a);
	pmbot_buf path = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;

	if (!dir)
		return;
	if (pmbot_buf_printf(&path, "%s/plans", dir) < 0 || pmbot_fs_mkdirs(path.buf, 0700) < 0 ||
	    pmbot_buf_printf(&path, "/shown-pr-%ld.json", number) < 0 ||
	    pmbot_json_canonical(&text, bundle) < 0 ||
	    pmbot_fs_write_atomic(path.buf, text.buf, text.len) < 0)
		pmbot_note(a->notes, PMBOT_NOTE_INFO, "cannot keep the plan shown in %s (%s): a stale "
			"approval will say less about what moved", dir, strerror(errno));
	pmbot_buf_free(&path);
	pmbot_buf_free(&text);
}

/*
 * A plan kept under <cache>/plans/`name`, believed only when its content
 * hashes to `hash` (a cache is outside input). NULL when absent or not it.
 */
static json_t *load_kept(struct pmbot_action *a, const char *name, const char *hash)
{
	const char *dir = cache_dir_of(a);
	pmbot_buf path = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;
	char sum[PMBOT_SHA256_HEX_SIZE];
	json_t *plan = NULL;

	pmbot_buf_init(&text, PMBOT_STATE_MAX_BYTES);
	if (!dir || pmbot_buf_printf(&path, "%s/plans/%s", dir, name) < 0 ||
	    pmbot_fs_read(&text, path.buf) < 0 ||
	    !(plan = json_loadb(text.buf, text.len, JSON_REJECT_DUPLICATES, NULL)) ||
	    !json_is_string(json_object_get(plan, "plan_hash")) ||
	    strcmp(json_string_value(json_object_get(plan, "plan_hash")), hash) ||
	    pmbot_plan_hash(sum, json_object_get(plan, "changesets"),
		    json_object_get(plan, "fingerprint")) < 0 || strcmp(sum, hash)) {
		json_decref(plan);
		plan = NULL;
	}
	pmbot_buf_free(&path);
	pmbot_buf_free(&text);
	return plan;
}

/*
 * The notice of a stale approval of `hash` on the PR: what pm-bot can name
 * of what moved (pmbot_comment_stale_notice()), from the comment's header
 * `shown` (NULL: none), the head now, and the approved plan when this
 * runner kept it (approved, else shown) compared with the fresh plan.
 */
static int stale_notice(pmbot_buf *out, struct pmbot_action *a, const pmbot_comment_meta *shown,
	const char *head, const char *hash, const struct pr_plan *p)
{
	pmbot_diag_list check = PMBOT_DIAG_LIST_INIT;
	pmbot_comment_stale st;
	pmbot_buf name = PMBOT_BUF_INIT;
	json_t *approved = NULL;
	int rc = -1;

	if (pmbot_buf_printf(&name, "%s.json", hash) < 0)
		goto done;
	if (!(approved = load_kept(a, name.buf, hash))) {
		pmbot_buf_clear(&name);
		if (pmbot_buf_printf(&name, "shown-pr-%ld.json", a->ev->number) < 0)
			goto done;
		approved = load_kept(a, name.buf, hash);
	}
	if (approved && p->bundle && p->in.state &&
	    pmbot_apply_check(approved, p->bundle, p->in.state, p->in.config, &check) == PMBOT_ERROR)
		goto done;
	memset(&st, 0, sizeof(st));
	st.approver = a->ev->comment_author;
	st.approved = hash;
	st.fresh_hash = a->plan_hash;
	st.shown = shown;
	st.head = head;
	st.invalid = p->load_rc != RC_OK;
	st.approved_bundle = approved;
	st.fresh_bundle = p->load_rc == RC_OK ? p->bundle : NULL;
	st.check = &check;
	rc = pmbot_comment_stale_notice(out, &st) < 0 ? -1 : 0;
done:
	json_decref(approved);
	pmbot_diag_list_free(&check);
	pmbot_buf_free(&name);
	return rc;
}

/* An approved plan applied to the end needs no keeping (the cache stays small). */
static void drop_approved(struct pmbot_action *a, const char *hash)
{
	const char *dir = cache_dir_of(a);
	pmbot_buf path = PMBOT_BUF_INIT;

	if (dir && pmbot_buf_printf(&path, "%s/plans/%s.json", dir, hash) == 0)
		unlink(path.buf);
	pmbot_buf_clear(&path);
	if (dir && pmbot_buf_printf(&path, "%s/plans/%s.pr", dir, hash) == 0)
		unlink(path.buf);
	pmbot_buf_free(&path);
}

/*
 * Note beside the kept plan which pull request paused on it
 * (<cache>/plans/<hash>.pr, its number): where a scheduled run looks for
 * applies to continue. Only a hint: the run believes GitHub (pm-bot's own
 * comment, the approval, the permission), never the file. Not fatal:
 * without it a re-run still continues the apply.
 */
static void keep_paused_hint(struct pmbot_action *a, const char *hash, long number)
{
	const char *dir = cache_dir_of(a);
	pmbot_buf path = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;

	if (!dir)
		return;
	if (pmbot_buf_printf(&path, "%s/plans", dir) < 0 || pmbot_fs_mkdirs(path.buf, 0700) < 0 ||
	    pmbot_buf_printf(&path, "/%s.pr", hash) < 0 ||
	    pmbot_buf_printf(&text, "%ld\n", number) < 0 ||
	    pmbot_fs_write_atomic(path.buf, text.buf, text.len) < 0)
		pmbot_note(a->notes, PMBOT_NOTE_WARNING, "cannot note the paused apply in %s (%s): "
			"a scheduled run will not continue it; re-run the workflow instead", dir,
			strerror(errno));
	pmbot_buf_free(&path);
	pmbot_buf_free(&text);
}

/*
 * Does the fresh plan (p->bundle, whose hash differs from the approved
 * `hash`) continue the approved plan? The approved plan is the one a run
 * kept (keep_approved); it is trusted for what it is, not for where it was
 * found: its content must hash to `hash` and pmbot_apply_check() must take
 * the fresh plan for a resumed apply of it (every fresh changeset approved,
 * no new conflict, everything approved and missing visibly applied).
 * 1 yes (`*total` the approved plan's changesets), 0 no.
 */
static int resumes_approved(struct pmbot_action *a, const struct pr_plan *p, const char *hash,
	size_t *total)
{
	const char *dir = cache_dir_of(a);
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf path = PMBOT_BUF_INIT;
	json_t *approved = NULL;
	int yes = 0, r;

	if (!dir || !p->bundle || !p->in.state ||
	    pmbot_buf_printf(&path, "%s/plans/%s.json", dir, hash) < 0)
		goto done;
	/* The cache is outside input too: only a checked plan is compared. */
	r = pmbot_bundle_load(&approved, path.buf, &diags);
	if (r == PMBOT_EINVALID && diags.count)
		pmbot_note(a->notes, PMBOT_NOTE_INFO, "the kept approved plan is damaged, not continued: "
			"%s %s: %s", diags.items[0].code, diags.items[0].path[0] ? diags.items[0].path :
			"(root)", diags.items[0].message);
	if (r != PMBOT_OK || strcmp(pmbot_bundle_plan_hash(approved), hash))
		goto done;
	pmbot_diag_list_free(&diags);
	if (pmbot_apply_check(approved, p->bundle, p->in.state, p->in.config, &diags) == PMBOT_OK) {
		*total = pmbot_plan_count(approved);
		yes = 1;
	} else if (diags.count) {
		pmbot_note(a->notes, PMBOT_NOTE_INFO, "not a continuation of the approved plan: %s %s",
			diags.items[0].code, diags.items[0].message);
	}
done:
	json_decref(approved);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&path);
	return yes;
}

/*
 * A closed or merged pull request is over: approving it writes nothing.
 * RC_OK when open; RC_INVALID (audited, reacted to, result "denied").
 */
static int refuse_closed(struct pmbot_action *a, const pmbot_gh_pull *pull, const char *hash)
{
	const char *reason = pull->merged ? "PR_MERGED" : "PR_CLOSED";

	if (!strcmp(pull->state, "open"))
		return RC_OK;
	pmbot_action__audit(a, "denial", json_pack("{s:s?, s:s, s:I, s:s}", "actor", a->ev->comment_author,
		"plan_hash", hash, "pr", (json_int_t)a->ev->number, "reason", reason));
	pmbot_note(a->notes, PMBOT_NOTE_ERROR, "pull request #%ld is %s: nothing is applied", a->ev->number,
		pull->merged ? "merged" : "closed");
	pmbot_action__react(a, "-1");
	a->result = "denied";
	return RC_INVALID;
}

/* The default branch's configuration, for decisions made before any plan. EXIT_*. */
static int load_policy(struct pmbot_action *a, pmbot_config **config)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf why = PMBOT_BUF_INIT;
	int r, rc = RC_OK;

	r = pmbot_source_config_at(config, NULL, a->repo, a->default_rev,
		a->config_path ? a->config_path : PMBOT_CONFIG_PATH, a->slug, &diags, &why);
	pmbot_diag_list_free(&diags);
	if (r == PMBOT_EINVALID) {
		rc = RC_INVALID;
	} else if (r < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot read the configuration: %s", why.buf);
		rc = RC_RUNTIME;
	}
	pmbot_buf_free(&why);
	return rc;
}

static int on_apply(struct pmbot_action *a, const pmbot_command *cmd)
{
	pmbot_gh_pull pull;
	struct pr_plan p;
	struct slot s;
	pmbot_buf err = PMBOT_BUF_INIT, notice = PMBOT_BUF_INIT, key = PMBOT_BUF_INIT;
	pmbot_comment_meta meta;
	pmbot_comment_input ci;
	pmbot_config *policy = NULL;
	pmbot_apply_start start;
	json_t *results = NULL;
	size_t total = 0;
	int rc, r, locked = 0, resumed = 0, paused;

	memset(&pull, 0, sizeof(pull));
	memset(&p, 0, sizeof(p));
	memset(&s, 0, sizeof(s));
	if (pmbot_gh_pull_get(&pull, a->client, a->slug, a->ev->number, &err) < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot read pull request #%ld: %s", a->ev->number,
			(err.len ? err.buf : "unknown error"));
		rc = RC_RUNTIME;
		goto done;
	}
	if ((rc = refuse_closed(a, &pull, cmd->hash)) != RC_OK)
		goto done;
	if ((rc = load_policy(a, &policy)) == RC_RUNTIME)
		goto done;
	if (rc == RC_INVALID) {
		rc = show_pr_plan(a, a->ev->number, pull.head_sha, 0, NULL);
		goto done;
	}
	if ((rc = pmbot_action__authorize(a, policy, cmd->hash)) != RC_OK)
		goto done;
	/* The lock covers planning too: a plan made before another run applied is stale. */
	if (pmbot_buf_printf(&key, "pr-%ld", a->ev->number) < 0) {
		rc = RC_RUNTIME;
		goto done;
	}
	if ((rc = pmbot_action__lock(a, key.buf)) != RC_OK) {
		pmbot_action__react(a, "confused");
		goto done;
	}
	locked = 1;
	if ((rc = pr_plan_make(a, &p, pull.head_sha)) == RC_RUNTIME)
		goto done;
	if ((rc = pmbot_action__slot_find(a, &s, 0, a->ev->number)) != RC_OK)
		goto done;
	/*
	 * Stale: no plan shown, the head moved since, or the plan is not the
	 * one approved, nor what is left of it after a paused apply.
	 */
	if (s.has_meta && !strcmp(s.meta.head, pull.head_sha) && p.load_rc == RC_OK &&
	    strcmp(a->plan_hash, cmd->hash))
		resumed = resumes_approved(a, &p, cmd->hash, &total);
	if (!s.has_meta || strcmp(s.meta.head, pull.head_sha) || p.load_rc != RC_OK ||
	    (strcmp(a->plan_hash, cmd->hash) && !resumed)) {
		pmbot_action__audit(a, "denial", json_pack("{s:s, s:s, s:s, s:I, s:s}", "actor",
			a->ev->comment_author, "plan_hash", cmd->hash, "fresh_hash", a->plan_hash,
			"pr", (json_int_t)a->ev->number, "reason", "STALE_PLAN"));
		if (stale_notice(&notice, a, s.has_meta ? &s.meta : NULL, pull.head_sha, cmd->hash,
			    &p) < 0) {
			rc = RC_RUNTIME;
			goto done;
		}
		pmbot_action__slot_clear(&s);
		rc = show_pr_plan(a, a->ev->number, pull.head_sha, 0, notice.buf);
		pmbot_action__react(a, "confused");
		a->result = "stale";
		goto done;
	}
	if (a->audit_corrupt) {
		rc = pmbot_action__refuse_unledgered(a);
		goto done;
	}
	if ((rc = pmbot_action__slot_lock(a, &s)) != RC_OK) {
		pmbot_action__react(a, "confused");
		goto done;
	}
	pmbot_action__audit(a, "approval", json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:b}", "actor",
		a->ev->comment_author, "how", "/pm-bot apply", "plan_hash", cmd->hash,
		"pr", (json_int_t)a->ev->number, "changesets", (json_int_t)pmbot_plan_count(p.bundle),
		"head", pull.head_sha, "resumed", resumed));
	if (!resumed) {
		total = pmbot_plan_count(p.bundle);
		keep_approved(a, p.bundle, cmd->hash);
	}
	pmbot_buf_clear(&err);
	/* What the run writes after a pause (the comment, the lock) must still fit the budget. */
	pmbot_github_budget_hold(a->client, AFTER_APPLY_WRITES);
	/*
	 * From the state the plan was checked against: read under the lock,
	 * after the approval was verified; only the pull request's comment was
	 * written since, and no issue a plan reads is a pull request.
	 */
	pmbot_inputs_start(&start, &p.in);
	r = pmbot_apply_run_from(&results, p.bundle, NULL, p.in.backend, p.in.config, a->audit,
		a->ev->comment_author, NULL, &start, &err);
	pmbot_github_budget_hold(a->client, 0);
	paused = r == PMBOT_BACKEND_EPAUSED;
	if (paused) {
		/* Against the approved plan, so every run of it tells the same k of N. */
		if (pmbot_apply_progress(&err, total, results, p.in.backend->resume_at) < 0) {
			paused = 0;
			r = PMBOT_ERROR;
		} else {
			pmbot_note(a->notes, PMBOT_NOTE_NOTICE, "%s", err.buf);
		}
	}
	if (r != PMBOT_OK && !paused)
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "%s", (err.len ? err.buf : "apply stopped"));
	a->result = r == PMBOT_OK ? "applied" : paused ? "paused" : "failed";
	if (r == PMBOT_OK)
		drop_approved(a, cmd->hash);
	if (paused)
		keep_paused_hint(a, cmd->hash, a->ev->number);
	if (paused)
		pmbot_buf_printf(&notice, "**Paused: %s.** Approved by @%s. GitHub's limits on "
			"writes leave no room before then; the next scheduled run of pm-bot after that "
			"time continues it (or re-run this workflow). The approval of `%s` still holds.",
			err.buf, a->ev->comment_author, cmd->hash);
	else
		results_notice(&notice, results, a->ev->comment_author, r == PMBOT_OK);
	pmbot_action__ledger_note(&notice, a);
	/* A paused comment names the approved hash: what a re-run continues. */
	meta_for(&meta, "plan", a->ev->number, pull.head_sha, paused ? cmd->hash : a->plan_hash,
		a->result);
	memset(&ci, 0, sizeof(ci));
	ci.meta = &meta;
	ci.bundle = p.bundle;
	ci.graph = p.in.graph;
	ci.diags = &p.diags;
	ci.notice = notice.buf;
	ci.results = results;
	rc = pmbot_action__show(a, &s, &ci);
	/* A pause is neither: the reaction comes with the run that finishes. */
	if (!paused)
		pmbot_action__react(a, r == PMBOT_OK ? "+1" : "-1");
	if (rc == RC_OK && r != PMBOT_OK && !paused)
		rc = r == PMBOT_EINVALID ? RC_INVALID : RC_RUNTIME;
done:
	if (locked)
		pmbot_action__unlock(a, key.buf);
	json_decref(results);
	pmbot_action__slot_clear(&s);
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
 * RC_OK allowed; RC_INVALID refused (audited, reacted to, "denied").
 */
static int may_replan_fork(struct pmbot_action *a, const pmbot_gh_pull *pull)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_permission have;
	char *perm = NULL;
	int rc = RC_OK;

	if (pull->head_repo[0] && !strcasecmp(pull->head_repo, pull->base_repo))
		return RC_OK;
	if (pmbot_gh_permission(&perm, a->client, a->slug, a->ev->comment_author, &err) < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot read %s's permission: %s", a->ev->comment_author,
			err.len ? err.buf : "unknown error");
		rc = RC_RUNTIME;
		goto done;
	}
	if (pmbot_permission_parse(&have, perm) == PMBOT_OK && have >= PMBOT_PERM_WRITE)
		goto done;
	pmbot_action__audit(a, "denial", json_pack("{s:s, s:s, s:I, s:s}", "actor", a->ev->comment_author,
		"permission", perm, "pr", (json_int_t)a->ev->number, "reason", "FORK_PLAN_NOT_ALLOWED"));
	pmbot_note(a->notes, PMBOT_NOTE_ERROR, "%s may not re-plan a pull request from a fork: that needs write "
		"permission", a->ev->comment_author);
	pmbot_action__react(a, "-1");
	pmbot_action__reply(a, "re-planning a pull request from a fork runs its reports with this "
		"repository's token: that needs write permission or higher.");
	a->result = "denied";
	rc = RC_INVALID;
done:
	free(perm);
	pmbot_buf_free(&err);
	return rc;
}

/*
 * A `/pm-bot` line pm-bot did not understand: the commenter addressed
 * pm-bot, so it answers with a reaction (👍 for help, 😕 otherwise), the
 * reply in the log and the job summary, and on the pull request in the
 * reply block of pm-bot's comment (pmbot_action__reply()).
 */
static int on_unknown(struct pmbot_action *a, const pmbot_command *cmd)
{
	pmbot_buf reply = PMBOT_BUF_INIT;
	int is_help = 0, rc = RC_OK;

	if (pmbot_command_reply(&reply, &is_help, cmd) < 0) {
		rc = RC_RUNTIME;
		goto done;
	}
	pmbot_note(a->notes, PMBOT_NOTE_NOTICE, "pm-bot: %s", reply.buf);
	if (pmbot_buf_printf(&a->summary, "%s\n", reply.buf) < 0) {
		rc = RC_RUNTIME;
		goto done;
	}
	pmbot_action__react(a, is_help ? "+1" : "confused");
	pmbot_action__reply(a, reply.buf);
	a->result = "ignored";
done:
	pmbot_buf_free(&reply);
	return rc;
}

static int on_comment(struct pmbot_action *a)
{
	pmbot_command cmd;
	pmbot_gh_pull pull;
	pmbot_buf err = PMBOT_BUF_INIT;
	int rc;

	if (pmbot_command_parse(&cmd, a->ev->comment_body) < 0)
		return RC_RUNTIME;
	if (cmd.kind == PMBOT_CMD_NONE) {
		a->result = "ignored";
		return RC_OK;
	}
	if (cmd.kind == PMBOT_CMD_UNKNOWN)
		return on_unknown(a, &cmd);
	if (!a->ev->is_pull_request)
		return pmbot_action__field_sync(a, &cmd);
	pmbot_action__react(a, "eyes");
	if (cmd.kind == PMBOT_CMD_APPLY)
		return on_apply(a, &cmd);
	memset(&pull, 0, sizeof(pull));
	if (pmbot_gh_pull_get(&pull, a->client, a->slug, a->ev->number, &err) < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot read pull request #%ld: %s", a->ev->number,
			(err.len ? err.buf : "unknown error"));
		pmbot_buf_free(&err);
		return RC_RUNTIME;
	}
	if ((rc = may_replan_fork(a, &pull)) == RC_OK)
		rc = show_pr_plan(a, a->ev->number, pull.head_sha, 0, NULL);
	pmbot_gh_pull_clear(&pull);
	pmbot_buf_free(&err);
	return rc;
}

/* ---- continuing paused applies (schedule, workflow_dispatch) ------------ */

/* At most this many paused applies are continued by one scheduled run. */
#define RESUME_MAX_PER_RUN 5
/* Hints looked at per run; approvals of one hash looked at per PR. */
#define RESUME_MAX_HINTS 100
#define RESUME_MAX_APPROVALS 20

/* The `/pm-bot apply <hash>` comments on one pull request, oldest first. */
struct approvals {
	const char *hash;
	const char *self;
	size_t n;
	int oom;
	long long id[RESUME_MAX_APPROVALS];
	char *login[RESUME_MAX_APPROVALS];
};

static void approvals_free(struct approvals *ap)
{
	size_t i;

	for (i = 0; i < ap->n; i++)
		free(ap->login[i]);
	ap->n = 0;
}

static int approval_seen(void *payload, long long id, const char *login, int is_bot, const char *body)
{
	struct approvals *ap = payload;
	pmbot_command cmd;

	/* As for a comment event: a bot's text approves nothing (pm-bot's own quotes the command). */
	if (!login || is_bot || !strcasecmp(login, ap->self))
		return 0;
	if (pmbot_command_parse(&cmd, body) < 0 || cmd.kind != PMBOT_CMD_APPLY ||
	    strcmp(cmd.hash, ap->hash))
		return 0;
	if (!(ap->login[ap->n] = strdup(login))) {
		ap->oom = 1;
		return 1;
	}
	ap->id[ap->n++] = id;
	return ap->n == RESUME_MAX_APPROVALS;
}

/*
 * Who of `ap` may approve now, under the default branch's `policy`: the
 * index of the first, -1 when nobody (each refusal told), -2 when GitHub
 * could not say.
 */
static int approver_now(struct pmbot_action *a, const pmbot_config *policy, const struct approvals *ap,
	long number)
{
	pmbot_buf err = PMBOT_BUF_INIT, reason = PMBOT_BUF_INIT;
	char *perm = NULL;
	size_t i;
	int who = -1;

	for (i = 0; i < ap->n && who == -1; i++) {
		pmbot_buf_clear(&err);
		pmbot_buf_clear(&reason);
		free(perm);
		perm = NULL;
		if (pmbot_gh_permission(&perm, a->client, a->slug, ap->login[i], &err) < 0) {
			pmbot_note(a->notes, PMBOT_NOTE_ERROR, "pull request #%ld: cannot read %s's "
				"permission: %s", number, ap->login[i], err.len ? err.buf : "unknown error");
			who = -2;
		} else if (pmbot_approval_check(&reason, policy, ap->login[i], perm) == PMBOT_OK) {
			who = (int)i;
		} else {
			pmbot_note(a->notes, PMBOT_NOTE_INFO, "pull request #%ld: %s's approval no longer "
				"counts: %s", number, ap->login[i], reason.len ? reason.buf : "not allowed");
		}
	}
	free(perm);
	pmbot_buf_free(&err);
	pmbot_buf_free(&reason);
	return who;
}

static void forget_hint(struct pmbot_action *a, const char *hash)
{
	const char *dir = cache_dir_of(a);
	pmbot_buf path = PMBOT_BUF_INIT;

	if (dir && pmbot_buf_printf(&path, "%s/plans/%s.pr", dir, hash) == 0)
		unlink(path.buf);
	pmbot_buf_free(&path);
}

static int kept_plan_exists(struct pmbot_action *a, const char *hash)
{
	const char *dir = cache_dir_of(a);
	pmbot_buf path = PMBOT_BUF_INIT;
	struct stat st;
	int yes;

	yes = dir && pmbot_buf_printf(&path, "%s/plans/%s.json", dir, hash) == 0 &&
	      stat(path.buf, &st) == 0 && S_ISREG(st.st_mode);
	pmbot_buf_free(&path);
	return yes;
}

/*
 * The paused apply of `hash` on PR `number` cannot go on without a person:
 * say why in the log and in the plan comment, which then shows what is left
 * to approve (and so stops being "paused": later runs leave it alone).
 */
static int resume_refused(struct pmbot_action *a, long number, const char *head, const char *hash,
	const char *why)
{
	pmbot_buf notice = PMBOT_BUF_INIT;
	int rc;

	pmbot_note(a->notes, PMBOT_NOTE_WARNING, "pull request #%ld: the paused apply of %s is not "
		"continued: %s", number, hash, why);
	if (pmbot_buf_printf(&notice, "**Not continued.** The apply of `%s` paused and the "
		"scheduled run did not continue it: %s. What is left is planned below; approve it "
		"again with `/pm-bot apply <hash>` (the hash below).", hash, why) < 0) {
		pmbot_buf_free(&notice);
		return RC_RUNTIME;
	}
	forget_hint(a, hash);
	rc = show_pr_plan(a, number, head, 0, notice.buf);
	pmbot_buf_free(&notice);
	return rc;
}

/*
 * Continue the paused apply of `hash` on PR `number` if GitHub still says
 * so and its approval still holds; the apply itself is on_apply()'s, as for
 * the approval's own comment (permission again, the lock, a fresh plan that
 * must be a resumed apply of the kept one, the comment). *tried is 1 when
 * an apply ran. RC_*.
 */
static int resume_one(struct pmbot_action *a, long number, const char *hash, int *tried)
{
	struct slot s;
	struct approvals ap;
	pmbot_gh_pull pull;
	pmbot_config *policy = NULL;
	pmbot_buf err = PMBOT_BUF_INIT;
	const pmbot_event *saved = a->ev;
	pmbot_event ev;
	pmbot_command cmd;
	int rc, who;

	*tried = 0;
	memset(&s, 0, sizeof(s));
	memset(&ap, 0, sizeof(ap));
	memset(&pull, 0, sizeof(pull));
	ap.hash = hash;
	ap.self = a->self;
	/* Only pm-bot's own comment, in the paused state with this hash, says an apply waits. */
	if ((rc = pmbot_action__slot_find(a, &s, 0, number)) != RC_OK)
		goto done;
	if (!s.has_meta || strcmp(s.meta.status, "paused") || strcmp(s.meta.plan_hash, hash)) {
		pmbot_note(a->notes, PMBOT_NOTE_INFO, "pull request #%ld: no paused apply of %s "
			"there (the plan comment says %s); nothing to continue", number, hash,
			s.has_meta ? s.meta.status : "nothing");
		forget_hint(a, hash);
		goto done;
	}
	if (pmbot_gh_pull_get(&pull, a->client, a->slug, number, &err) < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot read pull request #%ld: %s", number,
			err.len ? err.buf : "unknown error");
		rc = RC_RUNTIME;
		goto done;
	}
	if (strcmp(pull.state, "open")) {
		pmbot_note(a->notes, PMBOT_NOTE_INFO, "pull request #%ld is %s: its paused apply "
			"is not continued", number, pull.merged ? "merged" : "closed");
		forget_hint(a, hash);
		goto done;
	}
	if ((rc = load_policy(a, &policy)) != RC_OK) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "pull request #%ld: the default branch's "
			"configuration cannot be read; its paused apply waits", number);
		goto done;
	}
	if (pmbot_gh_comment_each(a->client, a->slug, number, approval_seen, &ap, &err) < 0 || ap.oom) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot read the comments on pull request "
			"#%ld: %s", number, err.len ? err.buf : "out of memory");
		rc = RC_RUNTIME;
		goto done;
	}
	if (!ap.n) {
		rc = resume_refused(a, number, pull.head_sha, hash, "its approval comment is gone");
		goto done;
	}
	if ((who = approver_now(a, policy, &ap, number)) == -2) {
		rc = RC_RUNTIME;
		goto done;
	}
	if (who < 0) {
		/* Each refusal was told; the ledger keeps that the approval no longer held. */
		pmbot_action__audit(a, "denial", json_pack("{s:s, s:s, s:s, s:I, s:s}", "actor",
			ap.login[0], "how", "scheduled continuation", "plan_hash", hash,
			"pr", (json_int_t)number, "reason", "NOT_AUTHORIZED"));
		rc = resume_refused(a, number, pull.head_sha, hash, "nobody who approved it may "
			"approve any more");
		goto done;
	}
	if (!kept_plan_exists(a, hash)) {
		rc = resume_refused(a, number, pull.head_sha, hash, "the approved plan is not in "
			"this run's cache");
		goto done;
	}
	pmbot_note(a->notes, PMBOT_NOTE_NOTICE, "pull request #%ld: continuing the paused apply of "
		"%s, approved by %s", number, hash, ap.login[who]);
	/* The apply the approval's own comment would make, as if it came again. */
	ev = *saved;
	ev.kind = PMBOT_EV_ISSUE_COMMENT;
	ev.number = number;
	ev.is_pull_request = 1;
	ev.is_fork = 0;
	ev.comment_id = ap.id[who];
	ev.comment_body = NULL;
	ev.comment_author = ap.login[who];
	ev.comment_author_is_bot = 0;
	memset(&cmd, 0, sizeof(cmd));
	cmd.kind = PMBOT_CMD_APPLY;
	/* A hint's name: 64 hex digits (paused_hints). */
	memcpy(cmd.hash, hash, sizeof(cmd.hash) - 1);
	cmd.hash[sizeof(cmd.hash) - 1] = '\0';
	pmbot_action__slot_clear(&s);
	a->ev = &ev;
	*tried = 1;
	rc = on_apply(a, &cmd);
	a->ev = saved;
done:
	approvals_free(&ap);
	pmbot_action__slot_clear(&s);
	pmbot_config_free(policy);
	pmbot_gh_pull_clear(&pull);
	pmbot_buf_free(&err);
	return rc;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/*
 * The paused applies the cache's hints name, in name order (the same run
 * after run): "<64 hex>.pr" files holding a PR number. *n of them in
 * hashes/numbers.
 */
static void paused_hints(struct pmbot_action *a, char hashes[][65], long *numbers, size_t *n)
{
	const char *dir = cache_dir_of(a);
	pmbot_buf path = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;
	char *names[RESUME_MAX_HINTS];
	size_t count = 0, i;
	struct dirent *e;
	DIR *d;

	*n = 0;
	if (!dir || pmbot_buf_printf(&path, "%s/plans", dir) < 0 || !(d = opendir(path.buf))) {
		pmbot_buf_free(&path);
		return;
	}
	while ((e = readdir(d)) && count < RESUME_MAX_HINTS) {
		size_t len = strlen(e->d_name);

		if (len == 67 && !strcmp(e->d_name + 64, ".pr") &&
		    strspn(e->d_name, "0123456789abcdef") == 64 && (names[count] = strdup(e->d_name)))
			count++;
	}
	closedir(d);
	qsort(names, count, sizeof(*names), cmp_str);
	pmbot_buf_init(&text, 32);
	for (i = 0; i < count; i++) {
		char *end = NULL;
		long number;

		pmbot_buf_clear(&path);
		pmbot_buf_clear(&text);
		if (pmbot_buf_printf(&path, "%s/plans/%s", dir, names[i]) == 0 &&
		    pmbot_fs_read(&text, path.buf) == 0 && text.len && text.buf[0] >= '1' &&
		    text.buf[0] <= '9' && (errno = 0, number = strtol(text.buf, &end, 10)) > 0 &&
		    !errno && end && (*end == '\n' || !*end)) {
			memcpy(hashes[*n], names[i], 64);
			hashes[*n][64] = '\0';
			numbers[(*n)++] = number;
		}
		free(names[i]);
	}
	pmbot_buf_free(&path);
	pmbot_buf_free(&text);
}

int pmbot_action__resume_paused(struct pmbot_action *a, int *spent)
{
	char hashes[RESUME_MAX_HINTS][65];
	long numbers[RESUME_MAX_HINTS];
	const char *result = a->result;
	char plan_hash[sizeof(a->plan_hash)];
	long changes = a->changes, conflicts = a->conflicts;
	size_t n = 0, i, done = 0;
	long long free_at;
	int rc = RC_OK, r, tried;

	*spent = 0;
	memcpy(plan_hash, a->plan_hash, sizeof(plan_hash));
	paused_hints(a, hashes, numbers, &n);
	for (i = 0; i < n && done < RESUME_MAX_PER_RUN; i++) {
		/*
		 * Room for one write: from the time a paused comment names ("resumes
		 * after", when one write fits past the AFTER_APPLY_WRITES kept, which
		 * that run then spent) on. The apply's own writes then wait for a
		 * window that frees soon, or pause again.
		 */
		if ((free_at = pmbot_github_budget_free_at(a->client, 0))) {
			time_t t = (time_t)(free_at / 1000);
			struct tm tm;
			char when[32] = "later";

			if (gmtime_r(&t, &tm))
				strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
			pmbot_note(a->notes, PMBOT_NOTE_INFO, "the write budget is spent until %s: "
				"paused applies wait for a later run", when);
			*spent = 1;
			break;
		}
		if (a->audit_corrupt) {
			pmbot_note(a->notes, PMBOT_NOTE_ERROR, "the audit ledger is corrupt: paused "
				"applies are not continued until it is repaired or moved away");
			rc = RC_RUNTIME;
			break;
		}
		a->result = NULL;
		r = resume_one(a, numbers[i], hashes[i], &tried);
		if (r == RC_RUNTIME)
			rc = RC_RUNTIME;
		if (tried)
			done++;
		if (tried && a->result && !strcmp(a->result, "paused")) {
			*spent = 1;
			break;
		}
	}
	/* The run's outputs stay the field sync's; each apply told its own in its comment. */
	a->result = result;
	memcpy(a->plan_hash, plan_hash, sizeof(plan_hash));
	a->changes = changes;
	a->conflicts = conflicts;
	return rc;
}

/* The default branch's commit: where config and approval policy come from. */
static int resolve_default(struct pmbot_action *a)
{
	const char *b = a->default_branch;
	pmbot_buf ref = PMBOT_BUF_INIT;
	int r = PMBOT_ENOTFOUND;

	if (b) {
		if (pmbot_buf_printf(&ref, "refs/remotes/origin/%s", b) == 0)
			r = pmbot_repo_resolve(a->default_rev, a->repo, ref.buf, NULL);
		pmbot_buf_clear(&ref);
		if (r < 0 && pmbot_buf_printf(&ref, "refs/heads/%s", b) == 0)
			r = pmbot_repo_resolve(a->default_rev, a->repo, ref.buf, NULL);
	} else {
		r = pmbot_repo_resolve(a->default_rev, a->repo, "refs/remotes/origin/HEAD", NULL);
	}
	pmbot_buf_free(&ref);
	if (r < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "the default branch%s%s is not in %s: check it out with "
			"actions/checkout and fetch-depth: 0", b ? " " : "", (b ? b : ""),
			(a->dir));
		return RC_RUNTIME;
	}
	return RC_OK;
}

/*
 * Where the ledger (and the GitHub cache) go by default: under $RUNNER_TEMP,
 * outside the workspace, whose files come from the pull request. Without
 * $RUNNER_TEMP (a local run) <workspace>/.pm-bot, unless a path component
 * there is a symlink: a committed `.pm-bot` link must not steer a write,
 * so there is then no ledger (plans go on, applies refuse). RC_*.
 */
static int default_ledger(struct pmbot_action *a, pmbot_buf *path)
{
	const char *tmp = a->env.runner_temp;
	pmbot_buf dir = PMBOT_BUF_INIT, file = PMBOT_BUF_INIT;
	struct stat st;
	int rc = RC_RUNTIME;

	if (tmp && *tmp) {
		if (pmbot_buf_printf(&dir, "%s/pm-bot", tmp) < 0 ||
		    pmbot_buf_printf(path, "%s/audit.jsonl", dir.buf) < 0)
			goto done;
		if (!a->opts.cache_dir && !a->env.cache_dir_set &&
		    pmbot_buf_printf(&a->cache_dir, "%s/cache", dir.buf) < 0)
			goto done;
	} else if (pmbot_buf_printf(&dir, "%s/.pm-bot", a->dir) < 0 ||
		   pmbot_buf_printf(&file, "%s/audit.jsonl", dir.buf) < 0) {
		goto done;
	} else if ((lstat(dir.buf, &st) == 0 && !S_ISDIR(st.st_mode)) ||
		   (lstat(file.buf, &st) == 0 && !S_ISREG(st.st_mode))) {
		pmbot_note(a->notes, PMBOT_NOTE_WARNING, "pm-bot: the workspace's .pm-bot or its "
			"ledger is not a plain directory and file (a symlink?): no audit ledger is "
			"written; nothing is applied");
		rc = RC_OK;
		goto done;
	} else if (pmbot_buf_puts(path, file.buf) < 0) {
		goto done;
	}
	pmbot_fs_mkdirs(dir.buf, 0755);
	rc = RC_OK;
done:
	pmbot_buf_free(&dir);
	pmbot_buf_free(&file);
	return rc;
}

/* Append `text` to the file at `path` ($GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY; `name`). */
static int append_env_file(struct pmbot_action *a, const char *name, const char *path,
	const char *text, size_t len)
{
	FILE *f;
	int rc = 0;

	if (!path || !*path)
		return 0;
	if (!(f = fopen(path, "a"))) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot open $%s (%s): %s", name, path,
			strerror(errno));
		return -1;
	}
	if (fwrite(text, 1, len, f) != len)
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

int pmbot_action__refuse_unledgered(struct pmbot_action *a)
{
	pmbot_note(a->notes, PMBOT_NOTE_ERROR, "the audit ledger is corrupt: nothing is applied "
		"until it is repaired or moved away");
	pmbot_action__react(a, "-1");
	a->result = "failed";
	return RC_RUNTIME;
}

int pmbot_action__ledger_note(pmbot_buf *out, const struct pmbot_action *a)
{
	char head[PMBOT_SHA256_HEX_SIZE];
	size_t lines = 0;

	if (!a->audit || a->audit_corrupt)
		return 0;
	pmbot_audit_head(head, &lines, a->audit);
	return pmbot_buf_printf(out, "%sAudit ledger head: `%s` (%zu event%s).",
		out->len ? " " : "", head, lines, lines == 1 ? "" : "s") < 0 ? -1 : 0;
}

int pmbot_action_finish(struct pmbot_action *a)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	char head[PMBOT_SHA256_HEX_SIZE] = "";
	size_t lines = 0;
	int rc = 0;

	/* The head goes where the ledger's writer cannot change it later: the
	 * job summary and the step's outputs (docs/security.md). */
	if (a->audit && !a->audit_corrupt) {
		pmbot_audit_head(head, &lines, a->audit);
		if (pmbot_buf_printf(&a->summary, "%sAudit ledger head after this run: `%s` (%zu "
			"event%s). Check a copy of the ledger later with `pm-bot audit verify "
			"--head %s FILE`.\n", a->summary.len ? "\n" : "", head, lines,
			lines == 1 ? "" : "s", head) < 0)
			rc = PMBOT_ERROR;
	}
	if (pmbot_buf_printf(&out, "result=%s\nplan_hash=%s\nchanges=%ld\nconflicts=%ld\n"
		"audit_head=%s\n", a->result ? a->result : "ignored", a->plan_hash, a->changes,
		a->conflicts, head) < 0 ||
	    append_env_file(a, "GITHUB_OUTPUT", a->env.output, out.buf, out.len) < 0)
		rc = PMBOT_ERROR;
	if (a->summary.len && append_env_file(a, "GITHUB_STEP_SUMMARY", a->env.step_summary,
		a->summary.buf, a->summary.len) < 0)
		rc = PMBOT_ERROR;
	pmbot_buf_free(&out);
	return rc;
}

int pmbot_action_new(struct pmbot_action **out, const pmbot_action_env *env,
	const pmbot_action_opts *o, const pmbot_notes *notes)
{
	struct pmbot_action *a = calloc(1, sizeof(*a));
	int r;

	*out = NULL;
	if (!a)
		return PMBOT_ERROR;
	if (env)
		a->env = *env;
	if (o)
		a->opts = *o;
	a->notes = notes;
	a->dir = a->opts.dir && *a->opts.dir ? a->opts.dir : ".";
	a->config_path = a->opts.config_path;
	a->run_id = a->env.run_id && *a->env.run_id ? a->env.run_id : "local";
	a->what = PMBOT_ACT_IGNORE;
	pmbot_buf_init(&a->summary, 0);
	pmbot_buf_init(&a->cache_dir, 0);
	pmbot_buf_init(&a->server_url, 0);
	r = pmbot_action_server_url(&a->server_url, a->env.server_url);
	if (r == PMBOT_ERROR) {
		pmbot_action_free(a);
		return PMBOT_ERROR;
	}
	/* The value is not shown: it is what was refused. */
	if (r == PMBOT_EINVALID)
		pmbot_note(notes, PMBOT_NOTE_WARNING, "GITHUB_SERVER_URL is not an https:// "
			"server address pm-bot takes; links use %s", a->server_url.buf);
	*out = a;
	return PMBOT_OK;
}

int pmbot_action_decide(struct pmbot_action *a)
{
	const char *name = a->env.event_name, *path = a->env.event_path, *why = NULL, *ref;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text;
	int r;

	if (!name || !*name || !path || !*path) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "action runs inside GitHub Actions: "
			"GITHUB_EVENT_NAME and GITHUB_EVENT_PATH must be set");
		return PMBOT_EINVALID;
	}
	pmbot_buf_init(&text, PMBOT_EVENT_MAX_BYTES);
	if (pmbot_fs_read(&text, path) < 0) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot read the event %s: %s", path,
			strerror(errno));
		pmbot_buf_free(&text);
		return PMBOT_ERROR;
	}
	r = pmbot_event_parse(&a->own_ev, name, text.buf, text.len, &diags);
	pmbot_note_diags(a->notes, &diags);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&text);
	if (r != PMBOT_OK)
		return r == PMBOT_EINVALID ? PMBOT_EINVALID : PMBOT_ERROR;
	a->ev = a->own_ev;
	a->what = pmbot_event_decide(a->ev, &why);
	if (a->what == PMBOT_ACT_IGNORE) {
		pmbot_note(a->notes, PMBOT_NOTE_INFO, "nothing to do for this %s event: %s",
			a->ev->name, why ? why : "ignored");
		a->result = "ignored";
		return PMBOT_OK;
	}
	a->slug = a->ev->repo ? a->ev->repo : a->env.repository;
	a->default_branch = a->ev->default_branch;
	ref = a->env.ref;
	if (!a->default_branch && ref && !strncmp(ref, "refs/heads/", 11) &&
	    a->ev->kind == PMBOT_EV_SCHEDULE)
		a->default_branch = ref + 11;
	if (!a->slug || !*a->slug) {
		pmbot_note(a->notes, PMBOT_NOTE_ERROR,
			"neither the event nor $GITHUB_REPOSITORY names the repository");
		a->what = PMBOT_ACT_IGNORE;
		return PMBOT_EINVALID;
	}
	return PMBOT_OK;
}

int pmbot_action_ignored(const struct pmbot_action *a)
{
	return a->what == PMBOT_ACT_IGNORE;
}

/* Open the ledger: a corrupt one stops applies, not plans. RC_*. */
static int open_ledger(struct pmbot_action *a, const char *path)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	int rc = RC_OK;

	if (!path) {
		a->audit_corrupt = 1;
		return RC_OK;
	}
	if (pmbot_audit_open(&a->audit, path, &diags) < 0) {
		pmbot_note_diags(a->notes, &diags);
		/* A corrupt ledger committed to the workspace must not stop a plan; applies refuse. */
		if (!pmbot_diag_list_find(&diags, "AUDIT_BROKEN")) {
			pmbot_note(a->notes, PMBOT_NOTE_ERROR, "cannot open the audit ledger %s", path);
			rc = RC_RUNTIME;
		} else {
			pmbot_note(a->notes, PMBOT_NOTE_WARNING, "pm-bot: the audit ledger is corrupt: "
				"plans are shown, nothing is applied until it is repaired or moved away");
			a->audit_corrupt = 1;
		}
	}
	pmbot_diag_list_free(&diags);
	return rc;
}

int pmbot_action_run(struct pmbot_action *a, pmbot_repo *repo, pmbot_action_github_fn open_github,
	void *ctx)
{
	pmbot_buf audit_path = PMBOT_BUF_INIT;
	const char *ledger = a->opts.audit_path;
	int rc, r, spent = 0;

	if (a->what == PMBOT_ACT_IGNORE)
		return PMBOT_OK;
	a->repo = repo;
	if ((rc = resolve_default(a)) != RC_OK)
		goto done;
	if (!ledger && (rc = default_ledger(a, &audit_path)) != RC_OK)
		goto done;
	if ((rc = open_github(ctx, a->cache_dir.len ? a->cache_dir.buf : NULL, &a->client,
		&a->self_login)) != PMBOT_OK) {
		rc = rc == PMBOT_EINVALID ? RC_INVALID : RC_RUNTIME;
		goto done;
	}
	a->self = a->self_login ? a->self_login : DEFAULT_BOT;
	if (!ledger && audit_path.len)
		ledger = audit_path.buf;
	if ((rc = open_ledger(a, ledger)) != RC_OK)
		goto done;
	switch (a->what) {
	case PMBOT_ACT_PLAN_PR: rc = on_pull_request(a); break;
	case PMBOT_ACT_COMMAND: rc = on_comment(a); break;
	case PMBOT_ACT_PLAN_PUSH: rc = on_push(a); break;
	case PMBOT_ACT_FIELD_SYNC:
		/*
		 * Approved applies people wait for come first; the sync comes back
		 * every run, so it yields when they spent the budget.
		 */
		r = pmbot_action__resume_paused(a, &spent);
		if (spent) {
			pmbot_note(a->notes, PMBOT_NOTE_NOTICE, "pm-bot: the write budget is spent "
				"and paused applies wait for it; the field sync waits for the next "
				"scheduled run");
			a->result = "paused";
			rc = r;
		} else {
			rc = pmbot_action__field_sync(a, NULL);
			if (r == RC_RUNTIME)
				rc = RC_RUNTIME;
		}
		break;
	default: break;
	}
	/* A refused approval is handled, not a failure of the run. */
	if (rc == RC_INVALID && a->result && (!strcmp(a->result, "denied") ||
		!strcmp(a->result, "stale") || !strcmp(a->result, "busy")))
		rc = RC_OK;
done:
	pmbot_buf_free(&audit_path);
	return rc == RC_OK ? PMBOT_OK : rc == RC_INVALID ? PMBOT_EINVALID : PMBOT_ERROR;
}

/* A slug from the event is hostile: only "OWNER/NAME" of GitHub's alphabet is shown. */
static int slug_ok(const char *s)
{
	size_t slash = 0;

	for (; *s; s++) {
		if (*s == '/')
			slash++;
		else if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			(*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			return 0;
	}
	return slash == 1;
}

/* The one table of results and exit statuses (docs/action.md "Results"). */
static const pmbot_action_result_row results[] = {
	{ "planned", 0, "a plan with changes is shown" },
	{ "no_changes", 0, "GitHub already matches the reports" },
	{ "applied", 0, "an approved plan was applied" },
	{ "paused", 0, "the write budget is spent; the next scheduled run continues" },
	{ "denied", 0, "a command was refused (permission, closed pull request, fork)" },
	{ "stale", 0, "the approved plan no longer matches; a new plan is shown" },
	{ "busy", 0, "another run holds the plan's lock" },
	{ "summary_only", 0, "the plan went to the job summary: the comment could not be written" },
	{ "ignored", 0, "an event or comment pm-bot does not act on (unknown commands are answered)" },
	{ "invalid", 2, "invalid input: event, reports, configuration or repository" },
	{ "failed", 1, "a runtime failure (GitHub, git, the audit ledger)" },
};

const pmbot_action_result_row *pmbot_action_results(size_t *n)
{
	*n = sizeof(results) / sizeof(results[0]);
	return results;
}

int pmbot_action_result_exit(const char *result)
{
	size_t i;

	for (i = 0; i < sizeof(results) / sizeof(results[0]); i++)
		if (!strcmp(results[i].result, result))
			return results[i].exit_code;
	return -1;
}

int pmbot_action_conclude(struct pmbot_action *a, int rc)
{
	int want = rc == PMBOT_OK ? 0 : rc == PMBOT_EINVALID ? 2 : 1;
	int have = pmbot_action_result_exit(pmbot_action_result(a));

	/* The more severe of the two wins; the result then names it. */
	if (have == 1 || want == 1 || have < 0) {
		a->result = "failed";
		return PMBOT_ERROR;
	}
	if (have == 2 || want == 2) {
		a->result = "invalid";
		return PMBOT_EINVALID;
	}
	return PMBOT_OK;
}

#define DEFAULT_SERVER_URL "https://github.com"
#define SERVER_URL_MAX 200

static int is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* HOST[:PORT] as pmbot_action_server_url() takes it, `len` bytes at `s`. */
static int authority_ok(const char *s, size_t len)
{
	size_t i = 0, label = 0, digits = 0;

	for (; i < len && s[i] != ':'; i++) {
		if (s[i] == '.') {
			if (!label)
				return 0;
			label = 0;
		} else if (is_alnum(s[i]) || (s[i] == '-' && label)) {
			label++;
		} else {
			return 0;
		}
	}
	if (!label)
		return 0;
	if (i == len)
		return 1;
	for (i++; i < len; i++, digits++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return digits >= 1 && digits <= 5;
}

int pmbot_action_server_url(pmbot_buf *out, const char *value)
{
	size_t len, skip;

	if (!value || !*value)
		return pmbot_buf_puts(out, DEFAULT_SERVER_URL) < 0 ? PMBOT_ERROR : PMBOT_OK;
	len = strlen(value);
	if (len > SERVER_URL_MAX)
		goto bad;
	if (value[len - 1] == '/')
		len--;
	if (len >= 8 && !strncmp(value, "https://", 8))
		skip = 8;
	else if (len >= 16 && (!strncmp(value, "http://127.0.0.1", 16) ||
		 !strncmp(value, "http://localhost", 16)) && (len == 16 || value[16] == ':'))
		skip = 7;
	else
		goto bad;
	if (!authority_ok(value + skip, len - skip))
		goto bad;
	return pmbot_buf_put(out, value, len) < 0 ? PMBOT_ERROR : PMBOT_OK;
bad:
	return pmbot_buf_puts(out, DEFAULT_SERVER_URL) < 0 ? PMBOT_ERROR : PMBOT_EINVALID;
}

int pmbot_action_log_line(pmbot_buf *out, const struct pmbot_action *a)
{
	const char *result = pmbot_action_result(a);
	int err;

	/* Starts with "pm-bot:", so it never reads as a workflow command. */
	err = pmbot_buf_printf(out, "pm-bot: %s", result);
	if (!err && a->plan_hash[0])
		err = pmbot_buf_printf(out, ", %ld change%s, plan %.8s", a->changes,
			a->changes == 1 ? "" : "s", a->plan_hash);
	if (!err && a->conflicts)
		err = pmbot_buf_printf(out, ", %ld conflict%s", a->conflicts,
			a->conflicts == 1 ? "" : "s");
	if (!err && a->comment_number > 0 && a->slug && slug_ok(a->slug))
		err = a->comment_id > 0 ?
			pmbot_buf_printf(out, ", comment %s/%s/pull/%ld#issuecomment-%lld",
				a->server_url.buf, a->slug, a->comment_number, a->comment_id) :
			pmbot_buf_printf(out, ", issue %s/%s/issues/%ld", a->server_url.buf, a->slug,
				a->comment_number);
	return err ? -1 : 0;
}

const char *pmbot_action_result(const struct pmbot_action *a)
{
	return a->result ? a->result : "ignored";
}

const char *pmbot_action_plan_hash(const struct pmbot_action *a)
{
	return a->plan_hash;
}

const char *pmbot_action_summary(const struct pmbot_action *a)
{
	return a->summary.len ? a->summary.buf : "";
}

void pmbot_action_free(struct pmbot_action *a)
{
	if (!a)
		return;
	pmbot_audit_close(a->audit);
	pmbot_event_free(a->own_ev);
	pmbot_buf_free(&a->summary);
	pmbot_buf_free(&a->cache_dir);
	pmbot_buf_free(&a->server_url);
	free(a);
}
