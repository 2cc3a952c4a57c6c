#include "pmbot/report.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/buf.h"
#include "pmbot/json.h"
#include "pmbot/utf8.h"

void pmbot_limits_default(pmbot_limits *lim)
{
	lim->max_bytes = (size_t)64 << 20;
	lim->max_depth = 64;
	lim->max_alias_nodes = 10000;
}

typedef struct {
	const char *file;
	int line_base;
	int col_base;
	pmbot_diag_list *diags;
} where;

/* Add a diagnostic at a 1-based line/column of the parsed text. */
__attribute__((format(printf, 6, 7)))
static int fail(const where *w, const char *code, const char *path, int line,
	int column, const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	va_list ap;
	int err = PMBOT_ERROR;

	va_start(ap, fmt);
	if (pmbot_buf_vprintf(&msg, fmt, ap) < 0) {
		va_end(ap);
		goto done;
	}
	va_end(ap);
	if (line < 1) {
		/* Unknown: point at the start of the block rather than nowhere. */
		line = 1;
		column = 1;
	}
	if (pmbot_diag_add(w->diags, PMBOT_SEV_ERROR, code, w->file, path,
			w->line_base + line - 1, w->col_base + (column < 1 ? 1 : column),
			"%s", msg.buf) < 0)
		goto done;
	err = PMBOT_EINVALID;
done:
	pmbot_buf_free(&msg);
	return err;
}

static int is_cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

/*
 * A cursor over text known to be valid UTF-8, counting lines on '\n' and
 * columns in characters like jansson and pmbot_utf8_valid do.
 */
typedef struct {
	const unsigned char *s;
	size_t end;
	size_t pos;
	int line;
	int col;
} cursor;

static void adv(cursor *c)
{
	if (c->s[c->pos] == '\n') {
		c->line++;
		c->col = 1;
	} else if (!is_cont(c->s[c->pos])) {
		c->col++;
	}
	c->pos++;
}

static void skip_ws(cursor *c)
{
	while (c->pos < c->end && (c->s[c->pos] == ' ' || c->s[c->pos] == '\t' ||
			c->s[c->pos] == '\n' || c->s[c->pos] == '\r'))
		adv(c);
}

/*
 * Depth check before jansson sees the text, so hostile nesting fails at the
 * first bracket past the limit with its position. Strings are skipped;
 * the text may be invalid JSON here, so unbalanced closers only floor at 0.
 */
static int find_too_deep(const char *text, size_t len, size_t max_depth, cursor *at)
{
	cursor c = { (const unsigned char *)text, len, 0, 1, 1 };
	size_t depth = 0;
	int in_str = 0;

	while (c.pos < c.end) {
		unsigned char ch = c.s[c.pos];

		if (in_str) {
			if (ch == '\\' && c.pos + 1 < c.end)
				adv(&c);
			else if (ch == '"')
				in_str = 0;
		} else if (ch == '"') {
			in_str = 1;
		} else if (ch == '[' || ch == '{') {
			if (++depth > max_depth) {
				*at = c;
				return 1;
			}
		} else if ((ch == ']' || ch == '}') && depth) {
			depth--;
		}
		adv(&c);
	}
	return 0;
}

/*
 * The source-map scanner. It walks JSON that jansson accepted (or a prefix
 * that jansson accepted, when explaining an error) and never builds values:
 * it only tracks the JSON Pointer of each value and where it starts. It is
 * iterative with a heap stack, and checks bounds at every step so a
 * malformed tail stops it instead of misleading it.
 */
enum { SCAN_DONE, SCAN_STOPPED, SCAN_DUP, SCAN_MALFORMED };

typedef struct {
	int is_obj;
	size_t index;
	size_t base;  /* pointer length of the container itself */
	json_t *keys; /* duplicate mode: key -> line of its first occurrence */
} sframe;

