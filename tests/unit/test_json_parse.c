#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/json.h"
#include "pmbot/report.h"

#define FILE_NAME "plans/q3.md"

static void assert_canon(const json_t *v, const char *expect)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_json_canonical(&b, v), 0);
	assert_string_equal(b.buf, expect);
	pmbot_buf_free(&b);
}

static void assert_pos(const pmbot_srcmap *map, const char *pointer, int line, int col)
{
	int l = -1, c = -1;

	assert_int_equal(pmbot_srcmap_find(map, pointer, &l, &c), 1);
	assert_int_equal(l, line);
	assert_int_equal(c, col);
}

/* Parse `text` expecting success and no diagnostics. */
static json_t *parse_ok(const char *text, pmbot_srcmap *map, int line_base, int col_base)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *root = NULL;

	assert_int_equal(pmbot_json_parse(&root, map, FILE_NAME, text, strlen(text),
		line_base, col_base, NULL, &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	assert_non_null(root);
	return root;
}

/* Parse expecting rejection with exactly one diagnostic of `code`. */
static const pmbot_diag *parse_fail(pmbot_diag_list *diags, const char *text, size_t len,
	int line_base, int col_base, const pmbot_limits *lim, const char *code)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root = (json_t *)1;

	assert_int_equal(pmbot_json_parse(&root, map, FILE_NAME, text, len, line_base,
		col_base, lim, diags), PMBOT_EINVALID);
	assert_null(root);
	assert_int_equal(diags->count, 1);
	assert_string_equal(diags->items[0].code, code);
	assert_int_equal(diags->items[0].severity, PMBOT_SEV_ERROR);
	assert_string_equal(diags->items[0].file, FILE_NAME);
	pmbot_srcmap_free(map);
	return &diags->items[0];
}

static void assert_diag(const pmbot_diag *d, const char *path, int line, int col)
{
	assert_string_equal(d->path, path);
	assert_int_equal(d->line, line);
	assert_int_equal(d->column, col);
}

static void test_json_parse__builds_the_value(void **state)
{
	json_t *root;

	(void)state;
	root = parse_ok("{\"b\": [1, -2.5, \"x\\n\\u00e9\", null, true, false],\n"
		" \"a\": {\"n\": 9007199254740993}}", NULL, 1, 0);
	assert_canon(root, "{\"a\":{\"n\":9007199254740993},"
		"\"b\":[1,-2.5,\"x\\né\",null,true,false]}");
	json_decref(root);
}

static void test_json_parse__accepts_a_scalar_root(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root;

	(void)state;
	root = parse_ok("  \"just text\"", map, 3, 2);
	assert_canon(root, "\"just text\"");
	assert_pos(map, "", 3, 5);
	json_decref(root);
	pmbot_srcmap_free(map);
}

static void test_json_parse__maps_every_value_to_its_file_position(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root;

	(void)state;
	root = parse_ok("{\n"
		"  \"a\": [1, \"\xc3\xa9\", {\"k/x\": true}],\n"
		"  \"t~y\": {\"c\": null},\n"
		"  \"\\u002fz\": 2\n"
		"}", map, 10, 4);
	assert_pos(map, "", 10, 5);
	/* Members sit at their key; array items at the value. */
	assert_pos(map, "/a", 11, 7);
	assert_pos(map, "/a/0", 11, 13);
	assert_pos(map, "/a/1", 11, 16);
	/* Columns count characters: "é" is one column, two bytes. */
	assert_pos(map, "/a/2", 11, 21);
	assert_pos(map, "/a/2/k~1x", 11, 22);
	assert_pos(map, "/t~0y", 12, 7);
	assert_pos(map, "/t~0y/c", 12, 15);
	/* An escaped key is mapped by its decoded text. */
	assert_pos(map, "/~1z", 13, 7);
	assert_pos(map, "/a/2/k~1x/deeper", 11, 22);
	json_decref(root);
	pmbot_srcmap_free(map);
}

static void test_json_parse__maps_empty_containers_and_nested_arrays(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root;

	(void)state;
	root = parse_ok("[[], {}, [[7]], {\"e\": {}}]", map, 1, 0);
	assert_pos(map, "/0", 1, 2);
	assert_pos(map, "/1", 1, 6);
	assert_pos(map, "/2", 1, 10);
	assert_pos(map, "/2/0", 1, 11);
	assert_pos(map, "/2/0/0", 1, 12);
	assert_pos(map, "/3", 1, 17);
	assert_pos(map, "/3/e", 1, 18);
	json_decref(root);
	pmbot_srcmap_free(map);
}

