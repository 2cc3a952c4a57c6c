#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmbot/action.h"
#include "pmbot/github.h"
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

/*
 * A cycle of Link headers (A -> B -> A) would walk forever; 1000 pages of
 * 100 is far beyond any real PR's comments or a repo's bot issues.
 */
#define MAX_PAGES 1000

/* ---- one call: its request path, what it does, its answer -------------- */

typedef struct {
	pmbot_github_client *c;
	pmbot_buf *err;
	pmbot_buf path;
	pmbot_buf what; /* "reading pull request acme/widgets#12", for messages */
	pmbot_github_response resp;
	pmbot_buf why;  /* the client's message when the request failed */
} call;

/*
 * Append one path segment, encoded. "." and ".." are refused because
 * libcurl squashes dot segments, which would send the request (and the
 * token) to a different endpoint than the one named.
 */
static int put_segment(pmbot_buf *out, const char *s, size_t len)
{
	pmbot_buf tmp = PMBOT_BUF_INIT;
	int rc = PMBOT_EINVALID;

	if (!len || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
		goto done;
	rc = PMBOT_ERROR;
	if (pmbot_buf_put(&tmp, s, len) < 0 || pmbot_github_path_escape(out, tmp.buf) < 0)
		goto done;
	rc = 0;
done:
	pmbot_buf_free(&tmp);
	return rc;
}

static void call_end(call *k)
{
	pmbot_buf_free(&k->path);
	pmbot_buf_free(&k->what);
	pmbot_buf_free(&k->why);
	pmbot_github_response_free(&k->resp);
}

/* The message buffer emptied, so it holds the next request's message only. */
static pmbot_buf *fresh_why(call *k)
{
	pmbot_buf_clear(&k->why);
	return &k->why;
}

static const char *show(const char *s)
{
	return s ? s : "(null)";
}

static int call_start(call *k, pmbot_github_client *c, pmbot_buf *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Set up `k`; `fmt` says what the call does, for every message about it. */
static int call_start(call *k, pmbot_github_client *c, pmbot_buf *err, const char *fmt, ...)
{
	va_list ap;
	int rc;

	k->c = c;
	k->err = err;
	pmbot_buf_init(&k->path, 0);
	pmbot_buf_init(&k->what, 0);
	pmbot_buf_init(&k->why, 0);
	k->resp = (pmbot_github_response)PMBOT_GITHUB_RESPONSE_INIT;
	va_start(ap, fmt);
	rc = pmbot_buf_vprintf(&k->what, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		pmbot_buf_note(err, "out of memory");
		return PMBOT_ERROR;
	}
	return 0;
}

/* Start the path with /repos/{owner}/{name}. */
static int call_repo(call *k, const char *repo)
{
	const char *slash = repo ? strchr(repo, '/') : NULL;
	int rc;

	if (!slash || strchr(slash + 1, '/'))
		rc = PMBOT_EINVALID;
	else if (pmbot_buf_puts(&k->path, "/repos/") < 0)
		rc = PMBOT_ERROR;
	else if ((rc = put_segment(&k->path, repo, (size_t)(slash - repo))) == 0 &&
		 (rc = pmbot_buf_putc(&k->path, '/') < 0 ? PMBOT_ERROR : 0) == 0)
		rc = put_segment(&k->path, slash + 1, strlen(slash + 1));
	if (rc == PMBOT_EINVALID)
		pmbot_buf_note(k->err, "%s: the repository must be OWNER/NAME", k->what.buf);
	else if (rc < 0)
		pmbot_buf_note(k->err, "%s: out of memory", k->what.buf);
	return rc;
}

static int call_path(call *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int call_path(call *k, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = pmbot_buf_vprintf(&k->path, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		pmbot_buf_note(k->err, "%s: out of memory", k->what.buf);
		return PMBOT_ERROR;
	}
	return 0;
}

static int call_login(call *k, const char *login)
{
	int rc = login ? put_segment(&k->path, login, strlen(login)) : PMBOT_EINVALID;

	if (rc == PMBOT_EINVALID)
		pmbot_buf_note(k->err, "%s: the login must be a non-empty name", k->what.buf);
	else if (rc < 0)
		pmbot_buf_note(k->err, "%s: out of memory", k->what.buf);
	return rc;
}

static int call_bad(call *k, const char *why)
{
	pmbot_buf_note(k->err, "%s: %s", k->what.buf, why);
	return PMBOT_EINVALID;
}

static int call_oom(call *k)
{
	pmbot_buf_note(k->err, "%s: out of memory", k->what.buf);
	return PMBOT_ERROR;
}

/*
 * Map a client failure: a write refused with 403/404 means this token may
 * not write here, which the caller handles differently from a broken
 * request, so it gets its own code; a read's 404 is "no such thing".
 */
static int call_failed(call *k, int rc, int is_write)
{
	const char *why = k->why.buf;
	long status = k->resp.status;

	if (!*why)
		why = "unknown error";
	if (rc == PMBOT_GITHUB_EHTTP && is_write && (status == 403 || status == 404)) {
		pmbot_buf_note(k->err, "%s: the token may not write here: %s", k->what.buf, why);
		return PMBOT_GH_EFORBIDDEN;
	}
	if (rc == PMBOT_GITHUB_EHTTP && !is_write && status == 404) {
		pmbot_buf_note(k->err, "%s: not found: %s", k->what.buf, why);
		return PMBOT_ENOTFOUND;
	}
	if (rc == PMBOT_GITHUB_EUNKNOWN_OUTCOME)
		pmbot_buf_note(k->err, "%s: the outcome is unknown (%s); it was not retried: read again to "
			"learn whether it landed", k->what.buf, why);
	else
		pmbot_buf_note(k->err, "%s failed: %s", k->what.buf, why);
	return rc;
}

static int call_rest(call *k, const char *method, const json_t *body, unsigned flags)
{
	int is_write = strcmp(method, "GET") != 0;
	int rc;

	if (!is_write)
		flags |= PMBOT_GITHUB_NO_CACHE;
	rc = pmbot_github_rest_flags(&k->resp, k->c, method, k->path.buf, body, flags,
		fresh_why(k));
	return rc < 0 ? call_failed(k, rc, is_write) : 0;
}

static int call_malformed(call *k, const char *lacks)
{
	pmbot_buf_note(k->err, "%s: GitHub's answer lacks %s", k->what.buf, lacks);
	return PMBOT_ERROR;
}

/*
 * Walk a list endpoint from k->path page by page until `match` says 1 for
 * an item (then *hit is that item, borrowed from k->resp) or the pages run
 * out (*hit NULL). Not pmbot_github_rest_paginate: that reads every page
 * before returning, while the item sought is usually on the first.
 */
typedef int (*item_match_fn)(const json_t *item, const void *ctx);

static int call_find(const json_t **hit, call *k, item_match_fn match, const void *ctx)
{
	size_t pages = 0, i;
	char *next = NULL;
	json_t *it;
	int rc;

	*hit = NULL;
	for (;;) {
		if ((rc = call_rest(k, "GET", NULL, 0)) < 0)
			break;
		if (!json_is_array(k->resp.json)) {
			rc = call_malformed(k, "a list: a page is not a JSON array");
			break;
		}
		json_array_foreach(k->resp.json, i, it) {
			if (match(it, ctx)) {
				*hit = it;
				return 0;
			}
		}
		if (!k->resp.next_url)
			break;
		if (++pages >= MAX_PAGES || !strcmp(k->resp.next_url, k->path.buf)) {
			pmbot_buf_note(k->err, "%s: the list's Link headers lead in a circle", k->what.buf);
			rc = PMBOT_ERROR;
			break;
		}
		/* The client refuses a next link outside the API URL itself. */
		next = k->resp.next_url;
		k->resp.next_url = NULL;
		pmbot_buf_clear(&k->path);
		rc = pmbot_buf_puts(&k->path, next) < 0 ? call_oom(k) : 0;
		free(next);
		if (rc < 0)
			break;
	}
	return rc;
}

/* ---- small JSON helpers ------------------------------------------------ */

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static long long jid(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (long long)json_integer_value(v) : 0;
}

static int dup_out(char **out, const char *s)
{
	return (*out = strdup(s)) ? 0 : PMBOT_ERROR;
}

static int is_hex_sha(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return !s[n] && (n == 40 || n == 64);
}

static int utf8_text(const char *s)
{
	return pmbot_utf8_valid(s, strlen(s), NULL, NULL, NULL);
}

/* ---- pull requests ------------------------------------------------------ */

void pmbot_gh_pull_clear(pmbot_gh_pull *p)
{
	if (!p)
		return;
	free(p->head_sha);
	free(p->head_repo);
	free(p->base_repo);
	free(p->state);
	memset(p, 0, sizeof(*p));
}

int pmbot_gh_pull_get(pmbot_gh_pull *out, pmbot_github_client *c, const char *repo,
	long number, pmbot_buf *err)
{
	call k;
	const json_t *head, *head_repo;
	const char *sha, *hrepo, *brepo, *state;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = call_start(&k, c, err, "reading pull request %s#%ld", show(repo), number)) < 0 ||
	    (rc = call_repo(&k, repo)) < 0)
		goto done;
	if (number <= 0) {
		rc = call_bad(&k, "the number must be positive");
		goto done;
	}
	if ((rc = call_path(&k, "/pulls/%ld", number)) < 0 || (rc = call_rest(&k, "GET", NULL, 0)) < 0)
		goto done;
	head = json_object_get(k.resp.json, "head");
	head_repo = json_object_get(head, "repo");
	sha = jstr(head, "sha");
	/* A deleted fork leaves head.repo null; "" never equals the base. */
	hrepo = json_is_null(head_repo) ? "" : jstr(head_repo, "full_name");
	brepo = jstr(json_object_get(json_object_get(k.resp.json, "base"), "repo"), "full_name");
	state = jstr(k.resp.json, "state");
	if (!sha || !is_hex_sha(sha) || !hrepo || !brepo || !*brepo || !state || !*state ||
	    !json_is_boolean(json_object_get(k.resp.json, "merged"))) {
		rc = call_malformed(&k, "head.sha (hex), head.repo, base.repo.full_name, state or merged");
		goto done;
	}
	out->merged = json_is_true(json_object_get(k.resp.json, "merged"));
	if (dup_out(&out->head_sha, sha) < 0 || dup_out(&out->head_repo, hrepo) < 0 ||
	    dup_out(&out->base_repo, brepo) < 0 || dup_out(&out->state, state) < 0) {
		rc = call_oom(&k);
		goto done;
	}
	rc = 0;
done:
	if (rc < 0)
		pmbot_gh_pull_clear(out);
	call_end(&k);
	return rc;
}

/* ---- permissions -------------------------------------------------------- */

static const char *known_role(const char *s, int with_fine_roles)
{
	static const char *const roles[] = { "admin", "maintain", "write", "triage", "read", "none" };
	size_t i;

	if (!s)
		return NULL;
	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
		if (!with_fine_roles && (!strcmp(roles[i], "maintain") || !strcmp(roles[i], "triage")))
			continue;
		if (!strcmp(s, roles[i]))
			return roles[i];
	}
	return NULL;
}

