#include "pmbot/net.h"

#include <curl/curl.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "pmbot/dl.h"
#include "pmbot/banned.h"

/*
 * libcurl is opened when the first exchange needs it, not linked: mapping
 * and relocating it with its dependencies (TLS, Kerberos, LDAP, IDN, ...)
 * cost every process about 9 ms and 6 MB, and validate, plan and a local
 * apply never speak HTTP (git keeps libcurl out of its main binary for the
 * same reason). The soname is libcurl's ABI since 7.16; it stays loaded
 * (a TLS library's exit handlers must not outlive their code).
 */
#define LIBCURL_SONAME "libcurl.so.4"

/* Said where package tools look for it (pmbot/dl.h). */
PMBOT_DL_NOTE(dlopen_note, "[{\"feature\":\"http\",\"description\":\"GitHub and model "
	"provider requests\",\"priority\":\"required\",\"soname\":[\"" LIBCURL_SONAME "\"]}]");

struct libcurl {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *e, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *e);
	CURLcode (*easy_getinfo)(CURL *e, CURLINFO info, ...);
	void (*easy_reset)(CURL *e);
	void (*easy_cleanup)(CURL *e);
	const char *(*easy_strerror)(CURLcode cc);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
	CURLU *(*url)(void);
	CURLUcode (*url_set)(CURLU *u, CURLUPart part, const char *content, unsigned int flags);
	CURLUcode (*url_get)(CURLU *u, CURLUPart part, char **content, unsigned int flags);
	void (*url_cleanup)(CURLU *u);
	void (*free)(void *p);
	time_t (*getdate)(const char *s, const time_t *unused);
	char *(*version)(void);
	curl_version_info_data *(*version_info)(CURLversion age);
};

#define SYM(m) { "curl_" #m, offsetof(struct libcurl, m) }
static const struct pmbot_dl_sym libcurl_syms[] = {
	SYM(global_init), SYM(global_cleanup), SYM(easy_init), SYM(easy_setopt),
	SYM(easy_perform), SYM(easy_getinfo), SYM(easy_reset), SYM(easy_cleanup),
	SYM(easy_strerror), SYM(slist_append), SYM(slist_free_all), SYM(url), SYM(url_set),
	SYM(url_get), SYM(url_cleanup), SYM(free), SYM(getdate), SYM(version),
	SYM(version_info),
};
#undef SYM

static struct libcurl lc;
static struct pmbot_dl_lib lc_lib = PMBOT_DL_LIB(LIBCURL_SONAME, "libcurl", libcurl_syms, lc);
static int lc_inits;    /* pmbot_net_global_init calls not yet cleaned up */

int pmbot_net_global_init(pmbot_buf *err)
{
	if (pmbot_dl_load(&lc_lib, err) < 0)
		return PMBOT_ERROR;
	if (lc.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		pmbot_buf_note(err, "libcurl failed to initialise");
		return PMBOT_ERROR;
	}
	lc_inits++;
	return 0;
}

void pmbot_net_global_cleanup(void)
{
	if (lc_inits > 0) {
		lc_inits--;
		lc.global_cleanup();
	}
}

const char *pmbot_net_version(pmbot_buf *err)
{
	return pmbot_dl_load(&lc_lib, err) < 0 ? NULL : lc.version();
}

long long pmbot_net_http_date(const char *s)
{
	time_t t;

	if (pmbot_dl_load(&lc_lib, NULL) < 0 || (t = lc.getdate(s, NULL)) < 0)
		return -1;
	return (long long)t;
}

/* The parts of an absolute `url` that make its origin; -1 when it has none. */
static int origin_of(const char *url, char **scheme, char **host, char **port)
{
	/* A fresh handle: one holding a URL would resolve `url` against it. */
	CURLU *u = lc.url();
	char *user = NULL;
	int rc = -1;

	if (u && lc.url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    lc.url_get(u, CURLUPART_SCHEME, scheme, 0) == CURLUE_OK &&
	    lc.url_get(u, CURLUPART_HOST, host, 0) == CURLUE_OK &&
	    lc.url_get(u, CURLUPART_PORT, port, CURLU_DEFAULT_PORT) == CURLUE_OK)
		/* Credentials in a location would have curl send them: not our origin. */
		rc = lc.url_get(u, CURLUPART_USER, &user, 0) == CURLUE_NO_USER ? 0 : -1;
	lc.free(user);
	lc.url_cleanup(u);
	return rc;
}

