#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "helpers/tmpdir.h"
#include "pmbot/plan.h"
#include "pmbot/fs.h"
#include "pmbot/banned.h"

/*
 * The plan loader (src/plan/bundle.c): a valid ChangesetBundle v1, then the
 * same plan damaged one member at a time at every level, each refused with
 * PLAN_INVALID at that member's JSON Pointer.
 */

#define HASH64 "89abcdef0123456789abcdef0123456789abcdef0123456789abcdef01234567"

static const char valid[] =
	"{\"schema_version\":\"changeset_bundle/v1\",\"bundle_id\":\"bundle-0123456789abcdef\","
	"\"plan_hash\":\"" HASH64 "\",\"target\":\"acme/widgets\","
	"\"source\":{\"kind\":\"report\",\"commit\":\"0123456789abcdef0123456789abcdef01234567\","
	"\"config_blob\":\"abc\",\"backend\":{\"kind\":\"file\",\"state\":\".pm-bot/state.json\"},"
	"\"reports\":[{\"path\":\"plans/q4.md\",\"blob\":\"def\"}]},"
	"\"changesets\":[{\"changeset_id\":\"cs-0001\",\"idempotency_key\":\"k1\","
	"\"operation\":\"create_issue\",\"target\":{\"repo\":\"acme/widgets\",\"stable_id\":\"epic:x\"},"
	"\"payload\":{\"title\":\"X\"},\"requires_approval\":true,\"status\":\"planned\"},"
	"{\"changeset_id\":\"cs-0002\",\"idempotency_key\":\"k2\",\"operation\":\"add_labels\","
	"\"target\":{\"repo\":\"acme/widgets\",\"number\":4},\"payload\":{\"labels\":[\"a\"]},"
	"\"before\":{},\"after\":{},\"requires_approval\":false,\"status\":\"planned\"}],"
	"\"fingerprint\":[{\"ref\":\"acme/widgets#4\",\"node_id\":\"I_4\","
	"\"updated_at\":\"2026-11-22T12:00:09Z\"}],"
	"\"conflicts\":[{\"stable_id\":\"task:y\",\"ref\":\"acme/widgets#5\"}],"
	"\"orphaned\":[],\"diagnostics\":[],\"summary\":{\"total\":2}}";

static json_t *load_valid(void)
{
	json_t *b = json_loads(valid, JSON_REJECT_DUPLICATES, NULL);

	assert_non_null(b);
	return b;
}

/* The member at `ptr` ("/changesets/0/target"), or NULL; *parent and *last set for a change. */
static json_t *walk(json_t *root, const char *ptr, json_t **parent, char *last, size_t last_size)
{
	char part[64];
	json_t *cur = root;

	*parent = NULL;
	while (*ptr == '/') {
		size_t n = strcspn(ptr + 1, "/");

		assert_true(n < sizeof(part));
		memcpy(part, ptr + 1, n);
		part[n] = '\0';
		ptr += n + 1;
		*parent = cur;
		snprintf(last, last_size, "%s", part);
		cur = json_is_array(cur) ? json_array_get(cur, strtoul(part, NULL, 10)) :
			json_object_get(cur, part);
	}
	return cur;
}

/* Set the member at `ptr` to the JSON `value`, or delete it when `value` is NULL. */
static void mutate(json_t *root, const char *ptr, const char *value)
{
	json_t *parent, *v = NULL;
	char last[64];

	walk(root, ptr, &parent, last, sizeof(last));
	assert_non_null(parent);
	if (value)
		assert_non_null(v = json_loads(value, JSON_DECODE_ANY, NULL));
	if (json_is_array(parent)) {
		if (v)
			assert_int_equal(json_array_set_new(parent, strtoul(last, NULL, 10), v), 0);
		else
			assert_int_equal(json_array_remove(parent, strtoul(last, NULL, 10)), 0);
	} else if (v) {
		assert_int_equal(json_object_set_new(parent, last, v), 0);
	} else {
		assert_int_equal(json_object_del(parent, last), 0);
	}
}

static void test_bundle__a_valid_plan_is_taken_and_read_through_typed_accessors(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	json_t *b = load_valid();

	(void)state;
	assert_int_equal(pmbot_bundle_check(b, &d), PMBOT_OK);
	assert_int_equal(d.count, 0);
	assert_string_equal(pmbot_bundle_plan_hash(b), HASH64);
	assert_string_equal(pmbot_bundle_target(b), "acme/widgets");
	assert_string_equal(pmbot_bundle_source_kind(b), "report");
	assert_string_equal(pmbot_bundle_source_commit(b), "0123456789abcdef0123456789abcdef01234567");
	assert_string_equal(pmbot_bundle_backend_kind(b), "file");
	assert_string_equal(pmbot_bundle_backend_state(b), ".pm-bot/state.json");
	assert_int_equal(pmbot_bundle_report_count(b), 1);
	assert_string_equal(pmbot_bundle_report_path(b, 0), "plans/q4.md");
	assert_null(pmbot_bundle_report_path(b, 1));
	json_decref(b);
}

