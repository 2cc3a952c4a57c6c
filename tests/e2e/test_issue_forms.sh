#!/usr/bin/env bash
# End to end: a report rendered with a third-party organisation's issue forms
# (the file backend, a real git repository), read back the way issue-form
# parsers read a body: a section is everything from one "### " heading to the
# next. The forms put "Blocked by" (tasks, bugs, spikes, tests, benchmarks)
# or "Links" (epics, features, chores) last, so a marker written after the
# last section would be read as that field's value. pm-bot writes it before
# the first heading; bodies with the marker last (earlier pm-bots) move there
# by an ordinary body update, not a conflict.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 PMBOT_NOW=2026-11-22T12:00:00Z
unset GITHUB_REPOSITORY PMBOT_TEST_KILL_AFTER

R=$TMP/org
S=$R/.pm-bot/state.json
git init -q -b main "$R"
mkdir -p "$R/plans" "$R/.github/ISSUE_TEMPLATE" "$R/.pm-bot"
# acme/other#9, an outside blocker, exists; acme/widgets starts empty.
cat >"$S" <<'JSON'
{"schema_version": "state/v1",
 "repositories": [
  {"repo": "acme/other", "issues": [{"number": 9, "database_id": 5009, "node_id": "I_other9",
    "title": "Provider webhook retries", "body": "", "labels": [], "state": "open",
    "author": "alice", "author_type": "User", "updated_at": "2026-11-01T00:00:00Z"}]},
  {"repo": "acme/widgets", "issues": []}]}
JSON

cat >"$R/.github/pm-bot.yml" <<'YAML'
reports:
  - "plans/**/*.md"
repos:
  - acme/widgets
trusted_authors:
  - github-actions[bot]
templates: .github/ISSUE_TEMPLATE
YAML

# The organisation's forms: help text in markdown blocks, ids, dropdowns,
# inputs and textareas, its own title prefixes and labels besides type:.
cat >"$R/.github/ISSUE_TEMPLATE/config.yml" <<'YAML'
blank_issues_enabled: false
contact_links:
  - name: Ask a question
    url: https://example.com/discussions
    about: Questions go to the discussion board.
YAML

cat >"$R/.github/ISSUE_TEMPLATE/01-epic.yml" <<'YAML'
name: Epic
description: A quarter-sized outcome, split into features.
title: "[Epic]: <outcome>"
labels: ["type:epic", "planning"]
body:
  - type: markdown
    attributes:
      value: |
        Epics are reviewed in the planning meeting. Keep the objective measurable.
  - type: textarea
    id: objective
    attributes:
      label: Objective (North Star)
      description: What is true when this epic is done?
    validations:
      required: true
  - type: textarea
    id: acceptance
    attributes:
      label: Epic acceptance
  - type: dropdown
    id: priority
    attributes:
      label: Priority
      options: [P0, P1, P2, P3]
  - type: input
    id: area
    attributes:
      label: Area
  - type: textarea
    id: milestones
    attributes:
      label: Milestones
  - type: textarea
    id: links
    attributes:
      label: Links
      description: Design docs, dashboards, prior art.
YAML

cat >"$R/.github/ISSUE_TEMPLATE/02-feature.yml" <<'YAML'
name: Feature request
description: A user-visible capability.
title: "[Feature]: "
labels: type:feature, roadmap
body:
  - type: markdown
    attributes:
      value: "Thanks for proposing a feature! Please search existing issues first."
  - type: textarea
    id: goal
    attributes:
      label: Goal
    validations:
      required: true
  - type: textarea
    id: acceptance
    attributes:
      label: Acceptance criteria
  - type: dropdown
    id: size
    attributes:
      label: Size
      options: [XS, S, M, L, XL]
  - type: input
    id: estimate
    attributes:
      label: Estimate (hrs)
  - type: dropdown
    id: priority
    attributes:
      label: Priority
      options: [P0, P1, P2, P3]
  - type: input
    id: area
    attributes:
      label: Area
  - type: textarea
    id: links
    attributes:
      label: Links
YAML

