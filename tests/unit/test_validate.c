#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/report.h"
#include "pmbot/strmap.h"
#include "pmbot/banned.h"

/* Loads `md` and validates it; returns the validate result, diagnostics in *d. */
static int check(const char *md, pmbot_diag_list *d)
{
	pmbot_report *r = NULL;
	int rc = pmbot_report_load(&r, "r.md", md, strlen(md), NULL, d);

	if (rc == 0)
		rc = pmbot_report_validate(r, d);
	pmbot_report_free(r);
	return rc;
}

static const pmbot_diag *find_at(const pmbot_diag_list *d, const char *code, const char *path)
{
	size_t i;

	for (i = 0; i < d->count; i++)
		if (!strcmp(d->items[i].code, code) && !strcmp(d->items[i].path, path))
			return &d->items[i];
	return NULL;
}

static size_t count_code(const pmbot_diag_list *d, const char *code)
{
	size_t i, n = 0;

	for (i = 0; i < d->count; i++)
		n += !strcmp(d->items[i].code, code);
	return n;
}

#define HEAD "```pm-bot:report-ir/v1\n" \
	"schema_version: report_ir/v1\n" \
	"report: {title: T, generated_at: 2026-02-22, scope: {org: acme}}\n"
#define TAIL "```\n"

/*
 * What a valid report hands over: each id at its place + 1 (epics, then
 * features, then tasks, whatever order the document has them in), and
 * every reference between items, in the order validation meets them.
 */
static void test_validate__the_index_has_every_id_and_reference_only_when_valid(void **state)
{
	static const char *const want[] = { "epic:z", "epic:a", "feat:b", "task:d", "task:c" };
	static const pmbot_report_link links[] = {
		{ 1, 2, PMBOT_LINK_PARENT },     /* epic:a features */
		{ 1, 2, PMBOT_LINK_PARENT },     /* feat:b epic_id */
		{ 2, 3, PMBOT_LINK_PARENT },     /* task:d feature_id */
		{ 3, 2, PMBOT_LINK_BLOCKED_BY }, /* task:d blocked_by (the URL is no link) */
		{ 2, 4, PMBOT_LINK_PARENT },     /* task:c feature_id */
		{ 4, 3, PMBOT_LINK_DEPENDS_ON }, /* task:c depends_on */
	};
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report_index ix = PMBOT_REPORT_INDEX_INIT;
	pmbot_report *r = NULL;
	const char *md = HEAD
		"tasks:\n"
		"  - {stable_id: 'task:d', title: D, area: x, priority: P2, feature_id: 'feat:b',\n"
		"     blocked_by: ['feat:b', 'https://github.com/acme/widgets/issues/1']}\n"
		"  - {stable_id: 'task:c', title: C, area: x, priority: P2, feature_id: 'feat:b',\n"
		"     depends_on: ['task:d']}\n"
		"features:\n"
		"  - {stable_id: 'feat:b', title: B, area: x, priority: P1, epic_id: 'epic:a'}\n"
		"epics:\n"
		"  - {stable_id: 'epic:z', title: Z, area: x, priority: P1}\n"
		"  - {stable_id: 'epic:a', title: A, area: x, priority: P1, features: ['feat:b']}\n"
		TAIL;
	const char *bad = HEAD
		"epics:\n"
		"  - {stable_id: 'epic:a', title: A, area: x, priority: P1}\n"
		"  - {stable_id: 'epic:a', title: B, area: x, priority: P1, depends_on: ['epic:a']}\n"
		TAIL;
	const char *stored;
	void *v;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_report_load(&r, "r.md", md, strlen(md), NULL, &d), 0);
	assert_int_equal(pmbot_report_validate_index(&ix, r, &d), PMBOT_OK);
	assert_int_equal(d.errors, 0);
	assert_int_equal(ix.ids.count, 5);
	for (i = 0; i < 5; i++) {
		assert_true(pmbot_strmap_get_key(&ix.ids, want[i], &stored, &v));
		assert_int_equal((uintptr_t)v, i + 1);
		/* The document's own string, not a copy. */
		assert_ptr_not_equal(stored, want[i]);
	}
	assert_int_equal(ix.n_links, sizeof(links) / sizeof(links[0]));
	for (i = 0; i < ix.n_links; i++) {
		assert_int_equal(ix.links[i].from, links[i].from);
		assert_int_equal(ix.links[i].to, links[i].to);
		assert_int_equal(ix.links[i].kind, links[i].kind);
	}
	pmbot_report_index_free(&ix);
	pmbot_report_free(r);
	r = NULL;

	/* Invalid: nothing handed over, whatever the validation got to. */
	assert_int_equal(pmbot_report_load(&r, "r.md", bad, strlen(bad), NULL, &d), 0);
	assert_int_equal(pmbot_report_validate_index(&ix, r, &d), PMBOT_EINVALID);
	assert_int_equal(ix.ids.count, 0);
	assert_null(ix.ids.slots);
	assert_null(ix.links);
	assert_int_equal(ix.n_links, 0);
	pmbot_report_free(r);
	pmbot_diag_list_free(&d);
}

