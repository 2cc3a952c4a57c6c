#include "pmbot/llm.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmbot/diag.h"
#include "pmbot/json.h"
#include "pmbot/net.h"
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

#ifndef PMBOT_VERSION
#define PMBOT_VERSION "0.0.0"
#endif

/* How much of a provider's own error message an error repeats. */
#define SHOW_MAX 300

struct pmbot_llm_client {
	pmbot_net *net;
	pmbot_llm_provider provider;
	char *endpoint;     /* base URL + "/chat/completions" or "/messages" */
	char *model;
	char *api_key;      /* NULL: none */
	char *auth_header;  /* the header carrying the key, or NULL */
	long connect_timeout_ms;
	long timeout_ms;
	size_t max_response;
	int max_attempts;
	long retry_base_ms;
	long long max_wait_ms;
	pmbot_llm_sleep_fn sleep;
	void *sleep_payload;
	pmbot_llm_stats stats;
	pmbot_buf stop_reason;
};

/* What one attempt brought back. */
typedef struct {
	pmbot_buf body;
	long long retry_after_ms; /* -1: the answer named no wait */
	int too_big;
} exchange;

const char *pmbot_llm_provider_name(pmbot_llm_provider p)
{
	switch (p) {
	case PMBOT_LLM_OPENAI: return "openai";
	case PMBOT_LLM_ANTHROPIC: return "anthropic";
	default: return "none";
	}
}

void pmbot_llm_config_init(pmbot_llm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->connect_timeout_ms = PMBOT_LLM_DEFAULT_CONNECT_TIMEOUT_MS;
	cfg->timeout_ms = PMBOT_LLM_DEFAULT_TIMEOUT_MS;
	cfg->max_response = PMBOT_LLM_DEFAULT_MAX_RESPONSE;
	cfg->max_attempts = PMBOT_LLM_DEFAULT_MAX_ATTEMPTS;
	cfg->retry_base_ms = PMBOT_LLM_DEFAULT_RETRY_BASE_MS;
	cfg->max_wait_ms = PMBOT_LLM_DEFAULT_MAX_WAIT_MS;
}

void pmbot_llm_config_free(pmbot_llm_config *cfg)
{
	free(cfg->url);
	free(cfg->model);
	pmbot_net_wipe_free(cfg->api_key);
	pmbot_llm_config_init(cfg);
}

/* The base URL, normalised (pmbot_net_base_url), or why not in words. */
static int copy_base_url(char **out, const char **host_out, size_t *host_len,
	const char *url, pmbot_buf *err)
{
	pmbot_buf show = PMBOT_BUF_INIT;
	int why, rc = pmbot_net_base_url(out, host_out, host_len, &why, url);

	if (rc == PMBOT_EINVALID && why == PMBOT_NET_URL_CREDENTIALS)
		pmbot_buf_note(err, "PM_BOT_LLM_URL must not hold credentials; use PM_BOT_LLM_API_KEY");
	else if (rc == PMBOT_EINVALID)
		pmbot_buf_note(err, "PM_BOT_LLM_URL \"%s\" is not an http(s) base URL without query "
			"(e.g. http://localhost:11434/v1)", pmbot_diag_show(&show, url, 200));
	pmbot_buf_free(&show);
	return rc;
}

/* The provider's own hosted API, where a request without a key cannot succeed. */
static int is_hosted(const char *host, size_t len)
{
	static const char *const hosts[] = { "api.openai.com", "api.anthropic.com" };
	size_t i;

	for (i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		size_t n = strlen(hosts[i]);

		if ((len == n || (len > n && host[n] == ':')) && !strncasecmp(host, hosts[i], n))
			return 1;
	}
	return 0;
}

/*
 * Check the strings of a config and copy the normalised URL into `*url_out`
 * (owned by the caller). Shared by the env reader and client_new, so a
 * hand-made config passes the same gate.
 */
