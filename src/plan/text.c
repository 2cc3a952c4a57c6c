#include <stdlib.h>
#include <string.h>

#include "pmbot/plan.h"
#include "pmbot/strmap.h"
#include "pmbot/banned.h"

/*
 * A plan for a terminal: plain text, one line a change with a `+ ~ -`
 * sigil, the body diffs without pm-bot's hidden marker line, fields in
 * name order. Every piece of outside text goes through pmbot_log_escape(),
 * so no title or body can move the cursor, change colours or forge a line.
 */

#define TXT_NAME_MAX 200     /* an id, a label, a field name or value */
#define TXT_TITLE_MAX 300
#define TXT_LINE_MAX 400     /* one line of a body diff */
#define TXT_CONTEXT 1

enum { C_ADD, C_DEL, C_CHANGE, C_HEAD, C_DIM, C_WARN, C_N };

struct txt {
	pmbot_buf *b;
	int color;
	int err;
};

static const char *const sgr[C_N] = { "32", "31", "33", "1", "36", "31;1" };

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void put(struct txt *t, const char *s)
{
	t->err |= pmbot_buf_puts(t->b, s) < 0;
}

static void on(struct txt *t, int c)
{
	if (t->color)
		t->err |= pmbot_buf_printf(t->b, "\033[%sm", sgr[c]) < 0;
}

static void off(struct txt *t)
{
	if (t->color)
		put(t, "\033[0m");
}

/* Outside text, escaped and capped; NULL shows as "(none)". */
static void esc(struct txt *t, const char *s, size_t len, size_t max)
{
	if (!s) {
		put(t, "(none)");
		return;
	}
	t->err |= pmbot_log_escape(t->b, s, len, max) < 0;
}

static void escz(struct txt *t, const char *s, size_t max)
{
	esc(t, s, s ? strlen(s) : 0, max);
}

static void value(struct txt *t, const json_t *v)
{
	if (json_is_string(v)) {
		esc(t, json_string_value(v), json_string_length(v), TXT_NAME_MAX);
	} else if (json_is_integer(v)) {
		t->err |= pmbot_buf_printf(t->b, "%" JSON_INTEGER_FORMAT, json_integer_value(v)) < 0;
	} else if (json_is_real(v)) {
		t->err |= pmbot_buf_printf(t->b, "%g", json_real_value(v)) < 0;
	} else if (!v || json_is_null(v)) {
		put(t, "(none)");
	} else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

		escz(t, s, TXT_NAME_MAX);
		free(s);
	}
}

static void quoted(struct txt *t, const json_t *v)
{
	if (!json_is_string(v)) {
		value(t, v);
		return;
	}
	put(t, "\"");
	esc(t, json_string_value(v), json_string_length(v), TXT_TITLE_MAX);
	put(t, "\"");
}

/* {repo, stable_id} by its id, {repo, number} as OWNER/NAME#N. */
static void binding(struct txt *t, const json_t *bind)
{
	const json_t *num = json_object_get(bind, "number");

	if (jstr(bind, "stable_id")) {
		escz(t, jstr(bind, "stable_id"), TXT_NAME_MAX);
	} else if (json_is_integer(num)) {
		escz(t, jstr(bind, "repo") ? jstr(bind, "repo") : "", TXT_NAME_MAX);
		t->err |= pmbot_buf_printf(t->b, "#%" JSON_INTEGER_FORMAT, json_integer_value(num)) < 0;
	} else {
		value(t, bind);
	}
}

static void line_start(struct txt *t, int c, const char *sigil)
{
	put(t, "  ");
	on(t, c);
	put(t, sigil);
}

static void line_end(struct txt *t)
{
	off(t);
	put(t, "\n");
}

/* "+ labels a, b" on one line; nothing for an empty list. */
static void labels_line(struct txt *t, const json_t *labels, int c, const char *sigil,
	const char *what)
{
	const json_t *l;
	size_t i;

	if (!json_array_size(labels))
		return;
	line_start(t, c, sigil);
	put(t, what);
	json_array_foreach(labels, i, l) {
		put(t, i ? ", " : "");
		value(t, l);
	}
	line_end(t);
}

