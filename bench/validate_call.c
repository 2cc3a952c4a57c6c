/*
 * validate_call: the CPU time of one in-process `validate` of a report,
 * measured the way bench/py_ref.py measures the Python pm-bot's
 * validate_report_ir, so that bench/goals.sh can set the two side by side
 * like for like: the file is read once before timing, the process's start
 * is left out, and each of REPEAT calls (default 5) is timed with the
 * process CPU clock.
 *
 *   validate_call REPORT [REPEAT]
 *
 * Each call is what `pm-bot validate REPORT` runs after reading the file:
 * pmbot_workgraph_check() with the default limits (extract, parse, schema
 * and rules, graph checks). Prints "BEST_MS ERRORS": the best call in
 * milliseconds (three decimals) and the error diagnostics of the last
 * call, so that a broken report is not timed as a fast one. Figures only.
 * Exit 0, 1 on a runtime failure, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/diag.h"
#include "pmbot/fs.h"
#include "pmbot/mem.h"
#include "pmbot/workgraph.h"
#include "pmbot/banned.h"

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	pmbot_limits lim;
	pmbot_buf text;
	double best = -1.0;
	size_t errors = 0, k;
	long repeat = 5, i;
	int rc = 1;

	if (argc < 2 || argc > 3 || (argc == 3 && (repeat = strtol(argv[2], NULL, 10)) < 1)) {
		fputs("usage: validate_call REPORT [REPEAT]\n", stderr);
		return 2;
	}
	/* As pm-bot's main does: glibc's defaults hand the document's pages back between calls. */
	(void)pmbot_mem_keep_freed();
	(void)pmbot_mem_huge_heap();
	pmbot_limits_default(&lim);
	pmbot_buf_init(&text, lim.max_bytes);
	if (pmbot_fs_read(&text, argv[1]) < 0) {
		perror(argv[1]);
		goto done;
	}
	for (i = 0; i < repeat; i++) {
		pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
		double start = cpu_ms(), spent;
		int r = pmbot_workgraph_check(argv[1], text.buf, text.len, &lim, &diags);

		spent = cpu_ms() - start;
		errors = 0;
		for (k = 0; k < diags.count; k++)
			errors += diags.items[k].severity == PMBOT_SEV_ERROR;
		pmbot_diag_list_free(&diags);
		if (r == PMBOT_ERROR) {
			fputs("validate_call: out of memory\n", stderr);
			goto done;
		}
		if (best < 0 || spent < best)
			best = spent;
	}
	printf("%.3f %zu\n", best, errors);
	rc = 0;
done:
	pmbot_buf_free(&text);
	return rc;
}
