#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers/tmpdir.h"

#include "pmbot/apply.h"
#include "pmbot/fs.h"
#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/banned.h"

typedef struct {
	char dir[256];
	char path[300];
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/pmbot-test-audit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/audit.jsonl", f->dir);
	setenv("PMBOT_NOW", "2025-03-04T05:06:07Z", 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	test_remove_tree(f->dir);
	free(f);
	return 0;
}

/* Write `n` events (fields {"n": i}) to a fresh or existing ledger. */
static void write_events(const char *path, int from, int n)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_audit *a = NULL;
	int i;

	assert_int_equal(pmbot_audit_open(&a, path, &d), PMBOT_OK);
	for (i = from; i < from + n; i++) {
		json_t *f = json_pack("{s:i, s:s}", "n", i, "changeset_id", "cs-0001");

		assert_int_equal(pmbot_audit_append(a, i % 2 ? "attempt" : "success", f), PMBOT_OK);
		json_decref(f);
	}
	pmbot_audit_close(a);
	pmbot_diag_list_free(&d);
}

/* The ledger's lines, without newlines; `*n` of them. Free with free_lines. */
static char **read_lines(const char *path, size_t *n)
{
	pmbot_buf text = PMBOT_BUF_INIT;
	char **lines = NULL, *p, *nl;

	*n = 0;
	assert_int_equal(pmbot_fs_read(&text, path), 0);
	for (p = text.buf; (nl = strchr(p, '\n')); p = nl + 1) {
		lines = realloc(lines, (*n + 1) * sizeof(*lines));
		assert_non_null(lines);
		lines[*n] = strndup(p, (size_t)(nl - p));
		(*n)++;
	}
	assert_int_equal(*p, '\0');
	pmbot_buf_free(&text);
	return lines;
}

static void write_lines(const char *path, char **lines, size_t n)
{
	pmbot_buf text = PMBOT_BUF_INIT;
	size_t i;

	for (i = 0; i < n; i++)
		assert_int_equal(pmbot_buf_printf(&text, "%s\n", lines[i]), 0);
	assert_int_equal(pmbot_fs_write_atomic(path, text.buf, text.len), 0);
	pmbot_buf_free(&text);
}

static void free_lines(char **lines, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

/* Verify; expect the chain broken at `line` with a message containing `why`. */
static void expect_broken(const char *path, int line, const char *why)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	size_t n = 99;

	assert_int_equal(pmbot_audit_verify(path, &n, &d), PMBOT_EINVALID);
	assert_int_equal(n, 0);
	assert_int_equal(d.count, 1);
	assert_string_equal(d.items[0].code, "AUDIT_BROKEN");
	assert_string_equal(d.items[0].file, path);
	if (d.items[0].line != line || !strstr(d.items[0].message, why))
		fail_msg("got line %d \"%s\", want line %d \"%s\"", d.items[0].line,
			d.items[0].message, line, why);
	pmbot_diag_list_free(&d);
}

static void expect_intact(const char *path, size_t lines)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	size_t n = 0;

	assert_int_equal(pmbot_audit_verify(path, &n, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);
	assert_int_equal(n, lines);
}

static void test_audit_append__chains_each_line_to_the_sha256_of_the_one_before(void **state)
{
	fixture *f = *state;
	char prev[PMBOT_SHA256_HEX_SIZE];
	char **lines;
	size_t n, i;

	write_events(f->path, 0, 4);
	lines = read_lines(f->path, &n);
	assert_int_equal(n, 4);
	memset(prev, '0', 64);
	prev[64] = '\0';
	for (i = 0; i < n; i++) {
		json_t *o = json_loads(lines[i], 0, NULL);
		pmbot_buf canon = PMBOT_BUF_INIT;

		assert_non_null(o);
		assert_string_equal(json_string_value(json_object_get(o, "prev")), prev);
		assert_int_equal(json_integer_value(json_object_get(o, "seq")), i + 1);
		assert_int_equal(json_integer_value(json_object_get(o, "n")), i);
		assert_string_equal(json_string_value(json_object_get(o, "at")), "2025-03-04T05:06:07Z");
		assert_string_equal(json_string_value(json_object_get(o, "event")),
			i % 2 ? "attempt" : "success");
		/* Each line is canonical JSON. */
		assert_int_equal(pmbot_json_canonical(&canon, o), 0);
		assert_string_equal(canon.buf, lines[i]);
		pmbot_buf_free(&canon);
		assert_int_equal(pmbot_sha256_hex(prev, lines[i], strlen(lines[i])), 0);
		json_decref(o);
	}
	free_lines(lines, n);
	expect_intact(f->path, 4);
}

