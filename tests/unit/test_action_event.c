#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pmbot/action.h"
#include "pmbot/fs.h"
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

#define HASH "5d41402abc4b2a76b9719d911017c592a3f0b5c4d1e2f3a4b5c6d7e8f9a0b1c2"
#define HASH_UPPER "5D41402ABC4B2A76B9719D911017C592A3F0B5C4D1E2F3A4B5C6D7E8F9A0B1C2"
#define HEAD_SHA "6dcb09b5b57875f334f61aebed695e2e4193db5e"

/* ---- helpers ---- */

static void print_diags(const pmbot_diag_list *l)
{
	size_t i;

	for (i = 0; i < l->count; i++)
		print_message("have: %s %s: %s\n", l->items[i].code, l->items[i].path,
			l->items[i].message);
}

static void fail_listing(const pmbot_diag_list *l, const char *what)
{
	print_diags(l);
	fail_msg("%s", what);
}

/* The event name a fixture is for: its file name up to the first dot. */
static char *event_name_of(const char *fixture)
{
	size_t n = strcspn(fixture, ".");
	char *name = malloc(n + 1);

	assert_non_null(name);
	memcpy(name, fixture, n);
	name[n] = '\0';
	return name;
}

static json_t *load_fixture(const char *fixture)
{
	pmbot_buf path = PMBOT_BUF_INIT;
	json_error_t jerr;
	json_t *root;

	assert_int_equal(pmbot_buf_printf(&path, "tests/fixtures/events/%s.json", fixture), 0);
	root = json_load_file(path.buf, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		fail_msg("%s: %s", path.buf, jerr.text);
	pmbot_buf_free(&path);
	return root;
}

/* Parse the fixture's bytes exactly as they are on disk. */
static int parse_fixture(pmbot_event **ev, const char *fixture, pmbot_diag_list *diags)
{
	pmbot_buf path = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;
	char *name = event_name_of(fixture);
	int rc;

	assert_int_equal(pmbot_buf_printf(&path, "tests/fixtures/events/%s.json", fixture), 0);
	assert_int_equal(pmbot_fs_read(&text, path.buf), 0);
	rc = pmbot_event_parse(ev, name, text.buf, text.len, diags);
	free(name);
	pmbot_buf_free(&path);
	pmbot_buf_free(&text);
	return rc;
}

/* A fixture that must parse; fails the test with the diagnostics otherwise. */
static pmbot_event *fixture_event(const char *fixture)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = NULL;
	if (parse_fixture(&ev, fixture, &diags) != PMBOT_OK)
		fail_listing(&diags, fixture);
	assert_int_equal(diags.count, 0);
	pmbot_diag_list_free(&diags);
	assert_non_null(ev);
	return ev;
}

/*
 * Replace (or, with `value` NULL, delete) the member at `ptr`, a pointer
 * whose tokens need no escaping and whose parents exist. Steals `value`.
 */
static void set_at(json_t *root, const char *ptr, json_t *value)
{
	char *copy = strdup(ptr), *tok, *slash;
	json_t *cur = root;

	assert_non_null(copy);
	assert_int_equal(copy[0], '/');
	tok = copy + 1;
	while ((slash = strchr(tok, '/'))) {
		*slash = '\0';
		cur = json_object_get(cur, tok);
		if (!json_is_object(cur))
			fail_msg("no object at %s in %s", tok, ptr);
		tok = slash + 1;
	}
	if (value)
		assert_int_equal(json_object_set_new(cur, tok, value), 0);
	else
		assert_int_equal(json_object_del(cur, tok), 0);
	free(copy);
}

/* Serialize `root` (consumed) and parse it as `event_name`. */
static int parse_root(pmbot_event **ev, const char *event_name, json_t *root,
	pmbot_diag_list *diags)
{
	char *text = json_dumps(root, JSON_COMPACT);
	int rc;

	assert_non_null(text);
	json_decref(root);
	rc = pmbot_event_parse(ev, event_name, text, strlen(text), diags);
	free(text);
	return rc;
}

static int parse_text(pmbot_event **ev, const char *event_name, const char *text,
	pmbot_diag_list *diags)
{
	return pmbot_event_parse(ev, event_name, text, strlen(text), diags);
}

/* The error with this code at this path; fails the test (listing what there is) when none. */
static const pmbot_diag *expect_diag(const pmbot_diag_list *l, const char *code, const char *path)
{
	size_t i;

	for (i = 0; i < l->count; i++) {
		const pmbot_diag *d = &l->items[i];

		if (!strcmp(d->code, code) && !strcmp(d->path, path)) {
			assert_int_equal(d->severity, PMBOT_SEV_ERROR);
			return d;
		}
	}
	print_diags(l);
	fail_msg("no %s at %s", code, path);
	return NULL;
}

static void expect_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("\"%s\" lacks \"%s\"", haystack, needle);
}

/* Edit one member of a fixture, expect rejection with exactly one error: `code` at `path`. */
static const pmbot_diag *expect_edit_rejected(pmbot_diag_list *diags, const char *fixture,
	const char *ptr, json_t *value, const char *code, const char *path)
{
	char *name = event_name_of(fixture);
	json_t *root = load_fixture(fixture);
	pmbot_event *ev = (pmbot_event *)&ev;

	pmbot_diag_list_free(diags);
	set_at(root, ptr, value);
	assert_int_equal(parse_root(&ev, name, root, diags), PMBOT_EINVALID);
	assert_null(ev);
	free(name);
	if (diags->count != 1)
		fail_listing(diags, "expected exactly one diagnostic");
	return expect_diag(diags, code, path);
}

/* Edit one member of a fixture and parse it; it must be accepted. */
static pmbot_event *edited_event(const char *fixture, const char *ptr, json_t *value)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	char *name = event_name_of(fixture);
	json_t *root = load_fixture(fixture);
	pmbot_event *ev = NULL;

	set_at(root, ptr, value);
	if (parse_root(&ev, name, root, &diags) != PMBOT_OK)
		fail_listing(&diags, "the edited payload was rejected");
	pmbot_diag_list_free(&diags);
	free(name);
	return ev;
}

static pmbot_event_action decide_fixture(const char *fixture)
{
	pmbot_event *ev = fixture_event(fixture);
	const char *why = NULL;
	pmbot_event_action act = pmbot_event_decide(ev, &why);

	assert_non_null(why);
	assert_true(why[0] != '\0');
	pmbot_event_free(ev);
	return act;
}

static pmbot_command_kind command_of(const char *body, pmbot_command *cmd)
{
	/* Finding no command, or one pm-bot does not know, is an answer, not a failure. */
	assert_int_equal(pmbot_command_parse(cmd, body), PMBOT_OK);
	if (cmd->kind != PMBOT_CMD_APPLY)
		assert_string_equal(cmd->hash, "");
	if (cmd->kind != PMBOT_CMD_UNKNOWN)
		assert_string_equal(cmd->word, "");
	return cmd->kind;
}

static void expect_unknown(const char *body, const char *word)
{
	pmbot_command cmd;

	assert_int_equal(command_of(body, &cmd), PMBOT_CMD_UNKNOWN);
	assert_string_equal(cmd.word, word);
}

static void expect_none(const char *body)
{
	pmbot_command cmd;

	assert_int_equal(command_of(body, &cmd), PMBOT_CMD_NONE);
}

static void expect_plan(const char *body)
{
	pmbot_command cmd;

	assert_int_equal(command_of(body, &cmd), PMBOT_CMD_PLAN);
}

static pmbot_config *config_from(const char *yaml)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	assert_int_equal(pmbot_config_parse(&cfg, ".github/pm-bot.yml", yaml, strlen(yaml),
		"acme/widgets", &diags), PMBOT_OK);
	pmbot_diag_list_free(&diags);
	return cfg;
}

/* The approval answer, with the reason checked to be one non-empty line. */
static int approve(const pmbot_config *cfg, const char *login, const char *perm, pmbot_buf *reason)
{
	int rc;

	pmbot_buf_clear(reason);
	rc = pmbot_approval_check(reason, cfg, login, perm);
	assert_true(reason->len > 0);
	assert_null(strchr(reason->buf, '\n'));
	return rc;
}

/* ---- parsing the fixtures ---- */

static void test_event__parses_a_pull_request_opened_payload(void **state)
{
	pmbot_event *ev = fixture_event("pull_request.opened");

	(void)state;
	assert_int_equal(ev->kind, PMBOT_EV_PULL_REQUEST);
	assert_string_equal(ev->name, "pull_request");
	assert_string_equal(ev->action, "opened");
	assert_string_equal(ev->repo, "acme/widgets");
	assert_string_equal(ev->default_branch, "main");
	assert_int_equal(ev->number, 12);
	assert_true(ev->is_pull_request);
	assert_string_equal(ev->head_sha, HEAD_SHA);
	assert_string_equal(ev->head_repo, "acme/widgets");
	assert_string_equal(ev->base_ref, "main");
	assert_string_equal(ev->base_repo, "acme/widgets");
	assert_false(ev->is_fork);
	assert_string_equal(ev->sender, "alice");
	assert_int_equal(ev->comment_id, 0);
	assert_null(ev->comment_body);
	assert_null(ev->comment_author);
	assert_null(ev->ref);
	assert_null(ev->after);
	pmbot_event_free(ev);
}

static void test_event__synchronize_carries_the_new_head_sha(void **state)
{
	pmbot_event *ev = fixture_event("pull_request.synchronize");

	(void)state;
	assert_string_equal(ev->action, "synchronize");
	assert_string_equal(ev->head_sha, "c4f1e3a9d0b2e7f61a8d5c3b9e0f7a2d4c6b8e1f");
	/* The payload's top-level "after" is a pull_request field, not a push's. */
	assert_null(ev->after);
	pmbot_event_free(ev);
}

