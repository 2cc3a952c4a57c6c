/*
 * libFuzzer target for plan files: the changeset bundle that `pm-bot apply
 * --plan FILE` reads (a file anyone with access to the runner or the
 * repository could have edited) and what apply does with it before any
 * write: the approval check (pmbot_apply_check), "visibly applied"
 * (pmbot_changeset_is_applied), the flow compilation and validation
 * (pmbot_flow_compile, pmbot_flow_validate), and its rendering for the plan
 * comment (pmbot_plan_markdown).
 *
 * Input: the bundle as JSON (read like apply reads it: duplicate keys
 * refused). Any JSON value is passed on, not only a changeset_bundle/v1,
 * so the library's own checks are fuzzed too. The state is a fixed small
 * snapshot with managed issues and a project.
 * Properties checked (abort on failure):
 *  - check(bundle, bundle) is OK only when plan_hash is the hash of the
 *    bundle's changesets and fingerprint; EINVALID carries an error;
 *  - when it is OK, a fresh bundle without the first changeset (hash
 *    recomputed) may run only when that changeset is visibly applied in the
 *    state: an approval never covers a changeset that vanished unapplied;
 *  - pmbot_changeset_is_applied answers 0 or 1 for every changeset;
 *  - a compiled flow is valid or refused with errors; a bundle refused by
 *    compile has no flow;
 *  - the Markdown is valid UTF-8, holds no approval command a comment
 *    parser would take (pmbot_command_parse_bytes: the approve line is in a
 *    code block, and no bundle text makes another), and every line showing
 *    "/pm-bot apply …" shows the bundle's own plan_hash;
 *  - everything is the same bytes a second time.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pmbot/action.h"
#include "pmbot/apply.h"
#include "pmbot/buf.h"
#include "pmbot/diag.h"
#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/plan.h"
#include "pmbot/state.h"
#include "pmbot/utf8.h"

#include "fuzz_util.h"
#include "pmbot/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char state_json[] =
	"{\"schema_version\":\"state/v1\",\"repositories\":[{\"repo\":\"octo/app\",\"issues\":["
	"{\"number\":1,\"database_id\":101,\"node_id\":\"I_1\",\"title\":\"Checkout\","
	"\"body\":\"## Goal\\nPay\\n\\n<!-- pm-bot:id=F-1 rev=0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef -->\",\"labels\":[\"type:feature\",\"prio:P1\"],"
	"\"state\":\"open\",\"author\":\"github-actions[bot]\",\"author_type\":\"Bot\","
	"\"updated_at\":\"2026-11-02T10:00:00Z\",\"parent\":null,\"blocked_by\":[]},"
	"{\"number\":2,\"database_id\":102,\"node_id\":\"I_2\",\"title\":\"Add login page\","
	"\"body\":\"## Goal\\nLog in\\n\\n<!-- pm-bot:id=T-2 rev=0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef -->\",\"labels\":[\"type:task\"],\"state\":\"open\","
	"\"author\":\"github-actions[bot]\",\"author_type\":\"Bot\","
	"\"updated_at\":\"2026-11-02T10:00:00Z\",\"parent\":\"octo/app#1\","
	"\"blocked_by\":[\"octo/app#3\"]},"
	"{\"number\":3,\"database_id\":103,\"node_id\":\"I_3\",\"title\":\"Written by a person\","
	"\"body\":\"<!-- pm-bot:id=T-3 rev=0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef -->\",\"labels\":[],\"state\":\"open\","
	"\"author\":\"mallory\",\"author_type\":\"User\","
	"\"updated_at\":\"2026-11-02T10:00:00Z\",\"parent\":null,\"blocked_by\":[]}]}],"
	"\"project\":{\"owner\":\"octo\",\"number\":1,\"node_id\":\"PVT_1\",\"fields\":["
	"{\"id\":\"F_prio\",\"name\":\"Priority\",\"type\":\"single_select\",\"options\":["
	"{\"id\":\"p0\",\"name\":\"P0\"},{\"id\":\"p1\",\"name\":\"P1\"}]},"
	"{\"id\":\"F_est\",\"name\":\"Estimate (hrs)\",\"type\":\"number\"},"
	"{\"id\":\"F_notes\",\"name\":\"Notes\",\"type\":\"text\"}],"
	"\"items\":[{\"id\":\"PVTI_1\",\"issue\":\"octo/app#1\","
	"\"values\":{\"Priority\":\"P1\",\"Estimate (hrs)\":4}}]}}";

static pmbot_state *state;

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;

	(void)argc;
	(void)argv;
	/* Compiled flows carry generated_at: fix it so two runs agree. */
	setenv("PMBOT_NOW", "2026-11-22T12:00:00Z", 1);
	CHECK(pmbot_state_parse(&state, "state.json", state_json, sizeof(state_json) - 1,
		&diags) == PMBOT_OK);
	pmbot_diag_list_free(&diags);
	return 0;
}

/*
 * The plan_hash rule as the approval check applies it: a bundle without a
 * fingerprint hashes as one with an empty fingerprint.
 */
