#!/usr/bin/env bash
# End to end: `pm-bot action` with GitHub Actions event payloads shaped like
# GitHub's webhooks (pull_request, issue_comment, push, schedule) against the
# loopback emulator. The whole story: a PR opens and gets one plan comment, a
# read-only user's approval is refused, a stale hash is refused, an edited or
# bot comment is ignored, a config changed inside the PR is not used, the
# lock holds, a maintainer's approval applies, the next run shows no change;
# fork PRs and read-only tokens degrade to the job summary; push plans into
# the summary only; the scheduled field sync writes only differing values,
# reports unknown options and posts what needs approval on a tracking issue.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
ROOT=$PWD
CASE=setup
need_node
emu_env
unset PMBOT_GITHUB_CACHE_DIR
TOKEN=ghs_actionE2Etoken0a1b2c3d4e5f
RO_TOKEN=ghs_readONLYtoken9f8e7d6c5b4a
trap 'scripts/emu.sh stop "$EMU" >/dev/null 2>&1; rm -rf "$TMP"' EXIT

# The repository: main holds only the configuration; the PR branch adds the
# report and also tries to lower the approval bar in its own config.
W=$TMP/work
config_repo "$W"
MAIN_SHA=$(gitc "$W" rev-parse HEAD)
gitc "$W" checkout -qb feature
cp "$ROOT/examples/plans/2026-q4-checkout.md" "$W/plans/q4.md"
sed -i 's/min_permission: write/min_permission: read/' "$W/.github/pm-bot.yml"
gitc "$W" add plans .github && gitc "$W" commit -qm "plan Q4; and let anyone approve"
HEAD_SHA=$(gitc "$W" rev-parse HEAD)
gitc "$W" checkout -qb broken
sed -i '0,/epic_id: epic:checkout-reliability/s//epic_id: epic:nope/' "$W/plans/q4.md"
gitc "$W" commit -qam "an invalid priority"
BROKEN_SHA=$(gitc "$W" rev-parse HEAD)
gitc "$W" checkout -q main

emu_seed "$TMP/seed.json" "$(cat <<'PY'
ro, head, base, broken = args
seed["tokens"].update({
    ro: {"login": "github-actions[bot]", "scopes": ["repo", "project"], "read_only": True},
    "tok-alice": {"login": "alice", "scopes": ["repo"]},
})
seed.update({
    "collaborators": {"acme/widgets": {"alice": "maintain", "bob": "read", "github-actions[bot]": "write"}},
    "pulls": [
        {"repo": "acme/widgets", "number": 1, "title": "Plan Q4", "user": "alice", "state": "open",
         "head": {"sha": head, "ref": "feature", "repo": "acme/widgets"},
         "base": {"ref": "main", "sha": base}},
        {"repo": "acme/widgets", "number": 2, "title": "Plan Q4 from a fork", "user": "eve", "state": "open",
         "head": {"sha": head, "ref": "feature", "repo": "eve/widgets"},
         "base": {"ref": "main", "sha": base}},
        {"repo": "acme/widgets", "number": 3, "title": "A broken plan", "user": "alice", "state": "open",
         "head": {"sha": broken, "ref": "broken", "repo": "acme/widgets"},
         "base": {"ref": "main", "sha": base}},
    ],
})
PY
)" "$RO_TOKEN" "$HEAD_SHA" "$MAIN_SHA" "$BROKEN_SHA"
emu_start "$TMP/seed.json"
export PMBOT_GITHUB_CACHE_DIR="$TMP/cache" GITHUB_REPOSITORY=acme/widgets GITHUB_WORKSPACE=$W
export GITHUB_SHA=$MAIN_SHA GITHUB_RUN_ID=1001

ALL_OUT="$TMP/all-output"
: >"$ALL_OUT"

# The repository JSON every payload carries.
REPO_JSON='{"id": 1296269, "node_id": "R_kgDOABCDEF", "name": "widgets", "full_name": "acme/widgets", "private": false, "owner": {"login": "acme", "id": 9919, "type": "Organization"}, "html_url": "https://github.com/acme/widgets", "default_branch": "main"}'

