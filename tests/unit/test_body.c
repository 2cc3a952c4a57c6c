#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "pmbot/fs.h"
#include "pmbot/render.h"
#include "pmbot/text.h"
#include "pmbot/banned.h"

#define ZEROS64 "0000000000000000000000000000000000000000000000000000000000000000"
#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static pmbot_body parse(const char *text, pmbot_diag_list *d)
{
	pmbot_body b;

	assert_int_equal(pmbot_body_parse(&b, text, strlen(text), d), PMBOT_OK);
	return b;
}

static char *neutral(int (*fn)(pmbot_buf *, const char *, size_t), const char *s)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(fn(&b, s, strlen(s)), 0);
	return pmbot_buf_detach(&b, NULL);
}

/* ---- headings and values --------------------------------------------------- */

/* Reading one field gives that field, the marker and every heading as the full parse does. */
static void test_body__parse_only_reads_one_field_like_the_full_parse(void **state)
{
	const char *text = "<!-- pm-bot:id=task:a rev=" \
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef -->\n\n"
		"### Area\n\ncheckout\n\n### Blocked   BY\n\n\n  task:b, task:c  \n\n"
		"### Notes\nsome @\xe2\x80\x8cteam text\n\n### Blocked by\n\nlater\n";
	pmbot_body full, only;
	pmbot_diag_list d1 = PMBOT_DIAG_LIST_INIT, d2 = PMBOT_DIAG_LIST_INIT;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_body_parse(&full, text, strlen(text), &d1), 0);
	assert_int_equal(pmbot_body_parse_only(&only, text, strlen(text), &d2, "Blocked by"), 0);
	assert_int_equal(only.marker, PMBOT_MARKER_OK);
	assert_int_equal(only.marker, full.marker);
	assert_string_equal(only.stable_id, full.stable_id);
	assert_string_equal(only.rev, full.rev);
	assert_int_equal(only.marker_line, full.marker_line);
	assert_int_equal(d1.count, d2.count);
	assert_int_equal(only.n_fields, 4);
	assert_int_equal(only.n_fields, full.n_fields);
	for (i = 0; i < full.n_fields; i++) {
		assert_string_equal(only.fields[i].heading, full.fields[i].heading);
		assert_int_equal(only.fields[i].line, full.fields[i].line);
	}
	assert_string_equal(pmbot_body_get(&only, "Blocked by"), "task:b, task:c");
	assert_string_equal(pmbot_body_get(&only, "Blocked by"), pmbot_body_get(&full, "Blocked by"));
	assert_string_equal(only.fields[3].value, "later");
	/* The fields not asked for are not read. */
	assert_string_equal(pmbot_body_get(&full, "Area"), "checkout");
	assert_string_equal(pmbot_body_get(&only, "Area"), "");
	assert_string_equal(pmbot_body_get(&only, "Notes"), "");
	pmbot_body_free(&full);
	pmbot_body_free(&only);
	pmbot_diag_list_free(&d1);
	pmbot_diag_list_free(&d2);
}

static void test_body__value_is_the_first_non_empty_line_trimmed(void **state)
{
	pmbot_body b = parse("intro\n### Area\n\n   core  \nsecond line\n### Priority\nP1", NULL);

	(void)state;
	assert_int_equal(b.n_fields, 2);
	assert_string_equal(b.fields[0].heading, "Area");
	assert_int_equal(b.fields[0].line, 2);
	assert_string_equal(pmbot_body_get(&b, "Area"), "core");
	assert_string_equal(pmbot_body_get(&b, "Priority"), "P1");
	assert_null(pmbot_body_get(&b, "Size"));
	assert_int_equal(b.marker, PMBOT_MARKER_NONE);
	pmbot_body_free(&b);
}

static void test_body__reads_bodies_written_by_github_forms(void **state)
{
	/* What GitHub itself writes: a blank line after every heading. */
	pmbot_body b = parse("### Goal\n\nFaster runs\n\n### Area\n\ncore\n\n### Size\n\n_No response_\n", NULL);

	(void)state;
	assert_string_equal(pmbot_body_get(&b, "Goal"), "Faster runs");
	assert_string_equal(pmbot_body_get(&b, "Area"), "core");
	assert_string_equal(pmbot_body_get(&b, "Size"), "");
	pmbot_body_free(&b);
}

static void test_body__no_response_means_empty(void **state)
{
	pmbot_body b = parse("### Risk\n  _No response_  \n### Area\n\\_No response\\_\n", NULL);

	(void)state;
	assert_string_equal(pmbot_body_get(&b, "Risk"), "");
	assert_string_equal(pmbot_body_get(&b, "Area"), "\\_No response\\_");
	pmbot_body_free(&b);
}

static void test_body__crlf_and_cr_line_endings_work(void **state)
{
	pmbot_body a = parse("### Area\r\ncore\r\n\r\n### Priority\r\n\r\nP1\r\n", NULL);
	pmbot_body b = parse("### Area\rcore\r\r### Priority\rP1\r", NULL);

	(void)state;
	assert_string_equal(pmbot_body_get(&a, "Area"), "core");
	assert_string_equal(pmbot_body_get(&a, "Priority"), "P1");
	assert_int_equal(a.fields[1].line, 4);
	assert_string_equal(pmbot_body_get(&b, "Area"), "core");
	assert_string_equal(pmbot_body_get(&b, "Priority"), "P1");
	pmbot_body_free(&a);
	pmbot_body_free(&b);
}

static void test_body__headings_match_ignoring_case_and_whitespace(void **state)
{
	pmbot_body b = parse("  ###   estimate   (HRS)  \n4\n###\tBlocked  by\n#1\n", NULL);

	(void)state;
	assert_string_equal(b.fields[0].heading, "estimate   (HRS)");
	assert_string_equal(pmbot_body_get(&b, "Estimate (hrs)"), "4");
	assert_string_equal(pmbot_body_get(&b, " blocked by "), "#1");
	assert_true(pmbot_body_heading_eq("Blocked by", "BLOCKED\tBY"));
	assert_false(pmbot_body_heading_eq("Blocked by", "Blockedby"));
	assert_false(pmbot_body_heading_eq("Area", "Area 2"));
	pmbot_body_free(&b);
}

static void test_body__size_epic_is_read_as_size(void **state)
{
	pmbot_body b = parse("### Size (Epic)\nXL\n", NULL);

	(void)state;
	assert_string_equal(pmbot_body_get(&b, "Size"), "XL");
	assert_string_equal(pmbot_body_get(&b, "size (epic)"), "XL");
	assert_true(pmbot_body_heading_eq("Size", "  size  (EPIC) "));
	pmbot_body_free(&b);
}

static void test_body__a_heading_before_any_value_leaves_it_empty(void **state)
{
	pmbot_body b = parse("### Area\n\n### Priority\nP1\n### Size\n## Notes\nM\n"
		"### Risk\n#### Deeper\nHigh\n", NULL);

	(void)state;
	assert_int_equal(b.n_fields, 4);
	assert_string_equal(pmbot_body_get(&b, "Area"), "");
	assert_string_equal(pmbot_body_get(&b, "Priority"), "P1");
	assert_string_equal(pmbot_body_get(&b, "Size"), "");
	assert_string_equal(pmbot_body_get(&b, "Risk"), "");
	pmbot_body_free(&b);
}

static void test_body__escaped_and_inline_hashes_are_not_headings(void **state)
{
	pmbot_body b = parse("### Risk\n\\### Area\n### Blocked by\n#12, #13\n###Area\nx\n", NULL);

	(void)state;
	assert_int_equal(b.n_fields, 2);
	assert_string_equal(pmbot_body_get(&b, "Risk"), "\\### Area");
	assert_string_equal(pmbot_body_get(&b, "Blocked by"), "#12, #13");
	pmbot_body_free(&b);
}

static void test_body__first_of_two_equal_headings_wins(void **state)
{
	pmbot_body b = parse("### Area\none\n### area\ntwo\n", NULL);

	(void)state;
	assert_int_equal(b.n_fields, 2);
	assert_string_equal(pmbot_body_get(&b, "Area"), "one");
	assert_string_equal(b.fields[1].value, "two");
	pmbot_body_free(&b);
}

