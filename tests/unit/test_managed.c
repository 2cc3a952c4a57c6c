#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pmbot/plan.h"
#include "pmbot/banned.h"

/*
 * pmbot_plan_managed: the issues `pm-bot state list` shows are exactly the
 * ones the planner treats as its items.
 */

#define BOT "github-actions[bot]"

/* A body pm-bot wrote for `sid` (its rev right), or with `edited` text after it. */
static char *body_of(const char *sid, const char *text, int edited)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	char rev[PMBOT_SHA256_HEX_SIZE];

	assert_int_equal(pmbot_body_rev(rev, text, strlen(text)), 0);
	assert_int_equal(pmbot_buf_printf(&b, "%s%s\n\n<!-- pm-bot:id=%s rev=%s -->", text,
		edited ? "\n\nA person's note." : "", sid, rev), 0);
	return pmbot_buf_detach(&b, NULL);
}

static json_t *issue(long number, char *body, const char *author)
{
	char node[32];
	json_t *is;

	snprintf(node, sizeof(node), "I_%ld", number);
	is = json_pack("{s:I, s:I, s:s, s:s, s:s, s:[], s:s, s:s, s:s, s:s, s:n, s:[]}",
		"number", (json_int_t)number, "database_id", (json_int_t)(1000 + number),
		"node_id", node, "title", "T", "body", body ? body : "no marker here", "labels",
		"state", "open", "author", author, "author_type", strstr(author, "[bot]") ? "Bot" :
		"User", "updated_at", "2026-11-01T00:00:00Z", "parent", "blocked_by");
	free(body);
	assert_non_null(is);
	return is;
}

static void test_managed__only_trusted_markers_of_allowed_repos_with_flags(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;
	pmbot_state *st = NULL;
	pmbot_managed_issue *list = NULL;
	size_t n = 0;
	json_t *doc;
	char *text;
	static const char yaml[] = "repos: [acme/widgets]\n";

	(void)state;
	doc = json_pack("{s:s, s:n, s:[{s:s, s:[o, o, o, o, o, o]}, {s:s, s:[o]}]}",
		"schema_version", "state/v1", "project", "repositories",
		"repo", "acme/widgets", "issues",
		issue(1, body_of("task:a", "### Goal\nA", 0), BOT),
		issue(2, body_of("task:b", "### Goal\nB", 1), BOT),
		issue(3, body_of("task:c", "### Goal\nC", 0), "mallory"),
		issue(4, NULL, BOT),
		issue(5, body_of("task:d", "### Goal\nD", 0), BOT),
		issue(6, body_of("task:d", "### Goal\nD", 0), "alice"),
		"repo", "acme/other", "issues",
		issue(101, body_of("task:x", "### Goal\nX", 0), BOT));
	assert_non_null(doc);
	text = json_dumps(doc, 0);
	if (pmbot_state_parse(&st, "s.json", text, strlen(text), &d) != PMBOT_OK)
		fail_msg("%s", d.count ? d.items[0].message : "?");
	assert_int_equal(pmbot_config_parse(&cfg, ".github/pm-bot.yml", yaml, strlen(yaml), NULL, &d),
		PMBOT_OK);
	/* alice is trusted as the token's own login */
	assert_int_equal(pmbot_plan_managed(&list, &n, st, cfg, "alice"), PMBOT_OK);
	assert_int_equal(n, 4);
	assert_string_equal(list[0].stable_id, "task:a");
	assert_int_equal(list[0].edited, 0);
	assert_int_equal(list[0].duplicate, 0);
	assert_null(list[0].item);
	assert_string_equal(list[1].stable_id, "task:b");
	assert_int_equal(list[1].edited, 1);
	assert_int_equal(list[2].issue->number, 5);
	assert_int_equal(list[2].duplicate, 1);
	assert_int_equal(list[3].issue->number, 6);
	assert_int_equal(list[3].duplicate, 1);
	assert_ptr_equal(pmbot_plan_managed_find(list, n, "task:b"), &list[1]);
	assert_null(pmbot_plan_managed_find(list, n, "task:c"));
	assert_null(pmbot_plan_managed_find(list, n, "task:x"));
	pmbot_plan_managed_free(list, n);
	/* without the token's login, alice's copy is not pm-bot's: no duplicate */
	assert_int_equal(pmbot_plan_managed(&list, &n, st, cfg, NULL), PMBOT_OK);
	assert_int_equal(n, 3);
	assert_int_equal(list[2].duplicate, 0);
	pmbot_plan_managed_free(list, n);
	pmbot_config_free(cfg);
	pmbot_state_free(st);
	pmbot_diag_list_free(&d);
	free(text);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_managed__only_trusted_markers_of_allowed_repos_with_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