pr_event() { # ACTION NUMBER HEAD_REPO HEAD_SHA
	event pull_request "$TMP/ev.json" "{'action': '$1', 'number': $2, 'repository': repo,
	 'sender': {'login': 'alice', 'type': 'User'},
	 'pull_request': {'number': $2, 'state': 'open', 'title': 'Plan Q4', 'user': {'login': 'alice', 'type': 'User'},
	  'head': {'ref': 'feature', 'sha': '$4', 'repo': dict(repo, full_name='$3', fork='$3' != 'acme/widgets')},
	  'base': {'ref': 'main', 'sha': '$MAIN_SHA', 'repo': repo}}}"
}

COMMENT_ID=5000
comment_event() { # ACTION NUMBER LOGIN TYPE BODY [IS_PR]
	COMMENT_ID=$((COMMENT_ID + 1))
	local is_pr=${6:-1}
	# The comment exists on GitHub too, so reactions to it work.
	event issue_comment "$TMP/ev.json" "{'action': '$1', 'repository': repo,
	 'sender': {'login': '$3', 'type': '$4'},
	 'issue': dict({'number': $2, 'title': 'x', 'state': 'open', 'user': {'login': 'alice', 'type': 'User'}},
	   **({'pull_request': {'url': '$URL/repos/acme/widgets/pulls/$2'}} if $is_pr else {})),
	 'comment': {'id': $COMMENT_ID, 'body': '''$5''', 'user': {'login': '$3', 'type': '$4'}}}"
}

# action [STATUS]: run pm-bot action; outputs in $TMP/gh-out, summary in $TMP/summary.
action() {
	local want=${1:-0}
	: >"$TMP/gh-out"
	: >"$TMP/summary"
	run "$want" env GITHUB_OUTPUT="$TMP/gh-out" GITHUB_STEP_SUMMARY="$TMP/summary" "$PMBOT" action
	local st=$?
	cat "$TMP/out" "$TMP/err" "$TMP/summary" >>"$ALL_OUT"
	return $st
}
output() { sed -n "s/^$1=//p" "$TMP/gh-out"; }

# comments N: bodies of the comments on issue/PR N (JSON array).
comments() { ctl GET /_emu/state | py - "[c['body'] for c in d.get('comments', []) if c['issue'] == 'acme/widgets#$1']"; }
n_comments() { comments "$1" | py - 'str(len(d))'; }
# plan_comment_id N: the id of pm-bot's comment on N.
plan_comment_id() { ctl GET /_emu/state | py - "str([c['id'] for c in d.get('comments', []) if c['issue'] == 'acme/widgets#$1' and c['body'].startswith('<!-- pm-bot:plan ')][0])"; }
n_issues() { ctl GET /_emu/state | py - 'str(sum(len(r["issues"]) for r in d["state"]["repositories"]))'; }
reactions() { ctl GET /_emu/state | py - "' '.join(r['content'] for c in d.get('comments', []) if c.get('id') == $1 for r in c.get('reactions', []))"; }

# A user's comment must exist on GitHub for reactions; post it as that user.
post_comment() { # NUMBER BODY -> sets COMMENT_ID to the real id
	COMMENT_ID=$(api tok-alice POST "/repos/acme/widgets/issues/$1/comments" \
		"$(python3 -c 'import json,sys; print(json.dumps({"body": sys.argv[1]}))' "$2")" | py - 'str(d["id"])')
	COMMENT_ID=$((COMMENT_ID - 1))
}

CASE="a pull request gets one plan comment with a diagram, a table and the approve command"
pr_event opened 1 acme/widgets "$HEAD_SHA"
action 0 &&
	expect_eq "$(output result)" planned &&
	HASH=$(output plan_hash) && expect_eq "${#HASH}" 64 &&
	expect_eq "$(output changes)" "$("$PMBOT" plan --repo "$W" --rev "$HEAD_SHA" --config-rev main --backend github --format json 2>/dev/null | py - 'str(len(d["changesets"]))')" &&
	expect_eq "$(n_comments 1)" 1 &&
	C=$(comments 1 | py - 'd[0]') &&
	expect_in "$C" "<!-- pm-bot:plan " && expect_in "$C" '```mermaid' &&
	expect_in "$C" "/pm-bot apply $HASH" && expect_in "$(cat "$TMP/summary")" "$HASH" &&
	expect_eq "$(n_issues)" 0 && ok

