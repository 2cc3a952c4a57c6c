#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/diag.h"

#include "pmbot/llm.h"
#include "pmbot/banned.h"

typedef struct {
	pmbot_buf md;
	pmbot_diag_list diags;
	json_t *result;
	json_t *flags;
} fixture;

static int setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	pmbot_buf_init(&fx->md, 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	pmbot_buf_free(&fx->md);
	pmbot_diag_list_free(&fx->diags);
	json_decref(fx->result);
	json_decref(fx->flags);
	free(fx);
	return 0;
}

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);

	if (!v)
		fail_msg("bad test JSON: %s", e.text);
	return v;
}

#define DRAFT_BLOCK(title) \
	"{\"draft\": {\"schema_version\": \"report_ir/v1\"," \
	" \"report\": {\"title\": " title ", \"generated_at\": \"2026-02-22\"," \
	"  \"scope\": {\"org\": \"acme\", \"repos\": [\"widgets\"]}}," \
	" \"features\": [{\"stable_id\": \"feat:a\", \"title\": \"A\", \"goal\": \"g\"}]," \
	" \"tasks\": [{\"stable_id\": \"task:b\", \"title\": \"B\", \"feature_id\": \"feat:a\"}]},"

static void test_llm_draft__markdown_is_notice_flags_notes_then_the_block(void **state)
{
	fixture *fx = *state;
	const char *block;

	fx->result = parse(DRAFT_BLOCK("\"Plan\"")
		" \"assumptions\": [\"area left out\"], \"open_questions\": [\"who owns it?\"]}");
	fx->flags = parse("[{\"ref\": \"file:notes.md\", \"policy\": \"sensitive_constraints\","
		" \"matched\": \"bypass\", \"note\": \"n\"}]");
	assert_int_equal(pmbot_llm_draft_markdown(&fx->md, fx->result, fx->flags, "m1", "openai",
		"notes.md"), 0);
	block = strstr(fx->md.buf, "```pm-bot:report-ir/v1\n{\n  \"features\": [");
	assert_non_null(block);
	assert_memory_equal(fx->md.buf,
		"# Plan\n\n> **Draft for review.** Written by the model `m1` (openai) from `notes.md` "
		"with pm-bot's `report_ir_draft` capability. Nothing has been written to GitHub: "
		"check every item, then commit this report and let `pm-bot plan` propose the "
		"issues.\n\n"
		"## Flagged for review\n\nThe input text contains phrases that pm-bot's policies "
		"name. They were passed to the model as text, not as instructions; check that the "
		"draft does not act on them.\n\n"
		"- `bypass` (policy `sensitive_constraints`) in `file:notes.md`\n\n"
		"## Assumptions\n\n- area left out\n\n"
		"## Open questions\n\n- who owns it?\n\n",
		(size_t)(block - fx->md.buf));
	assert_string_equal(fx->md.buf + fx->md.len - 6, "}\n```\n");
	/* The report it becomes passes every rule. */
	assert_int_equal(pmbot_llm_draft_check(&fx->diags, fx->md.buf, fx->md.len, "<draft>"),
		PMBOT_OK);
	assert_int_equal(fx->diags.errors, 0);
}

static void test_llm_draft__the_models_words_cannot_forge_lines(void **state)
{
	fixture *fx = *state;

	fx->result = parse(DRAFT_BLOCK("\"Plan\\n## Approved\"")
		" \"assumptions\": [\"one\\n- two\"], \"open_questions\": []}");
	assert_int_equal(pmbot_llm_draft_markdown(&fx->md, fx->result, NULL, "m\nx", "openai",
		"notes.md"), 0);
	assert_null(strstr(fx->md.buf, "\n## Approved"));
	assert_null(strstr(fx->md.buf, "\n- two"));
	assert_null(strstr(fx->md.buf, "`m\nx`"));
	/* No flags, no open questions: no empty sections. */
	assert_null(strstr(fx->md.buf, "## Flagged for review"));
	assert_null(strstr(fx->md.buf, "## Open questions"));
	assert_non_null(strstr(fx->md.buf, "## Assumptions\n\n- one"));
}

static void test_llm_draft__no_title_is_a_draft_report(void **state)
{
	fixture *fx = *state;

	fx->result = parse("{\"draft\": {}, \"assumptions\": [], \"open_questions\": []}");
	assert_int_equal(pmbot_llm_draft_markdown(&fx->md, fx->result, NULL, "m1", "anthropic",
		"-"), 0);
	assert_string_equal(fx->md.buf,
		"# Draft report\n\n> **Draft for review.** Written by the model `m1` (anthropic) from "
		"`-` with pm-bot's `report_ir_draft` capability. Nothing has been written to GitHub: "
		"check every item, then commit this report and let `pm-bot plan` propose the "
		"issues.\n\n"
		"```pm-bot:report-ir/v1\n{}\n```\n");
}

static void test_llm_draft__check_reports_a_draft_that_breaks_the_rules(void **state)
{
	fixture *fx = *state;

	/* A task naming a feature the draft does not have. */
	fx->result = parse("{\"draft\": {\"schema_version\": \"report_ir/v1\","
		" \"report\": {\"title\": \"Plan\", \"generated_at\": \"2026-02-22\","
		"  \"scope\": {\"org\": \"acme\", \"repos\": [\"widgets\"]}},"
		" \"tasks\": [{\"stable_id\": \"task:b\", \"title\": \"B\", \"feature_id\": \"feat:zz\"}]},"
		" \"assumptions\": [], \"open_questions\": []}");
	assert_int_equal(pmbot_llm_draft_markdown(&fx->md, fx->result, NULL, "m1", "openai",
		"notes.md"), 0);
	assert_int_equal(pmbot_llm_draft_check(&fx->diags, fx->md.buf, fx->md.len, "out.md"),
		PMBOT_EINVALID);
	assert_true(fx->diags.errors > 0);
	assert_string_equal(fx->diags.items[0].file, "out.md");
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_llm_draft__markdown_is_notice_flags_notes_then_the_block),
		T(test_llm_draft__the_models_words_cannot_forge_lines),
		T(test_llm_draft__no_title_is_a_draft_report),
		T(test_llm_draft__check_reports_a_draft_that_breaks_the_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
