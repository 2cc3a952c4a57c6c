#include "pmbot/doc.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "pmbot/array.h"
#include "pmbot/buf.h"
#include "pmbot/json.h"
#include "pmbot/utf8.h"
#include "pmbot/mem.h"
#include "pmbot/banned.h"

/*
 * One pass over the text builds the jansson value and the source map
 * together. The fast path only decides "fine" or "stopped here, expecting
 * that"; everything a diagnostic needs (jansson's message and position,
 * the check order of the header) is worked out afterwards on the error
 * path, which may rescan the text as often as it likes.
 */

#if JSON_INTEGER_IS_LONG_LONG
#define INT_MAX_U ((unsigned long long)LLONG_MAX)
#else
#define INT_MAX_U ((unsigned long long)LONG_MAX)
#endif

void pmbot_limits_default(pmbot_limits *lim)
{
	lim->max_bytes = (size_t)64 << 20;
	lim->max_depth = 64;
	lim->max_alias_nodes = 10000;
	lim->max_alias_bytes = (size_t)4 << 20;
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

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* jansson's l_isalpha: ASCII letters, whatever the locale. */
static int is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Four hex digits at `s` (all readable); 0x10000 when one is not hex. */
static unsigned long hex4(const unsigned char *s)
{
	unsigned long v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		int h = hexval(s[i]);

		if (h < 0)
			return 0x10000;
		v = v * 16 + (unsigned long)h;
	}
	return v;
}

