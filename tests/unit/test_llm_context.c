#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers/gitrepo.h"
#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/diag.h"
#include "pmbot/json.h"
#include "pmbot/repo.h"

#include "pmbot/llm.h"
#include "pmbot/banned.h"

/*
 * Every test builds its own repository; the fixture holds whatever a test
 * may leave allocated so teardown frees it when an assertion jumps out.
 */
typedef struct {
	gitrepo *g;
	pmbot_repo *repo;
	pmbot_diag_list diags;
	json_t *out;
	json_t *meta;
	pmbot_buf buf;
	pmbot_buf text;
	pmbot_promptir *ir;
} fixture;

#define FIX_OK(call) do { \
	if ((call) != 0) \
		fail_msg("%s: %s", #call, gitrepo_error(fx->g)); \
} while (0)

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	pmbot_buf_init(&fx->buf, 0);
	pmbot_buf_init(&fx->text, 0);
	if (gitrepo_init(&fx->g, 0) != 0) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	json_decref(fx->out);
	json_decref(fx->meta);
	pmbot_promptir_free(fx->ir);
	pmbot_diag_list_free(&fx->diags);
	pmbot_buf_free(&fx->buf);
	pmbot_buf_free(&fx->text);
	pmbot_repo_free(fx->repo);
	gitrepo_free(fx->g);
	free(fx);
	return 0;
}

static void open_repo(fixture *fx)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	int rc = pmbot_repo_open(&fx->repo, gitrepo_path(fx->g), &err);

	if (rc != 0)
		fail_msg("open -> %d: %s", rc, err.buf);
	pmbot_buf_free(&err);
}

static void set_meta(fixture *fx, const char *json)
{
	json_error_t e;

	json_decref(fx->meta);
	fx->meta = json_loads(json, 0, &e);
	if (!fx->meta)
		fail_msg("bad test metadata: %s", e.text);
}

static int resolve(fixture *fx, const char *const *refs, size_t n, const char *rev)
{
	json_decref(fx->out);
	fx->out = NULL;
	pmbot_diag_list_free(&fx->diags);
	return pmbot_context_resolve(&fx->out, refs, n, fx->meta, fx->repo, rev, &fx->diags);
}

static void resolve_ok(fixture *fx, const char *const *refs, size_t n, const char *rev)
{
	int rc = resolve(fx, refs, n, rev);

	if (rc != 0)
		fail_msg("resolve -> %d: %s %s", rc,
			fx->diags.count ? fx->diags.items[0].code : "",
			fx->diags.count ? fx->diags.items[0].message : "");
	assert_int_equal(fx->diags.count, 0);
	assert_int_equal(json_array_size(json_object_get(fx->out, "refs")), n);
}

static const json_t *entry(fixture *fx, size_t i)
{
	const json_t *e = json_array_get(json_object_get(fx->out, "refs"), i);

	assert_non_null(e);
	return e;
}

static const char *content(fixture *fx, size_t i)
{
	const char *s = json_string_value(json_object_get(entry(fx, i), "content"));

	assert_non_null(s);
	return s;
}

static int truncated(fixture *fx, size_t i)
{
	const json_t *t = json_object_get(entry(fx, i), "truncated");

	assert_true(json_is_boolean(t));
	return json_is_true(t);
}

static void assert_kind(fixture *fx, size_t i, const char *ref, const char *kind)
{
	assert_string_equal(json_string_value(json_object_get(entry(fx, i), "ref")), ref);
	assert_string_equal(json_string_value(json_object_get(entry(fx, i), "kind")), kind);
}

/* The refusal left nothing behind and said `code` at `path`. */
static void assert_refused(fixture *fx, int rc, size_t at, const char *code, const char *path)
{
	assert_int_equal(rc, PMBOT_EINVALID);
	assert_null(fx->out);
	assert_true(at < fx->diags.count);
	assert_string_equal(fx->diags.items[at].code, code);
	assert_string_equal(fx->diags.items[at].path, path);
	assert_int_equal(fx->diags.items[at].severity, PMBOT_SEV_ERROR);
}

static void canonical(pmbot_buf *out, const json_t *v)
{
	pmbot_buf_clear(out);
	assert_int_equal(pmbot_json_canonical(out, v), 0);
}

