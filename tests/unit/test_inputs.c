#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers/gitrepo.h"

#include "pmbot/fs.h"
#include "pmbot/inputs.h"
#include "pmbot/banned.h"

/*
 * pmbot_inputs_start(): what the plan's state read was asked for, so that
 * an apply can start from it (pmbot_apply_run_from) only when it covers the
 * run. The gauges report has six items in acme/widgets and one blocker named
 * by URL in acme/gadgets.
 */

#define GAUGES "tests/fixtures/plan/gauges.md"

static const char *const gauges_ids[] = {
	"epic:gauges", "feat:dial", "feat:needle", "task:wire", "task:calibrate", "task:paint"
};

static int has_need(const pmbot_read_scope *s, const char *repo, const char *sid, long number)
{
	size_t i;

	for (i = 0; i < s->n_needs; i++) {
		const pmbot_read_need *nd = &s->needs[i];

		if (strcmp(nd->repo, repo))
			continue;
		if (sid ? nd->stable_id && !strcmp(nd->stable_id, sid) :
		    !nd->stable_id && nd->number == number)
			return 1;
	}
	return 0;
}

static void test_inputs_start__describes_the_scoped_read_of_the_plan(void **state)
{
	char statefile[512];
	char *paths[] = { (char *)"plans/*.md" };
	gitrepo *g = NULL;
	pmbot_repo *repo = NULL;
	pmbot_buf report = PMBOT_BUF_INIT;
	pmbot_inputs_opts o;
	pmbot_inputs in;
	pmbot_apply_start s;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	size_t i;

	(void)state;
	assert_int_equal(gitrepo_init(&g, 0), 0);
	assert_int_equal(pmbot_fs_read(&report, GAUGES), 0);
	assert_int_equal(gitrepo_write(g, ".github/pm-bot.yml",
		"repos: [acme/widgets]\nproject: {owner: acme, number: 1}\n"), 0);
	assert_int_equal(gitrepo_write(g, "plans/gauges.md", report.buf), 0);
	assert_int_equal(gitrepo_commit(g, NULL, "gauges"), 0);
	assert_int_equal(pmbot_repo_open(&repo, gitrepo_path(g), NULL), 0);
	snprintf(statefile, sizeof(statefile), "%s/state.json", gitrepo_path(g));
	memset(&o, 0, sizeof(o));
	o.repo = repo;
	o.rev = "HEAD";
	o.paths = paths;
	o.n_paths = 1;
	o.state = statefile;
	if (pmbot_inputs_load(&in, &o, &d) != PMBOT_OK)
		fail_msg("%s: %s", d.count ? d.items[0].code : "?", d.count ? d.items[0].message : "");
	assert_non_null(in.state);

	pmbot_inputs_start(&s, &in);
	assert_ptr_equal(s.state, in.state);
	assert_ptr_equal(s.backend, in.backend);
	assert_int_equal(s.n_repos, 1);
	assert_string_equal(s.repos[0], "acme/widgets");
	assert_string_equal(s.project_owner, "acme");
	assert_int_equal(s.project_number, 1);
	assert_non_null(s.scope);
	/* Every item, which a plan creates when it is absent, and the blocker by URL. */
	for (i = 0; i < sizeof(gauges_ids) / sizeof(gauges_ids[0]); i++)
		if (!has_need(s.scope, "acme/widgets", gauges_ids[i], 0))
			fail_msg("the scope lacks %s", gauges_ids[i]);
	assert_true(has_need(s.scope, "acme/gadgets", NULL, 1));
	assert_int_equal(s.scope->n_needs, 7);

	pmbot_inputs_free(&in);
	pmbot_diag_list_free(&d);
	pmbot_buf_free(&report);
	pmbot_repo_free(repo);
	gitrepo_free(g);
}

static void test_inputs_start__nothing_to_start_from_without_a_state(void **state)
{
	pmbot_inputs in;
	pmbot_apply_start s;

	(void)state;
	memset(&in, 0, sizeof(in));
	memset(&s, 0xff, sizeof(s));
	pmbot_inputs_start(&s, &in);
	assert_null(s.state);
	assert_null(s.scope);
	assert_int_equal(s.n_repos, 0);
	pmbot_inputs_free(&in);
}

/*
 * The reports' scope (the target when nothing else names one) and their
 * item count (limits.max_items) read the same from a JSON report, which
 * is read from its document, as from a YAML one, read from its tree.
 */
