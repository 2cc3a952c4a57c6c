#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/diag.h"
#include "pmbot/banned.h"

static const char *format_one(pmbot_buf *out, const pmbot_diag *d)
{
	pmbot_buf_clear(out);
	assert_int_equal(pmbot_diag_format(out, d), 0);
	return out->buf;
}

static void test_diag__add_copies_strings_and_counts_severities(void **state)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;
	static const char code[] = "SOME_CODE";
	char file[] = "plan.md", path[] = "/tasks/0";

	(void)state;
	assert_int_equal(pmbot_diag_add(&list, PMBOT_SEV_ERROR, code, file, path, 3, 5,
		"bad %s #%d", "thing", 7), 0);
	assert_int_equal(pmbot_diag_add(&list, PMBOT_SEV_WARNING, "W", NULL, NULL, 0, 0,
		"%s", "careful"), 0);
	/* The caller's buffers may change afterwards: the list has copies. */
	memset(file, 'x', sizeof(file) - 1);
	memset(path, 'x', sizeof(path) - 1);

	assert_int_equal(list.count, 2);
	assert_int_equal(list.errors, 1);
	assert_int_equal(list.warnings, 1);
	assert_ptr_equal(list.items[0].code, code);
	assert_string_equal(list.items[0].file, "plan.md");
	assert_string_equal(list.items[0].path, "/tasks/0");
	assert_string_equal(list.items[0].message, "bad thing #7");
	assert_int_equal(list.items[0].line, 3);
	assert_int_equal(list.items[0].column, 5);
	assert_int_equal(list.items[0].severity, PMBOT_SEV_ERROR);
	assert_null(list.items[1].file);
	assert_non_null(list.items[1].path);
	assert_string_equal(list.items[1].path, "");
	assert_string_equal(list.items[1].message, "careful");
	assert_int_equal(list.items[1].severity, PMBOT_SEV_WARNING);
	pmbot_diag_list_free(&list);
}

static void test_diag__add_grows_through_many_items_and_long_messages(void **state)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;
	char long_msg[3000];
	size_t i;

	(void)state;
	memset(long_msg, 'm', sizeof(long_msg) - 1);
	long_msg[sizeof(long_msg) - 1] = '\0';
	for (i = 0; i < 1000; i++)
		assert_int_equal(pmbot_diag_add(&list, i % 3 ? PMBOT_SEV_ERROR : PMBOT_SEV_WARNING,
			"C", "f.md", "/a", (int)i, 1, "%zu %s", i, long_msg), 0);
	assert_int_equal(list.count, 1000);
	assert_int_equal(list.warnings, 334);
	assert_int_equal(list.errors, 666);
	assert_int_equal(strlen(list.items[999].message), 4 + sizeof(long_msg) - 1);
	assert_memory_equal(list.items[999].message, "999 mmm", 7);
	pmbot_diag_list_free(&list);
	assert_int_equal(list.count, 0);
	assert_null(list.items);
	assert_int_equal(list.errors, 0);
	/* A freed list is reusable. */
	assert_int_equal(pmbot_diag_add(&list, PMBOT_SEV_ERROR, "C", NULL, "", 0, 0, "x"), 0);
	assert_int_equal(list.count, 1);
	pmbot_diag_list_free(&list);
}

static void test_diag__format_writes_every_known_part(void **state)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_diag_add(&list, PMBOT_SEV_ERROR, "CODE", "a.md", "/x", 3, 5,
		"msg"), 0);
	assert_string_equal(format_one(&out, &list.items[0]), "a.md:3:5: error CODE /x: msg\n");
	pmbot_diag_list_free(&list);
	pmbot_buf_free(&out);
}

static void test_diag__format_leaves_out_unknown_parts(void **state)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	pmbot_diag_add(&list, PMBOT_SEV_WARNING, "W_CODE", "a.md", "/x/y", 3, 0, "no column");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "CODE", "a.md", "/x", 0, 7, "column alone");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "CODE", NULL, "/x", 4, 2, "no file");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "CODE", NULL, "/x", 0, 0, "nowhere");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "CODE", "b.md", "", 1, 1, "root");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "CODE", NULL, NULL, 0, 0, "root");
	assert_int_equal(list.count, 6);

	assert_string_equal(format_one(&out, &list.items[0]),
		"a.md:3: warning W_CODE /x/y: no column\n");
	assert_string_equal(format_one(&out, &list.items[1]),
		"a.md: error CODE /x: column alone\n");
	assert_string_equal(format_one(&out, &list.items[2]), "4:2: error CODE /x: no file\n");
	assert_string_equal(format_one(&out, &list.items[3]), "error CODE /x: nowhere\n");
	assert_string_equal(format_one(&out, &list.items[4]), "b.md:1:1: error CODE (root): root\n");
	assert_string_equal(format_one(&out, &list.items[5]), "error CODE (root): root\n");
	pmbot_diag_list_free(&list);
	pmbot_buf_free(&out);
}

