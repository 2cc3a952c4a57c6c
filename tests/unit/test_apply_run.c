#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers/tmpdir.h"

#include "pmbot/apply.h"
#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/state.h"
#include "pmbot/banned.h"

/*
 * The executor against the real file backend, through the backend
 * interface. The bundle (tests/fixtures/bundles-apply/full.json) holds one
 * changeset of every operation: three creates, title/body/label updates of
 * an existing issue, two parents, a dependency added and one removed, a
 * project item and two field values.
 */

#define FIXTURES "tests/fixtures/bundles-apply/"
#define N_CHANGESETS 14
/* The first of the two consecutive set_project_field changesets of full.json. */
#define FIELD0 12
#define CONFIG "repos: [acme/widgets]\nproject: {owner: acme, number: 1}\n"

typedef struct {
	char dir[256];
	char state[320];
	char audit[320];
	json_t *bundle;
	pmbot_config *config;
} fixture;

static json_t *load_json(const char *path)
{
	json_error_t e;
	json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &e);

	if (!j)
		fail_msg("%s:%d: %s", path, e.line, e.text);
	return j;
}

static pmbot_config *parse_config(const char *yaml)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	assert_int_equal(pmbot_config_parse(&cfg, "pm-bot.yml", yaml, strlen(yaml), NULL, &d),
		PMBOT_OK);
	pmbot_diag_list_free(&d);
	return cfg;
}

/* A fresh directory holding a copy of the initial state (or `state_json` when given). */
static void fresh_dir(fixture *f, const json_t *state_json)
{
	const char *tmp = getenv("TMPDIR");
	pmbot_buf text = PMBOT_BUF_INIT;

	snprintf(f->dir, sizeof(f->dir), "%s/pmbot-test-apply-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->state, sizeof(f->state), "%s/state.json", f->dir);
	snprintf(f->audit, sizeof(f->audit), "%s/.pm-bot/audit.jsonl", f->dir);
	if (state_json)
		assert_int_equal(pmbot_json_canonical(&text, state_json), 0);
	else
		assert_int_equal(pmbot_fs_read(&text, FIXTURES "state-initial.json"), 0);
	assert_int_equal(pmbot_fs_write_atomic(f->state, text.buf, text.len), 0);
	pmbot_buf_free(&text);
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	setenv("PMBOT_NOW", "2025-06-01T12:00:00Z", 1);
	fresh_dir(f, NULL);
	f->bundle = load_json(FIXTURES "full.json");
	f->config = parse_config(CONFIG);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	test_remove_tree(f->dir);
	json_decref(f->bundle);
	pmbot_config_free(f->config);
	free(f);
	return 0;
}

/* ---- a backend wrapper that records calls and injects faults ---- */

enum { FAULT_NONE, FAULT_BEFORE, FAULT_LOST_RESPONSE, FAULT_REFUSE, FAULT_PAUSE };

/* When a FAULT_PAUSE budget frees: 2026-11-25T20:00:00Z. */
#define RESUME_AT 1795636800LL

typedef struct {
	pmbot_backend base;
	pmbot_backend *inner;
	const char *fault_op;   /* operation to fault */
	int fault;              /* FAULT_* */
	int fault_count;        /* how many calls of fault_op to fault; -1: all */
	int fault_skip;         /* let this many calls of fault_op through first */
	int seen;               /* calls of fault_op so far */
	json_t *calls;          /* [{op, args}]; a batch entry's op is "batch:<op>" */
	json_t *batches;        /* the size of each perform_batch call */
	json_t *scopes;         /* per scoped read: ["REPO stable_id" or "REPO#N", ...] */
	int reads;
} wrap;

/* The scope a scoped read was given, recorded; the file backend reads everything anyway. */
static int wrap_read_scoped(pmbot_state **out, pmbot_backend *b, const char *const *repos,
	size_t n_repos, const char *owner, long number, const pmbot_read_scope *scope,
	pmbot_buf *err)
{
	wrap *w = (wrap *)b;
	json_t *needs = json_array();
	char one[200];
	size_t i;

	for (i = 0; i < scope->n_needs; i++) {
		const pmbot_read_need *nd = &scope->needs[i];

		if (nd->stable_id)
			snprintf(one, sizeof(one), "%s %s", nd->repo, nd->stable_id);
		else
			snprintf(one, sizeof(one), "%s#%ld", nd->repo, nd->number);
		json_array_append_new(needs, json_string(one));
	}
	json_array_append_new(w->scopes, needs);
	w->reads++;
	return w->inner->read(out, w->inner, repos, n_repos, owner, number, err);
}

static int wrap_read(pmbot_state **out, pmbot_backend *b, const char *const *repos,
	size_t n_repos, const char *owner, long number, pmbot_buf *err)
{
	wrap *w = (wrap *)b;

	w->reads++;
	return w->inner->read(out, w->inner, repos, n_repos, owner, number, err);
}

static int wrap_perform(json_t **result, pmbot_backend *b, pmbot_operation opv, const json_t *args,
	pmbot_buf *err)
{
	wrap *w = (wrap *)b;
	const char *op = pmbot_operation_name(opv);
	int faulty = 0, rc;

	json_array_append_new(w->calls, json_pack("{s:s, s:O}", "op", op, "args", (json_t *)args));
	if (w->fault_op && !strcmp(op, w->fault_op)) {
		w->seen++;
		faulty = w->seen > w->fault_skip &&
			(w->fault_count < 0 || w->seen - w->fault_skip <= w->fault_count);
	}
	*result = NULL;
	if (faulty && w->fault == FAULT_BEFORE) {
		pmbot_buf_puts(err, "HTTP 502 from the test\n");
		return PMBOT_ERROR;
	}
	if (faulty && w->fault == FAULT_REFUSE) {
		pmbot_buf_puts(err, "HTTP 422 from the test\n");
		return PMBOT_EINVALID;
	}
	if (faulty && w->fault == FAULT_PAUSE) {
		w->base.resume_at = RESUME_AT;
		pmbot_buf_printf(err, "%s: not sent: the write budget is spent\n", op);
		return PMBOT_BACKEND_EPAUSED;
	}
	rc = w->inner->perform(result, w->inner, opv, args, err);
	if (faulty && w->fault == FAULT_LOST_RESPONSE && rc == PMBOT_OK) {
		/* The write happened; its answer never arrived. */
		json_decref(*result);
		*result = NULL;
		pmbot_buf_puts(err, "connection reset by the test\n");
		return PMBOT_ERROR;
	}
	return rc;
}

/*
 * A batching backend over the file backend: each entry is performed like
 * wrap_perform (faults included), recorded as "batch:<op>".
 */
static int wrap_perform_batch(json_t **results, int *codes, pmbot_backend *b, pmbot_operation opv,
	const json_t *const *args, size_t n, pmbot_buf *errs)
{
	wrap *w = (wrap *)b;
	const char *op = pmbot_operation_name(opv);
	size_t i;
	char name[64];

	if (strcmp(op, "set_project_field"))
		return PMBOT_EINVALID;
	json_array_append_new(w->batches, json_integer((json_int_t)n));
	for (i = 0; i < n; i++) {
		codes[i] = wrap_perform(&results[i], b, opv, args[i], &errs[i]);
		snprintf(name, sizeof(name), "batch:%s", op);
		json_object_set_new(json_array_get(w->calls, json_array_size(w->calls) - 1), "op",
			json_string(name));
	}
	return PMBOT_OK;
}

/*
 * A backend that fuses, over the file backend: create_issue with
 * parent_node_id / project_node_id creates the issue and then sets the
 * parent and adds the board item on the inner backend, saying in its
 * result what landed, as the GitHub backend's one createIssue does. With
 * `fuse_refuse` set the extras are dropped (GitHub refused them): the
 * result names none, and the executor must send them itself.
 */
static int fuse_refuse;

static int wrap_perform_fusing(json_t **result, pmbot_backend *b, pmbot_operation opv,
	const json_t *args, pmbot_buf *err)
{
	wrap *w = (wrap *)b;
	const char *op = pmbot_operation_name(opv);
	const char *parent = json_string_value(json_object_get(args, "parent_node_id"));
	const char *project = json_string_value(json_object_get(args, "project_node_id"));
	json_t *plain, *r = NULL;
	pmbot_state *st = NULL;
	int rc;
	size_t i;

	if (strcmp(op, "create_issue"))
		return wrap_perform(result, b, opv, args, err);
	json_array_append_new(w->calls, json_pack("{s:s, s:O}", "op", op, "args", (json_t *)args));
	plain = json_pack("{s:O, s:O, s:O, s:O}", "repo", json_object_get(args, "repo"),
		"title", json_object_get(args, "title"), "body", json_object_get(args, "body"),
		"labels", json_object_get(args, "labels"));
	rc = w->inner->perform(result, w->inner, opv, plain, err);
	json_decref(plain);
	if (rc != PMBOT_OK || fuse_refuse)
		return rc;
	if (parent) {
		assert_int_equal(w->inner->read(&st, w->inner, NULL, 0, NULL, 0, err), PMBOT_OK);
		for (i = 0; i < st->n_issues && strcmp(st->issues[i].node_id, parent); i++)
			;
		assert_true(i < st->n_issues);
		plain = json_pack("{s:O, s:O, s:O, s:s, s:I, s:b}", "repo", json_object_get(args, "repo"),
			"number", json_object_get(*result, "number"),
			"database_id", json_object_get(*result, "database_id"),
			"parent_repo", st->issues[i].repo, "parent_number", (json_int_t)st->issues[i].number,
			"replace", 0);
		assert_int_equal(w->inner->perform(&r, w->inner, PMBOT_OP_SET_PARENT, plain, err), PMBOT_OK);
		json_decref(plain);
		json_decref(r);
		pmbot_state_free(st);
		json_object_set_new(*result, "parent_node_id", json_string(parent));
	}
	if (project) {
		plain = json_pack("{s:O, s:O, s:O}", "repo", json_object_get(args, "repo"),
			"number", json_object_get(*result, "number"),
			"node_id", json_object_get(*result, "node_id"));
		assert_int_equal(w->inner->perform(&r, w->inner, PMBOT_OP_ADD_TO_PROJECT, plain, err), PMBOT_OK);
		json_decref(plain);
		json_object_set(*result, "item_id", json_object_get(r, "item_id"));
		json_decref(r);
	}
	return PMBOT_OK;
}

static void wrap_free(pmbot_backend *b)
{
	wrap *w = (wrap *)b;

	w->inner->free(w->inner);
	json_decref(w->batches);
	json_decref(w->calls);
	json_decref(w->scopes);
	free(w);
}

static wrap *wrap_open(const fixture *f)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	wrap *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	assert_int_equal(pmbot_file_backend_open(&w->inner, f->state, NULL, &d), PMBOT_OK);
	w->base.name = "wrapped-file";
	w->base.read = wrap_read;
	w->base.perform = wrap_perform;
	w->base.free = wrap_free;
	w->calls = json_array();
	w->batches = json_array();
	w->scopes = json_array();
	pmbot_diag_list_free(&d);
	return w;
}

