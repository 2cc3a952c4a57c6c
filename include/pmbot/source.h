#ifndef PMBOT_SOURCE_H
#define PMBOT_SOURCE_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/diag.h"
#include "pmbot/labels.h"
#include "pmbot/operation.h"
#include "pmbot/render.h"
#include "pmbot/repo.h"
#include "pmbot/report.h"
#include "pmbot/workgraph.h"

/*
 * The public header of src/source/, what a repository says at a revision, in
 * three parts:
 *  1. the configuration, .github/pm-bot.yml: parsed, validated, defaults
 *     (pure),
 *  2. the write budget's syntax (pure; the GitHub client applies it),
 *  3. the configuration, forms and reports read from git at a revision.
 */

/* ==== 1. The configuration ============================================== */

/*
 * The repository configuration, `.github/pm-bot.yml` (docs/config.md,
 * docs/schemas/config.v1.schema.json). The caller reads its bytes from a
 * trusted revision (the default branch, never a pull request's head, so a
 * pull request cannot widen its own permissions) and hands them here; this
 * module parses, validates and fills in defaults. It knows neither git nor
 * the network.
 */

/*
 * GitHub repository permissions, weakest first, so that `have >= need`
 * answers "is this enough". GitHub's "none" is deliberately not a value:
 * pmbot_permission_parse() rejects it and callers treat that as no access.
 */
typedef enum {
	PMBOT_PERM_READ = 0,
	PMBOT_PERM_TRIAGE,
	PMBOT_PERM_WRITE,
	PMBOT_PERM_MAINTAIN,
	PMBOT_PERM_ADMIN
} pmbot_permission;

/* "read", "triage", "write", "maintain", "admin"; static storage, NULL if out of range. */
const char *pmbot_permission_name(pmbot_permission perm);

/* Parse a permission name (exact). PMBOT_OK, or PMBOT_ENOTFOUND. */
PMBOT_WARN_UNUSED int pmbot_permission_parse(pmbot_permission *out, const char *name);

/* A list of strings; `items` and every string are owned by the config. */
typedef struct {
	char **items;
	size_t count;
	size_t alloc;  /* room in `items` (pmbot_array_grow) */
} pmbot_config_list;

/*
 * The effective configuration: every field holds its default when the file
 * did not set it. Everything reachable from it is owned by the config and
 * released by pmbot_config_free(); treat it as read-only.
 */
typedef struct {
	pmbot_config_list reports;         /* report path globs; default: the .md files under plans/ */
	pmbot_config_list repos;           /* write allowlist, "OWNER/NAME"; [default_repo] */
	char *project_owner;               /* Projects v2 owner login; NULL: no project */
	long project_number;               /* 1..2147483647; 0 when no project */
	pmbot_label_scheme labels;         /* prefixes; the strings are owned by the config */
	pmbot_config_list trusted_authors; /* logins whose markers count; ["github-actions[bot]"] */
	pmbot_permission min_permission;   /* least permission that may approve; write */
	pmbot_config_list approvers;       /* approval.users; empty: anyone with min_permission */
	unsigned char denied[PMBOT_OP_COUNT];        /* 1: operation never proposed/applied */
	unsigned char auto_approved[PMBOT_OP_COUNT]; /* 1: applies without an approval comment */
	char *templates;                   /* issue forms directory, repo-relative, no trailing '/' */
	int issue_types;                   /* issue_types: 1 auto (set the GitHub issue type named
	                                      like each kind, where one exists; default), 0 off */
	json_t *llm_policies;              /* llm.policies: custom governance policies (an array of
	                                      objects, checked by the governance); NULL: none */
	long llm_digest_threshold;         /* llm.digest_threshold; 0: the default */
	/* limits: what one run reads of the reports (checked before parsing) */
	size_t max_report_bytes;           /* one report's blob; PMBOT_CONFIG_DEFAULT_MAX_REPORT_BYTES */
	size_t max_total_bytes;            /* every report together; ..._MAX_TOTAL_BYTES */
	size_t max_items;                  /* epics + features + tasks of every report; ..._MAX_ITEMS */
	/* github.write_budget, checked by pmbot_github_budget_parse(); NULL:
	 * unset ($PMBOT_GITHUB_WRITE_BUDGET, else the client's default) */
	char *write_budget;
} pmbot_config;

