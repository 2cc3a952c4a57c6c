#include "pmbot/render.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pmbot/text.h"
#include "pmbot/banned.h"

typedef struct {
	const char *p;
	size_t len;
} span;

int pmbot_render__fast = 1;

/* The value of every field read as empty: shared, never freed (pmbot_body_free). */
static char no_value[1];

/* One rule with `validate`'s checks: see pmbot_text_breaker_len(). */
static size_t breaker_len(const char *s, size_t left)
{
	return pmbot_text_breaker_len(s, left);
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static inline span trim(span s)
{
	while (s.len && is_blank(s.p[0])) {
		s.p++;
		s.len--;
	}
	while (s.len && is_blank(s.p[s.len - 1]))
		s.len--;
	return s;
}

static int span_is(span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.len == n && !memcmp(s.p, lit, n);
}

static int starts_with(span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.len >= n && !memcmp(s.p, lit, n);
}

static int starts_with_ci(span s, const char *lit)
{
	size_t n = strlen(lit), i;

	if (s.len < n)
		return 0;
	for (i = 0; i < n; i++)
		if (tolower((unsigned char)s.p[i]) != lit[i])
			return 0;
	return 1;
}

/*
 * Next line of s[*pos..len) into *line, without its ending (LF, CRLF or
 * CR). Returns 0 at the end.
 */
static inline int next_line(const char *s, size_t len, size_t *pos, span *line)
{
	size_t i = *pos;

	if (i >= len)
		return 0;
	line->p = s + i;
	if (pmbot_render__fast) {
		/* Lines are short: one compare per byte, both endings behind it. */
		while (i < len && ((unsigned char)s[i] > '\r' ||
				   (s[i] != '\n' && s[i] != '\r')))
			i++;
	} else {
		while (i < len && s[i] != '\n' && s[i] != '\r')
			i++;
	}
	line->len = (size_t)(s + i - line->p);
	if (i < len)
		i += (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n') ? 2 : 1;
	*pos = i;
	return 1;
}

/*
 * next_line() for text known to hold no CR: memchr() finds each LF a word
 * at a time (a body is tens of lines, each tens of bytes).
 */
static inline int next_lf_line(const char *s, size_t len, size_t *pos, span *line)
{
	const char *lf;

	if (*pos >= len)
		return 0;
	line->p = s + *pos;
	lf = memchr(line->p, '\n', len - *pos);
	line->len = lf ? (size_t)(lf - line->p) : len - *pos;
	*pos += line->len + (lf != NULL);
	return 1;
}

/* ---- neutralisation ---------------------------------------------- */

/* Can the byte start no pmbot_text_breaker_len() break? */
static int plain_byte(unsigned char c)
{
	return c >= 0x20 && c != 0x7f && c != 0xc2 && c != 0xe2;
}

/* 1 when "--" occurs in the `len` bytes at `s`. */
static int has_dashes(const char *s, size_t len)
{
	const char *p = s, *end = s + len;

	while ((p = memchr(p, '-', (size_t)(end - p))) != NULL) {
		if (end - p >= 2 && p[1] == '-')
			return 1;
		p++;
	}
	return 0;
}

int pmbot_render_neutralise_title(pmbot_buf *out, const char *s, size_t len)
{
	return pmbot_text_flatten(out, s, len);
}

/*
 * A line that would open a Markdown block the field layout cannot close:
 * an ATX heading, a code fence, or an HTML block of the kinds that only an
 * explicit end tag closes. `s` starts after the line's indentation.
 * Returns 1 for "put a backslash first", 2 for "write '<' as &lt;".
 */
static int line_start_escape(span s)
{
	static const char *const html[] = { "pre", "script", "style", "textarea" };
	size_t i, n = 0;

	while (n < s.len && s.p[n] == '#')
		n++;
	if (n >= 1 && n <= 6 && (n == s.len || is_blank(s.p[n])))
		return 1;
	if (starts_with(s, "```") || starts_with(s, "~~~"))
		return 1;
	if (!s.len || s.p[0] != '<')
		return 0;
	if (s.len >= 2 && (s.p[1] == '!' || s.p[1] == '?'))
		return 2;
	for (i = 0; i < sizeof(html) / sizeof(html[0]); i++) {
		span rest = { s.p + 1, s.len - 1 };
		size_t k = strlen(html[i]);

		if (starts_with_ci(rest, html[i]) &&
		    (rest.len == k || is_blank(rest.p[k]) || rest.p[k] == '>'))
			return 2;
	}
	return 0;
}

/*
 * Append one line (no line breaks in it) with the line-start escape and
 * the comment delimiters neutralised. "<!--" goes first and "-->" /
 * "--!>" second, over the first pass's output, because "<!-->" would
 * otherwise leave "-->" behind.
 */
static int put_safe_line(pmbot_buf *out, span line)
{
	pmbot_buf tmp = PMBOT_BUF_INIT;
	size_t ind = 0, i;
	int err = 0, esc;
	span rest;

	while (ind < line.len && is_blank(line.p[ind]))
		ind++;
	rest.p = line.p + ind;
	rest.len = line.len - ind;
	esc = line_start_escape(rest);
	/*
	 * Every comment delimiter holds "--": a line without it (most) is
	 * the escape and the line in two copies, not a byte at a time twice.
	 */
	if (pmbot_render__fast && !has_dashes(line.p, line.len)) {
		size_t start = out->len;

		err |= pmbot_buf_put(out, line.p, ind);
		if (esc == 1) {
			err |= pmbot_buf_putc(out, '\\');
		} else if (esc == 2) {
			err |= pmbot_buf_puts(out, "&lt;");
			rest.p++;
			rest.len--;
		}
		err |= pmbot_buf_put(out, rest.p, rest.len);
		if (err)
			pmbot_buf_truncate(out, start);
		return err ? -1 : 0;
	}
	err |= pmbot_buf_put(&tmp, line.p, ind);
	if (esc == 1) {
		err |= pmbot_buf_putc(&tmp, '\\');
	} else if (esc == 2) {
		err |= pmbot_buf_puts(&tmp, "&lt;");
		rest.p++;
		rest.len--;
	}
	for (i = 0; i < rest.len && !err; i++) {
		if (rest.len - i >= 4 && !memcmp(rest.p + i, "<!--", 4)) {
			err |= pmbot_buf_puts(&tmp, "&lt;");
			continue;
		}
		err |= pmbot_buf_putc(&tmp, rest.p[i]);
	}
	for (i = 0; i < tmp.len && !err; i++) {
		if (tmp.len - i >= 3 && !memcmp(tmp.buf + i, "-->", 3)) {
			err |= pmbot_buf_puts(out, "--&gt;");
			i += 2;
		} else if (tmp.len - i >= 4 && !memcmp(tmp.buf + i, "--!>", 4)) {
			err |= pmbot_buf_puts(out, "--!&gt;");
			i += 3;
		} else {
			err |= pmbot_buf_putc(out, tmp.buf[i]);
		}
	}
	pmbot_buf_free(&tmp);
	return err ? -1 : 0;
}

int pmbot_render__line_is_safe(const char *s, size_t len)
{
	span line = { s, len };

	return pmbot_text_flat_ascii(s, len) && !span_is(line, PMBOT_NO_RESPONSE) &&
	       !has_dashes(s, len) && !line_start_escape(line);
}

int pmbot_render_neutralise_line(pmbot_buf *out, const char *s, size_t len)
{
	pmbot_buf flat = PMBOT_BUF_INIT;
	size_t start = out->len;
	span line;
	int err;

	/* Nothing to change (most values): one copy, no flattened one. */
	if (pmbot_render__fast && pmbot_render__line_is_safe(s, len))
		return pmbot_buf_put(out, s, len);
	if ((err = pmbot_render_neutralise_title(&flat, s, len)) < 0)
		goto done;
	line.p = flat.buf;
	line.len = flat.len;
	if (span_is(line, PMBOT_NO_RESPONSE))
		goto done;
	if ((err = put_safe_line(out, line)) < 0)
		pmbot_buf_truncate(out, start);
done:
	pmbot_buf_free(&flat);
	return err;
}

int pmbot_render_neutralise_block(pmbot_buf *out, const char *s, size_t len)
{
	pmbot_buf lines = PMBOT_BUF_INIT; /* the cleaned text, '\n' between lines */
	size_t i = 0, start = out->len, pos = 0, blanks = 0;
	int first = 1;
	span line;
	int err = 0;

	/* Pass 1: one '\n' per line break of any kind, controls as spaces,
	 * trailing blanks gone. */
	while (i < len && !err) {
		size_t n, j = i;

		/*
		 * A run of bytes that start no line break or control character
		 * (printable ASCII and the UTF-8 bytes that cannot lead U+0085,
		 * U+2028 or U+2029) goes in one copy.
		 */
		while (pmbot_render__fast && j < len && plain_byte((unsigned char)s[j]))
			j++;
		if (j > i) {
			err |= pmbot_buf_put(&lines, s + i, j - i);
			i = j;
			continue;
		}
		n = breaker_len(s + i, len - i);
		if (n && (s[i] == '\n' || s[i] == '\r' || n > 1)) {
			while (lines.len && is_blank(lines.buf[lines.len - 1]) &&
			       lines.buf[lines.len - 1] != '\n')
				pmbot_buf_truncate(&lines, lines.len - 1);
			err |= pmbot_buf_putc(&lines, '\n');
			i += (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n') ? 2 : n;
			continue;
		}
		err |= pmbot_buf_putc(&lines, n && s[i] != '\t' ? ' ' : s[i]);
		i++;
	}
	while (lines.len && is_blank(lines.buf[lines.len - 1]))
		pmbot_buf_truncate(&lines, lines.len - 1);
	if (err)
		goto done;

	/* Pass 2: leading and trailing blank lines go (inner ones are kept, at
	 * most one in a row), every line made safe. */
	while (next_line(lines.buf, lines.len, &pos, &line) && !err) {
		if (!line.len) {
			blanks += !first;
			continue;
		}
		if (!first) {
			err |= pmbot_buf_putc(out, '\n');
			if (blanks)
				err |= pmbot_buf_putc(out, '\n');
		}
		blanks = 0;
		if (first && span_is(trim(line), PMBOT_NO_RESPONSE)) {
			span t = trim(line);

			err |= pmbot_buf_put(out, line.p, (size_t)(t.p - line.p));
			err |= pmbot_buf_puts(out, "\\_No response\\_");
		} else {
			err |= put_safe_line(out, line);
		}
		first = 0;
	}
done:
	if (err)
		pmbot_buf_truncate(out, start);
	pmbot_buf_free(&lines);
	return err ? -1 : 0;
}

/* ---- headings ------------------------------------------------------ */

static int ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/*
 * Compare two headings by the normalised form: trimmed, whitespace runs
 * as one space, ASCII case folded.
 */
static int norm_eq(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;

	while (is_blank((char)*x))
		x++;
	while (is_blank((char)*y))
		y++;
	for (;;) {
		int sx = 0, sy = 0;

		while (is_blank((char)*x)) {
			x++;
			sx = 1;
		}
		while (is_blank((char)*y)) {
			y++;
			sy = 1;
		}
		/* A run of blanks at the end is trailing whitespace, not a space. */
		if (!*x)
			sx = 0;
		if (!*y)
			sy = 0;
		if (sx != sy)
			return 0;
		if (!*x || !*y)
			return !*x && !*y;
		/* ASCII case only, whatever the locale. */
		if (ascii_lower(*x) != ascii_lower(*y))
			return 0;
		x++;
		y++;
	}
}

/* The historical epic heading is the same field as "Size". */
static const char *canonical_heading(const char *h)
{
	return norm_eq(h, "Size (Epic)") ? "Size" : h;
}

int pmbot_body_heading_eq(const char *a, const char *b)
{
	return norm_eq(canonical_heading(a), canonical_heading(b));
}

/*
 * One side of pmbot_body_heading_eq() made ready for comparing many
 * headings with it: `canon` its canonical heading, `size` whether that is
 * "Size". pmbot_body_heading_eq(h, key) is then one norm_eq() when the key
 * is not "Size": a heading read as "Size (Epic)" is "Size", equal to no
 * other key.
 */
typedef struct {
	const char *canon;
	int size;
} heading_key;

static heading_key make_key(const char *heading)
{
	heading_key k;

	k.canon = canonical_heading(heading);
	k.size = norm_eq(k.canon, "Size");
	return k;
}

static int key_eq(const char *h, const heading_key *k)
{
	const char *a = h, *b = k->canon;

	if (!pmbot_render__fast)
		return pmbot_body_heading_eq(h, k->canon);
	/* Most headings differ from the key at their first letter ("Size (Epic)" too). */
	while (is_blank(*a))
		a++;
	while (is_blank(*b))
		b++;
	if (ascii_lower((unsigned char)*a) != ascii_lower((unsigned char)*b))
		return 0;
	if (k->size)
		return norm_eq(h, "Size") || norm_eq(h, "Size (Epic)");
	return norm_eq(h, k->canon);
}

/* "###" then a blank or the end: one of the form's headings. */
static int is_field_heading(span t, span *text)
{
	if (!starts_with(t, "###") || (t.len > 3 && !is_blank(t.p[3])))
		return 0;
	text->p = t.p + 3;
	text->len = t.len - 3;
	*text = trim(*text);
	return 1;
}

/* Any ATX heading (1 to 6 '#', then a blank or the end): ends a section. */
static int is_atx_heading(span t)
{
	size_t n = 0;

	while (n < t.len && t.p[n] == '#')
		n++;
	return n >= 1 && n <= 6 && (n == t.len || is_blank(t.p[n]));
}

/* ---- marker -------------------------------------------------------- */

static span skip_blanks(span s)
{
	while (s.len && is_blank(s.p[0])) {
		s.p++;
		s.len--;
	}
	return s;
}

static int is_marker_line(span t)
{
	if (!starts_with(t, "<!--"))
		return 0;
	t.p += 4;
	t.len -= 4;
	return starts_with(skip_blanks(t), "pm-bot:");
}

static int has_sub(span s, const char *lit)
{
	size_t n = strlen(lit), i;

	for (i = 0; i + n <= s.len; i++)
		if (!memcmp(s.p + i, lit, n))
			return 1;
	return 0;
}

/* Parse a marker line strictly; 1 when well-formed (id and rev set). */
static int parse_marker(span t, span *id, char rev[PMBOT_SHA256_HEX_SIZE])
{
	size_t i;

	t.p += 4;
	t.len -= 4;
	t = skip_blanks(t);
	if (!starts_with(t, "pm-bot:id="))
		return 0;
	t.p += 10;
	t.len -= 10;
	id->p = t.p;
	for (i = 0; i < t.len && !is_blank(t.p[i]); i++)
		/* A control character (NUL above all) is no id pm-bot renders. */
		if ((unsigned char)t.p[i] < 0x20 || t.p[i] == 0x7f)
			return 0;
	id->len = i;
	if (!id->len || has_sub(*id, "-->") || has_sub(*id, "<!--") || has_sub(*id, "--!>"))
		return 0;
	t.p += i;
	t.len -= i;
	if (!t.len)
		return 0;
	t = skip_blanks(t);
	if (!starts_with(t, "rev="))
		return 0;
	t.p += 4;
	t.len -= 4;
	if (t.len < 64)
		return 0;
	for (i = 0; i < 64; i++) {
		char c = t.p[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return 0;
		rev[i] = c;
	}
	rev[64] = '\0';
	t.p += 64;
	t.len -= 64;
	t = skip_blanks(t);
	return span_is(t, "-->");
}

/* ---- parse ----------------------------------------------------------- */

static char *span_dup(span s)
{
	return strndup(s.p, s.len);
}

void pmbot_body_free(pmbot_body *body)
{
	size_t i;

	for (i = 0; i < body->n_fields; i++) {
		if (!body->heading_block)
			free(body->fields[i].heading);
		if (body->fields[i].value != no_value)
			free(body->fields[i].value);
	}
	free(body->fields);
	free(body->heading_block);
	free(body->stable_id);
	memset(body, 0, sizeof(*body));
}

/*
 * The headings of a body are copied into one block (heading_block), made
 * at the first heading with `room` bytes, the rest of the body and a NUL:
 * a heading line is "###" and the heading, so its copy and NUL fit in the
 * line. `*used` counts the bytes taken.
 */
static char *heading_copy(pmbot_body *b, span heading, size_t room, size_t *used)
{
	char *h;

	if (!pmbot_render__fast)
		return span_dup(heading);
	if (!b->heading_block && !(b->heading_block = malloc(room)))
		return NULL;
	h = b->heading_block + *used;
	memcpy(h, heading.p, heading.len);
	h[heading.len] = '\0';
	*used += heading.len + 1;
	return h;
}

/* The block cut to the bytes used, the headings moved with it. */
static int heading_block_fit(pmbot_body *b, size_t room, size_t used)
{
	char *old = b->heading_block, *p;
	size_t i;

	if (!old || room - used < 64)
		return 0;
	if (!(p = malloc(used)))
		return -1;
	memcpy(p, old, used);
	for (i = 0; i < b->n_fields; i++)
		b->fields[i].heading = p + (b->fields[i].heading - old);
	free(old);
	b->heading_block = p;
	return 0;
}

/* Does the line hold a U+200C, the only character unneutralising takes out? */
static int has_zwnj(span s)
{
	const char *p = s.p, *end = s.p + s.len;

	while ((p = memchr(p, 0xe2, (size_t)(end - p))) != NULL) {
		if (end - p >= 3 && !memcmp(p, PMBOT_TEXT_ZWNJ, 3))
			return 1;
		p++;
	}
	return 0;
}

static int add_field(pmbot_body *b, size_t *alloc, span heading, int line, size_t room,
	size_t *used)
{
	pmbot_body_field *f;

	if (b->n_fields == *alloc) {
		size_t n = *alloc ? *alloc * 2 : 16;
		pmbot_body_field *p = realloc(b->fields, n * sizeof(*p));

		if (!p)
			return -1;
		b->fields = p;
		*alloc = n;
	}
	f = &b->fields[b->n_fields];
	f->heading = heading_copy(b, heading, room, used);
	/* Most values are empty or not read: no allocation for "". */
	f->value = pmbot_render__fast ? no_value : strdup("");
	f->line = line;
	if (!f->heading || !f->value) {
		if (!b->heading_block)
			free(f->heading);
		if (f->value != no_value)
			free(f->value);
		return -1;
	}
	b->n_fields++;
	return 0;
}

/* `only` NULL: every value; else only those under a heading equal to it. */
static int body_parse(pmbot_body *out, const char *body, size_t len, pmbot_diag_list *diags,
	const char *only)
{
	size_t pos = 0, alloc = 0, markers = 0, room = 0, used = 0;
	int lineno = 0, err = PMBOT_ERROR;
	long cur = -1;
	span line, first_id = { NULL, 0 };
	char rev[PMBOT_SHA256_HEX_SIZE] = "";
	heading_key key = { NULL, 0 };
	int ok = 0, lf_only;

	memset(out, 0, sizeof(*out));
	if (only)
		key = make_key(only);
	lf_only = pmbot_render__fast && (!len || !memchr(body, '\r', len));
	while (lf_only ? next_lf_line(body, len, &pos, &line) : next_line(body, len, &pos, &line)) {
		span t = trim(line), text;

		lineno++;
		if (is_marker_line(t)) {
			markers++;
			if (markers == 1) {
				out->marker_line = lineno;
				ok = parse_marker(t, &first_id, rev);
				if (!ok && diags &&
				    pmbot_diag_add(diags, PMBOT_SEV_WARNING, "BODY_MARKER_MALFORMED",
					    NULL, "", lineno, 1,
					    "the pm-bot marker is not <!-- pm-bot:id=<id> rev=<sha256> -->") < 0)
					goto done;
			} else if (markers == 2 && diags &&
				   pmbot_diag_add(diags, PMBOT_SEV_WARNING, "BODY_MARKER_MULTIPLE",
					   NULL, "", lineno, 1,
					   "a second pm-bot marker (the first is on line %d)",
					   out->marker_line) < 0) {
				goto done;
			}
			cur = -1;
			continue;
		}
		if (is_field_heading(t, &text)) {
			if (!room)
				room = len - (size_t)(line.p - body) + 1;
			if (add_field(out, &alloc, text, lineno, room, &used) < 0)
				goto done;
			cur = (long)out->n_fields - 1;
			/* A value not asked for is never read: it stays "". */
			if (only && !key_eq(out->fields[cur].heading, &key))
				cur = -1;
			continue;
		}
		if (is_atx_heading(t)) {
			cur = -1;
			continue;
		}
		if (cur >= 0 && t.len) {
			pmbot_buf clean = PMBOT_BUF_INIT;
			char *v = NULL;

			/*
			 * Values are compared with report values and set on Project
			 * fields: the U+200C rendering put in against mentions goes.
			 */
			if (span_is(t, PMBOT_NO_RESPONSE))
				v = pmbot_render__fast ? no_value : strdup("");
			else if (pmbot_render__fast && !has_zwnj(t))
				v = span_dup(t); /* nothing to take out */
			else if (pmbot_text_unneutralise(&clean, t.p, t.len) == 0)
				v = pmbot_buf_detach(&clean, NULL);
			pmbot_buf_free(&clean);
			if (!v)
				goto done;
			if (out->fields[cur].value != no_value)
				free(out->fields[cur].value);
			out->fields[cur].value = v;
			cur = -1;
		}
	}
	if (heading_block_fit(out, room, used) < 0)
		goto done;
	if (markers == 1 && ok) {
		if (!(out->stable_id = span_dup(first_id)))
			goto done;
		memcpy(out->rev, rev, sizeof(rev));
		out->marker = PMBOT_MARKER_OK;
	} else if (markers == 1) {
		out->marker = PMBOT_MARKER_MALFORMED;
	} else if (markers > 1) {
		out->marker = PMBOT_MARKER_MULTIPLE;
	}
	err = PMBOT_OK;
done:
	if (err)
		pmbot_body_free(out);
	return err;
}

int pmbot_body_parse(pmbot_body *out, const char *body, size_t len,
	pmbot_diag_list *diags)
{
	return body_parse(out, body, len, diags, NULL);
}

int pmbot_body_parse_only(pmbot_body *out, const char *body, size_t len,
	pmbot_diag_list *diags, const char *heading)
{
	return body_parse(out, body, len, diags, heading);
}

const char *pmbot_body_get(const pmbot_body *body, const char *heading)
{
	heading_key key = make_key(heading);
	size_t i;

	for (i = 0; i < body->n_fields; i++)
		if (key_eq(body->fields[i].heading, &key))
			return body->fields[i].value;
	return NULL;
}

/* 1 when "<!--" occurs in the `len` bytes at `s`. */
static int has_comment_open(const char *s, size_t len)
{
	const char *p = s, *end = s + len;

	while ((p = memchr(p, '<', (size_t)(end - p))) != NULL) {
		if ((size_t)(end - p) >= 4 && !memcmp(p, "<!--", 4))
			return 1;
		p++;
	}
	return 0;
}

int pmbot_body_rev(char out[PMBOT_SHA256_HEX_SIZE], const char *body, size_t len)
{
	pmbot_buf text = PMBOT_BUF_INIT;
	size_t pos = 0;
	span line;
	int err = 0, lead_marker = 0;

	/*
	 * Without a CR or a "<!--" no line is a marker and every line already
	 * ends in LF: the text hashed below is the body itself less its
	 * trailing blanks, hashed without the copy (every rendered body).
	 */
	if (!len || (!memchr(body, '\r', len) && !has_comment_open(body, len))) {
		while (len && (is_blank(body[len - 1]) || body[len - 1] == '\n'))
			len--;
		return pmbot_sha256_hex(out, len ? body : "", len) < 0 ? PMBOT_ERROR : PMBOT_OK;
	}

	while (next_line(body, len, &pos, &line) && !err) {
		if (is_marker_line(trim(line))) {
			lead_marker |= !text.len;
			continue;
		}
		/*
		 * The blank lines after a marker that comes first go, as those
		 * at the end do: the marker first hashes like the marker last,
		 * so moving it is no edit. Only after a marker: blank lines
		 * that open a body written with the marker last (a model's text
		 * can start so) still count, and its rev stays what it was.
		 */
		if (lead_marker && !text.len && !trim(line).len)
			continue;
		err |= pmbot_buf_put(&text, line.p, line.len);
		err |= pmbot_buf_putc(&text, '\n');
	}
	while (!err && text.len && (is_blank(text.buf[text.len - 1]) ||
				    text.buf[text.len - 1] == '\n'))
		pmbot_buf_truncate(&text, text.len - 1);
	if (!err)
		err = pmbot_sha256_hex(out, text.buf, text.len);
	pmbot_buf_free(&text);
	return err ? PMBOT_ERROR : PMBOT_OK;
}

/* ---- hours ------------------------------------------------------------ */

static int unit_ok(span u)
{
	static const char *const units[] = { "h", "hr", "hrs", "hour", "hours" };
	size_t i;

	if (!u.len)
		return 1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (u.len == strlen(units[i]) && starts_with_ci(u, units[i]))
			return 1;
	return 0;
}

int pmbot_body_parse_hours(double *out, const char *value)
{
	span s = { value, strlen(value) }, u;
	size_t i = 0, digits = 0, start;
	char num[64];
	char *end;
	double d;

	s = trim(s);
	if (s.len && s.p[0] == '~') {
		s.p++;
		s.len--;
		s = skip_blanks(s);
	}
	start = i;
	if (i < s.len && (s.p[i] == '+' || s.p[i] == '-'))
		i++;
	while (i < s.len && isdigit((unsigned char)s.p[i])) {
		i++;
		digits++;
	}
	if (i < s.len && s.p[i] == '.') {
		i++;
		while (i < s.len && isdigit((unsigned char)s.p[i])) {
			i++;
			digits++;
		}
	}
	if (!digits)
		return PMBOT_EINVALID;
	if (i < s.len && (s.p[i] == 'e' || s.p[i] == 'E')) {
		size_t j = i + 1, ed = 0;

		if (j < s.len && (s.p[j] == '+' || s.p[j] == '-'))
			j++;
		while (j < s.len && isdigit((unsigned char)s.p[j])) {
			j++;
			ed++;
		}
		if (ed)
			i = j;
	}
	if (i - start >= sizeof(num))
		return PMBOT_EINVALID;
	memcpy(num, s.p + start, i - start);
	num[i - start] = '\0';
	u.p = s.p + i;
	u.len = s.len - i;
	if (!unit_ok(skip_blanks(u)))
		return PMBOT_EINVALID;
	d = strtod(num, &end);
	if (*end || !isfinite(d))
		return PMBOT_EINVALID;
	*out = d;
	return PMBOT_OK;
}
