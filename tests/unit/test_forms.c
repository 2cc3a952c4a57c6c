#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/fs.h"
#include "pmbot/render.h"
#include "pmbot/banned.h"

#define FIXTURES "tests/fixtures/forms/"

static char *slurp(const char *path, size_t *len)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_fs_read(&b, path), 0);
	return pmbot_buf_detach(&b, len);
}

static pmbot_form *parse_fixture(const char *name, pmbot_diag_list *d)
{
	char path[256];
	pmbot_form *f = NULL;
	size_t len;
	char *text;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	text = slurp(path, &len);
	assert_int_equal(pmbot_form_parse(&f, path, text, len, NULL, d), PMBOT_OK);
	free(text);
	return f;
}

static int parse_text(pmbot_form **f, const char *text, pmbot_diag_list *d)
{
	return pmbot_form_parse(f, "forms/x.yml", text, strlen(text), NULL, d);
}

static void test_forms__reads_headings_in_order_without_markdown_blocks(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_form *f = parse_fixture("feature.yml", &d);
	static const char *const want[] = { "Goal", "Acceptance criteria (DoD)", "Area", "Size",
		"Estimate (hrs)", "Priority", "Risk", "Blocked by", "ADR impact?", "Actual (hrs)" };
	size_t i;

	(void)state;
	assert_int_equal(d.count, 0);
	assert_int_equal(f->n_fields, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < f->n_fields; i++)
		assert_string_equal(f->fields[i].label, want[i]);
	assert_string_equal(f->name, "Feature");
	assert_true(f->has_type);
	assert_int_equal(f->type, PMBOT_NODE_FEATURE);
	assert_false(f->builtin);
	pmbot_form_free(f);
	pmbot_diag_list_free(&d);
}

static void test_forms__records_ids_required_flags_and_lines(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_form *f = parse_fixture("feature.yml", &d);

	(void)state;
	assert_string_equal(f->fields[0].id, "goal");
	assert_true(f->fields[0].required);
	assert_false(f->fields[1].required);
	assert_int_equal(f->fields[0].line, 13);  /* "      label: Goal" */
	assert_int_equal(f->fields[2].line, 27);  /* "      label: Area" */
	pmbot_form_free(f);
	pmbot_diag_list_free(&d);
}

static void test_forms__title_prefix_drops_the_placeholder_and_ends_in_one_space(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_form *feat = parse_fixture("feature.yml", &d);
	pmbot_form *epic = parse_fixture("epic.yml", &d);
	pmbot_form *bug = parse_fixture("bug.yml", &d);
	pmbot_form *q = parse_fixture("question.yml", &d);

	(void)state;
	assert_string_equal(feat->title_prefix, "[feat] ");
	assert_string_equal(epic->title_prefix, "[epic] ");
	assert_string_equal(bug->title_prefix, "Bug: ");
	assert_string_equal(q->title_prefix, "");
	pmbot_form_free(feat);
	pmbot_form_free(epic);
	pmbot_form_free(bug);
	pmbot_form_free(q);
	pmbot_diag_list_free(&d);
}

static void test_forms__title_without_space_gets_one(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_form *f = NULL;

	(void)state;
	assert_int_equal(parse_text(&f, "name: T\ntitle: \"[task]\"\n"
		"body: [{type: input, attributes: {label: Goal}}]\n", &d), PMBOT_OK);
	assert_string_equal(f->title_prefix, "[task] ");
	pmbot_form_free(f);
	pmbot_diag_list_free(&d);
}

static void test_forms__labels_as_list_or_comma_separated_string(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_form *feat = parse_fixture("feature.yml", &d);
	pmbot_form *epic = parse_fixture("epic.yml", &d);

	(void)state;
	assert_int_equal(feat->n_labels, 3);
	assert_string_equal(feat->labels[0], "type:feature");
	assert_string_equal(feat->labels[1], "status:backlog");
	assert_string_equal(feat->labels[2], "roadmap");
	assert_int_equal(epic->n_labels, 2);
	assert_string_equal(epic->labels[0], "type:epic");
	assert_string_equal(epic->labels[1], "roadmap");
	assert_int_equal(epic->type, PMBOT_NODE_EPIC);
	pmbot_form_free(feat);
	pmbot_form_free(epic);
	pmbot_diag_list_free(&d);
}

