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
#include "pmbot/doc.h"
#include "pmbot/banned.h"

#define FILE_NAME "plans/q3.md"

static char *canon(const json_t *v)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_json_canonical(&b, v), 0);
	return pmbot_buf_detach(&b, NULL);
}

static void assert_canon(const json_t *v, const char *expect)
{
	char *c = canon(v);

	assert_string_equal(c, expect);
	free(c);
}

static void assert_pos(const pmbot_srcmap *map, const char *pointer, int line, int col)
{
	int l = -1, c = -1;

	assert_int_equal(pmbot_srcmap_find(map, pointer, &l, &c), 1);
	assert_int_equal(l, line);
	assert_int_equal(c, col);
}

static json_t *parse_ok_lim(const char *text, pmbot_srcmap *map, int line_base,
	int col_base, const pmbot_limits *lim)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *root = NULL;
	int rc;

	rc = pmbot_yaml_parse(&root, map, FILE_NAME, text, strlen(text), line_base,
		col_base, lim, &diags);
	if (rc != PMBOT_OK && diags.count)
		print_error("unexpected %s at %d:%d: %s\n", diags.items[0].code,
			diags.items[0].line, diags.items[0].column, diags.items[0].message);
	assert_int_equal(rc, PMBOT_OK);
	assert_int_equal(diags.count, 0);
	assert_non_null(root);
	return root;
}

static json_t *parse_ok(const char *text)
{
	return parse_ok_lim(text, NULL, 1, 0, NULL);
}

/* Parse expecting rejection with exactly one error of `code`. */
static const pmbot_diag *parse_fail_len(pmbot_diag_list *diags, const char *text,
	size_t len, int line_base, int col_base, const pmbot_limits *lim, const char *code)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root = (json_t *)1;

	assert_int_equal(pmbot_yaml_parse(&root, map, FILE_NAME, text, len, line_base,
		col_base, lim, diags), PMBOT_EINVALID);
	assert_null(root);
	assert_int_equal(diags->count, 1);
	assert_string_equal(diags->items[0].code, code);
	assert_int_equal(diags->items[0].severity, PMBOT_SEV_ERROR);
	assert_string_equal(diags->items[0].file, FILE_NAME);
	pmbot_srcmap_free(map);
	return &diags->items[0];
}

static const pmbot_diag *parse_fail(pmbot_diag_list *diags, const char *text,
	const pmbot_limits *lim, const char *code)
{
	return parse_fail_len(diags, text, strlen(text), 1, 0, lim, code);
}

static void assert_diag(const pmbot_diag *d, const char *path, int line, int col)
{
	assert_string_equal(d->path, path);
	assert_int_equal(d->line, line);
	assert_int_equal(d->column, col);
}

/* "v: <scalar>" parses and /v has the canonical form `expect`. */
static void assert_scalar(const char *scalar, const char *expect)
{
	pmbot_buf text = PMBOT_BUF_INIT;
	json_t *root;

	assert_int_equal(pmbot_buf_printf(&text, "v: %s\n", scalar), 0);
	root = parse_ok(text.buf);
	assert_true(json_is_object(root));
	assert_int_equal(json_object_size(root), 1);
	assert_canon(json_object_get(root, "v"), expect);
	json_decref(root);
	pmbot_buf_free(&text);
}

/* "v: <scalar>" fails with REPORT_PARSE_YAML at the scalar. */
static void assert_scalar_fails(const char *scalar, const char *needle)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text = PMBOT_BUF_INIT;
	const pmbot_diag *d;

	assert_int_equal(pmbot_buf_printf(&text, "v: %s\n", scalar), 0);
	d = parse_fail(&diags, text.buf, NULL, "REPORT_PARSE_YAML");
	assert_diag(d, "/v", 1, 4);
	if (!strstr(d->message, needle))
		fail_msg("%s: message \"%s\" lacks \"%s\"", scalar, d->message, needle);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&text);
}

