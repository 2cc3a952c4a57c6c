#ifndef PMBOT_REPORT_EXTRACT_H
#define PMBOT_REPORT_EXTRACT_H

#include <stddef.h>

#include "pmbot/report.h"

/*
 * Internal to src/report/ (and its unit test): the Markdown scanning step of
 * pmbot_report_load(). Not installed, not part of the public API.
 */

/* Why a fenced block was kept by pmbot_extract_blocks(). */
typedef enum {
	/* The info string, trimmed, is exactly pm-bot:report-ir/v1 or the
	 * legacy pm-bot:report_ir/v1. */
	PMBOT_EXTRACT_CANONICAL = 0,
	/* Not canonical, and the first word of the info string is json, yaml
	 * or yml (ASCII case-insensitive): a fallback candidate if its top
	 * level turns out to hold schema_version report_ir/v1. */
	PMBOT_EXTRACT_FALLBACK = 1,
	/* Neither, but the first word starts with "pm-bot:" (any case): most
	 * likely meant as the canonical block. Never parsed; only named in the
	 * REPORT_NO_BLOCK message so the author sees why it was skipped. */
	PMBOT_EXTRACT_NEAR_MISS = 2
} pmbot_extract_kind;

typedef struct {
	pmbot_block block;
	pmbot_extract_kind kind;
	/*
	 * pmbot_extract_blocks_borrowing(): the content where it lies in the
	 * Markdown (`block.len` bytes, not NUL-terminated; `block.text` then
	 * NULL); NULL when `block.text` holds it.
	 */
	const char *at;
} pmbot_extract_item;

/*
 * Blocks in document order. The list owns every item and its strings, not
 * the Markdown an item's `at` points into.
 */
typedef struct {
	pmbot_extract_item *items;
	size_t count;
	size_t alloc;
} pmbot_extract_list;

#define PMBOT_EXTRACT_LIST_INIT { NULL, 0, 0 }

/*
 * Parse `len` bytes of Markdown with cmark-gfm (CommonMark: backtick and
 * tilde fences of any length, fences inside list items and block quotes,
 * LF/CRLF/CR line ends) and append to `out` every fenced code block that is
 * canonical, a fallback candidate or a near miss (see pmbot_extract_kind),
 * in document order. Indented code blocks and other fenced blocks are
 * skipped. The input is not checked for UTF-8 here: pmbot_report_load()
 * does that first.
 *
 * For each block: `text` is the content as cmark gives it (container
 * prefixes and the fence's indentation removed, line ends normalised to
 * "\n"); `info` is the info string after CommonMark processing (trimmed,
 * backslash escapes and entities resolved); `fence_line` and
 * `content_column` are the line and column of the opening fence's first
 * fence character, `content_line` is `fence_line + 1`, so column 1 of
 * `text` is column `content_column` of the file. `format` is JSON when the
 * block is canonical and its first non-whitespace byte is '{' or '[', or
 * when a fallback block's first info word is json; YAML otherwise.
 *
 * Returns 0, or PMBOT_ERROR when out of memory (`out` then holds the blocks
 * appended so far; free it either way with pmbot_extract_list_free()).
 */
int pmbot_extract_blocks(pmbot_extract_list *out, const char *markdown, size_t len);

/*
 * pmbot_extract_blocks, except that the content of a block that stands in
 * the Markdown exactly as extracted (a fence at column 1, "\n" line ends,
 * a last line with its "\n") is not copied: its item's `at` points at it,
 * so `markdown` must outlive every use of the item. Parsing a 3 MB report
 * where it lies saves writing, and first touching, 3 MB of new pages.
 */
int pmbot_extract_blocks_borrowing(pmbot_extract_list *out, const char *markdown, size_t len);

/*
 * pmbot_extract_blocks (or, with `borrow`, pmbot_extract_blocks_borrowing)
 * with the Markdown parsed in pieces of about `chunk` bytes (cut where the
 * result cannot change), so that cmark's tree stays small on a long file.
 * Same blocks, same positions, for any `chunk`: the unit test compares tiny
 * pieces with one piece. Only a block that a piece ends in is read without
 * cmark, and so only such a block is borrowed.
 */
int pmbot_extract_blocks_chunked(pmbot_extract_list *out, const char *markdown,
	size_t len, size_t chunk, int borrow);

/*
 * pmbot_extract_blocks_chunked without borrowing; `*largest` gets the most
 * bytes cmark was given at once, which its tree is sized by (about 150
 * bytes a byte of emphasis-heavy prose). For the unit test of that bound.
 */
int pmbot_extract__blocks_measured(pmbot_extract_list *out, const char *markdown, size_t len,
	size_t chunk, size_t *largest);

/* Free every block of `list` and its array; the list is reusable afterwards. */
void pmbot_extract_list_free(pmbot_extract_list *list);

/* Free the strings of `block` and zero it. NULL is allowed. */
void pmbot_extract_block_free(pmbot_block *block);

#endif
