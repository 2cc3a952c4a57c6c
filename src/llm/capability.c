#include "pmbot/llm.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/source.h"
#include "pmbot/json.h"
#include "pmbot/strmap.h"
#include "pmbot/utf8.h"
#include "pmbot/banned.h"

/* Oldest version first within an id: a NULL version takes the last match. */
static const pmbot_capability registry[] = {
	{ "report_ir_draft", PMBOT_CAPABILITY_READ_ONLY_ADVICE, "v1",
	  "report_ir_draft.v1", "report_ir_draft", "report_ir_draft/v1" },
	{ "board_strategy_review", PMBOT_CAPABILITY_READ_ONLY_ADVICE, "v1",
	  "board_strategy_review.v1", "board_strategy_review", "board_strategy_review/v1" },
	{ "issue_adjustment_proposal", PMBOT_CAPABILITY_MUTATION_PROPOSAL, "v1",
	  "issue_adjustment_proposal.v1", "issue_adjustment_proposal",
	  "issue_adjustment_proposal/v1" },
	{ "issue_replanner", PMBOT_CAPABILITY_MUTATION_PROPOSAL, "v1",
	  "issue_adjustment_proposal.v1", "issue_adjustment_proposal",
	  "issue_adjustment_proposal/v1" },
};

#define N_CAPS (sizeof(registry) / sizeof(registry[0]))

const char *pmbot_capability_class_name(pmbot_capability_class cls)
{
	switch (cls) {
	case PMBOT_CAPABILITY_READ_ONLY_ADVICE: return "read_only_advice";
	case PMBOT_CAPABILITY_MUTATION_PROPOSAL: return "mutation_proposal";
	}
	return NULL;
}

int pmbot_capability_find(const pmbot_capability **out, const char *id, const char *version)
{
	size_t i;

	*out = NULL;
	for (i = 0; id && i < N_CAPS; i++) {
		if (strcmp(registry[i].id, id))
			continue;
		if (version && strcmp(registry[i].version, version))
			continue;
		*out = &registry[i];
	}
	return *out ? PMBOT_OK : PMBOT_ENOTFOUND;
}

size_t pmbot_capability_count(void)
{
	return N_CAPS;
}

const pmbot_capability *pmbot_capability_at(size_t i)
{
	return i < N_CAPS ? &registry[i] : NULL;
}

static const char *embedded(const char *stem, const char *suffix)
{
	char name[256];
	size_t i;

	if ((size_t)snprintf(name, sizeof(name), "%s%s", stem, suffix) >= sizeof(name))
		return NULL;
	for (i = 0; i < pmbot_llm_files_count; i++)
		if (!strcmp(pmbot_llm_files[i].name, name))
			return pmbot_llm_files[i].text;
	return NULL;
}

const char *pmbot_capability_prompt_text(const pmbot_capability *cap)
{
	return embedded(cap->prompt_name, ".md");
}

const char *pmbot_capability_schema_text(const pmbot_capability *cap)
{
	return embedded(cap->schema_name, ".schema.json");
}

int pmbot_capability_schema(json_t **out, const pmbot_capability *cap)
{
	const char *text = pmbot_capability_schema_text(cap);

	*out = text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
	return *out ? PMBOT_OK : PMBOT_ERROR;
}

const char *pmbot_capability_system_prompt(void)
{
	return "You are pm-bot's planning assistant. Answer with exactly one JSON object "
		"that validates against the JSON Schema in the user's message, and nothing "
		"else: no prose, no Markdown code fence.";
}

/* ---- templates ---- */

/*
 * At t[i] == '{' && t[i+1] == '{': the length of a well-formed "{{name}}"
 * (name at t + i + 2, `*name_len` bytes), or 0.
 */
static size_t placeholder(const char *t, size_t len, size_t i, size_t *name_len)
{
	size_t j = i + 2;

	if (j >= len || !((t[j] >= 'a' && t[j] <= 'z') || t[j] == '_'))
		return 0;
	while (j < len && ((t[j] >= 'a' && t[j] <= 'z') || (t[j] >= '0' && t[j] <= '9') ||
			   t[j] == '_'))
		j++;
	if (j + 1 >= len || t[j] != '}' || t[j + 1] != '}')
		return 0;
	*name_len = j - (i + 2);
	return j + 2 - i;
}