static void test_context__resolves_every_kind_in_ref_order(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "file:docs/a.md", "memory:note", "__CONTEXT_DIGEST__",
		"notes/raw.md", "diff:HEAD~1", "file:docs/a.md" };
	char c1[41];
	int cut = -1;

	FIX_OK(gitrepo_write(fx->g, "docs/a.md", "alpha\n"));
	FIX_OK(gitrepo_commit(fx->g, c1, "one"));
	FIX_OK(gitrepo_write(fx->g, "docs/b.md", "beta\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "two"));
	open_repo(fx);
	set_meta(fx, "{\"note\": \"remember this\", \"context_digest\": \"Context summary: 2\"}");
	assert_int_equal(pmbot_repo_diff(&fx->buf, &cut, fx->repo, c1, "HEAD", SIZE_MAX, NULL), 0);
	assert_int_equal(cut, 0);

	resolve_ok(fx, refs, N(refs), "HEAD");
	canonical(&fx->text, fx->out);
	{
		json_t *want = json_pack("{s:[{s:s,s:s,s:s,s:b},{s:s,s:s,s:s,s:b},"
			"{s:s,s:s,s:s,s:b},{s:s,s:s,s:s,s:b},{s:s,s:s,s:s,s:b},{s:s,s:s,s:s,s:b}]}",
			"refs",
			"ref", "file:docs/a.md", "kind", "file", "content", "alpha\n", "truncated", 0,
			"ref", "memory:note", "kind", "memory", "content", "remember this",
			"truncated", 0,
			"ref", "__CONTEXT_DIGEST__", "kind", "digest", "content", "Context summary: 2",
			"truncated", 0,
			"ref", "notes/raw.md", "kind", "raw", "content", "[Reference: notes/raw.md]",
			"truncated", 0,
			"ref", "diff:HEAD~1", "kind", "diff", "content", fx->buf.buf, "truncated", 0,
			"ref", "file:docs/a.md", "kind", "file", "content", "alpha\n", "truncated", 0);
		pmbot_buf expect = PMBOT_BUF_INIT;

		assert_non_null(want);
		canonical(&expect, want);
		json_decref(want);
		assert_string_equal(fx->text.buf, expect.buf);
		pmbot_buf_free(&expect);
	}
	assert_non_null(strstr(content(fx, 4), "+++ b/docs/b.md\n@@ -0,0 +1 @@\n+beta\n"));

	/* Same input, same bytes. */
	pmbot_buf_clear(&fx->buf);
	assert_int_equal(pmbot_buf_put(&fx->buf, fx->text.buf, fx->text.len), 0);
	resolve_ok(fx, refs, N(refs), "main");
	canonical(&fx->text, fx->out);
	assert_string_equal(fx->text.buf, fx->buf.buf);
}

static void test_context__no_refs_give_an_empty_list(void **state)
{
	fixture *fx = *state;

	resolve_ok(fx, NULL, 0, NULL);
	canonical(&fx->text, fx->out);
	assert_string_equal(fx->text.buf, "{\"refs\":[]}");
}

static void test_context__reads_files_from_the_commit_not_the_work_tree(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "file:plan.md" };
	const char *missing[] = { "file:scratch.md" };
	char c1[41];

	FIX_OK(gitrepo_write(fx->g, "plan.md", "first\n"));
	FIX_OK(gitrepo_commit(fx->g, c1, "one"));
	FIX_OK(gitrepo_write(fx->g, "plan.md", "second\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "two"));
	FIX_OK(gitrepo_write(fx->g, "plan.md", "staged\n"));
	FIX_OK(gitrepo_write_worktree(fx->g, "plan.md", "work tree\n"));
	FIX_OK(gitrepo_write_worktree(fx->g, "scratch.md", "never committed\n"));
	open_repo(fx);

	resolve_ok(fx, refs, 1, "HEAD");
	assert_string_equal(content(fx, 0), "second\n");
	assert_false(truncated(fx, 0));
	resolve_ok(fx, refs, 1, c1);
	assert_string_equal(content(fx, 0), "first\n");
	assert_refused(fx, resolve(fx, missing, 1, "HEAD"), 0, "CONTEXT_NOT_FOUND",
		"/context_refs/0");
}

static void test_context__cuts_a_file_at_ten_thousand_characters_without_splitting_one(
	void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "file:long.md", "file:exact.md" };
	pmbot_buf file = PMBOT_BUF_INIT, want = PMBOT_BUF_INIT, exact = PMBOT_BUF_INIT;
	size_t i;

	/* 9,999 three-byte characters, a four-byte one, then 3 more: the cut
	 * falls right after the four-byte character. */
	for (i = 0; i < 9999; i++)
		assert_int_equal(pmbot_buf_puts(&file, "\xe2\x82\xac"), 0);
	assert_int_equal(pmbot_buf_puts(&file, "\xf0\x9f\x98\x80"), 0);
	assert_int_equal(pmbot_buf_put(&want, file.buf, file.len), 0);
	assert_int_equal(pmbot_buf_puts(&file, "xyz"), 0);
	assert_int_equal(pmbot_buf_puts(&want,
		"\n[truncated: the first 10000 of 10003 characters]"), 0);
	/* Exactly at the limit, with a final newline: kept whole. */
	for (i = 0; i < 9999; i++)
		assert_int_equal(pmbot_buf_putc(&exact, 'a'), 0);
	assert_int_equal(pmbot_buf_putc(&exact, '\n'), 0);
	FIX_OK(gitrepo_write_len(fx->g, "long.md", file.buf, file.len));
	FIX_OK(gitrepo_write(fx->g, "exact.md", exact.buf));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);

	resolve_ok(fx, refs, N(refs), "HEAD");
	assert_string_equal(content(fx, 0), want.buf);
	assert_true(truncated(fx, 0));
	assert_string_equal(content(fx, 1), exact.buf);
	assert_false(truncated(fx, 1));
	pmbot_buf_free(&file);
	pmbot_buf_free(&want);
	pmbot_buf_free(&exact);
}

