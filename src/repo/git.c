#include "pmbot/repo.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git_compat.h"
#include "pmbot/dl.h"
#include "pmbot/glob.h"
#include "pmbot/banned.h"

struct pmbot_repo {
	git_repository *git;
	git_odb *odb;
};

static struct pmbot_libgit2 lg;

#define SYM(f) { "git_" #f, offsetof(struct pmbot_libgit2, f) },
static const struct pmbot_dl_sym lg_syms[] = { PMBOT_LIBGIT2_FUNCS(SYM) };
#undef SYM

/* Said where package tools look for it (pmbot/dl.h). */
PMBOT_DL_NOTE(dlopen_note, "[{\"feature\":\"git\",\"description\":\"reading reports, "
	"config and forms from git objects\",\"priority\":\"required\",\"soname\":[\""
	PMBOT_LIBGIT2_SONAME "\"]}]");

static struct pmbot_dl_lib lg_lib = PMBOT_DL_LIB(PMBOT_LIBGIT2_SONAME, "libgit2", lg_syms, lg);

/*
 * libgit2's message for the last failure, or NULL when there is none:
 * before 1.8 git_error_last() answers NULL then, from 1.8 on an error of
 * class GIT_ERROR_NONE saying "no error".
 */
static const char *last_git_error(void)
{
	const git_error *ge = lg.error_last();

	if (!ge || ge->klass == GIT_ERROR_NONE || !ge->message || !*ge->message)
		return NULL;
	return ge->message;
}

/* Format into a fixed array so that reporting a failure cannot itself fail;
 * a cut message is cut on a UTF-8 character boundary. */
