#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers/fakehttp.h"
#include "helpers/tmpdir.h"
#include "../../src/github/github_int.h"
#include "pmbot/buf.h"
#include "pmbot/fs.h"
#include "pmbot/github.h"
#include "pmbot/net.h"
#include "pmbot/banned.h"

/*
 * The write budget (src/github/budget.c and its use in src/github/http.c):
 * the window list, the sliding-window arithmetic, the record kept across
 * runs, and the client waiting, stopping and remembering against a scripted
 * loopback server. The clock is a fake that only sleeps move.
 */

#define T0_MS 1700000000000LL /* 2023-11-14T22:13:20Z */

/* ---- the window list ---------------------------------------------------- */

static void test_budget_parse__the_default_and_lists_of_windows(void **state)
{
	pmbot_github_budget b;

	(void)state;
	assert_int_equal(pmbot_github_budget_parse(&b, PMBOT_GITHUB_DEFAULT_WRITE_BUDGET, NULL), 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.w[0].count, 80);
	assert_int_equal(b.w[0].seconds, 60);
	assert_int_equal(b.w[1].count, 500);
	assert_int_equal(b.w[1].seconds, 3600);
	assert_int_equal(pmbot_github_budget_parse(&b, " 5/2s , 12/6s ", NULL), 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.w[1].count, 12);
	assert_int_equal(b.w[1].seconds, 6);
	assert_int_equal(pmbot_github_budget_parse(&b, "100000/86400s", NULL), 0);
	assert_int_equal(b.n, 1);
	assert_int_equal(pmbot_github_budget_parse(&b, "off", NULL), 0);
	assert_int_equal(b.n, 0);
}

static void test_budget_parse__refuses_anything_else_and_says_why(void **state)
{
	static const char *const bad[] = {
		"", " ", "80", "80/60", "80/60m", "80/s", "/60s", "0/60s", "80/0s", "-1/60s",
		"+1/60s", "08/60s", "80/060s", "100001/60s", "1/86401s", "80/60s,", ",80/60s",
		"80/60s;500/3600s", "80/60s 500/3600s", "80/60s,90/60s", "OFF", "off,80/60s",
		"99999999999999999999/1s", "1/1s,2/2s,3/3s,4/4s,5/5s,6/6s,7/7s,8/8s,9/9s",
		"80/60s\n", "80 / 60s",
	};
	pmbot_github_budget b, keep;
	pmbot_buf err = PMBOT_BUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_github_budget_parse(&keep, "3/3s", NULL), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = keep;
		pmbot_buf_clear(&err);
		if (pmbot_github_budget_parse(&b, bad[i], &err) != PMBOT_EINVALID)
			fail_msg("\"%s\" was accepted", bad[i]);
		assert_non_null(strstr(err.buf, "the write budget"));
		/* Nothing is filled on failure. */
		assert_memory_equal(&b, &keep, sizeof(b));
	}
	assert_int_equal(pmbot_github_budget_parse(&b, "1/1s,2/2s,3/3s,4/4s,5/5s,6/6s,7/7s,8/8s",
		NULL), 0);
	assert_int_equal(b.n, 8);
	/* The text is quoted escaped, never raw. */
	pmbot_buf_clear(&err);
	assert_int_equal(pmbot_github_budget_parse(&b, "1/1s\x1b[31m", &err), PMBOT_EINVALID);
	assert_null(strchr(err.buf, '\x1b'));
	pmbot_buf_free(&err);
}

/* ---- window arithmetic ------------------------------------------------- */