static void test_event__marks_a_pull_request_from_another_repository_as_a_fork(void **state)
{
	pmbot_event *ev = fixture_event("pull_request.opened.fork");

	(void)state;
	assert_true(ev->is_fork);
	assert_string_equal(ev->head_repo, "mallory/widgets");
	assert_string_equal(ev->base_repo, "acme/widgets");
	assert_string_equal(ev->repo, "acme/widgets");
	assert_int_equal(ev->number, 13);
	assert_string_equal(ev->sender, "mallory");
	pmbot_event_free(ev);
}

static void test_event__fork_detection_ignores_the_case_of_repository_names(void **state)
{
	pmbot_event *ev = edited_event("pull_request.opened", "/pull_request/head/repo/full_name",
		json_string("ACME/Widgets"));

	(void)state;
	assert_false(ev->is_fork);
	assert_string_equal(ev->head_repo, "ACME/Widgets");
	pmbot_event_free(ev);
}

static void test_event__a_deleted_head_repository_counts_as_a_fork(void **state)
{
	pmbot_event *ev = edited_event("pull_request.closed", "/pull_request/head/repo", json_null());

	(void)state;
	assert_null(ev->head_repo);
	assert_true(ev->is_fork);
	assert_string_equal(ev->head_sha, HEAD_SHA);
	pmbot_event_free(ev);
}

static void test_event__parses_a_comment_on_a_pull_request(void **state)
{
	pmbot_event *ev = fixture_event("issue_comment.created.pr");

	(void)state;
	assert_int_equal(ev->kind, PMBOT_EV_ISSUE_COMMENT);
	assert_string_equal(ev->action, "created");
	assert_int_equal(ev->number, 12);
	assert_true(ev->is_pull_request);
	assert_true(ev->comment_id == 2090000001LL);
	assert_string_equal(ev->comment_body,
		"Looks right to me.\r\n\r\n/pm-bot apply " HASH_UPPER "\r\n");
	assert_string_equal(ev->comment_author, "bob");
	assert_false(ev->comment_author_is_bot);
	assert_string_equal(ev->sender, "bob");
	/* The pull request's head is fetched by the caller, not carried by the comment. */
	assert_null(ev->head_sha);
	assert_null(ev->base_repo);
	assert_false(ev->is_fork);
	pmbot_event_free(ev);
}

static void test_event__parses_a_comment_on_a_plain_issue(void **state)
{
	pmbot_event *ev = fixture_event("issue_comment.created.issue");

	(void)state;
	assert_int_equal(ev->number, 40);
	assert_false(ev->is_pull_request);
	assert_string_equal(ev->comment_author, "alice");
	pmbot_event_free(ev);
}

static void test_event__a_null_issue_pull_request_is_a_plain_issue(void **state)
{
	pmbot_event *ev = edited_event("issue_comment.created.pr", "/issue/pull_request",
		json_null());

	(void)state;
	assert_false(ev->is_pull_request);
	pmbot_event_free(ev);
}

static void test_event__recognises_bot_comments_by_user_type(void **state)
{
	pmbot_event *ev = fixture_event("issue_comment.created.bot");
	pmbot_event *typed = edited_event("issue_comment.created.pr", "/comment/user/type",
		json_string("Bot"));

	(void)state;
	assert_string_equal(ev->comment_author, "github-actions[bot]");
	assert_true(ev->comment_author_is_bot);
	/* An app whose login lacks the suffix is still a bot when GitHub says so. */
	assert_string_equal(typed->comment_author, "bob");
	assert_true(typed->comment_author_is_bot);
	pmbot_event_free(ev);
	pmbot_event_free(typed);
}

static void test_event__recognises_bot_comments_by_login_suffix(void **state)
{
	json_t *root = load_fixture("issue_comment.created.pr");
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = NULL;

	(void)state;
	set_at(root, "/comment/user/login", json_string("Renovate[BOT]"));
	set_at(root, "/comment/user/type", NULL);
	assert_int_equal(parse_root(&ev, "issue_comment", root, &diags), PMBOT_OK);
	assert_true(ev->comment_author_is_bot);
	pmbot_event_free(ev);
	/* "[bot]" in the middle of a login is not the suffix. */
	ev = edited_event("issue_comment.created.pr", "/comment/user/login",
		json_string("bot-fan[bot]x"));
	assert_false(ev->comment_author_is_bot);
	pmbot_event_free(ev);
	pmbot_diag_list_free(&diags);
}

static void test_event__a_comment_without_a_user_has_no_author(void **state)
{
	pmbot_event *ev = edited_event("issue_comment.created.pr", "/comment/user", json_null());
	const char *why = NULL;

	(void)state;
	assert_null(ev->comment_author);
	assert_false(ev->comment_author_is_bot);
	assert_int_equal(pmbot_event_decide(ev, &why), PMBOT_ACT_IGNORE);
	expect_contains(why, "author");
	pmbot_event_free(ev);
}

static void test_event__parses_push_ref_and_after(void **state)
{
	pmbot_event *ev = fixture_event("push.main");

	(void)state;
	assert_int_equal(ev->kind, PMBOT_EV_PUSH);
	assert_null(ev->action);
	assert_string_equal(ev->ref, "refs/heads/main");
	assert_string_equal(ev->after, "e5bd3914e2e596debea16f433f57875b5b90bcd6");
	assert_string_equal(ev->repo, "acme/widgets");
	assert_string_equal(ev->default_branch, "main");
	assert_int_equal(ev->number, 0);
	assert_false(ev->is_pull_request);
	assert_string_equal(ev->sender, "alice");
	pmbot_event_free(ev);
}

static void test_event__schedule_and_workflow_dispatch_carry_the_repository(void **state)
{
	pmbot_event *sched = fixture_event("schedule");
	pmbot_event *manual = fixture_event("workflow_dispatch");

	(void)state;
	assert_int_equal(sched->kind, PMBOT_EV_SCHEDULE);
	assert_string_equal(sched->repo, "acme/widgets");
	assert_string_equal(sched->default_branch, "main");
	assert_null(sched->sender);
	assert_null(sched->action);
	assert_int_equal(manual->kind, PMBOT_EV_WORKFLOW_DISPATCH);
	assert_string_equal(manual->repo, "acme/widgets");
	assert_string_equal(manual->sender, "alice");
	pmbot_event_free(sched);
	pmbot_event_free(manual);
}

static void test_event__schedule_without_repository_is_accepted(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = NULL;

	(void)state;
	assert_int_equal(parse_text(&ev, "schedule", "{\"schedule\":\"17 3 * * *\"}", &diags),
		PMBOT_OK);
	assert_int_equal(ev->kind, PMBOT_EV_SCHEDULE);
	assert_null(ev->repo);
	assert_null(ev->default_branch);
	assert_int_equal(diags.count, 0);
	pmbot_event_free(ev);
}

static void test_event__other_event_names_are_other_and_need_no_fields(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = NULL;

	(void)state;
	assert_int_equal(parse_text(&ev, "issues", "{\"action\":\"labeled\"}", &diags), PMBOT_OK);
	assert_int_equal(ev->kind, PMBOT_EV_OTHER);
	assert_string_equal(ev->name, "issues");
	assert_string_equal(ev->action, "labeled");
	assert_null(ev->repo);
	pmbot_event_free(ev);
	/* Same payload as pull_request, but another trust model: not handled. */
	assert_int_equal(parse_root(&ev, "pull_request_target", load_fixture("pull_request.opened"),
		&diags), PMBOT_OK);
	assert_int_equal(ev->kind, PMBOT_EV_OTHER);
	assert_false(ev->is_pull_request);
	assert_null(ev->head_sha);
	pmbot_event_free(ev);
	/* Event names are matched exactly. */
	assert_int_equal(parse_text(&ev, "Push", "{}", &diags), PMBOT_OK);
	assert_int_equal(ev->kind, PMBOT_EV_OTHER);
	pmbot_event_free(ev);
	assert_int_equal(diags.count, 0);
}

static void test_event__same_bytes_give_the_same_event(void **state)
{
	pmbot_event *a = fixture_event("issue_comment.created.pr");
	pmbot_event *b = fixture_event("issue_comment.created.pr");

	(void)state;
	assert_string_equal(a->comment_body, b->comment_body);
	assert_string_equal(a->repo, b->repo);
	assert_true(a->comment_id == b->comment_id);
	assert_ptr_not_equal(a->comment_body, b->comment_body);
	pmbot_event_free(a);
	pmbot_event_free(b);
}

/* ---- malformed payloads ---- */

static void test_event__rejects_bytes_that_are_not_json(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = (pmbot_event *)&ev;
	const pmbot_diag *d;

	(void)state;
	assert_int_equal(parse_text(&ev, "push", "{\n  \"ref\": \"refs/heads/main\",\n  oops\n}",
		&diags), PMBOT_EINVALID);
	assert_null(ev);
	assert_int_equal(diags.count, 1);
	d = expect_diag(&diags, "EVENT_PARSE", "");
	assert_int_equal(d->line, 3);
	assert_true(d->column >= 3);
	assert_null(d->file);
	expect_contains(d->message, "not valid JSON");
	pmbot_diag_list_free(&diags);
}

static void test_event__rejects_an_empty_payload(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = (pmbot_event *)&ev;

	(void)state;
	assert_int_equal(pmbot_event_parse(&ev, "push", NULL, 0, &diags), PMBOT_EINVALID);
	assert_null(ev);
	expect_contains(expect_diag(&diags, "EVENT_PARSE", "")->message, "empty");
	pmbot_diag_list_free(&diags);
}

static void test_event__rejects_a_payload_over_the_size_limit(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = (pmbot_event *)&ev;
	size_t len = PMBOT_EVENT_MAX_BYTES + 1;
	char *big = malloc(len);

	(void)state;
	assert_non_null(big);
	memset(big, ' ', len);
	big[0] = '{';
	big[len - 1] = '}';
	assert_int_equal(pmbot_event_parse(&ev, "push", big, len, &diags), PMBOT_EINVALID);
	assert_null(ev);
	expect_contains(expect_diag(&diags, "EVENT_PARSE", "")->message, "limit");
	free(big);
	pmbot_diag_list_free(&diags);
}

