#!/usr/bin/env bash
# End to end: plan and apply with --backend github against the loopback
# emulator (tests/github-emu, scripts/emu.sh) seeded with the bundled
# example's repository acme/widgets and board acme/1. Convergence, a report
# edit, request counts, injected faults, kill -9 mid-apply, and the token
# never showing in any output.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
CASE=setup
need_node
emu_env
unset GITHUB_REPOSITORY
TOKEN=ghp_e2eSECRETtoken5f3a9c0d1b2e
# Stop the emulator whatever happens (lib.sh's trap removes $TMP after).
trap 'scripts/emu.sh stop "$EMU" >/dev/null 2>&1; rm -rf "$TMP"' EXIT

# The seed: the example's state (acme/widgets, no issue; board acme/1) and a
# write token acting as github-actions[bot], which the default config trusts.
emu_seed "$TMP/seed.json"
emu_start "$TMP/seed.json"
export PMBOT_GITHUB_CACHE_DIR="$TMP/cache"

reset_world() { ctl POST /_emu/reset "$(cat "$TMP/seed.json")" >/dev/null && rm -rf "$TMP/cache"; }

# Every output of the run so far must be free of the token.
ALL_OUT="$TMP/all-output"
: >"$ALL_OUT"
keep() { cat "$TMP/out" "$TMP/err" >>"$ALL_OUT"; }

# plan_apply REPO: plan into $TMP/p.json and apply it; status of apply in $STATUS.
plan_to() { run 0 "$PMBOT" plan --format md --repo "$1" --backend github --out "$2"; keep; }
apply_plan() {
	local want=$1 repo=$2 plan=$3 h
	h=$(py "$plan" 'd["plan_hash"]')
	# No --backend: the plan file says it was made against GitHub.
	run "$want" "$PMBOT" apply --repo "$repo" --plan "$plan" --approve "$h"
	keep
}

# issues: "number title" lines of acme/widgets in the emulator.
world_issues() { ctl GET /_emu/state | py - '"\n".join("%d %s" % (i["number"], i["title"]) for r in d["state"]["repositories"] for i in r["issues"])'; }

CASE="plan, apply, plan again: no changes"
R=$TMP/r1
example_repo "$R"
plan_to "$R" "$TMP/p1.json" &&
	N=$(py "$TMP/p1.json" 'len(d["changesets"])') &&
	ctl DELETE /_emu/requests >/dev/null &&
	apply_plan 0 "$R" "$TMP/p1.json" &&
	ctl GET /_emu/requests >"$TMP/req-apply.json" &&
	expect_in "$OUT" "applied $N, already applied 0, denied 0, failed 0" &&
	run 0 "$PMBOT" plan --format md --repo "$R" --backend github --detailed-exitcode && keep &&
	expect_in "$OUT" "**No changes.**" &&
	WANT=$(world_issues) && expect_eq "$(echo "$WANT" | wc -l)" 7 && ok

CASE="state list reads GitHub as plan does: the seven issues pm-bot made, on the board"
run 0 "$PMBOT" state list --repo "$R" --backend github --format json && keep &&
	expect_eq "$(printf '%s' "$OUT" | py - 'str(len(d))')" 7 &&
	expect_eq "$(printf '%s' "$OUT" | py - 'str(all(i["on_board"] and not i["edited"] for i in d))')" True &&
	run 0 "$PMBOT" state show feat:graceful-drain --repo "$R" --backend github && keep &&
	expect_in "$OUT" "board:      " && expect_in "$OUT" "Priority=P1" && ok

CASE="a plan made against GitHub is not applied to another backend"
example_repo "$TMP/rb"
plan_to "$TMP/rb" "$TMP/pb.json" &&
	run 2 "$PMBOT" apply --repo "$TMP/rb" --backend file --plan "$TMP/pb.json" \
		--approve "$(py "$TMP/pb.json" 'd["plan_hash"]')" && keep &&
	expect_in "$ERR" "the plan was made with --backend github" &&
	expect_eq "$(py "$TMP/pb.json" 'd["source"]["backend"]')" '{"kind": "github"}' &&
	[ ! -e "$TMP/rb/.pm-bot/state.json" ] && ok

