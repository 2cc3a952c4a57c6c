#include "pmbot/action.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/json.h"
#include "pmbot/plan.h"
#include "pmbot/strmap.h"
#include "pmbot/text.h"
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

#define HEADER_JSON_MAX 1024
#define MSG_MAX_CHARS 300
#define KEY_MAX_CHARS 120
#define LABEL_MAX_CHARS 80
#define RESULTS_LISTED 20
#define ERRORS_LISTED 50
/* Room kept for a "… and N more" line, whatever N is. */
#define MORE_RESERVE 64

#define ELLIPSIS "\xe2\x80\xa6"
#define REPLACEMENT "\xef\xbf\xbd"

static const char *const kinds[] = { "plan", "field-sync" };
static const char *const statuses[] = {
	"planned", "no_changes", "invalid", "applying", "applied", "failed", "stale", "paused",
};

static size_t chars_of(const char *s, size_t len)
{
	size_t n = 0, i;

	for (i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

static size_t buf_chars(const pmbot_buf *b)
{
	return chars_of(b->buf, b->len);
}

/* Bytes of the well-formed UTF-8 sequence at s, 0 when it is not one. */
static size_t seq_at(const char *s, size_t left)
{
	size_t n = pmbot_utf8_seqlen((unsigned char)s[0]);

	if (n > left || !pmbot_utf8_valid(s, n, NULL, NULL, NULL))
		return 0;
	return n;
}

/* ---- the header ------------------------------------------------------------ */

static int one_of(const char *s, const char *const *set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, set[i]))
			return 1;
	return 0;
}

static int hex_or_empty(const char *s, size_t want)
{
	size_t i;

	if (!*s)
		return 1;
	for (i = 0; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == want;
}

/* Run ids are GITHUB_RUN_ID, maybe with an attempt suffix: nothing to escape. */
static int run_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
			    (*s >= 'A' && *s <= 'Z') || strchr("._:/-", *s)))
			return 0;
	return 1;
}

#define TERMINATED(a) (memchr((a), '\0', sizeof(a)) != NULL)

static int meta_valid(const pmbot_comment_meta *m)
{
	if (!TERMINATED(m->kind) || !TERMINATED(m->head) || !TERMINATED(m->plan_hash) ||
	    !TERMINATED(m->status) || !TERMINATED(m->run))
		return 0;
	if (!one_of(m->kind, kinds, sizeof(kinds) / sizeof(kinds[0])) ||
	    !one_of(m->status, statuses, sizeof(statuses) / sizeof(statuses[0])))
		return 0;
	if (m->number < 0 || !hex_or_empty(m->head, 40) || !hex_or_empty(m->plan_hash, 64) ||
	    !run_ok(m->run))
		return 0;
	/* The run names the lock holder, and only "applying" holds the lock. */
	return (strcmp(m->status, "applying") == 0) == (m->run[0] != '\0');
}

int pmbot_comment_header(pmbot_buf *out, const pmbot_comment_meta *meta)
{
	pmbot_buf json = PMBOT_BUF_INIT;
	size_t orig = out->len, i;
	json_t *o = NULL;
	int rc = PMBOT_ERROR, err = 0;

	if (!meta || !meta_valid(meta)) {
		rc = PMBOT_EINVALID;
		goto done;
	}
	o = json_pack("{s:i, s:s, s:I, s:s, s:s, s:s, s:s}", "v", 1, "kind", meta->kind,
		"number", (json_int_t)meta->number, "head", meta->head, "plan_hash",
		meta->plan_hash, "status", meta->status, "run", meta->run);
	if (!o || pmbot_json_canonical(&json, o) < 0)
		goto done;
	err |= pmbot_buf_puts(out, PMBOT_COMMENT_PREFIX);
	/*
	 * Every '-' and '>' is inside a string (numbers are never negative), so
	 * a \u escape there reads back as the same value.
	 */
	for (i = 0; i < json.len && !err; i++) {
		char c = json.buf[i];

		if (c == '>')
			err |= pmbot_buf_puts(out, "\\u003e");
		else if (c == '-' && out->len > orig && out->buf[out->len - 1] == '-')
			err |= pmbot_buf_puts(out, "\\u002d");
		else
			err |= pmbot_buf_putc(out, c);
	}
	err |= pmbot_buf_puts(out, " -->");
	if (!err)
		rc = PMBOT_OK;
done:
	if (rc != PMBOT_OK)
		pmbot_buf_truncate(out, orig);
	json_decref(o);
	pmbot_buf_free(&json);
	return rc;
}

/* Copy a JSON string member into a fixed array; 0 when absent, too long or holding NUL. */
static int copy_member(char *dst, size_t size, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	size_t len;

	if (!json_is_string(v))
		return 0;
	len = json_string_length(v);
	if (len >= size || memchr(json_string_value(v), '\0', len))
		return 0;
	memcpy(dst, json_string_value(v), len);
	dst[len] = '\0';
	return 1;
}

int pmbot_comment_parse(pmbot_comment_meta *out, const char *body, size_t len)
{
	static const size_t plen = sizeof(PMBOT_COMMENT_PREFIX) - 1;
	const char *line_end, *json_start, *close;
	pmbot_comment_meta m;
	json_t *o = NULL;
	const json_t *v, *num;
	size_t line_len;
	int rc = PMBOT_EINVALID;

	memset(out, 0, sizeof(*out));
	memset(&m, 0, sizeof(m));
	if (!body || len < plen || memcmp(body, PMBOT_COMMENT_PREFIX, plen))
		return PMBOT_ENOTFOUND;
	line_end = memchr(body, '\n', len);
	line_len = line_end ? (size_t)(line_end - body) : len;
	if (line_len && body[line_len - 1] == '\r')
		line_len--;
	/* The HTML comment ends at the first "-->", so the JSON must stop before it. */
	json_start = body + plen;
	for (close = json_start; close + 3 <= body + line_len; close++)
		if (!memcmp(close, "-->", 3))
			break;
	if (close + 3 != body + line_len || close == json_start || close[-1] != ' ')
		goto done;
	if ((size_t)(close - 1 - json_start) > HEADER_JSON_MAX)
		goto done;
	o = json_loadb(json_start, (size_t)(close - 1 - json_start), JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(o) || json_object_size(o) != 7)
		goto done;
	v = json_object_get(o, "v");
	num = json_object_get(o, "number");
	if (!json_is_integer(v) || json_integer_value(v) != 1 || !json_is_integer(num) ||
	    json_integer_value(num) < 0 || json_integer_value(num) > (json_int_t)LONG_MAX)
		goto done;
	m.number = (long)json_integer_value(num);
	if (!copy_member(m.kind, sizeof(m.kind), o, "kind") ||
	    !copy_member(m.head, sizeof(m.head), o, "head") ||
	    !copy_member(m.plan_hash, sizeof(m.plan_hash), o, "plan_hash") ||
	    !copy_member(m.status, sizeof(m.status), o, "status") ||
	    !copy_member(m.run, sizeof(m.run), o, "run") || !meta_valid(&m))
		goto done;
	*out = m;
	rc = PMBOT_OK;
done:
	json_decref(o);
	return rc;
}

