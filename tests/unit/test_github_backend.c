#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers/fakehttp.h"
#include "helpers/tmpdir.h"
#include "pmbot/buf.h"
#include "pmbot/github.h"
#include "pmbot/json.h"
#include "pmbot/state.h"
#include "pmbot/net.h"
#include "pmbot/banned.h"

/*
 * The GitHub backend driven through a real pmbot_github_client against the
 * scripted loopback server: every request the backend sends is asserted
 * byte for byte, and what it makes of GitHub's answers. The client's clock
 * and sleep are fakes, so retries cost no time.
 */

#define TOKEN "ghp_B4ck3ndT0kenMustNeverLeak0123456789ab"
#define REV "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define MARKER(id) "<!-- pm-bot:id=" id " rev=" REV " -->"
#define API_REPOS "https://api.github.com/repos/"

typedef struct {
	fakehttp *srv;
	char api[128];
	char graphql[160];
	char cache[256];          /* "" unless a test asks for the ETag cache */
	pmbot_github_options opts;
	pmbot_github_client *c;
	pmbot_backend *b;
	pmbot_state *st;          /* the last read's state */
	json_t *result;           /* the last perform's result */
	pmbot_buf err;            /* the last call's error text */
	long long now_ms;
	size_t n_sleeps;
} fixture;

/* The operation named `name`; one past the table for a name that is none, which a backend refuses. */
static pmbot_operation op_of(const char *name)
{
	pmbot_operation op;

	return pmbot_operation_parse(&op, name) == PMBOT_OK ? op : (pmbot_operation)PMBOT_OP_COUNT;
}

static long long fake_now(void *payload)
{
	return ((fixture *)payload)->now_ms;
}

static void fake_sleep(void *payload, long long ms)
{
	fixture *fx = payload;

	fx->n_sleeps++;
	fx->now_ms += ms;
}

static int setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));

	if (!fx || fakehttp_start(&fx->srv) < 0)
		return -1;
	snprintf(fx->api, sizeof(fx->api), "%s", fakehttp_url(fx->srv));
	snprintf(fx->graphql, sizeof(fx->graphql), "%s/graphql", fakehttp_url(fx->srv));
	pmbot_github_options_init(&fx->opts);
	fx->opts.api_url = fx->api;
	fx->opts.graphql_url = fx->graphql;
	fx->opts.token = TOKEN;
	fx->opts.cache_dir = NULL;
	fx->opts.pace_ms = 0;
	fx->opts.max_retries = 1;
	fx->opts.now = fake_now;
	fx->opts.sleep = fake_sleep;
	fx->opts.clock_payload = fx;
	fx->now_ms = 1700000000000LL;
	pmbot_buf_init(&fx->err, 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	if (fx->b)
		fx->b->free(fx->b);
	pmbot_github_client_free(fx->c);
	pmbot_state_free(fx->st);
	json_decref(fx->result);
	fakehttp_stop(fx->srv);
	if (fx->cache[0])
		test_remove_tree(fx->cache);
	pmbot_buf_free(&fx->err);
	free(fx);
	return 0;
}

/* The backend over a client made from fx->opts as the test left them. */
static pmbot_backend *backend(fixture *fx)
{
	pmbot_buf err = PMBOT_BUF_INIT;

	if (fx->b)
		return fx->b;
	assert_int_equal(pmbot_github_client_new(&fx->c, &fx->opts, &err), 0);
	assert_int_equal(pmbot_github_backend_open(&fx->b, fx->c, "pm-bot[bot]", &err), 0);
	assert_string_equal(fx->b->name, "github");
	pmbot_buf_free(&err);
	return fx->b;
}

/* Give the client an ETag cache in a fresh directory (before backend()). */
static void use_cache(fixture *fx)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(fx->cache, sizeof(fx->cache), "%s/pmbot-test-ghbackend-XXXXXX",
		tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(fx->cache));
	fx->opts.cache_dir = fx->cache;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
}

static void assert_starts_with(const char *s, const char *prefix)
{
	if (strncmp(s, prefix, strlen(prefix)))
		fail_msg("\"%s\" does not start with \"%s\"", s, prefix);
}

static int do_read(fixture *fx, const char *const *repos, size_t n, const char *owner,
	long number)
{
	int rc;

	pmbot_state_free(fx->st);
	fx->st = (pmbot_state *)1;
	pmbot_buf_clear(&fx->err);
	rc = backend(fx)->read(&fx->st, fx->b, repos, n, owner, number, &fx->err);
	if (rc == 0) {
		assert_non_null(fx->st);
		assert_int_equal(fx->err.len, 0);
	} else {
		assert_null(fx->st);
		assert_true(fx->err.len > 0);
	}
	assert_null(strstr(fx->err.buf, TOKEN));
	return rc;
}

static int do_read1(fixture *fx, const char *repo)
{
	return do_read(fx, &repo, 1, NULL, 0);
}

/* Perform `op` with `args_json`; a failure must leave no result and say why. */
static int perform(fixture *fx, const char *op, const char *args_json)
{
	json_error_t jerr;
	json_t *args = json_loads(args_json, 0, &jerr);
	int rc;

	if (!args)
		fail_msg("bad test args %s: %s", args_json, jerr.text);
	json_decref(fx->result);
	fx->result = (json_t *)1;
	pmbot_buf_clear(&fx->err);
	rc = backend(fx)->perform(&fx->result, fx->b, op_of(op), args, &fx->err);
	json_decref(args);
	if (rc == 0) {
		assert_true(json_is_object(fx->result));
		assert_int_equal(fx->err.len, 0);
	} else {
		assert_null(fx->result);
		assert_starts_with(fx->err.buf, pmbot_operation_name(op_of(op)) ? op : "(unknown)");
	}
	assert_null(strstr(fx->err.buf, TOKEN));
	return rc;
}

static void push(fixture *fx, int status, const char *body)
{
	assert_int_equal(fakehttp_push_simple(fx->srv, status, NULL, body), 0);
}

static void push_h(fixture *fx, int status, const char *headers, const char *body)
{
	assert_int_equal(fakehttp_push_simple(fx->srv, status, headers, body), 0);
}

/* Push `doc` (consumed) as a 200 answer. */
static void push_json(fixture *fx, json_t *doc)
{
	char *text;

	assert_non_null(doc);
	text = json_dumps(doc, JSON_COMPACT);
	assert_non_null(text);
	push(fx, 200, text);
	free(text);
	json_decref(doc);
}

static const fakehttp_request *req(fixture *fx, size_t i)
{
	const fakehttp_request *r = fakehttp_get(fx->srv, i);

	assert_non_null(r);
	return r;
}

static void assert_canonical(const json_t *v, const char *expect)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_non_null(v);
	assert_int_equal(pmbot_json_canonical(&b, v), 0);
	assert_string_equal(b.buf, expect);
	pmbot_buf_free(&b);
}

/* Request `i` is a REST call with exactly this method, target and body. */
static void assert_rest(fixture *fx, size_t i, const char *method, const char *target,
	const char *body)
{
	const fakehttp_request *r = req(fx, i);

	assert_string_equal(r->method, method);
	assert_string_equal(r->target, target);
	assert_string_equal(r->body, body ? body : "");
	assert_string_equal(fakehttp_header_value(r, "Authorization"), "Bearer " TOKEN);
}

/* Request `i` is the GraphQL document `doc` with exactly these variables. */
/* Request `i` is a GraphQL POST of document text `text` with `vars_json`. */
static void assert_gql_text(fixture *fx, size_t i, const char *text, const char *vars_json)
{
	const fakehttp_request *r = req(fx, i);
	json_t *vars = json_loads(vars_json, 0, NULL), *sent = json_loads(r->body, 0, NULL), *body;
	pmbot_buf want = PMBOT_BUF_INIT;

	assert_string_equal(r->method, "POST");
	assert_string_equal(r->target, "/graphql");
	assert_non_null(vars);
	assert_non_null(sent);
	assert_non_null(text);
	/* Variables first, so a mismatch reads short; then the document; then every byte. */
	assert_int_equal(pmbot_json_canonical(&want, vars), 0);
	assert_canonical(json_object_get(sent, "variables"), want.buf);
	assert_true(json_is_string(json_object_get(sent, "query")));
	assert_true(!strcmp(json_string_value(json_object_get(sent, "query")), text));
	body = json_pack("{s:s, s:o}", "query", text, "variables", vars);
	assert_non_null(body);
	pmbot_buf_clear(&want);
	assert_int_equal(pmbot_json_canonical(&want, body), 0);
	assert_string_equal(r->body, want.buf);
	assert_string_equal(fakehttp_header_value(r, "Authorization"), "Bearer " TOKEN);
	pmbot_buf_free(&want);
	json_decref(body);
	json_decref(sent);
}

/* Request `i` is a GraphQL POST of embedded document `doc` with `vars_json`. */
static void assert_gql(fixture *fx, size_t i, const char *doc, const char *vars_json)
{
	assert_non_null(pmbot_gql(doc));
	assert_gql_text(fx, i, pmbot_gql(doc), vars_json);
}

/* ---- GraphQL answers ---- */

static json_t *user(const char *login)
{
	return json_pack("{s:s, s:s}", "__typename", "User", "login", login);
}

static json_t *bot(const char *login)
{
	return json_pack("{s:s, s:s}", "__typename", "Bot", "login", login);
}

/* An open issue node; database id 1000000 + number, node id "I_<number>". */
static json_t *node(long number, const char *body, json_t *author)
{
	char id[32], title[32];

	snprintf(id, sizeof(id), "I_%ld", number);
	snprintf(title, sizeof(title), "Issue %ld", number);
	return json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:o, s:{s:[]}, s:n}",
		"id", id, "databaseId", (json_int_t)(1000000 + number), "number", (json_int_t)number,
		"title", title, "body", body, "state", "OPEN", "updatedAt", "2026-01-02T03:04:05Z",
		"author", author ? author : json_null(), "labels", "nodes", "parent");
}

/* One page of the "issues" document; `nodes` consumed; cursor NULL: last page. */
static void push_issues(fixture *fx, const char *name_with_owner, json_t *nodes,
	const char *cursor)
{
	push_json(fx, json_pack("{s:{s:{s:s, s:{s:{s:b, s:s?}, s:o}}}}", "data", "repository",
		"nameWithOwner", name_with_owner, "issues", "pageInfo", "hasNextPage", cursor != NULL,
		"endCursor", cursor, "nodes", nodes));
}

static const char project_fields[] =
	"\"fields\":{\"nodes\":["
	"{\"id\":\"PVTF_title\",\"name\":\"Title\",\"dataType\":\"TITLE\"},"
	"{\"id\":\"PVTSSF_status\",\"name\":\"Status\",\"dataType\":\"SINGLE_SELECT\","
	"\"options\":[{\"id\":\"opt_todo\",\"name\":\"Todo\"},"
	"{\"id\":\"opt_done\",\"name\":\"Done\"}]},"
	"{\"id\":\"PVTF_est\",\"name\":\"Estimate\",\"dataType\":\"NUMBER\"},"
	"{\"id\":\"PVTF_notes\",\"name\":\"Notes\",\"dataType\":\"TEXT\"},"
	"{\"id\":\"PVTF_assignees\",\"name\":\"Assignees\",\"dataType\":\"ASSIGNEES\"},"
	"{\"id\":\"PVTF_due\",\"name\":\"Due\",\"dataType\":\"DATE\"}]}";

/* The board "PVT_5" of `kind` ("organization" or "user") with one issue item. */
static void push_project(fixture *fx, const char *kind)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	pmbot_buf_printf(&b, "{\"data\":{\"%s\":{\"projectV2\":{\"id\":\"PVT_5\",\"number\":5,%s,"
		"\"items\":{\"pageInfo\":{\"hasNextPage\":false,\"endCursor\":null},\"nodes\":["
		"{\"id\":\"PVTI_1\",\"content\":{\"number\":1,\"repository\":{\"nameWithOwner\":\"o/r\"}},"
		"\"fieldValues\":{\"nodes\":[{\"text\":\"Issue 1\",\"field\":{\"name\":\"Title\"}},"
		"{\"name\":\"Todo\",\"field\":{\"name\":\"Status\"}}]}}]}}}}}",
		kind, project_fields);
	push(fx, 200, b.buf);
	pmbot_buf_free(&b);
}

static const char org_not_found[] =
	"{\"data\":{\"organization\":null},\"errors\":[{\"type\":\"NOT_FOUND\","
	"\"path\":[\"organization\"],\"message\":\"Could not resolve to an Organization with the "
	"login of 'acme'.\"}]}";

static const char user_not_found[] =
	"{\"data\":{\"user\":null},\"errors\":[{\"type\":\"NOT_FOUND\","
	"\"path\":[\"user\"],\"message\":\"Could not resolve to a User with the login of 'acme'.\"}]}";

/* Read the board acme/5 so the backend knows its id and field types. */
static void read_board(fixture *fx)
{
	size_t before = fakehttp_count(fx->srv);

	push_project(fx, "organization");
	assert_int_equal(do_read(fx, NULL, 0, "acme", 5), 0);
	assert_non_null(fx->st->project);
	assert_int_equal(fakehttp_count(fx->srv), before + 1);
}

/* ---- read: issues ---- */

static void test_github_backend__read_sends_the_issues_document_without_a_cursor_first(
	void **state)
{
	fixture *fx = *state;

	push_issues(fx, "o/r", json_pack("[o]", node(1, "plain", user("alice"))), NULL);
	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_gql(fx, 0, "issues", "{\"after\":null,\"filter\":null,\"name\":\"r\",\"owner\":\"o\"}");
	/* The page size is in the document: 100 per page, open and closed. */
	assert_contains(pmbot_gql("issues"),
		"issues(first: 100, after: $after, states: [OPEN, CLOSED]");
	assert_int_equal(fx->st->n_issues, 1);
}

