#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers/gitrepo.h"
#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/repo.h"
#include "pmbot/banned.h"

/*
 * Every test works on a real repository that it builds itself; the fixture
 * holds everything a test may leave allocated so teardown frees it even
 * when an assertion jumps out early.
 */
typedef struct {
	gitrepo *g;
	pmbot_repo *repo;
	pmbot_repo_files files;
	pmbot_repo_changes changes;
	pmbot_buf buf;
	pmbot_buf err;
} fixture;

#define FIX_OK(call) do { \
	if ((call) != 0) \
		fail_msg("%s: %s", #call, gitrepo_error(fx->g)); \
} while (0)

/* Each call gets the fixture's message buffer emptied, so fx->err.buf is
 * what that one call said. */
#define ERR fresh_err(fx)

#define REPO_OK(call) do { \
	int rc_ = (call); \
	if (rc_ != 0) \
		fail_msg("%s -> %d: %s", #call, rc_, fx->err.buf); \
} while (0)

static pmbot_buf *fresh_err(fixture *fx)
{
	pmbot_buf_clear(&fx->err);
	return &fx->err;
}

static int setup(void **state, int bare)
{
	fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	pmbot_buf_init(&fx->buf, 0);
	pmbot_buf_init(&fx->err, 0);
	if (gitrepo_init(&fx->g, bare) != 0) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int setup_worktree(void **state)
{
	return setup(state, 0);
}

static int setup_bare(void **state)
{
	return setup(state, 1);
}

static int teardown(void **state)
{
	fixture *fx = *state;

	pmbot_repo_files_free(&fx->files);
	pmbot_repo_changes_free(&fx->changes);
	pmbot_buf_free(&fx->buf);
	pmbot_buf_free(&fx->err);
	pmbot_repo_free(fx->repo);
	gitrepo_free(fx->g);
	free(fx);
	return 0;
}

static void open_repo(fixture *fx)
{
	int rc = pmbot_repo_open(&fx->repo, gitrepo_path(fx->g), &fx->err);

	if (rc != 0)
		fail_msg("open %s -> %d: %s", gitrepo_path(fx->g), rc, fx->err.buf);
}

static void assert_blob_id_of(const char *id, const char *content)
{
	char want[41];

	assert_int_equal(gitrepo_blob_id(want, content, strlen(content)), 0);
	assert_string_equal(id, want);
}

static void read_at(fixture *fx, const char *rev, const char *path, char blob[41])
{
	pmbot_buf_clear(&fx->buf);
	REPO_OK(pmbot_repo_read(&fx->buf, blob, fx->repo, rev, path, ERR));
}

static void test_repo__reads_the_same_path_at_different_revisions(void **state)
{
	fixture *fx = *state;
	char c1[41], c2[41], b1[41], b2[41];

	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "version one\n"));
	FIX_OK(gitrepo_commit(fx->g, c1, "one"));
	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "version two\n"));
	FIX_OK(gitrepo_commit(fx->g, c2, "two"));
	open_repo(fx);

	read_at(fx, c1, "plans/a.md", b1);
	assert_string_equal(fx->buf.buf, "version one\n");
	assert_blob_id_of(b1, "version one\n");
	read_at(fx, "HEAD", "plans/a.md", b2);
	assert_string_equal(fx->buf.buf, "version two\n");
	assert_blob_id_of(b2, "version two\n");
	assert_string_not_equal(b1, b2);
	read_at(fx, "HEAD~1", "plans/a.md", b2);
	assert_string_equal(b1, b2);
	assert_string_equal(fx->buf.buf, "version one\n");
}

static void test_repo__resolves_branches_tags_short_shas_and_ancestry(void **state)
{
	fixture *fx = *state;
	char c1[41], c2[41], c3[41], got[41], short_sha[8];
	git_object *tag = NULL;

	FIX_OK(gitrepo_write(fx->g, "a.md", "1\n"));
	FIX_OK(gitrepo_commit(fx->g, c1, "one"));
	FIX_OK(gitrepo_write(fx->g, "a.md", "2\n"));
	FIX_OK(gitrepo_commit(fx->g, c2, "two"));
	FIX_OK(gitrepo_write(fx->g, "a.md", "3\n"));
	FIX_OK(gitrepo_commit(fx->g, c3, "three"));
	FIX_OK(gitrepo_branch(fx->g, "feature", c1));
	FIX_OK(gitrepo_tag(fx->g, "v1.0", c1, "release one\n"));
	FIX_OK(gitrepo_tag(fx->g, "light", c2, NULL));
	FIX_OK(gitrepo_ref(fx->g, "refs/remotes/origin/main", c2));
	open_repo(fx);

	REPO_OK(pmbot_repo_resolve(got, fx->repo, "HEAD", ERR));
	assert_string_equal(got, c3);
	REPO_OK(pmbot_repo_resolve(got, fx->repo, "main", ERR));
	assert_string_equal(got, c3);
	REPO_OK(pmbot_repo_resolve(got, fx->repo, "feature", ERR));
	assert_string_equal(got, c1);
	REPO_OK(pmbot_repo_resolve(got, fx->repo, "refs/heads/feature", ERR));
	assert_string_equal(got, c1);
	REPO_OK(pmbot_repo_resolve(got, fx->repo, "origin/main", ERR));
	assert_string_equal(got, c2);
	REPO_OK(pmbot_repo_resolve(got, fx->repo, "light", ERR));
	assert_string_equal(got, c2);
	REPO_OK(pmbot_repo_resolve(got, fx->repo, "HEAD~1", ERR));
	assert_string_equal(got, c2);
	REPO_OK(pmbot_repo_resolve(got, fx->repo, "HEAD~2", ERR));
	assert_string_equal(got, c1);
	REPO_OK(pmbot_repo_resolve(got, fx->repo, "main^", ERR));
	assert_string_equal(got, c2);
	REPO_OK(pmbot_repo_resolve(got, fx->repo, c2, ERR));
	assert_string_equal(got, c2);
	memcpy(short_sha, c1, 7);
	short_sha[7] = '\0';
	REPO_OK(pmbot_repo_resolve(got, fx->repo, short_sha, ERR));
	assert_string_equal(got, c1);

	/* The annotated tag is its own object; resolve must peel it. */
	assert_int_equal(git_revparse_single(&tag, gitrepo_git(fx->g), "refs/tags/v1.0"), 0);
	assert_int_equal(git_object_type(tag), GIT_OBJECT_TAG);
	git_object_free(tag);
	REPO_OK(pmbot_repo_resolve(got, fx->repo, "v1.0", ERR));
	assert_string_equal(got, c1);
	read_at(fx, "v1.0", "a.md", NULL);
	assert_string_equal(fx->buf.buf, "1\n");
}

