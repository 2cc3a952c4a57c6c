#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers/tmpdir.h"

#include "pmbot/apply.h"
#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/plan.h"
#include "pmbot/doc.h"
#include "pmbot/text.h"
#include "pmbot/banned.h"

/*
 * pmbot_fieldsync_build against state/v1 documents. Most tests start from
 * tests/fixtures/fieldsync/board.json (project acme/1 with single-select
 * Priority P0..P3, Size XS..XL, Status Todo/In progress/Done, text Area,
 * Risk, Blocked by, Notes, number Estimate (hrs) and Actual (hrs), date
 * Due; no issues) and add issues and items as JSON; world.json is a mix of
 * managed, closed, untrusted and outside issues in two repositories.
 */

#define FIXTURES "tests/fixtures/fieldsync/"
#define WIDGETS "acme/widgets"
#define GADGETS "acme/gadgets"
#define BOT "github-actions[bot]"
#define CONFIG "repos: [acme/widgets, acme/gadgets]\nproject: {owner: acme, number: 1}\n"
#define REV "0000000000000000000000000000000000000000000000000000000000000000"

struct world {
	json_t *doc;              /* the state document */
	pmbot_config *config;
	const char *repos[4];
	size_t n_repos;
	const char *self_login;
	int no_state;             /* plan with state NULL */
	json_t *bundle;
	pmbot_diag_list diags;
	int rc;
};

/* ---- documents ------------------------------------------------------------ */

static json_t *load_json(const char *path)
{
	json_error_t e;
	json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &e);

	if (!j)
		fail_msg("%s:%d: %s", path, e.line, e.text);
	return j;
}

static pmbot_config *parse_config(const char *yaml)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = NULL;

	if (pmbot_config_parse(&cfg, ".github/pm-bot.yml", yaml, strlen(yaml), NULL, &d) != PMBOT_OK)
		fail_msg("test config rejected: %s", d.count ? d.items[0].message : "?");
	pmbot_diag_list_free(&d);
	return cfg;
}

static void world_init(struct world *w, const char *fixture, const char *config_yaml)
{
	char path[256];

	memset(w, 0, sizeof(*w));
	snprintf(path, sizeof(path), FIXTURES "%s", fixture);
	w->doc = load_json(path);
	w->config = parse_config(config_yaml ? config_yaml : CONFIG);
	w->rc = PMBOT_ERROR;
}

static void world_free(struct world *w)
{
	json_decref(w->doc);
	pmbot_config_free(w->config);
	json_decref(w->bundle);
	pmbot_diag_list_free(&w->diags);
}

/* A body of "### heading\nvalue" pairs (NULL-terminated) and the marker of `stable_id`. */
static char *body(const char *stable_id, ...)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	const char *h;
	va_list ap;

	va_start(ap, stable_id);
	while ((h = va_arg(ap, const char *)) != NULL) {
		const char *v = va_arg(ap, const char *);

		assert_int_equal(pmbot_buf_printf(&b, "### %s\n%s\n\n", h, v), 0);
	}
	va_end(ap);
	assert_int_equal(pmbot_buf_printf(&b, "<!-- pm-bot:id=%s rev=" REV " -->", stable_id), 0);
	return pmbot_buf_detach(&b, NULL);
}

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

/* Add issue repo#number with `text` (freed) as its body and `labels` (consumed); borrowed. */
static json_t *add_issue(json_t *doc, const char *repo, long number, char *text, json_t *labels,
	const char *author)
{
	size_t alen = strlen(author);
	int bot = alen > 5 && !strcmp(author + alen - 5, "[bot]");
	/* ids unique across the repositories the tests use */
	json_int_t id = (!strcmp(repo, WIDGETS) ? 1000000 : !strcmp(repo, GADGETS) ? 2000000
		: 3000000) + number;
	char node[32], when[32];
	json_t *is;

	snprintf(node, sizeof(node), "I_%" JSON_INTEGER_FORMAT, id);
	snprintf(when, sizeof(when), "2026-11-02T10:%02ld:00Z", number % 60);
	is = json_pack("{s:I, s:I, s:s, s:s, s:s, s:o, s:s, s:s, s:s, s:s, s:n, s:[]}",
		"number", (json_int_t)number, "database_id", id, "node_id", node, "title", "An item",
		"body", text, "labels", labels ? labels : json_array(), "state", "open",
		"author", author, "author_type", bot ? "Bot" : "User", "updated_at", when,
		"parent", "blocked_by");
	free(text);
	assert_non_null(is);
	assert_int_equal(json_array_append_new(repo_issues(doc, repo), is), 0);
	return is;
}

/* Put issue `ref` on the board with `values` (consumed). */
static void add_item(json_t *doc, const char *ref, json_t *values)
{
	json_t *items = json_object_get(json_object_get(doc, "project"), "items");
	char id[64];

	snprintf(id, sizeof(id), "PVTI_%zu", json_array_size(items) + 1);
	assert_int_equal(json_array_append_new(items, json_pack("{s:s, s:s, s:o}", "id", id,
		"issue", ref, "values", values ? values : json_object())), 0);
}

/* The project field `name` of the document (borrowed). */
static json_t *doc_field(json_t *doc, const char *name)
{
	json_t *fields = json_object_get(json_object_get(doc, "project"), "fields"), *f;
	size_t i;

	json_array_foreach(fields, i, f)
		if (!strcmp(json_string_value(json_object_get(f, "name")), name))
			return f;
	fail_msg("no field %s in the test board", name);
	return NULL;
}

static void remove_field(json_t *doc, const char *name)
{
	json_t *fields = json_object_get(json_object_get(doc, "project"), "fields"), *f;
	size_t i;

	json_array_foreach(fields, i, f)
		if (!strcmp(json_string_value(json_object_get(f, "name")), name)) {
			assert_int_equal(json_array_remove(fields, i), 0);
			return;
		}
	fail_msg("no field %s in the test board", name);
}

static pmbot_state *parse_state(const json_t *doc)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st = NULL;
	char *text = json_dumps(doc, JSON_COMPACT);

	assert_non_null(text);
	if (pmbot_state_parse(&st, "state.json", text, strlen(text), &d) != PMBOT_OK)
		fail_msg("test state rejected: %s %s: %s", d.items[0].code, d.items[0].path,
			d.items[0].message);
	free(text);
	pmbot_diag_list_free(&d);
	return st;
}

