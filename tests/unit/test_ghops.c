#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <curl/curl.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers/fakehttp.h"
#include "helpers/tmpdir.h"
#include "pmbot/action.h"
#include "pmbot/buf.h"
#include "pmbot/github.h"
#include "pmbot/net.h"
#include "pmbot/banned.h"

/*
 * The action's GitHub calls against a scripted loopback server that records
 * every request: each test asserts the exact method, path, query and JSON
 * body sent, and what the answer becomes. Clock and sleep are fakes, so
 * retries and rate-limit waits cost no time.
 */

#define TOKEN "ghp_S3cr3tT0kenForGhopsTests0123456789"
#define T0_MS 1700000000000LL
#define SHA "0123456789abcdef0123456789abcdef01234567"
#define HEADER "<!-- pm-bot:plan "
#define BOT "github-actions[bot]"
#define BOT_ESC "github-actions%5Bbot%5D"

typedef struct {
	fakehttp *srv;
	char cache[256];
	char api[128];
	char graphql[160];
	pmbot_github_client *c;
	pmbot_buf err;
	long long now_ms;
	size_t n_sleeps;
} fixture;

/* The fixture's message buffer emptied: what one call says lands there. */
#define ERR fresh_err(fx)

static pmbot_buf *fresh_err(fixture *fx)
{
	pmbot_buf_clear(&fx->err);
	return &fx->err;
}

static long long fake_now(void *payload)
{
	return ((fixture *)payload)->now_ms;
}

static void fake_sleep(void *payload, long long ms)
{
	fixture *fx = payload;

	fx->n_sleeps++;
	fx->now_ms += ms;
}

static int setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));
	pmbot_github_options opts;
	const char *tmp = getenv("TMPDIR");

	if (!fx || fakehttp_start(&fx->srv) < 0)
		return -1;
	snprintf(fx->cache, sizeof(fx->cache), "%s/pmbot-test-ghops-XXXXXX",
		tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(fx->cache))
		return -1;
	snprintf(fx->api, sizeof(fx->api), "%s", fakehttp_url(fx->srv));
	snprintf(fx->graphql, sizeof(fx->graphql), "%s/graphql", fakehttp_url(fx->srv));
	pmbot_github_options_init(&opts);
	opts.api_url = fx->api;
	opts.graphql_url = fx->graphql;
	opts.token = TOKEN;
	/* A real cache directory, so a test can prove reads do not use it. */
	opts.cache_dir = fx->cache;
	opts.pace_ms = 0;
	opts.now = fake_now;
	opts.sleep = fake_sleep;
	opts.clock_payload = fx;
	fx->now_ms = T0_MS;
	pmbot_buf_init(&fx->err, 0);
	if (pmbot_github_client_new(&fx->c, &opts, &fx->err) < 0)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	pmbot_github_client_free(fx->c);
	fakehttp_stop(fx->srv);
	test_remove_tree(fx->cache);
	pmbot_buf_free(&fx->err);
	free(fx);
	return 0;
}

static void push(fixture *fx, int status, const char *headers, const char *body)
{
	assert_int_equal(fakehttp_push_simple(fx->srv, status, headers, body), 0);
}

/* A "Link: <api/path>; rel=\"next\"" header line for `path`. */
static const char *next_link(fixture *fx, char *buf, size_t size, const char *path)
{
	snprintf(buf, size, "Link: <%s%s>; rel=\"next\"\r\n", fx->api, path);
	return buf;
}

/* Request `i` had exactly this method, target and body ("" = none). */
static void assert_request(fixture *fx, size_t i, const char *method, const char *target,
	const char *body)
{
	const fakehttp_request *r = fakehttp_get(fx->srv, i);

	assert_non_null(r);
	assert_string_equal(r->method, method);
	assert_string_equal(r->target, target);
	assert_string_equal(r->body, body);
	if (*body)
		assert_string_equal(fakehttp_header_value(r, "Content-Type"), "application/json");
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
}

static void assert_no_token(fixture *fx)
{
	assert_null(strstr(fx->err.buf, TOKEN));
	assert_null(strstr(fx->err.buf, "S3cr3t"));
}

/* ---- self login --------------------------------------------------------- */

static void test_ghops__viewer_login_is_one_graphql_request_in_rest_spelling(void **state)
{
	fixture *fx = *state;
	char *login = NULL;
	json_t *sent;
	const fakehttp_request *r;

	push(fx, 200, NULL, "{\"data\":{\"viewer\":{\"login\":\"" BOT "\"},\"rateLimit\":"
		"{\"cost\":1,\"remaining\":4999,\"resetAt\":\"2023-11-14T23:00:00Z\"}}}");
	assert_int_equal(pmbot_github_viewer_login(&login, fx->c, ERR), 0);
	assert_string_equal(login, BOT);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	r = fakehttp_get(fx->srv, 0);
	assert_string_equal(r->method, "POST");
	assert_string_equal(r->target, "/graphql");
	sent = json_loads(r->body, 0, NULL);
	assert_non_null(sent);
	assert_string_equal(json_string_value(json_object_get(sent, "query")), pmbot_gql("viewer"));
	assert_int_equal(json_object_size(sent), 1);
	json_decref(sent);
	free(login);
}