static void test_validate__accepts_a_complete_plan_without_diagnostics(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"epics:\n"
		"  - {stable_id: 'epic:a', title: A, area: x, priority: P1, features: ['feat:b']}\n"
		"features:\n"
		"  - {stable_id: 'feat:b', title: B, area: x, priority: P1, epic_id: 'epic:a'}\n"
		"tasks:\n"
		"  - {stable_id: 'task:c', title: C, area: x, priority: P2, feature_id: 'feat:b',\n"
		"     blocked_by: ['https://github.com/acme/widgets/issues/12'], estimate_hrs: 2.5}\n"
		TAIL;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);
	pmbot_diag_list_free(&d);
}

static void test_validate__reports_every_schema_error_at_once_with_lines(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = "# title\n\n"
		"```pm-bot:report-ir/v1\n"             /* line 3 */
		"{\n"                                   /* 4 */
		"  \"schema_version\": \"report_ir/v1\",\n"
		"  \"report\": {\"title\": 5, \"scope\": {}},\n" /* 6 */
		"  \"features\": [\n"                   /* 7 */
		"    {\"title\": \"x\", \"area\": \"a\", \"priority\": \"p\"},\n" /* 8 */
		"    {\"stable_id\": \"feat:y\", \"title\": \"\", \"estimate_hrs\": \"3h\"}\n" /* 9 */
		"  ]\n"
		"}\n"
		"```\n";
	const pmbot_diag *x;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_EINVALID);
	assert_non_null(x = find_at(&d, "SCHEMA_TYPE", "/report/title"));
	assert_int_equal(x->line, 6);
	assert_non_null(x = find_at(&d, "SCHEMA_REQUIRED", "/report"));
	assert_non_null(strstr(x->message, "generated_at"));
	assert_non_null(x = find_at(&d, "SCHEMA_REQUIRED", "/report/scope"));
	assert_non_null(strstr(x->message, "org"));
	assert_non_null(x = find_at(&d, "SCHEMA_REQUIRED", "/features/0"));
	assert_int_equal(x->line, 8);
	assert_non_null(strstr(x->message, "stable_id"));
	assert_non_null(x = find_at(&d, "SCHEMA_VALUE", "/features/1/title"));
	assert_int_equal(x->line, 9);
	assert_non_null(find_at(&d, "SCHEMA_TYPE", "/features/1/estimate_hrs"));
	assert_string_equal(x->file, "r.md");
	pmbot_diag_list_free(&d);
}

static void test_validate__rejects_other_schema_versions(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = "```pm-bot:report-ir/v1\n"
		"schema_version: report_ir/v2\n"
		"report: {title: T, generated_at: 2026-02-22, scope: {org: acme}}\n"
		"```\n";

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_EINVALID);
	assert_non_null(find_at(&d, "SCHEMA_VERSION", "/schema_version"));
	assert_int_equal(find_at(&d, "SCHEMA_VERSION", "/schema_version")->line, 2);
	pmbot_diag_list_free(&d);
}

static void test_validate__rejects_a_document_that_is_not_an_object(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(check("```pm-bot:report-ir/v1\n[1, 2]\n```\n", &d), PMBOT_EINVALID);
	assert_non_null(find_at(&d, "SCHEMA_TYPE", ""));
	pmbot_diag_list_free(&d);
}

static void test_validate__checks_dates_calendar_and_format(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *ok[] = { "2026-02-22", "2024-02-29", "2026-02-22T10:00:00Z",
		"2026-02-22T10:00:00.123+02:00", "2026-02-22T10:00" };
	const char *bad[] = { "2026-02-30", "2025-02-29", "22/02/2026", "2026-13-01",
		"2026-02-22T25:00:00Z", "2026-02-22Tnoon", "yesterday" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char md[256];

		snprintf(md, sizeof(md), "```pm-bot:report-ir/v1\nschema_version: report_ir/v1\n"
			"report: {title: T, generated_at: '%s', scope: {org: a}}\n```\n", ok[i]);
		assert_int_equal(check(md, &d), PMBOT_OK);
		assert_null(pmbot_diag_list_find(&d, "SCHEMA_FORMAT"));
		pmbot_diag_list_free(&d);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char md[256];

		snprintf(md, sizeof(md), "```pm-bot:report-ir/v1\nschema_version: report_ir/v1\n"
			"report: {title: T, generated_at: '%s', scope: {org: a}}\n```\n", bad[i]);
		assert_int_equal(check(md, &d), PMBOT_EINVALID);
		assert_non_null(find_at(&d, "SCHEMA_FORMAT", "/report/generated_at"));
		pmbot_diag_list_free(&d);
	}
}