int pmbot_gh_permission(char **out, pmbot_github_client *c, const char *repo, const char *login,
	pmbot_buf *err)
{
	call k;
	const char *role;
	int rc;

	*out = NULL;
	if ((rc = call_start(&k, c, err, "reading the permission of %s on %s", show(login),
		    show(repo))) < 0 ||
	    (rc = call_repo(&k, repo)) < 0 ||
	    (rc = call_path(&k, "/collaborators/")) < 0 || (rc = call_login(&k, login)) < 0 ||
	    (rc = call_path(&k, "/permission")) < 0)
		goto done;
	rc = pmbot_github_rest_flags(&k.resp, c, "GET", k.path.buf, NULL, PMBOT_GITHUB_NO_CACHE,
		fresh_why(&k));
	if (rc == PMBOT_GITHUB_EHTTP && k.resp.status == 404) {
		/* No such user: no access, and nothing the caller must report. */
		role = "none";
	} else if (rc < 0) {
		rc = call_failed(&k, rc, 0);
		goto done;
	} else {
		/* role_name tells maintain from write and triage from read; a
		 * custom role's base level is in `permission`. */
		role = known_role(jstr(k.resp.json, "role_name"), 1);
		if (!role)
			role = known_role(jstr(k.resp.json, "permission"), 0);
		if (!role) {
			rc = call_malformed(&k, "a known role_name or permission");
			goto done;
		}
	}
	if ((rc = dup_out(out, role)) < 0)
		rc = call_oom(&k);
done:
	call_end(&k);
	return rc;
}

