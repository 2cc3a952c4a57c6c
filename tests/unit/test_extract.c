#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pmbot/buf.h"
#include "pmbot/diag.h"
#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/report.h"

#include "../../src/report/extract.h"
#include "pmbot/banned.h"

#define FIXTURES "tests/fixtures/reports/"

static void read_fixture(pmbot_buf *out, const char *name)
{
	pmbot_buf path = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_buf_printf(&path, FIXTURES "%s", name), 0);
	assert_int_equal(pmbot_fs_read(out, path.buf), 0);
	pmbot_buf_free(&path);
}

/* Load a fixture with the default limits; the file name is its path. */
static int load_fixture(pmbot_report **r, pmbot_diag_list *d, const char *name)
{
	pmbot_buf md = PMBOT_BUF_INIT, path = PMBOT_BUF_INIT;
	int rc;

	read_fixture(&md, name);
	assert_int_equal(pmbot_buf_printf(&path, FIXTURES "%s", name), 0);
	rc = pmbot_report_load(r, path.buf, md.buf, md.len, NULL, d);
	pmbot_buf_free(&md);
	pmbot_buf_free(&path);
	return rc;
}

static int load_string(pmbot_report **r, pmbot_diag_list *d, const char *md)
{
	return pmbot_report_load(r, "mem.md", md, strlen(md), NULL, d);
}

/* The string at JSON Pointer-ish path a/b/c (object members only). */
/*
 * The report's value as jansson values, for assertions: converted from its
 * document, valid until the next call (the group teardown frees the last).
 */
static json_t *last_tree;

static json_t *tree_of(const pmbot_report *r)
{
	json_decref(last_tree);
	last_tree = NULL;
	assert_int_equal(pmbot_jnode_to_json(&last_tree, pmbot_jdoc_root(r->doc)), PMBOT_OK);
	return last_tree;
}

static int free_tree(void **state)
{
	(void)state;
	json_decref(last_tree);
	last_tree = NULL;
	return 0;
}

static const char *str_at(const json_t *root, const char *k1, const char *k2)
{
	const json_t *v = json_object_get(root, k1);

	if (k2)
		v = json_object_get(v, k2);
	return json_string_value(v);
}

static void assert_position(const pmbot_report *r, const char *pointer, int line, int column)
{
	int l = -1, c = -1;

	assert_int_equal(pmbot_report_find(r, pointer, &l, &c), 1);
	assert_int_equal(l, line);
	if (column > 0)
		assert_int_equal(c, column);
}

/* The only diagnostic is `code`, an error, at `line`; returns it. */
static const pmbot_diag *assert_single_error(const pmbot_diag_list *d, const char *code, int line)
{
	const pmbot_diag *diag;

	assert_int_equal(d->count, 1);
	assert_int_equal(d->errors, 1);
	diag = pmbot_diag_list_find(d, code);
	assert_non_null(diag);
	assert_int_equal(diag->severity, PMBOT_SEV_ERROR);
	assert_int_equal(diag->line, line);
	return diag;
}

/* Every LF becomes CRLF. */
static void to_crlf(pmbot_buf *out, const pmbot_buf *in)
{
	size_t i;

	for (i = 0; i < in->len; i++) {
		if (in->buf[i] == '\n')
			assert_int_equal(pmbot_buf_putc(out, '\r'), 0);
		assert_int_equal(pmbot_buf_putc(out, in->buf[i]), 0);
	}
}

static void test_extract__loads_canonical_json_block(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "canonical-json.md"), PMBOT_OK);
	assert_non_null(r);
	assert_int_equal(d.count, 0);
	assert_string_equal(r->file, FIXTURES "canonical-json.md");
	assert_int_equal(r->block.canonical, 1);
	assert_int_equal(r->block.format, PMBOT_FORMAT_JSON);
	assert_string_equal(r->block.info, "pm-bot:report-ir/v1");
	assert_int_equal(r->block.fence_line, 5);
	assert_int_equal(r->block.content_line, 6);
	assert_int_equal(r->block.content_column, 1);
	assert_int_equal(r->block.len, strlen(r->block.text));
	assert_int_equal(r->block.text[0], '{');
	assert_string_equal(str_at(tree_of(r), "report", "title"), "JSON plan");
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(json_object_get(tree_of(r), "features"), 0), "stable_id")),
		"feat:extract");
	assert_position(r, "/report/title", 9, 0);
	assert_position(r, "/features/0", 14, 0);
	pmbot_report_free(r);
	pmbot_diag_list_free(&d);
}

static void test_extract__loads_canonical_yaml_block(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "canonical-yaml.md"), PMBOT_OK);
	assert_int_equal(d.count, 0);
	assert_int_equal(r->block.canonical, 1);
	assert_int_equal(r->block.format, PMBOT_FORMAT_YAML);
	assert_int_equal(r->block.fence_line, 5);
	assert_string_equal(str_at(tree_of(r), "schema_version", NULL), "report_ir/v1");
	assert_string_equal(str_at(tree_of(r), "report", "generated_at"), "2026-02-22");
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(json_object_get(tree_of(r), "tasks"), 0), "title")), "Parse YAML");
	assert_position(r, "/report/title", 8, 3);
	assert_position(r, "/tasks/0/title", 14, 5);
	pmbot_report_free(r);
	pmbot_diag_list_free(&d);
}

static void test_extract__accepts_legacy_alias(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "legacy-alias.md"), PMBOT_OK);
	assert_int_equal(r->block.canonical, 1);
	assert_string_equal(r->block.info, "pm-bot:report_ir/v1");
	assert_int_equal(r->block.format, PMBOT_FORMAT_JSON);
	assert_string_equal(str_at(tree_of(r), "report", "title"), "Legacy");
	pmbot_report_free(r);
	pmbot_diag_list_free(&d);
}

static void test_extract__accepts_tilde_fence(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "tilde-fence.md"), PMBOT_OK);
	assert_int_equal(r->block.canonical, 1);
	assert_int_equal(r->block.format, PMBOT_FORMAT_YAML);
	assert_int_equal(r->block.fence_line, 3);
	assert_string_equal(str_at(tree_of(r), "report", "title"), "Tildes");
	assert_position(r, "/report/title", 6, 3);
	pmbot_report_free(r);
	pmbot_diag_list_free(&d);
}

static void test_extract__longer_fence_keeps_inner_backtick_lines(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;
	const char *note;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "longer-fence.md"), PMBOT_OK);
	assert_int_equal(d.count, 0);
	assert_int_equal(r->block.fence_line, 5);
	assert_string_equal(str_at(tree_of(r), "report", "title"), "Longer fence");
	note = json_string_value(json_array_get(json_object_get(tree_of(r), "notes"), 0));
	assert_non_null(note);
	assert_string_equal(note, "```json\n{\"inner\": true}\n```\n");
	pmbot_report_free(r);
	pmbot_diag_list_free(&d);
}

static void test_extract__maps_lines_of_fence_in_list_item(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "list-item.md"), PMBOT_OK);
	assert_int_equal(r->block.fence_line, 6);
	assert_int_equal(r->block.content_line, 7);
	assert_int_equal(r->block.content_column, 4);
	/* The list item's indentation is not part of the block text. */
	assert_memory_equal(r->block.text, "schema_version:", 15);
	assert_string_equal(str_at(tree_of(r), "report", "title"), "In a list");
	assert_position(r, "/schema_version", 7, 4);
	assert_position(r, "/report/title", 9, 6);
	pmbot_report_free(r);
	pmbot_diag_list_free(&d);
}

static void test_extract__maps_lines_of_fence_in_block_quote(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "block-quote.md"), PMBOT_OK);
	assert_int_equal(r->block.fence_line, 5);
	assert_int_equal(r->block.content_column, 3);
	assert_int_equal(r->block.format, PMBOT_FORMAT_JSON);
	assert_null(strchr(r->block.text, '>'));
	assert_string_equal(str_at(tree_of(r), "report", "title"), "Quoted");
	assert_position(r, "/schema_version", 7, 0);
	assert_position(r, "/report/title", 8, 0);
	pmbot_report_free(r);
	pmbot_diag_list_free(&d);
}

static void test_extract__ignores_indented_code_block(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = (pmbot_report *)&d; /* must be reset to NULL */

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "indented-code.md"), PMBOT_EINVALID);
	assert_null(r);
	assert_single_error(&d, "REPORT_NO_BLOCK", 1);
	pmbot_diag_list_free(&d);
}

static void test_extract__info_string_with_extra_words_is_not_canonical(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;
	const pmbot_diag *diag;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "info-extra-words.md"), PMBOT_EINVALID);
	assert_null(r);
	diag = assert_single_error(&d, "REPORT_NO_BLOCK", 1);
	/* The message teaches the canonical info string and names the near misses. */
	assert_non_null(strstr(diag->message, "```pm-bot:report-ir/v1"));
	assert_non_null(strstr(diag->message, "line 3: info string \"pm-bot:report-ir/v1 json\""));
	assert_non_null(strstr(diag->message, "line 7: info string \"PM-BOT:REPORT-IR/V1\""));
	pmbot_diag_list_free(&d);
}

static void test_extract__rejects_two_canonical_blocks(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;
	const pmbot_diag *diag;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "two-canonical.md"), PMBOT_EINVALID);
	assert_null(r);
	diag = assert_single_error(&d, "REPORT_AMBIGUOUS_BLOCK", 9);
	assert_int_equal(diag->column, 1);
	assert_string_equal(diag->file, FIXTURES "two-canonical.md");
	assert_string_equal(diag->path, "");
	assert_non_null(strstr(diag->message, "lines 3 and 9"));
	pmbot_diag_list_free(&d);
}

