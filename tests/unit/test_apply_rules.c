#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/apply.h"
#include "pmbot/json.h"
#include "pmbot/render.h"
#include "pmbot/state.h"
#include "pmbot/banned.h"

/*
 * pmbot_apply_rules_check(): the planner's rules held against any bundle.
 * The state (tests/fixtures/bundles-apply/state-initial.json) has #1, a
 * managed task:old written by github-actions[bot]; #2, written by alice;
 * #3, written by mallory with a forged marker of epic:e1.
 */

#define FIXTURES "tests/fixtures/bundles-apply/"

typedef struct {
	json_t *state_json;
	pmbot_state *state;
	pmbot_config *config;
	pmbot_diag_list diags;
} fixture;

static json_t *load_json(const char *path)
{
	json_error_t e;
	json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &e);

	if (!j)
		fail_msg("%s:%d: %s", path, e.line, e.text);
	return j;
}

static json_t *issues_of(json_t *state_json)
{
	return json_object_get(json_array_get(json_object_get(state_json, "repositories"), 0),
		"issues");
}

static void reparse(fixture *f)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text = PMBOT_BUF_INIT;

	pmbot_state_free(f->state);
	f->state = NULL;
	assert_int_equal(pmbot_json_canonical(&text, f->state_json), 0);
	assert_int_equal(pmbot_state_parse(&f->state, "state.json", text.buf, text.len, &d), PMBOT_OK);
	pmbot_buf_free(&text);
	pmbot_diag_list_free(&d);
}

static int setup(void **state)
{
	static const char yaml[] = "repos: [acme/widgets]\n";
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->state_json = load_json(FIXTURES "state-initial.json");
	reparse(f);
	assert_int_equal(pmbot_config_parse(&f->config, "pm-bot.yml", yaml, strlen(yaml), NULL, &d),
		PMBOT_OK);
	pmbot_diag_list_free(&d);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	json_decref(f->state_json);
	pmbot_state_free(f->state);
	pmbot_config_free(f->config);
	pmbot_diag_list_free(&f->diags);
	free(f);
	return 0;
}

/* The code the rules give one changeset (JSON text), or NULL when it obeys them. */
static const char *verdict(fixture *f, const char *cs_json)
{
	json_error_t e;
	json_t *cs = json_loads(cs_json, 0, &e), *arr;
	const char *code = NULL;
	int rc;

	if (!cs)
		fail_msg("bad test JSON: %s", e.text);
	arr = json_pack("[o]", cs);
	pmbot_diag_list_free(&f->diags);
	rc = pmbot_apply_rules_check(arr, f->state, f->config, &f->diags);
	json_decref(arr);
	if (rc == PMBOT_OK) {
		assert_int_equal(f->diags.count, 0);
		return NULL;
	}
	assert_int_equal(rc, PMBOT_EINVALID);
	assert_int_equal(f->diags.errors, 1);
	assert_string_equal(f->diags.items[0].path, "/changesets/0");
	code = f->diags.items[0].code;
	return code;
}

static void expect_message(const fixture *f, const char *needle)
{
	if (!strstr(f->diags.items[0].message, needle))
		fail_msg("\"%s\" lacks \"%s\"", f->diags.items[0].message, needle);
}

/* pm-bot's rendering of `text` for `sid`, as a JSON string literal's content. */
static char *marked(const char *text, const char *sid)
{
	char rev[PMBOT_SHA256_HEX_SIZE];
	pmbot_buf b = PMBOT_BUF_INIT, q = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_body_rev(rev, text, strlen(text)), 0);
	assert_int_equal(pmbot_buf_printf(&b, "%s\n\n<!-- pm-bot:id=%s rev=%s -->", text, sid, rev), 0);
	assert_int_equal(pmbot_json_quote(&q, b.buf, b.len), 0);
	pmbot_buf_free(&b);
	return pmbot_buf_detach(&q, NULL);
}

