#ifndef PMBOT_PLAN_INT_H
#define PMBOT_PLAN_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "pmbot/buf.h"
#include "pmbot/source.h"
#include "pmbot/diag.h"
#include "pmbot/state.h"
#include "pmbot/strmap.h"

/*
 * Internal to src/plan/: what the planner (plan.c) and the Projects field
 * sync (fieldsync.c) share so that both write the same bundles the same
 * way: the changeset accumulator (ordering, ids, idempotency keys, denied
 * operations, fingerprint, plan_hash, summary), who may carry a marker, the
 * marker diagnostics, and how a wanted value becomes a project field value.
 * Not part of the public API. Every function lives in plan.c.
 */

/*
 * One changeset being collected, held as canonical JSON text rather than a
 * tree: at 10,000 items a plan has some 25,000 changesets, and their text
 * costs about a fifth of jansson's objects, hash tables and strings. `rec`
 * is one allocation holding what is particular to the changeset: its
 * idempotency key and a NUL (the sort's last word), then the "after" and
 * "before" members (each with its ','), the payload and the target, all
 * canonical JSON. pmbot_plan_pending_put() writes the rest, the same for
 * every changeset of an operation, around them.
 */
typedef struct {
	char *rec;         /* in the accumulator's record blocks; NULL once written out */
	json_t *cs;        /* owned, NULL in a lean plan: the same changeset as a tree, no id yet */
	uint32_t payload_at, target_at, end; /* offsets in rec; after/before from the key's end */
	int op;            /* its pmbot_operation */
	int approval;      /* its requires_approval */
} pmbot_plan_pending;

/* A block records are carved from (plan.c). */
struct pmbot_plan_rec_block;

/*
 * The changesets of one plan, collected in any order and written out in
 * plan.h's order by pmbot_plan_acc_finish(). Members are the accumulator's
 * own except the three borrowed pointers; release with pmbot_plan_acc_free().
 */
typedef struct {
	const pmbot_config *config;    /* borrowed: denied / auto-approved operations */
	const pmbot_state *state;      /* borrowed: the fingerprint's issues */
	pmbot_diag_list *diags;        /* borrowed: the caller's list */
	pmbot_plan_pending *cs;
	size_t n_cs, alloc_cs;
	pmbot_strmap touched;          /* issue ref (owned copy) -> issue */
	size_t denied[PMBOT_OP_COUNT]; /* changes not proposed: the config denies them */
	int errors;                    /* error diagnostics counted so far */
	/*
	 * Lean: no changeset trees, only the records; pmbot_plan_acc_finish()
	 * then leaves "changesets" out of the bundle tree (its canonical bytes
	 * have them). The planner then writes the records of its commonest
	 * changesets as text, with no payload tree at all. Set it after init.
	 */
	int lean;
	pmbot_buf scratch;             /* owned: where a record is assembled */
	/*
	 * Owned: the blocks the records live in, the one being filled first.
	 * Records are made one after another and freed together once written
	 * out: a malloc and a free a changeset were 1 % of a large plan.
	 */
	struct pmbot_plan_rec_block *recs;
	pmbot_buf key;                 /* owned: where its idempotency key is */
	/*
	 * Owned, made on first use: the strings every changeset of a large plan
	 * repeats ("operation" and "status"), one value shared by all of them.
	 */
	json_t *op_names[PMBOT_OP_COUNT];
	json_t *proposed;
} pmbot_plan_acc;

/* Start an empty accumulator over the borrowed `config`, `state` and `diags`. */
void pmbot_plan_acc_init(pmbot_plan_acc *acc, const pmbot_config *config,
	const pmbot_state *state, pmbot_diag_list *diags);

/* Release everything `acc` owns (not the borrowed pointers). */
void pmbot_plan_acc_free(pmbot_plan_acc *acc);

