#include "extract.h"

#include <cmark-gfm.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "pmbot/buf.h"
#include "pmbot/text.h"
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

/* parse() of the `glen` bytes at `given`, then the `len` bytes at `m`, through `*buf`. */
static cmark_node *parse_after(char **buf, size_t *cap, const char *given, size_t glen,
	const char *m, size_t len)
{
	if (*cap < glen + len) {
		char *p = realloc(*buf, glen + len);

		if (!p)
			return NULL;
		*buf = p;
		*cap = glen + len;
	}
	memcpy(*buf, given, glen);
	if (len)
		memcpy(*buf + glen, m, len);
	return parse(*buf, glen + len);
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
 * The link label opening at m[at] ('['), as cmark's link_label() reads
 * it: it ends at the first ']' not escaped, and fails at a '[' not
 * escaped or past 1,000 bytes; a definition's label is followed by ':'.
 * -1 when it fails whatever text follows m[at, stop), 1 when it ends
 * there followed by ':', 0 when that is not known. Blanks, line ends and
 * '>' (a quote's marker) are not counted: the count stays below cmark's.
 */
static int label_state(const char *m, size_t at, size_t stop)
{
	size_t i, counted = 0;

	for (i = at + 1; i < stop; i++) {
		if (m[i] == '[')
			return -1;
		if (m[i] == ']')
			return i + 1 >= stop ? 0 : m[i + 1] == ':' ? 1 : -1;
		if (m[i] == '\\' && i + 1 < stop && pmbot_text_is_punct(m[i + 1]))
			i++;
		if (m[i] != ' ' && m[i] != '\t' && m[i] != '\n' && m[i] != '\r' && m[i] != '>' &&
		    ++counted > 1000)
			return -1;
	}
	return 0;
}

/*
 * Could paragraph `para` of the piece at `start` be link reference
 * definitions only? Then a "===" or "---" under it is no heading's
 * underline but more text, and so are the lines after it: no other first
 * line stands in for it. Only a paragraph opening with '[' can be, and
 * only while its lines leave that a label (label_state()): cmark reads
 * definitions from a paragraph's start only. A line a piece is given
 * first (`synth`, inner_cut()) opens none.
 */
static int may_be_definitions(const char *m, size_t len, size_t start, cmark_node *para,
	int synth)
{
	int first = cmark_node_get_start_line(para) - synth;
	size_t at;

	if (first < 1)
		return 0;
	at = line_offset(m, len, start, first) + (size_t)cmark_node_get_start_column(para) - 1;
	return at >= len || (m[at] == '[' &&
		label_state(m, at, line_offset(m, len, at,
			cmark_node_get_end_line(para) - synth - first + 2)) >= 0);
}

/* Lines of a paragraph that opens with '[' read to see where its definitions end. */
#define DEFINITION_LINES 64

/*
 * The paragraph starting on line `line` of `doc`, a parse of text that
 * ends in it: the last block, down through quotes, lists and items.
 */
static cmark_node *last_paragraph(cmark_node *doc, int line)
{
	cmark_node *node = doc;

	for (;;) {
		if (!(node = cmark_node_last_child(node)))
			return NULL;
		switch (cmark_node_get_type(node)) {
		case CMARK_NODE_PARAGRAPH:
			return cmark_node_get_start_line(node) == line ? node : NULL;
		case CMARK_NODE_BLOCK_QUOTE:
		case CMARK_NODE_LIST:
		case CMARK_NODE_ITEM:
			break;
		default:
			return NULL;
		}
	}
}

/*
 * What is left after its link definitions of the paragraph starting on
 * line `line` of the `n` bytes at `p`, parsed alone: the first character
 * of its first inline's source ('*' for emphasis, '`' for code...), or 0
 * when there is no such paragraph or it is not known. *lines gets how
 * many lines it keeps: one more than its line breaks, 0 without it. A
 * line end in a code span or in inline HTML is no break: the count may
 * fall short, never over.
 */
static char left_after_definitions(const char *p, size_t n, int line, int *lines)
{
	cmark_node *doc = parse(p, n), *para, *in;
	cmark_iter *it;
	cmark_event_type ev;
	cmark_node_type t;
	const char *text;
	char c = 0;

	*lines = 0;
	if (!doc)
		return 0;
	para = last_paragraph(doc, line);
	in = para ? cmark_node_first_child(para) : NULL;
	if (in) {
		switch (cmark_node_get_type(in)) {
		case CMARK_NODE_TEXT:
			text = cmark_node_get_literal(in);
			c = text ? *text : 0;
			break;
		case CMARK_NODE_EMPH:
		case CMARK_NODE_STRONG:
			c = '*';
			break;
		case CMARK_NODE_CODE:
			c = '`';
			break;
		case CMARK_NODE_HTML_INLINE:
			c = '<';
			break;
		case CMARK_NODE_IMAGE:
			c = '!';
			break;
		default:
			break;
		}
		if ((it = cmark_iter_new(para))) {
			*lines = 1;
			while ((ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
				t = cmark_node_get_type(cmark_iter_get_node(it));
				*lines += ev == CMARK_EVENT_ENTER &&
					  (t == CMARK_NODE_SOFTBREAK || t == CMARK_NODE_LINEBREAK);
			}
			cmark_iter_free(it);
		}
	}
	cmark_node_free(doc);
	return c;
}

/* left_after_definitions() of `b` with a line holding `closer` after it; `b` as it was after. */
static char left_with_line(pmbot_buf *b, char closer, int line, int *lines)
{
	size_t len = b->len;
	char c = 0;

	*lines = 0;
	if ((len && (b->buf[len - 1] == '\n' || b->buf[len - 1] == '\r') ?
	     0 : pmbot_buf_putc(b, '\n')) == 0 && pmbot_buf_putc(b, closer) == 0)
		c = left_after_definitions(b->buf, b->len, line, lines);
	pmbot_buf_truncate(b, len);
	return c;
}

/*
 * Does the first link definition of a paragraph fail whatever lines
 * follow its first `k`, text `b` (see definitions_end()), which kept all
 * `k` lines? Its label, opening at m[at], must end before m[to]
 * (label_state()). Then only its title can still go on to a later line:
 * the definition fails with each line that could close a title ('"',
 * '\'', ')') after them too, when the paragraph keeps every line each
 * time.
 */
static int first_definition_fails(const char *m, size_t at, size_t to, pmbot_buf *b, int line,
	int k)
{
	static const char closers[] = { '"', '\'', ')' };
	size_t i;
	int kept, fails = label_state(m, at, to) == 1;

	for (i = 0; fails && i < sizeof(closers); i++) {
		left_with_line(b, closers[i], line, &kept);
		fails = kept == k + 1;
	}
	return fails;
}

/*
 * A link title opened with `opener` ('"', '\'' or '(') and not closed,
 * read on over the line at `at` of `m` (up to `end`). cmark takes the
 * longest title: any closer ('"', '\'', ')') may end it, escaped or not,
 * up to the first not right after a '\' ('(' too for '('), past which it
 * cannot go; the definition then holds only where the rest of that line
 * is blank. *open becomes 0 at such a first closer; *fails is 1 while
 * the last closer so far (if any) has more text after it on its line:
 * then the title read up to here ends nowhere a definition holds, as if
 * it had only just opened.
 */
static void title_scan(const char *m, size_t end, size_t at, char opener, int *open, int *fails)
{
	char closer = opener == '(' ? ')' : opener;
	size_t i, j;

	for (i = at; *open && i < end && m[i] != '\n' && m[i] != '\r'; i++) {
		if (m[i] != closer && (opener != '(' || m[i] != '('))
			continue;
		if (m[i] == closer) {
			for (j = i + 1; j < end && (m[j] == ' ' || m[j] == '\t'); j++)
				;
			*fails = j < end && m[j] != '\n' && m[j] != '\r';
		}
		if (!i || m[i - 1] != '\\')
			*open = 0;
	}
}

/* The text of a given line that opens a definition whose title opens with `o`. */
#define OPEN_TITLE(o) ((o) == '"' ? "[x]: /x \"" : (o) == '\'' ? "[x]: /x '" : "[x]: /x (")

/*
 * The opener of the title left open at the end of the line at `p` (`n`
 * bytes to the end of the text; a paragraph's first line, from its
 * column), which opens a link definition: "[label]: destination", a
 * blank, then '"', '\'' or '(' and more text (title_scan() of it leaving
 * the title open, as if just opened). The opener may stand first on the
 * next line instead, after its blanks and quote markers (*lines: 2, else
 * 1): should that title fail, the definition holds without it, and the
 * text from that line on is left, never nothing, as it would be of a
 * definition whose title opened on its own line and failed. 0 when it is
 * not that, or not plainly: cmark must take the line(s) with a closer on
 * the next as a definition.
 */
static char open_title(const char *p, size_t n, int *lines)
{
	size_t i = 1, j, e, t;
	int open = 1, fails = 1;
	char o, closer[3] = { '\n', 0, '\n' };
	cmark_node *doc;
	pmbot_buf b = PMBOT_BUF_INIT;

	/* The line alone: a label may span lines, this one must not. */
	for (j = 0; j < n && p[j] != '\n' && p[j] != '\r'; j++)
		;
	t = j;
	if (!j || p[0] != '[' || label_state(p, 0, j) != 1)
		return 0;
	while (p[i] != ']')
		i += p[i] == '\\' && i + 1 < j && pmbot_text_is_punct(p[i + 1]) ? 2 : 1;
	for (i += 2; i < j && (p[i] == ' ' || p[i] == '\t'); i++)
		;
	for (e = i; e < j && p[e] != ' ' && p[e] != '\t'; e++)
		;
	if (e == i || p[i] == '<')
		return 0;
	for (; e < j && (p[e] == ' ' || p[e] == '\t'); e++)
		;
	*lines = 1;
	if (e == j) {
		/* Nothing after the destination: the next line's first text. */
		e = j + (j + 1 < n && p[j] == '\r' && p[j + 1] == '\n' ? 2 : 1);
		while (e < n && (p[e] == ' ' || p[e] == '\t' || p[e] == '>'))
			e++;
		for (t = e; t < n && p[t] != '\n' && p[t] != '\r'; t++)
			;
		*lines = 2;
	}
	if (e >= t || (p[e] != '"' && p[e] != '\'' && p[e] != '('))
		return 0;
	o = p[e];
	title_scan(p, t, e + 1, o, &open, &fails);
	closer[1] = o == '(' ? ')' : o;
	if (!open || !fails || pmbot_buf_put(&b, p, j) < 0 ||
	    (*lines == 2 && (pmbot_buf_putc(&b, '\n') < 0 || pmbot_buf_put(&b, p + e, t - e) < 0)) ||
	    pmbot_buf_put(&b, closer, sizeof(closer)) < 0) {
		pmbot_buf_free(&b);
		return 0;
	}
	doc = parse(b.buf, b.len);
	pmbot_buf_free(&b);
	if (!doc)
		return 0;
	if (cmark_node_first_child(doc))
		o = 0;
	cmark_node_free(doc);
	return o;
}

/* The opener of a given line's open title (OPEN_TITLE()) at `p` (`n` bytes), else 0. */
static char given_open_title(const char *p, size_t n)
{
	static const char o[] = { '"', '\'', '(' };
	size_t i, len;

	for (i = 0; i < sizeof(o); i++) {
		len = strlen(OPEN_TITLE(o[i]));
		if (n > len && !memcmp(p, OPEN_TITLE(o[i]), len) && p[len] == '\n')
			return o[i];
	}
	return 0;
}

/*
 * Of paragraph `para`, opening with '[' on text line `first` of the piece
 * at `start` (given `glen` bytes of `synth` lines at `g` first): the line
 * from which it is certainly not link definitions only, whatever lines
 * follow; 0 when that is not known. Its first DEFINITION_LINES lines
 * (fewer than `lines`) are parsed: alone at the top level (`top`), else
 * after the lines before them in the piece, which open its containers.
 * Where what is left after the definitions opens with a character no
 * definition starts with ('['), no later line makes it definitions. Nor
 * where it opens with one a title starts with ('"', '\'', '(') but stays
 * when a line closing that title is put after it: then it is no title of
 * the definition before it, which only a line after could have closed.
 * Where it opens with '[' and holds no definition, whatever follows
 * (first_definition_fails()), it is none from its second line on. A
 * paragraph opened on a given line (first < 1: a definition whose title
 * is open, open_title_cut()) is read with those lines, then the text's.
 */
static int definitions_end(const char *m, size_t end, size_t start, cmark_node *para,
	int first, int lines, const char *g, size_t glen, int synth, int top)
{
	/* Its lines given (an open title, given_open_title()): then k of the text. */
	int given = first < 1 ? 1 - first : 0, alone = top && !given, known = 0, kept;
	int k = lines - 1 - given < DEFINITION_LINES ? lines - 1 - given : DEFINITION_LINES;
	int line = alone ? 1 : first + synth;
	size_t from = given ? start : line_offset(m, end, start, first), to, at;
	pmbot_buf b = PMBOT_BUF_INIT;
	char c;

	if (k < 1)
		return 0;
	to = line_offset(m, end, from, k + 1);
	if ((!alone && pmbot_buf_put(&b, g, glen) < 0) ||
	    pmbot_buf_put(&b, m + (alone ? from : start), to - (alone ? from : start)) < 0)
		goto done;
	c = left_after_definitions(b.buf, b.len, line, &kept);
	known = c && c != '[' && !is_space(c);
	if (known && (c == '"' || c == '\'' || c == '(')) {
		known = left_with_line(&b, c == '(' ? ')' : c, line, &kept) == c;
	} else if (!known && c == '[' && kept == k + given) {
		at = (size_t)cmark_node_get_start_column(para) - 1;
		if (given ? first_definition_fails(g, line_offset(g, glen, 0, line) + at, glen, &b,
				    line, k + given) :
			    first_definition_fails(m, from + at, to, &b, line, k))
			known = -1;
	}
done:
	pmbot_buf_free(&b);
	return known < 0 ? (first < 1 ? 1 : first + 1) : known ? first + given + k : 0;
}

/* Do the `n` bytes at `p`, parsed alone, hold link definitions and blank lines only? */
static int definitions_only(const char *p, size_t n)
{
	cmark_node *doc = parse(p, n);
	int only = doc && !cmark_node_first_child(doc);

	if (doc)
		cmark_node_free(doc);
	return only;
}

/*
 * Link definitions in block quotes and list items: `path` (`n` of them,
 * outermost first, as inner_cut() walks them; none: the top level of a
 * piece given lines, where a title left open closed) of the piece at
 * `start`, given `glen` bytes of lines `g` (`synth` lines) first; the
 * definitions from text line `from_line` on, in the deepest, after its
 * block starting on line `prev_line` (0: none); `quotes` of the
 * containers are block quotes; `buf` for scratch.
 */
struct contained {
	cmark_node *const *path;
	size_t n, start, glen, quotes;
	const char *g;
	int synth, from_line, prev_line;
	pmbot_buf *buf;
};

/* Past the blanks and quote markers that open the line at `at`. */
static size_t after_markers(const char *m, size_t end, size_t at)
{
	while (at < end && (m[at] == ' ' || m[at] == '>'))
		at++;
	return at;
}

/*
 * Is the text line `line` at `at` (after the lines of the piece `in`
 * tells) one where every container of `in->path` goes on, in which the
 * lines before it hold link definitions and blank lines only? That is
 * asked of the piece up to it with a fence opening after its markers:
 * the fence interrupts a paragraph (its definitions end as before the
 * line) and is never lazy, so it is the deepest container's last block,
 * right after the block before the definitions, each container opened
 * where it was, just when the line goes on in each, not lazily, after
 * definitions only. A fence four columns in is code, not a fence: no
 * answer; nor when out of memory (no cut: the whole parse tells).
 */
static int contained_holds(const char *m, size_t end, size_t at, int line,
	const struct contained *in)
{
	cmark_node *doc, *node, *child, *prev;
	size_t k;
	int ok, fence_len, fence_off;
	char fence_char;

	pmbot_buf_clear(in->buf);
	if (pmbot_buf_put(in->buf, in->g, in->glen) < 0 ||
	    pmbot_buf_put(in->buf, m + in->start, at - in->start) < 0 ||
	    pmbot_buf_put(in->buf, m + at, after_markers(m, end, at) - at) < 0 ||
	    pmbot_buf_put(in->buf, "```\n", 4) < 0 ||
	    !(doc = parse(in->buf->buf, in->buf->len)))
		return 0;
	node = doc;
	for (k = 0, ok = 1; ok && k < in->n; k++) {
		node = cmark_node_last_child(node);
		if (node && cmark_node_get_type(in->path[k]) == CMARK_NODE_ITEM)
			node = cmark_node_get_type(node) == CMARK_NODE_LIST ?
			       cmark_node_last_child(node) : NULL;
		ok = node && cmark_node_get_type(node) == cmark_node_get_type(in->path[k]) &&
		     cmark_node_get_start_line(node) == cmark_node_get_start_line(in->path[k]) &&
		     cmark_node_get_start_column(node) == cmark_node_get_start_column(in->path[k]);
	}
	child = ok ? cmark_node_last_child(node) : NULL;
	prev = child ? cmark_node_previous(child) : NULL;
	ok = child && (prev ? cmark_node_get_start_line(prev) : 0) == in->prev_line &&
	     cmark_node_get_type(child) == CMARK_NODE_CODE_BLOCK &&
	     cmark_node_get_fenced(child, &fence_len, &fence_off, &fence_char) &&
	     cmark_node_get_start_line(child) == in->synth + line;
	cmark_node_free(doc);
	return ok;
}

/*
 * Does the line at `at` open with '[' or a line plain_line() takes: in
 * containers (`in`), after their markers and blanks, '>' as many as they
 * have quotes (fewer: lazy, which contained_holds() would not take)?
 */
static int definition_line(const char *m, size_t end, size_t at, const struct contained *in)
{
	size_t quotes = 0;

	if (in) {
		for (; at < end && (m[at] == ' ' || m[at] == '>'); at++)
			quotes += m[at] == '>';
		if (quotes != in->quotes)
			return 0;
	}
	return at < end && (m[at] == '[' || plain_line(m + at, end - at));
}

/*
 * Of the text at `from` (a top-level paragraph's first line, or a piece
 * whose paragraphs cmark dropped all; or in containers, `in`) up to
 * `end`: the offset of the `k`th line after the first (from 1) that
 * definition_line() takes, or `end` when there are fewer. *line gets its
 * line number.
 */
static size_t definitions_candidate(const char *m, size_t end, size_t from,
	const struct contained *in, size_t k, int *line)
{
	size_t at = from;
	int l = 1;

	while ((at = next_line(m, end, at)) < end) {
		l++;
		if (definition_line(m, end, at, in) && !--k) {
			*line = l;
			return at;
		}
	}
	return end;
}

/* Do the definitions at `from` hold up to their `k`th candidate line (definitions_cut())? */
static int definitions_hold(const char *m, size_t end, size_t from, const struct contained *in,
	size_t k)
{
	int l = 0;
	size_t at = definitions_candidate(m, end, from, in, k, &l);

	return in ? at < end && contained_holds(m, end, at, in->from_line + l - 1, in) :
		    definitions_only(m + from, at - from);
}

/*
 * Where a run of link definitions at `from` (see definitions_candidate())
 * may be cut: before the last line L of those such that the lines before
 * it, parsed alone, are definitions only (definitions_only()). Each of
 * those definitions ended within them, as the end of the text stood in
 * for L; and L continues none: all that can follow a definition complete
 * without it is its title, which opens with a quote or a parenthesis. So
 * a parse from `from` reads L as the start of a paragraph after
 * definitions, as a fresh parse at L does; and L interrupts nothing and
 * opens no other block there. 0 when no line is known; *line gets L's
 * line number, counted from `from`'s.
 *
 * In block quotes and list items (`in`), the piece up to L is asked
 * instead (contained_holds()), and a fresh parse at L is given lines
 * that open the same containers, a definition and a blank line
 * (contained_cut()).
 *
 * A run of definitions with no blank line (`[a0]: /u0` ... for 8 MiB)
 * was parsed whole, about 9 bytes a byte. The last line is tried first
 * (a run of definitions); else the first, and then the last that holds
 * is searched for by halves. That finds it when definitions that hold up
 * to a line hold up to the lines before it, as they do unless a label
 * spans lines; a line that does not hold is never cut at, found or not.
 */
static size_t definitions_cut(const char *m, size_t end, size_t from,
	const struct contained *in, int *line)
{
	size_t k = 0, lo = 0, hi, mid, at = from;

	while ((at = next_line(m, end, at)) < end)
		k += definition_line(m, end, at, in);
	/* Line `lo` holds (0: none yet); line `hi` does not (k + 1: none). */
	hi = k + 1;
	if (k && definitions_hold(m, end, from, in, k)) {
		lo = k;
	} else if (k > 1 && definitions_hold(m, end, from, in, 1)) {
		lo = 1;
		hi = k;
	}
	while (lo && hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (definitions_hold(m, end, from, in, mid))
			lo = mid;
		else
			hi = mid;
	}
	return lo ? definitions_candidate(m, end, from, in, lo, line) : 0;
}

/*
 * Offset of the last line after the first of top-level paragraph `para`
 * of the piece at `start` that plain_line() takes, from text line `from`
 * on (where it is surely no link definitions only: inner_cut()), or 0
 * when none does. `synth` is the number of lines the piece was given
 * before `start` (inner_cut()): cmark's line numbers are that many ahead
 * of the text's. *line gets the text's line number.
 */
static size_t paragraph_cut(const char *m, size_t len, size_t start, cmark_node *para,
	int synth, int from, int *line)
{
	int first = cmark_node_get_start_line(para) - synth, l;
	int last = cmark_node_get_end_line(para) - synth;
	size_t at, cut = 0;

	if (first < 1)
		first = 1;
	at = line_offset(m, len, start, first);
	for (l = first + 1; l <= last; l++) {
		at = next_line(m, len, at);
		if (at >= len)
			break;
		if (l >= from && plain_line(m + at, len - at)) {
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
 * A cut inside the last top-level block of a piece: at text line `line`
 * (offset `at`), the blocks from `stop` on parsed again. With `given` the
 * next piece is given lines first (its line numbers that many ahead): 1,
 * the `lines` lines inner_cut() wrote; 2, the lines this piece was given.
 */
struct cut {
	size_t at;
	int line, given, lines;
	cmark_node *stop;
};

/* The column after `n` bytes at `p`, tabs stopping at every fourth, as cmark counts. */
static size_t columns(const char *p, size_t n, size_t col)
{
	while (n--)
		col = *p++ == '\t' ? (col + 4) & ~(size_t)3 : col + 1;
	return col;
}

/*
 * List item line `p` (`n` bytes, its marker at byte `at`) up to the item's
 * content column: *len of its bytes (tabs and all: the same bytes are the
 * same columns), then *pad spaces (one, the column after the marker's,
 * when the rest is blank or five columns in, indented code). 0 when it is
 * not such a line.
 */
static int item_prefix(const char *p, size_t n, size_t at, size_t *len, size_t *pad)
{
	size_t i = at, j, c0, c;

	if (at >= n)
		return 0;
	if (p[i] == '-' || p[i] == '+' || p[i] == '*') {
		i++;
	} else {
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
		if (i == at || i >= n || (p[i] != '.' && p[i] != ')'))
			return 0;
		i++;
	}
	for (j = i; j < n && (p[j] == ' ' || p[j] == '\t'); j++)
		;
	c0 = columns(p, i, 0);
	c = columns(p + i, j - i, c0);
	if (j == n || p[j] == '\n' || p[j] == '\r' || c - c0 >= 5) {
		*len = i;
		*pad = 1;
	} else {
		*len = j;
		*pad = 0;
	}
	return j > i || *pad;
}

/* Line `line` (1-based) of the piece: of the given lines `g` (`glen` bytes) first, then the text. */
static const char *piece_line(const char *m, size_t end, size_t start, const char *g, size_t glen,
	int synth, int line, size_t *n)
{
	const char *p;

	if (line > synth) {
		p = m + line_offset(m, end, start, line - synth);
		*n = end - (size_t)(p - m);
		return p;
	}
	p = g + line_offset(g, glen, 0, line);
	*n = glen - (size_t)(p - g);
	return p;
}

/*
 * The deepest containers a path may hold for a cut after given lines
 * (more: no cut). 8 MiB of lines 33 quotes deep peaked at 574 MB with
 * 32; past 1,000, a line holds as many bytes of markers, which cost
 * cmark little: 8 MiB of them, 40 MB.
 */
#define MAX_GIVEN_DEPTH 1000

/*
 * Lines that open `path` (`n` block quotes and list items, outermost
 * first) with the columns they have in the piece, and a paragraph in the
 * last, into `out`: for each line on which some of them opened, its bytes
 * up to the content of the deepest of those, then "x", on the last line
 * `last` (at the top level, that alone). A paragraph's own indentation,
 * 0 to 3 spaces, changes no line after it. An ordered item's number
 * becomes 0..01 of the same width where a paragraph is open above it
 * (only 1 interrupts one). *lines gets their count. 0, 1 when a line is
 * not what cmark said (no cut), or -1 when out of memory.
 */
static int given_lines(pmbot_buf *out, int *lines, cmark_node *const *path, size_t n,
	const char *m, size_t end, size_t start, const char *g, size_t glen, int synth,
	const char *last)
{
	size_t i = 0, j, k, len = 0, pad, from, at;
	const char *p = "";
	int s;

	pmbot_buf_clear(out);
	*lines = 0;
	do {
		pad = 0;
		if (n) {
			s = cmark_node_get_start_line(path[i]);
			for (j = i + 1; j < n && cmark_node_get_start_line(path[j]) == s; j++)
				;
			p = piece_line(m, end, start, g, glen, synth, s, &len);
			at = (size_t)cmark_node_get_start_column(path[j - 1]) - 1;
			if (cmark_node_get_type(path[j - 1]) == CMARK_NODE_ITEM) {
				if (!item_prefix(p, len, at, &len, &pad))
					return 1;
			} else if (at < len && p[at] == '>') {
				len = at + 1;
			} else {
				return 1;
			}
		} else {
			j = 0;
		}
		from = out->len;
		if (pmbot_buf_put(out, p, len) < 0)
			return -1;
		/* Under the "x" of the line before, an ordered item opens only as 1. */
		for (k = i; *lines && k < j && k < n; k++) {
			if (cmark_node_get_type(path[k]) != CMARK_NODE_ITEM ||
			    cmark_node_get_list_type(cmark_node_parent(path[k])) != CMARK_ORDERED_LIST)
				continue;
			at = from + (size_t)cmark_node_get_start_column(path[k]) - 1;
			while (at < out->len && out->buf[at] >= '0' && out->buf[at] <= '9' &&
			       out->buf[at + 1] >= '0' && out->buf[at + 1] <= '9')
				out->buf[at++] = '0';
			if (at < out->len)
				out->buf[at] = '1';
		}
		while (pad--)
			if (pmbot_buf_putc(out, ' ') < 0)
				return -1;
		if (pmbot_buf_puts(out, j < n ? "x" : last) < 0 || pmbot_buf_putc(out, '\n') < 0)
			return -1;
		++*lines;
	} while ((i = j) < n);
	return 0;
}

/* given_lines() into `next` for cut `c`: 1 (c->given set), 0 when no cut, -1 when out of memory. */
static int cut_given(struct cut *c, pmbot_buf *next, cmark_node *const *path, size_t n,
	const char *m, size_t end, size_t start, const char *g, size_t glen, int synth,
	const char *last)
{
	switch (given_lines(next, &c->lines, path, n, m, end, start, g, glen, synth, last)) {
	case 0:
		c->given = 1;
		return 1;
	case 1:
		return 0;
	default:
		return -1;
	}
}

/*
 * A cut in link definitions in the deepest of containers `path` (`n`),
 * after its block on line `prev` (0: none), from text line `from` of the
 * piece at `start` on (definitions_cut() asking contained_holds()). The
 * next piece is given lines that open the same containers at the same
 * columns (given_lines()), the last holding a definition, which cmark
 * drops as it dropped those before, then a blank line in the deepest. The
 * line cut at, opening with '[' or a letter less than four columns in,
 * then opens a paragraph there, as in one parse it went on in a paragraph
 * of complete definitions: either way the text left from it on is the
 * same, in the same containers. Returns as inner_cut() does.
 */
static int contained_cut(struct cut *c, pmbot_buf *next, const char *m, size_t end, size_t start,
	cmark_node *const *path, size_t n, int prev, int from, int synth, const char *g,
	size_t glen)
{
	static const char definition[] = "[x]: /x";
	pmbot_buf scratch = PMBOT_BUF_INIT;
	struct contained in;
	size_t ls, q, i, d;
	int l = 0, x;

	memset(c, 0, sizeof(*c));
	if (from < 1)
		from = 1;
	in.path = path;
	in.n = n;
	in.start = start;
	in.glen = glen;
	in.g = g;
	in.synth = synth;
	in.from_line = from;
	in.prev_line = prev;
	in.buf = &scratch;
	for (in.quotes = 0, i = 0; i < n; i++)
		in.quotes += cmark_node_get_type(path[i]) == CMARK_NODE_BLOCK_QUOTE;
	c->at = definitions_cut(m, end, line_offset(m, end, start, from), &in, &l);
	pmbot_buf_free(&scratch);
	if (!c->at)
		return 0;
	c->line = from + l - 1;
	/* Every block of the piece is final: the given lines open none. */
	c->stop = NULL;
	/* At the top level (after a given title closed) no container is to be opened again. */
	if (!n)
		return 1;
	if ((x = cut_given(c, next, path, n, m, end, start, g, glen, synth, definition)) != 1)
		return x;
	/*
	 * Then a blank line in the deepest: the last line's bytes before the
	 * definition up to its last '>', other markers as spaces. A quote
	 * needs its '>' to go on; an item goes on over a blank line.
	 */
	d = next->len - sizeof(definition);
	for (ls = d; ls && next->buf[ls - 1] != '\n'; ls--)
		;
	for (i = q = ls; i < d; i++)
		if (next->buf[i] == '>')
			q = i + 1;
	for (i = ls; i < q; i++)
		if (pmbot_buf_putc(next, next->buf[i] == '>' || next->buf[i] == '\t' ?
			    next->buf[i] : ' ') < 0)
			return -1;
	if (pmbot_buf_putc(next, '\n') < 0)
		return -1;
	c->lines++;
	return 1;
}

/*
 * A cut in paragraph `para` (in containers `path`, `n` of them) whose
 * first link definition has a title left open (`opener`: on a given line,
 * given_open_title(); else 0, its first line then asked, open_title()):
 * cmark reads on to where the title ends, which may be the whole file. It
 * is cut before the last line L to which the title stays open and ends
 * nowhere a definition holds (title_scan()), and the next piece is given
 * lines that open the same containers and a definition whose title is
 * just open (OPEN_TITLE()). From L on, a parse from the paragraph's start
 * and one from the given line end that title at the same closer, or at
 * none, and with the same text after it: what follows the definition is
 * the same, and L goes on in the paragraph either way. With `whole`, only
 * where the title stays open up to the paragraph's last line: then no
 * line before it ends definitions (contained_cut() would parse the piece
 * in vain). Returns as inner_cut() does.
 */
static int open_title_cut(struct cut *c, pmbot_buf *next, const char *m, size_t end,
	size_t start, cmark_node *para, char opener, int whole, cmark_node *const *path, size_t n,
	int synth, const char *g, size_t glen)
{
	int first = cmark_node_get_start_line(para) - synth, last = cmark_node_get_end_line(para) - synth;
	int l = first < 1 ? 1 : first + 1, open = 1, fails = 1, cut = 0, k;
	size_t at;

	if (!opener) {
		at = line_offset(m, end, start, first) + (size_t)cmark_node_get_start_column(para) - 1;
		if (first < 1 || at >= end || !(opener = open_title(m + at, end - at, &k)))
			return 0;
		l = first + k;
	}
	/* Line l may be cut at while the lines before leave the title open, ending nowhere. */
	for (at = line_offset(m, end, start, l); open && l <= last && at < end; l++) {
		if (l > 1 && fails)
			cut = l;
		title_scan(m, end, at, opener, &open, &fails);
		at = next_line(m, end, at);
	}
	if (!cut || (whole && cut != last))
		return 0;
	c->at = line_offset(m, end, start, cut);
	c->line = cut;
	c->stop = NULL;
	return cut_given(c, next, path, n, m, end, start, g, glen, synth, OPEN_TITLE(opener));
}

/*
 * Where the piece at `start` may be cut inside its last top-level block
 * `node` (0: nowhere), walking down its last blocks:
 *
 * - A list: at its last item's line. That line closed what the item
 *   before it held, and opens an item in a fresh parse too: a new list
 *   then, which no fenced block tells apart. An item never starts on a
 *   lazy line, so the line has the markers of the quotes around it.
 * - A block quote: at its last block's first line (not lazy either).
 * - Both only with no list item around them: an item's lines are indented
 *   by its content column, which a fresh parse would read as top-level
 *   indentation.
 * - A paragraph: at the top level, at a plain line (paragraph_cut()).
 *   Else at its last line, after given lines that open the same quotes,
 *   items and a paragraph at the same columns (given_lines()), so that the
 *   line continues a paragraph as it did; never where it may still be
 *   link definitions only (may_be_definitions(), definitions_end()). Such
 *   a paragraph is cut in the definitions at its start instead
 *   (definitions_cut(); in quotes and items, contained_cut()), or in the
 *   title its first definition leaves open (open_title_cut()).
 * - A quote or an item with lines after its last block (or with none):
 *   those are link definitions, which cmark dropped, or blank lines; they
 *   are cut among themselves (contained_cut()), else the walk goes on.
 *
 * `synth`: lines given before `start` (`g`, `glen` bytes), as for
 * paragraph_cut(). New given lines go to `next`. 1 with a cut in *c, 0
 * without, -1 when out of memory.
 */
static int inner_cut(struct cut *c, pmbot_buf *next, const char *m, size_t end, size_t start,
	cmark_node *node, int synth, const char *g, size_t glen)
{
	cmark_node *child, *path[MAX_GIVEN_DEPTH];
	size_t n = 0, len, at;
	int in_item = 0, top = 1, l, first, from, defs, x;
	const char *p;
	char opener = 0;

	memset(c, 0, sizeof(*c));
	for (;;) {
		switch (cmark_node_get_type(node)) {
		case CMARK_NODE_LIST:
		case CMARK_NODE_BLOCK_QUOTE:
		case CMARK_NODE_ITEM:
			child = cmark_node_last_child(node);
			l = child ? cmark_node_get_start_line(child) - synth : 0;
			if (cmark_node_get_type(node) != CMARK_NODE_ITEM && !in_item && l > 1 &&
			    (c->at = line_offset(m, end, start, l)) < end) {
				c->line = l;
				c->stop = child;
				return 1;
			}
			if (cmark_node_get_type(node) == CMARK_NODE_LIST)
				break;
			if (n == MAX_GIVEN_DEPTH)
				return 0;
			path[n++] = node;
			in_item |= cmark_node_get_type(node) == CMARK_NODE_ITEM;
			/* Lines after its last block: link definitions, which cmark dropped? */
			if (!child || cmark_node_get_end_line(child) < cmark_node_get_end_line(node)) {
				x = contained_cut(c, next, m, end, start, path, n,
					child ? cmark_node_get_start_line(child) : 0,
					(child ? cmark_node_get_end_line(child) :
						 cmark_node_get_start_line(node)) - synth,
					synth, g, glen);
				if (x || !child)
					return x;
			}
			break;
		case CMARK_NODE_PARAGRAPH:
			c->stop = node;
			first = cmark_node_get_start_line(node);
			l = cmark_node_get_end_line(node) - synth;
			/* Opened on a given line: a definition with its title open? */
			if (first <= synth) {
				p = piece_line(m, end, start, g, glen, synth, first, &len);
				at = (size_t)cmark_node_get_start_column(node) - 1;
				opener = at < len ? given_open_title(p + at, len - at) : 0;
			}
			/* The text line from which it is surely no definitions; 0: unknown. */
			defs = opener || may_be_definitions(m, end, start, node, synth);
			from = !defs ? first - synth + 1 :
			       definitions_end(m, end, start, node, first - synth,
				       l - first + synth + 1, g, glen, synth, top);
			if (top && (!defs || from) &&
			    (c->at = paragraph_cut(m, end, start, node, synth, from, &c->line)) > start)
				return 1;
			if (l <= 1 || cmark_node_get_end_line(node) <= first ||
			    (c->at = line_offset(m, end, start, l)) >= end)
				return 0;
			if (defs && !from) {
				/* Still cut in an open title, or in the definitions at its start. */
				if ((x = open_title_cut(c, next, m, end, start, node, opener, 1, path,
					     n, synth, g, glen)) != 0)
					return x;
				if (!top || opener) {
					child = cmark_node_previous(node);
					x = contained_cut(c, next, m, end, start, path, n,
						child ? cmark_node_get_start_line(child) : 0,
						first - synth, synth, g, glen);
				} else if ((c->at = definitions_cut(m, end,
						    line_offset(m, end, start, first - synth), NULL,
						    &l))) {
					c->line = first - synth + l - 1;
					return 1;
				}
				return x ? x : open_title_cut(c, next, m, end, start, node, opener, 0,
					path, n, synth, g, glen);
			}
			c->line = l;
			/* Opened on a given line, as all around it: the same again. */
			if (first <= synth && !opener) {
				c->given = 2;
				return 1;
			}
			return cut_given(c, next, path, n, m, end, start, g, glen, synth, "x");
		default:
			return 0;
		}
		node = child;
		top = 0;
	}
}

/*
 * cmark keeps every block and inline node of what it parsed until it is
 * freed: about 150 bytes per byte of emphasis-heavy prose. So a long file
 * is parsed in pieces of about `chunk` bytes, cut only where the result
 * cannot change: at the first line of a top-level block. Everything open
 * before that line was closed by it (the block is a child of the
 * document), so the blocks before it are final, and the line starts a
 * fresh parse in the state a fresh parser has. The last top-level block
 * of a piece is parsed again at the start of the next. cmark drops a
 * U+FEFF at the start of a document only: a piece after the first that
 * starts with one is given a blank line first, which opens nothing.
 *
 * A piece holding one top-level block is cut inside it where that is as
 * exact (inner_cut()): in a list, a block quote or a paragraph, also a
 * paragraph in quotes and list items, the next piece then given lines
 * first that open the same containers where a fresh parse would not. So
 * one list, quote or paragraph the size of the file (64 MiB of "- *a* *a*
 * ...": 8.7 GB in one piece) is read in pieces too. Link definitions,
 * which cmark drops from its tree, are cut among themselves
 * (definitions_cut()): a piece of them only, or after a heading or a
 * thematic break, or at the start of a paragraph, or in a quote or an
 * item after its last block (contained_cut()); and so is a title a
 * definition leaves open (open_title_cut()). Without a
 * cut (say, containers over 1,000 deep) a piece holding one block is parsed
 * again twice as long, except a fenced code block (the report itself),
 * whose end is its closing fence.
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

/* Is the last line of m[start, end) blank (spaces and tabs only), or is there none? */
static int ends_blank(const char *m, size_t start, size_t end)
{
	if (end > start && m[end - 1] == '\n')
		end--;
	if (end > start && m[end - 1] == '\r')
		end--;
	while (end > start && (m[end - 1] == ' ' || m[end - 1] == '\t'))
		end--;
	return end == start || m[end - 1] == '\n' || m[end - 1] == '\r';
}

/*
 * A heading or a thematic break at the top level: closed on its last
 * line, so the line after it starts afresh.
 */
static int ends_on_its_line(cmark_node *node)
{
	cmark_node_type t = cmark_node_get_type(node);

	return t == CMARK_NODE_HEADING || t == CMARK_NODE_THEMATIC_BREAK;
}

static int extract(pmbot_extract_list *out, const char *markdown, size_t len, size_t chunk,
	int borrow, size_t *largest)
{
	cmark_node *doc = NULL, *last;
	size_t start = 0, want = chunk ? chunk : 1, end, cut, whole = 0, close = 0, scap = 0;
	size_t fences = len ? last_fence(markdown, len) : 0;
	int line0 = 0, err = PMBOT_ERROR, x, adv, whole_lines = 0, synth = 0, next_gl;
	/* The `gl` lines the piece at `start` is given first (inner_cut()). */
	pmbot_buf given = PMBOT_BUF_INIT, next = PMBOT_BUF_INIT, swap;
	int gl = 0;
	char *sbuf = NULL;
	struct cut c;

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
		if (!gl && start && len - start >= 3 && !memcmp(markdown + start, "\xef\xbb\xbf", 3)) {
			pmbot_buf_clear(&given);
			if (pmbot_buf_putc(&given, '\n') < 0)
				goto done;
			gl = 1;
		}
		synth = gl;
		if (largest && (gl ? given.len : 0) + end - start > *largest)
			*largest = (gl ? given.len : 0) + end - start;
		/* An empty text may come as NULL: no offset on it. */
		doc = gl ? parse_after(&sbuf, &scap, given.buf, given.len, markdown + start, end - start) :
			parse(len ? markdown + start : markdown, end - start);
		if (!doc)
			goto done;
		last = cmark_node_last_child(doc);
		/* The line of the text the last top-level block starts on (<= 0: the given line). */
		x = last ? cmark_node_get_start_line(last) - synth : 0;
		next_gl = 0;
		if (end == len || whole || (!last && ends_blank(markdown, start, end))) {
			/*
			 * All final: the rest, a code block whole, or blank lines
			 * only. Not link definitions only (a paragraph cmark drops):
			 * unless a blank line ended them, the next line may go on.
			 */
			if (visit_until(out, doc, NULL, line0 - synth) < 0)
				goto done;
			if (end == len)
				break;
			adv = whole_lines;
			if (!whole)
				for (adv = 0, cut = start; cut < end; cut = next_line(markdown, len, cut))
					adv++;
			cut = end;
			whole = 0;
		} else if (x > 1 && (cut = line_offset(markdown, end, start, x)) < end) {
			if (visit_until(out, doc, last, line0 - synth) < 0)
				goto done;
			adv = x - 1;
			/* The report itself: parsed next, whole, not in pieces. */
			whole = fenced_end(last, markdown, len, cut, &whole_lines, &close);
		} else if (x == 1 && (whole = fenced_end(last, markdown, len, start, &whole_lines, &close))) {
			/* Nothing taken: the next round parses the block whole. */
			cmark_node_free(doc);
			doc = NULL;
			gl = 0;
			continue;
		} else if (last && (x = inner_cut(&c, &next, markdown, end, start, last, synth,
			given.buf, gl ? given.len : 0)) != 0) {
			if (x < 0 || visit_until(out, doc, c.stop, line0 - synth) < 0)
				goto done;
			adv = c.line - 1;
			cut = c.at;
			next_gl = c.given == 2 ? gl : c.lines;
			if (c.given == 1) {
				swap = given;
				given = next;
				next = swap;
			}
		} else if (!last && !gl && (cut = definitions_cut(markdown, end, start, NULL, &x)) != 0) {
			/* Link definitions only so far, which cmark dropped. */
			adv = x - 1;
		} else if (!last && gl && (x = contained_cut(&c, &next, markdown, end, start, NULL, 0,
						   0, 1, synth, given.buf, given.len)) != 0) {
			/* The same after given lines: a title left open closed here. */
			if (x < 0)
				goto done;
			adv = c.line - 1;
			cut = c.at;
		} else if (last && cmark_node_get_start_line(last) > synth && ends_on_its_line(last) &&
			   (cut = line_offset(markdown, end, start,
				   cmark_node_get_end_line(last) - synth + 1)) < end) {
			/* Nothing after it but what cmark dropped: maybe link definitions. */
			if (visit_until(out, doc, NULL, line0 - synth) < 0)
				goto done;
			adv = cmark_node_get_end_line(last) - synth;
		} else {
			want = want > len / 2 ? len : want * 2;
			cmark_node_free(doc);
			doc = NULL;
			continue;
		}
		line0 += adv;
		start = cut;
		gl = next_gl;
		want = chunk ? chunk : 1;
		cmark_node_free(doc);
		doc = NULL;
	}
	err = 0;
done:
	if (doc)
		cmark_node_free(doc);
	free(sbuf);
	pmbot_buf_free(&given);
	pmbot_buf_free(&next);
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
	return extract(out, markdown, len, chunk, borrow, NULL);
}

int pmbot_extract__blocks_measured(pmbot_extract_list *out, const char *markdown, size_t len,
	size_t chunk, size_t *largest)
{
	*largest = 0;
	return extract(out, markdown, len, chunk, 0, largest);
}

int pmbot_extract_blocks(pmbot_extract_list *out, const char *markdown, size_t len)
{
	return extract(out, markdown, len, EXTRACT_CHUNK, 0, NULL);
}

int pmbot_extract_blocks_borrowing(pmbot_extract_list *out, const char *markdown, size_t len)
{
	return extract(out, markdown, len, EXTRACT_CHUNK, 1, NULL);
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
