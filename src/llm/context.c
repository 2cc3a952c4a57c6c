#include "pmbot/llm.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

#define DIGEST_MARKER "__CONTEXT_DIGEST__"

/* How much of a user value a diagnostic quotes. */
#define SHOW_MAX 200

struct ctx {
	pmbot_repo *repo;
	const char *rev;
	const json_t *metadata;
	pmbot_diag_list *diags;
	char commit[PMBOT_OID_HEX_SIZE];
	int commit_state;             /* 0 not yet, 1 resolved, -1 failed */
	pmbot_buf pointer;
	pmbot_buf show1;
	pmbot_buf show2;
	const char *given_ref;        /* read by the caller, not at `rev`; may be NULL */
	const char *given;
	size_t given_len;
	pmbot_buf why;                /* the git layer's message, quoted in a diagnostic */
};

static const char *show1(struct ctx *c, const char *s)
{
	return pmbot_diag_show(&c->show1, s, SHOW_MAX);
}

static const char *show2(struct ctx *c, const char *s)
{
	return pmbot_diag_show(&c->show2, s, SHOW_MAX);
}

/* Why `path` may not be looked up, or NULL. Backslashes count as
 * separators so that a Windows-style "a\..\b" cannot slip through. */
static const char *path_problem(const char *path)
{
	const char *seg = path, *end;
	size_t len;

	if (!*path)
		return "an empty path";
	if (path[0] == '/' || path[0] == '\\' ||
	    (((path[0] | 0x20) >= 'a' && (path[0] | 0x20) <= 'z') && path[1] == ':'))
		return "an absolute path";
	for (;;) {
		end = seg + strcspn(seg, "/\\");
		len = (size_t)(end - seg);
		if (len == 2 && seg[0] == '.' && seg[1] == '.')
			return "a path with a '..' segment";
		if (len == 0 || (len == 1 && seg[0] == '.'))
			return "a path with an empty or '.' segment";
		if (!*end)
			return NULL;
		seg = end + 1;
	}
}

/* Resolving once pins every read to one commit; a failure is reported at
 * the first ref that needed it and silently skips the later ones. */
static int need_commit(struct ctx *c, const char *ref)
{
	int rc;

	if (c->commit_state)
		return c->commit_state > 0 ? PMBOT_OK : PMBOT_EINVALID;
	c->commit_state = -1;
	if (!c->repo || !c->rev) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_REV", NULL, c->pointer.buf, 0, 0,
			"'%s' needs a repository and a revision to read from", show1(c, ref));
		return PMBOT_EINVALID;
	}
	pmbot_buf_clear(&c->why);
	rc = pmbot_repo_resolve(c->commit, c->repo, c->rev, &c->why);
	if (rc == PMBOT_ENOTFOUND || rc == PMBOT_EINVALID) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_REV", NULL, c->pointer.buf, 0, 0,
			"cannot read '%s': %s", show1(c, ref), show2(c, c->why.buf));
		return PMBOT_EINVALID;
	}
	if (rc < 0)
		return PMBOT_ERROR;
	c->commit_state = 1;
	return PMBOT_OK;
}

static int add_entry(json_t *list, const char *ref, const char *kind, const char *content,
	size_t len, int truncated)
{
	json_t *e = json_object();
	int err = 0;

	if (!e)
		return -1;
	err |= json_object_set_new(e, "ref", json_string(ref));
	err |= json_object_set_new(e, "kind", json_string(kind));
	err |= json_object_set_new(e, "content", json_stringn(content ? content : "", len));
	err |= json_object_set_new(e, "truncated", json_boolean(truncated));
	if (err) {
		json_decref(e);
		return -1;
	}
	return json_array_append_new(list, e);
}

/* End the cut text on its own line so the note cannot read as content. */
static int put_note(pmbot_buf *b, const char *note)
{
	if (b->len && b->buf[b->len - 1] != '\n' && pmbot_buf_putc(b, '\n') < 0)
		return -1;
	return pmbot_buf_puts(b, note);
}

static int file_entry(struct ctx *c, json_t *list, const char *ref, pmbot_buf *text);

