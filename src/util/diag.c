#include "pmbot/diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

void pmbot_diag_list_free(pmbot_diag_list *list)
{
	size_t i;

	for (i = 0; i < list->count; i++) {
		free(list->items[i].file);
		free(list->items[i].path);
		free(list->items[i].message);
	}
	free(list->items);
	memset(list, 0, sizeof(*list));
}

static int reserve(pmbot_diag_list *list, size_t extra)
{
	size_t alloc;
	pmbot_diag *p;

	if (list->count + extra <= list->alloc)
		return 0;
	alloc = list->alloc ? list->alloc : 8;
	while (alloc < list->count + extra)
		alloc *= 2;
	p = realloc(list->items, alloc * sizeof(*p));
	if (!p)
		return -1;
	list->items = p;
	list->alloc = alloc;
	return 0;
}

int pmbot_diag_add(pmbot_diag_list *list, pmbot_severity sev, const char *code,
	const char *file, const char *path, int line, int column,
	const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	pmbot_diag *d;
	va_list ap;
	int err = -1;

	va_start(ap, fmt);
	if (pmbot_buf_vprintf(&msg, fmt, ap) < 0) {
		va_end(ap);
		goto done;
	}
	va_end(ap);
	if (reserve(list, 1) < 0)
		goto done;
	d = &list->items[list->count];
	d->code = code;
	d->severity = sev;
	d->line = line;
	d->column = column;
	d->file = dup_or_null(file);
	d->path = strdup(path ? path : "");
	d->message = pmbot_buf_detach(&msg, NULL);
	if ((file && !d->file) || !d->path || !d->message) {
		free(d->file);
		free(d->path);
		free(d->message);
		goto done;
	}
	list->count++;
	if (sev == PMBOT_SEV_ERROR)
		list->errors++;
	else
		list->warnings++;
	err = 0;
done:
	pmbot_buf_free(&msg);
	return err;
}

int pmbot_diag_list_move(pmbot_diag_list *dst, pmbot_diag_list *src)
{
	if (!src->count)
		return 0;
	if (reserve(dst, src->count) < 0)
		return -1;
	memcpy(dst->items + dst->count, src->items, src->count * sizeof(*src->items));
	dst->count += src->count;
	dst->errors += src->errors;
	dst->warnings += src->warnings;
	free(src->items);
	memset(src, 0, sizeof(*src));
	return 0;
}

int pmbot_diag_list_set_file(pmbot_diag_list *list, const char *file)
{
	size_t i;

	for (i = 0; i < list->count; i++) {
		if (list->items[i].file)
			continue;
		if (!(list->items[i].file = strdup(file)))
			return -1;
	}
	return 0;
}

static int strcmp_null(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int diag_cmp(const pmbot_diag *a, const pmbot_diag *b)
{
	int c;

	if ((c = strcmp_null(a->file, b->file)))
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->column != b->column)
		return a->column < b->column ? -1 : 1;
	if (a->severity != b->severity)
		return a->severity < b->severity ? -1 : 1;
	if ((c = strcmp(a->code, b->code)))
		return c;
	return strcmp(a->path, b->path);
}

/* Insertion-merge sort: stable, and lists are short or already nearly sorted. */
void pmbot_diag_list_sort(pmbot_diag_list *list)
{
	pmbot_diag *tmp;
	size_t width, i;

	if (list->count < 2)
		return;
	tmp = malloc(list->count * sizeof(*tmp));
	if (!tmp)
		return;
	for (width = 1; width < list->count; width *= 2) {
		for (i = 0; i < list->count; i += 2 * width) {
			size_t lo = i, mid = i + width, hi = i + 2 * width, a, b, k;

			if (mid > list->count)
				mid = list->count;
			if (hi > list->count)
				hi = list->count;
			for (a = lo, b = mid, k = lo; k < hi; k++) {
				if (a < mid && (b >= hi ||
						diag_cmp(&list->items[a], &list->items[b]) <= 0))
					tmp[k] = list->items[a++];
				else
					tmp[k] = list->items[b++];
			}
		}
		memcpy(list->items, tmp, list->count * sizeof(*tmp));
	}
	free(tmp);
}

const pmbot_diag *pmbot_diag_list_find(const pmbot_diag_list *list,
	const char *code)
{
	size_t i;

	for (i = 0; i < list->count; i++)
		if (!strcmp(list->items[i].code, code))
			return &list->items[i];
	return NULL;
}

const char *pmbot_severity_name(pmbot_severity sev)
{
	return sev == PMBOT_SEV_ERROR ? "error" : "warning";
}

/* A file name, a pointer or a message is printed log-safe: it may hold report text. */
static int put_safe(pmbot_buf *out, const char *s, size_t max_chars)
{
	return pmbot_log_escape(out, s, strlen(s), max_chars);
}

int pmbot_diag_format(pmbot_buf *out, const pmbot_diag *d)
{
	size_t start = out->len;
	int err = 0;

	if (d->file) {
		err |= put_safe(out, d->file, PMBOT_LOG_NAME_MAX);
		err |= pmbot_buf_putc(out, ':');
	}
	if (d->line > 0)
		err |= pmbot_buf_printf(out, "%d:", d->line);
	if (d->line > 0 && d->column > 0)
		err |= pmbot_buf_printf(out, "%d:", d->column);
	if (out->len > start)
		err |= pmbot_buf_putc(out, ' ');
	err |= pmbot_buf_printf(out, "%s %s ", pmbot_severity_name(d->severity), d->code);
	err |= d->path[0] ? put_safe(out, d->path, PMBOT_LOG_NAME_MAX)
		: pmbot_buf_puts(out, "(root)");
	err |= pmbot_buf_puts(out, ": ");
	err |= put_safe(out, d->message, PMBOT_LOG_MESSAGE_MAX);
	err |= pmbot_buf_putc(out, '\n');
	return err ? -1 : 0;
}

