#!/usr/bin/env bash
# End to end: a new user's first hour, by the docs alone. The commands are
# not copied here: they are read from README.md and docs/rehearse.md (the
# blocks marked `<!-- first-hour: NAME -->`) and run as written, so a doc
# change that breaks them fails this test.
#
# - README.md: the local loop on `make demo`'s repository (validate, config,
#   render, plan --out, apply --plan --approve, plan --detailed-exitcode),
#   each line of the README's shown output (up to its `…` elisions) must be
#   in the real output: the README's figures and hashes are the real ones;
# - docs/rehearse.md: the Action against the emulator, event by event: a pull
#   request's plan comment, `/pm-bot plan`, a maintainer's `/pm-bot apply`,
#   a push, the first scheduled field sync on a new board with
#   `auto_approve: [set_project_field]` (planned, exit 0, never failed), its
#   approval on the tracking issue (the board then holds every item with its
#   fields), and a second sync with nothing to do. Every `result=` and
#   `changes=` the page claims after a step is what the step printed.
# The elapsed seconds are printed, never asserted.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
ROOT=$PWD
CASE=setup
need_node
STARTED=$(date +%s)
PMBOT_ABS=$(cd "$(dirname "$PMBOT")" && pwd)/$(basename "$PMBOT")
T= HASH1=
trap '[ -n "$T" ] && scripts/emu.sh stop "$T/emu" >/dev/null 2>&1; rm -rf "$TMP"' EXIT

# A user's shell: `pm-bot` on PATH, a git identity, none of the host's
# GitHub or pm-bot settings; the docs' mktemp directories land in $TMP.
mkdir "$TMP/bin"
ln -s "$PMBOT_ABS" "$TMP/bin/pm-bot"
export PATH="$TMP/bin:$PATH" TMPDIR="$TMP"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=New GIT_AUTHOR_EMAIL=new@example.com GIT_COMMITTER_NAME=New GIT_COMMITTER_EMAIL=new@example.com
unset GH_TOKEN GITHUB_TOKEN GITHUB_API_URL GITHUB_GRAPHQL_URL GITHUB_REPOSITORY GITHUB_WORKSPACE \
	GITHUB_EVENT_NAME GITHUB_EVENT_PATH GITHUB_OUTPUT GITHUB_STEP_SUMMARY GITHUB_SHA GITHUB_REF \
	GITHUB_RUN_ID RUNNER_TEMP PMBOT_GITHUB_CACHE_DIR PMBOT_GITHUB_PACE_MS PMBOT_GITHUB_STATS \
	PMBOT_VERBOSE PMBOT_TEST_KILL_AFTER PMBOT_GITHUB_WRITE_BUDGET NO_COLOR

# doc FILE NAME [claims]: the body of the fenced block after the marker
# `<!-- first-hour: NAME -->` (exactly one); with `claims`, the `result=X`
# and `changes=N` the first paragraph after that block states, one per line.
doc() {
	python3 - "$ROOT/$1" "$2" "${3:-}" <<'PY'
import re, sys
path, name, claims = sys.argv[1:]
lines = open(path).read().split("\n")
marks = [i for i, l in enumerate(lines) if l.strip() == "<!-- first-hour: %s -->" % name]
if len(marks) != 1 or not lines[marks[0] + 1].startswith("```"):
    sys.exit("%s: %d blocks marked first-hour: %s" % (path, len(marks), name))
i = marks[0] + 2
body = []
while not lines[i].startswith("```"):
    body.append(lines[i])
    i += 1
if not claims:
    print("\n".join(body))
    sys.exit(0)
# The first paragraph after the block states what the step gives.
prose, rest = [], lines[i + 1:]
while rest and not rest[0].strip():
    rest = rest[1:]
for l in rest:
    if not l.strip():
        break
    prose.append(l)
for m in re.findall(r"`((?:result|changes)=\w+)`", "\n".join(prose)):
    print(m)
PY
}

