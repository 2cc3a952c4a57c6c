#!/usr/bin/env bash
# End to end: `pm-bot action` under attack (issue 12), against the loopback
# emulator with GitHub-shaped webhook payloads. Each case is an attack and
# asserts the secure behaviour: a fork's report naming a private repository
# outside the allowlist reads nothing of it and shows diagnostics only; an
# outsider's `/pm-bot plan` on a fork is refused; approvals of closed and of
# merged pull requests write nothing; two approvals at once apply once; an
# oversized push is refused before parsing; a committed `.pm-bot` symlink
# steers no write; a committed corrupt ledger does not stop a plan.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
ROOT=$PWD
CASE=setup
need_node
emu_env
unset PMBOT_GITHUB_CACHE_DIR RUNNER_TEMP
TOKEN=ghs_attackE2Etoken0a1b2c3d4e5f6a
trap 'scripts/emu.sh stop "$EMU" >/dev/null 2>&1; [ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT

# main: the configuration (repos: acme/widgets only; at most 50 items a run).
# fork: a report whose scope names the private acme/secret.
# plan: the ordinary Q4 plan. huge: four 2.3 MB reports (9 MB, ~1M items).
W=$TMP/work
config_repo "$W"
MAIN_SHA=$(gitc "$W" rev-parse HEAD)
gitc "$W" checkout -qb fork
python3 "$ROOT/bench/gen_report.py" 2 -o "$W/plans/steal.md"
sed -i 's/"widgets"/"secret"/' "$W/plans/steal.md"
gitc "$W" add plans && gitc "$W" commit -qm "scope: acme/secret"
FORK_SHA=$(gitc "$W" rev-parse HEAD)
gitc "$W" checkout -q main
gitc "$W" checkout -qb plan
mkdir -p "$W/plans"
cp "$ROOT/examples/plans/2026-q4-checkout.md" "$W/plans/q4.md"
gitc "$W" add plans && gitc "$W" commit -qm "plan Q4"
PLAN_SHA=$(gitc "$W" rev-parse HEAD)
gitc "$W" checkout -q main
gitc "$W" checkout -qb huge
mkdir -p "$W/plans"
python3 - "$W/plans" <<'PY'
import sys
for k in range(4):
    with open(f"{sys.argv[1]}/huge{k}.md", "w") as f:
        f.write("# huge\n\n```pm-bot:report-ir/v1\n{\"schema_version\":\"report_ir/v1\",\"tasks\":[")
        f.write(",".join('{"stable_id":"t:%d"}' % i for i in range(k * 250000, (k + 1) * 250000)))
        f.write("]}\n```\n")
PY
gitc "$W" add plans && gitc "$W" commit -qm "9 MB of tasks"
HUGE_SHA=$(gitc "$W" rev-parse HEAD)
gitc "$W" checkout -q main

emu_seed "$TMP/seed.json" "$(cat <<'PY'
fork, base, plan = args
st["repositories"].append({"repo": "acme/secret", "issues": [{
    "number": 1, "database_id": 77000001, "node_id": "I_secret1", "title": "SECRET-TITLE merger talks",
    "body": "SECRET-BODY do not publish", "labels": [], "state": "open", "author": "alice",
    "author_type": "User", "updated_at": "2026-11-01T00:00:00Z", "parent": None, "blocked_by": []}]})
def pull(n, sha, head_repo, state="open", merged=False):
    return {"repo": "acme/widgets", "number": n, "title": f"PR {n}", "user": "eve", "state": state,
            "merged": merged, "head": {"sha": sha, "ref": "x", "repo": head_repo},
            "base": {"ref": "main", "sha": base}}
