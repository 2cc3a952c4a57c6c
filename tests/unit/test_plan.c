#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/plan.h"
#include "pmbot/text.h"
#include "pmbot/datetime.h"
#include "pmbot/banned.h"

/*
 * pmbot_plan_build against hand-made states. A "world" is a report's
 * WorkGraph, a config, the built-in forms and a state/v1 document that each
 * test edits as JSON before planning. world_applied() fills the document
 * with what an apply of a report leaves behind: every item rendered by
 * pmbot_render_issue (issue #k for the k-th stable_id in order), parents
 * and blockers set, project items with synced values.
 */

#define TARGET "acme/widgets"
#define REPORT_FILE "plans/gauges.md"
#define BOT "github-actions[bot]"

struct world {
	pmbot_workgraph *graph;
	pmbot_config *config;
	pmbot_formset *forms;
	json_t *doc;
	const char *target;
	const char *self_login;
	json_t *bundle;
	pmbot_diag_list diags;
	int rc;
};

/* ---- reports ------------------------------------------------------------ */

static char *read_fixture(const char *name)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	char path[256];

	snprintf(path, sizeof(path), "tests/fixtures/plan/%s", name);
	if (pmbot_fs_read(&b, path) < 0)
		fail_msg("cannot read %s", path);
	return pmbot_buf_detach(&b, NULL);
}

/* `text` (freed) with its only occurrence of `from` replaced by `to`. */
static char *edit(char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	pmbot_buf b = PMBOT_BUF_INIT;

	if (!at || strstr(at + 1, from))
		fail_msg("edit: '%s' must occur exactly once in the report", from);
	assert_int_equal(pmbot_buf_put(&b, text, (size_t)(at - text)), 0);
	assert_int_equal(pmbot_buf_puts(&b, to), 0);
	assert_int_equal(pmbot_buf_puts(&b, at + strlen(from)), 0);
	free(text);
	return pmbot_buf_detach(&b, NULL);
}

static char *gauges(void)
{
	return read_fixture("gauges.md");
}

static pmbot_workgraph *load_report(const char *text)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = NULL;
	pmbot_limits lim;
	int rc;

	pmbot_limits_default(&lim);
	rc = pmbot_workgraph_load(&g, REPORT_FILE, text, strlen(text), &lim, &d);
	if (rc != PMBOT_OK || d.errors)
		fail_msg("test report rejected: %s", d.count ? d.items[0].message : "?");
	pmbot_diag_list_free(&d);
	return g;
}

/* The WorkGraph of gauges.md as it was when it was applied. */
static pmbot_workgraph *gauges_graph(void)
{
	char *text = gauges();
	pmbot_workgraph *g = load_report(text);

	free(text);
	return g;
}

/* A report of `features` and `tasks` JSON arrays, each item on its own line. */
static char *report_of(const char *features, const char *tasks)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_buf_printf(&b, "# Generated\n\n```pm-bot:report-ir/v1\n"
		"{\"schema_version\": \"report_ir/v1\",\n"
		" \"report\": {\"title\": \"T\", \"generated_at\": \"2026-11-01\", "
		"\"scope\": {\"org\": \"acme\"}},\n"
		" \"features\": [%s],\n \"tasks\": [%s]}\n```\n", features, tasks), 0);
	return pmbot_buf_detach(&b, NULL);
}

/* 1-based line of the first occurrence of `needle` in `text`. */
static int line_of(const char *text, const char *needle)
{
	const char *at = strstr(text, needle), *s;
	int line = 1;

	assert_non_null(at);
	for (s = text; s < at; s++)
		line += *s == '\n';
	return line;
}

/* ---- state documents ------------------------------------------------------ */

static json_t *repo_issues(json_t *doc, const char *repo)
{
	json_t *repos = json_object_get(doc, "repositories"), *r;
	size_t i;

	json_array_foreach(repos, i, r)
		if (!strcmp(json_string_value(json_object_get(r, "repo")), repo))
			return json_object_get(r, "issues");
	r = json_pack("{s:s, s:[]}", "repo", repo, "issues");
	assert_non_null(r);
	assert_int_equal(json_array_append_new(repos, r), 0);
	return json_object_get(r, "issues");
}

/* Add issue repo#number (labels consumed) and return it, borrowed. */
static json_t *add_issue(json_t *doc, const char *repo, long number, const char *title,
	const char *body, json_t *labels, const char *author)
{
	pmbot_buf when = PMBOT_BUF_INIT, node = PMBOT_BUF_INIT;
	size_t alen = strlen(author);
	int bot = alen > 5 && !strcmp(author + alen - 5, "[bot]");
	/* ids unique across the two repositories the tests use */
	json_int_t base = strcmp(repo, TARGET) ? 2000000 : 1000000;
	long long t = 0;
	json_t *is;

	assert_int_equal(pmbot_datetime_parse(&t, "2026-11-02T10:00:00Z"), 0);
	assert_int_equal(pmbot_datetime_format(&when, t + number), 0);
	assert_int_equal(pmbot_buf_printf(&node, "I_%" JSON_INTEGER_FORMAT, base + number), 0);
	is = json_pack("{s:I, s:I, s:s, s:s, s:s, s:o, s:s, s:s, s:s, s:s, s:n, s:[]}",
		"number", (json_int_t)number, "database_id", base + number,
		"node_id", node.buf, "title", title, "body", body,
		"labels", labels ? labels : json_array(), "state", "open", "author", author,
		"author_type", bot ? "Bot" : "User", "updated_at", when.buf, "parent", "blocked_by");
	assert_non_null(is);
	assert_int_equal(json_array_append_new(repo_issues(doc, repo), is), 0);
	pmbot_buf_free(&when);
	pmbot_buf_free(&node);
	return is;
}

/* The issue repo#number of the document (borrowed). */
static json_t *doc_issue(json_t *doc, const char *repo, long number)
{
	json_t *issues = repo_issues(doc, repo), *is;
	size_t i;

	json_array_foreach(issues, i, is)
		if (json_integer_value(json_object_get(is, "number")) == number)
			return is;
	fail_msg("no issue %s#%ld in the test state", repo, number);
	return NULL;
}

static json_t *strings_json(char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		assert_int_equal(json_array_append_new(a, json_string(v[i])), 0);
	return a;
}

static void render(pmbot_rendered_issue *out, const struct world *w, const pmbot_workgraph *g,
	const char *stable_id)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_render_opts ro = { &w->config->labels, NULL };
	const pmbot_wg_node *n = pmbot_workgraph_find(g, stable_id);

	assert_non_null(n);
	memset(out, 0, sizeof(*out));
	assert_int_equal(pmbot_render_issue(out, g, n, pmbot_formset_find(w->forms, n->type), &ro,
		&d), PMBOT_OK);
	pmbot_diag_list_free(&d);
}

/* Issue number world_applied() gives an item: its 1-based rank by stable_id. */
static long number_of(const pmbot_workgraph *g, const char *stable_id)
{
	const pmbot_wg_node *n = pmbot_workgraph_find(g, stable_id);

	assert_non_null(n);
	return (long)(n - g->nodes) + 1;
}

static char *ref_of(const pmbot_workgraph *g, const char *target)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	if (!strncmp(target, "https://github.com/", 19)) {
		const char *s = target + 19, *issues = strstr(s, "/issues/");

		assert_non_null(issues);
		assert_int_equal(pmbot_buf_put(&b, s, (size_t)(issues - s)), 0);
		assert_int_equal(pmbot_buf_printf(&b, "#%s", issues + 8), 0);
	} else {
		assert_int_equal(pmbot_buf_printf(&b, TARGET "#%ld", number_of(g, target)), 0);
	}
	return pmbot_buf_detach(&b, NULL);
}

static const char *const priorities[] = { "P0", "P1", "P2", "P3" };
static const char *const sizes[] = { "XS", "S", "M", "L", "XL" };

static json_t *options(const char *prefix, const char *const *names, size_t n)
{
	json_t *a = json_array();
	char id[32];
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%s_%s", prefix, names[i]);
		assert_int_equal(json_array_append_new(a, json_pack("{s:s, s:s}", "id", id, "name",
			names[i])), 0);
	}
	return a;
}

/*
 * Project acme/1 with single-select Priority (P0..P3) and Size (XS..XL), a
 * number "Estimate (hrs)", a text Area and a text Notes pm-bot never syncs.
 */
static void add_project(json_t *doc)
{
	json_t *p = json_pack("{s:s, s:i, s:s, s:[{s:s, s:s, s:s, s:o}, {s:s, s:s, s:s, s:o},"
		" {s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s}], s:[]}",
		"owner", "acme", "number", 1, "node_id", "PVT_acme_1", "fields",
		"id", "F_prio", "name", "Priority", "type", "single_select", "options",
		options("prio", priorities, 4),
		"id", "F_size", "name", "Size", "type", "single_select", "options",
		options("size", sizes, 5),
		"id", "F_est", "name", "Estimate (hrs)", "type", "number",
		"id", "F_area", "name", "Area", "type", "text",
		"id", "F_notes", "name", "Notes", "type", "text",
		"items");

	assert_non_null(p);
	assert_int_equal(json_object_set_new(doc, "project", p), 0);
}

/* The project item of repo#number (borrowed), NULL when there is none. */
static json_t *doc_item(json_t *doc, const char *ref)
{
	json_t *items = json_object_get(json_object_get(doc, "project"), "items"), *it;
	size_t i;

	json_array_foreach(items, i, it)
		if (!strcmp(json_string_value(json_object_get(it, "issue")), ref))
			return it;
	return NULL;
}

/*
 * The state an apply of `g` leaves: issues #1.. in stable_id order with
 * rendered title, body and labels, authored by the Actions bot, parents and
 * blockers set (outside blockers exist in their repository), and, when the
 * document has a project, an item per issue with the synced values.
 */
static void world_applied_graph(struct world *w, const pmbot_workgraph *g)
{
	json_t *project = json_object_get(w->doc, "project");
	size_t i, k;

	for (i = 0; i < g->n_edges; i++)
		if (g->edges[i].external) {
			char *ref = ref_of(g, g->edges[i].to_id), *hash = strchr(ref, '#');
			long number = strtol(hash + 1, NULL, 10);
			json_t *issues, *is;
			int have = 0;

			*hash = '\0';
			issues = repo_issues(w->doc, ref);
			json_array_foreach(issues, k, is)
				have |= json_integer_value(json_object_get(is, "number")) == number;
			if (!have)
				add_issue(w->doc, ref, number, "An outside issue", "Filed by hand", NULL, "octocat");
			free(ref);
		}
	for (i = 0; i < g->n_nodes; i++) {
		const pmbot_wg_node *n = &g->nodes[i];
		const pmbot_wg_node *parent = pmbot_workgraph_parent(g, n);
		pmbot_rendered_issue r;
		json_t *is, *blocked;
		char *ref;

		render(&r, w, g, n->stable_id);
		is = add_issue(w->doc, TARGET, (long)i + 1, r.title, r.body,
			strings_json(r.labels, r.n_labels), BOT);
		pmbot_rendered_issue_free(&r);
		if (parent) {
			ref = ref_of(g, parent->stable_id);
			assert_int_equal(json_object_set_new(is, "parent", json_string(ref)), 0);
			free(ref);
		}
		blocked = json_object_get(is, "blocked_by");
		for (k = 0; k < g->n_edges; k++) {
			const pmbot_wg_edge *e = &g->edges[k];

			if (strcmp(e->from_id, n->stable_id) ||
			    (e->type != PMBOT_EDGE_DEPENDS_ON && e->type != PMBOT_EDGE_BLOCKED_BY))
				continue;
			ref = ref_of(g, e->to_id);
			assert_int_equal(json_array_append_new(blocked, json_string(ref)), 0);
			free(ref);
		}
		if (project) {
			static const char *const synced[][2] = {
				{ "Priority", "priority" }, { "Size", "size" },
				{ "Estimate (hrs)", "estimate_hrs" }, { "Area", "area" },
			};
			json_t *nj = NULL, *values = json_object(), *item;
			int triage = n->needs_human;
			char id[32];

			assert_int_equal(pmbot_workgraph_node_json(&nj, n), PMBOT_OK);
			ref = ref_of(g, n->stable_id);
			/* triage defaults are never synced, and "Triage" is no option */
			for (k = 0; !triage && k < sizeof(synced) / sizeof(synced[0]); k++) {
				json_t *v = json_object_get(nj, synced[k][1]);

				if (v)
					assert_int_equal(json_object_set(values, synced[k][0], v), 0);
			}
			snprintf(id, sizeof(id), "PVTI_%zu", i + 1);
			item = json_pack("{s:s, s:s, s:o}", "id", id, "issue", ref, "values", values);
			assert_non_null(item);
			assert_int_equal(json_array_append_new(json_object_get(project, "items"), item), 0);
			json_decref(nj);
			free(ref);
		}
	}
}

/* The state an apply of the report `text` (freed) leaves. */
static void world_applied(struct world *w, char *text)
{
	pmbot_workgraph *g = load_report(text);

	world_applied_graph(w, g);
	pmbot_workgraph_free(g);
	free(text);
}

/* ---- worlds and plans ------------------------------------------------------ */

