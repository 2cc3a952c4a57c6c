#include "pmbot/llm.h"

#include <stdlib.h>
#include <string.h>

#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

#define SHOW_MAX 64

/* ---- ContextDigestPlugin -------------------------------------------------- */

static int digest_transform(pmbot_promptir *ir, pmbot_buf *description, void *ctx)
{
	size_t max = *(const size_t *)ctx, i;
	pmbot_buf digest = PMBOT_BUF_INIT;
	json_t *originals = json_array();
	char **marker = NULL;
	int err = -1;

	if (ir->n_context_refs <= max) {
		err = 0;
		goto done;
	}
	if (!originals)
		goto done;
	for (i = 0; i < ir->n_context_refs; i++)
		if (json_array_append_new(originals, json_string(ir->context_refs[i])) < 0)
			goto done;
	/* The reference's fallback digest (no summarizing model): count and intent. */
	if (pmbot_buf_printf(&digest, "Context summary: %zu files related to: %s",
			ir->n_context_refs, ir->intent ? ir->intent : "") < 0 ||
	    pmbot_buf_printf(description, "Compressed %zu refs into digest",
			ir->n_context_refs) < 0)
		goto done;
	if (!(marker = calloc(1, sizeof(*marker))) ||
	    !(marker[0] = strdup(PMBOT_PROMPTIR_DIGEST_MARKER)))
		goto done;
	if (json_object_set(ir->metadata, "original_context_refs", originals) < 0 ||
	    json_object_set_new(ir->metadata, "context_digest", json_string(digest.buf)) < 0)
		goto done;
	for (i = 0; i < ir->n_context_refs; i++)
		free(ir->context_refs[i]);
	free(ir->context_refs);
	ir->context_refs = marker;
	ir->n_context_refs = 1;
	ir->alloc_context_refs = 1;
	marker = NULL;
	err = 1;
done:
	if (marker)
		free(marker[0]);
	free(marker);
	json_decref(originals);
	pmbot_buf_free(&digest);
	return err;
}

/* ---- BudgetOptimizerPlugin ----------------------------------------------- */

static int budget_transform(pmbot_promptir *ir, pmbot_buf *description, void *ctx)
{
	long long adjusted;
	int tenths;

	(void)ctx;
	if (pmbot_promptir_adjust_budget(&adjusted, &tenths, ir->token_budget, ir->phase,
			ir->priority) < 0)
		return -1;
	if (json_object_set_new(ir->metadata, "original_budget",
			json_integer(ir->token_budget)) < 0 ||
	    json_object_set_new(ir->metadata, "budget_multiplier",
			json_real((double)tenths / 10.0)) < 0 ||
	    pmbot_buf_printf(description, "Adjusted budget: %lld -> %lld",
			ir->token_budget, adjusted) < 0)
		return -1;
	ir->token_budget = adjusted;
	return 1;
}

/* ---- the pipeline -------------------------------------------------------- */

/* Canonical JSON of `ir` into `out` (cleared first). */
static int canonical_ir(pmbot_buf *out, const pmbot_promptir *ir)
{
	json_t *j = NULL;
	int err = -1;

	pmbot_buf_clear(out);
	if (pmbot_promptir_to_json(&j, ir) < 0 || pmbot_json_canonical(out, j) < 0)
		goto done;
	err = 0;
done:
	json_decref(j);
	return err;
}

/*
 * The id of the clone a plugin edits: derived from the IR it starts from
 * and the plugin, so a run is reproducible; a counter byte breaks the
 * (2^-32) tie with the current id, since a clone must get a new one.
 */
