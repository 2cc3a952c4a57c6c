#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/common.h"
#include "pmbot/glob.h"
#include "pmbot/banned.h"

#define MATCH(p, s) assert_int_equal(pmbot_glob_match((p), (s)), 1)
#define NO_MATCH(p, s) assert_int_equal(pmbot_glob_match((p), (s)), 0)

static void test_glob__literal_paths_match_exactly(void **state)
{
	(void)state;
	MATCH("plans/a.md", "plans/a.md");
	NO_MATCH("plans/a.md", "plans/a.mdx");
	NO_MATCH("plans/a.md", "plans/a.m");
	NO_MATCH("plans/a.md", "xplans/a.md");
	NO_MATCH("plans/a.md", "Plans/a.md");
}

static void test_glob__star_stays_inside_one_segment(void **state)
{
	(void)state;
	MATCH("*.md", "a.md");
	MATCH("*.md", ".md");
	MATCH("*.md", ".hidden.md");
	NO_MATCH("*.md", "plans/a.md");
	MATCH("plans/*.md", "plans/a.md");
	NO_MATCH("plans/*.md", "plans/x/a.md");
	MATCH("plans/*", "plans/anything");
	NO_MATCH("plans/*", "plans/x/y");
	MATCH("a*b*c", "abc");
	MATCH("a*b*c", "aXbYbZc");
	NO_MATCH("a*b*c", "aXbYbZ");
	MATCH("p*/*", "plans/a");
	NO_MATCH("p*", "plans/a");
}

static void test_glob__question_mark_is_one_character_not_slash(void **state)
{
	(void)state;
	MATCH("a?c", "abc");
	NO_MATCH("a?c", "ac");
	NO_MATCH("a?c", "abbc");
	NO_MATCH("a?c", "a/c");
	/* One UTF-8 character, not one byte. */
	MATCH("caf?.md", "caf\xc3\xa9.md");
	NO_MATCH("caf??.md", "caf\xc3\xa9.md");
}

static void test_glob__classes_ranges_and_negation(void **state)
{
	(void)state;
	MATCH("q[123].md", "q2.md");
	NO_MATCH("q[123].md", "q4.md");
	MATCH("q[a-c].md", "qb.md");
	NO_MATCH("q[a-c].md", "qd.md");
	MATCH("q[!a-c].md", "qd.md");
	NO_MATCH("q[!a-c].md", "qa.md");
	MATCH("q[^a].md", "qb.md");
	NO_MATCH("q[^a].md", "qa.md");
	MATCH("[]a]", "]");
	MATCH("[!]]", "x");
	NO_MATCH("[!]]", "]");
	MATCH("[a-]", "-");
	MATCH("[-a]", "-");
	MATCH("[\\]]", "]");
	NO_MATCH("a[!x]b", "a/b");
	MATCH("[\xc3\xa0-\xc3\xbf]", "\xc3\xa9");
	NO_MATCH("[a-z]", "\xc3\xa9");
}

static void test_glob__backslash_escapes_metacharacters(void **state)
{
	(void)state;
	MATCH("a\\*b", "a*b");
	NO_MATCH("a\\*b", "axb");
	MATCH("a\\?", "a?");
	NO_MATCH("a\\?", "ab");
	MATCH("\\[x]", "[x]");
	NO_MATCH("\\[x]", "x");
	MATCH("a\\b", "ab");
}

static void test_glob__double_star_segment_matches_zero_or_more_directories(void **state)
{
	(void)state;
	MATCH("plans/**/*.md", "plans/a.md");
	MATCH("plans/**/*.md", "plans/x/a.md");
	MATCH("plans/**/*.md", "plans/x/y/a.md");
	NO_MATCH("plans/**/*.md", "plans/x/y/a.txt");
	NO_MATCH("plans/**/*.md", "other/plans/a.md");
	MATCH("**/*.md", "a.md");
	MATCH("**/*.md", "deep/er/a.md");
	MATCH("a/**/b/**/c", "a/b/c");
	MATCH("a/**/b/**/c", "a/x/b/y/z/c");
	MATCH("a/**/b/**/c", "a/b/b/b/c");
	NO_MATCH("a/**/b/**/c", "a/x/c");
	MATCH("**/x/**/y.md", "x/y.md");
	MATCH("**/x/**/y.md", "q/x/r/y.md");
}

