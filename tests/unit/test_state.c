#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/doc.h"
#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/state.h"
#include "pmbot/banned.h"

#define FIXTURES "tests/fixtures/states/"

static int parse_text(pmbot_state **st, const char *text, pmbot_diag_list *diags)
{
	return pmbot_state_parse(st, "state.json", text, strlen(text), diags);
}

static char *read_fixture(const char *name, size_t *len)
{
	pmbot_buf path = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_buf_printf(&path, FIXTURES "%s", name), 0);
	assert_int_equal(pmbot_fs_read(&text, path.buf), 0);
	pmbot_buf_free(&path);
	return pmbot_buf_detach(&text, len);
}

static int parse_fixture(pmbot_state **st, const char *name, pmbot_diag_list *diags)
{
	size_t len;
	char *text = read_fixture(name, &len);
	int rc = pmbot_state_parse(st, name, text, len, diags);

	free(text);
	return rc;
}

/* The canonical JSON of pmbot_state_to_json(st), malloc'd. */
static char *canonical(const pmbot_state *st)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	json_t *j = NULL;

	assert_int_equal(pmbot_state_to_json(&j, st), PMBOT_OK);
	assert_int_equal(pmbot_json_canonical(&out, j), 0);
	json_decref(j);
	return pmbot_buf_detach(&out, NULL);
}

static void print_diags(const pmbot_diag_list *l)
{
	size_t i;

	for (i = 0; i < l->count; i++)
		print_message("have: %s %s %s line %d: %s\n",
			pmbot_severity_name(l->items[i].severity), l->items[i].code,
			l->items[i].path, l->items[i].line, l->items[i].message);
}

/* The diagnostic with this code and path; fails the test when there is none. */
static const pmbot_diag *expect_diag(const pmbot_diag_list *l, pmbot_severity sev,
	const char *code, const char *path, int line)
{
	size_t i;

	for (i = 0; i < l->count; i++) {
		const pmbot_diag *d = &l->items[i];

		if (!strcmp(d->code, code) && !strcmp(d->path, path)) {
			if (d->line != line || d->severity != sev)
				print_diags(l);
			assert_int_equal(d->line, line);
			assert_int_equal(d->severity, sev);
			assert_true(d->column > 0);
			return d;
		}
	}
	print_diags(l);
	fail_msg("no %s at %s", code, path);
	return NULL;
}

static void expect_message_contains(const pmbot_diag *d, const char *needle)
{
	if (!strstr(d->message, needle))
		fail_msg("message \"%s\" lacks \"%s\"", d->message, needle);
}

static void test_state__parses_the_full_example_into_sorted_issues(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;
	const pmbot_issue *is;

	(void)unused;
	assert_int_equal(parse_fixture(&st, "full.json", &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	assert_int_equal(st->n_issues, 4);
	/* Repositories in order, numbers as numbers (2 before 10). */
	assert_string_equal(st->issues[0].repo, "acme/gadgets");
	assert_int_equal(st->issues[1].number, 2);
	assert_int_equal(st->issues[2].number, 9);
	assert_int_equal(st->issues[3].number, 10);
	is = &st->issues[3];
	assert_int_equal(is->database_id, 1000010);
	assert_string_equal(is->node_id, "I_D0JK");
	assert_int_equal(is->n_labels, 3);
	assert_string_equal(is->labels[0], "area:ui");
	assert_string_equal(is->labels[2], "type:task");
	assert_string_equal(is->parent, "acme/widgets#2");
	assert_int_equal(is->n_blocked_by, 3);
	assert_string_equal(is->blocked_by[0], "acme/gadgets#1");
	assert_string_equal(is->blocked_by[1], "acme/widgets#2");
	assert_string_equal(is->blocked_by[2], "acme/widgets#9");
	assert_true(is->author_is_bot);
	assert_false(is->closed);
	assert_true(st->issues[1].closed);
	assert_false(st->issues[1].author_is_bot);
	/* A null body reads as empty; an absent parent as none. */
	assert_string_equal(st->issues[2].body, "");
	assert_null(st->issues[2].parent);
	assert_int_equal(st->issues[2].n_blocked_by, 0);
	assert_non_null(st->project);
	assert_string_equal(st->project->owner, "acme");
	assert_int_equal(st->project->n_fields, 5);
	assert_int_equal(st->project->fields[0].type, PMBOT_PFIELD_SINGLE_SELECT);
	assert_int_equal(st->project->fields[0].n_options, 3);
	assert_int_equal(st->project->fields[2].type, PMBOT_PFIELD_NUMBER);
	assert_int_equal(st->project->fields[4].type, PMBOT_PFIELD_DATE);
	assert_int_equal(st->project->n_items, 3);
	assert_string_equal(st->project->items[0].issue, "acme/gadgets#1");
	assert_string_equal(st->project->items[2].issue, "acme/widgets#10");
	assert_int_equal(json_integer_value(json_object_get(st->extra, "next_database_id")),
		1000011);
	pmbot_state_free(st);
	pmbot_diag_list_free(&diags);
}

static void test_state__to_json_matches_the_canonical_fixture(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;
	char *out, *expected;
	size_t len;

	(void)unused;
	assert_int_equal(parse_fixture(&st, "full.json", &diags), PMBOT_OK);
	out = canonical(st);
	expected = read_fixture("full.canonical.json", &len);
	assert_true(len > 0 && expected[len - 1] == '\n');
	expected[len - 1] = '\0';
	assert_string_equal(out, expected);
	free(out);
	free(expected);
	pmbot_state_free(st);
	pmbot_diag_list_free(&diags);
}

static void test_state__round_trip_is_byte_identical(void **unused)
{
	static const char *const fixtures[] = { "full.json", "empty.json", "dangling-refs.json" };
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
		pmbot_state *a = NULL, *b = NULL;
		char *once, *twice;

		assert_int_equal(parse_fixture(&a, fixtures[i], &diags), PMBOT_OK);
		once = canonical(a);
		assert_int_equal(parse_text(&b, once, &diags), PMBOT_OK);
		twice = canonical(b);
		assert_string_equal(once, twice);
		free(once);
		free(twice);
		pmbot_state_free(a);
		pmbot_state_free(b);
		pmbot_diag_list_free(&diags);
	}
}

/* Reverse every array that the state sorts, then parse again: same bytes out. */
static void reverse_array(json_t *a)
{
	size_t i, n = json_array_size(a);

	for (i = 0; i < n / 2; i++) {
		json_t *x = json_incref(json_array_get(a, i)), *y = json_incref(json_array_get(a, n - 1 - i));

		json_array_set_new(a, i, y);
		json_array_set_new(a, n - 1 - i, x);
	}
}

static void test_state__input_order_does_not_change_the_output(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *a = NULL, *b = NULL;
	json_t *j = NULL, *repos, *issues;
	char *one, *two, *text;
	size_t i, k;

	(void)unused;
	assert_int_equal(parse_fixture(&a, "full.json", &diags), PMBOT_OK);
	assert_int_equal(pmbot_state_to_json(&j, a), PMBOT_OK);
	repos = json_object_get(j, "repositories");
	reverse_array(repos);
	for (i = 0; i < json_array_size(repos); i++) {
		issues = json_object_get(json_array_get(repos, i), "issues");
		reverse_array(issues);
		for (k = 0; k < json_array_size(issues); k++) {
			reverse_array(json_object_get(json_array_get(issues, k), "labels"));
			reverse_array(json_object_get(json_array_get(issues, k), "blocked_by"));
		}
	}
	reverse_array(json_object_get(json_object_get(j, "project"), "items"));
	text = json_dumps(j, JSON_INDENT(1));
	assert_non_null(text);
	assert_int_equal(parse_text(&b, text, &diags), PMBOT_OK);
	one = canonical(a);
	two = canonical(b);
	assert_string_equal(one, two);
	free(one);
	free(two);
	free(text);
	json_decref(j);
	pmbot_state_free(a);
	pmbot_state_free(b);
	pmbot_diag_list_free(&diags);
}

/* pmbot_state_canonical into a malloc'd string. */
static char *direct(const pmbot_state *st)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_state_canonical(&out, st), 0);
	return pmbot_buf_detach(&out, NULL);
}

