#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers/tmpdir.h"

#include "helpers/fakehttp.h"
#include "../../src/github/github_int.h"
#include "pmbot/buf.h"
#include "pmbot/fs.h"
#include "pmbot/github.h"
#include "pmbot/net.h"
#include "pmbot/banned.h"

/*
 * The GitHub HTTP client against a scripted loopback server that records
 * every request. The clock and sleep are fakes: waits are asserted as
 * computed, nothing sleeps for real (only curl's own short timeouts run on
 * the wall clock).
 */

#define TOKEN "ghp_S3cr3tT0kenForTests0123456789abcd"
#define T0_MS 1700000000000LL /* 2023-11-14T22:13:20Z */
#define MAX_WAITS 16

typedef struct {
	fakehttp *srv;
	char cache[256];
	char api[128];
	char graphql[160];
	pmbot_github_options opts;
	pmbot_github_client *c;
	pmbot_github_response resp;
	long long now_ms;
	long long waits[MAX_WAITS];
	size_t n_waits;
	pmbot_buf err;             /* the message of the last request, fresh each call */
	pmbot_buf events;          /* every event message, one per line */
	size_t n_kind[6];
	long long last_wait_event;
} fixture;

/* The fixture's message buffer emptied: what one request says lands there. */
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

	if (fx->n_waits < MAX_WAITS)
		fx->waits[fx->n_waits++] = ms;
	fx->now_ms += ms;
}

static void on_event(void *payload, const pmbot_github_event *ev)
{
	fixture *fx = payload;

	fx->n_kind[ev->kind]++;
	if (ev->wait_ms)
		fx->last_wait_event = ev->wait_ms;
	pmbot_buf_printf(&fx->events, "%s\n", ev->message);
}

static int setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));
	pmbot_github_response init = PMBOT_GITHUB_RESPONSE_INIT;
	const char *tmp = getenv("TMPDIR");

	if (!fx || fakehttp_start(&fx->srv) < 0)
		return -1;
	snprintf(fx->cache, sizeof(fx->cache), "%s/pmbot-test-github-XXXXXX",
		tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(fx->cache))
		return -1;
	snprintf(fx->api, sizeof(fx->api), "%s", fakehttp_url(fx->srv));
	snprintf(fx->graphql, sizeof(fx->graphql), "%s/graphql", fakehttp_url(fx->srv));
	pmbot_github_options_init(&fx->opts);
	fx->opts.api_url = fx->api;
	fx->opts.graphql_url = fx->graphql;
	fx->opts.token = TOKEN;
	fx->opts.cache_dir = fx->cache;
	fx->opts.pace_ms = 0;
	fx->opts.now = fake_now;
	fx->opts.sleep = fake_sleep;
	fx->opts.clock_payload = fx;
	fx->opts.on_event = on_event;
	fx->opts.event_payload = fx;
	fx->now_ms = T0_MS;
	fx->resp = init;
	pmbot_buf_init(&fx->events, 0);
	pmbot_buf_init(&fx->err, 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	pmbot_github_client_free(fx->c);
	pmbot_github_response_free(&fx->resp);
	fakehttp_stop(fx->srv);
	test_remove_tree(fx->cache);
	pmbot_buf_free(&fx->events);
	pmbot_buf_free(&fx->err);
	free(fx);
	return 0;
}

/* Make the fixture's client from fx->opts as the test left them. */
static pmbot_github_client *client(fixture *fx)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	int rc;

	pmbot_github_client_free(fx->c);
	fx->c = NULL;
	rc = pmbot_github_client_new(&fx->c, &fx->opts, &err);
	if (rc != 0)
		print_error("client_new: %s\n", err.buf);
	assert_int_equal(rc, 0);
	pmbot_buf_free(&err);
	return fx->c;
}

static const fakehttp_request *req(fixture *fx, size_t i)
{
	const fakehttp_request *r = fakehttp_get(fx->srv, i);

	assert_non_null(r);
	return r;
}

static void push(fixture *fx, int status, const char *headers, const char *body)
{
	assert_int_equal(fakehttp_push_simple(fx->srv, status, headers, body), 0);
}

static void assert_waits(fixture *fx, size_t n, const long long *expect)
{
	size_t i;

	assert_int_equal(fx->n_waits, n);
	for (i = 0; i < n; i++)
		assert_int_equal(fx->waits[i], expect[i]);
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
}

static int has_gzip(void)
{
	return pmbot_net_has_gzip();
}

/* Every header the client sends on a GET, and nothing else. */
static void assert_get_headers(fixture *fx, const fakehttp_request *r, const char *auth)
{
	char host[64];
	size_t expect = 4 + (auth != NULL) + (size_t)has_gzip();

	snprintf(host, sizeof(host), "%s", fx->api + strlen("http://"));
	assert_string_equal(fakehttp_header_value(r, "Host"), host);
	assert_string_equal(fakehttp_header_value(r, "User-Agent"), "pm-bot/" PMBOT_VERSION);
	assert_string_equal(fakehttp_header_value(r, "Accept"), "application/vnd.github+json");
	assert_string_equal(fakehttp_header_value(r, "X-GitHub-Api-Version"), "2022-11-28");
	if (auth)
		assert_string_equal(fakehttp_header_value(r, "Authorization"), auth);
	else
		assert_null(fakehttp_header_value(r, "Authorization"));
	if (has_gzip())
		assert_string_equal(fakehttp_header_value(r, "Accept-Encoding"), "gzip");
	assert_null(fakehttp_header_value(r, "Content-Type"));
	assert_null(fakehttp_header_value(r, "Content-Length"));
	/* "If-None-Match" is counted by the callers that expect it. */
	if (fakehttp_header_value(r, "If-None-Match"))
		expect++;
	assert_int_equal(r->n_headers, expect);
	assert_int_equal(r->body_len, 0);
}

/* ---- requests on the wire ---- */

static void test_github_http__get_sends_exact_request_line_and_headers(void **state)
{
	fixture *fx = *state;
	const fakehttp_request *r;

	push(fx, 200, "ETag: W/\"abc\"\r\nX-RateLimit-Remaining: 4999\r\n"
		"X-RateLimit-Reset: 1700003600\r\nX-GitHub-Request-Id: ABCD:1234\r\n"
		"Content-Type: application/json\r\n", "{\"number\":7}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET",
		"/repos/acme/widgets/issues/7?state=all", NULL, ERR), 0);
	assert_int_equal(fx->resp.status, 200);
	assert_int_equal(fx->resp.from_cache, 0);
	assert_int_equal(json_integer_value(json_object_get(fx->resp.json, "number")), 7);
	assert_string_equal(fx->resp.body.buf, "{\"number\":7}");
	assert_string_equal(fx->resp.etag, "W/\"abc\"");
	assert_string_equal(fx->resp.request_id, "ABCD:1234");
	assert_int_equal(fx->resp.rate_remaining, 4999);
	assert_int_equal(fx->resp.rate_reset, 1700003600);
	assert_int_equal(fx->resp.retry_after, -1);
	assert_null(fx->resp.next_url);
	assert_string_equal(fx->err.buf, "");

	assert_int_equal(fakehttp_count(fx->srv), 1);
	r = req(fx, 0);
	assert_string_equal(r->method, "GET");
	assert_string_equal(r->target, "/repos/acme/widgets/issues/7?state=all");
	assert_string_equal(r->version, "HTTP/1.1");
	assert_get_headers(fx, r, "Bearer " TOKEN);
}

static void test_github_http__anonymous_client_sends_no_authorization(void **state)
{
	fixture *fx = *state;

	fx->opts.token = "";
	push(fx, 200, NULL, "{}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/zen", NULL, ERR), 0);
	assert_int_equal(pmbot_github_has_token(fx->c), 0);
	assert_get_headers(fx, req(fx, 0), NULL);
}

/* A 401 says what to set, and that no token was there, not just the status. */
static void test_github_http__a_401_names_the_token_variables(void **state)
{
	fixture *fx = *state;

	fx->opts.token = "";
	push(fx, 401, NULL, "{\"message\":\"Requires authentication\"}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR),
		PMBOT_GITHUB_EHTTP);
	assert_contains(fx->err.buf, "HTTP 401: Requires authentication. "
		"No token was given: set GH_TOKEN or GITHUB_TOKEN");
}

