#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "pmbot/buf.h"
#include "pmbot/diag.h"
#include "pmbot/json.h"
#include "pmbot/llm.h"
#include "pmbot/banned.h"

#define FIX "tests/fixtures/promptir/"

/* ---- helpers ------------------------------------------------------------ */

static json_t *load_fixture(const char *name)
{
	char path[256];
	json_error_t e;
	json_t *j;

	snprintf(path, sizeof(path), FIX "%s", name);
	j = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
	if (!j)
		fail_msg("%s:%d: %s", path, e.line, e.text);
	return j;
}

static pmbot_promptir *ir_from_fixture(const char *name)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir *ir = NULL;
	json_t *j = load_fixture(name);

	assert_int_equal(pmbot_promptir_from_json(&ir, j, &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	json_decref(j);
	return ir;
}

static char *canonical(const json_t *j)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_json_canonical(&b, j), 0);
	return pmbot_buf_detach(&b, NULL);
}

static char *ir_canonical(const pmbot_promptir *ir)
{
	json_t *j = NULL;
	char *s;

	assert_int_equal(pmbot_promptir_to_json(&j, ir), PMBOT_OK);
	s = canonical(j);
	json_decref(j);
	return s;
}

/* SHA-256 through OpenSSL directly, not through pmbot_sha256_*: an independent check. */
static void sha256_hex(char out[65], const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	assert_true(EVP_Digest(data, len, md, &n, EVP_sha256(), NULL));
	assert_int_equal(n, 32);
	for (i = 0; i < n; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}

/* The spec's hash of an IR given as a JSON document: SHA-256 of sorted-key JSON, 16 hex. */
static void json_hash16(char out[17], const json_t *doc)
{
	char hex[65], *c = canonical(doc);

	sha256_hex(hex, c, strlen(c));
	memcpy(out, hex, 16);
	out[16] = '\0';
	free(c);
}

/* The pipeline's clone id: SHA-256 of canonical(before) NUL plugin-name, 8 hex. */
static void derived_id(char out[9], const json_t *before, const char *plugin)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	char hex[65];

	assert_int_equal(pmbot_json_canonical(&b, before), 0);
	assert_int_equal(pmbot_buf_putc(&b, '\0'), 0);
	assert_int_equal(pmbot_buf_puts(&b, plugin), 0);
	sha256_hex(hex, b.buf, b.len);
	memcpy(out, hex, 8);
	out[8] = '\0';
	pmbot_buf_free(&b);
}

static const pmbot_diag *expect_diag(const pmbot_diag_list *diags, const char *code,
	const char *path, const char *message_part)
{
	size_t i;

	for (i = 0; i < diags->count; i++) {
		const pmbot_diag *d = &diags->items[i];

		if (strcmp(d->code, code) || strcmp(d->path, path))
			continue;
		if (message_part && !strstr(d->message, message_part))
			fail_msg("%s %s: message '%s' lacks '%s'", code, path, d->message,
				message_part);
		return d;
	}
	for (i = 0; i < diags->count; i++)
		print_message("  have %s %s: %s\n", diags->items[i].code, diags->items[i].path,
			diags->items[i].message);
	fail_msg("no %s at '%s'", code, path);
	return NULL;
}

static pmbot_promptir *new_ir(pmbot_phase phase, int priority, long long budget)
{
	pmbot_promptir *ir = NULL;

	assert_int_equal(pmbot_promptir_new(&ir, "architect", "Design auth system", phase,
		budget, "a1b2c3d4", "2026-02-18T12:00:00+00:00"), PMBOT_OK);
	ir->priority = priority;
	return ir;
}

static pmbot_governance *default_gov(void)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_governance *gov = NULL;

	assert_int_equal(pmbot_governance_new(&gov, NULL, NULL, &diags), PMBOT_OK);
	assert_int_equal(diags.count, 0);
	return gov;
}

/* Run the pipeline, expecting success; the caller frees the IR and the records. */
static pmbot_promptir *run(const pmbot_promptir *ir, const pmbot_promptir_pipeline_opts *opts,
	json_t **records, pmbot_diag_list *diags)
{
	pmbot_governance *gov = default_gov();
	pmbot_governance_result res = PMBOT_GOVERNANCE_RESULT_INIT;
	pmbot_promptir *out = NULL;

	assert_int_equal(pmbot_promptir_pipeline(&out, records, &res, ir, gov, opts, diags),
		PMBOT_OK);
	assert_non_null(out);
	assert_true(res.approved);
	pmbot_governance_result_free(&res);
	pmbot_governance_free(gov);
	return out;
}

/* ---- phases ------------------------------------------------------------- */

static void test_promptir__phase_names_are_the_spec_values(void **state)
{
	static const char *const want[] = {
		"planning", "research", "implementation", "review", "synthesis"
	};
	pmbot_phase p;
	int i;

	(void)state;
	for (i = 0; i < PMBOT_PHASE_COUNT; i++) {
		assert_string_equal(pmbot_phase_name((pmbot_phase)i), want[i]);
		assert_int_equal(pmbot_phase_parse(&p, want[i]), 0);
		assert_int_equal(p, i);
	}
	assert_null(pmbot_phase_name((pmbot_phase)PMBOT_PHASE_COUNT));
}