static wrap *wrap_open_fusing(const fixture *f)
{
	wrap *w = wrap_open(f);

	w->base.name = "fusing-file";
	w->base.perform = wrap_perform_fusing;
	w->base.flags = PMBOT_BACKEND_FUSES | PMBOT_BACKEND_BATCHES_EDGES;
	return w;
}

static wrap *wrap_open_batching(const fixture *f)
{
	wrap *w = wrap_open(f);

	w->base.name = "batching-file";
	w->base.perform_batch = wrap_perform_batch;
	return w;
}

static size_t calls_of(const wrap *w, const char *op)
{
	size_t i, n = 0;
	json_t *c;

	json_array_foreach(w->calls, i, c)
		n += !strcmp(json_string_value(json_object_get(c, "op")), op);
	return n;
}

/* The args of the k-th (0-based) call of `op` (borrowed). */
static json_t *call_args(const wrap *w, const char *op, size_t k)
{
	size_t i;
	json_t *c;

	json_array_foreach(w->calls, i, c)
		if (!strcmp(json_string_value(json_object_get(c, "op")), op) && !k--)
			return json_object_get(c, "args");
	fail_msg("no call %zu of %s", k, op);
	return NULL;
}

/* ---- hooks ---- */

typedef struct {
	int stop_at;            /* before() stops when this many changesets were seen; -1 never */
	int kill_after;         /* after() kills the process after this many outcomes; -1 never */
	int seen, done;
	long slept;
	int naps;
	json_t *statuses;
} hook_ctx;

/* committed() kills the process at this many group commits, before() as
 * it sees this many changesets; -1 never. */
static int kill_at_commit = -1, kill_before = -1, commits_seen;

static int hook_before(void *ctx, const json_t *cs)
{
	hook_ctx *h = ctx;

	(void)cs;
	if (kill_before > 0 && h->seen + 1 >= kill_before)
		raise(SIGKILL);
	return h->seen++ == h->stop_at;
}

static void hook_after(void *ctx, const json_t *cs, const char *status)
{
	hook_ctx *h = ctx;

	if (h->statuses)
		json_array_append_new(h->statuses, json_pack("{s:O, s:s}", "id",
			json_object_get(cs, "changeset_id"), "status", status));
	if (++h->done == h->kill_after)
		raise(SIGKILL);
}

static void hook_committed(void *ctx, size_t n)
{
	(void)ctx;
	(void)n;
	if (kill_at_commit > 0 && ++commits_seen >= kill_at_commit)
		raise(SIGKILL);
}

static void hook_sleep(void *ctx, long ms)
{
	hook_ctx *h = ctx;

	h->slept += ms;
	h->naps++;
}

/* ---- running ---- */

static int apply_with(fixture *f, pmbot_backend *b, const pmbot_config *cfg, const json_t *bundle,
	const json_t *run, hook_ctx *h, json_t **results, pmbot_buf *err)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_apply_hooks hooks = { hook_before, hook_after, hook_sleep, h, hook_committed };
	pmbot_audit *audit = NULL;
	int rc;

	assert_int_equal(pmbot_audit_open(&audit, f->audit, &d), PMBOT_OK);
	rc = pmbot_apply_run(results, bundle, run, b, cfg, audit, "octocat", &hooks, err);
	pmbot_audit_close(audit);
	pmbot_diag_list_free(&d);
	return rc;
}

/*
 * Apply the fixture's bundle through a file backend without group commit,
 * as a backend without hold and commit (GitHub) is driven: each changeset
 * is durable, and told by hooks->after, before the next one starts.
 */
static int apply_ungrouped(fixture *f, hook_ctx *h, json_t **results)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_backend *b = NULL;
	int rc;

	assert_int_equal(pmbot_file_backend_open(&b, f->state, NULL, &d), PMBOT_OK);
	b->hold = NULL;
	b->commit = NULL;
	rc = apply_with(f, b, f->config, f->bundle, NULL, h, results, NULL);
	b->free(b);
	pmbot_diag_list_free(&d);
	return rc;
}

/* Apply `bundle` (NULL: the fixture's) through a plain file backend. */
static int apply(fixture *f, const json_t *bundle, const json_t *run, hook_ctx *h,
	json_t **results, pmbot_buf *err)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_backend *b = NULL;
	hook_ctx none = { -1, -1, 0, 0, 0, 0, NULL };
	int rc;

	assert_int_equal(pmbot_file_backend_open(&b, f->state, NULL, &d), PMBOT_OK);
	rc = apply_with(f, b, f->config, bundle ? bundle : f->bundle, run, h ? h : &none, results, err);
	b->free(b);
	pmbot_diag_list_free(&d);
	return rc;
}

static const char *status_of(const json_t *results, size_t i)
{
	return json_string_value(json_object_get(json_array_get(results, i), "status"));
}

static const char *field_of(const json_t *results, size_t i, const char *key)
{
	return json_string_value(json_object_get(json_array_get(results, i), key));
}

static void strip_key(json_t *v, const char *key)
{
	const char *k;
	json_t *m;
	size_t i;

	if (json_is_object(v)) {
		json_object_del(v, key);
		json_object_foreach(v, k, m)
			strip_key(m, key);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, m)
			strip_key(m, key);
	}
}

/* The state file as canonical JSON without timestamps (malloc'd). */
static char *state_text(const char *path)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	json_t *j = load_json(path);

	strip_key(j, "updated_at");
	assert_int_equal(pmbot_json_canonical(&out, j), 0);
	json_decref(j);
	return pmbot_buf_detach(&out, NULL);
}

static pmbot_state *read_state(const char *path)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text = PMBOT_BUF_INIT;
	pmbot_state *st = NULL;

	assert_int_equal(pmbot_fs_read(&text, path), 0);
	assert_int_equal(pmbot_state_parse(&st, path, text.buf, text.len, &d), PMBOT_OK);
	pmbot_buf_free(&text);
	pmbot_diag_list_free(&d);
	return st;
}

/* The ledger's events, parsed; verify the chain on the way. */
static json_t *ledger(const char *path)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text = PMBOT_BUF_INIT;
	json_t *events = json_array();
	size_t n = 0;
	char *p, *nl;

	if (pmbot_audit_verify(path, &n, &d) != PMBOT_OK)
		fail_msg("ledger broken: %s", d.count ? d.items[0].message : "?");
	assert_int_equal(pmbot_fs_read(&text, path), 0);
	for (p = text.buf; (nl = strchr(p, '\n')); p = nl + 1)
		json_array_append_new(events, json_loadb(p, (size_t)(nl - p), 0, NULL));
	assert_int_equal(json_array_size(events), n);
	pmbot_buf_free(&text);
	pmbot_diag_list_free(&d);
	return events;
}

static size_t count_events(const json_t *events, const char *event, const char *key,
	const char *value)
{
	size_t i, n = 0;
	json_t *e;

	json_array_foreach(events, i, e) {
		if (strcmp(json_string_value(json_object_get(e, "event")), event))
			continue;
		if (key && (!json_is_string(json_object_get(e, key)) ||
			strcmp(json_string_value(json_object_get(e, key)), value)))
			continue;
		n++;
	}
	return n;
}

/* The canonical end state of one clean, uninterrupted apply (malloc'd). */
static char *reference_state(void)
{
	fixture ref;
	json_t *results = NULL;
	char *text;

	memset(&ref, 0, sizeof(ref));
	fresh_dir(&ref, NULL);
	ref.bundle = load_json(FIXTURES "full.json");
	ref.config = parse_config(CONFIG);
	assert_int_equal(apply(&ref, NULL, NULL, NULL, &results, NULL), PMBOT_OK);
	text = state_text(ref.state);
	json_decref(results);
	json_decref(ref.bundle);
	pmbot_config_free(ref.config);
	test_remove_tree(ref.dir);
	return text;
}

static const pmbot_issue *issue_with_title(const pmbot_state *st, const char *title)
{
	size_t i;

	for (i = 0; i < st->n_issues; i++)
		if (!strcmp(st->issues[i].title, title))
			return &st->issues[i];
	fail_msg("no issue titled %s", title);
	return NULL;
}

/* ---- tests ---- */

static void test_apply_run__applies_every_operation_and_a_rerun_changes_nothing(void **state)
{
	fixture *f = *state;
	pmbot_buf before = PMBOT_BUF_INIT, after = PMBOT_BUF_INIT, ref = PMBOT_BUF_INIT;
	json_t *results = NULL, *events;
	const pmbot_issue *epic, *feat, *task, *old;
	const pmbot_pitem *item;
	pmbot_state *st;
	size_t i;

	(void)state;
	assert_int_equal(apply(f, NULL, NULL, NULL, &results, NULL), PMBOT_OK);
	assert_int_equal(json_array_size(results), N_CHANGESETS);
	for (i = 0; i < N_CHANGESETS; i++)
		assert_string_equal(status_of(results, i), "applied");
	json_decref(results);

	st = read_state(f->state);
	assert_int_equal(st->n_issues, 6);
	epic = issue_with_title(st, "[epic] Platform");
	feat = issue_with_title(st, "[feat] Contracts");
	task = issue_with_title(st, "[task] Parser");
	old = issue_with_title(st, "[task] Renamed");
	assert_int_equal(epic->number, 4);
	assert_string_equal(epic->author, "github-actions[bot]");
	assert_int_equal(pmbot_issue_ref(&ref, "acme/widgets", epic->number), 0);
	assert_string_equal(feat->parent, ref.buf);
	pmbot_buf_clear(&ref);
	assert_int_equal(pmbot_issue_ref(&ref, "acme/widgets", feat->number), 0);
	assert_string_equal(task->parent, ref.buf);
	assert_int_equal(task->n_blocked_by, 1);
	assert_string_equal(task->blocked_by[0], "acme/widgets#1");
	assert_int_equal(old->number, 1);
	assert_int_equal(old->n_blocked_by, 0);
	assert_int_equal(old->n_labels, 2);
	assert_string_equal(old->labels[0], "prio:high");
	assert_string_equal(old->labels[1], "type:task");
	assert_non_null(strstr(old->body, "New goal"));
	pmbot_buf_clear(&ref);
	assert_int_equal(pmbot_issue_ref(&ref, "acme/widgets", task->number), 0);
	assert_non_null(item = pmbot_state_item(st, ref.buf));
	assert_string_equal(json_string_value(json_object_get(item->values, "Priority")), "High");
	assert_non_null(item = pmbot_state_item(st, "acme/widgets#1"));
	assert_int_equal(json_integer_value(json_object_get(item->values, "Estimate")), 4);
	/* What was applied is now visibly true, changeset by changeset. */
	for (i = 0; i < N_CHANGESETS; i++)
		assert_int_equal(pmbot_changeset_is_applied(json_array_get(json_object_get(f->bundle,
			"changesets"), i), st, f->config), 1);
	pmbot_state_free(st);

	assert_int_equal(pmbot_fs_read(&before, f->state), 0);
	assert_int_equal(apply(f, NULL, NULL, NULL, &results, NULL), PMBOT_OK);
	for (i = 0; i < N_CHANGESETS; i++)
		assert_string_equal(status_of(results, i), "already_applied");
	assert_int_equal(pmbot_fs_read(&after, f->state), 0);
	assert_int_equal(before.len, after.len);
	assert_memory_equal(before.buf, after.buf, before.len);

	events = ledger(f->audit);
	assert_int_equal(count_events(events, "attempt", NULL, NULL), N_CHANGESETS);
	assert_int_equal(count_events(events, "success", "status", "applied"), N_CHANGESETS);
	assert_int_equal(count_events(events, "success", "status", "already_applied"), N_CHANGESETS);
	json_decref(events);
	json_decref(results);
	pmbot_buf_free(&before);
	pmbot_buf_free(&after);
	pmbot_buf_free(&ref);
}

