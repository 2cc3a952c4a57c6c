#ifndef PMBOT_REPO_H
#define PMBOT_REPO_H

#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"

/*
 * The git layer: everything pm-bot plans from (reports, config, issue
 * forms) is read from git objects at a revision through libgit2, never from
 * the work tree, so uncommitted and staged edits are invisible. docs/git.md
 * is the user-facing description.
 *
 * A pmbot_repo owns its git_repository. Everything the functions below
 * return is copied out, so results stay valid after pmbot_repo_free().
 * A pmbot_repo is not safe to share between threads.
 *
 * Returns: 0 on success; PMBOT_ENOTFOUND when a revision, path, blob or
 * merge base does not exist; PMBOT_EINVALID when an argument is malformed
 * or names the wrong kind of object (a revision that is not a commit, a
 * path that is a directory, symlink or submodule); PMBOT_REPO_ETOOBIG when
 * a blob does not fit the buffer's cap; PMBOT_ERROR for any other libgit2
 * or memory failure.
 *
 * Every function that can fail takes `err` last (may be NULL; the caller
 * owns it): on failure one message is appended to it, saying what happened
 * and ending with libgit2's own message when it gave one; on success it is
 * left as it was. The handle keeps no message between calls.
 */

/* PMBOT_REPO_ETOOBIG (common.h): a blob larger than the room left under pmbot_buf.max. */

/* A hex object id: 40 lower-case hex digits and a NUL. */
#define PMBOT_OID_HEX_SIZE 41

typedef struct pmbot_repo pmbot_repo;

/*
 * libgit2 is opened when first needed, not linked (pmbot/dl.h): these and
 * pmbot_repo_open() load it. pmbot_repo_global_init() initialises it for
 * as long as a program opens repositories, so that its start-up (reading
 * the system's CA certificates) is paid once rather than per handle; each
 * successful call is undone by one pmbot_repo_global_shutdown(), and only
 * such a call (it is a no-op when libgit2 was never loaded). Only a
 * program's main calls them. PMBOT_ERROR, with why in `err` (may be NULL;
 * the caller owns it), when libgit2 cannot be loaded or initialised.
 */
PMBOT_WARN_UNUSED int pmbot_repo_global_init(pmbot_buf *err);
void pmbot_repo_global_shutdown(void);

/*
 * The version of the libgit2 pm-bot runs with (loading it); PMBOT_ERROR,
 * with why in `err` (may be NULL; the caller owns it), when it cannot be.
 */
PMBOT_WARN_UNUSED int pmbot_repo_libgit2_version(int *major, int *minor, int *rev, pmbot_buf *err);

/*
 * Open the repository that contains `path`: a work tree (searched upward
 * from `path`, like git, stopping at a file-system boundary) or a bare
 * repository (`path` is its git directory). GIT_DIR and friends are not
 * consulted. On success `*out` is a new handle the caller frees with
 * pmbot_repo_free(). On failure `*out` is NULL and, when `err` is not
 * NULL, a message is appended to it (the caller owns `err`).
 */
PMBOT_WARN_UNUSED int pmbot_repo_open(pmbot_repo **out, const char *path, pmbot_buf *err);

/* Close the repository and free the handle. NULL is a no-op. */
void pmbot_repo_free(pmbot_repo *repo);

/*
 * Resolve `rev` to a commit id: anything git rev-parse accepts — "HEAD",
 * a branch ("main", "refs/heads/main"), a remote-tracking branch
 * ("origin/main"), a tag (annotated tags are peeled to their commit), a
 * full or unambiguous short SHA, "HEAD~2", "main^2", ... Writes the
 * 40-digit id and a NUL into `oid_hex`. PMBOT_ENOTFOUND for an unknown
 * revision; PMBOT_EINVALID for an ambiguous short SHA, a malformed
 * revision, or one that names a tree or blob rather than a commit.
 */
int pmbot_repo_resolve(char oid_hex[PMBOT_OID_HEX_SIZE], pmbot_repo *repo, const char *rev,
	pmbot_buf *err);

/*
 * The merge base of revisions `a` and `b` (what `git merge-base a b`
 * prints), e.g. to diff a pull request against the point it branched off.
 * PMBOT_ENOTFOUND when a revision is unknown or there is no common
 * ancestor.
 */
