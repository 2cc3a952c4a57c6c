#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/diag.h"
#include "pmbot/json.h"
#include "pmbot/llm.h"
#include "pmbot/banned.h"

#define FIX "tests/fixtures/promptir/"

/* ---- helpers ------------------------------------------------------------ */

static json_t *load_fixture(const char *name)
{
	char path[256];
	json_error_t e;
	json_t *j;

	snprintf(path, sizeof(path), FIX "%s", name);
	j = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
	if (!j)
		fail_msg("%s:%d: %s", path, e.line, e.text);
	return j;
}

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &e);

	if (!j)
		fail_msg("bad test JSON: %s", e.text);
	return j;
}

static void assert_json_is(const json_t *got, const char *want_text)
{
	json_t *want = parse(want_text);
	pmbot_buf a = PMBOT_BUF_INIT, b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_json_canonical(&a, got), 0);
	assert_int_equal(pmbot_json_canonical(&b, want), 0);
	assert_string_equal(a.buf, b.buf);
	pmbot_buf_free(&a);
	pmbot_buf_free(&b);
	json_decref(want);
}

static const pmbot_diag *expect_diag(const pmbot_diag_list *diags, const char *code,
	const char *path, const char *message_part)
{
	size_t i;

	for (i = 0; i < diags->count; i++) {
		const pmbot_diag *d = &diags->items[i];

		if (strcmp(d->code, code) || strcmp(d->path, path))
			continue;
		if (message_part && !strstr(d->message, message_part))
			continue;
		return d;
	}
	for (i = 0; i < diags->count; i++)
		print_message("  have %s %s: %s\n", diags->items[i].code, diags->items[i].path,
			diags->items[i].message);
	fail_msg("no %s at '%s' saying '%s'", code, path, message_part ? message_part : "");
	return NULL;
}

static pmbot_governance *gov_with(const json_t *custom)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_governance *gov = NULL;

	assert_int_equal(pmbot_governance_new(&gov, custom, NULL, &diags), PMBOT_OK);
	assert_non_null(gov);
	assert_int_equal(diags.count, 0);
	return gov;
}

static pmbot_promptir *ir_of(const char *intent, const char *const *refs,
	const char *const *constraints)
{
	pmbot_promptir *ir = NULL;

	assert_int_equal(pmbot_promptir_new(&ir, "implementer", intent,
		PMBOT_PHASE_IMPLEMENTATION, 3000, "0123abcd", "2026-02-18T12:00:00Z"), PMBOT_OK);
	for (; refs && *refs; refs++)
		assert_int_equal(pmbot_promptir_add_context_ref(ir, *refs), PMBOT_OK);
	for (; constraints && *constraints; constraints++)
		assert_int_equal(pmbot_promptir_add_constraint(ir, *constraints), PMBOT_OK);
	return ir;
}

/* Check `ir` with `gov`; the caller frees the result. */
static pmbot_governance_result check(pmbot_governance *gov, const pmbot_promptir *ir)
{
	pmbot_governance_result r = PMBOT_GOVERNANCE_RESULT_INIT;

	assert_int_equal(pmbot_governance_check(&r, gov, ir), PMBOT_OK);
	assert_non_null(r.violations);
	return r;
}

/* ---- default policies --------------------------------------------------- */

static void test_governance__default_policies_are_the_spec_table(void **state)
{
	pmbot_governance *gov = gov_with(NULL);
	json_t *got = NULL;

	(void)state;
	assert_int_equal(pmbot_governance_policies(&got, gov), PMBOT_OK);
	assert_json_is(got, "["
		"{\"name\": \"protected_paths\", \"type\": \"context_ref\","
		" \"forbidden_patterns\": [\"/sys/\", \"/etc/\", \"C:\\\\Windows\\\\System32\\\\\"],"
		" \"action\": \"deny\"},"
		"{\"name\": \"destructive_actions\", \"type\": \"intent\","
		" \"forbidden_keywords\": [\"delete all\", \"drop database\", \"rm -rf\"],"
		" \"action\": \"flag\"},"
		"{\"name\": \"sensitive_constraints\", \"type\": \"constraint\","
		" \"forbidden_keywords\": [\"ignore policy\", \"bypass\", \"override\"],"
		" \"action\": \"deny\"}]");
	json_decref(got);
	pmbot_governance_free(gov);
}