static void test_event__rejects_duplicate_keys(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = (pmbot_event *)&ev;

	(void)state;
	assert_int_equal(parse_text(&ev, "push",
		"{\"ref\":\"refs/heads/main\",\"ref\":\"refs/heads/x\"}", &diags), PMBOT_EINVALID);
	assert_null(ev);
	assert_int_equal(expect_diag(&diags, "EVENT_PARSE", "")->line, 1);
	pmbot_diag_list_free(&diags);
}

static void test_event__rejects_invalid_utf8_and_nul(void **state)
{
	static const char bad_utf8[] = "{\"action\":\"op\xc3\x28ned\"}";
	static const char raw_nul[] = "{\"action\":\"a\0b\"}";
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = (pmbot_event *)&ev;

	(void)state;
	assert_int_equal(parse_text(&ev, "issues", bad_utf8, &diags), PMBOT_EINVALID);
	assert_null(ev);
	expect_diag(&diags, "EVENT_PARSE", "");
	pmbot_diag_list_free(&diags);
	assert_int_equal(parse_text(&ev, "issues", "{\"action\":\"a\\u0000b\"}", &diags),
		PMBOT_EINVALID);
	expect_diag(&diags, "EVENT_PARSE", "");
	pmbot_diag_list_free(&diags);
	assert_int_equal(pmbot_event_parse(&ev, "issues", raw_nul, sizeof(raw_nul) - 1, &diags),
		PMBOT_EINVALID);
	expect_diag(&diags, "EVENT_PARSE", "");
	pmbot_diag_list_free(&diags);
}

static void test_event__parse_error_messages_escape_the_input(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = NULL;
	const pmbot_diag *d;

	(void)state;
	assert_int_equal(parse_text(&ev, "push", "{\"ref\": `x\x1b[31m}", &diags), PMBOT_EINVALID);
	d = expect_diag(&diags, "EVENT_PARSE", "");
	assert_null(strchr(d->message, '\x1b'));
	assert_null(strchr(d->message, '`'));
	pmbot_diag_list_free(&diags);
}

static void test_event__root_must_be_an_object(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = (pmbot_event *)&ev;

	(void)state;
	assert_int_equal(parse_text(&ev, "push", "[1, 2]", &diags), PMBOT_EINVALID);
	assert_null(ev);
	expect_contains(expect_diag(&diags, "EVENT_FIELD", "")->message, "not an array");
	pmbot_diag_list_free(&diags);
	assert_int_equal(parse_text(&ev, "schedule", "\"17 3 * * *\"", &diags), PMBOT_EINVALID);
	expect_contains(expect_diag(&diags, "EVENT_FIELD", "")->message, "not a string");
	pmbot_diag_list_free(&diags);
}

static void test_event__rejects_a_missing_event_name(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = (pmbot_event *)&ev;

	(void)state;
	assert_int_equal(parse_text(&ev, NULL, "{}", &diags), PMBOT_EINVALID);
	assert_null(ev);
	expect_contains(expect_diag(&diags, "EVENT_FIELD", "")->message, "GITHUB_EVENT_NAME");
	pmbot_diag_list_free(&diags);
	assert_int_equal(parse_text(&ev, "", "{}", &diags), PMBOT_EINVALID);
	expect_diag(&diags, "EVENT_FIELD", "");
	pmbot_diag_list_free(&diags);
}

static void test_event__missing_repository_is_reported_at_its_pointer(void **state)
{
	static const char *const fixtures[] = {
		"pull_request.opened", "issue_comment.created.pr", "push.main", "workflow_dispatch"
	};
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		const pmbot_diag *d = expect_edit_rejected(&diags, fixtures[i], "/repository", NULL,
			"EVENT_FIELD", "/repository");

		expect_contains(d->message, "missing");
	}
	pmbot_diag_list_free(&diags);
}

static void test_event__missing_required_fields_are_reported_at_their_pointers(void **state)
{
	static const struct {
		const char *fixture, *ptr;
	} cases[] = {
		{ "pull_request.opened", "/action" },
		{ "pull_request.opened", "/number" },
		{ "pull_request.opened", "/pull_request/head/sha" },
		{ "pull_request.opened", "/pull_request/head/repo" },
		{ "pull_request.opened", "/pull_request/base/ref" },
		{ "pull_request.opened", "/pull_request/base/repo" },
		{ "pull_request.opened", "/repository/full_name" },
		{ "pull_request.opened", "/repository/default_branch" },
		{ "issue_comment.created.pr", "/action" },
		{ "issue_comment.created.pr", "/issue/number" },
		{ "issue_comment.created.pr", "/comment/id" },
		{ "issue_comment.created.pr", "/comment/body" },
		{ "issue_comment.created.pr", "/comment/user" },
		{ "issue_comment.created.pr", "/comment/user/login" },
		{ "issue_comment.created.pr", "/sender/login" },
		{ "push.main", "/ref" },
		{ "push.main", "/after" },
		{ "schedule", "/repository/default_branch" },
	};
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const pmbot_diag *d = expect_edit_rejected(&diags, cases[i].fixture, cases[i].ptr,
			NULL, "EVENT_FIELD", cases[i].ptr);

		expect_contains(d->message, cases[i].ptr);
		expect_contains(d->message, "missing");
	}
	pmbot_diag_list_free(&diags);
}

static void test_event__a_missing_parent_is_reported_once_not_per_child(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;

	(void)state;
	expect_edit_rejected(&diags, "pull_request.opened", "/pull_request", NULL, "EVENT_FIELD",
		"/pull_request");
	expect_edit_rejected(&diags, "issue_comment.created.pr", "/comment", json_string("hi"),
		"EVENT_FIELD", "/comment");
	pmbot_diag_list_free(&diags);
}

static void test_event__wrong_types_are_reported_at_their_pointers(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;

	(void)state;
	d = expect_edit_rejected(&diags, "pull_request.opened", "/number", json_string("12"),
		"EVENT_FIELD", "/number");
	expect_contains(d->message, "must be an integer, not a string");
	d = expect_edit_rejected(&diags, "pull_request.opened", "/pull_request/head/sha",
		json_integer(7), "EVENT_FIELD", "/pull_request/head/sha");
	expect_contains(d->message, "must be a string, not an integer");
	d = expect_edit_rejected(&diags, "pull_request.opened", "/pull_request/head/repo",
		json_string("acme/widgets"), "EVENT_FIELD", "/pull_request/head/repo");
	expect_contains(d->message, "must be an object or null, not a string");
	d = expect_edit_rejected(&diags, "pull_request.opened", "/pull_request/base/repo",
		json_null(), "EVENT_FIELD", "/pull_request/base/repo");
	expect_contains(d->message, "must be an object, not null");
	d = expect_edit_rejected(&diags, "issue_comment.created.pr", "/comment/id",
		json_real(1.5), "EVENT_FIELD", "/comment/id");
	expect_contains(d->message, "not a number");
	d = expect_edit_rejected(&diags, "issue_comment.created.pr", "/issue/pull_request",
		json_true(), "EVENT_FIELD", "/issue/pull_request");
	expect_contains(d->message, "not a boolean");
	expect_edit_rejected(&diags, "issue_comment.created.pr", "/comment/body", json_null(),
		"EVENT_FIELD", "/comment/body");
	expect_edit_rejected(&diags, "issue_comment.created.pr", "/comment/user/type",
		json_integer(1), "EVENT_FIELD", "/comment/user/type");
	expect_edit_rejected(&diags, "push.main", "/repository", json_array(), "EVENT_FIELD",
		"/repository");
	expect_edit_rejected(&diags, "push.main", "/sender", json_string("alice"), "EVENT_FIELD",
		"/sender");
	expect_edit_rejected(&diags, "schedule", "/repository", json_integer(1), "EVENT_FIELD",
		"/repository");
	expect_edit_rejected(&diags, "push.main", "/ref", json_null(), "EVENT_FIELD", "/ref");
	pmbot_diag_list_free(&diags);
}

static void test_event__rejects_malformed_values(void **state)
{
	static const struct {
		const char *fixture, *ptr, *value;
	} cases[] = {
		{ "pull_request.opened", "/pull_request/head/sha", "abc" },
		{ "pull_request.opened", "/pull_request/head/sha", "6DCB09B5B57875F334F61AEBED695E2E4193DB5E" },
		{ "pull_request.opened", "/pull_request/head/sha", "6dcb09b5b57875f334f61aebed695e2e4193db5g" },
		{ "pull_request.opened", "/pull_request/head/repo/full_name", "widgets" },
		{ "pull_request.opened", "/pull_request/base/repo/full_name", "acme/wid gets" },
		{ "pull_request.opened", "/repository/full_name", "acme/widgets/extra" },
		{ "pull_request.opened", "/repository/full_name", "acme/.." },
		{ "pull_request.opened", "/repository/full_name", "/widgets" },
		{ "pull_request.opened", "/repository/default_branch", "" },
		{ "pull_request.opened", "/repository/default_branch", "../../etc" },
		{ "pull_request.opened", "/repository/default_branch", "-main" },
		{ "pull_request.opened", "/repository/default_branch", "main.lock" },
		{ "pull_request.opened", "/repository/default_branch", "ma in" },
		{ "pull_request.opened", "/repository/default_branch", "ma\nin" },
		{ "pull_request.opened", "/pull_request/base/ref", "main~1" },
		{ "pull_request.opened", "/pull_request/base/ref", "a@{1}" },
		{ "pull_request.opened", "/action", "" },
		{ "push.main", "/after", "0000" },
		{ "push.main", "/ref", "" },
		{ "push.main", "/ref", "refs/heads/ma\rin" },
		{ "issue_comment.created.pr", "/comment/user/login", "bob smith" },
		{ "issue_comment.created.pr", "/comment/user/login", "" },
		{ "issue_comment.created.pr", "/sender/login", "b\x1b[0mob" },
	};
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const pmbot_diag *d = expect_edit_rejected(&diags, cases[i].fixture, cases[i].ptr,
			json_string(cases[i].value), "EVENT_FIELD", cases[i].ptr);

		expect_contains(d->message, "must be");
		/* The bad value is quoted with control characters escaped. */
		assert_null(strchr(d->message, '\n'));
		assert_null(strchr(d->message, '\x1b'));
	}
	pmbot_diag_list_free(&diags);
}

