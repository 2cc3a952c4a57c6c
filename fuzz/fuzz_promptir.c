/*
 * libFuzzer target for pmbot_promptir_from_json(): a Prompt IR arrives as
 * JSON from files and other agents, so every field is untrusted. The IR
 * that is accepted then goes where an accepted IR goes: governance with
 * the default policies and the plugin pipeline.
 *
 * Input: bytes that jansson reads as any JSON value (inputs it rejects are
 * skipped: jansson is not the code under test).
 * Properties checked (abort on failure):
 *  - OK gives an IR and no error; EINVALID gives no IR and an error;
 *  - an accepted IR serialises (pmbot_promptir_to_json), that JSON reads
 *    back (from_json) to an IR with equal JSON and the same hash, and its
 *    fields are in their documented ranges;
 *  - governance and the pipeline succeed or deny (never fail), and deny
 *    exactly when the check did not approve;
 *  - a second run gives the same bytes (JSON, diagnostics, hashes).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pmbot/buf.h"
#include "pmbot/diag.h"
#include "pmbot/json.h"
#include "pmbot/llm.h"

#include "fuzz_util.h"
#include "pmbot/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_ir(const pmbot_promptir *ir)
{
	CHECK(ir->role && ir->intent && ir->ir_id && ir->schema_id && ir->ir_version);
	CHECK((unsigned)ir->phase < PMBOT_PHASE_COUNT);
	CHECK(ir->token_budget >= 0 && ir->token_budget <= PMBOT_PROMPTIR_MAX_BUDGET);
	CHECK(ir->priority >= 1 && ir->priority <= 10);
	CHECK(ir->temperature_hint >= 0.0 && ir->temperature_hint <= 2.0);
	CHECK(json_is_object(ir->output_requirements));
	CHECK(json_is_object(ir->metadata));
	CHECK(!strncmp(ir->ir_version, "1.", 2));
}

static void run_pipeline(pmbot_buf *out, const pmbot_promptir *ir)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_governance *gov = NULL;
	pmbot_governance_result gr = PMBOT_GOVERNANCE_RESULT_INIT;
	pmbot_promptir_pipeline_opts opts;
	pmbot_promptir *res = NULL;
	json_t *trans = NULL, *res_json = NULL;
	char hash[PMBOT_PROMPTIR_HASH_SIZE];
	int rc;

	CHECK(pmbot_governance_new(&gov, NULL, NULL, &diags) == PMBOT_OK);
	memset(&opts, 0, sizeof(opts));
	opts.timestamp = "2026-02-22T12:00:00Z";
	opts.max_context_refs = 3;
	rc = pmbot_promptir_pipeline(&res, &trans, &gr, ir, gov, &opts, &diags);
	CHECK(rc == PMBOT_OK || rc == PMBOT_EINVALID);
	CHECK(json_is_array(gr.violations));
	CHECK((rc == PMBOT_OK) == (gr.approved == 1));
	fuzz_put_json(out, gr.violations);
	if (rc == PMBOT_OK) {
		CHECK(res != NULL && json_is_array(trans));
		check_ir(res);
		CHECK(pmbot_promptir_to_json(&res_json, res) == PMBOT_OK);
		fuzz_put_json(out, res_json);
		fuzz_put_json(out, trans);
		CHECK(pmbot_promptir_hash(hash, res) == PMBOT_OK);
		CHECK(pmbot_buf_puts(out, hash) == 0);
	} else {
		CHECK(res == NULL && trans == NULL);
		CHECK(diags.errors > 0);
	}
	fuzz_check_diags(&diags, out);
	json_decref(res_json);
	json_decref(trans);
	pmbot_promptir_free(res);
	pmbot_governance_result_free(&gr);
	pmbot_governance_free(gov);
	pmbot_diag_list_free(&diags);
}

static int run_once(pmbot_buf *out, const json_t *in)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT, diags2 = PMBOT_DIAG_LIST_INIT;
	pmbot_promptir *ir = (pmbot_promptir *)(uintptr_t)1, *back = NULL;
	json_t *j = NULL, *j2 = NULL;
	char h1[PMBOT_PROMPTIR_HASH_SIZE], h2[PMBOT_PROMPTIR_HASH_SIZE];
	int rc;

	rc = pmbot_promptir_from_json(&ir, in, &diags);
	CHECK(rc == PMBOT_OK || rc == PMBOT_EINVALID || rc == PMBOT_ERROR);
	fuzz_check_diags(&diags, out);
	if (rc != PMBOT_OK) {
		CHECK(ir == NULL);
		if (rc == PMBOT_EINVALID)
			CHECK(diags.errors > 0);
		goto done;
	}
	CHECK(ir != NULL && diags.errors == 0);
	check_ir(ir);
	CHECK(pmbot_promptir_to_json(&j, ir) == PMBOT_OK);
	fuzz_put_json(out, j);
	CHECK(pmbot_promptir_from_json(&back, j, &diags2) == PMBOT_OK);
	CHECK(pmbot_promptir_to_json(&j2, back) == PMBOT_OK);
	CHECK(pmbot_json_equal(j, j2));
	CHECK(pmbot_promptir_hash(h1, ir) == PMBOT_OK);
	CHECK(pmbot_promptir_hash(h2, back) == PMBOT_OK);
	CHECK(!strcmp(h1, h2));
	CHECK(pmbot_buf_puts(out, h1) == 0);
	run_pipeline(out, ir);
done:
	json_decref(j);
	json_decref(j2);
	pmbot_promptir_free(back);
	pmbot_promptir_free(rc == PMBOT_OK ? ir : NULL);
	pmbot_diag_list_free(&diags);
	pmbot_diag_list_free(&diags2);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pmbot_buf one = PMBOT_BUF_INIT, two = PMBOT_BUF_INIT;
	json_error_t err;
	json_t *in;

	in = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	if (!in)
		return 0;
	if (run_once(&one, in) != PMBOT_ERROR) {
		CHECK(run_once(&two, in) != PMBOT_ERROR);
		CHECK(fuzz_same(&one, &two));
	}
	pmbot_buf_free(&one);
	pmbot_buf_free(&two);
	json_decref(in);
	return 0;
}
