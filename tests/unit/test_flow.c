#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pmbot/apply.h"
#include "pmbot/json.h"
#include "../../src/apply/apply_int.h"
#include "pmbot/banned.h"

#define BUNDLE "tests/fixtures/bundles-apply/full.json"

static json_t *load(const char *path)
{
	json_error_t e;
	json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &e);

	if (!j)
		fail_msg("%s:%d: %s", path, e.line, e.text);
	return j;
}

static pmbot_config *config(void)
{
	pmbot_config *cfg = NULL;

	assert_int_equal(pmbot_config_default(&cfg, "acme/widgets"), PMBOT_OK);
	return cfg;
}

static json_t *compile_fixture(void)
{
	pmbot_config *cfg = config();
	json_t *bundle = load(BUNDLE), *flow = NULL;

	assert_int_equal(pmbot_flow_compile(&flow, bundle, cfg, BUNDLE), PMBOT_OK);
	json_decref(bundle);
	pmbot_config_free(cfg);
	return flow;
}

static char *canonical(const json_t *j)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_json_canonical(&b, j), 0);
	return pmbot_buf_detach(&b, NULL);
}

/* Validate `flow`; expect exactly the diagnostic `code` at `path` (and maybe others). */
static void expect_invalid(const json_t *flow, const char *code, const char *path)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	size_t i;

	assert_int_equal(pmbot_flow_validate(flow, &d), PMBOT_EINVALID);
	for (i = 0; i < d.count; i++)
		if (!strcmp(d.items[i].code, code) && !strcmp(d.items[i].path, path))
			break;
	if (i == d.count) {
		for (i = 0; i < d.count; i++)
			print_message("have %s %s: %s\n", d.items[i].code, d.items[i].path,
				d.items[i].message);
		fail_msg("no %s at %s", code, path);
	}
	pmbot_diag_list_free(&d);
}

static void expect_valid(const json_t *flow)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	size_t i;
	int rc = pmbot_flow_validate(flow, &d);

	for (i = 0; i < d.count; i++)
		print_message("%s %s: %s\n", d.items[i].code, d.items[i].path, d.items[i].message);
	assert_int_equal(rc, PMBOT_OK);
	assert_int_equal(d.count, 0);
	pmbot_diag_list_free(&d);
}

static json_t *node(json_t *flow, size_t i)
{
	return json_array_get(json_object_get(json_object_get(flow, "graph"), "nodes"), i);
}

static int setup(void **state)
{
	(void)state;
	setenv("PMBOT_NOW", "2025-03-04T05:06:07Z", 1);
	return 0;
}

static void test_flow_compile__one_node_per_changeset_chained_by_success_edges(void **state)
{
	json_t *bundle = load(BUNDLE), *flow = compile_fixture();
	json_t *nodes = json_object_get(json_object_get(flow, "graph"), "nodes");
	json_t *edges = json_object_get(json_object_get(flow, "graph"), "edges");
	json_t *cs = json_object_get(bundle, "changesets");
	size_t i;

	(void)state;
	assert_int_equal(json_array_size(nodes), json_array_size(cs));
	assert_int_equal(json_array_size(edges), json_array_size(cs) - 1);
	for (i = 0; i < json_array_size(cs); i++) {
		json_t *c = json_array_get(cs, i), *n = json_array_get(nodes, i), *with;
		char type[64];

		assert_string_equal(json_string_value(json_object_get(n, "id")),
			json_string_value(json_object_get(c, "changeset_id")));
		snprintf(type, sizeof(type), "github.%s",
			json_string_value(json_object_get(c, "operation")));
		assert_string_equal(json_string_value(json_object_get(n, "type")), type);
		with = json_object_get(n, "with");
		assert_true(pmbot_json_equal(json_object_get(with, "target"), json_object_get(c, "target")));
		assert_true(pmbot_json_equal(json_object_get(with, "payload"), json_object_get(c, "payload")));
		assert_string_equal(json_string_value(json_object_get(with, "idempotency_key")),
			json_string_value(json_object_get(c, "idempotency_key")));
		if (i > 0) {
			json_t *e = json_array_get(edges, i - 1);

			assert_string_equal(json_string_value(json_object_get(e, "from")),
				json_string_value(json_object_get(json_array_get(cs, i - 1), "changeset_id")));
			assert_string_equal(json_string_value(json_object_get(e, "to")),
				json_string_value(json_object_get(c, "changeset_id")));
			assert_string_equal(json_string_value(json_object_get(e, "on")), "success");
		}
	}
	assert_string_equal(json_string_value(json_object_get(flow, "version")), "1.0.0");
	assert_string_equal(json_string_value(json_object_get(json_object_get(flow, "metadata"),
		"source_file")), BUNDLE);
	assert_string_equal(json_string_value(json_object_get(json_object_get(flow, "metadata"),
		"plan_hash")), json_string_value(json_object_get(bundle, "plan_hash")));
	expect_valid(flow);
	json_decref(flow);
	json_decref(bundle);
}