/* Plan the field sync of `st` into w->bundle / w->diags / w->rc. */
static void sync_state(struct world *w, const pmbot_state *st)
{
	pmbot_fieldsync_input in;

	json_decref(w->bundle);
	w->bundle = NULL;
	pmbot_diag_list_free(&w->diags);
	memset(&in, 0, sizeof(in));
	in.config = w->config;
	in.state = w->no_state ? NULL : st;
	in.repos = w->n_repos ? w->repos : NULL;
	in.n_repos = w->n_repos;
	in.self_login = w->self_login;
	w->rc = pmbot_fieldsync_build(&w->bundle, &in, &w->diags);
	assert_int_not_equal(w->rc, PMBOT_ERROR);
	assert_non_null(w->bundle);
}

static void sync_world(struct world *w)
{
	pmbot_state *st = parse_state(w->doc);

	sync_state(w, st);
	pmbot_state_free(st);
}

/* ---- assertions -------------------------------------------------------------- */

static char *canonical(const json_t *v)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_json_canonical(&b, v), 0);
	return pmbot_buf_detach(&b, NULL);
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

static json_t *changesets(const struct world *w)
{
	return json_object_get(w->bundle, "changesets");
}

static size_t n_changesets(const struct world *w)
{
	return json_array_size(changesets(w));
}

/* The changeset of `op` on stable_id `id` (and `field` for set_project_field), or NULL. */
static json_t *find_cs(const struct world *w, const char *op, const char *id, const char *field)
{
	json_t *cs;
	size_t i;

	json_array_foreach(changesets(w), i, cs) {
		const json_t *p = json_object_get(cs, "payload");

		if (strcmp(json_string_value(json_object_get(cs, "operation")), op) ||
		    strcmp(json_string_value(json_object_get(json_object_get(cs, "target"),
			    "stable_id")), id))
			continue;
		if (field && strcmp(json_string_value(json_object_get(p, "field")), field))
			continue;
		return cs;
	}
	return NULL;
}

static const json_t *field_value(const struct world *w, const char *id, const char *field)
{
	json_t *cs = find_cs(w, "set_project_field", id, field);

	if (!cs)
		fail_msg("no set_project_field %s of %s", field, id);
	return json_object_get(json_object_get(cs, "payload"), "value");
}

static size_t count_code(const pmbot_diag_list *d, const char *code)
{
	size_t i, n = 0;

	for (i = 0; i < d->count; i++)
		n += !strcmp(d->items[i].code, code);
	return n;
}

/* ---- derivation ---------------------------------------------------------------- */

static void test_fieldsync__label_beats_heading(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Priority", "P2", "Size", "L", "Status", "Done",
		"Area", "docs", NULL), json_pack("[s, s, s, s]", "area:ui", "prio:P1", "size:M",
		"status:In progress"), BOT);
	add_item(w.doc, WIDGETS "#1", NULL);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_json(field_value(&w, "task:a", "Priority"), "\"P1\"");
	assert_json(field_value(&w, "task:a", "Size"), "\"M\"");
	assert_json(field_value(&w, "task:a", "Status"), "\"In progress\"");
	assert_json(field_value(&w, "task:a", "Area"), "\"ui\"");
	assert_int_equal(n_changesets(&w), 4);
	world_free(&w);
}

static void test_fieldsync__heading_used_when_no_label(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Goal", "Not a field", "Area", "ui",
		"Priority", "P2", "Size", "XS", "Estimate (hrs)", "4", "Risk", "The dial may stick",
		"Blocked by", "task:b, https://github.com/acme/gadgets/issues/1", "Actual (hrs)", "6",
		"Status", "Todo", NULL), json_pack("[s]", "type:task"), BOT);
	add_item(w.doc, WIDGETS "#1", NULL);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_json(field_value(&w, "task:a", "Area"), "\"ui\"");
	assert_json(field_value(&w, "task:a", "Priority"), "\"P2\"");
	assert_json(field_value(&w, "task:a", "Size"), "\"XS\"");
	assert_json(field_value(&w, "task:a", "Estimate (hrs)"), "4.0");
	assert_json(field_value(&w, "task:a", "Risk"), "\"The dial may stick\"");
	assert_json(field_value(&w, "task:a", "Blocked by"),
		"\"task:b, https://github.com/acme/gadgets/issues/1\"");
	assert_json(field_value(&w, "task:a", "Actual (hrs)"), "6.0");
	assert_json(field_value(&w, "task:a", "Status"), "\"Todo\"");
	/* Notes and Due are never synced; "Goal" is not a board field */
	assert_int_equal(n_changesets(&w), 8);
	world_free(&w);
}

static void test_fieldsync__form_heading_aliases_are_read(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Estimate (hours)", "3", "Depends on", "task:b",
		"Size (Epic)", "XL", "Actual", "1.5", "Estimate (days)", "9", NULL), NULL, BOT);
	add_item(w.doc, WIDGETS "#1", NULL);
	sync_world(&w);
	assert_json(field_value(&w, "task:a", "Estimate (hrs)"), "3.0");
	assert_json(field_value(&w, "task:a", "Blocked by"), "\"task:b\"");
	assert_json(field_value(&w, "task:a", "Size"), "\"XL\"");
	assert_json(field_value(&w, "task:a", "Actual (hrs)"), "1.5");
	assert_int_equal(n_changesets(&w), 4);
	world_free(&w);
}

static void test_fieldsync__single_select_takes_the_option_spelling(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Status", "in PROGRESS", NULL),
		json_pack("[s, s]", "prio:p0", "Size:xl"), BOT);
	add_item(w.doc, WIDGETS "#1", NULL);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_json(field_value(&w, "task:a", "Priority"), "\"P0\"");
	assert_json(field_value(&w, "task:a", "Size"), "\"XL\"");
	assert_json(field_value(&w, "task:a", "Status"), "\"In progress\"");
	world_free(&w);
}

static void test_fieldsync__hours_parse_as_body_parse_hours(void **state)
{
	static const char *const good[][2] = {
		{ "4", "4.0" }, { "4.5", "4.5" }, { "~4", "4.0" }, { "4 hrs", "4.0" },
		{ "4h", "4.0" }, { " 2.25 hours ", "2.25" }, { "1e1", "10.0" },
	};
	static const char *const bad[] = { "four", "4 days", "4-6", "" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct world w;
		double d = 0;

		world_init(&w, "board.json", NULL);
		assert_int_equal(pmbot_body_parse_hours(&d, good[i][0]), 0);
		add_issue(w.doc, WIDGETS, 1, body("task:a", "Estimate (hrs)", good[i][0], NULL), NULL,
			BOT);
		add_item(w.doc, WIDGETS "#1", NULL);
		sync_world(&w);
		assert_int_equal(w.rc, PMBOT_OK);
		assert_json(field_value(&w, "task:a", "Estimate (hrs)"), good[i][1]);
		assert_true(json_real_value(field_value(&w, "task:a", "Estimate (hrs)")) == d);
		world_free(&w);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct world w;
		const pmbot_diag *dg;

		world_init(&w, "board.json", NULL);
		add_issue(w.doc, WIDGETS, 1, body("task:a", "Priority", "P1", "Actual (hrs)", bad[i],
			NULL), NULL, BOT);
		add_item(w.doc, WIDGETS "#1", NULL);
		sync_world(&w);
		/* a bad number is a warning; the other fields are still synced */
		assert_int_equal(w.rc, PMBOT_OK);
		assert_null(find_cs(&w, "set_project_field", "task:a", "Actual (hrs)"));
		assert_non_null(find_cs(&w, "set_project_field", "task:a", "Priority"));
		dg = pmbot_diag_list_find(&w.diags, "FIELDSYNC_BAD_NUMBER");
		if (!*bad[i]) {
			assert_null(dg); /* empty is no value, not a bad one */
		} else {
			assert_non_null(dg);
			assert_int_equal(dg->severity, PMBOT_SEV_WARNING);
			assert_string_equal(dg->file, WIDGETS "#1");
			assert_int_equal(dg->line, 4);
			assert_non_null(strstr(dg->message, bad[i]));
		}
		world_free(&w);
	}
}

