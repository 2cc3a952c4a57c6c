/*
 * libFuzzer target for the repository configuration: .github/pm-bot.yml
 * comes from the branch being planned, which a pull request author
 * controls. pmbot_config_parse() reads it, and its `llm.policies` go to
 * pmbot_governance_new(), which builds the policy checker from them.
 *
 * Input: the YAML text, passed with its exact length and no terminator.
 * Properties checked (abort on failure):
 *  - OK gives a config and no error; EINVALID gives no config and an
 *    error; every diagnostic is well formed;
 *  - the config serialises (pmbot_config_to_json);
 *  - llm_policies, when set, is an array; governance accepts or rejects
 *    it (never fails), an accepted checker lists its policies and checks
 *    an IR, and a rejection says why under "/llm/policies";
 *  - a second run gives the same bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pmbot/buf.h"
#include "pmbot/source.h"
#include "pmbot/diag.h"
#include "pmbot/llm.h"

#include "fuzz_util.h"
#include "pmbot/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run_governance(pmbot_buf *out, const json_t *policies)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_governance *gov = (pmbot_governance *)(uintptr_t)1;
	pmbot_governance_result gr = PMBOT_GOVERNANCE_RESULT_INIT;
	pmbot_promptir *ir = NULL;
	json_t *list = NULL;
	size_t i;
	int rc;

	rc = pmbot_governance_new(&gov, policies, "/llm/policies", &diags);
	CHECK(rc == PMBOT_OK || rc == PMBOT_EINVALID);
	fuzz_check_diags(&diags, out);
	if (rc != PMBOT_OK) {
		CHECK(gov == NULL);
		CHECK(diags.errors > 0);
		for (i = 0; i < diags.count; i++)
			CHECK(!strncmp(diags.items[i].path, "/llm/policies", 13));
		goto done;
	}
	CHECK(gov != NULL);
	CHECK(pmbot_governance_policies(&list, gov) == PMBOT_OK);
	CHECK(json_is_array(list));
	CHECK(json_array_size(list) >= (policies ? json_array_size(policies) : 0));
	fuzz_put_json(out, list);
	/* An IR that touches every policy type, so custom policies are matched. */
	CHECK(pmbot_promptir_new(&ir, "architect", "Design unlimited tokens auth",
		PMBOT_PHASE_PLANNING, 3000, "a1b2c3d4", NULL) == PMBOT_OK);
	CHECK(pmbot_promptir_add_context_ref(ir, "file:/etc/passwd") == PMBOT_OK);
	CHECK(pmbot_promptir_add_context_ref(ir, "s3://production/x") == PMBOT_OK);
	CHECK(pmbot_promptir_add_constraint(ir, "skip tests") == PMBOT_OK);
	CHECK(pmbot_governance_check(&gr, gov, ir) == PMBOT_OK);
	CHECK(json_is_array(gr.violations));
	CHECK(gr.approved == 0 || gr.approved == 1);
	fuzz_put_json(out, gr.violations);
done:
	json_decref(list);
	pmbot_governance_result_free(&gr);
	pmbot_promptir_free(ir);
	pmbot_governance_free(rc == PMBOT_OK ? gov : NULL);
	pmbot_diag_list_free(&diags);
}

static int run_once(pmbot_buf *out, const char *text, size_t len)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_config *cfg = (pmbot_config *)(uintptr_t)1;
	json_t *j = NULL;
	int rc;

	rc = pmbot_config_parse(&cfg, "fuzz.yml", text, len, "acme/widgets", &diags);
	CHECK(rc == PMBOT_OK || rc == PMBOT_EINVALID || rc == PMBOT_ERROR);
	fuzz_check_diags(&diags, out);
	if (rc != PMBOT_OK) {
		CHECK(cfg == NULL);
		if (rc == PMBOT_EINVALID)
			CHECK(diags.errors > 0);
		goto done;
	}
	CHECK(cfg != NULL && diags.errors == 0);
	CHECK(pmbot_config_to_json(&j, cfg) == PMBOT_OK);
	fuzz_put_json(out, j);
	CHECK(cfg->llm_policies == NULL || json_is_array(cfg->llm_policies));
	run_governance(out, cfg->llm_policies);
done:
	json_decref(j);
	pmbot_config_free(rc == PMBOT_OK ? cfg : NULL);
	pmbot_diag_list_free(&diags);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_exact_copy(data, size);
	pmbot_buf one = PMBOT_BUF_INIT, two = PMBOT_BUF_INIT;

	if (run_once(&one, text, size) != PMBOT_ERROR) {
		CHECK(run_once(&two, text, size) != PMBOT_ERROR);
		CHECK(fuzz_same(&one, &two));
	}
	pmbot_buf_free(&one);
	pmbot_buf_free(&two);
	free(text);
	return 0;
}
