#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "pmbot/apply.h"
#include "pmbot/fs.h"
#include "pmbot/plan.h"
#include "pmbot/banned.h"

/*
 * PMBOT_TEST_KILL_AFTER=N makes the process SIGKILL itself once N
 * changesets have finished, so tests can prove an interrupted apply
 * converges when run again. It lives here, not in src/: only the tool
 * decides to end the process. Two more points for the file backend's
 * group commit: PMBOT_TEST_KILL_BEFORE=N as the Nth changeset starts
 * (what the group did so far is only in memory), PMBOT_TEST_KILL_AT_COMMIT=K
 * once the Kth group's state is written and before its audit events are.
 */
struct kill_switch {
	long after;
	long before, started;
	long at_commit, commits;
	long done;
	size_t total;          /* changesets in the plan, for progress lines */
	long long last_ms;     /* when progress was last told */
};

static long long monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A long apply (writes are paced) says every few seconds how far it got. */
static void after_changeset(void *ctx, const json_t *changeset, const char *status)
{
	struct kill_switch *k = ctx;
	long long now = monotonic_ms();

	k->done++;
	if (now - k->last_ms >= 5000) {
		fprintf(stderr, "pm-bot: %ld of %zu changesets done (%s %s: %s)\n", k->done, k->total,
			cmd_show(json_string_value(json_object_get(changeset, "changeset_id"))),
			cmd_show(json_string_value(json_object_get(changeset, "operation"))), status);
		k->last_ms = now;
	}
	if (k->after > 0 && k->done >= k->after)
		raise(SIGKILL);
}

static int before_changeset(void *ctx, const json_t *changeset)
{
	struct kill_switch *k = ctx;

	(void)changeset;
	if (k->before > 0 && ++k->started >= k->before)
		raise(SIGKILL);
	return 0;
}

static void group_committed(void *ctx, size_t n)
{
	struct kill_switch *k = ctx;

	(void)n;
	if (k->at_commit > 0 && ++k->commits >= k->at_commit)
		raise(SIGKILL);
}

/*
 * The plan file, checked (pmbot_bundle_load_text): a damaged plan is an
 * error, never a crash. Its bytes stay in `text`.
 */
static int read_bundle(json_t **out, pmbot_buf *text, const char *path)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	int r = pmbot_bundle_load_text(out, text, path, &diags);

	cmd_print_diags(stderr, &diags);
	pmbot_diag_list_free(&diags);
	if (r == PMBOT_EINVALID)
		fprintf(stderr, "pm-bot: %s is not a plan pm-bot can apply: nothing applied\n",
			cmd_show(path));
	return r == PMBOT_OK ? EXIT_OK : r == PMBOT_EINVALID ? EXIT_INVALID : EXIT_RUNTIME;
}

/* Inputs not given on the command line come from the plan itself. */
/*
 * Apply goes where the plan was made (source.backend: its kind and state
 * file), as a Terraform plan keeps its backend: re-planning against another
 * backend could only end in STALE_PLAN. Naming another backend is refused.
 */
static int backend_from_plan(struct plan_opts *o, const json_t *bundle)
{
	const char *kind = pmbot_bundle_backend_kind(bundle);
	const char *state = pmbot_bundle_backend_state(bundle);

	if (!kind)
		return EXIT_OK;
	if (o->backend && strcmp(o->backend, kind)) {
		fprintf(stderr, "pm-bot: the plan was made with --backend %s; apply it there (without "
			"--backend %s), or plan again with --backend %s\n", cmd_show(kind),
			cmd_show(o->backend), cmd_show(o->backend));
		return EXIT_INVALID;
	}
	if (!o->backend)
		o->backend = kind;
	/* A plan file cannot point the state write anywhere: only at a .json file. */
	if (!strcmp(kind, "file") && !o->state && state) {
		size_t n = strlen(state);

		if (n < 6 || strcmp(state + n - 5, ".json")) {
			fprintf(stderr, "pm-bot: the plan names the state file %s, which is not a .json "
				"file: name the state file with --state\n", cmd_show(state));
			return EXIT_INVALID;
		}
		o->state = state;
	}
	return EXIT_OK;
}

