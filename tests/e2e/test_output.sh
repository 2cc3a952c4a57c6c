#!/usr/bin/env bash
# End to end: output hygiene. Report values, report file names and ids are
# outside text: whatever they hold, no line pm-bot prints begins with `::`
# (a GitHub Actions workflow command), control characters are shown as
# escapes and long values are cut with a count.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
ROOT=$PWD
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 PMBOT_NOW=2026-11-22T12:00:00Z
unset GITHUB_REPOSITORY

gitc() {
	local d=$1
	shift
	git -C "$d" -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false "$@"
}

# no_command_lines FILE...: no line of the files begins with "::".
no_command_lines() {
	local f
	for f in "$@"; do
		if grep -q '^::' "$f"; then
			fail "$f has a line beginning with '::': $(grep -m1 '^::' "$f" | cut -c1-200)"
			return 1
		fi
	done
}

# smaller_than FILE BYTES
smaller_than() {
	local n
	n=$(wc -c <"$1")
	[ "$n" -lt "$2" ] || { fail "$1 has $n bytes, expected fewer than $2"; return 1; }
}

# A report whose values forge workflow commands and whose one stable id is 20 MB.
hostile_report() {
	python3 - "$1" <<'PY'
import json, sys
inj = "x\n::error title=approved::forged\n::add-mask::acme\r::warning::\x1b[2Jcleared"
big = "task:" + "A" * (20 << 20)
doc = {
  "schema_version": "report_ir/v1",
  "report": {"title": inj, "generated_at": "2026-11-01",
             "scope": {"org": "acme", "repos": ["widgets"]}},
  "epics": [{"stable_id": "epic:gauges", "title": inj, "area": "ui", "priority": "P1",
             "objective": inj}],
  "features": [{"stable_id": "feat:dial", "title": "Dial\n::warning::x", "epic_id": "epic:gauges",
                "area": "ui", "priority": "P1", "goal": "::notice::hi\n::error::x"}],
  "tasks": [
    {"stable_id": "task:wire", "title": inj, "feature_id": "feat:dial", "area": "ui",
     "priority": "P1", "blocked_by": [inj]},
    {"stable_id": big, "title": "Big", "feature_id": "feat:dial", "area": "ui", "priority": "P2"}]}
open(sys.argv[1], "w").write("# hostile\n\n```pm-bot:report-ir/v1\n" + json.dumps(doc) + "\n```\n")
PY
}

R=$TMP/repo
git init -q -b main "$R"
mkdir -p "$R/plans" "$R/.github" "$R/.pm-bot"
cp "$ROOT/examples/.github/pm-bot.yml" "$R/.github/pm-bot.yml"
hostile_report "$R/plans/hostile.md"
printf '{"schema_version": "state/v1", "repositories": [{"repo": "acme/widgets", "issues": []}]}\n' \
	>"$R/.pm-bot/state.json"
gitc "$R" add plans .github && gitc "$R" commit -qm "a hostile report"

CASE="validate of a file with forged workflow commands and a 20 MB id"
run 2 "$PMBOT" validate "$R/plans/hostile.md" && no_command_lines "$TMP/out" "$TMP/err" &&
	smaller_than "$TMP/err" 65536 &&
	expect_in "$ERR" "'x\\x0a::error title=approved::forged\\x0a::add-mask::acme\\x0d::warning::\\x1b[2Jcleared'" &&
	expect_in "$ERR" "more bytes]" && ok

CASE="validate from git of the same report"
run 2 "$PMBOT" validate --repo "$R" --rev main && no_command_lines "$TMP/out" "$TMP/err" &&
	smaller_than "$TMP/err" 65536 && smaller_than "$TMP/out" 65536 && ok

CASE="plan of the same report: stdout and stderr"
"$PMBOT" plan --repo "$R" --rev main >"$TMP/out" 2>"$TMP/err"
st=$?
if [ "$st" -eq 0 ] || [ "$st" -eq 2 ]; then
	no_command_lines "$TMP/out" "$TMP/err" && smaller_than "$TMP/err" 65536 && ok
else
	fail "plan exited $st: $(head -c 500 "$TMP/err")"
fi

CASE="plan --format json keeps the values, escaped as JSON"
"$PMBOT" plan --repo "$R" --rev main --format json >"$TMP/out" 2>"$TMP/err"
no_command_lines "$TMP/out" "$TMP/err" && smaller_than "$TMP/err" 65536 && ok

CASE="a report file name that forges workflow commands"
bad="$TMP/x
::add-mask::acme
::error title=approved::y.md"
cp "$ROOT/tests/fixtures/cli/invalid.md" "$bad"
run 2 "$PMBOT" validate "$bad" && no_command_lines "$TMP/out" "$TMP/err" &&
	expect_in "$ERR" "x\\x0a::add-mask::acme\\x0a::error title=approved::y.md:" && ok
run 1 "$PMBOT" validate "$bad.missing" && no_command_lines "$TMP/out" "$TMP/err" &&
	expect_in "$ERR" "cannot read $TMP/x\\x0a::add-mask" && ok
cp "$ROOT/examples/plans/2026-q4-checkout.md" "$TMP/::error::ok.md"
run 0 "$PMBOT" validate "$TMP/::error::ok.md" && no_command_lines "$TMP/out" "$TMP/err" && ok
(cd "$TMP" && "$PMBOT" validate "::error::ok.md" >"$TMP/out" 2>"$TMP/err")
no_command_lines "$TMP/out" "$TMP/err" && expect_in "$(cat "$TMP/out")" "\\x3a:error::ok.md: valid" && ok

CASE="a command-line word that forges workflow commands"
run 2 "$PMBOT" validate "--x
::error::y" && no_command_lines "$TMP/out" "$TMP/err" && expect_in "$ERR" "--x\\x0a::error::y" && ok

finish
