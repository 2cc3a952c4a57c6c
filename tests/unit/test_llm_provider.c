#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers/fakehttp.h"
#include "pmbot/buf.h"
#include "pmbot/llm.h"
#include "pmbot/net.h"
#include "pmbot/banned.h"

/*
 * The model providers against the scripted loopback server that records
 * every request. The environment and the sleep are fakes: waits are
 * asserted as computed, nothing sleeps for real (only curl's own short
 * timeouts run on the wall clock).
 */

#define KEY "sk-test-S3cr3tK3yForLLMTests0123456789"
/* Long enough to tell any leaked piece of the key from ordinary text. */
#define KEY_PREFIX "sk-test-S3c"
#define MAX_ENV 8
#define MAX_WAITS 16

typedef struct {
	const char *name[MAX_ENV];
	const char *value[MAX_ENV];
	size_t n;
} fake_env;

typedef struct {
	fakehttp *srv;
	char base[160];       /* the server's URL + "/v1" */
	fake_env env;
	pmbot_llm_config cfg;
	pmbot_llm_client *c;
	pmbot_buf text;
	pmbot_buf err;
	long long waits[MAX_WAITS];
	size_t n_waits;
} fixture;

static const char *fake_getenv(void *payload, const char *name)
{
	fake_env *env = payload;
	size_t i;

	for (i = 0; i < env->n; i++)
		if (!strcmp(env->name[i], name))
			return env->value[i];
	return NULL;
}

static void env_set(fake_env *env, const char *name, const char *value)
{
	assert_true(env->n < MAX_ENV);
	env->name[env->n] = name;
	env->value[env->n] = value;
	env->n++;
}

static void fake_sleep(void *payload, long long ms)
{
	fixture *fx = payload;

	if (fx->n_waits < MAX_WAITS)
		fx->waits[fx->n_waits++] = ms;
}

static int setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));

	if (!fx || fakehttp_start(&fx->srv) < 0)
		return -1;
	snprintf(fx->base, sizeof(fx->base), "%s/v1", fakehttp_url(fx->srv));
	pmbot_llm_config_init(&fx->cfg);
	pmbot_buf_init(&fx->text, 0);
	pmbot_buf_init(&fx->err, 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;
	/* Whatever a test did, no error it produced may hold the key. */
	int leaked = strstr(fx->err.buf, KEY_PREFIX) != NULL;

	pmbot_llm_client_free(fx->c);
	pmbot_llm_config_free(&fx->cfg);
	fakehttp_stop(fx->srv);
	pmbot_buf_free(&fx->text);
	pmbot_buf_free(&fx->err);
	free(fx);
	return leaked ? -1 : 0;
}

/* A client for `provider` at the fake server, with fast, recorded waits. */
static void client_at(fixture *fx, const char *provider, const char *url, const char *model,
	const char *key)
{
	env_set(&fx->env, "PM_BOT_LLM_PROVIDER", provider);
	env_set(&fx->env, "PM_BOT_LLM_URL", url);
	env_set(&fx->env, "PM_BOT_LLM_MODEL", model);
	if (key)
		env_set(&fx->env, "PM_BOT_LLM_API_KEY", key);
	assert_int_equal(pmbot_llm_config_from_getenv(&fx->cfg, fake_getenv, &fx->env, &fx->err), 0);
	fx->cfg.retry_base_ms = 100;
	fx->cfg.connect_timeout_ms = 2000;
	fx->cfg.timeout_ms = 5000;
	fx->cfg.sleep = fake_sleep;
	fx->cfg.sleep_payload = fx;
	assert_int_equal(pmbot_llm_client_new(&fx->c, &fx->cfg, &fx->err), 0);
	assert_int_equal(fx->err.len, 0);
}

static void openai_client(fixture *fx)
{
	client_at(fx, "openai", fx->base, "gpt-test", KEY);
}

static void anthropic_client(fixture *fx)
{
	client_at(fx, "anthropic", fx->base, "claude-test", KEY);
}

static void push(fixture *fx, int status, const char *headers, const char *body)
{
	assert_int_equal(fakehttp_push_simple(fx->srv, status, headers, body), 0);
}

static const char openai_ok[] =
	"{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
	"\"message\":{\"role\":\"assistant\",\"content\":\"Three issues.\"},"
	"\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3}}";

static int complete(fixture *fx)
{
	pmbot_buf_clear(&fx->err);
	return pmbot_llm_complete(&fx->text, fx->c, "You plan.", "Draft issues.", 0.2, 512,
		&fx->err);
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
}

static void assert_stats(fixture *fx, unsigned long requests, unsigned long retries,
	long long waited_ms, long last_status)
{
	pmbot_llm_stats st;

	pmbot_llm_client_stats(&st, fx->c);
	assert_int_equal(st.requests, requests);
	assert_int_equal(st.retries, retries);
	assert_int_equal(st.waited_ms, waited_ms);
	assert_int_equal(st.last_status, last_status);
}

/* --- configuration ------------------------------------------------------ */