static void test_apply_run__nothing_is_applied_in_the_initial_state(void **state)
{
	fixture *f = *state;
	pmbot_state *st = read_state(f->state);
	size_t i;

	/* Issue #3 carries epic:e1's marker, but mallory is not trusted. */
	for (i = 0; i < N_CHANGESETS; i++)
		assert_int_equal(pmbot_changeset_is_applied(json_array_get(json_object_get(f->bundle,
			"changesets"), i), st, f->config), 0);
	pmbot_state_free(st);
}

static void test_apply_run__resumes_after_a_stop_at_every_position(void **state)
{
	fixture *f = *state;
	char *want = reference_state();
	int k;

	for (k = 0; k <= N_CHANGESETS; k++) {
		hook_ctx h = { k, -1, 0, 0, 0, 0, NULL };
		json_t *results = NULL, *events;
		pmbot_buf err = PMBOT_BUF_INIT;
		pmbot_state *st;
		char *have;
		size_t i;

		test_remove_tree(f->dir);
		fresh_dir(f, NULL);
		assert_int_equal(apply(f, NULL, NULL, &h, &results, &err),
			k == N_CHANGESETS ? PMBOT_OK : PMBOT_ERROR);
		for (i = 0; i < N_CHANGESETS; i++)
			assert_string_equal(status_of(results, i), (int)i < k ? "applied" : "pending");
		if (k < N_CHANGESETS)
			assert_non_null(strstr(err.buf, "stopped before"));
		json_decref(results);

		assert_int_equal(apply(f, NULL, NULL, NULL, &results, NULL), PMBOT_OK);
		for (i = 0; i < N_CHANGESETS; i++)
			assert_string_equal(status_of(results, i),
				(int)i < k ? "already_applied" : "applied");
		json_decref(results);

		have = state_text(f->state);
		if (strcmp(have, want))
			fail_msg("stop before changeset %d: end state differs\nhave %s\nwant %s", k + 1,
				have, want);
		free(have);
		st = read_state(f->state);
		assert_int_equal(st->n_issues, 6);
		pmbot_state_free(st);
		events = ledger(f->audit);
		assert_int_equal(count_events(events, "success", "status", "applied"), N_CHANGESETS);
		json_decref(events);
		pmbot_buf_free(&err);
	}
	free(want);
}

static void test_apply_run__converges_after_kill_9_after_every_changeset(void **state)
{
	fixture *f = *state;
	char *want = reference_state();
	int k;

	for (k = 1; k <= N_CHANGESETS; k++) {
		json_t *results = NULL, *events;
		char *have;
		pid_t pid;
		int status;

		test_remove_tree(f->dir);
		fresh_dir(f, NULL);
		fflush(NULL);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			hook_ctx h = { -1, k, 0, 0, 0, 0, NULL };
			json_t *r = NULL;

			apply_ungrouped(f, &h, &r);
			json_decref(r);
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
			fail_msg("the child was not killed after changeset %d (status %d)", k, status);

		assert_int_equal(apply(f, NULL, NULL, NULL, &results, NULL), PMBOT_OK);
		assert_string_equal(status_of(results, (size_t)k - 1), "already_applied");
		if (k < N_CHANGESETS)
			assert_string_equal(status_of(results, (size_t)k), "applied");
		json_decref(results);
		have = state_text(f->state);
		if (strcmp(have, want))
			fail_msg("kill after changeset %d: end state differs\nhave %s\nwant %s", k, have,
				want);
		free(have);
		/* Killed or not, the ledger holds every outcome exactly once. */
		events = ledger(f->audit);
		assert_int_equal(count_events(events, "success", "status", "applied"), N_CHANGESETS);
		assert_int_equal(count_events(events, "success", "status", "already_applied"), k);
		assert_int_equal(count_events(events, "attempt", NULL, NULL), N_CHANGESETS);
		json_decref(events);
	}
	free(want);
}

/*
 * The file backend's group commit: the whole plan is one group here. A
 * kill -9 while the group is only in memory (before changeset k), once its
 * state is written but before its audit events are (at the commit), or
 * while its outcomes are being told (after changeset k): the same apply
 * again converges on the uninterrupted run's state, creates no issue twice,
 * and the ledger never says applied what the state does not hold.
 */
static void test_apply_run__group_commit_converges_after_kill_9_at_each_point(void **state)
{
	fixture *f = *state;
	char *want = reference_state();
	int k, point;

	for (point = 0; point < 3; point++) {
		for (k = 1; k <= N_CHANGESETS; k++) {
			json_t *results = NULL, *events;
			char *have;
			pmbot_state *st;
			pid_t pid;
			int status;
			size_t i, already = 0;

			if (point == 1 && k > 1)
				break; /* one commit to kill at */
			test_remove_tree(f->dir);
			fresh_dir(f, NULL);
			fflush(NULL);
			pid = fork();
			assert_true(pid >= 0);
			if (pid == 0) {
				hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
				json_t *r = NULL;

				if (point == 0)
					kill_before = k;
				commits_seen = 0;
				if (point == 1)
					kill_at_commit = 1;
				if (point == 2)
					h.kill_after = k;
				apply(f, NULL, NULL, &h, &r, NULL);
				json_decref(r);
				_exit(0);
			}
			assert_int_equal(waitpid(pid, &status, 0), pid);
			if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
				fail_msg("point %d, k %d: the child was not killed (status %d)", point, k,
					status);
			have = state_text(f->state);
			if (point == 0) {
				/* Only in memory: neither the state nor the ledger moved. */
				if (!strcmp(have, want))
					fail_msg("k %d: a kill before the commit left the whole state", k);
				events = ledger(f->audit);
				assert_int_equal(json_array_size(events), 0);
				json_decref(events);
			} else if (strcmp(have, want)) {
				/* Written at the commit, whole: nothing of the plan is left to do. */
				fail_msg("point %d, k %d: the killed run's state differs", point, k);
			}
			free(have);

			assert_int_equal(apply(f, NULL, NULL, NULL, &results, NULL), PMBOT_OK);
			for (i = 0; i < N_CHANGESETS; i++) {
				if (point == 0)
					assert_string_equal(status_of(results, i), "applied");
				else
					assert_string_equal(status_of(results, i), "already_applied");
				already += !strcmp(status_of(results, i), "already_applied");
			}
			json_decref(results);
			have = state_text(f->state);
			if (strcmp(have, want))
				fail_msg("point %d, k %d: end state differs\nhave %s\nwant %s", point, k,
					have, want);
			free(have);
			st = read_state(f->state);
			assert_int_equal(st->n_issues, 6);
			pmbot_state_free(st);
			/* ledger() fails the test when the chain is broken. */
			events = ledger(f->audit);
			assert_int_equal(count_events(events, "success", "status", "applied"),
				point == 1 ? 0 : N_CHANGESETS);
			assert_int_equal(count_events(events, "success", "status", "already_applied"),
				already);
			assert_int_equal(count_events(events, "attempt", NULL, NULL),
				point == 1 ? 0 : N_CHANGESETS);
			json_decref(events);
			kill_at_commit = -1;
		}
	}
	free(want);
}

static void test_apply_run__runs_only_the_selected_changesets(void **state)
{
	fixture *f = *state;
	json_t *run = json_pack("[s, s]", "cs-0002", "cs-0001"), *results = NULL;
	pmbot_state *st;

	assert_int_equal(apply(f, NULL, run, NULL, &results, NULL), PMBOT_OK);
	assert_int_equal(json_array_size(results), 2);
	assert_string_equal(field_of(results, 0, "changeset_id"), "cs-0001");
	assert_string_equal(field_of(results, 1, "changeset_id"), "cs-0002");
	assert_string_equal(status_of(results, 0), "applied");
	json_decref(results);
	st = read_state(f->state);
	assert_int_equal(st->n_issues, 5);
	pmbot_state_free(st);
	assert_int_equal(apply(f, NULL, NULL, NULL, &results, NULL), PMBOT_OK);
	assert_string_equal(status_of(results, 0), "already_applied");
	assert_string_equal(status_of(results, 1), "already_applied");
	assert_string_equal(status_of(results, 2), "applied");
	json_decref(results);
	json_decref(run);
}

static void test_apply_run__refuses_a_selection_naming_an_unknown_changeset(void **state)
{
	fixture *f = *state;
	json_t *run = json_pack("[s, s]", "cs-0001", "cs-0099"), *results = NULL;
	pmbot_buf err = PMBOT_BUF_INIT, before = PMBOT_BUF_INIT, after = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_fs_read(&before, f->state), 0);
	assert_int_equal(apply(f, NULL, run, NULL, &results, &err), PMBOT_EINVALID);
	assert_null(results);
	assert_non_null(strstr(err.buf, "cs-0099"));
	assert_int_equal(pmbot_fs_read(&after, f->state), 0);
	assert_int_equal(before.len, after.len);
	assert_memory_equal(before.buf, after.buf, before.len);
	json_decref(run);
	pmbot_buf_free(&err);
	pmbot_buf_free(&before);
	pmbot_buf_free(&after);
}

/* Apply with `cfg` and expect a denial that writes nothing; returns the results. */
static json_t *expect_denied(fixture *f, const pmbot_config *cfg, const json_t *bundle,
	size_t n_denied)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf before = PMBOT_BUF_INIT, after = PMBOT_BUF_INIT, err = PMBOT_BUF_INIT;
	pmbot_backend *b = NULL;
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL, *events;
	size_t i, denied = 0;

	assert_int_equal(pmbot_fs_read(&before, f->state), 0);
	assert_int_equal(pmbot_file_backend_open(&b, f->state, NULL, &d), PMBOT_OK);
	assert_int_equal(apply_with(f, b, cfg, bundle, NULL, &h, &results, &err), PMBOT_EINVALID);
	b->free(b);
	assert_non_null(strstr(err.buf, "denied"));
	for (i = 0; i < json_array_size(results); i++) {
		if (!strcmp(status_of(results, i), "denied"))
			denied++;
		else
			assert_string_equal(status_of(results, i), "pending");
	}
	assert_int_equal(denied, n_denied);
	assert_int_equal(pmbot_fs_read(&after, f->state), 0);
	assert_int_equal(before.len, after.len);
	assert_memory_equal(before.buf, after.buf, before.len);
	events = ledger(f->audit);
	assert_int_equal(json_array_size(events), n_denied);
	assert_int_equal(count_events(events, "denial", "actor", "octocat"), n_denied);
	json_decref(events);
	pmbot_buf_free(&before);
	pmbot_buf_free(&after);
	pmbot_buf_free(&err);
	pmbot_diag_list_free(&d);
	return results;
}

