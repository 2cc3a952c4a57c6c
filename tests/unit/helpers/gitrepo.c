#include "gitrepo.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmbot/buf.h"
#include "pmbot/fs.h"
#include "pmbot/banned.h"

#define GITREPO_EPOCH 1700000000

struct gitrepo {
	char *dir;
	int bare;
	git_repository *git;
	git_index *index;
	git_time_t clock;
	char err[512];
};

static int failf(gitrepo *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Record why a step failed, with libgit2's message when it has one. */
static int failf(gitrepo *r, const char *fmt, ...)
{
	const git_error *ge = git_error_last();
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(r->err) && ge && ge->message)
		snprintf(r->err + n, sizeof(r->err) - (size_t)n, ": %s", ge->message);
	return -1;
}

static int rm_rf(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	pmbot_buf child = PMBOT_BUF_INIT;
	int err = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	if (!(d = opendir(path)))
		return -1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		pmbot_buf_clear(&child);
		if (pmbot_buf_printf(&child, "%s/%s", path, de->d_name) < 0 || rm_rf(child.buf) < 0)
			err = -1;
	}
	closedir(d);
	pmbot_buf_free(&child);
	if (rmdir(path) < 0)
		err = -1;
	return err;
}

int gitrepo_init(gitrepo **out, int bare)
{
	git_repository_init_options opts;
	const char *tmp = getenv("TMPDIR");
	pmbot_buf dir = PMBOT_BUF_INIT;
	gitrepo *r;
	int level, err = -1;
	static const int levels[] = { GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG,
		GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_PROGRAMDATA };

	*out = NULL;
	if (!(r = calloc(1, sizeof(*r))))
		return -1;
	r->bare = bare;
	r->clock = GITREPO_EPOCH;
	if (git_libgit2_init() < 0) {
		free(r);
		return -1;
	}
	for (level = 0; level < (int)(sizeof(levels) / sizeof(levels[0])); level++)
		git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[level], "");
	if (pmbot_buf_printf(&dir, "%s/pmbot-git-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0 ||
	    !mkdtemp(dir.buf))
		goto done;
	if (!(r->dir = pmbot_buf_detach(&dir, NULL)))
		goto done;
	if (git_repository_init_options_init(&opts, GIT_REPOSITORY_INIT_OPTIONS_VERSION) < 0)
		goto done;
	opts.flags = GIT_REPOSITORY_INIT_MKPATH | (bare ? GIT_REPOSITORY_INIT_BARE : 0);
	opts.initial_head = "main";
	if (git_repository_init_ext(&r->git, r->dir, &opts) < 0 ||
	    git_repository_index(&r->index, r->git) < 0)
		goto done;
	*out = r;
	r = NULL;
	err = 0;
done:
	pmbot_buf_free(&dir);
	gitrepo_free(r);
	return err;
}

void gitrepo_free(gitrepo *r)
{
	if (!r)
		return;
	git_index_free(r->index);
	git_repository_free(r->git);
	if (r->dir)
		rm_rf(r->dir);
	free(r->dir);
	free(r);
	git_libgit2_shutdown();
}

const char *gitrepo_path(const gitrepo *r)
{
	return r->dir;
}

git_repository *gitrepo_git(gitrepo *r)
{
	return r->git;
}

const char *gitrepo_error(const gitrepo *r)
{
	return r->err;
}

static int worktree_file(gitrepo *r, const char *path, const void *data, size_t len,
	int symlink_target)
{
	pmbot_buf full = PMBOT_BUF_INIT;
	char *slash;
	FILE *f = NULL;
	int err = -1;

	if (r->bare)
		return 0;
	if (pmbot_buf_printf(&full, "%s/%s", r->dir, path) < 0)
		goto done;
	slash = strrchr(full.buf, '/');
	*slash = '\0';
	if (pmbot_fs_mkdirs(full.buf, 0755) < 0)
		goto done;
	*slash = '/';
	if (unlink(full.buf) < 0 && errno != ENOENT)
		goto done;
	if (symlink_target) {
		err = symlink((const char *)data, full.buf);
		goto done;
	}
	if (!(f = fopen(full.buf, "wb")) || fwrite(data, 1, len, f) != len)
		goto done;
	err = 0;
done:
	if (f && fclose(f) != 0)
		err = -1;
	if (err < 0)
		failf(r, "cannot write '%s' in the work tree: %s", path, strerror(errno));
	pmbot_buf_free(&full);
	return err;
}

