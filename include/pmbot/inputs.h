#ifndef PMBOT_INPUTS_H
#define PMBOT_INPUTS_H

#include <jansson.h>

#include "pmbot/apply.h"
#include "pmbot/source.h"
#include "pmbot/diag.h"
#include "pmbot/note.h"
#include "pmbot/plan.h"
#include "pmbot/repo.h"
#include "pmbot/state.h"
#include "pmbot/workgraph.h"

struct pmbot_github_client;

/*
 * Everything one plan is made from, gathered under the run's rules: the
 * configuration (from `config_rev`: for the Action, the default branch's,
 * never the pull request's), the issue forms, the reports (their sizes
 * measured before any is read, their items counted before any graph is
 * built: limits.*), the target repository (checked against the allowlist
 * before any backend is opened) and its state. `plan`, `apply` and
 * `action` all load their inputs here.
 */
typedef struct {
	pmbot_repo *repo;          /* borrowed; NULL: reports are the files named in `paths` */
	const char *workdir;       /* the default state file's directory's parent; NULL: "." */
	const char *rev;           /* with repo: where the reports are read */
	const char *config_rev;    /* with repo; NULL: rev */
	const char *config_path;   /* NULL: PMBOT_CONFIG_PATH */
	const char *current_repo;  /* "OWNER/NAME" the configuration's repos default to; may be NULL */
	const char *state;         /* file backend: NULL: <workdir>/.pm-bot/state.json */
	const char *backend;       /* NULL, "file" or "github" */
	const char *target;        /* NULL: from the reports' scope or the configuration */
	char *const *paths;        /* report globs (with repo) or files ("-": standard input) */
	size_t n_paths;
	/*
	 * The github backend's client (borrowed) and the token's login (may be
	 * NULL). When `client` is NULL, open_github() is asked for them, after
	 * the allowlist check; it returns PMBOT_OK or negative (having told why
	 * itself), and what it gives must outlive the inputs.
	 */
	struct pmbot_github_client *client;
	const char *self_login;
	int (*open_github)(void *ctx, struct pmbot_github_client **client, const char **self_login);
	void *open_github_ctx;
	const pmbot_notes *notes;  /* may be NULL: where failures and warnings are told */
} pmbot_inputs_opts;

typedef struct {
	pmbot_repo *repo;          /* borrowed: the options' */
	pmbot_config *config;      /* owned */
	pmbot_formset *forms;      /* owned */
	pmbot_workgraph *graph;    /* owned: every report merged */
	int graph_merged;          /* 1: `graph` holds more than one report's (finish it again) */
	json_t *source;            /* owned: {commit, reports[{path, blob}], config_blob} */
	char *target;              /* owned */
	char *scope_target;        /* owned: the reports' one scope repository, if they agree */
	int scope_conflict;
	size_t n_items;            /* items of the reports loaded so far (limits.max_items) */
	char *state_path;          /* owned */
	const char *self_login;    /* borrowed (the github backend's) */
	pmbot_backend *backend;    /* owned */
	pmbot_state *state;        /* owned */
	/* What `state` was read for: with read_scoped, read_scope (its needs
	 * owned; stable ids borrowed from `graph`, repositories from `target`
	 * and read_repos, owned and NULL-terminated), else every issue. */
	pmbot_read_scope read_scope;
	char **read_repos;
	int read_scoped;
	pmbot_buf *canonical;      /* borrowed, may be NULL: set after loading;
				    * pmbot_inputs_plan() appends the bundle's
				    * canonical JSON (pmbot_plan_input.canonical) */
	int lean;                  /* set after loading: pmbot_plan_input.lean */
} pmbot_inputs;

/*
 * Load configuration, forms, reports, target and state into `*in` (zeroed
 * first; free it with pmbot_inputs_free() whatever the result). PMBOT_OK;
 * PMBOT_EINVALID with diagnostics in `diags` (or a note) for bad input;
 * PMBOT_ERROR for I/O, git, GitHub or memory failures (told through
 * o->notes).
 */
PMBOT_WARN_UNUSED int pmbot_inputs_load(pmbot_inputs *in, const pmbot_inputs_opts *o,
	pmbot_diag_list *diags);

/*
 * Only `config` (taken over, freed with `in` even on failure) and the state
 * of `target`: what applying a proposal bundle needs, which has no reports
 * to re-plan. Codes as pmbot_inputs_load().
 */
PMBOT_WARN_UNUSED int pmbot_inputs_load_state(pmbot_inputs *in, const pmbot_inputs_opts *o,
	pmbot_config *config, const char *target, pmbot_diag_list *diags);

/*
 * Plan from loaded inputs: `*bundle` (a new reference) set unless
 * PMBOT_ERROR; PMBOT_EINVALID when the plan has errors.
 */
PMBOT_WARN_UNUSED int pmbot_inputs_plan(json_t **bundle, const pmbot_inputs *in,
	const pmbot_notes *notes, pmbot_diag_list *diags);

/*
 * `*out` describes the state read of `in` (pmbot_apply_start, everything
 * borrowed from `in`) so that applying the plan checked against it starts
 * from it instead of reading again; out->state NULL when there is none.
 */
void pmbot_inputs_start(pmbot_apply_start *out, const pmbot_inputs *in);

/* Free everything `in` owns and zero it; a zeroed `in` is fine. */
void pmbot_inputs_free(pmbot_inputs *in);

#endif