static void test_bundle__optional_members_may_be_absent_or_null(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	json_t *b = load_valid();

	(void)state;
	/* A proposal: no commit, backend or reports; null commit; fewer summary keys. */
	mutate(b, "/source", "{\"kind\":\"proposal\",\"commit\":null}");
	mutate(b, "/conflicts", NULL);
	mutate(b, "/orphaned", NULL);
	mutate(b, "/diagnostics", NULL);
	mutate(b, "/summary", NULL);
	mutate(b, "/changesets/1/before", NULL);
	assert_int_equal(pmbot_bundle_check(b, &d), PMBOT_OK);
	assert_null(pmbot_bundle_source_commit(b));
	assert_null(pmbot_bundle_backend_kind(b));
	assert_null(pmbot_bundle_backend_state(b));
	assert_int_equal(pmbot_bundle_report_count(b), 0);
	json_decref(b);
}

struct damage {
	const char *ptr;      /* the member changed */
	const char *value;    /* its new JSON, NULL: deleted */
	const char *at;       /* the pointer the diagnostic must name */
	const char *says;     /* part of its message */
};

static const struct damage damages[] = {
	/* the top level */
	{ "/schema_version", NULL, "/schema_version", "changeset_bundle/v1" },
	{ "/schema_version", "\"changeset_bundle/v2\"", "/schema_version", "changeset_bundle/v1" },
	{ "/plan_hash", NULL, "/plan_hash", "must be a non-empty string (it is missing)" },
	{ "/plan_hash", "64", "/plan_hash", "not an integer" },
	{ "/plan_hash", "\"ABC\"", "/plan_hash", "64 lower-case hex digits" },
	{ "/plan_hash", "\"" HASH64 "0\"", "/plan_hash", "64 lower-case hex digits" },
	{ "/target", NULL, "/target", "it is missing" },
	{ "/target", "[\"acme/widgets\"]", "/target", "not an array" },
	{ "/target", "\"widgets\"", "/target", "OWNER/NAME" },
	{ "/target", "\"acme/wid gets\"", "/target", "OWNER/NAME" },
	{ "/target", "\"acme/widgets/x\"", "/target", "OWNER/NAME" },
	/* source */
	{ "/source", NULL, "/source", "must be an object (it is missing)" },
	{ "/source", "\"file\"", "/source", "not a string" },
	{ "/source/kind", "1", "/source/kind", "must be a string" },
	{ "/source/commit", "1", "/source/commit", "a string or null" },
	{ "/source/config_blob", "false", "/source/config_blob", "not a boolean" },
	{ "/source/backend", "\"file\"", "/source/backend", "must be an object" },
	{ "/source/backend/kind", NULL, "/source/backend/kind", "it is missing" },
	{ "/source/backend/kind", "\"s3\"", "/source/backend/kind", "\"file\" or \"github\"" },
	{ "/source/backend/state", "7", "/source/backend/state", "must be a string" },
	{ "/source/reports", "{}", "/source/reports", "must be an array" },
	{ "/source/reports/0", "\"plans/q4.md\"", "/source/reports/0", "must be an object" },
	{ "/source/reports/0/path", NULL, "/source/reports/0/path", "it is missing" },
	{ "/source/reports/0/path", "\"\"", "/source/reports/0/path", "non-empty string" },
	{ "/source/reports/0/blob", "[]", "/source/reports/0/blob", "must be a string" },
	/* changesets */
	{ "/changesets", NULL, "/changesets", "must be an array (it is missing)" },
	{ "/changesets", "{}", "/changesets", "not an object" },
	{ "/changesets/0", "null", "/changesets/0", "must be an object, not null" },
	{ "/changesets/0/changeset_id", NULL, "/changesets/0/changeset_id", "it is missing" },
	{ "/changesets/1/idempotency_key", "\"\"", "/changesets/1/idempotency_key", "non-empty" },
	{ "/changesets/0/operation", NULL, "/changesets/0/operation", "it is missing" },
	{ "/changesets/0/operation", "\"delete_repository\"", "/changesets/0/operation",
	  "one of pm-bot's operations" },
	{ "/changesets/0/status", "2", "/changesets/0/status", "not an integer" },
	{ "/changesets/0/requires_approval", "\"yes\"", "/changesets/0/requires_approval",
	  "must be a boolean, not a string" },
	{ "/changesets/0/target", NULL, "/changesets/0/target", "must be an object (it is missing)" },
	{ "/changesets/0/target/repo", NULL, "/changesets/0/target/repo", "it is missing" },
	{ "/changesets/0/target/stable_id", NULL, "/changesets/0/target", "stable_id or number" },
	{ "/changesets/0/target/stable_id", "\"\"", "/changesets/0/target/stable_id", "non-empty" },
	{ "/changesets/1/target/number", "0", "/changesets/1/target/number", "at least 1" },
	{ "/changesets/1/target/number", "\"4\"", "/changesets/1/target/number", "must be an integer" },
	{ "/changesets/0/payload", NULL, "/changesets/0/payload", "must be an object (it is missing)" },
	{ "/changesets/0/payload", "[]", "/changesets/0/payload", "not an array" },
	{ "/changesets/1/before", "1", "/changesets/1/before", "must be an object" },
	{ "/changesets/1/after", "\"x\"", "/changesets/1/after", "must be an object" },
	/* fingerprint: the entry without updated_at once crashed apply */
	{ "/fingerprint", NULL, "/fingerprint", "must be an array (it is missing)" },
	{ "/fingerprint/0", "\"acme/widgets#4\"", "/fingerprint/0", "must be an object" },
	{ "/fingerprint/0/updated_at", NULL, "/fingerprint/0/updated_at",
	  "must be a string (it is missing)" },
	{ "/fingerprint/0/updated_at", "1700000000", "/fingerprint/0/updated_at", "not an integer" },
	{ "/fingerprint/0/node_id", NULL, "/fingerprint/0/node_id", "it is missing" },
	{ "/fingerprint/0/ref", "\"\"", "/fingerprint/0/ref", "non-empty" },
	/* the rest */
	{ "/conflicts", "\"none\"", "/conflicts", "must be an array" },
	{ "/conflicts/0", "[]", "/conflicts/0", "must be an object" },
	{ "/conflicts/0/stable_id", NULL, "/conflicts/0/stable_id", "it is missing" },
	{ "/orphaned", "{}", "/orphaned", "must be an array" },
	{ "/diagnostics", "0", "/diagnostics", "must be an array" },
	{ "/summary", "[]", "/summary", "must be an object" },
};