static void test_forms__type_falls_back_to_the_name(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_form *bug = parse_fixture("bug.yml", &d);
	pmbot_form *f = NULL;

	(void)state;
	assert_true(bug->has_type);
	assert_int_equal(bug->type, PMBOT_NODE_BUG);
	assert_int_equal(parse_text(&f, "name: Benchmark\n"
		"body: [{type: input, attributes: {label: Scenario}}]\n", &d), PMBOT_OK);
	assert_int_equal(f->type, PMBOT_NODE_BENCHMARK);
	pmbot_form_free(f);
	assert_int_equal(parse_text(&f, "name: Feat request\n"
		"body: [{type: input, attributes: {label: Goal}}]\n", &d), PMBOT_OK);
	assert_int_equal(f->type, PMBOT_NODE_FEATURE);
	pmbot_form_free(f);
	pmbot_form_free(bug);
	assert_int_equal(d.count, 0);
	pmbot_diag_list_free(&d);
}

static void test_forms__type_label_wins_over_the_name(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_form *f = NULL;

	(void)state;
	assert_int_equal(parse_text(&f, "name: Bug\nlabels: [type:spike]\n"
		"body: [{type: input, attributes: {label: Question}}]\n", &d), PMBOT_OK);
	assert_int_equal(f->type, PMBOT_NODE_SPIKE);
	pmbot_form_free(f);
	pmbot_diag_list_free(&d);
}

static void test_forms__type_label_follows_the_label_scheme(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_label_scheme s = { "kind/", "area:", "prio:", "size:", "status:" };
	const char *text = "name: Something\nlabels: [kind/chore, type:bug]\n"
		"body: [{type: input, attributes: {label: What}}]\n";
	pmbot_form *f = NULL;

	(void)state;
	assert_int_equal(pmbot_form_parse(&f, "x.yml", text, strlen(text), &s, &d), PMBOT_OK);
	assert_int_equal(f->type, PMBOT_NODE_CHORE);
	pmbot_form_free(f);
	pmbot_diag_list_free(&d);
}

static void test_forms__form_without_type_parses_with_has_type_zero(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_form *f = parse_fixture("question.yml", &d);

	(void)state;
	assert_false(f->has_type);
	assert_int_equal(f->n_fields, 1);
	assert_null(f->fields[0].id);
	pmbot_form_free(f);
	pmbot_diag_list_free(&d);
}

static void test_forms__maps_headings_to_node_fields(void **state)
{
	(void)state;
	assert_int_equal(pmbot_form_heading_kind("Area"), PMBOT_FIELD_AREA);
	assert_int_equal(pmbot_form_heading_kind("  PRIORITY "), PMBOT_FIELD_PRIORITY);
	assert_int_equal(pmbot_form_heading_kind("Size (Epic)"), PMBOT_FIELD_SIZE);
	assert_int_equal(pmbot_form_heading_kind("Estimate   (hrs)"), PMBOT_FIELD_ESTIMATE);
	assert_int_equal(pmbot_form_heading_kind("Estimate (days)"), PMBOT_FIELD_OTHER);
	assert_int_equal(pmbot_form_heading_kind("Actual (hrs)"), PMBOT_FIELD_ACTUAL);
	assert_int_equal(pmbot_form_heading_kind("blocked by"), PMBOT_FIELD_BLOCKED_BY);
	assert_int_equal(pmbot_form_heading_kind("Dependencies (Blocked By / Blocks)"),
		PMBOT_FIELD_BLOCKED_BY);
	assert_int_equal(pmbot_form_heading_kind("Objective (North Star)"), PMBOT_FIELD_OBJECTIVE);
	assert_int_equal(pmbot_form_heading_kind("Acceptance criteria (DoD)"),
		PMBOT_FIELD_ACCEPTANCE);
	assert_int_equal(pmbot_form_heading_kind("Epic Acceptance (DoD)"), PMBOT_FIELD_ACCEPTANCE);
	assert_int_equal(pmbot_form_heading_kind("Milestones (vertical slices)"),
		PMBOT_FIELD_MILESTONES);
	assert_int_equal(pmbot_form_heading_kind("Risks & Unknowns"), PMBOT_FIELD_OTHER);
	assert_int_equal(pmbot_form_heading_kind("Goal"), PMBOT_FIELD_GOAL);
	assert_int_equal(pmbot_form_heading_kind("Goals"), PMBOT_FIELD_OTHER);
	assert_int_equal(pmbot_form_heading_kind("(Area)"), PMBOT_FIELD_OTHER);
}

