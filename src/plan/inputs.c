#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmbot/inputs.h"
#include "pmbot/fs.h"
#include "pmbot/github.h"
#include "pmbot/source.h"
#include "pmbot/banned.h"

void pmbot_inputs_free(pmbot_inputs *in)
{
	size_t i;

	pmbot_workgraph_free(in->graph);
	pmbot_formset_free(in->forms);
	pmbot_config_free(in->config);
	pmbot_state_free(in->state);
	if (in->backend)
		in->backend->free(in->backend);
	json_decref(in->source);
	free(in->target);
	free(in->state_path);
	free(in->scope_target);
	free((void *)in->read_scope.needs);
	for (i = 0; in->read_repos && in->read_repos[i]; i++)
		free(in->read_repos[i]);
	free(in->read_repos);
	memset(in, 0, sizeof(*in));
}

void pmbot_inputs_start(pmbot_apply_start *out, const pmbot_inputs *in)
{
	memset(out, 0, sizeof(*out));
	if (!in->state || !in->target)
		return;
	out->state = in->state;
	out->backend = in->backend;
	out->repos = (const char *const *)&in->target;
	out->n_repos = 1;
	out->project_owner = in->config ? in->config->project_owner : NULL;
	out->project_number = in->config ? in->config->project_number : 0;
	out->scope = in->read_scoped ? &in->read_scope : NULL;
}

/* "ORG/REPO" from a report's scope when it names exactly one repository. */
static char *scope_target(const pmbot_report *r)
{
	const pmbot_jnode *scope = pmbot_jnode_get(pmbot_jnode_get(
		pmbot_jdoc_root(r->doc), "report"), "scope");
	const pmbot_jnode *repos = pmbot_jnode_get(scope, "repos");
	const char *org = pmbot_jnode_str(pmbot_jnode_get(scope, "org")), *repo = NULL;
	pmbot_buf b = PMBOT_BUF_INIT;

	if (repos && repos->type == PMBOT_JARRAY && repos->len == 1)
		repo = pmbot_jnode_str(pmbot_jnode_first(repos));
	if (!org || !repo)
		return NULL;
	if (strchr(repo, '/') ? pmbot_buf_puts(&b, repo) < 0
			      : pmbot_buf_printf(&b, "%s/%s", org, repo) < 0) {
		pmbot_buf_free(&b);
		return NULL;
	}
	return pmbot_buf_detach(&b, NULL);
}

/*
 * Count a parsed report's items (epics, features, tasks) into the run's
 * total, before its graph is built: over limits.max_items the run stops.
 */
static int count_items(pmbot_inputs *in, const pmbot_report *r, const char *name,
	pmbot_diag_list *diags)
{
	static const char *const kinds[] = { "epics", "features", "tasks" };
	size_t i, max = in->config->max_items;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const pmbot_jnode *list = pmbot_jnode_get(pmbot_jdoc_root(r->doc), kinds[i]);

		in->n_items += list && list->type == PMBOT_JARRAY ? list->len : 0;
	}
	if (!max || in->n_items <= max)
		return PMBOT_OK;
	if (pmbot_diag_add(diags, PMBOT_SEV_ERROR, "TOO_MANY_ITEMS", name, "", 0, 0,
		"the reports hold more than %zu items (limits.max_items): nothing is planned", max) < 0)
		return PMBOT_ERROR;
	return PMBOT_EINVALID;
}

