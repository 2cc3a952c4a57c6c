#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/action.h"
#include "pmbot/banned.h"

/* The reply block in pm-bot's one PR comment (src/render/reply.c). */

#define HASH64 "89abcdef0123456789abcdef0123456789abcdef0123456789abcdef01234567"
#define HEAD_SHA "0123456789abcdef0123456789abcdef01234567"

static char *header(void)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	pmbot_comment_meta m;

	memset(&m, 0, sizeof(m));
	snprintf(m.kind, sizeof(m.kind), "plan");
	m.number = 1;
	snprintf(m.head, sizeof(m.head), HEAD_SHA);
	snprintf(m.plan_hash, sizeof(m.plan_hash), HASH64);
	snprintf(m.status, sizeof(m.status), "planned");
	assert_int_equal(pmbot_comment_header(&b, &m), 0);
	return pmbot_buf_detach(&b, NULL);
}

/* A pm-bot body: its header, a blank line, then `rest`. */
static char *body_with(const char *rest)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	char *h = header();

	assert_int_equal(pmbot_buf_printf(&b, "%s\n\n%s", h, rest), 0);
	free(h);
	return pmbot_buf_detach(&b, NULL);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	while ((s = strstr(s, what))) {
		n++;
		s++;
	}
	return n;
}

static void test_a_reply_goes_right_after_the_header_and_the_plan_stays(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	char *body = body_with("## pm-bot plan\n\nPlan hash: `" HASH64 "`\n"), *want;

	(void)state;
	assert_int_equal(pmbot_comment_reply(&out, body, "bob", "`abc` is not a 64-hex plan hash.", 0), 0);
	want = body_with(PMBOT_COMMENT_REPLY_MARK "\n> Reply to `bob`: `abc` is not a 64-hex plan hash.\n\n"
		"## pm-bot plan\n\nPlan hash: `" HASH64 "`\n");
	assert_string_equal(out.buf, want);
	free(want);
	free(body);
	pmbot_buf_free(&out);
}

static void test_a_new_reply_replaces_the_earlier_one_and_is_idempotent(void **state)
{
	pmbot_buf once = PMBOT_BUF_INIT, twice = PMBOT_BUF_INIT, other = PMBOT_BUF_INIT;
	char *body = body_with("## pm-bot plan\n");

	(void)state;
	assert_int_equal(pmbot_comment_reply(&once, body, "bob", "first", 0), 0);
	assert_int_equal(pmbot_comment_reply(&twice, once.buf, "bob", "first", 0), 0);
	assert_string_equal(once.buf, twice.buf);
	assert_int_equal(pmbot_comment_reply(&other, once.buf, "carol", "second", 0), 0);
	assert_null(strstr(other.buf, "first"));
	assert_non_null(strstr(other.buf, "> Reply to `carol`: second\n\n## pm-bot plan\n"));
	/* One mark only. */
	assert_int_equal(count(other.buf, PMBOT_COMMENT_REPLY_MARK), 1);
	free(body);
	pmbot_buf_free(&once);
	pmbot_buf_free(&twice);
	pmbot_buf_free(&other);
}

static void test_a_body_trimmed_after_the_quote_still_loses_its_old_reply(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	char *body = body_with(PMBOT_COMMENT_REPLY_MARK "\n> Reply: old"), *want;

	(void)state;
	assert_int_equal(pmbot_comment_reply(&out, body, NULL, "new", 0), 0);
	want = body_with(PMBOT_COMMENT_REPLY_MARK "\n> Reply: new\n\n");
	assert_string_equal(out.buf, want);
	free(want);
	free(body);
	pmbot_buf_free(&out);
}

static void test_a_header_without_a_line_break_gets_the_reply_after_it(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT, want = PMBOT_BUF_INIT;
	char *h = header();

	(void)state;
	assert_int_equal(pmbot_comment_reply(&out, h, "bob", "hi", 0), 0);
	assert_int_equal(pmbot_buf_printf(&want, "%s\n\n" PMBOT_COMMENT_REPLY_MARK "\n> Reply to `bob`: hi\n\n", h), 0);
	assert_string_equal(out.buf, want.buf);
	free(h);
	pmbot_buf_free(&out);
	pmbot_buf_free(&want);
}

