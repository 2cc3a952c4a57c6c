#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "pmbot/github.h"
#include "pmbot/banned.h"

static int to_exit(int r)
{
	return r == PMBOT_OK ? EXIT_OK : r == PMBOT_EINVALID ? EXIT_INVALID : EXIT_RUNTIME;
}

void plan_inputs_free(struct plan_inputs *in)
{
	pmbot_inputs_free(&in->in);
	github_conn_close(&in->gh);
	pmbot_repo_free(in->repo);
	free(in->current);
	memset(in, 0, sizeof(*in));
}

/* The github backend's connection, opened only once the target passed the allowlist. */
static int open_github(void *ctx, pmbot_github_client **client, const char **self_login)
{
	struct plan_inputs *in = ctx;
	int rc = github_conn_open(&in->gh, in->opts);

	if (rc != EXIT_OK)
		return rc == EXIT_INVALID ? PMBOT_EINVALID : PMBOT_ERROR;
	*client = in->gh.client;
	*self_login = in->gh.self_login;
	return PMBOT_OK;
}

static void lib_opts(pmbot_inputs_opts *lo, struct plan_inputs *in, const struct plan_opts *o)
{
	memset(lo, 0, sizeof(*lo));
	in->opts = o;
	lo->repo = in->repo;
	lo->workdir = o->repo;
	lo->rev = o->rev;
	lo->config_rev = o->config_rev;
	lo->config_path = o->config_path;
	lo->current_repo = in->current;
	lo->state = o->state;
	lo->backend = o->backend;
	lo->target = o->target;
	lo->paths = o->paths;
	lo->n_paths = o->n_paths;
	lo->open_github = open_github;
	lo->open_github_ctx = in;
	lo->notes = cmd_notes();
}

int plan_inputs_load(struct plan_inputs *in, const struct plan_opts *o, pmbot_diag_list *diags)
{
	pmbot_inputs_opts lo;
	int rc;

	memset(in, 0, sizeof(*in));
	if (o->repo) {
		if ((rc = cmd_open_repo(&in->repo, o->repo)) != EXIT_OK)
			return rc;
		in->current = cmd_current_repo(in->repo);
	}
	lib_opts(&lo, in, o);
	return to_exit(pmbot_inputs_load(&in->in, &lo, diags));
}

int plan_inputs_load_state(struct plan_inputs *in, const struct plan_opts *o, const char *target,
	pmbot_diag_list *diags)
{
	pmbot_inputs_opts lo;
	pmbot_config *config = NULL;
	int rc;

	memset(in, 0, sizeof(*in));
	if ((rc = cmd_open_repo(&in->repo, o->repo ? o->repo : ".")) != EXIT_OK)
		return rc;
	rc = cmd_load_config(&config, in->repo, o->config_rev ? o->config_rev :
		o->rev ? o->rev : "HEAD");
	if (rc != EXIT_OK)
		return rc;
	lib_opts(&lo, in, o);
	return to_exit(pmbot_inputs_load_state(&in->in, &lo, config, target, diags));
}

int plan_inputs_plan(json_t **bundle, struct plan_inputs *in, pmbot_diag_list *diags)
{
	return to_exit(pmbot_inputs_plan(bundle, &in->in, cmd_notes(), diags));
}