static void test_state__direct_writer_matches_to_json_byte_for_byte(void **unused)
{
	static const char *const fixtures[] = {
		"full.json", "empty.json", "dangling-refs.json", "project-only.json"
	};
	pmbot_buf small = PMBOT_BUF_INIT;
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
		pmbot_state *st = NULL;
		char *a, *b;

		assert_int_equal(parse_fixture(&st, fixtures[i], &diags), PMBOT_OK);
		a = canonical(st);
		b = direct(st);
		assert_string_equal(a, b);
		free(a);
		free(b);
		pmbot_state_free(st);
		pmbot_diag_list_free(&diags);
	}
	/* Past the buffer's cap: an error, and the buffer as it was. */
	{
		pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
		pmbot_state *st = NULL;

		assert_int_equal(parse_fixture(&st, "full.json", &diags), PMBOT_OK);
		pmbot_buf_init(&small, 100);
		assert_int_equal(pmbot_buf_puts(&small, "keep"), 0);
		assert_true(pmbot_state_canonical(&small, st) < 0);
		assert_string_equal(small.buf, "keep");
		pmbot_state_free(st);
		pmbot_diag_list_free(&diags);
	}
	pmbot_buf_free(&small);
}

#define TYPED_ISSUE(n, type) "{\"number\":" #n ",\"database_id\":" #n ",\"node_id\":\"I_" #n "\"," \
	"\"title\":\"t\",\"state\":\"open\",\"author\":\"a\",\"author_type\":\"User\"," \
	"\"updated_at\":\"2026-11-02T10:00:00Z\"" type "}"

static void test_state__issue_type_is_optional_and_written_only_when_set(void **unused)
{
	static const char doc[] = "{\"schema_version\":\"state/v1\",\"repositories\":[{\"repo\":"
		"\"acme/w\",\"issues\":[" TYPED_ISSUE(1, ",\"issue_type\":\"Task\"") ","
		TYPED_ISSUE(2, ",\"issue_type\":null") "," TYPED_ISSUE(3, "") "]}]}";
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL, *again = NULL;
	char *a, *b;

	(void)unused;
	assert_int_equal(parse_text(&st, doc, &diags), PMBOT_OK);
	assert_string_equal(pmbot_state_issue(st, "acme/w#1")->issue_type, "Task");
	assert_null(pmbot_state_issue(st, "acme/w#2")->issue_type);
	assert_null(pmbot_state_issue(st, "acme/w#3")->issue_type);
	a = canonical(st);
	b = direct(st);
	assert_string_equal(a, b);
	/* Between database_id and labels, as canonical JSON sorts keys; none without a type. */
	assert_non_null(strstr(a, "\"database_id\":1,\"issue_type\":\"Task\",\"labels\":[]"));
	assert_non_null(strstr(a, "\"database_id\":2,\"labels\":[]"));
	assert_int_equal(parse_text(&again, a, &diags), PMBOT_OK);
	free(b);
	b = canonical(again);
	assert_string_equal(a, b);
	free(a);
	free(b);
	pmbot_state_free(st);
	pmbot_state_free(again);
	pmbot_diag_list_free(&diags);
}

static void test_state__refuses_an_empty_or_non_string_issue_type(void **unused)
{
	static const char doc[] = "{\"schema_version\":\"state/v1\",\"repositories\":[{\"repo\":"
		"\"acme/w\",\"issues\":[" TYPED_ISSUE(1, ",\"issue_type\":\"\"") ","
		TYPED_ISSUE(2, ",\"issue_type\":7") "]}]}";
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;

	(void)unused;
	assert_int_equal(parse_text(&st, doc, &diags), PMBOT_EINVALID);
	assert_null(st);
	expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_SCHEMA", "/repositories/0/issues/0/issue_type", 1);
	expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_SCHEMA", "/repositories/0/issues/1/issue_type", 1);
	pmbot_diag_list_free(&diags);
}

static void test_state__to_json_of_a_new_state_is_empty(void **unused)
{
	pmbot_state *st = NULL;
	char *out;

	(void)unused;
	assert_int_equal(pmbot_state_new(&st), PMBOT_OK);
	out = canonical(st);
	assert_string_equal(out, "{\"project\":null,\"repositories\":[],\"schema_version\":\"state/v1\"}");
	free(out);
	pmbot_state_free(st);
}

static void test_state__accepts_the_minimal_document_as_an_empty_state(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;

	(void)unused;
	assert_int_equal(parse_fixture(&st, "empty.json", &diags), PMBOT_OK);
	assert_int_equal(st->n_issues, 0);
	assert_null(st->project);
	assert_null(st->extra);
	assert_null(pmbot_state_issue(st, "acme/widgets#1"));
	assert_null(pmbot_state_item(st, "acme/widgets#1"));
	assert_null(pmbot_state_field(st, "Status"));
	pmbot_state_free(st);
	pmbot_diag_list_free(&diags);
}

static void test_state__reports_bad_json_as_state_parse_at_its_line(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = (pmbot_state *)&st;
	const pmbot_diag *d;

	(void)unused;
	assert_int_equal(parse_fixture(&st, "not-json.json", &diags), PMBOT_EINVALID);
	assert_null(st);
	assert_int_equal(diags.errors, 1);
	d = expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_PARSE", "/repositories/0/issues/0", 4);
	assert_string_equal(d->file, "not-json.json");
	pmbot_diag_list_free(&diags);
}

/* Every diagnostic of `l`, formatted, one string (malloc'd). */
static char *diags_text(const pmbot_diag_list *l)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t i;

	for (i = 0; i < l->count; i++)
		assert_int_equal(pmbot_diag_format(&b, &l->items[i]), 0);
	assert_int_equal(pmbot_buf_puts(&b, ""), 0);
	return pmbot_buf_detach(&b, NULL);
}

