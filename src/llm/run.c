#include "pmbot/llm.h"

#include <stdlib.h>
#include <string.h>

#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/source.h"
#include "pmbot/banned.h"

void pmbot_llm_run_free(pmbot_llm_run *r)
{
	static const pmbot_llm_run init = PMBOT_LLM_RUN_INIT;

	pmbot_promptir_free(r->ir);
	pmbot_promptir_free(r->input_ir);
	json_decref(r->transformations);
	json_decref(r->context);
	json_decref(r->flags);
	pmbot_governance_result_free(&r->gov_result);
	pmbot_governance_free(r->gov);
	pmbot_diag_list_free(&r->diags);
	free(r->now);
	*r = init;
}

int pmbot_llm_run_ir_id(char id[9], const pmbot_llm_run_request *req, const char *commit)
{
	json_t *req_json = json_pack("{s:s, s:s?, s:s, s:[], s:[]}", "capability", req->capability,
		"report", req->file, "commit", commit, "context", "constraints");
	char hex[PMBOT_SHA256_HEX_SIZE];
	size_t i;
	int rc = PMBOT_ERROR;

	if (!req_json)
		return PMBOT_ERROR;
	for (i = 0; i < req->n_contexts; i++)
		if (json_array_append_new(json_object_get(req_json, "context"),
			json_string(req->contexts[i])) < 0)
			goto done;
	for (i = 0; i < req->n_constraints; i++)
		if (json_array_append_new(json_object_get(req_json, "constraints"),
			json_string(req->constraints[i])) < 0)
			goto done;
	/* Text from outside git is not named by the commit: its hash is part of the request. */
	if (req->file_text) {
		char text_hex[PMBOT_SHA256_HEX_SIZE];

		if (pmbot_sha256_hex(text_hex, req->file_text, req->file_len) < 0 ||
		    json_object_set_new(req_json, "report_sha256", json_string(text_hex)) < 0)
			goto done;
	}
	if (pmbot_sha256_json(hex, req_json) < 0)
		goto done;
	memcpy(id, hex, 8);
	id[8] = '\0';
	rc = 0;
done:
	json_decref(req_json);
	return rc;
}

int pmbot_llm_run_flag_untrusted(json_t **out, pmbot_governance *gov, const json_t *context)
{
	pmbot_governance_result res = PMBOT_GOVERNANCE_RESULT_INIT;
	pmbot_promptir *probe = NULL;
	json_t *flags, *entry, *v;
	size_t i, k;
	int rc = PMBOT_ERROR;

	*out = NULL;
	if (!(flags = json_array()))
		return PMBOT_ERROR;
	json_array_foreach(json_object_get(context, "refs"), i, entry) {
		const char *text = json_string_value(json_object_get(entry, "content"));

		if (!text || !*text)
			continue;
		pmbot_promptir_free(probe);
		probe = NULL;
		/* The text is probed in both places a request could smuggle an order. */
		if (pmbot_promptir_new(&probe, "reviewer", text, PMBOT_PHASE_REVIEW, 0, "00000000",
			NULL) < 0 || pmbot_promptir_add_constraint(probe, text) < 0 ||
		    pmbot_governance_check(&res, gov, probe) < 0)
			goto done;
		json_array_foreach(res.violations, k, v) {
			if (json_array_append_new(flags, json_pack("{s:O, s:O, s:O, s:s}",
				"ref", json_object_get(entry, "ref"),
				"policy", json_object_get(v, "policy"),
				"matched", json_object_get(v, "matched"),
				"note", "found in the input text: shown for review, not followed")) < 0)
				goto done;
		}
		pmbot_governance_result_free(&res);
	}
	*out = flags;
	flags = NULL;
	rc = 0;
done:
	json_decref(flags);
	pmbot_governance_result_free(&res);
	pmbot_promptir_free(probe);
	return rc;
}

int pmbot_llm_run_context_text(pmbot_buf *out, const json_t *context, const char *skip_ref)
{
	size_t start = out->len, i;
	json_t *e;

	json_array_foreach(json_object_get(context, "refs"), i, e) {
		const char *ref = json_string_value(json_object_get(e, "ref"));

		if (skip_ref && ref && !strcmp(ref, skip_ref))
			continue;
		if (pmbot_buf_printf(out, "### %s\n\n%s\n\n", ref,
			json_string_value(json_object_get(e, "content"))) < 0)
			return PMBOT_ERROR;
	}
	if (out->len == start && pmbot_buf_puts(out, "(none)") < 0)
		return PMBOT_ERROR;
	return 0;
}