static int derive_id(char id[PMBOT_PROMPTIR_ID_LEN + 1], pmbot_buf *canon,
	const pmbot_promptir *cur, const char *plugin)
{
	char hex[PMBOT_SHA256_HEX_SIZE];
	size_t base = canon->len;
	unsigned char counter = 0;
	int err = -1;

	if (pmbot_buf_putc(canon, '\0') < 0 || pmbot_buf_puts(canon, plugin) < 0)
		goto done;
	for (;;) {
		if (pmbot_sha256_hex(hex, canon->buf, canon->len) < 0)
			goto done;
		memcpy(id, hex, PMBOT_PROMPTIR_ID_LEN);
		id[PMBOT_PROMPTIR_ID_LEN] = '\0';
		if (strcmp(id, cur->ir_id))
			break;
		if (pmbot_buf_putc(canon, (char)++counter) < 0)
			goto done;
	}
	err = 0;
done:
	pmbot_buf_truncate(canon, base);
	return err;
}

static json_t *transformation(const pmbot_promptir_plugin *p, const char *description,
	const char *before, const char *after, const char *timestamp)
{
	json_t *t = json_object();
	int err = !t;

	err |= json_object_set_new(t, "transformation_type", json_string(p->type));
	err |= json_object_set_new(t, "description", json_string(description));
	err |= json_object_set_new(t, "before_hash", json_string(before));
	err |= json_object_set_new(t, "after_hash", json_string(after));
	err |= json_object_set_new(t, "applied_by", json_string(p->name));
	err |= json_object_set_new(t, "timestamp", timestamp ? json_string(timestamp) : json_null());
	if (err) {
		json_decref(t);
		return NULL;
	}
	return t;
}

/* Governance findings as diagnostics: denials are errors, flags warnings. */
static int report_violations(pmbot_diag_list *diags, const json_t *violations)
{
	pmbot_buf s1 = PMBOT_BUF_INIT, s2 = PMBOT_BUF_INIT;
	const json_t *v;
	size_t i;
	int err = 0;

	json_array_foreach(violations, i, v) {
		const char *action = json_string_value(json_object_get(v, "action"));
		int deny = !strcmp(action, "deny");

		err |= pmbot_diag_add(diags, deny ? PMBOT_SEV_ERROR : PMBOT_SEV_WARNING,
			deny ? "GOVERNANCE_DENIED" : "GOVERNANCE_FLAG", NULL,
			json_string_value(json_object_get(v, "field")), 0, 0,
			"policy '%s' %s this %s: it contains '%s'",
			pmbot_diag_show(&s1, json_string_value(json_object_get(v, "policy")), SHOW_MAX),
			deny ? "denies" : "flags",
			json_string_value(json_object_get(v, "type")),
			pmbot_diag_show(&s2, json_string_value(json_object_get(v, "matched")),
				SHOW_MAX));
	}
	pmbot_buf_free(&s1);
	pmbot_buf_free(&s2);
	return err ? -1 : 0;
}

static int plugin_failed(pmbot_diag_list *diags, const pmbot_promptir_plugin *p)
{
	pmbot_buf s = PMBOT_BUF_INIT;
	int err;

	err = pmbot_diag_add(diags, PMBOT_SEV_WARNING, "PROMPTIR_PLUGIN", NULL, "", 0, 0,
		"plugin %s failed; the pipeline went on with the IR from before it",
		pmbot_diag_show(&s, p->name ? p->name : "(unnamed)", SHOW_MAX));
	pmbot_buf_free(&s);
	return err;
}

static int copy_same_id(pmbot_promptir **out, const pmbot_promptir *ir)
{
	char *id = strdup(ir->ir_id);
	int err = PMBOT_ERROR;

	/* clone() insists on a new id (the spec's rule), so clone, then put the id back. */
	if (!id || pmbot_promptir_clone(out, ir,
			strcmp(ir->ir_id, "00000000") ? "00000000" : "00000001") < 0)
		goto done;
	free((*out)->ir_id);
	(*out)->ir_id = id;
	id = NULL;
	err = PMBOT_OK;
done:
	free(id);
	return err;
}