/* "~ NAME before -> after", or "+ NAME after" when there was nothing before. */
static void change(struct txt *t, const char *name, const json_t *before, const json_t *after,
	void (*show)(struct txt *, const json_t *))
{
	int added = !before || json_is_null(before);

	line_start(t, added ? C_ADD : C_CHANGE, added ? "+" : "~");
	put(t, " ");
	put(t, name);
	put(t, " ");
	if (!added) {
		value(t, before);
		put(t, " -> ");
	}
	show(t, after);
	line_end(t);
}

/* The body without pm-bot's marker line: that line changes with every edit and says nothing. */
static int unmarked(pmbot_buf *out, const json_t *body)
{
	const char *s = json_string_value(body), *nl;
	size_t len = json_string_length(body);

	while (s && len) {
		size_t n = (nl = memchr(s, '\n', len)) ? (size_t)(nl - s) + 1 : len;

		if (!(n >= 15 && !strncmp(s, "<!-- pm-bot:id=", 15)) && pmbot_buf_put(out, s, n) < 0)
			return -1;
		s += n;
		len -= n;
	}
	return 0;
}

static void body_change(struct txt *t, const json_t *cs)
{
	pmbot_buf a = PMBOT_BUF_INIT, b = PMBOT_BUF_INIT, diff = PMBOT_BUF_INIT;
	const char *p, *end, *nl;

	if (unmarked(&a, json_object_get(json_object_get(cs, "before"), "body")) < 0 ||
	    unmarked(&b, json_object_get(json_object_get(cs, "payload"), "body")) < 0 ||
	    pmbot_diff_unified(&diff, a.buf, a.len, b.buf, b.len, NULL, NULL, TXT_CONTEXT) < 0) {
		t->err = 1;
		goto done;
	}
	line_start(t, C_CHANGE, "~");
	put(t, diff.len ? " body" : " body: only pm-bot's hidden marker changes");
	line_end(t);
	for (p = diff.buf, end = diff.buf + diff.len; p < end; p = nl + 1) {
		size_t n;
		int c;

		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			nl = end;
		n = (size_t)(nl - p);
		if ((n >= 4 && (!strncmp(p, "--- ", 4) || !strncmp(p, "+++ ", 4))) || !n)
			continue;
		c = *p == '+' ? C_ADD : *p == '-' ? C_DEL : *p == '@' ? C_DIM : -1;
		put(t, "      ");
		if (c >= 0)
			on(t, c);
		esc(t, p, n, TXT_LINE_MAX);
		if (c >= 0)
			off(t);
		put(t, "\n");
	}
done:
	pmbot_buf_free(&a);
	pmbot_buf_free(&b);
	pmbot_buf_free(&diff);
}

