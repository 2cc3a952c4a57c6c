#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/utf8.h"
#include "pmbot/banned.h"

static int valid(const char *s, size_t len)
{
	return pmbot_utf8_valid(s, len, NULL, NULL, NULL);
}

#define VALID(lit) valid(lit, sizeof(lit) - 1)

/* Expect `s` to be rejected at byte `off`, line `ln`, column `col`. */
static void assert_bad_at(const char *s, size_t len, size_t off, int ln, int col)
{
	size_t got_off = 12345;
	int got_line = -1, got_col = -1;

	assert_int_equal(pmbot_utf8_valid(s, len, &got_off, &got_line, &got_col), 0);
	assert_int_equal(got_off, off);
	assert_int_equal(got_line, ln);
	assert_int_equal(got_col, col);
}

#define BAD_AT(lit, off, ln, col) assert_bad_at(lit, sizeof(lit) - 1, off, ln, col)

static void test_utf8__accepts_ascii_and_the_empty_string(void **state)
{
	(void)state;
	assert_true(valid("", 0));
	assert_true(valid(NULL, 0));
	assert_true(VALID("plain ascii\n\ttext ~\x7f"));
}

static void test_utf8__accepts_every_boundary_code_point(void **state)
{
	(void)state;
	assert_true(VALID("\xc2\x80"));         /* U+0080 */
	assert_true(VALID("\xdf\xbf"));         /* U+07FF */
	assert_true(VALID("\xe0\xa0\x80"));     /* U+0800 */
	assert_true(VALID("\xed\x9f\xbf"));     /* U+D7FF */
	assert_true(VALID("\xee\x80\x80"));     /* U+E000 */
	assert_true(VALID("\xef\xbf\xbd"));     /* U+FFFD */
	assert_true(VALID("\xef\xbf\xbf"));     /* U+FFFF */
	assert_true(VALID("\xf0\x90\x80\x80")); /* U+10000 */
	assert_true(VALID("\xf4\x8f\xbf\xbf")); /* U+10FFFF */
	assert_true(VALID("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80"));
}

static void test_utf8__rejects_overlong_forms(void **state)
{
	(void)state;
	BAD_AT("\xc0\x80", 0, 1, 1);          /* NUL in two bytes */
	BAD_AT("\xc1\xbf", 0, 1, 1);
	BAD_AT("a\xe0\x80\x80", 1, 1, 2);
	BAD_AT("\xe0\x9f\xbf", 0, 1, 1);      /* U+07FF in three bytes */
	BAD_AT("\xf0\x80\x80\x80", 0, 1, 1);
	BAD_AT("\xf0\x8f\xbf\xbf", 0, 1, 1);  /* U+FFFF in four bytes */
	BAD_AT("\xc0\xaf", 0, 1, 1);          /* the classic overlong '/' */
}

static void test_utf8__rejects_surrogates(void **state)
{
	(void)state;
	BAD_AT("\xed\xa0\x80", 0, 1, 1);      /* U+D800 */
	BAD_AT("x\xed\xbf\xbf", 1, 1, 2);     /* U+DFFF */
	BAD_AT("\xed\xa0\xbd\xed\xb8\x80", 0, 1, 1); /* CESU-8 pair */
}

static void test_utf8__rejects_code_points_above_u10ffff(void **state)
{
	(void)state;
	BAD_AT("\xf4\x90\x80\x80", 0, 1, 1);  /* U+110000 */
	BAD_AT("\xf5\x80\x80\x80", 0, 1, 1);
	BAD_AT("\xf7\xbf\xbf\xbf", 0, 1, 1);
	BAD_AT("\xf8\x88\x80\x80\x80", 0, 1, 1);
	BAD_AT("\xfe", 0, 1, 1);
	BAD_AT("\xff", 0, 1, 1);
}

static void test_utf8__rejects_stray_continuation_bytes(void **state)
{
	(void)state;
	BAD_AT("\x80", 0, 1, 1);
	BAD_AT("ab\xbf", 2, 1, 3);
	BAD_AT("\xc3\xa9\xa9", 2, 1, 2);
}

