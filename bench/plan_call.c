/*
 * plan_call: the CPU time of one in-process `plan --format json` of a
 * repository, measured as bench/py_ref.py measures the Python pm-bot's
 * validate_report_ir + build_changeset_preview, so that bench/goals.sh can
 * set the two side by side like for like: the process's start is left out
 * (loading its libraries, libgit2's set-up, which on Debian parses the
 * system's CA bundle, and opening the repository), and each of REPEAT
 * calls (default 5) is timed with the process CPU clock.
 *
 *   plan_call REPO STATE [REPEAT]
 *
 * Each call is what `pm-bot plan --repo REPO --state STATE --format json`
 * runs after opening the repository: pmbot_inputs_load() (configuration,
 * forms, the reports read from HEAD, the State file) and
 * pmbot_inputs_plan() with the bundle's canonical JSON in a buffer, as
 * cmd_plan.c asks for it. Prints "BEST_MS BYTES": the best call in
 * milliseconds (three decimals) and the bytes of JSON of the last, so that
 * a plan that came out short is not taken for a fast one.
 * Figures only. Exit 0, 1 on a failure, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/diag.h"
#include "pmbot/hash.h"
#include "pmbot/inputs.h"
#include "pmbot/mem.h"
#include "pmbot/repo.h"
#include "pmbot/banned.h"

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* One plan: 0 with its bytes of JSON, or -1 having said why. */
static int plan_once(size_t *bytes, pmbot_repo *repo, const char *workdir, const char *state)
{
	pmbot_inputs_opts o = { 0 };
	pmbot_inputs in;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf cj = PMBOT_BUF_INIT;
	json_t *bundle = NULL;
	int r, err = -1;

	o.repo = repo;
	o.workdir = workdir;
	o.rev = "HEAD";
	o.state = state;
	r = pmbot_inputs_load(&in, &o, &diags);
	if (r == PMBOT_OK) {
		in.canonical = &cj;
		in.lean = 1;
		r = pmbot_inputs_plan(&bundle, &in, NULL, &diags);
	}
	if (r != PMBOT_OK || !bundle || !cj.len) {
		fprintf(stderr, "plan_call: the plan failed (%d, %zu diagnostics)\n", r, diags.count);
		goto done;
	}
	*bytes = cj.len;
	err = 0;
done:
	json_decref(bundle);
	pmbot_buf_free(&cj);
	pmbot_inputs_free(&in);
	pmbot_diag_list_free(&diags);
	return err;
}

int main(int argc, char **argv)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_repo *repo = NULL;
	double best = -1.0;
	size_t bytes = 0;
	long repeat = 5, i;
	int rc = 1;

	if (argc < 3 || argc > 4 || (argc == 4 && (repeat = strtol(argv[3], NULL, 10)) < 1)) {
		fputs("usage: plan_call REPO STATE [REPEAT]\n", stderr);
		return 2;
	}
	/* As pm-bot's main does: glibc's defaults hand the plan's pages back between calls. */
	(void)pmbot_mem_keep_freed();
	(void)pmbot_mem_huge_heap();
	if (pmbot_sha256_init(&err) < 0 || pmbot_repo_global_init(&err) < 0 ||
	    pmbot_repo_open(&repo, argv[1], &err) < 0) {
		fprintf(stderr, "plan_call: %s\n", err.len ? err.buf : "cannot open the repository");
		goto done;
	}
	for (i = 0; i < repeat; i++) {
		double start = cpu_ms(), spent;

		if (plan_once(&bytes, repo, argv[1], argv[2]) < 0)
			goto done;
		spent = cpu_ms() - start;
		if (best < 0 || spent < best)
			best = spent;
	}
	printf("%.3f %zu\n", best, bytes);
	rc = 0;
done:
	pmbot_repo_free(repo);
	pmbot_buf_free(&err);
	return rc;
}