/*
 * pm-bot renders report text with a U+200C after '@', '#' and in "://" so
 * that it never mentions or links; a Project text field gets the text
 * without them, and a board already holding it plans nothing.
 */
static void test_fieldsync__values_reach_the_board_without_invisible_characters(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a",
		"Risk", "ask @" PMBOT_TEXT_ZWNJ "octocat about acme/widgets#" PMBOT_TEXT_ZWNJ "1",
		"Blocked by", "https:" PMBOT_TEXT_ZWNJ "//github.com/acme/gadgets/issues/1", NULL),
		json_pack("[s]", "type:task"), BOT);
	add_item(w.doc, WIDGETS "#1", NULL);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_json(field_value(&w, "task:a", "Risk"), "\"ask @octocat about acme/widgets#1\"");
	assert_json(field_value(&w, "task:a", "Blocked by"),
		"\"https://github.com/acme/gadgets/issues/1\"");
	world_free(&w);

	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a",
		"Risk", "ask @" PMBOT_TEXT_ZWNJ "octocat", NULL), json_pack("[s]", "type:task"), BOT);
	add_item(w.doc, WIDGETS "#1", json_pack("{s:s}", "Risk", "ask @octocat"));
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(n_changesets(&w), 0);
	world_free(&w);
}

static void test_fieldsync__equal_values_plan_nothing(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Area", "ui", "Priority", "P3",
		"Estimate (hrs)", "4 hrs", "Risk", "Low", NULL),
		json_pack("[s, s]", "prio:p1", "status:done"), BOT);
	/* numbers by value (4 == 4.0), options by their board spelling */
	add_item(w.doc, WIDGETS "#1", json_pack("{s:s, s:s, s:s, s:i, s:s}", "Area", "ui",
		"Priority", "P1", "Status", "Done", "Estimate (hrs)", 4, "Risk", "Low"));
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(n_changesets(&w), 0);
	assert_int_equal(json_array_size(json_object_get(w.bundle, "fingerprint")), 0);
	assert_json(json_object_get(w.bundle, "summary"), "{\"creates\":0,\"updates\":0,"
		"\"relationships\":0,\"project\":0,\"conflicts\":0,\"orphaned\":0,\"diagnostics\":0,"
		"\"total\":0}");
	world_free(&w);
}

static void test_fieldsync__only_differences_are_planned_with_before(void **state)
{
	struct world w;
	json_t *cs;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Area", "ui", "Estimate (hrs)", "5",
		"Risk", "New risk", NULL), json_pack("[s]", "prio:P1"), BOT);
	add_item(w.doc, WIDGETS "#1", json_pack("{s:s, s:s, s:f, s:s}", "Area", "ui",
		"Priority", "P2", "Estimate (hrs)", 5.0, "Notes", "people's notes"));
	sync_world(&w);
	assert_int_equal(n_changesets(&w), 2);
	cs = find_cs(&w, "set_project_field", "task:a", "Priority");
	assert_non_null(cs);
	assert_json(json_object_get(cs, "payload"), "{\"field\":\"Priority\",\"value\":\"P1\"}");
	assert_json(json_object_get(cs, "before"), "{\"value\":\"P2\"}");
	cs = find_cs(&w, "set_project_field", "task:a", "Risk");
	assert_non_null(cs);
	assert_json(json_object_get(cs, "before"), "{\"value\":null}");
	assert_null(find_cs(&w, "add_to_project", "task:a", NULL));
	world_free(&w);
}

static void test_fieldsync__empty_value_never_clears(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Area", "_No response_", "Risk", "",
		"Estimate (hrs)", "_No response_", "Status", "   ", NULL),
		json_pack("[s]", "prio:"), BOT);
	add_item(w.doc, WIDGETS "#1", json_pack("{s:s, s:s, s:s, s:i, s:s}", "Area", "ui",
		"Risk", "High", "Priority", "P1", "Estimate (hrs)", 8, "Status", "Todo"));
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(n_changesets(&w), 0);
	world_free(&w);
}

static void test_fieldsync__unknown_option_is_an_error_naming_the_options(void **state)
{
	struct world w;
	const pmbot_diag *d;
	json_t *diag;
	size_t i;
	int found = 0;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Area", "ui", "Size", "XXL", NULL),
		json_pack("[s]", "prio:P9"), BOT);
	add_item(w.doc, WIDGETS "#1", NULL);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_EINVALID);
	assert_int_equal(count_code(&w.diags, "PROJECT_UNKNOWN_OPTION"), 2);
	for (i = 0; i < w.diags.count; i++) {
		d = &w.diags.items[i];
		if (strcmp(d->code, "PROJECT_UNKNOWN_OPTION"))
			continue;
		assert_int_equal(d->severity, PMBOT_SEV_ERROR);
		assert_string_equal(d->file, WIDGETS "#1");
		if (strstr(d->message, "'P9'")) {
			assert_non_null(strstr(d->message, "'P0', 'P1', 'P2', 'P3'"));
			assert_non_null(strstr(d->message, "label 'prio:P9'"));
			assert_int_equal(d->line, 0);
			found |= 1;
		} else {
			assert_non_null(strstr(d->message, "'XXL'"));
			assert_non_null(strstr(d->message, "'XS', 'S', 'M', 'L', 'XL'"));
			assert_non_null(strstr(d->message, "'### Size' heading"));
			assert_int_equal(d->line, 4);
			found |= 2;
		}
	}
	assert_int_equal(found, 3);
	/* no changeset for those fields; the others still come */
	assert_null(find_cs(&w, "set_project_field", "task:a", "Priority"));
	assert_null(find_cs(&w, "set_project_field", "task:a", "Size"));
	assert_json(field_value(&w, "task:a", "Area"), "\"ui\"");
	/* the bundle carries the diagnostics too */
	json_array_foreach(json_object_get(w.bundle, "diagnostics"), i, diag)
		found += !strcmp(json_string_value(json_object_get(diag, "code")),
			"PROJECT_UNKNOWN_OPTION");
	assert_int_equal(found, 5);
	world_free(&w);
}