/* ---- Markdown text ------------------------------------------------------------ */


/*
 * Inline text on one line: a backslash before everything that could start
 * emphasis, code, a link, raw HTML, an entity or strikethrough; controls
 * become spaces so a value never ends the list item it is in. Cut after
 * `max` code points with "…".
 */
static int put_text(pmbot_buf *b, const char *s, size_t len, size_t max)
{
	size_t i = 0, n = 0;
	int err = 0;

	while (i < len && !err) {
		unsigned char c = (unsigned char)s[i];
		size_t k = seq_at(s + i, len - i);

		if (n++ == max) {
			err |= pmbot_buf_puts(b, ELLIPSIS);
			break;
		}
		if (!k) {
			err |= pmbot_buf_puts(b, REPLACEMENT);
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			err |= pmbot_buf_putc(b, ' ');
		else if (k == 1 && strchr("\\`*_[]<>&|~$", c))
			err |= pmbot_buf_putc(b, '\\') < 0 || pmbot_buf_putc(b, (char)c) < 0;
		else
			err |= pmbot_buf_put(b, s + i, k);
		/* Never a mention or a link (pmbot/text.h). */
		if (k == 1 && pmbot_text_needs_zwnj(s, len, i))
			err |= pmbot_buf_puts(b, PMBOT_TEXT_ZWNJ);
		i += k;
	}
	return err ? -1 : 0;
}

/*
 * A code span whose fence is one backtick longer than any run inside, so
 * nothing in it can close it; padded when it starts or ends with one.
 */
static int put_code(pmbot_buf *b, const char *s, size_t len, size_t max)
{
	size_t run = 0, longest = 0, i, n = 0;
	int pad, err = 0;

	if (!len)
		return pmbot_buf_puts(b, "*(empty)*");
	for (i = 0; i < len; i++) {
		run = s[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	pad = s[0] == '`' || s[len - 1] == '`' || s[0] == ' ';
	for (i = 0; i <= longest; i++)
		err |= pmbot_buf_putc(b, '`');
	if (pad)
		err |= pmbot_buf_putc(b, ' ');
	for (i = 0; i < len && !err;) {
		unsigned char c = (unsigned char)s[i];
		size_t k = seq_at(s + i, len - i);

		if (n++ == max) {
			err |= pmbot_buf_puts(b, ELLIPSIS);
			break;
		}
		if (!k) {
			err |= pmbot_buf_puts(b, REPLACEMENT);
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			err |= pmbot_buf_putc(b, ' ');
		else
			err |= pmbot_buf_put(b, s + i, k);
		i += k;
	}
	if (pad)
		err |= pmbot_buf_putc(b, ' ');
	for (i = 0; i <= longest; i++)
		err |= pmbot_buf_putc(b, '`');
	return err ? -1 : 0;
}

static int put_codez(pmbot_buf *b, const char *s, size_t max)
{
	return put_code(b, s, strlen(s), max);
}

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* ---- lists that stop when the budget runs out ------------------------------------ */

typedef int (*entry_fn)(pmbot_buf *b, const void *ctx, size_t i);

/*
 * Append `head` and then entries `pick[0..n)` while they fit in `budget`
 * code points (at most `cap` of them), then "*… and N more ONE|MANY.*" for
 * the rest; the section ends with a blank line. Nothing is appended when
 * the head does not fit.
 */
static int put_list(pmbot_buf *out, size_t budget, const pmbot_buf *head, const size_t *pick,
	size_t n, size_t cap, entry_fn fn, const void *ctx, const char *one, const char *many)
{
	pmbot_buf entry = PMBOT_BUF_INIT;
	size_t used = buf_chars(head) + 1, shown = 0, orig = out->len;
	int rc = -1;

	if (used + (n ? MORE_RESERVE : 0) > budget)
		return 0;
	if (pmbot_buf_put(out, head->buf, head->len) < 0)
		goto done;
	for (shown = 0; shown < n && shown < cap; shown++) {
		size_t need;

		pmbot_buf_clear(&entry);
		if (fn(&entry, ctx, pick[shown]) < 0)
			goto done;
		need = buf_chars(&entry) + (shown + 1 < n ? MORE_RESERVE : 0);
		if (used + need > budget)
			break;
		if (pmbot_buf_put(out, entry.buf, entry.len) < 0)
			goto done;
		used += buf_chars(&entry);
	}
	if (shown < n && pmbot_buf_printf(out, "\n*" ELLIPSIS " and %zu more %s.*\n", n - shown,
		    n - shown == 1 ? one : many) < 0)
		goto done;
	if (pmbot_buf_putc(out, '\n') < 0)
		goto done;
	rc = 0;
done:
	if (rc < 0)
		pmbot_buf_truncate(out, orig);
	pmbot_buf_free(&entry);
	return rc;
}

/* ---- apply results ------------------------------------------------------------------ */

static int put_result(pmbot_buf *b, const void *ctx, size_t i)
{
	const json_t *r = json_array_get((const json_t *)ctx, i);
	const char *id = jstr(r, "changeset_id"), *key = jstr(r, "idempotency_key");
	const char *status = jstr(r, "status"), *reason = jstr(r, "reason");
	const char *msg = jstr(r, "message");
	int err = 0;

	err |= pmbot_buf_puts(b, "- ");
	if (id)
		err |= put_codez(b, id, KEY_MAX_CHARS) < 0 || pmbot_buf_putc(b, ' ') < 0;
	if (key)
		err |= put_codez(b, key, KEY_MAX_CHARS) < 0 || pmbot_buf_putc(b, ' ') < 0;
	err |= pmbot_buf_printf(b, "**%s**", status);
	if (reason)
		err |= pmbot_buf_puts(b, ": ") < 0 || put_codez(b, reason, KEY_MAX_CHARS) < 0;
	if (msg)
		err |= pmbot_buf_puts(b, reason ? " \xe2\x80\x94 " : ": ") < 0 ||
			put_text(b, msg, json_string_length(json_object_get(r, "message")),
				MSG_MAX_CHARS) < 0;
	err |= pmbot_buf_putc(b, '\n');
	return err ? -1 : 0;
}

static int put_results(pmbot_buf *out, const json_t *results, size_t budget)
{
	static const char *const rows[][2] = {
		{ "applied", "Applied" }, { "already_applied", "Already applied" },
		{ "failed", "Failed" }, { "denied", "Denied" }, { "pending", "Pending" },
	};
	size_t counts[5] = { 0 }, n = json_array_size(results), npick = 0, i, k;
	size_t *pick = malloc((n ? n : 1) * sizeof(*pick));
	pmbot_buf head = PMBOT_BUF_INIT;
	int err = 0;

	if (!pick)
		return -1;
	for (i = 0; i < n; i++) {
		const char *st = jstr(json_array_get(results, i), "status");

		for (k = 0; st && k < 5; k++)
			if (!strcmp(st, rows[k][0]))
				counts[k]++;
		/* Only "failed" and "denied" are listed: the counts say the rest. */
		if (st && (!strcmp(st, "failed") || !strcmp(st, "denied")))
			pick[npick++] = i;
	}
	err |= pmbot_buf_puts(&head, "### Apply result\n\n| Result | Count |\n| :-- | --: |\n");
	for (k = 0; k < 5; k++)
		err |= pmbot_buf_printf(&head, "| %s | %zu |\n", rows[k][1], counts[k]);
	if (npick)
		err |= pmbot_buf_putc(&head, '\n');
	if (!err)
		err |= put_list(out, budget, &head, pick, npick, RESULTS_LISTED, put_result,
			results, "result", "results");
	pmbot_buf_free(&head);
	free(pick);
	return err ? -1 : 0;
}

/* ---- invalid reports ----------------------------------------------------------------- */

static int put_error(pmbot_buf *b, const void *ctx, size_t i)
{
	const pmbot_diag *d = &((const pmbot_diag_list *)ctx)->items[i];
	pmbot_buf loc = PMBOT_BUF_INIT;
	int err = 0;

	err |= pmbot_buf_puts(b, "- ");
	if (d->file || d->line > 0) {
		if (d->file)
			err |= pmbot_buf_puts(&loc, d->file);
		if (d->line > 0)
			err |= pmbot_buf_printf(&loc, "%s%d", d->file ? ":" : "line ", d->line);
		err |= put_code(b, loc.buf, loc.len, KEY_MAX_CHARS) < 0 || pmbot_buf_putc(b, ' ') < 0;
	}
	err |= put_codez(b, d->code ? d->code : "?", KEY_MAX_CHARS) < 0 ||
		pmbot_buf_putc(b, ' ') < 0;
	if (d->path && d->path[0])
		err |= put_codez(b, d->path, KEY_MAX_CHARS);
	else
		err |= pmbot_buf_puts(b, "(root)");
	err |= pmbot_buf_puts(b, ": ") < 0 ||
		put_text(b, d->message ? d->message : "", d->message ? strlen(d->message) : 0,
			MSG_MAX_CHARS) < 0 || pmbot_buf_putc(b, '\n') < 0;
	pmbot_buf_free(&loc);
	return err ? -1 : 0;
}

/*
 * The diagnostics of one severity under their heading (already in `head`'s
 * words), in the error form and the list's cap.
 */
static int put_diags(pmbot_buf *out, const pmbot_diag_list *diags, size_t budget,
	pmbot_severity sev)
{
	size_t *pick = malloc((diags->count ? diags->count : 1) * sizeof(*pick)), n = 0, i;
	pmbot_buf head = PMBOT_BUF_INIT;
	int err = 0;

	if (!pick)
		return -1;
	for (i = 0; i < diags->count; i++)
		if (diags->items[i].severity == sev)
			pick[n++] = i;
	if (n && sev == PMBOT_SEV_ERROR)
		err |= pmbot_buf_printf(&head, "### Reports are invalid\n\n%zu error%s: fix %s and "
			"push again; nothing can be planned or applied until then.\n\n", n,
			n == 1 ? "" : "s", n == 1 ? "it" : "them");
	else if (n)
		err |= pmbot_buf_printf(&head, "### Warnings\n\n%zu warning%s: %s not stop the plan, "
			"but worth a look.\n\n", n, n == 1 ? "" : "s", n == 1 ? "it does" : "they do");
	if (n && !err)
		err |= put_list(out, budget, &head, pick, n, ERRORS_LISTED, put_error, diags,
			sev == PMBOT_SEV_ERROR ? "error" : "warning",
			sev == PMBOT_SEV_ERROR ? "errors" : "warnings");
	pmbot_buf_free(&head);
	free(pick);
	return err ? -1 : 0;
}

static int put_errors(pmbot_buf *out, const pmbot_diag_list *diags, size_t budget)
{
	return put_diags(out, diags, budget, PMBOT_SEV_ERROR);
}

/*
 * Warnings do not stop a plan, but the author of the reports reads the
 * comment, not the job log: they are listed after the errors, same form.
 */
static int put_warnings(pmbot_buf *out, const pmbot_diag_list *diags, size_t budget)
{
	return put_diags(out, diags, budget, PMBOT_SEV_WARNING);
}

/* ---- notice ------------------------------------------------------------------------------ */

/*
 * The notice is the caller's Markdown: it is cut, only when it must be, at
 * a line end so no line of it is split.
 */
static int put_notice(pmbot_buf *out, const char *s, size_t budget)
{
	static const char note[] = "\n\n*(Notice cut to fit in this comment.)*\n\n";
	size_t len = strlen(s), keep, i, chars = 0, note_chars = chars_of(note, sizeof(note) - 1);

	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		len--;
	if (!len)
		return 0;
	if (chars_of(s, len) + 2 <= budget)
		return pmbot_buf_put(out, s, len) < 0 || pmbot_buf_puts(out, "\n\n") < 0 ? -1 : 0;
	if (note_chars > budget)
		return 0;
	for (i = 0, keep = 0; i < len; i++) {
		if (s[i] == '\n' && chars + note_chars <= budget)
			keep = i;
		chars += ((unsigned char)s[i] & 0xc0) != 0x80;
	}
	while (keep && (s[keep - 1] == '\r' || s[keep - 1] == '\n'))
		keep--;
	if (pmbot_buf_put(out, s, keep) < 0)
		return -1;
	return pmbot_buf_puts(out, keep ? note : note + 2);
}

/* ---- Mermaid ------------------------------------------------------------------------------ */

enum { CLS_CONFLICT, CLS_CREATED, CLS_CHANGED, CLS_BOUND };

static const char *const cls_names[] = { "conflict", "created", "changed", NULL };

typedef struct {
	const char *id;  /* borrowed from the bundle */
	int cls;
	size_t node;     /* shown: its n-number; else SIZE_MAX */
} touched;

typedef struct {
	pmbot_strmap index; /* stable_id -> 1 + position in `items` */
	touched *items;
	size_t n, alloc;
} touched_set;

static int touch(touched_set *t, const json_t *id, int cls)
{
	const char *s = json_string_value(id);
	void *found;

	if (!s || !*s)
		return 0;
	if (pmbot_strmap_get(&t->index, s, &found)) {
		touched *e = &t->items[(uintptr_t)found - 1];

		if (cls < e->cls)
			e->cls = cls;
		return 0;
	}
	if (t->n == t->alloc) {
		size_t na = t->alloc ? t->alloc * 2 : 32;
		touched *p = realloc(t->items, na * sizeof(*p));

		if (!p)
			return -1;
		t->items = p;
		t->alloc = na;
	}
	t->items[t->n].id = s;
	t->items[t->n].cls = cls;
	t->items[t->n].node = SIZE_MAX;
	t->n++;
	return pmbot_strmap_put(&t->index, s, (void *)(uintptr_t)t->n, NULL) < 0 ? -1 : 0;
}

static int collect(touched_set *t, const json_t *bundle)
{
	const json_t *cs = json_object_get(bundle, "changesets");
	const json_t *conflicts = json_object_get(bundle, "conflicts");
	size_t i;

	for (i = 0; i < json_array_size(conflicts); i++)
		if (touch(t, json_object_get(json_array_get(conflicts, i), "stable_id"),
			    CLS_CONFLICT) < 0)
			return -1;
	for (i = 0; i < json_array_size(cs); i++) {
		const json_t *c = json_array_get(cs, i), *pl = json_object_get(c, "payload");
		const char *op = jstr(c, "operation");
		int cls = op && !strcmp(op, "create_issue") ? CLS_CREATED : CLS_CHANGED;

		if (touch(t, json_object_get(json_object_get(c, "target"), "stable_id"), cls) < 0 ||
		    touch(t, json_object_get(json_object_get(pl, "parent"), "stable_id"),
			    CLS_BOUND) < 0 ||
		    touch(t, json_object_get(json_object_get(pl, "blocker"), "stable_id"),
			    CLS_BOUND) < 0)
			return -1;
	}
	return 0;
}

static int by_rank(const void *pa, const void *pb)
{
	const touched *a = *(touched *const *)pa, *b = *(touched *const *)pb;

	if (a->cls != b->cls)
		return a->cls < b->cls ? -1 : 1;
	return strcmp(a->id, b->id);
}

static int by_id(const void *pa, const void *pb)
{
	return strcmp((*(touched *const *)pa)->id, (*(touched *const *)pb)->id);
}

/*
 * A quoted Mermaid label: what Mermaid, its HTML labels or a Markdown
 * string (a label starting with a backtick) could read as syntax goes in as
 * an entity ('%' too: no "%%{init}%%" directive), controls as spaces (no
 * "click" line of its own); cut after LABEL_MAX_CHARS code points.
 */
static int mermaid_label(pmbot_buf *b, const char *s, size_t len)
{
	size_t i = 0, n = 0;
	int err = 0;

	while (i < len && !err) {
		unsigned char c = (unsigned char)s[i];
		size_t k = seq_at(s + i, len - i);

		if (n++ == LABEL_MAX_CHARS - 1 && chars_of(s + i, len - i) > 1) {
			err |= pmbot_buf_puts(b, ELLIPSIS);
			break;
		}
		if (!k) {
			err |= pmbot_buf_puts(b, REPLACEMENT);
			i++;
			continue;
		}
		switch (k == 1 ? c : 0) {
		case '"': err |= pmbot_buf_puts(b, "#quot;"); break;
		case '<': err |= pmbot_buf_puts(b, "#lt;"); break;
		case '>': err |= pmbot_buf_puts(b, "#gt;"); break;
		case '&': err |= pmbot_buf_puts(b, "#amp;"); break;
		case '#': err |= pmbot_buf_puts(b, "#35;"); break;
		/* Mermaid finds "%%{init: …}%%" directives even inside quoted labels. */
		case '%': err |= pmbot_buf_puts(b, "#37;"); break;
		case '`': err |= pmbot_buf_puts(b, "#96;"); break;
		case '[': err |= pmbot_buf_puts(b, "#91;"); break;
		case ']': err |= pmbot_buf_puts(b, "#93;"); break;
		case '|': err |= pmbot_buf_puts(b, "#124;"); break;
		case '\\': err |= pmbot_buf_puts(b, "#92;"); break;
		default:
			if (c < 0x20 || c == 0x7f)
				err |= pmbot_buf_putc(b, ' ');
			else
				err |= pmbot_buf_put(b, s + i, k);
		}
		i += k;
	}
	return err ? -1 : 0;
}

static int put_node(pmbot_buf *out, const pmbot_workgraph *g, const touched *t)
{
	const pmbot_wg_node *node = pmbot_workgraph_find(g, t->id);
	const char *title = node ? pmbot_jnode_str(pmbot_wg_node_get(node, "title")) : NULL;
	pmbot_buf label = PMBOT_BUF_INIT;
	int err = 0;

	err |= pmbot_buf_puts(&label, t->id);
	if (title)
		err |= pmbot_buf_puts(&label, ": ") < 0 || pmbot_buf_puts(&label, title) < 0;
	err |= pmbot_buf_printf(out, "  n%zu[\"", t->node);
	if (!err)
		err |= mermaid_label(out, label.buf, label.len);
	err |= pmbot_buf_puts(out, "\"]");
	if (cls_names[t->cls])
		err |= pmbot_buf_printf(out, ":::%s", cls_names[t->cls]);
	err |= pmbot_buf_putc(out, '\n');
	pmbot_buf_free(&label);
	return err ? -1 : 0;
}

static int put_edges(pmbot_buf *out, const pmbot_workgraph *g, const touched_set *t)
{
	size_t i;
	int err = 0;

	for (i = 0; i < g->n_edges && !err; i++) {
		const pmbot_wg_edge *e = &g->edges[i];
		void *fp, *tp;
		size_t from, to;

		if (e->external || e->type == PMBOT_EDGE_RELATED ||
		    !pmbot_strmap_get(&t->index, e->from_id, &fp) ||
		    !pmbot_strmap_get(&t->index, e->to_id, &tp))
			continue;
		from = t->items[(uintptr_t)fp - 1].node;
		to = t->items[(uintptr_t)tp - 1].node;
		if (from == SIZE_MAX || to == SIZE_MAX)
			continue;
		if (e->type == PMBOT_EDGE_PARENT_CHILD)
			err |= pmbot_buf_printf(out, "  n%zu --> n%zu\n", from, to);
		else
			err |= pmbot_buf_printf(out, "  n%zu -. %s .-> n%zu\n", from,
				e->type == PMBOT_EDGE_DEPENDS_ON ? "depends on" : "blocked by", to);
	}
	return err ? -1 : 0;
}

int pmbot_comment_mermaid(pmbot_buf *out, const pmbot_workgraph *graph, const json_t *bundle,
	size_t max_nodes)
{
	touched_set t = { PMBOT_STRMAP_INIT, NULL, 0, 0 };
	touched **order = NULL;
	size_t orig = out->len, shown, i;
	int rc = PMBOT_ERROR, err = 0;

	if (!max_nodes)
		max_nodes = PMBOT_COMMENT_MAX_NODES;
	if (!graph || !bundle) {
		rc = PMBOT_OK;
		goto done;
	}
	if (collect(&t, bundle) < 0)
		goto done;
	if (!t.n) {
		rc = PMBOT_OK;
		goto done;
	}
	if (!(order = malloc(t.n * sizeof(*order))))
		goto done;
	for (i = 0; i < t.n; i++)
		order[i] = &t.items[i];
	qsort(order, t.n, sizeof(*order), by_rank);
	shown = t.n < max_nodes ? t.n : max_nodes;
	/* Stable ids are unique, so both sorts are total orders: the output is deterministic. */
	qsort(order, shown, sizeof(*order), by_id);
	for (i = 0; i < shown; i++)
		order[i]->node = i;
	err |= pmbot_buf_puts(out, "```mermaid\nflowchart TD\n");
	for (i = 0; i < shown && !err; i++)
		err |= put_node(out, graph, order[i]);
	if (!err)
		err |= put_edges(out, graph, &t);
	err |= pmbot_buf_puts(out,
		"  classDef created fill:#dafbe1,stroke:#1a7f37\n"
		"  classDef changed fill:#fff8c5,stroke:#9a6700\n"
		"  classDef conflict fill:#ffebe9,stroke:#cf222e,stroke-width:2px\n"
		"```\n");
	if (shown < t.n)
		err |= pmbot_buf_printf(out, "\n*" ELLIPSIS " and %zu more item%s not shown.*\n",
			t.n - shown, t.n - shown == 1 ? "" : "s");
	if (!err)
		rc = PMBOT_OK;
done:
	if (rc != PMBOT_OK)
		pmbot_buf_truncate(out, orig);
	free(order);
	free(t.items);
	pmbot_strmap_free(&t.index);
	return rc;
}

/* ---- the whole comment ------------------------------------------------------------------- */

/*
 * The plan part, replacing what `out` holds, within `budget` code points:
 * pmbot_plan_markdown() keeps its title, summary and hash even past the
 * budget it is given, so its result is measured and replaced by the hash
 * line alone, or nothing, when too long. 1 when the plan fitted, 0 when
 * not, -1 on failure (also a bundle pmbot_plan_markdown() refuses).
 */
static int put_plan(pmbot_buf *out, const json_t *bundle, size_t budget)
{
	pmbot_buf line = PMBOT_BUF_INIT;
	int rc = -1;

	pmbot_buf_clear(out);
	/* Called even without a budget (0 would mean its default), so a bad bundle always fails. */
	if (pmbot_plan_markdown(out, bundle, budget ? budget : 1, NULL) < 0)
		goto done;
	if (budget && buf_chars(out) <= budget) {
		rc = 1;
		goto done;
	}
	pmbot_buf_clear(out);
	if (pmbot_buf_puts(&line, "Plan hash: ") < 0 ||
	    put_codez(&line, jstr(bundle, "plan_hash"), 64) < 0 || pmbot_buf_putc(&line, '\n') < 0)
		goto done;
	if (buf_chars(&line) <= budget && pmbot_buf_put(out, line.buf, line.len) < 0)
		goto done;
	rc = 0;
done:
	pmbot_buf_free(&line);
	return rc;
}

int pmbot_comment_render(pmbot_buf *out, const pmbot_comment_input *in)
{
	pmbot_buf head = PMBOT_BUF_INIT, body = PMBOT_BUF_INIT, diagram = PMBOT_BUF_INIT;
	pmbot_buf plan = PMBOT_BUF_INIT;
	size_t max, hchars, left, dchars;
	int rc = PMBOT_ERROR, fitted;

	if (!in || !in->meta) {
		rc = PMBOT_EINVALID;
		goto done;
	}
	max = in->max_chars ? in->max_chars : PMBOT_COMMENT_MAX_CHARS;
	if ((rc = pmbot_comment_header(&head, in->meta)) != PMBOT_OK)
		goto done;
	if (in->notice && !pmbot_utf8_valid(in->notice, strlen(in->notice), NULL, NULL, NULL)) {
		rc = PMBOT_EINVALID;
		goto done;
	}
	/* The shortest body is the header and its line break. */
	if ((hchars = buf_chars(&head)) >= max) {
		rc = PMBOT_EINVALID;
		goto done;
	}
	rc = PMBOT_ERROR;
	if (pmbot_buf_puts(&head, "\n\n") < 0)
		goto done;
	/* What follows the blank line after the header; each part is measured as it is added. */
	left = max - hchars >= 2 ? max - hchars - 2 : 0;
	if (in->notice && put_notice(&body, in->notice, left) < 0)
		goto done;
	if (in->results && put_results(&body, in->results, left - buf_chars(&body)) < 0)
		goto done;
	if (in->diags && in->diags->errors &&
	    put_errors(&body, in->diags, left - buf_chars(&body)) < 0)
		goto done;
	if (in->diags && in->diags->warnings &&
	    put_warnings(&body, in->diags, left - buf_chars(&body)) < 0)
		goto done;
	left -= buf_chars(&body);
	if (in->bundle) {
		if (in->graph && pmbot_comment_mermaid(&diagram, in->graph, in->bundle, 0) < 0)
			goto done;
		if (diagram.len && pmbot_buf_putc(&diagram, '\n') < 0)
			goto done;
		dchars = buf_chars(&diagram);
		fitted = dchars <= left ? put_plan(&plan, in->bundle, left - dchars) : 0;
		if (fitted < 0)
			goto done;
		/* Without room for the plan's own summary, the plan wins over the picture. */
		if (!fitted && diagram.len) {
			pmbot_buf_clear(&diagram);
			if (put_plan(&plan, in->bundle, left) < 0)
				goto done;
		}
	}
	if (pmbot_buf_put(&body, diagram.buf, diagram.len) < 0 ||
	    pmbot_buf_put(&body, plan.buf, plan.len) < 0)
		goto done;
	/* End with exactly one line break (the parts each end with a blank line). */
	while (body.len && body.buf[body.len - 1] == '\n')
		pmbot_buf_truncate(&body, body.len - 1);
	if (body.len && pmbot_buf_putc(&body, '\n') < 0)
		goto done;
	if (!body.len)
		pmbot_buf_truncate(&head, head.len - 1);
	if (pmbot_buf_put(out, head.buf, head.len) < 0)
		goto done;
	if (pmbot_buf_put(out, body.buf, body.len) < 0) {
		pmbot_buf_truncate(out, out->len - head.len);
		goto done;
	}
	rc = PMBOT_OK;
done:
	pmbot_buf_free(&head);
	pmbot_buf_free(&body);
	pmbot_buf_free(&diagram);
	pmbot_buf_free(&plan);
	return rc;
}

/* ---- the history line ------------------------------------------------------------- */

/*
 * The previous body is hostile (anyone with admin rights can edit pm-bot's
 * comment): only known shapes are read, field by field, and the line is
 * rebuilt from the fields; no byte of the old text is copied.
 */

#define HISTORY_LINES_SCANNED 40
#define COUNT_DIGITS_MAX 9

enum { HIST_NONE, HIST_APPLIED, HIST_FAILED, HIST_PAUSED };

struct history {
	int kind;
	unsigned long applied, total, failed;
	char login[46];  /* 39 characters and "[bot]" */
	char hash[9];    /* 8 lower-case hex, or "" */
};

struct cursor {
	const char *p, *end;
};

static int lit(struct cursor *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n))
		return 0;
	c->p += n;
	return 1;
}

static int count(struct cursor *c, unsigned long *v)
{
	size_t n = 0;

	*v = 0;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9' && n < COUNT_DIGITS_MAX) {
		*v = *v * 10 + (unsigned long)(*c->p - '0');
		c->p++;
		n++;
	}
	/* No leading zero, no tenth digit: a count pm-bot wrote. */
	if (!n || (n > 1 && c->p[-(long)n] == '0'))
		return 0;
	return !(c->p < c->end && *c->p >= '0' && *c->p <= '9');
}

static int is_login_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		(ch >= '0' && ch <= '9') || ch == '-';
}

