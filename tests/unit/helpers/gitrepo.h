#ifndef PMBOT_TEST_GITREPO_H
#define PMBOT_TEST_GITREPO_H

#include <git2.h>
#include <stddef.h>

/*
 * Test fixture: a real git repository built with libgit2 in a fresh
 * directory under $TMPDIR (or /tmp), removed again by gitrepo_free().
 *
 * Files are staged straight into the repository's index (and, for a
 * repository with a work tree, also written to the work tree), then
 * committed on HEAD's branch. Every commit and tag uses the same author
 * ("PM Bot Test <pmbot-test@example.com>") and a clock that starts at
 * 2023-11-14T22:13:20Z and moves one minute per commit or tag, so the same
 * sequence of calls gives the same object ids on every run. The initial
 * branch is "main". While a fixture is alive, libgit2 ignores the user's
 * global and system git configuration (process-wide setting).
 *
 * Functions return 0 on success and -1 on failure; a failure leaves a
 * reason in gitrepo_error(), so tests can assert_int_equal(…, 0) and print
 * it. Paths are repository-relative with '/' separators.
 */
typedef struct gitrepo gitrepo;

/* Create a repository (bare when `bare` is 1) in a new temporary
 * directory. `*out` is owned by the caller: free it with gitrepo_free(). */
int gitrepo_init(gitrepo **out, int bare);

/* Free the fixture and delete its directory recursively. NULL is a no-op. */
void gitrepo_free(gitrepo *r);

/* The work tree, or the git directory of a bare repository (owned by `r`,
 * no trailing '/'). */
const char *gitrepo_path(const gitrepo *r);

/* The libgit2 handle (owned by `r`), for anything not wrapped here. */
git_repository *gitrepo_git(gitrepo *r);

/* Why the last call failed (owned by `r`). */
const char *gitrepo_error(const gitrepo *r);

/* Stage `path` with `len` bytes / a C string as a regular file (mode
 * 100644, or 100755 with gitrepo_write_mode), creating parent directories
 * in the work tree. */
int gitrepo_write_len(gitrepo *r, const char *path, const void *data, size_t len);
int gitrepo_write(gitrepo *r, const char *path, const char *content);
int gitrepo_write_mode(gitrepo *r, const char *path, const char *content, int executable);

/* Write a file to the work tree only: neither staged nor committed. */
int gitrepo_write_worktree(gitrepo *r, const char *path, const char *content);

/* Stage a symlink entry (mode 120000) pointing at `target`. */
int gitrepo_symlink(gitrepo *r, const char *path, const char *target);

/* Stage a submodule entry (mode 160000) at `commit_hex` (40 digits; the
 * commit need not exist). */
int gitrepo_gitlink(gitrepo *r, const char *path, const char *commit_hex);

/* Unstage `path` and delete it from the work tree. */
int gitrepo_remove(gitrepo *r, const char *path);

/* Commit the index on HEAD (the first commit has no parent). When `id` is
 * not NULL the new commit's 40-digit id is written there. */
int gitrepo_commit(gitrepo *r, char id[41], const char *message);

/* Create or move branch `name` (refs/heads/name) to revision `rev`. */
int gitrepo_branch(gitrepo *r, const char *name, const char *rev);

/* Point HEAD at branch `name` (which must exist) and load its tree into the
 * index (and the work tree), so the next commit goes on that branch. */
int gitrepo_switch(gitrepo *r, const char *name);

/* Tag `rev` as `name`: annotated when `message` is not NULL, else
 * lightweight. */
int gitrepo_tag(gitrepo *r, const char *name, const char *rev, const char *message);

/* Create or move any reference, e.g. "refs/remotes/origin/main", to `rev`. */
int gitrepo_ref(gitrepo *r, const char *refname, const char *rev);

/* The 40-digit id of the blob git would store for these bytes, computed
 * without touching the repository. 0 or -1. */
int gitrepo_blob_id(char id[41], const void *data, size_t len);

#endif
