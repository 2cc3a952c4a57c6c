#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/fs.h"
#include "pmbot/github.h"
#include "pmbot/banned.h"

static void test_gql__every_file_is_compiled_in_byte_for_byte(void **state)
{
	static const char *const names[] = {
		"add_project_item", "create_issue", "issues", "project", "repo_meta", "set_issue_type",
		"set_project_field", "viewer"
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

/* Whether `word` occurs in the GraphQL of `doc`, comments aside. */
static int selects(const char *doc, const char *word)
{
	pmbot_buf line = PMBOT_BUF_INIT;
	const char *nl;
	int found = 0;

	for (; *doc && !found; doc = nl ? nl + 1 : doc + strlen(doc)) {
		nl = strchr(doc, '\n');
		pmbot_buf_clear(&line);
		assert_int_equal(pmbot_buf_put(&line, doc, nl ? (size_t)(nl - doc) : strlen(doc)), 0);
		if (strchr(line.buf, '#'))
			pmbot_buf_truncate(&line, (size_t)(strchr(line.buf, '#') - line.buf));
		found = strstr(line.buf, word) != NULL;
	}
	pmbot_buf_free(&line);
	return found;
}

static void test_gql__without_drops_exactly_the_lines_tagged_for_a_missing_feature(void **state)
{
	static const char doc[] = "query Q {\n"
				  "  a\n"
				  "  p { x } # needs: sub_issues\n"
				  "  b # a comment, not a tag\n"
				  "  d {      # needs: dependencies\n"
				  "    y      # needs: dependencies\n"
				  "  }        # needs: dependencies\n"
				  "  both     #needs: sub_issues, dependencies\n"
				  "}";
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_gql_without(&out, doc, 0), 0);
	assert_string_equal(out.buf, doc);
	pmbot_buf_clear(&out);
	assert_int_equal(pmbot_gql_without(&out, doc, PMBOT_GQL_SUB_ISSUES), 0);
	assert_string_equal(out.buf, "query Q {\n  a\n  b # a comment, not a tag\n"
		"  d {      # needs: dependencies\n    y      # needs: dependencies\n"
		"  }        # needs: dependencies\n}");
	pmbot_buf_clear(&out);
	assert_int_equal(pmbot_gql_without(&out, doc, PMBOT_GQL_DEPENDENCIES), 0);
	assert_string_equal(out.buf, "query Q {\n  a\n  p { x } # needs: sub_issues\n"
		"  b # a comment, not a tag\n}");
	pmbot_buf_clear(&out);
	assert_int_equal(pmbot_gql_without(&out, doc, PMBOT_GQL_SUB_ISSUES | PMBOT_GQL_DEPENDENCIES), 0);
	assert_string_equal(out.buf, "query Q {\n  a\n  b # a comment, not a tag\n}");

	/* Appends; a tag naming no known feature fails and leaves `out` as it was. */
	assert_int_equal(pmbot_gql_without(&out, "x\n", PMBOT_GQL_SUB_ISSUES), 0);
	assert_string_equal(out.buf, "query Q {\n  a\n  b # a comment, not a tag\n}x\n");
	pmbot_buf_clear(&out);
	assert_int_equal(pmbot_buf_puts(&out, "kept"), 0);
	assert_int_equal(pmbot_gql_without(&out, "a\nb # needs: sub_issue\n", 0), PMBOT_EINVALID);
	assert_int_equal(pmbot_gql_without(&out, "a\nb # needs:\n", 0), PMBOT_EINVALID);
	assert_string_equal(out.buf, "kept");
	/* A '#' inside a string starts no comment. */
	pmbot_buf_clear(&out);
	assert_int_equal(pmbot_gql_without(&out, "f(s: \"# needs: sub_issues\")\n",
				 PMBOT_GQL_SUB_ISSUES), 0);
	assert_string_equal(out.buf, "f(s: \"# needs: sub_issues\")\n");
	pmbot_buf_free(&out);
}

static void test_gql__untagged_documents_are_kept_byte_for_byte(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < pmbot_gql_n_docs; i++) {
		pmbot_buf out = PMBOT_BUF_INIT;

		if (strstr(pmbot_gql_docs[i].text, "needs:"))
			continue;
		assert_int_equal(pmbot_gql_without(&out, pmbot_gql_docs[i].text,
					 PMBOT_GQL_SUB_ISSUES | PMBOT_GQL_DEPENDENCIES), 0);
		assert_string_equal(out.buf, pmbot_gql_docs[i].text);
		pmbot_buf_free(&out);
	}
}

static void test_gql__the_issues_and_create_documents_lose_what_ghes_lacks(void **state)
{
	static const char *const names[] = { "issues", "create_issue" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		pmbot_buf all = PMBOT_BUF_INIT, no_sub = PMBOT_BUF_INIT, none = PMBOT_BUF_INIT;
		const char *doc = pmbot_gql(names[i]);

		assert_non_null(doc);
		assert_true(selects(doc, "parent"));
		assert_int_equal(pmbot_gql_without(&all, doc, 0), 0);
		assert_string_equal(all.buf, doc);
		assert_int_equal(pmbot_gql_without(&no_sub, doc, PMBOT_GQL_SUB_ISSUES), 0);
		assert_false(selects(no_sub.buf, "parent"));
		assert_int_equal(selects(no_sub.buf, "blockedBy"), selects(doc, "blockedBy"));
		assert_int_equal(pmbot_gql_without(&none, doc,
					 PMBOT_GQL_SUB_ISSUES | PMBOT_GQL_DEPENDENCIES), 0);
		assert_false(selects(none.buf, "parent"));
		assert_false(selects(none.buf, "blockedBy"));
		/* What is left still reads the issue. */
		assert_true(selects(none.buf, "number"));
		pmbot_buf_free(&all);
		pmbot_buf_free(&no_sub);
		pmbot_buf_free(&none);
	}
	assert_true(selects(pmbot_gql("issues"), "blockedBy"));
}

static void test_gql__the_issues_document_loses_issue_types_alone_where_they_are_missing(void **state)
{
	const char *doc = pmbot_gql("issues");
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_true(selects(doc, "issueType {"));
	assert_true(selects(doc, "issueTypes("));
	assert_int_equal(pmbot_gql_without(&out, doc, PMBOT_GQL_ISSUE_TYPES), 0);
	assert_false(selects(out.buf, "issueType"));
	assert_true(selects(out.buf, "parent"));
	assert_true(selects(out.buf, "blockedBy"));
	assert_true(selects(out.buf, "labels("));
	pmbot_buf_clear(&out);
	/* Sub-issues and dependencies missing leave the issue types in. */
	assert_int_equal(pmbot_gql_without(&out, doc, PMBOT_GQL_SUB_ISSUES | PMBOT_GQL_DEPENDENCIES), 0);
	assert_true(selects(out.buf, "issueType {"));
	pmbot_buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gql__every_file_is_compiled_in_byte_for_byte),
		cmocka_unit_test(test_gql__unknown_names_have_no_document),
		cmocka_unit_test(test_gql__without_drops_exactly_the_lines_tagged_for_a_missing_feature),
		cmocka_unit_test(test_gql__untagged_documents_are_kept_byte_for_byte),
		cmocka_unit_test(test_gql__the_issues_and_create_documents_lose_what_ghes_lacks),
		cmocka_unit_test(test_gql__the_issues_document_loses_issue_types_alone_where_they_are_missing),
	};

	return cmocka_run_group_tests_name("gql", tests, NULL, NULL);
}