static void test_github_http__client_reads_urls_and_token_from_the_environment(void **state)
{
	fixture *fx = *state;
	char api[160];

	snprintf(api, sizeof(api), "%s/api/v3/", fx->api);
	fx->opts.api_url = NULL;
	fx->opts.graphql_url = NULL;
	fx->opts.token = NULL;
	setenv("GITHUB_API_URL", api, 1);
	setenv("GITHUB_GRAPHQL_URL", fx->graphql, 1);
	setenv("GH_TOKEN", "gh-token-wins", 1);
	setenv("GITHUB_TOKEN", "github-token", 1);

	push(fx, 200, NULL, "{}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/rate_limit", NULL, ERR), 0);
	assert_string_equal(req(fx, 0)->target, "/api/v3/rate_limit");
	assert_string_equal(fakehttp_header_value(req(fx, 0), "Authorization"),
		"Bearer gh-token-wins");

	/* An empty GH_TOKEN counts as unset. */
	setenv("GH_TOKEN", "", 1);
	push(fx, 200, NULL, "{\"data\":{}}");
	assert_int_equal(pmbot_github_graphql_ex(&fx->resp, client(fx), "{viewer{login}}", NULL,
		0, ERR), 0);
	assert_string_equal(req(fx, 1)->target, "/graphql");
	assert_string_equal(fakehttp_header_value(req(fx, 1), "Authorization"),
		"Bearer github-token");

	/* Explicit settings beat the environment. */
	fx->opts.api_url = fx->api;
	fx->opts.token = "explicit";
	push(fx, 200, NULL, "{}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/rate_limit", NULL, ERR), 0);
	assert_string_equal(req(fx, 2)->target, "/rate_limit");
	assert_string_equal(fakehttp_header_value(req(fx, 2), "Authorization"), "Bearer explicit");

	unsetenv("GITHUB_API_URL");
	unsetenv("GITHUB_GRAPHQL_URL");
	unsetenv("GH_TOKEN");
	unsetenv("GITHUB_TOKEN");
}

static void test_github_http__rejects_a_token_that_would_inject_headers_without_echoing_it(
	void **state)
{
	fixture *fx = *state;
	pmbot_buf err = PMBOT_BUF_INIT;

	fx->opts.token = "tok-secret\r\nX-Evil: 1";
	assert_int_equal(pmbot_github_client_new(&fx->c, &fx->opts, &err), PMBOT_EINVALID);
	assert_null(fx->c);
	assert_contains(err.buf, "token");
	assert_null(strstr(err.buf, "tok-secret"));
	assert_null(strstr(err.buf, "X-Evil"));
	pmbot_buf_free(&err);
}

static void test_github_http__rejects_base_urls_that_are_not_plain_http(void **state)
{
	fixture *fx = *state;
	pmbot_buf err = PMBOT_BUF_INIT;

	fx->opts.api_url = "https://user:hunter2@github.example";
	assert_int_equal(pmbot_github_client_new(&fx->c, &fx->opts, &err), PMBOT_EINVALID);
	assert_contains(err.buf, "credentials");
	assert_null(strstr(err.buf, "hunter2"));
	pmbot_buf_clear(&err);
	fx->opts.api_url = "ftp://github.example";
	assert_int_equal(pmbot_github_client_new(&fx->c, &fx->opts, &err), PMBOT_EINVALID);
	assert_contains(err.buf, "API URL");
	pmbot_buf_clear(&err);
	fx->opts.api_url = fx->api;
	fx->opts.graphql_url = "https://";
	assert_int_equal(pmbot_github_client_new(&fx->c, &fx->opts, &err), PMBOT_EINVALID);
	assert_contains(err.buf, "GraphQL URL");
	assert_null(fx->c);
	pmbot_buf_free(&err);
}

static void test_github_http__user_agent_can_be_set_but_not_used_to_inject(void **state)
{
	fixture *fx = *state;
	pmbot_buf err = PMBOT_BUF_INIT;

	fx->opts.user_agent = "acme-planner/2.1 (+https://acme.example)";
	push(fx, 200, NULL, "{}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/zen", NULL, ERR), 0);
	assert_string_equal(fakehttp_header_value(req(fx, 0), "User-Agent"),
		"acme-planner/2.1 (+https://acme.example)");
	pmbot_github_client_free(fx->c);
	fx->c = NULL;
	fx->opts.user_agent = "x\r\nX-Evil: 1";
	assert_int_equal(pmbot_github_client_new(&fx->c, &fx->opts, &err), PMBOT_EINVALID);
	assert_contains(err.buf, "User-Agent");
	pmbot_buf_free(&err);
}

static void test_github_http__post_then_get_leaks_no_body_method_or_content_type(void **state)
{
	fixture *fx = *state;
	const fakehttp_request *post, *get;
	json_t *body = json_pack("{s:s, s:[s]}", "title", "T", "labels", "x");

	push(fx, 201, NULL, "{\"number\":1}");
	push(fx, 200, NULL, "{\"number\":1}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "POST", "/repos/a/b/issues",
		body, ERR), 0);
	assert_int_equal(fx->resp.status, 201);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "/repos/a/b/issues/1", NULL, ERR),
		0);
	json_decref(body);

	post = req(fx, 0);
	assert_string_equal(post->method, "POST");
	assert_string_equal(post->target, "/repos/a/b/issues");
	/* Canonical JSON: keys sorted, no spaces, same bytes every run. */
	assert_string_equal(post->body, "{\"labels\":[\"x\"],\"title\":\"T\"}");
	assert_string_equal(fakehttp_header_value(post, "Content-Type"), "application/json");
	assert_string_equal(fakehttp_header_value(post, "Content-Length"), "28");
	assert_null(fakehttp_header_value(post, "Expect"));
	assert_string_equal(fakehttp_header_value(post, "Authorization"), "Bearer " TOKEN);

	get = req(fx, 1);
	assert_string_equal(get->method, "GET");
	assert_string_equal(get->target, "/repos/a/b/issues/1");
	assert_get_headers(fx, get, "Bearer " TOKEN);
	/* The handle was reset, not replaced: the connection is reused. */
	assert_int_equal(get->connection, post->connection);
}

static void test_github_http__no_method_or_body_carries_over_between_writes(void **state)
{
	fixture *fx = *state;
	json_t *patch = json_pack("{s:s}", "state", "closed");
	json_t *post = json_pack("{s:[s]}", "labels", "bug");
	const fakehttp_request *r;

	push(fx, 200, NULL, "{}");
	push(fx, 200, NULL, "[]");
	push(fx, 204, NULL, NULL);
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "PATCH", "/repos/a/b/issues/1",
		patch, ERR), 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "POST", "/repos/a/b/issues/1/labels",
		post, ERR), 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "DELETE",
		"/repos/a/b/issues/1/labels/bug", NULL, ERR), 0);
	json_decref(patch);
	json_decref(post);

	r = req(fx, 0);
	assert_string_equal(r->method, "PATCH");
	assert_string_equal(r->body, "{\"state\":\"closed\"}");
	r = req(fx, 1);
	assert_string_equal(r->method, "POST");
	assert_string_equal(r->body, "{\"labels\":[\"bug\"]}");
	r = req(fx, 2);
	assert_string_equal(r->method, "DELETE");
	assert_int_equal(r->body_len, 0);
	assert_null(fakehttp_header_value(r, "Content-Length"));
	assert_null(fakehttp_header_value(r, "Content-Type"));
}

static void test_github_http__bodiless_put_sends_length_zero_and_delete_sends_nothing(
	void **state)
{
	fixture *fx = *state;
	const fakehttp_request *r;
	json_t *body = json_pack("{s:i}", "sub_issue_id", 42);

	push(fx, 204, NULL, NULL);
	push(fx, 204, NULL, NULL);
	push(fx, 200, NULL, "{}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "PUT", "/user/starred/a/b",
		NULL, ERR), 0);
	assert_int_equal(fx->resp.status, 204);
	assert_null(fx->resp.json);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "DELETE",
		"/repos/a/b/issues/1/labels/needs%20triage", NULL, ERR), 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "DELETE",
		"/repos/a/b/issues/1/sub_issue", body, ERR), 0);
	json_decref(body);

	r = req(fx, 0);
	assert_string_equal(r->method, "PUT");
	assert_string_equal(fakehttp_header_value(r, "Content-Length"), "0");
	assert_null(fakehttp_header_value(r, "Content-Type"));
	r = req(fx, 1);
	assert_string_equal(r->method, "DELETE");
	assert_string_equal(r->target, "/repos/a/b/issues/1/labels/needs%20triage");
	assert_null(fakehttp_header_value(r, "Content-Length"));
	assert_null(fakehttp_header_value(r, "Content-Type"));
	r = req(fx, 2);
	assert_string_equal(r->method, "DELETE");
	assert_string_equal(r->body, "{\"sub_issue_id\":42}");
	assert_string_equal(fakehttp_header_value(r, "Content-Type"), "application/json");
}