int pmbot_repo_merge_base(char oid_hex[PMBOT_OID_HEX_SIZE], pmbot_repo *repo,
	const char *a, const char *b, pmbot_buf *err);

/* One regular file of a tree. */
typedef struct {
	char *path;                          /* owned by the list */
	char blob_id[PMBOT_OID_HEX_SIZE];
	int executable;                      /* 1 for mode 100755 */
} pmbot_repo_file;

typedef struct {
	pmbot_repo_file *items;
	size_t count;
	size_t alloc;
	char commit_id[PMBOT_OID_HEX_SIZE];  /* the commit `rev` resolved to */
} pmbot_repo_files;

#define PMBOT_REPO_FILES_INIT { NULL, 0, 0, { 0 } }

/* Free the paths and the array; `files` is left empty and reusable. */
void pmbot_repo_files_free(pmbot_repo_files *files);

/*
 * The regular files (blobs, mode 100644 or 100755) of the tree of `rev`
 * whose paths match at least one of the `n_globs` globs (pmbot_glob_match;
 * n_globs 0 means every file). Symlinks and submodules are skipped, and so
 * is every subtree no glob can reach. One walk of the tree, however many
 * files. Items are sorted by path (strcmp order), so the output only
 * depends on the commit and the globs. `*out` is overwritten (it need not
 * be initialized); the caller frees it with pmbot_repo_files_free(), which
 * is also harmless after a failure. An invalid glob is PMBOT_EINVALID.
 */
int pmbot_repo_list(pmbot_repo_files *out, pmbot_repo *repo, const char *rev,
	const char *const *globs, size_t n_globs, pmbot_buf *err);

/*
 * Append the bytes of the file `path` (repository-relative, '/'
 * separators, no leading "/" or "./") at `rev` to `out`, and when `blob_id`
 * is not NULL write the blob's id there. The size is checked before the
 * blob is loaded: a blob that would pass out->max fails with
 * PMBOT_REPO_ETOOBIG and `out` is left unchanged; there is never a
 * truncated read. Content may hold NUL bytes; out->len is its length.
 * PMBOT_ENOTFOUND for an unknown revision or a missing path,
 * PMBOT_EINVALID when `path` is a directory, a symlink or a submodule.
 */
PMBOT_WARN_UNUSED int pmbot_repo_read(pmbot_buf *out, char blob_id[PMBOT_OID_HEX_SIZE], pmbot_repo *repo,
	const char *rev, const char *path, pmbot_buf *err);

/*
 * Append the bytes of the blob with full 40-digit id `blob_id` to `out`,
 * with the same size rule as pmbot_repo_read(). PMBOT_EINVALID for a
 * malformed id or an object that is not a blob, PMBOT_ENOTFOUND for a
 * missing one. Pairs with pmbot_repo_list() to read many files without a
 * path lookup each.
 */
int pmbot_repo_read_blob(pmbot_buf *out, pmbot_repo *repo, const char *blob_id,
	pmbot_buf *err);

/*
 * The size in bytes of the blob `blob_id` (40 hex digits), from its object
 * header, without loading it: what a caller checks before reading hostile
 * files. Errors as pmbot_repo_read_blob(); `*out` is 0 then.
 */
int pmbot_repo_blob_size(size_t *out, pmbot_repo *repo, const char *blob_id, pmbot_buf *err);

typedef enum {
	PMBOT_CHANGE_ADDED,
	PMBOT_CHANGE_MODIFIED,
	PMBOT_CHANGE_DELETED,
	PMBOT_CHANGE_RENAMED
} pmbot_change_kind;

/* "added", "modified", "deleted", "renamed"; NULL for an out-of-range value. */
const char *pmbot_change_kind_name(pmbot_change_kind kind);

/* One changed regular file. Sides that do not exist are NULL / "". */
typedef struct {
	pmbot_change_kind kind;
	char *old_path;                          /* owned; NULL for ADDED */
	char *new_path;                          /* owned; NULL for DELETED */
	char old_blob_id[PMBOT_OID_HEX_SIZE];    /* "" for ADDED */
	char new_blob_id[PMBOT_OID_HEX_SIZE];    /* "" for DELETED */
	int similarity;                          /* 0-100 for RENAMED, else 0 */
} pmbot_repo_change;

