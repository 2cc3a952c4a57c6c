#include "fakehttp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pmbot/buf.h"
#include "pmbot/banned.h"

/* Headers of one request may not pass this (a runaway client). */
#define HEAD_MAX ((size_t)64 << 10)

typedef struct {
	int status;
	char *headers;
	char *body;
	size_t body_len;
	int delay_ms;
	long cut_after;
	int close;
} scripted;

struct fakehttp {
	int listen_fd;
	int stop_pipe[2];
	pthread_t thread;
	int running;
	char url[64];
	pthread_mutex_t lock;
	scripted *script;
	size_t n_script, next_script, alloc_script;
	fakehttp_request **reqs;
	size_t n_reqs, alloc_reqs;
	unsigned connections;
};

static void free_request(fakehttp_request *r)
{
	size_t i;

	if (!r)
		return;
	free(r->method);
	free(r->target);
	free(r->version);
	for (i = 0; i < r->n_headers; i++) {
		free(r->headers[i].name);
		free(r->headers[i].value);
	}
	free(r->headers);
	free(r->body);
	free(r);
}

/* Wait until `fd` is readable, or the server stops (-1) or `ms` pass (0). */
static int wait_readable(fakehttp *s, int fd, int ms)
{
	struct pollfd p[2];
	int n;

	p[0].fd = fd;
	p[0].events = POLLIN;
	p[1].fd = s->stop_pipe[0];
	p[1].events = POLLIN;
	do
		n = poll(p, 2, ms);
	while (n < 0 && errno == EINTR);
	if (n < 0 || (p[1].revents & POLLIN))
		return -1;
	return n > 0 ? 1 : 0;
}

static int send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static char *trim_dup(const char *s, size_t len)
{
	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	return strndup(s, len);
}

/* Parse the request head in in->buf[0..head_len) (ending "\r\n\r\n"). */
static fakehttp_request *parse_head(const char *head, size_t head_len)
{
	fakehttp_request *r = calloc(1, sizeof(*r));
	const char *p = head, *end = head + head_len, *eol, *sp1, *sp2;

	if (!r)
		return NULL;
	eol = strstr(p, "\r\n");
	sp1 = memchr(p, ' ', (size_t)(eol - p));
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp2)
		goto fail;
	r->method = strndup(p, (size_t)(sp1 - p));
	r->target = strndup(sp1 + 1, (size_t)(sp2 - sp1 - 1));
	r->version = strndup(sp2 + 1, (size_t)(eol - sp2 - 1));
	if (!r->method || !r->target || !r->version)
		goto fail;
	for (p = eol + 2; p < end - 2; p = eol + 2) {
		const char *colon;
		fakehttp_header *h;

		eol = strstr(p, "\r\n");
		if (eol == p)
			break;
		if (!(colon = memchr(p, ':', (size_t)(eol - p))))
			goto fail;
		h = realloc(r->headers, (r->n_headers + 1) * sizeof(*h));
		if (!h)
			goto fail;
		r->headers = h;
		h = &r->headers[r->n_headers++];
		h->name = strndup(p, (size_t)(colon - p));
		h->value = trim_dup(colon + 1, (size_t)(eol - colon - 1));
		if (!h->name || !h->value)
			goto fail;
	}
	return r;
fail:
	free_request(r);
	return NULL;
}

static int record(fakehttp *s, fakehttp_request *r)
{
	int err = -1;

	pthread_mutex_lock(&s->lock);
	if (s->n_reqs == s->alloc_reqs) {
		size_t alloc = s->alloc_reqs ? s->alloc_reqs * 2 : 16;
		fakehttp_request **p = realloc(s->reqs, alloc * sizeof(*p));

		if (!p)
			goto done;
		s->reqs = p;
		s->alloc_reqs = alloc;
	}
	s->reqs[s->n_reqs++] = r;
	err = 0;
done:
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* Take the next scripted answer; the script keeps ownership of its strings. */
static int next_response(fakehttp *s, scripted *out)
{
	int found = 0;

	pthread_mutex_lock(&s->lock);
	if (s->next_script < s->n_script) {
		*out = s->script[s->next_script++];
		found = 1;
	}
	pthread_mutex_unlock(&s->lock);
	return found;
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	default: return "Status";
	}
}

