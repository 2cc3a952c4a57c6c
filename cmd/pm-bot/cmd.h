#ifndef PMBOT_CMD_H
#define PMBOT_CMD_H

#include <stdio.h>

#include <jansson.h>

/*
 * The command-line tool. Only code under cmd/ prints or chooses an exit
 * status; every subcommand is one cmd_<name>.c with an entry in the table
 * in main.c.
 */

enum {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,  /* I/O, out of memory, git or network failures */
	EXIT_INVALID = 2,  /* invalid input or usage */
	EXIT_CHANGES = 3,  /* plan --detailed-exitcode: changes pending */
	EXIT_PAUSED = 4    /* apply: the write budget paused it; run it again after the time printed */
};

/* Command flags. */
#define NEEDS_REPO (1u << 0) /* reads a git repository (--repo, default ".") */

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	unsigned flags;
	const char *summary;
	const char *usage; /* full help text shown by `pm-bot help <name>` */
};

/* The command named `name`, or NULL. */
const struct cmd *cmd_lookup(const char *name);

/*
 * Report what getopt_long (run with a ':' optstring and opterr = 0) rejected:
 * returned `c` (':' for a missing value, '?' for an unknown option) at
 * argv[optind - 1]. Prints the usage of `self`; returns EXIT_INVALID.
 */
int cmd_bad_option(const struct cmd *self, int c, char **argv);

/*
 * Print "pm-bot: <message>" (log-safe: the message may quote a word of the
 * command line) and the usage of `c` to standard error; returns EXIT_INVALID.
 */