seed["tokens"]["tok-alice"] = {"login": "alice", "scopes": ["repo"]}
seed.update({
    "collaborators": {"acme/widgets": {"alice": "maintain", "bob": "read", "github-actions[bot]": "write"},
                      "acme/secret": {"alice": "admin", "github-actions[bot]": "write"}},
    "pulls": [pull(1, fork, "eve/widgets"), pull(2, plan, "acme/widgets", "closed"),
              pull(3, plan, "acme/widgets", "closed", True), pull(4, plan, "acme/widgets")],
})
PY
)" "$FORK_SHA" "$MAIN_SHA" "$PLAN_SHA"
emu_start "$TMP/seed.json"
export GITHUB_REPOSITORY=acme/widgets GITHUB_WORKSPACE=$W GITHUB_SHA=$MAIN_SHA GITHUB_RUN_ID=2001
export RUNNER_TEMP=$TMP/runner
mkdir -p "$RUNNER_TEMP"

REPO_JSON='{"id": 1296269, "name": "widgets", "full_name": "acme/widgets", "private": false, "owner": {"login": "acme", "type": "Organization"}, "default_branch": "main"}'
pr_event() { # NUMBER HEAD_REPO HEAD_SHA [FILE]
	event pull_request "${4:-$TMP/ev.json}" "{'action': 'opened', 'number': $1, 'repository': repo,
	 'sender': {'login': 'eve', 'type': 'User'},
	 'pull_request': {'number': $1, 'state': 'open', 'user': {'login': 'eve', 'type': 'User'},
	  'head': {'ref': 'x', 'sha': '$3', 'repo': dict(repo, full_name='$2')},
	  'base': {'ref': 'main', 'sha': '$MAIN_SHA', 'repo': repo}}}"
}
COMMENT_ID=0
post_comment() { # NUMBER LOGIN-TOKEN BODY
	COMMENT_ID=$(api "$2" POST "/repos/acme/widgets/issues/$1/comments" \
		"$(python3 -c 'import json,sys; print(json.dumps({"body": sys.argv[1]}))' "$3")" | py - 'str(d["id"])')
}
comment_event() { # NUMBER LOGIN BODY [FILE]
	event issue_comment "${4:-$TMP/ev.json}" "{'action': 'created', 'repository': repo,
	 'sender': {'login': '$2', 'type': 'User'},
	 'issue': {'number': $1, 'title': 'x', 'state': 'open', 'user': {'login': 'eve', 'type': 'User'},
	   'pull_request': {'url': '$URL/repos/acme/widgets/pulls/$1'}},
	 'comment': {'id': $COMMENT_ID, 'body': '''$3''', 'user': {'login': '$2', 'type': 'User'}}}"
}
action() { # [STATUS]
	: >"$TMP/gh-out"
	: >"$TMP/summary"
	run "${1:-0}" env GITHUB_OUTPUT="$TMP/gh-out" GITHUB_STEP_SUMMARY="$TMP/summary" "$PMBOT" action
}
output() { sed -n "s/^$1=//p" "$TMP/gh-out"; }
comments() { ctl GET /_emu/state | py - "[c['body'] for c in d.get('comments', []) if c['issue'] == 'acme/widgets#$1' and c['user'] == 'github-actions[bot]']"; }
n_issues() { ctl GET /_emu/state | py - 'str(sum(len(r["issues"]) for r in d["state"]["repositories"] if r["repo"] == "acme/widgets"))'; }
# Requests that read a repository's issues (REST paths or GraphQL `repository` queries).
reads_of_repos() { ctl GET /_emu/requests | py - "str(sum(1 for r in d['requests'] if '/acme/secret' in r['path'] or (r['kind'] == 'graphql' and 'repository' in (r['operation'] or ''))))"; }
BASE_ISSUES=$(n_issues)

CASE="a fork's report naming a private repository outside the allowlist: nothing of it is read, the plan shows diagnostics only"
ctl DELETE /_emu/requests >/dev/null
pr_event 1 eve/widgets "$FORK_SHA"
action 2 && expect_eq "$(output result)" invalid && expect_in "$ERR" "REPO_NOT_ALLOWED" &&
	expect_eq "$(reads_of_repos)" 0 &&
	S=$(cat "$TMP/summary") && expect_in "$S" "REPO_NOT_ALLOWED" &&
	{ ! grep -q "SECRET" "$TMP/summary" "$TMP/out" "$TMP/err" || fail "private text was published"; } && ok