static void test_budget_next__room_now_or_when_the_fullest_window_frees(void **state)
{
	pmbot_github_budget b;
	long long t[12];
	size_t i;

	(void)state;
	assert_int_equal(pmbot_github_budget_parse(&b, "3/2s,5/10s", NULL), 0);
	assert_int_equal(pmbot_github_budget_next(&b, NULL, 0, 1000, 0), 1000);
	/* 3 writes at 0, 100, 200 ms: the 2 s window is full until the first is 2 s old. */
	t[0] = 0, t[1] = 100, t[2] = 200;
	assert_int_equal(pmbot_github_budget_next(&b, t, 2, 300, 0), 300);
	assert_int_equal(pmbot_github_budget_next(&b, t, 3, 300, 0), 2000);
	/* Exactly at the edge the oldest has left (GitHub's "in any 2 s"). */
	assert_int_equal(pmbot_github_budget_next(&b, t, 3, 2000, 0), 2000);
	/* 5 writes in 10 s: the long window binds, from its oldest of the last 5. */
	t[3] = 2000, t[4] = 4000;
	assert_int_equal(pmbot_github_budget_next(&b, t, 5, 4100, 0), 10000);
	/* More writes than a window holds: only the newest `count` matter. */
	for (i = 0; i < 12; i++)
		t[i] = (long long)i * 2000;
	assert_int_equal(pmbot_github_budget_next(&b, t, 12, 22000, 0), 24000);
	/* Holding writes back fills a window sooner: 3/2s holding 1 is full at 2. */
	t[0] = 0, t[1] = 100, t[2] = 200;
	assert_int_equal(pmbot_github_budget_next(&b, t, 1, 300, 1), 300);
	assert_int_equal(pmbot_github_budget_next(&b, t, 2, 300, 1), 2000);
	/* Never the whole window: holding 7 keeps all but one of each, so one goes. */
	assert_int_equal(pmbot_github_budget_next(&b, t, 0, 300, 7), 300);
	assert_int_equal(pmbot_github_budget_next(&b, t, 1, 300, 7), 10000);
	for (i = 0; i < 12; i++)
		t[i] = (long long)i * 2000;
	/* No budget: always now. */
	b.n = 0;
	assert_int_equal(pmbot_github_budget_next(&b, t, 12, 22000, 0), 22000);
}

static void test_budget_spent__prune_keeps_what_a_window_can_still_count(void **state)
{
	pmbot_github_budget b;
	pmbot_github_spent s = { NULL, 0, 0 };
	long long i;

	(void)state;
	assert_int_equal(pmbot_github_budget_parse(&b, "3/2s,5/10s", NULL), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(pmbot_github_spent_add(&s, i * 1000), 0);
	/* A clock that went back never un-sorts the record. */
	assert_int_equal(pmbot_github_spent_add(&s, 500), 0);
	assert_int_equal(s.t[8], 7000);
	pmbot_github_spent_prune(&s, &b, 12000);
	/* At most 5 (the largest count), none 10 s old or older. */
	assert_int_equal(s.n, 5);
	assert_int_equal(s.t[0], 4000);
	pmbot_github_spent_prune(&s, &b, 16000);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.t[0], 7000);
	pmbot_github_spent_prune(&s, &b, 17000);
	assert_int_equal(s.n, 0);
	pmbot_github_spent_free(&s);
}

/* ---- the record kept across runs ----------------------------------------- */

typedef struct {
	char dir[256];
	char path[300];
} tmp;

static void tmp_make(tmp *t)
{
	const char *base = getenv("TMPDIR");

	snprintf(t->dir, sizeof(t->dir), "%s/pmbot-test-budget-XXXXXX", base && *base ? base : "/tmp");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->path, sizeof(t->path), "%s/" PMBOT_GITHUB_BUDGET_FILE, t->dir);
}

static void write_file(const char *path, const char *text)
{
	assert_int_equal(pmbot_fs_write_atomic(path, text, strlen(text)), 0);
}

