#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/apply.h"
#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/render.h"
#include "pmbot/state.h"
#include "pmbot/banned.h"

/*
 * pmbot_proposal_bundle(): a model's changesets made into a bundle by
 * pm-bot, over tests/fixtures/bundles-apply/state-initial.json (#1 is the
 * managed task:old, #2 alice's issue, #3 mallory's forged epic:e1).
 */

#define FIXTURES "tests/fixtures/bundles-apply/"

typedef struct {
	pmbot_state *state;
	pmbot_config *config;
	pmbot_diag_list diags;
	json_t *bundle;
} fixture;

static int setup(void **state)
{
	static const char yaml[] = "repos: [acme/widgets]\nproject: {owner: acme, number: 1}\n";
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text = PMBOT_BUF_INIT;
	fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(pmbot_fs_read(&text, FIXTURES "state-initial.json"), 0);
	assert_int_equal(pmbot_state_parse(&f->state, "state.json", text.buf, text.len, &d), PMBOT_OK);
	assert_int_equal(pmbot_config_parse(&f->config, "pm-bot.yml", yaml, strlen(yaml), NULL, &d),
		PMBOT_OK);
	pmbot_buf_free(&text);
	pmbot_diag_list_free(&d);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	pmbot_state_free(f->state);
	pmbot_config_free(f->config);
	pmbot_diag_list_free(&f->diags);
	json_decref(f->bundle);
	free(f);
	return 0;
}

/* Propose the model's changesets (JSON text); the return code of pmbot_proposal_bundle. */
static int propose(fixture *f, const char *changesets)
{
	json_error_t e;
	json_t *cs = json_loads(changesets, 0, &e), *answer, *src;
	int rc;

	if (!cs)
		fail_msg("bad test JSON: %s", e.text);
	answer = json_pack("{s:s, s:o}", "summary", "Only a small change", "changesets", cs);
	src = json_pack("{s:s}", "kind", "proposal");
	json_decref(f->bundle);
	f->bundle = NULL;
	pmbot_diag_list_free(&f->diags);
	rc = pmbot_proposal_bundle(&f->bundle, answer, f->state, f->config, "acme/widgets", src,
		&f->diags);
	json_decref(answer);
	json_decref(src);
	return rc;
}

static const json_t *cs_at(const fixture *f, size_t i)
{
	return json_array_get(json_object_get(f->bundle, "changesets"), i);
}

#define CS(op, target, payload) "{\"operation\":\"" op "\",\"target\":" target \
	",\"payload\":" payload ",\"requires_approval\":true,\"rationale\":\"r\"}"
#define OLD "{\"repo\":\"acme/widgets\",\"stable_id\":\"task:old\"}"
#define NUM1 "{\"repo\":\"acme/widgets\",\"number\":1}"

static void test_proposal__a_body_the_model_writes_gets_pm_bots_own_marker(void **state)
{
	fixture *f = *state;
	char rev[PMBOT_SHA256_HEX_SIZE];
	pmbot_buf want = PMBOT_BUF_INIT;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	assert_int_equal(propose(f, "[" CS("create_issue", "{\"repo\":\"acme/widgets\",\"stable_id\":"
		"\"task:new\"}", "{\"title\":\"New\",\"labels\":[],\"body\":\"### Goal\\nNew\"}") ","
		CS("update_issue_body", NUM1, "{\"body\":\"### Goal\\nBetter\"}") "]"), PMBOT_OK);
	assert_int_equal(pmbot_body_rev(rev, "### Goal\nNew", 12), 0);
	/* The marker first, as in every body pm-bot renders. */
	assert_int_equal(pmbot_buf_printf(&want, "<!-- pm-bot:id=task:new rev=%s -->\n\n### Goal\nNew",
		rev), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(cs_at(f, 0), "payload"),
		"body")), want.buf);
	pmbot_buf_clear(&want);
	assert_int_equal(pmbot_body_rev(rev, "### Goal\nBetter", 15), 0);
	assert_int_equal(pmbot_buf_printf(&want, "<!-- pm-bot:id=task:old rev=%s -->\n\n### Goal\nBetter",
		rev), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(cs_at(f, 1), "payload"),
		"body")), want.buf);
	/* What pm-bot wrote passes the rules apply enforces. */
	assert_int_equal(pmbot_apply_rules_check(json_object_get(f->bundle, "changesets"), f->state,
		f->config, &d), PMBOT_OK);
	pmbot_buf_free(&want);
	pmbot_diag_list_free(&d);
}

