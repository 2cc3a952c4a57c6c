#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "pmbot/mem.h"
#include "pmbot/net.h"
#include "pmbot/banned.h"

static int cmd_help(int argc, char **argv);

/* The options of the Mode B commands (LLM_OPTIONS). */
#define LLM_HELP \
	"  --repo DIR         the git repository (default .); the configuration and\n" \
	"                     --context refs are read from git objects at --rev\n" \
	"                     (default HEAD), never the work tree\n" \
	"  --context REF      more context: file:PATH, diff:REV, memory:KEY or text\n" \
	"  --constraint TEXT  a rule the model must follow (checked by governance)\n" \
	"  --budget N         the token budget before the budget plugin (default 4000)\n"

/* The GitHub options every command that talks to GitHub takes (GITHUB_OPTIONS). */
#define GITHUB_HELP \
	"GitHub (--backend github): token from GH_TOKEN or GITHUB_TOKEN, API from\n" \
	"GITHUB_API_URL and GITHUB_GRAPHQL_URL (GitHub Enterprise works the same way).\n" \
	"  --cache-dir DIR     ETag cache for conditional reads (default DIR/.pm-bot/cache)\n" \
	"  --pace-ms N         at least N ms between writes (default 1000; 0 disables)\n" \
	"  --stats             print the number of requests by kind at the end\n"
static int cmd_version(int argc, char **argv);

