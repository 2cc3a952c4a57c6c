#ifndef PMBOT_CMD_LLM_INT_H
#define PMBOT_CMD_LLM_INT_H

#include "cmd.h"
#include "pmbot/llm.h"

/*
 * Mode B commands (cmd_draft.c: draft and prompt-ir; cmd_advise.c):
 * options, the Prompt IR with governance and plugins, and its context.
 * docs/llm.md describes them for users.
 */

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
	long budget;             /* --budget N; 0: PMBOT_LLM_RUN_DEFAULT_BUDGET */
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

/*
 * A run as the commands hold it: the library's run (pmbot/llm.h, part 5) with
 * the repository and configuration this command opened for it.
 */
struct llm_run {
	pmbot_repo *repo;
	pmbot_config *config;             /* at the commit: llm.policies */
	pmbot_llm_run run;
};

/*
 * Open the repository, resolve --rev and read the configuration there, then
 * prepare the run (pmbot_llm_run_prepare()) for `capability`. EXIT_INVALID
 * when governance denied (r->run.denied; nothing may be sent) or a
 * reference is refused; prints why. Free with llm_run_free() whatever it returns.
 */
int llm_prepare(struct llm_run *r, const struct llm_opts *o, const char *capability,
	const char *role, const char *intent);

void llm_run_free(struct llm_run *r);

/*
 * The user message of `cap` for run `r` (pmbot_llm_run_render()), with this
 * repository as cmd_current_repo() names it. Prints failures; 0 or -1.
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
 * `user` and check it (pmbot_llm_run_answer()). `*audit` gets the
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