static void test_github_backend__read_maps_every_field_of_an_issue_node(void **state)
{
	fixture *fx = *state;
	json_t *a = node(1, "plain", user("alice")), *b = node(2, "", user("bob"));
	const pmbot_issue *is;

	json_object_set_new(a, "labels", json_pack("{s:[{s:s},{s:s}]}", "nodes", "name", "type:task",
		"name", "area:core"));
	json_object_set_new(b, "state", json_string("CLOSED"));
	json_object_set_new(b, "body", json_null());
	json_object_set_new(b, "parent", json_pack("{s:i, s:{s:s}}", "number", 1, "repository",
		"nameWithOwner", "o/r"));
	push_issues(fx, "o/r", json_pack("[o,o]", b, a), NULL);
	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_int_equal(fx->st->n_issues, 2);

	is = &fx->st->issues[0];
	assert_string_equal(is->repo, "o/r");
	assert_int_equal(is->number, 1);
	assert_int_equal(is->database_id, 1000001);
	assert_string_equal(is->node_id, "I_1");
	assert_string_equal(is->title, "Issue 1");
	assert_string_equal(is->body, "plain");
	assert_int_equal(is->closed, 0);
	assert_string_equal(is->updated_at, "2026-01-02T03:04:05Z");
	assert_int_equal(is->n_labels, 2);
	assert_string_equal(is->labels[0], "area:core");
	assert_string_equal(is->labels[1], "type:task");
	assert_null(is->parent);
	assert_int_equal(is->n_blocked_by, 0);

	is = &fx->st->issues[1];
	assert_int_equal(is->number, 2);
	assert_int_equal(is->closed, 1);
	assert_string_equal(is->body, "");
	assert_int_equal(is->n_labels, 0);
	/* Parents come with the issues: no request of their own. */
	assert_string_equal(is->parent, "o/r#1");
}

static void test_github_backend__read_follows_end_cursor_one_request_per_page(void **state)
{
	fixture *fx = *state;

	push_issues(fx, "o/r", json_pack("[o]", node(1, "", user("a"))), "Y3Vyc29yOjE=");
	push_issues(fx, "o/r", json_pack("[o]", node(2, "", user("a"))), "Y3Vyc29yOjI=");
	/* The last page may still name a cursor: hasNextPage decides. */
	push_json(fx, json_pack("{s:{s:{s:s, s:{s:{s:b, s:s}, s:[o]}}}}", "data", "repository",
		"nameWithOwner", "o/r", "issues", "pageInfo", "hasNextPage", 0, "endCursor",
		"Y3Vyc29yOjM=", "nodes", node(3, "", user("a"))));
	push_issues(fx, "o/r", json_pack("[o]", node(4, "", user("a"))), NULL);

	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 3);
	assert_int_equal(fakehttp_pending(fx->srv), 1);
	assert_gql(fx, 0, "issues", "{\"after\":null,\"filter\":null,\"name\":\"r\",\"owner\":\"o\"}");
	assert_gql(fx, 1, "issues", "{\"after\":\"Y3Vyc29yOjE=\",\"filter\":null,\"name\":\"r\",\"owner\":\"o\"}");
	assert_gql(fx, 2, "issues", "{\"after\":\"Y3Vyc29yOjI=\",\"filter\":null,\"name\":\"r\",\"owner\":\"o\"}");
	assert_int_equal(fx->st->n_issues, 3);
	assert_int_equal(fx->st->issues[2].number, 3);
}

static void test_github_backend__read_reads_a_repository_named_twice_once(void **state)
{
	fixture *fx = *state;
	static const char *const repos[] = { "O/R", "x/y", "o/r" };

	/* GitHub answers with its own spelling of the name, which the state keeps. */
	push_issues(fx, "o/r", json_pack("[o]", node(1, "", user("a"))), NULL);
	push_issues(fx, "x/y", json_pack("[o]", node(9, "", user("a"))), NULL);
	push_issues(fx, "o/r", json_pack("[o]", node(1, "", user("a"))), NULL);
	assert_int_equal(do_read(fx, repos, 3, NULL, 0), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_int_equal(fakehttp_pending(fx->srv), 1);
	assert_gql(fx, 0, "issues", "{\"after\":null,\"filter\":null,\"name\":\"R\",\"owner\":\"O\"}");
	assert_gql(fx, 1, "issues", "{\"after\":null,\"filter\":null,\"name\":\"y\",\"owner\":\"x\"}");
	assert_int_equal(fx->st->n_issues, 2);
	assert_string_equal(fx->st->issues[0].repo, "o/r");
	assert_string_equal(fx->st->issues[1].repo, "x/y");
}

static void test_github_backend__read_gives_bot_authors_their_rest_login(void **state)
{
	fixture *fx = *state;

	push_issues(fx, "o/r", json_pack("[o,o,o]", node(1, "", bot("github-actions")),
		node(2, "", bot("dependabot[bot]")), node(3, "", user("octocat"))), NULL);
	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_string_equal(fx->st->issues[0].author, "github-actions[bot]");
	assert_int_equal(fx->st->issues[0].author_is_bot, 1);
	assert_string_equal(fx->st->issues[1].author, "dependabot[bot]");
	assert_int_equal(fx->st->issues[1].author_is_bot, 1);
	assert_string_equal(fx->st->issues[2].author, "octocat");
	assert_int_equal(fx->st->issues[2].author_is_bot, 0);
}

static void test_github_backend__read_gives_a_deleted_author_as_ghost(void **state)
{
	fixture *fx = *state;

	push_issues(fx, "o/r", json_pack("[o,o]", node(1, "", NULL),
		node(2, "", json_pack("{s:s, s:n}", "__typename", "User", "login"))), NULL);
	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_string_equal(fx->st->issues[0].author, "ghost");
	assert_int_equal(fx->st->issues[0].author_is_bot, 0);
	assert_string_equal(fx->st->issues[1].author, "ghost");
}

/* `n` (consumed) with blockedBy {totalCount, nodes: the refs "OWNER/NAME#N", ...}. */
static json_t *with_blockers(json_t *n, long total, const char *const *refs, size_t n_refs)
{
	json_t *nodes = json_array();
	size_t i;

	assert_non_null(nodes);
	for (i = 0; i < n_refs; i++) {
		const char *hash = strchr(refs[i], '#');

		assert_non_null(hash);
		assert_int_equal(json_array_append_new(nodes, json_pack("{s:I, s:{s:s%}}", "number",
			(json_int_t)atol(hash + 1), "repository", "nameWithOwner", refs[i],
			(size_t)(hash - refs[i]))), 0);
	}
	assert_int_equal(json_object_set_new(n, "blockedBy", json_pack("{s:I, s:o}", "totalCount",
		(json_int_t)total, "nodes", nodes)), 0);
	return n;
}

static void test_github_backend__read_takes_blockers_from_the_issue_page(void **state)
{
	fixture *fx = *state;
	static const char *const two[] = { "o/r#2", "other/lib#7" };
	const pmbot_issue *is;

	push_issues(fx, "o/r", json_pack("[o,o,o]",
		with_blockers(node(1, "### Goal\nship\n\n" MARKER("task:a"), user("a")), 2, two, 2),
		/* a blocker the token cannot see comes as null: left out */
		with_blockers(json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:o, s:{s:[]}, s:n, "
			"s:{s:i, s:[n]}}", "id", "I_2", "databaseId", (json_int_t)1000002, "number",
			(json_int_t)2, "title", "Issue 2", "body", "", "state", "OPEN", "updatedAt",
			"2026-01-02T03:04:05Z", "author", user("a"), "labels", "nodes", "parent",
			"blockedBy", "totalCount", 1, "nodes"), 0, NULL, 0),
		node(3, "plain", user("a"))), NULL);
	assert_int_equal(do_read1(fx, "o/r"), 0);
	/* No REST request: the blockers came with the page. */
	assert_int_equal(fakehttp_count(fx->srv), 1);
	is = pmbot_state_issue_at(fx->st, "o/r", 1);
	assert_non_null(is);
	assert_int_equal(is->n_blocked_by, 2);
	assert_string_equal(is->blocked_by[0], "o/r#2");
	assert_string_equal(is->blocked_by[1], "other/lib#7");
	assert_int_equal(pmbot_state_issue_at(fx->st, "o/r", 2)->n_blocked_by, 0);
	assert_int_equal(pmbot_state_issue_at(fx->st, "o/r", 3)->n_blocked_by, 0);
}

static void test_github_backend__read_asks_rest_only_for_an_issue_with_more_blockers_than_a_page(
	void **state)
{
	fixture *fx = *state;
	static const char *const one[] = { "o/r#2" }, *const three[] = { "o/r#3" };
	const pmbot_issue *is;

	/* totalCount 51 with one node here: REST lists them all. */
	push_issues(fx, "o/r", json_pack("[o,o]",
		with_blockers(node(1, "x", user("a")), 51, one, 1),
		with_blockers(node(2, "y", user("a")), 1, three, 1)), NULL);
	push(fx, 200, "[{\"id\":1000002,\"number\":2,\"repository_url\":\"" API_REPOS "o/r\"},"
		"{\"id\":2000007,\"number\":7,\"repository_url\":\"" API_REPOS "other/lib\"}]");
	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_rest(fx, 1, "GET", "/repos/o/r/issues/1/dependencies/blocked_by?per_page=100", NULL);
	is = pmbot_state_issue_at(fx->st, "o/r", 1);
	assert_int_equal(is->n_blocked_by, 2);
	assert_string_equal(is->blocked_by[1], "other/lib#7");
	assert_int_equal(pmbot_state_issue_at(fx->st, "o/r", 2)->n_blocked_by, 1);
}

static void test_github_backend__read_fails_when_a_dependency_list_cannot_be_read(void **state)
{
	fixture *fx = *state;

	push_issues(fx, "o/r", json_pack("[o]", with_blockers(node(1, "x", user("a")), 60, NULL, 0)),
		NULL);
	push(fx, 404, "{\"message\":\"Not Found\"}");
	assert_int_equal(do_read1(fx, "o/r"), PMBOT_ERROR);
	assert_starts_with(fx->err.buf, "read: listing dependencies failed: GET ");
	assert_contains(fx->err.buf, "/repos/o/r/issues/1/dependencies/blocked_by");
	assert_contains(fx->err.buf, "404");
}

/* GitHub's refusal of a document naming fields its schema lacks. */
static void push_undefined_fields(fixture *fx, int parent, int blocked_by)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	pmbot_buf_puts(&b, "{\"errors\":[");
	if (parent)
		pmbot_buf_puts(&b, "{\"message\":\"Field 'parent' doesn't exist on type 'Issue'\","
			"\"extensions\":{\"code\":\"undefinedField\",\"typeName\":\"Issue\","
			"\"fieldName\":\"parent\"}}");
	if (blocked_by)
		pmbot_buf_printf(&b, "%s{\"message\":\"Field 'blockedBy' doesn't exist on type "
			"'Issue'\",\"extensions\":{\"code\":\"undefinedField\",\"typeName\":\"Issue\","
			"\"fieldName\":\"blockedBy\"}}", parent ? "," : "");
	pmbot_buf_puts(&b, "]}");
	push(fx, 200, b.buf);
	pmbot_buf_free(&b);
}

static void test_github_backend__read_learns_ghes_lacks_sub_issues_and_dependencies(void **state)
{
	fixture *fx = *state;
	json_t *doc = NULL;
	const char *vars = "{\"after\":null,\"filter\":null,\"name\":\"r\",\"owner\":\"o\"}";
	pmbot_buf plain = PMBOT_BUF_INIT;

	/* The issues document without its sub-issue and dependency lines. */
	assert_int_equal(pmbot_gql_without(&plain, pmbot_gql("issues"),
				 PMBOT_GQL_SUB_ISSUES | PMBOT_GQL_DEPENDENCIES), 0);
	push_undefined_fields(fx, 1, 1);
	push_issues(fx, "o/r", json_pack("[o]", node(1, "x", user("a"))), NULL);
	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_gql(fx, 0, "issues", vars);
	assert_gql_text(fx, 1, plain.buf, vars);
	assert_null(strstr(plain.buf, "parent"));
	assert_null(strstr(plain.buf, "blockedBy"));
	assert_int_equal(fx->st->n_issues, 1);
	assert_int_equal(pmbot_state_to_json(&doc, fx->st), 0);
	assert_canonical(json_object_get(json_object_get(doc, "extra"), "unsupported"),
		"[\"sub_issues\",\"dependencies\"]");
	json_decref(doc);

	/* The next read knows: one request, the variant straight away. */
	push_issues(fx, "o/r", json_pack("[]"), NULL);
	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 3);
	assert_gql_text(fx, 2, plain.buf, vars);
	pmbot_buf_free(&plain);
}

static void test_github_backend__read_learns_each_missing_feature_on_its_own(void **state)
{
	fixture *fx = *state;
	json_t *doc = NULL;
	const char *vars = "{\"after\":null,\"filter\":null,\"name\":\"r\",\"owner\":\"o\"}";
	pmbot_buf no_sub = PMBOT_BUF_INIT;

	/* Sub-issues only missing: blockers are still read. */
	assert_int_equal(pmbot_gql_without(&no_sub, pmbot_gql("issues"), PMBOT_GQL_SUB_ISSUES), 0);
	push_undefined_fields(fx, 1, 0);
	push_issues(fx, "o/r", json_pack("[]"), NULL);
	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_gql_text(fx, 1, no_sub.buf, vars);
	assert_non_null(strstr(no_sub.buf, "blockedBy"));
	pmbot_buf_free(&no_sub);
	assert_int_equal(pmbot_state_to_json(&doc, fx->st), 0);
	assert_canonical(json_object_get(json_object_get(doc, "extra"), "unsupported"),
		"[\"sub_issues\"]");
	json_decref(doc);

	/* An undefinedField for anything else is an error like any other. */
	push(fx, 200, "{\"errors\":[{\"message\":\"Field 'title' doesn't exist on type 'Issue'\","
		"\"extensions\":{\"code\":\"undefinedField\",\"typeName\":\"Issue\","
		"\"fieldName\":\"title\"}}]}");
	assert_true(do_read1(fx, "o/r") < 0);
	assert_int_equal(fakehttp_count(fx->srv), 3);
	/* And the same refusal twice does not loop. */
	push_undefined_fields(fx, 1, 0);
	assert_true(do_read1(fx, "o/r") < 0);
	assert_int_equal(fakehttp_count(fx->srv), 4);
}

static int do_read_scoped(fixture *fx, const char *repo, const pmbot_read_need *needs, size_t n)
{
	pmbot_read_scope scope;
	int rc;

	scope.needs = needs;
	scope.n_needs = n;
	pmbot_state_free(fx->st);
	fx->st = NULL;
	pmbot_buf_clear(&fx->err);
	rc = pmbot_backend_read(&fx->st, backend(fx), &repo, 1, NULL, 0, &scope, &fx->err);
	assert_null(strstr(fx->err.buf, TOKEN));
	return rc;
}

#define NARROW_VARS(after) \
	"{\"after\":" after ",\"filter\":{\"createdBy\":\"pm-bot\"},\"name\":\"r\",\"owner\":\"o\"}"
#define ALL_VARS(after) "{\"after\":" after ",\"filter\":null,\"name\":\"r\",\"owner\":\"o\"}"

