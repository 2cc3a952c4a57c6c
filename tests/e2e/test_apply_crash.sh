#!/usr/bin/env bash
# End to end: kill -9 at several points of a large file-backend apply (some
# 10,500 changesets of bench/gen_report.py's 1,400 items, so several group
# commits), then the same apply again. The points are counted, never timed:
# as the Nth changeset starts (its group only in memory), once the Kth
# group's state is written and before its audit events are, and while the
# outcomes of a written and recorded group are being told. After each kill
# the ledger claims no create the state file lacks; after the re-run the
# state file is byte for byte the uninterrupted apply's, no issue is there
# twice, a new plan has nothing to do and the ledger's chain is intact.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
ROOT=$PWD
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 PMBOT_NOW=2026-11-22T12:00:00Z
unset GITHUB_REPOSITORY PMBOT_TEST_KILL_AFTER PMBOT_TEST_KILL_BEFORE PMBOT_TEST_KILL_AT_COMMIT
N=1400

R=$TMP/repo
git init -q -b main "$R"
mkdir -p "$R/plans" "$R/.github"
printf 'reports: ["plans/**/*.md"]\nrepos: [acme/widgets]\nproject: {owner: acme, number: 1}\n' \
	>"$R/.github/pm-bot.yml"
python3 "$ROOT/bench/gen_report.py" -o "$R/plans/big.md" "$N"
git -C "$R" add -A && git -C "$R" -c user.name=t -c user.email=t@example.com \
	-c commit.gpgsign=false commit -qm "$N items"
python3 "$ROOT/bench/gen_state.py" -o "$TMP/empty.json"

# check FILE STATE LEDGER WHAT: python checks over a state and a ledger.
#   claims: every create the ledger records as applied is in the state
#   unique: no stable id is carried by two issues; prints the issue count
check() {
	python3 - "$@" <<'PY'
import json, re, sys
what, state, ledger = sys.argv[1], sys.argv[2], sys.argv[3]
st = json.load(open(state))
ids = [m.group(1) for r in st["repositories"] for i in r["issues"]
       for m in [re.search(r"<!-- pm-bot:id=(\S+) rev=", i.get("body") or "")] if m]
if what == "unique":
    dup = sorted({s for s in ids if ids.count(s) > 1})
    assert not dup, "issues created twice: %s" % dup[:5]
    print(len(ids))
elif what == "claims":
    have = set(ids)
    for line in open(ledger):
        ev = json.loads(line)
        if ev["event"] == "success" and ev.get("status") == "applied" \
                and ev["operation"] == "create_issue":
            sid = ev["target"]["stable_id"]
            assert sid in have, "the ledger says %s was created; the state lacks it" % sid
PY
}

CASE="the uninterrupted apply of the large plan"
cp "$TMP/empty.json" "$TMP/want.json"
run 0 "$PMBOT" plan --repo "$R" --state "$TMP/want.json" --format json --out "$TMP/plan.json" &&
	H=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["plan_hash"])' "$TMP/plan.json") &&
	NCS=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["changesets"]))' "$TMP/plan.json") &&
	run 0 "$PMBOT" apply --repo "$R" --state "$TMP/want.json" --plan "$TMP/plan.json" --approve "$H" \
		--audit "$TMP/want.jsonl" &&
	expect_in "$OUT" "applied $NCS, already applied 0, denied 0, failed 0, pending 0" &&
	ISSUES=$(check unique "$TMP/want.json" "$TMP/want.jsonl") &&
	# More than two groups, or the points below do not fall where they say.
	[ "$NCS" -gt 8500 ] && ok

# The subshell keeps bash's "Killed" notice out of the test's output.
unquiet() { ( "$@"; exit $? ); }

for point in KILL_BEFORE=2000 KILL_AT_COMMIT=1 KILL_AFTER=6000 KILL_AT_COMMIT=3 KILL_BEFORE=9000; do
	CASE="kill -9 at PMBOT_TEST_$point, then the same apply again"
	st=$TMP/$point.json
	ledger=$TMP/$point.jsonl
	cp "$TMP/empty.json" "$st"
	run 137 unquiet env "PMBOT_TEST_$point" "$PMBOT" apply --repo "$R" --state "$st" \
		--plan "$TMP/plan.json" --approve "$H" --audit "$ledger" || continue
	run 0 check claims "$st" "$ledger" || continue
	run 0 "$PMBOT" audit verify "$ledger" || continue
	run 0 "$PMBOT" apply --repo "$R" --state "$st" --plan "$TMP/plan.json" --approve "$H" \
		--audit "$ledger" || continue
	expect_in "$OUT" "failed 0, pending 0" &&
		cmp -s "$st" "$TMP/want.json" || { fail "the state differs from the uninterrupted apply's"; continue; }
	expect_eq "$(check unique "$st" "$ledger")" "$ISSUES" &&
		run 0 "$PMBOT" plan --repo "$R" --state "$st" --detailed-exitcode &&
		expect_in "$OUT" "No changes." &&
		run 0 "$PMBOT" audit verify "$ledger" &&
		expect_in "$OUT" "chain intact" &&
		ok
done

finish