/* `cp` as UTF-8 into `u` (room for 4); the byte count. */
static size_t put_utf8(char *u, unsigned long cp)
{
	if (cp < 0x80) {
		u[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	u[0] = (char)(0xf0 | (cp >> 18));
	u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	u[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * pmbot_json_pointer_push* with the same bytes, but on counted keys (a key
 * is a slice of the text, not a C string) and written in place after one
 * grow: the map takes a pointer per value, so this is on the hot path.
 */
static int push_key(pmbot_buf *ptr, const char *key, size_t len)
{
	size_t i;
	char *o;

	if (len > SIZE_MAX / 4 || pmbot_buf_grow(ptr, 1 + 2 * len) < 0)
		return -1;
	o = ptr->buf + ptr->len;
	*o++ = '/';
	for (i = 0; i < len; i++) {
		if (key[i] == '~' || key[i] == '/') {
			*o++ = '~';
			*o++ = key[i] == '~' ? '0' : '1';
		} else {
			*o++ = key[i];
		}
	}
	ptr->len = (size_t)(o - ptr->buf);
	ptr->buf[ptr->len] = '\0';
	return 0;
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

/*
 * The compact document (doc.h). `arena` is sized for the whole text up
 * front: a literal of L bytes decodes to at most L - 2 bytes, so its
 * bytes and NUL fit in L and the arena never moves (nodes point into it).
 */
typedef struct {
	uint32_t obj;          /* object node */
	uint32_t mem;          /* member node + 1; 0 marks a free slot */
} key_slot;

struct pmbot_jdoc {
	pmbot_jnode *nodes;
	size_t count;
	size_t alloc;
	char *arena;
	size_t used;
	size_t cap;
	/*
	 * While building: members of objects past BIG_OBJECT, so the
	 * duplicate check of a hostile object is not quadratic.
	 */
	key_slot *slots;
	size_t n_slots;        /* a power of two, or 0 */
	size_t used_slots;
};

#define BIG_OBJECT 16

/* Why the fast path stopped. */
enum { STOP_NONE, STOP_SYNTAX, STOP_DUP, STOP_DEEP, STOP_NOMEM };

/*
 * What it expected where it stopped: jansson words its error after this
 * (an array item at the end of input is "']' expected", a member value
 * there is "unexpected token").
 */
enum { WANT_VALUE, WANT_ITEM, WANT_KEY, WANT_COLON, WANT_ARRAY_NEXT,
	WANT_OBJECT_NEXT, WANT_END };

typedef struct {
	const unsigned char *text;
	const unsigned char *end;
	const unsigned char *p;
	const unsigned char *line_start;
	size_t cont;           /* UTF-8 continuation bytes in [line_start, p) */
	int line;
	size_t depth;
	size_t max_depth;
	pmbot_srcmap *map;     /* NULL: no map wanted */
	pmbot_jdoc *cd;        /* the compact sink; NULL: jansson values */
	int pl, pc;            /* position of the next compact node, file terms */
	const char *pk;        /* key of the next compact node; NULL: none */
	size_t pkl;
	int line_base;
	int col_base;
	char point;            /* the C library's decimal point; 0 until needed */
	/*
	 * The pointer of the value being parsed. A finished item or member
	 * stays on it until the next one starts, so a stop at the end of
	 * input names the last thing read, as the old two-pass parser did.
	 */
	pmbot_buf ptr;
	pmbot_buf str;         /* decoded string values that had escapes */
	pmbot_buf num;         /* real-number tokens too long for the stack */
	int stop;
	int want;
	const unsigned char *at; /* where the stop is: token, bracket or key */
	int first_line;        /* STOP_DUP: text line of the first key */
} parser;

static void parser_init(parser *ps, const char *text, size_t len, size_t max_depth)
{
	memset(ps, 0, sizeof(*ps));
	ps->text = (const unsigned char *)text;
	ps->end = ps->text + len;
	ps->p = ps->text;
	ps->line_start = ps->text;
	ps->line = 1;
	ps->max_depth = max_depth;
	pmbot_buf_init(&ps->ptr, SIZE_MAX / 2);
	pmbot_buf_init(&ps->str, SIZE_MAX / 2);
	pmbot_buf_init(&ps->num, SIZE_MAX / 2);
}

static void parser_free(parser *ps)
{
	pmbot_buf_free(&ps->ptr);
	pmbot_buf_free(&ps->str);
	pmbot_buf_free(&ps->num);
}

static int halt(parser *ps, int stop, int want, const unsigned char *at)
{
	ps->stop = stop;
	ps->want = want;
	ps->at = at;
	return -1;
}

/* Past the run of spaces at `p`, at most up to `end`. */
static const unsigned char *skip_spaces(const unsigned char *p, const unsigned char *end)
{
#if defined(__SSE2__)
	/*
	 * Pretty-printed text indents every line: sixteen bytes per compare,
	 * and the exact place of the first byte that is not a space.
	 */
	while (end - p >= 16) {
		__m128i v;
		unsigned m;

		memcpy(&v, p, 16);
		m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' '))) ^ 0xffffu;
		if (m)
			return p + __builtin_ctz(m);
		p += 16;
	}
#endif
	while (end - p >= 8 && !memcmp(p, "        ", 8))
		p += 8;
	while (p < end && *p == ' ')
		p++;
	return p;
}

/* Only the four JSON whitespace characters; lines end at '\n'. */
static void skip_ws_run(parser *ps)
{
	const unsigned char *p = ps->p, *end = ps->end;

	while (p < end) {
		if (*p == ' ') {
			p = skip_spaces(p + 1, end);
		} else if (*p == '\n') {
			p++;
			ps->line++;
			ps->line_start = p;
			ps->cont = 0;
		} else if (*p == '\t' || *p == '\r') {
			p++;
		} else {
			break;
		}
	}
	ps->p = p;
}

/*
 * Compact text (a State file) has no whitespace between tokens at all:
 * every byte above ' ' ends the run before it starts, without a call.
 */
static inline void skip_ws(parser *ps)
{
	const unsigned char *p = ps->p;

	if (p < ps->end && *p > ' ')
		return;
	/* Pretty-printed: the one space after a member's ':'. */
	if (ps->end - p >= 2 && p[0] == ' ' && p[1] > ' ') {
		ps->p = p + 1;
		return;
	}
	skip_ws_run(ps);
}

/* 1-based column of `at` on the current line, in characters. */
static int column_of(const parser *ps, const unsigned char *at)
{
	return (int)((size_t)(at - ps->line_start) - ps->cont) + 1;
}

/* Record the current pointer at file position (line, col). 0, or -1 out of memory. */
static inline int mark(parser *ps, int line, int col)
{
	if (ps->cd) {
		ps->pl = ps->line_base + line - 1;
		ps->pc = ps->col_base + col;
	}
	if (!ps->map)
		return 0;
	return pmbot_srcmap_addn(ps->map, ps->ptr.buf, ps->ptr.len, ps->line_base + line - 1,
		ps->col_base + col);
}

/*
 * Does the 8-byte word hold '"', '\\', a control character or a non-ASCII
 * byte? The classic has-zero-byte tricks: never a false "no", and a false
 * "yes" only costs a look at the bytes one by one.
 */
static int word_special(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');

	return ((((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w)
		& highs) != 0;
}

static int is_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/*
 * The byte a one-letter escape stands for; 0 for 'u' and anything invalid.
 * A table: bodies have an escape every line, and a load inlines where a
 * switch became a call.
 */
static const char escape_byte[256] = {
	['"'] = '"', ['\\'] = '\\', ['/'] = '/', ['b'] = '\b', ['f'] = '\f',
	['n'] = '\n', ['r'] = '\r', ['t'] = '\t',
};

static inline char simple_escape(unsigned char e)
{
	return escape_byte[e];
}

/*
 * Decode the escape at `p` (on its '\\') into `u` (at most 4 bytes).
 * ESCAPE(bytes consumed, bytes written), or 0 when jansson would refuse
 * it (unknown escape, bad hex, lone surrogate) or it is \u0000. One value,
 * not an output parameter: a local whose address is taken costs the
 * hardened build a stack canary on every string.
 */
#define ESCAPE(used, wrote) ((used) * 8 + (wrote))
#define ESCAPE_USED(e) ((e) / 8)
#define ESCAPE_WROTE(e) ((e) % 8)

static size_t decode_escape(char *u, const unsigned char *p, const unsigned char *end)
{
	unsigned long cp, lo;
	char c;

	if (end - p < 2)
		return 0;
	if ((c = simple_escape(p[1]))) {
		u[0] = c;
		return ESCAPE(2, 1);
	}
	if (p[1] != 'u' || end - p < 6 || (cp = hex4(p + 2)) > 0xffff || cp == 0)
		return 0;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return 0;
	if (cp < 0xd800 || cp > 0xdbff) {
		return ESCAPE(6, put_utf8(u, cp));
	}
	if (end - p < 12 || p[6] != '\\' || p[7] != 'u')
		return 0;
	lo = hex4(p + 8);
	if (lo < 0xdc00 || lo > 0xdfff)
		return 0;
	cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	return ESCAPE(12, put_utf8(u, cp));
}

/* decode_escape() onto the end of `dec`. Bytes consumed, 0 when refused, -1 out of memory. */
static long unescape(pmbot_buf *dec, const unsigned char *p, const unsigned char *end)
{
	char u[4];
	size_t e = decode_escape(u, p, end);

	if (!e)
		return 0;
	return pmbot_buf_put(dec, u, ESCAPE_WROTE(e)) < 0 ? -1 : (long)ESCAPE_USED(e);
}

/*
 * The string literal at ps->p (on its '"'). `*s`/`*n` get the decoded
 * bytes: a slice of the text when there is no escape (the common case, no
 * copy), else `dec`. UTF-8 is validated here, so jansson's checks can be
 * skipped (json_stringn_nocheck). 1 when read (ps->p after the closing
 * quote), 0 when refused, -1 when out of memory.
 */
static int scan_string(parser *ps, pmbot_buf *dec, const char **s, size_t *n)
{
	const unsigned char *start = ps->p + 1, *p = start, *run = start, *end = ps->end;
	int escaped = 0;

	for (;;) {
		size_t k;
		long used;
		char c;

#if defined(__SSE2__)
		/*
		 * Sixteen bytes per step, and the exact place of the first byte
		 * to look at: signed, a byte under 0x20 is a control character or
		 * (negative) not ASCII. Bodies have an escape every line or so,
		 * which the word loop below then finds one byte at a time.
		 */
		while (end - p >= 16) {
			__m128i v;
			int m;

			memcpy(&v, p, 16);
			m = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(
				_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
				_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
				_mm_cmplt_epi8(v, _mm_set1_epi8(0x20))));
			if (m) {
				/* Exactly there: the word and byte loops would only agree. */
				p += __builtin_ctz((unsigned)m);
				goto special;
			}
			p += 16;
		}
#endif
		while (end - p >= 8) {
			uint64_t w;

			memcpy(&w, p, 8);
			if (word_special(w))
				break;
			p += 8;
		}
		while (p < end && is_plain(*p))
			p++;
		if (p >= end)
			return 0;
#if defined(__SSE2__)
special:
#endif
		if (*p == '"')
			break;
		if (*p >= 0x80) {
			if (!(k = pmbot_utf8_seq(p, (size_t)(end - p))))
				return 0;
			ps->cont += k - 1;
			p += k;
			continue;
		}
		if (*p != '\\')
			return 0; /* a control character */
		if (!escaped) {
			pmbot_buf_clear(dec);
			escaped = 1;
		}
		/*
		 * Text in bodies has an escape every line or so: the run before
		 * it and a one-byte escape go in with one check for room.
		 */
		k = (size_t)(p - run);
		if (dec->cap - dec->len < k + 2 && pmbot_buf_grow(dec, k + 1) < 0)
			return -1;
		memcpy(dec->buf + dec->len, run, k);
		dec->len += k;
		if (end - p >= 2 && (c = simple_escape(p[1]))) {
			dec->buf[dec->len++] = c;
			p += 2;
		} else {
			dec->buf[dec->len] = '\0';
			if ((used = unescape(dec, p, end)) <= 0)
				return used < 0 ? -1 : 0;
			p += used;
		}
		run = p;
	}
	if (escaped) {
		if (pmbot_buf_put(dec, run, (size_t)(p - run)) < 0)
			return -1;
		dec->buf[dec->len] = '\0';
		*s = dec->buf;
		*n = dec->len;
	} else {
		*s = (const char *)start;
		*n = (size_t)(p - start);
	}
	ps->p = p + 1;
	return 1;
}

/*
 * scan_string() for the compact sink, in the same pass: the decoded bytes
 * and a NUL go straight into the arena, where the node will point, so a
 * string is read once and written once, with no buffer between. Blocks
 * are stored before they are looked at, which stays inside the arena's
 * len + 1 bytes: every literal before this one took at most its own
 * length of arena, so the arena end lags the text being read by at least
 * one byte (this one's opening quote), and an escape only widens the gap.
 * Same results as scan_string(), and never out of memory.
 */
static int scan_string_cd(parser *ps, const char **s, size_t *n)
{
	pmbot_jdoc *cd = ps->cd;
	const unsigned char *p = ps->p + 1, *end = ps->end;
	char *d0 = cd->arena + cd->used, *d = d0;

	for (;;) {
		size_t k;
		char c;

#if defined(__SSE2__)
		while (end - p >= 16) {
			__m128i v;
			int m;

			v = _mm_loadu_si128((const __m128i *)(const void *)p);
			_mm_storeu_si128((__m128i *)(void *)d, v);
			m = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(
				_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
				_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
				_mm_cmplt_epi8(v, _mm_set1_epi8(0x20))));
			if (m) {
				k = (size_t)__builtin_ctz((unsigned)m);
				p += k;
				d += k;
				goto special;
			}
			p += 16;
			d += 16;
		}
#endif
		while (end - p >= 8) {
			uint64_t w;

			memcpy(&w, p, 8);
			if (word_special(w))
				break;
			memcpy(d, &w, 8);
			p += 8;
			d += 8;
		}
		while (p < end && is_plain(*p))
			*d++ = (char)*p++;
		if (p >= end)
			return 0;
#if defined(__SSE2__)
special:
#endif
		if (*p == '"')
			break;
		if (*p >= 0x80) {
			if (!(k = pmbot_utf8_seq(p, (size_t)(end - p))))
				return 0;
			ps->cont += k - 1;
			memcpy(d, p, k);
			d += k;
			p += k;
			continue;
		}
		if (*p != '\\')
			return 0; /* a control character */
		if (end - p >= 2 && (c = simple_escape(p[1]))) {
			*d++ = c;
			p += 2;
			continue;
		}
		if (!(k = decode_escape(d, p, end)))
			return 0;
		d += ESCAPE_WROTE(k);
		p += ESCAPE_USED(k);
	}
	*d = '\0';
	*s = d0;
	*n = (size_t)(d - d0);
	cd->used += *n + 1;
	ps->p = p + 1;
	return 1;
}

static char decimal_point(void)
{
	const struct lconv *lc = localeconv();

	return lc && lc->decimal_point && lc->decimal_point[0] ? lc->decimal_point[0] : '.';
}

/* Copy `n` bytes and a NUL into the arena; NULL when it would not fit (cannot happen). */
static const char *cd_copy(pmbot_jdoc *cd, const char *s, size_t n)
{
	char *d;

	if (n >= cd->cap - cd->used)
		return NULL;
	d = cd->arena + cd->used;
	memcpy(d, s, n);
	d[n] = '\0';
	cd->used += n + 1;
	return d;
}

/*
 * Append a node of `type` at the pending position and key (which it
 * takes: the next node has none unless told). Its index, or -1 when out
 * of memory.
 */
static long cd_node(parser *ps, unsigned char type)
{
	pmbot_jdoc *cd = ps->cd;
	pmbot_jnode *n, *grown;

	if (cd->count >= cd->alloc) {
		if (cd->count >= UINT32_MAX - 1 ||
		    !(grown = pmbot_array_grow(cd->nodes, &cd->alloc, cd->count + 1, sizeof(*grown))))
			return -1;
		cd->nodes = grown;
	}
	n = &cd->nodes[cd->count];
	memset(n, 0, sizeof(*n));
	n->type = type;
	n->line = ps->pl;
	n->column = ps->pc;
	if (ps->pk) {
		/* In the arena already: scan_string_cd() put it there. */
		n->key = ps->pk;
		n->key_len = (uint32_t)ps->pkl;
		ps->pk = NULL;
	}
	return (long)cd->count++;
}

static int cd_string(parser *ps, const char *s, size_t len)
{
	long i = cd_node(ps, PMBOT_JSTRING);
	pmbot_jnode *n;

	if (i < 0)
		return -1;
	n = &ps->cd->nodes[i];
	n->v.s = s; /* in the arena already: scan_string_cd() put it there */
	n->len = (uint32_t)len;
	return 1;
}

static uint32_t key_hash(uint32_t obj, const char *k, size_t n)
{
	uint32_t h = 2166136261u ^ (obj * 2654435761u);
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)k[i]) * 16777619u;
	return h;
}

