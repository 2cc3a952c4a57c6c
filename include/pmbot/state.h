#ifndef PMBOT_STATE_H
#define PMBOT_STATE_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/diag.h"
#include "pmbot/operation.h"

/*
 * State snapshot v1 (docs/schemas/state.v1.schema.json, docs/state.md): what
 * pm-bot knows of the live world, the same shape whether it was read from
 * GitHub or from a local state file. Issues are referred to across the
 * state by "OWNER/NAME#NUMBER" strings ("issue refs").
 *
 * Repository names compare ASCII case-insensitively, as on GitHub: lookups
 * of "Acme/Widgets#3" find "acme/widgets#3", and a snapshot may not hold
 * both spellings. Issue numbers are 1..2^31-1, database ids 1..2^53-1.
 *
 * Everything reachable from a pmbot_state is owned by it: every string and
 * array is malloc'd, so code that edits a state in place (the file backend)
 * replaces them with malloc'd values and keeps the orders stated below.
 * Except in a read-only state (pmbot_state_read_only): one from
 * pmbot_state_parse keeps its strings in one block (`strings`), and one
 * handed out to several holders (pmbot_state_share) is theirs jointly.
 * Code that edits a state edits a copy of a read-only one.
 */

typedef struct {
	char *repo;            /* "OWNER/NAME" */
	long number;
	long long database_id; /* what sub-issue and dependency endpoints take */
	char *node_id;         /* GraphQL id */
	char *title;
	char *body;
	char **labels;         /* sorted by bytes, unique */
	size_t n_labels;
	int closed;            /* 0 open, 1 closed */
	char *author;          /* login as REST shows it ("github-actions[bot]") */
	int author_is_bot;
	char *updated_at;      /* RFC 3339 */
	char *parent;          /* issue ref of the parent, NULL for none */
	char **blocked_by;     /* issue refs, sorted like issues, unique */
	size_t n_blocked_by;
	size_t alloc_blocked_by; /* room in `blocked_by` (pmbot_array_grow); may be under n_blocked_by */
	char *issue_type;      /* the issue type's name, NULL for none (or a
	                          GitHub without issue types) */
} pmbot_issue;

typedef enum {
	PMBOT_PFIELD_TEXT,
	PMBOT_PFIELD_NUMBER,
	PMBOT_PFIELD_SINGLE_SELECT,
	PMBOT_PFIELD_DATE
} pmbot_pfield_type;

typedef struct {
	char *id;
	char *name;
} pmbot_pfield_option;

typedef struct {
	char *id;
	char *name;
	pmbot_pfield_type type;
	pmbot_pfield_option *options; /* single select only */
	size_t n_options;
} pmbot_pfield;

typedef struct {
	char *id;              /* project item id */
	char *issue;           /* issue ref */
	json_t *values;        /* owned: field name -> string (text, date,
	                          option name) or number */
} pmbot_pitem;

typedef struct {
	char *owner;
	long number;
	char *node_id;
	pmbot_pfield *fields;
	size_t n_fields;
	pmbot_pitem *items;    /* sorted like issues: by the repo (case
	                          folded), then the number of `issue` */
	size_t n_items;
	size_t alloc_items;    /* room in `items` (pmbot_array_grow); may be under n_items */
} pmbot_project;

typedef struct {
	pmbot_issue *issues;   /* sorted by repo (ASCII case folded), then
	                          number; one spelling per repo */
	size_t n_issues;
	size_t alloc_issues;
	pmbot_project *project; /* NULL when there is none */
	json_t *extra;         /* owned, may be NULL: backend bookkeeping kept
	                          in the file (e.g. id counters); opaque to
	                          the planner */
	size_t shares;         /* holders besides the first (pmbot_state_share) */
	void *strings;         /* owned, may be NULL: the block holding every
	                          string of a parsed state (arrays stay malloc'd) */
} pmbot_state;

/* Free every string `is` owns and zero it (the struct itself is the caller's). */
void pmbot_issue_clear(pmbot_issue *is);