static void test_github_http__a_get_follows_a_redirect_of_a_renamed_repository(void **state)
{
	fixture *fx = *state;

	push(fx, 301, "Location: /repositories/9\r\nETag: \"old\"\r\n",
		"{\"message\":\"Moved Permanently\"}");
	push(fx, 200, "X-RateLimit-Remaining: 17\r\n", "{\"id\":9}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/repos/old/name", NULL, ERR),
		0);
	assert_string_equal(fx->resp.body.buf, "{\"id\":9}");
	/* Headers of the redirect do not leak into the final answer. */
	assert_null(fx->resp.etag);
	assert_int_equal(fx->resp.rate_remaining, 17);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_string_equal(req(fx, 1)->target, "/repositories/9");
	assert_get_headers(fx, req(fx, 1), "Bearer " TOKEN);
}

/* A GET of /repos/old/name answered by a redirect to `location`, which must be refused. */
static void expect_redirect_refused(fixture *fx, const char *location, const char *shown)
{
	char headers[512];

	snprintf(headers, sizeof(headers), "Location: %s\r\n", location);
	push(fx, 301, headers, "{\"message\":\"Moved Permanently\"}");
	push(fx, 200, NULL, "{\"id\":666}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/repos/old/name", NULL, ERR),
		PMBOT_GITHUB_ETRANSPORT);
	assert_contains(fx->err.buf, "redirects to another origin");
	assert_contains(fx->err.buf, shown);
	assert_null(strstr(fx->err.buf, TOKEN));
	/* Only the first request left, and the redirect's body is not taken as the answer. */
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_null(strstr(fx->resp.body.buf ? fx->resp.body.buf : "", "666"));
	assert_int_equal(fakehttp_pending(fx->srv), 1);
}

static void test_github_http__a_redirect_to_another_port_is_refused_and_the_other_server_gets_nothing(
	void **state)
{
	fixture *fx = *state;
	fakehttp *other = NULL;
	char loc[160], origin[128];

	assert_int_equal(fakehttp_start(&other), 0);
	assert_int_equal(fakehttp_push_simple(other, 200, NULL, "{\"id\":666}"), 0);
	snprintf(origin, sizeof(origin), "%s", fakehttp_url(other));
	snprintf(loc, sizeof(loc), "%s/repositories/9", origin);
	expect_redirect_refused(fx, loc, origin);
	/* Not a connection, let alone the token. */
	assert_int_equal(fakehttp_count(other), 0);
	fakehttp_stop(other);
}

static void test_github_http__a_redirect_to_another_host_or_scheme_is_refused(void **state)
{
	fixture *fx = *state;
	const char *port = strrchr(fx->api, ':');
	char loc[160], shown[160];

	/* Another name for the same address is another origin all the same. */
	snprintf(loc, sizeof(loc), "http://localhost%s/repositories/9", port);
	snprintf(shown, sizeof(shown), "http://localhost%s", port);
	expect_redirect_refused(fx, loc, shown);
	/* http to https changes the origin too (and https to http, see same_origin below). */
	fakehttp_stop(fx->srv);
	assert_int_equal(fakehttp_start(&fx->srv), 0);
	snprintf(fx->api, sizeof(fx->api), "%s", fakehttp_url(fx->srv));
	port = strrchr(fx->api, ':');
	snprintf(loc, sizeof(loc), "https://127.0.0.1%s/repositories/9", port);
	snprintf(shown, sizeof(shown), "https://127.0.0.1%s", port);
	expect_redirect_refused(fx, loc, shown);
	/* Credentials in the location would be sent by curl: refused. */
	fakehttp_stop(fx->srv);
	assert_int_equal(fakehttp_start(&fx->srv), 0);
	snprintf(fx->api, sizeof(fx->api), "%s", fakehttp_url(fx->srv));
	port = strrchr(fx->api, ':');
	snprintf(loc, sizeof(loc), "http://u:p@127.0.0.1%s/repositories/9", port);
	expect_redirect_refused(fx, loc, "redirects");
}

static void test_github_http__a_same_origin_redirect_keeps_the_token_and_is_bounded(void **state)
{
	fixture *fx = *state;
	char headers[256];
	int i;

	/* An absolute location on the same origin, then a 307. */
	snprintf(headers, sizeof(headers), "Location: %s/repositories/9\r\n", fx->api);
	push(fx, 301, headers, NULL);
	push(fx, 307, "Location: /repositories/9/moved\r\n", NULL);
	push(fx, 200, NULL, "{\"id\":9}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/repos/old/name", NULL, ERR),
		0);
	assert_string_equal(fx->resp.body.buf, "{\"id\":9}");
	assert_int_equal(fx->resp.status, 200);
	assert_int_equal(fakehttp_count(fx->srv), 3);
	assert_string_equal(req(fx, 2)->target, "/repositories/9/moved");
	assert_get_headers(fx, req(fx, 1), "Bearer " TOKEN);
	assert_get_headers(fx, req(fx, 2), "Bearer " TOKEN);
	/* A loop ends after 5 redirects. */
	for (i = 0; i < 7; i++)
		push(fx, 302, "Location: /loop\r\n", NULL);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "/repos/a/b", NULL, ERR),
		PMBOT_GITHUB_ETRANSPORT);
	assert_contains(fx->err.buf, "more than 5 redirects");
	assert_int_equal(fakehttp_count(fx->srv), 3 + 6);
}

static void test_github_http__a_write_is_never_redirected(void **state)
{
	fixture *fx = *state;
	json_t *body = json_pack("{s:s}", "title", "x");

	push(fx, 307, "Location: /repos/new/name/issues\r\n", NULL);
	push(fx, 201, NULL, "{\"id\":1}");
	assert_true(pmbot_github_rest(&fx->resp, client(fx), "POST", "/repos/old/name/issues",
		body, ERR) < 0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	json_decref(body);
}

static void test_github_http__same_origin_compares_scheme_host_and_port(void **state)
{
	(void)state;
	assert_int_equal(pmbot_net_same_origin("https://api.github.com",
		"https://api.github.com/repositories/9"), 1);
	assert_int_equal(pmbot_net_same_origin("https://api.github.com/repos/a/b",
		"https://API.GitHub.com:443/repositories/9?x=1"), 1);
	assert_int_equal(pmbot_net_same_origin("http://127.0.0.1:8080/x",
		"http://127.0.0.1:8080/y"), 1);
	/* https to http is another origin, even on the same host. */
	assert_int_equal(pmbot_net_same_origin("https://api.github.com",
		"http://api.github.com/repositories/9"), 0);
	assert_int_equal(pmbot_net_same_origin("https://api.github.com",
		"https://api.github.com:8443/"), 0);
	assert_int_equal(pmbot_net_same_origin("https://api.github.com",
		"https://api.github.com.evil.example/"), 0);
	assert_int_equal(pmbot_net_same_origin("https://api.github.com",
		"https://api.github.com@evil.example/"), 0);
	assert_int_equal(pmbot_net_same_origin("https://api.github.com",
		"https://user:pass@api.github.com/"), 0);
	assert_int_equal(pmbot_net_same_origin("https://api.github.com", "ftp://api.github.com/"),
		0);
	assert_int_equal(pmbot_net_same_origin("https://api.github.com", "not a url"), 0);
}

static void test_github_http__refuses_bad_methods_paths_and_a_get_with_a_body(void **state)
{
	fixture *fx = *state;
	json_t *body = json_object();

	client(fx);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "HEAD", "/zen", NULL, ERR),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "/zen", body, ERR), PMBOT_EINVALID);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "zen", NULL, ERR), PMBOT_EINVALID);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "/labels/needs triage", NULL, ERR),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "http://evil.example/zen",
		NULL, ERR), PMBOT_EINVALID);
	assert_contains(fx->err.buf, "not under the API URL");
	assert_int_equal(fakehttp_count(fx->srv), 0);
	json_decref(body);
}