CASE="a second run on the same PR edits the comment instead of adding one"
pr_event synchronize 1 acme/widgets "$HEAD_SHA"
action 0 && expect_eq "$(output plan_hash)" "$HASH" && expect_eq "$(n_comments 1)" 1 && ok

CASE="a read-only user's approval is refused, even though the PR's own config would allow it"
post_comment 1 "/pm-bot apply $HASH"
comment_event created 1 bob User "/pm-bot apply $HASH"
action 0 && expect_eq "$(output result)" denied && expect_eq "$(n_issues)" 0 &&
	expect_in "$OUT" '"event":"denial"' && expect_in "$OUT" '"actor":"bob"' &&
	expect_in "$(reactions "$COMMENT_ID")" "-1" &&
	grep -q '"denial"' "$W/.pm-bot/audit.jsonl" && ok

CASE="an edited comment, a bot's comment and a comment without a command are ignored"
comment_event edited 1 alice User "/pm-bot apply $HASH"
action 0 && expect_eq "$(output result)" ignored &&
	comment_event created 1 'github-actions[bot]' Bot "/pm-bot apply $HASH" &&
	action 0 && expect_eq "$(output result)" ignored &&
	comment_event created 1 alice User "Looks good to me" &&
	action 0 && expect_eq "$(output result)" ignored &&
	comment_event created 1 alice User "> /pm-bot apply $HASH" &&
	action 0 && expect_eq "$(output result)" ignored &&
	expect_eq "$(n_issues)" 0 && ok

# The five comments this case posts (and the next case's one) count in later cases: pm-bot adds none of its own.
CASE="commands pm-bot does not understand are answered: bad hash, did you mean, help, and a denial names the permission"
post_comment 1 "/pm-bot apply abc"
comment_event created 1 alice User "/pm-bot apply abc"
action 0 && expect_eq "$(output result)" ignored && expect_in "$(reactions "$COMMENT_ID")" "confused" &&
	expect_in "$(cat "$TMP/summary")" '`abc` is not a 64-hex plan hash' &&
	expect_in "$OUT" 'is not a 64-hex plan hash' &&
	expect_in "$(comments 1 | py - 'd[0]')" '> Reply to `alice`: `abc` is not a 64-hex plan hash' &&
	post_comment 1 "/pm-bot aply $HASH" &&
	comment_event created 1 alice User "/pm-bot aply $HASH" &&
	action 0 && expect_in "$(reactions "$COMMENT_ID")" "confused" &&
	expect_in "$(cat "$TMP/summary")" 'did you mean `apply`?' &&
	C=$(comments 1 | py - 'd[0]') && expect_in "$C" 'did you mean `apply`?' &&
	expect_eq "$(grep -c '^<!-- pm-bot:reply -->$' <<<"$C")" 1 && expect_in "$C" "/pm-bot apply $HASH" &&
	post_comment 1 "/pm-bot help" &&
	comment_event created 1 alice User "/pm-bot help" &&
	action 0 && expect_in "$(reactions "$COMMENT_ID")" "+1" &&
	expect_in "$(cat "$TMP/summary")" '`/pm-bot apply HASH`' &&
	expect_in "$(comments 1 | py - 'd[0]')" '> Reply to `alice`: pm-bot commands: `/pm-bot plan`' && expect_in "$(comments 1 | py - 'd[0]')" '`/pm-bot apply HASH` (apply' &&
	post_comment 1 "/pm-bot apply @admin\`](http://evil)" &&
	comment_event created 1 alice User "/pm-bot apply @admin\`](http://evil)" &&
	action 0 && { ! grep -q '@admin\|http://evil' "$TMP/summary" "$TMP/out" || fail "the commenter's text was echoed raw"; } &&
	{ ! comments 1 | py - 'd[0]' | grep -q '@admin\|http://evil' || fail "the commenter's text reached the comment raw"; } &&
	post_comment 1 "/pm-bot apply $HASH" &&
	comment_event created 1 bob User "/pm-bot apply $HASH" &&
	action 0 && expect_eq "$(output result)" denied &&
	expect_in "$(cat "$TMP/summary")" 'Approval refused: @bob has permission "read"' &&
	expect_in "$(tail -n 1 "$TMP/out")" "pm-bot: denied" &&
	expect_in "$(comments 1 | py - 'd[0]')" '> Reply to `bob`: Approval refused: @' &&
	expect_in "$(comments 1 | py - 'd[0]')" 'has permission "read"; approving needs "write" or higher' &&
	expect_eq "$(n_issues)" 0 && ok

