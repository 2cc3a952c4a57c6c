#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmbot/array.h"
#include "pmbot/json.h"
#include "pmbot/operation.h"
#include "pmbot/plan.h"

#include "plan_int.h"
#include "pmbot/banned.h"

/*
 * The planner compares what the WorkGraph wants with what the state holds
 * and emits one changeset per real difference. Items pm-bot manages are
 * named by stable_id in every changeset, never by number, so a plan stays
 * byte-identical while a resumed apply fills numbers in.
 */


/* The body field of a managed issue the planner reads: its declared blockers. */
#define BLOCKED_BY "Blocked by"

/* Project fields pm-bot fills, and the node member each takes its value from. */
#define N_PROJECT_FIELDS 6
static const struct {
	const char *field;
	const char *member;
} project_fields[] = {
	{ "Area", "area" },
	{ "Priority", "priority" },
	{ "Size", "size" },
	{ "Estimate (hrs)", "estimate_hrs" },
	{ "Risk", "risk" },
	{ "Status", "status" },
};
_Static_assert(sizeof(project_fields) / sizeof(project_fields[0]) == N_PROJECT_FIELDS,
	"N_PROJECT_FIELDS counts project_fields");

struct managed {
	const pmbot_issue *issue;
	char *ref;         /* owned */
	char *stable_id;   /* owned */
	pmbot_body body;   /* owned: the issue body, parsed once */
	const pmbot_pitem *item; /* its project item (borrowed), NULL when none */
	int ambiguous;
	int seen;          /* the graph has this stable_id */
};

struct planner {
	const pmbot_plan_input *in;
	pmbot_diag_list *diags;
	pmbot_plan_acc acc;         /* changesets, fingerprint, denied counts, errors */
	pmbot_strmap managed;       /* stable_id -> struct managed* (first claim) */
	pmbot_strmap by_ref;        /* issue ref -> struct managed* */
	struct managed *mslots;
	size_t n_mslots;
	struct managed **of_issue;  /* per state issue: its slot, NULL when not managed */
	/*
	 * Per graph node: `managed`'s slot for its id, or NULL: looked up once,
	 * not again for each parent, blocker and limit that names the node.
	 */
	struct managed **of_node;
	json_t *conflicts;
	json_t *orphaned;
	size_t *dep_first;          /* per node: offset of its blocker edges */
	size_t *dep_edges;
	int project_ok;             /* the configured project exists in the state */
	/* The state's field of each project_fields row (borrowed), or NULL: found once. */
	const pmbot_pfield *pfield[N_PROJECT_FIELDS];
	/* extra.unreadable of the state (issues a partial read hid; borrowed). */
	const json_t *unreadable;
	pmbot_strmap unreadable_ids; /* stable ids of hidden issues whose marker was read */
	int unproven;               /* a hidden target issue's marker is unknown: no create */
	/* extra.unsupported: GitHub there has no sub-issues / dependencies (GHES). */
	int no_sub_issues, no_dependencies;
	size_t skipped_parents, skipped_dependencies; /* changes left out for that */
	const pmbot_wg_node *target_node; /* the item `target` names */
	json_t *target;                   /* owned: see item_target() */
	/* Owned, made on first use, shared like `target`: see shared_unset(). */
	json_t *unset_value, *unset_parent, *on_board;
	pmbot_strmap field_payloads; /* owned key -> owned payload: see field_payload() */
	pmbot_jshare share;          /* the nodes' field values as jansson, shared */
};

static int op_index(const char *name)
{
	pmbot_operation op;

	return pmbot_operation_parse(&op, name) == PMBOT_OK ? (int)op : -1;
}

/* The operation table's row of a valid operation index. */
static const pmbot_operation_info *op_info(size_t i)
{
	return pmbot_operation_info_of((pmbot_operation)i);
}

static int node_diag(struct planner *p, const pmbot_wg_node *n, pmbot_severity sev,
	const char *code, const char *msg)
{
	if (sev == PMBOT_SEV_ERROR)
		p->acc.errors++;
	return pmbot_diag_add(p->diags, sev, code, n->file, n->source_path ? n->source_path : "",
		n->line, 0, "%s", msg);
}

static int issue_diag(struct planner *p, const char *ref, pmbot_severity sev,
	const char *code, const char *msg)
{
	if (sev == PMBOT_SEV_ERROR)
		p->acc.errors++;
	return pmbot_diag_add(p->diags, sev, code, ref, "", 0, 0, "%s", msg);
}

int pmbot_plan_acc_touch(pmbot_plan_acc *acc, const char *ref)
{
	const pmbot_issue *is = pmbot_state_issue(acc->state, ref);
	char *key;
	int r;

	if (!is || pmbot_strmap_get(&acc->touched, ref, NULL))
		return 0;
	if (!(key = strdup(ref)))
		return -1;
	if ((r = pmbot_strmap_put(&acc->touched, key, (void *)is, NULL)) != 0) {
		free(key);
		return r < 0 ? -1 : 0;
	}
	return 0;
}

static int touch(struct planner *p, const char *ref)
{
	return pmbot_plan_acc_touch(&p->acc, ref);
}

static const char *managed_ref(struct planner *p, const char *stable_id)
{
	void *v = NULL;

	if (!pmbot_strmap_get(&p->managed, stable_id, &v))
		return NULL;
	return ((struct managed *)v)->ambiguous ? NULL : ((struct managed *)v)->ref;
}

/* managed_ref() of a node of the graph. */
static const char *node_ref(struct planner *p, const pmbot_wg_node *n)
{
	const struct managed *m = p->of_node[n - p->in->graph->nodes];

	return m && !m->ambiguous ? m->ref : NULL;
}

/*
 * The issues the backend could not fully read (state extra.unreadable,
 * docs/state.md): one ISSUE_UNREADABLE warning each. A hidden issue whose
 * marker was read is that item, left alone; one in the target whose marker
 * could not be read may be any item, so no item of the target can be proven
 * absent and none is created. 0 or -1.
 */
static int index_unreadable(struct planner *p)
{
	const json_t *e;
	size_t i;

	p->unreadable = json_object_get(p->in->state->extra, "unreadable");
	if (!json_is_array(p->unreadable))
		p->unreadable = NULL;
	json_array_foreach(p->unreadable, i, e) {
		const char *repo = json_string_value(json_object_get(e, "repo"));
		const char *ref = json_string_value(json_object_get(e, "ref"));
		const char *sid = json_string_value(json_object_get(e, "stable_id"));
		const json_t *fields = json_object_get(e, "fields"), *f;
		pmbot_buf names = PMBOT_BUF_INIT;
		size_t k;
		int r;

		if (!repo)
			continue;
		json_array_foreach(fields, k, f)
			pmbot_buf_printf(&names, "%s%s", k ? ", " : "",
				json_is_string(f) ? json_string_value(f) : "?");
		if (sid)
			r = pmbot_diag_add(p->diags, PMBOT_SEV_WARNING, "ISSUE_UNREADABLE", ref ? ref : repo,
				"", 0, 0, "%s (item '%s') could not be fully read (%s: FORBIDDEN); it is "
				"left alone", ref ? ref : "an issue", sid, names.len ? names.buf : "fields");
		else
			r = pmbot_diag_add(p->diags, PMBOT_SEV_WARNING, "ISSUE_UNREADABLE", ref ? ref : repo,
				"", 0, 0, "%s of %s could not be fully read (%s: FORBIDDEN); it is left "
				"alone%s", ref ? ref : "an issue", repo, names.len ? names.buf : "fields",
				strcasecmp(repo, p->in->target) ? "" :
				", and its marker is unknown, so no new issue is created in this repository");
		pmbot_buf_free(&names);
		if (r < 0)
			return -1;
		if (strcasecmp(repo, p->in->target))
			continue;
		if (!sid)
			p->unproven = 1;
		else if (pmbot_strmap_put(&p->unreadable_ids, sid, NULL, NULL) < 0)
			return -1;
	}
	return 0;
}

/* extra.unsupported: the features the backend found missing (docs/state.md). */
static void index_unsupported(struct planner *p)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(p->in->state->extra, "unsupported"), i, v) {
		const char *f = json_string_value(v);

		if (f && !strcmp(f, "sub_issues"))
			p->no_sub_issues = 1;
		else if (f && !strcmp(f, "dependencies"))
			p->no_dependencies = 1;
	}
}

/* One warning per unsupported feature that left changes out. 0 or -1. */
static int unsupported_diags(struct planner *p)
{
	if (p->skipped_parents &&
	    pmbot_diag_add(p->diags, PMBOT_SEV_WARNING, "SUB_ISSUES_UNSUPPORTED", NULL, "", 0, 0,
		"%s has no sub-issues (GitHub Enterprise Server up to 3.21): %zu parent link%s "
		"not planned", p->in->target, p->skipped_parents, p->skipped_parents == 1 ? " is" : "s are") < 0)
		return -1;
	if (p->skipped_dependencies &&
	    pmbot_diag_add(p->diags, PMBOT_SEV_WARNING, "DEPENDENCIES_UNSUPPORTED", NULL, "", 0, 0,
		"%s has no issue dependencies: %zu dependency change%s not planned", p->in->target,
		p->skipped_dependencies, p->skipped_dependencies == 1 ? " is" : "s are") < 0)
		return -1;
	return 0;
}

/*
 * extra.narrow_missed (docs/state.md): marked issues the GitHub backend's
 * filtered read (issues created by pm-bot's login) did not return, found
 * by the complete scan that proved absence before a create. They are in
 * the state and planned as usual; the warning says why reads cost more
 * and names who created each. 0 or -1.
 */
#define NARROW_MISSED_NAMED 10

static int narrow_missed_diags(struct planner *p)
{
	const json_t *missed = json_object_get(p->in->state->extra, "narrow_missed"), *e;
	size_t i;

	json_array_foreach(missed, i, e) {
		const char *ref = json_string_value(json_object_get(e, "ref"));
		const char *author = json_string_value(json_object_get(e, "author"));
		const char *sid = json_string_value(json_object_get(e, "stable_id"));
		const char *repo = json_string_value(json_object_get(e, "repo"));

		if (!ref || !repo)
			continue;
		/* A filter that matches nothing of ours would name every issue: name a few, count the rest. */
		if (i == NARROW_MISSED_NAMED) {
			if (pmbot_diag_add(p->diags, PMBOT_SEV_WARNING, "NARROW_READ_MISSED", NULL, "", 0,
				0, "and %zu more issues were missing from GitHub's list of the issues %s "
				"created (each found by the scan, managed as usual)",
				json_array_size(missed) - i,
				p->in->self_login ? p->in->self_login : "pm-bot's login") < 0)
				return -1;
			break;
		}
		if (pmbot_diag_add(p->diags, PMBOT_SEV_WARNING, "NARROW_READ_MISSED", ref, "", 0, 0,
			"%s (item '%s', created by %s) was missing from GitHub's list of the issues "
			"%s created, so reading %s took a scan of every issue there; it is managed as "
			"usual. Issues that pm-bot's own login created are found without the scan",
			ref, sid ? sid : "?", author ? author : "?",
			p->in->self_login ? p->in->self_login : "pm-bot's login", repo) < 0)
			return -1;
	}
	return 0;
}