static int put_var(pmbot_buf *out, const json_t *v)
{
	if (json_is_string(v))
		return pmbot_buf_put(out, json_string_value(v), json_string_length(v));
	return pmbot_json_canonical(out, v);
}

int pmbot_capability_render_text(pmbot_buf *out, const char *tmpl, size_t len,
	const json_t *vars, pmbot_diag_list *diags)
{
	pmbot_buf name = PMBOT_BUF_INIT, ptr = PMBOT_BUF_INIT;
	json_t *used = NULL;
	size_t start = out->len, i = 0, run = 0, before = diags->errors, n, nlen;
	const char *key;
	json_t *v;
	int err = PMBOT_ERROR;

	if (vars && !json_is_object(vars)) {
		if (pmbot_diag_add(diags, PMBOT_SEV_ERROR, "PROMPT_VARS", NULL, "", 0, 0,
				"the prompt variables must be an object") < 0)
			goto done;
		err = PMBOT_EINVALID;
		goto done;
	}
	if (!(used = json_object()))
		goto done;
	while (i + 1 < len) {
		if (tmpl[i] != '{' || tmpl[i + 1] != '{') {
			i++;
			continue;
		}
		if (!(n = placeholder(tmpl, len, i, &nlen))) {
			if (pmbot_diag_add(diags, PMBOT_SEV_ERROR, "PROMPT_TEMPLATE", NULL, "", 0, 0,
					"'{{' at byte %zu does not start a placeholder {{name}}", i) < 0)
				goto done;
			i += 2;
			continue;
		}
		pmbot_buf_clear(&name);
		if (pmbot_buf_put(&name, tmpl + i + 2, nlen) < 0 ||
		    pmbot_buf_put(out, tmpl + run, i - run) < 0)
			goto done;
		v = vars ? json_object_get(vars, name.buf) : NULL;
		if (!v && !json_object_get(used, name.buf) &&
		    pmbot_diag_add(diags, PMBOT_SEV_ERROR, "PROMPT_PLACEHOLDER", NULL, "", 0, 0,
				"the template needs variable '%s', which is not given", name.buf) < 0)
			goto done;
		if (json_object_set_new(used, name.buf, json_true()) < 0)
			goto done;
		if (v && put_var(out, v) < 0)
			goto done;
		i += n;
		run = i;
	}
	if (pmbot_buf_put(out, tmpl + run, len - run) < 0)
		goto done;
	json_object_foreach((json_t *)vars, key, v) {
		if (json_object_get(used, key))
			continue;
		pmbot_buf_clear(&ptr);
		if (pmbot_json_pointer_push(&ptr, key) < 0 ||
		    pmbot_diag_add(diags, PMBOT_SEV_ERROR, "PROMPT_PLACEHOLDER", NULL, ptr.buf, 0, 0,
				"variable '%s' is not used by the template", key) < 0)
			goto done;
	}
	err = diags->errors > before ? PMBOT_EINVALID : PMBOT_OK;
done:
	if (err)
		pmbot_buf_truncate(out, start);
	json_decref(used);
	pmbot_buf_free(&name);
	pmbot_buf_free(&ptr);
	return err;
}

int pmbot_capability_render_prompt(pmbot_buf *out, const pmbot_capability *cap,
	const json_t *vars, pmbot_diag_list *diags)
{
	const char *tmpl = pmbot_capability_prompt_text(cap);
	const char *schema = pmbot_capability_schema_text(cap);
	json_t *all = NULL;
	int err = PMBOT_ERROR;

	if (!tmpl || !schema)
		goto done;
	if (vars && !json_is_object(vars)) {
		err = pmbot_capability_render_text(out, tmpl, strlen(tmpl), vars, diags);
		goto done;
	}
	if (vars && json_object_get(vars, "schema")) {
		if (pmbot_diag_add(diags, PMBOT_SEV_ERROR, "PROMPT_PLACEHOLDER", NULL, "/schema", 0, 0,
				"variable 'schema' is built in: it is the capability's output schema") == 0)
			err = PMBOT_EINVALID;
		goto done;
	}
	if (!(all = vars ? json_copy((json_t *)vars) : json_object()) ||
	    json_object_set_new(all, "schema", json_string(schema)) < 0)
		goto done;
	err = pmbot_capability_render_text(out, tmpl, strlen(tmpl), all, diags);
done:
	json_decref(all);
	return err;
}

