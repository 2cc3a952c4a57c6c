#ifndef PMBOT_LLMRUN_H
#define PMBOT_LLMRUN_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/capability.h"
#include "pmbot/common.h"
#include "pmbot/source.h"
#include "pmbot/diag.h"
#include "pmbot/promptir.h"
#include "pmbot/repo.h"

/*
 * One capability run (Mode B: `draft`, `prompt-ir`, `advise`), up to and
 * after the model call: the Prompt IR built from the request, governance
 * and the plugins, the context resolved at a commit, the report text
 * flagged where it names a policy, the prompt rendered from the template,
 * the answer checked, and for report_ir_draft the draft as a report.
 * docs/llm.md describes the commands for users.
 *
 * Nothing here prints, exits, reads the environment or calls a model: the
 * caller reads its options, the clock and the environment into a
 * pmbot_llm_run_request, asks the provider (pmbot/llm.h) itself and hands
 * the answer back.
 */

#define PMBOT_LLM_RUN_DEFAULT_BUDGET 4000

/* What a run was asked. Every pointer is borrowed for the call it is passed to. */
typedef struct {
	const char *capability;   /* a capability id: part of the IR id */
	const char *role;         /* the IR's role: "planner", "reviewer", ... */
	const char *intent;       /* the IR's intent; governance reads it */
	const char *file;         /* the report, a "file:" context reference; may be NULL */
	const char *file_text;    /* its text read outside git (`file_len` bytes);
	                             NULL: resolved from git at the commit */
	size_t file_len;
	const char *const *contexts;    /* --context references */
	size_t n_contexts;
	const char *const *constraints; /* --constraint rules */
	size_t n_constraints;
	long budget;              /* tokens; 0: PMBOT_LLM_RUN_DEFAULT_BUDGET */
	const char *now;          /* RFC 3339, the IR's created_at and {{today}} */
} pmbot_llm_run_request;

/*
 * A prepared run. Initialise with PMBOT_LLM_RUN_INIT; everything it points
 * to is owned by the run and released by pmbot_llm_run_free(), except
 * `repo` and `config`, borrowed from the caller for the run's lifetime.
 */
typedef struct {
	pmbot_repo *repo;                 /* borrowed */
	const pmbot_config *config;       /* borrowed: llm.policies, the digest threshold */
	char commit[PMBOT_OID_HEX_SIZE];  /* the context is read at this commit */
	pmbot_governance *gov;
	pmbot_promptir *input_ir;         /* as built from the request */
	pmbot_promptir *ir;               /* after governance and plugins; NULL when denied */
	json_t *transformations;          /* the plugins' records */
	pmbot_governance_result gov_result;
	json_t *context;                  /* {"refs": [...]} resolved at the commit */
	json_t *flags;                    /* policy phrases found in the input text */
	int denied;                       /* governance denied: nothing may be sent */
	char *now;                        /* a copy of the request's */
	pmbot_diag_list diags;
} pmbot_llm_run;

#define PMBOT_LLM_RUN_INIT { NULL, NULL, { 0 }, NULL, NULL, NULL, NULL, \
	PMBOT_GOVERNANCE_RESULT_INIT, NULL, NULL, 0, NULL, PMBOT_DIAG_LIST_INIT }

/*
 * Prepare `r` (PMBOT_LLM_RUN_INIT or freed) for `req` against `repo` at
 * `commit` (40 hex digits) with `config`, both borrowed for the run's
 * lifetime: build the Prompt IR (the report and the context references,
 * the constraints, the budget, the id of pmbot_llm_run_ir_id()), run
 * governance and the plugins, resolve the context (the report from
 * req->file_text when given, else from git) and flag policy phrases in it
 * (pmbot_llm_run_flag_untrusted()).
 * PMBOT_OK. PMBOT_EINVALID when governance denied (r->denied set, the
 * violations in r->gov_result; nothing may be sent), when llm.policies is
 * invalid or a context reference cannot be resolved (r->diags says why;
 * r->gov_result holds any violations already found). PMBOT_ERROR when out
 * of memory. Free `r` with pmbot_llm_run_free() whatever it returns.
 */
int pmbot_llm_run_prepare(pmbot_llm_run *r, const pmbot_llm_run_request *req, pmbot_repo *repo,
	const char *commit, const pmbot_config *config);

/* Release what `r` owns and reset it to PMBOT_LLM_RUN_INIT. */
void pmbot_llm_run_free(pmbot_llm_run *r);

/*
 * The IR id of `req` at `commit`: the first 8 hex digits of SHA-256 over the
 * canonical JSON of everything asked (capability, report, commit, context
 * references, constraints, and the SHA-256 of req->file_text when given,
 * since git does not name that text), NUL-terminated into `id`. The spec
 * draws a random id; reproducible runs need this one. 0, or PMBOT_ERROR
 * when out of memory.
 */
int pmbot_llm_run_ir_id(char id[9], const pmbot_llm_run_request *req, const char *commit);

