#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/common.h"
#include "pmbot/json.h"
#include "pmbot/llm.h"
#include "pmbot/banned.h"

static json_t *load(const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);

	if (!v)
		fail_msg("bad JSON in test: %s: %s", text, err.text);
	return v;
}

/*
 * Validate `instance` against `schema` and return the canonical JSON of the
 * records (the capability payload's "errors" array); `*rc` gets the result.
 */
static char *records(const char *schema, const char *instance, int *rc)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf out = PMBOT_BUF_INIT;
	json_t *s = load(schema), *i = load(instance), *recs = NULL;
	char *text;

	*rc = pmbot_jsonschema_validate(&diags, s, i);
	assert_int_equal(pmbot_jsonschema_records(&recs, &diags, i), PMBOT_OK);
	assert_int_equal(pmbot_json_canonical(&out, recs), 0);
	text = pmbot_buf_detach(&out, NULL);
	json_decref(recs);
	json_decref(s);
	json_decref(i);
	pmbot_diag_list_free(&diags);
	return text;
}

static void want_records(const char *schema, const char *instance, const char *want)
{
	int rc;
	char *got = records(schema, instance, &rc);

	assert_string_equal(got, want);
	assert_int_equal(rc, strcmp(want, "[]") ? PMBOT_EINVALID : PMBOT_OK);
	free(got);
}

static void test_jsonschema__required_names_the_missing_member_as_python_does(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *s = load("{\"type\": \"object\", \"required\": [\"draft\", \"it's\"]}");
	json_t *i = load("{}");

	(void)state;
	assert_int_equal(pmbot_jsonschema_validate(&diags, s, i), PMBOT_EINVALID);
	assert_int_equal(diags.count, 2);
	/* Diagnostics carry the JSON Pointer of the missing member, sorted. */
	assert_string_equal(diags.items[0].path, "/draft");
	assert_string_equal(diags.items[0].code, "SCHEMA_REQUIRED");
	assert_string_equal(diags.items[0].message, "'draft' is a required property");
	assert_int_equal(diags.items[0].severity, PMBOT_SEV_ERROR);
	assert_string_equal(diags.items[1].path, "/it's");
	assert_string_equal(diags.items[1].message, "\"it's\" is a required property");
	json_decref(s);
	json_decref(i);
	pmbot_diag_list_free(&diags);

	want_records("{\"required\": [\"draft\", \"it's\"]}", "{}",
		"[{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'draft' is a required property\","
		"\"path\":\"$.draft\"},"
		"{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"\\\"it's\\\" is a required property\","
		"\"path\":\"$[\\\"it's\\\"]\"}]");
	/* `required` says nothing about values that are not objects. */
	want_records("{\"required\": [\"a\"]}", "[1]", "[]");
}

static void test_jsonschema__type_names_the_value_and_every_allowed_type(void **state)
{
	(void)state;
	want_records("{\"type\": \"string\"}", "5",
		"[{\"code\":\"SCHEMA_TYPE\",\"message\":\"5 is not of type 'string'\",\"path\":\"$\"}]");
	want_records("{\"type\": [\"string\", \"null\"]}", "{\"a\": [true]}",
		"[{\"code\":\"SCHEMA_TYPE\",\"message\":\"{\\\"a\\\":[true]} is not of type "
		"'string', 'null'\",\"path\":\"$\"}]");
	want_records("{\"type\": [\"string\", \"null\"]}", "null", "[]");
	want_records("{\"type\": \"boolean\"}", "false", "[]");
	want_records("{\"type\": \"array\"}", "{}",
		"[{\"code\":\"SCHEMA_TYPE\",\"message\":\"{} is not of type 'array'\",\"path\":\"$\"}]");
}

static void test_jsonschema__integer_accepts_reals_without_a_fraction_as_draft07_does(void **state)
{
	(void)state;
	want_records("{\"type\": \"integer\"}", "2.0", "[]");
	want_records("{\"type\": \"integer\"}", "-7", "[]");
	want_records("{\"type\": \"integer\"}", "2.5",
		"[{\"code\":\"SCHEMA_TYPE\",\"message\":\"2.5 is not of type 'integer'\",\"path\":\"$\"}]");
	want_records("{\"type\": \"integer\"}", "\"2\"",
		"[{\"code\":\"SCHEMA_TYPE\",\"message\":\"\\\"2\\\" is not of type 'integer'\","
		"\"path\":\"$\"}]");
	want_records("{\"type\": \"number\"}", "2", "[]");
}