typedef struct {
	cursor c;
	pmbot_srcmap *map; /* entries are added here when not NULL */
	int line_base;     /* ...at these file positions */
	int col_base;
	size_t stop_at;    /* stop at the first token starting at or past it */
	int check_dups;
	int track_last;    /* keep `last`: the latest key or value started */
	pmbot_buf ptr;
	pmbot_buf last;
	pmbot_buf key;
	sframe *frames;
	size_t nframes;
	size_t aframes;
	int dup_line, dup_col, first_line; /* SCAN_DUP */
} scanner;

static void scanner_init(scanner *sc, const char *text, size_t len)
{
	memset(sc, 0, sizeof(*sc));
	sc->c.s = (const unsigned char *)text;
	sc->c.end = len;
	sc->c.line = 1;
	sc->c.col = 1;
	sc->stop_at = SIZE_MAX;
	pmbot_buf_init(&sc->ptr, SIZE_MAX / 2);
	pmbot_buf_init(&sc->last, SIZE_MAX / 2);
	pmbot_buf_init(&sc->key, SIZE_MAX / 2);
}

static void scanner_free(scanner *sc)
{
	size_t i;

	for (i = 0; i < sc->nframes; i++)
		json_decref(sc->frames[i].keys);
	free(sc->frames);
	pmbot_buf_free(&sc->ptr);
	pmbot_buf_free(&sc->last);
	pmbot_buf_free(&sc->key);
}

static int push_frame(scanner *sc, int is_obj)
{
	sframe *f;

	if (sc->nframes == sc->aframes) {
		size_t n = sc->aframes ? sc->aframes * 2 : 16;
		sframe *p = realloc(sc->frames, n * sizeof(*p));

		if (!p)
			return -1;
		sc->frames = p;
		sc->aframes = n;
	}
	f = &sc->frames[sc->nframes];
	f->is_obj = is_obj;
	f->index = 0;
	f->base = sc->ptr.len;
	f->keys = NULL;
	if (is_obj && sc->check_dups && !(f->keys = json_object()))
		return -1;
	sc->nframes++;
	return 0;
}

static void pop_frame(scanner *sc)
{
	sc->nframes--;
	json_decref(sc->frames[sc->nframes].keys);
}

/*
 * Explaining an error, the path is the innermost thing last seen: the key
 * or value that started last, or the container that closed last.
 */
static int set_last(scanner *sc)
{
	if (!sc->track_last)
		return 0;
	pmbot_buf_clear(&sc->last);
	return pmbot_buf_put(&sc->last, sc->ptr.buf, sc->ptr.len);
}

/* A value starts at the cursor: record it. 0, or -1 out of memory. */
static int mark(scanner *sc)
{
	if (set_last(sc) < 0)
		return -1;
	if (sc->map && pmbot_srcmap_add(sc->map, sc->ptr.buf,
			sc->line_base + sc->c.line - 1, sc->col_base + sc->c.col) < 0)
		return -1;
	return 0;
}

/*
 * pmbot_json_pointer_push* with fast paths, same bytes: most keys need no
 * escaping and indices need no printf. At ~15 values per report item the
 * general functions were a third of the source map's cost.
 */
static int push_key(pmbot_buf *ptr, const char *key, size_t len)
{
	if (memchr(key, '~', len) || memchr(key, '/', len))
		return pmbot_json_pointer_push(ptr, key);
	return pmbot_buf_putc(ptr, '/') < 0 || pmbot_buf_put(ptr, key, len) < 0 ? -1 : 0;
}

static int push_index(pmbot_buf *ptr, size_t index)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + index % 10);
		index /= 10;
	} while (index);
	tmp[--i] = '/';
	return pmbot_buf_put(ptr, tmp + i, sizeof(tmp) - i);
}

static int hexval(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Four hex digits after "\u" at the cursor; -1 when malformed. */
static long read_hex4(cursor *c)
{
	long v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		int h;

		if (c->pos >= c->end || (h = hexval(c->s[c->pos])) < 0)
			return -1;
		v = v * 16 + h;
		adv(c);
	}
	return v;
}