/* 1 when the issue `ref` is one the backend could not fully read. */
static int ref_unreadable(struct planner *p, const char *ref)
{
	const json_t *e;
	size_t i;

	json_array_foreach(p->unreadable, i, e) {
		const char *r = json_string_value(json_object_get(e, "ref"));

		if (r && !pmbot_issue_ref_cmp(r, ref))
			return 1;
	}
	return 0;
}

/*
 * 1 when the plan leaves item `stable_id` alone: its marker is claimed
 * twice, its issue could not be fully read, or it has no issue while an
 * unreadable one in the target might be it (a create could duplicate it).
 */
static int left_alone(struct planner *p, const char *stable_id)
{
	void *v = NULL;

	if (pmbot_strmap_get(&p->managed, stable_id, &v))
		return ((struct managed *)v)->ambiguous;
	if (pmbot_strmap_get(&p->unreadable_ids, stable_id, NULL))
		return 1;
	return p->unproven && pmbot_workgraph_find(p->in->graph, stable_id) != NULL;
}

/* left_alone() of a node of the graph. */
static int node_left_alone(struct planner *p, const pmbot_wg_node *n)
{
	const struct managed *m = p->of_node[n - p->in->graph->nodes];

	if (m)
		return m->ambiguous;
	if (pmbot_strmap_get(&p->unreadable_ids, n->stable_id, NULL))
		return 1;
	return p->unproven;
}

static json_t *pack2(const char *k1, json_t *v1, const char *k2, json_t *v2);

static json_t *binding(struct planner *p, const char *target)
{
	pmbot_buf repo = PMBOT_BUF_INIT;
	long number = 0;
	json_t *b = NULL;

	if (pmbot_workgraph_find(p->in->graph, target)) {
		b = pack2("repo", json_string(p->in->target), "stable_id", json_string(target));
	} else if (!strncmp(target, "https://github.com/", 19)) {
		/* https://github.com/OWNER/REPO/issues/N, checked by validation */
		const char *s = target + 19, *issues = strstr(s, "/issues/");

		if (issues && pmbot_buf_put(&repo, s, (size_t)(issues - s)) == 0) {
			number = strtol(issues + 8, NULL, 10);
			b = pack2("repo", json_string(repo.buf), "number", json_integer((json_int_t)number));
		}
	}
	pmbot_buf_free(&repo);
	return b;
}

/* The issue ref a binding names in the state now, or NULL. Caller frees. */
static char *binding_ref(struct planner *p, const json_t *b)
{
	const char *id = json_string_value(json_object_get(b, "stable_id"));
	pmbot_buf ref = PMBOT_BUF_INIT;

	if (id) {
		const char *r = managed_ref(p, id);

		return r ? strdup(r) : NULL;
	}
	if (pmbot_issue_ref(&ref, json_string_value(json_object_get(b, "repo")),
		(long)json_integer_value(json_object_get(b, "number"))) < 0) {
		pmbot_buf_free(&ref);
		return NULL;
	}
	return pmbot_buf_detach(&ref, NULL);
}

/* Append `"key":` and the canonical form of `v` to `b`, then `sep` (0: none). */
static int put_member(pmbot_buf *b, const char *key, const json_t *v, char sep)
{
	if (pmbot_json_quote(b, key, strlen(key)) < 0 || pmbot_buf_putc(b, ':') < 0 ||
	    pmbot_json_canonical(b, v) < 0)
		return -1;
	return sep ? pmbot_buf_putc(b, sep) : 0;
}

/*
 * Serialise what is particular to a changeset into `b` (cleared first):
 * its payload, its "after" and "before" members (each with a ','), its
 * target; `at` gets where the last two start. The canonical payload bytes
 * also give a hashed operation's key, with no second serialisation.
 */
static int record_parts(pmbot_buf *b, size_t at[2], const json_t *target,
	const json_t *payload, const json_t *before, const json_t *after)
{
	pmbot_buf_clear(b);
	if (pmbot_json_canonical(b, payload) < 0)
		return -1;
	at[0] = b->len;
	if ((after && put_member(b, "after", after, ',') < 0) ||
	    (before && put_member(b, "before", before, ',') < 0))
		return -1;
	at[1] = b->len;
	return pmbot_json_canonical(b, target);
}

/* The bytes of a record block; a larger record gets a block of its own. */
#define REC_BLOCK_SIZE (64 * 1024 - 64)

struct pmbot_plan_rec_block {
	struct pmbot_plan_rec_block *next;
	size_t used, size;
	char bytes[];
};

/* `n` bytes for a record from acc->recs, or NULL when out of memory. */
static char *rec_alloc(pmbot_plan_acc *acc, size_t n)
{
	struct pmbot_plan_rec_block *b = acc->recs;

	if (b && b->size - b->used >= n) {
		b->used += n;
		return b->bytes + b->used - n;
	}
	if (n > SIZE_MAX - sizeof(*b) ||
	    !(b = malloc(sizeof(*b) + (n > REC_BLOCK_SIZE ? n : REC_BLOCK_SIZE))))
		return NULL;
	b->size = n > REC_BLOCK_SIZE ? n : REC_BLOCK_SIZE;
	b->used = n;
	/* A large record's block goes behind the one being filled, which stays open. */
	if (n > REC_BLOCK_SIZE && acc->recs) {
		b->next = acc->recs->next;
		acc->recs->next = b;
	} else {
		b->next = acc->recs;
		acc->recs = b;
	}
	return b->bytes;
}

static void rec_blocks_free(pmbot_plan_acc *acc)
{
	while (acc->recs) {
		struct pmbot_plan_rec_block *next = acc->recs->next;

		free(acc->recs);
		acc->recs = next;
	}
}

/*
 * The record (plan_int.h) from the key and the parts in `b`, exactly its
 * size, so what a changeset keeps is its particular text and the pending
 * entry; the members every changeset spells the same way are written out
 * from the operation and `approval`.
 */
static int make_record(pmbot_plan_acc *acc, pmbot_plan_pending *pp, const char *key,
	size_t key_len, const pmbot_buf *b, const size_t at[2])
{
	size_t n = key_len + 1 + b->len;

	if (n > UINT32_MAX || !(pp->rec = rec_alloc(acc, n)))
		return -1;
	memcpy(pp->rec, key, key_len + 1);
	memcpy(pp->rec + key_len + 1, b->buf + at[0], at[1] - at[0]);
	memcpy(pp->rec + key_len + 1 + at[1] - at[0], b->buf, at[0]);
	memcpy(pp->rec + key_len + 1 + at[1], b->buf + at[1], b->len - at[1]);
	pp->payload_at = (uint32_t)(key_len + 1 + at[1] - at[0]);
	pp->target_at = (uint32_t)(key_len + 1 + at[1]);
	pp->end = (uint32_t)n;
	return 0;
}

/* Bytes pmbot_plan_pending_put() writes (with the ',' before the next one). */
static size_t pending_size(const pmbot_plan_pending *pp, const char *id)
{
	return pp->end - 1 + strlen(id) + strlen(op_info(pp->op)->name) +
		sizeof("{'changeset_id':'','idempotency_key':'','operation':'','payload':"
			",'requires_approval':false,'status':'proposed','target':},") - 1;
}

/* A string literal's bytes, its length known at compile time (no strlen per changeset). */
#define PUT_LIT(b, lit) pmbot_buf_put((b), (lit), sizeof(lit) - 1)

int pmbot_plan_pending_put(pmbot_buf *out, const pmbot_plan_pending *pp, const char *id)
{
	const char *name = op_info(pp->op)->name, *key = PMBOT_PLAN_PENDING_KEY(pp);
	size_t key_len = strlen(key), ab_at = key_len + 1;

	if (pmbot_buf_putc(out, '{') < 0 ||
	    pmbot_buf_put(out, pp->rec + ab_at, pp->payload_at - ab_at) < 0 ||
	    PUT_LIT(out, "\"changeset_id\":") < 0 ||
	    pmbot_json_quote(out, id, strlen(id)) < 0 ||
	    PUT_LIT(out, ",\"idempotency_key\":") < 0 ||
	    pmbot_json_quote(out, key, key_len) < 0 ||
	    PUT_LIT(out, ",\"operation\":") < 0 ||
	    pmbot_json_quote(out, name, strlen(name)) < 0 ||
	    PUT_LIT(out, ",\"payload\":") < 0 ||
	    pmbot_buf_put(out, pp->rec + pp->payload_at, pp->target_at - pp->payload_at) < 0 ||
	    (pp->approval ? PUT_LIT(out, ",\"requires_approval\":true") :
		PUT_LIT(out, ",\"requires_approval\":false")) < 0 ||
	    PUT_LIT(out, ",\"status\":\"proposed\",\"target\":") < 0 ||
	    pmbot_buf_put(out, pp->rec + pp->target_at, pp->end - pp->target_at) < 0)
		return -1;
	return pmbot_buf_putc(out, '}');
}

/*
 * Keep the changeset whose parts record_parts() left in acc->scratch (`at`
 * as it set it), on the item named by `repo` and `id` (NULL: issue
 * `number`): its idempotency key, record and, unless the plan is lean, the
 * tree `cs` (consumed; NULL in a lean plan). 0 or -1.
 */
static int acc_commit(pmbot_plan_acc *acc, int idx, const char *repo, const char *id,
	json_int_t number, const size_t at[2], json_t *cs)
{
	pmbot_buf *kb = &acc->key;
	char hash[PMBOT_SHA256_HEX_SIZE];
	pmbot_plan_pending pp;
	int err = -1;

	memset(&pp, 0, sizeof(pp));
	/* One buffer for every changeset's key, not an allocation each. */
	pmbot_buf_clear(kb);
	/* "OP:REPO:ID" or "OP:REPO:#N", then ":HASH12" for hashed operations. */
	if (pmbot_buf_puts(kb, op_info(idx)->name) < 0 || pmbot_buf_putc(kb, ':') < 0 ||
	    pmbot_buf_puts(kb, repo ? repo : "(null)") < 0 || pmbot_buf_putc(kb, ':') < 0)
		goto done;
	if (id ? pmbot_buf_puts(kb, id) < 0
	       : pmbot_buf_printf(kb, "#%" JSON_INTEGER_FORMAT, number) < 0)
		goto done;
	if (op_info(idx)->hashed) {
		/* pmbot_sha256_json(payload): the hash of these very bytes. */
		if (pmbot_sha256_hex(hash, acc->scratch.buf, at[0]) < 0 ||
		    pmbot_buf_putc(kb, ':') < 0 || pmbot_buf_put(kb, hash, 12) < 0)
			goto done;
	}
	if (make_record(acc, &pp, kb->buf, kb->len, &acc->scratch, at) < 0)
		goto done;
	if (cs && json_object_set_new(cs, "idempotency_key", json_string(kb->buf)) < 0)
		goto done;
	if (acc->n_cs == acc->alloc_cs) {
		size_t n = acc->alloc_cs ? acc->alloc_cs * 2 : 64;
		pmbot_plan_pending *np = realloc(acc->cs, n * sizeof(*np));

		if (!np)
			goto done;
		acc->cs = np;
		acc->alloc_cs = n;
	}
	pp.cs = cs;
	pp.op = idx;
	pp.approval = !pmbot_config_operation_auto_approved(acc->config, (pmbot_operation)idx);
	acc->cs[acc->n_cs++] = pp;
	cs = NULL;
	err = 0;
done:
	/* A record made for a changeset that failed stays in its block until acc_free. */
	json_decref(cs);
	return err;
}