static void test_jsonschema__enum_and_const_compare_numbers_by_value(void **state)
{
	(void)state;
	want_records("{\"enum\": [\"a\", \"b\"]}", "\"c\"",
		"[{\"code\":\"SCHEMA_ENUM\",\"message\":\"\\\"c\\\" is not one of [\\\"a\\\",\\\"b\\\"]\","
		"\"path\":\"$\"}]");
	want_records("{\"enum\": [1, {\"k\": [2]}]}", "1.0", "[]");
	want_records("{\"enum\": [1, {\"k\": [2]}]}", "{\"k\": [2.0]}", "[]");
	want_records("{\"enum\": [1]}", "true",
		"[{\"code\":\"SCHEMA_ENUM\",\"message\":\"true is not one of [1]\",\"path\":\"$\"}]");
	want_records("{\"const\": true}", "false",
		"[{\"code\":\"SCHEMA_CONST\",\"message\":\"true was expected\",\"path\":\"$\"}]");
	want_records("{\"const\": \"report_ir/v1\"}", "\"report_ir/v1\"", "[]");
	want_records("{\"const\": {\"a\": 1}}", "{\"a\": 1, \"b\": 2}",
		"[{\"code\":\"SCHEMA_CONST\",\"message\":\"{\\\"a\\\":1} was expected\",\"path\":\"$\"}]");
}

static void test_jsonschema__additional_properties_are_reported_one_per_member(void **state)
{
	(void)state;
	/* Bytewise: '.' sorts before '['. */
	want_records("{\"properties\": {\"a\": {}}, \"additionalProperties\": false}",
		"{\"a\": 1, \"zz\": 2, \"c d\": 3}",
		"[{\"code\":\"SCHEMA_ADDITIONAL\",\"message\":\"Additional properties are not allowed "
		"('zz' was unexpected)\",\"path\":\"$.zz\"},"
		"{\"code\":\"SCHEMA_ADDITIONAL\",\"message\":\"Additional properties are not allowed "
		"('c d' was unexpected)\",\"path\":\"$[\\\"c d\\\"]\"}]");
	want_records("{\"properties\": {\"a\": {}}, \"additionalProperties\": {\"type\": \"integer\"}}",
		"{\"a\": \"x\", \"b\": 2, \"c\": \"s\"}",
		"[{\"code\":\"SCHEMA_TYPE\",\"message\":\"\\\"s\\\" is not of type 'integer'\","
		"\"path\":\"$.c\"}]");
}

static void test_jsonschema__false_schema_refuses_any_value(void **state)
{
	(void)state;
	want_records("{\"properties\": {\"n\": false, \"y\": true}}", "{\"n\": 1, \"y\": 2}",
		"[{\"code\":\"SCHEMA_FALSE\",\"message\":\"False schema does not allow 1\","
		"\"path\":\"$.n\"}]");
	want_records("false", "null",
		"[{\"code\":\"SCHEMA_FALSE\",\"message\":\"False schema does not allow null\","
		"\"path\":\"$\"}]");
}

static void test_jsonschema__string_lengths_count_code_points(void **state)
{
	const char *s = "{\"minLength\": 2, \"maxLength\": 3}";

	(void)state;
	want_records(s, "\"\xc3\xa9\xc3\xa9\"", "[]"); /* 4 bytes, 2 characters */
	want_records(s, "\"\xc3\xa9\"",
		"[{\"code\":\"SCHEMA_MIN_LENGTH\",\"message\":\"\\\"\xc3\xa9\\\" is too short "
		"(minLength 2)\",\"path\":\"$\"}]");
	want_records(s, "\"abcd\"",
		"[{\"code\":\"SCHEMA_MAX_LENGTH\",\"message\":\"\\\"abcd\\\" is too long "
		"(maxLength 3)\",\"path\":\"$\"}]");
	/* Length keywords do not apply to other types. */
	want_records(s, "12345", "[]");
}

