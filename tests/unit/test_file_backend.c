#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "helpers/tmpdir.h"

#include <errno.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/state.h"
#include "pmbot/datetime.h"
#include "pmbot/banned.h"

#define NOW "2026-11-02T10:00:00Z"

/* A temporary directory with the state file two levels down (so directories get created). */
typedef struct {
	char dir[256];
	char path[300];
	pmbot_backend *b;
} fixture;

/* The operation named `name`; one past the table for a name that is none, which a backend refuses. */
static pmbot_operation op_of(const char *name)
{
	pmbot_operation op;

	return pmbot_operation_parse(&op, name) == PMBOT_OK ? op : (pmbot_operation)PMBOT_OP_COUNT;
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	fixture *f = calloc(1, sizeof(*f));
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "%s/pmbot-fb-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/.pm-bot/state.json", f->dir);
	setenv("PMBOT_NOW", NOW, 1);
	assert_int_equal(pmbot_file_backend_open(&f->b, f->path, NULL, &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	if (f->b)
		f->b->free(f->b);
	test_remove_tree(f->dir);
	free(f);
	unsetenv("PMBOT_NOW");
	return 0;
}

/* Copy fixture `name` to the state file and reopen the backend on it. */
static void seed(fixture *f, const char *name)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf src = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_buf_printf(&src, "tests/fixtures/states/%s", name), 0);
	assert_int_equal(pmbot_fs_read(&text, src.buf), 0);
	pmbot_buf_clear(&src);
	assert_int_equal(pmbot_buf_printf(&src, "%s/.pm-bot", f->dir), 0);
	assert_int_equal(pmbot_fs_mkdirs(src.buf, 0755), 0);
	assert_int_equal(pmbot_fs_write_atomic(f->path, text.buf, text.len), 0);
	f->b->free(f->b);
	assert_int_equal(pmbot_file_backend_open(&f->b, f->path, NULL, &diags), PMBOT_OK);
	pmbot_buf_free(&src);
	pmbot_buf_free(&text);
	pmbot_diag_list_free(&diags);
}

static json_t *args(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static json_t *args(const char *fmt, ...)
{
	pmbot_buf text = PMBOT_BUF_INIT;
	json_error_t e;
	json_t *j;
	va_list ap;

	va_start(ap, fmt);
	assert_int_equal(pmbot_buf_vprintf(&text, fmt, ap), 0);
	va_end(ap);
	j = json_loads(text.buf, 0, &e);
	if (!j)
		fail_msg("bad test args %s: %s", text.buf, e.text);
	pmbot_buf_free(&text);
	return j;
}

/* The file's bytes, or NULL when there is no file. */
static char *file_bytes(const fixture *f)
{
	pmbot_buf text = PMBOT_BUF_INIT;

	if (pmbot_fs_read(&text, f->path) < 0) {
		assert_int_equal(errno, ENOENT);
		pmbot_buf_free(&text);
		return NULL;
	}
	return pmbot_buf_detach(&text, NULL);
}

/* The state in the file, which must be valid and in canonical form plus a newline. */
static pmbot_state *file_state(const fixture *f)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf canon = PMBOT_BUF_INIT;
	pmbot_state *st = NULL;
	char *text = file_bytes(f);
	json_t *j = NULL;

	assert_non_null(text);
	assert_int_equal(pmbot_state_parse(&st, "state.json", text, strlen(text), &diags), PMBOT_OK);
	assert_int_equal(diags.errors, 0);
	assert_int_equal(pmbot_state_to_json(&j, st), PMBOT_OK);
	assert_int_equal(pmbot_json_canonical(&canon, j), 0);
	assert_int_equal(pmbot_buf_putc(&canon, '\n'), 0);
	assert_string_equal(text, canon.buf);
	json_decref(j);
	free(text);
	pmbot_buf_free(&canon);
	pmbot_diag_list_free(&diags);
	return st;
}

/* Perform; expect success; the file is a valid state afterwards. Returns the result. */
static json_t *perform_ok(fixture *f, const char *op, json_t *a)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	json_t *result = NULL;
	int rc = f->b->perform(&result, f->b, op_of(op), a, &err);

	if (rc != PMBOT_OK)
		fail_msg("%s failed (%d): %s", op, rc, err.buf);
	assert_non_null(result);
	assert_true(json_is_object(result));
	assert_int_equal(err.len, 0);
	json_decref(a);
	pmbot_buf_free(&err);
	pmbot_state_free(file_state(f));
	return result;
}

static void perform_ok_quiet(fixture *f, const char *op, json_t *a)
{
	json_decref(perform_ok(f, op, a));
}

/* Perform; expect `rc` with `says` in the message and the file byte for byte as before. */
static void perform_fails(fixture *f, int want, const char *op, json_t *a, const char *says)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	json_t *result = (json_t *)&result;
	char *before = file_bytes(f), *after;
	int rc = f->b->perform(&result, f->b, op_of(op), a, &err);

	if (rc != want)
		fail_msg("%s: want %d, got %d (%s)", op, want, rc, err.buf);
	assert_null(result);
	if (!strstr(err.buf, says))
		fail_msg("%s: message \"%s\" lacks \"%s\"", op, err.buf, says);
	after = file_bytes(f);
	if (!before)
		assert_null(after);
	else
		assert_string_equal(before, after);
	free(before);
	free(after);
	json_decref(a);
	pmbot_buf_free(&err);
}

static void refused(fixture *f, const char *op, json_t *a, const char *says)
{
	perform_fails(f, PMBOT_EINVALID, op, a, says);
}

static long create(fixture *f, const char *repo, const char *title)
{
	json_t *r = perform_ok(f, "create_issue", args("{\"repo\":\"%s\",\"title\":\"%s\","
		"\"body\":\"b\",\"labels\":[]}", repo, title));
	long n = (long)json_integer_value(json_object_get(r, "number"));

	json_decref(r);
	return n;
}

static long long database_id(fixture *f, const char *repo, long number)
{
	pmbot_state *st = file_state(f);
	const pmbot_issue *is = pmbot_state_issue_at(st, repo, number);
	long long id;

	assert_non_null(is);
	id = is->database_id;
	pmbot_state_free(st);
	return id;
}

static json_t *parent_args(fixture *f, const char *repo, long child, long parent, int replace)
{
	return args("{\"repo\":\"%s\",\"number\":%ld,\"database_id\":%lld,\"parent_repo\":\"%s\","
		"\"parent_number\":%ld,\"replace\":%s}", repo, child, database_id(f, repo, child),
		repo, parent, replace ? "true" : "false");
}

static json_t *dep_args(fixture *f, const char *repo, long number, long blocker)
{
	return args("{\"repo\":\"%s\",\"number\":%ld,\"blocker_repo\":\"%s\",\"blocker_number\":%ld,"
		"\"blocker_database_id\":%lld}", repo, number, repo, blocker,
		database_id(f, repo, blocker));
}

static void test_file_backend__a_missing_file_is_an_empty_state_and_reading_creates_nothing(
	void **state)
{
	fixture *f = *state;
	const char *repos[] = { "acme/widgets" };
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_state *st = NULL;
	struct stat sb;

	assert_string_equal(f->b->name, "file");
	assert_int_equal(f->b->read(&st, f->b, repos, 1, "acme", 1, &err), PMBOT_OK);
	assert_int_equal(st->n_issues, 0);
	assert_null(st->project);
	assert_int_equal(stat(f->path, &sb), -1);
	pmbot_state_free(st);
	pmbot_buf_free(&err);
}