static void test_event__numbers_must_be_positive(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *d;

	(void)state;
	d = expect_edit_rejected(&diags, "pull_request.opened", "/number", json_integer(0),
		"EVENT_FIELD", "/number");
	expect_contains(d->message, "positive");
	expect_edit_rejected(&diags, "issue_comment.created.pr", "/issue/number", json_integer(-4),
		"EVENT_FIELD", "/issue/number");
	expect_edit_rejected(&diags, "pull_request.opened", "/number", json_integer(2147483648LL),
		"EVENT_FIELD", "/number");
	expect_edit_rejected(&diags, "issue_comment.created.pr", "/comment/id", json_integer(0),
		"EVENT_FIELD", "/comment/id");
	pmbot_diag_list_free(&diags);
}

static void test_event__every_problem_is_reported_at_once(void **state)
{
	json_t *root = load_fixture("pull_request.opened");
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = (pmbot_event *)&ev;

	(void)state;
	set_at(root, "/number", json_string("12"));
	set_at(root, "/pull_request/head/sha", json_string("nope"));
	set_at(root, "/pull_request/base/ref", NULL);
	set_at(root, "/repository/default_branch", json_integer(3));
	set_at(root, "/sender/login", NULL);
	assert_int_equal(parse_root(&ev, "pull_request", root, &diags), PMBOT_EINVALID);
	assert_null(ev);
	assert_int_equal(diags.count, 5);
	assert_int_equal(diags.errors, 5);
	expect_diag(&diags, "EVENT_FIELD", "/number");
	expect_diag(&diags, "EVENT_FIELD", "/pull_request/head/sha");
	expect_diag(&diags, "EVENT_FIELD", "/pull_request/base/ref");
	expect_diag(&diags, "EVENT_FIELD", "/repository/default_branch");
	expect_diag(&diags, "EVENT_FIELD", "/sender/login");
	pmbot_diag_list_free(&diags);
}

static void test_event__existing_diagnostics_are_kept(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = NULL;

	(void)state;
	assert_int_equal(pmbot_diag_add(&diags, PMBOT_SEV_WARNING, "EARLIER", "x", "", 0, 0, "w"), 0);
	assert_int_equal(parse_text(&ev, "push", "nope", &diags), PMBOT_EINVALID);
	assert_int_equal(diags.count, 2);
	assert_string_equal(diags.items[0].code, "EARLIER");
	assert_string_equal(diags.items[1].code, "EVENT_PARSE");
	pmbot_diag_list_free(&diags);
	/* And a good payload after an earlier error still parses: only its own errors count. */
	assert_int_equal(pmbot_diag_add(&diags, PMBOT_SEV_ERROR, "EARLIER", NULL, "", 0, 0, "e"), 0);
	assert_int_equal(parse_fixture(&ev, "push.main", &diags), PMBOT_OK);
	assert_non_null(ev);
	assert_int_equal(diags.count, 1);
	pmbot_event_free(ev);
	pmbot_diag_list_free(&diags);
}

static void test_event__unused_fields_are_not_checked(void **state)
{
	json_t *root = load_fixture("pull_request.opened");
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = NULL;

	(void)state;
	set_at(root, "/pull_request/title", json_integer(5));
	set_at(root, "/organization", json_string("acme"));
	set_at(root, "/installation", json_pack("{s:I}", "id", (json_int_t)1));
	assert_int_equal(parse_root(&ev, "pull_request", root, &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	pmbot_event_free(ev);
	pmbot_event_free(NULL);
}

/* ---- deciding ---- */

static void test_decide__plans_pull_requests_opened_synchronized_or_reopened(void **state)
{
	(void)state;
	assert_int_equal(decide_fixture("pull_request.opened"), PMBOT_ACT_PLAN_PR);
	assert_int_equal(decide_fixture("pull_request.synchronize"), PMBOT_ACT_PLAN_PR);
	assert_int_equal(decide_fixture("pull_request.reopened"), PMBOT_ACT_PLAN_PR);
}

static void test_decide__plans_fork_pull_requests_too(void **state)
{
	(void)state;
	/* Where the plan goes (comment or step summary) is the caller's choice. */
	assert_int_equal(decide_fixture("pull_request.opened.fork"), PMBOT_ACT_PLAN_PR);
}

static void test_decide__ignores_other_pull_request_activity(void **state)
{
	static const char *const actions[] = { "labeled", "edited", "ready_for_review", "Opened" };
	const char *why = NULL;
	size_t i;

	(void)state;
	assert_int_equal(decide_fixture("pull_request.closed"), PMBOT_ACT_IGNORE);
	for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		pmbot_event *ev = edited_event("pull_request.opened", "/action",
			json_string(actions[i]));

		assert_int_equal(pmbot_event_decide(ev, &why), PMBOT_ACT_IGNORE);
		expect_contains(why, "pull_request");
		pmbot_event_free(ev);
	}
}

static void test_decide__takes_a_created_comment_with_a_command(void **state)
{
	(void)state;
	assert_int_equal(decide_fixture("issue_comment.created.pr"), PMBOT_ACT_COMMAND);
	/* Plain issues too: the caller knows which one is the field-sync tracking issue. */
	assert_int_equal(decide_fixture("issue_comment.created.issue"), PMBOT_ACT_COMMAND);
}

static void test_decide__ignores_edited_and_deleted_comments(void **state)
{
	pmbot_event *ev = fixture_event("issue_comment.edited.pr");
	const char *why = NULL;
	pmbot_command cmd;

	(void)state;
	/* The edited comment does hold a valid command: the action alone rules it out. */
	assert_int_equal(command_of(ev->comment_body, &cmd), PMBOT_CMD_APPLY);
	assert_int_equal(pmbot_event_decide(ev, &why), PMBOT_ACT_IGNORE);
	expect_contains(why, "edited");
	pmbot_event_free(ev);
	assert_int_equal(decide_fixture("issue_comment.deleted.pr"), PMBOT_ACT_IGNORE);
}

static void test_decide__ignores_bot_comments(void **state)
{
	pmbot_event *ev = edited_event("issue_comment.created.bot", "/comment/body",
		json_string("/pm-bot apply " HASH));
	const char *why = NULL;

	(void)state;
	assert_int_equal(decide_fixture("issue_comment.created.bot"), PMBOT_ACT_IGNORE);
	/* Even a bare command line from a bot is not taken. */
	assert_int_equal(pmbot_event_decide(ev, &why), PMBOT_ACT_IGNORE);
	expect_contains(why, "bot");
	pmbot_event_free(ev);
}

static void test_decide__ignores_comments_without_a_command(void **state)
{
	pmbot_event *ev = edited_event("issue_comment.created.pr", "/comment/body",
		json_string("LGTM, but /pm-bot apply later"));
	const char *why = NULL;

	(void)state;
	assert_int_equal(pmbot_event_decide(ev, &why), PMBOT_ACT_IGNORE);
	expect_contains(why, "no /pm-bot command");
	pmbot_event_free(ev);
	ev = edited_event("issue_comment.created.pr", "/comment/body", json_string(""));
	assert_int_equal(pmbot_event_decide(ev, NULL), PMBOT_ACT_IGNORE);
	pmbot_event_free(ev);
}

static void test_decide__an_unknown_command_is_still_a_command_for_the_caller_to_log(void **state)
{
	pmbot_event *ev = edited_event("issue_comment.created.pr", "/comment/body",
		json_string("/pm-bot deploy"));

	(void)state;
	assert_int_equal(pmbot_event_decide(ev, NULL), PMBOT_ACT_COMMAND);
	pmbot_event_free(ev);
}

static void test_decide__plans_pushes_to_the_default_branch_only(void **state)
{
	static const char *const ignored[] = {
		"refs/heads/mainline", "refs/heads/Main", "refs/tags/main", "refs/heads/", "main",
		"refs/remotes/origin/main"
	};
	json_t *root;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = NULL;
	size_t i;

	(void)state;
	assert_int_equal(decide_fixture("push.main"), PMBOT_ACT_PLAN_PUSH);
	assert_int_equal(decide_fixture("push.branch"), PMBOT_ACT_IGNORE);
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) {
		ev = edited_event("push.main", "/ref", json_string(ignored[i]));
		assert_int_equal(pmbot_event_decide(ev, NULL), PMBOT_ACT_IGNORE);
		pmbot_event_free(ev);
	}
	/* The default branch comes from the payload, whatever it is called. */
	root = load_fixture("push.branch");
	set_at(root, "/repository/default_branch", json_string("plan/q3-onboarding"));
	assert_int_equal(parse_root(&ev, "push", root, &diags), PMBOT_OK);
	assert_int_equal(pmbot_event_decide(ev, NULL), PMBOT_ACT_PLAN_PUSH);
	pmbot_event_free(ev);
	pmbot_diag_list_free(&diags);
}

static void test_decide__ignores_a_push_that_deletes_the_default_branch(void **state)
{
	pmbot_event *ev = edited_event("push.main", "/after",
		json_string("0000000000000000000000000000000000000000"));
	const char *why = NULL;

	(void)state;
	assert_int_equal(pmbot_event_decide(ev, &why), PMBOT_ACT_IGNORE);
	expect_contains(why, "deletes");
	pmbot_event_free(ev);
}