static void test_validate__finds_duplicate_stable_ids_across_lists(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"features:\n"
		"  - {stable_id: 'x:dup', title: A, area: a, priority: p}\n" /* line 5 */
		"tasks:\n"
		"  - {stable_id: 'x:dup', title: B, area: a, priority: p}\n" /* line 7 */
		"  - {stable_id: 'x:dup', title: C, area: a, priority: p}\n"
		TAIL;
	const pmbot_diag *x;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_EINVALID);
	assert_int_equal(count_code(&d, "DUPLICATE_STABLE_ID"), 2);
	assert_non_null(x = find_at(&d, "DUPLICATE_STABLE_ID", "/tasks/0/stable_id"));
	assert_int_equal(x->line, 7);
	assert_non_null(strstr(x->message, "/features/0"));
	assert_non_null(strstr(x->message, "line 5"));
	pmbot_diag_list_free(&d);
}

static void test_validate__resolves_parent_and_dependency_references(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"epics:\n"
		"  - {stable_id: 'epic:a', title: A, area: a, priority: p, features: ['feat:nope', 'task:t']}\n"
		"features:\n"
		"  - {stable_id: 'feat:b', title: B, area: a, priority: p, epic_id: 'epic:missing',\n"
		"     tasks: ['task:ghost'], depends_on: ['feat:c', 'https://github.com/a/b/issues/3', 'a/b#3']}\n"
		"  - {stable_id: 'feat:c', title: C, area: a, priority: p, epic_id: 'feat:b'}\n"
		"tasks:\n"
		"  - {stable_id: 'task:t', title: T, area: a, priority: p, feature_id: 'epic:a',\n"
		"     blocked_by: ['https://github.com/a/b/pull/3']}\n"
		TAIL;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_EINVALID);
	assert_non_null(find_at(&d, "UNKNOWN_FEATURE", "/epics/0/features/0"));
	assert_non_null(find_at(&d, "UNKNOWN_FEATURE", "/epics/0/features/1"));
	assert_non_null(find_at(&d, "UNKNOWN_EPIC", "/features/0/epic_id"));
	assert_non_null(find_at(&d, "UNKNOWN_TASK", "/features/0/tasks/0"));
	assert_non_null(find_at(&d, "UNKNOWN_DEPENDENCY", "/features/0/depends_on/2"));
	assert_null(find_at(&d, "UNKNOWN_DEPENDENCY", "/features/0/depends_on/0"));
	assert_null(find_at(&d, "UNKNOWN_DEPENDENCY", "/features/0/depends_on/1"));
	assert_non_null(strstr(find_at(&d, "UNKNOWN_EPIC", "/features/1/epic_id")->message,
		"names a feature"));
	assert_non_null(find_at(&d, "UNKNOWN_FEATURE", "/tasks/0/feature_id"));
	assert_non_null(find_at(&d, "UNKNOWN_DEPENDENCY", "/tasks/0/blocked_by/0"));
	pmbot_diag_list_free(&d);
}

/* A reference one slip away from an item of the right kind names it, as unknown fields do. */
static void test_validate__unknown_references_suggest_the_nearest_id(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"epics:\n"
		"  - {stable_id: 'epic:a', title: A, area: a, priority: p}\n"
		"features:\n"
		"  - {stable_id: 'feat:drain', title: B, area: a, priority: p, epic_id: 'epic:b'}\n"
		"tasks:\n"
		"  - {stable_id: 'task:hook', title: T, area: a, priority: p, feature_id: 'feat:drian',\n"
		"     blocked_by: ['task:hok', 'task:zzzzzzzz']}\n"
		"  - {stable_id: 'task:other', title: T, area: a, priority: p, feature_id: 'feat:drain'}\n"
		TAIL;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_EINVALID);
	assert_string_equal(find_at(&d, "UNKNOWN_FEATURE", "/tasks/0/feature_id")->message,
		"feature_id 'feat:drian' names no feature (did you mean 'feat:drain'?)");
	assert_string_equal(find_at(&d, "UNKNOWN_EPIC", "/features/0/epic_id")->message,
		"epic_id 'epic:b' names no epic (did you mean 'epic:a'?)");
	assert_non_null(strstr(find_at(&d, "UNKNOWN_DEPENDENCY", "/tasks/0/blocked_by/0")->message,
		"(did you mean 'task:hook'?)"));
	/* nothing near: no guess */
	assert_null(strstr(find_at(&d, "UNKNOWN_DEPENDENCY", "/tasks/0/blocked_by/1")->message,
		"did you mean"));
	pmbot_diag_list_free(&d);
}

