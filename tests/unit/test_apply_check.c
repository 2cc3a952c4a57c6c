#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers/tmpdir.h"

#include "pmbot/apply.h"
#include "pmbot/fs.h"
#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/state.h"
#include "pmbot/banned.h"

#define FIXTURES "tests/fixtures/bundles-apply/"
#define N_CHANGESETS 14

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

	assert_int_equal(pmbot_config_parse(&cfg, "pm-bot.yml", yaml, strlen(yaml), NULL, &d),
		PMBOT_OK);
	pmbot_diag_list_free(&d);
	return cfg;
}

static pmbot_config *default_config(void)
{
	return parse_config("repos: [acme/widgets]\nproject: {owner: acme, number: 1}\n");
}

static pmbot_state *parse_state(const json_t *j)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	pmbot_buf text = PMBOT_BUF_INIT;
	pmbot_state *st = NULL;
	size_t i;
	int rc;

	assert_int_equal(pmbot_json_canonical(&text, j), 0);
	rc = pmbot_state_parse(&st, "state.json", text.buf, text.len, &d);
	for (i = 0; i < d.count; i++)
		print_message("%s %s: %s\n", d.items[i].code, d.items[i].path, d.items[i].message);
	assert_int_equal(rc, PMBOT_OK);
	pmbot_buf_free(&text);
	pmbot_diag_list_free(&d);
	return st;
}

static json_t *changeset(const json_t *bundle, size_t i)
{
	return json_array_get(json_object_get(bundle, "changesets"), i);
}

static json_t *issues_of(json_t *state_json)
{
	return json_object_get(json_array_get(json_object_get(state_json, "repositories"), 0),
		"issues");
}

/* Give `bundle` the plan_hash and bundle_id plan.h defines for its content. */
static void rehash(json_t *bundle)
{
	char hash[PMBOT_SHA256_HEX_SIZE], id[32];
	json_t *o = json_pack("{s:O, s:O}", "changesets", json_object_get(bundle, "changesets"),
		"fingerprint", json_object_get(bundle, "fingerprint"));

	assert_int_equal(pmbot_sha256_json(hash, o), 0);
	json_decref(o);
	snprintf(id, sizeof(id), "bundle-%.16s", hash);
	json_object_set_new(bundle, "plan_hash", json_string(hash));
	json_object_set_new(bundle, "bundle_id", json_string(id));
}

/*
 * What planning again after the first `k` changesets were applied gives:
 * the rest, renumbered, with a moved fingerprint.
 */
static json_t *resumed(const json_t *approved, size_t k)
{
	json_t *fresh = json_deep_copy(approved);
	json_t *cs = json_object_get(fresh, "changesets");
	size_t i;

	for (i = 0; i < k; i++)
		json_array_remove(cs, 0);
	for (i = 0; i < json_array_size(cs); i++) {
		char id[32];

		snprintf(id, sizeof(id), "cs-%04zu", i + 1);
		json_object_set_new(json_array_get(cs, i), "changeset_id", json_string(id));
	}
	json_object_set_new(json_array_get(json_object_get(fresh, "fingerprint"), 0), "updated_at",
		json_string("2025-06-01T12:00:09Z"));
	rehash(fresh);
	return fresh;
}

/* A bot-authored issue #number carrying `cs`'s create payload. */
static json_t *created_issue(const json_t *cs, long number, const char *author, const char *type)
{
	const json_t *p = json_object_get(cs, "payload");
	char node[32];

	snprintf(node, sizeof(node), "I_%ld", number);
	return json_pack("{s:i, s:i, s:s, s:O, s:O, s:O, s:s, s:s, s:s, s:s, s:n, s:[]}",
		"number", (int)number, "database_id", (int)(2000 + number), "node_id", node,
		"title", json_object_get(p, "title"), "body", json_object_get(p, "body"),
		"labels", json_object_get(p, "labels"), "state", "open", "author", author,
		"author_type", type, "updated_at", "2025-06-01T12:00:00Z", "parent", "blocked_by");
}

/* The initial state plus the first `n` creates of `bundle`, authored by `author`. */
static json_t *state_with_creates(const json_t *bundle, size_t n, const char *author,
	const char *type)
{
	json_t *st = load_json(FIXTURES "state-initial.json");
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(issues_of(st), created_issue(changeset(bundle, i), (long)(4 + i),
			author, type));
	return st;
}

static const pmbot_diag *expect_stale(const pmbot_diag_list *d, const char *code,
	const char *path, const char *needle)
{
	const pmbot_diag *x = pmbot_diag_list_find(d, code);

	if (!x)
		fail_msg("no %s (have %s)", code, d->count ? d->items[0].code : "nothing");
	assert_int_equal(d->errors, 1);
	assert_string_equal(x->path, path);
	if (needle && !strstr(x->message, needle))
		fail_msg("\"%s\" lacks \"%s\"", x->message, needle);
	return x;
}

/* ---- pmbot_apply_check ---- */