static int stage(gitrepo *r, const char *path, git_filemode_t mode, const void *data, size_t len)
{
	git_index_entry e;

	memset(&e, 0, sizeof(e));
	e.path = path;
	e.mode = mode;
	if (git_index_add_from_buffer(r->index, &e, data, len) < 0)
		return failf(r, "cannot stage '%s'", path);
	return 0;
}

int gitrepo_write_len(gitrepo *r, const char *path, const void *data, size_t len)
{
	if (stage(r, path, GIT_FILEMODE_BLOB, data, len) < 0)
		return -1;
	return worktree_file(r, path, data, len, 0);
}

int gitrepo_write(gitrepo *r, const char *path, const char *content)
{
	return gitrepo_write_len(r, path, content, strlen(content));
}

int gitrepo_write_mode(gitrepo *r, const char *path, const char *content, int executable)
{
	size_t len = strlen(content);

	if (stage(r, path, executable ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB,
		    content, len) < 0)
		return -1;
	return worktree_file(r, path, content, len, 0);
}

int gitrepo_write_worktree(gitrepo *r, const char *path, const char *content)
{
	if (r->bare)
		return failf(r, "a bare repository has no work tree");
	return worktree_file(r, path, content, strlen(content), 0);
}

int gitrepo_symlink(gitrepo *r, const char *path, const char *target)
{
	if (stage(r, path, GIT_FILEMODE_LINK, target, strlen(target)) < 0)
		return -1;
	return worktree_file(r, path, target, strlen(target), 1);
}

int gitrepo_gitlink(gitrepo *r, const char *path, const char *commit_hex)
{
	git_index_entry e;

	memset(&e, 0, sizeof(e));
	e.path = path;
	e.mode = GIT_FILEMODE_COMMIT;
	if (git_oid_fromstrn(&e.id, commit_hex, 40) < 0 || git_index_add(r->index, &e) < 0)
		return failf(r, "cannot stage submodule '%s'", path);
	return 0;
}

int gitrepo_remove(gitrepo *r, const char *path)
{
	pmbot_buf full = PMBOT_BUF_INIT;
	int err = 0;

	if (git_index_remove(r->index, path, 0) < 0)
		return failf(r, "cannot unstage '%s'", path);
	if (!r->bare) {
		if (pmbot_buf_printf(&full, "%s/%s", r->dir, path) < 0 ||
		    (unlink(full.buf) < 0 && errno != ENOENT))
			err = failf(r, "cannot delete '%s'", path);
		pmbot_buf_free(&full);
	}
	return err;
}

static int signature(gitrepo *r, git_signature **sig)
{
	r->clock += 60;
	if (git_signature_new(sig, "PM Bot Test", "pmbot-test@example.com", r->clock, 0) < 0)
		return failf(r, "cannot make a signature");
	return 0;
}

int gitrepo_commit(gitrepo *r, char id[41], const char *message)
{
	git_oid tree_id, parent_id, commit_id;
	git_tree *tree = NULL;
	git_commit *parent = NULL;
	git_signature *sig = NULL;
	const git_commit *parents[1];
	int n_parents = 0, err = -1, gerr;

	if (git_index_write_tree(&tree_id, r->index) < 0 || git_index_write(r->index) < 0) {
		failf(r, "cannot write the index");
		goto done;
	}
	if (git_tree_lookup(&tree, r->git, &tree_id) < 0) {
		failf(r, "cannot read the new tree");
		goto done;
	}
	gerr = git_reference_name_to_id(&parent_id, r->git, "HEAD");
	if (gerr == 0) {
		if (git_commit_lookup(&parent, r->git, &parent_id) < 0) {
			failf(r, "cannot read HEAD");
			goto done;
		}
		parents[n_parents++] = parent;
	} else if (gerr != GIT_ENOTFOUND && gerr != GIT_EUNBORNBRANCH) {
		failf(r, "cannot resolve HEAD");
		goto done;
	}
	if (signature(r, &sig) < 0)
		goto done;
	if (git_commit_create(&commit_id, r->git, "HEAD", sig, sig, NULL, message, tree,
		    (size_t)n_parents, parents) < 0) {
		failf(r, "cannot commit");
		goto done;
	}
	if (id)
		git_oid_tostr(id, 41, &commit_id);
	err = 0;
done:
	git_signature_free(sig);
	git_commit_free(parent);
	git_tree_free(tree);
	return err;
}