static void test_audit_open__continues_the_chain_of_an_existing_ledger(void **state)
{
	fixture *f = *state;
	char **lines;
	size_t n;
	json_t *o;

	write_events(f->path, 0, 2);
	write_events(f->path, 2, 3);
	lines = read_lines(f->path, &n);
	assert_int_equal(n, 5);
	o = json_loads(lines[2], 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(o, "seq")), 3);
	json_decref(o);
	free_lines(lines, n);
	expect_intact(f->path, 5);
}

static void test_audit_head__is_the_hash_of_the_last_line(void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	char head[PMBOT_SHA256_HEX_SIZE], want[PMBOT_SHA256_HEX_SIZE];
	pmbot_audit *a = NULL;
	char **lines;
	size_t n, count = 9;

	assert_int_equal(pmbot_audit_open(&a, f->path, &d), PMBOT_OK);
	pmbot_audit_head(head, &count, a);
	assert_int_equal(count, 0);
	assert_string_equal(head, "0000000000000000000000000000000000000000000000000000000000000000");
	pmbot_audit_close(a);
	write_events(f->path, 0, 3);
	assert_int_equal(pmbot_audit_open(&a, f->path, &d), PMBOT_OK);
	pmbot_audit_head(head, &count, a);
	pmbot_audit_close(a);
	lines = read_lines(f->path, &n);
	assert_int_equal(pmbot_sha256_hex(want, lines[2], strlen(lines[2])), 0);
	assert_string_equal(head, want);
	assert_int_equal(count, 3);
	free_lines(lines, n);
	pmbot_diag_list_free(&d);
}

static void test_audit_append__refuses_reserved_keys_and_unknown_events(void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_audit *a = NULL;
	json_t *fields = json_pack("{s:i}", "seq", 7), *arr = json_array();

	assert_int_equal(pmbot_audit_open(&a, f->path, &d), PMBOT_OK);
	assert_int_equal(pmbot_audit_append(a, "success", fields), PMBOT_EINVALID);
	assert_int_equal(pmbot_audit_append(a, "party", NULL), PMBOT_EINVALID);
	assert_int_equal(pmbot_audit_append(a, "failure", arr), PMBOT_EINVALID);
	assert_int_equal(pmbot_audit_append(a, "dead_letter", NULL), PMBOT_OK);
	assert_int_equal(pmbot_audit_append(a, "capability_run", NULL), PMBOT_OK);
	pmbot_audit_close(a);
	json_decref(fields);
	json_decref(arr);
	/* Nothing refused was written: only the two accepted events. */
	expect_intact(f->path, 2);
	pmbot_diag_list_free(&d);
}

static void test_audit_open__creates_missing_directories(void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_audit *a = NULL;
	char path[400];

	snprintf(path, sizeof(path), "%s/.pm-bot/deep/audit.jsonl", f->dir);
	assert_int_equal(pmbot_audit_open(&a, path, &d), PMBOT_OK);
	assert_int_equal(pmbot_audit_append(a, "proposal", NULL), PMBOT_OK);
	pmbot_audit_close(a);
	expect_intact(path, 1);
	pmbot_diag_list_free(&d);
}

static void test_audit_verify__an_empty_ledger_is_intact(void **state)
{
	fixture *f = *state;

	assert_int_equal(pmbot_fs_write_atomic(f->path, "", 0), 0);
	expect_intact(f->path, 0);
}