static int resolve_file(struct ctx *c, json_t *list, const char *ref, const char *path)
{
	pmbot_buf text;
	const char *why;
	int rc;

	pmbot_buf_init(&text, PMBOT_CONTEXT_FILE_READ_MAX);
	if ((why = path_problem(path))) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_REF", NULL, c->pointer.buf, 0, 0,
			"'%s' is %s; only repository-relative paths are read", show1(c, ref), why);
		rc = PMBOT_EINVALID;
		goto done;
	}
	if ((rc = need_commit(c, ref)) < 0)
		goto done;
	rc = pmbot_repo_read(&text, NULL, c->repo, c->commit, path, NULL);
	if (rc == PMBOT_ENOTFOUND || rc == PMBOT_EINVALID) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_NOT_FOUND", NULL, c->pointer.buf,
			0, 0, "'%s': no regular file '%s' at '%s'", show1(c, ref), show2(c, path),
			c->commit);
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (rc == PMBOT_REPO_ETOOBIG) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_TOO_BIG", NULL, c->pointer.buf,
			0, 0, "'%s' is larger than %zu bytes", show1(c, ref),
			(size_t)PMBOT_CONTEXT_FILE_READ_MAX);
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (rc < 0)
		goto done;
	rc = file_entry(c, list, ref, &text);
done:
	pmbot_buf_free(&text);
	return rc;
}

/*
 * The checks and the cut every file's text gets, wherever it was read from:
 * a prose report from the work tree is no more trusted than a blob.
 */
static int file_entry(struct ctx *c, json_t *list, const char *ref, pmbot_buf *text)
{
	size_t bad, i, chars = 0, cut = 0;
	char note[96];
	int rc;

	if (!pmbot_utf8_valid(text->buf, text->len, &bad, NULL, NULL)) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_BINARY", NULL, c->pointer.buf,
			0, 0, "'%s' is not UTF-8 text (byte %zu is %s)", show1(c, ref), bad,
			text->buf[bad] ? "not UTF-8" : "NUL");
		rc = PMBOT_EINVALID;
		goto done;
	}
	/* Valid UTF-8, so every byte that is not a continuation byte starts
	 * a character and cutting before one never splits a character. */
	for (i = 0; i < text->len; i++) {
		if (((unsigned char)text->buf[i] & 0xc0) == 0x80)
			continue;
		if (chars++ == PMBOT_CONTEXT_FILE_MAX_CHARS)
			cut = i;
	}
	rc = PMBOT_ERROR;
	if (chars > PMBOT_CONTEXT_FILE_MAX_CHARS) {
		pmbot_buf_truncate(text, cut);
		snprintf(note, sizeof(note), "[truncated: the first %d of %zu characters]",
			PMBOT_CONTEXT_FILE_MAX_CHARS, chars);
		if (put_note(text, note) < 0)
			goto done;
	}
	if (add_entry(list, ref, "file", text->buf, text->len,
	    chars > PMBOT_CONTEXT_FILE_MAX_CHARS) < 0)
		goto done;
	rc = PMBOT_OK;
done:
	return rc;
}

/* Diffs cover files nobody chose, so one Latin-1 file must not lose the
 * whole diff: bad bytes become U+FFFD instead of refusing. */
static int to_utf8(pmbot_buf *out, const char *s, size_t len)
{
	size_t at = 0, bad;

	while (at < len) {
		if (pmbot_utf8_valid(s + at, len - at, &bad, NULL, NULL))
			return pmbot_buf_put(out, s + at, len - at);
		if (pmbot_buf_put(out, s + at, bad) < 0 ||
		    pmbot_buf_puts(out, "\xef\xbf\xbd") < 0)
			return -1;
		at += bad + 1;
	}
	return 0;
}

static int resolve_diff(struct ctx *c, json_t *list, const char *ref, const char *base)
{
	pmbot_buf raw = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;
	char note[96];
	int rc, cut = 0;

	if (!*base) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_REF", NULL, c->pointer.buf, 0, 0,
			"'%s' names no revision to diff against", show1(c, ref));
		rc = PMBOT_EINVALID;
		goto done;
	}
	if ((rc = need_commit(c, ref)) < 0)
		goto done;
	pmbot_buf_clear(&c->why);
	rc = pmbot_repo_diff(&raw, &cut, c->repo, base, c->commit, PMBOT_CONTEXT_DIFF_MAX_BYTES,
		&c->why);
	if (rc == PMBOT_ENOTFOUND || rc == PMBOT_EINVALID) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_REV", NULL, c->pointer.buf, 0, 0,
			"cannot read '%s': %s", show1(c, ref), show2(c, c->why.buf));
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (rc < 0)
		goto done;
	rc = PMBOT_ERROR;
	if (to_utf8(&text, raw.buf, raw.len) < 0)
		goto done;
	/* U+FFFD is longer than the byte it replaces: keep the cap on what
	 * the prompt gets, again at a line end. */
	if (text.len > PMBOT_CONTEXT_DIFF_MAX_BYTES) {
		size_t keep = PMBOT_CONTEXT_DIFF_MAX_BYTES;

		while (keep && text.buf[keep - 1] != '\n')
			keep--;
		pmbot_buf_truncate(&text, keep);
		cut = 1;
	}
	if (cut) {
		snprintf(note, sizeof(note), "[truncated: the diff is longer than %d bytes]",
			PMBOT_CONTEXT_DIFF_MAX_BYTES);
		if (put_note(&text, note) < 0)
			goto done;
	}
	if (add_entry(list, ref, "diff", text.buf, text.len, cut) < 0)
		goto done;
	rc = PMBOT_OK;