static void test_llm_config__no_provider_is_not_found_with_a_clear_message(void **state)
{
	fixture *fx = *state;

	env_set(&fx->env, "PM_BOT_LLM_MODEL", "gpt-test");
	env_set(&fx->env, "PM_BOT_LLM_API_KEY", KEY);
	assert_int_equal(pmbot_llm_config_from_getenv(&fx->cfg, fake_getenv, &fx->env, &fx->err),
		PMBOT_ENOTFOUND);
	assert_contains(fx->err.buf, "no model provider is configured");
	assert_contains(fx->err.buf, "PM_BOT_LLM_PROVIDER");
	assert_int_equal(fx->cfg.provider, PMBOT_LLM_NONE);
}

static void test_llm_config__an_empty_provider_counts_as_unset(void **state)
{
	fixture *fx = *state;

	env_set(&fx->env, "PM_BOT_LLM_PROVIDER", "");
	assert_int_equal(pmbot_llm_config_from_getenv(&fx->cfg, fake_getenv, &fx->env, &fx->err),
		PMBOT_ENOTFOUND);
}

static void test_llm_config__rejects_an_unknown_provider_naming_the_accepted_ones(void **state)
{
	fixture *fx = *state;

	env_set(&fx->env, "PM_BOT_LLM_PROVIDER", "OpenAI");
	env_set(&fx->env, "PM_BOT_LLM_MODEL", "m");
	assert_int_equal(pmbot_llm_config_from_getenv(&fx->cfg, fake_getenv, &fx->env, &fx->err),
		PMBOT_EINVALID);
	assert_contains(fx->err.buf, "\"OpenAI\" is not a provider: use openai or anthropic");
}

static void test_llm_config__hosted_defaults_per_provider_need_a_key(void **state)
{
	fixture *fx = *state;

	env_set(&fx->env, "PM_BOT_LLM_PROVIDER", "openai");
	env_set(&fx->env, "PM_BOT_LLM_MODEL", "gpt-test");
	assert_int_equal(pmbot_llm_config_from_getenv(&fx->cfg, fake_getenv, &fx->env, &fx->err),
		PMBOT_EINVALID);
	assert_contains(fx->err.buf, "PM_BOT_LLM_API_KEY is not set: https://api.openai.com/v1");

	env_set(&fx->env, "PM_BOT_LLM_API_KEY", KEY);
	pmbot_llm_config_free(&fx->cfg);
	assert_int_equal(pmbot_llm_config_from_getenv(&fx->cfg, fake_getenv, &fx->env, NULL), 0);
	assert_int_equal(fx->cfg.provider, PMBOT_LLM_OPENAI);
	assert_string_equal(fx->cfg.url, PMBOT_LLM_DEFAULT_OPENAI_URL);
	assert_string_equal(fx->cfg.model, "gpt-test");
	assert_string_equal(fx->cfg.api_key, KEY);

	fx->env.value[0] = "anthropic";
	pmbot_llm_config_free(&fx->cfg);
	assert_int_equal(pmbot_llm_config_from_getenv(&fx->cfg, fake_getenv, &fx->env, NULL), 0);
	assert_int_equal(fx->cfg.provider, PMBOT_LLM_ANTHROPIC);
	assert_string_equal(fx->cfg.url, PMBOT_LLM_DEFAULT_ANTHROPIC_URL);
	assert_string_equal(pmbot_llm_provider_name(fx->cfg.provider), "anthropic");
}

static void test_llm_config__a_local_server_needs_no_key_and_loses_trailing_slashes(void **state)
{
	fixture *fx = *state;

	env_set(&fx->env, "PM_BOT_LLM_PROVIDER", "openai");
	env_set(&fx->env, "PM_BOT_LLM_URL", "http://localhost:11434/v1//");
	env_set(&fx->env, "PM_BOT_LLM_MODEL", "llama3.1");
	env_set(&fx->env, "PM_BOT_LLM_API_KEY", "");
	assert_int_equal(pmbot_llm_config_from_getenv(&fx->cfg, fake_getenv, &fx->env, &fx->err), 0);
	assert_string_equal(fx->cfg.url, "http://localhost:11434/v1");
	assert_null(fx->cfg.api_key);
	assert_int_equal(fx->err.len, 0);
}

static void test_llm_config__the_model_is_required(void **state)
{
	fixture *fx = *state;

	env_set(&fx->env, "PM_BOT_LLM_PROVIDER", "anthropic");
	env_set(&fx->env, "PM_BOT_LLM_API_KEY", KEY);
	assert_int_equal(pmbot_llm_config_from_getenv(&fx->cfg, fake_getenv, &fx->env, &fx->err),
		PMBOT_EINVALID);
	assert_contains(fx->err.buf, "PM_BOT_LLM_MODEL is not set");
}

static void test_llm_config__rejects_urls_with_credentials_query_or_other_schemes(void **state)
{
	fixture *fx = *state;
	static const char *const bad[] = {
		"https://user:hunter2pass@api.example.com/v1",
		"http://localhost:8080/v1?api-version=1",
		"ftp://localhost/v1",
		"http:///v1",
		"http://local host/v1",
	};
	size_t i;

	env_set(&fx->env, "PM_BOT_LLM_PROVIDER", "openai");
	env_set(&fx->env, "PM_BOT_LLM_MODEL", "m");
	env_set(&fx->env, "PM_BOT_LLM_URL", NULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fx->env.value[2] = bad[i];
		pmbot_buf_clear(&fx->err);
		pmbot_llm_config_free(&fx->cfg);
		assert_int_equal(pmbot_llm_config_from_getenv(&fx->cfg, fake_getenv, &fx->env,
			&fx->err), PMBOT_EINVALID);
		assert_contains(fx->err.buf, "PM_BOT_LLM_URL");
	}
	/* Credentials are never quoted, even when the URL is wrong otherwise too. */
	for (i = 0; i < 2; i++) {
		fx->env.value[2] = i ? "http://u:hunter2pass@h/v1?x=1#f" : bad[0];
		pmbot_buf_clear(&fx->err);
		pmbot_llm_config_free(&fx->cfg);
		assert_int_equal(pmbot_llm_config_from_getenv(&fx->cfg, fake_getenv, &fx->env,
			&fx->err), PMBOT_EINVALID);
		assert_contains(fx->err.buf, "must not hold credentials");
		assert_null(strstr(fx->err.buf, "hunter2pass"));
	}
}