static void defaults_from_plan(struct plan_opts *o, const json_t *bundle, char ***owned)
{
	const char *commit = pmbot_bundle_source_commit(bundle);
	size_t i, n;

	if (!o->target)
		o->target = pmbot_bundle_target(bundle);
	if (commit && !o->repo)
		o->repo = ".";
	if (commit && !o->rev)
		o->rev = commit;
	if (o->n_paths)
		return;
	n = pmbot_bundle_report_count(bundle);
	if (!n || !(*owned = calloc(n, sizeof(**owned))))
		return;
	for (i = 0; i < n; i++)
		(*owned)[i] = (char *)pmbot_bundle_report_path(bundle, i);
	o->paths = *owned;
	o->n_paths = n;
}

static int is_proposal(const json_t *bundle)
{
	const char *kind = pmbot_bundle_source_kind(bundle);

	return kind && !strcmp(kind, "proposal");
}

/* The refusal stands either way; a ledger that cannot take it is said aloud. */
static void record_denial(pmbot_audit *audit, const char *audit_path, const json_t *ev)
{
	if (pmbot_audit_append(audit, "denial", ev) < 0)
		fprintf(stderr, "pm-bot: cannot record the denial in the audit ledger %s\n",
			cmd_show(audit_path));
}

static void print_results(const json_t *results)
{
	const char *names[] = { "applied", "already_applied", "denied", "failed", "pending" };
	size_t counts[5] = { 0 }, i, k;
	json_t *r;

	json_array_foreach(results, i, r) {
		const char *st = json_string_value(json_object_get(r, "status"));

		for (k = 0; k < 5; k++)
			if (st && !strcmp(st, names[k]))
				counts[k]++;
		if (st && (!strcmp(st, "denied") || !strcmp(st, "failed")))
			fprintf(stderr, "pm-bot: %s %s: %s\n",
				cmd_show(json_string_value(json_object_get(r, "changeset_id"))), st,
				cmd_show_msg(json_string_value(json_object_get(r, "reason")) ?
					json_string_value(json_object_get(r, "reason")) : ""));
	}
	printf("applied %zu, already applied %zu, denied %zu, failed %zu, pending %zu\n",
		counts[0], counts[1], counts[2], counts[3], counts[4]);
}

