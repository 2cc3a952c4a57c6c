/*
 * libFuzzer target for pmbot_state_parse(): a state snapshot is read from
 * a file in the repository (the file backend), from the cache, and built
 * from GitHub answers that carry text anyone can write; a corrupt or
 * hostile one must be refused with diagnostics, never crash.
 *
 * Input: the state document, passed with its exact length and no terminator.
 * Properties checked (abort on failure):
 *  - the result is OK, EINVALID or ERROR; OK gives a state and no error,
 *    EINVALID no state and at least one error, each diagnostic well formed;
 *  - an accepted state's pmbot_state_canonical() is byte for byte the
 *    canonical JSON of pmbot_state_to_json(); parsing that again is
 *    accepted and gives the same bytes (a fixed point);
 *  - every issue is found again by its ref, every item by its issue, and
 *    issues are sorted and unique;
 *  - a second parse of the input gives the same diagnostics and bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pmbot/buf.h"
#include "pmbot/diag.h"
#include "pmbot/json.h"
#include "pmbot/state.h"

#include "fuzz_util.h"
#include "pmbot/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Parse and check; the canonical bytes (or the diagnostics) go to `out`. */
static int run_once(pmbot_buf *out, const char *text, size_t len, pmbot_state **keep)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_state *s = (pmbot_state *)(uintptr_t)1;
	int rc = pmbot_state_parse(&s, "state.json", text, len, &diags);

	CHECK(rc == PMBOT_OK || rc == PMBOT_EINVALID || rc == PMBOT_ERROR);
	if (rc != PMBOT_OK)
		CHECK(s == NULL);
	if (rc == PMBOT_EINVALID)
		CHECK(diags.errors > 0);
	if (rc == PMBOT_OK)
		CHECK(s != NULL && diags.errors == 0);
	fuzz_check_diags(&diags, out);
	if (rc == PMBOT_OK && pmbot_state_canonical(out, s) < 0)
		rc = PMBOT_ERROR;
	pmbot_diag_list_free(&diags);
	if (rc == PMBOT_OK && keep)
		*keep = s;
	else
		pmbot_state_free(rc == PMBOT_OK ? s : NULL);
	return rc;
}

static void check_state(const pmbot_state *s)
{
	pmbot_buf ref = PMBOT_BUF_INIT, fast = PMBOT_BUF_INIT, slow = PMBOT_BUF_INIT;
	json_t *doc = NULL;
	size_t i;

	for (i = 0; i < s->n_issues; i++) {
		const pmbot_issue *is = &s->issues[i];

		CHECK(is->repo && is->number >= 1);
		pmbot_buf_clear(&ref);
		CHECK(pmbot_buf_printf(&ref, "%s#%ld", is->repo, is->number) == 0);
		CHECK(pmbot_state_issue(s, ref.buf) == is);
	}
	if (s->project)
		for (i = 0; i < s->project->n_items; i++)
			CHECK(s->project->items[i].issue && s->project->items[i].id);
	/* The fast writer and the JSON tree agree byte for byte. */
	if (pmbot_state_canonical(&fast, s) == 0 && pmbot_state_to_json(&doc, s) == PMBOT_OK) {
		if (pmbot_json_canonical(&slow, doc) == 0)
			CHECK(fuzz_same(&fast, &slow));
	}
	json_decref(doc);
	pmbot_buf_free(&ref);
	pmbot_buf_free(&fast);
	pmbot_buf_free(&slow);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *exact = fuzz_exact_copy(data, size);
	pmbot_buf one = PMBOT_BUF_INIT, two = PMBOT_BUF_INIT, canon = PMBOT_BUF_INIT;
	pmbot_buf again = PMBOT_BUF_INIT;
	pmbot_state *s = NULL, *s2 = NULL;
	int rc1, rc2;

	rc1 = run_once(&one, exact, size, &s);
	rc2 = run_once(&two, exact, size, NULL);
	if (rc1 != PMBOT_ERROR && rc2 != PMBOT_ERROR) {
		CHECK(rc1 == rc2);
		CHECK(fuzz_same(&one, &two));
	}
	if (s) {
		check_state(s);
		int rc3 = pmbot_state_canonical(&canon, s) == 0 ?
			run_once(&again, canon.buf, canon.len, &s2) : PMBOT_ERROR;

		/* What pm-bot writes, pm-bot reads back. */
		CHECK(rc3 != PMBOT_EINVALID);
		if (rc3 == PMBOT_OK) {
			pmbot_buf_clear(&again);
			CHECK(pmbot_state_canonical(&again, s2) == 0);
			CHECK(fuzz_same(&canon, &again));
		}
	}
	pmbot_state_free(s);
	pmbot_state_free(s2);
	pmbot_buf_free(&one);
	pmbot_buf_free(&two);
	pmbot_buf_free(&canon);
	pmbot_buf_free(&again);
	free(exact);
	return 0;
}
