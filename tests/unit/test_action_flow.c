#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "helpers/fakehttp.h"
#include "helpers/gitrepo.h"
#include "helpers/tmpdir.h"
#include "pmbot/action.h"
#include "pmbot/buf.h"
#include "pmbot/fs.h"
#include "pmbot/github.h"
#include "pmbot/repo.h"
#include "pmbot/banned.h"

/*
 * The Action's flow (src/action/run.c, sync.c), one test per rule of the
 * threat model (docs/security.md): a real git repository made here, a
 * scripted loopback GitHub that records every request, and what the run
 * tells through its notes. Each test asserts the exact requests made, so a
 * write the rule forbids fails it. The same rules against the emulator are
 * in tests/e2e/test_action.sh and test_action_attacks.sh.
 */

#define TOKEN "ghp_S3cr3tT0kenForFlowTests0123456789"
#define NOW 1800000000LL
#define COMMENT 777
#define R "/repos/acme/widgets"
#define STALE "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define EXISTS "{\"message\":\"Validation Failed\",\"errors\":[{\"resource\":\"Label\"," \
	"\"code\":\"already_exists\",\"field\":\"name\"}]}"
#define EMPTY_ISSUES "{\"data\":{\"repository\":{\"nameWithOwner\":\"acme/widgets\"," \
	"\"issues\":{\"pageInfo\":{\"hasNextPage\":false,\"endCursor\":null},\"nodes\":[]}}}}"

static const char config[] =
	"reports:\n  - \"plans/**/*.md\"\nrepos:\n  - acme/widgets\n"
	"approval:\n  min_permission: write\n";

typedef struct {
	fakehttp *srv;
	char tmp[256];
	char api[128], graphql[160];
	pmbot_github_client *c;
	gitrepo *git;
	pmbot_repo *repo;
	char main_sha[41], plan_sha[41], secret_sha[41];
	char path_event[320], path_out[320], path_summary[320];
	pmbot_buf log;         /* every note, "<level>:<text>\n" */
	size_t n_diags;
	int github_opened;
	pmbot_action *a;
	pmbot_action_env env;
	pmbot_action_opts opts;
} fixture;

static void on_line(void *ctx, pmbot_note_level level, const char *msg)
{
	fixture *fx = ctx;

	pmbot_buf_printf(&fx->log, "%d:%s\n", (int)level, msg);
}

static void on_diags(void *ctx, pmbot_diag_list *diags)
{
	fixture *fx = ctx;
	pmbot_buf line = PMBOT_BUF_INIT;
	size_t i;

	for (i = 0; i < diags->count; i++) {
		pmbot_buf_clear(&line);
		if (pmbot_diag_format(&line, &diags->items[i]) == 0)
			pmbot_buf_printf(&fx->log, "D:%s", line.buf);
	}
	fx->n_diags += diags->count;
	pmbot_buf_free(&line);
}

static int open_github(void *ctx, const char *cache_dir, pmbot_github_client **client,
	const char **self_login)
{
	fixture *fx = ctx;

	(void)cache_dir;
	fx->github_opened++;
	*client = fx->c;
	*self_login = NULL;
	return PMBOT_OK;
}

static char *read_text(const char *path)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	if (pmbot_fs_read(&b, path) < 0) {
		pmbot_buf_free(&b);
		return NULL;
	}
	return pmbot_buf_detach(&b, NULL);
}

static int setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));
	pmbot_github_options opts;
	pmbot_buf err = PMBOT_BUF_INIT;
	const char *tmp = getenv("TMPDIR");
	char *report;

	if (!fx || fakehttp_start(&fx->srv) < 0)
		return -1;
	snprintf(fx->tmp, sizeof(fx->tmp), "%s/pmbot-test-flow-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(fx->tmp))
		return -1;
	snprintf(fx->api, sizeof(fx->api), "%s", fakehttp_url(fx->srv));
	snprintf(fx->graphql, sizeof(fx->graphql), "%s/graphql", fakehttp_url(fx->srv));
	pmbot_github_options_init(&opts);
	opts.api_url = fx->api;
	opts.graphql_url = fx->graphql;
	opts.token = TOKEN;
	opts.pace_ms = 0;
	if (pmbot_github_client_new(&fx->c, &opts, &err) < 0)
		return -1;
	pmbot_buf_free(&err);

	/* main: the configuration; "plan": a valid report; "secret": one scoped to acme/secret. */
	if (!(report = read_text("examples/plans/2026-q4-checkout.md")) ||
	    gitrepo_init(&fx->git, 0) < 0 ||
	    gitrepo_write(fx->git, ".github/pm-bot.yml", config) < 0 ||
	    gitrepo_commit(fx->git, fx->main_sha, "config") < 0 ||
	    gitrepo_branch(fx->git, "plan", "main") < 0 || gitrepo_switch(fx->git, "plan") < 0 ||
	    gitrepo_write(fx->git, "plans/q4.md", report) < 0 ||
	    gitrepo_commit(fx->git, fx->plan_sha, "plan") < 0)
		return -1;
	{
		char *at = strstr(report, "repos: [widgets]");

		if (!at)
			return -1;
		memcpy(at, "repos: [secret] ", 16);
	}
	if (gitrepo_branch(fx->git, "secret", "main") < 0 || gitrepo_switch(fx->git, "secret") < 0 ||
	    gitrepo_write(fx->git, "plans/steal.md", report) < 0 ||
	    gitrepo_commit(fx->git, fx->secret_sha, "steal") < 0 ||
	    gitrepo_switch(fx->git, "main") < 0)
		return -1;
	free(report);
	pmbot_buf_init(&err, 0);
	if (pmbot_repo_open(&fx->repo, gitrepo_path(fx->git), &err) < 0)
		return -1;
	pmbot_buf_free(&err);

	snprintf(fx->path_event, sizeof(fx->path_event), "%s/event.json", fx->tmp);
	snprintf(fx->path_out, sizeof(fx->path_out), "%s/out", fx->tmp);
	snprintf(fx->path_summary, sizeof(fx->path_summary), "%s/summary", fx->tmp);
	fx->env.event_path = fx->path_event;
	fx->env.run_id = "1001";
	fx->env.runner_temp = fx->tmp;
	fx->env.output = fx->path_out;
	fx->env.step_summary = fx->path_summary;
	fx->opts.dir = gitrepo_path(fx->git);
	fx->opts.now = NOW;
	pmbot_buf_init(&fx->log, 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	pmbot_action_free(fx->a);
	pmbot_github_client_free(fx->c);
	pmbot_repo_free(fx->repo);
	gitrepo_free(fx->git);
	fakehttp_stop(fx->srv);
	test_remove_tree(fx->tmp);
	pmbot_buf_free(&fx->log);
	free(fx);
	return 0;
}

static void push(fixture *fx, int status, const char *body)
{
	assert_int_equal(fakehttp_push_simple(fx->srv, status, NULL, body), 0);
}

static void push_json(fixture *fx, int status, json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT);

	assert_non_null(s);
	push(fx, status, s);
	free(s);
	json_decref(v);
}

