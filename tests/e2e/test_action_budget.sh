#!/usr/bin/env bash
# End to end: `pm-bot action` applying an approved plan bigger than the write
# budget, against the emulator enforcing the same (shrunken) secondary
# limits. The approval's run pauses: result "paused", the plan comment shows
# "Paused: k of N applied; resumes after T" and names the approved hash. A
# re-run of the same workflow (the same issue_comment payload) after T
# continues the same approval, with no new approval, until it is applied:
# no duplicate issue, edge or item and never a secondary-limit answer. A
# kept plan that does not hash to the approval, and a stale plan, still need
# a new approval.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
ROOT=$PWD
CASE=setup
need_node
emu_env
unset PMBOT_GITHUB_CACHE_DIR RUNNER_TEMP
TOKEN=ghs_budgetActionToken0a1b2c3d4e
trap 'scripts/emu.sh stop "$EMU" >/dev/null 2>&1; rm -rf "$TMP"' EXIT

W=$TMP/work
config_repo "$W"
MAIN_SHA=$(gitc "$W" rev-parse HEAD)
gitc "$W" checkout -qb feature
cp "$ROOT/examples/plans/2026-q4-checkout.md" "$W/plans/q4.md"
gitc "$W" add plans && gitc "$W" commit -qm "plan Q4"
HEAD_SHA=$(gitc "$W" rev-parse HEAD)
gitc "$W" checkout -q main

# Shrunken windows, the same in the emulator and in pm-bot's budget. A run
# holds 3 writes of each window back for after the apply (the comment, the
# lock), takes the lock and marks the comment (2 writes), applies about 11
# in 2 to 3 s, then the 6 s window would need a wait longer than the
# shortest window, so it pauses. The example's 23 writes span 2 or 3 runs.
BUDGET="8/1s,16/6s"
emu_seed "$TMP/seed.json" "$(cat <<'PY'
head, base = args
seed["tokens"]["tok-alice"] = {"login": "alice", "scopes": ["repo"]}
seed.update({
    "collaborators": {"acme/widgets": {"alice": "maintain", "github-actions[bot]": "write"}},
    "pulls": [
        {"repo": "acme/widgets", "number": 1, "title": "Plan Q4", "user": "alice", "state": "open",
         "head": {"sha": head, "ref": "feature", "repo": "acme/widgets"},
         "base": {"ref": "main", "sha": base}},
    ],
    "secondary_limits": {"windows": [{"count": 8, "seconds": 1}, {"count": 16, "seconds": 6}]},
})
PY
)" "$HEAD_SHA" "$MAIN_SHA"
emu_start "$TMP/seed.json"
export PMBOT_GITHUB_WRITE_BUDGET=$BUDGET
export GITHUB_REPOSITORY=acme/widgets GITHUB_WORKSPACE=$W GITHUB_SHA=$MAIN_SHA GITHUB_RUN_ID=2001
# What actions/cache carries from run to run: RUNNER_TEMP/pm-bot/cache's
# write-budget.json and plans/ (action.yml). Each run gets a fresh
# RUNNER_TEMP with only those restored, as on GitHub.
CARRIED=$TMP/carried
mkdir -p "$CARRIED"
new_runner_temp() {
	RUNNER_TEMP=$TMP/runner-$1
	rm -rf "$RUNNER_TEMP"
	mkdir -p "$RUNNER_TEMP/pm-bot/cache"
	cp -R "$CARRIED/." "$RUNNER_TEMP/pm-bot/cache/"
	export RUNNER_TEMP
}
carry() {
	rm -rf "$CARRIED" && mkdir -p "$CARRIED"
	[ -f "$RUNNER_TEMP/pm-bot/cache/write-budget.json" ] && cp "$RUNNER_TEMP/pm-bot/cache/write-budget.json" "$CARRIED/"
	[ -d "$RUNNER_TEMP/pm-bot/cache/plans" ] && cp -R "$RUNNER_TEMP/pm-bot/cache/plans" "$CARRIED/"
	return 0
}

REPO_JSON='{"id": 1296269, "node_id": "R_kgDOABCDEF", "name": "widgets", "full_name": "acme/widgets", "private": false, "owner": {"login": "acme", "id": 9919, "type": "Organization"}, "html_url": "https://github.com/acme/widgets", "default_branch": "main"}'