static void test_audit_verify__detects_an_edited_line(void **state)
{
	fixture *f = *state;
	char **lines, *p;
	size_t n;

	write_events(f->path, 0, 5);
	lines = read_lines(f->path, &n);
	/* Still canonical JSON, same shape: only the chain can tell. */
	assert_non_null(p = strstr(lines[2], "\"n\":2"));
	p[4] = '7';
	write_lines(f->path, lines, n);
	expect_broken(f->path, 4, "prev is not the SHA-256 of the line before");
	free_lines(lines, n);
}

static void test_audit_verify__detects_a_deleted_line(void **state)
{
	fixture *f = *state;
	char **lines;
	size_t n;

	write_events(f->path, 0, 5);
	lines = read_lines(f->path, &n);
	free(lines[1]);
	memmove(lines + 1, lines + 2, (n - 2) * sizeof(*lines));
	write_lines(f->path, lines, n - 1);
	expect_broken(f->path, 2, "prev");
	free_lines(lines, n - 1);
}

static void test_audit_verify__detects_a_deleted_first_line(void **state)
{
	fixture *f = *state;
	char **lines;
	size_t n;

	write_events(f->path, 0, 3);
	lines = read_lines(f->path, &n);
	write_lines(f->path, lines + 1, n - 1);
	expect_broken(f->path, 1, "64 zeros");
	free_lines(lines, n);
}

static void test_audit_verify__detects_reordered_lines(void **state)
{
	fixture *f = *state;
	char **lines, *t;
	size_t n;

	write_events(f->path, 0, 5);
	lines = read_lines(f->path, &n);
	t = lines[2];
	lines[2] = lines[3];
	lines[3] = t;
	write_lines(f->path, lines, n);
	expect_broken(f->path, 3, "prev");
	free_lines(lines, n);
}

static void test_audit_verify__detects_a_renumbered_chain(void **state)
{
	fixture *f = *state;
	pmbot_buf text = PMBOT_BUF_INIT, line = PMBOT_BUF_INIT;
	char prev[PMBOT_SHA256_HEX_SIZE];
	int i;

	/* A forger who recomputes every hash but skips a number is still caught. */
	memset(prev, '0', 64);
	prev[64] = '\0';
	for (i = 0; i < 3; i++) {
		json_t *o = json_pack("{s:s, s:i, s:s, s:s}", "event", "attempt", "seq",
			i == 2 ? 4 : i + 1, "at", "2025-03-04T05:06:07Z", "prev", prev);

		pmbot_buf_clear(&line);
		assert_int_equal(pmbot_json_canonical(&line, o), 0);
		assert_int_equal(pmbot_sha256_hex(prev, line.buf, line.len), 0);
		assert_int_equal(pmbot_buf_printf(&text, "%s\n", line.buf), 0);
		json_decref(o);
	}
	assert_int_equal(pmbot_fs_write_atomic(f->path, text.buf, text.len), 0);
	expect_broken(f->path, 3, "seq is not 3");
	pmbot_buf_free(&text);
	pmbot_buf_free(&line);
}

static void test_audit_verify__detects_bad_json_reformatting_and_a_cut_off_line(void **state)
{
	fixture *f = *state;
	pmbot_buf text = PMBOT_BUF_INIT;
	char **lines, *spaced;
	size_t n;

	write_events(f->path, 0, 3);
	lines = read_lines(f->path, &n);

	/* Re-indented: same data, different bytes. */
	spaced = malloc(strlen(lines[1]) + 2);
	assert_non_null(spaced);
	spaced[0] = ' ';
	memcpy(spaced + 1, lines[1], strlen(lines[1]) + 1);
	free(lines[1]);
	lines[1] = spaced;
	write_lines(f->path, lines, n);
	expect_broken(f->path, 2, "not canonical");

	free(lines[1]);
	lines[1] = strdup("{\"event\":");
	write_lines(f->path, lines, n);
	expect_broken(f->path, 2, "not a JSON object");

	free_lines(lines, n);
	assert_int_equal(pmbot_fs_write_atomic(f->path, "", 0), 0);
	write_events(f->path, 0, 2);
	assert_int_equal(pmbot_fs_read(&text, f->path), 0);
	assert_int_equal(pmbot_fs_write_atomic(f->path, text.buf, text.len - 5), 0);
	expect_broken(f->path, 2, "no newline");
	pmbot_buf_free(&text);
}

