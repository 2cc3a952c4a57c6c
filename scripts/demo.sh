#!/usr/bin/env bash
# `make demo`: the main job on the bundled example, no network needed.
# A scratch git repository holds examples/ (reports and config); the file
# backend's state starts from examples/state.json (an empty repository and a
# Projects board). Plan, apply with the plan's hash, plan again (no change),
# then edit the report in a new commit and plan again (only that change).
set -euo pipefail
BIN=$(cd "$(dirname "${1:-build/pm-bot}")" && pwd)/$(basename "${1:-build/pm-bot}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export PMBOT_NOW=${PMBOT_NOW:-2026-11-22T12:00:00Z} GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
git_() { git -C "$W" -c user.name="Demo" -c user.email=demo@example.com -c commit.gpgsign=false "$@"; }

# Bold headings on a terminal only, and never with NO_COLOR (no-color.org).
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ] && [ "${TERM:-}" != dumb ]; then B=$(printf '\033[1m') N=$(printf '\033[0m'); else B= N=; fi
step() { printf '\n%s== %s%s\n$ %s\n' "$B" "$1" "$N" "$2"; }

cp -R "$ROOT/examples/plans" "$ROOT/examples/.github" "$W/"
mkdir -p "$W/.pm-bot"
cp "$ROOT/examples/state.json" "$W/.pm-bot/state.json"
git_ init -q -b main
git_ add plans .github
git_ commit -q -m "Q4 checkout plan"
cd "$W"

step "Validate the example report (read from git at HEAD)" "pm-bot validate --repo ."
"$BIN" validate --repo .

step "Its WorkGraph" "pm-bot graph --format tree plans/2026-q4-checkout.md"
"$BIN" graph --format tree plans/2026-q4-checkout.md

step "Plan against the local state file (.pm-bot/state.json)" "pm-bot plan --out plan.json"
"$BIN" plan --out .pm-bot/plan.json
HASH=$(sed -n 's/.*"plan_hash":"\([0-9a-f]\{64\}\)".*/\1/p' .pm-bot/plan.json)

step "Apply it, approving the plan's hash" "pm-bot apply --plan plan.json --approve $HASH"
"$BIN" apply --plan .pm-bot/plan.json --approve "$HASH" --actor demo

step "Plan again: nothing left to do" "pm-bot plan --detailed-exitcode"
set +e
"$BIN" plan --detailed-exitcode
status=$?
set -e
echo "(exit status $status: 0 means no changes)"
[ "$status" -eq 0 ]

step "Edit the report in a new commit: a higher priority and a renamed task" \
	"sed -i … plans/2026-q4-checkout.md && git commit -am 'Raise sampling priority'"
sed -i 's/    priority: P3/    priority: P2/; s/title: Choose a sampling rule that keeps every slow checkout/title: Pick a sampling rule that keeps every slow checkout/' plans/2026-q4-checkout.md
git_ commit -q -am "Raise sampling priority"
git_ log --oneline | head -2

step "Plan again: only that change" "pm-bot plan"
"$BIN" plan

step "The audit ledger's hash chain" "pm-bot audit verify .pm-bot/audit.jsonl"
"$BIN" audit verify .pm-bot/audit.jsonl
