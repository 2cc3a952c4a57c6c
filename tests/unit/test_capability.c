#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/llm.h"
#include "pmbot/source.h"
#include "pmbot/fs.h"
#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/banned.h"

static const pmbot_capability *cap(const char *id)
{
	const pmbot_capability *c = NULL;

	assert_int_equal(pmbot_capability_find(&c, id, NULL), PMBOT_OK);
	assert_non_null(c);
	return c;
}

static json_t *load(const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);

	if (!v)
		fail_msg("bad JSON in test: %s", err.text);
	return v;
}

/* Canonical JSON of `v` (malloc'd); `v` is released. */
static char *canon_take(json_t *v)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	assert_non_null(v);
	assert_int_equal(pmbot_json_canonical(&out, v), 0);
	json_decref(v);
	return pmbot_buf_detach(&out, NULL);
}

/* run_output on `text`; returns the canonical result and stores the code. */
static char *run(const char *id, const char *text, int *rc)
{
	json_t *result = NULL;

	*rc = pmbot_capability_run_output(&result, cap(id), text, strlen(text));
	return canon_take(result);
}

/* The validation errors of a failing run, as canonical JSON. */
static char *run_errors(const char *id, const char *text)
{
	json_t *result = NULL;
	char *errors;

	assert_int_equal(pmbot_capability_run_output(&result, cap(id), text, strlen(text)),
		PMBOT_EINVALID);
	errors = canon_take(json_incref(json_object_get(json_object_get(result, "validation"),
		"errors")));
	json_decref(result);
	return errors;
}

static void want_errors(const char *id, const char *text, const char *errors)
{
	char *got = run_errors(id, text);

	assert_string_equal(got, errors);
	free(got);
}

static void want_ok(const char *id, const char *text)
{
	int rc;
	char *got = run(id, text, &rc), *want = canon_take(load(text));

	if (rc != PMBOT_OK)
		fail_msg("%s rejected: %s", id, got);
	assert_string_equal(got, want);
	free(got);
	free(want);
}

static void test_capability__registry_holds_the_four_contracts_with_their_classes(void **state)
{
	static const struct {
		const char *id, *prompt, *schema;
		pmbot_capability_class cls;
	} want[] = {
		{ "report_ir_draft", "report_ir_draft.v1", "report_ir_draft",
		  PMBOT_CAPABILITY_READ_ONLY_ADVICE },
		{ "board_strategy_review", "board_strategy_review.v1", "board_strategy_review",
		  PMBOT_CAPABILITY_READ_ONLY_ADVICE },
		{ "issue_adjustment_proposal", "issue_adjustment_proposal.v1",
		  "issue_adjustment_proposal", PMBOT_CAPABILITY_MUTATION_PROPOSAL },
		{ "issue_replanner", "issue_adjustment_proposal.v1", "issue_adjustment_proposal",
		  PMBOT_CAPABILITY_MUTATION_PROPOSAL },
	};
	const pmbot_capability *c;
	size_t i;
	char sv[128];

	(void)state;
	assert_int_equal(pmbot_capability_count(), 4);
	assert_null(pmbot_capability_at(4));
	for (i = 0; i < 4; i++) {
		c = pmbot_capability_at(i);
		assert_string_equal(c->id, want[i].id);
		assert_int_equal(c->cls, want[i].cls);
		assert_string_equal(c->version, "v1");
		assert_string_equal(c->prompt_name, want[i].prompt);
		assert_string_equal(c->schema_name, want[i].schema);
		snprintf(sv, sizeof(sv), "%s/v1", want[i].schema);
		assert_string_equal(c->schema_version, sv);
		assert_int_equal(pmbot_capability_find(&c, want[i].id, "v1"), PMBOT_OK);
		assert_ptr_equal(c, pmbot_capability_at(i));
	}
	assert_string_equal(pmbot_capability_class_name(PMBOT_CAPABILITY_READ_ONLY_ADVICE),
		"read_only_advice");
	assert_string_equal(pmbot_capability_class_name(PMBOT_CAPABILITY_MUTATION_PROPOSAL),
		"mutation_proposal");
	assert_null(pmbot_capability_class_name((pmbot_capability_class)7));
	assert_int_equal(pmbot_capability_find(&c, "report_ir_draft", "v2"), PMBOT_ENOTFOUND);
	assert_null(c);
	assert_int_equal(pmbot_capability_find(&c, "Report_IR_Draft", NULL), PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_capability_find(&c, "", NULL), PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_capability_find(&c, NULL, NULL), PMBOT_ENOTFOUND);
}