static void test_audit_open__refuses_a_broken_ledger_and_leaves_it_alone(void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf before = PMBOT_BUF_INIT, after = PMBOT_BUF_INIT;
	pmbot_audit *a = (pmbot_audit *)&a;
	char **lines, *t;
	size_t n;

	write_events(f->path, 0, 3);
	lines = read_lines(f->path, &n);
	t = lines[0];
	lines[0] = lines[1];
	lines[1] = t;
	write_lines(f->path, lines, n);
	free_lines(lines, n);
	assert_int_equal(pmbot_fs_read(&before, f->path), 0);
	assert_int_equal(pmbot_audit_open(&a, f->path, &d), PMBOT_EINVALID);
	assert_null(a);
	assert_non_null(pmbot_diag_list_find(&d, "AUDIT_BROKEN"));
	assert_int_equal(pmbot_fs_read(&after, f->path), 0);
	assert_int_equal(before.len, after.len);
	assert_memory_equal(before.buf, after.buf, before.len);
	pmbot_buf_free(&before);
	pmbot_buf_free(&after);
	pmbot_diag_list_free(&d);
}

static void test_audit_open__refuses_a_second_writer(void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_audit *a = NULL, *b = NULL;

	assert_int_equal(pmbot_audit_open(&a, f->path, &d), PMBOT_OK);
	assert_int_equal(pmbot_audit_open(&b, f->path, &d), PMBOT_EINVALID);
	assert_null(b);
	assert_non_null(pmbot_diag_list_find(&d, "AUDIT_LOCKED"));
	pmbot_audit_close(a);
	pmbot_diag_list_free(&d);
	assert_int_equal(pmbot_audit_open(&b, f->path, &d), PMBOT_OK);
	pmbot_audit_close(b);
	pmbot_diag_list_free(&d);
}

static void test_audit_open__refuses_a_malformed_PMBOT_NOW(void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_audit *a = NULL;

	setenv("PMBOT_NOW", "2025-13-01T00:00:00Z", 1);
	assert_int_equal(pmbot_audit_open(&a, f->path, &d), PMBOT_EINVALID);
	assert_non_null(pmbot_diag_list_find(&d, "AUDIT_CLOCK"));
	setenv("PMBOT_NOW", "2025-03-04T05:06:07Z", 1);
	pmbot_diag_list_free(&d);
}

static void test_audit_verify__a_missing_file_is_an_io_error(void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	size_t n = 5;

	assert_int_equal(pmbot_audit_verify(f->path, &n, &d), PMBOT_ERROR);
	assert_int_equal(n, 0);
	assert_non_null(pmbot_diag_list_find(&d, "AUDIT_IO"));
	pmbot_diag_list_free(&d);
}

/*
 * What an attacker with write access to the file does: change line `edit`
 * (0-based) and recompute `prev` on every line after it, so the chain is
 * consistent again.
 */
static void rewrite_and_rechain(const char *path, size_t edit)
{
	char hash[PMBOT_SHA256_HEX_SIZE];
	char **lines;
	size_t n, i;

	lines = read_lines(path, &n);
	assert_true(edit < n);
	for (i = edit; i < n; i++) {
		pmbot_buf canon = PMBOT_BUF_INIT;
		json_t *o = json_loads(lines[i], 0, NULL);

		assert_non_null(o);
		if (i == edit)
			assert_int_equal(json_object_set_new(o, "changeset_id", json_string("cs-9999")), 0);
		if (i > 0) {
			assert_int_equal(pmbot_sha256_hex(hash, lines[i - 1], strlen(lines[i - 1])), 0);
			assert_int_equal(json_object_set_new(o, "prev", json_string(hash)), 0);
		}
		assert_int_equal(pmbot_json_canonical(&canon, o), 0);
		free(lines[i]);
		lines[i] = strndup(canon.buf, canon.len);
		pmbot_buf_free(&canon);
		json_decref(o);
	}
	write_lines(path, lines, n);
	free_lines(lines, n);
}