static void test_body__empty_body_has_nothing(void **state)
{
	pmbot_body b;

	(void)state;
	assert_int_equal(pmbot_body_parse(&b, "", 0, NULL), 0);
	assert_int_equal(b.n_fields, 0);
	assert_int_equal(b.marker, PMBOT_MARKER_NONE);
	pmbot_body_free(&b);
}

static void test_body__length_is_respected_without_nul(void **state)
{
	const char text[] = "### Area\ncore\n### Priority\nP1";
	pmbot_body b;

	(void)state;
	assert_int_equal(pmbot_body_parse(&b, text, 13, NULL), 0); /* "### Area\ncore" */
	assert_int_equal(b.n_fields, 1);
	assert_string_equal(b.fields[0].value, "core");
	pmbot_body_free(&b);
}

/* ---- marker ------------------------------------------------------------------ */

static void test_body__reads_the_marker(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_body b = parse("### Area\ncore\n\n<!-- pm-bot:id=feat:a rev=" HEX64 " -->", &d);

	(void)state;
	assert_int_equal(d.count, 0);
	assert_int_equal(b.marker, PMBOT_MARKER_OK);
	assert_string_equal(b.stable_id, "feat:a");
	assert_string_equal(b.rev, HEX64);
	assert_int_equal(b.marker_line, 4);
	assert_string_equal(pmbot_body_get(&b, "Area"), "core");
	pmbot_body_free(&b);
	pmbot_diag_list_free(&d);
}

static void test_body__marker_spacing_is_tolerated(void **state)
{
	pmbot_body a = parse("  <!--pm-bot:id=x rev=" HEX64 "-->  \r\n", NULL);
	pmbot_body b = parse("<!--\tpm-bot:id=x\t rev=" HEX64 "\t-->", NULL);

	(void)state;
	assert_int_equal(a.marker, PMBOT_MARKER_OK);
	assert_string_equal(a.stable_id, "x");
	assert_int_equal(b.marker, PMBOT_MARKER_OK);
	pmbot_body_free(&a);
	pmbot_body_free(&b);
}

static void test_body__malformed_markers_are_reported(void **state)
{
	static const char *const bad[] = {
		"<!-- pm-bot:id=x rev=" ZEROS64 "0 -->",          /* 65 hex */
		"<!-- pm-bot:id=x rev=" "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef" " -->",
		"<!-- pm-bot:id=x rev=abc -->",
		"<!-- pm-bot:id=x -->",
		"<!-- pm-bot:id= rev=" ZEROS64 " -->",
		"<!-- pm-bot:id=a-->b rev=" ZEROS64 " -->",
		"<!-- pm-bot:id=x rev=" ZEROS64 " --> trailing",
		("<!-- pm-bot:id=x rev=" ZEROS64), /* no end */
		"<!-- pm-bot:identity=x -->",
		"<!-- pm-bot:id=a\x01b rev=" ZEROS64 " -->",  /* a control character in the id */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
		char text[512];
		pmbot_body b;
		const pmbot_diag *w;

		snprintf(text, sizeof(text), "### Area\ncore\n%s\n", bad[i]);
		b = parse(text, &d);
		assert_int_equal(b.marker, PMBOT_MARKER_MALFORMED);
		assert_null(b.stable_id);
		assert_string_equal(b.rev, "");
		w = pmbot_diag_list_find(&d, "BODY_MARKER_MALFORMED");
		assert_non_null(w);
		assert_int_equal(w->severity, PMBOT_SEV_WARNING);
		assert_int_equal(w->line, 3);
		pmbot_body_free(&b);
		pmbot_diag_list_free(&d);
	}
}

static void test_body__two_markers_are_reported(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_body b = parse("<!-- pm-bot:id=a rev=" HEX64 " -->\n### Area\ncore\n"
		"<!-- pm-bot:id=b rev=" HEX64 " -->\n", &d);
	const pmbot_diag *w;

	(void)state;
	assert_int_equal(b.marker, PMBOT_MARKER_MULTIPLE);
	assert_null(b.stable_id);
	assert_int_equal(b.marker_line, 1);
	w = pmbot_diag_list_find(&d, "BODY_MARKER_MULTIPLE");
	assert_non_null(w);
	assert_int_equal(w->line, 4);
	pmbot_body_free(&b);
	pmbot_diag_list_free(&d);
}

static void test_body__a_marker_inside_a_line_is_text(void **state)
{
	pmbot_body b = parse("### Risk\nsee <!-- pm-bot:id=a rev=" HEX64 " -->\n"
		"<!-- just a comment -->\n", NULL);

	(void)state;
	assert_int_equal(b.marker, PMBOT_MARKER_NONE);
	pmbot_body_free(&b);
}

static void test_body__a_marker_line_is_never_a_value(void **state)
{
	pmbot_body b = parse("### Area\n<!-- pm-bot:id=a rev=" HEX64 " -->\ncore\n", NULL);

	(void)state;
	assert_string_equal(pmbot_body_get(&b, "Area"), "");
	assert_int_equal(b.marker, PMBOT_MARKER_OK);
	pmbot_body_free(&b);
}

static void test_body__reads_the_marker_first_and_last_alike(void **state)
{
	static const char *const bodies[] = {
		/* pm-bot's layout: the marker, a blank line, the sections */
		"<!-- pm-bot:id=task:a rev=" HEX64 " -->\n\n### Area\ncore\n\n### Blocked by\ntask:b",
		/* the layout before it: the marker last, after the last section */
		"### Area\ncore\n\n### Blocked by\ntask:b\n\n<!-- pm-bot:id=task:a rev=" HEX64 " -->",
		/* and with nothing after it at all */
		"### Area\ncore\n\n### Blocked by\ntask:b\n<!-- pm-bot:id=task:a rev=" HEX64 " -->\n",
		"\r\n<!-- pm-bot:id=task:a rev=" HEX64 " -->\r\n\r\n### Area\r\ncore\r\n"
			"\r\n### Blocked by\r\ntask:b\r\n",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
		pmbot_body b = parse(bodies[i], &d);

		assert_int_equal(d.count, 0);
		assert_int_equal(b.marker, PMBOT_MARKER_OK);
		assert_string_equal(b.stable_id, "task:a");
		assert_string_equal(b.rev, HEX64);
		assert_int_equal(b.n_fields, 2);
		assert_string_equal(pmbot_body_get(&b, "Area"), "core");
		/* The last section's value is its text, never the marker after it. */
		assert_string_equal(pmbot_body_get(&b, "Blocked by"), "task:b");
		pmbot_body_free(&b);
		pmbot_diag_list_free(&d);
	}
}

static void test_body__a_marker_closing_an_empty_last_section_is_no_value(void **state)
{
	pmbot_body b = parse("### Area\ncore\n\n### Links\n\n<!-- pm-bot:id=a rev=" HEX64 " -->\n"
		"\n", NULL);

	(void)state;
	assert_int_equal(b.marker, PMBOT_MARKER_OK);
	assert_int_equal(b.marker_line, 6);
	assert_string_equal(pmbot_body_get(&b, "Links"), "");
	pmbot_body_free(&b);
}

/* ---- rev --------------------------------------------------------------------- */

static void rev_of(char out[PMBOT_SHA256_HEX_SIZE], const char *body)
{
	assert_int_equal(pmbot_body_rev(out, body, strlen(body)), 0);
}

/* A body with only LF line ends (hashed as it is) and the same with CRLF (read line by line) have one rev. */
static void test_body__rev_of_lf_and_crlf_bodies_agree(void **state)
{
	static const char *const bodies[] = {
		"", "a", "a\n", "a \t\n\n \n", "\n\na\n\tb  \n\n", "### X\n\nv\n\n### Y\n_No response_\n",
		" lead\n\n\nmid\t\n end \t",
	};
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		char lf[PMBOT_SHA256_HEX_SIZE], crlf[PMBOT_SHA256_HEX_SIZE];
		pmbot_buf b = PMBOT_BUF_INIT;

		for (k = 0; bodies[i][k]; k++)
			assert_int_equal(bodies[i][k] == '\n' ? pmbot_buf_puts(&b, "\r\n")
				: pmbot_buf_putc(&b, bodies[i][k]), 0);
		assert_int_equal(pmbot_body_rev(lf, bodies[i], strlen(bodies[i])), 0);
		assert_int_equal(pmbot_body_rev(crlf, b.buf ? b.buf : "", b.len), 0);
		assert_string_equal(lf, crlf);
		pmbot_buf_free(&b);
	}
}