static void test_governance__clean_ir_is_approved_without_violations(void **state)
{
	static const char *const refs[] = { "file:src/auth/login.py", "diff:main", NULL };
	static const char *const cons[] = { "Must support OAuth 2.0", NULL };
	pmbot_governance *gov = gov_with(NULL);
	pmbot_promptir *ir = ir_of("Design a REST API", refs, cons);
	pmbot_governance_result r = check(gov, ir);

	(void)state;
	assert_true(r.approved);
	assert_int_equal(json_array_size(r.violations), 0);
	pmbot_governance_result_free(&r);
	assert_null(r.violations);
	pmbot_promptir_free(ir);
	pmbot_governance_free(gov);
}

static void test_governance__protected_paths_deny_context_refs(void **state)
{
	static const char *const refs[] = { "file:src/ok.c", "file:/etc/passwd", NULL };
	pmbot_governance *gov = gov_with(NULL);
	pmbot_promptir *ir = ir_of("Read config", refs, NULL);
	pmbot_governance_result r = check(gov, ir);

	(void)state;
	assert_false(r.approved);
	assert_json_is(r.violations, "[{\"policy\": \"protected_paths\","
		" \"type\": \"context_ref\", \"action\": \"deny\", \"matched\": \"/etc/\","
		" \"field\": \"/context_refs/1\", \"message\": \"DENY: protected_paths - Context ref"
		" 'file:/etc/passwd' matches forbidden pattern '/etc/'\"}]");
	pmbot_governance_result_free(&r);
	pmbot_promptir_free(ir);
	pmbot_governance_free(gov);
}

static void test_governance__windows_system_path_is_denied(void **state)
{
	static const char *const refs[] = { "C:\\Windows\\System32\\drivers\\etc\\hosts", NULL };
	pmbot_governance *gov = gov_with(NULL);
	pmbot_promptir *ir = ir_of("Read hosts", refs, NULL);
	pmbot_governance_result r = check(gov, ir);

	(void)state;
	assert_false(r.approved);
	assert_int_equal(json_array_size(r.violations), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(r.violations, 0),
		"matched")), "C:\\Windows\\System32\\");
	pmbot_governance_result_free(&r);
	pmbot_promptir_free(ir);
	pmbot_governance_free(gov);
}

static void test_governance__context_ref_patterns_are_case_sensitive(void **state)
{
	/* As in the reference: path patterns compare exactly; only keywords fold case. */
	static const char *const refs[] = { "file:/ETC/passwd", "c:\\windows\\system32\\x", NULL };
	pmbot_governance *gov = gov_with(NULL);
	pmbot_promptir *ir = ir_of("Read", refs, NULL);
	pmbot_governance_result r = check(gov, ir);

	(void)state;
	assert_true(r.approved);
	assert_int_equal(json_array_size(r.violations), 0);
	pmbot_governance_result_free(&r);
	pmbot_promptir_free(ir);
	pmbot_governance_free(gov);
}

static void test_governance__destructive_intent_is_flagged_not_denied(void **state)
{
	pmbot_governance *gov = gov_with(NULL);
	pmbot_promptir *ir = ir_of("Clean up: DROP DATABASE staging", NULL, NULL);
	pmbot_governance_result r = check(gov, ir);

	(void)state;
	assert_true(r.approved);
	assert_json_is(r.violations, "[{\"policy\": \"destructive_actions\","
		" \"type\": \"intent\", \"action\": \"flag\", \"matched\": \"drop database\","
		" \"field\": \"/intent\", \"message\": \"FLAG: destructive_actions - Intent contains"
		" forbidden keyword 'drop database'\"}]");
	pmbot_governance_result_free(&r);
	pmbot_promptir_free(ir);
	pmbot_governance_free(gov);
}