/*
 * Code points a terminal or a log viewer acts on rather than shows: C1
 * controls (0x9b is a CSI, like ESC [), the line and paragraph separators
 * some viewers break lines at, and the bidirectional overrides that make a
 * line read differently from its bytes.
 */
static int invisible_cp(unsigned long cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
		(cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
		cp == 0xfeff;
}

enum {
	ESC_BACKTICK = 1u << 0, /* '`' too: the text goes inside a Markdown code span */
	ESC_COUNT = 1u << 1,    /* say how many bytes the cut left out */
	ESC_KEEP_LINES = 1u << 2 /* leave '\n' and '\r' as they are: the caller encodes them */
};

/*
 * The one escaper of outside text: everything printed to a log or put into
 * a diagnostic message goes through here, so the two cannot drift apart.
 */
static int escape_text(pmbot_buf *b, const char *str, size_t len, size_t max_chars,
	unsigned flags)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, chars = 0;
	int err = 0;

	while (i < len && !err) {
		unsigned long cp;
		size_t n;

		if (chars++ == max_chars) {
			err |= pmbot_buf_puts(b, "...");
			if (flags & ESC_COUNT)
				err |= pmbot_buf_printf(b, "[%zu more bytes]", len - i);
			break;
		}
		n = pmbot_utf8_decode((const char *)s + i, len - i, &cp);
		if (!n) {
			/* Not UTF-8 (or NUL): show the byte, never pass it on. */
			err |= pmbot_buf_printf(b, "\\x%02x", s[i]);
			i++;
			continue;
		}
		if ((flags & ESC_KEEP_LINES) && (cp == '\n' || cp == '\r'))
			err |= pmbot_buf_putc(b, (char)cp);
		else if (cp < 0x20 || cp == 0x7f || (cp == '`' && (flags & ESC_BACKTICK)) ||
				/* "::" opens a workflow command wherever the value starts a line */
				(i == 0 && cp == ':' && len > 1 && s[1] == ':'))
			err |= pmbot_buf_printf(b, "\\x%02lx", cp);
		else if (invisible_cp(cp))
			err |= pmbot_buf_printf(b, "\\u%04lx", cp);
		else
			err |= pmbot_buf_put(b, s + i, n);
		i += n;
	}
	return err ? -1 : 0;
}

int pmbot_log_escape(pmbot_buf *out, const char *s, size_t len, size_t max_chars)
{
	return escape_text(out, s, len, max_chars, ESC_COUNT);
}

const char *pmbot_log_show(pmbot_buf *scratch, const char *s, size_t max_chars)
{
	pmbot_buf_clear(scratch);
	if (!s)
		s = "(null)";
	return escape_text(scratch, s, strlen(s), max_chars, ESC_COUNT) < 0 ? "?" : scratch->buf;
}

const char *pmbot_diag_show(pmbot_buf *b, const char *s, size_t max_chars)
{
	pmbot_buf_clear(b);
	return escape_text(b, s, strlen(s), max_chars, ESC_BACKTICK) < 0 ? "?" : b->buf;
}

/*
 * One value of a workflow command: log-safe first (no control character,
 * no bidirectional trick survives), then the runner's own encoding, so the
 * runner decodes exactly the log-safe text and nothing in it can end the
 * value, the property list or the line.
 */
static int put_command_value(pmbot_buf *out, const char *s, size_t max_chars, int property)
{
	pmbot_buf safe = PMBOT_BUF_INIT;
	size_t i;
	int err;

	err = escape_text(&safe, s, strlen(s), max_chars, ESC_COUNT | ESC_KEEP_LINES);
	for (i = 0; i < safe.len && !err; i++) {
		char c = safe.buf[i];

		if (c == '%')
			err |= pmbot_buf_puts(out, "%25");
		else if (c == '\r')
			err |= pmbot_buf_puts(out, "%0D");
		else if (c == '\n')
			err |= pmbot_buf_puts(out, "%0A");
		else if (property && c == ':')
			err |= pmbot_buf_puts(out, "%3A");
		else if (property && c == ',')
			err |= pmbot_buf_puts(out, "%2C");
		else
			err |= pmbot_buf_putc(out, c);
	}
	pmbot_buf_free(&safe);
	return err ? -1 : 0;
}

int pmbot_diag_annotation(pmbot_buf *out, const pmbot_diag *d)
{
	size_t start = out->len;
	int err = 0;

	err |= pmbot_buf_printf(out, "::%s ", pmbot_severity_name(d->severity));
	if (d->file && d->file[0]) {
		err |= pmbot_buf_puts(out, "file=");
		err |= put_command_value(out, d->file, PMBOT_LOG_NAME_MAX, 1);
		err |= pmbot_buf_putc(out, ',');
		if (d->line > 0)
			err |= pmbot_buf_printf(out, "line=%d,", d->line);
		if (d->line > 0 && d->column > 0)
			err |= pmbot_buf_printf(out, "col=%d,", d->column);
	}
	err |= pmbot_buf_puts(out, "title=");
	err |= put_command_value(out, d->code ? d->code : "?", PMBOT_ANNOTATION_TITLE_MAX, 1);
	err |= pmbot_buf_puts(out, "::");
	if (d->path && d->path[0]) {
		err |= put_command_value(out, d->path, PMBOT_LOG_NAME_MAX, 0);
		err |= pmbot_buf_puts(out, ": ");
	}
	err |= put_command_value(out, d->message ? d->message : "", PMBOT_LOG_MESSAGE_MAX, 0);
	err |= pmbot_buf_putc(out, '\n');
	if (err)
		pmbot_buf_truncate(out, start);
	return err ? -1 : 0;
}
