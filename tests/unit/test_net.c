#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers/fakehttp.h"
#include "pmbot/buf.h"
#include "pmbot/net.h"
#include "pmbot/banned.h"

/*
 * The transport under the GitHub and model clients (src/net/net.c),
 * against the scripted loopback server that records every request.
 */

typedef struct {
	fakehttp *srv;
	pmbot_net *net;
	pmbot_buf body;
	pmbot_net_response resp;
	char url[200];
	/* What the header hook saw: every line, one per row. */
	pmbot_buf lines;
	int fail_header;
	/* The redirect hook's script and record. */
	int follow;
	int asked;
	char location[200];
} fixture;

static int setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));

	if (!fx || fakehttp_start(&fx->srv) < 0 || pmbot_net_new(&fx->net, NULL) < 0)
		return -1;
	pmbot_buf_init(&fx->body, 1024);
	pmbot_buf_init(&fx->lines, 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	pmbot_net_free(fx->net);
	fakehttp_stop(fx->srv);
	pmbot_buf_free(&fx->body);
	pmbot_buf_free(&fx->lines);
	free(fx);
	return 0;
}

static const char *at(fixture *fx, const char *path)
{
	snprintf(fx->url, sizeof(fx->url), "%s%s", fakehttp_url(fx->srv), path);
	return fx->url;
}

static void request_init(pmbot_net_request *rq, const char *method, const char *url)
{
	memset(rq, 0, sizeof(*rq));
	rq->method = method;
	rq->url = url;
	rq->user_agent = "pm-bot-test/1";
	rq->connect_timeout_ms = 2000;
	rq->timeout_ms = 10000;
}

static int record_header(void *payload, const char *line, size_t len)
{
	fixture *fx = payload;

	if (fx->fail_header)
		return -1;
	/* libcurl's lines end in CRLF; keep one row each. */
	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	if (pmbot_buf_put(&fx->lines, line, len) < 0 || pmbot_buf_putc(&fx->lines, '\n') < 0)
		return -1;
	return 0;
}

static int decide_redirect(void *payload, long status, const char *location, char *why,
	size_t why_size)
{
	fixture *fx = payload;

	fx->asked++;
	snprintf(fx->location, sizeof(fx->location), "%s", location);
	if (!fx->follow)
		snprintf(why, why_size, "HTTP %ld: not followed in this test", status);
	return fx->follow;
}

static CURLcode run(fixture *fx, const pmbot_net_request *rq)
{
	return pmbot_net_perform(&fx->resp, &fx->body, fx->net, rq);
}

static void test_net__sends_the_method_headers_and_body_it_is_given(void **state)
{
	fixture *fx = *state;
	const char *headers[] = { "Accept: application/json", "X-Test: one two", "Expect:", NULL };
	const fakehttp_request *got;
	pmbot_net_request rq;

	assert_int_equal(fakehttp_push_simple(fx->srv, 201, NULL, "{\"ok\":true}"), 0);
	request_init(&rq, "PATCH", at(fx, "/things/1?x=y"));
	rq.headers = headers;
	rq.body = "{\"a\":1}";
	rq.body_len = 7;
	assert_int_equal(run(fx, &rq), CURLE_OK);
	assert_int_equal(fx->resp.status, 201);
	assert_int_equal(fx->resp.too_big, 0);
	assert_string_equal(fx->body.buf, "{\"ok\":true}");
	got = fakehttp_get(fx->srv, 0);
	assert_non_null(got);
	assert_string_equal(got->method, "PATCH");
	assert_string_equal(got->target, "/things/1?x=y");
	assert_string_equal(got->body, "{\"a\":1}");
	assert_string_equal(fakehttp_header_value(got, "Accept"), "application/json");
	assert_string_equal(fakehttp_header_value(got, "X-Test"), "one two");
	assert_string_equal(fakehttp_header_value(got, "User-Agent"), "pm-bot-test/1");
	assert_null(fakehttp_header_value(got, "Expect"));
}