static void test_file_backend__creates_the_file_and_its_directories_on_the_first_write(
	void **state)
{
	fixture *f = *state;
	pmbot_state *st;

	assert_int_equal(create(f, "acme/widgets", "First"), 1);
	st = file_state(f);
	assert_int_equal(st->n_issues, 1);
	assert_string_equal(st->issues[0].title, "First");
	assert_string_equal(st->issues[0].body, "b");
	assert_false(st->issues[0].closed);
	pmbot_state_free(st);
}

static void test_file_backend__numbers_issues_per_repository_and_ids_globally(void **state)
{
	fixture *f = *state;
	json_t *r;
	pmbot_state *st;

	r = perform_ok(f, "create_issue", args("{\"repo\":\"acme/widgets\",\"title\":\"A1\","
		"\"body\":\"\",\"labels\":[\"type:task\"]}"));
	assert_int_equal(json_integer_value(json_object_get(r, "number")), 1);
	assert_int_equal(json_integer_value(json_object_get(r, "database_id")), 1000001);
	/* 1000001 = 0x0F4241: base64url of the bytes 0f 42 41. */
	assert_string_equal(json_string_value(json_object_get(r, "node_id")), "I_D0JB");
	json_decref(r);
	assert_int_equal(create(f, "acme/widgets", "A2"), 2);
	assert_int_equal(create(f, "acme/gadgets", "B1"), 1);
	assert_int_equal(create(f, "acme/widgets", "A3"), 3);
	st = file_state(f);
	assert_int_equal(st->n_issues, 4);
	assert_int_equal(pmbot_state_issue(st, "acme/widgets#2")->database_id, 1000002);
	assert_string_equal(pmbot_state_issue(st, "acme/widgets#2")->node_id, "I_D0JC");
	assert_int_equal(pmbot_state_issue(st, "acme/gadgets#1")->database_id, 1000003);
	assert_int_equal(pmbot_state_issue(st, "acme/widgets#3")->database_id, 1000004);
	assert_int_equal(json_integer_value(json_object_get(st->extra, "next_database_id")),
		1000005);
	pmbot_state_free(st);
}

static void test_file_backend__continues_numbering_after_the_highest_number_and_id(void **state)
{
	fixture *f = *state;
	json_t *r;

	seed(f, "full.json");
	/* acme/widgets holds #2, #9 and #10; database ids go up to 1000010, the counter to 1000011. */
	r = perform_ok(f, "create_issue", args("{\"repo\":\"acme/widgets\",\"title\":\"New\","
		"\"body\":\"\",\"labels\":[]}"));
	assert_int_equal(json_integer_value(json_object_get(r, "number")), 11);
	assert_int_equal(json_integer_value(json_object_get(r, "database_id")), 1000011);
	json_decref(r);
	r = perform_ok(f, "create_issue", args("{\"repo\":\"acme/gadgets\",\"title\":\"New\","
		"\"body\":\"\",\"labels\":[]}"));
	assert_int_equal(json_integer_value(json_object_get(r, "number")), 2);
	assert_int_equal(json_integer_value(json_object_get(r, "database_id")), 1000012);
	json_decref(r);
}

static void test_file_backend__keeps_the_repository_spelling_of_the_file(void **state)
{
	fixture *f = *state;
	pmbot_state *st;

	create(f, "acme/widgets", "one");
	assert_int_equal(create(f, "ACME/Widgets", "two"), 2);
	st = file_state(f);
	assert_string_equal(st->issues[1].repo, "acme/widgets");
	pmbot_state_free(st);
}

static void test_file_backend__stamps_updated_at_strictly_increasing(void **state)
{
	fixture *f = *state;
	pmbot_state *st;
	long long a, b;

	create(f, "acme/widgets", "one");
	create(f, "acme/widgets", "two");
	perform_ok_quiet(f, "update_issue_title",
		args("{\"repo\":\"acme/widgets\",\"number\":1,\"title\":\"One\"}"));
	st = file_state(f);
	/* PMBOT_NOW is fixed, yet every change is later than the one before. */
	assert_string_equal(pmbot_state_issue(st, "acme/widgets#1")->updated_at,
		"2026-11-02T10:00:02Z");
	assert_string_equal(pmbot_state_issue(st, "acme/widgets#2")->updated_at,
		"2026-11-02T10:00:01Z");
	pmbot_state_free(st);
	setenv("PMBOT_NOW", "2030-01-01T00:00:00Z", 1);
	perform_ok_quiet(f, "update_issue_body",
		args("{\"repo\":\"acme/widgets\",\"number\":2,\"body\":\"x\"}"));
	st = file_state(f);
	assert_string_equal(pmbot_state_issue(st, "acme/widgets#2")->updated_at,
		"2030-01-01T00:00:00Z");
	pmbot_state_free(st);
	/* The real clock (here: before 2030) still never goes back. */
	unsetenv("PMBOT_NOW");
	perform_ok_quiet(f, "update_issue_body",
		args("{\"repo\":\"acme/widgets\",\"number\":1,\"body\":\"y\"}"));
	st = file_state(f);
	assert_int_equal(pmbot_datetime_parse(&a,
		pmbot_state_issue(st, "acme/widgets#1")->updated_at), PMBOT_OK);
	assert_int_equal(pmbot_datetime_parse(&b,
		pmbot_state_issue(st, "acme/widgets#2")->updated_at), PMBOT_OK);
	assert_true(a > b);
	pmbot_state_free(st);
	setenv("PMBOT_NOW", "yesterday", 1);
	perform_fails(f, PMBOT_ERROR, "update_issue_body",
		args("{\"repo\":\"acme/widgets\",\"number\":1,\"body\":\"z\"}"), "PMBOT_NOW");
}

static void test_file_backend__authors_issues_as_the_given_login(void **state)
{
	fixture *f = *state;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_backend *human = NULL;
	json_t *r = NULL, *a;
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_state *st;

	create(f, "acme/widgets", "by the bot");
	assert_int_equal(pmbot_file_backend_open(&human, f->path, "octocat", &diags), PMBOT_OK);
	a = args("{\"repo\":\"acme/widgets\",\"title\":\"by hand\",\"body\":\"\",\"labels\":[]}");
	assert_int_equal(human->perform(&r, human, PMBOT_OP_CREATE_ISSUE, a, &err), PMBOT_OK);
	json_decref(r);
	json_decref(a);
	st = file_state(f);
	assert_string_equal(st->issues[0].author, "github-actions[bot]");
	assert_true(st->issues[0].author_is_bot);
	assert_string_equal(st->issues[1].author, "octocat");
	assert_false(st->issues[1].author_is_bot);
	pmbot_state_free(st);
	human->free(human);
	pmbot_buf_free(&err);
	pmbot_diag_list_free(&diags);
}

/* A JSON string literal of `n` copies of `unit`, malloc'd. */
static char *repeat(const char *unit, size_t n)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t i;

	for (i = 0; i < n; i++)
		assert_int_equal(pmbot_buf_puts(&b, unit), 0);
	return pmbot_buf_detach(&b, NULL);
}

