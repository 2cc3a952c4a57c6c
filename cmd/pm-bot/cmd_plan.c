#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "pmbot/apply.h"
#include "pmbot/plan.h"
#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/banned.h"

/* Parse the input options shared by plan and apply; returns -1 for an unknown option. */
int plan_opts_parse(struct plan_opts *o, int c, const char *arg)
{
	switch (c) {
	case 'R': o->repo = arg; return 0;
	case 'r': o->rev = arg; return 0;
	case 'c': o->config_rev = arg; return 0;
	case 's': o->state = arg; return 0;
	case 'B': o->backend = arg; return 0;
	case 't': o->target = arg; return 0;
	case OPT_CACHE_DIR: o->cache_dir = arg; return 0;
	case OPT_PACE_MS: o->pace_ms = arg; return 0;
	case OPT_STATS: o->stats = 1; return 0;
	}
	return -1;
}

int write_bundle(const char *path, const json_t *bundle)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	int rc = EXIT_RUNTIME;

	if (pmbot_json_canonical(&out, bundle) < 0 || pmbot_buf_putc(&out, '\n') < 0) {
		fputs("pm-bot: cannot serialise the plan\n", stderr);
		goto done;
	}
	if (pmbot_fs_write_atomic(path, out.buf, out.len) < 0) {
		fprintf(stderr, "pm-bot: cannot write %s: %s\n", cmd_show(path), strerror(errno));
		goto done;
	}
	rc = EXIT_OK;
done:
	pmbot_buf_free(&out);
	return rc;
}

int cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		PLAN_INPUT_OPTIONS,
		{ "out", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "detailed-exitcode", no_argument, NULL, 'd' },
		{ "audit", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *self = cmd_lookup("plan");
	struct plan_opts o;
	struct plan_inputs in;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	const char *out_path = NULL, *format = "text", *audit_path = NULL;
	json_t *bundle = NULL;
	pmbot_buf md = PMBOT_BUF_INIT, cj = PMBOT_BUF_INIT;
	int c, rc, detailed = 0;

	memset(&o, 0, sizeof(o));
	memset(&in, 0, sizeof(in));
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (plan_opts_parse(&o, c, optarg) == 0)
			continue;
		switch (c) {
		case 'o': out_path = optarg; break;
		case 'f': format = optarg; break;
		case 'd': detailed = 1; break;
		case 'a': audit_path = optarg; break;
		default: return cmd_bad_option(self, c, argv);
		}
	}
	if (strcmp(format, "text") && strcmp(format, "md") && strcmp(format, "json"))
		return cmd_usage_error(self, "unknown format '%s' (text, md or json)", format);
	o.paths = argv + optind;
	o.n_paths = (size_t)(argc - optind);
	if (!o.repo && !o.n_paths)
		o.repo = ".";
	if (!o.repo && (o.rev || o.config_rev))
		return cmd_usage_error(self, "--rev and --config-rev need --repo");
	if (o.repo && !o.rev)
		o.rev = "HEAD";

	rc = plan_inputs_load(&in, &o, &diags);
	/* The bytes of the bundle come with the plan hash, serialised once. */
	if (!strcmp(format, "json") || out_path)
		in.in.canonical = &cj;
	/* Only the bytes are printed: no tree of the changesets to hold besides them. */
	in.in.lean = !strcmp(format, "json") && !audit_path && !detailed;
	if (rc == EXIT_OK)
		rc = plan_inputs_plan(&bundle, &in, &diags);
	cmd_print_diags(stderr, &diags);
	if (!bundle)
		goto done;
	if (audit_path) {
		pmbot_diag_list ad = PMBOT_DIAG_LIST_INIT;
		json_t *f = pmbot_audit_proposal_fields(bundle);

		if (pmbot_audit_record(audit_path, "proposal", f, &ad) < 0) {
			cmd_print_diags(stderr, &ad);
			fprintf(stderr, "pm-bot: cannot append to the audit ledger %s\n",
				cmd_show(audit_path));
			rc = EXIT_RUNTIME;
		}
		pmbot_diag_list_free(&ad);
		json_decref(f);
	}
	if (!strcmp(format, "json")) {
		/* One serialisation serves both --out and standard output. */
		if ((!cj.len && pmbot_json_canonical(&cj, bundle) < 0) ||
		    pmbot_buf_putc(&cj, '\n') < 0) {
			fputs("pm-bot: cannot serialise the plan\n", stderr);
			rc = EXIT_RUNTIME;
			goto done;
		}
		if (out_path && pmbot_fs_write_atomic(out_path, cj.buf, cj.len) < 0) {
			fprintf(stderr, "pm-bot: cannot write %s: %s\n", cmd_show(out_path), strerror(errno));
			rc = EXIT_RUNTIME;
		}
		if (fwrite(cj.buf, 1, cj.len, stdout) != cj.len || fflush(stdout) != 0)
			rc = EXIT_RUNTIME;
	} else {
		if (out_path && cj.len) {
			if (pmbot_buf_putc(&cj, '\n') < 0 ||
			    pmbot_fs_write_atomic(out_path, cj.buf, cj.len) < 0) {
				fprintf(stderr, "pm-bot: cannot write %s: %s\n", cmd_show(out_path),
					strerror(errno));
				rc = EXIT_RUNTIME;
			}
		} else if (out_path && write_bundle(out_path, bundle) != EXIT_OK) {
			rc = EXIT_RUNTIME;
		}
		if (!strcmp(format, "text") ? pmbot_plan_text(&md, bundle, out_path,
				cmd_color(stdout)) < 0 : pmbot_plan_markdown(&md, bundle, 0, out_path) < 0) {
			fputs("pm-bot: cannot render the plan\n", stderr);
			rc = EXIT_RUNTIME;
			goto done;
		}
		fwrite(md.buf, 1, md.len, stdout);
		if (md.len && md.buf[md.len - 1] != '\n')
			putchar('\n');
	}
	if (rc == EXIT_OK && detailed && pmbot_bundle_has_drift(bundle))
		rc = EXIT_CHANGES;
done:
	json_decref(bundle);
	pmbot_buf_free(&md);
	pmbot_buf_free(&cj);
	plan_inputs_free(&in);
	pmbot_diag_list_free(&diags);
	return rc;
}