static int put_utf8(pmbot_buf *b, unsigned long cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return pmbot_buf_put(b, u, n);
}

/*
 * Read the string literal at the cursor (on its '"'), decoding it into
 * `out` when not NULL. 1 when read, 0 when malformed, -1 out of memory.
 */
static int read_string(cursor *c, pmbot_buf *out)
{
	adv(c);
	while (c->pos < c->end) {
		size_t run = c->pos;
		unsigned char ch;
		long cp, lo;

		while (c->pos < c->end && c->s[c->pos] != '"' && c->s[c->pos] != '\\')
			adv(c);
		if (out && pmbot_buf_put(out, c->s + run, c->pos - run) < 0)
			return -1;
		if (c->pos >= c->end)
			return 0;
		if (c->s[c->pos] == '"') {
			adv(c);
			return 1;
		}
		adv(c);
		if (c->pos >= c->end)
			return 0;
		ch = c->s[c->pos];
		adv(c);
		if (!out)
			continue;
		switch (ch) {
		case '"': case '\\': case '/': cp = ch; break;
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			if ((cp = read_hex4(c)) < 0)
				return 0;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (c->pos + 1 >= c->end || c->s[c->pos] != '\\' ||
				    c->s[c->pos + 1] != 'u')
					return 0;
				adv(c);
				adv(c);
				if ((lo = read_hex4(c)) < 0xdc00 || lo > 0xdfff)
					return 0;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				return 0;
			}
			break;
		default:
			return 0;
		}
		if (put_utf8(out, (unsigned long)cp) < 0)
			return -1;
	}
	return 0;
}

static int ends_scalar(unsigned char ch)
{
	return ch == ',' || ch == ']' || ch == '}' || ch == ' ' || ch == '\t' ||
		ch == '\n' || ch == '\r';
}

static int at_stop(const scanner *sc)
{
	return sc->c.pos >= sc->stop_at;
}

/* An object key at the cursor: push it onto the pointer and record it. */
static int scan_key(scanner *sc)
{
	sframe *top = &sc->frames[sc->nframes - 1];
	int line = sc->c.line, col = sc->c.col, rc;

	if (sc->c.s[sc->c.pos] != '"')
		return SCAN_MALFORMED;
	pmbot_buf_clear(&sc->key);
	if ((rc = read_string(&sc->c, &sc->key)) <= 0)
		return rc < 0 ? -1 : SCAN_MALFORMED;
	if (memchr(sc->key.buf, '\0', sc->key.len))
		return SCAN_MALFORMED;
	if (push_key(&sc->ptr, sc->key.buf, sc->key.len) < 0)
		return -1;
	if (top->keys) {
		json_t *first = json_object_get(top->keys, sc->key.buf);

		if (first) {
			sc->dup_line = line;
			sc->dup_col = col;
			sc->first_line = (int)json_integer_value(first);
			return SCAN_DUP;
		}
		if (json_object_set_new(top->keys, sc->key.buf, json_integer(line)) < 0)
			return -1;
	}
	if (set_last(sc) < 0)
		return -1;
	if (sc->map && pmbot_srcmap_add(sc->map, sc->ptr.buf,
			sc->line_base + line - 1, sc->col_base + col) < 0)
		return -1;
	skip_ws(&sc->c);
	if (sc->c.pos >= sc->c.end || sc->c.s[sc->c.pos] != ':')
		return SCAN_MALFORMED;
	adv(&sc->c);
	return SCAN_DONE;
}

enum { ST_VALUE, ST_KEY, ST_AFTER };