static void test_capability__prompts_and_schemas_are_compiled_in_byte_for_byte(void **state)
{
	size_t i;

	(void)state;
	/* Three prompts and three schemas; the alias shares its files. */
	assert_int_equal(pmbot_llm_files_count, 6);
	assert_null(pmbot_llm_files[6].name);
	for (i = 0; i < pmbot_capability_count(); i++) {
		const pmbot_capability *c = pmbot_capability_at(i);
		pmbot_buf path = PMBOT_BUF_INIT, file = PMBOT_BUF_INIT;

		assert_int_equal(pmbot_buf_printf(&path, "src/llm/prompts/%s.md", c->prompt_name), 0);
		assert_int_equal(pmbot_fs_read(&file, path.buf), 0);
		assert_non_null(pmbot_capability_prompt_text(c));
		assert_string_equal(pmbot_capability_prompt_text(c), file.buf);
		pmbot_buf_clear(&path);
		pmbot_buf_clear(&file);
		assert_int_equal(pmbot_buf_printf(&path, "docs/schemas/llm/%s.schema.json",
			c->schema_name), 0);
		assert_int_equal(pmbot_fs_read(&file, path.buf), 0);
		assert_non_null(pmbot_capability_schema_text(c));
		assert_string_equal(pmbot_capability_schema_text(c), file.buf);
		pmbot_buf_free(&path);
		pmbot_buf_free(&file);
	}
}

static void test_capability__every_schema_is_draft07_within_the_validator_subset(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < pmbot_capability_count(); i++) {
		pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
		const pmbot_capability *c = pmbot_capability_at(i);
		json_t *schema = NULL;
		char id[160];

		assert_int_equal(pmbot_capability_schema(&schema, c), PMBOT_OK);
		assert_int_equal(pmbot_jsonschema_check(&diags, schema), PMBOT_OK);
		assert_int_equal(diags.count, 0);
		assert_string_equal(json_string_value(json_object_get(schema, "$schema")),
			"http://json-schema.org/draft-07/schema#");
		snprintf(id, sizeof(id), "https://pm-bot.invalid/schemas/llm/%s.schema.json",
			c->schema_name);
		assert_string_equal(json_string_value(json_object_get(schema, "$id")), id);
		json_decref(schema);
	}
}

static void test_capability__proposal_operations_are_exactly_the_planners(void **state)
{
	json_t *schema = NULL, *ops;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_capability_schema(&schema, cap("issue_adjustment_proposal")), PMBOT_OK);
	ops = json_object_get(json_object_get(json_object_get(json_object_get(json_object_get(
		schema, "definitions"), "changeset"), "properties"), "operation"), "enum");
	assert_int_equal(json_array_size(ops), PMBOT_OP_COUNT);
	for (i = 0; i < PMBOT_OP_COUNT; i++)
		assert_string_equal(json_string_value(json_array_get(ops, i)),
			pmbot_operation_name((pmbot_operation)i));
	json_decref(schema);
}

static void want_variables(const char *id, const char *want)
{
	json_t *vars = NULL;
	char *got;

	assert_int_equal(pmbot_capability_variables(&vars, cap(id)), PMBOT_OK);
	got = canon_take(vars);
	assert_string_equal(got, want);
	free(got);
}

static void test_capability__variables_list_what_each_template_needs(void **state)
{
	(void)state;
	want_variables("report_ir_draft",
		"[\"constraints\",\"context\",\"report\",\"repository\",\"today\"]");
	want_variables("board_strategy_review", "[\"board\",\"constraints\",\"context\"]");
	want_variables("issue_adjustment_proposal",
		"[\"constraints\",\"context\",\"issues\",\"repository\",\"request\"]");
	want_variables("issue_replanner",
		"[\"constraints\",\"context\",\"issues\",\"repository\",\"request\"]");
}

static void test_capability__every_prompt_renders_its_variables_and_the_schema(void **state)
{
	size_t i, j;

	(void)state;
	for (i = 0; i < pmbot_capability_count(); i++) {
		pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
		const pmbot_capability *c = pmbot_capability_at(i);
		pmbot_buf out = PMBOT_BUF_INIT;
		json_t *names = NULL, *vars = json_object();
		char value[64];

		assert_int_equal(pmbot_capability_variables(&names, c), PMBOT_OK);
		for (j = 0; j < json_array_size(names); j++) {
			snprintf(value, sizeof(value), "<value of %s>",
				json_string_value(json_array_get(names, j)));
			json_object_set_new(vars, json_string_value(json_array_get(names, j)),
				json_string(value));
		}
		assert_int_equal(pmbot_capability_render_prompt(&out, c, vars, &diags), PMBOT_OK);
		assert_int_equal(diags.count, 0);
		assert_null(strstr(out.buf, "{{"));
		assert_non_null(strstr(out.buf, pmbot_capability_schema_text(c)));
		assert_non_null(strstr(out.buf, "exactly ONE JSON object"));
		for (j = 0; j < json_array_size(names); j++) {
			snprintf(value, sizeof(value), "<value of %s>",
				json_string_value(json_array_get(names, j)));
			assert_non_null(strstr(out.buf, value));
		}
		json_decref(names);
		json_decref(vars);
		pmbot_buf_free(&out);
	}
	assert_non_null(strstr(pmbot_capability_system_prompt(), "exactly one JSON object"));
}