static void test_diag__format_appends_to_existing_output(void **state)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "A", "f", "/1", 1, 2, "one");
	pmbot_diag_add(&list, PMBOT_SEV_WARNING, "B", "f", "/2", 3, 4, "two %d%%", 50);
	assert_int_equal(pmbot_diag_format(&out, &list.items[0]), 0);
	assert_int_equal(pmbot_diag_format(&out, &list.items[1]), 0);
	assert_string_equal(out.buf, "f:1:2: error A /1: one\nf:3:4: warning B /2: two 50%\n");
	pmbot_diag_list_free(&list);
	pmbot_buf_free(&out);
}

static void test_diag__format_reports_a_full_output_buffer(void **state)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;
	pmbot_buf out;

	(void)state;
	pmbot_buf_init(&out, 10);
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "CODE", "a.md", "/x", 3, 5, "msg");
	assert_true(pmbot_diag_format(&out, &list.items[0]) < 0);
	assert_true(out.len <= 10);
	pmbot_diag_list_free(&list);
	pmbot_buf_free(&out);
}

static void test_diag__move_appends_in_order_and_empties_the_source(void **state)
{
	pmbot_diag_list dst = PMBOT_DIAG_LIST_INIT, src = PMBOT_DIAG_LIST_INIT;
	size_t i;

	(void)state;
	pmbot_diag_add(&dst, PMBOT_SEV_ERROR, "D0", NULL, "", 0, 0, "dst 0");
	for (i = 0; i < 20; i++)
		pmbot_diag_add(&src, i % 2 ? PMBOT_SEV_WARNING : PMBOT_SEV_ERROR, "S", NULL, "",
			0, 0, "src %zu", i);
	assert_int_equal(pmbot_diag_list_move(&dst, &src), 0);
	assert_int_equal(dst.count, 21);
	assert_int_equal(dst.errors, 11);
	assert_int_equal(dst.warnings, 10);
	assert_string_equal(dst.items[0].message, "dst 0");
	for (i = 0; i < 20; i++) {
		char want[16];

		snprintf(want, sizeof(want), "src %zu", i);
		assert_string_equal(dst.items[1 + i].message, want);
	}
	assert_int_equal(src.count, 0);
	assert_int_equal(src.errors, 0);
	assert_int_equal(src.warnings, 0);
	assert_null(src.items);
	/* The source is reusable and independent of the destination. */
	pmbot_diag_add(&src, PMBOT_SEV_ERROR, "S2", NULL, "", 0, 0, "later");
	assert_int_equal(src.count, 1);
	assert_int_equal(dst.count, 21);
	assert_int_equal(pmbot_diag_list_move(&dst, &src), 0);
	assert_string_equal(dst.items[21].message, "later");
	pmbot_diag_list_free(&src);
	pmbot_diag_list_free(&dst);
}

static void test_diag__move_of_empty_source_changes_nothing(void **state)
{
	pmbot_diag_list dst = PMBOT_DIAG_LIST_INIT, src = PMBOT_DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(pmbot_diag_list_move(&dst, &src), 0);
	assert_int_equal(dst.count, 0);
	pmbot_diag_add(&dst, PMBOT_SEV_WARNING, "D", NULL, "", 0, 0, "kept");
	assert_int_equal(pmbot_diag_list_move(&dst, &src), 0);
	assert_int_equal(dst.count, 1);
	assert_int_equal(dst.warnings, 1);
	assert_string_equal(dst.items[0].message, "kept");
	pmbot_diag_list_free(&dst);
}