static json_t *repo_json(const char *full_name)
{
	return json_pack("{s:s, s:s, s:{s:s}, s:s}", "full_name", full_name, "name", "widgets",
		"owner", "login", "acme", "default_branch", "main");
}

static void write_event(fixture *fx, const char *name, json_t *payload)
{
	fx->env.event_name = name;
	assert_int_equal(json_dump_file(payload, fx->path_event, JSON_COMPACT), 0);
	json_decref(payload);
}

static void pr_event(fixture *fx, const char *head_repo, const char *sha)
{
	json_t *head = repo_json(head_repo);

	json_object_set_new(head, "fork", json_boolean(strcmp(head_repo, "acme/widgets") != 0));
	write_event(fx, "pull_request", json_pack("{s:s, s:i, s:o, s:{s:s, s:s}, s:{s:i, s:s, "
		"s:s, s:{s:s, s:s}, s:{s:s, s:s, s:o, s:s}, s:{s:s, s:s, s:o}}}",
		"action", "opened", "number", 12, "repository", repo_json("acme/widgets"),
		"sender", "login", "alice", "type", "User",
		"pull_request", "number", 12, "state", "open", "title", "Plan Q4",
		"user", "login", "alice", "type", "User",
		"head", "ref", "feature", "sha", sha, "repo", head, "label", "x",
		"base", "ref", "main", "sha", fx->main_sha, "repo", repo_json("acme/widgets")));
}

static void comment_event(fixture *fx, const char *action, const char *login, const char *type,
	const char *body)
{
	write_event(fx, "issue_comment", json_pack("{s:s, s:o, s:{s:s, s:s}, s:{s:i, s:s, s:s, "
		"s:{s:s, s:s}, s:{s:s}}, s:{s:i, s:s, s:{s:s, s:s}}}",
		"action", action, "repository", repo_json("acme/widgets"),
		"sender", "login", login, "type", type,
		"issue", "number", 12, "title", "x", "state", "open", "user", "login", "alice",
		"type", "User", "pull_request", "url", "https://api.github.com/repos/acme/widgets/pulls/12",
		"comment", "id", COMMENT, "body", body, "user", "login", login, "type", type));
}

static json_t *pull_json(const char *state, int merged, const char *head_repo, const char *sha)
{
	return json_pack("{s:i, s:s, s:b, s:{s:s, s:o}, s:{s:s, s:o}}", "number", 12,
		"state", state, "merged", merged, "head", "sha", sha, "repo", repo_json(head_repo),
		"base", "ref", "main", "repo", repo_json("acme/widgets"));
}

static void push_permission(fixture *fx, const char *perm)
{
	push_json(fx, 200, json_pack("{s:s, s:s}", "permission", perm, "role_name", perm));
}

static void push_reaction(fixture *fx)
{
	push(fx, 201, "{\"id\":1,\"content\":\"eyes\"}");
}

/* Decide and run the event now in the fixture; the library's result code. */
static int run(fixture *fx)
{
	int r;

	pmbot_action_free(fx->a);
	fx->a = NULL;
	assert_int_equal(pmbot_action_new(&fx->a, &fx->env, &fx->opts,
		&(pmbot_notes){ on_line, on_diags, fx }), PMBOT_OK);
	r = pmbot_action_decide(fx->a);
	if (r == PMBOT_OK)
		r = pmbot_action_run(fx->a, fx->repo, open_github, fx);
	assert_int_equal(pmbot_action_finish(fx->a), 0);
	return r;
}

static void assert_request(fixture *fx, size_t i, const char *method, const char *target)
{
	const fakehttp_request *r = fakehttp_get(fx->srv, i);

	if (!r)
		fail_msg("no request %zu (want %s %s)", i, method, target);
	if (strcmp(r->method, method) || strcmp(r->target, target))
		fail_msg("request %zu is %s %s, want %s %s", i, r->method, r->target, method, target);
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle))
		fail_msg("\"%s\" does not contain \"%s\"", hay ? hay : "(null)", needle);
}

