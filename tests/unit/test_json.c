#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/json.h"
#include "pmbot/banned.h"

/* The canonical form of `v` (consumed), compared with `want`. */
static void assert_canonical(json_t *v, const char *want)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	assert_non_null(v);
	assert_int_equal(pmbot_json_canonical(&out, v), 0);
	assert_string_equal(out.buf, want);
	assert_int_equal(out.len, strlen(want));
	json_decref(v);
	pmbot_buf_free(&out);
}

/* The canonical form of the JSON text `text`. */
static void assert_canonical_text(const char *text, const char *want)
{
	json_error_t err;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);

	if (!v)
		fail_msg("json_loads(%s): %s", text, err.text);
	assert_canonical(v, want);
}

static void assert_real(double d, const char *want)
{
	assert_canonical(json_real(d), want);
}

static void test_json__object_keys_are_sorted_by_bytes(void **state)
{
	json_t *o = json_object();

	(void)state;
	/* Inserted out of order; byte order puts upper case before lower. */
	json_object_set_new(o, "b", json_integer(1));
	json_object_set_new(o, "ab", json_integer(2));
	json_object_set_new(o, "a", json_integer(3));
	json_object_set_new(o, "B", json_integer(4));
	json_object_set_new(o, "", json_integer(5));
	json_object_set_new(o, "_", json_integer(6));
	assert_canonical(o, "{\"\":5,\"B\":4,\"_\":6,\"a\":3,\"ab\":2,\"b\":1}");
}

static void test_json__non_ascii_keys_sort_by_utf8_bytes_not_utf16(void **state)
{
	(void)state;
	/*
	 * U+FF61 (EF BD A1) sorts before U+1F600 (F0 9F 98 80) by bytes, although
	 * UTF-16 order (D83D...) would put the emoji first. "z" (7A) comes
	 * before U+00E9 (C3 A9) because bytes compare unsigned.
	 */
	assert_canonical_text("{\"\\ud83d\\ude00\":1,\"\\uff61\":2,\"\\u00e9\":3,\"z\":4}",
		"{\"z\":4,\"\xc3\xa9\":3,\"\xef\xbd\xa1\":2,\"\xf0\x9f\x98\x80\":1}");
}

static void test_json__keys_with_nul_bytes_are_kept_whole_and_sorted(void **state)
{
	json_t *o = json_object();

	(void)state;
	/* jansson 2.14 allows such keys through json_object_setn; none may merge. */
	assert_int_equal(json_object_setn_new(o, "a\0b", 3, json_integer(1)), 0);
	assert_int_equal(json_object_setn_new(o, "a", 1, json_integer(2)), 0);
	assert_int_equal(json_object_setn_new(o, "a\0a", 3, json_integer(3)), 0);
	assert_int_equal(json_object_setn_new(o, "\0", 1, json_integer(4)), 0);
	assert_canonical(o, "{\"\\u0000\":4,\"a\":2,\"a\\u0000a\":3,\"a\\u0000b\":1}");
}

static void test_json__output_does_not_depend_on_insertion_order(void **state)
{
	json_t *a = json_object(), *b = json_object();
	pmbot_buf ca = PMBOT_BUF_INIT, cb = PMBOT_BUF_INIT;
	char key[16];
	int i;

	(void)state;
	for (i = 0; i < 200; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		json_object_set_new(a, key, json_integer(i));
		snprintf(key, sizeof(key), "k%d", 199 - i);
		json_object_set_new(b, key, json_integer(199 - i));
	}
	assert_int_equal(pmbot_json_canonical(&ca, a), 0);
	assert_int_equal(pmbot_json_canonical(&cb, b), 0);
	assert_string_equal(ca.buf, cb.buf);
	assert_memory_equal(ca.buf, "{\"k0\":0,\"k1\":1,\"k10\":10,\"k100\":100,", 35);
	json_decref(a);
	json_decref(b);
	pmbot_buf_free(&ca);
	pmbot_buf_free(&cb);
}