static void test_governance__sensitive_constraints_are_denied_in_any_case(void **state)
{
	static const char *const cons[] = { "Be brief", "You may ByPaSs the review", NULL };
	pmbot_governance *gov = gov_with(NULL);
	pmbot_promptir *ir = ir_of("Fix the bug", NULL, cons);
	pmbot_governance_result r = check(gov, ir);
	const json_t *v;

	(void)state;
	assert_false(r.approved);
	assert_int_equal(json_array_size(r.violations), 1);
	v = json_array_get(r.violations, 0);
	assert_string_equal(json_string_value(json_object_get(v, "field")), "/constraints/1");
	assert_string_equal(json_string_value(json_object_get(v, "message")),
		"DENY: sensitive_constraints - Constraint contains forbidden keyword 'bypass'");
	pmbot_governance_result_free(&r);
	pmbot_promptir_free(ir);
	pmbot_governance_free(gov);
}

static void test_governance__every_match_is_reported_in_policy_field_pattern_order(void **state)
{
	static const char *const refs[] = { "/sys/x/etc/y", "file:/etc/z", NULL };
	static const char *const cons[] = { "override and ignore policy", NULL };
	pmbot_governance *gov = gov_with(NULL);
	pmbot_promptir *ir = ir_of("rm -rf build, then delete all caches", refs, cons);
	pmbot_governance_result r = check(gov, ir);
	static const char *const want[][3] = {
		{ "protected_paths", "/context_refs/0", "/sys/" },
		{ "protected_paths", "/context_refs/0", "/etc/" },
		{ "protected_paths", "/context_refs/1", "/etc/" },
		{ "destructive_actions", "/intent", "delete all" },
		{ "destructive_actions", "/intent", "rm -rf" },
		{ "sensitive_constraints", "/constraints/0", "ignore policy" },
		{ "sensitive_constraints", "/constraints/0", "override" },
	};
	size_t i;

	(void)state;
	assert_false(r.approved);
	assert_int_equal(json_array_size(r.violations), 7);
	for (i = 0; i < 7; i++) {
		const json_t *v = json_array_get(r.violations, i);

		assert_string_equal(json_string_value(json_object_get(v, "policy")), want[i][0]);
		assert_string_equal(json_string_value(json_object_get(v, "field")), want[i][1]);
		assert_string_equal(json_string_value(json_object_get(v, "matched")), want[i][2]);
	}
	pmbot_governance_result_free(&r);
	pmbot_promptir_free(ir);
	pmbot_governance_free(gov);
}

/* ---- custom policies ---------------------------------------------------- */