/*
 * Defaults of `limits`: 4 MiB per report (10,000 items of a typical report
 * take 2.8 MB), 8 MiB in all, 10,000 items. Each may be set from 1 to the
 * ..._MAX below.
 */
#define PMBOT_CONFIG_DEFAULT_MAX_REPORT_BYTES ((size_t)4 << 20)
#define PMBOT_CONFIG_DEFAULT_MAX_TOTAL_BYTES ((size_t)8 << 20)
#define PMBOT_CONFIG_DEFAULT_MAX_ITEMS ((size_t)10000)
#define PMBOT_CONFIG_LIMIT_BYTES_MAX (64LL << 20)
#define PMBOT_CONFIG_LIMIT_ITEMS_MAX 100000LL

/* Context references a draft may carry before the digest plugin folds them: llm.digest_threshold. */
#define PMBOT_CONFIG_DEFAULT_DIGEST_THRESHOLD 10

/* Largest configuration file accepted (INPUT_TOO_LARGE beyond): 1 MiB. */
#define PMBOT_CONFIG_MAX_BYTES ((size_t)1 << 20)

/*
 * The configuration of a repository without a config file. `default_repo`
 * ("OWNER/NAME", usually GITHUB_REPOSITORY) becomes the only allowed repo;
 * NULL leaves the allowlist empty. On success `*out` is a new config the
 * caller frees with pmbot_config_free(). PMBOT_EINVALID when `default_repo`
 * is not OWNER/NAME, PMBOT_ERROR when out of memory; `*out` is NULL then.
 */
int pmbot_config_default(pmbot_config **out, const char *default_repo);

/*
 * Parse and validate `len` bytes of YAML (or JSON, which is YAML) as a
 * config; `text` may be NULL when `len` is 0. An empty file, or one that
 * holds only comments or `null`, gives the defaults; a key set to null
 * also keeps its default. `default_repo` is as
 * for pmbot_config_default() and applies when `repos` is not set; a
 * malformed one is a CONFIG_VALUE at the root (line 0). `file` (may be
 * NULL) is recorded in the diagnostics.
 *
 * Every problem is reported, never only the first, each with its JSON
 * Pointer path and the line and column in `text`: CONFIG_UNKNOWN_KEY (with
 * "did you mean" when a known key is close), CONFIG_TYPE (wrong type; the
 * message names the expected type), CONFIG_VALUE (bad value); YAML loader
 * codes (REPORT_PARSE_YAML, DUPLICATE_KEY, INVALID_UTF8, INPUT_TOO_LARGE,
 * INPUT_TOO_DEEP, YAML_ALIAS_LIMIT) pass through. Diagnostics this call adds
 * are sorted by line and column.
 *
 * On success `*out` is a new config the caller frees with
 * pmbot_config_free(). PMBOT_EINVALID when the input was rejected (errors
 * added to `diags`), PMBOT_ERROR on runtime failure; `*out` is NULL then.
 */
PMBOT_WARN_UNUSED int pmbot_config_parse(pmbot_config **out, const char *file, const char *text,
	size_t len, const char *default_repo, pmbot_diag_list *diags);

/* Release `cfg` and everything it owns. NULL is a no-op. */
void pmbot_config_free(pmbot_config *cfg);

/*
 * The effective configuration as JSON, every key present (`project` is
 * null when none; operation lists in enum order, without duplicates).
 * `*out` is a new reference the caller owns. PMBOT_OK or PMBOT_ERROR.
 */
int pmbot_config_to_json(json_t **out, const pmbot_config *cfg);

/* 1 when `op` is in deny_operations, or is not a known operation; else 0. */
int pmbot_config_operation_denied(const pmbot_config *cfg, pmbot_operation op);

/* 1 when `op` is in auto_approve; 0 otherwise (also for unknown values). */
int pmbot_config_operation_auto_approved(const pmbot_config *cfg, pmbot_operation op);

/* 1 when "owner/name" is in the allowlist, compared case-insensitively as GitHub does. */
int pmbot_config_repo_allowed(const pmbot_config *cfg, const char *repo);