static void test_flow_compile__retries_only_operations_safe_to_repeat(void **state)
{
	json_t *flow = compile_fixture();
	json_t *nodes = json_object_get(json_object_get(flow, "graph"), "nodes"), *n;
	size_t i, creates = 0, others = 0;

	(void)state;
	json_array_foreach(nodes, i, n) {
		json_int_t max = json_integer_value(json_object_get(json_object_get(n, "retry"), "max"));

		if (!strcmp(json_string_value(json_object_get(n, "type")), "github.create_issue")) {
			assert_int_equal(max, 0);
			creates++;
		} else {
			assert_true(max > 0);
			others++;
		}
	}
	assert_int_equal(creates, 3);
	assert_true(others > 0);
	json_decref(flow);
}

static void test_flow_compile__same_bundle_same_bytes_but_for_generated_at(void **state)
{
	json_t *a, *b;
	char *ca, *cb;

	(void)state;
	a = compile_fixture();
	b = compile_fixture();
	ca = canonical(a);
	cb = canonical(b);
	assert_string_equal(ca, cb);
	free(cb);
	setenv("PMBOT_NOW", "2026-01-01T00:00:00Z", 1);
	json_decref(b);
	b = compile_fixture();
	assert_string_equal(json_string_value(json_object_get(json_object_get(b, "metadata"),
		"generated_at")), "2026-01-01T00:00:00Z");
	json_object_del(json_object_get(a, "metadata"), "generated_at");
	json_object_del(json_object_get(b, "metadata"), "generated_at");
	free(ca);
	ca = canonical(a);
	cb = canonical(b);
	assert_string_equal(ca, cb);
	free(ca);
	free(cb);
	json_decref(a);
	json_decref(b);
	setenv("PMBOT_NOW", "2025-03-04T05:06:07Z", 1);
}

static void test_flow_compile__clock_gives_valid_utc_time_without_PMBOT_NOW(void **state)
{
	json_t *flow;

	(void)state;
	unsetenv("PMBOT_NOW");
	flow = compile_fixture();
	expect_valid(flow);
	json_decref(flow);
	setenv("PMBOT_NOW", "2025-03-04T05:06:07Z", 1);
}

static void test_flow_compile__refuses_malformed_PMBOT_NOW(void **state)
{
	pmbot_config *cfg = config();
	json_t *bundle = load(BUNDLE), *flow = (json_t *)&flow;

	(void)state;
	setenv("PMBOT_NOW", "yesterday", 1);
	assert_int_equal(pmbot_flow_compile(&flow, bundle, cfg, NULL), PMBOT_ERROR);
	assert_null(flow);
	setenv("PMBOT_NOW", "2025-03-04T05:06:07+02:00", 1);
	assert_int_equal(pmbot_flow_compile(&flow, bundle, cfg, NULL), PMBOT_ERROR);
	setenv("PMBOT_NOW", "2025-03-04T05:06:07Z", 1);
	json_decref(bundle);
	pmbot_config_free(cfg);
}

static void test_flow_compile__rejects_a_bundle_without_bundle_id_or_changesets(void **state)
{
	pmbot_config *cfg = config();
	json_t *bundle = load(BUNDLE), *flow = NULL;

	(void)state;
	json_object_del(bundle, "bundle_id");
	assert_int_equal(pmbot_flow_compile(&flow, bundle, cfg, NULL), PMBOT_EINVALID);
	assert_null(flow);
	json_object_set_new(bundle, "bundle_id", json_string("bundle-x"));
	json_object_set_new(bundle, "changesets", json_string("no"));
	assert_int_equal(pmbot_flow_compile(&flow, bundle, cfg, NULL), PMBOT_EINVALID);
	json_decref(bundle);
	pmbot_config_free(cfg);
}

static void test_flow_compile__unknown_operation_compiles_without_retry(void **state)
{
	pmbot_config *cfg = config();
	json_t *bundle = load(BUNDLE), *flow = NULL;

	(void)state;
	json_object_set_new(json_array_get(json_object_get(bundle, "changesets"), 3), "operation",
		json_string("delete_repository"));
	assert_int_equal(pmbot_flow_compile(&flow, bundle, cfg, NULL), PMBOT_OK);
	assert_string_equal(json_string_value(json_object_get(node(flow, 3), "type")),
		"github.delete_repository");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(node(flow, 3), "retry"),
		"max")), 0);
	expect_valid(flow);
	json_decref(flow);
	json_decref(bundle);
	pmbot_config_free(cfg);
}

