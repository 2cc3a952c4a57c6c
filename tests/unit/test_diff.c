#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/plan.h"
#include "pmbot/banned.h"

/* ---- helpers ------------------------------------------------------------ */

/* The diff of two C strings with names "a"/"b"; caller frees. */
static char *udiff(const char *a, const char *b, int context)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_diff_unified(&out, a, strlen(a), b, strlen(b), "a", "b", context),
		PMBOT_OK);
	return pmbot_buf_detach(&out, NULL);
}

static void assert_diff(const char *a, const char *b, int context, const char *want)
{
	char *got = udiff(a, b, context);

	assert_string_equal(got, want);
	free(got);
}

/* Next line of `s` (from *pos): its start and length without the '\n'. */
static int next_line(const char *s, size_t len, size_t *pos, const char **line, size_t *n)
{
	const char *nl;

	if (*pos >= len)
		return 0;
	*line = s + *pos;
	nl = memchr(*line, '\n', len - *pos);
	*n = nl ? (size_t)(nl - *line) : len - *pos;
	*pos += *n + (nl ? 1 : 0);
	return 1;
}

/* Line `i` of text `t` (0-based) with its '\n' if it has one; 0 if past the end. */
static int text_line(const char *t, size_t tlen, size_t *pos, const char **l, size_t *n)
{
	const char *nl;

	if (*pos >= tlen)
		return 0;
	*l = t + *pos;
	nl = memchr(*l, '\n', tlen - *pos);
	*n = nl ? (size_t)(nl - *l) + 1 : tlen - *pos;
	*pos += *n;
	return 1;
}

static size_t parse_num(const char **p)
{
	size_t v = 0;

	assert_true(**p >= '0' && **p <= '9');
	while (**p >= '0' && **p <= '9')
		v = v * 10 + (size_t)(*(*p)++ - '0');
	return v;
}

/* "-s,c" or "-s" after the mark; count defaults to 1. */
static void parse_range(const char **p, char mark, size_t *start, size_t *count)
{
	assert_int_equal(**p, mark);
	(*p)++;
	*start = parse_num(p);
	*count = 1;
	if (**p == ',') {
		(*p)++;
		*count = parse_num(p);
	}
}

/*
 * Apply the unified diff `d` to `a` and return the result (caller frees).
 * Checks as it goes what a strict `patch` would: headers, every hunk's
 * line numbers and counts, context and removed lines equal to A's lines
 * (with their newline or its absence), hunks in order and not touching.
 * Also stores the number of '-' and '+' lines.
 */
