#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmbot/github.h"
#include "pmbot/json.h"
#include "pmbot/render.h"
#include "pmbot/state.h"
#include "pmbot/banned.h"

typedef struct {
	pmbot_backend base;
	pmbot_github_client *client; /* borrowed */
	char *self_login;
	/* From the last read that had a project: the board's node id and the
	 * type of each field id, which the write paths need but args omit. */
	char *project_id;
	json_t *field_types; /* field id -> "text" | "number" | "date" | "single_select" */
	/* What creates need of each repository, read once: folded "owner/name"
	 * -> {id, labels: {folded name: node id}, types: {folded name: node id}}. */
	json_t *repo_meta;
	/* What this GitHub lacks, learnt from the first issues read (GitHub
	 * Enterprise Server up to 3.21 has neither sub-issues nor dependencies). */
	int no_sub_issues;
	int no_dependencies;
	int no_issue_types;
	/* The issue type names each repository of the current read offers:
	 * GitHub's "owner/name" -> [name, ...] (state extra.issue_types). */
	json_t *read_types;
	/* The issues and create_issue documents without what this GitHub lacks
	 * (pmbot_gql_without), built on first use once something is missing. */
	pmbot_buf issues_doc;
	pmbot_buf create_doc;
	pmbot_buf meta_doc;
} gh_backend;

/* `b` emptied: the message buffer of one request holds that request's message only. */
#define FRESH(b) (pmbot_buf_clear(b), (b))

#define OOM(err, op) (pmbot_buf_printf((err), "%s: out of memory", (op)), PMBOT_ERROR)

/* ---- failures ---------------------------------------------------------- */

/*
 * Turn a client failure into the interface's codes: GitHub refusing the
 * request (4xx other than rate limits) is a refusal, everything else a
 * failure the executor may retry or resolve by re-reading. `why` is the
 * client's message of the failed request.
 */
static int gh_fail(gh_backend *g, pmbot_buf *err, const char *op, const char *what, int rc,
	const pmbot_github_response *resp, const char *why)
{
	/* Nothing was sent: a pause for the executor, not a failure to re-read after. */
	if (rc == PMBOT_GITHUB_EBUDGET) {
		g->base.resume_at = (pmbot_github_budget_resume(g->client) + 999) / 1000;
		pmbot_buf_printf(err, "%s: %s: %s", op, what, why);
		return PMBOT_BACKEND_EPAUSED;
	}
	if (rc == PMBOT_GITHUB_EUNKNOWN_OUTCOME) {
		pmbot_buf_printf(err, "%s: %s: the outcome is unknown (%s); it was not retried: "
			"re-read the state to learn whether it landed", op, what, why);
		return PMBOT_ERROR;
	}
	pmbot_buf_printf(err, "%s: %s failed: %s", op, what, *why ? why : "unknown error");
	if (rc == PMBOT_GITHUB_EHTTP && resp && resp->status >= 400 && resp->status < 500 &&
	    resp->status != 429)
		return PMBOT_EINVALID;
	if (rc == PMBOT_GITHUB_EGRAPHQL && resp && resp->error_type &&
	    strcmp(resp->error_type, "RATE_LIMITED") && strcmp(resp->error_type, "INTERNAL"))
		return PMBOT_EINVALID;
	if (rc == PMBOT_EINVALID)
		return PMBOT_EINVALID;
	return PMBOT_ERROR;
}

/* ---- small JSON helpers ------------------------------------------------ */

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* "OWNER/NAME" out of a REST issue's repository_url (".../repos/OWNER/NAME"). */
static const char *repo_of_rest_issue(const json_t *issue)
{
	const char *u = jstr(issue, "repository_url"), *p = NULL, *q;

	if (!u)
		return NULL;
	for (q = strstr(u, "/repos/"); q; q = strstr(q + 1, "/repos/"))
		p = q + 7;
	return p;
}

static int arg_str(const char **out, const json_t *args, const char *key, const char *op,
	pmbot_buf *err)
{
	*out = jstr(args, key);
	if (*out && **out)
		return 0;
	pmbot_buf_printf(err, "%s: argument `%s` must be a non-empty string", op, key);
	return PMBOT_EINVALID;
}

static int arg_int(long long *out, const json_t *args, const char *key, const char *op,
	pmbot_buf *err)
{
	const json_t *v = json_object_get(args, key);

	if (json_is_integer(v) && json_integer_value(v) > 0) {
		*out = json_integer_value(v);
		return 0;
	}
	pmbot_buf_printf(err, "%s: argument `%s` must be a positive integer", op, key);
	return PMBOT_EINVALID;
}

/* ---- read: issues ------------------------------------------------------ */

/* GraphQL names bots "github-actions"; REST, and so the state, "github-actions[bot]". */
static json_t *author_login(const json_t *author, int *is_bot)
{
	const char *login = jstr(author, "login");
	const char *type = jstr(author, "__typename");
	size_t n;
	pmbot_buf b = PMBOT_BUF_INIT;
	json_t *s;

	*is_bot = type && !strcmp(type, "Bot");
	if (!login || !*login)
		return json_string("ghost"); /* a deleted account */
	n = strlen(login);
	if (!*is_bot || (n > 5 && !strcmp(login + n - 5, "[bot]")))
		return json_string(login);
	if (pmbot_buf_printf(&b, "%s[bot]", login) < 0) {
		pmbot_buf_free(&b);
		return NULL;
	}
	s = json_string(b.buf);
	pmbot_buf_free(&b);
	return s;
}

static int read_dependencies(json_t *out_refs, gh_backend *g, const char *repo, long number,
	pmbot_buf *err)
{
	pmbot_buf path = PMBOT_BUF_INIT, ref = PMBOT_BUF_INIT, why = PMBOT_BUF_INIT;
	json_t *list = NULL, *it;
	size_t i;
	int rc;

	if (pmbot_buf_printf(&path, "/repos/%s/issues/%ld/dependencies/blocked_by", repo, number) < 0) {
		rc = OOM(err, "read");
		goto done;
	}
	rc = pmbot_github_rest_paginate(&list, g->client, path.buf, 0, FRESH(&why));
	if (rc < 0) {
		rc = gh_fail(g, err, "read", "listing dependencies", rc, NULL, why.buf);
		goto done;
	}
	json_array_foreach(list, i, it) {
		const char *r = repo_of_rest_issue(it);
		json_int_t n = json_integer_value(json_object_get(it, "number"));

		pmbot_buf_clear(&ref);
		if (!r || n <= 0 || pmbot_issue_ref(&ref, r, (long)n) < 0 ||
		    json_array_append_new(out_refs, json_string(ref.buf)) < 0) {
			pmbot_buf_printf(err, "read: an unusable dependency of %s#%ld", repo, number);
			rc = PMBOT_ERROR;
			goto done;
		}
	}
	rc = 0;
done:
	json_decref(list);
	pmbot_buf_free(&path);
	pmbot_buf_free(&ref);
	pmbot_buf_free(&why);
	return rc;
}

/* One GraphQL issue node as a State snapshot issue. */
static int issue_from_node(json_t **out, gh_backend *g, const char *repo, const json_t *n,
	pmbot_buf *err)
{
	const json_t *labels = json_object_get(json_object_get(n, "labels"), "nodes");
	const json_t *parent = json_object_get(n, "parent"), *l;
	const json_t *blocked = json_object_get(n, "blockedBy");
	const char *state = jstr(n, "state"), *body = jstr(n, "body");
	pmbot_buf ref = PMBOT_BUF_INIT;
	json_t *o = NULL, *arr = NULL, *deps = NULL, *author;
	int is_bot = 0, rc = PMBOT_ERROR;
	long number = (long)json_integer_value(json_object_get(n, "number"));
	size_t i;

	*out = NULL;
	if (!(author = author_login(json_object_get(n, "author"), &is_bot)) ||
	    !(o = json_pack("{s:I, s:O, s:O, s:O, s:s, s:s, s:o, s:s, s:O}",
		      "number", (json_int_t)number,
		      "database_id", json_object_get(n, "databaseId"),
		      "node_id", json_object_get(n, "id"),
		      "title", json_object_get(n, "title"),
		      "body", body ? body : "",
		      "state", state && !strcmp(state, "CLOSED") ? "closed" : "open",
		      "author", author,
		      "author_type", is_bot ? "Bot" : "User",
		      "updated_at", json_object_get(n, "updatedAt")))) {
		pmbot_buf_printf(err, "read: an issue of %s without its number, ids or title", repo);
		goto done;
	}
	if (!(arr = json_array()))
		goto oom;
	json_array_foreach(labels, i, l)
		if (jstr(l, "name") && json_array_append(arr, json_object_get(l, "name")) < 0)
			goto oom;
	if (json_object_set_new(o, "labels", arr) < 0) {
		arr = NULL;
		goto oom;
	}
	arr = NULL;
	if (json_is_object(parent)) {
		const char *pr = jstr(json_object_get(parent, "repository"), "nameWithOwner");
		json_int_t pn = json_integer_value(json_object_get(parent, "number"));

		if (!pr || pn <= 0 || pmbot_issue_ref(&ref, pr, (long)pn) < 0 ||
		    json_object_set_new(o, "parent", json_string(ref.buf)) < 0)
			goto oom;
	} else if (json_object_set_new(o, "parent", json_null()) < 0) {
		goto oom;
	}
	if (!(deps = json_array()))
		goto oom;
	if (json_is_object(blocked)) {
		const json_t *bn = json_object_get(blocked, "nodes"), *bl;
		json_int_t total = json_integer_value(json_object_get(blocked, "totalCount"));

		if (total > 0 && (size_t)total > json_array_size(bn)) {
			/* More than a page (GitHub allows 50 each way): REST lists them all. */
			if ((rc = read_dependencies(deps, g, repo, number, err)) < 0)
				goto done;
			rc = PMBOT_ERROR;
		} else {
			json_array_foreach(bn, i, bl) {
				const char *br = jstr(json_object_get(bl, "repository"), "nameWithOwner");
				json_int_t bnum = json_integer_value(json_object_get(bl, "number"));

				if (!br || bnum <= 0)
					continue; /* a blocker the token cannot see */
				pmbot_buf_clear(&ref);
				if (pmbot_issue_ref(&ref, br, (long)bnum) < 0 ||
				    json_array_append_new(deps, json_string(ref.buf)) < 0)
					goto oom;
			}
		}
	}
	if (json_object_set_new(o, "blocked_by", deps) < 0) {
		deps = NULL;
		goto oom;
	}
	deps = NULL;
	/* Absent, not null, when there is none: a state without types keeps its bytes. */
	if (jstr(json_object_get(n, "issueType"), "name") &&
	    json_object_set(o, "issue_type", json_object_get(json_object_get(n, "issueType"), "name")) < 0)
		goto oom;
	*out = o;
	o = NULL;
	rc = 0;
	goto done;
oom:
	pmbot_buf_printf(err, "read: out of memory");
	rc = PMBOT_ERROR;
done:
	json_decref(o);
	json_decref(arr);
	json_decref(deps);
	pmbot_buf_free(&ref);
	return rc;
}

/*
 * A partial answer to the "issues" document: data with the nodes, and
 * errors that are all FORBIDDEN at a path inside one node
 * (repository/issues/nodes/I/...): fields the token may not see (SAML, an
 * App installed on some repositories only). `*forbidden` (new) maps each
 * such node index ("I") to the names of its unreadable fields. 1 when the
 * answer is such a partial answer, 0 when it is not (any other error type
 * or path fails the read as before), -1 when out of memory.
 */