/*
 * pmbot_state_parse_buf says what pmbot_state_parse says, state and
 * diagnostics, of valid, dangling, schema-invalid and non-JSON files, and
 * takes the buffer: it is left empty, whatever the outcome.
 */
static void test_state__parse_buf_says_what_parse_says_and_takes_the_buffer(void **unused)
{
	static const char *const names[] = { "full.json", "dangling-refs.json", "schema-errors.json",
		"duplicates.json", "not-json.json", "empty.json" };
	size_t i, len;

	(void)unused;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		pmbot_diag_list da = PMBOT_DIAG_LIST_INIT, db = PMBOT_DIAG_LIST_INIT;
		pmbot_state *a = NULL, *b = NULL;
		pmbot_buf text = PMBOT_BUF_INIT;
		char *raw = read_fixture(names[i], &len), *ta, *tb;
		int ra = pmbot_state_parse(&a, names[i], raw, len, &da), rb;

		assert_int_equal(pmbot_buf_put(&text, raw, len), 0);
		rb = pmbot_state_parse_buf(&b, names[i], &text, &db);
		assert_int_equal(rb, ra);
		assert_int_equal(text.len, 0);
		assert_non_null(text.buf);
		assert_string_equal(ta = diags_text(&da), tb = diags_text(&db));
		free(ta);
		free(tb);
		assert_true((a != NULL) == (b != NULL));
		if (a) {
			assert_string_equal(ta = canonical(a), tb = canonical(b));
			free(ta);
			free(tb);
		}
		/* The fixtures are chosen to say something. */
		assert_true(i < 2 ? ra == PMBOT_OK && (i == 0 || da.count > 0) :
			i == 5 || (ra == PMBOT_EINVALID && da.errors > 0));
		pmbot_state_free(a);
		pmbot_state_free(b);
		pmbot_diag_list_free(&da);
		pmbot_diag_list_free(&db);
		pmbot_buf_free(&text);
		free(raw);
	}
}

static void test_state__reports_a_duplicate_key_and_bad_utf8_as_state_parse(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;
	const char bad_utf8[] = "{\"schema_version\": \"state/v1\",\n\"x\": \"\xc3\x28\"}";

	(void)unused;
	assert_int_equal(parse_text(&st, "{\"schema_version\": \"state/v1\",\n"
		"\"schema_version\": \"state/v1\"}", &diags), PMBOT_EINVALID);
	expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_PARSE", "/schema_version", 2);
	pmbot_diag_list_free(&diags);
	assert_int_equal(pmbot_state_parse(&st, "s.json", bad_utf8, sizeof(bad_utf8) - 1, &diags),
		PMBOT_EINVALID);
	assert_int_equal(diags.count, 1);
	assert_string_equal(diags.items[0].code, "STATE_PARSE");
	assert_int_equal(diags.items[0].line, 2);
	assert_int_equal(parse_text(&st, "", &diags), PMBOT_EINVALID);
	assert_int_equal(diags.count, 2);
	assert_string_equal(diags.items[1].code, "STATE_PARSE");
	pmbot_diag_list_free(&diags);
}

static void test_state__refuses_another_major_version_and_checks_nothing_else(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;
	const pmbot_diag *d;

	(void)unused;
	assert_int_equal(parse_fixture(&st, "version2.json", &diags), PMBOT_EINVALID);
	assert_int_equal(diags.count, 1);
	d = expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_VERSION", "/schema_version", 2);
	expect_message_contains(d, "state/v2");
	expect_message_contains(d, "state/v1");
	pmbot_diag_list_free(&diags);
}

static void test_state__requires_a_string_schema_version_in_an_object(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;

	(void)unused;
	assert_int_equal(parse_text(&st, "{\n\"repositories\": []}", &diags), PMBOT_EINVALID);
	expect_message_contains(expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_SCHEMA", "", 1),
		"schema_version");
	pmbot_diag_list_free(&diags);
	assert_int_equal(parse_text(&st, "{\n\"schema_version\": 1}", &diags), PMBOT_EINVALID);
	expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_SCHEMA", "/schema_version", 2);
	pmbot_diag_list_free(&diags);
	assert_int_equal(parse_text(&st, "[1, 2]", &diags), PMBOT_EINVALID);
	expect_message_contains(expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_SCHEMA", "", 1),
		"expected an object, found an array");
	pmbot_diag_list_free(&diags);
}

static void test_state__reports_every_schema_error_with_pointer_and_line(void **unused)
{
	static const struct {
		const char *path;
		int line;
		const char *says;
	} want[] = {
		{ "/colour", 3, "unknown key `colour`" },
		{ "/repositories/0/repo", 6, "not a repository" },
		{ "/repositories/1/issues/0/number", 13, "from 1 to 2147483647" },
		{ "/repositories/1/issues/0/database_id", 14, "found a string" },
		{ "/repositories/1/issues/0/node_id", 15, "must not be empty" },
		{ "/repositories/1/issues/0/labels/1", 17, "found an integer" },
		{ "/repositories/1/issues/0/labels/2", 17, "must not be empty" },
		{ "/repositories/1/issues/0/state", 18, "`merged`" },
		{ "/repositories/1/issues/0/author_type", 20, "`Organization`" },
		{ "/repositories/1/issues/0/updated_at", 21, "RFC 3339" },
		{ "/repositories/1/issues/0/parent", 22, "`widgets#3` is not an issue ref" },
		{ "/repositories/1/issues/0/blocked_by", 23, "an array of strings" },
		{ "/repositories/1/issues/0/milestone", 24, "unknown key" },
		{ "/repositories/1/issues/1/parent", 36, "its own parent" },
		{ "/repositories/1/issues/1/blocked_by/0", 37, "block itself" },
		{ "/repositories/1/issues/2", 39, "expected an object" },
		{ "/repositories/1/issues/3", 40, "missing required key `number`" },
		{ "/repositories/1/issues/3/database_id", 41, "integer" },
		{ "/project/owner", 47, "not a GitHub login" },
		{ "/project/fields/1/options", 53, "only single_select" },
		{ "/project/fields/2/type", 54, "`iteration`" },
		{ "/project/fields/3", 55, "missing required key `options`" },
		{ "/project/items/0/values/Priority", 62, "options: `P1`" },
		{ "/project/items/0/values/priority", 62, "did you mean `Priority`" },
		{ "/project/items/0/values/Notes", 62, "a string (text field)" },
		{ "/project/items/0/values/Due", 62, "not a date" },
		{ "/project/items/0/values/Points", 63, "a number (number field)" },
		{ "/project/items/0/values/Colour", 63, "no field is called `Colour`" },
		{ "/project/items/1/issue", 64, "not an issue ref" },
		{ "/project/items/2/values", 65, "expected an object" },
		{ "/extra", 68, "an object or null" },
	};
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;
	size_t i, missing = 0;

	(void)unused;
	assert_int_equal(parse_fixture(&st, "schema-errors.json", &diags), PMBOT_EINVALID);
	assert_null(st);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		expect_message_contains(expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_SCHEMA",
			want[i].path, want[i].line), want[i].says);
	for (i = 0; i < diags.count; i++)
		missing += !strcmp(diags.items[i].message, "missing required key `node_id`") ||
			!strcmp(diags.items[i].message, "missing required key `updated_at`");
	assert_int_equal(missing, 2);
	/* Nothing is left to guesswork: no warnings while errors stand. */
	assert_int_equal(diags.warnings, 0);
	pmbot_diag_list_free(&diags);
}