static void test_capability__render_inserts_values_verbatim_without_expanding_them(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf out = PMBOT_BUF_INIT;
	const char *t = "A {{x}} B {{y_2}}{{x}} {not} {{}";
	json_t *vars = load("{\"x\": \"{{y_2}} \\\\n\", \"y_2\": [1, {\"b\": 2, \"a\": 1.0}]}");

	(void)state;
	/* "{{}" is not "{{" followed by a name, and {not} is ordinary text... */
	assert_int_equal(pmbot_capability_render_text(&out, t, strlen(t) - 3, vars, &diags),
		PMBOT_OK);
	assert_string_equal(out.buf, "A {{y_2}} \\n B [1,{\"a\":1.0,\"b\":2}]{{y_2}} \\n {not} ");
	/* ...but a "{{" that starts no placeholder is a template error. */
	pmbot_buf_clear(&out);
	assert_int_equal(pmbot_buf_puts(&out, "kept"), 0);
	assert_int_equal(pmbot_capability_render_text(&out, t, strlen(t), vars, &diags),
		PMBOT_EINVALID);
	assert_string_equal(out.buf, "kept");
	assert_int_equal(diags.count, 1);
	assert_string_equal(diags.items[0].code, "PROMPT_TEMPLATE");
	assert_string_equal(diags.items[0].path, "");
	assert_string_equal(diags.items[0].message,
		"'{{' at byte 29 does not start a placeholder {{name}}");
	pmbot_buf_free(&out);
	pmbot_diag_list_free(&diags);
	json_decref(vars);
}

static void test_capability__render_refuses_missing_unused_and_malformed_placeholders(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf out = PMBOT_BUF_INIT;
	const char *t = "{{a}} {{ b}} {{Bad}} {{a}} {{c}} {{d";
	json_t *vars = load("{\"c\": \"x\", \"extra/1\": \"y\"}"), *arr = load("[1]");

	(void)state;
	assert_int_equal(pmbot_capability_render_text(&out, t, strlen(t), vars, &diags),
		PMBOT_EINVALID);
	assert_int_equal(out.len, 0);
	assert_int_equal(diags.count, 5);
	assert_string_equal(diags.items[0].code, "PROMPT_PLACEHOLDER");
	assert_string_equal(diags.items[0].path, "");
	assert_string_equal(diags.items[0].message,
		"the template needs variable 'a', which is not given");
	assert_string_equal(diags.items[1].code, "PROMPT_TEMPLATE");
	assert_string_equal(diags.items[1].message,
		"'{{' at byte 6 does not start a placeholder {{name}}");
	assert_string_equal(diags.items[2].message,
		"'{{' at byte 13 does not start a placeholder {{name}}");
	/* The second {{a}} is not reported again. */
	assert_string_equal(diags.items[3].message,
		"'{{' at byte 33 does not start a placeholder {{name}}");
	assert_string_equal(diags.items[4].code, "PROMPT_PLACEHOLDER");
	assert_string_equal(diags.items[4].path, "/extra~11");
	assert_string_equal(diags.items[4].message, "variable 'extra/1' is not used by the template");
	pmbot_diag_list_free(&diags);

	assert_int_equal(pmbot_capability_render_text(&out, "x", 1, arr, &diags), PMBOT_EINVALID);
	assert_int_equal(diags.count, 1);
	assert_string_equal(diags.items[0].code, "PROMPT_VARS");
	assert_string_equal(diags.items[0].message, "the prompt variables must be an object");
	pmbot_diag_list_free(&diags);

	assert_int_equal(pmbot_capability_render_text(&out, "no vars", 7, NULL, &diags), PMBOT_OK);
	assert_string_equal(out.buf, "no vars");
	pmbot_buf_free(&out);
	json_decref(vars);
	json_decref(arr);
}

static void test_capability__render_prompt_reserves_the_schema_variable(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf out = PMBOT_BUF_INIT;
	json_t *vars = load("{\"board\": \"b\", \"context\": \"\", \"constraints\": \"\","
		" \"schema\": \"fake\"}");

	(void)state;
	assert_int_equal(pmbot_capability_render_prompt(&out, cap("board_strategy_review"), vars,
		&diags), PMBOT_EINVALID);
	assert_int_equal(out.len, 0);
	assert_int_equal(diags.count, 1);
	assert_string_equal(diags.items[0].code, "PROMPT_PLACEHOLDER");
	assert_string_equal(diags.items[0].path, "/schema");
	pmbot_diag_list_free(&diags);
	json_object_del(vars, "schema");
	json_object_del(vars, "board");
	assert_int_equal(pmbot_capability_render_prompt(&out, cap("board_strategy_review"), vars,
		&diags), PMBOT_EINVALID);
	assert_int_equal(diags.count, 1);
	assert_string_equal(diags.items[0].message,
		"the template needs variable 'board', which is not given");
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&out);
	json_decref(vars);
}