static void test_json__strings_escape_only_quote_backslash_and_controls(void **state)
{
	(void)state;
	assert_canonical(json_string("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
	assert_canonical(json_string("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
	assert_canonical(json_string("\x01\x02\x0b\x1f x"), "\"\\u0001\\u0002\\u000b\\u001f x\"");
	/* DEL is not a JSON control character and stays raw. */
	assert_canonical(json_string("\x7f"), "\"\x7f\"");
	assert_canonical(json_stringn("a\0b", 3), "\"a\\u0000b\"");
	assert_canonical_text("\"\\u00e9\\u2713\\ud83d\\ude00\\/\"",
		"\"\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80/\"");
	assert_canonical(json_string(""), "\"\"");
}

static void test_json__keys_are_escaped_like_strings(void **state)
{
	json_t *o = json_object();

	(void)state;
	json_object_set_new(o, "q\"\n", json_true());
	json_object_set_new(o, "\xc3\xa9", json_false());
	assert_canonical(o, "{\"q\\\"\\n\":true,\"\xc3\xa9\":false}");
}

static void test_json__quote_escapes_an_explicit_length(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_buf_puts(&out, "x="), 0);
	assert_int_equal(pmbot_json_quote(&out, "ab\"cd", 3), 0);
	assert_string_equal(out.buf, "x=\"ab\\\"\"");
	pmbot_buf_clear(&out);
	assert_int_equal(pmbot_json_quote(&out, "", 0), 0);
	assert_string_equal(out.buf, "\"\"");
	pmbot_buf_free(&out);
}

/* The room for a plain string is taken at once: within the cap it fits, past it nothing is added. */
static void test_json__quote_stays_within_the_buffer_cap(void **state)
{
	pmbot_buf out;

	(void)state;
	pmbot_buf_init(&out, 8);
	assert_int_equal(pmbot_json_quote(&out, "abcdef", 6), 0);
	assert_int_equal(out.len, 8);
	assert_string_equal(out.buf, "\"abcdef\"");
	pmbot_buf_clear(&out);
	assert_int_equal(pmbot_json_quote(&out, "abcdefg", 7), -1);
	assert_true(out.len <= 8);
	pmbot_buf_clear(&out);
	/* An escape past the reserved room is caught by the cap too. */
	assert_int_equal(pmbot_json_quote(&out, "abcde\n", 6), -1);
	assert_true(out.len <= 8);
	pmbot_buf_free(&out);
}

/* The escaping rule one byte at a time, to hold the word-at-a-time scan to. */
static void quote_reference(pmbot_buf *out, const unsigned char *s, size_t len)
{
	size_t i;

	pmbot_buf_putc(out, '"');
	for (i = 0; i < len; i++) {
		if (s[i] == '"' || s[i] == '\\')
			pmbot_buf_printf(out, "\\%c", s[i]);
		else if (s[i] == '\b')
			pmbot_buf_puts(out, "\\b");
		else if (s[i] == '\f')
			pmbot_buf_puts(out, "\\f");
		else if (s[i] == '\n')
			pmbot_buf_puts(out, "\\n");
		else if (s[i] == '\r')
			pmbot_buf_puts(out, "\\r");
		else if (s[i] == '\t')
			pmbot_buf_puts(out, "\\t");
		else if (s[i] < 0x20)
			pmbot_buf_printf(out, "\\u%04x", s[i]);
		else
			pmbot_buf_putc(out, (char)s[i]);
	}
	pmbot_buf_putc(out, '"');
}

/* Every byte that needs an escape, at every offset of strings up to 40 bytes long, among bytes that do not. */
static void test_json__quote_matches_the_bytewise_rule_at_every_offset(void **state)
{
	static const unsigned char special[] = { '"', '\\', 0, 1, '\n', 0x1f };
	static const unsigned char plain[] = { 'a', ' ', 0x7f, 0x80, 0xc3, 0xff, '!', '#', '[', ']',
		0x21, 0x5b, 0x5d, 0x1f + 1 };
	unsigned char s[40];
	pmbot_buf got = PMBOT_BUF_INIT, want = PMBOT_BUF_INIT;
	size_t len, at, k, i;
	unsigned seed = 1;

	(void)state;
	for (len = 0; len <= sizeof(s); len++) {
		for (at = 0; at <= len; at++) {
			for (k = 0; k < sizeof(special); k++) {
				for (i = 0; i < len; i++) {
					seed = seed * 1103515245u + 12345u;
					s[i] = plain[(seed >> 16) % sizeof(plain)];
				}
				if (at < len)
					s[at] = special[k];
				pmbot_buf_clear(&got);
				pmbot_buf_clear(&want);
				assert_int_equal(pmbot_buf_puts(&got, "x"), 0);
				assert_int_equal(pmbot_buf_puts(&want, "x"), 0);
				assert_int_equal(pmbot_json_quote(&got, (const char *)s, len), 0);
				quote_reference(&want, s, len);
				assert_int_equal(got.len, want.len);
				assert_memory_equal(got.buf, want.buf, want.len);
				assert_int_equal(got.buf[got.len], '\0');
			}
		}
	}
	pmbot_buf_free(&got);
	pmbot_buf_free(&want);
}

/*
 * Strings dense with escapes (several in one word, one after another, at
 * the end), each quoted into a fresh buffer so that every escape's room
 * is made by a grow of its own: the bytes and the terminator as the rule.
 */
static void test_json__quote_matches_the_bytewise_rule_with_many_escapes(void **state)
{
	static const unsigned char alphabet[] = { '"', '\\', 0, 1, '\n', '\t', 0x1f, 'a', 'b',
		' ', 0x7f, 0x80, 0xc3, 0xff };
	unsigned char s[200];
	pmbot_buf want = PMBOT_BUF_INIT;
	size_t round, len, i;
	unsigned seed = 7;

	(void)state;
	for (round = 0; round < 3000; round++) {
		pmbot_buf got = PMBOT_BUF_INIT;

		seed = seed * 1103515245u + 12345u;
		len = (seed >> 16) % (sizeof(s) + 1);
		for (i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			s[i] = alphabet[(seed >> 16) % (round % 2 ? sizeof(alphabet) : 7)];
		}
		pmbot_buf_clear(&want);
		quote_reference(&want, s, len);
		assert_int_equal(pmbot_json_quote(&got, (const char *)s, len), 0);
		assert_int_equal(got.len, want.len);
		assert_memory_equal(got.buf, want.buf, want.len);
		assert_int_equal(got.buf[got.len], '\0');
		assert_true(got.len < got.cap);
		pmbot_buf_free(&got);
	}
	pmbot_buf_free(&want);
}

/*
 * Around and past 4 KiB, where a string no longer gets room for its worst
 * case at once and each escape makes its own: the same bytes either way,
 * with escapes sparse (a line of text) and dense, and at the very end.
 */
static void test_json__quote_matches_the_bytewise_rule_past_4_kib(void **state)
{
	static const size_t lens[] = { 4095, 4096, 4097, 4104, 9000 };
	static unsigned char s[9000];
	pmbot_buf got = PMBOT_BUF_INIT, want = PMBOT_BUF_INIT;
	size_t l, every, i;

	(void)state;
	for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		for (every = 1; every <= 64; every *= 4) {
			for (i = 0; i < lens[l]; i++)
				s[i] = i % every == every - 1 ? (i % 3 ? '\n' : 0x01) : (i % 5 ? 'a' : 0xc3);
			s[lens[l] - 1] = '"';
			pmbot_buf_clear(&got);
			pmbot_buf_clear(&want);
			quote_reference(&want, s, lens[l]);
			assert_int_equal(pmbot_json_quote(&got, (const char *)s, lens[l]), 0);
			assert_int_equal(got.len, want.len);
			assert_memory_equal(got.buf, want.buf, want.len);
			assert_int_equal(got.buf[got.len], '\0');
		}
	}
	pmbot_buf_free(&got);
	pmbot_buf_free(&want);
}

static void test_json__integers_print_as_integers(void **state)
{
	(void)state;
	assert_canonical(json_integer(0), "0");
	assert_canonical(json_integer(-1), "-1");
	assert_canonical(json_integer(42), "42");
	assert_canonical(json_integer(INT64_MAX), "9223372036854775807");
	assert_canonical(json_integer(INT64_MIN), "-9223372036854775808");
	assert_canonical_text("100", "100");
}

static void test_json__reals_keep_a_point_or_an_exponent(void **state)
{
	(void)state;
	assert_real(1.0, "1.0");
	assert_real(0.1, "0.1");
	assert_real(-2.5, "-2.5");
	assert_real(0.0, "0.0");
	assert_real(-0.0, "-0.0");
	assert_real(1e300, "1e+300");
	assert_real(-1e300, "-1e+300");
	assert_real(1.5e-300, "1.5e-300");
	assert_real(0.30000000000000004, "0.30000000000000004");
	assert_real(1.0 / 3.0, "0.3333333333333333");
	assert_real(123.0, "123.0");
	assert_real(123.456, "123.456");
	assert_real(DBL_MAX, "1.7976931348623157e+308");
	assert_real(5e-324, "5e-324");
	assert_real(DBL_MIN, "2.2250738585072014e-308");
	assert_canonical_text("[1.0,1,0.1,-0.0,1e300,2E2]", "[1.0,1,0.1,-0.0,1e+300,200.0]");
}

static void test_json__round_reals_are_plain_decimals_not_exponents(void **state)
{
	(void)state;
	/* "%g" alone would print these as 1e+01, 1e+02, 1e+06, 1.2e+03. */
	assert_real(10.0, "10.0");
	assert_real(100.0, "100.0");
	assert_real(1e6, "1000000.0");
	assert_real(1200.0, "1200.0");
	assert_real(-40.0, "-40.0");
	assert_real(16.0, "16.0");
}

static void test_json__reals_switch_to_an_exponent_at_1e21_and_1e_minus_7(void **state)
{
	(void)state;
	assert_real(1e20, "100000000000000000000.0");
	assert_real(1.2345e20, "123450000000000000000.0");
	assert_real(1e21, "1e+21");
	assert_real(1.5e21, "1.5e+21");
	assert_real(0.000001, "0.000001");
	assert_real(0.0000012, "0.0000012");
	assert_real(1e-7, "1e-7");
	assert_real(-1.25e-7, "-1.25e-7");
}

/* A deterministic pseudo-random double with any exponent. */
static double rand_double(uint64_t *s)
{
	double d;

	do {
		uint64_t bits;

		*s ^= *s << 13;
		*s ^= *s >> 7;
		*s ^= *s << 17;
		bits = *s;
		memcpy(&d, &bits, sizeof(d));
	} while (!isfinite(d));
	return d;
}

static void test_json__reals_read_back_to_the_same_double(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	int i;

	(void)state;
	for (i = 0; i < 20000; i++) {
		double d = i < 10000 ? rand_double(&seed) : (double)(i - 15000) / 64.0;
		json_t *v = json_real(d), *back;
		char *end;

		assert_non_null(v);
		pmbot_buf_clear(&out);
		assert_int_equal(pmbot_json_canonical(&out, v), 0);
		assert_true(strtod(out.buf, &end) == d);
		assert_true(*end == '\0');
		assert_true(signbit(strtod(out.buf, NULL)) == signbit(d));
		assert_non_null(strpbrk(out.buf, ".e"));
		/* jansson reads it back as a real, not an integer. */
		back = json_loads(out.buf, JSON_DECODE_ANY, NULL);
		assert_non_null(back);
		assert_true(json_is_real(back));
		json_decref(back);
		json_decref(v);
	}
	pmbot_buf_free(&out);
}

static void test_json__literals(void **state)
{
	(void)state;
	assert_canonical(json_true(), "true");
	assert_canonical(json_false(), "false");
	assert_canonical(json_null(), "null");
}

static void test_json__nested_values_have_no_whitespace(void **state)
{
	(void)state;
	assert_canonical_text(
		"{ \"b\" : [ 1 , { \"d\" : null , \"c\" : true } ],\n \"a\" : { \"y\" : false, \"x\" : [ ] } }",
		"{\"a\":{\"x\":[],\"y\":false},\"b\":[1,{\"c\":true,\"d\":null}]}");
	assert_canonical_text("[[[[]]],{\"a\":{\"a\":{}}}]", "[[[[]]],{\"a\":{\"a\":{}}}]");
}

static void test_json__empty_containers(void **state)
{
	(void)state;
	assert_canonical(json_object(), "{}");
	assert_canonical(json_array(), "[]");
	assert_canonical_text("{\"\":{}}", "{\"\":{}}");
}

static void test_json__canonical_output_is_a_fixed_point(void **state)
{
	static const char *const docs[] = {
		"{\"z\":[0.5,-3,\"\\u0007\"],\"a\":{\"\\u00e9\":1e-9,\"e\":12345678.9}}",
		"[\"tab\\there\",{\"k\":[{},[]]},-0.0,9007199254740993]",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		pmbot_buf one = PMBOT_BUF_INIT, two = PMBOT_BUF_INIT;
		json_t *v = json_loads(docs[i], JSON_DECODE_ANY, NULL), *w;

		assert_non_null(v);
		assert_int_equal(pmbot_json_canonical(&one, v), 0);
		w = json_loads(one.buf, JSON_DECODE_ANY, NULL);
		assert_non_null(w);
		assert_true(pmbot_json_equal(v, w));
		assert_int_equal(pmbot_json_canonical(&two, w), 0);
		assert_string_equal(one.buf, two.buf);
		json_decref(v);
		json_decref(w);
		pmbot_buf_free(&one);
		pmbot_buf_free(&two);
	}
}

static void test_json__canonical_appends_and_reports_the_buffer_cap(void **state)
{
	pmbot_buf out;
	json_t *v = json_loads("{\"key\":[1,2,3],\"other\":\"value\"}", 0, NULL);

	(void)state;
	assert_non_null(v);
	pmbot_buf_init(&out, 0);
	assert_int_equal(pmbot_buf_puts(&out, "prefix:"), 0);
	assert_int_equal(pmbot_json_canonical(&out, v), 0);
	assert_string_equal(out.buf, "prefix:{\"key\":[1,2,3],\"other\":\"value\"}");
	pmbot_buf_free(&out);

	pmbot_buf_init(&out, 12);
	assert_true(pmbot_json_canonical(&out, v) < 0);
	assert_true(out.len <= 12);
	pmbot_buf_free(&out);
	json_decref(v);
}

static void test_json__pointer_tokens_escape_tilde_then_slash(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_json_pointer_push(&out, "tasks"), 0);
	assert_int_equal(pmbot_json_pointer_push_index(&out, 0), 0);
	assert_int_equal(pmbot_json_pointer_push(&out, "a/b"), 0);
	assert_int_equal(pmbot_json_pointer_push(&out, "~"), 0);
	assert_int_equal(pmbot_json_pointer_push(&out, "~1"), 0);
	assert_int_equal(pmbot_json_pointer_push(&out, "/~/"), 0);
	assert_int_equal(pmbot_json_pointer_push(&out, ""), 0);
	assert_int_equal(pmbot_json_pointer_push_index(&out, 12345), 0);
	assert_string_equal(out.buf, "/tasks/0/a~1b/~0/~01/~1~0~1//12345");
	pmbot_buf_free(&out);
}

static void test_json__pointer_push_reports_the_buffer_cap(void **state)
{
	pmbot_buf out;

	(void)state;
	pmbot_buf_init(&out, 4);
	assert_true(pmbot_json_pointer_push(&out, "abcdef") < 0);
	assert_true(pmbot_json_pointer_push_index(&out, 123456) < 0);
	pmbot_buf_free(&out);
}

/*
 * The whole-number test that replaced floor(): around 2^52, where the cast
 * stops being needed, and at 2^63, where a cast would be undefined.
 */
static void test_json__is_whole_agrees_with_floor(void **state)
{
	static const double whole[] = {
		0.0, -0.0, 1.0, -1.0, 4503599627370495.0, 0x1p52, -0x1p52, 0x1p52 + 1.0,
		0x1p53, 0x1p63, -0x1p63, 0x1p64, 1e300, -DBL_MAX, DBL_MAX,
	};
	static const double fraction[] = {
		0.5, -0.5, 1.5, -1.5, 0.9999999999999999, -0.9999999999999999,
		4503599627370495.5, -4503599627370495.5, DBL_MIN, -DBL_MIN, 5e-324,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
		assert_true(pmbot_json_is_whole(whole[i]));
		assert_true(floor(whole[i]) == whole[i]);
	}
	for (i = 0; i < sizeof(fraction) / sizeof(fraction[0]); i++) {
		assert_false(pmbot_json_is_whole(fraction[i]));
		assert_false(floor(fraction[i]) == fraction[i]);
	}
	assert_false(pmbot_json_is_whole(INFINITY));
	assert_false(pmbot_json_is_whole(-INFINITY));
	assert_false(pmbot_json_is_whole(NAN));
}

static void test_json__equal_never_confuses_reals_and_integers(void **state)
{
	json_t *i1 = json_integer(1), *r1 = json_real(1.0);
	json_t *a = json_loads("{\"x\":[1,{\"y\":null}],\"z\":\"s\"}", 0, NULL);
	json_t *b = json_loads("{\"z\":\"s\",\"x\":[1,{\"y\":null}]}", 0, NULL);
	json_t *c = json_loads("{\"z\":\"s\",\"x\":[1.0,{\"y\":null}]}", 0, NULL);

	(void)state;
	assert_false(pmbot_json_equal(i1, r1));
	assert_true(pmbot_json_equal(i1, i1));
	assert_true(pmbot_json_equal(a, b));
	assert_false(pmbot_json_equal(a, c));
	json_decref(i1);
	json_decref(r1);
	json_decref(a);
	json_decref(b);
	json_decref(c);
}

static void test_json__strings_makes_an_array_of_the_strings(void **state)
{
	char *v[] = { "b", "a" };
	json_t *a;

	(void)state;
	a = pmbot_json_strings(v, 2);
	assert_non_null(a);
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(json_string_value(json_array_get(a, 0)), "b");
	json_decref(a);
	a = pmbot_json_strings(NULL, 0);
	assert_int_equal(json_array_size(a), 0);
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json__strings_makes_an_array_of_the_strings),
		cmocka_unit_test(test_json__object_keys_are_sorted_by_bytes),
		cmocka_unit_test(test_json__non_ascii_keys_sort_by_utf8_bytes_not_utf16),
		cmocka_unit_test(test_json__keys_with_nul_bytes_are_kept_whole_and_sorted),
		cmocka_unit_test(test_json__output_does_not_depend_on_insertion_order),
		cmocka_unit_test(test_json__strings_escape_only_quote_backslash_and_controls),
		cmocka_unit_test(test_json__keys_are_escaped_like_strings),
		cmocka_unit_test(test_json__quote_escapes_an_explicit_length),
		cmocka_unit_test(test_json__quote_stays_within_the_buffer_cap),
		cmocka_unit_test(test_json__quote_matches_the_bytewise_rule_at_every_offset),
		cmocka_unit_test(test_json__quote_matches_the_bytewise_rule_with_many_escapes),
		cmocka_unit_test(test_json__quote_matches_the_bytewise_rule_past_4_kib),
		cmocka_unit_test(test_json__integers_print_as_integers),
		cmocka_unit_test(test_json__reals_keep_a_point_or_an_exponent),
		cmocka_unit_test(test_json__round_reals_are_plain_decimals_not_exponents),
		cmocka_unit_test(test_json__reals_switch_to_an_exponent_at_1e21_and_1e_minus_7),
		cmocka_unit_test(test_json__reals_read_back_to_the_same_double),
		cmocka_unit_test(test_json__literals),
		cmocka_unit_test(test_json__nested_values_have_no_whitespace),
		cmocka_unit_test(test_json__empty_containers),
		cmocka_unit_test(test_json__canonical_output_is_a_fixed_point),
		cmocka_unit_test(test_json__canonical_appends_and_reports_the_buffer_cap),
		cmocka_unit_test(test_json__pointer_tokens_escape_tilde_then_slash),
		cmocka_unit_test(test_json__pointer_push_reports_the_buffer_cap),
		cmocka_unit_test(test_json__equal_never_confuses_reals_and_integers),
		cmocka_unit_test(test_json__is_whole_agrees_with_floor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