static void test_fieldsync__label_conflict_leaves_the_field_alone(void **state)
{
	struct world w;
	const pmbot_diag *d;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Priority", "P3", NULL),
		json_pack("[s, s, s, s]", "prio:P1", "prio:P2", "size:M", "size:m"), BOT);
	add_item(w.doc, WIDGETS "#1", NULL);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	d = pmbot_diag_list_find(&w.diags, "FIELDSYNC_LABEL_CONFLICT");
	assert_non_null(d);
	assert_int_equal(count_code(&w.diags, "FIELDSYNC_LABEL_CONFLICT"), 1);
	assert_string_equal(d->file, WIDGETS "#1");
	assert_non_null(strstr(d->message, "'prio:P1' and 'prio:P2'"));
	/* neither label nor heading: nobody can tell which one is meant */
	assert_null(find_cs(&w, "set_project_field", "task:a", "Priority"));
	/* labels differing only in case are one value */
	assert_json(field_value(&w, "task:a", "Size"), "\"M\"");
	world_free(&w);
}

static void test_fieldsync__triage_defaults_are_not_synced(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, "board.json", NULL);
	assert_int_equal(json_array_append_new(json_object_get(doc_field(w.doc, "Priority"),
		"options"), json_pack("{s:s, s:s}", "id", "O_triage", "name", "Triage")), 0);
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Area", "triage", "Priority", "Triage", NULL),
		json_pack("[s, s, s]", "area:triage", "needs-human", "prio:Triage"), BOT);
	add_issue(w.doc, WIDGETS, 2, body("task:b", "Area", "triage", "Priority", "Triage", NULL),
		json_pack("[s, s]", "area:triage", "prio:Triage"), BOT);
	add_item(w.doc, WIDGETS "#1", NULL);
	add_item(w.doc, WIDGETS "#2", NULL);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_null(find_cs(&w, "set_project_field", "task:a", NULL));
	/* without needs-human they are ordinary values */
	assert_json(field_value(&w, "task:b", "Area"), "\"triage\"");
	assert_json(field_value(&w, "task:b", "Priority"), "\"Triage\"");
	world_free(&w);
}

static void test_fieldsync__wrong_field_type_warns_once_per_field(void **state)
{
	struct world w;
	const pmbot_diag *d;

	(void)state;
	world_init(&w, "board.json", NULL);
	json_object_set_new(doc_field(w.doc, "Estimate (hrs)"), "type", json_string("text"));
	json_object_set_new(doc_field(w.doc, "Area"), "type", json_string("date"));
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Estimate (hrs)", "4", "Area", "ui",
		"Risk", "r", NULL), NULL, BOT);
	add_issue(w.doc, WIDGETS, 2, body("task:b", "Estimate (hrs)", "5", "Area", "ui", NULL),
		NULL, BOT);
	add_item(w.doc, WIDGETS "#1", NULL);
	add_item(w.doc, WIDGETS "#2", NULL);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(count_code(&w.diags, "FIELDSYNC_FIELD_TYPE"), 2);
	d = pmbot_diag_list_find(&w.diags, "FIELDSYNC_FIELD_TYPE");
	assert_int_equal(d->severity, PMBOT_SEV_WARNING);
	assert_null(find_cs(&w, "set_project_field", "task:a", "Estimate (hrs)"));
	assert_null(find_cs(&w, "set_project_field", "task:a", "Area"));
	assert_null(find_cs(&w, "set_project_field", "task:b", NULL));
	assert_non_null(find_cs(&w, "set_project_field", "task:a", "Risk"));
	assert_int_equal(n_changesets(&w), 1);
	world_free(&w);
}

static void test_fieldsync__fields_missing_from_the_board_are_skipped(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, "board.json", NULL);
	remove_field(w.doc, "Risk");
	remove_field(w.doc, "Status");
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Risk", "r", "Priority", "P1", NULL),
		json_pack("[s]", "status:Done"), BOT);
	add_item(w.doc, WIDGETS "#1", NULL);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(w.diags.count, 0);
	assert_int_equal(n_changesets(&w), 1);
	assert_non_null(find_cs(&w, "set_project_field", "task:a", "Priority"));
	world_free(&w);
}

/* ---- which issues -------------------------------------------------------------- */

static void test_fieldsync__issues_not_on_the_board_are_added_first(void **state)
{
	struct world w;
	json_t *cs;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 7, body("task:a", "Priority", "P1", "Size", "S", NULL), NULL, BOT);
	add_issue(w.doc, WIDGETS, 8, body("task:b", "Priority", "_No response_", NULL), NULL, BOT);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	/* an item with nothing to set is still added: it is managed */
	assert_int_equal(n_changesets(&w), 4);
	cs = json_array_get(changesets(&w), 0);
	assert_json(cs, "{\"changeset_id\":\"cs-0001\",\"idempotency_key\":"
		"\"add_to_project:acme/widgets:task:a\",\"operation\":\"add_to_project\","
		"\"target\":{\"repo\":\"acme/widgets\",\"stable_id\":\"task:a\"},"
		"\"payload\":{\"project\":\"acme/1\"},\"requires_approval\":true,"
		"\"status\":\"proposed\"}");
	assert_string_equal(json_string_value(json_object_get(json_array_get(changesets(&w), 1),
		"operation")), "add_to_project");
	cs = find_cs(&w, "set_project_field", "task:a", "Size");
	assert_json(json_object_get(cs, "before"), "{\"value\":null}");
	world_free(&w);
}

