#ifndef PMBOT_GITHUB_H
#define PMBOT_GITHUB_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/source.h"

/*
 * The public header of src/github/, the GitHub client, in two parts:
 *  1. the client: REST and GraphQL requests, limits, retries, the write
 *     budget spent, the ETag cache,
 *  2. the GraphQL documents pm-bot sends, compiled in.
 */

/* ==== 1. The client ===================================================== */

/*
 * The GitHub HTTP client: REST and GraphQL over one reused libcurl easy
 * handle, with GitHub's rate-limit rules, safe retries, pacing of writes,
 * an ETag cache for conditional GETs and request counting. docs/github.md
 * describes the behaviour for users.
 *
 * libcurl must be loaded and initialised by the program before the first
 * client is made: pmbot_net_global_init() once, before any thread exists,
 * and pmbot_net_global_cleanup() after the last client is freed (cmd/ does
 * it; each test binary does it in main). The client never calls either.
 *
 * A client is not safe to share between threads. Nothing here prints or
 * exits: failures are return codes plus a message appended to the `err`
 * that every request function takes last (may be NULL; the caller owns
 * it; left as it was on success). The message holds method, URL, status
 * and GitHub's message (control characters escaped), never the token. The
 * client keeps no message between calls. Progress (waits, retries,
 * responses) goes through the optional event callback.
 * The token is never written to any error, event or cache file.
 *
 * Returns, for every function below: 0 on success, or
 *   PMBOT_EINVALID               a bad argument or setting (malformed URL,
 *                                token with control characters, a page that
 *                                is not an array, a next link to another
 *                                origin)
 *   PMBOT_ERROR                  out of memory, libcurl failed to start, a
 *                                2xx answer that is not the JSON promised
 *   PMBOT_GITHUB_EHTTP           the final answer was not 2xx (and not a
 *                                rate limit or a 5xx of a write, below); the
 *                                response holds status, headers and JSON
 *   PMBOT_GITHUB_EUNKNOWN_OUTCOME a request that is not safe to repeat (a
 *                                write not marked idempotent) failed after
 *                                it may have reached GitHub: 5xx, timeout,
 *                                connection cut, unreadable or oversized
 *                                answer. It was not retried; re-read state
 *                                to learn whether it landed.
 *   PMBOT_GITHUB_ETRANSPORT      no complete answer (connection refused,
 *                                DNS, timeout, cut-off body) for a request
 *                                that is safe to repeat, after the retries;
 *                                or for a write that never reached GitHub
 *                                (could not resolve or connect); a GET
 *                                redirected to another origin (scheme,
 *                                host, port: nothing is sent there) or more
 *                                than 5 times
 *   PMBOT_GITHUB_ERATELIMIT      still rate limited after max_rate_waits
 *                                waits, or the wait GitHub asks for is
 *                                longer than max_wait_ms. The request was
 *                                not performed.
 *   PMBOT_GITHUB_ETOOBIG         the answer to a safe request passed
 *                                max_response bytes
 *   PMBOT_GITHUB_EGRAPHQL        a GraphQL answer with "errors" (other than
 *                                RATE_LIMITED, which is waited out); the
 *                                response holds the whole document and the
 *                                first error's type
 *   PMBOT_GITHUB_EBUDGET         a write (or its repeat) was not sent: the
 *                                write budget is spent until later than the
 *                                client may wait (or GitHub's secondary limit
 *                                asks for a longer wait);
 *                                pmbot_github_budget_resume() says when
 */

#define PMBOT_GITHUB_DEFAULT_API_URL "https://api.github.com"
#define PMBOT_GITHUB_DEFAULT_GRAPHQL_URL "https://api.github.com/graphql"
#define PMBOT_GITHUB_DEFAULT_CACHE_DIR ".pm-bot/cache"
#define PMBOT_GITHUB_API_VERSION "2022-11-28"

