/*
 * gql_alias_bench: set N text values of a Projects v2 board through
 * pm-bot's GitHub client (build/libpmbot.a), B updateProjectV2ItemFieldValue
 * mutations per GraphQL request (aliases f0..f<B-1>), and print what it cost:
 * requests, wall time, and what the client's write pacing would add.
 *
 *   gql_alias_bench [-n N] [-b B] [-P PACE_MS] [-t TAG] [-f FIELD] [-u] OWNER NUMBER
 *
 * The endpoint and token come from the environment like pm-bot's
 * (GITHUB_GRAPHQL_URL, GH_TOKEN). The board is read first (pm-bot's own
 * `project` document, 100 items a page) for its id, the id of the text field
 * FIELD (default "Risk") and the first N items (default 500). Then item k
 * gets the value "TAG-k" (TAG default "bench"), in requests of B mutations
 * (default 1); every answer must name every item it was sent, else the run
 * fails. -P sets the client's pacing (default 0: none); -u reads a user's
 * board instead of an organization's.
 *
 * One line on standard output, "key=value" pairs (bench/github_bench.sh
 * reads them): batch, values, requests, graphql, writes, wall_ms,
 * ms_per_value, waited_ms (what the client slept for pacing) and paced_s:
 * the wall time without that sleep plus the client's default pace (1 s)
 * between consecutive writes, i.e. what the run takes at the default
 * pacing. Figures only.
 * Exit 0, 1 on a failed request or a wrong answer, 2 on bad usage.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/github.h"
#include "pmbot/net.h"
#include "pmbot/banned.h"

#define DEFAULT_PACE_MS 1000 /* pmbot_github_options_init()'s pace_ms */

typedef struct {
	char *project_id;
	char *field_id;
	char **items; /* node ids of the first n items, in board order */
	size_t n_items;
} board;