/* The first sync on a board must not apply values that cannot land before their issue is on it. */
static void test_fieldsync__auto_approved_fields_wait_for_an_unapproved_add(void **state)
{
	static const char *const configs[] = {
		CONFIG "auto_approve: [set_project_field]\n",
		CONFIG "auto_approve: [set_project_field, add_to_project]\n",
		CONFIG,
	};
	struct world w;
	json_t *ids, *cs;
	size_t c, i;

	(void)state;
	for (c = 0; c < 3; c++) {
		world_init(&w, "board.json", configs[c]);
		add_issue(w.doc, WIDGETS, 1, body("task:on", "Priority", "P1", NULL), NULL, BOT);
		add_item(w.doc, WIDGETS "#1", json_pack("{s:s}", "Priority", "P2"));
		add_issue(w.doc, WIDGETS, 2, body("task:off", "Priority", "P3", "Size", "S", NULL),
			NULL, BOT);
		sync_world(&w);
		assert_int_equal(w.rc, PMBOT_OK);
		assert_int_equal(n_changesets(&w), 4);
		assert_int_equal(pmbot_fieldsync_auto_approved(&ids, w.bundle, w.config), PMBOT_OK);
		if (c == 0) {
			/* only the issue already on the board: task:off waits for its approval */
			assert_int_equal(json_array_size(ids), 1);
			cs = find_cs(&w, "set_project_field", "task:on", "Priority");
			assert_string_equal(json_string_value(json_array_get(ids, 0)),
				json_string_value(json_object_get(cs, "changeset_id")));
		} else if (c == 1) {
			/* the add is pre-approved too: everything comes, in bundle order */
			assert_int_equal(json_array_size(ids), 4);
			for (i = 0; i < 4; i++)
				assert_string_equal(json_string_value(json_array_get(ids, i)),
					json_string_value(json_object_get(json_array_get(
						changesets(&w), i), "changeset_id")));
		} else {
			assert_int_equal(json_array_size(ids), 0);
		}
		json_decref(ids);
		world_free(&w);
	}
}

static void test_fieldsync__closed_issues_are_synced(void **state)
{
	struct world w;
	json_t *is;

	(void)state;
	world_init(&w, "board.json", NULL);
	is = add_issue(w.doc, WIDGETS, 1, body("task:a", "Status", "Done", NULL), NULL, BOT);
	json_object_set_new(is, "state", json_string("closed"));
	add_item(w.doc, WIDGETS "#1", json_pack("{s:s}", "Status", "In progress"));
	sync_world(&w);
	assert_json(field_value(&w, "task:a", "Status"), "\"Done\"");
	world_free(&w);
}

static void test_fieldsync__untrusted_author_is_ignored(void **state)
{
	struct world w;
	const pmbot_diag *d;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Priority", "P1", NULL), NULL, "mallory");
	add_issue(w.doc, WIDGETS, 2, body("task:b", "Priority", "P2", NULL), NULL,
		"github-actions");
	add_issue(w.doc, WIDGETS, 3, body("task:c", "Priority", "P3", NULL), NULL, "pmbot-app");
	add_item(w.doc, WIDGETS "#1", NULL);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(n_changesets(&w), 0);
	assert_int_equal(count_code(&w.diags, "MARKER_UNTRUSTED"), 3);
	d = pmbot_diag_list_find(&w.diags, "MARKER_UNTRUSTED");
	assert_string_equal(d->file, WIDGETS "#1");
	assert_int_equal(d->severity, PMBOT_SEV_WARNING);
	/* the token's own login is trusted too */
	w.self_login = "PMBOT-app";
	sync_world(&w);
	assert_int_equal(count_code(&w.diags, "MARKER_UNTRUSTED"), 2);
	assert_json(field_value(&w, "task:c", "Priority"), "\"P3\"");
	assert_null(find_cs(&w, "set_project_field", "task:a", NULL));
	assert_null(find_cs(&w, "add_to_project", "task:b", NULL));
	world_free(&w);
}

static void test_fieldsync__duplicate_marker_is_left_alone(void **state)
{
	struct world w;
	const pmbot_diag *d;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Priority", "P1", NULL), NULL, BOT);
	add_issue(w.doc, WIDGETS, 2, body("task:a", "Priority", "P2", NULL), NULL, BOT);
	/* the same stable_id in another repository is another item */
	add_issue(w.doc, GADGETS, 1, body("task:a", "Priority", "P3", NULL), NULL, BOT);
	add_item(w.doc, GADGETS "#1", NULL);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	d = pmbot_diag_list_find(&w.diags, "DUPLICATE_MARKER");
	assert_non_null(d);
	assert_non_null(strstr(d->message, WIDGETS "#1 and " WIDGETS "#2"));
	assert_int_equal(n_changesets(&w), 1);
	assert_json(json_object_get(json_array_get(changesets(&w), 0), "target"),
		"{\"repo\":\"acme/gadgets\",\"stable_id\":\"task:a\"}");
	world_free(&w);
}

static void test_fieldsync__repos_default_to_the_allowlist_and_must_be_allowed(void **state)
{
	struct world w;
	const pmbot_diag *d;

	(void)state;
	world_init(&w, "board.json", NULL);
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Priority", "P1", NULL), NULL, BOT);
	add_issue(w.doc, GADGETS, 1, body("task:b", "Priority", "P2", NULL), NULL, BOT);
	add_issue(w.doc, "acme/other", 1, body("task:c", "Priority", "P3", NULL), NULL, BOT);
	add_item(w.doc, WIDGETS "#1", NULL);
	add_item(w.doc, GADGETS "#1", NULL);
	add_item(w.doc, "acme/other#1", NULL);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(n_changesets(&w), 2);
	assert_string_equal(json_string_value(json_object_get(w.bundle, "target")), WIDGETS);
	/* named repositories, spelled as given; an unlisted one is refused */
	w.repos[0] = "Acme/Gadgets";
	w.repos[1] = "acme/other";
	w.repos[2] = "ACME/gadgets";
	w.n_repos = 3;
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_EINVALID);
	d = pmbot_diag_list_find(&w.diags, "REPO_NOT_ALLOWED");
	assert_non_null(d);
	assert_non_null(strstr(d->message, "acme/other"));
	assert_int_equal(count_code(&w.diags, "REPO_NOT_ALLOWED"), 1);
	assert_int_equal(n_changesets(&w), 1);
	assert_json(json_object_get(json_array_get(changesets(&w), 0), "target"),
		"{\"repo\":\"Acme/Gadgets\",\"stable_id\":\"task:b\"}");
	assert_string_equal(json_string_value(json_object_get(w.bundle, "target")), "Acme/Gadgets");
	world_free(&w);
}

/* ---- project ------------------------------------------------------------------------ */

static void test_fieldsync__no_project_is_an_error(void **state)
{
	static const char *const configs[] = {
		"repos: [acme/widgets]\n",                                  /* none configured */
		"repos: [acme/widgets]\nproject: {owner: acme, number: 2}\n", /* another board */
		CONFIG,                                                     /* state has none */
		CONFIG,                                                     /* no state at all */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		struct world w;
		const pmbot_diag *d;

		world_init(&w, "board.json", configs[i]);
		add_issue(w.doc, WIDGETS, 1, body("task:a", "Priority", "P1", NULL), NULL, BOT);
		if (i == 2)
			json_object_set_new(w.doc, "project", json_null());
		w.no_state = i == 3;
		sync_world(&w);
		assert_int_equal(w.rc, PMBOT_EINVALID);
		d = pmbot_diag_list_find(&w.diags, "NO_PROJECT");
		assert_non_null(d);
		assert_int_equal(d->severity, PMBOT_SEV_ERROR);
		assert_int_equal(n_changesets(&w), 0);
		assert_int_equal(w.diags.count, 1);
		assert_string_equal(json_string_value(json_object_get(json_array_get(
			json_object_get(w.bundle, "diagnostics"), 0), "code")), "NO_PROJECT");
		world_free(&w);
	}
}

