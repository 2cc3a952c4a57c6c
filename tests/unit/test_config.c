#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pmbot/source.h"
#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/banned.h"

#define FILE_NAME ".github/pm-bot.yml"
#define REPO "acme/widgets"

static int parse_text(pmbot_config **cfg, const char *text, pmbot_diag_list *diags)
{
	return pmbot_config_parse(cfg, FILE_NAME, text, strlen(text), REPO, diags);
}

/* Parse a fixture under tests/fixtures/config/. */
static int parse_fixture(pmbot_config **cfg, const char *name, pmbot_diag_list *diags)
{
	pmbot_buf path = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;
	int rc;

	assert_int_equal(pmbot_buf_printf(&path, "tests/fixtures/config/%s", name), 0);
	assert_int_equal(pmbot_fs_read(&text, path.buf), 0);
	rc = pmbot_config_parse(cfg, name, text.buf, text.len, REPO, diags);
	pmbot_buf_free(&path);
	pmbot_buf_free(&text);
	return rc;
}

/* The canonical JSON of the effective config, malloc'd. */
static char *effective_json(const pmbot_config *cfg)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	json_t *j = NULL;

	assert_int_equal(pmbot_config_to_json(&j, cfg), PMBOT_OK);
	assert_int_equal(pmbot_json_canonical(&out, j), 0);
	json_decref(j);
	return pmbot_buf_detach(&out, NULL);
}

/* The diagnostic with this code and path; fails the test when there is none. */
static const pmbot_diag *expect_diag(const pmbot_diag_list *l, const char *code,
	const char *path, int line)
{
	size_t i;

	for (i = 0; i < l->count; i++) {
		const pmbot_diag *d = &l->items[i];

		if (!strcmp(d->code, code) && !strcmp(d->path, path)) {
			assert_int_equal(d->line, line);
			assert_int_equal(d->severity, PMBOT_SEV_ERROR);
			return d;
		}
	}
	for (i = 0; i < l->count; i++)
		print_message("have: %s %s %d: %s\n", l->items[i].code, l->items[i].path,
			l->items[i].line, l->items[i].message);
	fail_msg("no %s at %s", code, path);
	return NULL;
}

static void expect_message_contains(const pmbot_diag *d, const char *needle)
{
	if (!strstr(d->message, needle))
		fail_msg("message \"%s\" lacks \"%s\"", d->message, needle);
}

/* Parse `text`, expect a rejection with exactly one error: `code` at `path` on `line`. */
static const pmbot_diag *expect_single_error(pmbot_diag_list *diags, const char *text,
	const char *code, const char *path, int line)
{
	pmbot_config *cfg = (pmbot_config *)&cfg;

	assert_int_equal(parse_text(&cfg, text, diags), PMBOT_EINVALID);
	assert_null(cfg);
	assert_int_equal(diags->errors, 1);
	return expect_diag(diags, code, path, line);
}

#define DEFAULT_JSON \
	"{\"approval\":{\"min_permission\":\"write\",\"users\":[]},\"auto_approve\":[]," \
	"\"deny_operations\":[],\"github\":{\"write_budget\":\"80/60s,500/3600s\"}," \
	"\"issue_types\":\"auto\",\"labels\":{\"area\":\"area:\",\"prio\":\"prio:\"," \
	"\"size\":\"size:\",\"status\":\"status:\",\"type\":\"type:\"}," \
	"\"limits\":{\"max_items\":10000,\"max_report_bytes\":4194304,\"max_total_bytes\":8388608}," \
	"\"llm\":{\"digest_threshold\":10,\"policies\":[]},\"project\":null," \
	"\"reports\":[\"plans/**/*.md\"],\"repos\":[\"acme/widgets\"]," \
	"\"templates\":\".github/ISSUE_TEMPLATE\",\"trusted_authors\":[\"github-actions[bot]\"]}"

/* ---- defaults ---- */

static void test_config__default_has_the_documented_values(void **state)
{
	pmbot_config *cfg = NULL;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, REPO), PMBOT_OK);
	assert_int_equal(cfg->reports.count, 1);
	assert_string_equal(cfg->reports.items[0], "plans/**/*.md");
	assert_int_equal(cfg->repos.count, 1);
	assert_string_equal(cfg->repos.items[0], REPO);
	assert_null(cfg->project_owner);
	assert_int_equal(cfg->project_number, 0);
	assert_string_equal(cfg->labels.type, "type:");
	assert_string_equal(cfg->labels.area, "area:");
	assert_string_equal(cfg->labels.prio, "prio:");
	assert_string_equal(cfg->labels.size, "size:");
	assert_string_equal(cfg->labels.status, "status:");
	assert_int_equal(cfg->trusted_authors.count, 1);
	assert_string_equal(cfg->trusted_authors.items[0], "github-actions[bot]");
	assert_int_equal(cfg->min_permission, PMBOT_PERM_WRITE);
	assert_int_equal(cfg->approvers.count, 0);
	for (i = 0; i < PMBOT_OP_COUNT; i++) {
		assert_false(pmbot_config_operation_denied(cfg, (pmbot_operation)i));
		assert_false(pmbot_config_operation_auto_approved(cfg, (pmbot_operation)i));
	}
	assert_string_equal(cfg->templates, ".github/ISSUE_TEMPLATE");
	pmbot_config_free(cfg);
}

static void test_config__default_without_repo_has_an_empty_allowlist(void **state)
{
	pmbot_config *cfg = NULL;
	char *json;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, NULL), PMBOT_OK);
	assert_int_equal(cfg->repos.count, 0);
	assert_false(pmbot_config_repo_allowed(cfg, REPO));
	json = effective_json(cfg);
	assert_non_null(strstr(json, "\"repos\":[]"));
	free(json);
	pmbot_config_free(cfg);
}

static void test_config__default_rejects_a_malformed_repo(void **state)
{
	pmbot_config *cfg = (pmbot_config *)&cfg;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, "widgets"), PMBOT_EINVALID);
	assert_null(cfg);
}

static void test_config__parse_reports_a_malformed_default_repo(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = (pmbot_config *)&cfg;

	(void)state;
	assert_int_equal(pmbot_config_parse(&cfg, FILE_NAME, "", 0, "a/b/c", &diags),
		PMBOT_EINVALID);
	assert_null(cfg);
	expect_message_contains(expect_diag(&diags, "CONFIG_VALUE", "", 0), "`a/b/c`");
	pmbot_diag_list_free(&diags);
}