/* 1: keep the connection; 0: close it. */
static int answer(fakehttp *s, int fd)
{
	static char none[] = "fakehttp: no scripted response\n";
	pmbot_buf out = PMBOT_BUF_INIT;
	scripted sc;
	size_t body_len;
	int keep = 0;

	if (!next_response(s, &sc)) {
		memset(&sc, 0, sizeof(sc));
		sc.status = 599;
		sc.body = none;
		sc.body_len = sizeof(none) - 1;
		sc.cut_after = -1;
	}
	if (sc.delay_ms > 0) {
		/* Readable while waiting means the client gave up (EOF). */
		int w = wait_readable(s, fd, sc.delay_ms);

		if (w != 0) {
			char c;

			if (w < 0 || recv(fd, &c, 1, MSG_PEEK) <= 0)
				goto done;
		}
	}
	body_len = sc.body_len;
	if (pmbot_buf_printf(&out, "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\n%s%s\r\n",
		    sc.status, reason(sc.status), body_len, sc.headers ? sc.headers : "",
		    sc.close || sc.cut_after >= 0 ? "Connection: close\r\n" : "") < 0)
		goto done;
	if (sc.cut_after >= 0 && (size_t)sc.cut_after < body_len)
		body_len = (size_t)sc.cut_after;
	if (body_len && pmbot_buf_put(&out, sc.body, body_len) < 0)
		goto done;
	if (send_all(fd, out.buf, out.len) < 0)
		goto done;
	keep = !(sc.close || sc.cut_after >= 0);
done:
	pmbot_buf_free(&out);
	return keep;
}

static long content_length(const fakehttp_request *r)
{
	const char *v = fakehttp_header_value(r, "Content-Length");

	return v ? strtol(v, NULL, 10) : 0;
}

typedef struct {
	int fd;
	unsigned serial;
	pmbot_buf in;
} conn;

/*
 * Answer every whole request buffered on `c`. 1: keep the connection,
 * 0: close it.
 */
static int drain(fakehttp *s, conn *c)
{
	for (;;) {
		fakehttp_request *r;
		const char *head_end;
		size_t head_len, used;
		long clen;

		if (!(head_end = strstr(c->in.buf, "\r\n\r\n")))
			return c->in.len <= HEAD_MAX;
		head_len = (size_t)(head_end - c->in.buf) + 4;
		if (!(r = parse_head(c->in.buf, head_len)))
			return 0;
		if ((clen = content_length(r)) < 0) {
			free_request(r);
			return 0;
		}
		if (c->in.len - head_len < (size_t)clen) {
			/* The body is still on its way. */
			free_request(r);
			return 1;
		}
		r->body_len = (size_t)clen;
		r->connection = c->serial;
		if (!(r->body = malloc(r->body_len + 1))) {
			free_request(r);
			return 0;
		}
		memcpy(r->body, c->in.buf + head_len, r->body_len);
		r->body[r->body_len] = '\0';
		used = head_len + r->body_len;
		memmove(c->in.buf, c->in.buf + used, c->in.len - used);
		pmbot_buf_truncate(&c->in, c->in.len - used);
		if (record(s, r) < 0) {
			free_request(r);
			return 0;
		}
		if (!answer(s, c->fd))
			return 0;
	}
}

#define MAX_CONNS 16

/*
 * One thread, every connection polled: a client may keep an idle
 * connection open while another (a second client) opens its own.
 */
static void *serve(void *arg)
{
	fakehttp *s = arg;
	conn conns[MAX_CONNS];
	size_t n = 0, i;

	for (;;) {
		struct pollfd p[MAX_CONNS + 2];
		int rc;

		p[0].fd = s->stop_pipe[0];
		p[0].events = POLLIN;
		p[1].fd = s->listen_fd;
		p[1].events = n < MAX_CONNS ? POLLIN : 0;
		for (i = 0; i < n; i++) {
			p[i + 2].fd = conns[i].fd;
			p[i + 2].events = POLLIN;
		}
		do
			rc = poll(p, n + 2, -1);
		while (rc < 0 && errno == EINTR);
		if (rc < 0 || p[0].revents)
			break;
		for (i = n; i-- > 0;) {
			char chunk[4096];
			ssize_t got;
			int keep = 0;

			if (!p[i + 2].revents)
				continue;
			got = recv(conns[i].fd, chunk, sizeof(chunk), 0);
			if (got > 0 && pmbot_buf_put(&conns[i].in, chunk, (size_t)got) == 0)
				keep = drain(s, &conns[i]);
			if (!keep) {
				close(conns[i].fd);
				pmbot_buf_free(&conns[i].in);
				conns[i] = conns[--n];
			}
		}
		if (p[1].revents & POLLIN) {
			int fd = accept(s->listen_fd, NULL, NULL);

			if (fd >= 0) {
				conns[n].fd = fd;
				conns[n].serial = ++s->connections;
				pmbot_buf_init(&conns[n].in, HEAD_MAX + ((size_t)64 << 20));
				n++;
			}
		}
	}
	for (i = 0; i < n; i++) {
		close(conns[i].fd);
		pmbot_buf_free(&conns[i].in);
	}
	return NULL;
}

