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
	/* Printable ASCII is settled in one pass unless it holds "--". */
	assert_int_equal(pmbot_text_id_safe("task:a--b"), 1);
	assert_int_equal(pmbot_text_id_safe("task:a--"), 1);
	assert_int_equal(pmbot_text_id_safe("<!--task:a"), 0);
	assert_int_equal(pmbot_text_id_safe("task:a--!>"), 0);
	assert_int_equal(pmbot_text_id_safe("task:a\tb"), 0);
	assert_int_equal(pmbot_text_id_safe("task:a\x7f"), 0);
	assert_int_equal(pmbot_text_id_safe("task:\xc3\xa9-->"), 0);
}

/* Every code point, as UTF-8, against the list in text.h. */
static void test_text__blank_len_is_the_white_space_list(void **state)
{
	static const unsigned long blank[] = {
		0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001,
		0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
		0x200b, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff
	};
	unsigned long cp;
	size_t k, found = 0;

	(void)state;
	for (cp = 1; cp <= 0x10ffff; cp++) {
		char u[4];
		size_t n, want = 0;

		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		if (cp < 0x80) {
			u[0] = (char)cp;
			n = 1;
		} else if (cp < 0x800) {
			u[0] = (char)(0xc0 | (cp >> 6));
			u[1] = (char)(0x80 | (cp & 0x3f));
			n = 2;
		} else if (cp < 0x10000) {
			u[0] = (char)(0xe0 | (cp >> 12));
			u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
			u[2] = (char)(0x80 | (cp & 0x3f));
			n = 3;
		} else {
			u[0] = (char)(0xf0 | (cp >> 18));
			u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
			u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
			u[3] = (char)(0x80 | (cp & 0x3f));
			n = 4;
		}
		for (k = 0; k < sizeof(blank) / sizeof(blank[0]); k++)
			if (blank[k] == cp)
				want = n;
		found += want != 0;
		if (pmbot_text_blank_len(u, n) != want)
			fail_msg("U+%04lX: blank_len %zu, want %zu", cp, pmbot_text_blank_len(u, n), want);
		/* A cut sequence is no blank. */
		if (n > 1)
			assert_int_equal(pmbot_text_blank_len(u, n - 1), 0);
	}
	assert_int_equal(found, sizeof(blank) / sizeof(blank[0]));
}

/* The definition: flattened, neutralised with code spans kept, code points counted. */
static size_t shown_by_definition(const char *s)
{
	pmbot_buf flat = PMBOT_BUF_INIT, shown = PMBOT_BUF_INIT;
	size_t i, n = 0;

	assert_int_equal(pmbot_text_flatten(&flat, s, strlen(s)), 0);
	assert_int_equal(pmbot_text_neutralise(&shown, flat.buf, flat.len, PMBOT_TEXT_CODE_SPANS), 0);
	for (i = 0; i < shown.len; i++)
		n += ((unsigned char)shown.buf[i] & 0xc0) != 0x80;
	pmbot_buf_free(&flat);
	pmbot_buf_free(&shown);
	return n;
}

static size_t flat_by_definition(const char *s)
{
	pmbot_buf flat = PMBOT_BUF_INIT;
	size_t i, n = 0;

	assert_int_equal(pmbot_text_flatten(&flat, s, strlen(s)), 0);
	for (i = 0; i < flat.len; i++)
		n += ((unsigned char)flat.buf[i] & 0xc0) != 0x80;
	pmbot_buf_free(&flat);
	return n;
}

static void test_text__shown_and_flat_chars_count_what_is_rendered(void **state)
{
	static const char *const in[] = {
		"", "a", "Rate-limit feature flags (0)", "ping @octocat", "fix #12 and GH-3",
		"see https://x.example and www.example.com", "gh-1 xgh-1 xwww.y", "@", "#",
		"a:b", "a://", "wW.", "  two  spaces ", "tab\there", "line\nbreak", " lead",
		"trail ", "caf\xc3\xa9 @bob", "\\@x", "&commat;y", "`@code`", "x <@y>",
		("a\xe2\x80\xa8" "b"), "\xc2\x85@z", "a|b @c", "`unclosed @d", "W.W.W.",
		"@a@b#1#2", "ends with @", "ends with #1"
	};
	unsigned long seed = 54321;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		assert_int_equal(pmbot_text_shown_chars(&n, in[i], strlen(in[i])), 0);
		if (n != shown_by_definition(in[i]))
			fail_msg("shown \"%s\": %zu, want %zu", in[i], n, shown_by_definition(in[i]));
		assert_int_equal(pmbot_text_flat_chars(&n, in[i], strlen(in[i])), 0);
		if (n != flat_by_definition(in[i]))
			fail_msg("flat \"%s\": %zu, want %zu", in[i], n, flat_by_definition(in[i]));
	}
	/* Strings of the pieces the count's shortcuts look at, against the definition. */
	for (i = 0; i < 20000; i++) {
		static const char *const piece[] = {
			"@", "#", ":", "/", "-", "w", "W", "ww", ".", "1", "a", " ", "  ", "gh",
			"\\", "&", "`", "<", "|", "x", "www.", "gh-1", "@me", "#7", "http://", "\xc3\xa9"
		};
		char buf[256];
		size_t len = 0, k, count;

		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		count = (size_t)(seed >> 33) % 12;
		for (k = 0; k < count; k++) {
			const char *p;

			seed = seed * 6364136223846793005UL + 1442695040888963407UL;
			p = piece[(size_t)(seed >> 33) % (sizeof(piece) / sizeof(piece[0]))];
			memcpy(buf + len, p, strlen(p));
			len += strlen(p);
		}
		buf[len] = '\0';
		assert_int_equal(pmbot_text_shown_chars(&n, buf, len), 0);
		if (n != shown_by_definition(buf))
			fail_msg("shown \"%s\": %zu, want %zu", buf, n, shown_by_definition(buf));
	}
	/* Figures by hand, so the definition itself is pinned too. */
	assert_int_equal(pmbot_text_shown_chars(&n, "ping @octocat", 13), 0);
	assert_int_equal(n, 14);
	assert_int_equal(pmbot_text_shown_chars(&n, "Rate-limit feature flags (0)", 28), 0);
	assert_int_equal(n, 28);
	assert_int_equal(pmbot_text_flat_chars(&n, "  two  spaces ", 14), 0);
	assert_int_equal(n, 10);
	assert_int_equal(pmbot_text_flat_chars(&n, "caf\xc3\xa9", 5), 0);
	assert_int_equal(n, 4);
}