static void test_body__rev_hashes_the_body_without_its_marker(void **state)
{
	char want[PMBOT_SHA256_HEX_SIZE], got[PMBOT_SHA256_HEX_SIZE];
	const char *content = "### Area\ncore\n\n### Risk\nLow";

	(void)state;
	assert_int_equal(pmbot_sha256_hex(want, content, strlen(content)), 0);
	rev_of(got, "### Area\ncore\n\n### Risk\nLow\n\n<!-- pm-bot:id=a rev=" ZEROS64 " -->");
	assert_string_equal(got, want);
	rev_of(got, "### Area\r\ncore\r\n\r\n### Risk\r\nLow\r\n\r\n<!-- pm-bot:id=a rev=" ZEROS64 " -->\r\n");
	assert_string_equal(got, want);
	rev_of(got, "<!-- pm-bot:id=a rev=" ZEROS64 " -->\n### Area\ncore\n\n### Risk\nLow  \n\n");
	assert_string_equal(got, want);
	rev_of(got, content);
	assert_string_equal(got, want);
}

static void test_body__rev_changes_when_a_human_edits_the_body(void **state)
{
	char a[PMBOT_SHA256_HEX_SIZE], b[PMBOT_SHA256_HEX_SIZE];

	(void)state;
	rev_of(a, "### Area\ncore\n\n<!-- pm-bot:id=a rev=" ZEROS64 " -->");
	rev_of(b, "### Area\ncores\n\n<!-- pm-bot:id=a rev=" ZEROS64 " -->");
	assert_string_not_equal(a, b);
	rev_of(b, "### Area\ncore\n\n<!-- pm-bot:id=b rev=" HEX64 " -->");
	assert_string_equal(a, b);
	rev_of(b, "  ### Area\ncore\n\n<!-- pm-bot:id=a rev=" ZEROS64 " -->");
	assert_string_not_equal(a, b);
}

static void test_body__rev_is_the_same_with_the_marker_first_or_last(void **state)
{
	char want[PMBOT_SHA256_HEX_SIZE], got[PMBOT_SHA256_HEX_SIZE];
	const char *content = "### Area\ncore\n\n### Blocked by\ntask:b";

	(void)state;
	/* A body written before the move keeps its rev: the hash of its sections. */
	assert_int_equal(pmbot_sha256_hex(want, content, strlen(content)), 0);
	rev_of(got, "### Area\ncore\n\n### Blocked by\ntask:b\n\n<!-- pm-bot:id=a rev=" ZEROS64 " -->");
	assert_string_equal(got, want);
	rev_of(got, "<!-- pm-bot:id=a rev=" ZEROS64 " -->\n\n### Area\ncore\n\n### Blocked by\ntask:b");
	assert_string_equal(got, want);
	/* Blank lines between a leading marker and the text count as little as those after it. */
	rev_of(got, "<!-- pm-bot:id=a rev=" ZEROS64 " -->\n \t\n\r\n### Area\ncore\n\n### Blocked by\ntask:b\n\n");
	assert_string_equal(got, want);
	rev_of(got, "<!-- pm-bot:id=a rev=" ZEROS64 " -->\n### Area\ncore\n\n### Blocked by\ntask:b");
	assert_string_equal(got, want);
	/* Blank lines inside still count, and so does the first line's indentation. */
	rev_of(got, "<!-- pm-bot:id=a rev=" ZEROS64 " -->\n\n### Area\ncore\n\n\n### Blocked by\ntask:b");
	assert_string_not_equal(got, want);
	rev_of(got, "<!-- pm-bot:id=a rev=" ZEROS64 " -->\n\n ### Area\ncore\n\n### Blocked by\ntask:b");
	assert_string_not_equal(got, want);
	/* Without a marker before them they count: the revs of bodies written before the move stay. */
	assert_int_equal(pmbot_sha256_hex(want, "\n### Area\ncore", 14), 0);
	rev_of(got, "\n### Area\ncore\n\n<!-- pm-bot:id=a rev=" ZEROS64 " -->");
	assert_string_equal(got, want);
}

/* ---- hours ------------------------------------------------------------------- */

static void test_body__hours_accept_plain_approximate_and_unit_forms(void **state)
{
	static const struct {
		const char *text;
		double want;
	} ok[] = {
		{ "4", 4 }, { "4.5", 4.5 }, { "~4", 4 }, { "4 hrs", 4 }, { "4h", 4 },
		{ "  ~ 12.25 Hours ", 12.25 }, { ".5", 0.5 }, { "3.", 3 }, { "1e3", 1000 },
		{ "2.5e-1hr", 0.25 }, { "0", 0 }, { "7 hour", 7 }, { "-2", -2 }, { "10HRS", 10 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		double d = -99;

		if (pmbot_body_parse_hours(&d, ok[i].text) != 0)
			fail_msg("\"%s\" did not parse", ok[i].text);
		assert_true(d == ok[i].want);
	}
}

static void test_body__hours_reject_anything_else(void **state)
{
	static const char *const bad[] = { "", "  ", "abc", "4 days", "4..5", "inf", "nan",
		"0x10", "~", "4 h r", "four", "4,5", "1e999", "h", "4 hrs!", "--4", "4e" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		double d = 123;

		if (pmbot_body_parse_hours(&d, bad[i]) != PMBOT_EINVALID)
			fail_msg("\"%s\" parsed", bad[i]);
		assert_true(d == 123);
	}
}

/* ---- neutralisation ---------------------------------------------------------- */

static void expect_neutral(int (*fn)(pmbot_buf *, const char *, size_t), const char *in,
	const char *want)
{
	char *got = neutral(fn, in);

	assert_string_equal(got, want);
	free(got);
}

static void test_body__title_neutralisation_collapses_whitespace(void **state)
{
	(void)state;
	expect_neutral(pmbot_render_neutralise_title, "  a\r\n\tb  c\xe2\x80\xa8" "d\x01 ", "a b c d");
	expect_neutral(pmbot_render_neutralise_title, "### x --> y", "### x --> y");
	expect_neutral(pmbot_render_neutralise_title, " \n ", "");
}

static void test_body__line_neutralisation_defuses_headings_and_comments(void **state)
{
	int (*fn)(pmbot_buf *, const char *, size_t) = pmbot_render_neutralise_line;

	(void)state;
	expect_neutral(fn, "Low\n### Priority\nP0", "Low ### Priority P0");
	expect_neutral(fn, "### Priority", "\\### Priority");
	expect_neutral(fn, "\n  #\n", "\\#");
	expect_neutral(fn, "####### x", "####### x");
	expect_neutral(fn, "#12, #13", "#12, #13");
	expect_neutral(fn, "a --> b <!-- c --!> d", "a --&gt; b &lt;!-- c --!&gt; d");
	expect_neutral(fn, "<!-->", "&lt;!--&gt;");
	expect_neutral(fn, "```js", "\\```js");
	expect_neutral(fn, "~~~", "\\~~~");
	expect_neutral(fn, "<pre>", "&lt;pre>");
	expect_neutral(fn, "<SCRIPT src=x>", "&lt;SCRIPT src=x>");
	expect_neutral(fn, "<?php", "&lt;?php");
	expect_neutral(fn, "<div>", "<div>");
	expect_neutral(fn, "<preview>", "<preview>");
	expect_neutral(fn, " _No response_ ", "");
	expect_neutral(fn, "_No response_ x", "_No response_ x");
}

static void test_body__block_neutralisation_keeps_lines_but_defuses_them(void **state)
{
	int (*fn)(pmbot_buf *, const char *, size_t) = pmbot_render_neutralise_block;

	(void)state;
	expect_neutral(fn, "\n\n  first  \r\n\r\n\r\n  ## second\rthird\xc2\x85" "fourth\n\n",
		"  first\n\n  \\## second\nthird\nfourth");
	expect_neutral(fn, "_No response_\nmore", "\\_No response\\_\nmore");
	expect_neutral(fn, "x\n<!-- pm-bot:id=a rev=" ZEROS64 " -->",
		"x\n&lt;!-- pm-bot:id=a rev=" ZEROS64 " --&gt;");
	expect_neutral(fn, "code:\n```\n### x\n```", "code:\n\\```\n\\### x\n\\```");
	expect_neutral(fn, "a\tb\x01", "a\tb");
	expect_neutral(fn, " \n\t\n", "");
}

static const char *const hostile[] = {
	"", " ", "_No response_", "### Area", "<!-->", "<!--->", "--!>", "-->-->", "<!--<!--",
	"\\### x", "\\\\### x", "#", "  #  ", "```", "  ~~~~", "<pre", "<!DOCTYPE html>",
	"a\r\n### b\r\n<!-- pm-bot:id=x rev=" ZEROS64 " -->\r\n", "\xe2\x80\xa9###",
	"--&gt;", "&lt;!--", "_No response_\n_No response_", "x\n\n\n\ny",
};

static void test_body__neutralisation_is_idempotent(void **state)
{
	int (*fns[])(pmbot_buf *, const char *, size_t) = { pmbot_render_neutralise_title,
		pmbot_render_neutralise_line, pmbot_render_neutralise_block };
	size_t i, f;

	(void)state;
	for (f = 0; f < 3; f++) {
		for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
			char *once = neutral(fns[f], hostile[i]);
			char *twice = neutral(fns[f], once);

			assert_string_equal(once, twice);
			free(once);
			free(twice);
		}
	}
}