/*
 * The slot of key `k` in object `obj`: where it is, or the free slot
 * where it would go. The table is never full (grown at half).
 */
static key_slot *slot_of(pmbot_jdoc *cd, uint32_t obj, const char *k, size_t n)
{
	size_t mask = cd->n_slots - 1, i = key_hash(obj, k, n) & mask;

	for (;; i = (i + 1) & mask) {
		key_slot *sl = &cd->slots[i];
		const pmbot_jnode *m;

		if (!sl->mem)
			return sl;
		m = &cd->nodes[sl->mem - 1];
		if (sl->obj == obj && m->key_len == n && !memcmp(m->key, k, n))
			return sl;
	}
}

/* Record member `mem` of object `obj` in the table. 0, or -1 out of memory. */
static int slot_add(pmbot_jdoc *cd, uint32_t obj, uint32_t mem)
{
	const pmbot_jnode *m = &cd->nodes[mem];
	key_slot *sl;

	if (cd->used_slots + 1 > cd->n_slots / 2) {
		size_t n = cd->n_slots ? cd->n_slots * 2 : 64, i;
		key_slot *old = cd->slots, *grown;
		size_t old_n = cd->n_slots;

		if (n > SIZE_MAX / sizeof(*grown) || !(grown = calloc(n, sizeof(*grown))))
			return -1;
		cd->slots = grown;
		cd->n_slots = n;
		for (i = 0; i < old_n; i++) {
			if (!old[i].mem)
				continue;
			m = &cd->nodes[old[i].mem - 1];
			*slot_of(cd, old[i].obj, m->key, m->key_len) = old[i];
		}
		free(old);
		m = &cd->nodes[mem];
	}
	sl = slot_of(cd, obj, m->key, m->key_len);
	sl->obj = obj;
	sl->mem = mem + 1;
	cd->used_slots++;
	return 0;
}

/*
 * Has object `obj` (being built) a member `k` already? Small objects are
 * scanned; from BIG_OBJECT members on they are looked up in the table.
 */
static int cd_has_key(pmbot_jdoc *cd, uint32_t obj, const char *k, size_t n)
{
	const pmbot_jnode *o = &cd->nodes[obj], *m;
	uint32_t i;

	if (o->len > BIG_OBJECT)
		return slot_of(cd, obj, k, n)->mem != 0;
	for (i = 0, m = o + 1; i < o->len; i++, m = pmbot_jnode_next(m))
		if (m->key_len == n && (!n || m->key[0] == k[0]) && !memcmp(m->key, k, n))
			return 1;
	return 0;
}

/* Member `mem` was added to `obj`. 0, or -1 out of memory. */
static int cd_member_added(pmbot_jdoc *cd, uint32_t obj, uint32_t mem)
{
	pmbot_jnode *o = &cd->nodes[obj];
	const pmbot_jnode *m;
	uint32_t i, j;

	o->len++;
	if (o->len < BIG_OBJECT + 1)
		return 0;
	if (o->len > BIG_OBJECT + 1)
		return slot_add(cd, obj, mem);
	/* Just past the scan's size: the table takes every member so far. */
	for (i = 0, j = obj + 1; i < o->len; i++, j += (uint32_t)(pmbot_jnode_next(m) - m)) {
		m = &cd->nodes[j];
		if (slot_add(cd, obj, j) < 0)
			return -1;
	}
	return 0;
}

/* A container node finished: its size is what was appended since. */
static void cd_close(pmbot_jdoc *cd, uint32_t idx)
{
	cd->nodes[idx].v.skip = (uint32_t)(cd->count - idx);
}

/*
 * A real of at most 15 digits and no exponent ("10.0", "-2.75") without
 * strtod: the digits as an integer are exact in a double, so is 10^k for
 * k <= 22, and one IEEE division rounds correctly, so the result is the
 * double strtod gives. Only where doubles are evaluated as doubles.
 * 1 when done, 0 when strtod must do it.
 */
static int exact_real(const unsigned char *s, size_t n, double *out)
{
	static const double pow10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
		1e10, 1e11, 1e12, 1e13, 1e14, 1e15 };
	unsigned long long m = 0;
	size_t i = 0, digits = 0, frac = 0;
	int neg = 0, dot = 0;

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
	(void)pow10;
	return 0;
#endif
	if (n && s[0] == '-') {
		neg = 1;
		i = 1;
	}
	for (; i < n; i++) {
		if (s[i] == '.' && !dot) {
			dot = 1;
			continue;
		}
		if (!is_digit(s[i]) || ++digits > 15)
			return 0;
		m = m * 10 + (unsigned)(s[i] - '0');
		frac += (size_t)dot;
	}
	*out = (double)m / pow10[frac];
	if (neg)
		*out = -*out;
	return 1;
}

/*
 * strtod on exactly the token, as jansson does (with the locale's decimal
 * point, as jansson does), so both give the same double. 1, 0 on overflow,
 * -1 out of memory.
 */