static char *apply_patch(const char *a, const char *d, size_t *minus, size_t *plus)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	size_t alen = strlen(a), dlen = strlen(d), dpos = 0, apos = 0, aline = 0;
	const char *l = NULL, *al = NULL;
	size_t n = 0, aln = 0;
	int first = 1;

	*minus = *plus = 0;
	if (!dlen)
		return strdup(a);
	assert_true(next_line(d, dlen, &dpos, &l, &n));
	assert_true(n >= 4 && !memcmp(l, "--- ", 4));
	assert_true(next_line(d, dlen, &dpos, &l, &n));
	assert_true(n >= 4 && !memcmp(l, "+++ ", 4));
	while (next_line(d, dlen, &dpos, &l, &n)) {
		size_t as, ac, bs, bc, seen_a = 0, seen_b = 0, want_a;
		const char *p = l;

		assert_true(n > 3 && !memcmp(l, "@@ ", 3));
		p += 3;
		parse_range(&p, '-', &as, &ac);
		assert_int_equal(*p++, ' ');
		parse_range(&p, '+', &bs, &bc);
		assert_true(!strncmp(p, " @@\n", 4) || !strncmp(p, " @@", 3));
		/* A count of 0 names the line before; else the first line. */
		want_a = ac ? as - 1 : as;
		assert_true(first ? want_a >= aline : want_a > aline);
		first = 0;
		/* Copy the untouched lines before the hunk. */
		while (aline < want_a) {
			assert_true(text_line(a, alen, &apos, &al, &aln));
			assert_int_equal(pmbot_buf_put(&out, al, aln), 0);
			aline++;
		}
		/* The new side's start must agree with where the output is. */
		{
			size_t out_lines = 0, i;

			for (i = 0; i < out.len; i++)
				out_lines += out.buf[i] == '\n';
			assert_int_equal(bc ? bs - 1 : bs, out_lines);
		}
		while (seen_a < ac || seen_b < bc) {
			size_t save = dpos, n2;
			const char *l2;
			int no_nl = 0;
			char mark;

			assert_true(next_line(d, dlen, &dpos, &l, &n));
			assert_true(n >= 1);
			mark = l[0];
			save = dpos;
			if (next_line(d, dlen, &dpos, &l2, &n2) && n2 >= 1 && l2[0] == '\\')
				no_nl = 1;
			else
				dpos = save;
			if (mark == ' ' || mark == '-') {
				assert_true(text_line(a, alen, &apos, &al, &aln));
				aline++;
				seen_a++;
				assert_int_equal(aln, n - 1 + (no_nl ? 0 : 1));
				assert_memory_equal(al, l + 1, n - 1);
				if (!no_nl)
					assert_int_equal(al[aln - 1], '\n');
			}
			if (mark == ' ' || mark == '+') {
				assert_int_equal(pmbot_buf_put(&out, l + 1, n - 1), 0);
				if (!no_nl)
					assert_int_equal(pmbot_buf_putc(&out, '\n'), 0);
				seen_b++;
			}
			if (mark == '-')
				(*minus)++;
			else if (mark == '+')
				(*plus)++;
			else
				assert_int_equal(mark, ' ');
		}
		assert_int_equal(seen_a, ac);
		assert_int_equal(seen_b, bc);
	}
	while (text_line(a, alen, &apos, &al, &aln))
		assert_int_equal(pmbot_buf_put(&out, al, aln), 0);
	return pmbot_buf_detach(&out, NULL);
}

static void assert_patch_gives(const char *a, const char *b, int context, size_t *minus,
	size_t *plus)
{
	char *d = udiff(a, b, context), *got;

	got = apply_patch(a, d, minus, plus);
	if (strcmp(got, b))
		fail_msg("patch of\n%s\ngave\n%s\nnot\n%s", d, got, b);
	free(got);
	free(d);
}

static uint64_t rng_state;

static uint32_t rng(void)
{
	/* xorshift64*: seeded, so every run checks the same cases. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545F4914F6CDD1DULL) >> 32);
}

static char *random_text(size_t max_lines, unsigned alphabet)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t n = rng() % (max_lines + 1), i;

	for (i = 0; i < n; i++)
		assert_int_equal(pmbot_buf_printf(&b, "%c\n", 'a' + (int)(rng() % alphabet)), 0);
	/* Sometimes no final newline. */
	if (b.len && rng() % 4 == 0)
		pmbot_buf_truncate(&b, b.len - 1);
	return pmbot_buf_detach(&b, NULL);
}

static void write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(s, 1, strlen(s), f), strlen(s));
	assert_int_equal(fclose(f), 0);
}

/* Lines removed and added by GNU `diff --minimal -u`. -1 when diff is not available. */
static int gnu_counts(const char *a, const char *b, size_t *minus, size_t *plus)
{
	char pa[] = "/tmp/pmbot-diff-a-XXXXXX", pb[] = "/tmp/pmbot-diff-b-XXXXXX";
	char cmd[128], line[256];
	int fa = mkstemp(pa), fb = mkstemp(pb), header = 0;
	FILE *p;

	assert_true(fa >= 0 && fb >= 0);
	close(fa);
	close(fb);
	write_file(pa, a);
	write_file(pb, b);
	snprintf(cmd, sizeof(cmd), "diff --minimal -u %s %s 2>/dev/null", pa, pb);
	p = popen(cmd, "r");
	assert_non_null(p);
	*minus = *plus = 0;
	while (fgets(line, sizeof(line), p)) {
		if (header < 2 && (!strncmp(line, "--- ", 4) || !strncmp(line, "+++ ", 4))) {
			header++;
			continue;
		}
		if (line[0] == '-')
			(*minus)++;
		else if (line[0] == '+')
			(*plus)++;
	}
	header = pclose(p);
	unlink(pa);
	unlink(pb);
	/* diff exits 0 (same) or 1 (different); 127 from the shell: no diff. */
	if (!WIFEXITED(header) || WEXITSTATUS(header) > 1)
		return -1;
	return 0;
}