static void test_llm_config__a_key_that_cannot_go_in_a_header_is_refused_unquoted(void **state)
{
	fixture *fx = *state;

	env_set(&fx->env, "PM_BOT_LLM_PROVIDER", "openai");
	env_set(&fx->env, "PM_BOT_LLM_MODEL", "m");
	env_set(&fx->env, "PM_BOT_LLM_API_KEY", "sk-secretpart\r\nX-Injected: 1");
	assert_int_equal(pmbot_llm_config_from_getenv(&fx->cfg, fake_getenv, &fx->env, &fx->err),
		PMBOT_EINVALID);
	assert_contains(fx->err.buf, "PM_BOT_LLM_API_KEY holds characters");
	assert_null(strstr(fx->err.buf, "secretpart"));
}

static void test_llm_config__client_new_checks_a_hand_made_config_too(void **state)
{
	fixture *fx = *state;
	pmbot_llm_config cfg;

	pmbot_llm_config_init(&cfg);
	assert_int_equal(pmbot_llm_client_new(&fx->c, &cfg, &fx->err), PMBOT_EINVALID);
	assert_null(fx->c);
	assert_contains(fx->err.buf, "no model provider is configured");

	cfg.provider = PMBOT_LLM_ANTHROPIC;
	cfg.url = strdup(PMBOT_LLM_DEFAULT_ANTHROPIC_URL);
	cfg.model = strdup("claude-test");
	assert_non_null(cfg.url);
	assert_non_null(cfg.model);
	pmbot_buf_clear(&fx->err);
	assert_int_equal(pmbot_llm_client_new(&fx->c, &cfg, &fx->err), PMBOT_EINVALID);
	assert_contains(fx->err.buf, "PM_BOT_LLM_API_KEY is not set");
	pmbot_llm_config_free(&cfg);
}

/* --- requests ----------------------------------------------------------- */

static void test_llm_openai__posts_chat_completions_with_bearer_and_canonical_body(void **state)
{
	fixture *fx = *state;
	const fakehttp_request *rq;

	openai_client(fx);
	push(fx, 200, "Content-Type: application/json\r\n", openai_ok);
	assert_int_equal(complete(fx), 0);
	assert_string_equal(fx->text.buf, "Three issues.");
	assert_string_equal(pmbot_llm_last_stop_reason(fx->c), "stop");

	assert_int_equal(fakehttp_count(fx->srv), 1);
	rq = fakehttp_get(fx->srv, 0);
	assert_string_equal(rq->method, "POST");
	assert_string_equal(rq->target, "/v1/chat/completions");
	assert_string_equal(fakehttp_header_value(rq, "Authorization"), "Bearer " KEY);
	assert_string_equal(fakehttp_header_value(rq, "Content-Type"), "application/json");
	assert_string_equal(fakehttp_header_value(rq, "Accept"), "application/json");
	assert_non_null(fakehttp_header_value(rq, "User-Agent"));
	assert_null(fakehttp_header_value(rq, "x-api-key"));
	assert_null(fakehttp_header_value(rq, "anthropic-version"));
	assert_null(fakehttp_header_value(rq, "Expect"));
	assert_string_equal(rq->body,
		"{\"max_tokens\":512,\"messages\":[{\"content\":\"You plan.\",\"role\":\"system\"},"
		"{\"content\":\"Draft issues.\",\"role\":\"user\"}],\"model\":\"gpt-test\","
		"\"temperature\":0.2}");
	assert_stats(fx, 1, 0, 0, 200);
}

static void test_llm_openai__a_local_server_gets_no_authorization_header(void **state)
{
	fixture *fx = *state;
	const fakehttp_request *rq;

	client_at(fx, "openai", fx->base, "llama3.1", NULL);
	push(fx, 200, NULL, openai_ok);
	/* No system prompt, and a negative temperature: both left out. */
	assert_int_equal(pmbot_llm_complete(&fx->text, fx->c, NULL, "hi", -1.0, 64, &fx->err), 0);
	assert_string_equal(fx->text.buf, "Three issues.");
	rq = fakehttp_get(fx->srv, 0);
	assert_null(fakehttp_header_value(rq, "Authorization"));
	assert_string_equal(rq->body,
		"{\"max_tokens\":64,\"messages\":[{\"content\":\"hi\",\"role\":\"user\"}],"
		"\"model\":\"llama3.1\"}");
}