static void test_apply_run__denies_operations_in_deny_operations_before_any_write(void **state)
{
	fixture *f = *state;
	pmbot_config *cfg = parse_config(CONFIG "deny_operations: [set_project_field]\n");
	json_t *results = expect_denied(f, cfg, f->bundle, 2), *events;

	assert_string_equal(field_of(results, 12, "reason"), "OPERATION_DENIED");
	assert_string_equal(field_of(results, 13, "reason"), "OPERATION_DENIED");
	events = ledger(f->audit);
	assert_int_equal(count_events(events, "denial", "reason", "OPERATION_DENIED"), 2);
	assert_int_equal(count_events(events, "denial", "changeset_id", "cs-0013"), 1);
	json_decref(events);
	json_decref(results);
	pmbot_config_free(cfg);
}

static void test_apply_run__denies_repositories_outside_the_allowlist(void **state)
{
	fixture *f = *state;
	pmbot_config *cfg = parse_config("repos: [acme/other]\n");
	json_t *results = expect_denied(f, cfg, f->bundle, N_CHANGESETS);

	assert_string_equal(field_of(results, 0, "reason"), "REPO_NOT_ALLOWED");
	json_decref(results);
	pmbot_config_free(cfg);
}

static void test_apply_run__denies_a_parent_in_a_repository_outside_the_allowlist(void **state)
{
	fixture *f = *state;
	json_t *bundle = json_deep_copy(f->bundle), *results;
	json_t *cs = json_array_get(json_object_get(bundle, "changesets"), 7);

	json_object_set_new(json_object_get(json_object_get(cs, "payload"), "parent"), "repo",
		json_string("evil/elsewhere"));
	results = expect_denied(f, f->config, bundle, 1);
	assert_string_equal(status_of(results, 7), "denied");
	assert_string_equal(field_of(results, 7, "reason"), "REPO_NOT_ALLOWED");
	assert_non_null(strstr(field_of(results, 7, "message"), "evil/elsewhere"));
	json_decref(results);
	json_decref(bundle);
}

static void test_apply_run__denies_unknown_operations(void **state)
{
	fixture *f = *state;
	json_t *bundle = json_deep_copy(f->bundle), *results, *events;

	json_object_set_new(json_array_get(json_object_get(bundle, "changesets"), 3), "operation",
		json_string("close_issue"));
	results = expect_denied(f, f->config, bundle, 1);
	assert_string_equal(field_of(results, 3, "reason"), "UNKNOWN_OPERATION");
	events = ledger(f->audit);
	assert_int_equal(count_events(events, "denial", "reason", "UNKNOWN_OPERATION"), 1);
	json_decref(events);
	json_decref(results);
	json_decref(bundle);
}

/* A bundle breaking the planner's rules, whoever wrote it, writes nothing at all. */
static void test_apply_run__denies_what_breaks_the_planners_rules_before_any_write(void **state)
{
	fixture *f = *state;
	json_t *bundle = json_deep_copy(f->bundle), *results, *events, *cs;
	json_t *changesets = json_object_get(bundle, "changesets");

	/* cs-0007 removes a person's label, cs-0004 retitles alice's #2. */
	json_array_append_new(json_object_get(json_object_get(json_array_get(changesets, 6),
		"payload"), "labels"), json_string("security"));
	cs = json_array_get(changesets, 3);
	json_object_set_new(cs, "target", json_pack("{s:s, s:i}", "repo", "acme/widgets",
		"number", 2));
	results = expect_denied(f, f->config, bundle, 2);
	assert_string_equal(field_of(results, 6, "reason"), "LABEL_NOT_OWNED");
	assert_non_null(strstr(field_of(results, 6, "message"), "'security'"));
	assert_string_equal(field_of(results, 3, "reason"), "ISSUE_NOT_MANAGED");
	assert_non_null(strstr(field_of(results, 3, "message"), "written by 'alice'"));
	events = ledger(f->audit);
	assert_int_equal(count_events(events, "denial", "reason", "LABEL_NOT_OWNED"), 1);
	assert_int_equal(count_events(events, "denial", "changeset_id", "cs-0004"), 1);
	json_decref(events);
	json_decref(results);
	json_decref(bundle);
}

/*
 * A create carrying an existing item's marker would be trusted (the token
 * writes it) and make the real item ambiguous; a body rewrite without the
 * marker would drop the item. Both are refused, and the item stays pm-bot's.
 */
static void test_apply_run__never_forges_or_strips_a_marker(void **state)
{
	fixture *f = *state;
	json_t *bundle = json_deep_copy(f->bundle), *results, *changesets, *st;
	const char *old_body;

	changesets = json_object_get(bundle, "changesets");
	st = load_json(FIXTURES "state-initial.json");
	old_body = json_string_value(json_object_get(json_array_get(json_object_get(
		json_array_get(json_object_get(st, "repositories"), 0), "issues"), 0), "body"));
	json_object_set_new(json_object_get(json_array_get(changesets, 0), "payload"), "body",
		json_string(old_body));
	json_object_set_new(json_object_get(json_array_get(changesets, 4), "payload"), "body",
		json_string("### Goal\nNew goal"));
	results = expect_denied(f, f->config, bundle, 2);
	assert_string_equal(field_of(results, 0, "reason"), "MARKER_INVALID");
	assert_non_null(strstr(field_of(results, 0, "message"),
		"carries the marker of 'task:old', not of 'epic:e1'"));
	assert_string_equal(field_of(results, 4, "reason"), "MARKER_INVALID");
	assert_non_null(strstr(field_of(results, 4, "message"), "has no pm-bot marker"));
	json_decref(results);
	json_decref(bundle);
	json_decref(st);
}

static void test_apply_run__refuses_to_guess_between_two_trusted_issues_with_one_marker(void **state)
{
	fixture *f = *state;
	json_t *st = load_json(FIXTURES "state-initial.json"), *issues, *dup;
	json_t *results = NULL, *events;
	pmbot_buf err = PMBOT_BUF_INIT;
	size_t i;

	/* A second bot-authored issue carrying task:old's marker. */
	issues = json_object_get(json_array_get(json_object_get(st, "repositories"), 0), "issues");
	dup = json_deep_copy(json_array_get(issues, 0));
	json_object_set_new(dup, "number", json_integer(4));
	json_object_set_new(dup, "database_id", json_integer(1004));
	json_object_set_new(dup, "node_id", json_string("I_4"));
	json_object_set_new(dup, "blocked_by", json_array());
	json_array_append_new(issues, dup);
	test_remove_tree(f->dir);
	fresh_dir(f, st);

	assert_int_equal(apply(f, NULL, NULL, NULL, &results, &err), PMBOT_ERROR);
	for (i = 0; i < 3; i++)
		assert_string_equal(status_of(results, i), "applied");
	assert_string_equal(status_of(results, 3), "failed");
	assert_string_equal(field_of(results, 3, "reason"), "AMBIGUOUS_MARKER");
	for (i = 4; i < N_CHANGESETS; i++)
		assert_string_equal(status_of(results, i), "pending");
	assert_non_null(strstr(err.buf, "task:old"));
	events = ledger(f->audit);
	assert_int_equal(count_events(events, "failure", "reason", "AMBIGUOUS_MARKER"), 1);
	json_decref(events);
	json_decref(results);
	json_decref(st);
	pmbot_buf_free(&err);
}

static void test_apply_run__a_create_whose_answer_was_lost_is_not_repeated(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL;
	char *want = reference_state(), *have;

	w->fault_op = "create_issue";
	w->fault = FAULT_LOST_RESPONSE;
	w->fault_skip = 1;
	w->fault_count = 1;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	assert_string_equal(status_of(results, 1), "applied");
	assert_true(json_is_true(json_object_get(json_array_get(results, 1), "recovered")));
	assert_null(json_object_get(json_array_get(results, 1), "reason"));
	assert_non_null(strstr(field_of(results, 1, "message"), "connection reset"));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
		json_array_get(results, 1), "result"), "number")), 5);
	assert_int_equal(calls_of(w, "create_issue"), 3);
	/* The state was re-read once to find out. */
	assert_int_equal(w->reads, 2);
	have = state_text(f->state);
	assert_string_equal(have, want);
	free(have);
	free(want);
	json_decref(results);
	w->base.free(&w->base);
}

static void test_apply_run__every_read_names_the_items_it_must_prove_absent(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL, *want = json_array(), *cs, *first;
	size_t i;

	w->base.read_scoped = wrap_read_scoped;
	w->fault_op = "create_issue";
	w->fault = FAULT_LOST_RESPONSE;
	w->fault_count = 1;
	/* Every create's item, by stable id, is in what the read must answer for. */
	json_array_foreach(json_object_get(f->bundle, "changesets"), i, cs) {
		const json_t *t = json_object_get(cs, "target");
		char one[200];

		if (strcmp(json_string_value(json_object_get(cs, "operation")), "create_issue"))
			continue;
		snprintf(one, sizeof(one), "%s %s", json_string_value(json_object_get(t, "repo")),
			json_string_value(json_object_get(t, "stable_id")));
		json_array_append_new(want, json_string(one));
	}
	assert_true(json_array_size(want) >= 2);
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	/* The first read, and the re-read after the lost answer, both scoped. */
	assert_int_equal(w->reads, 2);
	assert_int_equal(json_array_size(w->scopes), 2);
	first = json_array_get(w->scopes, 0);
	json_array_foreach(want, i, cs) {
		size_t k;
		const json_t *have;
		int found = 0;

		json_array_foreach(first, k, have)
			found |= json_equal(have, cs);
		if (!found)
			fail_msg("the read's scope lacks %s", json_string_value(cs));
	}
	assert_true(json_equal(json_array_get(w->scopes, 1), first));
	json_decref(want);
	json_decref(results);
	w->base.free(&w->base);
}

/* ---- starting from the caller's read ---- */

static int apply_from(fixture *f, pmbot_backend *b, const pmbot_apply_start *start,
	json_t **results, pmbot_buf *err)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	pmbot_apply_hooks hooks = { hook_before, hook_after, hook_sleep, &h, NULL };
	pmbot_audit *audit = NULL;
	int rc;

	assert_int_equal(pmbot_audit_open(&audit, f->audit, &d), PMBOT_OK);
	rc = pmbot_apply_run_from(results, f->bundle, NULL, b, f->config, audit, "octocat", &hooks,
		start, err);
	pmbot_audit_close(audit);
	pmbot_diag_list_free(&d);
	return rc;
}

/* Every issue full.json names, as a plan's read is asked for them, and one more. */
static const pmbot_read_need full_needs[] = {
	{ "acme/widgets", "epic:e1", 0 },
	{ "acme/widgets", "feat:f1", 0 },
	{ "acme/widgets", "task:t1", 0 },
	{ "ACME/Widgets", "task:old", 0 },
	{ "acme/widgets", NULL, 2 },
	{ "acme/widgets", "task:elsewhere", 0 },
};
#define N_FULL_NEEDS (sizeof(full_needs) / sizeof(full_needs[0]))

static const char *const start_repos[] = { "acme/gadgets", "acme/widgets" };