static void test_extract__names_every_line_of_three_canonical_blocks(void **state)
{
	static const char md[] =
		"```pm-bot:report-ir/v1\n{}\n```\n"
		"\n"
		"- ```pm-bot:report-ir/v1\n  {}\n  ```\n"
		"\n"
		"```pm-bot:report_ir/v1\na: 1\n```\n";
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;
	const pmbot_diag *diag;

	(void)state;
	assert_int_equal(load_string(&r, &d, md), PMBOT_EINVALID);
	assert_null(r);
	diag = assert_single_error(&d, "REPORT_AMBIGUOUS_BLOCK", 5);
	assert_int_equal(diag->column, 3);
	assert_non_null(strstr(diag->message, "3 fenced blocks"));
	assert_non_null(strstr(diag->message, "lines 1, 5 and 9"));
	pmbot_diag_list_free(&d);
}

static void test_extract__fallback_uses_single_candidate(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "fallback-one.md"), PMBOT_OK);
	/* The broken json block was parsed quietly: nothing leaks out of it. */
	assert_int_equal(d.count, 0);
	assert_int_equal(r->block.canonical, 0);
	assert_int_equal(r->block.format, PMBOT_FORMAT_JSON);
	assert_string_equal(r->block.info, "JSON");
	assert_int_equal(r->block.fence_line, 30);
	assert_int_equal(r->block.content_line, 31);
	assert_string_equal(str_at(tree_of(r), "report", "title"), "Fallback");
	assert_position(r, "/report", 33, 0);
	pmbot_report_free(r);
	pmbot_diag_list_free(&d);
}

static void test_extract__fallback_rejects_two_candidates(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;
	const pmbot_diag *diag;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "fallback-two.md"), PMBOT_EINVALID);
	assert_null(r);
	diag = assert_single_error(&d, "REPORT_AMBIGUOUS_BLOCK", 7);
	assert_non_null(strstr(diag->message, "lines 3 and 7"));
	assert_non_null(strstr(diag->message, "pm-bot:report-ir/v1"));
	pmbot_diag_list_free(&d);
}

static void test_extract__fallback_without_candidate_is_no_block(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;
	const pmbot_diag *diag;

	(void)state;
	/* No schema_version, report_ir/v2, a top-level array, a python block. */
	assert_int_equal(load_fixture(&r, &d, "fallback-none.md"), PMBOT_EINVALID);
	assert_null(r);
	diag = assert_single_error(&d, "REPORT_NO_BLOCK", 1);
	assert_string_equal(diag->file, FIXTURES "fallback-none.md");
	assert_non_null(strstr(diag->message, "pm-bot:report-ir/v1"));
	/* Every block parsed, so no hint names one. */
	assert_null(strstr(diag->message, "line "));
	pmbot_diag_list_free(&d);
}

static void test_extract__no_block_message_names_unparsable_fallback_block(void **state)
{
	static const char md[] = "# Plan\n\n```yaml\nschema_version: [report_ir/v1\n```\n";
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;
	const pmbot_diag *diag;

	(void)state;
	assert_int_equal(load_string(&r, &d, md), PMBOT_EINVALID);
	assert_null(r);
	/* The YAML error itself stays quiet: the block was only a candidate. */
	diag = assert_single_error(&d, "REPORT_NO_BLOCK", 1);
	assert_non_null(strstr(diag->message, "line 3: fenced \"yaml\" block does not parse"));
	pmbot_diag_list_free(&d);
}

static void test_extract__canonical_block_wins_over_fallback_candidate(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "canonical-and-fallback.md"), PMBOT_OK);
	assert_int_equal(d.count, 0);
	assert_int_equal(r->block.canonical, 1);
	assert_int_equal(r->block.fence_line, 7);
	assert_string_equal(str_at(tree_of(r), "report", "title"), "Canonical wins");
	pmbot_report_free(r);
	pmbot_diag_list_free(&d);
}

static void test_extract__yaml_error_line_is_in_file_terms(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;
	const pmbot_diag *diag;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "yaml-error.md"), PMBOT_EINVALID);
	assert_null(r);
	diag = pmbot_diag_list_find(&d, "REPORT_PARSE_YAML");
	assert_non_null(diag);
	assert_int_equal(d.errors, 1);
	assert_int_equal(diag->line, 8);
	assert_int_equal(diag->column, 15);
	assert_string_equal(diag->file, FIXTURES "yaml-error.md");
	pmbot_diag_list_free(&d);
}

static void test_extract__json_error_line_is_in_file_terms(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;
	const pmbot_diag *diag;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "json-error.md"), PMBOT_EINVALID);
	assert_null(r);
	diag = pmbot_diag_list_find(&d, "REPORT_PARSE_JSON");
	assert_non_null(diag);
	assert_int_equal(d.errors, 1);
	assert_int_equal(diag->line, 8);
	pmbot_diag_list_free(&d);
}

static void test_extract__empty_file_has_no_block(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;

	(void)state;
	assert_int_equal(load_fixture(&r, &d, "empty.md"), PMBOT_EINVALID);
	assert_null(r);
	assert_single_error(&d, "REPORT_NO_BLOCK", 1);
	pmbot_diag_list_free(&d);

	assert_int_equal(pmbot_report_load(&r, NULL, NULL, 0, NULL, &d), PMBOT_EINVALID);
	assert_null(r);
	assert_null(assert_single_error(&d, "REPORT_NO_BLOCK", 1)->file);
	pmbot_diag_list_free(&d);
}