static const struct cmd commands[] = {
	{ "validate", cmd_validate, 0, "check reports and print every problem with file and line",
	  "usage: pm-bot validate [--json] FILE...\n"
	  "       pm-bot validate [--json] --repo DIR [--rev REV] [--base REV] [--config-rev REV] [PATH...]\n"
	  "\n"
	  "Extracts the pm-bot:report-ir/v1 block of each Markdown FILE (\"-\" reads\n"
	  "standard input), checks it against ReportIR v1 and prints every error and\n"
	  "warning as `file:line:column: error CODE path: message`.\n"
	  "\n"
	  "With --repo, reports are read from git objects at REV (default HEAD), never\n"
	  "from the work tree: every file matching the configured `reports` globs, or\n"
	  "the PATHs (or globs) given. .github/pm-bot.yml is read at --config-rev\n"
	  "(default: REV).\n"
	  "\n"
	  "  --json            one JSON object per file ({file, valid, errors, warnings},\n"
	  "                    plus blob with --repo); an array when several files\n"
	  "  --repo DIR        a git work tree or bare repository\n"
	  "  --rev REV         any revision: HEAD, a branch, tag, SHA, origin/main\n"
	  "  --base REV        only the reports that changed between REV and --rev\n"
	  "                    (added, modified or renamed)\n"
	  "  --config-rev REV  the trusted revision to read the configuration from\n"
	  "\n"
	  "Exit status: 0 all valid, 2 any invalid, 1 a file could not be read.\n" },
	{ "config", cmd_config, NEEDS_REPO, "print the effective configuration as JSON",
	  "usage: pm-bot config [--repo DIR] [--rev REV]\n"
	  "\n"
	  "Reads .github/pm-bot.yml from git at REV (default HEAD) in the repository\n"
	  "DIR (default .), validates it, and prints the effective configuration, every\n"
	  "default filled in, as canonical JSON. A repository without the file prints\n"
	  "the defaults. The current repository (the default write allowlist) is\n"
	  "$GITHUB_REPOSITORY, else the origin remote.\n"
	  "\n"
	  "Exit status: 0 printed, 2 the file is invalid, 1 git failed.\n" },
	{ "render", cmd_render, NEEDS_REPO, "show the issues pm-bot would write for a report",
	  "usage: pm-bot render [--repo DIR] [--rev REV] [--id STABLE_ID] [--json] REPORT_PATH\n"
	  "\n"
	  "Reads REPORT_PATH, the configuration and the issue forms from git at REV\n"
	  "(default HEAD) and prints, for every work item (or only STABLE_ID), the\n"
	  "title, labels and body pm-bot would write, following the repository's\n"
	  "issue forms (built-in forms for types without one).\n"
	  "\n"
	  "  --json   an array of {stable_id, title, labels, body}\n"
	  "\n"
	  "Exit status: 0 printed, 2 invalid report, form or item, 1 git failed.\n" },
	{ "graph", cmd_graph, 0, "print the WorkGraph of a report",
	  "usage: pm-bot graph [--format json|mermaid|tree] FILE\n"
	  "\n"
	  "Validates FILE and prints its WorkGraph: canonical JSON (workgraph/v1,\n"
	  "the default), a Mermaid flowchart, or an indented epic/feature/task tree\n"
	  "with dependency annotations.\n"
	  "\n"
	  "Exit status: 0 printed, 2 the report is invalid, 1 a read failed.\n" },
	{ "plan", cmd_plan, NEEDS_REPO, "propose the changes that make GitHub match the reports",
	  "usage: pm-bot plan [--repo DIR] [--rev REV] [--config-rev REV] [--state FILE]\n"
	  "                   [--target OWNER/NAME] [--out FILE] [--format text|md|json]\n"
	  "                   [--detailed-exitcode] [--audit FILE] [PATH...]\n"
	  "\n"
	  "Reads the reports (from git at REV, default HEAD, in DIR, default .; or the\n"
	  "Markdown FILEs named when --repo is not given), the configuration and issue\n"
	  "forms, and the current state, and prints a ChangesetBundle: only the real\n"
	  "differences, in a stable order, with its plan hash. Nothing is written.\n"
	  "\n"
	  "  --state FILE        the file backend's state (default DIR/.pm-bot/state.json;\n"
	  "                      a missing file is an empty state)\n"
	  "  --backend NAME      file (default: the local state file) or github\n"
	  "  --target OWNER/NAME the repository the issues live in (default: the\n"
	  "                      reports' scope, else the config's first `repos` entry)\n"
	  "  --out FILE          also write the bundle as JSON (give it to `apply`)\n"
	  "  --format FORMAT     text for a terminal (default; coloured on a terminal\n"
	  "                      unless $NO_COLOR is set), md (the Markdown of the\n"
	  "                      pull-request comment) or json (the bundle)\n"
	  "  --detailed-exitcode 0 no changes, 3 changes or conflicts pending, 2 invalid, 1 error\n"
	  "  --audit FILE        append a `proposal` event to this audit ledger\n"
	  "\n"
	  GITHUB_HELP
	  "\n"
	  "Exit status: 0 planned, 2 invalid input, 1 failure (3: see above).\n" },
	{ "apply", cmd_apply, NEEDS_REPO, "apply an approved plan",
	  "usage: pm-bot apply --plan FILE --approve HASH [--audit FILE] [--actor NAME]\n"
	  "                    [--out FILE] [plan input options] [PATH...]\n"
	  "\n"
	  "Re-plans from the plan's own inputs (its commit, reports and target unless\n"
	  "given again) and applies only when HASH is the plan's hash and the fresh plan\n"
	  "still matches it: the same hash, or a resumed apply whose remaining changes\n"
	  "were all approved and whose missing ones are visibly applied. Anything else is\n"
	  "a stale plan and nothing is written. Every approval, denial, attempt, success\n"
	  "and failure goes to the audit ledger (default DIR/.pm-bot/audit.jsonl).\n"
	  "Takes plan's input options (--repo, --rev, --config-rev, --state, --backend,\n"
	  "--target and the GitHub options). With --backend github, writes are paced to\n"
	  "the write budget ($PMBOT_GITHUB_WRITE_BUDGET, else github.write_budget, else\n"
	  "80/60s,500/3600s); when it is spent the apply pauses and prints\n"
	  "\"k of N applied; resumes after T\": run the same command again after T.\n"
	  "\n"
	  "Exit status: 0 applied, 2 stale plan, wrong hash or denied, 1 failure,\n"
	  "4 paused by the write budget.\n" },
	{ "audit", cmd_audit, 0, "verify the audit ledger's hash chain",
	  "usage: pm-bot audit verify [--head HASH] FILE\n"
	  "\n"
	  "Checks that every line of the ledger carries the SHA-256 of the line before,\n"
	  "reports the first broken line, and prints the head: the SHA-256 of the last\n"
	  "line. A consistent chain alone does not show that nothing was rewritten\n"
	  "(whoever edits a line can recompute the lines after it).\n"
	  "\n"
	  "  --head HASH   a head published earlier (in a plan comment or a job summary):\n"
	  "                the ledger must still hold the line it is the hash of, so the\n"
	  "                lines up to it are unchanged (alias --expect-head)\n"
	  "\n"
	  "Exit status: 0 intact, 2 broken or not extending HASH, 1 unreadable.\n" },
	{ "state", cmd_state, NEEDS_REPO, "list the issues pm-bot manages, or show one",
	  "usage: pm-bot state list [--format text|json] [plan input options]\n"
	  "       pm-bot state show STABLE_ID [--format text|json] [plan input options]\n"
	  "\n"
	  "Reads the state the way `plan` does (the configuration at --rev of --repo,\n"
	  "default HEAD of .; the local state file, or GitHub with --backend github) and\n"
	  "lists the issues pm-bot manages in the target repository: a marker written by\n"
	  "a trusted author. Each line: stable id, issue, open or closed, on the board or\n"
	  "not, title, and whether a person edited the body (a conflict) or another\n"
	  "issue carries the same marker. `show` prints one issue: title, labels, type,\n"
	  "parent and blockers (with their stable ids), board values and body status.\n"
	  "Nothing is written.\n"
	  "\n"
	  "  --format text|json  text for people (default) or JSON: an array of\n"
	  "                      {stable_id, issue, state, title, on_board, edited,\n"
	  "                      duplicate}; show adds labels, parent, blocked_by,\n"
	  "                      issue_type and board\n"
	  "  --target OWNER/NAME the repository (default: the config's first `repos` entry)\n"
	  "\n"
	  GITHUB_HELP
	  "\n"
	  "Exit status: 0 printed, 2 bad usage or an id pm-bot does not manage, 1 failure.\n" },
	{ "snapshot", cmd_snapshot, 0, "write the live GitHub state as a state file",
	  "usage: pm-bot snapshot --repo OWNER/NAME [--repo OWNER/NAME...]\n"
	  "                       [--project OWNER/NUMBER] [--out FILE] [--backend github|file]\n"
	  "                       [--state FILE] [--cache-dir DIR] [--pace-ms N] [--stats]\n"
	  "\n"
	  "Reads every issue of the repositories (with body, labels, author, parent and\n"
	  "the dependencies pm-bot declared) and, with --project, the Projects v2 board\n"
	  "with its fields and items, and prints them as a State snapshot v1 (canonical\n"
	  "JSON, docs/state.md). Give the file to `plan --state FILE` to rehearse a plan\n"
	  "offline. Nothing is written to GitHub.\n"
	  "\n"
	  "  --out FILE        write the snapshot to FILE atomically instead of stdout\n"
	  "  --backend NAME    github (default) or file (reads --state FILE, default\n"
	  "                    .pm-bot/state.json, keeping only the named repositories)\n"
	  "\n"
	  GITHUB_HELP
	  "\n"
	  "Exit status: 0 written, 2 bad usage, 1 GitHub or I/O failure.\n" },
	{ "action", cmd_action, 0, "run as a GitHub Action: plan comments, approvals, field sync",
	  "usage: pm-bot action [--repo DIR] [--config PATH] [--audit FILE]\n"
	  "                     [--cache-dir DIR] [--pace-ms N] [--stats]\n"
	  "\n"
	  "Handles the GitHub Actions event in GITHUB_EVENT_NAME / GITHUB_EVENT_PATH\n"
	  "(docs/action.md): pull_request plans the head commit and posts or updates\n"
	  "one plan comment; issue_comment handles `/pm-bot plan` and\n"
	  "`/pm-bot apply <hash>` (permission, freshness and lock checks); push to the\n"
	  "default branch plans into the job summary; schedule and workflow_dispatch\n"
	  "sync Projects fields. Configuration and approval policy always come from\n"
	  "the default branch. Writes GITHUB_OUTPUT (result, plan_hash, changes,\n"
	  "conflicts) and GITHUB_STEP_SUMMARY.\n"
	  "\n"
	  "  --repo DIR      the checkout (default $GITHUB_WORKSPACE, else .)\n"
	  "  --config PATH   the configuration file in the default branch\n"
	  "                  (default .github/pm-bot.yml)\n"
	  "  --audit FILE    the audit ledger (default DIR/.pm-bot/audit.jsonl)\n"
	  "\n"
	  "Exit status: 0 handled (also when an approval is refused), 2 invalid\n"
	  "reports, configuration or event, 1 GitHub, git or apply failure.\n" },
	{ "draft", cmd_draft, 0, "draft a ReportIR from a prose report through a model",
	  "usage: pm-bot draft [--repo DIR] [--rev REV] [--context REF]... [--constraint TEXT]...\n"
	  "                    [--budget N] [--out OUT.md] [--json] FILE\n"
	  "\n"
	  "Builds a Prompt IR for the report_ir_draft capability (FILE is its first\n"
	  "context reference), checks it against the governance policies (built-in and\n"
	  "llm.policies of .github/pm-bot.yml) before anything is sent, runs the plugins,\n"
	  "asks the model configured by PM_BOT_LLM_PROVIDER, PM_BOT_LLM_URL,\n"
	  "PM_BOT_LLM_MODEL and PM_BOT_LLM_API_KEY, validates the answer (the\n"
	  "capability's schema, then every ReportIR v1 rule) and writes a Markdown report\n"
	  "with the draft for a human to review. Nothing is written to GitHub.\n"
	  "\n"
	  "FILE is read as it is on disk (a relative path from the --repo directory),\n"
	  "- from standard input, capped at 8 MiB of UTF-8 text; it need not be\n"
	  "committed. With --rev, FILE is read from git at REV instead.\n"
	  "\n"
	  LLM_HELP
	  "  --out OUT.md       write the draft there (atomically) instead of stdout\n"
	  "  --json             print {result, flags, transformations, audit} instead\n"
	  "\n"
	  "Exit status: 0 drafted, 2 denied by governance or an invalid answer, 1 no\n"
	  "provider, a provider or I/O failure.\n" },
	{ "prompt-ir", cmd_prompt_ir, 0, "show the prompt a draft would send, without sending it",
	  "usage: pm-bot prompt-ir [draft's options] FILE\n"
	  "\n"
	  "Prints, as JSON, the Prompt IR after governance and plugins, the plugins'\n"
	  "transformations, governance findings, phrases flagged in the input, and the\n"
	  "exact prompt with its size and an estimate of its input tokens. No model is\n"
	  "called and no provider is needed.\n"
	  "\n"
	  "Exit status: 0 printed, 2 denied by governance or a bad reference, 1 failure.\n" },
	{ "advise", cmd_advise, 0, "board review or issue adjustments proposed by a model",
	  "usage: pm-bot advise --capability board_strategy_review|issue_adjustment_proposal\n"
	  "                     [--state FILE] [--request TEXT] [--repo DIR] [--rev REV]\n"
	  "                     [--context REF]... [--constraint TEXT]... [--out FILE] [--json]\n"
	  "\n"
	  "Runs a Mode B capability over the state (a state file, default\n"
	  ".pm-bot/state.json of the repository; `pm-bot snapshot` writes one from\n"
	  "GitHub). board_strategy_review prints advice. issue_adjustment_proposal\n"
	  "writes a ChangesetBundle proposal (--out, default proposal.json): nothing is\n"
	  "applied until a human runs `pm-bot apply --plan FILE --approve HASH`.\n"
	  "\n"
	  LLM_HELP
	  "  --request TEXT     what to adjust (issue_adjustment_proposal)\n"
	  "\n"
	  "Exit status: 0 done, 2 denied or an invalid answer, 1 failure.\n" },
	{ "help", cmd_help, 0, "show help for pm-bot or one command",
	  "usage: pm-bot help [COMMAND]\n"
	  "       pm-bot COMMAND --help\n"
	  "\n"
	  "Prints the list of commands, or COMMAND's usage and options. The pm-bot(1)\n"
	  "manual page is made from the same text.\n" },
	{ "version", cmd_version, 0, "print the version",
	  "usage: pm-bot version\n"
	  "       pm-bot --version\n"
	  "\n"
	  "Prints pm-bot's version (`git describe` of the commit it was built from, or\n"
	  "the version of its release tarball) and the libgit2 and libcurl it runs with.\n"
	  "libcurl is loaded only to speak HTTP; when it cannot be, this says why and\n"
	  "exits 1.\n" },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

const struct cmd *cmd_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int cmd_usage_error(const struct cmd *c, const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	pmbot_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(msg.buf));
	pmbot_buf_free(&msg);
	if (c)
		fputs(c->usage, stderr);
	return EXIT_INVALID;
}