static void board_free(board *b)
{
	size_t i;

	free(b->project_id);
	free(b->field_id);
	for (i = 0; i < b->n_items; i++)
		free(b->items[i]);
	free(b->items);
	memset(b, 0, sizeof(*b));
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The board's id, FIELD's id (a TEXT field) and the first `want` item ids. */
static int read_board(board *out, pmbot_github_client *c, const char *owner, long number,
	int org, const char *field, size_t want)
{
	json_t *vars = NULL, *data = NULL, *cursor = NULL;
	int rc = PMBOT_ERROR;

	memset(out, 0, sizeof(*out));
	if (!(out->items = calloc(want ? want : 1, sizeof(char *))))
		goto done;
	while (out->n_items < want) {
		const json_t *p, *info, *n;
		size_t i;

		json_decref(vars);
		json_decref(data);
		data = NULL;
		if (!(vars = json_pack("{s:s, s:I, s:O, s:b}", "login", owner, "number",
			      (json_int_t)number, "after", cursor ? cursor : json_null(), "org", org)))
			goto done;
		pmbot_buf err = PMBOT_BUF_INIT;

		if (pmbot_github_graphql(&data, c, pmbot_gql("project"), vars, &err) < 0) {
			fprintf(stderr, "gql_alias_bench: reading the board: %s\n", err.buf);
			pmbot_buf_free(&err);
			goto done;
		}
		p = json_object_get(json_object_get(data, org ? "organization" : "user"), "projectV2");
		if (!json_is_object(p)) {
			fprintf(stderr, "gql_alias_bench: no board %s/%ld\n", owner, number);
			goto done;
		}
		if (!out->project_id) {
			if (!(out->project_id = strdup(jstr(p, "id") ? jstr(p, "id") : "")))
				goto done;
			json_array_foreach(json_object_get(json_object_get(p, "fields"), "nodes"), i, n)
				if (jstr(n, "name") && !strcmp(jstr(n, "name"), field) &&
				    jstr(n, "dataType") && !strcmp(jstr(n, "dataType"), "TEXT") &&
				    jstr(n, "id") && !(out->field_id = strdup(jstr(n, "id"))))
					goto done;
			if (!out->field_id) {
				fprintf(stderr, "gql_alias_bench: the board has no text field '%s'\n", field);
				goto done;
			}
		}
		json_array_foreach(json_object_get(json_object_get(p, "items"), "nodes"), i, n) {
			if (out->n_items == want)
				break;
			if (!jstr(n, "id") || !(out->items[out->n_items] = strdup(jstr(n, "id"))))
				goto done;
			out->n_items++;
		}
		info = json_object_get(json_object_get(p, "items"), "pageInfo");
		if (!json_is_true(json_object_get(info, "hasNextPage")))
			break;
		json_decref(cursor);
		cursor = json_incref(json_object_get(info, "endCursor"));
	}
	if (out->n_items < want) {
		fprintf(stderr, "gql_alias_bench: the board has %zu items, %zu wanted\n", out->n_items,
			want);
		goto done;
	}
	rc = 0;
done:
	json_decref(vars);
	json_decref(data);
	json_decref(cursor);
	return rc;
}

/* A mutation document with `k` aliased field updates f0..f<k-1>. */
static int build_doc(pmbot_buf *doc, size_t k)
{
	size_t i;

	pmbot_buf_clear(doc);
	if (pmbot_buf_puts(doc, "mutation PmBotBenchSetFields($project: ID!, $field: ID!") < 0)
		return PMBOT_ERROR;
	for (i = 0; i < k; i++)
		if (pmbot_buf_printf(doc, ", $i%zu: ID!, $v%zu: String!", i, i) < 0)
			return PMBOT_ERROR;
	if (pmbot_buf_puts(doc, ") {\n") < 0)
		return PMBOT_ERROR;
	for (i = 0; i < k; i++)
		if (pmbot_buf_printf(doc,
			    "  f%zu: updateProjectV2ItemFieldValue(input: {projectId: $project, "
			    "itemId: $i%zu, fieldId: $field, value: {text: $v%zu}}) {\n"
			    "    projectV2Item {\n      id\n    }\n  }\n", i, i, i) < 0)
			return PMBOT_ERROR;
	return pmbot_buf_puts(doc, "}\n") < 0 ? PMBOT_ERROR : 0;
}

/* Items [from, from+k) in one request; every alias must answer its item. */
static int send_batch(pmbot_github_client *c, const board *b, const char *doc, size_t from,
	size_t k, const char *tag)
{
	pmbot_buf name = PMBOT_BUF_INIT, value = PMBOT_BUF_INIT, err = PMBOT_BUF_INIT;
	json_t *vars = NULL, *data = NULL;
	size_t i;
	int rc = PMBOT_ERROR;

	if (!(vars = json_pack("{s:s, s:s}", "project", b->project_id, "field", b->field_id)))
		goto done;
	for (i = 0; i < k; i++) {
		pmbot_buf_clear(&name);
		pmbot_buf_clear(&value);
		if (pmbot_buf_printf(&name, "i%zu", i) < 0 ||
		    json_object_set_new(vars, name.buf, json_string(b->items[from + i])) < 0 ||
		    pmbot_buf_printf(&value, "%s-%zu", tag, from + i) < 0)
			goto done;
		pmbot_buf_clear(&name);
		if (pmbot_buf_printf(&name, "v%zu", i) < 0 ||
		    json_object_set_new(vars, name.buf, json_string(value.buf)) < 0)
			goto done;
	}
	if (pmbot_github_graphql(&data, c, doc, vars, &err) < 0) {
		fprintf(stderr, "gql_alias_bench: items %zu..%zu: %s\n", from, from + k - 1, err.buf);
		goto done;
	}
	for (i = 0; i < k; i++) {
		const char *id;

		pmbot_buf_clear(&name);
		if (pmbot_buf_printf(&name, "f%zu", i) < 0)
			goto done;
		id = jstr(json_object_get(json_object_get(data, name.buf), "projectV2Item"), "id");
		if (!id || strcmp(id, b->items[from + i])) {
			fprintf(stderr, "gql_alias_bench: alias %s did not answer item %s\n", name.buf,
				b->items[from + i]);
			goto done;
		}
	}
	rc = 0;
done:
	json_decref(vars);
	json_decref(data);
	pmbot_buf_free(&name);
	pmbot_buf_free(&value);
	pmbot_buf_free(&err);
	return rc;
}

static int usage(void)
{
	fputs("usage: gql_alias_bench [-n N] [-b B] [-P PACE_MS] [-t TAG] [-f FIELD] [-u] "
	      "OWNER NUMBER\n", stderr);
	return 2;
}

static int positive(const char *s, long *out, long min)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < min)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	pmbot_github_options opts;
	pmbot_github_client *c = NULL;
	pmbot_github_stats before, after;
	pmbot_buf err = PMBOT_BUF_INIT, doc = PMBOT_BUF_INIT, tail = PMBOT_BUF_INIT;
	board b = { 0 };
	const char *tag = "bench", *field = "Risk";
	long n = 500, batch = 1, pace = 0, number;
	int org = 1, opt, curl_ready = 0, status = 1;
	size_t from, requests;
	double t0, wall;

	while ((opt = getopt(argc, argv, "n:b:P:t:f:u")) != -1) {
		switch (opt) {
		case 'n':
			if (positive(optarg, &n, 1) < 0)
				return usage();
			break;
		case 'b':
			if (positive(optarg, &batch, 1) < 0)
				return usage();
			break;
		case 'P':
			if (positive(optarg, &pace, 0) < 0)
				return usage();
			break;
		case 't':
			tag = optarg;
			break;
		case 'f':
			field = optarg;
			break;
		case 'u':
			org = 0;
			break;
		default:
			return usage();
		}
	}
	if (argc - optind != 2 || positive(argv[optind + 1], &number, 1) < 0)
		return usage();
	if (pmbot_net_global_init(NULL) < 0) {
		fputs("gql_alias_bench: libcurl failed to initialise\n", stderr);
		goto done;
	}
	curl_ready = 1;
	pmbot_github_options_init(&opts);
	opts.pace_ms = pace;
	opts.cache_dir = NULL;
	if (pmbot_github_client_new(&c, &opts, &err) < 0) {
		fprintf(stderr, "gql_alias_bench: %s\n", err.len ? err.buf : "cannot make the client");
		goto done;
	}
	if (read_board(&b, c, argv[optind], number, org, field, (size_t)n) < 0)
		goto done;
	if (build_doc(&doc, (size_t)batch) < 0 ||
	    ((size_t)n % (size_t)batch && build_doc(&tail, (size_t)n % (size_t)batch) < 0)) {
		fputs("gql_alias_bench: out of memory\n", stderr);
		goto done;
	}

	pmbot_github_client_stats(&before, c);
	t0 = now_ms();
	for (from = 0; from < (size_t)n; from += (size_t)batch) {
		size_t k = (size_t)n - from < (size_t)batch ? (size_t)n - from : (size_t)batch;

		if (send_batch(c, &b, k == (size_t)batch ? doc.buf : tail.buf, from, k, tag) < 0)
			goto done;
	}
	wall = now_ms() - t0;
	pmbot_github_client_stats(&after, c);

	requests = after.requests - before.requests;
	printf("batch=%ld values=%ld requests=%zu graphql=%lu writes=%lu wall_ms=%.0f "
	       "ms_per_value=%.2f paced_s=%.1f waited_ms=%lld\n",
		batch, n, requests, after.graphql - before.graphql, after.writes - before.writes,
		wall, wall / (double)n,
		(wall - (double)(after.waited_ms - before.waited_ms) +
			(double)(requests ? requests - 1 : 0) * DEFAULT_PACE_MS) / 1000.0,
		after.waited_ms - before.waited_ms);
	status = 0;
done:
	board_free(&b);
	pmbot_github_client_free(c);
	if (curl_ready)
		pmbot_net_global_cleanup();
	pmbot_buf_free(&err);
	pmbot_buf_free(&doc);
	pmbot_buf_free(&tail);
	return status;
}