static void test_audit_verify_head__gives_the_head_and_the_line_count(void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	char head[PMBOT_SHA256_HEX_SIZE], want[PMBOT_SHA256_HEX_SIZE];
	pmbot_audit *a = NULL;
	size_t n = 0, count = 0, at = 99;

	write_events(f->path, 0, 5);
	assert_int_equal(pmbot_audit_open(&a, f->path, &d), PMBOT_OK);
	pmbot_audit_head(want, &count, a);
	pmbot_audit_close(a);
	assert_int_equal(pmbot_audit_verify_head(head, &n, &at, f->path, NULL, &d), PMBOT_OK);
	assert_string_equal(head, want);
	assert_int_equal(n, 5);
	assert_int_equal(count, 5);
	/* Without an expected head there is no line to report. */
	assert_int_equal(at, 0);
	assert_int_equal(d.count, 0);
	pmbot_diag_list_free(&d);
}

static void test_audit_verify_head__a_ledger_extended_by_appends_still_holds_the_published_head(
	void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	char published[PMBOT_SHA256_HEX_SIZE], upper[PMBOT_SHA256_HEX_SIZE];
	char head[PMBOT_SHA256_HEX_SIZE];
	size_t n = 0, at = 0, i;

	write_events(f->path, 0, 4);
	assert_int_equal(pmbot_audit_verify_head(published, &n, NULL, f->path, NULL, &d), PMBOT_OK);
	write_events(f->path, 4, 3);
	assert_int_equal(pmbot_audit_verify_head(head, &n, &at, f->path, published, &d), PMBOT_OK);
	assert_int_equal(n, 7);
	assert_int_equal(at, 4);
	assert_string_not_equal(head, published);
	/* Any case; and the empty ledger's head is every ledger's start. */
	for (i = 0; i < sizeof(upper); i++)
		upper[i] = (char)(published[i] >= 'a' && published[i] <= 'f' ?
			published[i] - 'a' + 'A' : published[i]);
	assert_int_equal(pmbot_audit_verify_head(NULL, NULL, &at, f->path, upper, &d), PMBOT_OK);
	assert_int_equal(at, 4);
	assert_int_equal(pmbot_audit_verify_head(NULL, NULL, &at, f->path,
		"0000000000000000000000000000000000000000000000000000000000000000", &d), PMBOT_OK);
	assert_int_equal(at, 0);
	assert_int_equal(d.count, 0);
	pmbot_diag_list_free(&d);
}

static void test_audit_verify_head__a_rewritten_and_rechained_middle_fails_against_the_published_head(
	void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	char published[PMBOT_SHA256_HEX_SIZE], head[PMBOT_SHA256_HEX_SIZE];
	size_t n = 0, at = 7;

	write_events(f->path, 0, 6);
	assert_int_equal(pmbot_audit_verify_head(published, &n, NULL, f->path, NULL, &d), PMBOT_OK);
	rewrite_and_rechain(f->path, 2);
	/* The chain alone cannot tell. */
	expect_intact(f->path, 6);
	assert_int_equal(pmbot_audit_verify_head(head, &n, &at, f->path, published, &d),
		PMBOT_EINVALID);
	assert_int_equal(d.count, 1);
	assert_string_equal(d.items[0].code, "AUDIT_HEAD");
	assert_string_equal(d.items[0].file, f->path);
	assert_non_null(strstr(d.items[0].message, published));
	assert_non_null(strstr(d.items[0].message, "rewritten or removed"));
	assert_int_equal(at, 0);
	pmbot_diag_list_free(&d);
}

static void test_audit_verify_head__a_truncated_ledger_fails_against_the_published_head(
	void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	char published[PMBOT_SHA256_HEX_SIZE];
	char **lines;
	size_t n = 0;

	write_events(f->path, 0, 5);
	assert_int_equal(pmbot_audit_verify_head(published, NULL, NULL, f->path, NULL, &d), PMBOT_OK);
	lines = read_lines(f->path, &n);
	write_lines(f->path, lines, 3);
	free_lines(lines, n);
	expect_intact(f->path, 3);
	assert_int_equal(pmbot_audit_verify_head(NULL, NULL, NULL, f->path, published, &d),
		PMBOT_EINVALID);
	assert_string_equal(d.items[0].code, "AUDIT_HEAD");
	pmbot_diag_list_free(&d);
}