static void test_config__to_json_of_defaults_is_exact(void **state)
{
	pmbot_config *cfg = NULL;
	char *json;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, REPO), PMBOT_OK);
	json = effective_json(cfg);
	assert_string_equal(json, DEFAULT_JSON);
	free(json);
	pmbot_config_free(cfg);
}

/* ---- files that mean "all defaults" ---- */

static void expect_defaults(const char *text, size_t len)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;
	char *json;

	assert_int_equal(pmbot_config_parse(&cfg, FILE_NAME, text, len, REPO, &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	json = effective_json(cfg);
	assert_string_equal(json, DEFAULT_JSON);
	free(json);
	pmbot_config_free(cfg);
}

static void expect_defaults_str(const char *text)
{
	expect_defaults(text, strlen(text));
}

static void test_config__empty_file_gives_the_defaults(void **state)
{
	(void)state;
	expect_defaults("", 0);
	expect_defaults(NULL, 0);
}

static void test_config__comment_only_file_gives_the_defaults(void **state)
{
	pmbot_buf text = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_fs_read(&text, "tests/fixtures/config/comments_only.yml"), 0);
	expect_defaults(text.buf, text.len);
	expect_defaults_str("\n\n   \n");
	expect_defaults_str("\xef\xbb\xbf# a BOM and a comment");
	expect_defaults_str("  # indented\r\n\t\n");
	pmbot_buf_free(&text);
}

static void test_config__null_document_gives_the_defaults(void **state)
{
	(void)state;
	expect_defaults_str("~\n");
	expect_defaults_str("null\n");
	expect_defaults_str("{}\n");
}