RUN=0
# action [STATUS]: one workflow run of pm-bot action, with a fresh RUNNER_TEMP.
action() {
	local want=${1:-0}
	RUN=$((RUN + 1))
	new_runner_temp "$RUN"
	: >"$TMP/gh-out"
	run "$want" env GITHUB_OUTPUT="$TMP/gh-out" GITHUB_STEP_SUMMARY="$TMP/summary" "$PMBOT" action
	local st=$?
	carry
	return $st
}
output() { sed -n "s/^$1=//p" "$TMP/gh-out"; }
comments() { ctl GET /_emu/state | py - "[c['body'] for c in d.get('comments', []) if c['issue'] == 'acme/widgets#$1']"; }
plan_comment() { comments 1 | py - '[c for c in d if c.startswith("<!-- pm-bot:plan ")][0]'; }
no_limit_answers() {
	expect_eq "$(ctl GET /_emu/requests | py - 'sum(1 for r in d["requests"] if r["secondary_limited"] or r["status"] in (403, 429))')" 0
}

CASE="the pull request gets its plan"
event pull_request "$TMP/ev.json" "{'action': 'opened', 'number': 1, 'repository': repo,
 'sender': {'login': 'alice', 'type': 'User'},
 'pull_request': {'number': 1, 'state': 'open', 'title': 'Plan Q4', 'user': {'login': 'alice', 'type': 'User'},
  'head': {'ref': 'feature', 'sha': '$HEAD_SHA', 'repo': repo}, 'base': {'ref': 'main', 'sha': '$MAIN_SHA', 'repo': repo}}}"
action 0 && expect_eq "$(output result)" planned && HASH=$(output plan_hash) &&
	N=$(output changes) && ok

CASE="the approval's run pauses when the budget is spent and the comment shows how far it got"
CID=$(api tok-alice POST /repos/acme/widgets/issues/1/comments "{\"body\": \"/pm-bot apply $HASH\"}" | py - 'str(d["id"])')
event issue_comment "$TMP/approve.json" "{'action': 'created', 'repository': repo,
 'sender': {'login': 'alice', 'type': 'User'},
 'issue': {'number': 1, 'title': 'Plan Q4', 'state': 'open', 'user': {'login': 'alice', 'type': 'User'},
   'pull_request': {'url': '$URL/repos/acme/widgets/pulls/1'}},
 'comment': {'id': $CID, 'body': '/pm-bot apply $HASH', 'user': {'login': 'alice', 'type': 'User'}}}"
action 0 && expect_eq "$(output result)" paused &&
	C=$(plan_comment) &&
	expect_in "$C" "**Paused: " && expect_in "$C" " of $N applied; resumes after 20" &&
	expect_in "$C" "\"plan_hash\":\"$HASH\"" && expect_in "$C" '"status":"paused"' &&
	expect_in "$OUT$ERR" " of $N applied; resumes after " &&
	[ -f "$CARRIED/plans/$HASH.json" ] &&
	no_limit_answers && ok

CASE="re-runs of the same workflow continue the same approval until it is applied"
PAUSES=1
for i in 1 2 3 4 5 6 7 8; do
	LINE=$(plan_comment | grep -o '[0-9]* of [0-9]* applied; resumes after [0-9TZ:-]*' | head -n 1)
	[ -n "$LINE" ] || break
	# A sleep to let the window free, not a timing assertion.
	sleep "$(until_after "${LINE##* resumes after }")"
	action 0 || break
	R=$(output result)
	[ "$R" = paused ] && PAUSES=$((PAUSES + 1))
	[ "$R" = applied ] && break
	[ "$R" = paused ] || { fail "a re-run gave result $R: $OUT $ERR"; break; }
done
# (How many runs it takes depends on how fast the writes go; test_write_budget.sh
# shows an apply spanning three runs.)
expect_eq "$(output result)" applied &&
	expect_eq "$(ctl GET /_emu/state | py - 'str(sum(len(r["issues"]) for r in d["state"]["repositories"]))')" 7 &&
	expect_eq "$(ctl GET /_emu/state | py - 'str(len(set(i["title"] for r in d["state"]["repositories"] for i in r["issues"])))')" 7 &&
	expect_eq "$(ctl GET /_emu/state | py - 'str(len(d["state"]["project"]["items"]) == len(set(json.dumps(x.get("issue"), sort_keys=True) for x in d["state"]["project"]["items"])))')" True &&
	no_limit_answers &&
	grep -q '"resumed":true' "$RUNNER_TEMP/pm-bot/audit.jsonl" &&
	{ [ ! -e "$CARRIED/plans/$HASH.json" ] || fail "the applied plan is still kept"; } &&
	ok

CASE="after it is applied, the plan has no changes left"
event pull_request "$TMP/ev.json" "{'action': 'synchronize', 'number': 1, 'repository': repo,
 'sender': {'login': 'alice', 'type': 'User'},
 'pull_request': {'number': 1, 'state': 'open', 'title': 'Plan Q4', 'user': {'login': 'alice', 'type': 'User'},
  'head': {'ref': 'feature', 'sha': '$HEAD_SHA', 'repo': repo}, 'base': {'ref': 'main', 'sha': '$MAIN_SHA', 'repo': repo}}}"
action 0 && expect_eq "$(output result)" no_changes && ok