/* ---- finding pm-bot's own comment or issue ------------------------------ */

typedef struct {
	const char *prefix;
	size_t prefix_len;
	const char *author;
	const char *id_key; /* "id" for comments, "number" for issues */
	int open_issues_only;
} find_ctx;

/*
 * The header alone proves nothing (anyone can paste it); the author must
 * be the token's login too. Logins are compared as GitHub does, ignoring
 * ASCII case.
 */
static int ours(const json_t *item, const void *ctx)
{
	const find_ctx *f = ctx;
	const char *body = jstr(item, "body");
	const char *login = jstr(json_object_get(item, "user"), "login");

	if (f->open_issues_only) {
		const char *state = jstr(item, "state");

		/* The issues list also holds pull requests. */
		if (json_object_get(item, "pull_request") || !state || strcmp(state, "open"))
			return 0;
	}
	return body && login && !strncmp(body, f->prefix, f->prefix_len) &&
	       !strcasecmp(login, f->author) && jid(item, f->id_key) > 0;
}

static int find_args(call *k, const char *header_prefix, const char *author)
{
	if (!header_prefix || !*header_prefix)
		return call_bad(k, "the header prefix must not be empty");
	if (!author || !*author)
		return call_bad(k, "the author must not be empty");
	return 0;
}

int pmbot_gh_comment_find(long long *id, char **body, pmbot_github_client *c, const char *repo,
	long number, const char *header_prefix, const char *author, pmbot_buf *err)
{
	call k;
	find_ctx f;
	const json_t *hit;
	int rc;

	*id = 0;
	if (body)
		*body = NULL;
	if ((rc = call_start(&k, c, err, "looking for pm-bot's comment on %s#%ld", show(repo),
		    number)) < 0 ||
	    (rc = call_repo(&k, repo)) < 0 ||
	    (rc = find_args(&k, header_prefix, author)) < 0)
		goto done;
	if (number <= 0) {
		rc = call_bad(&k, "the number must be positive");
		goto done;
	}
	f.prefix = header_prefix;
	f.prefix_len = strlen(header_prefix);
	f.author = author;
	f.id_key = "id";
	f.open_issues_only = 0;
	if ((rc = call_path(&k, "/issues/%ld/comments?per_page=100", number)) < 0 ||
	    (rc = call_find(&hit, &k, ours, &f)) < 0 || !hit)
		goto done;
	if (body && (rc = dup_out(body, jstr(hit, "body"))) < 0) {
		rc = call_oom(&k);
		goto done;
	}
	*id = jid(hit, "id");
done:
	call_end(&k);
	return rc;
}