static void test_diag__set_file_fills_only_missing_files(void **state)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;
	char name[] = "default.md";

	(void)state;
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "A", NULL, "", 0, 0, "a");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "B", "own.md", "", 0, 0, "b");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "C", NULL, "", 0, 0, "c");
	assert_int_equal(pmbot_diag_list_set_file(&list, name), 0);
	name[0] = 'X';
	assert_string_equal(list.items[0].file, "default.md");
	assert_string_equal(list.items[1].file, "own.md");
	assert_string_equal(list.items[2].file, "default.md");
	assert_ptr_not_equal(list.items[0].file, list.items[2].file);
	pmbot_diag_list_free(&list);
}

static void test_diag__sort_orders_by_file_line_column_severity_code_path(void **state)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;
	static const char *const want[] = {
		"no file", "a:1:1 err A /", "a:1:1 err A /x", "a:1:1 err B /", "a:1:1 warn A /",
		"a:1:2", "a:2:0", "a:10:1", "b:0:0",
	};
	size_t i;

	(void)state;
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "A", "b", "", 0, 0, "b:0:0");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "A", "a", "", 10, 1, "a:10:1");
	pmbot_diag_add(&list, PMBOT_SEV_WARNING, "A", "a", "/", 1, 1, "a:1:1 warn A /");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "A", "a", "", 2, 0, "a:2:0");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "B", "a", "/", 1, 1, "a:1:1 err B /");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "A", "a", "/x", 1, 1, "a:1:1 err A /x");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "Z", "a", "", 1, 2, "a:1:2");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "A", "a", "/", 1, 1, "a:1:1 err A /");
	pmbot_diag_add(&list, PMBOT_SEV_WARNING, "Z", NULL, "/z", 99, 9, "no file");
	pmbot_diag_list_sort(&list);
	assert_int_equal(list.count, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < list.count; i++)
		assert_string_equal(list.items[i].message, want[i]);
	assert_int_equal(list.errors, 7);
	assert_int_equal(list.warnings, 2);
	pmbot_diag_list_free(&list);
}

/* A deterministic pseudo-random sequence, so the test is repeatable. */
static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

static void test_diag__sort_is_stable_for_equal_keys(void **state)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;
	static const char *const files[] = { "a.md", "b.md", "c.md" };
	static const char *const codes[] = { "X", "Y" };
	unsigned seed = 7;
	size_t i;

	(void)state;
	/* Many equal keys across odd-sized runs exercise every merge width. */
	for (i = 0; i < 777; i++) {
		unsigned r = next_rand(&seed);

		assert_int_equal(pmbot_diag_add(&list, (r & 1) ? PMBOT_SEV_WARNING : PMBOT_SEV_ERROR,
			codes[(r >> 1) & 1], files[(r >> 2) % 3], (r >> 4) & 1 ? "/p" : "",
			(int)((r >> 5) % 4), (int)((r >> 7) % 3), "%zu", i), 0);
	}
	pmbot_diag_list_sort(&list);
	assert_int_equal(list.count, 777);
	for (i = 1; i < list.count; i++) {
		const pmbot_diag *a = &list.items[i - 1], *b = &list.items[i];
		int c = strcmp(a->file, b->file);

		if (!c)
			c = a->line - b->line;
		if (!c)
			c = a->column - b->column;
		if (!c)
			c = (int)a->severity - (int)b->severity;
		if (!c)
			c = strcmp(a->code, b->code);
		if (!c)
			c = strcmp(a->path, b->path);
		assert_true(c <= 0);
		if (!c)
			assert_true(strtoul(a->message, NULL, 10) < strtoul(b->message, NULL, 10));
	}
	pmbot_diag_list_free(&list);
}

static void test_diag__sort_of_short_lists_is_harmless(void **state)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;

	(void)state;
	pmbot_diag_list_sort(&list);
	assert_int_equal(list.count, 0);
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "A", "f", "", 1, 1, "only");
	pmbot_diag_list_sort(&list);
	assert_int_equal(list.count, 1);
	assert_string_equal(list.items[0].message, "only");
	pmbot_diag_list_free(&list);
}

static void test_diag__find_returns_the_first_match_or_null(void **state)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;
	char code[] = "TWO";

	(void)state;
	assert_null(pmbot_diag_list_find(&list, "ONE"));
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "ONE", NULL, "", 0, 0, "first one");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "TWO", NULL, "", 0, 0, "first two");
	pmbot_diag_add(&list, PMBOT_SEV_ERROR, "TWO", NULL, "", 0, 0, "second two");
	/* Compared by content, not by pointer. */
	d = pmbot_diag_list_find(&list, code);
	assert_non_null(d);
	assert_string_equal(d->message, "first two");
	assert_ptr_equal(d, &list.items[1]);
	assert_null(pmbot_diag_list_find(&list, "TW"));
	assert_null(pmbot_diag_list_find(&list, "THREE"));
	pmbot_diag_list_free(&list);
}