static int partial_forbidden(json_t **forbidden, const json_t *doc)
{
	const json_t *errors = json_object_get(doc, "errors"), *e;
	const json_t *nodes = json_object_get(json_object_get(json_object_get(
		json_object_get(doc, "data"), "repository"), "issues"), "nodes");
	json_t *map;
	size_t i;

	*forbidden = NULL;
	if (!json_is_array(nodes) || !json_array_size(errors) || !(map = json_object()))
		return json_is_array(nodes) && json_array_size(errors) ? -1 : 0;
	json_array_foreach(errors, i, e) {
		const json_t *path = json_object_get(e, "path"), *idx = json_array_get(path, 3);
		const char *type = jstr(e, "type"), *field = json_string_value(json_array_get(path, 4));
		json_t *fields;
		char key[32];

		if (!type || strcmp(type, "FORBIDDEN") || json_array_size(path) < 5 ||
		    !json_is_integer(idx) || json_integer_value(idx) < 0 ||
		    (size_t)json_integer_value(idx) >= json_array_size(nodes) ||
		    strcmp(json_string_value(json_array_get(path, 0)) ?
			json_string_value(json_array_get(path, 0)) : "", "repository") ||
		    strcmp(json_string_value(json_array_get(path, 1)) ?
			json_string_value(json_array_get(path, 1)) : "", "issues") ||
		    strcmp(json_string_value(json_array_get(path, 2)) ?
			json_string_value(json_array_get(path, 2)) : "", "nodes")) {
			json_decref(map);
			return 0;
		}
		snprintf(key, sizeof(key), "%" JSON_INTEGER_FORMAT, json_integer_value(idx));
		if (!(fields = json_object_get(map, key))) {
			if (json_object_set_new(map, key, json_array()) < 0 ||
			    !(fields = json_object_get(map, key)))
				goto oom;
		}
		if (json_array_append_new(fields, json_string(field ? field : "?")) < 0)
			goto oom;
	}
	*forbidden = map;
	return 1;
oom:
	json_decref(map);
	return -1;
}

/*
 * An issue the token cannot fully read, for extra.unreadable: {repo, ref
 * (null when GitHub nulled the whole node), fields, stable_id (the marker's,
 * when its body was readable and carries a well-formed one; else null)}.
 * Such an issue is left out of the state's issues: the planner leaves it
 * alone and refuses creates whose absence it cannot prove.
 */
static int unreadable_entry(json_t *unreadable, const char *repo, const json_t *n,
	const json_t *fields)
{
	const char *body = jstr(n, "body");
	json_int_t number = json_integer_value(json_object_get(n, "number"));
	pmbot_buf ref = PMBOT_BUF_INIT;
	pmbot_body pb;
	json_t *e;
	int rc = -1;

	memset(&pb, 0, sizeof(pb));
	if (number > 0 && pmbot_issue_ref(&ref, repo, (long)number) < 0)
		goto done;
	if (body && pmbot_body_parse(&pb, body, strlen(body), NULL) < 0)
		goto done;
	e = json_pack("{s:s, s:s?, s:O, s:s?}", "repo", repo, "ref", number > 0 ? ref.buf : NULL,
		"fields", fields, "stable_id", body && pb.marker == PMBOT_MARKER_OK ? pb.stable_id : NULL);
	if (e && json_array_append_new(unreadable, e) == 0)
		rc = 0;
done:
	pmbot_body_free(&pb);
	pmbot_buf_free(&ref);
	return rc;
}

/*
 * A GitHub without sub-issues, dependencies or issue types (GitHub
 * Enterprise Server up to 3.21) refuses the issues document as a whole:
 * every error is extensions.code "undefinedField" for Issue.parent,
 * Issue.blockedBy, Issue.issueType or Repository.issueTypes.
 * Note which are missing in `g`; 1 when the answer is exactly that and
 * something new was learnt (read again with a document without them), else 0.
 */
static int learn_missing_fields(gh_backend *g, const json_t *answer)
{
	const json_t *errors = json_object_get(answer, "errors"), *e;
	int sub = 0, deps = 0, types = 0;
	size_t i;

	if (!json_array_size(errors) || json_is_object(json_object_get(answer, "data")))
		return 0;
	json_array_foreach(errors, i, e) {
		const json_t *x = json_object_get(e, "extensions");
		const char *code = jstr(x, "code"), *type = jstr(x, "typeName");
		const char *field = jstr(x, "fieldName");

		if (!code || strcmp(code, "undefinedField") || !type || !field)
			return 0;
		if (!strcmp(type, "Repository") && !strcmp(field, "issueTypes"))
			types = 1;
		else if (strcmp(type, "Issue"))
			return 0;
		else if (!strcmp(field, "parent"))
			sub = 1;
		else if (!strcmp(field, "blockedBy"))
			deps = 1;
		else if (!strcmp(field, "issueType"))
			types = 1;
		else
			return 0;
	}
	if ((!sub || g->no_sub_issues) && (!deps || g->no_dependencies) &&
	    (!types || g->no_issue_types))
		return 0;
	g->no_sub_issues |= sub;
	g->no_dependencies |= deps;
	g->no_issue_types |= types;
	/* Built for what was missing before: rebuilt on next use. */
	pmbot_buf_clear(&g->issues_doc);
	pmbot_buf_clear(&g->create_doc);
	pmbot_buf_clear(&g->meta_doc);
	return 1;
}

/*
 * Document `name` for what this GitHub serves: the embedded text itself when
 * nothing is missing, else built once into `cache` (owned by `g`) without
 * the lines tagged for the missing features. NULL when out of memory (the
 * tags of every embedded document are checked by test_gql, so nothing else
 * can fail).
 */
static const char *gh_doc(gh_backend *g, pmbot_buf *cache, const char *name)
{
	unsigned missing = (g->no_sub_issues ? PMBOT_GQL_SUB_ISSUES : 0) |
		(g->no_dependencies ? PMBOT_GQL_DEPENDENCIES : 0) |
		(g->no_issue_types ? PMBOT_GQL_ISSUE_TYPES : 0);

	if (!missing)
		return pmbot_gql(name);
	if (!cache->len && pmbot_gql_without(cache, pmbot_gql(name), missing) < 0)
		return NULL;
	return cache->buf;
}

/* The issues document for what this GitHub serves (NULL when out of memory). */
static const char *issues_doc(gh_backend *g)
{
	return gh_doc(g, &g->issues_doc, "issues");
}

/*
 * Note in g->read_types the names of the issue types `r` (an issues page's
 * repository) lists, in GitHub's order; nothing for none (a user's
 * repository, a GitHub without them). 0 or -1 (memory).
 */
static int read_types_of(gh_backend *g, const char *repo, const json_t *r)
{
	const json_t *nodes = json_object_get(json_object_get(r, "issueTypes"), "nodes"), *t;
	json_t *names;
	size_t i;

	if (!json_array_size(nodes))
		return 0;
	if ((!g->read_types && !(g->read_types = json_object())) || !(names = json_array()))
		return -1;
	json_array_foreach(nodes, i, t)
		if (jstr(t, "name") && json_array_append(names, json_object_get(t, "name")) < 0) {
			json_decref(names);
			return -1;
		}
	/* set_new consumes `names` even when it fails. */
	return json_object_set_new(g->read_types, repo, names);
}

/*
 * Every issue of `repo` (`created_by` NULL), or those GitHub's filterBy
 * {createdBy} selects, in ceil(n/100) GraphQL requests: appends them to
 * `issues_out`, and to `unreadable` the issues a partial FORBIDDEN answer
 * hid. `*name_out` (new, may stay NULL) is GitHub's spelling of the name.
 */
static int read_repo(json_t *issues_out, json_t *unreadable, char **name_out, gh_backend *g,
	const char *repo, const char *created_by, pmbot_buf *err)
{
	const char *slash = strchr(repo, '/');
	char *owner = NULL;
	pmbot_github_response resp = PMBOT_GITHUB_RESPONSE_INIT;
	pmbot_buf why = PMBOT_BUF_INIT;
	json_t *vars = NULL, *data = NULL, *issues = NULL, *cursor = NULL;
	json_t *forbidden = NULL;
	const char *name_with_owner = NULL, *doc;
	int rc = PMBOT_ERROR;

	if (!slash || slash == repo || !slash[1]) {
		pmbot_buf_printf(err, "read: '%s' is not OWNER/NAME", repo);
		return PMBOT_EINVALID;
	}
	if (!(owner = strndup(repo, (size_t)(slash - repo))) || !(issues = json_array()))
		goto oom;
	for (;;) {
		const json_t *r, *conn, *info, *n;
		size_t i;

		json_decref(vars);
		json_decref(data);
		data = NULL;
		if (!(vars = json_pack("{s:s, s:s, s:O, s:o}", "owner", owner, "name", slash + 1,
			      "after", cursor ? cursor : json_null(), "filter",
			      created_by ? json_pack("{s:s}", "createdBy", created_by) : json_null())))
			goto oom;
		json_decref(forbidden);
		forbidden = NULL;
		if (!(doc = issues_doc(g)))
			goto oom;
		rc = pmbot_github_graphql_ex(&resp, g->client, doc, vars, 0, FRESH(&why));
		if (rc == PMBOT_GITHUB_EGRAPHQL && learn_missing_fields(g, resp.json))
			continue; /* the same page, without the fields this GitHub lacks */
		if (rc == PMBOT_GITHUB_EGRAPHQL) {
			int pf = partial_forbidden(&forbidden, resp.json);

			if (pf < 0)
				goto oom;
			if (pf)
				rc = 0;
		}
		if (rc < 0) {
			rc = gh_fail(g, err, "read", "reading issues", rc, NULL, why.buf);
			goto done;
		}
		data = json_incref(json_object_get(resp.json, "data"));
		r = json_object_get(data, "repository");
		conn = json_object_get(r, "issues");
		info = json_object_get(conn, "pageInfo");
		if (!json_is_object(r) || !json_is_array(json_object_get(conn, "nodes"))) {
			pmbot_buf_printf(err, "read: GitHub answered no issues for %s", repo);
			rc = PMBOT_ERROR;
			goto done;
		}
		if (!name_with_owner && jstr(r, "nameWithOwner") &&
		    !(name_with_owner = strdup(jstr(r, "nameWithOwner"))))
			goto oom;
		if (!cursor && read_types_of(g, name_with_owner ? name_with_owner : repo, r) < 0)
			goto oom;
		json_array_foreach(json_object_get(conn, "nodes"), i, n) {
			json_t *is;
			char key[32];
			const json_t *hidden;

			snprintf(key, sizeof(key), "%zu", i);
			if ((hidden = json_object_get(forbidden, key))) {
				if (unreadable_entry(unreadable, name_with_owner ? name_with_owner : repo, n,
					    hidden) < 0)
					goto oom;
				continue;
			}
			if ((rc = issue_from_node(&is, g, name_with_owner ? name_with_owner : repo, n,
				     err)) < 0)
				goto done;
			if (json_array_append_new(issues, is) < 0)
				goto oom;
		}
		rc = PMBOT_ERROR;
		if (!json_is_true(json_object_get(info, "hasNextPage")))
			break;
		json_decref(cursor);
		cursor = json_incref(json_object_get(info, "endCursor"));
		if (!json_is_string(cursor)) {
			pmbot_buf_printf(err, "read: GitHub gave no cursor for the next page of %s", repo);
			goto done;
		}
	}
	if (json_array_extend(issues_out, issues) < 0)
		goto oom;
	if (name_with_owner && !*name_out) {
		*name_out = (char *)name_with_owner;
		name_with_owner = NULL;
	}
	rc = 0;
	goto done;
oom:
	pmbot_buf_printf(err, "read: out of memory");
	rc = PMBOT_ERROR;
done:
	pmbot_github_response_free(&resp);
	pmbot_buf_free(&why);
	json_decref(forbidden);
	free((char *)name_with_owner);
	free(owner);
	json_decref(vars);
	json_decref(data);
	json_decref(issues);
	json_decref(cursor);
	return rc;
}

/* ---- read: narrowed to pm-bot's own issues, absence proven ------------- */

/* The stable id of the well-formed marker in `body`, into `out`; 1, 0 for none, -1 (memory). */
static int marker_of(pmbot_buf *out, const char *body)
{
	pmbot_body pb;
	int rc = 0;

	pmbot_buf_clear(out);
	if (!body || !strstr(body, "pm-bot:"))
		return 0;
	memset(&pb, 0, sizeof(pb));
	if (pmbot_body_parse(&pb, body, strlen(body), NULL) < 0)
		return -1;
	if (pb.marker == PMBOT_MARKER_OK && pb.stable_id)
		rc = pmbot_buf_puts(out, pb.stable_id) < 0 ? -1 : 1;
	pmbot_body_free(&pb);
	return rc;
}

/*
 * Every stable id that `issues` (state issues) carry in a marker, and that
 * `unreadable` entries name, as the keys of `ids`. 0 or -1.
 */