static void assert_requests(fixture *fx, size_t n)
{
	if (fakehttp_count(fx->srv) != n)
		fail_msg("%zu requests, want %zu; log:\n%s", fakehttp_count(fx->srv), n,
			fx->log.len ? fx->log.buf : "");
}

/* Nothing written to GitHub but reactions, labels and `allowed` comments. */
static void assert_no_issue_writes(fixture *fx)
{
	size_t i;

	for (i = 0; i < fakehttp_count(fx->srv); i++) {
		const fakehttp_request *r = fakehttp_get(fx->srv, i);

		if (!strcmp(r->method, "POST") && !strcmp(r->target, R "/issues"))
			fail_msg("request %zu created an issue", i);
		if (!strcmp(r->method, "PATCH") && strstr(r->target, "/issues/") &&
		    !strstr(r->target, "/issues/comments/"))
			fail_msg("request %zu edited an issue", i);
	}
}

static char *ledger(fixture *fx)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/pm-bot/audit.jsonl", fx->tmp);
	return read_text(path);
}

static char *outputs(fixture *fx)
{
	return read_text(fx->path_out);
}

/* ---- approvals ---- */

/* pm-bot's plan comment on PR 12 (id 55), as GitHub lists it. */
static json_t *plan_comment_list(const char *head)
{
	pmbot_buf body = PMBOT_BUF_INIT;
	pmbot_comment_meta m;
	json_t *list;

	memset(&m, 0, sizeof(m));
	snprintf(m.kind, sizeof(m.kind), "plan");
	m.number = 12;
	snprintf(m.head, sizeof(m.head), "%s", head);
	snprintf(m.status, sizeof(m.status), "planned");
	assert_int_equal(pmbot_comment_header(&body, &m), 0);
	assert_int_equal(pmbot_buf_puts(&body, "\n\n## pm-bot plan\n"), 0);
	list = json_pack("[{s:i, s:s, s:{s:s, s:s}}]", "id", 55, "body", body.buf,
		"user", "login", "github-actions[bot]", "type", "Bot");
	pmbot_buf_free(&body);
	return list;
}

static void test_action_flow__a_readers_approval_is_denied_and_audited_with_nothing_written(
	void **state)
{
	fixture *fx = *state;
	const fakehttp_request *edit;
	char *audit, *out;

	comment_event(fx, "created", "mallory", "User", "/pm-bot apply " STALE);
	push_reaction(fx);
	push_json(fx, 200, pull_json("open", 0, "acme/widgets", fx->plan_sha));
	push_permission(fx, "read");
	push_reaction(fx);
	push_json(fx, 200, plan_comment_list(fx->plan_sha));
	push(fx, 200, "{\"id\":55}");
	assert_int_equal(run(fx), PMBOT_OK);
	assert_string_equal(pmbot_action_result(fx->a), "denied");
	assert_requests(fx, 6);
	assert_request(fx, 0, "POST", R "/issues/comments/777/reactions");
	assert_request(fx, 1, "GET", R "/pulls/12");
	assert_request(fx, 2, "GET", R "/collaborators/mallory/permission");
	assert_request(fx, 3, "POST", R "/issues/comments/777/reactions");
	assert_contains(fakehttp_get(fx->srv, 3)->body, "\"-1\"");
	/* The one write besides reactions: the reply in pm-bot's own comment. */
	assert_request(fx, 4, "GET", R "/issues/12/comments?per_page=100");
	assert_request(fx, 5, "PATCH", R "/issues/comments/55");
	edit = fakehttp_get(fx->srv, 5);
	assert_contains(edit->body, "<!-- pm-bot:reply -->\\n> Reply to `mallory`: Approval refused: @");
	assert_contains(edit->body, "approving needs \\\"write\\\" or higher");
	assert_contains(edit->body, "## pm-bot plan");
	assert_null(strstr(edit->body, "@mallory"));   /* no mention: nobody is notified */
	assert_no_issue_writes(fx);
	assert_contains(fx->log.buf, "mallory may not approve");
	assert_non_null(audit = ledger(fx));
	assert_contains(audit, "\"NOT_AUTHORIZED\"");
	assert_contains(out = outputs(fx), "result=denied\n");
	free(audit);
	free(out);
}

static void test_action_flow__an_approval_of_a_stale_hash_is_refused_and_the_fresh_plan_shown(
	void **state)
{
	fixture *fx = *state;
	const fakehttp_request *post;
	char *audit;
	char want[100];

	comment_event(fx, "created", "alice", "User", "/pm-bot apply " STALE);
	push_reaction(fx);
	push_json(fx, 200, pull_json("open", 0, "acme/widgets", fx->plan_sha));
	push_permission(fx, "admin");
	push(fx, 201, "{\"id\":1,\"name\":\"pm-bot:lock:pr-12\"}");   /* the lock */
	push(fx, 200, EMPTY_ISSUES);                                   /* the state */
	push(fx, 200, "[]");                                           /* no plan comment */
	push(fx, 200, EMPTY_ISSUES);                                   /* planned again to show */
	push(fx, 200, "[]");
	push(fx, 201, "{\"id\":99}");                                  /* the comment */
	push_reaction(fx);
	push(fx, 204, NULL);                                           /* the lock released */
	assert_int_equal(run(fx), PMBOT_OK);
	assert_string_equal(pmbot_action_result(fx->a), "stale");
	assert_requests(fx, 11);
	assert_request(fx, 3, "POST", R "/labels");
	assert_request(fx, 4, "POST", "/graphql");
	assert_request(fx, 8, "POST", R "/issues/12/comments");
	assert_request(fx, 10, "DELETE", R "/labels/pm-bot%3Alock%3Apr-12");
	assert_no_issue_writes(fx);
	/* The fresh plan, with its own hash, is what the comment shows. */
	assert_int_equal(strlen(pmbot_action_plan_hash(fx->a)), 64);
	assert_string_not_equal(pmbot_action_plan_hash(fx->a), STALE);
	post = fakehttp_get(fx->srv, 8);
	assert_contains(post->body, "the plan is stale");
	snprintf(want, sizeof(want), "/pm-bot apply %s", pmbot_action_plan_hash(fx->a));
	assert_contains(post->body, want);
	assert_non_null(audit = ledger(fx));
	assert_contains(audit, "\"STALE_PLAN\"");
	assert_null(strstr(audit, "\"approval\""));
	free(audit);
}