static void test_yaml_parse__resolves_null_and_bool_by_the_core_schema(void **state)
{
	static const char *const cases[][2] = {
		{ "~", "null" }, { "null", "null" }, { "Null", "null" }, { "NULL", "null" },
		{ "", "null" },
		{ "true", "true" }, { "True", "true" }, { "TRUE", "true" },
		{ "false", "false" }, { "False", "false" }, { "FALSE", "false" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_scalar(cases[i][0], cases[i][1]);
}

static void test_yaml_parse__resolves_numbers_by_the_core_schema(void **state)
{
	static const char *const cases[][2] = {
		{ "12", "12" }, { "+12", "12" }, { "-12", "-12" }, { "007", "7" },
		{ "-0", "0" }, { "0o17", "15" }, { "0o777", "511" }, { "0x1F", "31" },
		{ "0x1f", "31" },
		{ "9223372036854775807", "9223372036854775807" },
		{ "-9223372036854775808", "-9223372036854775808" },
		{ "0x7FFFFFFFFFFFFFFF", "9223372036854775807" },
		{ "1.5", "1.5" }, { ".5", "0.5" }, { "1.", "1.0" }, { "-1e3", "-1000.0" },
		{ "1E+2", "100.0" }, { "+.5e-3", "0.0005" }, { "0.1", "0.1" },
		{ "-0.0", "-0.0" }, { "1e-400", "0.0" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_scalar(cases[i][0], cases[i][1]);
}

static void test_yaml_parse__keeps_other_plain_scalars_as_strings(void **state)
{
	static const char *const cases[] = {
		"yes", "no", "on", "off", "y", "n", "2026-02-22", "1_000", "0o", "0x", "0o8",
		"0xg", "0b101", "+", ".", "TrUe", "nul", "12abc", ".e3", "1:30", "~x",
		"1.2.3", "--1", "0x-1", "e3",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pmbot_buf want = PMBOT_BUF_INIT;

		assert_int_equal(pmbot_json_quote(&want, cases[i], strlen(cases[i])), 0);
		assert_scalar(cases[i], want.buf);
		pmbot_buf_free(&want);
	}
}

static void test_yaml_parse__quoted_and_block_scalars_stay_strings(void **state)
{
	json_t *root;

	(void)state;
	assert_scalar("\"12\"", "\"12\"");
	assert_scalar("'true'", "\"true\"");
	assert_scalar("\"null\"", "\"null\"");
	assert_scalar("''", "\"\"");
	assert_scalar("\"~\"", "\"~\"");
	assert_scalar("'0x1F'", "\"0x1F\"");
	assert_scalar("\".inf\"", "\".inf\"");
	root = parse_ok("a: |\n  12\nb: >-\n  true\nc: |-\n  null\n");
	assert_canon(root, "{\"a\":\"12\\n\",\"b\":\"true\",\"c\":\"null\"}");
	json_decref(root);
}

static void test_yaml_parse__rejects_non_finite_and_out_of_range_numbers(void **state)
{
	(void)state;
	assert_scalar_fails(".inf", "not a finite number");
	assert_scalar_fails("-.Inf", "not a finite number");
	assert_scalar_fails("+.INF", "not a finite number");
	assert_scalar_fails(".nan", "not a finite number");
	assert_scalar_fails(".NaN", "not a finite number");
	assert_scalar_fails("1e400", "out of range");
	assert_scalar_fails("-1e400", "out of range");
	assert_scalar_fails("9223372036854775808", "out of range");
	assert_scalar_fails("-9223372036854775809", "out of range");
	assert_scalar_fails("0x8000000000000000", "out of range");
	assert_scalar_fails("0o1000000000000000000000", "out of range");
}

static void test_yaml_parse__honours_the_standard_tags(void **state)
{
	(void)state;
	assert_scalar("!!str 12", "\"12\"");
	assert_scalar("!!str true", "\"true\"");
	assert_scalar("!!str", "\"\"");
	assert_scalar("!!int \"12\"", "12");
	assert_scalar("!!int 0x10", "16");
	assert_scalar("!!float 1", "1.0");
	assert_scalar("!!float \"-2.5\"", "-2.5");
	assert_scalar("!!bool \"true\"", "true");
	assert_scalar("!!bool False", "false");
	assert_scalar("!!null \"\"", "null");
	assert_scalar("!!null ~", "null");
	assert_scalar("! 12", "\"12\"");
	assert_scalar("!!map {a: 1}", "{\"a\":1}");
	assert_scalar("!!seq [1]", "[1]");
	assert_scalar("! [true]", "[true]");
}

static void test_yaml_parse__rejects_values_that_do_not_fit_their_tag(void **state)
{
	(void)state;
	assert_scalar_fails("!!int abc", "!!int value is not an integer");
	assert_scalar_fails("!!int 1.5", "!!int value is not an integer");
	assert_scalar_fails("!!int .inf", "!!int value is not an integer");
	assert_scalar_fails("!!float 0x10", "!!float value is not a number");
	assert_scalar_fails("!!float .inf", "not a finite number");
	assert_scalar_fails("!!bool yes", "!!bool");
	assert_scalar_fails("!!null 0", "!!null");
	assert_scalar_fails("!!map 1", "tag !!map on a scalar");
	assert_scalar_fails("!!seq {a: 1}", "tag !!seq on a mapping");
	assert_scalar_fails("!!str [1]", "tag !!str on a sequence");
}

static void test_yaml_parse__rejects_other_tags(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;

	(void)state;
	assert_scalar_fails("!custom 1", "unsupported tag !custom");
	assert_scalar_fails("!!binary aGk=", "unsupported tag !!binary");
	assert_scalar_fails("!!timestamp 2026-01-01", "unsupported tag !!timestamp");
	assert_scalar_fails("!<tag:example.com,2000:x> 1",
		"unsupported tag tag:example.com,2000:x");
	d = parse_fail(&diags, "%TAG !e! tag:example.com,2000:\n---\nv: !e!x {a: 1}\n",
		NULL, "REPORT_PARSE_YAML");
	assert_diag(d, "/v", 3, 4);
	pmbot_diag_list_free(&diags);
}

static void test_yaml_parse__turns_scalar_keys_into_strings(void **state)
{
	json_t *root;

	(void)state;
	root = parse_ok("1: a\ntrue: b\n~: c\n1.5: d\n'x': e\n0x10: f\n\"007\": g\n");
	assert_canon(root, "{\"007\":\"g\",\"1\":\"a\",\"1.5\":\"d\",\"16\":\"f\","
		"\"null\":\"c\",\"true\":\"b\",\"x\":\"e\"}");
	json_decref(root);
}

static void test_yaml_parse__rejects_a_complex_key(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;

	(void)state;
	assert_diag(parse_fail(&diags, "a: 1\n? [x, y]\n: 2\n", NULL, "REPORT_PARSE_YAML"),
		"", 2, 3);
	assert_non_null(strstr(diags.items[0].message, "must be a scalar"));
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail(&diags, "m:\n  ? {k: v}\n  : 2\n", NULL, "REPORT_PARSE_YAML"),
		"/m", 2, 5);
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail(&diags, "a: &a [1]\n*a : 2\n", NULL, "REPORT_PARSE_YAML"),
		"", 2, 1);
	pmbot_diag_list_free(&diags);
}

static void test_yaml_parse__rejects_a_duplicate_key_at_the_second_key(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "a: 1\nb:\n  c: 1\n  d: 2\n  c: 3\n";
	const pmbot_diag *d;

	(void)state;
	d = parse_fail_len(&diags, text, strlen(text), 30, 4, NULL, "DUPLICATE_KEY");
	assert_diag(d, "/b/c", 34, 3 + 4);
	assert_non_null(strstr(d->message, "first defined on line 32"));
	pmbot_diag_list_free(&diags);
}

static void test_yaml_parse__duplicates_compare_resolved_key_strings(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *root = NULL;

	(void)state;
	assert_diag(parse_fail(&diags, "{1: a, 01: b}", NULL, "DUPLICATE_KEY"), "/1", 1, 8);
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail(&diags, "x: 1\n'x': 2\n", NULL, "DUPLICATE_KEY"), "/x", 2, 1);
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail(&diags, "null: 1\n~: 2\n", NULL, "DUPLICATE_KEY"),
		"/null", 2, 1);
	pmbot_diag_list_free(&diags);
	/* Without a caller's map the first line is still named. */
	assert_int_equal(pmbot_yaml_parse(&root, NULL, NULL, "k: 1\n\nk: 2\n", 10, 1, 0,
		NULL, &diags), PMBOT_EINVALID);
	assert_null(root);
	assert_int_equal(diags.count, 1);
	assert_string_equal(diags.items[0].code, "DUPLICATE_KEY");
	assert_non_null(strstr(diags.items[0].message, "first defined on line 1"));
	assert_diag(&diags.items[0], "/k", 3, 1);
	pmbot_diag_list_free(&diags);
}