static void test_fieldsync__config_operations_apply(void **state)
{
	struct world w;
	json_t *cs;
	size_t i;

	(void)state;
	/* auto_approve marks changesets; a denied add_to_project takes its fields along */
	world_init(&w, "board.json", CONFIG "auto_approve: [set_project_field]\n"
		"deny_operations: [add_to_project]\n");
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Priority", "P1", NULL), NULL, BOT);
	add_issue(w.doc, WIDGETS, 2, body("task:b", "Priority", "P2", NULL), NULL, BOT);
	add_issue(w.doc, WIDGETS, 3, body("task:c", "Priority", "P3", NULL), NULL, BOT);
	add_item(w.doc, WIDGETS "#3", NULL);
	sync_world(&w);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(n_changesets(&w), 1);
	cs = find_cs(&w, "set_project_field", "task:c", "Priority");
	assert_non_null(cs);
	assert_false(json_is_true(json_object_get(cs, "requires_approval")));
	assert_non_null(pmbot_diag_list_find(&w.diags, "OPERATION_DENIED"));
	assert_non_null(strstr(pmbot_diag_list_find(&w.diags, "OPERATION_DENIED")->message,
		"2 add_to_project changes are not proposed"));
	world_free(&w);

	world_init(&w, "board.json", CONFIG "deny_operations: [set_project_field]\n");
	add_issue(w.doc, WIDGETS, 1, body("task:a", "Priority", "P1", "Size", "S", NULL), NULL, BOT);
	sync_world(&w);
	assert_int_equal(n_changesets(&w), 1);
	json_array_foreach(changesets(&w), i, cs)
		assert_true(json_is_true(json_object_get(cs, "requires_approval")));
	assert_non_null(strstr(pmbot_diag_list_find(&w.diags, "OPERATION_DENIED")->message,
		"2 set_project_field changes"));
	world_free(&w);
}

/* ---- the bundle -------------------------------------------------------------------- */

static void test_fieldsync__bundle_follows_the_plan_conventions(void **state)
{
	struct world w;
	json_t *cs, *source = json_pack("{s:s}", "commit", "abc123");
	pmbot_state *st;
	pmbot_fieldsync_input in;
	char hash[PMBOT_SHA256_HEX_SIZE], id[32], bid[32];
	size_t i;

	(void)state;
	world_init(&w, "world.json", NULL);
	st = parse_state(w.doc);
	memset(&in, 0, sizeof(in));
	in.config = w.config;
	in.state = st;
	in.source = source;
	assert_int_equal(pmbot_fieldsync_build(&w.bundle, &in, &w.diags), PMBOT_OK);
	assert_string_equal(json_string_value(json_object_get(w.bundle, "schema_version")),
		"changeset_bundle/v1");
	assert_json(json_object_get(w.bundle, "source"), "{\"commit\":\"abc123\"}");
	assert_int_equal(pmbot_plan_hash(hash, changesets(&w), json_object_get(w.bundle,
		"fingerprint")), 0);
	assert_string_equal(json_string_value(json_object_get(w.bundle, "plan_hash")), hash);
	snprintf(bid, sizeof(bid), "bundle-%.16s", hash);
	assert_string_equal(json_string_value(json_object_get(w.bundle, "bundle_id")), bid);
	assert_json(json_object_get(w.bundle, "conflicts"), "[]");
	assert_json(json_object_get(w.bundle, "orphaned"), "[]");
	/* widgets#1: 6 fields; widgets#2 (closed): add + 5; gadgets#1: add + 3 */
	assert_int_equal(n_changesets(&w), 16);
	assert_int_equal(pmbot_plan_count(w.bundle), 16);
	json_array_foreach(changesets(&w), i, cs) {
		const char *op = json_string_value(json_object_get(cs, "operation"));
		const char *key = json_string_value(json_object_get(cs, "idempotency_key"));
		char *payload_hash = NULL;

		snprintf(id, sizeof(id), "cs-%04zu", i + 1);
		assert_string_equal(json_string_value(json_object_get(cs, "changeset_id")), id);
		/* add_to_project first, then the fields */
		assert_string_equal(op, i < 2 ? "add_to_project" : "set_project_field");
		if (i >= 2) {
			char h[PMBOT_SHA256_HEX_SIZE];

			assert_int_equal(pmbot_sha256_json(h, json_object_get(cs, "payload")), 0);
			payload_hash = strrchr(key, ':') + 1;
			assert_int_equal(strncmp(payload_hash, h, 12), 0);
			assert_int_equal(strlen(payload_hash), 12);
		}
		if (i > 2)
			assert_true(strcmp(json_string_value(json_object_get(json_array_get(
				changesets(&w), i - 1), "idempotency_key")), key) < 0);
	}
	assert_json(json_object_get(w.bundle, "fingerprint"),
		"[{\"ref\":\"acme/gadgets#1\",\"node_id\":\"I_2000001\","
		"\"updated_at\":\"2026-11-02T10:00:01Z\"},"
		"{\"ref\":\"acme/widgets#1\",\"node_id\":\"I_1000001\","
		"\"updated_at\":\"2026-11-02T10:00:01Z\"},"
		"{\"ref\":\"acme/widgets#2\",\"node_id\":\"I_1000002\","
		"\"updated_at\":\"2026-11-02T10:00:02Z\"}]");
	assert_json(json_object_get(w.bundle, "summary"), "{\"creates\":0,\"updates\":0,"
		"\"relationships\":0,\"project\":16,\"conflicts\":0,\"orphaned\":0,\"diagnostics\":1,"
		"\"total\":16}");
	assert_non_null(pmbot_diag_list_find(&w.diags, "MARKER_UNTRUSTED"));
	/* the closed issue: label over heading, both hours forms */
	assert_json(field_value(&w, "task:calibrate", "Priority"), "\"P2\"");
	assert_json(field_value(&w, "task:calibrate", "Estimate (hrs)"), "2.5");
	assert_json(field_value(&w, "task:calibrate", "Actual (hrs)"), "3.0");
	assert_json(field_value(&w, "task:calibrate", "Status"), "\"Done\"");
	assert_json(field_value(&w, "feat:knob", "Priority"), "\"P0\"");
	assert_null(find_cs(&w, "set_project_field", "task:paint", NULL));
	pmbot_state_free(st);
	json_decref(source);
	world_free(&w);
}