int pmbot_plan_acc_add(pmbot_plan_acc *acc, const char *op, json_t *target, json_t *payload,
	json_t *before, json_t *after)
{
	int idx = op_index(op);
	const char *id = json_string_value(json_object_get(target, "stable_id"));
	size_t at[2];
	json_t *cs = NULL;
	int err = -1;

	if (!target || !payload || idx < 0)
		goto done;
	if (pmbot_config_operation_denied(acc->config, (pmbot_operation)idx)) {
		acc->denied[idx]++;
		err = 0;
		goto done;
	}
	if (record_parts(&acc->scratch, at, target, payload, before, after) < 0)
		goto done;
	if (!acc->lean) {
		if (!acc->op_names[idx] && !(acc->op_names[idx] = json_string(op_info(idx)->name)))
			goto done;
		if (!acc->proposed && !(acc->proposed = json_string("proposed")))
			goto done;
		/* Built member by member: json_pack's format parsing cost more than the object. */
		if (!(cs = json_object()) ||
		    json_object_set(cs, "operation", acc->op_names[idx]) < 0 ||
		    json_object_set(cs, "target", target) < 0 ||
		    json_object_set(cs, "payload", payload) < 0 ||
		    json_object_set_new(cs, "requires_approval", json_boolean(
			!pmbot_config_operation_auto_approved(acc->config, (pmbot_operation)idx))) < 0 ||
		    json_object_set(cs, "status", acc->proposed) < 0 ||
		    (before && json_object_set(cs, "before", before) < 0) ||
		    (after && json_object_set(cs, "after", after) < 0))
			goto done;
	}
	err = acc_commit(acc, idx, json_string_value(json_object_get(target, "repo")), id,
		json_integer_value(json_object_get(target, "number")), at, cs);
	cs = NULL;
done:
	json_decref(cs);
	json_decref(target);
	json_decref(payload);
	json_decref(before);
	json_decref(after);
	return err;
}

static int add_cs(struct planner *p, const char *op, json_t *target, json_t *payload,
	json_t *before, json_t *after)
{
	return pmbot_plan_acc_add(&p->acc, op, target, payload, before, after);
}

/*
 * A lean plan writes the changesets a first plan is made of (per item one
 * create_issue and one set_parent, and its add_dependency) as canonical
 * text straight into acc->scratch, in record_parts()'s layout, rather than
 * building a jansson payload per changeset and serialising it. Each writer
 * spells pmbot_json_canonical() of the tree the full plan builds for the
 * same change: keys in byte order, strings through pmbot_json_quote() as
 * the canonical writer quotes them. tests/unit/test_plan.c plans every case
 * both ways and compares the bytes.
 */

/* 1 when the config denies `op` (counted, like pmbot_plan_acc_add() does). */
static int text_denied(struct planner *p, pmbot_operation op)
{
	if (!pmbot_config_operation_denied(p->acc.config, op))
		return 0;
	p->acc.denied[op]++;
	return 1;
}

static int put_str(pmbot_buf *b, const char *s)
{
	return pmbot_json_quote(b, s, strlen(s));
}

/* {"repo":R,"stable_id":ID}: an item's target, a parent, a blocker. */
static int put_item(pmbot_buf *b, const char *repo, const char *id)
{
	int err = pmbot_buf_puts(b, "{\"repo\":");

	err |= put_str(b, repo);
	err |= pmbot_buf_puts(b, ",\"stable_id\":");
	err |= put_str(b, id);
	err |= pmbot_buf_putc(b, '}');
	return err < 0 ? -1 : 0;
}

/* A binding() as canonical text: {"repo","stable_id"} or {"number","repo"}. */
static int put_binding(pmbot_buf *b, const json_t *bind)
{
	const char *repo = json_string_value(json_object_get(bind, "repo"));
	const char *id = json_string_value(json_object_get(bind, "stable_id"));
	int err;

	if (!repo)
		return -1;
	if (id)
		return put_item(b, repo, id);
	err = pmbot_buf_puts(b, "{\"number\":");
	err |= pmbot_json_canonical(b, json_object_get(bind, "number"));
	err |= pmbot_buf_puts(b, ",\"repo\":");
	err |= put_str(b, repo);
	err |= pmbot_buf_putc(b, '}');
	return err < 0 ? -1 : 0;
}

/*
 * Keep the changeset `op` on item `n` whose payload ends at `at0` and whose
 * "after"/"before" members end at `at1` in acc->scratch: its target is
 * written after them. 0 or -1.
 */
static int add_text(struct planner *p, pmbot_operation op, const pmbot_wg_node *n,
	size_t at0, size_t at1)
{
	size_t at[2] = { at0, at1 };

	if (put_item(&p->acc.scratch, p->in->target, n->stable_id) < 0)
		return -1;
	return acc_commit(&p->acc, (int)op, p->in->target, n->stable_id, 0, at, NULL);
}

/* create_issue: {"body","issue_type" (when `type`),"labels","title"}. */
static int add_create_text(struct planner *p, const pmbot_wg_node *n,
	const pmbot_rendered_issue *r, const char *type)
{
	pmbot_buf *b = &p->acc.scratch;
	size_t i;
	int err;

	if (text_denied(p, PMBOT_OP_CREATE_ISSUE))
		return 0;
	pmbot_buf_clear(b);
	err = pmbot_buf_puts(b, "{\"body\":");
	err |= pmbot_json_quote(b, r->body, r->body_len);
	if (type) {
		err |= pmbot_buf_puts(b, ",\"issue_type\":");
		err |= put_str(b, type);
	}
	err |= pmbot_buf_puts(b, ",\"labels\":[");
	for (i = 0; i < r->n_labels; i++) {
		if (i)
			err |= pmbot_buf_putc(b, ',');
		err |= put_str(b, r->labels[i]);
	}
	err |= pmbot_buf_puts(b, "],\"title\":");
	err |= put_str(b, r->title);
	err |= pmbot_buf_putc(b, '}');
	if (err < 0)
		return -1;
	return add_text(p, PMBOT_OP_CREATE_ISSUE, n, b->len, b->len);
}

/* set_parent: {"parent":ITEM,"replace":B}, before {"parent":REF or null}. */
static int add_parent_text(struct planner *p, const pmbot_wg_node *n,
	const pmbot_wg_node *parent, const char *have)
{
	pmbot_buf *b = &p->acc.scratch;
	size_t at0;
	int err;

	if (text_denied(p, PMBOT_OP_SET_PARENT))
		return 0;
	pmbot_buf_clear(b);
	err = pmbot_buf_puts(b, "{\"parent\":");
	err |= put_item(b, p->in->target, parent->stable_id);
	err |= pmbot_buf_puts(b, have ? ",\"replace\":true}" : ",\"replace\":false}");
	at0 = b->len;
	err |= pmbot_buf_puts(b, "\"before\":{\"parent\":");
	err |= have ? put_str(b, have) : pmbot_buf_puts(b, "null");
	err |= pmbot_buf_puts(b, "},");
	if (err < 0)
		return -1;
	return add_text(p, PMBOT_OP_SET_PARENT, n, at0, b->len);
}

/*
 * add_dependency: {"blocker":BINDING}, the binding `bind`, or a blocker in
 * the graph named by its `id` (binding() of it, with no tree made).
 */
static int add_dependency_text(struct planner *p, const pmbot_wg_node *n, const json_t *bind,
	const char *id)
{
	pmbot_buf *b = &p->acc.scratch;
	int err;

	if (text_denied(p, PMBOT_OP_ADD_DEPENDENCY))
		return 0;
	pmbot_buf_clear(b);
	err = pmbot_buf_puts(b, "{\"blocker\":");
	err |= id ? put_item(b, p->in->target, id) : put_binding(b, bind);
	err |= pmbot_buf_putc(b, '}');
	if (err < 0)
		return -1;
	return add_text(p, PMBOT_OP_ADD_DEPENDENCY, n, b->len, b->len);
}

static int has_string(char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return 1;
	return 0;
}

