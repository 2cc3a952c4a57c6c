#include "extract.h"

#include <cmark-gfm.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "pmbot/banned.h"

static const char *const canonical_infos[] = {
	"pm-bot:report-ir/v1",
	"pm-bot:report_ir/v1", /* legacy alias, spec 000 */
};

static const char *const fallback_words[] = { "json", "yaml", "yml" };

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int equal_nocase(const char *a, size_t alen, const char *b)
{
	size_t i;

	if (alen != strlen(b))
		return 0;
	for (i = 0; i < alen; i++)
		if (ascii_lower((unsigned char)a[i]) != ascii_lower((unsigned char)b[i]))
			return 0;
	return 1;
}

static pmbot_format content_format(const char *text, size_t len)
{
	const char *end = text + len;

	while (text < end && is_space(*text))
		text++;
	return text < end && (*text == '{' || *text == '[') ? PMBOT_FORMAT_JSON
		: PMBOT_FORMAT_YAML;
}

/* Returns 1 and sets *kind / *format when the block is worth keeping. */
static int classify(const char *info, const char *text, size_t len, pmbot_extract_kind *kind,
	pmbot_format *format)
{
	const char *start = info, *end = info + strlen(info), *word_end;
	size_t i;

	/* cmark trims the info string already; trimming again keeps the rule
	 * ("exact after trimming") independent of the parser's behaviour. */
	while (start < end && is_space(*start))
		start++;
	while (end > start && is_space(end[-1]))
		end--;
	for (i = 0; i < sizeof(canonical_infos) / sizeof(*canonical_infos); i++) {
		if ((size_t)(end - start) == strlen(canonical_infos[i]) &&
		    !memcmp(start, canonical_infos[i], (size_t)(end - start))) {
			*kind = PMBOT_EXTRACT_CANONICAL;
			*format = content_format(text, len);
			return 1;
		}
	}
	for (word_end = start; word_end < end && !is_space(*word_end); word_end++)
		;
	for (i = 0; i < sizeof(fallback_words) / sizeof(*fallback_words); i++) {
		if (equal_nocase(start, (size_t)(word_end - start), fallback_words[i])) {
			*kind = PMBOT_EXTRACT_FALLBACK;
			*format = i == 0 ? PMBOT_FORMAT_JSON : PMBOT_FORMAT_YAML;
			return 1;
		}
	}
	if (word_end - start >= 7 && equal_nocase(start, 7, "pm-bot:")) {
		*kind = PMBOT_EXTRACT_NEAR_MISS;
		*format = content_format(text, len);
		return 1;
	}
	return 0;
}

/*
 * Takes `text` (`len` bytes, NUL-terminated) on success and on failure;
 * with `text` NULL the content is the `len` bytes at `at`, borrowed.
 */
static int append_text(pmbot_extract_list *list, cmark_node *node, char *text,
	const char *at, size_t len, pmbot_extract_kind kind, pmbot_format format)
{
	const char *info = cmark_node_get_fence_info(node);
	pmbot_extract_item *item;

	if (list->count == list->alloc) {
		size_t alloc = list->alloc ? list->alloc * 2 : 4;
		pmbot_extract_item *p = realloc(list->items, alloc * sizeof(*p));

		if (!p) {
			free(text);
			return PMBOT_ERROR;
		}
		list->items = p;
		list->alloc = alloc;
	}
	item = &list->items[list->count];
	memset(item, 0, sizeof(*item));
	item->kind = kind;
	item->block.text = text;
	item->at = at;
	item->block.info = strdup(info ? info : "");
	if (!(text || at) || !item->block.info) {
		pmbot_extract_block_free(&item->block);
		return PMBOT_ERROR;
	}
	item->block.len = len;
	item->block.fence_line = cmark_node_get_start_line(node);
	item->block.content_line = item->block.fence_line + 1;
	/* cmark strips the container prefix and the fence's own indentation
	 * from content lines, so text column 1 sits under the fence. */
	item->block.content_column = cmark_node_get_start_column(node);
	item->block.canonical = kind == PMBOT_EXTRACT_CANONICAL;
	item->block.format = format;
	list->count++;
	return 0;
}