static void closed_pr(fixture *fx, int merged, const char *reason)
{
	char *audit;

	comment_event(fx, "created", "alice", "User", "/pm-bot apply " STALE);
	push_reaction(fx);
	push_json(fx, 200, pull_json("closed", merged, "acme/widgets", fx->plan_sha));
	push_reaction(fx);
	assert_int_equal(run(fx), PMBOT_OK);
	assert_string_equal(pmbot_action_result(fx->a), "denied");
	/* Not even the permission is asked: nothing of a finished PR is looked at again. */
	assert_requests(fx, 3);
	assert_request(fx, 2, "POST", R "/issues/comments/777/reactions");
	assert_contains(fx->log.buf, merged ? "is merged: nothing is applied" : "is closed: nothing is applied");
	assert_non_null(audit = ledger(fx));
	assert_contains(audit, reason);
	free(audit);
}

static void test_action_flow__an_approval_on_a_closed_pr_is_refused_with_nothing_written(
	void **state)
{
	closed_pr(*state, 0, "\"PR_CLOSED\"");
}

static void test_action_flow__an_approval_on_a_merged_pr_is_refused_with_nothing_written(
	void **state)
{
	closed_pr(*state, 1, "\"PR_MERGED\"");
}

static void test_action_flow__the_lock_held_by_another_run_is_busy_and_nothing_is_planned(
	void **state)
{
	fixture *fx = *state;
	char label[200];

	comment_event(fx, "created", "alice", "User", "/pm-bot apply " STALE);
	push_reaction(fx);
	push_json(fx, 200, pull_json("open", 0, "acme/widgets", fx->plan_sha));
	push_permission(fx, "write");
	push(fx, 422, EXISTS);
	snprintf(label, sizeof(label), "{\"id\":1,\"name\":\"pm-bot:lock:pr-12\",\"color\":\"ededed\","
		"\"description\":\"run=1000 at=%lld\"}", NOW - 60);
	push(fx, 200, label);
	push_reaction(fx);
	assert_int_equal(run(fx), PMBOT_OK);
	assert_string_equal(pmbot_action_result(fx->a), "busy");
	assert_requests(fx, 6);
	assert_request(fx, 4, "GET", R "/labels/pm-bot%3Alock%3Apr-12");
	assert_request(fx, 5, "POST", R "/issues/comments/777/reactions");
	assert_contains(fakehttp_get(fx->srv, 5)->body, "confused");
	assert_contains(fx->log.buf, "run 1000 is applying this plan; not applying twice");
}