static int name_order(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int pmbot_capability_variables(json_t **out, const pmbot_capability *cap)
{
	const char *tmpl = pmbot_capability_prompt_text(cap), *key, **names = NULL;
	json_t *set = NULL, *arr = NULL, *v;
	size_t len, i, n, nlen, count = 0;
	int err = PMBOT_ERROR;

	*out = NULL;
	if (!tmpl || !(set = json_object()))
		goto done;
	len = strlen(tmpl);
	for (i = 0; i + 1 < len; i++) {
		pmbot_buf name = PMBOT_BUF_INIT;
		int bad;

		if (tmpl[i] != '{' || tmpl[i + 1] != '{' || !(n = placeholder(tmpl, len, i, &nlen)))
			continue;
		bad = pmbot_buf_put(&name, tmpl + i + 2, nlen) < 0 ||
			(strcmp(name.buf, "schema") &&
			 json_object_set_new(set, name.buf, json_true()) < 0);
		pmbot_buf_free(&name);
		if (bad)
			goto done;
		i += n - 1;
	}
	if (json_object_size(set) && !(names = malloc(json_object_size(set) * sizeof(*names))))
		goto done;
	json_object_foreach(set, key, v)
		names[count++] = key;
	if (count)
		qsort(names, count, sizeof(*names), name_order);
	if (!(arr = json_array()))
		goto done;
	for (i = 0; i < count; i++)
		if (json_array_append_new(arr, json_string(names[i])) < 0)
			goto done;
	*out = arr;
	arr = NULL;
	err = PMBOT_OK;
done:
	free(names);
	json_decref(set);
	json_decref(arr);
	return err;
}

/* ---- policy ---- */

int pmbot_capability_policy_check(json_t **effective, pmbot_buf *denied,
	const pmbot_capability *cap, const json_t *request_options)
{
	const json_t *o = request_options, *v;
	const char *why = NULL;
	json_t *eff = NULL;
	int mutation = cap->cls == PMBOT_CAPABILITY_MUTATION_PROPOSAL, err = PMBOT_ERROR;

	*effective = NULL;
	if (o && !json_is_object(o)) {
		why = "request_options";
		goto deny;
	}
	if ((v = json_object_get(o, "allow_direct_github_writes")) && !json_is_false(v)) {
		why = "allow_direct_github_writes";
		goto deny;
	}
	if (mutation) {
		if ((v = json_object_get(o, "proposal_output_changeset_bundle")) && !json_is_true(v))
			why = "proposal_output_changeset_bundle";
		else if ((v = json_object_get(o, "require_human_approval")) && !json_is_true(v))
			why = "require_human_approval";
	}
	/* Low friction is for advice only; a proposal always waits for a human. */
	if (!why && (v = json_object_get(o, "approval_level")) &&
	    (!json_is_string(v) || (mutation && !strcmp(json_string_value(v), "low"))))
		why = "approval_level";
	if (why)
		goto deny;
	if (!(eff = o ? json_deep_copy(o) : json_object()) ||
	    json_object_set_new(eff, "allow_direct_github_writes", json_false()) < 0)
		goto done;
	if (mutation) {
		if (json_object_set_new(eff, "proposal_output_changeset_bundle", json_true()) < 0 ||
		    json_object_set_new(eff, "require_human_approval", json_true()) < 0)
			goto done;
	} else if (!json_object_get(eff, "approval_level") &&
		   json_object_set_new(eff, "approval_level", json_string("low")) < 0) {
		goto done;
	}
	*effective = eff;
	eff = NULL;
	err = PMBOT_OK;
	goto done;
deny:
	if (pmbot_buf_printf(denied, "capability_policy_denied:%s:%s", cap->id, why) == 0)
		err = PMBOT_EINVALID;
done:
	json_decref(eff);
	return err;
}

/* ---- output validation ---- */

static int changeset_problem(pmbot_diag_list *diags, const pmbot_buf *at, const char *member,
	const char *msg)
{
	pmbot_buf path = PMBOT_BUF_INIT;
	int err = -1;

	if (pmbot_buf_put(&path, at->buf, at->len) < 0 ||
	    (member && pmbot_json_pointer_push(&path, member) < 0))
		goto done;
	err = pmbot_diag_add(diags, PMBOT_SEV_ERROR, "SCHEMA_CHANGESET", NULL, path.buf, 0, 0,
		"%s", msg);
done:
	pmbot_buf_free(&path);
	return err;
}

/* The identity a bundle's idempotency key is made of; missing members are null. */
static char *changeset_identity(const json_t *cs)
{
	static const char *const members[] = { "operation", "target", "payload" };
	pmbot_buf text = PMBOT_BUF_INIT;
	json_t *id = json_object();
	char *out = NULL;
	size_t i;

	if (!id)
		goto done;
	for (i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		json_t *v = json_object_get(cs, members[i]);

		if (json_object_set_new(id, members[i], v ? json_incref(v) : json_null()) < 0)
			goto done;
	}
	if (pmbot_json_canonical(&text, id) == 0)
		out = pmbot_buf_detach(&text, NULL);
done:
	json_decref(id);
	pmbot_buf_free(&text);
	return out;
}

int pmbot_capability_check_proposal(pmbot_diag_list *diags, const json_t *proposal)
{
	const json_t *list = json_object_get(proposal, "changesets");
	pmbot_buf at = PMBOT_BUF_INIT, msg = PMBOT_BUF_INIT;
	pmbot_strmap seen = PMBOT_STRMAP_INIT;
	size_t i, n = json_array_size(list), before = diags->errors;
	char **keys = NULL;
	int err = PMBOT_ERROR;

	if (n && !(keys = calloc(n, sizeof(*keys))))
		goto done;
	for (i = 0; i < n; i++) {
		const json_t *cs = json_array_get(list, i), *op;
		pmbot_operation parsed;
		void *first;
		int r;

		pmbot_buf_clear(&at);
		if (pmbot_buf_printf(&at, "/changesets/%zu", i) < 0)
			goto done;
		if (!json_is_object(cs)) {
			if (changeset_problem(diags, &at, NULL, "a changeset must be an object") < 0)
				goto done;
			continue;
		}
		op = json_object_get(cs, "operation");
		if ((!json_is_string(op) || pmbot_operation_parse(&parsed, json_string_value(op)) < 0) &&
		    changeset_problem(diags, &at, "operation",
				"operation is not one pm-bot can plan") < 0)
			goto done;
		if (!json_is_true(json_object_get(cs, "requires_approval")) &&
		    changeset_problem(diags, &at, "requires_approval",
				"a proposed changeset must have requires_approval true") < 0)
			goto done;
		if (!(keys[i] = changeset_identity(cs)))
			goto done;
		if ((r = pmbot_strmap_put(&seen, keys[i], (void *)(uintptr_t)(i + 1), &first)) < 0)
			goto done;
		if (r == 1) {
			pmbot_buf_clear(&msg);
			if (pmbot_buf_printf(&msg, "changeset repeats changesets[%zu]: the same "
					"operation, target and payload", (size_t)(uintptr_t)first - 1) < 0 ||
			    changeset_problem(diags, &at, NULL, msg.buf) < 0)
				goto done;
		}
	}
	err = diags->errors > before ? PMBOT_EINVALID : PMBOT_OK;
done:
	for (i = 0; keys && i < n; i++)
		free(keys[i]);
	free(keys);
	pmbot_strmap_free(&seen);
	pmbot_buf_free(&at);
	pmbot_buf_free(&msg);
	return err;
}

int pmbot_capability_validate(json_t **validation, const pmbot_capability *cap,
	const json_t *output)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	json_t *schema = NULL, *errors = NULL, *result = NULL;
	int err = PMBOT_ERROR, rc;

	*validation = NULL;
	if (pmbot_capability_schema(&schema, cap) < 0)
		goto done;
	if ((rc = pmbot_jsonschema_validate(&diags, schema, output)) == PMBOT_ERROR)
		goto done;
	/* Bundle rules are a second layer: they would only repeat schema errors. */
	if (rc == PMBOT_OK && cap->cls == PMBOT_CAPABILITY_MUTATION_PROPOSAL &&
	    pmbot_capability_check_proposal(&diags, output) == PMBOT_ERROR)
		goto done;
	if (pmbot_jsonschema_records(&errors, &diags, output) < 0)
		goto done;
	if (!(result = json_object()))
		goto done;
	rc = json_array_size(errors) ? PMBOT_EINVALID : PMBOT_OK;
	if (json_object_set_new(result, "errors", errors) < 0) {
		errors = NULL;
		goto done;
	}
	errors = NULL;
	if (json_object_set_new(result, "warnings", json_array()) < 0)
		goto done;
	*validation = result;
	result = NULL;
	err = rc;
done:
	pmbot_diag_list_free(&diags);
	json_decref(schema);
	json_decref(errors);
	json_decref(result);
	return err;
}