# blocked_form FILE NAME PREFIX LABELS EXTRA: a form whose last heading is
# "Blocked by", with EXTRA (YAML body entries) before the common fields.
blocked_form() {
	cat >"$1" <<YAML
name: $2
description: Work the team tracks on the board.
title: "$3"
labels: $4
body:
  - type: markdown
    attributes:
      value: |
        Link blocking issues under **Blocked by**, one per line or comma-separated.
$5
  - type: input
    id: area
    attributes:
      label: Area
  - type: dropdown
    id: priority
    attributes:
      label: Priority
      options: [P0, P1, P2, P3]
  - type: input
    id: estimate
    attributes:
      label: Estimate (hrs)
  - type: input
    id: actual
    attributes:
      label: Actual (hrs)
  - type: textarea
    id: blocked-by
    attributes:
      label: Blocked by
YAML
}

GOAL='  - type: textarea
    id: goal
    attributes:
      label: Goal
    validations:
      required: true'
blocked_form "$R/.github/ISSUE_TEMPLATE/03-task.yml" Task "[Task]: " '["type:task"]' "$GOAL
  - type: textarea
    id: dod
    attributes:
      label: Definition of done
  - type: dropdown
    id: size
    attributes:
      label: Size
      options: [XS, S, M, L, XL]"
blocked_form "$R/.github/ISSUE_TEMPLATE/04-bug.yml" "Bug report" "[Bug]: " '["type:bug", "triage"]' "  - type: textarea
    id: what-happened
    attributes:
      label: What happened?
      placeholder: Tell us what you saw.
$GOAL
  - type: textarea
    id: risk
    attributes:
      label: Risk
  - type: checkboxes
    id: terms
    attributes:
      label: Code of Conduct
      options:
        - label: I agree to follow this project's Code of Conduct"
blocked_form "$R/.github/ISSUE_TEMPLATE/05-spike.yml" Spike "[Spike]: " '["type:spike", "research"]' "$GOAL
  - type: textarea
    id: question
    attributes:
      label: Open questions"
blocked_form "$R/.github/ISSUE_TEMPLATE/06-test.yml" "Test plan" "[Test]: " '["type:test"]' "$GOAL
  - type: textarea
    id: dod
    attributes:
      label: Acceptance criteria"
blocked_form "$R/.github/ISSUE_TEMPLATE/07-benchmark.yml" Benchmark "[Bench]: " '["type:benchmark", "perf"]' "$GOAL
  - type: input
    id: baseline
    attributes:
      label: Baseline"

cat >"$R/.github/ISSUE_TEMPLATE/08-chore.yml" <<'YAML'
name: Chore
title: "[Chore]: "
labels: ["type:chore"]
body:
  - type: textarea
    id: goal
    attributes:
      label: Goal
  - type: input
    id: area
    attributes:
      label: Area
  - type: textarea
    id: links
    attributes:
      label: Links
YAML

cat >"$R/plans/q1.md" <<'MD'
# Q1 plan

```pm-bot:report-ir/v1
schema_version: report_ir/v1
report:
  title: Q1 with the organisation's forms
  generated_at: 2026-11-02
  scope:
    org: acme
    repos: [widgets]
  source:
    kind: human

epics:
  - stable_id: epic:pay
    title: Payments never drop
    objective: No payment lost to a deploy.
    area: checkout
    priority: P1
    links: [https://example.com/design/pay]
    milestones:
      - title: Zero-drop deploys
        target_date: 2026-12-20
  - stable_id: epic:quiet
    title: A quiet epic
    objective: Nothing links here.
    area: checkout
    priority: P3

features:
  - stable_id: feat:drain
    epic_id: epic:pay
    title: Drain before stop
    goal: A rolling deploy finishes every payment.
    area: checkout
    priority: P1
    size: M
    estimate_hrs: 16
    links: [https://example.com/runbooks/drain, https://github.com/acme/other/issues/7]
    acceptance_criteria:
      - Zero drops in the soak test
  - stable_id: feat:quiet
    epic_id: epic:quiet
    title: A quiet feature
    goal: No links at all.
    area: checkout
    priority: P2

tasks:
  - stable_id: task:hook
    feature_id: feat:drain
    title: Add a preStop hook
    area: checkout
    priority: P1
    size: S
    estimate_hrs: 6
    acceptance_criteria: [The hook waits]
  - stable_id: task:config
    feature_id: feat:drain
    title: Make the drain window a setting
    area: checkout
    priority: P2
    depends_on: [task:hook]
    blocked_by: [https://github.com/acme/other/issues/9]
  - stable_id: bug:late-callback
    feature_id: feat:drain
    type: bug
    title: A callback after the drain is lost
    area: checkout
    priority: P0
    risk: The provider retries only once.
    blocked_by: [task:hook, task:config]
  - stable_id: spike:sampling
    feature_id: feat:quiet
    type: spike
    title: Pick a sampling rule
    area: observability
    priority: P3
  - stable_id: test:soak
    feature_id: feat:drain
    type: test
    title: Soak a rolling deploy
    area: checkout
    priority: P1
    depends_on: [bug:late-callback]
  - stable_id: bench:drain-time
    feature_id: feat:drain
    type: benchmark
    title: Measure the drain time
    area: checkout
    priority: P2
    blocked_by: [spike:sampling]
  - stable_id: chore:deps
    feature_id: feat:quiet
    type: chore
    title: Bump the client library
    area: checkout
    priority: P3
    links: [https://example.com/changelog]
```
MD
gitc "$R" add plans .github && gitc "$R" commit -qm "forms and the Q1 plan"

