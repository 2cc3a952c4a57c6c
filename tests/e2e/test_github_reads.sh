#!/usr/bin/env bash
# End to end: what reading GitHub costs, against the loopback emulator
# (tests/github-emu). The example's seven items live among 450 unrelated
# issues: a plan reads only the issues pm-bot's login created (filterBy
# createdBy), and a stable id it does not find there is proven absent by a
# scan of every issue before anything is created, at plan and at apply
# time. A filter that misses a managed issue (the emulator's
# filter_misses) costs a scan and a warning, never a duplicate. A GitHub
# Enterprise Server without sub-issues, dependencies or issue types (seed ghes) is
# planned around before the first write.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
CASE=setup
need_node
emu_env
unset GITHUB_REPOSITORY
TOKEN=ghp_e2eREADStoken0c1d2e3f4a5b6
UNRELATED=450
trap 'scripts/emu.sh stop "$EMU" >/dev/null 2>&1; rm -rf "$TMP"' EXIT

# The example's state (acme/widgets, board acme/1) with 450 issues someone
# else wrote, and a token acting as github-actions[bot].
emu_seed "$TMP/seed.json" "$(cat <<'PY'
n = int(args[0])
st["repositories"][0]["issues"] = [{
    "number": i, "database_id": 3000000 + i, "node_id": "I_unrelated%d" % i,
    "title": "unrelated %d" % i, "body": "someone's issue %d" % i, "labels": [],
    "state": "open" if i % 3 else "closed", "author": "someone", "author_type": "User",
    "updated_at": "2026-11-01T00:00:00Z", "parent": None, "blocked_by": []} for i in range(1, n + 1)]
PY
)" "$UNRELATED"
emu_start "$TMP/seed.json"
export PMBOT_GITHUB_CACHE_DIR="$TMP/cache"

# reset_to SEED_FILE: a fresh world, and no ETag cache from the last one.
reset_to() {
	curl -sf -X POST -H 'content-type: application/json' --data @"$1" "$URL/_emu/reset" >/dev/null ||
		{ fail "the emulator refused the seed $1"; return 1; }
	rm -rf "$TMP/cache"
}

# Every case ends in ok or a failure: a step outside expect_* that fails says so.
done_case() { [ "$1" -eq 0 ] && ok || { [ "$FAIL" -gt "$2" ] || fail "a step failed"; }; }

# requests EXPR: EXPR over the emulator's request log `d`.
requests() { ctl GET /_emu/requests | py - "$1"; }
# Issue pages read: the "issues" documents (by filter or not).
PAGES='sum(1 for r in d["requests"] if r["operation"]=="query repository")'
# How many issues of acme/widgets carry pm-bot's marker for each stable id.
markers() { ctl GET /_emu/state | py - 'sorted(__import__("collections").Counter(l.split("id=")[1].split(" ")[0] for r in d["state"]["repositories"] for i in r["issues"] for l in i["body"].split("\n") if l.startswith("<!-- pm-bot:id=")).items())'; }
approve() { py "$1" 'd["plan_hash"]'; }

R=$TMP/r
example_repo "$R"

CASE="a first plan proves its seven creates absent with one scan of all 457 issues"
F0=$FAIL
ctl DELETE /_emu/requests >/dev/null
run 0 "$PMBOT" plan --format md --repo "$R" --backend github --out "$TMP/p1.json" &&
	expect_eq "$(py "$TMP/p1.json" 'sum(1 for c in d["changesets"] if c["operation"]=="create_issue")')" 7 &&
	# One filtered page (none of pm-bot's), then ceil(450/100) = 5 pages of everything.
	expect_eq "$(requests "$PAGES")" 6 &&
	expect_eq "$(requests 'sum(1 for r in d["requests"] if r["kind"]=="rest")')" 0
done_case $? "$F0"

CASE="apply proves absence again before it creates, once, and creates each item once"
F0=$FAIL
ctl DELETE /_emu/requests >/dev/null
run 0 "$PMBOT" apply --repo "$R" --backend github --plan "$TMP/p1.json" --approve "$(approve "$TMP/p1.json")" &&
	expect_in "$OUT" "failed 0" &&
	# The fresh plan's read, a filtered page and a full scan (6), which the
	# executor starts from instead of reading again, and the one read of the
	# repository's labels and issue types that creates need (the same
	# top-level field).
	expect_eq "$(requests "$PAGES")" 7 &&
	expect_eq "$(markers)" '[["epic:checkout-reliability", 1], ["feat:checkout-tracing", 1], ["feat:graceful-drain", 1], ["spike:trace-sampling", 1], ["task:drain-hook", 1], ["task:trace-propagation", 1], ["test:drain-soak", 1]]'
done_case $? "$F0"

CASE="a re-plan reads one filtered page whatever the repository's size: at most ceil(M/100) + ceil(items/100) + 5 requests"
F0=$FAIL
ctl DELETE /_emu/requests >/dev/null
run 0 "$PMBOT" plan --format md --repo "$R" --backend github --detailed-exitcode &&
	expect_in "$OUT" "**No changes.**" &&
	expect_eq "$(requests "$PAGES")" 1 &&
	TOTAL=$(requests 'd["total"]') &&
	{ [ "$TOTAL" -le $((1 + 1 + 5)) ] || fail "$TOTAL requests"; } &&
	expect_eq "$TOTAL" 3 &&
	expect_eq "$(requests 'sum(1 for r in d["requests"] if r["kind"]=="rest")')" 0