static void test_jsonschema__array_counts_and_uniqueness(void **state)
{
	const char *s = "{\"minItems\": 1, \"maxItems\": 2, \"uniqueItems\": true}";

	(void)state;
	want_records(s, "[]",
		"[{\"code\":\"SCHEMA_MIN_ITEMS\",\"message\":\"[] is too short (minItems 1)\","
		"\"path\":\"$\"}]");
	want_records(s, "[1, 2, 3]",
		"[{\"code\":\"SCHEMA_MAX_ITEMS\",\"message\":\"[1,2,3] is too long (maxItems 2)\","
		"\"path\":\"$\"}]");
	want_records(s, "[1, 1.0]",
		"[{\"code\":\"SCHEMA_UNIQUE\",\"message\":\"[1,1.0] has non-unique elements\","
		"\"path\":\"$\"}]");
	want_records(s, "[{\"a\": 1}, {\"a\": 2}]", "[]");
}

static void test_jsonschema__numeric_bounds(void **state)
{
	const char *s = "{\"minimum\": 1, \"maximum\": 10.5}";
	const char *x = "{\"exclusiveMinimum\": 0, \"exclusiveMaximum\": 3}";

	(void)state;
	want_records(s, "1", "[]");
	want_records(s, "10.5", "[]");
	want_records(s, "0",
		"[{\"code\":\"SCHEMA_MINIMUM\",\"message\":\"0 is less than the minimum of 1\","
		"\"path\":\"$\"}]");
	want_records(s, "11",
		"[{\"code\":\"SCHEMA_MAXIMUM\",\"message\":\"11 is greater than the maximum of 10.5\","
		"\"path\":\"$\"}]");
	want_records(x, "0",
		"[{\"code\":\"SCHEMA_EXCLUSIVE_MINIMUM\",\"message\":\"0 is less than or equal to "
		"the minimum of 0\",\"path\":\"$\"}]");
	want_records(x, "3.0",
		"[{\"code\":\"SCHEMA_EXCLUSIVE_MAXIMUM\",\"message\":\"3.0 is greater than or equal "
		"to the maximum of 3\",\"path\":\"$\"}]");
	want_records(x, "2.9", "[]");
}

static void test_jsonschema__pattern_is_an_unanchored_search(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *s = load("{\"pattern\": \"^a\"}"), *nul = json_stringn("a\0b", 3);

	(void)state;
	want_records("{\"pattern\": \"b\"}", "\"abc\"", "[]");
	want_records("{\"pattern\": \"^b\"}", "\"abc\"",
		"[{\"code\":\"SCHEMA_PATTERN\",\"message\":\"\\\"abc\\\" does not match '^b'\","
		"\"path\":\"$\"}]");
	want_records("{\"pattern\": \"^[0-9]{4}-[0-9]{2}(\\\\.[0-9]+)?$\"}", "\"2026-02.5\"", "[]");
	want_records("{\"pattern\": \"^[0-9]{4}-[0-9]{2}(\\\\.[0-9]+)?$\"}", "\"2026-02x5\"",
		"[{\"code\":\"SCHEMA_PATTERN\",\"message\":\"\\\"2026-02x5\\\" does not match "
		"'^[0-9]{4}-[0-9]{2}(\\\\\\\\.[0-9]+)?$'\",\"path\":\"$\"}]");
	/* regexec would stop at the NUL and see only "a". */
	assert_int_equal(pmbot_jsonschema_validate(&diags, s, nul), PMBOT_EINVALID);
	assert_string_equal(diags.items[0].code, "SCHEMA_PATTERN");
	json_decref(s);
	json_decref(nul);
	pmbot_diag_list_free(&diags);
}

static void test_jsonschema__long_values_are_cut_in_messages(void **state)
{
	char instance[200], expected[400];

	(void)state;
	memset(instance, 'x', sizeof(instance));
	instance[0] = '"';
	instance[150] = '"';
	instance[151] = '\0';
	/* The quote and 59 letters make 60 characters. */
	snprintf(expected, sizeof(expected),
		"[{\"code\":\"SCHEMA_TYPE\",\"message\":\"\\\"%.59s... is not of type 'integer'\","
		"\"path\":\"$\"}]", instance + 1);
	want_records("{\"type\": \"integer\"}", instance, expected);
	/* Member names from the instance are cut too; the path keeps them whole. */
	want_records("{\"additionalProperties\": false}",
		"{\"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnop\": 1}",
		"[{\"code\":\"SCHEMA_ADDITIONAL\",\"message\":\"Additional properties are not allowed "
		"('abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefgh...' was unexpected)\","
		"\"path\":\"$.abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnop\"}]");
	/* A cut never splits a UTF-8 sequence. */
	want_records("{\"type\": \"integer\"}",
		"\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9zz\"",
		"[{\"code\":\"SCHEMA_TYPE\",\"message\":\"\\\""
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"... is not of type 'integer'\",\"path\":\"$\"}]");
}

