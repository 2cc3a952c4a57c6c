#include "pmbot/plan.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/common.h"
#include "pmbot/banned.h"

/*
 * Line diff: Myers' O((N+M)·D) algorithm in its linear-space form (the
 * "middle snake" bisection, as in diff-match-patch), on line ids so that
 * comparing two lines is comparing two integers.
 *
 * Work is bounded: every diagonal visited and every snake step costs one
 * unit, and past PMBOT_DIFF_WORK_MAX units the search stops and the region
 * between the common head and tail becomes one replace hunk. The bound is
 * counted in steps, never in time, so the output stays deterministic.
 * Memory is O(N+M) whatever D is.
 */

#define PMBOT_DIFF_WORK_MAX ((uint64_t)1 << 22)

typedef struct {
	const char *s;
	size_t len; /* with its '\n' when it has one */
} diff_line;

typedef struct {
	size_t *ia, *ib;          /* line ids */
	unsigned char *ca, *cb;   /* 1: line deleted from A / inserted into B */
	ptrdiff_t *v1, *v2;       /* furthest-reaching x per diagonal */
	uint64_t work;
	int over;                 /* the work bound was hit */
} diff_ctx;

typedef struct {
	size_t a0, a1, b0, b1;
} diff_change;

static size_t count_lines(const char *s, size_t len)
{
	size_t n = 0, i;

	for (i = 0; i < len; i++)
		if (s[i] == '\n')
			n++;
	if (len && s[len - 1] != '\n')
		n++;
	return n;
}

static void split_lines(diff_line *out, const char *s, size_t len)
{
	size_t i, start = 0, n = 0;

	for (i = 0; i < len; i++) {
		if (s[i] == '\n') {
			out[n].s = s + start;
			out[n++].len = i + 1 - start;
			start = i + 1;
		}
	}
	if (start < len) {
		out[n].s = s + start;
		out[n].len = len - start;
	}
}

