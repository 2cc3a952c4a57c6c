#ifndef PMBOT_BUF_H
#define PMBOT_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include "pmbot/common.h"

/*
 * A growable byte buffer. `buf` is never NULL and is always NUL-terminated,
 * so it can be handed to C string functions at any time. Every buffer has a
 * size cap (`max`, bytes of content); a write that would pass it fails with
 * PMBOT_ETOOBIG (PMBOT_ERROR when out of memory) and leaves the content unchanged.
 */
typedef struct {
	char *buf;
	size_t len;
	size_t cap;
	size_t max;
} pmbot_buf;

#define PMBOT_BUF_DEFAULT_MAX ((size_t)256 << 20)

/* A static initializer; PMBOT_BUF_INIT has the default cap. */
extern char pmbot_buf__empty[];
#define PMBOT_BUF_INIT { pmbot_buf__empty, 0, 0, PMBOT_BUF_DEFAULT_MAX }

/* Initialize `b` empty with content cap `max` (0 = default). Owns nothing yet. */
void pmbot_buf_init(pmbot_buf *b, size_t max);

/* Release the memory of `b` and leave it empty and reusable. */
void pmbot_buf_free(pmbot_buf *b);

/* Make room for `extra` more bytes. 0, PMBOT_ERROR or PMBOT_ETOOBIG. */
int pmbot_buf_grow(pmbot_buf *b, size_t extra);

/*
 * Append bytes / a C string / one byte / formatted text. Same returns as
 * grow. put/puts may append a buffer's own content; the printf arguments
 * must not point into `b` (growing it would free what they point to).
 *
 * put, puts and putc are inline where there is room already (the plan's
 * writers call them about a million times): a literal's length and a
 * short copy are then the compiler's; growing is pmbot_buf__put's.
 */
int pmbot_buf__put(pmbot_buf *b, const void *data, size_t len);
static inline int pmbot_buf_put(pmbot_buf *b, const void *data, size_t len)
{
	if (len && len < b->cap - b->len && b->len <= b->max && len <= b->max - b->len) {
		memmove(b->buf + b->len, data, len);
		b->len += len;
		b->buf[b->len] = '\0';
		return 0;
	}
	return pmbot_buf__put(b, data, len);
}
static inline int pmbot_buf_puts(pmbot_buf *b, const char *s)
{
	return pmbot_buf_put(b, s, strlen(s));
}
static inline int pmbot_buf_putc(pmbot_buf *b, char c)
{
	return pmbot_buf_put(b, &c, 1);
}
/* `v` in decimal, the bytes of printf("%zu"). Same returns as grow. */
int pmbot_buf_putu(pmbot_buf *b, size_t v);
int pmbot_buf_printf(pmbot_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int pmbot_buf_vprintf(pmbot_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * Append formatted text to `b` when `b` is not NULL: for the optional
 * error buffers of the library's calls. A message lost to a full buffer
 * must not become a second failure, so nothing is returned.
 */
void pmbot_buf_note(pmbot_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Empty the content, keep the allocation. */
void pmbot_buf_clear(pmbot_buf *b);

/* Shrink the content to `len` bytes (no-op if already shorter). */
void pmbot_buf_truncate(pmbot_buf *b, size_t len);

/*
 * Take the content out as a malloc'd NUL-terminated string that the caller
 * owns and frees; `b` is left empty. Returns NULL only when out of memory.
 */
PMBOT_WARN_UNUSED char *pmbot_buf_detach(pmbot_buf *b, size_t *len_out);

#endif
