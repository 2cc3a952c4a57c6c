#ifndef PMBOT_LLM_H
#define PMBOT_LLM_H

#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"

/*
 * Model providers (Mode B): one chat completion over libcurl, against an
 * OpenAI-compatible endpoint (OpenAI, Ollama, llama.cpp, vLLM, ... at
 * {url}/chat/completions) or Anthropic's Messages API ({url}/messages).
 * docs/llm.md, section "Providers", describes the behaviour for users.
 *
 * libcurl must be initialised by the program before the first client is
 * made (curl_global_init once, before any thread exists; curl_global_cleanup
 * after the last client is freed), as for the GitHub client. A client is not
 * safe to share between threads. Nothing here prints or exits.
 *
 * The API key is never written to any error message: it is refused without
 * being quoted, and every message built from an answer (which a server may
 * use to echo the key back) has the key replaced by "[REDACTED]" before it is
 * shortened, so not even a prefix of it survives.
 *
 * Returns, besides 0, PMBOT_ERROR (out of memory, libcurl failed to start),
 * PMBOT_EINVALID (a bad setting or argument) and PMBOT_ENOTFOUND (no provider
 * configured):
 *   PMBOT_LLM_EHTTP        the final answer was not 2xx: a 4xx other than 429
 *                          (never retried), or a 429/500/502/503/504 still
 *                          there after the last attempt, or another status.
 *                          The error holds the status and the provider's own
 *                          message.
 *   PMBOT_LLM_ETRANSPORT   no complete answer (cannot resolve or connect,
 *                          timeout, connection cut, partial body) after the
 *                          last attempt
 *   PMBOT_LLM_ETOOBIG      the answer passed max_response bytes (not retried)
 *   PMBOT_LLM_EBADRESPONSE a 2xx answer that is not JSON or holds no text
 *                          (not retried)
 */

#define PMBOT_LLM_DEFAULT_OPENAI_URL "https://api.openai.com/v1"
#define PMBOT_LLM_DEFAULT_ANTHROPIC_URL "https://api.anthropic.com/v1"
#define PMBOT_LLM_ANTHROPIC_VERSION "2023-06-01"

#define PMBOT_LLM_DEFAULT_CONNECT_TIMEOUT_MS 10000L
#define PMBOT_LLM_DEFAULT_TIMEOUT_MS 300000L
#define PMBOT_LLM_DEFAULT_MAX_RESPONSE ((size_t)4 << 20)
#define PMBOT_LLM_DEFAULT_MAX_ATTEMPTS 3
#define PMBOT_LLM_DEFAULT_RETRY_BASE_MS 1000L
#define PMBOT_LLM_DEFAULT_MAX_WAIT_MS 60000LL

typedef enum {
	PMBOT_LLM_NONE = 0,
	PMBOT_LLM_OPENAI = 1,    /* any OpenAI-compatible chat-completions endpoint */
	PMBOT_LLM_ANTHROPIC = 2  /* Anthropic Messages API */
} pmbot_llm_provider;

/* "openai", "anthropic", or "none". Static storage. */
const char *pmbot_llm_provider_name(pmbot_llm_provider p);

/*
 * An environment lookup: the value of `name`, or NULL when unset. The
 * string is borrowed; it must stay valid until the lookup returns to
 * pmbot_llm_config_from_getenv, which copies it.
 */
typedef const char *(*pmbot_llm_getenv_fn)(void *payload, const char *name);

/* Sleep `ms` milliseconds (> 0). Tests inject one that only records. */
typedef void (*pmbot_llm_sleep_fn)(void *payload, long long ms);

/*
 * Provider settings. The strings are owned by the config (malloc'd): free
 * them with pmbot_llm_config_free(), which also wipes the key. Numbers zero
 * or negative mean the default.
 */
typedef struct {
	pmbot_llm_provider provider;
	char *url;      /* base URL, http(s), no credentials, query or fragment,
	                   no trailing '/' */
	char *model;    /* sent as is */
	char *api_key;  /* NULL: no key (a local server) */
	long connect_timeout_ms; /* default PMBOT_LLM_DEFAULT_CONNECT_TIMEOUT_MS */
	long timeout_ms;         /* one whole attempt; default 300 s */
	size_t max_response;     /* bytes of answer body; default 4 MiB */
	int max_attempts;        /* attempts in all, first one included; default 3 */
	long retry_base_ms;      /* first back-off, doubled each time; default 1000 */
	long long max_wait_ms;   /* longest single wait (retry-after is capped
	                            to it); default 60000 */
	pmbot_llm_sleep_fn sleep; /* NULL: nanosleep */
	void *sleep_payload;
} pmbot_llm_config;

/* Fill `cfg` with no provider, no strings and the default numbers. */
void pmbot_llm_config_init(pmbot_llm_config *cfg);