static void test_ghops__viewer_login_without_a_login_is_an_error(void **state)
{
	fixture *fx = *state;
	char *login = (char *)"stale";

	push(fx, 200, NULL, "{\"data\":{\"viewer\":null}}");
	assert_int_equal(pmbot_github_viewer_login(&login, fx->c, ERR), PMBOT_ERROR);
	assert_null(login);
}

static void test_ghops__viewer_login_reports_a_bad_token_without_the_token(void **state)
{
	fixture *fx = *state;
	char *login = (char *)"stale";

	push(fx, 401, NULL, "{\"message\":\"Bad credentials\"}");
	assert_int_equal(pmbot_github_viewer_login(&login, fx->c, ERR), PMBOT_GITHUB_EHTTP);
	assert_null(login);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_non_null(strstr(fx->err.buf, "401"));
	assert_null(strstr(fx->err.buf, TOKEN));
}

/* ---- pull requests ------------------------------------------------------ */

static void test_ghops__pull_get_returns_head_sha_repos_and_state(void **state)
{
	fixture *fx = *state;
	pmbot_gh_pull p;

	push(fx, 200, NULL, "{\"number\":12,\"state\":\"open\",\"merged\":false,"
		"\"head\":{\"sha\":\"" SHA "\",\"ref\":\"feature\","
		"\"repo\":{\"full_name\":\"forker/widgets\"}},"
		"\"base\":{\"sha\":\"ffffffffffffffffffffffffffffffffffffffff\",\"ref\":\"main\","
		"\"repo\":{\"full_name\":\"acme/widgets\"}}}");
	assert_int_equal(pmbot_gh_pull_get(&p, fx->c, "acme/widgets", 12, &fx->err), 0);
	assert_request(fx, 0, "GET", "/repos/acme/widgets/pulls/12", "");
	assert_string_equal(p.head_sha, SHA);
	assert_string_equal(p.head_repo, "forker/widgets");
	assert_string_equal(p.base_repo, "acme/widgets");
	assert_string_equal(p.state, "open");
	assert_int_equal(p.merged, 0);
	pmbot_gh_pull_clear(&p);
	assert_null(p.head_sha);
	assert_null(p.state);
	pmbot_gh_pull_clear(&p);
}

static void test_ghops__pull_get_gives_a_deleted_fork_an_empty_head_repo(void **state)
{
	fixture *fx = *state;
	pmbot_gh_pull p;

	push(fx, 200, NULL, "{\"state\":\"closed\",\"merged\":true,\"head\":{\"sha\":\"" SHA "\",\"repo\":null},"
		"\"base\":{\"repo\":{\"full_name\":\"acme/widgets\"}}}");
	assert_int_equal(pmbot_gh_pull_get(&p, fx->c, "acme/widgets", 3, &fx->err), 0);
	assert_string_equal(p.head_repo, "");
	assert_string_equal(p.state, "closed");
	assert_int_equal(p.merged, 1);
	pmbot_gh_pull_clear(&p);
}

static void test_ghops__pull_get_reports_a_missing_pull_as_not_found(void **state)
{
	fixture *fx = *state;
	pmbot_gh_pull p;

	push(fx, 404, NULL, "{\"message\":\"Not Found\"}");
	assert_int_equal(pmbot_gh_pull_get(&p, fx->c, "acme/widgets", 99, &fx->err),
		PMBOT_ENOTFOUND);
	assert_null(p.head_sha);
	assert_null(p.base_repo);
	assert_contains(fx->err.buf, "reading pull request acme/widgets#99: not found");
	assert_no_token(fx);
}

static void test_ghops__pull_get_refuses_a_head_sha_that_is_not_hex(void **state)
{
	fixture *fx = *state;
	pmbot_gh_pull p;

	push(fx, 200, NULL, "{\"state\":\"open\",\"head\":{\"sha\":\"--upload-pack=evil\","
		"\"repo\":{\"full_name\":\"a/b\"}},\"base\":{\"repo\":{\"full_name\":\"a/b\"}}}");
	assert_int_equal(pmbot_gh_pull_get(&p, fx->c, "a/b", 1, &fx->err), PMBOT_ERROR);
	assert_null(p.head_sha);
	assert_null(p.head_repo);
	assert_contains(fx->err.buf, "lacks head.sha (hex)");

	pmbot_buf_clear(&fx->err);
	push(fx, 200, NULL, "{\"head\":{\"sha\":\"" SHA "\",\"repo\":{\"full_name\":\"a/b\"}},"
		"\"base\":{\"repo\":{\"full_name\":\"a/b\"}}}");
	assert_int_equal(pmbot_gh_pull_get(&p, fx->c, "a/b", 1, &fx->err), PMBOT_ERROR);
	assert_null(p.head_sha);
}

/* ---- permissions -------------------------------------------------------- */

static char *permission_of(fixture *fx, const char *answer)
{
	char *role = NULL;

	push(fx, 200, NULL, answer);
	assert_int_equal(pmbot_gh_permission(&role, fx->c, "acme/widgets", "mona", &fx->err), 0);
	return role;
}

