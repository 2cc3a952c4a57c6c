#ifndef PMBOT_APPLY_INT_H
#define PMBOT_APPLY_INT_H

#include <jansson.h>

#include "pmbot/apply.h"
#include "pmbot/buf.h"
#include "pmbot/source.h"
#include "pmbot/state.h"
#include "pmbot/strmap.h"

/*
 * Internal to src/apply/: the marker index and the clock shared by the
 * approval check, the flow compiler, the executor and the ledger. Not part
 * of the public API.
 */

/* Longest timestamp pmbot_apply_now() writes, with its NUL. */
#define PMBOT_APPLY_TIME_SIZE 64

/*
 * The current time as RFC 3339 UTC: $PMBOT_NOW when set (it must itself be
 * RFC 3339 UTC, or this fails), else the clock to the second
 * ("2025-01-02T03:04:05Z"). 0 or -1.
 */
int pmbot_apply_now(char out[PMBOT_APPLY_TIME_SIZE]);

/*
 * pmbot_flow_compile() for the executor's own use, without a source file:
 * `with`'s target and payload are `bundle`'s own values, not copies (the
 * copies were the size of the plan again). The flow only reads them; the
 * caller keeps `bundle` alive and unchanged until it frees the flow, a new
 * reference it owns.
 */
int pmbot_flow_compile_shared(json_t **out, const json_t *bundle, const pmbot_config *config);

/*
 * Is `s` an RFC 3339 date-time in UTC ("Z", "z" or "+00:00"), on the
 * calendar (leap years, 60 only as a leap second)? 1 or 0.
 */
int pmbot_apply_time_valid(const char *s);

/* An issue as the executor addresses it. Strings borrowed from the index. */
typedef struct {
	const char *repo;
	long number;
	long long database_id;
	const char *node_id;
} pmbot_apply_issue;

/* One stable id in one repository. Strings owned by the index. */
typedef struct {
	char *key;             /* lower-case repo, '\n', stable_id */
	char *repo;            /* as the state spells it */
	long number;
	long long database_id;
	char *node_id;
	int count;             /* trusted issues carrying the marker; >1: ambiguous */
} pmbot_apply_entry;

/*
 * Trusted markers of a state: (repo, stable_id) -> issue, plus issue ref
 * -> project item id. Built once per state (O(n) body parses), so that a
 * bundle of m changesets costs O(n + m), not O(n·m).
 */
typedef struct {
	pmbot_strmap map;      /* key -> pmbot_apply_entry* */
	pmbot_apply_entry **entries;
	size_t n_entries, alloc_entries;
	pmbot_strmap items;    /* lower-case issue ref -> item id (char*) */
	char **item_keys;      /* owned keys and ids, pairwise */
	size_t n_items, alloc_items;
} pmbot_apply_index;

/*
 * Index every issue of `state` whose body has a well-formed marker and
 * whose author `config` trusts (NULL config: the default trust list,
 * github-actions[bot]). `*idx` is filled; release it with
 * pmbot_apply_index_free(). 0 or PMBOT_ERROR.
 */
int pmbot_apply_index_build(pmbot_apply_index *idx, const pmbot_state *state,
	const pmbot_config *config);
void pmbot_apply_index_free(pmbot_apply_index *idx);

/* Record an issue the executor created (a second one makes it ambiguous). */
int pmbot_apply_index_add(pmbot_apply_index *idx, const char *repo, const char *stable_id,
	long number, long long database_id, const char *node_id);

/* Record a project item the executor added. 0 or PMBOT_ERROR. */
int pmbot_apply_index_add_item(pmbot_apply_index *idx, const char *ref, const char *item_id);

/* The entry for `stable_id` in `repo` (borrowed), or NULL. */
const pmbot_apply_entry *pmbot_apply_index_find(const pmbot_apply_index *idx,
	const char *repo, const char *stable_id);

/* The project item id of issue `ref` (borrowed), or NULL. */
const char *pmbot_apply_index_item(const pmbot_apply_index *idx, const char *ref);

/*
 * Resolve a binding ({"repo","stable_id"} or {"repo","number"}) to an issue.
 * 0; PMBOT_ENOTFOUND (no such issue); PMBOT_EINVALID (a malformed binding,
 * or a marker two trusted issues carry). `why` (may be NULL) gets a reason
 * on failure, and `code` (may be NULL) its reason code.
 */
int pmbot_apply_resolve(pmbot_apply_issue *out, const json_t *binding,
	const pmbot_state *state, const pmbot_apply_index *idx, const char **code,
	pmbot_buf *why);

/* pmbot_changeset_is_applied() over a prebuilt index. 1 or 0. */
int pmbot_apply_is_applied(const json_t *cs, const pmbot_state *state,
	const pmbot_apply_index *idx);

/* Is `p` the project "OWNER/NUMBER" names (owner case-insensitive)? 1 or 0. */
int pmbot_apply_project_is(const pmbot_project *p, const char *spec);

/* Split "OWNER/NUMBER": `*owner_len` bytes of owner, then the number. 0 or -1. */
int pmbot_apply_project_parse(const char *spec, size_t *owner_len, long *number);

/* Can `op` be performed twice with the effect of once (spec 002's purity)? */
int pmbot_apply_repeat_safe(pmbot_operation op);

/* ASCII case-insensitive equality. */
int pmbot_apply_ieq(const char *a, const char *b);

/*
 * May `login` carry trusted markers under `config` (NULL: the default
 * list, github-actions[bot])? The one rule the index and the executor's
 * checks share. 1 or 0.
 */
int pmbot_apply_author_trusted(const pmbot_config *config, const char *login, int is_bot);

/*
 * Is the issue `binding` ({repo, number}) names one pm-bot manages? The
 * planner's test: it exists, its author is trusted, its body has one
 * well-formed marker, and no other trusted issue of the repository carries
 * that marker. 1 (its stable id appended to `sid`), 0 (`why`, required,
 * says why not, naming the binding as `role`), or PMBOT_ERROR.
 */
int pmbot_apply_managed(pmbot_buf *sid, const json_t *binding, const char *role,
	const pmbot_state *state, const pmbot_apply_index *idx, const pmbot_config *config,
	pmbot_buf *why);

/*
 * The planner's rules for one changeset `cs` (pmbot_apply_rules_check()
 * lists them), over `state` and its marker index. PMBOT_OK when it obeys
 * them (or its operation is unknown: that is the policy denial's to say),
 * PMBOT_EINVALID with `*code` and `why` saying which rule it breaks,
 * PMBOT_ERROR when out of memory.
 */
int pmbot_apply_rule(const char **code, const json_t *cs, const pmbot_state *state,
	const pmbot_apply_index *idx, const pmbot_config *config, pmbot_buf *why);

/*
 * The refs ("OWNER/NAME#N", the state's spelling) of every existing issue
 * `changesets` touch: each target, set_parent's parent and the blocker of
 * add_dependency / remove_dependency, named by number or by stable id
 * (through `idx`; a stable id no trusted issue carries yet touches
 * nothing). `*out` is a new array of strings, sorted by bytes, without
 * duplicates. 0 or PMBOT_ERROR.
 */
int pmbot_apply_touched(json_t **out, const json_t *changesets, const pmbot_state *state,
	const pmbot_apply_index *idx);

#endif