static void test_state__reports_every_duplicate_with_pointer_and_line(void **unused)
{
	static const struct {
		const char *path;
		int line;
		const char *says;
	} want[] = {
		{ "/repositories/0/issues/1/labels/2", 11, "label `x`" },
		{ "/repositories/0/issues/1/blocked_by/1", 13, "`Acme/Widgets#2`" },
		{ "/repositories/1/repo", 23, "repository `Acme/Widgets`" },
		{ "/repositories/0/issues/3/number", 17, "first at line 7" },
		{ "/repositories/2/issues/0/database_id", 29, "1000002 is used twice (first at line 14)" },
		{ "/repositories/2/issues/0/node_id", 29, "`I_a` is used twice (first at line 7)" },
		{ "/project/fields/0/options/1", 39, "option id `o1`" },
		{ "/project/fields/0/options/2", 40, "option `Todo`" },
		{ "/project/fields/1/id", 41, "field id `F1`" },
		{ "/project/fields/1/name", 41, "ignoring case" },
		{ "/project/items/1/id", 45, "item id `PVTI_1`" },
		{ "/project/items/2/issue", 46, "first at line 44" },
	};
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;
	size_t i;

	(void)unused;
	assert_int_equal(parse_fixture(&st, "duplicates.json", &diags), PMBOT_EINVALID);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		expect_message_contains(expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_DUPLICATE",
			want[i].path, want[i].line), want[i].says);
	assert_int_equal(diags.errors, sizeof(want) / sizeof(want[0]));
	pmbot_diag_list_free(&diags);
}

static void test_state__warns_about_refs_outside_the_snapshot_but_accepts_it(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;

	(void)unused;
	assert_int_equal(parse_fixture(&st, "dangling-refs.json", &diags), PMBOT_OK);
	assert_non_null(st);
	assert_int_equal(diags.errors, 0);
	assert_int_equal(diags.warnings, 3);
	expect_diag(&diags, PMBOT_SEV_WARNING, "STATE_REF", "/repositories/0/issues/0/parent", 10);
	expect_diag(&diags, PMBOT_SEV_WARNING, "STATE_REF", "/repositories/0/issues/0/blocked_by/1",
		11);
	expect_diag(&diags, PMBOT_SEV_WARNING, "STATE_REF", "/project/items/1/issue", 23);
	/* The outside ref is kept as is. */
	assert_string_equal(st->issues[0].parent, "acme/elsewhere#7");
	pmbot_state_free(st);
	pmbot_diag_list_free(&diags);
}

static void test_state__accepts_integral_reals_like_json_schema(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;

	(void)unused;
	assert_int_equal(parse_text(&st, "{\"schema_version\":\"state/v1\",\"repositories\":[{"
		"\"repo\":\"a/b\",\"issues\":[{\"number\":3.0,\"database_id\":1e6,\"node_id\":\"I\","
		"\"title\":\"t\",\"body\":\"\",\"labels\":[],\"state\":\"open\",\"author\":\"x\","
		"\"author_type\":\"User\",\"updated_at\":\"2026-01-01T00:00:00Z\"}]}]}", &diags),
		PMBOT_OK);
	assert_int_equal(st->issues[0].number, 3);
	assert_int_equal(st->issues[0].database_id, 1000000);
	pmbot_state_free(st);
	st = NULL;
	assert_int_equal(parse_text(&st, "{\"schema_version\":\"state/v1\",\"repositories\":[{"
		"\"repo\":\"a/b\",\"issues\":[{\"number\":3.5,\"database_id\":1,\"node_id\":\"I\","
		"\"title\":\"t\",\"body\":\"\",\"labels\":[],\"state\":\"open\",\"author\":\"x\","
		"\"author_type\":\"User\",\"updated_at\":\"2026-01-01T00:00:00Z\"}]}]}", &diags),
		PMBOT_EINVALID);
	expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_SCHEMA", "/repositories/0/issues/0/number", 1);
	pmbot_diag_list_free(&diags);
}

static void test_state__messages_escape_control_characters(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;
	const pmbot_diag *d;

	(void)unused;
	assert_int_equal(parse_text(&st, "{\"schema_version\":\"state/v2\\nerror FAKE\"}", &diags),
		PMBOT_EINVALID);
	d = expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_VERSION", "/schema_version", 1);
	assert_null(strchr(d->message, '\n'));
	expect_message_contains(d, "\\x0a");
	pmbot_diag_list_free(&diags);
}

static void test_state__lookups_ignore_repository_case(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;
	const pmbot_issue *is;

	(void)unused;
	assert_int_equal(parse_fixture(&st, "full.json", &diags), PMBOT_OK);
	is = pmbot_state_issue(st, "ACME/Widgets#9");
	assert_non_null(is);
	assert_int_equal(is->database_id, 1000009);
	assert_ptr_equal(pmbot_state_issue_at(st, "acme/WIDGETS", 9), is);
	assert_null(pmbot_state_issue(st, "acme/widgets#3"));
	assert_null(pmbot_state_issue(st, "acme/widgets#09"));
	assert_null(pmbot_state_issue(st, "acme/widgets"));
	assert_null(pmbot_state_issue(st, NULL));
	assert_null(pmbot_state_issue_at(st, "acme/nothing", 1));
	pmbot_state_free(st);
	pmbot_diag_list_free(&diags);
}

static void test_state__lower_bound_finds_the_run_of_a_repository(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;

	(void)unused;
	assert_int_equal(parse_fixture(&st, "full.json", &diags), PMBOT_OK);
	assert_int_equal(pmbot_state_lower_bound(st, "acme/gadgets", 0), 0);
	assert_int_equal(pmbot_state_lower_bound(st, "Acme/Widgets", 0), 1);
	assert_int_equal(pmbot_state_lower_bound(st, "acme/widgets", 9), 2);
	assert_int_equal(pmbot_state_lower_bound(st, "acme/widgets", 10), 3);
	assert_int_equal(pmbot_state_lower_bound(st, "acme/widgets", 11), 4);
	assert_int_equal(pmbot_state_lower_bound(st, "zzz/zzz", 0), 4);
	assert_int_equal(pmbot_state_lower_bound(st, "aaa/aaa", 5), 0);
	pmbot_state_free(st);
	pmbot_diag_list_free(&diags);
}

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	assert_non_null(p);
	memcpy(p, s, n);
	return p;
}

/* A project with one item for each of `refs` (in that order), each its own id. */
static void set_items(pmbot_state *st, const char *const *refs, size_t n)
{
	size_t i;

	st->project = calloc(1, sizeof(*st->project));
	assert_non_null(st->project);
	st->project->items = calloc(n, sizeof(*st->project->items));
	assert_non_null(st->project->items);
	st->project->n_items = st->project->alloc_items = n;
	for (i = 0; i < n; i++) {
		st->project->items[i].id = dup_str(refs[i]);
		st->project->items[i].issue = dup_str(refs[i]);
	}
}