static void test_forms__field_kinds_are_set_while_parsing(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_form *f = parse_fixture("epic.yml", &d);

	(void)state;
	assert_int_equal(f->fields[0].kind, PMBOT_FIELD_OBJECTIVE);
	assert_int_equal(f->fields[1].kind, PMBOT_FIELD_OTHER);
	assert_int_equal(f->fields[4].kind, PMBOT_FIELD_BLOCKED_BY);
	assert_int_equal(f->fields[7].kind, PMBOT_FIELD_SIZE);
	pmbot_form_free(f);
	pmbot_diag_list_free(&d);
}

/* ---- rejections ------------------------------------------------------- */

static void expect_reject(const char *text, const char *code, int line)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_form *f = (pmbot_form *)&d; /* must be reset to NULL */
	const pmbot_diag *diag;

	assert_int_equal(parse_text(&f, text, &d), PMBOT_EINVALID);
	assert_null(f);
	diag = pmbot_diag_list_find(&d, code);
	if (!diag)
		fail_msg("expected %s", code);
	assert_int_equal(diag->severity, PMBOT_SEV_ERROR);
	assert_string_equal(diag->file, "forms/x.yml");
	assert_int_equal(diag->line, line);
	pmbot_diag_list_free(&d);
}

static void test_forms__rejects_yaml_that_does_not_parse(void **state)
{
	(void)state;
	expect_reject("name: X\nbody:\n  - type: input\n   bad: [\n", "FORM_YAML", 4);
}

static void test_forms__rejects_a_document_that_is_not_a_mapping(void **state)
{
	(void)state;
	expect_reject("- a\n- b\n", "FORM_NOT_MAPPING", 1);
}

static void test_forms__rejects_a_form_without_name(void **state)
{
	(void)state;
	expect_reject("title: x\nbody: [{type: input, attributes: {label: A}}]\n",
		"FORM_MISSING_NAME", 1);
	expect_reject("name: [a]\nbody: [{type: input, attributes: {label: A}}]\n",
		"FORM_MISSING_NAME", 1);
}

static void test_forms__rejects_an_unquoted_bracket_title(void **state)
{
	(void)state;
	expect_reject("name: F\ntitle: [feat]\nbody: [{type: input, attributes: {label: A}}]\n",
		"FORM_BAD_FIELD", 2);
}

static void test_forms__rejects_labels_that_are_not_strings(void **state)
{
	(void)state;
	expect_reject("name: F\nlabels:\n  - ok\n  - {a: b}\n"
		"body: [{type: input, attributes: {label: A}}]\n", "FORM_BAD_FIELD", 4);
}

static void test_forms__rejects_a_missing_or_empty_body(void **state)
{
	(void)state;
	expect_reject("name: F\n", "FORM_MISSING_BODY", 1);
	expect_reject("name: F\nbody: []\n", "FORM_MISSING_BODY", 2);
}

static void test_forms__rejects_unknown_block_types(void **state)
{
	(void)state;
	expect_reject("name: F\nbody:\n  - type: input\n    attributes: {label: A}\n"
		"  - type: slider\n    attributes: {label: B}\n", "FORM_BAD_BLOCK", 5);
}