static void test_capability__missing_draft_gives_the_specs_error_payload_byte_for_byte(void **state)
{
	/* The example of spec 003, "Error response contract", as printed there. */
	static const char spec[] =
		"{\n"
		"  \"error\": \"capability_output_validation_failed:report_ir_draft\",\n"
		"  \"capability_id\": \"report_ir_draft\",\n"
		"  \"validation\": {\n"
		"    \"errors\": [\n"
		"      {\n"
		"        \"path\": \"$.draft\",\n"
		"        \"code\": \"SCHEMA_REQUIRED\",\n"
		"        \"message\": \"'draft' is a required property\"\n"
		"      }\n"
		"    ],\n"
		"    \"warnings\": []\n"
		"  }\n"
		"}\n";
	char *got, *want = canon_take(load(spec));
	int rc;

	(void)state;
	got = run("report_ir_draft", "{}", &rc);
	assert_int_equal(rc, PMBOT_EINVALID);
	assert_string_equal(got, want);
	assert_string_equal(got,
		"{\"capability_id\":\"report_ir_draft\","
		"\"error\":\"capability_output_validation_failed:report_ir_draft\","
		"\"validation\":{\"errors\":[{\"code\":\"SCHEMA_REQUIRED\","
		"\"message\":\"'draft' is a required property\",\"path\":\"$.draft\"}],"
		"\"warnings\":[]}}");
	free(got);
	free(want);
}

static void want_parse_failure(const char *text, size_t len, const char *code, const char *message)
{
	json_t *result = NULL, *want;
	char *got, *expected;

	assert_int_equal(pmbot_capability_run_output(&result, cap("issue_replanner"), text, len),
		PMBOT_EINVALID);
	got = canon_take(result);
	want = json_pack("{s:s, s:s, s:{s:[{s:s, s:s, s:s}], s:[]}}",
		"error", "capability_output_validation_failed:issue_replanner",
		"capability_id", "issue_replanner", "validation", "errors", "path", "$",
		"code", code, "message", message, "warnings");
	expected = canon_take(want);
	assert_string_equal(got, expected);
	free(got);
	free(expected);
}

static void test_capability__output_must_be_one_json_object_and_nothing_else(void **state)
{
	static const char fenced[] = "```json\n{\"summary\": \"x\", \"changesets\": []}\n```";
	static const char prose[] = "{\"summary\": \"x\", \"changesets\": []} Hope this helps!";
	static const char dup[] = "{\"summary\": \"a\", \"changesets\": [], \"summary\": \"b\"}";
	char *big;

	(void)state;
	want_parse_failure(fenced, strlen(fenced), "JSON_PARSE",
		"line 1, column 1: invalid token near '`'");
	want_parse_failure(prose, strlen(prose), "JSON_PARSE",
		"line 1, column 39: end of file expected near 'Hope'");
	want_parse_failure("", 0, "JSON_PARSE", "line 1, column 0: unexpected token near end of file");
	want_parse_failure(NULL, 0, "JSON_PARSE", "line 1, column 0: unexpected token near end of file");
	want_parse_failure("{\"a\": \"\xff\"}", 10, "JSON_PARSE",
		"line 1, column 7: unable to decode byte 0xff near '\"'");
	/* jansson takes a NUL for the end of the input, and then finds more. */
	want_parse_failure("{\"a\": 1}\0", 9, "JSON_PARSE",
		"line 1, column 9: end of file expected near end of file");
	want_parse_failure("[{\"summary\": \"x\"}]", 18, "JSON_NOT_OBJECT",
		"expected a JSON object, got an array");
	want_parse_failure("\"{}\"", 4, "JSON_NOT_OBJECT", "expected a JSON object, got a string");
	want_parse_failure("42", 2, "JSON_NOT_OBJECT", "expected a JSON object, got a number");
	want_parse_failure("null", 4, "JSON_NOT_OBJECT", "expected a JSON object, got null");
	want_parse_failure(dup, strlen(dup), "JSON_DUPLICATE_KEY",
		"line 1, column 44: duplicate object key near '\"summary\"'");
	big = malloc(PMBOT_CAPABILITY_MAX_OUTPUT + 1);
	assert_non_null(big);
	memset(big, ' ', PMBOT_CAPABILITY_MAX_OUTPUT + 1);
	big[0] = '{';
	big[PMBOT_CAPABILITY_MAX_OUTPUT] = '}';
	want_parse_failure(big, PMBOT_CAPABILITY_MAX_OUTPUT + 1, "JSON_TOO_LARGE",
		"model output is 4194305 bytes, more than the 4194304 allowed");
	free(big);
}

static const char draft_ok[] =
	"{\"draft\": {\"schema_version\": \"report_ir/v1\","
	" \"report\": {\"title\": \"Plan\", \"generated_at\": \"2026-02-22\","
	"  \"scope\": {\"org\": \"acme\", \"repos\": [\"widgets\"]}},"
	" \"features\": [{\"stable_id\": \"feat:a\", \"title\": \"A\", \"goal\": \"g\","
	"  \"x_org\": {\"k\": 1}}],"
	" \"tasks\": [{\"stable_id\": \"task:b\", \"title\": \"B\", \"feature_id\": \"feat:a\"}]},"
	" \"assumptions\": [\"area left out\"], \"open_questions\": []}";