static void test_flow_compile__does_not_share_values_with_the_bundle(void **state)
{
	pmbot_config *cfg = config();
	json_t *bundle = load(BUNDLE), *flow = NULL, *payload;

	(void)state;
	assert_int_equal(pmbot_flow_compile(&flow, bundle, cfg, NULL), PMBOT_OK);
	payload = json_object_get(json_array_get(json_object_get(bundle, "changesets"), 3), "payload");
	json_object_set_new(payload, "title", json_string("changed afterwards"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
		node(flow, 3), "with"), "payload"), "title")), "[task] Renamed");
	json_decref(flow);
	json_decref(bundle);
	pmbot_config_free(cfg);
}

/*
 * The executor's flow is the same flow, byte for byte, holding the
 * bundle's own targets and payloads: no copy of the plan at the peak.
 */
static void test_flow_compile_shared__same_bytes_with_the_bundles_own_payloads(void **state)
{
	pmbot_config *cfg = config();
	json_t *bundle = load(BUNDLE), *flow = NULL, *shared = NULL;
	const json_t *cs;
	char *a, *b;
	size_t i;

	(void)state;
	assert_int_equal(pmbot_flow_compile(&flow, bundle, cfg, NULL), PMBOT_OK);
	assert_int_equal(pmbot_flow_compile_shared(&shared, bundle, cfg), PMBOT_OK);
	a = canonical(flow);
	b = canonical(shared);
	assert_string_equal(a, b);
	json_array_foreach(json_object_get(bundle, "changesets"), i, cs) {
		const json_t *with = json_object_get(node(shared, i), "with");

		assert_ptr_equal(json_object_get(with, "payload"), json_object_get(cs, "payload"));
		assert_ptr_equal(json_object_get(with, "target"), json_object_get(cs, "target"));
		assert_ptr_not_equal(json_object_get(json_object_get(node(flow, i), "with"), "payload"),
			json_object_get(cs, "payload"));
	}
	assert_true(i > 3);
	free(a);
	free(b);
	json_decref(flow);
	json_decref(shared);
	json_decref(bundle);
	pmbot_config_free(cfg);
}

static void test_flow_validate__refuses_another_major_version(void **state)
{
	json_t *flow = compile_fixture();

	(void)state;
	json_object_set_new(flow, "version", json_string("2.0.0"));
	expect_invalid(flow, "FLOW_VERSION", "/version");
	json_object_set_new(flow, "version", json_string("1.0"));
	expect_invalid(flow, "FLOW_VERSION", "/version");
	json_object_set_new(flow, "version", json_string("1.4.2"));
	expect_valid(flow);
	json_decref(flow);
}

static void test_flow_validate__ids_must_match_the_pattern_and_be_unique(void **state)
{
	json_t *flow = compile_fixture();

	(void)state;
	json_object_set_new(node(flow, 0), "id", json_string("cs 1"));
	expect_invalid(flow, "FLOW_ID", "/graph/nodes/0/id");
	json_object_set_new(node(flow, 0), "id", json_string("cs-0002"));
	expect_invalid(flow, "FLOW_DUPLICATE_ID", "/graph/nodes/1/id");
	json_decref(flow);
	flow = compile_fixture();
	json_object_set_new(json_object_get(flow, "flow"), "name", json_string("pm-bot/apply"));
	expect_invalid(flow, "FLOW_ID", "/flow/name");
	json_decref(flow);
}

static void test_flow_validate__needs_at_least_one_node(void **state)
{
	json_t *flow = compile_fixture(), *graph = json_object_get(flow, "graph");

	(void)state;
	json_object_set_new(graph, "nodes", json_array());
	json_object_set_new(graph, "edges", json_array());
	expect_invalid(flow, "FLOW_NO_NODES", "/graph/nodes");
	json_decref(flow);
}

static void test_flow_validate__edges_must_name_nodes_and_a_known_transition(void **state)
{
	json_t *flow = compile_fixture();
	json_t *edges = json_object_get(json_object_get(flow, "graph"), "edges");

	(void)state;
	json_object_set_new(json_array_get(edges, 0), "to", json_string("cs-9999"));
	expect_invalid(flow, "FLOW_EDGE_REF", "/graph/edges/0/to");
	json_object_set_new(json_array_get(edges, 0), "to", json_string("cs-0002"));
	json_object_set_new(json_array_get(edges, 1), "on", json_string("always"));
	expect_invalid(flow, "FLOW_EDGE_ON", "/graph/edges/1/on");
	json_object_set_new(json_array_get(edges, 1), "on", json_string("failure"));
	expect_valid(flow);
	json_decref(flow);
}