CASE="the first apply: one createIssue per new issue carrying parent and board, fields and edges in one aliased request each"
F=$(py "$TMP/p1.json" 'sum(1 for c in d["changesets"] if c["operation"]=="set_project_field")')
[ "$F" -ge 2 ] && [ "$F" -le 50 ] &&
	expect_eq "$(py "$TMP/req-apply.json" 'sum(1 for r in d["requests"] if r["kind"]=="graphql" and "ProjectV2ItemFieldValue" in (r["operation"] or ""))')" 1 &&
	expect_eq "$(py "$TMP/req-apply.json" 'sum(1 for r in d["requests"] if r["kind"]=="graphql" and "addBlockedBy" in (r["operation"] or ""))')" 1 &&
	expect_eq "$(py "$TMP/req-apply.json" 'sum(1 for r in d["requests"] if r["kind"]=="graphql" and (r["operation"] or "")=="mutation createIssue" and r["status"]==200)')" \
		"$(py "$TMP/p1.json" 'sum(1 for c in d["changesets"] if c["operation"]=="create_issue")')" &&
	expect_eq "$(py "$TMP/req-apply.json" 'sum(1 for r in d["requests"] if "/sub_issues" in r["path"] or "/dependencies" in r["path"] or "addProjectV2ItemById" in (r["operation"] or ""))')" 0 &&
	ok

CASE="a re-plan reads who the token is, pm-bot's issues with their blockers and the board in three GraphQL requests, and nothing through REST"
ctl DELETE /_emu/requests >/dev/null
run 0 "$PMBOT" plan --format md --repo "$R" --backend github --detailed-exitcode && keep &&
	ctl GET /_emu/requests >"$TMP/req.json" &&
	expect_eq "$(py "$TMP/req.json" 'sum(1 for r in d["requests"] if r["kind"]=="graphql")')" 3 &&
	expect_eq "$(py "$TMP/req.json" 'sum(1 for r in d["requests"] if r["kind"]=="graphql" and (r["operation"] or "").endswith("viewer,rateLimit"))')" 1 &&
	expect_eq "$(py "$TMP/req.json" 'sum(1 for r in d["requests"] if r["kind"]=="graphql" and r["operation"]=="query repository")')" 1 &&
	expect_eq "$(py "$TMP/req.json" 'sum(1 for r in d["requests"] if r["kind"]=="rest")')" 0 &&
	DEPS=$(ctl GET /_emu/state | py - 'sum(1 for r in d["state"]["repositories"] for i in r["issues"] if i.get("blocked_by"))') &&
	[ "$DEPS" -ge 1 ] &&
	expect_eq "$(py "$TMP/req.json" 'all(r["authenticated"] and r["api_version"]=="2022-11-28" for r in d["requests"])')" true &&
	ok

CASE="a report edit plans only that change"
sed -i 's/Add a preStop hook that waits for in-flight payments/Add a preStop hook that waits for every in-flight payment/' "$R/plans/q4.md"
gitc "$R" commit -qam "edit one title"
plan_to "$R" "$TMP/p2.json" &&
	expect_eq "$(py "$TMP/p2.json" 'sorted(set(c["target"].get("stable_id","") for c in d["changesets"]))')" '["task:drain-hook"]' &&
	expect_eq "$(py "$TMP/p2.json" '" ".join(sorted(c["operation"] for c in d["changesets"]))')" "update_issue_title" &&
	apply_plan 0 "$R" "$TMP/p2.json" &&
	run 0 "$PMBOT" plan --format md --repo "$R" --backend github --detailed-exitcode && keep &&
	expect_in "$OUT" "**No changes.**" &&
	expect_eq "$(world_issues | wc -l)" 7 && ok

