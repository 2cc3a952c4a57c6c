#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "pmbot/source.h"
#include "pmbot/banned.h"

struct validate_opts {
	int as_json;
	const char *repo;
	const char *rev;
	const char *base;
	const char *config_rev;
};

/*
 * Record one file's outcome: a JSON object appended to `results`, or
 * diagnostics on stderr and a summary line on stdout.
 */
static int report_file(json_t *results, const char *name, const char *blob,
	pmbot_diag_list *diags)
{
	json_t *o;

	if (!results) {
		pmbot_diag_list_sort(diags);
		cmd_print_diags(stderr, diags);
		printf("%s", cmd_show(name));
		if (blob)
			printf(" (blob %.12s)", cmd_show(blob));
		printf(": %s (%zu error%s, %zu warning%s)\n", diags->errors ? "invalid" : "valid",
			diags->errors, diags->errors == 1 ? "" : "s", diags->warnings,
			diags->warnings == 1 ? "" : "s");
		return 0;
	}
	if (pmbot_report_result(&o, name, blob, diags) < 0)
		return -1;
	return json_array_append_new(results, o);
}

/* Merge one file's status into the run's: runtime failure beats invalid beats ok. */
static int worst(int a, int b)
{
	if (a == EXIT_RUNTIME || b == EXIT_RUNTIME)
		return EXIT_RUNTIME;
	return a == EXIT_INVALID || b == EXIT_INVALID ? EXIT_INVALID : EXIT_OK;
}

static int validate_files(json_t *results, int argc, char **argv)
{
	int i, rc = EXIT_OK;

	for (i = 0; i < argc; i++) {
		pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
		int r = cmd_check_report_file(argv[i], &diags);

		if (r != EXIT_RUNTIME && report_file(results, cmd_display_name(argv[i]), NULL, &diags) < 0)
			r = EXIT_RUNTIME;
		rc = worst(rc, r);
		pmbot_diag_list_free(&diags);
	}
	return rc;
}

static int validate_repo(json_t *results, const struct validate_opts *o, int argc, char **argv)
{
	pmbot_repo *repo = NULL;
	pmbot_config *cfg = NULL;
	pmbot_repo_files files = PMBOT_REPO_FILES_INIT;
	pmbot_limits lim;
	pmbot_buf err = PMBOT_BUF_INIT;
	size_t i;
	int rc, r;

	pmbot_limits_default(&lim);
	if ((rc = cmd_open_repo(&repo, o->repo)) != EXIT_OK)
		goto done;
	if ((rc = cmd_load_config(&cfg, repo, o->config_rev ? o->config_rev : o->rev)) != EXIT_OK)
		goto done;
	if ((r = pmbot_source_select_reports(&files, repo, cfg, o->rev, o->base,
		(const char *const *)argv, (size_t)argc, &err)) < 0) {
		fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(err.buf));
		rc = r == PMBOT_ENOTFOUND || r == PMBOT_EINVALID ? EXIT_INVALID : EXIT_RUNTIME;
		goto done;
	}
	if (argc && (size_t)argc != files.count && !o->base) {
		fprintf(stderr, "pm-bot: %d of the named reports do not exist at %s\n",
			argc - (int)files.count, cmd_show(o->rev));
		rc = EXIT_INVALID;
	}
	if (!files.count && !results && !argc && o->base)
		fprintf(stderr, "pm-bot: no report changed between %s and %s: nothing to validate\n",
			cmd_show(o->base), cmd_show(o->rev));
	else if (!files.count && !results && !argc)
		fprintf(stderr, "pm-bot: no reports match at %s\n", cmd_show(o->rev));
	for (i = 0; i < files.count; i++) {
		pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
		pmbot_workgraph *g = NULL;

		pmbot_buf_clear(&err);
		r = pmbot_source_report(&g, repo, files.items[i].blob_id, files.items[i].path, &lim,
			&diags, &err);
		pmbot_workgraph_free(g);
		if (r == PMBOT_ERROR) {
			fprintf(stderr, "pm-bot: cannot read %s: %s\n", cmd_show(files.items[i].path),
				cmd_show_msg(err.buf));
			rc = EXIT_RUNTIME;
		} else {
			if (report_file(results, files.items[i].path, files.items[i].blob_id, &diags) < 0)
				rc = EXIT_RUNTIME;
			rc = worst(rc, r == PMBOT_OK ? EXIT_OK : EXIT_INVALID);
		}
		pmbot_diag_list_free(&diags);
	}
done:
	pmbot_repo_files_free(&files);
	pmbot_config_free(cfg);
	pmbot_repo_free(repo);
	pmbot_buf_free(&err);
	return rc;
}

int cmd_validate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "repo", required_argument, NULL, 'R' },
		{ "rev", required_argument, NULL, 'r' },
		{ "base", required_argument, NULL, 'b' },
		{ "config-rev", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *self = cmd_lookup("validate");
	struct validate_opts o = { 0, NULL, NULL, NULL, NULL };
	json_t *results = NULL;
	int c, rc, nfiles;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'j': o.as_json = 1; break;
		case 'R': o.repo = optarg; break;
		case 'r': o.rev = optarg; break;
		case 'b': o.base = optarg; break;
		case 'c': o.config_rev = optarg; break;
		default:
			return cmd_bad_option(self, c, argv);
		}
	}
	nfiles = argc - optind;
	if (!o.repo && (o.rev || o.base || o.config_rev))
		return cmd_usage_error(self, "--rev, --base and --config-rev need --repo");
	if (!o.repo && !nfiles)
		return cmd_usage_error(self, "validate needs at least one FILE, or --repo");
	if (o.repo && !o.rev)
		o.rev = "HEAD";
	if (o.as_json && !(results = json_array()))
		return EXIT_RUNTIME;
	rc = o.repo ? validate_repo(results, &o, nfiles, argv + optind)
		    : validate_files(results, nfiles, argv + optind);
	if (results) {
		/* One file named on the command line: an object; otherwise an array. */
		const json_t *doc = !o.repo && nfiles == 1 && json_array_size(results) == 1
			? json_array_get(results, 0) : results;

		if (cmd_print_json(doc) != EXIT_OK)
			rc = EXIT_RUNTIME;
		json_decref(results);
	}
	return rc;
}
