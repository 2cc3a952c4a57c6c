#include <stdarg.h>

#include "pmbot/buf.h"
#include "pmbot/note.h"
#include "pmbot/banned.h"

void pmbot_note(const pmbot_notes *n, pmbot_note_level level, const char *fmt, ...)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	va_list ap;
	int r;

	if (!n || !n->line)
		return;
	va_start(ap, fmt);
	r = pmbot_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (r == 0)
		n->line(n->ctx, level, b.buf);
	pmbot_buf_free(&b);
}

void pmbot_note_diags(const pmbot_notes *n, pmbot_diag_list *diags)
{
	if (n && n->diags && diags && diags->count)
		n->diags(n->ctx, diags);
}
