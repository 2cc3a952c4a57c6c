#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/fs.h"
#include "pmbot/gql.h"
#include "pmbot/banned.h"

static void test_gql__every_file_is_compiled_in_byte_for_byte(void **state)
{
	static const char *const names[] = {
		"add_project_item", "create_issue", "create_issue_no_sub", "issues", "issues_no_deps", "issues_no_sub",
		"issues_plain", "project", "repo_meta", "set_project_field", "viewer"
	};
	size_t i;

	(void)state;
	assert_int_equal(pmbot_gql_n_docs, sizeof(names) / sizeof(names[0]));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		pmbot_buf file = PMBOT_BUF_INIT, path = PMBOT_BUF_INIT;
		const char *doc = pmbot_gql(names[i]);

		assert_int_equal(pmbot_buf_printf(&path, "src/github/graphql/%s.graphql", names[i]), 0);
		assert_int_equal(pmbot_fs_read(&file, path.buf), 0);
		assert_non_null(doc);
		assert_string_equal(doc, file.buf);
		pmbot_buf_free(&file);
		pmbot_buf_free(&path);
	}
}

static void test_gql__unknown_names_have_no_document(void **state)
{
	(void)state;
	assert_null(pmbot_gql("issue"));
	assert_null(pmbot_gql(""));
	assert_non_null(strstr(pmbot_gql("issues"), "query PmBotIssues("));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gql__every_file_is_compiled_in_byte_for_byte),
		cmocka_unit_test(test_gql__unknown_names_have_no_document),
	};

	return cmocka_run_group_tests_name("gql", tests, NULL, NULL);
}