static void test_body__neutralised_values_hold_no_comment_delimiter(void **state)
{
	int (*fns[])(pmbot_buf *, const char *, size_t) = { pmbot_render_neutralise_line,
		pmbot_render_neutralise_block };
	size_t i, f;

	(void)state;
	for (f = 0; f < 2; f++) {
		for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
			char *out = neutral(fns[f], hostile[i]);

			assert_null(strstr(out, "<!--"));
			assert_null(strstr(out, "-->"));
			assert_null(strstr(out, "--!>"));
			free(out);
		}
	}
}

/* ---- property: parse(render(item)) gives back the tracked fields ------------ */

/*
 * The reference model below restates docs/issue-format.md independently of
 * src/render/: what a tracked value, a title and the "Blocked by" list look
 * like after neutralisation.
 */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, no libc rand() state. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static size_t below(size_t n)
{
	return (size_t)(rnd() % n);
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	assert_non_null(p);
	return p;
}

static char *replace_all(char *s, const char *from, const char *to)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t fl = strlen(from);
	const char *p = s, *hit;

	while ((hit = strstr(p, from))) {
		assert_int_equal(pmbot_buf_put(&b, p, (size_t)(hit - p)), 0);
		assert_int_equal(pmbot_buf_puts(&b, to), 0);
		p = hit + fl;
	}
	assert_int_equal(pmbot_buf_puts(&b, p), 0);
	free(s);
	return pmbot_buf_detach(&b, NULL);
}

static char *ref_collapse(const char *s)
{
	size_t n = strlen(s), i, o = 0;
	char *tmp = malloc(n + 1), *out = malloc(n + 1);
	size_t k = 0;

	assert_non_null(tmp);
	assert_non_null(out);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f) {
			tmp[k++] = ' ';
		} else if (c == 0xc2 && (unsigned char)s[i + 1] == 0x85) {
			tmp[k++] = ' ';
			i++;
		} else if (c == 0xe2 && (unsigned char)s[i + 1] == 0x80 &&
			   ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
			tmp[k++] = ' ';
			i += 2;
		} else {
			tmp[k++] = (char)c;
		}
	}
	for (i = 0; i < k; i++) {
		if (tmp[i] == ' ' && (o == 0 || out[o - 1] == ' '))
			continue;
		out[o++] = tmp[i];
	}
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
	free(tmp);
	return out;
}

static char *ref_line(const char *s)
{
	char *t = ref_collapse(s);
	size_t h = 0;

	if (!strcmp(t, "_No response_")) {
		t[0] = '\0';
		return t;
	}
	t = replace_all(t, "<!--", "&lt;!--");
	t = replace_all(t, "-->", "--&gt;");
	t = replace_all(t, "--!>", "--!&gt;");
	while (t[h] == '#')
		h++;
	if ((h >= 1 && h <= 6 && (t[h] == ' ' || t[h] == '\0')) ||
	    !strncmp(t, "```", 3) || !strncmp(t, "~~~", 3)) {
		char *e = malloc(strlen(t) + 2);

		assert_non_null(e);
		e[0] = '\\';
		memcpy(e + 1, t, strlen(t) + 1);
		free(t);
		return e;
	}
	if (t[0] == '<') {
		static const char *const tags[] = { "pre", "script", "style", "textarea" };
		int esc = t[1] == '!' || t[1] == '?';
		size_t i;

		for (i = 0; i < 4 && !esc; i++) {
			size_t k = strlen(tags[i]);

			esc = !strncasecmp(t + 1, tags[i], k) &&
				(t[1 + k] == '\0' || t[1 + k] == ' ' || t[1 + k] == '>');
		}
		if (esc) {
			char *e = malloc(strlen(t) + 4);

			assert_non_null(e);
			memcpy(e, "&lt;", 4);
			memcpy(e + 4, t + 1, strlen(t));
			free(t);
			return e;
		}
	}
	return t;
}

static size_t chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static const char *const frags[] = {
	"\n", "\r\n", "\r", "###", "### Area", "## x", "#", "#12", "-->", "<!--", "--!>",
	"<!-- pm-bot:id=evil rev=" ZEROS64 " -->", "_No response_", " ", "  ", "\t", "\v", "\f",
	"\x01", "\x7f", "\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x99\x82",
	"\xe2\x80\xa8", "\xe2\x80\xa9", "\xc2\x85", "\xc2\xa0", "```", "~~~", "<pre>", "<script>",
	"<?php", "<!DOCTYPE", "<div>", "\\", "\\_", "&lt;", ",", ", ", "- [ ] ", "P1", "core",
	">", "-", "--", "<", "!", "_", "*", "|", "[x]", "@user", "4.5", "~4", "Size (Epic)",
	"https://github.com/acme/x/issues/7", "Low", "Med", "High",
};

static void put_word(pmbot_buf *b)
{
	size_t n = 1 + below(8), i;

	for (i = 0; i < n; i++)
		assert_int_equal(pmbot_buf_putc(b, (char)('a' + below(26))), 0);
}

/* A hostile string of up to about `max` bytes. */
static char *gen_string(size_t max)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t mode = below(100), n, i;

	if (mode < 8) {
		static const char *const pads[] = { "", " ", "\t", "\n", " \r\n " };

		assert_int_equal(pmbot_buf_printf(&b, "%s_No response_%s", pads[below(5)],
			pads[below(5)]), 0);
	} else if (mode < 12) {
		static const char *const blank[] = { "", " ", "\n\n", "\t \r\n" };

		assert_int_equal(pmbot_buf_puts(&b, blank[below(4)]), 0);
	} else {
		n = mode < 17 ? max / 4 : 1 + below(8);
		for (i = 0; i < n && b.len < max; i++) {
			if (below(3))
				assert_int_equal(pmbot_buf_puts(&b, frags[below(sizeof(frags) /
					sizeof(frags[0]))]), 0);
			else
				put_word(&b);
		}
	}
	return pmbot_buf_detach(&b, NULL);
}

static void set_str(json_t *o, const char *key, char *s)
{
	assert_int_equal(json_object_set_new(o, key, json_string(s)), 0);
	free(s);
}

typedef struct {
	char *id;
	int unsafe_id;
	int huge;
} gen_item;