/* A world planning the report `text` (freed) with `config_yaml` (NULL: defaults). */
static void world_init(struct world *w, char *text, const char *config_yaml)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	memset(w, 0, sizeof(*w));
	w->graph = load_report(text);
	free(text);
	if (config_yaml)
		assert_int_equal(pmbot_config_parse(&w->config, ".github/pm-bot.yml", config_yaml,
			strlen(config_yaml), TARGET, &d), PMBOT_OK);
	else
		assert_int_equal(pmbot_config_default(&w->config, TARGET), PMBOT_OK);
	assert_int_equal(d.count, 0);
	assert_int_equal(pmbot_formset_new(&w->forms, &w->config->labels), PMBOT_OK);
	w->doc = json_pack("{s:s, s:[]}", "schema_version", "state/v1", "repositories");
	assert_non_null(w->doc);
	w->target = TARGET;
	w->rc = PMBOT_ERROR;
}

static void world_free(struct world *w)
{
	pmbot_workgraph_free(w->graph);
	pmbot_config_free(w->config);
	pmbot_formset_free(w->forms);
	json_decref(w->doc);
	json_decref(w->bundle);
	pmbot_diag_list_free(&w->diags);
}

static char *canonical(const json_t *v)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_json_canonical(&b, v), 0);
	return pmbot_buf_detach(&b, NULL);
}

/*
 * The same plan, lean: the changesets kept only as their records must give
 * exactly the bytes `want` (the canonical JSON of the full tree), and the
 * bundle handed back is the full one without "changesets".
 */
static void plan_lean(pmbot_plan_input *in, const struct world *w, const char *want)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf cj = PMBOT_BUF_INIT;
	json_t *lean = NULL, *full = json_copy(w->bundle);
	char *a, *x;

	assert_non_null(full);
	assert_int_equal(json_object_del(full, "changesets"), 0);
	in->canonical = &cj;
	in->lean = 1;
	assert_int_equal(pmbot_plan_build(&lean, in, &d), w->rc);
	in->lean = 0;
	assert_non_null(lean);
	assert_null(json_object_get(lean, "changesets"));
	assert_string_equal(cj.buf, want);
	assert_int_equal(cj.len, strlen(want));
	a = canonical(lean);
	x = canonical(full);
	assert_string_equal(a, x);
	assert_int_equal(d.count, w->diags.count);
	free(a);
	free(x);
	json_decref(lean);
	json_decref(full);
	pmbot_buf_free(&cj);
	pmbot_diag_list_free(&d);
}

static void plan(struct world *w)
{
	pmbot_diag_list sd = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;
	pmbot_plan_input in;
	pmbot_buf cj = PMBOT_BUF_INIT;
	char *text = json_dumps(w->doc, JSON_COMPACT), *want;
	size_t i;

	assert_non_null(text);
	if (pmbot_state_parse(&st, "state.json", text, strlen(text), &sd) != PMBOT_OK)
		fail_msg("test state rejected: %s %s: %s", sd.items[0].code, sd.items[0].path,
			sd.items[0].message);
	free(text);
	pmbot_diag_list_free(&sd);
	json_decref(w->bundle);
	w->bundle = NULL;
	pmbot_diag_list_free(&w->diags);
	memset(&in, 0, sizeof(in));
	in.graph = w->graph;
	in.config = w->config;
	in.forms = w->forms;
	in.state = st;
	in.target = w->target;
	in.self_login = w->self_login;
	/* Every plan also checks the bytes handed back with it: appended after
	 * what the buffer held, exactly the bundle's canonical JSON. */
	assert_int_equal(pmbot_buf_puts(&cj, "held"), 0);
	in.canonical = &cj;
	w->rc = pmbot_plan_build(&w->bundle, &in, &w->diags);
	assert_int_not_equal(w->rc, PMBOT_ERROR);
	assert_non_null(w->bundle);
	/* Within an operation, keys strictly ascend (plan.h's order). */
	for (i = 1; i < json_array_size(json_object_get(w->bundle, "changesets")); i++) {
		const json_t *a = json_array_get(json_object_get(w->bundle, "changesets"), i - 1);
		const json_t *b = json_array_get(json_object_get(w->bundle, "changesets"), i);

		if (!strcmp(json_string_value(json_object_get(a, "operation")),
			json_string_value(json_object_get(b, "operation"))))
			assert_true(strcmp(json_string_value(json_object_get(a, "idempotency_key")),
				json_string_value(json_object_get(b, "idempotency_key"))) < 0);
	}
	want = canonical(w->bundle);
	assert_int_equal(cj.len, 4 + strlen(want));
	assert_memory_equal(cj.buf, "held", 4);
	assert_memory_equal(cj.buf + 4, want, strlen(want));
	plan_lean(&in, w, want);
	free(want);
	pmbot_buf_free(&cj);
	pmbot_state_free(st);
}


/* `actual` equals the JSON text `expected` (integers and reals differ). */
static void assert_json(const json_t *actual, const char *expected)
{
	json_error_t jerr;
	json_t *e = json_loads(expected, JSON_DECODE_ANY, &jerr);
	char *a, *x;

	if (!e)
		fail_msg("bad expected JSON: %s", jerr.text);
	if (!actual)
		fail_msg("missing JSON value; expected %s", expected);
	a = canonical(actual);
	x = canonical(e);
	assert_string_equal(a, x);
	free(a);
	free(x);
	json_decref(e);
}

static void assert_json_value(const json_t *actual, const json_t *expected)
{
	char *a = canonical(actual), *x = canonical(expected);

	assert_string_equal(a, x);
	free(a);
	free(x);
}

static json_t *changesets(const struct world *w)
{
	return json_object_get(w->bundle, "changesets");
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static const char *target_id(const json_t *cs)
{
	return str(json_object_get(cs, "target"), "stable_id");
}

/* Changesets with operation `op` (NULL: any) on item `id` (NULL: any). */
static size_t cs_count(const struct world *w, const char *op, const char *id)
{
	json_t *cs;
	size_t i, n = 0;

	json_array_foreach(changesets(w), i, cs)
		if ((!op || !strcmp(str(cs, "operation"), op)) &&
		    (!id || (target_id(cs) && !strcmp(target_id(cs), id))))
			n++;
	return n;
}

/* The only changeset with operation `op` on item `id` (borrowed). */
static json_t *cs_find(const struct world *w, const char *op, const char *id)
{
	json_t *cs, *found = NULL;
	size_t i;

	json_array_foreach(changesets(w), i, cs)
		if (!strcmp(str(cs, "operation"), op) && target_id(cs) && !strcmp(target_id(cs), id)) {
			if (found)
				fail_msg("two %s changesets on %s", op, id);
			found = cs;
		}
	if (!found)
		fail_msg("no %s changeset on %s", op, id);
	return found;
}

static const pmbot_diag *diag(const struct world *w, const char *code)
{
	const pmbot_diag *d = pmbot_diag_list_find(&w->diags, code);

	if (!d)
		fail_msg("no %s diagnostic", code);
	return d;
}

static size_t diag_count(const struct world *w, const char *code)
{
	size_t i, n = 0;

	for (i = 0; i < w->diags.count; i++)
		n += !strcmp(w->diags.items[i].code, code);
	return n;
}

/* "<op>:acme/widgets:<id>:<first 12 hex of sha256(canonical payload)>". */
static char *hashed_key(const char *op, const char *id, const json_t *payload)
{
	char hash[PMBOT_SHA256_HEX_SIZE];
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_sha256_json(hash, payload), 0);
	assert_int_equal(pmbot_buf_printf(&b, "%s:" TARGET ":%s:%.12s", op, id, hash), 0);
	return pmbot_buf_detach(&b, NULL);
}

static json_t *stable_binding(const char *id)
{
	return json_pack("{s:s, s:s}", "repo", TARGET, "stable_id", id);
}

/* ---- empty state ------------------------------------------------------------ */

static void test_plan__empty_state_creates_every_item_then_relationships_in_group_order(void **state)
{
	static const char *const expected[][2] = {
		{ "create_issue", "epic:gauges" }, { "create_issue", "feat:dial" },
		{ "create_issue", "feat:needle" }, { "create_issue", "task:calibrate" },
		{ "create_issue", "task:paint" }, { "create_issue", "task:wire" },
		{ "set_parent", "feat:dial" }, { "set_parent", "feat:needle" },
		{ "set_parent", "task:calibrate" }, { "set_parent", "task:paint" },
		{ "set_parent", "task:wire" },
		{ "add_dependency", "feat:needle" }, { "add_dependency", "task:wire" },
		{ "add_dependency", "task:wire" },
	};
	struct world w;
	json_t *cs;
	char id[32];
	size_t i;

	(void)state;
	world_init(&w, gauges(), NULL);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(w.diags.count, 0);
	assert_int_equal(json_array_size(changesets(&w)), sizeof(expected) / sizeof(expected[0]));
	json_array_foreach(changesets(&w), i, cs) {
		snprintf(id, sizeof(id), "cs-%04zu", i + 1);
		assert_string_equal(str(cs, "changeset_id"), id);
		assert_string_equal(str(cs, "operation"), expected[i][0]);
		assert_string_equal(target_id(cs), expected[i][1]);
		assert_string_equal(str(json_object_get(cs, "target"), "repo"), TARGET);
		assert_true(json_is_true(json_object_get(cs, "requires_approval")));
		assert_string_equal(str(cs, "status"), "proposed");
		/* within one operation, by idempotency key */
		if (i && !strcmp(str(json_array_get(changesets(&w), i - 1), "operation"),
			str(cs, "operation")))
			assert_true(strcmp(str(json_array_get(changesets(&w), i - 1), "idempotency_key"),
				str(cs, "idempotency_key")) < 0);
	}
	assert_json(json_object_get(w.bundle, "summary"), "{\"creates\":6,\"updates\":0,"
		"\"relationships\":8,\"project\":0,\"conflicts\":0,\"orphaned\":0,"
		"\"diagnostics\":0,\"total\":14}");
	assert_json(json_object_get(w.bundle, "conflicts"), "[]");
	assert_json(json_object_get(w.bundle, "orphaned"), "[]");
	assert_json(json_object_get(w.bundle, "diagnostics"), "[]");
	assert_json(json_object_get(w.bundle, "fingerprint"), "[]");
	assert_json(json_object_get(w.bundle, "source"), "{}");
	assert_string_equal(str(w.bundle, "schema_version"), "changeset_bundle/v1");
	assert_string_equal(str(w.bundle, "target"), TARGET);
	world_free(&w);
}

static void test_plan__create_carries_the_rendered_title_body_and_labels(void **state)
{
	struct world w;
	pmbot_rendered_issue r;
	json_t *cs, *expected;

	(void)state;
	world_init(&w, gauges(), NULL);
	plan(&w);
	render(&r, &w, w.graph, "task:wire");
	cs = cs_find(&w, "create_issue", "task:wire");
	expected = json_pack("{s:s, s:s%, s:o}", "title", r.title, "body", r.body, r.body_len,
		"labels", strings_json(r.labels, r.n_labels));
	assert_json_value(json_object_get(cs, "payload"), expected);
	/* what the render gives, spelled out */
	assert_json(json_object_get(json_object_get(cs, "payload"), "labels"),
		"[\"area:ui\",\"prio:P1\",\"size:M\",\"type:task\"]");
	assert_string_equal(str(json_object_get(cs, "payload"), "title"), "[task] Wire the gauge");
	/* blockers in edge order, whatever the report's order */
	assert_non_null(strstr(r.body, "### Blocked by\n"
		"https:" PMBOT_TEXT_ZWNJ "//github.com/acme/gadgets/issues/1, task:calibrate\n"));
	assert_null(json_object_get(cs, "before"));
	assert_null(json_object_get(cs, "after"));
	/* creates are keyed by stable id alone: a retried create must find itself */
	assert_string_equal(str(cs, "idempotency_key"), "create_issue:" TARGET ":task:wire");
	json_decref(expected);
	pmbot_rendered_issue_free(&r);
	world_free(&w);
}

static void test_plan__empty_state_sets_parents_without_replace(void **state)
{
	struct world w;
	json_t *cs, *payload;
	char *key;

	(void)state;
	world_init(&w, gauges(), NULL);
	plan(&w);
	cs = cs_find(&w, "set_parent", "task:wire");
	payload = json_pack("{s:o, s:b}", "parent", stable_binding("feat:dial"), "replace", 0);
	assert_json_value(json_object_get(cs, "payload"), payload);
	assert_json(json_object_get(cs, "before"), "{\"parent\":null}");
	key = hashed_key("set_parent", "task:wire", payload);
	assert_string_equal(str(cs, "idempotency_key"), key);
	free(key);
	json_decref(payload);

	cs = cs_find(&w, "set_parent", "feat:dial");
	assert_json(json_object_get(cs, "payload"),
		"{\"parent\":{\"repo\":\"acme/widgets\",\"stable_id\":\"epic:gauges\"},\"replace\":false}");
	/* a root has no parent to set */
	assert_int_equal(cs_count(&w, "set_parent", "epic:gauges"), 0);
	world_free(&w);
}