# console FILE NAME DIR: run each `$ pm-bot …` line of the marked console
# block in DIR (trailing `# comment` dropped; an elided hash `abcd1234…` is
# the last plan hash printed); it must exit 0 and print every segment
# between the `…` of each output line the block shows under it.
console() {
	local n=0 count cmd seg hash= all
	doc "$1" "$2" | python3 -c '
import json, sys
steps = []
for l in sys.stdin.read().split("\n"):
    if l.startswith("$ "):
        steps.append([l[2:], []])
    elif steps:
        steps[-1][1] += [s.strip() for s in l.split("\u2026") if s.strip()]
json.dump(steps, open(sys.argv[1], "w"))' "$TMP/console" || { fail "$1: cannot read block $2"; return 1; }
	count=$(py "$TMP/console" 'str(len(d))')
	[ "$count" -gt 0 ] || { fail "$1: block $2 has no commands"; return 1; }
	while [ "$n" -lt "$count" ]; do
		cmd=$(py "$TMP/console" "d[$n][0]" | sed -E 's/[[:space:]]+#[[:space:]].*$//')
		[ -z "$hash" ] || cmd=$(printf '%s' "$cmd" | sed -E "s/[0-9a-f]{8}\xe2\x80\xa6/$hash/g")
		case "$cmd" in
		pm-bot\ *) ;;
		*) fail "$1 ($2): not a pm-bot command: $cmd"; return 1 ;;
		esac
		case "$cmd" in *…*) fail "$1 ($2): an elision in a command with no hash to fill: $cmd"; return 1 ;; esac
		pushd "$3" >/dev/null || return 1
		run 0 eval "$cmd"
		STATUS=$?
		popd >/dev/null || return 1
		[ "$STATUS" -eq 0 ] || { echo "  from $1 ($2): $cmd" >&2; return 1; }
		all="$OUT
$ERR"
		hash=$(printf '%s\n' "$all" | sed -n 's/^Plan hash: \([0-9a-f]\{64\}\)$/\1/p' | tail -1)
		while IFS= read -r seg; do
			[ -n "$seg" ] || continue
			expect_in "$all" "$seg" || { echo "  in the output of: $cmd (from $1, $2)" >&2; return 1; }
		done < <(py "$TMP/console" "'\\n'.join(d[$n][1])" 2>/dev/null)
		n=$((n + 1))
	done
	return 0
}

# ---- README.md: the local loop, on `make demo`'s repository.
D=$TMP/demo
mkdir -p "$D/.pm-bot"
cp -R examples/plans examples/.github "$D/"
cp examples/state.json "$D/.pm-bot/state.json"
git init -q -b main "$D" && git -C "$D" add plans .github && git -C "$D" commit -qm "Q4 checkout plan"
export PMBOT_NOW=2026-11-22T12:00:00Z

CASE="README: validate, config and render read git objects as the README shows"
console README.md readme-git "$D" && ok

CASE="README: plan --out, apply --plan --approve, plan --detailed-exitcode exits 0, with the README's figures"
console README.md readme-local "$D" &&
	expect_eq "$(py "$D/.pm-bot/state.json" 'str(sum(len(r["issues"]) for r in d["repositories"]))')" 7 && ok
unset PMBOT_NOW

