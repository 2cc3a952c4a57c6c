#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "llm_int.h"
#include "pmbot/apply.h"
#include "pmbot/capability.h"
#include "pmbot/fs.h"
#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/llm.h"
#include "pmbot/source.h"
#include "pmbot/banned.h"

/* Every resolved reference but the report, as one text for {{context}}. */
static int context_text(pmbot_buf *out, const json_t *context, const char *skip_ref)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(context, "refs"), i, e) {
		const char *ref = json_string_value(json_object_get(e, "ref"));

		if (skip_ref && ref && !strcmp(ref, skip_ref))
			continue;
		if (pmbot_buf_printf(out, "### %s\n\n%s\n\n", ref,
			json_string_value(json_object_get(e, "content"))) < 0)
			return -1;
	}
	if (!out->len && pmbot_buf_puts(out, "(none)") < 0)
		return -1;
	return 0;
}

/* The content of reference `ref`, or NULL (e.g. folded into the digest). */
static const char *context_of(const json_t *context, const char *ref)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(context, "refs"), i, e)
		if (!strcmp(json_string_value(json_object_get(e, "ref")), ref))
			return json_string_value(json_object_get(e, "content"));
	return NULL;
}

/* The user message of `cap` for run `r` (variables as the templates name them). */
int llm_render(pmbot_buf *out, struct llm_run *r, const pmbot_capability *cap,
	const char *report_ref, json_t *extra)
{
	pmbot_buf ctx = PMBOT_BUF_INIT, cons = PMBOT_BUF_INIT;
	json_t *vars = NULL, *names = NULL, *n;
	char *repo = cmd_current_repo(r->repo);
	const char *report = report_ref ? context_of(r->context, report_ref) : NULL;
	size_t i;
	int rc = -1;

	if (context_text(&ctx, r->context, report_ref) < 0)
		goto done;
	for (i = 0; i < r->ir->n_constraints; i++)
		if (pmbot_buf_printf(&cons, "- %s\n", r->ir->constraints[i]) < 0)
			goto done;
	if (!cons.len && pmbot_buf_puts(&cons, "(none)") < 0)
		goto done;
	if (pmbot_capability_variables(&names, cap) < 0 || !(vars = json_object()))
		goto done;
	/* Only the variables this template names: the renderer refuses extra ones. */
	json_array_foreach(names, i, n) {
		const char *name = json_string_value(n);
		json_t *v = json_object_get(extra, name);

		if (v)
			v = json_incref(v);
		else if (!strcmp(name, "report"))
			v = json_string(report ? report : "(the report was folded into the context digest)");
		else if (!strcmp(name, "context"))
			v = json_string(ctx.buf);
		else if (!strcmp(name, "constraints"))
			v = json_string(cons.buf);
		else if (!strcmp(name, "repository"))
			v = json_string(repo ? repo : "OWNER/NAME");
		else if (!strcmp(name, "today"))
			v = json_stringn(r->now, strlen(r->now) >= 10 ? 10 : strlen(r->now));
		else
			v = json_string("(none)");
		if (json_object_set_new(vars, name, v) < 0)
			goto done;
	}
	if (pmbot_capability_render_prompt(out, cap, vars, &r->diags) < 0) {
		cmd_print_diags(stderr, &r->diags);
		goto done;
	}
	rc = 0;
done:
	free(repo);
	json_decref(vars);
	json_decref(names);
	pmbot_buf_free(&ctx);
	pmbot_buf_free(&cons);
	return rc;
}