static void test_plan__empty_state_adds_dependencies_for_depends_on_and_blocked_by(void **state)
{
	struct world w;
	json_t *cs, *payload;
	size_t i, seen = 0;
	char *key;

	(void)state;
	world_init(&w, gauges(), NULL);
	plan(&w);
	cs = cs_find(&w, "add_dependency", "feat:needle");
	payload = json_pack("{s:o}", "blocker", stable_binding("feat:dial"));
	assert_json_value(json_object_get(cs, "payload"), payload);
	key = hashed_key("add_dependency", "feat:needle", payload);
	assert_string_equal(str(cs, "idempotency_key"), key);
	free(key);
	json_decref(payload);

	json_array_foreach(changesets(&w), i, cs) {
		if (strcmp(str(cs, "operation"), "add_dependency") || strcmp(target_id(cs), "task:wire"))
			continue;
		if (json_object_get(json_object_get(json_object_get(cs, "payload"), "blocker"), "number")) {
			/* an issue outside the plan is bound by repo and number */
			assert_json(json_object_get(cs, "payload"),
				"{\"blocker\":{\"number\":1,\"repo\":\"acme/gadgets\"}}");
			seen |= 1;
		} else {
			assert_json(json_object_get(cs, "payload"),
				"{\"blocker\":{\"repo\":\"acme/widgets\",\"stable_id\":\"task:calibrate\"}}");
			seen |= 2;
		}
		assert_null(json_object_get(cs, "before"));
	}
	assert_int_equal(seen, 3);
	world_free(&w);
}

static void test_plan__plan_hash_covers_changesets_and_fingerprint(void **state)
{
	struct world w;
	char hash[PMBOT_SHA256_HEX_SIZE], bid[32];

	(void)state;
	world_init(&w, gauges(), NULL);
	plan(&w);
	assert_int_equal(pmbot_plan_hash(hash, changesets(&w),
		json_object_get(w.bundle, "fingerprint")), 0);
	assert_string_equal(str(w.bundle, "plan_hash"), hash);
	snprintf(bid, sizeof(bid), "bundle-%.16s", hash);
	assert_string_equal(str(w.bundle, "bundle_id"), bid);
	assert_int_equal(pmbot_plan_count(w.bundle), 14);
	world_free(&w);
}

static void test_plan__plan_hash_changes_when_a_touched_issue_was_updated(void **state)
{
	struct world w;
	json_t *is;
	char *first_changesets, *again;
	char first_hash[PMBOT_SHA256_HEX_SIZE], hash[PMBOT_SHA256_HEX_SIZE];

	(void)state;
	world_init(&w, edit(gauges(), "\"Wire the gauge\"", "\"Wire the gauge harness\""), NULL);
	world_applied(&w, gauges());
	plan(&w);
	snprintf(first_hash, sizeof(first_hash), "%s", str(w.bundle, "plan_hash"));
	first_changesets = canonical(changesets(&w));
	assert_int_equal(pmbot_plan_hash(hash, changesets(&w),
		json_object_get(w.bundle, "fingerprint")), 0);
	assert_string_equal(first_hash, hash);

	/* somebody touched the issue on GitHub: same changes, another plan */
	is = doc_issue(w.doc, TARGET, number_of(w.graph, "task:wire"));
	assert_int_equal(json_object_set_new(is, "updated_at", json_string("2026-12-24T08:00:00Z")), 0);
	plan(&w);
	again = canonical(changesets(&w));
	assert_string_equal(again, first_changesets);
	assert_string_not_equal(str(w.bundle, "plan_hash"), first_hash);
	free(first_changesets);
	free(again);
	world_free(&w);
}

static void test_plan__same_inputs_and_reordered_report_give_identical_bytes(void **state)
{
	struct world a, b, c;
	char *ca, *cb, *cc;

	(void)state;
	world_init(&a, gauges(), NULL);
	world_init(&b, gauges(), NULL);
	world_init(&c, read_fixture("gauges-reordered.md"), NULL);
	plan(&a);
	plan(&b);
	plan(&c);
	ca = canonical(a.bundle);
	cb = canonical(b.bundle);
	cc = canonical(c.bundle);
	assert_string_equal(ca, cb);
	assert_string_equal(ca, cc);
	/* planning twice from one world gives the same bytes too */
	plan(&a);
	free(cb);
	cb = canonical(a.bundle);
	assert_string_equal(ca, cb);
	free(ca);
	free(cb);
	free(cc);
	world_free(&a);
	world_free(&b);
	world_free(&c);
}

static void test_plan__source_is_copied_into_the_bundle(void **state)
{
	struct world w;
	pmbot_state *st = NULL;
	pmbot_plan_input in;
	json_t *source = json_pack("{s:s, s:[{s:s, s:s}], s:s}", "commit", "abc123",
		"reports", "path", REPORT_FILE, "blob", "def456", "config_blob", "");
	json_t *bundle = NULL;

	(void)state;
	world_init(&w, gauges(), NULL);
	assert_int_equal(pmbot_state_new(&st), PMBOT_OK);
	memset(&in, 0, sizeof(in));
	in.graph = w.graph;
	in.config = w.config;
	in.forms = w.forms;
	in.state = st;
	in.target = TARGET;
	in.source = source;
	assert_int_equal(pmbot_plan_build(&bundle, &in, &w.diags), PMBOT_OK);
	assert_json_value(json_object_get(bundle, "source"), source);
	/* a deep copy: editing the caller's object later does not reach the bundle */
	assert_int_equal(json_object_set_new(source, "commit", json_string("changed")), 0);
	assert_string_equal(str(json_object_get(bundle, "source"), "commit"), "abc123");
	json_decref(bundle);
	json_decref(source);
	pmbot_state_free(st);
	world_free(&w);
}

/* ---- a state that already matches ------------------------------------------ */

static const char project_config[] =
	"repos: [acme/widgets]\n"
	"project:\n"
	"  owner: acme\n"
	"  number: 1\n";

static void test_plan__matching_state_gives_no_changesets(void **state)
{
	struct world w;
	char hash[PMBOT_SHA256_HEX_SIZE];

	(void)state;
	world_init(&w, gauges(), project_config);
	add_project(w.doc);
	world_applied(&w, gauges());
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	assert_int_equal(w.diags.count, 0);
	assert_json(json_object_get(w.bundle, "conflicts"), "[]");
	assert_json(json_object_get(w.bundle, "orphaned"), "[]");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(w.bundle, "summary"),
		"total")), 0);
	assert_int_equal(pmbot_plan_hash(hash, changesets(&w),
		json_object_get(w.bundle, "fingerprint")), 0);
	assert_string_equal(str(w.bundle, "plan_hash"), hash);
	world_free(&w);
}

static void test_plan__matching_state_without_project_config_gives_no_changesets(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	assert_int_equal(w.diags.count, 0);
	world_free(&w);
}

/* ---- changes to an applied report ------------------------------------------- */

static void test_plan__renamed_title_updates_only_the_title(void **state)
{
	struct world w;
	json_t *cs, *payload;
	char *key;

	(void)state;
	world_init(&w, edit(gauges(), "\"Wire the gauge\"", "\"Wire the gauge harness\""), NULL);
	world_applied(&w, gauges());
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 1);
	cs = cs_find(&w, "update_issue_title", "task:wire");
	assert_string_equal(str(cs, "changeset_id"), "cs-0001");
	assert_json(json_object_get(cs, "payload"), "{\"title\":\"[task] Wire the gauge harness\"}");
	assert_json(json_object_get(cs, "before"), "{\"title\":\"[task] Wire the gauge\"}");
	assert_json(json_object_get(cs, "after"), "{\"title\":\"[task] Wire the gauge harness\"}");
	payload = json_object_get(cs, "payload");
	key = hashed_key("update_issue_title", "task:wire", payload);
	assert_string_equal(str(cs, "idempotency_key"), key);
	free(key);
	world_free(&w);
}

static void test_plan__changed_priority_updates_body_and_swaps_prio_labels_only(void **state)
{
	struct world w;
	pmbot_rendered_issue old, now;
	json_t *is, *cs, *expected;
	long n;

	(void)state;
	world_init(&w, edit(gauges(), "\"priority\": \"P1\", \"size\": \"M\"",
		"\"priority\": \"P0\", \"size\": \"M\""), NULL);
	world_applied(&w, gauges());
	n = number_of(w.graph, "task:wire");
	/* labels people add are theirs */
	is = doc_issue(w.doc, TARGET, n);
	assert_int_equal(json_array_append_new(json_object_get(is, "labels"),
		json_string("bug-bash")), 0);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 3);
	assert_string_equal(str(cs_find(&w, "update_issue_body", "task:wire"), "changeset_id"),
		"cs-0001");
	assert_string_equal(str(cs_find(&w, "add_labels", "task:wire"), "changeset_id"), "cs-0002");
	assert_string_equal(str(cs_find(&w, "remove_labels", "task:wire"), "changeset_id"), "cs-0003");

	render(&now, &w, w.graph, "task:wire");
	{
		pmbot_workgraph *g = gauges_graph();

		render(&old, &w, g, "task:wire");
		pmbot_workgraph_free(g);
	}
	assert_non_null(strstr(now.body, "### Priority\nP0\n"));
	cs = cs_find(&w, "update_issue_body", "task:wire");
	expected = json_pack("{s:s%}", "body", now.body, now.body_len);
	assert_json_value(json_object_get(cs, "payload"), expected);
	assert_json_value(json_object_get(cs, "after"), expected);
	json_decref(expected);
	expected = json_pack("{s:s%}", "body", old.body, old.body_len);
	assert_json_value(json_object_get(cs, "before"), expected);
	json_decref(expected);

	assert_json(json_object_get(cs_find(&w, "add_labels", "task:wire"), "payload"),
		"{\"labels\":[\"prio:P0\"]}");
	assert_json(json_object_get(cs_find(&w, "remove_labels", "task:wire"), "payload"),
		"{\"labels\":[\"prio:P1\"]}");
	pmbot_rendered_issue_free(&old);
	pmbot_rendered_issue_free(&now);
	world_free(&w);
}

/*
 * Labels to add and to remove on both sides of the ones the issue keeps,
 * and foreign labels before and after them all: each list comes out in
 * byte order, the foreign ones untouched.
 */
static void test_plan__labels_to_add_and_remove_around_the_kept_ones(void **state)
{
	pmbot_rendered_issue now;
	struct world w;
	json_t *labels, *want;
	size_t i;

	(void)state;
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	render(&now, &w, w.graph, "task:calibrate");
	assert_true(now.n_labels >= 3);
	labels = json_object_get(doc_issue(w.doc, TARGET, number_of(w.graph, "task:calibrate")),
		"labels");
	assert_int_equal(json_array_clear(labels), 0);
	/* The first and last rendered labels are missing; the state lists its own unsorted. */
	assert_int_equal(json_array_append_new(labels, json_string("~after-all")), 0);
	assert_int_equal(json_array_append_new(labels, json_string("size:XXL")), 0);
	for (i = 1; i + 1 < now.n_labels; i++)
		assert_int_equal(json_array_append_new(labels, json_string(now.labels[i])), 0);
	assert_int_equal(json_array_append_new(labels, json_string("prio:P9")), 0);
	assert_int_equal(json_array_append_new(labels, json_string("0-before-all")), 0);
	plan(&w);
	want = json_pack("{s:[s,s]}", "labels", now.labels[0], now.labels[now.n_labels - 1]);
	assert_json_value(json_object_get(cs_find(&w, "add_labels", "task:calibrate"), "payload"),
		want);
	json_decref(want);
	assert_json(json_object_get(cs_find(&w, "remove_labels", "task:calibrate"), "payload"),
		"{\"labels\":[\"prio:P9\",\"size:XXL\"]}");
	pmbot_rendered_issue_free(&now);
	world_free(&w);
}

static void test_plan__labels_outside_the_scheme_are_never_removed(void **state)
{
	struct world w;
	json_t *labels;

	(void)state;
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	labels = json_object_get(doc_issue(w.doc, TARGET, number_of(w.graph, "task:calibrate")),
		"labels");
	assert_int_equal(json_array_append_new(labels, json_string("bug-bash")), 0);
	assert_int_equal(json_array_append_new(labels, json_string("good first issue")), 0);
	/* a label of the scheme pm-bot did not render is pm-bot's to remove */
	assert_int_equal(json_array_append_new(labels, json_string("size:XL")), 0);
	assert_int_equal(json_array_append_new(labels, json_string("needs-human")), 0);
	plan(&w);
	assert_int_equal(pmbot_plan_count(w.bundle), 1);
	assert_json(json_object_get(cs_find(&w, "remove_labels", "task:calibrate"), "payload"),
		"{\"labels\":[\"needs-human\",\"size:XL\"]}");
	world_free(&w);
}

static void test_plan__moved_task_replaces_its_parent(void **state)
{
	struct world w;
	json_t *cs, *fp, *e;
	char before[64];
	size_t i, seen = 0;

	(void)state;
	world_init(&w, edit(gauges(), "\"feature_id\": \"feat:dial\",\n     \"area\": \"ui\", "
		"\"priority\": \"P1\"", "\"feature_id\": \"feat:needle\",\n     \"area\": \"ui\", "
		"\"priority\": \"P1\""), NULL);
	world_applied(&w, gauges());
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 1);
	cs = cs_find(&w, "set_parent", "task:wire");
	assert_json(json_object_get(cs, "payload"),
		"{\"parent\":{\"repo\":\"acme/widgets\",\"stable_id\":\"feat:needle\"},\"replace\":true}");
	snprintf(before, sizeof(before), "{\"parent\":\"" TARGET "#%ld\"}",
		number_of(w.graph, "feat:dial"));
	assert_json(json_object_get(cs, "before"), before);
	/* the child and both parents are in the fingerprint, with their ids and times */
	fp = json_object_get(w.bundle, "fingerprint");
	json_array_foreach(fp, i, e) {
		pmbot_buf repo = PMBOT_BUF_INIT;
		long n = 0;
		json_t *is;

		assert_int_equal(pmbot_issue_ref_parse(&repo, &n, str(e, "ref")), 0);
		is = doc_issue(w.doc, repo.buf, n);
		assert_string_equal(str(e, "node_id"), str(is, "node_id"));
		assert_string_equal(str(e, "updated_at"), str(is, "updated_at"));
		if (strcmp(repo.buf, TARGET))
			n = 0;
		pmbot_buf_free(&repo);
		if (n == number_of(w.graph, "task:wire"))
			seen |= 1;
		if (n == number_of(w.graph, "feat:dial"))
			seen |= 2;
		if (n == number_of(w.graph, "feat:needle"))
			seen |= 4;
	}
	assert_int_equal(seen, 7);
	world_free(&w);
}