/* A GitHub login: 1 to 39 of [A-Za-z0-9-], maybe with "[bot]". */
static int login(struct cursor *c, char *dst)
{
	size_t n = 0;

	while (c->p < c->end && is_login_char(*c->p) && n < 39)
		dst[n++] = *c->p++;
	if (!n || (c->p < c->end && is_login_char(*c->p)))
		return 0;
	if (lit(c, "[bot]")) {
		memcpy(dst + n, "[bot]", 5);
		n += 5;
	}
	dst[n] = '\0';
	return 1;
}

static int short_hash(struct cursor *c, char *dst)
{
	size_t n;

	for (n = 0; n < 8; n++) {
		if (c->p >= c->end || !((*c->p >= '0' && *c->p <= '9') || (*c->p >= 'a' && *c->p <= 'f')))
			return 0;
		dst[n] = *c->p++;
	}
	dst[8] = '\0';
	return 1;
}

/* results_notice()'s lines of `pm-bot action` (src/action/run.c); the rest of the line is not read. */
static int parse_notice(struct history *h, struct cursor c)
{
	if (lit(&c, "**Applied** ")) {
		h->kind = HIST_APPLIED;
		return count(&c, &h->applied) && lit(&c, " of ") && count(&c, &h->total) &&
			lit(&c, " changes, approved by @") && login(&c, h->login) && lit(&c, ".");
	}
	if (lit(&c, "**Apply failed**: ")) {
		h->kind = HIST_FAILED;
		return count(&c, &h->applied) && lit(&c, " of ") && count(&c, &h->total) &&
			lit(&c, " changes applied, ") && count(&c, &h->failed) &&
			lit(&c, " failed; approved by @") && login(&c, h->login) && lit(&c, ".");
	}
	if (lit(&c, "**Paused: ")) {
		/* The progress text between is GitHub's times and counts: not needed, not read. */
		const char *at = NULL, *p;

		for (p = c.p; p + 17 <= c.end && !at; p++)
			if (!memcmp(p, ".** Approved by @", 17))
				at = p;
		if (!at)
			return 0;
		c.p = at + 17;
		h->kind = HIST_PAUSED;
		return login(&c, h->login) && lit(&c, ".");
	}
	return 0;
}

