#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm_int.h"
#include "pmbot/apply.h"
#include "pmbot/llm.h"
#include "pmbot/net.h"
#include "pmbot/banned.h"

int llm_render(pmbot_buf *out, struct llm_run *r, const pmbot_capability *cap,
	const char *report_ref, json_t *extra)
{
	char *repo = cmd_current_repo(r->repo);
	int rc = pmbot_llm_run_render(out, &r->run, cap, report_ref, extra, repo, &r->run.diags);

	if (rc == PMBOT_EINVALID)
		cmd_print_diags(stderr, &r->run.diags);
	free(repo);
	return rc < 0 ? -1 : 0;
}

int llm_audit(const struct llm_opts *o, const json_t *fields)
{
	pmbot_buf path = PMBOT_BUF_INIT;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	int rc = -1;

	if (pmbot_audit_repo_path(&path, o->repo) < 0)
		goto done;
	if (pmbot_audit_record(path.buf, "capability_run", fields, &diags) < 0) {
		cmd_print_diags(stderr, &diags);
		fprintf(stderr, "pm-bot: cannot write the audit ledger %s\n", cmd_show(path.buf));
		goto done;
	}
	rc = 0;
done:
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&path);
	return rc;
}

/*
 * Call the configured provider with `system` and `user`. `*text` gets the
 * model's answer. Prints failures; EXIT_*.
 */
static int llm_call(pmbot_buf *text, pmbot_llm_config *cfg, const pmbot_promptir *ir,
	const char *system, const char *user)
{
	pmbot_llm_client *client = NULL;
	pmbot_buf err = PMBOT_BUF_INIT;
	int rc = EXIT_RUNTIME;

	if (pmbot_net_global_init(&err) < 0) {
		fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(err.buf));
		pmbot_buf_free(&err);
		return EXIT_RUNTIME;
	}
	if (pmbot_llm_client_new(&client, cfg, &err) < 0) {
		fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(err.buf));
		goto done;
	}
	/* A model can take a minute: say so on stderr, so stdout (the draft) stays clean. */
	fprintf(stderr, "pm-bot: waiting for the model (%s, %s)...\n",
		cmd_show(pmbot_llm_provider_name(cfg->provider)), cmd_show(cfg->model ? cfg->model :
		"default model"));
	if (pmbot_llm_complete(text, client, system, user, ir->temperature_hint,
		(long)ir->token_budget, &err) < 0) {
		fprintf(stderr, "pm-bot: the model call failed: %s\n", cmd_show_msg(err.buf));
		goto done;
	}
	rc = EXIT_OK;
done:
	pmbot_llm_client_free(client);
	pmbot_net_global_cleanup();
	pmbot_buf_free(&err);
	return rc;
}

static int llm_provider(pmbot_llm_config *cfg)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	int r;

	pmbot_llm_config_init(cfg);
	r = pmbot_llm_config_from_env(cfg, &err);
	if (r < 0)
		fprintf(stderr, "pm-bot: %s\n", err.len ? cmd_show_msg(err.buf) :
			"no model provider is configured: set PM_BOT_LLM_PROVIDER (openai or anthropic), "
			"PM_BOT_LLM_MODEL and, for hosted APIs, PM_BOT_LLM_API_KEY");
	pmbot_buf_free(&err);
	return r < 0 ? EXIT_RUNTIME : EXIT_OK;
}

int llm_ask(json_t **result, json_t **audit, struct llm_run *r, const struct llm_opts *o,
	const pmbot_capability *cap, const char *user)
{
	pmbot_llm_config llm;
	pmbot_buf answer = PMBOT_BUF_INIT;
	int rc;

	*result = *audit = NULL;
	if ((rc = llm_provider(&llm)) != EXIT_OK)
		goto done;
	if ((rc = llm_call(&answer, &llm, r->run.ir, pmbot_capability_system_prompt(), user)) != EXIT_OK)
		goto done;
	rc = pmbot_llm_run_answer(result, audit, cap, llm.model, pmbot_llm_provider_name(llm.provider),
		r->run.ir->ir_id, user, answer.buf, answer.len);
	if (rc == PMBOT_EINVALID) {
		/* The spec's payload, on stdout for machines; the reason on stderr for people. */
		cmd_print_json(*result);
		fprintf(stderr, "pm-bot: the model's answer is not a valid %s output; nothing written\n",
			cap->id);
		llm_audit(o, *audit);
		json_decref(*result);
		*result = NULL;
		rc = EXIT_INVALID;
		goto done;
	}
	rc = rc == PMBOT_OK ? EXIT_OK : EXIT_RUNTIME;
done:
	pmbot_llm_config_free(&llm);
	pmbot_buf_free(&answer);
	return rc;
}