static void test_ghops__permission_uses_role_name_to_tell_maintain_and_triage_apart(void **state)
{
	fixture *fx = *state;
	char *role;

	role = permission_of(fx, "{\"permission\":\"write\",\"role_name\":\"maintain\"}");
	assert_string_equal(role, "maintain");
	free(role);
	role = permission_of(fx, "{\"permission\":\"read\",\"role_name\":\"triage\"}");
	assert_string_equal(role, "triage");
	free(role);
	role = permission_of(fx, "{\"permission\":\"admin\",\"role_name\":\"admin\"}");
	assert_string_equal(role, "admin");
	free(role);
	assert_request(fx, 0, "GET", "/repos/acme/widgets/collaborators/mona/permission", "");
	assert_int_equal(fakehttp_count(fx->srv), 3);
}

static void test_ghops__permission_falls_back_to_permission_for_custom_or_empty_roles(
	void **state)
{
	fixture *fx = *state;
	char *role;

	role = permission_of(fx, "{\"permission\":\"write\",\"role_name\":\"release-manager\"}");
	assert_string_equal(role, "write");
	free(role);
	/* What GitHub answers for the Actions bot. */
	role = permission_of(fx, "{\"permission\":\"none\",\"role_name\":\"\"}");
	assert_string_equal(role, "none");
	free(role);
	role = permission_of(fx, "{\"permission\":\"read\"}");
	assert_string_equal(role, "read");
	free(role);
	/* `permission` never says maintain: an unknown value there is refused. */
	push(fx, 200, NULL, "{\"permission\":\"maintain\",\"role_name\":\"custom\"}");
	role = (char *)"stale";
	assert_int_equal(pmbot_gh_permission(&role, fx->c, "acme/widgets", "mona", &fx->err),
		PMBOT_ERROR);
	assert_null(role);
	assert_contains(fx->err.buf, "lacks a known role_name or permission");
}

static void test_ghops__permission_of_an_unknown_user_is_none(void **state)
{
	fixture *fx = *state;
	char *role = NULL;

	push(fx, 404, NULL, "{\"message\":\"Not Found\"}");
	assert_int_equal(pmbot_gh_permission(&role, fx->c, "acme/widgets", "ghost-user", &fx->err), 0);
	assert_string_equal(role, "none");
	assert_string_equal(fx->err.buf, "");
	free(role);

	push(fx, 403, NULL, "{\"message\":\"Must have push access to view collaborator permission.\"}");
	assert_int_equal(pmbot_gh_permission(&role, fx->c, "acme/widgets", "mona", &fx->err),
		PMBOT_GITHUB_EHTTP);
	assert_null(role);
	assert_contains(fx->err.buf, "reading the permission of mona on acme/widgets failed");
}

static void test_ghops__permission_percent_encodes_a_bot_login(void **state)
{
	fixture *fx = *state;
	char *role = NULL;

	push(fx, 200, NULL, "{\"permission\":\"none\",\"role_name\":\"\"}");
	assert_int_equal(pmbot_gh_permission(&role, fx->c, "acme/my.repo", BOT, &fx->err), 0);
	assert_request(fx, 0, "GET", "/repos/acme/my.repo/collaborators/" BOT_ESC "/permission", "");
	free(role);
}

/* ---- finding the plan comment ------------------------------------------- */

static void test_ghops__comment_find_walks_pages_to_the_first_comment_with_header_and_author(
	void **state)
{
	fixture *fx = *state;
	char l1[256], l2[256];
	long long id = -1;
	char *body = NULL;

	push(fx, 200, next_link(fx, l1, sizeof(l1), "/repositories/9/issues/12/comments?per_page=100&page=2"),
		"[{\"id\":1,\"user\":{\"login\":\"mallory\"},\"body\":\"" HEADER "{} -->forged\"},"
		"{\"id\":2,\"user\":{\"login\":\"" BOT "\"},\"body\":\"an ordinary bot comment\"},"
		"{\"id\":3,\"user\":{\"login\":\"" BOT "\"},\"body\":null},"
		"{\"id\":4,\"user\":null,\"body\":\"" HEADER "ghost\"}]");
	push(fx, 200, next_link(fx, l2, sizeof(l2), "/repositories/9/issues/12/comments?per_page=100&page=3"),
		"[{\"id\":5,\"user\":{\"login\":\"GitHub-Actions[bot]\"},\"body\":\"" HEADER "{\\\"v\\\":1} -->\\nplan\"},"
		"{\"id\":6,\"user\":{\"login\":\"" BOT "\"},\"body\":\"" HEADER "second\"}]");
	assert_int_equal(pmbot_gh_comment_find(&id, &body, fx->c, "acme/widgets", 12, HEADER, BOT,
		&fx->err), 0);
	assert_int_equal(id, 5);
	assert_string_equal(body, HEADER "{\"v\":1} -->\nplan");
	/* Found on page 2: page 3 is never asked for. */
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_request(fx, 0, "GET", "/repos/acme/widgets/issues/12/comments?per_page=100", "");
	assert_request(fx, 1, "GET", "/repositories/9/issues/12/comments?per_page=100&page=2", "");
	free(body);
}

