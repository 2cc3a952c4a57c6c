#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "pmbot/buf.h"
#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/banned.h"

static void assert_sha256(const void *data, size_t len, const char *want)
{
	char out[PMBOT_SHA256_HEX_SIZE + 8];

	/* Poison the buffer so a missing terminator or short write shows. */
	memset(out, 'X', sizeof(out));
	assert_int_equal(pmbot_sha256_hex(out, data, len), 0);
	assert_int_equal(out[64], '\0');
	assert_string_equal(out, want);
	assert_int_equal(out[65], 'X');
}

static void test_hash__sha256_of_the_empty_string(void **state)
{
	(void)state;
	assert_sha256("", 0,
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_sha256(NULL, 0,
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_hash__sha256_of_abc(void **state)
{
	(void)state;
	assert_sha256("abc", 3,
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_hash__sha256_of_the_two_block_vector(void **state)
{
	static const char msg[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	(void)state;
	assert_sha256(msg, sizeof(msg) - 1,
		"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_hash__sha256_of_a_million_a(void **state)
{
	char *a = malloc(1000000);

	(void)state;
	assert_non_null(a);
	memset(a, 'a', 1000000);
	assert_sha256(a, 1000000,
		"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

static void test_hash__sha256_covers_embedded_nul_bytes(void **state)
{
	char one[PMBOT_SHA256_HEX_SIZE], two[PMBOT_SHA256_HEX_SIZE];

	(void)state;
	assert_int_equal(pmbot_sha256_hex(one, "a\0b", 3), 0);
	assert_int_equal(pmbot_sha256_hex(two, "a\0c", 3), 0);
	assert_string_not_equal(one, two);
	assert_sha256("\0", 1,
		"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
}

static void test_hash__sha256_json_hashes_the_canonical_bytes(void **state)
{
	json_t *v = json_loads("{ \"b\": [1, 2.0, \"\\u00e9\"], \"a\": null }", 0, NULL);
	pmbot_buf canon = PMBOT_BUF_INIT;
	char got[PMBOT_SHA256_HEX_SIZE], want[PMBOT_SHA256_HEX_SIZE];

	(void)state;
	assert_non_null(v);
	assert_int_equal(pmbot_json_canonical(&canon, v), 0);
	assert_string_equal(canon.buf, "{\"a\":null,\"b\":[1,2.0,\"\xc3\xa9\"]}");
	assert_int_equal(pmbot_sha256_hex(want, canon.buf, canon.len), 0);
	assert_int_equal(pmbot_sha256_json(got, v), 0);
	assert_string_equal(got, want);
	json_decref(v);
	pmbot_buf_free(&canon);
}

static void test_hash__sha256_json_of_a_scalar(void **state)
{
	json_t *v = json_string("abc");
	char got[PMBOT_SHA256_HEX_SIZE], want[PMBOT_SHA256_HEX_SIZE];

	(void)state;
	assert_int_equal(pmbot_sha256_json(got, v), 0);
	assert_int_equal(pmbot_sha256_hex(want, "\"abc\"", 5), 0);
	assert_string_equal(got, want);
	json_decref(v);
}

static void test_hash__sha256_json_ignores_key_insertion_order(void **state)
{
	json_t *a = json_object(), *b = json_object(), *inner_a = json_object(),
		*inner_b = json_object();
	char ha[PMBOT_SHA256_HEX_SIZE], hb[PMBOT_SHA256_HEX_SIZE];

	(void)state;
	json_object_set_new(inner_a, "x", json_integer(1));
	json_object_set_new(inner_a, "y", json_integer(2));
	json_object_set_new(inner_b, "y", json_integer(2));
	json_object_set_new(inner_b, "x", json_integer(1));
	json_object_set_new(a, "title", json_string("t"));
	json_object_set_new(a, "inner", inner_a);
	json_object_set_new(a, "id", json_string("task:1"));
	json_object_set_new(b, "id", json_string("task:1"));
	json_object_set_new(b, "inner", inner_b);
	json_object_set_new(b, "title", json_string("t"));
	assert_int_equal(pmbot_sha256_json(ha, a), 0);
	assert_int_equal(pmbot_sha256_json(hb, b), 0);
	assert_string_equal(ha, hb);
	/* A change anywhere changes the hash. */
	json_object_set_new(inner_b, "x", json_real(1.0));
	assert_int_equal(pmbot_sha256_json(hb, b), 0);
	assert_string_not_equal(ha, hb);
	json_decref(a);
	json_decref(b);
}

/*
 * The reused context starts afresh every call: each length from 0 to 300
 * (across the 55/56/64-byte padding edges), after a hash of a different
 * length, gives what a one-shot EVP_Digest() gives.
 */
static void test_hash__sha256_reused_context_matches_one_shot_digests(void **state)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char data[301], md[EVP_MAX_MD_SIZE];
	char got[PMBOT_SHA256_HEX_SIZE], want[PMBOT_SHA256_HEX_SIZE];
	unsigned int mdlen, i;
	size_t len;

	(void)state;
	for (i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 131u + 7u);
	for (len = 0; len < sizeof(data); len++) {
		/* A longer input first, so a context left mid-hash would show. */
		assert_int_equal(pmbot_sha256_hex(got, data, sizeof(data) - len), 0);
		assert_int_equal(pmbot_sha256_hex(got, data, len), 0);
		assert_int_equal(EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL), 1);
		assert_int_equal(mdlen, 32);
		for (i = 0; i < mdlen; i++) {
			want[2 * i] = hex[md[i] >> 4];
			want[2 * i + 1] = hex[md[i] & 15];
		}
		want[64] = '\0';
		assert_string_equal(got, want);
	}
}

static int through_sha256_calls(void **state)
{
	(void)state;
	pmbot_sha256__direct = 1;
	return 0;
}

static int through_evp(void **state)
{
	(void)state;
	pmbot_sha256__direct = 0;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash__sha256_of_the_empty_string),
		cmocka_unit_test(test_hash__sha256_of_abc),
		cmocka_unit_test(test_hash__sha256_of_the_two_block_vector),
		cmocka_unit_test(test_hash__sha256_of_a_million_a),
		cmocka_unit_test(test_hash__sha256_covers_embedded_nul_bytes),
		cmocka_unit_test(test_hash__sha256_json_hashes_the_canonical_bytes),
		cmocka_unit_test(test_hash__sha256_json_of_a_scalar),
		cmocka_unit_test(test_hash__sha256_json_ignores_key_insertion_order),
		cmocka_unit_test(test_hash__sha256_reused_context_matches_one_shot_digests),
	};

	/* Both ways to the digest: SHA256_* where libcrypto has them, and EVP. */
	return cmocka_run_group_tests_name("SHA256_*", tests, through_sha256_calls, NULL) |
	       cmocka_run_group_tests_name("EVP", tests, through_evp, NULL);
}