static void test_repo__unknown_revision_is_not_found(void **state)
{
	fixture *fx = *state;
	char got[41];

	FIX_OK(gitrepo_write(fx->g, "a.md", "1\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);

	assert_int_equal(pmbot_repo_resolve(got, fx->repo, "no-such-branch", ERR), PMBOT_ENOTFOUND);
	assert_non_null(strstr(fx->err.buf, "no-such-branch"));
	assert_int_equal(pmbot_repo_resolve(got, fx->repo, "HEAD~5", ERR), PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_repo_resolve(got, fx->repo,
		"0123456789abcdef0123456789abcdef01234567", ERR), PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_repo_read(&fx->buf, NULL, fx->repo, "nope", "a.md", ERR),
		PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_repo_list(&fx->files, fx->repo, "nope", NULL, 0, ERR),
		PMBOT_ENOTFOUND);
	assert_int_equal(fx->files.count, 0);
	assert_int_equal(pmbot_repo_resolve(got, fx->repo, "", ERR), PMBOT_EINVALID);

	/* A success adds no message. */
	REPO_OK(pmbot_repo_resolve(got, fx->repo, "HEAD", ERR));
	assert_string_equal(fx->err.buf, "");
}

static void test_repo__unborn_head_is_not_found(void **state)
{
	fixture *fx = *state;
	char got[41];

	open_repo(fx);
	assert_int_equal(pmbot_repo_resolve(got, fx->repo, "HEAD", ERR), PMBOT_ENOTFOUND);
	assert_string_not_equal(fx->err.buf, "");
}

static void test_repo__revision_that_is_not_a_commit_is_invalid(void **state)
{
	fixture *fx = *state;
	char got[41];

	FIX_OK(gitrepo_write(fx->g, "a.md", "1\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);

	assert_int_equal(pmbot_repo_resolve(got, fx->repo, "HEAD:a.md", ERR), PMBOT_EINVALID);
	assert_int_equal(pmbot_repo_resolve(got, fx->repo, "HEAD^{tree}", ERR), PMBOT_EINVALID);
	assert_non_null(strstr(fx->err.buf, "commit"));
}

static void test_repo__opens_a_bare_repository(void **state)
{
	fixture *fx = *state;
	char c1[41], got[41];

	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "bare\n"));
	FIX_OK(gitrepo_commit(fx->g, c1, "one"));
	open_repo(fx);

	REPO_OK(pmbot_repo_resolve(got, fx->repo, "HEAD", ERR));
	assert_string_equal(got, c1);
	read_at(fx, "main", "plans/a.md", NULL);
	assert_string_equal(fx->buf.buf, "bare\n");
	REPO_OK(pmbot_repo_list(&fx->files, fx->repo, "HEAD", NULL, 0, ERR));
	assert_int_equal(fx->files.count, 1);
	assert_string_equal(fx->files.items[0].path, "plans/a.md");
}

static void test_repo__discovers_the_repository_from_a_subdirectory(void **state)
{
	fixture *fx = *state;
	pmbot_buf sub = PMBOT_BUF_INIT;
	char c1[41], got[41];
	int rc;

	FIX_OK(gitrepo_write(fx->g, "plans/q3/a.md", "deep\n"));
	FIX_OK(gitrepo_commit(fx->g, c1, "one"));
	assert_int_equal(pmbot_buf_printf(&sub, "%s/plans/q3", gitrepo_path(fx->g)), 0);
	rc = pmbot_repo_open(&fx->repo, sub.buf, &fx->err);
	pmbot_buf_free(&sub);
	if (rc)
		fail_msg("open: %s", fx->err.buf);
	REPO_OK(pmbot_repo_resolve(got, fx->repo, "HEAD", ERR));
	assert_string_equal(got, c1);
	/* Paths stay repository-relative whatever directory was opened. */
	read_at(fx, "HEAD", "plans/q3/a.md", NULL);
	assert_string_equal(fx->buf.buf, "deep\n");
}

static void test_repo__open_outside_any_repository_fails_with_a_message(void **state)
{
	fixture *fx = *state;
	const char *tmp = getenv("TMPDIR");
	pmbot_buf dir = PMBOT_BUF_INIT;
	pmbot_repo *repo = (pmbot_repo *)&dir;
	int rc;

	assert_int_equal(pmbot_buf_printf(&dir, "%s/pmbot-norepo-XXXXXX",
		tmp && *tmp ? tmp : "/tmp"), 0);
	assert_non_null(mkdtemp(dir.buf));
	rc = pmbot_repo_open(&repo, dir.buf, &fx->err);
	rmdir(dir.buf);
	pmbot_buf_free(&dir);
	assert_int_equal(rc, PMBOT_ENOTFOUND);
	assert_null(repo);
	assert_non_null(strstr(fx->err.buf, "pmbot-norepo-"));

	pmbot_buf_clear(&fx->err);
	assert_int_equal(pmbot_repo_open(&repo, "", &fx->err), PMBOT_EINVALID);
	assert_null(repo);
	assert_true(fx->err.len > 0);
	/* The message buffer is optional. */
	assert_int_equal(pmbot_repo_open(&repo, "", NULL), PMBOT_EINVALID);
}

static void test_repo__uncommitted_and_staged_files_are_not_seen(void **state)
{
	fixture *fx = *state;
	const char *globs[] = { "plans/*.md" };

	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "committed\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	FIX_OK(gitrepo_write_worktree(fx->g, "plans/a.md", "edited in the work tree\n"));
	FIX_OK(gitrepo_write_worktree(fx->g, "plans/new.md", "never added\n"));
	FIX_OK(gitrepo_write(fx->g, "plans/staged.md", "staged only\n"));
	open_repo(fx);

	REPO_OK(pmbot_repo_list(&fx->files, fx->repo, "HEAD", globs, 1, ERR));
	assert_int_equal(fx->files.count, 1);
	assert_string_equal(fx->files.items[0].path, "plans/a.md");
	read_at(fx, "HEAD", "plans/a.md", NULL);
	assert_string_equal(fx->buf.buf, "committed\n");
	assert_int_equal(pmbot_repo_read(&fx->buf, NULL, fx->repo, "HEAD", "plans/staged.md", ERR),
		PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_repo_read(&fx->buf, NULL, fx->repo, "HEAD", "plans/new.md", ERR),
		PMBOT_ENOTFOUND);
}

static void build_mixed_tree(fixture *fx)
{
	FIX_OK(gitrepo_write(fx->g, "plans/b.md", "b\n"));
	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "a\n"));
	FIX_OK(gitrepo_write(fx->g, "plans/x/deep.md", "deep\n"));
	FIX_OK(gitrepo_write(fx->g, "plans/notes.txt", "notes\n"));
	FIX_OK(gitrepo_write_mode(fx->g, "plans/run.md", "run\n", 1));
	FIX_OK(gitrepo_symlink(fx->g, "plans/link.md", "a.md"));
	FIX_OK(gitrepo_gitlink(fx->g, "plans/sub.md", "0123456789abcdef0123456789abcdef01234567"));
	FIX_OK(gitrepo_write(fx->g, "plans.md", "top\n"));
	FIX_OK(gitrepo_write(fx->g, "plans-old/z.md", "old\n"));
	FIX_OK(gitrepo_write(fx->g, "docs/readme.md", "docs\n"));
	FIX_OK(gitrepo_write(fx->g, "README.md", "readme\n"));
}