static void vformat_error(char *dst, size_t size, int gerr, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static void vformat_error(char *dst, size_t size, int gerr, const char *fmt, va_list ap)
{
	const char *why = gerr < 0 ? last_git_error() : NULL;
	size_t len;
	int n;

	n = vsnprintf(dst, size, fmt, ap);
	len = n < 0 ? 0 : (size_t)n;
	if (len < size && why) {
		n = snprintf(dst + len, size - len, ": %s", why);
		len += n < 0 ? 0 : (size_t)n;
	}
	if (len >= size) {
		len = size - 1;
		while (len && ((unsigned char)dst[len] & 0xc0) == 0x80)
			len--;
		dst[len] = '\0';
	}
}

static int map_git(int gerr)
{
	switch (gerr) {
	case GIT_ENOTFOUND:
	case GIT_EUNBORNBRANCH:
		return PMBOT_ENOTFOUND;
	case GIT_EAMBIGUOUS:
	case GIT_EINVALIDSPEC:
	case GIT_EPEEL:
	case GIT_EINVALID:
		return PMBOT_EINVALID;
	default:
		return PMBOT_ERROR;
	}
}

/* Append the message to `err` (when not NULL) and return `code`. Every
 * public entry calls git_error_clear() first so that a stale libgit2 error
 * from an earlier call is never reported as the cause of a new failure. */
static int fail(pmbot_buf *err, int code, int gerr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(pmbot_buf *err, int code, int gerr, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!err)
		return code;
	va_start(ap, fmt);
	vformat_error(msg, sizeof(msg), gerr, fmt, ap);
	va_end(ap);
	(void)pmbot_buf_puts(err, msg);
	return code;
}

int pmbot_repo_global_init(pmbot_buf *err)
{
	int gerr;

	if (pmbot_dl_load(&lg_lib, err) < 0)
		return PMBOT_ERROR;
	if ((gerr = lg.libgit2_init()) < 0)
		return fail(err, PMBOT_ERROR, gerr, "cannot initialise libgit2");
	return 0;
}

void pmbot_repo_global_shutdown(void)
{
	if (lg_lib.state > 0)
		lg.libgit2_shutdown();
}

int pmbot_repo_libgit2_version(int *major, int *minor, int *rev, pmbot_buf *err)
{
	if (pmbot_dl_load(&lg_lib, err) < 0)
		return PMBOT_ERROR;
	return lg.libgit2_version(major, minor, rev) < 0 ? PMBOT_ERROR : 0;
}

int pmbot_repo_open(pmbot_repo **out, const char *path, pmbot_buf *err)
{
	pmbot_repo *r = NULL;
	int gerr, ret = PMBOT_ERROR, inited = 0;

	*out = NULL;
	if (!path || !*path) {
		ret = PMBOT_EINVALID;
		(void)fail(err, PMBOT_ERROR, 0, "empty repository path");
		goto done;
	}
	if (pmbot_dl_load(&lg_lib, err) < 0)
		goto done;
	/* libgit2's error state exists only once it is initialised. */
	if ((gerr = lg.libgit2_init()) < 0) {
		(void)fail(err, PMBOT_ERROR, gerr, "cannot initialize libgit2");
		goto done;
	}
	inited = 1;
	/*
	 * No SHA-1 of every object read (a tenth of a large plan's time):
	 * git does not re-hash objects on read either, only fsck and fetch
	 * do, and the objects pm-bot reads came through a fetch (index-pack
	 * hashes each) or a local commit. Verifying catches only a damaged
	 * object store: zlib's checksum still catches a damaged stream, and
	 * whoever can write .git/objects can as well write a consistent
	 * object or move a ref, so no trust rests on it.
	 */
	if ((gerr = lg.libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0)) < 0) {
		(void)fail(err, PMBOT_ERROR, gerr, "cannot configure libgit2");
		goto done;
	}
	lg.error_clear();
	if (!(r = calloc(1, sizeof(*r)))) {
		(void)fail(err, PMBOT_ERROR, 0, "out of memory");
		goto done;
	}
	/* Flags 0: search upward like git, but ignore GIT_DIR and friends so
	 * the environment cannot redirect what is read. */
	if ((gerr = lg.repository_open_ext(&r->git, path, 0, NULL)) < 0) {
		ret = map_git(gerr) == PMBOT_ENOTFOUND ? PMBOT_ENOTFOUND : PMBOT_ERROR;
		(void)fail(err, PMBOT_ERROR, gerr, "cannot open a git repository at or above '%s'", path);
		goto done;
	}
	if ((gerr = lg.repository_odb(&r->odb, r->git)) < 0) {
		(void)fail(err, PMBOT_ERROR, gerr, "cannot open the object database of '%s'", path);
		goto done;
	}
	*out = r;
	r = NULL;
	inited = 0;
	ret = PMBOT_OK;
done:
	if (r) {
		lg.odb_free(r->odb);
		lg.repository_free(r->git);
		free(r);
	}
	if (inited)
		lg.libgit2_shutdown();
	return ret;
}

void pmbot_repo_free(pmbot_repo *repo)
{
	if (!repo)
		return;
	lg.odb_free(repo->odb);
	lg.repository_free(repo->git);
	free(repo);
	lg.libgit2_shutdown();
}

static int lookup_commit(git_commit **out, pmbot_repo *r, const char *rev, pmbot_buf *err)
{
	git_object *obj = NULL;
	int gerr, code;

	*out = NULL;
	if (!rev || !*rev)
		return fail(err, PMBOT_EINVALID, 0, "empty revision");
	if ((gerr = lg.revparse_single(&obj, r->git, rev)) < 0) {
		code = map_git(gerr);
		/* The usual first step of a new user: files written, nothing committed yet. */
		if (code == PMBOT_ENOTFOUND && lg.repository_head_unborn(r->git) == 1)
			return fail(err, code, 0, "the repository has no commit yet: pm-bot reads "
				"reports and configuration from git objects, not from the work tree, "
				"so commit them first (git add … && git commit)");
		return fail(err, code, gerr, code == PMBOT_ENOTFOUND ?
			"unknown revision '%s'" : "cannot resolve revision '%s'", rev);
	}
	gerr = lg.object_peel((git_object **)out, obj, GIT_OBJECT_COMMIT);
	lg.object_free(obj);
	if (gerr < 0) {
		code = map_git(gerr);
		return fail(err, code == PMBOT_ERROR ? PMBOT_ERROR : PMBOT_EINVALID, gerr,
			"revision '%s' does not name a commit", rev);
	}
	return 0;
}