typedef struct {
	pmbot_gh_comment_fn fn;
	void *payload;
} each_ctx;

/* Every comment goes to the caller's function; its "stop" ends the listing. */
static int each_one(const json_t *item, const void *ctx)
{
	const each_ctx *e = ctx;
	const json_t *user = json_object_get(item, "user");
	const char *login = jstr(user, "login"), *type = jstr(user, "type");
	const char *body = jstr(item, "body");
	size_t n = login ? strlen(login) : 0;
	int is_bot = (type && !strcmp(type, "Bot")) || (n >= 5 && !strcmp(login + n - 5, "[bot]"));

	if (jid(item, "id") <= 0)
		return 0;
	return e->fn(e->payload, jid(item, "id"), login, is_bot, body ? body : "");
}

int pmbot_gh_comment_each(pmbot_github_client *c, const char *repo, long number,
	pmbot_gh_comment_fn fn, void *payload, pmbot_buf *err)
{
	call k;
	each_ctx e;
	const json_t *hit;
	int rc;

	if ((rc = call_start(&k, c, err, "reading the comments on %s#%ld", show(repo), number)) < 0 ||
	    (rc = call_repo(&k, repo)) < 0)
		goto done;
	if (number <= 0 || !fn) {
		rc = call_bad(&k, "the number must be positive and a function given");
		goto done;
	}
	e.fn = fn;
	e.payload = payload;
	rc = call_path(&k, "/issues/%ld/comments?per_page=100", number);
	if (rc == 0)
		rc = call_find(&hit, &k, each_one, &e);
done:
	call_end(&k);
	return rc;
}