/* Returns one of SCAN_*, or -1 when out of memory. */
static int scan(scanner *sc)
{
	cursor *c = &sc->c;
	int state = ST_VALUE, record = 1, rc;

	for (;;) {
		switch (state) {
		case ST_VALUE:
			skip_ws(c);
			if (at_stop(sc))
				return SCAN_STOPPED;
			if (c->pos >= c->end)
				return SCAN_MALFORMED;
			if (record && mark(sc) < 0)
				return -1;
			if (c->s[c->pos] == '{' || c->s[c->pos] == '[') {
				int is_obj = c->s[c->pos] == '{';

				if (push_frame(sc, is_obj) < 0)
					return -1;
				adv(c);
				skip_ws(c);
				if (c->pos < c->end && c->s[c->pos] == (is_obj ? '}' : ']')) {
					adv(c);
					pop_frame(sc);
					state = ST_AFTER;
				} else if (is_obj) {
					state = ST_KEY;
				} else {
					if (push_index(&sc->ptr, 0) < 0)
						return -1;
					record = 1;
				}
			} else if (c->s[c->pos] == '"') {
				if ((rc = read_string(c, NULL)) <= 0)
					return rc < 0 ? -1 : SCAN_MALFORMED;
				state = ST_AFTER;
			} else {
				size_t start = c->pos;

				while (c->pos < c->end && !ends_scalar(c->s[c->pos]))
					adv(c);
				if (c->pos == start)
					return SCAN_MALFORMED;
				state = ST_AFTER;
			}
			break;
		case ST_KEY:
			skip_ws(c);
			if (at_stop(sc))
				return SCAN_STOPPED;
			if (c->pos >= c->end)
				return SCAN_MALFORMED;
			if ((rc = scan_key(sc)) != SCAN_DONE)
				return rc;
			record = 0;
			state = ST_VALUE;
			break;
		case ST_AFTER: {
			sframe *top;

			if (!sc->nframes)
				return set_last(sc) < 0 ? -1 : SCAN_DONE;
			top = &sc->frames[sc->nframes - 1];
			pmbot_buf_truncate(&sc->ptr, top->base);
			skip_ws(c);
			if (at_stop(sc))
				return SCAN_STOPPED;
			if (c->pos >= c->end)
				return SCAN_MALFORMED;
			if (c->s[c->pos] == ',') {
				adv(c);
				if (top->is_obj) {
					state = ST_KEY;
				} else {
					if (push_index(&sc->ptr, ++top->index) < 0)
						return -1;
					record = 1;
					state = ST_VALUE;
				}
			} else if (c->s[c->pos] == (top->is_obj ? '}' : ']')) {
				adv(c);
				pop_frame(sc);
				if (set_last(sc) < 0)
					return -1;
			} else {
				return SCAN_MALFORMED;
			}
			break;
		}
		}
	}
}

/*
 * The pointer of the last key or value that starts before byte `stop` of
 * the text, for a diagnostic's path. `*path` is malloc'd ("" when unknown);
 * -1 when out of memory.
 */
static int path_before(char **path, const char *text, size_t len, size_t stop)
{
	scanner sc;
	int rc;

	*path = NULL;
	scanner_init(&sc, text, len);
	sc.stop_at = stop;
	sc.track_last = 1;
	rc = scan(&sc);
	if (rc >= 0)
		*path = pmbot_buf_detach(&sc.last, NULL);
	scanner_free(&sc);
	return *path ? 0 : -1;
}

static int report_too_deep(const where *w, const char *text, size_t len,
	const cursor *at, size_t max_depth)
{
	char *path = NULL;
	int err;

	/* One past the bracket, so the bracket itself is the last value started. */
	if (path_before(&path, text, len, at->pos + 1) < 0)
		return PMBOT_ERROR;
	err = fail(w, "INPUT_TOO_DEEP", path, at->line, at->col,
		"nesting deeper than %zu levels", max_depth);
	free(path);
	return err;
}

/*
 * jansson cuts long messages at a byte count, possibly inside a character
 * it quotes; keep diagnostics valid UTF-8 by dropping the broken tail.
 */
static size_t whole_chars(const char *msg)
{
	size_t len = strlen(msg), bad = len;

	if (!pmbot_utf8_valid(msg, len, &bad, NULL, NULL))
		return bad;
	return len;
}

