#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm_int.h"
#include "pmbot/apply.h"
#include "pmbot/plan.h"
#include "pmbot/state.h"
#include "pmbot/banned.h"

int cmd_advise(int argc, char **argv)
{
	static const struct option opts[] = {
		LLM_OPTIONS,
		{ "capability", required_argument, NULL, 'c' },
		{ "state", required_argument, NULL, 's' },
		{ "request", required_argument, NULL, 'q' },
		{ "allow-direct-github-writes", no_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *self = cmd_lookup("advise");
	const pmbot_capability *cap = NULL;
	struct llm_opts o;
	struct llm_run r;
	pmbot_backend *backend = NULL;
	pmbot_state *st = NULL;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf user = PMBOT_BUF_INIT, denied = PMBOT_BUF_INIT;
	pmbot_buf err = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT, state_path = PMBOT_BUF_INIT;
	pmbot_buf intent = PMBOT_BUF_INIT;
	json_t *effective = NULL, *result = NULL, *audit = NULL, *vars = NULL, *bundle = NULL;
	json_t *board = NULL, *source = NULL, *options = NULL;
	const char *capability = NULL, *state_arg = NULL, *request = NULL;
	char *target = NULL, *dump = NULL;
	int c, rc = EXIT_RUNTIME, mutation, direct = 0, refused = 0;

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	o.contexts = calloc((size_t)argc, sizeof(*o.contexts));
	o.constraints = calloc((size_t)argc, sizeof(*o.constraints));
	if (!o.contexts || !o.constraints)
		goto done;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		int p = llm_parse_option(&o, c, optarg);

		if (p == 0)
			continue;
		if (p == 1) {
			rc = cmd_usage_error(self, "--budget takes a number of tokens from 1 to 1000000");
			goto done;
		}
		switch (c) {
		case 'c': capability = optarg; break;
		case 's': state_arg = optarg; break;
		case 'q': request = optarg; break;
		case 'W': direct = 1; break;
		default: rc = cmd_bad_option(self, c, argv); goto done;
		}
	}
	if (optind < argc) {
		rc = cmd_usage_error(self, "unexpected argument '%s'", argv[optind]);
		goto done;
	}
	if (!capability || !strcmp(capability, "report_ir_draft") ||
	    pmbot_capability_find(&cap, capability, NULL) < 0) {
		rc = cmd_usage_error(self, "--capability must be board_strategy_review or "
			"issue_adjustment_proposal");
		goto done;
	}
	mutation = cap->cls == PMBOT_CAPABILITY_MUTATION_PROPOSAL;
	if (mutation && !request) {
		rc = cmd_usage_error(self, "%s needs --request TEXT: what to adjust", cap->id);
		goto done;
	}
	/* The class policy first: proposals need a human's approval, never a direct write. */
	/* Asking for a direct write is only ever refused: it exists to be audited as denied. */
	if (direct && !(options = json_pack("{s:b}", "allow_direct_github_writes", 1)))
		goto done;
	if (pmbot_capability_policy_check(&effective, &denied, cap, options) != PMBOT_OK) {
		fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(denied.len ? denied.buf : "out of memory"));
		rc = denied.len ? EXIT_INVALID : EXIT_RUNTIME;
		goto done;
	}
	if (pmbot_buf_puts(&intent, mutation ? request : "Review the board and recommend priorities") < 0)
		goto done;
	if ((rc = llm_prepare(&r, &o, cap->id, mutation ? "replanner" : "reviewer", intent.buf)) !=
	    EXIT_OK)
		goto done;
	rc = EXIT_RUNTIME;
	if (!state_arg && pmbot_buf_printf(&state_path, "%s/.pm-bot/state.json",
		o.repo ? o.repo : ".") < 0)
		goto done;
	if (pmbot_file_backend_open(&backend, state_arg ? state_arg : state_path.buf, NULL, &diags) < 0) {
		cmd_print_diags(stderr, &diags);
		goto done;
	}
	target = r.config->repos.count ? strdup(r.config->repos.items[0]) : cmd_current_repo(r.repo);
	if (!target) {
		fputs("pm-bot: no repository: list one under `repos` in .github/pm-bot.yml\n", stderr);
		rc = EXIT_INVALID;
		goto done;
	}
	if (backend->read(&st, backend, NULL, 0, r.config->project_owner, r.config->project_number,
		&err) < 0) {
		fprintf(stderr, "pm-bot: cannot read the state: %s\n", cmd_show_msg(err.buf));
		goto done;
	}
	if (pmbot_state_board(&board, st) < 0 || !(dump = json_dumps(board, JSON_COMPACT | JSON_SORT_KEYS)))
		goto done;
	vars = mutation ? json_pack("{s:s, s:s}", "issues", dump, "request", request)
		: json_pack("{s:s}", "board", dump);
	if (!vars || llm_render(&user, &r, cap, NULL, vars) < 0)
		goto done;
	if ((rc = llm_ask(&result, &audit, &r, &o, cap, user.buf)) != EXIT_OK)
		goto done;
	rc = EXIT_RUNTIME;
	/* pm-bot's own bundle, held to apply's rules, before the run is recorded. */
	if (mutation) {
		if (pmbot_llm_run_proposal_source(&source, cap, audit) < 0)
			goto done;
		refused = pmbot_proposal_bundle(&bundle, result, st, r.config, target, source, &diags);
		if (refused == PMBOT_ERROR)
			goto done;
	}
	json_object_set_new(audit, "outcome", json_string(pmbot_llm_run_outcome(cap, refused)));
	if (llm_audit(&o, audit) < 0)
		goto done;
	if (!mutation) {
		rc = cmd_print_json(result);
		goto done;
	}
	if (refused) {
		cmd_print_diags(stderr, &diags);
		fputs("pm-bot: the model's proposal breaks rules every plan obeys: nothing was "
			"written\n", stderr);
		rc = EXIT_INVALID;
		goto done;
	}
	if ((rc = write_bundle(o.out ? o.out : "proposal.json", bundle)) != EXIT_OK)
		goto done;
	rc = EXIT_RUNTIME;
	/* Every change in pm-bot's own words first; the model's come last, labelled as such. */
	if (pmbot_plan_markdown(&text, bundle, SIZE_MAX, o.out ? o.out : "proposal.json") < 0)
		goto done;
	fputs(text.buf, stdout);
	printf("\nProposed %zu change%s (%s). Nothing is applied until a human approves:\n\n"
		"  pm-bot apply --plan %s --approve %s\n", pmbot_plan_count(bundle),
		pmbot_plan_count(bundle) == 1 ? "" : "s", cmd_show(o.out ? o.out : "proposal.json"),
		cmd_show(o.out ? o.out : "proposal.json"), json_string_value(json_object_get(bundle, "plan_hash")));
	printf("\nThe model's own summary (its words, not pm-bot's; the changes above are what "
		"would be applied):\n%s\n",
		cmd_show_msg(json_string_value(json_object_get(result, "summary"))));
	rc = EXIT_OK;
done:
	free(target);
	free(dump);
	json_decref(effective);
	json_decref(options);
	json_decref(result);
	json_decref(audit);
	json_decref(vars);
	json_decref(bundle);
	json_decref(board);
	json_decref(source);
	pmbot_state_free(st);
	if (backend)
		backend->free(backend);
	llm_run_free(&r);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&user);
	pmbot_buf_free(&denied);
	pmbot_buf_free(&err);
	pmbot_buf_free(&text);
	pmbot_buf_free(&state_path);
	pmbot_buf_free(&intent);
	free(o.contexts);
	free(o.constraints);
	return rc;
}