/* The history line this file writes (history_put), read back exactly. */
static int parse_own(struct history *h, struct cursor c)
{
	if (!lit(&c, "*Last apply: "))
		return 0;
	if (lit(&c, "paused")) {
		h->kind = HIST_PAUSED;
	} else if (lit(&c, "failed, ")) {
		h->kind = HIST_FAILED;
		if (!count(&c, &h->applied) || !lit(&c, " of ") || !count(&c, &h->total) ||
		    !lit(&c, " changes applied, ") || !count(&c, &h->failed) || !lit(&c, " failed"))
			return 0;
	} else {
		h->kind = HIST_APPLIED;
		if (!count(&c, &h->applied) || !lit(&c, " of ") || !count(&c, &h->total) ||
		    !lit(&c, " changes applied"))
			return 0;
	}
	if (!lit(&c, ", approved by `") || !login(&c, h->login) || !lit(&c, "`"))
		return 0;
	if (lit(&c, " (plan `") && (!short_hash(&c, h->hash) || !lit(&c, "`)")))
		return 0;
	return lit(&c, ".*") && c.p == c.end;
}

static int history_put(pmbot_buf *out, const struct history *h)
{
	int err = 0;

	err |= pmbot_buf_puts(out, "*Last apply: ");
	if (h->kind == HIST_PAUSED)
		err |= pmbot_buf_puts(out, "paused");
	else if (h->kind == HIST_FAILED)
		err |= pmbot_buf_printf(out, "failed, %lu of %lu changes applied, %lu failed",
			h->applied, h->total, h->failed);
	else
		err |= pmbot_buf_printf(out, "%lu of %lu changes applied", h->applied, h->total);
	/* A code span, not "@login": a re-plan must not notify anyone again. */
	err |= pmbot_buf_printf(out, ", approved by `%s`", h->login);
	if (h->hash[0])
		err |= pmbot_buf_printf(out, " (plan `%s`)", h->hash);
	err |= pmbot_buf_puts(out, ".*");
	return err ? -1 : 0;
}