/* What an event reports. */
typedef enum {
	PMBOT_GITHUB_EV_RESPONSE,   /* an answer arrived (status; 304 included) */
	PMBOT_GITHUB_EV_RATE_LIMIT, /* rate limited: sleeping wait_ms, then again */
	PMBOT_GITHUB_EV_RETRY,      /* transient failure: sleeping wait_ms, then again */
	PMBOT_GITHUB_EV_PACE,       /* pacing a write: sleeping wait_ms first */
	PMBOT_GITHUB_EV_CACHE_ERROR, /* the ETag cache could not be written (not fatal) */
	PMBOT_GITHUB_EV_BUDGET      /* the write budget: waiting wait_ms for a window,
				     * stopping a write, or its record ignored or not
				     * written (not fatal) */
} pmbot_github_event_kind;

/*
 * One progress event. Every pointer is borrowed for the duration of the
 * callback. `message` is a complete human sentence without a trailing
 * newline, e.g. "GET https://api.github.com/rate_limit: HTTP 403, rate
 * limited; waiting 60 s (retry-after)"; it never holds the token.
 */
typedef struct {
	pmbot_github_event_kind kind;
	const char *method;  /* "GET", "POST", ... */
	const char *url;     /* full URL, no credentials */
	long status;         /* HTTP status, 0 when no answer */
	long long wait_ms;   /* the sleep about to happen, 0 for other kinds */
	int attempt;         /* 1 for the first try of a request */
	const char *message;
} pmbot_github_event;

/* Epoch time in milliseconds (the clock x-ratelimit-reset is compared to). */
typedef long long (*pmbot_github_now_fn)(void *payload);
/* Sleep `ms` milliseconds (> 0). */
typedef void (*pmbot_github_sleep_fn)(void *payload, long long ms);
typedef void (*pmbot_github_event_fn)(void *payload, const pmbot_github_event *ev);

/*
 * Client settings. Fill with pmbot_github_options_init(), then change what
 * you need. Strings are borrowed and copied by pmbot_github_client_new().
 */
typedef struct {
	/* NULL: $GITHUB_API_URL (an empty value counts as unset), else
	 * PMBOT_GITHUB_DEFAULT_API_URL. http or https, no credentials, no
	 * query; a path is kept (GHES: https://HOST/api/v3); trailing '/'s
	 * are dropped. */
	const char *api_url;
	/* NULL: $GITHUB_GRAPHQL_URL, else PMBOT_GITHUB_DEFAULT_GRAPHQL_URL. */
	const char *graphql_url;
	/* NULL: $GH_TOKEN, else $GITHUB_TOKEN (empty values count as unset);
	 * "" means anonymous (no Authorization header). */
	const char *token;
	/* NULL: "pm-bot/<version>". Printable ASCII. */
	const char *user_agent;
	/* Zero or negative: the default. */
	long connect_timeout_ms; /* default 10000 */
	long timeout_ms;         /* whole exchange, per attempt; default 60000 */
	size_t max_response;     /* bytes of (decoded) body; default 64 MiB; 0: default */
	/* Least time between the end of one write (POST/PATCH/PUT/DELETE, or a
	 * GraphQL mutation) and the start of the next; default 1000, 0 = none. */
	long pace_ms;
	/* Retries of a safe request after a 5xx or transport failure; default 3,
	 * waiting retry_base_ms, then twice as long each time (or retry-after
	 * when a 5xx carries it). 0: no retries. */
	int max_retries;
	long retry_base_ms;      /* default 1000; 0: retry at once */
	/* Rate-limit waits per request before ERATELIMIT; default 5. 0: fail
	 * on the first limit. */
	int max_rate_waits;
	/* Longest single rate-limit wait; a longer one fails at once with
	 * ERATELIMIT. Default 3,900,000 (65 minutes: a primary limit resets
	 * within the hour). */
	long long max_wait_ms;
	/* The write budget (pmbot_github_budget_parse text). NULL:
	 * $PMBOT_GITHUB_WRITE_BUDGET (empty counts as unset), else
	 * pmbot_github_client_config_budget()'s, else
	 * PMBOT_GITHUB_DEFAULT_WRITE_BUDGET. Before each write the client
	 * waits for room when it comes within budget_max_wait_ms, and else
	 * fails the write unsent with PMBOT_GITHUB_EBUDGET. */
	const char *write_budget;
	/* The longest wait for room; 0: the shortest window's length, at most
	 * PMBOT_GITHUB_BUDGET_MAX_WAIT_MS. A secondary-limit answer to a write
	 * asking for longer is EBUDGET too. */
	long long budget_max_wait_ms;
	/* ETag cache directory (created 0700 on first write); default
	 * PMBOT_GITHUB_DEFAULT_CACHE_DIR; NULL disables the cache. The write
	 * budget's spent writes are kept there too, in write-budget.json
	 * (read when the client is made, rewritten atomically after each
	 * write), so the next run knows what this one spent. */
	const char *cache_dir;
	/* Clock and sleep; NULL: the real ones (CLOCK_REALTIME, nanosleep).
	 * Tests inject both so nothing really sleeps. */
	pmbot_github_now_fn now;
	pmbot_github_sleep_fn sleep;
	void *clock_payload;
	/* Progress; NULL: none. */
	pmbot_github_event_fn on_event;
	void *event_payload;
} pmbot_github_options;

