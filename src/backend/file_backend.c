#include "pmbot/state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pmbot/array.h"
#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/strmap.h"
#include "pmbot/datetime.h"
#include "pmbot/banned.h"

#define DEFAULT_LOGIN "github-actions[bot]"
/* Far from small issue numbers, so a number passed where an id belongs is caught. */
#define FIRST_DATABASE_ID 1000001LL
#define ID_MAX 9007199254740991LL
#define NUMBER_MAX 2147483647L
#define TITLE_MAX 256
#define BODY_MAX 65536
#define LABEL_MAX 50
#define LABELS_MAX 100
#define SUB_ISSUES_MAX 100
#define LEVELS_MAX 8
#define DEPENDENCIES_MAX 50
#define SHOW_MAX 80
#define ERRORS_SHOWN 5

typedef struct {
	pmbot_backend base;     /* first, so the interface pointer is the backend */
	char *path;
	char *lock_path;
	char *login;
	int login_is_bot;
	/*
	 * The file as last read or written, and the identity of that file. The
	 * open descriptor keeps the inode alive, so a different file can never
	 * show up with the same device and inode numbers.
	 */
	pmbot_state *state;
	int missing;            /* `state` stands for a file that does not exist */
	int fd;
	struct stat st;
	/*
	 * Between hold and commit: the writers' lock is held (hold_fd), so the
	 * cache is the truth plus what was performed since (dirty), and
	 * nothing is written. `lost`: an operation failed half-way and the
	 * cache was dropped, so nothing performed since hold may be written.
	 */
	int holding, hold_fd, dirty, lost;
	/*
	 * Derived from `state` so an operation does not scan every issue:
	 * the latest updated_at (stamp_valid), and each issue's parent as an
	 * index into state->issues (NO_PARENT: none, or not in the state) with
	 * the number of children each has (tree_valid). Dropped with the cache;
	 * a failed operation drops them, a create drops the tree (it moves
	 * issues in the array).
	 */
	int stamp_valid;
	long long max_stamp;
	int tree_valid;
	size_t *parent_idx, *n_children;
	size_t *n_blocking;     /* blocked_by entries naming each issue (tree_valid) */
	/* The node ids of issues and items (keys borrowed from `state`) and
	 * the highest issue database id, for the next id (ids_valid). */
	int ids_valid;
	pmbot_strmap node_ids;
	long long max_dbid;
} file_backend;

#define NO_PARENT ((size_t)-1)

/* ---- small helpers ---- */