static void test_validate__parent_lists_must_agree_with_child_ids(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"epics:\n"
		"  - {stable_id: 'epic:a', title: A, area: a, priority: p, features: ['feat:x']}\n"
		"  - {stable_id: 'epic:b', title: B, area: a, priority: p, features: ['feat:y']}\n"
		"  - {stable_id: 'epic:c', title: C, area: a, priority: p, features: ['feat:y']}\n"
		"features:\n"
		"  - {stable_id: 'feat:x', title: X, area: a, priority: p, epic_id: 'epic:b'}\n"
		"  - {stable_id: 'feat:y', title: Y, area: a, priority: p}\n"
		"  - {stable_id: 'feat:z', title: Z, area: a, priority: p, epic_id: 'epic:a', tasks: ['task:t']}\n"
		"tasks:\n"
		"  - {stable_id: 'task:t', title: T, area: a, priority: p, feature_id: 'feat:z'}\n"
		TAIL;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_EINVALID);
	/* feat:x: listed by epic:a, but its epic_id says epic:b */
	assert_int_equal(count_code(&d, "CONFLICTING_PARENT"), 2);
	assert_non_null(find_at(&d, "CONFLICTING_PARENT", "/features/0/epic_id"));
	/* feat:y listed by two epics */
	assert_non_null(find_at(&d, "CONFLICTING_PARENT", "/epics/2/features/0"));
	pmbot_diag_list_free(&d);
}

static void test_validate__missing_area_and_priority_are_triage_warnings(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"tasks:\n"
		"  - {stable_id: 'task:a', title: A}\n"
		"  - {stable_id: 'task:b', title: B, area: '', priority: P2}\n"
		TAIL;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_OK);
	assert_int_equal(d.errors, 0);
	assert_non_null(find_at(&d, "MISSING_AREA", "/tasks/0"));
	assert_non_null(find_at(&d, "MISSING_PRIORITY", "/tasks/0"));
	assert_non_null(find_at(&d, "MISSING_AREA", "/tasks/1"));
	assert_null(find_at(&d, "MISSING_PRIORITY", "/tasks/1"));
	assert_int_equal(find_at(&d, "MISSING_AREA", "/tasks/0")->severity, PMBOT_SEV_WARNING);
	pmbot_diag_list_free(&d);
}

static void test_validate__blank_and_placeholder_values_count_as_missing(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"tasks:\n"
		"  - {stable_id: 'task:a', title: A, area: '   ', priority: \"\\n\"}\n"
		"  - {stable_id: 'task:b', title: B, area: '_No response_', priority: \"\\u00a0\"}\n"
		"  - {stable_id: 'task:c', title: C, area: ' x ', priority: P2}\n"
		TAIL;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_OK);
	assert_non_null(find_at(&d, "MISSING_AREA", "/tasks/0"));
	assert_non_null(find_at(&d, "MISSING_PRIORITY", "/tasks/0"));
	assert_non_null(find_at(&d, "MISSING_AREA", "/tasks/1"));
	assert_non_null(find_at(&d, "MISSING_PRIORITY", "/tasks/1"));
	assert_null(find_at(&d, "MISSING_AREA", "/tasks/2"));
	assert_null(find_at(&d, "MISSING_PRIORITY", "/tasks/2"));
	pmbot_diag_list_free(&d);
}

static void test_validate__render_refusals_are_validation_errors(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"tasks:\n"
		"  - {stable_id: 'task:a', title: '   ', area: x, priority: P1}\n"
		"  - {stable_id: 'task:b c', title: B, area: x, priority: P1}\n"
		"  - {stable_id: \"task:\\u00a0d\", title: D, area: x, priority: P1}\n"
		"  - {stable_id: 'task:e-->', title: E, area: x, priority: P1}\n"
		"  - {stable_id: 'task:f', title: '"
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', area: x, priority: P1}\n"
		"  - {stable_id: 'task:g', title: G, area: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, priority: P1}\n"
		"  - {stable_id: 'task:h', title: H, area: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, priority: P1}\n"
		TAIL;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_EINVALID);
	assert_non_null(find_at(&d, "RENDER_TITLE_EMPTY", "/tasks/0/title"));
	assert_non_null(find_at(&d, "RENDER_UNSAFE_ID", "/tasks/1/stable_id"));
	assert_non_null(find_at(&d, "RENDER_UNSAFE_ID", "/tasks/2/stable_id"));
	assert_non_null(find_at(&d, "RENDER_UNSAFE_ID", "/tasks/3/stable_id"));
	assert_int_equal(find_at(&d, "RENDER_UNSAFE_ID", "/tasks/3/stable_id")->line, 8);
	/* 257 characters: one over; 51 and 50 characters with "area:". */
	assert_non_null(find_at(&d, "RENDER_TITLE_TOO_LONG", "/tasks/4/title"));
	assert_non_null(find_at(&d, "RENDER_LABEL_TOO_LONG", "/tasks/5/area"));
	assert_null(find_at(&d, "RENDER_LABEL_TOO_LONG", "/tasks/6/area"));
	assert_int_equal(d.errors, 6);
	pmbot_diag_list_free(&d);
}