CASE="a reply is transient: the next plan drops it, and a PR without pm-bot's comment gets none"
post_comment 1 "/pm-bot plan"
comment_event created 1 alice User "/pm-bot plan"
action 0 && expect_eq "$(output result)" planned && C=$(comments 1 | py - 'd[0]') &&
	expect_in "$C" "/pm-bot apply $HASH" &&
	{ ! grep -q 'pm-bot:reply\|Reply to' <<<"$C" || fail "the reply outlived the plan"; } &&
	comment_event created 3 alice User "/pm-bot help" &&
	action 0 && expect_eq "$(output result)" ignored && expect_eq "$(n_comments 3)" 0 &&
	expect_in "$ERR$OUT" "no plan comment on this pull request yet" && ok

CASE="the job log ends with one summary line: result, changes, plan hash and the comment's URL"
pr_event synchronize 1 acme/widgets "$HEAD_SHA"
action 0 && L=$(tail -n 1 "$TMP/out") &&
	expect_in "$L" "pm-bot: planned, " && expect_in "$L" " changes, plan ${HASH:0:8}, comment https://github.com/acme/widgets/pull/1#issuecomment-" &&
	GITHUB_SERVER_URL=https://ghe.example.com:8443/ action 0 &&
	expect_in "$(tail -n 1 "$TMP/out")" ", comment https://ghe.example.com:8443/acme/widgets/pull/1#issuecomment-" &&
	GITHUB_SERVER_URL='https://evil.example/x?y' action 0 &&
	expect_in "$(tail -n 1 "$TMP/out")" ", comment https://github.com/acme/widgets/pull/1#issuecomment-" &&
	expect_in "$OUT" "::warning::GITHUB_SERVER_URL is not an https:// server address" &&
	{ ! grep -q 'evil' "$TMP/out" "$TMP/err" || fail "the refused value was echoed"; } && ok

CASE="a command in indented code, an HTML comment or a collapsed <details> approves nothing"
comment_event created 1 alice User "    /pm-bot apply $HASH"
action 0 && expect_eq "$(output result)" ignored &&
	comment_event created 1 alice User "LGTM <!--\n/pm-bot apply $HASH\n-->" &&
	action 0 && expect_eq "$(output result)" ignored &&
	comment_event created 1 alice User "<!--\n\n/pm-bot apply $HASH\n\n-->" &&
	action 0 && expect_eq "$(output result)" ignored &&
	comment_event created 1 alice User "<details><summary>notes</summary>\n\n/pm-bot apply $HASH\n\n</details>" &&
	action 0 && expect_eq "$(output result)" ignored &&
	comment_event created 1 alice User "> quoting\n/pm-bot apply $HASH" &&
	action 0 && expect_eq "$(output result)" ignored &&
	expect_eq "$(n_issues)" 0 && ok

CASE="a stale hash is refused and the comment shows the current plan"
post_comment 1 "/pm-bot apply 0000000000000000000000000000000000000000000000000000000000000000"
comment_event created 1 alice User "/pm-bot apply 0000000000000000000000000000000000000000000000000000000000000000"
action 0 && expect_eq "$(output result)" stale && expect_eq "$(n_issues)" 0 &&
	expect_in "$(comments 1 | py - 'd[0]')" "the plan is stale" &&
	expect_in "$(comments 1 | py - 'd[0]')" "- the plan shown was \`${HASH:0:8}\`, not the approved \`00000000\`" &&
	expect_in "$(reactions "$COMMENT_ID")" "confused" && expect_eq "$(n_comments 1)" 9 && ok