/*
 * Propose `op` on `target` with `payload` and, when not NULL, `before` and
 * `after`. Consumes its four references whatever happens (NULL target or
 * payload is an allocation that failed: -1). An operation the config denies
 * is only counted (0). Returns 0 or -1 (out of memory, unknown `op`).
 */
int pmbot_plan_acc_add(pmbot_plan_acc *acc, const char *op, json_t *target, json_t *payload,
	json_t *before, json_t *after);

/* Add the state's issue `ref` to the fingerprint (no-op when it is not in the state). 0 or -1. */
int pmbot_plan_acc_touch(pmbot_plan_acc *acc, const char *ref);

/* One OPERATION_DENIED warning per operation that was counted as denied. 0 or -1. */
int pmbot_plan_acc_denied_diags(pmbot_plan_acc *acc);

/* The idempotency key of a collected changeset (borrowed from its record). */
#define PMBOT_PLAN_PENDING_KEY(pp) ((const char *)(pp)->rec)

/*
 * Append changeset `pp` as canonical JSON, with changeset_id `id`, to `out`:
 * exactly pmbot_json_canonical() of the tree it stands for. 0 or negative
 * (`out`'s cap, out of memory).
 */
int pmbot_plan_pending_put(pmbot_buf *out, const pmbot_plan_pending *pp, const char *id);

/*
 * Sort the changesets, number them, hash, sort acc->diags, and build the
 * ChangesetBundle v1 of plan.h (without "changesets" when acc->lean). `source` (may be NULL: {}) is deep-copied,
 * `conflicts` and `orphaned` (arrays) are shared by reference. `*out` is a
 * new reference the caller owns. 0 or -1 (`*out` untouched).
 * `canonical` (borrowed, may be NULL) gets the canonical JSON of `*out`
 * appended: the changesets are written from their records once, for the
 * plan hash and for these bytes; each record is freed once written. On
 * failure its length is as it was.
 */
int pmbot_plan_acc_finish(json_t **out, pmbot_buf *canonical, pmbot_plan_acc *acc,
	const json_t *source, const char *target, json_t *conflicts, json_t *orphaned);

/*
 * "<repo lower-cased>\n<stable_id>": repository names compare
 * case-insensitively (as on GitHub), stable ids exactly. New string the
 * caller frees, NULL when out of memory.
 */
char *pmbot_plan_issue_key(const char *repo, const char *stable_id);

/* 1 when `is`'s marker counts: its author is trusted by `config` or is `self_login` (may be NULL). */
int pmbot_plan_author_trusted(const pmbot_config *config, const char *self_login,
	const pmbot_issue *is);

/* The MARKER_UNTRUSTED warning for issue `ref` (file) carrying `stable_id`. 0 or -1. */
int pmbot_plan_diag_untrusted(pmbot_plan_acc *acc, const char *ref, const char *stable_id,
	const char *author);

/* The DUPLICATE_MARKER warning: `stable_id` claimed by `first_ref` and `ref` (file). 0 or -1. */
int pmbot_plan_diag_duplicate(pmbot_plan_acc *acc, const char *stable_id, const char *first_ref,
	const char *ref);

/*
 * The value to write into project field `f` for the wanted value `want`:
 * single select: a string matched case-insensitively to the first such
 * option, whose exact name is the value; number: a number, as a real;
 * text and date: a string, as is. `*out` is a new reference, or NULL when
 * `want` does not fit the field's type (return 0: nothing to write).
 * PMBOT_ENOTFOUND when no option matches: `msg` (cleared first) then holds
 * "the project field 'F' has no option 'V'; it has: 'A', 'B'". PMBOT_ERROR
 * when out of memory.
 */
int pmbot_plan_field_value(json_t **out, const pmbot_pfield *f, const json_t *want,
	pmbot_buf *msg);

/* 1 when an item's current value `have` (NULL: unset) already is `value`: numbers by value. */
int pmbot_plan_field_same(const json_t *have, const json_t *value);

#endif