/* Request counters, for --stats. */
typedef struct {
	unsigned long requests;     /* HTTP exchanges attempted, retries included */
	unsigned long rest;         /* ... of them to the REST API */
	unsigned long graphql;      /* ... of them to the GraphQL endpoint */
	unsigned long writes;       /* ... of them writes (paced kinds) */
	unsigned long not_modified; /* 304 answers served from the ETag cache */
	unsigned long retries;      /* repeats after a 5xx or transport failure */
	unsigned long rate_limited; /* waits for a rate limit */
	long long waited_ms;        /* time slept: rate limits, retries, pacing */
} pmbot_github_stats;

/*
 * The interesting parts of one answer. Initialise it with
 * PMBOT_GITHUB_RESPONSE_INIT; every call that takes one frees what it held
 * first, so one response can be reused, and the caller frees it at the end
 * with pmbot_github_response_free(). Everything in it is owned by it.
 */
typedef struct {
	long status;          /* final HTTP status; 200 when served from cache */
	int from_cache;       /* 1: GitHub answered 304 and the body is the cached one */
	pmbot_buf body;       /* raw body */
	json_t *json;         /* parsed body, NULL when empty or not JSON */
	char *etag;           /* NULL when absent */
	char *next_url;       /* Link rel="next", absolute; NULL when absent */
	char *request_id;     /* x-github-request-id; NULL when absent */
	long long rate_remaining; /* x-ratelimit-remaining; -1 when absent */
	long long rate_reset;     /* x-ratelimit-reset (epoch s); -1 when absent */
	long long retry_after;    /* retry-after in seconds; -1 when absent */
	char *error_type;     /* GraphQL: type of the first error; else NULL */
} pmbot_github_response;

#define PMBOT_GITHUB_RESPONSE_INIT \
	{ 0, 0, PMBOT_BUF_INIT, NULL, NULL, NULL, NULL, -1, -1, -1, NULL }

/* Free what `resp` holds and reset it to PMBOT_GITHUB_RESPONSE_INIT. */
void pmbot_github_response_free(pmbot_github_response *resp);

/* Request flags. */
#define PMBOT_GITHUB_IDEMPOTENT 1u /* a write that is safe to repeat: retried */
#define PMBOT_GITHUB_NO_CACHE 2u   /* a GET that skips the ETag cache */

typedef struct pmbot_github_client pmbot_github_client;

/* Fill `opts` with the defaults listed above. */
void pmbot_github_options_init(pmbot_github_options *opts);

/*
 * The write pace a user gave (--pace-ms, $PMBOT_GITHUB_PACE_MS): `text` a
 * whole number of milliseconds, 0 or more (0: no pacing), in the range of
 * long, read like strtol in base 10 (leading blanks and a '+' allowed,
 * nothing after the digits). 0 with `*out` set; PMBOT_EINVALID, `*out`
 * unchanged, for anything else (NULL, empty, not a number, a negative
 * number, trailing characters, out of range). The caller words the message.
 */