/* Load one report's bytes into the merged graph; remembers its scope target. */
static int add_report(pmbot_inputs *in, const char *name, const char *text, size_t len,
	const char *blob, pmbot_diag_list *diags)
{
	pmbot_limits lim;
	pmbot_report *r = NULL;
	pmbot_report_index ix = PMBOT_REPORT_INDEX_INIT;
	pmbot_workgraph *g = NULL;
	char *scope = NULL;
	int rc;

	pmbot_limits_default(&lim);
	rc = pmbot_report_load_values(&r, name, text, len, &lim, diags);
	if (rc == PMBOT_OK && (rc = count_items(in, r, name, diags)) != PMBOT_OK)
		goto done;
	if (rc == PMBOT_OK)
		rc = pmbot_report_validate_index(&ix, r, diags);
	/* Read before the graph takes the report's document. */
	if (rc == PMBOT_OK)
		scope = scope_target(r);
	if (rc == PMBOT_OK)
		rc = pmbot_workgraph_from_report_index(&g, r, &ix, diags);
	if (rc == PMBOT_OK) {
		if (!in->scope_conflict && scope) {
			if (!in->scope_target)
				in->scope_target = scope, scope = NULL;
			else if (strcasecmp(in->scope_target, scope))
				in->scope_conflict = 1;
		}
		/*
		 * The first report's graph, finished, becomes the run's: one
		 * report is neither merged nor finished again.
		 */
		if (!in->graph->n_nodes && !in->graph->n_edges) {
			pmbot_workgraph_free(in->graph);
			in->graph = g;
			g = NULL;
		} else {
			in->graph_merged = 1;
			rc = pmbot_workgraph_merge(in->graph, g, diags);
		}
	}
	if (rc != PMBOT_ERROR &&
	    json_array_append_new(json_object_get(in->source, "reports"),
		blob ? json_pack("{s:s, s:s}", "path", name, "blob", blob)
		     : json_pack("{s:s}", "path", name)) < 0)
		rc = PMBOT_ERROR;
done:
	free(scope);
	pmbot_report_index_free(&ix);
	pmbot_workgraph_free(g);
	pmbot_report_free(r);
	return rc;
}

/*
 * The run's byte limits, from the blobs' sizes alone: nothing of a hostile
 * push is read or parsed when one report or all of them are too large.
 * Every report over its limit is named. EXIT_*.
 */
static int check_sizes(pmbot_inputs *in, const pmbot_inputs_opts *o, const pmbot_repo_files *files,
	pmbot_diag_list *diags)
{
	size_t i, size, total = 0, max = in->config->max_report_bytes;
	size_t max_total = in->config->max_total_bytes;
	pmbot_buf why = PMBOT_BUF_INIT;
	int rc = PMBOT_OK;

	for (i = 0; i < files->count; i++) {
		if (pmbot_repo_blob_size(&size, in->repo, files->items[i].blob_id, &why) < 0) {
			pmbot_note(o->notes, PMBOT_NOTE_ERROR, "%s", why.buf);
			pmbot_buf_free(&why);
			return PMBOT_ERROR;
		}
		total += size;
		if (max && size > max) {
			pmbot_diag_add(diags, PMBOT_SEV_ERROR, "INPUT_TOO_LARGE", files->items[i].path, "",
				0, 0, "the report is %zu bytes, more than limits.max_report_bytes (%zu)",
				size, max);
			rc = PMBOT_EINVALID;
		}
	}
	if (max_total && total > max_total) {
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "INPUT_TOO_LARGE", NULL, "", 0, 0,
			"the %zu reports are %zu bytes together, more than limits.max_total_bytes (%zu): "
			"none is read", files->count, total, max_total);
		rc = PMBOT_EINVALID;
	}
	return rc;
}