static void test_extract__crlf_file_keeps_line_numbers(void **state)
{
	pmbot_buf lf = PMBOT_BUF_INIT, crlf = PMBOT_BUF_INIT;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;

	(void)state;
	read_fixture(&lf, "canonical-yaml.md");
	to_crlf(&crlf, &lf);
	assert_int_equal(pmbot_report_load(&r, "crlf.md", crlf.buf, crlf.len, NULL, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);
	assert_int_equal(r->block.fence_line, 5);
	assert_null(strchr(r->block.text, '\r'));
	assert_string_equal(str_at(tree_of(r), "report", "title"), "YAML plan");
	assert_position(r, "/tasks/0/title", 14, 5);
	pmbot_report_free(r);

	pmbot_buf_clear(&lf);
	pmbot_buf_clear(&crlf);
	read_fixture(&lf, "json-error.md");
	to_crlf(&crlf, &lf);
	assert_int_equal(pmbot_report_load(&r, "crlf.md", crlf.buf, crlf.len, NULL, &d),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_diag_list_find(&d, "REPORT_PARSE_JSON")->line, 8);
	pmbot_diag_list_free(&d);
	pmbot_buf_free(&lf);
	pmbot_buf_free(&crlf);
}

static void test_extract__rejects_invalid_utf8_outside_block(void **state)
{
	pmbot_buf md = PMBOT_BUF_INIT;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;
	const pmbot_diag *diag;
	char *narrative;

	(void)state;
	read_fixture(&md, "canonical-json.md");
	/* Line 3 starts "Some narrative"; break the 'n' of "narrative" (column 6). */
	narrative = strstr(md.buf, "narrative");
	assert_non_null(narrative);
	*narrative = (char)0xff;
	assert_int_equal(pmbot_report_load(&r, "bad.md", md.buf, md.len, NULL, &d), PMBOT_EINVALID);
	assert_null(r);
	diag = assert_single_error(&d, "INVALID_UTF8", 3);
	assert_int_equal(diag->column, 6);
	assert_non_null(strstr(diag->message, "0xff"));
	pmbot_diag_list_free(&d);
	pmbot_buf_free(&md);
}

static void test_extract__rejects_nul_byte(void **state)
{
	static const char md[] = "# Plan\n\nab\0c\n```pm-bot:report-ir/v1\n{}\n```\n";
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;
	const pmbot_diag *diag;

	(void)state;
	assert_int_equal(pmbot_report_load(&r, "nul.md", md, sizeof(md) - 1, NULL, &d),
		PMBOT_EINVALID);
	assert_null(r);
	diag = assert_single_error(&d, "INVALID_UTF8", 3);
	assert_int_equal(diag->column, 3);
	pmbot_diag_list_free(&d);
}

static void test_extract__rejects_file_over_size_limit(void **state)
{
	pmbot_buf md = PMBOT_BUF_INIT;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;
	pmbot_limits lim;

	(void)state;
	read_fixture(&md, "canonical-json.md");
	pmbot_limits_default(&lim);
	lim.max_bytes = md.len - 1;
	assert_int_equal(pmbot_report_load(&r, "big.md", md.buf, md.len, &lim, &d), PMBOT_EINVALID);
	assert_null(r);
	assert_single_error(&d, "INPUT_TOO_LARGE", 0);
	pmbot_diag_list_free(&d);

	/* Exactly at the limit is fine. */
	lim.max_bytes = md.len;
	assert_int_equal(pmbot_report_load(&r, "big.md", md.buf, md.len, &lim, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);
	pmbot_report_free(r);
	pmbot_buf_free(&md);
}

static void test_extract__size_limit_comes_before_utf8_check(void **state)
{
	static const char md[] = "\xff\xff\xff\xff";
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;
	pmbot_limits lim;

	(void)state;
	pmbot_limits_default(&lim);
	lim.max_bytes = 3;
	assert_int_equal(pmbot_report_load(&r, "big.md", md, 4, &lim, &d), PMBOT_EINVALID);
	assert_single_error(&d, "INPUT_TOO_LARGE", 0);
	pmbot_diag_list_free(&d);
}

static void test_extract__canonical_format_follows_first_character(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r = NULL;

	(void)state;
	assert_int_equal(load_string(&r, &d, "```pm-bot:report-ir/v1\n\n  [1, 2]\n```\n"), PMBOT_OK);
	assert_int_equal(r->block.format, PMBOT_FORMAT_JSON);
	assert_true(json_is_array(tree_of(r)));
	assert_int_equal(json_array_size(tree_of(r)), 2);
	pmbot_report_free(r);

	/* A YAML flow mapping would also start with '{', so the rule is the
	 * spec's, not a guess: anything else is YAML. */
	assert_int_equal(load_string(&r, &d, "```pm-bot:report-ir/v1\n---\nschema_version: report_ir/v1\n```\n"),
		PMBOT_OK);
	assert_int_equal(r->block.format, PMBOT_FORMAT_YAML);
	assert_string_equal(str_at(tree_of(r), "schema_version", NULL), "report_ir/v1");
	pmbot_report_free(r);
	assert_int_equal(d.count, 0);
	pmbot_diag_list_free(&d);
}

static void test_extract__same_input_gives_same_bytes(void **state)
{
	pmbot_buf a = PMBOT_BUF_INIT, b = PMBOT_BUF_INIT;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r1 = NULL, *r2 = NULL;

	(void)state;
	assert_int_equal(load_fixture(&r1, &d, "fallback-one.md"), PMBOT_OK);
	assert_int_equal(load_fixture(&r2, &d, "fallback-one.md"), PMBOT_OK);
	assert_int_equal(pmbot_json_canonical(&a, tree_of(r1)), 0);
	assert_int_equal(pmbot_json_canonical(&b, tree_of(r2)), 0);
	assert_true(a.len > 0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.buf, b.buf, a.len);
	assert_int_equal(r1->block.len, r2->block.len);
	assert_memory_equal(r1->block.text, r2->block.text, r1->block.len);
	assert_int_equal(r1->block.fence_line, r2->block.fence_line);
	assert_int_equal(r1->block.content_column, r2->block.content_column);
	pmbot_report_free(r1);
	pmbot_report_free(r2);
	pmbot_buf_free(&a);
	pmbot_buf_free(&b);
	pmbot_diag_list_free(&d);
}

static void test_extract__blocks_lists_relevant_fences_in_document_order(void **state)
{
	static const char md[] =
		"```c\nint x;\n```\n"                     /* 1: ignored */
		"\n"
		"> - ~~~~ yaml title=\"x\"\n"             /* 5: fallback, col 5 */
		">   a: 1\n"
		">   ~~~~\n"
		"\n"
		"    ```json\n    {}\n    ```\n"          /* 9: indented code, ignored */
		"\n"
		"  ```pm-bot:report_ir/v1  \n"            /* 13: canonical, col 3 */
		"  [ ]\n"
		"  ```\n"
		"\n"
		"```pm-bot:report-ir/v2\nx\n```\n";       /* 17: near miss */
	pmbot_extract_list list = PMBOT_EXTRACT_LIST_INIT;

	(void)state;
	assert_int_equal(pmbot_extract_blocks(&list, md, sizeof(md) - 1), 0);
	assert_int_equal(list.count, 3);

	assert_int_equal(list.items[0].kind, PMBOT_EXTRACT_FALLBACK);
	assert_string_equal(list.items[0].block.info, "yaml title=\"x\"");
	assert_int_equal(list.items[0].block.format, PMBOT_FORMAT_YAML);
	assert_int_equal(list.items[0].block.canonical, 0);
	assert_int_equal(list.items[0].block.fence_line, 5);
	assert_int_equal(list.items[0].block.content_line, 6);
	assert_int_equal(list.items[0].block.content_column, 5);
	assert_string_equal(list.items[0].block.text, "a: 1\n");

	assert_int_equal(list.items[1].kind, PMBOT_EXTRACT_CANONICAL);
	assert_int_equal(list.items[1].block.canonical, 1);
	assert_string_equal(list.items[1].block.info, "pm-bot:report_ir/v1");
	assert_int_equal(list.items[1].block.format, PMBOT_FORMAT_JSON);
	assert_int_equal(list.items[1].block.fence_line, 13);
	assert_int_equal(list.items[1].block.content_column, 3);
	assert_string_equal(list.items[1].block.text, "[ ]\n");

	assert_int_equal(list.items[2].kind, PMBOT_EXTRACT_NEAR_MISS);
	assert_int_equal(list.items[2].block.fence_line, 17);
	pmbot_extract_list_free(&list);
}

static void test_extract__fallback_info_word_is_case_insensitive_and_exact(void **state)
{
	static const char md[] =
		"```YML\na: 1\n```\n"
		"```Json5\n{}\n```\n"
		"```jsonc\n{}\n```\n"
		"```yaml-ish\n{}\n```\n"
		"```JSON {.numberLines}\n{}\n```\n";
	pmbot_extract_list list = PMBOT_EXTRACT_LIST_INIT;

	(void)state;
	assert_int_equal(pmbot_extract_blocks(&list, md, sizeof(md) - 1), 0);
	assert_int_equal(list.count, 2);
	assert_string_equal(list.items[0].block.info, "YML");
	assert_int_equal(list.items[0].block.format, PMBOT_FORMAT_YAML);
	assert_string_equal(list.items[1].block.info, "JSON {.numberLines}");
	assert_int_equal(list.items[1].block.format, PMBOT_FORMAT_JSON);
	pmbot_extract_list_free(&list);
}

/*
 * Every field of every block, one line each (`chunk` 0: as
 * pmbot_extract_blocks cuts its pieces; `borrow`: borrowed contents, which
 * must lie in `md`; `*n_borrowed` counts them).
 */
static char *describe_blocks(const char *md, size_t len, size_t chunk, int borrow,
	size_t *n_borrowed)
{
	pmbot_extract_list list = PMBOT_EXTRACT_LIST_INIT;
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t i;

	/* Chunk 0: as pmbot_extract_blocks cuts its pieces. */
	assert_int_equal(!chunk ? borrow ? pmbot_extract_blocks_borrowing(&list, md, len) :
		pmbot_extract_blocks(&list, md, len) :
		pmbot_extract_blocks_chunked(&list, md, len, chunk, borrow), 0);
	assert_int_equal(pmbot_buf_puts(&b, ""), 0);
	for (i = 0; i < list.count; i++) {
		const pmbot_extract_item *it = &list.items[i];
		const pmbot_block *k = &it->block;

		if (it->at) {
			assert_true(borrow);
			assert_null(k->text);
			assert_true(it->at >= md && (size_t)(it->at - md) <= len &&
				k->len <= len - (size_t)(it->at - md));
			++*n_borrowed;
		} else {
			assert_non_null(k->text);
			assert_int_equal(strlen(k->text), k->len);
		}
		assert_int_equal(pmbot_buf_printf(&b, "%d %d %d %d %d %d [%s] [%.*s]\n",
			(int)it->kind, k->fence_line, k->content_line, k->content_column,
			(int)k->format, k->canonical, k->info, (int)k->len,
			it->at ? it->at : k->text), 0);
	}
	pmbot_extract_list_free(&list);
	return pmbot_buf_detach(&b, NULL);
}

static char *describe(const char *md, size_t len, size_t chunk)
{
	size_t unused = 0;

	return describe_blocks(md, len, chunk, 0, &unused);
}

/*
 * Pieces of every size from 1 byte up, and those of pmbot_extract_blocks,
 * give what one piece gives; so do borrowed contents. Returns how many
 * blocks were borrowed.
 */
static size_t assert_pieces_change_nothing(const char *md, size_t len)
{
	char *whole = describe(md, len, SIZE_MAX), *borrowed;
	size_t chunk, n_borrowed = 0;

	/* 72 lines that leave any title open: more than definitions_end() reads. */
#define LINES_8 "b\nc\nd\ne\nf\ng\nh\ni\n"
#define LINES_72 LINES_8 LINES_8 LINES_8 LINES_8 LINES_8 LINES_8 LINES_8 LINES_8 LINES_8
/* Block quote markers, 40 of them. */
#define Q40 ">>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>"

/* 0 first: the pieces of pmbot_extract_blocks. */
	for (chunk = 0; chunk <= len + 1; chunk++) {
		char *part = describe(md, len, chunk);

		if (strcmp(part, whole))
			fail_msg("piece size %zu of \"%.40s...\":\n%s\nwant:\n%s", chunk, md, part, whole);
		free(part);
		borrowed = describe_blocks(md, len, chunk, 1, &n_borrowed);
		if (strcmp(borrowed, whole))
			fail_msg("piece size %zu of \"%.40s...\", borrowed:\n%s\nwant:\n%s", chunk,
				md, borrowed, whole);
		free(borrowed);
	}
	free(whole);
	return n_borrowed;
}

static void test_extract__pieces_give_the_blocks_of_one_parse(void **state)
{
	static const char *const names[] = {
		"block-quote.md", "canonical-and-fallback.md", "canonical-json.md",
		"canonical-yaml.md", "fallback-one.md", "fallback-two.md", "indented-code.md",
		"info-extra-words.md", "legacy-alias.md", "list-item.md", "longer-fence.md",
		"tilde-fence.md", "two-canonical.md"
	};
	static const char *const md[] = {
		"# T\n\npara\n\n```json\n{}\n```\n\ntext\n```yaml\na: 1\n```\nafter\n",
		/* A fence in a list item, blank lines inside, closed by the list's end. */
		"- item\n\n  ```json\n  {}\n\n  ```\n- two\n  ```yaml\n  x\n\nnot in it\n```json\n[]\n```\n",
		/* Block quotes, lazy lines, an unclosed fence in a quote. */
		"> q\nlazy\n> ```yaml\n> a: 1\n\n```json\n{\"a\": 1}\n```\n> ```json\n",
		/* An HTML comment hides a fence; type 7 HTML ends at a blank line. */
		"<!--\n```json\n{}\n```\n-->\n```yaml\nb\n```\n<div>\n```json\nx\n```\n\n```json\n1\n```\n",
		/* Indented code, setext headings, a thematic break, link definitions. */
		"    ```json\n    {}\n\nHead\n===\n```json\n2\n```\nsub\n---\n[a]: /u\n```yaml\n3\n```\n***\n",
		/* CRLF and CR line ends, tabs, a longer fence, a fence never closed. */
		"x\r\n\r\n```json\r\n{}\r\n```\r\ny\r```yaml\r\nz\r````\n``` json\n\t```\n````\n~~~json\nopen\n",
		/* A U+FEFF line start in the middle is text, not a dropped BOM. */
		"\xef\xbb\xbfx\n\n\xef\xbb\xbf```json\n{}\n```\n\n```json\n[1]\n```\n",
		"```json\n{}\n```\n\xef\xbb\xbf```yaml\nq\n```\n\n\n\xef\xbb\xbf```json\n1\n```\n```yaml\n```\n",
		"```pm-bot:report-ir/v1\n{}\n```\n\n```pm-bot:report_ir/v1\n[]\n```\n  ```pm-bot:other\n  x\n  ```\n",
		"1. a\n2. ```json\n   {}\n   ```\n\n   more\n\n3) x\n```yaml\ny\n```",
		/* Long paragraphs: lines that continue one but could start a block afresh. */
		"para line\n*a* b\n_c_ d\n2. not a list\n    not code\n**bold** e\n* * *\n"
		"```json\n{}\n```\nmore text\nand more\n===\n```yaml\nq\n```\nx\n_ _ _\n"
		"~~~json\n[]\n~~~\ny\n*\tz\n-w\n<div> html\n```json\nin html\n```\n\n"
		"a\n___\nb\n=\n```json\n{\"k\": 1}\n```\n",
		/* Type 7 HTML cannot interrupt a paragraph, but starts a block afresh. */
		"text\nmore\n<span>\n```json\n{}\n```\nz\n2. y\n   ```yaml\n   a\n   ```\n",
		/*
		 * Top-level fenced blocks whose content is taken without cmark:
		 * closing fences longer, with trailing blanks, indented four
		 * (content) or three (closing), of the other character.
		 */
		"```json\n{\n``\n~~~\n    ```\n````  \t\nafter\n~~~~yaml\na\n```\n~~~\n   ~~~~~\nz\n",
		/* An indented fence: content lines lose up to that many spaces; tabs. */
		"  ```json\n{\n x\n   y\n\tz\n  \tw\n \tv\n\n  ```\n   ~~~yaml\n    a\n  b\n  \tc\n~~~\n",
		/* Empty content, unclosed at the end with and without a last line end. */
		"```json\n```\n```yaml\n\n\n```\n```json\n{}\n  ",
		"```pm-bot:report-ir/v1\n",
		"```pm-bot:report-ir/v1",
		"~~~ pm-bot:report-ir/v1 \n{}\n~~~\n```json\nunclosed\n\n",
		/* Fences in a list item and a block quote stay with cmark. */
		"- ```json\n  {}\n ```\n  x\n- b\n> ```json\n> 1\n```\n",
		/* Entities and escapes in the info string; a backtick in it is no fence. */
		"```&#106;son \\*x\n{}\n```\n``` js`on\n```\n",
		/* CR line ends and invalid UTF-8 inside the block. */
		"```json\r\n{}\r\n```\r\n```yaml\n\xff\xc3(\n```\n",
		/*
		 * The closing fence is looked for where a fence character is:
		 * fence characters inside lines, after text, after blanks.
		 */
		"```json\n{\"a\": \"```\"}\nx ```\n\t```\n.```\n```x\n``` y\n```\nafter\n",
		"~~~yaml\na: ~~~\n b ~~~\n~~ \n~~~~~~~x\n~~~~~~~ \t \nz\n~~~json\n~~~",
		/* Indented closing fences: none to four spaces, a tab. */
		"```json\n    ```\n   ```\nq\n```json\n  ```\nr\n```json\n ```\ns\n```json\n```\n",
		"```json\n1\n\t```\n    ```\n     ```\n````\n```\nt\n",
		/* Indented opening fences and shorter or longer closing ones. */
		"   ````json\n```\n~~~~\n`````\nu\n  ~~~~yaml\n~~~\n   ~~~~~~\nv\n",
		/* A closing fence at the very end, with and without blanks or a line end. */
		"```json\n{}\n```",
		"```json\n{}\n```  ",
		"```json\n\n```\t\n",
		"~~~json\n{}\n~~~~",
		/* CR and CRLF line ends: closing fences after each, at the end. */
		"```json\r{}\r ```\rw\r\n~~~yaml\r\na\r\n  ~~~\r\n```json\r```",
		"```json\n{}\n```\r\nx\n```json\n``\r```\r\n\r\n",
		"```json\r\n{}\r\n    ```\r\n```\r",
		/* Backticks everywhere but no closing fence: never closed. */
		"```json\n`\n``\n x```\n    ```\n````json\n```\n",
		/*
		 * A paragraph of link definitions is no heading's text: "===" after
		 * it stays text, and what follows continues that paragraph.
		 */
		"[a]:\nfoo\n===\n2. x\n   ```json\n   {}\n   ```\n    ```yaml\nq\n```\n",
		"  [a]: /u\nbar\n---\n    ```json\n1\n```\n",
		/* Text after definitions, where no later line makes them all definitions. */
		"[a]: /u\n(b)\n(c)\n===\n2. x\n   ```json\n   {}\nq\n[d]: /v\n*e*\n(f)\n2. y\n   ```yaml\n   1\nr\n",
		"[a]: /u\n'(b)\n(c)'\n===\n    ```json\n{}\n[d]:\n/v\n(e)\n2. y\n   ```yaml\nz\n",
		"[a]: /u\n[b\nc]: /v\n\\[d\n(e)\n===\n  ```json\n 1\n  ```\n[f]: /w \"t\n(g)\"\n2. z\n   ```yaml\n",
		/* Titles on the line after a definition, closed later or never. */
		"[a]: /u\n(b\n(c\nd)\n===\n    ```json\n1\n2. x\n   ```yaml\n   2\n",
		"[a]: /u\n(b)\n(c)\n(d\n===\n    ```json\n1\n2. x\n   ```yaml\n   2\n",
		"[a]: /u\n\"b\n(c)\n\"\n===\n2. x\n   ```json\n   3\n[d]: /v 'e'\n'f\n'\n===\n2. y\n   ```yaml\n",
		"[a]: /u\r\n'b\r\nc\r\n'\r\n---\r\n2. x\r\n   ```json\r\n   4\r\n",
		"[a]: /u\n[b]:\n/v\n===\n2. ```json\n   {}\n   ```\n[c]: /w\n[d\n]: /x\n---\n2. ```yaml\n",
		"[a]: /u\n[b\nc\nd]: /v\n===\n2. ```json\n   {}\n   ```\n",
		/* Link definitions only, a paragraph cmark drops: not blank lines. */
		"[a]:\nfoo\n2. x\n   ```json\n   {}\n    ```yaml\nq\n` ``",
		"[a]: /u\n[b]: /v\n\n2. x\n   ```json\n   {}\nq\n[c]: /w\r\n  \t\r\n2. y\n   ```yaml\n   1\nr\n",
		/* Long lists: items of every kind, fences in them and after them. */
		"- *a* *a*\n- *b* ```x```\n- ```json\n  {}\n  ```\n- c\n  lazy\nmore\n+ d\n"
		"  ```yaml\n  e\n- \n  ```json\n  []\n\n- f\n\n  ```json\n  2\n  ```\n"
		"1. g\n2) h\n   ```yaml\n   i\n3) j\n    ```json\n    k\n   ```\nafter\n```json\n3\n```\n",
		"* a\n  * b\n    ```json\n    {}\n    ```\n  * c\n* d\n   * e\n```yaml\nf\n```\n",
		"- a\n-\n  ```json\n  1\n  ```\n- > q\n  > ```yaml\n  > 2\n- b\n```json\n3\n```\n",
		/* Long paragraphs whose lines could each start a block afresh. */
		"(a)\n[b]\n2. c\n<i>\n    d\n-e\n#f\n\\g\n```json\n{}\n```\n(h)\n2) i\n===\n```yaml\nj\n```\n",
		"(a)\n[b]: /u\n    ```json\n{}\n```\n(c)\n---\n    ```yaml\nd\n```\n",
		"x\r\n(a)\r\n2. b\r\n\xef\xbb\xbf```json\r\n{}\r\n```\r\n(c)\r\n```yaml\r\nd\r\n",
		/* Long block quotes: lazy lines, nesting, lists and fences in them. */
		"> (a)\n> 2. b\nlazy\n>    ```json\n> {}\n> ```\n> > (c)\n> > [d]\n> >     e\n"
		"> > ```yaml\n> > f\n> g\n>\n> - h\n>   ```json\n>   1\n> - i\n```json\n2\n```\n",
		">(a)\n>\t(b)\n   > (c)\n> ```json\n>\t{}\n(d)\n> ```\n>> (e)\n>> ```yaml\n>> f\n",
		"> [a]:\n> foo\n> ===\n> 2. x\n>    ```json\n>    {}\n>    ```\n>     ```yaml\n> q\n",
		"> > (a)\n> > (b)\n> (c)\n> > (d)\n(e)\n```json\n{}\n```\n> - (f)\n>   (g)\n> ```yaml\nh\n",
		/* One long list item: its paragraph, a quote in it, a paragraph opened later. */
		"- (a)\n  (b)\n(c)\n  2. d\n  ```json\n  {}\n ```\n  (e)\n   ```yaml\n f\n```json\n1\n```\n",
		"- > (a)\n  > (b)\n  (c)\n  > ```json\n  > {}\n  ```yaml\n  x\n ```\n- > (d)\n  > > e\n```json\n2\n",
		"-\n  (a)\n  (b)\n ```json\n  {}\n  ```\n- x\n\n  (c)\n  (d)\n  ```yaml\n y\n",
		"-    (a)\n     (b)\n    ```json\n     {}\n10) (c)\n    (d)\n   ```yaml\n    e\n"
		"*\t(f)\n\t(g)\n  ```json\n\t3\n  ```\n",
		"1. - > (a)\n        (b)\n     > (c)\n     > ```json\n     > {}\n   - ```yaml\n     4\n",
		/* A paragraph opened later in a list item: the item's line stands for it. */
		"-\n  (a)\n  (b)\n\n  (c)\n  (d)\n ```json\n  {}\n  ```\n   (e)\n  (f)\n\n  ```yaml\n  1\n",
		"12)   [a]\n\n      (b)\n      (c)\n     (d)\n      ```json\n      {}\n-     x\n  (e)\n  (f)\n"
		"  ```yaml\n  2\n> 1. a\n>\n>    (g)\n>    (h)\n>   ```json\n>    3\n",
		"- - a\n\n    (b)\n    (c)\n   ```json\n    {}\n-\t(d)\n\n  (e)\n  (f)\n  ```yaml\n  4\n",
		"-   [a]\n\n    (b)\n    (c)\n  ```json\n x\n  ```\n1.  [d]\n\n    (e)\n    (f)\n  ```yaml\n y\n",
		/* A paragraph in a quote in an item: its lazy lines are the quote's. */
		"- > a\n  >\n  > (b)\n  (c)\n  (d)\n  2. ```json\n     {}\n     ```\n  ```yaml\n  5\n",
		/* Items and quotes opened on lines of their own, each given again. */
		"- a\n  12) (b)\n      (c)\n      (d)\n   ```json\n      {}\n  ```yaml\n  q\n",
		"- a\n\n  12) (b)\n      (c)\n      (d)\n      ```json\n      {}\n      ```\n",
		"1. a\n\n   > b\n   > 2. (c)\n   >    (d)\n   >    (e)\n   >   ```json\n   > {}\n",
		"- a\n  >  - (b)\n  >    (c)\n  >\n  >    (d)\n  >    (e)\n  > ```json\n  >  {}\n",
		"> - a\n>   - b\n>     - (c)\n>       (d)\n>       (e)\n>     ```json\n>     {}\n",
		/* Tabs in the markers: columns of four, a tab part padding, part content. */
		"-\t(a)\n\t(b)\n\t(c)\n  ```json\n\t{}\n   ```\n1.\t\t(d)\n\n   (e)\n   (f)\n  ```yaml\n   g\n",
		">\t(a)\n>\t(b)\n> \t(c)\n>\t```json\n>  {}\n\t- a\n\n\t  (h)\n\t  (i)\n\t ```json\n\t  1\n",
		"- a\n\n\t- (b)\n\t  (c)\n\t  (d)\n\t```json\n\t 2\n  \t- (e)\n\t\t(f)\n\t\t(g)\n\t  ```yaml\n",
		"-\t (a)\n\n     (b)\n     (c)\n     (d)\n  ```json\n x\n  ```\n",
		"-\t\t(a)\n\n  (b)\n  (c)\n      (d)\n  2. ```json\n     {}\n     ```\n",
		/* An item in an item opened earlier: its lines are the outer item's too. */
		"- a\n  - (b)\n    (c)\n    (d)\n  ```json\n  {}\n x\n  ```\n- > b\n  > - (e)\n  >   (f)\n  ```yaml\n y\n",
		/*
		 * Runs of link definitions, cut before a line opening with '[' or
		 * a letter where the lines before are definitions only: titles and
		 * destinations on the next line, labels over lines, escapes.
		 */
		"[a]: /u\n[b]: /v\n[c]:\n/w\n[d]: /x\n\"t\"\n[e]: /y 't\n[f]: /z'\n[g]: /z\n===\n"
		"2. x\n   ```json\n   {}\n",
		"[a]: /u\n[b\n[c]: /v\nd]: /w\n===\n2. x\n   ```json\n   {}\n[e\\]: /u\n[f\\[g]: /v\nh\n"
		"---\n    ```yaml\nq\n",
		"[a]: /u\n[b]: /v\n[c]: /w\n[d\n]: /x\n[e]: /y\n---\n2. ```json\n",
		"[a]: /u\n[b]: /v\n[c]: /w\n\"t\"\n[d]: /x\n===\n2. ```json\n   {}\n",
		"[a\\[b]:\n/u\n\"t\nx\"\n===\n2. ```json\n   {}\n",
		"[a]: /u\n[b]: /v\nc\n[d]: /w\n===\n2. ```json\n   {}\n[e]: /x\n\n[f]: /y\n[g]: /z\n===\n",
		/* After a heading or a thematic break; text opening with '[' after them. */
		"# T\n[a]: /u\n[b]: /v\n===\n    ```json\n1\n***\n[c]: /w\n[d *e*\n[f]: /x\n===\n"
		"2. ```yaml\n",
		"T\n=\n[a]: /u\n[b]: /v\n---\n2. ```json\n   {}\n",
		"[a]: /u\n[b]: /v\n[c *d* [e\n[f]: /w\n===\n2. ```json\n   {}\n[g] h\n[i]: /j\n---\n"
		"    ```yaml\n",
		"[a]: /u\n[b *c*\nd]: /v\n===\n2. ```json\n   {}\n[e *f*\ng]\n(h)\n===\n2. ```yaml\n",
		/* A first definition that fails whatever follows, or may not. */
		"[a]:\n(b\n(c\n===\n2. ```json\n   {}\n[d]: /u \"t\n(e)\n(f)\n===\n2. ```yaml\n",
		"[a]: /u (t\n(b\n(c)\n===\n2. ```json\n   {}\n[d]: /u 't\n(e)\n'\n===\n2. ```yaml\n",
		"[a]: /u x\n(b)\n(c)\n===\n2. ```json\n   {}\n  [d]\n: /u\n(e)\n===\n2. ```yaml\n",
		"[a\n(b)]:\n(c)\n===\n2. ```json\n   {}\n[d]:\n\n(e)\n(f)\n===\n2. ```yaml\n",
		"[a]: `x\n(b)`\n(c)\n===\n2. ```json\n   {}\n[d]: /u \"t\\\n(e)\n===\n2. ```yaml\n",
		/* In a block quote, where the definitions are not cut. */
		"> [a]: /u\n> [b]: /v\n> [c x\n> [d]: /w\n> ===\n> 2. ```json\n>    {}\n",
		/* Definitions, then text, in quotes and list items; lazy lines. */
		"> [a]: /u\n> (b)\n> (c)\n> ===\n> 2. ```json\n>    {}\n- [d]: /v\n  (e)\n  (f)\n  ===\n"
		"  2. ```yaml\n     1\n",
		"> [a]:\n> (b\n> (c\n> ===\n> 2. ```json\n>    {}\n> [d]: /u \"t\n> (e)\n(f)\n> ===\n"
		"> 2. ```yaml\n",
		"> [a]: /u\n> \"t\n> (b)\n> ===\n> 2. ```json\n>    {}\n- > [c]: /v\n  > 'd\n  > (e)'\n"
		"  > ===\n  > 2. ```yaml\n",
		"> [a]: /u\n(b)\n(c)\n> ===\n> 2. ```json\n>    {}\n1. > - [d]: /v\n       (e)\n     > (f)\n"
		"     > ---\n     > 2. ```yaml\n",
		"> (x)\n>\n> [a]: /u\n> [b]: /v\n> (c\n> d)\n> ===\n> 2. ```json\n>    {}\n> (e)\n>\n"
		"> [f]: /w\n> (g)\n> ===\n> 2. ```yaml\n",
		/*
		 * Runs of definitions in quotes and list items, cut where the
		 * piece up to a line holds definitions only: lazy and blank lines,
		 * titles and labels over lines, four spaces in, tabs, a fence
		 * that ends an item, text opening with '[' after them.
		 */
		"> [a]: /u\n> [b]: /v\n>  [c]:\n> /w\n> \"t\"\n[d]: /x\n>\n>   [e]: /y\n> [f\n> g]: /z\n"
		"> h\n> ===\n> 2. ```json\n>    {}\n",
		"> > [a]: /u\n> >     b c\n> > ===\n> > 2. ```json\n> >    {}\n> > [d]: /v\n>     [e]: /w\n"
		"> > f\n> > ---\n> > 2. ```yaml\n",
		"- [a]: /u\n  [b]: /v\n [c]: /w\n    d\n  ===\n  2. ```json\n     {}\n- [e]: /x\n\n  [f]: /y\n"
		"  g\n  ---\n  2. ```yaml\n",
		"> - [a]: /u\n>   [b]: /v\n>   ```json\n>  x\n>   ```\n> - [c]: /w\n>   [d]: /x\n>   e\n"
		">   ===\n>   2. ```yaml\n",
		"- > [a]: /u\n  > [b]: /v\n> [c]: /w\n  > d\n  > ===\n  > 2. ```json\n  >    {}\n",
		"12)   [a]: /u\n      [b]: /v\n     [c]: /w\n      ```json\n      {}\n-\t[d]: /x\n\t[e]: /y\n"
		"  ```yaml\n\t1\n",
		"> x\n>\n> [a]: /u\n> [b *c*\n> [d]: /v\n> ===\n> 2. ```json\n>    {}\n",
		"- x\n\n  [a]: /u\n  [b]: /v\n  [c *d*\n  [e]: /w\n  ---\n  2. ```json\n     {}\n",
		/*
		 * A title left open: closed with a blank after it or with text,
		 * by an escaped closer, stopped by one that is not; in quotes and
		 * items, after definitions, an underline while it is open.
		 */
		"[a]: /u \"t\n(b)\n(c)\nd\"\n===\n2. ```json\n   {}\n[e]: /u \"t\n(f)\ng\" h\n===\n"
		"2. ```yaml\n",
		"[a]: /u \"t\n(b \\\" c)\n(d)\ne\\\"\n===\n2. ```json\n   {}\n[f]: /u \"t\n(g)\n\\\"h\n"
		"(i)\n===\n2. ```yaml\n",
		"[a]: /u (t\n\\(b\\)\n(c\n===\n2. ```json\n   {}\n[d]: /u (t\n\\(e\n(f)\ng)\n===\n"
		"2. ```yaml\n",
		"> [a]: /u 't\n> (b)\n(c)\n> d'\n> ===\n> 2. ```json\n>    {}\n- [e]: /u \"t\n  (f)\n"
		"  (g)\n  ===\n  2. ```yaml\n",
		"[a]: /u\n[b]: /v \"t\n(c)\nd\"\n===\n2. ```json\n   {}\n[e]: /u \"t\n(f)\n(g)\nx\" y\n"
		"(h)\n(i)\n===\n2. ```yaml\n",
		/* A title opening on the line after the destination. */
		"[a]: /u\n\"t\n(b)\nc\"\n===\n2. ```json\n   {}\n[d]: /u\n(e\nf) g\n===\n2. ```yaml\n",
		"> [a]: /u\n> 't\n> (b)\nc'\n> ===\n> 2. ```json\n>    {}\n",
		/* Stopped by an unescaped '(' or closer; no definition: "[ ]"; in a quote, then failing. */
		"[a]: /u (t\n(b\nc)\n===\n2. ```json\n   {}\n[ ]: /u \"t\n(d)\ne\"\n===\n2. ```yaml\n",
		"> [a]: /u \"t\n> (b)\n> (c)\n> x\" y\n> (d)\n> e\"\n> ===\n> 2. ```json\n>    {}\n",
		/* The same past the 64 lines definitions_end() reads. */
		"[a]: /u \"t\n" LINES_72 "\"b\" c\nd\"\n===\n2. ```json\n   {}\n",
		"[a]: /u (t\n" LINES_72 "(b\nc)\n===\n2. ```json\n   {}\n",
		"[ ]: /u \"t\n" LINES_72 "e\"\n===\n2. ```json\n   {}\n",
		/* No definition, the count of its lines short by a code span. */
		"[ ]: /u \"t\n`b\nc`\nd\"\n===\n2. ```json\n   {}\n",
		/* Quotes 40 deep: a paragraph, a list, lazy lines, fences. */
		Q40 " (a)\n" Q40 " (b)\n(c)\n" Q40 " 2. d\n" Q40 " ```json\n" Q40 " {}\n" Q40
		" ```\n" Q40 "> (e)\n" Q40 "> ```yaml\n",
		/* Definitions after the title closes, past those 64 lines and before. */
		"[a]: /u \"t\nb\nc\"\n[d]: /v\n[e]: /w\n[f\ng]: /x\n===\n2. ```json\n   {}\n",
		"[a]: /u \"t\n" LINES_72 "x\"\n[b]: /v\n[c]: /w\n[d\ne]: /x\n===\n2. ```json\n   {}\n",
	};
	size_t i, n_borrowed = 0;

	(void)state;
	for (i = 0; i < sizeof(md) / sizeof(md[0]); i++)
		n_borrowed += assert_pieces_change_nothing(md[i], strlen(md[i]));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		pmbot_buf b = PMBOT_BUF_INIT;

		read_fixture(&b, names[i]);
		n_borrowed += assert_pieces_change_nothing(b.buf, b.len);
		pmbot_buf_free(&b);
	}
	/* Not a vacuous comparison: most blocks here stand at column 1. */
	assert_true(n_borrowed >= 100);
}

/*
 * Only a block whose content stands in the file as it is extracted is
 * borrowed: at column 1 with a last line end. An indented fence, a block
 * in a list item or quote, CRLF line ends, a last line without "\n" are
 * copied. Pieces of 1 byte: every block is one a piece ends in.
 */
static void test_extract__only_a_block_as_it_stands_is_borrowed(void **state)
{
	static const struct {
		const char *md;
		int borrowed;
	} cases[] = {
		{ "x\n\n```json\n{}\n```\n", 1 },
		{ "```json\n{}\n", 1 },        /* never closed, ends with "\n" */
		{ "```json\n{}", 0 },           /* never closed, no last "\n" */
		{ "```json\n```\n", 0 },        /* empty: nothing to borrow */
		{ " ```json\n{}\n```\n", 0 },   /* indented fence */
		{ "- ```json\n  {}\n  ```\n", 0 },
		{ "> ```json\n> {}\n> ```\n", 0 },
		{ "```json\r\n{}\r\n```\r\n", 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pmbot_extract_list list = PMBOT_EXTRACT_LIST_INIT;
		const char *md = cases[i].md;

		assert_int_equal(pmbot_extract_blocks_chunked(&list, md, strlen(md), 1, 1), 0);
		assert_int_equal(list.count, 1);
		if ((list.items[0].at != NULL) != cases[i].borrowed)
			fail_msg("case %zu (\"%s\"): borrowed %d", i, md, list.items[0].at != NULL);
		if (cases[i].borrowed)
			assert_memory_equal(list.items[0].at, "{}\n", 3);
		pmbot_extract_list_free(&list);
	}
}

/*
 * Text after the last "```" or "~~~" is not parsed: no block can open
 * there. Blocks before it, after it in prose holding shorter runs, and
 * far past a piece boundary are all still found, with their lines.
 */
static void test_extract__nothing_past_the_last_fence_run_is_missed(void **state)
{
	static const char *const prose = "Prose *a* _b_ ``c`` ~~d~~ ` `` ~ ~~ and more.\n";
	static const struct {
		const char *head, *tail;
		size_t pad;       /* lines of prose between head and tail */
		const char *want; /* "info@line" of each block, in order */
	} cases[] = {
		{ "Intro ``x`` ~~y~~\n\n```json\n{}\n```\n\n", "After ``y`` ~~z~~\n", 0, "json@3" },
		{ "```json\n{}\n```\n\npara\n\n~~~yaml\na: 1\n~~~\n\ntail\n", "", 0,
			"json@1 yaml@7" },
		{ "no fence *a* **b** ``c``\n- list\n> quote\n", "", 0, "" },
		{ "text ```` ``` ```` inline\n\n```json\n{}\n```\n", "", 0, "json@3" },
		{ "- item\n\n  ```yaml\n  a: 1\n  ```\n", "", 0, "yaml@3" },
		{ "````json\n{}\n````", "", 0, "json@1" },
		{ "```json\n{}\n```\n\n", "\n~~~yaml\na: 1\n~~~\n", 8000, "json@1 yaml@8006" },
		{ "```json\n{}\n```\n\n", "", 8000, "json@1" },
		{ "", "\n```pm-bot:report-ir/v1\n{}\n```\n", 8000, "pm-bot:report-ir/v1@8002" },
	};
	static const size_t chunks[] = { 0, 1, 64, 128 * 1024 };
	size_t i, c, k;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pmbot_buf md = PMBOT_BUF_INIT;

		assert_int_equal(pmbot_buf_puts(&md, cases[i].head), 0);
		for (k = 0; k < cases[i].pad; k++)
			assert_int_equal(pmbot_buf_puts(&md, prose), 0);
		assert_int_equal(pmbot_buf_puts(&md, cases[i].tail), 0);
		for (c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			pmbot_extract_list list = PMBOT_EXTRACT_LIST_INIT;
			pmbot_buf got = PMBOT_BUF_INIT;

			assert_int_equal(chunks[c] ? pmbot_extract_blocks_chunked(&list, md.buf, md.len,
				chunks[c], 0) : pmbot_extract_blocks(&list, md.buf, md.len), 0);
			for (k = 0; k < list.count; k++)
				assert_int_equal(pmbot_buf_printf(&got, "%s%s@%d", k ? " " : "",
					list.items[k].block.info, list.items[k].block.fence_line), 0);
			if (strcmp(got.buf, cases[i].want))
				fail_msg("case %zu, pieces of %zu: \"%s\", want \"%s\"", i, chunks[c],
					got.buf, cases[i].want);
			pmbot_buf_free(&got);
			pmbot_extract_list_free(&list);
		}
		pmbot_buf_free(&md);
	}
}

/*
 * One list, block quote, paragraph or run of link definitions as long as
 * the file, the report after it: each is read in pieces of about the
 * chunk, never whole, and the report is found at its line. (cmark keeps
 * some 150 bytes a byte of such text until a piece is done: 64 MiB of it
 * in one piece is gigabytes.)
 */
#define DEFINITIONS_8 "[a]: /u\n[b]: /v\n[c]: /w\n[d]: /x\n[e]: /y\n[f]: /z\n[g]: /u\n[h]: /v\n"
#define DEFINITIONS_72 DEFINITIONS_8 DEFINITIONS_8 DEFINITIONS_8 DEFINITIONS_8 DEFINITIONS_8 \
	DEFINITIONS_8 DEFINITIONS_8 DEFINITIONS_8 DEFINITIONS_8
#define QUOTED_8 "> [a]: /u\n> [b]: /v\n> [c]: /w\n> [d]: /x\n> [e]: /y\n> [f]: /z\n> [g]: /u\n" \
	"> [h]: /v\n"
#define QUOTED_72 QUOTED_8 QUOTED_8 QUOTED_8 QUOTED_8 QUOTED_8 QUOTED_8 QUOTED_8 QUOTED_8 QUOTED_8

static void test_extract__one_long_block_is_read_in_pieces(void **state)
{
	/* A title left open, closed pieces later: then definitions (and text). */
	static const char late[] = "[a]: /u \"t\n", late_text[] = "[a]: /u \"t\n";
	static const struct {
		const char *first, *line;
	} shapes[] = {
		{ "", "- *a* *b* *c* *d*\n" },                   /* a list */
		{ "", "(*a* *b* *c* *d*)\n" },                   /* a paragraph, no plain line */
		{ "", "> (*a* *b* *c* *d*)\n" },                 /* a block quote */
		{ "", "> > - (*a* *b* *c* *d*)\n" },             /* quotes and a list */
		{ "- (start\n", "  (*a* *b* *c* *d*)\n" },      /* one list item's paragraph */
		{ "- > (start\n", "  > (*a* *b* *c* *d*)\n" },  /* a quote in one item */
		{ "-\n", "  (*a* *b* *c* *d*)\n" },              /* an item's later paragraph */
		{ "- a\n\n  2. b\n", "     (*a* *b* *c* *d*)\n" }, /* items opened on two lines */
		{ "- a\n\n  > b\n", "  > (*a* *b* *c* *d*)\n" },  /* a quote opened later in an item */
		{ "-\t(a\n", "\t(*a* *b* *c* *d*)\n" },         /* a tab after the marker */
		{ "[a]: /u\n", "(*a* *b* *c* *d*)\n" },          /* text after a definition */
		{ "", "[a]: /u\n" },                            /* link definitions only */
		{ "", "[a]: /u\n'*a* *b*'\n" },                 /* their titles on lines of their own */
		{ "# T\n", "[a]: /u\n" },                       /* definitions after a heading */
		{ DEFINITIONS_72, "(*a* *b* *c* *d*)\n" },       /* text after 72 definitions */
		{ DEFINITIONS_72, "[*a* *b* *c* *d*\n" },        /* text opening with '[' after them */
		{ "[a]:\n", "(*a* *b* *c* *d*)\n" },            /* a definition that fails */
		{ "> [a]: /u\n", "> (*a* *b* *c* *d*)\n" },     /* text after one, in a quote */
		{ "- [a]:\n", "  (*a* *b* *c* *d*)\n" },        /* a failed one in a list item */
		{ "> x\n>\n> [a]: /u\n", "> (*a* *b* *c* *d*)\n" }, /* a quote opened before it */
		{ "- x\n\n  [a]: /u\n", "  (*a* *b* *c* *d*)\n" },  /* an item opened before it */
		{ "", "> [a]: /u\n" },                          /* definitions only, in a quote */
		{ "- [a]: /u\n", "  [b]: /v\n" },               /* in a list item */
		{ "> - x\n>\n", ">   [a]: /u\n>   \"t\"\n" },    /* in an item in a quote */
		{ "> x\n>\n" QUOTED_72, "> (*a* *b* *c* *d*)\n" }, /* text after 72, in a quote */
		{ "", Q40 " (*a* *b* *c* *d*)\n" },              /* quotes 40 deep */
		{ "[a]: /u \"t\n", "(*a* *b* *c* *d*)\n" },    /* a title left open */
		{ "[a]: /u\n\"t\n", "(*a* *b* *c* *d*)\n" },   /* opening on the next line */
		{ "> [a]: /u 't\n", "> (*a* *b* *c* *d*)\n" }, /* in a quote */
		{ "- [a]: /u (t\n", "  *a* *b* *c* *d*\n" },   /* in a list item */
		{ "[a]: /u \"t\n", "*a* \\\" *b* *c*\n" },      /* escaped closers in it */
		{ "[a]: /u \"t\n" LINES_72 "x\" y\n", "(*a* *b* *c* *d*)\n" }, /* failing on line 74 */
		{ "[a]: /u \"t\n" LINES_72 "x\"\n", "[b]: /v\n" }, /* closed there, definitions after */
		{ late, "[b]: /v\n" },                           /* the same, pieces later */
		{ late_text, "(*a* *b* *c* *d*)\n" },            /* then 72 and text */
	};
	static const size_t chunk = 4096;
	size_t i, k, largest;

	(void)state;
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		pmbot_extract_list list = PMBOT_EXTRACT_LIST_INIT;
		pmbot_buf md = PMBOT_BUF_INIT;
		int lines = 1;

		assert_int_equal(pmbot_buf_puts(&md, shapes[i].first), 0);
		for (k = 0; (shapes[i].first == late || shapes[i].first == late_text) && k < 3000; k++)
			assert_int_equal(pmbot_buf_puts(&md, k < 2999 ? "b\n" : "x\"\n"), 0);
		if (shapes[i].first == late_text)
			assert_int_equal(pmbot_buf_puts(&md, DEFINITIONS_72), 0);
		for (k = 0; k < 20000; k++)
			assert_int_equal(pmbot_buf_puts(&md, shapes[i].line), 0);
		for (k = 0; k < md.len; k++)
			lines += md.buf[k] == '\n';
		assert_int_equal(pmbot_buf_puts(&md, "\n```json\n{}\n```\n"), 0);
		assert_int_equal(pmbot_extract__blocks_measured(&list, md.buf, md.len, chunk,
			&largest), 0);
		assert_int_equal(list.count, 1);
		assert_int_equal(list.items[0].block.fence_line, lines + 1);
		assert_string_equal(list.items[0].block.text, "{}\n");
		if (largest > 4 * chunk)
			fail_msg("shape %zu: %zu bytes read at once of %zu", i, largest, md.len);
		pmbot_extract_list_free(&list);
		pmbot_buf_free(&md);
	}
}

