#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/net.h"
#include "pmbot/banned.h"

/*
 * The one redaction both clients use (src/net/redact.c). The first two
 * tests came from test_github_http.c; the shapes below are the ways the
 * GitHub token and the model keys have been seen echoed.
 */

static const char *scrubbed(pmbot_buf *b, const char *text, const char *secret)
{
	pmbot_buf_clear(b);
	assert_int_equal(pmbot_buf_puts(b, text), 0);
	assert_int_equal(pmbot_net_redact(b, secret), 0);
	return b->buf;
}

static void test_net_redact__every_substring_of_8_or_more_is_masked(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	static const char secret[] = "0123456789abcdefghij";

	(void)state;
	assert_string_equal(scrubbed(&b, "a 0123456789abcdefghij b", secret), "a [REDACTED] b");
	assert_string_equal(scrubbed(&b, "prefix 01234567 end", secret), "prefix [REDACTED] end");
	assert_string_equal(scrubbed(&b, "mid 6789abcdefg!", secret), "mid [REDACTED]!");
	assert_string_equal(scrubbed(&b, "tail cdefghij", secret), "tail [REDACTED]");
	/* Two pieces with a gap: two masks; touching pieces: one. */
	assert_string_equal(scrubbed(&b, "01234567-abcdefgh", secret), "[REDACTED]-[REDACTED]");
	assert_string_equal(scrubbed(&b, "01234567abcdefgh", secret), "[REDACTED]");
	/* 7 characters, or 8 that are not in a row in the secret, stay. */
	assert_string_equal(scrubbed(&b, "0123456 x 0123457a", secret), "0123456 x 0123457a");
	/* Shorter than 8 bytes of text: nothing can match. */
	assert_string_equal(scrubbed(&b, "0123", secret), "0123");
	assert_string_equal(scrubbed(&b, "", secret), "");
	pmbot_buf_free(&b);
}

static void test_net_redact__a_short_secret_is_masked_only_whole(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	(void)state;
	assert_string_equal(scrubbed(&b, "pw=hunter2, again hunter2", "hunter2"),
		"pw=[REDACTED], again [REDACTED]");
	assert_string_equal(scrubbed(&b, "hunter", "hunter2"), "hunter");
	assert_string_equal(scrubbed(&b, "nothing to hide", NULL), "nothing to hide");
	assert_string_equal(scrubbed(&b, "nothing to hide", ""), "nothing to hide");
	pmbot_buf_free(&b);
}

/* Not one 8-byte window of `secret` is left in `text`. */
static void assert_no_window(const char *text, const char *secret)
{
	size_t n = strlen(secret), i;
	char w[PMBOT_NET_REDACT_MIN + 1];

	for (i = 0; i + PMBOT_NET_REDACT_MIN <= n; i++) {
		memcpy(w, secret + i, PMBOT_NET_REDACT_MIN);
		w[PMBOT_NET_REDACT_MIN] = '\0';
		if (strstr(text, w))
			fail_msg("\"%s\" (bytes %zu.. of the secret) is left in \"%s\"", w, i, text);
	}
}

/* `shape` with each '@' replaced by `secret`. */
static void fill(pmbot_buf *b, const char *shape, const char *secret)
{
	pmbot_buf_clear(b);
	for (; *shape; shape++)
		assert_int_equal(*shape == '@' ? pmbot_buf_puts(b, secret) : pmbot_buf_putc(b, *shape), 0);
}

static void test_net_redact__every_shape_a_secret_was_seen_in_is_scrubbed(void **state)
{
	static const char *const secrets[] = {
		"ghp_S3cr3tT0kenForTests0123456789abcd",             /* classic GitHub token */
		"github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXY",
		"ghs_InstallationTokenForTests0123456789",           /* an app installation */
		"sk-test-S3cr3tK3yForLLMTests0123456789",            /* OpenAI */
		"sk-ant-api03-S3cr3tAnthropicKeyForTests-0123456789_AA", /* Anthropic */
	};
	static const char *const shapes[] = {
		"Authorization: Bearer @",
		"Authorization: token @",
		"x-api-key: @",
		"{\"message\":\"Bad credentials: @\"}",
		"invalid x-api-key @.",
		"key=@@ twice, glued",
		"@",
	};
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		const char *s = secrets[i];
		size_t n = strlen(s);

		for (j = 0; j < sizeof(shapes) / sizeof(shapes[0]); j++) {
			fill(&b, shapes[j], s);
			assert_int_equal(pmbot_net_redact(&b, s), 0);
			assert_no_window(b.buf, s);
			assert_non_null(strstr(b.buf, PMBOT_NET_REDACTED));
		}
		/* A provider quoting the first 20 characters, or a message cut inside the key. */
		pmbot_buf_clear(&b);
		assert_true(pmbot_buf_printf(&b, "Incorrect API key provided: %.20s***%s.", s,
				    s + n - 4) >= 0);
		assert_int_equal(pmbot_net_redact(&b, s), 0);
		assert_no_window(b.buf, s);
		assert_non_null(strstr(b.buf, "provided: [REDACTED]***"));
		pmbot_buf_clear(&b);
		assert_true(pmbot_buf_printf(&b, "cut: %.*s", (int)(n / 2), s + n / 3) >= 0);
		assert_int_equal(pmbot_net_redact(&b, s), 0);
		assert_string_equal(b.buf, "cut: [REDACTED]");
	}
	pmbot_buf_free(&b);
}

/* The text around a secret is kept byte for byte, however the secret is framed. */
static void test_net_redact__the_text_around_the_secret_is_kept(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	(void)state;
	assert_string_equal(scrubbed(&b, "Authorization: Bearer ghp_S3cr3tT0kenForTests0123456789abcd\r\n"
		"Accept: */*", "ghp_S3cr3tT0kenForTests0123456789abcd"),
		"Authorization: Bearer [REDACTED]\r\nAccept: */*");
	assert_string_equal(scrubbed(&b, "no secret here", "ghp_S3cr3tT0kenForTests0123456789abcd"),
		"no secret here");
	pmbot_buf_free(&b);
}

/* Out of memory: no text at all rather than text that may hold the secret. */
static void test_net_redact__a_full_buffer_leaves_only_the_mask(void **state)
{
	pmbot_buf b;

	(void)state;
	pmbot_buf_init(&b, 40);
	assert_int_equal(pmbot_buf_puts(&b, "k=01234567 and k=01234567, twice here!"), 0);
	/* Room for the text, not for the text with two longer masks in it. */
	assert_int_equal(pmbot_net_redact(&b, "01234567"), -1);
	assert_string_equal(b.buf, PMBOT_NET_REDACTED);
	pmbot_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_net_redact__every_substring_of_8_or_more_is_masked),
		cmocka_unit_test(test_net_redact__a_short_secret_is_masked_only_whole),
		cmocka_unit_test(test_net_redact__every_shape_a_secret_was_seen_in_is_scrubbed),
		cmocka_unit_test(test_net_redact__the_text_around_the_secret_is_kept),
		cmocka_unit_test(test_net_redact__a_full_buffer_leaves_only_the_mask),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