/*
 * The item lookup checks only the number of an item spelling the query's
 * repo byte for byte: neighbours sharing a prefix, other spellings and
 * malformed item refs (sorted last) must still be told apart.
 */
static void test_state__item_lookup_tells_near_refs_apart(void **unused)
{
	static const char *const refs[] = {
		"acme/w#1", "acme/w#2", "acme/w#12", "acme/wx#1", "acme/w#01", "acme/w#1x"
	};
	pmbot_state *st = NULL;
	size_t i, n = sizeof(refs) / sizeof(refs[0]);

	(void)unused;
	assert_int_equal(pmbot_state_new(&st), PMBOT_OK);
	set_items(st, refs, n);
	for (i = 0; i < 4; i++) {
		const pmbot_pitem *it = pmbot_state_item(st, refs[i]);

		assert_non_null(it);
		assert_string_equal(it->id, refs[i]);
	}
	assert_string_equal(pmbot_state_item(st, "ACME/W#12")->id, "acme/w#12");
	assert_string_equal(pmbot_state_item(st, "Acme/WX#1")->id, "acme/wx#1");
	assert_null(pmbot_state_item(st, "acme/w#3"));
	assert_null(pmbot_state_item(st, "acme/w#01"));
	assert_null(pmbot_state_item(st, "acme/w#1x"));
	assert_null(pmbot_state_item(st, "acme/w"));
	assert_null(pmbot_state_item(st, "acme/v#1"));
	assert_null(pmbot_state_item(st, "acme/wy#1"));
	pmbot_state_free(st);
}

/*
 * The items of all issues in one walk find what a lookup per issue finds:
 * an item of another spelling of the repo, none where an issue has none,
 * and items before, between and after the issues that belong to none.
 */
static void test_state__items_by_issue_match_the_lookup_of_each(void **unused)
{
	static const struct {
		const char *repo;
		long number;
		const char *item; /* its item's ref, or NULL */
	} issues[] = {
		{ "acme/w", 1, NULL }, { "acme/w", 2, "acme/w#2" }, { "acme/w", 12, "ACME/W#12" },
		{ "Acme/WX", 1, "acme/wx#1" }, { "acme/wx", 3, NULL }, { "acme/y", 5, "acme/y#5" },
		{ "acme/z", 1, NULL },
	};
	static const char *const items[] = {
		"acme/a#1", "acme/w#2", "ACME/W#12", "acme/wx#1", "acme/wx#2", "acme/wx#7",
		"acme/y#5", "acme/w#1x",
	};
	const size_t n = sizeof(issues) / sizeof(issues[0]), m = sizeof(items) / sizeof(items[0]);
	const pmbot_pitem **of = NULL;
	pmbot_buf ref = PMBOT_BUF_INIT;
	pmbot_state *st = NULL;
	size_t i;

	(void)unused;
	assert_int_equal(pmbot_state_new(&st), PMBOT_OK);
	/* No project: no issue has an item. */
	st->issues = calloc(n, sizeof(*st->issues));
	assert_non_null(st->issues);
	st->n_issues = st->alloc_issues = n;
	for (i = 0; i < n; i++) {
		st->issues[i].repo = dup_str(issues[i].repo);
		st->issues[i].number = issues[i].number;
	}
	assert_int_equal(pmbot_state_items_by_issue(&of, st), 0);
	for (i = 0; i < n; i++)
		assert_null(of[i]);
	free(of);

	set_items(st, items, m);
	assert_int_equal(pmbot_state_items_by_issue(&of, st), 0);
	for (i = 0; i < n; i++) {
		pmbot_buf_clear(&ref);
		assert_int_equal(pmbot_issue_ref(&ref, issues[i].repo, issues[i].number), 0);
		assert_ptr_equal(of[i], pmbot_state_item(st, ref.buf));
		if (issues[i].item) {
			assert_non_null(of[i]);
			assert_string_equal(of[i]->issue, issues[i].item);
		} else {
			assert_null(of[i]);
		}
	}
	free(of);
	pmbot_buf_free(&ref);
	pmbot_state_free(st);
}

static void test_state__item_and_field_lookups(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;
	const pmbot_pitem *it;
	const pmbot_pfield *f;

	(void)unused;
	assert_int_equal(parse_fixture(&st, "full.json", &diags), PMBOT_OK);
	it = pmbot_state_item(st, "Acme/widgets#10");
	assert_non_null(it);
	assert_string_equal(it->id, "PVTI_ten");
	assert_string_equal(json_string_value(json_object_get(it->values, "Priority")), "P1");
	assert_int_equal(json_integer_value(json_object_get(it->values, "Estimate (hrs)")), 4);
	assert_non_null(pmbot_state_item(st, "acme/gadgets#1"));
	assert_null(pmbot_state_item(st, "acme/widgets#9"));
	f = pmbot_state_field(st, "estimate (HRS)");
	assert_non_null(f);
	assert_string_equal(f->id, "PVTF_est");
	assert_null(pmbot_state_field(st, "Estimate"));
	pmbot_state_free(st);
	pmbot_diag_list_free(&diags);
}

static void test_issue_ref__parses_valid_refs_and_refuses_malformed_ones(void **unused)
{
	static const char *const bad[] = {
		"", "acme", "acme/widgets", "acme/widgets#", "acme/widgets#0", "acme/widgets#01",
		"acme/widgets#-1", "acme/widgets#1x", "acme/widgets#2147483648", "/widgets#1",
		"acme/#1", "-acme/widgets#1", "acme/./#1", "acme/..#1", "ac me/widgets#1",
		"acme/wid/gets#1", "acme/widgets#1#2", "a234567890123456789012345678901234567890/x#1",
	};
	pmbot_buf repo = PMBOT_BUF_INIT, ref = PMBOT_BUF_INIT;
	long n = 0;
	size_t i;

	(void)unused;
	assert_int_equal(pmbot_issue_ref_parse(&repo, &n, "Acme-1/wid_get.s#2147483647"), PMBOT_OK);
	assert_string_equal(repo.buf, "Acme-1/wid_get.s");
	assert_int_equal(n, 2147483647L);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pmbot_buf_clear(&repo);
		if (pmbot_issue_ref_parse(&repo, &n, bad[i]) != PMBOT_EINVALID)
			fail_msg("accepted `%s`", bad[i]);
		assert_int_equal(repo.len, 0);
	}
	assert_int_equal(pmbot_issue_ref(&ref, "acme/widgets", 42), 0);
	assert_string_equal(ref.buf, "acme/widgets#42");
	pmbot_buf_free(&repo);
	pmbot_buf_free(&ref);
}

