#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "pmbot/action.h"
#include "pmbot/github.h"
#include "pmbot/banned.h"

/*
 * `pm-bot action`: the options and the workflow's environment go to the
 * library's run (pmbot/action.h, part 5), which decides and does everything;
 * this prints what it tells and picks the exit status.
 */

struct conn {
	struct plan_opts *gopts;
	struct github_conn gh;
};

/* The GitHub connection, with the run's default cache directory unless one was chosen. */
static int open_github(void *ctx, const char *cache_dir, pmbot_github_client **client,
	const char **self_login)
{
	struct conn *c = ctx;
	int rc;

	if (cache_dir && !c->gopts->cache_dir)
		c->gopts->cache_dir = cache_dir;
	if ((rc = github_conn_open(&c->gh, c->gopts)) != EXIT_OK)
		return rc == EXIT_INVALID ? PMBOT_EINVALID : PMBOT_ERROR;
	*client = c->gh.client;
	*self_login = c->gh.self_login;
	return PMBOT_OK;
}

static const char *env_of(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

int cmd_action(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "repo", required_argument, NULL, 'R' },
		{ "config", required_argument, NULL, 'c' },
		{ "audit", required_argument, NULL, 'a' },
		GITHUB_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *self = cmd_lookup("action");
	struct plan_opts gopts;
	struct conn conn;
	pmbot_action_env env;
	pmbot_action_opts o;
	pmbot_action *a = NULL;
	pmbot_repo *repo = NULL;
	pmbot_buf line = PMBOT_BUF_INIT;
	int c, r = PMBOT_OK;

	memset(&gopts, 0, sizeof(gopts));
	memset(&conn, 0, sizeof(conn));
	memset(&o, 0, sizeof(o));
	o.dir = getenv("GITHUB_WORKSPACE");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c >= OPT_CACHE_DIR && plan_opts_parse(&gopts, c, optarg) == 0)
			continue;
		switch (c) {
		case 'R': o.dir = optarg; break;
		case 'c': o.config_path = optarg; break;
		case 'a': o.audit_path = optarg; break;
		default: return cmd_bad_option(self, c, argv);
		}
	}
	if (optind < argc)
		return cmd_usage_error(self, "unexpected argument '%s'", argv[optind]);
	if (!o.dir || !*o.dir)
		o.dir = ".";
	gopts.repo = o.dir;
	/* --cache-dir, else $PMBOT_GITHUB_CACHE_DIR: where the run keeps what outlives it. */
	o.cache_dir = gopts.cache_dir ? gopts.cache_dir : env_of("PMBOT_GITHUB_CACHE_DIR");
	conn.gopts = &gopts;

	memset(&env, 0, sizeof(env));
	env.event_name = env_of("GITHUB_EVENT_NAME");
	env.event_path = env_of("GITHUB_EVENT_PATH");
	env.run_id = env_of("GITHUB_RUN_ID");
	env.repository = env_of("GITHUB_REPOSITORY");
	env.ref = env_of("GITHUB_REF");
	env.sha = getenv("GITHUB_SHA");
	env.runner_temp = env_of("RUNNER_TEMP");
	env.output = env_of("GITHUB_OUTPUT");
	env.step_summary = env_of("GITHUB_STEP_SUMMARY");
	env.cache_dir_set = getenv("PMBOT_GITHUB_CACHE_DIR") != NULL;
	env.server_url = env_of("GITHUB_SERVER_URL");

	if (pmbot_action_new(&a, &env, &o, cmd_action_notes()) < 0)
		return EXIT_RUNTIME;
	if ((r = pmbot_action_decide(a)) == PMBOT_OK && !pmbot_action_ignored(a)) {
		if (cmd_open_repo(&repo, o.dir) != EXIT_OK)
			r = PMBOT_ERROR;
		else
			r = pmbot_action_run(a, repo, open_github, &conn);
	}
	r = pmbot_action_conclude(a, r);
	if (pmbot_action_finish(a) < 0 && r == PMBOT_OK)
		r = PMBOT_ERROR;
	/* One line a reader of the job log finds: what happened, and where. */
	if (pmbot_action_log_line(&line, a) == 0)
		printf("%s\n", line.buf);
	pmbot_buf_free(&line);
	pmbot_action_free(a);
	github_conn_close(&conn.gh);
	pmbot_repo_free(repo);
	return r == PMBOT_OK ? EXIT_OK : r == PMBOT_EINVALID ? EXIT_INVALID : EXIT_RUNTIME;
}
