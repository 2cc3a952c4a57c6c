#ifndef PMBOT_BUDGET_H
#define PMBOT_BUDGET_H

#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"

/*
 * The write budget: content-creating requests (REST POST, PATCH, PUT and
 * DELETE; a GraphQL mutation document, however many aliases it holds,
 * counts once) allowed in sliding windows, GitHub's documented secondary
 * limits by default: at most `count` writes in any `seconds`, for every
 * window at once. Written "COUNT/SECONDSs" comma-separated, e.g.
 * PMBOT_GITHUB_DEFAULT_WRITE_BUDGET; "off" is no budget (n == 0).
 */
#define PMBOT_GITHUB_DEFAULT_WRITE_BUDGET "80/60s,500/3600s"
#define PMBOT_GITHUB_BUDGET_MAX_WINDOWS 8
#define PMBOT_GITHUB_BUDGET_MAX_COUNT 100000L
#define PMBOT_GITHUB_BUDGET_MAX_SECONDS 86400L
/* The longest wait for a window inside one run, whatever the windows. */
#define PMBOT_GITHUB_BUDGET_MAX_WAIT_MS 60000LL

typedef struct {
	long count;   /* 1..PMBOT_GITHUB_BUDGET_MAX_COUNT */
	long seconds; /* 1..PMBOT_GITHUB_BUDGET_MAX_SECONDS */
} pmbot_github_window;

typedef struct {
	size_t n;     /* 0: no budget */
	pmbot_github_window w[PMBOT_GITHUB_BUDGET_MAX_WINDOWS];
} pmbot_github_budget;

/*
 * Parse `text`: "off", or 1..PMBOT_GITHUB_BUDGET_MAX_WINDOWS windows
 * "COUNT/SECONDSs" separated by commas (spaces around items allowed),
 * COUNT and SECONDS decimal without sign or leading zero, in the ranges
 * above, no two windows of the same length. `*out` is filled on success
 * only. 0, or PMBOT_EINVALID with the reason appended to `err` (may be
 * NULL; the caller owns it).
 */
PMBOT_WARN_UNUSED int pmbot_github_budget_parse(pmbot_github_budget *out, const char *text,
	pmbot_buf *err);

/*
 * Window arithmetic: the earliest epoch-ms time >= `now` at which one more
 * write fits every window of `b`, given the past writes `times` (epoch ms,
 * ascending, `n` of them), leaving `hold` writes of each window unspent
 * (at most C - 1 of a window of C). A window of C writes in S seconds is
 * full when C - hold of them are later than now - S*1000; it frees when the
 * oldest of its last C - hold writes is S seconds old. `now` itself when
 * there is room.
 */
long long pmbot_github_budget_next(const pmbot_github_budget *b, const long long *times, size_t n,
	long long now, long hold);

#endif