static void changeset(struct txt *t, const json_t *cs)
{
	const char *op = jstr(cs, "operation");
	const json_t *pl = json_object_get(cs, "payload"), *before = json_object_get(cs, "before");

	if (!op)
		op = "";
	if (!strcmp(op, "create_issue")) {
		line_start(t, C_ADD, "+");
		put(t, " new issue");
		line_end(t);
		labels_line(t, json_object_get(pl, "labels"), C_ADD, "+", " labels ");
	} else if (!strcmp(op, "update_issue_title")) {
		line_start(t, C_CHANGE, "~");
		put(t, " title ");
		quoted(t, json_object_get(before, "title"));
		put(t, " -> ");
		quoted(t, json_object_get(pl, "title"));
		line_end(t);
	} else if (!strcmp(op, "update_issue_body")) {
		body_change(t, cs);
	} else if (!strcmp(op, "add_labels")) {
		labels_line(t, json_object_get(pl, "labels"), C_ADD, "+", " labels ");
	} else if (!strcmp(op, "remove_labels")) {
		labels_line(t, json_object_get(pl, "labels"), C_DEL, "-", " labels ");
	} else if (!strcmp(op, "set_parent")) {
		change(t, "parent", json_object_get(before, "parent"), json_object_get(pl, "parent"),
			binding);
	} else if (!strcmp(op, "add_dependency") || !strcmp(op, "remove_dependency")) {
		int add = !strcmp(op, "add_dependency");

		line_start(t, add ? C_ADD : C_DEL, add ? "+" : "-");
		put(t, " blocked by ");
		binding(t, json_object_get(pl, "blocker"));
		line_end(t);
	} else if (!strcmp(op, "add_to_project")) {
		line_start(t, C_ADD, "+");
		put(t, " on board ");
		value(t, json_object_get(pl, "project"));
		line_end(t);
	} else if (!strcmp(op, "set_project_field")) {
		pmbot_buf name = PMBOT_BUF_INIT;

		/* The name is outside text: escaped here, then put as it is. */
		t->err |= pmbot_buf_puts(&name, "field ") < 0 ||
			pmbot_log_escape(&name, jstr(pl, "field") ? jstr(pl, "field") : "",
				jstr(pl, "field") ? strlen(jstr(pl, "field")) : 0, TXT_NAME_MAX) < 0 ||
			pmbot_buf_putc(&name, ':') < 0;
		change(t, name.buf, json_object_get(before, "value"), json_object_get(pl, "value"),
			value);
		pmbot_buf_free(&name);
	} else if (!strcmp(op, "set_issue_type")) {
		change(t, "issue type", json_object_get(before, "issue_type"),
			json_object_get(pl, "issue_type"), value);
	} else {
		line_start(t, C_CHANGE, "~");
		put(t, " ");
		escz(t, op, TXT_NAME_MAX);
		put(t, " ");
		value(t, pl);
		line_end(t);
	}
}

/* ---- items -------------------------------------------------------------------- */

struct item {
	char *key;
	size_t *cs;
	size_t n;
};

static int item_key(pmbot_buf *key, const json_t *cs)
{
	const json_t *tg = json_object_get(cs, "target"), *num = json_object_get(tg, "number");

	if (jstr(tg, "stable_id"))
		return pmbot_buf_puts(key, jstr(tg, "stable_id"));
	if (json_is_integer(num))
		return pmbot_buf_printf(key, "%s#%" JSON_INTEGER_FORMAT,
			jstr(tg, "repo") ? jstr(tg, "repo") : "", json_integer_value(num));
	return pmbot_buf_puts(key, "(no target)");
}

/*
 * Group changesets by item, in the order items first appear. Two passes, so
 * each item's list is allocated once at its size: memory stays linear in
 * the plan. -1 when out of memory.
 */
static int group(struct item **out, size_t *n_out, const json_t *changesets)
{
	pmbot_strmap map = PMBOT_STRMAP_INIT;
	pmbot_buf key = PMBOT_BUF_INIT;
	size_t n = json_array_size(changesets), i, k = 0;
	struct item *items = calloc(n + 1, sizeof(*items));
	size_t *of = calloc(n + 1, sizeof(*of));
	int rc = -1;

	if (!items || !of)
		goto done;
	for (i = 0; i < n; i++) {
		void *found;

		pmbot_buf_clear(&key);
		if (item_key(&key, json_array_get(changesets, i)) < 0)
			goto done;
		if (pmbot_strmap_get(&map, key.buf, &found)) {
			of[i] = (size_t)((struct item *)found - items);
		} else {
			of[i] = k;
			if (!(items[k].key = strdup(key.buf)) ||
			    pmbot_strmap_put(&map, items[k].key, &items[k], NULL) < 0) {
				k++;
				goto done;
			}
			k++;
		}
		items[of[i]].n++;
	}
	for (i = 0; i < k; i++) {
		if (!(items[i].cs = calloc(items[i].n, sizeof(*items[i].cs))))
			goto done;
		items[i].n = 0;
	}
	for (i = 0; i < n; i++)
		items[of[i]].cs[items[of[i]].n++] = i;
	rc = 0;
done:
	if (rc < 0) {
		for (i = 0; items && i < k; i++) {
			free(items[i].key);
			free(items[i].cs);
		}
		free(items);
		items = NULL;
		k = 0;
	}
	*out = items;
	*n_out = k;
	free(of);
	pmbot_strmap_free(&map);
	pmbot_buf_free(&key);
	return rc;
}

