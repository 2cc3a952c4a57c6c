#include "pmbot/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pmbot_json_quote(pmbot_buf *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0;
	int err = 0;

	err |= pmbot_buf_putc(out, '"');
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[7];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		err |= pmbot_buf_put(out, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"': err |= pmbot_buf_put(out, "\\\"", 2); break;
		case '\\': err |= pmbot_buf_put(out, "\\\\", 2); break;
		case '\b': err |= pmbot_buf_put(out, "\\b", 2); break;
		case '\f': err |= pmbot_buf_put(out, "\\f", 2); break;
		case '\n': err |= pmbot_buf_put(out, "\\n", 2); break;
		case '\r': err |= pmbot_buf_put(out, "\\r", 2); break;
		case '\t': err |= pmbot_buf_put(out, "\\t", 2); break;
		default:
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			err |= pmbot_buf_put(out, esc, 6);
		}
	}
	err |= pmbot_buf_put(out, s + run, len - run);
	err |= pmbot_buf_putc(out, '"');
	return err ? -1 : 0;
}

static int put_real(pmbot_buf *out, double d)
{
	char tmp[40];
	int prec;

	if (!isfinite(d))
		return -1;
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	if (!strpbrk(tmp, ".eEn"))
		return pmbot_buf_printf(out, "%s.0", tmp);
	return pmbot_buf_puts(out, tmp);
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int put_object(pmbot_buf *out, const json_t *v)
{
	size_t n = json_object_size(v), i = 0;
	const char **keys, *key;
	json_t *child;
	int err = 0;

	if (!n)
		return pmbot_buf_put(out, "{}", 2);
	if (!(keys = malloc(n * sizeof(*keys))))
		return -1;
	json_object_foreach((json_t *)v, key, child)
		keys[i++] = key;
	qsort(keys, n, sizeof(*keys), key_cmp);
	err |= pmbot_buf_putc(out, '{');
	for (i = 0; i < n && !err; i++) {
		if (i)
			err |= pmbot_buf_putc(out, ',');
		err |= pmbot_json_quote(out, keys[i], strlen(keys[i]));
		err |= pmbot_buf_putc(out, ':');
		err |= pmbot_json_canonical(out, json_object_get(v, keys[i]));
	}
	err |= pmbot_buf_putc(out, '}');
	free(keys);
	return err ? -1 : 0;
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
		return pmbot_buf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
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

	for (; *token && !err; token++) {
		if (*token == '~')
			err = pmbot_buf_put(out, "~0", 2);
		else if (*token == '/')
			err = pmbot_buf_put(out, "~1", 2);
		else
			err = pmbot_buf_putc(out, *token);
	}
	return err;
}

int pmbot_json_pointer_push_index(pmbot_buf *out, size_t index)
{
	return pmbot_buf_printf(out, "/%zu", index);
}

int pmbot_json_equal(const json_t *a, const json_t *b)
{
	if (json_typeof(a) != json_typeof(b))
		return 0;
	return json_equal((json_t *)a, (json_t *)b);
}
