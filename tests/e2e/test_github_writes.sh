#!/usr/bin/env bash
# End to end, the write side against the loopback emulator (tests/github-emu,
# GitHub's documented secondary limits on): a plan of 20 new items with
# parents, board fields, dependencies and issue types. The first apply costs
# one createIssue per item (labels, parent, board and type in it), the fields
# and the edges in aliased batches; a re-plan has no changes; an apply killed
# mid-run converges with no duplicate issue, edge or item; issue_types: off
# sets no type, and turned back to auto sets each existing issue's type in
# one request.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
ROOT=$PWD
CASE=setup
need_node
emu_env
unset GITHUB_REPOSITORY
TOKEN=ghp_e2eWRITEStoken5f3a9c0d1b2e
trap 'scripts/emu.sh stop "$EMU" >/dev/null 2>&1; rm -rf "$TMP"' EXIT

# The seed: acme/widgets without issues, board acme/1, the organization's
# issue types Epic, Feature and Task (no Spike), GitHub's documented
# secondary limits (80 a minute, 500 an hour) enforced.
emu_seed "$TMP/seed.json" "$(cat <<'PY'
seed["issue_types"] = {"acme": [{"name": "Epic"}, {"name": "Feature"}, {"name": "Task"}]}
seed["secondary_limits"] = {}
PY
)"
emu_start "$TMP/seed.json"
export PMBOT_GITHUB_CACHE_DIR="$TMP/cache"

reset_world() { ctl POST /_emu/reset "$(cat "$TMP/seed.json")" >/dev/null && rm -rf "$TMP/cache"; }

# A report of 20 items: 1 epic, 3 features under it, 16 tasks under the
# features (one of them a spike, a kind the organization has no type for);
# each task after the first of its feature is blocked by the one before.
new_repo() {
	git init -q -b main "$1"
	mkdir -p "$1/plans" "$1/.github"
	cp "$ROOT/examples/.github/pm-bot.yml" "$1/.github/pm-bot.yml"
	python3 - "$1/plans/big.md" <<'PY'
import sys
areas = ["checkout", "observability", "payments"]
out = ["# Twenty items", "", "```pm-bot:report-ir/v1", "schema_version: report_ir/v1", "report:",
       "  title: Twenty items", "  generated_at: 2026-11-02", "  scope:", "    org: acme",
       "    repos: [widgets]", "  source:", "    kind: human", "", "epics:",
       "  - stable_id: epic:big", "    title: One epic over twenty items",
       "    objective: Everything lands once.", "    area: checkout", "    priority: P1", "",
       "features:"]
for f in range(3):
    out += ["  - stable_id: feat:f%d" % f, "    epic_id: epic:big",
            "    title: Feature number %d" % f, "    goal: Feature %d ships." % f,
            "    area: %s" % areas[f], "    priority: P2", "    size: M", "    estimate_hrs: 8"]
out += ["", "tasks:"]
sizes = [6, 5, 5]
n = 0
for f in range(3):
    for k in range(sizes[f]):
        out += ["  - stable_id: task:t%02d" % n, "    feature_id: feat:f%d" % f]
        if n == 7:
            out += ["    type: spike"]
        out += ["    title: Task number %d" % n, "    area: %s" % areas[f], "    priority: P3",
                "    size: S", "    estimate_hrs: %d" % (n + 1)]
        if k:
            out += ["    blocked_by: [task:t%02d]" % (n - 1)]
        n += 1
out += ["```", ""]
open(sys.argv[1], "w").write("\n".join(out))
PY
	gitc "$1" add plans .github && gitc "$1" commit -qm "twenty items"
}

plan_to() { run 0 "$PMBOT" plan --format md --repo "$1" --backend github --out "$2"; }

# check_world: 20 issues, each stable id once, every parent and edge of the
# report, 20 board items on distinct issues; types as the kinds say.
check_world() {
	ctl GET /_emu/state >"$TMP/world.json" &&
		expect_eq "$(py "$TMP/world.json" 'len([i for r in d["state"]["repositories"] for i in r["issues"]])')" 20 &&
		expect_eq "$(py "$TMP/world.json" 'len(set(i["body"].split("pm-bot:id=")[1].split(" ")[0] for r in d["state"]["repositories"] for i in r["issues"]))')" 20 &&
		expect_eq "$(py "$TMP/world.json" 'sum(1 for r in d["state"]["repositories"] for i in r["issues"] if i["parent"])')" 19 &&
		expect_eq "$(py "$TMP/world.json" 'sum(len(i["blocked_by"]) for r in d["state"]["repositories"] for i in r["issues"])')" 13 &&
		expect_eq "$(py "$TMP/world.json" 'len(d["state"]["project"]["items"])')" 20 &&
		expect_eq "$(py "$TMP/world.json" 'len(set(x["issue"] for x in d["state"]["project"]["items"]))')" 20
}

