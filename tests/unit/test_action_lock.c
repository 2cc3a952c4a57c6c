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
#include "pmbot/action.h"
#include "pmbot/buf.h"
#include "pmbot/github.h"
#include "pmbot/net.h"
#include "pmbot/banned.h"

/*
 * The apply lock (src/action/lock.c) and the label calls under it, against
 * a scripted loopback server that records every request: each test asserts
 * the exact requests made and what the lock decides. That two runs really
 * exclude each other is shown against the emulator (tests/e2e/
 * test_action_attacks.sh); here, that the protocol asks GitHub the right
 * things in the right order and never writes when it should not.
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
	snprintf(fx->cache, sizeof(fx->cache), "%s/pmbot-test-lock-XXXXXX",
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


#define NOW 1800000000LL
#define LOCK_PATH "/repos/acme/widgets/labels/pm-bot%3Alock%3Apr-12"
#define EXISTS "{\"message\":\"Validation Failed\",\"errors\":[{\"resource\":\"Label\"," \
	"\"code\":\"already_exists\",\"field\":\"name\"}]}"

static void lock_init(pmbot_lock *l, const char *run)
{
	memset(l, 0, sizeof(*l));
	l->repo = "acme/widgets";
	l->key = "pr-12";
	l->run_id = run;
	l->now = NOW;
}

static void label_answer(char *buf, size_t size, const char *run, long long at)
{
	snprintf(buf, size, "{\"id\":1,\"name\":\"pm-bot:lock:pr-12\",\"color\":\"ededed\","
		"\"description\":\"run=%s at=%lld\"}", run, at);
}

static int dead_ctx_calls;

static int says_dead(void *ctx, const char *run)
{
	(void)ctx;
	dead_ctx_calls++;
	return strcmp(run, "900") ? 1 : 0;
}

static void test_lock__a_free_lock_is_one_create_with_the_holder_in_the_description(void **state)
{
	fixture *fx = *state;
	pmbot_lock l;
	char *holder = NULL;

	lock_init(&l, "1001");
	push(fx, 201, NULL, "{\"id\":1,\"name\":\"pm-bot:lock:pr-12\"}");
	assert_int_equal(pmbot_lock_take(&holder, &l, fx->c, &fx->err), 0);
	assert_null(holder);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_request(fx, 0, "POST", "/repos/acme/widgets/labels",
		"{\"color\":\"ededed\",\"description\":\"run=1001 at=1800000000\","
		"\"name\":\"pm-bot:lock:pr-12\"}");
}

static void test_lock__a_lock_held_by_a_live_run_is_busy_and_writes_nothing_more(void **state)
{
	fixture *fx = *state;
	pmbot_lock l;
	char *holder = NULL, body[256];

	lock_init(&l, "1001");
	push(fx, 422, NULL, EXISTS);
	label_answer(body, sizeof(body), "1000", NOW - 60);
	push(fx, 200, NULL, body);
	assert_int_equal(pmbot_lock_take(&holder, &l, fx->c, &fx->err), PMBOT_LOCK_EBUSY);
	assert_string_equal(holder, "1000");
	free(holder);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_request(fx, 1, "GET", LOCK_PATH, "");
	assert_contains(fx->err.buf, "run 1000 holds the lock");
	assert_no_token(fx);
}

static void test_lock__the_same_run_id_takes_its_own_lock_back(void **state)
{
	fixture *fx = *state;
	pmbot_lock l;
	char body[256];

	lock_init(&l, "1001");
	push(fx, 422, NULL, EXISTS);
	label_answer(body, sizeof(body), "1001", NOW - 600);
	push(fx, 200, NULL, body);
	assert_int_equal(pmbot_lock_take(NULL, &l, fx->c, &fx->err), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
}

static void test_lock__a_lock_older_than_the_ttl_is_taken_over_through_a_marker(void **state)
{
	fixture *fx = *state;
	pmbot_lock l;
	char body[256];

	lock_init(&l, "1001");
	push(fx, 422, NULL, EXISTS);
	label_answer(body, sizeof(body), "900", NOW - PMBOT_LOCK_TTL_S - 1);
	push(fx, 200, NULL, body);
	push(fx, 201, NULL, "{\"id\":2}");
	push(fx, 204, NULL, NULL);
	push(fx, 201, NULL, "{\"id\":3}");
	assert_int_equal(pmbot_lock_take(NULL, &l, fx->c, &fx->err), 0);
	assert_int_equal(fakehttp_count(fx->srv), 5);
	assert_request(fx, 2, "POST", "/repos/acme/widgets/labels",
		"{\"color\":\"ededed\",\"description\":\"run=1001 at=1800000000\","
		"\"name\":\"pm-bot:lock:pr-12:x900\"}");
	assert_request(fx, 3, "DELETE", LOCK_PATH, "");
	assert_request(fx, 4, "POST", "/repos/acme/widgets/labels",
		"{\"color\":\"ededed\",\"description\":\"run=1001 at=1800000000\","
		"\"name\":\"pm-bot:lock:pr-12\"}");
}

static void test_lock__a_finished_run_is_taken_over_before_the_ttl(void **state)
{
	fixture *fx = *state;
	pmbot_lock l;
	char body[256];

	lock_init(&l, "1001");
	l.run_alive = says_dead;
	dead_ctx_calls = 0;
	push(fx, 422, NULL, EXISTS);
	label_answer(body, sizeof(body), "900", NOW - 60);
	push(fx, 200, NULL, body);
	push(fx, 201, NULL, "{\"id\":2}");
	push(fx, 204, NULL, NULL);
	push(fx, 201, NULL, "{\"id\":3}");
	assert_int_equal(pmbot_lock_take(NULL, &l, fx->c, &fx->err), 0);
	assert_int_equal(dead_ctx_calls, 1);
}

static void test_lock__a_second_taker_of_the_same_dead_holder_loses_on_the_marker(void **state)
{
	fixture *fx = *state;
	pmbot_lock l;
	char *holder = NULL, body[256];

	lock_init(&l, "1002");
	push(fx, 422, NULL, EXISTS);
	label_answer(body, sizeof(body), "900", NOW - PMBOT_LOCK_TTL_S - 5);
	push(fx, 200, NULL, body);
	push(fx, 422, NULL, EXISTS);
	assert_int_equal(pmbot_lock_take(&holder, &l, fx->c, &fx->err), PMBOT_LOCK_EBUSY);
	free(holder);
	/* No DELETE: the loser never touches the lock the winner is replacing. */
	assert_int_equal(fakehttp_count(fx->srv), 3);
	assert_contains(fx->err.buf, "another run is taking over");
}