/* A set_project_field's field name, else NULL. */
static const char *field_of(const json_t *cs)
{
	const char *op = jstr(cs, "operation");

	return op && !strcmp(op, "set_project_field") ? jstr(json_object_get(cs, "payload"), "field")
		: NULL;
}

/*
 * Field changes by field name, the rest in bundle order, so the same item
 * always reads the same (the bundle orders them by a payload hash).
 * Insertion sort: an item has a handful of changesets.
 */
static void sort_item(const json_t *changesets, struct item *it)
{
	size_t i, j;

	for (i = 1; i < it->n; i++) {
		size_t v = it->cs[i];
		const char *fv = field_of(json_array_get(changesets, v));

		for (j = i; j > 0; j--) {
			const char *fp = field_of(json_array_get(changesets, it->cs[j - 1]));

			if (!fv || !fp || strcmp(fp, fv) <= 0)
				break;
			it->cs[j] = it->cs[j - 1];
		}
		it->cs[j] = v;
	}
}

static const json_t *item_title(const json_t *changesets, const struct item *it)
{
	const json_t *title = NULL;
	size_t i;

	for (i = 0; i < it->n; i++) {
		const json_t *cs = json_array_get(changesets, it->cs[i]);
		const char *op = jstr(cs, "operation");

		if (op && !strcmp(op, "create_issue"))
			title = json_object_get(json_object_get(cs, "payload"), "title");
		else if (op && !strcmp(op, "update_issue_title") && !title)
			title = json_object_get(json_object_get(cs, "payload"), "title");
	}
	return title;
}

/* ---- the rest ------------------------------------------------------------------ */

static void section(struct txt *t, const char *title)
{
	put(t, "\n");
	on(t, C_HEAD);
	put(t, title);
	off(t);
	put(t, "\n");
}

static void others(struct txt *t, const json_t *bundle)
{
	const json_t *c;
	size_t i;

	if (json_array_size(json_object_get(bundle, "conflicts")))
		section(t, "Conflicts: a person edited these bodies; pm-bot does not overwrite them "
			"(docs/plan.md, Conflicts)");
	json_array_foreach(json_object_get(bundle, "conflicts"), i, c) {
		line_start(t, C_WARN, "!");
		put(t, " ");
		escz(t, jstr(c, "stable_id"), TXT_NAME_MAX);
		put(t, " ");
		escz(t, jstr(c, "ref"), TXT_NAME_MAX);
		put(t, ": ");
		escz(t, jstr(c, "reason"), TXT_NAME_MAX);
		line_end(t);
	}
	if (json_array_size(json_object_get(bundle, "orphaned")))
		section(t, "Orphaned: managed issues no report names any more (never closed by pm-bot)");
	json_array_foreach(json_object_get(bundle, "orphaned"), i, c) {
		line_start(t, C_DIM, "?");
		put(t, " ");
		escz(t, jstr(c, "stable_id"), TXT_NAME_MAX);
		put(t, " ");
		escz(t, jstr(c, "ref"), TXT_NAME_MAX);
		line_end(t);
	}
	if (json_array_size(json_object_get(bundle, "diagnostics")))
		section(t, "Diagnostics");
	json_array_foreach(json_object_get(bundle, "diagnostics"), i, c) {
		const char *sev = jstr(c, "severity");
		const json_t *line = json_object_get(c, "line");
		int error = !sev || !strcmp(sev, "error");

		put(t, "  ");
		on(t, error ? C_WARN : C_CHANGE);
		put(t, error ? "error" : "warning");
		off(t);
		put(t, " ");
		escz(t, jstr(c, "code"), TXT_NAME_MAX);
		if (jstr(c, "file")) {
			put(t, " ");
			escz(t, jstr(c, "file"), TXT_NAME_MAX);
			if (json_integer_value(line) > 0)
				t->err |= pmbot_buf_printf(t->b, ":%" JSON_INTEGER_FORMAT,
					json_integer_value(line)) < 0;
		}
		if (jstr(c, "path") && *jstr(c, "path")) {
			put(t, " ");
			escz(t, jstr(c, "path"), TXT_NAME_MAX);
		}
		put(t, ": ");
		escz(t, jstr(c, "message"), PMBOT_LOG_MESSAGE_MAX);
		put(t, "\n");
	}
}