CASE="an outsider's /pm-bot plan on a fork pull request is refused without planning"
ctl DELETE /_emu/requests >/dev/null
post_comment 1 tok-alice "/pm-bot plan"
comment_event 1 bob "/pm-bot plan"
action 0 && expect_eq "$(output result)" denied && expect_in "$ERR" "may not re-plan a pull request from a fork" &&
	expect_eq "$(reads_of_repos)" 0 && expect_eq "$(comments 1)" "[]" &&
	grep -q '"FORK_PLAN_NOT_ALLOWED"' "$RUNNER_TEMP/pm-bot/audit.jsonl" && ok

CASE="a maintainer's /pm-bot plan on that fork still reads nothing of the private repository; the comment holds diagnostics only"
ctl DELETE /_emu/requests >/dev/null
comment_event 1 alice "/pm-bot plan"
action 2 && expect_eq "$(output result)" invalid && expect_eq "$(reads_of_repos)" 0 &&
	C=$(comments 1 | py - 'd[0]') && expect_in "$C" "REPO_NOT_ALLOWED" &&
	{ ! echo "$C" | grep -q "SECRET\|/pm-bot apply [0-9a-f]\{64\}" || fail "the comment shows foreign content or an approve command"; } && ok

CASE="an approval on a closed pull request is refused and writes nothing"
HASH=$("$PMBOT" plan --repo "$W" --rev "$PLAN_SHA" --config-rev main --backend github --format json 2>/dev/null | py - 'd["plan_hash"]')
post_comment 2 tok-alice "/pm-bot apply $HASH"
comment_event 2 alice "/pm-bot apply $HASH"
action 0 && expect_eq "$(output result)" denied && expect_in "$ERR" "is closed" &&
	expect_eq "$(n_issues)" "$BASE_ISSUES" && expect_eq "$(comments 2)" "[]" &&
	grep -q '"PR_CLOSED"' "$RUNNER_TEMP/pm-bot/audit.jsonl" && ok

CASE="an approval on a merged pull request is refused and writes nothing"
post_comment 3 tok-alice "/pm-bot apply $HASH"
comment_event 3 alice "/pm-bot apply $HASH"
action 0 && expect_eq "$(output result)" denied && expect_in "$ERR" "is merged" &&
	expect_eq "$(n_issues)" "$BASE_ISSUES" && expect_eq "$(comments 3)" "[]" &&
	grep -q '"PR_MERGED"' "$RUNNER_TEMP/pm-bot/audit.jsonl" && ok

CASE="two approvals processed at once with 1.5 s write latency apply once"
pr_event 4 acme/widgets "$PLAN_SHA"
action 0 && HASH=$(output plan_hash) && expect_eq "$(output result)" planned
post_comment 4 tok-alice "/pm-bot apply $HASH"
comment_event 4 alice "/pm-bot apply $HASH" "$TMP/ev-a.json"
post_comment 4 tok-alice "/pm-bot apply $HASH"
comment_event 4 alice "/pm-bot apply $HASH" "$TMP/ev-b.json"
ctl POST /_emu/faults '{"count": 1000, "match": {"method": "POST"}, "delay_ms": 1500}' >/dev/null
mkdir -p "$TMP/ra" "$TMP/rb"
GITHUB_EVENT_PATH=$TMP/ev-a.json GITHUB_RUN_ID=3001 RUNNER_TEMP=$TMP/ra GITHUB_OUTPUT=$TMP/out-a \
	GITHUB_STEP_SUMMARY=/dev/null "$PMBOT" action >"$TMP/a.out" 2>"$TMP/a.err" &