static void test_forms__rejects_a_field_without_label(void **state)
{
	(void)state;
	expect_reject("name: F\nbody:\n  - type: input\n    id: a\n    attributes:\n"
		"      placeholder: x\n", "FORM_MISSING_LABEL", 3);
	expect_reject("name: F\nbody:\n  - type: input\n    attributes: {label: \"  \"}\n",
		"FORM_MISSING_LABEL", 3);
}

static void test_forms__rejects_a_heading_that_would_break_the_body(void **state)
{
	(void)state;
	expect_reject("name: F\nbody:\n  - type: input\n    attributes:\n"
		"      label: \"Area\\n### Priority\"\n", "FORM_UNSAFE_LABEL", 5);
	expect_reject("name: F\nbody:\n  - type: input\n    attributes:\n"
		"      label: \"Area -->\"\n", "FORM_UNSAFE_LABEL", 5);
}

static void test_forms__rejects_headings_the_body_cannot_tell_apart(void **state)
{
	(void)state;
	expect_reject("name: F\nbody:\n  - type: input\n    attributes: {label: Area}\n"
		"  - type: input\n    attributes: {label: \" area \"}\n", "FORM_DUPLICATE_LABEL", 6);
	expect_reject("name: F\nbody:\n  - type: input\n    attributes: {label: Size}\n"
		"  - type: input\n    attributes: {label: Size (Epic)}\n", "FORM_DUPLICATE_LABEL", 6);
}

static void test_forms__rejects_duplicate_ids(void **state)
{
	(void)state;
	expect_reject("name: F\nbody:\n  - type: input\n    id: a\n    attributes: {label: A}\n"
		"  - type: input\n    id: a\n    attributes: {label: B}\n", "FORM_DUPLICATE_ID", 6);
}

static void test_forms__rejects_a_body_of_only_markdown(void **state)
{
	(void)state;
	expect_reject("name: F\nbody:\n  - type: markdown\n    attributes: {value: hi}\n",
		"FORM_NO_FIELDS", 2);
}

static void test_forms__rejects_labels_naming_two_types(void **state)
{
	(void)state;
	expect_reject("name: F\nlabels: [type:bug, type:task]\n"
		"body: [{type: input, attributes: {label: A}}]\n", "FORM_AMBIGUOUS_TYPE", 2);
}

static void test_forms__reports_every_problem_not_only_the_first(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_form *f = NULL;

	(void)state;
	assert_int_equal(parse_text(&f, "title: [x]\nbody:\n  - type: nope\n"
		"  - type: input\n    attributes: {}\n", &d), PMBOT_EINVALID);
	assert_non_null(pmbot_diag_list_find(&d, "FORM_MISSING_NAME"));
	assert_non_null(pmbot_diag_list_find(&d, "FORM_BAD_FIELD"));
	assert_non_null(pmbot_diag_list_find(&d, "FORM_BAD_BLOCK"));
	assert_non_null(pmbot_diag_list_find(&d, "FORM_MISSING_LABEL"));
	assert_int_equal(d.errors, 4);
	pmbot_diag_list_free(&d);
}

/* ---- paths, built-ins and sets --------------------------------------- */

static void test_forms__config_yml_and_markdown_templates_are_not_forms(void **state)
{
	(void)state;
	assert_true(pmbot_form_is_form_path(".github/ISSUE_TEMPLATE/feature.yml"));
	assert_true(pmbot_form_is_form_path("bug.yaml"));
	assert_false(pmbot_form_is_form_path(".github/ISSUE_TEMPLATE/config.yml"));
	assert_false(pmbot_form_is_form_path(".github/ISSUE_TEMPLATE/config.yaml"));
	assert_false(pmbot_form_is_form_path(".github/ISSUE_TEMPLATE/bug_report.md"));
	assert_false(pmbot_form_is_form_path(".github/ISSUE_TEMPLATE/.yml"));
}