static int commit_tree(git_tree **out, git_commit *commit, const char *rev, pmbot_buf *err)
{
	int gerr = lg.commit_tree(out, commit);

	if (gerr < 0)
		return fail(err, PMBOT_ERROR, gerr, "cannot read the tree of '%s'", rev);
	return 0;
}

int pmbot_repo_resolve(char oid_hex[PMBOT_OID_HEX_SIZE], pmbot_repo *repo, const char *rev,
	pmbot_buf *err)
{
	git_commit *commit = NULL;
	int rc;

	lg.error_clear();
	if ((rc = lookup_commit(&commit, repo, rev, err)) < 0)
		goto done;
	lg.oid_tostr(oid_hex, PMBOT_OID_HEX_SIZE, lg.commit_id(commit));
done:
	lg.commit_free(commit);
	return rc;
}

int pmbot_repo_merge_base(char oid_hex[PMBOT_OID_HEX_SIZE], pmbot_repo *repo,
	const char *a, const char *b, pmbot_buf *err)
{
	git_commit *ca = NULL, *cb = NULL;
	git_oid base;
	int rc, gerr;

	lg.error_clear();
	if ((rc = lookup_commit(&ca, repo, a, err)) < 0 ||
	    (rc = lookup_commit(&cb, repo, b, err)) < 0)
		goto done;
	gerr = lg.merge_base(&base, repo->git, lg.commit_id(ca), lg.commit_id(cb));
	if (gerr < 0) {
		rc = fail(err, gerr == GIT_ENOTFOUND ? PMBOT_ENOTFOUND : PMBOT_ERROR, gerr,
			"no merge base of '%s' and '%s'", a, b);
		goto done;
	}
	lg.oid_tostr(oid_hex, PMBOT_OID_HEX_SIZE, &base);
done:
	lg.commit_free(ca);
	lg.commit_free(cb);
	return rc;
}

static int is_file_mode(unsigned mode)
{
	return mode == GIT_FILEMODE_BLOB || mode == GIT_FILEMODE_BLOB_EXECUTABLE;
}

static int check_globs(const char *const *globs, size_t n, pmbot_buf *err)
{
	const char *reason;
	size_t i, at;

	for (i = 0; i < n; i++)
		if (pmbot_glob_check(globs[i], &at, &reason) < 0)
			return fail(err, PMBOT_EINVALID, 0, "glob '%s' at offset %zu: %s",
				globs[i] ? globs[i] : "(null)", at, reason);
	return 0;
}

static int any_glob(const char *const *globs, size_t n, const char *path)
{
	size_t i;

	if (!n)
		return 1;
	for (i = 0; i < n; i++)
		if (pmbot_glob_match(globs[i], path))
			return 1;
	return 0;
}

static char *dup_str(const char *s)
{
	size_t len = strlen(s);
	char *d = malloc(len + 1);

	if (d)
		memcpy(d, s, len + 1);
	return d;
}

void pmbot_repo_files_free(pmbot_repo_files *files)
{
	size_t i;

	for (i = 0; i < files->count; i++)
		free(files->items[i].path);
	free(files->items);
	memset(files, 0, sizeof(*files));
}

struct walk {
	pmbot_repo_files *out;
	const char *const *globs;
	size_t n_globs;
	pmbot_buf path;
	int oom;
};

