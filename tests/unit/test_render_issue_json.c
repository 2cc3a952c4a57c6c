#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/json.h"
#include "pmbot/render.h"
#include "pmbot/banned.h"

static void test_render_issue_json__the_issue_as_github_gets_it(void **unused)
{
	char title[] = "Task: wire the gauge", body[] = "line one\nline two<!-- cut -->";
	char l1[] = "area:ui", l2[] = "type:task";
	char *labels[] = { l1, l2 };
	pmbot_rendered_issue is;
	pmbot_buf text = PMBOT_BUF_INIT;
	json_t *out = NULL;

	(void)unused;
	memset(&is, 0, sizeof(is));
	is.title = title;
	is.body = body;
	is.body_len = strlen("line one\nline two");
	is.labels = labels;
	is.n_labels = 2;
	assert_int_equal(pmbot_rendered_issue_to_json(&out, "task:gauge", &is), 0);
	assert_int_equal(pmbot_json_canonical(&text, out), 0);
	/* The body stops at body_len, not at the NUL. */
	assert_string_equal(text.buf, "{\"body\":\"line one\\nline two\",\"labels\":[\"area:ui\","
		"\"type:task\"],\"stable_id\":\"task:gauge\",\"title\":\"Task: wire the gauge\"}");
	json_decref(out);
	pmbot_buf_free(&text);
}

static void test_render_issue_json__no_labels_is_an_empty_list(void **unused)
{
	char title[] = "T", body[] = "";
	pmbot_rendered_issue is;
	json_t *out = NULL;

	(void)unused;
	memset(&is, 0, sizeof(is));
	is.title = title;
	is.body = body;
	assert_int_equal(pmbot_rendered_issue_to_json(&out, "feat:a", &is), 0);
	assert_true(json_is_array(json_object_get(out, "labels")));
	assert_int_equal(json_array_size(json_object_get(out, "labels")), 0);
	assert_string_equal(json_string_value(json_object_get(out, "body")), "");
	json_decref(out);
}

static void test_render_issue_json__a_label_that_is_not_utf8_is_an_error(void **unused)
{
	char title[] = "T", body[] = "b", bad[] = "\xc3\x28";
	char *labels[] = { bad };
	pmbot_rendered_issue is;
	json_t *out = (json_t *)&is;

	(void)unused;
	memset(&is, 0, sizeof(is));
	is.title = title;
	is.body = body;
	is.body_len = 1;
	is.labels = labels;
	is.n_labels = 1;
	assert_int_equal(pmbot_rendered_issue_to_json(&out, "feat:a", &is), PMBOT_ERROR);
	assert_null(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render_issue_json__the_issue_as_github_gets_it),
		cmocka_unit_test(test_render_issue_json__no_labels_is_an_empty_list),
		cmocka_unit_test(test_render_issue_json__a_label_that_is_not_utf8_is_an_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
