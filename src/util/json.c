#include "pmbot/json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "pmbot/banned.h"

/* Bytes a JSON string cannot hold as they are. */
static inline int needs_escape(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\';
}

/*
 * The bytes of `w` that need an escape (no byte below 0x20, no '"', no
 * '\\'), each as its high bit: exact tests, and the lowest flagged byte of
 * a word is always a true one, so on a little-endian machine the scan
 * lands on it at once.
 */
static inline uint64_t escape_mask(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');

	/* A byte below 0x20, a zero byte of q (a '"'), a zero byte of b (a '\\'). */
	return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b)) & highs;
}

/* The escape of `c` written at `o`, at most 6 bytes; returns its end. */
static char *put_escape(char *o, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";

	*o++ = '\\';
	switch (c) {
	case '"': *o++ = '"'; break;
	case '\\': *o++ = '\\'; break;
	case '\b': *o++ = 'b'; break;
	case '\f': *o++ = 'f'; break;
	case '\n': *o++ = 'n'; break;
	case '\r': *o++ = 'r'; break;
	case '\t': *o++ = 't'; break;
	default:
		memcpy(o, "u00", 3);
		o[3] = hex[c >> 4];
		o[4] = hex[c & 15];
		o += 5;
	}
	return o;
}

/*
 * Strings up to this long get room for their worst case (6 bytes a byte)
 * before the scan, so that it copies words as it reads them and an escape
 * asks for no room: a plan's bodies are a few hundred bytes with an escape
 * (a newline) every line, and asking at each one was most of their cost.
 */
#define QUOTE_ROOM_AT_ONCE 4096

/* Room quote_in_room() may write past the worst case: one block. */
#define QUOTE_SLACK 16

#if defined(__SSE2__)
/* The bytes of the block `v` that need an escape, as bits. */
static inline unsigned escape_bits(__m128i v)
{
	/* '"', '\\', or at most 0x1f as an unsigned byte. */
	return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(
		_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
		_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
		_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v)));
}
#endif

/*
 * pmbot_json_quote() where `out` has room for 6 * len + 2 + QUOTE_SLACK
 * more bytes. A whole block is stored and only its clean bytes kept: the
 * worst case of what is left to read (6 bytes each), and the slack,
 * cover the block written. Both scans flag a true escape first, so it is
 * written at once.
 */
static void quote_in_room(pmbot_buf *out, const char *s, size_t len)
{
	char *o = out->buf + out->len;
	size_t i = 0, k;

	*o++ = '"';
#if defined(__SSE2__)
	while (len - i >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		unsigned m;

		_mm_storeu_si128((__m128i *)(void *)o, v);
		if (!(m = escape_bits(v))) {
			o += 16;
			i += 16;
			continue;
		}
		k = (size_t)__builtin_ctz(m);
		o = put_escape(o + k, (unsigned char)s[i + k]);
		i += k + 1;
	}
	/*
	 * The last bytes, fewer than a block (all of an id, a key or a label),
	 * the same way from a copy: a byte at a time they were half the cost
	 * of quoting a plan. The copy is read a block from any of its first
	 * 15 bytes; what lies past them is masked off.
	 */
	if (i < len) {
		unsigned char tail[32];
		size_t j = 0, rem = len - i;

		memset(tail, 0, sizeof(tail));
		memcpy(tail, s + i, rem);
		while (j < rem) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(tail + j));
			unsigned m;

			_mm_storeu_si128((__m128i *)(void *)o, v);
			if (!(m = escape_bits(v) & ((1u << (rem - j)) - 1))) {
				o += rem - j;
				break;
			}
			k = (size_t)__builtin_ctz(m);
			o = put_escape(o + k, tail[j + k]);
			j += k + 1;
		}
		i = len;
	}
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (len - i >= 8) {
		uint64_t w, m;

		memcpy(&w, s + i, 8);
		memcpy(o, &w, 8);
		if (!(m = escape_mask(w))) {
			o += 8;
			i += 8;
			continue;
		}
		k = (size_t)__builtin_ctzll(m) >> 3;
		o = put_escape(o + k, (unsigned char)s[i + k]);
		i += k + 1;
	}
#endif
	for (; i < len; i++) {
		if (needs_escape((unsigned char)s[i]))
			o = put_escape(o, (unsigned char)s[i]);
		else
			*o++ = s[i];
	}
	*o++ = '"';
	*o = '\0';
	out->len = (size_t)(o - out->buf);
}