static void test_yaml_parse__requires_exactly_one_document(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *root;

	(void)state;
	assert_diag(parse_fail_len(&diags, "a: 1\n---\nb: 2\n", strlen("a: 1\n---\nb: 2\n"),
		7, 2, NULL, "REPORT_PARSE_YAML"), "", 8, 3);
	assert_non_null(strstr(diags.items[0].message, "second YAML document"));
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail(&diags, "---\na: 1\n...\n---\nb: 2\n", NULL,
		"REPORT_PARSE_YAML"), "", 4, 1);
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail(&diags, "", NULL, "REPORT_PARSE_YAML"), "", 1, 1);
	assert_non_null(strstr(diags.items[0].message, "no YAML document"));
	pmbot_diag_list_free(&diags);
	parse_fail(&diags, "# only a comment\n", NULL, "REPORT_PARSE_YAML");
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail_len(&diags, NULL, 0, 5, 0, NULL, "REPORT_PARSE_YAML"),
		"", 5, 1);
	pmbot_diag_list_free(&diags);

	root = parse_ok("---\na: 1\n...\n");
	assert_canon(root, "{\"a\":1}");
	json_decref(root);
	/* An explicit empty document is one document: null. */
	root = parse_ok("---\n");
	assert_true(json_is_null(root));
	json_decref(root);
}

static void test_yaml_parse__reports_libyaml_errors_at_the_problem_mark(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "a: [1, 2\nb: 3\n";
	const pmbot_diag *d;

	(void)state;
	d = parse_fail_len(&diags, text, strlen(text), 12, 4, NULL, "REPORT_PARSE_YAML");
	assert_diag(d, "/a", 13, 2 + 4);
	assert_non_null(strstr(d->message, "did not find expected ',' or ']'"));
	assert_non_null(strstr(d->message, "while parsing a flow sequence at line 12, column 8"));
	pmbot_diag_list_free(&diags);
	d = parse_fail(&diags, "a: b: c\n", NULL, "REPORT_PARSE_YAML");
	assert_diag(d, "", 1, 5);
	assert_non_null(strstr(d->message, "mapping values are not allowed"));
	pmbot_diag_list_free(&diags);
}

static void test_yaml_parse__reports_control_characters_at_their_position(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;

	(void)state;
	d = parse_fail(&diags, "a: 1\nb: \"\x01\"\n", NULL, "REPORT_PARSE_YAML");
	assert_diag(d, "", 2, 5);
	assert_non_null(strstr(d->message, "control characters are not allowed"));
	pmbot_diag_list_free(&diags);
}