static void test_decide__syncs_fields_on_schedule_and_workflow_dispatch(void **state)
{
	(void)state;
	assert_int_equal(decide_fixture("schedule"), PMBOT_ACT_FIELD_SYNC);
	assert_int_equal(decide_fixture("workflow_dispatch"), PMBOT_ACT_FIELD_SYNC);
}

static void test_decide__ignores_other_events_with_a_reason(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = NULL;
	const char *why = NULL;

	(void)state;
	assert_int_equal(parse_text(&ev, "issues", "{\"action\":\"opened\"}", &diags), PMBOT_OK);
	assert_int_equal(pmbot_event_decide(ev, &why), PMBOT_ACT_IGNORE);
	expect_contains(why, "not handle");
	pmbot_event_free(ev);
	why = NULL;
	assert_int_equal(pmbot_event_decide(NULL, &why), PMBOT_ACT_IGNORE);
	assert_non_null(why);
	pmbot_diag_list_free(&diags);
}

/* ---- commands ---- */

static void test_command__parses_plan(void **state)
{
	(void)state;
	expect_plan("/pm-bot plan");
	expect_plan("/pm-bot   plan");
	expect_plan("/pm-bot\tplan\t");
}

static void test_command__parses_apply_and_lowercases_the_hash(void **state)
{
	pmbot_command cmd;

	(void)state;
	assert_int_equal(command_of("/pm-bot apply " HASH, &cmd), PMBOT_CMD_APPLY);
	assert_string_equal(cmd.hash, HASH);
	assert_int_equal(command_of("/pm-bot apply " HASH_UPPER, &cmd), PMBOT_CMD_APPLY);
	assert_string_equal(cmd.hash, HASH);
}

static void test_command__the_fixture_comment_approves_its_hash(void **state)
{
	pmbot_event *ev = fixture_event("issue_comment.created.pr");
	pmbot_command cmd;

	(void)state;
	assert_int_equal(command_of(ev->comment_body, &cmd), PMBOT_CMD_APPLY);
	assert_string_equal(cmd.hash, HASH);
	pmbot_event_free(ev);
}

static void test_command__rejects_apply_without_a_hash(void **state)
{
	(void)state;
	expect_unknown("/pm-bot apply", "apply");
	expect_unknown("/pm-bot apply   \r\n/pm-bot apply " HASH, "apply");
}

static void test_command__rejects_a_hash_that_is_not_64_hex_digits(void **state)
{
	char h63[64], h65[66];

	(void)state;
	memcpy(h63, HASH, 63);
	h63[63] = '\0';
	memcpy(h65, HASH "a", 66);
	{
		pmbot_buf body = PMBOT_BUF_INIT;
		pmbot_command cmd;

		assert_int_equal(pmbot_buf_printf(&body, "/pm-bot apply %s", h63), 0);
		assert_int_equal(command_of(body.buf, &cmd), PMBOT_CMD_UNKNOWN);
		/* The bad hash is the word, cut to 31 bytes. */
		assert_int_equal(strlen(cmd.word), 31);
		assert_memory_equal(cmd.word, HASH, 31);
		pmbot_buf_clear(&body);
		assert_int_equal(pmbot_buf_printf(&body, "/pm-bot apply %s", h65), 0);
		assert_int_equal(command_of(body.buf, &cmd), PMBOT_CMD_UNKNOWN);
		pmbot_buf_free(&body);
	}
	expect_unknown("/pm-bot apply 5d41402abc4b2a76b9719d911017c592a3f0b5c4d1e2f3a4b5c6d7e8f9a0b1cg",
		"5d41402abc4b2a76b9719d911017c59");
	expect_unknown("/pm-bot apply sha256:abc", "sha256:abc");
	expect_unknown("/pm-bot apply <hash>", "<hash>");
}

static void test_command__extra_words_make_the_command_unknown(void **state)
{
	(void)state;
	expect_unknown("/pm-bot plan now", "now");
	expect_unknown("/pm-bot apply " HASH " please", "please");
	expect_unknown("/pm-bot apply " HASH " " HASH, "5d41402abc4b2a76b9719d911017c59");
}

static void test_command__unknown_subcommands_name_the_word(void **state)
{
	(void)state;
	expect_unknown("/pm-bot deploy", "deploy");
	expect_unknown("/pm-bot PLAN", "PLAN");
	expect_unknown("/pm-bot Apply " HASH, "Apply");
	expect_unknown("/pm-bot help me", "help");
}

static void test_command__a_bare_prefix_is_unknown_with_an_empty_word(void **state)
{
	(void)state;
	expect_unknown("/pm-bot", "");
	expect_unknown("  /pm-bot  \r\n", "");
}

static void test_command__the_prefix_must_end_at_whitespace(void **state)
{
	(void)state;
	expect_none("/pm-botx plan");
	expect_none("/pm-bot-plan");
	expect_none("/pm-bo plan");
	expect_none("/PM-BOT plan");
	expect_none("pm-bot plan");
}

static void test_command__must_start_the_line(void **state)
{
	(void)state;
	expect_none("please /pm-bot plan");
	expect_none("`/pm-bot plan`");
	expect_none("- /pm-bot plan");
}

static void test_command__only_the_first_command_line_counts(void **state)
{
	pmbot_command cmd;

	(void)state;
	expect_unknown("/pm-bot deploy\n/pm-bot plan", "deploy");
	assert_int_equal(command_of("/pm-bot plan\n/pm-bot apply " HASH, &cmd), PMBOT_CMD_PLAN);
	assert_int_equal(command_of("Thanks!\n\nSome text.\n/pm-bot apply " HASH "\n/pm-bot plan",
		&cmd), PMBOT_CMD_APPLY);
}

static void test_command__trims_spaces_tabs_and_carriage_returns(void **state)
{
	pmbot_command cmd;

	(void)state;
	expect_plan("   /pm-bot plan \t\r\n");
	expect_plan("hello\r\n\t /pm-bot plan\r\n");
	assert_int_equal(command_of("\r\n/pm-bot apply " HASH "\r", &cmd), PMBOT_CMD_APPLY);
	assert_string_equal(cmd.hash, HASH);
}

static void test_command__skips_commands_inside_backtick_fences(void **state)
{
	(void)state;
	expect_none("```\n/pm-bot apply " HASH "\n```");
	expect_none("```text\n/pm-bot plan\n```\n");
	expect_none("  ```\n/pm-bot plan\n  ```  \n");
	/* After the fence closes, a command counts again. */
	expect_plan("```\n/pm-bot apply " HASH "\n```\n/pm-bot plan");
}

static void test_command__skips_commands_inside_tilde_fences(void **state)
{
	(void)state;
	expect_none("~~~\n/pm-bot plan\n~~~");
	expect_plan("~~~\n/pm-bot apply " HASH "\n~~~~~\n/pm-bot plan");
}

static void test_command__a_fence_closes_only_with_its_own_kind_and_length(void **state)
{
	(void)state;
	/* A shorter fence, the other character, or a fence with text after it do not close. */
	expect_none("````\n```\n/pm-bot plan\n````");
	expect_none("```\n~~~\n/pm-bot plan\n```");
	expect_none("```\n``` not a close\n/pm-bot plan\n```");
	expect_plan("````\n/pm-bot apply " HASH "\n`````\n/pm-bot plan");
}

static void test_command__an_unclosed_fence_hides_the_rest(void **state)
{
	(void)state;
	expect_none("See:\n```\n/pm-bot plan\n\n/pm-bot apply " HASH);
}

static void test_command__two_backticks_or_a_backtick_in_the_info_are_not_a_fence(void **state)
{
	(void)state;
	/* Two backticks open a code span, which the closing pair ends: code, not a command. */
	expect_none("``\n/pm-bot plan\n``");
	expect_plan("``\n/pm-bot plan");
	expect_plan("``` a`b\n/pm-bot plan");
}

static void test_command__skips_quoted_lines(void **state)
{
	(void)state;
	expect_none("> /pm-bot apply " HASH);
	expect_none(">/pm-bot plan");
	expect_none("   > /pm-bot plan");
	expect_none(">> /pm-bot plan");
	expect_plan("> /pm-bot apply " HASH "\n\n/pm-bot plan");
	/* A line right after a quote joins it (lazy continuation): GitHub shows it quoted. */
	expect_none("> Quoting the plan\n/pm-bot plan");
	expect_plan("> Quoting the plan\n\n/pm-bot plan");
}

static void test_command__quoting_the_plan_comment_is_not_a_command(void **state)
{
	pmbot_event *bot = fixture_event("issue_comment.created.bot");
	pmbot_buf quoted = PMBOT_BUF_INIT;
	const char *p;

	(void)state;
	/* The plan comment itself shows the command only inside a code block. */
	expect_none(bot->comment_body);
	/* GitHub's "Quote reply" prefixes every line with "> ". */
	assert_int_equal(pmbot_buf_puts(&quoted, "> "), 0);
	for (p = bot->comment_body; *p; p++) {
		assert_int_equal(pmbot_buf_putc(&quoted, *p), 0);
		if (*p == '\n' && p[1])
			assert_int_equal(pmbot_buf_puts(&quoted, "> "), 0);
	}
	assert_int_equal(pmbot_buf_puts(&quoted, "\nI agree with this plan.\n"), 0);
	expect_none(quoted.buf);
	/* Pasting it unquoted keeps the code block, so still no command. */
	pmbot_buf_clear(&quoted);
	assert_int_equal(pmbot_buf_printf(&quoted, "Copying the plan:\n%s\nThoughts?",
		bot->comment_body), 0);
	expect_none(quoted.buf);
	pmbot_buf_free(&quoted);
	pmbot_event_free(bot);
}