static void test_action_flow__a_corrupt_ledger_shows_the_plan_but_refuses_to_apply(void **state)
{
	fixture *fx = *state;
	char path[400], hash[65];
	const fakehttp_request *post;
	json_t *comments, *posted;

	snprintf(path, sizeof(path), "%s/pm-bot", fx->tmp);
	assert_int_equal(pmbot_fs_mkdirs(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/pm-bot/audit.jsonl", fx->tmp);
	assert_int_equal(pmbot_fs_write_atomic(path, "not json\n", 9), 0);

	/* The pull request's plan is still shown... */
	pr_event(fx, "acme/widgets", fx->plan_sha);
	push(fx, 200, EMPTY_ISSUES);
	push(fx, 200, "[]");
	push(fx, 201, "{\"id\":99}");
	assert_int_equal(run(fx), PMBOT_OK);
	assert_string_equal(pmbot_action_result(fx->a), "planned");
	assert_requests(fx, 3);
	assert_contains(fx->log.buf, "the audit ledger is corrupt: plans are shown");
	snprintf(hash, sizeof(hash), "%s", pmbot_action_plan_hash(fx->a));
	post = fakehttp_get(fx->srv, 2);
	assert_request(fx, 2, "POST", R "/issues/12/comments");

	/* ...and its approval, fresh and by an admin, applies nothing. */
	posted = json_loads(post->body, 0, NULL);
	comments = json_pack("[{s:i, s:O, s:{s:s, s:s}}]", "id", 99, "body",
		json_object_get(posted, "body"), "user", "login", "github-actions[bot]", "type", "Bot");
	json_decref(posted);
	assert_non_null(comments);
	{
		char cmd[100];

		snprintf(cmd, sizeof(cmd), "/pm-bot apply %s", hash);
		comment_event(fx, "created", "alice", "User", cmd);
	}
	push_reaction(fx);
	push_json(fx, 200, pull_json("open", 0, "acme/widgets", fx->plan_sha));
	push_permission(fx, "admin");
	push(fx, 201, "{\"id\":1,\"name\":\"pm-bot:lock:pr-12\"}");
	push(fx, 200, EMPTY_ISSUES);
	push_json(fx, 200, comments);
	push_reaction(fx);
	push(fx, 204, NULL);
	assert_int_equal(run(fx), PMBOT_ERROR);
	assert_string_equal(pmbot_action_plan_hash(fx->a), hash);
	assert_string_equal(pmbot_action_result(fx->a), "failed");
	assert_requests(fx, 3 + 8);
	assert_request(fx, 3 + 6, "POST", R "/issues/comments/777/reactions");
	assert_contains(fakehttp_get(fx->srv, 3 + 6)->body, "\"-1\"");
	assert_request(fx, 3 + 7, "DELETE", R "/labels/pm-bot%3Alock%3Apr-12");
	assert_no_issue_writes(fx);
	assert_contains(fx->log.buf, "the audit ledger is corrupt: nothing is applied");
}

/* ---- forks and the allowlist ---- */

static void test_action_flow__an_outsiders_plan_command_on_a_fork_pr_is_refused(void **state)
{
	fixture *fx = *state;
	char *audit;

	comment_event(fx, "created", "mallory", "User", "/pm-bot plan");
	push_reaction(fx);
	push_json(fx, 200, pull_json("open", 0, "mallory/widgets", fx->secret_sha));
	push_permission(fx, "read");
	push_reaction(fx);
	push(fx, 200, "[]");                     /* no pm-bot comment: the reply is not posted */
	assert_int_equal(run(fx), PMBOT_OK);
	assert_string_equal(pmbot_action_result(fx->a), "denied");
	assert_requests(fx, 5);
	assert_request(fx, 2, "GET", R "/collaborators/mallory/permission");
	assert_request(fx, 4, "GET", R "/issues/12/comments?per_page=100");
	assert_contains(fx->log.buf, "may not re-plan a pull request from a fork");
	assert_contains(fx->log.buf, "no plan comment on this pull request yet");
	assert_non_null(audit = ledger(fx));
	assert_contains(audit, "\"FORK_PLAN_NOT_ALLOWED\"");
	free(audit);
}

static void test_action_flow__a_fork_pr_event_goes_to_the_summary_only(void **state)
{
	fixture *fx = *state;
	char *summary, *out;

	pr_event(fx, "mallory/widgets", fx->plan_sha);
	push(fx, 200, EMPTY_ISSUES);
	assert_int_equal(run(fx), PMBOT_OK);
	assert_string_equal(pmbot_action_result(fx->a), "summary_only");
	/* The state is read; nothing is written, not even a comment. */
	assert_requests(fx, 1);
	assert_request(fx, 0, "POST", "/graphql");
	assert_contains(fx->log.buf, "a pull request from a fork gets its plan in the job summary only");
	assert_non_null(summary = read_text(fx->path_summary));
	assert_contains(summary, pmbot_action_plan_hash(fx->a));
	assert_contains(out = outputs(fx), "result=summary_only\n");
	free(summary);
	free(out);
}

static void test_action_flow__a_scope_outside_the_allowlist_reads_nothing_of_it_and_shows_only_diagnostics(
	void **state)
{
	fixture *fx = *state;
	const fakehttp_request *post;
	size_t i;

	pr_event(fx, "acme/widgets", fx->secret_sha);
	push(fx, 200, "[]");
	push(fx, 201, "{\"id\":99}");
	assert_int_equal(run(fx), PMBOT_EINVALID);
	assert_string_equal(pmbot_action_result(fx->a), "invalid");
	assert_requests(fx, 2);
	/* No request about acme/secret: the state is never read, not even of acme/widgets. */
	for (i = 0; i < fakehttp_count(fx->srv); i++)
		assert_null(strstr(fakehttp_get(fx->srv, i)->target, "secret"));
	assert_request(fx, 0, "GET", R "/issues/12/comments?per_page=100");
	assert_request(fx, 1, "POST", R "/issues/12/comments");
	post = fakehttp_get(fx->srv, 1);
	assert_contains(post->body, "REPO_NOT_ALLOWED");
	/* Diagnostics only: no item of the report and no approve command. */
	assert_null(strstr(post->body, "/pm-bot apply"));
	assert_null(strstr(post->body, "Checkout"));
	assert_contains(fx->log.buf, "REPO_NOT_ALLOWED");
}

/* ---- what is not a command ---- */

static void ignored(fixture *fx)
{
	char *out;

	assert_int_equal(run(fx), PMBOT_OK);
	assert_true(pmbot_action_ignored(fx->a));
	assert_string_equal(pmbot_action_result(fx->a), "ignored");
	assert_requests(fx, 0);
	assert_int_equal(fx->github_opened, 0);
	assert_contains(out = outputs(fx), "result=ignored\n");
	free(out);
}

static void test_action_flow__an_edited_comment_is_ignored_without_a_request(void **state)
{
	fixture *fx = *state;

	comment_event(fx, "edited", "alice", "User", "/pm-bot apply " STALE);
	ignored(fx);
}

static void test_action_flow__a_bots_comment_is_ignored_without_a_request(void **state)
{
	fixture *fx = *state;

	comment_event(fx, "created", "github-actions[bot]", "Bot", "/pm-bot apply " STALE);
	ignored(fx);
}

/* ---- a scheduled run continuing a paused apply ---- */

#define PAUSED "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* What a paused apply leaves in the cache: the kept plan and the hint naming PR 12. */
static void paused_in_cache(fixture *fx, const char *hint)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/pm-bot/cache/plans", fx->tmp);
	assert_int_equal(pmbot_fs_mkdirs(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/pm-bot/cache/plans/" PAUSED ".pr", fx->tmp);
	assert_int_equal(pmbot_fs_write_atomic(path, hint, strlen(hint)), 0);
	snprintf(path, sizeof(path), "%s/pm-bot/cache/plans/" PAUSED ".json", fx->tmp);
	assert_int_equal(pmbot_fs_write_atomic(path, "{}", 2), 0);
	write_event(fx, "schedule", json_pack("{s:s, s:o}", "schedule", "0 6 * * *",
		"repository", repo_json("acme/widgets")));
}

/* PR 12's comments: pm-bot's plan comment in `status`, then each of `others` (login, body). */
static void push_comments(fixture *fx, const char *status, const char *const *others, size_t n)
{
	pmbot_comment_meta m;
	pmbot_buf body = PMBOT_BUF_INIT;
	json_t *list = json_array();
	size_t i;

	memset(&m, 0, sizeof(m));
	snprintf(m.kind, sizeof(m.kind), "plan");
	m.number = 12;
	snprintf(m.head, sizeof(m.head), "%s", fx->plan_sha);
	snprintf(m.plan_hash, sizeof(m.plan_hash), PAUSED);
	snprintf(m.status, sizeof(m.status), "%s", status);
	assert_int_equal(pmbot_comment_header(&body, &m), 0);
	/* pm-bot's own text quotes the command: it approves nothing. */
	assert_int_equal(pmbot_buf_puts(&body, "\n**Paused: 2 of 9 applied.**\n/pm-bot apply " PAUSED "\n"), 0);
	json_array_append_new(list, json_pack("{s:i, s:s, s:{s:s, s:s}}", "id", 55, "body", body.buf,
		"user", "login", "github-actions[bot]", "type", "Bot"));
	for (i = 0; i < n; i++)
		json_array_append_new(list, json_pack("{s:i, s:s, s:{s:s, s:s}}", "id", (int)(60 + i),
			"body", others[2 * i + 1], "user", "login", others[2 * i],
			"type", strstr(others[2 * i], "[bot]") ? "Bot" : "User"));
	push_json(fx, 200, list);
	pmbot_buf_free(&body);
}

static void test_action_flow__a_damaged_kept_plan_is_not_continued_and_the_approval_is_stale(
	void **state)
{
	fixture *fx = *state;

	/* The kept approved plan is "{}": the loader refuses it, nothing crashes or runs. */
	paused_in_cache(fx, "12\n");
	comment_event(fx, "created", "alice", "User", "/pm-bot apply " PAUSED);
	push_reaction(fx);
	push_json(fx, 200, pull_json("open", 0, "acme/widgets", fx->plan_sha));
	push_permission(fx, "admin");
	push(fx, 201, "{\"id\":1,\"name\":\"pm-bot:lock:pr-12\"}");   /* the lock */
	push(fx, 200, EMPTY_ISSUES);                                   /* the state */
	push_comments(fx, "paused", NULL, 0);                          /* the plan comment */
	push(fx, 200, EMPTY_ISSUES);                                   /* planned again to show */
	push_comments(fx, "paused", NULL, 0);
	push(fx, 200, "{\"id\":55}");                                  /* the comment */
	push_reaction(fx);
	push(fx, 204, NULL);                                           /* the lock released */
	assert_int_equal(run(fx), PMBOT_OK);
	assert_string_equal(pmbot_action_result(fx->a), "stale");
	assert_contains(fx->log.buf, "the kept approved plan is damaged, not continued: PLAN_INVALID "
		"/schema_version: must be \"changeset_bundle/v1\"");
	assert_request(fx, 8, "PATCH", R "/issues/comments/55");
	assert_contains(fakehttp_get(fx->srv, 8)->body, "the plan is stale");
	assert_no_issue_writes(fx);
}

static void test_action_flow__a_scheduled_run_does_not_continue_an_apply_whose_approver_lost_permission(
	void **state)
{
	fixture *fx = *state;
	const char *const others[] = {
		"evil[bot]", "/pm-bot apply " PAUSED,
		"mallory", "/pm-bot apply " STALE,
		"alice", "/pm-bot apply " PAUSED,
	};
	const fakehttp_request *patch;
	char path[400], *audit;

	paused_in_cache(fx, "12\n");
	push_comments(fx, "paused", NULL, 0);                          /* pm-bot's comment: paused */
	push_json(fx, 200, pull_json("open", 0, "acme/widgets", fx->plan_sha));
	push_comments(fx, "paused", others, 3);                        /* the approvals */
	push_permission(fx, "read");                                   /* alice, now */
	push(fx, 200, EMPTY_ISSUES);                                   /* what is left, planned */
	push_comments(fx, "paused", NULL, 0);
	push(fx, 200, "{\"id\":55}");                                  /* the comment says why */
	run(fx);
	/* Only alice's approval of this hash was weighed; no lock, no write but the comment. */
	assert_request(fx, 0, "GET", R "/issues/12/comments?per_page=100");
	assert_request(fx, 1, "GET", R "/pulls/12");
	assert_request(fx, 2, "GET", R "/issues/12/comments?per_page=100");
	assert_request(fx, 3, "GET", R "/collaborators/alice/permission");
	assert_request(fx, 4, "POST", "/graphql");
	assert_request(fx, 6, "PATCH", R "/issues/comments/55");
	patch = fakehttp_get(fx->srv, 6);
	assert_contains(patch->body, "Not continued.");
	assert_contains(patch->body, "nobody who approved it may approve any more");
	assert_null(strstr(patch->body, "\\\"status\\\":\\\"paused\\\""));
	assert_no_issue_writes(fx);
	{
		size_t i;

		for (i = 0; i < fakehttp_count(fx->srv); i++) {
			const fakehttp_request *r = fakehttp_get(fx->srv, i);

			if (strstr(r->target, "/labels") || strstr(r->target, "evil") ||
			    strstr(r->target, "mallory") || strstr(r->target, "/reactions"))
				fail_msg("request %zu: %s %s", i, r->method, r->target);
		}
	}
	assert_contains(fx->log.buf, "alice's approval no longer counts");
	assert_contains(fx->log.buf, "is not continued");
	assert_non_null(audit = ledger(fx));
	assert_contains(audit, "\"NOT_AUTHORIZED\"");
	assert_contains(audit, "\"scheduled continuation\"");
	assert_null(strstr(audit, "\"approval\""));
	free(audit);
	/* The hint is gone: later runs leave the pull request alone. */
	snprintf(path, sizeof(path), "%s/pm-bot/cache/plans/" PAUSED ".pr", fx->tmp);
	assert_int_not_equal(access(path, F_OK), 0);
}

static void test_action_flow__a_scheduled_run_without_the_approval_comment_asks_for_a_new_one(
	void **state)
{
	fixture *fx = *state;
	const char *const others[] = {
		"alice", ("/pm-bot apply " STALE),                      /* another hash */
		"alice", "looks good",
	};
	const fakehttp_request *patch;

	paused_in_cache(fx, "12\n");
	push_comments(fx, "paused", NULL, 0);
	push_json(fx, 200, pull_json("open", 0, "acme/widgets", fx->plan_sha));
	push_comments(fx, "paused", others, 2);
	push(fx, 200, EMPTY_ISSUES);
	push_comments(fx, "paused", NULL, 0);
	push(fx, 200, "{\"id\":55}");
	run(fx);
	/* No approval of this hash: not even a permission is asked. */
	assert_request(fx, 2, "GET", R "/issues/12/comments?per_page=100");
	assert_request(fx, 3, "POST", "/graphql");
	assert_request(fx, 5, "PATCH", R "/issues/comments/55");
	patch = fakehttp_get(fx->srv, 5);
	assert_contains(patch->body, "its approval comment is gone");
	assert_contains(patch->body, "approve it again with `/pm-bot apply");
	assert_no_issue_writes(fx);
}

static void test_action_flow__a_scheduled_run_believes_github_not_the_cache_hint(void **state)
{
	fixture *fx = *state;

	paused_in_cache(fx, "12\n");
	/* The comment says "applied": whatever the cache says, nothing waits. */
	push_comments(fx, "applied", NULL, 0);
	run(fx);
	assert_request(fx, 0, "GET", R "/issues/12/comments?per_page=100");
	assert_contains(fx->log.buf, "no paused apply of " PAUSED " there");
	assert_no_issue_writes(fx);
	{
		size_t i;

		for (i = 1; i < fakehttp_count(fx->srv); i++)
			if (strstr(fakehttp_get(fx->srv, i)->target, "/issues/12") ||
			    strstr(fakehttp_get(fx->srv, i)->target, "/pulls/12"))
				fail_msg("request %zu looked at PR 12 again", i);
	}
}

static void test_action_flow__a_malformed_cache_hint_is_ignored(void **state)
{
	fixture *fx = *state;
	size_t i;

	paused_in_cache(fx, "12; rm -rf /\n");
	run(fx);
	for (i = 0; i < fakehttp_count(fx->srv); i++)
		if (strstr(fakehttp_get(fx->srv, i)->target, "/issues/12") ||
		    strstr(fakehttp_get(fx->srv, i)->target, "/pulls/12"))
			fail_msg("request %zu looked at PR 12", i);
}

static void test_results__every_result_has_one_exit_status(void **state)
{
	size_t n, i, j;
	const pmbot_action_result_row *t = pmbot_action_results(&n);

	(void)state;
	for (i = 0; i < n; i++) {
		assert_true(t[i].exit_code == 0 || t[i].exit_code == 1 || t[i].exit_code == 2);
		for (j = i + 1; j < n; j++)
			assert_string_not_equal(t[i].result, t[j].result);
	}
	assert_int_equal(pmbot_action_result_exit("invalid"), 2);
	assert_int_equal(pmbot_action_result_exit("failed"), 1);
	assert_int_equal(pmbot_action_result_exit("no_changes"), 0);
	assert_int_equal(pmbot_action_result_exit("nonsense"), -1);
}

static void test_results__conclude_makes_result_and_exit_agree(void **state)
{
	pmbot_action *a;

	(void)state;
	/* A bad event: decide says invalid, the result was "ignored". */
	assert_int_equal(pmbot_action_new(&a, NULL, NULL, NULL), PMBOT_OK);
	assert_int_equal(pmbot_action_conclude(a, PMBOT_EINVALID), PMBOT_EINVALID);
	assert_string_equal(pmbot_action_result(a), "invalid");
	/* A runtime failure wins over invalid input. */
	assert_int_equal(pmbot_action_conclude(a, PMBOT_ERROR), PMBOT_ERROR);
	assert_string_equal(pmbot_action_result(a), "failed");
	pmbot_action_free(a);
	/* Nothing went wrong: the result stands. */
	assert_int_equal(pmbot_action_new(&a, NULL, NULL, NULL), PMBOT_OK);
	assert_int_equal(pmbot_action_conclude(a, PMBOT_OK), PMBOT_OK);
	assert_string_equal(pmbot_action_result(a), "ignored");
	pmbot_action_free(a);
}

static void test_results__the_log_line_says_the_result(void **state)
{
	pmbot_action *a;
	pmbot_buf line = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_action_new(&a, NULL, NULL, NULL), PMBOT_OK);
	assert_int_equal(pmbot_action_conclude(a, PMBOT_EINVALID), PMBOT_EINVALID);
	assert_int_equal(pmbot_action_log_line(&line, a), 0);
	assert_string_equal(line.buf, "pm-bot: invalid");
	pmbot_buf_free(&line);
	pmbot_action_free(a);
}

static void check_server_url(const char *value, int want_rc, const char *want)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_action_server_url(&b, value), want_rc);
	assert_string_equal(b.buf, want);
	pmbot_buf_free(&b);
}