static void test_budget_spent__store_then_load_round_trips_for_the_same_api_only(void **state)
{
	pmbot_github_spent s = { NULL, 0, 0 }, l = { NULL, 0, 0 };
	pmbot_buf note = PMBOT_BUF_INIT, file = PMBOT_BUF_INIT;
	tmp t;

	(void)state;
	tmp_make(&t);
	/* No file yet: an empty record, nothing said. */
	assert_int_equal(pmbot_github_spent_load(&l, t.dir, "https://api.github.com", T0_MS, &note), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(note.len, 0);
	assert_int_equal(pmbot_github_spent_add(&s, T0_MS - 2000), 0);
	assert_int_equal(pmbot_github_spent_add(&s, T0_MS - 1000), 0);
	assert_int_equal(pmbot_github_spent_store(&s, t.dir, "https://api.github.com"), 0);
	/* Canonical JSON: the same bytes for the same record. */
	assert_int_equal(pmbot_fs_read(&file, t.path), 0);
	assert_string_equal(file.buf, "{\"api_url\":\"https://api.github.com\",\"version\":1,"
		"\"writes\":[1699999998000,1699999999000]}\n");
	assert_int_equal(pmbot_github_spent_load(&l, t.dir, "https://api.github.com", T0_MS, &note), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.t[1], T0_MS - 1000);
	pmbot_github_spent_free(&l);
	/* Another host's writes are not this one's. */
	assert_int_equal(pmbot_github_spent_load(&l, t.dir, "https://ghe.example.com/api/v3", T0_MS,
		&note), 0);
	assert_int_equal(l.n, 0);
	assert_non_null(strstr(note.buf, "another API URL"));
	pmbot_github_spent_free(&l);
	pmbot_github_spent_free(&s);
	pmbot_buf_free(&note);
	pmbot_buf_free(&file);
	test_remove_tree(t.dir);
}

static void test_budget_spent__a_hostile_record_is_ignored_with_a_note(void **state)
{
	static const char *const bad[] = {
		"",
		"{\"api_url\":\"A\",\"version\":1,\"writes\":[1,",
		"[1,2,3]",
		"{\"api_url\":\"A\",\"version\":2,\"writes\":[]}",
		"{\"api_url\":\"A\",\"writes\":[]}",
		"{\"api_url\":\"A\",\"version\":1,\"writes\":{}}",
		"{\"api_url\":\"A\",\"version\":1,\"writes\":[1700000000000,\"x\"]}",
		"{\"api_url\":\"A\",\"version\":1,\"writes\":[1700000000000,-5]}",
		"{\"api_url\":\"A\",\"version\":1,\"writes\":[1.5]}",
		"{\"api_url\":\"A\",\"api_url\":\"A\",\"version\":1,\"writes\":[]}",
		"{\"api_url\":7,\"version\":1,\"writes\":[]}",
	};
	pmbot_github_spent l = { NULL, 0, 0 };
	pmbot_buf note = PMBOT_BUF_INIT;
	size_t i;
	tmp t;

	(void)state;
	tmp_make(&t);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(t.path, bad[i]);
		pmbot_buf_clear(&note);
		assert_int_equal(pmbot_github_spent_load(&l, t.dir, "A", T0_MS, &note), 0);
		if (l.n || !strstr(note.buf, "ignoring the write budget record"))
			fail_msg("record %zu: %zu writes kept, note \"%s\"", i, l.n, note.buf);
		pmbot_github_spent_free(&l);
	}
	pmbot_buf_free(&note);
	test_remove_tree(t.dir);
}

static void test_budget_spent__future_and_ancient_times_are_bounded(void **state)
{
	pmbot_github_spent l = { NULL, 0, 0 };
	pmbot_buf note = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;
	tmp t;
	int i;

	(void)state;
	tmp_make(&t);
	/* A day old is forgotten; the far future counts as now, and says so (1). */
	pmbot_buf_printf(&text, "{\"api_url\":\"A\",\"version\":1,\"writes\":[%lld,%lld,%lld]}",
		T0_MS - 86400000LL, T0_MS - 5000, 99999999999999999LL);
	write_file(t.path, text.buf);
	assert_int_equal(pmbot_github_spent_load(&l, t.dir, "A", T0_MS, &note), 1);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.t[0], T0_MS - 5000);
	assert_int_equal(l.t[1], T0_MS);
	assert_int_equal(note.len, 0);
	pmbot_github_spent_free(&l);
	/* A forged list longer than any window keeps only its newest entries. */
	pmbot_buf_clear(&text);
	pmbot_buf_puts(&text, "{\"api_url\":\"A\",\"version\":1,\"writes\":[");
	for (i = 0; i < 100005; i++)
		pmbot_buf_printf(&text, "%s%lld", i ? "," : "", T0_MS - 100005 + i);
	pmbot_buf_puts(&text, "]}");
	write_file(t.path, text.buf);
	assert_int_equal(pmbot_github_spent_load(&l, t.dir, "A", T0_MS, &note), 0);
	assert_int_equal(l.n, (size_t)PMBOT_GITHUB_BUDGET_MAX_COUNT);
	assert_int_equal(l.t[0], T0_MS - 100000);
	pmbot_github_spent_free(&l);
	pmbot_buf_free(&note);
	pmbot_buf_free(&text);
	test_remove_tree(t.dir);
}

/* ---- the client ----------------------------------------------------------- */

typedef struct {
	fakehttp *srv;
	tmp cache;
	char api[128];
	pmbot_github_options opts;
	pmbot_github_client *c;
	pmbot_github_response resp;
	long long now_ms;
	long long slept_ms;
	size_t n_sleeps;
	size_t n_budget_events;
	pmbot_buf err;             /* the message of the last request, fresh each call */
	pmbot_buf events;
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

	fx->n_sleeps++;
	fx->slept_ms += ms;
	fx->now_ms += ms;
}