struct seen {
	pmbot_buf log;
	long long stop_at;
};

static int seen_one(void *payload, long long id, const char *login, int is_bot, const char *body)
{
	struct seen *s = payload;

	pmbot_buf_printf(&s->log, "%lld %s %d [%s]\n", id, login ? login : "(null)", is_bot, body);
	return id == s->stop_at;
}

static void test_ghops__comment_each_walks_pages_in_order_until_told_to_stop(void **state)
{
	fixture *fx = *state;
	char l1[256];
	struct seen s;

	memset(&s, 0, sizeof(s));
	pmbot_buf_init(&s.log, 0);
	s.stop_at = 3;
	push(fx, 200, next_link(fx, l1, sizeof(l1), "/repositories/9/issues/12/comments?per_page=100&page=2"),
		"[{\"id\":1,\"user\":{\"login\":\"alice\",\"type\":\"User\"},\"body\":\"/pm-bot apply x\"},"
		"{\"id\":2,\"user\":{\"login\":\"evil[bot]\",\"type\":\"User\"},\"body\":null},"
		"{\"id\":0,\"user\":{\"login\":\"zero\"},\"body\":\"no id\"}]");
	push(fx, 200, NULL, "[{\"id\":3,\"user\":{\"login\":\"app\",\"type\":\"Bot\"},\"body\":\"b\"},"
		"{\"id\":4,\"user\":null,\"body\":\"after the stop\"}]");
	assert_int_equal(pmbot_gh_comment_each(fx->c, "acme/widgets", 12, seen_one, &s, &fx->err), 0);
	/* Bots by type or by "[bot]"; a null body is ""; an item without an id is skipped. */
	assert_string_equal(s.log.buf, "1 alice 0 [/pm-bot apply x]\n2 evil[bot] 1 []\n3 app 1 [b]\n");
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_request(fx, 0, "GET", "/repos/acme/widgets/issues/12/comments?per_page=100", "");
	pmbot_buf_free(&s.log);
}

static void test_ghops__comment_find_reports_zero_when_no_page_has_ours(void **state)
{
	fixture *fx = *state;
	char l1[256];
	long long id = -1;
	char *body = (char *)"stale";

	push(fx, 200, next_link(fx, l1, sizeof(l1), "/repos/acme/widgets/issues/12/comments?per_page=100&page=2"),
		"[{\"id\":1,\"user\":{\"login\":\"mallory\"},\"body\":\"" HEADER "forged\"}]");
	push(fx, 200, NULL, "[{\"id\":2,\"user\":{\"login\":\"" BOT "\"},\"body\":\" " HEADER "\"}]");
	assert_int_equal(pmbot_gh_comment_find(&id, &body, fx->c, "acme/widgets", 12, HEADER, BOT,
		&fx->err), 0);
	assert_int_equal(id, 0);
	assert_null(body);
	assert_int_equal(fakehttp_count(fx->srv), 2);

	/* The body argument may be NULL. */
	push(fx, 200, NULL, "[{\"id\":7,\"user\":{\"login\":\"" BOT "\"},\"body\":\"" HEADER "x\"}]");
	assert_int_equal(pmbot_gh_comment_find(&id, NULL, fx->c, "acme/widgets", 12, HEADER, BOT,
		&fx->err), 0);
	assert_int_equal(id, 7);
}

static void test_ghops__comment_find_stops_when_next_links_lead_in_a_circle(void **state)
{
	fixture *fx = *state;
	char l1[256];
	long long id = -1;
	int i;

	next_link(fx, l1, sizeof(l1), "/repos/acme/widgets/issues/12/comments?per_page=100&page=2");
	for (i = 0; i < 3; i++)
		push(fx, 200, l1, "[]");
	assert_int_equal(pmbot_gh_comment_find(&id, NULL, fx->c, "acme/widgets", 12, HEADER, BOT,
		&fx->err), PMBOT_ERROR);
	assert_int_equal(id, 0);
	/* Page 1, then page 2 once: its link back to itself ends the walk. */
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_contains(fx->err.buf, "lead in a circle");
}

static void test_ghops__comment_find_reports_a_missing_pr_and_bad_pages(void **state)
{
	fixture *fx = *state;
	long long id = -1;

	push(fx, 404, NULL, "{\"message\":\"Not Found\"}");
	assert_int_equal(pmbot_gh_comment_find(&id, NULL, fx->c, "acme/widgets", 12, HEADER, BOT,
		&fx->err), PMBOT_ENOTFOUND);
	push(fx, 200, NULL, "{\"not\":\"a list\"}");
	assert_int_equal(pmbot_gh_comment_find(&id, NULL, fx->c, "acme/widgets", 12, HEADER, BOT,
		&fx->err), PMBOT_ERROR);
	assert_int_equal(id, 0);
	assert_contains(fx->err.buf, "not a JSON array");
}

/* ---- reading and writing comments --------------------------------------- */