static int append(pmbot_extract_list *list, cmark_node *node, pmbot_extract_kind kind,
	pmbot_format format)
{
	const char *text = cmark_node_get_literal(node);
	char *copy = strdup(text ? text : "");

	return append_text(list, node, copy, NULL, copy ? strlen(copy) : 0, kind, format);
}

static int is_block(cmark_node *node)
{
	return node && (cmark_node_get_type(node) & CMARK_NODE_TYPE_MASK) == CMARK_NODE_TYPE_BLOCK;
}

/* Block nodes in document order; inline nodes (most of a large document)
 * are never visited. Iterative, so deep block quote nesting is harmless. */
static cmark_node *next_block(cmark_node *doc, cmark_node *node)
{
	cmark_node *child = cmark_node_first_child(node);

	if (is_block(child))
		return child;
	while (node != doc && !cmark_node_next(node))
		node = cmark_node_parent(node);
	return node == doc ? NULL : cmark_node_next(node);
}

static int visit(pmbot_extract_list *out, cmark_node *node, int line0)
{
	const char *info, *text;
	int fence_len = 0, fence_off = 0;
	char fence_char = 0;
	pmbot_extract_kind kind;
	pmbot_format format;

	if (cmark_node_get_type(node) != CMARK_NODE_CODE_BLOCK ||
	    !cmark_node_get_fenced(node, &fence_len, &fence_off, &fence_char))
		return 0;
	info = cmark_node_get_fence_info(node);
	text = cmark_node_get_literal(node);
	if (!text)
		text = "";
	if (!classify(info ? info : "", text, strlen(text), &kind, &format))
		return 0;
	if (append(out, node, kind, format) < 0)
		return PMBOT_ERROR;
	out->items[out->count - 1].block.fence_line += line0;
	out->items[out->count - 1].block.content_line += line0;
	return 0;
}

/* Offset just after the line end (cmark's: "\n", "\r\n", "\r") of the line holding byte `i`. */
static size_t next_line(const char *m, size_t len, size_t i)
{
	const char *lf, *cr;

	if (i >= len)
		return len;
	if (i > 0 && m[i] == '\n' && m[i - 1] == '\r')
		return i + 1;
	/* '\r' is looked for only up to the next '\n': most files have none. */
	lf = memchr(m + i, '\n', len - i);
	cr = memchr(m + i, '\r', (size_t)((lf ? lf : m + len) - (m + i)));
	if (cr)
		return (size_t)(cr - m) + 1 + ((size_t)(cr - m) + 1 < len && cr[1] == '\n');
	return lf ? (size_t)(lf - m) + 1 : len;
}

/* Offset of line `line` (1-based) of the text that starts at `from`. */
static size_t line_offset(const char *m, size_t len, size_t from, int line)
{
	while (--line > 0 && from < len)
		from = next_line(m, len, from);
	return from;
}

/* Line ends ('\n') in m[from, to). */
static size_t count_lf(const char *m, size_t from, size_t to)
{
	size_t n = 0, i = from;

#if defined(__SSE2__)
	/*
	 * 16 bytes a step: a 2.8 MB block is 175,000 steps, not 116,000
	 * memchr calls. Each byte lane counts down (a match is -1) for at most
	 * 255 steps before the lanes are summed.
	 */
	const __m128i lf = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();

	while (i + 16 <= to) {
		__m128i acc = zero, sum;
		size_t steps = 0;

		/* Four steps a turn while they fit: fewer loop instructions. */
		for (; i + 64 <= to && steps + 4 <= 255; i += 64, steps += 4) {
			const __m128i *p = (const __m128i *)(const void *)(m + i);

			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128(p), lf));
			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128(p + 1), lf));
			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128(p + 2), lf));
			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128(p + 3), lf));
		}
		for (; i + 16 <= to && steps < 255; i += 16, steps++)
			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(
				_mm_loadu_si128((const __m128i *)(const void *)(m + i)), lf));
		sum = _mm_sad_epu8(acc, zero);
		n += (size_t)_mm_cvtsi128_si32(sum) + (size_t)_mm_extract_epi16(sum, 4);
	}