static void test_plan__parent_a_person_set_is_replaced_and_fingerprinted(void **state)
{
	struct world w;
	json_t *is, *e;
	size_t i;
	int seen = 0;

	(void)state;
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	is = add_issue(w.doc, TARGET, 45, "Someone's tracking issue", "Not pm-bot's", NULL, "octocat");
	assert_int_equal(json_object_set_new(doc_issue(w.doc, TARGET, number_of(w.graph, "task:wire")),
		"parent", json_string(TARGET "#45")), 0);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 1);
	assert_json(json_object_get(cs_find(&w, "set_parent", "task:wire"), "payload"),
		"{\"parent\":{\"repo\":\"acme/widgets\",\"stable_id\":\"feat:dial\"},\"replace\":true}");
	assert_json(json_object_get(cs_find(&w, "set_parent", "task:wire"), "before"),
		"{\"parent\":\"acme/widgets#45\"}");
	/* the issue losing a sub-issue is part of what the plan rests on */
	json_array_foreach(json_object_get(w.bundle, "fingerprint"), i, e)
		if (!strcmp(str(e, "ref"), TARGET "#45")) {
			assert_string_equal(str(e, "node_id"), str(is, "node_id"));
			assert_string_equal(str(e, "updated_at"), str(is, "updated_at"));
			seen = 1;
		}
	assert_true(seen);
	world_free(&w);
}

static void test_plan__removed_dependency_removes_only_the_edge_pm_bot_declared(void **state)
{
	struct world w;
	pmbot_buf ref = PMBOT_BUF_INIT;
	json_t *is, *cs;

	(void)state;
	world_init(&w, edit(gauges(), "\"blocked_by\": [\"task:calibrate\", ",
		"\"blocked_by\": ["), NULL);
	world_applied(&w, gauges());
	/* a person also made task:wire wait for task:paint: not pm-bot's edge */
	is = doc_issue(w.doc, TARGET, number_of(w.graph, "task:wire"));
	assert_int_equal(pmbot_issue_ref(&ref, TARGET, number_of(w.graph, "task:paint")), 0);
	assert_int_equal(json_array_append_new(json_object_get(is, "blocked_by"),
		json_string(ref.buf)), 0);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 2);
	/* the body's "Blocked by" line changes, and the declared edge goes */
	cs = cs_find(&w, "update_issue_body", "task:wire");
	assert_non_null(strstr(str(json_object_get(cs, "payload"), "body"),
		"### Blocked by\nhttps:" PMBOT_TEXT_ZWNJ "//github.com/acme/gadgets/issues/1\n"));
	cs = cs_find(&w, "remove_dependency", "task:wire");
	assert_string_equal(str(cs, "changeset_id"), "cs-0002");
	assert_json(json_object_get(cs, "payload"),
		"{\"blocker\":{\"repo\":\"acme/widgets\",\"stable_id\":\"task:calibrate\"}}");
	pmbot_buf_free(&ref);
	world_free(&w);
}

static void test_plan__fingerprint_names_only_issues_a_changeset_touches(void **state)
{
	struct world w;
	json_t *fp;
	pmbot_buf ref = PMBOT_BUF_INIT;

	(void)state;
	world_init(&w, edit(gauges(), "\"Wire the gauge\"", "\"Wire the gauge harness\""), NULL);
	world_applied(&w, gauges());
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	fp = json_object_get(w.bundle, "fingerprint");
	assert_int_equal(json_array_size(fp), 1);
	assert_int_equal(pmbot_issue_ref(&ref, TARGET, number_of(w.graph, "task:wire")), 0);
	assert_string_equal(str(json_array_get(fp, 0), "ref"), ref.buf);
	pmbot_buf_free(&ref);
	world_free(&w);
}

static void test_plan__denied_operations_are_not_proposed_and_say_so(void **state)
{
	struct world w;
	const pmbot_diag *d;

	(void)state;
	world_init(&w, edit(gauges(), "\"Wire the gauge\"", "\"Wire the gauge harness\""),
		"deny_operations: [update_issue_title]\n");
	world_applied(&w, gauges());
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	assert_non_null(d = diag(&w, "OPERATION_DENIED"));
	assert_int_equal(d->severity, PMBOT_SEV_WARNING);
	assert_string_equal(d->message, "1 update_issue_title change is not proposed: "
		".github/pm-bot.yml lists it under deny_operations");
	world_free(&w);
}

static void test_plan__denied_dependency_removal_warns_that_the_edge_stays(void **state)
{
	struct world w;
	const pmbot_diag *d;

	(void)state;
	world_init(&w, edit(gauges(), "\"blocked_by\": [\"task:calibrate\", ",
		"\"blocked_by\": ["), "deny_operations: [remove_dependency]\n");
	world_applied(&w, gauges());
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(cs_count(&w, "remove_dependency", "task:wire"), 0);
	assert_int_equal(cs_count(&w, "update_issue_body", "task:wire"), 1);
	assert_non_null(d = diag(&w, "DEPENDENCY_KEPT"));
	assert_int_equal(d->severity, PMBOT_SEV_WARNING);
	assert_non_null(strstr(d->message, "'task:wire' stays blocked by task:calibrate"));
	assert_int_equal(diag_count(&w, "OPERATION_DENIED"), 0);
	world_free(&w);
}

static void test_plan__declared_edge_a_person_already_removed_is_not_removed_again(void **state)
{
	struct world w;
	json_t *is;

	(void)state;
	world_init(&w, edit(gauges(), "\"blocked_by\": [\"task:calibrate\", ",
		"\"blocked_by\": ["), NULL);
	world_applied(&w, gauges());
	/* the body still lists task:calibrate, the edge itself is gone */
	is = doc_issue(w.doc, TARGET, number_of(w.graph, "task:wire"));
	assert_int_equal(json_object_set_new(is, "blocked_by",
		json_pack("[s]", "acme/gadgets#1")), 0);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 1);
	assert_int_equal(cs_count(&w, "update_issue_body", "task:wire"), 1);
	world_free(&w);
}

static void test_plan__removed_outside_dependency_is_bound_by_number(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, edit(gauges(), ", \"https://github.com/acme/gadgets/issues/1\"]", "]"), NULL);
	world_applied(&w, gauges());
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 2);
	assert_int_equal(cs_count(&w, "update_issue_body", "task:wire"), 1);
	assert_json(json_object_get(cs_find(&w, "remove_dependency", "task:wire"), "payload"),
		"{\"blocker\":{\"number\":1,\"repo\":\"acme/gadgets\"}}");
	world_free(&w);
}

static void test_plan__new_dependency_on_an_applied_item_is_added(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, edit(gauges(), "\"title\": \"Paint the needle\",",
		"\"title\": \"Paint the needle\", \"blocked_by\": [\"task:wire\"],"), NULL);
	world_applied(&w, gauges());
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 2);
	assert_int_equal(cs_count(&w, "update_issue_body", "task:paint"), 1);
	assert_json(json_object_get(cs_find(&w, "add_dependency", "task:paint"), "payload"),
		"{\"blocker\":{\"repo\":\"acme/widgets\",\"stable_id\":\"task:wire\"}}");
	world_free(&w);
}

/* ---- human edits and markers ------------------------------------------------ */

/* Prepend a human's note to the body of repo#n; returns the new body's rev. */
static void human_edit(json_t *doc, long n, char rev[PMBOT_SHA256_HEX_SIZE])
{
	json_t *is = doc_issue(doc, TARGET, n);
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_buf_printf(&b, "Note from a human: the gauge needs a bracket.\n\n%s",
		str(is, "body")), 0);
	assert_int_equal(json_object_set_new(is, "body", json_string(b.buf)), 0);
	assert_int_equal(pmbot_body_rev(rev, b.buf, b.len), 0);
	pmbot_buf_free(&b);
}

static void test_plan__human_edited_body_is_a_conflict_and_not_overwritten(void **state)
{
	struct world w;
	pmbot_rendered_issue old;
	pmbot_workgraph *g;
	char rev[PMBOT_SHA256_HEX_SIZE], ref[64], expected[512];
	long n;

	(void)state;
	world_init(&w, edit(gauges(), "\"priority\": \"P1\", \"size\": \"M\"",
		"\"priority\": \"P0\", \"size\": \"M\""), NULL);
	world_applied(&w, gauges());
	n = number_of(w.graph, "task:wire");
	human_edit(w.doc, n, rev);
	g = gauges_graph();
	render(&old, &w, g, "task:wire");
	pmbot_workgraph_free(g);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(cs_count(&w, "update_issue_body", NULL), 0);
	snprintf(ref, sizeof(ref), TARGET "#%ld", n);
	snprintf(expected, sizeof(expected), "[{\"stable_id\":\"task:wire\",\"ref\":\"%s\","
		"\"reason\":\"body_edited\",\"expected_rev\":\"%s\",\"actual_rev\":\"%s\"}]",
		ref, old.rev, rev);
	assert_json(json_object_get(w.bundle, "conflicts"), expected);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(w.bundle, "summary"),
		"conflicts")), 1);
	/* labels are not the body: they still follow the report */
	assert_int_equal(pmbot_plan_count(w.bundle), 2);
	assert_json(json_object_get(cs_find(&w, "add_labels", "task:wire"), "payload"),
		"{\"labels\":[\"prio:P0\"]}");
	assert_int_equal(cs_count(&w, "remove_labels", "task:wire"), 1);
	pmbot_rendered_issue_free(&old);
	world_free(&w);
}

/* A person's edit that the report now says too is adopted: no conflict, a new marker rev. */
static void test_plan__an_edit_the_report_now_matches_is_adopted(void **state)
{
	struct world w;
	pmbot_rendered_issue old, now;
	pmbot_workgraph *g;
	pmbot_buf human = PMBOT_BUF_INIT;
	const char *at;
	long n;

	(void)state;
	world_init(&w, edit(gauges(), "\"size\": \"M\", \"estimate_hrs\": 4",
		"\"size\": \"M\", \"estimate_hrs\": 6"), NULL);
	world_applied(&w, gauges());
	n = number_of(w.graph, "task:wire");
	g = gauges_graph();
	render(&old, &w, g, "task:wire");
	pmbot_workgraph_free(g);
	render(&now, &w, w.graph, "task:wire");
	/* the person typed what the report now says, under pm-bot's old marker */
	assert_non_null(at = strstr(now.body, now.rev));
	assert_int_equal(pmbot_buf_put(&human, now.body, (size_t)(at - now.body)), 0);
	assert_int_equal(pmbot_buf_puts(&human, old.rev), 0);
	assert_int_equal(pmbot_buf_puts(&human, at + strlen(now.rev)), 0);
	assert_string_not_equal(old.rev, now.rev);
	assert_int_equal(json_object_set_new(doc_issue(w.doc, TARGET, n), "body",
		json_string(human.buf)), 0);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_json(json_object_get(w.bundle, "conflicts"), "[]");
	assert_int_equal(cs_count(&w, "update_issue_body", "task:wire"), 1);
	assert_string_equal(str(json_object_get(cs_find(&w, "update_issue_body", "task:wire"),
		"payload"), "body"), now.body);
	pmbot_buf_free(&human);
	pmbot_rendered_issue_free(&old);
	pmbot_rendered_issue_free(&now);
	world_free(&w);
}

/*
 * Issue #n's body in the layout pm-bot wrote before the marker moved to
 * the top: the sections, a blank line, the marker. Same rev.
 */
static void old_layout(json_t *doc, long n)
{
	json_t *is = doc_issue(doc, TARGET, n);
	const char *body = str(is, "body"), *nl = strchr(body, '\n');
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_non_null(nl);
	assert_memory_equal(nl, "\n\n###", 5);
	assert_int_equal(pmbot_buf_printf(&b, "%s\n\n%.*s", nl + 2, (int)(nl - body), body), 0);
	assert_int_equal(json_object_set_new(is, "body", json_string(b.buf)), 0);
	pmbot_buf_free(&b);
}

static void test_plan__a_body_with_the_marker_last_moves_by_an_ordinary_body_update(void **state)
{
	struct world w;
	pmbot_rendered_issue now;
	json_t *cs, *is;
	char *old;
	long n;

	(void)state;
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	n = number_of(w.graph, "task:wire");
	old_layout(w.doc, n);
	is = doc_issue(w.doc, TARGET, n);
	old = strdup(str(is, "body"));
	render(&now, &w, w.graph, "task:wire");
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	/* Not a human edit: the rev is the same, only the layout differs. */
	assert_json(json_object_get(w.bundle, "conflicts"), "[]");
	assert_int_equal(pmbot_plan_count(w.bundle), 1);
	cs = cs_find(&w, "update_issue_body", "task:wire");
	assert_string_equal(str(json_object_get(cs, "before"), "body"), old);
	assert_string_equal(str(json_object_get(cs, "after"), "body"), now.body);
	assert_string_equal(str(json_object_get(cs, "payload"), "body"), now.body);
	assert_memory_equal(now.body, "<!-- pm-bot:id=task:wire rev=", 29);

	/* Once written, the next plan has nothing to do. */
	assert_int_equal(json_object_set_new(is, "body", json_string(now.body)), 0);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	assert_json(json_object_get(w.bundle, "conflicts"), "[]");
	free(old);
	pmbot_rendered_issue_free(&now);
	world_free(&w);
}