static void test_validate__an_empty_parent_id_is_one_error(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"features:\n"
		"  - {stable_id: 'feat:f', title: F, area: x, priority: p, epic_id: ''}\n"
		"tasks:\n"
		"  - {stable_id: 'task:t', title: T, area: x, priority: p, feature_id: ''}\n"
		"  - {stable_id: 'task:u', title: '', area: x, priority: p}\n"
		TAIL;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_EINVALID);
	assert_int_equal(d.errors, 3);
	assert_non_null(find_at(&d, "SCHEMA_VALUE", "/features/0/epic_id"));
	assert_non_null(find_at(&d, "SCHEMA_VALUE", "/tasks/1/title"));
	assert_non_null(find_at(&d, "SCHEMA_VALUE", "/tasks/0/feature_id"));
	assert_int_equal(count_code(&d, "UNKNOWN_EPIC") + count_code(&d, "UNKNOWN_FEATURE"), 0);
	pmbot_diag_list_free(&d);
}

static void test_validate__stable_id_recommendations_are_warnings(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"features:\n"
		"  - {stable_id: 'Feature_One', title: A, area: a, priority: p}\n"
		"  - {stable_id: 'task:misfiled', title: B, area: a, priority: p}\n"
		"tasks:\n"
		"  - {stable_id: 'bug:crash', type: bug, title: C, area: a, priority: p}\n"
		"  - {stable_id: 'bench:load', type: benchmark, title: D, area: a, priority: p}\n"
		"  - {stable_id: 'task:UPPER', title: E, area: a, priority: p}\n"
		TAIL;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_OK);
	assert_non_null(find_at(&d, "STABLE_ID_FORMAT", "/features/0/stable_id"));
	assert_non_null(find_at(&d, "STABLE_ID_FORMAT", "/features/1/stable_id"));
	assert_null(find_at(&d, "STABLE_ID_FORMAT", "/tasks/0/stable_id"));
	assert_null(find_at(&d, "STABLE_ID_FORMAT", "/tasks/1/stable_id"));
	assert_non_null(find_at(&d, "STABLE_ID_FORMAT", "/tasks/2/stable_id"));
	pmbot_diag_list_free(&d);
}

static void test_validate__unknown_fields_warn_with_a_suggestion_and_x_keys_pass(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"x_org: {anything: [1, 2]}\n"
		"tasks:\n"
		"  - {stable_id: 'task:a', title: A, area: a, priorty: p, x_team: core}\n"
		TAIL;
	const pmbot_diag *x;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_OK);
	assert_non_null(x = find_at(&d, "UNKNOWN_FIELD", "/tasks/0/priorty"));
	assert_non_null(strstr(x->message, "did you mean 'priority'"));
	assert_null(find_at(&d, "UNKNOWN_FIELD", "/x_org"));
	assert_null(find_at(&d, "UNKNOWN_FIELD", "/tasks/0/x_team"));
	pmbot_diag_list_free(&d);
}

static void test_validate__task_type_is_an_open_lower_case_word(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"tasks:\n"
		"  - {stable_id: 'story:a', title: A, area: a, priority: p, type: story}\n"
		"  - {stable_id: 'load-test2:b', title: B, area: a, priority: p, type: load-test2}\n"
		"  - {stable_id: 'story:c', title: C, area: a, priority: p, type: story}\n"
		TAIL;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_OK);
	assert_int_equal(count_code(&d, "STABLE_ID_FORMAT"), 0);
	pmbot_diag_list_free(&d);
}