PA=$!
GITHUB_EVENT_PATH=$TMP/ev-b.json GITHUB_RUN_ID=3002 RUNNER_TEMP=$TMP/rb GITHUB_OUTPUT=$TMP/out-b \
	GITHUB_STEP_SUMMARY=/dev/null "$PMBOT" action >"$TMP/b.out" 2>"$TMP/b.err" &
PB=$!
wait $PA; SA=$?
wait $PB; SB=$?
ctl DELETE /_emu/faults >/dev/null
RESULTS=$(sed -n 's/^result=//p' "$TMP/out-a" "$TMP/out-b" | sort | tr '\n' ' ')
expect_eq "$SA$SB" 00 && expect_eq "$RESULTS" "applied busy " &&
	expect_eq "$(n_issues)" $((BASE_ISSUES + 7)) &&
	{ ! api "$TOKEN" GET "/repos/acme/widgets/labels/pm-bot%3Alock%3Apr-4" >/dev/null || fail "the lock was not released"; } && ok

CASE="a 9 MB push of four reports with 1M items is refused from the blobs' sizes, before parsing"
event push "$TMP/ev.json" "{'ref': 'refs/heads/main', 'before': '0'*40, 'after': '$HUGE_SHA', 'repository': repo, 'sender': {'login': 'eve', 'type': 'User'}}"
TIME=/usr/bin/time
[ -x "$TIME" ] || TIME=
run 2 env GITHUB_OUTPUT="$TMP/gh-out" GITHUB_STEP_SUMMARY="$TMP/summary" $TIME ${TIME:+-v} "$PMBOT" action &&
	expect_in "$ERR" "INPUT_TOO_LARGE" && expect_in "$ERR" "limits.max_total_bytes" &&
	{ [ -z "$TIME" ] || echo "  (9 MB push: max RSS $(sed -n 's/.*Maximum resident set size (kbytes): //p' "$TMP/err") kB, $(sed -n 's/.*Elapsed (wall clock) time.*: //p' "$TMP/err") wall)"; } && ok

CASE="items over limits.max_items stop the run before any graph is built"
sed -i 's/^repos:$/limits:\n  max_items: 5\nrepos:/' "$W/.github/pm-bot.yml"
gitc "$W" commit -qam "at most 5 items"
pr_event 4 acme/widgets "$PLAN_SHA"
action 2 && expect_in "$ERR" "TOO_MANY_ITEMS" && ok
gitc "$W" reset -q --hard HEAD~1

CASE="a committed .pm-bot symlink steers no write outside the workspace"
mkdir -p "$TMP/outside"
ln -s "$TMP/outside" "$W/.pm-bot"
pr_event 4 acme/widgets "$PLAN_SHA"
RUNNER_TEMP= action 0 && expect_in "$OUT" "not a plain directory" &&
	{ [ ! -e "$TMP/outside/audit.jsonl" ] || fail "the ledger was written through the symlink"; } &&
	action 0 && { [ ! -e "$TMP/outside/audit.jsonl" ] || fail "written through the symlink"; } && ok
rm "$W/.pm-bot"

CASE="a corrupt committed ledger: the plan is still shown, with a warning"
mkdir -p "$W/.pm-bot"
printf '{"seq":1,"event":"approval"}\nnot json\n' >"$W/.pm-bot/audit.jsonl"
gitc "$W" checkout -q plan
gitc "$W" -c core.hooksPath=/dev/null checkout -q main
pr_event 4 acme/widgets "$PLAN_SHA"
RUNNER_TEMP= action 0 && expect_in "$OUT" "the audit ledger is corrupt" &&
	expect_eq "$(output result)" no_changes && ok

CASE="the token never appears in any output"
if grep -rqF "$TOKEN" "$TMP"/*.out "$TMP"/*.err "$TMP/out" "$TMP/err" "$RUNNER_TEMP" 2>/dev/null; then
	fail "the token was printed"
else
	ok
fi

finish
