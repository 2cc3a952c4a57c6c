#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm_int.h"
#include "pmbot/llm.h"
#include "pmbot/fs.h"
#include "pmbot/banned.h"

/* Check the draft against every ReportIR v1 rule, as the report it becomes. */
static int validate_draft(const char *markdown, size_t len, const char *name)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	int r = pmbot_llm_draft_check(&diags, markdown, len, name);

	cmd_print_diags(stderr, &diags);
	pmbot_diag_list_free(&diags);
	return r == PMBOT_OK ? EXIT_OK : r == PMBOT_EINVALID ? EXIT_INVALID : EXIT_RUNTIME;
}

/* `draft` and `prompt-ir` share everything up to the model call. */
static int run(int argc, char **argv, int call_model)
{
	static const struct option opts[] = {
		LLM_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *self = cmd_lookup(call_model ? "draft" : "prompt-ir");
	const pmbot_capability *cap = NULL;
	struct llm_opts o;
	struct llm_run r;
	pmbot_buf user = PMBOT_BUF_INIT, md = PMBOT_BUF_INIT;
	pmbot_buf ref = PMBOT_BUF_INIT, denied = PMBOT_BUF_INIT, intent = PMBOT_BUF_INIT;
	pmbot_buf text = PMBOT_BUF_INIT, path = PMBOT_BUF_INIT;
	json_t *effective = NULL, *result = NULL, *audit = NULL, *out = NULL;
	int c, rc = EXIT_RUNTIME;

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	o.contexts = calloc((size_t)argc, sizeof(*o.contexts));
	o.constraints = calloc((size_t)argc, sizeof(*o.constraints));
	if (!o.contexts || !o.constraints)
		goto done;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		int p = llm_parse_option(&o, c, optarg);

		if (p == 1) {
			rc = cmd_usage_error(self, "--budget takes a number of tokens from 1 to 1000000");
			goto done;
		}
		if (p < 0) {
			rc = cmd_bad_option(self, c, argv);
			goto done;
		}
	}
	if (argc - optind != 1) {
		rc = cmd_usage_error(self, "name exactly one report FILE (a path, or - for standard input)");
		goto done;
	}
	o.file = argv[optind];
	/* Without --rev the prose is what is on disk now; --rev reads it from git as before. */
	if (!o.rev) {
		pmbot_diag_list rd = PMBOT_DIAG_LIST_INIT;
		int got;

		/* A relative FILE names the same file as with --rev: one in the --repo work tree. */
		if (pmbot_buf_puts(&path, o.repo && o.file[0] != '/' && strcmp(o.file, "-") ?
			o.repo : "") < 0 ||
		    (path.len && pmbot_buf_putc(&path, '/') < 0) || pmbot_buf_puts(&path, o.file) < 0)
			goto done;
		got = pmbot_context_read_input(&text, path.buf, &rd);

		cmd_print_diags(stderr, &rd);
		pmbot_diag_list_free(&rd);
		if (got < 0) {
			rc = got == PMBOT_EINVALID ? EXIT_INVALID : EXIT_RUNTIME;
			goto done;
		}
		o.file_text = text.buf ? text.buf : "";
		o.file_len = text.len;
	} else if (!strcmp(o.file, "-")) {
		rc = cmd_usage_error(self, "'-' (standard input) cannot be read at --rev; name a path");
		goto done;
	}
	if (pmbot_capability_find(&cap, "report_ir_draft", NULL) < 0 ||
	    pmbot_buf_printf(&intent, "Draft a pm-bot ReportIR v1 from the prose report %s", o.file) < 0 ||
	    pmbot_buf_printf(&ref, "file:%s", o.file) < 0)
		goto done;
	/* Policy before anything else: a denied request spends nothing. */
	if (pmbot_capability_policy_check(&effective, &denied, cap, NULL) != PMBOT_OK) {
		fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(denied.len ? denied.buf : "out of memory"));
		rc = denied.len ? EXIT_INVALID : EXIT_RUNTIME;
		goto done;
	}
	if ((rc = llm_prepare(&r, &o, cap->id, "planner", intent.buf)) != EXIT_OK)
		goto done;
	rc = EXIT_RUNTIME;
	if (llm_render(&user, &r, cap, ref.buf, NULL) < 0)
		goto done;
	if (!call_model) {
		/* What would be sent, and what it would cost, without sending it. */
		if (pmbot_llm_run_preview(&out, &r.run, effective, user.buf, user.len) < 0)
			goto done;
		rc = cmd_print_json(out);
		goto done;
	}
	if ((rc = llm_ask(&result, &audit, &r, &o, cap, user.buf)) != EXIT_OK)
		goto done;
	rc = EXIT_RUNTIME;
	if (pmbot_llm_draft_markdown(&md, result, r.run.flags,
		json_string_value(json_object_get(audit, "model")),
		json_string_value(json_object_get(audit, "provider")), o.file) < 0)
		goto done;
	if ((rc = validate_draft(md.buf, md.len, o.out ? o.out : "<draft>")) != EXIT_OK) {
		fputs("pm-bot: the draft breaks ReportIR v1 rules (above); nothing written\n", stderr);
		json_object_set_new(audit, "outcome", json_string("invalid_report"));
		llm_audit(&o, audit);
		goto done;
	}
	if (json_object_set_new(audit, "outcome", json_string("drafted")) < 0 ||
	    llm_audit(&o, audit) < 0) {
		rc = EXIT_RUNTIME;
		goto done;
	}
	if (o.out && pmbot_fs_write_atomic(o.out, md.buf, md.len) < 0) {
		fprintf(stderr, "pm-bot: cannot write %s: %s\n", cmd_show(o.out), strerror(errno));
		rc = EXIT_RUNTIME;
		goto done;
	}
	if (o.json) {
		json_t *j = json_pack("{s:O, s:O, s:O, s:O, s:s?}", "result", result, "flags", r.run.flags,
			"transformations", r.run.transformations, "audit", audit, "out", o.out);

		rc = j ? cmd_print_json(j) : EXIT_RUNTIME;
		json_decref(j);
	} else if (!o.out) {
		fwrite(md.buf, 1, md.len, stdout);
	} else {
		fprintf(stderr, "pm-bot: wrote the draft to %s; review it before committing\n",
			cmd_show(o.out));
	}
done:
	json_decref(effective);
	json_decref(result);
	json_decref(audit);
	json_decref(out);
	llm_run_free(&r);
	pmbot_buf_free(&user);
	pmbot_buf_free(&md);
	pmbot_buf_free(&ref);
	pmbot_buf_free(&denied);
	pmbot_buf_free(&intent);
	pmbot_buf_free(&text);
	pmbot_buf_free(&path);
	free(o.contexts);
	free(o.constraints);
	return rc;
}

int cmd_draft(int argc, char **argv)
{
	return run(argc, argv, 1);
}

int cmd_prompt_ir(int argc, char **argv)
{
	return run(argc, argv, 0);
}
