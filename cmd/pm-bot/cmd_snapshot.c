#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "pmbot/fs.h"
#include "pmbot/github.h"
#include "pmbot/banned.h"

/* "OWNER/NUMBER" -> owner (new string) and number 1..2^31-1. */
static int parse_project(char **owner, long *number, const char *s)
{
	const char *slash = strrchr(s, '/');
	char *end;
	long n;

	if (!slash || slash == s || !slash[1])
		return -1;
	errno = 0;
	n = strtol(slash + 1, &end, 10);
	if (errno || *end || n < 1 || n > 2147483647L)
		return -1;
	if (!(*owner = strndup(s, (size_t)(slash - s))))
		return -1;
	*number = n;
	return 0;
}

/* OWNER/NAME: one slash, neither side empty. */
static int repo_name_ok(const char *s)
{
	const char *slash = strchr(s, '/');

	return slash && slash != s && slash[1] && !strchr(slash + 1, '/');
}

int cmd_snapshot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "repo", required_argument, NULL, 'R' },
		{ "project", required_argument, NULL, 'p' },
		{ "out", required_argument, NULL, 'o' },
		{ "backend", required_argument, NULL, 'B' },
		{ "state", required_argument, NULL, 's' },
		GITHUB_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *self = cmd_lookup("snapshot");
	struct plan_opts o;
	struct github_conn gc;
	pmbot_backend *backend = NULL;
	pmbot_state *state = NULL;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf err = PMBOT_BUF_INIT, out = PMBOT_BUF_INIT;
	const char **repos = NULL;
	const char *out_path = NULL, *backend_name = "github", *state_path = NULL;
	char *project_owner = NULL;
	long project_number = 0;
	size_t n_repos = 0;
	int c, r, rc = EXIT_RUNTIME;

	memset(&o, 0, sizeof(o));
	memset(&gc, 0, sizeof(gc));
	if (!(repos = calloc((size_t)argc, sizeof(*repos))))
		return EXIT_RUNTIME;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c >= OPT_CACHE_DIR && plan_opts_parse(&o, c, optarg) == 0)
			continue;
		switch (c) {
		case 'R':
			if (!repo_name_ok(optarg)) {
				rc = cmd_usage_error(self, "--repo takes OWNER/NAME, not '%s'", optarg);
				goto done;
			}
			repos[n_repos++] = optarg;
			break;
		case 'p':
			free(project_owner);
			project_owner = NULL;
			if (parse_project(&project_owner, &project_number, optarg) < 0) {
				rc = cmd_usage_error(self, "--project takes OWNER/NUMBER, not '%s'", optarg);
				goto done;
			}
			break;
		case 'o': out_path = optarg; break;
		case 'B': backend_name = optarg; break;
		case 's': state_path = optarg; break;
		default: rc = cmd_bad_option(self, c, argv); goto done;
		}
	}
	if (optind < argc) {
		rc = cmd_usage_error(self, "unexpected argument '%s'", argv[optind]);
		goto done;
	}
	if (!n_repos) {
		rc = cmd_usage_error(self, "name at least one --repo OWNER/NAME");
		goto done;
	}
	if (!strcmp(backend_name, "github")) {
		if ((rc = github_conn_open(&gc, &o)) != EXIT_OK)
			goto done;
		rc = EXIT_RUNTIME;
		if (pmbot_github_backend_open(&backend, gc.client, gc.self_login, &err) < 0) {
			fprintf(stderr, "pm-bot: %s\n",
				cmd_show_msg(err.len ? err.buf : "cannot open the GitHub backend"));
			goto done;
		}
	} else if (!strcmp(backend_name, "file")) {
		r = pmbot_file_backend_open(&backend, state_path ? state_path : ".pm-bot/state.json",
			NULL, &diags);
		cmd_print_diags(stderr, &diags);
		if (r < 0) {
			rc = r == PMBOT_EINVALID ? EXIT_INVALID : EXIT_RUNTIME;
			goto done;
		}
	} else {
		rc = cmd_usage_error(self, "unknown backend '%s': use github or file", backend_name);
		goto done;
	}
	r = backend->read(&state, backend, repos, n_repos, project_owner, project_number, &err);
	if (r < 0) {
		fprintf(stderr, "pm-bot: cannot read the state: %s\n",
			cmd_show_msg(err.len ? err.buf : "unknown error"));
		rc = r == PMBOT_EINVALID ? EXIT_INVALID : EXIT_RUNTIME;
		goto done;
	}
	if (project_owner && !state->project)
		fprintf(stderr, "pm-bot: warning: no project %s/%ld is visible to this token; "
			"the snapshot has none\n", cmd_show(project_owner), project_number);
	if (pmbot_state_canonical(&out, state) < 0 || pmbot_buf_putc(&out, '\n') < 0) {
		fputs("pm-bot: cannot serialise the state\n", stderr);
		goto done;
	}
	if (out_path) {
		if (pmbot_fs_write_atomic(out_path, out.buf, out.len) < 0) {
			fprintf(stderr, "pm-bot: cannot write %s: %s\n", cmd_show(out_path), strerror(errno));
			goto done;
		}
	} else if (fwrite(out.buf, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
		fputs("pm-bot: cannot write the snapshot to standard output\n", stderr);
		goto done;
	}
	fprintf(stderr, "pm-bot: snapshot of %zu issue%s%s\n", state->n_issues,
		state->n_issues == 1 ? "" : "s", state->project ? " and the project" : "");
	rc = EXIT_OK;
done:
	pmbot_state_free(state);
	if (backend)
		backend->free(backend);
	github_conn_close(&gc);
	pmbot_buf_free(&err);
	pmbot_buf_free(&out);
	pmbot_diag_list_free(&diags);
	free(project_owner);
	free(repos);
	return rc;
}