/* ---- exact outputs ------------------------------------------------------ */

static void test_diff__equal_texts_give_nothing(void **state)
{
	(void)state;
	assert_diff("", "", 3, "");
	assert_diff("a\nb\n", "a\nb\n", 3, "");
	assert_diff("no newline", "no newline", 3, "");
}

static void test_diff__appends_to_existing_content(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_buf_puts(&out, "before\n"), 0);
	assert_int_equal(pmbot_diff_unified(&out, "x\n", 2, "y\n", 2, "old", "new", 3), PMBOT_OK);
	assert_string_equal(out.buf, "before\n--- old\n+++ new\n@@ -1 +1 @@\n-x\n+y\n");
	pmbot_buf_free(&out);
}

static void test_diff__one_changed_line_with_context(void **state)
{
	(void)state;
	assert_diff("a\nb\nc\n", "a\nB\nc\n", 3,
		"--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
}

static void test_diff__from_and_to_empty_text(void **state)
{
	(void)state;
	assert_diff("", "x\ny\n", 3, "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n");
	assert_diff("x\ny\n", "", 3, "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-x\n-y\n");
	assert_diff("", "x", 3,
		"--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n");
}

static void test_diff__adding_the_final_newline_changes_the_last_line(void **state)
{
	(void)state;
	assert_diff("a\nb", "a\nb\n", 3,
		"--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
	assert_diff("a\nb\n", "a\nb", 3,
		"--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n");
}

static void test_diff__context_line_without_final_newline_is_marked(void **state)
{
	(void)state;
	assert_diff("x\ny\nz", "x\nY\nz", 3,
		"--- a\n+++ b\n@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n\\ No newline at end of file\n");
}

static void test_diff__crlf_is_ordinary_content(void **state)
{
	(void)state;
	assert_diff("a\r\nb\r\n", "a\nb\r\n", 3,
		"--- a\n+++ b\n@@ -1,2 +1,2 @@\n-a\r\n+a\n b\r\n");
	/* A lone CR does not end a line. */
	assert_diff("a\rb\n", "a\rc\n", 3, "--- a\n+++ b\n@@ -1 +1 @@\n-a\rb\n+a\rc\n");
}

static void test_diff__zero_context_names_the_line_before_an_insert(void **state)
{
	(void)state;
	assert_diff("a\nb\nc\nd\ne\nf\ng\n", "a\nb\nc\nd\ne\nf\ng\nh\n", 0,
		"--- a\n+++ b\n@@ -7,0 +8 @@\n+h\n");
	/* A negative context counts as none. */
	assert_diff("a\nb\nc\n", "a\nc\n", -5, "--- a\n+++ b\n@@ -2 +1,0 @@\n-b\n");
}

static void test_diff__myers_paper_example_is_minimal(void **state)
{
	size_t minus, plus;

	(void)state;
	/* ABCABBA -> CBABAC has edit distance 5 (Myers 1986, figure 1). */
	assert_patch_gives("A\nB\nC\nA\nB\nB\nA\n", "C\nB\nA\nB\nA\nC\n", 3, &minus, &plus);
	assert_int_equal(minus + plus, 5);
	assert_int_equal(minus, 3);
}

static const char *const twenty =
	"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n";

static void test_diff__changes_six_lines_apart_share_a_hunk(void **state)
{
	(void)state;
	/* Lines 5 and 12 change: 6 unchanged lines between = 2 * context. */
	assert_diff(twenty,
		"1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n10\n11\nTWELVE\n13\n14\n15\n16\n17\n18\n19\n20\n", 3,
		"--- a\n+++ b\n@@ -2,14 +2,14 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n 9\n 10\n 11\n"
		"-12\n+TWELVE\n 13\n 14\n 15\n");
}

static void test_diff__changes_seven_lines_apart_get_two_hunks(void **state)
{
	(void)state;
	assert_diff(twenty,
		"1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n10\n11\n12\nTHIRTEEN\n14\n15\n16\n17\n18\n19\n20\n", 3,
		"--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n"
		"@@ -10,7 +10,7 @@\n 10\n 11\n 12\n-13\n+THIRTEEN\n 14\n 15\n 16\n");
}

static void test_diff__context_is_clipped_at_both_ends(void **state)
{
	(void)state;
	assert_diff("1\n2\n3\n", "0\n1\n2\n3\n4\n", 3,
		"--- a\n+++ b\n@@ -1,3 +1,5 @@\n+0\n 1\n 2\n 3\n+4\n");
}

static void test_diff__deletions_come_before_insertions(void **state)
{
	(void)state;
	assert_diff("k\nold1\nold2\nk2\n", "k\nnew1\nnew2\nk2\n", 1,
		"--- a\n+++ b\n@@ -1,4 +1,4 @@\n k\n-old1\n-old2\n+new1\n+new2\n k2\n");
}

static void test_diff__null_names_default_to_a_and_b(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_diff_unified(&out, "x", 1, "y", 1, NULL, NULL, 3), PMBOT_OK);
	assert_string_equal(out.buf, "--- a\n+++ b\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n"
		"+y\n\\ No newline at end of file\n");
	pmbot_buf_free(&out);
}

static void test_diff__buffer_cap_fails_and_leaves_content(void **state)
{
	pmbot_buf out;

	(void)state;
	pmbot_buf_init(&out, 20);
	assert_int_equal(pmbot_buf_puts(&out, "keep"), 0);
	assert_int_equal(pmbot_diff_unified(&out, "a\nb\nc\n", 6, "a\nB\nc\n", 6, "a", "b", 3),
		PMBOT_ERROR);
	assert_string_equal(out.buf, "keep");
	pmbot_buf_free(&out);
}

/* ---- properties --------------------------------------------------------- */

static void test_diff__random_patches_apply_and_match_gnu_diff_size(void **state)
{
	int i, gnu = 1;

	(void)state;
	rng_state = 0x9e3779b97f4a7c15ULL;
	for (i = 0; i < 400; i++) {
		unsigned alphabet = 2 + rng() % 5;
		char *a = random_text(30, alphabet), *b = random_text(30, alphabet);
		size_t minus, plus, gm, gp;
		int ctx = (int)(rng() % 4);

		assert_patch_gives(a, b, ctx, &minus, &plus);
		if (gnu && gnu_counts(a, b, &gm, &gp) < 0)
			gnu = 0; /* no GNU diff here: the apply check still ran */
		if (gnu) {
			/* Both are minimal, so they remove and add as many lines. */
			if (minus != gm || plus != gp)
				fail_msg("case %d: -%zu +%zu, diff --minimal says -%zu +%zu\nA:\n%s\nB:\n%s",
					i, minus, plus, gm, gp, a, b);
		}
		free(a);
		free(b);
	}
}

static void test_diff__edits_of_a_long_text_stay_small(void **state)
{
	pmbot_buf a = PMBOT_BUF_INIT, b = PMBOT_BUF_INIT;
	size_t minus, plus, i;

	(void)state;
	for (i = 0; i < 5000; i++) {
		assert_int_equal(pmbot_buf_printf(&a, "line %zu\n", i), 0);
		if (i % 1000 == 500)
			assert_int_equal(pmbot_buf_printf(&b, "changed %zu\n", i), 0);
		else
			assert_int_equal(pmbot_buf_printf(&b, "line %zu\n", i), 0);
	}
	assert_patch_gives(a.buf, b.buf, 3, &minus, &plus);
	assert_int_equal(minus, 5);
	assert_int_equal(plus, 5);
	pmbot_buf_free(&a);
	pmbot_buf_free(&b);
}

/* Lines of `t` (each line has its '\n'). */
static size_t count_nl(const char *t, size_t len)
{
	size_t n = 0, i;

	for (i = 0; i < len; i++)
		n += t[i] == '\n';
	return n;
}

static void test_diff__huge_bodies_past_the_work_bound_get_one_replace_hunk(void **state)
{
	pmbot_buf a = PMBOT_BUF_INIT, b = PMBOT_BUF_INIT, out = PMBOT_BUF_INIT;
	size_t minus, plus, i, hunks = 0, head = 0, tail = 0, na, nb;
	char *got;

	(void)state;
	/*
	 * Two 65,536-byte bodies of one-character lines, each a random mix of
	 * "x" and "y": the minimal diff is a few thousand lines of edits (D in
	 * the thousands, N + M = 65,536), past the work bound, so the region
	 * between the common first and last lines is replaced as a whole.
	 */
	rng_state = 42;
	for (i = 0; a.len < 65536; i++)
		assert_int_equal(pmbot_buf_printf(&a, "%c\n", rng() % 2 ? 'x' : 'y'), 0);
	for (i = 0; b.len < 65536; i++)
		assert_int_equal(pmbot_buf_printf(&b, "%c\n", rng() % 2 ? 'x' : 'y'), 0);
	assert_int_equal(pmbot_diff_unified(&out, a.buf, a.len, b.buf, b.len, "a", "b", 3),
		PMBOT_OK);
	for (i = 0; i < out.len; i++)
		if (out.buf[i] == '@' && (i == 0 || out.buf[i - 1] == '\n') && out.buf[i + 1] == '@')
			hunks++;
	assert_int_equal(hunks, 1);
	got = apply_patch(a.buf, out.buf, &minus, &plus);
	assert_string_equal(got, b.buf);
	na = count_nl(a.buf, a.len);
	nb = count_nl(b.buf, b.len);
	while (head < na && head < nb && a.buf[2 * head] == b.buf[2 * head])
		head++;
	while (tail < na - head && tail < nb - head &&
	       a.buf[a.len - 2 - 2 * tail] == b.buf[b.len - 2 - 2 * tail])
		tail++;
	assert_int_equal(minus, na - head - tail);
	assert_int_equal(plus, nb - head - tail);
	free(got);
	pmbot_buf_free(&a);
	pmbot_buf_free(&b);
	pmbot_buf_free(&out);
}

static void test_diff__large_edit_distance_is_still_exact_under_the_bound(void **state)
{
	pmbot_buf a = PMBOT_BUF_INIT, b = PMBOT_BUF_INIT;
	size_t minus, plus, i, ma = 0, pb = 0;

	(void)state;
	/* 2,000 lines each, a third differ: minimal means exactly those lines. */
	for (i = 0; i < 2000; i++) {
		assert_int_equal(pmbot_buf_printf(&a, "%zu\n", i), 0);
		if (i % 3 == 0) {
			assert_int_equal(pmbot_buf_printf(&b, "new %zu\n", i), 0);
			ma++;
			pb++;
		} else {
			assert_int_equal(pmbot_buf_printf(&b, "%zu\n", i), 0);
		}
	}
	assert_patch_gives(a.buf, b.buf, 3, &minus, &plus);
	assert_int_equal(minus, ma);
	assert_int_equal(plus, pb);
	pmbot_buf_free(&a);
	pmbot_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff__equal_texts_give_nothing),
		cmocka_unit_test(test_diff__appends_to_existing_content),
		cmocka_unit_test(test_diff__one_changed_line_with_context),
		cmocka_unit_test(test_diff__from_and_to_empty_text),
		cmocka_unit_test(test_diff__adding_the_final_newline_changes_the_last_line),
		cmocka_unit_test(test_diff__context_line_without_final_newline_is_marked),
		cmocka_unit_test(test_diff__crlf_is_ordinary_content),
		cmocka_unit_test(test_diff__zero_context_names_the_line_before_an_insert),
		cmocka_unit_test(test_diff__myers_paper_example_is_minimal),
		cmocka_unit_test(test_diff__changes_six_lines_apart_share_a_hunk),
		cmocka_unit_test(test_diff__changes_seven_lines_apart_get_two_hunks),
		cmocka_unit_test(test_diff__context_is_clipped_at_both_ends),
		cmocka_unit_test(test_diff__deletions_come_before_insertions),
		cmocka_unit_test(test_diff__null_names_default_to_a_and_b),
		cmocka_unit_test(test_diff__buffer_cap_fails_and_leaves_content),
		cmocka_unit_test(test_diff__random_patches_apply_and_match_gnu_diff_size),
		cmocka_unit_test(test_diff__edits_of_a_long_text_stay_small),
		cmocka_unit_test(test_diff__huge_bodies_past_the_work_bound_get_one_replace_hunk),
		cmocka_unit_test(test_diff__large_edit_distance_is_still_exact_under_the_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