static void test_results__the_server_url_is_taken_only_when_it_is_a_plain_server_address(void **state)
{
	(void)state;
	check_server_url(NULL, 0, "https://github.com");
	check_server_url("", 0, "https://github.com");
	check_server_url("https://github.example.com", 0, "https://github.example.com");
	check_server_url("https://ghe.example.com:8443/", 0, "https://ghe.example.com:8443");
	check_server_url("http://127.0.0.1:4010", 0, "http://127.0.0.1:4010");
	check_server_url("http://localhost", 0, "http://localhost");
	/* Hostile or odd values fall back, and say so. */
	check_server_url("http://github.example.com", PMBOT_EINVALID, "https://github.com");
	check_server_url("http://127.0.0.1.evil.example", PMBOT_EINVALID, "https://github.com");
	check_server_url("https://evil.example/x?", PMBOT_EINVALID, "https://github.com");
	check_server_url("https://user@evil.example", PMBOT_EINVALID, "https://github.com");
	check_server_url("https://a b.example", PMBOT_EINVALID, "https://github.com");
	check_server_url("https://ghe.example.com\n::error::x", PMBOT_EINVALID, "https://github.com");
	check_server_url("https://.example", PMBOT_EINVALID, "https://github.com");
	check_server_url("https://-x.example", PMBOT_EINVALID, "https://github.com");
	check_server_url("https://ghe.example.com:", PMBOT_EINVALID, "https://github.com");
	check_server_url("https://ghe.example.com:123456", PMBOT_EINVALID, "https://github.com");
	check_server_url("https://", PMBOT_EINVALID, "https://github.com");
	check_server_url("javascript:alert(1)", PMBOT_EINVALID, "https://github.com");
}

