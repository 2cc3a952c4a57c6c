#ifndef PMBOT_TEXT_H
#define PMBOT_TEXT_H

#include <stddef.h>

#include "pmbot/buf.h"

/*
 * Text from reports, issues and models never mentions or links where
 * pm-bot writes it on GitHub (plan comments, issue bodies and titles).
 * One rule, here only: a U+200C ZERO WIDTH NON-JOINER goes
 *
 *   - after '@' followed by an ASCII letter or digit (@user, @org/team,
 *     owner/repo@sha, name@example.com),
 *   - after '#' followed by a digit (#12, owner/repo#12),
 *   - after the '-' of a word-initial "GH-" followed by a digit (GH-12),
 *   - after the ':' of "://" (https://x.example/a),
 *   - after the third 'w' of a word-initial "www." (www.example.com),
 *
 * letters compared ignoring ASCII case. The text stays readable (the
 * character is invisible) while GitHub reads no mention, no issue or
 * commit reference and no autolink in it: nobody is notified and no other
 * issue gets a cross-reference.
 */

/* The character, as UTF-8. */
#define PMBOT_TEXT_ZWNJ "\xe2\x80\x8c"

/*
 * For plain text that the caller escapes byte by byte (every Markdown
 * character backslash-escaped or written as an entity): does byte `i` of
 * the `len` bytes at `s` need a U+200C after it? 1 or 0.
 */
int pmbot_text_needs_zwnj(const char *s, size_t len, size_t i);

/* Flags of pmbot_text_neutralise(). */
#define PMBOT_TEXT_CODE_SPANS 1u /* leave Markdown code spans as they are */
/* Tests only: the token loop on every byte, no copying of clean runs (same output). */
#define PMBOT_TEXT__BYTEWISE 0x100u

/*
 * Append `len` bytes of Markdown source at `s` to `out` with the rule
 * above applied to what GitHub will read: a backslash escape ("\@") and a
 * character reference ("&#64;", "&#x40;", "&commat;", "&num;", "&colon;",
 * "&sol;", "&period;", "&hyphen;"...) count as the character they stand for,
 * and U+200C goes after the escape or the reference.
 *
 * With PMBOT_TEXT_CODE_SPANS, code spans are copied unchanged: in a code
 * span GitHub reads no mention or link, and people copy code. Only spans
 * GitHub is certain to read as code are kept: the closing backtick run on
 * the same line as the opening one, and none at all from the first
 * backtick run without a closer on its line (it could pair with one on a
 * later line, changing every pairing after it), from the first '<'
 * outside a span (raw HTML and autolinks win over code spans) or from the
 * start of the first line holding a '|' (a table splits cells before it
 * reads code). Everything else is neutralised: too much, never too little.
 * Without the flag no code span is kept (for text that is later joined to
 * other text, where pairings could change).
 *
 * Idempotent: text already neutralised is appended unchanged. Returns 0,
 * or -1 when out of memory (`out` then holds what it held before).
 */
int pmbot_text_neutralise(pmbot_buf *out, const char *s, size_t len, unsigned flags);

/*
 * The inverse, for values read back from what pm-bot wrote (a field under
 * a body heading compared with a report value, or set on a Project field):
 * append `s` to `out` without each U+200C that directly follows a
 * character after which the rule puts one (the rule read with every
 * U+200C ignored, code spans included). Other U+200C (Persian, Indic
 * scripts) stay. So pmbot_text_unneutralise(pmbot_text_neutralise(x)) is
 * x for every x that holds no such U+200C itself. 0, or -1 when out of
 * memory (`out` then holds what it held before).
 */
int pmbot_text_unneutralise(pmbot_buf *out, const char *s, size_t len);

/* GitHub's limits, in characters (code points). */
#define PMBOT_ISSUE_TITLE_MAX 256
#define PMBOT_LABEL_MAX 50

/* What an issue form writes for a field left empty. */
#define PMBOT_TEXT_NO_RESPONSE "_No response_"

/*
 * Bytes of the line breaker at `s` (`left` readable): C0 controls, DEL,
 * U+0085, U+2028, U+2029, which some line-based readers treat as line
 * ends. 0 when `s` starts with none.
 */
size_t pmbot_text_breaker_len(const char *s, size_t left);

/*
 * Bytes of the blank code point at `s`: Unicode White_Space (U+0009..000D,
 * U+0020, U+0085, U+00A0, U+1680, U+2000..200A, U+2028, U+2029, U+202F,
 * U+205F, U+3000) and the invisible U+200B, U+FEFF. 0 when none.
 */
size_t pmbot_text_blank_len(const char *s, size_t left);

/*
 * The value without blank code points at either end: bytes
 * [*start, *end) of the `len` at `s` (*start == *end when all are blank).
 * Area and priority are trimmed so, so no label starts or ends with an
 * invisible character.
 */
void pmbot_text_trim_blank(size_t *start, size_t *end, const char *s, size_t len);

/*
 * Does the value say nothing? 1 when the `len` bytes at `s` are only blank
 * code points, or, without them at either end, the form placeholder
 * "_No response_": a person reads both as "not given", so pm-bot does too
 * (an area or priority like that is triaged as missing). 0 otherwise.
 */
int pmbot_text_is_blank(const char *s, size_t len);

/*
 * Can `id` go into an issue's identity marker? 0 when it is empty or holds
 * whitespace (ASCII or Unicode), a control character, U+FEFF or an HTML
 * comment delimiter ("<!--", "-->", "--!>"); 1 otherwise. The rule both
 * `validate` and the renderer apply (RENDER_UNSAFE_ID).
 */
int pmbot_text_id_safe(const char *id);

/*
 * 1 when the `len` bytes at `s` (need not be NUL-terminated) are their own
 * flattened form in printable ASCII: no control byte, no space at either
 * end, no two spaces in a row, as most titles, labels and values are; the
 * fast paths that skip flattening ask this. 0 otherwise.
 */
int pmbot_text_flat_ascii(const char *s, size_t len);

/* 1 when `c` is ASCII punctuation, what a Markdown backslash escapes; 0 otherwise. */
int pmbot_text_is_punct(char c);

/*
 * Append the one-line form of the `len` bytes at `s` to `out`: line
 * breakers and spaces collapse to one space, none at either end. 0, or -1
 * when out of memory (`out` then holds what it held before).
 */
int pmbot_text_flatten(pmbot_buf *out, const char *s, size_t len);

/*
 * `*chars`: the characters (code points) of the flattened form of the
 * `len` bytes at `s`, what a label value takes once rendered. 0, or -1
 * when out of memory.
 */
int pmbot_text_flat_chars(size_t *chars, const char *s, size_t len);

/*
 * `*chars`: the characters a title or label value takes once rendered
 * (flattened, then neutralised with code spans kept), so `validate` and
 * the renderer measure against the limits above alike. 0, or -1 when out
 * of memory.
 */
int pmbot_text_shown_chars(size_t *chars, const char *s, size_t len);

#endif