static void test_diag__severity_names(void **state)
{
	(void)state;
	assert_string_equal(pmbot_severity_name(PMBOT_SEV_ERROR), "error");
	assert_string_equal(pmbot_severity_name(PMBOT_SEV_WARNING), "warning");
}

static const char *escaped(pmbot_buf *out, const char *s, size_t len, size_t max_chars)
{
	pmbot_buf_clear(out);
	assert_int_equal(pmbot_log_escape(out, s, len, max_chars), 0);
	return out->buf;
}

/* No byte of the output can end a line or begin one. */
static void assert_one_line(const pmbot_buf *out)
{
	size_t i;

	for (i = 0; i < out->len; i++)
		assert_true((unsigned char)out->buf[i] >= 0x20 && out->buf[i] != 0x7f);
}

static void test_log__newlines_and_carriage_returns_are_escaped(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	const char s[] = "a\nb\r\nc\td";

	(void)state;
	assert_string_equal(escaped(&out, s, strlen(s), 100), "a\\x0ab\\x0d\\x0ac\\x09d");
	assert_one_line(&out);
	pmbot_buf_free(&out);
}

static void test_log__a_workflow_command_after_a_newline_stays_on_the_line(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	const char s[] = "x\n::error title=approved::ok\n::add-mask::acme\r::warning::y";

	(void)state;
	assert_string_equal(escaped(&out, s, strlen(s), 1000),
		"x\\x0a::error title=approved::ok\\x0a::add-mask::acme\\x0d::warning::y");
	assert_one_line(&out);
	pmbot_buf_free(&out);
}

static void test_log__a_value_that_begins_with_two_colons_does_not_begin_a_command(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_string_equal(escaped(&out, "::error::x", 10, 100), "\\x3a:error::x");
	/* One colon, or colons later in the value, are ordinary text. */
	assert_string_equal(escaped(&out, ":x::y", 5, 100), ":x::y");
	assert_string_equal(pmbot_log_show(&out, "::set-output name=a::b", 100),
		"\\x3a:set-output name=a::b");
	pmbot_buf_free(&out);
}

static void test_log__escape_sequences_and_invisible_controls_are_shown(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	/* ESC [ 2 J clears a terminal; 0x9b (C2 9B) is the one-character CSI. */
	const char s[] = "\x1b[2J\x1b]0;title\x07 \xc2\x9b" "31m \xe2\x80\xae" "evil \xe2\x80\xa8 \x7f";

	(void)state;
	assert_string_equal(escaped(&out, s, strlen(s), 100),
		"\\x1b[2J\\x1b]0;title\\x07 \\u009b31m \\u202eevil \\u2028 \\x7f");
	assert_one_line(&out);
	pmbot_buf_free(&out);
}