static void test_file_backend__enforces_title_and_body_sizes_in_characters(void **state)
{
	fixture *f = *state;
	char *t256 = repeat("\xc3\xa9", 256), *t257 = repeat("a", 257);
	char *b65536 = repeat("\xc3\xa9", 65536), *b65537 = repeat("a", 65537);
	pmbot_state *st;

	create(f, "acme/widgets", "one");
	perform_ok_quiet(f, "update_issue_title",
		args("{\"repo\":\"acme/widgets\",\"number\":1,\"title\":\"%s\"}", t256));
	refused(f, "update_issue_title",
		args("{\"repo\":\"acme/widgets\",\"number\":1,\"title\":\"%s\"}", t257),
		"257 characters; GitHub allows 256");
	refused(f, "update_issue_title",
		args("{\"repo\":\"acme/widgets\",\"number\":1,\"title\":\"\"}"), "must not be empty");
	refused(f, "create_issue", args("{\"repo\":\"acme/widgets\",\"title\":\"%s\",\"body\":\"\","
		"\"labels\":[]}", t257), "GitHub allows 256");
	perform_ok_quiet(f, "update_issue_body",
		args("{\"repo\":\"acme/widgets\",\"number\":1,\"body\":\"%s\"}", b65536));
	refused(f, "update_issue_body",
		args("{\"repo\":\"acme/widgets\",\"number\":1,\"body\":\"%s\"}", b65537),
		"65537 characters; GitHub allows 65536");
	refused(f, "create_issue", args("{\"repo\":\"acme/widgets\",\"title\":\"t\",\"body\":\"%s\","
		"\"labels\":[]}", b65537), "GitHub allows 65536");
	st = file_state(f);
	assert_int_equal(st->n_issues, 1);
	assert_string_equal(st->issues[0].title, t256);
	assert_string_equal(st->issues[0].body, b65536);
	pmbot_state_free(st);
	free(t256);
	free(t257);
	free(b65536);
	free(b65537);
}

static void test_file_backend__keeps_labels_sorted_and_unique(void **state)
{
	fixture *f = *state;
	char *long_label = repeat("x", 51), *many;
	pmbot_buf list = PMBOT_BUF_INIT;
	pmbot_state *st;
	int i;

	perform_ok_quiet(f, "create_issue", args("{\"repo\":\"acme/widgets\",\"title\":\"t\","
		"\"body\":\"\",\"labels\":[\"prio:P1\",\"area:ui\",\"prio:P1\"]}"));
	perform_ok_quiet(f, "add_labels",
		args("{\"repo\":\"acme/widgets\",\"number\":1,\"labels\":[\"type:task\",\"area:ui\"]}"));
	st = file_state(f);
	assert_int_equal(st->issues[0].n_labels, 3);
	assert_string_equal(st->issues[0].labels[0], "area:ui");
	assert_string_equal(st->issues[0].labels[1], "prio:P1");
	assert_string_equal(st->issues[0].labels[2], "type:task");
	pmbot_state_free(st);
	perform_ok_quiet(f, "remove_labels",
		args("{\"repo\":\"acme/widgets\",\"number\":1,\"labels\":[\"prio:P1\"]}"));
	st = file_state(f);
	assert_int_equal(st->issues[0].n_labels, 2);
	assert_string_equal(st->issues[0].labels[1], "type:task");
	pmbot_state_free(st);
	refused(f, "remove_labels",
		args("{\"repo\":\"acme/widgets\",\"number\":1,\"labels\":[\"type:task\",\"nope\"]}"),
		"no label `nope`");
	refused(f, "add_labels",
		args("{\"repo\":\"acme/widgets\",\"number\":1,\"labels\":[\"%s\"]}", long_label),
		"longer than 50");
	refused(f, "add_labels", args("{\"repo\":\"acme/widgets\",\"number\":1,\"labels\":[\"\"]}"),
		"non-empty");
	for (i = 0; i < 99; i++)
		assert_int_equal(pmbot_buf_printf(&list, "%s\"l%02d\"", i ? "," : "", i), 0);
	many = pmbot_buf_detach(&list, NULL);
	/* 2 labels and 99 more is one over GitHub's 100. */
	refused(f, "add_labels", args("{\"repo\":\"acme/widgets\",\"number\":1,\"labels\":[%s]}",
		many), "101 labels; GitHub allows 100");
	free(many);
	free(long_label);
}

static void test_file_backend__sets_a_parent_and_refuses_a_second_one_unless_replaced(
	void **state)
{
	fixture *f = *state;
	pmbot_state *st;

	create(f, "acme/widgets", "epic");
	create(f, "acme/widgets", "other epic");
	create(f, "acme/widgets", "feature");
	perform_ok_quiet(f, "set_parent", parent_args(f, "acme/widgets", 3, 1, 0));
	st = file_state(f);
	assert_string_equal(pmbot_state_issue(st, "acme/widgets#3")->parent, "acme/widgets#1");
	assert_string_equal(pmbot_state_issue(st, "acme/widgets#3")->updated_at,
		"2026-11-02T10:00:03Z");
	pmbot_state_free(st);
	refused(f, "set_parent", parent_args(f, "acme/widgets", 3, 2, 0), "already has a parent");
	refused(f, "set_parent", parent_args(f, "acme/widgets", 3, 1, 0),
		"already a sub-issue of acme/widgets#1");
	perform_ok_quiet(f, "set_parent", parent_args(f, "acme/widgets", 3, 2, 1));
	st = file_state(f);
	assert_string_equal(pmbot_state_issue(st, "acme/widgets#3")->parent, "acme/widgets#2");
	pmbot_state_free(st);
	refused(f, "set_parent", parent_args(f, "acme/widgets", 3, 3, 1), "its own parent");
	refused(f, "set_parent", args("{\"repo\":\"acme/widgets\",\"number\":3,\"database_id\":3,"
		"\"parent_repo\":\"acme/widgets\",\"parent_number\":1,\"replace\":true}"),
		"database_id 3 is not the id of acme/widgets#3");
	refused(f, "set_parent", args("{\"repo\":\"acme/widgets\",\"number\":3,"
		"\"database_id\":1000003,\"parent_repo\":\"acme/widgets\",\"parent_number\":9,"
		"\"replace\":true}"), "acme/widgets#9 does not exist");
	refused(f, "set_parent", args("{\"repo\":\"acme/widgets\",\"number\":3,"
		"\"database_id\":1000003,\"parent_repo\":\"acme/widgets\",\"parent_number\":1}"),
		"`replace` must be true or false");
}

static void test_file_backend__refuses_a_parent_cycle(void **state)
{
	fixture *f = *state;

	create(f, "acme/widgets", "a");
	create(f, "acme/widgets", "b");
	create(f, "acme/widgets", "c");
	perform_ok_quiet(f, "set_parent", parent_args(f, "acme/widgets", 2, 1, 0));
	perform_ok_quiet(f, "set_parent", parent_args(f, "acme/widgets", 3, 2, 0));
	refused(f, "set_parent", parent_args(f, "acme/widgets", 1, 3, 0), "cycle");
	refused(f, "set_parent", parent_args(f, "acme/widgets", 1, 2, 0), "cycle");
}

static void test_file_backend__refuses_the_101st_sub_issue(void **state)
{
	fixture *f = *state;
	long n;

	create(f, "acme/widgets", "parent");
	for (n = 2; n <= 102; n++)
		create(f, "acme/widgets", "child");
	for (n = 2; n <= 101; n++)
		perform_ok_quiet(f, "set_parent", parent_args(f, "acme/widgets", n, 1, 0));
	refused(f, "set_parent", parent_args(f, "acme/widgets", 102, 1, 0),
		"already has 100 sub-issues; GitHub allows 100");
	/* Moving one of the hundred within the same parent is not a 101st. */
	perform_ok_quiet(f, "set_parent", parent_args(f, "acme/widgets", 101, 1, 1));
}

