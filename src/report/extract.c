#include "extract.h"

#include <cmark-gfm.h>
#include <stdlib.h>
#include <string.h>
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

static pmbot_format content_format(const char *text)
{
	while (*text && is_space(*text))
		text++;
	return *text == '{' || *text == '[' ? PMBOT_FORMAT_JSON : PMBOT_FORMAT_YAML;
}

/* Returns 1 and sets *kind / *format when the block is worth keeping. */
static int classify(const char *info, const char *text, pmbot_extract_kind *kind,
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
			*format = content_format(text);
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
		*format = content_format(text);
		return 1;
	}
	return 0;
}

static int append(pmbot_extract_list *list, cmark_node *node, pmbot_extract_kind kind,
	pmbot_format format)
{
	const char *text = cmark_node_get_literal(node);
	const char *info = cmark_node_get_fence_info(node);
	pmbot_extract_item *item;

	if (list->count == list->alloc) {
		size_t alloc = list->alloc ? list->alloc * 2 : 4;
		pmbot_extract_item *p = realloc(list->items, alloc * sizeof(*p));

		if (!p)
			return PMBOT_ERROR;
		list->items = p;
		list->alloc = alloc;
	}
	item = &list->items[list->count];
	memset(item, 0, sizeof(*item));
	item->kind = kind;
	item->block.text = strdup(text ? text : "");
	item->block.info = strdup(info ? info : "");
	if (!item->block.text || !item->block.info) {
		pmbot_extract_block_free(&item->block);
		return PMBOT_ERROR;
	}
	item->block.len = strlen(item->block.text);
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

static int visit(pmbot_extract_list *out, cmark_node *node)
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
	if (!classify(info ? info : "", text ? text : "", &kind, &format))
		return 0;
	return append(out, node, kind, format);
}

int pmbot_extract_blocks(pmbot_extract_list *out, const char *markdown, size_t len)
{
	cmark_parser *parser = NULL;
	cmark_node *doc = NULL, *node;
	int err = PMBOT_ERROR;

	if (!(parser = cmark_parser_new(CMARK_OPT_DEFAULT)))
		goto done;
	if (len)
		cmark_parser_feed(parser, markdown, len);
	if (!(doc = cmark_parser_finish(parser)))
		goto done;
	for (node = next_block(doc, doc); node; node = next_block(doc, node))
		if (visit(out, node) < 0)
			goto done;
	err = 0;
done:
	if (doc)
		cmark_node_free(doc);
	if (parser)
		cmark_parser_free(parser);
	return err;
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
