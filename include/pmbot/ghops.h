#ifndef PMBOT_GHOPS_H
#define PMBOT_GHOPS_H

#include "pmbot/buf.h"
#include "pmbot/common.h"
#include "pmbot/github.h"

/*
 * The GitHub calls `pm-bot action` makes around a pull request: who the
 * token is, the PR's head, a commenter's permission, the plan comment (find,
 * read, create or edit, react to) and the field-sync tracking issue. Each is
 * one REST request (or one list walked page by page) through the HTTP
 * client of pmbot/github.h, which handles rate limits, retries and pacing.
 *
 * Conventions shared by every function below:
 *  - `repo` is "OWNER/NAME". Owner, name and every login are sent
 *    percent-encoded (pmbot_github_path_escape), so "github-actions[bot]"
 *    travels as "github-actions%5Bbot%5D"; an empty part, "." or ".." is
 *    refused with PMBOT_EINVALID before anything is sent.
 *  - Reads ask GitHub unconditionally (PMBOT_GITHUB_NO_CACHE): every answer
 *    feeds an approval or a lock decision, and no comment or issue body is
 *    written to the ETag cache directory.
 *  - On failure a sentence saying what was attempted and why is appended to
 *    `err` (may be NULL; owned by the caller). It names method, URL, status
 *    and GitHub's message, never the token.
 *  - String outputs are new malloc'd strings the caller frees with free();
 *    every output is NULL / 0 unless the call returns 0.
 *
 * Returns: 0 on success, or
 *   PMBOT_GH_EFORBIDDEN   a write (POST/PATCH) answered 403 or 404 (that
 *                         is not a rate limit): the token may not write
 *                         here (a fork PR's read-only token, a workflow
 *                         without `issues: write` / `pull-requests: write`).
 *                         The caller degrades to the job summary. An edit of
 *                         a comment or issue deleted meanwhile also answers
 *                         404 and so lands here.
 *   PMBOT_ENOTFOUND       a read answered 404 (no such PR, comment or repo)
 *   PMBOT_EINVALID        a bad argument (see above; also a zero number, an
 *                         unknown reaction, a body that is not UTF-8)
 *   PMBOT_ERROR           out of memory, a 2xx answer lacking what the
 *                         function returns (e.g. a comment without an id),
 *                         or list pages whose Link headers lead in a circle
 *   PMBOT_GITHUB_*        the client's own codes (pmbot/github.h), passed
 *                         through: EHTTP for other non-2xx answers,
 *                         EUNKNOWN_OUTCOME for a create that may have landed
 *                         (never retried: re-read with the find function),
 *                         ETRANSPORT, ERATELIMIT, ETOOBIG, EGRAPHQL
 * (PMBOT_GH_EFORBIDDEN is in common.h)
 */

/* PMBOT_GH_EEXISTS (common.h): a create found the name taken (422 with GitHub's `already_exists` code). */

/* The token's own login: pmbot_github_viewer_login() in github.h. */

/*
 * The parts of a pull request the action decides on. Every member is a
 * malloc'd string owned by the struct: release with pmbot_gh_pull_clear().
 *   head_sha   the head commit, 40 (or 64) lower-case hex digits
 *   head_repo  full_name of the head repository; "" when GitHub no longer
 *              knows it (a deleted fork), which never equals base_repo
 *   base_repo  full_name of the base repository
 *   state      "open" or "closed" (a merged PR is "closed")
 *   merged     1 when GitHub says the PR was merged, else 0
 */
typedef struct {
	char *head_sha;
	char *head_repo;
	char *base_repo;
	char *state;
	int merged;
} pmbot_gh_pull;

/*
 * GET /repos/{o}/{r}/pulls/{number}. `*out` is filled (and owned by the
 * caller) on 0 and zeroed otherwise. PMBOT_ERROR when the answer lacks
 * one of the fields (`merged` included) or the head sha is not hex.
 */
int pmbot_gh_pull_get(pmbot_gh_pull *out, pmbot_github_client *c, const char *repo,
	long number, pmbot_buf *err);

/* Free the members of `p` and zero it; NULL and a zeroed struct are fine. */
void pmbot_gh_pull_clear(pmbot_gh_pull *p);

/*
 * `login`'s role on `repo`: GET /repos/{o}/{r}/collaborators/{login}/permission.
 * `*out` is one of "admin", "maintain", "write", "triage", "read", "none"
 * (new string, caller frees). `role_name` is used when it is one of the five
 * base roles, since `permission` reports maintain as "write" and triage as
 * "read"; a custom role (or an empty role_name, as GitHub gives for bots)
 * falls back to its base, `permission`. A 404 (no such user) is "none" and
 * returns 0. PMBOT_ERROR when neither field holds a known role.
 */
int pmbot_gh_permission(char **out, pmbot_github_client *c, const char *repo, const char *login,
	pmbot_buf *err);

/*
 * The oldest comment on issue or PR `number` whose body starts with
 * `header_prefix` (byte for byte) and whose author's login equals `author`
 * (ASCII case-insensitively, as GitHub compares logins):
 * GET /repos/{o}/{r}/issues/{number}/comments?per_page=100, then each
 * Link rel="next" page until a match, so a PR whose plan comment is among
 * the first hundred costs one request. `*id` is the comment id, 0 when no
 * comment matches (return 0). `body` may be NULL; else `*body` gets a copy
 * of the matching body (caller frees), NULL when none. `header_prefix` and
 * `author` must be non-empty.
 */
int pmbot_gh_comment_find(long long *id, char **body, pmbot_github_client *c, const char *repo,
	long number, const char *header_prefix, const char *author, pmbot_buf *err);