static void test_proposal__blank_lines_before_the_models_text_go_and_the_rev_is_the_bodys(
	void **state)
{
	fixture *f = *state;
	char rev[PMBOT_SHA256_HEX_SIZE];
	pmbot_buf want = PMBOT_BUF_INIT;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *body;

	assert_int_equal(propose(f, "[" CS("update_issue_body", NUM1,
		"{\"body\":\"\\n \\r\\n### Goal\\nBetter\"}") "]"), PMBOT_OK);
	body = json_string_value(json_object_get(json_object_get(cs_at(f, 0), "payload"), "body"));
	assert_int_equal(pmbot_body_rev(rev, "### Goal\nBetter", 15), 0);
	assert_int_equal(pmbot_buf_printf(&want, "<!-- pm-bot:id=task:old rev=%s -->\n\n### Goal\nBetter",
		rev), 0);
	assert_string_equal(body, want.buf);
	assert_int_equal(pmbot_body_rev(rev, body, strlen(body)), 0);
	assert_non_null(strstr(body, rev));
	assert_int_equal(pmbot_apply_rules_check(json_object_get(f->bundle, "changesets"), f->state,
		f->config, &d), PMBOT_OK);
	pmbot_buf_free(&want);
	pmbot_diag_list_free(&d);
}

/* U+200C ZERO WIDTH NON-JOINER, what neutralising puts after '@' and '#'. */
#define ZWNJ "\xe2\x80\x8c"

static void test_proposal__the_models_text_never_mentions_or_links(void **state)
{
	fixture *f = *state;
	char rev[PMBOT_SHA256_HEX_SIZE];
	pmbot_buf want = PMBOT_BUF_INIT;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *body, *title;

	assert_int_equal(propose(f, "[" CS("create_issue", "{\"repo\":\"acme/widgets\",\"stable_id\":"
		"\"task:new\"}", "{\"title\":\"Ask @octocat\",\"labels\":[],"
		"\"body\":\"cc @octocat, see acme/widgets#1 and `@kept`\"}") "]"), PMBOT_OK);
	body = json_string_value(json_object_get(json_object_get(cs_at(f, 0), "payload"), "body"));
	title = json_string_value(json_object_get(json_object_get(cs_at(f, 0), "payload"), "title"));
	/* U+200C (e2 80 8c) after '@' and '#'; a code span is left as written. */
	assert_string_equal(title, "Ask @" ZWNJ "octocat");
	assert_int_equal(pmbot_body_rev(rev, "cc @" ZWNJ "octocat, see acme/widgets#" ZWNJ "1 and "
		"`@kept`", strlen("cc @" ZWNJ "octocat, see acme/widgets#" ZWNJ "1 and `@kept`")), 0);
	assert_int_equal(pmbot_buf_printf(&want, "<!-- pm-bot:id=task:new rev=%s -->\n\ncc @" ZWNJ
		"octocat, see acme/widgets#" ZWNJ "1 and `@kept`", rev), 0);
	assert_string_equal(body, want.buf);
	/* The marker's rev is of the bytes written, so apply's rules accept it. */
	assert_int_equal(pmbot_apply_rules_check(json_object_get(f->bundle, "changesets"), f->state,
		f->config, &d), PMBOT_OK);
	pmbot_buf_free(&want);
	pmbot_diag_list_free(&d);
}

static void test_proposal__a_marker_in_the_models_text_is_refused(void **state)
{
	fixture *f = *state;

	assert_int_equal(propose(f, "[" CS("create_issue", "{\"repo\":\"acme/widgets\",\"stable_id\":"
		"\"task:decoy\"}", "{\"title\":\"Decoy\",\"labels\":[],\"body\":\"x\\n<!-- pm-bot:id=task:old "
		"rev=a18630b532447453e0de35d9538770e1fc7cf03c3bd03cb5609ee8eff602e2c2 -->\"}") "]"),
		PMBOT_EINVALID);
	assert_null(f->bundle);
	assert_non_null(pmbot_diag_list_find(&f->diags, "MARKER_INVALID"));
	/* A malformed one too: any marker line is pm-bot's alone. */
	assert_int_equal(propose(f, "[" CS("update_issue_body", OLD,
		"{\"body\":\"x\\n  <!--pm-bot: id=task:old -->\"}") "]"), PMBOT_EINVALID);
	assert_non_null(pmbot_diag_list_find(&f->diags, "MARKER_INVALID"));
}

