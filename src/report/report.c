#include "pmbot/report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/buf.h"
#include "pmbot/utf8.h"
#include "extract.h"
#include "pmbot/banned.h"

#define CANONICAL_INFO "pm-bot:report-ir/v1"
#define SCHEMA_VERSION "report_ir/v1"

/* Lookups of a JSON block's positions: the map once many are asked for. */
struct pmbot_report_pos {
	pmbot_srcmap *map; /* owned: built from the document on demand */
	size_t walks;      /* lookups answered by walking the document */
};

/* Longest info string quoted back in a message, in bytes. */
#define INFO_QUOTE_MAX 60
/* Near misses and unparsable fallback blocks named in REPORT_NO_BLOCK. */
#define HINTS_MAX 5

/*
 * A JSON block is read into a compact document, whose nodes carry the
 * positions (no source map: validating a big report looks few up), and
 * nothing else: every reader walks the document. A YAML block fills `*map`
 * and its document is converted from the parsed tree, which then goes
 * (YAML reports are small). Either way the same parser accepts and refuses
 * with the same diagnostics.
 */
static int parse_block(pmbot_jdoc **doc, pmbot_srcmap **map,
	const char *file, const pmbot_extract_item *it, const pmbot_limits *lim,
	pmbot_diag_list *diags)
{
	const pmbot_block *b = &it->block;
	const char *text = it->at ? it->at : b->text;
	/* Column 1 of the block text is column content_column of the file. */
	int col_base = b->content_column > 0 ? b->content_column - 1 : 0;
	json_t *root = NULL;
	int rc;

	*doc = NULL;
	*map = NULL;
	if (b->format == PMBOT_FORMAT_JSON)
		return pmbot_jdoc_parse(doc, file, text, b->len,
			b->content_line, col_base, lim, diags);
	if (!(*map = pmbot_srcmap_new()))
		return PMBOT_ERROR;
	rc = pmbot_yaml_parse(&root, *map, file, text, b->len,
		b->content_line, col_base, lim, diags);
	if (rc == PMBOT_OK && pmbot_jdoc_from_json(doc, root, *map) < 0)
		rc = PMBOT_ERROR;
	json_decref(root);
	if (rc != PMBOT_OK) {
		pmbot_jdoc_free(*doc);
		*doc = NULL;
		pmbot_srcmap_free(*map);
		*map = NULL;
	}
	return rc;
}

static int has_schema_version(const pmbot_jdoc *doc)
{
	const pmbot_jnode *v = pmbot_jnode_get(pmbot_jdoc_root(doc), "schema_version");

	return v && v->type == PMBOT_JSTRING && v->len == strlen(SCHEMA_VERSION) &&
		!memcmp(v->v.s, SCHEMA_VERSION, strlen(SCHEMA_VERSION));
}

/* "3, 10 and 17": the fence lines of blocks idx[0..n). */
static int put_lines(pmbot_buf *b, const pmbot_extract_list *blocks,
	const size_t *idx, size_t n)
{
	size_t i;
	int err = 0;

	for (i = 0; i < n; i++) {
		if (i)
			err |= pmbot_buf_puts(b, i + 1 == n ? " and " : ", ");
		err |= pmbot_buf_printf(b, "%d", blocks->items[idx[i]].block.fence_line);
	}
	return err;
}

/* Quote an info string, cut at a character boundary so the message stays
 * valid UTF-8 and short whatever the author wrote. */
static int put_info(pmbot_buf *b, const char *info)
{
	size_t len = strlen(info), cut = 0;
	int err = 0;

	while (cut < len && cut + pmbot_utf8_seqlen((unsigned char)info[cut]) <= INFO_QUOTE_MAX)
		cut += pmbot_utf8_seqlen((unsigned char)info[cut]);
	if (cut > len)
		cut = len;
	err |= pmbot_buf_putc(b, '"');
	err |= pmbot_buf_put(b, info, cut);
	err |= pmbot_buf_puts(b, cut < len ? "...\"" : "\"");
	return err;
}