int pmbot_json_quote(pmbot_buf *out, const char *s, size_t len)
{
	size_t i = 0, run = 0;
	char *o;

	if (len <= QUOTE_ROOM_AT_ONCE && pmbot_buf_grow(out, 6 * len + 2 + QUOTE_SLACK) == 0) {
		quote_in_room(out, s, len);
		return 0;
	}
	/*
	 * Room for the common case (nothing to escape) at once; an escape
	 * makes room for itself and all that is left, so every byte is then
	 * written in place.
	 */
	if (len > SIZE_MAX - 8 || pmbot_buf_grow(out, len + 2) < 0)
		return -1;
	out->buf[out->len++] = '"';
	while (i < len) {
		/* Eight bytes at a time while none needs an escape. */
		while (len - i >= 8) {
			uint64_t w, m;

			memcpy(&w, s + i, 8);
			if ((m = escape_mask(w))) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
				i += (size_t)__builtin_ctzll(m) >> 3;
#endif
				break;
			}
			i += 8;
		}
		while (i < len && !needs_escape((unsigned char)s[i]))
			i++;
		if (i >= len)
			break;
		/* The run, at most 6 bytes of escape, the rest and the closing quote. */
		if (pmbot_buf_grow(out, len - run + 7) < 0)
			return -1;
		o = out->buf + out->len;
		memcpy(o, s + run, i - run);
		o = put_escape(o + (i - run), (unsigned char)s[i]);
		out->len = (size_t)(o - out->buf);
		run = ++i;
	}
	/* Room for these was made by the first grow or by the last escape's. */
	memcpy(out->buf + out->len, s + run, len - run);
	out->len += len - run;
	out->buf[out->len++] = '"';
	out->buf[out->len] = '\0';
	return 0;
}

/*
 * The digits are the fewest that read back to the same double; their layout
 * follows ECMAScript (plain decimals from 1e-7 up to 1e21, an exponent
 * outside) because "%g" alone turns 10.0 into "1e+01". The digits are taken
 * from "%e" output, so a locale's decimal comma cannot reach the result.
 */