CASE="a kept plan that does not hash to the approval continues nothing: stale"
ctl POST /_emu/reset "$(cat "$TMP/seed.json")" >/dev/null
rm -rf "$CARRIED" && mkdir -p "$CARRIED"
event pull_request "$TMP/ev.json" "{'action': 'opened', 'number': 1, 'repository': repo,
 'sender': {'login': 'alice', 'type': 'User'},
 'pull_request': {'number': 1, 'state': 'open', 'title': 'Plan Q4', 'user': {'login': 'alice', 'type': 'User'},
  'head': {'ref': 'feature', 'sha': '$HEAD_SHA', 'repo': repo}, 'base': {'ref': 'main', 'sha': '$MAIN_SHA', 'repo': repo}}}"
action 0 && HASH=$(output plan_hash) &&
	CID=$(api tok-alice POST /repos/acme/widgets/issues/1/comments "{\"body\": \"/pm-bot apply $HASH\"}" | py - 'str(d["id"])') &&
	event issue_comment "$TMP/approve.json" "{'action': 'created', 'repository': repo,
	 'sender': {'login': 'alice', 'type': 'User'},
	 'issue': {'number': 1, 'title': 'Plan Q4', 'state': 'open', 'user': {'login': 'alice', 'type': 'User'},
	   'pull_request': {'url': '$URL/repos/acme/widgets/pulls/1'}},
	 'comment': {'id': $CID, 'body': '/pm-bot apply $HASH', 'user': {'login': 'alice', 'type': 'User'}}}" &&
	action 0 && expect_eq "$(output result)" paused &&
	python3 - "$CARRIED/plans/$HASH.json" <<'PY' &&
import json, sys
p = sys.argv[1]
d = json.load(open(p))
# Approve one more change than the human saw: the content no longer hashes to the approval.
d["changesets"].append(dict(d["changesets"][-1], changeset_id="cs-9999"))
json.dump(d, open(p, "w"))
PY
	LINE=$(plan_comment | grep -o 'resumes after [0-9TZ:-]*' | head -n 1) &&
	sleep "$(until_after "${LINE##resumes after }")" &&
	action 0 && expect_eq "$(output result)" stale &&
	expect_in "$(plan_comment)" "the plan is stale" &&
	ok

# A scheduled run continues a paused apply on its own: no new approval, no
# re-run. The cache carries the kept plan and a hint naming the pull
# request; GitHub decides (pm-bot's own paused comment, the approval comment,
# the approver's permission now under the default branch's config).
paused_setup() {
	ctl POST /_emu/reset "$(cat "$TMP/seed.json")" >/dev/null
	rm -rf "$CARRIED" && mkdir -p "$CARRIED"
	event pull_request "$TMP/ev.json" "{'action': 'opened', 'number': 1, 'repository': repo,
	 'sender': {'login': 'alice', 'type': 'User'},
	 'pull_request': {'number': 1, 'state': 'open', 'title': 'Plan Q4', 'user': {'login': 'alice', 'type': 'User'},
	  'head': {'ref': 'feature', 'sha': '$HEAD_SHA', 'repo': repo}, 'base': {'ref': 'main', 'sha': '$MAIN_SHA', 'repo': repo}}}"
	action 0 && HASH=$(output plan_hash) && N=$(output changes) &&
		CID=$(api tok-alice POST /repos/acme/widgets/issues/1/comments "{\"body\": \"/pm-bot apply $HASH\"}" | py - 'str(d["id"])') &&
		event issue_comment "$TMP/approve.json" "{'action': 'created', 'repository': repo,
		 'sender': {'login': 'alice', 'type': 'User'},
		 'issue': {'number': 1, 'title': 'Plan Q4', 'state': 'open', 'user': {'login': 'alice', 'type': 'User'},
		   'pull_request': {'url': '$URL/repos/acme/widgets/pulls/1'}},
		 'comment': {'id': $CID, 'body': '/pm-bot apply $HASH', 'user': {'login': 'alice', 'type': 'User'}}}" &&
		action 0 && expect_eq "$(output result)" paused &&
		expect_eq "$(cat "$CARRIED/plans/$HASH.pr" 2>/dev/null)" 1
}
plan_issues() { ctl GET /_emu/state | py - 'str(sum(1 for r in d["state"]["repositories"] for i in r["issues"] if i["title"] != "pm-bot: Projects field sync"))'; }
plan_titles() { ctl GET /_emu/state | py - 'str(len(set(i["title"] for r in d["state"]["repositories"] for i in r["issues"] if i["title"] != "pm-bot: Projects field sync")))'; }
edges() { ctl GET /_emu/state | py - 'str(sorted((i["title"], k, json.dumps(i.get(k), sort_keys=True)) for r in d["state"]["repositories"] for i in r["issues"] for k in ("parent", "blocked_by") if i.get(k)))'; }
applied_count() { plan_comment | grep -o '\*\*Paused: [0-9]* of' | grep -o '[0-9][0-9]*' | head -n 1; }