static void test_jsonschema__items_refs_and_nested_paths(void **state)
{
	const char *s =
		"{\"type\": \"object\", \"properties\": {\"tasks\": {\"type\": \"array\","
		" \"items\": {\"$ref\": \"#/definitions/task\"}}},"
		" \"definitions\": {\"task\": {\"type\": \"object\", \"required\": [\"title\"],"
		" \"properties\": {\"title\": {\"type\": \"string\", \"minLength\": 1}}}}}";

	(void)state;
	want_records(s, "{\"tasks\": [{\"title\": \"a\"}, {}, {\"title\": \"\"}, 7]}",
		"[{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'title' is a required property\","
		"\"path\":\"$.tasks[1].title\"},"
		"{\"code\":\"SCHEMA_MIN_LENGTH\",\"message\":\"\\\"\\\" is too short (minLength 1)\","
		"\"path\":\"$.tasks[2].title\"},"
		"{\"code\":\"SCHEMA_TYPE\",\"message\":\"7 is not of type 'object'\","
		"\"path\":\"$.tasks[3]\"}]");
	/* A root that is itself a $ref, beside the root's definitions. */
	want_records("{\"$schema\": \"http://json-schema.org/draft-07/schema#\","
		" \"$ref\": \"#/definitions/a~1b\","
		" \"definitions\": {\"a/b\": {\"type\": \"string\"}}}", "1",
		"[{\"code\":\"SCHEMA_TYPE\",\"message\":\"1 is not of type 'string'\",\"path\":\"$\"}]");
}

static void test_jsonschema__all_of_and_if_then_else(void **state)
{
	const char *s =
		"{\"allOf\": [{\"required\": [\"a\"]}, {\"required\": [\"a\", \"b\"]}],"
		" \"if\": {\"properties\": {\"kind\": {\"const\": \"x\"}}, \"required\": [\"kind\"]},"
		" \"then\": {\"required\": [\"x\"]}, \"else\": {\"properties\": {\"x\": false}}}";

	(void)state;
	/* Both allOf branches miss "a": one record, not two. */
	want_records(s, "{\"kind\": \"x\"}",
		"[{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'a' is a required property\",\"path\":\"$.a\"},"
		"{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'b' is a required property\",\"path\":\"$.b\"},"
		"{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'x' is a required property\",\"path\":\"$.x\"}]");
	/* The failing `if` reports nothing itself; `else` applies. */
	want_records(s, "{\"a\": 1, \"b\": 2, \"kind\": \"y\", \"x\": 1}",
		"[{\"code\":\"SCHEMA_FALSE\",\"message\":\"False schema does not allow 1\",\"path\":\"$.x\"}]");
	want_records(s, "{\"a\": 1, \"b\": 2, \"kind\": \"x\", \"x\": 1}", "[]");
	want_records(s, "{\"a\": 1, \"b\": 2}", "[]");
}

static void test_jsonschema__records_sort_by_path_then_code(void **state)
{
	const char *s =
		"{\"properties\": {\"b\": {\"type\": \"string\", \"enum\": [\"z\"]},"
		" \"a\": {\"type\": \"array\"}}, \"required\": [\"c\"]}";

	(void)state;
	want_records(s, "{\"b\": 1, \"a\": 2}",
		"[{\"code\":\"SCHEMA_TYPE\",\"message\":\"2 is not of type 'array'\",\"path\":\"$.a\"},"
		"{\"code\":\"SCHEMA_ENUM\",\"message\":\"1 is not one of [\\\"z\\\"]\",\"path\":\"$.b\"},"
		"{\"code\":\"SCHEMA_TYPE\",\"message\":\"1 is not of type 'string'\",\"path\":\"$.b\"},"
		"{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'c' is a required property\",\"path\":\"$.c\"}]");
	/* Member order in the instance does not change the result. */
	want_records(s, "{\"a\": 2, \"b\": 1}",
		"[{\"code\":\"SCHEMA_TYPE\",\"message\":\"2 is not of type 'array'\",\"path\":\"$.a\"},"
		"{\"code\":\"SCHEMA_ENUM\",\"message\":\"1 is not one of [\\\"z\\\"]\",\"path\":\"$.b\"},"
		"{\"code\":\"SCHEMA_TYPE\",\"message\":\"1 is not of type 'string'\",\"path\":\"$.b\"},"
		"{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'c' is a required property\",\"path\":\"$.c\"}]");
}