# types: "stable_id type" of each issue, sorted, from the dump's issue_type.
types() {
	py "$TMP/world.json" '" ".join(sorted(set(("%s=%s" % (i["body"].split("pm-bot:id=")[1].split(" ")[0].split(":")[0], d.get("issue_type", {}).get("%s#%d" % (r["repo"], i["number"]), "-"))) for r in d["state"]["repositories"] for i in r["issues"])))'
}

CASE="the first apply: one createIssue per item with labels, parent, board and type; fields and edges batched"
R=$TMP/r1
new_repo "$R"
plan_to "$R" "$TMP/p.json" &&
	N=$(py "$TMP/p.json" 'sum(1 for c in d["changesets"] if c["operation"]=="create_issue")') &&
	F=$(py "$TMP/p.json" 'sum(1 for c in d["changesets"] if c["operation"]=="set_project_field")') &&
	E=$(py "$TMP/p.json" 'sum(1 for c in d["changesets"] if c["operation"]=="add_dependency")') &&
	expect_eq "$N" 20 && expect_eq "$E" 13 &&
	ctl DELETE /_emu/requests >/dev/null &&
	run 0 "$PMBOT" apply --repo "$R" --backend github --plan "$TMP/p.json" \
		--approve "$(py "$TMP/p.json" 'd["plan_hash"]')" &&
	ctl GET /_emu/requests >"$TMP/req.json" &&
	CREATES=$(py "$TMP/req.json" 'sum(1 for r in d["requests"] if (r["operation"] or "")=="mutation createIssue" and r["status"]==200)') &&
	LABELS=$(py "$TMP/req.json" 'sum(1 for r in d["requests"] if r["kind"]=="rest" and r["method"]=="POST" and r["path"].endswith("/labels"))') &&
	WRITES=$(py "$TMP/req.json" 'sum(1 for r in d["requests"] if (r["kind"]=="rest" and r["method"]!="GET") or (r["operation"] or "").startswith("mutation"))') &&
	SECONDARY=$(py "$TMP/req.json" 'sum(1 for r in d["requests"] if r["status"] in (403, 429))') &&
	expect_eq "$CREATES" "$N" &&
	expect_eq "$SECONDARY" 0 &&
	expect_eq "$(py "$TMP/req.json" 'sum(1 for r in d["requests"] if "/sub_issues" in r["path"] or "/dependencies" in r["path"] or "addProjectV2ItemById" in (r["operation"] or ""))')" 0 &&
	expect_eq "$(py "$TMP/req.json" 'sum(1 for r in d["requests"] if "addBlockedBy" in (r["operation"] or ""))')" 1 &&
	BOUND=$(( (3 * N + 1) / 2 + (F + 49) / 50 + (E + 49) / 50 + LABELS )) &&
	{ [ "$WRITES" -le "$BOUND" ] || fail "$WRITES writes, more than 1.5 x $N + batches + $LABELS labels = $BOUND"; } &&
	echo "  measured: $N new items, $WRITES writes ($CREATES createIssue, $LABELS labels created once, $F fields and $E edges in batches); $(python3 -c "print('%.2f' % (($WRITES - $LABELS) / $N))") writes per new item besides the labels" &&
	check_world && ok

CASE="each issue has the type named like its kind; a kind without a type gets none; the type labels stay"
echo "  types: $(types)" &&
	expect_eq "$(types)" "epic=Epic feat=Feature task=- task=Task" &&
	expect_eq "$(py "$TMP/world.json" 'sorted(set(l for r in d["state"]["repositories"] for i in r["issues"] for l in i["labels"] if l.startswith("type:")))')" \
		'["type:epic", "type:feature", "type:spike", "type:task"]' && ok

CASE="a re-plan has no changes"
run 0 "$PMBOT" plan --format md --repo "$R" --backend github --detailed-exitcode &&
	expect_in "$OUT" "**No changes.**" && ok

# converge REPO PLAN: apply again (resuming) until it succeeds, at most 4 times.
converge() {
	local i
	for i in 1 2 3 4; do
		"$PMBOT" apply --repo "$1" --backend github --plan "$2" \
			--approve "$(py "$2" 'd["plan_hash"]')" >"$TMP/out" 2>"$TMP/err"
		STATUS=$?
		[ "$STATUS" -eq 0 ] && break
		[ "$STATUS" -eq 1 ] || { fail "apply ended with status $STATUS: $(cat "$TMP/err")"; return 1; }
	done
	run 0 "$PMBOT" plan --format md --repo "$1" --backend github --detailed-exitcode &&
		expect_in "$OUT" "**No changes.**" && check_world
}