/*
 * A block of thousands of lines (the line ends after it are counted 16
 * bytes a step, in runs of up to 255 steps): the blocks after it keep
 * their lines whatever the pieces, with '\n' and with "\r\n" line ends.
 */
static void test_extract__long_block_keeps_the_lines_after_it(void **state)
{
	/* 16 bytes a line: every step finds its '\n' in the same lane. */
	static const char *const line[] = {
		"  \"k\": \"a ``` b\",\n", "  \"k\": 1234567,\n", "  \"k\": 123456,\r\n"
	};
	static const size_t chunks[] = { 1, 64, 4096, 128 * 1024 };
	size_t v, i, c, n_borrowed = 0;

	(void)state;
	for (v = 0; v < sizeof(line) / sizeof(line[0]); v++) {
		pmbot_buf b = PMBOT_BUF_INIT;
		pmbot_extract_list list = PMBOT_EXTRACT_LIST_INIT;
		char *whole;

		assert_int_equal(pmbot_buf_puts(&b, "# T\n\n```json\n{\n"), 0);
		for (i = 0; i < 5000; i++)
			assert_int_equal(pmbot_buf_puts(&b, line[v]), 0);
		assert_int_equal(pmbot_buf_puts(&b, "}\n  ```\ntext\n\n```yaml\na: 1\n```\n"), 0);
		assert_int_equal(pmbot_extract_blocks_chunked(&list, b.buf, b.len, 64, 0), 0);
		assert_int_equal(list.count, 2);
		assert_int_equal(list.items[0].block.fence_line, 3);
		assert_int_equal(list.items[1].block.fence_line, 5009);
		pmbot_extract_list_free(&list);
		whole = describe(b.buf, b.len, SIZE_MAX);
		/* 0: pmbot_extract_blocks, in its own pieces of 128 KB. */
		for (c = 0; c <= sizeof(chunks) / sizeof(chunks[0]); c++) {
			char *part = describe(b.buf, b.len, c ? chunks[c - 1] : 0);

			assert_string_equal(part, whole);
			free(part);
			part = describe_blocks(b.buf, b.len, c ? chunks[c - 1] : 0, 1, &n_borrowed);
			assert_string_equal(part, whole);
			free(part);
		}
		/* A piece shorter than the block ends in it: borrowed, unless CRLF. */
		assert_int_equal(pmbot_extract_blocks_chunked(&list, b.buf, b.len, 64, 1), 0);
		assert_true((list.items[0].at != NULL) == (v < 2));
		pmbot_extract_list_free(&list);
		free(whole);
		pmbot_buf_free(&b);
	}
}