static void test_llm_anthropic__posts_messages_with_api_key_and_version(void **state)
{
	fixture *fx = *state;
	const fakehttp_request *rq;

	anthropic_client(fx);
	push(fx, 200, NULL,
		"{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-test\","
		"\"content\":[{\"type\":\"thinking\",\"thinking\":\"hmm\",\"signature\":\"s\"},"
		"{\"type\":\"text\",\"text\":\"Hello, \"},"
		"{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"n\",\"input\":{\"text\":\"no\"}},"
		"{\"type\":\"text\",\"text\":\"world\"}],"
		"\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":5,\"output_tokens\":2}}");
	assert_int_equal(complete(fx), 0);
	assert_string_equal(fx->text.buf, "Hello, world");
	assert_string_equal(pmbot_llm_last_stop_reason(fx->c), "end_turn");

	rq = fakehttp_get(fx->srv, 0);
	assert_string_equal(rq->method, "POST");
	assert_string_equal(rq->target, "/v1/messages");
	assert_string_equal(fakehttp_header_value(rq, "x-api-key"), KEY);
	assert_string_equal(fakehttp_header_value(rq, "anthropic-version"), "2023-06-01");
	assert_string_equal(fakehttp_header_value(rq, "Content-Type"), "application/json");
	assert_null(fakehttp_header_value(rq, "Authorization"));
	assert_string_equal(rq->body,
		"{\"max_tokens\":512,\"messages\":[{\"content\":\"Draft issues.\",\"role\":\"user\"}],"
		"\"model\":\"claude-test\",\"system\":\"You plan.\",\"temperature\":0.2}");
}

static void test_llm_provider__reuses_the_connection_and_sends_the_same_bytes(void **state)
{
	fixture *fx = *state;
	const fakehttp_request *a, *b;

	openai_client(fx);
	push(fx, 200, NULL, openai_ok);
	push(fx, 200, NULL, openai_ok);
	assert_int_equal(complete(fx), 0);
	assert_int_equal(complete(fx), 0);
	a = fakehttp_get(fx->srv, 0);
	b = fakehttp_get(fx->srv, 1);
	assert_non_null(b);
	assert_int_equal(a->connection, b->connection);
	assert_int_equal(a->body_len, b->body_len);
	assert_memory_equal(a->body, b->body, a->body_len);
	assert_int_equal(a->n_headers, b->n_headers);
	assert_stats(fx, 2, 0, 0, 200);
}

static void test_llm_provider__bad_arguments_send_nothing(void **state)
{
	fixture *fx = *state;

	openai_client(fx);
	assert_int_equal(pmbot_llm_complete(&fx->text, fx->c, "s", NULL, 0.2, 10, &fx->err),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_llm_complete(&fx->text, fx->c, "s", "bad \xff utf-8", 0.2, 10,
		&fx->err), PMBOT_EINVALID);
	assert_int_equal(pmbot_llm_complete(&fx->text, fx->c, "\xc3(", "u", 0.2, 10, &fx->err),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_llm_complete(&fx->text, fx->c, "s", "u", NAN, 10, &fx->err),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_llm_complete(&fx->text, fx->c, "s", "u", 0.2, 0, &fx->err),
		PMBOT_EINVALID);
	assert_contains(fx->err.buf, "user message is not valid UTF-8");
	assert_contains(fx->err.buf, "system message is not valid UTF-8");
	assert_contains(fx->err.buf, "max_tokens must be positive");
	assert_int_equal(fakehttp_count(fx->srv), 0);
	assert_stats(fx, 0, 0, 0, 0);
}

/* --- answers without text ----------------------------------------------- */

static void test_llm_openai__an_answer_without_text_is_a_bad_response(void **state)
{
	fixture *fx = *state;
	static const char *const bodies[] = {
		"not json at all",
		"[]",
		"{}",
		"{\"choices\":[]}",
		"{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null}}]}",
		"{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"\"}}]}",
		"{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":42}}]}",
	};
	size_t i;

	openai_client(fx);
	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		push(fx, 200, NULL, bodies[i]);
	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		assert_int_equal(pmbot_buf_puts(&fx->text, "stale"), 0);
		assert_int_equal(complete(fx), PMBOT_LLM_EBADRESPONSE);
		assert_int_equal(fx->text.len, 0);
		assert_contains(fx->err.buf, "HTTP 200");
		assert_string_equal(pmbot_llm_last_stop_reason(fx->c), "");
	}
	/* Never retried: one request per call. */
	assert_int_equal(fakehttp_count(fx->srv), i);
	assert_stats(fx, i, 0, 0, 200);
}

static void test_llm_openai__a_refusal_is_reported_as_the_reason(void **state)
{
	fixture *fx = *state;

	openai_client(fx);
	push(fx, 200, NULL,
		"{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,"
		"\"refusal\":\"I cannot help with that.\"},\"finish_reason\":\"stop\"}]}");
	assert_int_equal(complete(fx), PMBOT_LLM_EBADRESPONSE);
	assert_contains(fx->err.buf, "the model refused: I cannot help with that.");
}