int pmbot_plan_label_owned(const pmbot_label_scheme *s, const char *label)
{
	const char *prefixes[5] = { s->type, s->area, s->prio, s->size, s->status };
	size_t i;

	if (!strcasecmp(label, PMBOT_LABEL_NEEDS_HUMAN))
		return 1;
	for (i = 0; i < 5; i++)
		if (prefixes[i] && *prefixes[i] && !strncasecmp(label, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

static int index_managed(struct planner *p)
{
	const pmbot_state *st = p->in->state;
	const pmbot_pitem **items = NULL;
	pmbot_buf ref = PMBOT_BUF_INIT;
	size_t i;
	int err = -1;

	if (pmbot_state_items_by_issue(&items, st) < 0 ||
	    !(p->mslots = calloc(st->n_issues ? st->n_issues : 1, sizeof(*p->mslots))) ||
	    !(p->of_issue = calloc(st->n_issues ? st->n_issues : 1, sizeof(*p->of_issue))))
		goto done;
	/*
	 * Every issue may be managed: sized once, the maps are not rebuilt at
	 * each doubling, whose freed tables the next, larger one never fits.
	 */
	if (pmbot_strmap_reserve(&p->by_ref, st->n_issues) < 0 ||
	    pmbot_strmap_reserve(&p->managed, st->n_issues) < 0)
		goto done;
	for (i = 0; i < st->n_issues; i++) {
		const pmbot_issue *is = &st->issues[i];
		pmbot_body body;
		struct managed *m;
		void *prev = NULL;
		int trusted;

		if (strcasecmp(is->repo, p->in->target))
			continue;
		memset(&body, 0, sizeof(body));
		/* The marker and the one field the planner reads back (declared_blockers()). */
		if (pmbot_body_parse_only(&body, is->body, strlen(is->body), NULL, BLOCKED_BY) < 0)
			goto done;
		if (body.marker != PMBOT_MARKER_OK) {
			pmbot_body_free(&body);
			continue;
		}
		pmbot_buf_clear(&ref);
		if (pmbot_issue_ref(&ref, is->repo, is->number) < 0)
			goto done;
		trusted = pmbot_plan_author_trusted(p->in->config, p->in->self_login, is);
		if (!trusted) {
			if (pmbot_plan_diag_untrusted(&p->acc, ref.buf, body.stable_id, is->author) < 0) {
				pmbot_body_free(&body);
				goto done;
			}
			pmbot_body_free(&body);
			continue;
		}
		m = &p->mslots[p->n_mslots];
		m->issue = is;
		m->item = items[i];
		m->ref = pmbot_buf_detach(&ref, NULL);
		m->stable_id = strdup(body.stable_id);
		if (!m->ref || !m->stable_id) {
			free(m->ref);
			free(m->stable_id);
			pmbot_body_free(&body);
			goto done;
		}
		m->body = body;
		memset(&body, 0, sizeof(body));
		p->n_mslots++;
		p->of_issue[i] = m;
		if (pmbot_strmap_put(&p->by_ref, m->ref, m, NULL) < 0) {
			pmbot_body_free(&body);
			goto done;
		}
		switch (pmbot_strmap_put(&p->managed, m->stable_id, m, &prev)) {
		case -1:
			pmbot_body_free(&body);
			goto done;
		case 1: {
			struct managed *first = prev;

			m->ambiguous = 1;
			if (!first->ambiguous) {
				first->ambiguous = 1;
				if (pmbot_plan_diag_duplicate(&p->acc, m->stable_id, first->ref, m->ref) < 0) {
					pmbot_body_free(&body);
					goto done;
				}
			}
			break;
		}
		}
		pmbot_body_free(&body);
	}
	err = 0;
done:
	free(items);
	pmbot_buf_free(&ref);
	return err;
}

/* Each node's managed slot (of_node): one lookup a node. */
static int index_nodes(struct planner *p)
{
	const pmbot_workgraph *g = p->in->graph;
	size_t i;

	if (!(p->of_node = calloc(g->n_nodes ? g->n_nodes : 1, sizeof(*p->of_node))))
		return -1;
	for (i = 0; i < g->n_nodes; i++) {
		void *v = NULL;

		if (pmbot_strmap_get(&p->managed, g->nodes[i].stable_id, &v))
			p->of_node[i] = v;
	}
	return 0;
}

/* Blocker targets (depends_on and blocked_by) of each node, as edge indices. */
static int index_dependencies(struct planner *p)
{
	const pmbot_workgraph *g = p->in->graph;
	size_t i, *fill;

	p->dep_first = calloc(g->n_nodes + 1, sizeof(*p->dep_first));
	p->dep_edges = malloc((g->n_edges ? g->n_edges : 1) * sizeof(*p->dep_edges));
	fill = calloc(g->n_nodes + 1, sizeof(*fill));
	if (!p->dep_first || !p->dep_edges || !fill) {
		free(fill);
		return -1;
	}
	for (i = 0; i < g->n_edges; i++) {
		const pmbot_wg_node *n = pmbot_workgraph_edge_from(g, &g->edges[i]);

		if (n && g->edges[i].type != PMBOT_EDGE_PARENT_CHILD &&
		    g->edges[i].type != PMBOT_EDGE_RELATED)
			p->dep_first[(size_t)(n - g->nodes) + 1]++;
	}
	for (i = 0; i < g->n_nodes; i++)
		p->dep_first[i + 1] += p->dep_first[i];
	for (i = 0; i < g->n_edges; i++) {
		const pmbot_wg_node *n = pmbot_workgraph_edge_from(g, &g->edges[i]);
		size_t k;

		if (!n || g->edges[i].type == PMBOT_EDGE_PARENT_CHILD ||
		    g->edges[i].type == PMBOT_EDGE_RELATED)
			continue;
		k = (size_t)(n - g->nodes);
		p->dep_edges[p->dep_first[k] + fill[k]++] = i;
	}
	free(fill);
	return 0;
}

/*
 * The target of a changeset on item `n`: a new reference to one object
 * shared by all of the item's changesets (an item has up to a dozen; no
 * one changes a planned target), NULL when out of memory.
 */
/*
 * {k1: v1} or {k1: v1, k2: v2} (k2 NULL: one member), consuming the values
 * whatever happens; NULL when a value is NULL or memory runs out. The
 * planner's small payloads, without json_pack's format parsing (a large
 * plan builds a hundred thousand of them).
 */
static json_t *pack2(const char *k1, json_t *v1, const char *k2, json_t *v2)
{
	json_t *o = NULL, *ret = NULL;
	int r;

	if (!v1 || (k2 && !v2) || !(o = json_object()))
		goto done;
	/* json_object_set_new() consumes its value even when it fails. */
	r = json_object_set_new(o, k1, v1);
	v1 = NULL;
	if (r < 0)
		goto done;
	if (k2) {
		r = json_object_set_new(o, k2, v2);
		v2 = NULL;
		if (r < 0)
			goto done;
	}
	ret = o;
	o = NULL;
done:
	json_decref(o);
	json_decref(v1);
	json_decref(v2);
	return ret;
}

/*
 * A new reference to {`key`: null} kept in `*slot`: the "before" of a value
 * that is not set yet, the same object for every changeset of the plan
 * that has it (tens of thousands in a first plan). NULL when out of memory.
 */
static json_t *shared_unset(json_t **slot, const char *key)
{
	if (!*slot && !(*slot = pack2(key, json_null(), NULL, NULL)))
		return NULL;
	return json_incref(*slot);
}

/*
 * A new reference to the set_project_field payload {"field": `field`,
 * "value": `value`}, one object per distinct pair in the plan (a board
 * has a few dozen options; a first plan sets tens of thousands of values).
 * Consumes `value`; NULL when it is NULL or memory runs out.
 */
static json_t *field_payload(struct planner *p, const char *field, json_t *value)
{
	pmbot_buf key = PMBOT_BUF_INIT;
	json_t *o = NULL, *made = NULL;
	void *v = NULL;
	char *k = NULL;

	if (!value)
		return NULL;
	/* Canonical text holds no raw newline, so the key names the pair exactly. */
	if (pmbot_buf_puts(&key, field) < 0 || pmbot_buf_putc(&key, '\n') < 0 ||
	    pmbot_json_canonical(&key, value) < 0)
		goto done;
	if (pmbot_strmap_get(&p->field_payloads, key.buf, &v)) {
		o = json_incref((json_t *)v);
		goto done;
	}
	if (!(made = pack2("field", json_string(field), "value", json_incref(value))) ||
	    !(k = pmbot_buf_detach(&key, NULL)) ||
	    pmbot_strmap_put(&p->field_payloads, k, made, NULL) != 0)
		goto done;
	k = NULL;
	o = json_incref(made);
	made = NULL;
done:
	free(k);
	json_decref(made);
	json_decref(value);
	pmbot_buf_free(&key);
	return o;
}

static json_t *item_target(struct planner *p, const pmbot_wg_node *n)
{
	if (p->target_node != n || !p->target) {
		json_decref(p->target);
		p->target_node = n;
		if (!(p->target = pack2("repo", json_string(p->in->target), "stable_id",
			json_string(n->stable_id))))
			return NULL;
	}
	return json_incref(p->target);
}

/*
 * The issue type named like the type of `n` (its name, not its label),
 * ASCII case-insensitively, among the types the state lists for
 * the target (extra.issue_types, docs/state.md): borrowed, NULL when there
 * is none or issue_types is off.
 */
static const char *wanted_type(struct planner *p, const pmbot_wg_node *n)
{
	const char *prefix = p->in->config->labels.type, *key, *kind = n->type_name;
	const json_t *types = NULL, *v;
	size_t i;

	/* The node's type, not its label: a form's "type:bench" still means Benchmark. */
	if (!p->in->config->issue_types || !prefix || !*prefix)
		return NULL;
	json_object_foreach((json_t *)json_object_get(p->in->state->extra, "issue_types"), key, v)
		if (!strcasecmp(key, p->in->target))
			types = v;
	json_array_foreach(types, i, v)
		if (kind && json_is_string(v) && !strcasecmp(json_string_value(v), kind))
			return json_string_value(v);
	return NULL;
}

/*
 * An existing issue whose type is not its kind's gets it set: the report
 * wins over a person's change, as for the title (docs/github.md#issue-types).
 * A kind the repository has no type for changes nothing.
 */
static int plan_issue_type(struct planner *p, const pmbot_wg_node *n, const pmbot_issue *is,
	const pmbot_rendered_issue *r)
{
	const char *want = wanted_type(p, n);

	if (!want || (is->issue_type && !strcasecmp(is->issue_type, want)))
		return 0;
	return add_cs(p, "set_issue_type", item_target(p, n), json_pack("{s:s}", "issue_type", want),
		is->issue_type ? json_pack("{s:s}", "issue_type", is->issue_type) :
		json_pack("{s:n}", "issue_type"), NULL);
}

static int plan_content(struct planner *p, const pmbot_wg_node *n, const struct managed *m,
	const pmbot_rendered_issue *r)
{
	const pmbot_issue *is = m ? m->issue : NULL;
	const pmbot_label_scheme *scheme = &p->in->config->labels;
	char rev[PMBOT_SHA256_HEX_SIZE];
	size_t i, j, body_len;
	int err = -1;
	json_t *add = NULL, *remove = NULL;

	if (!is) {
		const char *type = wanted_type(p, n);
		json_t *payload;

		if (p->acc.lean)
			return add_create_text(p, n, r, type);
		payload = json_pack("{s:s, s:s%, s:o}", "title", r->title, "body", r->body,
			r->body_len, "labels", pmbot_json_strings(r->labels, r->n_labels));

		/*
		 * The issue type by the item's type name: its label may be a form's
		 * own ("type:bench"), which names no type the repository has.
		 */
		if (payload && type &&
		    json_object_set_new(payload, "issue_type", json_string(type)) < 0) {
			json_decref(payload);
			return -1;
		}
		return add_cs(p, "create_issue", item_target(p, n), payload, NULL, NULL);
	}
	if (strcmp(is->title, r->title) &&
	    add_cs(p, "update_issue_title", item_target(p, n), json_pack("{s:s}", "title", r->title),
		json_pack("{s:s}", "title", is->title), json_pack("{s:s}", "title", r->title)) < 0)
		goto done;
	/*
	 * A human edited the body since pm-bot wrote it: report, never
	 * overwrite. Unless the reports now say exactly what the person wrote:
	 * then nothing conflicts, and the body update below only adopts it
	 * (a new marker rev; not one character of theirs changes).
	 * A body that is byte for byte the rendered one hashes to r->rev (the
	 * renderer writes the rev of what it renders), so it neither conflicts
	 * nor changes: the hash of the unchanged bodies of a large plan is
	 * skipped.
	 */
	body_len = strlen(is->body);
	if (body_len == r->body_len && !memcmp(is->body, r->body, body_len)) {
		/* nothing: the body is pm-bot's own, unchanged */
	} else if (pmbot_body_rev(rev, is->body, body_len) < 0) {
		goto done;
	} else if (strcmp(rev, m->body.rev) && strcmp(rev, r->rev)) {
		if (json_array_append_new(p->conflicts, json_pack("{s:s, s:s, s:s, s:s, s:s}",
			"stable_id", n->stable_id, "ref", m->ref, "reason", "body_edited",
			"expected_rev", m->body.rev, "actual_rev", rev)) < 0)
			goto done;
	} else if (strcmp(is->body, r->body) &&
		   add_cs(p, "update_issue_body", item_target(p, n),
			json_pack("{s:s%}", "body", r->body, r->body_len),
			json_pack("{s:s}", "body", is->body),
			json_pack("{s:s%}", "body", r->body, r->body_len)) < 0) {
		goto done;
	}
	/*
	 * Both label lists are sorted by bytes without repeats (pmbot/state.h,
	 * pmbot/render.h): one walk of the two finds the rendered labels the
	 * issue lacks, in order, and the issue's labels the rendering has not.
	 * The arrays are made at the first difference: most issues have none.
	 */
	for (i = j = 0; i < r->n_labels || j < is->n_labels;) {
		int c = i == r->n_labels ? 1 : j == is->n_labels ? -1 :
			strcmp(r->labels[i], is->labels[j]);

		if (c < 0 && ((!add && !(add = json_array())) ||
			      json_array_append_new(add, json_string(r->labels[i])) < 0))
			goto done;
		if (c > 0 && pmbot_plan_label_owned(scheme, is->labels[j]) &&
		    ((!remove && !(remove = json_array())) ||
		     json_array_append_new(remove, json_string(is->labels[j])) < 0))
			goto done;
		i += c <= 0;
		j += c >= 0;
	}
	if (json_array_size(add) && add_cs(p, "add_labels", item_target(p, n),
		json_pack("{s:O}", "labels", add), NULL, NULL) < 0)
		goto done;
	if (json_array_size(remove) && add_cs(p, "remove_labels", item_target(p, n),
		json_pack("{s:O}", "labels", remove), NULL, NULL) < 0)
		goto done;
	if (plan_issue_type(p, n, is, r) < 0)
		goto done;
	err = 0;
done:
	json_decref(add);
	json_decref(remove);
	return err;
}

static int plan_parent(struct planner *p, const pmbot_wg_node *n, const struct managed *m)
{
	const pmbot_wg_node *parent = pmbot_workgraph_parent(p->in->graph, n);
	const char *want;
	const char *have = m ? m->issue->parent : NULL;

	if (!parent)
		return 0; /* a parent set by hand on a root item is not pm-bot's */
	if (node_left_alone(p, parent))
		return 0;
	/* The current parent could not be read: moving the item off it is not ours to do. */
	if (have && ref_unreadable(p, have))
		return 0;
	want = node_ref(p, parent);
	if (m && want && have && !strcmp(want, have))
		return 0;
	if (p->no_sub_issues) {
		p->skipped_parents++;
		return 0;
	}
	if (want && touch(p, want) < 0)
		return -1;
	if (have && touch(p, have) < 0)
		return -1;
	if (p->acc.lean)
		return add_parent_text(p, n, parent, have);
	return add_cs(p, "set_parent", item_target(p, n),
		json_pack("{s:{s:s, s:s}, s:b}", "parent", "repo", p->in->target, "stable_id",
			parent->stable_id, "replace", have != NULL),
		have ? json_pack("{s:s}", "parent", have) : shared_unset(&p->unset_parent, "parent"),
		NULL);
}

/* "a, b, c" under "Blocked by" in the body pm-bot last wrote: its own edges. */
static int declared_blockers(char ***out, size_t *n_out, const pmbot_body *body)
{
	const char *v = pmbot_body_get(body, BLOCKED_BY), *s;
	char **list = NULL;
	size_t n = 0, alloc = 0;

	*out = NULL;
	*n_out = 0;
	for (s = v; s && *s;) {
		const char *end = strstr(s, ", ");
		size_t len = end ? (size_t)(end - s) : strlen(s);
		char **nl = pmbot_array_grow(list, &alloc, n + 1, sizeof(*nl));

		if (!nl || !(nl[n] = strndup(s, len))) {
			list = nl ? nl : list;
			while (n)
				free(list[--n]);
			free(list);
			return -1;
		}
		list = nl;
		n++;
		s = end ? end + 2 : s + len;
	}
	*out = list;
	*n_out = n;
	return 0;
}

static int plan_dependencies(struct planner *p, const pmbot_wg_node *n, const struct managed *m,
	int conflicted)
{
	const pmbot_workgraph *g = p->in->graph;
	size_t k = (size_t)(n - g->nodes), i;
	char **declared = NULL;
	size_t n_declared = 0;
	pmbot_buf msg = PMBOT_BUF_INIT;
	size_t count = 0;
	int err = -1;

	for (i = p->dep_first[k]; i < p->dep_first[k + 1]; i++) {
		const pmbot_wg_edge *e = &g->edges[p->dep_edges[i]];
		const pmbot_wg_node *to = pmbot_workgraph_edge_to(g, e);
		json_t *b = NULL;
		char *url_ref = NULL;
		const char *ref;
		size_t j;
		int dup = 0, skip;

		/*
		 * A blocker in the graph: its ref is its node's, and its binding
		 * is made only for a changeset (most dependencies exist already).
		 * An issue URL's ref is read from its binding.
		 */
		if (to) {
			ref = node_ref(p, to);
		} else {
			if (!(b = binding(p, e->to_id)))
				goto done;
			ref = url_ref = binding_ref(p, b);
		}
		/* A blocker that is left alone (claimed twice, unreadable) stays so here too. */
		skip = to ? node_left_alone(p, to) : left_alone(p, e->to_id);
		/* depends_on and blocked_by may name the same blocker twice. */
		for (j = p->dep_first[k]; j < i && !skip; j++)
			dup |= !strcmp(g->edges[p->dep_edges[j]].to_id, e->to_id);
		if (!skip && !dup) {
			count++;
			skip = (m && ref && has_string(m->issue->blocked_by, m->issue->n_blocked_by, ref)) ||
			       (ref && ref_unreadable(p, ref));
			if (!skip && ref && touch(p, ref) < 0) {
				free(url_ref);
				json_decref(b);
				goto done;
			}
		}
		free(url_ref);
		if (skip || dup) {
			json_decref(b);
			continue;
		}
		if (p->no_dependencies) {
			p->skipped_dependencies++;
			json_decref(b);
			continue;
		}
		if (p->acc.lean && to) {
			if (add_dependency_text(p, n, NULL, e->to_id) < 0)
				goto done;
			continue;
		}
		if (!b && !(b = binding(p, e->to_id)))
			goto done;
		if (p->acc.lean) {
			int r = add_dependency_text(p, n, b, NULL);

			json_decref(b);
			if (r < 0)
				goto done;
		} else if (add_cs(p, "add_dependency", item_target(p, n),
			json_pack("{s:o}", "blocker", b), NULL, NULL) < 0) {
			goto done;
		}
	}
	if (m && !conflicted && !p->no_dependencies) {
		if (declared_blockers(&declared, &n_declared, &m->body) < 0)
			goto done;
		for (i = 0; i < n_declared; i++) {
			size_t j;
			int wanted = 0;
			json_t *b;
			char *ref;

			for (j = p->dep_first[k]; j < p->dep_first[k + 1]; j++)
				wanted |= !strcmp(g->edges[p->dep_edges[j]].to_id, declared[i]);
			if (wanted)
				continue;
			/* A stable id no longer in the graph is bound through its marker. */
			if (!strncmp(declared[i], "https://github.com/", 19) ||
			    pmbot_workgraph_find(g, declared[i]))
				b = binding(p, declared[i]);
			else
				b = json_pack("{s:s, s:s}", "repo", p->in->target, "stable_id", declared[i]);
			if (!b)
				continue;
			ref = binding_ref(p, b);
			if (!ref || !has_string(m->issue->blocked_by, m->issue->n_blocked_by, ref)) {
				free(ref);
				json_decref(b);
				continue;
			}
			if (pmbot_config_operation_denied(p->in->config, PMBOT_OP_REMOVE_DEPENDENCY)) {
				/* The new body no longer declares the edge: say it stays, unmanaged. */
				pmbot_buf_clear(&msg);
				pmbot_buf_printf(&msg, "'%s' stays blocked by %s (%s): removing dependencies "
					"is denied, and once the new body is written pm-bot no longer manages "
					"that edge; remove it by hand", n->stable_id, declared[i], ref);
				free(ref);
				json_decref(b);
				if (node_diag(p, n, PMBOT_SEV_WARNING, "DEPENDENCY_KEPT", msg.buf) < 0)
					goto done;
				continue;
			}
			if (touch(p, ref) < 0) {
				free(ref);
				json_decref(b);
				goto done;
			}
			free(ref);
			if (add_cs(p, "remove_dependency", item_target(p, n), json_pack("{s:o}", "blocker", b),
				NULL, NULL) < 0)
				goto done;
		}
	}
	if (count > 50) {
		pmbot_buf_printf(&msg, "'%s' would be blocked by %zu issues; GitHub allows 50",
			n->stable_id, count);
		if (node_diag(p, n, PMBOT_SEV_ERROR, "LIMIT_DEPENDENCIES", msg.buf) < 0)
			goto done;
	}
	err = 0;
done:
	for (i = 0; i < n_declared; i++)
		free(declared[i]);
	free(declared);
	pmbot_buf_free(&msg);
	return err;
}

int pmbot_plan_field_value(json_t **out, const pmbot_pfield *f, const json_t *want,
	pmbot_buf *msg)
{
	size_t k;

	*out = NULL;
	switch (f->type) {
	case PMBOT_PFIELD_SINGLE_SELECT:
		if (!json_is_string(want))
			return 0;
		for (k = 0; k < f->n_options; k++)
			if (!strcasecmp(f->options[k].name, json_string_value(want)))
				break;
		if (k == f->n_options) {
			pmbot_buf_clear(msg);
			pmbot_buf_printf(msg, "the project field '%s' has no option '%s'; it has:",
				f->name, json_string_value(want));
			for (k = 0; k < f->n_options; k++)
				pmbot_buf_printf(msg, "%s '%s'", k ? "," : "", f->options[k].name);
			if (!f->n_options)
				pmbot_buf_puts(msg, " none");
			return PMBOT_ENOTFOUND;
		}
		*out = json_string(f->options[k].name);
		break;
	case PMBOT_PFIELD_NUMBER:
		if (!json_is_number(want))
			return 0;
		*out = json_real(json_number_value(want));
		break;
	case PMBOT_PFIELD_TEXT:
	case PMBOT_PFIELD_DATE:
		if (!json_is_string(want))
			return 0;
		*out = json_incref((json_t *)want);
		break;
	}
	return *out ? 0 : PMBOT_ERROR;
}

int pmbot_plan_field_same(const json_t *have, const json_t *value)
{
	return have && (json_is_number(have) && json_is_number(value)
		? json_number_value(have) == json_number_value(value)
		: json_equal(have, value));
}

/*
 * 1 when the item's `have` already is what `v` sets on `f`, as
 * pmbot_plan_field_value() and pmbot_plan_field_same() would find, with no
 * value made: a plan with nothing to do asks this for every field of every
 * item. 0 sends the caller the long way, which also names an unknown option.
 */
static int field_unchanged(const pmbot_pfield *f, const pmbot_jnode *v, const json_t *have)
{
	const char *s = NULL;
	size_t len = 0, k;

	if (!have)
		return 0;
	switch (f->type) {
	case PMBOT_PFIELD_SINGLE_SELECT:
		if (v->type != PMBOT_JSTRING)
			return 0;
		for (k = 0; k < f->n_options && !s; k++)
			if (!strcasecmp(f->options[k].name, v->v.s))
				s = f->options[k].name, len = strlen(s);
		break;
	case PMBOT_PFIELD_NUMBER:
		return json_is_number(have) &&
		       ((v->type == PMBOT_JINTEGER && (double)v->v.i == json_number_value(have)) ||
			(v->type == PMBOT_JREAL && v->v.r == json_number_value(have)));
	case PMBOT_PFIELD_TEXT:
	case PMBOT_PFIELD_DATE:
		if (v->type == PMBOT_JSTRING)
			s = v->v.s, len = v->len;
		break;
	}
	return s && json_is_string(have) && json_string_length(have) == len &&
	       !memcmp(json_string_value(have), s, len);
}

static int plan_project(struct planner *p, const pmbot_wg_node *n, const struct managed *m)
{
	const pmbot_state *st = p->in->state;
	const pmbot_pitem *item = m ? m->item : NULL;
	pmbot_buf proj = PMBOT_BUF_INIT, msg = PMBOT_BUF_INIT;
	int needs_human = n->needs_human;
	size_t i;
	int err = -1, rc;

	if (!p->project_ok)
		return 0;
	if (!item) {
		/* One payload for the plan: there is one project. */
		if (!p->on_board &&
		    (pmbot_buf_printf(&proj, "%s/%ld", st->project->owner, st->project->number) < 0 ||
		     !(p->on_board = pack2("project", json_string(proj.buf), NULL, NULL))))
			goto done;
		if (add_cs(p, "add_to_project", item_target(p, n), json_incref(p->on_board), NULL,
			NULL) < 0)
			goto done;
	}
	for (i = 0; i < N_PROJECT_FIELDS; i++) {
		const pmbot_pfield *f = p->pfield[i];
		const char *member = project_fields[i].member;
		const pmbot_jnode *v = !strcmp(member, "area") ? n->area :
			!strcmp(member, "priority") ? n->priority : pmbot_wg_node_get(n, member);
		json_t *want = NULL, *have, *value = NULL;

		if (!f || !v)
			continue;
		/* Triage defaults are for people to fill in, not values to sync. */
		if (needs_human && v->type == PMBOT_JSTRING &&
		    ((!strcmp(member, "area") && !strcmp(v->v.s, "triage")) ||
		     (!strcmp(member, "priority") && !strcmp(v->v.s, "Triage"))))
			continue;
		have = item ? json_object_get(item->values, f->name) : NULL;
		if (field_unchanged(f, v, have))
			continue;
		if (pmbot_jnode_to_json_shared(&want, v, &p->share) < 0)
			goto done;
		rc = pmbot_plan_field_value(&value, f, want, &msg);
		json_decref(want);
		if (rc == PMBOT_ENOTFOUND) {
			if (node_diag(p, n, PMBOT_SEV_ERROR, "PROJECT_UNKNOWN_OPTION", msg.buf) < 0)
				goto done;
			continue;
		}
		if (rc < 0)
			goto done;
		if (!value)
			continue;
		if (pmbot_plan_field_same(have, value)) {
			json_decref(value);
			continue;
		}
		if (add_cs(p, "set_project_field", item_target(p, n),
			field_payload(p, f->name, value),
			have ? pack2("value", json_incref(have), NULL, NULL) :
			shared_unset(&p->unset_value, "value"), NULL) < 0)
			goto done;
	}
	err = 0;
done:
	pmbot_buf_free(&proj);
	pmbot_buf_free(&msg);
	return err;
}

static int ref_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* GitHub's limits on the planned end state. */
static int check_limits(struct planner *p)
{
	const pmbot_workgraph *g = p->in->graph;
	const pmbot_state *st = p->in->state;
	size_t *children = calloc(g->n_nodes ? g->n_nodes : 1, sizeof(*children));
	const char **blockers = NULL;
	size_t n_blockers = 0, at;
	pmbot_buf msg = PMBOT_BUF_INIT;
	size_t i;
	int err = -1;

	if (!children)
		return -1;
	for (i = 0; i < g->n_nodes; i++)
		if (g->parent[i] != PMBOT_WG_NONE)
			children[g->parent[i]]++;
	/* Sub-issues people added by hand stay: count them too. */
	for (i = 0; i < st->n_issues; i++) {
		const pmbot_issue *is = &st->issues[i];
		void *pv = NULL;
		const pmbot_wg_node *pn;
		int managed_child;

		if (!is->parent || !pmbot_strmap_get(&p->by_ref, is->parent, &pv))
			continue;
		pn = pmbot_workgraph_find(g, ((struct managed *)pv)->stable_id);
		/* A managed child is counted where the graph puts it. */
		managed_child = p->of_issue[i] && pmbot_workgraph_find(g, p->of_issue[i]->stable_id);
		if (pn && !managed_child)
			children[pn - g->nodes]++;
	}
	for (i = 0; i < g->n_nodes; i++) {
		size_t depth = 1, cur = i;

		if (children[i] > 100) {
			pmbot_buf_clear(&msg);
			pmbot_buf_printf(&msg, "'%s' would have %zu sub-issues; GitHub allows 100",
				g->nodes[i].stable_id, children[i]);
			if (node_diag(p, &g->nodes[i], PMBOT_SEV_ERROR, "LIMIT_SUB_ISSUES", msg.buf) < 0)
				goto done;
		}
		if (children[i])
			continue; /* depth is measured from the leaves */
		while (g->parent[cur] != PMBOT_WG_NONE && depth <= 9) {
			cur = g->parent[cur];
			depth++;
		}
		{
			const char *ref = node_ref(p, &g->nodes[cur]);
			const pmbot_issue *up = ref ? pmbot_state_issue(st, ref) : NULL;

			while (up && up->parent && depth <= 9) {
				up = pmbot_state_issue(st, up->parent);
				depth++;
			}
		}
		if (depth > 8) {
			pmbot_buf_clear(&msg);
			pmbot_buf_printf(&msg, "'%s' would sit %zu levels deep; GitHub allows 8",
				g->nodes[i].stable_id, depth);
			if (node_diag(p, &g->nodes[i], PMBOT_SEV_ERROR, "LIMIT_DEPTH", msg.buf) < 0)
				goto done;
		}
	}
	/*
	 * Blocking side: how many issues each blocker would block. One in the
	 * graph is counted at its node (`children` again); only issues
	 * outside are sorted, to be counted by URL. The two lists are then
	 * read in id order, the order the diagnostics had when every end was
	 * sorted.
	 */
	memset(children, 0, (g->n_nodes ? g->n_nodes : 1) * sizeof(*children));
	for (i = 0; i < g->n_edges; i++) {
		const pmbot_wg_edge *e = &g->edges[i];
		const pmbot_wg_node *bn;

		if (e->type != PMBOT_EDGE_DEPENDS_ON && e->type != PMBOT_EDGE_BLOCKED_BY)
			continue;
		if (!e->external && (bn = pmbot_workgraph_edge_to(g, e))) {
			children[bn - g->nodes]++;
			continue;
		}
		if (!blockers && !(blockers = malloc(g->n_edges * sizeof(*blockers))))
			goto done;
		blockers[n_blockers++] = e->to_id;
	}
	if (n_blockers)
		qsort(blockers, n_blockers, sizeof(*blockers), ref_cmp);
	for (i = 0, at = 0; i < g->n_nodes || at < n_blockers;) {
		const pmbot_wg_node *bn = NULL;
		const char *id;
		size_t count;

		if (i < g->n_nodes &&
		    (at == n_blockers || strcmp(g->nodes[i].stable_id, blockers[at]) < 0)) {
			bn = &g->nodes[i];
			id = bn->stable_id;
			count = children[i++];
		} else {
			id = blockers[at];
			for (count = 0; at < n_blockers && !strcmp(blockers[at], id); at++)
				count++;
		}
		if (count <= 50)
			continue;
		pmbot_buf_clear(&msg);
		pmbot_buf_printf(&msg, "'%s' would block %zu issues; GitHub allows 50", id, count);
		if ((bn ? node_diag(p, bn, PMBOT_SEV_ERROR, "LIMIT_DEPENDENCIES", msg.buf)
			: issue_diag(p, id, PMBOT_SEV_ERROR, "LIMIT_DEPENDENCIES", msg.buf)) < 0)
			goto done;
	}
	err = 0;
done:
	free(children);
	free(blockers);
	pmbot_buf_free(&msg);
	return err;
}

static int pending_key_cmp(const void *pa, const void *pb)
{
	return strcmp(PMBOT_PLAN_PENDING_KEY((const pmbot_plan_pending *)pa),
		PMBOT_PLAN_PENDING_KEY((const pmbot_plan_pending *)pb));
}

/*
 * Sort `n` changesets by idempotency key. They come nearly in order: only
 * the hash that ends a hashed operation's key (a dependency's) shuffles an
 * item's own few. Insertion sort takes such a run with about one
 * comparison a changeset, where qsort takes log2(n), each a strcmp of a
 * record far away in memory. Past a few moves a changeset the input is
 * not like that (a report can make it so), and qsort sorts what is left.
 */
static void sort_by_key(pmbot_plan_pending *b, size_t n)
{
	size_t i, j, moves = 0;

	for (i = 1; i < n; i++) {
		pmbot_plan_pending t = b[i];
		const char *key = PMBOT_PLAN_PENDING_KEY(&t);

		for (j = i; j > 0 && strcmp(PMBOT_PLAN_PENDING_KEY(&b[j - 1]), key) > 0; j--)
			b[j] = b[j - 1];
		b[j] = t;
		moves += i - j;
		if (moves > 4 * n) {
			qsort(b, n, sizeof(*b), pending_key_cmp);
			return;
		}
	}
}

/*
 * Put acc->cs in plan order: by operation group, then operation, then
 * idempotency key (bytes). The planner makes each operation's
 * changesets item by item, in stable_id order, so most operations' keys
 * come already sorted: the changesets are bucketed by (group, operation)
 * in one stable pass, and each bucket sorted by key (sort_by_key(), which
 * passes over a sorted one): the order one sort over all three keys gives
 * (idempotency keys do not repeat). 0 or -1.
 */
static int sort_pending(pmbot_plan_acc *acc)
{
	size_t start[PMBOT_OP_COUNT + 1] = { 0 }, fill[PMBOT_OP_COUNT], rank[PMBOT_OP_COUNT];
	size_t i, k;
	uint32_t *to;

	if (acc->n_cs < 2)
		return 0;
	/* rank: an operation's place in (group, operation) order. */
	for (k = 0; k < PMBOT_OP_COUNT; k++) {
		rank[k] = 0;
		for (i = 0; i < PMBOT_OP_COUNT; i++)
			rank[k] += op_info(i)->group < op_info(k)->group ||
				(op_info(i)->group == op_info(k)->group && i < k);
	}
	for (i = 0; i < acc->n_cs; i++)
		start[rank[acc->cs[i].op] + 1]++;
	for (k = 0; k < PMBOT_OP_COUNT; k++) {
		start[k + 1] += start[k];
		fill[k] = start[k];
	}
	/*
	 * Each changeset's place, then the moves made in place cycle by cycle:
	 * a 4-byte place each rather than a second array of changesets at the
	 * plan's peak of memory.
	 */
	if (acc->n_cs > UINT32_MAX || !(to = malloc(acc->n_cs * sizeof(*to))))
		return -1;
	for (i = 0; i < acc->n_cs; i++)
		to[i] = (uint32_t)fill[rank[acc->cs[i].op]]++;
	for (i = 0; i < acc->n_cs; i++) {
		while (to[i] != i) {
			size_t j = to[i];
			pmbot_plan_pending t = acc->cs[j];
			uint32_t tj = to[j];

			acc->cs[j] = acc->cs[i];
			to[j] = to[i];
			acc->cs[i] = t;
			to[i] = tj;
		}
	}
	free(to);
	for (k = 0; k < PMBOT_OP_COUNT; k++) {
		pmbot_plan_pending *b = acc->cs + start[k];
		size_t n = start[k + 1] - start[k];

		sort_by_key(b, n);
	}
	return 0;
}

int pmbot_plan_hash(char out[PMBOT_SHA256_HEX_SIZE], const json_t *changesets,
	const json_t *fingerprint)
{
	json_t *doc = json_pack("{s:O, s:O}", "changesets", changesets, "fingerprint", fingerprint);
	int err;

	if (!doc)
		return -1;
	err = pmbot_sha256_json(out, doc);
	json_decref(doc);
	return err;
}

size_t pmbot_plan_count(const json_t *bundle)
{
	return json_array_size(json_object_get(bundle, "changesets"));
}

static json_t *diag_json(const pmbot_diag_list *d)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < d->count; i++) {
		const pmbot_diag *x = &d->items[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:i, s:s}", "code", x->code,
			"severity", pmbot_severity_name(x->severity), "path", x->path, "line", x->line,
			"column", x->column, "message", x->message);

		if (o && x->file && json_object_set_new(o, "file", json_string(x->file)) < 0) {
			json_decref(o);
			o = NULL;
		}
		if (json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/*
 * The canonical JSON of a bundle starts with these bytes (bundle_id is the
 * only member sorting before changesets), so the changesets can be
 * serialised straight into the output and the 16 zeros overwritten once the
 * hash of those very bytes is known.
 */
static const char bundle_head[] = "{\"bundle_id\":\"bundle-0000000000000000\",\"changesets\":";
#define BUNDLE_ID_AT (sizeof("{\"bundle_id\":\"bundle-") - 1)
#define HASH_DOC_AT (sizeof(bundle_head) - 1 - sizeof(",\"changesets\":") + 1)

/*
 * Hash {"changesets":C,"fingerprint":F} where C sits in `b` from
 * HASH_DOC_AT after `base`: the document is completed in place (its ','
 * briefly a '{') rather than copying tens of megabytes of changesets.
 */
static int hash_in_place(char out[PMBOT_SHA256_HEX_SIZE], pmbot_buf *b, size_t base,
	const json_t *fingerprint)
{
	size_t end = b->len, at = base + HASH_DOC_AT;
	int err = -1;

	if (pmbot_buf_puts(b, ",\"fingerprint\":") < 0 ||
	    pmbot_json_canonical(b, fingerprint) < 0 || pmbot_buf_putc(b, '}') < 0)
		goto done;
	b->buf[at] = '{';
	err = pmbot_sha256_hex(out, b->buf + at, b->len - at);
	b->buf[at] = ',';
done:
	b->len = end;
	if (b->buf)
		b->buf[end] = '\0';
	return err;
}

/*
 * Append the members of `bundle` after changesets (conflicts … target) and
 * the closing brace: the canonical form of a shallow copy without the two
 * leading members, its '{' turned into the ',' that follows changesets.
 */
static int put_bundle_tail(pmbot_buf *b, const json_t *bundle)
{
	json_t *rest = json_copy((json_t *)bundle);
	const char *key;
	json_t *v;
	size_t at = b->len;
	int err = -1;

	if (!rest || json_object_del(rest, "bundle_id") < 0)
		goto done;
	json_object_del(rest, "changesets"); /* absent from a lean bundle */
	json_object_foreach(rest, key, v)
		if (strcmp(key, "changesets") <= 0)
			goto done;
	if (!json_object_size(rest)) {
		err = pmbot_buf_putc(b, '}');
		goto done;
	}
	if (pmbot_json_canonical(b, rest) < 0)
		goto done;
	b->buf[at] = ',';
	err = 0;
done:
	json_decref(rest);
	return err;
}

/*
 * Changeset ids, "cs-%04zu" of 1, 2, 3, ... counted up in place: two per
 * changeset of a large plan, each a division a digit when made afresh.
 */
typedef struct {
	char s[32];
	size_t len;
} cs_counter;

static void cs_counter_init(cs_counter *c)
{
	memcpy(c->s, "cs-0000", sizeof("cs-0000"));
	c->len = sizeof("cs-0000") - 1;
}

/* The next id: "cs-0009" -> "cs-0010", "cs-9999" -> "cs-10000". */
static const char *cs_counter_next(cs_counter *c)
{
	size_t i = c->len;

	while (i > 3 && c->s[i - 1] == '9')
		c->s[--i] = '0';
	if (i > 3) {
		c->s[i - 1]++;
	} else {
		/* All nines, now all zeros: one digit more. */
		c->s[3] = '1';
		c->s[c->len++] = '0';
		c->s[c->len] = '\0';
	}
	return c->s;
}

int pmbot_plan_acc_finish(json_t **out, pmbot_buf *canonical, pmbot_plan_acc *acc,
	const json_t *source, const char *target, json_t *conflicts, json_t *orphaned)
{
	json_t *changesets = json_array(), *fingerprint = json_array(), *bundle = NULL;
	const char **refs = NULL;
	char hash[PMBOT_SHA256_HEX_SIZE], bid[32];
	cs_counter id;
	size_t i, n_refs = 0, counts[5] = { 0 }, need = 2;
	pmbot_buf scratch = PMBOT_BUF_INIT, *b = canonical ? canonical : &scratch;
	size_t base = b->len;
	int err = -1;

	if (!changesets || !fingerprint)
		goto done;
	if (sort_pending(acc) < 0)
		goto done;
	cs_counter_init(&id);
	for (i = 0; i < acc->n_cs; i++) {
		cs_counter_next(&id);
		if (acc->cs[i].cs && (json_object_set_new(acc->cs[i].cs, "changeset_id",
			json_string(id.s)) < 0 || json_array_append(changesets, acc->cs[i].cs) < 0))
			goto done;
		counts[op_info(acc->cs[i].op)->group]++;
		need += pending_size(&acc->cs[i], id.s);
	}
	if (acc->touched.count && !(refs = malloc(acc->touched.count * sizeof(*refs))))
		goto done;
	for (i = 0; i < acc->touched.cap; i++)
		if (acc->touched.slots[i].key)
			refs[n_refs++] = acc->touched.slots[i].key;
	if (n_refs)
		qsort(refs, n_refs, sizeof(*refs), ref_cmp);
	for (i = 0; i < n_refs; i++) {
		const pmbot_issue *is = pmbot_state_issue(acc->state, refs[i]);

		if (json_array_append_new(fingerprint, json_pack("{s:s, s:s, s:s}", "ref", refs[i],
			"node_id", is->node_id ? is->node_id : "", "updated_at",
			is->updated_at ? is->updated_at : "")) < 0)
			goto done;
	}
	/*
	 * Same bytes as pmbot_plan_hash(), from the one serialisation. The
	 * buffer is sized for the changesets at once (the tail is small): no
	 * doubling past what a large plan needs. Only a hint: near `b`'s cap
	 * or out of memory, the writes below say so.
	 */
	(void)pmbot_buf_grow(b, need + 4096);
	if (pmbot_buf_put(b, bundle_head, sizeof(bundle_head) - 1) < 0 ||
	    pmbot_buf_putc(b, '[') < 0)
		goto done;
	cs_counter_init(&id);
	for (i = 0; i < acc->n_cs; i++) {
		if ((i && pmbot_buf_putc(b, ',') < 0) ||
		    pmbot_plan_pending_put(b, &acc->cs[i], cs_counter_next(&id)) < 0)
			goto done;
		acc->cs[i].rec = NULL;
	}
	/* Written: their heap can take the bundle's tail. */
	rec_blocks_free(acc);
	if (pmbot_buf_putc(b, ']') < 0 || hash_in_place(hash, b, base, fingerprint) < 0)
		goto done;
	memcpy(b->buf + base + BUNDLE_ID_AT, hash, 16);
	snprintf(bid, sizeof(bid), "bundle-%.16s", hash);
	pmbot_diag_list_sort(acc->diags);
	bundle = json_pack("{s:s, s:s, s:s, s:o, s:s, s:O, s:O, s:O, s:o}",
		"schema_version", "changeset_bundle/v1", "bundle_id", bid, "plan_hash", hash,
		"source", source ? json_deep_copy(source) : json_object(),
		"target", target, "fingerprint", fingerprint,
		"conflicts", conflicts, "orphaned", orphaned, "diagnostics", diag_json(acc->diags));
	if (!bundle || (!acc->lean && json_object_set(bundle, "changesets", changesets) < 0) ||
	    json_object_set_new(bundle, "summary", json_pack(
		"{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"creates", (json_int_t)counts[PMBOT_OPGROUP_CREATE],
		"updates", (json_int_t)counts[PMBOT_OPGROUP_UPDATE],
		"relationships", (json_int_t)counts[PMBOT_OPGROUP_RELATION],
		"project", (json_int_t)(counts[PMBOT_OPGROUP_ITEM] + counts[PMBOT_OPGROUP_FIELD]),
		"conflicts", (json_int_t)json_array_size(conflicts),
		"orphaned", (json_int_t)json_array_size(orphaned),
		"diagnostics", (json_int_t)acc->diags->count, "total", (json_int_t)acc->n_cs)) < 0)
		goto done;
	if (canonical && put_bundle_tail(b, bundle) < 0)
		goto done;
	*out = bundle;
	bundle = NULL;
	err = 0;
done:
	if (err < 0 && b->buf) {
		b->len = base;
		b->buf[base] = '\0';
	}
	pmbot_buf_free(&scratch);
	free(refs);
	json_decref(bundle);
	json_decref(changesets);
	json_decref(fingerprint);
	return err;
}

/* OPERATION_DENIED: one warning per operation the config kept out of the plan. */
int pmbot_plan_acc_denied_diags(pmbot_plan_acc *acc)
{
	size_t i;

	for (i = 0; i < PMBOT_OP_COUNT; i++) {
		if (!acc->denied[i])
			continue;
		if (pmbot_diag_add(acc->diags, PMBOT_SEV_WARNING, "OPERATION_DENIED", NULL, "", 0, 0,
			"%zu %s change%s not proposed: .github/pm-bot.yml lists it under deny_operations",
			acc->denied[i], op_info(i)->name, acc->denied[i] == 1 ? " is" : "s are") < 0)
			return -1;
	}
	return 0;
}

void pmbot_plan_acc_init(pmbot_plan_acc *acc, const pmbot_config *config,
	const pmbot_state *state, pmbot_diag_list *diags)
{
	memset(acc, 0, sizeof(*acc));
	acc->config = config;
	acc->state = state;
	acc->diags = diags;
	pmbot_buf_init(&acc->scratch, 0);
	pmbot_buf_init(&acc->key, 0);
}

void pmbot_plan_acc_free(pmbot_plan_acc *acc)
{
	size_t i;

	for (i = 0; i < acc->n_cs; i++)
		json_decref(acc->cs[i].cs);
	free(acc->cs);
	rec_blocks_free(acc);
	pmbot_buf_free(&acc->scratch);
	pmbot_buf_free(&acc->key);
	for (i = 0; i < acc->touched.cap; i++)
		free((char *)acc->touched.slots[i].key);
	pmbot_strmap_free(&acc->touched);
	for (i = 0; i < PMBOT_OP_COUNT; i++) {
		json_decref(acc->op_names[i]);
		acc->op_names[i] = NULL;
	}
	json_decref(acc->proposed);
	acc->proposed = NULL;
	acc->cs = NULL;
	acc->n_cs = acc->alloc_cs = 0;
}

int pmbot_plan_author_trusted(const pmbot_config *config, const char *self_login,
	const pmbot_issue *is)
{
	return pmbot_config_author_trusted(config, is->author, is->author_is_bot) ||
		(self_login && !strcasecmp(self_login, is->author));
}

int pmbot_plan_diag_untrusted(pmbot_plan_acc *acc, const char *ref, const char *stable_id,
	const char *author)
{
	return pmbot_diag_add(acc->diags, PMBOT_SEV_WARNING, "MARKER_UNTRUSTED", ref, "", 0, 0,
		"%s carries the marker of '%s' but was written by '%s', who is not a trusted "
		"author: it is not treated as that item", ref, stable_id, author);
}

int pmbot_plan_diag_duplicate(pmbot_plan_acc *acc, const char *stable_id, const char *first_ref,
	const char *ref)
{
	return pmbot_diag_add(acc->diags, PMBOT_SEV_WARNING, "DUPLICATE_MARKER", ref, "", 0, 0,
		"'%s' is claimed by both %s and %s: that item is left alone until one marker is "
		"removed", stable_id, first_ref, ref);
}

int pmbot_plan_check_target(const pmbot_config *config, const char *target,
	pmbot_diag_list *diags)
{
	if (target && pmbot_config_repo_allowed(config, target))
		return PMBOT_OK;
	if (pmbot_diag_add(diags, PMBOT_SEV_ERROR, "REPO_NOT_ALLOWED", NULL, "", 0, 0,
		"%s is not in the configuration's repos allowlist: nothing of it is read",
		target ? target : "(no target)") < 0)
		return PMBOT_ERROR;
	return PMBOT_EINVALID;
}

int pmbot_plan_build(json_t **out, const pmbot_plan_input *in, pmbot_diag_list *diags)
{
	struct planner p;
	const pmbot_workgraph *g = in->graph;
	const pmbot_config *cfg = in->config;
	pmbot_render_opts ro;
	size_t i;
	int rc = PMBOT_ERROR;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	p.in = in;
	p.diags = diags;
	pmbot_plan_acc_init(&p.acc, cfg, in->state, diags);
	p.acc.lean = in->lean && in->canonical;
	ro.scheme = &cfg->labels;
	ro.issue_refs = NULL;
	if (!(p.conflicts = json_array()) || !(p.orphaned = json_array()))
		goto done;
	if (!pmbot_config_repo_allowed(cfg, in->target)) {
		if (pmbot_diag_add(diags, PMBOT_SEV_ERROR, "REPO_NOT_ALLOWED", NULL, "", 0, 0,
			"%s is not in the configuration's repos allowlist", in->target) < 0)
			goto done;
		p.acc.errors++;
	}
	p.project_ok = cfg->project_owner && in->state->project &&
		!strcasecmp(cfg->project_owner, in->state->project->owner) &&
		cfg->project_number == in->state->project->number;
	for (i = 0; p.project_ok && i < N_PROJECT_FIELDS; i++)
		p.pfield[i] = pmbot_state_field(in->state, project_fields[i].field);
	if (cfg->project_owner && !p.project_ok &&
	    pmbot_diag_add(diags, PMBOT_SEV_WARNING, "PROJECT_NOT_FOUND", NULL, "", 0, 0,
		"project %s/%ld is not in the state: no project changes are planned",
		cfg->project_owner, cfg->project_number) < 0)
		goto done;
	index_unsupported(&p);
	if (index_unreadable(&p) < 0 || narrow_missed_diags(&p) < 0 || index_managed(&p) < 0 ||
	    index_nodes(&p) < 0 || index_dependencies(&p) < 0)
		goto done;

	for (i = 0; i < g->n_nodes; i++) {
		const pmbot_wg_node *n = &g->nodes[i];
		const pmbot_form *form = pmbot_formset_find_type(in->forms, n->type_name);
		pmbot_rendered_issue r;
		pmbot_diag_list rd = PMBOT_DIAG_LIST_INIT;
		struct managed *m = NULL;
		size_t before_conflicts = json_array_size(p.conflicts), before_cs = p.acc.n_cs;
		int r_rc;

		if ((m = p.of_node[i])) {
			m->seen = 1;
			if (m->ambiguous)
				continue;
		} else if (node_left_alone(&p, n)) {
			pmbot_buf msg = PMBOT_BUF_INIT;
			int dr = 0;

			if (!pmbot_strmap_get(&p.unreadable_ids, n->stable_id, NULL)) {
				pmbot_buf_printf(&msg, "'%s' is not created: an issue of %s that could not "
					"be read may already be it", n->stable_id, in->target);
				dr = node_diag(&p, n, PMBOT_SEV_WARNING, "CREATE_UNPROVEN", msg.buf);
			}
			pmbot_buf_free(&msg);
			if (dr < 0)
				goto done;
			continue;
		}
		memset(&r, 0, sizeof(r));
		r_rc = pmbot_render_issue(&r, g, n, form, &ro, &rd);
		if (n->file)
			pmbot_diag_list_set_file(&rd, n->file);
		p.acc.errors += (int)rd.errors;
		if (pmbot_diag_list_move(diags, &rd) < 0) {
			pmbot_diag_list_free(&rd);
			pmbot_rendered_issue_free(&r);
			goto done;
		}
		if (r_rc == PMBOT_ERROR) {
			pmbot_rendered_issue_free(&r);
			goto done;
		}
		if (r_rc == PMBOT_OK && plan_content(&p, n, m, &r) < 0) {
			pmbot_rendered_issue_free(&r);
			goto done;
		}
		pmbot_rendered_issue_free(&r);
		if (plan_parent(&p, n, m) < 0 ||
		    plan_dependencies(&p, n, m, json_array_size(p.conflicts) > before_conflicts) < 0 ||
		    plan_project(&p, n, m) < 0)
			goto done;
		/* An existing issue a changeset will write is part of the fingerprint. */
		if (m && p.acc.n_cs > before_cs && touch(&p, m->ref) < 0)
			goto done;
	}
	if (pmbot_plan_acc_denied_diags(&p.acc) < 0 || unsupported_diags(&p) < 0)
		goto done;
	for (i = 0; i < p.n_mslots; i++) {
		struct managed *m = &p.mslots[i];
		void *v = NULL;

		/* Only the first slot of a stable id speaks for it. */
		if (m->seen || !pmbot_strmap_get(&p.managed, m->stable_id, &v) || v != m ||
		    m->ambiguous)
			continue;
		if (json_array_append_new(p.orphaned, json_pack("{s:s, s:s}", "stable_id",
			m->stable_id, "ref", m->ref)) < 0)
			goto done;
	}
	if (check_limits(&p) < 0 ||
	    pmbot_plan_acc_finish(out, in->canonical, &p.acc, in->source, in->target,
		    p.conflicts, p.orphaned) < 0)
		goto done;
	rc = p.acc.errors ? PMBOT_EINVALID : PMBOT_OK;
done:
	pmbot_plan_acc_free(&p.acc);
	for (i = 0; i < p.n_mslots; i++) {
		free(p.mslots[i].ref);
		free(p.mslots[i].stable_id);
		pmbot_body_free(&p.mslots[i].body);
	}
	free(p.mslots);
	free(p.of_issue);
	free(p.of_node);
	free(p.dep_first);
	free(p.dep_edges);
	pmbot_strmap_free(&p.managed);
	pmbot_strmap_free(&p.by_ref);
	pmbot_strmap_free(&p.unreadable_ids);
	json_decref(p.conflicts);
	json_decref(p.orphaned);
	json_decref(p.target);
	json_decref(p.unset_value);
	json_decref(p.unset_parent);
	json_decref(p.on_board);
	for (i = 0; i < p.field_payloads.cap; i++) {
		if (p.field_payloads.slots[i].key)
			json_decref(p.field_payloads.slots[i].value);
		free((char *)p.field_payloads.slots[i].key);
	}
	pmbot_strmap_free(&p.field_payloads);
	pmbot_jshare_free(&p.share);
	return rc;
}