static void test_governance__custom_policies_from_the_spec_are_added_to_the_defaults(void **state)
{
	static const char *const refs[] = { "s3://production/users.csv", NULL };
	json_t *custom = load_fixture("custom_policies.json"), *list = NULL;
	pmbot_governance *gov = gov_with(custom);
	pmbot_promptir *ir = ir_of("Use Unlimited Tokens for this", refs, NULL);
	pmbot_promptir *etc = ir_of("Read", (const char *const[]){ "/etc/x", NULL }, NULL);
	pmbot_governance_result r = check(gov, ir), r2 = check(gov, etc);

	(void)state;
	assert_int_equal(pmbot_governance_policies(&list, gov), PMBOT_OK);
	assert_int_equal(json_array_size(list), 5);
	assert_true(pmbot_json_equal(json_array_get(list, 3), json_array_get(custom, 0)));
	assert_true(pmbot_json_equal(json_array_get(list, 4), json_array_get(custom, 1)));
	assert_false(r.approved);
	/* Policy order: budget_limit comes before internal_only in the list. */
	assert_json_is(r.violations, "["
		"{\"policy\": \"budget_limit\", \"type\": \"intent\", \"action\": \"deny\","
		" \"matched\": \"unlimited tokens\", \"field\": \"/intent\", \"message\":"
		" \"DENY: budget_limit - Intent contains forbidden keyword 'unlimited tokens'\"},"
		"{\"policy\": \"internal_only\", \"type\": \"context_ref\", \"action\": \"deny\","
		" \"matched\": \"s3://production/\", \"field\": \"/context_refs/0\", \"message\":"
		" \"DENY: internal_only - Context ref 's3://production/users.csv' matches forbidden"
		" pattern 's3://production/'\"}]");
	/* The defaults still apply next to custom policies. */
	assert_false(r2.approved);
	pmbot_governance_result_free(&r);
	pmbot_governance_result_free(&r2);
	json_decref(list);
	json_decref(custom);
	pmbot_promptir_free(ir);
	pmbot_promptir_free(etc);
	pmbot_governance_free(gov);
}

static void test_governance__custom_policy_errors_carry_json_pointers(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_governance *gov = (pmbot_governance *)1;
	json_t *bad = load_fixture("bad_policies.json");
	size_t i;

	(void)state;
	assert_int_equal(pmbot_governance_new(&gov, bad, "/llm/policies", &diags), PMBOT_EINVALID);
	assert_null(gov);
	expect_diag(&diags, "GOVERNANCE_POLICY", "/llm/policies/0", "must be an object");
	expect_diag(&diags, "GOVERNANCE_POLICY", "/llm/policies/1/name", "non-empty string");
	expect_diag(&diags, "GOVERNANCE_POLICY", "/llm/policies/1/type",
		"\"context_ref\", \"intent\" or \"constraint\"");
	expect_diag(&diags, "GOVERNANCE_POLICY", "/llm/policies/2/action", "\"deny\" or \"flag\"");
	expect_diag(&diags, "GOVERNANCE_POLICY", "/llm/policies/2/forbidden_keywords",
		"a context_ref policy takes 'forbidden_patterns', not 'forbidden_keywords'");
	expect_diag(&diags, "GOVERNANCE_POLICY", "/llm/policies/2",
		"a context_ref policy needs 'forbidden_patterns'");
	expect_diag(&diags, "GOVERNANCE_POLICY", "/llm/policies/3/severity",
		"unknown policy key 'severity'");
	expect_diag(&diags, "GOVERNANCE_POLICY", "/llm/policies/3/forbidden_keywords/1",
		"would match everything");
	expect_diag(&diags, "GOVERNANCE_POLICY", "/llm/policies/3/forbidden_keywords/2",
		"must be a string");
	expect_diag(&diags, "GOVERNANCE_POLICY", "/llm/policies/4/name",
		"'protected_paths' is already used");
	expect_diag(&diags, "GOVERNANCE_POLICY", "/llm/policies/5", "has no 'name'");
	expect_diag(&diags, "GOVERNANCE_POLICY", "/llm/policies/5", "has no 'action'");
	expect_diag(&diags, "GOVERNANCE_POLICY", "/llm/policies/5/forbidden_keywords",
		"non-empty array of strings");
	assert_int_equal(diags.count, 13);
	for (i = 0; i < diags.count; i++)
		assert_int_equal(diags.items[i].severity, PMBOT_SEV_ERROR);
	pmbot_diag_list_free(&diags);
	json_decref(bad);
}