static void test_repo__lists_matching_files_sorted_without_symlinks_or_submodules(void **state)
{
	fixture *fx = *state;
	const char *globs[] = { "plans/**/*.md" };
	static const char *want[] = { "plans/a.md", "plans/b.md", "plans/run.md", "plans/x/deep.md" };
	char head[41];
	size_t i;

	build_mixed_tree(fx);
	FIX_OK(gitrepo_commit(fx->g, head, "mixed"));
	open_repo(fx);

	REPO_OK(pmbot_repo_list(&fx->files, fx->repo, "HEAD", globs, 1, ERR));
	assert_string_equal(fx->files.commit_id, head);
	assert_int_equal(fx->files.count, 4);
	for (i = 0; i < 4; i++)
		assert_string_equal(fx->files.items[i].path, want[i]);
	assert_blob_id_of(fx->files.items[0].blob_id, "a\n");
	assert_blob_id_of(fx->files.items[3].blob_id, "deep\n");
	assert_int_equal(fx->files.items[0].executable, 0);
	assert_int_equal(fx->files.items[2].executable, 1);
}

static void test_repo__lists_the_union_of_several_globs_and_everything_without_globs(void **state)
{
	fixture *fx = *state;
	const char *globs[] = { "README.md", "docs/*.md", "*/z.md" };
	size_t i;

	build_mixed_tree(fx);
	FIX_OK(gitrepo_commit(fx->g, NULL, "mixed"));
	open_repo(fx);

	REPO_OK(pmbot_repo_list(&fx->files, fx->repo, "HEAD", globs, 3, ERR));
	assert_int_equal(fx->files.count, 3);
	assert_string_equal(fx->files.items[0].path, "README.md");
	assert_string_equal(fx->files.items[1].path, "docs/readme.md");
	assert_string_equal(fx->files.items[2].path, "plans-old/z.md");

	/* No globs: every regular file (9 of the 11 entries), strcmp order. */
	pmbot_repo_files_free(&fx->files);
	REPO_OK(pmbot_repo_list(&fx->files, fx->repo, "HEAD", NULL, 0, ERR));
	assert_int_equal(fx->files.count, 9);
	for (i = 1; i < fx->files.count; i++)
		assert_true(strcmp(fx->files.items[i - 1].path, fx->files.items[i].path) < 0);
}

static void test_repo__lists_globs_at_an_older_revision(void **state)
{
	fixture *fx = *state;
	const char *globs[] = { "plans/*.md" };
	char c1[41];

	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, c1, "one"));
	FIX_OK(gitrepo_write(fx->g, "plans/b.md", "b\n"));
	FIX_OK(gitrepo_remove(fx->g, "plans/a.md"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "two"));
	open_repo(fx);

	REPO_OK(pmbot_repo_list(&fx->files, fx->repo, "HEAD~1", globs, 1, ERR));
	assert_string_equal(fx->files.commit_id, c1);
	assert_int_equal(fx->files.count, 1);
	assert_string_equal(fx->files.items[0].path, "plans/a.md");
	pmbot_repo_files_free(&fx->files);
	REPO_OK(pmbot_repo_list(&fx->files, fx->repo, "HEAD", globs, 1, ERR));
	assert_int_equal(fx->files.count, 1);
	assert_string_equal(fx->files.items[0].path, "plans/b.md");
}

static void test_repo__list_rejects_an_invalid_glob(void **state)
{
	fixture *fx = *state;
	const char *globs[] = { "plans/*.md", "plans/[x" };

	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);

	assert_int_equal(pmbot_repo_list(&fx->files, fx->repo, "HEAD", globs, 2, ERR), PMBOT_EINVALID);
	assert_int_equal(fx->files.count, 0);
	assert_null(fx->files.items);
	assert_non_null(strstr(fx->err.buf, "plans/[x"));
}

static void test_repo__lists_ten_thousand_files(void **state)
{
	fixture *fx = *state;
	const char *globs[] = { "plans/**/*.md" };
	char path[64], content[64];
	size_t i;

	for (i = 0; i < 10000; i++) {
		snprintf(path, sizeof(path), "plans/d%02zu/f%05zu.md", i % 100, i);
		snprintf(content, sizeof(content), "report %zu\n", i);
		FIX_OK(gitrepo_write(fx->g, path, content));
	}
	for (i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "src/f%03zu.c", i);
		FIX_OK(gitrepo_write(fx->g, path, "int x;\n"));
	}
	FIX_OK(gitrepo_commit(fx->g, NULL, "many"));
	open_repo(fx);

	REPO_OK(pmbot_repo_list(&fx->files, fx->repo, "HEAD", globs, 1, ERR));
	assert_int_equal(fx->files.count, 10000);
	for (i = 1; i < fx->files.count; i++)
		assert_true(strcmp(fx->files.items[i - 1].path, fx->files.items[i].path) < 0);
	/* plans/d07/f00007.md is the first file of directory d07. */
	assert_string_equal(fx->files.items[700].path, "plans/d07/f00007.md");
	assert_blob_id_of(fx->files.items[700].blob_id, "report 7\n");
	pmbot_buf_clear(&fx->buf);
	REPO_OK(pmbot_repo_read_blob(&fx->buf, fx->repo, fx->files.items[700].blob_id, ERR));
	assert_string_equal(fx->buf.buf, "report 7\n");
}

static void test_repo__read_of_a_missing_path_is_not_found(void **state)
{
	fixture *fx = *state;

	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);

	assert_int_equal(pmbot_repo_read(&fx->buf, NULL, fx->repo, "HEAD", "plans/b.md", ERR),
		PMBOT_ENOTFOUND);
	assert_non_null(strstr(fx->err.buf, "plans/b.md"));
	assert_int_equal(pmbot_repo_read(&fx->buf, NULL, fx->repo, "HEAD", "nope/a.md", ERR),
		PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_repo_read(&fx->buf, NULL, fx->repo, "HEAD", "", ERR), PMBOT_EINVALID);
	assert_int_equal(fx->buf.len, 0);
}