static json_t *gen_node(gen_item *it, size_t index)
{
	static const char *const unsafe[] = { "a b", "x-->", "t\tt", "<!--x", "y--!>",
		"\xe2\x80\xa8", "z\n" };
	json_t *o = json_object();
	char id[64];

	assert_non_null(o);
	it->unsafe_id = below(50) == 0;
	it->huge = below(200) == 0;
	if (it->unsafe_id)
		snprintf(id, sizeof(id), "n%zu%s", index, unsafe[below(sizeof(unsafe) / sizeof(unsafe[0]))]);
	else
		snprintf(id, sizeof(id), below(2) ? "task:n%zu" : "\xc3\xa9:%zu", index);
	it->id = xstrdup(id);
	assert_int_equal(json_object_set_new(o, "stable_id", json_string(id)), 0);
	set_str(o, "title", gen_string(below(30) ? 120 : 600));
	set_str(o, "area", gen_string(below(10) ? 30 : 120));
	set_str(o, "priority", gen_string(below(10) ? 20 : 80));
	if (below(3))
		set_str(o, "size", gen_string(below(10) ? 20 : 80));
	if (below(3))
		set_str(o, "status", gen_string(30));
	if (it->huge) {
		char *big = malloc(70001);

		assert_non_null(big);
		memset(big, 'r', 70000);
		big[70000] = '\0';
		set_str(o, "risk", big);
	} else if (below(3)) {
		set_str(o, "risk", gen_string(below(5) ? 200 : 3000));
	}
	switch (below(5)) {
	case 0:
		assert_int_equal(json_object_set_new(o, "estimate_hrs",
			json_integer((json_int_t)below(100000))), 0);
		break;
	case 1:
		assert_int_equal(json_object_set_new(o, "estimate_hrs",
			json_real((double)below(1000) / 8.0)), 0);
		break;
	case 2: {
		double r = (double)(rnd() >> 11) / 9007199254740992.0;
		static const double scale[] = { 1e-7, 1.0, 1e3, 1e6, 1e21 };

		assert_int_equal(json_object_set_new(o, "estimate_hrs",
			json_real(r * scale[below(5)])), 0);
		break;
	}
	default:
		break;
	}
	if (below(2))
		set_str(o, "goal", gen_string(below(5) ? 300 : 3000));
	if (below(3))
		set_str(o, "objective", gen_string(300));
	if (below(2)) {
		json_t *ac = json_array();
		size_t n = below(5), i;

		for (i = 0; i < n; i++) {
			char *c = gen_string(300);

			assert_int_equal(json_array_append_new(ac, json_string(c)), 0);
			free(c);
		}
		assert_int_equal(json_object_set_new(o, "acceptance_criteria", ac), 0);
	}
	assert_int_equal(json_object_set_new(o, "needs_human", json_boolean(below(2))), 0);
	return o;
}

static char *ref_estimate(const json_t *v)
{
	char tmp[64];
	int prec;

	if (json_is_integer(v)) {
		snprintf(tmp, sizeof(tmp), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return xstrdup(tmp);
	}
	if (!json_is_real(v))
		return xstrdup("");
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, json_real_value(v));
		if (strtod(tmp, NULL) == json_real_value(v))
			break;
	}
	return xstrdup(tmp);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *ref_deps(const pmbot_workgraph *g, const char *id, const pmbot_strmap *refs)
{
	const char *list[64];
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t i, n = 0;
	char *joined, *out;

	for (i = 0; i < g->n_edges; i++) {
		const pmbot_wg_edge *e = &g->edges[i];
		void *r = NULL;

		if (strcmp(e->from_id, id) || (e->type != PMBOT_EDGE_DEPENDS_ON &&
					       e->type != PMBOT_EDGE_BLOCKED_BY))
			continue;
		assert_true(n < 64);
		list[n++] = pmbot_strmap_get(refs, e->to_id, &r) ? r : e->to_id;
	}
	qsort(list, n, sizeof(list[0]), cmp_str);
	for (i = 0; i < n; i++) {
		if (i && !strcmp(list[i], list[i - 1]))
			continue;
		if (b.len)
			assert_int_equal(pmbot_buf_puts(&b, ", "), 0);
		assert_int_equal(pmbot_buf_puts(&b, list[i]), 0);
	}
	joined = pmbot_buf_detach(&b, NULL);
	out = ref_line(joined);
	free(joined);
	return out;
}

static char *ref_member_line(const json_t *node, const char *key)
{
	const json_t *v = json_object_get(node, key);

	return json_is_string(v) ? ref_line(json_string_value(v)) : xstrdup("");
}

static int label_too_long(const json_t *node, const char *key, const char *prefix)
{
	const json_t *v = json_object_get(node, key);
	char *c;
	int over;

	if (!json_is_string(v))
		return 0;
	c = ref_collapse(json_string_value(v));
	over = c[0] && strlen(prefix) + chars(c) > 50;
	free(c);
	return over;
}

typedef struct {
	size_t renders, ok, unsafe_id, title_long, title_empty, label_long, body_long;
} stats;

static char *to_crlf(const char *s, size_t len, size_t *out_len)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] == '\n')
			assert_int_equal(pmbot_buf_putc(&b, '\r'), 0);
		assert_int_equal(pmbot_buf_putc(&b, s[i]), 0);
	}
	return pmbot_buf_detach(&b, out_len);
}

/* The node's workgraph/v1 object, which the reference reads (a new reference). */
static json_t *node_obj(const pmbot_wg_node *n)
{
	json_t *j = NULL;

	assert_int_equal(pmbot_workgraph_node_json(&j, n), PMBOT_OK);
	return j;
}

/* The expected value under one form heading, or NULL when not tracked. */
static char *expected_value(const pmbot_form_field *f, const pmbot_workgraph *g,
	const pmbot_wg_node *n, const json_t *nj, const pmbot_strmap *refs)
{
	switch (f->kind) {
	case PMBOT_FIELD_AREA: return ref_member_line(nj, "area");
	case PMBOT_FIELD_PRIORITY: return ref_member_line(nj, "priority");
	case PMBOT_FIELD_SIZE: return ref_member_line(nj, "size");
	case PMBOT_FIELD_RISK: return ref_member_line(nj, "risk");
	case PMBOT_FIELD_STATUS: return ref_member_line(nj, "status");
	case PMBOT_FIELD_ESTIMATE: return ref_estimate(json_object_get(nj, "estimate_hrs"));
	case PMBOT_FIELD_BLOCKED_BY: return ref_deps(g, n->stable_id, refs);
	case PMBOT_FIELD_ACTUAL:
	case PMBOT_FIELD_OTHER: return xstrdup("");
	default: return NULL;
	}
}

static void check_round_trip(const pmbot_rendered_issue *iss, const pmbot_form *form,
	const pmbot_workgraph *g, const pmbot_wg_node *n, const pmbot_strmap *refs)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf unlinked = PMBOT_BUF_INIT, back = PMBOT_BUF_INIT;
	char rev[PMBOT_SHA256_HEX_SIZE], *title, *crlf;
	const char *rest, *p;
	pmbot_body b, c;
	size_t i, crlf_len;
	json_t *nj = node_obj(n);

	assert_int_equal(pmbot_body_parse(&b, iss->body, iss->body_len, &d), 0);
	assert_int_equal(d.count, 0);
	crlf = to_crlf(iss->body, iss->body_len, &crlf_len);
	assert_int_equal(pmbot_body_parse(&c, crlf, crlf_len, &d), 0);
	assert_int_equal(d.count, 0);

	/* Exactly the form's headings: nothing injected, nothing lost. */
	assert_int_equal(b.n_fields, form->n_fields);
	assert_int_equal(c.n_fields, form->n_fields);
	for (i = 0; i < form->n_fields; i++) {
		char *want = expected_value(&form->fields[i], g, n, nj, refs);

		assert_string_equal(b.fields[i].heading, form->fields[i].label);
		assert_string_equal(pmbot_body_get(&b, form->fields[i].label), b.fields[i].value);
		if (want) {
			assert_string_equal(b.fields[i].value, want);
			assert_string_equal(c.fields[i].value, want);
			if (form->fields[i].kind == PMBOT_FIELD_ESTIMATE && want[0]) {
				const json_t *e = json_object_get(nj, "estimate_hrs");
				double h;

				assert_int_equal(pmbot_body_parse_hours(&h, want), 0);
				assert_true(h == json_number_value(e));
			}
		}
		free(want);
	}
	assert_int_equal(b.marker, PMBOT_MARKER_OK);
	assert_int_equal(c.marker, PMBOT_MARKER_OK);
	assert_string_equal(b.stable_id, n->stable_id);
	assert_string_equal(b.rev, iss->rev);
	assert_string_equal(c.rev, iss->rev);
	assert_int_equal(pmbot_body_rev(rev, iss->body, iss->body_len), 0);
	assert_string_equal(rev, iss->rev);
	assert_int_equal(pmbot_body_rev(rev, crlf, crlf_len), 0);
	assert_string_equal(rev, iss->rev);

	/* Only the marker, the first line, opens or closes an HTML comment. */
	assert_ptr_equal(strstr(iss->body, "<!--"), iss->body);
	assert_null(strstr(iss->body + 1, "<!--"));
	p = strstr(iss->body, "-->");
	assert_ptr_equal(p, strchr(iss->body, '\n') ? strchr(iss->body, '\n') - 3 :
		iss->body + iss->body_len - 3);
	assert_null(strstr(p + 1, "-->"));

	/* The title comes back without its prefix, neutralised, never a mention or a link. */
	assert_int_equal(pmbot_render_title_strip(&rest, iss->title, form), PMBOT_OK);
	title = ref_collapse(json_string_value(json_object_get(nj, "title")));
	assert_int_equal(pmbot_text_neutralise(&unlinked, title, strlen(title),
		PMBOT_TEXT_CODE_SPANS), 0);
	assert_string_equal(rest, unlinked.buf);
	assert_int_equal(pmbot_text_unneutralise(&back, rest, strlen(rest)), 0);
	assert_string_equal(back.buf, title);
	pmbot_buf_free(&unlinked);
	pmbot_buf_free(&back);
	free(title);
	free(crlf);
	json_decref(nj);
	pmbot_body_free(&b);
	pmbot_body_free(&c);
	pmbot_diag_list_free(&d);
}