# parse STATE OUT: every managed issue's body read by an independent
# whole-section parser (not pm-bot's reader); OUT gets, per stable id, the
# form's headings in order, each value, the preamble before the first heading
# and how many markers the body holds. A section is the lines from a "### "
# heading up to the next one, stripped, as GitHub's issue-form parsers take it.
parse() {
	python3 - "$1" "$2" <<'PY'
import json, re, sys
st = json.load(open(sys.argv[1], encoding="utf-8"))
out = {}
for r in st["repositories"]:
    for i in r["issues"]:
        if i["author"] != "github-actions[bot]":
            continue
        body = i["body"].replace("\r\n", "\n")
        m = re.search(r"<!-- pm-bot:id=(\S+) rev=[0-9a-f]{64} -->", body)
        assert m, "no marker in %s#%d" % (r["repo"], i["number"])
        parts = re.split(r"^### (.*)$", body, flags=re.M)
        sections = [[h.strip(), v.strip()] for h, v in zip(parts[1::2], parts[2::2])]
        out[m.group(1)] = {"ref": "%s#%d" % (r["repo"], i["number"]), "title": i["title"],
                           "labels": i["labels"], "preamble": parts[0],
                           "markers": body.count("pm-bot:id="), "sections": sections}
json.dump(out, open(sys.argv[2], "w", encoding="utf-8"), sort_keys=True)
PY
}

# q FILE EXPR: EXPR over `d`, the parse() output of FILE.
q() { py "$1" "$2"; }

# ---------------------------------------------------------------------------
CASE="forms: every form is used and the report plans without a diagnostic"
run 0 "$PMBOT" plan --repo "$R" --out "$TMP/p1.json" && {
	expect_eq "$(py "$TMP/p1.json" '[x["code"] for x in d["diagnostics"]]')" '[]' &&
	expect_eq "$(py "$TMP/p1.json" 'sum(c["operation"] == "create_issue" for c in d["changesets"])')" 11
} && ok

CASE="forms: apply creates every issue"
run 0 "$PMBOT" apply --repo "$R" --plan "$TMP/p1.json" --approve "$(py "$TMP/p1.json" 'd["plan_hash"]')" &&
	expect_in "$OUT" "failed 0, pending 0" &&
	expect_eq "$(py "$S" 'len(d["repositories"][1]["issues"])')" 11 && ok

