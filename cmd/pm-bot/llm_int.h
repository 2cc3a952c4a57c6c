#ifndef PMBOT_CMD_LLM_INT_H
#define PMBOT_CMD_LLM_INT_H

#include "cmd.h"
#include "pmbot/promptir.h"

/*
 * Mode B commands (cmd_draft.c: draft and prompt-ir; cmd_advise.c):
 * options, the Prompt IR with governance and plugins, and its context.
 * docs/llm.md describes them for users.
 */

#define LLM_DEFAULT_BUDGET 4000

struct llm_opts {
	const char *repo;        /* NULL: "." */
	const char *rev;         /* NULL: HEAD */
	const char *file;        /* the report (a file: context reference); may be NULL */
	const char *file_text;   /* its text read from the work tree or stdin; NULL: from git */
	size_t file_len;
	char **contexts;         /* --context REF, room for argc entries */
	size_t n_contexts;
	char **constraints;      /* --constraint TEXT */
	size_t n_constraints;
	const char *out;
	int json;
	long budget;             /* --budget N; 0: LLM_DEFAULT_BUDGET */
};

/* Long options shared by draft, prompt-ir and advise (llm_parse_option). */
#define LLM_OPTIONS \
	{ "repo", required_argument, NULL, 'R' }, \
	{ "rev", required_argument, NULL, 'r' }, \
	{ "context", required_argument, NULL, 'C' }, \
	{ "constraint", required_argument, NULL, 'K' }, \
	{ "out", required_argument, NULL, 'o' }, \
	{ "json", no_argument, NULL, 'j' }, \
	{ "budget", required_argument, NULL, 'b' }

/* 0 taken, 1 a bad value, -1 not one of LLM_OPTIONS. */
int llm_parse_option(struct llm_opts *o, int c, const char *arg);

struct llm_run {
	pmbot_repo *repo;
	char commit[PMBOT_OID_HEX_SIZE];
	pmbot_config *config;             /* at that commit: llm.policies */
	pmbot_governance *gov;
	pmbot_promptir *input_ir;         /* as built from the options */
	pmbot_promptir *ir;               /* after governance and plugins; NULL when denied */
	json_t *transformations;          /* the plugins' records */
	pmbot_governance_result gov_result;
	json_t *context;                  /* {"refs": [...]} resolved at the commit */
	json_t *flags;                    /* policy phrases found in the input text */
	int denied;
	char *now;                        /* RFC 3339: $PMBOT_NOW or the clock */
	pmbot_diag_list diags;
};

/*
 * Build the Prompt IR for `capability` (the report and --context refs,
 * --constraint rules), run governance and the plugins, resolve the context
 * from git and flag policy phrases in it. EXIT_INVALID when governance
 * denied (r->denied; nothing may be sent) or a reference is refused;
 * prints why. Free with llm_run_free() whatever it returns.
 */
int llm_prepare(struct llm_run *r, const struct llm_opts *o, const char *capability,
	const char *role, const char *intent);

void llm_run_free(struct llm_run *r);

#include "pmbot/capability.h"

/*
 * The user message of `cap` for run `r`: the template's variables filled
 * from the resolved context (the reference `report_ref`, may be NULL, as
 * {{report}}; the others as {{context}}), the constraints, the repository
 * and the date; `extra` (may be NULL) supplies or overrides any variable.
 * Prints failures; 0 or -1.
 */
int llm_render(pmbot_buf *out, struct llm_run *r, const pmbot_capability *cap,
	const char *report_ref, json_t *extra);

/*
 * Append a `capability_run` event (the capability's audit metadata and an
 * outcome) to the repository's hash-chained ledger, DIR/.pm-bot/audit.jsonl.
 * Prints failures; 0 or -1.
 */
int llm_audit(const struct llm_opts *o, const json_t *fields);

/*
 * Ask the provider (PM_BOT_LLM_*) for `cap`'s answer to the user message
 * `user` and check it (pmbot_capability_run_output). `*audit` gets the
 * run's audit metadata and `*result` the checked output (both new, the
 * caller's). A rejected answer prints the spec's payload on stdout, is
 * audited as "rejected" and gives EXIT_INVALID; no provider, a provider
 * failure or out of memory EXIT_RUNTIME, printed. EXIT_OK otherwise.
 */
int llm_ask(json_t **result, json_t **audit, struct llm_run *r, const struct llm_opts *o,
	const pmbot_capability *cap, const char *user);

/* One stderr line per governance violation. */
void llm_print_violations(const json_t *violations);

#endif