/* The diagnostic sits at the second block: the first alone would be fine. */
static int report_ambiguous(pmbot_diag_list *diags, const char *file,
	const pmbot_extract_list *blocks, const size_t *idx, size_t n)
{
	const pmbot_block *second = &blocks->items[idx[1]].block;
	pmbot_buf msg = PMBOT_BUF_INIT;
	int err = PMBOT_ERROR, e = 0;

	if (blocks->items[idx[0]].kind == PMBOT_EXTRACT_CANONICAL) {
		e |= pmbot_buf_printf(&msg, "%zu fenced blocks have the info string "
			CANONICAL_INFO " (or its legacy alias), at lines ", n);
		e |= put_lines(&msg, blocks, idx, n);
		e |= pmbot_buf_puts(&msg, "; a report must hold exactly one");
	} else {
		e |= pmbot_buf_printf(&msg, "no block has the info string " CANONICAL_INFO
			", and %zu fenced json/yaml blocks have a top-level schema_version "
			SCHEMA_VERSION ", at lines ", n);
		e |= put_lines(&msg, blocks, idx, n);
		e |= pmbot_buf_puts(&msg, "; pm-bot will not pick one: give the intended "
			"block the info string " CANONICAL_INFO);
	}
	if (e || pmbot_diag_add(diags, PMBOT_SEV_ERROR, "REPORT_AMBIGUOUS_BLOCK", file, "",
			second->fence_line, second->content_column, "%s", msg.buf) < 0)
		goto done;
	err = PMBOT_EINVALID;
done:
	pmbot_buf_free(&msg);
	return err;
}

static int report_no_block(pmbot_diag_list *diags, const char *file,
	const pmbot_extract_list *blocks, const unsigned char *unparsed)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	size_t i, hints = 0, more = 0;
	int err = PMBOT_ERROR, e = 0;

	e |= pmbot_buf_puts(&msg, "no ReportIR block found: embed exactly one fenced code "
		"block whose info string is exactly " CANONICAL_INFO " (opening fence ```"
		CANONICAL_INFO ") holding the report as JSON or YAML; no fenced json/yaml "
		"block with a top-level schema_version " SCHEMA_VERSION " was found either");
	for (i = 0; i < blocks->count; i++) {
		const pmbot_extract_item *it = &blocks->items[i];

		if (it->kind != PMBOT_EXTRACT_NEAR_MISS && !unparsed[i])
			continue;
		if (hints == HINTS_MAX) {
			more++;
			continue;
		}
		hints++;
		e |= pmbot_buf_printf(&msg, "; line %d: ", it->block.fence_line);
		if (it->kind == PMBOT_EXTRACT_NEAR_MISS) {
			e |= pmbot_buf_puts(&msg, "info string ");
			e |= put_info(&msg, it->block.info);
			e |= pmbot_buf_puts(&msg, " is not " CANONICAL_INFO
				" (the info string must match exactly)");
		} else {
			e |= pmbot_buf_puts(&msg, "fenced ");
			e |= put_info(&msg, it->block.info);
			e |= pmbot_buf_puts(&msg, " block does not parse");
		}
	}
	if (more)
		e |= pmbot_buf_printf(&msg, "; and %zu more", more);
	if (e)
		goto done;
	if (pmbot_diag_add(diags, PMBOT_SEV_ERROR, "REPORT_NO_BLOCK", file, "", 1, 0,
			"%s", msg.buf) < 0)
		goto done;
	err = PMBOT_EINVALID;
done:
	pmbot_buf_free(&msg);
	return err;
}

/*
 * Move block `i` of `blocks` into `r`: with its text when `keep` (a copy of
 * a borrowed one), else without (`text` NULL, `len` 0).
 */
static int take_block(pmbot_report *r, pmbot_extract_list *blocks, size_t i, int keep)
{
	pmbot_extract_item *it = &blocks->items[i];

	r->block = it->block;
	memset(&it->block, 0, sizeof(r->block));
	if (!keep) {
		free(r->block.text);
		r->block.text = NULL;
		r->block.len = 0;
	} else if (it->at) {
		if (!(r->block.text = malloc(r->block.len + 1)))
			return PMBOT_ERROR;
		memcpy(r->block.text, it->at, r->block.len);
		r->block.text[r->block.len] = '\0';
	}
	return PMBOT_OK;
}

/*
 * Parse every fallback block quietly (into a scratch list). A unique
 * candidate moves into `r`, with its diagnostics, which can only be
 * warnings since it parsed. `unparsed[i]` is set for fallback blocks that
 * did not parse, for the REPORT_NO_BLOCK hint.
 */