static int marker_ids(json_t *ids, const json_t *issues, const json_t *unreadable)
{
	pmbot_buf sid = PMBOT_BUF_INIT;
	const json_t *is;
	size_t i;
	int rc = -1, r;

	json_array_foreach(issues, i, is) {
		if ((r = marker_of(&sid, jstr(is, "body"))) < 0)
			goto done;
		if (r && json_object_set_new(ids, sid.buf, json_true()) < 0)
			goto done;
	}
	json_array_foreach(unreadable, i, is)
		if (jstr(is, "stable_id") && json_object_set_new(ids, jstr(is, "stable_id"), json_true()) < 0)
			goto done;
	rc = 0;
done:
	pmbot_buf_free(&sid);
	return rc;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* The numbers of `issues`, sorted, for has_number(): `*out` new (NULL when none). 0 or -1. */
static int issue_numbers(long **out, size_t *n, const json_t *issues)
{
	const json_t *is;
	size_t i;

	*out = NULL;
	*n = 0;
	if (!json_array_size(issues))
		return 0;
	if (!(*out = calloc(json_array_size(issues), sizeof(**out))))
		return -1;
	json_array_foreach(issues, i, is)
		(*out)[(*n)++] = (long)json_integer_value(json_object_get(is, "number"));
	qsort(*out, *n, sizeof(**out), cmp_long);
	return 0;
}

static int has_number(const long *sorted, size_t n, long number)
{
	return n && bsearch(&number, sorted, n, sizeof(*sorted), cmp_long) != NULL;
}

/* Does `unreadable` name `repo`#`number`? */
static int unreadable_has(const json_t *unreadable, const char *repo, long number)
{
	pmbot_buf ref = PMBOT_BUF_INIT;
	const json_t *e;
	size_t i;
	int found = 0;

	if (pmbot_issue_ref(&ref, repo, number) < 0)
		return 0;
	json_array_foreach(unreadable, i, e)
		if (jstr(e, "ref") && !pmbot_issue_ref_cmp(jstr(e, "ref"), ref.buf))
			found = 1;
	pmbot_buf_free(&ref);
	return found;
}

/*
 * Issues `numbers[0..n)` of `repo`, 100 aliased issue(number:) fields per
 * request: appended to `issues_out` (to `unreadable` when GitHub withheld
 * fields). A number that is no issue (GitHub's NOT_FOUND for that alias)
 * is simply absent.
 */
static int read_numbers(json_t *issues_out, json_t *unreadable, gh_backend *g, const char *repo,
	const long *numbers, size_t n, pmbot_buf *err)
{
	const char *slash = strchr(repo, '/'), *issues = issues_doc(g), *frag;
	pmbot_buf doc = PMBOT_BUF_INIT, alias = PMBOT_BUF_INIT;
	pmbot_github_response resp = PMBOT_GITHUB_RESPONSE_INIT;
	pmbot_buf why = PMBOT_BUF_INIT;
	json_t *vars = NULL, *forbidden = NULL;
	size_t start, k;
	int rc = PMBOT_ERROR, r;

	if (!issues) {
		pmbot_buf_printf(err, "read: out of memory");
		return PMBOT_ERROR;
	}
	frag = strstr(issues, "fragment PmBotIssue");
	if (!slash || !frag) {
		pmbot_buf_printf(err, "read: '%s' is not OWNER/NAME", repo);
		return PMBOT_EINVALID;
	}
	for (start = 0; start < n; start += 100) {
		size_t end = n - start > 100 ? start + 100 : n;
		const json_t *r0, *e;

		pmbot_buf_clear(&doc);
		r = pmbot_buf_puts(&doc, "query PmBotIssuesByNumber($owner: String!, $name: String!) {\n"
			"  repository(owner: $owner, name: $name) {\n");
		for (k = start; k < end; k++)
			r |= pmbot_buf_printf(&doc, "    i%zu: issue(number: %ld) {\n      ...PmBotIssue\n"
				"    }\n", k - start, numbers[k]);
		r |= pmbot_buf_printf(&doc, "  }\n}\n\n%s", frag);
		json_decref(vars);
		if (r < 0 || !(vars = json_pack("{s:s%, s:s}", "owner", repo, (size_t)(slash - repo),
				       "name", slash + 1)))
			goto oom;
		pmbot_github_response_free(&resp);
		resp = (pmbot_github_response)PMBOT_GITHUB_RESPONSE_INIT;
		rc = pmbot_github_graphql_ex(&resp, g->client, doc.buf, vars, 0, FRESH(&why));
		json_decref(forbidden);
		if (!(forbidden = json_object()))
			goto oom;
		if (rc == PMBOT_GITHUB_EGRAPHQL) {
			/* Per alias: NOT_FOUND means no such issue, FORBIDDEN fields an unreadable one. */
			size_t i;

			rc = 0;
			json_array_foreach(json_object_get(resp.json, "errors"), i, e) {
				const json_t *path = json_object_get(e, "path");
				const char *type = jstr(e, "type");
				const char *p0 = json_string_value(json_array_get(path, 0));
				const char *p1 = json_string_value(json_array_get(path, 1));
				const char *field = json_string_value(json_array_get(path, 2));
				json_t *fields;

				if (!type || !p0 || strcmp(p0, "repository") || !p1 || p1[0] != 'i') {
					rc = PMBOT_GITHUB_EGRAPHQL;
					break;
				}
				if (!strcmp(type, "NOT_FOUND") && json_array_size(path) == 2)
					continue;
				if (strcmp(type, "FORBIDDEN") || !field) {
					rc = PMBOT_GITHUB_EGRAPHQL;
					break;
				}
				if (!(fields = json_object_get(forbidden, p1))) {
					if (json_object_set_new(forbidden, p1, json_array()) < 0 ||
					    !(fields = json_object_get(forbidden, p1)))
						goto oom;
				}
				if (json_array_append_new(fields, json_string(field)) < 0)
					goto oom;
			}
		}
		if (rc < 0) {
			rc = gh_fail(g, err, "read", "reading issues by number", rc, NULL, why.buf);
			goto done;
		}
		rc = PMBOT_ERROR;
		r0 = json_object_get(json_object_get(resp.json, "data"), "repository");
		for (k = start; k < end; k++) {
			const json_t *node, *hidden;
			json_t *is;

			pmbot_buf_clear(&alias);
			if (pmbot_buf_printf(&alias, "i%zu", k - start) < 0)
				goto oom;
			node = json_object_get(r0, alias.buf);
			if ((hidden = json_object_get(forbidden, alias.buf))) {
				if (unreadable_entry(unreadable, jstr(r0, "nameWithOwner") ?
					    jstr(r0, "nameWithOwner") : repo, node, hidden) < 0)
					goto oom;
				continue;
			}
			if (!json_is_object(node))
				continue;
			if ((rc = issue_from_node(&is, g, jstr(r0, "nameWithOwner") ?
				     jstr(r0, "nameWithOwner") : repo, node, err)) < 0)
				goto done;
			rc = PMBOT_ERROR;
			if (json_array_append_new(issues_out, is) < 0)
				goto oom;
		}
	}
	rc = 0;
	goto done;
oom:
	pmbot_buf_printf(err, "read: out of memory");
	rc = PMBOT_ERROR;
done:
	pmbot_github_response_free(&resp);
	pmbot_buf_free(&why);
	json_decref(vars);
	json_decref(forbidden);
	pmbot_buf_free(&doc);
	pmbot_buf_free(&alias);
	return rc;
}

/*
 * The issues of `repo` that `scope` needs, appended as {repo, issues} to
 * `repos_out` (and unreadable ones to `unreadable`):
 *
 * - with no scope or no login of our own: every issue, as always;
 * - else the issues our login created (filterBy createdBy: ceil(own/100)
 *   requests, whatever the repository's size). When a stable id the scope
 *   needs is not among their markers, the filter is not trusted to have
 *   been exact (another identity created it, a transfer, GitHub matching
 *   a bot's login differently): absence is proven by reading every issue,
 *   and each marked issue the filter missed is kept and reported in
 *   `missed` ({repo, ref, author, stable_id}). Numbers the scope names
 *   that the narrow read lacks are read by number.
 */
static int read_repo_scoped(json_t *repos_out, json_t *unreadable, json_t *missed, gh_backend *g,
	const char *repo, const pmbot_read_scope *scope, pmbot_buf *err)
{
	json_t *issues = NULL, *unr = NULL, *all = NULL, *all_unr = NULL, *found = NULL, *entry;
	pmbot_buf login = PMBOT_BUF_INIT, sid = PMBOT_BUF_INIT, ref = PMBOT_BUF_INIT;
	char *name = NULL;
	long *numbers = NULL, *own = NULL;
	size_t i, n_numbers = 0, n_own = 0;
	int rc = PMBOT_ERROR, scan = 1, r;
	const json_t *is;

	if (!(issues = json_array()) || !(unr = json_array()) || !(found = json_object()))
		goto oom;
	if (scope && g->self_login) {
		size_t len = strlen(g->self_login);

		/* GraphQL spells a bot's login without "[bot]" (REST adds it). */
		if (len > 5 && !strcmp(g->self_login + len - 5, "[bot]"))
			len -= 5;
		if (pmbot_buf_put(&login, g->self_login, len) < 0)
			goto oom;
		if ((rc = read_repo(issues, unr, &name, g, repo, login.buf, err)) < 0)
			goto done;
		rc = PMBOT_ERROR;
		if (marker_ids(found, issues, unr) < 0 || issue_numbers(&own, &n_own, issues) < 0 ||
		    (scope->n_needs && !(numbers = calloc(scope->n_needs, sizeof(*numbers)))))
			goto oom;
		scan = 0;
		for (i = 0; i < scope->n_needs; i++) {
			const pmbot_read_need *nd = &scope->needs[i];

			if (!nd->repo || strcasecmp(nd->repo, repo))
				continue;
			if (nd->stable_id && !json_object_get(found, nd->stable_id))
				scan = 1;
			else if (!nd->stable_id && nd->number > 0 && !has_number(own, n_own, nd->number) &&
				 !unreadable_has(unr, name ? name : repo, nd->number))
				numbers[n_numbers++] = nd->number;
		}
	}
	if (scan) {
		if (!(all = json_array()) || !(all_unr = json_array()))
			goto oom;
		if ((rc = read_repo(all, all_unr, &name, g, repo, NULL, err)) < 0)
			goto done;
		rc = PMBOT_ERROR;
		json_array_foreach(scope && g->self_login ? all : NULL, i, is) {
			json_int_t number = json_integer_value(json_object_get(is, "number"));

			if (has_number(own, n_own, (long)number))
				continue;
			if ((r = marker_of(&sid, jstr(is, "body"))) < 0)
				goto oom;
			pmbot_buf_clear(&ref);
			if (r && (pmbot_issue_ref(&ref, name ? name : repo, (long)number) < 0 ||
				  json_array_append_new(missed, json_pack("{s:s, s:s, s:O, s:s}", "repo",
					  name ? name : repo, "ref", ref.buf, "author",
					  json_object_get(is, "author"), "stable_id", sid.buf)) < 0))
				goto oom;
		}
		json_decref(issues);
		json_decref(unr);
		issues = all;
		unr = all_unr;
		all = all_unr = NULL;
	} else if (n_numbers && (rc = read_numbers(issues, unr, g, name ? name : repo, numbers,
					 n_numbers, err)) < 0) {
		goto done;
	}
	rc = PMBOT_ERROR;
	if (json_array_extend(unreadable, unr) < 0 ||
	    !(entry = json_pack("{s:s, s:O}", "repo", name ? name : repo, "issues", issues)) ||
	    json_array_append_new(repos_out, entry) < 0)
		goto oom;
	rc = 0;
	goto done;
oom:
	pmbot_buf_printf(err, "read: out of memory");
	rc = PMBOT_ERROR;
done:
	json_decref(issues);
	json_decref(unr);
	json_decref(all);
	json_decref(all_unr);
	json_decref(found);
	pmbot_buf_free(&login);
	pmbot_buf_free(&sid);
	pmbot_buf_free(&ref);
	free(name);
	free(numbers);
	free(own);
	return rc;
}

/* ---- read: the project ------------------------------------------------- */

static const char *field_type(const char *data_type)
{
	static const char *const map[][2] = {
		{ "TEXT", "text" }, { "NUMBER", "number" }, { "DATE", "date" },
		{ "SINGLE_SELECT", "single_select" },
	};
	size_t i;

	for (i = 0; data_type && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(data_type, map[i][0]))
			return map[i][1];
	return NULL; /* built-in kinds (title, assignees, ...) pm-bot does not manage */
}

/* Fields pm-bot can write, as the snapshot lists them; `names` maps name -> type. */
static int project_fields(json_t **out, json_t *names, const json_t *nodes)
{
	json_t *fields = json_array(), *f = NULL, *opts, *o;
	const json_t *n, *opt;
	size_t i, k;

	if (!fields)
		return PMBOT_ERROR;
	json_array_foreach(nodes, i, n) {
		const char *type = field_type(jstr(n, "dataType"));

		if (!type || !jstr(n, "id") || !jstr(n, "name"))
			continue;
		if (!(f = json_pack("{s:O, s:O, s:s}", "id", json_object_get(n, "id"), "name",
			      json_object_get(n, "name"), "type", type)))
			goto fail;
		if (!strcmp(type, "single_select")) {
			if (!(opts = json_array()) || json_object_set_new(f, "options", opts) < 0)
				goto fail;
			json_array_foreach(json_object_get(n, "options"), k, opt) {
				if (!(o = json_pack("{s:O, s:O}", "id", json_object_get(opt, "id"), "name",
					      json_object_get(opt, "name"))) ||
				    json_array_append_new(opts, o) < 0)
					goto fail;
			}
		}
		if (json_object_set_new(names, jstr(n, "name"), json_string(type)) < 0 ||
		    json_array_append_new(fields, f) < 0) {
			f = NULL;
			goto fail;
		}
		f = NULL;
	}
	*out = fields;
	return 0;
fail:
	json_decref(f);
	json_decref(fields);
	return PMBOT_ERROR;
}

/* One board item as {id, issue, values}; *out NULL for items that are not issues. */
static int project_item(json_t **out, const json_t *n, const json_t *names)
{
	const json_t *content = json_object_get(n, "content"), *v;
	const char *repo = jstr(json_object_get(content, "repository"), "nameWithOwner");
	json_int_t number = json_integer_value(json_object_get(content, "number"));
	pmbot_buf ref = PMBOT_BUF_INIT;
	json_t *values = NULL, *item = NULL;
	size_t i;
	int rc = PMBOT_ERROR;

	*out = NULL;
	if (!repo || number <= 0 || !jstr(n, "id"))
		return 0;
	if (pmbot_issue_ref(&ref, repo, (long)number) < 0 || !(values = json_object()))
		goto done;
	json_array_foreach(json_object_get(json_object_get(n, "fieldValues"), "nodes"), i, v) {
		const char *fname = jstr(json_object_get(v, "field"), "name");
		const char *type = jstr(names, fname ? fname : "");
		const json_t *val = NULL;

		if (!type)
			continue;
		if (!strcmp(type, "single_select"))
			val = json_object_get(v, "name");
		else if (!strcmp(type, "text"))
			val = json_object_get(v, "text");
		else if (!strcmp(type, "number"))
			val = json_object_get(v, "number");
		else
			val = json_object_get(v, "date");
		if (val && !json_is_null(val) && json_object_set(values, fname, (json_t *)val) < 0)
			goto done;
	}
	if (!(item = json_pack("{s:O, s:s, s:O}", "id", json_object_get(n, "id"), "issue", ref.buf,
		      "values", values)))
		goto done;
	*out = item;
	rc = 0;
done:
	json_decref(values);
	pmbot_buf_free(&ref);
	return rc;
}

/*
 * The board with every field and item, one request per 100 items. The owner
 * kind is unknown up front: an organization is tried first, then a user.
 * `*out` stays NULL when there is no such board.
 */
static int read_project(json_t **out, gh_backend *g, const char *owner, long number,
	pmbot_buf *err)
{
	pmbot_github_response resp = PMBOT_GITHUB_RESPONSE_INIT;
	pmbot_buf why = PMBOT_BUF_INIT;
	json_t *vars = NULL, *project = NULL, *items = NULL, *fields = NULL, *names = NULL;
	json_t *cursor = NULL, *types = NULL;
	int org = 1, rc = PMBOT_ERROR;

	*out = NULL;
	if (!(items = json_array()) || !(names = json_object()))
		goto oom;
	for (;;) {
		const json_t *data, *p, *conn, *info, *n;
		size_t i;

		json_decref(vars);
		if (!(vars = json_pack("{s:s, s:I, s:O, s:b}", "login", owner, "number",
			      (json_int_t)number, "after", cursor ? cursor : json_null(), "org", org)))
			goto oom;
		rc = pmbot_github_graphql_ex(&resp, g->client, pmbot_gql("project"), vars, 0,
			FRESH(&why));
		if (rc == PMBOT_GITHUB_EGRAPHQL && resp.error_type &&
		    !strcmp(resp.error_type, "NOT_FOUND") && !cursor) {
			if (org) {
				org = 0;
				continue;
			}
			rc = 0; /* no such board: the state simply has none */
			goto done;
		}
		if (rc < 0) {
			rc = gh_fail(g, err, "read", "reading the project", rc, &resp, why.buf);
			goto done;
		}
		rc = PMBOT_ERROR;
		data = json_object_get(resp.json, "data");
		p = json_object_get(json_object_get(data, org ? "organization" : "user"), "projectV2");
		if (!json_is_object(p)) {
			rc = 0;
			goto done;
		}
		if (!fields) {
			if (project_fields(&fields, names, json_object_get(json_object_get(p, "fields"),
				    "nodes")) < 0 ||
			    !(project = json_pack("{s:s, s:I, s:O}", "owner", owner, "number",
				      (json_int_t)number, "node_id", json_object_get(p, "id"))))
				goto oom;
		}
		conn = json_object_get(p, "items");
		info = json_object_get(conn, "pageInfo");
		json_array_foreach(json_object_get(conn, "nodes"), i, n) {
			json_t *it;

			if (project_item(&it, n, names) < 0)
				goto oom;
			if (it && json_array_append_new(items, it) < 0)
				goto oom;
		}
		if (!json_is_true(json_object_get(info, "hasNextPage")))
			break;
		json_decref(cursor);
		cursor = json_incref(json_object_get(info, "endCursor"));
		if (!json_is_string(cursor)) {
			pmbot_buf_printf(err, "read: GitHub gave no cursor for the next project page");
			goto done;
		}
	}
	if (json_object_set(project, "fields", fields) < 0 ||
	    json_object_set(project, "items", items) < 0)
		goto oom;
	/* Remember what writes need: the board's id and each field id's type. */
	if (!(types = json_object()))
		goto oom;
	{
		const json_t *f;
		size_t i;

		json_array_foreach(fields, i, f)
			if (json_object_set(types, jstr(f, "id"), json_object_get(f, "type")) < 0)
				goto oom;
	}
	free(g->project_id);
	if (!(g->project_id = strdup(jstr(project, "node_id") ? jstr(project, "node_id") : "")))
		goto oom;
	json_decref(g->field_types);
	g->field_types = types;
	types = NULL;
	*out = project;
	project = NULL;
	rc = 0;
	goto done;
oom:
	pmbot_buf_printf(err, "read: out of memory");
	rc = PMBOT_ERROR;
done:
	pmbot_github_response_free(&resp);
	pmbot_buf_free(&why);
	json_decref(vars);
	json_decref(project);
	json_decref(items);
	json_decref(fields);
	json_decref(names);
	json_decref(cursor);
	json_decref(types);
	return rc;
}

static int gh_read_scoped(pmbot_state **out, pmbot_backend *b, const char *const *repos,
	size_t n_repos, const char *project_owner, long project_number,
	const pmbot_read_scope *scope, pmbot_buf *err)
{
	gh_backend *g = (gh_backend *)b;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text = PMBOT_BUF_INIT;
	json_t *doc = NULL, *repo_list = NULL, *project = NULL, *unreadable = NULL, *missed = NULL;
	json_t *extra = NULL, *unsupported = NULL;
	size_t i, k;
	int rc = PMBOT_ERROR;

	*out = NULL;
	if (!repos && n_repos) {
		pmbot_buf_printf(err, "read: the GitHub backend needs the repositories to read");
		return PMBOT_EINVALID;
	}
	if (!(repo_list = json_array()) || !(unreadable = json_array()) || !(missed = json_array()) ||
	    !(extra = json_object()) || !(unsupported = json_array()))
		goto oom;
	json_decref(g->read_types);
	g->read_types = NULL;
	for (i = 0; i < n_repos; i++) {
		/* GitHub folds repository case: read each repository once. */
		for (k = 0; k < i && strcasecmp(repos[k], repos[i]); k++)
			;
		if (k < i)
			continue;
		if ((rc = read_repo_scoped(repo_list, unreadable, missed, g, repos[i], scope, err)) < 0)
			goto done;
	}
	if (project_owner && (rc = read_project(&project, g, project_owner, project_number, err)) < 0)
		goto done;
	rc = PMBOT_ERROR;
	if (!(doc = json_pack("{s:s, s:O, s:O}", "schema_version", "state/v1", "repositories",
		      repo_list, "project", project ? project : json_null())))
		goto oom;
	/* The planner reads these (docs/state.md); each absent when there is nothing to say. */
	if ((json_array_size(unreadable) && json_object_set(extra, "unreadable", unreadable) < 0) ||
	    (json_array_size(missed) && json_object_set(extra, "narrow_missed", missed) < 0) ||
	    (g->no_sub_issues && json_array_append_new(unsupported, json_string("sub_issues")) < 0) ||
	    (g->no_dependencies && json_array_append_new(unsupported, json_string("dependencies")) < 0) ||
	    (json_array_size(unsupported) && json_object_set(extra, "unsupported", unsupported) < 0) ||
	    (json_object_size(g->read_types) && json_object_set(extra, "issue_types", g->read_types) < 0))
		goto oom;
	if (json_object_size(extra) && json_object_set(doc, "extra", extra) < 0)
		goto oom;
	/*
	 * Going through the snapshot parser gives the planner exactly what the
	 * file backend gives it: sorted, deduplicated and validated the same way.
	 */
	if (pmbot_json_canonical(&text, doc) < 0)
		goto oom;
	rc = pmbot_state_parse_buf(out, "github", &text, &diags);
	if (rc == PMBOT_EINVALID) {
		pmbot_buf_printf(err, "read: GitHub's answers do not form a valid state:");
		for (i = 0; i < diags.count && i < 5; i++)
			pmbot_buf_printf(err, " %s %s: %s;", diags.items[i].code, diags.items[i].path,
				diags.items[i].message);
	} else if (rc < 0) {
		goto oom;
	}
	goto done;
oom:
	pmbot_buf_printf(err, "read: out of memory");
	rc = PMBOT_ERROR;
done:
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&text);
	json_decref(doc);
	json_decref(repo_list);
	json_decref(unreadable);
	json_decref(missed);
	json_decref(unsupported);
	json_decref(extra);
	json_decref(project);
	return rc;
}