static int make_real(parser *ps, const unsigned char *s, size_t n, json_t **out)
{
	char small[64], *tok = small, *dot;
	double d;

	if (exact_real(s, n, &d))
		goto made;
	if (n >= sizeof(small)) {
		pmbot_buf_clear(&ps->num);
		if (pmbot_buf_put(&ps->num, s, n) < 0)
			return -1;
		tok = ps->num.buf;
	} else {
		memcpy(small, s, n);
		small[n] = '\0';
	}
	if (!ps->point)
		ps->point = decimal_point();
	if (ps->point != '.' && (dot = memchr(tok, '.', n)))
		*dot = ps->point;
	errno = 0;
	d = strtod(tok, NULL);
	if ((d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE)
		return 0;
made:
	if (ps->cd) {
		long i = cd_node(ps, PMBOT_JREAL);

		if (i < 0)
			return -1;
		ps->cd->nodes[i].v.r = d;
		return 1;
	}
	*out = json_real(d);
	return *out ? 1 : -1;
}

/* RFC 8259 number at ps->p. 1 when read, 0 when refused, -1 out of memory. */
static int parse_number(parser *ps, json_t **out)
{
	const unsigned char *start = ps->p, *p = start, *end = ps->end;
	unsigned long long u = 0;
	int neg = 0, real = 0, big = 0, rc;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (p >= end || !is_digit(*p))
		return 0;
	if (*p == '0') {
		if (++p < end && is_digit(*p))
			return 0;
	} else {
		do {
			unsigned d = (unsigned)(*p - '0');

			if (u > (ULLONG_MAX - d) / 10)
				big = 1;
			else
				u = u * 10 + d;
		} while (++p < end && is_digit(*p));
	}
	if (p < end && *p == '.') {
		real = 1;
		if (++p >= end || !is_digit(*p))
			return 0;
		while (++p < end && is_digit(*p))
			;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		real = 1;
		if (++p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || !is_digit(*p))
			return 0;
		while (++p < end && is_digit(*p))
			;
	}
	if (real) {
		if ((rc = make_real(ps, start, (size_t)(p - start), out)) <= 0)
			return rc;
	} else {
		/* jansson refuses what strtoll cannot hold. */
		if (big || u > INT_MAX_U + (unsigned)neg)
			return 0;
		if (ps->cd) {
			long i = cd_node(ps, PMBOT_JINTEGER);

			if (i < 0)
				return -1;
			ps->cd->nodes[i].v.i = neg ? (json_int_t)(0 - u) : (json_int_t)u;
		} else if (!(*out = json_integer(neg ? (json_int_t)(0 - u) : (json_int_t)u))) {
			return -1;
		}
	}
	ps->p = p;
	return 1;
}

/* true/false/null at ps->p; jansson reads a whole run of letters as one word. */
static int parse_word(parser *ps, const char *word, size_t n, json_t *v, json_t **out)
{
	const unsigned char *p = ps->p;

	if ((size_t)(ps->end - p) < n || memcmp(p, word, n) ||
	    (p + n < ps->end && is_alpha(p[n])))
		return 0;
	if (ps->cd && cd_node(ps, json_is_true(v) ? PMBOT_JTRUE :
			json_is_false(v) ? PMBOT_JFALSE : PMBOT_JNULL) < 0)
		return -1;
	ps->p = p + n;
	*out = ps->cd ? NULL : v;
	return 1;
}

static int parse_value(parser *ps, json_t **out, int want);

/* A string value into either sink: 1 when read, 0 when refused, -1 out of memory. */
static int parse_string(parser *ps, json_t **out)
{
	const char *s;
	size_t n;
	int rc;

	if ((rc = scan_string(ps, &ps->str, &s, &n)) > 0 && !(*out = json_stringn_nocheck(s, n)))
		rc = -1;
	return rc;
}

/*
 * A string value into the compact sink. Out of parse_value(), so the
 * recursive frame does not carry the string's pointer and length.
 */
static int parse_string_cd(parser *ps)
{
	const char *s;
	size_t n;
	int rc;

	if ((rc = scan_string_cd(ps, &s, &n)) > 0 && cd_string(ps, s, n) < 0)
		rc = -1;
	return rc;
}

/*
 * The pointer of the value about to be read, kept for the source map and
 * for a diagnostic. The compact sink keeps none: it has no map, and when
 * it stops the jansson sink reads the text again to word the refusal.
 */
static int track_index(parser *ps, size_t base, size_t i)
{
	if (ps->cd)
		return 0;
	pmbot_buf_truncate(&ps->ptr, base);
	return push_index(&ps->ptr, i);
}

static int track_key(parser *ps, size_t base, const char *k, size_t klen)
{
	if (ps->cd)
		return 0;
	pmbot_buf_truncate(&ps->ptr, base);
	return push_key(&ps->ptr, k, klen);
}

static int parse_array(parser *ps, json_t **out)
{
	json_t *arr = NULL, *v;
	size_t base = ps->ptr.len, i;
	long idx = 0;
	int err = -1;

	if (++ps->depth > ps->max_depth)
		return halt(ps, STOP_DEEP, WANT_VALUE, ps->p);
	if (ps->cd ? (idx = cd_node(ps, PMBOT_JARRAY)) < 0 : !(arr = json_array()))
		return halt(ps, STOP_NOMEM, 0, ps->p);
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
	} else {
		for (i = 0;; i++) {
			if (ps->p >= ps->end) {
				halt(ps, STOP_SYNTAX, WANT_ITEM, ps->p);
				goto done;
			}
			if (track_index(ps, base, i) < 0 ||
			    mark(ps, ps->line, column_of(ps, ps->p)) < 0) {
				halt(ps, STOP_NOMEM, 0, ps->p);
				goto done;
			}
			if (parse_value(ps, &v, WANT_ITEM) < 0)
				goto done;
			if (ps->cd)
				ps->cd->nodes[idx].len++;
			else if (json_array_append_new(arr, v) < 0) {
				halt(ps, STOP_NOMEM, 0, ps->p);
				goto done;
			}
			skip_ws(ps);
			if (ps->p < ps->end && *ps->p == ',') {
				ps->p++;
				skip_ws(ps);
			} else if (ps->p < ps->end && *ps->p == ']') {
				ps->p++;
				break;
			} else {
				halt(ps, STOP_SYNTAX, WANT_ARRAY_NEXT, ps->p);
				goto done;
			}
		}
	}
	pmbot_buf_truncate(&ps->ptr, base);
	ps->depth--;
	if (ps->cd)
		cd_close(ps->cd, (uint32_t)idx);
	*out = arr;
	arr = NULL;
	err = 0;
done:
	json_decref(arr);
	return err;
}

static int first_key_line(const parser *ps, const unsigned char *open,
	const char *key, size_t klen, int *line);

static int parse_object(parser *ps, json_t **out)
{
	const unsigned char *open = ps->p, *key_at;
	pmbot_buf kbuf = PMBOT_BUF_INIT; /* escaped keys only: allocates on first use */
	json_t *obj = NULL, *v;
	size_t base = ps->ptr.len, klen, mem;
	uint64_t seen = 0, bit;    /* a filter of the keys so far */
	const char *k;
	long idx = 0;
	int err = -1, rc, line, col;

	if (++ps->depth > ps->max_depth)
		return halt(ps, STOP_DEEP, WANT_VALUE, ps->p);
	if (ps->cd ? (idx = cd_node(ps, PMBOT_JOBJECT)) < 0 : !(obj = json_object()))
		return halt(ps, STOP_NOMEM, 0, ps->p);
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
	} else {
		for (;;) {
			if (ps->p >= ps->end || *ps->p != '"') {
				halt(ps, STOP_SYNTAX, WANT_KEY, ps->p);
				goto done;
			}
			key_at = ps->p;
			line = ps->line;
			col = column_of(ps, key_at);
			if ((rc = ps->cd ? scan_string_cd(ps, &k, &klen) :
					scan_string(ps, &kbuf, &k, &klen)) <= 0) {
				halt(ps, rc < 0 ? STOP_NOMEM : STOP_SYNTAX, WANT_KEY, key_at);
				goto done;
			}
			/*
			 * A key whose length and end bytes no earlier member shares
			 * cannot be a duplicate: most members skip the look.
			 */
			bit = (uint64_t)1 << ((klen + (klen ? (unsigned char)k[0] * 3u +
				(unsigned char)k[klen - 1] * 5u : 0)) & 63);
			if (ps->cd ? (seen & bit) && cd_has_key(ps->cd, (uint32_t)idx, k, klen) :
			    json_object_getn(obj, k, klen) != NULL) {
				pmbot_buf_truncate(&ps->ptr, base);
				if (push_key(&ps->ptr, k, klen) < 0 ||
				    first_key_line(ps, open, k, klen, &ps->first_line) < 0)
					halt(ps, STOP_NOMEM, 0, key_at);
				else
					halt(ps, STOP_DUP, WANT_KEY, key_at);
				goto done;
			}
			if (track_key(ps, base, k, klen) < 0 || mark(ps, line, col) < 0) {
				halt(ps, STOP_NOMEM, 0, key_at);
				goto done;
			}
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				halt(ps, STOP_SYNTAX, WANT_COLON, ps->p);
				goto done;
			}
			ps->p++;
			skip_ws(ps);
			/* `k` stays valid: it is the arena, the text or kbuf, never ps->str. */
			ps->pk = k;
			ps->pkl = klen;
			mem = ps->cd ? ps->cd->count : 0;
			if (parse_value(ps, &v, WANT_VALUE) < 0)
				goto done;
			seen |= bit;
			if (ps->cd ? cd_member_added(ps->cd, (uint32_t)idx, (uint32_t)mem) < 0 :
			    json_object_setn_new_nocheck(obj, k, klen, v) < 0) {
				halt(ps, STOP_NOMEM, 0, ps->p);
				goto done;
			}
			skip_ws(ps);
			if (ps->p < ps->end && *ps->p == ',') {
				ps->p++;
				skip_ws(ps);
			} else if (ps->p < ps->end && *ps->p == '}') {
				ps->p++;
				break;
			} else {
				halt(ps, STOP_SYNTAX, WANT_OBJECT_NEXT, ps->p);
				goto done;
			}
		}
	}
	pmbot_buf_truncate(&ps->ptr, base);
	ps->depth--;
	if (ps->cd)
		cd_close(ps->cd, (uint32_t)idx);
	*out = obj;
	obj = NULL;
	err = 0;