static void test_github_http__path_escape_encodes_everything_but_unreserved(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_github_path_escape(&b, "needs triage/ä?&#%A-z_0.~"), 0);
	assert_string_equal(b.buf, "needs%20triage%2F%C3%A4%3F%26%23%25A-z_0.~");
	pmbot_buf_free(&b);
}

/* ---- pagination ---- */

static void test_github_http__link_next_parses_rfc8288_forms(void **state)
{
	char *next;

	(void)state;
	assert_int_equal(pmbot_github_link_next(&next,
		"<https://api.github.com/x?page=2>; rel=\"next\", "
		"<https://api.github.com/x?page=5>; rel=\"last\""), 0);
	assert_string_equal(next, "https://api.github.com/x?page=2");
	free(next);
	assert_int_equal(pmbot_github_link_next(&next,
		"<https://a/x?page=1>; rel=\"prev\", <https://a/x?page=3>;rel=next"), 0);
	assert_string_equal(next, "https://a/x?page=3");
	free(next);
	assert_int_equal(pmbot_github_link_next(&next,
		"<https://a/x?page=3>; title=\"a, b\"; rel=\"last next\""), 0);
	assert_string_equal(next, "https://a/x?page=3");
	free(next);
	assert_int_equal(pmbot_github_link_next(&next,
		"<https://a/x?page=1>; rel=\"prev\", <https://a/x?page=9>; rel=\"nextish\""), 0);
	assert_null(next);
	assert_int_equal(pmbot_github_link_next(&next, ""), 0);
	assert_null(next);
}

static void test_github_http__paginate_follows_link_next_over_three_pages(void **state)
{
	fixture *fx = *state;
	char h1[512], h2[512];
	json_t *all = NULL, *expect = json_pack("[iiiii]", 1, 2, 3, 4, 5);
	pmbot_github_stats st;

	snprintf(h1, sizeof(h1), "Link: <%s/repositories/9/issues?state=all&per_page=100&page=2>; "
		"rel=\"next\", <%s/repositories/9/issues?state=all&per_page=100&page=3>; "
		"rel=\"last\"\r\n", fx->api, fx->api);
	snprintf(h2, sizeof(h2), "Link: <%s/repositories/9/issues?state=all&per_page=100&page=1>; "
		"rel=\"prev\", <%s/repositories/9/issues?state=all&per_page=100&page=3>; "
		"rel=\"next\"\r\n", fx->api, fx->api);
	push(fx, 200, h1, "[1,2]");
	push(fx, 200, h2, "[3,4]");
	push(fx, 200, NULL, "[5]");
	assert_int_equal(pmbot_github_rest_paginate(&all, client(fx),
		"/repos/a/b/issues?state=all", 0, ERR), 0);
	assert_true(json_equal(all, expect));
	assert_int_equal(fakehttp_count(fx->srv), 3);
	assert_string_equal(req(fx, 0)->target, "/repos/a/b/issues?state=all&per_page=100");
	assert_string_equal(req(fx, 1)->target,
		"/repositories/9/issues?state=all&per_page=100&page=2");
	assert_string_equal(req(fx, 2)->target,
		"/repositories/9/issues?state=all&per_page=100&page=3");
	assert_get_headers(fx, req(fx, 2), "Bearer " TOKEN);
	pmbot_github_client_stats(&st, fx->c);
	assert_int_equal(st.requests, 3);
	assert_int_equal(st.rest, 3);
	assert_int_equal(st.graphql, 0);
	json_decref(all);
	json_decref(expect);
}

static void test_github_http__paginate_keeps_an_explicit_per_page(void **state)
{
	fixture *fx = *state;
	json_t *all = NULL;

	push(fx, 200, NULL, "[]");
	push(fx, 200, NULL, "[]");
	assert_int_equal(pmbot_github_rest_paginate(&all, client(fx), "/user/repos?per_page=5",
		0, ERR), 0);
	json_decref(all);
	assert_int_equal(pmbot_github_rest_paginate(&all, fx->c, "/user/repos", 0, ERR), 0);
	assert_int_equal(json_array_size(all), 0);
	json_decref(all);
	assert_string_equal(req(fx, 0)->target, "/user/repos?per_page=5");
	assert_string_equal(req(fx, 1)->target, "/user/repos?per_page=100");
}

static void test_github_http__paginate_refuses_a_next_link_to_another_origin(void **state)
{
	fixture *fx = *state;
	json_t *all = (json_t *)1;

	push(fx, 200, "Link: <http://evil.example/steal?page=2>; rel=\"next\"\r\n", "[1]");
	push(fx, 200, NULL, "[2]");
	assert_int_equal(pmbot_github_rest_paginate(&all, client(fx), "/repos/a/b/issues", 0, ERR),
		PMBOT_EINVALID);
	assert_null(all);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_contains(fx->err.buf, "http://evil.example/steal?page=2");
	assert_contains(fx->err.buf, "not under the API URL");
}

static void test_github_http__paginate_refuses_a_page_that_is_not_an_array(void **state)
{
	fixture *fx = *state;
	json_t *all = NULL;

	push(fx, 200, NULL, "{\"total_count\":0,\"items\":[]}");
	assert_int_equal(pmbot_github_rest_paginate(&all, client(fx), "/search/issues?q=x", 0, ERR),
		PMBOT_EINVALID);
	assert_null(all);
	assert_contains(fx->err.buf, "not a JSON array");
}

/* ---- ETag cache ---- */

static size_t cache_files(fixture *fx, pmbot_buf *all_content)
{
	struct dirent *e;
	size_t n = 0;
	DIR *d = opendir(fx->cache);

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[512];

		if (e->d_name[0] == '.')
			continue;
		n++;
		assert_int_equal(strlen(e->d_name), 64);
		snprintf(path, sizeof(path), "%s/%s", fx->cache, e->d_name);
		if (all_content) {
			assert_int_equal(pmbot_fs_read(all_content, path), 0);
			pmbot_buf_printf(all_content, "\n%s\n", e->d_name);
		}
	}
	closedir(d);
	return n;
}

static void test_github_http__conditional_get_serves_the_cached_body_on_304(void **state)
{
	fixture *fx = *state;
	pmbot_github_stats st;
	pmbot_buf files = PMBOT_BUF_INIT;

	push(fx, 200, "ETag: \"v1\"\r\n", "[{\"number\":1}]");
	push(fx, 304, "ETag: \"v1\"\r\nX-RateLimit-Remaining: 4000\r\n", NULL);
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/repos/a/b/issues",
		NULL, ERR), 0);
	assert_null(fakehttp_header_value(req(fx, 0), "If-None-Match"));
	assert_int_equal(cache_files(fx, &files), 1);
	assert_null(strstr(files.buf, TOKEN));

	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "/repos/a/b/issues", NULL, ERR), 0);
	assert_string_equal(fakehttp_header_value(req(fx, 1), "If-None-Match"), "\"v1\"");
	assert_get_headers(fx, req(fx, 1), "Bearer " TOKEN);
	assert_int_equal(fx->resp.status, 200);
	assert_int_equal(fx->resp.from_cache, 1);
	assert_string_equal(fx->resp.body.buf, "[{\"number\":1}]");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(fx->resp.json, 0),
		"number")), 1);
	assert_string_equal(fx->resp.etag, "\"v1\"");
	assert_int_equal(fx->resp.rate_remaining, 4000);
	pmbot_github_client_stats(&st, fx->c);
	assert_int_equal(st.requests, 2);
	assert_int_equal(st.not_modified, 1);
	pmbot_buf_free(&files);
}

static void test_github_http__cached_pagination_keeps_the_next_links(void **state)
{
	fixture *fx = *state;
	char h1[256];
	json_t *first = NULL, *second = NULL;
	pmbot_github_stats st;

	snprintf(h1, sizeof(h1), "ETag: \"p1\"\r\nLink: <%s/r?per_page=100&page=2>; rel=\"next\"\r\n",
		fx->api);
	push(fx, 200, h1, "[1]");
	push(fx, 200, "ETag: \"p2\"\r\n", "[2]");
	push(fx, 304, NULL, NULL);
	push(fx, 304, NULL, NULL);
	assert_int_equal(pmbot_github_rest_paginate(&first, client(fx), "/r", 0, ERR), 0);
	assert_int_equal(pmbot_github_rest_paginate(&second, fx->c, "/r", 0, ERR), 0);
	assert_true(json_equal(first, second));
	assert_int_equal(json_array_size(second), 2);
	assert_string_equal(req(fx, 3)->target, "/r?per_page=100&page=2");
	assert_string_equal(fakehttp_header_value(req(fx, 3), "If-None-Match"), "\"p2\"");
	pmbot_github_client_stats(&st, fx->c);
	assert_int_equal(st.not_modified, 2);
	json_decref(first);
	json_decref(second);
}