static int history_done(pmbot_buf *out, const struct history *h)
{
	size_t orig = out->len;

	if (history_put(out, h) < 0) {
		pmbot_buf_truncate(out, orig);
		return PMBOT_ERROR;
	}
	return PMBOT_OK;
}

int pmbot_comment_history(pmbot_buf *out, const char *body, size_t len)
{
	pmbot_comment_meta meta;
	struct cursor line;
	const char *p, *end = body ? body + len : NULL, *nl;
	size_t n;

	if (!body || pmbot_comment_parse(&meta, body, len) != PMBOT_OK ||
	    strcmp(meta.kind, "plan"))
		return PMBOT_OK;
	nl = memchr(body, '\n', len);
	for (p = nl ? nl + 1 : end, n = 0; p < end && n < HISTORY_LINES_SCANNED; n++) {
		struct history h;

		nl = memchr(p, '\n', (size_t)(end - p));
		line.p = p;
		line.end = nl ? nl : end;
		p = nl ? nl + 1 : end;
		if (line.end > line.p && line.end[-1] == '\r')
			line.end--;
		/* The notice ends where the first section starts. */
		if (line.p < line.end && line.p[0] == '#')
			break;
		memset(&h, 0, sizeof(h));
		if (parse_notice(&h, line)) {
			/* The header names the plan the notice is about. */
			if (meta.plan_hash[0] && (!strcmp(meta.status, "applied") ||
				    !strcmp(meta.status, "failed") || !strcmp(meta.status, "paused")))
				memcpy(h.hash, meta.plan_hash, 8);
			return history_done(out, &h);
		}
		memset(&h, 0, sizeof(h));
		if (parse_own(&h, line))
			return history_done(out, &h);
	}
	return PMBOT_OK;
}