static void test_apply_check__the_same_plan_hash_is_approved(void **state)
{
	json_t *approved = load_json(FIXTURES "full.json"), *fresh = json_deep_copy(approved);
	json_t *st_json = load_json(FIXTURES "state-initial.json");
	pmbot_state *st = parse_state(st_json);
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(pmbot_apply_check(approved, fresh, st, cfg, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
	json_decref(st_json);
	json_decref(approved);
	json_decref(fresh);
}

static void test_apply_check__a_resumed_plan_is_approved_when_the_rest_is_visibly_applied(void **state)
{
	json_t *approved = load_json(FIXTURES "full.json"), *fresh = resumed(approved, 3);
	json_t *st_json = state_with_creates(approved, 3, "github-actions[bot]", "Bot");
	pmbot_state *st = parse_state(st_json);
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	(void)state;
	assert_string_not_equal(json_string_value(json_object_get(approved, "plan_hash")),
		json_string_value(json_object_get(fresh, "plan_hash")));
	assert_int_equal(pmbot_apply_check(approved, fresh, st, cfg, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
	json_decref(st_json);
	json_decref(approved);
	json_decref(fresh);
}

static void test_apply_check__a_missing_changeset_that_is_not_applied_is_stale(void **state)
{
	json_t *approved = load_json(FIXTURES "full.json"), *fresh = resumed(approved, 3);
	json_t *st_json = state_with_creates(approved, 2, "github-actions[bot]", "Bot");
	pmbot_state *st = parse_state(st_json);
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(pmbot_apply_check(approved, fresh, st, cfg, &d), PMBOT_EINVALID);
	expect_stale(&d, "STALE_PLAN", "/changesets/2", "create_issue:acme/widgets:task:t1");
	pmbot_diag_list_free(&d);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
	json_decref(st_json);
	json_decref(approved);
	json_decref(fresh);
}

static void test_apply_check__issues_by_untrusted_authors_do_not_prove_anything(void **state)
{
	json_t *approved = load_json(FIXTURES "full.json"), *fresh = resumed(approved, 3);
	json_t *st_json = state_with_creates(approved, 3, "mallory", "User");
	pmbot_state *st = parse_state(st_json);
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(pmbot_apply_check(approved, fresh, st, cfg, &d), PMBOT_EINVALID);
	expect_stale(&d, "STALE_PLAN", "/changesets/0", "epic:e1");
	pmbot_diag_list_free(&d);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
	json_decref(st_json);
	json_decref(approved);
	json_decref(fresh);
}

static void test_apply_check__a_changeset_the_approver_never_saw_is_stale(void **state)
{
	json_t *approved = load_json(FIXTURES "full.json"), *fresh = json_deep_copy(approved);
	json_t *st_json = load_json(FIXTURES "state-initial.json"), *extra;
	pmbot_state *st = parse_state(st_json);
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	(void)state;
	extra = json_deep_copy(changeset(fresh, 5));
	json_object_set_new(extra, "idempotency_key",
		json_string("add_labels:acme/widgets:task:old:0123456789ab"));
	json_object_set_new(json_object_get(extra, "payload"), "labels", json_pack("[s]", "size:xl"));
	json_array_insert_new(json_object_get(fresh, "changesets"), 6, extra);
	rehash(fresh);
	assert_int_equal(pmbot_apply_check(approved, fresh, st, cfg, &d), PMBOT_EINVALID);
	expect_stale(&d, "STALE_PLAN", "/changesets/6", "0123456789ab is not in the approved plan");
	pmbot_diag_list_free(&d);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
	json_decref(st_json);
	json_decref(approved);
	json_decref(fresh);
}

static void test_apply_check__a_changed_payload_target_or_operation_is_stale(void **state)
{
	static const char *const what[] = { "payload", "target", "operation" };
	json_t *approved = load_json(FIXTURES "full.json");
	json_t *st_json = load_json(FIXTURES "state-initial.json");
	pmbot_state *st = parse_state(st_json);
	pmbot_config *cfg = default_config();
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		json_t *fresh = json_deep_copy(approved), *cs = changeset(fresh, 3);
		pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

		if (i == 0)
			json_object_set_new(json_object_get(cs, "payload"), "title", json_string("[task] Other"));
		else if (i == 1)
			json_object_set_new(json_object_get(cs, "target"), "stable_id", json_string("task:t1"));
		else
			json_object_set_new(cs, "operation", json_string("update_issue_body"));
		rehash(fresh);
		assert_int_equal(pmbot_apply_check(approved, fresh, st, cfg, &d), PMBOT_EINVALID);
		expect_stale(&d, "STALE_PLAN", "/changesets/3", what[i]);
		pmbot_diag_list_free(&d);
		json_decref(fresh);
	}
	pmbot_state_free(st);
	pmbot_config_free(cfg);
	json_decref(st_json);
	json_decref(approved);
}

static void test_apply_check__a_new_conflict_is_stale_a_known_one_is_not(void **state)
{
	json_t *approved = load_json(FIXTURES "full.json"), *fresh;
	json_t *st_json = state_with_creates(approved, 3, "github-actions[bot]", "Bot");
	json_t *conflict = json_pack("{s:s, s:s, s:s, s:s, s:s}", "stable_id", "task:other",
		"ref", "acme/widgets#9", "reason", "body edited since pm-bot wrote it",
		"expected_rev", "aa", "actual_rev", "bb");
	pmbot_state *st = parse_state(st_json);
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	(void)state;
	fresh = resumed(approved, 3);
	json_array_append(json_object_get(fresh, "conflicts"), conflict);
	assert_int_equal(pmbot_apply_check(approved, fresh, st, cfg, &d), PMBOT_EINVALID);
	expect_stale(&d, "STALE_PLAN", "/conflicts/0", "task:other");
	pmbot_diag_list_free(&d);
	/* The approver saw this conflict: it does not move the approval. */
	json_array_append(json_object_get(approved, "conflicts"), conflict);
	assert_int_equal(pmbot_apply_check(approved, fresh, st, cfg, &d), PMBOT_OK);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
	json_decref(conflict);
	json_decref(st_json);
	json_decref(approved);
	json_decref(fresh);
}

static void test_apply_check__an_edited_plan_file_is_refused(void **state)
{
	json_t *approved = load_json(FIXTURES "full.json"), *fresh = json_deep_copy(approved);
	json_t *st_json = load_json(FIXTURES "state-initial.json");
	pmbot_state *st = parse_state(st_json);
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	(void)state;
	/* A changeset slipped into the approved file, plan_hash left alone. */
	json_object_set_new(json_object_get(changeset(approved, 5), "payload"), "labels",
		json_pack("[s]", "admin"));
	assert_int_equal(pmbot_apply_check(approved, fresh, st, cfg, &d), PMBOT_EINVALID);
	expect_stale(&d, "PLAN_HASH_MISMATCH", "/plan_hash", "approved plan");
	pmbot_diag_list_free(&d);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
	json_decref(st_json);
	json_decref(approved);
	json_decref(fresh);
}

static void test_apply_check__refuses_what_is_not_a_bundle(void **state)
{
	json_t *approved = load_json(FIXTURES "full.json"), *fresh = json_deep_copy(approved);
	json_t *st_json = load_json(FIXTURES "state-initial.json");
	pmbot_state *st = parse_state(st_json);
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	(void)state;
	json_object_del(fresh, "plan_hash");
	assert_int_equal(pmbot_apply_check(approved, fresh, st, cfg, &d), PMBOT_EINVALID);
	expect_stale(&d, "BUNDLE_INVALID", "", "fresh plan");
	pmbot_diag_list_free(&d);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
	json_decref(st_json);
	json_decref(approved);
	json_decref(fresh);
}

/* ---- pmbot_apply_check in two steps ---- */

/*
 * What `pm-bot apply` does: the approved plan checked alone, its
 * changesets dropped, the rest checked against its serialised bytes.
 */
static int check_in_steps(const json_t *approved, const json_t *fresh, const pmbot_state *st,
	const pmbot_config *cfg, pmbot_diag_list *d)
{
	char *text = json_dumps(approved, JSON_COMPACT);
	json_t *light = json_deep_copy(approved);
	int rc;

	assert_non_null(text);
	rc = pmbot_apply_check_bundle(light, "approved", d);
	if (rc == PMBOT_OK) {
		json_object_del(light, "changesets");
		rc = pmbot_apply_check_fresh(light, text, strlen(text), fresh, st, cfg, d);
	}
	json_decref(light);
	free(text);
	return rc;
}

static void test_apply_check__in_two_steps_decides_as_in_one(void **state)
{
	json_t *full = load_json(FIXTURES "full.json");
	json_t *st_none = load_json(FIXTURES "state-initial.json");
	json_t *st_three = state_with_creates(full, 3, "github-actions[bot]", "Bot");
	pmbot_config *cfg = default_config();
	size_t c;

	(void)state;
	for (c = 0; c < 6; c++) {
		json_t *approved = json_deep_copy(full), *fresh;
		pmbot_state *st = parse_state(c == 1 ? st_three : st_none);
		pmbot_diag_list one = PMBOT_DIAG_LIST_INIT, two = PMBOT_DIAG_LIST_INIT;
		int r1, r2;
		size_t i;

		switch (c) {
		case 0: fresh = json_deep_copy(full); break;                  /* the same plan */
		case 1: case 2: fresh = resumed(full, 3); break;              /* applied, or not */
		case 3:                                                       /* an edited plan file */
			fresh = json_deep_copy(full);
			json_object_set_new(json_object_get(changeset(approved, 5), "payload"), "labels",
				json_pack("[s]", "admin"));
			break;
		case 4:                                                       /* not a bundle */
			fresh = json_deep_copy(full);
			json_object_del(fresh, "plan_hash");
			break;
		default:                                                      /* a changed payload */
			fresh = resumed(full, 1);
			json_object_set_new(json_object_get(changeset(fresh, 2), "payload"), "title",
				json_string("Something else"));
			rehash(fresh);
			break;
		}
		r1 = pmbot_apply_check(approved, fresh, st, cfg, &one);
		r2 = check_in_steps(approved, fresh, st, cfg, &two);
		if (r1 != r2)
			fail_msg("case %zu: %d in one step, %d in two", c, r1, r2);
		assert_int_equal(r1, c < 2 ? PMBOT_OK : PMBOT_EINVALID);
		assert_int_equal(one.count, two.count);
		for (i = 0; i < one.count; i++) {
			assert_string_equal(one.items[i].code, two.items[i].code);
			assert_string_equal(one.items[i].path, two.items[i].path);
			assert_string_equal(one.items[i].message, two.items[i].message);
		}
		pmbot_diag_list_free(&one);
		pmbot_diag_list_free(&two);
		pmbot_state_free(st);
		json_decref(approved);
		json_decref(fresh);
	}
	pmbot_config_free(cfg);
	json_decref(st_three);
	json_decref(st_none);
	json_decref(full);
}

static void test_apply_check__in_two_steps_the_text_is_read_for_a_resume_only(void **state)
{
	json_t *approved = load_json(FIXTURES "full.json"), *fresh = json_deep_copy(approved);
	json_t *st_json = state_with_creates(approved, 3, "github-actions[bot]", "Bot");
	json_t *light = json_deep_copy(approved), *resume = resumed(approved, 3);
	pmbot_state *st = parse_state(st_json);
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	char *other;

	(void)state;
	json_object_del(light, "changesets");
	/* The same plan_hash: the text is not even parsed. */
	assert_int_equal(pmbot_apply_check_fresh(light, "not json", 8, fresh, st, cfg, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);
	/* A resume against the text of another plan (this one's own rest) is refused. */
	other = json_dumps(resume, JSON_COMPACT);
	assert_int_equal(pmbot_apply_check_fresh(light, other, strlen(other), resume, st, cfg, &d),
		PMBOT_EINVALID);
	expect_stale(&d, "STALE_PLAN", "/plan_hash", "not the plan checked");
	pmbot_diag_list_free(&d);
	free(other);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
	json_decref(st_json);
	json_decref(approved);
	json_decref(fresh);
	json_decref(light);
	json_decref(resume);
}

/* ---- resume, for real: apply the first k through the executor, then check ---- */

typedef struct {
	char dir[256];
	char state[320];
} scratch;

static void test_apply_check__a_resume_after_any_prefix_is_approved_and_nothing_else(void **state)
{
	json_t *approved = load_json(FIXTURES "full.json");
	pmbot_config *cfg = default_config();
	const char *tmp = getenv("TMPDIR");
	size_t k;

	(void)state;
	setenv("PMBOT_NOW", "2025-06-01T12:00:00Z", 1);
	for (k = 1; k < N_CHANGESETS; k++) {
		pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
		pmbot_buf text = PMBOT_BUF_INIT, err = PMBOT_BUF_INIT;
		pmbot_backend *b = NULL;
		json_t *run = json_array(), *results = NULL, *fresh, *skip;
		pmbot_state *st = NULL;
		scratch s;
		size_t i;

		snprintf(s.dir, sizeof(s.dir), "%s/pmbot-test-check-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		assert_non_null(mkdtemp(s.dir));
		snprintf(s.state, sizeof(s.state), "%s/state.json", s.dir);
		assert_int_equal(pmbot_fs_read(&text, FIXTURES "state-initial.json"), 0);
		assert_int_equal(pmbot_fs_write_atomic(s.state, text.buf, text.len), 0);
		for (i = 0; i < k; i++)
			json_array_append(run, json_object_get(changeset(approved, i), "changeset_id"));
		assert_int_equal(pmbot_file_backend_open(&b, s.state, NULL, &d), PMBOT_OK);
		assert_int_equal(pmbot_apply_run(&results, approved, run, b, cfg, NULL, NULL, NULL, &err),
			PMBOT_OK);
		assert_int_equal(b->read(&st, b, NULL, 0, "acme", 1, &err), PMBOT_OK);

		fresh = resumed(approved, k);
		if (pmbot_apply_check(approved, fresh, st, cfg, &d) != PMBOT_OK)
			fail_msg("after %zu: %s", k, d.count ? d.items[0].message : "?");
		json_decref(fresh);

		/* Dropping one more than was applied is a difference the approval does not cover. */
		fresh = resumed(approved, k + 1);
		skip = json_deep_copy(approved);
		assert_int_equal(pmbot_apply_check(skip, fresh, st, cfg, &d), PMBOT_EINVALID);
		assert_non_null(pmbot_diag_list_find(&d, "STALE_PLAN"));
		json_decref(skip);
		json_decref(fresh);

		pmbot_state_free(st);
		b->free(b);
		json_decref(run);
		json_decref(results);
		pmbot_buf_free(&text);
		pmbot_buf_free(&err);
		pmbot_diag_list_free(&d);
		test_remove_tree(s.dir);
	}
	pmbot_config_free(cfg);
	json_decref(approved);
}

/* ---- pmbot_changeset_is_applied ---- */

static int applied_in(const json_t *cs, json_t *st_json, const pmbot_config *cfg)
{
	pmbot_state *st = parse_state(st_json);
	int yes = pmbot_changeset_is_applied(cs, st, cfg);

	pmbot_state_free(st);
	return yes;
}

static void test_is_applied__labels_compare_without_case_as_on_github(void **state)
{
	json_t *bundle = load_json(FIXTURES "full.json");
	json_t *st = load_json(FIXTURES "state-initial.json");
	json_t *old = json_array_get(issues_of(st), 0);
	pmbot_config *cfg = default_config();

	(void)state;
	assert_int_equal(applied_in(changeset(bundle, 5), st, cfg), 0);
	json_object_set_new(old, "labels", json_pack("[s, s]", "Prio:High", "type:task"));
	assert_int_equal(applied_in(changeset(bundle, 5), st, cfg), 1);
	/* remove_labels prio:low: no longer there in any case. */
	assert_int_equal(applied_in(changeset(bundle, 6), st, cfg), 1);
	json_object_set_new(old, "labels", json_pack("[s]", "PRIO:LOW"));
	assert_int_equal(applied_in(changeset(bundle, 6), st, cfg), 0);
	pmbot_config_free(cfg);
	json_decref(st);
	json_decref(bundle);
}

static void test_is_applied__titles_and_bodies_compare_byte_for_byte(void **state)
{
	json_t *bundle = load_json(FIXTURES "full.json");
	json_t *st = load_json(FIXTURES "state-initial.json");
	json_t *old = json_array_get(issues_of(st), 0);
	pmbot_config *cfg = default_config();

	(void)state;
	json_object_set_new(old, "title", json_string("[task] renamed"));
	assert_int_equal(applied_in(changeset(bundle, 3), st, cfg), 0);
	json_object_set_new(old, "title", json_string("[task] Renamed"));
	assert_int_equal(applied_in(changeset(bundle, 3), st, cfg), 1);
	json_object_set(old, "body", json_object_get(json_object_get(changeset(bundle, 4), "payload"),
		"body"));
	assert_int_equal(applied_in(changeset(bundle, 4), st, cfg), 1);
	pmbot_config_free(cfg);
	json_decref(st);
	json_decref(bundle);
}

static void test_is_applied__an_issue_type_compares_without_case_as_on_github(void **state)
{
	json_t *bundle = load_json(FIXTURES "full.json");
	json_t *st = load_json(FIXTURES "state-initial.json");
	json_t *old = json_array_get(issues_of(st), 0);
	json_t *cs = json_deep_copy(changeset(bundle, 3)); /* the title change of that issue */
	pmbot_config *cfg = default_config();

	(void)state;
	json_object_set_new(cs, "operation", json_string("set_issue_type"));
	json_object_set_new(cs, "payload", json_pack("{s:s}", "issue_type", "Task"));
	assert_int_equal(applied_in(cs, st, cfg), 0);
	json_object_set_new(old, "issue_type", json_string("Bug"));
	assert_int_equal(applied_in(cs, st, cfg), 0);
	json_object_set_new(old, "issue_type", json_string("task"));
	assert_int_equal(applied_in(cs, st, cfg), 1);
	json_object_set_new(cs, "payload", json_object());
	assert_int_equal(applied_in(cs, st, cfg), 0);
	pmbot_config_free(cfg);
	json_decref(cs);
	json_decref(st);
	json_decref(bundle);
}

static void test_is_applied__an_ambiguous_target_is_never_applied(void **state)
{
	json_t *bundle = load_json(FIXTURES "full.json");
	json_t *st = load_json(FIXTURES "state-initial.json"), *dup;
	pmbot_config *cfg = default_config();

	(void)state;
	json_object_set_new(json_array_get(issues_of(st), 0), "title", json_string("[task] Renamed"));
	assert_int_equal(applied_in(changeset(bundle, 3), st, cfg), 1);
	dup = json_deep_copy(json_array_get(issues_of(st), 0));
	json_object_set_new(dup, "number", json_integer(7));
	json_object_set_new(dup, "database_id", json_integer(1007));
	json_object_set_new(dup, "node_id", json_string("I_7"));
	json_object_set_new(dup, "blocked_by", json_array());
	json_array_append_new(issues_of(st), dup);
	assert_int_equal(applied_in(changeset(bundle, 3), st, cfg), 0);
	pmbot_config_free(cfg);
	json_decref(st);
	json_decref(bundle);
}

static void test_is_applied__a_create_counts_once_a_trusted_marker_exists(void **state)
{
	json_t *bundle = load_json(FIXTURES "full.json");
	json_t *st = state_with_creates(bundle, 1, "github-actions", "Bot");
	pmbot_config *cfg = default_config();
	pmbot_config *alice = parse_config("repos: [acme/widgets]\ntrusted_authors: [alice]\n");
	json_t *closed;

	(void)state;
	/* GraphQL's spelling of the Actions bot is the same author. */
	assert_int_equal(applied_in(changeset(bundle, 0), st, cfg), 1);
	assert_int_equal(applied_in(changeset(bundle, 0), st, NULL), 1);
	assert_int_equal(applied_in(changeset(bundle, 1), st, cfg), 0);
	json_decref(st);

	st = state_with_creates(bundle, 2, "alice", "User");
	assert_int_equal(applied_in(changeset(bundle, 1), st, cfg), 0);
	assert_int_equal(applied_in(changeset(bundle, 1), st, alice), 1);
	/* A closed issue still carries its identity. */
	closed = json_array_get(issues_of(st), 4);
	json_object_set_new(closed, "state", json_string("closed"));
	assert_int_equal(applied_in(changeset(bundle, 1), st, alice), 1);
	pmbot_config_free(cfg);
	pmbot_config_free(alice);
	json_decref(st);
	json_decref(bundle);
}

static void test_is_applied__relationships_follow_the_state(void **state)
{
	json_t *bundle = load_json(FIXTURES "full.json");
	json_t *st = state_with_creates(bundle, 3, "github-actions[bot]", "Bot");
	json_t *is = issues_of(st);
	pmbot_config *cfg = default_config();

	(void)state;
	assert_int_equal(applied_in(changeset(bundle, 7), st, cfg), 0);
	json_object_set_new(json_array_get(is, 4), "parent", json_string("acme/widgets#4"));
	assert_int_equal(applied_in(changeset(bundle, 7), st, cfg), 1);
	json_object_set_new(json_array_get(is, 4), "parent", json_string("acme/widgets#2"));
	assert_int_equal(applied_in(changeset(bundle, 7), st, cfg), 0);
	assert_int_equal(applied_in(changeset(bundle, 9), st, cfg), 0);
	json_object_set_new(json_array_get(is, 5), "blocked_by", json_pack("[s]", "acme/widgets#1"));
	assert_int_equal(applied_in(changeset(bundle, 9), st, cfg), 1);
	/* remove_dependency on #1 blocked by #2 (an outside issue, by number). */
	assert_int_equal(applied_in(changeset(bundle, 10), st, cfg), 0);
	json_object_set_new(json_array_get(is, 0), "blocked_by", json_array());
	assert_int_equal(applied_in(changeset(bundle, 10), st, cfg), 1);
	pmbot_config_free(cfg);
	json_decref(st);
	json_decref(bundle);
}

static void test_is_applied__project_items_and_values(void **state)
{
	json_t *bundle = load_json(FIXTURES "full.json");
	json_t *st = state_with_creates(bundle, 3, "github-actions[bot]", "Bot");
	json_t *project = json_object_get(st, "project");
	json_t *items = json_object_get(project, "items");
	pmbot_config *cfg = default_config();

	(void)state;
	assert_int_equal(applied_in(changeset(bundle, 11), st, cfg), 0);
	json_array_append_new(items, json_pack("{s:s, s:s, s:{s:s}}", "id", "PVTI_6", "issue",
		"acme/widgets#6", "values", "Priority", "High"));
	assert_int_equal(applied_in(changeset(bundle, 11), st, cfg), 1);
	assert_int_equal(applied_in(changeset(bundle, 12), st, cfg), 1);
	/* Option names compare without case, as the executor resolves them. */
	json_object_set_new(json_object_get(changeset(bundle, 12), "payload"), "value",
		json_string("HIGH"));
	assert_int_equal(applied_in(changeset(bundle, 12), st, cfg), 1);
	json_object_set_new(json_object_get(changeset(bundle, 12), "payload"), "value",
		json_string("Low"));
	assert_int_equal(applied_in(changeset(bundle, 12), st, cfg), 0);
	/* Numbers compare by value, whatever their JSON spelling. */
	assert_int_equal(applied_in(changeset(bundle, 13), st, cfg), 0);
	json_object_set_new(json_object_get(json_array_get(items, 0), "values"), "Estimate",
		json_real(4.0));
	assert_int_equal(applied_in(changeset(bundle, 13), st, cfg), 1);
	/* Another project is not this one. */
	json_object_set_new(project, "number", json_integer(2));
	assert_int_equal(applied_in(changeset(bundle, 11), st, cfg), 0);
	pmbot_config_free(cfg);
	json_decref(st);
	json_decref(bundle);
}

static void test_is_applied__malformed_changesets_are_not_applied(void **state)
{
	json_t *st_json = load_json(FIXTURES "state-initial.json");
	pmbot_state *st = parse_state(st_json);
	json_t *bad[4];
	size_t i;

	(void)state;
	bad[0] = json_pack("{s:s}", "operation", "update_issue_title");
	bad[1] = json_pack("{s:s, s:{s:s, s:s}, s:{}}", "operation", "no_such_op", "target", "repo",
		"acme/widgets", "stable_id", "task:old", "payload");
	bad[2] = json_pack("{s:s, s:{s:s}, s:{s:s}}", "operation", "update_issue_title", "target",
		"repo", "acme/widgets", "payload", "title", "[task] Old");
	bad[3] = json_pack("{s:s, s:{s:s, s:i}, s:{s:s}}", "operation", "update_issue_title",
		"target", "repo", "acme/widgets", "number", 99, "payload", "title", "[task] Old");
	for (i = 0; i < 4; i++) {
		assert_int_equal(pmbot_changeset_is_applied(bad[i], st, NULL), 0);
		json_decref(bad[i]);
	}
	/* By number, the same title is applied. */
	bad[0] = json_pack("{s:s, s:{s:s, s:i}, s:{s:s}}", "operation", "update_issue_title",
		"target", "repo", "acme/widgets", "number", 1, "payload", "title", "[task] Old");
	assert_int_equal(pmbot_changeset_is_applied(bad[0], st, NULL), 1);
	json_decref(bad[0]);
	pmbot_state_free(st);
	json_decref(st_json);
}

/* ---- pmbot_apply_check_proposal ---- */

/* The proposal pm-bot makes of a model's changesets (JSON text) over `st`. */
static json_t *proposal_over(const pmbot_state *st, const pmbot_config *cfg, const char *cs)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	json_error_t e;
	json_t *answer = json_pack("{s:s, s:o}", "summary", "s", "changesets", json_loads(cs, 0, &e));
	json_t *src = json_pack("{s:s}", "kind", "proposal"), *b = NULL;
	size_t i;
	int rc;

	assert_non_null(answer);
	rc = pmbot_proposal_bundle(&b, answer, st, cfg, "acme/widgets", src, &d);
	for (i = 0; i < d.count; i++)
		print_message("%s %s: %s\n", d.items[i].code, d.items[i].path, d.items[i].message);
	assert_int_equal(rc, PMBOT_OK);
	json_decref(answer);
	json_decref(src);
	pmbot_diag_list_free(&d);
	return b;
}

/* The initial state with issue `number`'s `key` set to `value`. */
static pmbot_state *state_edited(json_t *sj, long number, const char *key, const char *value)
{
	size_t i;
	json_t *is;

	json_array_foreach(issues_of(sj), i, is)
		if (json_integer_value(json_object_get(is, "number")) == number)
			json_object_set_new(is, key, json_string(value));
	return parse_state(sj);
}

#define OLD_TASK "{\"repo\":\"acme/widgets\",\"stable_id\":\"task:old\"}"

static void test_check_proposal__a_fresh_proposal_may_run(void **state)
{
	json_t *sj = load_json(FIXTURES "state-initial.json");
	pmbot_state *st = parse_state(sj);
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	json_t *b = proposal_over(st, cfg, "[{\"operation\":\"add_labels\",\"target\":" OLD_TASK
		",\"payload\":{\"labels\":[\"prio:high\"]},\"requires_approval\":true,\"rationale\":\"r\"}]");

	(void)state;
	assert_int_equal(pmbot_apply_check_proposal(b, st, cfg, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);
	json_decref(b);
	json_decref(sj);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
}

static void test_check_proposal__an_issue_named_by_stable_id_and_edited_since_is_stale(void **state)
{
	json_t *sj = load_json(FIXTURES "state-initial.json");
	pmbot_state *st = parse_state(sj), *later;
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	json_t *b = proposal_over(st, cfg, "[{\"operation\":\"update_issue_title\",\"target\":" OLD_TASK
		",\"payload\":{\"title\":\"x\"},\"requires_approval\":true,\"rationale\":\"r\"}]");

	(void)state;
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(b,
		"fingerprint"), 0), "ref")), "acme/widgets#1");
	later = state_edited(sj, 1, "updated_at", "2025-06-01T00:00:00Z");
	assert_int_equal(pmbot_apply_check_proposal(b, later, cfg, &d), PMBOT_EINVALID);
	expect_stale(&d, "STALE_PLAN", "/fingerprint", "acme/widgets#1 changed since");
	pmbot_diag_list_free(&d);
	pmbot_state_free(later);
	/* Another issue under the same number is stale too. */
	later = state_edited(sj, 1, "node_id", "I_other");
	json_object_set_new(json_array_get(issues_of(sj), 0), "updated_at",
		json_string("2025-01-01T00:00:01Z"));
	pmbot_state_free(later);
	later = parse_state(sj);
	assert_int_equal(pmbot_apply_check_proposal(b, later, cfg, &d), PMBOT_EINVALID);
	expect_stale(&d, "STALE_PLAN", "/fingerprint", "is another issue now");
	pmbot_diag_list_free(&d);
	pmbot_state_free(later);
	json_decref(b);
	json_decref(sj);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
}

static void test_check_proposal__a_parent_or_blocker_edited_since_is_stale(void **state)
{
	json_t *full = load_json(FIXTURES "full.json");
	/* #4: epic:e1, created by the bot: a managed parent. */
	json_t *sj = state_with_creates(full, 1, "github-actions[bot]", "Bot");
	pmbot_state *st = parse_state(sj), *later;
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	json_t *b = proposal_over(st, cfg, "[{\"operation\":\"set_parent\",\"target\":" OLD_TASK
		",\"payload\":{\"parent\":{\"repo\":\"acme/widgets\",\"stable_id\":\"epic:e1\"},"
		"\"replace\":false},\"requires_approval\":true,\"rationale\":\"r\"},"
		"{\"operation\":\"add_dependency\",\"target\":" OLD_TASK ",\"payload\":{\"blocker\":"
		"{\"repo\":\"acme/widgets\",\"number\":2}},\"requires_approval\":true,\"rationale\":\"r\"}]");

	(void)state;
	assert_int_equal(json_array_size(json_object_get(b, "fingerprint")), 3);
	later = state_edited(sj, 4, "updated_at", "2025-06-02T00:00:00Z");
	assert_int_equal(pmbot_apply_check_proposal(b, later, cfg, &d), PMBOT_EINVALID);
	expect_stale(&d, "STALE_PLAN", "/fingerprint", "acme/widgets#4 changed since");
	pmbot_diag_list_free(&d);
	pmbot_state_free(later);
	json_decref(sj);
	sj = state_with_creates(full, 1, "github-actions[bot]", "Bot");
	later = state_edited(sj, 2, "updated_at", "2025-06-02T00:00:00Z");
	assert_int_equal(pmbot_apply_check_proposal(b, later, cfg, &d), PMBOT_EINVALID);
	expect_stale(&d, "STALE_PLAN", "/fingerprint", "acme/widgets#2 changed since");
	pmbot_diag_list_free(&d);
	pmbot_state_free(later);
	json_decref(b);
	json_decref(sj);
	json_decref(full);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
}

static void test_check_proposal__what_it_touches_must_have_been_fingerprinted(void **state)
{
	json_t *sj = load_json(FIXTURES "state-initial.json");
	pmbot_state *st = parse_state(sj);
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	json_t *b = proposal_over(st, cfg, "[{\"operation\":\"add_labels\",\"target\":" OLD_TASK
		",\"payload\":{\"labels\":[\"prio:high\"]},\"requires_approval\":true,\"rationale\":\"r\"}]");

	(void)state;
	json_array_clear(json_object_get(b, "fingerprint"));
	rehash(b);
	assert_int_equal(pmbot_apply_check_proposal(b, st, cfg, &d), PMBOT_EINVALID);
	expect_stale(&d, "STALE_PLAN", "/fingerprint", "touches acme/widgets#1, which it did not");
	pmbot_diag_list_free(&d);
	json_decref(b);
	json_decref(sj);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
}

static void test_check_proposal__a_malformed_or_edited_proposal_is_refused_not_read(void **state)
{
	json_t *sj = load_json(FIXTURES "state-initial.json");
	pmbot_state *st = parse_state(sj);
	pmbot_config *cfg = default_config();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	json_t *b = proposal_over(st, cfg, "[{\"operation\":\"add_labels\",\"target\":" OLD_TASK
		",\"payload\":{\"labels\":[\"prio:high\"]},\"requires_approval\":true,\"rationale\":\"r\"}]");
	json_t *e = json_array_get(json_object_get(b, "fingerprint"), 0);
	static const char *const keys[] = { "updated_at", "node_id", "ref" };
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		json_t *was = json_incref(json_object_get(e, keys[i]));

		json_object_del(e, keys[i]);
		rehash(b);
		assert_int_equal(pmbot_apply_check_proposal(b, st, cfg, &d), PMBOT_EINVALID);
		expect_stale(&d, "BUNDLE_INVALID", "/fingerprint", "is not {ref, node_id, updated_at}");
		pmbot_diag_list_free(&d);
		json_object_set_new(e, keys[i], json_integer(5));
		rehash(b);
		assert_int_equal(pmbot_apply_check_proposal(b, st, cfg, &d), PMBOT_EINVALID);
		expect_stale(&d, "BUNDLE_INVALID", "/fingerprint", NULL);
		pmbot_diag_list_free(&d);
		json_object_set_new(e, keys[i], was);
	}
	json_array_append_new(json_object_get(b, "fingerprint"), json_string("acme/widgets#1"));
	rehash(b);
	assert_int_equal(pmbot_apply_check_proposal(b, st, cfg, &d), PMBOT_EINVALID);
	expect_stale(&d, "BUNDLE_INVALID", "/fingerprint", NULL);
	pmbot_diag_list_free(&d);
	json_array_remove(json_object_get(b, "fingerprint"), 1);
	rehash(b);
	assert_int_equal(pmbot_apply_check_proposal(b, st, cfg, &d), PMBOT_OK);
	json_object_set_new(b, "plan_hash", json_string("0123"));
	assert_int_equal(pmbot_apply_check_proposal(b, st, cfg, &d), PMBOT_EINVALID);
	expect_stale(&d, "PLAN_HASH_MISMATCH", "/plan_hash", NULL);
	pmbot_diag_list_free(&d);
	json_object_del(b, "fingerprint");
	assert_int_equal(pmbot_apply_check_proposal(b, st, cfg, &d), PMBOT_EINVALID);
	pmbot_diag_list_free(&d);
	json_decref(b);
	json_decref(sj);
	pmbot_state_free(st);
	pmbot_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apply_check__the_same_plan_hash_is_approved),
		cmocka_unit_test(test_apply_check__a_resumed_plan_is_approved_when_the_rest_is_visibly_applied),
		cmocka_unit_test(test_apply_check__a_missing_changeset_that_is_not_applied_is_stale),
		cmocka_unit_test(test_apply_check__issues_by_untrusted_authors_do_not_prove_anything),
		cmocka_unit_test(test_apply_check__a_changeset_the_approver_never_saw_is_stale),
		cmocka_unit_test(test_apply_check__a_changed_payload_target_or_operation_is_stale),
		cmocka_unit_test(test_apply_check__a_new_conflict_is_stale_a_known_one_is_not),
		cmocka_unit_test(test_apply_check__an_edited_plan_file_is_refused),
		cmocka_unit_test(test_apply_check__refuses_what_is_not_a_bundle),
		cmocka_unit_test(test_apply_check__in_two_steps_decides_as_in_one),
		cmocka_unit_test(test_apply_check__in_two_steps_the_text_is_read_for_a_resume_only),
		cmocka_unit_test(test_apply_check__a_resume_after_any_prefix_is_approved_and_nothing_else),
		cmocka_unit_test(test_is_applied__labels_compare_without_case_as_on_github),
		cmocka_unit_test(test_is_applied__titles_and_bodies_compare_byte_for_byte),
		cmocka_unit_test(test_is_applied__an_issue_type_compares_without_case_as_on_github),
		cmocka_unit_test(test_is_applied__an_ambiguous_target_is_never_applied),
		cmocka_unit_test(test_is_applied__a_create_counts_once_a_trusted_marker_exists),
		cmocka_unit_test(test_is_applied__relationships_follow_the_state),
		cmocka_unit_test(test_is_applied__project_items_and_values),
		cmocka_unit_test(test_is_applied__malformed_changesets_are_not_applied),
		cmocka_unit_test(test_check_proposal__a_fresh_proposal_may_run),
		cmocka_unit_test(test_check_proposal__an_issue_named_by_stable_id_and_edited_since_is_stale),
		cmocka_unit_test(test_check_proposal__a_parent_or_blocker_edited_since_is_stale),
		cmocka_unit_test(test_check_proposal__what_it_touches_must_have_been_fingerprinted),
		cmocka_unit_test(test_check_proposal__a_malformed_or_edited_proposal_is_refused_not_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