done:
	pmbot_buf_free(&raw);
	pmbot_buf_free(&text);
	return rc;
}

static int resolve_memory(struct ctx *c, json_t *list, const char *ref, const char *key)
{
	pmbot_buf text = PMBOT_BUF_INIT;
	const json_t *v;
	int rc;

	if (!*key) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_REF", NULL, c->pointer.buf, 0, 0,
			"'%s' names no metadata key", show1(c, ref));
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (!(v = c->metadata ? json_object_get(c->metadata, key) : NULL)) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_NOT_FOUND", NULL, c->pointer.buf,
			0, 0, "'%s': metadata has no key '%s'", show1(c, ref), show2(c, key));
		rc = PMBOT_EINVALID;
		goto done;
	}
	rc = PMBOT_ERROR;
	if (json_is_string(v)) {
		if (pmbot_buf_put(&text, json_string_value(v), json_string_length(v)) < 0)
			goto done;
	} else if (pmbot_json_canonical(&text, v) < 0) {
		goto done;
	}
	if (add_entry(list, ref, "memory", text.buf, text.len, 0) < 0)
		goto done;
	rc = PMBOT_OK;
done:
	pmbot_buf_free(&text);
	return rc;
}

static int resolve_digest(struct ctx *c, json_t *list, const char *ref)
{
	const json_t *v = c->metadata ? json_object_get(c->metadata, "context_digest") : NULL;

	if (!v) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_NOT_FOUND", NULL, c->pointer.buf,
			0, 0, "'%s' but metadata has no context_digest", ref);
		return PMBOT_EINVALID;
	}
	if (!json_is_string(v)) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_REF", NULL,
			"/metadata/context_digest", 0, 0,
			"context_digest must be a string for '%s'", ref);
		return PMBOT_EINVALID;
	}
	if (add_entry(list, ref, "digest", json_string_value(v), json_string_length(v), 0) < 0)
		return PMBOT_ERROR;
	return PMBOT_OK;
}

static int resolve_raw(struct ctx *c, json_t *list, const char *ref)
{
	pmbot_buf text = PMBOT_BUF_INIT;
	int rc = PMBOT_ERROR;

	if (!*ref) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_REF", NULL, c->pointer.buf, 0, 0,
			"empty context reference");
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (pmbot_buf_printf(&text, "[Reference: %s]", ref) < 0)
		goto done;
	if (add_entry(list, ref, "raw", text.buf, text.len, 0) < 0)
		goto done;
	rc = PMBOT_OK;
done:
	pmbot_buf_free(&text);
	return rc;
}

/* The caller read this one outside git (pmbot_context_read_input). */
static int resolve_given(struct ctx *c, json_t *list, const char *ref)
{
	pmbot_buf text;
	int rc;

	pmbot_buf_init(&text, PMBOT_CONTEXT_FILE_READ_MAX);
	if (c->given_len > PMBOT_CONTEXT_FILE_READ_MAX) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_TOO_BIG", NULL, c->pointer.buf,
			0, 0, "'%s' is larger than %zu bytes", show1(c, ref),
			(size_t)PMBOT_CONTEXT_FILE_READ_MAX);
		return PMBOT_EINVALID;
	}
	rc = pmbot_buf_put(&text, c->given, c->given_len) < 0 ? PMBOT_ERROR :
		file_entry(c, list, ref, &text);
	pmbot_buf_free(&text);
	return rc;
}

static int resolve_one(struct ctx *c, json_t *list, const char *ref)
{
	size_t bad;

	if (!ref) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_REF", NULL, c->pointer.buf, 0, 0,
			"missing context reference (NULL)");
		return PMBOT_EINVALID;
	}
	if (!pmbot_utf8_valid(ref, strlen(ref), &bad, NULL, NULL)) {
		pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, "CONTEXT_REF", NULL, c->pointer.buf, 0, 0,
			"the reference is not UTF-8 (byte %zu)", bad);
		return PMBOT_EINVALID;
	}
	if (c->given_ref && !strcmp(ref, c->given_ref))
		return resolve_given(c, list, ref);
	if (!strncmp(ref, "file:", 5))
		return resolve_file(c, list, ref, ref + 5);
	if (!strncmp(ref, "diff:", 5))
		return resolve_diff(c, list, ref, ref + 5);
	if (!strncmp(ref, "memory:", 7))
		return resolve_memory(c, list, ref, ref + 7);
	if (!strcmp(ref, DIGEST_MARKER))
		return resolve_digest(c, list, ref);
	return resolve_raw(c, list, ref);
}