static void test_file_backend__refuses_a_ninth_level(void **state)
{
	fixture *f = *state;
	long n;

	for (n = 1; n <= 10; n++)
		create(f, "acme/widgets", "level");
	/* 1 <- 2 <- ... <- 8: eight levels. */
	for (n = 2; n <= 8; n++)
		perform_ok_quiet(f, "set_parent", parent_args(f, "acme/widgets", n, n - 1, 0));
	refused(f, "set_parent", parent_args(f, "acme/widgets", 9, 8, 0),
		"9 levels deep; GitHub allows 8");
	/* A two-level subtree under level 7 is as deep. */
	perform_ok_quiet(f, "set_parent", parent_args(f, "acme/widgets", 10, 9, 0));
	refused(f, "set_parent", parent_args(f, "acme/widgets", 9, 7, 0), "9 levels deep");
	perform_ok_quiet(f, "set_parent", parent_args(f, "acme/widgets", 9, 6, 0));
}

static void test_file_backend__adds_and_removes_dependencies_without_duplicates(void **state)
{
	fixture *f = *state;
	pmbot_state *st;

	create(f, "acme/widgets", "a");
	create(f, "acme/widgets", "b");
	create(f, "acme/gadgets", "c");
	perform_ok_quiet(f, "add_dependency", dep_args(f, "acme/widgets", 1, 2));
	perform_ok_quiet(f, "add_dependency", args("{\"repo\":\"acme/widgets\",\"number\":1,"
		"\"blocker_repo\":\"ACME/gadgets\",\"blocker_number\":1,"
		"\"blocker_database_id\":1000003}"));
	st = file_state(f);
	assert_int_equal(st->issues[1].n_blocked_by, 2);
	assert_string_equal(st->issues[1].blocked_by[0], "acme/gadgets#1");
	assert_string_equal(st->issues[1].blocked_by[1], "acme/widgets#2");
	pmbot_state_free(st);
	refused(f, "add_dependency", dep_args(f, "acme/widgets", 1, 2), "already blocked by");
	refused(f, "add_dependency", dep_args(f, "acme/widgets", 1, 1), "cannot block itself");
	refused(f, "add_dependency", args("{\"repo\":\"acme/widgets\",\"number\":2,"
		"\"blocker_repo\":\"acme/widgets\",\"blocker_number\":1,"
		"\"blocker_database_id\":1000002}"), "not the id of acme/widgets#1");
	refused(f, "add_dependency", args("{\"repo\":\"acme/widgets\",\"number\":2,"
		"\"blocker_repo\":\"acme/widgets\",\"blocker_number\":7,"
		"\"blocker_database_id\":1000002}"), "acme/widgets#7 does not exist");
	perform_ok_quiet(f, "remove_dependency", dep_args(f, "acme/widgets", 1, 2));
	refused(f, "remove_dependency", dep_args(f, "acme/widgets", 1, 2), "is not blocked by");
	st = file_state(f);
	assert_int_equal(st->issues[1].n_blocked_by, 1);
	assert_string_equal(st->issues[1].blocked_by[0], "acme/gadgets#1");
	pmbot_state_free(st);
}

static void test_file_backend__enforces_fifty_dependencies_each_way(void **state)
{
	fixture *f = *state;
	long n;

	for (n = 1; n <= 53; n++)
		create(f, "acme/widgets", "issue");
	/* #1 is blocked by #2..#51; #52 is blocked by nothing yet. */
	for (n = 2; n <= 51; n++)
		perform_ok_quiet(f, "add_dependency", dep_args(f, "acme/widgets", 1, n));
	refused(f, "add_dependency", dep_args(f, "acme/widgets", 1, 52),
		"blocked by 50 issues; GitHub allows 50");
	/* #53 blocks #2..#51. */
	for (n = 2; n <= 51; n++)
		perform_ok_quiet(f, "add_dependency", dep_args(f, "acme/widgets", n, 53));
	refused(f, "add_dependency", dep_args(f, "acme/widgets", 52, 53),
		"already blocks 50 issues; GitHub allows 50");
}

static void test_file_backend__adds_issues_to_the_project_once(void **state)
{
	fixture *f = *state;
	json_t *r;
	const char *item;
	pmbot_state *st;

	create(f, "acme/widgets", "not yet");
	refused(f, "add_to_project", args("{\"repo\":\"acme/widgets\",\"number\":1,"
		"\"node_id\":\"I_D0JB\"}"), "no project");
	seed(f, "project-only.json");
	create(f, "acme/widgets", "a");
	create(f, "acme/widgets", "b");
	r = perform_ok(f, "add_to_project", args("{\"repo\":\"acme/widgets\",\"number\":2,"
		"\"node_id\":\"I_D0JC\"}"));
	item = json_string_value(json_object_get(r, "item_id"));
	/* Items share the id counter: 1000003 = 0x0F4243. */
	assert_string_equal(item, "PVTI_D0JD");
	json_decref(r);
	r = perform_ok(f, "add_to_project", args("{\"repo\":\"acme/widgets\",\"number\":2,"
		"\"node_id\":\"I_D0JC\"}"));
	assert_string_equal(json_string_value(json_object_get(r, "item_id")), "PVTI_D0JD");
	json_decref(r);
	perform_ok_quiet(f, "add_to_project", args("{\"repo\":\"acme/widgets\",\"number\":1,"
		"\"node_id\":\"I_D0JB\"}"));
	refused(f, "add_to_project", args("{\"repo\":\"acme/widgets\",\"number\":1,"
		"\"node_id\":\"I_nope\"}"), "not the id of acme/widgets#1");
	st = file_state(f);
	assert_int_equal(st->project->n_items, 2);
	assert_string_equal(st->project->items[0].issue, "acme/widgets#1");
	assert_string_equal(pmbot_state_item(st, "acme/widgets#2")->id, "PVTI_D0JD");
	/* The next issue skips the id the item took. */
	pmbot_state_free(st);
	r = perform_ok(f, "create_issue", args("{\"repo\":\"acme/widgets\",\"title\":\"c\","
		"\"body\":\"\",\"labels\":[]}"));
	assert_int_equal(json_integer_value(json_object_get(r, "database_id")), 1000005);
	json_decref(r);
}

static json_t *field_args(const char *field, const char *field_id, const char *value,
	const char *option_id)
{
	return args("{\"repo\":\"acme/widgets\",\"number\":1,\"item_id\":\"PVTI_D0JC\","
		"\"field\":\"%s\",\"field_id\":\"%s\",\"value\":%s,\"option_id\":%s}", field,
		field_id, value, option_id);
}