int pmbot_net_same_origin(const char *base, const char *url)
{
	char *s1 = NULL, *h1 = NULL, *p1 = NULL, *s2 = NULL, *h2 = NULL, *p2 = NULL;
	int same = 0;

	if (pmbot_dl_load(&lc_lib, NULL) < 0)
		return 0;
	if (origin_of(base, &s1, &h1, &p1) == 0 && origin_of(url, &s2, &h2, &p2) == 0)
		same = !strcasecmp(s1, s2) && !strcasecmp(h1, h2) && !strcmp(p1, p2);
	lc.free(s1);
	lc.free(h1);
	lc.free(p1);
	lc.free(s2);
	lc.free(h2);
	lc.free(p2);
	return same;
}

struct pmbot_net {
	CURL *curl;
	char error[CURL_ERROR_SIZE];
};

/* What the libcurl callbacks fill during one exchange. */
typedef struct {
	const pmbot_net_request *rq;
	pmbot_buf *body;
	int too_big;
	int oom;
} exchange;

int pmbot_net_new(pmbot_net **out, pmbot_buf *err)
{
	pmbot_net *n;

	*out = NULL;
	if (!(n = calloc(1, sizeof(*n)))) {
		pmbot_buf_note(err, "out of memory");
		return PMBOT_ERROR;
	}
	if (pmbot_dl_load(&lc_lib, err) < 0) {
		free(n);
		return PMBOT_ERROR;
	}
	if (!(n->curl = lc.easy_init())) {
		pmbot_buf_note(err, "libcurl could not make a handle (was pmbot_net_global_init called?)");
		free(n);
		return PMBOT_ERROR;
	}
	*out = n;
	return 0;
}

void pmbot_net_free(pmbot_net *n)
{
	if (!n)
		return;
	if (n->curl)
		lc.easy_cleanup(n->curl);
	free(n);
}

int pmbot_net_has_gzip(void)
{
	return pmbot_dl_load(&lc_lib, NULL) == 0 &&
	       (lc.version_info(CURLVERSION_NOW)->features & CURL_VERSION_LIBZ) != 0;
}

static size_t on_header(char *data, size_t size, size_t nitems, void *userdata)
{
	exchange *x = userdata;
	size_t len = size * nitems;

	if (x->rq->on_header && x->rq->on_header(x->rq->header_payload, data, len) < 0) {
		x->oom = 1;
		return 0;
	}
	return len;
}

/* The data libcurl hands over is not NUL-terminated; the buffer makes it so. */
static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
	exchange *x = userdata;
	int err = pmbot_buf_put(x->body, data, size * nmemb);

	if (err == PMBOT_ETOOBIG)
		x->too_big = 1;
	else if (err < 0)
		x->oom = 1;
	return err < 0 ? 0 : size * nmemb;
}

static int add_header(struct curl_slist **list, const char *h)
{
	struct curl_slist *n = lc.slist_append(*list, h);

	if (!n)
		return -1;
	*list = n;
	return 0;
}