static void reverse_array(json_t *a)
{
	size_t n = json_array_size(a), i;

	for (i = 0; i < n / 2; i++) {
		json_t *x = json_incref(json_array_get(a, i));

		assert_int_equal(json_array_set(a, i, json_array_get(a, n - 1 - i)), 0);
		assert_int_equal(json_array_set_new(a, n - 1 - i, x), 0);
	}
}

static void test_fieldsync__same_input_same_bytes_whatever_the_state_order(void **state)
{
	struct world w;
	json_t *r, *is, *project;
	char *first, *again, *reordered;
	size_t i, k;

	(void)state;
	world_init(&w, "world.json", NULL);
	sync_world(&w);
	first = canonical(w.bundle);
	sync_world(&w);
	again = canonical(w.bundle);
	assert_string_equal(first, again);
	/* every list of the state document reversed */
	reverse_array(json_object_get(w.doc, "repositories"));
	json_array_foreach(json_object_get(w.doc, "repositories"), i, r) {
		reverse_array(json_object_get(r, "issues"));
		json_array_foreach(json_object_get(r, "issues"), k, is)
			reverse_array(json_object_get(is, "labels"));
	}
	project = json_object_get(w.doc, "project");
	reverse_array(json_object_get(project, "items"));
	reverse_array(json_object_get(project, "fields"));
	sync_world(&w);
	reordered = canonical(w.bundle);
	assert_string_equal(first, reordered);
	free(first);
	free(again);
	free(reordered);
	world_free(&w);
}

static void test_fieldsync__unusable_arguments_are_errors(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = parse_config("project: {owner: acme, number: 1}\n");
	pmbot_fieldsync_input in;
	json_t *sentinel = json_object(), *out = sentinel;

	(void)state;
	memset(&in, 0, sizeof(in));
	assert_int_equal(pmbot_fieldsync_build(&out, &in, &d), PMBOT_ERROR);
	assert_null(out);
	/* no repository at all: the bundle could not name its target */
	in.config = cfg;
	assert_int_equal(pmbot_fieldsync_build(&out, &in, &d), PMBOT_ERROR);
	assert_null(out);
	assert_int_equal(pmbot_fieldsync_build(&out, NULL, &d), PMBOT_ERROR);
	json_decref(sentinel);
	pmbot_config_free(cfg);
	pmbot_diag_list_free(&d);
}

/* ---- agreement with the planner and with apply -------------------------------- */

static pmbot_workgraph *load_report(const char *path)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = NULL;
	pmbot_buf text = PMBOT_BUF_INIT;
	pmbot_limits lim;

	assert_int_equal(pmbot_fs_read(&text, path), 0);
	pmbot_limits_default(&lim);
	if (pmbot_workgraph_load(&g, path, text.buf, text.len, &lim, &d) != PMBOT_OK || d.errors)
		fail_msg("test report rejected: %s", d.count ? d.items[0].message : "?");
	pmbot_buf_free(&text);
	pmbot_diag_list_free(&d);
	return g;
}

/* The project changesets of `bundle`, without their ids (renumbered per plan). */
static json_t *project_changesets(const json_t *bundle)
{
	json_t *out = json_array(), *cs;
	size_t i;

	json_array_foreach(json_object_get(bundle, "changesets"), i, cs) {
		const char *op = json_string_value(json_object_get(cs, "operation"));
		json_t *c;

		if (strcmp(op, "add_to_project") && strcmp(op, "set_project_field"))
			continue;
		c = json_deep_copy(cs);
		json_object_del(c, "changeset_id");
		assert_int_equal(json_array_append_new(out, c), 0);
	}
	return out;
}

static void test_fieldsync__agrees_with_the_planner_on_every_value(void **state)
{
	struct world w;
	pmbot_workgraph *g = load_report(FIXTURES "dials.md");
	pmbot_formset *forms = NULL;
	pmbot_render_opts ro;
	pmbot_plan_input pin;
	pmbot_diag_list pd = PMBOT_DIAG_LIST_INIT;
	pmbot_state *st;
	json_t *plan = NULL, *a, *b;
	char *ca, *cb;
	size_t i, round;

	(void)state;
	world_init(&w, "board.json", "repos: [acme/widgets]\nproject: {owner: acme, number: 1}\n");
	/* the planner never writes Blocked by; the sync does (tested above) */
	remove_field(w.doc, "Blocked by");
	assert_int_equal(pmbot_formset_new(&forms, &w.config->labels), PMBOT_OK);
	ro.scheme = &w.config->labels;
	ro.issue_refs = NULL;
	for (i = 0; i < g->n_nodes; i++) {
		pmbot_rendered_issue r;
		pmbot_diag_list rd = PMBOT_DIAG_LIST_INIT;
		json_t *labels = json_array(), *is;
		size_t k;

		memset(&r, 0, sizeof(r));
		assert_int_equal(pmbot_render_issue(&r, g, &g->nodes[i],
			pmbot_formset_find(forms, g->nodes[i].type), &ro, &rd), PMBOT_OK);
		for (k = 0; k < r.n_labels; k++)
			assert_int_equal(json_array_append_new(labels, json_string(r.labels[k])), 0);
		is = add_issue(w.doc, WIDGETS, (long)i + 1, strdup(r.body), labels, BOT);
		assert_int_equal(json_object_set_new(is, "title", json_string(r.title)), 0);
		pmbot_rendered_issue_free(&r);
		pmbot_diag_list_free(&rd);
	}
	/* round 0: nothing on the board; round 1: every item there with stale values */
	for (round = 0; round < 2; round++) {
		if (round == 1)
			for (i = 0; i < g->n_nodes; i++) {
				char ref[64];

				snprintf(ref, sizeof(ref), WIDGETS "#%zu", i + 1);
				add_item(w.doc, ref, json_pack("{s:s, s:f, s:s}", "Priority", "P3",
					"Estimate (hrs)", 2.5, "Status", "Done"));
			}
		st = parse_state(w.doc);
		memset(&pin, 0, sizeof(pin));
		pin.graph = g;
		pin.config = w.config;
		pin.forms = forms;
		pin.state = st;
		pin.target = WIDGETS;
		json_decref(plan);
		plan = NULL;
		pmbot_diag_list_free(&pd);
		assert_int_equal(pmbot_plan_build(&plan, &pin, &pd), PMBOT_OK);
		sync_state(&w, st);
		assert_int_equal(w.rc, PMBOT_OK);
		a = project_changesets(plan);
		b = project_changesets(w.bundle);
		assert_true(json_array_size(a) > (round ? 5 : 12));
		ca = canonical(a);
		cb = canonical(b);
		assert_string_equal(ca, cb);
		free(ca);
		free(cb);
		json_decref(a);
		json_decref(b);
		pmbot_state_free(st);
	}
	/* spot checks of the mapping both agree on */
	assert_json(field_value(&w, "feat:face", "Priority"), "\"P2\"");
	assert_json(field_value(&w, "task:print", "Size"), "\"S\"");
	assert_json(field_value(&w, "task:print", "Status"), "\"Todo\"");
	assert_json(field_value(&w, "epic:dials", "Status"), "\"In progress\"");
	assert_json(field_value(&w, "task:mount", "Estimate (hrs)"), "0.1");
	assert_null(find_cs(&w, "set_project_field", "task:ink", "Area"));
	assert_null(find_cs(&w, "set_project_field", "task:mount", "Priority"));
	json_decref(plan);
	pmbot_diag_list_free(&pd);
	pmbot_formset_free(forms);
	pmbot_workgraph_free(g);
	world_free(&w);
}