static size_t count(const json_t *bundle, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(json_object_get(bundle, "summary"), key));

	return v > 0 ? (size_t)v : 0;
}

static void foot(struct txt *t, const json_t *bundle, size_t n_items, const char *plan_file,
	int local)
{
	size_t n = json_array_size(json_object_get(bundle, "changesets")), errors = 0, i;
	size_t conflicts = json_array_size(json_object_get(bundle, "conflicts"));
	const char *hash = jstr(bundle, "plan_hash"), *where = local ? "the state file" : "GitHub";
	const json_t *d;

	json_array_foreach(json_object_get(bundle, "diagnostics"), i, d)
		errors += !jstr(d, "severity") || !strcmp(jstr(d, "severity"), "error");
	put(t, "\n");
	on(t, C_HEAD);
	if (n)
		t->err |= pmbot_buf_printf(t->b, "%zu change%s to %zu issue%s: %zu creates, %zu "
			"updates, %zu relationships, %zu project.", n, n == 1 ? "" : "s", n_items,
			n_items == 1 ? "" : "s", count(bundle, "creates"), count(bundle, "updates"),
			count(bundle, "relationships"), count(bundle, "project")) < 0;
	else if (conflicts)
		t->err |= pmbot_buf_printf(t->b, "Nothing to apply, but %zu conflict%s need%s a "
			"person: %s does not match the reports.", conflicts, conflicts == 1 ? "" : "s",
			conflicts == 1 ? "s" : "", where) < 0;
	else
		t->err |= pmbot_buf_printf(t->b, "No changes. %s already matches the reports.",
			local ? "The state file" : "GitHub") < 0;
	off(t);
	put(t, "\n");
	t->err |= pmbot_buf_printf(t->b, "Plan hash: %s\n", hash ? hash : "(none)") < 0;
	if (!n)
		return;
	if (errors) {
		t->err |= pmbot_buf_printf(t->b, "%zu error%s: fix %s before this plan can be "
			"applied.\n", errors, errors == 1 ? "" : "s", errors == 1 ? "it" : "them") < 0;
		return;
	}
	if (!local) {
		t->err |= pmbot_buf_printf(t->b, "To apply exactly this plan, comment /pm-bot apply "
			"%s on the pull request, or run pm-bot apply --plan FILE --approve %s.\n",
			hash, hash) < 0;
		return;
	}
	put(t, "To apply exactly this plan, run: pm-bot apply --plan ");
	if (plan_file)
		escz(t, plan_file, TXT_NAME_MAX);
	else
		put(t, "plan.json");
	t->err |= pmbot_buf_printf(t->b, " --approve %s%s\n", hash,
		plan_file ? "" : "  (after pm-bot plan --out plan.json)") < 0;
}

int pmbot_plan_text(pmbot_buf *out, const json_t *bundle, const char *plan_file, int color)
{
	const json_t *changesets = json_object_get(bundle, "changesets");
	const json_t *backend = json_object_get(json_object_get(bundle, "source"), "backend");
	struct txt t = { out, color, 0 };
	struct item *items = NULL;
	size_t n_items = 0, i, k, orig = out->len;
	int local = jstr(backend, "kind") && !strcmp(jstr(backend, "kind"), "file");

	if (!json_is_object(bundle) || group(&items, &n_items, changesets) < 0)
		return PMBOT_ERROR;
	on(&t, C_HEAD);
	put(&t, "pm-bot plan for ");
	escz(&t, jstr(bundle, "target") ? jstr(bundle, "target") : "(no target)", TXT_NAME_MAX);
	off(&t);
	put(&t, local ? " (against the state file " : " (against GitHub)");
	if (local) {
		escz(&t, jstr(backend, "state") ? jstr(backend, "state") : "", TXT_NAME_MAX);
		put(&t, ")");
	}
	put(&t, "\n");
	for (i = 0; i < n_items; i++) {
		const json_t *title;

		sort_item(changesets, &items[i]);
		title = item_title(changesets, &items[i]);
		put(&t, "\n");
		on(&t, C_HEAD);
		escz(&t, items[i].key, TXT_NAME_MAX);
		off(&t);
		if (title) {
			put(&t, "  ");
			esc(&t, json_string_value(title), json_string_length(title), TXT_TITLE_MAX);
		}
		put(&t, "\n");
		for (k = 0; k < items[i].n; k++)
			changeset(&t, json_array_get(changesets, items[i].cs[k]));
	}
	others(&t, bundle);
	foot(&t, bundle, n_items, plan_file, local);
	for (i = 0; i < n_items; i++) {
		free(items[i].key);
		free(items[i].cs);
	}
	free(items);
	if (t.err) {
		pmbot_buf_truncate(out, orig);
		return PMBOT_ERROR;
	}
	return PMBOT_OK;
}

