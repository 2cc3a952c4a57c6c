#ifndef PMBOT_NET_H
#define PMBOT_NET_H

#include <curl/curl.h>
#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"

/*
 * The one libcurl transport under the GitHub client and the model provider
 * client: a reusable handle, one exchange at a time, with the body capped,
 * the headers handed to the caller line by line, and the secret kept out of
 * every text. What an answer means (rate limits, retries, GraphQL errors, a
 * provider's error shapes) is the caller's: this layer knows HTTP only.
 *
 * libcurl is not linked but opened (dlopen) the first time it is needed, so
 * a process that never speaks HTTP does not pay for loading it. The program
 * initialises it (pmbot_net_global_init) before the first handle is made. A
 * handle is not safe to share between threads. Nothing here prints or exits.
 */

/*
 * Load libcurl (once; it stays loaded) and initialise it
 * (curl_global_init). Not thread-safe; each successful call is paired with
 * one pmbot_net_global_cleanup. 0, or PMBOT_ERROR with a sentence in `err`
 * (may be NULL) when libcurl cannot be loaded or initialised.
 */
int pmbot_net_global_init(pmbot_buf *err);

/* Undo one successful pmbot_net_global_init (none left: nothing happens). */
void pmbot_net_global_cleanup(void);

/*
 * libcurl's version text ("libcurl/8.14.1 ..."), static; NULL with a
 * sentence in `err` (may be NULL) when libcurl cannot be loaded.
 */
const char *pmbot_net_version(pmbot_buf *err);

/* A handle: one libcurl easy handle, reused so keep-alive works. */
typedef struct pmbot_net pmbot_net;

/*
 * Make a handle into `*out` (owned by the caller; pmbot_net_free). 0, or
 * PMBOT_ERROR with a sentence in `err` (may be NULL) when libcurl cannot
 * be loaded or make one (pmbot_net_global_init not called) or memory ran
 * out.
 */
int pmbot_net_new(pmbot_net **out, pmbot_buf *err);

/* Free `n` (NULL is fine). */
void pmbot_net_free(pmbot_net *n);

/* Does the libcurl in use decode gzip (so "Accept-Encoding: gzip" may be asked)? */
int pmbot_net_has_gzip(void);

/*
 * One raw header line as libcurl gives it (status lines "HTTP/..." too, at
 * the start of every answer, redirects and 100 Continue included, so a
 * caller drops what it kept from an earlier answer there). Not
 * NUL-terminated. Return 0, or negative to abort the exchange (out of
 * memory): the exchange then ends with CURLE_OUT_OF_MEMORY.
 */
typedef int (*pmbot_net_header_fn)(void *payload, const char *line, size_t len);

/*
 * Asked before a redirect is followed (only when set; `location` is the
 * absolute URL libcurl resolved, `status` the 3xx). Return 1 to follow,
 * 0 to stop, having written why into `why` (`why_size` bytes, for the
 * transport's error text): the exchange then ends with
 * CURLE_WEIRD_SERVER_REPLY. The caller resets what it kept from the 3xx.
 */
typedef int (*pmbot_net_redirect_fn)(void *payload, long status, const char *location,
	char *why, size_t why_size);

/* One request; everything borrowed for the duration of pmbot_net_perform. */
typedef struct {
	const char *method;          /* "GET", "POST", "PATCH", ... */
	const char *url;
	const char *const *headers;  /* NULL-terminated "Name: value" lines, or NULL */
	const char *user_agent;
	const char *body;            /* NULL: no body at all */
	size_t body_len;
	long connect_timeout_ms;
	long timeout_ms;
	int accept_gzip;             /* ask for gzip (only where pmbot_net_has_gzip) */
	pmbot_net_header_fn on_header;   /* NULL: headers are not wanted */
	void *header_payload;
	pmbot_net_redirect_fn on_redirect; /* NULL: a 3xx is the answer */
	void *redirect_payload;
	int max_redirects;           /* followed at most; one more is CURLE_TOO_MANY_REDIRECTS */
} pmbot_net_request;

/* What one exchange brought back. */
typedef struct {
	long status;    /* the final HTTP status; 0 when none arrived */
	int too_big;    /* the body passed the cap of the body buffer: the answer is void */
} pmbot_net_response;

/*
 * One exchange of `rq` on `n`, the body written into `body` (cleared first;
 * its `max` is the cap, also given to libcurl as the largest file size) and
 * the status into `*resp`. The handle is reset first, so no option of an
 * earlier request (method, body, headers) carries over; the connection
 * cache survives, so keep-alive still works. libcurl follows no redirect by
 * itself; only http and https are spoken, and a redirect from https never
 * goes to http.
 *
 * Returns libcurl's outcome: CURLE_OK when a complete answer arrived (any
 * status), CURLE_OUT_OF_MEMORY when memory ran out (here or in a callback),
 * otherwise the transport failure; with `resp->too_big` set the body passed
 * its cap (the outcome is then CURLE_WRITE_ERROR or
 * CURLE_FILESIZE_EXCEEDED). pmbot_net_error() says it in words.
 */