static void test_github_http__cache_entries_are_per_token_and_skippable(void **state)
{
	fixture *fx = *state;

	push(fx, 200, "ETag: \"v1\"\r\n", "{}");
	push(fx, 200, "ETag: \"v1\"\r\n", "{}");
	push(fx, 200, "ETag: \"v1\"\r\n", "{}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR), 0);
	assert_int_equal(pmbot_github_rest_flags(&fx->resp, fx->c, "GET", "/user", NULL,
		PMBOT_GITHUB_NO_CACHE, ERR), 0);
	assert_null(fakehttp_header_value(req(fx, 1), "If-None-Match"));
	fx->opts.token = "another-token";
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR), 0);
	assert_null(fakehttp_header_value(req(fx, 2), "If-None-Match"));
	assert_int_equal(cache_files(fx, NULL), 2);
}

static void test_github_http__a_damaged_cache_entry_is_ignored(void **state)
{
	fixture *fx = *state;
	pmbot_buf files = PMBOT_BUF_INIT;
	struct dirent *e;
	DIR *d;

	push(fx, 200, "ETag: \"v1\"\r\n", "{}");
	push(fx, 200, "ETag: \"v2\"\r\n", "{\"a\":1}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR), 0);
	d = opendir(fx->cache);
	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[512];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", fx->cache, e->d_name);
		assert_int_equal(pmbot_fs_write_atomic(path, "garbage", 7), 0);
	}
	closedir(d);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "/user", NULL, ERR), 0);
	assert_null(fakehttp_header_value(req(fx, 1), "If-None-Match"));
	assert_int_equal(fx->resp.from_cache, 0);
	/* Replaced by the fresh answer. */
	assert_int_equal(cache_files(fx, &files), 1);
	assert_non_null(strstr(files.buf, "v2"));
	assert_null(strstr(files.buf, "garbage"));
	pmbot_buf_free(&files);
}

static void test_github_http__an_answer_without_etag_forgets_the_cache_entry(void **state)
{
	fixture *fx = *state;

	push(fx, 200, "ETag: \"v1\"\r\n", "{\"a\":1}");
	push(fx, 200, NULL, "{\"a\":2}");
	push(fx, 200, NULL, "{\"a\":3}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR), 0);
	assert_int_equal(cache_files(fx, NULL), 1);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "/user", NULL, ERR), 0);
	assert_string_equal(fakehttp_header_value(req(fx, 1), "If-None-Match"), "\"v1\"");
	assert_string_equal(fx->resp.body.buf, "{\"a\":2}");
	assert_int_equal(cache_files(fx, NULL), 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "/user", NULL, ERR), 0);
	assert_null(fakehttp_header_value(req(fx, 2), "If-None-Match"));
}

/* ---- rate limits ---- */

static void test_github_http__retry_after_is_honoured_on_403(void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 7000 };
	pmbot_github_stats st;

	push(fx, 403, "Retry-After: 7\r\n",
		"{\"message\":\"You have exceeded a secondary rate limit.\"}");
	push(fx, 200, NULL, "{}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR), 0);
	assert_waits(fx, 1, expect);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_string_equal(req(fx, 1)->target, "/user");
	assert_int_equal(fx->n_kind[PMBOT_GITHUB_EV_RATE_LIMIT], 1);
	assert_int_equal(fx->last_wait_event, 7000);
	assert_contains(fx->events.buf, "rate limited; waiting 7 s (retry-after)");
	pmbot_github_client_stats(&st, fx->c);
	assert_int_equal(st.rate_limited, 1);
	assert_int_equal(st.waited_ms, 7000);
	assert_int_equal(st.retries, 0);
}

static void test_github_http__retry_after_may_be_an_http_date(void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 30000 };

	/* T0 is Tue, 14 Nov 2023 22:13:20 GMT. */
	push(fx, 429, "Retry-After: Tue, 14 Nov 2023 22:13:50 GMT\r\n", NULL);
	push(fx, 200, NULL, "{}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR), 0);
	assert_waits(fx, 1, expect);
}

static void test_github_http__rate_limit_waits_until_reset_when_remaining_is_zero(void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 125000 };

	push(fx, 403, "X-RateLimit-Remaining: 0\r\nX-RateLimit-Reset: 1700000125\r\n",
		"{\"message\":\"API rate limit exceeded for user ID 1.\"}");
	push(fx, 200, NULL, "{}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR), 0);
	assert_waits(fx, 1, expect);
	assert_contains(fx->events.buf, "waiting 125 s (until x-ratelimit-reset)");
}

static void test_github_http__429_without_headers_backs_off_from_a_minute_doubling(void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 60000, 120000 };

	push(fx, 429, NULL, NULL);
	push(fx, 429, NULL, NULL);
	push(fx, 200, NULL, "{}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR), 0);
	assert_waits(fx, 2, expect);
}

static void test_github_http__secondary_limit_message_without_headers_backs_off(void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 60000 };

	push(fx, 403, NULL, "{\"message\":\"You have exceeded a secondary rate limit. "
		"Please wait a few minutes before you try again.\"}");
	push(fx, 200, NULL, "{}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR), 0);
	assert_waits(fx, 1, expect);
}

static void test_github_http__a_plain_403_is_a_refusal_not_a_rate_limit(void **state)
{
	fixture *fx = *state;

	push(fx, 403, "X-RateLimit-Remaining: 4990\r\n",
		"{\"message\":\"Resource not accessible by integration\"}");
	push(fx, 200, NULL, "{}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR),
		PMBOT_GITHUB_EHTTP);
	assert_int_equal(fx->resp.status, 403);
	assert_int_equal(fx->n_waits, 0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_string_equal(json_string_value(json_object_get(fx->resp.json, "message")),
		"Resource not accessible by integration");
	assert_contains(fx->err.buf,
		"HTTP 403: Resource not accessible by integration");
}

static void test_github_http__rate_limit_gives_up_after_max_waits(void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 60000, 120000 };

	fx->opts.max_rate_waits = 2;
	push(fx, 429, NULL, NULL);
	push(fx, 429, NULL, NULL);
	push(fx, 429, NULL, NULL);
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR),
		PMBOT_GITHUB_ERATELIMIT);
	assert_waits(fx, 2, expect);
	assert_int_equal(fakehttp_count(fx->srv), 3);
	assert_contains(fx->err.buf, "still rate limited after 2 waits");
}

static void test_github_http__a_wait_longer_than_allowed_fails_without_sleeping(void **state)
{
	fixture *fx = *state;

	push(fx, 403, "Retry-After: 7200\r\n", NULL);
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR),
		PMBOT_GITHUB_ERATELIMIT);
	assert_int_equal(fx->n_waits, 0);
	assert_contains(fx->err.buf, "wait 7200 s (retry-after)");
}

static void test_github_http__a_rate_limited_post_is_repeated_since_github_refused_it(
	void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 1000 };
	json_t *body = json_pack("{s:s}", "title", "T");

	push(fx, 403, "Retry-After: 1\r\n", NULL);
	push(fx, 201, NULL, "{\"number\":3}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "POST", "/repos/a/b/issues",
		body, ERR), 0);
	assert_int_equal(fx->resp.status, 201);
	assert_waits(fx, 1, expect);
	assert_string_equal(req(fx, 0)->body, req(fx, 1)->body);
	json_decref(body);
}

/* ---- retries and outcomes ---- */

static void test_github_http__5xx_is_retried_for_get_with_doubling_backoff(void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 1000, 2000 };
	pmbot_github_stats st;

	push(fx, 502, NULL, "<html>bad gateway</html>");
	push(fx, 503, NULL, NULL);
	push(fx, 200, NULL, "{\"ok\":true}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR), 0);
	assert_waits(fx, 2, expect);
	assert_int_equal(fx->n_kind[PMBOT_GITHUB_EV_RETRY], 2);
	pmbot_github_client_stats(&st, fx->c);
	assert_int_equal(st.retries, 2);
	assert_int_equal(st.requests, 3);
	assert_int_equal(st.waited_ms, 3000);
}