static void test_governance__custom_policies_must_be_an_array(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_governance *gov = NULL;
	json_t *obj = parse("{\"name\": \"x\"}"), *empty = json_array();

	(void)state;
	assert_int_equal(pmbot_governance_new(&gov, obj, NULL, &diags), PMBOT_EINVALID);
	expect_diag(&diags, "GOVERNANCE_POLICY", "", "must be an array");
	assert_int_equal(diags.count, 1);
	pmbot_diag_list_free(&diags);
	/* An empty list is no custom policy at all: the defaults alone. */
	assert_int_equal(pmbot_governance_new(&gov, empty, NULL, &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	pmbot_governance_free(gov);
	json_decref(obj);
	json_decref(empty);
}

static void test_governance__custom_names_must_be_unique_and_messages_escaped(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_governance *gov = NULL;
	json_t *twice = parse("["
		"{\"name\": \"mine\", \"type\": \"intent\", \"forbidden_keywords\": [\"a\"],"
		" \"action\": \"flag\"},"
		"{\"name\": \"mine\", \"type\": \"intent\", \"forbidden_keywords\": [\"b\"],"
		" \"action\": \"flag\"},"
		"{\"name\": \"x\", \"type\": \"intent\", \"forbidden_keywords\": [\"b\"],"
		" \"action\": \"flag\", \"bad\\nkey\": 1}]");

	(void)state;
	assert_int_equal(pmbot_governance_new(&gov, twice, "/p", &diags), PMBOT_EINVALID);
	expect_diag(&diags, "GOVERNANCE_POLICY", "/p/1/name", "'mine' is already used");
	expect_diag(&diags, "GOVERNANCE_POLICY", "/p/2/bad\nkey", "'bad\\x0akey'");
	assert_int_equal(diags.count, 2);
	pmbot_diag_list_free(&diags);
	json_decref(twice);
}

static void test_governance__custom_flag_policy_does_not_block(void **state)
{
	static const char *const cons[] = { "Mention the TODO list", NULL };
	json_t *custom = parse("[{\"name\": \"todo\", \"type\": \"constraint\","
		" \"forbidden_keywords\": [\"todo\"], \"action\": \"flag\"}]");
	pmbot_governance *gov = gov_with(custom);
	pmbot_promptir *ir = ir_of("Write docs", NULL, cons);
	pmbot_governance_result r = check(gov, ir);

	(void)state;
	assert_true(r.approved);
	assert_int_equal(json_array_size(r.violations), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(r.violations, 0),
		"message")), "FLAG: todo - Constraint contains forbidden keyword 'todo'");
	pmbot_governance_result_free(&r);
	pmbot_promptir_free(ir);
	pmbot_governance_free(gov);
	json_decref(custom);
}

/* ---- violations report -------------------------------------------------- */

static void test_governance__report_before_any_check(void **state)
{
	pmbot_governance *gov = gov_with(NULL);
	json_t *rep = NULL;

	(void)state;
	assert_int_equal(pmbot_governance_report(&rep, gov), PMBOT_OK);
	assert_json_is(rep, "{\"total_checks\": 0, \"approved\": 0, \"denied\": 0,"
		" \"approval_rate\": 1.0, \"recent_violations\": []}");
	json_decref(rep);
	pmbot_governance_free(gov);
}