static void test_jsonschema__errors_stop_at_the_cap_in_document_order(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *s = load("{\"items\": {\"type\": \"string\"}}"), *arr = json_array();
	size_t i;

	(void)state;
	for (i = 0; i < 1500; i++)
		json_array_append_new(arr, json_integer((json_int_t)i));
	assert_int_equal(pmbot_jsonschema_validate(&diags, s, arr), PMBOT_EINVALID);
	assert_int_equal(diags.count, PMBOT_JSONSCHEMA_MAX_ERRORS + 1);
	/* Sorted: the cap's record at the root, then "/0", "/1", "/10", ... "/999". */
	assert_string_equal(diags.items[0].code, "SCHEMA_TOO_MANY");
	assert_string_equal(diags.items[0].path, "");
	assert_string_equal(diags.items[0].message, "more than 1000 errors; validation stopped there");
	assert_string_equal(diags.items[1].path, "/0");
	assert_string_equal(diags.items[PMBOT_JSONSCHEMA_MAX_ERRORS].path, "/999");
	assert_null(pmbot_diag_list_find(&diags, "SCHEMA_MAX_ITEMS"));
	pmbot_diag_list_free(&diags);
	/* Exactly the cap is not more than it. */
	while (json_array_size(arr) > PMBOT_JSONSCHEMA_MAX_ERRORS)
		json_array_remove(arr, json_array_size(arr) - 1);
	assert_int_equal(pmbot_jsonschema_validate(&diags, s, arr), PMBOT_EINVALID);
	assert_int_equal(diags.count, PMBOT_JSONSCHEMA_MAX_ERRORS);
	assert_null(pmbot_diag_list_find(&diags, "SCHEMA_TOO_MANY"));
	pmbot_diag_list_free(&diags);
	json_decref(arr);
	json_decref(s);
}

static void test_jsonschema__recursion_stops_at_the_depth_limit(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *s = load("{\"$ref\": \"#/definitions/n\", \"definitions\": {\"n\":"
		" {\"type\": \"array\", \"items\": {\"$ref\": \"#/definitions/n\"}}}}");
	json_t *deep = json_array(), *cur = deep;
	size_t i;

	(void)state;
	for (i = 0; i < 300; i++) {
		json_t *next = json_array();

		json_array_append_new(cur, next);
		cur = next;
	}
	assert_int_equal(pmbot_jsonschema_validate(&diags, s, deep), PMBOT_EINVALID);
	assert_int_equal(diags.count, 1);
	assert_string_equal(diags.items[0].code, "SCHEMA_TOO_DEEP");
	assert_string_equal(diags.items[0].message, "validation nested deeper than 256 schema levels");
	/* Two schema levels (the $ref and the items) per array level. */
	assert_int_equal(strlen(diags.items[0].path), 2 * 128);
	pmbot_diag_list_free(&diags);
	json_decref(deep);
	json_decref(s);
}

/* Check `schema`; the number of diagnostics (0 when accepted). */
static int check_count(const char *schema, pmbot_diag_list *diags)
{
	json_t *s = load(schema);
	int rc = pmbot_jsonschema_check(diags, s);

	json_decref(s);
	assert_int_equal(rc, diags->count ? PMBOT_EINVALID : PMBOT_OK);
	return (int)diags->count;
}

static int check_n(const char *schema)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	int n = check_count(schema, &diags);

	pmbot_diag_list_free(&diags);
	return n;
}

static void want_check(const char *schema, const char *code, const char *path, const char *msg)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;

	assert_int_equal(check_count(schema, &diags), 1);
	assert_string_equal(diags.items[0].code, code);
	assert_string_equal(diags.items[0].path, path);
	assert_string_equal(diags.items[0].message, msg);
	pmbot_diag_list_free(&diags);
}