/* libcurl options stick on a reused handle; the transport resets them. */
static void test_net__a_get_after_a_patch_carries_nothing_of_it_on_the_same_connection(void **state)
{
	fixture *fx = *state;
	const char *patch_headers[] = { "Content-Type: application/json", "X-Only-Post: 1", NULL };
	const fakehttp_request *post, *get;
	pmbot_net_request rq;

	assert_int_equal(fakehttp_push_simple(fx->srv, 200, NULL, "posted"), 0);
	assert_int_equal(fakehttp_push_simple(fx->srv, 200, NULL, "got"), 0);
	request_init(&rq, "PATCH", at(fx, "/a"));
	rq.headers = patch_headers;
	rq.body = "payload";
	rq.body_len = 7;
	rq.accept_gzip = pmbot_net_has_gzip();
	assert_int_equal(run(fx, &rq), CURLE_OK);
	request_init(&rq, "GET", at(fx, "/b"));
	assert_int_equal(run(fx, &rq), CURLE_OK);
	assert_string_equal(fx->body.buf, "got");
	post = fakehttp_get(fx->srv, 0);
	get = fakehttp_get(fx->srv, 1);
	assert_non_null(get);
	assert_string_equal(post->method, "PATCH");
	assert_string_equal(post->body, "payload");
	/* A custom method set once would stay without the reset. */
	assert_string_equal(get->method, "GET");
	assert_null(fakehttp_header_value(get, "Accept-Encoding"));
	assert_int_equal(get->body_len, 0);
	assert_null(fakehttp_header_value(get, "X-Only-Post"));
	assert_null(fakehttp_header_value(get, "Content-Type"));
	assert_null(fakehttp_header_value(get, "Content-Length"));
	/* Keep-alive survives the reset. */
	assert_int_equal(get->connection, post->connection);
}

static void test_net__a_body_at_the_cap_is_whole_and_one_byte_more_is_too_big(void **state)
{
	fixture *fx = *state;
	char big[1026];
	fakehttp_response r;
	pmbot_net_request rq;
	CURLcode cc;

	memset(big, 'x', sizeof(big));
	/* Bytes, not a string: the buffer NUL-terminates what libcurl hands over. */
	big[3] = '\0';
	memset(&r, 0, sizeof(r));
	r.status = 200;
	r.body = big;
	r.body_len = 1024;
	r.cut_after = -1;
	assert_int_equal(fakehttp_push(fx->srv, &r), 0);
	r.body_len = 1025;
	assert_int_equal(fakehttp_push(fx->srv, &r), 0);
	request_init(&rq, "GET", at(fx, "/cap"));
	assert_int_equal(run(fx, &rq), CURLE_OK);
	assert_int_equal(fx->resp.too_big, 0);
	assert_int_equal(fx->body.len, 1024);
	assert_memory_equal(fx->body.buf, big, 1024);
	assert_int_equal(fx->body.buf[1024], '\0');

	cc = run(fx, &rq);
	assert_int_not_equal(cc, CURLE_OK);
	assert_int_equal(fx->resp.too_big, 1);
	assert_true(fx->body.len <= 1024);
	assert_false(pmbot_net_retryable(cc));
}

static void test_net__the_header_hook_sees_the_status_line_and_every_header(void **state)
{
	fixture *fx = *state;
	pmbot_net_request rq;

	assert_int_equal(fakehttp_push_simple(fx->srv, 429, "Retry-After: 7\r\nX-Thing:  a b \r\n",
				 "slow down"), 0);
	request_init(&rq, "GET", at(fx, "/h"));
	rq.on_header = record_header;
	rq.header_payload = fx;
	assert_int_equal(run(fx, &rq), CURLE_OK);
	assert_int_equal(fx->resp.status, 429);
	assert_string_equal(fx->body.buf, "slow down");
	assert_true(!strncmp(fx->lines.buf, "HTTP/1.1 429", 12));
	assert_non_null(strstr(fx->lines.buf, "\nRetry-After: 7\n"));
	/* Raw: the value as sent, blanks and all. */
	assert_non_null(strstr(fx->lines.buf, "\nX-Thing:  a b \n"));
}