void llm_run_free(struct llm_run *r)
{
	pmbot_llm_run_free(&r->run);
	pmbot_config_free(r->config);
	pmbot_repo_free(r->repo);
	r->config = NULL;
	r->repo = NULL;
}

/* $PMBOT_NOW, else the clock: RFC 3339 in UTC. */
static char *now_text(void)
{
	const char *env = getenv("PMBOT_NOW");
	char buf[32];
	struct tm tm;
	time_t t;

	if (env && *env)
		return strdup(env);
	t = time(NULL);
	if (!gmtime_r(&t, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
		return NULL;
	return strdup(buf);
}

void llm_print_violations(const json_t *violations)
{
	json_t *v;
	size_t i;

	json_array_foreach(violations, i, v)
		fprintf(stderr, "pm-bot: governance: %s %s: %s matches \"%s\" (%s)\n",
			cmd_show(json_string_value(json_object_get(v, "action"))),
			cmd_show(json_string_value(json_object_get(v, "policy"))),
			cmd_show(json_string_value(json_object_get(v, "field"))),
			cmd_show(json_string_value(json_object_get(v, "matched"))),
			cmd_show(json_string_value(json_object_get(v, "type"))));
}

int llm_prepare(struct llm_run *r, const struct llm_opts *o, const char *capability,
	const char *role, const char *intent)
{
	static const pmbot_llm_run init = PMBOT_LLM_RUN_INIT;
	pmbot_llm_run_request req;
	char commit[PMBOT_OID_HEX_SIZE];
	pmbot_buf err = PMBOT_BUF_INIT;
	char *now = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	r->run = init;
	if ((rc = cmd_open_repo(&r->repo, o->repo ? o->repo : ".")) != EXIT_OK)
		return rc;
	if (pmbot_repo_resolve(commit, r->repo, o->rev ? o->rev : "HEAD", &err) < 0) {
		fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(err.buf));
		pmbot_buf_free(&err);
		return EXIT_INVALID;
	}
	if ((rc = cmd_load_config(&r->config, r->repo, commit)) != EXIT_OK)
		return rc;
	if (!(now = now_text()))
		return EXIT_RUNTIME;
	memset(&req, 0, sizeof(req));
	req.capability = capability;
	req.role = role;
	req.intent = intent;
	req.file = o->file;
	req.file_text = o->file_text;
	req.file_len = o->file_len;
	req.contexts = (const char *const *)o->contexts;
	req.n_contexts = o->n_contexts;
	req.constraints = (const char *const *)o->constraints;
	req.n_constraints = o->n_constraints;
	req.budget = o->budget;
	req.now = now;
	rc = pmbot_llm_run_prepare(&r->run, &req, r->repo, commit, r->config);
	free(now);
	if (rc == PMBOT_ERROR)
		return EXIT_RUNTIME;
	/* Violations are shown whether or not they denied; after a denial nothing else is. */
	llm_print_violations(r->run.gov_result.violations);
	if (rc == PMBOT_EINVALID && !r->run.denied)
		cmd_print_diags(stderr, &r->run.diags);
	return rc == PMBOT_OK ? EXIT_OK : EXIT_INVALID;
}

int llm_parse_option(struct llm_opts *o, int c, const char *arg)
{
	char *end;

	switch (c) {
	case 'R': o->repo = arg; return 0;
	case 'r': o->rev = arg; return 0;
	case 'C': o->contexts[o->n_contexts++] = (char *)arg; return 0;
	case 'K': o->constraints[o->n_constraints++] = (char *)arg; return 0;
	case 'o': o->out = arg; return 0;
	case 'j': o->json = 1; return 0;
	case 'b':
		o->budget = strtol(arg, &end, 10);
		return *end || o->budget < 1 || o->budget > 1000000 ? 1 : 0;
	}
	return -1;
}