static void test_text_that_only_looks_like_a_reply_block_is_kept(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	/* The mark not alone on its line, or with no quote after it: not pm-bot's block. */
	char *body = body_with(PMBOT_COMMENT_REPLY_MARK " x\n> kept\n\n" PMBOT_COMMENT_REPLY_MARK "\nalso kept\n");

	(void)state;
	assert_int_equal(pmbot_comment_reply(&out, body, "bob", "hi", 0), 0);
	assert_non_null(strstr(out.buf, "> Reply to `bob`: hi\n\n" PMBOT_COMMENT_REPLY_MARK " x\n> kept\n"));
	assert_non_null(strstr(out.buf, "also kept\n"));
	free(body);
	pmbot_buf_free(&out);
}

static void test_hostile_reply_text_cannot_mention_link_or_leave_the_quote(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	char *body = body_with("## pm-bot plan\n");
	const char *after;

	(void)state;
	assert_int_equal(pmbot_comment_reply(&out, body, "bo`b @x\n",
		"@admin see https://evil.example #12\n\n" PMBOT_COMMENT_REPLY_MARK "\n<!-- pm-bot:plan {} -->\r\n# h", 0), 0);
	after = strstr(out.buf, "> Reply");
	assert_non_null(after);
	/* Still one quote line, then the blank line and the plan. */
	assert_non_null(strstr(after, "\n\n## pm-bot plan\n"));
	assert_ptr_equal(strchr(after, '\n'), strstr(after, "\n\n## pm-bot plan\n"));
	assert_null(strstr(out.buf, "@admin"));
	assert_null(strstr(out.buf, "https://evil"));
	assert_null(strstr(out.buf, "#12"));
	assert_null(strstr(after, "<!--"));
	/* The login keeps login characters only, in a code span. */
	assert_non_null(strstr(after, "> Reply to `bo?b??x?`: "));
	assert_int_equal(strstr(out.buf, PMBOT_COMMENT_REPLY_MARK) - out.buf,
		strchr(out.buf, '\n') - out.buf + 2);
	free(body);
	pmbot_buf_free(&out);
}

static void test_a_long_reply_is_cut_to_the_cap(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	char *body = body_with(""), *longtext = malloc(5001);

	(void)state;
	assert_non_null(longtext);
	memset(longtext, 'a', 5000);
	longtext[5000] = '\0';
	assert_int_equal(pmbot_comment_reply(&out, body, "bob", longtext, 0), 0);
	assert_non_null(strstr(out.buf, "\xe2\x80\xa6\n\n"));
	assert_true(out.len < strlen(body) + PMBOT_COMMENT_REPLY_MAX_CHARS + 100);
	free(longtext);
	free(body);
	pmbot_buf_free(&out);
}

static void test_a_reply_past_the_comment_cap_is_refused_and_out_is_untouched(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	char *body = body_with("## pm-bot plan\n");
	size_t len = strlen(body);

	(void)state;
	assert_int_equal(pmbot_buf_puts(&out, "kept"), 0);
	/* The body alone fits, the body and the reply do not. */
	assert_int_equal(pmbot_comment_reply(&out, body, "bob", "hello", len + 10), PMBOT_EINVALID);
	assert_string_equal(out.buf, "kept");
	assert_int_equal(pmbot_comment_reply(&out, body, "bob", "hello", len + 100), 0);
	free(body);
	pmbot_buf_free(&out);
}

static void test_only_a_pm_bot_body_and_utf8_text_are_taken(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	char *body = body_with("");

	(void)state;
	assert_int_equal(pmbot_comment_reply(&out, "LGTM\n", "bob", "hi", 0), PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_comment_reply(&out, "<!-- pm-bot:plan {\"v\":1} -->\n", "bob", "hi", 0),
		PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_comment_reply(&out, body, "bob", "bad \xff", 0), PMBOT_EINVALID);
	assert_int_equal(out.len, 0);
	free(body);
	pmbot_buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_reply_goes_right_after_the_header_and_the_plan_stays),
		cmocka_unit_test(test_a_new_reply_replaces_the_earlier_one_and_is_idempotent),
		cmocka_unit_test(test_a_body_trimmed_after_the_quote_still_loses_its_old_reply),
		cmocka_unit_test(test_a_header_without_a_line_break_gets_the_reply_after_it),
		cmocka_unit_test(test_text_that_only_looks_like_a_reply_block_is_kept),
		cmocka_unit_test(test_hostile_reply_text_cannot_mention_link_or_leave_the_quote),
		cmocka_unit_test(test_a_long_reply_is_cut_to_the_cap),
		cmocka_unit_test(test_a_reply_past_the_comment_cap_is_refused_and_out_is_untouched),
		cmocka_unit_test(test_only_a_pm_bot_body_and_utf8_text_are_taken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