static int resolve(json_t **out, const char *const *refs, size_t n_refs,
	const json_t *metadata, pmbot_repo *repo, const char *rev, const char *given_ref,
	const char *given, size_t given_len, pmbot_diag_list *diags)
{
	struct ctx c = { repo, rev, metadata, diags, "", 0,
		PMBOT_BUF_INIT, PMBOT_BUF_INIT, PMBOT_BUF_INIT, given_ref, given, given_len,
		PMBOT_BUF_INIT };
	json_t *list = NULL, *result = NULL;
	size_t i;
	int rc = PMBOT_ERROR, invalid = 0, one;

	*out = NULL;
	if (metadata && !json_is_object(metadata)) {
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "CONTEXT_REF", NULL, "/metadata", 0, 0,
			"metadata must be an object");
		invalid = 1;
		c.metadata = NULL;
	}
	if (!(list = json_array()))
		goto done;
	for (i = 0; i < n_refs; i++) {
		pmbot_buf_clear(&c.pointer);
		if (pmbot_buf_puts(&c.pointer, "/context_refs") < 0 ||
		    pmbot_json_pointer_push_index(&c.pointer, i) < 0)
			goto done;
		one = resolve_one(&c, list, refs[i]);
		if (one == PMBOT_EINVALID)
			invalid = 1;
		else if (one < 0)
			goto done;
	}
	if (invalid) {
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (!(result = json_object()) || json_object_set_new(result, "refs", list) < 0)
		goto done;
	list = NULL;
	*out = result;
	result = NULL;
	rc = PMBOT_OK;
done:
	/* set_new consumed `list` even when it failed. */
	if (result)
		list = NULL;
	json_decref(result);
	json_decref(list);
	pmbot_buf_free(&c.pointer);
	pmbot_buf_free(&c.show1);
	pmbot_buf_free(&c.show2);
	pmbot_buf_free(&c.why);
	return rc;
}

int pmbot_context_resolve(json_t **out, const char *const *refs, size_t n_refs,
	const json_t *metadata, pmbot_repo *repo, const char *rev, pmbot_diag_list *diags)
{
	return resolve(out, refs, n_refs, metadata, repo, rev, NULL, NULL, 0, diags);
}

int pmbot_promptir_resolve(json_t **out, const pmbot_promptir *ir, pmbot_repo *repo,
	const char *rev, pmbot_diag_list *diags)
{
	return resolve(out, (const char *const *)ir->context_refs, ir->n_context_refs,
		ir->metadata, repo, rev, NULL, NULL, 0, diags);
}

int pmbot_promptir_resolve_given(json_t **out, const pmbot_promptir *ir, pmbot_repo *repo,
	const char *rev, const char *given_ref, const char *given, size_t given_len,
	pmbot_diag_list *diags)
{
	return resolve(out, (const char *const *)ir->context_refs, ir->n_context_refs,
		ir->metadata, repo, rev, given_ref, given, given_len, diags);
}

int pmbot_context_read_input(pmbot_buf *out, const char *path, pmbot_diag_list *diags)
{
	const char *name = strcmp(path, "-") ? path : "standard input";

	/* The same cap as a blob: fs_read stops one byte past it, so a huge file costs no more. */
	pmbot_buf_clear(out);
	out->max = PMBOT_CONTEXT_FILE_READ_MAX;
	if (pmbot_fs_read(out, path) == 0)
		return PMBOT_OK;
	if (errno == EFBIG) {
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "CONTEXT_TOO_BIG", name, NULL, 0, 0,
			"%s is larger than %zu bytes", name, (size_t)PMBOT_CONTEXT_FILE_READ_MAX);
		return PMBOT_EINVALID;
	}
	if (errno == ENOENT || errno == EISDIR || errno == ENOTDIR) {
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "CONTEXT_NOT_FOUND", name, NULL, 0, 0,
			"%s: %s", name, strerror(errno));
		return PMBOT_EINVALID;
	}
	pmbot_diag_add(diags, PMBOT_SEV_ERROR, "CONTEXT_READ", name, NULL, 0, 0,
		"cannot read %s: %s", name, strerror(errno));
	return PMBOT_ERROR;
}
