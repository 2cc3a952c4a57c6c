#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers/gitrepo.h"
#include "pmbot/source.h"
#include "pmbot/banned.h"

typedef struct {
	gitrepo *g;
	pmbot_repo *repo;
	pmbot_diag_list diags;
	pmbot_buf err;
} fixture;

#define FIX_OK(call) do { \
	if ((call) != 0) \
		fail_msg("%s: %s", #call, gitrepo_error(fx->g)); \
} while (0)

static int setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));

	if (!fx || gitrepo_init(&fx->g, 0) != 0) {
		free(fx);
		return -1;
	}
	pmbot_buf_init(&fx->err, 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	pmbot_diag_list_free(&fx->diags);
	pmbot_buf_free(&fx->err);
	pmbot_repo_free(fx->repo);
	gitrepo_free(fx->g);
	free(fx);
	return 0;
}

static void open_repo(fixture *fx)
{
	if (!fx->repo)
		assert_int_equal(pmbot_repo_open(&fx->repo, gitrepo_path(fx->g), NULL), 0);
}

static const char *report_md =
	"# Plan\n\n```pm-bot:report-ir/v1\n"
	"schema_version: report_ir/v1\n"
	"report: {title: T, generated_at: 2026-02-22, scope: {org: acme}}\n"
	"features:\n"
	"  - {stable_id: 'feat:a', title: A, area: core, priority: P1}\n"
	"```\n";

static void test_source__slug_from_remote_urls(void **state)
{
	static const char *const ok[][2] = {
		{ "https://github.com/acme/widgets.git", "acme/widgets" },
		{ "https://github.com/acme/widgets", "acme/widgets" },
		{ "https://github.com/acme/widgets/", "acme/widgets" },
		{ "git@github.com:acme/widgets.git", "acme/widgets" },
		{ "ssh://git@ghe.example.com/acme/widgets.git", "acme/widgets" },
	};
	static const char *const bad[] = {
		"https://github.com/acme", "/srv/git/widgets.git", "https://github.com/a/b/c",
		"widgets", "https://github.com//widgets",
	};
	size_t i;
	char *s;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(pmbot_source_slug_from_url(&s, ok[i][0]), 0);
		assert_string_equal(s, ok[i][1]);
		free(s);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(pmbot_source_slug_from_url(&s, bad[i]), PMBOT_EINVALID);
		assert_null(s);
	}
}