static int is_redirect(long status)
{
	return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

static CURLcode set_options(CURL *e, const pmbot_net_request *rq, struct curl_slist *h,
	pmbot_net *n, exchange *x, size_t max_response)
{
	CURLcode cc;

	if ((cc = lc.easy_setopt(e, CURLOPT_URL, rq->url)) ||
	    (cc = lc.easy_setopt(e, CURLOPT_NOSIGNAL, 1L)) ||
#if LIBCURL_VERSION_NUM >= 0x075500
	    (cc = lc.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https")) ||
	    /* libcurl follows nothing (see below); were it to, never from https to http. */
	    (cc = lc.easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR,
		    strncmp(rq->url, "https:", 6) ? "http,https" : "https")) ||
#endif
	    (cc = lc.easy_setopt(e, CURLOPT_USERAGENT, rq->user_agent)) ||
	    (cc = lc.easy_setopt(e, CURLOPT_HTTPHEADER, h)) ||
	    (cc = lc.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, rq->connect_timeout_ms)) ||
	    (cc = lc.easy_setopt(e, CURLOPT_TIMEOUT_MS, rq->timeout_ms)) ||
	    (cc = lc.easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_response)) ||
	    (cc = lc.easy_setopt(e, CURLOPT_ERRORBUFFER, n->error)) ||
	    (cc = lc.easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body)) ||
	    (cc = lc.easy_setopt(e, CURLOPT_WRITEDATA, x)) ||
	    (cc = lc.easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header)) ||
	    (cc = lc.easy_setopt(e, CURLOPT_HEADERDATA, x)))
		return cc;
	if (rq->accept_gzip && (cc = lc.easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "gzip")))
		return cc;
	if (!strcmp(rq->method, "GET"))
		return lc.easy_setopt(e, CURLOPT_HTTPGET, 1L);
	if (strcmp(rq->method, "POST") &&
	    (cc = lc.easy_setopt(e, CURLOPT_CUSTOMREQUEST, rq->method)))
		return cc;
	if (rq->body &&
	    ((cc = lc.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len)) ||
	     (cc = lc.easy_setopt(e, CURLOPT_POSTFIELDS, rq->body))))
		return cc;
	return CURLE_OK;
}

/*
 * libcurl is never told to follow a redirect: it would follow one to any
 * host (only dropping credentials it knows of, not our header) and take its
 * answer. The caller's hook decides each hop.
 */