static void test_proposal__breaking_a_rule_gives_no_bundle_and_says_why(void **state)
{
	fixture *f = *state;

	assert_int_equal(propose(f, "[" CS("add_labels", OLD, "{\"labels\":[\"prio:high\"]}") ","
		CS("remove_labels", OLD, "{\"labels\":[\"security\"]}") ","
		CS("update_issue_title", "{\"repo\":\"acme/widgets\",\"number\":2}", "{\"title\":\"x\"}") "]"),
		PMBOT_EINVALID);
	assert_null(f->bundle);
	assert_int_equal(f->diags.errors, 2);
	assert_string_equal(pmbot_diag_list_find(&f->diags, "LABEL_NOT_OWNED")->path, "/changesets/1");
	assert_string_equal(pmbot_diag_list_find(&f->diags, "ISSUE_NOT_MANAGED")->path, "/changesets/2");
}

static void test_proposal__managed_issues_are_named_as_plans_name_them_with_before_values(void **state)
{
	fixture *f = *state;
	const json_t *c;

	assert_int_equal(propose(f, "[" CS("update_issue_title", NUM1, "{\"title\":\"[task] New\"}") ","
		CS("set_project_field", NUM1, "{\"field\":\"Priority\",\"value\":\"High\"}") ","
		CS("add_dependency", OLD, "{\"blocker\":{\"repo\":\"acme/widgets\",\"number\":2}}") "]"),
		PMBOT_OK);
	c = cs_at(f, 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(c, "target"),
		"stable_id")), "task:old");
	assert_null(json_object_get(json_object_get(c, "target"), "number"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(c, "before"), "title")),
		"[task] Old");
	assert_string_equal(json_string_value(json_object_get(json_object_get(c, "after"), "title")),
		"[task] New");
	assert_string_equal(json_string_value(json_object_get(c, "changeset_id")), "cs-0001");
	assert_int_equal(strncmp(json_string_value(json_object_get(c, "idempotency_key")),
		"update_issue_title:acme/widgets:task:old:", 41), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(cs_at(f, 1), "before"),
		"value")), "Low");
	/* An outside blocker stays a number: it is not pm-bot's to name. */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(
		cs_at(f, 2), "payload"), "blocker"), "number")), 2);
	assert_string_equal(json_string_value(json_object_get(f->bundle, "target")), "acme/widgets");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(f->bundle, "summary"),
		"total")), 3);
}

static void test_proposal__fingerprints_every_issue_it_touches(void **state)
{
	fixture *f = *state;
	const json_t *fp;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	assert_int_equal(propose(f, "[" CS("add_labels", OLD, "{\"labels\":[\"prio:high\"]}") ","
		CS("remove_dependency", OLD, "{\"blocker\":{\"repo\":\"acme/widgets\",\"number\":2}}") "]"),
		PMBOT_OK);
	fp = json_object_get(f->bundle, "fingerprint");
	assert_int_equal(json_array_size(fp), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(fp, 0), "ref")),
		"acme/widgets#1");
	assert_string_equal(json_string_value(json_object_get(json_array_get(fp, 0), "updated_at")),
		"2025-01-01T00:00:01Z");
	assert_string_equal(json_string_value(json_object_get(json_array_get(fp, 1), "ref")),
		"acme/widgets#2");
	assert_string_equal(json_string_value(json_object_get(json_array_get(fp, 1), "node_id")), "I_2");
	/* Its hash is its own, and it is fresh against the state it was made from. */
	assert_int_equal(pmbot_apply_check_proposal(f->bundle, f->state, f->config, &d), PMBOT_OK);
	pmbot_diag_list_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_proposal__a_body_the_model_writes_gets_pm_bots_own_marker, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proposal__the_models_text_never_mentions_or_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proposal__blank_lines_before_the_models_text_go_and_the_rev_is_the_bodys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proposal__a_marker_in_the_models_text_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proposal__breaking_a_rule_gives_no_bundle_and_says_why, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proposal__managed_issues_are_named_as_plans_name_them_with_before_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proposal__fingerprints_every_issue_it_touches, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