#endif
	for (; i < to; i++)
		n += m[i] == '\n';
	return n;
}

/*
 * At byte `j` of a line: a closing fence from there on (at least `n`
 * fence characters `c`, then only spaces and tabs)? Sets *end to the byte
 * after the fence's blanks.
 */
static int closes_at(const char *m, size_t len, size_t j, int n, char c, size_t *end)
{
	size_t k = 0;

	while (j < len && m[j] == c) {
		j++;
		k++;
	}
	while (j < len && (m[j] == ' ' || m[j] == '\t'))
		j++;
	*end = j;
	return k >= (size_t)n && (j == len || m[j] == '\n' || m[j] == '\r');
}

/*
 * End of the top-level fenced code block whose opening fence line starts
 * at `at`: after its closing fence line (up to three spaces, at least
 * `n` fence characters `c`, then only spaces and tabs), or `len`. `*lines`
 * gets the lines up to there, `*close` the start of the closing fence
 * line (`len` without one).
 */
static size_t fence_end(const char *m, size_t len, size_t at, int n, char c, int *lines,
	size_t *close)
{
	size_t i = next_line(m, len, at), from = i, q, s, j;

	*lines = 1;
	if (memchr(m + at, '\r', len - at)) {
		/* '\r' ends lines too (rare): line by line. */
		while (i < len) {
			j = i;
			(*lines)++;
			while (j < len && m[j] == ' ' && j - i < 3)
				j++;
			if (closes_at(m, len, j, n, c, &j)) {
				*close = i;
				return next_line(m, len, j);
			}
			i = next_line(m, len, j);
		}
		*close = len;
		return len;
	}
	/*
	 * Lines end at '\n' only. A closing fence line has a fence character
	 * after at most three spaces: only the lines where memchr finds one
	 * (in a JSON block, none) are looked at, and the lines up to the
	 * fence are counted in one pass at the end.
	 */
	for (q = i; q < len; q = j < len ? j + 1 : len) {
		const char *p = memchr(m + q, c, len - q);

		if (!p)
			break;
		/* The start of p's line, when only up to three spaces lead to p. */
		for (q = (size_t)(p - m), s = q; s > i && m[s - 1] == ' ' && q - s < 3; s--)
			;
		if ((s == i || m[s - 1] == '\n') && closes_at(m, len, q, n, c, &j)) {
			*lines += (int)count_lf(m, from, s) + 1;
			*close = s;
			return next_line(m, len, j);
		}
		/* Not a closing fence: the rest of its line cannot hold one. */
		p = memchr(m + q, '\n', len - q);
		j = p ? (size_t)(p - m) : len;
		i = j + 1;
	}
	/* Every line start from `from` on: one, and one after each '\n' but a last. */
	if (from < len)
		*lines += 1 + (int)count_lf(m, from, len - 1);
	*close = len;
	return len;
}

static cmark_node *parse(const char *m, size_t len)
{
	cmark_parser *parser = cmark_parser_new(CMARK_OPT_DEFAULT);
	cmark_node *doc;

	if (!parser)
		return NULL;
	if (len)
		cmark_parser_feed(parser, m, len);
	doc = cmark_parser_finish(parser);
	cmark_parser_free(parser);
	return doc;
}

/*
 * Does the line at `m` (`left` bytes) start a paragraph in a fresh parse,
 * as it continues one in a paragraph? A letter does, and '*' or '_' not
 * followed by a blank (no list item) on a line with a letter or digit
 * (no thematic break). Any other start could be read as a block.
 */
