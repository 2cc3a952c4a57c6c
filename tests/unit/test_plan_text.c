#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pmbot/plan.h"
#include "pmbot/banned.h"

/* pmbot_plan_text: the plan as a terminal shows it. */

#define SMALL_HASH "07e8ec48865892eecfb0bc9cc5b909629e0f589918c1fab5a675e2948d02762f"

static json_t *fixture(const char *name)
{
	char path[256];
	json_error_t err;
	json_t *b;

	snprintf(path, sizeof(path), "tests/fixtures/bundles/%s", name);
	if (!(b = json_load_file(path, 0, &err)))
		fail_msg("%s: %s", path, err.text);
	return b;
}

static char *text(const json_t *bundle, const char *plan_file, int color)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_plan_text(&out, bundle, plan_file, color), PMBOT_OK);
	return pmbot_buf_detach(&out, NULL);
}

static json_t *cs_at(json_t *b, size_t i)
{
	return json_array_get(json_object_get(b, "changesets"), i);
}

static void test_plan_text__one_line_a_change_grouped_by_item(void **state)
{
	json_t *b = fixture("small.json");
	char *t;

	(void)state;
	t = text(b, NULL, 0);
	assert_non_null(strstr(t, "pm-bot plan for octo/app (against GitHub)\n"));
	assert_non_null(strstr(t, "\nT-2  Add login page\n  + new issue\n"
		"  + labels prio:P1, type:task\n"));
	assert_non_null(strstr(t, "  + parent F-1\n"));
	assert_non_null(strstr(t, "  + blocked by octo/app#7\n"));
	assert_non_null(strstr(t, "  + on board octo/3\n"));
	assert_non_null(strstr(t, "\nF-1  Checkout v2\n"));
	assert_non_null(strstr(t, "  - blocked by T-9\n"));
	assert_non_null(strstr(t, "  - labels prio:P2\n"));
	assert_non_null(strstr(t, "Plan hash: " SMALL_HASH "\n"));
	assert_non_null(strstr(t, "comment /pm-bot apply " SMALL_HASH));
	assert_null(strstr(t, "\033"));
	assert_null(strstr(t, "**"));
	free(t);
	/* colour wraps the sigils; the words stay the same */
	t = text(b, NULL, 1);
	assert_non_null(strstr(t, "  \033[32m+ new issue\033[0m\n"));
	assert_non_null(strstr(t, "  \033[31m- labels prio:P2\033[0m\n"));
	free(t);
	json_decref(b);
}

static void test_plan_text__outside_text_cannot_drive_the_terminal(void **state)
{
	json_t *b = fixture("small.json");
	char *t;

	(void)state;
	assert_int_equal(json_object_set_new(json_object_get(cs_at(b, 0), "payload"), "title",
		json_string("::error::x\033[2J\nforged line")), 0);
	t = text(b, NULL, 0);
	assert_null(strstr(t, "\033"));
	assert_null(strstr(t, "\n::"));
	assert_null(strstr(t, "\nforged line"));
	assert_non_null(strstr(t, "\\x1b[2J\\x0aforged line"));
	free(t);
	json_decref(b);
}

static void test_plan_text__body_diffs_leave_out_the_marker(void **state)
{
	json_t *b = fixture("small.json"), *cs = cs_at(b, 2);
	char *t;

	(void)state;
	/* only the marker's rev moves: said in words, no diff */
	assert_int_equal(json_object_set_new(cs, "before", json_pack("{s:s}", "body",
		"<!-- pm-bot:id=F-1 rev=aa -->\n\n## Goal\nShip\n")), 0);
	assert_int_equal(json_object_set_new(json_object_get(cs, "payload"), "body",
		json_string("<!-- pm-bot:id=F-1 rev=bb -->\n\n## Goal\nShip\n")), 0);
	t = text(b, NULL, 0);
	assert_non_null(strstr(t, "  ~ body: only pm-bot's hidden marker changes\n"));
	assert_null(strstr(t, "pm-bot:id="));
	free(t);
	assert_int_equal(json_object_set_new(json_object_get(cs, "payload"), "body",
		json_string("<!-- pm-bot:id=F-1 rev=bb -->\n\n## Goal\nShip it\n")), 0);
	t = text(b, NULL, 0);
	assert_non_null(strstr(t, "  ~ body\n      @@ -2,2 +2,2 @@\n       ## Goal\n      -Ship\n"
		"      +Ship it\n"));
	free(t);
	json_decref(b);
}

static void test_plan_text__fields_in_name_order_and_the_local_command(void **state)
{
	json_t *b = fixture("small.json"), *second;
	char *t, *a, *z;

	(void)state;
	second = json_deep_copy(cs_at(b, 9));
	assert_int_equal(json_object_set_new(json_object_get(second, "payload"), "field",
		json_string("Area")), 0);
	assert_int_equal(json_object_set_new(second, "before", json_pack("{s:s}", "value", "ui")),
		0);
	assert_int_equal(json_array_append_new(json_object_get(b, "changesets"), second), 0);
	assert_int_equal(json_object_set_new(json_object_get(b, "source"), "backend",
		json_pack("{s:s, s:s}", "kind", "file", "state", "s.json")), 0);
	t = text(b, "out/plan.json", 0);
	assert_non_null(a = strstr(t, "  ~ field Area: ui -> P0\n"));
	assert_non_null(z = strstr(t, "  ~ field Priority: P2 -> P0\n"));
	assert_true(a < z);
	assert_non_null(strstr(t, "(against the state file s.json)"));
	assert_non_null(strstr(t, "To apply exactly this plan, run: pm-bot apply --plan "
		"out/plan.json --approve " SMALL_HASH "\n"));
	assert_null(strstr(t, "/pm-bot apply"));
	free(t);
	json_decref(b);
}

static void test_plan_text__results_say_what_was_done_per_item(void **state)
{
	json_t *b = fixture("small.json");
	json_t *res = json_pack("[{s:s, s:s, s:{s:i}}, {s:s, s:s, s:{}}, {s:s, s:s, s:{}},"
		" {s:s, s:s, s:{}}, {s:s, s:s, s:{}}]",
		"changeset_id", "cs-0001", "status", "applied", "result", "number", 12,
		"changeset_id", "cs-0006", "status", "applied", "result",
		"changeset_id", "cs-0002", "status", "applied", "result",
		"changeset_id", "cs-0003", "status", "failed", "result",
		"changeset_id", "cs-0004", "status", "applied", "result");
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_non_null(res);
	assert_int_equal(pmbot_plan_results_text(&out, b, res), PMBOT_OK);
	assert_string_equal(out.buf, "created octo/app#12 T-2 with parent\n"
		"updated F-1: title, labels\n");
	pmbot_buf_free(&out);
	json_decref(res);
	json_decref(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_text__one_line_a_change_grouped_by_item),
		cmocka_unit_test(test_plan_text__outside_text_cannot_drive_the_terminal),
		cmocka_unit_test(test_plan_text__body_diffs_leave_out_the_marker),
		cmocka_unit_test(test_plan_text__fields_in_name_order_and_the_local_command),
		cmocka_unit_test(test_plan_text__results_say_what_was_done_per_item),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