CURLcode pmbot_net_perform(pmbot_net_response *resp, pmbot_buf *body, pmbot_net *n,
	const pmbot_net_request *rq);

/*
 * libcurl's words for the last exchange's failure `cc` (its error buffer,
 * else curl_easy_strerror); borrowed until the next exchange on `n`.
 */
const char *pmbot_net_error(const pmbot_net *n, CURLcode cc);

/* A failure worth another attempt: nothing complete came back. */
int pmbot_net_retryable(CURLcode cc);

/* A failure that happens before one byte of the request left. */
int pmbot_net_never_sent(CURLcode cc);

/*
 * Is `line` (`len` bytes, as a header callback gets it) the header `name`
 * (case-insensitive)? Then `*value` points at its value with blanks and
 * the line end trimmed, and `*value_len` is its length.
 */
int pmbot_net_header_is(const char **value, size_t *value_len, const char *line, size_t len,
	const char *name);

/* Printable ASCII without spaces: safe as a token or URL in a header line. */
int pmbot_net_is_token(const char *s);

/* Printable ASCII, spaces inside only, not empty: a header value that cannot inject. */
int pmbot_net_is_header_text(const char *s);

/*
 * Do `base` and `url` (absolute URLs) have the same origin: scheme, host
 * (ASCII case-insensitively) and port (the scheme's default when none is
 * written)? A URL with credentials in it, or one curl cannot parse, is
 * never the same origin (nor is anything when memory runs out or libcurl
 * cannot be loaded). 1 yes, 0 no.
 */
int pmbot_net_same_origin(const char *base, const char *url);

/*
 * The time an HTTP date (RFC 9110, read by curl_getdate) names, in seconds
 * since the epoch; -1 when it names none or libcurl cannot be loaded.
 */
long long pmbot_net_http_date(const char *s);

/* What pmbot_net_base_url() found wrong. */
#define PMBOT_NET_URL_CREDENTIALS 1 /* "user[:password]@" before the host */
#define PMBOT_NET_URL_BAD 2         /* not http(s), no host, a query, a fragment, spaces */

/*
 * An http(s) URL with a host and no credentials, query or fragment (they
 * would reach error messages, and paths are appended to it), copied into
 * `*out` (owned by the caller) without trailing slashes; `*host` points at
 * the host in `*out` and `*host_len` is its length (with the port). 0;
 * PMBOT_EINVALID with `*why` set to PMBOT_NET_URL_CREDENTIALS or
 * PMBOT_NET_URL_BAD (credentials are looked for first: a URL with them must
 * not be quoted); PMBOT_ERROR when out of memory.
 */
int pmbot_net_base_url(char **out, const char **host, size_t *host_len, int *why,
	const char *url);

/*
 * The wait before a retry: `base_ms` doubled `doublings` times, never more
 * than `cap_ms`.
 */
long long pmbot_net_backoff(long long base_ms, int doublings, long long cap_ms);

/* The wall clock in milliseconds since the epoch; `payload` unused (a pmbot clock hook). */
long long pmbot_net_now_ms(void *payload);

/* Sleep `ms` milliseconds, through signals; `payload` unused (a pmbot sleep hook). */
void pmbot_net_sleep_ms(void *payload, long long ms);

/* The shortest part of a secret that is redacted wherever it appears. */
#define PMBOT_NET_REDACT_MIN 8

/* What a redacted part is replaced by. */
#define PMBOT_NET_REDACTED "[REDACTED]"

/*
 * Keep a secret (the GitHub token, a model provider's key) out of `b`:
 * servers echo credentials in their error messages, whole or in part
 * ("Incorrect API key provided: sk-abc...xyz"), and a quoted message may be
 * cut in the middle of one, so every text a client shows passes here before
 * it is shortened.
 *
 * Every run of bytes made of substrings of `secret` that are
 * PMBOT_NET_REDACT_MIN bytes or longer (a prefix, a middle, a suffix, the
 * whole secret) becomes one PMBOT_NET_REDACTED. Fragments shorter than that
 * stay: 7 bytes of a random key are not worth making ordinary words
 * unreadable (a secret shorter than PMBOT_NET_REDACT_MIN is redacted only
 * whole). `secret` NULL or empty changes nothing. Returns 0; when out of
 * memory `b` holds only the mask and -1 is returned: better no text than
 * text with the secret.
 */
int pmbot_net_redact(pmbot_buf *b, const char *secret);

/* Zero the string `s` (a secret, a header holding one) and free it; NULL is fine. */
void pmbot_net_wipe_free(char *s);

#endif