/* ---- why an approval is stale ----------------------------------------------------- */

#define STALE_LISTED 10

static int is_login(const char *s)
{
	struct cursor c;
	char buf[46];

	if (!s)
		return 0;
	c.p = s;
	c.end = s + strlen(s);
	return login(&c, buf) && c.p == c.end;
}

/* The fingerprint entry of `ref` in `fp`, or NULL. */
static const json_t *fp_entry(const json_t *fp, const char *ref)
{
	const json_t *e;
	size_t i;

	json_array_foreach(fp, i, e) {
		const char *r = jstr(e, "ref");

		if (r && !strcmp(r, ref))
			return e;
	}
	return NULL;
}

struct moved {
	pmbot_buf lines;
	size_t n;
};

static int moved_begin(struct moved *m)
{
	if (m->n++ >= STALE_LISTED)
		return 0;
	return pmbot_buf_puts(&m->lines, "- ") < 0 ? -1 : 1;
}

/* Issues whose fingerprint differs between the plan approved and the plan now. */
static int moved_issues(struct moved *m, const json_t *approved, const json_t *fresh)
{
	const json_t *afp = json_object_get(approved, "fingerprint");
	const json_t *ffp = json_object_get(fresh, "fingerprint"), *e;
	size_t i;
	int err = 0, r;

	json_array_foreach(ffp, i, e) {
		const char *ref = jstr(e, "ref"), *at = jstr(e, "updated_at");
		const json_t *was = ref ? fp_entry(afp, ref) : NULL;
		const char *was_at = jstr(was, "updated_at"), *node = jstr(e, "node_id");

		if (!ref || (was && at && was_at && !strcmp(at, was_at) && node &&
				jstr(was, "node_id") && !strcmp(node, jstr(was, "node_id"))))
			continue;
		if ((r = moved_begin(m)) <= 0) {
			err |= r < 0;
			continue;
		}
		err |= put_codez(&m->lines, ref, KEY_MAX_CHARS);
		if (!was)
			err |= pmbot_buf_puts(&m->lines, " is new to the plan");
		else if (!node || !jstr(was, "node_id") || strcmp(node, jstr(was, "node_id")))
			err |= pmbot_buf_puts(&m->lines, " is another issue now");
		else {
			err |= pmbot_buf_puts(&m->lines, " was updated at ");
			err |= put_codez(&m->lines, at ? at : "?", KEY_MAX_CHARS);
			err |= pmbot_buf_puts(&m->lines, " (the approved plan saw ");
			err |= put_codez(&m->lines, was_at ? was_at : "?", KEY_MAX_CHARS);
			err |= pmbot_buf_putc(&m->lines, ')');
		}
		err |= pmbot_buf_putc(&m->lines, '\n');
	}
	json_array_foreach(afp, i, e) {
		const char *ref = jstr(e, "ref");

		if (!ref || fp_entry(ffp, ref))
			continue;
		if ((r = moved_begin(m)) <= 0) {
			err |= r < 0;
			continue;
		}
		err |= put_codez(&m->lines, ref, KEY_MAX_CHARS) < 0 ||
			pmbot_buf_puts(&m->lines, " is no longer in the plan\n") < 0;
	}
	return err ? -1 : 0;
}