typedef struct {
	pmbot_repo_change *items;
	size_t count;
	size_t alloc;
	char base_id[PMBOT_OID_HEX_SIZE];        /* the commit `base` resolved to */
	char commit_id[PMBOT_OID_HEX_SIZE];      /* the commit `rev` resolved to */
} pmbot_repo_changes;

#define PMBOT_REPO_CHANGES_INIT { NULL, 0, 0, { 0 }, { 0 } }

/* Free the paths and the array; `changes` is left empty and reusable. */
void pmbot_repo_changes_free(pmbot_repo_changes *changes);

/*
 * The regular files that differ between the trees of `base` and `rev`
 * (a two-tree diff like `git diff base rev`, not three-dot: pass
 * pmbot_repo_merge_base() as `base` for pull-request semantics), keeping
 * those whose old or new path matches one of the globs (n_globs 0 keeps
 * all). Renames are detected at 50% similarity, like git, whatever the
 * git configuration says; each added file is compared with at most the
 * first 1000 deleted files (path order), so a rename past that shows as a
 * deletion and an addition. Paths compare case-sensitively. A file
 * turning into a symlink or submodule is a deletion, the reverse an
 * addition; a mode change alone (100644 <-> 100755) is a modification.
 * Sorted by the change's path (new_path, or old_path for a deletion),
 * then old_path.
 * `*out` is overwritten and freed by the caller as for pmbot_repo_list().
 */
int pmbot_repo_changed(pmbot_repo_changes *out, pmbot_repo *repo, const char *base,
	const char *rev, const char *const *globs, size_t n_globs, pmbot_buf *err);

/*
 * Append to `out` the unified diff that turns the tree of `from_rev` into
 * the tree of `to_rev`: what the work at `to_rev` changed since `from_rev`,
 * in the format of `git diff -M from_rev to_rev` ("diff --git a/x b/x"
 * headers, 7-digit abbreviated blob ids, 3 lines of context, "\ No
 * newline at end of file" markers). It matches git byte for byte except
 * that libgit2 computes rename similarity its own way (the percentage may
 * differ by a point) and gives an empty added or deleted file "---" and
 * "+++" lines that git leaves out. Like pmbot_repo_changed() it is a
 * two-tree diff of committed content only, renames are detected at 50%
 * similarity with a limit of 1000, and submodules are left out; a binary
 * file shows as
 * "Binary files a/x and b/x differ". The id length, context and rename
 * settings are fixed here, so core.abbrev, diff.renames and the like in
 * a git configuration cannot change the bytes. One input is not a git
 * object: like git, libgit2 picks each file's diff driver from the
 * attributes of the work tree's .gitattributes and .git/info/attributes,
 * so a "binary" or "diff=<lang>" there changes how that file is shown
 * ("Binary files ... differ", the text after "@@ ... @@").
 *
 * At most `max_bytes` bytes are appended (fewer when out->max leaves less
 * room), and only whole lines: a longer diff is cut after the last line
 * that fits, `*truncated` is set to 1 and the call still succeeds; it is 0
 * when the whole diff was appended. Identical trees append nothing. The
 * content is the blobs' bytes as stored: it need not be UTF-8 and may hold
 * NUL bytes. On failure `out` is left as it was and `*truncated` is 0.
 * PMBOT_ENOTFOUND / PMBOT_EINVALID for a revision as pmbot_repo_resolve()
 * says, PMBOT_ERROR for a libgit2 or memory failure.
 */
int pmbot_repo_diff(pmbot_buf *out, int *truncated, pmbot_repo *repo, const char *from_rev,
	const char *to_rev, size_t max_bytes, pmbot_buf *err);

/*
 * Append the URL of remote `remote` (e.g. "origin") to `out`.
 * PMBOT_ENOTFOUND when there is no such remote or it has no URL.
 */
int pmbot_repo_remote_url(pmbot_buf *out, pmbot_repo *repo, const char *remote,
	pmbot_buf *err);

#endif