PMBOT_WARN_UNUSED int pmbot_github_pace_parse(long *out, const char *text);

/*
 * Make a client from `opts` (NULL: defaults), reading the environment for
 * what opts leaves NULL. `*out` is new; free it with
 * pmbot_github_client_free(). On failure `*out` is NULL and, when `err` is
 * not NULL, the reason is appended to it (caller owns `err`).
 * PMBOT_EINVALID for a bad URL or token, PMBOT_ERROR otherwise.
 */
PMBOT_WARN_UNUSED int pmbot_github_client_new(pmbot_github_client **out, const pmbot_github_options *opts,
	pmbot_buf *err);

/* Free the client and its easy handle. NULL is a no-op. */
void pmbot_github_client_free(pmbot_github_client *c);

/* Copy the counters into `out`. */
void pmbot_github_client_stats(pmbot_github_stats *out, const pmbot_github_client *c);

/*
 * The configuration's write budget (`github.write_budget`, already parsed;
 * borrowed, copied): it replaces the client's unless opts->write_budget or
 * $PMBOT_GITHUB_WRITE_BUDGET gave one, which override the configuration.
 * Call it before the first write. 1 when it was taken, 0 when overridden.
 */
int pmbot_github_client_config_budget(pmbot_github_client *c, const pmbot_github_budget *b);

/*
 * Keep `n` writes of every window (at most all but one) for what comes
 * after a pause: until called again with 0, a write that would leave fewer
 * is waited for or stopped like a spent budget. The Action holds back the
 * few writes it needs after an apply (the plan comment, the lock), so that
 * a paused apply can still say so.
 */
void pmbot_github_budget_hold(pmbot_github_client *c, long n);

/*
 * When one more write fits the budget leaving `hold` of each window unspent
 * (pmbot_github_budget_next() over this run's and earlier runs' writes):
 * epoch ms; 0 when it fits now or there is no budget. Lets a run see
 * whether a paused apply can go on before it writes anything.
 */
long long pmbot_github_budget_free_at(pmbot_github_client *c, long hold);

/*
 * When the write budget frees (epoch ms) after a PMBOT_GITHUB_EBUDGET;
 * 0 before any.
 */
long long pmbot_github_budget_resume(const pmbot_github_client *c);

/* Is a token configured (explicitly or from the environment)? 1 or 0. */
int pmbot_github_has_token(const pmbot_github_client *c);

/*
 * One REST request. `path_and_query` is relative to the API URL
 * ("/repos/o/r/issues?state=all") or an absolute URL under it (a Link
 * target). `body` (borrowed, may be NULL) is sent as canonical JSON; a
 * POST/PATCH/PUT without one sends an empty body (Content-Length: 0).
 * GETs and writes flagged PMBOT_GITHUB_IDEMPOTENT are retried after 5xx and
 * transport failures; other writes never are. Every request waits out rate
 * limits (403/429 with retry-after, or x-ratelimit-remaining 0, or a
 * secondary-limit message; 429 always), since GitHub did not perform it.
 * GETs use the ETag cache unless PMBOT_GITHUB_NO_CACHE. `resp` is filled on
 * success and, as far as an answer arrived, on failure.
 */
int pmbot_github_rest(pmbot_github_response *resp, pmbot_github_client *c, const char *method,
	const char *path_and_query, const json_t *body, pmbot_buf *err);
int pmbot_github_rest_flags(pmbot_github_response *resp, pmbot_github_client *c,
	const char *method, const char *path_and_query, const json_t *body, unsigned flags,
	pmbot_buf *err);

/*
 * GET every page of a list endpoint: adds per_page=100 unless the query
 * has per_page, follows Link rel="next" (only to URLs under the API URL:
 * the token never goes to another origin) and concatenates the arrays.
 * `*out` is a new array the caller owns; NULL unless 0.
 */
int pmbot_github_rest_paginate(json_t **out, pmbot_github_client *c,
	const char *path_and_query, unsigned flags, pmbot_buf *err);