# converge REPO PLAN: apply again (resuming) until it succeeds, at most 4 times;
# then the next plan has no changes and the world has each issue once.
converge() {
	local i
	for i in 1 2 3 4; do
		"$PMBOT" apply --repo "$1" --backend github --plan "$2" \
			--approve "$(py "$2" 'd["plan_hash"]')" >"$TMP/out" 2>"$TMP/err"
		STATUS=$?
		keep
		[ "$STATUS" -eq 0 ] && break
		# A failure is fine while converging; a crash or sanitizer report is not.
		[ "$STATUS" -eq 1 ] || { fail "apply ended with status $STATUS: $(cat "$TMP/err")"; return 1; }
	done
	run 0 "$PMBOT" plan --format md --repo "$1" --backend github --detailed-exitcode && keep &&
		expect_in "$OUT" "**No changes.**" &&
		expect_eq "$(world_issues | sort)" "$(echo "$WANT" | sort)"
}

CASE="faults during apply (503 on a create, secondary limit with retry-after on a label, GraphQL RATE_LIMITED) converge"
reset_world
R=$TMP/r2
example_repo "$R"
plan_to "$R" "$TMP/f.json" &&
	ctl POST /_emu/faults '[
	  {"count": 1, "match": {"graphql": "mutation"}, "status": 503, "execute": true},
	  {"count": 1, "match": {"method": "POST", "path": "/repos/acme/widgets/labels"}, "status": 403, "retry_after": 1},
	  {"count": 1, "match": {"graphql": "mutation"}, "graphql_rate_limit": true, "reset_in": 1},
	  {"count": 1, "match": {"graphql": "query"}, "status": 502}]' >/dev/null &&
	"$PMBOT" apply --repo "$R" --backend github --plan "$TMP/f.json" \
		--approve "$(py "$TMP/f.json" 'd["plan_hash"]')" >"$TMP/out" 2>"$TMP/err"
STATUS=$?
keep
case $STATUS in 0|1) ;; *) fail "the faulty apply ended with status $STATUS: $(cat "$TMP/err")" ;; esac
converge "$R" "$TMP/f.json" &&
	expect_eq "$(ctl GET /_emu/faults | py - 'sum(f["remaining"] for f in d["faults"])')" 0 && ok

CASE="a cut-off answer to a create converges without a duplicate"
reset_world
R=$TMP/r3
example_repo "$R"
plan_to "$R" "$TMP/c.json" &&
	ctl POST /_emu/faults '{"count": 2, "match": {"graphql": "mutation"}, "cut_body": true}' >/dev/null &&
	"$PMBOT" apply --repo "$R" --backend github --plan "$TMP/c.json" \
		--approve "$(py "$TMP/c.json" 'd["plan_hash"]')" >"$TMP/out" 2>"$TMP/err"
STATUS=$?
keep
case $STATUS in 0|1) ;; *) fail "the cut-off apply ended with status $STATUS: $(cat "$TMP/err")" ;; esac
converge "$R" "$TMP/c.json" &&
	expect_eq "$(ctl GET /_emu/faults | py - 'sum(f["remaining"] for f in d["faults"])')" 0 && ok

# 30 lands inside the batch of field changesets (the 23rd to the 49th): the
# whole batch was sent, and the process dies while recording its outcomes.
for k in 1 4 9 20 30; do
	CASE="kill -9 after $k changesets, then a re-run converges"
	reset_world
	R=$TMP/k$k
	example_repo "$R"
	plan_to "$R" "$TMP/k.json" || continue
	# Through an inner shell, whose "Killed" notice lands in $TMP/err, not the log.
	bash -c '"$@"; exit $?' _ env PMBOT_TEST_KILL_AFTER=$k "$PMBOT" apply --repo "$R" --backend github \
		--plan "$TMP/k.json" --approve "$(py "$TMP/k.json" 'd["plan_hash"]')" >"$TMP/out" 2>"$TMP/err"
	st=$?
	keep
	[ "$st" -eq 137 ] || { fail "apply was not killed (status $st)"; continue; }
	converge "$R" "$TMP/k.json" && ok
done