static int gh_read(pmbot_state **out, pmbot_backend *b, const char *const *repos,
	size_t n_repos, const char *project_owner, long project_number, pmbot_buf *err)
{
	return gh_read_scoped(out, b, repos, n_repos, project_owner, project_number, NULL, err);
}

/* ---- perform ----------------------------------------------------------- */

typedef struct {
	gh_backend *g;
	const char *op;
	const json_t *args;
	json_t *result;
	pmbot_buf *err;
	pmbot_buf path;
	pmbot_github_response resp;
	pmbot_buf why;                /* the client's message of the last request */
} op_ctx;

/* A request's message buffer, emptied so it holds that request's message only. */
#define WHY(o) FRESH(&(o)->why)

/* gh_fail() for an operation's request, with the message that request left. */
static int op_fail(op_ctx *o, const char *what, int rc, const pmbot_github_response *resp)
{
	return gh_fail(o->g, o->err, o->op, what, rc, resp, o->why.buf);
}

static int set_path(op_ctx *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int set_path(op_ctx *o, const char *fmt, ...)
{
	va_list ap;
	int r;

	pmbot_buf_clear(&o->path);
	va_start(ap, fmt);
	r = pmbot_buf_vprintf(&o->path, fmt, ap);
	va_end(ap);
	return r < 0 ? OOM(o->err, o->op) : 0;
}

static int rest(op_ctx *o, const char *what, const char *method, const json_t *body,
	unsigned flags)
{
	int rc = pmbot_github_rest_flags(&o->resp, o->g->client, method, o->path.buf, body, flags,
		WHY(o));

	return rc < 0 ? op_fail(o, what, rc, &o->resp) : 0;
}

/* ---- create: one createIssue with labels, parent, board and type -------- */

/* `s` ASCII-folded into `out` (cleared first): GitHub compares repository, label and type names so. */
static int fold_into(pmbot_buf *out, const char *s)
{
	pmbot_buf_clear(out);
	for (; *s; s++)
		if (pmbot_buf_putc(out, (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s)) < 0)
			return -1;
	return pmbot_buf_puts(out, "");
}

/*
 * The cached facts of `repo` (borrowed from g->repo_meta), read on first use
 * or again with `refresh`: its node id, every label (ceil(labels/100)
 * requests) and its issue types (none for a user's repository).
 */
static int repo_meta(const json_t **out, op_ctx *o, const char *repo, int refresh)
{
	gh_backend *g = o->g;
	const char *slash = strchr(repo, '/');
	pmbot_buf key = PMBOT_BUF_INIT, name = PMBOT_BUF_INIT;
	json_t *meta = NULL, *labels = NULL, *types = NULL, *vars = NULL, *cursor = NULL;
	char *owner = NULL;
	const char *doc;
	int rc = PMBOT_ERROR;

	*out = NULL;
	if (fold_into(&key, repo) < 0 || (!g->repo_meta && !(g->repo_meta = json_object())))
		goto oom;
	if (!refresh && (*out = json_object_get(g->repo_meta, key.buf))) {
		rc = 0;
		goto done;
	}
	if (!slash || !(owner = strndup(repo, (size_t)(slash - repo))) || !(labels = json_object()))
		goto oom;
	for (;;) {
		const json_t *r, *conn, *l, *info;
		size_t i;
		int r2;

		json_decref(vars);
		if (!(vars = json_pack("{s:s, s:s, s:O}", "owner", owner, "name", slash + 1,
			      "after", cursor ? cursor : json_null())) ||
		    (!g->no_issue_types && json_object_set_new(vars, "types", json_boolean(!cursor)) < 0) ||
		    !(doc = gh_doc(g, &g->meta_doc, "repo_meta")))
			goto oom;
		r2 = pmbot_github_graphql_ex(&o->resp, g->client, doc, vars, 0, WHY(o));
		r = json_object_get(json_object_get(o->resp.json, "data"), "repository");
		/*
		 * A server whose schema has no issue types (GitHub Enterprise Server
		 * before them) refuses the whole document, whatever @include says:
		 * note that (the issues pages drop them too) and ask without them.
		 */
		if (r2 == PMBOT_GITHUB_EGRAPHQL && !cursor && !g->no_issue_types && !jstr(r, "id")) {
			g->no_issue_types = 1;
			pmbot_buf_clear(&g->issues_doc);
			pmbot_buf_clear(&g->create_doc);
			pmbot_buf_clear(&g->meta_doc);
			continue;
		}
		/* Issue types the token may not see are simply not used: the labels still say the kind. */
		if (r2 == PMBOT_GITHUB_EGRAPHQL && jstr(r, "id") &&
		    json_is_array(json_object_get(json_object_get(r, "labels"), "nodes")))
			r2 = 0;
		if (r2 < 0) {
			rc = op_fail(o, "reading the repository's labels", r2, &o->resp);
			goto done;
		}
		conn = json_object_get(r, "labels");
		if (!meta && !(meta = json_pack("{s:O, s:O}", "id", json_object_get(r, "id"),
			      "labels", labels))) {
			pmbot_buf_printf(o->err, "%s: GitHub named no repository %s", o->op, repo);
			rc = PMBOT_ERROR;
			goto done;
		}
		json_array_foreach(json_object_get(conn, "nodes"), i, l)
			if (jstr(l, "id") && jstr(l, "name") && (fold_into(&name, jstr(l, "name")) < 0 ||
			    json_object_set(labels, name.buf, json_object_get(l, "id")) < 0))
				goto oom;
		if (!cursor && json_is_array(json_object_get(json_object_get(r, "issueTypes"), "nodes"))) {
			if (!(types = json_object()))
				goto oom;
			json_array_foreach(json_object_get(json_object_get(r, "issueTypes"), "nodes"), i, l)
				if (jstr(l, "id") && jstr(l, "name") &&
				    (fold_into(&name, jstr(l, "name")) < 0 ||
				     json_object_set(types, name.buf, json_object_get(l, "id")) < 0))
					goto oom;
		}
		info = json_object_get(conn, "pageInfo");
		if (!json_is_true(json_object_get(info, "hasNextPage")))
			break;
		json_decref(cursor);
		if (!json_is_string(cursor = json_incref(json_object_get(info, "endCursor")))) {
			pmbot_buf_printf(o->err, "%s: GitHub gave no cursor for the next page of labels", o->op);
			goto done;
		}
	}
	if (json_object_set_new(meta, "types", types ? types : json_object()) < 0) {
		types = NULL;
		goto oom;
	}
	types = NULL;
	if (json_object_set(g->repo_meta, key.buf, meta) < 0)
		goto oom;
	*out = meta;
	rc = 0;
	goto done;
oom:
	rc = OOM(o->err, o->op);
done:
	json_decref(meta); /* g->repo_meta holds it on success */
	json_decref(labels);
	json_decref(types);
	json_decref(vars);
	json_decref(cursor);
	free(owner);
	pmbot_buf_free(&key);
	pmbot_buf_free(&name);
	return rc;
}

/*
 * The node ids of `labels` in `repo` (a new array). A label the repository
 * lacks is created first (REST, once per label and backend, not per issue);
 * one that appeared meanwhile (422) is found by reading the labels again.
 */
static int label_ids(json_t **out, op_ctx *o, const char *repo, const json_t *labels)
{
	const json_t *meta, *l;
	pmbot_buf name = PMBOT_BUF_INIT, why = PMBOT_BUF_INIT;
	json_t *ids = json_array(), *req = NULL;
	size_t i;
	int rc, reread = 0, refused = 0;

	*out = NULL;
	if (!ids)
		return OOM(o->err, o->op);
	if ((rc = repo_meta(&meta, o, repo, 0)) < 0)
		goto done;
	json_array_foreach(labels, i, l) {
		const json_t *id;

		if (!json_is_string(l) || fold_into(&name, json_string_value(l)) < 0) {
			rc = json_is_string(l) ? OOM(o->err, o->op) : PMBOT_EINVALID;
			if (rc == PMBOT_EINVALID)
				pmbot_buf_printf(o->err, "%s: every label must be a string", o->op);
			goto done;
		}
		id = json_object_get(json_object_get(meta, "labels"), name.buf);
		if (!id) {
			int r;

			if ((rc = set_path(o, "/repos/%s/labels", repo)) < 0)
				goto done;
			json_decref(req);
			/* ededed: the colour GitHub gives a label an issue creates. */
			if (!(req = json_pack("{s:O, s:s}", "name", l, "color", "ededed"))) {
				rc = OOM(o->err, o->op);
				goto done;
			}
			r = pmbot_github_rest_flags(&o->resp, o->g->client, "POST", o->path.buf, req, 0,
				WHY(o));
			if (r == 0 && jstr(o->resp.json, "node_id")) {
				if (json_object_set(json_object_get(meta, "labels"), name.buf,
					    json_object_get(o->resp.json, "node_id")) < 0) {
					rc = OOM(o->err, o->op);
					goto done;
				}
			} else if (!(r == PMBOT_GITHUB_EHTTP && o->resp.status == 422 && !reread) &&
				   !(r == PMBOT_GITHUB_EUNKNOWN_OUTCOME && !reread)) {
				rc = op_fail(o, "creating a label", r, &o->resp);
				goto done;
			} else {
				/* It exists already, or may: the labels as GitHub has them decide. */
				pmbot_buf_clear(&why);
				if (pmbot_buf_puts(&why, o->why.buf) < 0) {
					rc = OOM(o->err, o->op);
					goto done;
				}
				refused = r == PMBOT_GITHUB_EHTTP;
				reread = 1;
				if ((rc = repo_meta(&meta, o, repo, 1)) < 0)
					goto done;
			}
			if (!(id = json_object_get(json_object_get(meta, "labels"), name.buf))) {
				pmbot_buf_printf(o->err, "%s: creating a label failed: %s", o->op,
					why.len ? why.buf : "GitHub does not list it afterwards");
				rc = refused ? PMBOT_EINVALID : PMBOT_ERROR;
				goto done;
			}
		}
		if (json_array_append(ids, (json_t *)id) < 0) {
			rc = OOM(o->err, o->op);
			goto done;
		}
	}
	*out = ids;
	ids = NULL;
	rc = 0;
done:
	json_decref(ids);
	json_decref(req);
	pmbot_buf_free(&name);
	pmbot_buf_free(&why);
	return rc;
}

/* The project item of `issue` (a createIssue answer) on board `project`, or NULL. */
static const char *item_on(const json_t *issue, const char *project)
{
	const json_t *n;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(issue, "projectItems"), "nodes"), i, n)
		if (project && jstr(n, "id") && jstr(json_object_get(n, "project"), "id") &&
		    !strcmp(jstr(json_object_get(n, "project"), "id"), project))
			return jstr(n, "id");
	return NULL;
}