static void assert_borrowed_block_gives_the_report_of_a_copied_one(const char *fixture_name,
	const char *anchor, const char *pointer)
{
	pmbot_buf fixture = PMBOT_BUF_INIT, md = PMBOT_BUF_INIT;
	pmbot_extract_list copied = PMBOT_EXTRACT_LIST_INIT, borrowed = PMBOT_EXTRACT_LIST_INIT;
	pmbot_diag_list d1 = PMBOT_DIAG_LIST_INIT, d2 = PMBOT_DIAG_LIST_INIT;
	pmbot_report *r1 = NULL, *r2 = NULL;
	json_t *t1;
	const char *at;
	int l1, c1, l2, c2;
	size_t i;

	read_fixture(&fixture, fixture_name);
	/* 150 KB of blank lines inside the block after `anchor`: the same value. */
	assert_non_null(at = strstr(fixture.buf, anchor));
	at += strlen(anchor);
	assert_int_equal(pmbot_buf_put(&md, fixture.buf, (size_t)(at - fixture.buf)), 0);
	for (i = 0; i < 50000; i++)
		assert_int_equal(pmbot_buf_puts(&md, "  \n"), 0);
	assert_int_equal(pmbot_buf_puts(&md, at), 0);

	assert_int_equal(pmbot_extract_blocks(&copied, md.buf, md.len), 0);
	assert_int_equal(pmbot_extract_blocks_borrowing(&borrowed, md.buf, md.len), 0);
	assert_int_equal(borrowed.count, 1);
	assert_non_null(borrowed.items[0].at);

	assert_int_equal(pmbot_report_load(&r1, "big.md", md.buf, md.len, NULL, &d1), PMBOT_OK);
	assert_int_equal(pmbot_report_load_values(&r2, "big.md", md.buf, md.len, NULL, &d2),
		PMBOT_OK);
	assert_int_equal(r1->block.len, copied.items[0].block.len);
	assert_string_equal(r1->block.text, copied.items[0].block.text);
	assert_null(r2->block.text);
	assert_int_equal(r2->block.len, 0);
	assert_int_equal(d1.count, d2.count);
	t1 = json_incref(tree_of(r1));
	assert_true(json_equal(t1, tree_of(r2)));
	json_decref(t1);
	assert_int_equal(pmbot_report_find(r1, pointer, &l1, &c1), 1);
	assert_int_equal(pmbot_report_find(r2, pointer, &l2, &c2), 1);
	assert_true(l1 > 50000 && l1 == l2 && c1 == c2);

	pmbot_report_free(r1);
	pmbot_report_free(r2);
	pmbot_diag_list_free(&d1);
	pmbot_diag_list_free(&d2);
	pmbot_extract_list_free(&copied);
	pmbot_extract_list_free(&borrowed);
	pmbot_buf_free(&md);
	pmbot_buf_free(&fixture);
}