static void test_glob__trailing_double_star_matches_everything_below(void **state)
{
	(void)state;
	MATCH("plans/**", "plans/a.md");
	MATCH("plans/**", "plans/x/y/z");
	NO_MATCH("plans/**", "plans");
	NO_MATCH("plans/**", "plansx/a");
	MATCH("**", "a");
	MATCH("**", "a/b/c");
}

static void test_glob__double_star_inside_a_segment_is_a_single_star(void **state)
{
	(void)state;
	MATCH("a**b", "axxb");
	NO_MATCH("a**b", "ax/xb");
	MATCH("**.md", "a.md");
	NO_MATCH("**.md", "x/a.md");
}

static void test_glob__empty_path_and_invalid_patterns_never_match(void **state)
{
	(void)state;
	NO_MATCH("*", "");
	NO_MATCH("", "");
	NO_MATCH("", "a");
	NO_MATCH("[a", "[a");
	NO_MATCH("a\\", "a\\");
	NO_MATCH("/a", "/a");
	assert_int_equal(pmbot_glob_match(NULL, "a"), 0);
	assert_int_equal(pmbot_glob_match("a", NULL), 0);
}

static void test_glob__check_reports_offset_and_reason(void **state)
{
	size_t at = 99;
	const char *why = NULL;

	(void)state;
	assert_int_equal(pmbot_glob_check("plans/**/*.md", &at, &why), 0);
	assert_int_equal(pmbot_glob_check("[]]", NULL, NULL), 0);
	assert_int_equal(pmbot_glob_check("a/[b-", &at, &why), PMBOT_EINVALID);
	assert_int_equal(at, 2);
	assert_non_null(strstr(why, "'['"));
	/* A class cannot reach across '/'. */
	assert_int_equal(pmbot_glob_check("a[/]b", &at, &why), PMBOT_EINVALID);
	assert_int_equal(at, 1);
	assert_int_equal(pmbot_glob_check("ab\\", &at, &why), PMBOT_EINVALID);
	assert_int_equal(at, 2);
	assert_int_equal(pmbot_glob_check("a\\/b", &at, &why), PMBOT_EINVALID);
	assert_int_equal(at, 1);
	assert_int_equal(pmbot_glob_check("/plans/*.md", &at, &why), PMBOT_EINVALID);
	assert_int_equal(at, 0);
	assert_int_equal(pmbot_glob_check("plans//a", &at, &why), PMBOT_EINVALID);
	assert_int_equal(at, 6);
	assert_int_equal(pmbot_glob_check("plans/", &at, &why), PMBOT_EINVALID);
	assert_int_equal(at, 6);
	assert_int_equal(pmbot_glob_check("", &at, &why), PMBOT_EINVALID);
	assert_int_equal(at, 0);
	assert_non_null(why);
}

static void test_glob__may_match_under_prunes_only_unreachable_directories(void **state)
{
	(void)state;
	assert_int_equal(pmbot_glob_may_match_under("plans/*.md", ""), 1);
	assert_int_equal(pmbot_glob_may_match_under("plans/*.md", "plans"), 1);
	assert_int_equal(pmbot_glob_may_match_under("plans/*.md", "src"), 0);
	assert_int_equal(pmbot_glob_may_match_under("plans/*.md", "plans/x"), 0);
	assert_int_equal(pmbot_glob_may_match_under("*.md", "plans"), 0);
	/* The last segment names files, so a directory it matches holds none. */
	assert_int_equal(pmbot_glob_may_match_under("plans/*", "plans/x"), 0);
	assert_int_equal(pmbot_glob_may_match_under("plans/*.md", "plans/dir.md"), 0);
	assert_int_equal(pmbot_glob_may_match_under("p*/q?/*.md", "plans/q1"), 1);
	assert_int_equal(pmbot_glob_may_match_under("p*/q?/*.md", "plans/q12"), 0);
	assert_int_equal(pmbot_glob_may_match_under("plans/**/*.md", "plans/a/b/c"), 1);
	assert_int_equal(pmbot_glob_may_match_under("plans/**/*.md", "docs/a"), 0);
	assert_int_equal(pmbot_glob_may_match_under("**/*.md", "anything/at/all"), 1);
	assert_int_equal(pmbot_glob_may_match_under("[", "x"), 0);
}