static int op_create_issue(op_ctx *o)
{
	const char *repo, *title, *type_id = NULL, *doc;
	const char *parent = jstr(o->args, "parent_node_id"), *project = jstr(o->args, "project_node_id");
	const char *type = jstr(o->args, "issue_type");
	const json_t *labels = json_object_get(o->args, "labels"), *body = json_object_get(o->args, "body");
	const json_t *meta, *issue;
	pmbot_buf folded = PMBOT_BUF_INIT;
	json_t *ids = NULL, *input = NULL, *vars = NULL;
	int rc, r, fused = 1;

	if ((rc = arg_str(&repo, o->args, "repo", o->op, o->err)) < 0 ||
	    (rc = arg_str(&title, o->args, "title", o->op, o->err)) < 0)
		return rc;
	if (!json_is_array(labels) || !json_is_string(body)) {
		pmbot_buf_printf(o->err, "%s: `body` must be a string and `labels` an array", o->op);
		return PMBOT_EINVALID;
	}
	/* Without sub-issues CreateIssueInput has no parentIssueId either. */
	if (o->g->no_sub_issues)
		parent = NULL;
	if ((rc = label_ids(&ids, o, repo, labels)) < 0 || (rc = repo_meta(&meta, o, repo, 0)) < 0)
		goto done;
	/* A kind the repository has no type for sets none: the type label still says it. */
	if (type && *type) {
		if (fold_into(&folded, type) < 0) {
			rc = OOM(o->err, o->op);
			goto done;
		}
		type_id = jstr(json_object_get(meta, "types"), folded.buf);
	}
again:
	json_decref(input);
	json_decref(vars);
	vars = NULL;
	if (!(input = json_pack("{s:O, s:s, s:O, s:O}", "repositoryId", json_object_get(meta, "id"),
		      "title", title, "body", body, "labelIds", ids)) ||
	    (fused && parent && json_object_set_new(input, "parentIssueId", json_string(parent)) < 0) ||
	    (fused && project && json_object_set_new(input, "projectV2Ids",
		    json_pack("[s]", project)) < 0) ||
	    (fused && type_id && json_object_set_new(input, "issueTypeId", json_string(type_id)) < 0) ||
	    !(vars = json_pack("{s:O}", "input", input))) {
		rc = OOM(o->err, o->op);
		goto done;
	}
	if (!(doc = gh_doc(o->g, &o->g->create_doc, "create_issue"))) {
		rc = OOM(o->err, o->op);
		goto done;
	}
	/* Not idempotent: a repeat could open a second issue, so the client never retries it. */
	r = pmbot_github_graphql_ex(&o->resp, o->g->client, doc, vars, 0, WHY(o));
	issue = json_object_get(json_object_get(json_object_get(o->resp.json, "data"), "createIssue"),
		"issue");
	/* An answer that names the new issue means it exists, whatever else it says. */
	if (r == PMBOT_GITHUB_EGRAPHQL && jstr(issue, "id"))
		r = 0;
	/*
	 * GitHub refused the request (a typed error and no issue, or no "data"
	 * at all: a document that failed validation never ran; it created
	 * nothing). When it carried a parent, a board or a type, those may be
	 * what it refused (100 sub-issues, a board the token cannot write, a
	 * disabled type): create the issue alone; the executor then sends the
	 * parent and the board as their own changesets.
	 */
	if (r == PMBOT_GITHUB_EGRAPHQL && fused && (parent || project || type_id) &&
	    (!json_object_get(o->resp.json, "data") ||
	     (o->resp.error_type && strcmp(o->resp.error_type, "RATE_LIMITED") &&
	      strcmp(o->resp.error_type, "INTERNAL")))) {
		fused = 0;
		goto again;
	}
	if (r < 0) {
		rc = op_fail(o, "creating the issue", r, &o->resp);
		goto done;
	}
	if (!json_is_integer(json_object_get(issue, "number")) ||
	    !json_is_integer(json_object_get(issue, "databaseId")) || !jstr(issue, "id")) {
		pmbot_buf_printf(o->err, "%s: GitHub's answer lacks the new issue's number or ids; "
			"re-read the state to learn whether it was created", o->op);
		rc = PMBOT_ERROR;
		goto done;
	}
	rc = PMBOT_ERROR;
	if (json_object_set(o->result, "number", json_object_get(issue, "number")) < 0 ||
	    json_object_set(o->result, "database_id", json_object_get(issue, "databaseId")) < 0 ||
	    json_object_set(o->result, "node_id", json_object_get(issue, "id")) < 0)
		goto done;
	/* What landed with it is read off the answer, never assumed from the request. */
	if (fused && parent && jstr(json_object_get(issue, "parent"), "id") &&
	    !strcmp(jstr(json_object_get(issue, "parent"), "id"), parent) &&
	    json_object_set_new(o->result, "parent_node_id", json_string(parent)) < 0)
		goto done;
	if (fused && item_on(issue, project) &&
	    json_object_set_new(o->result, "item_id", json_string(item_on(issue, project))) < 0)
		goto done;
	if (fused && type_id && json_object_set_new(o->result, "issue_type_id", json_string(type_id)) < 0)
		goto done;
	rc = 0;
done:
	if (rc == PMBOT_ERROR && !o->err->len)
		rc = OOM(o->err, o->op);
	json_decref(ids);
	json_decref(input);
	json_decref(vars);
	pmbot_buf_free(&folded);
	return rc;
}