int pmbot_gh_comment_get(char **body, pmbot_github_client *c, const char *repo, long long id,
	pmbot_buf *err)
{
	call k;
	const json_t *v;
	int rc;

	*body = NULL;
	if ((rc = call_start(&k, c, err, "reading comment %lld on %s", id, show(repo))) < 0 ||
	    (rc = call_repo(&k, repo)) < 0)
		goto done;
	if (id <= 0) {
		rc = call_bad(&k, "the comment id must be positive");
		goto done;
	}
	if ((rc = call_path(&k, "/issues/comments/%lld", id)) < 0 ||
	    (rc = call_rest(&k, "GET", NULL, 0)) < 0)
		goto done;
	v = json_object_get(k.resp.json, "body");
	if (!json_is_string(v) && !json_is_null(v)) {
		rc = call_malformed(&k, "the comment's body");
		goto done;
	}
	if ((rc = dup_out(body, json_is_string(v) ? json_string_value(v) : "")) < 0)
		rc = call_oom(&k);
done:
	call_end(&k);
	return rc;
}

/* ---- writing ------------------------------------------------------------ */

/*
 * Send `req` (consumed) and return the answer's `key`. A create is never
 * retried (a repeat would post twice); an edit sets the same text again,
 * so it is retried like a read.
 */
static int call_write(long long *out, call *k, const char *method, json_t *req, int repeat_safe,
	const char *key)
{
	int rc;

	if (!req)
		return call_oom(k);
	rc = call_rest(k, method, req, repeat_safe ? PMBOT_GITHUB_IDEMPOTENT : 0);
	json_decref(req);
	if (rc < 0)
		return rc;
	if (!(*out = jid(k->resp.json, key))) {
		pmbot_buf_note(k->err, "%s: GitHub's answer (HTTP %ld) lacks the `%s`; read again to learn "
			"what landed", k->what.buf, k->resp.status, key);
		return PMBOT_ERROR;
	}
	return 0;
}

int pmbot_gh_comment_upsert(long long *out_id, pmbot_github_client *c, const char *repo,
	long number, long long id, const char *body, pmbot_buf *err)
{
	call k;
	int rc;

	*out_id = 0;
	if (id > 0)
		rc = call_start(&k, c, err, "editing comment %lld on %s", id, show(repo));
	else
		rc = call_start(&k, c, err, "commenting on %s#%ld", show(repo), number);
	if (rc < 0 || (rc = call_repo(&k, repo)) < 0)
		goto done;
	if (!body || !utf8_text(body)) {
		rc = call_bad(&k, "the body must be UTF-8 text");
		goto done;
	}
	if (id < 0 || (id == 0 && number <= 0)) {
		rc = call_bad(&k, "the comment id and the number must be positive");
		goto done;
	}
	if (id > 0)
		rc = call_path(&k, "/issues/comments/%lld", id);
	else
		rc = call_path(&k, "/issues/%ld/comments", number);
	if (rc < 0)
		goto done;
	rc = call_write(out_id, &k, id > 0 ? "PATCH" : "POST", json_pack("{s:s}", "body", body),
		id > 0, "id");
done:
	call_end(&k);
	return rc;
}