/* The content of reference `ref`, or NULL (e.g. folded into the digest). */
static const char *context_of(const json_t *context, const char *ref)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(context, "refs"), i, e) {
		const char *name = json_string_value(json_object_get(e, "ref"));

		if (name && !strcmp(name, ref))
			return json_string_value(json_object_get(e, "content"));
	}
	return NULL;
}

int pmbot_llm_run_render(pmbot_buf *out, const pmbot_llm_run *r, const pmbot_capability *cap,
	const char *report_ref, const json_t *extra, const char *repository, pmbot_diag_list *diags)
{
	pmbot_buf ctx = PMBOT_BUF_INIT, cons = PMBOT_BUF_INIT;
	json_t *vars = NULL, *names = NULL, *n;
	const char *report = report_ref ? context_of(r->context, report_ref) : NULL;
	const char *now = r->now ? r->now : "";
	size_t i;
	int rc = PMBOT_ERROR;

	if (pmbot_llm_run_context_text(&ctx, r->context, report_ref) < 0)
		goto done;
	for (i = 0; r->ir && i < r->ir->n_constraints; i++)
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
			v = json_string(repository ? repository : "OWNER/NAME");
		else if (!strcmp(name, "today"))
			v = json_stringn(now, strlen(now) >= 10 ? 10 : strlen(now));
		else
			v = json_string("(none)");
		if (json_object_set_new(vars, name, v) < 0)
			goto done;
	}
	rc = pmbot_capability_render_prompt(out, cap, vars, diags);
done:
	json_decref(vars);
	json_decref(names);
	pmbot_buf_free(&ctx);
	pmbot_buf_free(&cons);
	return rc;
}

int pmbot_llm_run_answer(json_t **result, json_t **audit, const pmbot_capability *cap,
	const char *model, const char *provider, const char *run_id, const char *user,
	const char *answer, size_t len)
{
	char input_hash[PMBOT_SHA256_HEX_SIZE];
	int r;

	*result = *audit = NULL;
	if (pmbot_sha256_hex(input_hash, user, strlen(user)) < 0 ||
	    pmbot_capability_audit_fields(audit, cap, model, provider, input_hash, run_id) < 0)
		return PMBOT_ERROR;
	r = pmbot_capability_run_output(result, cap, answer, len);
	if (r == PMBOT_EINVALID) {
		/* A rejected answer is still a run: the ledger records it. */
		if (json_object_set_new(*audit, "outcome", json_string("rejected")) < 0)
			goto fail;
		return PMBOT_EINVALID;
	}
	if (r == PMBOT_OK && *result)
		return PMBOT_OK;
fail:
	json_decref(*result);
	json_decref(*audit);
	*result = *audit = NULL;
	return PMBOT_ERROR;
}

/* Add the "file:" reference of the report to `ir`. */
static int add_file_ref(pmbot_promptir *ir, const char *file)
{
	pmbot_buf ref = PMBOT_BUF_INIT;
	int rc = PMBOT_ERROR;

	if (pmbot_buf_printf(&ref, "file:%s", file) < 0 ||
	    pmbot_promptir_add_context_ref(ir, ref.buf) < 0)
		goto done;
	rc = 0;
done:
	pmbot_buf_free(&ref);
	return rc;
}