CASE="snapshot writes the live state as a state file that plans offline with no changes"
R=$TMP/k20
run 0 "$PMBOT" snapshot --repo acme/widgets --project acme/1 --out "$TMP/snap.json" --stats && keep &&
	expect_in "$ERR" "requests (" && expect_in "$ERR" "snapshot of 7 issues and the project" &&
	expect_eq "$(py "$TMP/snap.json" '"\n".join("%d %s" % (i["number"], i["title"]) for r in d["repositories"] for i in r["issues"])')" "$(world_issues)" &&
	run 0 "$PMBOT" snapshot --repo acme/widgets --project acme/1 && keep &&
	expect_eq "$(cat "$TMP/out")" "$(cat "$TMP/snap.json")" &&
	run 0 env -u GH_TOKEN -u GITHUB_API_URL -u GITHUB_GRAPHQL_URL "$PMBOT" plan --format md --repo "$R" \
		--state "$TMP/snap.json" --detailed-exitcode && keep &&
	expect_in "$OUT" "**No changes.**" && ok

CASE="snapshot and the GitHub options refuse bad usage with exit 2"
run 2 "$PMBOT" snapshot --project acme/1 && expect_in "$ERR" "at least one --repo" &&
	run 2 "$PMBOT" snapshot --repo acme --project acme/1 && expect_in "$ERR" "OWNER/NAME" &&
	run 2 "$PMBOT" snapshot --repo acme/widgets --project acme && expect_in "$ERR" "OWNER/NUMBER" &&
	run 2 "$PMBOT" plan --format md --repo "$R" --backend github --pace-ms soon && expect_in "$ERR" "milliseconds" &&
	ok

CASE="--cache-dir holds the ETag cache and a warm re-read answers 304"
rm -rf "$TMP/cache2"
run 0 "$PMBOT" plan --format md --repo "$R" --backend github --cache-dir "$TMP/cache2" && keep &&
	[ -n "$(ls -A "$TMP/cache2" 2>/dev/null)" ] &&
	run 0 "$PMBOT" plan --format md --repo "$R" --backend github --cache-dir "$TMP/cache2" --stats && keep &&
	expect_eq "$(echo "$ERR" | sed -n 's/.*, \([0-9]*\) not modified,.*/\1/p')" \
		"$(ctl GET /_emu/state | py - 'str(sum(1 for r in d["state"]["repositories"] for i in r["issues"] if i.get("blocked_by")))')" &&
	ok

CASE="the token's own login is trusted: issues it authored are matched without a trusted_authors entry"
python3 - "$TMP/seed.json" "$TMP/seed-user.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["tokens"] = {"tok-carol": {"login": "carol", "type": "User", "scopes": ["repo", "project"]}}
d["collaborators"] = {"acme/widgets": {"carol": "write"}}
json.dump(d, open(sys.argv[2], "w"))
PY
ctl GET /_emu/state >"$TMP/saved.json"
ctl POST /_emu/reset "$(cat "$TMP/seed-user.json")" >/dev/null && rm -rf "$TMP/cache"
R=$TMP/self
example_repo "$R"
sed -i 's/^  - github-actions\[bot\]$/  - somebody-else/' "$R/.github/pm-bot.yml"
gitc "$R" commit -qam "trust somebody else"
export GH_TOKEN=tok-carol
plan_to "$R" "$TMP/self.json" && apply_plan 0 "$R" "$TMP/self.json" &&
	expect_eq "$(ctl GET /_emu/state | py - 'sorted(set(i["author"] for r in d["state"]["repositories"] for i in r["issues"]))')" '["carol"]' &&
	run 0 "$PMBOT" plan --format md --repo "$R" --backend github --detailed-exitcode && keep &&
	expect_in "$OUT" "**No changes.**" && ok
export GH_TOKEN=$TOKEN
ctl POST /_emu/reset "$(cat "$TMP/saved.json")" >/dev/null && rm -rf "$TMP/cache"