static int report_duplicate(const where *w, const char *text, size_t len,
	const json_error_t *jerr)
{
	scanner sc;
	int rc, err = PMBOT_ERROR;

	scanner_init(&sc, text, len);
	sc.check_dups = 1;
	rc = scan(&sc);
	if (rc < 0)
		goto done;
	if (rc == SCAN_DUP)
		err = fail(w, "DUPLICATE_KEY", sc.ptr.buf, sc.dup_line, sc.dup_col,
			"duplicate key; first defined on line %d",
			w->line_base + sc.first_line - 1);
	else
		err = fail(w, "DUPLICATE_KEY", "", jerr->line, jerr->column, "%.*s",
			(int)whole_chars(jerr->text), jerr->text);
done:
	scanner_free(&sc);
	return err;
}

static int report_jansson(const where *w, const char *text, size_t len,
	const json_error_t *jerr)
{
	const char *code = "REPORT_PARSE_JSON";
	char *path = NULL;
	int err;

	switch (json_error_code(jerr)) {
	case json_error_out_of_memory:
		return PMBOT_ERROR;
	case json_error_duplicate_key:
		return report_duplicate(w, text, len, jerr);
	case json_error_stack_overflow:
		code = "INPUT_TOO_DEEP";
		break;
	case json_error_invalid_utf8:
	case json_error_null_character:
		/* An escaped \u0000: C strings downstream cannot hold it. */
		code = "INVALID_UTF8";
		break;
	default:
		break;
	}
	if (path_before(&path, text, len, jerr->position > 0 ? (size_t)jerr->position : 0) < 0)
		return PMBOT_ERROR;
	err = fail(w, code, path, jerr->line, jerr->column, "%.*s",
		(int)whole_chars(jerr->text), jerr->text);
	free(path);
	return err;
}

static int build_map(pmbot_srcmap *map, const char *text, size_t len,
	int line_base, int col_base)
{
	scanner sc;
	int rc;

	scanner_init(&sc, text, len);
	sc.map = map;
	sc.line_base = line_base;
	sc.col_base = col_base;
	rc = scan(&sc);
	scanner_free(&sc);
	/* jansson accepted the text, so anything but a full walk is our bug. */
	return rc == SCAN_DONE ? 0 : -1;
}

int pmbot_json_parse(json_t **out, pmbot_srcmap *map, const char *file,
	const char *text, size_t len, int line_base, int col_base,
	const pmbot_limits *lim, pmbot_diag_list *diags)
{
	where w = { file, line_base, col_base, diags };
	pmbot_limits deflim;
	json_error_t jerr;
	json_t *root = NULL;
	size_t bad = 0;
	cursor at = { NULL, 0, 0, 0, 0 };
	int line = 0, col = 0, err;

	*out = NULL;
	if (!text && len)
		return PMBOT_ERROR;
	if (!text)
		text = "";
	if (!lim) {
		pmbot_limits_default(&deflim);
		lim = &deflim;
	}
	if (len > lim->max_bytes) {
		err = fail(&w, "INPUT_TOO_LARGE", "", 1, 1,
			"%zu bytes of JSON; the limit is %zu", len, lim->max_bytes);
		goto done;
	}
	if (!pmbot_utf8_valid(text, len, &bad, &line, &col)) {
		if (text[bad])
			err = fail(&w, "INVALID_UTF8", "", line, col,
				"invalid UTF-8 (byte 0x%02x)", (unsigned char)text[bad]);
		else
			err = fail(&w, "INVALID_UTF8", "", line, col, "NUL byte");
		goto done;
	}
	if (find_too_deep(text, len, lim->max_depth, &at)) {
		err = report_too_deep(&w, text, len, &at, lim->max_depth);
		goto done;
	}
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!root) {
		err = report_jansson(&w, text, len, &jerr);
		goto done;
	}
	err = PMBOT_ERROR;
	if (map && build_map(map, text, len, line_base, col_base) < 0)
		goto done;
	*out = root;
	root = NULL;
	err = PMBOT_OK;
done:
	json_decref(root);
	return err;
}