static void test_command__word_is_cut_at_a_utf8_boundary_and_made_printable(void **state)
{
	pmbot_command cmd;
	size_t i;

	(void)state;
	/* 30 ASCII bytes then a 2-byte character: 32 bytes do not fit, the character goes whole. */
	assert_int_equal(command_of("/pm-bot abcdefghijklmnopqrstuvwxyz0123\xc3\xa9", &cmd),
		PMBOT_CMD_UNKNOWN);
	assert_string_equal(cmd.word, "abcdefghijklmnopqrstuvwxyz0123");
	assert_int_equal(command_of("/pm-bot \xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
		"\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac",
		&cmd), PMBOT_CMD_UNKNOWN);
	assert_int_equal(strlen(cmd.word), 30);
	assert_memory_equal(cmd.word, "\xe2\x82\xac", 3);
	assert_int_equal(command_of("/pm-bot de\x1bploy\x7f", &cmd), PMBOT_CMD_UNKNOWN);
	assert_string_equal(cmd.word, "de?ploy?");
	assert_int_equal(command_of("/pm-bot a\rb", &cmd), PMBOT_CMD_UNKNOWN);
	for (i = 0; cmd.word[i]; i++)
		assert_true((unsigned char)cmd.word[i] >= 0x20);
}

static void test_command__no_body_or_an_empty_body_has_no_command(void **state)
{
	pmbot_command cmd;

	(void)state;
	memset(&cmd, 0x55, sizeof(cmd));
	assert_int_equal(pmbot_command_parse(&cmd, NULL), PMBOT_OK);
	assert_int_equal(cmd.kind, PMBOT_CMD_NONE);
	assert_string_equal(cmd.hash, "");
	assert_string_equal(cmd.word, "");
	expect_none("");
	expect_none("\n\n\r\n");
	expect_none("Looks good to me");
	assert_int_equal(pmbot_command_parse(NULL, "/pm-bot plan"), PMBOT_ERROR);
}

static void expect_apply(const char *body)
{
	pmbot_command cmd;

	assert_int_equal(command_of(body, &cmd), PMBOT_CMD_APPLY);
	assert_string_equal(cmd.hash, HASH);
}

static pmbot_command_kind bytes_command_of(const char *data, size_t len, pmbot_command *cmd)
{
	/* An exact-size copy without a terminator: reading past `len` trips ASan. */
	char *copy = malloc(len ? len : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, data, len);
	rc = pmbot_command_parse_bytes(cmd, copy, len);
	free(copy);
	assert_int_equal(rc, PMBOT_OK);
	assert_true(pmbot_utf8_valid(cmd->word, strlen(cmd->word), NULL, NULL, NULL));
	return cmd->kind;
}

static void test_command__skips_commands_in_indented_code(void **state)
{
	(void)state;
	expect_none("    /pm-bot apply " HASH);
	expect_none("\t/pm-bot apply " HASH);
	/* Two spaces and a tab reach column 4: indented code too. */
	expect_none("  \t/pm-bot plan");
	expect_none("Approved:\n\n    /pm-bot apply " HASH "\n");
	/* Indented code cannot interrupt a paragraph: this line continues it, and shows as text. */
	expect_apply("Approved:\n    /pm-bot apply " HASH);
}

static void test_command__skips_commands_inside_html_comments(void **state)
{
	(void)state;
	/* GitHub shows nothing of an HTML comment. */
	expect_none("<!--\n/pm-bot apply " HASH "\n-->");
	expect_none("<!-- /pm-bot apply " HASH " -->");
	expect_none("LGTM <!--\n/pm-bot apply " HASH "\n-->");
	expect_none("LGTM <!-- x -->\n/pm-bot apply " HASH);
	/* An unclosed comment hides the rest of the body. */
	expect_none("<!--\n\n/pm-bot apply " HASH);
	/* HTML after the command cannot hide it. */
	expect_apply("/pm-bot apply " HASH "\n<!-- thanks -->");
	expect_apply("/pm-bot apply " HASH "\n\n<!-- thanks -->");
}

static void test_command__nothing_after_raw_html_counts(void **state)
{
	(void)state;
	/* A collapsed <details> hides its content until opened. */
	expect_none("<details>\n/pm-bot apply " HASH "\n</details>");
	expect_none("<details><summary>Notes</summary>\n\n/pm-bot apply " HASH "\n\n</details>");
	expect_none("<div>\n\n/pm-bot plan\n\n</div>");
	expect_none("Thanks <b>a lot</b>\n/pm-bot plan");
	expect_none("> <details>\n\n/pm-bot plan");
	expect_none("- <span>x</span>\n\n/pm-bot plan");
	/* On the command's own line, HTML before the prefix means no command, after it an unknown one. */
	expect_none("<span></span>/pm-bot plan");
	expect_unknown("/pm-bot plan <!-- hidden -->", "<!--");
	expect_unknown("/pm-bot apply <hash>", "<hash>");
}

static void test_command__link_texts_images_and_emphasis_are_not_commands(void **state)
{
	(void)state;
	expect_none("[/pm-bot apply " HASH "](https://example.com)");
	expect_none("[/pm-bot plan]\n\n[/pm-bot plan]: https://example.com");
	expect_none("![/pm-bot plan](plan.png)");
	expect_none("*/pm-bot apply " HASH "*");
	expect_none("**/pm-bot plan**");
	expect_none("_/pm-bot plan_");
	/* A definition renders as nothing. */
	expect_none("[x]: /pm-bot 'apply " HASH "'");
	/* Formatting inside the command makes it one pm-bot does not understand. */
	expect_unknown("/pm-bot apply `" HASH "`", "5d41402abc4b2a76b9719d911017c59");
	expect_unknown("/pm-bot apply *" HASH "*", "5d41402abc4b2a76b9719d911017c59");
	expect_unknown("/pm-bot *plan*", "plan");
}

static void test_command__lists_headings_and_tables_are_not_paragraphs(void **state)
{
	(void)state;
	expect_none("1. /pm-bot plan");
	expect_none("* /pm-bot apply " HASH);
	expect_none("- [ ] /pm-bot plan");
	expect_none("# /pm-bot plan");
	expect_none("/pm-bot plan\n===");
	expect_none("/pm-bot plan\n---");
	expect_none("| /pm-bot plan |\n| --- |");
}

static void test_command__a_line_after_a_soft_or_hard_break_counts(void **state)
{
	(void)state;
	expect_apply("Looks right to me.\n/pm-bot apply " HASH);
	expect_apply("Looks right to me.  \n/pm-bot apply " HASH);
	expect_apply("Looks right to me.\\\n/pm-bot apply " HASH);
	expect_apply("Looks right.\n   \t /pm-bot apply " HASH "\nThanks");
	/* A "\n" from an entity is a space once rendered: the command does not start a line. */
	expect_none("Looks right.&#10;/pm-bot plan");
	expect_none("Looks right. /pm-bot plan");
}

static void test_command__crlf_and_cr_line_ends(void **state)
{
	(void)state;
	expect_apply("Thanks\r\n\r\n/pm-bot apply " HASH "\r\n");
	expect_apply("Thanks\r\n/pm-bot apply " HASH "\r\nBye\r\n");
	expect_plan("Thanks\r/pm-bot plan\r");
	expect_none("```\r\n/pm-bot plan\r\n```\r\n");
	expect_none("> Thanks\r\n> /pm-bot plan\r\n");
	expect_none("    /pm-bot plan\r\n");
}

static void test_command__invalid_utf8_never_reaches_the_word(void **state)
{
	static const char bad[] = "/pm-bot \xff\xfe\xc3 \xe2\x82";
	static const char hash_then_bad[] = "/pm-bot apply " HASH "\xc0\xaf";
	static const char overlong_slash[] = "\xc0\xaf" "pm-bot plan";
	pmbot_command cmd;

	(void)state;
	assert_int_equal(bytes_command_of(bad, sizeof(bad) - 1, &cmd), PMBOT_CMD_UNKNOWN);
	/* Each bad byte became U+FFFD. */
	assert_string_equal(cmd.word, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	assert_int_equal(bytes_command_of(hash_then_bad, sizeof(hash_then_bad) - 1, &cmd),
		PMBOT_CMD_UNKNOWN);
	assert_int_equal(bytes_command_of(overlong_slash, sizeof(overlong_slash) - 1, &cmd),
		PMBOT_CMD_NONE);
}

static void test_command__a_nul_byte_is_a_replacement_character(void **state)
{
	static const char nul_in_word[] = "/pm-bot plan\0";
	static const char nul_after_prefix[] = "/pm-bot\0apply " HASH;
	static const char nul_line_first[] = "\0\n/pm-bot apply " HASH;
	pmbot_command cmd;

	(void)state;
	assert_int_equal(bytes_command_of(nul_in_word, sizeof(nul_in_word) - 1, &cmd),
		PMBOT_CMD_UNKNOWN);
	assert_string_equal(cmd.word, "plan\xef\xbf\xbd");
	assert_int_equal(bytes_command_of(nul_after_prefix, sizeof(nul_after_prefix) - 1, &cmd),
		PMBOT_CMD_NONE);
	assert_int_equal(bytes_command_of(nul_line_first, sizeof(nul_line_first) - 1, &cmd),
		PMBOT_CMD_APPLY);
	assert_string_equal(cmd.hash, HASH);
	/* The C-string form stops at the NUL. */
	expect_plan("/pm-bot plan\0/pm-bot deploy");
	assert_int_equal(pmbot_command_parse_bytes(&cmd, NULL, 5), PMBOT_OK);
	assert_int_equal(cmd.kind, PMBOT_CMD_NONE);
	assert_int_equal(pmbot_command_parse_bytes(NULL, "/pm-bot plan", 12), PMBOT_ERROR);
}

/* A body of `len` bytes: `head`, then `fill` repeated. */
static char *big_body(const char *head, const char *fill, size_t len)
{
	char *b = malloc(len);
	size_t h = strlen(head), f = strlen(fill), i;

	assert_non_null(b);
	memcpy(b, head, h);
	for (i = h; i < len; i++)
		b[i] = fill[(i - h) % f];
	return b;
}

static void test_command__bodies_over_githubs_limit_hold_no_command(void **state)
{
	const size_t max = PMBOT_COMMAND_MAX_BYTES;
	char *b;
	pmbot_command cmd;

	(void)state;
	assert_int_equal(max, 262144);
	b = big_body("/pm-bot plan\n\n", "lorem ipsum ", max);
	assert_int_equal(bytes_command_of(b, max, &cmd), PMBOT_CMD_PLAN);
	assert_int_equal(bytes_command_of(b, max + 0, &cmd), PMBOT_CMD_PLAN);
	free(b);
	b = big_body("/pm-bot plan\n\n", "lorem ipsum ", max + 1);
	assert_int_equal(bytes_command_of(b, max + 1, &cmd), PMBOT_CMD_NONE);
	free(b);
	b = big_body("/pm-bot apply " HASH "\n\n", "a", (size_t)1 << 20);
	assert_int_equal(bytes_command_of(b, (size_t)1 << 20, &cmd), PMBOT_CMD_NONE);
	free(b);
}

static void test_command__hostile_bodies_at_the_limit_are_parsed(void **state)
{
	/* Nesting and unmatched delimiters, each filling the whole allowed size. */
	static const char *const fills[] = {
		"[", "*a", "_", "`", "> ", "- ", "<!--", "<a ", "![", "\\", "&#", "[x](", "**_", "\n",
		"|", "~", "1. ", "    ", "<details>\n\n"
	};
	const size_t max = PMBOT_COMMAND_MAX_BYTES;
	pmbot_command cmd;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(fills) / sizeof(fills[0]); i++) {
		char *b = big_body("Hi\n", fills[i], max);

		assert_int_equal(bytes_command_of(b, max, &cmd), PMBOT_CMD_NONE);
		free(b);
	}
}