/* Every directory on the way to a matching path must be reported as
 * reachable, whatever the pattern: checked against pmbot_glob_match. */
static void test_glob__may_match_under_never_prunes_a_match(void **state)
{
	static const char *patterns[] = {
		"plans/**/*.md", "**/x/*.md", "a/*/c/**", "*/b/**/d.md", "a/**/b/**/c.md",
		"[ab]/?/c.md", "**/**/e.md",
	};
	static const char *paths[] = {
		"plans/a.md", "plans/x/y/a.md", "q/x/a.md", "x/a.md", "a/b/c/d.md",
		"a/q/b/r/c.md", "b/z/c.md", "a/b/b/c.md", "e.md", "a/b/c/d/e.md",
		"z/b/d.md", "z/b/q/d.md",
	};
	char dir[64];
	size_t i, j, k;

	(void)state;
	for (i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		for (j = 0; j < sizeof(paths) / sizeof(paths[0]); j++) {
			const char *p = paths[j];

			if (!pmbot_glob_match(patterns[i], p))
				continue;
			assert_int_equal(pmbot_glob_may_match_under(patterns[i], ""), 1);
			for (k = 0; p[k]; k++) {
				if (p[k] != '/')
					continue;
				assert_true(k < sizeof(dir));
				memcpy(dir, p, k);
				dir[k] = '\0';
				if (!pmbot_glob_may_match_under(patterns[i], dir))
					fail_msg("'%s' pruned '%s' although '%s' matches",
						patterns[i], dir, p);
			}
		}
	}
}

/*
 * A deliberately naive, exponential reference for the documented
 * semantics, restricted to the classes "[ab]" and "[!a]" that the random
 * patterns below use.
 */
static int ref_seg(const char *p, const char *pe, const char *s, const char *se)
{
	if (p == pe)
		return s == se;
	if (*p == '*')
		return ref_seg(p + 1, pe, s, se) || (s < se && ref_seg(p, pe, s + 1, se));
	if (s == se)
		return 0;
	if (*p == '?')
		return ref_seg(p + 1, pe, s + 1, se);
	if (*p == '[') {
		const char *close = memchr(p, ']', (size_t)(pe - p));
		int neg = p[1] == '!';
		const char *set = p + 1 + neg;
		int hit = memchr(set, *s, (size_t)(close - set)) != NULL;

		return hit != neg && ref_seg(close + 1, pe, s + 1, se);
	}
	return *p == *s && ref_seg(p + 1, pe, s + 1, se);
}

enum { REF_MAX = 32 };

static size_t ref_split(const char *s, const char **start, const char **end)
{
	size_t n = 0;

	for (;;) {
		const char *e = strchr(s, '/');

		start[n] = s;
		end[n] = e ? e : s + strlen(s);
		n++;
		if (!e)
			return n;
		s = e + 1;
	}
}

static int ref_path(const char **ps, const char **pe, size_t np,
	const char **ss, const char **se, size_t ns)
{
	size_t k;

	if (!np)
		return !ns;
	if (pe[0] - ps[0] == 2 && ps[0][0] == '*' && ps[0][1] == '*') {
		if (np == 1)
			return ns > 0;
		for (k = 0; k <= ns; k++)
			if (ref_path(ps + 1, pe + 1, np - 1, ss + k, se + k, ns - k))
				return 1;
		return 0;
	}
	return ns && ref_seg(ps[0], pe[0], ss[0], se[0]) &&
		ref_path(ps + 1, pe + 1, np - 1, ss + 1, se + 1, ns - 1);
}

static int ref_match(const char *pattern, const char *path)
{
	const char *ps[REF_MAX], *pe[REF_MAX], *ss[REF_MAX], *se[REF_MAX];
	size_t np = ref_split(pattern, ps, pe), ns = ref_split(path, ss, se);

	return ref_path(ps, pe, np, ss, se, ns);
}

