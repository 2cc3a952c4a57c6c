#!/usr/bin/env bash
# End to end: the audit ledger's head. `pm-bot audit verify` prints the head
# (the SHA-256 of the last line) and, given a head published earlier with
# --head, proves the ledger only grew since; a ledger rewritten in the middle
# and re-chained passes the chain check alone but fails against the head.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
ROOT=$PWD
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 PMBOT_NOW=2026-11-22T12:00:00Z
unset GITHUB_REPOSITORY PMBOT_TEST_KILL_AFTER

R=$TMP/repo
L=$R/.pm-bot/audit.jsonl
git init -q -b main "$R"
mkdir -p "$R/plans" "$R/.github" "$R/.pm-bot"
cp "$ROOT/examples/plans/2026-q4-checkout.md" "$R/plans/q4.md"
cp "$ROOT/examples/.github/pm-bot.yml" "$R/.github/pm-bot.yml"
cat >"$R/.pm-bot/state.json" <<'JSON'
{"schema_version": "state/v1",
 "repositories": [{"repo": "acme/widgets", "issues": []}],
 "project": {"owner": "acme", "number": 1, "node_id": "PVT_e2e",
  "fields": [
   {"id": "F_area", "name": "Area", "type": "single_select",
    "options": [{"id": "a1", "name": "checkout"}, {"id": "a2", "name": "observability"},
                {"id": "a3", "name": "triage"}]},
   {"id": "F_prio", "name": "Priority", "type": "single_select",
    "options": [{"id": "p0", "name": "P0"}, {"id": "p1", "name": "P1"},
                {"id": "p2", "name": "P2"}, {"id": "p3", "name": "P3"}]},
   {"id": "F_size", "name": "Size", "type": "single_select",
    "options": [{"id": "s1", "name": "XS"}, {"id": "s2", "name": "S"}, {"id": "s3", "name": "M"},
                {"id": "s4", "name": "L"}, {"id": "s5", "name": "XL"}]},
   {"id": "F_est", "name": "Estimate (hrs)", "type": "number"},
   {"id": "F_risk", "name": "Risk", "type": "text"}],
  "items": []}}
JSON
git -C "$R" -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false add plans .github &&
	git -C "$R" -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false commit -qm example

# head_of FILE: the SHA-256 of the ledger's last line, without its newline.
head_of() { tail -n 1 "$1" | tr -d '\n' | sha256sum | cut -d' ' -f1; }

CASE="a real ledger: plan and apply write it, verify prints its head and line count"
run 0 "$PMBOT" plan --repo "$R" --out "$TMP/p.json" --audit "$L" &&
	HASH=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["plan_hash"])' "$TMP/p.json") &&
	run 0 "$PMBOT" apply --repo "$R" --plan "$TMP/p.json" --approve "$HASH" --actor alice &&
	N=$(wc -l <"$L") && [ "$N" -gt 5 ] &&
	run 0 "$PMBOT" audit verify "$L" &&
	expect_in "$OUT" "$N events, chain intact" &&
	expect_in "$OUT" "head $(head_of "$L") (line $N)" &&
	expect_in "$OUT" "only consistent" && ok
PUBLISHED=$(head_of "$L")
cp "$L" "$TMP/at-publish.jsonl"

CASE="appends after the head was published keep it: verify --head says how many"
run 0 "$PMBOT" plan --repo "$R" --out "$TMP/p2.json" --audit "$L" &&
	run 0 "$PMBOT" audit verify --head "$PUBLISHED" "$L" &&
	expect_in "$OUT" "$((N + 1)) events, chain intact" &&
	expect_in "$OUT" "the expected head is line $N: lines 1-$N are as when it was published, 1 appended since" &&
	run 0 "$PMBOT" audit verify --expect-head="$(echo "$PUBLISHED" | tr a-f A-F)" "$L" && ok

CASE="a middle line rewritten and the chain recomputed: intact alone, refused against the head"
python3 - "$L" "$TMP/rewritten.jsonl" <<'PY'
import hashlib, json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")[:-1]
out = []
for i, line in enumerate(lines):
    o = json.loads(line)
    if i == 2:
        o["actor"] = "mallory"
    if i >= 2:
        o["prev"] = hashlib.sha256(out[i - 1].encode()).hexdigest()
    out.append(json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
assert out != lines
open(sys.argv[2], "w", encoding="utf-8").write("".join(l + "\n" for l in out))
PY
run 0 "$PMBOT" audit verify "$TMP/rewritten.jsonl" && expect_in "$OUT" "chain intact" &&
	run 2 "$PMBOT" audit verify --head "$PUBLISHED" "$TMP/rewritten.jsonl" &&
	expect_in "$ERR" "rewritten.jsonl: error AUDIT_HEAD" &&
	expect_in "$ERR" "no line of the ledger has the expected head $PUBLISHED" &&
	expect_eq "$OUT" "" && ok

CASE="a ledger cut back before the published head is refused against it"
head -n 3 "$TMP/at-publish.jsonl" >"$TMP/cut.jsonl"
run 0 "$PMBOT" audit verify "$TMP/cut.jsonl" &&
	run 2 "$PMBOT" audit verify --head "$PUBLISHED" "$TMP/cut.jsonl" &&
	expect_in "$ERR" "AUDIT_HEAD" && ok

CASE="a head that is not a SHA-256, a missing value or an unknown option is a usage error"
run 2 "$PMBOT" audit verify --head "not-a-hash" "$L" && expect_in "$ERR" "AUDIT_HEAD" &&
	run 2 "$PMBOT" audit verify "$L" --head && expect_in "$ERR" "--head needs" &&
	run 2 "$PMBOT" audit verify --tail "$L" && expect_in "$ERR" "unknown option" &&
	run 2 "$PMBOT" audit verify "$L" "$L" &&
	run 1 "$PMBOT" audit verify --head "$PUBLISHED" "$TMP/missing.jsonl" && ok

finish