static void test_yaml_parse__maps_every_value_to_its_file_position(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root;

	(void)state;
	root = parse_ok_lim("title: x\n"
		"tasks:\n"
		"  - id: a\n"
		"    deps: [b, c]\n"
		"  - &t {id: z}\n"
		"  - *t\n"
		"a/b: {c~d: 1}\n", map, 40, 2, NULL);
	assert_pos(map, "", 40, 3);
	assert_pos(map, "/title", 40, 3);
	assert_pos(map, "/tasks", 41, 3);
	assert_pos(map, "/tasks/0", 42, 7);
	assert_pos(map, "/tasks/0/id", 42, 7);
	assert_pos(map, "/tasks/0/deps", 43, 7);
	assert_pos(map, "/tasks/0/deps/0", 43, 14);
	assert_pos(map, "/tasks/0/deps/1", 43, 17);
	assert_pos(map, "/tasks/1", 44, 7);
	assert_pos(map, "/tasks/1/id", 44, 11);
	/* The alias itself, and inside its copy the text it was copied from. */
	assert_pos(map, "/tasks/2", 45, 7);
	assert_pos(map, "/tasks/2/id", 44, 11);
	assert_pos(map, "/a~1b", 46, 3);
	assert_pos(map, "/a~1b/c~0d", 46, 9);
	assert_pos(map, "/tasks/0/deps/1/nothing", 43, 17);
	json_decref(root);
	pmbot_srcmap_free(map);
}

static void test_yaml_parse__counts_columns_in_characters(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root;

	(void)state;
	root = parse_ok_lim("\xc3\xa9t\xc3\xa9: [\xc3\xbc, x]\n", map, 1, 0, NULL);
	assert_pos(map, "/\xc3\xa9t\xc3\xa9/0", 1, 7);
	assert_pos(map, "/\xc3\xa9t\xc3\xa9/1", 1, 10);
	json_decref(root);
	pmbot_srcmap_free(map);
}

/* libyaml breaks lines at U+2028 too; the Markdown file does not. */
static void test_yaml_parse__counts_lines_like_the_markdown_file(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root;

	(void)state;
	root = parse_ok_lim("a: \"x\xe2\x80\xa8y\"\nb: 1\nc: [2]\n", map, 1, 0, NULL);
	assert_pos(map, "/b", 2, 1);
	assert_pos(map, "/c/0", 3, 5);
	json_decref(root);
	pmbot_srcmap_free(map);
}

static void test_yaml_parse__counts_a_leading_bom_as_a_column(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root;

	(void)state;
	root = parse_ok_lim("\xef\xbb\xbf" "a: 1\n", map, 1, 0, NULL);
	assert_canon(root, "{\"a\":1}");
	assert_pos(map, "/a", 1, 2);
	json_decref(root);
	pmbot_srcmap_free(map);
}

static void test_yaml_parse__expands_an_alias_to_a_deep_copy(void **state)
{
	json_t *root, *base, *use;

	(void)state;
	root = parse_ok("base: &b {x: [1, 2], s: str}\nuse: *b\nnum: &n 5\nalso: *n\n");
	assert_canon(root, "{\"also\":5,\"base\":{\"s\":\"str\",\"x\":[1,2]},\"num\":5,"
		"\"use\":{\"s\":\"str\",\"x\":[1,2]}}");
	base = json_object_get(root, "base");
	use = json_object_get(root, "use");
	assert_ptr_not_equal(base, use);
	assert_ptr_not_equal(json_object_get(base, "x"), json_object_get(use, "x"));
	assert_int_equal(json_array_append_new(json_object_get(use, "x"), json_integer(3)), 0);
	assert_canon(base, "{\"s\":\"str\",\"x\":[1,2]}");
	json_decref(root);
}

static void test_yaml_parse__a_later_anchor_of_the_same_name_wins(void **state)
{
	json_t *root;

	(void)state;
	root = parse_ok("a: &x 1\nb: &x [2]\nc: *x\n");
	assert_canon(root, "{\"a\":1,\"b\":[2],\"c\":[2]}");
	json_decref(root);
	root = parse_ok("a: &a [&a 1, *a]\nb: *a\n");
	assert_canon(root, "{\"a\":[1,1],\"b\":1}");
	json_decref(root);
	root = parse_ok("&k x: *k\n");
	assert_canon(root, "{\"x\":\"x\"}");
	json_decref(root);
}

static void test_yaml_parse__merge_keys_are_plain_keys(void **state)
{
	json_t *root;

	(void)state;
	root = parse_ok("base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n");
	assert_canon(root, "{\"base\":{\"x\":1},\"m\":{\"<<\":{\"x\":1},\"y\":2}}");
	json_decref(root);
}

static void test_yaml_parse__rejects_undefined_and_recursive_aliases(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;

	(void)state;
	assert_diag(parse_fail(&diags, "a: *nope\n", NULL, "REPORT_PARSE_YAML"), "/a", 1, 4);
	assert_non_null(strstr(diags.items[0].message, "*nope"));
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail(&diags, "a: [*later, &later 1]\n", NULL, "REPORT_PARSE_YAML"),
		"/a/0", 1, 5);
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail(&diags, "a: &a [1, *a]\n", NULL, "REPORT_PARSE_YAML"),
		"/a/1", 1, 11);
	assert_non_null(strstr(diags.items[0].message, "inside the node it names"));
	pmbot_diag_list_free(&diags);
}