# ---- docs/rehearse.md: the Action against the emulator, step by step.
# step NAME: run the page's block NAME in this shell (its variables and
# functions stay, as in the reader's shell); $STEP_STATUS is its status.
step() {
	local code
	code=$(doc docs/rehearse.md "$1") || { fail "docs/rehearse.md has no block $1"; return 1; }
	eval "$code" >"$TMP/step.out" 2>"$TMP/step.err"
	STEP_STATUS=$?
	OUT=$(cat "$TMP/step.out")
	ERR=$(cat "$TMP/step.err")
	if [ "$STEP_STATUS" -ne 0 ]; then
		fail "docs/rehearse.md step $1 exited $STEP_STATUS"
		printf '  stdout: %s\n  stderr: %s\n' "$OUT" "$ERR" >&2
		return 1
	fi
	return 0
}
output() { sed -n "s/^$1=//p" "$GITHUB_OUTPUT"; }
# claimed NAME: the step's outputs are the ones the page states after it.
claimed() {
	local c k v
	for c in $(doc docs/rehearse.md "$1" claims); do
		k=${c%%=*} v=${c#*=}
		expect_eq "$(output "$k")" "$v" || { echo "  docs/rehearse.md after step $1 says $c" >&2; return 1; }
	done
	return 0
}
state() { ctl GET /_emu/state; }
n_issues() { state | py - 'str(sum(len(r["issues"]) for r in d["state"]["repositories"]))'; }
n_comments() { state | py - 'str(len(d.get("comments", [])))'; }
board() { state | py - 'sorted([it["issue"], sorted(it["values"].items())] for it in d["state"]["project"]["items"])'; }

CASE="rehearse: a repository, the emulator and a workflow run's environment"
step repo && step emulator && step env && expect_eq "$URL" "$(cat "$T/emu/port" | sed 's|^|http://127.0.0.1:|')" && ok

CASE="rehearse: every event the example workflow and action.md handle has a step"
EVENTS=$(awk '/^\| event \| what pm-bot does \|/ { t = 1; next } t && !/^\|/ { exit } t' docs/action.md |
	cut -d'|' -f2 | grep -o '`[a-z_]*`' | tr -d '`' | sort -u)
[ -n "$EVENTS" ] || fail "docs/action.md has no event table"
for ev in $EVENTS; do
	grep -q "run_event $ev " docs/rehearse.md || fail "docs/action.md's event $ev is not rehearsed in docs/rehearse.md"
done
for ev in pull_request issue_comment push schedule workflow_dispatch; do
	grep -q "^  $ev:" examples/workflows/pm-bot.yml || fail "examples/workflows/pm-bot.yml has no $ev trigger"
done
[ "$FAIL" -eq 0 ] && ok

CASE="rehearse: a pull request gets one plan comment that ends with the approve command"
step pull_request && expect_eq "$(output result)" planned && claimed pull_request &&
	HASH1=$(output plan_hash) && expect_eq "${#HASH1}" 64 &&
	expect_eq "$(n_comments)" 1 &&
	expect_in "$(state | py - 'd["comments"][0]["body"]')" "/pm-bot apply $HASH1" &&
	expect_eq "$(n_issues)" 0 && ok

CASE="rehearse: /pm-bot plan plans again with the same hash"
step comment-plan && expect_eq "$(output result)" planned && expect_eq "$(output plan_hash)" "$HASH1" && ok

CASE="rehearse: a maintainer's /pm-bot apply <hash> applies the plan"
step comment-apply && expect_eq "$(output result)" applied && claimed comment-apply &&
	expect_eq "$(n_issues)" 7 &&
	expect_in "$(state | py - '[c["body"] for c in d["comments"] if c["issue"] == "acme/widgets#1" and "pm-bot:plan" in c["body"]][0]')" "Applied" &&
	pm-bot audit verify "$W/.pm-bot/audit.jsonl" >/dev/null && ok

CASE="rehearse: a push to the default branch writes nothing to GitHub"
BEFORE=$(n_comments)
step push && claimed push && expect_eq "$(output changes)" 0 && expect_eq "$(n_comments)" "$BEFORE" &&
	expect_eq "$(n_issues)" 7 && ok

CASE="rehearse: the first field sync on a new board with auto_approve plans, exit 0, and never fails"
expect_eq "$(board)" "[]" &&
	grep -q '^  - set_project_field$' "$W/.github/pm-bot.yml" &&
	step schedule && expect_eq "$STEP_STATUS" 0 && claimed schedule &&
	case "$(output result)" in planned | applied) true ;; *) fail "first sync: result=$(output result)"; false ;; esac &&
	expect_eq "$(state | py - 'str(sum(1 for r in d["state"]["repositories"] for i in r["issues"] if i["title"] == "pm-bot: Projects field sync"))')" 1 && ok

CASE="rehearse: approving the tracking issue's plan puts every item on the board with its fields"
step sync-apply && expect_eq "$(output result)" applied && claimed sync-apply &&
	expect_eq "$(state | py - 'str(len(d["state"]["project"]["items"]))')" 7 &&
	expect_eq "$(state | py - 'str(sum(len(it["values"]) for it in d["state"]["project"]["items"]))')" 27 &&
	expect_eq "$(state | py - 'str(sorted(set(it["issue"] for it in d["state"]["project"]["items"])) == sorted("acme/widgets#%d" % n for n in range(2, 9)))')" True &&
	expect_eq "$(state | py - '[it["values"] for it in d["state"]["project"]["items"] for r in d["state"]["repositories"] for i in r["issues"] if "acme/widgets#%d" % i["number"] == it["issue"] and i["title"].startswith("[feat] Drain")][0]')" \
		'{"Area": "checkout", "Estimate (hrs)": 16, "Priority": "P1", "Risk": "The payment provider'"'"'s callbacks can arrive after the drain window.", "Size": "M"}' && ok

CASE="rehearse: a manual run and the next scheduled sync have nothing to do"
BOARD=$(board)
step dispatch && expect_eq "$(output result)" no_changes && claimed dispatch &&
	run_event schedule "$T/schedule.json" >/dev/null 2>&1 && expect_eq "$(output result)" no_changes &&
	expect_eq "$(output changes)" 0 && expect_eq "$(board)" "$BOARD" && ok

CASE="rehearse: the emulator stops"
EMU_PID=$(cat "$T/emu/pid")
step stop && { ! kill -0 "$EMU_PID" 2>/dev/null || fail "the emulator still runs"; } && ok
T=

echo "test_first_hour.sh: the README's local loop and the rehearsed Action took $(($(date +%s) - STARTED)) s"
finish