static void test_log__bytes_that_are_not_utf8_are_shown_as_bytes(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	/* A stray continuation, an overlong '/', a cut sequence at the end, a NUL. */
	const char s[] = "a\x80" "b\xc0\xaf" "c\0d\xe2\x82";

	(void)state;
	assert_string_equal(escaped(&out, s, sizeof(s) - 1, 100),
		"a\\x80b\\xc0\\xafc\\x00d\\xe2\\x82");
	/* Well-formed text outside ASCII passes as it is. */
	assert_string_equal(escaped(&out, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80", 14, 100),
		"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
	pmbot_buf_free(&out);
}

static void test_log__a_long_value_is_cut_with_a_count_of_what_was_left_out(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	size_t len = (size_t)20 << 20;
	char *big = malloc(len + 1);

	(void)state;
	assert_non_null(big);
	memset(big, 'i', len);
	big[len] = '\0';
	assert_string_equal(escaped(&out, "abcdef", 6, 3), "abc...[3 more bytes]");
	/* Characters are counted, not bytes: a cut never splits one. */
	assert_string_equal(escaped(&out, "\xc3\xa9\xc3\xa9\xc3\xa9", 6, 2),
		"\xc3\xa9\xc3\xa9...[2 more bytes]");
	assert_string_equal(escaped(&out, "abc", 3, 3), "abc");
	/* 20 MB in, a few hundred bytes out. */
	pmbot_log_show(&out, big, PMBOT_LOG_NAME_MAX);
	assert_true(out.len < PMBOT_LOG_NAME_MAX + 40);
	assert_non_null(strstr(out.buf, "...[20971220 more bytes]"));
	free(big);
	pmbot_buf_free(&out);
}

static void test_log__show_of_null_and_empty_text(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_string_equal(pmbot_log_show(&out, NULL, 10), "(null)");
	assert_string_equal(pmbot_log_show(&out, "", 10), "");
	pmbot_buf_free(&out);
}

static void test_log__format_of_a_hostile_diagnostic_is_one_capped_line(void **state)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;
	pmbot_buf out = PMBOT_BUF_INIT;
	size_t len = 100000, i, lines = 0;
	char *id = malloc(len + 1);

	(void)state;
	assert_non_null(id);
	memset(id, 'x', len);
	id[len] = '\0';
	memcpy(id, "x\n::error title=approved::y\n::add-mask::acme\n", 45);
	assert_int_equal(pmbot_diag_add(&list, PMBOT_SEV_ERROR, "CODE", "::warning::a\nb.md",
		"/tasks/0/x\ny", 3, 5, "stable_id '%s' is bad", id), 0);
	assert_int_equal(pmbot_diag_format(&out, &list.items[0]), 0);
	for (i = 0; i < out.len; i++)
		lines += out.buf[i] == '\n';
	assert_int_equal(lines, 1);
	assert_int_equal(out.buf[out.len - 1], '\n');
	assert_true(out.len < PMBOT_LOG_MESSAGE_MAX + 2 * PMBOT_LOG_NAME_MAX + 200);
	assert_memory_equal(out.buf, "\\x3a:warning::a\\x0ab.md:3:5: error CODE /tasks/0/x\\x0ay: "
		"stable_id 'x\\x0a::error title=approved::y\\x0a::add-mask::acme\\x0axxx", 108);
	assert_non_null(strstr(out.buf, "more bytes]\n"));
	pmbot_diag_list_free(&list);
	pmbot_buf_free(&out);
	free(id);
}

static void test_log__diag_show_escapes_backticks_and_cuts_with_dots(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_string_equal(pmbot_diag_show(&out, "a`b\nc", 100), "a\\x60b\\x0ac");
	assert_string_equal(pmbot_diag_show(&out, "abcdef", 3), "abc...");
	pmbot_buf_free(&out);
}


static const char *annotate(pmbot_buf *out, pmbot_severity sev, const char *code,
	const char *file, const char *path, int line, int col, const char *msg)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;

	assert_int_equal(pmbot_diag_add(&list, sev, code, file, path, line, col, "%s", msg), 0);
	pmbot_buf_clear(out);
	assert_int_equal(pmbot_diag_annotation(out, &list.items[0]), 0);
	pmbot_diag_list_free(&list);
	return out->buf;
}

static void test_annotation__error_and_warning_with_file_line_and_title(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;

	(void)state;
	assert_string_equal(annotate(&out, PMBOT_SEV_ERROR, "UNKNOWN_FEATURE",
		"docs/plans/q3.md", "/tasks/0/feature", 12, 3, "no feature 'x'"),
		"::error file=docs/plans/q3.md,line=12,col=3,title=UNKNOWN_FEATURE::"
		"/tasks/0/feature: no feature 'x'\n");
	assert_string_equal(annotate(&out, PMBOT_SEV_WARNING, "W", "a.md", "", 4, 0, "careful"),
		"::warning file=a.md,line=4,title=W::careful\n");
	/* Without a file, no line either: an annotation on no file is the run's. */
	assert_string_equal(annotate(&out, PMBOT_SEV_ERROR, "E", NULL, "/x", 4, 2, "m"),
		"::error title=E::/x: m\n");
	pmbot_buf_free(&out);
}

static void test_annotation__hostile_values_stay_in_their_place(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	const char *s, *sep;

	(void)state;
	s = annotate(&out, PMBOT_SEV_ERROR, "CODE", "a,line=1::b:c%.md", "/p,q:r",
		3, 0, "100% bad\r\n::error title=x::forged,: \x1b[31mred");
	assert_string_equal(s, "::error file=a%2Cline=1%3A%3Ab%3Ac%25.md,line=3,title=CODE::"
		"/p,q:r: 100%25 bad%0D%0A::error title=x::forged,: \\x1b[31mred\n");
	/* The first "::" after the command ends the properties: the runner's parse. */
	sep = strstr(s + 2, "::");
	assert_non_null(sep);
	assert_ptr_equal(sep, strstr(s, "title=CODE::") + strlen("title=CODE"));
	/* Exactly one line. */
	assert_ptr_equal(strchr(s, '\n'), s + out.len - 1);
	pmbot_buf_free(&out);
}