static void test_yaml_parse__stops_a_billion_laughs(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text = PMBOT_BUF_INIT;
	const pmbot_diag *d;
	char name;
	int i;

	(void)state;
	assert_int_equal(pmbot_buf_puts(&text, "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"), 0);
	for (name = 'b'; name <= 'i'; name++) {
		assert_int_equal(pmbot_buf_printf(&text, "%c: &%c [", name, name), 0);
		for (i = 0; i < 9; i++)
			assert_int_equal(pmbot_buf_printf(&text, "%s*%c", i ? ", " : "", name - 1), 0);
		assert_int_equal(pmbot_buf_puts(&text, "]\n"), 0);
	}
	/*
	 * *a is 10 nodes, *b 91, *c 820, *d 7381: after "d" 8289 nodes came
	 * from aliases, and the first *d of line 5 passes 10,000.
	 */
	d = parse_fail(&diags, text.buf, NULL, "YAML_ALIAS_LIMIT");
	assert_diag(d, "/e/0", 5, 8);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&text);
}

static void test_yaml_parse__counts_alias_nodes_against_the_limit(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_limits lim;
	json_t *root;

	(void)state;
	pmbot_limits_default(&lim);
	lim.max_alias_nodes = 6;
	/* [1, 2] is three nodes: two aliases make six, which is allowed. */
	root = parse_ok_lim("a: &a [1, 2]\nb: *a\nc: *a\n", NULL, 1, 0, &lim);
	json_decref(root);
	assert_diag(parse_fail(&diags, "a: &a [1, 2]\nb: *a\nc: *a\nd: *a\n", &lim,
		"YAML_ALIAS_LIMIT"), "/d", 4, 4);
	pmbot_diag_list_free(&diags);
}

/*
 * Text copied by aliases has its own budget: few nodes, much text. Keys
 * count, and so does a scalar alias used as a key.
 */
static void test_yaml_parse__counts_alias_bytes_against_the_limit(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_limits lim;
	json_t *root;

	(void)state;
	pmbot_limits_default(&lim);
	assert_int_equal(lim.max_alias_bytes, 4u << 20);
	lim.max_alias_bytes = 12;
	/* Two copies of six bytes: twelve, allowed. */
	root = parse_ok_lim("a: &a abcdef\nb: *a\nc: *a\n", NULL, 1, 0, &lim);
	json_decref(root);
	assert_diag(parse_fail(&diags, "a: &a abcdef\nb: *a\nc: *a\nd: *a\n", &lim,
		"YAML_ALIAS_LIMIT"), "/d", 4, 4);
	pmbot_diag_list_free(&diags);
	/* A mapping's keys are text too: {kk: v} is three bytes a copy. */
	root = parse_ok_lim("a: &m {kk: v}\nb: [*m, *m, *m, *m]\n", NULL, 1, 0, &lim);
	json_decref(root);
	assert_diag(parse_fail(&diags, "a: &m {kk: v}\nb: [*m, *m, *m, *m, *m]\n", &lim,
		"YAML_ALIAS_LIMIT"), "/b/4", 2, 21);
	pmbot_diag_list_free(&diags);
	/* An alias as a key: *k below spends five bytes each time. */
	assert_diag(parse_fail(&diags, "k: &k kkkkk\nm: {*k : 1}\nn: {*k : 1}\nx: *k\n", &lim,
		"YAML_ALIAS_LIMIT"), "/x", 4, 4);
	pmbot_diag_list_free(&diags);
}

static void test_yaml_parse__rejects_nesting_deeper_than_the_limit(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf path = PMBOT_BUF_INIT;
	enum { N = 100000 };
	char *text = malloc(N);
	int i;

	(void)state;
	memset(text, '[', N);
	for (i = 0; i < 64; i++)
		assert_int_equal(pmbot_json_pointer_push_index(&path, 0), 0);
	assert_diag(parse_fail_len(&diags, text, N, 3, 5, NULL, "INPUT_TOO_DEEP"),
		path.buf, 3, 65 + 5);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&path);
	free(text);
}

static void test_yaml_parse__depth_counts_block_collections_and_aliases(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_limits lim;
	json_t *root;

	(void)state;
	pmbot_limits_default(&lim);
	lim.max_depth = 2;
	root = parse_ok_lim("a:\n  b: 1\n", NULL, 1, 0, &lim);
	json_decref(root);
	assert_diag(parse_fail(&diags, "a:\n  b:\n    c: 1\n", &lim, "INPUT_TOO_DEEP"),
		"/a/b", 3, 5);
	pmbot_diag_list_free(&diags);

	lim.max_depth = 3;
	root = parse_ok_lim("a: &a [[1]]\nb: *a\n", NULL, 1, 0, &lim);
	json_decref(root);
	assert_diag(parse_fail(&diags, "a: &a [[1]]\nb:\n  c: *a\n", &lim, "INPUT_TOO_DEEP"),
		"/b/c", 3, 6);
	pmbot_diag_list_free(&diags);
}

static void test_yaml_parse__rejects_input_over_the_size_limit(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_limits lim;
	json_t *root;

	(void)state;
	pmbot_limits_default(&lim);
	lim.max_bytes = 5;
	root = parse_ok_lim("a: 12", NULL, 1, 0, &lim);
	json_decref(root);
	assert_diag(parse_fail_len(&diags, "a: 123", 6, 9, 2, &lim, "INPUT_TOO_LARGE"),
		"", 9, 3);
	pmbot_diag_list_free(&diags);
}