/* What a caller's scoped read of acme/widgets and board acme/1 gave, read around `w`. */
static pmbot_state *caller_read(wrap *w, pmbot_apply_start *start, const pmbot_read_scope *scope)
{
	pmbot_state *st = NULL;

	assert_int_equal(w->inner->read(&st, w->inner, start_repos, 2, "acme", 1, NULL), PMBOT_OK);
	memset(start, 0, sizeof(*start));
	start->state = st;
	start->backend = &w->base;
	start->repos = start_repos;
	start->n_repos = 2;
	start->project_owner = "acme";
	start->project_number = 1;
	start->scope = scope;
	return st;
}

static void test_apply_run__starts_from_a_covering_read_without_reading_again(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open(f);
	pmbot_read_scope scope = { full_needs, N_FULL_NEEDS };
	pmbot_apply_start start;
	pmbot_state *st = caller_read(w, &start, &scope);
	json_t *results = NULL;
	char *want = reference_state(), *have;

	w->base.read_scoped = wrap_read_scoped;
	assert_int_equal(apply_from(f, &w->base, &start, &results, NULL), PMBOT_OK);
	assert_int_equal(w->reads, 0);
	assert_string_equal(status_of(results, 0), "applied");
	assert_string_equal(status_of(results, N_CHANGESETS - 1), "applied");
	have = state_text(f->state);
	assert_string_equal(have, want);
	free(have);
	json_decref(results);
	pmbot_state_free(st);

	/* A full read (no scope) covers every need too; a re-run finds it all applied. */
	st = caller_read(w, &start, NULL);
	assert_int_equal(apply_from(f, &w->base, &start, &results, NULL), PMBOT_OK);
	assert_int_equal(w->reads, 0);
	assert_string_equal(status_of(results, 0), "already_applied");
	assert_int_equal(calls_of(w, "create_issue"), 3);
	have = state_text(f->state);
	assert_string_equal(have, want);
	free(have);
	free(want);
	json_decref(results);
	pmbot_state_free(st);
	w->base.free(&w->base);
}

/*
 * A read that was not asked for something the run needs proves nothing
 * about it: the executor reads for itself, once, with its own scope.
 */
static void test_apply_run__reads_again_when_the_callers_read_does_not_cover_it(void **state)
{
	fixture *f = *state;
	static const char *const other_repo[] = { "acme/gadgets" };
	pmbot_read_need fewer[N_FULL_NEEDS], by_number[N_FULL_NEEDS];
	pmbot_read_scope scope_fewer = { fewer, N_FULL_NEEDS - 1 }, scope_by_number;
	pmbot_read_scope scope = { full_needs, N_FULL_NEEDS };
	int variant;

	/* Without feat:f1, a create's item. */
	memcpy(fewer, full_needs, sizeof(full_needs));
	fewer[1] = full_needs[N_FULL_NEEDS - 1];
	/* acme/widgets#2 asked for as a stable id of that spelling is not the issue by number. */
	memcpy(by_number, full_needs, sizeof(full_needs));
	by_number[4].stable_id = "2";
	by_number[4].number = 0;
	scope_by_number.needs = by_number;
	scope_by_number.n_needs = N_FULL_NEEDS;
	for (variant = 0; variant < 7; variant++) {
		wrap *w, *other;
		pmbot_apply_start start;
		pmbot_state *st;
		json_t *results = NULL;
		char *want = reference_state(), *have;

		teardown(state);
		setup(state);
		f = *state;
		w = wrap_open(f);
		other = wrap_open(f);
		w->base.read_scoped = wrap_read_scoped;
		st = caller_read(w, &start, &scope);
		switch (variant) {
		case 0: start.scope = &scope_fewer; break;
		case 1: start.scope = &scope_by_number; break;
		case 2: start.repos = other_repo; start.n_repos = 1; break;
		case 3: start.project_number = 2; break;
		case 4: start.project_owner = NULL; break;
		case 5: start.backend = &other->base; break;
		case 6: start.state = NULL; break;
		}
		assert_int_equal(apply_from(f, &w->base, &start, &results, NULL), PMBOT_OK);
		if (w->reads != 1)
			fail_msg("variant %d: %d reads", variant, w->reads);
		assert_int_equal(json_array_size(w->scopes), 1);
		assert_int_equal(calls_of(w, "create_issue"), 3);
		have = state_text(f->state);
		assert_string_equal(have, want);
		free(have);
		free(want);
		json_decref(results);
		pmbot_state_free(st);
		other->base.free(&other->base);
		w->base.free(&w->base);
	}
}

/* Re-reads after a failed write still go to the backend: they must see what landed. */
static void test_apply_run__a_lost_create_is_re_read_even_from_a_covering_read(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open(f);
	pmbot_read_scope scope = { full_needs, N_FULL_NEEDS };
	pmbot_apply_start start;
	pmbot_state *st = caller_read(w, &start, &scope);
	json_t *results = NULL;
	char *want = reference_state(), *have;

	w->fault_op = "create_issue";
	w->fault = FAULT_LOST_RESPONSE;
	w->fault_skip = 1;
	w->fault_count = 1;
	assert_int_equal(apply_from(f, &w->base, &start, &results, NULL), PMBOT_OK);
	assert_int_equal(w->reads, 1);
	assert_string_equal(status_of(results, 1), "applied");
	assert_true(json_is_true(json_object_get(json_array_get(results, 1), "recovered")));
	assert_int_equal(calls_of(w, "create_issue"), 3);
	have = state_text(f->state);
	assert_string_equal(have, want);
	free(have);
	free(want);
	json_decref(results);
	pmbot_state_free(st);
	w->base.free(&w->base);
}

static void test_apply_run__a_create_that_failed_is_not_retried(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL, *events;
	pmbot_buf err = PMBOT_BUF_INIT;
	char *want = reference_state(), *have;

	w->fault_op = "create_issue";
	w->fault = FAULT_BEFORE;
	w->fault_skip = 2;
	w->fault_count = -1;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, &err),
		PMBOT_ERROR);
	assert_string_equal(status_of(results, 2), "failed");
	assert_string_equal(field_of(results, 2, "reason"), "BACKEND_ERROR");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(results, 2), "attempts")), 1);
	assert_string_equal(status_of(results, 3), "pending");
	assert_int_equal(calls_of(w, "create_issue"), 3);
	assert_int_equal(h.naps, 0);
	assert_non_null(strstr(err.buf, "HTTP 502"));
	events = ledger(f->audit);
	assert_int_equal(count_events(events, "failure", "changeset_id", "cs-0003"), 1);
	assert_int_equal(count_events(events, "dead_letter", NULL, NULL), 0);
	json_decref(events);
	json_decref(results);
	w->base.free(&w->base);

	/* The next apply picks up where this one failed. */
	assert_int_equal(apply(f, NULL, NULL, NULL, &results, NULL), PMBOT_OK);
	assert_string_equal(status_of(results, 1), "already_applied");
	assert_string_equal(status_of(results, 2), "applied");
	have = state_text(f->state);
	assert_string_equal(have, want);
	free(have);
	free(want);
	json_decref(results);
	pmbot_buf_free(&err);
}

static void test_apply_run__a_spent_budget_pauses_and_the_next_run_goes_on(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL, *events, *e;
	pmbot_buf err = PMBOT_BUF_INIT;
	char *want = reference_state(), *have, line[128];
	size_t i;

	w->fault_op = "create_issue";
	w->fault = FAULT_PAUSE;
	w->fault_skip = 2;
	w->fault_count = -1;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, &err),
		PMBOT_BACKEND_EPAUSED);
	snprintf(line, sizeof(line), "2 of %d applied; resumes after 2026-11-25T20:00:00Z",
		N_CHANGESETS);
	assert_string_equal(err.buf, line);
	assert_string_equal(status_of(results, 1), "applied");
	assert_string_equal(status_of(results, 2), "pending");
	assert_string_equal(field_of(results, 2, "reason"), "BUDGET_SPENT");
	assert_non_null(strstr(field_of(results, 2, "message"), "not sent: the write budget"));
	for (i = 3; i < N_CHANGESETS; i++)
		assert_string_equal(status_of(results, i), "pending");
	/* A pause is neither a failure to look for nor a retry: one call, no re-read, no nap. */
	assert_int_equal(calls_of(w, "create_issue"), 3);
	assert_int_equal(w->reads, 1);
	assert_int_equal(h.naps, 0);
	assert_int_equal(h.done, 2);
	events = ledger(f->audit);
	assert_int_equal(count_events(events, "pause", "changeset_id", "cs-0003"), 1);
	assert_int_equal(count_events(events, "failure", NULL, NULL), 0);
	json_array_foreach(events, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "event")), "pause")) {
			assert_string_equal(json_string_value(json_object_get(e, "resumes_after")),
				"2026-11-25T20:00:00Z");
			assert_string_equal(json_string_value(json_object_get(e, "reason")),
				"BUDGET_SPENT");
		}
	json_decref(events);
	json_decref(results);

	/* The next run, the budget free again, goes on from there: nothing twice. */
	w->fault = FAULT_NONE;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, &err),
		PMBOT_OK);
	assert_string_equal(status_of(results, 0), "already_applied");
	assert_string_equal(status_of(results, 1), "already_applied");
	assert_string_equal(status_of(results, 2), "applied");
	assert_int_equal(calls_of(w, "create_issue"), 3 + 1);
	have = state_text(f->state);
	assert_string_equal(have, want);
	free(have);
	free(want);
	json_decref(results);
	pmbot_buf_free(&err);
	w->base.free(&w->base);
}

static void test_apply_run__a_pause_inside_a_batch_sends_nothing_alone(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open_batching(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL, *events;
	pmbot_buf err = PMBOT_BUF_INIT;
	char *want = reference_state(), *have;

	w->fault_op = "set_project_field";
	w->fault = FAULT_PAUSE;
	w->fault_skip = 1;
	w->fault_count = -1;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, &err),
		PMBOT_BACKEND_EPAUSED);
	assert_string_equal(status_of(results, FIELD0), "applied");
	assert_string_equal(status_of(results, FIELD0 + 1), "pending");
	assert_string_equal(field_of(results, FIELD0 + 1, "reason"), "BUDGET_SPENT");
	assert_int_equal(calls_of(w, "set_project_field"), 0);
	assert_int_equal(h.naps, 0);
	assert_non_null(strstr(err.buf, " applied; resumes after 2026-11-25T20:00:00Z"));
	events = ledger(f->audit);
	assert_int_equal(count_events(events, "pause", NULL, NULL), 1);
	assert_int_equal(count_events(events, "failure", NULL, NULL), 0);
	json_decref(events);
	json_decref(results);
	w->fault = FAULT_NONE;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	assert_string_equal(status_of(results, FIELD0), "already_applied");
	assert_string_equal(status_of(results, FIELD0 + 1), "applied");
	have = state_text(f->state);
	assert_string_equal(have, want);
	free(have);
	free(want);
	json_decref(results);
	pmbot_buf_free(&err);
	w->base.free(&w->base);
}