/* ---- approval ---- */

static void test_approval__allows_the_minimum_permission_and_above(void **state)
{
	static const char *const allowed[] = { "write", "maintain", "admin" };
	pmbot_config *cfg = NULL;
	pmbot_buf reason = PMBOT_BUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, "acme/widgets"), PMBOT_OK);
	assert_int_equal(cfg->min_permission, PMBOT_PERM_WRITE);
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		assert_int_equal(approve(cfg, "alice", allowed[i], &reason), PMBOT_OK);
		expect_contains(reason.buf, "@alice");
		expect_contains(reason.buf, allowed[i]);
	}
	pmbot_buf_free(&reason);
	pmbot_config_free(cfg);
}

static void test_approval__denies_below_the_minimum_permission(void **state)
{
	pmbot_config *cfg = NULL;
	pmbot_buf reason = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, "acme/widgets"), PMBOT_OK);
	assert_int_equal(approve(cfg, "bob", "read", &reason), PMBOT_EINVALID);
	expect_contains(reason.buf, "@bob has permission \"read\"");
	expect_contains(reason.buf, "needs \"write\"");
	assert_int_equal(approve(cfg, "bob", "triage", &reason), PMBOT_EINVALID);
	expect_contains(reason.buf, "\"triage\"");
	pmbot_buf_free(&reason);
	pmbot_config_free(cfg);
}

static void test_approval__denies_none_and_words_github_does_not_use(void **state)
{
	static const char *const denied[] = { "owner", "", "WRITE", "Admin", "security-manager" };
	pmbot_config *cfg = NULL;
	pmbot_buf reason = PMBOT_BUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, "acme/widgets"), PMBOT_OK);
	assert_int_equal(approve(cfg, "eve", "none", &reason), PMBOT_EINVALID);
	expect_contains(reason.buf, "no access");
	for (i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		assert_int_equal(approve(cfg, "eve", denied[i], &reason), PMBOT_EINVALID);
		expect_contains(reason.buf, "not one of");
	}
	assert_int_equal(approve(cfg, "eve", NULL, &reason), PMBOT_EINVALID);
	expect_contains(reason.buf, "unknown");
	pmbot_buf_free(&reason);
	pmbot_config_free(cfg);
}

static void test_approval__follows_a_raised_minimum_permission(void **state)
{
	pmbot_config *cfg = config_from("approval:\n  min_permission: maintain\n");
	pmbot_buf reason = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(approve(cfg, "alice", "write", &reason), PMBOT_EINVALID);
	expect_contains(reason.buf, "needs \"maintain\"");
	assert_int_equal(approve(cfg, "alice", "maintain", &reason), PMBOT_OK);
	assert_int_equal(approve(cfg, "alice", "admin", &reason), PMBOT_OK);
	pmbot_buf_free(&reason);
	pmbot_config_free(cfg);
}

static void test_approval__a_lowered_minimum_lets_readers_approve_but_never_none(void **state)
{
	pmbot_config *cfg = config_from("approval:\n  min_permission: read\n");
	pmbot_buf reason = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(approve(cfg, "carol", "read", &reason), PMBOT_OK);
	assert_int_equal(approve(cfg, "carol", "none", &reason), PMBOT_EINVALID);
	pmbot_buf_free(&reason);
	pmbot_config_free(cfg);
}

static void test_approval__the_approvers_list_is_case_insensitive_and_binding(void **state)
{
	pmbot_config *cfg = config_from("approval:\n  users: [Alice, carol]\n");
	pmbot_buf reason = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(approve(cfg, "alice", "write", &reason), PMBOT_OK);
	expect_contains(reason.buf, "listed in approval.users");
	assert_int_equal(approve(cfg, "CAROL", "admin", &reason), PMBOT_OK);
	/* An admin who is not listed is denied... */
	assert_int_equal(approve(cfg, "bob", "admin", &reason), PMBOT_EINVALID);
	expect_contains(reason.buf, "not listed in approval.users");
	/* ...and being listed does not replace the permission. */
	assert_int_equal(approve(cfg, "alice", "read", &reason), PMBOT_EINVALID);
	expect_contains(reason.buf, "needs \"write\"");
	pmbot_buf_free(&reason);
	pmbot_config_free(cfg);
}

static void test_approval__needs_a_login(void **state)
{
	pmbot_config *cfg = NULL;
	pmbot_buf reason = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, "acme/widgets"), PMBOT_OK);
	assert_int_equal(approve(cfg, NULL, "admin", &reason), PMBOT_EINVALID);
	assert_int_equal(approve(cfg, "", "admin", &reason), PMBOT_EINVALID);
	expect_contains(reason.buf, "login");
	assert_int_equal(approve(NULL, "alice", "admin", &reason), PMBOT_EINVALID);
	pmbot_buf_free(&reason);
	pmbot_config_free(cfg);
}

static void test_approval__reasons_escape_hostile_text(void **state)
{
	pmbot_config *cfg = NULL;
	pmbot_buf reason = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, "acme/widgets"), PMBOT_OK);
	assert_int_equal(approve(cfg, "eve\n::error::forged", "re`ad\n", &reason), PMBOT_EINVALID);
	expect_contains(reason.buf, "eve\\x0a::error::forged");
	assert_null(strchr(reason.buf, '`'));
	pmbot_buf_free(&reason);
	pmbot_config_free(cfg);
}

static void test_approval__appends_the_reason_and_accepts_no_buffer(void **state)
{
	pmbot_config *cfg = NULL;
	pmbot_buf reason = PMBOT_BUF_INIT;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, "acme/widgets"), PMBOT_OK);
	assert_int_equal(pmbot_buf_puts(&reason, "denied: "), 0);
	assert_int_equal(pmbot_approval_check(&reason, cfg, "bob", "read"), PMBOT_EINVALID);
	assert_true(strncmp(reason.buf, "denied: @bob", 12) == 0);
	assert_int_equal(pmbot_approval_check(NULL, cfg, "bob", "read"), PMBOT_EINVALID);
	assert_int_equal(pmbot_approval_check(NULL, cfg, "bob", "admin"), PMBOT_OK);
	pmbot_buf_free(&reason);
	pmbot_config_free(cfg);
}

static void test_approval__a_reason_that_does_not_fit_is_an_error_not_a_yes(void **state)
{
	pmbot_config *cfg = NULL;
	pmbot_buf reason;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, "acme/widgets"), PMBOT_OK);
	pmbot_buf_init(&reason, 8);
	assert_int_equal(pmbot_approval_check(&reason, cfg, "alice", "admin"), PMBOT_ERROR);
	assert_int_equal(pmbot_approval_check(&reason, cfg, "alice", "read"), PMBOT_ERROR);
	pmbot_buf_free(&reason);
	pmbot_config_free(cfg);
}

/* The reply to a parsed body: what the commenter reads. */
static char *reply_to(const char *body, int *is_help)
{
	pmbot_command cmd;
	pmbot_buf out = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_command_parse(&cmd, body), PMBOT_OK);
	assert_int_equal(cmd.kind, PMBOT_CMD_UNKNOWN);
	assert_int_equal(pmbot_command_reply(&out, is_help, &cmd), 0);
	return pmbot_buf_detach(&out, NULL);
}

static void test_reply__a_malformed_hash_is_named(void **state)
{
	int help = -1;
	char *r = reply_to("/pm-bot apply abc", &help);

	(void)state;
	assert_string_equal(r, "`abc` is not a 64-hex plan hash: copy the `/pm-bot apply` line "
		"from pm-bot's comment.");
	assert_int_equal(help, 0);
	free(r);
}

static void test_reply__a_near_miss_gets_did_you_mean(void **state)
{
	int help;
	char *r = reply_to("/pm-bot aply 1234", &help);

	(void)state;
	assert_string_equal(r, "`aply` is not a pm-bot command; did you mean `apply`? "
		"`/pm-bot help` lists the commands.");
	free(r);
	r = reply_to("/pm-bot pln", &help);
	assert_non_null(strstr(r, "did you mean `plan`?"));
	free(r);
	r = reply_to("/pm-bot deploy", &help);
	assert_null(strstr(r, "did you mean"));
	free(r);
}