static int check_config(char **url_out, const pmbot_llm_config *cfg, pmbot_buf *err)
{
	const char *host = NULL;
	size_t host_len = 0;
	int rc;

	*url_out = NULL;
	if (cfg->provider != PMBOT_LLM_OPENAI && cfg->provider != PMBOT_LLM_ANTHROPIC) {
		pmbot_buf_note(err, "no model provider is configured: set PM_BOT_LLM_PROVIDER to "
			"openai or anthropic");
		return PMBOT_EINVALID;
	}
	if (!cfg->url) {
		pmbot_buf_note(err, "no URL for the %s provider", pmbot_llm_provider_name(cfg->provider));
		return PMBOT_EINVALID;
	}
	if ((rc = copy_base_url(url_out, &host, &host_len, cfg->url, err)) < 0)
		return rc;
	rc = PMBOT_EINVALID;
	if (!cfg->model || !*cfg->model) {
		pmbot_buf_note(err, "PM_BOT_LLM_MODEL is not set: name the model to use "
			"(e.g. gpt-4o-mini, claude-sonnet-4-5, llama3.1)");
		goto done;
	}
	if (!pmbot_utf8_valid(cfg->model, strlen(cfg->model), NULL, NULL, NULL)) {
		pmbot_buf_note(err, "PM_BOT_LLM_MODEL is not valid UTF-8");
		goto done;
	}
	if (cfg->api_key && *cfg->api_key) {
		/* Said without the key: the message may end up in a CI log. */
		if (!pmbot_net_is_token(cfg->api_key)) {
			pmbot_buf_note(err, "PM_BOT_LLM_API_KEY holds characters that cannot go in an "
				"HTTP header (spaces, control characters or non-ASCII)");
			goto done;
		}
	} else if (is_hosted(host, host_len)) {
		pmbot_buf_note(err, "PM_BOT_LLM_API_KEY is not set: %s needs an API key (only a local "
			"server set with PM_BOT_LLM_URL may go without)", *url_out);
		goto done;
	}
	rc = 0;
done:
	if (rc < 0) {
		free(*url_out);
		*url_out = NULL;
	}
	return rc;
}

static const char *real_getenv(void *payload, const char *name)
{
	(void)payload;
	return getenv(name);
}

static const char *env_value(pmbot_llm_getenv_fn fn, void *payload, const char *name)
{
	const char *v = fn(payload, name);

	return v && *v ? v : NULL;
}

int pmbot_llm_config_from_getenv(pmbot_llm_config *out, pmbot_llm_getenv_fn getenv_fn,
	void *payload, pmbot_buf *err)
{
	pmbot_buf show = PMBOT_BUF_INIT;
	const char *provider, *url, *model, *key;
	char *normal = NULL;
	int rc = PMBOT_EINVALID;

	pmbot_llm_config_init(out);
	if (!getenv_fn)
		getenv_fn = real_getenv;
	if (!(provider = env_value(getenv_fn, payload, "PM_BOT_LLM_PROVIDER"))) {
		pmbot_buf_note(err, "no model provider is configured: set PM_BOT_LLM_PROVIDER to openai "
			"(or any OpenAI-compatible server such as Ollama or llama.cpp, with "
			"PM_BOT_LLM_URL) or anthropic, and PM_BOT_LLM_MODEL");
		rc = PMBOT_ENOTFOUND;
		goto done;
	}
	if (!strcmp(provider, "openai")) {
		out->provider = PMBOT_LLM_OPENAI;
	} else if (!strcmp(provider, "anthropic")) {
		out->provider = PMBOT_LLM_ANTHROPIC;
	} else {
		pmbot_buf_note(err, "PM_BOT_LLM_PROVIDER \"%s\" is not a provider: use openai or anthropic",
			pmbot_diag_show(&show, provider, 60));
		goto done;
	}
	url = env_value(getenv_fn, payload, "PM_BOT_LLM_URL");
	if (!url)
		url = out->provider == PMBOT_LLM_OPENAI ? PMBOT_LLM_DEFAULT_OPENAI_URL
			: PMBOT_LLM_DEFAULT_ANTHROPIC_URL;
	model = env_value(getenv_fn, payload, "PM_BOT_LLM_MODEL");
	key = env_value(getenv_fn, payload, "PM_BOT_LLM_API_KEY");
	rc = PMBOT_ERROR;
	if (!(out->url = strdup(url)) || (model && !(out->model = strdup(model))) ||
	    (key && !(out->api_key = strdup(key)))) {
		pmbot_buf_note(err, "out of memory");
		goto done;
	}
	if ((rc = check_config(&normal, out, err)) < 0) {
		if (rc == PMBOT_ERROR && err && !err->len)
			pmbot_buf_note(err, "out of memory");
		goto done;
	}
	free(out->url);
	out->url = normal;
	normal = NULL;
done:
	free(normal);
	pmbot_buf_free(&show);
	return rc;
}