static void test_apply_progress__counts_against_the_approved_plan(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	json_t *results = json_pack("[{s:s}, {s:s}, {s:s}, {s:s}, {}]", "status", "applied",
		"status", "already_applied", "status", "pending", "status", "failed");

	(void)state;
	/* A resumed run's fresh plan of 5 left out of an approved 40: 35 + 2 applied. */
	assert_int_equal(pmbot_apply_progress(&out, 40, results, 1795636800LL), PMBOT_OK);
	assert_string_equal(out.buf, "37 of 40 applied; resumes after 2026-11-25T20:00:00Z");
	/* Never more left than the total, never a negative count. */
	assert_int_equal(pmbot_apply_progress(&out, 2, results, 0), PMBOT_OK);
	assert_string_equal(out.buf, "0 of 2 applied; resumes after 1970-01-01T00:00:00Z");
	json_decref(results);
	pmbot_buf_free(&out);
}

static void test_apply_run__retries_a_repeat_safe_operation_after_its_backoff(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL, *events;

	w->fault_op = "add_labels";
	w->fault = FAULT_BEFORE;
	w->fault_count = 1;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	assert_string_equal(status_of(results, 5), "applied");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(results, 5), "attempts")), 2);
	assert_int_equal(calls_of(w, "add_labels"), 2);
	assert_int_equal(h.naps, 1);
	assert_int_equal(h.slept, 1000);
	events = ledger(f->audit);
	assert_int_equal(count_events(events, "attempt", "changeset_id", "cs-0006"), 2);
	json_decref(events);
	json_decref(results);
	w->base.free(&w->base);
}

static void test_apply_run__a_repeat_safe_write_that_landed_is_not_sent_again(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL;

	w->fault_op = "add_dependency";
	w->fault = FAULT_LOST_RESPONSE;
	w->fault_count = 1;
	{
		pmbot_buf e = PMBOT_BUF_INIT;
		int rc = apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, &e);

		if (rc != PMBOT_OK)
			fail_msg("%s", e.buf);
		pmbot_buf_free(&e);
	}
	assert_string_equal(status_of(results, 9), "applied");
	assert_true(json_is_true(json_object_get(json_array_get(results, 9), "recovered")));
	/* A second add_dependency would have been refused as a duplicate edge. */
	assert_int_equal(calls_of(w, "add_dependency"), 1);
	json_decref(results);
	w->base.free(&w->base);
}

static void test_apply_run__gives_up_after_the_retries_and_dead_letters(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL, *events;

	w->fault_op = "remove_labels";
	w->fault = FAULT_BEFORE;
	w->fault_count = -1;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_ERROR);
	assert_string_equal(status_of(results, 6), "failed");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(results, 6), "attempts")), 3);
	assert_int_equal(calls_of(w, "remove_labels"), 3);
	assert_int_equal(h.naps, 2);
	events = ledger(f->audit);
	assert_int_equal(count_events(events, "dead_letter", "changeset_id", "cs-0007"), 1);
	assert_int_equal(count_events(events, "failure", "reason", "BACKEND_ERROR"), 1);
	json_decref(events);
	json_decref(results);
	w->base.free(&w->base);
}

static void test_apply_run__a_refusal_is_not_retried(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL;

	w->fault_op = "update_issue_title";
	w->fault = FAULT_REFUSE;
	w->fault_count = -1;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_ERROR);
	assert_string_equal(status_of(results, 3), "failed");
	assert_string_equal(field_of(results, 3, "reason"), "BACKEND_REFUSED");
	assert_non_null(strstr(field_of(results, 3, "message"), "HTTP 422"));
	assert_int_equal(calls_of(w, "update_issue_title"), 1);
	assert_int_equal(h.naps, 0);
	json_decref(results);
	w->base.free(&w->base);
}

static void test_apply_run__an_unknown_option_fails_naming_the_options(void **state)
{
	fixture *f = *state;
	json_t *bundle = json_deep_copy(f->bundle), *results = NULL;
	pmbot_buf err = PMBOT_BUF_INIT;
	const char *msg;

	json_object_set_new(json_object_get(json_array_get(json_object_get(bundle, "changesets"),
		12), "payload"), "value", json_string("Urgent"));
	assert_int_equal(apply(f, bundle, NULL, NULL, &results, &err), PMBOT_ERROR);
	assert_string_equal(status_of(results, 12), "failed");
	assert_string_equal(field_of(results, 12, "reason"), "UNKNOWN_OPTION");
	msg = field_of(results, 12, "message");
	assert_non_null(strstr(msg, "Urgent"));
	assert_non_null(strstr(msg, "'High', 'Medium', 'Low'"));
	assert_string_equal(status_of(results, 11), "applied");
	json_decref(results);
	json_decref(bundle);
	pmbot_buf_free(&err);
}

static void test_apply_run__an_option_differing_only_in_case_resolves(void **state)
{
	fixture *f = *state;
	json_t *bundle = json_deep_copy(f->bundle), *results = NULL;
	pmbot_state *st;
	const pmbot_pitem *item;

	json_object_set_new(json_object_get(json_array_get(json_object_get(bundle, "changesets"),
		12), "payload"), "value", json_string("high"));
	assert_int_equal(apply(f, bundle, NULL, NULL, &results, NULL), PMBOT_OK);
	st = read_state(f->state);
	assert_non_null(item = pmbot_state_item(st, "acme/widgets#6"));
	assert_string_equal(json_string_value(json_object_get(item->values, "Priority")), "High");
	pmbot_state_free(st);
	json_decref(results);
	json_decref(bundle);
}

/* ---- a backend that fuses creates ---- */

static const char *with_of(const json_t *results, size_t i)
{
	return json_string_value(json_object_get(json_object_get(json_array_get(results, i),
		"result"), "with"));
}

