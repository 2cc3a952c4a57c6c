#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pmbot/common.h"
#include "pmbot/banned.h"

/* Callers branch on these with ==: two names for one number would mix two outcomes. */
static void test_errors__every_code_has_its_own_negative_number(void **unused)
{
	static const int codes[] = {
		PMBOT_ERROR, PMBOT_EINVALID, PMBOT_ENOTFOUND, PMBOT_ETOOBIG, PMBOT_REPO_ETOOBIG,
		PMBOT_GITHUB_EHTTP, PMBOT_GITHUB_EUNKNOWN_OUTCOME, PMBOT_GITHUB_ETRANSPORT,
		PMBOT_GITHUB_ERATELIMIT, PMBOT_GITHUB_ETOOBIG, PMBOT_GITHUB_EGRAPHQL,
		PMBOT_GITHUB_EBUDGET, PMBOT_GH_EFORBIDDEN, PMBOT_GH_EEXISTS, PMBOT_LOCK_EBUSY,
		PMBOT_BACKEND_EPAUSED, PMBOT_LLM_EHTTP, PMBOT_LLM_ETRANSPORT, PMBOT_LLM_ETOOBIG,
		PMBOT_LLM_EBADRESPONSE,
	};
	size_t i, j, n = sizeof(codes) / sizeof(codes[0]);

	(void)unused;
	assert_int_equal(PMBOT_OK, 0);
	for (i = 0; i < n; i++) {
		assert_true(codes[i] < 0);
		for (j = i + 1; j < n; j++)
			assert_int_not_equal(codes[i], codes[j]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors__every_code_has_its_own_negative_number),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