static int walk_entry(const char *root, const git_tree_entry *entry, void *payload)
{
	struct walk *w = payload;
	unsigned mode = (unsigned)lg.tree_entry_filemode(entry);
	pmbot_repo_file *f;
	size_t i;

	pmbot_buf_clear(&w->path);
	if (pmbot_buf_puts(&w->path, root) < 0 ||
	    pmbot_buf_puts(&w->path, lg.tree_entry_name(entry)) < 0)
		goto oom;
	if (mode == GIT_FILEMODE_TREE) {
		if (!w->n_globs)
			return 0;
		for (i = 0; i < w->n_globs; i++)
			if (pmbot_glob_may_match_under(w->globs[i], w->path.buf))
				return 0;
		return 1; /* skip the subtree: no glob can match below it */
	}
	if (!is_file_mode(mode) || !any_glob(w->globs, w->n_globs, w->path.buf))
		return 0;
	if (w->out->count == w->out->alloc) {
		size_t alloc = w->out->alloc ? w->out->alloc * 2 : 64;
		pmbot_repo_file *items = realloc(w->out->items, alloc * sizeof(*items));

		if (!items)
			goto oom;
		w->out->items = items;
		w->out->alloc = alloc;
	}
	f = &w->out->items[w->out->count];
	if (!(f->path = dup_str(w->path.buf)))
		goto oom;
	lg.oid_tostr(f->blob_id, sizeof(f->blob_id), lg.tree_entry_id(entry));
	f->executable = mode == GIT_FILEMODE_BLOB_EXECUTABLE;
	w->out->count++;
	return 0;
oom:
	w->oom = 1;
	return -1;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const pmbot_repo_file *)a)->path, ((const pmbot_repo_file *)b)->path);
}

int pmbot_repo_list(pmbot_repo_files *out, pmbot_repo *repo, const char *rev,
	const char *const *globs, size_t n_globs, pmbot_buf *err)
{
	struct walk w = { out, globs, n_globs, PMBOT_BUF_INIT, 0 };
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	int rc, gerr;

	memset(out, 0, sizeof(*out));
	lg.error_clear();
	if ((rc = check_globs(globs, n_globs, err)) < 0 ||
	    (rc = lookup_commit(&commit, repo, rev, err)) < 0 ||
	    (rc = commit_tree(&tree, commit, rev, err)) < 0)
		goto done;
	lg.oid_tostr(out->commit_id, sizeof(out->commit_id), lg.commit_id(commit));
	gerr = lg.tree_walk(tree, GIT_TREEWALK_PRE, walk_entry, &w);
	if (w.oom) {
		rc = fail(err, PMBOT_ERROR, 0, "out of memory listing '%s'", rev);
		goto done;
	}
	if (gerr < 0) {
		rc = fail(err, PMBOT_ERROR, gerr, "cannot walk the tree of '%s'", rev);
		goto done;
	}
	if (out->count > 1)
		qsort(out->items, out->count, sizeof(*out->items), cmp_file);
done:
	if (rc < 0)
		pmbot_repo_files_free(out);
	pmbot_buf_free(&w.path);
	lg.tree_free(tree);
	lg.commit_free(commit);
	return rc;
}

/* The size comes from the object header so that an oversized blob is
 * refused before it is inflated into memory. */
static int read_oid(pmbot_buf *out, pmbot_repo *r, const git_oid *id, const char *what,
	pmbot_buf *err)
{
	git_blob *blob = NULL;
	git_object_t type;
	size_t size;
	git_object_size_t raw;
	int rc = 0, gerr;

	if ((gerr = lg.odb_read_header(&size, &type, r->odb, id)) < 0) {
		rc = fail(err, gerr == GIT_ENOTFOUND ? PMBOT_ENOTFOUND : PMBOT_ERROR, gerr,
			"cannot read %s", what);
		goto done;
	}
	if (type != GIT_OBJECT_BLOB) {
		rc = fail(err, PMBOT_EINVALID, 0, "%s is a %s, not a blob", what,
			lg.object_type2string(type));
		goto done;
	}
	if (size > out->max - out->len) {
		rc = fail(err, PMBOT_REPO_ETOOBIG, 0,
			"%s is %zu bytes, more than the %zu bytes allowed", what, size,
			out->max - out->len);
		goto done;
	}
	if ((gerr = lg.blob_lookup(&blob, r->git, id)) < 0) {
		rc = fail(err, PMBOT_ERROR, gerr, "cannot read %s", what);
		goto done;
	}
	raw = lg.blob_rawsize(blob);
	if (raw > (git_object_size_t)(out->max - out->len)) {
		rc = fail(err, PMBOT_REPO_ETOOBIG, 0, "%s does not fit the buffer", what);
		goto done;
	}
	switch (pmbot_buf_put(out, lg.blob_rawcontent(blob), (size_t)raw)) {
	case 0:
		break;
	case PMBOT_ETOOBIG:
		rc = fail(err, PMBOT_REPO_ETOOBIG, 0, "%s does not fit the buffer", what);
		goto done;
	default:
		rc = fail(err, PMBOT_ERROR, 0, "out of memory reading %s", what);
		goto done;
	}
done:
	lg.blob_free(blob);
	return rc;
}