/* jansson's message may quote the input; keep it valid UTF-8 for JSON. */
static int put_sanitized(pmbot_buf *out, const char *s)
{
	size_t len = strlen(s), i = 0;

	while (i < len) {
		size_t n = pmbot_utf8_seqlen((unsigned char)s[i]);

		if (i + n <= len && pmbot_utf8_valid(s + i, n, NULL, NULL, NULL)) {
			if (pmbot_buf_put(out, s + i, n) < 0)
				return -1;
			i += n;
		} else {
			if (pmbot_buf_printf(out, "\\x%02x", (unsigned char)s[i]) < 0)
				return -1;
			i++;
		}
	}
	return 0;
}

static int failure_payload(json_t **out, const pmbot_capability *cap, json_t *validation)
{
	pmbot_buf error = PMBOT_BUF_INIT;
	json_t *o = NULL;
	int err = PMBOT_ERROR;

	if (pmbot_buf_printf(&error, "capability_output_validation_failed:%s", cap->id) < 0)
		goto done;
	o = json_pack("{s:s, s:s, s:O}", "error", error.buf, "capability_id", cap->id,
		"validation", validation);
	if (!o)
		goto done;
	*out = o;
	err = PMBOT_EINVALID;
done:
	json_decref(validation);
	pmbot_buf_free(&error);
	return err;
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	default: return "an object";
	}
}