static void on_event(void *payload, const pmbot_github_event *ev)
{
	fixture *fx = payload;

	if (ev->kind == PMBOT_GITHUB_EV_BUDGET)
		fx->n_budget_events++;
	pmbot_buf_printf(&fx->events, "%s\n", ev->message);
}

static int setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));
	pmbot_github_response init = PMBOT_GITHUB_RESPONSE_INIT;

	if (!fx || fakehttp_start(&fx->srv) < 0)
		return -1;
	tmp_make(&fx->cache);
	snprintf(fx->api, sizeof(fx->api), "%s", fakehttp_url(fx->srv));
	pmbot_github_options_init(&fx->opts);
	fx->opts.api_url = fx->api;
	fx->opts.graphql_url = fx->api;
	fx->opts.token = "ghp_budgetTestToken0123456789";
	fx->opts.cache_dir = fx->cache.dir;
	fx->opts.pace_ms = 0;
	fx->opts.write_budget = "3/2s,5/10s";
	fx->opts.now = fake_now;
	fx->opts.sleep = fake_sleep;
	fx->opts.clock_payload = fx;
	fx->opts.on_event = on_event;
	fx->opts.event_payload = fx;
	fx->now_ms = T0_MS;
	fx->resp = init;
	pmbot_buf_init(&fx->events, 0);
	pmbot_buf_init(&fx->err, 0);
	unsetenv("PMBOT_GITHUB_WRITE_BUDGET");
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	pmbot_github_client_free(fx->c);
	pmbot_github_response_free(&fx->resp);
	fakehttp_stop(fx->srv);
	test_remove_tree(fx->cache.dir);
	pmbot_buf_free(&fx->events);
	pmbot_buf_free(&fx->err);
	unsetenv("PMBOT_GITHUB_WRITE_BUDGET");
	free(fx);
	return 0;
}

static pmbot_github_client *client(fixture *fx)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	int rc;

	pmbot_github_client_free(fx->c);
	fx->c = NULL;
	rc = pmbot_github_client_new(&fx->c, &fx->opts, &err);
	if (rc != 0)
		fail_msg("client_new: %s", err.buf);
	pmbot_buf_free(&err);
	return fx->c;
}

/* One write answered 201 (when it is sent): its code. */
static int post(fixture *fx)
{
	assert_int_equal(fakehttp_push_simple(fx->srv, 201, NULL, "{\"id\":1}"), 0);
	return pmbot_github_rest(&fx->resp, fx->c, "POST", "/repos/o/r/issues", NULL, ERR);
}

/* A write the budget stops: its code, and it never reached the server. */
static int post_stopped(fixture *fx)
{
	size_t before = fakehttp_count(fx->srv);
	int rc = pmbot_github_rest(&fx->resp, fx->c, "POST", "/repos/o/r/issues", NULL, ERR);

	assert_int_equal(fakehttp_count(fx->srv), before);
	return rc;
}

static void test_budget_client__waits_for_a_window_that_frees_soon_and_stops_before_a_long_one(
	void **state)
{
	fixture *fx = *state;
	size_t i;

	client(fx);
	/* 3 in the 2 s window go at once; the 4th waits 2 s (the shortest window's length). */
	for (i = 0; i < 3; i++)
		assert_int_equal(post(fx), 0);
	assert_int_equal(fx->n_sleeps, 0);
	assert_int_equal(post(fx), 0);
	assert_int_equal(fx->slept_ms, 2000);
	assert_int_equal(post(fx), 0);
	/* 5 in 10 s: the 6th would wait 8 s, longer than 2 s: stopped, unsent. */
	assert_int_equal(post_stopped(fx), PMBOT_GITHUB_EBUDGET);
	assert_int_equal(fakehttp_count(fx->srv), 5);
	assert_int_equal(pmbot_github_budget_resume(fx->c), T0_MS + 10000);
	assert_non_null(strstr(fx->err.buf,
		"not sent: the write budget is spent; writes resume after 2023-11-14T22:13:30Z "
		"(write budget 3/2s,5/10s)"));
	/* Both told: the wait for the 2 s window and the stop. */
	assert_int_equal(fx->n_budget_events, 2);
	/* Reads are never budgeted. */
	assert_int_equal(fakehttp_push_simple(fx->srv, 200, NULL, "[]"), 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "GET", "/repos/o/r/issues", NULL, ERR), 0);
	/* Once the window frees, writes go again. */
	fx->now_ms = T0_MS + 10000;
	assert_int_equal(fakehttp_push_simple(fx->srv, 201, NULL, "{\"id\":1}"), 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "POST", "/repos/o/r/issues", NULL, ERR), 0);
}

