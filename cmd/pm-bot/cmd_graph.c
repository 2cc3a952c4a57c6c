#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "pmbot/banned.h"

int cmd_graph(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *self = cmd_lookup("graph");
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_workgraph *g = NULL;
	pmbot_buf out = PMBOT_BUF_INIT;
	const char *format = "json";
	json_t *doc = NULL;
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c == 'f')
			format = optarg;
		else
			return cmd_bad_option(self, c, argv);
	}
	if (strcmp(format, "json") && strcmp(format, "mermaid") && strcmp(format, "tree"))
		return cmd_usage_error(self, "unknown format '%s' (json, mermaid or tree)", format);
	if (argc - optind != 1)
		return cmd_usage_error(self, "graph needs exactly one FILE");

	rc = cmd_load_report_file(&g, argv[optind], &diags);
	cmd_print_diags(stderr, &diags);
	if (rc != EXIT_OK)
		goto done;
	if (!strcmp(format, "json")) {
		if (pmbot_workgraph_to_json(&doc, g) < 0) {
			rc = EXIT_RUNTIME;
			goto done;
		}
		rc = cmd_print_json(doc);
		goto done;
	}
	if ((!strcmp(format, "mermaid") ? pmbot_workgraph_mermaid(&out, g)
					: pmbot_workgraph_tree(&out, g)) < 0) {
		fputs("pm-bot: out of memory\n", stderr);
		rc = EXIT_RUNTIME;
		goto done;
	}
	fwrite(out.buf, 1, out.len, stdout);
	if (fflush(stdout) != 0)
		rc = EXIT_RUNTIME;
done:
	json_decref(doc);
	pmbot_buf_free(&out);
	pmbot_workgraph_free(g);
	pmbot_diag_list_free(&diags);
	return rc;
}