static void test_utf8__rejects_truncated_sequences(void **state)
{
	(void)state;
	BAD_AT("\xc3", 0, 1, 1);
	BAD_AT("ok\xe2\x82", 2, 1, 3);
	BAD_AT("\xf0\x9f\x98", 0, 1, 1);
	/* Cut short by the next character rather than by the end. */
	BAD_AT("\xe2\x82" "A", 0, 1, 1);
	BAD_AT("\xf0\x9f\x98" "A", 0, 1, 1);
	BAD_AT("\xc3 ", 0, 1, 1);
	/* Cut short by `len`, although more bytes follow in memory. */
	assert_bad_at("\xe2\x9c\x93", 2, 0, 1, 1);
	assert_true(valid("\xe2\x9c\x93", 3));
}

static void test_utf8__rejects_nul_bytes(void **state)
{
	(void)state;
	BAD_AT("\0", 0, 1, 1);
	BAD_AT("a\0b", 1, 1, 2);
	BAD_AT("line\n\xc3\xa9\0", 7, 2, 2);
}

static void test_utf8__reports_line_and_character_column(void **state)
{
	(void)state;
	BAD_AT("ab\ncd\xff" "x", 5, 2, 3);
	/* Columns count characters: two multi-byte characters then the bad byte. */
	BAD_AT("\xc3\xa9\xe2\x9c\x93\xff", 5, 1, 3);
	BAD_AT("\n\n\n\xf0\x9f\x98\x80\xf0\x9f\x98\x80 \x80", 12, 4, 4);
	BAD_AT("a\r\nb\xc0", 4, 2, 2);
}

static void test_utf8__ignores_bytes_after_len(void **state)
{
	(void)state;
	assert_true(valid("abc\xff", 3));
	assert_true(valid("a\0b", 1));
}

static void test_utf8__leaves_outputs_alone_when_valid_and_accepts_null_outputs(void **state)
{
	size_t off = 77;
	int ln = 88, col = 99;

	(void)state;
	assert_int_equal(pmbot_utf8_valid("ok\n", 3, &off, &ln, &col), 1);
	assert_int_equal(off, 77);
	assert_int_equal(ln, 88);
	assert_int_equal(col, 99);
	assert_int_equal(pmbot_utf8_valid("\xff", 1, NULL, &ln, NULL), 0);
	assert_int_equal(ln, 1);
}

static void test_utf8__seqlen_follows_the_lead_byte(void **state)
{
	unsigned c;

	(void)state;
	for (c = 0; c < 256; c++) {
		size_t want = 1;

		if (c >= 0xc2 && c <= 0xdf)
			want = 2;
		else if (c >= 0xe0 && c <= 0xef)
			want = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			want = 4;
		assert_int_equal(pmbot_utf8_seqlen((unsigned char)c), want);
	}
}

/*
 * An independent reference: decode the bits, then apply RFC 3629's rules on
 * the code point. Returns the length of the valid character at s, 0 if none.
 */