# 3: among the creates (their parents and items landed with them, not yet
# recorded); 25: among the set_parent changesets settled "with" a create;
# 40: among the dependency batch.
for k in 3 25 40; do
	CASE="kill -9 after $k changesets, then a re-run converges with no duplicate issue, edge or item"
	reset_world
	R=$TMP/k$k
	new_repo "$R"
	plan_to "$R" "$TMP/k.json" || continue
	bash -c '"$@"; exit $?' _ env PMBOT_TEST_KILL_AFTER=$k "$PMBOT" apply --repo "$R" --backend github \
		--plan "$TMP/k.json" --approve "$(py "$TMP/k.json" 'd["plan_hash"]')" >"$TMP/out" 2>"$TMP/err"
	st=$?
	[ "$st" -eq 137 ] || { fail "apply was not killed (status $st)"; continue; }
	converge "$R" "$TMP/k.json" && ok
done

CASE="issue_types: off sets no issue type"
reset_world
R=$TMP/off
new_repo "$R"
printf '\nissue_types: off\n' >>"$R/.github/pm-bot.yml"
gitc "$R" commit -qam "no issue types"
plan_to "$R" "$TMP/off.json" &&
	run 0 "$PMBOT" apply --repo "$R" --backend github --plan "$TMP/off.json" \
		--approve "$(py "$TMP/off.json" 'd["plan_hash"]')" &&
	check_world && expect_eq "$(py "$TMP/world.json" 'len(d.get("issue_type", {}))')" 0 && ok

# The issues above exist without types; issue_types back to auto.
CASE="issue_types: auto sets the type of each existing issue in one request; a kind without a type gets none"
sed -i '$d' "$R/.github/pm-bot.yml"
gitc "$R" commit -qam "issue types again"
plan_to "$R" "$TMP/on.json" &&
	expect_eq "$(py "$TMP/on.json" 'sorted(set(c["operation"] for c in d["changesets"]))')" '["set_issue_type"]' &&
	expect_eq "$(py "$TMP/on.json" 'len(d["changesets"])')" 19 &&
	expect_eq "$(py "$TMP/on.json" 'sorted(set(c["payload"]["issue_type"] for c in d["changesets"]))')" '["Epic", "Feature", "Task"]' &&
	expect_eq "$(py "$TMP/on.json" 'sum(1 for c in d["changesets"] if c["target"]["stable_id"]=="task:t07")')" 0 &&
	ctl DELETE /_emu/requests >/dev/null &&
	run 0 "$PMBOT" apply --repo "$R" --backend github --plan "$TMP/on.json" \
		--approve "$(py "$TMP/on.json" 'd["plan_hash"]')" &&
	ctl GET /_emu/requests >"$TMP/req.json" &&
	expect_eq "$(py "$TMP/req.json" 'sum(1 for r in d["requests"] if (r["kind"]=="rest" and r["method"]!="GET") or (r["operation"] or "").startswith("mutation"))')" 19 &&
	expect_eq "$(py "$TMP/req.json" 'sum(1 for r in d["requests"] if (r["operation"] or "")=="mutation updateIssueIssueType" and r["status"]==200)')" 19 &&
	check_world && expect_eq "$(types)" "epic=Epic feat=Feature task=- task=Task" && ok

CASE="after the types are set a re-plan has no changes"
run 0 "$PMBOT" plan --format md --repo "$R" --backend github --detailed-exitcode &&
	expect_in "$OUT" "**No changes.**" && ok

CASE="a type a person changed is set back to the kind's, like a title"
EPIC=$(py "$TMP/world.json" '[i["node_id"] for r in d["state"]["repositories"] for i in r["issues"] if "pm-bot:id=epic:big" in i["body"]][0]') &&
	TASKT=$(curl -sf -H "authorization: bearer $TOKEN" -H 'content-type: application/json' "$URL/graphql" \
		--data '{"query":"query { repository(owner: \"acme\", name: \"widgets\") { issueTypes(first: 10) { nodes { id name } } } }"}' |
		py - '[t["id"] for t in d["data"]["repository"]["issueTypes"]["nodes"] if t["name"]=="Task"][0]') &&
	curl -sf -H "authorization: bearer $TOKEN" -H 'content-type: application/json' "$URL/graphql" \
		--data "{\"query\":\"mutation { updateIssueIssueType(input: {issueId: \\\"$EPIC\\\", issueTypeId: \\\"$TASKT\\\"}) { issue { number } } }\"}" >/dev/null &&
	plan_to "$R" "$TMP/drift.json" &&
	expect_eq "$(py "$TMP/drift.json" '[(c["operation"], c["target"]["stable_id"], c["before"], c["payload"]) for c in d["changesets"]]')" \
		'[["set_issue_type", "epic:big", {"issue_type": "Task"}, {"issue_type": "Epic"}]]' && ok

finish