/* A new empty state (no issues, no project). PMBOT_OK or PMBOT_ERROR. */
PMBOT_WARN_UNUSED int pmbot_state_new(pmbot_state **out);
/* Drop one holder of `state` (pmbot_state_share); the last frees it. NULL is allowed. */
void pmbot_state_free(pmbot_state *state);

/*
 * One more holder of `state` (returned; each holder calls
 * pmbot_state_free() once), so a backend can hand out its cache instead
 * of a copy. A shared state is read-only to every holder.
 */
pmbot_state *pmbot_state_share(pmbot_state *state);

/*
 * 1 when `state` must not be edited in place: shared, or parsed (its
 * strings in one block). Code that must change it makes a copy first.
 */
int pmbot_state_read_only(const pmbot_state *state);

/* Largest state document parse accepts (and the file backend writes). */
#define PMBOT_STATE_MAX_BYTES ((size_t)256 << 20)

/*
 * Parse and validate a State snapshot v1 document (`len` bytes of JSON;
 * `text` need not be NUL-terminated). Every problem is reported, each with
 * `file` (may be NULL), JSON Pointer, line and column:
 *   STATE_PARSE      not JSON (also a duplicate key, invalid UTF-8, more
 *                    than PMBOT_STATE_MAX_BYTES or 64 levels of nesting);
 *                    parsing stops there
 *   STATE_VERSION    schema_version is not "state/v1"; nothing else is checked
 *   STATE_SCHEMA     a shape, type, format or enum error, an unknown key, a
 *                    project value that does not fit its field, an issue
 *                    that is its own parent or blocker
 *   STATE_DUPLICATE  a repository, issue number, database id, node id,
 *                    label, blocked_by ref, field (name, case-insensitive,
 *                    or id), option, item id or item issue listed twice
 *   STATE_REF        (warning) a parent, blocked_by or item ref naming no
 *                    issue of the snapshot (GitHub refs may point outside
 *                    it); checked only when there is no error
 * Input order does not matter: issues, labels, blocked_by and items are
 * sorted, so to_json is the same for any order and parse(to_json(s))
 * gives `s` again.
 * `*out` is new, caller frees; NULL unless PMBOT_OK. PMBOT_EINVALID with
 * diagnostics, PMBOT_ERROR when out of memory. Warnings leave it PMBOT_OK.
 */
PMBOT_WARN_UNUSED int pmbot_state_parse(pmbot_state **out, const char *file, const char *text, size_t len,
	pmbot_diag_list *diags);

/*
 * pmbot_state_parse of the text in `text`, which it takes: the buffer is
 * freed as soon as the JSON is parsed (the state keeps the document's
 * strings, not the file's), so a big file and the state built from it are
 * never held at once. `text` is left empty (and reusable) whatever the
 * outcome.
 */
PMBOT_WARN_UNUSED int pmbot_state_parse_buf(pmbot_state **out, const char *file, pmbot_buf *text,
	pmbot_diag_list *diags);

/*
 * The state as a State snapshot v1 document (new reference, caller owns):
 * repositories in issue order, each issue with every key (parent null and
 * blocked_by [] included), "project" null when there is none, "extra" only
 * when not NULL (a deep copy). Its canonical JSON is the stable form of a
 * state. PMBOT_OK or PMBOT_ERROR.
 */
int pmbot_state_to_json(json_t **out, const pmbot_state *state);

/*
 * Append the canonical JSON of pmbot_state_to_json(state) to `out`, byte
 * for byte the same, written straight from the structs (several times
 * faster: the file backend writes the whole state after every operation).
 * 0, or negative (out of memory, or past out->max) with `out` as it was.
 */
int pmbot_state_canonical(pmbot_buf *out, const pmbot_state *state);

/*
 * What a model is shown of `state` (advise): `*out` is a new object (the
 * caller's), compact and in state order, {"issues": [{"repo", "number",
 * "title", "state": "open"|"closed", "labels", "parent" (null for none),
 * "blocked_by", "body" ("" when none)}...], "board_items": [{"issue",
 * "values"}...]}, no ids, authors or timestamps. 0, or PMBOT_ERROR (`*out`
 * NULL).
 */