static void test_flow_validate__integers_must_lie_in_0_to_2_pow_31_minus_1(void **state)
{
	json_t *flow = compile_fixture();
	json_t *retry = json_object_get(node(flow, 1), "retry");

	(void)state;
	json_object_set_new(node(flow, 0), "timeout_ms", json_integer(-1));
	expect_invalid(flow, "FLOW_RANGE", "/graph/nodes/0/timeout_ms");
	json_object_set_new(node(flow, 0), "timeout_ms", json_integer(2147483647));
	expect_valid(flow);
	json_object_set_new(node(flow, 0), "timeout_ms", json_integer(2147483648LL));
	expect_invalid(flow, "FLOW_RANGE", "/graph/nodes/0/timeout_ms");
	json_object_set_new(node(flow, 0), "timeout_ms", json_integer(0));
	json_object_set_new(retry, "backoff_ms", json_real(1.0));
	expect_invalid(flow, "FLOW_TYPE", "/graph/nodes/1/retry/backoff_ms");
	json_object_set_new(retry, "backoff_ms", json_integer(0));
	json_object_set_new(json_object_get(flow, "flow"), "timeout_ms", json_integer(-5));
	expect_invalid(flow, "FLOW_RANGE", "/flow/timeout_ms");
	json_decref(flow);
}

static void test_flow_validate__generated_at_must_be_rfc3339_utc(void **state)
{
	static const char *const bad[] = {
		"2025-03-04 05:06:07Z", "2025-03-04T05:06:07+02:00", "2025-02-29T00:00:00Z",
		"2025-03-04T24:00:00Z", "2025-03-04T05:06:07", "2025-03-04T05:06:07.Z", "nope"
	};
	static const char *const good[] = {
		"2024-02-29T00:00:00Z", "2025-03-04T05:06:07.511Z", "2025-03-04T05:06:07+00:00",
		"2016-12-31T23:59:60Z"
	};
	json_t *flow = compile_fixture(), *meta = json_object_get(flow, "metadata");
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object_set_new(meta, "generated_at", json_string(bad[i]));
		expect_invalid(flow, "FLOW_TIMESTAMP", "/metadata/generated_at");
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		json_object_set_new(meta, "generated_at", json_string(good[i]));
		expect_valid(flow);
	}
	json_decref(flow);
}

static void test_flow_validate__names_the_cycle(void **state)
{
	json_t *flow = compile_fixture();
	json_t *edges = json_object_get(json_object_get(flow, "graph"), "edges");
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	const pmbot_diag *c;

	(void)state;
	json_array_append_new(edges, json_pack("{s:s, s:s, s:s}", "from", "cs-0004", "to",
		"cs-0002", "on", "failure"));
	assert_int_equal(pmbot_flow_validate(flow, &d), PMBOT_EINVALID);
	assert_non_null(c = pmbot_diag_list_find(&d, "FLOW_CYCLE"));
	assert_string_equal(c->path, "/graph/edges");
	assert_non_null(strstr(c->message, "cs-0002 -> cs-0003 -> cs-0004 -> cs-0002"));
	pmbot_diag_list_free(&d);
	json_decref(flow);
}

static void test_flow_validate__self_loop_is_a_cycle(void **state)
{
	json_t *flow = compile_fixture();
	json_t *edges = json_object_get(json_object_get(flow, "graph"), "edges");

	(void)state;
	json_array_append_new(edges, json_pack("{s:s, s:s, s:s}", "from", "cs-0005", "to",
		"cs-0005", "on", "success"));
	expect_invalid(flow, "FLOW_CYCLE", "/graph/edges");
	json_decref(flow);
}

static void test_flow_validate__refuses_retry_on_a_create(void **state)
{
	json_t *flow = compile_fixture();

	(void)state;
	json_object_set_new(json_object_get(node(flow, 0), "retry"), "max", json_integer(1));
	expect_invalid(flow, "FLOW_RETRY_UNSAFE", "/graph/nodes/0/retry/max");
	json_object_set_new(json_object_get(node(flow, 0), "retry"), "max", json_integer(0));
	json_object_set_new(node(flow, 3), "type", json_string("http.post"));
	expect_invalid(flow, "FLOW_RETRY_UNSAFE", "/graph/nodes/3/retry/max");
	json_decref(flow);
}