static void test_repo__read_refuses_directories_symlinks_and_submodules(void **state)
{
	fixture *fx = *state;

	build_mixed_tree(fx);
	FIX_OK(gitrepo_commit(fx->g, NULL, "mixed"));
	open_repo(fx);

	assert_int_equal(pmbot_repo_read(&fx->buf, NULL, fx->repo, "HEAD", "plans/x", ERR),
		PMBOT_EINVALID);
	assert_non_null(strstr(fx->err.buf, "directory"));
	assert_int_equal(pmbot_repo_read(&fx->buf, NULL, fx->repo, "HEAD", "plans/link.md", ERR),
		PMBOT_EINVALID);
	assert_non_null(strstr(fx->err.buf, "symlink"));
	assert_int_equal(pmbot_repo_read(&fx->buf, NULL, fx->repo, "HEAD", "plans/sub.md", ERR),
		PMBOT_EINVALID);
	assert_non_null(strstr(fx->err.buf, "submodule"));
	assert_int_equal(fx->buf.len, 0);
}

static void test_repo__read_refuses_a_blob_larger_than_the_buffer_cap(void **state)
{
	fixture *fx = *state;
	char big[1000], blob[41] = "untouched";
	pmbot_buf small;

	memset(big, 'x', sizeof(big));
	FIX_OK(gitrepo_write_len(fx->g, "big.md", big, sizeof(big)));
	FIX_OK(gitrepo_commit(fx->g, NULL, "big"));
	open_repo(fx);

	/* 10 bytes already in, 1009 allowed: one byte short. */
	pmbot_buf_free(&fx->buf);
	pmbot_buf_init(&fx->buf, 1009);
	assert_int_equal(pmbot_buf_puts(&fx->buf, "0123456789"), 0);
	assert_int_equal(pmbot_repo_read(&fx->buf, blob, fx->repo, "HEAD", "big.md", ERR),
		PMBOT_REPO_ETOOBIG);
	assert_string_equal(fx->buf.buf, "0123456789");
	assert_string_equal(blob, "untouched");
	assert_non_null(strstr(fx->err.buf, "big.md"));

	/* Exactly enough room: the whole blob, appended. */
	pmbot_buf_init(&small, 1010);
	assert_int_equal(pmbot_buf_puts(&small, "0123456789"), 0);
	assert_int_equal(pmbot_repo_read(&small, blob, fx->repo, "HEAD", "big.md", ERR), 0);
	assert_int_equal(small.len, 1010);
	assert_memory_equal(small.buf + 10, big, sizeof(big));
	pmbot_buf_clear(&small);
	small.max = 999;
	assert_int_equal(pmbot_repo_read_blob(&small, fx->repo, blob, ERR), PMBOT_REPO_ETOOBIG);
	assert_int_equal(small.len, 0);
	pmbot_buf_free(&small);
}

static void test_repo__read_keeps_nul_bytes(void **state)
{
	fixture *fx = *state;
	static const char bin[] = { 'a', '\0', 'b', '\0', '\n' };
	char blob[41], want[41];

	FIX_OK(gitrepo_write_len(fx->g, "bin.dat", bin, sizeof(bin)));
	FIX_OK(gitrepo_commit(fx->g, NULL, "bin"));
	open_repo(fx);

	read_at(fx, "HEAD", "bin.dat", blob);
	assert_int_equal(fx->buf.len, sizeof(bin));
	assert_memory_equal(fx->buf.buf, bin, sizeof(bin));
	assert_int_equal(gitrepo_blob_id(want, bin, sizeof(bin)), 0);
	assert_string_equal(blob, want);
}

static void test_repo__read_blob_checks_the_id(void **state)
{
	fixture *fx = *state;
	char blob[41], tree[41];
	git_object *obj = NULL;

	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);
	assert_int_equal(git_revparse_single(&obj, gitrepo_git(fx->g), "HEAD^{tree}"), 0);
	git_oid_tostr(tree, sizeof(tree), git_object_id(obj));
	git_object_free(obj);

	assert_int_equal(gitrepo_blob_id(blob, "a\n", 2), 0);
	REPO_OK(pmbot_repo_read_blob(&fx->buf, fx->repo, blob, ERR));
	assert_string_equal(fx->buf.buf, "a\n");
	pmbot_buf_clear(&fx->buf);
	assert_int_equal(pmbot_repo_read_blob(&fx->buf, fx->repo, "abc", ERR), PMBOT_EINVALID);
	assert_int_equal(pmbot_repo_read_blob(&fx->buf, fx->repo,
		"zz23456789abcdef0123456789abcdef01234567", ERR), PMBOT_EINVALID);
	assert_int_equal(pmbot_repo_read_blob(&fx->buf, fx->repo,
		"0123456789abcdef0123456789abcdef01234567", ERR), PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_repo_read_blob(&fx->buf, fx->repo, tree, ERR), PMBOT_EINVALID);
	assert_non_null(strstr(fx->err.buf, "tree"));
	assert_int_equal(fx->buf.len, 0);
}

static const char long_text[] =
	"# Plan for the third quarter\n\nThis report lists the epics of the quarter,\n"
	"their features and the tasks under them, with owners and estimates.\n"
	"It is long enough that a small edit keeps it well above the rename\n"
	"similarity threshold that git uses by default.\n";

