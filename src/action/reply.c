#include "pmbot/action.h"

#include <string.h>

#include "pmbot/text.h"
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

#define LOGIN_MAX 40
#define ELLIPSIS "\xe2\x80\xa6"

static size_t code_points(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xC0) != 0x80;
	return n;
}

/* Logins are [A-Za-z0-9-] (and "[bot]"); anything else is not shown. */
static int put_login(pmbot_buf *out, const char *login)
{
	size_t i;
	int err = pmbot_buf_putc(out, '`');

	for (i = 0; !err && login[i] && i < LOGIN_MAX; i++) {
		unsigned char ch = (unsigned char)login[i];
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			(ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-' ||
			ch == '[' || ch == ']';

		err = pmbot_buf_putc(out, ok ? (char)ch : '?');
	}
	if (!err && login[i])
		err = pmbot_buf_puts(out, "...");
	if (!err)
		err = pmbot_buf_putc(out, '`');
	return err ? -1 : 0;
}

/*
 * The reply as one quoted line: flattened first (no line break can end the
 * quote), cut, then '<' made an entity (no HTML comment or tag can start,
 * so the marker is never forged), then neutralised last so that nothing
 * after it can undo the rule.
 */
static int put_reply(pmbot_buf *out, const char *reply)
{
	pmbot_buf flat = PMBOT_BUF_INIT, safe = PMBOT_BUF_INIT;
	size_t i, chars = 0, cut;
	int err;

	err = pmbot_text_flatten(&flat, reply, strlen(reply)) < 0;
	for (cut = 0; !err && cut < flat.len; cut++)
		if (((unsigned char)flat.buf[cut] & 0xC0) != 0x80 && chars++ == PMBOT_COMMENT_REPLY_MAX_CHARS)
			break;
	for (i = 0; !err && i < cut; i++)
		err = flat.buf[i] == '<' ? pmbot_buf_puts(&safe, "&lt;") < 0 :
			pmbot_buf_putc(&safe, flat.buf[i]) < 0;
	if (!err && cut < flat.len)
		err = pmbot_buf_puts(&safe, ELLIPSIS) < 0;
	if (!err)
		err = pmbot_text_neutralise(out, safe.buf ? safe.buf : "", safe.len, PMBOT_TEXT_CODE_SPANS) < 0;
	pmbot_buf_free(&flat);
	pmbot_buf_free(&safe);
	return err ? -1 : 0;
}

int pmbot_comment_reply(pmbot_buf *out, const char *body, const char *login, const char *reply,
	size_t max_chars)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	pmbot_comment_meta meta;
	const char *rest, *nl, *end;
	size_t mark = strlen(PMBOT_COMMENT_REPLY_MARK);
	int rc = PMBOT_ERROR, err;

	if (pmbot_comment_parse(&meta, body, strlen(body)) != PMBOT_OK)
		return PMBOT_ENOTFOUND;
	if (!pmbot_utf8_valid(reply, strlen(reply), NULL, NULL, NULL))
		return PMBOT_EINVALID;
	if (!max_chars)
		max_chars = PMBOT_COMMENT_MAX_CHARS;
	/* A header alone, without a line break, is a valid comment too. */
	if (!(nl = strchr(body, '\n')))
		nl = body + strlen(body);
	rest = *nl ? nl + 1 : nl;
	if (*rest == '\n')
		rest++;
	/*
	 * Only the exact block pm-bot writes counts as one: the mark alone on
	 * the line after the blank line, one quote line, a blank line.
	 */
	if (!strncmp(rest, PMBOT_COMMENT_REPLY_MARK "\n> ", mark + 3)) {
		/* A body cut after the quote line (trailing blank lines trimmed) still has it. */
		end = strchr(rest + mark + 1, '\n');
		if (!end)
			rest += strlen(rest);
		else if (end[1] == '\n' || end[1] == '\0')
			rest = end + 1 + (end[1] == '\n');
	}
	err = pmbot_buf_put(&b, body, (size_t)(nl - body)) < 0 ||
		pmbot_buf_puts(&b, "\n\n" PMBOT_COMMENT_REPLY_MARK "\n> Reply") < 0;
	if (!err && login && *login)
		err = pmbot_buf_puts(&b, " to ") < 0 || put_login(&b, login) < 0;
	err = err || pmbot_buf_puts(&b, ": ") < 0 || put_reply(&b, reply) < 0 ||
		pmbot_buf_puts(&b, "\n\n") < 0 || pmbot_buf_puts(&b, rest) < 0;
	if (err)
		goto done;
	if (code_points(b.buf, b.len) > max_chars) {
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (pmbot_buf_put(out, b.buf, b.len) < 0)
		goto done;
	rc = PMBOT_OK;
done:
	pmbot_buf_free(&b);
	return rc;
}