static int update_field(op_ctx *o, const char *key)
{
	const char *repo;
	const json_t *val = json_object_get(o->args, key);
	long long number;
	json_t *req;
	int rc;

	if ((rc = arg_str(&repo, o->args, "repo", o->op, o->err)) < 0 ||
	    (rc = arg_int(&number, o->args, "number", o->op, o->err)) < 0)
		return rc;
	if (!json_is_string(val)) {
		pmbot_buf_printf(o->err, "%s: argument `%s` must be a string", o->op, key);
		return PMBOT_EINVALID;
	}
	if ((rc = set_path(o, "/repos/%s/issues/%lld", repo, number)) < 0)
		return rc;
	if (!(req = json_pack("{s:O}", key, val)))
		return OOM(o->err, o->op);
	rc = rest(o, "updating the issue", "PATCH", req, PMBOT_GITHUB_IDEMPOTENT);
	json_decref(req);
	return rc;
}

static int op_update_issue_title(op_ctx *o)
{
	return update_field(o, "title");
}

static int op_update_issue_body(op_ctx *o)
{
	return update_field(o, "body");
}

static int op_labels(op_ctx *o, int add)
{
	const json_t *labels = json_object_get(o->args, "labels"), *l;
	const char *repo;
	long long number;
	pmbot_buf seg = PMBOT_BUF_INIT;
	json_t *req;
	size_t i;
	int rc;

	if ((rc = arg_str(&repo, o->args, "repo", o->op, o->err)) < 0 ||
	    (rc = arg_int(&number, o->args, "number", o->op, o->err)) < 0)
		return rc;
	if (!json_is_array(labels)) {
		pmbot_buf_printf(o->err, "%s: argument `labels` must be an array", o->op);
		return PMBOT_EINVALID;
	}
	if (add) {
		if (!json_array_size(labels))
			return 0;
		if ((rc = set_path(o, "/repos/%s/issues/%lld/labels", repo, number)) < 0)
			return rc;
		if (!(req = json_pack("{s:O}", "labels", labels)))
			return OOM(o->err, o->op);
		rc = rest(o, "adding labels", "POST", req, PMBOT_GITHUB_IDEMPOTENT);
		json_decref(req);
		return rc;
	}
	json_array_foreach(labels, i, l) {
		int r;

		pmbot_buf_clear(&seg);
		if (!json_is_string(l) || pmbot_github_path_escape(&seg, json_string_value(l)) < 0 ||
		    (rc = set_path(o, "/repos/%s/issues/%lld/labels/%s", repo, number, seg.buf)) < 0) {
			rc = json_is_string(l) ? OOM(o->err, o->op) : PMBOT_EINVALID;
			if (rc == PMBOT_EINVALID)
				pmbot_buf_printf(o->err, "%s: every label must be a string", o->op);
			break;
		}
		r = pmbot_github_rest_flags(&o->resp, o->g->client, "DELETE", o->path.buf, NULL,
			PMBOT_GITHUB_IDEMPOTENT, WHY(o));
		/* 404 "Label does not exist": already removed, e.g. by an earlier attempt. */
		if (r == PMBOT_GITHUB_EHTTP && o->resp.status == 404)
			r = 0;
		if (r < 0) {
			rc = op_fail(o, "removing a label", r, &o->resp);
			break;
		}
	}
	pmbot_buf_free(&seg);
	return rc;
}

static int op_add_labels(op_ctx *o)
{
	return op_labels(o, 1);
}

static int op_remove_labels(op_ctx *o)
{
	return op_labels(o, 0);
}

/* Is `issue` (a REST issue) `repo`#`number`? */
static int is_issue(const json_t *issue, const char *repo, long long number)
{
	const char *r = repo_of_rest_issue(issue);

	return r && !strcasecmp(r, repo) &&
	       json_integer_value(json_object_get(issue, "number")) == number;
}