static void test_source__missing_config_gives_defaults_and_empty_blob_id(void **state)
{
	fixture *fx = *state;
	pmbot_config *cfg = NULL;
	char blob[PMBOT_OID_HEX_SIZE] = "x";

	FIX_OK(gitrepo_write(fx->g, "README.md", "hi\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "init"));
	open_repo(fx);
	assert_int_equal(pmbot_source_config(&cfg, blob, fx->repo, "HEAD", "acme/widgets", &fx->diags,
		&fx->err), 0);
	/* The missing file is an answer, not a failure: its message is dropped. */
	assert_string_equal(fx->err.buf, "");
	assert_string_equal(blob, "");
	assert_int_equal(cfg->repos.count, 1);
	assert_string_equal(cfg->repos.items[0], "acme/widgets");
	assert_string_equal(cfg->templates, ".github/ISSUE_TEMPLATE");
	pmbot_config_free(cfg);
	assert_int_equal(pmbot_source_config(&cfg, NULL, fx->repo, "no-such-rev", NULL, &fx->diags,
		&fx->err), PMBOT_ENOTFOUND);
	assert_null(cfg);
	assert_non_null(strstr(fx->err.buf, "unknown revision 'no-such-rev'"));
}

/* The trusted revision decides: a change on another branch has no effect. */
static void test_source__config_is_read_at_the_given_revision_only(void **state)
{
	fixture *fx = *state;
	pmbot_config *cfg = NULL;
	char blob[PMBOT_OID_HEX_SIZE], want[PMBOT_OID_HEX_SIZE];
	const char *trusted = "repos: [acme/widgets]\n";

	FIX_OK(gitrepo_write(fx->g, ".github/pm-bot.yml", trusted));
	FIX_OK(gitrepo_commit(fx->g, NULL, "config"));
	FIX_OK(gitrepo_branch(fx->g, "pr", "HEAD"));
	FIX_OK(gitrepo_switch(fx->g, "pr"));
	FIX_OK(gitrepo_write(fx->g, ".github/pm-bot.yml", "repos: [acme/widgets, evil/other]\n"));
	FIX_OK(gitrepo_write(fx->g, ".github/ISSUE_TEMPLATE/feature.yml", "not: [a form\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "widen"));
	open_repo(fx);
	assert_int_equal(pmbot_source_config(&cfg, blob, fx->repo, "main", NULL, &fx->diags, NULL), 0);
	FIX_OK(gitrepo_blob_id(want, trusted, strlen(trusted)));
	assert_string_equal(blob, want);
	assert_int_equal(cfg->repos.count, 1);
	assert_int_equal(pmbot_config_repo_allowed(cfg, "evil/other"), 0);
	pmbot_config_free(cfg);
	assert_int_equal(pmbot_source_config(&cfg, NULL, fx->repo, "pr", NULL, &fx->diags, NULL), 0);
	assert_int_equal(cfg->repos.count, 2);
	pmbot_config_free(cfg);
}

static void test_source__bad_config_is_invalid_with_file_and_line(void **state)
{
	fixture *fx = *state;
	pmbot_config *cfg = NULL;
	const pmbot_diag *d;

	FIX_OK(gitrepo_write(fx->g, ".github/pm-bot.yml", "reports: [plans/*.md]\nreprots: []\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "config"));
	open_repo(fx);
	assert_int_equal(pmbot_source_config(&cfg, NULL, fx->repo, "HEAD", NULL, &fx->diags, NULL),
		PMBOT_EINVALID);
	assert_null(cfg);
	assert_non_null(d = pmbot_diag_list_find(&fx->diags, "CONFIG_UNKNOWN_KEY"));
	assert_string_equal(d->file, ".github/pm-bot.yml");
	assert_int_equal(d->line, 2);
}

static void test_source__forms_come_from_the_templates_directory_at_the_revision(void **state)
{
	fixture *fx = *state;
	pmbot_config *cfg = NULL;
	pmbot_formset *set = NULL;
	const pmbot_form *f;

	FIX_OK(gitrepo_write(fx->g, ".github/pm-bot.yml", "templates: forms\n"));
	FIX_OK(gitrepo_write(fx->g, "forms/feature.yml",
		"name: Feature\ntitle: '[F] '\nlabels: [type:feature]\nbody:\n"
		"  - type: input\n    id: area\n    attributes: {label: Area}\n"));
	FIX_OK(gitrepo_write(fx->g, "forms/config.yml", "blank_issues_enabled: false\n"));
	FIX_OK(gitrepo_write(fx->g, "forms/nested/bug.yml", "name: Bug\nbody: []\n"));
	FIX_OK(gitrepo_write(fx->g, ".github/ISSUE_TEMPLATE/task.yml", "name: Task\nbody: []\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "forms"));
	FIX_OK(gitrepo_write_worktree(fx->g, "forms/task.yml", "name: Task\ntitle: '[T] '\n"));
	open_repo(fx);
	assert_int_equal(pmbot_source_config(&cfg, NULL, fx->repo, "HEAD", NULL, &fx->diags, NULL), 0);
	assert_int_equal(pmbot_source_forms(&set, fx->repo, "HEAD", cfg, &fx->diags, NULL), 0);
	assert_int_equal(pmbot_formset_count(set), 1);
	assert_non_null(f = pmbot_formset_find(set, PMBOT_NODE_FEATURE));
	assert_string_equal(f->title_prefix, "[F] ");
	/* not in the templates directory, only in the work tree: built-in */
	assert_string_equal(pmbot_formset_find(set, PMBOT_NODE_TASK)->title_prefix, "[task] ");
	assert_int_equal(fx->diags.errors, 0);
	pmbot_formset_free(set);
	pmbot_config_free(cfg);
}

static void test_source__a_broken_form_is_reported_and_left_out(void **state)
{
	fixture *fx = *state;
	pmbot_config *cfg = NULL;
	pmbot_formset *set = NULL;
	const pmbot_diag *d;

	FIX_OK(gitrepo_write(fx->g, ".github/ISSUE_TEMPLATE/feature.yml", "name: [unclosed\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "forms"));
	open_repo(fx);
	assert_int_equal(pmbot_source_config(&cfg, NULL, fx->repo, "HEAD", NULL, &fx->diags, NULL), 0);
	assert_int_equal(pmbot_source_forms(&set, fx->repo, "HEAD", cfg, &fx->diags, NULL), PMBOT_EINVALID);
	assert_non_null(set);
	assert_int_equal(pmbot_formset_count(set), 0);
	assert_non_null(d = pmbot_diag_list_find(&fx->diags, "FORM_YAML"));
	assert_string_equal(d->file, ".github/ISSUE_TEMPLATE/feature.yml");
	assert_string_equal(pmbot_formset_find(set, PMBOT_NODE_FEATURE)->title_prefix, "[feat] ");
	pmbot_formset_free(set);
	pmbot_config_free(cfg);
}

static void test_source__report_blobs_load_with_their_path_in_diagnostics(void **state)
{
	fixture *fx = *state;
	pmbot_repo_files files;
	pmbot_workgraph *g = NULL;
	const char *globs[] = { "plans/**/*.md" };
	pmbot_limits lim;

	FIX_OK(gitrepo_write(fx->g, "plans/q1.md", report_md));
	FIX_OK(gitrepo_write(fx->g, "plans/old/bad.md", "# no block\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "plans"));
	open_repo(fx);
	assert_int_equal(pmbot_repo_list(&files, fx->repo, "HEAD", globs, 1, NULL), 0);
	assert_int_equal(files.count, 2);
	assert_string_equal(files.items[0].path, "plans/old/bad.md");
	assert_int_equal(pmbot_source_report(&g, fx->repo, files.items[0].blob_id,
		files.items[0].path, NULL, &fx->diags, NULL), PMBOT_EINVALID);
	assert_null(g);
	assert_string_equal(pmbot_diag_list_find(&fx->diags, "REPORT_NO_BLOCK")->file, "plans/old/bad.md");
	assert_int_equal(pmbot_source_report(&g, fx->repo, files.items[1].blob_id,
		files.items[1].path, NULL, &fx->diags, NULL), PMBOT_OK);
	assert_non_null(pmbot_workgraph_find(g, "feat:a"));
	pmbot_workgraph_free(g);
	pmbot_limits_default(&lim);
	lim.max_bytes = 16;
	pmbot_diag_list_free(&fx->diags);
	assert_int_equal(pmbot_source_report(&g, fx->repo, files.items[1].blob_id,
		files.items[1].path, &lim, &fx->diags, NULL), PMBOT_EINVALID);
	assert_non_null(pmbot_diag_list_find(&fx->diags, "INPUT_TOO_LARGE"));
	pmbot_repo_files_free(&files);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_source__slug_from_remote_urls),
		cmocka_unit_test_setup_teardown(test_source__missing_config_gives_defaults_and_empty_blob_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source__config_is_read_at_the_given_revision_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source__bad_config_is_invalid_with_file_and_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source__forms_come_from_the_templates_directory_at_the_revision, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source__a_broken_form_is_reported_and_left_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source__report_blobs_load_with_their_path_in_diagnostics, setup, teardown),
	};

	return cmocka_run_group_tests_name("source", tests, NULL, NULL);
}