static int plain_line(const char *m, size_t left)
{
	size_t i;

	if ((*m >= 'a' && *m <= 'z') || (*m >= 'A' && *m <= 'Z'))
		return 1;
	if ((*m != '*' && *m != '_') || left < 2 || m[1] == ' ' || m[1] == '\t' ||
	    m[1] == '\n' || m[1] == '\r')
		return 0;
	for (i = 1; i < left && m[i] != '\n' && m[i] != '\r'; i++)
		if ((m[i] >= 'a' && m[i] <= 'z') || (m[i] >= 'A' && m[i] <= 'Z') ||
		    (m[i] >= '0' && m[i] <= '9'))
			return 1;
	return 0;
}

/*
 * Offset of the last line after the first of top-level paragraph `para`
 * (lines `from`..end line of the text at `start`) that plain_line() takes,
 * or 0 when none does.
 */
static size_t paragraph_cut(const char *m, size_t len, size_t start, cmark_node *para, int *line)
{
	int first = cmark_node_get_start_line(para), last = cmark_node_get_end_line(para), l;
	size_t at = line_offset(m, len, start, first), cut = 0;

	for (l = first + 1; l <= last; l++) {
		at = next_line(m, len, at);
		if (at >= len)
			break;
		if (plain_line(m + at, len - at)) {
			cut = at;
			*line = l;
		}
	}
	return cut;
}

/* Blocks of `doc` before its top-level child `stop` (NULL: all). */
static int visit_until(pmbot_extract_list *out, cmark_node *doc, cmark_node *stop, int line0)
{
	cmark_node *node;

	for (node = next_block(doc, doc); node && node != stop; node = next_block(doc, node))
		if (visit(out, node, line0) < 0)
			return PMBOT_ERROR;
	return 0;
}

/*
 * cmark keeps every block and inline node of what it parsed until it is
 * freed: about 150 bytes per byte of emphasis-heavy prose. So a long file
 * is parsed in pieces of about `chunk` bytes, cut only where the result
 * cannot change: at the first line of a top-level block. Everything open
 * before that line was closed by it (the block is a child of the
 * document), so the blocks before it are final, and the line starts a
 * fresh parse in the state a fresh parser has. The last top-level block
 * of a piece is parsed again at the start of the next. A piece holding
 * one block (no cut) is parsed again twice as long, except a fenced code
 * block (the report itself), whose end is its closing fence. A line
 * starting with U+FEFF is never cut at: cmark drops it at the start of
 * a document only.
 */
/* A top-level fenced code block's end (fence_end), 0 when `node` is none. */
static size_t fenced_end(cmark_node *node, const char *m, size_t len, size_t at, int *lines,
	size_t *close)
{
	int fence_len = 0, fence_off = 0;
	char fence_char = 0;

	if (cmark_node_get_type(node) != CMARK_NODE_CODE_BLOCK ||
	    !cmark_node_get_fenced(node, &fence_len, &fence_off, &fence_char))
		return 0;
	return fence_end(m, len, at, fence_len, fence_char, lines, close);
}

/*
 * The content of a fenced code block is literal text: for the top-level
 * block whose opening fence line starts at `at` and whose content ends at
 * `close` (its closing fence line or the end), only the fence line goes
 * through cmark (info string, indentation). The content lines are taken
 * as cmark would take them: up to the fence's indentation in spaces
 * stripped from each, each ended by "\n". Where that is not plainly exact
 * ('\r' line ends, NUL bytes, a tab within the stripped indentation) this
 * returns 0 and cmark parses the block. 1 when the block was taken.
 */