static void test_forms__builtin_forms_carry_the_tracked_headings(void **state)
{
	static const char *const tracked[] = { "Area", "Priority", "Size", "Estimate (hrs)",
		"Risk", "Blocked by", "Actual (hrs)" };
	static const char *const prefixes[] = { "[epic] ", "[feat] ", "[task] ", "[bug] ",
		"[spike] ", "[test] ", "[chore] ", "[bench] " };
	int t;

	(void)state;
	for (t = PMBOT_NODE_EPIC; t <= PMBOT_NODE_BENCHMARK; t++) {
		pmbot_form *f = NULL;
		size_t i, base;

		assert_int_equal(pmbot_form_builtin(&f, (pmbot_node_type)t), PMBOT_OK);
		assert_true(f->builtin);
		assert_int_equal(f->type, t);
		assert_string_equal(f->title_prefix, prefixes[t]);
		assert_true(f->n_fields >= 7);
		base = f->n_fields - 7;
		for (i = 0; i < 7; i++)
			assert_string_equal(f->fields[base + i].label, tracked[i]);
		assert_int_equal(f->fields[0].kind,
			t == PMBOT_NODE_EPIC ? PMBOT_FIELD_OBJECTIVE : PMBOT_FIELD_GOAL);
		assert_int_equal(f->fields[1].kind, PMBOT_FIELD_ACCEPTANCE);
		pmbot_form_free(f);
	}
}

static void test_forms__builtin_rejects_an_unknown_type(void **state)
{
	pmbot_form *f = NULL;

	(void)state;
	assert_int_equal(pmbot_form_builtin(&f, (pmbot_node_type)42), PMBOT_EINVALID);
	assert_null(f);
}

static void add_fixture(pmbot_formset *set, const char *name, pmbot_diag_list *d, int expect)
{
	char path[256];
	size_t len;
	char *text;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	text = slurp(path, &len);
	assert_int_equal(pmbot_formset_add(set, path, text, len, d), expect);
	free(text);
}

static void test_forms__set_without_repository_forms_uses_builtins(void **state)
{
	pmbot_formset *set = NULL;
	int t;

	(void)state;
	assert_int_equal(pmbot_formset_new(&set, NULL), PMBOT_OK);
	assert_int_equal(pmbot_formset_count(set), 0);
	for (t = PMBOT_NODE_EPIC; t <= PMBOT_NODE_BENCHMARK; t++) {
		const pmbot_form *f = pmbot_formset_find(set, (pmbot_node_type)t);

		assert_non_null(f);
		assert_true(f->builtin);
		assert_int_equal(f->type, t);
	}
	assert_null(pmbot_formset_find(set, (pmbot_node_type)99));
	pmbot_formset_free(set);
}

static void test_forms__set_finds_open_types_by_name(void **state)
{
	static const char *ops_a = "name: Operations\nlabels: [type:ops]\n"
		"body: [{type: textarea, attributes: {label: A}}]\n";
	static const char *ops_b = "name: Ops too\nlabels: type:ops\n"
		"body: [{type: textarea, attributes: {label: B}}]\n";
	static const char *named = "name: Ops\n"
		"body: [{type: textarea, attributes: {label: C}}]\n";
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_formset *set = NULL;
	const pmbot_form *f;

	(void)state;
	assert_int_equal(pmbot_formset_new(&set, NULL), PMBOT_OK);
	assert_null(pmbot_formset_find_type(set, "ops"));
	assert_string_equal(pmbot_formset_find_type(set, "benchmark")->title_prefix, "[bench] ");
	assert_null(pmbot_formset_find_type(set, "Not a type"));
	assert_int_equal(pmbot_formset_add(set, "t/b.yml", ops_b, strlen(ops_b), &d), PMBOT_OK);
	assert_int_equal(pmbot_formset_add(set, "t/a.yml", ops_a, strlen(ops_a), &d), PMBOT_OK);
	/* A new type is named by a label only: a name alone names none. */
	assert_int_equal(pmbot_formset_add(set, "t/c.yml", named, strlen(named), &d), PMBOT_OK);
	assert_non_null(f = pmbot_formset_find_type(set, "ops"));
	assert_false(f->builtin);
	assert_string_equal(f->path, "t/a.yml");
	assert_string_equal(f->type_label, "type:ops");
	assert_null(pmbot_formset_find_type(set, "opsx"));
	assert_int_equal(pmbot_formset_count(set), 1);
	assert_int_equal(d.count, 2);
	assert_string_equal(d.items[0].code, "FORM_DUPLICATE_TYPE");
	assert_string_equal(d.items[1].code, "FORM_UNKNOWN_TYPE");
	assert_null(pmbot_formset_find(set, PMBOT_NODE_OTHER));
	pmbot_formset_free(set);
	pmbot_diag_list_free(&d);
}

