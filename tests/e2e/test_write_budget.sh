#!/usr/bin/env bash
# End to end: the write budget against the loopback emulator enforcing the
# same (shrunken) secondary limits. An apply bigger than one window pauses
# cleanly with "k of N applied; resumes after T" (exit 4), and the same
# command run again after the window frees continues the same approval until
# it converges: no duplicate issue, edge or item, and never a secondary-limit
# answer. Also: the budget record survives runs, a garbled record is ignored
# with a note, a bad budget is refused, and the environment overrides the
# configuration.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
CASE=setup
need_node
emu_env
unset GITHUB_REPOSITORY PMBOT_GITHUB_WRITE_BUDGET
TOKEN=ghp_e2eBUDGETtoken7c1d2e3f4a5b
trap 'scripts/emu.sh stop "$EMU" >/dev/null 2>&1; rm -rf "$TMP"' EXIT

# Shrunken windows, the same in the emulator and in pm-bot's budget.
# The long window binds (9 writes go in about 2 s, the 10th would wait about
# 4 s, longer than the shortest window): a run pauses after 9 writes. The
# example's first apply takes 23 writes, so it spans three runs.
BUDGET="4/1s,9/6s"
emu_seed "$TMP/seed.json" "$(cat <<'PY'
seed["secondary_limits"] = {"windows": [{"count": 4, "seconds": 1}, {"count": 9, "seconds": 6}],
                            "status": 403}
PY
)"
emu_start "$TMP/seed.json"
export PMBOT_GITHUB_CACHE_DIR="$TMP/cache"

reset_world() { ctl POST /_emu/reset "$(cat "$TMP/seed.json")" >/dev/null && ctl DELETE /_emu/requests >/dev/null && rm -rf "$TMP/cache"; }