static void test_net__a_failing_header_hook_ends_the_exchange_as_out_of_memory(void **state)
{
	fixture *fx = *state;
	pmbot_net_request rq;

	assert_int_equal(fakehttp_push_simple(fx->srv, 200, NULL, "ignored"), 0);
	request_init(&rq, "GET", at(fx, "/h"));
	rq.on_header = record_header;
	rq.header_payload = fx;
	fx->fail_header = 1;
	assert_int_equal(run(fx, &rq), CURLE_OUT_OF_MEMORY);
}

static void test_net__a_redirect_is_the_answer_without_a_hook(void **state)
{
	fixture *fx = *state;
	char loc[256];
	pmbot_net_request rq;

	snprintf(loc, sizeof(loc), "Location: %s/elsewhere\r\n", fakehttp_url(fx->srv));
	assert_int_equal(fakehttp_push_simple(fx->srv, 301, loc, "moved"), 0);
	request_init(&rq, "GET", at(fx, "/old"));
	assert_int_equal(run(fx, &rq), CURLE_OK);
	assert_int_equal(fx->resp.status, 301);
	assert_string_equal(fx->body.buf, "moved");
	assert_int_equal(fakehttp_count(fx->srv), 1);
}

static void test_net__the_hook_decides_each_redirect(void **state)
{
	fixture *fx = *state;
	char loc[256], expect[256];
	pmbot_net_request rq;
	CURLcode cc;

	snprintf(loc, sizeof(loc), "Location: /new\r\n");
	snprintf(expect, sizeof(expect), "%s/new", fakehttp_url(fx->srv));
	request_init(&rq, "GET", at(fx, "/old"));
	rq.on_redirect = decide_redirect;
	rq.redirect_payload = fx;
	rq.max_redirects = 2;

	/* Followed: the final answer only, the 3xx's body gone. */
	assert_int_equal(fakehttp_push_simple(fx->srv, 301, loc, "moved"), 0);
	assert_int_equal(fakehttp_push_simple(fx->srv, 200, NULL, "here"), 0);
	fx->follow = 1;
	assert_int_equal(run(fx, &rq), CURLE_OK);
	assert_int_equal(fx->resp.status, 200);
	assert_string_equal(fx->body.buf, "here");
	assert_int_equal(fx->asked, 1);
	assert_string_equal(fx->location, expect);
	assert_string_equal(fakehttp_get(fx->srv, 1)->target, "/new");

	/* Refused: the hook's words are the error, nothing more is sent. */
	assert_int_equal(fakehttp_push_simple(fx->srv, 302, loc, "moved"), 0);
	fx->follow = 0;
	cc = run(fx, &rq);
	assert_int_equal(cc, CURLE_WEIRD_SERVER_REPLY);
	assert_string_equal(pmbot_net_error(fx->net, cc), "HTTP 302: not followed in this test");
	assert_int_equal(fakehttp_count(fx->srv), 3);

	/* Too many: max_redirects are followed, the next one is refused. */
	assert_int_equal(fakehttp_push_simple(fx->srv, 307, loc, NULL), 0);
	assert_int_equal(fakehttp_push_simple(fx->srv, 307, loc, NULL), 0);
	assert_int_equal(fakehttp_push_simple(fx->srv, 307, loc, NULL), 0);
	fx->follow = 1;
	cc = run(fx, &rq);
	assert_int_equal(cc, CURLE_TOO_MANY_REDIRECTS);
	assert_string_equal(pmbot_net_error(fx->net, cc), "more than 2 redirects");
	assert_int_equal(fakehttp_count(fx->srv), 6);
}

