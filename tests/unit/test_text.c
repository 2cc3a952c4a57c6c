#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/text.h"
#include "pmbot/banned.h"

#define Z PMBOT_TEXT_ZWNJ

/* pmbot_text_neutralise() of `in`, compared with `want`; also idempotent. */
static void check(const char *in, unsigned flags, const char *want)
{
	pmbot_buf a = PMBOT_BUF_INIT, b = PMBOT_BUF_INIT, back = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_text_neutralise(&a, in, strlen(in), flags), 0);
	assert_string_equal(a.buf, want);
	assert_int_equal(pmbot_text_neutralise(&b, a.buf, a.len, flags), 0);
	assert_string_equal(b.buf, want);
	/* The inverse gives the text back. */
	assert_int_equal(pmbot_text_unneutralise(&back, a.buf, a.len), 0);
	assert_string_equal(back.buf, in);
	pmbot_buf_free(&a);
	pmbot_buf_free(&b);
	pmbot_buf_free(&back);
}

static void test_text__mentions_references_and_links_are_broken(void **state)
{
	(void)state;
	check("ask @octocat", PMBOT_TEXT_CODE_SPANS, "ask @" Z "octocat");
	check("ping @acme/core-team now", PMBOT_TEXT_CODE_SPANS, "ping @" Z "acme/core-team now");
	check("see acme/widgets#12", PMBOT_TEXT_CODE_SPANS, "see acme/widgets#" Z "12");
	check("#12 and GH-7", PMBOT_TEXT_CODE_SPANS, "#" Z "12 and GH-" Z "7");
	check("https://x.example/a", PMBOT_TEXT_CODE_SPANS, "https:" Z "//x.example/a");
	check("www.example.com", PMBOT_TEXT_CODE_SPANS, "www" Z ".example.com");
	check("(WWW.example.com)", 0, "(WWW" Z ".example.com)");
	check("acme/widgets@abc1234", 0, "acme/widgets@" Z "abc1234");
}

static void test_text__harmless_text_is_unchanged(void **state)
{
	(void)state;
	check("a @ b, # heading, C#, x#y, email at host, awww.x, http:/x, GH-x, aGH-1",
		PMBOT_TEXT_CODE_SPANS,
		"a @ b, # heading, C#, x#y, email at host, awww.x, http:/x, GH-x, aGH-1");
	check("", 0, "");
}

static void test_text__escapes_and_references_count_as_their_character(void **state)
{
	(void)state;
	check("\\@octocat", 0, "\\@" Z "octocat");
	check("&#64;octocat &#x40;o &commat;o", 0, "&#64;" Z "octocat &#x40;" Z "o &commat;" Z "o");
	check("&num;12 &#35;&#49;", 0, "&num;" Z "12 &#35;" Z "&#49;");
	check("https&colon;&sol;/x", 0, "https&colon;" Z "&sol;/x");
	check("@&#111;cto", 0, "@" Z "&#111;cto");
	/* A reference that is not one (no ';') is plain text, "#64" in it too. */
	check("&#64 octocat", 0, "&#" Z "64 octocat");
}

static void test_text__code_spans_are_left_alone(void **state)
{
	(void)state;
	check("run `@octocat #1` then @octocat", PMBOT_TEXT_CODE_SPANS,
		"run `@octocat #1` then @" Z "octocat");
	check("``a ` @b`` @c", PMBOT_TEXT_CODE_SPANS, "``a ` @b`` @" Z "c");
	/* Without the flag nothing is code. */
	check("`@octocat`", 0, "`@" Z "octocat`");
	/* An escaped backtick opens nothing. */
	check("\\`@a` @b`", PMBOT_TEXT_CODE_SPANS, "\\`@" Z "a` @b`");
}