static int load_reports_from_git(pmbot_inputs *in, const pmbot_inputs_opts *o,
	pmbot_diag_list *diags)
{
	pmbot_repo_files files = PMBOT_REPO_FILES_INIT;
	pmbot_limits lim;
	pmbot_buf text, why = PMBOT_BUF_INIT;
	const char *const *globs = (const char *const *)in->config->reports.items;
	size_t n = in->config->reports.count, i;
	int rc = PMBOT_OK, r;

	pmbot_limits_default(&lim);
	pmbot_buf_init(&text, lim.max_bytes);
	if (o->n_paths) {
		globs = (const char *const *)o->paths;
		n = o->n_paths;
	}
	if ((r = pmbot_repo_list(&files, in->repo, o->rev, globs, n, &why)) < 0) {
		pmbot_note(o->notes, PMBOT_NOTE_ERROR, "%s", why.buf);
		rc = r == PMBOT_ERROR ? PMBOT_ERROR : PMBOT_EINVALID;
		goto done;
	}
	if (!files.count)
		pmbot_note(o->notes, PMBOT_NOTE_ERROR, "no reports match at %s", (o->rev));
	if (json_object_set_new(in->source, "commit", json_string(files.commit_id)) < 0) {
		rc = PMBOT_ERROR;
		goto done;
	}
	if ((rc = check_sizes(in, o, &files, diags)) != PMBOT_OK)
		goto done;
	pmbot_buf_free(&text);
	pmbot_buf_init(&text, in->config->max_report_bytes ? in->config->max_report_bytes : lim.max_bytes);
	for (i = 0; i < files.count; i++) {
		pmbot_buf_clear(&text);
		pmbot_buf_clear(&why);
		r = pmbot_repo_read_blob(&text, in->repo, files.items[i].blob_id, &why);
		if (r == PMBOT_REPO_ETOOBIG) {
			pmbot_diag_add(diags, PMBOT_SEV_ERROR, "INPUT_TOO_LARGE", files.items[i].path, "",
				0, 0, "the report is larger than %zu bytes", text.max);
			rc = PMBOT_EINVALID;
			continue;
		}
		if (r < 0) {
			pmbot_note(o->notes, PMBOT_NOTE_ERROR, "%s", why.buf);
			rc = PMBOT_ERROR;
			goto done;
		}
		r = add_report(in, files.items[i].path, text.buf, text.len, files.items[i].blob_id, diags);
		if (r == PMBOT_ERROR) {
			rc = PMBOT_ERROR;
			goto done;
		}
		if (r == PMBOT_EINVALID)
			rc = PMBOT_EINVALID;
		if (in->config->max_items && in->n_items > in->config->max_items)
			goto done;
	}
done:
	pmbot_buf_free(&text);
	pmbot_buf_free(&why);
	pmbot_repo_files_free(&files);
	return rc;
}

static int load_reports_from_files(pmbot_inputs *in, const pmbot_inputs_opts *o,
	pmbot_diag_list *diags)
{
	pmbot_limits lim;
	pmbot_buf text;
	size_t i;
	int rc = PMBOT_OK, r;

	pmbot_limits_default(&lim);
	pmbot_buf_init(&text, lim.max_bytes);
	for (i = 0; i < o->n_paths; i++) {
		pmbot_buf_clear(&text);
		if (pmbot_fs_read(&text, o->paths[i]) < 0) {
			pmbot_note(o->notes, PMBOT_NOTE_ERROR, "cannot read %s: %s", (o->paths[i]),
				strerror(errno));
			rc = PMBOT_ERROR;
			break;
		}
		r = add_report(in, strcmp(o->paths[i], "-") ? o->paths[i] : "<stdin>", text.buf, text.len, NULL, diags);
		if (r == PMBOT_ERROR) {
			rc = PMBOT_ERROR;
			break;
		}
		if (r == PMBOT_EINVALID)
			rc = PMBOT_EINVALID;
	}
	pmbot_buf_free(&text);
	return rc;
}

static int pick_target(pmbot_inputs *in, const pmbot_inputs_opts *o, pmbot_diag_list *diags)
{
	const char *t = o->target;

	if (!t && !in->scope_conflict)
		t = in->scope_target;
	if (!t && in->config->repos.count)
		t = in->config->repos.items[0];
	if (!t) {
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "NO_TARGET_REPO", NULL, "", 0, 0,
			"no target repository: pass --target OWNER/NAME, name exactly one repository "
			"in report.scope.repos, or list one under `repos` in .github/pm-bot.yml");
		return PMBOT_EINVALID;
	}
	if (!(in->target = strdup(t)))
		return PMBOT_ERROR;
	return PMBOT_OK;
}