static void test_net__transport_failures_say_whether_to_retry_and_whether_anything_left(void **state)
{
	fixture *fx = *state;
	fakehttp_response r;
	pmbot_net_request rq;
	char url[64];
	CURLcode cc;

	snprintf(url, sizeof(url), "http://127.0.0.1:%u/x", fakehttp_closed_port());
	request_init(&rq, "POST", url);
	rq.body = "{}";
	rq.body_len = 2;
	cc = run(fx, &rq);
	assert_int_equal(cc, CURLE_COULDNT_CONNECT);
	assert_int_equal(fx->resp.status, 0);
	assert_true(pmbot_net_retryable(cc));
	assert_true(pmbot_net_never_sent(cc));
	assert_true(strlen(pmbot_net_error(fx->net, cc)) > 0);

	/* An answer cut short: worth another attempt, but the request went out. */
	memset(&r, 0, sizeof(r));
	r.status = 200;
	r.body = "0123456789";
	r.cut_after = 4;
	assert_int_equal(fakehttp_push(fx->srv, &r), 0);
	request_init(&rq, "GET", at(fx, "/cut"));
	cc = run(fx, &rq);
	assert_int_equal(cc, CURLE_PARTIAL_FILE);
	assert_true(pmbot_net_retryable(cc));
	assert_false(pmbot_net_never_sent(cc));
	assert_false(pmbot_net_retryable(CURLE_OK));
	assert_false(pmbot_net_retryable(CURLE_WRITE_ERROR));
}

static void test_net__header_values_are_matched_by_name_and_trimmed(void **state)
{
	static const char line[] = "Retry-After: \t 12 \r\n";
	const char *v = NULL;
	size_t n = 0;

	(void)state;
	assert_true(pmbot_net_header_is(&v, &n, line, strlen(line), "retry-after"));
	assert_int_equal(n, 2);
	assert_memory_equal(v, "12", 2);
	assert_false(pmbot_net_header_is(&v, &n, line, strlen(line), "retry-after-ms"));
	assert_false(pmbot_net_header_is(&v, &n, line, strlen(line), "retry"));
	assert_true(pmbot_net_header_is(&v, &n, "ETag:\r\n", 7, "etag"));
	assert_int_equal(n, 0);
	/* Not NUL-terminated: the length is the end. */
	assert_true(pmbot_net_header_is(&v, &n, "Link: <a>XXXX", 9, "link"));
	assert_int_equal(n, 3);
}

static void test_net__tokens_and_header_text_cannot_inject(void **state)
{
	(void)state;
	assert_true(pmbot_net_is_token("ghp_abc-._~%2F"));
	assert_false(pmbot_net_is_token("a b"));
	assert_false(pmbot_net_is_token("a\r\nX-Evil: 1"));
	assert_false(pmbot_net_is_token("caf\xc3\xa9"));
	assert_true(pmbot_net_is_header_text("pm-bot/1.0 (my org)"));
	assert_false(pmbot_net_is_header_text(""));
	assert_false(pmbot_net_is_header_text(" leading"));
	assert_false(pmbot_net_is_header_text("a\nb"));
	assert_false(pmbot_net_is_header_text("tab\there"));
}