/*
 * 1 when `login` may carry trusted markers. Logins compare
 * case-insensitively. `is_bot` says the API reported the author as a Bot:
 * GraphQL names the Actions bot "github-actions" where REST and the config
 * say "github-actions[bot]", so a bot login is matched with its "[bot]"
 * suffix; a user login never matches a "[bot]" entry (a user named like an
 * app is not that app).
 */
int pmbot_config_author_trusted(const pmbot_config *cfg, const char *login, int is_bot);

/*
 * Also trust markers on issues authored by `login` (copied; a no-op when
 * it is already trusted, spelled in any case): the token's own login, which
 * authored the issues pm-bot created. A login ending in "[bot]" matches bot
 * authors only, as for entries of the file. PMBOT_OK, PMBOT_EINVALID for an
 * empty login, PMBOT_ERROR when out of memory (`cfg` unchanged).
 */
int pmbot_config_trust(pmbot_config *cfg, const char *login);

/*
 * 1 when `login`, whose permission on the repository is `perm`, may
 * approve a plan: `perm` is at least min_permission and, when approval.users
 * is not empty, `login` is listed (case-insensitive). Both must hold.
 */
int pmbot_config_approver_allowed(const pmbot_config *cfg, const char *login,
	pmbot_permission perm);

/* ==== 2. The write budget =============================================== */

/*
 * The write budget: content-creating requests (REST POST, PATCH, PUT and
 * DELETE; a GraphQL mutation document, however many aliases it holds,
 * counts once) allowed in sliding windows, GitHub's documented secondary
 * limits by default: at most `count` writes in any `seconds`, for every
 * window at once. Written "COUNT/SECONDSs" comma-separated, e.g.
 * PMBOT_GITHUB_DEFAULT_WRITE_BUDGET; "off" is no budget (n == 0).
 */
#define PMBOT_GITHUB_DEFAULT_WRITE_BUDGET "80/60s,500/3600s"
#define PMBOT_GITHUB_BUDGET_MAX_WINDOWS 8
#define PMBOT_GITHUB_BUDGET_MAX_COUNT 100000L
#define PMBOT_GITHUB_BUDGET_MAX_SECONDS 86400L
/* The longest wait for a window inside one run, whatever the windows. */
#define PMBOT_GITHUB_BUDGET_MAX_WAIT_MS 60000LL

typedef struct {
	long count;   /* 1..PMBOT_GITHUB_BUDGET_MAX_COUNT */
	long seconds; /* 1..PMBOT_GITHUB_BUDGET_MAX_SECONDS */
} pmbot_github_window;

typedef struct {
	size_t n;     /* 0: no budget */
	pmbot_github_window w[PMBOT_GITHUB_BUDGET_MAX_WINDOWS];
} pmbot_github_budget;

/*
 * Parse `text`: "off", or 1..PMBOT_GITHUB_BUDGET_MAX_WINDOWS windows
 * "COUNT/SECONDSs" separated by commas (spaces around items allowed),
 * COUNT and SECONDS decimal without sign or leading zero, in the ranges
 * above, no two windows of the same length. `*out` is filled on success
 * only. 0, or PMBOT_EINVALID with the reason appended to `err` (may be
 * NULL; the caller owns it).
 */
PMBOT_WARN_UNUSED int pmbot_github_budget_parse(pmbot_github_budget *out, const char *text,
	pmbot_buf *err);

/*
 * Window arithmetic: the earliest epoch-ms time >= `now` at which one more
 * write fits every window of `b`, given the past writes `times` (epoch ms,
 * ascending, `n` of them), leaving `hold` writes of each window unspent
 * (at most C - 1 of a window of C). A window of C writes in S seconds is
 * full when C - hold of them are later than now - S*1000; it frees when the
 * oldest of its last C - hold writes is S seconds old. `now` itself when
 * there is room.
 */
long long pmbot_github_budget_next(const pmbot_github_budget *b, const long long *times, size_t n,
	long long now, long hold);

/* ==== 3. A repository at a revision ===================================== */