static int load_fallback(pmbot_report *r, pmbot_extract_list *blocks,
	const pmbot_limits *lim, pmbot_diag_list *diags, size_t *idx,
	unsigned char *unparsed, int keep)
{
	pmbot_diag_list scratch = PMBOT_DIAG_LIST_INIT, kept = PMBOT_DIAG_LIST_INIT;
	pmbot_srcmap *map = NULL;
	pmbot_jdoc *doc = NULL;
	size_t i, n = 0;
	int err = PMBOT_ERROR, rc;

	for (i = 0; i < blocks->count; i++) {
		if (blocks->items[i].kind != PMBOT_EXTRACT_FALLBACK)
			continue;
		rc = parse_block(&doc, &map, r->file, &blocks->items[i], lim, &scratch);
		if (rc == PMBOT_ERROR)
			goto done;
		if (rc == PMBOT_OK && has_schema_version(doc)) {
			idx[n++] = i;
			if (n == 1) {
				if (pmbot_diag_list_move(&kept, &scratch) < 0)
					goto done;
				r->doc = doc;
				r->map = map;
				doc = NULL;
				map = NULL;
			}
		} else if (rc != PMBOT_OK) {
			unparsed[i] = 1;
		}
		pmbot_jdoc_free(doc);
		doc = NULL;
		pmbot_srcmap_free(map);
		map = NULL;
		pmbot_diag_list_free(&scratch);
	}
	if (n == 0)
		err = report_no_block(diags, r->file, blocks, unparsed);
	else if (n > 1)
		err = report_ambiguous(diags, r->file, blocks, idx, n);
	else if (pmbot_diag_list_move(diags, &kept) == 0)
		err = take_block(r, blocks, idx[0], keep);
done:
	pmbot_jdoc_free(doc);
	pmbot_srcmap_free(map);
	pmbot_diag_list_free(&scratch);
	pmbot_diag_list_free(&kept);
	return err;
}

static int load_canonical(pmbot_report *r, pmbot_extract_list *blocks,
	const pmbot_limits *lim, pmbot_diag_list *diags, size_t *idx, int keep)
{
	size_t i, n = 0;
	int rc;

	for (i = 0; i < blocks->count; i++)
		if (blocks->items[i].kind == PMBOT_EXTRACT_CANONICAL)
			idx[n++] = i;
	if (n > 1)
		return report_ambiguous(diags, r->file, blocks, idx, n);
	rc = parse_block(&r->doc, &r->map, r->file, &blocks->items[idx[0]], lim, diags);
	if (take_block(r, blocks, idx[0], keep) < 0)
		return PMBOT_ERROR;
	return rc;
}

/*
 * `owned` (may be NULL) holds `markdown` and is freed once no block needs
 * it: after extraction when every block is a copy, else after the parse;
 * `keep`: the report keeps its block's text.
 */
static int load(pmbot_report **out, const char *file, const char *markdown, size_t len,
	pmbot_buf *owned, int keep, const pmbot_limits *lim, pmbot_diag_list *diags)
{
	pmbot_extract_list blocks = PMBOT_EXTRACT_LIST_INIT;
	unsigned char *unparsed = NULL;
	size_t *idx = NULL;
	pmbot_report *r = NULL;
	pmbot_limits deflim;
	size_t i, bad = 0;
	int line = 0, column = 0, canonical = 0;
	int err = PMBOT_ERROR;

	*out = NULL;
	if (!lim) {
		pmbot_limits_default(&deflim);
		lim = &deflim;
	}
	if (!markdown)
		len = 0;
	if (len > lim->max_bytes) {
		err = pmbot_diag_add(diags, PMBOT_SEV_ERROR, "INPUT_TOO_LARGE", file, "", 0, 0,
			"the Markdown file is %zu bytes, over the limit of %zu bytes",
			len, lim->max_bytes) < 0 ? PMBOT_ERROR : PMBOT_EINVALID;
		goto done;
	}
	if (len && !pmbot_utf8_valid(markdown, len, &bad, &line, &column)) {
		err = pmbot_diag_add(diags, PMBOT_SEV_ERROR, "INVALID_UTF8", file, "",
			line, column, markdown[bad] ? "byte 0x%02x at offset %zu is not valid UTF-8"
			: "NUL byte (0x%02x) at offset %zu: a report is text",
			(unsigned char)markdown[bad], bad) < 0 ? PMBOT_ERROR : PMBOT_EINVALID;
		goto done;
	}
	if (!(r = calloc(1, sizeof(*r))) || !(r->pos = calloc(1, sizeof(*r->pos))))
		goto done;
	if (file && !(r->file = strdup(file)))
		goto done;
	if (pmbot_extract_blocks_borrowing(&blocks, markdown, len) < 0)
		goto done;
	/* Copies only: the file need not outlive their parse. */
	for (i = 0; i < blocks.count && !blocks.items[i].at; i++)
		;
	if (owned && i == blocks.count)
		pmbot_buf_free(owned);
	/* +1: calloc(0) may return NULL, which would read as out of memory. */
	if (!(idx = calloc(blocks.count + 1, sizeof(*idx))) ||
	    !(unparsed = calloc(blocks.count + 1, 1)))
		goto done;
	for (i = 0; i < blocks.count; i++)
		canonical += blocks.items[i].kind == PMBOT_EXTRACT_CANONICAL;
	if (canonical)
		err = load_canonical(r, &blocks, lim, diags, idx, keep);
	else
		err = load_fallback(r, &blocks, lim, diags, idx, unparsed, keep);
	if (err < 0)
		goto done;
	*out = r;
	r = NULL;
done:
	if (owned)
		pmbot_buf_free(owned);
	pmbot_report_free(r);
	pmbot_extract_list_free(&blocks);
	free(unparsed);
	free(idx);
	return err;
}