CASE="a run holding the lock keeps a second run from applying"
# The lock is the repository label pm-bot:lock:pr-1 (docs/action.md#concurrency); run 999 holds it now.
api "$TOKEN" POST /repos/acme/widgets/labels "{\"name\": \"pm-bot:lock:pr-1\", \"color\": \"ededed\", \"description\": \"run=999 at=$(date +%s)\"}" >/dev/null
post_comment 1 "/pm-bot apply $HASH"
comment_event created 1 alice User "/pm-bot apply $HASH"
action 0 && expect_eq "$(output result)" busy && expect_eq "$(n_issues)" 0 &&
	expect_in "$ERR" "run 999 is applying this plan" && ok

CASE="/pm-bot plan re-plans"
post_comment 1 "/pm-bot plan"
comment_event created 1 alice User "/pm-bot plan"
action 0 && expect_eq "$(output result)" planned && expect_eq "$(output plan_hash)" "$HASH" &&
	expect_in "$(comments 1 | py - 'd[0].split("\n")[0]')" '"status":"planned"' && ok

# Run 999 died seven hours ago, still holding the lock: the next approval takes it over.
api "$TOKEN" DELETE "/repos/acme/widgets/labels/pm-bot%3Alock%3Apr-1" >/dev/null
api "$TOKEN" POST /repos/acme/widgets/labels "{\"name\": \"pm-bot:lock:pr-1\", \"color\": \"ededed\", \"description\": \"run=999 at=$(( $(date +%s) - 7 * 3600 ))\"}" >/dev/null
CASE="a maintainer's approval applies the plan and the comment reports it"
post_comment 1 "/pm-bot apply $HASH"
comment_event created 1 alice User "/pm-bot apply $HASH"
action 0 && expect_eq "$(output result)" applied && expect_eq "$(n_issues)" 7 &&
	expect_in "$OUT" '"event":"approval"' && expect_in "$(reactions "$COMMENT_ID")" "+1" &&
	expect_in "$(comments 1 | py - 'd[0]')" "Applied" && expect_eq "$(n_comments 1)" 12 &&
	"$PMBOT" audit verify "$W/.pm-bot/audit.jsonl" >/dev/null &&
	{ ! api "$TOKEN" GET "/repos/acme/widgets/labels/pm-bot%3Alock%3Apr-1" >/dev/null || fail "the lock was not released"; } && ok

CASE="the ledger's head is published in the comment, the job summary and the outputs"
LEDGER_HEAD=$("$PMBOT" audit verify "$W/.pm-bot/audit.jsonl" | sed -n 's/^head \([0-9a-f]\{64\}\) .*/\1/p')
expect_eq "$(output audit_head)" "$LEDGER_HEAD" &&
	expect_in "$(cat "$TMP/summary")" "Audit ledger head after this run: \`$LEDGER_HEAD\`" &&
	expect_in "$(comments 1 | py - 'd[0]')" "Audit ledger head: \`$LEDGER_HEAD\`" &&
	"$PMBOT" audit verify --head "$LEDGER_HEAD" "$W/.pm-bot/audit.jsonl" >/dev/null && ok

CASE="/pm-bot plan after an apply keeps a history line of it, mentioning nobody"
APPLIED_LINE=$(comments 1 | py - 'd[0]' | grep '^\*\*Applied\*\* ')
N_APPLIED=$(echo "$APPLIED_LINE" | sed -n 's/^\*\*Applied\*\* \([0-9]*\) of \([0-9]*\) .*/\1 of \2/p')
HISTORY="*Last apply: $N_APPLIED changes applied, approved by \`alice\` (plan \`${HASH:0:8}\`).*"
post_comment 1 "/pm-bot plan"
comment_event created 1 alice User "/pm-bot plan"
action 0 && expect_eq "$(output result)" no_changes && C=$(comments 1 | py - 'd[0]') &&
	expect_in "$N_APPLIED" " of " && expect_in "$C" "$HISTORY" &&
	{ ! echo "$C" | grep -q '@alice\|\*\*Applied\*\*' || fail "the re-plan mentions or repeats the notice"; } && ok

CASE="the next run on the PR shows no change, in the same comment, and carries the history line"
pr_event synchronize 1 acme/widgets "$HEAD_SHA"
action 0 && expect_eq "$(output result)" no_changes && expect_eq "$(output changes)" 0 &&
	expect_in "$(comments 1 | py - 'd[0]')" "No changes" && expect_eq "$(n_issues)" 7 &&
	expect_in "$(comments 1 | py - 'd[0]')" "$HISTORY" && ok