/*
 * Called for each comment, oldest first: its id, its author's login (NULL
 * when GitHub gives none), whether the author is a bot (user.type "Bot" or
 * a login ending in "[bot]") and its body ("" when null), all borrowed for
 * the call. Non-zero stops the listing.
 */
typedef int (*pmbot_gh_comment_fn)(void *payload, long long id, const char *login, int is_bot,
	const char *body);

/*
 * Every comment on issue or PR `number` to `fn`:
 * GET /repos/{o}/{r}/issues/{number}/comments?per_page=100 and each Link
 * rel="next" page, until `fn` stops it. 0, or < 0 with `err` told why.
 */
int pmbot_gh_comment_each(pmbot_github_client *c, const char *repo, long number,
	pmbot_gh_comment_fn fn, void *payload, pmbot_buf *err);

/*
 * The current body of comment `id`: GET /repos/{o}/{r}/issues/comments/{id}
 * (a lock re-read: never from a cache). `*body`: new string, caller frees;
 * "" for a comment GitHub reports with a null body. PMBOT_ENOTFOUND when the
 * comment was deleted.
 */
int pmbot_gh_comment_get(char **body, pmbot_github_client *c, const char *repo, long long id,
	pmbot_buf *err);

/*
 * Write a comment with `body` (UTF-8; GitHub refuses more than 65,536
 * characters with EHTTP 422, the caller keeps within it):
 *   id == 0  create: POST /repos/{o}/{r}/issues/{number}/comments {"body"}.
 *            A write that is never retried (a repeat would post twice):
 *            after PMBOT_GITHUB_EUNKNOWN_OUTCOME, find the comment again.
 *   id > 0   edit: PATCH /repos/{o}/{r}/issues/comments/{id} {"body"},
 *            repeat-safe and retried like a GET; `number` is not used.
 * `*out_id` gets the comment's id (from GitHub's answer).
 */
int pmbot_gh_comment_upsert(long long *out_id, pmbot_github_client *c, const char *repo,
	long number, long long id, const char *body, pmbot_buf *err);

/*
 * React to comment `comment_id`: POST
 * /repos/{o}/{r}/issues/comments/{comment_id}/reactions {"content"}.
 * `content` is one of GitHub's eight: "+1", "-1", "laugh", "confused",
 * "heart", "hooray", "rocket", "eyes" (else PMBOT_EINVALID). GitHub answers
 * 201 for a new reaction and 200 when this token already reacted so: both
 * are success, which also makes the request repeat-safe (retried).
 */
int pmbot_gh_reaction_add(pmbot_github_client *c, const char *repo, long long comment_id,
	const char *content, pmbot_buf *err);

/*
 * The tracking issue: the first open issue in GitHub's listing order
 * (newest first) authored by `author` (case-insensitively) whose body starts
 * with `header_prefix`: GET /repos/{o}/{r}/issues?state=open&creator={author}
 * &per_page=100, following Link rel="next" until a match, skipping pull
 * requests (the list holds both). `*number` is 0 when there is none
 * (return 0); `body` may be NULL, else `*body` gets a copy (caller frees).
 */
int pmbot_gh_issue_find(long *number, char **body, pmbot_github_client *c, const char *repo,
	const char *header_prefix, const char *author, pmbot_buf *err);

/*
 * Write the tracking issue:
 *   number == 0  create: POST /repos/{o}/{r}/issues {"title","body"};
 *                `title` is required. Never retried, as for comments.
 *   number > 0   edit: PATCH /repos/{o}/{r}/issues/{number} {"body"}, plus
 *                "title" when `title` is not NULL; repeat-safe (retried).
 * `*out_number` gets the issue's number (from GitHub's answer).
 */
int pmbot_gh_issue_upsert(long *out_number, pmbot_github_client *c, const char *repo,
	long number, const char *title, const char *body, pmbot_buf *err);

/*
 * Repository labels, the apply lock's primitive (src/action/lock.c): GitHub
 * creates a label name (compared without regard to case) at most once, so
 * a create either makes it or is told it exists, atomically. `name` has 1
 * to PMBOT_GH_LABEL_MAX bytes, a description at most PMBOT_GH_LABEL_DESC_MAX.
 */
#define PMBOT_GH_LABEL_MAX 50
#define PMBOT_GH_LABEL_DESC_MAX 100

/*
 * POST /repos/{o}/{r}/labels {"name", "color": "ededed", "description"}.
 * 0 created; PMBOT_GH_EEXISTS when the name is taken (decided on the
 * status and GitHub's error code, never its message); never retried, so
 * PMBOT_GITHUB_EUNKNOWN_OUTCOME means "read it back to know".
 */
PMBOT_WARN_UNUSED int pmbot_gh_label_create(pmbot_github_client *c, const char *repo,
	const char *name, const char *description, pmbot_buf *err);

/*
 * GET /repos/{o}/{r}/labels/{name}: `*description` gets its description
 * ("" when null; new string, caller frees). PMBOT_ENOTFOUND when there is
 * no such label.
 */
PMBOT_WARN_UNUSED int pmbot_gh_label_get(char **description, pmbot_github_client *c,
	const char *repo, const char *name, pmbot_buf *err);

/*
 * DELETE /repos/{o}/{r}/labels/{name} (repeat-safe, retried). 0 deleted,
 * PMBOT_ENOTFOUND when it was already gone (404).
 */
int pmbot_gh_label_delete(pmbot_github_client *c, const char *repo, const char *name,
	pmbot_buf *err);

#endif
