#include "pmbot/text.h"

#include <string.h>

#include "pmbot/utf8.h"
#include "pmbot/banned.h"

/* Characters the rule compares: ASCII as itself, anything else as one of these. */
#define CH_OTHER (-1)
#define CH_ZWNJ 0x200c

typedef struct {
	size_t len; /* bytes */
	int ch;     /* ASCII character, CH_ZWNJ or CH_OTHER */
	int esc;    /* a backslash escape or a character reference: never Markdown syntax */
} tok;

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static int is_alnum(int c)
{
	return is_digit(c) || (lower(c) >= 'a' && lower(c) <= 'z');
}

/*
 * The rule (include/pmbot/text.h) for character w[3], with the three
 * before it in w[0..2] and the two after it in w[4..5].
 */
static int rule(const int w[6])
{
	switch (w[3]) {
	case '@':
		return is_alnum(w[4]);
	case '#':
		return is_digit(w[4]);
	case ':':
		return w[4] == '/' && w[5] == '/';
	case '-':
		return is_digit(w[4]) && lower(w[2]) == 'h' && lower(w[1]) == 'g' && !is_alnum(w[0]);
	case 'w':
	case 'W':
		return w[4] == '.' && lower(w[2]) == 'w' && lower(w[1]) == 'w' && !is_alnum(w[0]);
	default:
		return 0;
	}
}

static int byte_ch(const char *s, size_t len, size_t i)
{
	return i < len && (unsigned char)s[i] < 0x80 ? s[i] : CH_OTHER;
}

int pmbot_text_needs_zwnj(const char *s, size_t len, size_t i)
{
	int w[6];

	if (i >= len)
		return 0;
	w[0] = i >= 3 ? byte_ch(s, len, i - 3) : CH_OTHER;
	w[1] = i >= 2 ? byte_ch(s, len, i - 2) : CH_OTHER;
	w[2] = i >= 1 ? byte_ch(s, len, i - 1) : CH_OTHER;
	w[3] = byte_ch(s, len, i);
	w[4] = byte_ch(s, len, i + 1);
	w[5] = byte_ch(s, len, i + 2);
	return rule(w);
}

/* ---- Markdown source ------------------------------------------------ */

int pmbot_text_is_punct(char c)
{
	return c > 0x20 && c < 0x7f && !is_alnum((unsigned char)c);
}

static int hex_val(char c)
{
	if (is_digit(c))
		return c - '0';
	if (lower(c) >= 'a' && lower(c) <= 'f')
		return lower(c) - 'a' + 10;
	return -1;
}

/*
 * A character reference at s[0] ("&...;"): its length, with what it stands
 * for in *ch; 0 when there is none. Only the named references of the
 * characters the rule looks at are needed: any other stands for a
 * character the rule does not compare (CH_OTHER is right for it).
 */
static size_t entity_at(const char *s, size_t left, int *ch)
{
	static const struct {
		const char *name;
		char ch;
	} named[] = {
		{ "&commat;", '@' }, { "&num;", '#' }, { "&colon;", ':' }, { "&sol;", '/' },
		{ "&period;", '.' }, { "&grave;", '`' }, { "&lt;", '<' }, { "&LT;", '<' },
		{ "&verbar;", '|' }, { "&vert;", '|' }, { "&VerticalLine;", '|' },
		{ "&lowbar;", '_' }, { "&UnderBar;", '_' }
	};
	size_t i, n;
	unsigned long v = 0;

	if (left < 3 || s[0] != '&')
		return 0;
	if (s[1] == '#') {
		int hex = s[2] == 'x' || s[2] == 'X', d;
		size_t first = hex ? 3 : 2, max = hex ? 6 : 7;

		for (i = first; i < left && i - first < max; i++) {
			d = hex ? hex_val(s[i]) : (is_digit(s[i]) ? s[i] - '0' : -1);
			if (d < 0)
				break;
			v = v * (hex ? 16 : 10) + (unsigned long)d;
		}
		if (i == first || i >= left || s[i] != ';')
			return 0;
		*ch = v > 0 && v < 0x80 ? (int)v : v == CH_ZWNJ ? CH_ZWNJ : CH_OTHER;
		return i + 1;
	}
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		n = strlen(named[i].name);
		if (left >= n && !memcmp(s, named[i].name, n)) {
			*ch = named[i].ch;
			return n;
		}
	}
	/* Any other well-formed name: a character the rule does not compare. */
	for (i = 1; i < left && i < 40 && is_alnum((unsigned char)s[i]); i++)
		;
	if (i > 1 && i < left && s[i] == ';') {
		*ch = CH_OTHER;
		return i + 1;
	}
	return 0;
}