int pmbot_state_board(json_t **out, const pmbot_state *state);

/*
 * The issue with that ref / repo+number (borrowed, valid until the state
 * changes), or NULL (also for a malformed ref). O(log n).
 */
const pmbot_issue *pmbot_state_issue(const pmbot_state *state, const char *ref);
const pmbot_issue *pmbot_state_issue_at(const pmbot_state *state, const char *repo, long number);

/*
 * Index in state->issues of the first issue at or after repo#number
 * (n_issues when there is none). With number 0 it is where `repo`'s issues
 * start: they run while the repo compares equal (case-insensitively).
 * O(log n).
 */
size_t pmbot_state_lower_bound(const pmbot_state *state, const char *repo, long number);

/* The project item of issue `ref` (borrowed), or NULL. O(log n). */
const pmbot_pitem *pmbot_state_item(const pmbot_state *state, const char *ref);

/*
 * The project item of every issue at once: `*out` (owned by the caller,
 * free()) gets n_issues entries, entry i the item of state->issues[i] as
 * pmbot_state_item() would find it (borrowed), or NULL. One walk of the
 * two lists, which the state keeps in the same order: O(n), where a
 * lookup per issue is a binary search. 0, or -1 when out of memory
 * (`*out` NULL).
 */
int pmbot_state_items_by_issue(const pmbot_pitem ***out, const pmbot_state *state);

/*
 * The project field called `name` (ASCII case-insensitive; borrowed), or
 * NULL. Linear in the fields: GitHub allows 50 per project.
 */
const pmbot_pfield *pmbot_state_field(const pmbot_state *state, const char *name);

/* Write "OWNER/NAME#N" into `out` (appended). 0 or -1. */
int pmbot_issue_ref(pmbot_buf *out, const char *repo, long number);

/*
 * Split an issue ref "OWNER/NAME#N" (owner [A-Za-z0-9_-]{1,39} not starting
 * with '-', name [A-Za-z0-9._-]{1,100} other than "." and "..", N 1..2^31-1
 * without leading zeros). `repo` receives "OWNER/NAME" (appended).
 * 0, PMBOT_EINVALID when malformed, PMBOT_ERROR when out of memory.
 */
PMBOT_WARN_UNUSED int pmbot_issue_ref_parse(pmbot_buf *repo, long *number, const char *ref);

/*
 * Order two issue refs the way a state sorts issues: repository (ASCII case
 * folded), then number; malformed refs after every valid one, by bytes.
 * 0 means the same issue ("Acme/W#2" and "acme/w#2"). <0, 0 or >0.
 */
int pmbot_issue_ref_cmp(const char *a, const char *b);

/*
 * The backend interface: where state is read from and where changesets
 * are performed. The file backend (pmbot_file_backend_open) keeps a State
 * snapshot in a local file; the GitHub backend speaks REST and GraphQL.
 *
 * Operations and their `args` (a JSON object built by the executor, with
 * every stable id already resolved to issue numbers and ids):
 *   create_issue        {repo, title, body, labels[]}, and only for a
 *                       backend with PMBOT_BACKEND_FUSES, optionally
 *                       parent_node_id, project_node_id (the board read)
 *                       and issue_type (a kind: "task", ...)
 *                       result {number, database_id, node_id}, plus what
 *                       landed with it: parent_node_id, item_id (on
 *                       project_node_id), issue_type_id
 *   update_issue_title  {repo, number, title}
 *   update_issue_body   {repo, number, body}
 *   add_labels          {repo, number, labels[]}
 *   remove_labels       {repo, number, labels[]}
 *   set_parent          {repo, number, database_id, parent_repo,
 *                        parent_number, replace}       (child -> parent)
 *   add_dependency      {repo, number, blocker_repo, blocker_number,
 *                        blocker_database_id}          (number blocked by blocker)
 *                       and, when known, node_id and blocker_node_id
 *   remove_dependency   same as add_dependency
 *   add_to_project      {repo, number, node_id}        result {item_id}
 *   set_project_field   {repo, number, item_id, field, field_id, value,
 *                        option_id}  (value: string or number; option_id
 *                        for single-select fields)
 *   set_issue_type      {repo, number, node_id, issue_type}  (a type name
 *                        the repository offers, matched without case)
 * A result, when there is none, is an empty object. Every key listed is
 * required (`replace` a boolean, `option_id` a string for single-select
 * values, else null or absent); `value` null clears the field.
 */