static void test_bundle__each_damage_is_plan_invalid_at_its_pointer(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(damages) / sizeof(damages[0]); i++) {
		const struct damage *x = &damages[i];
		pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
		json_t *b = load_valid();

		mutate(b, x->ptr, x->value);
		if (pmbot_bundle_check(b, &d) != PMBOT_EINVALID)
			fail_msg("%s = %s was taken", x->ptr, x->value ? x->value : "(deleted)");
		if (d.count != 1 || strcmp(d.items[0].code, "PLAN_INVALID") ||
		    strcmp(d.items[0].path, x->at) || !strstr(d.items[0].message, x->says))
			fail_msg("%s = %s: %zu diagnostics, first %s %s: %s (want %s: ...%s...)", x->ptr,
				x->value ? x->value : "(deleted)", d.count,
				d.count ? d.items[0].code : "-", d.count ? d.items[0].path : "-",
				d.count ? d.items[0].message : "-", x->at, x->says);
		assert_int_equal(d.items[0].severity, PMBOT_SEV_ERROR);
		pmbot_diag_list_free(&d);
		json_decref(b);
	}
}

static void test_bundle__not_an_object_or_not_json_is_refused(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	json_t *out = (json_t *)1;
	static const char dup[] = "{\"plan_hash\":\"a\",\"plan_hash\":\"b\"}";

	(void)state;
	assert_int_equal(pmbot_bundle_parse(&out, "[]", 2, &d), PMBOT_EINVALID);
	assert_null(out);
	assert_string_equal(d.items[0].path, "");
	assert_non_null(strstr(d.items[0].message, "the plan must be a JSON object"));
	pmbot_diag_list_free(&d);
	assert_int_equal(pmbot_bundle_parse(&out, "{\"a\":\n", 6, &d), PMBOT_EINVALID);
	assert_string_equal(d.items[0].code, "PLAN_INVALID");
	assert_int_equal(d.items[0].line, 2);
	assert_non_null(strstr(d.items[0].message, "not JSON"));
	pmbot_diag_list_free(&d);
	/* Duplicate keys: which one a reader takes is not defined, so neither is. */
	assert_int_equal(pmbot_bundle_parse(&out, dup, strlen(dup), &d), PMBOT_EINVALID);
	assert_non_null(strstr(d.items[0].message, "not JSON"));
	pmbot_diag_list_free(&d);
	assert_int_equal(pmbot_bundle_parse(&out, valid, strlen(valid), &d), PMBOT_OK);
	assert_non_null(out);
	assert_int_equal(d.count, 0);
	json_decref(out);
}