static int short_code(pmbot_buf *b, const char *hex)
{
	return put_code(b, hex, strnlen(hex, 64) < 8 ? strnlen(hex, 64) : 8, 8);
}

int pmbot_comment_stale_notice(pmbot_buf *out, const pmbot_comment_stale *st)
{
	struct moved m = { PMBOT_BUF_INIT, 0 };
	size_t orig = out->len, i;
	int err = 0, r;

	err |= pmbot_buf_puts(out, "**Not applied: the plan is stale.** ");
	if (is_login(st->approver))
		err |= pmbot_buf_printf(out, "@%s", st->approver);
	else
		err |= put_codez(out, st->approver ? st->approver : "?", KEY_MAX_CHARS);
	err |= pmbot_buf_puts(out, " approved ");
	err |= put_codez(out, st->approved ? st->approved : "", 64);
	err |= pmbot_buf_puts(out, ", but the pull request or GitHub changed since; the current "
		"plan is below (hash ");
	err |= put_codez(out, st->fresh_hash && *st->fresh_hash ? st->fresh_hash : "none", 64);
	err |= pmbot_buf_puts(out, "). What moved:\n\n");

	if (!st->shown) {
		if ((r = moved_begin(&m)) > 0)
			err |= pmbot_buf_puts(&m.lines, "no plan was shown on this pull request\n");
		err |= r < 0;
	} else {
		if (st->head && st->shown->head[0] && strcmp(st->shown->head, st->head) &&
		    (r = moved_begin(&m)) != 0) {
			err |= r < 0;
			err |= pmbot_buf_puts(&m.lines, "the pull request's head moved from ");
			err |= put_code(&m.lines, st->shown->head, 7, 7);
			err |= pmbot_buf_puts(&m.lines, " to ");
			err |= put_code(&m.lines, st->head, strnlen(st->head, 7), 7);
			err |= pmbot_buf_putc(&m.lines, '\n');
		}
		if (st->approved && strcmp(st->shown->plan_hash, st->approved) &&
		    (r = moved_begin(&m)) != 0) {
			err |= r < 0;
			if (st->shown->plan_hash[0]) {
				err |= pmbot_buf_puts(&m.lines, "the plan shown was ");
				err |= short_code(&m.lines, st->shown->plan_hash);
				err |= pmbot_buf_puts(&m.lines, ", not the approved ");
			} else {
				err |= pmbot_buf_puts(&m.lines, "the comment showed no plan to approve, "
					"not ");
			}
			err |= short_code(&m.lines, st->approved);
			err |= pmbot_buf_putc(&m.lines, '\n');
		}
	}
	if (st->invalid && (r = moved_begin(&m)) != 0) {
		err |= r < 0;
		err |= pmbot_buf_puts(&m.lines, "the reports are invalid now (see below)\n");
	}
	if (st->approved_bundle && st->fresh_bundle)
		err |= moved_issues(&m, st->approved_bundle, st->fresh_bundle);
	for (i = 0; st->check && i < st->check->count; i++) {
		const pmbot_diag *d = &st->check->items[i];

		if (strcmp(d->code, "STALE_PLAN") || (r = moved_begin(&m)) == 0)
			continue;
		err |= r < 0;
		err |= put_text(&m.lines, d->message, strlen(d->message), MSG_MAX_CHARS);
		err |= pmbot_buf_putc(&m.lines, '\n');
	}
	if (!m.n && (r = moved_begin(&m)) > 0)
		err |= pmbot_buf_puts(&m.lines, st->approved_bundle ?
			"GitHub changed since the plan was shown\n" :
			"GitHub changed since the plan was shown; the approved plan was not kept on "
			"this runner, so pm-bot cannot name what\n");
	err |= pmbot_buf_put(out, m.lines.buf, m.lines.len);
	if (m.n > STALE_LISTED)
		err |= pmbot_buf_printf(out, "- " ELLIPSIS " and %zu more\n", m.n - STALE_LISTED);
	pmbot_buf_free(&m.lines);
	if (err) {
		pmbot_buf_truncate(out, orig);
		return PMBOT_ERROR;
	}
	return PMBOT_OK;
}