/*
 * One GraphQL request: POST {"query": query, "variables": variables} to the
 * GraphQL URL (`variables` borrowed, may be NULL: omitted). A document whose
 * first operation is a mutation is a write: paced, and retried only when
 * flagged PMBOT_GITHUB_IDEMPOTENT; queries are retried like GETs. Errors of
 * type RATE_LIMITED inside an HTTP 200 are waited out like a 403 limit. Any
 * other "errors" give PMBOT_GITHUB_EGRAPHQL with resp->json the whole
 * document (its "data" may be partial) and resp->error_type the first
 * error's type (branch on it, not on messages).
 */
int pmbot_github_graphql_ex(pmbot_github_response *resp, pmbot_github_client *c,
	const char *query, const json_t *variables, unsigned flags, pmbot_buf *err);

/*
 * pmbot_github_graphql_ex without flags, returning only "data": `*data_out`
 * is a new reference the caller owns; NULL unless 0.
 */
int pmbot_github_graphql(json_t **data_out, pmbot_github_client *c, const char *query,
	const json_t *variables, pmbot_buf *err);

/*
 * The login the token acts as, from the GraphQL "viewer" document
 * (src/github/graphql/viewer.graphql). GraphQL rather than REST GET /user,
 * which answers 403 to the installation tokens of GitHub Apps and Actions;
 * for those GitHub names the bot in its REST spelling
 * ("github-actions[bot]"). `*out` is a new string the caller frees, NULL
 * unless 0. Errors as above; PMBOT_ERROR also when the answer has no login.
 */
int pmbot_github_viewer_login(char **out, pmbot_github_client *c, pmbot_buf *err);

/*
 * The rel="next" target of a Link header value (RFC 8288:
 * `<url>; rel="next", <url>; rel="last"`). `*out` is a new string the
 * caller frees, or NULL when there is no next link. 0 or PMBOT_ERROR.
 */
int pmbot_github_link_next(char **out, const char *link);

/*
 * Append `segment` percent-encoded for one path segment or query value
 * (everything but A-Z a-z 0-9 - . _ ~ becomes %XX, UTF-8 byte by byte),
 * e.g. a label name for DELETE .../labels/{name}. 0 or PMBOT_ERROR.
 */
int pmbot_github_path_escape(pmbot_buf *out, const char *segment);

/* ==== 2. The GraphQL documents ========================================== */

/*
 * The GraphQL documents pm-bot sends, one per file in src/github/graphql/
 * (compiled in by scripts/embed-graphql.sh), so each can be validated
 * against GitHub's published schema by the emulator's tests.
 */
typedef struct {
	const char *name; /* the file name without ".graphql" */
	const char *text; /* the document, byte for byte */
} pmbot_gql_doc;

extern const pmbot_gql_doc pmbot_gql_docs[];
extern const size_t pmbot_gql_n_docs;

/* The text of document `name` (static storage), or NULL when there is none. */
const char *pmbot_gql(const char *name);

/*
 * Features a GitHub may lack (GitHub Enterprise Server up to 3.21 has
 * neither). A document line that selects one ends in a trailing comment
 * naming it, e.g. `  parent { # needs: sub_issues`, so one file serves every
 * GitHub instead of a near-copy per combination.
 */
#define PMBOT_GQL_SUB_ISSUES 0x1u   /* `# needs: sub_issues` (Issue.parent) */
#define PMBOT_GQL_DEPENDENCIES 0x2u /* `# needs: dependencies` (Issue.blockedBy) */
#define PMBOT_GQL_ISSUE_TYPES 0x4u  /* `# needs: issue_types` (Issue.issueType,
                                       Repository.issueTypes) */

/*
 * Append to `out` document `doc` without the lines whose comment is
 * `# needs: FEATURE[, FEATURE...]` naming a feature in `missing` (a mask of
 * PMBOT_GQL_*); every other line is kept byte for byte, so with `missing`
 * 0, or a document without tags, `out` gets `doc` unchanged. Returns 0,
 * PMBOT_EINVALID when a tag names an unknown feature (`out` is left as it
 * was), PMBOT_ERROR when out of memory.
 */
int pmbot_gql_without(pmbot_buf *out, const char *doc, unsigned missing);

#endif