static void test_github_backend__scoped_read_with_every_id_found_reads_only_its_own_issues(
	void **state)
{
	fixture *fx = *state;
	static const pmbot_read_need needs[] = {
		{ "o/r", "task:a", 0 }, { "O/R", "task:b", 0 }, { "other/x", "task:z", 0 },
	};

	push_issues(fx, "o/r", json_pack("[o,o]", node(1, MARKER("task:a"), bot("pm-bot")),
		node(4, MARKER("task:b"), bot("pm-bot"))), NULL);
	assert_int_equal(do_read_scoped(fx, "o/r", needs, 3), 0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	/* The bot's GraphQL login: without "[bot]". */
	assert_gql(fx, 0, "issues", NARROW_VARS("null"));
	assert_int_equal(fx->st->n_issues, 2);
	assert_null(fx->st->extra);
}

static void test_github_backend__scoped_read_proves_a_missing_id_absent_by_reading_everything(
	void **state)
{
	fixture *fx = *state;
	static const pmbot_read_need needs[] = { { "o/r", "task:a", 0 }, { "o/r", "task:new", 0 } };
	json_t *doc = NULL;

	push_issues(fx, "o/r", json_pack("[o]", node(1, MARKER("task:a"), bot("pm-bot"))), NULL);
	/* Everything, two pages: a person's marked issue the filter did not return. */
	push_issues(fx, "o/r", json_pack("[o,o]", node(1, MARKER("task:a"), bot("pm-bot")),
		node(2, "unrelated", user("x"))), "Y3Vyc29yOjE=");
	push_issues(fx, "o/r", json_pack("[o]", node(3, MARKER("task:b"), user("alice"))), NULL);
	assert_int_equal(do_read_scoped(fx, "o/r", needs, 2), 0);
	assert_int_equal(fakehttp_count(fx->srv), 3);
	assert_gql(fx, 0, "issues", NARROW_VARS("null"));
	assert_gql(fx, 1, "issues", ALL_VARS("null"));
	assert_gql(fx, 2, "issues", ALL_VARS("\"Y3Vyc29yOjE=\""));
	assert_int_equal(fx->st->n_issues, 3);
	assert_int_equal(pmbot_state_to_json(&doc, fx->st), 0);
	assert_canonical(json_object_get(doc, "extra"), "{\"narrow_missed\":[{\"author\":\"alice\","
		"\"ref\":\"o/r#3\",\"repo\":\"o/r\",\"stable_id\":\"task:b\"}]}");
	json_decref(doc);
}

static void test_github_backend__scoped_read_fetches_numbered_issues_by_number(void **state)
{
	fixture *fx = *state;
	static const pmbot_read_need needs[] = {
		{ "o/r", "task:a", 0 }, { "o/r", NULL, 9 }, { "o/r", NULL, 1 }, { "o/r", NULL, 404 },
	};
	const fakehttp_request *r;
	json_t *sent;
	const char *q;

	push_issues(fx, "o/r", json_pack("[o]", node(1, MARKER("task:a"), bot("pm-bot"))), NULL);
	/* #9 is there, #404 is not (GitHub's NOT_FOUND for that alias only). */
	push_json(fx, json_pack("{s:{s:{s:s, s:o, s:n}}, s:[{s:s, s:[s,s]}]}", "data", "repository",
		"nameWithOwner", "o/r", "i0", node(9, "someone's", user("x")), "i1", "errors", "type",
		"NOT_FOUND", "path", "repository", "i1"));
	assert_int_equal(do_read_scoped(fx, "o/r", needs, 4), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	r = req(fx, 1);
	assert_non_null(sent = json_loads(r->body, 0, NULL));
	q = json_string_value(json_object_get(sent, "query"));
	assert_non_null(q);
	/* #1 came with the narrow read: only #9 and #404 are asked for. */
	assert_non_null(strstr(q, "i0: issue(number: 9) {"));
	assert_non_null(strstr(q, "i1: issue(number: 404) {"));
	assert_null(strstr(q, "i2:"));
	assert_non_null(strstr(q, "fragment PmBotIssue on Issue {"));
	json_decref(sent);
	assert_int_equal(fx->st->n_issues, 2);
	assert_non_null(pmbot_state_issue_at(fx->st, "o/r", 9));
	assert_null(pmbot_state_issue_at(fx->st, "o/r", 404));

	/* Any other error fails the read. */
	push_issues(fx, "o/r", json_pack("[o]", node(1, MARKER("task:a"), bot("pm-bot"))), NULL);
	push(fx, 200, "{\"data\":null,\"errors\":[{\"type\":\"INTERNAL\",\"path\":[\"repository\"]}]}");
	assert_int_equal(do_read_scoped(fx, "o/r", needs, 4), PMBOT_ERROR);
	assert_starts_with(fx->err.buf, "read: reading issues by number failed");
}

static void test_github_backend__scoped_read_counts_an_unreadable_marked_issue_as_found(
	void **state)
{
	fixture *fx = *state;
	static const pmbot_read_need needs[] = { { "o/r", "task:a", 0 } };

	/* Its parent is FORBIDDEN, its marker readable: it is the item, left alone; no scan. */
	push_json(fx, json_pack("{s:{s:{s:s, s:{s:{s:b}, s:[o]}}}, s:[{s:s, s:[s,s,s,i,s]}]}",
		"data", "repository", "nameWithOwner", "o/r", "issues", "pageInfo", "hasNextPage", 0,
		"nodes", node(1, MARKER("task:a"), bot("pm-bot")), "errors", "type", "FORBIDDEN",
		"path", "repository", "issues", "nodes", 0, "parent"));
	assert_int_equal(do_read_scoped(fx, "o/r", needs, 1), 0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_int_equal(fx->st->n_issues, 0);
}

static void test_github_backend__scoped_read_without_a_login_reads_everything(void **state)
{
	fixture *fx = *state;
	static const pmbot_read_need needs[] = { { "o/r", "task:a", 0 } };
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_read_scope scope = { needs, 1 };
	const char *repo = "o/r";

	assert_int_equal(pmbot_github_client_new(&fx->c, &fx->opts, &err), 0);
	assert_int_equal(pmbot_github_backend_open(&fx->b, fx->c, NULL, &err), 0);
	push_issues(fx, "o/r", json_pack("[]"), NULL);
	assert_int_equal(pmbot_backend_read(&fx->st, fx->b, &repo, 1, NULL, 0, &scope, &err), 0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_gql(fx, 0, "issues", ALL_VARS("null"));
	pmbot_buf_free(&err);
}

static void test_github_backend__read_fails_without_crashing_on_malformed_answers(void **state)
{
	fixture *fx = *state;
	json_t *untitled = node(1, "", user("a"));

	/* No repository and no error. */
	push(fx, 200, "{\"data\":{\"repository\":null}}");
	assert_int_equal(do_read1(fx, "o/r"), PMBOT_ERROR);
	assert_string_equal(fx->err.buf, "read: GitHub answered no issues for o/r");

	/* Nodes that are not an array. */
	push(fx, 200, "{\"data\":{\"repository\":{\"nameWithOwner\":\"o/r\",\"issues\":"
		"{\"pageInfo\":{\"hasNextPage\":false},\"nodes\":{}}}}}");
	assert_int_equal(do_read1(fx, "o/r"), PMBOT_ERROR);
	assert_string_equal(fx->err.buf, "read: GitHub answered no issues for o/r");

	/* A next page without a cursor. */
	push(fx, 200, "{\"data\":{\"repository\":{\"nameWithOwner\":\"o/r\",\"issues\":"
		"{\"pageInfo\":{\"hasNextPage\":true,\"endCursor\":null},\"nodes\":[]}}}}");
	assert_int_equal(do_read1(fx, "o/r"), PMBOT_ERROR);
	assert_string_equal(fx->err.buf, "read: GitHub gave no cursor for the next page of o/r");

	/* An issue without its title. */
	json_object_del(untitled, "title");
	push_issues(fx, "o/r", json_pack("[o]", untitled), NULL);
	assert_int_equal(do_read1(fx, "o/r"), PMBOT_ERROR);
	assert_string_equal(fx->err.buf, "read: an issue of o/r without its number, ids or title");

	/* A 200 that is not JSON. */
	push(fx, 200, "<html>");
	assert_int_equal(do_read1(fx, "o/r"), PMBOT_ERROR);
	assert_starts_with(fx->err.buf, "read: reading issues failed: POST ");

	assert_int_equal(fakehttp_count(fx->srv), 5);
	assert_int_equal(fakehttp_pending(fx->srv), 0);
}

static void test_github_backend__read_refuses_answers_that_do_not_form_a_valid_state(
	void **state)
{
	fixture *fx = *state;
	json_t *bad = node(2, "", user("a"));
	static const char *const bad_name[] = { "noslash" };

	json_object_set_new(bad, "updatedAt", json_string("yesterday"));
	push_issues(fx, "o/r", json_pack("[o,o]", node(1, "", user("a")), bad), NULL);
	assert_int_equal(do_read1(fx, "o/r"), PMBOT_EINVALID);
	assert_starts_with(fx->err.buf, "read: GitHub's answers do not form a valid state:");
	assert_contains(fx->err.buf, "STATE_SCHEMA");
	assert_contains(fx->err.buf, "updated_at");

	/* Not OWNER/NAME: refused before asking. */
	assert_int_equal(do_read(fx, bad_name, 1, NULL, 0), PMBOT_EINVALID);
	assert_string_equal(fx->err.buf, "read: 'noslash' is not OWNER/NAME");
	assert_int_equal(fakehttp_count(fx->srv), 1);
}

/* A partial answer: `nodes` (consumed) with the errors `errors_json`, in HTTP 200. */
static void push_partial(fixture *fx, json_t *nodes, const char *errors_json)
{
	json_t *errors = json_loads(errors_json, 0, NULL);

	assert_non_null(errors);
	push_json(fx, json_pack("{s:{s:{s:s, s:{s:{s:b, s:n}, s:o}}}, s:o}", "data", "repository",
		"nameWithOwner", "o/r", "issues", "pageInfo", "hasNextPage", 0, "endCursor", "nodes",
		nodes, "errors", errors));
}

#define FORBIDDEN_AT(i, field) \
	"{\"type\":\"FORBIDDEN\",\"path\":[\"repository\",\"issues\",\"nodes\"," #i ",\"" field \
	"\"],\"extensions\":{\"saml_failure\":false},\"message\":\"Resource not accessible by " \
	"integration\"}"

static void test_github_backend__read_leaves_out_issues_a_forbidden_partial_answer_hides(
	void **state)
{
	fixture *fx = *state;
	json_t *hidden_parent = node(2, MARKER("task:a"), user("a")), *u;

	/* #2's parent is hidden (its marker is read), the third node was nulled whole. */
	json_object_set_new(hidden_parent, "parent", json_null());
	push_partial(fx, json_pack("[o,o,n,o]", node(1, "plain", user("a")), hidden_parent,
		node(4, "", user("a"))), "[" FORBIDDEN_AT(1, "parent") "," FORBIDDEN_AT(2, "body") ","
		FORBIDDEN_AT(2, "title") "]");
	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	/* the readable issues are there, the others are not guessed at */
	assert_int_equal(fx->st->n_issues, 2);
	assert_int_equal(fx->st->issues[0].number, 1);
	assert_int_equal(fx->st->issues[1].number, 4);
	u = json_object_get(fx->st->extra, "unreadable");
	assert_canonical(u, "[{\"fields\":[\"parent\"],\"ref\":\"o/r#2\",\"repo\":\"o/r\","
		"\"stable_id\":\"task:a\"},{\"fields\":[\"body\",\"title\"],\"ref\":null,"
		"\"repo\":\"o/r\",\"stable_id\":null}]");
}

static void test_github_backend__read_without_unreadable_issues_has_no_extra(void **state)
{
	fixture *fx = *state;

	push_issues(fx, "o/r", json_pack("[o]", node(1, "plain", user("a"))), NULL);
	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_null(fx->st->extra);
}

static void test_github_backend__read_still_fails_on_errors_other_than_forbidden_in_a_node(
	void **state)
{
	fixture *fx = *state;

	/* another type at a node's path */
	push_partial(fx, json_pack("[o]", node(1, "", user("a"))),
		"[{\"type\":\"INTERNAL\",\"path\":[\"repository\",\"issues\",\"nodes\",0,\"parent\"],"
		"\"message\":\"Something went wrong\"}]");
	assert_int_equal(do_read1(fx, "o/r"), PMBOT_ERROR);
	assert_starts_with(fx->err.buf, "read: reading issues failed: POST ");
	assert_contains(fx->err.buf, "INTERNAL");

	/* FORBIDDEN, but one of them not inside a node (the whole repository) */
	push_partial(fx, json_pack("[o]", node(1, "", user("a"))),
		"[" FORBIDDEN_AT(0, "parent") ",{\"type\":\"FORBIDDEN\",\"path\":[\"repository\"],"
		"\"message\":\"Resource not accessible by integration\"}]");
	assert_int_equal(do_read1(fx, "o/r"), PMBOT_ERROR);
	assert_contains(fx->err.buf, "FORBIDDEN");

	/* FORBIDDEN at a node index the answer does not have */
	push_partial(fx, json_pack("[o]", node(1, "", user("a"))), "[" FORBIDDEN_AT(5, "body") "]");
	assert_int_equal(do_read1(fx, "o/r"), PMBOT_ERROR);
	assert_int_equal(fakehttp_count(fx->srv), 3);
}

/* ---- read: the project ---- */

static void test_github_backend__read_asks_for_an_organization_board_first(void **state)
{
	fixture *fx = *state;
	const pmbot_project *p;
	const pmbot_pitem *it;

	push(fx, 200, "{\"data\":{\"organization\":{\"projectV2\":{\"id\":\"PVT_5\",\"number\":5,"
		"\"fields\":{\"nodes\":["
		"{\"id\":\"PVTF_title\",\"name\":\"Title\",\"dataType\":\"TITLE\"},"
		"{\"id\":\"PVTSSF_status\",\"name\":\"Status\",\"dataType\":\"SINGLE_SELECT\","
		"\"options\":[{\"id\":\"opt_todo\",\"name\":\"Todo\"},"
	"{\"id\":\"opt_done\",\"name\":\"Done\"}]},"
		"{\"id\":\"PVTF_est\",\"name\":\"Estimate\",\"dataType\":\"NUMBER\"},"
		"{\"id\":\"PVTF_notes\",\"name\":\"Notes\",\"dataType\":\"TEXT\"},"
		"{\"id\":\"PVTF_due\",\"name\":\"Due\",\"dataType\":\"DATE\"}]},"
		"\"items\":{\"pageInfo\":{\"hasNextPage\":false,\"endCursor\":null},\"nodes\":["
		"{\"id\":\"PVTI_1\",\"content\":{\"number\":1,\"repository\":{\"nameWithOwner\":\"o/r\"}},"
		"\"fieldValues\":{\"nodes\":["
		"{\"text\":\"Issue 1\",\"field\":{\"name\":\"Title\"}},"
		"{\"name\":\"Todo\",\"field\":{\"name\":\"Status\"}},"
		"{\"number\":3,\"field\":{\"name\":\"Estimate\"}},"
		"{\"text\":\"n\",\"field\":{\"name\":\"Notes\"}},"
		"{\"date\":\"2026-01-05\",\"field\":{\"name\":\"Due\"}}]}},"
		"{\"id\":\"PVTI_draft\",\"content\":{},\"fieldValues\":{\"nodes\":[]}},"
		"{\"id\":\"PVTI_pr\",\"content\":null,\"fieldValues\":{\"nodes\":[]}}]}}}}}");
	assert_int_equal(do_read(fx, NULL, 0, "acme", 5), 0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_gql(fx, 0, "project", "{\"after\":null,\"login\":\"acme\",\"number\":5,\"org\":true}");

	p = fx->st->project;
	assert_non_null(p);
	assert_string_equal(p->owner, "acme");
	assert_int_equal(p->number, 5);
	assert_string_equal(p->node_id, "PVT_5");
	/* Only the kinds pm-bot writes, in GitHub's order. */
	assert_int_equal(p->n_fields, 4);
	assert_string_equal(p->fields[0].name, "Status");
	assert_int_equal(p->fields[0].type, PMBOT_PFIELD_SINGLE_SELECT);
	assert_int_equal(p->fields[0].n_options, 2);
	assert_string_equal(p->fields[0].options[1].id, "opt_done");
	assert_string_equal(p->fields[0].options[1].name, "Done");
	assert_int_equal(p->fields[1].type, PMBOT_PFIELD_NUMBER);
	assert_int_equal(p->fields[2].type, PMBOT_PFIELD_TEXT);
	assert_int_equal(p->fields[3].type, PMBOT_PFIELD_DATE);
	assert_string_equal(p->fields[3].id, "PVTF_due");
	/* Drafts and pull requests are not issues. */
	assert_int_equal(p->n_items, 1);
	it = &p->items[0];
	assert_string_equal(it->id, "PVTI_1");
	assert_string_equal(it->issue, "o/r#1");
	assert_canonical(it->values,
		"{\"Due\":\"2026-01-05\",\"Estimate\":3,\"Notes\":\"n\",\"Status\":\"Todo\"}");
}

static void test_github_backend__read_falls_back_to_a_user_board_on_not_found(void **state)
{
	fixture *fx = *state;

	push(fx, 200, org_not_found);
	push_project(fx, "user");
	assert_int_equal(do_read(fx, NULL, 0, "acme", 5), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_gql(fx, 0, "project", "{\"after\":null,\"login\":\"acme\",\"number\":5,\"org\":true}");
	assert_gql(fx, 1, "project", "{\"after\":null,\"login\":\"acme\",\"number\":5,\"org\":false}");
	assert_non_null(fx->st->project);
	assert_string_equal(fx->st->project->node_id, "PVT_5");
	assert_int_equal(fx->st->project->n_items, 1);
}

static void test_github_backend__read_gives_no_project_when_neither_owner_has_the_board(
	void **state)
{
	fixture *fx = *state;

	push(fx, 200, org_not_found);
	push(fx, 200, user_not_found);
	assert_int_equal(do_read(fx, NULL, 0, "acme", 5), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_null(fx->st->project);
	/* Nothing to write to: the board's writes refuse without a request. */
	assert_int_equal(perform(fx, "add_to_project",
		"{\"repo\":\"o/r\",\"number\":1,\"node_id\":\"I_1\"}"), PMBOT_EINVALID);
	assert_string_equal(fx->err.buf,
		"add_to_project: no project was read: read the state with the project first");
	assert_int_equal(fakehttp_count(fx->srv), 2);
}

static void test_github_backend__read_pages_through_board_items_with_the_cursor(void **state)
{
	fixture *fx = *state;
	pmbot_buf b = PMBOT_BUF_INIT;

	pmbot_buf_printf(&b, "{\"data\":{\"organization\":{\"projectV2\":{\"id\":\"PVT_5\",%s,"
		"\"items\":{\"pageInfo\":{\"hasNextPage\":true,\"endCursor\":\"aXRlbTox\"},\"nodes\":["
		"{\"id\":\"PVTI_1\",\"content\":{\"number\":1,\"repository\":{\"nameWithOwner\":\"o/r\"}},"
		"\"fieldValues\":{\"nodes\":[]}}]}}}}}", project_fields);
	push(fx, 200, b.buf);
	pmbot_buf_clear(&b);
	pmbot_buf_printf(&b, "{\"data\":{\"organization\":{\"projectV2\":{\"id\":\"PVT_5\",%s,"
		"\"items\":{\"pageInfo\":{\"hasNextPage\":false,\"endCursor\":\"aXRlbToy\"},\"nodes\":["
		"{\"id\":\"PVTI_2\",\"content\":{\"number\":2,\"repository\":{\"nameWithOwner\":\"o/r\"}},"
		"\"fieldValues\":{\"nodes\":[{\"number\":1.5,\"field\":{\"name\":\"Estimate\"}}]}}]}}}}}",
		project_fields);
	push(fx, 200, b.buf);
	pmbot_buf_free(&b);

	assert_int_equal(do_read(fx, NULL, 0, "acme", 5), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_gql(fx, 1, "project",
		"{\"after\":\"aXRlbTox\",\"login\":\"acme\",\"number\":5,\"org\":true}");
	assert_int_equal(fx->st->project->n_fields, 4);
	assert_int_equal(fx->st->project->n_items, 2);
	assert_string_equal(fx->st->project->items[1].issue, "o/r#2");
	assert_canonical(fx->st->project->items[1].values, "{\"Estimate\":1.5}");
}

/* ---- perform: issues and labels ---- */

/* The answer to the repo_meta read: repository R_1 with `labels` and `types` (JSON arrays). */
static void push_meta(fixture *fx, const char *labels, const char *types)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_buf_printf(&b, "{\"data\":{\"repository\":{\"id\":\"R_1\","
		"\"labels\":{\"nodes\":%s,\"pageInfo\":{\"hasNextPage\":false,\"endCursor\":null}},"
		"\"issueTypes\":%s}}}", labels, types), 0);
	push(fx, 200, b.buf);
	pmbot_buf_free(&b);
}

static void test_github_backend__create_issue_is_one_createIssue_with_labels_parent_board_and_type(
	void **state)
{
	fixture *fx = *state;

	push_meta(fx, "[{\"id\":\"LA_1\",\"name\":\"Type:Task\"}]",
		"{\"nodes\":[{\"id\":\"IT_7\",\"name\":\"Bug\"},{\"id\":\"IT_9\",\"name\":\"Task\"}]}");
	push(fx, 201, "{\"id\":55,\"node_id\":\"LA_2\",\"name\":\"a\"}");
	push(fx, 200, "{\"data\":{\"createIssue\":{\"issue\":{\"id\":\"I_kwDOA\",\"databaseId\":1000012,"
		"\"number\":12,\"parent\":{\"id\":\"I_p\"},\"projectItems\":{\"nodes\":["
		"{\"id\":\"PVTI_other\",\"project\":{\"id\":\"PVT_other\"}},"
		"{\"id\":\"PVTI_9\",\"project\":{\"id\":\"PVT_5\"}}]}}}}}");
	assert_int_equal(perform(fx, "create_issue",
		"{\"repo\":\"o/r\",\"title\":\"T\",\"body\":\"B\\n\",\"labels\":[\"type:task\",\"a\"],"
		"\"parent_node_id\":\"I_p\",\"project_node_id\":\"PVT_5\",\"issue_type\":\"TASK\"}"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 3);
	assert_gql(fx, 0, "repo_meta", "{\"after\":null,\"name\":\"r\",\"owner\":\"o\",\"types\":true}");
	/* Only the missing label is created; GitHub compares label names without case. */
	assert_rest(fx, 1, "POST", "/repos/o/r/labels", "{\"color\":\"ededed\",\"name\":\"a\"}");
	assert_gql(fx, 2, "create_issue", "{\"input\":{\"body\":\"B\\n\",\"issueTypeId\":\"IT_9\","
		"\"labelIds\":[\"LA_1\",\"LA_2\"],\"parentIssueId\":\"I_p\",\"projectV2Ids\":[\"PVT_5\"],"
		"\"repositoryId\":\"R_1\",\"title\":\"T\"}}");
	assert_canonical(fx->result, "{\"database_id\":1000012,\"issue_type_id\":\"IT_9\","
		"\"item_id\":\"PVTI_9\",\"node_id\":\"I_kwDOA\",\"number\":12,\"parent_node_id\":\"I_p\"}");

	/* The labels and types are read once per backend: the next create is one request. */
	push(fx, 200, "{\"data\":{\"createIssue\":{\"issue\":{\"id\":\"I_13\",\"databaseId\":1000013,"
		"\"number\":13,\"parent\":null,\"projectItems\":{\"nodes\":[]}}}}}");
	assert_int_equal(perform(fx, "create_issue", "{\"repo\":\"O/R\",\"title\":\"U\",\"body\":\"\","
		"\"labels\":[\"A\"],\"issue_type\":\"epic\"}"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 4);
	assert_gql(fx, 3, "create_issue", "{\"input\":{\"body\":\"\",\"labelIds\":[\"LA_2\"],"
		"\"repositoryId\":\"R_1\",\"title\":\"U\"}}");
	assert_canonical(fx->result, "{\"database_id\":1000013,\"node_id\":\"I_13\",\"number\":13}");
}

/* ---- issue types on existing issues ------------------------------------ */

static void test_github_backend__read_takes_issue_types_and_the_repositorys_types_from_the_page(
	void **state)
{
	fixture *fx = *state;
	json_t *a = node(1, "x", user("a")), *b = node(2, "y", user("a")), *doc = NULL;

	json_object_set_new(a, "issueType", json_pack("{s:s}", "name", "Task"));
	json_object_set_new(b, "issueType", json_null());
	push_json(fx, json_pack("{s:{s:{s:s, s:{s:[{s:s},{s:s}]}, s:{s:{s:b}, s:[o,o]}}}}", "data",
		"repository", "nameWithOwner", "O/R", "issueTypes", "nodes", "name", "Task", "name",
		"Bug", "issues", "pageInfo", "hasNextPage", 0, "nodes", a, b));
	assert_int_equal(do_read1(fx, "o/r"), 0);
	/* In the same request as the issues. */
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_non_null(strstr(req(fx, 0)->body, "issueType {"));
	assert_string_equal(fx->st->issues[0].issue_type, "Task");
	assert_null(fx->st->issues[1].issue_type);
	assert_int_equal(pmbot_state_to_json(&doc, fx->st), 0);
	/* GitHub's order and spelling, under GitHub's name of the repository. */
	assert_canonical(json_object_get(json_object_get(doc, "extra"), "issue_types"),
		"{\"O/R\":[\"Task\",\"Bug\"]}");
	json_decref(doc);

	/* A repository without types (a user's): no extra at all. */
	push_issues(fx, "o/r", json_pack("[o]", node(1, "x", user("a"))), NULL);
	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_null(fx->st->extra);
	assert_null(fx->st->issues[0].issue_type);
}

static void test_github_backend__read_learns_a_github_without_issue_types(void **state)
{
	fixture *fx = *state;
	const char *vars = "{\"after\":null,\"filter\":null,\"name\":\"r\",\"owner\":\"o\"}";
	pmbot_buf plain = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_gql_without(&plain, pmbot_gql("issues"), PMBOT_GQL_ISSUE_TYPES), 0);
	push(fx, 200, "{\"errors\":[{\"message\":\"Field 'issueTypes' doesn't exist on type "
		"'Repository'\",\"extensions\":{\"code\":\"undefinedField\",\"typeName\":\"Repository\","
		"\"fieldName\":\"issueTypes\"}},{\"message\":\"Field 'issueType' doesn't exist on type "
		"'Issue'\",\"extensions\":{\"code\":\"undefinedField\",\"typeName\":\"Issue\","
		"\"fieldName\":\"issueType\"}}]}");
	push_issues(fx, "o/r", json_pack("[o]", node(1, "x", user("a"))), NULL);
	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_gql(fx, 0, "issues", vars);
	assert_gql_text(fx, 1, plain.buf, vars);
	/* Sub-issues and dependencies are still read; nothing is unsupported for the planner. */
	assert_non_null(strstr(plain.buf, "blockedBy"));
	assert_null(fx->st->extra);
	assert_null(fx->st->issues[0].issue_type);
	pmbot_buf_free(&plain);

	/* Another field of Repository is an error, not a missing feature. */
	push(fx, 200, "{\"errors\":[{\"message\":\"no\",\"extensions\":{\"code\":\"undefinedField\","
		"\"typeName\":\"Repository\",\"fieldName\":\"issues\"}}]}");
	assert_true(do_read1(fx, "o/r") < 0);
}

static void test_github_backend__set_issue_type_is_one_updateIssueIssueType(void **state)
{
	fixture *fx = *state;

	push_meta(fx, "[]", "{\"nodes\":[{\"id\":\"IT_7\",\"name\":\"Bug\"},{\"id\":\"IT_9\",\"name\":\"Task\"}]}");
	push(fx, 200, "{\"data\":{\"updateIssueIssueType\":{\"issue\":{\"issueType\":{\"name\":\"Task\"}}}}}");
	assert_int_equal(perform(fx, "set_issue_type", "{\"repo\":\"o/r\",\"number\":3,"
		"\"node_id\":\"I_3\",\"issue_type\":\"task\"}"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_gql(fx, 0, "repo_meta", "{\"after\":null,\"name\":\"r\",\"owner\":\"o\",\"types\":true}");
	assert_gql(fx, 1, "set_issue_type", "{\"issue\":\"I_3\",\"type\":\"IT_9\"}");
	assert_canonical(fx->result, "{}");

	/* The types are read once; a type the repository lacks is refused unsent. */
	assert_int_equal(perform(fx, "set_issue_type", "{\"repo\":\"o/r\",\"number\":3,"
		"\"node_id\":\"I_3\",\"issue_type\":\"Epic\"}"), PMBOT_EINVALID);
	assert_contains(fx->err.buf, "o/r has no issue type `Epic`");
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_int_equal(perform(fx, "set_issue_type", "{\"repo\":\"o/r\",\"number\":3,"
		"\"issue_type\":\"Bug\"}"), PMBOT_EINVALID);
	assert_int_equal(fakehttp_count(fx->srv), 2);

	/* GitHub refusing it is a refusal. */
	push(fx, 200, "{\"data\":{\"updateIssueIssueType\":null},\"errors\":[{\"type\":\"NOT_FOUND\","
		"\"message\":\"Could not resolve to a node with the global id of 'I_4'\"}]}");
	assert_true(perform(fx, "set_issue_type", "{\"repo\":\"o/r\",\"number\":4,"
		"\"node_id\":\"I_4\",\"issue_type\":\"Bug\"}") < 0);
	assert_int_equal(fakehttp_count(fx->srv), 3);
}

static void test_github_backend__create_issue_reports_only_the_extras_that_landed(void **state)
{
	fixture *fx = *state;

	/* A user's repository has no issue types: none is set, and that is no error. */
	push_meta(fx, "[]", "null");
	push(fx, 200, "{\"data\":{\"createIssue\":{\"issue\":{\"id\":\"I_1\",\"databaseId\":5,"
		"\"number\":1,\"parent\":{\"id\":\"I_someone_else\"},\"projectItems\":{\"nodes\":[]}}}}}");
	assert_int_equal(perform(fx, "create_issue", "{\"repo\":\"o/r\",\"title\":\"T\",\"body\":\"\","
		"\"labels\":[],\"parent_node_id\":\"I_p\",\"project_node_id\":\"PVT_5\","
		"\"issue_type\":\"task\"}"), 0);
	assert_canonical(fx->result, "{\"database_id\":5,\"node_id\":\"I_1\",\"number\":1}");
}

static void test_github_backend__a_schema_without_issue_types_reads_labels_without_them(
	void **state)
{
	fixture *fx = *state;
	pmbot_buf plain = PMBOT_BUF_INIT;

	/* GitHub Enterprise Server before issue types refuses the whole document, @include or not. */
	push(fx, 200, "{\"errors\":[{\"message\":\"Field 'issueTypes' doesn't exist on type "
		"'Repository'\",\"extensions\":{\"code\":\"undefinedField\"}}]}");
	push_meta(fx, "[{\"id\":\"LA_1\",\"name\":\"a\"}]", "null");
	push(fx, 200, "{\"data\":{\"createIssue\":{\"issue\":{\"id\":\"I_1\",\"databaseId\":5,"
		"\"number\":1,\"parent\":null,\"projectItems\":{\"nodes\":[]}}}}}");
	assert_int_equal(perform(fx, "create_issue", "{\"repo\":\"o/r\",\"title\":\"T\",\"body\":\"\","
		"\"labels\":[\"a\"],\"issue_type\":\"task\"}"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 3);
	assert_gql(fx, 0, "repo_meta", "{\"after\":null,\"name\":\"r\",\"owner\":\"o\",\"types\":true}");
	/* Asked again without the issue types' lines and their variable. */
	assert_int_equal(pmbot_gql_without(&plain, pmbot_gql("repo_meta"), PMBOT_GQL_ISSUE_TYPES), 0);
	assert_null(strstr(plain.buf, "issueTypes"));
	assert_null(strstr(plain.buf, "$types: Boolean"));
	assert_gql_text(fx, 1, plain.buf, "{\"after\":null,\"name\":\"r\",\"owner\":\"o\"}");
	assert_gql(fx, 2, "create_issue", "{\"input\":{\"body\":\"\",\"labelIds\":[\"LA_1\"],"
		"\"repositoryId\":\"R_1\",\"title\":\"T\"}}");
	/* Learnt for the backend: the next issues page does not ask for types either. */
	push_issues(fx, "o/r", json_pack("[]"), NULL);
	assert_int_equal(do_read1(fx, "o/r"), 0);
	assert_null(strstr(req(fx, 3)->body, "issueType"));
	pmbot_buf_free(&plain);
}

static void test_github_backend__a_refused_create_with_extras_is_sent_again_without_them(
	void **state)
{
	fixture *fx = *state;

	push_meta(fx, "[]", "{\"nodes\":[{\"id\":\"IT_9\",\"name\":\"Task\"}]}");
	push(fx, 200, "{\"data\":{\"createIssue\":null},\"errors\":[{\"type\":\"UNPROCESSABLE\","
		"\"path\":[\"createIssue\"],\"message\":\"Parent cannot have more than 100 sub-issues\"}]}");
	push(fx, 200, "{\"data\":{\"createIssue\":{\"issue\":{\"id\":\"I_1\",\"databaseId\":5,"
		"\"number\":1,\"parent\":null,\"projectItems\":{\"nodes\":[]}}}}}");
	assert_int_equal(perform(fx, "create_issue", "{\"repo\":\"o/r\",\"title\":\"T\",\"body\":\"\","
		"\"labels\":[],\"parent_node_id\":\"I_p\",\"issue_type\":\"task\"}"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 3);
	assert_gql(fx, 2, "create_issue", "{\"input\":{\"body\":\"\",\"labelIds\":[],"
		"\"repositoryId\":\"R_1\",\"title\":\"T\"}}");
	assert_canonical(fx->result, "{\"database_id\":5,\"node_id\":\"I_1\",\"number\":1}");

	/* A schema that lacks an input member fails validation: no "data", nothing ran. */
	push(fx, 200, "{\"errors\":[{\"message\":\"InputObject 'CreateIssueInput' doesn't accept "
		"argument 'projectV2Ids'\",\"extensions\":{\"code\":\"argumentNotAccepted\"}}]}");
	push(fx, 200, "{\"data\":{\"createIssue\":{\"issue\":{\"id\":\"I_2\",\"databaseId\":6,"
		"\"number\":2,\"parent\":null,\"projectItems\":{\"nodes\":[]}}}}}");
	assert_int_equal(perform(fx, "create_issue", "{\"repo\":\"o/r\",\"title\":\"T\",\"body\":\"\","
		"\"labels\":[],\"project_node_id\":\"PVT_5\"}"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 5);
	assert_gql(fx, 4, "create_issue", "{\"input\":{\"body\":\"\",\"labelIds\":[],"
		"\"repositoryId\":\"R_1\",\"title\":\"T\"}}");
	assert_canonical(fx->result, "{\"database_id\":6,\"node_id\":\"I_2\",\"number\":2}");

	/* Without extras a refusal is the create's: EINVALID, not sent twice. */
	push(fx, 200, "{\"data\":{\"createIssue\":null},\"errors\":[{\"type\":\"FORBIDDEN\","
		"\"path\":[\"createIssue\"],\"message\":\"Resource not accessible by integration\"}]}");
	assert_int_equal(perform(fx, "create_issue", "{\"repo\":\"o/r\",\"title\":\"T\",\"body\":\"\","
		"\"labels\":[]}"), PMBOT_EINVALID);
	assert_int_equal(fakehttp_count(fx->srv), 6);
	assert_starts_with(fx->err.buf, "create_issue: creating the issue failed: ");
}

static void test_github_backend__a_write_the_budget_stops_is_a_pause_with_its_time(void **state)
{
	fixture *fx = *state;
	const char *args = "{\"repo\":\"o/r\",\"title\":\"T\",\"body\":\"B\\n\",\"labels\":[]}";

	fx->opts.write_budget = "1/100s";
	/* The labels read is no write; the createIssue mutation is the one the budget allows. */
	push_meta(fx, "[]", "null");
	push(fx, 200, "{\"data\":{\"createIssue\":{\"issue\":{\"id\":\"I_kwDOA\",\"databaseId\":1000012,"
		"\"number\":12,\"parent\":null,\"projectItems\":{\"nodes\":[]}}}}}");
	assert_int_equal(perform(fx, "create_issue", args), 0);
	assert_int_equal(fx->b->resume_at, 0);
	/* Not sent, so not "unknown": a pause, with when the window frees (rounded up). */
	assert_int_equal(perform(fx, "create_issue", args), PMBOT_BACKEND_EPAUSED);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_int_equal(fx->b->resume_at, 1700000100);
	assert_contains(fx->err.buf, "not sent: the write budget is spent");
	assert_null(strstr(fx->err.buf, "unknown"));
	/* Reads go on. */
	push_issues(fx, "o/r", json_array(), NULL);
	assert_int_equal(do_read1(fx, "o/r"), PMBOT_OK);
}

static void test_github_backend__create_issue_is_never_retried_and_says_the_outcome_is_unknown(
	void **state)
{
	fixture *fx = *state;
	fakehttp_response cut = { 200, NULL, "{\"data\":{\"createIssue\":{\"issue\":{\"id\":\"I_x\"}}}}",
		0, 0, 5, 0 };
	static const char args[] = "{\"repo\":\"o/r\",\"title\":\"T\",\"body\":\"\",\"labels\":[]}";

	push_meta(fx, "[]", "null");
	/* A cut-off answer: had it been repeated, the empty script would have answered 599. */
	assert_int_equal(fakehttp_push(fx->srv, &cut), 0);
	assert_int_equal(perform(fx, "create_issue", args), PMBOT_ERROR);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_starts_with(fx->err.buf, "create_issue: creating the issue: the outcome is unknown (");

	push(fx, 502, NULL);
	push(fx, 200, "{\"data\":{\"createIssue\":{\"issue\":{\"id\":\"I_x\",\"databaseId\":1,"
		"\"number\":12}}}}");
	assert_int_equal(perform(fx, "create_issue", args), PMBOT_ERROR);
	assert_int_equal(fakehttp_count(fx->srv), 3);
	assert_int_equal(fakehttp_pending(fx->srv), 1);
	assert_starts_with(fx->err.buf, "create_issue: creating the issue: the outcome is unknown (");
	assert_contains(fx->err.buf, "HTTP 502");
	assert_contains(fx->err.buf, "it was not retried: re-read the state");
	assert_int_equal(fx->n_sleeps, 0);
}

static void test_github_backend__create_issue_without_the_new_ids_in_the_answer_fails(
	void **state)
{
	fixture *fx = *state;

	push_meta(fx, "[]", "null");
	push(fx, 200, "{\"data\":{\"createIssue\":{\"issue\":{\"number\":12}}}}");
	assert_int_equal(perform(fx, "create_issue",
		"{\"repo\":\"o/r\",\"title\":\"T\",\"body\":\"\",\"labels\":[]}"), PMBOT_ERROR);
	assert_string_equal(fx->err.buf, "create_issue: GitHub's answer lacks the new issue's "
		"number or ids; re-read the state to learn whether it was created");
}

static void test_github_backend__a_422_is_refused_with_einvalid_and_githubs_message(void **state)
{
	fixture *fx = *state;

	/* A label GitHub refuses, and that the labels read again do not hold either. */
	push_meta(fx, "[]", "null");
	push(fx, 422, "{\"message\":\"Validation Failed\",\"errors\":[{\"field\":\"name\"}]}");
	push_meta(fx, "[]", "null");
	assert_int_equal(perform(fx, "create_issue",
		"{\"repo\":\"o/r\",\"title\":\"T\",\"body\":\"\",\"labels\":[\"x\"]}"), PMBOT_EINVALID);
	assert_starts_with(fx->err.buf, "create_issue: creating a label failed: POST ");
	assert_contains(fx->err.buf, "/repos/o/r/labels: HTTP 422");
	assert_contains(fx->err.buf, "Validation Failed");

	push(fx, 422, "{\"message\":\"Validation Failed\"}");
	assert_int_equal(perform(fx, "update_issue_title",
		"{\"repo\":\"o/r\",\"number\":3,\"title\":\"T\"}"), PMBOT_EINVALID);
	assert_int_equal(fakehttp_count(fx->srv), 4);
	assert_int_equal(fx->n_sleeps, 0);
}

static void test_github_backend__update_title_and_body_patch_only_that_field(void **state)
{
	fixture *fx = *state;

	push(fx, 200, "{\"number\":7}");
	push(fx, 200, "{\"number\":7}");
	assert_int_equal(perform(fx, "update_issue_title",
		"{\"repo\":\"o/r\",\"number\":7,\"title\":\"New title\",\"body\":\"ignored\"}"), 0);
	assert_canonical(fx->result, "{}");
	assert_int_equal(perform(fx, "update_issue_body",
		"{\"repo\":\"o/r\",\"number\":7,\"body\":\"line\\n<!-- x -->\"}"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_rest(fx, 0, "PATCH", "/repos/o/r/issues/7", "{\"title\":\"New title\"}");
	assert_rest(fx, 1, "PATCH", "/repos/o/r/issues/7", "{\"body\":\"line\\n<!-- x -->\"}");
}

static void test_github_backend__update_is_retried_after_a_5xx_and_then_fails_as_error(
	void **state)
{
	fixture *fx = *state;
	static const char args[] = "{\"repo\":\"o/r\",\"number\":7,\"title\":\"T\"}";

	push(fx, 503, NULL);
	push(fx, 200, "{\"number\":7}");
	assert_int_equal(perform(fx, "update_issue_title", args), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_int_equal(fx->n_sleeps, 1);
	assert_rest(fx, 1, "PATCH", "/repos/o/r/issues/7", "{\"title\":\"T\"}");

	/* Still failing after the retries: a failure, not a refusal. */
	push(fx, 502, NULL);
	push(fx, 502, NULL);
	assert_int_equal(perform(fx, "update_issue_title", args), PMBOT_ERROR);
	assert_starts_with(fx->err.buf, "update_issue_title: updating the issue failed: PATCH ");
	assert_int_equal(fakehttp_count(fx->srv), 4);
}

static void test_github_backend__add_labels_posts_the_names_and_skips_an_empty_list(
	void **state)
{
	fixture *fx = *state;

	push(fx, 200, "[{\"name\":\"a\"},{\"name\":\"b c\"}]");
	assert_int_equal(perform(fx, "add_labels",
		"{\"repo\":\"o/r\",\"number\":4,\"labels\":[\"a\",\"b c\"]}"), 0);
	assert_rest(fx, 0, "POST", "/repos/o/r/issues/4/labels", "{\"labels\":[\"a\",\"b c\"]}");
	assert_int_equal(perform(fx, "add_labels", "{\"repo\":\"o/r\",\"number\":4,\"labels\":[]}"),
		0);
	assert_int_equal(fakehttp_count(fx->srv), 1);
}

static void test_github_backend__remove_labels_deletes_each_escaped_and_404_is_already_gone(
	void **state)
{
	fixture *fx = *state;

	push(fx, 200, "[]");
	push(fx, 404, "{\"message\":\"Label does not exist\"}");
	assert_int_equal(perform(fx, "remove_labels",
		"{\"repo\":\"o/r\",\"number\":4,\"labels\":[\"type:task\",\"needs human\"]}"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_rest(fx, 0, "DELETE", "/repos/o/r/issues/4/labels/type%3Atask", NULL);
	assert_rest(fx, 1, "DELETE", "/repos/o/r/issues/4/labels/needs%20human", NULL);
	assert_int_equal(req(fx, 1)->body_len, 0);
}

static void test_github_backend__remove_labels_stops_at_a_refusal_other_than_404(void **state)
{
	fixture *fx = *state;

	push(fx, 403, "{\"message\":\"Must have admin rights to Repository.\"}");
	push(fx, 200, "[]");
	assert_int_equal(perform(fx, "remove_labels",
		"{\"repo\":\"o/r\",\"number\":4,\"labels\":[\"a\",\"b\"]}"), PMBOT_EINVALID);
	assert_starts_with(fx->err.buf, "remove_labels: removing a label failed: DELETE ");
	assert_contains(fx->err.buf, "Must have admin rights");
	assert_int_equal(fakehttp_count(fx->srv), 1);
	assert_int_equal(fakehttp_pending(fx->srv), 1);
}

/* ---- perform: sub-issues ---- */

static const char set_parent_args[] =
	"{\"repo\":\"o/r\",\"number\":3,\"database_id\":1000003,"
	"\"parent_repo\":\"o/epics\",\"parent_number\":1,\"replace\":false}";

static const char parent_is_epic1[] =
	"{\"id\":2000001,\"number\":1,\"repository_url\":\"" API_REPOS "O/Epics\"}";

static void test_github_backend__set_parent_posts_the_childs_database_id_then_reads_back(
	void **state)
{
	fixture *fx = *state;

	push(fx, 201, "{\"id\":2000001,\"number\":1}");
	push(fx, 200, parent_is_epic1);
	assert_int_equal(perform(fx, "set_parent", set_parent_args), 0);
	assert_canonical(fx->result, "{}");
	assert_int_equal(fakehttp_count(fx->srv), 2);
	/* The child's database id, never its number; the parent's repository in the path. */
	assert_rest(fx, 0, "POST", "/repos/o/epics/issues/1/sub_issues",
		"{\"replace_parent\":false,\"sub_issue_id\":1000003}");
	assert_rest(fx, 1, "GET", "/repos/o/r/issues/3/parent", NULL);
}

static void test_github_backend__set_parent_asks_to_replace_only_when_told(void **state)
{
	fixture *fx = *state;

	push(fx, 201, "{}");
	push(fx, 200, parent_is_epic1);
	assert_int_equal(perform(fx, "set_parent",
		"{\"repo\":\"o/r\",\"number\":3,\"database_id\":1000003,"
		"\"parent_repo\":\"o/epics\",\"parent_number\":1,\"replace\":true}"), 0);
	assert_rest(fx, 0, "POST", "/repos/o/epics/issues/1/sub_issues",
		"{\"replace_parent\":true,\"sub_issue_id\":1000003}");

	/* `replace` is required: without it nothing is sent. */
	assert_int_equal(perform(fx, "set_parent",
		"{\"repo\":\"o/r\",\"number\":3,\"database_id\":1000003,"
		"\"parent_repo\":\"o/epics\",\"parent_number\":1}"), PMBOT_EINVALID);
	assert_string_equal(fx->err.buf, "set_parent: argument `replace` must be a boolean");
	assert_int_equal(fakehttp_count(fx->srv), 2);
}

static void test_github_backend__set_parent_fails_when_the_read_back_disagrees(void **state)
{
	fixture *fx = *state;

	push(fx, 201, "{}");
	push(fx, 200, "{\"id\":2000009,\"number\":9,\"repository_url\":\"" API_REPOS "o/epics\"}");
	assert_int_equal(perform(fx, "set_parent", set_parent_args), PMBOT_ERROR);
	assert_string_equal(fx->err.buf, "set_parent: the parent of o/r#3 did not land: GitHub "
		"shows another parent after it accepted o/epics#1");

	push(fx, 201, "{}");
	push(fx, 404, "{\"message\":\"Not Found\"}");
	assert_int_equal(perform(fx, "set_parent", set_parent_args), PMBOT_ERROR);
	assert_string_equal(fx->err.buf, "set_parent: the parent of o/r#3 did not land: GitHub "
		"shows no parent after it accepted o/epics#1");
	assert_int_equal(fakehttp_count(fx->srv), 4);
}

static void test_github_backend__set_parent_422_is_success_when_the_parent_is_already_there(
	void **state)
{
	fixture *fx = *state;

	push(fx, 422, "{\"message\":\"Issue may not contain duplicate sub-issues\"}");
	push(fx, 200, parent_is_epic1);
	assert_int_equal(perform(fx, "set_parent", set_parent_args), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_rest(fx, 1, "GET", "/repos/o/r/issues/3/parent", NULL);
}

static void test_github_backend__set_parent_422_that_did_not_land_is_einvalid_with_the_reason(
	void **state)
{
	fixture *fx = *state;

	push(fx, 422, "{\"message\":\"Sub-issue already has a parent\"}");
	push(fx, 404, "{\"message\":\"Not Found\"}");
	assert_int_equal(perform(fx, "set_parent", set_parent_args), PMBOT_EINVALID);
	assert_starts_with(fx->err.buf, "set_parent: GitHub refused to make o/r#3 a sub-issue of "
		"o/epics#1: ");
	/* The reason is the refusal's, not the read-back's. */
	assert_contains(fx->err.buf, "HTTP 422");
	assert_contains(fx->err.buf, "Sub-issue already has a parent");
}

static void test_github_backend__set_parent_read_back_skips_the_etag_cache(void **state)
{
	fixture *fx = *state;

	use_cache(fx);
	push(fx, 201, "{}");
	push_h(fx, 200, "ETag: \"p1\"\r\n", parent_is_epic1);
	push(fx, 201, "{}");
	push_h(fx, 200, "ETag: \"p1\"\r\n", parent_is_epic1);
	assert_int_equal(perform(fx, "set_parent", set_parent_args), 0);
	assert_int_equal(perform(fx, "set_parent", set_parent_args), 0);
	assert_int_equal(fakehttp_count(fx->srv), 4);
	assert_rest(fx, 3, "GET", "/repos/o/r/issues/3/parent", NULL);
	assert_null(fakehttp_header_value(req(fx, 3), "If-None-Match"));
}

/* ---- perform: dependencies ---- */

static const char dep_args[] =
	"{\"repo\":\"o/r\",\"number\":3,\"blocker_repo\":\"o/r\",\"blocker_number\":2,"
	"\"blocker_database_id\":1000002}";

static const char blocked_by_2[] =
	"[{\"id\":1000002,\"number\":2,\"repository_url\":\"" API_REPOS "o/r\"}]";

static void test_github_backend__add_dependency_posts_the_blockers_database_id_then_reads_back(
	void **state)
{
	fixture *fx = *state;

	push(fx, 201, "{}");
	push(fx, 200, blocked_by_2);
	assert_int_equal(perform(fx, "add_dependency", dep_args), 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_rest(fx, 0, "POST", "/repos/o/r/issues/3/dependencies/blocked_by",
		"{\"issue_id\":1000002}");
	assert_rest(fx, 1, "GET", "/repos/o/r/issues/3/dependencies/blocked_by?per_page=100", NULL);
}

static void test_github_backend__add_dependency_fails_when_the_edge_did_not_land(void **state)
{
	fixture *fx = *state;

	push(fx, 201, "{}");
	push(fx, 200, "[{\"id\":1000005,\"number\":5}]");
	assert_int_equal(perform(fx, "add_dependency", dep_args), PMBOT_ERROR);
	assert_string_equal(fx->err.buf, "add_dependency: o/r#3 is not blocked by o/r#2 after "
		"GitHub accepted the change: it did not land");
}

static void test_github_backend__add_dependency_422_is_success_only_when_the_edge_exists(
	void **state)
{
	fixture *fx = *state;

	push(fx, 422, "{\"message\":\"Dependency already exists\"}");
	push(fx, 200, blocked_by_2);
	assert_int_equal(perform(fx, "add_dependency", dep_args), 0);

	push(fx, 422, "{\"message\":\"Issue has reached the dependency limit\"}");
	push(fx, 200, "[]");
	assert_int_equal(perform(fx, "add_dependency", dep_args), PMBOT_EINVALID);
	assert_starts_with(fx->err.buf, "add_dependency: GitHub refused: POST ");
	assert_contains(fx->err.buf, "HTTP 422");
	assert_contains(fx->err.buf, "the dependency limit");
	assert_int_equal(fakehttp_count(fx->srv), 4);
}

static void test_github_backend__remove_dependency_deletes_by_database_id_then_reads_back(
	void **state)
{
	fixture *fx = *state;

	push(fx, 200, "{}");
	push(fx, 200, "[]");
	assert_int_equal(perform(fx, "remove_dependency", dep_args), 0);
	assert_rest(fx, 0, "DELETE", "/repos/o/r/issues/3/dependencies/blocked_by/1000002", NULL);
	assert_rest(fx, 1, "GET", "/repos/o/r/issues/3/dependencies/blocked_by?per_page=100", NULL);

	/* Already gone (404) and shown gone: success. */
	push(fx, 404, "{\"message\":\"Not Found\"}");
	push(fx, 200, "[]");
	assert_int_equal(perform(fx, "remove_dependency", dep_args), 0);

	/* Accepted but still there: failure. */
	push(fx, 204, NULL);
	push(fx, 200, blocked_by_2);
	assert_int_equal(perform(fx, "remove_dependency", dep_args), PMBOT_ERROR);
	assert_string_equal(fx->err.buf, "remove_dependency: o/r#3 is still blocked by o/r#2 after "
		"GitHub accepted the change: it did not land");
	assert_int_equal(fakehttp_count(fx->srv), 6);
}

static void test_github_backend__dependency_read_back_skips_the_cache_the_read_filled(
	void **state)
{
	fixture *fx = *state;

	use_cache(fx);
	/* More blockers than a page: the read lists them through REST, filling the cache. */
	push_issues(fx, "o/r", json_pack("[o]", with_blockers(node(3, MARKER("task:c"), user("a")),
		51, NULL, 0)), NULL);
	push_h(fx, 200, "ETag: \"d1\"\r\n", "[]");
	assert_int_equal(do_read1(fx, "o/r"), 0);
	push(fx, 201, "{}");
	push_h(fx, 200, "ETag: \"d2\"\r\n", blocked_by_2);
	assert_int_equal(perform(fx, "add_dependency", dep_args), 0);
	assert_int_equal(fakehttp_count(fx->srv), 4);
	assert_rest(fx, 3, "GET", "/repos/o/r/issues/3/dependencies/blocked_by?per_page=100", NULL);
	assert_null(fakehttp_header_value(req(fx, 3), "If-None-Match"));
}

/* ---- perform: the board ---- */

static void test_github_backend__add_to_project_sends_board_and_issue_node_ids(void **state)
{
	fixture *fx = *state;

	read_board(fx);
	push(fx, 200, "{\"data\":{\"addProjectV2ItemById\":{\"item\":{\"id\":\"PVTI_new\"}}}}");
	assert_int_equal(perform(fx, "add_to_project",
		"{\"repo\":\"o/r\",\"number\":3,\"node_id\":\"I_3\"}"), 0);
	assert_gql(fx, 1, "add_project_item", "{\"content\":\"I_3\",\"project\":\"PVT_5\"}");
	assert_canonical(fx->result, "{\"item_id\":\"PVTI_new\"}");
}

static void test_github_backend__add_to_project_already_there_with_an_item_is_success(
	void **state)
{
	fixture *fx = *state;
	static const char args[] = "{\"repo\":\"o/r\",\"number\":1,\"node_id\":\"I_1\"}";

	read_board(fx);
	push(fx, 200, "{\"data\":{\"addProjectV2ItemById\":{\"item\":{\"id\":\"PVTI_1\"}}},"
		"\"errors\":[{\"type\":\"UNPROCESSABLE\",\"message\":\"Content already exists in this "
		"project\"}]}");
	assert_int_equal(perform(fx, "add_to_project", args), 0);
	assert_canonical(fx->result, "{\"item_id\":\"PVTI_1\"}");

	/* A refusal without an item is one. */
	push(fx, 200, "{\"data\":{\"addProjectV2ItemById\":null},\"errors\":[{\"type\":\"FORBIDDEN\","
		"\"message\":\"Resource not accessible by integration\"}]}");
	assert_int_equal(perform(fx, "add_to_project", args), PMBOT_EINVALID);
	assert_starts_with(fx->err.buf, "add_to_project: adding the issue to the project failed: ");
	assert_contains(fx->err.buf, "Resource not accessible by integration");

	/* An answer naming no item cannot be used. */
	push(fx, 200, "{\"data\":{\"addProjectV2ItemById\":{\"item\":null}}}");
	assert_int_equal(perform(fx, "add_to_project", args), PMBOT_ERROR);
	assert_string_equal(fx->err.buf, "add_to_project: GitHub named no project item; re-read the "
		"state");
	assert_int_equal(fakehttp_count(fx->srv), 4);
}

static void test_github_backend__set_project_field_sends_one_value_kind_per_field_type(
	void **state)
{
	fixture *fx = *state;
	static const char ok[] =
		"{\"data\":{\"updateProjectV2ItemFieldValue\":{\"projectV2Item\":{\"id\":\"PVTI_1\"}}}}";
	int i;

	read_board(fx);
	for (i = 0; i < 5; i++)
		push(fx, 200, ok);
	assert_int_equal(perform(fx, "set_project_field", "{\"repo\":\"o/r\",\"number\":1,"
		"\"item_id\":\"PVTI_1\",\"field\":\"Notes\",\"field_id\":\"PVTF_notes\","
		"\"value\":\"hello\",\"option_id\":null}"), 0);
	assert_int_equal(perform(fx, "set_project_field", "{\"repo\":\"o/r\",\"number\":1,"
		"\"item_id\":\"PVTI_1\",\"field\":\"Estimate\",\"field_id\":\"PVTF_est\","
		"\"value\":3.5}"), 0);
	assert_int_equal(perform(fx, "set_project_field", "{\"repo\":\"o/r\",\"number\":1,"
		"\"item_id\":\"PVTI_1\",\"field\":\"Due\",\"field_id\":\"PVTF_due\","
		"\"value\":\"2026-02-01\"}"), 0);
	assert_int_equal(perform(fx, "set_project_field", "{\"repo\":\"o/r\",\"number\":1,"
		"\"item_id\":\"PVTI_1\",\"field\":\"Status\",\"field_id\":\"PVTSSF_status\","
		"\"value\":\"Done\",\"option_id\":\"opt_done\"}"), 0);
	assert_int_equal(perform(fx, "set_project_field", "{\"repo\":\"o/r\",\"number\":1,"
		"\"item_id\":\"PVTI_1\",\"field\":\"Status\",\"field_id\":\"PVTSSF_status\","
		"\"value\":null,\"option_id\":null}"), 0);
	assert_int_equal(fakehttp_count(fx->srv), 6);
	assert_gql(fx, 1, "set_project_field", "{\"field\":\"PVTF_notes\",\"item\":\"PVTI_1\","
		"\"project\":\"PVT_5\",\"value\":{\"text\":\"hello\"}}");
	assert_gql(fx, 2, "set_project_field", "{\"field\":\"PVTF_est\",\"item\":\"PVTI_1\","
		"\"project\":\"PVT_5\",\"value\":{\"number\":3.5}}");
	assert_gql(fx, 3, "set_project_field", "{\"field\":\"PVTF_due\",\"item\":\"PVTI_1\","
		"\"project\":\"PVT_5\",\"value\":{\"date\":\"2026-02-01\"}}");
	assert_gql(fx, 4, "set_project_field", "{\"field\":\"PVTSSF_status\",\"item\":\"PVTI_1\","
		"\"project\":\"PVT_5\",\"value\":{\"singleSelectOptionId\":\"opt_done\"}}");
	/* A null value clears the field instead. */
	assert_gql(fx, 5, "set_project_field", "{\"clear\":true,\"field\":\"PVTSSF_status\","
		"\"item\":\"PVTI_1\",\"project\":\"PVT_5\"}");
}

static void test_github_backend__set_project_field_refuses_a_value_that_does_not_fit(
	void **state)
{
	fixture *fx = *state;

	read_board(fx);
	/* The option id is resolved by the executor; the backend will not guess it from a name. */
	assert_int_equal(perform(fx, "set_project_field", "{\"repo\":\"o/r\",\"number\":1,"
		"\"item_id\":\"PVTI_1\",\"field\":\"Status\",\"field_id\":\"PVTSSF_status\","
		"\"value\":\"Done\"}"), PMBOT_EINVALID);
	assert_string_equal(fx->err.buf,
		"set_project_field: the value does not fit field 'Status' (single_select)");
	assert_int_equal(perform(fx, "set_project_field", "{\"repo\":\"o/r\",\"number\":1,"
		"\"item_id\":\"PVTI_1\",\"field\":\"Estimate\",\"field_id\":\"PVTF_est\","
		"\"value\":\"four\"}"), PMBOT_EINVALID);
	assert_string_equal(fx->err.buf,
		"set_project_field: the value does not fit field 'Estimate' (number)");
	assert_int_equal(perform(fx, "set_project_field", "{\"repo\":\"o/r\",\"number\":1,"
		"\"item_id\":\"PVTI_1\",\"field\":\"Owner\",\"field_id\":\"PVTF_owner\","
		"\"value\":\"x\"}"), PMBOT_EINVALID);
	assert_string_equal(fx->err.buf, "set_project_field: the value does not fit field 'Owner' "
		"(not a field of the project read)");
	assert_int_equal(fakehttp_count(fx->srv), 1);
}

static void test_github_backend__set_project_field_graphql_refusal_is_einvalid_internal_is_error(
	void **state)
{
	fixture *fx = *state;
	static const char args[] = "{\"repo\":\"o/r\",\"number\":1,\"item_id\":\"PVTI_1\","
		"\"field\":\"Notes\",\"field_id\":\"PVTF_notes\",\"value\":\"x\"}";

	read_board(fx);
	push(fx, 200, "{\"data\":null,\"errors\":[{\"type\":\"NOT_FOUND\",\"message\":\"Could not "
		"resolve to a node with the global id of 'PVTI_1'\"}]}");
	assert_int_equal(perform(fx, "set_project_field", args), PMBOT_EINVALID);
	assert_starts_with(fx->err.buf, "set_project_field: setting the field failed: POST ");
	assert_contains(fx->err.buf, "NOT_FOUND");

	push(fx, 200, "{\"data\":null,\"errors\":[{\"type\":\"INTERNAL\",\"message\":\"Something "
		"went wrong\"}]}");
	assert_int_equal(perform(fx, "set_project_field", args), PMBOT_ERROR);
	assert_int_equal(fakehttp_count(fx->srv), 3);
}

/* ---- perform: arguments and secrets ---- */

static void test_github_backend__refuses_unknown_operations_and_bad_arguments_unasked(
	void **state)
{
	fixture *fx = *state;
	json_t *arr = json_array();
	json_t *res = (json_t *)1;

	assert_int_equal(perform(fx, "close_issue", "{\"repo\":\"o/r\",\"number\":1}"),
		PMBOT_EINVALID);
	assert_string_equal(fx->err.buf, "(unknown): unknown operation");
	assert_int_equal(perform(fx, "update_issue_title", "{\"repo\":\"o/r\",\"title\":\"T\"}"),
		PMBOT_EINVALID);
	assert_string_equal(fx->err.buf,
		"update_issue_title: argument `number` must be a positive integer");
	assert_int_equal(perform(fx, "create_issue",
		"{\"repo\":\"o/r\",\"title\":\"T\",\"body\":\"\",\"labels\":\"a\"}"), PMBOT_EINVALID);
	assert_int_equal(perform(fx, "add_dependency", "{\"repo\":\"o/r\",\"number\":3,"
		"\"blocker_repo\":\"o/r\",\"blocker_number\":2}"), PMBOT_EINVALID);
	assert_string_equal(fx->err.buf,
		"add_dependency: argument `blocker_database_id` must be a positive integer");
	assert_int_equal(perform(fx, "remove_labels",
		"{\"repo\":\"o/r\",\"number\":3,\"labels\":[7]}"), PMBOT_EINVALID);
	assert_string_equal(fx->err.buf, "remove_labels: every label must be a string");

	pmbot_buf_clear(&fx->err);
	assert_int_equal(fx->b->perform(&res, fx->b, PMBOT_OP_ADD_LABELS, arr, &fx->err), PMBOT_EINVALID);
	assert_null(res);
	assert_string_equal(fx->err.buf, "add_labels: the arguments must be an object");
	json_decref(arr);
	assert_int_equal(fakehttp_count(fx->srv), 0);
}

static void test_github_backend__err_never_holds_the_token_even_when_github_echoes_it(
	void **state)
{
	fixture *fx = *state;

	/* perform() and do_read() assert the token is absent from every err. */
	push(fx, 401, "{\"message\":\"Bad credentials for " TOKEN "\"}");
	assert_int_equal(perform(fx, "update_issue_title",
		"{\"repo\":\"o/r\",\"number\":3,\"title\":\"T\"}"), PMBOT_EINVALID);
	assert_contains(fx->err.buf, "Bad credentials for [REDACTED]");

	push(fx, 200, "{\"errors\":[{\"type\":\"FORBIDDEN\",\"message\":\"token " TOKEN
		" lacks scope\"}]}");
	assert_int_equal(do_read1(fx, "o/r"), PMBOT_ERROR);
	assert_contains(fx->err.buf, "[REDACTED]");

	push_meta(fx, "[]", "null");
	push(fx, 502, "{\"message\":\"" TOKEN "\"}");
	assert_int_equal(perform(fx, "create_issue",
		"{\"repo\":\"o/r\",\"title\":\"T\",\"body\":\"\",\"labels\":[]}"), PMBOT_ERROR);
	assert_contains(fx->err.buf, "the outcome is unknown");

	/* The token was in use all along. */
	assert_int_equal(fakehttp_count(fx->srv), 4);
	assert_string_equal(fakehttp_header_value(req(fx, 3), "Authorization"), "Bearer " TOKEN);
}

/* ---- perform_batch: aliased field updates ---- */

typedef struct {
	json_t *args;          /* the array sent */
	json_t **results;
	int *codes;
	pmbot_buf *errs;
	size_t n;
} batch_run;

/* perform_batch over the entries of `args_json` (an array); free with batch_free. */
static int batch(fixture *fx, batch_run *r, json_t *args)
{
	const json_t **a;
	size_t i;
	int rc;

	assert_non_null(args);
	r->args = args;
	r->n = json_array_size(args);
	r->results = calloc(r->n + 1, sizeof(*r->results));
	r->codes = calloc(r->n + 1, sizeof(*r->codes));
	r->errs = calloc(r->n + 1, sizeof(*r->errs));
	a = calloc(r->n + 1, sizeof(*a));
	assert_true(r->results && r->codes && r->errs && a);
	for (i = 0; i < r->n; i++) {
		a[i] = json_array_get(args, i);
		pmbot_buf_init(&r->errs[i], 0);
	}
	assert_non_null(backend(fx)->perform_batch);
	rc = fx->b->perform_batch(r->results, r->codes, fx->b, PMBOT_OP_SET_PROJECT_FIELD, a, r->n, r->errs);
	for (i = 0; i < r->n; i++) {
		if (r->codes[i] == 0) {
			assert_true(json_is_object(r->results[i]));
			assert_int_equal(r->errs[i].len, 0);
		} else {
			assert_null(r->results[i]);
			assert_starts_with(r->errs[i].buf, "set_project_field: ");
		}
		assert_null(strstr(r->errs[i].len ? r->errs[i].buf : "", TOKEN));
	}
	free(a);
	return rc;
}

static void batch_free(batch_run *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		json_decref(r->results[i]);
		pmbot_buf_free(&r->errs[i]);
	}
	free(r->results);
	free(r->codes);
	free(r->errs);
	json_decref(r->args);
}

static json_t *dep_batch_args(long number, const char *node, long blocker, long long db, const char *bnode)
{
	return json_pack("{s:s, s:i, s:s, s:s, s:i, s:I, s:s}", "repo", "o/r", "number", (int)number,
		"node_id", node, "blocker_repo", "o/r", "blocker_number", (int)blocker,
		"blocker_database_id", (json_int_t)db, "blocker_node_id", bnode);
}

static void test_github_backend__dependency_edges_go_in_one_aliased_request_and_refusals_alone(
	void **state)
{
	fixture *fx = *state;
	json_t *args = json_pack("[o, o]", dep_batch_args(3, "I_3", 1, 1001, "I_1"),
		dep_batch_args(4, "I_4", 2, 1002, "I_2"));
	const json_t *a[2] = { json_array_get(args, 0), json_array_get(args, 1) };
	json_t *results[2] = { NULL, NULL };
	int codes[2];
	pmbot_buf errs[2] = { PMBOT_BUF_INIT, PMBOT_BUF_INIT };
	json_t *sent;

	/* d1: GitHub refuses (the edge exists); alone through REST its read-back settles it. */
	push(fx, 200, "{\"data\":{\"d0\":{\"issue\":{\"id\":\"I_3\"}},\"d1\":null},\"errors\":[{"
		"\"type\":\"UNPROCESSABLE\",\"path\":[\"d1\"],\"message\":\"already blocked\"}]}");
	push(fx, 422, "{\"message\":\"Validation Failed\"}");
	push(fx, 200, "[{\"id\":1002,\"number\":2,\"repository_url\":\"https://api.github.com/repos/o/r\"}]");
	assert_int_equal(backend(fx)->perform_batch(results, codes, fx->b, PMBOT_OP_ADD_DEPENDENCY, a, 2, errs),
		0);
	assert_int_equal(codes[0], 0);
	assert_int_equal(codes[1], 0);
	assert_true(json_is_object(results[0]) && json_is_object(results[1]));
	assert_int_equal(fakehttp_count(fx->srv), 3);
	sent = json_loads(req(fx, 0)->body, 0, NULL);
	assert_non_null(sent);
	assert_string_equal(json_string_value(json_object_get(sent, "query")),
		"mutation PmBotDependencies($i0: ID!, $b0: ID!, $i1: ID!, $b1: ID!) {\n"
		"  d0: addBlockedBy(input: {issueId: $i0, blockingIssueId: $b0}) {\n    issue {\n"
		"      id\n    }\n  }\n"
		"  d1: addBlockedBy(input: {issueId: $i1, blockingIssueId: $b1}) {\n    issue {\n"
		"      id\n    }\n  }\n}\n");
	assert_canonical(json_object_get(sent, "variables"),
		"{\"b0\":\"I_1\",\"b1\":\"I_2\",\"i0\":\"I_3\",\"i1\":\"I_4\"}");
	json_decref(sent);
	assert_rest(fx, 1, "POST", "/repos/o/r/issues/4/dependencies/blocked_by", "{\"issue_id\":1002}");
	json_decref(results[0]);
	json_decref(results[1]);
	results[0] = results[1] = NULL;

	/* remove_dependency goes as removeBlockedBy; a request that fails fails every alias. */
	push(fx, 404, "{\"message\":\"Not Found\"}");
	assert_int_equal(fx->b->perform_batch(results, codes, fx->b, PMBOT_OP_REMOVE_DEPENDENCY, a, 2, errs),
		0);
	assert_int_equal(codes[0], PMBOT_EINVALID);
	assert_int_equal(codes[1], PMBOT_EINVALID);
	assert_null(results[0]);
	assert_contains(req(fx, 3)->body, "removeBlockedBy");
	assert_starts_with(errs[1].buf, "remove_dependency: changing the dependency failed");
	assert_int_equal(fakehttp_count(fx->srv), 4);
	pmbot_buf_free(&errs[0]);
	pmbot_buf_free(&errs[1]);
	json_decref(args);
}

static json_t *text_args(const char *item, const char *value)
{
	return json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:n}", "repo", "o/r", "number", 1,
		"item_id", item, "field", "Notes", "field_id", "PVTF_notes", "value", value,
		"option_id");
}

static void test_github_backend__batch_sends_one_aliased_document_with_variables_per_alias(
	void **state)
{
	fixture *fx = *state;
	batch_run r;
	const fakehttp_request *q;
	json_t *sent;

	read_board(fx);
	push(fx, 200, "{\"data\":{"
		"\"f0\":{\"projectV2Item\":{\"id\":\"PVTI_1\"}},"
		"\"f1\":{\"projectV2Item\":{\"id\":\"PVTI_2\"}},"
		"\"f2\":{\"projectV2Item\":{\"id\":\"PVTI_3\"}}}}");
	assert_int_equal(batch(fx, &r, json_pack("[o, {s:s, s:i, s:s, s:s, s:s, s:s, s:s}, "
		"{s:s, s:i, s:s, s:s, s:s, s:n, s:n}]",
		text_args("PVTI_1", "hello"),
		"repo", "o/r", "number", 2, "item_id", "PVTI_2", "field", "Status", "field_id",
		"PVTSSF_status", "value", "Done", "option_id", "opt_done",
		"repo", "o/r", "number", 3, "item_id", "PVTI_3", "field", "Estimate", "field_id",
		"PVTF_est", "value", "option_id")), 0);
	assert_int_equal(r.codes[0], 0);
	assert_int_equal(r.codes[1], 0);
	assert_int_equal(r.codes[2], 0);
	assert_int_equal(fakehttp_count(fx->srv), 2);
	q = req(fx, 1);
	assert_string_equal(q->method, "POST");
	assert_string_equal(q->target, "/graphql");
	sent = json_loads(q->body, 0, NULL);
	assert_non_null(sent);
	assert_string_equal(json_string_value(json_object_get(sent, "query")),
		"mutation PmBotSetProjectFields($project: ID!, $item0: ID!, $field0: ID!, "
		"$value0: ProjectV2FieldValue!, $item1: ID!, $field1: ID!, $value1: ProjectV2FieldValue!, "
		"$item2: ID!, $field2: ID!) {\n"
		"  f0: updateProjectV2ItemFieldValue(input: {projectId: $project, itemId: $item0, "
		"fieldId: $field0, value: $value0}) {\n    projectV2Item {\n      id\n    }\n  }\n"
		"  f1: updateProjectV2ItemFieldValue(input: {projectId: $project, itemId: $item1, "
		"fieldId: $field1, value: $value1}) {\n    projectV2Item {\n      id\n    }\n  }\n"
		"  f2: clearProjectV2ItemFieldValue(input: {projectId: $project, itemId: $item2, "
		"fieldId: $field2}) {\n    projectV2Item {\n      id\n    }\n  }\n"
		"}\n");
	assert_canonical(json_object_get(sent, "variables"),
		"{\"field0\":\"PVTF_notes\",\"field1\":\"PVTSSF_status\",\"field2\":\"PVTF_est\","
		"\"item0\":\"PVTI_1\",\"item1\":\"PVTI_2\",\"item2\":\"PVTI_3\",\"project\":\"PVT_5\","
		"\"value0\":{\"text\":\"hello\"},\"value1\":{\"singleSelectOptionId\":\"opt_done\"}}");
	assert_string_equal(fakehttp_header_value(q, "Authorization"), "Bearer " TOKEN);
	json_decref(sent);
	batch_free(&r);
}

static void test_github_backend__batch_settles_each_alias_and_a_bad_one_fails_alone(
	void **state)
{
	fixture *fx = *state;
	batch_run r;

	read_board(fx);
	push(fx, 200, "{\"data\":{\"f0\":{\"projectV2Item\":{\"id\":\"PVTI_1\"}},\"f1\":null,"
		"\"f2\":{\"projectV2Item\":{\"id\":\"PVTI_3\"}},\"f3\":null},"
		"\"errors\":[{\"type\":\"NOT_FOUND\",\"path\":[\"f1\"],\"message\":\"Could not resolve "
		"to a node with the global id of 'PVTI_bad'\"},"
		"{\"type\":\"INTERNAL\",\"path\":[\"f3\"],\"message\":\"Something went wrong\"}]}");
	assert_int_equal(batch(fx, &r, json_pack("[o, o, o, o, o]", text_args("PVTI_1", "a"),
		text_args("PVTI_bad", "b"), text_args("PVTI_3", "c"), text_args("PVTI_4", "d"),
		json_pack("{s:s, s:i, s:s, s:s, s:s, s:s}", "repo", "o/r", "number", 5, "item_id",
			"PVTI_5", "field", "Estimate", "field_id", "PVTF_est", "value", "four"))), 0);
	assert_int_equal(r.codes[0], 0);
	/* A refusal naming the alias is that entry's refusal only. */
	assert_int_equal(r.codes[1], PMBOT_EINVALID);
	assert_string_equal(r.errs[1].buf, "set_project_field: setting the field failed: GitHub: "
		"Could not resolve to a node with the global id of 'PVTI_bad' (NOT_FOUND)");
	assert_int_equal(r.codes[2], 0);
	/* GitHub's own failure may go away: an error the executor may retry. */
	assert_int_equal(r.codes[3], PMBOT_ERROR);
	assert_contains(r.errs[3].buf, "Something went wrong (INTERNAL)");
	/* A value that does not fit is refused unsent, as perform refuses it. */
	assert_int_equal(r.codes[4], PMBOT_EINVALID);
	assert_string_equal(r.errs[4].buf,
		"set_project_field: the value does not fit field 'Estimate' (number)");
	assert_int_equal(fakehttp_count(fx->srv), 2);
	assert_null(strstr(req(fx, 1)->body, "PVTI_5"));
	batch_free(&r);
}

static void test_github_backend__batch_of_120_takes_three_requests_of_at_most_50(void **state)
{
	fixture *fx = *state;
	json_t *args = json_array();
	batch_run r;
	size_t i, k, sizes[3] = { 50, 50, 20 };
	char item[32];

	read_board(fx);
	for (i = 0; i < 120; i++) {
		snprintf(item, sizeof(item), "PVTI_%zu", i);
		json_array_append_new(args, text_args(item, "v"));
	}
	for (k = 0; k < 3; k++) {
		json_t *data = json_object();

		for (i = 0; i < sizes[k]; i++) {
			char alias[32];

			snprintf(alias, sizeof(alias), "f%zu", i);
			snprintf(item, sizeof(item), "PVTI_%zu", k * 50 + i);
			json_object_set_new(data, alias, json_pack("{s:{s:s}}", "projectV2Item", "id",
				item));
		}
		push_json(fx, json_pack("{s:o}", "data", data));
	}
	assert_int_equal(batch(fx, &r, args), 0);
	for (i = 0; i < 120; i++)
		assert_int_equal(r.codes[i], 0);
	assert_int_equal(fakehttp_count(fx->srv), 4);
	for (k = 0; k < 3; k++) {
		json_t *sent = json_loads(req(fx, 1 + k)->body, 0, NULL);
		const json_t *vars = json_object_get(sent, "variables");
		const char *doc = json_string_value(json_object_get(sent, "query"));
		char last[32];

		/* project + item, field and value per alias; aliases restart at f0 in each request. */
		assert_int_equal(json_object_size(vars), 1 + 3 * sizes[k]);
		snprintf(item, sizeof(item), "PVTI_%zu", k * 50);
		assert_string_equal(json_string_value(json_object_get(vars, "item0")), item);
		snprintf(last, sizeof(last), "  f%zu: ", sizes[k] - 1);
		assert_non_null(strstr(doc, last));
		snprintf(last, sizeof(last), "  f%zu: ", sizes[k]);
		assert_null(strstr(doc, last));
		json_decref(sent);
	}
	batch_free(&r);
}

static void test_github_backend__batch_whole_request_failure_settles_every_entry_alike(
	void **state)
{
	fixture *fx = *state;
	batch_run r;

	read_board(fx);
	/* Repeat-safe: a 502 is retried once (max_retries 1), then every entry fails as an error. */
	push(fx, 502, "{\"message\":\"Bad Gateway\"}");
	push(fx, 502, "{\"message\":\"Bad Gateway\"}");
	assert_int_equal(batch(fx, &r, json_pack("[o, o]", text_args("PVTI_1", "a"),
		text_args("PVTI_2", "b"))), 0);
	assert_int_equal(r.codes[0], PMBOT_ERROR);
	assert_int_equal(r.codes[1], PMBOT_ERROR);
	assert_starts_with(r.errs[0].buf, "set_project_field: setting the field failed: POST ");
	assert_string_equal(r.errs[0].buf, r.errs[1].buf);
	assert_int_equal(fakehttp_count(fx->srv), 3);
	batch_free(&r);

	/* A document-level error (no path) is every alias's; a refusal stays a refusal. */
	push(fx, 200, "{\"errors\":[{\"type\":\"MAX_NODE_LIMIT_EXCEEDED\",\"message\":\"too big\"}]}");
	assert_int_equal(batch(fx, &r, json_pack("[o, o]", text_args("PVTI_1", "a"),
		text_args("PVTI_2", "b"))), 0);
	assert_int_equal(r.codes[0], PMBOT_EINVALID);
	assert_int_equal(r.codes[1], PMBOT_EINVALID);
	assert_contains(r.errs[1].buf, "too big (MAX_NODE_LIMIT_EXCEEDED)");
	batch_free(&r);

	/* Only set_project_field is batched: anything else is declined unsent. */
	{
		const json_t *one[1];
		json_t *res[1] = { NULL }, *a = text_args("PVTI_1", "a");
		int codes[1] = { 7 };
		pmbot_buf e[1] = { PMBOT_BUF_INIT };

		one[0] = a;
		assert_int_equal(fx->b->perform_batch(res, codes, fx->b, PMBOT_OP_ADD_LABELS, one, 1, e),
			PMBOT_EINVALID);
		assert_int_equal(codes[0], 7);
		assert_int_equal(e[0].len, 0);
		json_decref(a);
	}
	assert_int_equal(fakehttp_count(fx->srv), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_github_backend__read_sends_the_issues_document_without_a_cursor_first),
		T(test_github_backend__read_maps_every_field_of_an_issue_node),
		T(test_github_backend__read_follows_end_cursor_one_request_per_page),
		T(test_github_backend__read_reads_a_repository_named_twice_once),
		T(test_github_backend__read_gives_bot_authors_their_rest_login),
		T(test_github_backend__read_gives_a_deleted_author_as_ghost),
		T(test_github_backend__read_takes_blockers_from_the_issue_page),
		T(test_github_backend__read_asks_rest_only_for_an_issue_with_more_blockers_than_a_page),
		T(test_github_backend__read_fails_when_a_dependency_list_cannot_be_read),
		T(test_github_backend__read_learns_ghes_lacks_sub_issues_and_dependencies),
		T(test_github_backend__read_learns_each_missing_feature_on_its_own),
		T(test_github_backend__scoped_read_with_every_id_found_reads_only_its_own_issues),
		T(test_github_backend__scoped_read_proves_a_missing_id_absent_by_reading_everything),
		T(test_github_backend__scoped_read_fetches_numbered_issues_by_number),
		T(test_github_backend__scoped_read_counts_an_unreadable_marked_issue_as_found),
		T(test_github_backend__scoped_read_without_a_login_reads_everything),
		T(test_github_backend__read_fails_without_crashing_on_malformed_answers),
		T(test_github_backend__read_refuses_answers_that_do_not_form_a_valid_state),
		T(test_github_backend__read_leaves_out_issues_a_forbidden_partial_answer_hides),
	T(test_github_backend__read_without_unreadable_issues_has_no_extra),
	T(test_github_backend__read_still_fails_on_errors_other_than_forbidden_in_a_node),
	T(test_github_backend__read_asks_for_an_organization_board_first),
		T(test_github_backend__read_falls_back_to_a_user_board_on_not_found),
		T(test_github_backend__read_gives_no_project_when_neither_owner_has_the_board),
		T(test_github_backend__read_pages_through_board_items_with_the_cursor),
		T(test_github_backend__create_issue_is_one_createIssue_with_labels_parent_board_and_type),
		T(test_github_backend__read_takes_issue_types_and_the_repositorys_types_from_the_page),
		T(test_github_backend__read_learns_a_github_without_issue_types),
		T(test_github_backend__set_issue_type_is_one_updateIssueIssueType),
		T(test_github_backend__dependency_edges_go_in_one_aliased_request_and_refusals_alone),
		T(test_github_backend__create_issue_reports_only_the_extras_that_landed),
		T(test_github_backend__a_refused_create_with_extras_is_sent_again_without_them),
		T(test_github_backend__a_schema_without_issue_types_reads_labels_without_them),
		T(test_github_backend__a_write_the_budget_stops_is_a_pause_with_its_time),
		T(test_github_backend__create_issue_is_never_retried_and_says_the_outcome_is_unknown),
		T(test_github_backend__create_issue_without_the_new_ids_in_the_answer_fails),
		T(test_github_backend__a_422_is_refused_with_einvalid_and_githubs_message),
		T(test_github_backend__update_title_and_body_patch_only_that_field),
		T(test_github_backend__update_is_retried_after_a_5xx_and_then_fails_as_error),
		T(test_github_backend__add_labels_posts_the_names_and_skips_an_empty_list),
		T(test_github_backend__remove_labels_deletes_each_escaped_and_404_is_already_gone),
		T(test_github_backend__remove_labels_stops_at_a_refusal_other_than_404),
		T(test_github_backend__set_parent_posts_the_childs_database_id_then_reads_back),
		T(test_github_backend__set_parent_asks_to_replace_only_when_told),
		T(test_github_backend__set_parent_fails_when_the_read_back_disagrees),
		T(test_github_backend__set_parent_422_is_success_when_the_parent_is_already_there),
		T(test_github_backend__set_parent_422_that_did_not_land_is_einvalid_with_the_reason),
		T(test_github_backend__set_parent_read_back_skips_the_etag_cache),
		T(test_github_backend__add_dependency_posts_the_blockers_database_id_then_reads_back),
		T(test_github_backend__add_dependency_fails_when_the_edge_did_not_land),
		T(test_github_backend__add_dependency_422_is_success_only_when_the_edge_exists),
		T(test_github_backend__remove_dependency_deletes_by_database_id_then_reads_back),
		T(test_github_backend__dependency_read_back_skips_the_cache_the_read_filled),
		T(test_github_backend__add_to_project_sends_board_and_issue_node_ids),
		T(test_github_backend__add_to_project_already_there_with_an_item_is_success),
		T(test_github_backend__set_project_field_sends_one_value_kind_per_field_type),
		T(test_github_backend__set_project_field_refuses_a_value_that_does_not_fit),
		T(test_github_backend__set_project_field_graphql_refusal_is_einvalid_internal_is_error),
		T(test_github_backend__refuses_unknown_operations_and_bad_arguments_unasked),
		T(test_github_backend__err_never_holds_the_token_even_when_github_echoes_it),
		T(test_github_backend__batch_sends_one_aliased_document_with_variables_per_alias),
		T(test_github_backend__batch_settles_each_alias_and_a_bad_one_fails_alone),
		T(test_github_backend__batch_of_120_takes_three_requests_of_at_most_50),
		T(test_github_backend__batch_whole_request_failure_settles_every_entry_alike),
	};
#undef T
	int rc;

	if (pmbot_net_global_init(NULL) < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	pmbot_net_global_cleanup();
	return rc;
}