static void test_apply_run__a_fusing_backend_creates_with_parent_board_and_type_in_one_call(
	void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open_fusing(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL, *a;
	pmbot_state *st;
	const pmbot_issue *t1, *f1;

	fuse_refuse = 0;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	/* The parents of f1 and t1 existed when they were created: no separate call. */
	assert_int_equal(calls_of(w, "create_issue"), 3);
	assert_int_equal(calls_of(w, "set_parent"), 0);
	assert_int_equal(calls_of(w, "add_to_project"), 0);
	assert_string_equal(status_of(results, 7), "applied");
	assert_string_equal(with_of(results, 7), "cs-0002");
	assert_string_equal(with_of(results, 8), "cs-0003");
	assert_string_equal(status_of(results, 11), "applied");
	assert_string_equal(with_of(results, 11), "cs-0003");
	a = call_args(w, "create_issue", 0);
	assert_null(json_object_get(a, "parent_node_id"));
	assert_null(json_object_get(a, "project_node_id"));
	assert_string_equal(json_string_value(json_object_get(a, "issue_type")), "epic");
	/* A backend that batches edges gets both node ids (perform_batch is NULL here: sent alone). */
	a = call_args(w, "add_dependency", 0);
	assert_non_null(json_string_value(json_object_get(a, "node_id")));
	assert_non_null(json_string_value(json_object_get(a, "blocker_node_id")));
	a = call_args(w, "create_issue", 2);
	assert_string_equal(json_string_value(json_object_get(a, "issue_type")), "task");
	assert_non_null(json_string_value(json_object_get(a, "project_node_id")));
	st = read_state(f->state);
	assert_non_null(f1 = pmbot_state_issue(st, "acme/widgets#5"));
	assert_non_null(t1 = pmbot_state_issue(st, "acme/widgets#6"));
	assert_string_equal(json_string_value(json_object_get(a, "parent_node_id")), f1->node_id);
	assert_string_equal(t1->parent, "acme/widgets#5");
	assert_string_equal(f1->parent, "acme/widgets#4");
	/* The field of t1 found the item the create's answer named. */
	assert_string_equal(json_string_value(json_object_get(pmbot_state_item(st,
		"acme/widgets#6")->values, "Priority")), "High");
	pmbot_state_free(st);
	json_decref(results);
	/* Everything is true now: a second run sends nothing. */
	json_array_clear(w->calls);
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	assert_int_equal(json_array_size(w->calls), 0);
	assert_string_equal(status_of(results, 7), "already_applied");
	assert_string_equal(status_of(results, 11), "already_applied");
	json_decref(results);
	w->base.free(&w->base);
}

static void test_apply_run__issue_types_off_sends_no_type(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open_fusing(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	pmbot_config *cfg = parse_config(CONFIG "issue_types: off\n");
	json_t *results = NULL;

	fuse_refuse = 0;
	assert_int_equal(apply_with(f, &w->base, cfg, f->bundle, NULL, &h, &results, NULL), PMBOT_OK);
	assert_null(json_object_get(call_args(w, "create_issue", 2), "issue_type"));
	json_decref(results);
	pmbot_config_free(cfg);
	w->base.free(&w->base);
}

static void test_apply_run__creates_run_parents_first_so_children_carry_their_parent(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open_fusing(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *bundle = json_deep_copy(f->bundle), *cs = json_object_get(bundle, "changesets");
	json_t *results = NULL, *first = json_incref(json_array_get(cs, 0));

	/* The bundle lists the task's create first and the epic's last. */
	json_array_set(cs, 0, json_array_get(cs, 2));
	json_array_set_new(cs, 2, first);
	fuse_refuse = 0;
	assert_int_equal(apply_with(f, &w->base, f->config, bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	assert_int_equal(calls_of(w, "set_parent"), 0);
	assert_string_equal(json_string_value(json_object_get(call_args(w, "create_issue", 0),
		"issue_type")), "epic");
	/* Results stay in bundle order: entry 0 is the task's create. */
	assert_string_equal(field_of(results, 0, "changeset_id"), "cs-0003");
	assert_string_equal(with_of(results, 8), "cs-0003");
	json_decref(results);
	json_decref(bundle);
	w->base.free(&w->base);
}

static void test_apply_run__extras_the_create_did_not_carry_go_as_their_own_changesets(
	void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open_fusing(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL;
	pmbot_state *st;

	fuse_refuse = 1;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	fuse_refuse = 0;
	assert_int_equal(calls_of(w, "set_parent"), 2);
	assert_int_equal(calls_of(w, "add_to_project"), 1);
	assert_null(with_of(results, 7));
	assert_string_equal(status_of(results, 7), "applied");
	st = read_state(f->state);
	assert_string_equal(pmbot_state_issue(st, "acme/widgets#6")->parent, "acme/widgets#5");
	assert_non_null(pmbot_state_item(st, "acme/widgets#6"));
	pmbot_state_free(st);
	json_decref(results);
	w->base.free(&w->base);
}

static void test_apply_run__a_run_stopped_after_a_fused_create_resumes_with_no_duplicate(
	void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open_fusing(f);
	hook_ctx h = { 3, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL;
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_state *st;

	fuse_refuse = 0;
	/* Stopped before the 4th changeset: the creates landed with their parents and item. */
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, &err),
		PMBOT_ERROR);
	assert_non_null(strstr(err.buf, "stopped before cs-0004"));
	assert_string_equal(status_of(results, 7), "pending");
	json_decref(results);
	json_array_clear(w->calls);
	h.stop_at = -1;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	/* The re-run reads the parents and the item as already true: nothing is sent twice. */
	assert_int_equal(calls_of(w, "create_issue"), 0);
	assert_int_equal(calls_of(w, "set_parent"), 0);
	assert_int_equal(calls_of(w, "add_to_project"), 0);
	assert_string_equal(status_of(results, 7), "already_applied");
	assert_string_equal(status_of(results, 8), "already_applied");
	assert_string_equal(status_of(results, 11), "already_applied");
	st = read_state(f->state);
	assert_int_equal(st->n_issues, 6);
	pmbot_state_free(st);
	json_decref(results);
	pmbot_buf_free(&err);
	w->base.free(&w->base);
}

/* The end state of the fixture's bundle applied in one go through the fusing backend. */
static char *reference_state_fused(void)
{
	fixture ref;
	wrap *w;
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL;
	char *text;

	memset(&ref, 0, sizeof(ref));
	fresh_dir(&ref, NULL);
	ref.bundle = load_json(FIXTURES "full.json");
	ref.config = parse_config(CONFIG);
	w = wrap_open_fusing(&ref);
	assert_int_equal(apply_with(&ref, &w->base, ref.config, ref.bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	text = state_text(ref.state);
	w->base.free(&w->base);
	json_decref(results);
	json_decref(ref.bundle);
	pmbot_config_free(ref.config);
	test_remove_tree(ref.dir);
	return text;
}

static void test_apply_run__fused_creates_resume_after_a_stop_at_every_position(void **state)
{
	fixture *f = *state;
	char *want = reference_state_fused();
	int k;

	fuse_refuse = 0;
	for (k = 0; k <= N_CHANGESETS; k++) {
		hook_ctx h = { k, -1, 0, 0, 0, 0, NULL };
		hook_ctx none = { -1, -1, 0, 0, 0, 0, NULL };
		json_t *results = NULL, *events;
		pmbot_buf err = PMBOT_BUF_INIT;
		wrap *w;
		char *have;
		size_t i;

		test_remove_tree(f->dir);
		fresh_dir(f, NULL);
		w = wrap_open_fusing(f);
		assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, &err),
			k == N_CHANGESETS ? PMBOT_OK : PMBOT_ERROR);
		json_decref(results);
		assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &none, &results,
			NULL), PMBOT_OK);
		for (i = 0; i < N_CHANGESETS; i++)
			assert_true(!strcmp(status_of(results, i), "applied") ||
				!strcmp(status_of(results, i), "already_applied"));
		json_decref(results);
		/* Every write once: three creates in all, and no parent or item sent on its own. */
		assert_int_equal(calls_of(w, "create_issue"), 3);
		assert_int_equal(calls_of(w, "set_parent"), 0);
		assert_int_equal(calls_of(w, "add_to_project"), 0);
		have = state_text(f->state);
		if (strcmp(have, want))
			fail_msg("stop before changeset %d: end state differs\nhave %s\nwant %s", k + 1,
				have, want);
		free(have);
		/*
		 * Each changeset is applied once in the ledger, or, when it landed
		 * with a create before the stop recorded it (a fused parent or
		 * item), found already applied by the second run and never sent.
		 */
		events = ledger(f->audit);
		{
			json_t *e, *applied = json_object();
			size_t j;

			json_array_foreach(events, j, e) {
				const char *id = json_string_value(json_object_get(e, "changeset_id"));
				const char *st = json_string_value(json_object_get(e, "status"));

				if (!id || !st || strcmp(json_string_value(json_object_get(e, "event")),
					    "success"))
					continue;
				if (!strcmp(st, "applied")) {
					assert_null(json_object_get(applied, id));
					json_object_set_new(applied, id, json_true());
				} else if (!json_object_get(applied, id)) {
					assert_true(!strcmp(id, "cs-0008") || !strcmp(id, "cs-0009") ||
						!strcmp(id, "cs-0012"));
					json_object_set_new(applied, id, json_false());
				}
			}
			assert_int_equal(json_object_size(applied), N_CHANGESETS);
			json_decref(applied);
		}
		json_decref(events);
		pmbot_buf_free(&err);
		w->base.free(&w->base);
	}
	free(want);
}

static void test_apply_run__sets_an_existing_issues_type_and_a_rerun_changes_nothing(void **state)
{
	fixture *f = *state;
	json_t *st_json = load_json(FIXTURES "state-initial.json");
	json_t *bundle = json_deep_copy(f->bundle), *cs, *results = NULL;
	wrap *w;
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	pmbot_state *st;

	json_object_set_new(st_json, "extra", json_pack("{s:{s:[s, s]}}", "issue_types",
		"acme/widgets", "Bug", "Task"));
	test_remove_tree(f->dir);
	fresh_dir(f, st_json);
	/* cs-0004 is the title change of the existing task:old, #1: now its type. */
	cs = json_deep_copy(json_array_get(json_object_get(f->bundle, "changesets"), 3));
	json_object_set_new(cs, "operation", json_string("set_issue_type"));
	json_object_set_new(cs, "payload", json_pack("{s:s}", "issue_type", "task"));
	json_object_set_new(cs, "before", json_pack("{s:n}", "issue_type"));
	json_object_del(cs, "after");
	json_object_set_new(bundle, "changesets", json_pack("[o]", cs));
	w = wrap_open(f);
	assert_int_equal(apply_with(f, &w->base, f->config, bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	assert_string_equal(status_of(results, 0), "applied");
	assert_int_equal(calls_of(w, "set_issue_type"), 1);
	assert_string_equal(json_string_value(json_object_get(call_args(w, "set_issue_type", 0),
		"issue_type")), "task");
	assert_int_equal(json_integer_value(json_object_get(call_args(w, "set_issue_type", 0),
		"number")), 1);
	json_decref(results);
	w->base.free(&w->base);
	st = read_state(f->state);
	/* The repository's spelling. */
	assert_string_equal(pmbot_state_issue(st, "acme/widgets#1")->issue_type, "Task");
	pmbot_state_free(st);
	assert_int_equal(apply(f, bundle, NULL, NULL, &results, NULL), PMBOT_OK);
	assert_string_equal(status_of(results, 0), "already_applied");
	json_decref(results);
	json_decref(bundle);
	json_decref(st_json);
}

static void test_apply_run__builds_backend_args_as_state_h_documents(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL, *a, *want;
	const char *item_id;

	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	/* #4 epic, #5 feature, #6 task; the file backend's ids start at 1000001. */
	a = call_args(w, "set_parent", 0);
	want = json_pack("{s:s, s:i, s:I, s:s, s:i, s:b}", "repo", "acme/widgets", "number", 5,
		"database_id", json_integer_value(json_object_get(json_object_get(
			json_array_get(results, 1), "result"), "database_id")),
		"parent_repo", "acme/widgets", "parent_number", 4, "replace", 0);
	assert_true(pmbot_json_equal(a, want));
	json_decref(want);
	a = call_args(w, "add_dependency", 0);
	want = json_pack("{s:s, s:i, s:s, s:i, s:i}", "repo", "acme/widgets", "number", 6,
		"blocker_repo", "acme/widgets", "blocker_number", 1, "blocker_database_id", 1001);
	assert_true(pmbot_json_equal(a, want));
	json_decref(want);
	a = call_args(w, "remove_dependency", 0);
	assert_int_equal(json_integer_value(json_object_get(a, "blocker_database_id")), 1002);
	a = call_args(w, "add_to_project", 0);
	assert_string_equal(json_string_value(json_object_get(a, "node_id")),
		json_string_value(json_object_get(json_object_get(json_array_get(results, 2), "result"),
			"node_id")));
	item_id = json_string_value(json_object_get(json_object_get(json_array_get(results, 11),
		"result"), "item_id"));
	a = call_args(w, "set_project_field", 0);
	want = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s}", "repo", "acme/widgets", "number", 6,
		"item_id", item_id, "field", "Priority", "field_id", "F_PRIO", "value", "High",
		"option_id", "O_H");
	assert_true(pmbot_json_equal(a, want));
	json_decref(want);
	a = call_args(w, "set_project_field", 1);
	want = json_pack("{s:s, s:i, s:s, s:s, s:s, s:i}", "repo", "acme/widgets", "number", 1,
		"item_id", "PVTI_1", "field", "Estimate", "field_id", "F_EST", "value", 4);
	assert_true(pmbot_json_equal(a, want));
	json_decref(want);
	a = call_args(w, "create_issue", 0);
	assert_string_equal(json_string_value(json_object_get(a, "repo")), "acme/widgets");
	assert_true(json_is_array(json_object_get(a, "labels")));
	json_decref(results);
	w->base.free(&w->base);
}

static void test_apply_run__events_name_the_actor_the_plan_and_the_changeset(void **state)
{
	fixture *f = *state;
	json_t *results = NULL, *events, *e;

	assert_int_equal(apply(f, NULL, NULL, NULL, &results, NULL), PMBOT_OK);
	events = ledger(f->audit);
	e = json_array_get(events, 1);
	assert_string_equal(json_string_value(json_object_get(e, "event")), "success");
	assert_string_equal(json_string_value(json_object_get(e, "actor")), "octocat");
	assert_string_equal(json_string_value(json_object_get(e, "changeset_id")), "cs-0001");
	assert_string_equal(json_string_value(json_object_get(e, "idempotency_key")),
		"create_issue:acme/widgets:epic:e1");
	assert_string_equal(json_string_value(json_object_get(e, "plan_hash")),
		json_string_value(json_object_get(f->bundle, "plan_hash")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "result"), "number")), 4);
	json_decref(events);
	json_decref(results);
}

static void test_apply_run__an_empty_bundle_does_nothing(void **state)
{
	fixture *f = *state;
	json_t *bundle = json_deep_copy(f->bundle), *results = NULL;

	json_object_set_new(bundle, "changesets", json_array());
	assert_int_equal(apply(f, bundle, NULL, NULL, &results, NULL), PMBOT_OK);
	assert_int_equal(json_array_size(results), 0);
	json_decref(results);
	json_decref(bundle);
}

/* ---- batches (the last two changesets, cs-0013 and cs-0014, set project fields) ---- */


static void test_apply_run__sends_consecutive_field_changesets_in_one_batch(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open_batching(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, json_array() };
	json_t *results = NULL, *events, *e;
	char *want = reference_state(), *have;
	size_t i, attempt13 = 0, success13 = 0, attempt14 = 0, success14 = 0;

	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	assert_int_equal(json_array_size(w->batches), 1);
	assert_int_equal(json_integer_value(json_array_get(w->batches, 0)), 2);
	assert_int_equal(calls_of(w, "batch:set_project_field"), 2);
	assert_int_equal(calls_of(w, "set_project_field"), 0);
	/* The same args as one by one: the batch changes how they travel, not what they say. */
	assert_string_equal(json_string_value(json_object_get(call_args(w, "batch:set_project_field",
		0), "field")), "Priority");
	for (i = 0; i < N_CHANGESETS; i++)
		assert_string_equal(status_of(results, i), "applied");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(results, FIELD0 + 1),
		"attempts")), 1);
	have = state_text(f->state);
	assert_string_equal(have, want);
	free(have);
	/* Each changeset keeps its own events, and hooks->after runs in bundle order. */
	assert_int_equal(json_array_size(h.statuses), N_CHANGESETS);
	json_array_foreach(h.statuses, i, e)
		assert_string_equal(json_string_value(json_object_get(e, "id")),
			field_of(results, i, "changeset_id"));
	events = ledger(f->audit);
	json_array_foreach(events, i, e) {
		const char *ev = json_string_value(json_object_get(e, "event"));
		const char *id = json_string_value(json_object_get(e, "changeset_id"));

		if (!strcmp(id, "cs-0013")) {
			attempt13 += !strcmp(ev, "attempt");
			success13 += !strcmp(ev, "success") ? i : 0;
		} else if (!strcmp(id, "cs-0014")) {
			attempt14 += !strcmp(ev, "attempt");
			success14 += !strcmp(ev, "success") ? i : 0;
		}
	}
	assert_int_equal(attempt13, 1);
	assert_int_equal(attempt14, 1);
	assert_true(success13 > 0 && success14 > success13);
	json_decref(events);
	json_decref(results);
	json_decref(h.statuses);
	h.statuses = NULL;

	/* A re-run finds both applied and sends nothing. */
	json_array_clear(w->batches);
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	assert_string_equal(status_of(results, FIELD0), "already_applied");
	assert_string_equal(status_of(results, FIELD0 + 1), "already_applied");
	assert_int_equal(json_array_size(w->batches), 0);
	json_decref(results);
	free(want);
	w->base.free(&w->base);
}