static void test_capability__report_ir_draft_checks_the_reportir_top_level_shape(void **state)
{
	(void)state;
	want_ok("report_ir_draft", draft_ok);
	want_errors("report_ir_draft",
		"{\"draft\": {\"schema_version\": \"report_ir/v2\","
		" \"report\": {\"title\": \"\", \"generated_at\": \"22/02/2026\"},"
		" \"tasks\": [{\"stable_id\": \"task:b\"}, \"task:c\"]}, \"notes\": \"hi\"}",
		"[{\"code\":\"SCHEMA_PATTERN\",\"message\":\"\\\"22/02/2026\\\" does not match "
		"'^[0-9]{4}-[0-9]{2}-[0-9]{2}([Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\\\\\\\.[0-9]+)?)?"
		"([Zz]|[+-][0-9]{2}:[0-9]{2})?)?$'\",\"path\":\"$.draft.report.generated_at\"},"
		"{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'scope' is a required property\","
		"\"path\":\"$.draft.report.scope\"},"
		"{\"code\":\"SCHEMA_MIN_LENGTH\",\"message\":\"\\\"\\\" is too short (minLength 1)\","
		"\"path\":\"$.draft.report.title\"},"
		"{\"code\":\"SCHEMA_CONST\",\"message\":\"\\\"report_ir/v1\\\" was expected\","
		"\"path\":\"$.draft.schema_version\"},"
		"{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'title' is a required property\","
		"\"path\":\"$.draft.tasks[0].title\"},"
		"{\"code\":\"SCHEMA_TYPE\",\"message\":\"\\\"task:c\\\" is not of type 'object'\","
		"\"path\":\"$.draft.tasks[1]\"},"
		"{\"code\":\"SCHEMA_ADDITIONAL\",\"message\":\"Additional properties are not allowed "
		"('notes' was unexpected)\",\"path\":\"$.notes\"}]");
}

static const char proposal_ok[] =
	"{\"summary\": \"Split the parser work and order it.\", \"risks\": [\"churn\"],"
	" \"changesets\": ["
	"  {\"operation\": \"create_issue\", \"target\": {\"repo\": \"acme/widgets\","
	"   \"stable_id\": \"task:lexer\"}, \"payload\": {\"title\": \"Write the lexer\","
	"   \"body\": \"\", \"labels\": []}, \"requires_approval\": true, \"rationale\": \"r\"},"
	"  {\"operation\": \"set_parent\", \"target\": {\"repo\": \"acme/widgets\","
	"   \"stable_id\": \"task:lexer\"}, \"payload\": {\"parent\": {\"repo\": \"acme/widgets\","
	"   \"number\": 12}, \"replace\": false}, \"requires_approval\": true, \"rationale\": \"r\"},"
	"  {\"operation\": \"add_dependency\", \"target\": {\"repo\": \"acme/widgets\", \"number\": 14},"
	"   \"payload\": {\"blocker\": {\"repo\": \"acme/widgets\", \"stable_id\": \"task:lexer\"}},"
	"   \"requires_approval\": true, \"rationale\": \"r\"},"
	"  {\"operation\": \"remove_labels\", \"target\": {\"repo\": \"acme/widgets\", \"number\": 14},"
	"   \"payload\": {\"labels\": [\"stale\"]}, \"requires_approval\": true, \"rationale\": \"r\"},"
	"  {\"operation\": \"add_to_project\", \"target\": {\"repo\": \"acme/widgets\", \"number\": 14},"
	"   \"payload\": {\"project\": \"acme/3\"}, \"requires_approval\": true, \"rationale\": \"r\"},"
	"  {\"operation\": \"set_project_field\", \"target\": {\"repo\": \"acme/widgets\","
	"   \"number\": 14}, \"payload\": {\"field\": \"Priority\", \"value\": \"P1\"},"
	"   \"requires_approval\": true, \"rationale\": \"r\"},"
	"  {\"operation\": \"update_issue_title\", \"target\": {\"repo\": \"acme/widgets\","
	"   \"number\": 14}, \"payload\": {\"title\": \"Parse\"}, \"requires_approval\": true,"
	"   \"rationale\": \"r\"}]}";