static void test_net__a_base_url_is_plain_http_and_credentials_are_found_first(void **state)
{
	const char *host = NULL;
	size_t host_len = 0;
	char *out = NULL;
	int why = 0;

	(void)state;
	assert_int_equal(pmbot_net_base_url(&out, &host, &host_len, &why,
				 "https://api.example.com:8443/v1//"), 0);
	assert_string_equal(out, "https://api.example.com:8443/v1");
	assert_int_equal(host_len, strlen("api.example.com:8443"));
	assert_memory_equal(host, "api.example.com:8443", host_len);
	free(out);
	assert_int_equal(pmbot_net_base_url(&out, &host, &host_len, &why, "http://h"), 0);
	assert_string_equal(out, "http://h");
	free(out);

	/* Credentials win over every other fault: such a URL must never be quoted. */
	assert_int_equal(pmbot_net_base_url(&out, &host, &host_len, &why,
				 "https://user:pa ss@h/x"), PMBOT_EINVALID);
	assert_int_equal(why, PMBOT_NET_URL_CREDENTIALS);
	assert_null(out);
	assert_int_equal(pmbot_net_base_url(&out, &host, &host_len, &why,
				 "http://t0ken@h?q=1"), PMBOT_EINVALID);
	assert_int_equal(why, PMBOT_NET_URL_CREDENTIALS);

	assert_int_equal(pmbot_net_base_url(&out, &host, &host_len, &why, "ftp://h"),
		PMBOT_EINVALID);
	assert_int_equal(why, PMBOT_NET_URL_BAD);
	assert_int_equal(pmbot_net_base_url(&out, &host, &host_len, &why, "https://"),
		PMBOT_EINVALID);
	assert_int_equal(why, PMBOT_NET_URL_BAD);
	assert_int_equal(pmbot_net_base_url(&out, &host, &host_len, &why, "https:///path"),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_net_base_url(&out, &host, &host_len, &why, "https://h/a?b"),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_net_base_url(&out, &host, &host_len, &why, "https://h/#f"),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_net_base_url(&out, &host, &host_len, &why, "https://h/a b"),
		PMBOT_EINVALID);
	assert_int_equal(why, PMBOT_NET_URL_BAD);
	assert_null(out);
}

static void test_net__backoff_doubles_up_to_the_cap(void **state)
{
	(void)state;
	assert_int_equal(pmbot_net_backoff(100, 0, 1000), 100);
	assert_int_equal(pmbot_net_backoff(100, 1, 1000), 200);
	assert_int_equal(pmbot_net_backoff(100, 3, 1000), 800);
	assert_int_equal(pmbot_net_backoff(100, 4, 1000), 1000);
	assert_int_equal(pmbot_net_backoff(100, 1000, 1000), 1000);
	assert_int_equal(pmbot_net_backoff(5000, 0, 1000), 1000);
	assert_int_equal(pmbot_net_backoff(1, 62, 1LL << 40), 1LL << 40);
}

/* libcurl is opened, not linked: what it answers comes through the loaded library. */
static void test_net__the_opened_libcurl_answers_its_version_and_http_dates(void **state)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	const char *v = pmbot_net_version(&err);

	(void)state;
	assert_non_null(v);
	assert_int_equal(strncmp(v, "libcurl/", 8), 0);
	assert_int_equal(err.len, 0);
	/* RFC 9110's IMF-fixdate and its obsolete RFC 850 form name the same second. */
	assert_true(pmbot_net_http_date("Wed, 21 Oct 2015 07:28:00 GMT") == 1445412480LL);
	assert_true(pmbot_net_http_date("Wednesday, 21-Oct-15 07:28:00 GMT") == 1445412480LL);
	assert_true(pmbot_net_http_date("soon") == -1);
	pmbot_buf_free(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_net__sends_the_method_headers_and_body_it_is_given),
		T(test_net__a_get_after_a_patch_carries_nothing_of_it_on_the_same_connection),
		T(test_net__a_body_at_the_cap_is_whole_and_one_byte_more_is_too_big),
		T(test_net__the_header_hook_sees_the_status_line_and_every_header),
		T(test_net__a_failing_header_hook_ends_the_exchange_as_out_of_memory),
		T(test_net__a_redirect_is_the_answer_without_a_hook),
		T(test_net__the_hook_decides_each_redirect),
		T(test_net__transport_failures_say_whether_to_retry_and_whether_anything_left),
		cmocka_unit_test(test_net__header_values_are_matched_by_name_and_trimmed),
		cmocka_unit_test(test_net__tokens_and_header_text_cannot_inject),
		cmocka_unit_test(test_net__a_base_url_is_plain_http_and_credentials_are_found_first),
		cmocka_unit_test(test_net__backoff_doubles_up_to_the_cap),
		cmocka_unit_test(test_net__the_opened_libcurl_answers_its_version_and_http_dates),
#undef T
	};
	int rc;

	if (pmbot_net_global_init(NULL) < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	pmbot_net_global_cleanup();
	return rc;
}