static int fenced_literal(pmbot_extract_list *out, const char *m, size_t at, size_t close,
	int line0, int borrow)
{
	size_t body = next_line(m, close, at), i, n = 0;
	cmark_node *doc = NULL, *node;
	int fence_len = 0, fence_off = 0, err = 0, strip;
	char fence_char = 0, *text = NULL;
	const char *info, *content;
	pmbot_extract_kind kind;
	pmbot_format format;

	if (memchr(m + at, '\r', close - at) || memchr(m + at, '\0', close - at))
		return 0;
	if (!(doc = parse(m + at, body - at)))
		return PMBOT_ERROR;
	node = cmark_node_first_child(doc);
	if (!node || cmark_node_next(node) || cmark_node_get_type(node) != CMARK_NODE_CODE_BLOCK ||
	    !cmark_node_get_fenced(node, &fence_len, &fence_off, &fence_char))
		goto done;
	if (borrow && !fence_off && close > body && m[close - 1] == '\n') {
		/* At column 1 with a last "\n": the lines are the content as they are. */
		content = m + body;
		n = close - body;
	} else {
		/* One byte more per line at most: the "\n" of a last line without. */
		if (!(text = malloc(close - body + 2))) {
			err = PMBOT_ERROR;
			goto done;
		}
		/* At column 1 nothing is stripped: the lines as they are, in one copy. */
		if (!fence_off && close > body) {
			memcpy(text, m + body, close - body);
			n = close - body;
			if (text[n - 1] != '\n')
				text[n++] = '\n';
			body = close;
		}
		for (i = body; i < close;) {
			const char *lf = memchr(m + i, '\n', close - i);
			size_t e = lf ? (size_t)(lf - m) : close;

			for (strip = 0; strip < fence_off && i < e && m[i] == ' '; strip++)
				i++;
			if (strip < fence_off && i < e && m[i] == '\t')
				goto done; /* cmark takes part of the tab as columns */
			memcpy(text + n, m + i, e - i);
			n += e - i;
			text[n++] = '\n';
			i = lf ? e + 1 : close;
		}
		text[n] = '\0';
		content = text;
	}
	err = 1;
	info = cmark_node_get_fence_info(node);
	if (classify(info ? info : "", content, n, &kind, &format)) {
		err = append_text(out, node, text, text ? NULL : content, n, kind, format);
		text = NULL;
		if (err < 0)
			goto done;
		out->items[out->count - 1].block.fence_line += line0;
		out->items[out->count - 1].block.content_line += line0;
		err = 1;
	}
done:
	free(text);
	cmark_node_free(doc);
	return err;
}

/*
 * Where the last "```" or "~~~" of `m` starts, plus one; 0 when there is
 * none. A fenced block opens with one, so none starts on a line after it:
 * the text past it is not parsed at all. cmark spends about 0.3 s a
 * megabyte on emphasis-heavy prose, all of it for nothing when no fence
 * follows. Read backwards, so a report's closing fence near the end of
 * its file is found at once.
 */
static size_t last_fence(const char *m, size_t len)
{
	size_t i, run = 0;

	for (i = len; i > 0; i--) {
		if ((m[i - 1] == '`' || m[i - 1] == '~') && run && m[i - 1] == m[i]) {
			if (++run == 3)
				return i;
		} else {
			run = m[i - 1] == '`' || m[i - 1] == '~';
		}
	}
	return 0;
}