int pmbot_report_load(pmbot_report **out, const char *file,
	const char *markdown, size_t len, const pmbot_limits *lim,
	pmbot_diag_list *diags)
{
	return load(out, file, markdown, len, NULL, 1, lim, diags);
}

int pmbot_report_load_values(pmbot_report **out, const char *file,
	const char *markdown, size_t len, const pmbot_limits *lim,
	pmbot_diag_list *diags)
{
	return load(out, file, markdown, len, NULL, 0, lim, diags);
}

int pmbot_report_load_buf(pmbot_report **out, const char *file, pmbot_buf *markdown,
	const pmbot_limits *lim, pmbot_diag_list *diags)
{
	return load(out, file, markdown->buf, markdown->len, markdown, 0, lim, diags);
}

void pmbot_report_free(pmbot_report *report)
{
	if (!report)
		return;
	free(report->file);
	pmbot_extract_block_free(&report->block);
	pmbot_jdoc_free(report->doc);
	pmbot_srcmap_free(report->map);
	if (report->pos)
		pmbot_srcmap_free(report->pos->map);
	free(report->pos);
	free(report);
}

/*
 * Walk `pointer` down the document as far as its tokens name values: the
 * last value reached is what the source map's fallback to the nearest
 * recorded ancestor finds. Tokens are matched as the map matches them,
 * byte for byte against the pointers the parser records: canonical
 * indexes ("0", "17", never "017" or "-"), "~0" and "~1" the only escapes.
 */
static const pmbot_jnode *walk(const pmbot_jnode *n, const char *pointer)
{
	const char *p = pointer;

	/* The map records "" and pointers starting '/': anything else falls back to "". */
	if (*p != '/')
		return n;
	while (*p == '/') {
		const char *tok = ++p, *end = tok + strcspn(tok, "/");
		const pmbot_jnode *m = NULL, *c;
		size_t tlen = (size_t)(end - tok), i;
		uint32_t k;

		p = end;
		if (n->type == PMBOT_JARRAY) {
			size_t idx = 0;

			if (!tlen || tlen > 10 || (tok[0] == '0' && tlen > 1))
				return n;
			for (i = 0; i < tlen; i++) {
				if (tok[i] < '0' || tok[i] > '9')
					return n;
				idx = idx * 10 + (size_t)(tok[i] - '0');
			}
			if (!(m = pmbot_jnode_at(n, idx)))
				return n;
		} else if (n->type == PMBOT_JOBJECT) {
			for (k = 0, c = n + 1; k < n->len && !m; k++, c = pmbot_jnode_next(c)) {
				const char *t = tok, *key = c->key, *kend = c->key + c->key_len;

				while (t < end && key < kend) {
					char want = *t;

					if (*t == '~') {
						if (t + 1 >= end || (t[1] != '0' && t[1] != '1'))
							return n;
						want = t[1] == '0' ? '~' : '/';
						t++;
					}
					if (*key != want)
						break;
					t++;
					key++;
				}
				if (t == end && key == kend)
					m = c;
			}
			if (!m)
				return n;
		} else {
			return n;
		}
		n = m;
	}
	return n;
}

/* Walks before the map is built: enough for any report with few diagnostics. */
#define WALKS_BEFORE_MAP 64

int pmbot_report_find(const pmbot_report *report, const char *pointer,
	int *line, int *column)
{
	struct pmbot_report_pos *pos = report ? report->pos : NULL;
	const pmbot_jnode *n;

	if (line)
		*line = 0;
	if (column)
		*column = 0;
	if (!report || !pointer)
		return 0;
	/* A YAML block's map is there anyway and answers exactly as the walk would. */
	if (report->map || !report->doc)
		return pmbot_srcmap_find(report->map, pointer, line, column);
	if (pos && !pos->map && pos->walks >= WALKS_BEFORE_MAP &&
	    pmbot_jdoc_srcmap(&pos->map, report->doc) < 0)
		return PMBOT_ERROR;
	if (pos && pos->map)
		return pmbot_srcmap_find(pos->map, pointer, line, column);
	if (pos)
		pos->walks++;
	n = walk(pmbot_jdoc_root(report->doc), pointer);
	if (line)
		*line = n->line;
	if (column)
		*column = n->column;
	return 1;
}