static void test_llm_anthropic__an_answer_without_a_text_block_is_a_bad_response(void **state)
{
	fixture *fx = *state;
	static const char *const bodies[] = {
		("{\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}],"
		 "\"stop_reason\":\"tool_use\"}"),
		"{\"content\":[],\"stop_reason\":\"end_turn\"}",
		"{\"content\":[{\"type\":\"text\",\"text\":\"\"}]}",
		"{\"type\":\"message\"}",
	};
	size_t i;

	anthropic_client(fx);
	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		push(fx, 200, NULL, bodies[i]);
	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		assert_int_equal(complete(fx), PMBOT_LLM_EBADRESPONSE);
		assert_contains(fx->err.buf, "no text block in content[]");
	}
	assert_int_equal(fakehttp_count(fx->srv), i);
}

static void test_llm_provider__a_text_cut_at_max_tokens_says_so(void **state)
{
	fixture *fx = *state;

	openai_client(fx);
	push(fx, 200, NULL,
		"{\"choices\":[{\"message\":{\"content\":\"{\\\"draft\\\":\"},"
		"\"finish_reason\":\"length\"}]}");
	assert_int_equal(complete(fx), 0);
	assert_string_equal(fx->text.buf, "{\"draft\":");
	assert_string_equal(pmbot_llm_last_stop_reason(fx->c), "length");
}

/* --- size ---------------------------------------------------------------- */

/* An OpenAI answer of exactly `total` bytes whose text is 'a's. */
static char *answer_of_size(size_t total, size_t *text_len)
{
	static const char pre[] = "{\"choices\":[{\"message\":{\"content\":\"";
	static const char post[] = "\"}}]}";
	size_t fixed = sizeof(pre) - 1 + sizeof(post) - 1;
	char *b = malloc(total + 1);

	assert_non_null(b);
	*text_len = total - fixed;
	memcpy(b, pre, sizeof(pre) - 1);
	memset(b + sizeof(pre) - 1, 'a', *text_len);
	memcpy(b + sizeof(pre) - 1 + *text_len, post, sizeof(post) - 1);
	b[total] = '\0';
	return b;
}