static void test_jsonschema__check_refuses_keywords_outside_the_subset(void **state)
{
	(void)state;
	want_check("{\"properties\": {\"a\": {\"format\": \"date\"}}}",
		"JSONSCHEMA_UNSUPPORTED", "/properties/a/format", "keyword format is not supported");
	want_check("{\"items\": [{}, {}]}", "JSONSCHEMA_UNSUPPORTED", "/items",
		"array-form items is not supported");
	want_check("{\"definitions\": {\"a\": {}}, \"properties\": {\"x\":"
		" {\"$ref\": \"#/definitions/a\", \"type\": \"string\", \"description\": \"ok\"}}}",
		"JSONSCHEMA_UNSUPPORTED", "/properties/x/type",
		"keyword beside $ref (draft-07 ignores it): type");
	want_check("{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\"}",
		"JSONSCHEMA_UNSUPPORTED", "/$schema",
		"only the root may name a $schema, and only draft-07's");
	want_check("{\"items\": {\"definitions\": {}}}", "JSONSCHEMA_UNSUPPORTED",
		"/items/definitions", "only the root may hold definitions");
	want_check("{\"oneOf\": [{}]}", "JSONSCHEMA_UNSUPPORTED", "/oneOf",
		"keyword oneOf is not supported");
	want_check("{\"uniqueItems\": true}", "JSONSCHEMA_UNSUPPORTED", "/uniqueItems",
		"uniqueItems needs a maxItems beside it (it compares every pair)");
	assert_int_equal(check_n("{\"uniqueItems\": false}"), 0);
}

static void test_jsonschema__check_refuses_malformed_keyword_values(void **state)
{
	(void)state;
	want_check("{\"type\": \"text\"}", "JSONSCHEMA_INVALID", "/type", "unknown type text");
	want_check("{\"type\": [\"string\", \"string\"]}", "JSONSCHEMA_INVALID", "/type",
		"type lists string twice");
	want_check("{\"type\": []}", "JSONSCHEMA_INVALID", "/type",
		"type must be a type name or a non-empty list of them");
	want_check("{\"minLength\": -1}", "JSONSCHEMA_INVALID", "/minLength",
		"minLength must be a non-negative integer");
	want_check("{\"maxItems\": 1.5}", "JSONSCHEMA_INVALID", "/maxItems",
		"maxItems must be a non-negative integer");
	want_check("{\"minimum\": \"1\"}", "JSONSCHEMA_INVALID", "/minimum",
		"minimum must be a number");
	want_check("{\"enum\": []}", "JSONSCHEMA_INVALID", "/enum", "enum must be a non-empty array");
	want_check("{\"required\": [1]}", "JSONSCHEMA_INVALID", "/required",
		"required must be an array of names");
	want_check("{\"uniqueItems\": 1}", "JSONSCHEMA_INVALID", "/uniqueItems",
		"uniqueItems must be a boolean");
	want_check("{\"allOf\": []}", "JSONSCHEMA_INVALID", "/allOf",
		"allOf must be a non-empty array of schemas");
	want_check("{\"allOf\": [{}, 3]}", "JSONSCHEMA_INVALID", "/allOf/1",
		"a schema must be an object or a boolean");
	want_check("{\"properties\": []}", "JSONSCHEMA_INVALID", "/properties",
		"properties must be an object of schemas");
	want_check("{\"title\": 1}", "JSONSCHEMA_INVALID", "/title", "title must be a string");
}