static void test_annotation__long_values_are_capped(void **state)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	size_t len = 50000;
	char *big = malloc(len + 1);

	(void)state;
	assert_non_null(big);
	memset(big, ',', len);
	big[len] = '\0';
	annotate(&out, PMBOT_SEV_ERROR, "CODE", big, big, 1, 1, big);
	/* Each ',' of the file is three bytes: capped at the name cap, not the input. */
	assert_true(out.len < 3 * PMBOT_LOG_NAME_MAX + 2 * PMBOT_LOG_NAME_MAX +
		PMBOT_LOG_MESSAGE_MAX + 200);
	assert_non_null(strstr(out.buf, "more bytes]"));
	assert_ptr_equal(strchr(out.buf, '\n'), out.buf + out.len - 1);
	free(big);
	pmbot_buf_free(&out);
}

static void test_annotation__a_full_buffer_leaves_the_output_as_it_was(void **state)
{
	pmbot_diag_list list = PMBOT_DIAG_LIST_INIT;
	pmbot_buf out;

	(void)state;
	pmbot_buf_init(&out, 20);
	assert_int_equal(pmbot_buf_puts(&out, "kept"), 0);
	assert_int_equal(pmbot_diag_add(&list, PMBOT_SEV_ERROR, "CODE", "f.md", "", 1, 0,
		"a message longer than the cap"), 0);
	assert_int_equal(pmbot_diag_annotation(&out, &list.items[0]), -1);
	assert_int_equal(out.len, 4);
	assert_memory_equal(out.buf, "kept", 4);
	pmbot_diag_list_free(&list);
	pmbot_buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diag__add_copies_strings_and_counts_severities),
		cmocka_unit_test(test_diag__add_grows_through_many_items_and_long_messages),
		cmocka_unit_test(test_diag__format_writes_every_known_part),
		cmocka_unit_test(test_diag__format_leaves_out_unknown_parts),
		cmocka_unit_test(test_diag__format_appends_to_existing_output),
		cmocka_unit_test(test_diag__format_reports_a_full_output_buffer),
		cmocka_unit_test(test_diag__move_appends_in_order_and_empties_the_source),
		cmocka_unit_test(test_diag__move_of_empty_source_changes_nothing),
		cmocka_unit_test(test_diag__set_file_fills_only_missing_files),
		cmocka_unit_test(test_diag__sort_orders_by_file_line_column_severity_code_path),
		cmocka_unit_test(test_diag__sort_is_stable_for_equal_keys),
		cmocka_unit_test(test_diag__sort_of_short_lists_is_harmless),
		cmocka_unit_test(test_diag__find_returns_the_first_match_or_null),
		cmocka_unit_test(test_diag__severity_names),
		cmocka_unit_test(test_log__newlines_and_carriage_returns_are_escaped),
		cmocka_unit_test(test_log__a_workflow_command_after_a_newline_stays_on_the_line),
		cmocka_unit_test(test_log__a_value_that_begins_with_two_colons_does_not_begin_a_command),
		cmocka_unit_test(test_log__escape_sequences_and_invisible_controls_are_shown),
		cmocka_unit_test(test_log__bytes_that_are_not_utf8_are_shown_as_bytes),
		cmocka_unit_test(test_log__a_long_value_is_cut_with_a_count_of_what_was_left_out),
		cmocka_unit_test(test_log__show_of_null_and_empty_text),
		cmocka_unit_test(test_log__format_of_a_hostile_diagnostic_is_one_capped_line),
		cmocka_unit_test(test_log__diag_show_escapes_backticks_and_cuts_with_dots),
		cmocka_unit_test(test_annotation__error_and_warning_with_file_line_and_title),
		cmocka_unit_test(test_annotation__hostile_values_stay_in_their_place),
		cmocka_unit_test(test_annotation__long_values_are_capped),
		cmocka_unit_test(test_annotation__a_full_buffer_leaves_the_output_as_it_was),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