static int op_set_parent(op_ctx *o)
{
	const char *repo, *parent_repo;
	long long number, db_id, parent_number;
	const json_t *replace = json_object_get(o->args, "replace");
	pmbot_buf why = PMBOT_BUF_INIT;
	json_t *req;
	int rc, r;

	if ((rc = arg_str(&repo, o->args, "repo", o->op, o->err)) < 0 ||
	    (rc = arg_int(&number, o->args, "number", o->op, o->err)) < 0 ||
	    (rc = arg_int(&db_id, o->args, "database_id", o->op, o->err)) < 0 ||
	    (rc = arg_str(&parent_repo, o->args, "parent_repo", o->op, o->err)) < 0 ||
	    (rc = arg_int(&parent_number, o->args, "parent_number", o->op, o->err)) < 0)
		return rc;
	if (!json_is_boolean(replace)) {
		pmbot_buf_printf(o->err, "%s: argument `replace` must be a boolean", o->op);
		return PMBOT_EINVALID;
	}
	if ((rc = set_path(o, "/repos/%s/issues/%lld/sub_issues", parent_repo, parent_number)) < 0)
		return rc;
	/* sub_issue_id is the child's database id, never its number. */
	if (!(req = json_pack("{s:I, s:O}", "sub_issue_id", (json_int_t)db_id, "replace_parent",
		      replace)))
		return OOM(o->err, o->op);
	r = pmbot_github_rest_flags(&o->resp, o->g->client, "POST", o->path.buf, req,
		PMBOT_GITHUB_IDEMPOTENT, WHY(o));
	json_decref(req);
	/* A 422 may mean an earlier attempt already landed: the read-back decides. */
	if (r < 0 && !(r == PMBOT_GITHUB_EHTTP && o->resp.status == 422))
		return op_fail(o, "adding the sub-issue", r, &o->resp);
	/* The read-back replaces the client's last error: keep the refusal's reason. */
	if (r < 0 && pmbot_buf_puts(&why, o->why.buf) < 0)
		return OOM(o->err, o->op);
	if ((rc = set_path(o, "/repos/%s/issues/%lld/parent", repo, number)) < 0)
		goto done;
	rc = pmbot_github_rest_flags(&o->resp, o->g->client, "GET", o->path.buf, NULL,
		PMBOT_GITHUB_NO_CACHE, WHY(o));
	if (rc == 0 && is_issue(o->resp.json, parent_repo, parent_number)) {
		rc = 0;
		goto done;
	}
	if (r < 0) {
		pmbot_buf_printf(o->err, "%s: GitHub refused to make %s#%lld a sub-issue of %s#%lld: %s",
			o->op, repo, number, parent_repo, parent_number, why.buf);
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (rc < 0 && !(rc == PMBOT_GITHUB_EHTTP && o->resp.status == 404)) {
		rc = op_fail(o, "reading the parent back", rc, &o->resp);
		goto done;
	}
	pmbot_buf_printf(o->err, "%s: the parent of %s#%lld did not land: GitHub shows %s after "
		"it accepted %s#%lld", o->op, repo, number, rc < 0 ? "no parent" : "another parent",
		parent_repo, parent_number);
	rc = PMBOT_ERROR;
done:
	pmbot_buf_free(&why);
	return rc;
}

/* Is blocker `db_id` among the blocked_by edges of the issue at o->path's base? */
static int has_blocker(int *found, op_ctx *o, const char *repo, long long number, long long db_id)
{
	json_t *list = NULL, *it;
	size_t i;
	int rc;

	*found = 0;
	if ((rc = set_path(o, "/repos/%s/issues/%lld/dependencies/blocked_by", repo, number)) < 0)
		return rc;
	rc = pmbot_github_rest_paginate(&list, o->g->client, o->path.buf, PMBOT_GITHUB_NO_CACHE,
		WHY(o));
	if (rc < 0)
		return op_fail(o, "reading the dependencies back", rc, NULL);
	json_array_foreach(list, i, it)
		if (json_integer_value(json_object_get(it, "id")) == db_id)
			*found = 1;
	json_decref(list);
	return 0;
}

static int op_dependency(op_ctx *o, int add)
{
	const char *repo, *blocker_repo;
	long long number, blocker_number, db_id;
	json_t *req = NULL;
	int rc, r, found;

	if ((rc = arg_str(&repo, o->args, "repo", o->op, o->err)) < 0 ||
	    (rc = arg_int(&number, o->args, "number", o->op, o->err)) < 0 ||
	    (rc = arg_str(&blocker_repo, o->args, "blocker_repo", o->op, o->err)) < 0 ||
	    (rc = arg_int(&blocker_number, o->args, "blocker_number", o->op, o->err)) < 0 ||
	    (rc = arg_int(&db_id, o->args, "blocker_database_id", o->op, o->err)) < 0)
		return rc;
	if (add) {
		if ((rc = set_path(o, "/repos/%s/issues/%lld/dependencies/blocked_by", repo, number)) < 0)
			return rc;
		/* issue_id is the blocker's database id, never its number. */
		if (!(req = json_pack("{s:I}", "issue_id", (json_int_t)db_id)))
			return OOM(o->err, o->op);
		r = pmbot_github_rest_flags(&o->resp, o->g->client, "POST", o->path.buf, req,
			PMBOT_GITHUB_IDEMPOTENT, WHY(o));
		json_decref(req);
	} else {
		if ((rc = set_path(o, "/repos/%s/issues/%lld/dependencies/blocked_by/%lld", repo, number,
			     db_id)) < 0)
			return rc;
		r = pmbot_github_rest_flags(&o->resp, o->g->client, "DELETE", o->path.buf, NULL,
			PMBOT_GITHUB_IDEMPOTENT, WHY(o));
	}
	/* 422 on add / 404 on remove may mean an earlier attempt landed: read back. */
	if (r < 0 && !(r == PMBOT_GITHUB_EHTTP && o->resp.status == (add ? 422 : 404)))
		return op_fail(o, add ? "adding the dependency" :
			"removing the dependency", r, &o->resp);
	{
		pmbot_buf why = PMBOT_BUF_INIT;

		if (r < 0 && pmbot_buf_puts(&why, o->why.buf) < 0)
			return OOM(o->err, o->op);
		rc = has_blocker(&found, o, repo, number, db_id);
		if (rc == 0 && found != add) {
			if (r < 0) {
				pmbot_buf_printf(o->err, "%s: GitHub refused: %s", o->op, why.buf);
				rc = PMBOT_EINVALID;
			} else {
				pmbot_buf_printf(o->err, "%s: %s#%lld is %s blocked by %s#%lld after GitHub "
					"accepted the change: it did not land", o->op, repo, number,
					add ? "not" : "still", blocker_repo, blocker_number);
				rc = PMBOT_ERROR;
			}
		}
		pmbot_buf_free(&why);
	}
	return rc;
}

static int op_add_dependency(op_ctx *o)
{
	return op_dependency(o, 1);
}

static int op_remove_dependency(op_ctx *o)
{
	return op_dependency(o, 0);
}

static int need_project(op_ctx *o)
{
	if (o->g->project_id && *o->g->project_id)
		return 0;
	pmbot_buf_printf(o->err, "%s: no project was read: read the state with the project first",
		o->op);
	return PMBOT_EINVALID;
}

static int graphql(op_ctx *o, const char *what, const char *doc, const json_t *vars)
{
	int rc = pmbot_github_graphql_ex(&o->resp, o->g->client, pmbot_gql(doc), vars,
		PMBOT_GITHUB_IDEMPOTENT, WHY(o));

	return rc < 0 ? op_fail(o, what, rc, &o->resp) : 0;
}

static int op_add_to_project(op_ctx *o)
{
	const char *node_id, *item;
	json_t *vars;
	int rc;

	if ((rc = arg_str(&node_id, o->args, "node_id", o->op, o->err)) < 0 ||
	    (rc = need_project(o)) < 0)
		return rc;
	if (!(vars = json_pack("{s:s, s:s}", "project", o->g->project_id, "content", node_id)))
		return OOM(o->err, o->op);
	rc = pmbot_github_graphql_ex(&o->resp, o->g->client, pmbot_gql("add_project_item"), vars,
		PMBOT_GITHUB_IDEMPOTENT, WHY(o));
	json_decref(vars);
	item = jstr(json_object_get(json_object_get(json_object_get(o->resp.json, "data"),
			    "addProjectV2ItemById"), "item"), "id");
	/*
	 * GitHub answers an item that is already on the board with that item;
	 * an answer that carries errors but still names the item means the
	 * same. Decided by the data, never by the error's wording.
	 */
	if (rc == PMBOT_GITHUB_EGRAPHQL && item)
		rc = 0;
	if (rc < 0)
		return op_fail(o, "adding the issue to the project", rc, &o->resp);
	if (!item) {
		pmbot_buf_printf(o->err, "%s: GitHub named no project item; re-read the state", o->op);
		return PMBOT_ERROR;
	}
	if (json_object_set_new(o->result, "item_id", json_string(item)) < 0)
		return OOM(o->err, o->op);
	return 0;
}

/*
 * Check set_project_field's args and pick the value kind GitHub takes for
 * the field's type: `*kind` new, or NULL when the value is null (clear).
 */
static int field_input(const char **item, const char **field_id, json_t **kind, op_ctx *o)
{
	const json_t *value = json_object_get(o->args, "value");
	const char *field, *option = jstr(o->args, "option_id"), *type;
	int rc;

	*kind = NULL;
	if ((rc = arg_str(item, o->args, "item_id", o->op, o->err)) < 0 ||
	    (rc = arg_str(&field, o->args, "field", o->op, o->err)) < 0 ||
	    (rc = arg_str(field_id, o->args, "field_id", o->op, o->err)) < 0 ||
	    (rc = need_project(o)) < 0)
		return rc;
	if (!value || json_is_null(value))
		return 0;
	type = jstr(o->g->field_types, *field_id);
	/* GitHub takes one value kind per field type. */
	if (option)
		*kind = json_pack("{s:s}", "singleSelectOptionId", option);
	else if (type && !strcmp(type, "number") && json_is_number(value))
		*kind = json_pack("{s:O}", "number", value);
	else if (type && !strcmp(type, "date") && json_is_string(value))
		*kind = json_pack("{s:O}", "date", value);
	else if (type && !strcmp(type, "text") && json_is_string(value))
		*kind = json_pack("{s:O}", "text", value);
	else {
		pmbot_buf_printf(o->err, "%s: the value does not fit field '%s' (%s)", o->op, field,
			type ? type : "not a field of the project read");
		return PMBOT_EINVALID;
	}
	return *kind ? 0 : OOM(o->err, o->op);
}

static int op_set_project_field(op_ctx *o)
{
	const char *item, *field_id;
	json_t *vars = NULL, *kind = NULL;
	int rc;

	if ((rc = field_input(&item, &field_id, &kind, o)) < 0)
		return rc;
	if (kind)
		vars = json_pack("{s:s, s:s, s:s, s:o}", "project", o->g->project_id, "item", item,
			"field", field_id, "value", kind);
	else
		vars = json_pack("{s:s, s:s, s:s, s:b}", "project", o->g->project_id, "item", item,
			"field", field_id, "clear", 1);
	if (!vars)
		return OOM(o->err, o->op);
	rc = graphql(o, "setting the field", "set_project_field", vars);
	json_decref(vars);
	return rc;
}

/*
 * set_issue_type {repo, number, node_id, issue_type}: one
 * updateIssueIssueType with the id of the type named so (ASCII case
 * folded) among the repository's, which repo_meta reads once per backend.
 */
static int op_set_issue_type(op_ctx *o)
{
	const char *repo, *node_id, *name, *type_id;
	const json_t *meta;
	pmbot_buf folded = PMBOT_BUF_INIT;
	json_t *vars = NULL;
	int rc;

	if ((rc = arg_str(&repo, o->args, "repo", o->op, o->err)) < 0 ||
	    (rc = arg_str(&node_id, o->args, "node_id", o->op, o->err)) < 0 ||
	    (rc = arg_str(&name, o->args, "issue_type", o->op, o->err)) < 0 ||
	    (rc = repo_meta(&meta, o, repo, 0)) < 0)
		goto done;
	if (fold_into(&folded, name) < 0) {
		rc = OOM(o->err, o->op);
		goto done;
	}
	if (!(type_id = jstr(json_object_get(meta, "types"), folded.buf))) {
		pmbot_buf_printf(o->err, "%s: %s has no issue type `%s`", o->op, repo, name);
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (!(vars = json_pack("{s:s, s:s}", "issue", node_id, "type", type_id))) {
		rc = OOM(o->err, o->op);
		goto done;
	}
	rc = graphql(o, "setting the issue type", "set_issue_type", vars);
done:
	json_decref(vars);
	pmbot_buf_free(&folded);
	return rc;
}

/* ---- perform_batch: aliased field updates ------------------------------ */

/* The error of `answer` whose path[0] is `alias`, else one without a path (the whole document's). */
static const json_t *alias_error(const json_t *answer, const char *alias)
{
	const json_t *errors = json_object_get(answer, "errors"), *e, *whole = NULL;
	size_t i;

	json_array_foreach(errors, i, e) {
		const json_t *path = json_object_get(e, "path");
		const char *p0 = json_string_value(json_array_get(path, 0));

		if (p0 && !strcmp(p0, alias))
			return e;
		if (!whole && !json_array_size(path))
			whole = e;
	}
	return whole;
}

/* Settle alias `alias` of a GraphQL answer: what perform would have returned for it. */
static int settle_alias(json_t **result, const json_t *answer, const char *alias, const char *op,
	pmbot_buf *err)
{
	const json_t *v = json_object_get(json_object_get(answer, "data"), alias), *e;
	const char *type, *msg;

	/* Decided by the data first, as for add_to_project: an answer for the alias means it landed. */
	if (json_is_string(json_object_get(json_object_get(v, "projectV2Item"), "id"))) {
		if (!(*result = json_object()))
			return OOM(err, op);
		return PMBOT_OK;
	}
	if (!(e = alias_error(answer, alias))) {
		pmbot_buf_printf(err, "%s: GitHub's answer names no result for it; re-read the state",
			op);
		return PMBOT_ERROR;
	}
	type = jstr(e, "type");
	msg = jstr(e, "message");
	pmbot_buf_printf(err, "%s: setting the field failed: GitHub: %s (%s)", op,
		msg ? msg : "no message", type ? type : "no type");
	/* The same split as gh_fail: only a limit or GitHub's own failure may go away by itself. */
	return type && strcmp(type, "RATE_LIMITED") && strcmp(type, "INTERNAL") ? PMBOT_EINVALID :
		PMBOT_ERROR;
}

/* One request for entries idx[0..k) of a batch whose inputs are checked. */
static int field_request(gh_backend *g, const char *op, const json_t *const *args,
	json_t *const *kinds, const size_t *idx, size_t k, json_t **results, int *codes,
	pmbot_buf *errs)
{
	pmbot_buf doc = PMBOT_BUF_INIT, alias = PMBOT_BUF_INIT;
	pmbot_github_response resp = PMBOT_GITHUB_RESPONSE_INIT;
	pmbot_buf why = PMBOT_BUF_INIT;
	json_t *vars = json_pack("{s:s}", "project", g->project_id);
	size_t j;
	int rc = PMBOT_ERROR, r = 0;

	if (!vars)
		goto done;
	r |= pmbot_buf_puts(&doc, "mutation PmBotSetProjectFields($project: ID!");
	for (j = 0; j < k; j++) {
		r |= pmbot_buf_printf(&doc, ", $item%zu: ID!, $field%zu: ID!", j, j);
		if (kinds[idx[j]])
			r |= pmbot_buf_printf(&doc, ", $value%zu: ProjectV2FieldValue!", j);
	}
	r |= pmbot_buf_puts(&doc, ") {\n");
	for (j = 0; j < k; j++) {
		const json_t *a = args[idx[j]];
		char name[32];

		if (kinds[idx[j]])
			r |= pmbot_buf_printf(&doc, "  f%zu: updateProjectV2ItemFieldValue(input: "
				"{projectId: $project, itemId: $item%zu, fieldId: $field%zu, value: "
				"$value%zu}) {\n    projectV2Item {\n      id\n    }\n  }\n", j, j, j, j);
		else
			r |= pmbot_buf_printf(&doc, "  f%zu: clearProjectV2ItemFieldValue(input: "
				"{projectId: $project, itemId: $item%zu, fieldId: $field%zu}) {\n"
				"    projectV2Item {\n      id\n    }\n  }\n", j, j, j);
		snprintf(name, sizeof(name), "item%zu", j);
		r |= json_object_set_new(vars, name, json_string(jstr(a, "item_id")));
		snprintf(name, sizeof(name), "field%zu", j);
		r |= json_object_set_new(vars, name, json_string(jstr(a, "field_id")));
		snprintf(name, sizeof(name), "value%zu", j);
		if (kinds[idx[j]])
			r |= json_object_set(vars, name, kinds[idx[j]]);
	}
	r |= pmbot_buf_puts(&doc, "}\n");
	if (r)
		goto done;
	/* Field writes are repeat-safe, so the client may retry the whole request. */
	r = pmbot_github_graphql_ex(&resp, g->client, doc.buf, vars, PMBOT_GITHUB_IDEMPOTENT,
		FRESH(&why));
	for (j = 0; j < k; j++) {
		pmbot_buf *e = &errs[idx[j]];

		if (r < 0 && r != PMBOT_GITHUB_EGRAPHQL) {
			codes[idx[j]] = gh_fail(g, e, op, "setting the field", r, &resp, why.buf);
			continue;
		}
		pmbot_buf_clear(&alias);
		if (pmbot_buf_printf(&alias, "f%zu", j) < 0)
			goto done;
		codes[idx[j]] = settle_alias(&results[idx[j]], resp.json, alias.buf, op, e);
	}
	rc = PMBOT_OK;
done:
	if (rc != PMBOT_OK)
		for (j = 0; j < k; j++)
			if (codes[idx[j]] == PMBOT_ERROR && !errs[idx[j]].len)
				codes[idx[j]] = OOM(&errs[idx[j]], op);
	json_decref(vars);
	pmbot_github_response_free(&resp);
	pmbot_buf_free(&why);
	pmbot_buf_free(&doc);
	pmbot_buf_free(&alias);
	return rc;
}

/* ---- perform_batch: aliased dependency edges ---------------------------- */

static int gh_perform(json_t **result, pmbot_backend *b, const char *operation,
	const json_t *args, pmbot_buf *err);

/*
 * One request for entries idx[0..k) of add_dependency / remove_dependency:
 * aliases d0, d1, ... of addBlockedBy / removeBlockedBy (node ids). An
 * alias answered with its issue landed; one answered with an error goes
 * alone through perform, whose REST call and read-back decide it (an edge
 * that already existed, or was already gone, is then a success).
 */
static int dep_request(gh_backend *g, const char *op, const json_t *const *args,
	const size_t *idx, size_t k, json_t **results, int *codes, pmbot_buf *errs)
{
	const char *mutation = strcmp(op, "add_dependency") ? "removeBlockedBy" : "addBlockedBy";
	pmbot_buf doc = PMBOT_BUF_INIT;
	pmbot_github_response resp = PMBOT_GITHUB_RESPONSE_INIT;
	pmbot_buf why = PMBOT_BUF_INIT;
	json_t *vars = json_object();
	size_t j;
	int rc = PMBOT_ERROR, r = 0;

	if (!vars)
		goto done;
	r |= pmbot_buf_puts(&doc, "mutation PmBotDependencies(");
	for (j = 0; j < k; j++)
		r |= pmbot_buf_printf(&doc, "%s$i%zu: ID!, $b%zu: ID!", j ? ", " : "", j, j);
	r |= pmbot_buf_puts(&doc, ") {\n");
	for (j = 0; j < k; j++) {
		char name[32];

		r |= pmbot_buf_printf(&doc, "  d%zu: %s(input: {issueId: $i%zu, blockingIssueId: "
			"$b%zu}) {\n    issue {\n      id\n    }\n  }\n", j, mutation, j, j);
		snprintf(name, sizeof(name), "i%zu", j);
		r |= json_object_set_new(vars, name, json_string(jstr(args[idx[j]], "node_id")));
		snprintf(name, sizeof(name), "b%zu", j);
		r |= json_object_set_new(vars, name, json_string(jstr(args[idx[j]], "blocker_node_id")));
	}
	r |= pmbot_buf_puts(&doc, "}\n");
	if (r)
		goto done;
	/* Adding an edge twice, or removing one twice, leaves it the same: repeat-safe. */
	r = pmbot_github_graphql_ex(&resp, g->client, doc.buf, vars, PMBOT_GITHUB_IDEMPOTENT,
		FRESH(&why));
	for (j = 0; j < k; j++) {
		const json_t *v;
		char alias[32];

		if (r < 0 && r != PMBOT_GITHUB_EGRAPHQL) {
			codes[idx[j]] = gh_fail(g, &errs[idx[j]], op, "changing the dependency", r, &resp,
				why.buf);
			continue;
		}
		snprintf(alias, sizeof(alias), "d%zu", j);
		v = json_object_get(json_object_get(resp.json, "data"), alias);
		if (jstr(json_object_get(v, "issue"), "id")) {
			if (!(results[idx[j]] = json_object()))
				goto done;
			codes[idx[j]] = PMBOT_OK;
			continue;
		}
		codes[idx[j]] = gh_perform(&results[idx[j]], &g->base, op, args[idx[j]], &errs[idx[j]]);
	}
	rc = PMBOT_OK;
done:
	if (rc != PMBOT_OK)
		for (j = 0; j < k; j++)
			if (codes[idx[j]] == PMBOT_ERROR && !errs[idx[j]].len)
				codes[idx[j]] = OOM(&errs[idx[j]], op);
	json_decref(vars);
	pmbot_github_response_free(&resp);
	pmbot_buf_free(&why);
	pmbot_buf_free(&doc);
	return rc;
}

static int dep_batch(gh_backend *g, json_t **results, int *codes, const char *op,
	const json_t *const *args, size_t n, pmbot_buf *errs)
{
	size_t *idx = NULL, i, k = 0;
	int rc = PMBOT_ERROR;

	if (n && !(idx = calloc(n, sizeof(*idx)))) {
		for (i = 0; i < n; i++)
			codes[i] = OOM(&errs[i], op);
		return PMBOT_ERROR;
	}
	for (i = 0; i < n; i++) {
		const char *s;
		long long v;
		pmbot_buf scratch = PMBOT_BUF_INIT;
		int bad = !json_is_object(args[i]) ||
			arg_str(&s, args[i], "repo", op, &scratch) < 0 ||
			arg_int(&v, args[i], "number", op, &scratch) < 0 ||
			arg_str(&s, args[i], "node_id", op, &scratch) < 0 ||
			arg_str(&s, args[i], "blocker_node_id", op, &scratch) < 0;

		pmbot_buf_free(&scratch);
		/* Without both node ids (or with bad args) it goes alone: perform checks and says why. */
		if (bad) {
			codes[i] = gh_perform(&results[i], &g->base, op, args[i], &errs[i]);
			continue;
		}
		idx[k++] = i;
		if (k == PMBOT_GITHUB_FIELD_BATCH) {
			if (dep_request(g, op, args, idx, k, results, codes, errs) < 0)
				goto done;
			k = 0;
		}
	}
	if (k && dep_request(g, op, args, idx, k, results, codes, errs) < 0)
		goto done;
	rc = PMBOT_OK;
done:
	free(idx);
	return rc;
}

static int gh_perform_batch(json_t **results, int *codes, pmbot_backend *b,
	pmbot_operation op, const json_t *const *args, size_t n, pmbot_buf *errs)
{
	gh_backend *g = (gh_backend *)b;
	const char *operation = pmbot_operation_name(op);
	json_t **kinds = NULL;
	size_t *idx = NULL, i, k = 0;
	int rc = PMBOT_ERROR;

	if (op != PMBOT_OP_SET_PROJECT_FIELD && op != PMBOT_OP_ADD_DEPENDENCY &&
	    op != PMBOT_OP_REMOVE_DEPENDENCY)
		return PMBOT_EINVALID;
	for (i = 0; i < n; i++) {
		results[i] = NULL;
		codes[i] = PMBOT_ERROR;
	}
	if (op != PMBOT_OP_SET_PROJECT_FIELD)
		return dep_batch(g, results, codes, operation, args, n, errs);
	if (n && (!(kinds = calloc(n, sizeof(*kinds))) || !(idx = calloc(n, sizeof(*idx))))) {
		for (i = 0; i < n; i++)
			codes[i] = OOM(&errs[i], operation);
		goto done;
	}
	/* Arguments are checked up front, so a bad entry is refused unsent, as perform would. */
	for (i = 0; i < n; i++) {
		op_ctx o;
		const char *item, *field_id;
		int r;

		memset(&o, 0, sizeof(o));
		o.g = g;
		o.op = operation;
		o.args = args[i];
		o.err = &errs[i];
		pmbot_buf_init(&o.why, 0);
		if (!json_is_object(args[i])) {
			pmbot_buf_printf(&errs[i], "%s: the arguments must be an object", operation);
			codes[i] = PMBOT_EINVALID;
			continue;
		}
		if ((r = field_input(&item, &field_id, &kinds[i], &o)) < 0) {
			codes[i] = r;
			continue;
		}
		idx[k++] = i;
		if (k == PMBOT_GITHUB_FIELD_BATCH) {
			if (field_request(g, operation, args, kinds, idx, k, results, codes, errs) < 0)
				goto done;
			k = 0;
		}
	}
	if (k && field_request(g, operation, args, kinds, idx, k, results, codes, errs) < 0)
		goto done;
	rc = PMBOT_OK;
done:
	for (i = 0; kinds && i < n; i++)
		json_decref(kinds[i]);
	free(kinds);
	free(idx);
	return rc;
}

/* Each operation of the table in pmbot/operation.h, by its enum. */
static int (*const operations[PMBOT_OP_COUNT])(op_ctx *o) = {
	[PMBOT_OP_CREATE_ISSUE] = op_create_issue,
	[PMBOT_OP_UPDATE_ISSUE_TITLE] = op_update_issue_title,
	[PMBOT_OP_UPDATE_ISSUE_BODY] = op_update_issue_body,
	[PMBOT_OP_ADD_LABELS] = op_add_labels,
	[PMBOT_OP_REMOVE_LABELS] = op_remove_labels,
	[PMBOT_OP_SET_PARENT] = op_set_parent,
	[PMBOT_OP_ADD_DEPENDENCY] = op_add_dependency,
	[PMBOT_OP_REMOVE_DEPENDENCY] = op_remove_dependency,
	[PMBOT_OP_ADD_TO_PROJECT] = op_add_to_project,
	[PMBOT_OP_SET_PROJECT_FIELD] = op_set_project_field,
	[PMBOT_OP_SET_ISSUE_TYPE] = op_set_issue_type,
};

static int gh_perform_op(json_t **result, pmbot_backend *b, pmbot_operation op,
	const json_t *args, pmbot_buf *err)
{
	op_ctx o;
	int rc;

	*result = NULL;
	memset(&o, 0, sizeof(o));
	o.g = (gh_backend *)b;
	o.op = pmbot_operation_name(op) ? pmbot_operation_name(op) : "(unknown)";
	o.args = args;
	o.err = err;
	pmbot_buf_init(&o.path, 0);
	pmbot_buf_init(&o.why, 0);
	o.resp = (pmbot_github_response)PMBOT_GITHUB_RESPONSE_INIT;
	if (!pmbot_operation_name(op)) {
		pmbot_buf_printf(err, "%s: unknown operation", o.op);
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (!json_is_object(args)) {
		pmbot_buf_printf(err, "%s: the arguments must be an object", o.op);
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (!(o.result = json_object())) {
		rc = OOM(err, o.op);
		goto done;
	}
	if ((rc = operations[op](&o)) < 0)
		goto done;
	*result = o.result;
	o.result = NULL;
done:
	json_decref(o.result);
	pmbot_github_response_free(&o.resp);
	pmbot_buf_free(&o.path);
	pmbot_buf_free(&o.why);
	return rc;
}

/* By name: what a batch falls back to for one of its entries. */
static int gh_perform(json_t **result, pmbot_backend *b, const char *operation,
	const json_t *args, pmbot_buf *err)
{
	pmbot_operation op;

	if (!operation || pmbot_operation_parse(&op, operation) != PMBOT_OK) {
		*result = NULL;
		pmbot_buf_printf(err, "%s: unknown operation", operation ? operation : "(null)");
		return PMBOT_EINVALID;
	}
	return gh_perform_op(result, b, op, args, err);
}

static void gh_free(pmbot_backend *b)
{
	gh_backend *g = (gh_backend *)b;

	if (!g)
		return;
	free(g->self_login);
	free(g->project_id);
	json_decref(g->field_types);
	json_decref(g->repo_meta);
	json_decref(g->read_types);
	pmbot_buf_free(&g->issues_doc);
	pmbot_buf_free(&g->create_doc);
	pmbot_buf_free(&g->meta_doc);
	free(g);
}

int pmbot_github_backend_open(pmbot_backend **out, pmbot_github_client *client,
	const char *self_login, pmbot_buf *err)
{
	gh_backend *g;

	*out = NULL;
	if (!client) {
		pmbot_buf_puts(err, "github backend: no client");
		return PMBOT_EINVALID;
	}
	if (!(g = calloc(1, sizeof(*g))) ||
	    (self_login && *self_login && !(g->self_login = strdup(self_login)))) {
		free(g);
		pmbot_buf_puts(err, "github backend: out of memory");
		return PMBOT_ERROR;
	}
	g->base.name = "github";
	g->base.read = gh_read;
	g->base.read_scoped = gh_read_scoped;
	g->base.perform = gh_perform_op;
	g->base.perform_batch = gh_perform_batch;
	g->base.free = gh_free;
	g->base.flags = PMBOT_BACKEND_FUSES | PMBOT_BACKEND_BATCHES_EDGES;
	g->client = client;
	pmbot_buf_init(&g->issues_doc, PMBOT_BUF_DEFAULT_MAX);
	pmbot_buf_init(&g->create_doc, PMBOT_BUF_DEFAULT_MAX);
	pmbot_buf_init(&g->meta_doc, PMBOT_BUF_DEFAULT_MAX);
	*out = &g->base;
	return PMBOT_OK;
}