int llm_audit(const struct llm_opts *o, const json_t *fields)
{
	pmbot_buf path = PMBOT_BUF_INIT, dir = PMBOT_BUF_INIT;
	pmbot_audit *audit = NULL;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	int rc = -1;

	if (pmbot_buf_printf(&dir, "%s/.pm-bot", o->repo ? o->repo : ".") < 0 ||
	    pmbot_buf_printf(&path, "%s/audit.jsonl", dir.buf) < 0)
		goto done;
	pmbot_fs_mkdirs(dir.buf, 0755);
	if (pmbot_audit_open(&audit, path.buf, &diags) < 0 ||
	    pmbot_audit_append(audit, "capability_run", fields) < 0) {
		cmd_print_diags(stderr, &diags);
		fprintf(stderr, "pm-bot: cannot write the audit ledger %s\n", cmd_show(path.buf));
		goto done;
	}
	rc = 0;
done:
	pmbot_audit_close(audit);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&path);
	pmbot_buf_free(&dir);
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

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fputs("pm-bot: libcurl failed to initialise\n", stderr);
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
	curl_global_cleanup();
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
	char input_hash[PMBOT_SHA256_HEX_SIZE];
	int rc;

	*result = *audit = NULL;
	if ((rc = llm_provider(&llm)) != EXIT_OK)
		goto done;
	if ((rc = llm_call(&answer, &llm, r->ir, pmbot_capability_system_prompt(), user)) != EXIT_OK)
		goto done;
	rc = EXIT_RUNTIME;
	if (pmbot_sha256_hex(input_hash, user, strlen(user)) < 0 ||
	    pmbot_capability_audit_fields(audit, cap, llm.model,
		pmbot_llm_provider_name(llm.provider), input_hash, r->ir->ir_id) < 0)
		goto done;
	if (pmbot_capability_run_output(result, cap, answer.buf, answer.len) == PMBOT_EINVALID) {
		/* The spec's payload, on stdout for machines; the reason on stderr for people. */
		cmd_print_json(*result);
		fprintf(stderr, "pm-bot: the model's answer is not a valid %s output; nothing written\n",
			cap->id);
		json_object_set_new(*audit, "outcome", json_string("rejected"));
		llm_audit(o, *audit);
		json_decref(*result);
		*result = NULL;
		rc = EXIT_INVALID;
		goto done;
	}
	rc = *result ? EXIT_OK : EXIT_RUNTIME;
done:
	pmbot_llm_config_free(&llm);
	pmbot_buf_free(&answer);
	return rc;
}