static void test_config__keys_without_a_value_keep_their_defaults(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;
	char *json;

	(void)state;
	assert_int_equal(parse_fixture(&cfg, "nulls.yml", &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	json = effective_json(cfg);
	assert_string_equal(json, DEFAULT_JSON);
	free(json);
	pmbot_config_free(cfg);
}

/* ---- a full valid file ---- */

static void test_config__full_file_sets_every_key(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(parse_fixture(&cfg, "full.yml", &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	assert_int_equal(cfg->reports.count, 2);
	assert_string_equal(cfg->reports.items[1], "docs/roadmap/*.md");
	assert_int_equal(cfg->repos.count, 2);
	assert_string_equal(cfg->repos.items[1], "acme/gadgets.js");
	assert_string_equal(cfg->project_owner, "acme");
	assert_int_equal(cfg->project_number, 7);
	assert_string_equal(cfg->labels.type, "kind/");
	assert_string_equal(cfg->labels.prio, "priority/");
	assert_string_equal(cfg->labels.status, "state/");
	assert_int_equal(cfg->trusted_authors.count, 3);
	assert_int_equal(cfg->min_permission, PMBOT_PERM_MAINTAIN);
	assert_int_equal(cfg->approvers.count, 2);
	assert_string_equal(cfg->approvers.items[0], "octocat");
	assert_true(pmbot_config_operation_denied(cfg, PMBOT_OP_REMOVE_LABELS));
	assert_true(pmbot_config_operation_denied(cfg, PMBOT_OP_REMOVE_DEPENDENCY));
	assert_false(pmbot_config_operation_denied(cfg, PMBOT_OP_CREATE_ISSUE));
	assert_true(pmbot_config_operation_auto_approved(cfg, PMBOT_OP_SET_PROJECT_FIELD));
	assert_true(pmbot_config_operation_auto_approved(cfg, PMBOT_OP_ADD_TO_PROJECT));
	assert_false(pmbot_config_operation_auto_approved(cfg, PMBOT_OP_CREATE_ISSUE));
	assert_string_equal(cfg->templates, ".github/ISSUE_TEMPLATE/forms");
	pmbot_config_free(cfg);
}

static void test_config__to_json_of_full_file_is_exact(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;
	char *json;

	(void)state;
	assert_int_equal(parse_fixture(&cfg, "full.yml", &diags), PMBOT_OK);
	json = effective_json(cfg);
	/* Operation lists come out in enum order without the repeated entry. */
	assert_string_equal(json,
		"{\"approval\":{\"min_permission\":\"maintain\",\"users\":[\"octocat\",\"hubot\"]},"
		"\"auto_approve\":[\"add_to_project\",\"set_project_field\"],"
		"\"deny_operations\":[\"remove_labels\",\"remove_dependency\"],"
		"\"github\":{\"write_budget\":\"80/60s,500/3600s\"},"
		"\"issue_types\":\"off\","
		"\"labels\":{\"area\":\"area/\",\"prio\":\"priority/\",\"size\":\"size/\","
		"\"status\":\"state/\",\"type\":\"kind/\"},"
		"\"limits\":{\"max_items\":10000,\"max_report_bytes\":4194304,\"max_total_bytes\":8388608},"
		"\"llm\":{\"digest_threshold\":25,\"policies\":[{\"action\":\"deny\","
		"\"forbidden_patterns\":[\"s3://production/\"],\"name\":\"internal_only\","
		"\"type\":\"context_ref\"}]},"
		"\"project\":{\"number\":7,\"owner\":\"acme\"},"
		"\"reports\":[\"plans/**/*.md\",\"docs/roadmap/*.md\"],"
		"\"repos\":[\"acme/widgets\",\"acme/gadgets.js\"],"
		"\"templates\":\".github/ISSUE_TEMPLATE/forms\","
		"\"trusted_authors\":[\"github-actions[bot]\",\"acme-planner[bot]\",\"octocat\"]}");
	free(json);
	pmbot_config_free(cfg);
}

static void test_config__llm_policies_must_be_objects_and_the_threshold_in_range(void **state)
{
	static const char text[] =
		"llm:\n"
		"  policies:\n"
		"    - just a string\n"
		"  digest_threshold: 0\n";
	pmbot_config *cfg = NULL;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(pmbot_config_parse(&cfg, "c.yml", text, sizeof(text) - 1, NULL, &diags),
		PMBOT_EINVALID);
	assert_null(cfg);
	assert_int_equal(diags.count, 2);
	assert_string_equal(diags.items[0].code, "CONFIG_TYPE");
	assert_string_equal(diags.items[0].path, "/llm/policies/0");
	assert_int_equal(diags.items[0].line, 3);
	assert_string_equal(diags.items[1].code, "CONFIG_VALUE");
	assert_string_equal(diags.items[1].path, "/llm/digest_threshold");
	assert_int_equal(diags.items[1].line, 4);
	pmbot_diag_list_free(&diags);
}

static void test_config__same_input_gives_the_same_json(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *a = NULL, *b = NULL;
	char *ja, *jb;

	(void)state;
	assert_int_equal(parse_fixture(&a, "full.yml", &diags), PMBOT_OK);
	assert_int_equal(parse_fixture(&b, "full.yml", &diags), PMBOT_OK);
	ja = effective_json(a);
	jb = effective_json(b);
	assert_string_equal(ja, jb);
	free(ja);
	free(jb);
	pmbot_config_free(a);
	pmbot_config_free(b);
}

static void test_config__json_input_is_accepted(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(parse_text(&cfg,
		"{\"repos\": [\"acme/widgets\", \"acme/tools\"], \"project\": {\"owner\": \"acme\", \"number\": 3}}\n",
		&diags), PMBOT_OK);
	assert_int_equal(cfg->repos.count, 2);
	assert_int_equal(cfg->project_number, 3);
	pmbot_config_free(cfg);
}

static void test_config__example_file_parses_clean(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text = PMBOT_BUF_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(pmbot_fs_read(&text, "examples/.github/pm-bot.yml"), 0);
	assert_int_equal(pmbot_config_parse(&cfg, "examples/.github/pm-bot.yml", text.buf,
		text.len, NULL, &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	assert_true(pmbot_config_repo_allowed(cfg, "acme/widgets"));
	assert_string_equal(cfg->project_owner, "acme");
	pmbot_config_free(cfg);
	pmbot_buf_free(&text);
}

static void test_config__documented_example_and_defaults_match_the_code(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf doc = PMBOT_BUF_INIT;
	pmbot_config *cfg = NULL;
	const char *start, *end;

	(void)state;
	assert_int_equal(pmbot_fs_read(&doc, "docs/config.md"), 0);
	assert_non_null(start = strstr(doc.buf, "```yaml\n"));
	start += strlen("```yaml\n");
	assert_non_null(end = strstr(start, "```"));
	assert_int_equal(pmbot_config_parse(&cfg, "docs/config.md", start, (size_t)(end - start),
		REPO, &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	assert_string_equal(cfg->project_owner, "acme");
	pmbot_config_free(cfg);
	assert_non_null(strstr(doc.buf, "\n" DEFAULT_JSON "\n"));
	pmbot_buf_free(&doc);
}

/* ---- unknown keys ---- */

static void test_config__unknown_key_suggests_the_close_known_key(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;

	(void)state;
	d = expect_single_error(&diags, "# config\nreprots:\n  - plans/*.md\n",
		"CONFIG_UNKNOWN_KEY", "/reprots", 2);
	assert_string_equal(d->message, "unknown key `reprots`; did you mean `reports`?");
	assert_string_equal(d->file, FILE_NAME);
	assert_int_equal(d->column, 1);
	pmbot_diag_list_free(&diags);
}

static void test_config__unknown_key_far_from_any_lists_the_known_keys(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;

	(void)state;
	d = expect_single_error(&diags, "colour: blue\n", "CONFIG_UNKNOWN_KEY", "/colour", 1);
	expect_message_contains(d, "unknown key `colour`; expected one of `reports`, `repos`");
	expect_message_contains(d, "`templates`");
	pmbot_diag_list_free(&diags);
}

static void test_config__unknown_nested_keys_name_their_nested_path(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;
	const pmbot_diag *d;

	(void)state;
	assert_int_equal(parse_text(&cfg,
		"approval:\n"
		"  min_permision: write\n"
		"labels:\n"
		"  priority: \"p/\"\n"
		"project:\n"
		"  owner: acme\n"
		"  number: 2\n"
		"  Number: 3\n", &diags), PMBOT_EINVALID);
	assert_int_equal(diags.errors, 3);
	d = expect_diag(&diags, "CONFIG_UNKNOWN_KEY", "/approval/min_permision", 2);
	expect_message_contains(d, "did you mean `min_permission`?");
	assert_int_equal(d->column, 3);
	d = expect_diag(&diags, "CONFIG_UNKNOWN_KEY", "/labels/priority", 4);
	expect_message_contains(d, "expected one of `type`, `area`, `prio`, `size`, `status`");
	d = expect_diag(&diags, "CONFIG_UNKNOWN_KEY", "/project/Number", 8);
	expect_message_contains(d, "did you mean `number`?");
	pmbot_diag_list_free(&diags);
}

static void test_config__unknown_key_with_slash_is_escaped_in_the_path(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;

	(void)state;
	expect_single_error(&diags, "labels:\n  a/b~c: x\n", "CONFIG_UNKNOWN_KEY",
		"/labels/a~1b~0c", 2);
	pmbot_diag_list_free(&diags);
}

/* ---- wrong types ---- */

static void test_config__wrong_type_names_the_path_and_the_expected_type(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;

	(void)state;
	d = expect_single_error(&diags, "reports: plans/*.md\n", "CONFIG_TYPE", "/reports", 1);
	assert_string_equal(d->message, "`/reports` must be an array of strings, not a string");
	pmbot_diag_list_free(&diags);
}

static void test_config__wrong_types_at_nested_paths_are_all_reported(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;
	const pmbot_diag *d;

	(void)state;
	assert_int_equal(parse_text(&cfg,
		"project:\n"
		"  owner: [acme]\n"
		"  number: \"3\"\n"
		"approval:\n"
		"  min_permission: 3\n"
		"  users:\n"
		"    - octocat\n"
		"    - 42\n"
		"labels:\n"
		"  type: true\n"
		"deny_operations: {create_issue: 1}\n"
		"auto_approve: [[set_parent]]\n"
		"templates: 1.5\n"
		"trusted_authors: null\n", &diags), PMBOT_EINVALID);
	assert_int_equal(diags.errors, 8);
	d = expect_diag(&diags, "CONFIG_TYPE", "/project/owner", 2);
	assert_string_equal(d->message, "`/project/owner` must be a string, not an array");
	d = expect_diag(&diags, "CONFIG_TYPE", "/project/number", 3);
	assert_string_equal(d->message, "`/project/number` must be an integer, not a string");
	d = expect_diag(&diags, "CONFIG_TYPE", "/approval/min_permission", 5);
	assert_string_equal(d->message, "`/approval/min_permission` must be a string, not an integer");
	d = expect_diag(&diags, "CONFIG_TYPE", "/approval/users/1", 8);
	assert_string_equal(d->message, "`/approval/users/1` must be a string, not an integer");
	d = expect_diag(&diags, "CONFIG_TYPE", "/labels/type", 10);
	assert_string_equal(d->message, "`/labels/type` must be a string, not a boolean");
	d = expect_diag(&diags, "CONFIG_TYPE", "/deny_operations", 11);
	assert_string_equal(d->message,
		"`/deny_operations` must be an array of operation names, not an object");
	d = expect_diag(&diags, "CONFIG_TYPE", "/auto_approve/0", 12);
	assert_string_equal(d->message, "`/auto_approve/0` must be a string, not an array");
	d = expect_diag(&diags, "CONFIG_TYPE", "/templates", 13);
	assert_string_equal(d->message, "`/templates` must be a string, not a number");
	pmbot_diag_list_free(&diags);
}

static void test_config__root_must_be_a_mapping(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;

	(void)state;
	d = expect_single_error(&diags, "\n- reports\n- repos\n", "CONFIG_TYPE", "", 2);
	assert_string_equal(d->message, "`/` must be an object (a mapping of keys), not an array");
	pmbot_diag_list_free(&diags);
}

static void test_config__project_must_be_a_mapping(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;

	(void)state;
	d = expect_single_error(&diags, "project: 7\n", "CONFIG_TYPE", "/project", 1);
	expect_message_contains(d, "must be an object with `owner` and `number`, not an integer");
	pmbot_diag_list_free(&diags);
}

/* ---- bad values ---- */

static void test_config__rejects_malformed_repo_names(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;
	const pmbot_diag *d;

	(void)state;
	assert_int_equal(parse_text(&cfg,
		"repos:\n"
		"  - acme/widgets\n"
		"  - widgets\n"
		"  - acme/widgets/extra\n"
		"  - -acme/widgets\n"
		"  - acme/..\n"
		"  - acme/wid gets\n"
		"  - /widgets\n"
		"  - a_b-c/x.y_z-1\n", &diags), PMBOT_EINVALID);
	assert_int_equal(diags.errors, 6);
	d = expect_diag(&diags, "CONFIG_VALUE", "/repos/1", 3);
	assert_string_equal(d->message, "`widgets` is not a repository name: expected OWNER/NAME");
	assert_int_equal(d->column, 5);
	expect_diag(&diags, "CONFIG_VALUE", "/repos/2", 4);
	expect_diag(&diags, "CONFIG_VALUE", "/repos/3", 5);
	expect_diag(&diags, "CONFIG_VALUE", "/repos/4", 6);
	expect_diag(&diags, "CONFIG_VALUE", "/repos/5", 7);
	expect_diag(&diags, "CONFIG_VALUE", "/repos/6", 8);
	pmbot_diag_list_free(&diags);
}

static void test_config__rejects_non_positive_project_numbers(void **state)
{
	static const char *const bad[] = {
		"project: {owner: acme, number: 0}\n",
		"project: {owner: acme, number: -4}\n",
		"project: {owner: acme, number: 2147483648}\n",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
		const pmbot_diag *d;

		d = expect_single_error(&diags, bad[i], "CONFIG_VALUE", "/project/number", 1);
		expect_message_contains(d, "project number must be between 1 and 2147483647");
		pmbot_diag_list_free(&diags);
	}
}

static void test_config__project_needs_an_owner_and_a_number(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	expect_message_contains(expect_single_error(&diags, "project:\n  number: 4\n",
		"CONFIG_VALUE", "/project", 1), "needs an `owner`");
	pmbot_diag_list_free(&diags);
	expect_message_contains(expect_single_error(&diags, "project:\n  owner: acme\n",
		"CONFIG_VALUE", "/project", 1), "needs a `number`");
	pmbot_diag_list_free(&diags);
	assert_int_equal(parse_text(&cfg, "project:\n  owner: -acme\n  number: 1\n", &diags),
		PMBOT_EINVALID);
	expect_message_contains(expect_diag(&diags, "CONFIG_VALUE", "/project/owner", 2),
		"`-acme` is not a GitHub login");
	pmbot_diag_list_free(&diags);
}

static void test_config__unknown_permission_suggests_the_close_one(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;

	(void)state;
	d = expect_single_error(&diags, "approval:\n  min_permission: writer\n",
		"CONFIG_VALUE", "/approval/min_permission", 2);
	assert_string_equal(d->message, "unknown permission `writer`; did you mean `write`?");
	pmbot_diag_list_free(&diags);
	d = expect_single_error(&diags, "approval:\n  min_permission: none\n",
		"CONFIG_VALUE", "/approval/min_permission", 2);
	assert_string_equal(d->message,
		"unknown permission `none`; expected one of `read`, `triage`, `write`, `maintain`, `admin`");
	pmbot_diag_list_free(&diags);
}

static void test_config__unknown_operation_suggests_the_close_one(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;
	const pmbot_diag *d;

	(void)state;
	assert_int_equal(parse_text(&cfg,
		"deny_operations:\n"
		"  - create_issue\n"
		"  - add_label\n"
		"auto_approve: [delete_repo]\n", &diags), PMBOT_EINVALID);
	assert_int_equal(diags.errors, 2);
	d = expect_diag(&diags, "CONFIG_VALUE", "/deny_operations/1", 3);
	assert_string_equal(d->message, "unknown operation `add_label`; did you mean `add_labels`?");
	d = expect_diag(&diags, "CONFIG_VALUE", "/auto_approve/0", 4);
	expect_message_contains(d, "unknown operation `delete_repo`; expected one of `create_issue`,");
	expect_message_contains(d, "`set_project_field`");
	pmbot_diag_list_free(&diags);
}

static void test_config__rejects_an_operation_both_denied_and_auto_approved(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;

	(void)state;
	d = expect_single_error(&diags,
		"deny_operations: [set_parent, add_to_project]\n"
		"auto_approve:\n"
		"  - set_project_field\n"
		"  - add_to_project\n",
		"CONFIG_VALUE", "/auto_approve/1", 4);
	assert_string_equal(d->message,
		"operation `add_to_project` is both denied (deny_operations) and auto-approved");
	pmbot_diag_list_free(&diags);
}

static void test_config__rejects_globs_the_git_layer_cannot_use(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(parse_text(&cfg,
		"reports:\n"
		"  - \"\"\n"
		"  - /plans/*.md\n"
		"  - plans/[ab.md\n"
		"  - ok/**/*.md\n", &diags), PMBOT_EINVALID);
	assert_int_equal(diags.errors, 3);
	expect_message_contains(expect_diag(&diags, "CONFIG_VALUE", "/reports/0", 2),
		"must not be empty");
	expect_message_contains(expect_diag(&diags, "CONFIG_VALUE", "/reports/1", 3),
		"report glob `/plans/*.md` is invalid at byte 0: empty path segment");
	expect_message_contains(expect_diag(&diags, "CONFIG_VALUE", "/reports/2", 4),
		"report glob `plans/[ab.md` is invalid at byte 6: '[' is not closed");
	pmbot_diag_list_free(&diags);
}

static void test_config__empty_lists_are_kept_empty(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(parse_text(&cfg, "reports: []\nrepos: []\ntrusted_authors: []\n", &diags),
		PMBOT_OK);
	assert_int_equal(cfg->reports.count, 0);
	assert_int_equal(cfg->repos.count, 0);
	assert_int_equal(cfg->trusted_authors.count, 0);
	assert_false(pmbot_config_repo_allowed(cfg, REPO));
	pmbot_config_free(cfg);
}

static void test_config__rejects_bad_logins(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(parse_text(&cfg,
		"trusted_authors: [\"renovate[bot]\", \"\", \"two words\"]\n"
		"approval: {users: [ok-user, \"@octocat\"]}\n", &diags), PMBOT_EINVALID);
	assert_int_equal(diags.errors, 3);
	expect_diag(&diags, "CONFIG_VALUE", "/trusted_authors/1", 1);
	expect_message_contains(expect_diag(&diags, "CONFIG_VALUE", "/trusted_authors/2", 1),
		"`two words` is not a GitHub login");
	expect_diag(&diags, "CONFIG_VALUE", "/approval/users/1", 2);
	pmbot_diag_list_free(&diags);
}

static void test_config__rejects_empty_long_and_overlapping_label_prefixes(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(parse_text(&cfg,
		"labels:\n"
		"  type: \"\"\n"
		"  area: \"prio:x/\"\n"
		"  size: \"0123456789012345678901234567890123456789012345678:\"\n", &diags),
		PMBOT_EINVALID);
	assert_int_equal(diags.errors, 3);
	expect_message_contains(expect_diag(&diags, "CONFIG_VALUE", "/labels/type", 2),
		"must not be empty");
	expect_message_contains(expect_diag(&diags, "CONFIG_VALUE", "/labels/area", 3),
		"label prefixes `prio:x/` (area) and `prio:` (prio) overlap");
	expect_message_contains(expect_diag(&diags, "CONFIG_VALUE", "/labels/size", 4),
		"at most 50 characters");
	pmbot_diag_list_free(&diags);
}

static void test_config__label_prefix_overlap_ignores_case(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;

	(void)state;
	expect_message_contains(expect_single_error(&diags, "labels:\n  status: \"TYPE:\"\n",
		"CONFIG_VALUE", "/labels/status", 2), "(type) and `TYPE:` (status) overlap");
	pmbot_diag_list_free(&diags);
}

static void test_config__templates_must_be_a_clean_relative_directory(void **state)
{
	static const char *const bad[] = {
		"templates: \"\"\n", "templates: /etc\n", "templates: a//b\n",
		"templates: ../secrets\n", "templates: a/./b\n", "templates: \"/\"\n",
	};
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		expect_single_error(&diags, bad[i], "CONFIG_VALUE", "/templates", 1);
		pmbot_diag_list_free(&diags);
	}
	assert_int_equal(parse_text(&cfg, "templates: .github/forms//\n", &diags), PMBOT_OK);
	assert_string_equal(cfg->templates, ".github/forms");
	pmbot_config_free(cfg);
}

static void test_config__issue_types_is_auto_or_off(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, REPO), PMBOT_OK);
	assert_int_equal(cfg->issue_types, 1);
	pmbot_config_free(cfg);
	assert_int_equal(parse_text(&cfg, "issue_types: off\n", &diags), PMBOT_OK);
	assert_int_equal(cfg->issue_types, 0);
	pmbot_config_free(cfg);
	assert_int_equal(parse_text(&cfg, "issue_types: auto\n", &diags), PMBOT_OK);
	assert_int_equal(cfg->issue_types, 1);
	pmbot_config_free(cfg);
	expect_message_contains(expect_single_error(&diags, "issue_types: Auto\n", "CONFIG_VALUE",
		"/issue_types", 1), "`auto` or `off`");
	pmbot_diag_list_free(&diags);
	expect_single_error(&diags, "issue_types: [auto]\n", "CONFIG_TYPE", "/issue_types", 1);
	pmbot_diag_list_free(&diags);
}

static void test_config__messages_escape_control_characters(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;

	(void)state;
	d = expect_single_error(&diags, "repos: [\"acme\\nerror FAKE\"]\n", "CONFIG_VALUE",
		"/repos/0", 1);
	assert_null(strchr(d->message, '\n'));
	expect_message_contains(d, "`acme\\x0aerror FAKE`");
	pmbot_diag_list_free(&diags);
}

static void test_config__messages_cut_long_values_short(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text = PMBOT_BUF_INIT;
	const pmbot_diag *d;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_buf_puts(&text, "repos: [\""), 0);
	for (i = 0; i < 200; i++)
		assert_int_equal(pmbot_buf_putc(&text, 'x'), 0);
	assert_int_equal(pmbot_buf_puts(&text, "\"]\n"), 0);
	d = expect_single_error(&diags, text.buf, "CONFIG_VALUE", "/repos/0", 1);
	expect_message_contains(d, "`xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...`");
	assert_true(strlen(d->message) < 150);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&text);
}

static void test_config__nul_in_a_string_is_rejected(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = (pmbot_config *)&cfg;
	size_t i;

	(void)state;
	assert_int_equal(parse_text(&cfg, "repos: [\"acme\\0/widgets\"]\n", &diags), PMBOT_EINVALID);
	assert_null(cfg);
	assert_true(diags.errors > 0);
	for (i = 0; i < diags.count && strcmp(diags.items[i].path, "/repos/0"); i++)
		;
	assert_true(i < diags.count);
	pmbot_diag_list_free(&diags);
}

/* ---- all at once, and the loader's own errors ---- */

static void test_config__every_error_is_reported_at_once_in_line_order(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = (pmbot_config *)&cfg;
	size_t i;

	(void)state;
	assert_int_equal(parse_fixture(&cfg, "errors.yml", &diags), PMBOT_EINVALID);
	assert_null(cfg);
	assert_int_equal(diags.errors, 8);
	expect_diag(&diags, "CONFIG_UNKNOWN_KEY", "/reprots", 2);
	expect_diag(&diags, "CONFIG_VALUE", "/repos/1", 5);
	expect_diag(&diags, "CONFIG_VALUE", "/project/number", 8);
	expect_diag(&diags, "CONFIG_TYPE", "/labels/type", 10);
	expect_diag(&diags, "CONFIG_VALUE", "/approval/min_permission", 12);
	expect_diag(&diags, "CONFIG_VALUE", "/deny_operations/1", 13);
	expect_diag(&diags, "CONFIG_VALUE", "/auto_approve/0", 14);
	expect_diag(&diags, "CONFIG_TYPE", "/templates", 15);
	for (i = 0; i < diags.count; i++) {
		assert_string_equal(diags.items[i].file, "errors.yml");
		if (i)
			assert_true(diags.items[i - 1].line < diags.items[i].line);
	}
	pmbot_diag_list_free(&diags);
}

static void test_config__duplicate_keys_are_rejected_by_the_loader(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = (pmbot_config *)&cfg;
	const pmbot_diag *d;

	(void)state;
	assert_int_equal(parse_fixture(&cfg, "duplicate_key.yml", &diags), PMBOT_EINVALID);
	assert_null(cfg);
	assert_non_null(d = pmbot_diag_list_find(&diags, "DUPLICATE_KEY"));
	assert_int_equal(d->line, 4);
	assert_string_equal(d->file, "duplicate_key.yml");
	pmbot_diag_list_free(&diags);
}

static void test_config__yaml_syntax_errors_pass_through(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = (pmbot_config *)&cfg;
	const pmbot_diag *d;

	(void)state;
	assert_int_equal(parse_text(&cfg, "repos: [acme/widgets\nreports: x\n", &diags),
		PMBOT_EINVALID);
	assert_null(cfg);
	assert_non_null(d = pmbot_diag_list_find(&diags, "REPORT_PARSE_YAML"));
	assert_string_equal(d->file, FILE_NAME);
	assert_true(d->line > 0);
	assert_null(pmbot_diag_list_find(&diags, "CONFIG_TYPE"));
	pmbot_diag_list_free(&diags);
}

static void test_config__invalid_utf8_passes_through(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(parse_text(&cfg, "reports: [\"plans/\xff.md\"]\n", &diags), PMBOT_EINVALID);
	assert_non_null(pmbot_diag_list_find(&diags, "INVALID_UTF8"));
	pmbot_diag_list_free(&diags);
}

static void test_config__rejects_a_file_over_the_size_limit(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = (pmbot_config *)&cfg;
	size_t len = PMBOT_CONFIG_MAX_BYTES + 1;
	char *text = malloc(len);

	(void)state;
	assert_non_null(text);
	memset(text, '#', len);
	assert_int_equal(pmbot_config_parse(&cfg, FILE_NAME, text, len, REPO, &diags),
		PMBOT_EINVALID);
	assert_null(cfg);
	assert_non_null(pmbot_diag_list_find(&diags, "INPUT_TOO_LARGE"));
	pmbot_diag_list_free(&diags);
	free(text);
}

static void test_config__existing_diagnostics_are_kept(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(pmbot_diag_add(&diags, PMBOT_SEV_WARNING, "EARLIER", NULL, "", 0, 0,
		"before"), 0);
	assert_int_equal(parse_text(&cfg, "repos: [x]\n", &diags), PMBOT_EINVALID);
	assert_int_equal(diags.count, 2);
	assert_string_equal(diags.items[0].code, "EARLIER");
	assert_string_equal(diags.items[1].code, "CONFIG_VALUE");
	pmbot_diag_list_free(&diags);
}

/* ---- names, queries ---- */

static void test_config__operation_names_round_trip(void **state)
{
	pmbot_operation op;
	size_t i;

	(void)state;
	for (i = 0; i < PMBOT_OP_COUNT; i++) {
		const char *name = pmbot_operation_name((pmbot_operation)i);

		assert_non_null(name);
		assert_int_equal(pmbot_operation_parse(&op, name), PMBOT_OK);
		assert_int_equal(op, (pmbot_operation)i);
	}
	assert_string_equal(pmbot_operation_name(PMBOT_OP_CREATE_ISSUE), "create_issue");
	assert_string_equal(pmbot_operation_name(PMBOT_OP_SET_PROJECT_FIELD), "set_project_field");
	assert_null(pmbot_operation_name((pmbot_operation)PMBOT_OP_COUNT));
	assert_int_equal(pmbot_operation_parse(&op, "Create_Issue"), PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_operation_parse(&op, ""), PMBOT_ENOTFOUND);
}

static void test_config__permissions_are_ordered_weakest_first(void **state)
{
	pmbot_permission p;

	(void)state;
	assert_int_equal(pmbot_permission_parse(&p, "read"), PMBOT_OK);
	assert_int_equal(p, PMBOT_PERM_READ);
	assert_int_equal(pmbot_permission_parse(&p, "admin"), PMBOT_OK);
	assert_int_equal(p, PMBOT_PERM_ADMIN);
	assert_true(PMBOT_PERM_READ < PMBOT_PERM_TRIAGE && PMBOT_PERM_TRIAGE < PMBOT_PERM_WRITE &&
		PMBOT_PERM_WRITE < PMBOT_PERM_MAINTAIN && PMBOT_PERM_MAINTAIN < PMBOT_PERM_ADMIN);
	assert_string_equal(pmbot_permission_name(PMBOT_PERM_MAINTAIN), "maintain");
	assert_int_equal(pmbot_permission_parse(&p, "none"), PMBOT_ENOTFOUND);
	assert_null(pmbot_permission_name((pmbot_permission)5));
}

static void test_config__repo_allowed_ignores_case_like_github(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(parse_text(&cfg, "repos: [Acme/Widgets, acme/tools]\n", &diags), PMBOT_OK);
	assert_true(pmbot_config_repo_allowed(cfg, "acme/widgets"));
	assert_true(pmbot_config_repo_allowed(cfg, "ACME/TOOLS"));
	assert_false(pmbot_config_repo_allowed(cfg, "acme/widget"));
	assert_false(pmbot_config_repo_allowed(cfg, "acme/widgetsx"));
	assert_false(pmbot_config_repo_allowed(cfg, "evil/widgets"));
	assert_false(pmbot_config_repo_allowed(cfg, NULL));
	pmbot_config_free(cfg);
}

static void test_config__unknown_operation_values_are_denied(void **state)
{
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, REPO), PMBOT_OK);
	assert_true(pmbot_config_operation_denied(cfg, (pmbot_operation)PMBOT_OP_COUNT));
	assert_true(pmbot_config_operation_denied(cfg, (pmbot_operation)-1));
	assert_false(pmbot_config_operation_auto_approved(cfg, (pmbot_operation)PMBOT_OP_COUNT));
	pmbot_config_free(cfg);
}

static void test_config__author_trust_matches_both_bot_spellings_only_for_bots(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(parse_text(&cfg, "trusted_authors: [\"github-actions[bot]\", Octocat]\n",
		&diags), PMBOT_OK);
	assert_true(pmbot_config_author_trusted(cfg, "github-actions[bot]", 1));
	assert_true(pmbot_config_author_trusted(cfg, "github-actions", 1));
	assert_true(pmbot_config_author_trusted(cfg, "GitHub-Actions", 1));
	assert_false(pmbot_config_author_trusted(cfg, "github-actions", 0));
	assert_false(pmbot_config_author_trusted(cfg, "github-action", 1));
	assert_true(pmbot_config_author_trusted(cfg, "octocat", 0));
	assert_false(pmbot_config_author_trusted(cfg, "octocat", 1));
	assert_false(pmbot_config_author_trusted(cfg, "", 0));
	assert_false(pmbot_config_author_trusted(cfg, NULL, 1));
	pmbot_config_free(cfg);
}

static void test_config__approver_needs_the_permission_and_the_listing(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, REPO), PMBOT_OK);
	assert_true(pmbot_config_approver_allowed(cfg, "anyone", PMBOT_PERM_WRITE));
	assert_true(pmbot_config_approver_allowed(cfg, "anyone", PMBOT_PERM_ADMIN));
	assert_false(pmbot_config_approver_allowed(cfg, "anyone", PMBOT_PERM_TRIAGE));
	pmbot_config_free(cfg);

	assert_int_equal(parse_text(&cfg,
		"approval: {min_permission: maintain, users: [Octocat]}\n", &diags), PMBOT_OK);
	assert_true(pmbot_config_approver_allowed(cfg, "octocat", PMBOT_PERM_MAINTAIN));
	assert_false(pmbot_config_approver_allowed(cfg, "octocat", PMBOT_PERM_WRITE));
	assert_false(pmbot_config_approver_allowed(cfg, "hubot", PMBOT_PERM_ADMIN));
	assert_false(pmbot_config_approver_allowed(cfg, "octocat", (pmbot_permission)99));
	pmbot_config_free(cfg);
}