int pmbot_repo_read(pmbot_buf *out, char blob_id[PMBOT_OID_HEX_SIZE], pmbot_repo *repo,
	const char *rev, const char *path, pmbot_buf *err)
{
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_tree_entry *entry = NULL;
	char what[512];
	unsigned mode;
	int rc, gerr;

	lg.error_clear();
	if (!path || !*path) {
		rc = fail(err, PMBOT_EINVALID, 0, "empty path");
		goto done;
	}
	if ((rc = lookup_commit(&commit, repo, rev, err)) < 0 ||
	    (rc = commit_tree(&tree, commit, rev, err)) < 0)
		goto done;
	if ((gerr = lg.tree_entry_bypath(&entry, tree, path)) < 0) {
		rc = fail(err, gerr == GIT_ENOTFOUND ? PMBOT_ENOTFOUND : PMBOT_ERROR, gerr,
			"'%s' not found at '%s'", path, rev);
		goto done;
	}
	mode = (unsigned)lg.tree_entry_filemode(entry);
	if (!is_file_mode(mode)) {
		rc = fail(err, PMBOT_EINVALID, 0, "'%s' at '%s' is a %s, not a regular file",
			path, rev, mode == GIT_FILEMODE_TREE ? "directory" :
			mode == GIT_FILEMODE_LINK ? "symlink (never followed)" :
			mode == GIT_FILEMODE_COMMIT ? "submodule" : "special entry");
		goto done;
	}
	snprintf(what, sizeof(what), "'%s' at '%s'", path, rev);
	if ((rc = read_oid(out, repo, lg.tree_entry_id(entry), what, err)) < 0)
		goto done;
	if (blob_id)
		lg.oid_tostr(blob_id, PMBOT_OID_HEX_SIZE, lg.tree_entry_id(entry));
done:
	lg.tree_entry_free(entry);
	lg.tree_free(tree);
	lg.commit_free(commit);
	return rc;
}

int pmbot_repo_read_blob(pmbot_buf *out, pmbot_repo *repo, const char *blob_id,
	pmbot_buf *err)
{
	git_oid id;
	char what[64];

	lg.error_clear();
	if (!blob_id || strlen(blob_id) != 40 || lg.oid_fromstrn(&id, blob_id, 40) < 0)
		return fail(err, PMBOT_EINVALID, 0, "'%s' is not a 40-digit object id",
			blob_id ? blob_id : "(null)");
	snprintf(what, sizeof(what), "blob %s", blob_id);
	return read_oid(out, repo, &id, what, err);
}

int pmbot_repo_blob_size(size_t *out, pmbot_repo *repo, const char *blob_id, pmbot_buf *err)
{
	git_oid id;
	git_object_t type;
	size_t size;
	int gerr;

	*out = 0;
	lg.error_clear();
	if (!blob_id || strlen(blob_id) != 40 || lg.oid_fromstrn(&id, blob_id, 40) < 0)
		return fail(err, PMBOT_EINVALID, 0, "'%s' is not a 40-digit object id",
			blob_id ? blob_id : "(null)");
	/* The object's header only: its size is known without inflating it. */
	if ((gerr = lg.odb_read_header(&size, &type, repo->odb, &id)) < 0)
		return fail(err, gerr == GIT_ENOTFOUND ? PMBOT_ENOTFOUND : PMBOT_ERROR, gerr,
			"cannot read blob %s", blob_id);
	if (type != GIT_OBJECT_BLOB)
		return fail(err, PMBOT_EINVALID, 0, "%s is a %s, not a blob", blob_id,
			lg.object_type2string(type));
	*out = size;
	return 0;
}

const char *pmbot_change_kind_name(pmbot_change_kind kind)
{
	switch (kind) {
	case PMBOT_CHANGE_ADDED:
		return "added";
	case PMBOT_CHANGE_MODIFIED:
		return "modified";
	case PMBOT_CHANGE_DELETED:
		return "deleted";
	case PMBOT_CHANGE_RENAMED:
		return "renamed";
	}
	return NULL;
}