int pmbot_gh_reaction_add(pmbot_github_client *c, const char *repo, long long comment_id,
	const char *content, pmbot_buf *err)
{
	static const char *const allowed[] = {
		"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"
	};
	call k;
	long long reaction_id;
	size_t i;
	int rc;

	if ((rc = call_start(&k, c, err, "reacting %s to comment %lld on %s", show(content),
		    comment_id, show(repo))) < 0 ||
	    (rc = call_repo(&k, repo)) < 0)
		goto done;
	for (i = 0; content && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (!strcmp(content, allowed[i]))
			break;
	if (!content || i == sizeof(allowed) / sizeof(allowed[0])) {
		rc = call_bad(&k, "not one of GitHub's reactions "
			"(+1, -1, laugh, confused, heart, hooray, rocket, eyes)");
		goto done;
	}
	if (comment_id <= 0) {
		rc = call_bad(&k, "the comment id must be positive");
		goto done;
	}
	if ((rc = call_path(&k, "/issues/comments/%lld/reactions", comment_id)) < 0)
		goto done;
	/* 200 means "already there", so a repeat cannot add a second one. */
	rc = call_write(&reaction_id, &k, "POST", json_pack("{s:s}", "content", content), 1, "id");
done:
	call_end(&k);
	return rc;
}

/* ---- the field-sync tracking issue -------------------------------------- */

int pmbot_gh_issue_find(long *number, char **body, pmbot_github_client *c, const char *repo,
	const char *header_prefix, const char *author, pmbot_buf *err)
{
	call k;
	find_ctx f;
	const json_t *hit;
	int rc;

	*number = 0;
	if (body)
		*body = NULL;
	if ((rc = call_start(&k, c, err, "looking for pm-bot's tracking issue in %s",
		    show(repo))) < 0 ||
	    (rc = call_repo(&k, repo)) < 0 ||
	    (rc = find_args(&k, header_prefix, author)) < 0 ||
	    (rc = call_path(&k, "/issues?state=open&creator=")) < 0 ||
	    (rc = call_login(&k, author)) < 0 || (rc = call_path(&k, "&per_page=100")) < 0)
		goto done;
	f.prefix = header_prefix;
	f.prefix_len = strlen(header_prefix);
	f.author = author;
	f.id_key = "number";
	f.open_issues_only = 1;
	if ((rc = call_find(&hit, &k, ours, &f)) < 0 || !hit)
		goto done;
	if (body && (rc = dup_out(body, jstr(hit, "body"))) < 0) {
		rc = call_oom(&k);
		goto done;
	}
	*number = (long)jid(hit, "number");
done:
	call_end(&k);
	return rc;
}

int pmbot_gh_issue_upsert(long *out_number, pmbot_github_client *c, const char *repo,
	long number, const char *title, const char *body, pmbot_buf *err)
{
	call k;
	json_t *req = NULL;
	long long got = 0;
	int rc;

	*out_number = 0;
	if (number > 0)
		rc = call_start(&k, c, err, "editing issue %s#%ld", show(repo), number);
	else
		rc = call_start(&k, c, err, "opening an issue in %s", show(repo));
	if (rc < 0 || (rc = call_repo(&k, repo)) < 0)
		goto done;
	if (!body || !utf8_text(body) || (title && !utf8_text(title))) {
		rc = call_bad(&k, "the title and body must be UTF-8 text");
		goto done;
	}
	if (number < 0 || (number == 0 && (!title || !*title))) {
		rc = call_bad(&k, "a new issue needs a title, an edit a positive number");
		goto done;
	}
	if (number > 0)
		rc = call_path(&k, "/issues/%ld", number);
	else
		rc = call_path(&k, "/issues");
	if (rc < 0)
		goto done;
	if (!(req = json_pack("{s:s}", "body", body)) ||
	    (title && json_object_set_new(req, "title", json_string(title)) < 0)) {
		json_decref(req);
		rc = call_oom(&k);
		goto done;
	}
	rc = call_write(&got, &k, number > 0 ? "PATCH" : "POST", req, number > 0, "number");
	if (rc == 0)
		*out_number = (long)got;
done:
	call_end(&k);
	return rc;
}

/* ---- repository labels (the apply lock) --------------------------------- */

/* Start the path /repos/{o}/{r}/labels[/{name}]. */
static int call_label(call *k, const char *repo, const char *name)
{
	int rc;

	if ((rc = call_repo(k, repo)) < 0 || (rc = call_path(k, "/labels")) < 0)
		return rc;
	if (!name)
		return 0;
	if (!*name || strlen(name) > PMBOT_GH_LABEL_MAX)
		return call_bad(k, "a label name has 1 to 50 characters");
	if (pmbot_buf_putc(&k->path, '/') < 0)
		return call_oom(k);
	return put_segment(&k->path, name, strlen(name)) < 0 ? call_oom(k) : 0;
}

/* A 422 whose errors say the name is taken: GitHub's `already_exists` code. */
static int already_exists(const call *k)
{
	const json_t *e;
	size_t i;

	if (k->resp.status != 422)
		return 0;
	json_array_foreach(json_object_get(k->resp.json, "errors"), i, e) {
		if (!strcmp(jstr(e, "code") ? jstr(e, "code") : "", "already_exists"))
			return 1;
	}
	return 0;
}

int pmbot_gh_label_create(pmbot_github_client *c, const char *repo, const char *name,
	const char *description, pmbot_buf *err)
{
	call k;
	json_t *req = NULL;
	int rc;

	if ((rc = call_start(&k, c, err, "creating label %s on %s", show(name), show(repo))) < 0 ||
	    (rc = call_label(&k, repo, NULL)) < 0)
		goto done;
	if (!name || !*name || strlen(name) > PMBOT_GH_LABEL_MAX || !utf8_text(name)) {
		rc = call_bad(&k, "a label name has 1 to 50 characters");
		goto done;
	}
	if (!description || !utf8_text(description) || strlen(description) > PMBOT_GH_LABEL_DESC_MAX) {
		rc = call_bad(&k, "a label description is UTF-8 of at most 100 bytes");
		goto done;
	}
	if (!(req = json_pack("{s:s, s:s, s:s}", "name", name, "color", "ededed",
		"description", description))) {
		rc = call_oom(&k);
		goto done;
	}
	/* Never retried: a create that may have landed is re-read by the caller. */
	rc = pmbot_github_rest_flags(&k.resp, k.c, "POST", k.path.buf, req, 0, fresh_why(&k));
	if (rc == PMBOT_GITHUB_EHTTP && already_exists(&k)) {
		pmbot_buf_note(err, "%s: a label of that name exists", k.what.buf);
		rc = PMBOT_GH_EEXISTS;
	} else if (rc < 0) {
		rc = call_failed(&k, rc, 1);
	}
done:
	json_decref(req);
	call_end(&k);
	return rc;
}

int pmbot_gh_label_get(char **description, pmbot_github_client *c, const char *repo,
	const char *name, pmbot_buf *err)
{
	call k;
	const json_t *v;
	int rc;

	*description = NULL;
	if ((rc = call_start(&k, c, err, "reading label %s on %s", show(name), show(repo))) < 0 ||
	    (rc = call_label(&k, repo, name)) < 0 || (rc = call_rest(&k, "GET", NULL, 0)) < 0)
		goto done;
	v = json_object_get(k.resp.json, "description");
	if (!json_is_string(v) && !json_is_null(v)) {
		rc = call_malformed(&k, "the label's description");
		goto done;
	}
	if ((rc = dup_out(description, json_is_string(v) ? json_string_value(v) : "")) < 0)
		rc = call_oom(&k);
done:
	call_end(&k);
	return rc;
}

int pmbot_gh_label_delete(pmbot_github_client *c, const char *repo, const char *name,
	pmbot_buf *err)
{
	call k;
	int rc;

	if ((rc = call_start(&k, c, err, "deleting label %s on %s", show(name), show(repo))) < 0 ||
	    (rc = call_label(&k, repo, name)) < 0)
		goto done;
	/* Deleting what is already gone changes nothing: safe to repeat. */
	rc = pmbot_github_rest_flags(&k.resp, k.c, "DELETE", k.path.buf, NULL,
		PMBOT_GITHUB_IDEMPOTENT, fresh_why(&k));
	if (rc == PMBOT_GITHUB_EHTTP && k.resp.status == 404) {
		pmbot_buf_note(err, "%s: no such label", k.what.buf);
		rc = PMBOT_ENOTFOUND;
	} else if (rc < 0) {
		rc = call_failed(&k, rc, 1);
	}
done:
	call_end(&k);
	return rc;
}
