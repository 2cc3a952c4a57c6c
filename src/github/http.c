#include "pmbot/github.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "github_int.h"
#include "pmbot/diag.h"
#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/net.h"
#include "pmbot/state.h"
#include "pmbot/datetime.h"
#include "pmbot/banned.h"

#ifndef PMBOT_VERSION
#define PMBOT_VERSION "0.0.0"
#endif

#define DEFAULT_CONNECT_TIMEOUT_MS 10000L
#define DEFAULT_TIMEOUT_MS 60000L
#define DEFAULT_MAX_RESPONSE ((size_t)64 << 20)
#define DEFAULT_PACE_MS 1000L
#define DEFAULT_MAX_RETRIES 3
#define DEFAULT_RETRY_BASE_MS 1000L
#define DEFAULT_MAX_RATE_WAITS 5
#define DEFAULT_MAX_WAIT_MS 3900000LL
/* GitHub: with neither retry-after nor a spent quota, wait at least a minute. */
#define RATE_BACKOFF_START_MS 60000LL
/* How much of GitHub's own error message an error repeats. */
#define SHOW_MAX 300

struct pmbot_github_client {
	pmbot_net *net;
	char *api_url;
	char *graphql_url;
	char *token;           /* NULL when anonymous */
	char *auth_header;     /* "Authorization: Bearer ..." or NULL */
	char *user_agent;
	char *cache_dir;       /* NULL: no cache */
	char token_id[PMBOT_SHA256_HEX_SIZE];
	long connect_timeout_ms;
	long timeout_ms;
	size_t max_response;
	long pace_ms;
	int max_retries;
	long retry_base_ms;
	int max_rate_waits;
	long long max_wait_ms;
	pmbot_github_now_fn now;
	pmbot_github_sleep_fn sleep;
	void *clock_payload;
	pmbot_github_event_fn on_event;
	void *event_payload;
	int gzip;
	int have_write;
	long long last_write_end_ms;
	/* The write budget and what it has spent, this run and earlier ones. */
	pmbot_github_budget budget;
	int budget_explicit;       /* opts or the environment gave it: the config may not */
	long long budget_max_wait_ms; /* 0: from the windows */
	long budget_hold;          /* writes of each window kept for after a pause */
	int budget_store_failed;   /* told once: the record could not be written */
	pmbot_github_spent spent;
	long long budget_resume_ms;
	pmbot_github_stats stats;
	/* The message of a failure while one public call composes it (set_error
	 * and the appends after it); finish() hands it to the caller's `err` and
	 * empties it before that call returns, so no message outlives a call. */
	pmbot_buf error;
	pmbot_buf scratch;
};

typedef struct {
	const char *method;
	const char *url;
	const char *body;      /* NULL: no body at all */
	size_t body_len;
	int graphql;
	int write;             /* paced */
	int safe;              /* may be repeated */
	int use_cache;
} request;

/* What the transport's hooks fill during one exchange. */
typedef struct {
	pmbot_github_client *c;
	pmbot_github_response *resp;
	const char *url;       /* the request's, for the origin a redirect must keep */
	int too_big;
	int location_userinfo; /* the last answer's Location names credentials */
} exchange;

void pmbot_github_options_init(pmbot_github_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
	opts->timeout_ms = DEFAULT_TIMEOUT_MS;
	opts->max_response = DEFAULT_MAX_RESPONSE;
	opts->pace_ms = DEFAULT_PACE_MS;
	opts->max_retries = DEFAULT_MAX_RETRIES;
	opts->retry_base_ms = DEFAULT_RETRY_BASE_MS;
	opts->max_rate_waits = DEFAULT_MAX_RATE_WAITS;
	opts->max_wait_ms = DEFAULT_MAX_WAIT_MS;
	opts->cache_dir = PMBOT_GITHUB_DEFAULT_CACHE_DIR;
}

int pmbot_github_pace_parse(long *out, const char *text)
{
	char *end;
	long v;

	if (!text)
		return PMBOT_EINVALID;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < 0)
		return PMBOT_EINVALID;
	*out = v;
	return 0;
}

void pmbot_github_response_free(pmbot_github_response *resp)
{
	pmbot_github_response init = PMBOT_GITHUB_RESPONSE_INIT;

	pmbot_buf_free(&resp->body);
	json_decref(resp->json);
	free(resp->etag);
	free(resp->next_url);
	free(resp->request_id);
	free(resp->error_type);
	*resp = init;
}