static void test_github_http__get_gives_up_after_max_retries(void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 1000, 2000, 4000 };
	int i;

	for (i = 0; i < 5; i++)
		push(fx, 500, NULL, "{\"message\":\"Server Error\"}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR),
		PMBOT_GITHUB_EHTTP);
	assert_int_equal(fx->resp.status, 500);
	assert_waits(fx, 3, expect);
	assert_int_equal(fakehttp_count(fx->srv), 4);
	assert_int_equal(fakehttp_pending(fx->srv), 1);
}

static void test_github_http__5xx_on_post_is_not_retried_and_outcome_is_unknown(void **state)
{
	fixture *fx = *state;
	json_t *body = json_pack("{s:s}", "title", "T");

	push(fx, 502, NULL, NULL);
	push(fx, 201, NULL, "{\"number\":3}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "POST", "/repos/a/b/issues",
		body, ERR), PMBOT_GITHUB_EUNKNOWN_OUTCOME);
	assert_int_equal(fx->resp.status, 502);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_int_equal(fakehttp_pending(fx->srv), 1);
	assert_int_equal(fx->n_waits, 0);
	assert_contains(fx->err.buf, "whether the request took effect is unknown");
	json_decref(body);
}

static void test_github_http__an_idempotent_write_is_retried(void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 1000 };
	json_t *body = json_pack("{s:s}", "title", "T");

	push(fx, 502, NULL, NULL);
	push(fx, 200, NULL, "{\"number\":3}");
	assert_int_equal(pmbot_github_rest_flags(&fx->resp, client(fx), "PATCH",
		"/repos/a/b/issues/3", body, PMBOT_GITHUB_IDEMPOTENT, ERR), 0);
	assert_waits(fx, 1, expect);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	json_decref(body);
}

static void test_github_http__timeout_of_a_get_is_retried_then_succeeds(void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 1000 };
	fakehttp_response slow = { 200, NULL, "{\"late\":true}", 0, 3000, -1, 0 };

	fx->opts.timeout_ms = 250;
	assert_int_equal(fakehttp_push(fx->srv, &slow), 0);
	push(fx, 200, NULL, "{\"late\":false}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR), 0);
	assert_true(json_is_false(json_object_get(fx->resp.json, "late")));
	assert_waits(fx, 1, expect);
	assert_contains(fx->events.buf, "imed out");
}

static void test_github_http__timeout_of_a_post_is_an_unknown_outcome(void **state)
{
	fixture *fx = *state;
	fakehttp_response slow = { 201, NULL, "{}", 0, 3000, -1, 0 };

	fx->opts.timeout_ms = 250;
	assert_int_equal(fakehttp_push(fx->srv, &slow), 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "POST", "/repos/a/b/issues",
		NULL, ERR), PMBOT_GITHUB_EUNKNOWN_OUTCOME);
	assert_int_equal(fx->n_waits, 0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_contains(fx->err.buf, "imed out");
}

static void test_github_http__a_cut_off_body_is_retried_for_get_but_not_for_post(void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 1000 };
	fakehttp_response cut = { 200, NULL, "[{\"number\":1},{\"number\":2}]", 0, 0, 5, 0 };
	json_t *body = json_pack("{s:s}", "title", "T");

	assert_int_equal(fakehttp_push(fx->srv, &cut), 0);
	push(fx, 200, NULL, "[]");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user/issues", NULL, ERR), 0);
	assert_string_equal(fx->resp.body.buf, "[]");
	assert_waits(fx, 1, expect);

	assert_int_equal(fakehttp_push(fx->srv, &cut), 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "POST", "/repos/a/b/issues", body, ERR),
		PMBOT_GITHUB_EUNKNOWN_OUTCOME);
	assert_int_equal(fakehttp_count(fx->srv), 3);
	assert_int_equal(fx->n_waits, 1);
	json_decref(body);
}

static int closed_port_url(char *out, size_t size)
{
	snprintf(out, size, "http://127.0.0.1:%u", fakehttp_closed_port());
	return 0;
}

static void test_github_http__connection_refused_is_a_transport_error_even_for_post(
	void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 1000 };
	char url[64];

	assert_int_equal(closed_port_url(url, sizeof(url)), 0);
	fx->opts.api_url = url;
	fx->opts.max_retries = 1;
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR),
		PMBOT_GITHUB_ETRANSPORT);
	assert_int_equal(fx->resp.status, 0);
	assert_waits(fx, 1, expect);
	/* Nothing was sent, so the outcome is known: nothing happened. */
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "POST", "/repos/a/b/issues", NULL, ERR),
		PMBOT_GITHUB_ETRANSPORT);
	assert_int_equal(fx->n_waits, 1);
}

static void test_github_http__an_answer_over_the_cap_fails(void **state)
{
	fixture *fx = *state;
	char big[4097];
	fakehttp_response chunky = { 200, NULL, big, 0, 0, -1, 0 };

	memset(big, 'x', sizeof(big) - 1);
	big[0] = '"';
	big[sizeof(big) - 2] = '"';
	big[sizeof(big) - 1] = '\0';
	fx->opts.max_response = 1024;
	assert_int_equal(fakehttp_push(fx->srv, &chunky), 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/big", NULL, ERR),
		PMBOT_GITHUB_ETOOBIG);
	assert_contains(fx->err.buf, "larger than 1024 bytes");
	assert_int_equal(fx->n_waits, 0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	/* A write whose answer cannot be read may still have landed. */
	assert_int_equal(fakehttp_push(fx->srv, &chunky), 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "POST", "/big", NULL, ERR),
		PMBOT_GITHUB_EUNKNOWN_OUTCOME);
	/* Exactly at the cap is fine. */
	big[1023] = '"';
	big[1024] = '\0';
	assert_int_equal(fakehttp_push(fx->srv, &chunky), 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "/big", NULL, ERR), 0);
	assert_int_equal(fx->resp.body.len, 1024);
}

static void test_github_http__a_2xx_that_is_not_json_is_an_error(void **state)
{
	fixture *fx = *state;

	push(fx, 200, NULL, "<html>captive portal</html>");
	push(fx, 201, NULL, "<html>captive portal</html>");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "GET", "/user", NULL, ERR),
		PMBOT_ERROR);
	assert_contains(fx->err.buf, "not JSON");
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "POST", "/repos/a/b/issues", NULL, ERR),
		PMBOT_GITHUB_EUNKNOWN_OUTCOME);
}

static void test_github_http__http_errors_quote_githubs_message_escaped(void **state)
{
	fixture *fx = *state;
	char expect[256];

	push(fx, 422, NULL, "{\"message\":\"Validation Failed\",\"errors\":[{\"resource\":"
		"\"Issue\",\"field\":\"title\",\"code\":\"missing_field\"}]}");
	push(fx, 404, NULL, "{\"message\":\"Not\\nFound\"}");
	assert_int_equal(pmbot_github_rest(&fx->resp, client(fx), "POST", "/repos/a/b/issues",
		NULL, ERR), PMBOT_GITHUB_EHTTP);
	snprintf(expect, sizeof(expect), "POST %s/repos/a/b/issues: HTTP 422: Validation Failed "
		"(Issue.title: missing_field)", fx->api);
	assert_string_equal(fx->err.buf, expect);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "/repos/a/b", NULL, ERR),
		PMBOT_GITHUB_EHTTP);
	assert_int_equal(fx->resp.status, 404);
	snprintf(expect, sizeof(expect), "GET %s/repos/a/b: HTTP 404: Not\\x0aFound", fx->api);
	assert_string_equal(fx->err.buf, expect);
}

/* ---- pacing ---- */

static void test_github_http__writes_are_paced_and_reads_are_not(void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 1000, 600 };

	fx->opts.pace_ms = 1000;
	push(fx, 201, NULL, "{}");
	push(fx, 200, NULL, "{}");
	push(fx, 200, NULL, "{}");
	push(fx, 204, NULL, NULL);
	client(fx);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "POST", "/repos/a/b/issues", NULL, ERR), 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "/repos/a/b/issues/1", NULL, ERR),
		0);
	assert_int_equal(fx->n_waits, 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "PATCH", "/repos/a/b/issues/1", NULL, ERR),
		0);
	fx->now_ms += 400;
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "DELETE", "/repos/a/b/issues/1/labels",
		NULL, ERR), 0);
	assert_waits(fx, 2, expect);
	assert_int_equal(fx->n_kind[PMBOT_GITHUB_EV_PACE], 2);
}

/* ---- GraphQL ---- */

