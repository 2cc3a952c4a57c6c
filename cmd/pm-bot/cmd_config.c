#include <getopt.h>
#include <stdio.h>

#include "cmd.h"
#include "pmbot/banned.h"

int cmd_config(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "repo", required_argument, NULL, 'R' },
		{ "rev", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *self = cmd_lookup("config");
	const char *dir = ".", *rev = "HEAD";
	pmbot_repo *repo = NULL;
	pmbot_config *cfg = NULL;
	json_t *doc = NULL;
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c == 'R')
			dir = optarg;
		else if (c == 'r')
			rev = optarg;
		else
			return cmd_bad_option(self, c, argv);
	}
	if (optind != argc)
		return cmd_usage_error(self, "config takes no arguments");
	if ((rc = cmd_open_repo(&repo, dir)) != EXIT_OK)
		goto done;
	if ((rc = cmd_load_config(&cfg, repo, rev)) != EXIT_OK)
		goto done;
	if (pmbot_config_to_json(&doc, cfg) < 0) {
		fputs("pm-bot: out of memory\n", stderr);
		rc = EXIT_RUNTIME;
		goto done;
	}
	rc = cmd_print_json(doc);
done:
	json_decref(doc);
	pmbot_config_free(cfg);
	pmbot_repo_free(repo);
	return rc;
}
