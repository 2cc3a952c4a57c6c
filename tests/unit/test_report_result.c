#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/diag.h"
#include "pmbot/json.h"
#include "pmbot/report.h"
#include "pmbot/banned.h"

typedef struct {
	pmbot_diag_list diags;
	json_t *out;
	pmbot_buf text;
} fixture;

static int setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	pmbot_buf_init(&fx->text, 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	pmbot_diag_list_free(&fx->diags);
	json_decref(fx->out);
	pmbot_buf_free(&fx->text);
	free(fx);
	return 0;
}

static const char *canonical(fixture *fx)
{
	pmbot_buf_clear(&fx->text);
	assert_int_equal(pmbot_json_canonical(&fx->text, fx->out), 0);
	return fx->text.buf;
}

static void add_two(fixture *fx)
{
	/* Added out of order: the result is sorted by line. */
	assert_int_equal(pmbot_diag_add(&fx->diags, PMBOT_SEV_WARNING, "W_CODE", "r.md", "/b", 9, 2,
		"later"), 0);
	assert_int_equal(pmbot_diag_add(&fx->diags, PMBOT_SEV_ERROR, "E_CODE", "r.md", "/a", 3, 1,
		"first"), 0);
}

static void test_report_result__errors_and_warnings_apart_sorted(void **state)
{
	fixture *fx = *state;

	add_two(fx);
	assert_int_equal(pmbot_report_result(&fx->out, "r.md", NULL, &fx->diags), 0);
	assert_string_equal(canonical(fx), "{"
		"\"errors\":[{\"code\":\"E_CODE\",\"column\":1,\"line\":3,\"message\":\"first\","
		"\"path\":\"/a\"}],"
		"\"file\":\"r.md\",\"valid\":false,"
		"\"warnings\":[{\"code\":\"W_CODE\",\"column\":2,\"line\":9,\"message\":\"later\","
		"\"path\":\"/b\"}]}");
}

static void test_report_result__a_clean_file_from_git_names_its_blob(void **state)
{
	fixture *fx = *state;

	assert_int_equal(pmbot_report_result(&fx->out, "plans/a.md", "0123abcd", &fx->diags), 0);
	assert_string_equal(canonical(fx), "{\"blob\":\"0123abcd\",\"errors\":[],"
		"\"file\":\"plans/a.md\",\"valid\":true,\"warnings\":[]}");
}

static void test_report_result__warnings_alone_are_valid(void **state)
{
	fixture *fx = *state;

	assert_int_equal(pmbot_diag_add(&fx->diags, PMBOT_SEV_WARNING, "W", "r.md", "", 1, 1,
		"w"), 0);
	assert_int_equal(pmbot_report_result(&fx->out, "r.md", NULL, &fx->diags), 0);
	assert_true(json_is_true(json_object_get(fx->out, "valid")));
	assert_int_equal(json_array_size(json_object_get(fx->out, "warnings")), 1);
}

static void test_report_result__diag_list_to_json_keeps_one_severity(void **state)
{
	fixture *fx = *state;

	add_two(fx);
	assert_int_equal(pmbot_diag_list_to_json(&fx->out, &fx->diags, PMBOT_SEV_WARNING), 0);
	assert_string_equal(canonical(fx), "[{\"code\":\"W_CODE\",\"column\":2,\"line\":9,"
		"\"message\":\"later\",\"path\":\"/b\"}]");
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_report_result__errors_and_warnings_apart_sorted),
		T(test_report_result__a_clean_file_from_git_names_its_blob),
		T(test_report_result__warnings_alone_are_valid),
		T(test_report_result__diag_list_to_json_keeps_one_severity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