static void test_file_backend__sets_project_fields_by_type(void **state)
{
	fixture *f = *state;
	const pmbot_pitem *it;
	pmbot_state *st;

	seed(f, "project-only.json");
	create(f, "acme/widgets", "a");
	perform_ok_quiet(f, "add_to_project", args("{\"repo\":\"acme/widgets\",\"number\":1,"
		"\"node_id\":\"I_D0JB\"}"));
	perform_ok_quiet(f, "set_project_field",
		field_args("status", "PVTSSF_status", "\"Done\"", "\"o_done\""));
	perform_ok_quiet(f, "set_project_field",
		field_args("Estimate (hrs)", "PVTF_est", "4.5", "null"));
	perform_ok_quiet(f, "set_project_field", field_args("Notes", "PVTF_notes", "\"hi\"", "null"));
	perform_ok_quiet(f, "set_project_field", field_args("Due", "PVTF_due", "\"2026-12-31\"",
		"null"));
	st = file_state(f);
	it = pmbot_state_item(st, "acme/widgets#1");
	assert_string_equal(json_string_value(json_object_get(it->values, "Status")), "Done");
	assert_true(json_real_value(json_object_get(it->values, "Estimate (hrs)")) == 4.5);
	assert_string_equal(json_string_value(json_object_get(it->values, "Notes")), "hi");
	assert_string_equal(json_string_value(json_object_get(it->values, "Due")), "2026-12-31");
	pmbot_state_free(st);
	refused(f, "set_project_field", field_args("Status", "PVTSSF_status", "\"Doing\"",
		"\"o_x\""), "no option `Doing`; its options are `Todo`, `Done`");
	refused(f, "set_project_field", field_args("Status", "PVTSSF_status", "\"Todo\"",
		"\"o_done\""), "option_id must be `o_todo`");
	refused(f, "set_project_field", field_args("Estimate (hrs)", "PVTF_est", "\"four\"",
		"null"), "takes a number");
	refused(f, "set_project_field", field_args("Due", "PVTF_due", "\"2026-02-30\"", "null"),
		"takes a date");
	refused(f, "set_project_field", field_args("Notes", "PVTF_notes", "3", "null"),
		"takes a string");
	refused(f, "set_project_field", field_args("Size", "PVTF_size", "\"M\"", "null"),
		"no field `Size`");
	refused(f, "set_project_field", field_args("Notes", "PVTF_est", "\"x\"", "null"),
		"field_id `PVTF_est` is not the id of field `Notes`");
	refused(f, "set_project_field", args("{\"repo\":\"acme/widgets\",\"number\":1,"
		"\"item_id\":\"PVTI_other\",\"field\":\"Notes\",\"field_id\":\"PVTF_notes\","
		"\"value\":\"x\"}"), "not the project item of acme/widgets#1");
	/* null clears a value. */
	perform_ok_quiet(f, "set_project_field", field_args("Notes", "PVTF_notes", "null", "null"));
	st = file_state(f);
	assert_null(json_object_get(pmbot_state_item(st, "acme/widgets#1")->values, "Notes"));
	pmbot_state_free(st);
}

/* Reopen the backend on a state file of `text`. */
static void seed_text(fixture *f, const char *text)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf dir = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_buf_printf(&dir, "%s/.pm-bot", f->dir), 0);
	assert_int_equal(pmbot_fs_mkdirs(dir.buf, 0755), 0);
	assert_int_equal(pmbot_fs_write_atomic(f->path, text, strlen(text)), 0);
	f->b->free(f->b);
	assert_int_equal(pmbot_file_backend_open(&f->b, f->path, NULL, &diags), PMBOT_OK);
	pmbot_buf_free(&dir);
	pmbot_diag_list_free(&diags);
}

static void test_file_backend__sets_only_an_issue_type_the_repository_offers(void **state)
{
	fixture *f = *state;
	pmbot_state *st;
	char *before, *after;

	seed_text(f, "{\"schema_version\":\"state/v1\",\"repositories\":[],\"extra\":"
		"{\"issue_types\":{\"Acme/Widgets\":[\"Bug\",\"Task\"]}}}");
	create(f, "acme/widgets", "a");
	create(f, "acme/other", "b");
	st = file_state(f);
	assert_null(pmbot_state_issue(st, "acme/widgets#1")->issue_type);
	pmbot_state_free(st);
	/* Named in any case, stored as the repository spells it. */
	perform_ok_quiet(f, "set_issue_type", args("{\"repo\":\"acme/widgets\",\"number\":1,"
		"\"node_id\":\"I_1\",\"issue_type\":\"task\"}"));
	before = file_bytes(f);
	assert_non_null(strstr(before, "\"issue_type\":\"Task\""));
	/* Already so: nothing moves, not even updated_at. */
	perform_ok_quiet(f, "set_issue_type", args("{\"repo\":\"acme/widgets\",\"number\":1,"
		"\"issue_type\":\"TASK\"}"));
	after = file_bytes(f);
	assert_string_equal(before, after);
	free(before);
	free(after);
	perform_ok_quiet(f, "set_issue_type", args("{\"repo\":\"acme/widgets\",\"number\":1,"
		"\"issue_type\":\"Bug\"}"));
	st = file_state(f);
	assert_string_equal(pmbot_state_issue(st, "acme/widgets#1")->issue_type, "Bug");
	assert_null(pmbot_state_issue(st, "acme/other#1")->issue_type);
	pmbot_state_free(st);
	refused(f, "set_issue_type", args("{\"repo\":\"acme/widgets\",\"number\":1,"
		"\"issue_type\":\"Epic\"}"), "acme/widgets has no issue type `Epic`");
	refused(f, "set_issue_type", args("{\"repo\":\"acme/other\",\"number\":1,"
		"\"issue_type\":\"Bug\"}"), "acme/other has no issue type `Bug`");
	refused(f, "set_issue_type", args("{\"repo\":\"acme/widgets\",\"number\":1}"),
		"`issue_type` must be a string");
	refused(f, "set_issue_type", args("{\"repo\":\"acme/widgets\",\"number\":9,"
		"\"issue_type\":\"Bug\"}"), "acme/widgets#9 does not exist");
}

static void test_file_backend__a_create_takes_the_issue_type_when_the_repository_offers_it(
	void **state)
{
	fixture *f = *state;
	pmbot_state *st;

	seed_text(f, "{\"schema_version\":\"state/v1\",\"repositories\":[],\"extra\":"
		"{\"issue_types\":{\"acme/widgets\":[\"Task\"]}}}");
	perform_ok_quiet(f, "create_issue", args("{\"repo\":\"acme/widgets\",\"title\":\"a\","
		"\"body\":\"\",\"labels\":[],\"issue_type\":\"task\"}"));
	/* A type the repository does not offer is no error: the issue has none, as on GitHub. */
	perform_ok_quiet(f, "create_issue", args("{\"repo\":\"acme/widgets\",\"title\":\"b\","
		"\"body\":\"\",\"labels\":[],\"issue_type\":\"spike\"}"));
	perform_ok_quiet(f, "create_issue", args("{\"repo\":\"acme/other\",\"title\":\"c\","
		"\"body\":\"\",\"labels\":[],\"issue_type\":\"task\"}"));
	st = file_state(f);
	assert_string_equal(pmbot_state_issue(st, "acme/widgets#1")->issue_type, "Task");
	assert_null(pmbot_state_issue(st, "acme/widgets#2")->issue_type);
	assert_null(pmbot_state_issue(st, "acme/other#1")->issue_type);
	pmbot_state_free(st);
}

static void test_file_backend__refuses_unknown_operations_and_malformed_args(void **state)
{
	fixture *f = *state;

	create(f, "acme/widgets", "a");
	refused(f, "close_issue", args("{\"repo\":\"acme/widgets\",\"number\":1}"),
		"(unknown): unknown operation");
	perform_fails(f, PMBOT_EINVALID, "create_issue", json_array(), "must be an object");
	refused(f, "create_issue", args("{\"repo\":\"acme/widgets\",\"title\":\"t\",\"body\":\"\"}"),
		"`labels` must be an array");
	refused(f, "create_issue", args("{\"repo\":\"acme\",\"title\":\"t\",\"body\":\"\","
		"\"labels\":[]}"), "not a repository");
	refused(f, "update_issue_title", args("{\"repo\":\"acme/widgets\",\"number\":\"1\","
		"\"title\":\"t\"}"), "`number` must be an integer");
	refused(f, "update_issue_title", args("{\"repo\":\"acme/widgets\",\"number\":5,"
		"\"title\":\"t\"}"), "acme/widgets#5 does not exist");
	refused(f, "update_issue_body", args("{\"repo\":\"acme/widgets\",\"number\":1}"),
		"`body` must be a string");
}