static void test_ghops__comment_get_returns_the_current_body(void **state)
{
	fixture *fx = *state;
	char *body = NULL;

	push(fx, 200, NULL, "{\"id\":77,\"body\":\"" HEADER "applying\"}");
	assert_int_equal(pmbot_gh_comment_get(&body, fx->c, "acme/widgets", 77, &fx->err), 0);
	assert_string_equal(body, HEADER "applying");
	assert_request(fx, 0, "GET", "/repos/acme/widgets/issues/comments/77", "");
	free(body);

	push(fx, 200, NULL, "{\"id\":77,\"body\":null}");
	assert_int_equal(pmbot_gh_comment_get(&body, fx->c, "acme/widgets", 77, &fx->err), 0);
	assert_string_equal(body, "");
	free(body);

	push(fx, 404, NULL, "{\"message\":\"Not Found\"}");
	assert_int_equal(pmbot_gh_comment_get(&body, fx->c, "acme/widgets", 77, &fx->err),
		PMBOT_ENOTFOUND);
	assert_null(body);
}

static void test_ghops__comment_upsert_creates_with_post_and_returns_the_new_id(void **state)
{
	fixture *fx = *state;
	long long id = 0;

	push(fx, 201, NULL, "{\"id\":9001,\"body\":\"x\"}");
	assert_int_equal(pmbot_gh_comment_upsert(&id, fx->c, "acme/widgets", 12, 0,
		HEADER "{} -->\n\"quoted\" \xc3\xa9", &fx->err), 0);
	assert_int_equal(id, 9001);
	assert_request(fx, 0, "POST", "/repos/acme/widgets/issues/12/comments",
		"{\"body\":\"" HEADER "{} -->\\n\\\"quoted\\\" \xc3\xa9\"}");
}