static const char *body_cs(fixture *f, const char *op, const char *target, const char *body)
{
	char json[4096];

	if (!strcmp(op, "create_issue"))
		snprintf(json, sizeof(json), "{\"operation\":\"create_issue\",\"target\":%s,"
			"\"payload\":{\"title\":\"T\",\"labels\":[],\"body\":%s}}", target, body);
	else
		snprintf(json, sizeof(json), "{\"operation\":\"%s\",\"target\":%s,"
			"\"payload\":{\"body\":%s}}", op, target, body);
	return verdict(f, json);
}

#define OLD "{\"repo\":\"acme/widgets\",\"stable_id\":\"task:old\"}"
#define NUM1 "{\"repo\":\"acme/widgets\",\"number\":1}"
#define NUM2 "{\"repo\":\"acme/widgets\",\"number\":2}"

static void test_apply_rules__the_planners_own_bundle_obeys_every_rule(void **state)
{
	fixture *f = *state;
	json_t *bundle = load_json(FIXTURES "full.json");

	assert_int_equal(pmbot_apply_rules_check(json_object_get(bundle, "changesets"), f->state,
		f->config, &f->diags), PMBOT_OK);
	assert_int_equal(f->diags.count, 0);
	json_decref(bundle);
}

static void test_apply_rules__only_labels_of_pm_bots_scheme_are_removed(void **state)
{
	fixture *f = *state;

	assert_null(verdict(f, "{\"operation\":\"remove_labels\",\"target\":" OLD
		",\"payload\":{\"labels\":[\"prio:low\",\"PRIO:High\",\"needs-human\",\"type:task\"]}}"));
	assert_string_equal(verdict(f, "{\"operation\":\"remove_labels\",\"target\":" OLD
		",\"payload\":{\"labels\":[\"prio:low\",\"security\"]}}"), "LABEL_NOT_OWNED");
	expect_message(f, "'security' is not a label of pm-bot's scheme");
	/* Adding any label stays possible: plans add a form's default labels. */
	assert_null(verdict(f, "{\"operation\":\"add_labels\",\"target\":" OLD
		",\"payload\":{\"labels\":[\"security\"]}}"));
}

static void test_apply_rules__an_issue_a_person_wrote_is_never_changed(void **state)
{
	fixture *f = *state;
	static const char *const ops[] = {
		"{\"operation\":\"update_issue_title\",\"target\":" NUM2 ",\"payload\":{\"title\":\"x\"}}",
		"{\"operation\":\"update_issue_body\",\"target\":" NUM2 ",\"payload\":{\"body\":\"x\"}}",
		"{\"operation\":\"add_labels\",\"target\":" NUM2 ",\"payload\":{\"labels\":[\"prio:P0\"]}}",
		"{\"operation\":\"remove_labels\",\"target\":" NUM2 ",\"payload\":{\"labels\":[\"prio:P0\"]}}",
		"{\"operation\":\"set_parent\",\"target\":" NUM2 ",\"payload\":{\"parent\":" OLD ",\"replace\":false}}",
		"{\"operation\":\"add_dependency\",\"target\":" NUM2 ",\"payload\":{\"blocker\":" OLD "}}",
		"{\"operation\":\"remove_dependency\",\"target\":" NUM2 ",\"payload\":{\"blocker\":" OLD "}}",
		"{\"operation\":\"set_project_field\",\"target\":" NUM2 ",\"payload\":{\"field\":\"Priority\",\"value\":\"High\"}}",
	};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const char *code = verdict(f, ops[i]);

		if (!code || strcmp(code, "ISSUE_NOT_MANAGED"))
			fail_msg("%s: %s", ops[i], code ? code : "allowed");
		expect_message(f, "written by 'alice', not by pm-bot");
	}
	/* The same by number on the managed issue is fine. */
	assert_null(verdict(f, "{\"operation\":\"update_issue_title\",\"target\":" NUM1
		",\"payload\":{\"title\":\"x\"}}"));
}