static void test_audit_verify_head__refuses_an_expected_head_that_is_not_a_sha256(void **state)
{
	static const char *const bad[] = {
		"", "abc", "0000000000000000000000000000000000000000000000000000000000000000a",
		"g000000000000000000000000000000000000000000000000000000000000000",
		"000000000000000000000000000000000000000000000000000000000000000 "
	};
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	size_t i;

	write_events(f->path, 0, 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(pmbot_audit_verify_head(NULL, NULL, NULL, f->path, bad[i], &d),
			PMBOT_EINVALID);
		assert_string_equal(d.items[d.count - 1].code, "AUDIT_HEAD");
	}
	assert_int_equal(d.count, i);
	pmbot_diag_list_free(&d);
}
/* One call opens, appends and closes: a second call can open the ledger again. */
static void test_audit_record__appends_one_event_per_call_and_releases_the_ledger(void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	json_t *bundle, *fields, *line;
	char path[400], **lines;
	size_t n, count;

	bundle = json_pack("{s:s, s:[{}, {}], s:[]}", "plan_hash",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"changesets", "conflicts");
	assert_non_null(bundle);
	assert_non_null(fields = pmbot_audit_proposal_fields(bundle));
	/* Where the ledger's directory does not exist yet. */
	snprintf(path, sizeof(path), "%s/deeper/audit.jsonl", f->dir);
	assert_int_equal(pmbot_audit_record(path, "proposal", fields, &d), PMBOT_OK);
	assert_int_equal(pmbot_audit_record(path, "proposal", fields, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);
	assert_int_equal(pmbot_audit_verify(path, &count, &d), PMBOT_OK);
	assert_int_equal(count, 2);

	lines = read_lines(path, &n);
	assert_int_equal(n, 2);
	assert_non_null(line = json_loads(lines[1], 0, NULL));
	assert_string_equal(json_string_value(json_object_get(line, "event")), "proposal");
	assert_string_equal(json_string_value(json_object_get(line, "plan_hash")),
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	assert_int_equal(json_integer_value(json_object_get(line, "changesets")), 2);
	assert_int_equal(json_integer_value(json_object_get(line, "seq")), 2);
	json_decref(line);
	free_lines(lines, n);
	json_decref(fields);
	json_decref(bundle);
	pmbot_diag_list_free(&d);
}

static void test_audit_record__an_unknown_event_is_refused_and_nothing_is_written(void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	size_t count;

	assert_int_equal(pmbot_audit_record(f->path, "no_such_event", NULL, &d), PMBOT_EINVALID);
	assert_int_equal(pmbot_audit_verify(f->path, &count, &d), PMBOT_OK);
	assert_int_equal(count, 0);
	pmbot_diag_list_free(&d);
}

static void test_audit_repo_path__is_the_repositorys_own_ledger(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_audit_repo_path(&b, "work/repo"), 0);
	assert_string_equal(b.buf, "work/repo/.pm-bot/audit.jsonl");
	pmbot_buf_clear(&b);
	assert_int_equal(pmbot_audit_repo_path(&b, NULL), 0);
	assert_string_equal(b.buf, "./.pm-bot/audit.jsonl");
	pmbot_buf_free(&b);
}

static void test_audit_proposal_fields__need_a_plan_hash(void **state)
{
	json_t *bundle = json_pack("{s:[{}]}", "changesets");

	(void)state;
	assert_non_null(bundle);
	assert_null(pmbot_audit_proposal_fields(bundle));
	json_decref(bundle);
}

/* The file's bytes ("" when empty). */
static char *bytes_of(const char *path)
{
	pmbot_buf text = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_fs_read(&text, path), 0);
	return pmbot_buf_detach(&text, NULL);
}

static void append_n(pmbot_audit *a, int from, int n)
{
	int i;

	for (i = from; i < from + n; i++) {
		json_t *f = json_pack("{s:i, s:s}", "n", i, "changeset_id", "cs-0001");

		assert_int_equal(pmbot_audit_append(a, i % 2 ? "attempt" : "success", f), PMBOT_OK);
		json_decref(f);
	}
}