static void test_plan__a_body_with_the_marker_last_that_a_person_edited_stays_a_conflict(
	void **state)
{
	struct world w;
	char rev[PMBOT_SHA256_HEX_SIZE];
	const json_t *c;
	long n;

	(void)state;
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	n = number_of(w.graph, "task:wire");
	old_layout(w.doc, n);
	human_edit(w.doc, n, rev);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(cs_count(&w, "update_issue_body", NULL), 0);
	assert_int_equal(json_array_size(json_object_get(w.bundle, "conflicts")), 1);
	c = json_array_get(json_object_get(w.bundle, "conflicts"), 0);
	assert_string_equal(str(c, "reason"), "body_edited");
	assert_string_equal(str(c, "actual_rev"), rev);
	world_free(&w);
}

static void test_plan__conflicted_body_keeps_the_edges_it_declared(void **state)
{
	struct world w;
	char rev[PMBOT_SHA256_HEX_SIZE];

	(void)state;
	/* the report drops a dependency, but the body it was declared in was edited */
	world_init(&w, edit(gauges(), "\"blocked_by\": [\"task:calibrate\", ",
		"\"blocked_by\": ["), NULL);
	world_applied(&w, gauges());
	human_edit(w.doc, number_of(w.graph, "task:wire"), rev);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(json_array_size(json_object_get(w.bundle, "conflicts")), 1);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	world_free(&w);
}

static void test_plan__spoofed_marker_is_untrusted_and_the_item_is_created(void **state)
{
	struct world w;
	pmbot_rendered_issue r;
	const pmbot_diag *d;

	(void)state;
	world_init(&w, gauges(), NULL);
	render(&r, &w, w.graph, "task:wire");
	add_issue(w.doc, TARGET, 7, r.title, r.body, strings_json(r.labels, r.n_labels), "mallory");
	pmbot_rendered_issue_free(&r);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	d = diag(&w, "MARKER_UNTRUSTED");
	assert_int_equal(d->severity, PMBOT_SEV_WARNING);
	assert_string_equal(d->file, TARGET "#7");
	assert_non_null(strstr(d->message, "mallory"));
	assert_non_null(strstr(d->message, "task:wire"));
	assert_int_equal(diag_count(&w, "MARKER_UNTRUSTED"), 1);
	assert_int_equal(cs_count(&w, "create_issue", "task:wire"), 1);
	assert_int_equal(cs_count(&w, "create_issue", NULL), 6);
	assert_int_equal(pmbot_plan_count(w.bundle), 14);
	assert_json(json_object_get(w.bundle, "orphaned"), "[]");
	/* the bundle carries the warning too */
	assert_string_equal(str(json_array_get(json_object_get(w.bundle, "diagnostics"), 0), "code"),
		"MARKER_UNTRUSTED");
	world_free(&w);
}

static void test_plan__marker_of_the_self_login_is_trusted(void **state)
{
	struct world w;
	json_t *is;

	(void)state;
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	is = doc_issue(w.doc, TARGET, number_of(w.graph, "task:wire"));
	assert_int_equal(json_object_set_new(is, "author", json_string("acme-planner")), 0);
	assert_int_equal(json_object_set_new(is, "author_type", json_string("User")), 0);
	w.self_login = "acme-planner";
	plan(&w);
	assert_int_equal(w.diags.count, 0);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	/* without it, the same issue is not the item */
	w.self_login = NULL;
	plan(&w);
	assert_int_equal(diag_count(&w, "MARKER_UNTRUSTED"), 1);
	assert_int_equal(cs_count(&w, "create_issue", "task:wire"), 1);
	world_free(&w);
}

static void test_plan__marker_in_another_repository_is_not_the_item(void **state)
{
	struct world w;
	pmbot_rendered_issue r;

	(void)state;
	world_init(&w, gauges(), NULL);
	render(&r, &w, w.graph, "task:wire");
	add_issue(w.doc, "acme/gadgets", 7, r.title, r.body, strings_json(r.labels, r.n_labels), BOT);
	pmbot_rendered_issue_free(&r);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(w.diags.count, 0);
	assert_int_equal(cs_count(&w, "create_issue", "task:wire"), 1);
	assert_json(json_object_get(w.bundle, "orphaned"), "[]");
	world_free(&w);
}

static void test_plan__duplicate_trusted_marker_leaves_the_item_alone(void **state)
{
	struct world w;
	json_t *first;
	const pmbot_diag *d;
	char ref[64];
	long n;

	(void)state;
	/* the report renames the item, which would otherwise be an update */
	world_init(&w, edit(gauges(), "\"Wire the gauge\"", "\"Wire the gauge harness\""), NULL);
	world_applied(&w, gauges());
	n = number_of(w.graph, "task:wire");
	first = doc_issue(w.doc, TARGET, n);
	add_issue(w.doc, TARGET, 40, "[task] Wire the gauge (copy)", str(first, "body"), NULL, BOT);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	d = diag(&w, "DUPLICATE_MARKER");
	assert_int_equal(d->severity, PMBOT_SEV_WARNING);
	snprintf(ref, sizeof(ref), TARGET "#%ld", n);
	assert_non_null(strstr(d->message, ref));
	assert_non_null(strstr(d->message, TARGET "#40"));
	assert_non_null(strstr(d->message, "task:wire"));
	assert_int_equal(diag_count(&w, "DUPLICATE_MARKER"), 1);
	assert_int_equal(cs_count(&w, NULL, "task:wire"), 0);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	assert_json(json_object_get(w.bundle, "orphaned"), "[]");
	world_free(&w);
}

static void test_plan__duplicate_marker_on_a_blocker_adds_no_edge_to_it(void **state)
{
	struct world w;
	json_t *first;

	(void)state;
	/*
	 * The blocker's identity is unknown while two issues claim it, so the
	 * edge to it can be neither proved present nor added: it is left alone
	 * like the item (an add_dependency here would be planned on every run).
	 */
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	first = doc_issue(w.doc, TARGET, number_of(w.graph, "task:calibrate"));
	add_issue(w.doc, TARGET, 40, "[task] Calibrate (copy)", str(first, "body"), NULL, BOT);
	plan(&w);
	assert_int_equal(diag_count(&w, "DUPLICATE_MARKER"), 1);
	assert_int_equal(cs_count(&w, "add_dependency", NULL), 0);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	world_free(&w);
}

/* State extra.unreadable, as the GitHub backend writes it for a partial FORBIDDEN read. */
static void add_unreadable(json_t *doc, const char *repo, const char *ref, const char *field,
	const char *stable_id)
{
	json_t *extra = json_object_get(doc, "extra"), *list;

	if (!json_is_object(extra)) {
		assert_int_equal(json_object_set_new(doc, "extra", json_pack("{s:[]}", "unreadable")), 0);
		extra = json_object_get(doc, "extra");
	}
	if (!(list = json_object_get(extra, "unreadable"))) {
		assert_int_equal(json_object_set_new(extra, "unreadable", json_array()), 0);
		list = json_object_get(extra, "unreadable");
	}
	assert_int_equal(json_array_append_new(list, json_pack("{s:s, s:s?, s:[s], s:s?}", "repo",
		repo, "ref", ref, "fields", field, "stable_id", stable_id)), 0);
}

/* Remove issue repo#number from the document (a partial read leaves it out). */
static void drop_issue(json_t *doc, const char *repo, long number)
{
	json_t *issues = repo_issues(doc, repo), *is;
	size_t i;

	json_array_foreach(issues, i, is)
		if (json_integer_value(json_object_get(is, "number")) == number) {
			assert_int_equal(json_array_remove(issues, i), 0);
			return;
		}
	fail_msg("no issue %s#%ld", repo, number);
}

static void test_plan__unreadable_issue_with_a_known_marker_warns_and_is_left_alone(void **state)
{
	struct world w;
	const pmbot_diag *d;
	char ref[64];
	long n;

	(void)state;
	/* the report renames the item, which would otherwise be an update */
	world_init(&w, edit(gauges(), "\"Wire the gauge\"", "\"Wire the gauge harness\""), NULL);
	world_applied(&w, gauges());
	n = number_of(w.graph, "task:wire");
	snprintf(ref, sizeof(ref), TARGET "#%ld", n);
	drop_issue(w.doc, TARGET, n);
	add_unreadable(w.doc, TARGET, ref, "parent", "task:wire");
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	d = diag(&w, "ISSUE_UNREADABLE");
	assert_int_equal(d->severity, PMBOT_SEV_WARNING);
	assert_string_equal(d->file, ref);
	assert_non_null(strstr(d->message, ref));
	assert_non_null(strstr(d->message, "task:wire"));
	assert_non_null(strstr(d->message, "parent"));
	assert_int_equal(diag_count(&w, "ISSUE_UNREADABLE"), 1);
	assert_int_equal(diag_count(&w, "CREATE_UNPROVEN"), 0);
	/* no create of a second task:wire, no update, no edge, and it is not orphaned */
	assert_int_equal(cs_count(&w, NULL, "task:wire"), 0);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	assert_json(json_object_get(w.bundle, "orphaned"), "[]");
	world_free(&w);
}

static void test_plan__unreadable_issue_with_an_unknown_marker_withholds_every_create(void **state)
{
	struct world w;
	const pmbot_diag *d;
	char ref[64];
	long n;

	(void)state;
	/*
	 * task:wire's issue was nulled whole (its body unreadable): any item of
	 * the target might be that issue, so nothing absent can be created, and
	 * nothing that would hang off a withheld item (parent, edge) is planned.
	 */
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	n = number_of(w.graph, "task:wire");
	snprintf(ref, sizeof(ref), TARGET "#%ld", n);
	drop_issue(w.doc, TARGET, n);
	add_unreadable(w.doc, TARGET, NULL, "body", NULL);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	d = diag(&w, "ISSUE_UNREADABLE");
	assert_string_equal(d->file, TARGET);
	assert_non_null(strstr(d->message, "no new issue is created"));
	d = diag(&w, "CREATE_UNPROVEN");
	assert_int_equal(d->severity, PMBOT_SEV_WARNING);
	assert_non_null(strstr(d->message, "'task:wire'"));
	assert_int_equal(diag_count(&w, "CREATE_UNPROVEN"), 1);
	assert_int_equal(cs_count(&w, "create_issue", NULL), 0);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);

	/* from an empty target every item is withheld; the readable issue elsewhere does not matter */
	world_free(&w);
	world_init(&w, gauges(), NULL);
	add_unreadable(w.doc, TARGET, TARGET "#3", "body", NULL);
	add_unreadable(w.doc, "acme/gadgets", "acme/gadgets#1", "parent", NULL);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(diag_count(&w, "ISSUE_UNREADABLE"), 2);
	assert_int_equal(diag_count(&w, "CREATE_UNPROVEN"), 6);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	world_free(&w);
}

static void test_plan__unreadable_issue_in_another_repository_only_warns(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, gauges(), NULL);
	add_unreadable(w.doc, "acme/gadgets", NULL, "body", NULL);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(diag_count(&w, "ISSUE_UNREADABLE"), 1);
	assert_null(strstr(diag(&w, "ISSUE_UNREADABLE")->message, "no new issue"));
	assert_int_equal(diag_count(&w, "CREATE_UNPROVEN"), 0);
	assert_int_equal(cs_count(&w, "create_issue", NULL), 6);
	/* the edge to the unreadable issue acme/gadgets#1 is not added */
	world_free(&w);
	world_init(&w, gauges(), NULL);
	add_unreadable(w.doc, "acme/gadgets", "acme/gadgets#1", "parent", NULL);
	plan(&w);
	assert_int_equal(cs_count(&w, "add_dependency", "task:wire"), 1);
	assert_int_equal(cs_count(&w, "create_issue", NULL), 6);
	world_free(&w);
}

static void test_plan__no_sub_issue_support_plans_no_set_parent_and_says_so(void **state)
{
	struct world w;
	const pmbot_diag *d;

	(void)state;
	world_init(&w, gauges(), NULL);
	assert_int_equal(json_object_set_new(w.doc, "extra", json_pack("{s:[s]}", "unsupported",
		"sub_issues")), 0);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(cs_count(&w, "set_parent", NULL), 0);
	assert_int_equal(cs_count(&w, "create_issue", NULL), 6);
	assert_int_equal(cs_count(&w, "add_dependency", NULL), 3);
	d = diag(&w, "SUB_ISSUES_UNSUPPORTED");
	assert_int_equal(d->severity, PMBOT_SEV_WARNING);
	assert_non_null(strstr(d->message, "5 parent links are not planned"));
	assert_int_equal(w.diags.count, 1);
	world_free(&w);
}