# Runs of `pm-bot apply` of one approved plan until it exits 0 (at most 8).
# PAUSES counts the pauses, LINES keeps their progress lines.
apply_until_done() {
	local repo=$1 plan=$2 h i st T
	h=$(py "$plan" 'd["plan_hash"]')
	PAUSES=0
	LINES=
	for i in 1 2 3 4 5 6 7 8; do
		"$PMBOT" apply --repo "$repo" --backend github --plan "$plan" --approve "$h" \
			>"$TMP/out" 2>"$TMP/err"
		st=$?
		cat "$TMP/err" >>"$TMP/all-err"
		[ "$st" -eq 0 ] && return 0
		if [ "$st" -ne 4 ]; then
			fail "apply run $i exited $st: $(cat "$TMP/out" "$TMP/err")"
			return 1
		fi
		PAUSES=$((PAUSES + 1))
		LINE=$(grep -E '^[0-9]+ of [0-9]+ applied; resumes after ' "$TMP/out") || {
			fail "run $i paused without the progress line: $(cat "$TMP/out")"
			return 1
		}
		LINES="$LINES$LINE
"
		T=${LINE##* resumes after }
		# A sleep to let the window free, not a timing assertion.
		sleep "$(until_after "$T")"
	done
	fail "the apply did not finish in 8 runs"
	return 1
}

# No secondary-limit answer and no 403/429 in the emulator's log.
no_limit_answers() {
	ctl GET /_emu/requests >"$TMP/req.json" &&
		expect_eq "$(py "$TMP/req.json" 'sum(1 for r in d["requests"] if r["secondary_limited"] or r["status"] in (403, 429))')" 0
}

# Converged: no duplicate issue, sub-issue, dependency or project item, and a
# re-plan has nothing to do.
converged() {
	local repo=$1 st
	ctl GET /_emu/state >"$TMP/state.json" &&
		expect_eq "$(py "$TMP/state.json" 'len([i for r in d["state"]["repositories"] for i in r["issues"]])')" 7 &&
		expect_eq "$(py "$TMP/state.json" 'len(set(i["title"] for r in d["state"]["repositories"] for i in r["issues"]))')" 7 &&
		expect_eq "$(py "$TMP/state.json" 'all(len(i.get("blocked_by", [])) == len(set(map(json.dumps, i.get("blocked_by", [])))) for r in d["state"]["repositories"] for i in r["issues"])')" true &&
		expect_eq "$(py "$TMP/state.json" 'len(d["state"]["project"]["items"]) == len(set(json.dumps(x["issue"]) if "issue" in x else json.dumps(x, sort_keys=True) for x in d["state"]["project"]["items"]))')" true &&
		run 0 "$PMBOT" plan --format md --repo "$repo" --backend github --detailed-exitcode &&
		expect_in "$OUT" "**No changes.**"
}

CASE="an apply bigger than the budget pauses, resumes over several runs with the same approval and converges"
export PMBOT_GITHUB_WRITE_BUDGET=$BUDGET
R=$TMP/r1
example_repo "$R"
: >"$TMP/all-err"
run 0 "$PMBOT" plan --format md --repo "$R" --backend github --out "$TMP/p1.json" &&
	N=$(py "$TMP/p1.json" 'len(d["changesets"])') &&
	apply_until_done "$R" "$TMP/p1.json" &&
	{ [ "$PAUSES" -ge 2 ] || fail "expected at least two pauses, got $PAUSES: $LINES; writes: $(ctl GET /_emu/requests | py - "sum(1 for r in d[\"requests\"] if r[\"content_creating\"])")"; } &&
	FIRST=$(printf '%s' "$LINES" | head -n 1) &&
	expect_in "$FIRST" " of $N applied; resumes after 20" &&
	expect_eq "$(printf '%s' "$LINES" | grep -c " of $N applied; ")" "$PAUSES" &&
	no_limit_answers &&
	converged "$R" &&
	ok

CASE="the pauses are in the audit ledger with the time they resume after"
L="$R/.pm-bot/audit.jsonl"
expect_eq "$(grep -c '"event":"pause"' "$L")" "$PAUSES" &&
	expect_eq "$(grep '"event":"pause"' "$L" | head -n 1 | py - 'd["reason"] + " " + str(d["resumes_after"].endswith("Z"))')" "BUDGET_SPENT True" &&
	run 0 "$PMBOT" audit verify "$L" &&
	ok

CASE="the budget record in the cache directory lists the writes of the last window"
expect_eq "$(py "$TMP/cache/write-budget.json" 'str(d["version"]) + " " + str(0 < len(d["writes"]) <= 9)')" "1 True" &&
	ok

CASE="a run right after a pause does not write past the windows the previous run filled"
reset_world
R=$TMP/r2
example_repo "$R"
run 0 "$PMBOT" plan --format md --repo "$R" --backend github --out "$TMP/p2.json" &&
	H=$(py "$TMP/p2.json" 'd["plan_hash"]') &&
	run 4 "$PMBOT" apply --repo "$R" --backend github --plan "$TMP/p2.json" --approve "$H" &&
	run 4 "$PMBOT" apply --repo "$R" --backend github --plan "$TMP/p2.json" --approve "$H" &&
	expect_in "$OUT" " applied; resumes after " &&
	no_limit_answers &&
	ok

CASE="a garbled budget record is ignored with a note, never a crash"
reset_world
mkdir -p "$TMP/cache"
printf '{"version": 1, "writes": [1, "x"' >"$TMP/cache/write-budget.json"
run 0 "$PMBOT" plan --format md --repo "$R" --backend github --out "$TMP/p3.json" &&
	expect_in "$ERR" "ignoring the write budget record" &&
	ok

CASE="a forged record of writes in the far future counts them as now: it cannot stop writes for long"
python3 -c 'import json, sys; json.dump({"api_url": sys.argv[1], "version": 1, "writes": [99999999999999999] * 9}, open(sys.argv[2], "w"))' \
	"$URL" "$TMP/cache/write-budget.json"
H=$(py "$TMP/p3.json" 'd["plan_hash"]')
run 4 "$PMBOT" apply --repo "$R" --backend github --plan "$TMP/p3.json" --approve "$H" &&
	LINE=$(grep -E '^0 of [0-9]+ applied; resumes after ' "$TMP/out") &&
	sleep "$(until_after "${LINE##* resumes after }")" &&
	run 4 "$PMBOT" apply --repo "$R" --backend github --plan "$TMP/p3.json" --approve "$H" &&
	expect_in "$OUT" " applied; resumes after " &&
	{ ! grep -q '^0 of ' "$TMP/out" || fail "nothing was applied after the forged window passed"; } &&
	ok

CASE="a malformed budget is refused before anything is read or written"
ctl DELETE /_emu/requests >/dev/null
PMBOT_GITHUB_WRITE_BUDGET="80/60" run 2 "$PMBOT" plan --format md --repo "$R" --backend github &&
	expect_in "$ERR" "write budget" &&
	expect_eq "$(ctl GET /_emu/requests | py - 'len(d["requests"])')" 0 &&
	ok

CASE="github.write_budget in the configuration paces when the environment says nothing"
unset PMBOT_GITHUB_WRITE_BUDGET
reset_world
R=$TMP/r4
example_repo "$R" "github: {write_budget: \"$BUDGET\"}"
run 0 "$PMBOT" plan --format md --repo "$R" --backend github --out "$TMP/p4.json" &&
	H=$(py "$TMP/p4.json" 'd["plan_hash"]') &&
	run 4 "$PMBOT" apply --repo "$R" --backend github --plan "$TMP/p4.json" --approve "$H" &&
	expect_in "$OUT" " applied; resumes after " &&
	no_limit_answers &&
	ok

CASE="the environment overrides the configuration's budget"
reset_world
R=$TMP/r5
example_repo "$R" "github: {write_budget: \"1/86400s\"}"
export PMBOT_GITHUB_WRITE_BUDGET=$BUDGET
run 0 "$PMBOT" plan --format md --repo "$R" --backend github --out "$TMP/p5.json" &&
	H=$(py "$TMP/p5.json" 'd["plan_hash"]') &&
	run 4 "$PMBOT" apply --repo "$R" --backend github --plan "$TMP/p5.json" --approve "$H" &&
	expect_in "$OUT" " applied; resumes after " &&
	W=$(ctl GET /_emu/requests | py - 'sum(1 for r in d["requests"] if r["content_creating"])') &&
	{ [ "$W" -gt 1 ] || fail "only $W write(s): the configuration's 1/86400s won over the environment"; } &&
	ok

CASE="a bad github.write_budget in the configuration is a CONFIG_VALUE error"
R=$TMP/r6
example_repo "$R" "github: {write_budget: \"80 per minute\"}"
run 2 "$PMBOT" validate --repo "$R" &&
	expect_in "$OUT$ERR" "CONFIG_VALUE" &&
	ok

finish