static void test_llm_provider__answers_up_to_4_mib_pass_and_larger_fail_unretried(void **state)
{
	fixture *fx = *state;
	fakehttp_response r;
	size_t text_len, over_len;
	char *fits = answer_of_size((size_t)4 << 20, &text_len);
	char *over = answer_of_size(((size_t)4 << 20) + 1, &over_len);

	openai_client(fx);
	memset(&r, 0, sizeof(r));
	r.status = 200;
	r.cut_after = -1;
	r.body = fits;
	r.body_len = (size_t)4 << 20;
	assert_int_equal(fakehttp_push(fx->srv, &r), 0);
	r.body = over;
	r.body_len = ((size_t)4 << 20) + 1;
	assert_int_equal(fakehttp_push(fx->srv, &r), 0);

	assert_int_equal(complete(fx), 0);
	assert_int_equal(fx->text.len, text_len);
	assert_int_equal(complete(fx), PMBOT_LLM_ETOOBIG);
	assert_contains(fx->err.buf, "the answer is larger than 4194304 bytes");
	assert_int_equal(fx->text.len, 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_int_equal(fakehttp_pending(fx->srv), 0);
	free(fits);
	free(over);
}

static void test_llm_provider__a_text_over_the_output_cap_is_too_big(void **state)
{
	fixture *fx = *state;
	pmbot_buf small;

	openai_client(fx);
	push(fx, 200, NULL, openai_ok);
	pmbot_buf_init(&small, 4);
	assert_int_equal(pmbot_llm_complete(&small, fx->c, NULL, "u", 0.0, 8, &fx->err),
		PMBOT_LLM_ETOOBIG);
	assert_int_equal(small.len, 0);
	assert_contains(fx->err.buf, "larger than the 4 bytes allowed");
	pmbot_buf_free(&small);
}

/* --- retries ------------------------------------------------------------ */

static void test_llm_retry__429_waits_retry_after_seconds_then_succeeds(void **state)
{
	fixture *fx = *state;

	anthropic_client(fx);
	push(fx, 429, "retry-after: 2\r\n",
		"{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}");
	push(fx, 200, NULL, "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}");
	assert_int_equal(complete(fx), 0);
	assert_string_equal(fx->text.buf, "ok");
	assert_int_equal(fx->n_waits, 1);
	assert_int_equal(fx->waits[0], 2000);
	assert_stats(fx, 2, 1, 2000, 200);
	/* The repeat is the same request. */
	assert_string_equal(fakehttp_get(fx->srv, 0)->body, fakehttp_get(fx->srv, 1)->body);
}

static void test_llm_retry__retry_after_ms_wins_over_retry_after(void **state)
{
	fixture *fx = *state;

	openai_client(fx);
	push(fx, 429, "retry-after: 2\r\nretry-after-ms: 1500\r\n", NULL);
	push(fx, 200, NULL, openai_ok);
	assert_int_equal(complete(fx), 0);
	assert_int_equal(fx->n_waits, 1);
	assert_int_equal(fx->waits[0], 1500);
}

/* A wait is never cut short: a fraction of a millisecond rounds up. */
static void test_llm_retry__a_fractional_wait_rounds_up(void **state)
{
	fixture *fx = *state;

	openai_client(fx);
	push(fx, 429, "retry-after-ms: 0.25\r\n", NULL);
	push(fx, 429, "retry-after: 1.0004\r\n", NULL);
	push(fx, 200, NULL, openai_ok);
	assert_int_equal(complete(fx), 0);
	assert_int_equal(fx->n_waits, 2);
	assert_int_equal(fx->waits[0], 1);
	assert_int_equal(fx->waits[1], 1001);
}

static void test_llm_retry__retry_after_is_capped_at_the_max_wait(void **state)
{
	fixture *fx = *state;

	openai_client(fx);
	push(fx, 503, "Retry-After: 3600\r\n", NULL);
	push(fx, 200, NULL, openai_ok);
	assert_int_equal(complete(fx), 0);
	assert_int_equal(fx->n_waits, 1);
	assert_int_equal(fx->waits[0], PMBOT_LLM_DEFAULT_MAX_WAIT_MS);
}

static void test_llm_retry__5xx_backs_off_doubling_and_gives_up_after_3_attempts(void **state)
{
	fixture *fx = *state;

	openai_client(fx);
	push(fx, 500, NULL, "{\"error\":{\"message\":\"internal\"}}");
	push(fx, 502, NULL, "bad gateway");
	push(fx, 503, NULL, "{\"error\":{\"message\":\"The engine is currently overloaded\"}}");
	push(fx, 200, NULL, openai_ok); /* never reached */
	assert_int_equal(complete(fx), PMBOT_LLM_EHTTP);
	assert_contains(fx->err.buf, "HTTP 503: The engine is currently overloaded (after 3 attempts)");
	assert_contains(fx->err.buf, "/v1/chat/completions");
	assert_int_equal(fx->n_waits, 2);
	assert_int_equal(fx->waits[0], 100);
	assert_int_equal(fx->waits[1], 200);
	assert_int_equal(fakehttp_pending(fx->srv), 1);
	assert_stats(fx, 3, 2, 300, 503);
}

static void test_llm_retry__504_is_retried(void **state)
{
	fixture *fx = *state;

	openai_client(fx);
	push(fx, 504, NULL, NULL);
	push(fx, 200, NULL, openai_ok);
	assert_int_equal(complete(fx), 0);
	assert_stats(fx, 2, 1, 100, 200);
}

static void test_llm_retry__the_attempt_count_is_configurable(void **state)
{
	fixture *fx = *state;

	env_set(&fx->env, "PM_BOT_LLM_PROVIDER", "openai");
	env_set(&fx->env, "PM_BOT_LLM_URL", fx->base);
	env_set(&fx->env, "PM_BOT_LLM_MODEL", "m");
	assert_int_equal(pmbot_llm_config_from_getenv(&fx->cfg, fake_getenv, &fx->env, NULL), 0);
	fx->cfg.max_attempts = 1;
	fx->cfg.sleep = fake_sleep;
	fx->cfg.sleep_payload = fx;
	assert_int_equal(pmbot_llm_client_new(&fx->c, &fx->cfg, NULL), 0);
	push(fx, 503, NULL, NULL);
	assert_int_equal(complete(fx), PMBOT_LLM_EHTTP);
	assert_contains(fx->err.buf, "HTTP 503 (after 1 attempt)");
	assert_stats(fx, 1, 0, 0, 503);
}

static void test_llm_retry__other_4xx_and_5xx_fail_at_once_with_the_providers_message(
	void **state)
{
	fixture *fx = *state;
	static const int statuses[] = { 400, 401, 403, 404, 422, 501 };
	char want[64];
	size_t i;

	anthropic_client(fx);
	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		push(fx, statuses[i], NULL,
			"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
			"\"message\":\"max_tokens: field required\"}}");
	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		assert_int_equal(complete(fx), PMBOT_LLM_EHTTP);
		snprintf(want, sizeof(want), "HTTP %d: max_tokens: field required (after 1 attempt)",
			statuses[i]);
		assert_contains(fx->err.buf, want);
	}
	assert_int_equal(fakehttp_count(fx->srv), i);
	assert_int_equal(fx->n_waits, 0);
}

static void test_llm_provider__never_follows_a_redirect(void **state)
{
	fixture *fx = *state;
	static const int statuses[] = { 301, 302, 307, 308 };
	fakehttp *other = NULL;
	char headers[256];
	size_t i;

	assert_int_equal(fakehttp_start(&other), 0);
	snprintf(headers, sizeof(headers), "Location: %s/v1/chat/completions\r\n",
		fakehttp_url(other));
	openai_client(fx);
	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		push(fx, statuses[i], headers, NULL);
		assert_true(complete(fx) < 0);
		assert_true(fx->err.len > 0);
	}
	/* The key and the prompt went to PM_BOT_LLM_URL only. */
	assert_int_equal(fakehttp_count(fx->srv), i);
	assert_int_equal(fakehttp_count(other), 0);
	fakehttp_stop(other);
}

static void test_llm_retry__ollama_and_plain_text_errors_are_quoted_escaped(void **state)
{
	fixture *fx = *state;

	client_at(fx, "openai", fx->base, "nosuchmodel", NULL);
	push(fx, 404, NULL, "{\"error\":\"model \\\"nosuchmodel\\\" not found, try pulling it first\"}");
	push(fx, 404, "Content-Type: text/plain\r\n", "404 page not found");
	push(fx, 400, NULL, "{\"error\":{\"message\":\"bad\\nerror: forged line\"}}");
	assert_int_equal(complete(fx), PMBOT_LLM_EHTTP);
	assert_contains(fx->err.buf, "HTTP 404: model \"nosuchmodel\" not found, try pulling it first");
	assert_int_equal(complete(fx), PMBOT_LLM_EHTTP);
	assert_contains(fx->err.buf, "HTTP 404: 404 page not found");
	assert_int_equal(complete(fx), PMBOT_LLM_EHTTP);
	assert_contains(fx->err.buf, "HTTP 400: bad\\x0aerror: forged line");
	assert_null(strchr(fx->err.buf, '\n'));
}