/*
 * A block longer than the pieces the Markdown is read in is parsed where it
 * lies, JSON or YAML, its text followed by the closing fence rather than a
 * NUL. pmbot_report_load keeps a copy of its text, the one extraction
 * without borrowing gives; pmbot_report_load_values keeps none. Both give
 * the same values, positions and diagnostics.
 */
static void test_extract__a_borrowed_block_gives_the_report_of_a_copied_one(void **state)
{
	(void)state;
	assert_borrowed_block_gives_the_report_of_a_copied_one("canonical-json.md", "{\n",
		"/features/0/title");
	assert_borrowed_block_gives_the_report_of_a_copied_one("canonical-yaml.md",
		"schema_version: report_ir/v1\n", "/tasks/0/title");
}

/* Check pointer `p` (and some of its variants) against the reference map. */
static void check_find(const pmbot_report *r, const pmbot_srcmap *ref, const char *p)
{
	int l1 = -1, c1 = -1, l2 = -1, c2 = -1;

	assert_int_equal(pmbot_report_find(r, p, &l1, &c1), pmbot_srcmap_find(ref, p, &l2, &c2));
	if (l1 != l2 || c1 != c2)
		fail_msg("pointer '%s': %d:%d, the map says %d:%d", p, l1, c1, l2, c2);
}