/* The character GitHub reads at s[i] of Markdown source. */
static tok tok_at(const char *s, size_t len, size_t i)
{
	tok t = { 1, CH_OTHER, 0 };
	unsigned char c;
	size_t k;

	if (i >= len) {
		t.len = 0;
		return t;
	}
	c = (unsigned char)s[i];
	if (c == '\\' && i + 1 < len && pmbot_text_is_punct(s[i + 1])) {
		t.len = 2;
		t.ch = s[i + 1];
		t.esc = 1;
	} else if (c == '&' && (k = entity_at(s + i, len - i, &t.ch)) != 0) {
		t.len = k;
		t.esc = 1;
	} else if (c < 0x80) {
		t.ch = c;
	} else {
		k = pmbot_utf8_seqlen(c);
		t.len = k <= len - i ? k : 1;
		if (t.len == 3 && !memcmp(s + i, PMBOT_TEXT_ZWNJ, 3))
			t.ch = CH_ZWNJ;
	}
	return t;
}

/* The next character after byte `i` that is not a U+200C (when `skip`). */
static size_t next_ch(const char *s, size_t len, size_t i, int skip, int *ch)
{
	tok t = tok_at(s, len, i);

	while (skip && t.len && t.ch == CH_ZWNJ) {
		i += t.len;
		t = tok_at(s, len, i);
	}
	*ch = t.len ? t.ch : CH_OTHER;
	return i + t.len;
}

/* Does the rule put a U+200C after the token at `i` (prev: the three before)? */
static int md_rule(const char *s, size_t len, size_t i, const tok *t, const int prev[3], int skip)
{
	int w[6];

	w[0] = prev[0];
	w[1] = prev[1];
	w[2] = prev[2];
	w[3] = t->ch;
	next_ch(s, len, next_ch(s, len, i + t->len, skip, &w[4]), skip, &w[5]);
	return rule(w);
}

static void shift(int prev[3], int ch)
{
	prev[0] = prev[1];
	prev[1] = prev[2];
	prev[2] = ch;
}

static size_t run_at(const char *s, size_t len, size_t i)
{
	size_t n = 0;

	while (i + n < len && s[i + n] == '`')
		n++;
	return n;
}

/* End of the closing run of `n` backticks on the line from `i`, 0 when none. */
static size_t closer(const char *s, size_t len, size_t i, size_t n)
{
	while (i < len && s[i] != '\n' && s[i] != '\r') {
		size_t r = run_at(s, len, i);

		if (r == n)
			return i + r;
		i += r ? r : 1;
	}
	return 0;
}

static int line_has_pipe(const char *s, size_t len, size_t i)
{
	for (; i < len && s[i] != '\n' && s[i] != '\r'; i++)
		if (s[i] == '|')
			return 1;
	return 0;
}

/*
 * Can the ASCII byte at s[i] be copied without the token loop: it starts
 * no escape, reference, code span, HTML or line, and the rule cannot put a
 * U+200C after it whatever came before? For a character the rule looks at,
 * the byte after it decides (an escape or a reference there could stand
 * for the character the rule wants, so those stay with the loop).
 */
static inline int quiet_at(const char *s, size_t len, size_t i)
{
	unsigned char c = (unsigned char)s[i], n;

	switch (c) {
	case '\\': case '&': case '`': case '<': case '\n': case '\r':
		return 0;
	case '@': case '#': case ':': case '-': case 'w': case 'W':
		break;
	default:
		return c < 0x80;
	}
	if (i + 1 >= len)
		return 1;
	n = (unsigned char)s[i + 1];
	if (n >= 0x80)
		return 1;
	if (n == '\\' || n == '&')
		return 0;
	switch (c) {
	case '@':
		return !is_alnum(n);
	case '#':
	case '-':
		return !is_digit(n);
	case ':':
		return n != '/';
	default:
		return n != '.';
	}
}