static void test_capability__proposal_changesets_have_bundle_shapes(void **state)
{
	(void)state;
	want_ok("issue_adjustment_proposal", proposal_ok);
	want_ok("issue_replanner", "{\"summary\": \"Nothing to change.\", \"changesets\": []}");
	want_errors("issue_adjustment_proposal",
		"{\"summary\": \"s\", \"changesets\": ["
		" {\"operation\": \"close_issue\", \"target\": {\"repo\": \"acme/w\", \"number\": 1},"
		"  \"payload\": {}, \"requires_approval\": false, \"rationale\": \"r\"},"
		" {\"operation\": \"create_issue\", \"target\": {\"repo\": \"acme/w\", \"number\": 2},"
		"  \"payload\": {\"title\": \"t\", \"body\": \"b\", \"labels\": [\"x\", \"x\"],"
		"  \"assignee\": \"me\"}, \"requires_approval\": true, \"rationale\": \"r\"},"
		" {\"operation\": \"add_labels\", \"target\": {\"repo\": \"acme/w\", \"stable_id\": \"a\","
		"  \"number\": 3}, \"payload\": {\"labels\": []}, \"requires_approval\": true,"
		"  \"rationale\": \"r\"},"
		" {\"operation\": \"set_parent\", \"target\": {\"repo\": \"no-slash\"},"
		"  \"payload\": {\"parent\": {\"repo\": \"acme/w\"}}, \"requires_approval\": true,"
		"  \"rationale\": \"\"}]}",
		"[{\"code\":\"SCHEMA_ENUM\",\"message\":\"\\\"close_issue\\\" is not one of "
		"[\\\"create_issue\\\",\\\"update_issue_title\\\",\\\"update_issue_body\\\",\\\"ad..."
		"\",\"path\":\"$.changesets[0].operation\"},"
		"{\"code\":\"SCHEMA_CONST\",\"message\":\"true was expected\","
		"\"path\":\"$.changesets[0].requires_approval\"},"
		"{\"code\":\"SCHEMA_ADDITIONAL\",\"message\":\"Additional properties are not allowed "
		"('assignee' was unexpected)\",\"path\":\"$.changesets[1].payload.assignee\"},"
		"{\"code\":\"SCHEMA_UNIQUE\",\"message\":\"[\\\"x\\\",\\\"x\\\"] has non-unique elements\","
		"\"path\":\"$.changesets[1].payload.labels\"},"
		"{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'stable_id' is a required property\","
		"\"path\":\"$.changesets[1].target.stable_id\"},"
		"{\"code\":\"SCHEMA_MIN_ITEMS\",\"message\":\"[] is too short (minItems 1)\","
		"\"path\":\"$.changesets[2].payload.labels\"},"
		"{\"code\":\"SCHEMA_FALSE\",\"message\":\"False schema does not allow 3\","
		"\"path\":\"$.changesets[2].target.number\"},"
		"{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'number' is a required property\","
		"\"path\":\"$.changesets[3].payload.parent.number\"},"
		"{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'replace' is a required property\","
		"\"path\":\"$.changesets[3].payload.replace\"},"
		"{\"code\":\"SCHEMA_MIN_LENGTH\",\"message\":\"\\\"\\\" is too short (minLength 1)\","
		"\"path\":\"$.changesets[3].rationale\"},"
		"{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'number' is a required property\","
		"\"path\":\"$.changesets[3].target.number\"},"
		"{\"code\":\"SCHEMA_PATTERN\",\"message\":\"\\\"no-slash\\\" does not match "
		"'^[A-Za-z0-9-]+/[A-Za-z0-9_.-]+$'\",\"path\":\"$.changesets[3].target.repo\"}]");
}

static void test_capability__proposal_may_not_repeat_a_changeset(void **state)
{
	static const char cs[] =
		"{\"operation\": \"add_labels\", \"target\": {\"repo\": \"acme/w\", \"number\": 3},"
		" \"payload\": {\"labels\": [\"bug\"]}, \"requires_approval\": true, \"rationale\": \"%s\"}";
	char text[1024], a[300], b[300];

	(void)state;
	/* Rationale differs, identity (operation, target, payload) does not. */
	snprintf(a, sizeof(a), cs, "one");
	snprintf(b, sizeof(b), cs, "two");
	snprintf(text, sizeof(text), "{\"summary\": \"s\", \"changesets\": [%s, %s, %s]}", a, b, a);
	want_errors("issue_replanner", text,
		"[{\"code\":\"SCHEMA_CHANGESET\",\"message\":\"changeset repeats changesets[0]: the "
		"same operation, target and payload\",\"path\":\"$.changesets[1]\"},"
		"{\"code\":\"SCHEMA_CHANGESET\",\"message\":\"changeset repeats changesets[0]: the "
		"same operation, target and payload\",\"path\":\"$.changesets[2]\"}]");
	/* Read-only advice has no bundle rules. */
	want_ok("board_strategy_review", "{\"summary\": \"ok\", \"findings\": [],"
		" \"recommendations\": []}");
}