static void test_issue_ref__cmp_orders_like_issues(void **unused)
{
	(void)unused;
	assert_true(pmbot_issue_ref_cmp("acme/w#2", "acme/w#10") < 0);
	assert_true(pmbot_issue_ref_cmp("acme/w#10", "acme/w#2") > 0);
	assert_int_equal(pmbot_issue_ref_cmp("ACME/W#2", "acme/w#2"), 0);
	assert_true(pmbot_issue_ref_cmp("acme/a#9", "acme/b#1") < 0);
	assert_true(pmbot_issue_ref_cmp("zzz/z#1", "not a ref") < 0);
	assert_true(pmbot_issue_ref_cmp("not a ref", "zzz/z#1") > 0);
}

/* Refs spelling the same repo compare by number; a malformed number sorts last. */
static void test_issue_ref__cmp_checks_the_number_of_a_same_repo_ref(void **unused)
{
	(void)unused;
	assert_true(pmbot_issue_ref_cmp("acme/w#1", "acme/w#01") < 0);
	assert_true(pmbot_issue_ref_cmp("acme/w#01", "acme/w#1") > 0);
	assert_true(pmbot_issue_ref_cmp("acme/w#9", "acme/w#1x") < 0);
	assert_true(pmbot_issue_ref_cmp("acme/w#2147483647", "acme/w#2147483648") < 0);
	assert_true(pmbot_issue_ref_cmp("acme/w#2147483648", "acme/w#1") > 0);
	assert_true(pmbot_issue_ref_cmp("acme/w#01", "acme/w#1x") < 0);
	assert_true(pmbot_issue_ref_cmp("acme/w#1x", "acme/w#01") > 0);
	assert_true(pmbot_issue_ref_cmp("acme/w#9", "acme/wx#1") < 0);
	assert_true(pmbot_issue_ref_cmp("acme/wx#1", "acme/w#9") > 0);
	assert_int_equal(pmbot_issue_ref_cmp("acme/w#12", "acme/w#12"), 0);
}

#define BIG_REPOS 5
#define BIG_PER_REPO 2000

/* A ref is "OWNER/NAME#N", appended to what the buffer holds. */
static void test_issue_ref__appends_repo_hash_number(void **unused)
{
	pmbot_buf ref = PMBOT_BUF_INIT;

	(void)unused;
	assert_int_equal(pmbot_buf_puts(&ref, "["), 0);
	assert_int_equal(pmbot_issue_ref(&ref, "Acme/Widgets", 7), 0);
	assert_string_equal(ref.buf, "[Acme/Widgets#7");
	pmbot_buf_clear(&ref);
	assert_int_equal(pmbot_issue_ref(&ref, "a/b", 2147483647L), 0);
	assert_string_equal(ref.buf, "a/b#2147483647");
	pmbot_buf_clear(&ref);
	assert_int_equal(pmbot_issue_ref(&ref, "a/b", 10), 0);
	assert_string_equal(ref.buf, "a/b#10");
	pmbot_buf_free(&ref);
}

/*
 * The pieces a state keeps as jansson values (item values, extra) come
 * out of the compact document whole: every type, escapes, member order,
 * and objects past the size where duplicate keys are looked up in a table.
 */
static void test_state__keeps_extra_and_item_values_as_read(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf b = PMBOT_BUF_INIT;
	pmbot_state *st = NULL;
	json_t *want;
	char *got;
	int i, err = 0;

	(void)unused;
	err |= pmbot_buf_puts(&b, "{\"schema_version\":\"state/v1\",\"repositories\":[],"
		"\"project\":{\"owner\":\"acme\",\"number\":1,\"node_id\":\"P\",\"fields\":["
		"{\"id\":\"F1\",\"name\":\"Risk\",\"type\":\"text\"},"
		"{\"id\":\"F2\",\"name\":\"Est\",\"type\":\"number\"}],"
		"\"items\":[{\"id\":\"I1\",\"issue\":\"acme/w#1\",\"values\":"
		"{\"Risk\":\"a\\u00e9\\n\\\"b\\\"\",\"Est\":2.5}},"
		"{\"id\":\"I2\",\"issue\":\"acme/w#2\",\"values\":{\"Est\":-7,\"Risk\":\"\"}},"
		"{\"id\":\"I3\",\"issue\":\"acme/w#3\"}]},\"extra\":{\"z\":[1,[2,[]],{}],"
		"\"n\":null,\"t\":true,\"f\":false,\"r\":1e-3");
	for (i = 0; i < 40; i++)
		err |= pmbot_buf_printf(&b, ",\"k%d\":%d", 39 - i, i);
	err |= pmbot_buf_puts(&b, "}}");
	assert_int_equal(err, 0);
	assert_int_equal(pmbot_state_parse(&st, "v.json", b.buf, b.len, &diags), PMBOT_OK);
	/* Items name issues not in the state: warnings only. */
	assert_int_equal(diags.errors, 0);
	assert_non_null(st->extra);
	want = json_loads(strstr(b.buf, "\"extra\":") + 8, JSON_DISABLE_EOF_CHECK, NULL);
	assert_non_null(want);
	assert_true(json_equal(want, st->extra));
	json_decref(want);
	/* Document order, not sorted: the first key is "z", the last "k0". */
	got = json_dumps(st->extra, JSON_COMPACT);
	assert_true(!strncmp(got, "{\"z\":[1,[2,[]],{}],\"n\":null,", 28));
	assert_non_null(strstr(got, "\"k1\":38,\"k0\":39}"));
	free(got);
	assert_non_null(st->project);
	assert_int_equal(st->project->n_items, 3);
	got = json_dumps(st->project->items[0].values, JSON_COMPACT);
	assert_string_equal(got, "{\"Risk\":\"a\xc3\xa9\\n\\\"b\\\"\",\"Est\":2.5}");
	free(got);
	got = json_dumps(st->project->items[1].values, JSON_COMPACT);
	assert_string_equal(got, "{\"Est\":-7,\"Risk\":\"\"}");
	free(got);
	assert_true(json_is_object(st->project->items[2].values));
	assert_int_equal(json_object_size(st->project->items[2].values), 0);
	pmbot_state_free(st);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&b);
}

/* Cut `text` short, drop a byte or double one at `at`: most such texts are not JSON. */
static void spoil(pmbot_buf *out, const char *text, size_t len, size_t at, int how)
{
	pmbot_buf_clear(out);
	if (how == 0) {
		assert_int_equal(pmbot_buf_put(out, text, at), 0);
		return;
	}
	assert_int_equal(pmbot_buf_put(out, text, at), 0);
	if (how == 2)
		assert_int_equal(pmbot_buf_put(out, text + at, 1), 0);
	assert_int_equal(pmbot_buf_put(out, text + at + 1, len - at - 1), 0);
}

/*
 * A state that is not JSON is refused with the parser's own diagnostic
 * (code aside): the same pointer, line, column and words as
 * pmbot_json_parse gives for the text, wherever it breaks.
 */