static void test_llm_retry__a_cut_off_answer_is_retried(void **state)
{
	fixture *fx = *state;
	fakehttp_response r;

	openai_client(fx);
	memset(&r, 0, sizeof(r));
	r.status = 200;
	r.body = openai_ok;
	r.cut_after = 10;
	assert_int_equal(fakehttp_push(fx->srv, &r), 0);
	push(fx, 200, NULL, openai_ok);
	assert_int_equal(complete(fx), 0);
	assert_string_equal(fx->text.buf, "Three issues.");
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_stats(fx, 2, 1, 100, 200);
}

static void test_llm_retry__a_timeout_is_retried(void **state)
{
	fixture *fx = *state;
	fakehttp_response r;

	openai_client(fx);
	pmbot_llm_client_free(fx->c);
	fx->c = NULL;
	fx->cfg.timeout_ms = 300;
	assert_int_equal(pmbot_llm_client_new(&fx->c, &fx->cfg, NULL), 0);
	memset(&r, 0, sizeof(r));
	r.status = 200;
	r.body = openai_ok;
	r.cut_after = -1;
	r.delay_ms = 5000;
	assert_int_equal(fakehttp_push(fx->srv, &r), 0);
	push(fx, 200, NULL, openai_ok);
	assert_int_equal(complete(fx), 0);
	assert_string_equal(fx->text.buf, "Three issues.");
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_stats(fx, 2, 1, 100, 200);
}

static void test_llm_retry__no_connection_is_a_transport_error_after_3_attempts(void **state)
{
	fixture *fx = *state;
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1", fakehttp_closed_port());
	client_at(fx, "anthropic", url, "claude-test", KEY);
	assert_int_equal(complete(fx), PMBOT_LLM_ETRANSPORT);
	assert_contains(fx->err.buf, "POST http://127.0.0.1:");
	assert_contains(fx->err.buf, "/v1/messages: ");
	assert_contains(fx->err.buf, "(after 3 attempts)");
	assert_int_equal(fx->n_waits, 2);
	assert_int_equal(fx->waits[0], 100);
	assert_int_equal(fx->waits[1], 200);
	assert_stats(fx, 3, 2, 300, 0);
}

/* --- the key ------------------------------------------------------------- */

static void test_llm_key__never_appears_in_errors_even_when_the_server_echoes_it(void **state)
{
	fixture *fx = *state;
	pmbot_buf all = PMBOT_BUF_INIT, body = PMBOT_BUF_INIT;
	size_t i;

	openai_client(fx);
	push(fx, 401, NULL, "{\"error\":{\"message\":\"Incorrect API key provided: " KEY ".\","
		"\"type\":\"invalid_request_error\",\"code\":\"invalid_api_key\"}}");
	/* The key straddles the cut of a quoted message: no prefix may survive. */
	for (i = 0; i < 290; i++)
		assert_int_equal(pmbot_buf_putc(&body, 'x'), 0);
	assert_int_equal(pmbot_buf_puts(&body, KEY), 0);
	push(fx, 403, NULL, body.buf);
	push(fx, 400, NULL, "Authorization: Bearer " KEY " rejected");
	push(fx, 200, NULL, "{\"choices\":[{\"message\":{\"content\":null,\"refusal\":\"" KEY "\"}}]}");
	push(fx, 200, NULL, "{\"error\":{\"message\":\"proxy says " KEY "\"}}");
	for (i = 0; i < 5; i++) {
		assert_true(complete(fx) < 0);
		assert_int_equal(pmbot_buf_puts(&all, fx->err.buf), 0);
		assert_int_equal(pmbot_buf_putc(&all, '\n'), 0);
	}
	assert_null(strstr(all.buf, KEY_PREFIX));
	assert_null(strstr(all.buf, "sk-test"));
	assert_contains(all.buf, "Incorrect API key provided: [REDACTED].");
	assert_contains(all.buf, "the model refused: [REDACTED]");
	assert_contains(all.buf, "proxy says [REDACTED]");
	pmbot_buf_free(&all);
	pmbot_buf_free(&body);
}

static void test_llm_key__an_anthropic_key_echo_is_scrubbed_too(void **state)
{
	fixture *fx = *state;

	anthropic_client(fx);
	push(fx, 401, NULL, "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\","
		"\"message\":\"invalid x-api-key " KEY "\"}}");
	assert_int_equal(complete(fx), PMBOT_LLM_EHTTP);
	assert_contains(fx->err.buf, "HTTP 401: invalid x-api-key [REDACTED]");
	assert_null(strstr(fx->err.buf, KEY_PREFIX));
}