static void test_promptir__phase_parse_ignores_case_maps_aliases_and_defaults(void **state)
{
	pmbot_phase p;

	(void)state;
	assert_int_equal(pmbot_phase_parse(&p, "PLANNING"), 0);
	assert_int_equal(p, PMBOT_PHASE_PLANNING);
	assert_int_equal(pmbot_phase_parse(&p, "Analysis"), 0);
	assert_int_equal(p, PMBOT_PHASE_PLANNING);
	assert_int_equal(pmbot_phase_parse(&p, "integration"), 0);
	assert_int_equal(p, PMBOT_PHASE_SYNTHESIS);
	assert_int_equal(pmbot_phase_parse(&p, "ReViEw"), 0);
	assert_int_equal(p, PMBOT_PHASE_REVIEW);
	p = PMBOT_PHASE_REVIEW;
	assert_int_equal(pmbot_phase_parse(&p, "deployment"), 1);
	assert_int_equal(p, PMBOT_PHASE_IMPLEMENTATION);
	p = PMBOT_PHASE_REVIEW;
	assert_int_equal(pmbot_phase_parse(&p, "plan"), 1);
	assert_int_equal(p, PMBOT_PHASE_IMPLEMENTATION);
	p = PMBOT_PHASE_REVIEW;
	assert_int_equal(pmbot_phase_parse(&p, NULL), 1);
	assert_int_equal(p, PMBOT_PHASE_IMPLEMENTATION);
}

/* ---- construction and serialization ------------------------------------- */

static void test_promptir__new_has_the_spec_defaults(void **state)
{
	pmbot_promptir *ir = new_ir(PMBOT_PHASE_PLANNING, 5, 3000);
	json_t *got = NULL, *want;

	(void)state;
	assert_int_equal(pmbot_promptir_add_context_ref(ir, "file:src/auth.py"), PMBOT_OK);
	assert_int_equal(pmbot_promptir_to_json(&got, ir), PMBOT_OK);
	/* The spec's to_dict() example, byte for byte after canonicalization. */
	want = load_fixture("spec_example.json");
	assert_true(pmbot_json_equal(got, want));
	assert_true(json_is_real(json_object_get(got, "temperature_hint")));
	assert_true(json_is_null(json_object_get(got, "model_hint")));
	assert_int_equal(json_object_size(got), 15);
	json_decref(got);
	json_decref(want);
	pmbot_promptir_free(ir);
}

static void test_promptir__new_rejects_bad_ids_times_budgets_and_text(void **state)
{
	static const char *const bad_ids[] = {
		"A1B2C3D4", "a1b2c3d", "a1b2c3d4e", "g1b2c3d4", "", NULL
	};
	static const char *const bad_times[] = {
		"2026-02-18T12:00:00", "2026-02-30T12:00:00Z", "2026-02-18 12:00:00Z",
		"2026-13-01T00:00:00Z", "2026-02-18T24:00:00Z", "2026-02-18T12:00:00+0000",
		"2026-02-18T12:00:00.Z", "2025-02-29T00:00:00Z", "yesterday"
	};
	pmbot_promptir *ir = (pmbot_promptir *)1;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		assert_int_equal(pmbot_promptir_new(&ir, "r", "i", PMBOT_PHASE_REVIEW, 10,
			bad_ids[i], NULL), PMBOT_EINVALID);
		assert_null(ir);
	}
	for (i = 0; i < sizeof(bad_times) / sizeof(bad_times[0]); i++)
		assert_int_equal(pmbot_promptir_new(&ir, "r", "i", PMBOT_PHASE_REVIEW, 10,
			"00ff00ff", bad_times[i]), PMBOT_EINVALID);
	assert_int_equal(pmbot_promptir_new(&ir, "r", "i", PMBOT_PHASE_REVIEW, -1,
		"00ff00ff", NULL), PMBOT_EINVALID);
	assert_int_equal(pmbot_promptir_new(&ir, "r", "i", PMBOT_PHASE_REVIEW,
		PMBOT_PROMPTIR_MAX_BUDGET + 1, "00ff00ff", NULL), PMBOT_EINVALID);
	assert_int_equal(pmbot_promptir_new(&ir, "r", "i", (pmbot_phase)PMBOT_PHASE_COUNT, 1,
		"00ff00ff", NULL), PMBOT_EINVALID);
	assert_int_equal(pmbot_promptir_new(&ir, "r\xff", "i", PMBOT_PHASE_REVIEW, 1,
		"00ff00ff", NULL), PMBOT_EINVALID);
	assert_int_equal(pmbot_promptir_new(&ir, "r", NULL, PMBOT_PHASE_REVIEW, 1,
		"00ff00ff", NULL), PMBOT_EINVALID);
	/* The edges that are valid: leap day, fractions, offsets, no time at all. */
	assert_int_equal(pmbot_promptir_new(&ir, "r", "i", PMBOT_PHASE_REVIEW,
		PMBOT_PROMPTIR_MAX_BUDGET, "00ff00ff", "2024-02-29T23:59:59.123456-05:30"),
		PMBOT_OK);
	pmbot_promptir_free(ir);
	assert_int_equal(pmbot_promptir_new(&ir, "", "", PMBOT_PHASE_REVIEW, 0, "00ff00ff", NULL),
		PMBOT_OK);
	assert_null(ir->created_at);
	pmbot_promptir_free(ir);
}