static void test_budget_client__free_at_says_when_a_run_may_start_writing(void **state)
{
	fixture *fx = *state;
	size_t i;

	client(fx);
	/* Nothing spent: room now. */
	assert_int_equal(pmbot_github_budget_free_at(fx->c, 0), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(post(fx), 0);
	/* 2 of 3 in the 2 s window: one more fits, but not with one kept back. */
	assert_int_equal(pmbot_github_budget_free_at(fx->c, 0), 0);
	assert_int_equal(pmbot_github_budget_free_at(fx->c, 1), T0_MS + 2000);
	/* The next run's client knows, from the record, without sending anything. */
	fx->now_ms += 500;
	client(fx);
	assert_int_equal(pmbot_github_budget_free_at(fx->c, 1), T0_MS + 2000);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	fx->now_ms = T0_MS + 2000;
	assert_int_equal(pmbot_github_budget_free_at(fx->c, 1), 0);
	/* Without a budget there is always room. */
	fx->opts.write_budget = "off";
	client(fx);
	assert_int_equal(pmbot_github_budget_free_at(fx->c, 2), 0);
}

static void test_budget_client__the_next_run_knows_what_this_one_spent(void **state)
{
	fixture *fx = *state;
	size_t i;

	client(fx);
	for (i = 0; i < 3; i++)
		assert_int_equal(post(fx), 0);
	/* A new client (the next run) half a second later: the 2 s window is still full. */
	fx->now_ms += 500;
	client(fx);
	assert_int_equal(post(fx), 0);
	assert_int_equal(fx->slept_ms, 1500);
	/* A GraphQL mutation counts once, like any write; a query does not count. */
	assert_int_equal(fakehttp_push_simple(fx->srv, 200, NULL, "{\"data\":{}}"), 0);
	assert_int_equal(pmbot_github_graphql_ex(&fx->resp, fx->c, "query { viewer { login } }",
		NULL, 0, ERR), 0);
	assert_int_equal(fakehttp_push_simple(fx->srv, 200, NULL, "{\"data\":{}}"), 0);
	assert_int_equal(pmbot_github_graphql_ex(&fx->resp, fx->c,
		"mutation { a: addLabelsToLabelable(input: {}) { clientMutationId } "
		"b: addLabelsToLabelable(input: {}) { clientMutationId } }", NULL, 0, ERR), 0);
	/* Five writes were sent in all; the next run's client says the 10 s window is full. */
	client(fx);
	assert_int_equal(post_stopped(fx), PMBOT_GITHUB_EBUDGET);
	assert_int_equal(pmbot_github_budget_resume(fx->c), T0_MS + 10000);
}

static void test_budget_client__a_long_secondary_limit_on_a_write_stops_instead_of_sleeping(
	void **state)
{
	fixture *fx = *state;

	client(fx);
	assert_int_equal(fakehttp_push_simple(fx->srv, 403, "retry-after: 1\r\n",
		"{\"message\":\"You have exceeded a secondary rate limit.\"}"), 0);
	assert_int_equal(fakehttp_push_simple(fx->srv, 201, NULL, "{\"id\":1}"), 0);
	/* A short one is waited out. */
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "POST", "/repos/o/r/issues", NULL, ERR), 0);
	assert_int_equal(fx->slept_ms, 1000);
	assert_int_equal(fakehttp_push_simple(fx->srv, 403, "retry-after: 600\r\n",
		"{\"message\":\"You have exceeded a secondary rate limit.\"}"), 0);
	assert_int_equal(pmbot_github_rest(&fx->resp, fx->c, "POST", "/repos/o/r/issues", NULL, ERR),
		PMBOT_GITHUB_EBUDGET);
	assert_int_equal(fx->slept_ms, 1000);
	assert_int_equal(pmbot_github_budget_resume(fx->c), fx->now_ms + 600000);
	assert_non_null(strstr(fx->err.buf, "GitHub asks to wait 600 s"));
}

static void test_budget_client__a_record_that_cannot_be_used_is_said_not_fatal(void **state)
{
	fixture *fx = *state;

	write_file(fx->cache.path, "\x01garbage");
	client(fx);
	assert_int_equal(fx->n_budget_events, 1);
	assert_non_null(strstr(fx->events.buf, "ignoring the write budget record"));
	assert_int_equal(post(fx), 0);
	/* The next write replaces it with a good one. */
	pmbot_buf_clear(&fx->events);
	fx->n_budget_events = 0;
	client(fx);
	assert_int_equal(fx->n_budget_events, 0);
}