static void test_state__parse_errors_are_the_json_parsers_word_for_word(void **unused)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t len, at, checked = 0, refused = 0;
	char *text = read_fixture("full.json", &len);
	int how;

	(void)unused;
	for (at = 0; at + 1 < len; at += 7) {
		for (how = 0; how < 3; how++) {
			pmbot_diag_list a = PMBOT_DIAG_LIST_INIT, d = PMBOT_DIAG_LIST_INIT;
			pmbot_limits lim;
			pmbot_state *st = NULL;
			json_t *j = NULL;
			int rc, jrc;

			spoil(&b, text, len, at, how);
			rc = pmbot_state_parse(&st, "s.json", b.buf, b.len, &a);
			pmbot_limits_default(&lim);
			lim.max_bytes = PMBOT_STATE_MAX_BYTES;
			jrc = pmbot_json_parse(&j, NULL, "s.json", b.buf, b.len, 1, 0, &lim, &d);
			json_decref(j);
			pmbot_state_free(st);
			checked++;
			if (jrc == PMBOT_OK) {
				/* JSON still: whatever the schema says, it is not STATE_PARSE. */
				assert_true(!a.count || strcmp(a.items[0].code, "STATE_PARSE"));
			} else {
				refused++;
				assert_int_equal(rc, PMBOT_EINVALID);
				assert_int_equal(a.count, 1);
				assert_int_equal(d.count, 1);
				assert_string_equal(a.items[0].code, "STATE_PARSE");
				assert_string_equal(a.items[0].path, d.items[0].path);
				assert_int_equal(a.items[0].line, d.items[0].line);
				assert_int_equal(a.items[0].column, d.items[0].column);
				assert_string_equal(a.items[0].message, d.items[0].message);
			}
			pmbot_diag_list_free(&a);
			pmbot_diag_list_free(&d);
		}
	}
	assert_true(refused > checked / 3);
	free(text);
	pmbot_buf_free(&b);
}

/*
 * Positions are looked up only when there is something to say; they are
 * the same wherever in a large state the problem is.
 */
static void test_state__diagnostics_deep_in_a_large_state_name_their_line(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf b = PMBOT_BUF_INIT;
	pmbot_state *st = NULL;
	const pmbot_diag *d;
	int n, err = 0;

	(void)unused;
	err |= pmbot_buf_puts(&b, "{\"schema_version\":\"state/v1\",\"repositories\":[\n"
		"{\"repo\":\"org/r\",\"issues\":[\n");
	for (n = 1; n <= 3000; n++)
		err |= pmbot_buf_printf(&b, "%s{\"number\":%d,\"database_id\":%d,\"node_id\":\"I%d\","
			"\"title\":\"T\",\"body\":\"a\\nb\",\"state\":\"%s\",\"author\":\"x\","
			"\"author_type\":\"User\",\"updated_at\":\"2026-11-02T10:00:00Z\"%s}\n",
			n == 1 ? "" : ",", n == 2999 ? 17 : n, n == 3000 ? 5 : n, n,
			n == 2500 ? "shut" : "open", n == 2000 ? ",\"parent\":\"org/r#99999\"" : "");
	err |= pmbot_buf_puts(&b, "]}]}");
	assert_int_equal(err, 0);
	assert_int_equal(pmbot_state_parse(&st, "big.json", b.buf, b.len, &diags), PMBOT_EINVALID);
	assert_null(st);
	/* Line 1 is the opening, line 2 the repository, issue i on line i + 2. */
	d = expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_SCHEMA", "/repositories/0/issues/2499/state",
		2502);
	expect_message_contains(d, "`shut`");
	d = expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_DUPLICATE",
		"/repositories/0/issues/2998/number", 3001);
	expect_message_contains(d, "first at line 19");
	d = expect_diag(&diags, PMBOT_SEV_ERROR, "STATE_DUPLICATE",
		"/repositories/0/issues/2999/database_id", 3002);
	expect_message_contains(d, "first at line 7");
	/* Warnings about refs come only from a state without errors. */
	assert_int_equal(diags.count, 3);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&b);
}

#define N_REFS(a) (sizeof(a) / sizeof((a)[0]))

static int has_diag(const pmbot_diag_list *l, const char *code, const char *path)
{
	size_t i;

	for (i = 0; i < l->count; i++)
		if (!strcmp(l->items[i].code, code) && !strcmp(l->items[i].path, path))
			return 1;
	return 0;
}

/*
 * STATE_REF across repositories, in any case, in any order: a warning
 * exactly for each ref pmbot_state_issue() does not find.
 */
static void test_state__ref_warnings_match_the_lookup_across_repositories(void **unused)
{
	static const char *const refs[] = { "b/y#1", "a/x#2", "b/y#7", "A/X#3", "c/z#1", "a/x#99",
		"B/Y#2", "a/x#1", "b/y#3" };
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf b = PMBOT_BUF_INIT, path = PMBOT_BUF_INIT;
	pmbot_state *st = NULL;
	size_t i, k, warned = 0;
	int err = 0;

	(void)unused;
	err |= pmbot_buf_puts(&b, "{\"schema_version\":\"state/v1\",\"repositories\":[");
	for (k = 0; k < 2; k++) {
		err |= pmbot_buf_printf(&b, "%s{\"repo\":\"%s\",\"issues\":[", k ? "," : "",
			k ? "b/y" : "a/x");
		for (i = 0; i < N_REFS(refs); i++)
			err |= pmbot_buf_printf(&b, "%s{\"number\":%zu,\"database_id\":%zu,"
				"\"node_id\":\"N%zu\",\"title\":\"t\",\"state\":\"open\",\"author\":\"u\","
				"\"author_type\":\"User\",\"updated_at\":\"2026-11-02T10:00:00Z\","
				"\"parent\":\"%s\",\"blocked_by\":[\"%s\"]}", i ? "," : "",
				i + 2, k * 100 + i + 1, k * 100 + i, refs[i],
				refs[(i + 3 + k) % N_REFS(refs)]);
		err |= pmbot_buf_puts(&b, "]}");
	}
	err |= pmbot_buf_puts(&b, "],\"project\":{\"owner\":\"a\",\"number\":1,\"node_id\":\"P\","
		"\"fields\":[],\"items\":[");
	for (i = 0; i < N_REFS(refs); i++)
		err |= pmbot_buf_printf(&b, "%s{\"id\":\"I%zu\",\"issue\":\"%s\"}", i ? "," : "", i,
			refs[(i * 5) % N_REFS(refs)]);
	err |= pmbot_buf_puts(&b, "]}}");
	assert_int_equal(err, 0);
	/* Item issues must be unique: the items name each ref once (5 is prime to 9). */
	assert_int_equal(pmbot_state_parse(&st, "r.json", b.buf, b.len, &diags), PMBOT_OK);
	assert_int_equal(diags.errors, 0);
	for (k = 0; k < 2; k++) {
		for (i = 0; i < N_REFS(refs); i++) {
			const char *blocker = refs[(i + 3 + k) % N_REFS(refs)];

			pmbot_buf_clear(&path);
			assert_int_equal(pmbot_buf_printf(&path, "/repositories/%zu/issues/%zu/parent",
				k, i), 0);
			assert_int_equal(has_diag(&diags, "STATE_REF", path.buf),
				pmbot_state_issue(st, refs[i]) == NULL);
			pmbot_buf_clear(&path);
			assert_int_equal(pmbot_buf_printf(&path,
				"/repositories/%zu/issues/%zu/blocked_by/0", k, i), 0);
			assert_int_equal(has_diag(&diags, "STATE_REF", path.buf),
				pmbot_state_issue(st, blocker) == NULL);
			warned += (pmbot_state_issue(st, refs[i]) == NULL) +
				(pmbot_state_issue(st, blocker) == NULL);
		}
	}
	for (i = 0; i < N_REFS(refs); i++) {
		pmbot_buf_clear(&path);
		assert_int_equal(pmbot_buf_printf(&path, "/project/items/%zu/issue", i), 0);
		assert_int_equal(has_diag(&diags, "STATE_REF", path.buf),
			pmbot_state_issue(st, refs[(i * 5) % N_REFS(refs)]) == NULL);
		warned += pmbot_state_issue(st, refs[(i * 5) % N_REFS(refs)]) == NULL;
	}
	assert_int_equal(diags.count, warned);
	assert_true(warned > 5 && warned < 30);
	pmbot_state_free(st);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&b);
	pmbot_buf_free(&path);
}