static int extract(pmbot_extract_list *out, const char *markdown, size_t len, size_t chunk,
	int borrow)
{
	cmark_node *doc = NULL, *last;
	size_t start = 0, want = chunk ? chunk : 1, end, cut, whole = 0, close = 0;
	size_t fences = len ? last_fence(markdown, len) : 0;
	int line0 = 0, err = PMBOT_ERROR, x, adv, whole_lines = 0;

	for (;;) {
		/* Everything before `start` is visited; no fence from here on, no block. */
		if (!whole && start >= fences)
			break;
		/* `whole`: the piece ends where nothing is open (a code block's end). */
		end = whole ? whole : len - start <= want ? len : next_line(markdown, len, start + want - 1);
		if (whole && (x = fenced_literal(out, markdown, start, close, line0, borrow)) != 0) {
			if (x < 0)
				goto done;
			if (end == len)
				break;
			line0 += whole_lines;
			start = end;
			whole = 0;
			want = chunk ? chunk : 1;
			continue;
		}
		/* An empty text may come as NULL: no offset on it. */
		if (!(doc = parse(len ? markdown + start : markdown, end - start)))
			goto done;
		last = cmark_node_last_child(doc);
		x = last ? cmark_node_get_start_line(last) : 0;
		if (end == len || whole || !last) {
			/* All final: the rest, a code block whole, or blank lines only. */
			if (visit_until(out, doc, NULL, line0) < 0)
				goto done;
			if (end == len)
				break;
			adv = whole_lines;
			if (!whole)
				for (adv = 0, cut = start; cut < end; cut = next_line(markdown, len, cut))
					adv++;
			cut = end;
			whole = 0;
		} else if (x > 1 && (cut = line_offset(markdown, end, start, x)) < end &&
		    !(end - cut >= 3 && !memcmp(markdown + cut, "\xef\xbb\xbf", 3))) {
			if (visit_until(out, doc, last, line0) < 0)
				goto done;
			adv = x - 1;
			/* The report itself: parsed next, whole, not in pieces. */
			whole = fenced_end(last, markdown, len, cut, &whole_lines, &close);
		} else if (x == 1 && (whole = fenced_end(last, markdown, len, start, &whole_lines, &close))) {
			/* Nothing taken: the next round parses the block whole. */
			cmark_node_free(doc);
			doc = NULL;
			continue;
		} else if (cmark_node_get_type(last) == CMARK_NODE_PARAGRAPH &&
		    (cut = paragraph_cut(markdown, end, start, last, &x)) > start) {
			/*
			 * Inside a long paragraph: a fresh parse from a plain line
			 * is a paragraph too, so no block appears or goes.
			 */
			if (visit_until(out, doc, last, line0) < 0)
				goto done;
			adv = x - 1;
		} else {
			want = want > len / 2 ? len : want * 2;
			cmark_node_free(doc);
			doc = NULL;
			continue;
		}
		line0 += adv;
		start = cut;
		want = chunk ? chunk : 1;
		cmark_node_free(doc);
		doc = NULL;
	}
	err = 0;
done:
	if (doc)
		cmark_node_free(doc);
	return err;
}

/*
 * Pieces this long keep cmark's tree of a hostile file small (see above).
 * The first piece is as long as the others. An 8 KB one finds a report
 * block near the top of its file 5 M instructions sooner (for 10,000
 * items), but then no allocation of cmark's ever passes glibc's mmap
 * threshold, the threshold never rises, and the heap is trimmed and
 * faulted back between pieces: 64 MiB of emphasis-heavy prose spent 8 s
 * in the kernel instead of 4.
 */
#define EXTRACT_CHUNK (128 * 1024)

int pmbot_extract_blocks_chunked(pmbot_extract_list *out, const char *markdown,
	size_t len, size_t chunk, int borrow)
{
	return extract(out, markdown, len, chunk, borrow);
}

int pmbot_extract_blocks(pmbot_extract_list *out, const char *markdown, size_t len)
{
	return extract(out, markdown, len, EXTRACT_CHUNK, 0);
}

int pmbot_extract_blocks_borrowing(pmbot_extract_list *out, const char *markdown, size_t len)
{
	return extract(out, markdown, len, EXTRACT_CHUNK, 1);
}

void pmbot_extract_block_free(pmbot_block *block)
{
	if (!block)
		return;
	free(block->text);
	free(block->info);
	memset(block, 0, sizeof(*block));
}

void pmbot_extract_list_free(pmbot_extract_list *list)
{
	size_t i;

	for (i = 0; i < list->count; i++)
		pmbot_extract_block_free(&list->items[i].block);
	free(list->items);
	memset(list, 0, sizeof(*list));
}