CASE="forms: bodies after the first apply, read section by section, hold no marker in a value"
parse "$S" "$TMP/b1.json"
expect_eq "$(q "$TMP/b1.json" 'sorted((k, [h for h, v in x["sections"]][-1]) for k, x in d.items())')" \
	'[["bench:drain-time", "Blocked by"], ["bug:late-callback", "Blocked by"], ["chore:deps", "Links"], ["epic:pay", "Links"], ["epic:quiet", "Links"], ["feat:drain", "Links"], ["feat:quiet", "Links"], ["spike:sampling", "Blocked by"], ["task:config", "Blocked by"], ["task:hook", "Blocked by"], ["test:soak", "Blocked by"]]' &&
	expect_eq "$(q "$TMP/b1.json" '[(k, h) for k, x in sorted(d.items()) for h, v in x["sections"] if "pm-bot:id" in v or "<!--" in v or "-->" in v]')" '[]' &&
	expect_eq "$(q "$TMP/b1.json" 'sorted(set(x["markers"] for x in d.values()))')" '[1]' && ok

# check_bodies FILE: the layout, and the last section of every item exactly
# what the report says, refs resolved to the issues the state holds.
check_bodies() {
	local f=$1
	# the marker before the first heading, then a blank line
	expect_eq "$(q "$f" '[k for k, x in sorted(d.items()) if not __import__("re").fullmatch(r"<!-- pm-bot:id=%s rev=[0-9a-f]{64} -->\n\n" % __import__("re").escape(k), x["preamble"])]' 2>&1)" '[]' || return 1
	expect_eq "$(q "$f" '{k: x["sections"][-1][1] for k, x in d.items()}')" "$(q "$f" '({k: v for k, v in {
		"epic:pay": "- https:\u200c//example.com/design/pay",
		"epic:quiet": "_No response_",
		"feat:drain": "- https:\u200c//example.com/runbooks/drain\n- https:\u200c//github.com/acme/other/issues/7",
		"feat:quiet": "_No response_",
		"chore:deps": "- https:\u200c//example.com/changelog",
		"task:hook": "_No response_",
		"spike:sampling": "_No response_",
		"task:config": "https:\u200c//github.com/acme/other/issues/9, task:hook",
		"bug:late-callback": "task:config, task:hook",
		"test:soak": "bug:late-callback",
		"bench:drain-time": "spike:sampling",
	}.items() if k in d})')" || return 1
	# the other sections: what the report holds, _No response_ where it holds nothing
	expect_eq "$(q "$f" '{h: v for h, v in d["bug:late-callback"]["sections"][:-1]}')" \
		'{"Actual (hrs)": "_No response_", "Area": "checkout", "Code of Conduct": "_No response_", "Estimate (hrs)": "_No response_", "Goal": "_No response_", "Priority": "P0", "Risk": "The provider retries only once.", "What happened?": "_No response_"}' || return 1
	expect_eq "$(q "$f" '[h for h, v in d["epic:pay"]["sections"]]')" \
		'["Objective (North Star)", "Epic acceptance", "Priority", "Area", "Milestones", "Links"]' || return 1
}

CASE="forms: the marker comes first and the last section is exactly its field"
check_bodies "$TMP/b1.json" && ok

CASE="forms: plan again has nothing to do"
run 0 "$PMBOT" plan --format md --repo "$R" --detailed-exitcode && expect_in "$OUT" "**No changes.**" && ok

# ---------------------------------------------------------------------------
# The layout of earlier pm-bots: the marker after the last section. The state
# file is what a pm-bot before the move left: every managed body with its
# marker line moved to the end (the rev is the same: the sections are).
cp "$S" "$TMP/new-layout.json"
python3 - "$S" <<'PY'
import json, sys
st = json.load(open(sys.argv[1], encoding="utf-8"))
for r in st["repositories"]:
    for i in r["issues"]:
        if i["author"] == "github-actions[bot]":
            marker, rest = i["body"].split("\n\n", 1)
            i["body"] = rest + "\n\n" + marker
json.dump(st, open(sys.argv[1], "w", encoding="utf-8"))
PY

CASE="old layout: a section parser reads the marker into the last field (what the move fixes)"
parse "$S" "$TMP/b-old.json"
expect_eq "$(q "$TMP/b-old.json" 'sorted(k for k, x in d.items() if "pm-bot:id=" in x["sections"][-1][1])')" \
	'["bench:drain-time", "bug:late-callback", "chore:deps", "epic:pay", "epic:quiet", "feat:drain", "feat:quiet", "spike:sampling", "task:config", "task:hook", "test:soak"]' && ok