done_case $? "$F0"

ctl GET /_emu/state >"$TMP/applied.json"
DRAIN=$(py "$TMP/applied.json" '"acme/widgets#%d" % [i for r in d["state"]["repositories"] for i in r["issues"] if "pm-bot:id=task:drain-hook " in i["body"]][0]["number"]')

CASE="a managed issue the filter misses is found by the scan, named, and updated rather than created again"
F0=$FAIL
py "$TMP/applied.json" 'dict(d, filter_misses=["'"$DRAIN"'"])' >"$TMP/miss.json" &&
	reset_to "$TMP/miss.json" &&
	sed -i 's/Add a preStop hook that waits for in-flight payments/Add a preStop hook that waits for every in-flight payment/' "$R/plans/q4.md" &&
	gitc "$R" commit -qam "rename the hidden one" &&
	run 0 "$PMBOT" plan --format md --repo "$R" --backend github --format json --out "$TMP/p2.json" &&
	expect_eq "$(py "$TMP/p2.json" '" ".join(sorted(c["operation"] for c in d["changesets"]))')" "update_issue_title" &&
	expect_eq "$(py "$TMP/p2.json" '[c["target"]["stable_id"] for c in d["changesets"]]')" '["task:drain-hook"]' &&
	expect_eq "$(py "$TMP/p2.json" '[x["code"] for x in d["diagnostics"]]')" '["NARROW_READ_MISSED"]' &&
	MSG=$(py "$TMP/p2.json" 'd["diagnostics"][0]["message"]') &&
	expect_in "$MSG" "$DRAIN (item 'task:drain-hook', created by github-actions[bot])" &&
	ctl DELETE /_emu/requests >/dev/null &&
	run 0 "$PMBOT" apply --repo "$R" --backend github --plan "$TMP/p2.json" --approve "$(approve "$TMP/p2.json")" &&
	expect_in "$OUT" "applied 1, already applied 0, denied 0, failed 0" &&
	expect_eq "$(requests 'sum(1 for r in d["requests"] if r["operation"]=="issues/create")')" 0 &&
	expect_eq "$(markers)" '[["epic:checkout-reliability", 1], ["feat:checkout-tracing", 1], ["feat:graceful-drain", 1], ["spike:trace-sampling", 1], ["task:drain-hook", 1], ["task:trace-propagation", 1], ["test:drain-soak", 1]]' &&
	expect_eq "$(ctl GET /_emu/state | py - '[i["title"] for r in d["state"]["repositories"] for i in r["issues"] if "pm-bot:id=task:drain-hook " in i["body"]]')" \
		'["[task] Add a preStop hook that waits for every in-flight payment"]'
done_case $? "$F0"

CASE="an item created while its plan waited is found by apply's proof, never created twice"
F0=$FAIL
# A plan with a new item, made while the item is absent.
reset_to "$TMP/applied.json" &&
	python3 - "$R/plans/q4.md" <<'PY' &&
import sys
p = sys.argv[1]
s = open(p).read()
task = '''  - stable_id: task:drain-alert
    feature_id: feat:graceful-drain
    title: Alert when a drain times out
    area: checkout
    priority: P2
    size: XS
    estimate_hrs: 2

  - stable_id: spike:trace-sampling'''
s = s.replace("  - stable_id: spike:trace-sampling", task, 1)
open(p, "w").write(s)
PY
	gitc "$R" commit -qam "a new task" &&
	run 0 "$PMBOT" plan --format md --repo "$R" --backend github --format json --out "$TMP/p3.json" &&
	expect_eq "$(py "$TMP/p3.json" '[c["target"]["stable_id"] for c in d["changesets"] if c["operation"]=="create_issue"]')" '["task:drain-alert"]' &&
	# Meanwhile another run created it, and GitHub's filter does not list it.
	BODY=$(py "$TMP/p3.json" '[c["payload"]["body"] for c in d["changesets"] if c["operation"]=="create_issue"][0]') &&
	TITLE=$(py "$TMP/p3.json" '[c["payload"]["title"] for c in d["changesets"] if c["operation"]=="create_issue"][0]') &&
	python3 -c 'import json,sys; print(json.dumps({"title": sys.argv[1], "body": sys.argv[2]}))' "$TITLE" "$BODY" >"$TMP/create.json" &&
	curl -sf -X POST -H "authorization: Bearer $TOKEN" -H 'x-github-api-version: 2022-11-28' \
		-H 'content-type: application/json' --data @"$TMP/create.json" "$URL/repos/acme/widgets/issues" >"$TMP/created.json" &&
	NEW="acme/widgets#$(py "$TMP/created.json" 'str(d["number"])')" &&
	ctl GET /_emu/state | py - 'dict(d, filter_misses=["'"$NEW"'"])' >"$TMP/miss2.json" &&
	reset_to "$TMP/miss2.json" &&
	ctl DELETE /_emu/requests >/dev/null &&
	run 2 "$PMBOT" apply --repo "$R" --backend github --plan "$TMP/p3.json" --approve "$(approve "$TMP/p3.json")" &&
	expect_in "$ERR" "NARROW_READ_MISSED" && expect_in "$ERR" "$NEW (item 'task:drain-alert'" &&
	expect_in "$ERR" "the plan is stale" &&
	expect_eq "$(requests 'sum(1 for r in d["requests"] if r["operation"]=="issues/create")')" 0 &&
	expect_eq "$(markers | py - 'dict(d)["task:drain-alert"]')" 1 &&
	# Planned again, the found issue is the item: nothing to create.
	run 0 "$PMBOT" plan --format md --repo "$R" --backend github --format json &&
	expect_eq "$(printf '%s' "$OUT" | py - 'sum(1 for c in d["changesets"] if c["operation"]=="create_issue")')" 0