/* ---- the published schema agrees with the code ---- */

static void expect_enum(const json_t *e, const char *(*name)(int), size_t n)
{
	size_t i;

	assert_true(json_is_array(e));
	assert_int_equal(json_array_size(e), n);
	for (i = 0; i < n; i++)
		assert_string_equal(json_string_value(json_array_get(e, i)), name((int)i));
}

static const char *op_name(int i)
{
	return pmbot_operation_name((pmbot_operation)i);
}

static const char *perm_name(int i)
{
	return pmbot_permission_name((pmbot_permission)i);
}

static void test_config__schema_names_every_key_operation_and_permission(void **state)
{
	json_t *schema, *props, *effective, *v;
	pmbot_config *cfg = NULL;
	json_error_t err;
	const char *key;

	(void)state;
	schema = json_load_file("docs/schemas/config.v1.schema.json", JSON_REJECT_DUPLICATES, &err);
	if (!schema)
		fail_msg("schema: %s line %d", err.text, err.line);
	assert_string_equal(json_string_value(json_object_get(schema, "$schema")),
		"https://json-schema.org/draft/2020-12/schema");
	assert_true(json_is_false(json_object_get(schema, "additionalProperties")));
	props = json_object_get(schema, "properties");
	assert_int_equal(pmbot_config_default(&cfg, REPO), PMBOT_OK);
	assert_int_equal(pmbot_config_to_json(&effective, cfg), PMBOT_OK);
	assert_int_equal(json_object_size(props), json_object_size(effective));
	json_object_foreach(effective, key, v)
		assert_non_null(json_object_get(props, key));
	/* Defaults in the schema are the code's defaults. */
	json_object_foreach(effective, key, v) {
		json_t *def = json_object_get(json_object_get(props, key), "default");

		if (!strcmp(key, "repos"))
			continue; /* the current repository, not a constant */
		assert_non_null(def);
		if (!pmbot_json_equal(def, v))
			fail_msg("schema default of %s differs from the code", key);
	}
	v = json_object_get(schema, "$defs");
	expect_enum(json_object_get(json_object_get(v, "operation"), "enum"), op_name,
		PMBOT_OP_COUNT);
	expect_enum(json_object_get(json_object_get(v, "permission"), "enum"), perm_name, 5);
	json_decref(effective);
	json_decref(schema);
	pmbot_config_free(cfg);
}