typedef struct pmbot_backend pmbot_backend;

/*
 * What a read must be able to answer for (pmbot_backend_read): each entry
 * names a repository and either a stable id the caller will create there
 * when no issue carries its marker (the read must then find that issue or
 * prove it absent), or an issue number the caller names outside pm-bot's
 * markers (the read must include that issue when it exists). A backend
 * that holds everything anyway (the file backend) ignores it; the GitHub
 * backend reads narrowly and falls back to a complete scan of a repository
 * only when a stable id is not found there (docs/github.md).
 */
typedef struct {
	const char *repo;      /* "OWNER/NAME" */
	const char *stable_id; /* NULL for an issue named by number */
	long number;           /* 0 for a stable id */
} pmbot_read_need;

typedef struct {
	const pmbot_read_need *needs; /* borrowed */
	size_t n_needs;
} pmbot_read_scope;

/*
 * PMBOT_BACKEND_EPAUSED (common.h): what perform / perform_batch
 * return (as the code of each entry it concerns) when a write was not sent because the backend's write budget
 * is spent (the GitHub backend: PMBOT_GITHUB_EBUDGET): not a failure but a
 * pause. Whatever the operation wrote before the stopped request stays
 * written (only repeat-safe writes may follow an operation's first one,
 * so a later run completes it). `resume_at` says when to try again.
 */

struct pmbot_backend {
	const char *name; /* "file", "github" */
	/*
	 * Read the issues of `repos` (every issue, open and closed) and, when
	 * `project_owner` is not NULL, the project with its fields and items.
	 * A repo with no issues, or a project that does not match, is simply
	 * absent (project NULL). `repos` NULL: every repository the backend
	 * holds. `*out` is new; the caller frees it. On failure `err` says why
	 * (appended).
	 */
	int (*read)(pmbot_state **out, pmbot_backend *b, const char *const *repos,
		size_t n_repos, const char *project_owner, long project_number, pmbot_buf *err);
	/*
	 * Optional (NULL: read is called). `read` with a scope (never NULL):
	 * the state may leave out issues the scope does not need, but every
	 * issue whose marker carries one of its stable ids, and every issue it
	 * names by number, that exists in `repos` is in it. Through
	 * pmbot_backend_read().
	 */
	int (*read_scoped)(pmbot_state **out, pmbot_backend *b, const char *const *repos,
		size_t n_repos, const char *project_owner, long project_number,
		const pmbot_read_scope *scope, pmbot_buf *err);
	/*
	 * Perform one operation. `*result` is a new object the caller frees
	 * (NULL unless PMBOT_OK). PMBOT_EINVALID when the backend refuses the
	 * request (e.g. a limit; GitHub's 404/422), PMBOT_ERROR on failure;
	 * `err` says why, appended, starting with the operation's name. A
	 * backend must leave its store consistent whatever happens: the file
	 * backend writes the whole state atomically after each operation (or,
	 * held, at commit), and a refused or failed operation changes nothing.
	 */
	int (*perform)(json_t **result, pmbot_backend *b, pmbot_operation op,
		const json_t *args, pmbot_buf *err);
	/*
	 * Optional (NULL: the executor calls perform once per changeset).
	 * Perform `n` operations of one kind, `op` with args[i] each,
	 * in as few requests as the backend can; the operations are repeat-safe
	 * and independent, and each is settled on its own (no transaction):
	 * codes[i] is what perform would have returned for args[i] (PMBOT_OK,
	 * PMBOT_EINVALID when refused, PMBOT_ERROR when it failed or its outcome
	 * is unknown), results[i] a new object the caller frees (NULL unless
	 * PMBOT_OK) and errs[i] (initialised by the caller) says why, appended,
	 * starting with the operation's name. A failure of the whole request
	 * gives every operation of it the same code and reason. Returns
	 * PMBOT_OK when every entry was settled, PMBOT_EINVALID for an
	 * operation the backend does not batch (nothing sent, no entry
	 * touched), PMBOT_ERROR when out of memory (entries may be partly
	 * settled; codes of the others are PMBOT_ERROR).
	 */
	int (*perform_batch)(json_t **results, int *codes, pmbot_backend *b,
		pmbot_operation op, const json_t *const *args, size_t n, pmbot_buf *errs);
	/*
	 * Optional, both or neither (NULL: every operation is durable when
	 * perform returns). Group commit: after hold, operations may stay in
	 * memory (reads see them) until commit makes all of them durable at
	 * once, so a group costs one write instead of one per operation.
	 * hold: PMBOT_OK, or the code and `err` of a read that failed (not
	 * held). commit: PMBOT_OK when everything performed since hold is
	 * durable (also when nothing was held); else nothing performed since
	 * hold is kept, and `err` says why (appended). After an operation of
	 * the group failed with PMBOT_ERROR, the later ones and reads fail too
	 * until commit, which then fails. A refusal (PMBOT_EINVALID) changes
	 * nothing and the group goes on. free drops a group not committed.
	 */
	int (*hold)(pmbot_backend *b, pmbot_buf *err);
	int (*commit)(pmbot_backend *b, pmbot_buf *err);
	void (*free)(pmbot_backend *b);
	/*
	 * PMBOT_BACKEND_FUSES: create_issue takes the optional parent, board and
	 * type args and says in its result which of them landed (else the
	 * executor never passes them). PMBOT_BACKEND_BATCHES_EDGES:
	 * perform_batch takes add_dependency and remove_dependency (else the
	 * executor batches set_project_field only).
	 */
	unsigned flags;
	/* Epoch seconds after which a write may be sent again; set by the
	 * backend with PMBOT_BACKEND_EPAUSED, else 0. */
	long long resume_at;
};