static void render_and_check(stats *st, const pmbot_workgraph *g, const pmbot_wg_node *n,
	const gen_item *it, const pmbot_form *form, const pmbot_render_opts *opts)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	const char *want[5];
	size_t nwant = 0, i, k;
	json_t *nj = node_obj(n);
	char *title = ref_collapse(json_string_value(json_object_get(nj, "title")));
	int rc;

	if (it->unsafe_id)
		want[nwant++] = "RENDER_UNSAFE_ID";
	if (!title[0])
		want[nwant++] = "RENDER_TITLE_EMPTY";
	if (chars(form->title_prefix) + chars(title) > 256)
		want[nwant++] = "RENDER_TITLE_TOO_LONG";
	if (label_too_long(nj, "area", "area:") || label_too_long(nj, "priority", "prio:") ||
	    label_too_long(nj, "size", "size:") || label_too_long(nj, "status", "status:"))
		want[nwant++] = "RENDER_LABEL_TOO_LONG";
	if (it->huge)
		want[nwant++] = "RENDER_BODY_TOO_LONG";
	free(title);
	json_decref(nj);

	rc = pmbot_render_issue(&iss, g, n, form, opts, &d);
	st->renders++;
	assert_int_equal(rc, nwant ? PMBOT_EINVALID : PMBOT_OK);
	for (i = 0; i < nwant; i++)
		if (!pmbot_diag_list_find(&d, want[i]))
			fail_msg("%s: expected %s", n->stable_id, want[i]);
	for (i = 0; i < d.count; i++) {
		for (k = 0; k < nwant && strcmp(d.items[i].code, want[k]); k++)
			;
		if (k == nwant)
			fail_msg("%s: unexpected %s: %s", n->stable_id, d.items[i].code,
				d.items[i].message);
		st->unsafe_id += !strcmp(d.items[i].code, "RENDER_UNSAFE_ID");
		st->title_long += !strcmp(d.items[i].code, "RENDER_TITLE_TOO_LONG");
		st->title_empty += !strcmp(d.items[i].code, "RENDER_TITLE_EMPTY");
		st->label_long += !strcmp(d.items[i].code, "RENDER_LABEL_TOO_LONG");
		st->body_long += !strcmp(d.items[i].code, "RENDER_BODY_TOO_LONG");
	}
	if (rc == PMBOT_OK) {
		pmbot_rendered_issue again;

		st->ok++;
		check_round_trip(&iss, form, g, n, opts->issue_refs);
		/* Same input, same bytes. */
		assert_int_equal(pmbot_render_issue(&again, g, n, form, opts, &d), PMBOT_OK);
		assert_int_equal(again.body_len, iss.body_len);
		assert_memory_equal(again.body, iss.body, iss.body_len);
		assert_string_equal(again.title, iss.title);
		pmbot_rendered_issue_free(&again);
	} else {
		assert_null(iss.body);
		assert_null(iss.title);
	}
	pmbot_rendered_issue_free(&iss);
	pmbot_diag_list_free(&d);
}

static pmbot_form *load_fixture(const char *name)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf b = PMBOT_BUF_INIT;
	pmbot_form *f = NULL;
	char path[256];

	snprintf(path, sizeof(path), "tests/fixtures/forms/%s", name);
	assert_int_equal(pmbot_fs_read(&b, path), 0);
	assert_int_equal(pmbot_form_parse(&f, path, b.buf, b.len, NULL, &d), PMBOT_OK);
	pmbot_buf_free(&b);
	pmbot_diag_list_free(&d);
	return f;
}

#define N_ITEMS 5000
#define BATCH 50

#define Z PMBOT_TEXT_ZWNJ

static void test_body__values_come_back_without_the_non_joiners_rendering_put_in(void **state)
{
	pmbot_body b = parse("### Area\n@" Z "core-team\n\n### Risk\nsee acme/widgets#" Z "12, "
		"https:" Z "//x.example/a\n\n### Status\n\xd9\x85\xdb\x8c" Z "\xd8\xae @" Z " x", NULL);

	(void)state;
	assert_string_equal(pmbot_body_get(&b, "Area"), "@core-team");
	assert_string_equal(pmbot_body_get(&b, "Risk"), "see acme/widgets#12, https://x.example/a");
	/* a U+200C the rule did not put in is the author's */
	assert_string_equal(pmbot_body_get(&b, "Status"), "\xd9\x85\xdb\x8c" Z "\xd8\xae @" Z " x");
	pmbot_body_free(&b);
}

static void test_body__render_then_parse_gives_back_values_with_mentions(void **state)
{
	pmbot_workgraph *g = NULL;
	pmbot_form *f = NULL;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_rendered_issue iss;
	pmbot_body b;
	char rev[PMBOT_SHA256_HEX_SIZE];
	json_t *j = json_loads("{\"stable_id\":\"task:m\",\"title\":\"Hi @octocat\","
		"\"area\":\"@acme/core\",\"risk\":\"acme/widgets#1 via www.example.com\","
		"\"size\":\"`@x` #2\"}", 0, NULL);

	(void)state;
	assert_non_null(j);
	assert_int_equal(pmbot_workgraph_new(&g), 0);
	assert_int_equal(pmbot_workgraph_add_node(g, PMBOT_NODE_TASK, j, "/tasks/0", 1), 0);
	assert_int_equal(pmbot_workgraph_add_edge(g, PMBOT_EDGE_BLOCKED_BY, "task:m",
		"https://github.com/acme/widgets/issues/1", 1), 0);
	assert_int_equal(pmbot_workgraph_finish(g, "plan.md", &d), PMBOT_OK);
	assert_int_equal(pmbot_form_builtin(&f, PMBOT_NODE_TASK), 0);
	assert_int_equal(pmbot_render_issue(&iss, g, pmbot_workgraph_find(g, "task:m"), f, NULL,
		&d), PMBOT_OK);
	/* on GitHub: no mention, no reference, no link */
	assert_non_null(strstr(iss.body, "### Area\n@" Z "acme/core\n"));
	assert_non_null(strstr(iss.body, "### Size\n`@x` #" Z "2\n"));
	assert_non_null(strstr(iss.body, "### Blocked by\nhttps:" Z "//github.com/"));
	/* read back: the report's values, and the marker's rev is the body's own */
	assert_int_equal(pmbot_body_parse(&b, iss.body, iss.body_len, &d), 0);
	assert_string_equal(pmbot_body_get(&b, "Area"), "@acme/core");
	assert_string_equal(pmbot_body_get(&b, "Risk"), "acme/widgets#1 via www.example.com");
	assert_string_equal(pmbot_body_get(&b, "Size"), "`@x` #2");
	assert_string_equal(pmbot_body_get(&b, "Blocked by"),
		"https://github.com/acme/widgets/issues/1");
	assert_int_equal(b.marker, PMBOT_MARKER_OK);
	assert_int_equal(pmbot_body_rev(rev, iss.body, iss.body_len), 0);
	assert_string_equal(b.rev, rev);
	assert_string_equal(b.rev, iss.rev);
	assert_int_equal(d.count, 0);
	pmbot_body_free(&b);
	pmbot_rendered_issue_free(&iss);
	pmbot_form_free(f);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&d);
}