static void test_github_http__graphql_posts_query_and_variables_and_returns_data(void **state)
{
	fixture *fx = *state;
	const fakehttp_request *r;
	json_t *vars = json_pack("{s:s, s:i}", "owner", "acme", "first", 100), *data = NULL;
	char len[16];

	push(fx, 200, NULL, "{\"data\":{\"viewer\":{\"login\":\"octo\"}}}");
	assert_int_equal(pmbot_github_graphql(&data, client(fx),
		"query($owner: String!) { viewer { login } }", vars, ERR), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(data, "viewer"),
		"login")), "octo");
	r = req(fx, 0);
	assert_string_equal(r->method, "POST");
	assert_string_equal(r->target, "/graphql");
	assert_string_equal(r->body, "{\"query\":\"query($owner: String!) { viewer { login } }\","
		"\"variables\":{\"first\":100,\"owner\":\"acme\"}}");
	snprintf(len, sizeof(len), "%zu", r->body_len);
	assert_string_equal(fakehttp_header_value(r, "Content-Length"), len);
	assert_string_equal(fakehttp_header_value(r, "Content-Type"), "application/json");
	assert_string_equal(fakehttp_header_value(r, "Authorization"), "Bearer " TOKEN);
	assert_string_equal(fakehttp_header_value(r, "X-GitHub-Api-Version"), "2022-11-28");
	json_decref(vars);
	json_decref(data);
}

static void test_github_http__graphql_errors_in_200_are_surfaced_with_their_type(void **state)
{
	fixture *fx = *state;
	json_t *data = (json_t *)1;

	push(fx, 200, NULL, "{\"data\":{\"repository\":null},\"errors\":[{\"type\":\"NOT_FOUND\","
		"\"path\":[\"repository\"],\"message\":\"Could not resolve to a Repository with the "
		"name 'a/b'.\"}]}");
	push(fx, 200, NULL, "{\"data\":{\"repository\":null},\"errors\":[{\"type\":\"NOT_FOUND\","
		"\"path\":[\"repository\"],\"message\":\"x\"}]}");
	assert_int_equal(pmbot_github_graphql_ex(&fx->resp, client(fx),
		"query { repository(owner: \"a\", name: \"b\") { id } }", NULL, 0, ERR),
		PMBOT_GITHUB_EGRAPHQL);
	assert_string_equal(fx->resp.error_type, "NOT_FOUND");
	assert_true(json_is_null(json_object_get(json_object_get(fx->resp.json, "data"),
		"repository")));
	assert_contains(fx->err.buf,
		"GraphQL error NOT_FOUND: Could not resolve to a Repository with the name 'a/b'. "
		"at repository");
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_int_equal(fx->n_waits, 0);
	/* Without variables the key is left out. */
	assert_string_equal(req(fx, 0)->body,
		"{\"query\":\"query { repository(owner: \\\"a\\\", name: \\\"b\\\") { id } }\"}");
	assert_int_equal(pmbot_github_graphql(&data, fx->c, "{ repository { id } }", NULL, ERR),
		PMBOT_GITHUB_EGRAPHQL);
	assert_null(data);
}

static void test_github_http__graphql_rate_limited_in_200_is_waited_out(void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 30000, 60000 };
	json_t *data = NULL;

	push(fx, 200, "X-RateLimit-Remaining: 0\r\nX-RateLimit-Reset: 1700000030\r\n",
		"{\"errors\":[{\"type\":\"RATE_LIMITED\",\"message\":\"API rate limit exceeded\"}]}");
	push(fx, 200, NULL,
		"{\"errors\":[{\"type\":\"RATE_LIMITED\",\"message\":\"whatever the text\"}]}");
	push(fx, 200, NULL, "{\"data\":{\"viewer\":{\"login\":\"octo\"}}}");
	assert_int_equal(pmbot_github_graphql(&data, client(fx), "{ viewer { login } }", NULL, ERR), 0);
	assert_waits(fx, 2, expect);
	assert_non_null(json_object_get(data, "viewer"));
	assert_int_equal(fakehttp_count(fx->srv), 3);
	json_decref(data);
}

static void test_github_http__graphql_decides_by_type_not_by_message(void **state)
{
	fixture *fx = *state;

	push(fx, 200, NULL, "{\"errors\":[{\"type\":\"FORBIDDEN\","
		"\"message\":\"API rate limit exceeded (not really)\"}]}");
	assert_int_equal(pmbot_github_graphql_ex(&fx->resp, client(fx), "{ viewer { login } }",
		NULL, 0, ERR), PMBOT_GITHUB_EGRAPHQL);
	assert_string_equal(fx->resp.error_type, "FORBIDDEN");
	assert_int_equal(fx->n_waits, 0);
}

static void test_github_http__graphql_mutations_are_paced_and_never_blindly_retried(
	void **state)
{
	fixture *fx = *state;
	static const long long expect[] = { 1000 };
	static const char mutation[] = "# add it\n  mutation Add($p: ID!, $c: ID!) {"
		" addProjectV2ItemById(input: {projectId: $p, contentId: $c}) { item { id } } }";
	static const char query[] = "query { viewer { login } }";

	fx->opts.pace_ms = 1000;
	push(fx, 200, NULL, "{\"data\":{}}");
	push(fx, 502, NULL, NULL);
	push(fx, 200, NULL, "{\"data\":{}}");
	push(fx, 502, NULL, NULL);
	push(fx, 200, NULL, "{\"data\":{}}");
	assert_int_equal(pmbot_github_graphql_ex(&fx->resp, client(fx), mutation, NULL, 0, ERR), 0);
	/* A query is a read: not paced, retried. */
	assert_int_equal(pmbot_github_graphql_ex(&fx->resp, fx->c, query, NULL, 0, ERR), 0);
	assert_int_equal(fx->n_kind[PMBOT_GITHUB_EV_PACE], 0);
	assert_int_equal(fx->n_kind[PMBOT_GITHUB_EV_RETRY], 1);
	/* Take back the retry's second, so the next mutation has a pace to keep. */
	fx->now_ms -= 1000;
	assert_int_equal(pmbot_github_graphql_ex(&fx->resp, fx->c, mutation, NULL, 0, ERR),
		PMBOT_GITHUB_EUNKNOWN_OUTCOME);
	assert_int_equal(fx->n_waits, 2);
	assert_int_equal(fx->waits[1], expect[0]);
	assert_int_equal(fakehttp_count(fx->srv), 4);
	assert_int_equal(fakehttp_pending(fx->srv), 1);
}

/* ---- secrets ---- */

static void test_github_http__token_never_appears_in_errors_events_or_cache(void **state)
{
	fixture *fx = *state;
	pmbot_buf seen = PMBOT_BUF_INIT;
	json_t *data = NULL, *all = NULL;
	char link[256];
	int rc;

	fx->opts.max_retries = 1;
	snprintf(link, sizeof(link), "ETag: \"e\"\r\nLink: <%s/r?page=2>; rel=\"next\"\r\n",
		fx->api);
	/* GitHub echoing the token back must not get it printed. */
	push(fx, 401, NULL, "{\"message\":\"Bad credentials: " TOKEN "\"}");
	push(fx, 502, NULL, NULL);
	push(fx, 502, NULL, NULL);
	push(fx, 429, "Retry-After: 1\r\n", NULL);
	push(fx, 200, NULL, "{\"errors\":[{\"type\":\"X\",\"message\":\"" TOKEN "\"}]}");
	push(fx, 200, link, "[1]");
	push(fx, 200, "ETag: \"f\"\r\n", "[2]");
	push(fx, 304, NULL, NULL);

	client(fx);
	rc = pmbot_github_rest(&fx->resp, fx->c, "GET", "/user", NULL, ERR);
	assert_int_equal(rc, PMBOT_GITHUB_EHTTP);
	pmbot_buf_printf(&seen, "%s\n", fx->err.buf);
	assert_contains(fx->err.buf, "Bad credentials: [REDACTED]");
	assert_contains(fx->err.buf, "GitHub refused the token");
	rc = pmbot_github_rest(&fx->resp, fx->c, "GET", "/user", NULL, ERR);
	assert_int_equal(rc, PMBOT_GITHUB_EHTTP);
	pmbot_buf_printf(&seen, "%s\n", fx->err.buf);
	rc = pmbot_github_graphql(&data, fx->c, "{ viewer { login } }", NULL, ERR);
	assert_int_equal(rc, PMBOT_GITHUB_EGRAPHQL);
	pmbot_buf_printf(&seen, "%s\n", fx->err.buf);
	rc = pmbot_github_rest_paginate(&all, fx->c, "/r", 0, ERR);
	assert_int_equal(rc, 0);
	json_decref(all);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "/r?per_page=100", NULL, ERR), 0);
	assert_int_equal(fx->resp.from_cache, 1);
	assert_int_equal(fakehttp_pending(fx->srv), 0);

	assert_true(fx->events.len > 0);
	assert_true(fx->n_kind[PMBOT_GITHUB_EV_RETRY] > 0);
	assert_true(fx->n_kind[PMBOT_GITHUB_EV_RATE_LIMIT] > 0);
	pmbot_buf_puts(&seen, fx->events.buf);
	assert_int_equal(cache_files(fx, &seen), 2);
	assert_null(strstr(seen.buf, TOKEN));
	assert_non_null(strstr(seen.buf, "[REDACTED]"));
	pmbot_buf_free(&seen);
}

