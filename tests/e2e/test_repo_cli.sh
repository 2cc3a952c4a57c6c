#!/usr/bin/env bash
# End to end: validate/config/render reading reports, config and forms from
# git objects of a real repository made here with the git CLI.
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
ROOT=$PWD
R=$TMP/repo
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
g() { git -C "$R" -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false "$@"; }
unset GITHUB_REPOSITORY

git init -q -b main "$R"
mkdir -p "$R/plans" "$R/.github/ISSUE_TEMPLATE" "$R/docs"
cp "$ROOT/examples/plans/2026-q4-checkout.md" "$R/plans/q4.md"
printf 'reports: ["plans/**/*.md"]\n' > "$R/.github/pm-bot.yml"
cp "$ROOT/tests/fixtures/cli/invalid.md" "$R/docs/not-a-plan.md"
g add -A && g commit -qm one
g remote add origin https://github.com/acme/widgets.git

CASE="validate --repo reads the configured globs at HEAD"
run 0 "$PMBOT" validate --repo "$R" && expect_in "$OUT" "plans/q4.md (blob " && expect_in "$OUT" "): valid (0 errors, 0 warnings)" && ok

CASE="an uncommitted edit is invisible"
printf 'garbage\n' > "$R/plans/q4.md"
run 0 "$PMBOT" validate --repo "$R" && ok
g checkout -q -- plans/q4.md

CASE="a second commit breaks a report; the old revision stays valid"
cp "$ROOT/tests/fixtures/cli/invalid.md" "$R/plans/broken.md"
g add -A && g commit -qm two
run 2 "$PMBOT" validate --repo "$R" && expect_in "$ERR" "plans/broken.md:9:5: error UNKNOWN_EPIC" && expect_in "$OUT" "plans/broken.md (blob " && ok
run 0 "$PMBOT" validate --repo "$R" --rev HEAD~1 && ok
run 0 "$PMBOT" validate --repo "$R" --rev main~1 plans/q4.md && ok

CASE="--base selects only the changed reports"
run 2 "$PMBOT" validate --json --repo "$R" --base HEAD~1 && {
	expect_in "$OUT" '"file":"plans/broken.md"' &&
	case "$OUT" in *q4.md*) fail "unchanged report listed"; false ;; *) true ;; esac
} && ok

CASE="--json names the blob id"
blob=$(g rev-parse HEAD:plans/q4.md)
run 0 "$PMBOT" validate --json --repo "$R" plans/q4.md && expect_in "$OUT" "\"blob\":\"$blob\"" && ok

CASE="renames are followed by --base"
mkdir -p "$R/plans/2026" && g mv plans/q4.md plans/2026/q4.md && g commit -qm rename
run 0 "$PMBOT" validate --repo "$R" --base HEAD~1 && expect_in "$OUT" "plans/2026/q4.md (blob" && ok

CASE="unknown revision is invalid input"
run 2 "$PMBOT" validate --repo "$R" --rev nope && ok
run 1 "$PMBOT" validate --repo "$TMP/not-a-repo" && ok

CASE="config prints the effective configuration; current repo from origin"
run 0 "$PMBOT" config --repo "$R" && {
	expect_in "$OUT" '"repos":["acme/widgets"]' &&
	expect_in "$OUT" '"reports":["plans/**/*.md"]' &&
	expect_in "$OUT" '"trusted_authors":["github-actions[bot]"]'
} && ok
GITHUB_REPOSITORY=octo/repo run 0 "$PMBOT" config --repo "$R" && expect_in "$OUT" '"repos":["octo/repo"]' && ok

CASE="config errors carry file and line; the trusted revision decides"
printf 'reports: ["plans/**/*.md"]\nrepos: [acme/widgets, acme/other]\nreprots: []\n' > "$R/.github/pm-bot.yml"
g commit -qam "widen config"
run 2 "$PMBOT" config --repo "$R" && expect_in "$ERR" ".github/pm-bot.yml:3:1: error CONFIG_UNKNOWN_KEY /reprots:" && expect_in "$ERR" "did you mean" && ok
run 0 "$PMBOT" validate --repo "$R" --config-rev HEAD~1 plans/2026/q4.md && ok