static void test_state__parses_and_looks_up_ten_thousand_issues(void **unused)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf b = PMBOT_BUF_INIT, ref = PMBOT_BUF_INIT;
	pmbot_state *st = NULL, *again = NULL;
	char *once, *twice;
	int r, n, err = 0;

	(void)unused;
	/* Repositories and issues in reverse order, every issue a child of the one before. */
	err |= pmbot_buf_puts(&b, "{\"schema_version\":\"state/v1\",\"repositories\":[");
	for (r = BIG_REPOS - 1; r >= 0; r--) {
		err |= pmbot_buf_printf(&b, "%s{\"repo\":\"org/repo%d\",\"issues\":[",
			r == BIG_REPOS - 1 ? "" : ",", r);
		for (n = BIG_PER_REPO; n >= 1; n--) {
			err |= pmbot_buf_printf(&b, "%s{\"number\":%d,\"database_id\":%d,"
				"\"node_id\":\"I_%d_%d\",\"title\":\"Issue %d\",\"body\":\"Body\","
				"\"labels\":[\"type:task\"],\"state\":\"open\","
				"\"author\":\"github-actions[bot]\",\"author_type\":\"Bot\","
				"\"updated_at\":\"2026-11-02T10:00:00Z\"",
				n == BIG_PER_REPO ? "" : ",", n, 1000000 + r * BIG_PER_REPO + n, r, n, n);
			if (n > 1)
				err |= pmbot_buf_printf(&b, ",\"parent\":\"org/repo%d#%d\"", r, n - 1);
			if (n > 2)
				err |= pmbot_buf_printf(&b, ",\"blocked_by\":[\"org/repo%d#%d\"]", r, n - 2);
			err |= pmbot_buf_putc(&b, '}');
		}
		err |= pmbot_buf_puts(&b, "]}");
	}
	err |= pmbot_buf_puts(&b, "]}");
	assert_int_equal(err, 0);
	assert_int_equal(pmbot_state_parse(&st, "big.json", b.buf, b.len, &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	assert_int_equal(st->n_issues, BIG_REPOS * BIG_PER_REPO);
	for (r = 0; r < BIG_REPOS; r++) {
		for (n = 1; n <= BIG_PER_REPO; n++) {
			const pmbot_issue *is;

			pmbot_buf_clear(&ref);
			assert_int_equal(pmbot_buf_printf(&ref, "org/repo%d#%d", r, n), 0);
			is = pmbot_state_issue(st, ref.buf);
			assert_non_null(is);
			assert_int_equal(is->database_id, 1000000 + r * BIG_PER_REPO + n);
			assert_ptr_equal(is, &st->issues[(size_t)r * BIG_PER_REPO + (size_t)n - 1]);
		}
	}
	once = canonical(st);
	assert_int_equal(parse_text(&again, once, &diags), PMBOT_OK);
	twice = direct(again);
	assert_string_equal(once, twice);
	free(once);
	free(twice);
	pmbot_state_free(st);
	pmbot_state_free(again);
	pmbot_buf_free(&b);
	pmbot_buf_free(&ref);
	pmbot_diag_list_free(&diags);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state__parses_the_full_example_into_sorted_issues),
		cmocka_unit_test(test_state__to_json_matches_the_canonical_fixture),
		cmocka_unit_test(test_state__round_trip_is_byte_identical),
		cmocka_unit_test(test_state__input_order_does_not_change_the_output),
		cmocka_unit_test(test_state__direct_writer_matches_to_json_byte_for_byte),
		cmocka_unit_test(test_state__issue_type_is_optional_and_written_only_when_set),
		cmocka_unit_test(test_state__refuses_an_empty_or_non_string_issue_type),
		cmocka_unit_test(test_state__to_json_of_a_new_state_is_empty),
		cmocka_unit_test(test_state__accepts_the_minimal_document_as_an_empty_state),
		cmocka_unit_test(test_state__reports_bad_json_as_state_parse_at_its_line),
		cmocka_unit_test(test_state__parse_buf_says_what_parse_says_and_takes_the_buffer),
		cmocka_unit_test(test_state__reports_a_duplicate_key_and_bad_utf8_as_state_parse),
		cmocka_unit_test(test_state__refuses_another_major_version_and_checks_nothing_else),
		cmocka_unit_test(test_state__requires_a_string_schema_version_in_an_object),
		cmocka_unit_test(test_state__reports_every_schema_error_with_pointer_and_line),
		cmocka_unit_test(test_state__reports_every_duplicate_with_pointer_and_line),
		cmocka_unit_test(test_state__warns_about_refs_outside_the_snapshot_but_accepts_it),
		cmocka_unit_test(test_state__accepts_integral_reals_like_json_schema),
		cmocka_unit_test(test_state__messages_escape_control_characters),
		cmocka_unit_test(test_state__lookups_ignore_repository_case),
		cmocka_unit_test(test_state__lower_bound_finds_the_run_of_a_repository),
		cmocka_unit_test(test_state__items_by_issue_match_the_lookup_of_each),
		cmocka_unit_test(test_state__item_and_field_lookups),
		cmocka_unit_test(test_state__item_lookup_tells_near_refs_apart),
		cmocka_unit_test(test_issue_ref__parses_valid_refs_and_refuses_malformed_ones),
		cmocka_unit_test(test_issue_ref__cmp_orders_like_issues),
		cmocka_unit_test(test_issue_ref__cmp_checks_the_number_of_a_same_repo_ref),
		cmocka_unit_test(test_issue_ref__appends_repo_hash_number),
		cmocka_unit_test(test_state__parses_and_looks_up_ten_thousand_issues),
		cmocka_unit_test(test_state__keeps_extra_and_item_values_as_read),
		cmocka_unit_test(test_state__parse_errors_are_the_json_parsers_word_for_word),
		cmocka_unit_test(test_state__diagnostics_deep_in_a_large_state_name_their_line),
		cmocka_unit_test(test_state__ref_warnings_match_the_lookup_across_repositories),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