static const char *env_nonempty(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* A base URL, normalised (pmbot_net_base_url), or why not in words. */
static int copy_base_url(char **out, const char *url, const char *what, pmbot_buf *err)
{
	pmbot_buf show = PMBOT_BUF_INIT;
	const char *host;
	size_t host_len;
	int why, rc = pmbot_net_base_url(out, &host, &host_len, &why, url);

	if (rc == PMBOT_EINVALID && why == PMBOT_NET_URL_CREDENTIALS)
		pmbot_buf_note(err, "the %s must not hold credentials", what);
	else if (rc == PMBOT_EINVALID)
		pmbot_buf_note(err, "the %s \"%s\" is not an http(s) URL", what,
			pmbot_diag_show(&show, url, 200));
	pmbot_buf_free(&show);
	return rc;
}

static void emit(pmbot_github_client *c, pmbot_github_event_kind kind, const request *rq,
	long status, long long wait_ms, int attempt, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

/*
 * The budget from opts, else the environment, else the default, and what
 * earlier runs spent of it (a record that cannot be used is said, not fatal:
 * the budget then only knows this run's writes).
 */
static int open_budget(pmbot_github_client *c, const pmbot_github_options *opts, pmbot_buf *err)
{
	const char *text = opts->write_budget;
	pmbot_buf note = PMBOT_BUF_INIT;
	int rc;

	if (!text)
		text = env_nonempty("PMBOT_GITHUB_WRITE_BUDGET");
	c->budget_explicit = text != NULL;
	if (pmbot_github_budget_parse(&c->budget, text ? text : PMBOT_GITHUB_DEFAULT_WRITE_BUDGET,
		    err) < 0)
		return PMBOT_EINVALID;
	c->budget_max_wait_ms = opts->budget_max_wait_ms > 0 ? opts->budget_max_wait_ms : 0;
	if (!c->cache_dir)
		return 0;
	rc = pmbot_github_spent_load(&c->spent, c->cache_dir, c->api_url,
		c->now(c->clock_payload), &note);
	if (rc >= 0 && note.len)
		emit(c, PMBOT_GITHUB_EV_BUDGET, NULL, 0, 0, 0, "%s", note.buf);
	/* Times from the future, once lowered to now, must stay lowered in the next run. */
	if (rc == 1 && pmbot_github_spent_store(&c->spent, c->cache_dir, c->api_url) < 0)
		emit(c, PMBOT_GITHUB_EV_BUDGET, NULL, 0, 0, 0,
			"could not write the write budget record in %s: %s", c->cache_dir,
			strerror(errno));
	pmbot_buf_free(&note);
	return rc < 0 ? PMBOT_ERROR : 0;
}

int pmbot_github_client_config_budget(pmbot_github_client *c, const pmbot_github_budget *b)
{
	if (c->budget_explicit)
		return 0;
	c->budget = *b;
	return 1;
}

void pmbot_github_budget_hold(pmbot_github_client *c, long n)
{
	c->budget_hold = n > 0 ? n : 0;
}

long long pmbot_github_budget_free_at(pmbot_github_client *c, long hold)
{
	long long now, next;

	if (!c->budget.n)
		return 0;
	now = c->now(c->clock_payload);
	pmbot_github_spent_prune(&c->spent, &c->budget, now);
	next = pmbot_github_budget_next(&c->budget, c->spent.t, c->spent.n, now, hold);
	return next > now ? next : 0;
}

long long pmbot_github_budget_resume(const pmbot_github_client *c)
{
	return c->budget_resume_ms;
}

int pmbot_github_client_new(pmbot_github_client **out, const pmbot_github_options *opts,
	pmbot_buf *err)
{
	pmbot_github_options defaults;
	pmbot_github_client *c = NULL;
	const char *api, *graphql, *token;
	pmbot_buf b = PMBOT_BUF_INIT;
	int rc = PMBOT_ERROR;

	*out = NULL;
	if (!opts) {
		pmbot_github_options_init(&defaults);
		opts = &defaults;
	}
	if (!(c = calloc(1, sizeof(*c))))
		goto done;
	pmbot_buf_init(&c->error, 0);
	pmbot_buf_init(&c->scratch, 0);
	api = opts->api_url ? opts->api_url : env_nonempty("GITHUB_API_URL");
	graphql = opts->graphql_url ? opts->graphql_url : env_nonempty("GITHUB_GRAPHQL_URL");
	token = opts->token;
	if (!token && !(token = env_nonempty("GH_TOKEN")))
		token = env_nonempty("GITHUB_TOKEN");
	if ((rc = copy_base_url(&c->api_url, api ? api : PMBOT_GITHUB_DEFAULT_API_URL,
		     "API URL", err)) < 0 ||
	    (rc = copy_base_url(&c->graphql_url,
		     graphql ? graphql : PMBOT_GITHUB_DEFAULT_GRAPHQL_URL, "GraphQL URL", err)) < 0)
		goto done;
	rc = PMBOT_ERROR;
	if (token && *token) {
		/* Said without the token: the message may end up in a CI log. */
		if (!pmbot_net_is_token(token)) {
			if (err)
				pmbot_buf_puts(err, "the GitHub token holds characters that cannot "
					"go in an HTTP header (spaces, control characters or non-ASCII)");
			rc = PMBOT_EINVALID;
			goto done;
		}
		if (!(c->token = strdup(token)) ||
		    pmbot_buf_printf(&b, "Authorization: Bearer %s", token) < 0 ||
		    !(c->auth_header = pmbot_buf_detach(&b, NULL)) ||
		    pmbot_sha256_hex(c->token_id, token, strlen(token)) < 0)
			goto done;
	} else {
		memcpy(c->token_id, "anonymous", sizeof("anonymous"));
	}
	if (opts->user_agent && !pmbot_net_is_header_text(opts->user_agent)) {
		rc = PMBOT_EINVALID;
		if (err)
			pmbot_buf_puts(err, "the User-Agent must be printable ASCII, not empty");
		goto done;
	}
	c->user_agent = strdup(opts->user_agent ? opts->user_agent : "pm-bot/" PMBOT_VERSION);
	if (!c->user_agent || (opts->cache_dir && !(c->cache_dir = strdup(opts->cache_dir))))
		goto done;
	c->connect_timeout_ms = opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms
		: DEFAULT_CONNECT_TIMEOUT_MS;
	c->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : DEFAULT_TIMEOUT_MS;
	c->max_response = opts->max_response ? opts->max_response : DEFAULT_MAX_RESPONSE;
	c->pace_ms = opts->pace_ms > 0 ? opts->pace_ms : 0;
	c->max_retries = opts->max_retries > 0 ? opts->max_retries : 0;
	c->retry_base_ms = opts->retry_base_ms > 0 ? opts->retry_base_ms : 0;
	c->max_rate_waits = opts->max_rate_waits > 0 ? opts->max_rate_waits : 0;
	c->max_wait_ms = opts->max_wait_ms > 0 ? opts->max_wait_ms : 0;
	c->now = opts->now ? opts->now : pmbot_net_now_ms;
	c->sleep = opts->sleep ? opts->sleep : pmbot_net_sleep_ms;
	c->clock_payload = opts->clock_payload;
	c->on_event = opts->on_event;
	c->event_payload = opts->event_payload;
	c->gzip = pmbot_net_has_gzip();
	if ((rc = open_budget(c, opts, err)) < 0)
		goto done;
	rc = PMBOT_ERROR;
	if (pmbot_net_new(&c->net, err) < 0)
		goto done;
	*out = c;
	c = NULL;
	rc = 0;
done:
	if (rc == PMBOT_ERROR && err && !err->len)
		pmbot_buf_puts(err, "out of memory");
	pmbot_github_client_free(c);
	pmbot_buf_free(&b);
	return rc;
}

void pmbot_github_client_free(pmbot_github_client *c)
{
	if (!c)
		return;
	pmbot_net_free(c->net);
	free(c->api_url);
	free(c->graphql_url);
	pmbot_net_wipe_free(c->token);
	pmbot_net_wipe_free(c->auth_header);
	free(c->user_agent);
	free(c->cache_dir);
	pmbot_github_spent_free(&c->spent);
	pmbot_buf_free(&c->error);
	pmbot_buf_free(&c->scratch);
	free(c);
}

void pmbot_github_client_stats(pmbot_github_stats *out, const pmbot_github_client *c)
{
	*out = c->stats;
}

int pmbot_github_has_token(const pmbot_github_client *c)
{
	return c->token != NULL;
}

static void set_error(pmbot_github_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_error(pmbot_github_client *c, const char *fmt, ...)
{
	va_list ap;

	pmbot_buf_clear(&c->error);
	va_start(ap, fmt);
	if (pmbot_buf_vprintf(&c->error, fmt, ap) < 0) {
		pmbot_buf_clear(&c->error);
		pmbot_buf_puts(&c->error, "out of memory");
	}
	va_end(ap);
	/* GitHub's own messages are echoed: every outgoing sentence is redacted. */
	pmbot_net_redact(&c->error, c->token);
}

/* The end of every public request: the message composed in c->error goes to `err`. */
static int finish(pmbot_github_client *c, int rc, pmbot_buf *err)
{
	if (rc < 0 && err)
		(void)pmbot_buf_put(err, c->error.buf, c->error.len);
	pmbot_buf_clear(&c->error);
	return rc;
}

static void emit(pmbot_github_client *c, pmbot_github_event_kind kind, const request *rq,
	long status, long long wait_ms, int attempt, const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	pmbot_github_event ev;
	va_list ap;

	if (!c->on_event)
		return;
	va_start(ap, fmt);
	if ((rq && pmbot_buf_printf(&msg, "%s %s: ", rq->method, rq->url) < 0) ||
	    pmbot_buf_vprintf(&msg, fmt, ap) < 0) {
		va_end(ap);
		goto done;
	}
	va_end(ap);
	pmbot_net_redact(&msg, c->token);
	ev.kind = kind;
	ev.method = rq ? rq->method : "";
	ev.url = rq ? rq->url : "";
	ev.status = status;
	ev.wait_ms = wait_ms;
	ev.attempt = attempt;
	ev.message = msg.buf;
	c->on_event(c->event_payload, &ev);
done:
	pmbot_buf_free(&msg);
}

static void do_sleep(pmbot_github_client *c, long long ms)
{
	if (ms <= 0)
		return;
	c->stats.waited_ms += ms;
	c->sleep(c->clock_payload, ms);
}

static int rel_has_next(const char *v, const char *end)
{
	while (v < end) {
		const char *w = v;

		while (w < end && *w != ' ' && *w != '\t')
			w++;
		if (w - v == 4 && !strncasecmp(v, "next", 4))
			return 1;
		v = w;
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
	}
	return 0;
}

int pmbot_github_link_next(char **out, const char *link)
{
	const char *p = link;

	*out = NULL;
	for (;;) {
		const char *gt, *q;
		int next = 0;

		p += strspn(p, " \t,");
		if (*p != '<' || !(gt = strchr(p, '>')))
			return 0;
		/* Parameters: ; name [= token | "quoted string"] */
		for (q = gt + 1;;) {
			const char *name, *v = NULL, *vend = NULL;
			size_t name_len;

			q += strspn(q, " \t");
			if (*q != ';')
				break;
			q++;
			q += strspn(q, " \t");
			name = q;
			name_len = strcspn(q, "=;, \t");
			q += name_len;
			q += strspn(q, " \t");
			if (*q == '=') {
				q++;
				q += strspn(q, " \t");
				if (*q == '"') {
					v = ++q;
					while (*q && *q != '"')
						q += q[0] == '\\' && q[1] ? 2 : 1;
					vend = q;
					if (*q)
						q++;
				} else {
					v = q;
					q += strcspn(q, ";, \t");
					vend = q;
				}
			}
			if (name_len == 3 && !strncasecmp(name, "rel", 3) && v && rel_has_next(v, vend))
				next = 1;
		}
		if (next) {
			if (!(*out = strndup(p + 1, (size_t)(gt - p - 1))))
				return PMBOT_ERROR;
			return 0;
		}
		q += strspn(q, " \t");
		if (*q != ',')
			return 0;
		p = q;
	}
}

int pmbot_github_path_escape(pmbot_buf *out, const char *segment)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;

	for (p = (const unsigned char *)segment; *p; p++) {
		int plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
			    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' ||
			    *p == '~';
		int err = plain ? pmbot_buf_putc(out, (char)*p)
			: pmbot_buf_printf(out, "%%%c%c", hex[*p >> 4], hex[*p & 15]);

		if (err < 0)
			return PMBOT_ERROR;
	}
	return 0;
}

static long long parse_count(const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		return -1;
	return v;
}

static void clear_headers(pmbot_github_response *r)
{
	free(r->etag);
	free(r->next_url);
	free(r->request_id);
	r->etag = r->next_url = r->request_id = NULL;
	r->rate_remaining = r->rate_reset = r->retry_after = -1;
}

/* The value of header `name` in `line`, copied (NULL: another header, or out of memory). */
static int header_dup(char **out, const char *line, size_t len, const char *name)
{
	const char *v;
	size_t n;

	*out = NULL;
	if (!pmbot_net_header_is(&v, &n, line, len, name))
		return 0;
	return (*out = strndup(v, n)) ? 1 : -1;
}

/* Does an absolute Location value carry "user[:password]@" before its host? */
static int location_has_userinfo(const char *v, size_t len)
{
	const char *end = v + len, *p;

	for (p = v; p + 2 < end; p++)
		if (p[0] == ':' && p[1] == '/' && p[2] == '/')
			break;
	if (p + 2 >= end)
		return 0;
	for (p += 3; p < end && *p != '/' && *p != '?' && *p != '#' && *p != '\r' &&
	     *p != '\n'; p++)
		if (*p == '@')
			return 1;
	return 0;
}

static int on_header(void *payload, const char *data, size_t len)
{
	exchange *x = payload;
	pmbot_github_response *r = x->resp;
	const char *v;
	size_t vlen;
	char *val = NULL;
	int is;

	/* A new status line (redirect, 100 Continue): earlier headers are void. */
	if (len >= 5 && !memcmp(data, "HTTP/", 5)) {
		clear_headers(r);
		x->location_userinfo = 0;
		return 0;
	}
	if (pmbot_net_header_is(&v, &vlen, data, len, "location")) {
		/* Seen in the raw header: libcurl 8.23 and later drop the user
		 * and password from CURLINFO_REDIRECT_URL. */
		x->location_userinfo = location_has_userinfo(v, vlen);
	} else if ((is = header_dup(&val, data, len, "etag"))) {
		if (is < 0)
			goto oom;
		free(r->etag);
		r->etag = val;
	} else if ((is = header_dup(&val, data, len, "link"))) {
		char *next;

		if (is < 0 || pmbot_github_link_next(&next, val) < 0)
			goto oom;
		free(val);
		if (next) {
			free(r->next_url);
			r->next_url = next;
		}
	} else if ((is = header_dup(&val, data, len, "x-github-request-id"))) {
		if (is < 0)
			goto oom;
		free(r->request_id);
		r->request_id = val;
	} else if ((is = header_dup(&val, data, len, "x-ratelimit-remaining"))) {
		if (is < 0)
			goto oom;
		r->rate_remaining = parse_count(val);
		free(val);
	} else if ((is = header_dup(&val, data, len, "x-ratelimit-reset"))) {
		if (is < 0)
			goto oom;
		r->rate_reset = parse_count(val);
		free(val);
	} else if ((is = header_dup(&val, data, len, "retry-after"))) {
		long long n;

		if (is < 0)
			goto oom;
		/* Seconds, or (RFC 9110 allows it) an HTTP date. */
		if ((n = parse_count(val)) < 0) {
			long long when = pmbot_net_http_date(val);

			if (when >= 0) {
				long long now_s = x->c->now(x->c->clock_payload) / 1000;

				n = when > now_s ? when - now_s : 0;
			}
		}
		r->retry_after = n;
		free(val);
	}
	return 0;
oom:
	free(val);
	return -1;
}

#define MAX_REDIRECTS 5

/*
 * Renamed repositories answer 301 (307 for some moves); only a GET is
 * repeated, and only within the origin the token is meant for. The message
 * for a redirect that leaves it repeats only the target's origin (escaped:
 * the server chose it); nothing was sent there.
 */
static int on_redirect(void *payload, long status, const char *loc, char *why, size_t why_size)
{
	exchange *x = payload;
	pmbot_buf origin = PMBOT_BUF_INIT, show = PMBOT_BUF_INIT;
	size_t n = strcspn(loc, "/?#");

	if (!x->location_userinfo && pmbot_net_same_origin(x->url, loc)) {
		/* The redirect's own headers are not the answer's. */
		clear_headers(x->resp);
		x->resp->status = 0;
		return 1;
	}
	/* "scheme://host:port" ends at the first '/' after the "//". */
	if (!strncmp(loc + n, "//", 2))
		n += 2 + strcspn(loc + n + 2, "/?#");
	snprintf(why, why_size,
		"HTTP %ld redirects to another origin (%s); pm-bot follows redirects only "
		"within the API's origin, and sent nothing there", status,
		pmbot_buf_put(&origin, loc, n) < 0 || !origin.buf ? "?" :
		pmbot_diag_show(&show, origin.buf, 80));
	pmbot_buf_free(&origin);
	pmbot_buf_free(&show);
	return 0;
}

/* One exchange on the client's transport. */
static CURLcode perform(pmbot_github_client *c, const request *rq, pmbot_github_response *resp,
	const char *if_none_match, exchange *x)
{
	const char *headers[7];
	size_t n = 0;
	pmbot_buf line = PMBOT_BUF_INIT;
	/* Only a GET follows a redirect: repeating another kind could act twice. */
	const pmbot_net_request nrq = {
		.method = rq->method, .url = rq->url, .headers = headers,
		.user_agent = c->user_agent, .body = rq->body, .body_len = rq->body_len,
		.connect_timeout_ms = c->connect_timeout_ms, .timeout_ms = c->timeout_ms,
		.accept_gzip = c->gzip, .on_header = on_header, .header_payload = x,
		.on_redirect = strcmp(rq->method, "GET") ? NULL : on_redirect,
		.redirect_payload = x, .max_redirects = MAX_REDIRECTS,
	};
	pmbot_net_response nresp;
	CURLcode cc = CURLE_OUT_OF_MEMORY;

	memset(x, 0, sizeof(*x));
	x->c = c;
	x->resp = resp;
	x->url = rq->url;
	pmbot_github_response_free(resp);
	pmbot_buf_init(&resp->body, c->max_response);

	headers[n++] = "Accept: application/vnd.github+json";
	if (c->auth_header)
		headers[n++] = c->auth_header;
	headers[n++] = "X-GitHub-Api-Version: " PMBOT_GITHUB_API_VERSION;
	if (rq->body) {
		/* curl would default to a form type, and wait for 100-continue. */
		headers[n++] = rq->body_len ? "Content-Type: application/json" : "Content-Type:";
		headers[n++] = "Expect:";
	}
	if (if_none_match) {
		if (pmbot_buf_printf(&line, "If-None-Match: %s", if_none_match) < 0)
			goto done;
		headers[n++] = line.buf;
	}
	headers[n] = NULL;
	cc = pmbot_net_perform(&nresp, &resp->body, c->net, &nrq);
	resp->status = nresp.status;
	x->too_big = nresp.too_big;
done:
	pmbot_buf_free(&line);
	return cc;
}

static int contains_nocase(const char *s, const char *needle)
{
	size_t n = strlen(needle);

	for (; *s; s++)
		if (!strncasecmp(s, needle, n))
			return 1;
	return 0;
}

static int graphql_rate_limited(const json_t *doc)
{
	const json_t *errors = json_object_get(doc, "errors"), *e;
	size_t i;

	json_array_foreach(errors, i, e) {
		const char *type = json_string_value(json_object_get(e, "type"));

		if (type && !strcmp(type, "RATE_LIMITED"))
			return 1;
	}
	return 0;
}

/*
 * GitHub's rules: 429 is always a rate limit; 403 is one when it says so
 * with retry-after or a spent quota, or (secondary limits sometimes carry
 * neither) in its message, as Octokit's throttling plugin also decides.
 * A GraphQL limit can come inside a 200 as an error of type RATE_LIMITED.
 */
static int rate_limited(const request *rq, const pmbot_github_response *r)
{
	const char *msg;

	if (r->status == 429)
		return 1;
	if (r->status == 403) {
		if (r->retry_after >= 0 || r->rate_remaining == 0)
			return 1;
		msg = json_string_value(json_object_get(r->json, "message"));
		return msg && contains_nocase(msg, "rate limit");
	}
	return rq->graphql && r->status == 200 && graphql_rate_limited(r->json);
}

static int is_mutation(const char *q)
{
	for (;;) {
		q += strspn(q, " \t\r\n,\xef\xbb\xbf");
		if (*q != '#')
			break;
		q += strcspn(q, "\r\n");
	}
	return !strncmp(q, "mutation", 8) &&
	       !(q[8] == '_' || (q[8] >= '0' && q[8] <= '9') ||
		 ((q[8] | 0x20) >= 'a' && (q[8] | 0x20) <= 'z'));
}

/* GitHub's message and, for 422, what the first error says. */
static void http_error(pmbot_github_client *c, const request *rq,
	const pmbot_github_response *r)
{
	pmbot_buf show = PMBOT_BUF_INIT, detail = PMBOT_BUF_INIT, joined = PMBOT_BUF_INIT;
	const char *msg = json_string_value(json_object_get(r->json, "message"));
	const json_t *first = json_array_get(json_object_get(r->json, "errors"), 0);

	if (first) {
		const char *res = json_string_value(json_object_get(first, "resource"));
		const char *field = json_string_value(json_object_get(first, "field"));
		const char *code = json_string_value(json_object_get(first, "code"));
		const char *m = json_string_value(json_object_get(first, "message"));

		if (json_is_string(first))
			m = json_string_value(first);
		pmbot_buf_puts(&detail, " (");
		if (res || field)
			pmbot_buf_printf(&detail, "%s%s%s: ", res ? res : "", res && field ? "." : "",
				field ? field : "");
		pmbot_buf_puts(&detail, code ? code : "");
		if (m)
			pmbot_buf_printf(&detail, "%s%s", code ? ", " : "", m);
		pmbot_buf_putc(&detail, ')');
	}
	if (msg || detail.len) {
		/* Escaped as one piece, so the cut applies to the whole text. */
		if (msg && pmbot_buf_puts(&joined, msg) < 0)
			pmbot_buf_clear(&joined);
		pmbot_buf_puts(&joined, detail.buf);
		set_error(c, "%s %s: HTTP %ld: %s", rq->method, rq->url, r->status,
			pmbot_diag_show(&show, joined.buf, SHOW_MAX));
	} else {
		set_error(c, "%s %s: HTTP %ld", rq->method, rq->url, r->status);
	}
	/* A 401 is almost always the token: say which variables pm-bot read. */
	if (r->status == 401)
		pmbot_buf_puts(&c->error, c->token ?
			". GitHub refused the token (expired, revoked, or for another host?): "
			"check GH_TOKEN or GITHUB_TOKEN" :
			". No token was given: set GH_TOKEN or GITHUB_TOKEN (in the Action, "
			"GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }} or a token with repo and project access)");
	pmbot_buf_free(&show);
	pmbot_buf_free(&detail);
	pmbot_buf_free(&joined);
}

static void graphql_error(pmbot_github_client *c, const request *rq,
	const pmbot_github_response *r)
{
	pmbot_buf show = PMBOT_BUF_INIT, path = PMBOT_BUF_INIT;
	const json_t *errors = json_object_get(r->json, "errors");
	const json_t *first = json_array_get(errors, 0), *seg;
	const char *msg = json_string_value(json_object_get(first, "message"));
	size_t i, n = json_array_size(errors);

	json_array_foreach(json_object_get(first, "path"), i, seg) {
		if (json_is_string(seg))
			pmbot_buf_printf(&path, "%s%s", i ? "/" : "", json_string_value(seg));
		else if (json_is_integer(seg))
			pmbot_buf_printf(&path, "%s%" JSON_INTEGER_FORMAT, i ? "/" : "",
				json_integer_value(seg));
	}
	set_error(c, "%s %s: GraphQL error %s: %s%s%s%s", rq->method, rq->url,
		r->error_type ? r->error_type : "(no type)",
		pmbot_diag_show(&show, msg ? msg : "(no message)", SHOW_MAX),
		path.len ? " at " : "", path.buf, n > 1 ? " (and more errors)" : "");
	pmbot_buf_free(&show);
	pmbot_buf_free(&path);
}

static void pace(pmbot_github_client *c, const request *rq, int attempt)
{
	long long now, wait;

	if (!c->pace_ms || !c->have_write)
		return;
	now = c->now(c->clock_payload);
	wait = c->last_write_end_ms + c->pace_ms - now;
	/* A clock that went backwards must not stall us for longer than the pace. */
	if (wait > c->pace_ms)
		wait = c->pace_ms;
	if (wait <= 0)
		return;
	emit(c, PMBOT_GITHUB_EV_PACE, rq, 0, wait, attempt, "pacing writes; waiting %lld ms",
		wait);
	do_sleep(c, wait);
}

/* ---- the write budget ---------------------------------------------------- */

/* Within a run, waiting is fine for a window that frees soon; an hour's is the next run's. */
static long long budget_max_wait(const pmbot_github_client *c)
{
	long long w = PMBOT_GITHUB_BUDGET_MAX_WAIT_MS;
	size_t i;

	if (c->budget_max_wait_ms)
		return c->budget_max_wait_ms;
	for (i = 0; i < c->budget.n; i++)
		if ((long long)c->budget.w[i].seconds * 1000 < w)
			w = (long long)c->budget.w[i].seconds * 1000;
	return w;
}

static void budget_text(pmbot_buf *out, const pmbot_github_budget *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		pmbot_buf_printf(out, "%s%ld/%lds", i ? "," : "", b->w[i].count, b->w[i].seconds);
}

/* Stop the write unsent: the budget frees at `resume_ms`. */
static int budget_stop(pmbot_github_client *c, const request *rq, long long resume_ms,
	const char *why)
{
	pmbot_buf when = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;

	c->budget_resume_ms = resume_ms;
	budget_text(&text, &c->budget);
	/* Rounded up: "after T" must not name a second at which it is still spent. */
	if (pmbot_datetime_format(&when, (resume_ms + 999) / 1000) < 0)
		pmbot_buf_puts(&when, "(a time out of range)");
	set_error(c, "%s %s: not sent: %s; writes resume after %s (write budget %s)", rq->method,
		rq->url, why, when.buf, text.buf);
	emit(c, PMBOT_GITHUB_EV_BUDGET, rq, 0, 0, 0, "not sent: %s; resumes after %s", why,
		when.buf);
	pmbot_buf_free(&when);
	pmbot_buf_free(&text);
	return PMBOT_GITHUB_EBUDGET;
}

/*
 * Before a write: go when every window has room, wait when one frees
 * within budget_max_wait(), else stop (PMBOT_GITHUB_EBUDGET) so the run
 * can end cleanly instead of sleeping for most of an hour.
 */
static int budget_gate(pmbot_github_client *c, const request *rq, int attempt)
{
	long long now, next, wait;

	if (!c->budget.n)
		return 0;
	now = c->now(c->clock_payload);
	pmbot_github_spent_prune(&c->spent, &c->budget, now);
	next = pmbot_github_budget_next(&c->budget, c->spent.t, c->spent.n, now, c->budget_hold);
	if (next <= now)
		return 0;
	wait = next - now;
	if (wait > budget_max_wait(c))
		return budget_stop(c, rq, next, "the write budget is spent");
	emit(c, PMBOT_GITHUB_EV_BUDGET, rq, 0, wait, attempt,
		"write budget: waiting %lld ms for a window to free", wait);
	do_sleep(c, wait);
	return 0;
}

/* A write went out (or may have): it counts, here and in the next run's record. */
static void budget_spend(pmbot_github_client *c, const request *rq, int attempt)
{
	long long now;

	if (!c->budget.n)
		return;
	now = c->now(c->clock_payload);
	if (pmbot_github_spent_add(&c->spent, now) < 0)
		return; /* out of memory: the pace still spaces writes */
	pmbot_github_spent_prune(&c->spent, &c->budget, now);
	if (c->cache_dir && pmbot_github_spent_store(&c->spent, c->cache_dir, c->api_url) < 0 &&
	    !c->budget_store_failed) {
		c->budget_store_failed = 1;
		emit(c, PMBOT_GITHUB_EV_BUDGET, rq, 0, 0, attempt,
			"could not write the write budget record in %s: %s (the next run will not "
			"know what this one wrote)", c->cache_dir, strerror(errno));
	}
}

/* The wait GitHub asks for, and in words why. */
static long long rate_wait(pmbot_github_client *c, const pmbot_github_response *r,
	long long *backoff, const char **why)
{
	long long now, w;

	if (r->retry_after >= 0) {
		*why = "retry-after";
		return r->retry_after * 1000;
	}
	if (r->rate_remaining == 0 && r->rate_reset >= 0) {
		*why = "until x-ratelimit-reset";
		now = c->now(c->clock_payload);
		w = r->rate_reset * 1000 - now;
		return w > 0 ? w : 0;
	}
	*why = "backing off";
	w = *backoff;
	*backoff = w > (1LL << 40) ? w : w * 2;
	return w;
}

static long long retry_wait(const pmbot_github_client *c, const pmbot_github_response *r,
	int retries)
{
	if (r->status >= 500 && r->retry_after >= 0)
		return r->retry_after * 1000;
	return pmbot_net_backoff(c->retry_base_ms, retries, 1LL << 40);
}

static int parse_body(pmbot_github_response *r)
{
	json_error_t jerr;

	if (!r->body.len)
		return 0;
	r->json = json_loadb(r->body.buf, r->body.len, JSON_DECODE_ANY, &jerr);
	return r->json ? 0 : -1;
}

/* One request across its attempts. */
typedef struct {
	const request *rq;
	pmbot_github_response *resp;
	pmbot_github_cache_entry cached;
	int have_cached;
	char key[PMBOT_SHA256_HEX_SIZE];
	int attempt;
	int retries;
	int rate_waits;
	long long backoff;   /* next rate-limit back-off without headers */
	int rc;              /* the outcome once no attempt is left */
} run;

#define UNKNOWN_OUTCOME "; whether the request took effect is unknown"

/* Another try of a request that is safe to repeat, if any is left: 1. */
static int schedule_retry(pmbot_github_client *c, run *r, const char *what)
{
	long long wait;

	if (!r->rq->safe || r->retries >= c->max_retries)
		return 0;
	wait = retry_wait(c, r->resp, r->retries);
	r->retries++;
	c->stats.retries++;
	emit(c, PMBOT_GITHUB_EV_RETRY, r->rq, r->resp->status, wait, r->attempt,
		"%s; retry %d of %d in %lld ms", what, r->retries, c->max_retries, wait);
	do_sleep(c, wait);
	return 1;
}

/*
 * GitHub refused the request without performing it, so any kind may be
 * repeated once the limit allows: 1 after waiting, 0 (ERATELIMIT) when the
 * wait is too long or the waits are used up.
 */
static int schedule_rate_wait(pmbot_github_client *c, run *r)
{
	const pmbot_github_response *resp = r->resp;
	const request *rq = r->rq;
	const char *why;
	long long wait = rate_wait(c, resp, &r->backoff, &why);

	r->rc = PMBOT_GITHUB_ERATELIMIT;
	/* A write told to wait long is the budget's stop, not a sleep. */
	if (rq->write && c->budget.n && wait > budget_max_wait(c)) {
		pmbot_buf say = PMBOT_BUF_INIT;

		pmbot_buf_printf(&say, "HTTP %ld, rate limited; GitHub asks to wait %lld s (%s)",
			resp->status, (wait + 999) / 1000, why);
		r->rc = budget_stop(c, rq, c->now(c->clock_payload) + wait,
			say.len ? say.buf : "rate limited");
		pmbot_buf_free(&say);
		return 0;
	}
	if (r->rate_waits >= c->max_rate_waits) {
		set_error(c, "%s %s: HTTP %ld: still rate limited after %d waits", rq->method,
			rq->url, resp->status, r->rate_waits);
		return 0;
	}
	if (wait > c->max_wait_ms) {
		set_error(c, "%s %s: HTTP %ld: rate limited; GitHub asks to wait %lld s (%s), "
			"longer than the %lld s allowed", rq->method, rq->url, resp->status,
			(wait + 999) / 1000, why, c->max_wait_ms / 1000);
		return 0;
	}
	r->rate_waits++;
	c->stats.rate_limited++;
	emit(c, PMBOT_GITHUB_EV_RATE_LIMIT, rq, resp->status, wait, r->attempt,
		"HTTP %ld, rate limited; waiting %lld s (%s)", resp->status, (wait + 999) / 1000,
		why);
	do_sleep(c, wait);
	return 1;
}

/* No complete answer arrived. 1: try again. */
static int after_failure(pmbot_github_client *c, run *r, CURLcode cc, int too_big)
{
	const request *rq = r->rq;
	const char *what = pmbot_net_error(c->net, cc);

	if (too_big) {
		r->rc = rq->safe ? PMBOT_GITHUB_ETOOBIG : PMBOT_GITHUB_EUNKNOWN_OUTCOME;
		set_error(c, "%s %s: the answer is larger than %zu bytes%s", rq->method, rq->url,
			c->max_response, rq->safe ? "" : UNKNOWN_OUTCOME);
		return 0;
	}
	if (pmbot_net_retryable(cc) && schedule_retry(c, r, what))
		return 1;
	if (!rq->safe && !pmbot_net_never_sent(cc)) {
		r->rc = PMBOT_GITHUB_EUNKNOWN_OUTCOME;
		set_error(c, "%s %s: %s" UNKNOWN_OUTCOME, rq->method, rq->url, what);
	} else {
		r->rc = PMBOT_GITHUB_ETRANSPORT;
		set_error(c, "%s %s: %s%s", rq->method, rq->url, what,
			r->retries ? " (after retries)" : "");
	}
	return 0;
}

/* 304 to our If-None-Match: the cached body is the answer. 1: try again. */
static int serve_cached(pmbot_github_client *c, run *r)
{
	pmbot_github_response *resp = r->resp;

	c->stats.not_modified++;
	r->rc = PMBOT_ERROR;
	pmbot_buf_clear(&resp->body);
	if (pmbot_buf_put(&resp->body, r->cached.body.buf, r->cached.body.len) < 0)
		return 0;
	if (parse_body(resp) < 0) {
		/* A damaged entry: forget it and ask again unconditionally. */
		pmbot_github_cache_drop(c->cache_dir, r->key);
		pmbot_github_cache_entry_free(&r->cached);
		r->have_cached = 0;
		return 1;
	}
	resp->status = 200;
	resp->from_cache = 1;
	if ((!resp->etag && !(resp->etag = strdup(r->cached.etag))) ||
	    (!resp->next_url && r->cached.next_url &&
	     !(resp->next_url = strdup(r->cached.next_url))))
		return 0;
	r->rc = 0;
	return 0;
}

/* A 2xx: GraphQL errors, then the cache. */
static int after_success(pmbot_github_client *c, run *r)
{
	pmbot_github_response *resp = r->resp;
	const request *rq = r->rq;

	if (rq->graphql) {
		const json_t *errors = json_object_get(resp->json, "errors");

		if (json_array_size(errors)) {
			const char *type = json_string_value(
				json_object_get(json_array_get(errors, 0), "type"));

			r->rc = PMBOT_ERROR;
			if (type && !(resp->error_type = strdup(type)))
				return 0;
			graphql_error(c, rq, resp);
			r->rc = PMBOT_GITHUB_EGRAPHQL;
			return 0;
		}
		if (!json_is_object(json_object_get(resp->json, "data"))) {
			r->rc = rq->safe ? PMBOT_ERROR : PMBOT_GITHUB_EUNKNOWN_OUTCOME;
			set_error(c, "%s %s: a GraphQL answer without data or errors%s", rq->method,
				rq->url, rq->safe ? "" : UNKNOWN_OUTCOME);
			return 0;
		}
	}
	if (rq->use_cache && c->cache_dir && resp->status == 200 && resp->etag) {
		if (pmbot_github_cache_store(c->cache_dir, r->key, rq->url, resp->etag,
			    resp->next_url, resp->body.buf, resp->body.len) < 0)
			emit(c, PMBOT_GITHUB_EV_CACHE_ERROR, rq, resp->status, 0, r->attempt,
				"could not write the ETag cache in %s: %s", c->cache_dir,
				strerror(errno));
	} else if (r->have_cached) {
		/* The entry no longer describes the resource. */
		pmbot_github_cache_drop(c->cache_dir, r->key);
	}
	r->rc = 0;
	return 0;
}

/* A complete answer arrived. 1: try again. */
static int after_answer(pmbot_github_client *c, run *r)
{
	pmbot_github_response *resp = r->resp;
	const request *rq = r->rq;
	int is_2xx = resp->status >= 200 && resp->status < 300;
	char what[32];

	emit(c, PMBOT_GITHUB_EV_RESPONSE, rq, resp->status, 0, r->attempt, "HTTP %ld%s",
		resp->status, resp->status == 304 && r->have_cached ? " (cached)" : "");
	if (resp->status == 304 && r->have_cached)
		return serve_cached(c, r);
	/* Error bodies are JSON too, but not always: only 2xx must parse. */
	if (parse_body(resp) < 0 && is_2xx) {
		r->rc = rq->safe ? PMBOT_ERROR : PMBOT_GITHUB_EUNKNOWN_OUTCOME;
		set_error(c, "%s %s: HTTP %ld with a body that is not JSON%s", rq->method, rq->url,
			resp->status, rq->safe ? "" : UNKNOWN_OUTCOME);
		return 0;
	}
	if (rate_limited(rq, resp))
		return schedule_rate_wait(c, r);
	if (resp->status >= 500) {
		snprintf(what, sizeof(what), "HTTP %ld", resp->status);
		if (schedule_retry(c, r, what))
			return 1;
		http_error(c, rq, resp);
		r->rc = rq->safe ? PMBOT_GITHUB_EHTTP : PMBOT_GITHUB_EUNKNOWN_OUTCOME;
		if (!rq->safe)
			pmbot_buf_puts(&c->error, UNKNOWN_OUTCOME);
		return 0;
	}
	if (!is_2xx) {
		http_error(c, rq, resp);
		r->rc = PMBOT_GITHUB_EHTTP;
		return 0;
	}
	return after_success(c, r);
}

/* Everything one request needs: pacing, the attempts, waits, cache. */
static int execute(pmbot_github_response *resp, pmbot_github_client *c, const request *rq)
{
	run r;
	CURLcode cc;
	exchange x;
	int again;

	memset(&r, 0, sizeof(r));
	r.rq = rq;
	r.resp = resp;
	r.backoff = RATE_BACKOFF_START_MS;
	pmbot_buf_init(&r.cached.body, 0);
	r.rc = PMBOT_ERROR;
	pmbot_buf_clear(&c->error);
	if (rq->use_cache && c->cache_dir) {
		int found;

		if (pmbot_github_cache_key(r.key, rq->url, c->token_id) < 0)
			goto done;
		found = pmbot_github_cache_load(&r.cached, c->cache_dir, r.key, rq->url,
			c->max_response);
		if (found == PMBOT_ERROR)
			goto done;
		r.have_cached = found == 0;
	}
	do {
		r.attempt++;
		if (rq->write) {
			pace(c, rq, r.attempt);
			if ((r.rc = budget_gate(c, rq, r.attempt)) < 0)
				break;
		}
		cc = perform(c, rq, resp, r.have_cached ? r.cached.etag : NULL, &x);
		c->stats.requests++;
		if (rq->graphql)
			c->stats.graphql++;
		else
			c->stats.rest++;
		if (rq->write) {
			c->stats.writes++;
			c->have_write = 1;
			c->last_write_end_ms = c->now(c->clock_payload);
			budget_spend(c, rq, r.attempt);
		}
		if (cc == CURLE_OUT_OF_MEMORY) {
			r.rc = PMBOT_ERROR;
			break;
		}
		again = cc == CURLE_OK ? after_answer(c, &r) : after_failure(c, &r, cc, x.too_big);
	} while (again);
done:
	if (r.rc == PMBOT_ERROR && !c->error.len)
		set_error(c, "%s %s: out of memory", rq->method, rq->url);
	pmbot_github_cache_entry_free(&r.cached);
	return r.rc;
}

/* Is `url` the API URL itself or below it? The token may only go there. */
static int under_base(const char *base, const char *url)
{
	size_t n = strlen(base);

	return !strncmp(url, base, n) && (url[n] == '/' || url[n] == '?' || !url[n]);
}

static int full_url(pmbot_buf *out, pmbot_github_client *c, const char *path)
{
	if (!pmbot_net_is_token(path)) {
		set_error(c, "a request path must be percent-encoded ASCII without spaces");
		return PMBOT_EINVALID;
	}
	if (!strncmp(path, "http://", 7) || !strncmp(path, "https://", 8)) {
		if (!under_base(c->api_url, path)) {
			set_error(c, "%s is not under the API URL %s; the token is not sent there",
				path, c->api_url);
			return PMBOT_EINVALID;
		}
		return pmbot_buf_puts(out, path) < 0 ? PMBOT_ERROR : 0;
	}
	if (path[0] != '/') {
		set_error(c, "a REST path must start with '/': %s", path);
		return PMBOT_EINVALID;
	}
	return pmbot_buf_printf(out, "%s%s", c->api_url, path) < 0 ? PMBOT_ERROR : 0;
}

static int rest_flags(pmbot_github_response *resp, pmbot_github_client *c,
	const char *method, const char *path_and_query, const json_t *body, unsigned flags)
{
	pmbot_buf url = PMBOT_BUF_INIT, payload = PMBOT_BUF_INIT;
	request rq;
	int rc;

	memset(&rq, 0, sizeof(rq));
	pmbot_buf_clear(&c->error);
	pmbot_github_response_free(resp);
	if (!strcmp(method, "GET")) {
		rq.method = "GET";
		rq.safe = 1;
		rq.use_cache = !(flags & PMBOT_GITHUB_NO_CACHE);
	} else if (!strcmp(method, "POST") || !strcmp(method, "PATCH") ||
		   !strcmp(method, "PUT") || !strcmp(method, "DELETE")) {
		rq.method = method;
		rq.write = 1;
		rq.safe = (flags & PMBOT_GITHUB_IDEMPOTENT) != 0;
	} else {
		set_error(c, "unsupported HTTP method");
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (body && rq.safe && !rq.write) {
		set_error(c, "a GET has no body");
		rc = PMBOT_EINVALID;
		goto done;
	}
	if ((rc = full_url(&url, c, path_and_query)) < 0)
		goto done;
	rc = PMBOT_ERROR;
	if (body) {
		if (pmbot_json_canonical(&payload, body) < 0) {
			set_error(c, "%s %s: the body cannot be written as JSON", method, url.buf);
			goto done;
		}
		rq.body = payload.buf;
		rq.body_len = payload.len;
	} else if (strcmp(method, "GET") && strcmp(method, "DELETE")) {
		/* GitHub wants Content-Length: 0 on a bodiless PUT. */
		rq.body = "";
	}
	rq.url = url.buf;
	rc = execute(resp, c, &rq);
done:
	if (rc == PMBOT_ERROR && !c->error.len)
		set_error(c, "out of memory");
	pmbot_buf_free(&url);
	pmbot_buf_free(&payload);
	return rc;
}

int pmbot_github_rest_flags(pmbot_github_response *resp, pmbot_github_client *c,
	const char *method, const char *path_and_query, const json_t *body, unsigned flags,
	pmbot_buf *err)
{
	return finish(c, rest_flags(resp, c, method, path_and_query, body, flags), err);
}

int pmbot_github_rest(pmbot_github_response *resp, pmbot_github_client *c, const char *method,
	const char *path_and_query, const json_t *body, pmbot_buf *err)
{
	return pmbot_github_rest_flags(resp, c, method, path_and_query, body, 0, err);
}

static int has_query_param(const char *url, const char *name)
{
	const char *q = strchr(url, '?');
	size_t n = strlen(name);

	while (q) {
		q++;
		if (!strncmp(q, name, n) && q[n] == '=')
			return 1;
		q = strchr(q, '&');
	}
	return 0;
}

static int rest_paginate(json_t **out, pmbot_github_client *c,
	const char *path_and_query, unsigned flags)
{
	pmbot_github_response resp = PMBOT_GITHUB_RESPONSE_INIT;
	pmbot_buf url = PMBOT_BUF_INIT;
	json_t *all = NULL;
	char *next = NULL;
	int rc = PMBOT_ERROR;

	*out = NULL;
	pmbot_buf_clear(&c->error);
	if (!(all = json_array()) || pmbot_buf_puts(&url, path_and_query) < 0)
		goto done;
	if (!has_query_param(url.buf, "per_page") &&
	    pmbot_buf_printf(&url, "%cper_page=100", strchr(url.buf, '?') ? '&' : '?') < 0)
		goto done;
	for (;;) {
		if ((rc = rest_flags(&resp, c, "GET", url.buf, NULL, flags)) < 0)
			goto done;
		if (!json_is_array(resp.json)) {
			rc = PMBOT_EINVALID;
			set_error(c, "GET %s: a list page that is not a JSON array", url.buf);
			goto done;
		}
		rc = PMBOT_ERROR;
		if (json_array_extend(all, resp.json) < 0)
			goto done;
		if (!resp.next_url)
			break;
		next = resp.next_url;
		resp.next_url = NULL;
		/* Checked here too, so the message names the Link header. */
		if (!under_base(c->api_url, next) || !strcmp(next, url.buf) ||
		    (url.buf[0] == '/' && !strcmp(next + strlen(c->api_url), url.buf))) {
			rc = PMBOT_EINVALID;
			set_error(c, "GET %s: the Link header's next page %s is %s", url.buf, next,
				under_base(c->api_url, next) ? "the same page again"
				: "not under the API URL; the token is not sent there");
			goto done;
		}
		pmbot_buf_clear(&url);
		if (pmbot_buf_puts(&url, next) < 0)
			goto done;
		free(next);
		next = NULL;
	}
	*out = all;
	all = NULL;
	rc = 0;
done:
	if (rc == PMBOT_ERROR && !c->error.len)
		set_error(c, "out of memory");
	free(next);
	json_decref(all);
	pmbot_buf_free(&url);
	pmbot_github_response_free(&resp);
	return rc;
}

int pmbot_github_rest_paginate(json_t **out, pmbot_github_client *c,
	const char *path_and_query, unsigned flags, pmbot_buf *err)
{
	return finish(c, rest_paginate(out, c, path_and_query, flags), err);
}

static int graphql_ex(pmbot_github_response *resp, pmbot_github_client *c,
	const char *query, const json_t *variables, unsigned flags)
{
	pmbot_buf payload = PMBOT_BUF_INIT;
	json_t *doc = NULL;
	request rq;
	int rc = PMBOT_ERROR;

	pmbot_buf_clear(&c->error);
	pmbot_github_response_free(resp);
	memset(&rq, 0, sizeof(rq));
	if (variables && !json_is_object(variables)) {
		set_error(c, "GraphQL variables must be an object");
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (!(doc = json_object()) || json_object_set_new(doc, "query", json_string(query)) < 0 ||
	    (variables && json_object_set_new(doc, "variables", json_deep_copy(variables)) < 0) ||
	    pmbot_json_canonical(&payload, doc) < 0) {
		set_error(c, "the GraphQL request cannot be written as JSON (is the query UTF-8?)");
		goto done;
	}
	rq.method = "POST";
	rq.url = c->graphql_url;
	rq.body = payload.buf;
	rq.body_len = payload.len;
	rq.graphql = 1;
	rq.write = is_mutation(query);
	rq.safe = !rq.write || (flags & PMBOT_GITHUB_IDEMPOTENT);
	rc = execute(resp, c, &rq);
done:
	json_decref(doc);
	pmbot_buf_free(&payload);
	return rc;
}

int pmbot_github_graphql_ex(pmbot_github_response *resp, pmbot_github_client *c,
	const char *query, const json_t *variables, unsigned flags, pmbot_buf *err)
{
	return finish(c, graphql_ex(resp, c, query, variables, flags), err);
}

int pmbot_github_graphql(json_t **data_out, pmbot_github_client *c, const char *query,
	const json_t *variables, pmbot_buf *err)
{
	pmbot_github_response resp = PMBOT_GITHUB_RESPONSE_INIT;
	int rc;

	*data_out = NULL;
	if ((rc = pmbot_github_graphql_ex(&resp, c, query, variables, 0, err)) < 0)
		goto done;
	*data_out = json_incref(json_object_get(resp.json, "data"));
done:
	pmbot_github_response_free(&resp);
	return rc;
}