static void test_budget_client__a_record_that_cannot_be_written_is_told_once(void **state)
{
	fixture *fx = *state;
	char blocked[320];

	/* A regular file where the directory would be: no record can be written there. */
	write_file(fx->cache.path, "x");
	snprintf(blocked, sizeof(blocked), "%s/sub", fx->cache.path);
	fx->opts.cache_dir = blocked;
	client(fx);
	assert_int_equal(post(fx), 0);
	assert_int_equal(post(fx), 0);
	assert_int_equal(fx->n_budget_events, 1);
	assert_non_null(strstr(fx->events.buf, "could not write the write budget record"));
	/* The run still knows its own writes: the 4th waits for the 2 s window. */
	assert_int_equal(post(fx), 0);
	assert_int_equal(fx->slept_ms, 0);
	assert_int_equal(post(fx), 0);
	assert_int_equal(fx->slept_ms, 2000);
}

static void test_budget_client__environment_over_configuration_over_default(void **state)
{
	fixture *fx = *state;
	pmbot_github_budget conf;
	pmbot_buf err = PMBOT_BUF_INIT;
	size_t i;

	assert_int_equal(pmbot_github_budget_parse(&conf, "1/100s", NULL), 0);
	/* The environment, and the client's own option, win over the configuration. */
	fx->opts.write_budget = NULL;
	fx->opts.budget_max_wait_ms = 1000;
	setenv("PMBOT_GITHUB_WRITE_BUDGET", "2/50s", 1);
	client(fx);
	assert_int_equal(pmbot_github_client_config_budget(fx->c, &conf), 0);
	assert_int_equal(post(fx), 0);
	assert_int_equal(post(fx), 0);
	assert_int_equal(post_stopped(fx), PMBOT_GITHUB_EBUDGET);
	assert_int_equal(pmbot_github_budget_resume(fx->c), T0_MS + 50000);
	/* Without either, the configuration's is taken. */
	unsetenv("PMBOT_GITHUB_WRITE_BUDGET");
	test_remove_tree(fx->cache.dir);
	client(fx);
	assert_int_equal(pmbot_github_client_config_budget(fx->c, &conf), 1);
	assert_int_equal(post(fx), 0);
	assert_int_equal(post_stopped(fx), PMBOT_GITHUB_EBUDGET);
	/* A malformed environment value makes no client. */
	setenv("PMBOT_GITHUB_WRITE_BUDGET", "80 a minute", 1);
	pmbot_github_client_free(fx->c);
	fx->c = NULL;
	assert_int_equal(pmbot_github_client_new(&fx->c, &fx->opts, &err), PMBOT_EINVALID);
	assert_null(fx->c);
	assert_non_null(strstr(err.buf, "the write budget"));
	/* "off": no budget at all. */
	setenv("PMBOT_GITHUB_WRITE_BUDGET", "off", 1);
	client(fx);
	for (i = 0; i < 10; i++)
		assert_int_equal(post(fx), 0);
	assert_int_equal(fx->n_sleeps, 0);
	pmbot_buf_free(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_parse__the_default_and_lists_of_windows),
		cmocka_unit_test(test_budget_parse__refuses_anything_else_and_says_why),
		cmocka_unit_test(test_budget_next__room_now_or_when_the_fullest_window_frees),
		cmocka_unit_test(test_budget_spent__prune_keeps_what_a_window_can_still_count),
		cmocka_unit_test(test_budget_spent__store_then_load_round_trips_for_the_same_api_only),
		cmocka_unit_test(test_budget_spent__a_hostile_record_is_ignored_with_a_note),
		cmocka_unit_test(test_budget_spent__future_and_ancient_times_are_bounded),
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_budget_client__waits_for_a_window_that_frees_soon_and_stops_before_a_long_one),
		T(test_budget_client__free_at_says_when_a_run_may_start_writing),
		T(test_budget_client__the_next_run_knows_what_this_one_spent),
		T(test_budget_client__a_long_secondary_limit_on_a_write_stops_instead_of_sleeping),
		T(test_budget_client__a_record_that_cannot_be_used_is_said_not_fatal),
		T(test_budget_client__a_record_that_cannot_be_written_is_told_once),
		T(test_budget_client__environment_over_configuration_over_default),
#undef T
	};
	int rc;

	if (pmbot_net_global_init(NULL) < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	pmbot_net_global_cleanup();
	return rc;
}