static void test_bundle__many_faults_are_listed_up_to_twenty_then_counted(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	json_t *b = load_valid(), *cs = json_object_get(b, "changesets");
	size_t i;

	(void)state;
	for (i = 0; i < 30; i++)
		assert_int_equal(json_array_append_new(cs, json_integer(1)), 0);
	assert_int_equal(pmbot_bundle_check(b, &d), PMBOT_EINVALID);
	assert_int_equal(d.count, 21);
	assert_string_equal(d.items[0].path, "/changesets/2");
	assert_string_equal(d.items[19].path, "/changesets/21");
	assert_non_null(strstr(d.items[20].message, "and 10 more faults"));
	pmbot_diag_list_free(&d);
	json_decref(b);
}

static void test_bundle__load_names_the_file_and_tells_a_missing_one(void **state)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	char dir[256], path[320];
	json_t *out = NULL, *b = load_valid();
	char *text;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/pmbot-bundle-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/missing.json", dir);
	assert_int_equal(pmbot_bundle_load(&out, path, &d), PMBOT_ENOTFOUND);
	assert_null(out);
	assert_string_equal(d.items[0].code, "PLAN_READ");
	assert_string_equal(d.items[0].file, path);
	pmbot_diag_list_free(&d);

	snprintf(path, sizeof(path), "%s/p.json", dir);
	mutate(b, "/fingerprint/0/updated_at", NULL);
	assert_non_null(text = json_dumps(b, JSON_COMPACT));
	assert_int_equal(pmbot_fs_write_atomic(path, text, strlen(text)), 0);
	assert_int_equal(pmbot_bundle_load(&out, path, &d), PMBOT_EINVALID);
	assert_null(out);
	assert_string_equal(d.items[0].file, path);
	assert_string_equal(d.items[0].path, "/fingerprint/0/updated_at");
	pmbot_diag_list_free(&d);
	free(text);

	assert_int_equal(pmbot_fs_write_atomic(path, valid, strlen(valid)), 0);
	assert_int_equal(pmbot_bundle_load(&out, path, &d), PMBOT_OK);
	assert_string_equal(pmbot_bundle_plan_hash(out), HASH64);
	json_decref(out);
	json_decref(b);
	test_remove_tree(dir);
}

/* --detailed-exitcode's rule: changes are drift, and so is a conflict that stands. */
static void test_bundle__drift_is_a_changeset_or_a_standing_conflict(void **state)
{
	json_t *b;

	(void)state;
	assert_int_equal(pmbot_bundle_has_drift(NULL), 0);
	b = json_pack("{s:[], s:[]}", "changesets", "conflicts");
	assert_non_null(b);
	assert_int_equal(pmbot_bundle_has_drift(b), 0);
	json_decref(b);

	b = json_pack("{s:[{s:s}], s:[]}", "changesets", "id", "cs-0001", "conflicts");
	assert_non_null(b);
	assert_int_equal(pmbot_bundle_has_drift(b), 1);
	json_decref(b);

	/* Nothing to change, yet GitHub and the plan disagree: still drift. */
	b = json_pack("{s:[], s:[{s:s}]}", "changesets", "conflicts", "key", "task-1");
	assert_non_null(b);
	assert_int_equal(pmbot_bundle_has_drift(b), 1);
	json_decref(b);

	/* A plan without the lists has nothing to show. */
	b = json_pack("{s:s}", "plan_hash", HASH64);
	assert_non_null(b);
	assert_int_equal(pmbot_bundle_has_drift(b), 0);
	json_decref(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bundle__a_valid_plan_is_taken_and_read_through_typed_accessors),
		cmocka_unit_test(test_bundle__optional_members_may_be_absent_or_null),
		cmocka_unit_test(test_bundle__each_damage_is_plan_invalid_at_its_pointer),
		cmocka_unit_test(test_bundle__not_an_object_or_not_json_is_refused),
		cmocka_unit_test(test_bundle__many_faults_are_listed_up_to_twenty_then_counted),
		cmocka_unit_test(test_bundle__load_names_the_file_and_tells_a_missing_one),
		cmocka_unit_test(test_bundle__drift_is_a_changeset_or_a_standing_conflict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