int pmbot_capability_run_output(json_t **result, const pmbot_capability *cap,
	const char *model_output, size_t len)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	json_t *value = NULL, *validation = NULL;
	const char *code = NULL;
	json_error_t jerr;
	int err = PMBOT_ERROR, rc;

	*result = NULL;
	if (len > PMBOT_CAPABILITY_MAX_OUTPUT) {
		code = "JSON_TOO_LARGE";
		if (pmbot_buf_printf(&msg, "model output is %zu bytes, more than the %zu allowed",
				len, PMBOT_CAPABILITY_MAX_OUTPUT) < 0)
			goto done;
	} else if (!(value = json_loadb(model_output ? model_output : "", len,
			JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr))) {
		if (json_error_code(&jerr) == json_error_out_of_memory)
			goto done;
		code = json_error_code(&jerr) == json_error_duplicate_key ?
			"JSON_DUPLICATE_KEY" : "JSON_PARSE";
		if (pmbot_buf_printf(&msg, "line %d, column %d: ", jerr.line, jerr.column) < 0 ||
		    put_sanitized(&msg, jerr.text) < 0)
			goto done;
	} else if (!json_is_object(value)) {
		code = "JSON_NOT_OBJECT";
		if (pmbot_buf_printf(&msg, "expected a JSON object, got %s", type_name(value)) < 0)
			goto done;
	}
	if (code) {
		validation = json_pack("{s:[{s:s, s:s, s:s}], s:[]}", "errors", "path", "$",
			"code", code, "message", msg.buf, "warnings");
		if (!validation)
			goto done;
		err = failure_payload(result, cap, validation);
		goto done;
	}
	if ((rc = pmbot_capability_validate(&validation, cap, value)) == PMBOT_ERROR)
		goto done;
	if (rc == PMBOT_EINVALID) {
		err = failure_payload(result, cap, validation);
		goto done;
	}
	json_decref(validation);
	*result = value;
	value = NULL;
	err = PMBOT_OK;
done:
	json_decref(value);
	pmbot_buf_free(&msg);
	return err;
}

static int is_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[64] == '\0';
}

static int is_text(const char *s)
{
	return s && *s && pmbot_utf8_valid(s, strlen(s), NULL, NULL, NULL);
}

int pmbot_capability_audit_fields(json_t **out, const pmbot_capability *cap,
	const char *model, const char *provider, const char *input_hash, const char *run_id)
{
	*out = NULL;
	if (!is_text(model) || !is_text(provider) || !is_text(run_id) || !input_hash ||
	    !is_hex64(input_hash))
		return PMBOT_EINVALID;
	*out = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
		"capability_id", cap->id, "prompt_version", cap->prompt_name, "model", model,
		"provider", provider, "input_hash", input_hash,
		"schema_version", cap->schema_version, "run_id", run_id);
	return *out ? PMBOT_OK : PMBOT_ERROR;
}