done_case $? "$F0"

CASE="an issue the report names by URL is read by number, not by a scan, and the edge to it lands"
F0=$FAIL
E=$TMP/ext
reset_to "$TMP/applied.json" && example_repo "$E" &&
	sed -i 's|    blocked_by: \[task:drain-hook\]|    blocked_by: [task:drain-hook, https://github.com/acme/widgets/issues/3]|' "$E/plans/q4.md" &&
	grep -q 'issues/3]' "$E/plans/q4.md" &&
	gitc "$E" commit -qam "blocked by someone's issue" &&
	ctl DELETE /_emu/requests >/dev/null &&
	run 0 "$PMBOT" plan --format md --repo "$E" --backend github --format json --out "$TMP/pe.json" &&
	expect_eq "$(py "$TMP/pe.json" 'sorted(c["operation"] for c in d["changesets"])')" '["add_dependency", "update_issue_body"]' &&
	expect_eq "$(py "$TMP/pe.json" '[c["payload"]["blocker"] for c in d["changesets"] if c["operation"]=="add_dependency"]')" \
		'[{"number": 3, "repo": "acme/widgets"}]' &&
	# One filtered page and one request for #3 by number: no scan.
	expect_eq "$(requests "$PAGES")" 2 &&
	run 0 "$PMBOT" apply --repo "$E" --backend github --plan "$TMP/pe.json" --approve "$(approve "$TMP/pe.json")" &&
	expect_in "$OUT" "applied 2, already applied 0, denied 0, failed 0" &&
	expect_eq "$(ctl GET /_emu/state | py - '[i["blocked_by"] for r in d["state"]["repositories"] for i in r["issues"] if "pm-bot:id=test:drain-soak " in i["body"]][0]')" \
		"[\"acme/widgets#3\", \"$DRAIN\"]" &&
	run 0 "$PMBOT" plan --format md --repo "$E" --backend github --detailed-exitcode &&
	expect_in "$OUT" "**No changes.**"
done_case $? "$F0"

CASE="GitHub without sub-issues, dependencies or issue types: warned before any write, nothing sent that would fail"
F0=$FAIL
emu_seed "$TMP/ghes.json" 'seed["ghes"] = {"sub_issues": False, "dependencies": False, "issue_types": False}
seed["issue_types"] = {"acme": [{"name": "Epic"}, {"name": "Feature"}, {"name": "Task"}]}' &&
	reset_to "$TMP/ghes.json" &&
	G=$TMP/ghes-repo && example_repo "$G" &&
	run 0 "$PMBOT" plan --format md --repo "$G" --backend github --format json --out "$TMP/pg.json" &&
	expect_eq "$(py "$TMP/pg.json" 'sorted(set(x["code"] for x in d["diagnostics"]))')" '["DEPENDENCIES_UNSUPPORTED", "SUB_ISSUES_UNSUPPORTED"]' &&
	expect_eq "$(py "$TMP/pg.json" 'sum(1 for c in d["changesets"] if c["operation"] in ("set_parent","add_dependency","remove_dependency"))')" 0 &&
	expect_eq "$(py "$TMP/pg.json" 'sum(1 for c in d["changesets"] if c["operation"]=="create_issue")')" 7 &&
	ctl DELETE /_emu/requests >/dev/null &&
	run 0 "$PMBOT" apply --repo "$G" --backend github --plan "$TMP/pg.json" --approve "$(approve "$TMP/pg.json")" &&
	expect_in "$OUT" "failed 0" &&
	expect_eq "$(requests 'sum(1 for r in d["requests"] if r["status"]>=400)')" 0 &&
	expect_eq "$(requests 'sum(1 for r in d["requests"] if "sub_issue" in r["path"] or "dependencies" in r["path"])')" 0 &&
	run 0 "$PMBOT" plan --format md --repo "$G" --backend github --format json &&
	expect_eq "$(printf '%s' "$OUT" | py - 'len(d["changesets"])')" 0 &&
	expect_eq "$(markers | py - 'len(d)')" 7 &&
	expect_eq "$(ctl GET /_emu/state | py - 'len(d.get("issue_type", {}))')" 0
done_case $? "$F0"

finish