static int open_github(pmbot_inputs *in, const pmbot_inputs_opts *o)
{
	pmbot_github_client *client = o->client;
	const char *self = o->self_login;
	pmbot_buf err = PMBOT_BUF_INIT;
	int rc = PMBOT_OK;

	if (!client && (!o->open_github ||
	    (rc = o->open_github(o->open_github_ctx, &client, &self)) != PMBOT_OK))
		return rc < 0 ? rc : PMBOT_ERROR;
	in->self_login = self;
	if (self && pmbot_config_trust(in->config, self) == PMBOT_ERROR)
		return PMBOT_ERROR;
	/* The configuration's budget, unless $PMBOT_GITHUB_WRITE_BUDGET overrides it (the client decides). */
	if (in->config->write_budget) {
		pmbot_github_budget budget;

		if (pmbot_github_budget_parse(&budget, in->config->write_budget, NULL) == 0)
			pmbot_github_client_config_budget(client, &budget);
	}
	if (pmbot_github_backend_open(&in->backend, client, self, &err) < 0) {
		pmbot_note(o->notes, PMBOT_NOTE_ERROR, "%s",
			err.len ? err.buf : "cannot open the GitHub backend");
		rc = PMBOT_ERROR;
	}
	pmbot_buf_free(&err);
	return rc;
}

/*
 * What the state read must answer for: every item of the reports, which
 * the plan creates in the target when no issue carries its marker (so the
 * read must find it or prove it absent), and every issue the reports name
 * by URL outside the plan. `scope->needs` (new) and `*owned` (new,
 * NULL-terminated: the repository names cut out of URLs) are the caller's
 * to free; the stable ids are borrowed from the graph. 0 or -1.
 */
static int read_scope(pmbot_read_scope *scope, char ***owned, const pmbot_inputs *in)
{
	const pmbot_workgraph *g = in->graph;
	pmbot_read_need *needs;
	size_t i, n = 0, k = 0;

	scope->needs = NULL;
	scope->n_needs = 0;
	if (!(needs = calloc(g->n_nodes + g->n_edges + 1, sizeof(*needs))) ||
	    !(*owned = calloc(g->n_edges + 1, sizeof(**owned)))) {
		free(needs);
		return -1;
	}
	scope->needs = needs;
	for (i = 0; i < g->n_nodes; i++) {
		needs[n].repo = in->target;
		needs[n++].stable_id = g->nodes[i].stable_id;
	}
	for (i = 0; i < g->n_edges; i++) {
		/* https://github.com/OWNER/REPO/issues/N, checked by validation */
		const char *to = g->edges[i].to_id, *s, *issues;
		long number;

		if (!g->edges[i].external || strncmp(to, "https://github.com/", 19))
			continue;
		s = to + 19;
		if (!(issues = strstr(s, "/issues/")) || (number = strtol(issues + 8, NULL, 10)) <= 0)
			continue;
		if (!((*owned)[k] = strndup(s, (size_t)(issues - s))))
			return -1;
		needs[n].repo = (*owned)[k++];
		needs[n++].number = number;
	}
	scope->n_needs = n;
	return 0;
}