static void test_lock__a_fresh_run_that_creates_the_lock_during_a_takeover_wins(void **state)
{
	fixture *fx = *state;
	pmbot_lock l;
	char body[256];

	lock_init(&l, "1001");
	push(fx, 422, NULL, EXISTS);
	label_answer(body, sizeof(body), "900", NOW - PMBOT_LOCK_TTL_S - 5);
	push(fx, 200, NULL, body);
	push(fx, 201, NULL, "{\"id\":2}");
	push(fx, 204, NULL, NULL);
	push(fx, 422, NULL, EXISTS);
	assert_int_equal(pmbot_lock_take(NULL, &l, fx->c, &fx->err), PMBOT_LOCK_EBUSY);
}

static void test_lock__a_label_not_in_pm_bots_format_is_busy_never_deleted(void **state)
{
	fixture *fx = *state;
	pmbot_lock l;
	char *holder = NULL;

	lock_init(&l, "1001");
	push(fx, 422, NULL, EXISTS);
	push(fx, 200, NULL, "{\"id\":1,\"name\":\"pm-bot:lock:pr-12\",\"description\":null}");
	assert_int_equal(pmbot_lock_take(&holder, &l, fx->c, &fx->err), PMBOT_LOCK_EBUSY);
	assert_string_equal(holder, "");
	free(holder);
	assert_int_equal(fakehttp_count(fx->srv), 2);
}

static void test_lock__another_422_is_an_error_not_a_held_lock(void **state)
{
	fixture *fx = *state;
	pmbot_lock l;

	lock_init(&l, "1001");
	push(fx, 422, NULL, "{\"message\":\"Validation Failed\",\"errors\":[{\"resource\":"
		"\"Label\",\"code\":\"invalid\",\"field\":\"color\"}]}");
	assert_int_equal(pmbot_lock_take(NULL, &l, fx->c, &fx->err), PMBOT_GITHUB_EHTTP);
	assert_int_equal(fakehttp_count(fx->srv), 1);
}

static void test_lock__a_create_whose_answer_was_lost_is_read_back(void **state)
{
	fixture *fx = *state;
	pmbot_lock l;
	char body[256];

	lock_init(&l, "1001");
	push(fx, 502, NULL, "{\"message\":\"Server Error\"}");
	label_answer(body, sizeof(body), "1001", NOW);
	push(fx, 200, NULL, body);
	assert_int_equal(pmbot_lock_take(NULL, &l, fx->c, &fx->err), 0);
	/* Never retried: one POST, then the read that says it landed. */
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_request(fx, 1, "GET", LOCK_PATH, "");
}