static void test_apply_rules__a_forged_marker_or_a_missing_issue_is_not_managed(void **state)
{
	fixture *f = *state;

	/* mallory's #3 carries epic:e1's marker, but mallory is not trusted. */
	assert_string_equal(verdict(f, "{\"operation\":\"update_issue_title\",\"target\":"
		"{\"repo\":\"acme/widgets\",\"number\":3},\"payload\":{\"title\":\"x\"}}"),
		"ISSUE_NOT_MANAGED");
	assert_string_equal(verdict(f, "{\"operation\":\"update_issue_title\",\"target\":"
		"{\"repo\":\"acme/widgets\",\"number\":99},\"payload\":{\"title\":\"x\"}}"),
		"ISSUE_NOT_MANAGED");
	expect_message(f, "does not exist");
}

static void test_apply_rules__a_marker_two_trusted_issues_carry_manages_neither(void **state)
{
	fixture *f = *state;
	json_t *twin = json_deep_copy(json_array_get(issues_of(f->state_json), 0));

	json_object_set_new(twin, "number", json_integer(4));
	json_object_set_new(twin, "database_id", json_integer(1004));
	json_object_set_new(twin, "node_id", json_string("I_4"));
	json_array_append_new(issues_of(f->state_json), twin);
	reparse(f);
	assert_string_equal(verdict(f, "{\"operation\":\"add_labels\",\"target\":" NUM1
		",\"payload\":{\"labels\":[\"prio:P0\"]}}"), "ISSUE_NOT_MANAGED");
	expect_message(f, "another trusted issue also carries");
}

static void test_apply_rules__a_parent_by_number_must_be_managed_a_blocker_need_not(void **state)
{
	fixture *f = *state;

	assert_string_equal(verdict(f, "{\"operation\":\"set_parent\",\"target\":" OLD
		",\"payload\":{\"parent\":" NUM2 ",\"replace\":false}}"), "ISSUE_NOT_MANAGED");
	expect_message(f, "the parent, acme/widgets#2");
	/* An outside blocker is what plans write for a URL dependency. */
	assert_null(verdict(f, "{\"operation\":\"add_dependency\",\"target\":" OLD
		",\"payload\":{\"blocker\":" NUM2 "}}"));
	assert_null(verdict(f, "{\"operation\":\"remove_dependency\",\"target\":" OLD
		",\"payload\":{\"blocker\":" NUM2 "}}"));
}

static void test_apply_rules__a_body_must_carry_exactly_pm_bots_own_marker(void **state)
{
	fixture *f = *state;
	char *own = marked("### Goal\nNew", "task:old");
	char *other = marked("### Goal\nNew", "epic:e1");
	char *stale = marked("### Goal\nSomething else", "task:old");
	char *twice = marked("### Goal\nNew\n<!-- pm-bot:id=task:old rev=x -->", "task:old");
	pmbot_buf swapped = PMBOT_BUF_INIT;

	assert_null(body_cs(f, "update_issue_body", OLD, own));
	assert_null(body_cs(f, "update_issue_body", NUM1, own));
	assert_string_equal(body_cs(f, "update_issue_body", OLD, "\"### Goal\\nNo marker\""),
		"MARKER_INVALID");
	expect_message(f, "has no pm-bot marker");
	assert_string_equal(body_cs(f, "update_issue_body", NUM1, other), "MARKER_INVALID");
	expect_message(f, "carries the marker of 'epic:e1', not of 'task:old'");
	assert_string_equal(body_cs(f, "update_issue_body", OLD, twice), "MARKER_INVALID");
	/* The right id over another text's rev is not pm-bot's rendering. */
	assert_int_equal(pmbot_buf_put(&swapped, own, strlen(own) - 69), 0);
	assert_int_equal(pmbot_buf_puts(&swapped, strstr(stale, "rev=") + 4), 0);
	assert_string_equal(body_cs(f, "update_issue_body", OLD, swapped.buf), "MARKER_INVALID");
	expect_message(f, "rev is not the body's own");
	free(own);
	free(other);
	free(stale);
	free(twice);
	pmbot_buf_free(&swapped);
}