static void test_apply_run__a_failed_batch_entry_is_retried_alone_after_a_re_read(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open_batching(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL, *events;
	int reads;

	w->fault_op = "set_project_field";
	w->fault = FAULT_BEFORE;
	w->fault_skip = 1;  /* the second entry of the batch */
	w->fault_count = 1;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	reads = w->reads;
	assert_string_equal(status_of(results, FIELD0), "applied");
	assert_string_equal(status_of(results, FIELD0 + 1), "applied");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(results, FIELD0),
		"attempts")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(results, FIELD0 + 1),
		"attempts")), 2);
	assert_int_equal(calls_of(w, "batch:set_project_field"), 2);
	assert_int_equal(calls_of(w, "set_project_field"), 1);
	/* One re-read after the batch's backoff, then the entry alone. */
	assert_int_equal(reads, 2);
	assert_int_equal(h.naps, 1);
	assert_int_equal(h.slept, 1000);
	events = ledger(f->audit);
	assert_int_equal(count_events(events, "attempt", "changeset_id", "cs-0014"), 2);
	assert_int_equal(count_events(events, "success", "changeset_id", "cs-0014"), 1);
	assert_int_equal(count_events(events, "failure", NULL, NULL), 0);
	json_decref(events);
	json_decref(results);
	w->base.free(&w->base);
}

static void test_apply_run__a_batch_entry_that_landed_unanswered_is_not_sent_again(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open_batching(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL;

	w->fault_op = "set_project_field";
	w->fault = FAULT_LOST_RESPONSE;
	w->fault_count = 1;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	assert_string_equal(status_of(results, FIELD0), "applied");
	assert_true(json_is_true(json_object_get(json_array_get(results, FIELD0), "recovered")));
	assert_non_null(strstr(field_of(results, FIELD0, "message"), "connection reset by the test"));
	assert_null(json_object_get(json_array_get(results, FIELD0 + 1), "recovered"));
	assert_int_equal(calls_of(w, "set_project_field"), 0);
	json_decref(results);
	w->base.free(&w->base);
}

static void test_apply_run__a_refused_batch_entry_fails_alone_and_stops_the_rest_unretried(
	void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open_batching(f);
	hook_ctx h = { -1, -1, 0, 0, 0, 0, json_array() };
	json_t *results = NULL, *events;
	pmbot_buf err = PMBOT_BUF_INIT;

	/* Every entry is refused: in the batch, and the first again when sent alone. */
	w->fault_op = "set_project_field";
	w->fault = FAULT_REFUSE;
	w->fault_count = -1;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, &err),
		PMBOT_ERROR);
	assert_string_equal(status_of(results, FIELD0), "failed");
	assert_string_equal(field_of(results, FIELD0, "reason"), "BACKEND_REFUSED");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(results, FIELD0),
		"attempts")), 2);
	assert_non_null(strstr(err.buf, "cs-0013 (set_project_field) failed"));
	/* Both entries were refused in the batch, so the second was not sent alone: the run stopped. */
	assert_string_equal(status_of(results, FIELD0 + 1), "failed");
	assert_int_equal(calls_of(w, "batch:set_project_field"), 2);
	assert_int_equal(calls_of(w, "set_project_field"), 1);
	assert_int_equal(h.naps, 0);
	assert_int_equal(json_array_size(h.statuses), N_CHANGESETS);
	events = ledger(f->audit);
	assert_int_equal(count_events(events, "failure", NULL, NULL), 2);
	assert_int_equal(count_events(events, "dead_letter", NULL, NULL), 0);
	json_decref(events);
	json_decref(results);
	json_decref(h.statuses);
	pmbot_buf_free(&err);
	w->base.free(&w->base);
}

static void test_apply_run__a_stop_inside_a_batch_sends_only_the_entries_before_it(void **state)
{
	fixture *f = *state;
	wrap *w = wrap_open_batching(f);
	hook_ctx h = { FIELD0 + 1, -1, 0, 0, 0, 0, NULL };
	json_t *results = NULL;
	pmbot_buf err = PMBOT_BUF_INIT;

	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, &err),
		PMBOT_ERROR);
	assert_string_equal(err.buf, "stopped before cs-0014");
	assert_string_equal(status_of(results, FIELD0), "applied");
	assert_string_equal(status_of(results, FIELD0 + 1), "pending");
	assert_int_equal(json_integer_value(json_array_get(w->batches, 0)), 1);
	/* The next run does the rest. */
	json_decref(results);
	h.stop_at = -1;
	assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
		PMBOT_OK);
	assert_string_equal(status_of(results, FIELD0), "already_applied");
	assert_string_equal(status_of(results, FIELD0 + 1), "applied");
	json_decref(results);
	pmbot_buf_free(&err);
	w->base.free(&w->base);
}

static void test_apply_run__converges_after_kill_9_inside_a_batch(void **state)
{
	fixture *f = *state;
	char *want = reference_state(), *have;
	json_t *results = NULL, *events;
	wrap *w;
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Killed once the first field changeset's outcome is durable; the second landed too. */
		hook_ctx h = { -1, FIELD0 + 1, 0, 0, 0, 0, NULL };
		json_t *r = NULL;

		w = wrap_open_batching(f);
		apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &r, NULL);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		fail_msg("the child was not killed inside the batch (status %d)", status);
	w = wrap_open_batching(f);
	{
		hook_ctx h = { -1, -1, 0, 0, 0, 0, NULL };

		assert_int_equal(apply_with(f, &w->base, f->config, f->bundle, NULL, &h, &results, NULL),
			PMBOT_OK);
	}
	assert_string_equal(status_of(results, FIELD0), "already_applied");
	assert_string_equal(status_of(results, FIELD0 + 1), "already_applied");
	assert_int_equal(json_array_size(w->batches), 0);
	have = state_text(f->state);
	assert_string_equal(have, want);
	free(have);
	events = ledger(f->audit);
	assert_int_equal(count_events(events, "success", "changeset_id", "cs-0014"), 1);
	assert_int_equal(count_events(events, "attempt", "changeset_id", "cs-0014"), 1);
	json_decref(events);
	json_decref(results);
	free(want);
	w->base.free(&w->base);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_apply_run__applies_every_operation_and_a_rerun_changes_nothing),
		T(test_apply_run__nothing_is_applied_in_the_initial_state),
		T(test_apply_run__resumes_after_a_stop_at_every_position),
		T(test_apply_run__converges_after_kill_9_after_every_changeset),
		T(test_apply_run__group_commit_converges_after_kill_9_at_each_point),
		T(test_apply_run__runs_only_the_selected_changesets),
		T(test_apply_run__refuses_a_selection_naming_an_unknown_changeset),
		T(test_apply_run__denies_operations_in_deny_operations_before_any_write),
		T(test_apply_run__denies_what_breaks_the_planners_rules_before_any_write),
		T(test_apply_run__never_forges_or_strips_a_marker),
		T(test_apply_run__denies_repositories_outside_the_allowlist),
		T(test_apply_run__denies_a_parent_in_a_repository_outside_the_allowlist),
		T(test_apply_run__denies_unknown_operations),
		T(test_apply_run__refuses_to_guess_between_two_trusted_issues_with_one_marker),
		T(test_apply_run__a_create_whose_answer_was_lost_is_not_repeated),
		T(test_apply_run__every_read_names_the_items_it_must_prove_absent),
		T(test_apply_run__starts_from_a_covering_read_without_reading_again),
		T(test_apply_run__reads_again_when_the_callers_read_does_not_cover_it),
		T(test_apply_run__a_lost_create_is_re_read_even_from_a_covering_read),
		T(test_apply_run__a_create_that_failed_is_not_retried),
		T(test_apply_run__retries_a_repeat_safe_operation_after_its_backoff),
		T(test_apply_run__a_repeat_safe_write_that_landed_is_not_sent_again),
		T(test_apply_run__gives_up_after_the_retries_and_dead_letters),
		T(test_apply_run__a_refusal_is_not_retried),
		T(test_apply_run__an_unknown_option_fails_naming_the_options),
		T(test_apply_run__an_option_differing_only_in_case_resolves),
		T(test_apply_run__a_fusing_backend_creates_with_parent_board_and_type_in_one_call),
		T(test_apply_run__issue_types_off_sends_no_type),
		T(test_apply_run__creates_run_parents_first_so_children_carry_their_parent),
		T(test_apply_run__extras_the_create_did_not_carry_go_as_their_own_changesets),
		T(test_apply_run__a_run_stopped_after_a_fused_create_resumes_with_no_duplicate),
		T(test_apply_run__fused_creates_resume_after_a_stop_at_every_position),
		T(test_apply_run__builds_backend_args_as_state_h_documents),
		T(test_apply_run__sets_an_existing_issues_type_and_a_rerun_changes_nothing),
		T(test_apply_run__events_name_the_actor_the_plan_and_the_changeset),
		T(test_apply_run__an_empty_bundle_does_nothing),
		T(test_apply_run__sends_consecutive_field_changesets_in_one_batch),
		T(test_apply_run__a_failed_batch_entry_is_retried_alone_after_a_re_read),
		T(test_apply_run__a_batch_entry_that_landed_unanswered_is_not_sent_again),
		T(test_apply_run__a_refused_batch_entry_fails_alone_and_stops_the_rest_unretried),
		T(test_apply_run__a_stop_inside_a_batch_sends_only_the_entries_before_it),
		T(test_apply_run__converges_after_kill_9_inside_a_batch),
		T(test_apply_run__a_spent_budget_pauses_and_the_next_run_goes_on),
		T(test_apply_run__a_pause_inside_a_batch_sends_nothing_alone),
		cmocka_unit_test(test_apply_progress__counts_against_the_approved_plan),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