#define PMBOT_BACKEND_FUSES 1u
#define PMBOT_BACKEND_BATCHES_EDGES 2u

/*
 * b->read, or b->read_scoped when `scope` (borrowed, may be NULL: read
 * everything) is given and the backend has it. Codes and ownership as read.
 */
PMBOT_WARN_UNUSED int pmbot_backend_read(pmbot_state **out, pmbot_backend *b, const char *const *repos,
	size_t n_repos, const char *project_owner, long project_number, const pmbot_read_scope *scope,
	pmbot_buf *err);

/*
 * The file backend over the State snapshot at `path` (docs/state.md). A
 * missing file is an empty state (created on the first write, parent
 * directories too). It assigns numbers per repository (highest + 1) and
 * database ids from one counter (extra.next_database_id, from 1000001,
 * shared with project items), derives node ids ("I_"/"PVTI_" + base64url
 * of the id), stamps updated_at on every change to an issue (strictly
 * increasing across the file; `PMBOT_NOW`, an RFC 3339 time, fixes the
 * clock for reproducible runs), and authors issues as `login` (NULL or "":
 * "github-actions[bot]"; a login ending in "[bot]" is a bot). Enforces
 * GitHub's limits like GitHub would: 100 sub-issues per parent, 8 levels
 * (a root is level 1), no cycles, one parent unless replaced, 50
 * dependencies each way, no duplicate or missing edges, titles 1..256 and
 * bodies up to 65,536 characters, labels up to 50 characters and 100 per
 * issue, project values that fit their field.
 *
 * Every read and operation sees the file as it is on disk then (it is read
 * again when it changed); operations hold an exclusive flock on
 * "<path>.lock" while they read, change and write, and write the whole
 * state (canonical JSON and "\n") with pmbot_fs_write_atomic after each
 * success. A file that is not a valid state fails reads and operations
 * with PMBOT_EINVALID and is never overwritten. It has hold and commit:
 * hold takes the lock and keeps it until commit, operations in between
 * change only memory, and commit writes the state once (when anything
 * changed), unless the file changed on disk meanwhile (a person's edit:
 * then nothing is written and commit fails).
 *
 * `*out` is new; free it with b->free(b). PMBOT_EINVALID (with diagnostics)
 * when the file is not a valid state; PMBOT_ERROR (a STATE_IO diagnostic
 * when the file cannot be read) otherwise. Warnings about the file (STATE_REF)
 * are added to `diags` too.
 */