static void test_reply__help_lists_every_command_of_the_table(void **state)
{
	size_t n, i;
	const pmbot_command_info *t = pmbot_command_table(&n);
	int help = 0;
	char *r = reply_to("/pm-bot help", &help);

	(void)state;
	assert_int_equal(help, 1);
	assert_true(n >= 3);
	for (i = 0; i < n; i++)
		assert_non_null(strstr(r, t[i].usage));
	free(r);
}

static void test_reply__hostile_words_cannot_mention_link_or_break_out(void **state)
{
	int help;
	char *r = reply_to("/pm-bot apply @admin`](http://x)", &help);

	(void)state;
	assert_null(strchr(r, '@'));
	assert_null(strstr(r, "http:"));
	assert_null(strchr(r, '('));
	assert_int_equal(strncmp(r, "::", 2) != 0, 1);
	free(r);
	r = reply_to("/pm-bot apply aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", &help);
	/* cut where the parser cut it (31 bytes), never longer than 40 */
	assert_true(strchr(r + 1, '`') - r - 1 <= 40);
	free(r);
}

static void test_reply__understood_commands_get_none(void **state)
{
	pmbot_command cmd;
	pmbot_buf out = PMBOT_BUF_INIT;
	int help = 1;

	(void)state;
	assert_int_equal(pmbot_command_parse(&cmd, "/pm-bot plan"), PMBOT_OK);
	assert_int_equal(pmbot_command_reply(&out, &help, &cmd), 0);
	assert_int_equal(out.len, 0);
	assert_int_equal(help, 0);
	assert_int_equal(cmd.fault, PMBOT_CMD_FAULT_NONE);
	assert_int_equal(pmbot_command_parse(&cmd, "/pm-bot apply"), PMBOT_OK);
	assert_int_equal(cmd.fault, PMBOT_CMD_FAULT_NO_HASH);
	assert_int_equal(pmbot_command_parse(&cmd, "/pm-bot plan now"), PMBOT_OK);
	assert_int_equal(cmd.fault, PMBOT_CMD_FAULT_EXTRA);
	pmbot_buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event__parses_a_pull_request_opened_payload),
		cmocka_unit_test(test_event__synchronize_carries_the_new_head_sha),
		cmocka_unit_test(test_event__marks_a_pull_request_from_another_repository_as_a_fork),
		cmocka_unit_test(test_event__fork_detection_ignores_the_case_of_repository_names),
		cmocka_unit_test(test_event__a_deleted_head_repository_counts_as_a_fork),
		cmocka_unit_test(test_event__parses_a_comment_on_a_pull_request),
		cmocka_unit_test(test_event__parses_a_comment_on_a_plain_issue),
		cmocka_unit_test(test_event__a_null_issue_pull_request_is_a_plain_issue),
		cmocka_unit_test(test_event__recognises_bot_comments_by_user_type),
		cmocka_unit_test(test_event__recognises_bot_comments_by_login_suffix),
		cmocka_unit_test(test_event__a_comment_without_a_user_has_no_author),
		cmocka_unit_test(test_event__parses_push_ref_and_after),
		cmocka_unit_test(test_event__schedule_and_workflow_dispatch_carry_the_repository),
		cmocka_unit_test(test_event__schedule_without_repository_is_accepted),
		cmocka_unit_test(test_event__other_event_names_are_other_and_need_no_fields),
		cmocka_unit_test(test_event__same_bytes_give_the_same_event),
		cmocka_unit_test(test_event__rejects_bytes_that_are_not_json),
		cmocka_unit_test(test_event__rejects_an_empty_payload),
		cmocka_unit_test(test_event__rejects_a_payload_over_the_size_limit),
		cmocka_unit_test(test_event__rejects_duplicate_keys),
		cmocka_unit_test(test_event__rejects_invalid_utf8_and_nul),
		cmocka_unit_test(test_event__parse_error_messages_escape_the_input),
		cmocka_unit_test(test_event__root_must_be_an_object),
		cmocka_unit_test(test_event__rejects_a_missing_event_name),
		cmocka_unit_test(test_event__missing_repository_is_reported_at_its_pointer),
		cmocka_unit_test(test_event__missing_required_fields_are_reported_at_their_pointers),
		cmocka_unit_test(test_event__a_missing_parent_is_reported_once_not_per_child),
		cmocka_unit_test(test_event__wrong_types_are_reported_at_their_pointers),
		cmocka_unit_test(test_event__rejects_malformed_values),
		cmocka_unit_test(test_event__numbers_must_be_positive),
		cmocka_unit_test(test_event__every_problem_is_reported_at_once),
		cmocka_unit_test(test_event__existing_diagnostics_are_kept),
		cmocka_unit_test(test_event__unused_fields_are_not_checked),
		cmocka_unit_test(test_decide__plans_pull_requests_opened_synchronized_or_reopened),
		cmocka_unit_test(test_decide__plans_fork_pull_requests_too),
		cmocka_unit_test(test_decide__ignores_other_pull_request_activity),
		cmocka_unit_test(test_decide__takes_a_created_comment_with_a_command),
		cmocka_unit_test(test_decide__ignores_edited_and_deleted_comments),
		cmocka_unit_test(test_decide__ignores_bot_comments),
		cmocka_unit_test(test_decide__ignores_comments_without_a_command),
		cmocka_unit_test(test_decide__an_unknown_command_is_still_a_command_for_the_caller_to_log),
		cmocka_unit_test(test_decide__plans_pushes_to_the_default_branch_only),
		cmocka_unit_test(test_decide__ignores_a_push_that_deletes_the_default_branch),
		cmocka_unit_test(test_decide__syncs_fields_on_schedule_and_workflow_dispatch),
		cmocka_unit_test(test_decide__ignores_other_events_with_a_reason),
		cmocka_unit_test(test_command__parses_plan),
		cmocka_unit_test(test_command__parses_apply_and_lowercases_the_hash),
		cmocka_unit_test(test_command__the_fixture_comment_approves_its_hash),
		cmocka_unit_test(test_command__rejects_apply_without_a_hash),
		cmocka_unit_test(test_command__rejects_a_hash_that_is_not_64_hex_digits),
		cmocka_unit_test(test_command__extra_words_make_the_command_unknown),
		cmocka_unit_test(test_command__unknown_subcommands_name_the_word),
		cmocka_unit_test(test_command__a_bare_prefix_is_unknown_with_an_empty_word),
		cmocka_unit_test(test_command__the_prefix_must_end_at_whitespace),
		cmocka_unit_test(test_command__must_start_the_line),
		cmocka_unit_test(test_command__only_the_first_command_line_counts),
		cmocka_unit_test(test_command__trims_spaces_tabs_and_carriage_returns),
		cmocka_unit_test(test_command__skips_commands_inside_backtick_fences),
		cmocka_unit_test(test_command__skips_commands_inside_tilde_fences),
		cmocka_unit_test(test_command__a_fence_closes_only_with_its_own_kind_and_length),
		cmocka_unit_test(test_command__an_unclosed_fence_hides_the_rest),
		cmocka_unit_test(test_command__two_backticks_or_a_backtick_in_the_info_are_not_a_fence),
		cmocka_unit_test(test_command__skips_quoted_lines),
		cmocka_unit_test(test_command__quoting_the_plan_comment_is_not_a_command),
		cmocka_unit_test(test_command__word_is_cut_at_a_utf8_boundary_and_made_printable),
		cmocka_unit_test(test_command__no_body_or_an_empty_body_has_no_command),
		cmocka_unit_test(test_command__skips_commands_in_indented_code),
		cmocka_unit_test(test_command__skips_commands_inside_html_comments),
		cmocka_unit_test(test_command__nothing_after_raw_html_counts),
		cmocka_unit_test(test_command__link_texts_images_and_emphasis_are_not_commands),
		cmocka_unit_test(test_command__lists_headings_and_tables_are_not_paragraphs),
		cmocka_unit_test(test_command__a_line_after_a_soft_or_hard_break_counts),
		cmocka_unit_test(test_command__crlf_and_cr_line_ends),
		cmocka_unit_test(test_command__invalid_utf8_never_reaches_the_word),
		cmocka_unit_test(test_command__a_nul_byte_is_a_replacement_character),
		cmocka_unit_test(test_command__bodies_over_githubs_limit_hold_no_command),
		cmocka_unit_test(test_command__hostile_bodies_at_the_limit_are_parsed),
		cmocka_unit_test(test_approval__allows_the_minimum_permission_and_above),
		cmocka_unit_test(test_approval__denies_below_the_minimum_permission),
		cmocka_unit_test(test_approval__denies_none_and_words_github_does_not_use),
		cmocka_unit_test(test_approval__follows_a_raised_minimum_permission),
		cmocka_unit_test(test_approval__a_lowered_minimum_lets_readers_approve_but_never_none),
		cmocka_unit_test(test_approval__the_approvers_list_is_case_insensitive_and_binding),
		cmocka_unit_test(test_approval__needs_a_login),
		cmocka_unit_test(test_approval__reasons_escape_hostile_text),
		cmocka_unit_test(test_approval__appends_the_reason_and_accepts_no_buffer),
		cmocka_unit_test(test_approval__a_reason_that_does_not_fit_is_an_error_not_a_yes),
		cmocka_unit_test(test_reply__a_malformed_hash_is_named),
		cmocka_unit_test(test_reply__a_near_miss_gets_did_you_mean),
		cmocka_unit_test(test_reply__help_lists_every_command_of_the_table),
		cmocka_unit_test(test_reply__hostile_words_cannot_mention_link_or_break_out),
		cmocka_unit_test(test_reply__understood_commands_get_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