static void test_json_parse__rejects_a_duplicate_key_at_the_second_key(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\"a\": {\"b\": 1,\n\n   \"b\": 2}}";
	const pmbot_diag *d;

	(void)state;
	d = parse_fail(&diags, text, strlen(text), 20, 2, NULL, "DUPLICATE_KEY");
	assert_diag(d, "/a/b", 22, 6);
	assert_non_null(strstr(d->message, "line 20"));
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__duplicate_escaped_keys_are_duplicates(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\"x\": [], \"a/b\": 1, \"a\\u002fb\": 2}";
	const pmbot_diag *d;

	(void)state;
	d = parse_fail(&diags, text, strlen(text), 1, 0, NULL, "DUPLICATE_KEY");
	assert_diag(d, "/a~1b", 1, 21);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__reports_a_syntax_error_with_its_position(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\"a\": [1,\n   2,, 3]}";
	const pmbot_diag *d;

	(void)state;
	d = parse_fail(&diags, text, strlen(text), 5, 3, NULL, "REPORT_PARSE_JSON");
	/* jansson stops on the second ',' of line 2, where /a/2 should start. */
	assert_diag(d, "/a/2", 6, 6 + 3);
	assert_non_null(strstr(d->message, "unexpected token"));
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_trailing_content(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\"a\": 1}\n{\"b\": 2}";
	const pmbot_diag *d;

	(void)state;
	d = parse_fail(&diags, text, strlen(text), 1, 0, NULL, "REPORT_PARSE_JSON");
	assert_int_equal(d->line, 2);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_numbers_out_of_range(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *big_int = "[1, 99999999999999999999]";
	const char *big_real = "{\"e\": 1e400}";

	(void)state;
	assert_diag(parse_fail(&diags, big_int, strlen(big_int), 1, 0, NULL,
		"REPORT_PARSE_JSON"), "/1", 1, 24);
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail(&diags, big_real, strlen(big_real), 1, 0, NULL,
		"REPORT_PARSE_JSON"), "/e", 1, 11);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_nesting_deeper_than_the_limit(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	enum { N = 100000 };
	char *text = malloc(N);
	const pmbot_diag *d;
	pmbot_buf path = PMBOT_BUF_INIT;
	int i;

	(void)state;
	memset(text, '[', N);
	d = parse_fail(&diags, text, N, 7, 2, NULL, "INPUT_TOO_DEEP");
	/* The 65th bracket passes the default depth of 64. */
	for (i = 0; i < 64; i++)
		assert_int_equal(pmbot_json_pointer_push_index(&path, 0), 0);
	assert_diag(d, path.buf, 7, 65 + 2);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&path);
	free(text);
}

static void test_json_parse__accepts_nesting_at_the_limit(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_limits lim;
	char text[2 * 64 + 1];
	json_t *root = NULL;

	(void)state;
	memset(text, '[', 64);
	memset(text + 64, ']', 64);
	text[128] = '\0';
	root = parse_ok(text, NULL, 1, 0);
	json_decref(root);
	root = NULL;

	pmbot_limits_default(&lim);
	lim.max_depth = 3;
	assert_int_equal(pmbot_json_parse(&root, NULL, NULL, "[{\"a\": [1]}]", 12, 1, 0,
		&lim, &diags), PMBOT_OK);
	json_decref(root);
	assert_diag(parse_fail(&diags, "[{\"a\": [[1]]}]", 14, 1, 0, &lim,
		"INPUT_TOO_DEEP"), "/0/a/0", 1, 9);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__brackets_inside_strings_do_not_nest(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_limits lim;
	json_t *root = NULL;
	const char *text = "[\"[[[[\\\"{{{{\"]";

	(void)state;
	pmbot_limits_default(&lim);
	lim.max_depth = 1;
	assert_int_equal(pmbot_json_parse(&root, NULL, NULL, text, strlen(text), 1, 0,
		&lim, &diags), PMBOT_OK);
	assert_canon(root, "[\"[[[[\\\"{{{{\"]");
	json_decref(root);
}

static void test_json_parse__rejects_input_over_the_size_limit(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_limits lim;
	json_t *root = NULL;

	(void)state;
	pmbot_limits_default(&lim);
	assert_int_equal(lim.max_bytes, (size_t)64 << 20);
	assert_int_equal(lim.max_depth, 64);
	assert_int_equal(lim.max_alias_nodes, 10000);
	lim.max_bytes = 8;
	assert_int_equal(pmbot_json_parse(&root, NULL, NULL, "[1,2,3]", 7, 1, 0, &lim,
		&diags), PMBOT_OK);
	json_decref(root);
	assert_diag(parse_fail(&diags, "[1,2,3,4]", 9, 4, 0, &lim, "INPUT_TOO_LARGE"),
		"", 4, 1);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_invalid_utf8_at_the_bad_byte(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\n \"\xc3\xa9\": \"x\xffy\"}";

	(void)state;
	assert_diag(parse_fail(&diags, text, strlen(text), 30, 4, NULL, "INVALID_UTF8"),
		"", 31, 9 + 4);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_a_nul_byte(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char text[] = "[\"ab\0c\"]";

	(void)state;
	assert_diag(parse_fail(&diags, text, sizeof(text) - 1, 1, 0, NULL, "INVALID_UTF8"),
		"", 1, 5);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_an_escaped_nul(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\"k\": \"a\\u0000b\"}";

	(void)state;
	assert_string_equal(parse_fail(&diags, text, strlen(text), 1, 0, NULL,
		"INVALID_UTF8")->path, "/k");
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_empty_input(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;

	(void)state;
	assert_diag(parse_fail(&diags, "", 0, 3, 0, NULL, "REPORT_PARSE_JSON"), "", 3, 1);
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail(&diags, NULL, 0, 3, 0, NULL, "REPORT_PARSE_JSON"), "", 3, 1);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__file_may_be_null(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *root = NULL;

	(void)state;
	assert_int_equal(pmbot_json_parse(&root, NULL, NULL, "[", 1, 1, 0, NULL, &diags),
		PMBOT_EINVALID);
	assert_int_equal(diags.count, 1);
	assert_null(diags.items[0].file);
	pmbot_diag_list_free(&diags);
}

/* A 10,000-item report: the value and the map cover every item. */
static void test_json_parse__maps_a_large_report(void **state)
{
	pmbot_buf text = PMBOT_BUF_INIT, flat = PMBOT_BUF_INIT;
	pmbot_srcmap *map = pmbot_srcmap_new();
	enum { N = 10000 };
	json_t *root;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_buf_puts(&text, "{\"tasks\":[\n"), 0);
	for (i = 0; i < N; i++)
		assert_int_equal(pmbot_buf_printf(&text, "%s{\"acceptance_criteria\":[\"a\",\"b\"],"
			"\"estimate_hrs\":1.5,\"stable_id\":\"task:%zu\",\"title\":\"T %zu\"}\n",
			i ? "," : "", i, i), 0);
	assert_int_equal(pmbot_buf_puts(&text, "]}"), 0);
	root = parse_ok(text.buf, map, 1, 0);
	for (i = 0; i < text.len; i++)
		if (text.buf[i] != '\n')
			assert_int_equal(pmbot_buf_putc(&flat, text.buf[i]), 0);
	assert_canon(root, flat.buf);
	assert_pos(map, "/tasks/0", 2, 1);
	assert_pos(map, "/tasks/9999", N + 1, 2);
	assert_pos(map, "/tasks/9999/title", N + 1, 78);
	assert_pos(map, "/tasks/4321/acceptance_criteria/1", 4321 + 2, 30);
	json_decref(root);
	pmbot_srcmap_free(map);
	pmbot_buf_free(&text);
	pmbot_buf_free(&flat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_parse__builds_the_value),
		cmocka_unit_test(test_json_parse__accepts_a_scalar_root),
		cmocka_unit_test(test_json_parse__maps_every_value_to_its_file_position),
		cmocka_unit_test(test_json_parse__maps_empty_containers_and_nested_arrays),
		cmocka_unit_test(test_json_parse__rejects_a_duplicate_key_at_the_second_key),
		cmocka_unit_test(test_json_parse__duplicate_escaped_keys_are_duplicates),
		cmocka_unit_test(test_json_parse__reports_a_syntax_error_with_its_position),
		cmocka_unit_test(test_json_parse__rejects_trailing_content),
		cmocka_unit_test(test_json_parse__rejects_numbers_out_of_range),
		cmocka_unit_test(test_json_parse__rejects_nesting_deeper_than_the_limit),
		cmocka_unit_test(test_json_parse__accepts_nesting_at_the_limit),
		cmocka_unit_test(test_json_parse__brackets_inside_strings_do_not_nest),
		cmocka_unit_test(test_json_parse__rejects_input_over_the_size_limit),
		cmocka_unit_test(test_json_parse__rejects_invalid_utf8_at_the_bad_byte),
		cmocka_unit_test(test_json_parse__rejects_a_nul_byte),
		cmocka_unit_test(test_json_parse__rejects_an_escaped_nul),
		cmocka_unit_test(test_json_parse__rejects_empty_input),
		cmocka_unit_test(test_json_parse__file_may_be_null),
		cmocka_unit_test(test_json_parse__maps_a_large_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
