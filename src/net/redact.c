#include "pmbot/net.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "pmbot/banned.h"

#define W PMBOT_NET_REDACT_MIN

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t window_at(const char *p)
{
	uint64_t v;

	memcpy(&v, p, W);
	return v;
}

/*
 * A substring of the secret of length >= W is exactly a run of overlapping
 * W-byte windows of the secret, so marking every text position whose next
 * W bytes are one of the secret's windows covers every such substring, and
 * nothing else. The windows sit in a sorted array: O(text * log secret).
 */
static int scrub_windows(pmbot_buf *out, const char *text, size_t n, const char *secret,
	size_t slen)
{
	size_t nw = slen - W + 1, i, done = 0, run_end = 0;
	uint64_t *win = malloc(nw * sizeof(*win));
	int in_run = 0, err = 0;

	if (!win)
		return -1;
	for (i = 0; i < nw; i++)
		win[i] = window_at(secret + i);
	qsort(win, nw, sizeof(*win), cmp_u64);
	for (i = 0; i + W <= n && !err; i++) {
		uint64_t v = window_at(text + i);

		if (!bsearch(&v, win, nw, sizeof(*win), cmp_u64))
			continue;
		if (in_run && i <= run_end) {
			run_end = i + W;
			continue;
		}
		if (in_run) {
			err |= pmbot_buf_puts(out, PMBOT_NET_REDACTED);
			done = run_end;
		}
		err |= pmbot_buf_put(out, text + done, i - done);
		in_run = 1;
		run_end = i + W;
	}
	if (in_run) {
		err |= pmbot_buf_puts(out, PMBOT_NET_REDACTED);
		done = run_end;
	}
	err |= pmbot_buf_put(out, text + done, n - done);
	free(win);
	return err ? -1 : 0;
}

/* A secret too short to have windows: only its whole occurrences. */
static int scrub_whole(pmbot_buf *out, const char *text, size_t n, const char *secret,
	size_t slen)
{
	size_t i = 0, done = 0;
	int err = 0;

	while (i + slen <= n && !err) {
		if (memcmp(text + i, secret, slen)) {
			i++;
			continue;
		}
		err |= pmbot_buf_put(out, text + done, i - done);
		err |= pmbot_buf_puts(out, PMBOT_NET_REDACTED);
		done = i += slen;
	}
	err |= pmbot_buf_put(out, text + done, n - done);
	return err ? -1 : 0;
}

int pmbot_net_redact(pmbot_buf *b, const char *secret)
{
	pmbot_buf out;
	size_t slen = secret ? strlen(secret) : 0;
	int err;

	if (!slen || !b->len)
		return 0;
	pmbot_buf_init(&out, b->max);
	err = slen >= W ? scrub_windows(&out, b->buf, b->len, secret, slen)
		: scrub_whole(&out, b->buf, b->len, secret, slen);
	pmbot_buf_clear(b);
	if (err || pmbot_buf_put(b, out.buf, out.len) < 0) {
		pmbot_buf_clear(b);
		pmbot_buf_puts(b, PMBOT_NET_REDACTED);
		err = -1;
	}
	pmbot_buf_free(&out);
	return err ? -1 : 0;
}