int pmbot_text_neutralise(pmbot_buf *out, const char *s, size_t len, unsigned flags)
{
	size_t start = out->len, i = 0;
	int prev[3] = { CH_OTHER, CH_OTHER, CH_OTHER };
	int spans = (flags & PMBOT_TEXT_CODE_SPANS) != 0, line_start = 1, err = 0;
	int runs = (flags & PMBOT_TEXT__BYTEWISE) == 0;

	/*
	 * Quiet bytes only (most field values): no token starts a line, a code
	 * span or a U+200C, so the text is its own result, the line-start pass
	 * included (its '|' check only matters to a '`').
	 */
	while (runs && i < len && quiet_at(s, len, i))
		i++;
	if (runs && i == len)
		return pmbot_buf_put(out, s, len);
	i = 0;
	while (i < len && !err) {
		tok t;

		/*
		 * Clean ASCII runs (most of a body) in one copy: each byte is
		 * its own token and only moves the window. A line's first byte
		 * goes through the loop for the '|' check.
		 */
		if (runs && !line_start && quiet_at(s, len, i)) {
			size_t j = i + 1;

			while (j < len && quiet_at(s, len, j))
				j++;
			err = pmbot_buf_put(out, s + i, j - i);
			for (i = j - i > 3 ? j - 3 : i; i < j; i++)
				shift(prev, (unsigned char)s[i]);
			continue;
		}
		t = tok_at(s, len, i);
		if (spans && line_start && line_has_pipe(s, len, i))
			spans = 0;
		line_start = t.ch == '\n' || t.ch == '\r';
		if (spans && !t.esc && t.ch == '`') {
			size_t n = run_at(s, len, i), end = closer(s, len, i + n, n);

			if (end) {
				err = pmbot_buf_put(out, s + i, end - i);
				prev[0] = prev[1] = prev[2] = CH_OTHER;
				i = end;
				continue;
			}
			/* May pair with a run on a later line: nothing after is sure to be code. */
			spans = 0;
		}
		if (!t.esc && t.ch == '<')
			spans = 0;
		err = pmbot_buf_put(out, s + i, t.len);
		if (!err && md_rule(s, len, i, &t, prev, 0))
			err = pmbot_buf_puts(out, PMBOT_TEXT_ZWNJ);
		shift(prev, t.ch);
		i += t.len;
	}
	if (err)
		pmbot_buf_truncate(out, start);
	return err ? -1 : 0;
}

int pmbot_text_unneutralise(pmbot_buf *out, const char *s, size_t len)
{
	size_t start = out->len, i = 0;
	int prev[3] = { CH_OTHER, CH_OTHER, CH_OTHER }, err = 0;

	while (i < len && !err) {
		tok t = tok_at(s, len, i);

		err = pmbot_buf_put(out, s + i, t.len);
		if (t.ch == CH_ZWNJ) {
			i += t.len;
			continue;
		}
		/* The U+200C the rule put right after this character goes; any other stays. */
		if (md_rule(s, len, i, &t, prev, 1) && len - (i + t.len) >= 3 &&
		    !memcmp(s + i + t.len, PMBOT_TEXT_ZWNJ, 3))
			i += 3;
		shift(prev, t.ch);
		i += t.len;
	}
	if (err)
		pmbot_buf_truncate(out, start);
	return err ? -1 : 0;
}

size_t pmbot_text_breaker_len(const char *s, size_t left)
{
	const unsigned char *u = (const unsigned char *)s;

	if (u[0] < 0x20 || u[0] == 0x7f)
		return 1;
	if (left >= 2 && u[0] == 0xc2 && u[1] == 0x85)
		return 2;
	if (left >= 3 && u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9))
		return 3;
	return 0;
}

size_t pmbot_text_blank_len(const char *s, size_t left)
{
	static const char *const wide[] = {
		"\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80", "\xe2\x80\x8b", "\xe2\x80\xa8",
		"\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80", "\xef\xbb\xbf"
	};
	const unsigned char *u = (const unsigned char *)s;
	size_t i, n;

	if (!left)
		return 0;
	/* Most text is ASCII: only five lead bytes start a wide blank. */
	if (u[0] < 0x80)
		return u[0] == ' ' || (u[0] >= 0x09 && u[0] <= 0x0d);
	if (u[0] != 0xc2 && u[0] != 0xe1 && u[0] != 0xe2 && u[0] != 0xe3 && u[0] != 0xef)
		return 0;
	/* U+2000..U+200A */
	if (left >= 3 && u[0] == 0xe2 && u[1] == 0x80 && u[2] >= 0x80 && u[2] <= 0x8a)
		return 3;
	for (i = 0; i < sizeof(wide) / sizeof(wide[0]); i++) {
		n = strlen(wide[i]);
		if (left >= n && !memcmp(s, wide[i], n))
			return n;
	}
	return 0;
}

void pmbot_text_trim_blank(size_t *start, size_t *end, const char *s, size_t len)
{
	size_t i = 0, e = len, n;

	while (i < e && (n = pmbot_text_blank_len(s + i, e - i)))
		i += n;
	/* Trailing blanks: step back over whole code points only. */
	while (e > i) {
		size_t j = e - 1;

		while (j > i && ((unsigned char)s[j] & 0xc0) == 0x80)
			j--;
		n = pmbot_text_blank_len(s + j, e - j);
		if (!n || j + n != e)
			break;
		e = j;
	}
	*start = i;
	*end = e;
}