static void test_promptir__add_appends_copies_and_rejects_invalid_utf8(void **state)
{
	pmbot_promptir *ir = new_ir(PMBOT_PHASE_REVIEW, 5, 100);
	char ref[] = "file:a.c";

	(void)state;
	assert_int_equal(pmbot_promptir_add_context_ref(ir, ref), PMBOT_OK);
	ref[5] = 'b';
	assert_int_equal(pmbot_promptir_add_constraint(ir, "be brief"), PMBOT_OK);
	assert_int_equal(pmbot_promptir_add_context_ref(ir, "file:\xc3("), PMBOT_EINVALID);
	assert_int_equal(pmbot_promptir_add_constraint(ir, "\xed\xa0\x80"), PMBOT_EINVALID);
	assert_int_equal(ir->n_context_refs, 1);
	assert_string_equal(ir->context_refs[0], "file:a.c");
	assert_int_equal(ir->n_constraints, 1);
	assert_string_equal(ir->constraints[0], "be brief");
	pmbot_promptir_free(ir);
}

static void test_promptir__from_json_round_trips_the_spec_examples(void **state)
{
	static const char *const files[] = { "spec_example.json", "builder_example.json" };
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		json_t *in = load_fixture(files[i]), *out = NULL;
		pmbot_promptir *ir = ir_from_fixture(files[i]);
		char *a, *b;

		assert_int_equal(pmbot_promptir_to_json(&out, ir), PMBOT_OK);
		a = canonical(in);
		b = canonical(out);
		assert_string_equal(a, b);
		free(a);
		free(b);
		json_decref(in);
		json_decref(out);
		pmbot_promptir_free(ir);
	}
}

static void test_promptir__from_json_fills_the_optional_fields_with_defaults(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir *ir = NULL;
	json_t *in = json_pack("{s:s, s:s, s:s, s:[], s:[], s:{}, s:i}", "role", "reviewer",
		"intent", "Review the diff", "phase", "review", "context_refs", "constraints",
		"output_requirements", "token_budget", 500);

	(void)state;
	assert_int_equal(pmbot_promptir_from_json(&ir, in, &diags), PMBOT_OK);
	assert_int_equal(ir->priority, 5);
	assert_null(ir->model_hint);
	assert_true(ir->temperature_hint == 0.7);
	assert_string_equal(ir->schema_id, "default");
	assert_string_equal(ir->ir_version, "1.0");
	assert_int_equal(json_object_size(ir->metadata), 0);
	assert_null(ir->created_at);
	assert_int_equal(ir->phase, PMBOT_PHASE_REVIEW);
	pmbot_promptir_free(ir);
	json_decref(in);
}

static void test_promptir__from_json_derives_a_missing_id_from_the_input(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir *a = NULL, *b = NULL, *c = NULL;
	json_t *in = load_fixture("spec_example.json");
	char hex[65], *canon;

	(void)state;
	json_object_del(in, "ir_id");
	canon = canonical(in);
	sha256_hex(hex, canon, strlen(canon));
	hex[8] = '\0';
	assert_int_equal(pmbot_promptir_from_json(&a, in, &diags), PMBOT_OK);
	assert_string_equal(a->ir_id, hex);
	/* null and "" are "not given" too (the reference tests `if not self.ir_id`). */
	json_object_set_new(in, "ir_id", json_string(""));
	assert_int_equal(pmbot_promptir_from_json(&b, in, &diags), PMBOT_OK);
	json_object_set_new(in, "ir_id", json_null());
	json_object_set_new(in, "intent", json_string("Design another system"));
	assert_int_equal(pmbot_promptir_from_json(&c, in, &diags), PMBOT_OK);
	assert_int_equal(strlen(b->ir_id), 8);
	assert_string_not_equal(c->ir_id, a->ir_id);
	assert_int_equal(diags.count, 0);
	free(canon);
	json_decref(in);
	pmbot_promptir_free(a);
	pmbot_promptir_free(b);
	pmbot_promptir_free(c);
}

static void test_promptir__from_json_accepts_minor_versions_and_refuses_other_majors(void **state)
{
	static const char *const good[] = { "1.0", "1.1", "1.42" };
	static const char *const bad[] = { "2.0", "1", "10.0", "0.9", "" };
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir *ir = NULL;
	json_t *in = load_fixture("spec_example.json");
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		json_object_set_new(in, "ir_version", json_string(good[i]));
		assert_int_equal(pmbot_promptir_from_json(&ir, in, &diags), PMBOT_OK);
		assert_string_equal(ir->ir_version, good[i]);
		pmbot_promptir_free(ir);
	}
	for (i = 0; i < 5; i++) {
		json_object_set_new(in, "ir_version", json_string(bad[i]));
		/* Another major version may rename fields: only the version is reported. */
		json_object_set_new(in, "phase", json_integer(3));
		assert_int_equal(pmbot_promptir_from_json(&ir, in, &diags), PMBOT_EINVALID);
		assert_null(ir);
		assert_int_equal(diags.count, 1);
		expect_diag(&diags, "PROMPTIR_VERSION", "/ir_version", "unsupported IR version");
		pmbot_diag_list_free(&diags);
	}
	json_object_set_new(in, "ir_version", json_real(1.0));
	assert_int_equal(pmbot_promptir_from_json(&ir, in, &diags), PMBOT_EINVALID);
	expect_diag(&diags, "PROMPTIR_VERSION", "/ir_version", "must be a string");
	pmbot_diag_list_free(&diags);
	json_decref(in);
}