static void test_plan__an_issue_the_narrow_read_missed_is_named_with_its_author(void **state)
{
	struct world w;
	const pmbot_diag *d;
	size_t before;

	(void)state;
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	plan(&w);
	before = pmbot_plan_count(w.bundle);
	world_free(&w);
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	assert_int_equal(json_object_set_new(w.doc, "extra", json_pack("{s:[{s:s, s:s, s:s, s:s}]}",
		"narrow_missed", "repo", "acme/widgets", "ref", "acme/widgets#2", "author", "alice",
		"stable_id", "feat:x")), 0);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	/* It is in the state like any issue: the plan is the same, with one warning. */
	assert_int_equal(pmbot_plan_count(w.bundle), before);
	assert_int_equal(w.diags.count, 1);
	d = diag(&w, "NARROW_READ_MISSED");
	assert_int_equal(d->severity, PMBOT_SEV_WARNING);
	assert_string_equal(d->file, "acme/widgets#2");
	assert_non_null(strstr(d->message, "acme/widgets#2 (item 'feat:x', created by alice)"));
	assert_non_null(strstr(d->message, "a scan of every issue"));
	world_free(&w);

	/* Many: ten named, the rest counted in one more warning. */
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	{
		json_t *list = json_array();
		char ref[32];
		int k;

		for (k = 1; k <= 25; k++) {
			snprintf(ref, sizeof(ref), "acme/widgets#%d", 100 + k);
			json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s}", "repo",
				"acme/widgets", "ref", ref, "author", "alice", "stable_id", "feat:x"));
		}
		assert_int_equal(json_object_set_new(w.doc, "extra", json_pack("{s:o}",
			"narrow_missed", list)), 0);
	}
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(diag_count(&w, "NARROW_READ_MISSED"), 11);
	{
		size_t k, more = 0;

		for (k = 0; k < w.diags.count; k++)
			more += strstr(w.diags.items[k].message, "and 15 more issues") != NULL;
		assert_int_equal(more, 1);
	}
	world_free(&w);
}

static void test_plan__no_dependency_support_plans_no_dependency_change_and_says_so(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, gauges(), NULL);
	assert_int_equal(json_object_set_new(w.doc, "extra", json_pack("{s:[s,s]}", "unsupported",
		"dependencies", "sub_issues")), 0);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(cs_count(&w, "add_dependency", NULL), 0);
	assert_int_equal(cs_count(&w, "set_parent", NULL), 0);
	assert_int_equal(pmbot_plan_count(w.bundle), 6);
	assert_non_null(strstr(diag(&w, "DEPENDENCIES_UNSUPPORTED")->message,
		"3 dependency changes are not planned"));
	assert_int_equal(diag_count(&w, "SUB_ISSUES_UNSUPPORTED"), 1);
	/* once applied, nothing is left to say */
	world_free(&w);
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	assert_int_equal(json_object_set_new(w.doc, "extra", json_pack("{s:[s,s]}", "unsupported",
		"dependencies", "sub_issues")), 0);
	plan(&w);
	assert_int_equal(w.diags.count, 0);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	world_free(&w);
}

/* ---- issue types ------------------------------------------------------------ */

/* State extra.issue_types: the target offers `names` (NULL-terminated). */
static void offer_types(json_t *doc, const char *const *names)
{
	json_t *list = json_array();

	assert_non_null(list);
	for (; *names; names++)
		assert_int_equal(json_array_append_new(list, json_string(*names)), 0);
	assert_int_equal(json_object_set_new(doc, "extra", json_pack("{s:{s:o}}", "issue_types",
		TARGET, list)), 0);
}

static void set_type(struct world *w, const char *stable_id, const char *type)
{
	json_t *is = doc_issue(w->doc, TARGET, number_of(w->graph, stable_id));

	assert_non_null(is);
	assert_int_equal(json_object_set_new(is, "issue_type", json_string(type)), 0);
}

static const char *const all_types[] = { "Epic", "Feature", "Task", "Bug", NULL };

static void test_plan__a_form_type_label_still_wants_the_type_of_the_item(void **state)
{
	static const char *const bench_types[] = { "Benchmark", "Task", NULL };
	static const char *form = "name: Perf run\nlabels: [type:bench]\n"
		"body: [{type: textarea, attributes: {label: Goal}}]\n";
	char *text = edit(gauges(), "\"title\": \"Paint the needle\",",
		"\"title\": \"Paint the needle\", \"type\": \"benchmark\",");
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	struct world w;
	json_t *cs;

	(void)state;
	world_init(&w, text, NULL);
	assert_int_equal(pmbot_formset_add(w.forms, ".github/ISSUE_TEMPLATE/perf.yml", form,
		strlen(form), &d), PMBOT_OK);
	offer_types(w.doc, bench_types);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_non_null(cs = cs_find(&w, "create_issue", "task:paint"));
	assert_json(json_object_get(json_object_get(cs, "payload"), "labels"),
		"[\"area:ui\",\"prio:P3\",\"type:bench\"]");
	/* the create names the type itself, so apply need not guess it from "bench" */
	assert_string_equal(str(json_object_get(cs, "payload"), "issue_type"), "Benchmark");
	/* a kind the repository has no type for names none */
	assert_null(json_object_get(json_object_get(cs_find(&w, "create_issue", "feat:dial"),
		"payload"), "issue_type"));
	assert_string_equal(str(json_object_get(cs_find(&w, "create_issue", "task:wire"),
		"payload"), "issue_type"), "Task");
	world_free(&w);

	/* Once it exists, the type it wants is Benchmark (its type), not "bench" (its label). */
	text = edit(gauges(), "\"title\": \"Paint the needle\",",
		"\"title\": \"Paint the needle\", \"type\": \"benchmark\",");
	world_init(&w, text, NULL);
	assert_int_equal(pmbot_formset_add(w.forms, ".github/ISSUE_TEMPLATE/perf.yml", form,
		strlen(form), &d), PMBOT_OK);
	world_applied(&w, edit(gauges(), "\"title\": \"Paint the needle\",",
		"\"title\": \"Paint the needle\", \"type\": \"benchmark\","));
	offer_types(w.doc, bench_types);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_non_null(cs = cs_find(&w, "set_issue_type", "task:paint"));
	assert_json(json_object_get(cs, "payload"), "{\"issue_type\":\"Benchmark\"}");
	world_free(&w);
	pmbot_diag_list_free(&d);
}

static void test_plan__existing_issues_get_the_type_their_kind_names(void **state)
{
	struct world w;
	json_t *cs;

	(void)state;
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	offer_types(w.doc, all_types);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 6);
	assert_int_equal(cs_count(&w, "set_issue_type", NULL), 6);
	cs = cs_find(&w, "set_issue_type", "feat:dial");
	assert_json(json_object_get(cs, "payload"), "{\"issue_type\":\"Feature\"}");
	assert_json(json_object_get(cs, "before"), "{\"issue_type\":null}");
	assert_json(json_object_get(cs_find(&w, "set_issue_type", "epic:gauges"), "payload"),
		"{\"issue_type\":\"Epic\"}");
	assert_json(json_object_get(cs_find(&w, "set_issue_type", "task:paint"), "payload"),
		"{\"issue_type\":\"Task\"}");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(w.bundle, "summary"),
		"updates")), 6);
	world_free(&w);
}

static void test_plan__a_type_that_matches_ignoring_case_is_no_change(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	offer_types(w.doc, all_types);
	/* What a create that carried the type reads back; GitHub's spelling may differ. */
	set_type(&w, "epic:gauges", "Epic");
	set_type(&w, "feat:dial", "feature");
	set_type(&w, "feat:needle", "Feature");
	set_type(&w, "task:wire", "TASK");
	set_type(&w, "task:calibrate", "Task");
	set_type(&w, "task:paint", "Task");
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	assert_int_equal(w.diags.count, 0);
	world_free(&w);
}

static void test_plan__a_type_a_person_changed_is_set_back_and_a_kind_without_a_type_is_left(void **state)
{
	static const char *const only_epic[] = { "epic", NULL };
	struct world w;
	json_t *cs;

	(void)state;
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	offer_types(w.doc, only_epic);
	set_type(&w, "epic:gauges", "Bug");
	set_type(&w, "task:wire", "Bug"); /* no Task type: the task keeps what it has */
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 1);
	cs = cs_find(&w, "set_issue_type", "epic:gauges");
	/* The repository's spelling of the type, not the kind's. */
	assert_json(json_object_get(cs, "payload"), "{\"issue_type\":\"epic\"}");
	assert_json(json_object_get(cs, "before"), "{\"issue_type\":\"Bug\"}");
	world_free(&w);
}

static void test_plan__issue_types_off_or_unknown_plan_no_type(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, gauges(), "issue_types: off\n");
	world_applied(&w, gauges());
	offer_types(w.doc, all_types);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	world_free(&w);

	/* A state without extra.issue_types (a file backend, a GitHub without them). */
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	set_type(&w, "task:wire", "Bug");
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	world_free(&w);
}

static void test_plan__denied_set_issue_type_is_not_proposed(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, gauges(), "deny_operations: [set_issue_type]\n");
	world_applied(&w, gauges());
	offer_types(w.doc, all_types);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	assert_non_null(strstr(diag(&w, "OPERATION_DENIED")->message, "6 set_issue_type changes"));
	world_free(&w);
}

static void test_plan__managed_issue_missing_from_the_report_is_orphaned_not_closed(void **state)
{
	struct world w;
	char rev[PMBOT_SHA256_HEX_SIZE];
	pmbot_buf body = PMBOT_BUF_INIT;

	(void)state;
	world_init(&w, gauges(), NULL);
	world_applied(&w, gauges());
	assert_int_equal(pmbot_body_rev(rev, "### Goal\nRetired", 16), 0);
	assert_int_equal(pmbot_buf_printf(&body, "### Goal\nRetired\n\n<!-- pm-bot:id=task:old rev=%s -->",
		rev), 0);
	add_issue(w.doc, TARGET, 40, "[task] Old", body.buf, NULL, BOT);
	/* an untrusted marker of an unknown item is not pm-bot's orphan */
	add_issue(w.doc, TARGET, 41, "[task] Fake", body.buf, NULL, "mallory");
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_json(json_object_get(w.bundle, "orphaned"),
		"[{\"stable_id\":\"task:old\",\"ref\":\"acme/widgets#40\"}]");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(w.bundle, "summary"),
		"orphaned")), 1);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	assert_int_equal(diag_count(&w, "MARKER_UNTRUSTED"), 1);
	pmbot_buf_free(&body);
	world_free(&w);
}

/* The set_project_field changeset of item `id` for `field` (borrowed). */
static json_t *field_cs(const struct world *w, const char *id, const char *field)
{
	json_t *cs;
	size_t i;

	json_array_foreach(changesets(w), i, cs)
		if (!strcmp(str(cs, "operation"), "set_project_field") && !strcmp(target_id(cs), id) &&
		    !strcmp(str(json_object_get(cs, "payload"), "field"), field))
			return cs;
	fail_msg("no set_project_field of %s on %s", field, id);
	return NULL;
}

/* ---- project ------------------------------------------------------------------ */

static void test_plan__project_adds_items_and_sets_fields_by_type(void **state)
{
	struct world w;
	json_t *cs, *value;
	size_t i;

	(void)state;
	world_init(&w, gauges(), project_config);
	world_applied(&w, gauges());
	add_project(w.doc);     /* after the apply: no item on the board yet */
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(w.diags.count, 0);
	/* Priority and Area for all six, Size and Estimate for task:wire only */
	assert_int_equal(cs_count(&w, "add_to_project", NULL), 6);
	assert_int_equal(cs_count(&w, "set_project_field", NULL), 14);
	assert_int_equal(pmbot_plan_count(w.bundle), 20);
	json_array_foreach(changesets(&w), i, cs)
		assert_string_equal(str(cs, "operation"), i < 6 ? "add_to_project" : "set_project_field");
	assert_json(json_object_get(json_object_get(w.bundle, "summary"), "project"), "20");

	cs = cs_find(&w, "add_to_project", "task:wire");
	assert_json(json_object_get(cs, "payload"), "{\"project\":\"acme/1\"}");
	assert_string_equal(str(cs, "idempotency_key"), "add_to_project:" TARGET ":task:wire");

	json_array_foreach(changesets(&w), i, cs) {
		const char *field = str(json_object_get(cs, "payload"), "field");

		if (strcmp(str(cs, "operation"), "set_project_field") || strcmp(target_id(cs), "task:wire"))
			continue;
		value = json_object_get(json_object_get(cs, "payload"), "value");
		assert_json(json_object_get(cs, "before"), "{\"value\":null}");
		if (!strcmp(field, "Priority"))
			assert_json(value, "\"P1\"");
		else if (!strcmp(field, "Size"))
			assert_json(value, "\"M\"");
		else if (!strcmp(field, "Area"))
			assert_json(value, "\"ui\"");
		else if (!strcmp(field, "Estimate (hrs)"))
			assert_json(value, "4.0"); /* a number field takes a number, never "4" */
		else
			fail_msg("unexpected field %s", field);
	}
	assert_int_equal(cs_count(&w, "set_project_field", "task:wire"), 4);
	world_free(&w);
}

static void test_plan__single_select_value_is_the_option_name(void **state)
{
	struct world w;
	json_t *cs;
	size_t i, n = 0;

	(void)state;
	/* "m" names option "M" */
	world_init(&w, edit(gauges(), "\"size\": \"M\"", "\"size\": \"m\""), project_config);
	add_project(w.doc);
	world_applied(&w, gauges());
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	json_array_foreach(changesets(&w), i, cs)
		if (!strcmp(str(cs, "operation"), "set_project_field"))
			n++;
	/* the item already holds "M": only the labels and body follow the new spelling */
	assert_int_equal(n, 0);
	assert_int_equal(cs_count(&w, "add_labels", "task:wire"), 1);
	world_free(&w);
}