static void test_body__parse_of_render_gives_back_the_tracked_fields(void **state)
{
	pmbot_form *builtins[8], *custom[3];
	stats st = { 0, 0, 0, 0, 0, 0, 0 };
	size_t base, i, t;

	(void)state;
	rng_state = 0x9e3779b97f4a7c15ULL;
	for (t = 0; t < 8; t++)
		assert_int_equal(pmbot_form_builtin(&builtins[t], (pmbot_node_type)t), 0);
	custom[0] = load_fixture("feature.yml");
	custom[1] = load_fixture("epic.yml");
	custom[2] = load_fixture("bug.yml");

	for (base = 0; base < N_ITEMS; base += BATCH) {
		pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
		pmbot_strmap items = PMBOT_STRMAP_INIT, refs = PMBOT_STRMAP_INIT;
		pmbot_render_opts opts = { NULL, &refs };
		gen_item gen[BATCH];
		char *ref_texts[BATCH];
		pmbot_workgraph *g = NULL;
		size_t n_refs = 0;

		assert_int_equal(pmbot_workgraph_new(&g), 0);
		for (i = 0; i < BATCH; i++) {
			pmbot_node_type type = (pmbot_node_type)below(8);

			assert_int_equal(pmbot_workgraph_add_node(g, type, gen_node(&gen[i], base + i),
				NULL, 0), 0);
			assert_int_equal(pmbot_strmap_put(&items, gen[i].id, &gen[i], NULL), 0);
		}
		for (i = 0; i < BATCH; i++) {
			size_t k, n = below(4);

			for (k = 0; k < n; k++) {
				pmbot_edge_type et = below(2) ? PMBOT_EDGE_DEPENDS_ON : PMBOT_EDGE_BLOCKED_BY;
				size_t pick = below(10);

				if (pick < 6) {
					assert_int_equal(pmbot_workgraph_add_edge(g, et, gen[i].id,
						gen[below(BATCH)].id, 0), 0);
				} else if (pick < 8) {
					char url[80];

					snprintf(url, sizeof(url), "https://github.com/acme/x/issues/%zu",
						below(1000));
					assert_int_equal(pmbot_workgraph_add_edge(g, et, gen[i].id, url, 1), 0);
				} else {
					char *s = gen_string(40);

					assert_int_equal(pmbot_workgraph_add_edge(g, et, gen[i].id, s, 1), 0);
					free(s);
				}
			}
			if (!below(3)) {
				char num[32];

				snprintf(num, sizeof(num), "#%zu", below(5000));
				ref_texts[n_refs] = below(4) ? xstrdup(num) : gen_string(20);
				assert_int_equal(pmbot_strmap_put(&refs, gen[i].id, ref_texts[n_refs], NULL), 0);
				n_refs++;
			}
		}
		assert_true(pmbot_workgraph_finish(g, NULL, &d) != PMBOT_ERROR);
		for (i = 0; i < g->n_nodes; i++) {
			const pmbot_wg_node *n = &g->nodes[i];
			void *it = NULL;

			assert_true(pmbot_strmap_get(&items, n->stable_id, &it));
			render_and_check(&st, g, n, it, builtins[n->type], &opts);
			for (t = 0; t < 3; t++)
				render_and_check(&st, g, n, it, custom[t], &opts);
		}
		for (i = 0; i < BATCH; i++)
			free(gen[i].id);
		for (i = 0; i < n_refs; i++)
			free(ref_texts[i]);
		pmbot_strmap_free(&items);
		pmbot_strmap_free(&refs);
		pmbot_workgraph_free(g);
		pmbot_diag_list_free(&d);
	}
	/* Every path was taken, and most renders were checked end to end. */
	assert_int_equal(st.renders, 4 * N_ITEMS);
	assert_true(st.ok >= N_ITEMS);
	assert_true(st.unsafe_id > 0);
	assert_true(st.title_long > 0);
	assert_true(st.title_empty > 0);
	assert_true(st.label_long > 0);
	assert_true(st.body_long > 0);
	print_message("renders %zu, round-tripped %zu, unsafe id %zu, long title %zu, "
		"empty title %zu, long label %zu, long body %zu\n", st.renders, st.ok,
		st.unsafe_id, st.title_long, st.title_empty, st.label_long, st.body_long);
	for (t = 0; t < 8; t++)
		pmbot_form_free(builtins[t]);
	for (t = 0; t < 3; t++)
		pmbot_form_free(custom[t]);
}

/* ---- shortcuts against the general path ----------------------------------- */

/*
 * Text made of the pieces the neutralisation rules look at, in a fixed
 * pseudo-random order (the same every run): delimiters, line starts,
 * breakers, blanks, "_No response_", mention and link starts, UTF-8.
 */
static const char *const pieces[] = {
	"a", "b", "Z", "0", "7", " ", "  ", "\t", "-", "--", "<", "<!--", "-->", "--!>", "<!-->",
	"#", "###", "####### ", "```", "~~~", "<pre", "<PRE>", "<script", "<style ", "<textarea",
	"<!", "<?", "<b>", ">", "!", "_No response_", "_", "@", "@team", "#12", "`", "``", "&lt;",
	"&#64;", "\\", "\\#", "w", "www.", ":", "://", "gh-1", "|", "\n", "\r", "\r\n", "\n\n",
	"\x01", "\x7f", "\xc2\x85", "\xc2\xa0", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\x8c",
	"\xc3\xa9", "\xe2\x82\xac", "\xe2", "\xc2", "\x80", "x y", "P1", "checkout",
};

static unsigned long gen_next(unsigned long *seed)
{
	*seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
	return *seed >> 33;
}

/* `n` pieces; plain ASCII words more often, as in real values. */
static void gen_text(pmbot_buf *b, unsigned long *seed, size_t n)
{
	static const char *const words[] = { "Ship", "the", "parser", "fix", "login", "v2" };
	size_t i;

	pmbot_buf_clear(b);
	for (i = 0; i < n; i++) {
		unsigned long r = gen_next(seed);

		if (r % 3 == 0)
			assert_int_equal(pmbot_buf_puts(b, words[(r >> 4) % 6]), 0);
		else
			assert_int_equal(pmbot_buf_puts(b, pieces[(r >> 4) %
				(sizeof(pieces) / sizeof(pieces[0]))]), 0);
	}
}

static void assert_same_both_ways(int (*fn)(pmbot_buf *, const char *, size_t),
	const pmbot_buf *in)
{
	pmbot_buf fast = PMBOT_BUF_INIT, general = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_buf_puts(&fast, "pre"), 0);
	assert_int_equal(pmbot_buf_puts(&general, "pre"), 0);
	pmbot_render__fast = 1;
	assert_int_equal(fn(&fast, in->buf, in->len), 0);
	pmbot_render__fast = 0;
	assert_int_equal(fn(&general, in->buf, in->len), 0);
	pmbot_render__fast = 1;
	assert_int_equal(fast.len, general.len);
	assert_memory_equal(fast.buf, general.buf, fast.len);
	pmbot_buf_free(&fast);
	pmbot_buf_free(&general);
}

/*
 * The shortcuts for text with nothing to change (a safe line copied, runs
 * of plain bytes copied, lines without "--" put in two copies) give the
 * bytes of the general path, on 30,000 generated values; and a line
 * pmbot_render__line_is_safe() passes is its own neutralised line.
 */