void pmbot_repo_changes_free(pmbot_repo_changes *changes)
{
	size_t i;

	for (i = 0; i < changes->count; i++) {
		free(changes->items[i].old_path);
		free(changes->items[i].new_path);
	}
	free(changes->items);
	memset(changes, 0, sizeof(*changes));
}

static const char *change_key(const pmbot_repo_change *c)
{
	return c->new_path ? c->new_path : c->old_path;
}

static int cmp_change(const void *a, const void *b)
{
	const pmbot_repo_change *x = a, *y = b;
	int d = strcmp(change_key(x), change_key(y));

	if (d)
		return d;
	if (!x->old_path || !y->old_path)
		return !!x->old_path - !!y->old_path;
	return strcmp(x->old_path, y->old_path);
}

static int add_change(pmbot_repo_changes *out, const git_diff_delta *d, int old_ok, int new_ok)
{
	pmbot_repo_change *c;

	if (out->count == out->alloc) {
		size_t alloc = out->alloc ? out->alloc * 2 : 16;
		pmbot_repo_change *items = realloc(out->items, alloc * sizeof(*items));

		if (!items)
			return -1;
		out->items = items;
		out->alloc = alloc;
	}
	c = &out->items[out->count];
	memset(c, 0, sizeof(*c));
	if (old_ok && !new_ok)
		c->kind = PMBOT_CHANGE_DELETED;
	else if (!old_ok)
		c->kind = PMBOT_CHANGE_ADDED;
	else if (d->status == GIT_DELTA_RENAMED)
		c->kind = PMBOT_CHANGE_RENAMED;
	else
		c->kind = PMBOT_CHANGE_MODIFIED;
	if (c->kind == PMBOT_CHANGE_RENAMED)
		c->similarity = d->similarity;
	if (old_ok) {
		if (!(c->old_path = dup_str(d->old_file.path)))
			return -1;
		lg.oid_tostr(c->old_blob_id, sizeof(c->old_blob_id), &d->old_file.id);
	}
	/* Count the item before the second allocation so a failure there
	 * still frees the first. */
	out->count++;
	if (new_ok) {
		if (!(c->new_path = dup_str(d->new_file.path)))
			return -1;
		lg.oid_tostr(c->new_blob_id, sizeof(c->new_blob_id), &d->new_file.id);
	}
	return 0;
}

int pmbot_repo_changed(pmbot_repo_changes *out, pmbot_repo *repo, const char *base,
	const char *rev, const char *const *globs, size_t n_globs, pmbot_buf *err)
{
	git_diff_options opts;
	git_diff_find_options find;
	git_commit *bc = NULL, *nc = NULL;
	git_tree *bt = NULL, *nt = NULL;
	git_diff *diff = NULL;
	size_t i, n;
	int rc, gerr;

	memset(out, 0, sizeof(*out));
	lg.error_clear();
	if ((rc = check_globs(globs, n_globs, err)) < 0 ||
	    (rc = lookup_commit(&bc, repo, base, err)) < 0 ||
	    (rc = lookup_commit(&nc, repo, rev, err)) < 0 ||
	    (rc = commit_tree(&bt, bc, base, err)) < 0 ||
	    (rc = commit_tree(&nt, nc, rev, err)) < 0)
		goto done;
	lg.oid_tostr(out->base_id, sizeof(out->base_id), lg.commit_id(bc));
	lg.oid_tostr(out->commit_id, sizeof(out->commit_id), lg.commit_id(nc));
	if (lg.diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION) < 0 ||
	    lg.diff_find_options_init(&find, GIT_DIFF_FIND_OPTIONS_VERSION) < 0) {
		rc = fail(err, PMBOT_ERROR, -1, "cannot set up the diff");
		goto done;
	}
	opts.ignore_submodules = GIT_SUBMODULE_IGNORE_ALL;
	if ((gerr = lg.diff_tree_to_tree(&diff, repo->git, bt, nt, &opts)) < 0) {
		rc = fail(err, PMBOT_ERROR, gerr, "cannot diff '%s' and '%s'", base, rev);
		goto done;
	}
	/* Every knob is set so that diff.renames / diff.renameLimit in some
	 * git config can never change the answer. The diff is not filtered by
	 * the globs first: a rename can only be paired if both sides are in. */
	find.flags = GIT_DIFF_FIND_RENAMES;
	find.rename_threshold = 50;
	find.rename_limit = 1000;
	if ((gerr = lg.diff_find_similar(diff, &find)) < 0) {
		rc = fail(err, PMBOT_ERROR, gerr, "rename detection failed");
		goto done;
	}
	n = lg.diff_num_deltas(diff);
	for (i = 0; i < n; i++) {
		const git_diff_delta *d = lg.diff_get_delta(diff, i);
		int old_ok = d->status != GIT_DELTA_ADDED && is_file_mode(d->old_file.mode);
		int new_ok = d->status != GIT_DELTA_DELETED && is_file_mode(d->new_file.mode);

		if (!old_ok && !new_ok)
			continue;
		if (n_globs && !(old_ok && any_glob(globs, n_globs, d->old_file.path)) &&
		    !(new_ok && any_glob(globs, n_globs, d->new_file.path)))
			continue;
		if (add_change(out, d, old_ok, new_ok) < 0) {
			rc = fail(err, PMBOT_ERROR, 0, "out of memory");
			goto done;
		}
	}
	if (out->count > 1)
		qsort(out->items, out->count, sizeof(*out->items), cmp_change);