int fakehttp_start(fakehttp **out)
{
	struct sockaddr_in addr;
	socklen_t alen = sizeof(addr);
	fakehttp *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -1;
	s->listen_fd = -1;
	s->stop_pipe[0] = s->stop_pipe[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = 0;
	if ((s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(s->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(s->listen_fd, 16) < 0 ||
	    getsockname(s->listen_fd, (struct sockaddr *)&addr, &alen) < 0 ||
	    pipe(s->stop_pipe) < 0)
		goto fail;
	snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%u", (unsigned)ntohs(addr.sin_port));
	if (pthread_create(&s->thread, NULL, serve, s) != 0)
		goto fail;
	s->running = 1;
	*out = s;
	return 0;
fail:
	fakehttp_stop(s);
	return -1;
}

void fakehttp_stop(fakehttp *s)
{
	size_t i;

	if (!s)
		return;
	if (s->running) {
		ssize_t n;

		do
			n = write(s->stop_pipe[1], "x", 1);
		while (n < 0 && errno == EINTR);
		pthread_join(s->thread, NULL);
	}
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->stop_pipe[0] >= 0)
		close(s->stop_pipe[0]);
	if (s->stop_pipe[1] >= 0)
		close(s->stop_pipe[1]);
	for (i = 0; i < s->n_script; i++) {
		free(s->script[i].headers);
		free(s->script[i].body);
	}
	free(s->script);
	for (i = 0; i < s->n_reqs; i++)
		free_request(s->reqs[i]);
	free(s->reqs);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

const char *fakehttp_url(const fakehttp *s)
{
	return s->url;
}

int fakehttp_push(fakehttp *s, const fakehttp_response *r)
{
	scripted sc;
	int err = -1;

	memset(&sc, 0, sizeof(sc));
	sc.status = r->status;
	sc.delay_ms = r->delay_ms;
	sc.cut_after = r->cut_after;
	sc.close = r->close;
	sc.body_len = r->body ? (r->body_len ? r->body_len : strlen(r->body)) : 0;
	if ((r->headers && !(sc.headers = strdup(r->headers))) ||
	    !(sc.body = malloc(sc.body_len + 1)))
		goto fail;
	if (sc.body_len)
		memcpy(sc.body, r->body, sc.body_len);
	sc.body[sc.body_len] = '\0';
	pthread_mutex_lock(&s->lock);
	if (s->n_script == s->alloc_script) {
		size_t alloc = s->alloc_script ? s->alloc_script * 2 : 16;
		scripted *p = realloc(s->script, alloc * sizeof(*p));

		if (!p) {
			pthread_mutex_unlock(&s->lock);
			goto fail;
		}
		s->script = p;
		s->alloc_script = alloc;
	}
	s->script[s->n_script++] = sc;
	pthread_mutex_unlock(&s->lock);
	return 0;
fail:
	free(sc.headers);
	free(sc.body);
	return err;
}

int fakehttp_push_simple(fakehttp *s, int status, const char *headers, const char *body)
{
	fakehttp_response r;

	memset(&r, 0, sizeof(r));
	r.status = status;
	r.headers = headers;
	r.body = body;
	r.cut_after = -1;
	return fakehttp_push(s, &r);
}

size_t fakehttp_count(fakehttp *s)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->n_reqs;
	pthread_mutex_unlock(&s->lock);
	return n;
}

size_t fakehttp_pending(fakehttp *s)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->n_script - s->next_script;
	pthread_mutex_unlock(&s->lock);
	return n;
}

const fakehttp_request *fakehttp_get(fakehttp *s, size_t i)
{
	const fakehttp_request *r = NULL;

	pthread_mutex_lock(&s->lock);
	if (i < s->n_reqs)
		r = s->reqs[i];
	pthread_mutex_unlock(&s->lock);
	return r;
}

const char *fakehttp_header_value(const fakehttp_request *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n_headers; i++)
		if (!strcasecmp(r->headers[i].name, name))
			return r->headers[i].value;
	return NULL;
}

unsigned fakehttp_closed_port(void)
{
	struct sockaddr_in addr;
	socklen_t alen = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	if (fd < 0) {
		fputs("fakehttp: no socket for a loopback port\n", stderr);
		abort();
	}
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
		getsockname(fd, (struct sockaddr *)&addr, &alen) == 0;
	close(fd);
	if (!ok) {
		/* Every caller needs one: without it the test cannot run at all. */
		fputs("fakehttp: no free loopback port\n", stderr);
		abort();
	}
	return ntohs(addr.sin_port);
}