static int put_real(pmbot_buf *out, double d)
{
	char tmp[40], digits[24];
	const char *p, *e;
	int prec, ndig = 0, point, i, err = 0;

	if (!isfinite(d))
		return -1;
	for (prec = 0; prec <= 16; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	if (!(e = strchr(tmp, 'e')))
		return -1;
	for (p = tmp; p < e; p++)
		if (*p >= '0' && *p <= '9')
			digits[ndig++] = *p;
	while (ndig > 1 && digits[ndig - 1] == '0')
		ndig--;
	/* The value is 0.DIGITS times ten to the power `point`. */
	point = (int)strtol(e + 1, NULL, 10) + 1;
	if (tmp[0] == '-')
		err |= pmbot_buf_putc(out, '-');
	if (point > 21 || point < -5) {
		err |= pmbot_buf_putc(out, digits[0]);
		if (ndig > 1) {
			err |= pmbot_buf_putc(out, '.');
			err |= pmbot_buf_put(out, digits + 1, (size_t)ndig - 1);
		}
		err |= pmbot_buf_printf(out, "e%c%d", point > 0 ? '+' : '-',
			point > 0 ? point - 1 : 1 - point);
	} else if (point <= 0) {
		err |= pmbot_buf_put(out, "0.", 2);
		for (i = point; i < 0; i++)
			err |= pmbot_buf_putc(out, '0');
		err |= pmbot_buf_put(out, digits, (size_t)ndig);
	} else if (point >= ndig) {
		err |= pmbot_buf_put(out, digits, (size_t)ndig);
		for (i = ndig; i < point; i++)
			err |= pmbot_buf_putc(out, '0');
		err |= pmbot_buf_put(out, ".0", 2);
	} else {
		err |= pmbot_buf_put(out, digits, (size_t)point);
		err |= pmbot_buf_putc(out, '.');
		err |= pmbot_buf_put(out, digits + point, (size_t)(ndig - point));
	}
	return err ? -1 : 0;
}

/* jansson 2.14 keys carry a length and may hold NUL bytes; sort and print all of them. */
typedef struct {
	const char *key;
	size_t len;
	json_t *value;
} member;

static int member_cmp(const void *pa, const void *pb)
{
	const member *a = pa, *b = pb;
	int c = memcmp(a->key, b->key, a->len < b->len ? a->len : b->len);

	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

static int put_object(pmbot_buf *out, const json_t *v)
{
	size_t n = json_object_size(v), i = 0;
	member *m;
	void *it;
	int err = 0;

	member small[16];

	if (!n)
		return pmbot_buf_put(out, "{}", 2);
	/* Most objects are small: their members are sorted on the stack. */
	if (n <= sizeof(small) / sizeof(small[0]))
		m = small;
	else if (!(m = malloc(n * sizeof(*m))))
		return -1;
	for (it = json_object_iter((json_t *)v); it && i < n;
	     it = json_object_iter_next((json_t *)v, it), i++) {
		m[i].key = json_object_iter_key(it);
		m[i].len = json_object_iter_key_len(it);
		m[i].value = json_object_iter_value(it);
	}
	n = i;
	/* Most objects are small, where insertion sort beats qsort's overhead. */
	if (n > 16) {
		qsort(m, n, sizeof(*m), member_cmp);
	} else {
		for (i = 1; i < n; i++) {
			member x = m[i];
			size_t j = i;

			for (; j > 0 && member_cmp(&m[j - 1], &x) > 0; j--)
				m[j] = m[j - 1];
			m[j] = x;
		}
	}
	err |= pmbot_buf_putc(out, '{');
	for (i = 0; i < n && !err; i++) {
		if (i)
			err |= pmbot_buf_putc(out, ',');
		err |= pmbot_json_quote(out, m[i].key, m[i].len);
		err |= pmbot_buf_putc(out, ':');
		err |= pmbot_json_canonical(out, m[i].value);
	}
	err |= pmbot_buf_putc(out, '}');
	if (m != small)
		free(m);
	return err ? -1 : 0;
}

static int put_integer(pmbot_buf *out, json_int_t v)
{
	char tmp[24], *p = tmp + sizeof(tmp);
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	return pmbot_buf_put(out, p, (size_t)(tmp + sizeof(tmp) - p));
}

int pmbot_json_canonical(pmbot_buf *out, const json_t *v)
{
	size_t i;
	int err = 0;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return put_object(out, v);
	case JSON_ARRAY:
		err |= pmbot_buf_putc(out, '[');
		for (i = 0; i < json_array_size(v) && !err; i++) {
			if (i)
				err |= pmbot_buf_putc(out, ',');
			err |= pmbot_json_canonical(out, json_array_get(v, i));
		}
		err |= pmbot_buf_putc(out, ']');
		return err ? -1 : 0;
	case JSON_STRING:
		return pmbot_json_quote(out, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return put_integer(out, json_integer_value(v));
	case JSON_REAL:
		return put_real(out, json_real_value(v));
	case JSON_TRUE:
		return pmbot_buf_put(out, "true", 4);
	case JSON_FALSE:
		return pmbot_buf_put(out, "false", 5);
	case JSON_NULL:
		return pmbot_buf_put(out, "null", 4);
	}
	return -1;
}

int pmbot_json_pointer_push(pmbot_buf *out, const char *token)
{
	int err = pmbot_buf_putc(out, '/');

	/* Copy the runs between '~' and '/' whole: validation builds a pointer per field. */
	while (*token && !err) {
		size_t run = strcspn(token, "~/");

		err = pmbot_buf_put(out, token, run);
		token += run;
		if (!*token || err)
			break;
		err = pmbot_buf_put(out, *token == '~' ? "~0" : "~1", 2);
		token++;
	}
	return err;
}

int pmbot_json_pointer_push_index(pmbot_buf *out, size_t index)
{
	char tmp[24], *p = tmp + sizeof(tmp);

	/* A reader checks a pointer per array element: no printf for a number. */
	do {
		*--p = (char)('0' + index % 10);
		index /= 10;
	} while (index);
	*--p = '/';
	return pmbot_buf_put(out, p, (size_t)(tmp + sizeof(tmp) - p));
}

json_t *pmbot_json_strings(char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_string(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

int pmbot_json_equal(const json_t *a, const json_t *b)
{
	if (json_typeof(a) != json_typeof(b))
		return 0;
	return json_equal((json_t *)a, (json_t *)b);
}

int pmbot_json_is_whole(double d)
{
	/* From 2^52 up every double is whole; below, the cast is exact and defined. */
	if (!isfinite(d))
		return 0;
	if (fabs(d) >= 0x1p52)
		return 1;
	return (double)(int64_t)d == d;
}

const char *pmbot_json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}