/*
 * What pm-bot reads from a repository at a revision: its configuration,
 * its issue forms and its reports, all from git objects (never the work
 * tree). In CI the configuration and forms come from the default branch
 * and the reports from the pull request's head, so a pull request cannot
 * widen its own permissions.
 */

/* Where the configuration lives in a repository. */
#define PMBOT_CONFIG_PATH ".github/pm-bot.yml"

/*
 * "OWNER/NAME" of a GitHub remote URL: https://HOST/OWNER/NAME(.git),
 * git@HOST:OWNER/NAME(.git) or ssh://git@HOST/OWNER/NAME(.git). `*out` is a
 * new string the caller frees. PMBOT_EINVALID when the URL has no such
 * form, PMBOT_ERROR when out of memory.
 */
int pmbot_source_slug_from_url(char **out, const char *url);

/*
 * The effective configuration at `rev`: .github/pm-bot.yml parsed and
 * validated, or the defaults when the file does not exist there.
 * `default_repo` (may be NULL) is the current repository, the default
 * write allowlist. `blob_id` (may be NULL) receives the config blob's id,
 * "" when there is none. `*out` is new; the caller frees it with
 * pmbot_config_free(). PMBOT_EINVALID with diagnostics for a bad file;
 * PMBOT_ERROR or PMBOT_ENOTFOUND (unknown revision) with the reason
 * appended to `err` (may be NULL; caller owns it).
 */
int pmbot_source_config(pmbot_config **out, char blob_id[PMBOT_OID_HEX_SIZE],
	pmbot_repo *repo, const char *rev, const char *default_repo,
	pmbot_diag_list *diags, pmbot_buf *err);

/* pmbot_source_config() for the file at `path` (repository-relative) instead. */
int pmbot_source_config_at(pmbot_config **out, char blob_id[PMBOT_OID_HEX_SIZE],
	pmbot_repo *repo, const char *rev, const char *path, const char *default_repo,
	pmbot_diag_list *diags, pmbot_buf *err);

/*
 * The issue forms under cfg->templates at `rev`, with pm-bot's built-in
 * forms for every type the repository has none for. A form that does not
 * parse gives its diagnostics and is left out (the result is still
 * usable; the return is PMBOT_EINVALID so callers can fail). `*out` is new;
 * the caller frees it with pmbot_formset_free(). PMBOT_ERROR with the
 * reason appended to `err` (may be NULL; caller owns it).
 */
int pmbot_source_forms(pmbot_formset **out, pmbot_repo *repo, const char *rev,
	const pmbot_config *cfg, pmbot_diag_list *diags, pmbot_buf *err);

/*
 * Read the report blob `blob_id` and load its WorkGraph
 * (pmbot_workgraph_load) with `path` as the file name in diagnostics.
 * Returns as pmbot_workgraph_load; a blob over lim->max_bytes is
 * INPUT_TOO_LARGE (PMBOT_EINVALID). A failure to read appends
 * its reason to `err` (may be NULL; caller owns it).
 */
int pmbot_source_report(pmbot_workgraph **out, pmbot_repo *repo, const char *blob_id,
	const char *path, const pmbot_limits *lim, pmbot_diag_list *diags, pmbot_buf *err);

/*
 * The report files a run reads at `rev`: the `n_paths` `paths` when there
 * are any (each an exact glob; a path that does not exist at `rev` is left
 * out, so the caller compares counts), else every file matching
 * cfg->reports. With `base` (may be NULL) only those added, modified or
 * renamed between `base` and `rev` (pmbot_repo_changed(); a deleted report
 * is left out), with their new path and blob. `*out` is overwritten and
 * freed by the caller with pmbot_repo_files_free(), also after a failure;
 * `cfg` and `paths` are borrowed. Returns as pmbot_repo_list(): PMBOT_OK,
 * PMBOT_EINVALID (a bad glob), PMBOT_ENOTFOUND (an unknown revision) or
 * PMBOT_ERROR, the reason appended to `err` (may be NULL; caller owns it).
 */
int pmbot_source_select_reports(pmbot_repo_files *out, pmbot_repo *repo,
	const pmbot_config *cfg, const char *rev, const char *base,
	const char *const *paths, size_t n_paths, pmbot_buf *err);

#endif