# One old-layout body a person edited stays a conflict, as before the move.
python3 - "$S" <<'PY'
import json, sys
st = json.load(open(sys.argv[1], encoding="utf-8"))
for i in st["repositories"][1]["issues"]:
    if "pm-bot:id=spike:sampling " in i["body"]:
        i["body"] = i["body"].replace("### Area\nobservability", "### Area\nobservability, says Bob")
json.dump(st, open(sys.argv[1], "w", encoding="utf-8"))
PY

CASE="old layout: plan moves each marker by an ordinary, visible body update; the edited one is a conflict"
run 3 "$PMBOT" plan --format md --repo "$R" --detailed-exitcode --out "$TMP/p2.json" && {
	expect_eq "$(py "$TMP/p2.json" 'sorted("%s %s" % (c["operation"], c["target"]["stable_id"]) for c in d["changesets"])')" \
		'["update_issue_body bench:drain-time", "update_issue_body bug:late-callback", "update_issue_body chore:deps", "update_issue_body epic:pay", "update_issue_body epic:quiet", "update_issue_body feat:drain", "update_issue_body feat:quiet", "update_issue_body task:config", "update_issue_body task:hook", "update_issue_body test:soak"]' &&
	expect_eq "$(py "$TMP/p2.json" '[(c["stable_id"], c["reason"]) for c in d["conflicts"]]')" '[["spike:sampling", "body_edited"]]' &&
	# the diff: the marker leaves the last line for the first, the rest is the same text
	expect_eq "$(py "$TMP/p2.json" 'sorted(set(c["before"]["body"].split("\n\n")[-1] == c["after"]["body"].split("\n\n")[0] and c["before"]["body"].split("\n\n")[:-1] == c["after"]["body"].split("\n\n")[1:] and c["after"]["body"].startswith("<!-- pm-bot:id=") for c in d["changesets"]))')" '[true]' &&
	expect_in "$OUT" "update\\_issue\\_body" &&
	# and the plan's Markdown diff shows it: the marker added on top, removed at the end
	expect_in "$OUT" "$(printf '+<!-- pm-bot:id=task:hook rev=%s -->\n  +\n   ### Goal' "$(py "$TMP/p2.json" '[c for c in d["changesets"] if c["target"]["stable_id"] == "task:hook"][0]["after"]["body"].split(" rev=")[1][:64]')")" &&
	expect_in "$OUT" "$(printf '   ### Blocked by\n  -_No response_\n  -\n  -<!-- pm-bot:id=task:hook rev=')"
} && ok

CASE="old layout: apply writes the new layout, and plan again has nothing to do but the conflict"
run 0 "$PMBOT" apply --repo "$R" --plan "$TMP/p2.json" --approve "$(py "$TMP/p2.json" 'd["plan_hash"]')" &&
	expect_in "$OUT" "applied 10, already applied 0, denied 0, failed 0, pending 0" &&
	run 0 "$PMBOT" plan --repo "$R" --format json &&
	expect_eq "$(printf '%s' "$OUT" | py - '[len(d["changesets"]), [c["stable_id"] for c in d["conflicts"]]]')" '[0, ["spike:sampling"]]' && ok

CASE="old layout: after the move, every body but the edited one is pm-bot's new rendering, byte for byte"
expect_eq "$(python3 - "$S" "$TMP/new-layout.json" <<'PY'
import json, sys
now, want = (json.load(open(p, encoding="utf-8")) for p in sys.argv[1:3])
body = lambda st: {i["number"]: i["body"] for i in st["repositories"][1]["issues"]}
a, b = body(now), body(want)
print(json.dumps(sorted(n for n in b if a[n] != b[n] and "pm-bot:id=spike:sampling " not in b[n])))
PY
)" '[]' && parse "$S" "$TMP/b2.json" && {
	expect_eq "$(q "$TMP/b2.json" 'd["spike:sampling"]["sections"][-1][1].startswith("_No response_\n\n<!-- pm-bot:id=spike:sampling ")')" true &&
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); del d["spike:sampling"]; json.dump(d, open(sys.argv[2], "w"))' \
		"$TMP/b2.json" "$TMP/b2-moved.json" &&
	check_bodies "$TMP/b2-moved.json"
} && ok

finish