static void test_text__doubtful_code_spans_are_neutralised(void **state)
{
	(void)state;
	/* The first run may pair with one on a later line: no span is trusted after it. */
	check("`a\nb` @x `c`", PMBOT_TEXT_CODE_SPANS, "`a\nb` @" Z "x `c`");
	check("`a`\n`b\n`@x`", PMBOT_TEXT_CODE_SPANS, "`a`\n`b\n`@" Z "x`");
	/* Raw HTML wins over a code span that starts after it. */
	check("<span title=\"`\">@x`</span>", PMBOT_TEXT_CODE_SPANS,
		"<span title=\"`\">@" Z "x`</span>");
	/* A table splits cells before it reads code. */
	check("ok `@a`\n| `x | @y ` |", PMBOT_TEXT_CODE_SPANS, "ok `@a`\n| `x | @" Z "y ` |");
}

static void test_text__inverse_keeps_other_zero_width_non_joiners(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	/* Persian "mi-khaham" keeps its U+200C; the one after '@' goes. */
	const char *in = "\xd9\x85\xdb\x8c" Z "\xd8\xae\xd9\x88\xd8\xa7\xd9\x87\xd9\x85 @" Z "team @" Z " x";

	(void)state;
	assert_int_equal(pmbot_text_unneutralise(&b, in, strlen(in)), 0);
	assert_string_equal(b.buf,
		"\xd9\x85\xdb\x8c" Z "\xd8\xae\xd9\x88\xd8\xa7\xd9\x87\xd9\x85 @team @" Z " x");
	pmbot_buf_free(&b);
}

static void test_text__plain_text_rule_reads_bytes(void **state)
{
	const char *s = "@a #1 \\@b &#64;c https://x www.y";
	size_t n = strlen(s), i;
	pmbot_buf b = PMBOT_BUF_INIT;

	(void)state;
	for (i = 0; i < n; i++) {
		assert_int_equal(pmbot_buf_putc(&b, s[i]), 0);
		if (pmbot_text_needs_zwnj(s, n, i))
			assert_int_equal(pmbot_buf_puts(&b, Z), 0);
	}
	/* Escapes and references are the caller's text, escaped by the caller. */
	assert_string_equal(b.buf, "@" Z "a #" Z "1 \\@" Z "b &#" Z "64;c https:" Z "//x www" Z ".y");
	assert_int_equal(pmbot_text_needs_zwnj(s, n, n), 0);
	pmbot_buf_free(&b);
}

static void test_text__blank_values_and_safe_ids(void **state)
{
	(void)state;
	assert_int_equal(pmbot_text_is_blank("", 0), 1);
	assert_int_equal(pmbot_text_is_blank(" \t\n", 3), 1);
	assert_int_equal(pmbot_text_is_blank("\xc2\xa0" "\xe3\x80\x80" "\xef\xbb\xbf", 8), 1);
	assert_int_equal(pmbot_text_is_blank(" _No response_\xc2\xa0", 16), 1);
	assert_int_equal(pmbot_text_is_blank("_No response_x", 14), 0);
	assert_int_equal(pmbot_text_is_blank("\xc2\xa0" "x", 3), 0);
	assert_int_equal(pmbot_text_is_blank("\xc3\xa9", 2), 0);
	assert_int_equal(pmbot_text_id_safe("task:a"), 1);
	assert_int_equal(pmbot_text_id_safe(""), 0);
	assert_int_equal(pmbot_text_id_safe("task: a"), 0);
	assert_int_equal(pmbot_text_id_safe("task:\xc2\xa0" "a"), 0);
	assert_int_equal(pmbot_text_id_safe("task:a-->"), 0);
	assert_int_equal(pmbot_text_id_safe("task:\xc3\xa9"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text__blank_values_and_safe_ids),
		cmocka_unit_test(test_text__mentions_references_and_links_are_broken),
		cmocka_unit_test(test_text__harmless_text_is_unchanged),
		cmocka_unit_test(test_text__escapes_and_references_count_as_their_character),
		cmocka_unit_test(test_text__code_spans_are_left_alone),
		cmocka_unit_test(test_text__doubtful_code_spans_are_neutralised),
		cmocka_unit_test(test_text__inverse_keeps_other_zero_width_non_joiners),
		cmocka_unit_test(test_text__plain_text_rule_reads_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