int pmbot_promptir_pipeline(pmbot_promptir **out_ir, json_t **out_transformations,
	pmbot_governance_result *gov_result, const pmbot_promptir *ir,
	pmbot_governance *gov, const pmbot_promptir_pipeline_opts *opts,
	pmbot_diag_list *diags)
{
	static const pmbot_promptir_pipeline_opts no_opts = { 0, NULL, NULL, 0 };
	pmbot_governance_result local = PMBOT_GOVERNANCE_RESULT_INIT;
	pmbot_governance_result *res = gov_result ? gov_result : &local;
	pmbot_buf canon = PMBOT_BUF_INIT, description = PMBOT_BUF_INIT;
	pmbot_promptir *cur = NULL, *next = NULL;
	pmbot_promptir_plugin builtin[2];
	json_t *records = NULL;
	size_t max_refs, i, n;
	int err = PMBOT_ERROR;

	*out_ir = NULL;
	if (out_transformations)
		*out_transformations = NULL;
	if (!opts)
		opts = &no_opts;
	if (!gov)
		goto done;
	/* Governance first: nothing below may see an IR it denies. */
	if (pmbot_governance_check(res, gov, ir) < 0 || report_violations(diags, res->violations) < 0)
		goto done;
	if (!res->approved) {
		err = PMBOT_EINVALID;
		goto done;
	}
	max_refs = opts->max_context_refs ? opts->max_context_refs : PMBOT_PROMPTIR_DEFAULT_MAX_REFS;
	builtin[0] = (pmbot_promptir_plugin){ "ContextDigestPlugin", "context_digest",
		digest_transform, &max_refs };
	builtin[1] = (pmbot_promptir_plugin){ "BudgetOptimizerPlugin", "budget_optimization",
		budget_transform, NULL };
	if (!(records = json_array()))
		goto done;
	n = 2 + (opts->plugins ? opts->n_plugins : 0);
	for (i = 0; i < n; i++) {
		const pmbot_promptir_plugin *p = i < 2 ? &builtin[i] : &opts->plugins[i - 2];
		const pmbot_promptir *from = cur ? cur : ir;
		char id[PMBOT_PROMPTIR_ID_LEN + 1], before[PMBOT_PROMPTIR_HASH_SIZE];
		char after[PMBOT_PROMPTIR_HASH_SIZE], hex[PMBOT_SHA256_HEX_SIZE];
		int rc;

		if (!p->name || !p->type || !p->transform) {
			if (plugin_failed(diags, p) < 0)
				goto done;
			continue;
		}
		if (canonical_ir(&canon, from) < 0 || pmbot_sha256_hex(hex, canon.buf, canon.len) < 0)
			goto done;
		memcpy(before, hex, sizeof(before) - 1);
		before[sizeof(before) - 1] = '\0';
		if (derive_id(id, &canon, from, p->name) < 0 ||
		    pmbot_promptir_clone(&next, from, id) < 0)
			goto done;
		pmbot_buf_clear(&description);
		rc = p->transform(next, &description, p->ctx);
		/* An IR or a description that JSON cannot hold means the plugin failed. */
		if (rc > 0 && (pmbot_promptir_hash(after, next) < 0 ||
				!pmbot_utf8_valid(description.buf, description.len, NULL, NULL, NULL)))
			rc = -1;
		if (rc < 0 && plugin_failed(diags, p) < 0)
			goto done;
		if (rc <= 0) {
			pmbot_promptir_free(next);
			next = NULL;
			continue;
		}
		if (json_array_append_new(records, transformation(p, description.buf, before,
				after, opts->timestamp)) < 0)
			goto done;
		pmbot_promptir_free(cur);
		cur = next;
		next = NULL;
	}
	/* Nothing changed: the caller still gets an IR of its own, with the same id. */
	if (!cur && copy_same_id(&cur, ir) < 0)
		goto done;
	*out_ir = cur;
	cur = NULL;
	if (out_transformations) {
		*out_transformations = records;
		records = NULL;
	}
	err = PMBOT_OK;
done:
	pmbot_promptir_free(cur);
	pmbot_promptir_free(next);
	json_decref(records);
	pmbot_buf_free(&canon);
	pmbot_buf_free(&description);
	pmbot_governance_result_free(&local);
	return err;
}