static size_t ref_char(const unsigned char *s, size_t len)
{
	uint32_t cp, min;
	size_t n, i;

	if (s[0] == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
		min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static int ref_valid(const unsigned char *s, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		if (!(n = ref_char(s + i, len - i)))
			return 0;
		i += n;
	}
	return 1;
}

static void test_utf8__agrees_with_a_reference_on_all_short_sequences(void **state)
{
	unsigned char s[4];
	unsigned a, b, c;
	static const unsigned char tails[] = { 0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0,
		0xbf, 0xc0, 0xc2, 0xe0, 0xf0, 0xff };
	size_t i, j;

	(void)state;
	for (a = 0; a < 256; a++) {
		s[0] = (unsigned char)a;
		assert_int_equal(valid((const char *)s, 1), ref_valid(s, 1));
		for (b = 0; b < 256; b++) {
			s[1] = (unsigned char)b;
			assert_int_equal(valid((const char *)s, 2), ref_valid(s, 2));
		}
	}
	/* Every three-byte string with a three- or four-byte lead byte. */
	for (a = 0xe0; a < 0x100; a++)
		for (b = 0; b < 256; b++)
			for (c = 0; c < 256; c++) {
				s[0] = (unsigned char)a;
				s[1] = (unsigned char)b;
				s[2] = (unsigned char)c;
				assert_int_equal(valid((const char *)s, 3), ref_valid(s, 3));
			}
	/* Four-byte leads with every second byte and representative tails. */
	for (a = 0xf0; a < 0x100; a++)
		for (b = 0; b < 256; b++)
			for (i = 0; i < sizeof(tails); i++)
				for (j = 0; j < sizeof(tails); j++) {
					s[0] = (unsigned char)a;
					s[1] = (unsigned char)b;
					s[2] = tails[i];
					s[3] = tails[j];
					assert_int_equal(valid((const char *)s, 4), ref_valid(s, 4));
				}
}

static void test_utf8__finds_a_bad_byte_at_every_position_of_long_text(void **state)
{
	static const unsigned char bad[] = { 0x00, 0x80, 0xbf, 0xc0, 0xc1, 0xf5, 0xff };
	char text[300];
	size_t pos, k;

	(void)state;
	/*
	 * Long ASCII runs go through the word-at-a-time path and the one of 64
	 * bytes a step; try every alignment and every byte of several steps.
	 */
	for (pos = 0; pos < sizeof(text); pos++) {
		for (k = 0; k < sizeof(bad); k++) {
			memset(text, 'a', sizeof(text));
			/* A newline at 10 and a two-byte character at 20-21. */
			text[10] = '\n';
			text[20] = '\xc3';
			text[21] = '\xa9';
			if (pos == 10 || pos == 20 || pos == 21)
				continue;
			text[pos] = (char)bad[k];
			{
				size_t off = 0;
				int ln = 0, col = 0;
				int want_line = pos > 10 ? 2 : 1;
				int want_col = pos > 10 ? (int)(pos - 10) : (int)pos + 1;

				if (pos > 21)
					want_col--;
				assert_int_equal(pmbot_utf8_valid(text, sizeof(text), &off, &ln, &col), 0);
				assert_int_equal(off, pos);
				assert_int_equal(ln, want_line);
				assert_int_equal(col, want_col);
			}
		}
	}
	memset(text, 'a', sizeof(text));
	assert_true(valid(text, sizeof(text)));
	text[sizeof(text) - 1] = '\xe2';
	assert_bad_at(text, sizeof(text), sizeof(text) - 1, 1, (int)sizeof(text));
}

static void test_utf8__counts_lines_across_long_valid_text(void **state)
{
	char text[4096];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(text); i++)
		text[i] = i % 64 == 63 ? '\n' : (char)('a' + i % 26);
	assert_true(valid(text, sizeof(text)));
	/* Line 64 holds bytes 4032..4095; make its fourth character bad. */
	text[4035] = '\x80';
	assert_bad_at(text, sizeof(text), 4035, 64, 4);
	text[4035] = '\x7f';
	assert_true(valid(text, sizeof(text)));
	text[4095] = '\0';
	assert_bad_at(text, sizeof(text), 4095, 64, 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8__accepts_ascii_and_the_empty_string),
		cmocka_unit_test(test_utf8__accepts_every_boundary_code_point),
		cmocka_unit_test(test_utf8__rejects_overlong_forms),
		cmocka_unit_test(test_utf8__rejects_surrogates),
		cmocka_unit_test(test_utf8__rejects_code_points_above_u10ffff),
		cmocka_unit_test(test_utf8__rejects_stray_continuation_bytes),
		cmocka_unit_test(test_utf8__rejects_truncated_sequences),
		cmocka_unit_test(test_utf8__rejects_nul_bytes),
		cmocka_unit_test(test_utf8__reports_line_and_character_column),
		cmocka_unit_test(test_utf8__ignores_bytes_after_len),
		cmocka_unit_test(test_utf8__leaves_outputs_alone_when_valid_and_accepts_null_outputs),
		cmocka_unit_test(test_utf8__seqlen_follows_the_lead_byte),
		cmocka_unit_test(test_utf8__agrees_with_a_reference_on_all_short_sequences),
		cmocka_unit_test(test_utf8__finds_a_bad_byte_at_every_position_of_long_text),
		cmocka_unit_test(test_utf8__counts_lines_across_long_valid_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