int pmbot_llm_config_from_env(pmbot_llm_config *out, pmbot_buf *err)
{
	return pmbot_llm_config_from_getenv(out, NULL, NULL, err);
}

int pmbot_llm_client_new(pmbot_llm_client **out, const pmbot_llm_config *cfg, pmbot_buf *err)
{
	pmbot_llm_client *c = NULL;
	pmbot_buf b = PMBOT_BUF_INIT;
	char *base = NULL;
	int rc;

	*out = NULL;
	if ((rc = check_config(&base, cfg, err)) < 0)
		goto done;
	rc = PMBOT_ERROR;
	if (!(c = calloc(1, sizeof(*c))))
		goto done;
	pmbot_buf_init(&c->stop_reason, 256);
	c->provider = cfg->provider;
	if (pmbot_buf_printf(&b, "%s%s", base, c->provider == PMBOT_LLM_OPENAI
		    ? "/chat/completions" : "/messages") < 0 ||
	    !(c->endpoint = pmbot_buf_detach(&b, NULL)) || !(c->model = strdup(cfg->model)))
		goto done;
	if (cfg->api_key && *cfg->api_key) {
		if (!(c->api_key = strdup(cfg->api_key)) ||
		    pmbot_buf_printf(&b, c->provider == PMBOT_LLM_OPENAI
			    ? "Authorization: Bearer %s" : "x-api-key: %s", cfg->api_key) < 0 ||
		    !(c->auth_header = pmbot_buf_detach(&b, NULL)))
			goto done;
	}
	c->connect_timeout_ms = cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms
		: PMBOT_LLM_DEFAULT_CONNECT_TIMEOUT_MS;
	c->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : PMBOT_LLM_DEFAULT_TIMEOUT_MS;
	c->max_response = cfg->max_response > 0 ? cfg->max_response
		: PMBOT_LLM_DEFAULT_MAX_RESPONSE;
	c->max_attempts = cfg->max_attempts > 0 ? cfg->max_attempts
		: PMBOT_LLM_DEFAULT_MAX_ATTEMPTS;
	c->retry_base_ms = cfg->retry_base_ms > 0 ? cfg->retry_base_ms
		: PMBOT_LLM_DEFAULT_RETRY_BASE_MS;
	c->max_wait_ms = cfg->max_wait_ms > 0 ? cfg->max_wait_ms : PMBOT_LLM_DEFAULT_MAX_WAIT_MS;
	c->sleep = cfg->sleep ? cfg->sleep : pmbot_net_sleep_ms;
	c->sleep_payload = cfg->sleep_payload;
	if (pmbot_net_new(&c->net, err) < 0)
		goto done;
	*out = c;
	c = NULL;
	rc = 0;
done:
	if (rc == PMBOT_ERROR && err && !err->len)
		pmbot_buf_note(err, "out of memory");
	/* `b` may hold the auth header when detaching failed. */
	if (b.len)
		memset(b.buf, 0, b.len);
	pmbot_buf_free(&b);
	free(base);
	pmbot_llm_client_free(c);
	return rc;
}

void pmbot_llm_client_free(pmbot_llm_client *c)
{
	if (!c)
		return;
	pmbot_net_free(c->net);
	free(c->endpoint);
	free(c->model);
	pmbot_net_wipe_free(c->api_key);
	pmbot_net_wipe_free(c->auth_header);
	pmbot_buf_free(&c->stop_reason);
	free(c);
}

void pmbot_llm_client_stats(pmbot_llm_stats *out, const pmbot_llm_client *c)
{
	*out = c->stats;
}