/* Free the strings of `cfg` (wiping the key first) and re-initialise it. */
void pmbot_llm_config_free(pmbot_llm_config *cfg);

/*
 * Read the configuration from the environment (empty values count as unset):
 *   PM_BOT_LLM_PROVIDER  "openai" or "anthropic" (exact, lower case)
 *   PM_BOT_LLM_URL       base URL; default PMBOT_LLM_DEFAULT_OPENAI_URL or
 *                        PMBOT_LLM_DEFAULT_ANTHROPIC_URL
 *   PM_BOT_LLM_MODEL     required
 *   PM_BOT_LLM_API_KEY   required only when the URL is the provider's own
 *                        hosted default; a local server needs none
 * `*out` is initialised first and owned by the caller afterwards (free it
 * with pmbot_llm_config_free, also on failure). On failure the reason is
 * appended to `err` (may be NULL; caller owns it) and never quotes the key.
 * PMBOT_ENOTFOUND when no provider is set; PMBOT_EINVALID for an unknown
 * provider, a bad URL, no model, a missing key for a hosted API or a key
 * that cannot go into an HTTP header; PMBOT_ERROR when out of memory.
 */
int pmbot_llm_config_from_env(pmbot_llm_config *out, pmbot_buf *err);

/* The same, with `getenv_fn(payload, name)` instead of getenv(3)
 * (NULL: getenv(3)). */
int pmbot_llm_config_from_getenv(pmbot_llm_config *out, pmbot_llm_getenv_fn getenv_fn,
	void *payload, pmbot_buf *err);

/* Counters, for tests and --stats. */
typedef struct {
	unsigned long requests;  /* HTTP exchanges attempted, retries included */
	unsigned long retries;   /* attempts after the first */
	long long waited_ms;     /* time slept between attempts */
	long last_status;        /* HTTP status of the last answer; 0: none */
} pmbot_llm_stats;

typedef struct pmbot_llm_client pmbot_llm_client;

/*
 * Make a client from `cfg` (borrowed; its strings are copied, so the config
 * may be freed afterwards). The settings are checked as by the env reader.
 * `*out` is new and owned by the caller: pmbot_llm_client_free() it. On
 * failure `*out` is NULL and the reason is appended to `err` (may be NULL).
 * PMBOT_EINVALID or PMBOT_ERROR.
 */
PMBOT_WARN_UNUSED int pmbot_llm_client_new(pmbot_llm_client **out, const pmbot_llm_config *cfg, pmbot_buf *err);

/* Free the client and its libcurl handle, wiping the key. NULL is a no-op. */
void pmbot_llm_client_free(pmbot_llm_client *c);

/* Copy the counters into `out`. */
void pmbot_llm_client_stats(pmbot_llm_stats *out, const pmbot_llm_client *c);

/*
 * Why the model stopped in the last successful completion, as the provider
 * said it (OpenAI "finish_reason": "stop", "length"; Anthropic "stop_reason":
 * "end_turn", "max_tokens"), or "" when unknown or after a failure. Owned by
 * `c`, valid until its next request. "length"/"max_tokens" mean the text was
 * cut at max_tokens.
 */
const char *pmbot_llm_last_stop_reason(const pmbot_llm_client *c);

/*
 * One completion: `system` (may be NULL or "": none) and `user` (required)
 * are sent as one system and one user message; the model's text replaces the
 * content of `text_out` (caller owns it; its cap applies: PMBOT_LLM_ETOOBIG).
 *   OpenAI:    POST {url}/chat/completions, "Authorization: Bearer <key>"
 *              (when there is a key), body {"max_tokens","messages":[system,
 *              user],"model","temperature"}; the text is
 *              choices[0].message.content.
 *   Anthropic: POST {url}/messages, "x-api-key: <key>" (when there is a key)
 *              and "anthropic-version: 2023-06-01", body {"max_tokens",
 *              "messages":[user],"model","system","temperature"}; the text is
 *              the concatenated "text" of the content[] blocks of type "text".
 * Bodies are canonical JSON (same arguments, same bytes). `temperature` must
 * be finite; a negative one is left out of the body (the model's default;
 * some reasoning models accept no other). `max_tokens` must be > 0. The
 * strings must be valid UTF-8. Bad arguments give PMBOT_EINVALID and send
 * nothing.
 * Up to max_attempts attempts: 429/500/502/503/504 and transport failures are
 * retried after retry-after-ms / retry-after (seconds) when the answer has
 * one, else retry_base_ms doubled each time, every wait capped at
 * max_wait_ms. On failure the reason (method, URL, status, the provider's
 * message with control characters escaped; never the key) is appended to
 * `err` (may be NULL) and `text_out` is left empty.
 */
int pmbot_llm_complete(pmbot_buf *text_out, pmbot_llm_client *c, const char *system,
	const char *user, double temperature, long max_tokens, pmbot_buf *err);

#endif