CASE="an approval for a head that moved since the plan is stale"
gitc "$W" checkout -q feature
sed -i 's/Add a preStop hook that waits for in-flight payments/Add a preStop hook that waits for every in-flight payment/' "$W/plans/q4.md"
gitc "$W" commit -qam "edit one title"
NEW_HEAD=$(gitc "$W" rev-parse HEAD)
gitc "$W" checkout -q main
pr_event synchronize 1 acme/widgets "$NEW_HEAD"
ctl POST /_emu/pulls/acme/widgets/1/head "{\"sha\": \"$NEW_HEAD\"}" >/dev/null
action 0 && expect_eq "$(output changes)" 1 && H2=$(output plan_hash) &&
	NEWER=$(gitc "$W" commit-tree -p "$NEW_HEAD" -m "empty" "$NEW_HEAD^{tree}") &&
	gitc "$W" update-ref refs/heads/feature "$NEWER" &&
	ctl POST /_emu/pulls/acme/widgets/1/head "{\"sha\": \"$NEWER\"}" >/dev/null &&
	post_comment 1 "/pm-bot apply $H2" &&
	comment_event created 1 alice User "/pm-bot apply $H2" &&
	action 0 && expect_eq "$(output result)" stale &&
	expect_eq "$(ctl GET /_emu/state | py - 'str(sum(1 for r in d["state"]["repositories"] for i in r["issues"] if "every in-flight payment" in i["title"]))')" 0 &&
	expect_in "$(comments 1 | py - 'd[0]')" "the plan is stale" &&
	expect_in "$(comments 1 | py - 'd[0]')" "- the pull request's head moved from \`${NEW_HEAD:0:7}\` to \`${NEWER:0:7}\`" &&
	expect_in "$(comments 1 | py - 'd[0]')" "$HISTORY" && ok

CASE="an approval after someone touched an issue the plan changes names that issue"
H3=$(output plan_hash)
PRESTOP=$(ctl GET /_emu/state | py - "str([i['number'] for r in d['state']['repositories'] for i in r['issues'] if 'preStop' in i['title']][0])")
api tok-alice POST "/repos/acme/widgets/issues/$PRESTOP/labels" '{"labels": ["needs-review"]}' >/dev/null
post_comment 1 "/pm-bot apply $H3"
comment_event created 1 alice User "/pm-bot apply $H3"
action 0 && expect_eq "$(output result)" stale && C=$(comments 1 | py - 'd[0]') &&
	expect_in "$C" "- \`acme/widgets#$PRESTOP\` was updated at \`" &&
	{ ! echo "$C" | grep -q "head moved" || fail "the head did not move"; } && ok

CASE="a hand-edited comment gives no history line: nothing of it is copied"
CID=$(plan_comment_id 1)
FORGED="$(comments 1 | py - 'd[0].split("\n")[0]')