static void test_lock__a_lock_released_between_create_and_read_is_tried_again(void **state)
{
	fixture *fx = *state;
	pmbot_lock l;

	lock_init(&l, "1001");
	push(fx, 422, NULL, EXISTS);
	push(fx, 404, NULL, "{\"message\":\"Not Found\"}");
	push(fx, 201, NULL, "{\"id\":4}");
	assert_int_equal(pmbot_lock_take(NULL, &l, fx->c, &fx->err), 0);
	assert_int_equal(fakehttp_count(fx->srv), 3);
}

static void test_lock__release_deletes_the_label_and_a_missing_one_is_fine(void **state)
{
	fixture *fx = *state;
	pmbot_lock l;

	lock_init(&l, "1001");
	push(fx, 204, NULL, NULL);
	push(fx, 404, NULL, "{\"message\":\"Not Found\"}");
	assert_int_equal(pmbot_lock_release(&l, fx->c, &fx->err), 0);
	assert_int_equal(pmbot_lock_release(&l, fx->c, &fx->err), 0);
	assert_request(fx, 0, "DELETE", LOCK_PATH, "");
}

static void test_lock__bad_keys_and_run_ids_are_refused_without_a_request(void **state)
{
	fixture *fx = *state;
	pmbot_lock l;

	lock_init(&l, "1001");
	l.key = "pr-12/../x";
	assert_int_equal(pmbot_lock_take(NULL, &l, fx->c, &fx->err), PMBOT_EINVALID);
	lock_init(&l, "12345678901234567890123");
	assert_int_equal(pmbot_lock_take(NULL, &l, fx->c, &fx->err), PMBOT_EINVALID);
	lock_init(&l, "run 1");
	assert_int_equal(pmbot_lock_take(NULL, &l, fx->c, &fx->err), PMBOT_EINVALID);
	assert_int_equal(fakehttp_count(fx->srv), 0);
}

static void test_lock__parse_accepts_only_pm_bots_own_description(void **state)
{
	char run[32];
	long long at;

	(void)state;
	assert_int_equal(pmbot_lock_parse(run, sizeof(run), &at, "run=1001 at=1800000000"), PMBOT_OK);
	assert_string_equal(run, "1001");
	assert_true(at == 1800000000LL);
	assert_int_equal(pmbot_lock_parse(run, sizeof(run), &at, "run=1001 at=18 extra"), PMBOT_EINVALID);
	assert_int_equal(pmbot_lock_parse(run, sizeof(run), &at, "run= at=1"), PMBOT_EINVALID);
	assert_int_equal(pmbot_lock_parse(run, sizeof(run), &at, ""), PMBOT_EINVALID);
	assert_int_equal(pmbot_lock_parse(run, sizeof(run), &at, "run=1 at=-5"), PMBOT_EINVALID);
}

static void test_ghops__pull_get_refuses_an_answer_without_merged(void **state)
{
	fixture *fx = *state;
	pmbot_gh_pull p;

	push(fx, 200, NULL, "{\"state\":\"closed\",\"head\":{\"sha\":\"" SHA "\",\"repo\":null},"
		"\"base\":{\"repo\":{\"full_name\":\"acme/widgets\"}}}");
	assert_int_equal(pmbot_gh_pull_get(&p, fx->c, "acme/widgets", 3, &fx->err), PMBOT_ERROR);
	assert_null(p.state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_lock__a_free_lock_is_one_create_with_the_holder_in_the_description),
		T(test_lock__a_lock_held_by_a_live_run_is_busy_and_writes_nothing_more),
		T(test_lock__the_same_run_id_takes_its_own_lock_back),
		T(test_lock__a_lock_older_than_the_ttl_is_taken_over_through_a_marker),
		T(test_lock__a_finished_run_is_taken_over_before_the_ttl),
		T(test_lock__a_second_taker_of_the_same_dead_holder_loses_on_the_marker),
		T(test_lock__a_fresh_run_that_creates_the_lock_during_a_takeover_wins),
		T(test_lock__a_label_not_in_pm_bots_format_is_busy_never_deleted),
		T(test_lock__another_422_is_an_error_not_a_held_lock),
		T(test_lock__a_create_whose_answer_was_lost_is_read_back),
		T(test_lock__a_lock_released_between_create_and_read_is_tried_again),
		T(test_lock__release_deletes_the_label_and_a_missing_one_is_fine),
		T(test_lock__bad_keys_and_run_ids_are_refused_without_a_request),
		T(test_lock__parse_accepts_only_pm_bots_own_description),
		T(test_ghops__pull_get_refuses_an_answer_without_merged),
#undef T
	};
	int rc;

	if (pmbot_net_global_init(NULL) < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	pmbot_net_global_cleanup();
	return rc;
}