int pmbot_llm_run_prepare(pmbot_llm_run *r, const pmbot_llm_run_request *req, pmbot_repo *repo,
	const char *commit, const pmbot_config *config)
{
	pmbot_promptir_pipeline_opts po;
	pmbot_buf ref = PMBOT_BUF_INIT;
	char id[9];
	size_t i;
	int rc = PMBOT_ERROR;

	r->repo = repo;
	r->config = config;
	if (strlen(commit) >= sizeof(r->commit))
		return PMBOT_EINVALID;
	memcpy(r->commit, commit, strlen(commit) + 1);
	if (pmbot_governance_new(&r->gov, config->llm_policies, "/llm/policies", &r->diags) < 0) {
		pmbot_diag_list_set_file(&r->diags, PMBOT_CONFIG_PATH);
		return PMBOT_EINVALID;
	}
	if (!req->now || !(r->now = strdup(req->now)) ||
	    pmbot_llm_run_ir_id(id, req, r->commit) < 0 ||
	    pmbot_promptir_new(&r->input_ir, req->role, req->intent, PMBOT_PHASE_PLANNING,
		req->budget ? req->budget : PMBOT_LLM_RUN_DEFAULT_BUDGET, id, r->now) < 0)
		goto done;
	if (req->file && add_file_ref(r->input_ir, req->file) < 0)
		goto done;
	for (i = 0; i < req->n_contexts; i++)
		if (pmbot_promptir_add_context_ref(r->input_ir, req->contexts[i]) < 0)
			goto done;
	for (i = 0; i < req->n_constraints; i++)
		if (pmbot_promptir_add_constraint(r->input_ir, req->constraints[i]) < 0)
			goto done;
	memset(&po, 0, sizeof(po));
	po.max_context_refs = (size_t)config->llm_digest_threshold;
	po.timestamp = r->now;
	rc = pmbot_promptir_pipeline(&r->ir, &r->transformations, &r->gov_result, r->input_ir,
		r->gov, &po, &r->diags);
	if (rc == PMBOT_EINVALID) {
		/* Denied before a single token is spent: nothing is compiled or sent. */
		r->denied = 1;
		goto done;
	}
	if (rc < 0)
		goto done;
	if (req->file_text) {
		rc = pmbot_buf_printf(&ref, "file:%s", req->file) < 0 ? PMBOT_ERROR :
			pmbot_promptir_resolve_given(&r->context, r->ir, repo, r->commit, ref.buf,
				req->file_text, req->file_len, &r->diags);
	} else {
		rc = pmbot_promptir_resolve(&r->context, r->ir, repo, r->commit, &r->diags);
	}
	/* A reference the request named and that cannot be read is the request's fault. */
	if (rc < 0) {
		rc = PMBOT_EINVALID;
		goto done;
	}
	rc = pmbot_llm_run_flag_untrusted(&r->flags, r->gov, r->context);
done:
	pmbot_buf_free(&ref);
	return rc;
}

int pmbot_llm_run_preview(json_t **out, const pmbot_llm_run *r, const json_t *policy,
	const char *user, size_t len)
{
	json_t *ir_json = NULL;
	char input_hash[PMBOT_SHA256_HEX_SIZE];

	*out = NULL;
	if (pmbot_sha256_hex(input_hash, user, len) < 0 ||
	    pmbot_promptir_to_json(&ir_json, r->ir) < 0)
		return PMBOT_ERROR;
	/* A token is about four characters: an estimate to budget by, not a count. */
	*out = json_pack("{s:O, s:O, s:{s:b, s:O}, s:O, s:O, s:{s:s, s:s, s:I, s:I, s:s}}",
		"ir", ir_json, "transformations", r->transformations,
		"governance", "approved", 1, "violations", r->gov_result.violations,
		"flags", r->flags, "policy", policy,
		"prompt", "system", pmbot_capability_system_prompt(), "user", user,
		"characters", (json_int_t)len,
		"estimated_input_tokens", (json_int_t)((len + 3) / 4),
		"input_hash", input_hash);
	json_decref(ir_json);
	return *out ? 0 : PMBOT_ERROR;
}

const char *pmbot_llm_run_outcome(const pmbot_capability *cap, int refused)
{
	if (cap->cls != PMBOT_CAPABILITY_MUTATION_PROPOSAL)
		return "advised";
	return refused ? "rejected" : "proposed";
}

int pmbot_llm_run_proposal_source(json_t **out, const pmbot_capability *cap, const json_t *audit)
{
	/* Only what names the run: a proposal never carries the prompt or the answer. */
	*out = json_pack("{s:s, s:s, s:O, s:O, s:O}", "kind", "proposal", "capability", cap->id,
		"model", json_object_get(audit, "model"), "provider", json_object_get(audit, "provider"),
		"input_hash", json_object_get(audit, "input_hash"));
	return *out ? 0 : PMBOT_ERROR;
}