int cmd_apply(int argc, char **argv)
{
	static const struct option opts[] = {
		PLAN_INPUT_OPTIONS,
		{ "plan", required_argument, NULL, 'p' },
		{ "approve", required_argument, NULL, 'A' },
		{ "audit", required_argument, NULL, 'a' },
		{ "actor", required_argument, NULL, 'u' },
		{ "out", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *self = cmd_lookup("apply");
	struct plan_opts o;
	struct plan_inputs in;
	struct kill_switch ks = { 0, 0, 0, 0, 0, 0, 0, 0 };
	pmbot_apply_hooks hooks = { NULL, after_changeset, NULL, &ks, group_committed };
	pmbot_apply_start start;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_audit *audit = NULL;
	pmbot_diag_list approved_diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf err = PMBOT_BUF_INIT, audit_default = PMBOT_BUF_INIT, plan_text = PMBOT_BUF_INIT;
	const char *plan_path = NULL, *approve = NULL, *audit_path = NULL, *out_path = NULL;
	const char *actor = getenv("USER"), *env;
	char **owned_paths = NULL;
	json_t *approved = NULL, *fresh = NULL, *results = NULL, *ev = NULL;
	size_t approved_total;
	int c, rc, r, damaged;

	memset(&o, 0, sizeof(o));
	memset(&in, 0, sizeof(in));
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (plan_opts_parse(&o, c, optarg) == 0)
			continue;
		switch (c) {
		case 'p': plan_path = optarg; break;
		case 'A': approve = optarg; break;
		case 'a': audit_path = optarg; break;
		case 'u': actor = optarg; break;
		case 'o': out_path = optarg; break;
		default: return cmd_bad_option(self, c, argv);
		}
	}
	if (!plan_path || !approve)
		return cmd_usage_error(self, "apply needs --plan FILE and --approve HASH");
	if (!actor || !*actor)
		actor = "unknown";
	if ((env = getenv("PMBOT_TEST_KILL_AFTER")))
		ks.after = strtol(env, NULL, 10);
	if ((env = getenv("PMBOT_TEST_KILL_AT_COMMIT")))
		ks.at_commit = strtol(env, NULL, 10);
	if ((env = getenv("PMBOT_TEST_KILL_BEFORE")) && (ks.before = strtol(env, NULL, 10)) > 0)
		hooks.before = before_changeset;
	o.paths = argv + optind;
	o.n_paths = (size_t)(argc - optind);

	/* A damaged plan is refused, and the refusal audited like any other. */
	if ((damaged = read_bundle(&approved, &plan_text, plan_path)) == EXIT_RUNTIME) {
		rc = damaged;
		goto done;
	}
	if (approved && !is_proposal(approved))
		defaults_from_plan(&o, approved, &owned_paths);
	if (approved && (rc = backend_from_plan(&o, approved)) != EXIT_OK)
		goto done;
	if (o.repo && !o.rev)
		o.rev = "HEAD";
	if (!audit_path) {
		if (pmbot_buf_printf(&audit_default, "%s/.pm-bot/audit.jsonl", o.repo ? o.repo : ".") < 0) {
			rc = EXIT_RUNTIME;
			goto done;
		}
		audit_path = audit_default.buf;
	}
	{
		pmbot_buf dir = PMBOT_BUF_INIT;
		const char *slash = strrchr(audit_path, '/');

		if (slash && pmbot_buf_put(&dir, audit_path, (size_t)(slash - audit_path)) == 0 && dir.len)
			pmbot_fs_mkdirs(dir.buf, 0755);
		pmbot_buf_free(&dir);
	}
	if (pmbot_audit_open(&audit, audit_path, &diags) < 0) {
		cmd_print_diags(stderr, &diags);
		fprintf(stderr, "pm-bot: cannot open the audit ledger %s\n", cmd_show(audit_path));
		rc = EXIT_RUNTIME;
		goto done;
	}
	if (damaged != EXIT_OK) {
		ev = json_pack("{s:s, s:s, s:s}", "reason", "PLAN_INVALID", "actor", actor,
			"approved_hash", approve);
		record_denial(audit, audit_path, ev);
		rc = EXIT_INVALID;
		goto done;
	}
	if (strcmp(approve, pmbot_bundle_plan_hash(approved))) {
		ev = json_pack("{s:s, s:s, s:s, s:O}", "reason", "APPROVAL_MISMATCH", "actor", actor,
			"approved_hash", approve, "plan_hash", json_object_get(approved, "plan_hash"));
		record_denial(audit, audit_path, ev);
		fprintf(stderr, "pm-bot: the approval names %s but the plan's hash is %s: nothing applied\n",
			cmd_show(approve), cmd_show(pmbot_bundle_plan_hash(approved)));
		rc = EXIT_INVALID;
		goto done;
	}
	approved_total = pmbot_plan_count(approved);
	if (is_proposal(approved)) {
		rc = plan_inputs_load_state(&in, &o, pmbot_bundle_target(approved),
			&diags);
		cmd_print_diags(stderr, &diags);
		if (rc != EXIT_OK)
			goto done;
		fresh = json_incref(approved);
		pmbot_diag_list_free(&diags);
		r = pmbot_apply_check_proposal(approved, in.in.state, in.in.config, &diags);
		cmd_print_diags(stderr, &diags);
	} else {
		/*
		 * pmbot_apply_check() in its two steps: the approved changesets
		 * (60 MB of tree for a plan file of 25,544) are not held while
		 * the plan is made again, only the file's bytes (12 MB), parsed
		 * again if the fresh plan differs (a resumed apply).
		 */
		r = pmbot_apply_check_bundle(approved, "approved", &approved_diags);
		if (r == PMBOT_OK)
			(void)json_object_del(approved, "changesets");
		rc = plan_inputs_load(&in, &o, &diags);
		if (rc == EXIT_OK)
			rc = plan_inputs_plan(&fresh, &in, &diags);
		if (rc != EXIT_OK) {
			cmd_print_diags(stderr, &diags);
			goto done;
		}
		if (r != PMBOT_OK) {
			if (pmbot_diag_list_move(&diags, &approved_diags) < 0)
				r = PMBOT_ERROR;
		} else {
			r = pmbot_apply_check_fresh(approved, plan_text.buf, plan_text.len, fresh,
				in.in.state, in.in.config, &diags);
		}
		cmd_print_diags(stderr, &diags);
	}
	pmbot_buf_free(&plan_text);
	if (r != PMBOT_OK) {
		/* A proposal's refusal names its own code (BUNDLE_INVALID, PLAN_HASH_MISMATCH, ...). */
		ev = json_pack("{s:s, s:s, s:s, s:O}", "reason", is_proposal(approved) &&
			diags.count ? diags.items[0].code : "STALE_PLAN", "actor", actor,
			"approved_hash", approve, "fresh_hash", json_object_get(fresh, "plan_hash"));
		record_denial(audit, audit_path, ev);
		fprintf(stderr, "pm-bot: the plan is stale: the repository or the state changed since "
			"it was made. Plan again and approve the new hash.\n");
		rc = r == PMBOT_EINVALID ? EXIT_INVALID : EXIT_RUNTIME;
		goto done;
	}
	ev = json_pack("{s:s, s:s, s:s, s:O, s:I}", "actor", actor, "how", "pm-bot apply --approve",
		"plan_hash", approve, "fresh_hash", json_object_get(fresh, "plan_hash"),
		"changesets", (json_int_t)pmbot_plan_count(fresh));
	if (pmbot_audit_append(audit, "approval", ev) < 0) {
		fprintf(stderr, "pm-bot: cannot write the audit ledger %s\n", cmd_show(audit_path));
		rc = EXIT_RUNTIME;
		goto done;
	}
	ks.total = pmbot_plan_count(fresh);
	ks.last_ms = monotonic_ms();
	/*
	 * The executor starts from the state the check above was made against:
	 * read after the approval was verified, with nothing written since, so
	 * its proof that the new items are absent is still the newest there is.
	 */
	pmbot_inputs_start(&start, &in.in);
	r = pmbot_apply_run_from(&results, fresh, NULL, in.in.backend, in.in.config, audit, actor,
		&hooks, &start, &err);
	if (results) {
		pmbot_buf lines = PMBOT_BUF_INIT;

		/* Per item first: what a person checks; the counts after. */
		if (pmbot_plan_results_text(&lines, fresh, results) == 0)
			fwrite(lines.buf, 1, lines.len, stdout);
		pmbot_buf_free(&lines);
		print_results(results);
	}
	if (r == PMBOT_BACKEND_EPAUSED) {
		/* Counted against the approved plan: a resumed run's fresh plan holds only what is left. */
		if (pmbot_apply_progress(&err, approved_total, results,
			    in.in.backend->resume_at) < 0)
			r = PMBOT_ERROR;
		else
			printf("%s\n", err.buf);
	} else if (r != PMBOT_OK) {
		fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(err.len ? err.buf : "apply stopped"));
	}
	if (out_path && results && write_bundle(out_path, results) != EXIT_OK)
		r = PMBOT_ERROR;
	rc = r == PMBOT_OK ? EXIT_OK : r == PMBOT_BACKEND_EPAUSED ? EXIT_PAUSED :
		r == PMBOT_EINVALID ? EXIT_INVALID : EXIT_RUNTIME;
done:
	json_decref(ev);
	json_decref(approved);
	json_decref(fresh);
	json_decref(results);
	free(owned_paths);
	pmbot_audit_close(audit);
	plan_inputs_free(&in);
	pmbot_buf_free(&err);
	pmbot_buf_free(&audit_default);
	pmbot_buf_free(&plan_text);
	pmbot_diag_list_free(&diags);
	pmbot_diag_list_free(&approved_diags);
	return rc;
}
