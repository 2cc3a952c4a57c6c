#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "pmbot/banned.h"

/*
 * `pm-bot state list|show`: what pm-bot manages and where, read the way the
 * planner reads it (same backend, allowlist, markers and trust), so what it
 * lists is exactly what a plan would update.
 */

static const char *state_word(const pmbot_issue *is)
{
	return is->closed ? "closed" : "open";
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "Field=value, …" of a board item, by field name. */
static int print_board(const json_t *values)
{
	const char **keys;
	const char *k;
	json_t *v;
	size_t n = 0, i;

	if (!(keys = calloc(json_object_size(values) + 1, sizeof(*keys))))
		return -1;
	json_object_foreach((json_t *)values, k, v)
		keys[n++] = k;
	qsort(keys, n, sizeof(*keys), cmp_key);
	for (i = 0; i < n; i++) {
		v = json_object_get(values, keys[i]);
		printf("%s%s=", i ? ", " : "", cmd_show(keys[i]));
		if (json_is_string(v))
			printf("%s", cmd_show(json_string_value(v)));
		else if (json_is_integer(v))
			printf("%lld", (long long)json_integer_value(v));
		else if (json_is_real(v))
			printf("%g", json_real_value(v));
	}
	printf("%s\n", n ? "" : "(no values)");
	free(keys);
	return 0;
}

/* The stable id that names `ref` (an issue ref) among the managed, or NULL. */
static const char *id_of(const pmbot_managed_issue *list, size_t n, const char *ref)
{
	pmbot_buf r = PMBOT_BUF_INIT;
	const char *id = NULL;
	size_t i;

	for (i = 0; i < n && !id; i++) {
		pmbot_buf_clear(&r);
		if (pmbot_issue_ref(&r, list[i].issue->repo, list[i].issue->number) == 0 &&
		    !pmbot_issue_ref_cmp(r.buf, ref))
			id = list[i].stable_id;
	}
	pmbot_buf_free(&r);
	return id;
}

static void print_ref(const pmbot_managed_issue *list, size_t n, const char *ref)
{
	const char *id = id_of(list, n, ref);

	printf("%s", cmd_show(ref));
	if (id)
		printf(" (%s)", cmd_show(id));
}

static int show_one(const pmbot_managed_issue *list, size_t n, const pmbot_managed_issue *m)
{
	const pmbot_issue *is = m->issue;
	size_t i;

	printf("%s  %s#%ld  %s\n", cmd_show(m->stable_id), cmd_show(is->repo), is->number,
		state_word(is));
	printf("title:      %s\n", cmd_show_msg(is->title ? is->title : ""));
	printf("labels:     ");
	for (i = 0; i < is->n_labels; i++)
		printf("%s%s", i ? ", " : "", cmd_show(is->labels[i]));
	printf("%s\n", is->n_labels ? "" : "(none)");
	if (is->issue_type)
		printf("type:       %s\n", cmd_show(is->issue_type));
	printf("parent:     ");
	if (is->parent)
		print_ref(list, n, is->parent);
	else
		printf("(none)");
	printf("\nblocked by: ");
	for (i = 0; i < is->n_blocked_by; i++) {
		printf("%s", i ? ", " : "");
		print_ref(list, n, is->blocked_by[i]);
	}
	printf("%s\n", is->n_blocked_by ? "" : "(none)");
	printf("board:      ");
	if (!m->item)
		printf("not on the board\n");
	else if (print_board(m->item->values) < 0)
		return EXIT_RUNTIME;
	printf("body:       %s\n", m->edited ? "edited by a person since pm-bot wrote it: a "
		"conflict, never overwritten (docs/plan.md, Conflicts)" : "as pm-bot last wrote it");
	if (m->duplicate)
		printf("warning:    another issue carries the same marker; pm-bot leaves both alone "
			"until one marker is removed\n");
	return EXIT_OK;
}

static int list_all(const pmbot_managed_issue *list, size_t n)
{
	size_t i, w = 9;

	for (i = 0; i < n; i++)
		if (strlen(list[i].stable_id) > w)
			w = strlen(list[i].stable_id);
	if (w > 40)
		w = 40;
	printf("%-*s  %-22s %-6s %-5s %s\n", (int)w, "STABLE ID", "ISSUE", "STATE", "BOARD", "TITLE");
	for (i = 0; i < n; i++) {
		const pmbot_issue *is = list[i].issue;
		char ref[300];

		snprintf(ref, sizeof(ref), "%s#%ld", cmd_show(is->repo), is->number);
		printf("%-*s  %-22s %-6s %-5s %s%s%s\n", (int)w, cmd_show(list[i].stable_id), ref,
			state_word(is), list[i].item ? "yes" : "no",
			cmd_show_msg(is->title ? is->title : ""),
			list[i].edited ? "  [edited by a person]" : "",
			list[i].duplicate ? "  [duplicate marker]" : "");
	}
	printf("%zu issue%s managed\n", n, n == 1 ? "" : "s");
	return EXIT_OK;
}

int cmd_state(int argc, char **argv)
{
	static const struct option opts[] = {
		PLAN_INPUT_OPTIONS,
		{ "format", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *self = cmd_lookup("state");
	struct plan_opts o;
	struct plan_inputs in;
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_managed_issue *list = NULL;
	const pmbot_managed_issue *m;
	const char *format = "text", *verb, *id = NULL;
	json_t *out = NULL, *j;
	size_t n = 0, i;
	int c, rc;

	memset(&o, 0, sizeof(o));
	memset(&in, 0, sizeof(in));
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (plan_opts_parse(&o, c, optarg) == 0)
			continue;
		if (c == 'f') {
			format = optarg;
			continue;
		}
		return cmd_bad_option(self, c, argv);
	}
	if (strcmp(format, "text") && strcmp(format, "json"))
		return cmd_usage_error(self, "unknown format '%s': use text or json", format);
	if (optind >= argc)
		return cmd_usage_error(self, "state needs list or show ID");
	verb = argv[optind];
	if (!strcmp(verb, "show") && optind + 2 == argc)
		id = argv[optind + 1];
	else if (strcmp(verb, "list") || optind + 1 != argc)
		return cmd_usage_error(self, "state takes list, or show with one stable id");
	if (!o.repo)
		o.repo = ".";
	rc = plan_inputs_load_state(&in, &o, o.target, &diags);
	cmd_print_diags(stderr, &diags);
	if (rc != EXIT_OK)
		goto done;
	if (pmbot_plan_managed(&list, &n, in.in.state, in.in.config, in.in.self_login) < 0) {
		rc = EXIT_RUNTIME;
		goto done;
	}
	if (id) {
		if (!(m = pmbot_plan_managed_find(list, n, id))) {
			fprintf(stderr, "pm-bot: no issue pm-bot manages in %s carries '%s' (`pm-bot "
				"state list` shows them all)\n", cmd_show(in.in.target), cmd_show(id));
			rc = EXIT_INVALID;
			goto done;
		}
		if (!strcmp(format, "json"))
			rc = pmbot_plan_managed_to_json(&out, m, 1) == 0 ? cmd_print_json(out) :
				EXIT_RUNTIME;
		else
			rc = show_one(list, n, m);
		goto done;
	}
	if (!strcmp(format, "json")) {
		if (!(out = json_array())) {
			rc = EXIT_RUNTIME;
			goto done;
		}
		for (i = 0; i < n; i++)
			if (pmbot_plan_managed_to_json(&j, &list[i], 0) < 0 ||
			    json_array_append_new(out, j) < 0) {
				rc = EXIT_RUNTIME;
				goto done;
			}
		rc = cmd_print_json(out);
	} else {
		rc = list_all(list, n);
	}
done:
	json_decref(out);
	pmbot_plan_managed_free(list, n);
	plan_inputs_free(&in);
	pmbot_diag_list_free(&diags);
	return rc;
}