CASE="report text in a created issue never mentions or links, and a re-plan has no changes"
reset_world
R=$TMP/mentions
example_repo "$R"
sed -i 's/^    title: Add a preStop hook that waits for in-flight payments$/    title: Ask @octocat about acme\/widgets#1\n    goal: "Ping @octocat, see acme\/widgets#1 and https:\/\/x.example\/a; `@octocat` stays code"\n    risk: "@octocat"/' "$R/plans/q4.md"
gitc "$R" commit -qam "mentions in a task"
ZW=$(printf '\342\200\214')
plan_to "$R" "$TMP/m.json" && apply_plan 0 "$R" "$TMP/m.json" &&
	ctl GET /_emu/state >"$TMP/m-state.json" &&
	py "$TMP/m-state.json" '[i for r in d["state"]["repositories"] for i in r["issues"] if "pm-bot:id=task:drain-hook " in i["body"]][0]' >"$TMP/m-issue.json" &&
	TITLE=$(py "$TMP/m-issue.json" 'd["title"]') && BODY=$(py "$TMP/m-issue.json" 'd["body"]') &&
	expect_eq "$TITLE" "[task] Ask @${ZW}octocat about acme/widgets#${ZW}1" &&
	expect_in "$BODY" "Ping @${ZW}octocat, see acme/widgets#${ZW}1 and https:${ZW}//x.example/a; \`@octocat\` stays code" &&
	expect_in "$BODY" "### Risk
@${ZW}octocat" &&
	{ ! printf '%s' "$BODY" | sed 's/`@octocat`//' | grep -q '@octocat' || fail "a bare @octocat is in the body"; } &&
	{ ! printf '%s' "$BODY$TITLE" | grep -q 'widgets#1' || fail "a bare acme/widgets#1 is in the issue"; } &&
	{ printf '%s' "$BODY" | head -n 1 | grep -Eqx '<!-- pm-bot:id=task:drain-hook rev=[0-9a-f]{64} -->' || fail "the marker was changed"; } &&
	run 0 "$PMBOT" plan --format md --repo "$R" --backend github --detailed-exitcode && keep &&
	expect_in "$OUT" "**No changes.**" && ok

CASE="bodies an earlier pm-bot wrote with the marker last move it first by ordinary body updates, then converge"
reset_world
R=$TMP/layout
example_repo "$R"
plan_to "$R" "$TMP/ml.json" && apply_plan 0 "$R" "$TMP/ml.json" &&
	ctl GET /_emu/state >"$TMP/ml-state.json" &&
	python3 - "$TMP/ml-state.json" "$TMP/ml-seed.json" <<'PY' &&
import json, sys
seed = json.load(open(sys.argv[1], encoding="utf-8"))
for r in seed["state"]["repositories"]:
    for i in r["issues"]:
        marker, rest = i["body"].split("\n\n", 1)
        assert marker.startswith("<!-- pm-bot:id="), marker
        i["body"] = rest + "\n\n" + marker
json.dump(seed, open(sys.argv[2], "w", encoding="utf-8"))
PY
	ctl POST /_emu/reset "$(cat "$TMP/ml-seed.json")" >/dev/null && rm -rf "$TMP/cache" &&
	plan_to "$R" "$TMP/ml2.json" &&
	expect_eq "$(py "$TMP/ml2.json" '[sorted(set(c["operation"] for c in d["changesets"])), len(d["changesets"]), d["conflicts"]]')" \
		'[["update_issue_body"], 7, []]' &&
	apply_plan 0 "$R" "$TMP/ml2.json" &&
	expect_in "$OUT" "applied 7, already applied 0, denied 0, failed 0, pending 0" &&
	run 0 "$PMBOT" plan --format md --repo "$R" --backend github --detailed-exitcode && keep &&
	expect_in "$OUT" "**No changes.**" &&
	expect_eq "$(ctl GET /_emu/state | py - 'sorted(set(i["body"].startswith("<!-- pm-bot:id=") and i["body"].count("pm-bot:id=") == 1 for r in d["state"]["repositories"] for i in r["issues"]))')" '[true]' &&
	expect_eq "$(ctl GET /_emu/state | py - 'sorted(i["body"] for r in d["state"]["repositories"] for i in r["issues"])')" \
		"$(py "$TMP/ml-state.json" 'sorted(i["body"] for r in d["state"]["repositories"] for i in r["issues"])')" && ok