static int lookup(gitrepo *r, git_object **out, const char *rev)
{
	if (git_revparse_single(out, r->git, rev) < 0)
		return failf(r, "unknown revision '%s'", rev);
	return 0;
}

int gitrepo_ref(gitrepo *r, const char *refname, const char *rev)
{
	git_object *obj = NULL, *commit = NULL;
	git_reference *ref = NULL;
	int err = -1;

	if (lookup(r, &obj, rev) < 0)
		goto done;
	if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) < 0) {
		failf(r, "'%s' is not a commit", rev);
		goto done;
	}
	if (git_reference_create(&ref, r->git, refname, git_object_id(commit), 1, NULL) < 0) {
		failf(r, "cannot set '%s'", refname);
		goto done;
	}
	err = 0;
done:
	git_reference_free(ref);
	git_object_free(commit);
	git_object_free(obj);
	return err;
}

int gitrepo_branch(gitrepo *r, const char *name, const char *rev)
{
	pmbot_buf refname = PMBOT_BUF_INIT;
	int err;

	if (pmbot_buf_printf(&refname, "refs/heads/%s", name) < 0)
		return failf(r, "out of memory");
	err = gitrepo_ref(r, refname.buf, rev);
	pmbot_buf_free(&refname);
	return err;
}

int gitrepo_switch(gitrepo *r, const char *name)
{
	pmbot_buf refname = PMBOT_BUF_INIT;
	git_object *obj = NULL;
	git_tree *tree = NULL;
	git_checkout_options co;
	int err = -1;

	if (pmbot_buf_printf(&refname, "refs/heads/%s", name) < 0) {
		failf(r, "out of memory");
		goto done;
	}
	if (lookup(r, &obj, refname.buf) < 0)
		goto done;
	if (git_object_peel((git_object **)&tree, obj, GIT_OBJECT_TREE) < 0) {
		failf(r, "cannot read the tree of '%s'", name);
		goto done;
	}
	/* Update the files before HEAD moves: checkout compares against the
	 * old HEAD to know which files to delete. */
	if (r->bare) {
		if (git_index_read_tree(r->index, tree) < 0 || git_index_write(r->index) < 0) {
			failf(r, "cannot load '%s' into the index", name);
			goto done;
		}
	} else {
		if (git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION) < 0)
			goto done;
		co.checkout_strategy = GIT_CHECKOUT_FORCE;
		if (git_checkout_tree(r->git, (git_object *)tree, &co) < 0) {
			failf(r, "cannot check out '%s'", name);
			goto done;
		}
		/* Checkout wrote the index file; drop our stale in-memory copy. */
		if (git_index_read(r->index, 1) < 0) {
			failf(r, "cannot reload the index");
			goto done;
		}
	}
	if (git_repository_set_head(r->git, refname.buf) < 0) {
		failf(r, "cannot point HEAD at '%s'", name);
		goto done;
	}
	err = 0;
done:
	git_tree_free(tree);
	git_object_free(obj);
	pmbot_buf_free(&refname);
	return err;
}

int gitrepo_tag(gitrepo *r, const char *name, const char *rev, const char *message)
{
	git_object *obj = NULL;
	git_signature *sig = NULL;
	git_oid id;
	int err = -1;

	if (lookup(r, &obj, rev) < 0)
		goto done;
	if (message) {
		if (signature(r, &sig) < 0)
			goto done;
		if (git_tag_create(&id, r->git, name, obj, sig, message, 0) < 0) {
			failf(r, "cannot create tag '%s'", name);
			goto done;
		}
	} else if (git_tag_create_lightweight(&id, r->git, name, obj, 0) < 0) {
		failf(r, "cannot create tag '%s'", name);
		goto done;
	}
	err = 0;
done:
	git_signature_free(sig);
	git_object_free(obj);
	return err;
}

int gitrepo_blob_id(char id[41], const void *data, size_t len)
{
	git_oid oid;
	int err;

	if (git_libgit2_init() < 0)
		return -1;
	err = git_odb_hash(&oid, data, len, GIT_OBJECT_BLOB) < 0 ? -1 : 0;
	if (!err)
		git_oid_tostr(id, 41, &oid);
	git_libgit2_shutdown();
	return err;
}