/* TOKEN is "ghp_S3cr3tT0kenForTests0123456789abcd". */
static void test_github_http__parts_of_the_token_are_scrubbed_from_errors_and_events(void **state)
{
	fixture *fx = *state;
	pmbot_buf seen = PMBOT_BUF_INIT;
	int rc;

	fx->opts.max_retries = 1;
	push(fx, 401, NULL, "{\"message\":\"Bad credentials: ghp_S3cr3tT0kenForTe...\"}");
	push(fx, 403, NULL, "{\"message\":\"token T0kenForTests012 is revoked\"}");
	push(fx, 404, NULL, "{\"message\":\"ghp_ tokens: 7 chars like S3cr3tT stay\"}");
	client(fx);
	rc = pmbot_github_rest(&fx->resp, fx->c, "GET", "/user", NULL, ERR);
	assert_int_equal(rc, PMBOT_GITHUB_EHTTP);
	assert_contains(fx->err.buf, "Bad credentials: [REDACTED]...");
	pmbot_buf_printf(&seen, "%s\n", fx->err.buf);
	rc = pmbot_github_rest(&fx->resp, fx->c, "GET", "/user", NULL, ERR);
	assert_int_equal(rc, PMBOT_GITHUB_EHTTP);
	assert_contains(fx->err.buf, "token [REDACTED] is revoked");
	pmbot_buf_printf(&seen, "%s\n", fx->err.buf);
	rc = pmbot_github_rest(&fx->resp, fx->c, "GET", "/user", NULL, ERR);
	assert_true(rc < 0);
	assert_contains(fx->err.buf, "ghp_ tokens: 7 chars like S3cr3tT stay");
	pmbot_buf_puts(&seen, fx->events.buf);
	assert_null(strstr(seen.buf, "T0kenFor"));
	assert_null(strstr(seen.buf, "S3cr3tT0"));
	pmbot_buf_free(&seen);
}

/* --pace-ms and $PMBOT_GITHUB_PACE_MS: whole milliseconds, 0 or more. */
static void test_github_pace__parses_milliseconds_and_refuses_anything_else(void **state)
{
	static const char *const bad[] = { "", "abc", "-1", "5ms", "1.5", "250 ",
		"99999999999999999999" };
	long pace = 42;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_github_pace_parse(&pace, "250"), 0);
	assert_int_equal(pace, 250);
	assert_int_equal(pmbot_github_pace_parse(&pace, "0"), 0);
	assert_int_equal(pace, 0);
	assert_int_equal(pmbot_github_pace_parse(&pace, " +7"), 0);
	assert_int_equal(pace, 7);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pace = 42;
		assert_int_equal(pmbot_github_pace_parse(&pace, bad[i]), PMBOT_EINVALID);
		assert_int_equal(pace, 42);
	}
	assert_int_equal(pmbot_github_pace_parse(&pace, NULL), PMBOT_EINVALID);
	assert_int_equal(pace, 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		cmocka_unit_test(test_github_pace__parses_milliseconds_and_refuses_anything_else),
		T(test_github_http__get_sends_exact_request_line_and_headers),
		T(test_github_http__anonymous_client_sends_no_authorization),
		T(test_github_http__a_401_names_the_token_variables),
		T(test_github_http__client_reads_urls_and_token_from_the_environment),
		T(test_github_http__rejects_a_token_that_would_inject_headers_without_echoing_it),
		T(test_github_http__rejects_base_urls_that_are_not_plain_http),
		T(test_github_http__user_agent_can_be_set_but_not_used_to_inject),
		T(test_github_http__post_then_get_leaks_no_body_method_or_content_type),
		T(test_github_http__no_method_or_body_carries_over_between_writes),
		T(test_github_http__bodiless_put_sends_length_zero_and_delete_sends_nothing),
		T(test_github_http__a_get_follows_a_redirect_of_a_renamed_repository),
		T(test_github_http__a_redirect_to_another_port_is_refused_and_the_other_server_gets_nothing),
		T(test_github_http__a_redirect_to_another_host_or_scheme_is_refused),
		T(test_github_http__a_same_origin_redirect_keeps_the_token_and_is_bounded),
		T(test_github_http__a_write_is_never_redirected),
		T(test_github_http__same_origin_compares_scheme_host_and_port),
		T(test_github_http__refuses_bad_methods_paths_and_a_get_with_a_body),
		T(test_github_http__path_escape_encodes_everything_but_unreserved),
		T(test_github_http__link_next_parses_rfc8288_forms),
		T(test_github_http__paginate_follows_link_next_over_three_pages),
		T(test_github_http__paginate_keeps_an_explicit_per_page),
		T(test_github_http__paginate_refuses_a_next_link_to_another_origin),
		T(test_github_http__paginate_refuses_a_page_that_is_not_an_array),
		T(test_github_http__conditional_get_serves_the_cached_body_on_304),
		T(test_github_http__cached_pagination_keeps_the_next_links),
		T(test_github_http__cache_entries_are_per_token_and_skippable),
		T(test_github_http__a_damaged_cache_entry_is_ignored),
		T(test_github_http__an_answer_without_etag_forgets_the_cache_entry),
		T(test_github_http__retry_after_is_honoured_on_403),
		T(test_github_http__retry_after_may_be_an_http_date),
		T(test_github_http__rate_limit_waits_until_reset_when_remaining_is_zero),
		T(test_github_http__429_without_headers_backs_off_from_a_minute_doubling),
		T(test_github_http__secondary_limit_message_without_headers_backs_off),
		T(test_github_http__a_plain_403_is_a_refusal_not_a_rate_limit),
		T(test_github_http__rate_limit_gives_up_after_max_waits),
		T(test_github_http__a_wait_longer_than_allowed_fails_without_sleeping),
		T(test_github_http__a_rate_limited_post_is_repeated_since_github_refused_it),
		T(test_github_http__5xx_is_retried_for_get_with_doubling_backoff),
		T(test_github_http__get_gives_up_after_max_retries),
		T(test_github_http__5xx_on_post_is_not_retried_and_outcome_is_unknown),
		T(test_github_http__an_idempotent_write_is_retried),
		T(test_github_http__timeout_of_a_get_is_retried_then_succeeds),
		T(test_github_http__timeout_of_a_post_is_an_unknown_outcome),
		T(test_github_http__a_cut_off_body_is_retried_for_get_but_not_for_post),
		T(test_github_http__connection_refused_is_a_transport_error_even_for_post),
		T(test_github_http__an_answer_over_the_cap_fails),
		T(test_github_http__a_2xx_that_is_not_json_is_an_error),
		T(test_github_http__http_errors_quote_githubs_message_escaped),
		T(test_github_http__writes_are_paced_and_reads_are_not),
		T(test_github_http__graphql_posts_query_and_variables_and_returns_data),
		T(test_github_http__graphql_errors_in_200_are_surfaced_with_their_type),
		T(test_github_http__graphql_rate_limited_in_200_is_waited_out),
		T(test_github_http__graphql_decides_by_type_not_by_message),
		T(test_github_http__graphql_mutations_are_paced_and_never_blindly_retried),
		T(test_github_http__token_never_appears_in_errors_events_or_cache),
		T(test_github_http__parts_of_the_token_are_scrubbed_from_errors_and_events),
#undef T
	};
	int rc;

	if (pmbot_net_global_init(NULL) < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	pmbot_net_global_cleanup();
	return rc;
}