static int open_state(pmbot_inputs *in, const pmbot_inputs_opts *o, pmbot_diag_list *diags)
{
	pmbot_buf err = PMBOT_BUF_INIT;
	const char *repos[1];
	int r, rc = PMBOT_OK;

	if (o->backend && strcmp(o->backend, "file") && strcmp(o->backend, "github")) {
		pmbot_note(o->notes, PMBOT_NOTE_ERROR, "unknown backend '%s': use file or github",
			(o->backend));
		return PMBOT_EINVALID;
	}
	/* The allowlist is checked before any backend is opened for the target. */
	switch (pmbot_plan_check_target(in->config, in->target, diags)) {
	case PMBOT_OK:
		break;
	case PMBOT_EINVALID:
		/* Files named without --repo are read with the defaults: say so, or the refusal puzzles. */
		if (!in->repo)
			pmbot_note(o->notes, PMBOT_NOTE_ERROR, "no --repo was given, so pm-bot used its "
				"built-in default configuration (which allows no repository), not your "
				".github/pm-bot.yml: run it with --repo DIR (the files are then read from "
				"git at HEAD)");
		return PMBOT_EINVALID;
	default:
		return PMBOT_ERROR;
	}

	if (o->backend && !strcmp(o->backend, "github")) {
		if ((rc = open_github(in, o)) != PMBOT_OK)
			return rc;
		goto read;
	}
	if (o->state) {
		in->state_path = strdup(o->state);
	} else {
		pmbot_buf p = PMBOT_BUF_INIT;

		if (pmbot_buf_printf(&p, "%s/.pm-bot/state.json", o->workdir ? o->workdir : ".") == 0)
			in->state_path = pmbot_buf_detach(&p, NULL);
		pmbot_buf_free(&p);
	}
	if (!in->state_path)
		return PMBOT_ERROR;
	r = pmbot_file_backend_open(&in->backend, in->state_path, NULL, diags);
	if (r == PMBOT_EINVALID)
		return PMBOT_EINVALID;
	if (r < 0) {
		pmbot_note(o->notes, PMBOT_NOTE_ERROR, "cannot open the state file %s", (in->state_path));
		return PMBOT_ERROR;
	}
read:
	/* A plan file remembers where it was planned against, so apply goes to the same place. */
	if (in->source && json_object_set_new(in->source, "backend", in->state_path ?
			json_pack("{s:s, s:s}", "kind", "file", "state", in->state_path) :
			json_pack("{s:s}", "kind", "github")) < 0)
		return PMBOT_ERROR;
	repos[0] = in->target;
	/* Kept with the state: an apply starts from this read (pmbot_inputs_start). */
	if (in->graph && read_scope(&in->read_scope, &in->read_repos, in) < 0) {
		rc = PMBOT_ERROR;
		goto done;
	}
	in->read_scoped = in->graph != NULL;
	r = pmbot_backend_read(&in->state, in->backend, repos, 1, in->config->project_owner,
		in->config->project_number, in->read_scoped ? &in->read_scope : NULL, &err);
	if (r < 0) {
		pmbot_note(o->notes, PMBOT_NOTE_ERROR, "cannot read the state: %s",
			(err.len ? err.buf : "unknown error"));
		rc = r == PMBOT_EINVALID ? PMBOT_EINVALID : PMBOT_ERROR;
	}
done:
	pmbot_buf_free(&err);
	return rc;
}