CASE="render follows the repository's issue forms"
cat > "$R/.github/ISSUE_TEMPLATE/feature.yml" <<'YML'
name: Feature request
title: "[FEATURE] "
labels: ["type:feature", "needs-triage"]
body:
  - type: markdown
    attributes: {value: "Thanks!"}
  - type: textarea
    id: goal
    attributes: {label: Goal}
  - type: input
    id: area
    attributes: {label: Area}
  - type: dropdown
    id: prio
    attributes: {label: Priority, options: [P1, P2]}
YML
printf 'reports: ["plans/**/*.md"]\n' > "$R/.github/pm-bot.yml"
g add -A && g commit -qm forms
run 0 "$PMBOT" render --repo "$R" --id feat:graceful-drain plans/2026/q4.md && {
	expect_in "$OUT" "title: [FEATURE] Drain in-flight payments before a pod stops" &&
	expect_in "$OUT" "labels: area:checkout, needs-triage, prio:P1, size:M, type:feature" &&
	expect_in "$OUT" "$(printf '### Goal\nA rolling deploy finishes every payment that started on the old pod.\n\n### Area\ncheckout\n\n### Priority\nP1')" &&
	expect_eq "$(printf '%s\n' "$OUT" | grep -A2 '^labels: ' | sed 1d | sed 's/rev=[0-9a-f]*/rev=R/')" "$(printf '\n<!-- pm-bot:id=feat:graceful-drain rev=R -->')"
} && ok
run 0 "$PMBOT" render --json --repo "$R" plans/2026/q4.md && {
	expect_in "$OUT" '"stable_id":"task:drain-hook","title":"[task] Add a preStop hook that waits for in-flight payments"' &&
	expect_in "$OUT" '### Blocked by\ntask:drain-hook'
} && ok
run 2 "$PMBOT" render --repo "$R" --id feat:nope plans/2026/q4.md && expect_in "$ERR" "no work item 'feat:nope'" && ok
run 2 "$PMBOT" render --repo "$R" plans/missing.md && ok

CASE="an open task type renders with the task built-in and a warning, then with its own form"
cat > "$R/plans/ops.md" <<'MD'
```pm-bot:report-ir/v1
schema_version: report_ir/v1
report: {title: Ops, generated_at: 2026-02-22, scope: {org: acme}}
tasks:
  - {stable_id: 'ops:rotate', title: Rotate keys, area: infra, priority: P2, type: ops}
  - {stable_id: 'bench:p99', title: Measure p99, area: infra, priority: P2, type: benchmark}
```
MD
g add -A && g commit -qm ops
run 0 "$PMBOT" validate --repo "$R" plans/ops.md && ok
run 0 "$PMBOT" render --repo "$R" --id ops:rotate plans/ops.md && {
	expect_in "$OUT" "title: [ops] Rotate keys" &&
	expect_in "$OUT" "labels: area:infra, prio:P2, type:ops" &&
	expect_in "$OUT" "### Goal" &&
	expect_in "$ERR" "plans/ops.md:5: warning RENDER_NO_FORM /tasks/0/type:"
} && ok
run 0 "$PMBOT" render --repo "$R" --id bench:p99 plans/ops.md && {
	expect_in "$OUT" "labels: area:infra, prio:P2, type:benchmark" &&
	case "$ERR" in *RENDER_NO_FORM*) fail "warning for a built-in type"; false ;; *) true ;; esac
} && ok
cat > "$R/.github/ISSUE_TEMPLATE/ops.yml" <<'YML'
name: Operations
title: "[OPS] "
labels: ["type:ops"]
body:
  - type: textarea
    attributes: {label: Goal}
YML
cat > "$R/.github/ISSUE_TEMPLATE/perf.yml" <<'YML'
name: Performance run
labels: ["type:bench"]
body:
  - type: textarea
    attributes: {label: Goal}
YML
g add -A && g commit -qm "ops and bench forms"
run 0 "$PMBOT" render --repo "$R" --id ops:rotate plans/ops.md && {
	expect_in "$OUT" "title: [OPS] Rotate keys" &&
	expect_in "$OUT" "labels: area:infra, prio:P2, type:ops" &&
	case "$ERR" in *RENDER_NO_FORM*) fail "warning despite a form"; false ;; *) true ;; esac
} && ok
run 0 "$PMBOT" render --repo "$R" --id bench:p99 plans/ops.md && expect_in "$OUT" "labels: area:infra, prio:P2, type:bench" && ok

finish