static void check_find_all(const pmbot_report *r, const pmbot_srcmap *ref,
	const json_t *v, pmbot_buf *ptr)
{
	static const char *const tails[] = { "", "/", "/missing", "/0", "/01", "/-", "/~", "/~2", "/99/x" };
	size_t len = ptr->len, i;
	const char *key;
	json_t *m;

	for (i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		assert_int_equal(pmbot_buf_puts(ptr, tails[i]), 0);
		check_find(r, ref, ptr->buf);
		pmbot_buf_truncate(ptr, len);
	}
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, m) {
			assert_int_equal(pmbot_json_pointer_push(ptr, key), 0);
			check_find_all(r, ref, m, ptr);
			pmbot_buf_truncate(ptr, len);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, m) {
			assert_int_equal(pmbot_json_pointer_push_index(ptr, i), 0);
			check_find_all(r, ref, m, ptr);
			pmbot_buf_truncate(ptr, len);
		}
	}
}

/*
 * A JSON block's positions come from its document (and, after many
 * lookups, a map built from it): every pointer, recorded or not, answers
 * as the map pmbot_json_parse() fills, before and after the switch.
 */
static void test_extract__json_positions_answer_as_the_parsers_map(void **state)
{
	static const char *md =
		"# Report\n\n"
		"- item\n\n"
		"  ```pm-bot:report-ir/v1\n"
		"  {\"schema_version\": \"report_ir/v1\", \"a/b\": {\"c~d\": [1, {\"\": 2}]},\n"
		"   \"tasks\": [{\"stable_id\": \"t1\"}, {\"stable_id\": \"t2\", \"x\": [[], {}, [3]]}],\n"
		"   \"~\": \"\\u00e9\", \"0\": {\"01\": true, \"1\": null}}\n"
		"  ```\n";
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf ptr = PMBOT_BUF_INIT;
	pmbot_report *r = NULL;
	pmbot_srcmap *ref = NULL;
	json_t *root = NULL;
	int round;

	(void)state;
	assert_int_equal(load_string(&r, &d, md), PMBOT_OK);
	assert_non_null(r->doc);
	assert_null(r->map);
	assert_non_null(ref = pmbot_srcmap_new());
	assert_int_equal(pmbot_json_parse(&root, ref, "mem.md", r->block.text, r->block.len,
		r->block.content_line, r->block.content_column - 1, NULL, &d), PMBOT_OK);
	assert_true(json_equal(root, tree_of(r)));
	/* Enough rounds to pass from walking the document to its map. */
	for (round = 0; round < 3; round++) {
		pmbot_buf_clear(&ptr);
		check_find_all(r, ref, tree_of(r), &ptr);
		check_find(r, ref, "tasks");
		check_find(r, ref, "/a~1b/c~0d/1/");
		check_find(r, ref, "/a~1b/c~1d");
		check_find(r, ref, "/a/b");
	}
	json_decref(root);
	pmbot_srcmap_free(ref);
	pmbot_buf_free(&ptr);
	pmbot_report_free(r);
	pmbot_diag_list_free(&d);
}