static void test_validate__task_type_not_a_word_is_refused_with_a_suggestion(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *x;
	const char *md = HEAD
		"tasks:\n"
		"  - {stable_id: 'bug:a', title: A, area: a, priority: p, type: Bug}\n"
		"  - {stable_id: 'ops:b', title: B, area: a, priority: p, type: ' ops '}\n"
		"  - {stable_id: 'task:c', title: C, area: a, priority: p, type: 'load test'}\n"
		"  - {stable_id: 'task:d', title: D, area: a, priority: p, type: ''}\n"
		"  - {stable_id: 'task:e', title: E, area: a, priority: p, type: snake_case}\n"
		"  - {stable_id: 'task:f', title: F, area: a, priority: p, type: 7up}\n"
		"  - {stable_id: 'task:g', title: G, area: a, priority: p, type: 3}\n"
		TAIL;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_EINVALID);
	assert_non_null(x = find_at(&d, "SCHEMA_VALUE", "/tasks/0/type"));
	assert_non_null(strstr(x->message, "did you mean 'bug'?"));
	assert_non_null(x = find_at(&d, "SCHEMA_VALUE", "/tasks/1/type"));
	assert_non_null(strstr(x->message, "did you mean 'ops'?"));
	assert_non_null(x = find_at(&d, "SCHEMA_VALUE", "/tasks/2/type"));
	assert_null(strstr(x->message, "did you mean"));
	assert_non_null(find_at(&d, "SCHEMA_VALUE", "/tasks/3/type"));
	assert_non_null(find_at(&d, "SCHEMA_VALUE", "/tasks/4/type"));
	assert_non_null(find_at(&d, "SCHEMA_VALUE", "/tasks/5/type"));
	assert_non_null(find_at(&d, "SCHEMA_TYPE", "/tasks/6/type"));
	assert_int_equal(count_code(&d, "SCHEMA_ENUM"), 0);
	pmbot_diag_list_free(&d);
}

static void test_validate__type_label_must_fit(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"tasks:\n"
		/* "type:" + 45 characters = 50: fits; one more does not. */
		"  - {stable_id: 'a:a', title: A, area: a, priority: p, "
		"type: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}\n"
		"  - {stable_id: 'b:b', title: B, area: a, priority: p, "
		"type: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb}\n"
		TAIL;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_EINVALID);
	assert_null(find_at(&d, "RENDER_LABEL_TOO_LONG", "/tasks/0/type"));
	assert_non_null(find_at(&d, "RENDER_LABEL_TOO_LONG", "/tasks/1/type"));
	pmbot_diag_list_free(&d);
}

static void test_validate__detects_duplicates_in_a_large_report(void **state)
{
	pmbot_buf md = PMBOT_BUF_INIT;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_buf_puts(&md, HEAD "tasks:\n"), 0);
	for (i = 0; i < 20000; i++)
		assert_int_equal(pmbot_buf_printf(&md,
			"  - {stable_id: 'task:t%zu', title: T, area: a, priority: p}\n",
			i == 19999 ? (size_t)7 : i), 0);
	assert_int_equal(pmbot_buf_puts(&md, TAIL), 0);
	assert_int_equal(check(md.buf, &d), PMBOT_EINVALID);
	assert_int_equal(d.count, 1);
	assert_non_null(find_at(&d, "DUPLICATE_STABLE_ID", "/tasks/19999/stable_id"));
	pmbot_diag_list_free(&d);
	pmbot_buf_free(&md);
}

static void test_validate__issue_urls(void **state)
{
	(void)state;
	assert_true(pmbot_report_is_issue_url("https://github.com/acme/widgets/issues/12"));
	assert_true(pmbot_report_is_issue_url("https://github.com/a-b/c.d_e/issues/1"));
	assert_false(pmbot_report_is_issue_url("https://github.com/acme/widgets/issues/0"));
	assert_false(pmbot_report_is_issue_url("https://github.com/acme/widgets/pull/12"));
	assert_false(pmbot_report_is_issue_url("https://github.com/acme/issues/12"));
	assert_false(pmbot_report_is_issue_url("http://github.com/acme/widgets/issues/12"));
	assert_false(pmbot_report_is_issue_url("https://github.com/acme/widgets/issues/12x"));
	assert_false(pmbot_report_is_issue_url("acme/widgets#12"));
}

/* Every field of each kind is read as that field, whatever its key's length. */
static void test_validate__every_field_of_each_kind_is_known(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"epics:\n"
		"  - {stable_id: 'epic:a', title: A, area: x, priority: P1, status: Todo, size: M,\n"
		"     estimate_hrs: 3, risk: r, blocked_by: [], depends_on: [], links: [l],\n"
		"     acceptance_criteria: [c], owners: [o], objective: ob,\n"
		"     milestones: [{title: m, target_date: 2026-03-01}], features: ['feat:b']}\n"
		"features:\n"
		"  - {stable_id: 'feat:b', title: B, area: x, priority: P1, status: Todo, size: M,\n"
		"     estimate_hrs: 0, risk: r, blocked_by: [], depends_on: [], links: [l],\n"
		"     acceptance_criteria: [c], owners: [o], epic_id: 'epic:a', goal: g,\n"
		"     tasks: ['bug:c']}\n"
		"tasks:\n"
		"  - {stable_id: 'bug:c', title: C, area: x, priority: P1, status: Todo, size: M,\n"
		"     estimate_hrs: 1.5, risk: r, blocked_by: [], depends_on: [], links: [l],\n"
		"     acceptance_criteria: [c], owners: [o], feature_id: 'feat:b', type: bug}\n"
		TAIL;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);
	pmbot_diag_list_free(&d);
}