static void test_audit_hold__flush_writes_the_same_lines_as_appending_one_by_one(void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	char other[320], head[PMBOT_SHA256_HEX_SIZE], *want, *have;
	pmbot_audit *a = NULL;
	size_t lines;

	snprintf(other, sizeof(other), "%s/one-by-one.jsonl", f->dir);
	write_events(other, 0, 6);
	assert_int_equal(pmbot_audit_open(&a, f->path, &d), PMBOT_OK);
	append_n(a, 0, 2);
	pmbot_audit_hold(a);
	append_n(a, 2, 3);
	/* Held: not in the file, but the chain (and the head) goes on. */
	assert_int_equal(pmbot_audit_verify(f->path, &lines, &d), PMBOT_OK);
	assert_int_equal(lines, 2);
	pmbot_audit_head(head, &lines, a);
	assert_int_equal(lines, 5);
	assert_int_equal(pmbot_audit_flush(a), PMBOT_OK);
	append_n(a, 5, 1);
	pmbot_audit_close(a);
	want = bytes_of(other);
	have = bytes_of(f->path);
	assert_string_equal(have, want);
	assert_int_equal(pmbot_audit_verify(f->path, &lines, &d), PMBOT_OK);
	assert_int_equal(lines, 6);
	free(want);
	free(have);
	pmbot_diag_list_free(&d);
}

static void test_audit_hold__discard_and_close_drop_the_held_lines(void **state)
{
	fixture *f = *state;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	char other[320], *want, *have;
	pmbot_audit *a = NULL;
	size_t lines;

	snprintf(other, sizeof(other), "%s/one-by-one.jsonl", f->dir);
	write_events(other, 0, 3);
	assert_int_equal(pmbot_audit_open(&a, f->path, &d), PMBOT_OK);
	append_n(a, 0, 2);
	pmbot_audit_hold(a);
	append_n(a, 100, 4);
	pmbot_audit_discard(a);
	/* The chain goes on from the file's last line, not from the dropped ones. */
	append_n(a, 2, 1);
	pmbot_audit_hold(a);
	append_n(a, 200, 2);
	pmbot_audit_close(a);
	want = bytes_of(other);
	have = bytes_of(f->path);
	assert_string_equal(have, want);
	assert_int_equal(pmbot_audit_verify(f->path, &lines, &d), PMBOT_OK);
	assert_int_equal(lines, 3);
	free(want);
	free(have);
	pmbot_diag_list_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_audit_append__chains_each_line_to_the_sha256_of_the_one_before, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_open__continues_the_chain_of_an_existing_ledger, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_head__is_the_hash_of_the_last_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify_head__gives_the_head_and_the_line_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify_head__a_ledger_extended_by_appends_still_holds_the_published_head, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify_head__a_rewritten_and_rechained_middle_fails_against_the_published_head, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify_head__a_truncated_ledger_fails_against_the_published_head, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify_head__refuses_an_expected_head_that_is_not_a_sha256, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_append__refuses_reserved_keys_and_unknown_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_open__creates_missing_directories, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify__an_empty_ledger_is_intact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify__detects_an_edited_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify__detects_a_deleted_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify__detects_a_deleted_first_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify__detects_reordered_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify__detects_a_renumbered_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify__detects_bad_json_reformatting_and_a_cut_off_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_open__refuses_a_broken_ledger_and_leaves_it_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_open__refuses_a_second_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_open__refuses_a_malformed_PMBOT_NOW, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_verify__a_missing_file_is_an_io_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_record__appends_one_event_per_call_and_releases_the_ledger, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_record__an_unknown_event_is_refused_and_nothing_is_written, setup, teardown),
		cmocka_unit_test(test_audit_repo_path__is_the_repositorys_own_ledger),
		cmocka_unit_test(test_audit_proposal_fields__need_a_plan_hash),
		cmocka_unit_test_setup_teardown(test_audit_hold__flush_writes_the_same_lines_as_appending_one_by_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_hold__discard_and_close_drop_the_held_lines, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