const char *pmbot_llm_last_stop_reason(const pmbot_llm_client *c)
{
	return c->stop_reason.buf;
}

static void fail(const pmbot_llm_client *c, pmbot_buf *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Append "POST <endpoint>: <reason>" to `err`, without the key. */
static void fail(const pmbot_llm_client *c, pmbot_buf *err, const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	va_list ap;
	int e;

	if (!err)
		return;
	va_start(ap, fmt);
	e = pmbot_buf_printf(&msg, "POST %s: ", c->endpoint) < 0 ||
	    pmbot_buf_vprintf(&msg, fmt, ap) < 0;
	va_end(ap);
	if (e) {
		pmbot_buf_clear(&msg);
		pmbot_buf_puts(&msg, "out of memory");
	}
	pmbot_net_redact(&msg, c->api_key);
	pmbot_buf_put(err, msg.buf, msg.len);
	pmbot_buf_free(&msg);
}

/*
 * The provider's explanation of a failed request, ready to quote: the key
 * scrubbed out of the whole text BEFORE it is shortened (a cut could leave
 * a prefix of the key that no longer matches), then control characters
 * escaped so it cannot forge lines. Writes into `out` (cleared first).
 */
static void provider_message(pmbot_buf *out, const pmbot_llm_client *c, const pmbot_buf *body,
	const json_t *doc)
{
	pmbot_buf raw = PMBOT_BUF_INIT, show = PMBOT_BUF_INIT;
	const json_t *error = json_object_get(doc, "error");
	const char *msg = NULL;

	pmbot_buf_clear(out);
	/* OpenAI, Anthropic, llama.cpp: {"error":{"message"}}; Ollama: {"error":"..."}. */
	if (json_is_string(json_object_get(error, "message")))
		msg = json_string_value(json_object_get(error, "message"));
	else if (json_is_string(error))
		msg = json_string_value(error);
	else if (json_is_string(json_object_get(doc, "message")))
		msg = json_string_value(json_object_get(doc, "message"));
	else if (json_is_string(json_object_get(doc, "detail")))
		msg = json_string_value(json_object_get(doc, "detail"));
	if (pmbot_buf_puts(&raw, msg ? msg : body->buf) < 0)
		goto done;
	pmbot_net_redact(&raw, c->api_key);
	if (raw.len)
		pmbot_buf_printf(out, ": %s", pmbot_diag_show(&show, raw.buf, SHOW_MAX));
done:
	pmbot_buf_free(&raw);
	pmbot_buf_free(&show);
}

/* A wait in milliseconds from "<number>" scaled by `unit_ms`; -1 when not one. */
static long long parse_wait(const char *v, size_t len, double unit_ms)
{
	char tmp[32], *end;
	double d;

	if (!len || len >= sizeof(tmp) || !(*v >= '0' && *v <= '9'))
		return -1;
	memcpy(tmp, v, len);
	tmp[len] = '\0';
	errno = 0;
	d = strtod(tmp, &end);
	if (errno || *end || !isfinite(d) || d < 0)
		return -1;
	d *= unit_ms;
	/* Anything this long is capped by max_wait_ms anyway. */
	if (d > 1e15)
		return (long long)1e15;
	/* Rounded up, by hand: below 2^53 the cast is exact, and libm is not linked. */
	return (long long)d + ((double)(long long)d < d);
}

static int on_header(void *payload, const char *line, size_t len)
{
	exchange *x = payload;
	const char *v;
	size_t vlen;
	long long w;

	/* A new status line (100 Continue): earlier headers are void. */
	if (len >= 5 && !memcmp(line, "HTTP/", 5)) {
		x->retry_after_ms = -1;
		return 0;
	}
	/* retry-after-ms (OpenAI) is more precise, so it wins over retry-after. */
	if (pmbot_net_header_is(&v, &vlen, line, len, "retry-after-ms")) {
		if ((w = parse_wait(v, vlen, 1.0)) >= 0)
			x->retry_after_ms = w;
	} else if (pmbot_net_header_is(&v, &vlen, line, len, "retry-after")) {
		if (x->retry_after_ms < 0 && (w = parse_wait(v, vlen, 1000.0)) >= 0)
			x->retry_after_ms = w;
	}
	return 0;
}

/*
 * One attempt. Redirects are not followed: the key goes to the configured
 * URL only.
 */
static CURLcode perform(pmbot_llm_client *c, const pmbot_buf *payload, exchange *x,
	long *status)
{
	/* Expect: off, or curl waits for 100-continue on a long prompt. */
	const char *headers[6] = {
		"Content-Type: application/json", "Accept: application/json", "Expect:",
	};
	size_t n = 3;
	const pmbot_net_request rq = {
		.method = "POST", .url = c->endpoint, .headers = headers,
		.user_agent = "pm-bot/" PMBOT_VERSION, .body = payload->buf,
		.body_len = payload->len, .connect_timeout_ms = c->connect_timeout_ms,
		.timeout_ms = c->timeout_ms, .on_header = on_header, .header_payload = x,
	};
	pmbot_net_response resp;
	CURLcode cc;

	if (c->auth_header)
		headers[n++] = c->auth_header;
	if (c->provider == PMBOT_LLM_ANTHROPIC)
		headers[n++] = "anthropic-version: " PMBOT_LLM_ANTHROPIC_VERSION;
	headers[n] = NULL;
	x->retry_after_ms = -1;
	cc = pmbot_net_perform(&resp, &x->body, c->net, &rq);
	*status = resp.status;
	x->too_big = resp.too_big;
	return cc;
}

/* Overloaded or rate limited: the provider did no work and asks for patience. */
static int status_retryable(long status)
{
	return status == 429 || status == 500 || status == 502 || status == 503 ||
	       status == 504;
}

/* The wait before attempt `attempt + 1`, capped at max_wait_ms. */
static long long retry_wait(const pmbot_llm_client *c, const exchange *x, int attempt)
{
	if (x->retry_after_ms >= 0)
		return x->retry_after_ms > c->max_wait_ms ? c->max_wait_ms : x->retry_after_ms;
	return pmbot_net_backoff(c->retry_base_ms, attempt - 1, c->max_wait_ms);
}

static int build_body(pmbot_buf *out, const pmbot_llm_client *c, const char *system,
	const char *user, double temperature, long max_tokens)
{
	json_t *doc = NULL, *messages = NULL, *m;
	int has_system = system && *system;
	int rc = PMBOT_ERROR;

	if (!(doc = json_object()) || !(messages = json_array()))
		goto done;
	if (json_object_set_new(doc, "model", json_string(c->model)) < 0 ||
	    json_object_set_new(doc, "max_tokens", json_integer(max_tokens)) < 0 ||
	    (temperature >= 0 &&
	     json_object_set_new(doc, "temperature", json_real(temperature)) < 0))
		goto done;
	if (has_system && c->provider == PMBOT_LLM_ANTHROPIC &&
	    json_object_set_new(doc, "system", json_string(system)) < 0)
		goto done;
	if (has_system && c->provider == PMBOT_LLM_OPENAI &&
	    (!(m = json_pack("{s:s, s:s}", "role", "system", "content", system)) ||
	     json_array_append_new(messages, m) < 0))
		goto done;
	if (!(m = json_pack("{s:s, s:s}", "role", "user", "content", user)) ||
	    json_array_append_new(messages, m) < 0)
		goto done;
	rc = json_object_set_new(doc, "messages", messages);
	messages = NULL;
	if (rc < 0) {
		rc = PMBOT_ERROR;
		goto done;
	}
	rc = pmbot_json_canonical(out, doc) < 0 ? PMBOT_ERROR : 0;
done:
	json_decref(messages);
	json_decref(doc);
	return rc;
}

static int set_stop_reason(pmbot_llm_client *c, const json_t *v)
{
	if (!json_is_string(v))
		return 0;
	return pmbot_buf_puts(&c->stop_reason, json_string_value(v)) == PMBOT_ERROR
		? PMBOT_ERROR : 0;
}

static int put_text(pmbot_buf *out, const json_t *s)
{
	int e = pmbot_buf_put(out, json_string_value(s), json_string_length(s));

	return e == PMBOT_ETOOBIG ? PMBOT_LLM_ETOOBIG : e < 0 ? PMBOT_ERROR : 0;
}

/*
 * The model's text from a 2xx answer. 0, or PMBOT_LLM_EBADRESPONSE with
 * `why` saying what was missing.
 */
static int extract_text(pmbot_buf *text, pmbot_llm_client *c, const json_t *doc,
	pmbot_buf *why)
{
	pmbot_buf show = PMBOT_BUF_INIT;
	int rc = PMBOT_LLM_EBADRESPONSE;

	if (c->provider == PMBOT_LLM_OPENAI) {
		const json_t *choice = json_array_get(json_object_get(doc, "choices"), 0);
		const json_t *msg = json_object_get(choice, "message");
		const json_t *content = json_object_get(msg, "content");
		const json_t *refusal = json_object_get(msg, "refusal");

		if ((rc = set_stop_reason(c, json_object_get(choice, "finish_reason"))) < 0)
			goto done;
		rc = PMBOT_LLM_EBADRESPONSE;
		if (json_is_string(content) && json_string_length(content)) {
			rc = put_text(text, content);
		} else if (json_is_string(refusal)) {
			pmbot_buf raw = PMBOT_BUF_INIT;

			pmbot_buf_puts(&raw, json_string_value(refusal));
			pmbot_net_redact(&raw, c->api_key);
			pmbot_buf_printf(why, "the model refused: %s",
				pmbot_diag_show(&show, raw.buf, SHOW_MAX));
			pmbot_buf_free(&raw);
		} else {
			pmbot_buf_puts(why, "the answer holds no text at choices[0].message.content");
		}
	} else {
		const json_t *content = json_object_get(doc, "content"), *block;
		size_t i;

		if ((rc = set_stop_reason(c, json_object_get(doc, "stop_reason"))) < 0)
			goto done;
		json_array_foreach(content, i, block) {
			const json_t *t = json_object_get(block, "text");
			const char *type = json_string_value(json_object_get(block, "type"));

			if (type && !strcmp(type, "text") && json_is_string(t) &&
			    (rc = put_text(text, t)) < 0)
				goto done;
		}
		rc = 0;
		if (!text->len) {
			rc = PMBOT_LLM_EBADRESPONSE;
			pmbot_buf_puts(why, "the answer holds no text block in content[]");
		}
	}
done:
	pmbot_buf_free(&show);
	return rc;
}

/* A complete 2xx answer: its text, or why there is none. */
static int after_success(pmbot_buf *text, pmbot_llm_client *c, const exchange *x, long status,
	pmbot_buf *err)
{
	pmbot_buf why = PMBOT_BUF_INIT, quoted = PMBOT_BUF_INIT;
	json_error_t jerr;
	json_t *doc = json_loadb(x->body.buf, x->body.len, 0, &jerr);
	int rc;

	if (!doc) {
		rc = PMBOT_LLM_EBADRESPONSE;
		fail(c, err, "HTTP %ld with a body that is not JSON", status);
		goto done;
	}
	if ((rc = extract_text(text, c, doc, &why)) == PMBOT_LLM_EBADRESPONSE) {
		/* Some proxies answer 200 with an error document. */
		provider_message(&quoted, c, &x->body, doc);
		fail(c, err, "HTTP %ld, but %s%s", status, why.buf,
			json_object_get(doc, "error") ? quoted.buf : "");
	} else if (rc == PMBOT_LLM_ETOOBIG) {
		fail(c, err, "the model's text is larger than the %zu bytes allowed for it",
			text->max);
	}
done:
	if (rc < 0)
		pmbot_buf_clear(text);
	json_decref(doc);
	pmbot_buf_free(&why);
	pmbot_buf_free(&quoted);
	return rc;
}

static void before_retry(pmbot_llm_client *c, long long ms)
{
	c->stats.retries++;
	if (ms <= 0)
		return;
	c->stats.waited_ms += ms;
	c->sleep(c->sleep_payload, ms);
}

/* A final non-2xx answer: its status and the provider's own words. */
static void http_failure(const pmbot_llm_client *c, const exchange *x, long status, int attempts,
	pmbot_buf *err)
{
	pmbot_buf quoted = PMBOT_BUF_INIT;
	json_error_t jerr;
	json_t *doc = json_loadb(x->body.buf, x->body.len, 0, &jerr);

	provider_message(&quoted, c, &x->body, doc);
	fail(c, err, "HTTP %ld%s (after %d attempt%s)", status, quoted.buf, attempts,
		attempts == 1 ? "" : "s");
	json_decref(doc);
	pmbot_buf_free(&quoted);
}

static int check_args(const pmbot_llm_client *c, const char *system, const char *user,
	double temperature, long max_tokens, pmbot_buf *err)
{
	if (!user) {
		fail(c, err, "no user message");
		return PMBOT_EINVALID;
	}
	if (!pmbot_utf8_valid(user, strlen(user), NULL, NULL, NULL) ||
	    (system && !pmbot_utf8_valid(system, strlen(system), NULL, NULL, NULL))) {
		fail(c, err, "the %s message is not valid UTF-8",
			pmbot_utf8_valid(user, strlen(user), NULL, NULL, NULL) ? "system" : "user");
		return PMBOT_EINVALID;
	}
	if (!isfinite(temperature)) {
		fail(c, err, "the temperature must be a finite number");
		return PMBOT_EINVALID;
	}
	if (max_tokens <= 0) {
		fail(c, err, "max_tokens must be positive, not %ld", max_tokens);
		return PMBOT_EINVALID;
	}
	return 0;
}

int pmbot_llm_complete(pmbot_buf *text_out, pmbot_llm_client *c, const char *system,
	const char *user, double temperature, long max_tokens, pmbot_buf *err)
{
	pmbot_buf payload = PMBOT_BUF_INIT;
	size_t err_len = err ? err->len : 0;
	exchange x;
	int attempt, rc;

	memset(&x, 0, sizeof(x));
	pmbot_buf_init(&x.body, c->max_response);
	pmbot_buf_clear(text_out);
	pmbot_buf_clear(&c->stop_reason);
	if ((rc = check_args(c, system, user, temperature, max_tokens, err)) < 0)
		goto done;
	if ((rc = build_body(&payload, c, system, user, temperature, max_tokens)) < 0) {
		fail(c, err, "the request cannot be written as JSON");
		goto done;
	}
	for (attempt = 1;; attempt++) {
		long status;
		CURLcode cc = perform(c, &payload, &x, &status);

		c->stats.requests++;
		c->stats.last_status = status;
		if (cc == CURLE_OUT_OF_MEMORY) {
			rc = PMBOT_ERROR;
			break;
		}
		if (x.too_big) {
			rc = PMBOT_LLM_ETOOBIG;
			fail(c, err, "the answer is larger than %zu bytes", c->max_response);
			break;
		}
		if (cc != CURLE_OK) {
			if (pmbot_net_retryable(cc) && attempt < c->max_attempts) {
				before_retry(c, retry_wait(c, &x, attempt));
				continue;
			}
			rc = PMBOT_LLM_ETRANSPORT;
			fail(c, err, "%s (after %d attempt%s)",
				pmbot_net_error(c->net, cc), attempt,
				attempt == 1 ? "" : "s");
			break;
		}
		if (status >= 200 && status < 300) {
			rc = after_success(text_out, c, &x, status, err);
			break;
		}
		if (status_retryable(status) && attempt < c->max_attempts) {
			before_retry(c, retry_wait(c, &x, attempt));
			continue;
		}
		rc = PMBOT_LLM_EHTTP;
		http_failure(c, &x, status, attempt, err);
		break;
	}
done:
	if (rc == PMBOT_ERROR && err && err->len == err_len)
		fail(c, err, "out of memory");
	if (rc < 0) {
		pmbot_buf_clear(text_out);
		pmbot_buf_clear(&c->stop_reason);
	}
	pmbot_buf_free(&payload);
	pmbot_buf_free(&x.body);
	return rc;
}
