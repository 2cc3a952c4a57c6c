#!/usr/bin/env bash
# End to end: a report that validates also plans. Every refusal the renderer
# can make (blank title, unsafe stable id, long title or label) is already a
# `validate` error with the renderer's code, and `plan` gives the same code;
# blank area and priority are triaged by both alike.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 PMBOT_NOW=2026-11-22T12:00:00Z
unset GITHUB_REPOSITORY

R=$TMP/repo
config_repo "$R"
N=0

# report TASK-YAML: plans/q.md holding one task, committed.
report() {
	N=$((N + 1))
	{
		printf '# Plan\n\n```pm-bot:report-ir/v1\nschema_version: report_ir/v1\n'
		printf 'report: {title: T, generated_at: 2026-02-22, scope: {org: acme, repos: [acme/widgets]}}\n'
		printf 'tasks:\n  - %s\n```\n' "$1"
	} >"$R/plans/q.md"
	gitc "$R" add plans && gitc "$R" commit -qm "report $N"
}

# refused CODE POINTER TASK-YAML: validate exits 2 with CODE at POINTER, and
# plan exits 2 with the same CODE.
refused() {
	report "$3" &&
		run 2 "$PMBOT" validate "$R/plans/q.md" &&
		expect_in "$ERR" "error $1 $2" &&
		run 2 "$PMBOT" plan --repo "$R" --out "$TMP/plan.json" &&
		expect_in "$ERR" "$1"
}

L60=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
T300=$L60$L60$L60$L60$L60

CASE="a whitespace-only title"
refused RENDER_TITLE_EMPTY /tasks/0/title "{stable_id: 'task:a', title: '   ', area: x, priority: P1}" && ok
CASE="a stable_id with a space"
refused RENDER_UNSAFE_ID /tasks/0/stable_id "{stable_id: 'task:a b', title: A, area: x, priority: P1}" && ok
CASE="a whitespace-only stable_id"
refused RENDER_UNSAFE_ID /tasks/0/stable_id "{stable_id: '  ', title: A, area: x, priority: P1}" && ok
CASE="a stable_id with a no-break space"
refused RENDER_UNSAFE_ID /tasks/0/stable_id "{stable_id: \"task:\\u00a0a\", title: A, area: x, priority: P1}" && ok
CASE="a stable_id with a comment end"
refused RENDER_UNSAFE_ID /tasks/0/stable_id "{stable_id: 'task:a-->', title: A, area: x, priority: P1}" && ok
CASE="a title over 256 characters"
refused RENDER_TITLE_TOO_LONG /tasks/0/title "{stable_id: 'task:a', title: $T300, area: x, priority: P1}" && ok
CASE="a label over 50 characters"
refused RENDER_LABEL_TOO_LONG /tasks/0/area "{stable_id: 'task:a', title: A, area: $L60, priority: P1}" && ok

CASE="blank area and priority: a warning each, then triage labels in the plan"
report "{stable_id: 'task:a', title: A, area: \"\\u00a0\", priority: '_No response_'}" &&
	run 0 "$PMBOT" validate "$R/plans/q.md" &&
	expect_in "$ERR" "warning MISSING_AREA /tasks/0" &&
	expect_in "$ERR" "warning MISSING_PRIORITY /tasks/0" &&
	run 0 "$PMBOT" plan --repo "$R" --out "$TMP/plan.json" --format json &&
	expect_in "$(cat "$TMP/plan.json")" '"area:triage"' &&
	expect_in "$(cat "$TMP/plan.json")" '"needs-human"' &&
	expect_in "$(cat "$TMP/plan.json")" '"prio:Triage"' && ok

finish
