#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/json.h"
#include "pmbot/doc.h"
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

#define FILE_NAME "plans/q3.md"

static void assert_canon(const json_t *v, const char *expect)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_json_canonical(&b, v), 0);
	assert_string_equal(b.buf, expect);
	pmbot_buf_free(&b);
}

static void assert_pos(const pmbot_srcmap *map, const char *pointer, int line, int col)
{
	int l = -1, c = -1;

	assert_int_equal(pmbot_srcmap_find(map, pointer, &l, &c), 1);
	assert_int_equal(l, line);
	assert_int_equal(c, col);
}

static int compact_agrees(const char *text, size_t len, int line_base, int col_base,
	const pmbot_limits *lim, int rc, const json_t *got, const pmbot_srcmap *map,
	const pmbot_diag_list *diags);

/* Parse `text` expecting success and no diagnostics. */
static json_t *parse_ok(const char *text, pmbot_srcmap *map, int line_base, int col_base)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *root = NULL;

	assert_int_equal(pmbot_json_parse(&root, map, FILE_NAME, text, strlen(text),
		line_base, col_base, NULL, &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	assert_non_null(root);
	assert_true(compact_agrees(text, strlen(text), line_base, col_base, NULL, PMBOT_OK, root,
		map, &diags));
	return root;
}

/* Parse expecting rejection with exactly one diagnostic of `code`. */
static const pmbot_diag *parse_fail(pmbot_diag_list *diags, const char *text, size_t len,
	int line_base, int col_base, const pmbot_limits *lim, const char *code)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root = (json_t *)1;

	assert_int_equal(pmbot_json_parse(&root, map, FILE_NAME, text, len, line_base,
		col_base, lim, diags), PMBOT_EINVALID);
	assert_null(root);
	assert_int_equal(diags->count, 1);
	assert_string_equal(diags->items[0].code, code);
	assert_int_equal(diags->items[0].severity, PMBOT_SEV_ERROR);
	assert_string_equal(diags->items[0].file, FILE_NAME);
	assert_true(compact_agrees(text, len, line_base, col_base, lim, PMBOT_EINVALID, NULL,
		NULL, diags));
	pmbot_srcmap_free(map);
	return &diags->items[0];
}

static void assert_diag(const pmbot_diag *d, const char *path, int line, int col)
{
	assert_string_equal(d->path, path);
	assert_int_equal(d->line, line);
	assert_int_equal(d->column, col);
}

static void test_json_parse__builds_the_value(void **state)
{
	json_t *root;

	(void)state;
	root = parse_ok("{\"b\": [1, -2.5, \"x\\n\\u00e9\", null, true, false],\n"
		" \"a\": {\"n\": 9007199254740993}}", NULL, 1, 0);
	assert_canon(root, "{\"a\":{\"n\":9007199254740993},"
		"\"b\":[1,-2.5,\"x\\né\",null,true,false]}");
	json_decref(root);
}

static void test_json_parse__accepts_a_scalar_root(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root;

	(void)state;
	root = parse_ok("  \"just text\"", map, 3, 2);
	assert_canon(root, "\"just text\"");
	assert_pos(map, "", 3, 5);
	json_decref(root);
	pmbot_srcmap_free(map);
}

static void test_json_parse__maps_every_value_to_its_file_position(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root;

	(void)state;
	root = parse_ok("{\n"
		"  \"a\": [1, \"\xc3\xa9\", {\"k/x\": true}],\n"
		"  \"t~y\": {\"c\": null},\n"
		"  \"\\u002fz\": 2\n"
		"}", map, 10, 4);
	assert_pos(map, "", 10, 5);
	/* Members sit at their key; array items at the value. */
	assert_pos(map, "/a", 11, 7);
	assert_pos(map, "/a/0", 11, 13);
	assert_pos(map, "/a/1", 11, 16);
	/* Columns count characters: "é" is one column, two bytes. */
	assert_pos(map, "/a/2", 11, 21);
	assert_pos(map, "/a/2/k~1x", 11, 22);
	assert_pos(map, "/t~0y", 12, 7);
	assert_pos(map, "/t~0y/c", 12, 15);
	/* An escaped key is mapped by its decoded text. */
	assert_pos(map, "/~1z", 13, 7);
	assert_pos(map, "/a/2/k~1x/deeper", 11, 22);
	json_decref(root);
	pmbot_srcmap_free(map);
}

static void test_json_parse__maps_empty_containers_and_nested_arrays(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root;

	(void)state;
	root = parse_ok("[[], {}, [[7]], {\"e\": {}}]", map, 1, 0);
	assert_pos(map, "/0", 1, 2);
	assert_pos(map, "/1", 1, 6);
	assert_pos(map, "/2", 1, 10);
	assert_pos(map, "/2/0", 1, 11);
	assert_pos(map, "/2/0/0", 1, 12);
	assert_pos(map, "/3", 1, 17);
	assert_pos(map, "/3/e", 1, 18);
	json_decref(root);
	pmbot_srcmap_free(map);
}