static void test_governance__report_counts_checks_and_keeps_the_last_ten(void **state)
{
	pmbot_governance *gov = gov_with(NULL);
	json_t *rep = NULL, *recent;
	int i;

	(void)state;
	/* 12 checks; checks 2, 5 and 8 are denied. */
	for (i = 0; i < 12; i++) {
		pmbot_promptir *ir;
		pmbot_governance_result r;
		char id[9];

		ir = ir_of(i == 3 ? "rm -rf it" : "Do it", NULL,
			i % 3 == 2 && i < 9 ? (const char *const[]){ "override", NULL } : NULL);
		snprintf(id, sizeof(id), "%08x", (unsigned)i);
		free(ir->ir_id);
		ir->ir_id = strdup(id);
		r = check(gov, ir);
		assert_int_equal(r.approved, !(i % 3 == 2 && i < 9));
		pmbot_governance_result_free(&r);
		pmbot_promptir_free(ir);
	}
	assert_int_equal(pmbot_governance_report(&rep, gov), PMBOT_OK);
	assert_int_equal(json_integer_value(json_object_get(rep, "total_checks")), 12);
	assert_int_equal(json_integer_value(json_object_get(rep, "approved")), 9);
	assert_int_equal(json_integer_value(json_object_get(rep, "denied")), 3);
	assert_true(json_real_value(json_object_get(rep, "approval_rate")) == 0.75);
	recent = json_object_get(rep, "recent_violations");
	assert_int_equal(json_array_size(recent), 10);
	for (i = 0; i < 10; i++) {
		const json_t *e = json_array_get(recent, (size_t)i);
		char id[9];

		snprintf(id, sizeof(id), "%08x", (unsigned)(i + 2));
		assert_string_equal(json_string_value(json_object_get(e, "ir_id")), id);
		assert_string_equal(json_string_value(json_object_get(e, "role")), "implementer");
		assert_int_equal(json_is_true(json_object_get(e, "approved")),
			!((i + 2) % 3 == 2 && i + 2 < 9));
	}
	/* Entry for check 3 (index 1) holds its flag. */
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(
		json_array_get(recent, 1), "violations"), 0), "policy")), "destructive_actions");
	json_decref(rep);
	pmbot_governance_free(gov);
}

/* ---- governance in the pipeline ----------------------------------------- */

typedef struct {
	int calls;
	pmbot_governance *gov;
	json_int_t checks_seen;
} spy;

static int spy_transform(pmbot_promptir *ir, pmbot_buf *description, void *ctx)
{
	spy *s = ctx;
	json_t *rep = NULL;

	(void)ir;
	s->calls++;
	assert_int_equal(pmbot_governance_report(&rep, s->gov), PMBOT_OK);
	s->checks_seen = json_integer_value(json_object_get(rep, "total_checks"));
	json_decref(rep);
	return pmbot_buf_puts(description, "spied") < 0 ? -1 : 1;
}

static void test_governance__denied_ir_is_never_passed_to_plugins(void **state)
{
	static const char *const refs[] = { "file:/etc/shadow", NULL };
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_governance *gov = gov_with(NULL);
	pmbot_promptir *ir = ir_of("Read secrets", refs, NULL), *out = (pmbot_promptir *)1;
	pmbot_governance_result res = PMBOT_GOVERNANCE_RESULT_INIT;
	spy s = { 0, gov, -1 };
	pmbot_promptir_plugin plugin = { "SpyPlugin", "spy", spy_transform, &s };
	pmbot_promptir_pipeline_opts opts = { 1, NULL, &plugin, 1 };
	json_t *records = (json_t *)1;
	char *before = NULL;
	json_t *j = NULL;
	pmbot_buf b = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_promptir_to_json(&j, ir), PMBOT_OK);
	assert_int_equal(pmbot_json_canonical(&b, j), 0);
	before = pmbot_buf_detach(&b, NULL);
	json_decref(j);
	assert_int_equal(pmbot_promptir_pipeline(&out, &records, &res, ir, gov, &opts, &diags),
		PMBOT_EINVALID);
	assert_int_equal(s.calls, 0);
	assert_null(out);
	assert_null(records);
	assert_false(res.approved);
	assert_int_equal(json_array_size(res.violations), 1);
	expect_diag(&diags, "GOVERNANCE_DENIED", "/context_refs/0",
		"policy 'protected_paths' denies this context_ref: it contains '/etc/'");
	assert_int_equal(diags.errors, 1);
	/* The input was left as it was: no digest (threshold 1 would have fired). */
	assert_int_equal(pmbot_promptir_to_json(&j, ir), PMBOT_OK);
	assert_int_equal(pmbot_json_canonical(&b, j), 0);
	assert_string_equal(b.buf, before);
	json_decref(j);
	pmbot_buf_free(&b);
	free(before);
	pmbot_diag_list_free(&diags);
	pmbot_governance_result_free(&res);
	pmbot_promptir_free(ir);
	pmbot_governance_free(gov);
}