static void test_jsonschema__check_accepts_only_portable_patterns(void **state)
{
	(void)state;
	assert_int_equal(check_n("{\"pattern\": \"^[A-Za-z0-9_.-]+/[1-9][0-9]*(\\\\.x)?$\"}"), 0);
	want_check("{\"pattern\": \"^a.b$\"}", "JSONSCHEMA_INVALID", "/pattern",
		"pattern is not portable: '.' outside brackets differs on newlines between POSIX "
		"and ECMA-262");
	want_check("{\"pattern\": \"\\\\d+\"}", "JSONSCHEMA_INVALID", "/pattern",
		"pattern is not portable: escapes other than of .[]{}()*+?^$|\\ differ between "
		"POSIX and ECMA-262");
	want_check("{\"pattern\": \"[^\\\\s]\"}", "JSONSCHEMA_INVALID", "/pattern",
		"pattern is not portable: a backslash in brackets differs between POSIX and ECMA-262");
	want_check("{\"pattern\": \"[]a]\"}", "JSONSCHEMA_INVALID", "/pattern",
		"pattern is not portable: ']' first in brackets differs between POSIX and ECMA-262");
	want_check("{\"pattern\": \"[[:alpha:]]\"}", "JSONSCHEMA_INVALID", "/pattern",
		"pattern is not portable: POSIX bracket classes are not ECMA-262");
	want_check("{\"pattern\": \"(?:a)\"}", "JSONSCHEMA_INVALID", "/pattern",
		"pattern is not portable: '(?' groups are not POSIX");
	want_check("{\"pattern\": \"[a-\"}", "JSONSCHEMA_INVALID", "/pattern",
		"pattern is not portable: unterminated bracket expression");
	want_check("{\"pattern\": \"(a\"}", "JSONSCHEMA_INVALID", "/pattern",
		"pattern does not compile: (a");
}

static void test_jsonschema__check_resolves_every_ref_and_finds_cycles(void **state)
{
	(void)state;
	want_check("{\"items\": {\"$ref\": \"#/definitions/missing\"}, \"definitions\": {}}",
		"JSONSCHEMA_INVALID", "/items/$ref",
		"$ref does not name an entry of the root's definitions: #/definitions/missing");
	want_check("{\"$ref\": \"other.json#/definitions/a\", \"definitions\": {\"a\": {}}}",
		"JSONSCHEMA_INVALID", "/$ref",
		"$ref does not name an entry of the root's definitions: other.json#/definitions/a");
	assert_int_equal(check_n("{\"definitions\": {\"a\": {\"$ref\": \"#/definitions/b\"},"
		" \"b\": {\"$ref\": \"#/definitions/a\"}}}"), 2);
	want_check("{\"definitions\": {\"a\": {\"$ref\": \"#/definitions/a\"}}}",
		"JSONSCHEMA_INVALID", "/definitions/a/$ref", "$ref chain is a cycle: #/definitions/a");
	/* Recursion through a keyword that descends into the value is fine. */
	assert_int_equal(check_n("{\"definitions\": {\"n\": {\"items\": {\"$ref\": \"#/definitions/n\"}}}}"), 0);
}

static void test_jsonschema__validate_refuses_a_schema_outside_the_subset(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *s = load("{\"type\": \"object\", \"patternProperties\": {\"x\": false}}");
	json_t *i = load("{\"x\": 1}");

	(void)state;
	assert_int_equal(pmbot_jsonschema_validate(&diags, s, i), PMBOT_ERROR);
	assert_int_equal(diags.count, 1);
	assert_string_equal(diags.items[0].code, "JSONSCHEMA_UNSUPPORTED");
	assert_string_equal(diags.items[0].path, "/patternProperties");
	json_decref(s);
	json_decref(i);
	pmbot_diag_list_free(&diags);
}

static void want_path(const char *instance, const char *pointer, const char *want)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	json_t *i = instance ? load(instance) : NULL;

	assert_int_equal(pmbot_buf_puts(&out, "pre:"), 0);
	assert_int_equal(pmbot_jsonschema_path(&out, i, pointer), want ? PMBOT_OK : PMBOT_EINVALID);
	assert_string_equal(out.buf + 4, want ? want : "");
	pmbot_buf_free(&out);
	json_decref(i);
}

static void test_jsonschema__paths_read_indices_only_in_arrays(void **state)
{
	(void)state;
	want_path("{}", "", "$");
	want_path("{\"draft\": {\"tasks\": [{}]}}", "/draft/tasks/0/title", "$.draft.tasks[0].title");
	want_path("{\"0\": {\"x\": [[1]]}}", "/0/x/0/0", "$[\"0\"].x[0][0]");
	want_path("{\"a/b\": {\"~\": 1}}", "/a~1b/~0", "$[\"a/b\"][\"~\"]");
	want_path("{\"x\": [1]}", "/x/01", "$.x[\"01\"]");
	want_path("{\"x\": [1]}", "/x/-", "$.x[\"-\"]");
	want_path(NULL, "/0/_ok9", "$[\"0\"]._ok9");
	want_path("{}", "/say \"hi\"", "$[\"say \\\"hi\\\"\"]");
	want_path("{}", "draft", NULL);
	want_path("{}", "/a~2", NULL);
	want_path("{}", "/a~", NULL);
}