static void test_repo__changed_reports_added_modified_deleted_and_renamed(void **state)
{
	fixture *fx = *state;
	const char *globs[] = { "plans/**/*.md" };
	pmbot_buf renamed = PMBOT_BUF_INIT;
	const pmbot_repo_change *c;
	char base[41], head[41];

	FIX_OK(gitrepo_write(fx->g, "plans/q3.md", long_text));
	FIX_OK(gitrepo_write(fx->g, "plans/b.md", "b\n"));
	FIX_OK(gitrepo_write(fx->g, "plans/c.md", "c\n"));
	FIX_OK(gitrepo_write(fx->g, "docs/x.md", "x\n"));
	FIX_OK(gitrepo_commit(fx->g, base, "base"));
	assert_int_equal(pmbot_buf_printf(&renamed, "%sOne more line.\n", long_text), 0);
	FIX_OK(gitrepo_remove(fx->g, "plans/q3.md"));
	FIX_OK(gitrepo_write(fx->g, "plans/archive/q3-2024.md", renamed.buf));
	FIX_OK(gitrepo_write(fx->g, "plans/b.md", "b changed\n"));
	FIX_OK(gitrepo_remove(fx->g, "plans/c.md"));
	FIX_OK(gitrepo_write(fx->g, "plans/d.md", "d\n"));
	FIX_OK(gitrepo_write(fx->g, "docs/x.md", "x changed\n"));
	FIX_OK(gitrepo_commit(fx->g, head, "head"));
	open_repo(fx);

	REPO_OK(pmbot_repo_changed(&fx->changes, fx->repo, "HEAD~1", "HEAD", globs, 1, ERR));
	assert_string_equal(fx->changes.base_id, base);
	assert_string_equal(fx->changes.commit_id, head);
	assert_int_equal(fx->changes.count, 4);

	c = &fx->changes.items[0];
	assert_int_equal(c->kind, PMBOT_CHANGE_RENAMED);
	assert_string_equal(pmbot_change_kind_name(c->kind), "renamed");
	assert_string_equal(c->old_path, "plans/q3.md");
	assert_string_equal(c->new_path, "plans/archive/q3-2024.md");
	assert_blob_id_of(c->old_blob_id, long_text);
	assert_blob_id_of(c->new_blob_id, renamed.buf);
	/* Not assert_in_range: cmocka 2.0 deprecates it. */
	assert_true(c->similarity >= 50 && c->similarity <= 99);

	c = &fx->changes.items[1];
	assert_int_equal(c->kind, PMBOT_CHANGE_MODIFIED);
	assert_string_equal(c->old_path, "plans/b.md");
	assert_string_equal(c->new_path, "plans/b.md");
	assert_blob_id_of(c->old_blob_id, "b\n");
	assert_blob_id_of(c->new_blob_id, "b changed\n");

	c = &fx->changes.items[2];
	assert_int_equal(c->kind, PMBOT_CHANGE_DELETED);
	assert_string_equal(c->old_path, "plans/c.md");
	assert_null(c->new_path);
	assert_string_equal(c->new_blob_id, "");

	c = &fx->changes.items[3];
	assert_int_equal(c->kind, PMBOT_CHANGE_ADDED);
	assert_null(c->old_path);
	assert_string_equal(c->new_path, "plans/d.md");
	assert_string_equal(c->old_blob_id, "");
	assert_blob_id_of(c->new_blob_id, "d\n");
	pmbot_buf_free(&renamed);

	/* Without globs the docs change is there too; swapping the sides
	 * turns the rename around. */
	pmbot_repo_changes_free(&fx->changes);
	REPO_OK(pmbot_repo_changed(&fx->changes, fx->repo, "HEAD", "HEAD~1", NULL, 0, ERR));
	assert_int_equal(fx->changes.count, 5);
	assert_string_equal(fx->changes.items[0].new_path, "docs/x.md");
	c = &fx->changes.items[4];
	assert_int_equal(c->kind, PMBOT_CHANGE_RENAMED);
	assert_string_equal(c->old_path, "plans/archive/q3-2024.md");
	assert_string_equal(c->new_path, "plans/q3.md");
}

static void test_repo__changed_keeps_a_rename_when_only_one_side_matches(void **state)
{
	fixture *fx = *state;
	const char *globs[] = { "plans/*.md" };

	FIX_OK(gitrepo_write(fx->g, "plans/q3.md", long_text));
	FIX_OK(gitrepo_commit(fx->g, NULL, "base"));
	FIX_OK(gitrepo_remove(fx->g, "plans/q3.md"));
	FIX_OK(gitrepo_write(fx->g, "attic/q3.md", long_text));
	FIX_OK(gitrepo_commit(fx->g, NULL, "move out"));
	FIX_OK(gitrepo_remove(fx->g, "attic/q3.md"));
	FIX_OK(gitrepo_write(fx->g, "plans/q3-again.md", long_text));
	FIX_OK(gitrepo_commit(fx->g, NULL, "move back"));
	open_repo(fx);

	REPO_OK(pmbot_repo_changed(&fx->changes, fx->repo, "HEAD~2", "HEAD~1", globs, 1, ERR));
	assert_int_equal(fx->changes.count, 1);
	assert_int_equal(fx->changes.items[0].kind, PMBOT_CHANGE_RENAMED);
	assert_string_equal(fx->changes.items[0].old_path, "plans/q3.md");
	assert_string_equal(fx->changes.items[0].new_path, "attic/q3.md");
	assert_int_equal(fx->changes.items[0].similarity, 100);

	pmbot_repo_changes_free(&fx->changes);
	REPO_OK(pmbot_repo_changed(&fx->changes, fx->repo, "HEAD~1", "HEAD", globs, 1, ERR));
	assert_int_equal(fx->changes.count, 1);
	assert_string_equal(fx->changes.items[0].old_path, "attic/q3.md");
	assert_string_equal(fx->changes.items[0].new_path, "plans/q3-again.md");
}