static void test_action_flow__the_log_lines_link_is_on_the_server_the_workflow_names(void **state)
{
	fixture *fx = *state;
	pmbot_buf line = PMBOT_BUF_INIT;

	fx->env.server_url = "https://ghe.example.com";
	comment_event(fx, "created", "mallory", "User", "/pm-bot apply " STALE);
	push_reaction(fx);
	push_json(fx, 200, pull_json("open", 0, "acme/widgets", fx->plan_sha));
	push_permission(fx, "read");
	push_reaction(fx);
	push_json(fx, 200, plan_comment_list(fx->plan_sha));
	push(fx, 200, "{\"id\":55}");
	assert_int_equal(run(fx), PMBOT_OK);
	assert_int_equal(pmbot_action_log_line(&line, fx->a), 0);
	assert_string_equal(line.buf,
		"pm-bot: denied, comment https://ghe.example.com/acme/widgets/pull/12#issuecomment-55");
	pmbot_buf_free(&line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_action_flow__a_readers_approval_is_denied_and_audited_with_nothing_written),
		T(test_action_flow__an_approval_of_a_stale_hash_is_refused_and_the_fresh_plan_shown),
		T(test_action_flow__an_approval_on_a_closed_pr_is_refused_with_nothing_written),
		T(test_action_flow__an_approval_on_a_merged_pr_is_refused_with_nothing_written),
		T(test_action_flow__the_lock_held_by_another_run_is_busy_and_nothing_is_planned),
		T(test_action_flow__a_corrupt_ledger_shows_the_plan_but_refuses_to_apply),
		T(test_action_flow__an_outsiders_plan_command_on_a_fork_pr_is_refused),
		T(test_action_flow__a_fork_pr_event_goes_to_the_summary_only),
		T(test_action_flow__a_scope_outside_the_allowlist_reads_nothing_of_it_and_shows_only_diagnostics),
		T(test_action_flow__an_edited_comment_is_ignored_without_a_request),
		T(test_action_flow__a_bots_comment_is_ignored_without_a_request),
		T(test_action_flow__a_scheduled_run_does_not_continue_an_apply_whose_approver_lost_permission),
		T(test_action_flow__a_scheduled_run_without_the_approval_comment_asks_for_a_new_one),
		T(test_action_flow__a_scheduled_run_believes_github_not_the_cache_hint),
		T(test_action_flow__a_malformed_cache_hint_is_ignored),
		T(test_action_flow__the_log_lines_link_is_on_the_server_the_workflow_names),
		T(test_action_flow__a_damaged_kept_plan_is_not_continued_and_the_approval_is_stale),
#undef T
		cmocka_unit_test(test_results__every_result_has_one_exit_status),
		cmocka_unit_test(test_results__conclude_makes_result_and_exit_agree),
		cmocka_unit_test(test_results__the_log_line_says_the_result),
		cmocka_unit_test(test_results__the_server_url_is_taken_only_when_it_is_a_plain_server_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