static void test_jsonschema__records_drop_warnings_and_duplicates(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf out = PMBOT_BUF_INIT;
	json_t *recs;

	(void)state;
	pmbot_diag_add(&diags, PMBOT_SEV_ERROR, "B_CODE", NULL, "/b", 0, 0, "m");
	pmbot_diag_add(&diags, PMBOT_SEV_WARNING, "W_CODE", NULL, "/a", 0, 0, "w");
	pmbot_diag_add(&diags, PMBOT_SEV_ERROR, "A_CODE", NULL, "/b", 0, 0, "m");
	pmbot_diag_add(&diags, PMBOT_SEV_ERROR, "B_CODE", NULL, "/b", 0, 0, "m");
	pmbot_diag_add(&diags, PMBOT_SEV_ERROR, "B_CODE", NULL, "", 0, 0, "z");
	assert_int_equal(pmbot_jsonschema_records(&recs, &diags, NULL), PMBOT_OK);
	assert_int_equal(pmbot_json_canonical(&out, recs), 0);
	assert_string_equal(out.buf,
		"[{\"code\":\"B_CODE\",\"message\":\"z\",\"path\":\"$\"},"
		"{\"code\":\"A_CODE\",\"message\":\"m\",\"path\":\"$.b\"},"
		"{\"code\":\"B_CODE\",\"message\":\"m\",\"path\":\"$.b\"}]");
	json_decref(recs);
	pmbot_diag_add(&diags, PMBOT_SEV_ERROR, "C_CODE", NULL, "no-slash", 0, 0, "m");
	assert_int_equal(pmbot_jsonschema_records(&recs, &diags, NULL), PMBOT_EINVALID);
	assert_null(recs);
	pmbot_buf_free(&out);
	pmbot_diag_list_free(&diags);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jsonschema__required_names_the_missing_member_as_python_does),
		cmocka_unit_test(test_jsonschema__type_names_the_value_and_every_allowed_type),
		cmocka_unit_test(test_jsonschema__integer_accepts_reals_without_a_fraction_as_draft07_does),
		cmocka_unit_test(test_jsonschema__enum_and_const_compare_numbers_by_value),
		cmocka_unit_test(test_jsonschema__additional_properties_are_reported_one_per_member),
		cmocka_unit_test(test_jsonschema__false_schema_refuses_any_value),
		cmocka_unit_test(test_jsonschema__string_lengths_count_code_points),
		cmocka_unit_test(test_jsonschema__array_counts_and_uniqueness),
		cmocka_unit_test(test_jsonschema__numeric_bounds),
		cmocka_unit_test(test_jsonschema__pattern_is_an_unanchored_search),
		cmocka_unit_test(test_jsonschema__long_values_are_cut_in_messages),
		cmocka_unit_test(test_jsonschema__items_refs_and_nested_paths),
		cmocka_unit_test(test_jsonschema__all_of_and_if_then_else),
		cmocka_unit_test(test_jsonschema__records_sort_by_path_then_code),
		cmocka_unit_test(test_jsonschema__errors_stop_at_the_cap_in_document_order),
		cmocka_unit_test(test_jsonschema__recursion_stops_at_the_depth_limit),
		cmocka_unit_test(test_jsonschema__check_refuses_keywords_outside_the_subset),
		cmocka_unit_test(test_jsonschema__check_refuses_malformed_keyword_values),
		cmocka_unit_test(test_jsonschema__check_accepts_only_portable_patterns),
		cmocka_unit_test(test_jsonschema__check_resolves_every_ref_and_finds_cycles),
		cmocka_unit_test(test_jsonschema__validate_refuses_a_schema_outside_the_subset),
		cmocka_unit_test(test_jsonschema__paths_read_indices_only_in_arrays),
		cmocka_unit_test(test_jsonschema__records_drop_warnings_and_duplicates),
	};

	return cmocka_run_group_tests_name("jsonschema", tests, NULL, NULL);
}