static void print_overview(FILE *f)
{
	size_t i;

	fputs("usage: pm-bot <command> [options]\n"
	      "       pm-bot help [<command>]\n"
	      "       pm-bot --version\n"
	      "\n"
	      "pm-bot turns planning reports (Markdown with a pm-bot:report-ir/v1 block)\n"
	      "into GitHub issues, sub-issues, dependencies and Projects fields.\n"
	      "\n"
	      "Commands:\n", f);
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\nRun `pm-bot help <command>` for a command's options.\n"
	      "Exit status: 0 success, 1 runtime failure, 2 invalid input or usage;\n"
	      "3 `plan --detailed-exitcode`: changes or conflicts pending; 4 `apply`:\n"
	      "paused by the GitHub write budget. The reference: docs/commands.md.\n", f);
}

static int cmd_help(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		print_overview(stdout);
		return EXIT_OK;
	}
	if (argc > 2)
		return cmd_usage_error(cmd_lookup("help"), "help takes at most one command");
	if (!(c = cmd_lookup(argv[1])))
		return cmd_usage_error(NULL, "unknown command '%s'; see `pm-bot help`", argv[1]);
	fputs(c->usage, stdout);
	return EXIT_OK;
}

static int cmd_version(int argc, char **argv)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	const char *curl;
	int major, minor, rev;

	if (argc > 1)
		return cmd_usage_error(cmd_lookup("version"), "version takes no arguments");
	/* A libcurl that cannot be loaded fails here, where installers look (action.yml). */
	if (!(curl = pmbot_net_version(&err))) {
		fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(err.buf));
		pmbot_buf_free(&err);
		return EXIT_RUNTIME;
	}
	if (pmbot_repo_libgit2_version(&major, &minor, &rev, &err) < 0) {
		fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(err.buf));
		pmbot_buf_free(&err);
		return EXIT_RUNTIME;
	}
	printf("pm-bot %s (libgit2 %d.%d.%d, %s)\n", PMBOT_VERSION, major, minor, rev, curl);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	int rc;

	/* A refusal leaves glibc's defaults: slower, not wrong. */
	(void)pmbot_mem_keep_freed();
	(void)pmbot_mem_huge_heap();
	if (argc < 2) {
		print_overview(stderr);
		return EXIT_INVALID;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return cmd_version(1, argv + 1);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(1, argv + 1);
	if (!(c = cmd_lookup(argv[1])))
		return cmd_usage_error(NULL, "unknown command '%s'; see `pm-bot help`", argv[1]);
	if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
		fputs(c->usage, stdout);
		return EXIT_OK;
	}
	rc = c->fn(argc - 1, argv + 1);
	cmd_git_shutdown();
	cmd_show_free();
	return rc;
}