static void test_capability__bundle_rules_hold_without_the_schema(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *p = load("{\"changesets\": [7, {\"operation\": \"close_issue\"},"
		" {\"operation\": \"add_labels\", \"requires_approval\": true},"
		" {\"operation\": \"add_labels\", \"requires_approval\": true}]}");
	json_t *none = load("{\"summary\": \"no list\"}");

	(void)state;
	assert_int_equal(pmbot_capability_check_proposal(&diags, p), PMBOT_EINVALID);
	assert_int_equal(diags.count, 4);
	assert_string_equal(diags.items[0].path, "/changesets/0");
	assert_string_equal(diags.items[0].message, "a changeset must be an object");
	assert_string_equal(diags.items[1].path, "/changesets/1/operation");
	assert_string_equal(diags.items[1].message, "operation is not one pm-bot can plan");
	assert_string_equal(diags.items[2].path, "/changesets/1/requires_approval");
	assert_string_equal(diags.items[2].message,
		"a proposed changeset must have requires_approval true");
	assert_string_equal(diags.items[3].path, "/changesets/3");
	assert_string_equal(diags.items[3].code, "SCHEMA_CHANGESET");
	assert_string_equal(diags.items[3].message,
		"changeset repeats changesets[2]: the same operation, target and payload");
	pmbot_diag_list_free(&diags);
	assert_int_equal(pmbot_capability_check_proposal(&diags, none), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	json_decref(p);
	json_decref(none);
}

static void test_capability__board_review_is_checked_against_its_schema(void **state)
{
	(void)state;
	want_ok("board_strategy_review",
		"{\"summary\": \"Two epics have no owner.\","
		" \"findings\": [{\"kind\": \"gap\", \"severity\": \"high\", \"title\": \"No owner\","
		"  \"detail\": \"epic:a and epic:b have no owners\", \"refs\": [\"epic:a\", \"acme/w#4\"]}],"
		" \"recommendations\": [{\"title\": \"Assign owners\", \"rationale\": \"Unowned work stalls\","
		"  \"priority\": \"P1\", \"refs\": [\"epic:a\"]}]}");
	want_errors("board_strategy_review",
		"{\"summary\": \"s\", \"findings\": [{\"kind\": \"gap\", \"severity\": \"urgent\","
		" \"title\": \"t\", \"detail\": \"d\", \"refs\": [\"a\", \"a\"]}],"
		" \"recommendations\": [{\"title\": \"t\", \"rationale\": \"r\"}]}",
		"[{\"code\":\"SCHEMA_UNIQUE\",\"message\":\"[\\\"a\\\",\\\"a\\\"] has non-unique elements\","
		"\"path\":\"$.findings[0].refs\"},"
		"{\"code\":\"SCHEMA_ENUM\",\"message\":\"\\\"urgent\\\" is not one of "
		"[\\\"low\\\",\\\"medium\\\",\\\"high\\\"]\",\"path\":\"$.findings[0].severity\"},"
		"{\"code\":\"SCHEMA_REQUIRED\",\"message\":\"'priority' is a required property\","
		"\"path\":\"$.recommendations[0].priority\"}]");
}

static void test_capability__payload_bytes_do_not_depend_on_member_order(void **state)
{
	char *a = run_errors("issue_replanner",
		"{\"changesets\": [{\"target\": {\"number\": 0, \"repo\": \"a/b\"}, \"operation\": \"add_labels\"}],"
		" \"extra\": 1}");
	char *b = run_errors("issue_replanner",
		"{\"extra\": 1, \"changesets\": [{\"operation\": \"add_labels\", \"target\": {\"repo\": \"a/b\","
		" \"number\": 0}}]}");

	(void)state;
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "\"path\":\"$.changesets[0].target.number\""));
	assert_non_null(strstr(a, "\"path\":\"$.summary\""));
	free(a);
	free(b);
}

static void want_policy(const char *id, const char *options, const char *effective,
	const char *denied)
{
	pmbot_buf code = PMBOT_BUF_INIT;
	json_t *opts = options ? load(options) : NULL, *eff = NULL;
	char *before = opts ? canon_take(json_incref(opts)) : NULL, *after;
	int rc = pmbot_capability_policy_check(&eff, &code, cap(id), opts);

	if (denied) {
		assert_int_equal(rc, PMBOT_EINVALID);
		assert_null(eff);
		assert_string_equal(code.buf, denied);
	} else {
		char *got;

		assert_int_equal(rc, PMBOT_OK);
		assert_int_equal(code.len, 0);
		got = canon_take(eff);
		assert_string_equal(got, effective);
		free(got);
	}
	/* The caller's options are never changed. */
	if (opts) {
		after = canon_take(json_incref(opts));
		assert_string_equal(after, before);
		free(after);
	}
	free(before);
	json_decref(opts);
	pmbot_buf_free(&code);
}

static void test_capability__mutation_proposals_always_need_a_bundle_and_a_human(void **state)
{
	(void)state;
	want_policy("issue_adjustment_proposal", NULL,
		"{\"allow_direct_github_writes\":false,\"proposal_output_changeset_bundle\":true,"
		"\"require_human_approval\":true}", NULL);
	want_policy("issue_replanner", "{\"temperature\": 0.2, \"require_human_approval\": true}",
		"{\"allow_direct_github_writes\":false,\"proposal_output_changeset_bundle\":true,"
		"\"require_human_approval\":true,\"temperature\":0.2}", NULL);
	want_policy("issue_adjustment_proposal", "{\"proposal_output_changeset_bundle\": false}",
		NULL, "capability_policy_denied:issue_adjustment_proposal:proposal_output_changeset_bundle");
	want_policy("issue_replanner", "{\"require_human_approval\": false}",
		NULL, "capability_policy_denied:issue_replanner:require_human_approval");
	want_policy("issue_replanner", "{\"require_human_approval\": \"true\"}",
		NULL, "capability_policy_denied:issue_replanner:require_human_approval");
	want_policy("issue_replanner", "{\"approval_level\": \"low\"}",
		NULL, "capability_policy_denied:issue_replanner:approval_level");
	want_policy("issue_replanner", "{\"approval_level\": \"high\"}",
		"{\"allow_direct_github_writes\":false,\"approval_level\":\"high\","
		"\"proposal_output_changeset_bundle\":true,\"require_human_approval\":true}", NULL);
}

