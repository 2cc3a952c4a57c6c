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
	pmbot_config *cfg;
	pmbot_repo_files files;
	pmbot_repo_files want;
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
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	pmbot_repo_files_free(&fx->files);
	pmbot_repo_files_free(&fx->want);
	pmbot_config_free(fx->cfg);
	pmbot_repo_free(fx->repo);
	gitrepo_free(fx->g);
	free(fx);
	return 0;
}

static void open_repo(fixture *fx)
{
	assert_int_equal(pmbot_repo_open(&fx->repo, gitrepo_path(fx->g), NULL), 0);
	/* The defaults: every .md file under plans/. */
	assert_int_equal(pmbot_config_default(&fx->cfg, "acme/widgets"), 0);
}

/* The selected paths, one per line. */
static void assert_paths(const pmbot_repo_files *files, const char *want)
{
	pmbot_buf got = PMBOT_BUF_INIT;
	size_t i;
	int ok;

	for (i = 0; i < files->count; i++)
		assert_int_equal(pmbot_buf_printf(&got, "%s\n", files->items[i].path), 0);
	ok = !strcmp(got.buf, want);
	if (!ok)
		print_error("got:\n%s", got.buf);
	pmbot_buf_free(&got);
	assert_true(ok);
}

static void test_source_select__every_report_the_config_names(void **state)
{
	fixture *fx = *state;

	FIX_OK(gitrepo_write(fx->g, "plans/b.md", "b\n"));
	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "a\n"));
	FIX_OK(gitrepo_write(fx->g, "plans/notes.txt", "n\n"));
	FIX_OK(gitrepo_write(fx->g, "README.md", "r\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);
	assert_int_equal(pmbot_source_select_reports(&fx->files, fx->repo, fx->cfg, "HEAD", NULL,
		NULL, 0, NULL), PMBOT_OK);
	assert_paths(&fx->files, "plans/a.md\nplans/b.md\n");
}

static void test_source_select__named_paths_replace_the_globs_and_may_be_missing(void **state)
{
	static const char *const paths[] = { "README.md", "plans/missing.md" };
	fixture *fx = *state;

	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "a\n"));
	FIX_OK(gitrepo_write(fx->g, "README.md", "r\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);
	assert_int_equal(pmbot_source_select_reports(&fx->files, fx->repo, fx->cfg, "HEAD", NULL,
		paths, 2, NULL), PMBOT_OK);
	assert_paths(&fx->files, "README.md\n");
}

static void test_source_select__with_a_base_only_the_changed_reports_still_there(void **state)
{
	fixture *fx = *state;
	char base[41];

	FIX_OK(gitrepo_write(fx->g, "plans/same.md", "same\n"));
	FIX_OK(gitrepo_write(fx->g, "plans/edit.md", "one\n"));
	FIX_OK(gitrepo_write(fx->g, "plans/gone.md", "gone\n"));
	FIX_OK(gitrepo_write(fx->g, "plans/move.md", "a long enough text to be seen as moved\n"));
	FIX_OK(gitrepo_commit(fx->g, base, "one"));
	FIX_OK(gitrepo_write(fx->g, "plans/edit.md", "two\n"));
	FIX_OK(gitrepo_remove(fx->g, "plans/gone.md"));
	FIX_OK(gitrepo_remove(fx->g, "plans/move.md"));
	FIX_OK(gitrepo_write(fx->g, "plans/moved.md", "a long enough text to be seen as moved\n"));
	FIX_OK(gitrepo_write(fx->g, "plans/new.md", "new\n"));
	FIX_OK(gitrepo_write(fx->g, "docs/x.md", "not a report\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "two"));
	open_repo(fx);
	assert_int_equal(pmbot_source_select_reports(&fx->files, fx->repo, fx->cfg, "HEAD", base,
		NULL, 0, NULL), PMBOT_OK);
	assert_paths(&fx->files, "plans/edit.md\nplans/moved.md\nplans/new.md\n");
	/* Each with its blob at the revision, as a listing gives it. */
	assert_int_equal(pmbot_repo_list(&fx->want, fx->repo, "HEAD", NULL, 0, NULL), 0);
	{
		size_t i, k, matched = 0;

		for (i = 0; i < fx->files.count; i++)
			for (k = 0; k < fx->want.count; k++)
				if (!strcmp(fx->files.items[i].path, fx->want.items[k].path)) {
					assert_string_equal(fx->files.items[i].blob_id, fx->want.items[k].blob_id);
					matched++;
				}
		assert_int_equal(matched, 3);
	}
}

static void test_source_select__an_unknown_revision_is_not_found(void **state)
{
	fixture *fx = *state;

	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);
	assert_int_equal(pmbot_source_select_reports(&fx->files, fx->repo, fx->cfg, "HEAD", "nope",
		NULL, 0, NULL), PMBOT_ENOTFOUND);
	assert_int_equal(fx->files.count, 0);
	assert_int_equal(pmbot_source_select_reports(&fx->files, fx->repo, fx->cfg, "nope", NULL,
		NULL, 0, NULL), PMBOT_ENOTFOUND);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_source_select__every_report_the_config_names),
		T(test_source_select__named_paths_replace_the_globs_and_may_be_missing),
		T(test_source_select__with_a_base_only_the_changed_reports_still_there),
		T(test_source_select__an_unknown_revision_is_not_found),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