static CURLcode perform_hops(pmbot_net_response *resp, pmbot_net *n, exchange *x)
{
	const pmbot_net_request *rq = x->rq;
	pmbot_buf url = PMBOT_BUF_INIT;
	CURLcode cc;
	int hops;

	for (hops = 0;; hops++) {
		char *loc = NULL;
		long status = 0;

		cc = lc.easy_perform(n->curl);
		if (lc.easy_getinfo(n->curl, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK)
			resp->status = status;
		if (cc != CURLE_OK || !rq->on_redirect || !is_redirect(status) ||
		    lc.easy_getinfo(n->curl, CURLINFO_REDIRECT_URL, &loc) != CURLE_OK || !loc)
			break;
		if (hops == rq->max_redirects) {
			snprintf(n->error, sizeof(n->error), "more than %d redirects",
				rq->max_redirects);
			cc = CURLE_TOO_MANY_REDIRECTS;
			break;
		}
		n->error[0] = '\0';
		if (!rq->on_redirect(rq->redirect_payload, status, loc, n->error, sizeof(n->error))) {
			cc = CURLE_WEIRD_SERVER_REPLY;
			break;
		}
		/* libcurl's copy of the location goes with the next setopt. */
		pmbot_buf_clear(&url);
		if (pmbot_buf_puts(&url, loc) < 0) {
			cc = CURLE_OUT_OF_MEMORY;
			break;
		}
		if ((cc = lc.easy_setopt(n->curl, CURLOPT_URL, url.buf)))
			break;
		/* The redirect's own body is not the answer. */
		pmbot_buf_clear(x->body);
		resp->status = 0;
		x->too_big = 0;
	}
	pmbot_buf_free(&url);
	return cc;
}

CURLcode pmbot_net_perform(pmbot_net_response *resp, pmbot_buf *body, pmbot_net *n,
	const pmbot_net_request *rq)
{
	struct curl_slist *h = NULL, *l;
	CURLcode cc = CURLE_OUT_OF_MEMORY;
	exchange x;
	size_t i;

	memset(&x, 0, sizeof(x));
	x.rq = rq;
	x.body = body;
	resp->status = 0;
	resp->too_big = 0;
	pmbot_buf_clear(body);
	n->error[0] = '\0';
	lc.easy_reset(n->curl);

	for (i = 0; rq->headers && rq->headers[i]; i++)
		if (add_header(&h, rq->headers[i]) < 0)
			goto done;
	if ((cc = set_options(n->curl, rq, h, n, &x, body->max)))
		goto done;
	cc = perform_hops(resp, n, &x);
done:
	/* The handle must not point at memory that is about to go. */
	lc.easy_setopt(n->curl, CURLOPT_HTTPHEADER, NULL);
	lc.easy_setopt(n->curl, CURLOPT_POSTFIELDS, NULL);
	/* One line may hold the secret. */
	for (l = h; l; l = l->next)
		memset(l->data, 0, strlen(l->data));
	lc.slist_free_all(h);
	resp->too_big = x.too_big || cc == CURLE_FILESIZE_EXCEEDED;
	if (x.oom)
		cc = CURLE_OUT_OF_MEMORY;
	return cc;
}

const char *pmbot_net_error(const pmbot_net *n, CURLcode cc)
{
	return n->error[0] ? n->error : lc.easy_strerror(cc);
}

int pmbot_net_retryable(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

int pmbot_net_never_sent(CURLcode cc)
{
	return cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_COULDNT_RESOLVE_PROXY ||
	       cc == CURLE_COULDNT_CONNECT || cc == CURLE_URL_MALFORMAT ||
	       cc == CURLE_UNSUPPORTED_PROTOCOL || cc == CURLE_OUT_OF_MEMORY;
}

int pmbot_net_header_is(const char **value, size_t *value_len, const char *line, size_t len,
	const char *name)
{
	size_t n = strlen(name);
	const char *v;

	if (len <= n || line[n] != ':' || strncasecmp(line, name, n))
		return 0;
	v = line + n + 1;
	len -= n + 1;
	while (len && (*v == ' ' || *v == '\t')) {
		v++;
		len--;
	}
	while (len && (v[len - 1] == ' ' || v[len - 1] == '\t' || v[len - 1] == '\r' ||
		       v[len - 1] == '\n'))
		len--;
	*value = v;
	*value_len = len;
	return 1;
}

int pmbot_net_is_token(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

int pmbot_net_is_header_text(const char *s)
{
	if (!*s || *s == ' ')
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

int pmbot_net_base_url(char **out, const char **host_out, size_t *host_len, int *why,
	const char *url)
{
	const char *host = NULL, *end;
	size_t len;

	*out = NULL;
	*why = 0;
	if (!strncmp(url, "https://", 8))
		host = url + 8;
	else if (!strncmp(url, "http://", 7))
		host = url + 7;
	/* Credentials first: a refused URL is quoted, and they must never be. */
	end = host ? host + strcspn(host, "/?#") : url;
	if (host && memchr(host, '@', (size_t)(end - host))) {
		*why = PMBOT_NET_URL_CREDENTIALS;
		return PMBOT_EINVALID;
	}
	if (!host || !pmbot_net_is_token(url) || host == end || strpbrk(host, "?#")) {
		*why = PMBOT_NET_URL_BAD;
		return PMBOT_EINVALID;
	}
	len = strlen(url);
	while (len > (size_t)(host - url) && url[len - 1] == '/')
		len--;
	if (!(*out = strndup(url, len)))
		return PMBOT_ERROR;
	*host_out = *out + (host - url);
	*host_len = (size_t)(end - host);
	return 0;
}

long long pmbot_net_backoff(long long base_ms, int doublings, long long cap_ms)
{
	long long w = base_ms;
	int i;

	for (i = 0; i < doublings && w < cap_ms; i++)
		w *= 2;
	return w > cap_ms ? cap_ms : w;
}

long long pmbot_net_now_ms(void *payload)
{
	struct timespec ts;

	(void)payload;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void pmbot_net_sleep_ms(void *payload, long long ms)
{
	struct timespec ts, rem;

	(void)payload;
	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &rem) < 0 && errno == EINTR)
		ts = rem;
}

void pmbot_net_wipe_free(char *s)
{
	if (s)
		memset(s, 0, strlen(s));
	free(s);
}
