#ifndef PMBOT_TEST_FAKEHTTP_H
#define PMBOT_TEST_FAKEHTTP_H

#include <stddef.h>

/*
 * Test fixture: a loopback HTTP/1.1 server on 127.0.0.1 (a free port),
 * run by a thread of the test process. It answers each request with the
 * next scripted response (or a 599 "fakehttp: no scripted response" when
 * the script is empty) and RECORDS every request exactly as it arrived:
 * method, target (path and query), headers in order, body. Connections are
 * kept alive as HTTP/1.1 allows, one at a time (the client under test is
 * single-threaded). Bodies are read by Content-Length only (no chunked
 * requests: libcurl sends Content-Length for in-memory bodies).
 *
 * Functions return 0 on success and -1 on failure.
 */
typedef struct fakehttp fakehttp;

typedef struct {
	char *name;
	char *value;  /* leading and trailing blanks removed */
} fakehttp_header;

typedef struct {
	char *method;
	char *target;             /* "/path?query" as sent */
	char *version;            /* "HTTP/1.1" */
	fakehttp_header *headers; /* in the order received */
	size_t n_headers;
	char *body;               /* NUL-terminated for convenience */
	size_t body_len;
	unsigned connection;      /* serial number of the connection, from 1 */
} fakehttp_request;

typedef struct {
	int status;
	const char *headers;  /* extra header lines, each ending "\r\n"; may be NULL */
	const char *body;     /* NULL: empty */
	size_t body_len;      /* 0: strlen(body) */
	int delay_ms;         /* wait this long before answering; given up
	                         early when the client hangs up */
	long cut_after;       /* -1: whole body; else announce the whole
	                         Content-Length, send only this many body
	                         bytes and close the connection */
	int close;            /* close the connection after answering */
} fakehttp_response;

/* Start a server. `*out` is owned by the caller: fakehttp_stop() it. */
int fakehttp_start(fakehttp **out);

/* Stop the thread, close every socket, free everything (requests too).
 * NULL is a no-op. */
void fakehttp_stop(fakehttp *s);

/* "http://127.0.0.1:PORT" (owned by `s`). */
const char *fakehttp_url(const fakehttp *s);

/* Append a response to the script (copied; cut_after must be set, -1 for
 * none). */
int fakehttp_push(fakehttp *s, const fakehttp_response *r);

/* Append a whole response with `status`, extra `headers` (may be NULL) and
 * `body` (may be NULL). */
int fakehttp_push_simple(fakehttp *s, int status, const char *headers, const char *body);

/* How many requests were recorded / scripted responses are still unused. */
size_t fakehttp_count(fakehttp *s);
size_t fakehttp_pending(fakehttp *s);

/* Request `i` (0-based; owned by `s`, valid until fakehttp_stop), or NULL. */
const fakehttp_request *fakehttp_get(fakehttp *s, size_t i);

/* The value of the first header called `name` (case-insensitive), or NULL. */
const char *fakehttp_header_value(const fakehttp_request *r, const char *name);

/* A loopback TCP port nobody listens on (bound, then closed); aborts when none can be had. */
unsigned fakehttp_closed_port(void);

#endif