/*
 * A field of another kind is unknown (an epic's "type", a task's "goal"),
 * and so is a key that only shares a length or a first letter with one.
 */
static void test_validate__fields_of_other_kinds_and_near_keys_are_unknown(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD
		"epics:\n"
		"  - {stable_id: 'epic:a', title: A, area: x, priority: P1, type: bug, tasks: []}\n"
		"tasks:\n"
		"  - {stable_id: 'task:c', title: C, area: x, priority: P1, goal: g, tipe: bug,\n"
		"     acceptance_criterion: [c], a: 1, '': 2, stable_idx: s, objectiv: o}\n"
		TAIL;
	static const char *const unknown[] = {
		"/epics/0/type", "/epics/0/tasks", "/tasks/0/goal", "/tasks/0/tipe",
		"/tasks/0/acceptance_criterion", "/tasks/0/a", "/tasks/0/", "/tasks/0/stable_idx",
		"/tasks/0/objectiv",
	};
	size_t i;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_OK);
	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		if (!find_at(&d, "UNKNOWN_FIELD", unknown[i]))
			fail_msg("no UNKNOWN_FIELD at %s", unknown[i]);
	assert_int_equal(count_code(&d, "UNKNOWN_FIELD"), 9);
	/* An epic's "type" is not its type: its id's prefix stays "epic". */
	assert_int_equal(count_code(&d, "STABLE_ID_FORMAT"), 0);
	pmbot_diag_list_free(&d);
}

/* Collects "code path message" lines, the line numbers left out. */
static void diag_lines(pmbot_buf *out, const pmbot_diag_list *d)
{
	size_t i;

	for (i = 0; i < d->count; i++)
		assert_int_equal(pmbot_buf_printf(out, "%s %s %s\n", d->items[i].code,
			d->items[i].path, d->items[i].message), 0);
}

/*
 * The same report as JSON and as YAML: validation reads both through the
 * document, so the diagnostics are the same ones in the same order.
 */
static void test_validate__json_and_yaml_blocks_give_the_same_diagnostics(void **state)
{
	const char *yaml = "```pm-bot:report-ir/v1\n"
		"schema_version: report_ir/v1\n"
		"report: {title: T, generated_at: 2026-02-30, scope: {org: '', repos: [a, 1]},\n"
		"  source: {kind: 3, urll: u}}\n"
		"zzz: 1\n"
		"epics:\n"
		"  - {stable_id: 'epic:a', title: '', area: ' ', priority: 1, features: ['feat:b', 'feat:q'],\n"
		"     milestones: [{title: m, target_date: 2026-02-29, x: 1}, 3]}\n"
		"features:\n"
		"  - {stable_id: 'feat:b', title: B, epic_id: 'epic:z', estimate_hrs: -1, tasks: 7}\n"
		"  - {stable_id: 'epic:a', title: dup}\n"
		"tasks:\n"
		"  - {stable_id: 'Task:C c', title: C, area: x, priority: P1, feature_id: 'feat:b',\n"
		"     type: Bug, depends_on: ['task:d', '', 5], blocked_by: 'x'}\n"
		"  - 12\n"
		"  - {title: no id, feature_id: 'epic:a'}\n"
		"notes: {}\n"
		TAIL;
	const char *json = "```pm-bot:report-ir/v1\n"
		"{\"schema_version\": \"report_ir/v1\",\n"
		"\"report\": {\"title\": \"T\", \"generated_at\": \"2026-02-30\",\n"
		"  \"scope\": {\"org\": \"\", \"repos\": [\"a\", 1]}, \"source\": {\"kind\": 3, \"urll\": \"u\"}},\n"
		"\"zzz\": 1,\n"
		"\n" /* the epic on line 7 as in the YAML: DUPLICATE_STABLE_ID names its line */
		"\"epics\": [{\"stable_id\": \"epic:a\", \"title\": \"\", \"area\": \" \", \"priority\": 1,\n"
		"  \"features\": [\"feat:b\", \"feat:q\"],\n"
		"  \"milestones\": [{\"title\": \"m\", \"target_date\": \"2026-02-29\", \"x\": 1}, 3]}],\n"
		"\"features\": [{\"stable_id\": \"feat:b\", \"title\": \"B\", \"epic_id\": \"epic:z\",\n"
		"  \"estimate_hrs\": -1, \"tasks\": 7}, {\"stable_id\": \"epic:a\", \"title\": \"dup\"}],\n"
		"\"tasks\": [{\"stable_id\": \"Task:C c\", \"title\": \"C\", \"area\": \"x\", \"priority\": \"P1\",\n"
		"  \"feature_id\": \"feat:b\", \"type\": \"Bug\", \"depends_on\": [\"task:d\", \"\", 5],\n"
		"  \"blocked_by\": \"x\"}, 12, {\"title\": \"no id\", \"feature_id\": \"epic:a\"}],\n"
		"\"notes\": {}}\n"
		TAIL;
	pmbot_diag_list dy = PMBOT_DIAG_LIST_INIT, dj = PMBOT_DIAG_LIST_INIT;
	pmbot_buf ly = PMBOT_BUF_INIT, lj = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(check(yaml, &dy), PMBOT_EINVALID);
	assert_int_equal(check(json, &dj), PMBOT_EINVALID);
	diag_lines(&ly, &dy);
	diag_lines(&lj, &dj);
	assert_string_equal(ly.buf, lj.buf);
	assert_true(dy.count >= 20);
	/* Each at its own text. */
	assert_int_equal(find_at(&dy, "UNKNOWN_EPIC", "/features/0/epic_id")->line, 10);
	assert_int_equal(find_at(&dy, "UNKNOWN_EPIC", "/features/0/epic_id")->column, 37);
	assert_int_equal(find_at(&dj, "UNKNOWN_EPIC", "/features/0/epic_id")->line, 10);
	assert_int_equal(find_at(&dj, "UNKNOWN_EPIC", "/features/0/epic_id")->column, 52);
	pmbot_diag_list_free(&dy);
	pmbot_diag_list_free(&dj);
	pmbot_buf_free(&ly);
	pmbot_buf_free(&lj);
}