static void test_file_backend__a_refused_call_creates_no_file(void **state)
{
	fixture *f = *state;

	refused(f, "update_issue_title", args("{\"repo\":\"acme/widgets\",\"number\":1,"
		"\"title\":\"t\"}"), "does not exist");
	assert_null(file_bytes(f));
}

static void test_file_backend__read_filters_repositories_and_the_project(void **state)
{
	fixture *f = *state;
	const char *gadgets[] = { "ACME/gadgets" };
	const char *both[] = { "acme/widgets", "nobody/nothing", "acme/gadgets", "Acme/Widgets" };
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_state *st = NULL;

	seed(f, "full.json");
	assert_int_equal(f->b->read(&st, f->b, gadgets, 1, NULL, 0, &err), PMBOT_OK);
	assert_int_equal(st->n_issues, 1);
	assert_string_equal(st->issues[0].title, "Gadget epic");
	assert_null(st->project);
	pmbot_state_free(st);
	assert_int_equal(f->b->read(&st, f->b, both, 4, "ACME", 1, &err), PMBOT_OK);
	assert_int_equal(st->n_issues, 4);
	assert_non_null(pmbot_state_issue(st, "acme/widgets#10"));
	assert_non_null(st->project);
	assert_int_equal(st->project->n_items, 3);
	assert_string_equal(pmbot_state_field(st, "priority")->id, "PVTF_prio");
	pmbot_state_free(st);
	assert_int_equal(f->b->read(&st, f->b, both, 0, "acme", 2, &err), PMBOT_OK);
	assert_int_equal(st->n_issues, 0);
	assert_null(st->project);
	pmbot_state_free(st);
	assert_int_equal(f->b->read(&st, f->b, NULL, 0, "someone", 1, &err), PMBOT_OK);
	assert_int_equal(st->n_issues, 4);
	assert_null(st->project);
	pmbot_state_free(st);
	assert_int_equal(err.len, 0);
	pmbot_buf_free(&err);
}

/* The canonical text of `st`, malloc'd. */
static char *state_text(const pmbot_state *st)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_state_canonical(&b, st), 0);
	return pmbot_buf_detach(&b, NULL);
}

/*
 * A read that would copy every issue and the project hands out the cache
 * itself; the backend then changes a copy, never what a reader holds, and
 * each holder frees in any order.
 */
static void test_file_backend__a_whole_read_shares_the_cache_and_a_write_leaves_it_alone(
	void **state)
{
	fixture *f = *state;
	const char *gadgets[] = { "acme/gadgets" };
	const char *both[] = { "acme/gadgets", "ACME/widgets" };
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_state *a = NULL, *b = NULL, *c = NULL, *part = NULL;
	char *before, *after;

	seed(f, "full.json");
	assert_int_equal(f->b->read(&a, f->b, NULL, 0, "acme", 1, &err), PMBOT_OK);
	assert_true(pmbot_state_read_only(a));
	assert_int_equal(f->b->read(&b, f->b, both, 2, "Acme", 1, &err), PMBOT_OK);
	assert_ptr_equal(a, b);
	/* Not all of it: a copy, as before. */
	assert_int_equal(f->b->read(&part, f->b, gadgets, 1, "acme", 1, &err), PMBOT_OK);
	assert_false(pmbot_state_read_only(part));
	assert_int_equal(part->n_issues, 1);
	pmbot_state_free(part);
	assert_int_equal(f->b->read(&part, f->b, NULL, 0, "acme", 2, &err), PMBOT_OK);
	assert_false(pmbot_state_read_only(part));
	assert_null(part->project);
	pmbot_state_free(part);
	before = state_text(a);
	assert_int_equal(create(f, "acme/widgets", "New"), 11);
	after = state_text(a);
	assert_string_equal(before, after);
	free(after);
	pmbot_state_free(b);
	assert_int_equal(f->b->read(&c, f->b, NULL, 0, "acme", 1, &err), PMBOT_OK);
	assert_ptr_not_equal(a, c);
	assert_int_equal(c->n_issues, a->n_issues + 1);
	assert_non_null(pmbot_state_issue(c, "acme/widgets#11"));
	assert_null(pmbot_state_issue(a, "acme/widgets#11"));
	/* The backend goes first; what the readers hold stays theirs. */
	f->b->free(f->b);
	f->b = NULL;
	after = state_text(a);
	assert_string_equal(before, after);
	assert_string_equal(pmbot_state_issue(c, "acme/widgets#11")->title, "New");
	pmbot_state_free(a);
	pmbot_state_free(c);
	assert_int_equal(err.len, 0);
	free(before);
	free(after);
	pmbot_buf_free(&err);
}

static void test_file_backend__read_sees_what_another_writer_did(void **state)
{
	fixture *f = *state;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *repos[] = { "acme/widgets" };
	pmbot_backend *other = NULL;
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_state *st = NULL;
	json_t *r = NULL, *a;

	create(f, "acme/widgets", "mine");
	assert_int_equal(pmbot_file_backend_open(&other, f->path, NULL, &diags), PMBOT_OK);
	a = args("{\"repo\":\"acme/widgets\",\"title\":\"theirs\",\"body\":\"\",\"labels\":[]}");
	assert_int_equal(other->perform(&r, other, PMBOT_OP_CREATE_ISSUE, a, &err), PMBOT_OK);
	assert_int_equal(json_integer_value(json_object_get(r, "number")), 2);
	json_decref(r);
	json_decref(a);
	assert_int_equal(f->b->read(&st, f->b, repos, 1, NULL, 0, &err), PMBOT_OK);
	assert_int_equal(st->n_issues, 2);
	assert_string_equal(st->issues[1].title, "theirs");
	pmbot_state_free(st);
	/* The next write builds on the other writer's file, not on a stale copy. */
	assert_int_equal(create(f, "acme/widgets", "mine again"), 3);
	st = file_state(f);
	assert_string_equal(st->issues[1].title, "theirs");
	pmbot_state_free(st);
	other->free(other);
	pmbot_buf_free(&err);
	pmbot_diag_list_free(&diags);
}

/*
 * A file is read whole at any size: the buffer is sized from the file
 * once, and a file read to its last byte (or one that grew since) still
 * ends with a read of nothing. Leading blanks make the sizes, so a lost
 * last byte (the closing brace) fails the parse.
 */