**Applied** 9 of 9 changes, approved by @alice <img src=x onerror=alert(1)>.
*Last apply: 1 of 1 changes applied, approved by \`mallory\` (plan \`deadbeef\`).* [x](https://evil)"
api "$TOKEN" PATCH "/repos/acme/widgets/issues/comments/$CID" "$(python3 -c 'import json,sys; print(json.dumps({"body": sys.argv[1]}))' "$FORGED")" >/dev/null
post_comment 1 "/pm-bot plan"
comment_event created 1 alice User "/pm-bot plan"
action 0 && C=$(comments 1 | py - 'd[0]') &&
	{ ! echo "$C" | grep -q 'Last apply\|mallory\|img src\|https://evil' || fail "text of the edited comment was carried"; } && ok

CASE="invalid reports: the comment lists each error with file and line, and the run fails"
pr_event opened 3 acme/widgets "$BROKEN_SHA"
action 2 && expect_eq "$(output result)" invalid && expect_eq "$(n_comments 3)" 1 &&
	C=$(comments 3 | py - 'd[0]') && expect_in "$C" "plans/q4.md:" && expect_in "$C" '`UNKNOWN_EPIC`' &&
	expect_in "$OUT" "::error file=plans/q4.md,line=" && expect_in "$OUT" ",title=UNKNOWN_EPIC::" &&
	{ ! echo "$C" | grep -q "/pm-bot apply [0-9a-f]\{64\}" || fail "an invalid plan offers an approve command"; } && ok

CASE="a fork PR gets its plan in the job summary and no comment"
pr_event opened 2 eve/widgets "$HEAD_SHA"
action 0 && expect_eq "$(output result)" summary_only && expect_eq "$(n_comments 2)" 0 &&
	expect_in "$(cat "$TMP/summary")" "Plan" && ok

CASE="a read-only token degrades to the job summary"
GH_TOKEN=$RO_TOKEN
export GH_TOKEN
pr_event opened 2 acme/widgets "$HEAD_SHA"
action 0 && expect_eq "$(output result)" summary_only && expect_eq "$(n_comments 2)" 0 &&
	expect_in "$OUT" "::warning::" && ok
GH_TOKEN=$TOKEN
export GH_TOKEN

CASE="push to the default branch plans into the summary only; other branches are ignored"
BEFORE=$(ctl GET /_emu/state | py - 'str(len(d.get("comments", [])))')
event push "$TMP/ev.json" "{'ref': 'refs/heads/main', 'before': '0'*40, 'after': '$MAIN_SHA', 'repository': repo, 'sender': {'login': 'alice', 'type': 'User'}}"
action 0 && expect_in "$(cat "$TMP/summary")" "No changes" && expect_eq "$(output result)" no_changes &&
	expect_eq "$(ctl GET /_emu/state | py - 'str(len(d.get("comments", [])))')" "$BEFORE" &&
	event push "$TMP/ev.json" "{'ref': 'refs/heads/feature', 'before': '0'*40, 'after': '$HEAD_SHA', 'repository': repo, 'sender': {'login': 'alice', 'type': 'User'}}" &&
	action 0 && expect_eq "$(output result)" ignored && ok

# Field sync: a human relabels one issue; the schedule writes only that value.
issue_by_title() { ctl GET /_emu/state | py - "str([i['number'] for r in d['state']['repositories'] for i in r['issues'] if '$1' in i['title']][0])"; }
field_of() { # NUMBER FIELD
	ctl GET /_emu/state | py - "str([it['values'].get('$2') for it in d['state']['project']['items'] if it['issue']=='acme/widgets#$1'][0])"
}
CASE="a first sync: pre-approved values of an issue not on the board wait with its add_to_project"
# An issue pm-bot manages that is not on the board yet (as on a new board).
NEW=$(api "$TOKEN" POST /repos/acme/widgets/issues "$(python3 -c 'import json; print(json.dumps({"title": "[task] first sync", "body": "### Priority\nP2\n\n### Size\nS\n\n<!-- pm-bot:id=task:first-sync rev=" + "0" * 64 + " -->"}))')" | py - 'str(d["number"])')
ctl DELETE /_emu/requests >/dev/null
event schedule "$TMP/ev.json" "{'schedule': '0 6 * * *', 'repository': repo}"
action 0 && expect_eq "$(output result)" planned &&
	expect_eq "$(ctl GET /_emu/requests | py - 'str(sum(1 for r in d["requests"] if r["kind"]=="graphql" and ("updateProjectV2ItemFieldValue" in (r["operation"] or "") or "addProjectV2ItemById" in (r["operation"] or ""))))')" 0 &&
	expect_eq "$(ctl GET /_emu/state | py - "str(sum(1 for it in d['state']['project']['items'] if it['issue']=='acme/widgets#$NEW'))")" 0 &&
	T=$(issue_by_title 'pm-bot: Projects field sync') &&
	expect_in "$(ctl GET /_emu/state | py - "[i['body'] for r in d['state']['repositories'] for i in r['issues'] if i['number'] == $T][0]")" "add\\_to\\_project" && ok
# It leaves pm-bot's care again (no marker), so the cases below see the board as before.
api "$TOKEN" PATCH "/repos/acme/widgets/issues/$NEW" '{"body": "taken over by a person"}' >/dev/null

CASE="the scheduled field sync writes only the value that differs"
N=$(issue_by_title "preStop")
OLD=$(field_of "$N" Priority)
NEWP=$([ "$OLD" = P1 ] && echo P3 || echo P1)
api tok-alice DELETE "/repos/acme/widgets/issues/$N/labels/prio:$OLD" >/dev/null
api tok-alice POST "/repos/acme/widgets/issues/$N/labels" "{\"labels\": [\"prio:$NEWP\"]}" >/dev/null
ctl DELETE /_emu/requests >/dev/null
event schedule "$TMP/ev.json" "{'schedule': '0 6 * * *', 'repository': repo}"
action 0 && expect_eq "$(output result)" applied && expect_eq "$(output changes)" 0 &&
	expect_eq "$(field_of "$N" Priority)" "$NEWP" &&
	expect_eq "$(ctl GET /_emu/requests | py - 'str(sum(1 for r in d["requests"] if r["kind"]=="graphql" and "updateProjectV2ItemFieldValue" in (r["operation"] or "")))')" 1 &&
	action 0 && expect_eq "$(output result)" no_changes && ok

CASE="a schedule payload without a repository falls back to GITHUB_REPOSITORY and GITHUB_REF"
event schedule "$TMP/ev.json" "{'schedule': '0 6 * * *'}"
GITHUB_REF=refs/heads/main action 0 && expect_eq "$(output result)" no_changes && ok

CASE="an option the board does not have is an error naming the options that exist"
event schedule "$TMP/ev.json" "{'schedule': '0 6 * * *', 'repository': repo}"
api tok-alice POST "/repos/acme/widgets/issues/$N/labels" '{"labels": ["area:billing"]}' >/dev/null
api tok-alice DELETE "/repos/acme/widgets/issues/$N/labels/area:checkout" >/dev/null
api tok-alice DELETE "/repos/acme/widgets/issues/$N/labels/area:payments" >/dev/null
action 2 && expect_in "$ERR" "PROJECT_UNKNOWN_OPTION" && expect_in "$ERR" "checkout" &&
	expect_in "$ERR" "payments" && ok

CASE="field updates that need approval go to a tracking issue and apply on /pm-bot apply there"
sed -i 's/^  - set_project_field$/  - create_issue/' "$W/.github/pm-bot.yml"
sed -i 's/^auto_approve:$/auto_approve:/' "$W/.github/pm-bot.yml"
gitc "$W" commit -qam "field updates need an approval"
export GITHUB_SHA=$(gitc "$W" rev-parse HEAD)
api tok-alice DELETE "/repos/acme/widgets/issues/$N/labels/area:billing" >/dev/null
api tok-alice POST "/repos/acme/widgets/issues/$N/labels" '{"labels": ["area:observability"]}' >/dev/null
event schedule "$TMP/ev.json" "{'schedule': '0 6 * * *', 'repository': repo}"
action 0 && expect_eq "$(output result)" planned && SH=$(output plan_hash) &&
	T=$(ctl GET /_emu/state | py - "str([i['number'] for r in d['state']['repositories'] for i in r['issues'] if i['title']=='pm-bot: Projects field sync'][0])") &&
	action 0 && expect_eq "$(ctl GET /_emu/state | py - "str(sum(1 for r in d['state']['repositories'] for i in r['issues'] if i['title']=='pm-bot: Projects field sync'))")" 1 &&
	post_comment "$T" "/pm-bot apply $SH" &&
	comment_event created "$T" bob User "/pm-bot apply $SH" 0 &&
	action 0 && expect_eq "$(output result)" denied &&
	comment_event created "$T" alice User "/pm-bot apply $SH" 0 &&
	action 0 && expect_eq "$(output result)" applied &&
	expect_eq "$(field_of "$N" Area)" observability &&
	event schedule "$TMP/ev.json" "{'schedule': '0 6 * * *', 'repository': repo}" &&
	action 0 && expect_eq "$(output result)" no_changes && ok

CASE="no comment pm-bot wrote is longer than 65,536 characters"
expect_eq "$(ctl GET /_emu/state | py - 'str(max(len(c["body"]) for c in d["comments"]) <= 65536)')" True && ok

CASE="the token never appears in any output"
if grep -qF -e "$TOKEN" -e "$RO_TOKEN" "$ALL_OUT" "$W/.pm-bot/audit.jsonl"; then
	fail "a token was printed"
else
	ok
fi

finish