int pmbot_text_is_blank(const char *s, size_t len)
{
	static const char placeholder[] = PMBOT_TEXT_NO_RESPONSE;
	size_t i, end;

	pmbot_text_trim_blank(&i, &end, s, len);
	return end == i || (end - i == sizeof(placeholder) - 1 &&
		!memcmp(s + i, placeholder, end - i));
}

int pmbot_text_id_safe(const char *id)
{
	static const char *const bad[] = { "<!--", "-->", "--!>" };
	size_t i, len;
	int dashes = 0;

	/*
	 * Printable ASCII other than the space holds no breaker and no blank,
	 * and each bad sequence holds "--": most ids are settled in one pass.
	 */
	for (i = 0; (unsigned char)id[i] > ' ' && (unsigned char)id[i] < 0x7f; i++)
		dashes |= id[i] == '-' && id[i + 1] == '-';
	if (!id[i] && !dashes)
		return i > 0;
	len = i + strlen(id + i);
	if (!len)
		return 0;
	for (i = 0; i < len; i++)
		if (pmbot_text_breaker_len(id + i, len - i) ||
		    pmbot_text_blank_len(id + i, len - i))
			return 0;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strstr(id, bad[i]))
			return 0;
	return 1;
}

int pmbot_text_flat_ascii(const char *s, size_t len)
{
	size_t i;

	if (!len)
		return 1;
	if (s[0] == ' ' || s[len - 1] == ' ')
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c > 0x7e || (c == ' ' && i + 1 < len && s[i + 1] == ' '))
			return 0;
	}
	return 1;
}

int pmbot_text_flatten(pmbot_buf *out, const char *s, size_t len)
{
	size_t i = 0, start = out->len;
	int space = 0, err = 0;

	/* Most titles and values are flat already: one copy. */
	if (pmbot_text_flat_ascii(s, len))
		return pmbot_buf_put(out, s, len);
	while (i < len && !err) {
		size_t n = pmbot_text_breaker_len(s + i, len - i), j;

		if (n || s[i] == ' ') {
			space = out->len > start;
			i += n ? n : 1;
			continue;
		}
		/* The run up to the next space or breaker goes in one copy. */
		for (j = i + 1; j < len && s[j] != ' ' && !pmbot_text_breaker_len(s + j, len - j); j++)
			;
		if (space)
			err = pmbot_buf_putc(out, ' ');
		space = 0;
		if (!err)
			err = pmbot_buf_put(out, s + i, j - i);
		i = j;
	}
	if (err)
		pmbot_buf_truncate(out, start);
	return err;
}

int pmbot_text_flat_chars(size_t *chars, const char *s, size_t len)
{
	pmbot_buf flat = PMBOT_BUF_INIT;
	size_t i;
	int err;

	if (pmbot_text_flat_ascii(s, len)) {
		*chars = len;
		return 0;
	}
	*chars = 0;
	if (!(err = pmbot_text_flatten(&flat, s, len)))
		for (i = 0; i < flat.len; i++)
			*chars += ((unsigned char)flat.buf[i] & 0xc0) != 0x80;
	pmbot_buf_free(&flat);
	return err;
}

/*
 * Flat ASCII without '\\', '&' or '`' has no escape, reference or code
 * span: each byte is one token, so neutralise adds exactly one character
 * per byte the plain-text rule marks. 1 with *chars set when `s` is such
 * text, else 0; one pass, as most titles and values are.
 */
static int shown_chars_plain(size_t *chars, const char *s, size_t len)
{
	size_t i, n = len;

	if (len && (s[0] == ' ' || s[len - 1] == ' '))
		return 0;
	for (i = 0; i < len; i++) {
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return 0;
		switch (s[i]) {
		case '\\': case '&': case '`':
			return 0;
		case ' ':
			if (i + 1 < len && s[i + 1] == ' ')
				return 0;
			break;
		case '@': case '#': case ':': case '-': case 'w': case 'W':
			n += (size_t)pmbot_text_needs_zwnj(s, len, i);
			break;
		}
	}
	*chars = n;
	return 1;
}

int pmbot_text_shown_chars(size_t *chars, const char *s, size_t len)
{
	pmbot_buf flat = PMBOT_BUF_INIT, shown = PMBOT_BUF_INIT;
	size_t i;
	int err;

	if (shown_chars_plain(chars, s, len))
		return 0;
	*chars = 0;
	if (!(err = pmbot_text_flatten(&flat, s, len)) &&
	    !(err = pmbot_text_neutralise(&shown, flat.buf, flat.len, PMBOT_TEXT_CODE_SPANS)))
		for (i = 0; i < shown.len; i++)
			*chars += ((unsigned char)shown.buf[i] & 0xc0) != 0x80;
	pmbot_buf_free(&flat);
	pmbot_buf_free(&shown);
	return err;
}