/* KEY is "sk-test-S3cr3tK3yForLLMTests0123456789". */
static void test_llm_key__a_prefix_a_middle_and_the_whole_key_are_scrubbed(void **state)
{
	fixture *fx = *state;
	pmbot_buf all = PMBOT_BUF_INIT;
	size_t i;

	openai_client(fx);
	/* A provider echoing the first 20 characters, as OpenAI's "sk-abc...xyz" does. */
	push(fx, 401, NULL, "{\"error\":{\"message\":\"Incorrect API key provided: "
		"sk-test-S3cr3tK3yFor***6789.\"}}");
	push(fx, 401, NULL, "{\"error\":{\"message\":\"key part K3yForLLMTests01 revoked\"}}");
	push(fx, 401, NULL, "{\"error\":{\"message\":\"key=" KEY KEY " twice, glued\"}}");
	/* 8 characters are enough: the last 8 of the key. */
	push(fx, 401, NULL, "{\"error\":{\"message\":\"ends in 23456789\"}}");
	for (i = 0; i < 4; i++) {
		assert_true(complete(fx) < 0);
		assert_int_equal(pmbot_buf_puts(&all, fx->err.buf), 0);
		assert_int_equal(pmbot_buf_putc(&all, '\n'), 0);
	}
	/* The 4 characters after the stars are shorter than 8: they stay. */
	assert_contains(all.buf, "Incorrect API key provided: [REDACTED]***6789.");
	assert_contains(all.buf, "key part [REDACTED] revoked");
	assert_contains(all.buf, "key=[REDACTED] twice, glued");
	assert_contains(all.buf, "ends in [REDACTED]");
	assert_null(strstr(all.buf, "S3cr3tK3y"));
	assert_null(strstr(all.buf, "LLMTests"));
	assert_null(strstr(all.buf, "3456789"));
	pmbot_buf_free(&all);
}

/*
 * The choice documented in net.h (pmbot_net_redact): fragments of 7 characters stay, so
 * ordinary words that share a few letters with the key remain readable.
 */
static void test_llm_key__fragments_shorter_than_8_stay_readable(void **state)
{
	fixture *fx = *state;

	openai_client(fx);
	push(fx, 400, NULL, "{\"error\":{\"message\":\"sk-test keys are for tests; S3cr3tK "
		"and 0123456 are not the key\"}}");
	assert_true(complete(fx) < 0);
	assert_contains(fx->err.buf, "sk-test keys are for tests; S3cr3tK and 0123456 are not the key");
	assert_null(strstr(fx->err.buf, "[REDACTED]"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_llm_config__no_provider_is_not_found_with_a_clear_message),
		T(test_llm_config__an_empty_provider_counts_as_unset),
		T(test_llm_config__rejects_an_unknown_provider_naming_the_accepted_ones),
		T(test_llm_config__hosted_defaults_per_provider_need_a_key),
		T(test_llm_config__a_local_server_needs_no_key_and_loses_trailing_slashes),
		T(test_llm_config__the_model_is_required),
		T(test_llm_config__rejects_urls_with_credentials_query_or_other_schemes),
		T(test_llm_config__a_key_that_cannot_go_in_a_header_is_refused_unquoted),
		T(test_llm_config__client_new_checks_a_hand_made_config_too),
		T(test_llm_openai__posts_chat_completions_with_bearer_and_canonical_body),
		T(test_llm_openai__a_local_server_gets_no_authorization_header),
		T(test_llm_anthropic__posts_messages_with_api_key_and_version),
		T(test_llm_provider__reuses_the_connection_and_sends_the_same_bytes),
		T(test_llm_provider__bad_arguments_send_nothing),
		T(test_llm_openai__an_answer_without_text_is_a_bad_response),
		T(test_llm_openai__a_refusal_is_reported_as_the_reason),
		T(test_llm_anthropic__an_answer_without_a_text_block_is_a_bad_response),
		T(test_llm_provider__a_text_cut_at_max_tokens_says_so),
		T(test_llm_provider__answers_up_to_4_mib_pass_and_larger_fail_unretried),
		T(test_llm_provider__a_text_over_the_output_cap_is_too_big),
		T(test_llm_retry__429_waits_retry_after_seconds_then_succeeds),
		T(test_llm_retry__retry_after_ms_wins_over_retry_after),
		T(test_llm_retry__a_fractional_wait_rounds_up),
		T(test_llm_retry__retry_after_is_capped_at_the_max_wait),
		T(test_llm_retry__5xx_backs_off_doubling_and_gives_up_after_3_attempts),
		T(test_llm_retry__504_is_retried),
		T(test_llm_retry__the_attempt_count_is_configurable),
		T(test_llm_retry__other_4xx_and_5xx_fail_at_once_with_the_providers_message),
		T(test_llm_provider__never_follows_a_redirect),
		T(test_llm_retry__ollama_and_plain_text_errors_are_quoted_escaped),
		T(test_llm_retry__a_cut_off_answer_is_retried),
		T(test_llm_retry__a_timeout_is_retried),
		T(test_llm_retry__no_connection_is_a_transport_error_after_3_attempts),
		T(test_llm_key__never_appears_in_errors_even_when_the_server_echoes_it),
		T(test_llm_key__an_anthropic_key_echo_is_scrubbed_too),
		T(test_llm_key__a_prefix_a_middle_and_the_whole_key_are_scrubbed),
		T(test_llm_key__fragments_shorter_than_8_stay_readable),
#undef T
	};
	int rc;

	if (pmbot_net_global_init(NULL) < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	pmbot_net_global_cleanup();
	return rc;
}