static void test_promptir__from_json_reports_every_type_error_with_a_pointer(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir *ir = (pmbot_promptir *)1;
	json_t *in = load_fixture("builder_example.json");

	(void)state;
	json_object_del(in, "role");
	json_object_set_new(in, "intent", json_integer(1));
	json_object_set_new(in, "phase", json_string("analysis"));
	json_array_set_new(json_object_get(in, "context_refs"), 1, json_integer(2));
	json_object_set_new(in, "constraints", json_string("one"));
	json_object_set_new(in, "output_requirements", json_array());
	json_object_set_new(in, "token_budget", json_real(3000.0));
	json_object_set_new(in, "priority", json_integer(11));
	json_object_set_new(in, "model_hint", json_false());
	json_object_set_new(in, "temperature_hint", json_real(2.5));
	json_object_set_new(in, "schema_id", json_null());
	json_object_set_new(in, "metadata", json_string("none"));
	json_object_set_new(in, "created_at", json_string("2026-02-31T00:00:00Z"));
	json_object_set_new(in, "x_extra", json_true());
	assert_int_equal(pmbot_promptir_from_json(&ir, in, &diags), PMBOT_EINVALID);
	assert_null(ir);
	expect_diag(&diags, "PROMPTIR_FIELD", "", "required field 'role' is missing");
	expect_diag(&diags, "PROMPTIR_FIELD", "/intent", "must be a string");
	expect_diag(&diags, "PROMPTIR_FIELD", "/phase", "planning, research");
	expect_diag(&diags, "PROMPTIR_FIELD", "/context_refs/1", "must be a string");
	expect_diag(&diags, "PROMPTIR_FIELD", "/constraints", "array of strings");
	expect_diag(&diags, "PROMPTIR_FIELD", "/output_requirements", "must be an object");
	expect_diag(&diags, "PROMPTIR_FIELD", "/token_budget", "integer from 0 to 2147483647");
	expect_diag(&diags, "PROMPTIR_FIELD", "/priority", "integer from 1 to 10");
	expect_diag(&diags, "PROMPTIR_FIELD", "/model_hint", "string or null");
	expect_diag(&diags, "PROMPTIR_FIELD", "/temperature_hint", "from 0 to 2");
	expect_diag(&diags, "PROMPTIR_FIELD", "/schema_id", "must be a string");
	expect_diag(&diags, "PROMPTIR_FIELD", "/metadata", "must be an object");
	expect_diag(&diags, "PROMPTIR_FIELD", "/created_at", "RFC 3339");
	expect_diag(&diags, "PROMPTIR_UNKNOWN_KEY", "/x_extra", "unknown key 'x_extra'");
	assert_int_equal(diags.count, 14);
	assert_int_equal(diags.errors, 14);
	pmbot_diag_list_free(&diags);
	json_decref(in);
}

static void test_promptir__from_json_refuses_unknown_keys_and_non_objects(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir *ir = NULL;
	json_t *in = load_fixture("spec_example.json"), *arr = json_array();

	(void)state;
	json_object_set_new(in, "a/b~c", json_integer(1));
	json_object_set_new(in, "line\nbreak", json_integer(1));
	assert_int_equal(pmbot_promptir_from_json(&ir, in, &diags), PMBOT_EINVALID);
	expect_diag(&diags, "PROMPTIR_UNKNOWN_KEY", "/a~1b~0c", "'a/b~c'");
	/* A hostile key cannot forge a second diagnostic line. */
	expect_diag(&diags, "PROMPTIR_UNKNOWN_KEY", "/line\nbreak", "'line\\x0abreak'");
	assert_int_equal(diags.count, 2);
	pmbot_diag_list_free(&diags);
	assert_int_equal(pmbot_promptir_from_json(&ir, arr, &diags), PMBOT_EINVALID);
	expect_diag(&diags, "PROMPTIR_FIELD", "", "must be a JSON object");
	pmbot_diag_list_free(&diags);
	json_decref(arr);
	json_decref(in);
}

static void test_promptir__from_json_refuses_nul_bytes_in_strings(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir *ir = NULL;
	json_t *in = load_fixture("spec_example.json");

	(void)state;
	json_object_set_new(in, "role", json_stringn("arch\0itect", 10));
	json_array_append_new(json_object_get(in, "context_refs"), json_stringn("file:a\0b", 8));
	assert_int_equal(pmbot_promptir_from_json(&ir, in, &diags), PMBOT_EINVALID);
	expect_diag(&diags, "PROMPTIR_FIELD", "/role", "NUL byte");
	expect_diag(&diags, "PROMPTIR_FIELD", "/context_refs/1", "NUL byte");
	assert_int_equal(diags.count, 2);
	pmbot_diag_list_free(&diags);
	json_decref(in);
}