/*
 * Report text is untrusted: flag each phrase in a resolved reference that a
 * policy of `gov` names, checking each text as if it were an intent and a
 * constraint. `*out` is a new array (the caller's) of
 * {"ref", "policy", "matched", "note"} in reference and violation order;
 * the text is shown to the reviewer, never obeyed and never dropped.
 * `context` ({"refs": [{"ref", "content"}...]}) is borrowed. 0, or
 * PMBOT_ERROR (`*out` NULL) when out of memory.
 */
int pmbot_llm_run_flag_untrusted(json_t **out, pmbot_governance *gov, const json_t *context);

/*
 * Every resolved reference of `context` but `skip_ref` (may be NULL), as
 * "### <ref>\n\n<content>\n\n" each, or "(none)": the {{context}} text.
 * Appends to `out` (the caller's). 0, or PMBOT_ERROR.
 */
int pmbot_llm_run_context_text(pmbot_buf *out, const json_t *context, const char *skip_ref);

/*
 * The user message of `cap` for `r`, appended to `out` (the caller's): the
 * template's variables, and only those (the renderer refuses others),
 * taken from `extra` (borrowed, may be NULL) first, else {{report}} the
 * content of reference `report_ref` (may be NULL), {{context}} the other
 * references (pmbot_llm_run_context_text()), {{constraints}} one "- " line
 * per constraint of the IR, {{repository}} `repository` ("OWNER/NAME", may
 * be NULL), {{today}} the date of r->now, any other "(none)". Returns as
 * pmbot_capability_render_prompt(), diagnostics added to `diags`.
 */
int pmbot_llm_run_render(pmbot_buf *out, const pmbot_llm_run *r, const pmbot_capability *cap,
	const char *report_ref, const json_t *extra, const char *repository, pmbot_diag_list *diags);

/*
 * What a prepared run would send for the user message `user` (`len`
 * bytes), and what it would cost, without sending it (`prompt-ir`):
 * `*out` is a new object (the caller's), {"ir": the IR after governance
 * and plugins, "transformations", "governance": {"approved": true,
 * "violations"}, "flags", "policy": `policy` (the class policy's effective
 * options, borrowed), "prompt": {"system", "user", "characters",
 * "estimated_input_tokens" (a quarter of the characters, rounded up),
 * "input_hash" (SHA-256 of `user`)}}. 0, or PMBOT_ERROR (`*out` NULL).
 */
int pmbot_llm_run_preview(json_t **out, const pmbot_llm_run *r, const json_t *policy,
	const char *user, size_t len);

/*
 * Check the model's `answer` (`len` bytes) to the user message `user` for
 * `cap` (pmbot_capability_run_output()) and describe the run for the audit
 * ledger: `*audit` gets pmbot_capability_audit_fields() of `model`,
 * `provider`, the SHA-256 of `user` and `run_id` (the IR id). Both
 * `*result` and `*audit` are new and the caller's.
 * PMBOT_OK with `*result` the checked output. PMBOT_EINVALID when the
 * answer breaks the contract: `*result` is the spec's error payload and
 * `*audit` has "outcome": "rejected". PMBOT_ERROR (both NULL) when out of
 * memory or an audit field is invalid.
 */
int pmbot_llm_run_answer(json_t **result, json_t **audit, const pmbot_capability *cap,
	const char *model, const char *provider, const char *run_id, const char *user,
	const char *answer, size_t len);

/*
 * The ledger's word for how an `advise` run of `cap` ended (static
 * storage): "advised" for read-only advice; for a mutation proposal
 * "rejected" when `refused` (the proposal broke the plan's rules) else
 * "proposed".
 */
const char *pmbot_llm_run_outcome(const pmbot_capability *cap, int refused);

/*
 * Where a proposal bundle came from: `*out` is a new object (the
 * caller's), {"kind": "proposal", "capability": cap->id, "model",
 * "provider", "input_hash"} with the last three from the run's `audit`
 * (pmbot_llm_run_answer(), borrowed). 0, or PMBOT_ERROR (`*out` NULL) when
 * out of memory or `audit` lacks one of them.
 */
int pmbot_llm_run_proposal_source(json_t **out, const pmbot_capability *cap, const json_t *audit);

/*
 * A report_ir_draft `result` as a Markdown report, appended to `out` (the
 * caller's): the title and a review notice naming `model`, `provider` and
 * `source` (the prose report), the `flags` of the run (may be NULL), the
 * assumptions and open questions, then the pm-bot:report-ir/v1 block. The
 * model's words are escaped log-safe and capped: the draft may go to a
 * terminal, and a title or a note must not forge lines of its own.
 * 0, or PMBOT_ERROR.
 */
int pmbot_llm_draft_markdown(pmbot_buf *out, const json_t *result, const json_t *flags,
	const char *model, const char *provider, const char *source);

/*
 * Check a draft (`len` bytes of Markdown named `name` in diagnostics)
 * against every ReportIR v1 rule, as the report it becomes. PMBOT_OK,
 * PMBOT_EINVALID (diagnostics added to `diags`), PMBOT_ERROR.
 */
int pmbot_llm_draft_check(pmbot_diag_list *diags, const char *markdown, size_t len,
	const char *name);

#endif