done:
	if (rc < 0)
		pmbot_repo_changes_free(out);
	lg.diff_free(diff);
	lg.tree_free(bt);
	lg.tree_free(nt);
	lg.commit_free(bc);
	lg.commit_free(nc);
	return rc;
}

struct diff_sink {
	pmbot_buf *out;
	size_t start;
	size_t budget;
	int full;
	int oom;
};

/* A piece is one line, or a file header of several lines, and ends at a
 * line end except a content line without a final newline (its "\ No
 * newline" marker follows as its own piece): the caller trims that case
 * back after a cut. */
static int diff_line(const git_diff_delta *delta, const git_diff_hunk *hunk,
	const git_diff_line *line, void *payload)
{
	struct diff_sink *s = payload;
	size_t room = s->budget - (s->out->len - s->start), keep;
	int origin = line->origin == GIT_DIFF_LINE_CONTEXT ||
		line->origin == GIT_DIFF_LINE_ADDITION || line->origin == GIT_DIFF_LINE_DELETION;
	size_t need = line->content_len + (origin ? 1 : 0);

	(void)delta;
	(void)hunk;
	/* From libgit2 1.9 a non-zero return no longer stops the printing at
	 * once: the lines that still come must not be added after the cut, or a
	 * shorter line could land as a hunk without its file header. */
	if (s->full || s->oom)
		return 1;
	if (need > room) {
		s->full = 1;
		/* Keep the header lines that fit whole. */
		keep = origin ? 0 : room;
		while (keep && line->content[keep - 1] != '\n')
			keep--;
		if (keep && pmbot_buf_put(s->out, line->content, keep) < 0)
			s->oom = 1;
		return 1;
	}
	if ((origin && pmbot_buf_putc(s->out, (char)line->origin) < 0) ||
	    pmbot_buf_put(s->out, line->content, line->content_len) < 0) {
		s->oom = 1;
		return 1;
	}
	return 0;
}