static void test_promptir__clone_is_deep_keeps_created_at_and_takes_a_new_id(void **state)
{
	pmbot_promptir *ir = ir_from_fixture("builder_example.json"), *c = NULL;
	char *before = ir_canonical(ir), *after;

	(void)state;
	assert_int_equal(pmbot_promptir_clone(&c, ir, ir->ir_id), PMBOT_EINVALID);
	assert_null(c);
	assert_int_equal(pmbot_promptir_clone(&c, ir, "XYZ"), PMBOT_EINVALID);
	assert_int_equal(pmbot_promptir_clone(&c, ir, "feedbeef"), PMBOT_OK);
	assert_string_equal(c->ir_id, "feedbeef");
	assert_string_equal(c->created_at, ir->created_at);
	assert_string_equal(c->intent, ir->intent);
	assert_string_equal(c->model_hint, "anthropic");
	assert_true(c->temperature_hint == 0.5);
	assert_int_equal(c->priority, 7);
	/* Editing the clone leaves the original as it was. */
	c->context_refs[0][0] = 'X';
	json_object_set_new(c->metadata, "added", json_true());
	json_array_append_new(json_object_get(c->output_requirements, "risks"), json_string("y"));
	assert_int_equal(pmbot_promptir_add_constraint(c, "another"), PMBOT_OK);
	after = ir_canonical(ir);
	assert_string_equal(before, after);
	free(before);
	free(after);
	pmbot_promptir_free(c);
	pmbot_promptir_free(ir);
}

static void test_promptir__hash_is_sha256_of_the_canonical_json_cut_to_16(void **state)
{
	pmbot_promptir *ir = ir_from_fixture("builder_example.json");
	json_t *doc = load_fixture("builder_example.json");
	char got[PMBOT_PROMPTIR_HASH_SIZE], want[17];

	(void)state;
	/* Computed from the file's own JSON, not from pm-bot's serializer. */
	json_hash16(want, doc);
	assert_int_equal(pmbot_promptir_hash(got, ir), PMBOT_OK);
	assert_string_equal(got, want);
	assert_int_equal(strlen(got), 16);
	ir->priority = 6;
	assert_int_equal(pmbot_promptir_hash(got, ir), PMBOT_OK);
	assert_string_not_equal(got, want);
	json_decref(doc);
	pmbot_promptir_free(ir);
}

/* ---- budget ------------------------------------------------------------- */

/* The spec's "Example Calculations" table. */
static const struct {
	const char *role;
	pmbot_phase phase;
	int priority;
	long long original;
	int mult_tenths;
	double multiplier;
	long long adjusted;
} budget_rows[] = {
	{ "architect", PMBOT_PHASE_PLANNING, 7, 3000, 12, 1.2, 4320 },
	{ "researcher", PMBOT_PHASE_RESEARCH, 5, 3000, 13, 1.3, 3900 },
	{ "implementer", PMBOT_PHASE_IMPLEMENTATION, 5, 3000, 10, 1.0, 3000 },
	{ "reviewer", PMBOT_PHASE_REVIEW, 3, 3000, 8, 0.8, 1920 },
	{ "integrator", PMBOT_PHASE_SYNTHESIS, 8, 3000, 11, 1.1, 4290 },
};

static void test_promptir__budget_formula_gives_the_spec_table_row_by_row(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(budget_rows) / sizeof(budget_rows[0]); i++) {
		long long got = -1;
		int tenths = -1;

		assert_int_equal(pmbot_promptir_adjust_budget(&got, &tenths, budget_rows[i].original,
			budget_rows[i].phase, budget_rows[i].priority), PMBOT_OK);
		assert_int_equal(got, budget_rows[i].adjusted);
		assert_int_equal(tenths, budget_rows[i].mult_tenths);
	}
}

static void test_promptir__pipeline_budget_gives_the_spec_table_row_by_row(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(budget_rows) / sizeof(budget_rows[0]); i++) {
		pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
		pmbot_promptir *ir = NULL, *out;
		json_t *records = NULL, *rec;
		char desc[64];

		assert_int_equal(pmbot_promptir_new(&ir, budget_rows[i].role, "Do the work",
			budget_rows[i].phase, budget_rows[i].original, "12345678", NULL), PMBOT_OK);
		ir->priority = budget_rows[i].priority;
		out = run(ir, NULL, &records, &diags);
		assert_int_equal(out->token_budget, budget_rows[i].adjusted);
		assert_int_equal(json_integer_value(json_object_get(out->metadata, "original_budget")),
			budget_rows[i].original);
		assert_true(json_is_real(json_object_get(out->metadata, "budget_multiplier")));
		assert_true(json_real_value(json_object_get(out->metadata, "budget_multiplier")) ==
			budget_rows[i].multiplier);
		assert_int_equal(json_array_size(records), 1);
		rec = json_array_get(records, 0);
		assert_string_equal(json_string_value(json_object_get(rec, "transformation_type")),
			"budget_optimization");
		assert_string_equal(json_string_value(json_object_get(rec, "applied_by")),
			"BudgetOptimizerPlugin");
		snprintf(desc, sizeof(desc), "Adjusted budget: %lld -> %lld",
			budget_rows[i].original, budget_rows[i].adjusted);
		assert_string_equal(json_string_value(json_object_get(rec, "description")), desc);
		assert_int_equal(diags.count, 0);
		json_decref(records);
		pmbot_promptir_free(out);
		pmbot_promptir_free(ir);
	}
}

static void test_promptir__priority_bonus_follows_the_spec_table(void **state)
{
	int prio;

	(void)state;
	/* Priority p gives (50 + 10p)% of the phase-adjusted budget: 60% .. 150%. */
	for (prio = 1; prio <= 10; prio++) {
		long long got;

		assert_int_equal(pmbot_promptir_adjust_budget(&got, NULL, 1000,
			PMBOT_PHASE_IMPLEMENTATION, prio), PMBOT_OK);
		assert_int_equal(got, 10 * (50 + 10 * prio));
		assert_int_equal(pmbot_promptir_adjust_budget(&got, NULL, 1000,
			PMBOT_PHASE_REVIEW, prio), PMBOT_OK);
		assert_int_equal(got, 8 * (50 + 10 * prio));
	}
}