static void test_plan__changed_field_value_is_set_with_its_old_value(void **state)
{
	struct world w;
	json_t *cs, *item, *values;
	char ref[64];

	(void)state;
	world_init(&w, gauges(), project_config);
	add_project(w.doc);
	world_applied(&w, gauges());
	snprintf(ref, sizeof(ref), TARGET "#%ld", number_of(w.graph, "task:wire"));
	item = doc_item(w.doc, ref);
	assert_non_null(item);
	values = json_object_get(item, "values");
	assert_int_equal(json_object_set_new(values, "Estimate (hrs)", json_real(2.5)), 0);
	assert_int_equal(json_object_set_new(values, "Priority", json_string("P3")), 0);
	/* a field pm-bot does not sync keeps what people wrote */
	assert_int_equal(json_object_set_new(values, "Notes", json_string("ask Sam")), 0);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(pmbot_plan_count(w.bundle), 2);
	assert_int_equal(cs_count(&w, "add_to_project", NULL), 0);
	cs = field_cs(&w, "task:wire", "Estimate (hrs)");
	assert_json(json_object_get(cs, "payload"), "{\"field\":\"Estimate (hrs)\",\"value\":4.0}");
	assert_json(json_object_get(cs, "before"), "{\"value\":2.5}");
	cs = field_cs(&w, "task:wire", "Priority");
	assert_json(json_object_get(cs, "payload"), "{\"field\":\"Priority\",\"value\":\"P1\"}");
	assert_json(json_object_get(cs, "before"), "{\"value\":\"P3\"}");
	world_free(&w);
}

/*
 * A held value is left alone only when it is exactly what would be set:
 * the option the report names in any case, a text byte for byte, a number
 * of the same value however it is written.
 */
static void test_plan__a_held_value_is_kept_only_when_it_is_the_value_to_set(void **state)
{
	struct world w;
	json_t *values;
	char ref[64];

	(void)state;
	world_init(&w, edit(gauges(), "\"size\": \"M\"", "\"size\": \"m\""), project_config);
	add_project(w.doc);
	world_applied(&w, gauges());
	snprintf(ref, sizeof(ref), TARGET "#%ld", number_of(w.graph, "task:wire"));
	values = json_object_get(doc_item(w.doc, ref), "values");
	assert_non_null(values);
	assert_int_equal(json_object_set_new(values, "Priority", json_string("P2")), 0);
	assert_int_equal(json_object_set_new(values, "Area", json_string("ui ")), 0);
	assert_int_equal(json_object_set_new(values, "Estimate (hrs)", json_integer(4)), 0);
	assert_int_equal(json_object_set_new(values, "Size", json_string("M")), 0);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	/* Not Size: the report's "m" is option "M". Not Estimate: 4 is 4.0. */
	assert_int_equal(cs_count(&w, "set_project_field", NULL), 2);
	assert_json(json_object_get(field_cs(&w, "task:wire", "Priority"), "payload"),
		"{\"field\":\"Priority\",\"value\":\"P1\"}");
	assert_json(json_object_get(field_cs(&w, "task:wire", "Area"), "before"),
		"{\"value\":\"ui \"}");
	world_free(&w);
}

static void test_plan__unknown_option_is_an_error_naming_the_options(void **state)
{
	struct world w;
	const pmbot_diag *d;
	json_t *cs;
	size_t i;

	(void)state;
	world_init(&w, edit(gauges(), "\"title\": \"Paint the needle\", \"feature_id\": \"feat:needle\",\n"
		"     \"area\": \"ui\", \"priority\": \"P3\"",
		"\"title\": \"Paint the needle\", \"feature_id\": \"feat:needle\",\n"
		"     \"area\": \"ui\", \"priority\": \"P9\""), project_config);
	add_project(w.doc);
	world_applied(&w, gauges());
	plan(&w);
	assert_int_equal(w.rc, PMBOT_EINVALID);
	d = diag(&w, "PROJECT_UNKNOWN_OPTION");
	assert_int_equal(d->severity, PMBOT_SEV_ERROR);
	assert_string_equal(d->message,
		"the project field 'Priority' has no option 'P9'; it has: 'P0', 'P1', 'P2', 'P3'");
	assert_string_equal(d->file, REPORT_FILE);
	assert_string_equal(d->path, "/tasks/2");
	assert_int_equal(diag_count(&w, "PROJECT_UNKNOWN_OPTION"), 1);
	json_array_foreach(changesets(&w), i, cs)
		assert_false(!strcmp(str(cs, "operation"), "set_project_field") &&
			!strcmp(target_id(cs), "task:paint"));
	assert_string_equal(str(json_array_get(json_object_get(w.bundle, "diagnostics"), 0), "code"),
		"PROJECT_UNKNOWN_OPTION");
	world_free(&w);
}

static void test_plan__triage_defaults_are_not_synced_to_the_project(void **state)
{
	struct world w;
	json_t *cs;
	size_t i;

	(void)state;
	/* no area and no priority: triage defaults and needs-human */
	world_init(&w, edit(gauges(), "\"title\": \"Paint the needle\", \"feature_id\": \"feat:needle\",\n"
		"     \"area\": \"ui\", \"priority\": \"P3\"",
		"\"title\": \"Paint the needle\", \"feature_id\": \"feat:needle\""), project_config);
	add_project(w.doc);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(diag_count(&w, "PROJECT_UNKNOWN_OPTION"), 0);
	assert_int_equal(cs_count(&w, "add_to_project", "task:paint"), 1);
	assert_int_equal(cs_count(&w, "set_project_field", "task:paint"), 0);
	/* the labels still say a human must look */
	cs = cs_find(&w, "create_issue", "task:paint");
	assert_json(json_object_get(json_object_get(cs, "payload"), "labels"),
		"[\"area:triage\",\"needs-human\",\"prio:Triage\",\"type:task\"]");
	/* other items are synced as usual */
	json_array_foreach(changesets(&w), i, cs)
		if (!strcmp(str(cs, "operation"), "set_project_field"))
			assert_string_not_equal(target_id(cs), "task:paint");
	assert_int_equal(cs_count(&w, "set_project_field", "task:calibrate"), 2);
	world_free(&w);
}

static void test_plan__configured_project_missing_from_the_state_plans_no_project_change(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, gauges(), project_config);
	world_applied(&w, gauges());
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(diag(&w, "PROJECT_NOT_FOUND")->severity, PMBOT_SEV_WARNING);
	assert_int_equal(pmbot_plan_count(w.bundle), 0);
	world_free(&w);
}

/*
 * A changeset bigger than a block of records (64 KiB: a goal of 33,000
 * two-byte characters, within GitHub's 65,536) among small ones: every
 * record, in its own block or not, is the changeset (plan() compares the
 * bytes written from them with the tree's), the big one whole.
 */
static void test_plan__a_changeset_larger_than_a_record_block_is_written_whole(void **state)
{
	pmbot_buf tasks = PMBOT_BUF_INIT, goal = PMBOT_BUF_INIT;
	struct world w;
	json_t *cs;
	const char *body;
	size_t i;

	(void)state;
	for (i = 0; i < 33000; i++)
		assert_int_equal(pmbot_buf_puts(&goal, "\xc3\xa9"), 0);
	for (i = 0; i < 60; i++)
		assert_int_equal(pmbot_buf_printf(&tasks, "%s\n  {\"stable_id\": \"task:t%02zu\", "
			"\"title\": \"T%zu\", \"feature_id\": \"feat:big\", \"area\": \"ui\", "
			"\"priority\": \"P2\"%s%s%s}", i ? "," : "", i, i,
			i == 30 ? ", \"goal\": \"" : "", i == 30 ? goal.buf : "", i == 30 ? "\"" : ""), 0);
	world_init(&w, report_of("\n  {\"stable_id\": \"feat:big\", \"title\": \"Big\", "
		"\"area\": \"ui\", \"priority\": \"P2\"}", tasks.buf), NULL);
	plan(&w);
	assert_int_equal(w.diags.errors, 0);
	cs = cs_find(&w, "create_issue", "task:t30");
	body = str(json_object_get(cs, "payload"), "body");
	assert_non_null(strstr(body, goal.buf));
	assert_true(strlen(body) > 64 * 1024);
	assert_non_null(cs_find(&w, "create_issue", "task:t29"));
	assert_non_null(cs_find(&w, "create_issue", "task:t31"));
	world_free(&w);
	pmbot_buf_free(&tasks);
	pmbot_buf_free(&goal);
}

/* ---- limits and refusals -------------------------------------------------------- */

/* A feature feat:big with `n` tasks task:tNNN under it. */
static char *big_feature_report(size_t n)
{
	pmbot_buf tasks = PMBOT_BUF_INIT;
	char *text;
	size_t i;

	for (i = 0; i < n; i++)
		assert_int_equal(pmbot_buf_printf(&tasks, "%s\n  {\"stable_id\": \"task:t%03zu\", "
			"\"title\": \"T%zu\", \"feature_id\": \"feat:big\", \"area\": \"ui\", "
			"\"priority\": \"P2\"}", i ? "," : "", i, i), 0);
	text = report_of("\n  {\"stable_id\": \"feat:big\", \"title\": \"Big\", \"area\": \"ui\", "
		"\"priority\": \"P2\"}", tasks.buf);
	pmbot_buf_free(&tasks);
	return text;
}

/*
 * Items are planned in stable_id order, but a key is "OP:REPO:ID:HASH":
 * "task:a-1:" sorts before "task:a:" ('-' < ':') although "task:a" comes
 * first as an id. Every operation's changesets still come in key order.
 */
static void test_plan__changesets_follow_their_keys_not_the_item_order(void **state)
{
	struct world w;
	json_t *cs, *prev = NULL;
	size_t i;
	char *text = report_of("\n  {\"stable_id\": \"feat:a\", \"title\": \"A\", \"area\": \"ui\", "
		"\"priority\": \"P2\"}",
		"\n  {\"stable_id\": \"task:a\", \"title\": \"A\", \"feature_id\": \"feat:a\", "
		"\"area\": \"ui\", \"priority\": \"P2\", \"depends_on\": [\"task:b\", \"task:a-1\"]},"
		"\n  {\"stable_id\": \"task:a-1\", \"title\": \"A1\", \"feature_id\": \"feat:a\", "
		"\"area\": \"ui\", \"priority\": \"P2\"},"
		"\n  {\"stable_id\": \"task:b\", \"title\": \"B\", \"feature_id\": \"feat:a\", "
		"\"area\": \"ui\", \"priority\": \"P2\", \"depends_on\": [\"task:a-1\"]}");

	(void)state;
	world_init(&w, text, NULL);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(cs_count(&w, "create_issue", "task:a"), 1);
	assert_int_equal(cs_count(&w, "set_parent", "task:a-1"), 1);
	assert_int_equal(cs_count(&w, "add_dependency", "task:a"), 2);
	json_array_foreach(changesets(&w), i, cs) {
		if (prev && !strcmp(str(prev, "operation"), str(cs, "operation")))
			assert_true(strcmp(str(prev, "idempotency_key"), str(cs, "idempotency_key")) < 0);
		prev = cs;
	}
	/* The set_parent of task:a-1 comes before task:a's, unlike the items. */
	prev = NULL;
	json_array_foreach(changesets(&w), i, cs)
		if (!prev && !strcmp(str(cs, "operation"), "set_parent") &&
		    !strncmp(target_id(cs), "task:a", 6))
			prev = cs;
	assert_non_null(prev);
	assert_string_equal(target_id(prev), "task:a-1");
	world_free(&w);
}

static void test_plan__more_than_100_sub_issues_is_a_limit_error(void **state)
{
	struct world w;
	const pmbot_diag *d;
	char *text = big_feature_report(101);
	int line = line_of(text, "\"stable_id\": \"feat:big\"");

	(void)state;
	world_init(&w, text, NULL);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_EINVALID);
	d = diag(&w, "LIMIT_SUB_ISSUES");
	assert_int_equal(d->severity, PMBOT_SEV_ERROR);
	assert_string_equal(d->message, "'feat:big' would have 101 sub-issues; GitHub allows 100");
	assert_string_equal(d->file, REPORT_FILE);
	assert_string_equal(d->path, "/features/0");
	assert_int_equal(d->line, line);
	assert_int_equal(diag_count(&w, "LIMIT_SUB_ISSUES"), 1);
	world_free(&w);

	world_init(&w, big_feature_report(100), NULL);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(w.diags.count, 0);
	assert_int_equal(cs_count(&w, "set_parent", NULL), 100);
	world_free(&w);
}

static void test_plan__sub_issues_added_by_hand_count_toward_the_limit(void **state)
{
	struct world w;
	json_t *is;

	(void)state;
	world_init(&w, big_feature_report(100), NULL);
	world_applied(&w, big_feature_report(100));
	assert_int_equal(number_of(w.graph, "feat:big"), 1);
	is = add_issue(w.doc, TARGET, 500, "Filed by hand", "A sub-issue a person added", NULL,
		"octocat");
	assert_int_equal(json_object_set_new(is, "parent", json_string(TARGET "#1")), 0);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_EINVALID);
	assert_string_equal(diag(&w, "LIMIT_SUB_ISSUES")->message,
		"'feat:big' would have 101 sub-issues; GitHub allows 100");
	world_free(&w);
}