static void test_context__a_cut_ending_at_a_newline_adds_no_blank_line(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "file:lines.md" };
	pmbot_buf file = PMBOT_BUF_INIT;
	const char *got;
	size_t i;

	for (i = 0; i < 2000; i++)
		assert_int_equal(pmbot_buf_puts(&file, "abcd\n"), 0);
	assert_int_equal(pmbot_buf_puts(&file, "tail\n"), 0);
	FIX_OK(gitrepo_write(fx->g, "lines.md", file.buf));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);

	resolve_ok(fx, refs, 1, "HEAD");
	got = content(fx, 0);
	assert_int_equal(strlen(got), 10000 + strlen("[truncated: the first 10000 of 10005 characters]"));
	assert_memory_equal(got, file.buf, 10000);
	assert_string_equal(got + 10000, "[truncated: the first 10000 of 10005 characters]");
	assert_true(truncated(fx, 0));
	pmbot_buf_free(&file);
}

static void test_context__refuses_absolute_and_dotdot_paths_without_reading(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "file:/etc/passwd", "file:../a.md", "file:docs/../a.md",
		"file:docs/..", "file:C:\\Windows\\win.ini", "file:\\etc\\passwd",
		"file:docs\\..\\a.md", "file:./a.md", "file:docs//a.md", "file:docs/", "file:" };
	size_t i;
	int rc;

	/* No repository at all: a ref that got as far as a lookup would say
	 * CONTEXT_REV instead. */
	rc = resolve(fx, refs, N(refs), NULL);
	assert_int_equal(fx->diags.count, N(refs));
	for (i = 0; i < N(refs); i++) {
		char path[32];

		snprintf(path, sizeof(path), "/context_refs/%zu", i);
		assert_refused(fx, rc, i, "CONTEXT_REF", path);
	}
	assert_non_null(strstr(fx->diags.items[0].message, "absolute"));
	assert_non_null(strstr(fx->diags.items[1].message, "'..'"));
	assert_non_null(strstr(fx->diags.items[4].message, "absolute"));
	assert_non_null(strstr(fx->diags.items[6].message, "'..'"));
	assert_null(pmbot_diag_list_find(&fx->diags, "CONTEXT_REV"));
}