static void test_promptir__budget_truncates_like_int_and_refuses_out_of_range(void **state)
{
	long long got = 0;

	(void)state;
	/* 7 * 1.1 * 1.3 = 10.01 -> 10; 1 * 0.8 * 0.6 = 0.48 -> 0. */
	assert_int_equal(pmbot_promptir_adjust_budget(&got, NULL, 7, PMBOT_PHASE_SYNTHESIS, 8),
		PMBOT_OK);
	assert_int_equal(got, 10);
	assert_int_equal(pmbot_promptir_adjust_budget(&got, NULL, 1, PMBOT_PHASE_REVIEW, 1),
		PMBOT_OK);
	assert_int_equal(got, 0);
	assert_int_equal(pmbot_promptir_adjust_budget(&got, NULL, PMBOT_PROMPTIR_MAX_BUDGET,
		PMBOT_PHASE_RESEARCH, 10), PMBOT_OK);
	assert_int_equal(got, PMBOT_PROMPTIR_MAX_BUDGET * 13 * 15 / 100);
	assert_int_equal(pmbot_promptir_adjust_budget(&got, NULL, 1, PMBOT_PHASE_REVIEW, 0),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_promptir_adjust_budget(&got, NULL, 1, PMBOT_PHASE_REVIEW, 11),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_promptir_adjust_budget(&got, NULL, -1, PMBOT_PHASE_REVIEW, 5),
		PMBOT_EINVALID);
	assert_int_equal(pmbot_promptir_adjust_budget(&got, NULL, 1, (pmbot_phase)9, 5),
		PMBOT_EINVALID);
}

/* ---- plugins and transformations ---------------------------------------- */

static pmbot_promptir *ir_with_refs(size_t n)
{
	pmbot_promptir *ir = new_ir(PMBOT_PHASE_PLANNING, 7, 3000);
	size_t i;

	for (i = 0; i < n; i++) {
		char ref[32];

		snprintf(ref, sizeof(ref), "file:%c.py", (char)('a' + i % 26));
		assert_int_equal(pmbot_promptir_add_context_ref(ir, ref), PMBOT_OK);
	}
	return ir;
}

static void test_promptir__context_digest_replaces_refs_over_the_threshold(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir_pipeline_opts opts = { 10, "2026-02-18T12:00:05Z", NULL, 0 };
	pmbot_promptir *ir = ir_with_refs(26), *out;
	json_t *records = NULL, *orig, *rec;
	size_t i;

	(void)state;
	out = run(ir, &opts, &records, &diags);
	assert_int_equal(out->n_context_refs, 1);
	assert_string_equal(out->context_refs[0], "__CONTEXT_DIGEST__");
	orig = json_object_get(out->metadata, "original_context_refs");
	assert_int_equal(json_array_size(orig), 26);
	for (i = 0; i < 26; i++)
		assert_string_equal(json_string_value(json_array_get(orig, i)), ir->context_refs[i]);
	assert_string_equal(json_string_value(json_object_get(out->metadata, "context_digest")),
		"Context summary: 26 files related to: Design auth system");
	assert_int_equal(json_array_size(records), 2);
	rec = json_array_get(records, 0);
	assert_string_equal(json_string_value(json_object_get(rec, "transformation_type")),
		"context_digest");
	assert_string_equal(json_string_value(json_object_get(rec, "applied_by")),
		"ContextDigestPlugin");
	assert_string_equal(json_string_value(json_object_get(rec, "description")),
		"Compressed 26 refs into digest");
	assert_string_equal(json_string_value(json_object_get(rec, "timestamp")),
		"2026-02-18T12:00:05Z");
	/* Digest first, then the budget, as registered. */
	assert_string_equal(json_string_value(json_object_get(json_array_get(records, 1),
		"transformation_type")), "budget_optimization");
	assert_int_equal(out->token_budget, 4320);
	/* The digested list is a list like any other: it still grows. */
	for (i = 0; i < 20; i++)
		assert_int_equal(pmbot_promptir_add_context_ref(out, "file:more.md"), PMBOT_OK);
	assert_int_equal(out->n_context_refs, 21);
	assert_string_equal(out->context_refs[20], "file:more.md");
	json_decref(records);
	pmbot_promptir_free(out);
	pmbot_promptir_free(ir);
}

static void test_promptir__context_digest_leaves_refs_at_the_threshold_alone(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir_pipeline_opts opts = { 3, NULL, NULL, 0 };
	pmbot_promptir *ir = ir_with_refs(3), *out, *ir11 = ir_with_refs(11);
	json_t *records = NULL;

	(void)state;
	out = run(ir, &opts, &records, &diags);
	assert_int_equal(out->n_context_refs, 3);
	assert_null(json_object_get(out->metadata, "context_digest"));
	assert_int_equal(json_array_size(records), 1);
	assert_true(json_is_null(json_object_get(json_array_get(records, 0), "timestamp")));
	json_decref(records);
	pmbot_promptir_free(out);
	/* Without opts the threshold is the reference's default, 10. */
	out = run(ir11, NULL, &records, &diags);
	assert_int_equal(out->n_context_refs, 1);
	assert_int_equal(json_array_size(records), 2);
	json_decref(records);
	pmbot_promptir_free(out);
	pmbot_promptir_free(ir11);
	pmbot_promptir_free(ir);
}