CASE="an issue the token cannot fully read is named, left alone, and nothing it might be is created"
ctl GET /_emu/state >"$TMP/pf-before.json"
reset_world
R=$TMP/partial
example_repo "$R"
plan_to "$R" "$TMP/pf.json" && apply_plan 0 "$R" "$TMP/pf.json" &&
	ctl GET /_emu/state >"$TMP/pf-state.json" &&
	DRAIN=$(py "$TMP/pf-state.json" '"acme/widgets#%d" % [i for r in d["state"]["repositories"] for i in r["issues"] if "pm-bot:id=task:drain-hook " in i["body"]][0]["number"]') &&
	# Its parent is hidden (the marker is readable), and the report renames it.
	py "$TMP/pf-state.json" 'dict(d, forbidden_fields={"'"$DRAIN"'": ["parent"]})' >"$TMP/pf-seed.json" &&
	ctl POST /_emu/reset "$(cat "$TMP/pf-seed.json")" >/dev/null && rm -rf "$TMP/cache" &&
	sed -i 's/Add a preStop hook that waits for in-flight payments/Add a preStop hook that waits for every in-flight payment/' "$R/plans/q4.md" &&
	gitc "$R" commit -qam "edit the hidden one" &&
	run 0 "$PMBOT" plan --format md --repo "$R" --backend github --format json && keep &&
	expect_eq "$(printf '%s' "$OUT" | py - 'len(d["changesets"])')" 0 &&
	expect_eq "$(printf '%s' "$OUT" | py - '[x["code"] for x in d["diagnostics"]]')" '["ISSUE_UNREADABLE"]' &&
	expect_in "$(printf '%s' "$OUT" | py - 'd["diagnostics"][0]["message"]')" "$DRAIN (item 'task:drain-hook')" &&
	# Its body hidden as well: GitHub withholds the whole issue (body is non-null),
	# so its marker is unknown and the item it is must not be created again.
	py "$TMP/pf-state.json" 'dict(d, forbidden_fields={"'"$DRAIN"'": ["body"]})' >"$TMP/pf-seed.json" &&
	ctl POST /_emu/reset "$(cat "$TMP/pf-seed.json")" >/dev/null && rm -rf "$TMP/cache" &&
	run 0 "$PMBOT" plan --format md --repo "$R" --backend github --format json && keep &&
	expect_eq "$(printf '%s' "$OUT" | py - 'sum(1 for c in d["changesets"] if c["operation"]=="create_issue")')" 0 &&
	expect_eq "$(printf '%s' "$OUT" | py - 'sorted(set(x["code"] for x in d["diagnostics"]))')" '["CREATE_UNPROVEN", "ISSUE_UNREADABLE"]' &&
	expect_in "$(printf '%s' "$OUT" | py - '[x["message"] for x in d["diagnostics"] if x["code"]=="CREATE_UNPROVEN"][0]')" "'task:drain-hook' is not created" &&
	ok
ctl POST /_emu/reset "$(cat "$TMP/pf-before.json")" >/dev/null && rm -rf "$TMP/cache"

CASE="the token never appears in any output"
if grep -qF "$TOKEN" "$ALL_OUT" "$TMP"/r1/.pm-bot/audit.jsonl 2>/dev/null; then
	fail "the token was printed"
elif grep -rqF "$TOKEN" "$TMP/cache" 2>/dev/null; then
	fail "the token is in the ETag cache"
else
	ok
fi

CASE="verbose events and errors stay token-free"
ctl POST /_emu/faults '{"count": 1, "match": {"method": "POST"}, "status": 500}' >/dev/null
run 0 env PMBOT_VERBOSE=1 PMBOT_GITHUB_STATS=1 "$PMBOT" plan --format md --repo "$TMP/r2" --backend github &&
	expect_in "$ERR" "HTTP 500" && expect_in "$ERR" "requests (" &&
	{ ! grep -qF "$TOKEN" "$TMP/err" || fail "the token was printed"; } && ok

finish