static void test_governance__governance_runs_before_any_plugin(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_governance *gov = gov_with(NULL);
	pmbot_promptir *ir = ir_of("delete all temp files", NULL, NULL), *out = NULL;
	spy s = { 0, gov, -1 };
	pmbot_promptir_plugin plugin = { "SpyPlugin", "spy", spy_transform, &s };
	pmbot_promptir_pipeline_opts opts = { 0, NULL, &plugin, 1 };
	json_t *records = NULL;

	(void)state;
	/* Without a result or records wanted, the pipeline still checks first. */
	assert_int_equal(pmbot_promptir_pipeline(&out, NULL, NULL, ir, gov, &opts, &diags),
		PMBOT_OK);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.checks_seen, 1);
	/* A flag lets the IR through, with a warning naming the field. */
	expect_diag(&diags, "GOVERNANCE_FLAG", "/intent",
		"policy 'destructive_actions' flags this intent: it contains 'delete all'");
	assert_int_equal(diags.warnings, 1);
	assert_int_equal(diags.errors, 0);
	pmbot_promptir_free(out);
	assert_int_equal(pmbot_promptir_pipeline(&out, &records, NULL, ir, gov, &opts, &diags),
		PMBOT_OK);
	assert_int_equal(s.checks_seen, 2);
	assert_int_equal(json_array_size(records), 2);
	json_decref(records);
	pmbot_promptir_free(out);
	pmbot_diag_list_free(&diags);
	pmbot_promptir_free(ir);
	pmbot_governance_free(gov);
}

static void test_governance__pipeline_needs_a_checker(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir *ir = ir_of("Do it", NULL, NULL), *out = (pmbot_promptir *)1;
	spy s = { 0, NULL, -1 };
	pmbot_promptir_plugin plugin = { "SpyPlugin", "spy", spy_transform, &s };
	pmbot_promptir_pipeline_opts opts = { 0, NULL, &plugin, 1 };

	(void)state;
	assert_int_equal(pmbot_promptir_pipeline(&out, NULL, NULL, ir, NULL, &opts, &diags),
		PMBOT_ERROR);
	assert_null(out);
	assert_int_equal(s.calls, 0);
	pmbot_promptir_free(ir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_governance__default_policies_are_the_spec_table),
		cmocka_unit_test(test_governance__clean_ir_is_approved_without_violations),
		cmocka_unit_test(test_governance__protected_paths_deny_context_refs),
		cmocka_unit_test(test_governance__windows_system_path_is_denied),
		cmocka_unit_test(test_governance__context_ref_patterns_are_case_sensitive),
		cmocka_unit_test(test_governance__destructive_intent_is_flagged_not_denied),
		cmocka_unit_test(test_governance__sensitive_constraints_are_denied_in_any_case),
		cmocka_unit_test(test_governance__every_match_is_reported_in_policy_field_pattern_order),
		cmocka_unit_test(test_governance__custom_policies_from_the_spec_are_added_to_the_defaults),
		cmocka_unit_test(test_governance__custom_policy_errors_carry_json_pointers),
		cmocka_unit_test(test_governance__custom_policies_must_be_an_array),
		cmocka_unit_test(test_governance__custom_names_must_be_unique_and_messages_escaped),
		cmocka_unit_test(test_governance__custom_flag_policy_does_not_block),
		cmocka_unit_test(test_governance__report_before_any_check),
		cmocka_unit_test(test_governance__report_counts_checks_and_keeps_the_last_ten),
		cmocka_unit_test(test_governance__denied_ir_is_never_passed_to_plugins),
		cmocka_unit_test(test_governance__governance_runs_before_any_plugin),
		cmocka_unit_test(test_governance__pipeline_needs_a_checker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