int pmbot_repo_diff(pmbot_buf *out, int *truncated, pmbot_repo *repo, const char *from_rev,
	const char *to_rev, size_t max_bytes, pmbot_buf *err)
{
	git_diff_options opts;
	git_diff_find_options find;
	git_commit *fc = NULL, *tc = NULL;
	git_tree *ft = NULL, *tt = NULL;
	git_diff *diff = NULL;
	struct diff_sink sink = { out, out->len, max_bytes, 0, 0 };
	int rc, gerr;

	*truncated = 0;
	lg.error_clear();
	if (sink.budget > out->max - out->len)
		sink.budget = out->max - out->len;
	if ((rc = lookup_commit(&fc, repo, from_rev, err)) < 0 ||
	    (rc = lookup_commit(&tc, repo, to_rev, err)) < 0 ||
	    (rc = commit_tree(&ft, fc, from_rev, err)) < 0 ||
	    (rc = commit_tree(&tt, tc, to_rev, err)) < 0)
		goto done;
	if (lg.diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION) < 0 ||
	    lg.diff_find_options_init(&find, GIT_DIFF_FIND_OPTIONS_VERSION) < 0) {
		rc = fail(err, PMBOT_ERROR, -1, "cannot set up the diff");
		goto done;
	}
	/* Left at 0, id_abbrev would come from core.abbrev. */
	opts.ignore_submodules = GIT_SUBMODULE_IGNORE_ALL;
	opts.context_lines = 3;
	opts.interhunk_lines = 0;
	opts.id_abbrev = 7;
	if ((gerr = lg.diff_tree_to_tree(&diff, repo->git, ft, tt, &opts)) < 0) {
		rc = fail(err, PMBOT_ERROR, gerr, "cannot diff '%s' and '%s'", from_rev, to_rev);
		goto done;
	}
	/* The same fixed knobs as pmbot_repo_changed(), for the same reason. */
	find.flags = GIT_DIFF_FIND_RENAMES;
	find.rename_threshold = 50;
	find.rename_limit = 1000;
	if ((gerr = lg.diff_find_similar(diff, &find)) < 0) {
		rc = fail(err, PMBOT_ERROR, gerr, "rename detection failed");
		goto done;
	}
	gerr = lg.diff_print(diff, GIT_DIFF_FORMAT_PATCH, diff_line, &sink);
	if (sink.oom) {
		rc = fail(err, PMBOT_ERROR, 0, "out of memory printing the diff");
		goto done;
	}
	if (sink.full) {
		size_t keep = out->len;

		while (keep > sink.start && out->buf[keep - 1] != '\n')
			keep--;
		pmbot_buf_truncate(out, keep);
		*truncated = 1;
		lg.error_clear();
	} else if (gerr < 0) {
		rc = fail(err, PMBOT_ERROR, gerr, "cannot print the diff of '%s' and '%s'",
			from_rev, to_rev);
		goto done;
	}
done:
	if (rc < 0) {
		pmbot_buf_truncate(out, sink.start);
		*truncated = 0;
	}
	lg.diff_free(diff);
	lg.tree_free(ft);
	lg.tree_free(tt);
	lg.commit_free(fc);
	lg.commit_free(tc);
	return rc;
}

/*
 * Read remote.<name>.url from the configuration rather than through
 * git_remote_lookup(): the lookup matches config keys with a regex, and
 * libgit2 1.5's PCRE2 backend leaks its match data there.
 */
int pmbot_repo_remote_url(pmbot_buf *out, pmbot_repo *repo, const char *remote,
	pmbot_buf *err)
{
	git_config *cfg = NULL;
	git_buf url = GIT_BUF_INIT;
	pmbot_buf key = PMBOT_BUF_INIT;
	int rc = 0, gerr;

	lg.error_clear();
	if (pmbot_buf_printf(&key, "remote.%s.url", remote) < 0) {
		rc = fail(err, PMBOT_ERROR, 0, "out of memory");
		goto done;
	}
	if ((gerr = lg.repository_config_snapshot(&cfg, repo->git)) < 0) {
		rc = fail(err, PMBOT_ERROR, gerr, "cannot read the repository configuration");
		goto done;
	}
	if ((gerr = lg.config_get_string_buf(&url, cfg, key.buf)) < 0) {
		rc = fail(err, gerr == GIT_ENOTFOUND ? PMBOT_ENOTFOUND : PMBOT_ERROR, gerr,
			"no remote '%s'", remote);
		goto done;
	}
	if (pmbot_buf_put(out, url.ptr, url.size) < 0)
		rc = fail(err, PMBOT_ERROR, 0, "out of memory");
done:
	lg.buf_dispose(&url);
	lg.config_free(cfg);
	pmbot_buf_free(&key);
	return rc;
}