done:
	json_decref(obj);
	pmbot_buf_free(&kbuf);
	return err;
}

/*
 * The value at ps->p (whitespace skipped). Containers recurse, so the C
 * stack holds two frames per nesting level, max_depth levels at most.
 */
static int parse_value(parser *ps, json_t **out, int want)
{
	const unsigned char *at = ps->p;
	int rc;

	if (at >= ps->end)
		return halt(ps, STOP_SYNTAX, want, at);
	switch (*at) {
	case '{':
		return parse_object(ps, out);
	case '[':
		return parse_array(ps, out);
	case '"':
		rc = ps->cd ? parse_string_cd(ps) : parse_string(ps, out);
		break;
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		rc = parse_number(ps, out);
		break;
	case 't':
		rc = parse_word(ps, "true", 4, json_true(), out);
		break;
	case 'f':
		rc = parse_word(ps, "false", 5, json_false(), out);
		break;
	case 'n':
		rc = parse_word(ps, "null", 4, json_null(), out);
		break;
	default:
		rc = 0;
		break;
	}
	if (rc > 0)
		return 0;
	return halt(ps, rc < 0 ? STOP_NOMEM : STOP_SYNTAX, want, at);
}

/* The whole text: one value and nothing after it but whitespace. */
static int parse_root(parser *ps, json_t **out)
{
	*out = NULL;
	skip_ws(ps);
	if (ps->p < ps->end && mark(ps, ps->line, column_of(ps, ps->p)) < 0)
		return halt(ps, STOP_NOMEM, 0, ps->p);
	if (parse_value(ps, out, WANT_VALUE) < 0)
		return -1;
	skip_ws(ps);
	if (ps->p < ps->end) {
		json_decref(*out);
		*out = NULL;
		return halt(ps, STOP_SYNTAX, WANT_END, ps->p);
	}
	return 0;
}

/*
 * Everything below runs only when the text was refused.
 */

/* 1-based line of byte `off`. */
static int line_at(const unsigned char *text, size_t off)
{
	int line = 1;
	size_t i;

	for (i = 0; i < off; i++)
		line += text[i] == '\n';
	return line;
}

/*
 * jansson's position after reading `off` bytes: the line, and the column
 * of the last character read (0 right after a line break). For the
 * position *of* the character at byte i, ask for i + 1.
 */