static void test_file_backend__a_large_file_is_read_whole_at_any_size(void **state)
{
	static const size_t sizes[] = { 65535, 65536, 65537, 131071, 131072, 131073, 300001 };
	fixture *f = *state;
	pmbot_buf json = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT, err = PMBOT_BUF_INIT;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;
	char *want, *got;
	size_t i;

	seed(f, "full.json");
	assert_int_equal(f->b->read(&st, f->b, NULL, 0, "acme", 1, &err), PMBOT_OK);
	want = state_text(st);
	pmbot_state_free(st);
	assert_int_equal(pmbot_fs_read(&json, "tests/fixtures/states/full.json"), 0);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		pmbot_buf_clear(&text);
		while (text.len < sizes[i] - json.len)
			assert_int_equal(pmbot_buf_putc(&text, ' '), 0);
		assert_int_equal(pmbot_buf_put(&text, json.buf, json.len), 0);
		assert_int_equal(text.len, sizes[i]);
		assert_int_equal(pmbot_fs_write_atomic(f->path, text.buf, text.len), 0);
		f->b->free(f->b);
		assert_int_equal(pmbot_file_backend_open(&f->b, f->path, NULL, &diags), PMBOT_OK);
		assert_int_equal(diags.count, 0);
		assert_int_equal(f->b->read(&st, f->b, NULL, 0, "acme", 1, &err), PMBOT_OK);
		got = state_text(st);
		assert_string_equal(got, want);
		free(got);
		pmbot_state_free(st);
	}
	assert_int_equal(err.len, 0);
	free(want);
	pmbot_buf_free(&json);
	pmbot_buf_free(&text);
	pmbot_buf_free(&err);
	pmbot_diag_list_free(&diags);
}

static void test_file_backend__open_reports_an_invalid_file_with_diagnostics(void **state)
{
	fixture *f = *state;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_backend *b = (pmbot_backend *)&b;

	seed(f, "project-only.json");
	assert_int_equal(pmbot_fs_write_atomic(f->path, "{\"schema_version\":\"state/v9\"}", 29), 0);
	assert_int_equal(pmbot_file_backend_open(&b, f->path, NULL, &diags), PMBOT_EINVALID);
	assert_null(b);
	assert_non_null(pmbot_diag_list_find(&diags, "STATE_VERSION"));
	assert_string_equal(diags.items[0].file, f->path);
	pmbot_diag_list_free(&diags);
}

static void test_file_backend__open_reports_an_unreadable_file_as_state_io(void **state)
{
	fixture *f = *state;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_backend *b = (pmbot_backend *)&b;

	/* A directory where the file should be: it opens, but cannot be read. */
	assert_int_equal(pmbot_fs_mkdirs(f->path, 0755), 0);
	assert_int_equal(pmbot_file_backend_open(&b, f->path, NULL, &diags), PMBOT_ERROR);
	assert_null(b);
	assert_non_null(pmbot_diag_list_find(&diags, "STATE_IO"));
	assert_non_null(strstr(diags.items[0].message, "cannot read"));
	pmbot_diag_list_free(&diags);
}

static void test_file_backend__a_file_broken_after_open_fails_the_call_and_is_left_alone(
	void **state)
{
	fixture *f = *state;
	static const char broken[] = "{\"schema_version\":\"state/v1\",\"repositories\":[";
	const char *repos[] = { "acme/widgets" };
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_state *st = (pmbot_state *)&st;
	char *after;

	create(f, "acme/widgets", "a");
	assert_int_equal(pmbot_fs_write_atomic(f->path, broken, sizeof(broken) - 1), 0);
	assert_int_equal(f->b->read(&st, f->b, repos, 1, NULL, 0, &err), PMBOT_EINVALID);
	assert_null(st);
	assert_non_null(strstr(err.buf, "STATE_PARSE"));
	perform_fails(f, PMBOT_EINVALID, "create_issue", args("{\"repo\":\"acme/widgets\","
		"\"title\":\"b\",\"body\":\"\",\"labels\":[]}"), "STATE_PARSE");
	after = file_bytes(f);
	assert_string_equal(after, broken);
	free(after);
	pmbot_buf_free(&err);
}

/*
 * A child creates issues as fast as it can and is killed with SIGKILL at
 * some point; whatever the point, the file is a whole state with issues
 * 1..N, and the next writer continues at N+1. Done three times in a row.
 */
static void test_file_backend__the_file_is_whole_after_kill_9(void **state)
{
	fixture *f = *state;
	long seen = 0;
	int round;

	for (round = 0; round < 3; round++) {
		pmbot_state *st;
		long target = seen + 5 + round * 7, i;
		int polls, status;
		pid_t pid;

		fflush(NULL);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
			pmbot_buf err = PMBOT_BUF_INIT;
			pmbot_backend *b = NULL;
			json_t *a = json_pack("{s:s,s:s,s:s,s:[s]}", "repo", "acme/widgets", "title",
				"bulk", "body", "body text", "labels", "type:task");

			if (pmbot_file_backend_open(&b, f->path, NULL, &diags) < 0)
				_exit(2);
			for (;;) {
				json_t *r = NULL;

				if (b->perform(&r, b, PMBOT_OP_CREATE_ISSUE, a, &err) < 0)
					_exit(3);
				json_decref(r);
			}
		}
		/* Wait (without timing anything) until the child has gone past `target`. */
		for (polls = 0; polls < 600000; polls++) {
			char *text = file_bytes(f);

			if (text) {
				pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
				pmbot_state *now = NULL;

				if (pmbot_state_parse(&now, "s", text, strlen(text), &diags) == PMBOT_OK &&
				    (long)now->n_issues >= target) {
					pmbot_state_free(now);
					pmbot_diag_list_free(&diags);
					free(text);
					break;
				}
				pmbot_state_free(now);
				pmbot_diag_list_free(&diags);
			}
			free(text);
			assert_int_equal(waitpid(pid, &status, WNOHANG), 0);
			usleep(100);
		}
		assert_int_equal(kill(pid, SIGKILL), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));
		st = file_state(f);
		assert_true((long)st->n_issues >= target);
		for (i = 0; i < (long)st->n_issues; i++)
			assert_int_equal(st->issues[i].number, i + 1);
		seen = (long)st->n_issues;
		pmbot_state_free(st);
		assert_int_equal(create(f, "acme/widgets", "after the kill"), seen + 1);
		seen++;
	}
}

/* Perform in a held group: expect `want`; returns the result (NULL unless PMBOT_OK). */
static json_t *held(fixture *f, int want, const char *op, json_t *a)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	json_t *result = NULL;
	int rc = f->b->perform(&result, f->b, op_of(op), a, &err);

	if (rc != want)
		fail_msg("%s: want %d, got %d (%s)", op, want, rc, err.buf);
	json_decref(a);
	pmbot_buf_free(&err);
	return result;
}

static void test_file_backend__a_held_group_is_written_once_at_commit(void **state)
{
	fixture *f = *state;
	const char *repos[] = { "acme/widgets" };
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_state *st = NULL;
	char *before;
	long n;

	create(f, "acme/widgets", "on disk");
	before = file_bytes(f);
	assert_int_equal(f->b->hold(f->b, &err), PMBOT_OK);
	for (n = 0; n < 3; n++)
		json_decref(held(f, PMBOT_OK, "create_issue", args("{\"repo\":\"acme/widgets\","
			"\"title\":\"held\",\"body\":\"b\",\"labels\":[]}")));
	/* A refusal changes nothing and the group goes on. */
	held(f, PMBOT_EINVALID, "create_issue", args("{\"repo\":\"acme/widgets\",\"title\":\"\","
		"\"body\":\"b\",\"labels\":[]}"));
	json_decref(held(f, PMBOT_OK, "update_issue_title", args("{\"repo\":\"acme/widgets\","
		"\"number\":4,\"title\":\"held and renamed\"}")));
	/* Nothing on disk yet; a read sees the group. */
	{
		char *now = file_bytes(f);

		assert_string_equal(now, before);
		free(now);
	}
	assert_int_equal(f->b->read(&st, f->b, repos, 1, NULL, 0, &err), PMBOT_OK);
	assert_int_equal(st->n_issues, 4);
	pmbot_state_free(st);
	assert_int_equal(f->b->commit(f->b, &err), PMBOT_OK);
	assert_int_equal(err.len, 0);
	st = file_state(f);
	assert_int_equal(st->n_issues, 4);
	assert_string_equal(st->issues[3].title, "held and renamed");
	/* Stamps as without the group: one second apart, strictly increasing. */
	assert_string_equal(st->issues[3].updated_at, "2026-11-02T10:00:04Z");
	pmbot_state_free(st);
	/* After commit, operations are written one by one again. */
	assert_int_equal(create(f, "acme/widgets", "after"), 5);
	free(before);
	pmbot_buf_free(&err);
}