static void test_glob__agrees_with_a_naive_reference_matcher(void **state)
{
	static const char *ptok[] = { "a", "b", "*", "?", "[ab]", "[!a]", "/", "**", "/**/" };
	static const char stok[] = { 'a', 'b', '/' };
	uint32_t seed = 12345;
	char pattern[64], path[16];
	size_t round, i, len, checked = 0, matched = 0;

	(void)state;
	for (round = 0; round < 200000; round++) {
		size_t n;

		len = 0;
		n = 1 + (seed = seed * 1103515245u + 12345u) % 6;
		for (i = 0; i < n; i++) {
			const char *t = ptok[((seed = seed * 1103515245u + 12345u) >> 16) % 9];

			memcpy(pattern + len, t, strlen(t));
			len += strlen(t);
		}
		pattern[len] = '\0';
		n = 1 + ((seed = seed * 1103515245u + 12345u) >> 16) % 8;
		for (i = 0; i < n; i++)
			path[i] = stok[((seed = seed * 1103515245u + 12345u) >> 16) % 3];
		path[n] = '\0';
		/* Only well-formed inputs: no empty segments on either side. */
		if (pmbot_glob_check(pattern, NULL, NULL) || path[0] == '/' ||
		    path[n - 1] == '/' || strstr(path, "//"))
			continue;
		checked++;
		matched += (size_t)ref_match(pattern, path);
		if (pmbot_glob_match(pattern, path) != ref_match(pattern, path))
			fail_msg("'%s' vs '%s': matcher %d, reference %d", pattern, path,
				pmbot_glob_match(pattern, path), ref_match(pattern, path));
	}
	/* The sample must exercise both answers to mean anything. */
	assert_true(checked > 10000);
	assert_true(matched > 1000);
	assert_true(matched < checked - 1000);
}

/*
 * Naive recursive matching takes exponential time on these; the matcher
 * must finish (the test would hang otherwise) and give the right answer.
 */
static void test_glob__pathological_patterns_stay_polynomial(void **state)
{
	enum { N = 20000 };
	char *path = malloc(N + 2), *deep = malloc(2 * N + 4);
	size_t i;

	(void)state;
	assert_non_null(path);
	assert_non_null(deep);
	memset(path, 'a', N);
	path[N] = '\0';
	NO_MATCH("*a*a*a*a*a*a*a*a*a*a*a*a*b", path);
	path[N] = 'b';
	path[N + 1] = '\0';
	MATCH("*a*a*a*a*a*a*a*a*a*a*a*a*b", path);

	for (i = 0; i < N; i++) {
		deep[2 * i] = 'a';
		deep[2 * i + 1] = '/';
	}
	deep[2 * N] = 'a';
	deep[2 * N + 1] = '\0';
	NO_MATCH("**/a/**/a/**/a/**/a/**/a/**/a/**/b", deep);
	MATCH("**/a/**/a/**/a/**/a/**/a/**/a/**/a", deep);
	deep[2 * N] = 'b';
	MATCH("**/a/**/a/**/a/**/a/**/a/**/a/**/b", deep);
	NO_MATCH("**/a*a*a*a*a*c/**/b", deep);
	free(path);
	free(deep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glob__literal_paths_match_exactly),
		cmocka_unit_test(test_glob__star_stays_inside_one_segment),
		cmocka_unit_test(test_glob__question_mark_is_one_character_not_slash),
		cmocka_unit_test(test_glob__classes_ranges_and_negation),
		cmocka_unit_test(test_glob__backslash_escapes_metacharacters),
		cmocka_unit_test(test_glob__double_star_segment_matches_zero_or_more_directories),
		cmocka_unit_test(test_glob__trailing_double_star_matches_everything_below),
		cmocka_unit_test(test_glob__double_star_inside_a_segment_is_a_single_star),
		cmocka_unit_test(test_glob__empty_path_and_invalid_patterns_never_match),
		cmocka_unit_test(test_glob__check_reports_offset_and_reason),
		cmocka_unit_test(test_glob__may_match_under_prunes_only_unreachable_directories),
		cmocka_unit_test(test_glob__may_match_under_never_prunes_a_match),
		cmocka_unit_test(test_glob__agrees_with_a_naive_reference_matcher),
		cmocka_unit_test(test_glob__pathological_patterns_stay_polynomial),
	};

	return cmocka_run_group_tests(tests, 0, NULL);
}