static int hash_of(char out[PMBOT_SHA256_HEX_SIZE], const json_t *bundle)
{
	const json_t *fp = json_object_get(bundle, "fingerprint");
	json_t *empty = fp ? NULL : json_array();
	int rc = pmbot_plan_hash(out, json_object_get(bundle, "changesets"), fp ? fp : empty);

	json_decref(empty);
	return rc;
}

/* A copy of `bundle` without its first changeset, its plan_hash recomputed. NULL if not possible. */
static json_t *without_first(const json_t *bundle)
{
	json_t *fresh = json_deep_copy(bundle), *cs;
	char hash[PMBOT_SHA256_HEX_SIZE];

	if (!fresh)
		return NULL;
	cs = json_object_get(fresh, "changesets");
	if (!json_is_array(cs) || json_array_size(cs) == 0 || json_array_remove(cs, 0) < 0 ||
	    hash_of(hash, fresh) < 0 ||
	    json_object_set_new(fresh, "plan_hash", json_string(hash)) < 0) {
		json_decref(fresh);
		return NULL;
	}
	return fresh;
}

static void run_once(pmbot_buf *out, const json_t *bundle)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const json_t *cs = json_object_get(bundle, "changesets"), *c;
	const char *plan_hash = json_string_value(json_object_get(bundle, "plan_hash"));
	pmbot_buf md = PMBOT_BUF_INIT, want = PMBOT_BUF_INIT;
	json_t *flow = (json_t *)(uintptr_t)1, *fresh;
	size_t i;
	int rc;

	rc = pmbot_apply_check(bundle, bundle, state, NULL, &diags);
	CHECK(rc == PMBOT_OK || rc == PMBOT_EINVALID || rc == PMBOT_ERROR);
	if (rc == PMBOT_EINVALID)
		CHECK(diags.errors > 0);
	if (rc == PMBOT_OK) {
		char hash[PMBOT_SHA256_HEX_SIZE];

		CHECK(diags.errors == 0);
		CHECK(plan_hash && json_is_array(cs));
		CHECK(hash_of(hash, bundle) == 0);
		CHECK(!strcmp(hash, plan_hash));
		if ((fresh = without_first(bundle))) {
			int r2 = pmbot_apply_check(bundle, fresh, state, NULL, &diags);

			CHECK(r2 == PMBOT_OK || r2 == PMBOT_EINVALID || r2 == PMBOT_ERROR);
			if (r2 == PMBOT_OK)
				CHECK(pmbot_changeset_is_applied(json_array_get(cs, 0), state, NULL) == 1);
			CHECK(pmbot_buf_printf(out, "resume %d\n", r2) == 0);
			json_decref(fresh);
		}
	}
	CHECK(pmbot_buf_printf(out, "check %d\n", rc) == 0);
	json_array_foreach(cs, i, c) {
		int yes = pmbot_changeset_is_applied(c, state, NULL);

		CHECK(yes == 0 || yes == 1);
		CHECK(pmbot_buf_putc(out, (char)('0' + yes)) == 0);
	}
	rc = pmbot_flow_compile(&flow, bundle, NULL, "plan.json");
	CHECK(rc == PMBOT_OK || rc == PMBOT_EINVALID || rc == PMBOT_ERROR);
	if (rc == PMBOT_OK) {
		int v;

		CHECK(flow != NULL);
		v = pmbot_flow_validate(flow, &diags);
		CHECK(v == PMBOT_OK || v == PMBOT_EINVALID || v == PMBOT_ERROR);
		if (v == PMBOT_EINVALID)
			CHECK(diags.errors > 0);
		fuzz_put_json(out, flow);
		json_decref(flow);
	}
	fuzz_check_diags(&diags, out);
	if (pmbot_plan_markdown(&md, bundle, 0, "plan.json") == 0) {
		CHECK(md.len == 0 || pmbot_utf8_valid(md.buf, md.len, NULL, NULL, NULL));
		CHECK(plan_hash != NULL);
		if (md.len) {
			const char *p = md.buf;
			pmbot_command cmd;

			/* Quoting or pasting the plan comment must approve nothing, whatever the bundle says. */
			CHECK(pmbot_command_parse_bytes(&cmd, md.buf, md.len) == PMBOT_OK);
			CHECK(cmd.kind == PMBOT_CMD_NONE);
			/* The only approve command shown is the one for this bundle's hash. */
			CHECK(pmbot_buf_printf(&want, "/pm-bot apply %s\n", plan_hash) == 0);
			while ((p = strstr(p, "\n/pm-bot apply "))) {
				p++;
				CHECK(!strncmp(p, want.buf, want.len));
			}
		}
		CHECK(pmbot_buf_put(out, md.buf, md.len) == 0);
	}
	pmbot_buf_free(&md);
	pmbot_buf_free(&want);
	pmbot_diag_list_free(&diags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pmbot_buf one = PMBOT_BUF_INIT, two = PMBOT_BUF_INIT;
	json_error_t jerr;
	json_t *bundle;

	if (!state)
		LLVMFuzzerInitialize(NULL, NULL);
	bundle = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
		&jerr);
	if (!bundle)
		return 0;
	run_once(&one, bundle);
	run_once(&two, bundle);
	CHECK(fuzz_same(&one, &two));
	json_decref(bundle);
	pmbot_buf_free(&one);
	pmbot_buf_free(&two);
	return 0;
}
