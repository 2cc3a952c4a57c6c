#include "pmbot/source.h"

#include <string.h>

#include "pmbot/diag.h"
#include "pmbot/banned.h"

/*
 * The write budget as configuration states it: parsed where the
 * configuration is read, and applied by the GitHub client (which keeps
 * the writes spent), so both depend on this and not on each other.
 */

/* A decimal without sign or leading zero, 1..max; `*p` moves past it. */
static int read_number(long *out, const char **p, long max)
{
	const char *s = *p;
	long v = 0;

	if (*s < '1' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > max)
			return -1;
	}
	*out = v;
	*p = s;
	return 0;
}

static int bad_budget(pmbot_buf *err, const char *text, const char *why)
{
	pmbot_buf show = PMBOT_BUF_INIT;

	if (err)
		pmbot_buf_printf(err, "the write budget \"%s\" %s (write COUNT/SECONDSs windows "
			"separated by commas, e.g. \"%s\", or \"off\")",
			pmbot_diag_show(&show, text, 120), why, PMBOT_GITHUB_DEFAULT_WRITE_BUDGET);
	pmbot_buf_free(&show);
	return PMBOT_EINVALID;
}

int pmbot_github_budget_parse(pmbot_github_budget *out, const char *text, pmbot_buf *err)
{
	pmbot_github_budget b;
	const char *p = text;
	size_t i;

	if (!text)
		return bad_budget(err, "", "is missing");
	memset(&b, 0, sizeof(b));
	if (!strcmp(text, "off")) {
		*out = b;
		return 0;
	}
	for (;;) {
		pmbot_github_window w;

		while (*p == ' ')
			p++;
		if (b.n == PMBOT_GITHUB_BUDGET_MAX_WINDOWS)
			return bad_budget(err, text, "has more than 8 windows");
		if (read_number(&w.count, &p, PMBOT_GITHUB_BUDGET_MAX_COUNT) < 0)
			return bad_budget(err, text, "needs a count from 1 to 100000 before each '/'");
		if (*p++ != '/')
			return bad_budget(err, text, "needs '/' after each count");
		if (read_number(&w.seconds, &p, PMBOT_GITHUB_BUDGET_MAX_SECONDS) < 0 || *p++ != 's')
			return bad_budget(err, text,
				"needs a window of 1 to 86400 seconds, ending in 's', after each '/'");
		for (i = 0; i < b.n; i++)
			if (b.w[i].seconds == w.seconds)
				return bad_budget(err, text, "has two windows of the same length");
		b.w[b.n++] = w;
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (*p++ != ',')
			return bad_budget(err, text, "must separate windows with commas");
	}
	*out = b;
	return 0;
}

long long pmbot_github_budget_next(const pmbot_github_budget *b, const long long *times, size_t n,
	long long now, long hold)
{
	long long next = now;
	size_t i;

	for (i = 0; i < b->n; i++) {
		long long len = (long long)b->w[i].seconds * 1000, frees;
		long keep = hold < 0 ? 0 : hold >= b->w[i].count ? b->w[i].count - 1 : hold;
		size_t count = (size_t)(b->w[i].count - keep);

		if (n < count)
			continue;
		/* The oldest of the last `count` writes must leave the window first. */
		frees = times[n - count] + len;
		if (frees > next)
			next = frees;
	}
	return next;
}