static void test_context__names_with_dots_are_ordinary_paths(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "file:..hidden/a..b.md", "file:.github/x.md" };

	FIX_OK(gitrepo_write(fx->g, "..hidden/a..b.md", "dots\n"));
	FIX_OK(gitrepo_write(fx->g, ".github/x.md", "gh\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);

	resolve_ok(fx, refs, N(refs), "HEAD");
	assert_string_equal(content(fx, 0), "dots\n");
	assert_string_equal(content(fx, 1), "gh\n");
}

static void test_context__a_directory_or_symlink_is_not_a_file(void **state)
{
	fixture *fx = *state;
	const char *dir[] = { "file:docs" };
	const char *link[] = { "file:link.md" };

	FIX_OK(gitrepo_write(fx->g, "docs/a.md", "a\n"));
	FIX_OK(gitrepo_symlink(fx->g, "link.md", "docs/a.md"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);

	assert_refused(fx, resolve(fx, dir, 1, "HEAD"), 0, "CONTEXT_NOT_FOUND",
		"/context_refs/0");
	assert_refused(fx, resolve(fx, link, 1, "HEAD"), 0, "CONTEXT_NOT_FOUND",
		"/context_refs/0");
}

static void test_context__refuses_binary_and_non_utf8_files(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "file:img.bin", "file:latin1.md", "file:ok.md" };
	static const char bin[] = { 'P', 'N', 'G', '\0', 'x' };
	int rc;

	FIX_OK(gitrepo_write_len(fx->g, "img.bin", bin, sizeof(bin)));
	FIX_OK(gitrepo_write(fx->g, "latin1.md", "caf\xe9\n"));
	FIX_OK(gitrepo_write(fx->g, "ok.md", "ok\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);

	rc = resolve(fx, refs, N(refs), "HEAD");
	assert_int_equal(fx->diags.count, 2);
	assert_refused(fx, rc, 0, "CONTEXT_BINARY", "/context_refs/0");
	assert_non_null(strstr(fx->diags.items[0].message, "byte 3 is NUL"));
	assert_refused(fx, rc, 1, "CONTEXT_BINARY", "/context_refs/1");
	assert_non_null(strstr(fx->diags.items[1].message, "byte 3"));
}

static void test_context__refuses_a_blob_larger_than_the_read_cap(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "file:huge.md" };
	size_t n = PMBOT_CONTEXT_FILE_READ_MAX + 1;
	char *big = malloc(n);

	assert_non_null(big);
	memset(big, 'a', n);
	if (gitrepo_write_len(fx->g, "huge.md", big, n) != 0) {
		free(big);
		fail_msg("write: %s", gitrepo_error(fx->g));
	}
	free(big);
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);

	assert_refused(fx, resolve(fx, refs, 1, "HEAD"), 0, "CONTEXT_TOO_BIG", "/context_refs/0");
}

static void test_context__a_bad_revision_is_reported_once(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "memory:k", "file:a.md", "diff:HEAD", "file:b.md" };
	int rc;

	FIX_OK(gitrepo_write(fx->g, "a.md", "a\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);
	set_meta(fx, "{\"k\": \"v\"}");

	rc = resolve(fx, refs, N(refs), "nope");
	assert_int_equal(fx->diags.count, 1);
	assert_refused(fx, rc, 0, "CONTEXT_REV", "/context_refs/1");
	assert_non_null(strstr(fx->diags.items[0].message, "nope"));

	rc = resolve(fx, refs, N(refs), "HEAD^{tree}");
	assert_int_equal(fx->diags.count, 1);
	assert_refused(fx, rc, 0, "CONTEXT_REV", "/context_refs/1");
}

static void test_context__file_refs_need_a_repository_and_a_revision(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "raw", "diff:main" };

	assert_refused(fx, resolve(fx, refs, N(refs), "HEAD"), 0, "CONTEXT_REV",
		"/context_refs/1");
	assert_int_equal(fx->diags.count, 1);
}

static void test_context__diff_is_what_the_work_changed_since_the_base(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "diff:base", "diff:HEAD" };
	const char *bad[] = { "diff:nope", "diff:" };
	int cut = -1, rc;

	FIX_OK(gitrepo_write(fx->g, "src/x.c", "int x;\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "base"));
	FIX_OK(gitrepo_tag(fx->g, "base", "HEAD", NULL));
	FIX_OK(gitrepo_write(fx->g, "src/x.c", "int x;\nint y;\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "work"));
	open_repo(fx);
	assert_int_equal(pmbot_repo_diff(&fx->buf, &cut, fx->repo, "base", "HEAD", SIZE_MAX, NULL), 0);

	resolve_ok(fx, refs, N(refs), "HEAD");
	assert_kind(fx, 0, "diff:base", "diff");
	assert_string_equal(content(fx, 0), fx->buf.buf);
	assert_non_null(strstr(content(fx, 0), " int x;\n+int y;\n"));
	assert_false(truncated(fx, 0));
	assert_string_equal(content(fx, 1), "");
	assert_false(truncated(fx, 1));

	/* At the base itself the work is undone. */
	resolve_ok(fx, refs, 1, "base");
	assert_string_equal(content(fx, 0), "");

	rc = resolve(fx, bad, N(bad), "HEAD");
	assert_int_equal(fx->diags.count, 2);
	assert_refused(fx, rc, 0, "CONTEXT_REV", "/context_refs/0");
	assert_non_null(strstr(fx->diags.items[0].message, "nope"));
	assert_refused(fx, rc, 1, "CONTEXT_REF", "/context_refs/1");
}

static void test_context__cuts_a_long_diff_at_a_line_end_with_a_note(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "diff:HEAD~1" };
	static const char note[] = "[truncated: the diff is longer than 100000 bytes]";
	pmbot_buf file = PMBOT_BUF_INIT;
	const char *got;
	size_t i, body;
	int cut = -1;

	for (i = 0; i < 3000; i++)
		assert_int_equal(pmbot_buf_printf(&file, "line %04zu of a long generated file\n", i), 0);
	FIX_OK(gitrepo_write(fx->g, "keep.md", "k\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "base"));
	FIX_OK(gitrepo_write(fx->g, "gen.txt", file.buf));
	FIX_OK(gitrepo_commit(fx->g, NULL, "big"));
	open_repo(fx);
	assert_int_equal(pmbot_repo_diff(&fx->buf, &cut, fx->repo, "HEAD~1", "HEAD", SIZE_MAX, NULL), 0);
	assert_true(fx->buf.len > PMBOT_CONTEXT_DIFF_MAX_BYTES);

	resolve_ok(fx, refs, 1, "HEAD");
	assert_true(truncated(fx, 0));
	got = content(fx, 0);
	body = strlen(got) - strlen(note);
	assert_string_equal(got + body, note);
	assert_true(body <= PMBOT_CONTEXT_DIFF_MAX_BYTES);
	assert_true(body > PMBOT_CONTEXT_DIFF_MAX_BYTES - 64);
	assert_int_equal(got[body - 1], '\n');
	assert_memory_equal(got, fx->buf.buf, body);
	pmbot_buf_free(&file);
}

static void test_context__diff_bytes_that_are_not_utf8_become_replacement_characters(
	void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "diff:HEAD~1" };

	FIX_OK(gitrepo_write(fx->g, "menu.md", "tea\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "base"));
	FIX_OK(gitrepo_write(fx->g, "menu.md", "tea\ncaf\xe9 cr\xe8me\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "latin-1"));
	open_repo(fx);

	resolve_ok(fx, refs, 1, "HEAD");
	assert_non_null(strstr(content(fx, 0),
		" tea\n+caf\xef\xbf\xbd cr\xef\xbf\xbdme\n"));
	assert_false(truncated(fx, 0));
}

static void test_context__memory_strings_as_is_other_values_canonical(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "memory:s", "memory:o", "memory:n", "memory:z", "memory:a/b" };
	const char *missing[] = { "memory:nope", "memory:" };
	int rc;

	set_meta(fx, "{\"s\": \"two\\nlines \\\"quoted\\\"\", \"o\": {\"b\": 1, \"a\": [true, null]},"
		" \"n\": 2.5, \"z\": null, \"a/b\": \"slash key\"}");

	resolve_ok(fx, refs, N(refs), NULL);
	assert_kind(fx, 0, "memory:s", "memory");
	assert_string_equal(content(fx, 0), "two\nlines \"quoted\"");
	assert_string_equal(content(fx, 1), "{\"a\":[true,null],\"b\":1}");
	assert_string_equal(content(fx, 2), "2.5");
	assert_string_equal(content(fx, 3), "null");
	assert_string_equal(content(fx, 4), "slash key");

	rc = resolve(fx, missing, N(missing), NULL);
	assert_int_equal(fx->diags.count, 2);
	assert_refused(fx, rc, 0, "CONTEXT_NOT_FOUND", "/context_refs/0");
	assert_non_null(strstr(fx->diags.items[0].message, "'nope'"));
	assert_refused(fx, rc, 1, "CONTEXT_REF", "/context_refs/1");

	/* Without metadata no key exists. */
	json_decref(fx->meta);
	fx->meta = NULL;
	assert_refused(fx, resolve(fx, refs, 1, NULL), 0, "CONTEXT_NOT_FOUND", "/context_refs/0");
}

static void test_context__digest_marker_reads_context_digest(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "__CONTEXT_DIGEST__" };
	const char *lookalike[] = { "__context_digest__" };

	set_meta(fx, "{\"context_digest\": \"Context summary: 26 files\","
		" \"original_context_refs\": [\"file:a.py\"]}");
	resolve_ok(fx, refs, 1, NULL);
	assert_kind(fx, 0, "__CONTEXT_DIGEST__", "digest");
	assert_string_equal(content(fx, 0), "Context summary: 26 files");

	/* The marker is exact: anything else is a raw reference. */
	resolve_ok(fx, lookalike, 1, NULL);
	assert_kind(fx, 0, "__context_digest__", "raw");

	set_meta(fx, "{\"context_digest\": 26}");
	assert_refused(fx, resolve(fx, refs, 1, NULL), 0, "CONTEXT_REF",
		"/metadata/context_digest");
	set_meta(fx, "{}");
	assert_refused(fx, resolve(fx, refs, 1, NULL), 0, "CONTEXT_NOT_FOUND", "/context_refs/0");
}

static void test_context__raw_strings_become_reference_text(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "notes/plan.md", "File:x.md", "/etc/passwd", "http://x/y" };
	const char *empty[] = { "", NULL };

	/* Nothing is read, so no repository is needed. */
	resolve_ok(fx, refs, N(refs), NULL);
	assert_kind(fx, 0, "notes/plan.md", "raw");
	assert_string_equal(content(fx, 0), "[Reference: notes/plan.md]");
	assert_kind(fx, 1, "File:x.md", "raw");
	assert_string_equal(content(fx, 1), "[Reference: File:x.md]");
	assert_string_equal(content(fx, 2), "[Reference: /etc/passwd]");
	assert_string_equal(content(fx, 3), "[Reference: http://x/y]");
	assert_false(truncated(fx, 3));

	assert_refused(fx, resolve(fx, empty, N(empty), NULL), 0, "CONTEXT_REF", "/context_refs/0");
	assert_refused(fx, resolve(fx, empty, N(empty), NULL), 1, "CONTEXT_REF", "/context_refs/1");
}

static void test_context__reports_every_problem_and_returns_nothing(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "file:ok.md", "file:../up.md", "memory:gone", "\xff\xfe",
		"file:missing.md", "ok raw" };
	int rc;

	FIX_OK(gitrepo_write(fx->g, "ok.md", "ok\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);
	set_meta(fx, "{}");

	rc = resolve(fx, refs, N(refs), "HEAD");
	assert_int_equal(fx->diags.count, 4);
	assert_refused(fx, rc, 0, "CONTEXT_REF", "/context_refs/1");
	assert_refused(fx, rc, 1, "CONTEXT_NOT_FOUND", "/context_refs/2");
	assert_refused(fx, rc, 2, "CONTEXT_REF", "/context_refs/3");
	assert_non_null(strstr(fx->diags.items[2].message, "not UTF-8"));
	assert_refused(fx, rc, 3, "CONTEXT_NOT_FOUND", "/context_refs/4");
}

static void test_context__metadata_must_be_an_object(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "raw" };

	set_meta(fx, "[\"not\", \"an object\"]");
	assert_refused(fx, resolve(fx, refs, 1, NULL), 0, "CONTEXT_REF", "/metadata");
}

static void test_context__diagnostics_escape_control_characters(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "memory:a\nerror FAKE: b" };

	set_meta(fx, "{}");
	assert_refused(fx, resolve(fx, refs, 1, NULL), 0, "CONTEXT_NOT_FOUND", "/context_refs/0");
	assert_null(strchr(fx->diags.items[0].message, '\n'));
	assert_non_null(strstr(fx->diags.items[0].message, "a\\x0aerror FAKE"));
}

/* The IR of `pm-bot draft`: the report first, then the given --context refs. */
static void build_ir(fixture *fx, const char *const *refs, size_t n)
{
	size_t i;

	pmbot_promptir_free(fx->ir);
	fx->ir = NULL;
	assert_int_equal(pmbot_promptir_new(&fx->ir, "planner", "Draft", PMBOT_PHASE_PLANNING,
		4000, "abcd1234", "2026-11-22T12:00:00Z"), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(pmbot_promptir_add_context_ref(fx->ir, refs[i]), 0);
}

static int resolve_given(fixture *fx, const char *ref, const char *text, size_t len)
{
	json_decref(fx->out);
	fx->out = NULL;
	pmbot_diag_list_free(&fx->diags);
	return pmbot_promptir_resolve_given(&fx->out, fx->ir, fx->repo, "HEAD", ref, text, len,
		&fx->diags);
}

static void test_context__given_text_stands_for_its_ref_only(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "file:notes.md", "file:plan.md" };
	const char *also[] = { "file:notes.md", "file:scratch.md" };

	FIX_OK(gitrepo_write(fx->g, "plan.md", "committed\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	FIX_OK(gitrepo_write_worktree(fx->g, "plan.md", "work tree\n"));
	FIX_OK(gitrepo_write_worktree(fx->g, "scratch.md", "never committed\n"));
	open_repo(fx);

	build_ir(fx, refs, N(refs));
	assert_int_equal(resolve_given(fx, "file:notes.md", "from disk\n", 10), 0);
	assert_int_equal(fx->diags.count, 0);
	assert_kind(fx, 0, "file:notes.md", "file");
	assert_string_equal(content(fx, 0), "from disk\n");
	assert_false(truncated(fx, 0));
	/* Every other file: ref is still read from the commit, never the work tree. */
	assert_string_equal(content(fx, 1), "committed\n");

	build_ir(fx, also, N(also));
	assert_refused(fx, resolve_given(fx, "file:notes.md", "x", 1), 0, "CONTEXT_NOT_FOUND",
		"/context_refs/1");
	assert_int_equal(fx->diags.count, 1);

	/* No given ref: exactly pmbot_promptir_resolve(). */
	build_ir(fx, refs + 1, 1);
	assert_int_equal(resolve_given(fx, NULL, NULL, 0), 0);
	assert_string_equal(content(fx, 0), "committed\n");
}

static void test_context__given_text_gets_a_blobs_checks_and_cut(void **state)
{
	fixture *fx = *state;
	const char *refs[] = { "file:-" };
	static const char nul[] = { 'n', 'o', '\0', 'x' };
	size_t n = PMBOT_CONTEXT_FILE_READ_MAX + 1;
	char *big;

	FIX_OK(gitrepo_write(fx->g, "plan.md", "committed\n"));
	FIX_OK(gitrepo_commit(fx->g, NULL, "one"));
	open_repo(fx);
	build_ir(fx, refs, 1);

	assert_refused(fx, resolve_given(fx, "file:-", nul, sizeof(nul)), 0, "CONTEXT_BINARY",
		"/context_refs/0");
	assert_non_null(strstr(fx->diags.items[0].message, "byte 2 is NUL"));
	assert_refused(fx, resolve_given(fx, "file:-", "caf\xe9\n", 5), 0, "CONTEXT_BINARY",
		"/context_refs/0");
	big = malloc(n);
	assert_non_null(big);
	memset(big, 'a', n);
	assert_refused(fx, resolve_given(fx, "file:-", big, n), 0, "CONTEXT_TOO_BIG",
		"/context_refs/0");
	assert_int_equal(resolve_given(fx, "file:-", big, PMBOT_CONTEXT_FILE_MAX_CHARS + 1), 0);
	free(big);
	assert_true(truncated(fx, 0));
	assert_non_null(strstr(content(fx, 0), "[truncated: the first 10000 of 10001 characters]"));
	/* An empty file is an empty report, not a failure. */
	assert_int_equal(resolve_given(fx, "file:-", NULL, 0), 0);
	assert_string_equal(content(fx, 0), "");
}

static void test_context__read_input_reads_a_file_capped(void **state)
{
	fixture *fx = *state;
	size_t n = PMBOT_CONTEXT_FILE_READ_MAX + 1;
	char *big = malloc(n + 1);
	pmbot_buf path = PMBOT_BUF_INIT;

	assert_non_null(big);
	memset(big, 'a', n);
	big[n] = '\0';
	FIX_OK(gitrepo_write_worktree(fx->g, "notes.md", "hello\n"));
	if (gitrepo_write_worktree(fx->g, "huge.md", big) != 0) {
		free(big);
		fail_msg("write: %s", gitrepo_error(fx->g));
	}
	free(big);

	assert_int_equal(pmbot_buf_printf(&path, "%s/notes.md", gitrepo_path(fx->g)), 0);
	assert_int_equal(pmbot_context_read_input(&fx->text, path.buf, &fx->diags), 0);
	assert_int_equal(fx->text.len, 6);
	assert_memory_equal(fx->text.buf, "hello\n", 6);
	assert_int_equal(fx->diags.count, 0);

	pmbot_buf_clear(&path);
	assert_int_equal(pmbot_buf_printf(&path, "%s/huge.md", gitrepo_path(fx->g)), 0);
	assert_int_equal(pmbot_context_read_input(&fx->text, path.buf, &fx->diags), PMBOT_EINVALID);
	assert_string_equal(fx->diags.items[0].code, "CONTEXT_TOO_BIG");
	/* The cap bounds what was held, whatever the file's size. */
	assert_true(fx->text.len <= PMBOT_CONTEXT_FILE_READ_MAX);

	pmbot_buf_clear(&path);
	assert_int_equal(pmbot_buf_printf(&path, "%s/none.md", gitrepo_path(fx->g)), 0);
	assert_int_equal(pmbot_context_read_input(&fx->text, path.buf, &fx->diags), PMBOT_EINVALID);
	assert_string_equal(fx->diags.items[1].code, "CONTEXT_NOT_FOUND");
	assert_int_equal(pmbot_context_read_input(&fx->text, gitrepo_path(fx->g), &fx->diags),
		PMBOT_EINVALID);
	assert_string_equal(fx->diags.items[2].code, "CONTEXT_NOT_FOUND");
	pmbot_buf_free(&path);
}

#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_context__resolves_every_kind_in_ref_order),
		T(test_context__no_refs_give_an_empty_list),
		T(test_context__reads_files_from_the_commit_not_the_work_tree),
		T(test_context__cuts_a_file_at_ten_thousand_characters_without_splitting_one),
		T(test_context__a_cut_ending_at_a_newline_adds_no_blank_line),
		T(test_context__refuses_absolute_and_dotdot_paths_without_reading),
		T(test_context__names_with_dots_are_ordinary_paths),
		T(test_context__a_directory_or_symlink_is_not_a_file),
		T(test_context__refuses_binary_and_non_utf8_files),
		T(test_context__refuses_a_blob_larger_than_the_read_cap),
		T(test_context__a_bad_revision_is_reported_once),
		T(test_context__file_refs_need_a_repository_and_a_revision),
		T(test_context__diff_is_what_the_work_changed_since_the_base),
		T(test_context__cuts_a_long_diff_at_a_line_end_with_a_note),
		T(test_context__diff_bytes_that_are_not_utf8_become_replacement_characters),
		T(test_context__memory_strings_as_is_other_values_canonical),
		T(test_context__digest_marker_reads_context_digest),
		T(test_context__raw_strings_become_reference_text),
		T(test_context__reports_every_problem_and_returns_nothing),
		T(test_context__metadata_must_be_an_object),
		T(test_context__diagnostics_escape_control_characters),
		T(test_context__given_text_stands_for_its_ref_only),
		T(test_context__given_text_gets_a_blobs_checks_and_cut),
		T(test_context__read_input_reads_a_file_capped),
	};

	return cmocka_run_group_tests(tests, 0, NULL);
}