static const char *const yaml_report =
	"# B\n\n```pm-bot:report-ir/v1\n"
	"schema_version: report_ir/v1\n"
	"report: {title: B, generated_at: '2026-11-01', scope: {org: acme, repos: [%s]}}\n"
	"tasks:\n"
	"  - {stable_id: 'task:y1', title: Y1, area: ui, priority: P1}\n"
	"  - {stable_id: 'task:y2', title: Y2, area: ui, priority: P1}\n"
	"```\n";

/* The first is the target when the reports' scopes disagree. */
#define CONFIG "repos: [acme/gadgets, acme/widgets]\n"

/* Commit `config` and plans/b.md naming `b_repo`, then load: the return code. */
static int load_reports(pmbot_inputs *in, pmbot_diag_list *d, gitrepo *g, const char *config,
	const char *b_repo)
{
	char statefile[512], yaml[1024];
	char *paths[] = { (char *)"plans/*.md" };
	pmbot_repo *repo = NULL;
	pmbot_inputs_opts o;
	int rc;

	snprintf(yaml, sizeof(yaml), yaml_report, b_repo);
	assert_int_equal(gitrepo_write(g, ".github/pm-bot.yml", config), 0);
	assert_int_equal(gitrepo_write(g, "plans/b.md", yaml), 0);
	assert_int_equal(gitrepo_commit(g, NULL, "reports"), 0);
	assert_int_equal(pmbot_repo_open(&repo, gitrepo_path(g), NULL), 0);
	snprintf(statefile, sizeof(statefile), "%s/state.json", gitrepo_path(g));
	memset(&o, 0, sizeof(o));
	o.repo = repo;
	o.rev = "HEAD";
	o.paths = paths;
	o.n_paths = 1;
	o.state = statefile;
	rc = pmbot_inputs_load(in, &o, d);
	pmbot_repo_free(repo);
	return rc;
}

static void test_inputs__json_and_yaml_reports_give_their_scope_and_item_count(void **state)
{
	gitrepo *g = NULL;
	pmbot_buf report = PMBOT_BUF_INIT;
	pmbot_inputs in;
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *too_many;
	int rc;

	(void)state;
	assert_int_equal(gitrepo_init(&g, 0), 0);
	assert_int_equal(pmbot_fs_read(&report, GAUGES), 0);
	/* plans/a.md: JSON, six items, scope acme + widgets. */
	assert_int_equal(gitrepo_write(g, "plans/a.md", report.buf), 0);

	/* They agree (one spells the owner): the scope is the target. */
	rc = load_reports(&in, &d, g, CONFIG "limits: {max_items: 8}\n", "acme/widgets");
	if (rc != PMBOT_OK)
		fail_msg("%d %s: %s", rc, d.count ? d.items[0].code : "?", d.count ? d.items[0].message : "");
	assert_int_equal(in.n_items, 8);
	assert_string_equal(in.scope_target, "acme/widgets");
	assert_int_equal(in.scope_conflict, 0);
	assert_string_equal(in.target, "acme/widgets");
	assert_int_equal(in.graph->n_nodes, 8);
	pmbot_inputs_free(&in);
	pmbot_diag_list_free(&d);

	/* They disagree: the target is the configuration's first repository. */
	assert_int_equal(load_reports(&in, &d, g, CONFIG "limits: {max_items: 8}\n", "gadgets"),
		PMBOT_OK);
	assert_int_equal(in.scope_conflict, 1);
	assert_string_equal(in.target, "acme/gadgets");
	pmbot_inputs_free(&in);
	pmbot_diag_list_free(&d);

	/* One item too many, counted after the YAML report; then after the JSON one. */
	assert_int_equal(load_reports(&in, &d, g, CONFIG "limits: {max_items: 7}\n", "widgets"),
		PMBOT_EINVALID);
	assert_non_null(too_many = pmbot_diag_list_find(&d, "TOO_MANY_ITEMS"));
	assert_string_equal(too_many->file, "plans/b.md");
	pmbot_inputs_free(&in);
	pmbot_diag_list_free(&d);
	assert_int_equal(load_reports(&in, &d, g, CONFIG "limits: {max_items: 5}\n", "widgets"),
		PMBOT_EINVALID);
	assert_non_null(too_many = pmbot_diag_list_find(&d, "TOO_MANY_ITEMS"));
	assert_string_equal(too_many->file, "plans/a.md");
	pmbot_inputs_free(&in);
	pmbot_diag_list_free(&d);

	pmbot_buf_free(&report);
	gitrepo_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inputs_start__describes_the_scoped_read_of_the_plan),
		cmocka_unit_test(test_inputs_start__nothing_to_start_from_without_a_state),
		cmocka_unit_test(test_inputs__json_and_yaml_reports_give_their_scope_and_item_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