/* ---- what an apply did ---------------------------------------------------------- */

static const char *op_word(const char *op)
{
	static const char *const words[][2] = {
		{ "update_issue_title", "title" }, { "update_issue_body", "body" },
		{ "add_labels", "labels" }, { "remove_labels", "labels" },
		{ "set_parent", "parent" }, { "add_dependency", "blockers" },
		{ "remove_dependency", "blockers" }, { "add_to_project", "board" },
		{ "set_project_field", "fields" }, { "set_issue_type", "type" },
	};
	size_t i;

	for (i = 0; op && i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(words[i][0], op))
			return words[i][1];
	return op ? op : "?";
}

int pmbot_plan_results_text(pmbot_buf *out, const json_t *bundle, const json_t *results)
{
	const json_t *changesets = json_object_get(bundle, "changesets"), *r;
	struct txt t = { out, 0, 0 };
	struct item *items = NULL;
	pmbot_strmap status = PMBOT_STRMAP_INIT;
	size_t n_items = 0, i, k, orig = out->len;

	if (group(&items, &n_items, changesets) < 0)
		return PMBOT_ERROR;
	json_array_foreach(results, i, r)
		if (jstr(r, "changeset_id") &&
		    pmbot_strmap_put(&status, jstr(r, "changeset_id"), (void *)r, NULL) < 0)
			t.err = 1;
	for (i = 0; i < n_items && !t.err; i++) {
		const json_t *created = NULL;
		const char *seen[16];
		size_t n_seen = 0, s;

		for (k = 0; k < items[i].n; k++) {
			const json_t *cs = json_array_get(changesets, items[i].cs[k]);
			const char *op = jstr(cs, "operation"), *word;
			void *res = NULL;

			if (!jstr(cs, "changeset_id") ||
			    !pmbot_strmap_get(&status, jstr(cs, "changeset_id"), &res) ||
			    strcmp(jstr(res, "status") ? jstr(res, "status") : "", "applied"))
				continue;
			if (op && !strcmp(op, "create_issue")) {
				created = json_object_get(res, "result");
				continue;
			}
			word = op_word(op);
			for (s = 0; s < n_seen && strcmp(seen[s], word); s++)
				;
			if (s == n_seen && n_seen < sizeof(seen) / sizeof(seen[0]))
				seen[n_seen++] = word;
		}
		if (!created && !n_seen)
			continue;
		if (created) {
			const json_t *tg = json_object_get(json_array_get(changesets, items[i].cs[0]),
				"target");

			put(&t, "created ");
			escz(&t, jstr(tg, "repo") ? jstr(tg, "repo") : "", TXT_NAME_MAX);
			t.err |= pmbot_buf_printf(t.b, "#%" JSON_INTEGER_FORMAT " ",
				json_integer_value(json_object_get(created, "number"))) < 0;
		} else {
			put(&t, "updated ");
		}
		escz(&t, items[i].key, TXT_NAME_MAX);
		for (s = 0; s < n_seen; s++) {
			put(&t, s ? ", " : created ? " with " : ": ");
			put(&t, seen[s]);
		}
		put(&t, "\n");
	}
	for (i = 0; i < n_items; i++) {
		free(items[i].key);
		free(items[i].cs);
	}
	free(items);
	pmbot_strmap_free(&status);
	if (t.err) {
		pmbot_buf_truncate(out, orig);
		return PMBOT_ERROR;
	}
	return PMBOT_OK;
}