static void test_body__neutralisation_shortcuts_match_the_general_path(void **state)
{
	pmbot_buf in = PMBOT_BUF_INIT, out = PMBOT_BUF_INIT;
	unsigned long seed = 17;
	size_t i, safe = 0;

	(void)state;
	for (i = 0; i < 30000; i++) {
		gen_text(&in, &seed, gen_next(&seed) % 9);
		assert_same_both_ways(pmbot_render_neutralise_line, &in);
		assert_same_both_ways(pmbot_render_neutralise_block, &in);
		assert_same_both_ways(pmbot_render_neutralise_title, &in);
		if (pmbot_render__line_is_safe(in.buf, in.len)) {
			safe++;
			pmbot_render__fast = 0;
			pmbot_buf_clear(&out);
			assert_int_equal(pmbot_render_neutralise_line(&out, in.buf, in.len), 0);
			pmbot_render__fast = 1;
			assert_int_equal(out.len, in.len);
			assert_memory_equal(out.buf, in.buf, in.len);
		}
	}
	/* Both sides of every shortcut were taken. */
	assert_true(safe > 1000 && safe < 29000);
	assert_false(pmbot_render__line_is_safe("-- x", 4));
	assert_false(pmbot_render__line_is_safe("# x", 3));
	assert_false(pmbot_render__line_is_safe(" x", 2));
	assert_false(pmbot_render__line_is_safe("x  y", 4));
	assert_false(pmbot_render__line_is_safe("_No response_", 13));
	assert_false(pmbot_render__line_is_safe("<!x", 3));
	assert_false(pmbot_render__line_is_safe("\xc3\xa9", 2));
	assert_true(pmbot_render__line_is_safe("a - b <c> #1 @x", 15));
	pmbot_buf_free(&in);
	pmbot_buf_free(&out);
}

static const char *const body_pieces[] = {
	"### Area", "### Blocked by", "###  blocked   BY ", "### Size (Epic)", "### Size", "###",
	"### ", "#### Notes", "# Top", "##", "checkout", "  P1  ", "_No response_", "task:b, #12",
	"@\xe2\x80\x8cteam", "\n", "\r", "\r\n", "\n\n", " ", "\t", "<!-- pm-bot:id=task:a rev=" HEX64
	" -->", "<!--pm-bot:id=x rev=" ZEROS64 "-->", "<!-- pm-bot: broken -->", "<!-- other -->",
	"text", "\xc3\xa9",
};

static void assert_same_body(const pmbot_body *a, const pmbot_body *b)
{
	size_t i;

	assert_int_equal(a->marker, b->marker);
	assert_int_equal(a->marker_line, b->marker_line);
	assert_string_equal(a->rev, b->rev);
	if (a->stable_id || b->stable_id) {
		assert_non_null(a->stable_id);
		assert_non_null(b->stable_id);
		assert_string_equal(a->stable_id, b->stable_id);
	}
	assert_int_equal(a->n_fields, b->n_fields);
	for (i = 0; i < a->n_fields; i++) {
		assert_string_equal(a->fields[i].heading, b->fields[i].heading);
		assert_string_equal(a->fields[i].value, b->fields[i].value);
		assert_int_equal(a->fields[i].line, b->fields[i].line);
	}
}

/*
 * Parsing with the shortcuts (lines found by memchr, one shared empty
 * value, the asked heading made canonical once) gives what the general
 * path gives, for pmbot_body_parse() and pmbot_body_parse_only(), on 5,000
 * generated bodies (LF, CR and CRLF, markers well-formed and not).
 */
static void test_body__parse_shortcuts_match_the_general_path(void **state)
{
	static const char *const asked[] = { "Blocked by", "Size", "size (epic)", "Area",
		"  SIZE ", "blocked  BY", "Notes", "Size  (Epic) " };
	pmbot_buf in = PMBOT_BUF_INIT;
	unsigned long seed = 99;
	size_t i, k, n;

	(void)state;
	for (i = 0; i < 5000; i++) {
		pmbot_diag_list d1 = PMBOT_DIAG_LIST_INIT, d2 = PMBOT_DIAG_LIST_INIT;
		pmbot_body fast, general;
		const char *only = asked[i % (sizeof(asked) / sizeof(asked[0]))];

		pmbot_buf_clear(&in);
		n = gen_next(&seed) % 24;
		for (k = 0; k < n; k++)
			assert_int_equal(pmbot_buf_puts(&in, body_pieces[gen_next(&seed) %
				(sizeof(body_pieces) / sizeof(body_pieces[0]))]), 0);
		pmbot_render__fast = 1;
		assert_int_equal(pmbot_body_parse(&fast, in.buf, in.len, &d1), 0);
		pmbot_render__fast = 0;
		assert_int_equal(pmbot_body_parse(&general, in.buf, in.len, &d2), 0);
		pmbot_render__fast = 1;
		assert_same_body(&fast, &general);
		assert_int_equal(d1.count, d2.count);
		pmbot_body_free(&fast);
		pmbot_body_free(&general);
		assert_int_equal(pmbot_body_parse_only(&fast, in.buf, in.len, NULL, only), 0);
		pmbot_render__fast = 0;
		assert_int_equal(pmbot_body_parse_only(&general, in.buf, in.len, NULL, only), 0);
		pmbot_render__fast = 1;
		assert_same_body(&fast, &general);
		pmbot_body_free(&general);
		/* The one value read is the full parse's. */
		assert_int_equal(pmbot_body_parse(&general, in.buf, in.len, NULL), 0);
		if (pmbot_body_get(&general, only))
			assert_string_equal(pmbot_body_get(&fast, only), pmbot_body_get(&general, only));
		else
			assert_null(pmbot_body_get(&fast, only));
		/* Looking a heading up finds the same field both ways. */
		for (k = 0; k < sizeof(asked) / sizeof(asked[0]); k++) {
			const char *a = pmbot_body_get(&general, asked[k]), *b;

			pmbot_render__fast = 0;
			b = pmbot_body_get(&general, asked[k]);
			pmbot_render__fast = 1;
			assert_ptr_equal(a, b);
		}
		pmbot_body_free(&fast);
		pmbot_body_free(&general);
		pmbot_diag_list_free(&d1);
		pmbot_diag_list_free(&d2);
	}
	pmbot_buf_free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_body__value_is_the_first_non_empty_line_trimmed),
		cmocka_unit_test(test_body__values_come_back_without_the_non_joiners_rendering_put_in),
		cmocka_unit_test(test_body__render_then_parse_gives_back_values_with_mentions),
		cmocka_unit_test(test_body__reads_bodies_written_by_github_forms),
		cmocka_unit_test(test_body__no_response_means_empty),
		cmocka_unit_test(test_body__crlf_and_cr_line_endings_work),
		cmocka_unit_test(test_body__headings_match_ignoring_case_and_whitespace),
		cmocka_unit_test(test_body__size_epic_is_read_as_size),
		cmocka_unit_test(test_body__a_heading_before_any_value_leaves_it_empty),
		cmocka_unit_test(test_body__escaped_and_inline_hashes_are_not_headings),
		cmocka_unit_test(test_body__first_of_two_equal_headings_wins),
		cmocka_unit_test(test_body__empty_body_has_nothing),
		cmocka_unit_test(test_body__length_is_respected_without_nul),
		cmocka_unit_test(test_body__reads_the_marker),
		cmocka_unit_test(test_body__marker_spacing_is_tolerated),
		cmocka_unit_test(test_body__malformed_markers_are_reported),
		cmocka_unit_test(test_body__two_markers_are_reported),
		cmocka_unit_test(test_body__a_marker_inside_a_line_is_text),
		cmocka_unit_test(test_body__a_marker_line_is_never_a_value),
		cmocka_unit_test(test_body__reads_the_marker_first_and_last_alike),
		cmocka_unit_test(test_body__a_marker_closing_an_empty_last_section_is_no_value),
		cmocka_unit_test(test_body__rev_is_the_same_with_the_marker_first_or_last),
		cmocka_unit_test(test_body__rev_hashes_the_body_without_its_marker),
		cmocka_unit_test(test_body__rev_changes_when_a_human_edits_the_body),
		cmocka_unit_test(test_body__hours_accept_plain_approximate_and_unit_forms),
		cmocka_unit_test(test_body__hours_reject_anything_else),
		cmocka_unit_test(test_body__title_neutralisation_collapses_whitespace),
		cmocka_unit_test(test_body__line_neutralisation_defuses_headings_and_comments),
		cmocka_unit_test(test_body__block_neutralisation_keeps_lines_but_defuses_them),
		cmocka_unit_test(test_body__neutralisation_is_idempotent),
		cmocka_unit_test(test_body__neutralised_values_hold_no_comment_delimiter),
		cmocka_unit_test(test_body__parse_of_render_gives_back_the_tracked_fields),
		cmocka_unit_test(test_body__parse_only_reads_one_field_like_the_full_parse),
		cmocka_unit_test(test_body__rev_of_lf_and_crlf_bodies_agree),
		cmocka_unit_test(test_body__neutralisation_shortcuts_match_the_general_path),
		cmocka_unit_test(test_body__parse_shortcuts_match_the_general_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