/*
 * Copying clean runs in one go must give exactly what the token loop gives
 * byte by byte: many strings built from the pieces the rule, the escapes,
 * the references and the code-span logic look at, each read with and
 * without PMBOT_TEXT_CODE_SPANS.
 */
static void test_text__clean_runs_match_the_token_loop(void **state)
{
	static const char *const piece[] = {
		"@", "#", ":", "/", "//", "-", "gh", "GH", "w", "W", "ww", ".", "1", "42", "a", "Z",
		" ", "\n", "\r", "\\", "\\@", "\\.", "&", "&#64;", "&#x40;", "&commat;",
		"&period;", "&num;", "&#49;", "&amp;", "&#", "`", "``", "<", "|", "\xe2\x80\x8c",
		"\xc3\xa9", "\xe2", "x", "_", ";", "text ", "www.", "gh-1", "@me", "#7", "http://"
	};
	static const unsigned flags[] = { 0, PMBOT_TEXT_CODE_SPANS };
	const size_t npiece = sizeof(piece) / sizeof(piece[0]);
	unsigned long seed = 12345;
	size_t n, k, f, changed = 0;
	char in[512];

	(void)state;
	for (n = 0; n < 20000; n++) {
		size_t len = 0, count;

		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		count = (size_t)(seed >> 33) % 24;
		for (k = 0; k < count; k++) {
			const char *p;

			seed = seed * 6364136223846793005UL + 1442695040888963407UL;
			p = piece[(size_t)(seed >> 33) % npiece];
			memcpy(in + len, p, strlen(p));
			len += strlen(p);
		}
		for (f = 0; f < 2; f++) {
			pmbot_buf fast = PMBOT_BUF_INIT, slow = PMBOT_BUF_INIT;

			assert_int_equal(pmbot_text_neutralise(&fast, in, len, flags[f]), 0);
			assert_int_equal(pmbot_text_neutralise(&slow, in, len,
							       flags[f] | PMBOT_TEXT__BYTEWISE), 0);
			assert_int_equal(fast.len, slow.len);
			assert_memory_equal(fast.buf ? fast.buf : "", slow.buf ? slow.buf : "", fast.len);
			changed += fast.len != len;
			pmbot_buf_free(&fast);
			pmbot_buf_free(&slow);
		}
	}
	/* The strings exercise the rule: many get a U+200C. */
	assert_true(changed > 1000);
}

/* Flattening by definition, a byte at a time: breakers and spaces are one space between words. */
static void flatten_bytewise(pmbot_buf *out, const char *s, size_t len)
{
	size_t i = 0, n;
	int space = 0;

	while (i < len) {
		n = pmbot_text_breaker_len(s + i, len - i);
		if (n || s[i] == ' ') {
			space = out->len > 0;
			i += n ? n : 1;
			continue;
		}
		if (space)
			assert_int_equal(pmbot_buf_putc(out, ' '), 0);
		space = 0;
		assert_int_equal(pmbot_buf_put(out, s + i, 1), 0);
		i++;
	}
}

/* The one-copy path for text already flat gives what flattening by definition gives. */
static void test_text__flatten_matches_the_definition(void **state)
{
	static const char *const piece[] = {
		"a", "Zz", "b c", " ", "  ", "\t", "\n", "\r", "\x7f", "\x01", "\xc2\x85",
		"\xe2\x80\xa8", "\xe2\x80\xa9", "\xc3\xa9", "~", "x y z", "@me"
	};
	const size_t npiece = sizeof(piece) / sizeof(piece[0]);
	unsigned long seed = 777;
	size_t n, k, flat = 0;
	char in[256];

	(void)state;
	for (n = 0; n < 20000; n++) {
		pmbot_buf got = PMBOT_BUF_INIT, want = PMBOT_BUF_INIT;
		size_t len = 0, count;

		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		count = (size_t)(seed >> 33) % 12;
		for (k = 0; k < count; k++) {
			const char *p;

			seed = seed * 6364136223846793005UL + 1442695040888963407UL;
			p = piece[(size_t)(seed >> 33) % npiece];
			memcpy(in + len, p, strlen(p));
			len += strlen(p);
		}
		assert_int_equal(pmbot_text_flatten(&got, in, len), 0);
		flatten_bytewise(&want, in, len);
		assert_int_equal(got.len, want.len);
		assert_memory_equal(got.buf ? got.buf : "", want.buf ? want.buf : "", got.len);
		flat += got.len == len;
		pmbot_buf_free(&got);
		pmbot_buf_free(&want);
	}
	/* Both paths ran: some strings were flat already, most were not. */
	assert_true(flat > 1000 && flat < 19000);
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
		cmocka_unit_test(test_text__blank_len_is_the_white_space_list),
		cmocka_unit_test(test_text__shown_and_flat_chars_count_what_is_rendered),
		cmocka_unit_test(test_text__clean_runs_match_the_token_loop),
		cmocka_unit_test(test_text__flatten_matches_the_definition),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