static void test_capability__no_capability_may_write_to_github_directly(void **state)
{
	(void)state;
	want_policy("report_ir_draft", "{\"allow_direct_github_writes\": true}",
		NULL, "capability_policy_denied:report_ir_draft:allow_direct_github_writes");
	want_policy("board_strategy_review", "{\"allow_direct_github_writes\": \"no\"}",
		NULL, "capability_policy_denied:board_strategy_review:allow_direct_github_writes");
	/* Checked first: the earliest rule broken names the denial. */
	want_policy("issue_replanner",
		"{\"require_human_approval\": false, \"allow_direct_github_writes\": 1}",
		NULL, "capability_policy_denied:issue_replanner:allow_direct_github_writes");
	want_policy("report_ir_draft", "[]", NULL,
		"capability_policy_denied:report_ir_draft:request_options");
}

static void test_capability__read_only_advice_runs_with_low_approval(void **state)
{
	(void)state;
	want_policy("board_strategy_review", NULL,
		"{\"allow_direct_github_writes\":false,\"approval_level\":\"low\"}", NULL);
	want_policy("report_ir_draft", "{\"allow_direct_github_writes\": false, \"approval_level\": \"medium\"}",
		"{\"allow_direct_github_writes\":false,\"approval_level\":\"medium\"}", NULL);
	want_policy("report_ir_draft", "{\"approval_level\": 2}", NULL,
		"capability_policy_denied:report_ir_draft:approval_level");
}

static void test_capability__audit_fields_are_the_specs_seven(void **state)
{
	char hash[PMBOT_SHA256_HEX_SIZE], bad[PMBOT_SHA256_HEX_SIZE];
	json_t *input = load("{\"report\": \"r\"}"), *out = NULL;
	char *got, want[512];

	(void)state;
	assert_int_equal(pmbot_sha256_json(hash, input), 0);
	assert_int_equal(pmbot_capability_audit_fields(&out, cap("issue_replanner"), "llama3.1:8b",
		"openai", hash, "run-0001"), PMBOT_OK);
	got = canon_take(out);
	snprintf(want, sizeof(want),
		"{\"capability_id\":\"issue_replanner\",\"input_hash\":\"%s\",\"model\":\"llama3.1:8b\","
		"\"prompt_version\":\"issue_adjustment_proposal.v1\",\"provider\":\"openai\","
		"\"run_id\":\"run-0001\",\"schema_version\":\"issue_adjustment_proposal/v1\"}", hash);
	assert_string_equal(got, want);
	free(got);

	memcpy(bad, hash, sizeof(bad));
	bad[3] = 'A';
	assert_int_equal(pmbot_capability_audit_fields(&out, cap("report_ir_draft"), "m", "p", bad,
		"r"), PMBOT_EINVALID);
	assert_null(out);
	assert_int_equal(pmbot_capability_audit_fields(&out, cap("report_ir_draft"), "m", "p",
		"abc", "r"), PMBOT_EINVALID);
	assert_int_equal(pmbot_capability_audit_fields(&out, cap("report_ir_draft"), "", "p", hash,
		"r"), PMBOT_EINVALID);
	assert_int_equal(pmbot_capability_audit_fields(&out, cap("report_ir_draft"), "m", "p", hash,
		"\xff"), PMBOT_EINVALID);
	assert_int_equal(pmbot_capability_audit_fields(&out, cap("report_ir_draft"), "m", NULL, hash,
		"r"), PMBOT_EINVALID);
	json_decref(input);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capability__registry_holds_the_four_contracts_with_their_classes),
		cmocka_unit_test(test_capability__prompts_and_schemas_are_compiled_in_byte_for_byte),
		cmocka_unit_test(test_capability__every_schema_is_draft07_within_the_validator_subset),
		cmocka_unit_test(test_capability__proposal_operations_are_exactly_the_planners),
		cmocka_unit_test(test_capability__variables_list_what_each_template_needs),
		cmocka_unit_test(test_capability__every_prompt_renders_its_variables_and_the_schema),
		cmocka_unit_test(test_capability__render_inserts_values_verbatim_without_expanding_them),
		cmocka_unit_test(test_capability__render_refuses_missing_unused_and_malformed_placeholders),
		cmocka_unit_test(test_capability__render_prompt_reserves_the_schema_variable),
		cmocka_unit_test(test_capability__missing_draft_gives_the_specs_error_payload_byte_for_byte),
		cmocka_unit_test(test_capability__output_must_be_one_json_object_and_nothing_else),
		cmocka_unit_test(test_capability__report_ir_draft_checks_the_reportir_top_level_shape),
		cmocka_unit_test(test_capability__proposal_changesets_have_bundle_shapes),
		cmocka_unit_test(test_capability__proposal_may_not_repeat_a_changeset),
		cmocka_unit_test(test_capability__bundle_rules_hold_without_the_schema),
		cmocka_unit_test(test_capability__board_review_is_checked_against_its_schema),
		cmocka_unit_test(test_capability__payload_bytes_do_not_depend_on_member_order),
		cmocka_unit_test(test_capability__mutation_proposals_always_need_a_bundle_and_a_human),
		cmocka_unit_test(test_capability__no_capability_may_write_to_github_directly),
		cmocka_unit_test(test_capability__read_only_advice_runs_with_low_approval),
		cmocka_unit_test(test_capability__audit_fields_are_the_specs_seven),
	};

	return cmocka_run_group_tests_name("capability", tests, NULL, NULL);
}