void llm_run_free(struct llm_run *r)
{
	pmbot_promptir_free(r->ir);
	pmbot_promptir_free(r->input_ir);
	json_decref(r->transformations);
	json_decref(r->context);
	json_decref(r->flags);
	pmbot_governance_result_free(&r->gov_result);
	pmbot_governance_free(r->gov);
	pmbot_config_free(r->config);
	pmbot_repo_free(r->repo);
	pmbot_diag_list_free(&r->diags);
	free(r->now);
	memset(r, 0, sizeof(*r));
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

/*
 * The IR id: the first 8 hex digits of SHA-256 over everything the run was
 * asked, so the same request gives the same id (the spec draws a random one;
 * reproducible runs need this instead).
 */
static int ir_id(char id[9], const char *capability, const struct llm_opts *o,
	const char *commit)
{
	json_t *req = json_pack("{s:s, s:s?, s:s, s:[], s:[]}", "capability", capability,
		"report", o->file, "commit", commit, "context", "constraints");
	char hex[PMBOT_SHA256_HEX_SIZE];
	size_t i;
	int rc = -1;

	if (!req)
		return -1;
	for (i = 0; i < o->n_contexts; i++)
		if (json_array_append_new(json_object_get(req, "context"), json_string(o->contexts[i])) < 0)
			goto done;
	for (i = 0; i < o->n_constraints; i++)
		if (json_array_append_new(json_object_get(req, "constraints"),
			json_string(o->constraints[i])) < 0)
			goto done;
	/* Text from outside git is not named by the commit: its hash is part of the request. */
	if (o->file_text) {
		char text_hex[PMBOT_SHA256_HEX_SIZE];

		if (pmbot_sha256_hex(text_hex, o->file_text, o->file_len) < 0 ||
		    json_object_set_new(req, "report_sha256", json_string(text_hex)) < 0)
			goto done;
	}
	if (pmbot_sha256_json(hex, req) < 0)
		goto done;
	memcpy(id, hex, 8);
	id[8] = '\0';
	rc = 0;
done:
	json_decref(req);
	return rc;
}

/*
 * Report text is untrusted: a phrase in it that the destructive or bypass
 * policies name is shown to the reviewer, never obeyed and never dropped.
 * Each resolved text is checked as if it were an intent and a constraint.
 */
static int flag_untrusted(struct llm_run *r)
{
	pmbot_governance_result res = PMBOT_GOVERNANCE_RESULT_INIT;
	pmbot_promptir *probe = NULL;
	json_t *entry, *v;
	size_t i, k;
	int rc = -1;

	if (!(r->flags = json_array()))
		return -1;
	json_array_foreach(json_object_get(r->context, "refs"), i, entry) {
		const char *text = json_string_value(json_object_get(entry, "content"));

		if (!text || !*text)
			continue;
		pmbot_promptir_free(probe);
		probe = NULL;
		if (pmbot_promptir_new(&probe, "reviewer", text, PMBOT_PHASE_REVIEW, 0, "00000000",
			NULL) < 0 || pmbot_promptir_add_constraint(probe, text) < 0 ||
		    pmbot_governance_check(&res, r->gov, probe) < 0)
			goto done;
		json_array_foreach(res.violations, k, v) {
			if (json_array_append_new(r->flags, json_pack("{s:O, s:O, s:O, s:s}",
				"ref", json_object_get(entry, "ref"),
				"policy", json_object_get(v, "policy"),
				"matched", json_object_get(v, "matched"),
				"note", "found in the input text: shown for review, not followed")) < 0)
				goto done;
		}
		pmbot_governance_result_free(&res);
	}
	rc = 0;
done:
	pmbot_governance_result_free(&res);
	pmbot_promptir_free(probe);
	return rc;
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
	pmbot_promptir_pipeline_opts po;
	char id[9];
	size_t i;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = cmd_open_repo(&r->repo, o->repo ? o->repo : ".")) != EXIT_OK)
		return rc;
	if (pmbot_repo_resolve(r->commit, r->repo, o->rev ? o->rev : "HEAD") < 0) {
		fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(pmbot_repo_last_error(r->repo)));
		return EXIT_INVALID;
	}
	if ((rc = cmd_load_config(&r->config, r->repo, r->commit)) != EXIT_OK)
		return rc;
	if (pmbot_governance_new(&r->gov, r->config->llm_policies, "/llm/policies", &r->diags) < 0) {
		pmbot_diag_list_set_file(&r->diags, PMBOT_CONFIG_PATH);
		cmd_print_diags(stderr, &r->diags);
		return EXIT_INVALID;
	}
	if (!(r->now = now_text()) || ir_id(id, capability, o, r->commit) < 0 ||
	    pmbot_promptir_new(&r->input_ir, role, intent, PMBOT_PHASE_PLANNING,
		o->budget ? o->budget : LLM_DEFAULT_BUDGET, id, r->now) < 0)
		return EXIT_RUNTIME;
	if (o->file) {
		pmbot_buf ref = PMBOT_BUF_INIT;

		if (pmbot_buf_printf(&ref, "file:%s", o->file) < 0 ||
		    pmbot_promptir_add_context_ref(r->input_ir, ref.buf) < 0) {
			pmbot_buf_free(&ref);
			return EXIT_RUNTIME;
		}
		pmbot_buf_free(&ref);
	}
	for (i = 0; i < o->n_contexts; i++)
		if (pmbot_promptir_add_context_ref(r->input_ir, o->contexts[i]) < 0)
			return EXIT_RUNTIME;
	for (i = 0; i < o->n_constraints; i++)
		if (pmbot_promptir_add_constraint(r->input_ir, o->constraints[i]) < 0)
			return EXIT_RUNTIME;
	memset(&po, 0, sizeof(po));
	po.max_context_refs = (size_t)r->config->llm_digest_threshold;
	po.timestamp = r->now;
	rc = pmbot_promptir_pipeline(&r->ir, &r->transformations, &r->gov_result, r->input_ir,
		r->gov, &po, &r->diags);
	if (rc == PMBOT_EINVALID) {
		/* Denied before a single token is spent: nothing is compiled or sent. */
		llm_print_violations(r->gov_result.violations);
		r->denied = 1;
		return EXIT_INVALID;
	}
	if (rc < 0)
		return EXIT_RUNTIME;
	llm_print_violations(r->gov_result.violations);
	if (o->file_text) {
		pmbot_buf ref = PMBOT_BUF_INIT;

		rc = pmbot_buf_printf(&ref, "file:%s", o->file) < 0 ? PMBOT_ERROR :
			pmbot_promptir_resolve_given(&r->context, r->ir, r->repo, r->commit, ref.buf,
				o->file_text, o->file_len, &r->diags);
		pmbot_buf_free(&ref);
	} else {
		rc = pmbot_promptir_resolve(&r->context, r->ir, r->repo, r->commit, &r->diags);
	}
	if (rc < 0) {
		cmd_print_diags(stderr, &r->diags);
		return EXIT_INVALID;
	}
	if (flag_untrusted(r) < 0)
		return EXIT_RUNTIME;
	return EXIT_OK;
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