int cmd_usage_error(const struct cmd *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

int cmd_validate(int argc, char **argv);
int cmd_graph(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_render(int argc, char **argv);

/* Shared helpers of the subcommands (cmd/pm-bot/common.c). */
#include "pmbot/diag.h"
#include "pmbot/workgraph.h"

/*
 * Read FILE ("-" is standard input) and load its WorkGraph. Returns EXIT_OK
 * with `*out` set (caller frees), EXIT_INVALID with diagnostics, or
 * EXIT_RUNTIME after printing why the file could not be read.
 */
int cmd_load_report_file(pmbot_workgraph **out, const char *file, pmbot_diag_list *diags);

/* cmd_load_report_file without the graph (pmbot_workgraph_check): `validate`. */
int cmd_check_report_file(const char *file, pmbot_diag_list *diags);

/* Print diagnostics, sorted, one `file:line:col: error CODE path: message` per line. */
void cmd_print_diags(FILE *f, pmbot_diag_list *diags);

/* Print `v` as canonical JSON and a newline to stdout. EXIT_OK or EXIT_RUNTIME. */
int cmd_print_json(const json_t *v);

/*
 * Outside text (file names, ids, titles, logins, comment words, error text
 * that quotes them) as it may be printed: pmbot_log_show() capped at
 * PMBOT_LOG_NAME_MAX characters (cmd_show) or, for messages and error text,
 * PMBOT_LOG_MESSAGE_MAX (cmd_show_msg). The result is
 * borrowed from one of 8 buffers used in turn: valid until 8 more calls,
 * enough for one printf. cmd_show_free() releases them at exit.
 */
/*
 * 1 when output to `f` may be coloured: a terminal, $NO_COLOR unset or
 * empty (no-color.org), $TERM not "dumb". Never in a pipe, a file or CI logs.
 */
int cmd_color(FILE *f);
const char *cmd_show(const char *s);
const char *cmd_show_msg(const char *s);
void cmd_show_free(void);

/*
 * How this tool shows a library's notes (pmbot/note.h): escaped with
 * cmd_show_msg(), on standard output or error by level; diagnostics as
 * cmd_print_diags() on standard error.
 */
#include "pmbot/note.h"
const pmbot_notes *cmd_notes(void);

/*
 * cmd_notes() for `pm-bot action`: diagnostics are also printed to
 * standard output as workflow commands (pmbot_diag_annotation()), which the
 * runner turns into annotations on the report's lines. Static, not owned.
 */
const pmbot_notes *cmd_action_notes(void);

/* The file name shown in diagnostics for FILE ("-" becomes "<stdin>"). */
const char *cmd_display_name(const char *file);

#include "pmbot/source.h"
#include "pmbot/repo.h"

/*
 * The repository pm-bot works for, "OWNER/NAME": $GITHUB_REPOSITORY, else
 * the URL of the "origin" remote of `repo` (may be NULL). NULL when neither
 * says. The caller frees the result.
 */
char *cmd_current_repo(pmbot_repo *repo);

/*
 * libgit2 is loaded and initialised only by commands that open a
 * repository: loading maps it with its TLS and SSH libraries, its start-up
 * reads the system's CA certificates, costs `validate FILE` need not pay.
 * cmd_git_shutdown() undoes cmd_open_repo()'s initialisation.
 */
void cmd_git_shutdown(void);

/* Open the repository at `path`; prints why on failure. EXIT_OK or EXIT_RUNTIME. */
int cmd_open_repo(pmbot_repo **out, const char *path);

/*
 * Read the configuration at `rev` of `repo` (defaults when there is no
 * file), printing diagnostics or the failure. EXIT_OK, EXIT_INVALID or
 * EXIT_RUNTIME.
 */
int cmd_load_config(pmbot_config **out, pmbot_repo *repo, const char *rev);

/* Inputs of `plan` and `apply` (cmd/pm-bot/plan_inputs.c). */
#include "pmbot/inputs.h"
#include "pmbot/note.h"
#include "pmbot/plan.h"
#include "pmbot/state.h"

struct github_conn;

struct plan_opts {
	const char *repo;        /* NULL: reports are files named in `paths` */
	const char *rev;         /* with repo */
	const char *config_rev;  /* with repo; NULL: rev */
	const char *state;       /* NULL: <repo or .>/.pm-bot/state.json */
	const char *backend;     /* NULL, "file" or "github" */
	const char *target;      /* NULL: from the reports' scope or the config */
	char **paths;            /* report paths (in git with repo, else files) */
	size_t n_paths;
	/* GitHub backend only */
	const char *cache_dir;   /* NULL: $PMBOT_GITHUB_CACHE_DIR, else <repo>/.pm-bot/cache */
	const char *pace_ms;     /* NULL: $PMBOT_GITHUB_PACE_MS, else the client's default */
	int stats;               /* print request counters at the end (or $PMBOT_GITHUB_STATS) */
	const char *config_path; /* NULL: .github/pm-bot.yml */
};

/*
 * A GitHub client for one run (cmd/pm-bot/github_conn.c): libcurl set up,
 * the token's own login looked up, progress and waits told on standard
 * error, counters printed at the end when asked.
 */
struct github_conn {
	struct pmbot_github_client *client;
	char *self_login;        /* the token's login, NULL when it could not be read */
	int curl_ready;
	int stats;
	int verbose;             /* $PMBOT_VERBOSE: every request on standard error */
	unsigned long responses;
	long long start_ms, last_progress_ms;
};

/* Open `gc` from the environment and `o`'s GitHub options; prints failures. EXIT_*. */
int github_conn_open(struct github_conn *gc, const struct plan_opts *o);

/* Print the counters when asked and free everything; `gc` may be zeroed. */
void github_conn_close(struct github_conn *gc);

/* The library's inputs (pmbot/inputs.h) with what this command opened for them. */
struct plan_inputs {
	pmbot_inputs in;
	pmbot_repo *repo;          /* opened at o->repo */
	char *current;             /* $GITHUB_REPOSITORY, else the origin remote's */
	struct github_conn gh;     /* opened when the github backend needs it */
	const struct plan_opts *opts;
};

/* Load config, forms, reports, target and state; prints I/O failures. EXIT_*. */
int plan_inputs_load(struct plan_inputs *in, const struct plan_opts *o, pmbot_diag_list *diags);

/*
 * Only the configuration (at o->config_rev, else o->rev, else HEAD of
 * o->repo, else ".") and the state of `target`: what applying a proposal
 * bundle needs, which has no reports to re-plan. EXIT_*.
 */
int plan_inputs_load_state(struct plan_inputs *in, const struct plan_opts *o, const char *target,
	pmbot_diag_list *diags);

/* Plan from loaded inputs: `*bundle` set unless EXIT_RUNTIME. */
int plan_inputs_plan(json_t **bundle, struct plan_inputs *in, pmbot_diag_list *diags);

void plan_inputs_free(struct plan_inputs *in);

int cmd_plan(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_state(int argc, char **argv);
int cmd_action(int argc, char **argv);
int cmd_draft(int argc, char **argv);
int cmd_prompt_ir(int argc, char **argv);
int cmd_advise(int argc, char **argv);

/* Long options shared by plan and apply (handled by plan_opts_parse). */
#define PLAN_INPUT_OPTIONS \
	{ "repo", required_argument, NULL, 'R' }, \
	{ "rev", required_argument, NULL, 'r' }, \
	{ "config-rev", required_argument, NULL, 'c' }, \
	{ "state", required_argument, NULL, 's' }, \
	{ "backend", required_argument, NULL, 'B' }, \
	{ "target", required_argument, NULL, 't' }, \
	GITHUB_OPTIONS

/* Long options of the commands that can talk to GitHub (plan_opts_parse). */
#define GITHUB_OPTIONS \
	{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR }, \
	{ "pace-ms", required_argument, NULL, OPT_PACE_MS }, \
	{ "stats", no_argument, NULL, OPT_STATS }

enum { OPT_CACHE_DIR = 0x100, OPT_PACE_MS, OPT_STATS };

/* Apply one shared option; 0, or -1 when `c` is not one of them. */
int plan_opts_parse(struct plan_opts *o, int c, const char *arg);

/* Write a bundle as canonical JSON to `path` atomically; prints failures. EXIT_*. */
int write_bundle(const char *path, const json_t *bundle);

#endif