/*
 * task:hub and `n` tasks task:bNN: the hub blocked by them all, or (with
 * `blockers`, a JSON list's items) each of them blocked by `blockers`.
 */
static char *hub_report(size_t n, const char *blockers)
{
	int hub_blocks = blockers != NULL;
	pmbot_buf tasks = PMBOT_BUF_INIT, list = PMBOT_BUF_INIT;
	char *text;
	size_t i;

	for (i = 0; i < n; i++) {
		assert_int_equal(pmbot_buf_printf(&list, "%s\"task:b%02zu\"", i ? ", " : "", i), 0);
		assert_int_equal(pmbot_buf_printf(&tasks, ",\n  {\"stable_id\": \"task:b%02zu\", "
			"\"title\": \"B%zu\", \"area\": \"ui\", \"priority\": \"P2\"%s%s%s}", i, i,
			hub_blocks ? ", \"blocked_by\": [" : "", hub_blocks ? blockers : "",
			hub_blocks ? "]" : ""), 0);
	}
	{
		pmbot_buf all = PMBOT_BUF_INIT;

		assert_int_equal(pmbot_buf_printf(&all, "\n  {\"stable_id\": \"task:hub\", "
			"\"title\": \"Hub\", \"area\": \"ui\", \"priority\": \"P2\"%s%s%s}%s",
			hub_blocks ? "" : ", \"blocked_by\": [", hub_blocks ? "" : list.buf,
			hub_blocks ? "" : "]", tasks.buf), 0);
		text = report_of("", all.buf);
		pmbot_buf_free(&all);
	}
	pmbot_buf_free(&tasks);
	pmbot_buf_free(&list);
	return text;
}

static void test_plan__more_than_50_blockers_is_a_limit_error(void **state)
{
	struct world w;
	const pmbot_diag *d;

	(void)state;
	world_init(&w, hub_report(51, NULL), NULL);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_EINVALID);
	d = diag(&w, "LIMIT_DEPENDENCIES");
	assert_int_equal(d->severity, PMBOT_SEV_ERROR);
	assert_string_equal(d->message, "'task:hub' would be blocked by 51 issues; GitHub allows 50");
	assert_string_equal(d->path, "/tasks/0");
	assert_int_equal(diag_count(&w, "LIMIT_DEPENDENCIES"), 1);
	world_free(&w);

	world_init(&w, hub_report(50, NULL), NULL);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(cs_count(&w, "add_dependency", "task:hub"), 50);
	world_free(&w);
}

static void test_plan__blocking_more_than_50_issues_is_a_limit_error(void **state)
{
	struct world w;
	const pmbot_diag *d;

	(void)state;
	world_init(&w, hub_report(51, "\"task:hub\""), NULL);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_EINVALID);
	d = diag(&w, "LIMIT_DEPENDENCIES");
	assert_string_equal(d->message, "'task:hub' would block 51 issues; GitHub allows 50");
	assert_string_equal(d->path, "/tasks/0");
	world_free(&w);

	world_init(&w, hub_report(50, "\"task:hub\""), NULL);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(diag_count(&w, "LIMIT_DEPENDENCIES"), 0);
	world_free(&w);

	/* An issue outside the plan is counted too, by its URL, next to one inside. */
	world_init(&w, hub_report(51, "\"task:hub\", \"https://github.com/acme/gadgets/issues/1\""),
		NULL);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_EINVALID);
	assert_int_equal(diag_count(&w, "LIMIT_DEPENDENCIES"), 2);
	d = diag(&w, "LIMIT_DEPENDENCIES");
	assert_string_equal(d->file, "https://github.com/acme/gadgets/issues/1");
	assert_string_equal(d->message,
		"'https://github.com/acme/gadgets/issues/1' would block 51 issues; GitHub allows 50");
	d++;
	assert_string_equal(d->code, "LIMIT_DEPENDENCIES");
	assert_string_equal(d->message, "'task:hub' would block 51 issues; GitHub allows 50");
	assert_string_equal(d->path, "/tasks/0");
	world_free(&w);

	world_init(&w, hub_report(50, "\"https://github.com/acme/gadgets/issues/1\""), NULL);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(diag_count(&w, "LIMIT_DEPENDENCIES"), 0);
	world_free(&w);
}

static void test_plan__title_too_long_is_the_render_error_and_no_create(void **state)
{
	struct world w;
	pmbot_buf title = PMBOT_BUF_INIT;
	const pmbot_diag *d;
	size_t i;

	(void)state;
	/*
	 * 252 characters pass validate (256 and more are its error); with the
	 * form's "[task] " 259: GitHub takes 256, so render refuses.
	 */
	assert_int_equal(pmbot_buf_putc(&title, '"'), 0);
	for (i = 0; i < 252; i++)
		assert_int_equal(pmbot_buf_putc(&title, 'x'), 0);
	assert_int_equal(pmbot_buf_putc(&title, '"'), 0);
	world_init(&w, edit(gauges(), "\"Calibrate\"", title.buf), NULL);
	pmbot_buf_free(&title);
	plan(&w);
	assert_int_equal(w.rc, PMBOT_EINVALID);
	d = diag(&w, "RENDER_TITLE_TOO_LONG");
	assert_int_equal(d->severity, PMBOT_SEV_ERROR);
	assert_string_equal(d->file, REPORT_FILE);
	assert_string_equal(d->path, "/tasks/1/title");
	assert_int_equal(cs_count(&w, "create_issue", "task:calibrate"), 0);
	/* every other item is still planned, so the error shows next to the rest */
	assert_int_equal(cs_count(&w, "create_issue", NULL), 5);
	assert_string_equal(str(json_array_get(json_object_get(w.bundle, "diagnostics"), 0), "code"),
		"RENDER_TITLE_TOO_LONG");
	world_free(&w);
}

static void test_plan__target_outside_the_allowlist_is_refused(void **state)
{
	struct world w;
	const pmbot_diag *d;

	(void)state;
	world_init(&w, gauges(), NULL);
	w.target = "acme/gadgets";
	plan(&w);
	assert_int_equal(w.rc, PMBOT_EINVALID);
	d = diag(&w, "REPO_NOT_ALLOWED");
	assert_int_equal(d->severity, PMBOT_SEV_ERROR);
	assert_non_null(strstr(d->message, "acme/gadgets"));
	assert_string_equal(str(w.bundle, "target"), "acme/gadgets");
	world_free(&w);

	/* the allowlist compares like GitHub: ignoring case */
	world_init(&w, gauges(), NULL);
	w.target = "Acme/Widgets";
	plan(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(diag_count(&w, "REPO_NOT_ALLOWED"), 0);
	world_free(&w);
}

static void test_plan__check_target_refuses_a_repository_outside_the_allowlist(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;
	const pmbot_diag *d;

	(void)state;
	assert_int_equal(pmbot_config_default(&cfg, "acme/widgets"), PMBOT_OK);
	assert_int_equal(pmbot_plan_check_target(cfg, "ACME/Widgets", &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	assert_int_equal(pmbot_plan_check_target(cfg, "acme/secret", &diags), PMBOT_EINVALID);
	assert_non_null(d = pmbot_diag_list_find(&diags, "REPO_NOT_ALLOWED"));
	assert_int_equal(d->severity, PMBOT_SEV_ERROR);
	assert_non_null(strstr(d->message, "acme/secret"));
	assert_int_equal(pmbot_plan_check_target(cfg, NULL, &diags), PMBOT_EINVALID);
	assert_int_equal(diags.errors, 2);
	pmbot_diag_list_free(&diags);
	pmbot_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan__empty_state_creates_every_item_then_relationships_in_group_order),
		cmocka_unit_test(test_plan__changesets_follow_their_keys_not_the_item_order),
		cmocka_unit_test(test_plan__a_changeset_larger_than_a_record_block_is_written_whole),
		cmocka_unit_test(test_plan__check_target_refuses_a_repository_outside_the_allowlist),
		cmocka_unit_test(test_plan__create_carries_the_rendered_title_body_and_labels),
		cmocka_unit_test(test_plan__empty_state_sets_parents_without_replace),
		cmocka_unit_test(test_plan__empty_state_adds_dependencies_for_depends_on_and_blocked_by),
		cmocka_unit_test(test_plan__plan_hash_covers_changesets_and_fingerprint),
		cmocka_unit_test(test_plan__plan_hash_changes_when_a_touched_issue_was_updated),
		cmocka_unit_test(test_plan__same_inputs_and_reordered_report_give_identical_bytes),
		cmocka_unit_test(test_plan__source_is_copied_into_the_bundle),
		cmocka_unit_test(test_plan__matching_state_gives_no_changesets),
		cmocka_unit_test(test_plan__matching_state_without_project_config_gives_no_changesets),
		cmocka_unit_test(test_plan__renamed_title_updates_only_the_title),
		cmocka_unit_test(test_plan__changed_priority_updates_body_and_swaps_prio_labels_only),
		cmocka_unit_test(test_plan__labels_to_add_and_remove_around_the_kept_ones),
		cmocka_unit_test(test_plan__labels_outside_the_scheme_are_never_removed),
		cmocka_unit_test(test_plan__moved_task_replaces_its_parent),
		cmocka_unit_test(test_plan__parent_a_person_set_is_replaced_and_fingerprinted),
		cmocka_unit_test(test_plan__removed_dependency_removes_only_the_edge_pm_bot_declared),
		cmocka_unit_test(test_plan__fingerprint_names_only_issues_a_changeset_touches),
		cmocka_unit_test(test_plan__denied_operations_are_not_proposed_and_say_so),
		cmocka_unit_test(test_plan__denied_dependency_removal_warns_that_the_edge_stays),
		cmocka_unit_test(test_plan__declared_edge_a_person_already_removed_is_not_removed_again),
		cmocka_unit_test(test_plan__removed_outside_dependency_is_bound_by_number),
		cmocka_unit_test(test_plan__new_dependency_on_an_applied_item_is_added),
		cmocka_unit_test(test_plan__human_edited_body_is_a_conflict_and_not_overwritten),
		cmocka_unit_test(test_plan__an_edit_the_report_now_matches_is_adopted),
		cmocka_unit_test(test_plan__a_body_with_the_marker_last_moves_by_an_ordinary_body_update),
		cmocka_unit_test(test_plan__a_body_with_the_marker_last_that_a_person_edited_stays_a_conflict),
		cmocka_unit_test(test_plan__conflicted_body_keeps_the_edges_it_declared),
		cmocka_unit_test(test_plan__spoofed_marker_is_untrusted_and_the_item_is_created),
		cmocka_unit_test(test_plan__marker_of_the_self_login_is_trusted),
		cmocka_unit_test(test_plan__marker_in_another_repository_is_not_the_item),
		cmocka_unit_test(test_plan__duplicate_trusted_marker_leaves_the_item_alone),
		cmocka_unit_test(test_plan__duplicate_marker_on_a_blocker_adds_no_edge_to_it),
		cmocka_unit_test(test_plan__unreadable_issue_with_a_known_marker_warns_and_is_left_alone),
		cmocka_unit_test(test_plan__unreadable_issue_with_an_unknown_marker_withholds_every_create),
		cmocka_unit_test(test_plan__unreadable_issue_in_another_repository_only_warns),
		cmocka_unit_test(test_plan__no_sub_issue_support_plans_no_set_parent_and_says_so),
		cmocka_unit_test(test_plan__an_issue_the_narrow_read_missed_is_named_with_its_author),
		cmocka_unit_test(test_plan__no_dependency_support_plans_no_dependency_change_and_says_so),
		cmocka_unit_test(test_plan__existing_issues_get_the_type_their_kind_names),
		cmocka_unit_test(test_plan__a_form_type_label_still_wants_the_type_of_the_item),
		cmocka_unit_test(test_plan__a_type_that_matches_ignoring_case_is_no_change),
		cmocka_unit_test(test_plan__a_type_a_person_changed_is_set_back_and_a_kind_without_a_type_is_left),
		cmocka_unit_test(test_plan__issue_types_off_or_unknown_plan_no_type),
		cmocka_unit_test(test_plan__denied_set_issue_type_is_not_proposed),
		cmocka_unit_test(test_plan__managed_issue_missing_from_the_report_is_orphaned_not_closed),
		cmocka_unit_test(test_plan__project_adds_items_and_sets_fields_by_type),
		cmocka_unit_test(test_plan__single_select_value_is_the_option_name),
		cmocka_unit_test(test_plan__changed_field_value_is_set_with_its_old_value),
		cmocka_unit_test(test_plan__a_held_value_is_kept_only_when_it_is_the_value_to_set),
		cmocka_unit_test(test_plan__unknown_option_is_an_error_naming_the_options),
		cmocka_unit_test(test_plan__triage_defaults_are_not_synced_to_the_project),
		cmocka_unit_test(test_plan__configured_project_missing_from_the_state_plans_no_project_change),
		cmocka_unit_test(test_plan__more_than_100_sub_issues_is_a_limit_error),
		cmocka_unit_test(test_plan__sub_issues_added_by_hand_count_toward_the_limit),
		cmocka_unit_test(test_plan__more_than_50_blockers_is_a_limit_error),
		cmocka_unit_test(test_plan__blocking_more_than_50_issues_is_a_limit_error),
		cmocka_unit_test(test_plan__title_too_long_is_the_render_error_and_no_create),
		cmocka_unit_test(test_plan__target_outside_the_allowlist_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
