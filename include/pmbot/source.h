#ifndef PMBOT_SOURCE_H
#define PMBOT_SOURCE_H

#include "pmbot/config.h"
#include "pmbot/diag.h"
#include "pmbot/render.h"
#include "pmbot/repo.h"
#include "pmbot/report.h"
#include "pmbot/workgraph.h"

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