static void test_promptir__transformation_hashes_match_an_independent_computation(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir_pipeline_opts opts = { 2, "2026-02-18T12:00:05Z", NULL, 0 };
	pmbot_promptir *ir = ir_from_fixture("builder_example.json"), *out;
	json_t *doc = load_fixture("builder_example.json"), *records = NULL, *mid, *end;
	char h0[17], h1[17], h2[17], id1[9], id2[9];
	json_t *t0, *t1;

	(void)state;
	out = run(ir, &opts, &records, &diags);
	assert_int_equal(json_array_size(records), 2);
	t0 = json_array_get(records, 0);
	t1 = json_array_get(records, 1);

	/* Rebuild each intermediate IR by hand from the input document. */
	json_hash16(h0, doc);
	derived_id(id1, doc, "ContextDigestPlugin");
	mid = json_deep_copy(doc);
	json_object_set_new(mid, "ir_id", json_string(id1));
	json_object_set(json_object_get(mid, "metadata"), "original_context_refs",
		json_object_get(doc, "context_refs"));
	json_object_set_new(json_object_get(mid, "metadata"), "context_digest", json_string(
		"Context summary: 3 files related to: Design a REST API for user authentication"));
	json_object_set_new(mid, "context_refs", json_pack("[s]", "__CONTEXT_DIGEST__"));
	json_hash16(h1, mid);
	derived_id(id2, mid, "BudgetOptimizerPlugin");
	end = json_deep_copy(mid);
	json_object_set_new(end, "ir_id", json_string(id2));
	json_object_set_new(end, "token_budget", json_integer(4320));
	json_object_set_new(json_object_get(end, "metadata"), "original_budget",
		json_integer(3000));
	json_object_set_new(json_object_get(end, "metadata"), "budget_multiplier",
		json_real(1.2));
	json_hash16(h2, end);

	assert_string_equal(json_string_value(json_object_get(t0, "before_hash")), h0);
	assert_string_equal(json_string_value(json_object_get(t0, "after_hash")), h1);
	assert_string_equal(json_string_value(json_object_get(t1, "before_hash")), h1);
	assert_string_equal(json_string_value(json_object_get(t1, "after_hash")), h2);
	assert_string_equal(out->ir_id, id2);
	assert_string_not_equal(id1, ir->ir_id);
	assert_string_not_equal(id2, id1);
	{
		json_t *got = NULL;

		assert_int_equal(pmbot_promptir_to_json(&got, out), PMBOT_OK);
		assert_true(pmbot_json_equal(got, end));
		json_decref(got);
	}
	json_decref(mid);
	json_decref(end);
	json_decref(doc);
	json_decref(records);
	pmbot_promptir_free(out);
	pmbot_promptir_free(ir);
}

static void test_promptir__pipeline_is_deterministic_and_leaves_its_input_alone(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir *ir = ir_with_refs(12), *a, *b;
	json_t *ra = NULL, *rb = NULL;
	char *before = ir_canonical(ir), *after, *ca, *cb, *rca, *rcb;

	(void)state;
	a = run(ir, NULL, &ra, &diags);
	b = run(ir, NULL, &rb, &diags);
	after = ir_canonical(ir);
	assert_string_equal(before, after);
	ca = ir_canonical(a);
	cb = ir_canonical(b);
	rca = canonical(ra);
	rcb = canonical(rb);
	assert_string_equal(ca, cb);
	assert_string_equal(rca, rcb);
	assert_string_not_equal(ca, before);
	free(before);
	free(after);
	free(ca);
	free(cb);
	free(rca);
	free(rcb);
	json_decref(ra);
	json_decref(rb);
	pmbot_promptir_free(a);
	pmbot_promptir_free(b);
	pmbot_promptir_free(ir);
}

typedef struct {
	int calls;
	const pmbot_promptir *input;
	long long seen_budget;
	char seen_id[16];
	int fail;
} spy;

static int spy_transform(pmbot_promptir *ir, pmbot_buf *description, void *ctx)
{
	spy *s = ctx;

	s->calls++;
	s->seen_budget = ir->token_budget;
	snprintf(s->seen_id, sizeof(s->seen_id), "%s", ir->ir_id);
	assert_ptr_not_equal(ir, s->input);
	/* Whatever a failing plugin did to its clone must not reach the output. */
	ir->token_budget = 1;
	json_object_set_new(ir->metadata, "spy", json_true());
	if (s->fail)
		return -1;
	return pmbot_buf_puts(description, "spy was here") < 0 ? -1 : 1;
}