static void test_repo__changed_treats_a_file_turned_symlink_as_a_deletion(void **state)
{
	fixture *fx = *state;

	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "a\n"));
	FIX_OK(gitrepo_write(fx->g, "plans/b.md", "b\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "base"));
	FIX_OK(gitrepo_remove(fx->g, "plans/b.md"));
	FIX_OK(gitrepo_symlink(fx->g, "plans/b.md", "a.md"));
	FIX_OK(gitrepo_symlink(fx->g, "plans/c.md", "a.md"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "links"));
	open_repo(fx);

	REPO_OK(pmbot_repo_changed(&fx->changes, fx->repo, "HEAD~1", "HEAD", NULL, 0, ERR));
	assert_int_equal(fx->changes.count, 1);
	assert_int_equal(fx->changes.items[0].kind, PMBOT_CHANGE_DELETED);
	assert_string_equal(fx->changes.items[0].old_path, "plans/b.md");
	/* The reverse direction: the symlink turning back into a file. */
	pmbot_repo_changes_free(&fx->changes);
	REPO_OK(pmbot_repo_changed(&fx->changes, fx->repo, "HEAD", "HEAD~1", NULL, 0, ERR));
	assert_int_equal(fx->changes.count, 1);
	assert_int_equal(fx->changes.items[0].kind, PMBOT_CHANGE_ADDED);
	assert_string_equal(fx->changes.items[0].new_path, "plans/b.md");
}

static void test_repo__changed_counts_an_executable_bit_change_as_modified(void **state)
{
	fixture *fx = *state;

	FIX_OK(gitrepo_write(fx->g, "tools/run.md", "run\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "base"));
	FIX_OK(gitrepo_write_mode(fx->g, "tools/run.md", "run\n", 1));
	FIX_OK(gitrepo_commit(fx->g, NULL, "chmod"));
	open_repo(fx);

	REPO_OK(pmbot_repo_changed(&fx->changes, fx->repo, "HEAD~1", "HEAD", NULL, 0, ERR));
	assert_int_equal(fx->changes.count, 1);
	assert_int_equal(fx->changes.items[0].kind, PMBOT_CHANGE_MODIFIED);
	assert_string_equal(fx->changes.items[0].old_blob_id, fx->changes.items[0].new_blob_id);
}

static void test_repo__changed_with_an_unknown_revision_is_not_found(void **state)
{
	fixture *fx = *state;

	FIX_OK(gitrepo_write(fx->g, "a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);

	assert_int_equal(pmbot_repo_changed(&fx->changes, fx->repo, "nope", "HEAD", NULL, 0, ERR),
		PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_repo_changed(&fx->changes, fx->repo, "HEAD", "nope", NULL, 0, ERR),
		PMBOT_ENOTFOUND);
	assert_int_equal(fx->changes.count, 0);
	/* Identical revisions: no change at all. */
	REPO_OK(pmbot_repo_changed(&fx->changes, fx->repo, "HEAD", "main", NULL, 0, ERR));
	assert_int_equal(fx->changes.count, 0);
}

static void test_repo__merge_base_gives_pull_request_changes(void **state)
{
	fixture *fx = *state;
	char c1[41], got[41];

	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, c1, "base"));
	FIX_OK(gitrepo_branch(fx->g, "feature", "HEAD"));
	FIX_OK(gitrepo_write(fx->g, "plans/main-only.md", "m\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "on main"));
	FIX_OK(gitrepo_switch(fx->g, "feature"));
	FIX_OK(gitrepo_write(fx->g, "plans/feature.md", "f\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "on feature"));
	open_repo(fx);

	REPO_OK(pmbot_repo_merge_base(got, fx->repo, "main", "feature", ERR));
	assert_string_equal(got, c1);
	REPO_OK(pmbot_repo_changed(&fx->changes, fx->repo, got, "feature", NULL, 0, ERR));
	assert_int_equal(fx->changes.count, 1);
	assert_string_equal(fx->changes.items[0].new_path, "plans/feature.md");
	/* The two-tree diff also shows main's file, as deleted on feature. */
	pmbot_repo_changes_free(&fx->changes);
	REPO_OK(pmbot_repo_changed(&fx->changes, fx->repo, "main", "feature", NULL, 0, ERR));
	assert_int_equal(fx->changes.count, 2);
	assert_string_equal(fx->changes.items[0].new_path, "plans/feature.md");
	assert_int_equal(fx->changes.items[1].kind, PMBOT_CHANGE_DELETED);
	assert_string_equal(fx->changes.items[1].old_path, "plans/main-only.md");
}

static void test_repo__merge_base_of_unrelated_histories_is_not_found(void **state)
{
	fixture *fx = *state;
	char got[41];
	git_oid tree_id, commit_id;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	git_index *index = NULL;
	git_repository *git = gitrepo_git(fx->g);

	FIX_OK(gitrepo_write(fx->g, "a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	/* A root commit with no parent on a second branch. */
	assert_int_equal(git_repository_index(&index, git), 0);
	assert_int_equal(git_index_write_tree(&tree_id, index), 0);
	git_index_free(index);
	assert_int_equal(git_tree_lookup(&tree, git, &tree_id), 0);
	assert_int_equal(git_signature_new(&sig, "T", "t@example.com", 1700000000, 0), 0);
	assert_int_equal(git_commit_create(&commit_id, git, "refs/heads/orphan", sig, sig,
		NULL, "orphan", tree, 0, NULL), 0);
	git_signature_free(sig);
	git_tree_free(tree);
	open_repo(fx);

	assert_int_equal(pmbot_repo_merge_base(got, fx->repo, "main", "orphan", ERR), PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_repo_merge_base(got, fx->repo, "main", "nope", ERR), PMBOT_ENOTFOUND);
}

static void test_repo__results_outlive_the_repository(void **state)
{
	fixture *fx = *state;
	const char *globs[] = { "plans/*.md" };

	FIX_OK(gitrepo_write(fx->g, "plans/a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	FIX_OK(gitrepo_write(fx->g, "plans/b.md", "b\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "two"));
	open_repo(fx);
	REPO_OK(pmbot_repo_list(&fx->files, fx->repo, "HEAD", globs, 1, ERR));
	REPO_OK(pmbot_repo_changed(&fx->changes, fx->repo, "HEAD~1", "HEAD", globs, 1, ERR));
	read_at(fx, "HEAD", "plans/b.md", NULL);
	pmbot_repo_free(fx->repo);
	fx->repo = NULL;

	/* Under ASan a borrowed libgit2 string would be a use after free. */
	assert_int_equal(fx->files.count, 2);
	assert_string_equal(fx->files.items[1].path, "plans/b.md");
	assert_int_equal(fx->changes.count, 1);
	assert_string_equal(fx->changes.items[0].new_path, "plans/b.md");
	assert_string_equal(fx->buf.buf, "b\n");
}

static void test_repo__change_kind_names(void **state)
{
	(void)state;
	assert_string_equal(pmbot_change_kind_name(PMBOT_CHANGE_ADDED), "added");
	assert_string_equal(pmbot_change_kind_name(PMBOT_CHANGE_MODIFIED), "modified");
	assert_string_equal(pmbot_change_kind_name(PMBOT_CHANGE_DELETED), "deleted");
	assert_string_equal(pmbot_change_kind_name(PMBOT_CHANGE_RENAMED), "renamed");
	assert_null(pmbot_change_kind_name((pmbot_change_kind)42));
}

/* The first 7 digits of the blob id of `content`, as a diff's index line
 * abbreviates it. */
static void short_id(char out[8], const char *content)
{
	char id[41];

	assert_int_equal(gitrepo_blob_id(id, content, strlen(content)), 0);
	memcpy(out, id, 7);
	out[7] = '\0';
}

static void diff_into(fixture *fx, const char *from, const char *to, size_t max, int want_cut)
{
	int cut = -1;

	pmbot_buf_clear(&fx->buf);
	REPO_OK(pmbot_repo_diff(&fx->buf, &cut, fx->repo, from, to, max, ERR));
	assert_int_equal(cut, want_cut);
}

static void test_repo__diff_prints_the_committed_changes_as_git_does(void **state)
{
	fixture *fx = *state;
	char a1[8], a2[8], b2[8], c1[8];
	pmbot_buf want = PMBOT_BUF_INIT;

	FIX_OK(gitrepo_write(fx->g, "a.md", "one\ntwo\nthree\n"));
	FIX_OK(gitrepo_write(fx->g, "c.md", "gone\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "base"));
	FIX_OK(gitrepo_write(fx->g, "a.md", "one\n2\nthree\n"));
	FIX_OK(gitrepo_write(fx->g, "b.md", "new\n"));
	FIX_OK(gitrepo_remove(fx->g, "c.md"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "work"));
	open_repo(fx);
	short_id(a1, "one\ntwo\nthree\n");
	short_id(a2, "one\n2\nthree\n");
	short_id(b2, "new\n");
	short_id(c1, "gone\n");

	/* Byte for byte what `git diff HEAD~1 HEAD` prints. */
	assert_int_equal(pmbot_buf_printf(&want,
		"diff --git a/a.md b/a.md\n"
		"index %s..%s 100644\n"
		"--- a/a.md\n"
		"+++ b/a.md\n"
		"@@ -1,3 +1,3 @@\n"
		" one\n"
		"-two\n"
		"+2\n"
		" three\n"
		"diff --git a/b.md b/b.md\n"
		"new file mode 100644\n"
		"index 0000000..%s\n"
		"--- /dev/null\n"
		"+++ b/b.md\n"
		"@@ -0,0 +1 @@\n"
		"+new\n"
		"diff --git a/c.md b/c.md\n"
		"deleted file mode 100644\n"
		"index %s..0000000\n"
		"--- a/c.md\n"
		"+++ /dev/null\n"
		"@@ -1 +0,0 @@\n"
		"-gone\n", a1, a2, b2, c1), 0);
	diff_into(fx, "HEAD~1", "HEAD", 100000, 0);
	assert_string_equal(fx->buf.buf, want.buf);

	/* The other direction undoes the work. */
	diff_into(fx, "HEAD", "main~1", 100000, 0);
	assert_non_null(strstr(fx->buf.buf, "-2\n+two\n"));
	assert_non_null(strstr(fx->buf.buf, "deleted file mode 100644\nindex "));
	assert_non_null(strstr(fx->buf.buf, "+++ b/c.md\n@@ -0,0 +1 @@\n+gone\n"));
	pmbot_buf_free(&want);
}

static void test_repo__diff_appends_and_sees_only_committed_content(void **state)
{
	fixture *fx = *state;
	int cut = -1;

	FIX_OK(gitrepo_write(fx->g, "a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	FIX_OK(gitrepo_write(fx->g, "a.md", "staged\n"));
	FIX_OK(gitrepo_write_worktree(fx->g, "b.md", "work tree only\n"));
	open_repo(fx);

	assert_int_equal(pmbot_buf_puts(&fx->buf, "before\n"), 0);
	REPO_OK(pmbot_repo_diff(&fx->buf, &cut, fx->repo, "HEAD", "main", 100, ERR));
	assert_int_equal(cut, 0);
	assert_string_equal(fx->buf.buf, "before\n");
}

static void test_repo__diff_shows_renames_and_missing_final_newlines(void **state)
{
	fixture *fx = *state;

	FIX_OK(gitrepo_write(fx->g, "plans/q3.md", long_text));
	FIX_OK(gitrepo_write(fx->g, "end.md", "x\ny"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "base"));
	FIX_OK(gitrepo_remove(fx->g, "plans/q3.md"));
	FIX_OK(gitrepo_write(fx->g, "attic/q3.md", long_text));
	FIX_OK(gitrepo_write(fx->g, "end.md", "x\nz\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "move"));
	open_repo(fx);

	diff_into(fx, "HEAD~1", "HEAD", 100000, 0);
	assert_non_null(strstr(fx->buf.buf,
		"diff --git a/plans/q3.md b/attic/q3.md\n"
		"similarity index 100%\n"
		"rename from plans/q3.md\n"
		"rename to attic/q3.md\n"));
	assert_null(strstr(fx->buf.buf, "deleted file mode"));
	assert_non_null(strstr(fx->buf.buf,
		" x\n-y\n\\ No newline at end of file\n+z\n"));
}

static void test_repo__diff_cut_keeps_whole_lines_and_says_so(void **state)
{
	fixture *fx = *state;
	pmbot_buf full = PMBOT_BUF_INIT;
	size_t max;
	int cut;

	FIX_OK(gitrepo_write(fx->g, "a.md", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"));
	FIX_OK(gitrepo_write(fx->g, "b.md", "no newline"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "base"));
	FIX_OK(gitrepo_write(fx->g, "a.md", "1\ntwo\n3\n4\n5\n6\n7\n8\n9\n10\neleven\n12\n"));
	FIX_OK(gitrepo_write(fx->g, "b.md", "still no newline"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "work"));
	open_repo(fx);
	diff_into(fx, "HEAD~1", "HEAD", SIZE_MAX, 0);
	assert_int_equal(pmbot_buf_put(&full, fx->buf.buf, fx->buf.len), 0);
	assert_non_null(strstr(full.buf, "-no newline\n\\ No newline at end of file\n"));

	/* Every budget: a prefix of the whole diff, made of whole lines
	 * (never a "-no newline" without its marker's line end), and
	 * "truncated" exactly when something was left out. */
	for (max = 0; max <= full.len + 1; max++) {
		cut = -1;
		pmbot_buf_clear(&fx->buf);
		REPO_OK(pmbot_repo_diff(&fx->buf, &cut, fx->repo, "HEAD~1", "HEAD", max, ERR));
		assert_true(fx->buf.len <= max);
		assert_memory_equal(fx->buf.buf, full.buf, fx->buf.len);
		assert_true(fx->buf.len == 0 || fx->buf.buf[fx->buf.len - 1] == '\n');
		assert_int_equal(cut, max < full.len);
		assert_int_equal(fx->buf.len == full.len, max >= full.len);
	}
	pmbot_buf_free(&full);
}

static void test_repo__diff_is_cut_by_the_buffer_cap_too(void **state)
{
	fixture *fx = *state;
	pmbot_buf small;
	int cut = -1;

	FIX_OK(gitrepo_write(fx->g, "a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	FIX_OK(gitrepo_write(fx->g, "a.md", "b\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "two"));
	open_repo(fx);

	pmbot_buf_init(&small, 40);
	assert_int_equal(pmbot_buf_puts(&small, "0123456789"), 0);
	REPO_OK(pmbot_repo_diff(&small, &cut, fx->repo, "HEAD~1", "HEAD", 1000, ERR));
	assert_int_equal(cut, 1);
	/* "diff --git a/a.md b/a.md\n" fits the 30 bytes left; the index
	 * line does not. */
	assert_string_equal(small.buf, "0123456789diff --git a/a.md b/a.md\n");
	pmbot_buf_free(&small);
}

static void test_repo__diff_output_does_not_depend_on_git_config(void **state)
{
	fixture *fx = *state;
	pmbot_buf before = PMBOT_BUF_INIT;
	git_config *cfg = NULL;
	int32_t abbrev = 0;

	FIX_OK(gitrepo_write(fx->g, "plans/q3.md", long_text));
	FIX_OK(gitrepo_write(fx->g, "a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "base"));
	FIX_OK(gitrepo_remove(fx->g, "plans/q3.md"));
	FIX_OK(gitrepo_write(fx->g, "attic/q3.md", long_text));
	FIX_OK(gitrepo_write(fx->g, "a.md", "b\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "work"));
	open_repo(fx);
	diff_into(fx, "HEAD~1", "HEAD", SIZE_MAX, 0);
	assert_int_equal(pmbot_buf_put(&before, fx->buf.buf, fx->buf.len), 0);
	pmbot_repo_free(fx->repo);
	fx->repo = NULL;

	assert_int_equal(git_repository_config(&cfg, gitrepo_git(fx->g)), 0);
	assert_int_equal(git_config_set_int32(cfg, "core.abbrev", 12), 0);
	assert_int_equal(git_config_set_bool(cfg, "diff.renames", 0), 0);
	assert_int_equal(git_config_set_int32(cfg, "diff.context", 1), 0);
	assert_int_equal(git_config_get_int32(&abbrev, cfg, "core.abbrev"), 0);
	assert_int_equal(abbrev, 12);
	git_config_free(cfg);
	open_repo(fx);
	diff_into(fx, "HEAD~1", "HEAD", SIZE_MAX, 0);
	assert_string_equal(fx->buf.buf, before.buf);
	pmbot_buf_free(&before);
}

static void test_repo__diff_shows_binary_files_as_differing(void **state)
{
	fixture *fx = *state;
	static const char one[] = { 'a', '\0', 'b' }, two[] = { 'a', '\0', 'c' };

	FIX_OK(gitrepo_write_len(fx->g, "img.bin", one, sizeof(one)));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	FIX_OK(gitrepo_write_len(fx->g, "img.bin", two, sizeof(two)));
	FIX_OK(gitrepo_commit(fx->g, NULL, "two"));
	open_repo(fx);

	diff_into(fx, "HEAD~1", "HEAD", 100000, 0);
	assert_non_null(strstr(fx->buf.buf, "Binary files a/img.bin and b/img.bin differ\n"));
	assert_int_equal(strlen(fx->buf.buf), fx->buf.len);
}

static void test_repo__diff_with_a_bad_revision_leaves_the_buffer_alone(void **state)
{
	fixture *fx = *state;
	int cut = -1;

	FIX_OK(gitrepo_write(fx->g, "a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);
	assert_int_equal(pmbot_buf_puts(&fx->buf, "kept"), 0);

	assert_int_equal(pmbot_repo_diff(&fx->buf, &cut, fx->repo, "nope", "HEAD", 100, ERR),
		PMBOT_ENOTFOUND);
	assert_int_equal(cut, 0);
	assert_non_null(strstr(fx->err.buf, "nope"));
	assert_int_equal(pmbot_repo_diff(&fx->buf, &cut, fx->repo, "HEAD", "nope", 100, ERR),
		PMBOT_ENOTFOUND);
	assert_int_equal(pmbot_repo_diff(&fx->buf, &cut, fx->repo, "HEAD^{tree}", "HEAD", 100, ERR),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_repo_diff(&fx->buf, &cut, fx->repo, "HEAD", "", 100, ERR),
		PMBOT_EINVALID);
	assert_string_equal(fx->buf.buf, "kept");
}

#define WT(t) cmocka_unit_test_setup_teardown(t, setup_worktree, teardown)
#define BARE(t) cmocka_unit_test_setup_teardown(t, setup_bare, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		WT(test_repo__reads_the_same_path_at_different_revisions),
		WT(test_repo__resolves_branches_tags_short_shas_and_ancestry),
		WT(test_repo__unknown_revision_is_not_found),
		WT(test_repo__unborn_head_is_not_found),
		WT(test_repo__revision_that_is_not_a_commit_is_invalid),
		BARE(test_repo__opens_a_bare_repository),
		WT(test_repo__discovers_the_repository_from_a_subdirectory),
		WT(test_repo__open_outside_any_repository_fails_with_a_message),
		WT(test_repo__uncommitted_and_staged_files_are_not_seen),
		WT(test_repo__lists_matching_files_sorted_without_symlinks_or_submodules),
		BARE(test_repo__lists_the_union_of_several_globs_and_everything_without_globs),
		WT(test_repo__lists_globs_at_an_older_revision),
		WT(test_repo__list_rejects_an_invalid_glob),
		BARE(test_repo__lists_ten_thousand_files),
		WT(test_repo__read_of_a_missing_path_is_not_found),
		WT(test_repo__read_refuses_directories_symlinks_and_submodules),
		WT(test_repo__read_refuses_a_blob_larger_than_the_buffer_cap),
		WT(test_repo__read_keeps_nul_bytes),
		BARE(test_repo__read_blob_checks_the_id),
		WT(test_repo__changed_reports_added_modified_deleted_and_renamed),
		BARE(test_repo__changed_keeps_a_rename_when_only_one_side_matches),
		WT(test_repo__changed_treats_a_file_turned_symlink_as_a_deletion),
		BARE(test_repo__changed_counts_an_executable_bit_change_as_modified),
		WT(test_repo__changed_with_an_unknown_revision_is_not_found),
		WT(test_repo__merge_base_gives_pull_request_changes),
		WT(test_repo__merge_base_of_unrelated_histories_is_not_found),
		WT(test_repo__results_outlive_the_repository),
		WT(test_repo__diff_prints_the_committed_changes_as_git_does),
		WT(test_repo__diff_appends_and_sees_only_committed_content),
		BARE(test_repo__diff_shows_renames_and_missing_final_newlines),
		WT(test_repo__diff_cut_keeps_whole_lines_and_says_so),
		BARE(test_repo__diff_is_cut_by_the_buffer_cap_too),
		WT(test_repo__diff_output_does_not_depend_on_git_config),
		BARE(test_repo__diff_shows_binary_files_as_differing),
		WT(test_repo__diff_with_a_bad_revision_leaves_the_buffer_alone),
		cmocka_unit_test(test_repo__change_kind_names),
	};

	return cmocka_run_group_tests(tests, 0, NULL);
}
