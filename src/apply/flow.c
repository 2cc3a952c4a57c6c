#include "apply_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/banned.h"

/* Per-node budget; the backend's own HTTP timeouts enforce it within a call. */
#define NODE_TIMEOUT_MS 30000
#define SAFE_RETRY_MAX 2
#define SAFE_RETRY_BACKOFF_MS 1000
#define INT31_MAX 2147483647LL

static int digits(const char *s, int n, int *out)
{
	int i, v = 0;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 1;
}

int pmbot_apply_time_valid(const char *s)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, se, leap, dim;
	const char *p;

	if (!s || strlen(s) < 20 || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':')
		return 0;
	if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) ||
	    !digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &se))
		return 0;
	if (mo < 1 || mo > 12 || h > 23 || mi > 59 || se > 60)
		return 0;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	dim = mdays[mo - 1] + (mo == 2 && leap);
	if (d < 1 || d > dim)
		return 0;
	p = s + 19;
	if (*p == '.') {
		if (!isdigit((unsigned char)p[1]))
			return 0;
		for (p++; isdigit((unsigned char)*p); p++)
			;
	}
	return !strcmp(p, "Z") || !strcmp(p, "z") || !strcmp(p, "+00:00");
}

int pmbot_apply_now(char out[PMBOT_APPLY_TIME_SIZE])
{
	const char *env = getenv("PMBOT_NOW");
	struct tm tm;
	time_t t;

	if (env && *env) {
		/* A reproducibility knob that is silently ignored would be worse than none. */
		if (!pmbot_apply_time_valid(env) || strlen(env) >= PMBOT_APPLY_TIME_SIZE)
			return -1;
		memcpy(out, env, strlen(env) + 1);
		return 0;
	}
	t = time(NULL);
	if (t == (time_t)-1 || !gmtime_r(&t, &tm) ||
	    !strftime(out, PMBOT_APPLY_TIME_SIZE, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return -1;
	return 0;
}

static json_t *node_json(const json_t *cs, long long *budget, int deep)
{
	const char *id = json_string_value(json_object_get(cs, "changeset_id"));
	const char *opname = json_string_value(json_object_get(cs, "operation"));
	pmbot_buf type = PMBOT_BUF_INIT;
	pmbot_operation op;
	json_t *with, *node = NULL;
	int safe;

	safe = pmbot_operation_parse(&op, opname) == PMBOT_OK && pmbot_apply_repeat_safe(op);
	if (pmbot_buf_printf(&type, "github.%s", opname) < 0)
		goto done;
	with = json_pack("{s:O?, s:s, s:O?, s:O?}",
		"idempotency_key", json_object_get(cs, "idempotency_key"),
		"operation", opname,
		"target", json_object_get(cs, "target"),
		"payload", json_object_get(cs, "payload"));
	/*
	 * Deep for a flow handed out: it must not share mutable members with
	 * the caller's bundle. The executor's own flow only reads them.
	 */
	node = json_pack("{s:s, s:s, s:o, s:i, s:{s:i, s:i}}",
		"id", id ? id : "",
		"type", type.buf,
		"with", with && deep ? json_deep_copy(with) : json_incref(with),
		"timeout_ms", NODE_TIMEOUT_MS,
		"retry", "max", safe ? SAFE_RETRY_MAX : 0,
		"backoff_ms", safe ? SAFE_RETRY_BACKOFF_MS : 0);
	json_decref(with);
	if (node)
		*budget += (long long)NODE_TIMEOUT_MS * (safe ? SAFE_RETRY_MAX + 1 : 1) +
			(safe ? (long long)SAFE_RETRY_MAX * SAFE_RETRY_BACKOFF_MS : 0);
done:
	pmbot_buf_free(&type);
	return node;
}

static int compile(json_t **out, const json_t *bundle, const pmbot_config *config,
	const char *source_file, int deep)
{
	const json_t *changesets = json_object_get(bundle, "changesets");
	const char *bundle_id = json_string_value(json_object_get(bundle, "bundle_id"));
	const char *plan_hash = json_string_value(json_object_get(bundle, "plan_hash"));
	char now[PMBOT_APPLY_TIME_SIZE], policy_hash[PMBOT_SHA256_HEX_SIZE];
	pmbot_buf name = PMBOT_BUF_INIT, ref = PMBOT_BUF_INIT;
	json_t *flow = NULL, *nodes = NULL, *edges = NULL, *policy = NULL;
	const json_t *cs;
	long long budget = 0;
	size_t i;
	int err = PMBOT_ERROR;

	*out = NULL;
	if (!json_is_object(bundle) || !json_is_array(changesets) || !bundle_id) {
		err = PMBOT_EINVALID;
		goto done;
	}
	json_array_foreach(changesets, i, cs) {
		if (!json_is_string(json_object_get(cs, "operation"))) {
			err = PMBOT_EINVALID;
			goto done;
		}
	}
	if (pmbot_apply_now(now) < 0)
		goto done;
	if (config) {
		if (pmbot_config_to_json(&policy, config) != PMBOT_OK)
			goto done;
	} else if (!(policy = json_object())) {
		goto done;
	}
	if (pmbot_sha256_json(policy_hash, policy) < 0 ||
	    pmbot_buf_printf(&ref, "pm-bot.yml#%.16s", policy_hash) < 0 ||
	    pmbot_buf_printf(&name, "pm-bot.apply.%s", bundle_id) < 0)
		goto done;
	if (!(nodes = json_array()) || !(edges = json_array()))
		goto done;
	json_array_foreach(changesets, i, cs) {
		if (json_array_append_new(nodes, node_json(cs, &budget, deep)) < 0)
			goto done;
		/* The bundle's order is the plan's order: a chain of success edges. */
		if (i > 0 && json_array_append_new(edges, json_pack("{s:O, s:O, s:s}",
			"from", json_object_get(json_array_get(nodes, i - 1), "id"),
			"to", json_object_get(json_array_get(nodes, i), "id"),
			"on", "success")) < 0)
			goto done;
	}
	if (budget > INT31_MAX)
		budget = INT31_MAX;
	flow = json_pack("{s:s, s:{s:s, s:I}, s:{s:s, s:O}, s:{}, s:{s:O, s:O}, s:{s:s, s:s}}",
		"version", "1.0.0",
		"flow", "name", name.buf, "timeout_ms", (json_int_t)budget,
		"constants", "policyRef", ref.buf, "policy", policy,
		"inputs_schema",
		"graph", "nodes", nodes, "edges", edges,
		"metadata", "generated_at", now,
		"source_file", source_file && *source_file ? source_file : "-");
	if (!flow)
		goto done;
	if (plan_hash && json_object_set_new(json_object_get(flow, "metadata"), "plan_hash",
		json_string(plan_hash)) < 0)
		goto done;
	if (json_object_set_new(json_object_get(flow, "metadata"), "bundle_id",
		json_string(bundle_id)) < 0)
		goto done;
	*out = flow;
	flow = NULL;
	err = PMBOT_OK;
done:
	json_decref(flow);
	json_decref(nodes);
	json_decref(edges);
	json_decref(policy);
	pmbot_buf_free(&name);
	pmbot_buf_free(&ref);
	return err;
}

int pmbot_flow_compile(json_t **out, const json_t *bundle, const pmbot_config *config,
	const char *source_file)
{
	return compile(out, bundle, config, source_file, 1);
}

int pmbot_flow_compile_shared(json_t **out, const json_t *bundle, const pmbot_config *config)
{
	return compile(out, bundle, config, NULL, 0);
}

/* ------------------------------------------------------------------ */

typedef struct {
	pmbot_diag_list *diags;
	pmbot_buf path;
	int oom;
} vctx;

static void add(vctx *v, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(vctx *v, const char *code, const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	if (pmbot_buf_vprintf(&msg, fmt, ap) < 0)
		v->oom = 1;
	va_end(ap);
	if (pmbot_diag_add(v->diags, PMBOT_SEV_ERROR, code, NULL, v->path.buf, 0, 0, "%s",
		msg.buf) < 0)
		v->oom = 1;
	pmbot_buf_free(&msg);
}

static size_t push(vctx *v, const char *key)
{
	size_t len = v->path.len;

	if (pmbot_json_pointer_push(&v->path, key) < 0)
		v->oom = 1;
	return len;
}

static size_t push_i(vctx *v, size_t i)
{
	size_t len = v->path.len;

	if (pmbot_json_pointer_push_index(&v->path, i) < 0)
		v->oom = 1;
	return len;
}

static void pop(vctx *v, size_t len)
{
	pmbot_buf_truncate(&v->path, len);
}

/* Rule 1, outside the members the spec declares opaque. */
static void walk_strings(vctx *v, const json_t *x)
{
	const char *k;
	json_t *m;
	size_t i, at;

	if (json_is_string(x) && !json_string_length(x)) {
		add(v, "FLOW_EMPTY_STRING", "strings must not be empty");
	} else if (json_is_object(x)) {
		json_object_foreach((json_t *)x, k, m) {
			at = push(v, k);
			walk_strings(v, m);
			pop(v, at);
		}
	} else if (json_is_array(x)) {
		json_array_foreach(x, i, m) {
			at = push_i(v, i);
			walk_strings(v, m);
			pop(v, at);
		}
	}
}

static void walk_except(vctx *v, const json_t *obj, const char *skip)
{
	const char *k;
	json_t *m;
	size_t at;

	if (!json_is_object(obj)) {
		walk_strings(v, obj);
		return;
	}
	json_object_foreach((json_t *)obj, k, m) {
		if (skip && !strcmp(k, skip))
			continue;
		at = push(v, k);
		walk_strings(v, m);
		pop(v, at);
	}
}

static const char *type_name(const json_t *x)
{
	switch (json_typeof(x)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* The member `key` of `obj`, required to be of `type`; NULL (and a diagnostic) otherwise. */
static const json_t *member(vctx *v, const json_t *obj, const char *key, json_type type)
{
	const json_t *m = json_object_get(obj, key);
	static const char *const want[] = { "an object", "an array", "a string", "an integer" };
	size_t at = push(v, key);

	if (!m) {
		pop(v, at);
		add(v, "FLOW_MISSING", "required member '%s' is missing", key);
		return NULL;
	}
	if (json_typeof(m) != type) {
		add(v, "FLOW_TYPE", "must be %s, not %s",
			type <= JSON_INTEGER ? want[type] : "?", type_name(m));
		m = NULL;
	}
	pop(v, at);
	return m;
}

static int id_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '-')
			return 0;
	return 1;
}

static void check_id(vctx *v, const json_t *obj, const char *key)
{
	const json_t *s = member(v, obj, key, JSON_STRING);
	size_t at;

	if (!s || !json_string_length(s))
		return;
	if (!id_ok(json_string_value(s))) {
		at = push(v, key);
		add(v, "FLOW_ID", "'%s' does not match ^[a-zA-Z0-9_.-]+$",
			json_string_value(s));
		pop(v, at);
	}
}

static void check_int(vctx *v, const json_t *obj, const char *key)
{
	const json_t *n = member(v, obj, key, JSON_INTEGER);
	size_t at;

	if (n && (json_integer_value(n) < 0 || json_integer_value(n) > INT31_MAX)) {
		char num[32];

		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(n));
		at = push(v, key);
		add(v, "FLOW_RANGE", "%s is outside 0..2147483647", num);
		pop(v, at);
	}
}

static void check_version(vctx *v, const json_t *doc)
{
	const json_t *s = member(v, doc, "version", JSON_STRING);
	const char *p;
	int parts = 0, ndig = 0;
	size_t at;

	if (!s || !json_string_length(s))
		return;
	for (p = json_string_value(s); ; p++) {
		if (isdigit((unsigned char)*p)) {
			ndig++;
			continue;
		}
		if (!ndig)
			break;
		parts++;
		ndig = 0;
		if (*p != '.')
			break;
	}
	at = push(v, "version");
	if (parts != 3 || *p)
		add(v, "FLOW_VERSION", "'%s' is not a major.minor.patch version",
			json_string_value(s));
	else if (strtol(json_string_value(s), NULL, 10) != 1 || json_string_value(s)[1] != '.')
		add(v, "FLOW_VERSION", "major version of '%s' is not supported (this pm-bot reads 1.x.y)",
			json_string_value(s));
	pop(v, at);
}

static int type_repeat_safe(const char *type)
{
	pmbot_operation op;

	return type && !strncmp(type, "github.", 7) &&
		pmbot_operation_parse(&op, type + 7) == PMBOT_OK && pmbot_apply_repeat_safe(op);
}

static void check_node(vctx *v, const json_t *node)
{
	const json_t *retry, *max;
	const char *type;
	size_t at;

	if (!json_is_object(node)) {
		add(v, "FLOW_TYPE", "a node must be an object, not %s", type_name(node));
		return;
	}
	check_id(v, node, "id");
	type = json_string_value(member(v, node, "type", JSON_STRING));
	member(v, node, "with", JSON_OBJECT);
	check_int(v, node, "timeout_ms");
	retry = member(v, node, "retry", JSON_OBJECT);
	if (!retry)
		return;
	at = push(v, "retry");
	check_int(v, retry, "max");
	check_int(v, retry, "backoff_ms");
	max = json_object_get(retry, "max");
	if (type && *type && json_is_integer(max) && json_integer_value(max) > 0 &&
	    !type_repeat_safe(type)) {
		size_t at2 = push(v, "max");

		add(v, "FLOW_RETRY_UNSAFE",
			"'%s' is not safe to repeat, so it may not retry (retry.max must be 0)", type);
		pop(v, at2);
	}
	pop(v, at);
}

/* Kahn's algorithm; what is left over lies on or behind a cycle, which is named. */
static void check_acyclic(vctx *v, const json_t *nodes, const size_t *from, const size_t *to, size_t n_edges)
{
	size_t n = json_array_size(nodes), i, head = 0, tail = 0, done = 0;
	size_t *indeg = calloc(n ? n : 1, sizeof(size_t));
	size_t *queue = calloc(n ? n : 1, sizeof(size_t));
	size_t *pred = calloc(n ? n : 1, sizeof(size_t));
	unsigned char *seen = calloc(n ? n : 1, 1);
	/* Each node's edges, in edge order (out[first[u]] .. out[first[u + 1]] - 1). */
	size_t *first = calloc(n + 1, sizeof(size_t));
	size_t *out = calloc(n_edges ? n_edges : 1, sizeof(size_t));
	pmbot_buf cyc = PMBOT_BUF_INIT;

	if (!indeg || !queue || !pred || !seen || !first || !out) {
		v->oom = 1;
		goto done;
	}
	for (i = 0; i < n_edges; i++) {
		indeg[to[i]]++;
		first[from[i] + 1]++;
	}
	for (i = 0; i < n; i++)
		first[i + 1] += first[i];
	/* `pred` as each node's fill position for now; it is reset below. */
	memcpy(pred, first, n * sizeof(size_t));
	for (i = 0; i < n_edges; i++)
		out[pred[from[i]]++] = to[i];
	memset(pred, 0, n * sizeof(size_t));
	for (i = 0; i < n; i++)
		if (!indeg[i])
			queue[tail++] = i;
	while (head < tail) {
		size_t u = queue[head++], e;

		done++;
		for (e = first[u]; e < first[u + 1]; e++)
			if (--indeg[out[e]] == 0)
				queue[tail++] = out[e];
	}
	if (done == n)
		goto done;
	{
		size_t x = SIZE_MAX, k, start;

		/* Every leftover node has a leftover predecessor: walk back until one repeats. */
		for (i = 0; i < n_edges; i++)
			if (indeg[to[i]] && indeg[from[i]]) {
				pred[to[i]] = from[i];
				x = to[i];
			}
		while (!seen[x]) {
			seen[x] = 1;
			x = pred[x];
		}
		start = x;
		/* pred walks backwards; collect, then print forwards. */
		memset(queue, 0, n * sizeof(size_t));
		k = 0;
		do {
			queue[k++] = x;
			x = pred[x];
		} while (x != start);
		queue[k++] = start;
		while (k--) {
			if (pmbot_buf_puts(&cyc, json_string_value(json_object_get(
				json_array_get(nodes, queue[k]), "id"))) < 0 ||
			    (k && pmbot_buf_puts(&cyc, " -> ") < 0)) {
				v->oom = 1;
				goto done;
			}
		}
		{
			size_t at = push(v, "edges");

			add(v, "FLOW_CYCLE", "the graph has a cycle: %s", cyc.buf);
			pop(v, at);
		}
	}
done:
	free(indeg);
	free(queue);
	free(pred);
	free(seen);
	free(first);
	free(out);
	pmbot_buf_free(&cyc);
}

static void check_graph(vctx *v, const json_t *graph)
{
	pmbot_strmap ids = PMBOT_STRMAP_INIT;
	const json_t *nodes, *edges, *x;
	size_t *from = NULL, *to = NULL, n_edges = 0, i, at, at2;
	int edges_ok = 1;

	at = push(v, "graph");
	nodes = member(v, graph, "nodes", JSON_ARRAY);
	edges = member(v, graph, "edges", JSON_ARRAY);
	if (nodes && !json_array_size(nodes)) {
		at2 = push(v, "nodes");
		add(v, "FLOW_NO_NODES", "the graph needs at least one node");
		pop(v, at2);
	}
	json_array_foreach(nodes, i, x) {
		const char *id = json_string_value(json_object_get(x, "id"));
		int rc;

		at2 = push(v, "nodes");
		push_i(v, i);
		check_node(v, x);
		if (id && *id && (rc = pmbot_strmap_put(&ids, id, (void *)(uintptr_t)i, NULL)) != 0) {
			if (rc < 0) {
				v->oom = 1;
			} else {
				size_t at3 = push(v, "id");

				add(v, "FLOW_DUPLICATE_ID", "node id '%s' is used twice", id);
				pop(v, at3);
			}
		}
		pop(v, at2);
	}
	if (edges && json_array_size(edges)) {
		from = calloc(json_array_size(edges), sizeof(size_t));
		to = calloc(json_array_size(edges), sizeof(size_t));
		if (!from || !to) {
			v->oom = 1;
			goto done;
		}
	}
	json_array_foreach(edges, i, x) {
		static const char *const ends[] = { "from", "to" };
		void *ix[2] = { NULL, NULL };
		const char *on;
		int ok = 1, k;

		at2 = push(v, "edges");
		push_i(v, i);
		if (!json_is_object(x)) {
			add(v, "FLOW_TYPE", "an edge must be an object, not %s", type_name(x));
			pop(v, at2);
			edges_ok = 0;
			continue;
		}
		for (k = 0; k < 2; k++) {
			const json_t *s = member(v, x, ends[k], JSON_STRING);

			if (!s || !json_string_length(s)) {
				ok = 0;
				continue;
			}
			if (!pmbot_strmap_get(&ids, json_string_value(s), &ix[k])) {
				size_t at3 = push(v, ends[k]);

				add(v, "FLOW_EDGE_REF", "'%s' names no node", json_string_value(s));
				pop(v, at3);
				ok = 0;
			}
		}
		on = json_string_value(member(v, x, "on", JSON_STRING));
		if (on && *on && strcmp(on, "success") && strcmp(on, "failure")) {
			size_t at3 = push(v, "on");

			add(v, "FLOW_EDGE_ON", "'%s' is not one of success, failure", on);
			pop(v, at3);
		}
		if (ok) {
			from[n_edges] = (size_t)(uintptr_t)ix[0];
			to[n_edges] = (size_t)(uintptr_t)ix[1];
			n_edges++;
		}
		pop(v, at2);
	}
	/* Duplicate ids make edges ambiguous; the cycle check needs a well-formed graph. */
	if (nodes && edges_ok && ids.count == json_array_size(nodes))
		check_acyclic(v, nodes, from, to, n_edges);
done:
	pop(v, at);
	free(from);
	free(to);
	pmbot_strmap_free(&ids);
}

int pmbot_flow_validate(const json_t *flow, pmbot_diag_list *diags)
{
	vctx v = { diags, PMBOT_BUF_INIT, 0 };
	const json_t *x;
	size_t errors = diags->errors, at;

	if (!json_is_object(flow)) {
		add(&v, "FLOW_TYPE", "a flow document is an object, not %s", type_name(flow));
		goto done;
	}
	/* Opaque by spec 001: the policy payload, inputs_schema and every node's `with`. */
	{
		const char *k;
		json_t *m;

		json_object_foreach((json_t *)flow, k, m) {
			if (!strcmp(k, "inputs_schema"))
				continue;
			at = push(&v, k);
			if (!strcmp(k, "constants")) {
				walk_except(&v, m, "policy");
			} else if (!strcmp(k, "graph") && json_is_object(m)) {
				const char *gk;
				json_t *gm;

				json_object_foreach(m, gk, gm) {
					size_t at2 = push(&v, gk);

					if (!strcmp(gk, "nodes") && json_is_array(gm)) {
						size_t i;
						json_t *node;

						json_array_foreach(gm, i, node) {
							size_t at3 = push_i(&v, i);

							walk_except(&v, node, "with");
							pop(&v, at3);
						}
					} else {
						walk_strings(&v, gm);
					}
					pop(&v, at2);
				}
			} else {
				walk_strings(&v, m);
			}
			pop(&v, at);
		}
	}
	check_version(&v, flow);
	if ((x = member(&v, flow, "flow", JSON_OBJECT))) {
		at = push(&v, "flow");
		check_id(&v, x, "name");
		check_int(&v, x, "timeout_ms");
		pop(&v, at);
	}
	if ((x = member(&v, flow, "constants", JSON_OBJECT))) {
		at = push(&v, "constants");
		member(&v, x, "policyRef", JSON_STRING);
		member(&v, x, "policy", JSON_OBJECT);
		pop(&v, at);
	}
	member(&v, flow, "inputs_schema", JSON_OBJECT);
	if ((x = member(&v, flow, "graph", JSON_OBJECT)))
		check_graph(&v, x);
	if ((x = member(&v, flow, "metadata", JSON_OBJECT))) {
		const json_t *g;

		at = push(&v, "metadata");
		g = member(&v, x, "generated_at", JSON_STRING);
		member(&v, x, "source_file", JSON_STRING);
		if (g && json_string_length(g) && !pmbot_apply_time_valid(json_string_value(g))) {
			size_t at2 = push(&v, "generated_at");

			add(&v, "FLOW_TIMESTAMP", "'%s' is not an RFC 3339 UTC timestamp",
				json_string_value(g));
			pop(&v, at2);
		}
		pop(&v, at);
	}
done:
	pmbot_buf_free(&v.path);
	if (v.oom)
		return PMBOT_ERROR;
	return diags->errors > errors ? PMBOT_EINVALID : PMBOT_OK;
}