/* Values an alias copies are reported at the text they were copied from. */
static void test_validate__a_yaml_alias_is_reported_where_its_text_is(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const char *md = HEAD                                           /* lines 1-3 */
		"tasks:\n"                                              /* 4 */
		"  - &t {stable_id: 'task:a', title: A, area: x, priority: P1, size: 5}\n"
		"  - *t\n"                                              /* 6 */
		TAIL;
	const pmbot_diag *x;

	(void)state;
	assert_int_equal(check(md, &d), PMBOT_EINVALID);
	assert_non_null(x = find_at(&d, "SCHEMA_TYPE", "/tasks/1/size"));
	assert_int_equal(x->line, 5);
	assert_non_null(x = find_at(&d, "DUPLICATE_STABLE_ID", "/tasks/1/stable_id"));
	assert_int_equal(x->line, 5);
	assert_non_null(strstr(x->message, "already used by /tasks/0 (line 5)"));
	pmbot_diag_list_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate__accepts_a_complete_plan_without_diagnostics),
		cmocka_unit_test(test_validate__reports_every_schema_error_at_once_with_lines),
		cmocka_unit_test(test_validate__rejects_other_schema_versions),
		cmocka_unit_test(test_validate__blank_and_placeholder_values_count_as_missing),
		cmocka_unit_test(test_validate__render_refusals_are_validation_errors),
		cmocka_unit_test(test_validate__an_empty_parent_id_is_one_error),
		cmocka_unit_test(test_validate__rejects_a_document_that_is_not_an_object),
		cmocka_unit_test(test_validate__checks_dates_calendar_and_format),
		cmocka_unit_test(test_validate__finds_duplicate_stable_ids_across_lists),
		cmocka_unit_test(test_validate__resolves_parent_and_dependency_references),
		cmocka_unit_test(test_validate__unknown_references_suggest_the_nearest_id),
		cmocka_unit_test(test_validate__parent_lists_must_agree_with_child_ids),
		cmocka_unit_test(test_validate__missing_area_and_priority_are_triage_warnings),
		cmocka_unit_test(test_validate__stable_id_recommendations_are_warnings),
		cmocka_unit_test(test_validate__unknown_fields_warn_with_a_suggestion_and_x_keys_pass),
		cmocka_unit_test(test_validate__task_type_is_an_open_lower_case_word),
		cmocka_unit_test(test_validate__task_type_not_a_word_is_refused_with_a_suggestion),
		cmocka_unit_test(test_validate__type_label_must_fit),
		cmocka_unit_test(test_validate__every_field_of_each_kind_is_known),
		cmocka_unit_test(test_validate__fields_of_other_kinds_and_near_keys_are_unknown),
		cmocka_unit_test(test_validate__json_and_yaml_blocks_give_the_same_diagnostics),
		cmocka_unit_test(test_validate__a_yaml_alias_is_reported_where_its_text_is),
		cmocka_unit_test(test_validate__detects_duplicates_in_a_large_report),
		cmocka_unit_test(test_validate__issue_urls),
		cmocka_unit_test(test_validate__the_index_has_every_id_and_reference_only_when_valid),
	};

	return cmocka_run_group_tests_name("validate", tests, NULL, NULL);
}