static void test_forms__builtin_open_type(void **state)
{
	pmbot_form *f = NULL, *task = NULL;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_form_builtin_open(&f, "load-test"), PMBOT_OK);
	assert_int_equal(pmbot_form_builtin(&task, PMBOT_NODE_TASK), PMBOT_OK);
	assert_string_equal(f->title_prefix, "[load-test] ");
	assert_string_equal(f->type_name, "load-test");
	assert_int_equal(f->type, PMBOT_NODE_OTHER);
	assert_true(f->builtin);
	assert_int_equal(f->n_fields, task->n_fields);
	for (i = 0; i < f->n_fields; i++)
		assert_string_equal(f->fields[i].label, task->fields[i].label);
	pmbot_form_free(f);
	pmbot_form_free(task);
	assert_int_equal(pmbot_form_builtin_open(&f, "Ops"), PMBOT_EINVALID);
	assert_null(f);
}

static void test_forms__set_prefers_repository_forms_and_skips_config(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_formset *set = NULL;
	const pmbot_form *f;

	(void)state;
	assert_int_equal(pmbot_formset_new(&set, NULL), PMBOT_OK);
	add_fixture(set, "feature.yml", &d, PMBOT_OK);
	add_fixture(set, "bug.yml", &d, PMBOT_OK);
	add_fixture(set, "config.yml", &d, PMBOT_OK);
	assert_int_equal(d.count, 0);
	assert_int_equal(pmbot_formset_count(set), 2);
	f = pmbot_formset_find(set, PMBOT_NODE_FEATURE);
	assert_false(f->builtin);
	assert_string_equal(f->path, FIXTURES "feature.yml");
	assert_false(pmbot_formset_find(set, PMBOT_NODE_BUG)->builtin);
	assert_true(pmbot_formset_find(set, PMBOT_NODE_TASK)->builtin);
	pmbot_formset_free(set);
	pmbot_diag_list_free(&d);
}

static void test_forms__set_skips_a_form_without_type_with_a_warning(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_formset *set = NULL;
	const pmbot_diag *w;

	(void)state;
	assert_int_equal(pmbot_formset_new(&set, NULL), PMBOT_OK);
	add_fixture(set, "question.yml", &d, PMBOT_OK);
	assert_int_equal(pmbot_formset_count(set), 0);
	w = pmbot_diag_list_find(&d, "FORM_UNKNOWN_TYPE");
	assert_non_null(w);
	assert_int_equal(w->severity, PMBOT_SEV_WARNING);
	assert_string_equal(w->file, FIXTURES "question.yml");
	pmbot_formset_free(set);
	pmbot_diag_list_free(&d);
}

static void test_forms__set_keeps_a_rejected_form_out(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_formset *set = NULL;
	const char *bad = "name: Feature\nbody: []\n";

	(void)state;
	assert_int_equal(pmbot_formset_new(&set, NULL), PMBOT_OK);
	assert_int_equal(pmbot_formset_add(set, "t/feature.yml", bad, strlen(bad), &d),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_formset_count(set), 0);
	assert_true(pmbot_formset_find(set, PMBOT_NODE_FEATURE)->builtin);
	pmbot_formset_free(set);
	pmbot_diag_list_free(&d);
}

static const char *dup_a = "name: Feature\nbody: [{type: input, attributes: {label: A}}]\n";
static const char *dup_b = "name: Feature\nbody: [{type: input, attributes: {label: B}}]\n";