static void test_yaml_parse__rejects_invalid_utf8_and_nul(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	static const char nul[] = "a: x\0y\n";

	(void)state;
	assert_diag(parse_fail_len(&diags, "a: 1\nb: \"\xc3\x28\"\n", 13, 20, 1, NULL,
		"INVALID_UTF8"), "", 21, 5 + 1);
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail_len(&diags, nul, sizeof(nul) - 1, 1, 0, NULL, "INVALID_UTF8"),
		"", 1, 5);
	pmbot_diag_list_free(&diags);
	/* An escaped NUL is caught at its scalar. */
	assert_diag(parse_fail(&diags, "a: [\"x\\0y\"]\n", NULL, "INVALID_UTF8"),
		"/a/0", 1, 5);
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail(&diags, "\"k\\0\": 1\n", NULL, "INVALID_UTF8"), "", 1, 1);
	pmbot_diag_list_free(&diags);
}

static void test_yaml_parse__uses_the_default_limits_when_none_are_given(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text = PMBOT_BUF_INIT;
	json_t *root = NULL;
	int i;

	(void)state;
	for (i = 0; i < 64; i++)
		assert_int_equal(pmbot_buf_putc(&text, '['), 0);
	for (i = 0; i < 64; i++)
		assert_int_equal(pmbot_buf_putc(&text, ']'), 0);
	assert_int_equal(pmbot_yaml_parse(&root, NULL, NULL, text.buf, text.len, 1, 0,
		NULL, &diags), PMBOT_OK);
	json_decref(root);
	assert_int_equal(pmbot_buf_puts(&text, "\n---\n["), 0);
	assert_int_equal(pmbot_yaml_parse(&root, NULL, NULL, text.buf, text.len, 1, 0,
		NULL, &diags), PMBOT_EINVALID);
	assert_null(diags.items[0].file);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&text);
}

/* A 10,000-item report: every item is in the value and the map. */
static void test_yaml_parse__maps_a_large_report(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	pmbot_buf text = PMBOT_BUF_INIT;
	enum { N = 10000 };
	json_t *root, *tasks;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_buf_puts(&text, "tasks:\n"), 0);
	for (i = 0; i < N; i++)
		assert_int_equal(pmbot_buf_printf(&text, "  - stable_id: task:%zu\n"
			"    estimate_hrs: 2.5\n    deps: [a, b]\n", i), 0);
	root = parse_ok_lim(text.buf, map, 1, 0, NULL);
	tasks = json_object_get(root, "tasks");
	assert_int_equal(json_array_size(tasks), N);
	assert_canon(json_array_get(tasks, N - 1),
		"{\"deps\":[\"a\",\"b\"],\"estimate_hrs\":2.5,\"stable_id\":\"task:9999\"}");
	assert_pos(map, "/tasks/9999", 2 + 3 * 9999, 5);
	assert_pos(map, "/tasks/9999/deps/1", 4 + 3 * 9999, 15);
	json_decref(root);
	pmbot_srcmap_free(map);
	pmbot_buf_free(&text);
}

/*
 * Walk `n` and `v` together: same type, value, member count, keys and
 * member order, and every node at what the map answers for its pointer.
 * Returns the nodes walked, so a caller can check the document is whole.
 */
static size_t assert_doc_is_value(const pmbot_jnode *n, const json_t *v,
	const pmbot_srcmap *map, pmbot_buf *ptr)
{
	size_t base = ptr->len, seen = 1, i;
	const pmbot_jnode *m;
	int line = -1, col = -1;

	pmbot_srcmap_find(map, ptr->buf, &line, &col);
	if (n->line != line || n->column != col)
		fail_msg("%s: node at %d:%d, map says %d:%d", ptr->buf, n->line, n->column,
			line, col);
	switch (json_typeof(v)) {
	case JSON_NULL: assert_int_equal(n->type, PMBOT_JNULL); break;
	case JSON_TRUE: assert_int_equal(n->type, PMBOT_JTRUE); break;
	case JSON_FALSE: assert_int_equal(n->type, PMBOT_JFALSE); break;
	case JSON_INTEGER:
		assert_int_equal(n->type, PMBOT_JINTEGER);
		assert_true(n->v.i == json_integer_value(v));
		break;
	case JSON_REAL:
		assert_int_equal(n->type, PMBOT_JREAL);
		assert_memory_equal(&n->v.r, &(double){ json_real_value(v) }, sizeof(double));
		break;
	case JSON_STRING:
		assert_int_equal(n->type, PMBOT_JSTRING);
		assert_int_equal(n->len, json_string_length(v));
		assert_memory_equal(n->v.s, json_string_value(v), n->len + 1);
		break;
	case JSON_ARRAY:
		assert_int_equal(n->type, PMBOT_JARRAY);
		assert_int_equal(n->len, json_array_size(v));
		for (i = 0, m = pmbot_jnode_first(n); i < n->len; i++, m = pmbot_jnode_next(m)) {
			assert_null(m->key);
			assert_int_equal(pmbot_json_pointer_push_index(ptr, i), 0);
			seen += assert_doc_is_value(m, json_array_get(v, i), map, ptr);
			pmbot_buf_truncate(ptr, base);
		}
		break;
	case JSON_OBJECT: {
		void *it = json_object_iter((json_t *)v);

		assert_int_equal(n->type, PMBOT_JOBJECT);
		assert_int_equal(n->len, json_object_size(v));
		for (i = 0, m = pmbot_jnode_first(n); i < n->len; i++, m = pmbot_jnode_next(m)) {
			const char *key = json_object_iter_key(it);

			/* The value's iteration order is the YAML's: so is the document's. */
			assert_non_null(m->key);
			assert_int_equal(m->key_len, strlen(key));
			assert_string_equal(m->key, key);
			assert_int_equal(pmbot_json_pointer_push(ptr, key), 0);
			seen += assert_doc_is_value(m, json_object_iter_value(it), map, ptr);
			pmbot_buf_truncate(ptr, base);
			it = json_object_iter_next((json_t *)v, it);
		}
		assert_null(it);
		break;
	}
	}
	assert_int_equal(pmbot_jnode_next(n) - n, seen);
	return seen;
}