static void test_config__limits_are_read_and_checked(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;
	const char *good = "limits:\n  max_report_bytes: 1024\n  max_total_bytes: 2048\n"
		"  max_items: 5\n";
	const char *bad = "limits:\n  max_report_bytes: 0\n  max_items: 100001\n  max_bytes: 3\n";

	(void)state;
	assert_int_equal(pmbot_config_parse(&cfg, NULL, good, strlen(good), "acme/widgets", &diags),
		PMBOT_OK);
	assert_int_equal(cfg->max_report_bytes, 1024);
	assert_int_equal(cfg->max_total_bytes, 2048);
	assert_int_equal(cfg->max_items, 5);
	pmbot_config_free(cfg);
	assert_int_equal(pmbot_config_parse(&cfg, NULL, bad, strlen(bad), "acme/widgets", &diags),
		PMBOT_EINVALID);
	assert_null(cfg);
	assert_non_null(pmbot_diag_list_find(&diags, "CONFIG_UNKNOWN_KEY"));
	assert_int_equal(diags.errors, 3);
	pmbot_diag_list_free(&diags);
}

static void test_config__github_write_budget_is_read_and_checked(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;
	const char *good = "github:\n  write_budget: \"40/60s, 250/3600s\"\n";
	const char *bad = "github:\n  write_budget: \"80 a minute\"\n";
	const char *type = "github:\n  write_budget: [\"80/60s\"]\n";
	const char *unknown = "github:\n  write_budgets: \"80/60s\"\n";
	const pmbot_diag *d;
	char *json;

	(void)state;
	/* Unset: NULL, and the effective value is the client's default. */
	assert_int_equal(pmbot_config_parse(&cfg, NULL, "", 0, "acme/widgets", &diags), PMBOT_OK);
	assert_null(cfg->write_budget);
	json = effective_json(cfg);
	assert_non_null(strstr(json, "\"github\":{\"write_budget\":\"80/60s,500/3600s\"}"));
	free(json);
	pmbot_config_free(cfg);
	assert_int_equal(pmbot_config_parse(&cfg, NULL, good, strlen(good), "acme/widgets", &diags),
		PMBOT_OK);
	assert_string_equal(cfg->write_budget, "40/60s, 250/3600s");
	json = effective_json(cfg);
	assert_non_null(strstr(json, "\"github\":{\"write_budget\":\"40/60s, 250/3600s\"}"));
	free(json);
	pmbot_config_free(cfg);
	assert_int_equal(pmbot_config_parse(&cfg, "pm-bot.yml", bad, strlen(bad), "acme/widgets",
		&diags), PMBOT_EINVALID);
	assert_null(cfg);
	d = expect_diag(&diags, "CONFIG_VALUE", "/github/write_budget", 2);
	assert_non_null(strstr(d->message, "80 a minute"));
	pmbot_diag_list_free(&diags);
	assert_int_equal(pmbot_config_parse(&cfg, "pm-bot.yml", type, strlen(type), "acme/widgets",
		&diags), PMBOT_EINVALID);
	expect_diag(&diags, "CONFIG_TYPE", "/github/write_budget", 2);
	pmbot_diag_list_free(&diags);
	assert_int_equal(pmbot_config_parse(&cfg, "pm-bot.yml", unknown, strlen(unknown),
		"acme/widgets", &diags), PMBOT_EINVALID);
	assert_non_null(pmbot_diag_list_find(&diags, "CONFIG_UNKNOWN_KEY"));
	pmbot_diag_list_free(&diags);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config__default_has_the_documented_values),
		cmocka_unit_test(test_config__limits_are_read_and_checked),
		cmocka_unit_test(test_config__github_write_budget_is_read_and_checked),
		cmocka_unit_test(test_config__default_without_repo_has_an_empty_allowlist),
		cmocka_unit_test(test_config__default_rejects_a_malformed_repo),
		cmocka_unit_test(test_config__parse_reports_a_malformed_default_repo),
		cmocka_unit_test(test_config__to_json_of_defaults_is_exact),
		cmocka_unit_test(test_config__empty_file_gives_the_defaults),
		cmocka_unit_test(test_config__comment_only_file_gives_the_defaults),
		cmocka_unit_test(test_config__null_document_gives_the_defaults),
		cmocka_unit_test(test_config__keys_without_a_value_keep_their_defaults),
		cmocka_unit_test(test_config__full_file_sets_every_key),
		cmocka_unit_test(test_config__to_json_of_full_file_is_exact),
		cmocka_unit_test(test_config__llm_policies_must_be_objects_and_the_threshold_in_range),
		cmocka_unit_test(test_config__same_input_gives_the_same_json),
		cmocka_unit_test(test_config__json_input_is_accepted),
		cmocka_unit_test(test_config__example_file_parses_clean),
		cmocka_unit_test(test_config__documented_example_and_defaults_match_the_code),
		cmocka_unit_test(test_config__unknown_key_suggests_the_close_known_key),
		cmocka_unit_test(test_config__unknown_key_far_from_any_lists_the_known_keys),
		cmocka_unit_test(test_config__unknown_nested_keys_name_their_nested_path),
		cmocka_unit_test(test_config__unknown_key_with_slash_is_escaped_in_the_path),
		cmocka_unit_test(test_config__wrong_type_names_the_path_and_the_expected_type),
		cmocka_unit_test(test_config__wrong_types_at_nested_paths_are_all_reported),
		cmocka_unit_test(test_config__root_must_be_a_mapping),
		cmocka_unit_test(test_config__project_must_be_a_mapping),
		cmocka_unit_test(test_config__rejects_malformed_repo_names),
		cmocka_unit_test(test_config__rejects_non_positive_project_numbers),
		cmocka_unit_test(test_config__project_needs_an_owner_and_a_number),
		cmocka_unit_test(test_config__unknown_permission_suggests_the_close_one),
		cmocka_unit_test(test_config__unknown_operation_suggests_the_close_one),
		cmocka_unit_test(test_config__rejects_an_operation_both_denied_and_auto_approved),
		cmocka_unit_test(test_config__rejects_globs_the_git_layer_cannot_use),
		cmocka_unit_test(test_config__empty_lists_are_kept_empty),
		cmocka_unit_test(test_config__rejects_bad_logins),
		cmocka_unit_test(test_config__rejects_empty_long_and_overlapping_label_prefixes),
		cmocka_unit_test(test_config__label_prefix_overlap_ignores_case),
		cmocka_unit_test(test_config__templates_must_be_a_clean_relative_directory),
		cmocka_unit_test(test_config__issue_types_is_auto_or_off),
		cmocka_unit_test(test_config__messages_escape_control_characters),
		cmocka_unit_test(test_config__messages_cut_long_values_short),
		cmocka_unit_test(test_config__nul_in_a_string_is_rejected),
		cmocka_unit_test(test_config__every_error_is_reported_at_once_in_line_order),
		cmocka_unit_test(test_config__duplicate_keys_are_rejected_by_the_loader),
		cmocka_unit_test(test_config__yaml_syntax_errors_pass_through),
		cmocka_unit_test(test_config__invalid_utf8_passes_through),
		cmocka_unit_test(test_config__rejects_a_file_over_the_size_limit),
		cmocka_unit_test(test_config__existing_diagnostics_are_kept),
		cmocka_unit_test(test_config__operation_names_round_trip),
		cmocka_unit_test(test_config__permissions_are_ordered_weakest_first),
		cmocka_unit_test(test_config__repo_allowed_ignores_case_like_github),
		cmocka_unit_test(test_config__unknown_operation_values_are_denied),
		cmocka_unit_test(test_config__author_trust_matches_both_bot_spellings_only_for_bots),
		cmocka_unit_test(test_config__approver_needs_the_permission_and_the_listing),
		cmocka_unit_test(test_config__schema_names_every_key_operation_and_permission),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