/*
 * A YAML block has a document too, converted from its value: walked
 * without the map, it answers every pointer as the map does.
 */
static void test_extract__yaml_document_answers_as_its_map(void **state)
{
	static const char *md =
		"# Report\n\n"
		"> ```pm-bot:report-ir/v1\n"
		"> schema_version: report_ir/v1\n"
		"> a/b: {c~d: [1, {'': 2}]}\n"
		"> base: &b {stable_id: t0, x: [[], {}, [3]]}\n"
		"> tasks:\n"
		">   - stable_id: t1\n"
		">   - *b\n"
		">   - {stable_id: t2, 1: one, ~: none}\n"
		"> \"~\": \xc3\xa9\n"
		"> \"0\": {\"01\": true, \"1\": null}\n"
		"> ```\n";
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf ptr = PMBOT_BUF_INIT;
	pmbot_report *r = NULL, walked;
	pmbot_srcmap *ref = NULL;
	const pmbot_jnode *n;
	json_t *back = NULL;

	(void)state;
	assert_int_equal(load_string(&r, &d, md), PMBOT_OK);
	assert_int_equal(r->block.format, PMBOT_FORMAT_YAML);
	assert_non_null(r->doc);
	assert_non_null(r->map);
	/* The document holds the value the YAML parser reads from the block. */
	assert_non_null(ref = pmbot_srcmap_new());
	assert_int_equal(pmbot_yaml_parse(&back, ref, "mem.md", r->block.text, r->block.len,
		r->block.content_line, r->block.content_column - 1, NULL, &d), PMBOT_OK);
	assert_true(json_equal(back, tree_of(r)));
	pmbot_srcmap_free(ref);
	n = pmbot_jnode_at(pmbot_jnode_get(pmbot_jdoc_root(r->doc), "tasks"), 1);
	assert_int_equal(n->line, 9);
	assert_int_equal(n->column, 7);
	/* The alias's members sit where they were copied from. */
	assert_int_equal(pmbot_jnode_first(n)->line, 6);
	assert_string_equal(pmbot_jnode_first(n)->key, "stable_id");
	/* The same report with no map and no cache: every answer from the nodes. */
	walked = *r;
	walked.map = NULL;
	walked.pos = NULL;
	check_find_all(&walked, r->map, tree_of(r), &ptr);
	check_find(&walked, r->map, "tasks");
	check_find(&walked, r->map, "/a~1b/c~0d/1/");
	check_find(&walked, r->map, "/a/b");
	json_decref(back);
	pmbot_buf_free(&ptr);
	pmbot_report_free(r);
	pmbot_diag_list_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extract__loads_canonical_json_block),
		cmocka_unit_test(test_extract__loads_canonical_yaml_block),
		cmocka_unit_test(test_extract__accepts_legacy_alias),
		cmocka_unit_test(test_extract__accepts_tilde_fence),
		cmocka_unit_test(test_extract__longer_fence_keeps_inner_backtick_lines),
		cmocka_unit_test(test_extract__maps_lines_of_fence_in_list_item),
		cmocka_unit_test(test_extract__maps_lines_of_fence_in_block_quote),
		cmocka_unit_test(test_extract__ignores_indented_code_block),
		cmocka_unit_test(test_extract__info_string_with_extra_words_is_not_canonical),
		cmocka_unit_test(test_extract__rejects_two_canonical_blocks),
		cmocka_unit_test(test_extract__names_every_line_of_three_canonical_blocks),
		cmocka_unit_test(test_extract__fallback_uses_single_candidate),
		cmocka_unit_test(test_extract__fallback_rejects_two_candidates),
		cmocka_unit_test(test_extract__fallback_without_candidate_is_no_block),
		cmocka_unit_test(test_extract__no_block_message_names_unparsable_fallback_block),
		cmocka_unit_test(test_extract__canonical_block_wins_over_fallback_candidate),
		cmocka_unit_test(test_extract__yaml_error_line_is_in_file_terms),
		cmocka_unit_test(test_extract__json_error_line_is_in_file_terms),
		cmocka_unit_test(test_extract__empty_file_has_no_block),
		cmocka_unit_test(test_extract__crlf_file_keeps_line_numbers),
		cmocka_unit_test(test_extract__rejects_invalid_utf8_outside_block),
		cmocka_unit_test(test_extract__rejects_nul_byte),
		cmocka_unit_test(test_extract__rejects_file_over_size_limit),
		cmocka_unit_test(test_extract__size_limit_comes_before_utf8_check),
		cmocka_unit_test(test_extract__canonical_format_follows_first_character),
		cmocka_unit_test(test_extract__same_input_gives_same_bytes),
		cmocka_unit_test(test_extract__blocks_lists_relevant_fences_in_document_order),
		cmocka_unit_test(test_extract__fallback_info_word_is_case_insensitive_and_exact),
		cmocka_unit_test(test_extract__pieces_give_the_blocks_of_one_parse),
		cmocka_unit_test(test_extract__only_a_block_as_it_stands_is_borrowed),
		cmocka_unit_test(test_extract__nothing_past_the_last_fence_run_is_missed),
		cmocka_unit_test(test_extract__one_long_block_is_read_in_pieces),
		cmocka_unit_test(test_extract__long_block_keeps_the_lines_after_it),
		cmocka_unit_test(test_extract__a_borrowed_block_gives_the_report_of_a_copied_one),
		cmocka_unit_test(test_extract__json_positions_answer_as_the_parsers_map),
		cmocka_unit_test(test_extract__yaml_document_answers_as_its_map),
	};

	return cmocka_run_group_tests(tests, NULL, free_tree);
}