PMBOT_WARN_UNUSED int pmbot_file_backend_open(pmbot_backend **out, const char *path, const char *login,
	pmbot_diag_list *diags);

/*
 * The GitHub backend over `client` (borrowed: it must outlive the backend;
 * its counters, pacing, retries and ETag cache apply to every request).
 * docs/github-backend.md describes it for users.
 *
 * read: the issues of each repository through the paginated GraphQL
 * "issues" document (ceil(n/100) requests per repository; repositories
 * named twice, in any case, are read once), bot authors in their REST form
 * ("github-actions[bot]"), a deleted author as "ghost"; parents and
 * blockers with the issues (REST only for an issue with more than 50
 * blockers); without the fields on this GitHub (GHES, GitHub's
 * undefinedField answer) the same page again without them, and
 * extra.unsupported. read_scoped with a login of our own: only the issues
 * that login created (filterBy createdBy), then every issue of a
 * repository where a needed stable id was not found (marked issues the
 * filter missed in extra.narrow_missed), and issues needed by number by
 * number (aliased, 100 a request); the project once through the "project"
 * document (an organization's board, else a user's; absent when neither
 * has it), with the fields pm-bot can write (text, number, date, single
 * select) and the items that are issues. The answers go through
 * pmbot_state_parse(), so the state is sorted and validated exactly like a
 * file's. The backend remembers the board's node id and field types from
 * the last read that had a project: add_to_project and set_project_field
 * need such a read first (else PMBOT_EINVALID).
 *
 * perform: create_issue is one GraphQL createIssue carrying the labels
 * (by node id: the repository's labels are read once per backend, 100 a
 * page, and a missing label is created once through REST), and with
 * PMBOT_BACKEND_FUSES the parent, the board and the issue type (matched
 * case-insensitively among the repository's issue types; none set when
 * none matches); when GitHub refuses such a request the issue is created
 * alone. REST for other issue writes, labels, sub-issues and dependencies,
 * GraphQL for the board. perform_batch batches add_dependency and
 * remove_dependency (aliased addBlockedBy / removeBlockedBy by node id, an
 * alias GitHub refuses going again alone through REST with its read-back)
 * and set_project_field: up to
 * PMBOT_GITHUB_FIELD_BATCH aliased mutations (f0, f1, ...:
 * updateProjectV2ItemFieldValue, clearProjectV2ItemFieldValue for null
 * values) per GraphQL request, sent as repeat-safe, each alias settled by
 * data.fN and by the errors whose path[0] names it. create_issue is never retried: a failure after the request
 * may have reached GitHub is PMBOT_ERROR saying the outcome is unknown (the
 * executor re-reads). Every other operation is sent as repeat-safe.
 * set_parent and add/remove_dependency read the relationship back and fail
 * with PMBOT_ERROR when it did not land; removing a label that is already
 * gone succeeds. GitHub's 4xx refusals are PMBOT_EINVALID, a write the
 * client's write budget stopped unsent PMBOT_BACKEND_EPAUSED (resume_at set
 * from pmbot_github_budget_resume()), everything else PMBOT_ERROR; `err`
 * names the operation and the client's (token-free) reason.
 *
 * `self_login` (may be NULL) is copied; it is the login the token acts as.
 * `*out` is new; free it with (*out)->free(*out). PMBOT_OK, PMBOT_EINVALID
 * (no client) or PMBOT_ERROR (out of memory); `err` says why (appended).
 */
#define PMBOT_GITHUB_FIELD_BATCH 50
struct pmbot_github_client;
PMBOT_WARN_UNUSED int pmbot_github_backend_open(pmbot_backend **out, struct pmbot_github_client *client,
	const char *self_login, pmbot_buf *err);

#endif
