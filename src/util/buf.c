#include "pmbot/buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pmbot/mem.h"
#include "pmbot/banned.h"

char pmbot_buf__empty[1];

void pmbot_buf_init(pmbot_buf *b, size_t max)
{
	b->buf = pmbot_buf__empty;
	b->len = 0;
	b->cap = 0;
	b->max = max ? max : PMBOT_BUF_DEFAULT_MAX;
}

void pmbot_buf_free(pmbot_buf *b)
{
	size_t max = b->max;

	if (b->cap)
		free(b->buf);
	pmbot_buf_init(b, max);
}

int pmbot_buf_grow(pmbot_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > b->max || b->len > b->max - extra)
		return PMBOT_ETOOBIG;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	/* Doubling keeps appends amortized O(1); one big request gets what it asks. */
	cap = !b->cap ? 64 : b->cap > SIZE_MAX / 2 ? need : b->cap * 2;
	if (cap < need)
		cap = need;
	/* A large first block is a caller sizing what it will fill: pmbot_mem_alloc_large. */
	p = b->cap ? realloc(b->buf, cap) : pmbot_mem_alloc_large(cap);
	if (!p)
		return PMBOT_ERROR;
	if (!b->cap)
		p[0] = '\0';
	b->buf = p;
	b->cap = cap;
	return 0;
}

/* pmbot_buf_put's way when there is no room yet (buf.h has the other). */
int pmbot_buf__put(pmbot_buf *b, const void *data, size_t len)
{
	uintptr_t at, base;
	int inside, err;

	if (!len)
		return 0;
	at = (uintptr_t)data;
	base = (uintptr_t)b->buf;
	inside = b->cap && at >= base && at < base + b->len;
	if ((err = pmbot_buf_grow(b, len)) < 0)
		return err;
	/* Appending part of the buffer to itself: grow may have moved it. */
	if (inside)
		data = b->buf + (at - base);
	memmove(b->buf + b->len, data, len);
	b->len += len;
	b->buf[b->len] = '\0';
	return 0;
}

int pmbot_buf_putu(pmbot_buf *b, size_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	/* printf("%zu") costs a vsnprintf; JSON Pointers take one per item. */
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return pmbot_buf_put(b, tmp + i, sizeof(tmp) - i);
}

int pmbot_buf_vprintf(pmbot_buf *b, const char *fmt, va_list ap)
{
	size_t room = b->cap ? b->cap - b->len : 0;
	char small[256];
	va_list cp;
	int n, err;

	/*
	 * Format once in the common case: straight into the spare room, or for
	 * short output into `small` (a fresh buffer has no room yet).
	 */
	va_copy(cp, ap);
	if (room >= sizeof(small)) {
		n = vsnprintf(b->buf + b->len, room, fmt, cp);
		va_end(cp);
		if (n >= 0 && (size_t)n < room && (size_t)n <= b->max - b->len) {
			b->len += (size_t)n;
			return 0;
		}
		/* Whatever was written past the content is not content. */
		b->buf[b->len] = '\0';
	} else {
		n = vsnprintf(small, sizeof(small), fmt, cp);
		va_end(cp);
		if (n >= 0 && (size_t)n < sizeof(small))
			return pmbot_buf_put(b, small, (size_t)n);
	}
	if (n < 0)
		return PMBOT_ERROR;
	if ((err = pmbot_buf_grow(b, (size_t)n)) < 0)
		return err;
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

void pmbot_buf_note(pmbot_buf *b, const char *fmt, ...)
{
	va_list ap;

	if (!b)
		return;
	va_start(ap, fmt);
	(void)pmbot_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

int pmbot_buf_printf(pmbot_buf *b, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = pmbot_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return err;
}

void pmbot_buf_clear(pmbot_buf *b)
{
	pmbot_buf_truncate(b, 0);
}

void pmbot_buf_truncate(pmbot_buf *b, size_t len)
{
	if (len >= b->len)
		return;
	b->len = len;
	b->buf[len] = '\0';
}

char *pmbot_buf_detach(pmbot_buf *b, size_t *len_out)
{
	char *s;

	if (!b->cap) {
		s = calloc(1, 1);
		if (!s)
			return NULL;
	} else {
		s = b->buf;
	}
	if (len_out)
		*len_out = b->len;
	pmbot_buf_init(b, b->max);
	return s;
}