static void test_promptir__extra_plugins_run_after_the_builtins_on_a_clone(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir *ir = new_ir(PMBOT_PHASE_REVIEW, 3, 3000), *out;
	spy s = { 0, NULL, 0, "", 0 };
	pmbot_promptir_plugin plugin = { "SpyPlugin", "spy", spy_transform, &s };
	pmbot_promptir_pipeline_opts opts = { 0, NULL, &plugin, 1 };
	json_t *records = NULL, *rec;

	(void)state;
	s.input = ir;
	out = run(ir, &opts, &records, &diags);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.seen_budget, 1920);
	assert_string_not_equal(s.seen_id, ir->ir_id);
	assert_string_equal(s.seen_id, out->ir_id);
	assert_int_equal(out->token_budget, 1);
	assert_int_equal(json_array_size(records), 2);
	rec = json_array_get(records, 1);
	assert_string_equal(json_string_value(json_object_get(rec, "applied_by")), "SpyPlugin");
	assert_string_equal(json_string_value(json_object_get(rec, "transformation_type")), "spy");
	assert_string_equal(json_string_value(json_object_get(rec, "description")),
		"spy was here");
	json_decref(records);
	pmbot_promptir_free(out);
	pmbot_promptir_free(ir);
}

static void test_promptir__failing_plugin_is_skipped_with_a_warning(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir *ir = new_ir(PMBOT_PHASE_REVIEW, 3, 3000), *out;
	spy bad = { 0, NULL, 0, "", 1 }, good = { 0, NULL, 0, "", 0 };
	pmbot_promptir_plugin plugins[2] = {
		{ "BrokenPlugin", "broken", spy_transform, &bad },
		{ "SpyPlugin", "spy", spy_transform, &good },
	};
	pmbot_promptir_pipeline_opts opts = { 0, NULL, plugins, 2 };
	json_t *records = NULL;

	(void)state;
	bad.input = good.input = ir;
	out = run(ir, &opts, &records, &diags);
	assert_int_equal(bad.calls, 1);
	assert_int_equal(good.calls, 1);
	/* The next plugin saw the IR from before the broken one. */
	assert_int_equal(good.seen_budget, 1920);
	assert_int_equal(json_array_size(records), 2);
	assert_int_equal(diags.count, 1);
	assert_int_equal(diags.warnings, 1);
	expect_diag(&diags, "PROMPTIR_PLUGIN", "", "BrokenPlugin failed");
	pmbot_diag_list_free(&diags);
	json_decref(records);
	pmbot_promptir_free(out);
	pmbot_promptir_free(ir);
}

static void test_promptir__pipeline_with_no_change_returns_a_copy_with_the_same_id(void **state)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir *ir = new_ir(PMBOT_PHASE_REVIEW, 5, 3000), *out;
	json_t *records = NULL;
	char *a, *b;

	(void)state;
	/* A priority the budget table does not define makes the optimizer fail. */
	ir->priority = 0;
	out = run(ir, NULL, &records, &diags);
	assert_ptr_not_equal(out, ir);
	a = ir_canonical(ir);
	b = ir_canonical(out);
	assert_string_equal(a, b);
	assert_int_equal(json_array_size(records), 0);
	expect_diag(&diags, "PROMPTIR_PLUGIN", "", "BudgetOptimizerPlugin failed");
	free(a);
	free(b);
	pmbot_diag_list_free(&diags);
	json_decref(records);
	pmbot_promptir_free(out);
	pmbot_promptir_free(ir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_promptir__phase_names_are_the_spec_values),
		cmocka_unit_test(test_promptir__phase_parse_ignores_case_maps_aliases_and_defaults),
		cmocka_unit_test(test_promptir__new_has_the_spec_defaults),
		cmocka_unit_test(test_promptir__new_rejects_bad_ids_times_budgets_and_text),
		cmocka_unit_test(test_promptir__add_appends_copies_and_rejects_invalid_utf8),
		cmocka_unit_test(test_promptir__from_json_round_trips_the_spec_examples),
		cmocka_unit_test(test_promptir__from_json_fills_the_optional_fields_with_defaults),
		cmocka_unit_test(test_promptir__from_json_derives_a_missing_id_from_the_input),
		cmocka_unit_test(test_promptir__from_json_accepts_minor_versions_and_refuses_other_majors),
		cmocka_unit_test(test_promptir__from_json_reports_every_type_error_with_a_pointer),
		cmocka_unit_test(test_promptir__from_json_refuses_unknown_keys_and_non_objects),
		cmocka_unit_test(test_promptir__from_json_refuses_nul_bytes_in_strings),
		cmocka_unit_test(test_promptir__clone_is_deep_keeps_created_at_and_takes_a_new_id),
		cmocka_unit_test(test_promptir__hash_is_sha256_of_the_canonical_json_cut_to_16),
		cmocka_unit_test(test_promptir__budget_formula_gives_the_spec_table_row_by_row),
		cmocka_unit_test(test_promptir__pipeline_budget_gives_the_spec_table_row_by_row),
		cmocka_unit_test(test_promptir__priority_bonus_follows_the_spec_table),
		cmocka_unit_test(test_promptir__budget_truncates_like_int_and_refuses_out_of_range),
		cmocka_unit_test(test_promptir__context_digest_replaces_refs_over_the_threshold),
		cmocka_unit_test(test_promptir__context_digest_leaves_refs_at_the_threshold_alone),
		cmocka_unit_test(test_promptir__transformation_hashes_match_an_independent_computation),
		cmocka_unit_test(test_promptir__pipeline_is_deterministic_and_leaves_its_input_alone),
		cmocka_unit_test(test_promptir__extra_plugins_run_after_the_builtins_on_a_clone),
		cmocka_unit_test(test_promptir__failing_plugin_is_skipped_with_a_warning),
		cmocka_unit_test(test_promptir__pipeline_with_no_change_returns_a_copy_with_the_same_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