static void test_file_backend__a_group_not_committed_writes_nothing(void **state)
{
	fixture *f = *state;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf err = PMBOT_BUF_INIT;

	assert_int_equal(f->b->hold(f->b, &err), PMBOT_OK);
	json_decref(held(f, PMBOT_OK, "create_issue", args("{\"repo\":\"acme/widgets\","
		"\"title\":\"lost\",\"body\":\"b\",\"labels\":[]}")));
	f->b->free(f->b);
	f->b = NULL;
	assert_null(file_bytes(f));
	/* The lock went with it: another backend writes. */
	assert_int_equal(pmbot_file_backend_open(&f->b, f->path, NULL, &diags), PMBOT_OK);
	assert_int_equal(create(f, "acme/widgets", "kept"), 1);
	pmbot_buf_free(&err);
	pmbot_diag_list_free(&diags);
}

static void test_file_backend__commit_leaves_a_file_a_person_changed_alone(void **state)
{
	fixture *f = *state;
	pmbot_buf err = PMBOT_BUF_INIT;
	char *theirs, *after;

	create(f, "acme/widgets", "one");
	assert_int_equal(f->b->hold(f->b, &err), PMBOT_OK);
	json_decref(held(f, PMBOT_OK, "create_issue", args("{\"repo\":\"acme/widgets\","
		"\"title\":\"ours\",\"body\":\"b\",\"labels\":[]}")));
	/* An edit by hand (no lock): the same state, re-indented. */
	theirs = file_bytes(f);
	{
		json_t *j = json_loads(theirs, 0, NULL);

		free(theirs);
		theirs = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
		json_decref(j);
	}
	assert_int_equal(pmbot_fs_write_atomic(f->path, theirs, strlen(theirs)), 0);
	assert_int_equal(f->b->commit(f->b, &err), PMBOT_ERROR);
	assert_non_null(strstr(err.buf, "changed while pm-bot held its lock"));
	after = file_bytes(f);
	assert_string_equal(after, theirs);
	free(after);
	free(theirs);
	pmbot_buf_free(&err);
}

static void test_file_backend__github_limits_hold_inside_a_group(void **state)
{
	fixture *f = *state;
	pmbot_buf err = PMBOT_BUF_INIT;
	long n;

	for (n = 1; n <= 102; n++)
		create(f, "acme/widgets", "issue");
	assert_int_equal(f->b->hold(f->b, &err), PMBOT_OK);
	for (n = 2; n <= 101; n++)
		json_decref(held(f, PMBOT_OK, "set_parent", parent_args(f, "acme/widgets", n, 1, 0)));
	held(f, PMBOT_EINVALID, "set_parent", parent_args(f, "acme/widgets", 102, 1, 0));
	/* Moving one of the hundred within the group is not a 101st; a cycle is still one. */
	json_decref(held(f, PMBOT_OK, "set_parent", parent_args(f, "acme/widgets", 101, 1, 1)));
	json_decref(held(f, PMBOT_OK, "set_parent", parent_args(f, "acme/widgets", 101, 2, 1)));
	held(f, PMBOT_EINVALID, "set_parent", parent_args(f, "acme/widgets", 2, 101, 1));
	/* A create in the group moves nothing the tree checks rely on. */
	json_decref(held(f, PMBOT_OK, "create_issue", args("{\"repo\":\"acme/widgets\","
		"\"title\":\"late\",\"body\":\"b\",\"labels\":[]}")));
	json_decref(held(f, PMBOT_OK, "set_parent", args("{\"repo\":\"acme/widgets\","
		"\"number\":103,\"database_id\":1000103,\"parent_repo\":\"acme/widgets\","
		"\"parent_number\":101,\"replace\":false}")));
	assert_int_equal(f->b->commit(f->b, &err), PMBOT_OK);
	{
		pmbot_state *st = file_state(f);

		assert_string_equal(pmbot_state_issue(st, "acme/widgets#101")->parent, "acme/widgets#2");
		assert_string_equal(pmbot_state_issue(st, "acme/widgets#103")->parent,
			"acme/widgets#101");
		assert_null(pmbot_state_issue(st, "acme/widgets#102")->parent);
		pmbot_state_free(st);
	}
	pmbot_buf_free(&err);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_file_backend__a_missing_file_is_an_empty_state_and_reading_creates_nothing),
		T(test_file_backend__creates_the_file_and_its_directories_on_the_first_write),
		T(test_file_backend__numbers_issues_per_repository_and_ids_globally),
		T(test_file_backend__continues_numbering_after_the_highest_number_and_id),
		T(test_file_backend__keeps_the_repository_spelling_of_the_file),
		T(test_file_backend__stamps_updated_at_strictly_increasing),
		T(test_file_backend__authors_issues_as_the_given_login),
		T(test_file_backend__enforces_title_and_body_sizes_in_characters),
		T(test_file_backend__keeps_labels_sorted_and_unique),
		T(test_file_backend__sets_a_parent_and_refuses_a_second_one_unless_replaced),
		T(test_file_backend__refuses_a_parent_cycle),
		T(test_file_backend__refuses_the_101st_sub_issue),
		T(test_file_backend__refuses_a_ninth_level),
		T(test_file_backend__adds_and_removes_dependencies_without_duplicates),
		T(test_file_backend__enforces_fifty_dependencies_each_way),
		T(test_file_backend__adds_issues_to_the_project_once),
		T(test_file_backend__sets_project_fields_by_type),
		T(test_file_backend__a_create_takes_the_issue_type_when_the_repository_offers_it),
		T(test_file_backend__sets_only_an_issue_type_the_repository_offers),
		T(test_file_backend__refuses_unknown_operations_and_malformed_args),
		T(test_file_backend__a_refused_call_creates_no_file),
		T(test_file_backend__read_filters_repositories_and_the_project),
		T(test_file_backend__a_whole_read_shares_the_cache_and_a_write_leaves_it_alone),
		T(test_file_backend__read_sees_what_another_writer_did),
		T(test_file_backend__a_large_file_is_read_whole_at_any_size),
	T(test_file_backend__open_reports_an_invalid_file_with_diagnostics),
		T(test_file_backend__open_reports_an_unreadable_file_as_state_io),
		T(test_file_backend__a_file_broken_after_open_fails_the_call_and_is_left_alone),
		T(test_file_backend__the_file_is_whole_after_kill_9),
		T(test_file_backend__a_held_group_is_written_once_at_commit),
		T(test_file_backend__a_group_not_committed_writes_nothing),
		T(test_file_backend__commit_leaves_a_file_a_person_changed_alone),
		T(test_file_backend__github_limits_hold_inside_a_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