static void test_forms__duplicate_type_picks_the_first_path_in_any_order(void **state)
{
	int order;

	(void)state;
	for (order = 0; order < 2; order++) {
		pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
		pmbot_formset *set = NULL;
		const pmbot_diag *w;

		assert_int_equal(pmbot_formset_new(&set, NULL), PMBOT_OK);
		if (order == 0) {
			assert_int_equal(pmbot_formset_add(set, "t/a.yml", dup_a, strlen(dup_a), &d), 0);
			assert_int_equal(pmbot_formset_add(set, "t/b.yml", dup_b, strlen(dup_b), &d), 0);
		} else {
			assert_int_equal(pmbot_formset_add(set, "t/b.yml", dup_b, strlen(dup_b), &d), 0);
			assert_int_equal(pmbot_formset_add(set, "t/a.yml", dup_a, strlen(dup_a), &d), 0);
		}
		assert_int_equal(pmbot_formset_count(set), 1);
		assert_string_equal(pmbot_formset_find(set, PMBOT_NODE_FEATURE)->fields[0].label, "A");
		w = pmbot_diag_list_find(&d, "FORM_DUPLICATE_TYPE");
		assert_non_null(w);
		assert_string_equal(w->file, "t/b.yml");
		pmbot_formset_free(set);
		pmbot_diag_list_free(&d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms__reads_headings_in_order_without_markdown_blocks),
		cmocka_unit_test(test_forms__records_ids_required_flags_and_lines),
		cmocka_unit_test(test_forms__title_prefix_drops_the_placeholder_and_ends_in_one_space),
		cmocka_unit_test(test_forms__title_without_space_gets_one),
		cmocka_unit_test(test_forms__labels_as_list_or_comma_separated_string),
		cmocka_unit_test(test_forms__type_falls_back_to_the_name),
		cmocka_unit_test(test_forms__type_label_wins_over_the_name),
		cmocka_unit_test(test_forms__type_label_follows_the_label_scheme),
		cmocka_unit_test(test_forms__form_without_type_parses_with_has_type_zero),
		cmocka_unit_test(test_forms__maps_headings_to_node_fields),
		cmocka_unit_test(test_forms__field_kinds_are_set_while_parsing),
		cmocka_unit_test(test_forms__rejects_yaml_that_does_not_parse),
		cmocka_unit_test(test_forms__rejects_a_document_that_is_not_a_mapping),
		cmocka_unit_test(test_forms__rejects_a_form_without_name),
		cmocka_unit_test(test_forms__rejects_an_unquoted_bracket_title),
		cmocka_unit_test(test_forms__rejects_labels_that_are_not_strings),
		cmocka_unit_test(test_forms__rejects_a_missing_or_empty_body),
		cmocka_unit_test(test_forms__rejects_unknown_block_types),
		cmocka_unit_test(test_forms__rejects_a_field_without_label),
		cmocka_unit_test(test_forms__rejects_a_heading_that_would_break_the_body),
		cmocka_unit_test(test_forms__rejects_headings_the_body_cannot_tell_apart),
		cmocka_unit_test(test_forms__rejects_duplicate_ids),
		cmocka_unit_test(test_forms__rejects_a_body_of_only_markdown),
		cmocka_unit_test(test_forms__rejects_labels_naming_two_types),
		cmocka_unit_test(test_forms__reports_every_problem_not_only_the_first),
		cmocka_unit_test(test_forms__config_yml_and_markdown_templates_are_not_forms),
		cmocka_unit_test(test_forms__builtin_forms_carry_the_tracked_headings),
		cmocka_unit_test(test_forms__builtin_rejects_an_unknown_type),
		cmocka_unit_test(test_forms__set_without_repository_forms_uses_builtins),
		cmocka_unit_test(test_forms__set_finds_open_types_by_name),
		cmocka_unit_test(test_forms__builtin_open_type),
		cmocka_unit_test(test_forms__set_prefers_repository_forms_and_skips_config),
		cmocka_unit_test(test_forms__set_skips_a_form_without_type_with_a_warning),
		cmocka_unit_test(test_forms__set_keeps_a_rejected_form_out),
		cmocka_unit_test(test_forms__duplicate_type_picks_the_first_path_in_any_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