static void test_json_parse__rejects_a_duplicate_key_at_the_second_key(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\"a\": {\"b\": 1,\n\n   \"b\": 2}}";
	const pmbot_diag *d;

	(void)state;
	d = parse_fail(&diags, text, strlen(text), 20, 2, NULL, "DUPLICATE_KEY");
	assert_diag(d, "/a/b", 22, 6);
	assert_non_null(strstr(d->message, "line 20"));
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__duplicate_escaped_keys_are_duplicates(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\"x\": [], \"a/b\": 1, \"a\\u002fb\": 2}";
	const pmbot_diag *d;

	(void)state;
	d = parse_fail(&diags, text, strlen(text), 1, 0, NULL, "DUPLICATE_KEY");
	assert_diag(d, "/a~1b", 1, 21);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__reports_a_syntax_error_with_its_position(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\"a\": [1,\n   2,, 3]}";
	const pmbot_diag *d;

	(void)state;
	d = parse_fail(&diags, text, strlen(text), 5, 3, NULL, "REPORT_PARSE_JSON");
	/* jansson stops on the second ',' of line 2, where /a/2 should start. */
	assert_diag(d, "/a/2", 6, 6 + 3);
	assert_non_null(strstr(d->message, "unexpected token"));
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_trailing_content(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\"a\": 1}\n{\"b\": 2}";
	const pmbot_diag *d;

	(void)state;
	d = parse_fail(&diags, text, strlen(text), 1, 0, NULL, "REPORT_PARSE_JSON");
	assert_int_equal(d->line, 2);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_numbers_out_of_range(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *big_int = "[1, 99999999999999999999]";
	const char *big_real = "{\"e\": 1e400}";

	(void)state;
	assert_diag(parse_fail(&diags, big_int, strlen(big_int), 1, 0, NULL,
		"REPORT_PARSE_JSON"), "/1", 1, 24);
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail(&diags, big_real, strlen(big_real), 1, 0, NULL,
		"REPORT_PARSE_JSON"), "/e", 1, 11);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_nesting_deeper_than_the_limit(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	enum { N = 100000 };
	char *text = malloc(N);
	const pmbot_diag *d;
	pmbot_buf path = PMBOT_BUF_INIT;
	int i;

	(void)state;
	memset(text, '[', N);
	d = parse_fail(&diags, text, N, 7, 2, NULL, "INPUT_TOO_DEEP");
	/* The 65th bracket passes the default depth of 64. */
	for (i = 0; i < 64; i++)
		assert_int_equal(pmbot_json_pointer_push_index(&path, 0), 0);
	assert_diag(d, path.buf, 7, 65 + 2);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&path);
	free(text);
}

static void test_json_parse__accepts_nesting_at_the_limit(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_limits lim;
	char text[2 * 64 + 1];
	json_t *root = NULL;

	(void)state;
	memset(text, '[', 64);
	memset(text + 64, ']', 64);
	text[128] = '\0';
	root = parse_ok(text, NULL, 1, 0);
	json_decref(root);
	root = NULL;

	pmbot_limits_default(&lim);
	lim.max_depth = 3;
	assert_int_equal(pmbot_json_parse(&root, NULL, NULL, "[{\"a\": [1]}]", 12, 1, 0,
		&lim, &diags), PMBOT_OK);
	json_decref(root);
	assert_diag(parse_fail(&diags, "[{\"a\": [[1]]}]", 14, 1, 0, &lim,
		"INPUT_TOO_DEEP"), "/0/a/0", 1, 9);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__brackets_inside_strings_do_not_nest(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_limits lim;
	json_t *root = NULL;
	const char *text = "[\"[[[[\\\"{{{{\"]";

	(void)state;
	pmbot_limits_default(&lim);
	lim.max_depth = 1;
	assert_int_equal(pmbot_json_parse(&root, NULL, NULL, text, strlen(text), 1, 0,
		&lim, &diags), PMBOT_OK);
	assert_canon(root, "[\"[[[[\\\"{{{{\"]");
	json_decref(root);
}

static void test_json_parse__rejects_input_over_the_size_limit(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_limits lim;
	json_t *root = NULL;

	(void)state;
	pmbot_limits_default(&lim);
	assert_int_equal(lim.max_bytes, (size_t)64 << 20);
	assert_int_equal(lim.max_depth, 64);
	assert_int_equal(lim.max_alias_nodes, 10000);
	lim.max_bytes = 8;
	assert_int_equal(pmbot_json_parse(&root, NULL, NULL, "[1,2,3]", 7, 1, 0, &lim,
		&diags), PMBOT_OK);
	json_decref(root);
	assert_diag(parse_fail(&diags, "[1,2,3,4]", 9, 4, 0, &lim, "INPUT_TOO_LARGE"),
		"", 4, 1);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_invalid_utf8_at_the_bad_byte(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\n \"\xc3\xa9\": \"x\xffy\"}";

	(void)state;
	assert_diag(parse_fail(&diags, text, strlen(text), 30, 4, NULL, "INVALID_UTF8"),
		"", 31, 9 + 4);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_a_nul_byte(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char text[] = "[\"ab\0c\"]";

	(void)state;
	assert_diag(parse_fail(&diags, text, sizeof(text) - 1, 1, 0, NULL, "INVALID_UTF8"),
		"", 1, 5);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_an_escaped_nul(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\"k\": \"a\\u0000b\"}";
	const pmbot_diag *d;

	(void)state;
	d = parse_fail(&diags, text, strlen(text), 1, 0, NULL, "INVALID_UTF8");
	assert_string_equal(d->path, "/k");
	/* Worded for the report's author, never after a parser flag. */
	assert_non_null(strstr(d->message, "holds \\u0000 (U+0000)"));
	assert_null(strstr(d->message, "JSON_ALLOW_NUL"));
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__rejects_empty_input(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;

	(void)state;
	assert_diag(parse_fail(&diags, "", 0, 3, 0, NULL, "REPORT_PARSE_JSON"), "", 3, 1);
	pmbot_diag_list_free(&diags);
	assert_diag(parse_fail(&diags, NULL, 0, 3, 0, NULL, "REPORT_PARSE_JSON"), "", 3, 1);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__file_may_be_null(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *root = NULL;

	(void)state;
	assert_int_equal(pmbot_json_parse(&root, NULL, NULL, "[", 1, 1, 0, NULL, &diags),
		PMBOT_EINVALID);
	assert_int_equal(diags.count, 1);
	assert_null(diags.items[0].file);
	pmbot_diag_list_free(&diags);
}

/* A 10,000-item report: the value and the map cover every item. */
static void test_json_parse__maps_a_large_report(void **state)
{
	pmbot_buf text = PMBOT_BUF_INIT, flat = PMBOT_BUF_INIT;
	pmbot_srcmap *map = pmbot_srcmap_new();
	enum { N = 10000 };
	json_t *root;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_buf_puts(&text, "{\"tasks\":[\n"), 0);
	for (i = 0; i < N; i++)
		assert_int_equal(pmbot_buf_printf(&text, "%s{\"acceptance_criteria\":[\"a\",\"b\"],"
			"\"estimate_hrs\":1.5,\"stable_id\":\"task:%zu\",\"title\":\"T %zu\"}\n",
			i ? "," : "", i, i), 0);
	assert_int_equal(pmbot_buf_puts(&text, "]}"), 0);
	root = parse_ok(text.buf, map, 1, 0);
	for (i = 0; i < text.len; i++)
		if (text.buf[i] != '\n')
			assert_int_equal(pmbot_buf_putc(&flat, text.buf[i]), 0);
	assert_canon(root, flat.buf);
	assert_pos(map, "/tasks/0", 2, 1);
	assert_pos(map, "/tasks/9999", N + 1, 2);
	assert_pos(map, "/tasks/9999/title", N + 1, 78);
	assert_pos(map, "/tasks/4321/acceptance_criteria/1", 4321 + 2, 30);
	json_decref(root);
	pmbot_srcmap_free(map);
	pmbot_buf_free(&text);
	pmbot_buf_free(&flat);
}

/*
 * Differential testing against jansson: for every text below,
 * pmbot_json_parse and json_loadb(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)
 * must agree on accept/reject; accepted values must have the same canonical
 * bytes; refused ones get jansson's message, line and column.
 *
 * Intended differences, each the documented contract of pmbot_json_parse:
 * - Invalid UTF-8 or a NUL byte anywhere is INVALID_UTF8 at the first bad
 *   byte, before any other check (jansson reports whatever it meets first).
 * - Nesting past max_depth anywhere is INPUT_TOO_DEEP at the first bracket
 *   past it, before syntax (jansson accepts up to 2048 levels).
 * - DUPLICATE_KEY sits at the second key's first character and names the
 *   first key's line (jansson: "duplicate object key" after the key).
 * - An escaped U+0000 in an object key is INVALID_UTF8 like one in a value
 *   (jansson 2.14 calls it json_error_null_byte_in_key; the jansson-based
 *   parser let that through as REPORT_PARSE_JSON, against its own header).
 * - Messages drop a broken UTF-8 tail (jansson can quote half a character).
 */

enum { DIFF_MAX_DEPTH = 64 };

/* The nesting rule of the header, written out independently. */
static int nests_too_deep(const char *s, size_t len)
{
	size_t depth = 0, i;
	int in_str = 0;

	for (i = 0; i < len; i++) {
		if (in_str) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_str = 0;
		} else if (s[i] == '"') {
			in_str = 1;
		} else if (s[i] == '[' || s[i] == '{') {
			if (++depth > DIFF_MAX_DEPTH)
				return 1;
		} else if ((s[i] == ']' || s[i] == '}') && depth) {
			depth--;
		}
	}
	return 0;
}

/* jansson's message as the diagnostic carries it: cut before a broken character. */
static void trimmed_message(char *out, size_t size, const char *msg)
{
	size_t len = strlen(msg), bad = len;

	if (!pmbot_utf8_valid(msg, len, &bad, NULL, NULL))
		len = bad;
	snprintf(out, size, "%.*s", (int)len, msg);
}

static void print_text(const char *what, const char *s, size_t len)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	size_t i;

	for (i = 0; i < len && i < 300; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			pmbot_buf_putc(&b, (char)c);
		else
			pmbot_buf_printf(&b, "\\x%02x", c);
	}
	print_message("%s (%zu bytes): %s%s\n", what, len, b.buf, len > 300 ? "..." : "");
	pmbot_buf_free(&b);
}

/* Byte offset of a 1-based line and character column; SIZE_MAX if outside. */
static size_t offset_of(const char *s, size_t len, int line, int col)
{
	size_t i = 0;

	for (; line > 1 && i < len; i++)
		if (s[i] == '\n')
			line--;
	if (line != 1)
		return SIZE_MAX;
	for (; col > 1 && i < len; col--) {
		i++;
		while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
	}
	return i < len ? i : SIZE_MAX;
}

/*
 * Every value has its own map entry, at the character it starts with
 * (members: at the key's opening quote). The map falls back to ancestors,
 * so a missing entry shows up as a position holding the wrong character.
 */
static int map_covers(const json_t *v, pmbot_buf *ptr, int member,
	const pmbot_srcmap *map, const char *s, size_t len)
{
	size_t base = ptr->len, off, i;
	int line, col, ok = 1;
	char want = 0, at;
	const char *key;
	json_t *child;

	assert_int_equal(pmbot_srcmap_find(map, ptr->buf, &line, &col), 1);
	off = offset_of(s, len, line, col);
	at = off == SIZE_MAX ? 0 : s[off];
	switch (json_typeof(v)) {
	case JSON_OBJECT: want = '{'; break;
	case JSON_ARRAY: want = '['; break;
	case JSON_STRING: want = '"'; break;
	case JSON_INTEGER: case JSON_REAL: want = at == '-' ? '-' : (at >= '0' && at <= '9' ? at : '#'); break;
	case JSON_TRUE: want = 't'; break;
	case JSON_FALSE: want = 'f'; break;
	case JSON_NULL: want = 'n'; break;
	}
	if (member)
		want = '"';
	if (at != want) {
		print_message("map: %s at %d:%d holds '%c', expected '%c'\n", ptr->buf, line, col,
			at ? at : '?', want);
		return 0;
	}
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, child) {
			pmbot_buf_truncate(ptr, base);
			assert_int_equal(pmbot_json_pointer_push(ptr, key), 0);
			ok &= map_covers(child, ptr, 1, map, s, len);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, child) {
			pmbot_buf_truncate(ptr, base);
			assert_int_equal(pmbot_json_pointer_push_index(ptr, i), 0);
			ok &= map_covers(child, ptr, 0, map, s, len);
		}
	}
	pmbot_buf_truncate(ptr, base);
	return ok;
}

typedef struct {
	size_t accepted;
	size_t refused;
	size_t failures;
} tally;

/* Both maps give the same position for every value of `v`. */
static int maps_equal(const json_t *v, pmbot_buf *ptr, const pmbot_srcmap *a,
	const pmbot_srcmap *b)
{
	size_t base = ptr->len, i;
	int la = 0, ca = 0, lb = 0, cb = 0, ok = 1;
	const char *key;
	json_t *child;

	if (pmbot_srcmap_find(a, ptr->buf, &la, &ca) != pmbot_srcmap_find(b, ptr->buf, &lb, &cb) ||
	    la != lb || ca != cb) {
		print_message("compact map: %s at %d:%d, jansson map %d:%d\n", ptr->buf, lb, cb, la, ca);
		return 0;
	}
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, child) {
			pmbot_buf_truncate(ptr, base);
			assert_int_equal(pmbot_json_pointer_push(ptr, key), 0);
			ok &= maps_equal(child, ptr, a, b);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, child) {
			pmbot_buf_truncate(ptr, base);
			assert_int_equal(pmbot_json_pointer_push_index(ptr, i), 0);
			ok &= maps_equal(child, ptr, a, b);
		}
	}
	pmbot_buf_truncate(ptr, base);
	return ok;
}

/*
 * The compact sink against the jansson one on the same text: the same
 * return code and diagnostics byte for byte; when accepted, the same
 * values in the same member order and the same source map.
 */
static int compact_agrees(const char *text, size_t len, int line_base, int col_base,
	const pmbot_limits *lim, int rc, const json_t *got, const pmbot_srcmap *map,
	const pmbot_diag_list *diags)
{
	pmbot_diag_list cdiags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf ptr = PMBOT_BUF_INIT;
	pmbot_srcmap *cmap = NULL;
	pmbot_jdoc *doc = (pmbot_jdoc *)1;
	json_t *back = NULL;
	char *da = NULL, *db = NULL;
	size_t i;
	int crc, ok;

	crc = pmbot_jdoc_parse(&doc, FILE_NAME, text, len, line_base, col_base, lim, &cdiags);
	ok = crc == rc && cdiags.count == diags->count && (crc == PMBOT_OK) == (doc != NULL);
	for (i = 0; ok && i < cdiags.count; i++) {
		const pmbot_diag *x = &cdiags.items[i], *y = &diags->items[i];

		ok = x->severity == y->severity && !strcmp(x->code, y->code) &&
			!strcmp(x->file, y->file) && !strcmp(x->path, y->path) &&
			x->line == y->line && x->column == y->column && !strcmp(x->message, y->message);
	}
	if (ok && crc == PMBOT_OK) {
		pmbot_jshare share = PMBOT_JSHARE_INIT;
		json_t *shared = NULL;
		char *ds;

		assert_int_equal(pmbot_jnode_to_json(&back, pmbot_jdoc_root(doc)), PMBOT_OK);
		/* The same values when scalars are shared, and alive once the share is gone. */
		assert_int_equal(pmbot_jnode_to_json_shared(&shared, pmbot_jdoc_root(doc), &share),
			PMBOT_OK);
		pmbot_jshare_free(&share);
		da = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
		db = json_dumps(back, JSON_COMPACT | JSON_ENCODE_ANY);
		ds = json_dumps(shared, JSON_COMPACT | JSON_ENCODE_ANY);
		assert_non_null(da);
		assert_non_null(db);
		assert_non_null(ds);
		ok = !strcmp(da, db) && !strcmp(db, ds);
		free(ds);
		json_decref(shared);
		if (ok && map) {
			assert_int_equal(pmbot_jdoc_srcmap(&cmap, doc), PMBOT_OK);
			ok = maps_equal(got, &ptr, map, cmap);
		}
	}
	if (!ok) {
		print_text("compact sink disagrees on", text, len);
		print_message("  jansson sink: rc %d, %s; compact: rc %d, %s %s at %d:%d: %s\n", rc,
			diags->count ? diags->items[0].message : (da ? da : "-"), crc,
			cdiags.count ? cdiags.items[0].code : "-",
			cdiags.count ? cdiags.items[0].path : "-",
			cdiags.count ? cdiags.items[0].line : 0,
			cdiags.count ? cdiags.items[0].column : 0,
			cdiags.count ? cdiags.items[0].message : (db ? db : "-"));
	}
	free(da);
	free(db);
	json_decref(back);
	pmbot_srcmap_free(cmap);
	pmbot_buf_free(&ptr);
	pmbot_diag_list_free(&cdiags);
	if (crc == PMBOT_OK)
		pmbot_jdoc_free(doc);
	return ok;
}

/*
 * Run both parsers on an exact-size copy (ASan then catches any read past
 * `len`); 1 when they agree, else 0 with the case printed.
 */
static int agrees(tally *t, const char *text, size_t len)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf a = PMBOT_BUF_INIT, b = PMBOT_BUF_INIT, ptr = PMBOT_BUF_INIT;
	pmbot_srcmap *map = pmbot_srcmap_new();
	char *copy = malloc(len ? len : 1);
	const char *want = NULL;
	char jmsg[JSON_ERROR_TEXT_LENGTH];
	json_error_t jerr;
	json_t *expect, *got = NULL;
	int rc, ok, positions = 0, own_message = 0;

	assert_non_null(copy);
	assert_non_null(map);
	memcpy(copy, text, len);
	expect = json_loadb(copy, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	rc = pmbot_json_parse(&got, map, FILE_NAME, copy, len, 1, 0, NULL, &diags);
	if (!pmbot_utf8_valid(copy, len, NULL, NULL, NULL)) {
		want = "INVALID_UTF8";
	} else if (nests_too_deep(copy, len)) {
		want = "INPUT_TOO_DEEP";
	} else if (!expect) {
		positions = 1;
		switch (json_error_code(&jerr)) {
		case json_error_duplicate_key:
			want = "DUPLICATE_KEY";
			positions = 0;
			break;
		case json_error_null_character:
		case json_error_null_byte_in_key:
			/* Same code and place; pm-bot words it for report authors. */
			want = "INVALID_UTF8";
			own_message = 1;
			break;
		default:
			want = "REPORT_PARSE_JSON";
			break;
		}
	}
	if (want) {
		trimmed_message(jmsg, sizeof(jmsg), expect ? "(accepted)" : jerr.text);
		ok = rc == PMBOT_EINVALID && !got && diags.count == 1 &&
			!strcmp(diags.items[0].code, want);
		if (ok && positions)
			ok = diags.items[0].line == jerr.line &&
				diags.items[0].column == (jerr.column < 1 ? 1 : jerr.column) &&
				(own_message ? strstr(diags.items[0].message, "U+0000") != NULL :
				 !strcmp(diags.items[0].message, jmsg));
		if (!ok) {
			print_text("disagreement on", copy, len);
			print_message("  jansson: %s at %d:%d; expected %s\n", jmsg, jerr.line,
				jerr.column, want);
			print_message("  pm-bot: rc %d, %s %s at %d:%d: %s\n", rc,
				diags.count ? diags.items[0].code : "-",
				diags.count ? diags.items[0].path : "-",
				diags.count ? diags.items[0].line : 0,
				diags.count ? diags.items[0].column : 0,
				diags.count ? diags.items[0].message : "-");
		}
		t->refused++;
	} else {
		ok = rc == PMBOT_OK && got && diags.count == 0;
		if (ok) {
			assert_int_equal(pmbot_json_canonical(&a, expect), 0);
			assert_int_equal(pmbot_json_canonical(&b, got), 0);
			ok = a.len == b.len && !memcmp(a.buf, b.buf, a.len);
			if (ok)
				ok = map_covers(got, &ptr, 0, map, copy, len);
		}
		if (!ok) {
			print_text("disagreement on", copy, len);
			print_message("  jansson accepts: %s\n  pm-bot: rc %d %s: %s\n", a.buf, rc,
				diags.count ? diags.items[0].code : "", got ? b.buf :
				diags.count ? diags.items[0].message : "-");
		}
		t->accepted++;
	}
	if (!compact_agrees(copy, len, 1, 0, NULL, rc, got, map, &diags))
		ok = 0;
	t->failures += !ok;
	json_decref(expect);
	json_decref(got);
	pmbot_diag_list_free(&diags);
	pmbot_srcmap_free(map);
	pmbot_buf_free(&a);
	pmbot_buf_free(&b);
	pmbot_buf_free(&ptr);
	free(copy);
	return ok;
}

static int agrees_str(tally *t, const char *text)
{
	return agrees(t, text, strlen(text));
}

static void test_json_parse__matches_jansson_on_edge_cases(void **state)
{
	static const char *const cases[] = {
		/* accepted */
		"0", "-0", "7", "-12", "[]", "{}", " [ ] ", "\"\"", "true", "false", "null",
		"[true,false,null]", "1.5e+10", "1E-2", "0e0", "0.0", "-0.0", "[-0.0]", "1e5",
		"{\"a\":{\"b\":{\"c\":[]}}}", "\"\\u00e9\\ud83d\\ude00\\uD83D\\uDE00\"",
		"\"\\/\\\\\\\"\\b\\f\\n\\r\\t\"", "[1,\n2,\r\n3\t]", "\r\n\t 5 \r\n\t",
		"9223372036854775807", "-9223372036854775808", "1e-400", "4.9e-324",
		"2.2250738585072014e-308", "1.7976931348623157e308", "0.1", "3.141592653589793",
		"123456789012345678901234567890.5",
		"1.00000000000000011102230246251565404236316680908203125",
		"[0.30000000000000004, 1e22, 1e21, 123e-20]",
		"\"a\\u0041\\u004a\\u004A\"", "{\"\":1}", "{\"a\":1,\"A\":2}",
		"[[[[[[[[[[1]]]]]]]]]]", "\"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\"",
		"{\"a/b\":1,\"a~b\":2,\"~1\":3}", "\"\\uffff\\u0001\\u001f\\u007f\"",
		"\"\x7f\"", "{\"k\":[{},[],\"\",0]}",
		"\"a long string of plain ASCII that spans many eight-byte words\"",
		/* refused: structure */
		"", " ", "\n\n", "[", "]", "{", "}", ":", ",", "[1,]", "[,1]", "[1,,2]",
		"{\"a\"}", "{\"a\":}", "{\"a\" 1}", "{1:2}", "{\"a\":1,}", "{,}", "[1 2]",
		"{\"a\":1 \"b\":2}", "[1}", "{\"a\":1]", "[1]x", "1 2", "[1] [2]", "{\"a\" :",
		"[\"a\",", "[1,\n", "{\"a\":[1,2,\n", "{\"a\":{\"b\":1}", "[[1]", "[[1],",
		"{\"a\":", "{\"a\"", "{\"a\":1,", "{\"a\":1", "[null", "[{\"a\":1},",
		/* refused: numbers */
		"01", "-01", "00", "+1", ".5", "1.", "1.e5", "1e", "1e+", "1E-", "-", "--1",
		"0x10", "1.5.3", "Infinity", "NaN", "-Infinity", "-a", "1ex", "2.x", "[2.]",
		"[-]", "[01]", "{\"a\":-}", "1e+x", "-.5", "0.e1",
		"9223372036854775808", "-9223372036854775809", "99999999999999999999",
		"[1, 99999999999999999999]", "1e309", "-1e309", "{\"e\": 1e400}",
		"123456789012345678901234567890",
		/* refused: words */
		"tru", "truex", "nul", "nulls", "True", "NULL", "[nul]", "falsey", "t", "[true1]",
		"undefined", "[true false]",
		/* refused: strings */
		"'a'", "\"abc", "\"a\nb\"", "\"a\tb\"", "\"a\x01\"", "\"a\x1f\"", "\"\\x\"",
		"\"\\u12\"", "\"\\u12G4\"", "\"\\uZZZZ\"", "\"\\", "\"\\u", "\"\\u00",
		"\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\ud800\\ud800\"",
		"\"\\udbff\"", "\"\\ud800x\"", "\"\\ud800\\\\u0041\"", "\"\\ud800\\",
		"\"\\u0000\"", "{\"\\u0000\":1}", "{\"a\":\"x\\u0000y\"}",
		"{\"a\":\"\\u0000\\x\"}", "[\"\\u0000\" 1]", "{\"a\\u0000\" 1}",
		"\"\\\xc3\xa9\"", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"[\"aaaaaaaaaaaaaaaaaaaaaaaaaa\" \"bbbbbbbbbbbbbbbbbbbbbbbbbbb\"]",
		"{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaa\" 1}", "[\"aaaaaaaaaaaaaaaaaaa\" 2]",
		"\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\\q\"",
		/* refused: keys */
		"{\"a\":1,\"a\":2}", "{\"a\":1,\"\\u0061\":2}", "{\"a\":{\"a\":1},\"b\":[{\"a\":2}],\n\"a\":3}",
		/* refused: other characters */
		"\f1", "\v1", "[1]\f", "\xef\xbb\xbf[]", "[\"\xc3\xa9\" @]", "@", "\xc3\xa9",
		"[\xc3\xa9]", "/* c */ 1", "# 1", "[1,\n\xe4\xb8\xad]", "{\"a\":\xf0\x9f\x98\x80}",
		/* refused: encoding and depth (checked before syntax) */
		"[\"\xff\"]", "[1,,\"\xc3\"]", "\xed\xa0\x80", "[\"\xc0\xaf\"]",
		"[1,, [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
	};
	static const struct { const char *s; size_t len; } sized[] = {
		{ "[\"a\0\"]", 6 }, { "\0", 1 }, { "[1]\0", 4 }, { "[1,\0", 4 }, { "\"\0", 2 },
		/* Not NUL-terminated in spirit: only the prefix counts. */
		{ "[1]]", 3 }, { "123", 2 }, { "\"ab\"", 3 }, { "truex", 4 }, { "1e5", 2 },
		{ "-1", 1 }, { "\"\\u0041\"", 5 }, { "{\"a\":1}", 6 },
	};
	tally t = { 0, 0, 0 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		agrees_str(&t, cases[i]);
	for (i = 0; i < sizeof(sized) / sizeof(sized[0]); i++)
		agrees(&t, sized[i].s, sized[i].len);
	assert_int_equal(t.failures, 0);
	/* The corpus exercises both outcomes. */
	assert_true(t.accepted >= 45);
	assert_true(t.refused >= 140);
}

/* splitmix64: a fixed seed gives the same corpus on every run. */
typedef struct {
	uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t rnd(rng *r, size_t n)
{
	return (size_t)(rng_next(r) % n);
}

#define PICK(r, arr) ((arr)[rnd((r), sizeof(arr) / sizeof((arr)[0]))])

static void gen_ws(rng *r, pmbot_buf *b)
{
	static const char *const ws[] = { "", "", "", "", " ", " ", "\n", "\t", "\r\n",
		"\n    ", "  ", "\n\t\t" };

	assert_int_equal(pmbot_buf_puts(b, PICK(r, ws)), 0);
}

static void gen_string(rng *r, pmbot_buf *b, int key)
{
	static const char *const pieces[] = { "a", "b", "k", "id", "~", "/", "x y", "~1",
		"\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "\\\"", "\\\\", "\\/", "\\b",
		"\\f", "\\n", "\\r", "\\t", "\\u00e9", "\\u00E9", "\\u002f", "\\u007e",
		"\\ud83d\\ude00", "\\uD83D\\uDE00", "\\u4e2d", "\\uffff", "\\u0041", "\\u001F",
		"[{", "]}", ":,", "0123456789abcdef", "a long run of plain text, longer than a word" };
	static const char *const rare[] = { "\\u0000", "\\ud800", "\\udc00",
		"\\ud800\\u0041", "\\ud800x", "\\x", "\\u12", "\x01", "\n", "\x7f" };
	static const char *const keys[] = { "a", "b", "c", "a/b", "t~y", "\\u0061", "",
		"\xc3\xa9", "\\u00e9" };
	size_t n, i;

	assert_int_equal(pmbot_buf_putc(b, '"'), 0);
	if (key && rnd(r, 2)) {
		assert_int_equal(pmbot_buf_puts(b, PICK(r, keys)), 0);
	} else {
		n = rnd(r, key ? 3 : 6);
		for (i = 0; i < n; i++)
			assert_int_equal(pmbot_buf_puts(b, rnd(r, 150) ? PICK(r, pieces) :
				PICK(r, rare)), 0);
	}
	assert_int_equal(pmbot_buf_putc(b, '"'), 0);
}

static void gen_digits(rng *r, pmbot_buf *b, size_t max, int lead_zero_ok)
{
	size_t n = 1 + rnd(r, max), i;

	for (i = 0; i < n; i++)
		assert_int_equal(pmbot_buf_putc(b, (char)('0' + (i || lead_zero_ok ? rnd(r, 10) :
			1 + rnd(r, 9)))), 0);
}

static void gen_number(rng *r, pmbot_buf *b)
{
	static const char *const fixed[] = { "0", "-0", "1", "-1", "42", "0.5", "-0.0",
		"1e5", "1E+5", "1e-5", "2.5e-3", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "-9223372036854775809", "99999999999999999999",
		"1e308", "1e309", "-1e309", "1e-400", "4.9e-324", "2.2250738585072014e-308",
		"1.7976931348623157e308", "1.7976931348623159e308", "0.1", "3.141592653589793",
		"5e-324", "2.4703282292062327e-324", "1e-323", "100", "1000000", "123456789012" };

	if (rnd(r, 3) == 0) {
		assert_int_equal(pmbot_buf_puts(b, PICK(r, fixed)), 0);
		return;
	}
	if (rnd(r, 3) == 0)
		assert_int_equal(pmbot_buf_putc(b, '-'), 0);
	if (rnd(r, 4) == 0)
		assert_int_equal(pmbot_buf_putc(b, '0'), 0);
	else
		gen_digits(r, b, rnd(r, 8) ? 4 : 22, 0);
	if (rnd(r, 3) == 0) {
		assert_int_equal(pmbot_buf_putc(b, '.'), 0);
		gen_digits(r, b, rnd(r, 8) ? 4 : 25, 1);
	}
	if (rnd(r, 4) == 0) {
		assert_int_equal(pmbot_buf_putc(b, rnd(r, 2) ? 'e' : 'E'), 0);
		if (rnd(r, 2))
			assert_int_equal(pmbot_buf_putc(b, rnd(r, 2) ? '+' : '-'), 0);
		gen_digits(r, b, 3, 1);
	}
}

static void gen_value(rng *r, pmbot_buf *b, int depth)
{
	static const char *const words[] = { "true", "false", "null" };
	size_t kind = rnd(r, depth < 6 ? 10 : 6), n, i;

	if (kind >= 8) {
		int obj = kind == 8;

		assert_int_equal(pmbot_buf_putc(b, obj ? '{' : '['), 0);
		gen_ws(r, b);
		n = rnd(r, 6);
		for (i = 0; i < n; i++) {
			if (i) {
				assert_int_equal(pmbot_buf_putc(b, ','), 0);
				gen_ws(r, b);
			}
			if (obj) {
				gen_string(r, b, 1);
				gen_ws(r, b);
				assert_int_equal(pmbot_buf_putc(b, ':'), 0);
				gen_ws(r, b);
			}
			gen_value(r, b, depth + 1);
			gen_ws(r, b);
		}
		assert_int_equal(pmbot_buf_putc(b, obj ? '}' : ']'), 0);
	} else if (kind >= 5) {
		gen_string(r, b, 0);
	} else if (kind >= 2) {
		gen_number(r, b);
	} else {
		assert_int_equal(pmbot_buf_puts(b, PICK(r, words)), 0);
	}
}

static void gen_document(rng *r, pmbot_buf *b)
{
	pmbot_buf_clear(b);
	gen_ws(r, b);
	gen_value(r, b, 0);
	gen_ws(r, b);
}

static void test_json_parse__matches_jansson_on_generated_documents(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	rng r = { 20260222 };
	tally t = { 0, 0, 0 };
	int i;

	(void)state;
	for (i = 0; i < 3000; i++) {
		gen_document(&r, &b);
		if (!agrees(&t, b.buf, b.len) && t.failures > 5)
			break;
	}
	assert_int_equal(t.failures, 0);
	/* Mostly valid, with the rare bad escapes and duplicate keys refused. */
	assert_true(t.accepted > 2500);
	assert_true(t.refused > 150);
	pmbot_buf_free(&b);
}

/* Delete, insert, replace, duplicate or swap bytes, or cut the text short. */
static void mutate(rng *r, pmbot_buf *b)
{
	static const char bytes[] = "{}[]:,\"\\ -+.eE0123456789tfnulax\x01\x7f\f\v\n\t\r\xc3\xa9\xff/~";
	size_t n = 1 + rnd(r, 3), i;

	for (i = 0; i < n && b->len; i++) {
		size_t at = rnd(r, b->len), k;
		char c = bytes[rnd(r, sizeof(bytes))]; /* may pick the NUL terminator */
		pmbot_buf tail = PMBOT_BUF_INIT;

		switch (rnd(r, 6)) {
		case 0:
			memmove(b->buf + at, b->buf + at + 1, b->len - at - 1);
			pmbot_buf_truncate(b, b->len - 1);
			break;
		case 1:
			assert_int_equal(pmbot_buf_put(&tail, b->buf + at, b->len - at), 0);
			pmbot_buf_truncate(b, at);
			assert_int_equal(pmbot_buf_putc(b, c), 0);
			assert_int_equal(pmbot_buf_put(b, tail.buf, tail.len), 0);
			break;
		case 2:
			b->buf[at] = c;
			break;
		case 3:
			pmbot_buf_truncate(b, at);
			break;
		case 4:
			k = 1 + rnd(r, b->len - at);
			assert_int_equal(pmbot_buf_put(&tail, b->buf + at, b->len - at), 0);
			pmbot_buf_truncate(b, at);
			assert_int_equal(pmbot_buf_put(b, tail.buf, k), 0);
			assert_int_equal(pmbot_buf_put(b, tail.buf, tail.len), 0);
			break;
		default:
			k = rnd(r, b->len);
			c = b->buf[at];
			b->buf[at] = b->buf[k];
			b->buf[k] = c;
			break;
		}
		pmbot_buf_free(&tail);
	}
}

static void test_json_parse__matches_jansson_on_mutated_documents(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	rng r = { 77793 };
	tally t = { 0, 0, 0 };
	int i;

	(void)state;
	for (i = 0; i < 4000; i++) {
		gen_document(&r, &b);
		mutate(&r, &b);
		if (!agrees(&t, b.buf, b.len) && t.failures > 5)
			break;
	}
	assert_int_equal(t.failures, 0);
	assert_true(t.accepted > 500);
	assert_true(t.refused > 2500);
	pmbot_buf_free(&b);
}

/* Runs of JSON tokens, good and bad, in any order. */
static void test_json_parse__matches_jansson_on_token_soup(void **state)
{
	static const char *const tokens[] = { "{", "}", "[", "]", ":", ",", "\"s\"",
		"\"k\"", "\"\\u0000\"", "\"\\ud800\"", "\"a\\x\"", "\"unterminated", "1", "-1",
		"1.5", "1e5", "0", "-", "01", "1.", ".5", "+1", "99999999999999999999",
		"1e999", "true", "false", "null", "tru", "nul", "nullx", "@", "'", "\\",
		"\xc3\xa9", " ", "\n", "\t", "\r", "\f", "\"\xc3\xa9\"", "\"a\nb\"" };
	pmbot_buf b = PMBOT_BUF_INIT;
	rng r = { 42 };
	tally t = { 0, 0, 0 };
	size_t n, j;
	int i;

	(void)state;
	for (i = 0; i < 3000; i++) {
		pmbot_buf_clear(&b);
		n = 1 + rnd(&r, 8);
		for (j = 0; j < n; j++)
			assert_int_equal(pmbot_buf_puts(&b, PICK(&r, tokens)), 0);
		if (!agrees(&t, b.buf, b.len) && t.failures > 5)
			break;
	}
	assert_int_equal(t.failures, 0);
	assert_true(t.accepted > 100);
	assert_true(t.refused > 2500);
	pmbot_buf_free(&b);
}

static void test_json_parse__an_escaped_nul_in_a_key_is_invalid_utf8(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\"ok\": 1,\n \"a\\u0000\": 2}";
	const pmbot_diag *d;

	(void)state;
	d = parse_fail(&diags, text, strlen(text), 1, 0, NULL, "INVALID_UTF8");
	/* After the key, as jansson reads it; the path is the last member read. */
	assert_diag(d, "/ok", 2, 10);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__nesting_is_reported_before_an_earlier_syntax_error(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_limits lim;
	const char *text = "[1,,\n [[[2]]]]";

	(void)state;
	pmbot_limits_default(&lim);
	lim.max_depth = 3;
	assert_diag(parse_fail(&diags, text, strlen(text), 1, 0, &lim, "INPUT_TOO_DEEP"),
		"/1", 2, 4);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__invalid_utf8_is_reported_before_an_earlier_syntax_error(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "[1,,\n \"\xc3(\"]";

	(void)state;
	assert_diag(parse_fail(&diags, text, strlen(text), 1, 0, NULL, "INVALID_UTF8"),
		"", 2, 3);
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__end_of_input_names_the_last_value_read(void **state)
{
	static const struct { const char *text, *path, *message; } cases[] = {
		{ "[1,", "/0", "']' expected near end of file" },
		{ "[[1],\n", "/0", "']' expected near end of file" },
		{ "[", "", "']' expected near end of file" },
		{ "{\"a\": 1,", "/a", "string or '}' expected near end of file" },
		{ "{\"a\": {\"b\": [", "/a/b", "']' expected near end of file" },
		{ "{\"a\":", "/a", "unexpected token near end of file" },
		{ "{", "", "string or '}' expected near end of file" },
	};
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		d = parse_fail(&diags, cases[i].text, strlen(cases[i].text), 1, 0, NULL,
			"REPORT_PARSE_JSON");
		assert_string_equal(d->path, cases[i].path);
		assert_string_equal(d->message, cases[i].message);
		pmbot_diag_list_free(&diags);
	}
}

static void test_json_parse__syntax_errors_name_the_value_they_are_in(void **state)
{
	static const struct { const char *text, *path; int col; } cases[] = {
		{ "{\"a\": [1, 2 3]}", "/a/1", 13 },
		{ "{\"a\": {\"b\" 1}}", "/a/b", 12 },
		{ "{\"a\": tru}", "/a", 9 },
		{ "[0, \"x\\qy\"]", "/1", 8 },
		{ "[0, {\"k\": 1} 2]", "/1", 14 },
		{ "{\"a\": 1} x", "", 10 },
	};
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_diag(parse_fail(&diags, cases[i].text, strlen(cases[i].text), 1, 0,
			NULL, "REPORT_PARSE_JSON"), cases[i].path, 1, cases[i].col);
		pmbot_diag_list_free(&diags);
	}
}

static void test_json_parse__duplicate_key_skips_nested_keys_of_the_same_name(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *text = "{\"x\": {\"a\": 1},\n \"a\": [{\"a\": 2}],\n \"b\": \"a\",\n \"a\": 3}";
	const pmbot_diag *d;

	(void)state;
	d = parse_fail(&diags, text, strlen(text), 5, 0, NULL, "DUPLICATE_KEY");
	assert_diag(d, "/a", 8, 2);
	assert_string_equal(d->message, "duplicate key; first defined on line 6");
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__integers_fill_json_int_t_and_no_more(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *root;

	(void)state;
	root = parse_ok("[9223372036854775807, -9223372036854775808, -0]", NULL, 1, 0);
	assert_int_equal(json_integer_value(json_array_get(root, 0)), INT64_MAX);
	assert_int_equal(json_integer_value(json_array_get(root, 1)), INT64_MIN);
	assert_true(json_is_integer(json_array_get(root, 2)));
	json_decref(root);
	assert_string_equal(parse_fail(&diags, "9223372036854775808", 19, 1, 0, NULL,
		"REPORT_PARSE_JSON")->message, "too big integer near '9223372036854775808'");
	pmbot_diag_list_free(&diags);
	assert_string_equal(parse_fail(&diags, "-9223372036854775809", 20, 1, 0, NULL,
		"REPORT_PARSE_JSON")->message, "too big negative integer near '-9223372036854775809'");
	pmbot_diag_list_free(&diags);
}

static void test_json_parse__columns_count_characters_after_long_strings(void **state)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	json_t *root;

	(void)state;
	/* Long strings go eight bytes at a time; multibyte characters still count once. */
	root = parse_ok("{\"k\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\": "
		"\"\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad plain ascii text here\", \"n\": 1}",
		map, 1, 0);
	assert_pos(map, "/k\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 1, 2);
	assert_pos(map, "/n", 1, 44);
	json_decref(root);
	pmbot_srcmap_free(map);
}

/* A string takes exactly the UTF-8 that pmbot_utf8_valid takes: one rule. */
static void test_json_parse__strings_take_the_utf8_of_utf8_c(void **state)
{
	unsigned a, b, c;
	size_t ok = 0;

	(void)state;
	for (a = 0x80; a <= 0xff; a++)
		for (b = 0x70; b <= 0xc0; b++)
			for (c = 0x7f; c <= 0x81; c++) {
				char text[8] = { '"', (char)a, (char)b, (char)c, (char)0x80, '"', 0 };
				pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
				json_t *root = NULL;
				int valid = pmbot_utf8_valid(text, 6, NULL, NULL, NULL);
				int rc = pmbot_json_parse(&root, NULL, FILE_NAME, text, 6, 1, 0, NULL, &d);

				if ((rc == PMBOT_OK) != valid)
					fail_msg("%02x %02x %02x 80: parse %d, valid %d", a, b, c, rc, valid);
				ok += valid;
				json_decref(root);
				pmbot_diag_list_free(&d);
			}
	/* Some of each length pass: the loop is not all refusals. */
	assert_true(ok > 100);
}

/* An object of `n` members "k0".."k<n-1>", then `dup` again when not NULL. */
static void wide_object(pmbot_buf *b, int n, const char *dup)
{
	int i;

	pmbot_buf_clear(b);
	assert_int_equal(pmbot_buf_putc(b, '{'), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(pmbot_buf_printf(b, "%s\n\"k%d\": [%d]", i ? "," : "", i, i), 0);
	if (dup)
		assert_int_equal(pmbot_buf_printf(b, ",\n\"%s\": 0", dup), 0);
	assert_int_equal(pmbot_buf_putc(b, '}'), 0);
}

/*
 * Small objects are scanned for a repeated key, big ones looked up in a
 * table: both must find the repeat wherever it is, and nothing else.
 */
static void test_json_parse__compact_finds_duplicates_in_small_and_big_objects(void **state)
{
	static const int sizes[] = { 1, 15, 16, 17, 18, 40, 1000 };
	pmbot_buf b = PMBOT_BUF_INIT, k = PMBOT_BUF_INIT;
	tally t = { 0, 0, 0 };
	size_t i;
	int j;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		wide_object(&b, sizes[i], NULL);
		assert_true(agrees(&t, b.buf, b.len));
		for (j = 0; j < sizes[i]; j += sizes[i] > 40 ? 97 : 1) {
			pmbot_buf_clear(&k);
			assert_int_equal(pmbot_buf_printf(&k, "k%d", j), 0);
			wide_object(&b, sizes[i], k.buf);
			assert_true(agrees(&t, b.buf, b.len));
		}
		/* Same length, other bytes; and a key that is a prefix. */
		wide_object(&b, sizes[i], "kx");
		assert_true(agrees(&t, b.buf, b.len));
		wide_object(&b, sizes[i], "k");
		assert_true(agrees(&t, b.buf, b.len));
	}
	/* Two big objects side by side may share keys; nested ones too. */
	assert_true(agrees_str(&t, "[{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,"
		"\"h\":8,\"i\":9,\"j\":10,\"k\":11,\"l\":12,\"m\":13,\"n\":14,\"o\":15,\"p\":16,"
		"\"q\":17,\"r\":18},{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,"
		"\"h\":8,\"i\":9,\"j\":10,\"k\":11,\"l\":12,\"m\":13,\"n\":14,\"o\":15,\"p\":16,"
		"\"q\":{\"q\":{\"q\":1}},\"r\":18}]"));
	assert_int_equal(t.failures, 0);
	assert_true(t.refused > 50);
	pmbot_buf_free(&b);
	pmbot_buf_free(&k);
}

static void test_json_parse__compact_document_walks_in_document_order(void **state)
{
	const char *text = "{\"z\": [1, 2.5, \"s\\u00e9\", null],\n \"a\": {\"t\": true, \"f\": false},"
		" \"\": {}}";
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_jnode *root, *z, *a, *m;
	pmbot_jdoc *doc = NULL;
	json_t *j = NULL;
	char *dump;

	(void)state;
	assert_int_equal(pmbot_jdoc_parse(&doc, FILE_NAME, text, strlen(text), 10, 4, NULL, &diags),
		PMBOT_OK);
	assert_int_equal(diags.count, 0);
	root = pmbot_jdoc_root(doc);
	assert_int_equal(root->type, PMBOT_JOBJECT);
	assert_int_equal(root->len, 3);
	assert_int_equal(root->line, 10);
	assert_int_equal(root->column, 5);
	z = pmbot_jnode_first(root);
	assert_string_equal(z->key, "z");
	assert_int_equal(z->type, PMBOT_JARRAY);
	assert_int_equal(z->len, 4);
	assert_int_equal(pmbot_jnode_at(z, 0)->v.i, 1);
	assert_true(pmbot_jnode_at(z, 1)->v.r == 2.5);
	assert_string_equal(pmbot_jnode_at(z, 2)->v.s, "s\xc3\xa9");
	assert_int_equal(pmbot_jnode_at(z, 2)->len, 3);
	assert_int_equal(pmbot_jnode_at(z, 3)->type, PMBOT_JNULL);
	assert_null(pmbot_jnode_at(z, 4));
	a = pmbot_jnode_next(z);
	assert_ptr_equal(a, pmbot_jnode_get(root, "a"));
	assert_int_equal(a->line, 11);
	assert_int_equal(a->column, 6);
	assert_int_equal(pmbot_jnode_get(a, "t")->type, PMBOT_JTRUE);
	assert_int_equal(pmbot_jnode_get(a, "f")->type, PMBOT_JFALSE);
	assert_null(pmbot_jnode_get(a, "x"));
	assert_null(pmbot_jnode_get(z, "t"));
	m = pmbot_jnode_get(root, "");
	assert_non_null(m);
	assert_null(pmbot_jnode_first(m));
	assert_string_equal(pmbot_jnode_type_name(root), "an object");
	assert_string_equal(pmbot_jnode_type_name(z), "an array");
	assert_string_equal(pmbot_jnode_type_name(pmbot_jnode_at(z, 0)), "an integer");
	assert_string_equal(pmbot_jnode_type_name(pmbot_jnode_at(z, 1)), "a number");
	assert_string_equal(pmbot_jnode_type_name(pmbot_jnode_at(z, 2)), "a string");
	assert_string_equal(pmbot_jnode_type_name(pmbot_jnode_get(a, "t")), "a boolean");
	assert_string_equal(pmbot_jnode_type_name(pmbot_jnode_at(z, 3)), "null");
	/* Member order is the document's, not sorted. */
	assert_int_equal(pmbot_jnode_to_json(&j, root), PMBOT_OK);
	dump = json_dumps(j, JSON_COMPACT);
	assert_string_equal(dump, "{\"z\":[1,2.5,\"s\xc3\xa9\",null],\"a\":{\"t\":true,\"f\":false},\"\":{}}");
	free(dump);
	json_decref(j);
	pmbot_jdoc_free(doc);
	pmbot_diag_list_free(&diags);
}

/*
 * Shared scalars: a short string, a small whole integer or real is one
 * value wherever it appears; a long string, a negative or large number, a
 * fraction and -0.0 are each their own. Values outlive the share.
 */
static void test_json_parse__a_share_gives_repeated_short_scalars_one_value(void **state)
{
	static const char text[] = "{\"a\": [\"P1\", 7, 3.0, -0.0, 0.5, -1, 1024, \"%s\"],"
		" \"b\": {\"x\": \"P1\", \"y\": 7, \"z\": 3.0, \"w\": -0.0, \"v\": 0.5,"
		" \"u\": -1, \"t\": 1024, \"s\": \"%s\"}}";
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_jshare share = PMBOT_JSHARE_INIT;
	char longer[PMBOT_JSHARE_MAX_LEN + 2], buf[512];
	const char *const keys[] = { "x", "y", "z", "w", "v", "u", "t", "s" };
	pmbot_jdoc *doc = NULL;
	json_t *j = NULL, *a, *b, *p1;
	char *dump;
	size_t i;

	(void)state;
	memset(longer, 'q', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	snprintf(buf, sizeof(buf), text, longer, longer);
	assert_int_equal(pmbot_jdoc_parse(&doc, FILE_NAME, buf, strlen(buf), 1, 0, NULL, &diags),
		PMBOT_OK);
	assert_int_equal(pmbot_jnode_to_json_shared(&j, pmbot_jdoc_root(doc), &share), PMBOT_OK);
	a = json_object_get(j, "a");
	b = json_object_get(j, "b");
	for (i = 0; i < 8; i++) {
		json_t *x = json_array_get(a, i), *y = json_object_get(b, keys[i]);

		assert_true(json_equal(x, y));
		if (i < 3)
			assert_ptr_equal(x, y);
		else
			assert_ptr_not_equal(x, y);
	}
	/* The share's own string is the one handed out, and asked for by content. */
	p1 = pmbot_jshare_string(&share, "P1", 2);
	assert_ptr_equal(p1, json_array_get(a, 0));
	json_decref(p1);
	pmbot_jshare_free(&share);
	dump = json_dumps(j, JSON_COMPACT);
	assert_non_null(dump);
	assert_non_null(strstr(dump, "[\"P1\",7,3.0,-0.0,0.5,-1,1024,\"qqq"));
	free(dump);
	json_decref(j);
	pmbot_jdoc_free(doc);
	pmbot_diag_list_free(&diags);
}

/* Short decimals skip strtod: every one must still be the double strtod gives, bit for bit. */
static void test_json_parse__short_decimals_are_the_doubles_strtod_gives(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	unsigned long long x = 88172645463325252ULL;
	char text[40];
	int i;

	(void)state;
	for (i = 0; i < 20000; i++) {
		size_t len = 0, digits, dot, k;
		pmbot_jdoc *doc = NULL;
		json_t *j = NULL;
		double want, a, b;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		digits = 1 + (size_t)(x % 17);      /* 16 and 17 digits go to strtod */
		dot = 1 + (size_t)((x >> 8) % digits);
		if ((x >> 16) & 1)
			text[len++] = '-';
		for (k = 0; k < digits; k++) {
			if (k == dot)
				text[len++] = '.';
			/* No leading zero before more digits: JSON refuses "01". */
			text[len++] = (char)('0' + (k == 0 && dot > 1 ? 1 + (x >> (20 + k)) % 9 :
				(x >> (20 + 2 * k)) % 10));
		}
		if (dot == digits)
			text[len++] = '.', text[len++] = '0';
		text[len] = '\0';
		want = strtod(text, NULL);
		assert_int_equal(pmbot_json_parse(&j, NULL, FILE_NAME, text, len, 1, 0, NULL, &diags),
			PMBOT_OK);
		assert_int_equal(pmbot_jdoc_parse(&doc, FILE_NAME, text, len, 1, 0, NULL, &diags),
			PMBOT_OK);
		a = json_real_value(j);
		b = pmbot_jdoc_root(doc)->v.r;
		if (memcmp(&a, &want, sizeof(a)) || memcmp(&b, &want, sizeof(b)))
			print_message("%s: strtod %.17g, parsed %.17g and %.17g\n", text, want, a, b);
		assert_memory_equal(&a, &want, sizeof(a));
		assert_memory_equal(&b, &want, sizeof(b));
		json_decref(j);
		pmbot_jdoc_free(doc);
	}
	assert_int_equal(diags.count, 0);
}

/*
 * Whitespace is skipped sixteen bytes at a time and compact text not at
 * all: runs of every length up to past two blocks, of spaces alone and
 * after "\n", "\r\n" and tabs, between every pair of tokens, must leave
 * the same values, positions and refusals (a token after a run is where
 * a diagnostic points).
 */
static void test_json_parse__whitespace_runs_of_every_length_keep_positions(void **state)
{
	static const char *const lead[] = { "", "\n", "\r\n", "\t", " \t", "\n\t", "\t\n " };
	static const char *const docs[] = {
		/* %s marks where the run goes; accepted, then refused */
		"{%s\"key\"%s:%s\"value\"%s,%s\"n\"%s:%s[%s1%s,%s-2.5%s]%s}",
		"%s[%strue%s,%s{%s}%s,%s[%s]%s,%snull%s]%s",
		"{%s\"a\"%s:%s1%s,%s\"a\"%s:%s2%s}",
		"[%s1%s,%s]%s",
		"{%s\"a\"%s%s1%s}%s",
		"%s\"%s\xc3\xa9%s\"%s,",
		"[%s\"x\"%s\"y\"%s]%s",
	};
	pmbot_buf doc = PMBOT_BUF_INIT, run = PMBOT_BUF_INIT;
	tally t = { 0, 0, 0 };
	size_t d, l, n;

	(void)state;
	for (d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
		for (l = 0; l < sizeof(lead) / sizeof(lead[0]); l++) {
			for (n = 0; n <= 40; n++) {
				const char *f;

				pmbot_buf_clear(&run);
				assert_int_equal(pmbot_buf_puts(&run, lead[l]), 0);
				assert_int_equal(pmbot_buf_printf(&run, "%*s", (int)n, ""), 0);
				/* Every slot gets the run: positions shift by it each time. */
				pmbot_buf_clear(&doc);
				for (f = docs[d]; *f; f++) {
					if (f[0] == '%' && f[1] == 's') {
						assert_int_equal(pmbot_buf_put(&doc, run.buf, run.len), 0);
						f++;
					} else {
						assert_int_equal(pmbot_buf_putc(&doc, *f), 0);
					}
				}
				assert_true(agrees(&t, doc.buf, doc.len));
			}
		}
	}
	assert_int_equal(t.failures, 0);
	assert_true(t.accepted >= 2 * 7 * 41);
	assert_true(t.refused >= 4 * 7 * 41);
	pmbot_buf_free(&doc);
	pmbot_buf_free(&run);
}

/*
 * Strings and keys are decoded straight into the compact document's
 * string block, sixteen bytes stored at a time: a literal of every length
 * up to past two blocks, with an escape, a multi-byte character or a bad
 * byte at every offset, as the last bytes of the text (agrees() parses
 * an exact-size copy) and followed by more strings, must decode to the
 * same bytes and be refused the same way.
 */
static void test_json_parse__strings_of_every_length_and_shape_decode_alike(void **state)
{
	static const char *const odd[] = { "", "\\n", "\\\"", "\\\\", "\\u00e9", "\\ud83d\\ude00",
		"\\u4e2d", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "\x01", "\\x", "\\u12",
		"\\u0000", "\\ud800", "\xc3", "\xff", "\\" };
	static const char *const wrap[] = {
		"%s", "[%s]", "{%s:%s}", "[%s,%s,%s]", "{\"k\":%s,\"k2\":%s}", "%s ",
	};
	pmbot_buf lit = PMBOT_BUF_INIT, doc = PMBOT_BUF_INIT;
	tally t = { 0, 0, 0 };
	size_t o, w, n, at;

	(void)state;
	for (o = 0; o < sizeof(odd) / sizeof(odd[0]); o++) {
		for (n = 0; n <= 36; n++) {
			for (at = 0; at <= n; at += (o ? 1 : n + 1)) {
				size_t i;

				/* `n` plain bytes with the odd piece at offset `at`. */
				pmbot_buf_clear(&lit);
				assert_int_equal(pmbot_buf_putc(&lit, '"'), 0);
				for (i = 0; i <= n; i++) {
					if (i == at)
						assert_int_equal(pmbot_buf_puts(&lit, odd[o]), 0);
					if (i < n)
						assert_int_equal(pmbot_buf_putc(&lit,
							(char)('a' + (i * 7 + n) % 26)), 0);
				}
				assert_int_equal(pmbot_buf_putc(&lit, '"'), 0);
				for (w = 0; w < sizeof(wrap) / sizeof(wrap[0]); w++) {
					const char *f;

					pmbot_buf_clear(&doc);
					for (f = wrap[w]; *f; f++) {
						if (f[0] == '%' && f[1] == 's') {
							assert_int_equal(pmbot_buf_put(&doc, lit.buf,
								lit.len), 0);
							f++;
						} else {
							assert_int_equal(pmbot_buf_putc(&doc, *f), 0);
						}
					}
					assert_true(agrees(&t, doc.buf, doc.len));
				}
				/* Cut short: the text ends inside the literal. */
				assert_true(agrees(&t, lit.buf, lit.len - 1));
				assert_true(agrees(&t, lit.buf, lit.len / 2));
			}
		}
	}
	assert_int_equal(t.failures, 0);
	assert_true(t.accepted > 1000);
	assert_true(t.refused > 1000);
	pmbot_buf_free(&lit);
	pmbot_buf_free(&doc);
}

/*
 * Most keys skip the duplicate look on a filter of length and end bytes:
 * keys that share all three, or collide in it, must still be told apart,
 * and a repeat found, at every place in objects small and big.
 */
static void test_json_parse__keys_alike_in_length_and_ends_are_told_apart(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	tally t = { 0, 0, 0 };
	int n, dup;

	(void)state;
	for (n = 1; n <= 70; n += (n < 20 ? 1 : 25)) {
		for (dup = -1; dup < n; dup++) {
			int i;

			pmbot_buf_clear(&b);
			assert_int_equal(pmbot_buf_putc(&b, '{'), 0);
			/* "a0a".."a9a", "b0a"..: same length, many the same ends. */
			for (i = 0; i < n; i++)
				assert_int_equal(pmbot_buf_printf(&b, "%s\"a%c%ca\":%d", i ? "," : "",
					'a' + i / 10, '0' + i % 10, i), 0);
			/* An empty key, and one escaped the same as a plain one. */
			assert_int_equal(pmbot_buf_puts(&b, ",\"\":0,\"\\u0061\":1"), 0);
			if (dup >= 0)
				assert_int_equal(pmbot_buf_printf(&b, ",\"a%c%c\\u0061\":0",
					'a' + dup / 10, '0' + dup % 10), 0);
			else
				assert_int_equal(pmbot_buf_puts(&b, ",\"aa\\u0062\":2"), 0);
			assert_int_equal(pmbot_buf_putc(&b, '}'), 0);
			assert_true(agrees(&t, b.buf, b.len));
		}
	}
	assert_true(agrees_str(&t, "{\"\":1,\"\":2}"));
	assert_int_equal(t.failures, 0);
	assert_true(t.accepted >= 22);
	assert_true(t.refused > 100);
	pmbot_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_parse__builds_the_value),
		cmocka_unit_test(test_json_parse__accepts_a_scalar_root),
		cmocka_unit_test(test_json_parse__maps_every_value_to_its_file_position),
		cmocka_unit_test(test_json_parse__maps_empty_containers_and_nested_arrays),
		cmocka_unit_test(test_json_parse__rejects_a_duplicate_key_at_the_second_key),
		cmocka_unit_test(test_json_parse__duplicate_escaped_keys_are_duplicates),
		cmocka_unit_test(test_json_parse__reports_a_syntax_error_with_its_position),
		cmocka_unit_test(test_json_parse__rejects_trailing_content),
		cmocka_unit_test(test_json_parse__rejects_numbers_out_of_range),
		cmocka_unit_test(test_json_parse__rejects_nesting_deeper_than_the_limit),
		cmocka_unit_test(test_json_parse__accepts_nesting_at_the_limit),
		cmocka_unit_test(test_json_parse__brackets_inside_strings_do_not_nest),
		cmocka_unit_test(test_json_parse__rejects_input_over_the_size_limit),
		cmocka_unit_test(test_json_parse__rejects_invalid_utf8_at_the_bad_byte),
		cmocka_unit_test(test_json_parse__strings_take_the_utf8_of_utf8_c),
		cmocka_unit_test(test_json_parse__rejects_a_nul_byte),
		cmocka_unit_test(test_json_parse__rejects_an_escaped_nul),
		cmocka_unit_test(test_json_parse__rejects_empty_input),
		cmocka_unit_test(test_json_parse__file_may_be_null),
		cmocka_unit_test(test_json_parse__maps_a_large_report),
		cmocka_unit_test(test_json_parse__matches_jansson_on_edge_cases),
		cmocka_unit_test(test_json_parse__matches_jansson_on_generated_documents),
		cmocka_unit_test(test_json_parse__matches_jansson_on_mutated_documents),
		cmocka_unit_test(test_json_parse__matches_jansson_on_token_soup),
		cmocka_unit_test(test_json_parse__an_escaped_nul_in_a_key_is_invalid_utf8),
		cmocka_unit_test(test_json_parse__nesting_is_reported_before_an_earlier_syntax_error),
		cmocka_unit_test(test_json_parse__invalid_utf8_is_reported_before_an_earlier_syntax_error),
		cmocka_unit_test(test_json_parse__end_of_input_names_the_last_value_read),
		cmocka_unit_test(test_json_parse__syntax_errors_name_the_value_they_are_in),
		cmocka_unit_test(test_json_parse__duplicate_key_skips_nested_keys_of_the_same_name),
		cmocka_unit_test(test_json_parse__integers_fill_json_int_t_and_no_more),
		cmocka_unit_test(test_json_parse__columns_count_characters_after_long_strings),
		cmocka_unit_test(test_json_parse__compact_finds_duplicates_in_small_and_big_objects),
		cmocka_unit_test(test_json_parse__compact_document_walks_in_document_order),
		cmocka_unit_test(test_json_parse__short_decimals_are_the_doubles_strtod_gives),
		cmocka_unit_test(test_json_parse__whitespace_runs_of_every_length_keep_positions),
		cmocka_unit_test(test_json_parse__strings_of_every_length_and_shape_decode_alike),
		cmocka_unit_test(test_json_parse__keys_alike_in_length_and_ends_are_told_apart),
		cmocka_unit_test(test_json_parse__a_share_gives_repeated_short_scalars_one_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