/* Parse `text` with a map, convert, and check the document node for node. */
static pmbot_jdoc *doc_of(const char *text, int line_base, int col_base,
	json_t **root_out, pmbot_srcmap **map_out)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	pmbot_buf ptr = PMBOT_BUF_INIT;
	pmbot_jdoc *doc = (pmbot_jdoc *)1;
	json_t *root, *back = NULL;

	root = parse_ok_lim(text, map, line_base, col_base, NULL);
	assert_int_equal(pmbot_jdoc_from_json(&doc, root, map), PMBOT_OK);
	assert_non_null(doc);
	assert_doc_is_value(pmbot_jdoc_root(doc), root, map, &ptr);
	assert_int_equal(pmbot_jnode_to_json(&back, pmbot_jdoc_root(doc)), PMBOT_OK);
	assert_true(json_equal(back, root));
	json_decref(back);
	pmbot_buf_free(&ptr);
	*root_out = root;
	*map_out = map;
	return doc;
}

static void test_yaml_parse__a_document_of_the_value_has_the_maps_positions(void **state)
{
	static const char *const texts[] = {
		"title: x\n"
		"tasks:\n"
		"  - id: a\n"
		"    deps: [b, c]\n"
		"  - &t {id: z, more: [1, {deep: &d [x, y]}]}\n"
		"  - *t\n"
		"  - *d\n"
		"a/b: {c~d: 1, ~: 2, '': 3, 1: 4, true: 5, 1.5: 6, '~1': 7}\n",
		/* Aliases of scalars as keys and values, a redefined anchor, merge keys. */
		"&k x: *k\n"
		"base: &b {p: 1, q: [true, false, null]}\n"
		"<<: *b\n"
		"c: &b [2]\n"
		"d: *b\n"
		"e: [*b, *b]\n",
		/* Every scalar kind, block scalars, empty collections, non-ASCII keys. */
		"i: -12\nf: 2.5\nbig: 9007199254740993\nn: null\nt: yes\ns: '2026-02-22'\n"
		"lit: |\n  one\n  two\nfold: >\n  a\n  b\n"
		"empty_map: {}\nempty_seq: []\n\xc3\xa9t\xc3\xa9: [\xc3\xbc, {\xe2\x82\xac: x}]\n",
		/* Block sequences of mappings, as reports are written. */
		"epics:\n"
		"- stable_id: epic:a\n"
		"  title: A\n"
		"  features: [feat:b]\n"
		"features:\n"
		"  - stable_id: feat:b\n"
		"    epic_id: epic:a\n"
		"    acceptance_criteria:\n"
		"      - works\n"
		"      -   also\n",
		"[1, [2, [3, {a: [4]}]], {}]\n",
		"just a scalar\n",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		pmbot_srcmap *map;
		json_t *root;
		pmbot_jdoc *doc = doc_of(texts[i], 20 + (int)i, (int)i, &root, &map);

		pmbot_jdoc_free(doc);
		json_decref(root);
		pmbot_srcmap_free(map);
	}
}

/* The same places as the map test above, read from the nodes. */
static void test_yaml_parse__a_document_puts_members_at_their_keys(void **state)
{
	const pmbot_jnode *r, *tasks, *t2, *ab;
	pmbot_srcmap *map;
	json_t *root;
	pmbot_jdoc *doc;

	(void)state;
	doc = doc_of("title: x\n"
		"tasks:\n"
		"  - id: a\n"
		"    deps: [b, c]\n"
		"  - &t {id: z}\n"
		"  - *t\n"
		"a/b: {c~d: 1}\n", 40, 2, &root, &map);
	r = pmbot_jdoc_root(doc);
	assert_int_equal(r->line, 40);
	assert_int_equal(r->column, 3);
	assert_int_equal(r->len, 3);
	tasks = pmbot_jnode_get(r, "tasks");
	assert_int_equal(tasks->line, 41);
	assert_int_equal(tasks->column, 3);
	assert_int_equal(pmbot_jnode_at(pmbot_jnode_get(pmbot_jnode_at(tasks, 0), "deps"), 1)->column, 17);
	t2 = pmbot_jnode_at(tasks, 2);
	assert_int_equal(t2->line, 45);
	assert_int_equal(t2->column, 7);
	/* Inside an alias's copy: the text it was copied from. */
	assert_int_equal(pmbot_jnode_get(t2, "id")->line, 44);
	assert_int_equal(pmbot_jnode_get(t2, "id")->column, 11);
	assert_string_equal(pmbot_jnode_get(t2, "id")->v.s, "z");
	ab = pmbot_jnode_get(r, "a/b");
	assert_int_equal(ab->line, 46);
	assert_string_equal(pmbot_jnode_first(ab)->key, "c~d");
	assert_int_equal(pmbot_jnode_first(ab)->column, 9);
	/* The member order is the text's, not sorted. */
	assert_string_equal(pmbot_jnode_first(r)->key, "title");
	assert_string_equal(pmbot_jnode_next(pmbot_jnode_first(r))->key, "tasks");
	pmbot_jdoc_free(doc);
	json_decref(root);
	pmbot_srcmap_free(map);
}