static void test_apply_rules__a_new_issue_carries_its_own_marker_never_another_items(void **state)
{
	fixture *f = *state;
	char *own = marked("### Goal\nNew", "task:new");
	char *forged = marked("### Goal\nOld goal", "task:old");

	assert_null(body_cs(f, "create_issue", "{\"repo\":\"acme/widgets\",\"stable_id\":\"task:new\"}",
		own));
	assert_string_equal(body_cs(f, "create_issue",
		"{\"repo\":\"acme/widgets\",\"stable_id\":\"task:new\"}", forged), "MARKER_INVALID");
	expect_message(f, "carries the marker of 'task:old', not of 'task:new'");
	assert_string_equal(body_cs(f, "create_issue", "{\"repo\":\"acme/widgets\",\"number\":9}",
		own), "MARKER_INVALID");
	expect_message(f, "needs target.stable_id");
	free(own);
	free(forged);
}

static void test_apply_rules__a_body_a_person_edited_is_a_conflict(void **state)
{
	fixture *f = *state;
	json_t *is = json_array_get(issues_of(f->state_json), 0);
	char *own = marked("### Goal\nNew", "task:old");
	pmbot_buf edited = PMBOT_BUF_INIT;
	const char *body = json_string_value(json_object_get(is, "body"));

	assert_int_equal(pmbot_buf_printf(&edited, "%s\nand my notes", body), 0);
	json_object_set_new(is, "body", json_string(edited.buf));
	reparse(f);
	assert_string_equal(body_cs(f, "update_issue_body", OLD, own), "BODY_EDITED");
	expect_message(f, "someone edited the body of acme/widgets#1");
	/* Titles and labels still follow the plan, as the planner does. */
	assert_null(verdict(f, "{\"operation\":\"update_issue_title\",\"target\":" OLD
		",\"payload\":{\"title\":\"x\"}}"));
	/* Their very text under a new marker adopts the edit: nothing of theirs is overwritten. */
	{
		const char *m = strstr(edited.buf, "<!-- pm-bot:id="), *end = strchr(m, '\n');
		pmbot_buf text = PMBOT_BUF_INIT;
		char *adopt;

		assert_int_equal(pmbot_buf_put(&text, edited.buf, (size_t)(m - edited.buf)), 0);
		assert_int_equal(pmbot_buf_puts(&text, end + 1), 0);
		adopt = marked(text.buf, "task:old");
		assert_null(body_cs(f, "update_issue_body", OLD, adopt));
		free(adopt);
		pmbot_buf_free(&text);
	}
	free(own);
	pmbot_buf_free(&edited);
}

static void test_apply_rules__every_violation_is_reported_with_its_changeset(void **state)
{
	fixture *f = *state;
	json_error_t e;
	json_t *cs = json_loads("[{\"operation\":\"add_labels\",\"target\":" OLD
		",\"payload\":{\"labels\":[\"a\"]}},"
		"{\"operation\":\"remove_labels\",\"target\":" OLD ",\"payload\":{\"labels\":[\"bug\"]}},"
		"{\"operation\":\"update_issue_title\",\"target\":" NUM2 ",\"payload\":{\"title\":\"x\"}}]",
		0, &e);

	assert_non_null(cs);
	assert_int_equal(pmbot_apply_rules_check(cs, f->state, f->config, &f->diags), PMBOT_EINVALID);
	assert_int_equal(f->diags.errors, 2);
	assert_string_equal(f->diags.items[0].path, "/changesets/1");
	assert_string_equal(f->diags.items[0].code, "LABEL_NOT_OWNED");
	assert_string_equal(f->diags.items[1].path, "/changesets/2");
	assert_string_equal(f->diags.items[1].code, "ISSUE_NOT_MANAGED");
	json_decref(cs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_apply_rules__the_planners_own_bundle_obeys_every_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_rules__only_labels_of_pm_bots_scheme_are_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_rules__an_issue_a_person_wrote_is_never_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_rules__a_forged_marker_or_a_missing_issue_is_not_managed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_rules__a_marker_two_trusted_issues_carry_manages_neither, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_rules__a_parent_by_number_must_be_managed_a_blocker_need_not, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_rules__a_body_must_carry_exactly_pm_bots_own_marker, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_rules__a_new_issue_carries_its_own_marker_never_another_items, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_rules__a_body_a_person_edited_is_a_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_rules__every_violation_is_reported_with_its_changeset, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