static void test_ghops__comment_upsert_never_retries_a_create(void **state)
{
	fixture *fx = *state;
	long long id = -1;

	push(fx, 502, NULL, "{\"message\":\"Bad Gateway\"}");
	push(fx, 201, NULL, "{\"id\":1}");
	assert_int_equal(pmbot_gh_comment_upsert(&id, fx->c, "acme/widgets", 12, 0, "hi", &fx->err),
		PMBOT_GITHUB_EUNKNOWN_OUTCOME);
	assert_int_equal(id, 0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_contains(fx->err.buf, "commenting on acme/widgets#12: the outcome is unknown");
	assert_no_token(fx);
}

static void test_ghops__comment_upsert_edits_with_patch_and_retries_it(void **state)
{
	fixture *fx = *state;
	long long id = 0;

	push(fx, 502, NULL, "{\"message\":\"Bad Gateway\"}");
	push(fx, 200, NULL, "{\"id\":77,\"body\":\"new\"}");
	assert_int_equal(pmbot_gh_comment_upsert(&id, fx->c, "acme/widgets", 12, 77, "new",
		&fx->err), 0);
	assert_int_equal(id, 77);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_request(fx, 0, "PATCH", "/repos/acme/widgets/issues/comments/77", "{\"body\":\"new\"}");
	assert_request(fx, 1, "PATCH", "/repos/acme/widgets/issues/comments/77", "{\"body\":\"new\"}");
	assert_int_equal(fx->n_sleeps, 1);
}

static void test_ghops__comment_upsert_maps_403_and_404_to_forbidden(void **state)
{
	fixture *fx = *state;
	long long id = -1;

	push(fx, 403, NULL, "{\"message\":\"Resource not accessible by integration\"}");
	assert_int_equal(pmbot_gh_comment_upsert(&id, fx->c, "acme/widgets", 12, 0, "hi", &fx->err),
		PMBOT_GH_EFORBIDDEN);
	assert_int_equal(id, 0);
	assert_contains(fx->err.buf, "commenting on acme/widgets#12: the token may not write here");
	assert_contains(fx->err.buf, "Resource not accessible by integration");
	assert_no_token(fx);

	push(fx, 404, NULL, "{\"message\":\"Not Found\"}");
	assert_int_equal(pmbot_gh_comment_upsert(&id, fx->c, "acme/widgets", 12, 77, "hi", &fx->err),
		PMBOT_GH_EFORBIDDEN);
	/* A 404 PATCH is not retried like a 5xx. */
	assert_int_equal(fakehttp_count(fx->srv), 2);
}

static void test_ghops__comment_upsert_keeps_other_http_errors_apart_from_forbidden(void **state)
{
	fixture *fx = *state;
	long long id = -1;

	push(fx, 422, NULL, "{\"message\":\"Validation Failed\",\"errors\":[{\"code\":\"custom\","
		"\"message\":\"Body is too long (maximum is 65536 characters)\"}]}");
	assert_int_equal(pmbot_gh_comment_upsert(&id, fx->c, "acme/widgets", 12, 0, "hi", &fx->err),
		PMBOT_GITHUB_EHTTP);
	assert_contains(fx->err.buf, "commenting on acme/widgets#12 failed");
}

static void test_ghops__a_rate_limited_403_is_waited_out_not_forbidden(void **state)
{
	fixture *fx = *state;
	char headers[160];
	long long id = 0;

	snprintf(headers, sizeof(headers), "X-RateLimit-Remaining: 0\r\nX-RateLimit-Reset: %lld\r\n",
		T0_MS / 1000 + 30);
	push(fx, 403, headers, "{\"message\":\"API rate limit exceeded\"}");
	push(fx, 201, NULL, "{\"id\":5}");
	assert_int_equal(pmbot_gh_comment_upsert(&id, fx->c, "acme/widgets", 12, 0, "hi", &fx->err),
		0);
	assert_int_equal(id, 5);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_int_equal(fx->n_sleeps, 1);
}

static void test_ghops__comment_upsert_refuses_text_that_is_not_utf8(void **state)
{
	fixture *fx = *state;
	long long id = -1;

	assert_int_equal(pmbot_gh_comment_upsert(&id, fx->c, "acme/widgets", 12, 0, "bad \xff",
		&fx->err), PMBOT_EINVALID);
	assert_int_equal(pmbot_gh_comment_upsert(&id, fx->c, "acme/widgets", 12, 0, NULL,
		&fx->err), PMBOT_EINVALID);
	assert_int_equal(fakehttp_count(fx->srv), 0);
	assert_contains(fx->err.buf, "must be UTF-8 text");
}

/* ---- reactions ---------------------------------------------------------- */

static void test_ghops__reaction_add_posts_the_content_and_accepts_201_and_200(void **state)
{
	fixture *fx = *state;

	push(fx, 201, NULL, "{\"id\":1,\"content\":\"eyes\"}");
	push(fx, 200, NULL, "{\"id\":1,\"content\":\"eyes\"}");
	push(fx, 201, NULL, "{\"id\":2,\"content\":\"+1\"}");
	assert_int_equal(pmbot_gh_reaction_add(fx->c, "acme/widgets", 555, "eyes", &fx->err), 0);
	assert_int_equal(pmbot_gh_reaction_add(fx->c, "acme/widgets", 555, "eyes", &fx->err), 0);
	assert_int_equal(pmbot_gh_reaction_add(fx->c, "acme/widgets", 555, "+1", &fx->err), 0);
	assert_request(fx, 0, "POST", "/repos/acme/widgets/issues/comments/555/reactions",
		"{\"content\":\"eyes\"}");
	assert_request(fx, 2, "POST", "/repos/acme/widgets/issues/comments/555/reactions",
		"{\"content\":\"+1\"}");
	assert_string_equal(fx->err.buf, "");
}

static void test_ghops__reaction_add_refuses_an_unknown_reaction_without_a_request(void **state)
{
	fixture *fx = *state;

	assert_int_equal(pmbot_gh_reaction_add(fx->c, "acme/widgets", 555, "thumbsup", &fx->err),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_gh_reaction_add(fx->c, "acme/widgets", 555, NULL, &fx->err),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_gh_reaction_add(fx->c, "acme/widgets", 0, "eyes", &fx->err),
		PMBOT_EINVALID);
	assert_int_equal(fakehttp_count(fx->srv), 0);
	assert_contains(fx->err.buf, "not one of GitHub's reactions");
}

static void test_ghops__reaction_add_on_a_read_only_token_is_forbidden(void **state)
{
	fixture *fx = *state;

	push(fx, 403, NULL, "{\"message\":\"Resource not accessible by integration\"}");
	assert_int_equal(pmbot_gh_reaction_add(fx->c, "acme/widgets", 555, "-1", &fx->err),
		PMBOT_GH_EFORBIDDEN);
	assert_int_equal(fakehttp_count(fx->srv), 1);
}

/* ---- the tracking issue ------------------------------------------------- */

static void test_ghops__issue_find_lists_open_issues_by_creator_and_skips_pull_requests(
	void **state)
{
	fixture *fx = *state;
	long number = -1;
	char *body = NULL;

	push(fx, 200, NULL,
		"[{\"number\":40,\"state\":\"open\",\"user\":{\"login\":\"" BOT "\"},"
		"\"pull_request\":{\"url\":\"x\"},\"body\":\"" HEADER "a PR\"},"
		"{\"number\":39,\"state\":\"open\",\"user\":{\"login\":\"mallory\"},\"body\":\"" HEADER "x\"},"
		"{\"number\":38,\"state\":\"closed\",\"user\":{\"login\":\"" BOT "\"},\"body\":\"" HEADER "old\"},"
		"{\"number\":37,\"state\":\"open\",\"user\":{\"login\":\"" BOT "\"},\"body\":\"other\"},"
		"{\"number\":36,\"state\":\"open\",\"user\":{\"login\":\"" BOT "\"},\"body\":\"" HEADER "sync\"}]");
	assert_int_equal(pmbot_gh_issue_find(&number, &body, fx->c, "acme/widgets", HEADER, BOT,
		&fx->err), 0);
	assert_int_equal(number, 36);
	assert_string_equal(body, HEADER "sync");
	assert_request(fx, 0, "GET",
		"/repos/acme/widgets/issues?state=open&creator=" BOT_ESC "&per_page=100", "");
	free(body);
}

static void test_ghops__issue_find_reports_zero_when_there_is_none(void **state)
{
	fixture *fx = *state;
	char l1[256];
	long number = -1;
	char *body = (char *)"stale";

	push(fx, 200, next_link(fx, l1, sizeof(l1), "/repositories/9/issues?state=open&page=2"),
		"[{\"number\":2,\"state\":\"open\",\"user\":{\"login\":\"" BOT "\"},\"body\":null}]");
	push(fx, 200, NULL, "[]");
	assert_int_equal(pmbot_gh_issue_find(&number, &body, fx->c, "acme/widgets", HEADER, BOT,
		&fx->err), 0);
	assert_int_equal(number, 0);
	assert_null(body);
	assert_request(fx, 1, "GET", "/repositories/9/issues?state=open&page=2", "");
}

static void test_ghops__issue_upsert_creates_with_title_and_body(void **state)
{
	fixture *fx = *state;
	long number = 0;

	push(fx, 201, NULL, "{\"id\":123456,\"number\":41}");
	assert_int_equal(pmbot_gh_issue_upsert(&number, fx->c, "acme/widgets", 0,
		"pm-bot: Projects field sync", HEADER "{} -->\nbody", &fx->err), 0);
	assert_int_equal(number, 41);
	assert_request(fx, 0, "POST", "/repos/acme/widgets/issues",
		"{\"body\":\"" HEADER "{} -->\\nbody\",\"title\":\"pm-bot: Projects field sync\"}");

	/* A create needs a title. */
	assert_int_equal(pmbot_gh_issue_upsert(&number, fx->c, "acme/widgets", 0, NULL, "b",
		&fx->err), PMBOT_EINVALID);
	assert_int_equal(number, 0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
}

static void test_ghops__issue_upsert_edits_the_body_and_the_title_only_when_given(void **state)
{
	fixture *fx = *state;
	long number = 0;

	push(fx, 200, NULL, "{\"number\":41}");
	push(fx, 200, NULL, "{\"number\":41}");
	assert_int_equal(pmbot_gh_issue_upsert(&number, fx->c, "acme/widgets", 41, NULL, "new body",
		&fx->err), 0);
	assert_int_equal(number, 41);
	assert_int_equal(pmbot_gh_issue_upsert(&number, fx->c, "acme/widgets", 41, "T", "b",
		&fx->err), 0);
	assert_request(fx, 0, "PATCH", "/repos/acme/widgets/issues/41", "{\"body\":\"new body\"}");
	assert_request(fx, 1, "PATCH", "/repos/acme/widgets/issues/41",
		"{\"body\":\"b\",\"title\":\"T\"}");
}

static void test_ghops__issue_upsert_forbidden_and_answers_without_a_number(void **state)
{
	fixture *fx = *state;
	long number = -1;

	push(fx, 404, NULL, "{\"message\":\"Not Found\"}");
	assert_int_equal(pmbot_gh_issue_upsert(&number, fx->c, "acme/widgets", 0, "T", "b",
		&fx->err), PMBOT_GH_EFORBIDDEN);
	assert_int_equal(number, 0);
	assert_contains(fx->err.buf, "opening an issue in acme/widgets: the token may not write here");

	pmbot_buf_clear(&fx->err);
	push(fx, 201, NULL, "{\"id\":1}");
	assert_int_equal(pmbot_gh_issue_upsert(&number, fx->c, "acme/widgets", 0, "T", "b",
		&fx->err), PMBOT_ERROR);
	assert_int_equal(number, 0);
	assert_contains(fx->err.buf, "lacks the `number`");
}

/* ---- shared rules ------------------------------------------------------- */

static void test_ghops__refuses_bad_repos_logins_and_numbers_without_a_request(void **state)
{
	fixture *fx = *state;
	static const char *const bad_repos[] = {
		"acme", "acme/", "/widgets", "acme/widgets/extra", "../widgets", "acme/..", "acme/.", ""
	};
	pmbot_gh_pull p;
	char *s = NULL;
	long long id = -1;
	long n = -1;
	size_t i;

	for (i = 0; i < sizeof(bad_repos) / sizeof(bad_repos[0]); i++) {
		assert_int_equal(pmbot_gh_pull_get(&p, fx->c, bad_repos[i], 1, &fx->err),
			PMBOT_EINVALID);
		assert_null(p.head_sha);
	}
	assert_int_equal(pmbot_gh_pull_get(&p, fx->c, NULL, 1, &fx->err), PMBOT_EINVALID);
	assert_int_equal(pmbot_gh_pull_get(&p, fx->c, "acme/widgets", 0, &fx->err), PMBOT_EINVALID);
	assert_int_equal(pmbot_gh_permission(&s, fx->c, "acme/widgets", "..", &fx->err),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_gh_permission(&s, fx->c, "acme/widgets", "", &fx->err),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_gh_permission(&s, fx->c, "acme/widgets", NULL, &fx->err),
		PMBOT_EINVALID);
	assert_null(s);
	assert_int_equal(pmbot_gh_comment_find(&id, &s, fx->c, "acme/widgets", 1, "", BOT, &fx->err),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_gh_comment_find(&id, &s, fx->c, "acme/widgets", 1, HEADER, NULL,
		&fx->err), PMBOT_EINVALID);
	assert_int_equal(pmbot_gh_comment_find(&id, &s, fx->c, "acme/widgets", -1, HEADER, BOT,
		&fx->err), PMBOT_EINVALID);
	assert_int_equal(pmbot_gh_comment_get(&s, fx->c, "acme/widgets", 0, &fx->err),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_gh_comment_upsert(&id, fx->c, "acme/widgets", 0, 0, "b", &fx->err),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_gh_issue_find(&n, &s, fx->c, "acme", HEADER, BOT, &fx->err),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_gh_issue_upsert(&n, fx->c, "acme/widgets", -4, "T", "b", &fx->err),
		PMBOT_EINVALID);
	assert_int_equal(fakehttp_count(fx->srv), 0);
	assert_contains(fx->err.buf, "reading pull request acme/widgets/extra#1: the repository "
		"must be OWNER/NAME");
	assert_contains(fx->err.buf, "reading pull request (null)#1: the repository must be");

	/* A NULL err is allowed. */
	assert_int_equal(pmbot_gh_pull_get(&p, fx->c, "acme", 1, NULL), PMBOT_EINVALID);
}

static void test_ghops__reads_never_use_the_etag_cache(void **state)
{
	fixture *fx = *state;
	char *body = NULL;
	DIR *d;
	struct dirent *e;
	size_t entries = 0;

	push(fx, 200, "ETag: \"v1\"\r\n", "{\"id\":77,\"body\":\"planned\"}");
	push(fx, 200, "ETag: \"v2\"\r\n", "{\"id\":77,\"body\":\"applying\"}");
	assert_int_equal(pmbot_gh_comment_get(&body, fx->c, "acme/widgets", 77, &fx->err), 0);
	assert_string_equal(body, "planned");
	free(body);
	assert_int_equal(pmbot_gh_comment_get(&body, fx->c, "acme/widgets", 77, &fx->err), 0);
	assert_string_equal(body, "applying");
	free(body);
	assert_null(fakehttp_header_value(fakehttp_get(fx->srv, 1), "If-None-Match"));
	assert_non_null(d = opendir(fx->cache));
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			entries++;
	closedir(d);
	assert_int_equal(entries, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_ghops__viewer_login_is_one_graphql_request_in_rest_spelling),
		T(test_ghops__viewer_login_without_a_login_is_an_error),
		T(test_ghops__viewer_login_reports_a_bad_token_without_the_token),
		T(test_ghops__pull_get_returns_head_sha_repos_and_state),
		T(test_ghops__pull_get_gives_a_deleted_fork_an_empty_head_repo),
		T(test_ghops__pull_get_reports_a_missing_pull_as_not_found),
		T(test_ghops__pull_get_refuses_a_head_sha_that_is_not_hex),
		T(test_ghops__permission_uses_role_name_to_tell_maintain_and_triage_apart),
		T(test_ghops__permission_falls_back_to_permission_for_custom_or_empty_roles),
		T(test_ghops__permission_of_an_unknown_user_is_none),
		T(test_ghops__permission_percent_encodes_a_bot_login),
		T(test_ghops__comment_find_walks_pages_to_the_first_comment_with_header_and_author),
		T(test_ghops__comment_find_reports_zero_when_no_page_has_ours),
		T(test_ghops__comment_each_walks_pages_in_order_until_told_to_stop),
		T(test_ghops__comment_find_stops_when_next_links_lead_in_a_circle),
		T(test_ghops__comment_find_reports_a_missing_pr_and_bad_pages),
		T(test_ghops__comment_get_returns_the_current_body),
		T(test_ghops__comment_upsert_creates_with_post_and_returns_the_new_id),
		T(test_ghops__comment_upsert_never_retries_a_create),
		T(test_ghops__comment_upsert_edits_with_patch_and_retries_it),
		T(test_ghops__comment_upsert_maps_403_and_404_to_forbidden),
		T(test_ghops__comment_upsert_keeps_other_http_errors_apart_from_forbidden),
		T(test_ghops__a_rate_limited_403_is_waited_out_not_forbidden),
		T(test_ghops__comment_upsert_refuses_text_that_is_not_utf8),
		T(test_ghops__reaction_add_posts_the_content_and_accepts_201_and_200),
		T(test_ghops__reaction_add_refuses_an_unknown_reaction_without_a_request),
		T(test_ghops__reaction_add_on_a_read_only_token_is_forbidden),
		T(test_ghops__issue_find_lists_open_issues_by_creator_and_skips_pull_requests),
		T(test_ghops__issue_find_reports_zero_when_there_is_none),
		T(test_ghops__issue_upsert_creates_with_title_and_body),
		T(test_ghops__issue_upsert_edits_the_body_and_the_title_only_when_given),
		T(test_ghops__issue_upsert_forbidden_and_answers_without_a_number),
		T(test_ghops__refuses_bad_repos_logins_and_numbers_without_a_request),
		T(test_ghops__reads_never_use_the_etag_cache),
#undef T
	};
	int rc;

	if (pmbot_net_global_init(NULL) < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	pmbot_net_global_cleanup();
	return rc;
}
