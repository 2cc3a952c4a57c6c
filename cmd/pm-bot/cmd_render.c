#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "pmbot/source.h"
#include "pmbot/banned.h"

static void print_issue(const pmbot_wg_node *n, const pmbot_rendered_issue *is, int first)
{
	size_t i;

	printf("%s== %s\ntitle: %s\nlabels:", first ? "" : "\n", cmd_show(n->stable_id),
		cmd_show_msg(is->title));
	for (i = 0; i < is->n_labels; i++)
		printf("%s %s", i ? "," : "", cmd_show(is->labels[i]));
	printf("\n\n");
	fwrite(is->body, 1, is->body_len, stdout);
	putchar('\n');
}

static int load_report(pmbot_workgraph **g, pmbot_repo *repo, const char *rev, const char *path,
	pmbot_diag_list *diags)
{
	pmbot_limits lim;
	pmbot_buf text, err = PMBOT_BUF_INIT;
	int r;

	pmbot_limits_default(&lim);
	pmbot_buf_init(&text, lim.max_bytes);
	r = pmbot_repo_read(&text, NULL, repo, rev, path, &err);
	if (r == 0)
		r = pmbot_workgraph_load(g, path, text.buf, text.len, &lim, diags);
	else if (r == PMBOT_ENOTFOUND || r == PMBOT_EINVALID)
		fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(err.buf));
	else
		fprintf(stderr, "pm-bot: cannot read %s at %s: %s\n", cmd_show(path), cmd_show(rev),
			cmd_show_msg(err.buf));
	pmbot_buf_free(&text);
	pmbot_buf_free(&err);
	if (r == PMBOT_OK)
		return EXIT_OK;
	return r == PMBOT_ERROR || r == PMBOT_REPO_ETOOBIG ? EXIT_RUNTIME : EXIT_INVALID;
}

int cmd_render(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "repo", required_argument, NULL, 'R' },
		{ "rev", required_argument, NULL, 'r' },
		{ "id", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *self = cmd_lookup("render");
	const char *dir = ".", *rev = "HEAD", *only = NULL;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_repo *repo = NULL;
	pmbot_config *cfg = NULL;
	pmbot_formset *forms = NULL;
	pmbot_buf err = PMBOT_BUF_INIT;
	pmbot_workgraph *g = NULL;
	json_t *out = NULL;
	size_t i, shown = 0;
	int c, rc, r, as_json = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'R': dir = optarg; break;
		case 'r': rev = optarg; break;
		case 'i': only = optarg; break;
		case 'j': as_json = 1; break;
		default:
			return cmd_bad_option(self, c, argv);
		}
	}
	if (argc - optind != 1)
		return cmd_usage_error(self, "render needs exactly one REPORT_PATH");
	if ((rc = cmd_open_repo(&repo, dir)) != EXIT_OK ||
	    (rc = cmd_load_config(&cfg, repo, rev)) != EXIT_OK)
		goto done;
	r = pmbot_source_forms(&forms, repo, rev, cfg, &diags, &err);
	if (r == PMBOT_ERROR || r == PMBOT_ENOTFOUND) {
		fprintf(stderr, "pm-bot: cannot read issue forms: %s\n", cmd_show_msg(err.buf));
		rc = EXIT_RUNTIME;
		goto done;
	}
	if (r == PMBOT_EINVALID)
		rc = EXIT_INVALID;
	r = load_report(&g, repo, rev, argv[optind], &diags);
	if (r != EXIT_OK) {
		rc = r;
		goto done;
	}
	if (only && !pmbot_workgraph_find(g, only)) {
		fprintf(stderr, "pm-bot: no work item '%s' in %s\n", cmd_show(only),
			cmd_show(argv[optind]));
		rc = EXIT_INVALID;
		goto done;
	}
	if (as_json && !(out = json_array())) {
		rc = EXIT_RUNTIME;
		goto done;
	}
	for (i = 0; i < g->n_nodes; i++) {
		const pmbot_wg_node *n = &g->nodes[i];
		pmbot_rendered_issue is;
		pmbot_render_opts ro = { &cfg->labels, NULL };

		if (only && strcmp(only, n->stable_id))
			continue;
		memset(&is, 0, sizeof(is));
		r = pmbot_render_issue(&is, g, n, pmbot_formset_find_type(forms, n->type_name), &ro, &diags);
		/* Render diagnostics name the item's report, as plan's do. */
		if (n->file && pmbot_diag_list_set_file(&diags, n->file) < 0)
			r = PMBOT_ERROR;
		if (r == PMBOT_OK) {
			if (as_json) {
				json_t *j;

				r = pmbot_rendered_issue_to_json(&j, n->stable_id, &is) < 0 ||
				    json_array_append_new(out, j) < 0 ? PMBOT_ERROR : 0;
			}
			else {
				print_issue(n, &is, !shown++);
			}
		}
		pmbot_rendered_issue_free(&is);
		if (r == PMBOT_ERROR) {
			rc = EXIT_RUNTIME;
			goto done;
		}
		if (r == PMBOT_EINVALID)
			rc = EXIT_INVALID;
	}
	if (out && cmd_print_json(out) != EXIT_OK)
		rc = EXIT_RUNTIME;
done:
	cmd_print_diags(stderr, &diags);
	json_decref(out);
	pmbot_workgraph_free(g);
	pmbot_formset_free(forms);
	pmbot_config_free(cfg);
	pmbot_repo_free(repo);
	pmbot_diag_list_free(&diags);
	pmbot_buf_free(&err);
	return rc;
}