static int fold(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int repo_cmp(const char *a, const char *b)
{
	for (; *a && fold((unsigned char)*a) == fold((unsigned char)*b); a++, b++)
		;
	return fold((unsigned char)*a) - fold((unsigned char)*b);
}

static int repo_cmp_qsort(const void *pa, const void *pb)
{
	return repo_cmp(*(const char *const *)pa, *(const char *const *)pb);
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* User text quoted in messages: escaped and cut short. */
static void strings_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static const char *show(pmbot_buf *b, const char *s)
{
	return pmbot_diag_show(b, s, SHOW_MAX);
}

static char **strings_copy(char *const *v, size_t n)
{
	char **out;
	size_t i;

	if (!n)
		return NULL;
	if (!(out = calloc(n, sizeof(*out))))
		return NULL;
	for (i = 0; i < n; i++) {
		if (!(out[i] = strdup(v[i]))) {
			strings_free(out, i);
			return NULL;
		}
	}
	return out;
}

static char *dup_or_null(const char *s, int *err)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*err = 1;
	return d;
}

static int issue_copy(pmbot_issue *dst, const pmbot_issue *src)
{
	int err = 0;

	*dst = *src;
	dst->repo = dup_or_null(src->repo, &err);
	dst->node_id = dup_or_null(src->node_id, &err);
	dst->title = dup_or_null(src->title, &err);
	dst->body = dup_or_null(src->body, &err);
	dst->author = dup_or_null(src->author, &err);
	dst->updated_at = dup_or_null(src->updated_at, &err);
	dst->parent = dup_or_null(src->parent, &err);
	dst->issue_type = dup_or_null(src->issue_type, &err);
	dst->labels = strings_copy(src->labels, src->n_labels);
	dst->blocked_by = strings_copy(src->blocked_by, src->n_blocked_by);
	if ((src->n_labels && !dst->labels) || (src->n_blocked_by && !dst->blocked_by)) {
		dst->n_labels = dst->labels ? dst->n_labels : 0;
		dst->n_blocked_by = dst->blocked_by ? dst->n_blocked_by : 0;
		err = 1;
	}
	if (err) {
		pmbot_issue_clear(dst);
		return PMBOT_ERROR;
	}
	return PMBOT_OK;
}

static void project_free(pmbot_project *p)
{
	size_t i, k;

	if (!p)
		return;
	for (i = 0; i < p->n_fields; i++) {
		for (k = 0; k < p->fields[i].n_options; k++) {
			free(p->fields[i].options[k].id);
			free(p->fields[i].options[k].name);
		}
		free(p->fields[i].options);
		free(p->fields[i].id);
		free(p->fields[i].name);
	}
	for (i = 0; i < p->n_items; i++) {
		free(p->items[i].id);
		free(p->items[i].issue);
		json_decref(p->items[i].values);
	}
	free(p->fields);
	free(p->items);
	free(p->owner);
	free(p->node_id);
	free(p);
}

static pmbot_project *project_copy(const pmbot_project *src)
{
	pmbot_project *p = calloc(1, sizeof(*p));
	size_t i, k;
	int err = !p;

	if (err)
		return NULL;
	p->number = src->number;
	p->owner = dup_or_null(src->owner, &err);
	p->node_id = dup_or_null(src->node_id, &err);
	if (src->n_fields && !(p->fields = calloc(src->n_fields, sizeof(*p->fields))))
		err = 1;
	for (i = 0; !err && i < src->n_fields; i++) {
		const pmbot_pfield *f = &src->fields[i];
		pmbot_pfield *g = &p->fields[p->n_fields++];

		g->type = f->type;
		g->id = dup_or_null(f->id, &err);
		g->name = dup_or_null(f->name, &err);
		if (f->n_options && !(g->options = calloc(f->n_options, sizeof(*g->options))))
			err = 1;
		for (k = 0; !err && k < f->n_options; k++) {
			g->options[g->n_options].id = dup_or_null(f->options[k].id, &err);
			g->options[g->n_options++].name = dup_or_null(f->options[k].name, &err);
		}
	}
	if (!err && src->n_items && !(p->items = calloc(src->n_items, sizeof(*p->items))))
		err = 1;
	for (i = 0; !err && i < src->n_items; i++) {
		pmbot_pitem *it = &p->items[p->n_items++];

		it->id = dup_or_null(src->items[i].id, &err);
		it->issue = dup_or_null(src->items[i].issue, &err);
		if (!(it->values = json_deep_copy(src->items[i].values)))
			err = 1;
	}
	if (err) {
		project_free(p);
		return NULL;
	}
	return p;
}

/* ---- the file ---- */

static void drop_tree(file_backend *fb)
{
	fb->tree_valid = 0;
	free(fb->parent_idx);
	free(fb->n_children);
	free(fb->n_blocking);
	fb->parent_idx = fb->n_children = fb->n_blocking = NULL;
}

static void drop_derived(file_backend *fb)
{
	fb->stamp_valid = 0;
	fb->ids_valid = 0;
	pmbot_strmap_free(&fb->node_ids);
	memset(&fb->node_ids, 0, sizeof(fb->node_ids));
	drop_tree(fb);
}

static void drop_cache(file_backend *fb)
{
	drop_derived(fb);
	pmbot_state_free(fb->state);
	fb->state = NULL;
	fb->missing = 0;
	if (fb->fd >= 0)
		close(fb->fd);
	fb->fd = -1;
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
		a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
		a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/*
 * Read all of `fd`, stopping at out->max bytes: the cap is one byte over the
 * parse limit, so the parser is the one to say the file is too large.
 * `size`, the file's size when read, sizes the buffer once: doubling towards
 * it touched twice the file's pages (16 MB for an 8 MB state) and copied.
 */
static int read_fd(pmbot_buf *out, int fd, off_t size)
{
	if (size > 0 && (unsigned long long)size < out->max - out->len &&
	    pmbot_buf_grow(out, (size_t)size + 1) < 0) {
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		size_t room = out->max - out->len;
		ssize_t n;

		if (!room)
			return 0;
		/* Room left (the sized buffer) is filled before any more is asked for. */
		if (out->cap - out->len <= 1 &&
		    pmbot_buf_grow(out, room < 65536 ? room : 65536) < 0) {
			errno = ENOMEM;
			return -1;
		}
		room = out->cap - out->len - 1;
		if (room > out->max - out->len)
			room = out->max - out->len;
		n = read(fd, out->buf + out->len, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		out->len += (size_t)n;
		out->buf[out->len] = '\0';
	}
}

static void summarize(pmbot_buf *err, const pmbot_diag_list *diags)
{
	size_t i, shown = 0;

	for (i = 0; i < diags->count && shown < ERRORS_SHOWN; i++) {
		if (diags->items[i].severity != PMBOT_SEV_ERROR)
			continue;
		pmbot_diag_format(err, &diags->items[i]);
		shown++;
	}
	if (diags->errors > shown)
		pmbot_buf_printf(err, "... and %zu more errors\n", diags->errors - shown);
}

/*
 * Make fb->state the file as it is now: reused when the file is the one
 * last seen, else read and validated again (a second process may have
 * written it). Invalid files fill `diags` (may be NULL) and `err`.
 */
static int load(file_backend *fb, pmbot_buf *err, pmbot_diag_list *diags)
{
	pmbot_diag_list local = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text;
	pmbot_state *st = NULL;
	struct stat sb;
	int fd, rc = PMBOT_ERROR;

	pmbot_buf_init(&text, PMBOT_STATE_MAX_BYTES + 1);
	fd = open(fb->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (fb->state && fb->missing)
			return PMBOT_OK;
		if (pmbot_state_new(&st) < 0) {
			pmbot_buf_puts(err, "out of memory\n");
			return PMBOT_ERROR;
		}
		drop_cache(fb);
		fb->state = st;
		fb->missing = 1;
		return PMBOT_OK;
	}
	if (fd < 0 || fstat(fd, &sb) < 0) {
		pmbot_buf_printf(err, "cannot read %s: %s\n", fb->path, strerror(errno));
		goto done;
	}
	if (fb->state && !fb->missing && same_file(&sb, &fb->st)) {
		rc = PMBOT_OK;
		goto done;
	}
	if (read_fd(&text, fd, S_ISREG(sb.st_mode) ? sb.st_size : 0) < 0) {
		pmbot_buf_printf(err, "cannot read %s: %s\n", fb->path, strerror(errno));
		goto done;
	}
	rc = pmbot_state_parse_buf(&st, fb->path, &text, &local);
	if (rc == PMBOT_EINVALID)
		summarize(err, &local);
	else if (rc != PMBOT_OK)
		pmbot_buf_puts(err, "out of memory\n");
	if (diags && pmbot_diag_list_move(diags, &local) < 0)
		rc = PMBOT_ERROR;
	if (rc != PMBOT_OK)
		goto done;
	drop_cache(fb);
	fb->state = st;
	fb->fd = fd;
	fb->st = sb;
	fd = -1;
	st = NULL;
done:
	if (fd >= 0)
		close(fd);
	pmbot_state_free(st);
	pmbot_diag_list_free(&local);
	pmbot_buf_free(&text);
	return rc;
}

/* Write fb->state to the file, atomically; the cache then stands for the new file. */
static int save(file_backend *fb, pmbot_buf *err)
{
	pmbot_buf out;
	struct stat sb;
	int rc = PMBOT_ERROR, fd;

	/* No cap while writing: the limit is checked on the result, to say what went wrong. */
	pmbot_buf_init(&out, (size_t)-1 / 2);
	if (pmbot_state_canonical(&out, fb->state) < 0 || pmbot_buf_putc(&out, '\n') < 0) {
		pmbot_buf_puts(err, "out of memory\n");
		goto done;
	}
	if (out.len > PMBOT_STATE_MAX_BYTES) {
		rc = PMBOT_EINVALID;
		pmbot_buf_printf(err, "the state file would be larger than %zu MiB\n",
			PMBOT_STATE_MAX_BYTES >> 20);
		goto done;
	}
	if (pmbot_fs_write_atomic(fb->path, out.buf, out.len) < 0) {
		pmbot_buf_printf(err, "cannot write %s: %s\n", fb->path, strerror(errno));
		goto done;
	}
	rc = PMBOT_OK;
	/* Under the lock no other pm-bot replaces the file between the rename and this open. */
	if ((fd = open(fb->path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &sb) < 0) {
		if (fd >= 0)
			close(fd);
		drop_cache(fb);
		goto done;
	}
	if (fb->fd >= 0)
		close(fb->fd);
	fb->fd = fd;
	fb->st = sb;
	fb->missing = 0;
done:
	pmbot_buf_free(&out);
	return rc;
}

/* Create the file's directory and take the writers' lock (`*lock_fd`). */
static int lock(file_backend *fb, int *lock_fd, pmbot_buf *err)
{
	const char *slash = strrchr(fb->path, '/');
	pmbot_buf dir = PMBOT_BUF_INIT;
	int rc = PMBOT_ERROR;

	*lock_fd = -1;
	if (slash && slash != fb->path) {
		if (pmbot_buf_put(&dir, fb->path, (size_t)(slash - fb->path)) < 0) {
			pmbot_buf_puts(err, "out of memory\n");
			goto done;
		}
		if (pmbot_fs_mkdirs(dir.buf, 0755) < 0) {
			pmbot_buf_printf(err, "cannot create %s: %s\n", dir.buf, strerror(errno));
			goto done;
		}
	}
	if ((*lock_fd = open(fb->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		pmbot_buf_printf(err, "cannot open %s: %s\n", fb->lock_path, strerror(errno));
		goto done;
	}
	while (flock(*lock_fd, LOCK_EX) < 0) {
		if (errno == EINTR)
			continue;
		pmbot_buf_printf(err, "cannot lock %s: %s\n", fb->lock_path, strerror(errno));
		close(*lock_fd);
		*lock_fd = -1;
		goto done;
	}
	rc = PMBOT_OK;
done:
	pmbot_buf_free(&dir);
	return rc;
}

/* ---- operations ---- */

typedef struct {
	file_backend *fb;
	pmbot_state *st;
	const char *op;
	const json_t *args;
	pmbot_buf *err;
	json_t *result;
	pmbot_buf show[2];
} op_ctx;

static int say(op_ctx *o, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Append "operation: message" to the error buffer and return `rc`. */
static int say(op_ctx *o, int rc, const char *fmt, ...)
{
	va_list ap;

	pmbot_buf_printf(o->err, "%s: ", o->op);
	va_start(ap, fmt);
	pmbot_buf_vprintf(o->err, fmt, ap);
	va_end(ap);
	pmbot_buf_putc(o->err, '\n');
	return rc;
}

#define REFUSE(o, ...) say(o, PMBOT_EINVALID, __VA_ARGS__)
#define OOM(o) say(o, PMBOT_ERROR, "out of memory")

static int arg_str(op_ctx *o, const char *key, const char **out)
{
	const json_t *v = json_object_get(o->args, key);

	if (!json_is_string(v))
		return REFUSE(o, "`%s` must be a string", key);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return REFUSE(o, "`%s` must not contain a NUL character", key);
	*out = json_string_value(v);
	return PMBOT_OK;
}

static int arg_int(op_ctx *o, const char *key, long long min, long long max, long long *out)
{
	const json_t *v = json_object_get(o->args, key);

	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
		return REFUSE(o, "`%s` must be an integer from %lld to %lld", key, min, max);
	*out = json_integer_value(v);
	return PMBOT_OK;
}

static int arg_bool(op_ctx *o, const char *key, int *out)
{
	const json_t *v = json_object_get(o->args, key);

	if (!json_is_boolean(v))
		return REFUSE(o, "`%s` must be true or false", key);
	*out = json_is_true(v);
	return PMBOT_OK;
}

static int valid_repo(const char *repo)
{
	pmbot_buf ref = PMBOT_BUF_INIT, back = PMBOT_BUF_INIT;
	long n;
	int ok;

	/* The ref parser owns the naming rules; a repo is valid when repo#1 is. */
	ok = pmbot_issue_ref(&ref, repo, 1) == 0 &&
		pmbot_issue_ref_parse(&back, &n, ref.buf) == PMBOT_OK && back.len == strlen(repo);
	pmbot_buf_free(&ref);
	pmbot_buf_free(&back);
	return ok;
}

static pmbot_issue *issue_at(pmbot_state *st, const char *repo, long number)
{
	const pmbot_issue *is = pmbot_state_issue_at(st, repo, number);

	return is ? &st->issues[is - st->issues] : NULL;
}

/* The existing issue named by args `repo_key` and `number_key`. */
static int arg_issue(op_ctx *o, const char *repo_key, const char *number_key, pmbot_issue **out)
{
	const char *repo;
	long long n;
	int rc;

	if ((rc = arg_str(o, repo_key, &repo)) < 0 ||
	    (rc = arg_int(o, number_key, 1, NUMBER_MAX, &n)) < 0)
		return rc;
	if (!valid_repo(repo))
		return REFUSE(o, "`%s` is not a repository OWNER/NAME", show(&o->show[0], repo));
	if (!(*out = issue_at(o->st, repo, (long)n)))
		return REFUSE(o, "issue %s#%lld does not exist", show(&o->show[0], repo), n);
	return PMBOT_OK;
}

static int check_title(op_ctx *o, const char *title)
{
	size_t n = utf8_chars(title);

	if (!n)
		return REFUSE(o, "the title must not be empty");
	if (n > TITLE_MAX)
		return REFUSE(o, "the title has %zu characters; GitHub allows %d", n, TITLE_MAX);
	return PMBOT_OK;
}

static int check_body(op_ctx *o, const char *body)
{
	size_t n = utf8_chars(body);

	if (n > BODY_MAX)
		return REFUSE(o, "the body has %zu characters; GitHub allows %d", n, BODY_MAX);
	return PMBOT_OK;
}

static int label_cmp(const void *pa, const void *pb)
{
	return strcmp(*(const char *const *)pa, *(const char *const *)pb);
}

/*
 * The labels `cur` with the args' `labels` added (`add`) or taken away, as
 * a new sorted, unique array of new strings. Refuses bad label names, too
 * many labels, and removing a label the issue does not have (GitHub: 404).
 */
static int label_set(op_ctx *o, char *const *cur, size_t n_cur, int add, char ***out,
	size_t *n_out)
{
	const json_t *labels = json_object_get(o->args, "labels");
	const char **all = NULL;
	size_t n = 0, i, k, n_args = json_array_size(labels);
	int rc = PMBOT_ERROR;

	*out = NULL;
	*n_out = 0;
	if (!json_is_array(labels))
		return REFUSE(o, "`labels` must be an array of strings");
	if (!(all = calloc(n_cur + n_args + 1, sizeof(*all))))
		return OOM(o);
	for (i = 0; i < n_args; i++) {
		const json_t *v = json_array_get(labels, i);
		const char *s = json_string_value(v);

		if (!s || strlen(s) != json_string_length(v) || !*s) {
			rc = REFUSE(o, "`labels` must hold non-empty strings");
			goto done;
		}
		if (utf8_chars(s) > LABEL_MAX) {
			rc = REFUSE(o, "label `%s` is longer than %d characters", show(&o->show[0], s),
				LABEL_MAX);
			goto done;
		}
		if (add)
			all[n++] = s;
	}
	for (i = 0; i < n_cur; i++) {
		int removed = 0;

		for (k = 0; !add && k < n_args; k++)
			removed |= !strcmp(cur[i], json_string_value(json_array_get(labels, k)));
		if (!removed)
			all[n++] = cur[i];
	}
	for (k = 0; !add && k < n_args; k++) {
		const char *s = json_string_value(json_array_get(labels, k));

		for (i = 0; i < n_cur && strcmp(cur[i], s); i++)
			;
		if (i == n_cur) {
			rc = REFUSE(o, "the issue has no label `%s`", show(&o->show[0], s));
			goto done;
		}
	}
	if (n)
		qsort(all, n, sizeof(*all), label_cmp);
	for (i = k = 0; i < n; i++)
		if (!k || strcmp(all[k - 1], all[i]))
			all[k++] = all[i];
	n = k;
	if (n > LABELS_MAX) {
		rc = REFUSE(o, "the issue would have %zu labels; GitHub allows %d", n, LABELS_MAX);
		goto done;
	}
	if (n && !(*out = strings_copy((char *const *)all, n))) {
		rc = OOM(o);
		goto done;
	}
	*n_out = n;
	rc = PMBOT_OK;
done:
	free(all);
	return rc;
}

/* A new updated_at: now, but always after every stamp already in the file. */
static int next_stamp(op_ctx *o, char **out)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	const char *env = getenv("PMBOT_NOW");
	long long now, max = LLONG_MIN, t;
	size_t i;
	int rc;

	*out = NULL;
	if (env && *env) {
		if (pmbot_datetime_parse(&now, env) < 0)
			return say(o, PMBOT_ERROR, "PMBOT_NOW `%s` is not an RFC 3339 date-time",
				show(&o->show[0], env));
	} else {
		now = (long long)time(NULL);
	}
	if (o->fb->stamp_valid) {
		max = o->fb->max_stamp;
	} else {
		for (i = 0; i < o->st->n_issues; i++)
			if (!pmbot_datetime_parse(&t, o->st->issues[i].updated_at) && t > max)
				max = t;
	}
	if (max != LLONG_MIN && now <= max)
		now = max + 1;
	/* The operation will store `now`; if it fails instead, fb_perform drops this. */
	o->fb->max_stamp = now > max ? now : max;
	o->fb->stamp_valid = 1;
	if ((rc = pmbot_datetime_format(&b, now)) < 0) {
		pmbot_buf_free(&b);
		return rc == PMBOT_EINVALID ? say(o, PMBOT_ERROR, "the clock is out of range") : OOM(o);
	}
	*out = pmbot_buf_detach(&b, NULL);
	return *out ? PMBOT_OK : OOM(o);
}

static int stamp(op_ctx *o, pmbot_issue *is)
{
	char *s;
	int rc = next_stamp(o, &s);

	if (rc < 0)
		return rc;
	free(is->updated_at);
	is->updated_at = s;
	return PMBOT_OK;
}

/* `prefix` and the id in unpadded base64url of its big-endian bytes, leading zeros dropped. */
static char *encode_id(const char *prefix, long long id)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	pmbot_buf b = PMBOT_BUF_INIT;
	unsigned char bytes[8];
	size_t n = 0, i;
	int shift, err = pmbot_buf_puts(&b, prefix);

	for (shift = 56; shift >= 0; shift -= 8) {
		unsigned char c = (unsigned char)((unsigned long long)id >> shift);

		if (n || c)
			bytes[n++] = c;
	}
	for (i = 0; i < n; i += 3) {
		unsigned v = (unsigned)bytes[i] << 16 | (i + 1 < n ? (unsigned)bytes[i + 1] << 8 : 0) |
			(i + 2 < n ? bytes[i + 2] : 0);

		err |= pmbot_buf_putc(&b, abc[v >> 18 & 63]);
		err |= pmbot_buf_putc(&b, abc[v >> 12 & 63]);
		if (i + 1 < n)
			err |= pmbot_buf_putc(&b, abc[v >> 6 & 63]);
		if (i + 2 < n)
			err |= pmbot_buf_putc(&b, abc[v & 63]);
	}
	if (err) {
		pmbot_buf_free(&b);
		return NULL;
	}
	return pmbot_buf_detach(&b, NULL);
}

static int id_taken(const pmbot_state *st, const char *id)
{
	size_t i;

	for (i = 0; i < st->n_issues; i++)
		if (!strcmp(st->issues[i].node_id, id))
			return 1;
	for (i = 0; st->project && i < st->project->n_items; i++)
		if (!strcmp(st->project->items[i].id, id))
			return 1;
	return 0;
}

/*
 * The next database id (one counter for issues and project items, kept in
 * extra.next_database_id and never below any id in the file) and the node
 * id `prefix` derives from it, skipping ids a hand-edited file already uses.
 */
/* fb->node_ids and fb->max_dbid for fb->state; PMBOT_ERROR when out of memory. */
static int id_index(file_backend *fb)
{
	const pmbot_state *st = fb->state;
	size_t i;

	if (fb->ids_valid)
		return PMBOT_OK;
	pmbot_strmap_free(&fb->node_ids);
	memset(&fb->node_ids, 0, sizeof(fb->node_ids));
	fb->max_dbid = 0;
	for (i = 0; i < st->n_issues; i++) {
		if (st->issues[i].database_id > fb->max_dbid)
			fb->max_dbid = st->issues[i].database_id;
		if (pmbot_strmap_put(&fb->node_ids, st->issues[i].node_id, NULL, NULL) < 0)
			return PMBOT_ERROR;
	}
	for (i = 0; st->project && i < st->project->n_items; i++)
		if (pmbot_strmap_put(&fb->node_ids, st->project->items[i].id, NULL, NULL) < 0)
			return PMBOT_ERROR;
	fb->ids_valid = 1;
	return PMBOT_OK;
}

/* A new issue or item took `node_id` (borrowed from the state) and `dbid` (0: an item). */
static void id_taken_now(file_backend *fb, const char *node_id, long long dbid)
{
	if (!fb->ids_valid)
		return;
	if (pmbot_strmap_put(&fb->node_ids, node_id, NULL, NULL) < 0)
		fb->ids_valid = 0; /* built again when next needed */
	if (dbid > fb->max_dbid)
		fb->max_dbid = dbid;
}

static int next_ids(op_ctx *o, const char *prefix, long long *id, char **node_id)
{
	const json_t *next = json_object_get(o->st->extra, "next_database_id");
	file_backend *fb = o->fb;
	size_t i;
	int indexed = id_index(fb) == PMBOT_OK;

	*id = FIRST_DATABASE_ID;
	if (json_is_integer(next) && json_integer_value(next) > *id)
		*id = json_integer_value(next);
	if (indexed) {
		if (fb->max_dbid >= *id)
			*id = fb->max_dbid + 1;
	} else {
		for (i = 0; i < o->st->n_issues; i++)
			if (o->st->issues[i].database_id >= *id)
				*id = o->st->issues[i].database_id + 1;
	}
	for (;;) {
		if (*id > ID_MAX)
			return REFUSE(o, "database ids are exhausted");
		if (!(*node_id = encode_id(prefix, *id)))
			return OOM(o);
		if (!(indexed ? pmbot_strmap_get(&fb->node_ids, *node_id, NULL) : id_taken(o->st, *node_id)))
			return PMBOT_OK;
		free(*node_id);
		(*id)++;
	}
}

static int set_next_id(op_ctx *o, long long used)
{
	if (!o->st->extra && !(o->st->extra = json_object()))
		return OOM(o);
	if (json_object_set_new(o->st->extra, "next_database_id", json_integer(used + 1)) < 0)
		return OOM(o);
	return PMBOT_OK;
}

/*
 * The spelling of `want` among the issue types `repo` offers
 * (extra.issue_types, matched ASCII case-insensitively as GitHub does), or
 * NULL when it offers none such. Borrowed from the state's extra.
 */
static const char *offered_type(const op_ctx *o, const char *repo, const char *want)
{
	const json_t *types = NULL, *v;
	const char *key;
	size_t i;

	json_object_foreach((json_t *)json_object_get(o->st->extra, "issue_types"), key, v)
		if (!strcasecmp(key, repo))
			types = v;
	json_array_foreach(types, i, v)
		if (json_is_string(v) && !strcasecmp(json_string_value(v), want))
			return json_string_value(v);
	return NULL;
}

static int op_create_issue(op_ctx *o)
{
	pmbot_issue is;
	const char *repo, *title, *body, *type;
	size_t at, end;
	long long id = 0;
	int rc;

	memset(&is, 0, sizeof(is));
	if ((rc = arg_str(o, "repo", &repo)) < 0 || (rc = arg_str(o, "title", &title)) < 0 ||
	    (rc = arg_str(o, "body", &body)) < 0)
		return rc;
	if (!valid_repo(repo))
		return REFUSE(o, "`%s` is not a repository OWNER/NAME", show(&o->show[0], repo));
	if ((rc = check_title(o, title)) < 0 || (rc = check_body(o, body)) < 0 ||
	    (rc = label_set(o, NULL, 0, 1, &is.labels, &is.n_labels)) < 0)
		goto done;
	at = pmbot_state_lower_bound(o->st, repo, 0);
	end = pmbot_state_lower_bound(o->st, repo, LONG_MAX);
	/* Keep the spelling the file already uses for this repository. */
	if (at < end)
		repo = o->st->issues[at].repo;
	is.number = at < end ? o->st->issues[end - 1].number + 1 : 1;
	if (is.number > NUMBER_MAX) {
		rc = REFUSE(o, "%s has no issue numbers left", show(&o->show[0], repo));
		goto done;
	}
	if ((rc = next_ids(o, "I_", &id, &is.node_id)) < 0 || (rc = next_stamp(o, &is.updated_at)) < 0)
		goto done;
	is.database_id = id;
	is.closed = 0;
	is.author_is_bot = o->fb->login_is_bot;
	if (!(is.repo = strdup(repo)) || !(is.title = strdup(title)) ||
	    !(is.body = strdup(body)) || !(is.author = strdup(o->fb->login))) {
		rc = OOM(o);
		goto done;
	}
	/*
	 * The optional issue type, as GitHub's createIssue takes it: set when
	 * the repository offers it, else none and no error (the type label
	 * still says the kind), so a re-plan finds nothing to change.
	 */
	type = json_string_value(json_object_get(o->args, "issue_type"));
	if (type && (type = offered_type(o, repo, type)) && !(is.issue_type = strdup(type))) {
		rc = OOM(o);
		goto done;
	}
	{
		pmbot_issue *p = pmbot_array_grow(o->st->issues, &o->st->alloc_issues,
			o->st->n_issues + 1, sizeof(*p));

		if (!p) {
			rc = OOM(o);
			goto done;
		}
		o->st->issues = p;
	}
	if (json_object_set_new(o->result, "number", json_integer(is.number)) < 0 ||
	    json_object_set_new(o->result, "database_id", json_integer(id)) < 0 ||
	    json_object_set_new(o->result, "node_id", json_string(is.node_id)) < 0) {
		rc = OOM(o);
		goto done;
	}
	if ((rc = set_next_id(o, id)) < 0)
		goto done;
	/* The new number is the repository's highest: it goes at the end of its run. */
	drop_tree(o->fb);
	memmove(&o->st->issues[end + 1], &o->st->issues[end],
		(o->st->n_issues - end) * sizeof(*o->st->issues));
	o->st->issues[end] = is;
	o->st->n_issues++;
	id_taken_now(o->fb, o->st->issues[end].node_id, id);
	memset(&is, 0, sizeof(is));
	rc = PMBOT_OK;
done:
	pmbot_issue_clear(&is);
	return rc;
}

static int op_update_text(op_ctx *o, int title)
{
	pmbot_issue *is;
	const char *text;
	char *copy;
	int rc;

	if ((rc = arg_issue(o, "repo", "number", &is)) < 0 ||
	    (rc = arg_str(o, title ? "title" : "body", &text)) < 0 ||
	    (rc = title ? check_title(o, text) : check_body(o, text)) < 0)
		return rc;
	if (!(copy = strdup(text)))
		return OOM(o);
	if ((rc = stamp(o, is)) < 0) {
		free(copy);
		return rc;
	}
	if (title) {
		free(is->title);
		is->title = copy;
	} else {
		free(is->body);
		is->body = copy;
	}
	return PMBOT_OK;
}

static int op_update_issue_title(op_ctx *o)
{
	return op_update_text(o, 1);
}

static int op_update_issue_body(op_ctx *o)
{
	return op_update_text(o, 0);
}

static int op_labels(op_ctx *o, int add)
{
	pmbot_issue *is;
	char **labels;
	size_t n;
	int rc;

	if ((rc = arg_issue(o, "repo", "number", &is)) < 0 ||
	    (rc = label_set(o, is->labels, is->n_labels, add, &labels, &n)) < 0)
		return rc;
	if ((rc = stamp(o, is)) < 0) {
		strings_free(labels, n);
		return rc;
	}
	strings_free(is->labels, is->n_labels);
	is->labels = labels;
	is->n_labels = n;
	return PMBOT_OK;
}

static int op_add_labels(op_ctx *o)
{
	return op_labels(o, 1);
}

static int op_remove_labels(op_ctx *o)
{
	return op_labels(o, 0);
}

static int ref_of(op_ctx *o, const pmbot_issue *is, char **out)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	if (pmbot_issue_ref(&b, is->repo, is->number) < 0 || !(*out = pmbot_buf_detach(&b, NULL))) {
		pmbot_buf_free(&b);
		return OOM(o);
	}
	return PMBOT_OK;
}

/* The parent of `is` when it is in the state, else NULL. */
static const pmbot_issue *parent_of(const pmbot_state *st, const pmbot_issue *is)
{
	return is->parent ? pmbot_state_issue(st, is->parent) : NULL;
}

/* fb->parent_idx and fb->n_children for fb->state; PMBOT_ERROR when out of memory. */
static int tree_index(file_backend *fb)
{
	const pmbot_state *st = fb->state;
	size_t i, n = st->n_issues;

	size_t k;

	if (fb->tree_valid)
		return PMBOT_OK;
	drop_tree(fb);
	fb->parent_idx = calloc(n + 1, sizeof(*fb->parent_idx));
	fb->n_children = calloc(n + 1, sizeof(*fb->n_children));
	fb->n_blocking = calloc(n + 1, sizeof(*fb->n_blocking));
	if (!fb->parent_idx || !fb->n_children || !fb->n_blocking) {
		drop_tree(fb);
		return PMBOT_ERROR;
	}
	for (i = 0; i < n; i++) {
		const pmbot_issue *p = parent_of(st, &st->issues[i]);

		fb->parent_idx[i] = p ? (size_t)(p - st->issues) : NO_PARENT;
		if (p)
			fb->n_children[p - st->issues]++;
		/* Refs equal (pmbot_issue_ref_cmp) exactly when they find the same issue. */
		for (k = 0; k < st->issues[i].n_blocked_by; k++)
			if ((p = pmbot_state_issue(st, st->issues[i].blocked_by[k])))
				fb->n_blocking[p - st->issues]++;
	}
	fb->tree_valid = 1;
	return PMBOT_OK;
}

/*
 * Levels from the top of `is`'s tree down to `is` (1 for a root); a parent
 * outside the state counts as one more level. Stops with `*cycle` set when
 * the walk meets `stop` or runs longer than the state is big (a cycle in
 * a hand-edited file).
 */
static size_t level_of(const pmbot_state *st, const pmbot_issue *is, const pmbot_issue *stop,
	int *cycle)
{
	size_t level = 1;

	*cycle = 0;
	for (;;) {
		if (is == stop || level > st->n_issues) {
			*cycle = 1;
			return level;
		}
		if (!is->parent)
			return level;
		level++;
		if (!(is = parent_of(st, is)))
			return level;
	}
}

/*
 * Levels of the subtree under `root` (1 for a leaf). The walk up from each
 * issue is cut after LEVELS_MAX steps: a subtree that deep is refused
 * whatever lies below. Needs tree_index().
 */
static size_t height_of(const file_backend *fb, size_t root)
{
	size_t height = 1, i, d, at;

	/* Only an issue with children has anything below it: most have none. */
	if (!fb->n_children[root])
		return 1;
	for (i = 0; i < fb->state->n_issues; i++) {
		for (at = i, d = 0; at != NO_PARENT && at != root && d <= LEVELS_MAX; d++)
			at = fb->parent_idx[at];
		if (at == root && d + 1 > height)
			height = d + 1;
	}
	return height;
}

static int op_set_parent(op_ctx *o)
{
	pmbot_issue *child, *parent;
	long long dbid;
	size_t ci, pi, children, level, height;
	char *ref = NULL;
	int replace = 0, cycle, rc;

	if ((rc = arg_issue(o, "repo", "number", &child)) < 0 ||
	    (rc = arg_int(o, "database_id", 1, ID_MAX, &dbid)) < 0 ||
	    (rc = arg_issue(o, "parent_repo", "parent_number", &parent)) < 0 ||
	    (rc = arg_bool(o, "replace", &replace)) < 0)
		return rc;
	if (dbid != child->database_id)
		return REFUSE(o, "database_id %lld is not the id of %s#%ld (%lld)", dbid,
			show(&o->show[0], child->repo), child->number, child->database_id);
	if (child == parent)
		return REFUSE(o, "an issue cannot be its own parent");
	if (child->parent && parent_of(o->st, child) == parent && !replace)
		return REFUSE(o, "%s#%ld is already a sub-issue of %s#%ld",
			show(&o->show[0], child->repo), child->number,
			show(&o->show[1], parent->repo), parent->number);
	if (child->parent && !replace)
		return REFUSE(o, "%s#%ld already has a parent (%s); GitHub refuses a second one "
			"unless it is replaced", show(&o->show[0], child->repo), child->number,
			show(&o->show[1], child->parent));
	if (tree_index(o->fb) < 0)
		return OOM(o);
	ci = (size_t)(child - o->st->issues);
	pi = (size_t)(parent - o->st->issues);
	children = o->fb->n_children[pi] - (o->fb->parent_idx[ci] == pi);
	if (children >= SUB_ISSUES_MAX)
		return REFUSE(o, "%s#%ld already has %zu sub-issues; GitHub allows %d",
			show(&o->show[0], parent->repo), parent->number, children, SUB_ISSUES_MAX);
	level = level_of(o->st, parent, child, &cycle);
	if (cycle)
		return REFUSE(o, "%s#%ld is %s#%ld's ancestor: the parent link would make a cycle",
			show(&o->show[0], child->repo), child->number,
			show(&o->show[1], parent->repo), parent->number);
	height = height_of(o->fb, ci);
	if (level + height > LEVELS_MAX)
		return REFUSE(o, "the sub-issue tree would be %zu levels deep; GitHub allows %d",
			level + height, LEVELS_MAX);
	if ((rc = ref_of(o, parent, &ref)) < 0)
		return rc;
	if (child->parent && !pmbot_issue_ref_cmp(child->parent, ref)) {
		free(ref);
		return PMBOT_OK;
	}
	if ((rc = stamp(o, child)) < 0) {
		free(ref);
		return rc;
	}
	free(child->parent);
	child->parent = ref;
	if (o->fb->parent_idx[ci] != NO_PARENT)
		o->fb->n_children[o->fb->parent_idx[ci]]--;
	o->fb->parent_idx[ci] = pi;
	o->fb->n_children[pi]++;
	return PMBOT_OK;
}

/* The blocked issue, the blocker, and the blocker's ref as the state spells it. */
static int dependency_args(op_ctx *o, int must_exist_blocker, pmbot_issue **is,
	pmbot_issue **blocker, char **blocker_ref)
{
	const char *repo;
	long long number, dbid;
	pmbot_buf b = PMBOT_BUF_INIT;
	int rc;

	*blocker = NULL;
	*blocker_ref = NULL;
	if ((rc = arg_issue(o, "repo", "number", is)) < 0 ||
	    (rc = arg_str(o, "blocker_repo", &repo)) < 0 ||
	    (rc = arg_int(o, "blocker_number", 1, NUMBER_MAX, &number)) < 0 ||
	    (rc = arg_int(o, "blocker_database_id", 1, ID_MAX, &dbid)) < 0)
		return rc;
	if (!valid_repo(repo))
		return REFUSE(o, "`%s` is not a repository OWNER/NAME", show(&o->show[0], repo));
	*blocker = issue_at(o->st, repo, (long)number);
	if (!*blocker && must_exist_blocker)
		return REFUSE(o, "issue %s#%lld does not exist", show(&o->show[0], repo), number);
	if (*blocker && (*blocker)->database_id != dbid)
		return REFUSE(o, "blocker_database_id %lld is not the id of %s#%lld (%lld)", dbid,
			show(&o->show[0], repo), number, (*blocker)->database_id);
	if (*blocker == *is)
		return REFUSE(o, "an issue cannot block itself");
	if (pmbot_issue_ref(&b, *blocker ? (*blocker)->repo : repo, (long)number) < 0 ||
	    !(*blocker_ref = pmbot_buf_detach(&b, NULL))) {
		pmbot_buf_free(&b);
		return OOM(o);
	}
	return PMBOT_OK;
}

/* Index of `ref` in is->blocked_by, or where it would go (`*found` 0). */
static size_t blocker_index(const pmbot_issue *is, const char *ref, int *found)
{
	size_t lo = 0, hi = is->n_blocked_by;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = pmbot_issue_ref_cmp(ref, is->blocked_by[mid]);

		if (!c) {
			*found = 1;
			return mid;
		}
		if (c > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int op_add_dependency(op_ctx *o)
{
	pmbot_issue *is, *blocker;
	char *ref = NULL, **grown;
	size_t at, blocking;
	int found, rc;

	if ((rc = dependency_args(o, 1, &is, &blocker, &ref)) < 0)
		goto done;
	at = blocker_index(is, ref, &found);
	if (found) {
		rc = REFUSE(o, "%s#%ld is already blocked by %s", show(&o->show[0], is->repo),
			is->number, show(&o->show[1], ref));
		goto done;
	}
	if (is->n_blocked_by >= DEPENDENCIES_MAX) {
		rc = REFUSE(o, "%s#%ld is already blocked by %zu issues; GitHub allows %d",
			show(&o->show[0], is->repo), is->number, is->n_blocked_by, DEPENDENCIES_MAX);
		goto done;
	}
	if (tree_index(o->fb) < 0) {
		rc = OOM(o);
		goto done;
	}
	blocking = o->fb->n_blocking[blocker - o->st->issues];
	if (blocking >= DEPENDENCIES_MAX) {
		rc = REFUSE(o, "%s already blocks %zu issues; GitHub allows %d",
			show(&o->show[0], ref), blocking, DEPENDENCIES_MAX);
		goto done;
	}
	if (!(grown = pmbot_array_grow(is->blocked_by, &is->alloc_blocked_by, is->n_blocked_by + 1,
			sizeof(*grown)))) {
		rc = OOM(o);
		goto done;
	}
	is->blocked_by = grown;
	if ((rc = stamp(o, is)) < 0)
		goto done;
	memmove(&grown[at + 1], &grown[at], (is->n_blocked_by - at) * sizeof(*grown));
	grown[at] = ref;
	is->n_blocked_by++;
	o->fb->n_blocking[blocker - o->st->issues]++;
	ref = NULL;
done:
	free(ref);
	return rc;
}

static int op_remove_dependency(op_ctx *o)
{
	pmbot_issue *is, *blocker;
	char *ref = NULL;
	size_t at;
	int found, rc;

	if ((rc = dependency_args(o, 0, &is, &blocker, &ref)) < 0)
		goto done;
	at = blocker_index(is, ref, &found);
	if (!found) {
		rc = REFUSE(o, "%s#%ld is not blocked by %s", show(&o->show[0], is->repo),
			is->number, show(&o->show[1], ref));
		goto done;
	}
	if ((rc = stamp(o, is)) < 0)
		goto done;
	if (blocker && o->fb->tree_valid)
		o->fb->n_blocking[blocker - o->st->issues]--;
	else
		drop_tree(o->fb); /* a blocker outside the state, or no index: counted again */
	free(is->blocked_by[at]);
	memmove(&is->blocked_by[at], &is->blocked_by[at + 1],
		(is->n_blocked_by - at - 1) * sizeof(*is->blocked_by));
	if (!--is->n_blocked_by) {
		free(is->blocked_by);
		is->blocked_by = NULL;
	}
done:
	free(ref);
	return rc;
}

static size_t item_index(const pmbot_project *p, const char *ref, int *found)
{
	size_t lo = 0, hi = p->n_items;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = pmbot_issue_ref_cmp(ref, p->items[mid].issue);

		if (!c) {
			*found = 1;
			return mid;
		}
		if (c > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int op_add_to_project(op_ctx *o)
{
	pmbot_project *p = o->st->project;
	pmbot_pitem it, *grown;
	pmbot_issue *is;
	const char *node_id;
	long long id;
	size_t at;
	int found, rc;

	memset(&it, 0, sizeof(it));
	if ((rc = arg_issue(o, "repo", "number", &is)) < 0 ||
	    (rc = arg_str(o, "node_id", &node_id)) < 0)
		return rc;
	if (!p)
		return REFUSE(o, "the state has no project");
	if (strcmp(node_id, is->node_id))
		return REFUSE(o, "node_id `%s` is not the id of %s#%ld (%s)",
			show(&o->show[0], node_id), show(&o->show[1], is->repo), is->number, is->node_id);
	if ((rc = ref_of(o, is, &it.issue)) < 0)
		return rc;
	at = item_index(p, it.issue, &found);
	/* Like addProjectV2ItemById: an issue already on the board keeps its item. */
	if (found) {
		if (json_object_set_new(o->result, "item_id", json_string(p->items[at].id)) < 0)
			rc = OOM(o);
		goto done;
	}
	if ((rc = next_ids(o, "PVTI_", &id, &it.id)) < 0)
		goto done;
	if (!(it.values = json_object()) ||
	    !(grown = pmbot_array_grow(p->items, &p->alloc_items, p->n_items + 1, sizeof(*grown)))) {
		rc = OOM(o);
		goto done;
	}
	p->items = grown;
	if (json_object_set_new(o->result, "item_id", json_string(it.id)) < 0) {
		rc = OOM(o);
		goto done;
	}
	if ((rc = set_next_id(o, id)) < 0)
		goto done;
	memmove(&grown[at + 1], &grown[at], (p->n_items - at) * sizeof(*grown));
	grown[at] = it;
	p->n_items++;
	id_taken_now(o->fb, grown[at].id, 0);
	memset(&it, 0, sizeof(it));
done:
	free(it.id);
	free(it.issue);
	json_decref(it.values);
	return rc;
}

static int valid_date(const char *s)
{
	long long t;
	pmbot_buf b = PMBOT_BUF_INIT;
	int ok;

	/* A date is valid when its midnight is a valid date-time. */
	ok = strlen(s) == 10 && pmbot_buf_printf(&b, "%sT00:00:00Z", s) == 0 &&
		pmbot_datetime_parse(&t, b.buf) == PMBOT_OK;
	pmbot_buf_free(&b);
	return ok;
}

/* Check `value` against field `f`; for a single select, `*option` is the option. */
static int check_field_value(op_ctx *o, const pmbot_pfield *f, const json_t *value,
	const pmbot_pfield_option **option)
{
	pmbot_buf names = PMBOT_BUF_INIT;
	const char *s = json_string_value(value);
	size_t i;
	int rc;

	*option = NULL;
	if (json_is_null(value))
		return PMBOT_OK;
	switch (f->type) {
	case PMBOT_PFIELD_NUMBER:
		if (!json_is_number(value))
			return REFUSE(o, "field `%s` takes a number", show(&o->show[0], f->name));
		return PMBOT_OK;
	case PMBOT_PFIELD_TEXT:
		if (!s)
			return REFUSE(o, "field `%s` takes a string", show(&o->show[0], f->name));
		return PMBOT_OK;
	case PMBOT_PFIELD_DATE:
		if (!s || !valid_date(s))
			return REFUSE(o, "field `%s` takes a date YYYY-MM-DD", show(&o->show[0], f->name));
		return PMBOT_OK;
	case PMBOT_PFIELD_SINGLE_SELECT:
		break;
	}
	if (!s)
		return REFUSE(o, "field `%s` takes an option name", show(&o->show[0], f->name));
	for (i = 0; i < f->n_options; i++) {
		if (!strcmp(f->options[i].name, s)) {
			*option = &f->options[i];
			return PMBOT_OK;
		}
	}
	for (i = 0; i < f->n_options; i++)
		pmbot_buf_printf(&names, "%s`%s`", i ? ", " : "", f->options[i].name);
	rc = REFUSE(o, "field `%s` has no option `%s`; its options are %s",
		show(&o->show[0], f->name), show(&o->show[1], s), f->n_options ? names.buf : "none");
	pmbot_buf_free(&names);
	return rc;
}

static int op_set_project_field(op_ctx *o)
{
	const pmbot_project *p = o->st->project;
	const pmbot_pfield_option *option;
	const pmbot_pfield *f;
	const pmbot_pitem *it;
	const json_t *value = json_object_get(o->args, "value"), *opt;
	const char *repo, *item_id, *field, *field_id;
	pmbot_buf ref = PMBOT_BUF_INIT;
	long long number;
	json_t *copy;
	int rc;

	if ((rc = arg_str(o, "repo", &repo)) < 0 ||
	    (rc = arg_int(o, "number", 1, NUMBER_MAX, &number)) < 0 ||
	    (rc = arg_str(o, "item_id", &item_id)) < 0 ||
	    (rc = arg_str(o, "field", &field)) < 0 ||
	    (rc = arg_str(o, "field_id", &field_id)) < 0)
		return rc;
	if (!value)
		return REFUSE(o, "`value` is missing");
	if (!p)
		return REFUSE(o, "the state has no project");
	if (pmbot_issue_ref(&ref, repo, (long)number) < 0)
		return OOM(o);
	it = pmbot_state_item(o->st, ref.buf);
	if (!it || strcmp(it->id, item_id)) {
		rc = REFUSE(o, "`%s` is not the project item of %s", show(&o->show[0], item_id),
			show(&o->show[1], ref.buf));
		pmbot_buf_free(&ref);
		return rc;
	}
	pmbot_buf_free(&ref);
	if (!(f = pmbot_state_field(o->st, field)))
		return REFUSE(o, "the project has no field `%s`", show(&o->show[0], field));
	if (strcmp(f->id, field_id))
		return REFUSE(o, "field_id `%s` is not the id of field `%s` (%s)",
			show(&o->show[0], field_id), show(&o->show[1], f->name), f->id);
	if ((rc = check_field_value(o, f, value, &option)) < 0)
		return rc;
	opt = json_object_get(o->args, "option_id");
	if (option && (!json_is_string(opt) || strcmp(json_string_value(opt), option->id)))
		return REFUSE(o, "option_id must be `%s`, the id of option `%s`",
			show(&o->show[0], option->id), show(&o->show[1], option->name));
	if (!option && opt && !json_is_null(opt))
		return REFUSE(o, "option_id is only for single_select values");
	if (json_is_null(value)) {
		/* Clearing a value that is not set is not an error (there is nothing to undo). */
		json_object_del(it->values, f->name);
		return PMBOT_OK;
	}
	if (!(copy = json_deep_copy(value)) || json_object_set_new(it->values, f->name, copy) < 0)
		return OOM(o);
	return PMBOT_OK;
}

/*
 * set_issue_type {repo, number, issue_type}: like GitHub, only a type the
 * repository offers (extra.issue_types, docs/state.md), matched ASCII
 * case-insensitively and stored as the repository spells it.
 */
static int op_set_issue_type(op_ctx *o)
{
	const char *want, *name;
	pmbot_issue *is;
	char *copy;
	int rc;

	if ((rc = arg_issue(o, "repo", "number", &is)) < 0 || (rc = arg_str(o, "issue_type", &want)) < 0)
		return rc;
	if (!(name = offered_type(o, is->repo, want)))
		return REFUSE(o, "%s has no issue type `%s`", show(&o->show[0], is->repo),
			show(&o->show[1], want));
	if (is->issue_type && !strcmp(is->issue_type, name))
		return PMBOT_OK; /* already so: nothing moves, as on GitHub */
	if (!(copy = strdup(name)))
		return OOM(o);
	if ((rc = stamp(o, is)) < 0) {
		free(copy);
		return rc;
	}
	free(is->issue_type);
	is->issue_type = copy;
	return PMBOT_OK;
}

/* Each operation of the table in pmbot/operation.h, by its enum. */
static int (*const operations[PMBOT_OP_COUNT])(op_ctx *o) = {
	[PMBOT_OP_CREATE_ISSUE] = op_create_issue,
	[PMBOT_OP_UPDATE_ISSUE_TITLE] = op_update_issue_title,
	[PMBOT_OP_UPDATE_ISSUE_BODY] = op_update_issue_body,
	[PMBOT_OP_ADD_LABELS] = op_add_labels,
	[PMBOT_OP_REMOVE_LABELS] = op_remove_labels,
	[PMBOT_OP_SET_PARENT] = op_set_parent,
	[PMBOT_OP_ADD_DEPENDENCY] = op_add_dependency,
	[PMBOT_OP_REMOVE_DEPENDENCY] = op_remove_dependency,
	[PMBOT_OP_ADD_TO_PROJECT] = op_add_to_project,
	[PMBOT_OP_SET_PROJECT_FIELD] = op_set_project_field,
	[PMBOT_OP_SET_ISSUE_TYPE] = op_set_issue_type,
};

/*
 * A copy of `src` with the issues of `repos` (NULL: all; a repository
 * counts once however often it is named) and `project` (NULL: none).
 * `*out` is new. PMBOT_OK or PMBOT_ERROR (out of memory).
 */
static int state_copy(pmbot_state **out, const pmbot_state *src, const char *const *repos,
	size_t n_repos, const pmbot_project *project)
{
	pmbot_state *st = NULL;
	const char **sorted = NULL;
	size_t i, k, count = 0;
	int rc = PMBOT_ERROR;

	*out = NULL;
	if (pmbot_state_new(&st) < 0 ||
	    (src->n_issues && !(st->issues = calloc(src->n_issues, sizeof(*st->issues)))))
		goto done;
	st->alloc_issues = src->n_issues;
	if (!repos) {
		for (i = 0; i < src->n_issues; i++, st->n_issues++)
			if (issue_copy(&st->issues[i], &src->issues[i]) < 0)
				goto done;
	} else if (n_repos) {
		/* Each repository's issues are one run of the sorted array: copy runs in order. */
		if (!(sorted = calloc(n_repos, sizeof(*sorted))))
			goto done;
		for (i = 0; i < n_repos; i++)
			if (repos[i])
				sorted[count++] = repos[i];
		if (count)
			qsort(sorted, count, sizeof(*sorted), repo_cmp_qsort);
		for (k = 0; k < count; k++) {
			if (k && !repo_cmp(sorted[k - 1], sorted[k]))
				continue;
			for (i = pmbot_state_lower_bound(src, sorted[k], 0);
			     i < src->n_issues && !repo_cmp(src->issues[i].repo, sorted[k]);
			     i++, st->n_issues++)
				if (issue_copy(&st->issues[st->n_issues], &src->issues[i]) < 0)
					goto done;
		}
	}
	if (project && !(st->project = project_copy(project)))
		goto done;
	if (src->extra && !(st->extra = json_deep_copy(src->extra)))
		goto done;
	*out = st;
	st = NULL;
	rc = PMBOT_OK;
done:
	free(sorted);
	pmbot_state_free(st);
	return rc;
}

/* Is `repo` one of `repos`? */
static int named(const char *repo, const char *const *repos, size_t n_repos)
{
	size_t i;

	for (i = 0; i < n_repos; i++)
		if (repos[i] && !repo_cmp(repo, repos[i]))
			return 1;
	return 0;
}

/*
 * Would the read's copy of `src` hold all of it? Then the cache itself is
 * handed out (shared) rather than copied: a plan reads the state once and
 * never changes it, and a copy of 10,000 issues, then freeing two states,
 * was a fifth of reading one.
 */
static int read_is_whole(const pmbot_state *src, const char *const *repos, size_t n_repos,
	const pmbot_project *project)
{
	size_t i;

	if (src->project && project != src->project)
		return 0;
	if (!repos)
		return 1;
	/* Issues are sorted by repository: one check per run. */
	for (i = 0; i < src->n_issues; i++)
		if ((!i || (src->issues[i - 1].repo != src->issues[i].repo &&
			    repo_cmp(src->issues[i - 1].repo, src->issues[i].repo))) &&
		    !named(src->issues[i].repo, repos, n_repos))
			return 0;
	return 1;
}

static int fb_perform(json_t **result, pmbot_backend *b, pmbot_operation op,
	const json_t *args, pmbot_buf *err)
{
	file_backend *fb = (file_backend *)b;
	const char *operation = pmbot_operation_name(op);
	size_t mark = err->len;
	int lock_fd = -1, rc;
	op_ctx o;

	*result = NULL;
	memset(&o, 0, sizeof(o));
	o.fb = fb;
	o.op = operation ? operation : "(unknown)";
	o.args = args;
	o.err = err;
	pmbot_buf_init(&o.show[0], 0);
	pmbot_buf_init(&o.show[1], 0);
	if (!operation) {
		rc = REFUSE(&o, "unknown operation");
		goto done;
	}
	if (!json_is_object(args)) {
		rc = REFUSE(&o, "the arguments must be an object");
		goto done;
	}
	if (fb->holding && fb->lost) {
		rc = say(&o, PMBOT_ERROR, "an earlier operation failed since the state was last "
			"written; nothing more is performed until it is");
		goto done;
	}
	/* Held: the lock is ours and the cache is the file plus this group's changes. */
	if (!fb->holding && ((rc = lock(fb, &lock_fd, err)) < 0 || (rc = load(fb, err, NULL)) < 0))
		goto done;
	if (pmbot_state_read_only(fb->state)) {
		/* Parsed (strings in one block) or held by a read: change a copy of it. */
		pmbot_state *own = NULL;

		if (state_copy(&own, fb->state, NULL, 0, fb->state->project) < 0) {
			rc = OOM(&o);
			goto done;
		}
		drop_derived(fb);
		pmbot_state_free(fb->state);
		fb->state = own;
	}
	o.st = fb->state;
	if (!(o.result = json_object())) {
		rc = OOM(&o);
		goto done;
	}
	rc = operations[op](&o);
	if (rc < 0)
		drop_derived(fb); /* it may have counted a change it did not make */
	if (rc == PMBOT_OK && fb->holding)
		fb->dirty = 1;
	else if (rc == PMBOT_EINVALID && fb->holding)
		; /* every refusal comes before the operation's first change: the group stands */
	else if (rc < 0 || (rc = save(fb, err)) < 0) {
		/* The file was not written: forget whatever the operation did in memory. */
		drop_cache(fb);
		fb->lost = fb->holding;
		goto done;
	}
	if (rc < 0)
		goto done;
	pmbot_buf_truncate(err, mark);
	*result = o.result;
	o.result = NULL;
done:
	if (lock_fd >= 0)
		close(lock_fd);
	json_decref(o.result);
	pmbot_buf_free(&o.show[0]);
	pmbot_buf_free(&o.show[1]);
	return rc;
}

/* The file as `st` says it was read: still there, or still missing. */
static int unchanged(const file_backend *fb)
{
	struct stat sb;

	if (stat(fb->path, &sb) < 0)
		return errno == ENOENT && fb->missing;
	return !fb->missing && same_file(&sb, &fb->st);
}

static void unhold(file_backend *fb)
{
	if (fb->hold_fd >= 0)
		close(fb->hold_fd);
	fb->hold_fd = -1;
	fb->holding = fb->dirty = fb->lost = 0;
}

static int fb_hold(pmbot_backend *b, pmbot_buf *err)
{
	file_backend *fb = (file_backend *)b;
	int rc;

	if (fb->holding)
		return PMBOT_OK;
	if ((rc = lock(fb, &fb->hold_fd, err)) < 0)
		return rc;
	if ((rc = load(fb, err, NULL)) < 0) {
		unhold(fb);
		return rc;
	}
	fb->holding = 1;
	return PMBOT_OK;
}

static int fb_commit(pmbot_backend *b, pmbot_buf *err)
{
	file_backend *fb = (file_backend *)b;
	int rc = PMBOT_OK;

	if (!fb->holding)
		return PMBOT_OK;
	if (fb->lost) {
		pmbot_buf_puts(err, "an operation failed half-way, so the operations performed "
			"since the state was last written were not written\n");
		rc = PMBOT_ERROR;
	} else if (fb->dirty && !unchanged(fb)) {
		/* Not another pm-bot (the lock): a person. Their edit wins; ours is not written. */
		pmbot_buf_printf(err, "%s changed while pm-bot held its lock; the operations "
			"performed since it was last written were not written\n", fb->path);
		drop_cache(fb);
		rc = PMBOT_ERROR;
	} else if (fb->dirty && (rc = save(fb, err)) < 0) {
		drop_cache(fb);
	}
	unhold(fb);
	return rc;
}

static int fb_read(pmbot_state **out, pmbot_backend *b, const char *const *repos,
	size_t n_repos, const char *project_owner, long project_number, pmbot_buf *err)
{
	file_backend *fb = (file_backend *)b;
	const pmbot_project *project;
	int rc;

	*out = NULL;
	if (fb->holding && fb->lost) {
		pmbot_buf_puts(err, "an operation failed since the state was last written\n");
		return PMBOT_ERROR;
	}
	/* Held: the cache is the file plus what this group performed, which a read must see. */
	if (!fb->holding && (rc = load(fb, err, NULL)) < 0)
		return rc;
	project = fb->state->project;
	if (!project_owner || !project || repo_cmp(project->owner, project_owner) ||
	    project->number != project_number)
		project = NULL;
	if (read_is_whole(fb->state, repos, n_repos, project)) {
		*out = pmbot_state_share(fb->state);
		return PMBOT_OK;
	}
	if ((rc = state_copy(out, fb->state, repos, n_repos, project)) < 0)
		pmbot_buf_puts(err, "out of memory\n");
	return rc;
}

static void fb_free(pmbot_backend *b)
{
	file_backend *fb = (file_backend *)b;

	if (!fb)
		return;
	/* A group never committed is dropped, like a crash would drop it. */
	unhold(fb);
	drop_cache(fb);
	free(fb->path);
	free(fb->lock_path);
	free(fb->login);
	free(fb);
}

int pmbot_file_backend_open(pmbot_backend **out, const char *path, const char *login,
	pmbot_diag_list *diags)
{
	pmbot_buf lock_path = PMBOT_BUF_INIT, err = PMBOT_BUF_INIT;
	file_backend *fb = NULL;
	size_t n;
	int rc = PMBOT_ERROR;

	*out = NULL;
	if (!path || !*path || !(fb = calloc(1, sizeof(*fb))))
		goto done;
	fb->fd = -1;
	fb->hold_fd = -1;
	fb->base.name = "file";
	fb->base.hold = fb_hold;
	fb->base.commit = fb_commit;
	fb->base.read = fb_read;
	fb->base.perform = fb_perform;
	fb->base.free = fb_free;
	if (!login || !*login)
		login = DEFAULT_LOGIN;
	n = strlen(login);
	fb->login_is_bot = n > 5 && !strcmp(login + n - 5, "[bot]");
	if (!(fb->path = strdup(path)) || !(fb->login = strdup(login)) ||
	    pmbot_buf_printf(&lock_path, "%s.lock", path) < 0 ||
	    !(fb->lock_path = pmbot_buf_detach(&lock_path, NULL)))
		goto done;
	if ((rc = load(fb, &err, diags)) == PMBOT_ERROR && err.len && diags) {
		pmbot_buf_truncate(&err, err.len - 1);
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "STATE_IO", path, "", 0, 0, "%s", err.buf);
	}
	if (rc < 0)
		goto done;
	*out = &fb->base;
	fb = NULL;
done:
	fb_free(fb ? &fb->base : NULL);
	pmbot_buf_free(&lock_path);
	pmbot_buf_free(&err);
	return rc;
}