static void test_fieldsync__apply_run_converges_and_a_second_sync_is_empty(void **state)
{
	struct world w;
	const char *tmp = getenv("TMPDIR");
	const char *repos[2] = { WIDGETS, GADGETS };
	char dir[256], path[320];
	pmbot_buf text = PMBOT_BUF_INIT, err = PMBOT_BUF_INIT;
	pmbot_diag_list bd = PMBOT_DIAG_LIST_INIT;
	pmbot_backend *backend = NULL;
	pmbot_state *st = NULL;
	const pmbot_pitem *item;
	json_t *results = NULL, *r;
	size_t i;

	(void)state;
	setenv("PMBOT_NOW", "2026-11-03T09:00:00Z", 1);
	world_init(&w, "world.json", NULL);
	snprintf(dir, sizeof(dir), "%s/pmbot-test-fieldsync-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.json", dir);
	assert_int_equal(pmbot_json_canonical(&text, w.doc), 0);
	assert_int_equal(pmbot_fs_write_atomic(path, text.buf, text.len), 0);
	assert_int_equal(pmbot_file_backend_open(&backend, path, NULL, &bd), PMBOT_OK);

	assert_int_equal(backend->read(&st, backend, repos, 2, "acme", 1, &err), PMBOT_OK);
	sync_state(&w, st);
	assert_int_equal(n_changesets(&w), 16);
	/* the approval check takes it as it takes a plan: its hash is its own */
	assert_int_equal(pmbot_apply_check(w.bundle, w.bundle, st, w.config, &bd), PMBOT_OK);
	assert_null(pmbot_diag_list_find(&bd, "STALE_PLAN"));
	assert_null(pmbot_diag_list_find(&bd, "PLAN_HASH_MISMATCH"));
	pmbot_state_free(st);
	st = NULL;
	if (pmbot_apply_run(&results, w.bundle, NULL, backend, w.config, NULL, "test", NULL,
		&err) != PMBOT_OK)
		fail_msg("apply failed: %s", err.buf);
	assert_int_equal(json_array_size(results), 16);
	json_array_foreach(results, i, r)
		assert_string_equal(json_string_value(json_object_get(r, "status")), "applied");

	/* what landed is what was planned */
	assert_int_equal(backend->read(&st, backend, repos, 2, "acme", 1, &err), PMBOT_OK);
	item = pmbot_state_item(st, WIDGETS "#2");
	assert_non_null(item);
	assert_json(item->values, "{\"Actual (hrs)\":3.0,\"Area\":\"ui\",\"Estimate (hrs)\":2.5,"
		"\"Priority\":\"P2\",\"Status\":\"Done\"}");
	item = pmbot_state_item(st, WIDGETS "#1");
	assert_string_equal(json_string_value(json_object_get(item->values, "Priority")), "P1");
	assert_string_equal(json_string_value(json_object_get(item->values, "Notes")), "keep me");
	assert_non_null(pmbot_state_item(st, GADGETS "#1"));
	assert_null(pmbot_state_item(st, WIDGETS "#3"));

	sync_state(&w, st);
	assert_int_equal(w.rc, PMBOT_OK);
	assert_int_equal(n_changesets(&w), 0);
	assert_int_equal(json_array_size(json_object_get(w.bundle, "fingerprint")), 0);

	pmbot_state_free(st);
	json_decref(results);
	backend->free(backend);
	pmbot_buf_free(&text);
	pmbot_buf_free(&err);
	pmbot_diag_list_free(&bd);
	test_remove_tree(dir);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fieldsync__label_beats_heading),
		cmocka_unit_test(test_fieldsync__heading_used_when_no_label),
		cmocka_unit_test(test_fieldsync__form_heading_aliases_are_read),
		cmocka_unit_test(test_fieldsync__single_select_takes_the_option_spelling),
		cmocka_unit_test(test_fieldsync__hours_parse_as_body_parse_hours),
		cmocka_unit_test(test_fieldsync__values_reach_the_board_without_invisible_characters),
		cmocka_unit_test(test_fieldsync__equal_values_plan_nothing),
		cmocka_unit_test(test_fieldsync__only_differences_are_planned_with_before),
		cmocka_unit_test(test_fieldsync__empty_value_never_clears),
		cmocka_unit_test(test_fieldsync__unknown_option_is_an_error_naming_the_options),
		cmocka_unit_test(test_fieldsync__label_conflict_leaves_the_field_alone),
		cmocka_unit_test(test_fieldsync__triage_defaults_are_not_synced),
		cmocka_unit_test(test_fieldsync__wrong_field_type_warns_once_per_field),
		cmocka_unit_test(test_fieldsync__fields_missing_from_the_board_are_skipped),
		cmocka_unit_test(test_fieldsync__issues_not_on_the_board_are_added_first),
		cmocka_unit_test(test_fieldsync__auto_approved_fields_wait_for_an_unapproved_add),
		cmocka_unit_test(test_fieldsync__closed_issues_are_synced),
		cmocka_unit_test(test_fieldsync__untrusted_author_is_ignored),
		cmocka_unit_test(test_fieldsync__duplicate_marker_is_left_alone),
		cmocka_unit_test(test_fieldsync__repos_default_to_the_allowlist_and_must_be_allowed),
		cmocka_unit_test(test_fieldsync__no_project_is_an_error),
		cmocka_unit_test(test_fieldsync__config_operations_apply),
		cmocka_unit_test(test_fieldsync__bundle_follows_the_plan_conventions),
		cmocka_unit_test(test_fieldsync__same_input_same_bytes_whatever_the_state_order),
		cmocka_unit_test(test_fieldsync__unusable_arguments_are_errors),
		cmocka_unit_test(test_fieldsync__agrees_with_the_planner_on_every_value),
		cmocka_unit_test(test_fieldsync__apply_run_converges_and_a_second_sync_is_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