int pmbot_inputs_load(pmbot_inputs *in, const pmbot_inputs_opts *o, pmbot_diag_list *diags)
{
	const char *config_path = o->config_path ? o->config_path : PMBOT_CONFIG_PATH;
	const char *config_rev = o->config_rev ? o->config_rev : o->rev;
	char config_blob[PMBOT_OID_HEX_SIZE] = "";
	pmbot_buf why = PMBOT_BUF_INIT;
	int rc, r;

	memset(in, 0, sizeof(*in));
	in->repo = o->repo;
	if (!(in->source = json_pack("{s:n, s:[], s:s}", "commit", "reports", "config_blob", "")) ||
	    pmbot_workgraph_new(&in->graph) < 0)
		return PMBOT_ERROR;
	if (o->repo) {
		r = pmbot_source_config_at(&in->config, config_blob, in->repo, config_rev, config_path,
			o->current_repo, diags, &why);
		if (r == PMBOT_ERROR || r == PMBOT_ENOTFOUND)
			pmbot_note(o->notes, PMBOT_NOTE_ERROR, "cannot read %s: %s", config_path,
				why.buf);
		pmbot_buf_free(&why);
		if (r == PMBOT_ERROR || r == PMBOT_ENOTFOUND)
			return r == PMBOT_ENOTFOUND ? PMBOT_EINVALID : PMBOT_ERROR;
		if (r == PMBOT_EINVALID)
			return PMBOT_EINVALID;
		if (json_object_set_new(in->source, "config_blob", json_string(config_blob)) < 0)
			return PMBOT_ERROR;
		r = pmbot_source_forms(&in->forms, in->repo, config_rev, in->config, diags, &why);
		if (r == PMBOT_ERROR || r == PMBOT_ENOTFOUND)
			pmbot_note(o->notes, PMBOT_NOTE_ERROR, "cannot read issue forms: %s", why.buf);
		pmbot_buf_free(&why);
		if (r == PMBOT_ERROR || r == PMBOT_ENOTFOUND)
			return PMBOT_ERROR;
		if (r == PMBOT_EINVALID)
			return PMBOT_EINVALID;
		rc = load_reports_from_git(in, o, diags);
	} else {
		if (pmbot_config_default(&in->config, NULL) < 0 ||
		    pmbot_formset_new(&in->forms, &in->config->labels) < 0)
			return PMBOT_ERROR;
		rc = load_reports_from_files(in, o, diags);
	}
	if (rc != PMBOT_OK)
		return rc;
	/*
	 * Each report's warnings were given when it was loaded: keep only new
	 * errors. One report's graph was finished when it was built (its
	 * errors stopped the run above): only a merged or an empty one is
	 * finished here.
	 */
	if (in->graph_merged || !in->graph->parent) {
		pmbot_diag_list scratch = PMBOT_DIAG_LIST_INIT;
		size_t i;

		r = pmbot_workgraph_finish(in->graph, NULL, &scratch);
		for (i = 0; i < scratch.count; i++) {
			const pmbot_diag *d = &scratch.items[i];

			if (d->severity == PMBOT_SEV_ERROR)
				pmbot_diag_add(diags, d->severity, d->code, d->file, d->path, d->line,
					d->column, "%s", d->message);
		}
		pmbot_diag_list_free(&scratch);
		if (r == PMBOT_EINVALID)
			return PMBOT_EINVALID;
		if (r < 0)
			return PMBOT_ERROR;
	}
	if ((rc = pick_target(in, o, diags)) != PMBOT_OK)
		return rc;
	return open_state(in, o, diags);
}

int pmbot_inputs_load_state(pmbot_inputs *in, const pmbot_inputs_opts *o, pmbot_config *config,
	const char *target, pmbot_diag_list *diags)
{
	memset(in, 0, sizeof(*in));
	in->repo = o->repo;
	in->config = config;
	if (!target && config && config->repos.count)
		target = config->repos.items[0];
	if (!target || !(in->target = strdup(target)))
		return target ? PMBOT_ERROR : PMBOT_EINVALID;
	return open_state(in, o, diags);
}

int pmbot_inputs_plan(json_t **bundle, const pmbot_inputs *in, const pmbot_notes *notes,
	pmbot_diag_list *diags)
{
	pmbot_plan_input pi;
	int r;

	*bundle = NULL;
	memset(&pi, 0, sizeof(pi));
	pi.graph = in->graph;
	pi.config = in->config;
	pi.forms = in->forms;
	pi.state = in->state;
	pi.target = in->target;
	pi.source = in->source;
	pi.self_login = in->self_login;
	pi.canonical = in->canonical;
	pi.lean = in->lean;
	r = pmbot_plan_build(bundle, &pi, diags);
	if (r == PMBOT_OK || r == PMBOT_EINVALID)
		return r;
	pmbot_note(notes, PMBOT_NOTE_ERROR, "planning failed (out of memory)");
	return PMBOT_ERROR;
}