static void test_flow_validate__empty_strings_are_refused_outside_opaque_members(void **state)
{
	json_t *flow = compile_fixture();

	(void)state;
	/* `with` and constants.policy are opaque: an empty body is a legal payload. */
	json_object_set_new(json_object_get(json_object_get(node(flow, 4), "with"), "payload"),
		"body", json_string(""));
	json_object_set_new(json_object_get(json_object_get(flow, "constants"), "policy"),
		"templates", json_string(""));
	expect_valid(flow);
	json_object_set_new(json_object_get(flow, "metadata"), "source_file", json_string(""));
	expect_invalid(flow, "FLOW_EMPTY_STRING", "/metadata/source_file");
	json_object_set_new(json_object_get(flow, "metadata"), "source_file", json_string("x"));
	json_object_set_new(json_object_get(flow, "metadata"), "note", json_string(""));
	expect_invalid(flow, "FLOW_EMPTY_STRING", "/metadata/note");
	json_decref(flow);
}

static void test_flow_validate__reports_every_missing_member(void **state)
{
	json_t *flow = compile_fixture();
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;

	(void)state;
	json_object_del(flow, "inputs_schema");
	json_object_del(json_object_get(flow, "constants"), "policyRef");
	json_object_set_new(flow, "graph", json_pack("{s:[{s:s, s:s, s:{}, s:i, s:{s:i, s:i}}]}",
		"nodes", "id", "a", "type", "t", "with", "timeout_ms", 0, "retry", "max", 0,
		"backoff_ms", 0));
	assert_int_equal(pmbot_flow_validate(flow, &d), PMBOT_EINVALID);
	assert_int_equal(d.errors, 3);
	pmbot_diag_list_free(&d);
	/* As elsewhere in pm-bot, a missing member is reported at the object that lacks it. */
	expect_invalid(flow, "FLOW_MISSING", "");
	expect_invalid(flow, "FLOW_MISSING", "/constants");
	expect_invalid(flow, "FLOW_MISSING", "/graph");
	json_decref(flow);
}

static void test_flow_validate__wrong_types_and_non_objects(void **state)
{
	json_t *flow = compile_fixture(), *arr = json_array();

	(void)state;
	expect_invalid(arr, "FLOW_TYPE", "");
	json_object_set_new(flow, "graph", json_pack("{s:[i], s:[s]}", "nodes", 1, "edges", "x"));
	expect_invalid(flow, "FLOW_TYPE", "/graph/nodes/0");
	expect_invalid(flow, "FLOW_TYPE", "/graph/edges/0");
	json_decref(flow);
	json_decref(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flow_compile__one_node_per_changeset_chained_by_success_edges),
		cmocka_unit_test(test_flow_compile__retries_only_operations_safe_to_repeat),
		cmocka_unit_test(test_flow_compile__same_bundle_same_bytes_but_for_generated_at),
		cmocka_unit_test(test_flow_compile__clock_gives_valid_utc_time_without_PMBOT_NOW),
		cmocka_unit_test(test_flow_compile__refuses_malformed_PMBOT_NOW),
		cmocka_unit_test(test_flow_compile__rejects_a_bundle_without_bundle_id_or_changesets),
		cmocka_unit_test(test_flow_compile__unknown_operation_compiles_without_retry),
		cmocka_unit_test(test_flow_compile__does_not_share_values_with_the_bundle),
		cmocka_unit_test(test_flow_compile_shared__same_bytes_with_the_bundles_own_payloads),
		cmocka_unit_test(test_flow_validate__refuses_another_major_version),
		cmocka_unit_test(test_flow_validate__ids_must_match_the_pattern_and_be_unique),
		cmocka_unit_test(test_flow_validate__needs_at_least_one_node),
		cmocka_unit_test(test_flow_validate__edges_must_name_nodes_and_a_known_transition),
		cmocka_unit_test(test_flow_validate__integers_must_lie_in_0_to_2_pow_31_minus_1),
		cmocka_unit_test(test_flow_validate__generated_at_must_be_rfc3339_utc),
		cmocka_unit_test(test_flow_validate__names_the_cycle),
		cmocka_unit_test(test_flow_validate__self_loop_is_a_cycle),
		cmocka_unit_test(test_flow_validate__refuses_retry_on_a_create),
		cmocka_unit_test(test_flow_validate__empty_strings_are_refused_outside_opaque_members),
		cmocka_unit_test(test_flow_validate__reports_every_missing_member),
		cmocka_unit_test(test_flow_validate__wrong_types_and_non_objects),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
