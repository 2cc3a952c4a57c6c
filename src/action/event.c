#include "pmbot/json.h"
#include "pmbot/action.h"

#include <cmark-gfm.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "pmbot/banned.h"

/* Field flags: may be absent or null / must be present / present but may be null. */
#define OPT 0u
#define REQ 1u
#define NULLABLE 2u

/* How much of a hostile value a diagnostic or a reason repeats. */
#define SHOW_MAX 64
/* GitHub logins are at most 39 characters; app bots add "[bot]". */
#define LOGIN_MAX 100
#define REF_MAX 255
#define LINE_MAX_BYTES 1024
#define OWNER_MAX 39
/* Issue and pull request numbers are GraphQL Ints. */
#define NUMBER_MAX 2147483647LL
#define REPO_NAME_MAX 100

#define HEADS "refs/heads/"

typedef struct {
	pmbot_diag_list *diags;
	pmbot_buf msg;
	pmbot_buf scratch;
	size_t errors;
	int oom;
} parse_ctx;

static void report(parse_ctx *c, const char *code, const char *path, int line, int column,
	const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void report(parse_ctx *c, const char *code, const char *path, int line, int column,
	const char *fmt, ...)
{
	va_list ap;
	int rc;

	c->errors++;
	pmbot_buf_clear(&c->msg);
	va_start(ap, fmt);
	rc = pmbot_buf_vprintf(&c->msg, fmt, ap);
	va_end(ap);
	if (rc < 0 || pmbot_diag_add(c->diags, PMBOT_SEV_ERROR, code, NULL, path, line, column,
			"%s", c->msg.buf) < 0)
		c->oom = 1;
}

static const char *show(parse_ctx *c, const char *s, size_t max_chars)
{
	return pmbot_diag_show(&c->scratch, s, max_chars);
}

/*
 * The member of `parent` named by the last token of `ptr` (a static JSON
 * Pointer whose tokens need no escaping), when it has type `t`. NULL when
 * it is absent, null, of the wrong type (reported), or when `parent` is
 * NULL: a missing parent was reported already, its children stay quiet.
 */
static const json_t *field(parse_ctx *c, const json_t *parent, const char *ptr, json_type t,
	unsigned flags)
{
	const json_t *v;

	if (!parent)
		return NULL;
	v = json_object_get(parent, strrchr(ptr, '/') + 1);
	if (!v || (json_is_null(v) && (!(flags & REQ) || (flags & NULLABLE)))) {
		if (!v && (flags & REQ))
			report(c, "EVENT_FIELD", ptr, 0, 0, "`%s` is missing", ptr);
		return NULL;
	}
	if (json_typeof(v) != t) {
		report(c, "EVENT_FIELD", ptr, 0, 0, "`%s` must be %s%s, not %s", ptr,
			t == JSON_OBJECT ? "an object" : t == JSON_STRING ? "a string" : "an integer",
			(flags & NULLABLE) ? " or null" : "", pmbot_json_type_name(v));
		return NULL;
	}
	return v;
}

static int is_ctl(unsigned char ch)
{
	return ch < 0x20 || ch == 0x7f;
}

static int is_alnum(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static int is_hex(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* ASCII only: GitHub folds the case of logins and repository names this way. */
static int fold(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

static int ieq(const char *a, const char *b)
{
	for (; *a && fold((unsigned char)*a) == fold((unsigned char)*b); a++, b++)
		;
	return *a == *b;
}

/* Commits are SHA-1 on GitHub, and GitHub writes them in lower case. */
static int valid_sha(const char *s, size_t n)
{
	size_t i;

	if (n != 40)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* The caller builds API paths from these, so only GitHub's own alphabet passes. */
static int valid_repo(const char *s, size_t n)
{
	const char *slash = memchr(s, '/', n);
	size_t i, owner;

	if (!slash)
		return 0;
	owner = (size_t)(slash - s);
	if (owner < 1 || owner > OWNER_MAX || n - owner - 1 < 1 || n - owner - 1 > REPO_NAME_MAX)
		return 0;
	for (i = 0; i < owner; i++)
		if (!is_alnum((unsigned char)s[i]) && s[i] != '-')
			return 0;
	for (i = owner + 1; i < n; i++)
		if (!is_alnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return 0;
	return strcmp(slash + 1, ".") && strcmp(slash + 1, "..");
}

/*
 * The branch rules of git check-ref-format that matter here: the caller
 * turns the name into "refs/remotes/origin/<name>" and hands it to libgit2.
 */
static int valid_branch(const char *s, size_t n)
{
	size_t i;

	if (!n || n > REF_MAX || s[0] == '/' || s[0] == '-' || s[0] == '.' || s[n - 1] == '/' ||
	    s[n - 1] == '.' || (n >= 5 && !memcmp(s + n - 5, ".lock", 5)) ||
	    strstr(s, "..") || strstr(s, "//") || strstr(s, "/.") || strstr(s, "@{") ||
	    !strcmp(s, "@"))
		return 0;
	for (i = 0; i < n; i++)
		if (is_ctl((unsigned char)s[i]) || strchr(" ~^:?*[\\", s[i]))
			return 0;
	return 1;
}

static int valid_login(const char *s, size_t n)
{
	size_t i;

	if (!n || n > LOGIN_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

/* One line of text: a pushed ref, an activity type. */
static int valid_line(const char *s, size_t n)
{
	size_t i;

	if (!n || n > LINE_MAX_BYTES)
		return 0;
	for (i = 0; i < n; i++)
		if (is_ctl((unsigned char)s[i]))
			return 0;
	return 1;
}

typedef int (*check_fn)(const char *s, size_t n);

/*
 * Copy the string at `ptr` into `*out` when it passes `check` (NULL: any
 * string); `what` names the expected form in the diagnostic.
 */
static void take_string(parse_ctx *c, const json_t *parent, const char *ptr, unsigned flags,
	check_fn check, const char *what, char **out)
{
	const json_t *v = field(c, parent, ptr, JSON_STRING, flags);
	const char *s;
	size_t n;

	if (!v)
		return;
	s = json_string_value(v);
	n = json_string_length(v);
	if (check && !check(s, n)) {
		report(c, "EVENT_FIELD", ptr, 0, 0, "`%s` must be %s, not \"%s\"", ptr, what,
			show(c, s, SHOW_MAX));
		return;
	}
	if (!(*out = strdup(s)))
		c->oom = 1;
}

/* A positive integer at `ptr` no larger than `max`; 0 when absent or bad. */
static long long take_id(parse_ctx *c, const json_t *parent, const char *ptr, unsigned flags,
	long long max)
{
	const json_t *v = field(c, parent, ptr, JSON_INTEGER, flags);
	json_int_t n;

	if (!v)
		return 0;
	n = json_integer_value(v);
	if (n < 1 || n > max) {
		report(c, "EVENT_FIELD", ptr, 0, 0, "`%s` must be a positive integer, not %lld",
			ptr, (long long)n);
		return 0;
	}
	return (long long)n;
}

static pmbot_event_kind kind_of(const char *name)
{
	static const struct {
		const char *name;
		pmbot_event_kind kind;
	} kinds[] = {
		{ "pull_request", PMBOT_EV_PULL_REQUEST },
		{ "issue_comment", PMBOT_EV_ISSUE_COMMENT },
		{ "push", PMBOT_EV_PUSH },
		{ "schedule", PMBOT_EV_SCHEDULE },
		{ "workflow_dispatch", PMBOT_EV_WORKFLOW_DISPATCH },
	};
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].name, name))
			return kinds[i].kind;
	return PMBOT_EV_OTHER;
}

static void read_common(parse_ctx *c, const json_t *root, pmbot_event *ev)
{
	int lenient = ev->kind == PMBOT_EV_SCHEDULE || ev->kind == PMBOT_EV_OTHER;
	int acted = ev->kind == PMBOT_EV_PULL_REQUEST || ev->kind == PMBOT_EV_ISSUE_COMMENT;
	const json_t *repo = field(c, root, "/repository", JSON_OBJECT, lenient ? OPT : REQ);
	const json_t *sender = field(c, root, "/sender", JSON_OBJECT, OPT);

	take_string(c, root, "/action", acted ? REQ : OPT, valid_line, "one line of text",
		&ev->action);
	take_string(c, repo, "/repository/full_name", REQ, valid_repo, "OWNER/NAME", &ev->repo);
	take_string(c, repo, "/repository/default_branch", REQ, valid_branch, "a branch name",
		&ev->default_branch);
	take_string(c, sender, "/sender/login", REQ, valid_login, "a login", &ev->sender);
}

static void read_pull_request(parse_ctx *c, const json_t *root, pmbot_event *ev)
{
	const json_t *pr = field(c, root, "/pull_request", JSON_OBJECT, REQ);
	const json_t *head = field(c, pr, "/pull_request/head", JSON_OBJECT, REQ);
	const json_t *base = field(c, pr, "/pull_request/base", JSON_OBJECT, REQ);
	const json_t *head_repo = field(c, head, "/pull_request/head/repo", JSON_OBJECT,
		REQ | NULLABLE);
	const json_t *base_repo = field(c, base, "/pull_request/base/repo", JSON_OBJECT, REQ);

	ev->is_pull_request = 1;
	ev->number = (long)take_id(c, root, "/number", REQ, NUMBER_MAX);
	take_string(c, head, "/pull_request/head/sha", REQ, valid_sha, "40 lower-case hex digits",
		&ev->head_sha);
	take_string(c, head_repo, "/pull_request/head/repo/full_name", REQ, valid_repo,
		"OWNER/NAME", &ev->head_repo);
	take_string(c, base, "/pull_request/base/ref", REQ, valid_branch, "a branch name",
		&ev->base_ref);
	take_string(c, base_repo, "/pull_request/base/repo/full_name", REQ, valid_repo,
		"OWNER/NAME", &ev->base_repo);
	/* A deleted head repository can no longer be told apart from a fork: trust it less. */
	ev->is_fork = !ev->head_repo || !ev->base_repo || !ieq(ev->head_repo, ev->base_repo);
}

static int ends_with_bot(const char *login)
{
	size_t n = strlen(login);

	return n >= 5 && ieq(login + n - 5, "[bot]");
}

static void read_issue_comment(parse_ctx *c, const json_t *root, pmbot_event *ev)
{
	const json_t *issue = field(c, root, "/issue", JSON_OBJECT, REQ);
	const json_t *comment = field(c, root, "/comment", JSON_OBJECT, REQ);
	const json_t *user = field(c, comment, "/comment/user", JSON_OBJECT, REQ | NULLABLE);
	const json_t *type = field(c, user, "/comment/user/type", JSON_STRING, OPT);

	ev->number = (long)take_id(c, issue, "/issue/number", REQ, NUMBER_MAX);
	ev->is_pull_request = field(c, issue, "/issue/pull_request", JSON_OBJECT, OPT) != NULL;
	ev->comment_id = take_id(c, comment, "/comment/id", REQ, LLONG_MAX);
	take_string(c, comment, "/comment/body", REQ, NULL, NULL, &ev->comment_body);
	take_string(c, user, "/comment/user/login", REQ, valid_login, "a login",
		&ev->comment_author);
	ev->comment_author_is_bot = (type && !strcmp(json_string_value(type), "Bot")) ||
		(ev->comment_author && ends_with_bot(ev->comment_author));
}

static void read_push(parse_ctx *c, const json_t *root, pmbot_event *ev)
{
	take_string(c, root, "/ref", REQ, valid_line, "a git ref", &ev->ref);
	take_string(c, root, "/after", REQ, valid_sha, "40 lower-case hex digits", &ev->after);
}

int pmbot_event_parse(pmbot_event **out, const char *event_name, const char *json,
	size_t len, pmbot_diag_list *diags)
{
	parse_ctx c = { diags, PMBOT_BUF_INIT, PMBOT_BUF_INIT, 0, 0 };
	pmbot_event *ev = NULL;
	json_error_t jerr;
	json_t *root = NULL;
	int err;

	*out = NULL;
	if (!json)
		len = 0;
	if (!event_name || !*event_name) {
		report(&c, "EVENT_FIELD", "", 0, 0, "no event name (GITHUB_EVENT_NAME is empty)");
		goto done;
	}
	if (len > PMBOT_EVENT_MAX_BYTES) {
		report(&c, "EVENT_PARSE", "", 0, 0, "the event payload is %zu bytes, over the %zu-byte limit",
			len, PMBOT_EVENT_MAX_BYTES);
		goto done;
	}
	if (!len) {
		report(&c, "EVENT_PARSE", "", 0, 0, "the event payload is empty");
		goto done;
	}
	/* Duplicate keys are refused: two readers of one payload must not see two values. */
	root = json_loadb(json, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!root) {
		report(&c, "EVENT_PARSE", "", jerr.line > 0 ? jerr.line : 0,
			jerr.line > 0 && jerr.column > 0 ? jerr.column : 0,
			"the event payload is not valid JSON: %s", show(&c, jerr.text, sizeof(jerr.text)));
		goto done;
	}
	if (!json_is_object(root)) {
		report(&c, "EVENT_FIELD", "", 0, 0, "the event payload must be an object, not %s",
			pmbot_json_type_name(root));
		goto done;
	}
	if (!(ev = calloc(1, sizeof(*ev))) || !(ev->name = strdup(event_name))) {
		c.oom = 1;
		goto done;
	}
	ev->kind = kind_of(event_name);
	read_common(&c, root, ev);
	if (ev->kind == PMBOT_EV_PULL_REQUEST)
		read_pull_request(&c, root, ev);
	else if (ev->kind == PMBOT_EV_ISSUE_COMMENT)
		read_issue_comment(&c, root, ev);
	else if (ev->kind == PMBOT_EV_PUSH)
		read_push(&c, root, ev);
done:
	err = c.oom ? PMBOT_ERROR : c.errors ? PMBOT_EINVALID : PMBOT_OK;
	if (err == PMBOT_OK) {
		*out = ev;
		ev = NULL;
	}
	pmbot_event_free(ev);
	json_decref(root);
	pmbot_buf_free(&c.msg);
	pmbot_buf_free(&c.scratch);
	return err;
}

void pmbot_event_free(pmbot_event *ev)
{
	if (!ev)
		return;
	free(ev->name);
	free(ev->action);
	free(ev->repo);
	free(ev->default_branch);
	free(ev->head_sha);
	free(ev->head_repo);
	free(ev->base_ref);
	free(ev->base_repo);
	free(ev->comment_body);
	free(ev->comment_author);
	free(ev->ref);
	free(ev->after);
	free(ev->sender);
	free(ev);
}

static pmbot_event_action answer(const char **why, pmbot_event_action act, const char *text)
{
	if (why)
		*why = text;
	return act;
}

static int str_is(const char *s, const char *want)
{
	return s && !strcmp(s, want);
}

static int all_zeros(const char *s)
{
	for (; *s; s++)
		if (*s != '0')
			return 0;
	return 1;
}

pmbot_event_action pmbot_event_decide(const pmbot_event *ev, const char **why)
{
	pmbot_command cmd;

	if (!ev)
		return answer(why, PMBOT_ACT_IGNORE, "no event");
	switch (ev->kind) {
	case PMBOT_EV_PULL_REQUEST:
		if (str_is(ev->action, "opened") || str_is(ev->action, "synchronize") ||
		    str_is(ev->action, "reopened"))
			return answer(why, PMBOT_ACT_PLAN_PR, "pull request opened or updated: plan its head");
		return answer(why, PMBOT_ACT_IGNORE,
			"pull_request activity other than opened, synchronize or reopened");
	case PMBOT_EV_ISSUE_COMMENT:
		if (!str_is(ev->action, "created"))
			return answer(why, PMBOT_ACT_IGNORE, "comment edited or deleted, not created");
		if (!ev->comment_author)
			return answer(why, PMBOT_ACT_IGNORE, "comment without an author");
		if (ev->comment_author_is_bot)
			return answer(why, PMBOT_ACT_IGNORE, "comment by a bot");
		if (pmbot_command_parse(&cmd, ev->comment_body) < 0 || cmd.kind == PMBOT_CMD_NONE)
			return answer(why, PMBOT_ACT_IGNORE, "comment holds no /pm-bot command");
		return answer(why, PMBOT_ACT_COMMAND, "comment holds a /pm-bot command");
	case PMBOT_EV_PUSH:
		if (!ev->ref || !ev->default_branch || strncmp(ev->ref, HEADS, sizeof(HEADS) - 1) ||
		    strcmp(ev->ref + sizeof(HEADS) - 1, ev->default_branch))
			return answer(why, PMBOT_ACT_IGNORE, "push to a ref other than the default branch");
		if (!ev->after || all_zeros(ev->after))
			return answer(why, PMBOT_ACT_IGNORE, "push deletes the default branch");
		return answer(why, PMBOT_ACT_PLAN_PUSH, "push to the default branch: plan it");
	case PMBOT_EV_SCHEDULE:
	case PMBOT_EV_WORKFLOW_DISPATCH:
		return answer(why, PMBOT_ACT_FIELD_SYNC, "scheduled or manual run: sync project fields");
	case PMBOT_EV_OTHER:
		break;
	}
	return answer(why, PMBOT_ACT_IGNORE, "event pm-bot does not handle");
}

static int blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* The next blank-separated word of [*p, e); 0 when there is none. */
static int next_word(const char **p, const char *e, const char **ws, size_t *wn)
{
	const char *s = *p;

	while (s < e && blank(*s))
		s++;
	if (s == e)
		return 0;
	*ws = s;
	while (s < e && !blank(*s))
		s++;
	*wn = (size_t)(s - *ws);
	*p = s;
	return 1;
}

static int word_is(const char *w, size_t n, const char *want)
{
	return n == strlen(want) && !memcmp(w, want, n);
}

/*
 * Stands before the text of an inline that is not plain text (code span,
 * raw HTML, emphasis, link, image) in a line being assembled: it is neither
 * a blank nor part of "/pm-bot" or a hash, so a line that starts with one is
 * no command, and a word holding one is not understood. A word shown in the
 * log leaves it out.
 */
#define NOT_TEXT '\x1a'

static int unknown(pmbot_command *out, const char *w, size_t n)
{
	char tmp[sizeof(out->word)];
	size_t i, k = 0;

	for (i = 0; i < n && k < sizeof(tmp); i++)
		if (w[i] != NOT_TEXT)
			tmp[k++] = w[i];
	if (k > sizeof(out->word) - 1) {
		k = sizeof(out->word) - 1;
		/* Never end inside a UTF-8 sequence: back off to the start of the cut character. */
		while (k > 0 && ((unsigned char)tmp[k] & 0xc0) == 0x80)
			k--;
	}
	for (i = 0; i < k; i++)
		out->word[i] = is_ctl((unsigned char)tmp[i]) ? '?' : tmp[i];
	out->word[k] = '\0';
	out->kind = PMBOT_CMD_UNKNOWN;
	return PMBOT_OK;
}

/* The words after "/pm-bot" on a command line [p, e). */
static int parse_words(pmbot_command *out, const char *p, const char *e)
{
	const char *w, *h;
	size_t n, hn, i;

	out->fault = PMBOT_CMD_FAULT_WORD;
	if (!next_word(&p, e, &w, &n))
		return unknown(out, "", 0);
	if (word_is(w, n, "plan")) {
		out->fault = PMBOT_CMD_FAULT_EXTRA;
		if (next_word(&p, e, &w, &n))
			return unknown(out, w, n);
		out->fault = PMBOT_CMD_FAULT_NONE;
		out->kind = PMBOT_CMD_PLAN;
		return PMBOT_OK;
	}
	if (!word_is(w, n, "apply"))
		return unknown(out, w, n);
	out->fault = PMBOT_CMD_FAULT_NO_HASH;
	if (!next_word(&p, e, &h, &hn))
		return unknown(out, w, n);
	for (i = 0; i < hn && is_hex((unsigned char)h[i]); i++)
		;
	out->fault = PMBOT_CMD_FAULT_HASH;
	if (hn != 64 || i != hn)
		return unknown(out, h, hn);
	out->fault = PMBOT_CMD_FAULT_EXTRA;
	if (next_word(&p, e, &w, &n))
		return unknown(out, w, n);
	out->fault = PMBOT_CMD_FAULT_NONE;
	for (i = 0; i < hn; i++)
		out->hash[i] = (char)fold((unsigned char)h[i]);
	out->hash[hn] = '\0';
	out->kind = PMBOT_CMD_APPLY;
	return PMBOT_OK;
}

typedef struct {
	pmbot_command *out;
	pmbot_buf line;
	int html;  /* raw HTML seen: nothing after it counts */
	int done;  /* the first /pm-bot line was found */
	int oom;
} cmd_scan;

/*
 * Append an inline that is not plain text as NOT_TEXT and the text it
 * shows (so an UNKNOWN word still says something); note raw HTML.
 */
static void put_inline(cmd_scan *sc, cmark_node *node)
{
	cmark_iter *it = cmark_iter_new(node);
	cmark_event_type ev;
	const char *lit;

	if (!it || pmbot_buf_putc(&sc->line, NOT_TEXT) < 0) {
		sc->oom = 1;
		cmark_iter_free(it);
		return;
	}
	while (!sc->oom && (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
		cmark_node *n = cmark_iter_get_node(it);

		if (ev != CMARK_EVENT_ENTER)
			continue;
		switch (cmark_node_get_type(n)) {
		case CMARK_NODE_HTML_BLOCK:
		case CMARK_NODE_HTML_INLINE:
			sc->html = 1;
			/* fall through */
		case CMARK_NODE_TEXT:
		case CMARK_NODE_CODE:
			lit = cmark_node_get_literal(n);
			if (lit && pmbot_buf_puts(&sc->line, lit) < 0)
				sc->oom = 1;
			break;
		case CMARK_NODE_SOFTBREAK:
		case CMARK_NODE_LINEBREAK:
			if (pmbot_buf_putc(&sc->line, ' ') < 0)
				sc->oom = 1;
			break;
		default:
			break;
		}
	}
	cmark_iter_free(it);
}

/* Raw HTML anywhere in a block that is not a top-level paragraph. */
static int has_html(cmark_node *node)
{
	cmark_iter *it = cmark_iter_new(node);
	cmark_event_type ev;
	int found = 0;

	if (!it)
		return 1;
	while (!found && (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
		cmark_node_type t = cmark_node_get_type(cmark_iter_get_node(it));

		found = ev == CMARK_EVENT_ENTER &&
			(t == CMARK_NODE_HTML_BLOCK || t == CMARK_NODE_HTML_INLINE);
	}
	cmark_iter_free(it);
	return found;
}

/* The line assembled so far is complete: is it the command? */
static void scan_line(cmd_scan *sc)
{
	static const char prefix[] = "/pm-bot";
	const size_t plen = sizeof(prefix) - 1;
	const char *s = sc->line.buf ? sc->line.buf : "", *e = s + sc->line.len;

	while (s < e && blank(*s))
		s++;
	while (e > s && blank(e[-1]))
		e--;
	if ((size_t)(e - s) >= plen && !memcmp(s, prefix, plen) && (s + plen == e || blank(s[plen]))) {
		(void)parse_words(sc->out, s + plen, e);
		sc->done = 1;
	}
	pmbot_buf_clear(&sc->line);
}

/*
 * The lines of a top-level paragraph. cmark has already removed each
 * line's indentation and trailing spaces; only the paragraph's own text
 * nodes are text, and a line ends only at a soft or hard break (a "\n"
 * inside a text node comes from an entity and renders as a space).
 */
static void scan_paragraph(cmd_scan *sc, cmark_node *para)
{
	cmark_node *n;

	for (n = cmark_node_first_child(para); n && !sc->done && !sc->oom; n = cmark_node_next(n)) {
		switch (cmark_node_get_type(n)) {
		case CMARK_NODE_TEXT: {
			const char *lit = cmark_node_get_literal(n);

			if (lit && pmbot_buf_puts(&sc->line, lit) < 0)
				sc->oom = 1;
			break;
		}
		case CMARK_NODE_SOFTBREAK:
		case CMARK_NODE_LINEBREAK:
			/* A line holding raw HTML still gets its answer (HTML cannot hide
			 * what comes before it on the line); the lines after it do not. */
			scan_line(sc);
			if (sc->html)
				return;
			break;
		default:
			put_inline(sc, n);
			break;
		}
	}
	if (!sc->done && !sc->oom)
		scan_line(sc);
}

int pmbot_command_parse_bytes(pmbot_command *out, const char *body, size_t len)
{
	cmd_scan sc = { out, PMBOT_BUF_INIT, 0, 0, 0 };
	cmark_node *doc = NULL, *n;

	if (!out)
		return PMBOT_ERROR;
	memset(out, 0, sizeof(*out));
	out->kind = PMBOT_CMD_NONE;
	if (!body || !len || len > PMBOT_COMMAND_MAX_BYTES)
		return PMBOT_OK;
	/* Invalid UTF-8 and NUL bytes become U+FFFD: every literal is valid UTF-8. */
	if (!(doc = cmark_parse_document(body, len, CMARK_OPT_VALIDATE_UTF8)))
		return PMBOT_ERROR;
	for (n = cmark_node_first_child(doc); n && !sc.done && !sc.html && !sc.oom;
	     n = cmark_node_next(n)) {
		if (cmark_node_get_type(n) == CMARK_NODE_PARAGRAPH)
			scan_paragraph(&sc, n);
		else if (has_html(n))
			sc.html = 1;
	}
	cmark_node_free(doc);
	pmbot_buf_free(&sc.line);
	if (sc.oom) {
		memset(out, 0, sizeof(*out));
		out->kind = PMBOT_CMD_NONE;
		return PMBOT_ERROR;
	}
	return PMBOT_OK;
}

int pmbot_command_parse(pmbot_command *out, const char *body)
{
	return pmbot_command_parse_bytes(out, body, body ? strlen(body) : 0);
}

static const pmbot_command_info commands[] = {
	{ "plan", "/pm-bot plan", "plan this pull request again and update pm-bot's comment" },
	{ "apply", "/pm-bot apply HASH", "apply the plan whose 64-hex hash the comment shows" },
	{ "help", "/pm-bot help", "list these commands" },
};

const pmbot_command_info *pmbot_command_table(size_t *n)
{
	*n = sizeof(commands) / sizeof(commands[0]);
	return commands;
}

/* Levenshtein distance of two short words, cut off above 3 (only <= 2 matters). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, prev[32], cur[32];

	if (la >= sizeof(prev) || lb >= sizeof(prev))
		return 3;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	return prev[lb];
}

/*
 * The commenter's word as it may be echoed: a code span can be closed by a
 * backtick and a mention or link needs '@', ':' or '/', so only a safe
 * alphabet survives; 40 characters are enough to recognise one's typo.
 */
#define REPLY_WORD_MAX 40

static int put_word(pmbot_buf *out, const char *w)
{
	size_t i;
	int err = pmbot_buf_putc(out, '`');

	for (i = 0; !err && w[i] && i < REPLY_WORD_MAX; i++) {
		unsigned char ch = (unsigned char)w[i];
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			(ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';

		err = pmbot_buf_putc(out, ok ? (char)ch : '?');
	}
	if (!err && w[i])
		err = pmbot_buf_puts(out, "...");
	if (!err)
		err = pmbot_buf_putc(out, '`');
	return err ? -1 : 0;
}

int pmbot_command_reply(pmbot_buf *out, int *is_help, const pmbot_command *cmd)
{
	size_t i, n = sizeof(commands) / sizeof(commands[0]), best = n, d, bestd = 3;
	int err = 0;

	*is_help = 0;
	if (cmd->kind != PMBOT_CMD_UNKNOWN)
		return 0;
	if (cmd->fault == PMBOT_CMD_FAULT_WORD && !strcmp(cmd->word, "help")) {
		*is_help = 1;
		err = pmbot_buf_puts(out, "pm-bot commands:");
		for (i = 0; !err && i < n; i++)
			err = pmbot_buf_printf(out, " `%s` (%s)%s", commands[i].usage, commands[i].what,
				i + 1 < n ? ";" : ".");
		return err ? -1 : 0;
	}
	switch (cmd->fault) {
	case PMBOT_CMD_FAULT_HASH:
		if (put_word(out, cmd->word) < 0 ||
		    pmbot_buf_puts(out, " is not a 64-hex plan hash: copy the `/pm-bot apply` line "
			"from pm-bot's comment.") < 0)
			return -1;
		return 0;
	case PMBOT_CMD_FAULT_NO_HASH:
		return pmbot_buf_puts(out, "`apply` needs the plan's 64-hex hash: copy the "
			"`/pm-bot apply` line from pm-bot's comment.") < 0 ? -1 : 0;
	case PMBOT_CMD_FAULT_EXTRA:
		if (pmbot_buf_puts(out, "unexpected ") < 0 || put_word(out, cmd->word) < 0 ||
		    pmbot_buf_puts(out, " after the command: a command line holds nothing else.") < 0)
			return -1;
		return 0;
	default:
		break;
	}
	/* The first command at the smallest distance: ties resolve by table order. */
	for (i = 0; i < n; i++)
		if ((d = edit_distance(cmd->word, commands[i].name)) < bestd) {
			bestd = d;
			best = i;
		}
	if (!cmd->word[0])
		err = pmbot_buf_puts(out, "`/pm-bot` needs a command;");
	else if (put_word(out, cmd->word) < 0 ||
		 pmbot_buf_puts(out, " is not a pm-bot command;") < 0)
		return -1;
	if (!err && best < n && cmd->word[0])
		err = pmbot_buf_printf(out, " did you mean `%s`?", commands[best].name);
	if (!err)
		err = pmbot_buf_puts(out, " `/pm-bot help` lists the commands.");
	return err ? -1 : 0;
}

int pmbot_approval_check(pmbot_buf *reason, const pmbot_config *config, const char *login,
	const char *permission)
{
	pmbot_buf who = PMBOT_BUF_INIT, perm_text = PMBOT_BUF_INIT, sink = PMBOT_BUF_INIT;
	pmbot_buf *r = reason ? reason : &sink;
	pmbot_permission perm;
	const char *l, *pt, *need;
	int allowed = 0, werr, err;

	l = login ? pmbot_diag_show(&who, login, SHOW_MAX) : "";
	pt = permission ? pmbot_diag_show(&perm_text, permission, SHOW_MAX) : "";
	need = config ? pmbot_permission_name(config->min_permission) : NULL;
	if (!need)
		werr = pmbot_buf_puts(r, "no approval policy to check against");
	else if (!login || !*login)
		werr = pmbot_buf_puts(r, "no commenter login to check");
	else if (!permission)
		werr = pmbot_buf_printf(r, "the permission of @%s is unknown", l);
	else if (!strcmp(permission, "none"))
		werr = pmbot_buf_printf(r, "@%s has no access to the repository (permission \"none\")", l);
	else if (pmbot_permission_parse(&perm, permission) != PMBOT_OK)
		werr = pmbot_buf_printf(r, "@%s has permission \"%s\", which is not one of "
			"read, triage, write, maintain, admin", l, pt);
	else if (perm < config->min_permission)
		werr = pmbot_buf_printf(r, "@%s has permission \"%s\"; approving needs \"%s\" or higher",
			l, pt, need);
	else if (!pmbot_config_approver_allowed(config, login, perm))
		werr = pmbot_buf_printf(r, "@%s has permission \"%s\" but is not listed in approval.users",
			l, pt);
	else {
		allowed = 1;
		werr = pmbot_buf_printf(r, "@%s has permission \"%s\" (approving needs \"%s\")%s",
			l, pt, need, config->approvers.count ? " and is listed in approval.users" : "");
	}
	/* A reason that could not be written must not read as a yes. */
	err = werr < 0 ? PMBOT_ERROR : allowed ? PMBOT_OK : PMBOT_EINVALID;
	pmbot_buf_free(&who);
	pmbot_buf_free(&perm_text);
	pmbot_buf_free(&sink);
	return err;
}