static void test_yaml_parse__a_document_without_a_map_has_no_positions(void **state)
{
	const pmbot_jnode *r;
	pmbot_jdoc *doc = NULL;
	json_t *root;

	(void)state;
	root = parse_ok("a: [1, x]\nb: {c: null}\n");
	assert_int_equal(pmbot_jdoc_from_json(&doc, root, NULL), PMBOT_OK);
	r = pmbot_jdoc_root(doc);
	assert_int_equal(r->v.skip, 6);
	assert_int_equal(r->line, 0);
	assert_int_equal(pmbot_jnode_at(pmbot_jnode_get(r, "a"), 1)->line, 0);
	assert_int_equal(pmbot_jnode_at(pmbot_jnode_get(r, "a"), 1)->column, 0);
	assert_int_equal(pmbot_jnode_get(pmbot_jnode_get(r, "b"), "c")->type, PMBOT_JNULL);
	pmbot_jdoc_free(doc);
	json_decref(root);
	doc = (pmbot_jdoc *)1;
	assert_int_equal(pmbot_jdoc_from_json(&doc, NULL, NULL), PMBOT_ERROR);
	assert_null(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yaml_parse__resolves_null_and_bool_by_the_core_schema),
		cmocka_unit_test(test_yaml_parse__resolves_numbers_by_the_core_schema),
		cmocka_unit_test(test_yaml_parse__keeps_other_plain_scalars_as_strings),
		cmocka_unit_test(test_yaml_parse__quoted_and_block_scalars_stay_strings),
		cmocka_unit_test(test_yaml_parse__rejects_non_finite_and_out_of_range_numbers),
		cmocka_unit_test(test_yaml_parse__honours_the_standard_tags),
		cmocka_unit_test(test_yaml_parse__rejects_values_that_do_not_fit_their_tag),
		cmocka_unit_test(test_yaml_parse__rejects_other_tags),
		cmocka_unit_test(test_yaml_parse__turns_scalar_keys_into_strings),
		cmocka_unit_test(test_yaml_parse__rejects_a_complex_key),
		cmocka_unit_test(test_yaml_parse__rejects_a_duplicate_key_at_the_second_key),
		cmocka_unit_test(test_yaml_parse__duplicates_compare_resolved_key_strings),
		cmocka_unit_test(test_yaml_parse__requires_exactly_one_document),
		cmocka_unit_test(test_yaml_parse__reports_libyaml_errors_at_the_problem_mark),
		cmocka_unit_test(test_yaml_parse__reports_control_characters_at_their_position),
		cmocka_unit_test(test_yaml_parse__maps_every_value_to_its_file_position),
		cmocka_unit_test(test_yaml_parse__counts_columns_in_characters),
		cmocka_unit_test(test_yaml_parse__counts_lines_like_the_markdown_file),
		cmocka_unit_test(test_yaml_parse__counts_a_leading_bom_as_a_column),
		cmocka_unit_test(test_yaml_parse__expands_an_alias_to_a_deep_copy),
		cmocka_unit_test(test_yaml_parse__a_later_anchor_of_the_same_name_wins),
		cmocka_unit_test(test_yaml_parse__merge_keys_are_plain_keys),
		cmocka_unit_test(test_yaml_parse__rejects_undefined_and_recursive_aliases),
		cmocka_unit_test(test_yaml_parse__stops_a_billion_laughs),
		cmocka_unit_test(test_yaml_parse__counts_alias_nodes_against_the_limit),
		cmocka_unit_test(test_yaml_parse__counts_alias_bytes_against_the_limit),
		cmocka_unit_test(test_yaml_parse__rejects_nesting_deeper_than_the_limit),
		cmocka_unit_test(test_yaml_parse__depth_counts_block_collections_and_aliases),
		cmocka_unit_test(test_yaml_parse__rejects_input_over_the_size_limit),
		cmocka_unit_test(test_yaml_parse__rejects_invalid_utf8_and_nul),
		cmocka_unit_test(test_yaml_parse__uses_the_default_limits_when_none_are_given),
		cmocka_unit_test(test_yaml_parse__maps_a_large_report),
		cmocka_unit_test(test_yaml_parse__a_document_of_the_value_has_the_maps_positions),
		cmocka_unit_test(test_yaml_parse__a_document_puts_members_at_their_keys),
		cmocka_unit_test(test_yaml_parse__a_document_without_a_map_has_no_positions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