CASE="a scheduled run continues a paused apply until it is applied, the comment showing progress"
if paused_setup; then
	FIRST=$(applied_count)
	SEEN="$FIRST"
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
		LINE=$(plan_comment | grep -o 'resumes after [0-9TZ:-]*' | head -n 1)
		[ -n "$LINE" ] || break
		# A sleep to let the window free, not a timing assertion.
		sleep "$(until_after "${LINE##resumes after }")"
		event schedule "$TMP/sched.json" "{'schedule': '17 * * * *', 'repository': repo}"
		action 0 || break
		expect_in "$OUT" "continuing the paused apply of $HASH, approved by alice" || { echo "$OUT$ERR" | grep "pm-bot:" | head -20 >&2; break; }
		C=$(plan_comment)
		case "$C" in
		*'"status":"applied"'*) break ;;
		*'"status":"paused"'*) SEEN="$SEEN $(applied_count)" ;;
		*) fail "after a scheduled run the comment is neither paused nor applied: $C"; break ;;
		esac
	done
	C=$(plan_comment)
	expect_in "$C" '"status":"applied"' && expect_in "$C" "**Applied** " && expect_in "$C" " changes, approved by @alice" &&
		expect_eq "$(plan_issues)" 7 && expect_eq "$(plan_titles)" 7 &&
		expect_eq "$(ctl GET /_emu/state | py - 'str(len(d["state"]["project"]["items"]) == len(set(json.dumps(x.get("issue"), sort_keys=True) for x in d["state"]["project"]["items"])))')" True &&
		no_limit_answers &&
		{ [ ! -e "$CARRIED/plans/$HASH.json" ] && [ ! -e "$CARRIED/plans/$HASH.pr" ] || fail "the applied plan or its hint is still kept"; } &&
		expect_in "$(ctl GET /_emu/state | py - "str([r['content'] for c in d.get('comments', []) if c['id'] == $CID for r in c.get('reactions', [])])")" "+1" &&
		ok
	# Progress: the comment's k went up run after run (SEEN lists k for each paused state).
	echo "  measured: applied count in the paused comment, run after run: $SEEN of $N, then applied by scheduled runs"
	CASE="the paused comment's count never goes down from one scheduled run to the next"
	python3 -c 'import sys; v=[int(x) for x in sys.argv[1:]]; sys.exit(0 if v and all(a <= b for a, b in zip(v, v[1:])) else 1)' $SEEN &&
		ok || fail "the applied counts were [$SEEN] of $N"
	E1=$(edges)
	CASE="the next scheduled run finds nothing to continue and writes nothing for the plan"
	ctl DELETE /_emu/requests >/dev/null
	event schedule "$TMP/sched.json" "{'schedule': '17 * * * *', 'repository': repo}"
	action 0 && expect_eq "$(plan_issues)" 7 && expect_eq "$(edges)" "$E1" &&
		expect_eq "$(ctl GET /_emu/requests | py - 'str(sum(1 for r in d["requests"] if "/issues/1/comments" in r.get("path", "")))')" 0 &&
		ok
fi

CASE="a paused apply whose approver may no longer approve is not continued"
if paused_setup; then
	BEFORE=$(plan_issues)
	# The default branch now asks for admin; alice maintains.
	sed -i 's/min_permission: write/min_permission: admin/' "$W/.github/pm-bot.yml"
	gitc "$W" commit -qam "approvals need admin"
	LINE=$(plan_comment | grep -o 'resumes after [0-9TZ:-]*' | head -n 1)
	sleep "$(until_after "${LINE##resumes after }")"
	event schedule "$TMP/sched.json" "{'schedule': '17 * * * *', 'repository': repo}"
	action 0
	case "$(plan_comment)" in *"**Not continued.**"*) ;; *) echo "$OUT$ERR" | grep "pm-bot:" >&2 ;; esac
	[ -n "$OUT" ] &&
		expect_eq "$(plan_issues)" "$BEFORE" &&
		C=$(plan_comment) &&
		expect_in "$C" "**Not continued.**" && { :; } && expect_in "$C" "nobody who approved it may approve any more" &&
		expect_in "$C" "/pm-bot apply" &&
		{ case "$C" in *'"status":"paused"'*) fail "the comment is still paused";; esac; } &&
		expect_in "$OUT$ERR" "alice's approval no longer counts" &&
		expect_in "$OUT$ERR" "is not continued" &&
		{ [ ! -e "$CARRIED/plans/$HASH.pr" ] || fail "the hint is still kept"; } &&
		no_limit_answers && ok
	gitc "$W" reset -q --hard HEAD~1
fi

finish