static void pos_at(const unsigned char *text, size_t off, int *line, int *col)
{
	size_t i;

	*line = 1;
	*col = 0;
	for (i = 0; i < off; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 0;
		} else if ((text[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

/*
 * The line of the first occurrence of `key` in the object opening at
 * `open`. That stretch of text was parsed already, so it is read again
 * with the same functions (no map, values dropped). 0, or -1 when out of
 * memory or the text is not what it was.
 */
static int first_key_line(const parser *ps, const unsigned char *open,
	const char *key, size_t klen, int *line)
{
	pmbot_buf kb = PMBOT_BUF_INIT;
	parser sub;
	json_t *v;
	const char *k;
	size_t n;
	int err = -1;

	parser_init(&sub, (const char *)ps->text, (size_t)(ps->end - ps->text), ps->max_depth);
	sub.p = open + 1;
	for (;;) {
		const unsigned char *key_at;

		skip_ws(&sub);
		key_at = sub.p;
		if (key_at >= sub.end || *key_at != '"' || scan_string(&sub, &kb, &k, &n) <= 0)
			goto done;
		if (n == klen && !memcmp(k, key, n)) {
			*line = line_at(sub.text, (size_t)(key_at - sub.text));
			break;
		}
		skip_ws(&sub);
		if (sub.p >= sub.end || *sub.p != ':')
			goto done;
		sub.p++;
		skip_ws(&sub);
		if (parse_value(&sub, &v, WANT_VALUE) < 0)
			goto done;
		json_decref(v);
		skip_ws(&sub);
		if (sub.p >= sub.end || *sub.p != ',')
			goto done;
		sub.p++;
	}
	err = 0;
done:
	pmbot_buf_free(&kb);
	parser_free(&sub);
	return err;
}

/*
 * The old nesting pre-scan, now run only on refused text: the header
 * promises nesting is reported before syntax, so a too-deep bracket
 * anywhere wins over an earlier syntax error. Strings are skipped; the
 * text may be invalid JSON, so unbalanced closers only floor at 0.
 */
static int find_too_deep(const unsigned char *s, size_t len, size_t max_depth, size_t *at)
{
	size_t depth = 0, i;
	int in_str = 0;

	for (i = 0; i < len; i++) {
		unsigned char ch = s[i];

		if (in_str) {
			if (ch == '\\' && i + 1 < len)
				i++;
			else if (ch == '"')
				in_str = 0;
		} else if (ch == '"') {
			in_str = 1;
		} else if (ch == '[' || ch == '{') {
			if (++depth > max_depth) {
				*at = i;
				return 1;
			}
		} else if ((ch == ']' || ch == '}') && depth) {
			depth--;
		}
	}
	return 0;
}

/* jansson's tokens, as far as its error messages tell them apart. */
enum { T_EOF, T_PUNCT, T_STRING, T_NUMBER, T_WORD, T_INVALID };

typedef struct {
	int kind;
	size_t start;      /* first byte of the token */
	size_t end;        /* jansson's position: bytes read, after push-backs */
	const char *err;   /* the lexer's own complaint, or NULL */
	char errbuf[48];
	int nul;           /* T_STRING that decodes to a U+0000 */
	int oom;           /* out of memory while reading it */
} jtok;

static int jget(const unsigned char *s, size_t len, size_t *q)
{
	return *q < len ? s[(*q)++] : -1;
}

static void junget(size_t *q, int c)
{
	if (c >= 0)
		(*q)--;
}

/* jansson's lex_scan_string, for its message and where it stops. */
static void jlex_string(jtok *t, const unsigned char *s, size_t len)
{
	size_t q = t->start + 1, r;
	int c, i;

	t->kind = T_INVALID;
	for (;;) {
		if ((c = jget(s, len, &q)) < 0) {
			t->err = "premature end of input";
			t->end = len;
			return;
		}
		if (c == '"')
			break;
		if (c < 0x20) {
			t->end = q - 1;
			if (c == '\n') {
				t->err = "unexpected newline";
			} else {
				snprintf(t->errbuf, sizeof(t->errbuf), "control character 0x%x", c);
				t->err = t->errbuf;
			}
			return;
		}
		if (c != '\\')
			continue;
		c = jget(s, len, &q);
		if (c == 'u') {
			for (i = 0; i < 4; i++) {
				c = jget(s, len, &q);
				if (c < 0 || hexval(c) < 0)
					break;
			}
			if (i == 4)
				continue;
		} else if (c > 0 && strchr("\"\\/bfnrt", c)) {
			continue;
		}
		t->err = "invalid escape";
		t->end = q;
		return;
	}
	t->end = q;
	/* The whole literal is read; jansson decodes it in a second pass. */
	for (r = t->start + 1; r + 1 < q;) {
		unsigned long v, v2;

		if (s[r] != '\\') {
			r++;
			continue;
		}
		if (s[r + 1] != 'u') {
			r += 2;
			continue;
		}
		v = hex4(s + r + 2);
		r += 6;
		if (v >= 0xd800 && v <= 0xdbff) {
			if (s[r] != '\\' || s[r + 1] != 'u') {
				snprintf(t->errbuf, sizeof(t->errbuf), "invalid Unicode '\\u%04lX'", v);
				t->err = t->errbuf;
				return;
			}
			v2 = hex4(s + r + 2);
			r += 6;
			if (v2 < 0xdc00 || v2 > 0xdfff) {
				snprintf(t->errbuf, sizeof(t->errbuf),
					"invalid Unicode '\\u%04lX\\u%04lX'", v, v2);
				t->err = t->errbuf;
				return;
			}
		} else if (v >= 0xdc00 && v <= 0xdfff) {
			snprintf(t->errbuf, sizeof(t->errbuf), "invalid Unicode '\\u%04lX'", v);
			t->err = t->errbuf;
			return;
		} else if (v == 0) {
			t->nul = 1;
		}
	}
	t->kind = T_STRING;
}

/* jansson's lex_scan_number: an invalid token, a number, or an overflow. */
static void jlex_number(jtok *t, const unsigned char *s, size_t len)
{
	size_t q = t->start;
	int c = jget(s, len, &q), neg = c == '-', real = 0, rc;
	json_t *v = NULL;
	parser tmp;

	t->kind = T_INVALID;
	if (neg)
		c = jget(s, len, &q);
	if (c == '0') {
		c = jget(s, len, &q);
		if (is_digit(c)) {
			junget(&q, c);
			goto done;
		}
	} else if (is_digit(c)) {
		do
			c = jget(s, len, &q);
		while (is_digit(c));
	} else {
		junget(&q, c);
		goto done;
	}
	if (c == '.') {
		real = 1;
		c = jget(s, len, &q);
		if (!is_digit(c)) {
			junget(&q, c);
			goto done;
		}
		do
			c = jget(s, len, &q);
		while (is_digit(c));
	}
	if (c == 'e' || c == 'E') {
		real = 1;
		c = jget(s, len, &q);
		if (c == '+' || c == '-')
			c = jget(s, len, &q);
		if (!is_digit(c)) {
			junget(&q, c);
			goto done;
		}
		do
			c = jget(s, len, &q);
		while (is_digit(c));
	}
	junget(&q, c);
	/* Well formed, so only range can fail, and the fast path knows range. */
	parser_init(&tmp, (const char *)s, q, 0);
	tmp.p = s + t->start;
	rc = parse_number(&tmp, &v);
	parser_free(&tmp);
	json_decref(v);
	if (rc > 0)
		t->kind = T_NUMBER;
	else if (rc < 0)
		t->oom = 1;
	else
		t->err = real ? "real number overflow" :
			neg ? "too big negative integer" : "too big integer";
done:
	t->end = q;
}

/* One token as jansson's lex_scan reads it from byte `i`. */
static void jlex(jtok *t, const unsigned char *s, size_t len, size_t i)
{
	unsigned char c;
	size_t n;

	memset(t, 0, sizeof(*t));
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	t->start = t->end = i;
	if (i >= len) {
		t->kind = T_EOF;
		return;
	}
	c = s[i];
	if (c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',') {
		t->kind = T_PUNCT;
		t->end = i + 1;
	} else if (c == '"') {
		jlex_string(t, s, len);
	} else if (is_digit(c) || c == '-') {
		jlex_number(t, s, len);
	} else if (is_alpha(c)) {
		for (n = i; n < len && is_alpha(s[n]); n++)
			;
		t->end = n;
		t->kind = (n - i == 4 && (!memcmp(s + i, "true", 4) || !memcmp(s + i, "null", 4))) ||
			(n - i == 5 && !memcmp(s + i, "false", 5)) ? T_WORD : T_INVALID;
	} else {
		/* jansson reads the rest of the character along (valid UTF-8 by now). */
		n = pmbot_utf8_seqlen(c);
		t->kind = T_INVALID;
		t->end = i + (n <= len - i ? n : 1);
	}
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

/*
 * A syntax stop, worded and placed as jansson would: its message, "near"
 * the text of the token it was reading (when 20 bytes or less), at the
 * last character it read. An escaped U+0000 is INVALID_UTF8, worded as
 * the YAML reader words it: jansson's text names its own flag.
 */
static int explain(const where *w, parser *ps)
{
	const char *code = "REPORT_PARSE_JSON", *msg;
	size_t len = (size_t)(ps->end - ps->text), saved;
	pmbot_buf text = PMBOT_BUF_INIT;
	int line, col, err = PMBOT_ERROR;
	jtok t;

	jlex(&t, ps->text, len, (size_t)(ps->at - ps->text));
	if (t.oom)
		return PMBOT_ERROR;
	if (t.err) {
		msg = t.err;
	} else {
		switch (ps->want) {
		case WANT_ITEM:
		case WANT_VALUE:
			if (ps->want == WANT_ITEM && t.kind == T_EOF)
				msg = "']' expected";
			else if (t.kind == T_INVALID)
				msg = "invalid token";
			else if (t.kind == T_STRING && t.nul)
				msg = "a string holds \\u0000 (U+0000), which a report string cannot";
			else
				msg = "unexpected token";
			break;
		case WANT_KEY:
			msg = t.kind == T_STRING && t.nul ?
				"an object key holds \\u0000 (U+0000), which a report key cannot" :
				"string or '}' expected";
			break;
		case WANT_COLON:
			msg = "':' expected";
			break;
		case WANT_ARRAY_NEXT:
			msg = "']' expected";
			break;
		case WANT_OBJECT_NEXT:
			msg = "'}' expected";
			break;
		default:
			msg = "end of file expected";
			break;
		}
		if (t.kind == T_STRING && t.nul && (ps->want == WANT_VALUE ||
				ps->want == WANT_ITEM || ps->want == WANT_KEY))
			/* C strings downstream cannot hold U+0000. */
			code = "INVALID_UTF8";
	}
	saved = t.end - t.start;
	if (!saved && pmbot_buf_printf(&text, "%s near end of file", msg) < 0)
		goto done;
	if (saved && saved <= 20 && pmbot_buf_printf(&text, "%s near '%.*s'", msg,
			(int)saved, (const char *)ps->text + t.start) < 0)
		goto done;
	if (saved > 20 && pmbot_buf_puts(&text, msg) < 0)
		goto done;
	pos_at(ps->text, t.end, &line, &col);
	err = fail(w, code, ps->ptr.buf, line, col, "%.*s", (int)whole_chars(text.buf), text.buf);
done:
	pmbot_buf_free(&text);
	return err;
}

/*
 * Turn a stop into the one diagnostic, in the order the header promises:
 * invalid UTF-8 anywhere, then nesting anywhere, then what stopped us.
 */
static int report_stop(const where *w, parser *ps)
{
	const char *text = (const char *)ps->text;
	size_t len = (size_t)(ps->end - ps->text), bad = 0, at = 0;
	int line = 0, col = 0, deep = 0;

	if (ps->stop == STOP_NOMEM)
		return PMBOT_ERROR;
	if (!pmbot_utf8_valid(text, len, &bad, &line, &col)) {
		if (text[bad])
			return fail(w, "INVALID_UTF8", "", line, col,
				"invalid UTF-8 (byte 0x%02x)", (unsigned char)text[bad]);
		return fail(w, "INVALID_UTF8", "", line, col, "NUL byte");
	}
	if (find_too_deep(ps->text, len, ps->max_depth, &at)) {
		deep = 1;
	} else if (ps->stop == STOP_DEEP) {
		/* Not reached: on a valid prefix the scan finds the same bracket. */
		deep = 1;
		at = (size_t)(ps->at - ps->text);
	}
	if (deep) {
		pos_at(ps->text, at + 1, &line, &col);
		return fail(w, "INPUT_TOO_DEEP", ps->ptr.buf, line, col,
			"nesting deeper than %zu levels", ps->max_depth);
	}
	if (ps->stop == STOP_DUP) {
		pos_at(ps->text, (size_t)(ps->at - ps->text) + 1, &line, &col);
		return fail(w, "DUPLICATE_KEY", ps->ptr.buf, line, col,
			"duplicate key; first defined on line %d",
			w->line_base + ps->first_line - 1);
	}
	return explain(w, ps);
}

/*
 * Either sink: `cd` NULL builds jansson values into `*out`, else the
 * compact document `cd` (and `*out` stays NULL). Everything else, so
 * every check and every word of a diagnostic, is the same code.
 */
static int parse_text(json_t **out, pmbot_jdoc *cd, pmbot_srcmap *map, const char *file,
	const char *text, size_t len, int line_base, int col_base,
	const pmbot_limits *lim, pmbot_diag_list *diags)
{
	where w = { file, line_base, col_base, diags };
	pmbot_limits deflim;
	json_t *root = NULL;
	parser ps;
	int err;

	*out = NULL;
	if (!text && len)
		return PMBOT_ERROR;
	if (!text)
		text = "";
	if (!lim) {
		pmbot_limits_default(&deflim);
		lim = &deflim;
	}
	parser_init(&ps, text, len, lim->max_depth);
	if (len > lim->max_bytes) {
		err = fail(&w, "INPUT_TOO_LARGE", "", 1, 1,
			"%zu bytes of JSON; the limit is %zu", len, lim->max_bytes);
		goto done;
	}
	ps.map = map;
	ps.cd = cd;
	ps.line_base = line_base;
	ps.col_base = col_base;
	if (parse_root(&ps, &root) < 0) {
		if (cd && ps.stop != STOP_NOMEM) {
			/* Worded by the jansson sink, which stops at the same place. */
			parser_free(&ps);
			return parse_text(out, NULL, NULL, file, text, len, line_base, col_base,
				lim, diags);
		}
		err = report_stop(&w, &ps);
		goto done;
	}
	*out = root;
	root = NULL;
	err = PMBOT_OK;
done:
	json_decref(root);
	parser_free(&ps);
	return err;
}

int pmbot_json_parse(json_t **out, pmbot_srcmap *map, const char *file,
	const char *text, size_t len, int line_base, int col_base,
	const pmbot_limits *lim, pmbot_diag_list *diags)
{
	return parse_text(out, NULL, map, file, text, len, line_base, col_base, lim, diags);
}

/*
 * The compact document's nodes point into its arena: 256 MiB (every
 * caller's limit) keeps a key's length in the node's 29 bits, every
 * other count in 32.
 */
#define JDOC_MAX_BYTES ((size_t)256 << 20)

int pmbot_jdoc_parse(pmbot_jdoc **out, const char *file, const char *text, size_t len,
	int line_base, int col_base, const pmbot_limits *lim, pmbot_diag_list *diags)
{
	pmbot_jdoc *cd = NULL;
	pmbot_limits deflim;
	json_t *none = NULL;
	int err = PMBOT_ERROR;

	*out = NULL;
	if (!lim) {
		pmbot_limits_default(&deflim);
		lim = &deflim;
	}
	if (len > JDOC_MAX_BYTES && len <= lim->max_bytes)
		goto done;
	if (!(cd = calloc(1, sizeof(*cd))))
		goto done;
	/* Over the limit: no arena; parse_text refuses before reading a byte. */
	cd->cap = len > JDOC_MAX_BYTES ? 0 : len + 1;
	if (cd->cap && !(cd->arena = pmbot_mem_alloc_large(cd->cap)))
		goto done;
	/*
	 * Room for a node per 16 bytes of text (bench/'s 10,000-item report
	 * has one per 28), so the array rarely grows: growing it by copies
	 * left glibc's heap holding every size it had been, 2 MB of the peak
	 * of a 2.8 MB report. Untouched room costs no memory. Without it
	 * (a huge text) the array grows as needed.
	 */
	if (cd->cap)
		cd->nodes = pmbot_array_grow(NULL, &cd->alloc, len / 16, sizeof(*cd->nodes));
	err = parse_text(&none, cd, NULL, file, text, len, line_base, col_base, lim, diags);
	free(cd->slots);
	cd->slots = NULL;
	cd->n_slots = cd->used_slots = 0;
	if (err < 0)
		goto done;
	*out = cd;
	cd = NULL;
done:
	pmbot_jdoc_free(cd);
	return err;
}

void pmbot_jdoc_free(pmbot_jdoc *doc)
{
	if (!doc)
		return;
	free(doc->nodes);
	free(doc->arena);
	free(doc->slots);
	free(doc);
}

void *pmbot_jdoc_take_strings(pmbot_jdoc *doc)
{
	void *arena = doc->arena;

	doc->arena = NULL;
	return arena;
}

const pmbot_jnode *pmbot_jdoc_root(const pmbot_jdoc *doc)
{
	return doc && doc->count ? doc->nodes : NULL;
}

const pmbot_jnode *pmbot_jnode_get(const pmbot_jnode *obj, const char *key)
{
	const pmbot_jnode *m;
	size_t n;
	uint32_t i;

	if (!obj || obj->type != PMBOT_JOBJECT)
		return NULL;
	n = strlen(key);
	/* Lengths first: a State's keys mostly differ in length. */
	for (i = 0, m = obj + 1; i < obj->len; i++, m = pmbot_jnode_next(m))
		if (m->key_len == n && m->key[0] == key[0] && !memcmp(m->key, key, n))
			return m;
	return NULL;
}

const pmbot_jnode *pmbot_jnode_at(const pmbot_jnode *arr, size_t index)
{
	const pmbot_jnode *m;
	size_t i;

	if (!arr || arr->type != PMBOT_JARRAY || index >= arr->len)
		return NULL;
	for (i = 0, m = arr + 1; i < index; i++)
		m = pmbot_jnode_next(m);
	return m;
}

const char *pmbot_jnode_type_name(const pmbot_jnode *n)
{
	switch (n ? n->type : PMBOT_JNULL) {
	case PMBOT_JOBJECT: return "an object";
	case PMBOT_JARRAY: return "an array";
	case PMBOT_JSTRING: return "a string";
	case PMBOT_JINTEGER: return "an integer";
	case PMBOT_JREAL: return "a number";
	case PMBOT_JTRUE:
	case PMBOT_JFALSE: return "a boolean";
	default: return "null";
	}
}

void pmbot_jshare_free(pmbot_jshare *share)
{
	size_t i;

	for (i = 0; i < share->strings.cap; i++)
		if (share->strings.slots[i].key)
			json_decref(share->strings.slots[i].value);
	pmbot_strmap_free(&share->strings);
	for (i = 0; i < PMBOT_JSHARE_INTS; i++) {
		json_decref(share->ints[i]);
		json_decref(share->reals[i]);
	}
	memset(share->ints, 0, sizeof(share->ints));
	memset(share->reals, 0, sizeof(share->reals));
}

json_t *pmbot_jshare_string(pmbot_jshare *share, const char *s, size_t len)
{
	void *v = NULL;
	json_t *j;

	if (!share || len > PMBOT_JSHARE_MAX_LEN)
		return json_stringn_nocheck(s, len);
	if (pmbot_strmap_get(&share->strings, s, &v))
		return json_incref(v);
	if (!(j = json_stringn_nocheck(s, len)))
		return NULL;
	/* Keyed by the value's own bytes, which live as long as the share's reference. */
	if (pmbot_strmap_put(&share->strings, json_string_value(j), j, NULL) == 0)
		json_incref(j);
	return j;
}

static json_t *share_int(pmbot_jshare *share, json_int_t i)
{
	if (!share || i < 0 || i >= PMBOT_JSHARE_INTS)
		return json_integer(i);
	if (!share->ints[i] && !(share->ints[i] = json_integer(i)))
		return NULL;
	return json_incref(share->ints[i]);
}

/* A whole real in range is shared; -0.0 is not (it would print as 0.0). */
static json_t *share_real(pmbot_jshare *share, double r)
{
	size_t i;

	if (!share || !(r >= 0 && r < PMBOT_JSHARE_INTS) || signbit(r) || !pmbot_json_is_whole(r))
		return json_real(r);
	i = (size_t)r;
	if (!share->reals[i] && !(share->reals[i] = json_real(r)))
		return NULL;
	return json_incref(share->reals[i]);
}

int pmbot_jnode_to_json_shared(json_t **out, const pmbot_jnode *n, pmbot_jshare *share)
{
	const pmbot_jnode *m;
	json_t *v = NULL, *sub;
	uint32_t i;
	int err = PMBOT_ERROR;

	*out = NULL;
	switch (n->type) {
	case PMBOT_JNULL: v = json_null(); break;
	case PMBOT_JTRUE: v = json_true(); break;
	case PMBOT_JFALSE: v = json_false(); break;
	case PMBOT_JINTEGER: v = share_int(share, n->v.i); break;
	case PMBOT_JREAL: v = share_real(share, n->v.r); break;
	/* Checked when read: valid UTF-8 without NUL, and NUL-terminated. */
	case PMBOT_JSTRING: v = pmbot_jshare_string(share, n->v.s, n->len); break;
	case PMBOT_JARRAY:
		if (!(v = json_array()))
			goto done;
		for (i = 0, m = n + 1; i < n->len; i++, m = pmbot_jnode_next(m))
			if (pmbot_jnode_to_json_shared(&sub, m, share) < 0 ||
			    json_array_append_new(v, sub) < 0)
				goto done;
		break;
	default:
		if (!(v = json_object()))
			goto done;
		for (i = 0, m = n + 1; i < n->len; i++, m = pmbot_jnode_next(m))
			if (pmbot_jnode_to_json_shared(&sub, m, share) < 0 ||
			    json_object_setn_new_nocheck(v, m->key, m->key_len, sub) < 0)
				goto done;
		break;
	}
	if (!v)
		goto done;
	*out = v;
	v = NULL;
	err = PMBOT_OK;
done:
	json_decref(v);
	return err;
}

int pmbot_jnode_to_json(json_t **out, const pmbot_jnode *n)
{
	return pmbot_jnode_to_json_shared(out, n, NULL);
}

/* Map `n` at the pointer in `ptr`, then its members under it. */
static int map_node(pmbot_srcmap *map, pmbot_buf *ptr, const pmbot_jnode *n)
{
	const pmbot_jnode *m;
	size_t base = ptr->len;
	uint32_t i;

	if (pmbot_srcmap_addn(map, ptr->buf ? ptr->buf : "", ptr->len, n->line, n->column) < 0)
		return -1;
	if (n->type != PMBOT_JARRAY && n->type != PMBOT_JOBJECT)
		return 0;
	for (i = 0, m = n + 1; i < n->len; i++, m = pmbot_jnode_next(m)) {
		if ((n->type == PMBOT_JOBJECT ? push_key(ptr, m->key, m->key_len) :
				push_index(ptr, i)) < 0 || map_node(map, ptr, m) < 0)
			return -1;
		pmbot_buf_truncate(ptr, base);
	}
	return 0;
}

int pmbot_jdoc_srcmap(pmbot_srcmap **out, const pmbot_jdoc *doc)
{
	pmbot_srcmap *map = pmbot_srcmap_new();
	pmbot_buf ptr;
	int err = PMBOT_ERROR;

	*out = NULL;
	pmbot_buf_init(&ptr, SIZE_MAX / 2);
	if (!map || (doc->count && map_node(map, &ptr, doc->nodes) < 0))
		goto done;
	*out = map;
	map = NULL;
	err = PMBOT_OK;
done:
	pmbot_srcmap_free(map);
	pmbot_buf_free(&ptr);
	return err;
}

/*
 * pmbot_jdoc_from_json in two walks: the first sizes the node array and
 * the string block exactly, so the second never grows them and no node
 * moves while strings are copied.
 */
static int from_json_size(const json_t *v, size_t *nodes, size_t *bytes)
{
	const char *key;
	json_t *m;
	size_t i;

	if (++*nodes >= UINT32_MAX)
		return -1;
	switch (json_typeof(v)) {
	case JSON_STRING:
		if (json_string_length(v) >= UINT32_MAX)
			return -1;
		*bytes += json_string_length(v) + 1;
		break;
	case JSON_ARRAY:
		json_array_foreach((json_t *)v, i, m)
			if (from_json_size(m, nodes, bytes) < 0)
				return -1;
		break;
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, key, m) {
			*bytes += strlen(key) + 1;
			if (from_json_size(m, nodes, bytes) < 0)
				return -1;
		}
		break;
	default:
		break;
	}
	return *bytes > JDOC_MAX_BYTES ? -1 : 0;
}

typedef struct {
	pmbot_jdoc *cd;
	const pmbot_srcmap *map;
	pmbot_buf ptr;         /* the pointer of the value being added */
} from_json;

/* Add `v` (member `key` of `klen` bytes, or NULL) and its members, at their mapped positions. */
static int from_json_add(from_json *fj, const json_t *v, const char *key, size_t klen)
{
	pmbot_jdoc *cd = fj->cd;
	size_t idx = cd->count, base = fj->ptr.len, i;
	pmbot_jnode *n = &cd->nodes[idx]; /* the array never moves: sized up front */
	const char *mkey;
	json_t *m;

	memset(n, 0, sizeof(*n));
	cd->count++;
	pmbot_srcmap_find(fj->map, fj->ptr.buf, &n->line, &n->column);
	/* Sized by from_json_size, so the copies fit: a failure is a bug, not a state. */
	if (key && !(n->key = cd_copy(cd, key, klen)))
		return -1;
	n->key_len = (uint32_t)klen;
	switch (json_typeof(v)) {
	case JSON_NULL: n->type = PMBOT_JNULL; break;
	case JSON_TRUE: n->type = PMBOT_JTRUE; break;
	case JSON_FALSE: n->type = PMBOT_JFALSE; break;
	case JSON_INTEGER:
		n->type = PMBOT_JINTEGER;
		n->v.i = json_integer_value(v);
		break;
	case JSON_REAL:
		n->type = PMBOT_JREAL;
		n->v.r = json_real_value(v);
		break;
	case JSON_STRING:
		n->type = PMBOT_JSTRING;
		if (!(n->v.s = cd_copy(cd, json_string_value(v), json_string_length(v))))
			return -1;
		n->len = (uint32_t)json_string_length(v);
		break;
	case JSON_ARRAY:
		n->type = PMBOT_JARRAY;
		n->len = (uint32_t)json_array_size(v);
		json_array_foreach((json_t *)v, i, m) {
			if (push_index(&fj->ptr, i) < 0 || from_json_add(fj, m, NULL, 0) < 0)
				return -1;
			pmbot_buf_truncate(&fj->ptr, base);
		}
		break;
	case JSON_OBJECT:
		n->type = PMBOT_JOBJECT;
		n->len = (uint32_t)json_object_size(v);
		json_object_foreach((json_t *)v, mkey, m) {
			size_t kl = strlen(mkey);

			if (push_key(&fj->ptr, mkey, kl) < 0 || from_json_add(fj, m, mkey, kl) < 0)
				return -1;
			pmbot_buf_truncate(&fj->ptr, base);
		}
		break;
	}
	if (n->type == PMBOT_JARRAY || n->type == PMBOT_JOBJECT)
		cd_close(cd, (uint32_t)idx);
	return 0;
}

int pmbot_jdoc_from_json(pmbot_jdoc **out, const json_t *value, const pmbot_srcmap *map)
{
	from_json fj = { NULL, map, PMBOT_BUF_INIT };
	size_t nodes = 0, bytes = 0;
	int err = PMBOT_ERROR;

	*out = NULL;
	pmbot_buf_init(&fj.ptr, SIZE_MAX / 2);
	if (!value || from_json_size(value, &nodes, &bytes) < 0)
		goto done;
	if (!(fj.cd = calloc(1, sizeof(*fj.cd))) ||
	    !(fj.cd->nodes = malloc(nodes * sizeof(*fj.cd->nodes))) ||
	    (bytes && !(fj.cd->arena = malloc(bytes + 1))))
		goto done;
	fj.cd->alloc = nodes;
	fj.cd->cap = bytes ? bytes + 1 : 0;
	if (from_json_add(&fj, value, NULL, 0) < 0)
		goto done;
	*out = fj.cd;
	fj.cd = NULL;
	err = PMBOT_OK;
done:
	pmbot_jdoc_free(fj.cd);
	pmbot_buf_free(&fj.ptr);
	return err;
}