static uint64_t line_hash(const diff_line *l)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < l->len; i++) {
		h ^= (unsigned char)l->s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * Give equal lines equal ids: ids[i] for lines[i], 0 <= id < n. An open
 * addressing table of line indexes; O(n) expected.
 */
static int assign_ids(size_t *ids, const diff_line *lines, size_t n)
{
	size_t cap = 16, mask, i, next = 0;
	size_t *slots;
	uint64_t *hashes;

	while (cap < n * 2)
		cap <<= 1;
	mask = cap - 1;
	slots = malloc(cap * sizeof(*slots));
	hashes = malloc(n ? n * sizeof(*hashes) : 1);
	if (!slots || !hashes) {
		free(slots);
		free(hashes);
		return -1;
	}
	for (i = 0; i < cap; i++)
		slots[i] = SIZE_MAX;
	for (i = 0; i < n; i++) {
		size_t at;

		hashes[i] = line_hash(&lines[i]);
		at = (size_t)hashes[i] & mask;
		for (;;) {
			size_t j = slots[at];

			if (j == SIZE_MAX) {
				slots[at] = i;
				ids[i] = next++;
				break;
			}
			if (hashes[j] == hashes[i] && lines[j].len == lines[i].len &&
			    !memcmp(lines[j].s, lines[i].s, lines[i].len)) {
				ids[i] = ids[j];
				break;
			}
			at = (at + 1) & mask;
		}
	}
	free(slots);
	free(hashes);
	return 0;
}

/*
 * Find a point (x, y) on an optimal edit path of A[a0,a1) x B[b0,b1) that
 * splits it into two smaller problems. Both ranges are non-empty and their
 * first and last lines differ. Returns 1 with the point, 0 when none was
 * found (the work bound, or a degenerate split the caller must not recurse
 * on).
 */
static int bisect(diff_ctx *c, size_t a0, size_t a1, size_t b0, size_t b1,
	size_t *sx, size_t *sy)
{
	const size_t *A = c->ia + a0, *B = c->ib + b0;
	ptrdiff_t n = (ptrdiff_t)(a1 - a0), m = (ptrdiff_t)(b1 - b0);
	ptrdiff_t max_d = (n + m + 1) / 2, off = max_d, vlen = 2 * max_d + 2;
	ptrdiff_t delta = n - m, d, i;
	ptrdiff_t k1start = 0, k1end = 0, k2start = 0, k2end = 0;
	ptrdiff_t *v1 = c->v1, *v2 = c->v2;
	int front = delta % 2 != 0;

	for (i = 0; i < vlen; i++)
		v1[i] = v2[i] = -1;
	v1[off + 1] = 0;
	v2[off + 1] = 0;
	c->work += (uint64_t)vlen;

	for (d = 0; d < max_d; d++) {
		ptrdiff_t k;

		if (c->work > PMBOT_DIFF_WORK_MAX) {
			c->over = 1;
			return 0;
		}
		for (k = -d + k1start; k <= d - k1end; k += 2) {
			ptrdiff_t ko = off + k, x, y, x0;

			if (k == -d || (k != d && v1[ko - 1] < v1[ko + 1]))
				x = v1[ko + 1];
			else
				x = v1[ko - 1] + 1;
			y = x - k;
			x0 = x;
			while (x < n && y < m && A[x] == B[y]) {
				x++;
				y++;
			}
			c->work += 1 + (uint64_t)(x - x0);
			v1[ko] = x;
			if (x > n) {
				k1end += 2;
			} else if (y > m) {
				k1start += 2;
			} else if (front) {
				ptrdiff_t k2o = off + delta - k;

				if (k2o >= 0 && k2o < vlen && v2[k2o] != -1 && x >= n - v2[k2o]) {
					if ((x == 0 && y == 0) || (x == n && y == m))
						return 0;
					*sx = a0 + (size_t)x;
					*sy = b0 + (size_t)y;
					return 1;
				}
			}
		}
		for (k = -d + k2start; k <= d - k2end; k += 2) {
			ptrdiff_t ko = off + k, x, y, x0;

			if (k == -d || (k != d && v2[ko - 1] < v2[ko + 1]))
				x = v2[ko + 1];
			else
				x = v2[ko - 1] + 1;
			y = x - k;
			x0 = x;
			while (x < n && y < m && A[n - x - 1] == B[m - y - 1]) {
				x++;
				y++;
			}
			c->work += 1 + (uint64_t)(x - x0);
			v2[ko] = x;
			if (x > n) {
				k2end += 2;
			} else if (y > m) {
				k2start += 2;
			} else if (!front) {
				ptrdiff_t k1o = off + delta - k;

				if (k1o >= 0 && k1o < vlen && v1[k1o] != -1) {
					ptrdiff_t fx = v1[k1o], fy = fx - (k1o - off);

					if (fx >= n - x) {
						/* Found from behind: split where the forward path ended. */
						if (fx < 0 || fx > n || fy < 0 || fy > m ||
						    (fx == 0 && fy == 0) || (fx == n && fy == m))
							return 0;
						*sx = a0 + (size_t)fx;
						*sy = b0 + (size_t)fy;
						return 1;
					}
				}
			}
		}
	}
	return 0;
}

static void mark_all(diff_ctx *c, size_t a0, size_t a1, size_t b0, size_t b1)
{
	if (a1 > a0)
		memset(c->ca + a0, 1, a1 - a0);
	if (b1 > b0)
		memset(c->cb + b0, 1, b1 - b0);
}

/* Recursion depth is O(log D): each split halves the edit distance. */
static void compare(diff_ctx *c, size_t a0, size_t a1, size_t b0, size_t b1)
{
	size_t x, y;

	while (a0 < a1 && b0 < b1 && c->ia[a0] == c->ib[b0]) {
		a0++;
		b0++;
	}
	while (a0 < a1 && b0 < b1 && c->ia[a1 - 1] == c->ib[b1 - 1]) {
		a1--;
		b1--;
	}
	if (a0 == a1 || b0 == b1 || c->over) {
		mark_all(c, a0, a1, b0, b1);
		return;
	}
	if (!bisect(c, a0, a1, b0, b1, &x, &y)) {
		/* Still a correct edit script, only not a minimal one. */
		mark_all(c, a0, a1, b0, b1);
		return;
	}
	compare(c, a0, x, b0, y);
	compare(c, x, a1, y, b1);
}

static int push_change(diff_change **v, size_t *n, size_t *alloc, diff_change ch)
{
	if (*n == *alloc) {
		size_t na = *alloc ? *alloc * 2 : 16;
		diff_change *p = realloc(*v, na * sizeof(**v));

		if (!p)
			return -1;
		*v = p;
		*alloc = na;
	}
	(*v)[(*n)++] = ch;
	return 0;
}

/* GNU diff's range: "start,count", "start" for one line, "before,0" for none. */
static int put_range(pmbot_buf *out, size_t start, size_t count)
{
	if (count == 1)
		return pmbot_buf_printf(out, "%zu", start + 1);
	if (count == 0)
		return pmbot_buf_printf(out, "%zu,0", start);
	return pmbot_buf_printf(out, "%zu,%zu", start + 1, count);
}

static int put_line(pmbot_buf *out, char mark, const diff_line *l)
{
	int has_nl = l->len && l->s[l->len - 1] == '\n';

	if (pmbot_buf_putc(out, mark) < 0 || pmbot_buf_put(out, l->s, l->len) < 0)
		return -1;
	if (!has_nl && pmbot_buf_puts(out, "\n\\ No newline at end of file\n") < 0)
		return -1;
	return 0;
}

static int put_hunks(pmbot_buf *out, const diff_line *la, size_t na, const diff_line *lb,
	const diff_change *ch, size_t nch, size_t ctx)
{
	size_t h = 0;

	while (h < nch) {
		size_t e = h, a0, a1, b0, b1, a, k;

		while (e + 1 < nch && ch[e + 1].a0 - ch[e].a1 <= 2 * ctx)
			e++;
		a0 = ch[h].a0 > ctx ? ch[h].a0 - ctx : 0;
		b0 = ch[h].b0 - (ch[h].a0 - a0);
		a1 = na - ch[e].a1 > ctx ? ch[e].a1 + ctx : na;
		b1 = ch[e].b1 + (a1 - ch[e].a1);
		if (pmbot_buf_puts(out, "@@ -") < 0 || put_range(out, a0, a1 - a0) < 0 ||
		    pmbot_buf_puts(out, " +") < 0 || put_range(out, b0, b1 - b0) < 0 ||
		    pmbot_buf_puts(out, " @@\n") < 0)
			return -1;
		a = a0;
		for (k = h; k <= e; k++) {
			for (; a < ch[k].a0; a++)
				if (put_line(out, ' ', &la[a]) < 0)
					return -1;
			for (; a < ch[k].a1; a++)
				if (put_line(out, '-', &la[a]) < 0)
					return -1;
			for (size_t b = ch[k].b0; b < ch[k].b1; b++)
				if (put_line(out, '+', &lb[b]) < 0)
					return -1;
		}
		for (; a < a1; a++)
			if (put_line(out, ' ', &la[a]) < 0)
				return -1;
		h = e + 1;
	}
	return 0;
}

int pmbot_diff_unified(pmbot_buf *out, const char *a, size_t a_len, const char *b,
	size_t b_len, const char *a_name, const char *b_name, int context)
{
	size_t na, nb, n, i, j, head, nch = 0, challoc = 0, orig = out->len;
	size_t ctx = context > 0 ? (size_t)context : 0;
	diff_line *lines = NULL;
	diff_change *ch = NULL;
	diff_ctx c;
	size_t *ids = NULL;
	int rc = PMBOT_ERROR;

	memset(&c, 0, sizeof(c));
	if (a_len == b_len && (!a_len || !memcmp(a, b, a_len)))
		return PMBOT_OK;
	na = count_lines(a, a_len);
	nb = count_lines(b, b_len);
	n = na + nb;
	lines = malloc((n ? n : 1) * sizeof(*lines));
	ids = malloc((n ? n : 1) * sizeof(*ids));
	c.ca = calloc(na + 1, 1);
	c.cb = calloc(nb + 1, 1);
	c.v1 = malloc((n + 4) * sizeof(*c.v1));
	c.v2 = malloc((n + 4) * sizeof(*c.v2));
	if (!lines || !ids || !c.ca || !c.cb || !c.v1 || !c.v2)
		goto done;
	split_lines(lines, a, a_len);
	split_lines(lines + na, b, b_len);
	if (assign_ids(ids, lines, n) < 0)
		goto done;
	c.ia = ids;
	c.ib = ids + na;

	compare(&c, 0, na, 0, nb);
	if (c.over) {
		/* Too costly to be minimal: replace everything between the common ends. */
		size_t ta = na, tb = nb;

		memset(c.ca, 0, na);
		memset(c.cb, 0, nb);
		for (head = 0; head < na && head < nb && c.ia[head] == c.ib[head]; head++)
			;
		while (ta > head && tb > head && c.ia[ta - 1] == c.ib[tb - 1]) {
			ta--;
			tb--;
		}
		mark_all(&c, head, ta, head, tb);
	}

	for (i = 0, j = 0; i < na || j < nb;) {
		if ((i < na && c.ca[i]) || (j < nb && c.cb[j])) {
			diff_change d;

			d.a0 = i;
			d.b0 = j;
			while (i < na && c.ca[i])
				i++;
			while (j < nb && c.cb[j])
				j++;
			d.a1 = i;
			d.b1 = j;
			if (push_change(&ch, &nch, &challoc, d) < 0)
				goto done;
		} else if (i < na && j < nb) {
			i++;
			j++;
		} else {
			goto done; /* unreachable: the marks pair up every unchanged line */
		}
	}
	if (!nch) {
		rc = PMBOT_OK;
		goto done;
	}
	if (pmbot_buf_printf(out, "--- %s\n+++ %s\n", a_name ? a_name : "a",
		    b_name ? b_name : "b") < 0 ||
	    put_hunks(out, lines, na, lines + na, ch, nch, ctx) < 0)
		goto done;
	rc = PMBOT_OK;
done:
	if (rc != PMBOT_OK)
		pmbot_buf_truncate(out, orig);
	free(lines);
	free(ids);
	free(c.ca);
	free(c.cb);
	free(c.v1);
	free(c.v2);
	free(ch);
	return rc;
}
