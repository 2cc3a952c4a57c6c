#!/usr/bin/env bash
# End to end: plan and apply against the file backend in real git
# repositories made here with the git CLI. The bundled example's whole story,
# each kind of change converging to "no changes", human edits, spoofed and
# duplicate markers, limits, stale plans, kill -9 between every two
# changesets, and a tampered audit ledger.
# shellcheck disable=SC1111 # the plan's Markdown quotes titles with “ and ”
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
ROOT=$PWD
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 PMBOT_NOW=2026-11-22T12:00:00Z
unset GITHUB_REPOSITORY PMBOT_TEST_KILL_AFTER

# gitc DIR ARGS...: git in DIR with a fixed identity.
gitc() {
	local d=$1
	shift
	git -C "$d" -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false "$@"
}

# new_repo DIR: a repository holding the bundled example's report and
# configuration, and a state file (the default .pm-bot/state.json, not
# committed) with the example's project and no issue.
new_repo() {
	git init -q -b main "$1"
	mkdir -p "$1/plans" "$1/.github" "$1/.pm-bot"
	cp "$ROOT/examples/plans/2026-q4-checkout.md" "$1/plans/q4.md"
	cp "$ROOT/examples/.github/pm-bot.yml" "$1/.github/pm-bot.yml"
	empty_state "$1/.pm-bot/state.json"
	gitc "$1" add plans .github && gitc "$1" commit -qm "the example"
}

# empty_state FILE: acme/widgets without issues, and the project acme/1.
empty_state() {
	cat >"$1" <<'JSON'
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
}

# py eval FILE EXPR: print EXPR over `b`, the JSON document in FILE (strings
#   as they are, anything else as canonical JSON).
# py edit FILE CODE: run CODE with `s`, the JSON document, and write it back.
# py subst FILE OLD NEW: replace the one occurrence of OLD in a text file.
# py norm FILE: the issues and project items of a state file without ids,
#   numbers or stamps (refs become titles), as canonical JSON.
# Helpers inside EXPR/CODE: ops(b) lists "operation stable_id" of a bundle's
# changesets; issue(s, sid) is the trusted issue whose marker is sid;
# issues(s) every issue.
cat >"$TMP/h.py" <<'PY'
import json, re, sys

def load(p):
    with open(p, encoding="utf-8") as f:
        return json.load(f)

def issues(s):
    return [i for r in s["repositories"] for i in r["issues"]]

def issue(s, sid):
    found = [i for i in issues(s) if i["author"] == "github-actions[bot]"
             and "<!-- pm-bot:id=%s rev=" % sid in (i.get("body") or "")]
    assert len(found) == 1, "%d trusted issues carry %s" % (len(found), sid)
    return found[0]

def ops(b):
    return sorted("%s %s" % (c["operation"], c["target"].get("stable_id", c["target"].get("number")))
                  for c in b["changesets"])

def show(v):
    return v if isinstance(v, str) else json.dumps(v, sort_keys=True, separators=(",", ":"))

def norm(s):
    title = {}
    for r in s["repositories"]:
        for i in r["issues"]:
            title["%s#%d" % (r["repo"].lower(), i["number"])] = i["title"]
    t = lambda ref: title.get(ref.lower(), ref) if ref else None
    out = {"issues": sorted(({"title": i["title"], "body": i.get("body"), "labels": sorted(i.get("labels", [])),
                              "state": i["state"], "author": i["author"], "parent": t(i.get("parent")),
                              "blocked_by": sorted(t(x) for x in i.get("blocked_by", []))}
                             for i in issues(s)), key=show),
           "items": sorted(({"issue": t(it["issue"]), "values": it["values"]}
                            for it in ((s.get("project") or {}).get("items") or [])), key=show)}
    return out

cmd, path = sys.argv[1], sys.argv[2]
env = {"issue": issue, "issues": issues, "ops": ops}
if cmd == "eval":
    env["b"] = load(path)
    print(show(eval(sys.argv[3], env)))
elif cmd == "edit":
    env["s"] = load(path)
    exec(sys.argv[3], env)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(env["s"], f)
elif cmd == "subst":
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert text.count(sys.argv[3]) == 1, "no single %r in %s" % (sys.argv[3], path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(sys.argv[3], sys.argv[4]))
elif cmd == "norm":
    print(show(norm(load(path))))
PY
py() { python3 "$TMP/h.py" "$@"; }

# same_bytes A B: the files are byte for byte the same.
same_bytes() { cmp -s "$1" "$2" || { fail "$1 changed"; return 1; }; }

# converge DIR [STATE]: plan (--out), apply with the plan's hash, and plan
# again: exit 0 and no changes. Leaves the first plan in $TMP/cv.json.
converge() {
	local d=$1 st=${2:-$1/.pm-bot/state.json}
	run 0 "$PMBOT" plan --format md --repo "$d" --state "$st" --out "$TMP/cv.json" || return 1
	# No --state: the plan file names the state it was made against.
	run 0 "$PMBOT" apply --repo "$d" --plan "$TMP/cv.json" \
		--approve "$(py eval "$TMP/cv.json" 'b["plan_hash"]')" || return 1
	expect_in "$OUT" "applied $(py eval "$TMP/cv.json" 'len(b["changesets"])'), already applied 0, denied 0, failed 0, pending 0" || return 1
	run 0 "$PMBOT" plan --format md --repo "$d" --state "$st" --detailed-exitcode || return 1
	expect_in "$OUT" "**No changes.**" || return 1
}

# ---------------------------------------------------------------------------
CASE="story: plan shows the creates"
R1=$TMP/story
new_repo "$R1"
S1=$R1/.pm-bot/state.json
run 0 "$PMBOT" plan --format md --repo "$R1" --out "$TMP/p1.json" --audit "$R1/.pm-bot/audit.jsonl" && {
	expect_in "$OUT" "## pm-bot plan for \`acme/widgets\`" &&
	expect_in "$OUT" "| Creates | 7 |" &&
	expect_in "$OUT" "**create\\_issue**: new issue “\\[task\\] Add a preStop hook that waits for in-flight payments”" &&
	expect_in "$OUT" "<code>feat:graceful-drain</code>" &&
	expect_in "$OUT" "To apply exactly this plan, run \`pm-bot apply --plan $TMP/p1.json --approve $(py eval "$TMP/p1.json" 'b["plan_hash"]')\`." &&
	expect_eq "$(py eval "$TMP/p1.json" 'sum(c["operation"] == "create_issue" for c in b["changesets"])')" 7 &&
	expect_eq "$(py eval "$TMP/p1.json" '[d["code"] for d in b["diagnostics"]]')" '[]' &&
	expect_eq "$(py eval "$TMP/p1.json" 'b["target"]')" acme/widgets
} && ok

CASE="story: on a terminal or not, plan prints plain text by default: + ~ - lines, colour only on a terminal"
run 0 "$PMBOT" plan --repo "$R1" --out "$TMP/p1t.json" && {
	expect_in "$OUT" "pm-bot plan for acme/widgets (against the state file $R1/.pm-bot/state.json)" &&
	expect_in "$OUT" "task:drain-hook  [task] Add a preStop hook that waits for in-flight payments
  + new issue
  + labels area:checkout, prio:P1, size:S, type:task
  + parent feat:graceful-drain" &&
	expect_in "$OUT" "49 changes to 7 issues: 7 creates, 0 updates, 8 relationships, 34 project." &&
	expect_in "$OUT" "To apply exactly this plan, run: pm-bot apply --plan $TMP/p1t.json --approve $(py eval "$TMP/p1t.json" 'b["plan_hash"]')" &&
	case "$OUT" in *'**'*|*'&#'*|*"$(printf '\033')"*) fail "Markdown or escapes in the text plan";; *) true;; esac
} && if ! command -v script >/dev/null ||
	! script -qec 'test -t 1 && echo on-a-tty' /dev/null 2>/dev/null | grep -q on-a-tty; then
	# a chroot without /dev/pts (check-distros) cannot make a terminal: said, not hidden
	echo "SKIP [$CASE]: the terminal part: no pseudo-terminal here (script(1))"
else
	# a terminal gets colour, unless NO_COLOR says otherwise
	script -qec "\"$PMBOT\" plan --repo \"$R1\"" /dev/null >"$TMP/tty.out" 2>&1
	grep -q "$(printf '\033')\[32m+" "$TMP/tty.out" || fail "no colour on a terminal"
	NO_COLOR=1 script -qec "\"$PMBOT\" plan --repo \"$R1\"" /dev/null >"$TMP/tty2.out" 2>&1
	! grep -q "$(printf '\033')\[" "$TMP/tty2.out" || fail "colour despite NO_COLOR"
	grep -q "+ new issue" "$TMP/tty2.out" || fail "no plan on the terminal"
fi && ok

CASE="story: plan is deterministic and writes nothing"
run 0 "$PMBOT" plan --format md --repo "$R1" --format json && {
	expect_eq "$OUT" "$(cat "$TMP/p1.json")" &&
	expect_eq "$(py eval "$S1" 'len(b["repositories"][0]["issues"])')" 0
} && ok

CASE="story: apply with the plan's hash creates every issue"
H1=$(py eval "$TMP/p1.json" 'b["plan_hash"]')
N1=$(py eval "$TMP/p1.json" 'len(b["changesets"])')
run 0 "$PMBOT" apply --repo "$R1" --plan "$TMP/p1.json" --approve "$H1" --actor alice && {
	expect_in "$OUT" "applied $N1, already applied 0, denied 0, failed 0, pending 0" &&
	expect_eq "$(py eval "$S1" 'len(issues(b))')" 7 &&
	expect_eq "$(printf '%s\n' "$OUT" | grep -c '^created acme/widgets#[0-9]* ')" 7 &&
	expect_in "$OUT" "created acme/widgets#$(py eval "$S1" 'issue(b, "test:drain-soak")["number"]') test:drain-soak with parent, blockers, board, fields" &&
	expect_eq "$(py eval "$S1" 'sorted(set(i["author"] for i in issues(b)))')" '["github-actions[bot]"]' &&
	expect_eq "$(py eval "$S1" 'issue(b, "task:drain-hook")["title"]')" \
		"[task] Add a preStop hook that waits for in-flight payments" &&
	expect_eq "$(py eval "$S1" 'issue(b, "test:drain-soak")["blocked_by"] == ["acme/widgets#%d" % issue(b, "task:drain-hook")["number"]]')" true &&
	expect_eq "$(py eval "$S1" 'len(b["project"]["items"])')" 7 &&
	expect_in "$(cat "$R1/.pm-bot/audit.jsonl")" '"actor":"alice","at":"2026-11-22T12:00:00Z","changesets":'"$N1"',"event":"approval"'
} && ok

CASE="story: plan again shows no changes"
run 0 "$PMBOT" plan --format md --repo "$R1" --detailed-exitcode && {
	expect_in "$OUT" "**No changes.** The state file already matches the reports." &&
	expect_in "$OUT" "Nothing to apply."
} && ok

CASE="story: the applied plan applied again changes nothing"
cp "$S1" "$TMP/s1.before"
run 0 "$PMBOT" apply --repo "$R1" --plan "$TMP/p1.json" --approve "$H1" &&
	expect_in "$OUT" "applied 0, already applied 0, denied 0, failed 0, pending 0" &&
	same_bytes "$S1" "$TMP/s1.before" && ok

CASE="story: an edit in a new commit plans only that change"
py subst "$R1/plans/q4.md" "title: Add a preStop hook that waits for in-flight payments" \
	"title: Add a preStop hook that drains in-flight payments"
gitc "$R1" commit -qam "retitle the drain hook"
run 3 "$PMBOT" plan --format md --repo "$R1" --detailed-exitcode --out "$TMP/p2.json" && {
	expect_in "$OUT" "**1 change** to 1 issue." &&
	expect_in "$OUT" "title “\\[task\\] Add a preStop hook that waits for in-flight payments” → “\\[task\\] Add a preStop hook that drains in-flight payments”" &&
	expect_eq "$(py eval "$TMP/p2.json" 'ops(b)')" '["update_issue_title task:drain-hook"]'
} && ok
run 0 "$PMBOT" apply --repo "$R1" --plan "$TMP/p2.json" --approve "$(py eval "$TMP/p2.json" 'b["plan_hash"]')" &&
	expect_eq "$(py eval "$S1" 'issue(b, "task:drain-hook")["title"]')" "[task] Add a preStop hook that drains in-flight payments" &&
	run 0 "$PMBOT" plan --format md --repo "$R1" --detailed-exitcode && expect_in "$OUT" "**No changes.**" && ok

CASE="story: the ledger is intact"
run 0 "$PMBOT" audit verify "$R1/.pm-bot/audit.jsonl" && {
	expect_in "$OUT" "chain intact" &&
	expect_in "$(head -n 1 "$R1/.pm-bot/audit.jsonl")" '"event":"proposal"'
} && ok

# ---------------------------------------------------------------------------
CASE="changes: the example applied in a second repository"
R2=$TMP/changes
new_repo "$R2"
S2=$R2/.pm-bot/state.json
converge "$R2" && ok

CASE="renamed title: update_issue_title only, then no changes"
py subst "$R2/plans/q4.md" "title: Trace a checkout across the cart, payment and order services" \
	"title: Trace every checkout end to end"
gitc "$R2" commit -qam rename
run 3 "$PMBOT" plan --format md --repo "$R2" --detailed-exitcode --format json &&
	expect_eq "$(printf '%s' "$OUT" | py eval /dev/stdin 'ops(b)')" '["update_issue_title feat:checkout-tracing"]' &&
	converge "$R2" &&
	expect_eq "$(py eval "$S2" 'issue(b, "feat:checkout-tracing")["title"]')" "[feat] Trace every checkout end to end" && ok

CASE="changed priority: body, labels and the Priority field change"
py subst "$R2/plans/q4.md" "$(printf 'Propagate trace context through the payment client\n    area: observability\n    priority: P2')" \
	"$(printf 'Propagate trace context through the payment client\n    area: observability\n    priority: P1')"
gitc "$R2" commit -qam priority
run 3 "$PMBOT" plan --format md --repo "$R2" --detailed-exitcode --out "$TMP/p.json" && {
	expect_eq "$(py eval "$TMP/p.json" 'ops(b)')" '["add_labels task:trace-propagation","remove_labels task:trace-propagation","set_project_field task:trace-propagation","update_issue_body task:trace-propagation"]' &&
	expect_eq "$(py eval "$TMP/p.json" '[(c["operation"], c["payload"]) for c in b["changesets"] if "labels" in c["operation"] or "field" in c["operation"]]')" \
		'[["add_labels",{"labels":["prio:P1"]}],["remove_labels",{"labels":["prio:P2"]}],["set_project_field",{"field":"Priority","value":"P1"}]]' &&
	expect_in "$OUT" "$(printf -- '-P2\n  +P1')"
} && converge "$R2" && {
	expect_eq "$(py eval "$S2" 'issue(b, "task:trace-propagation")["labels"]')" '["area:observability","prio:P1","size:M","type:task"]' &&
	expect_eq "$(py eval "$S2" '[it["values"]["Priority"] for it in b["project"]["items"] if it["issue"] == "acme/widgets#%d" % issue(b, "task:trace-propagation")["number"]]')" '["P1"]'
} && ok

CASE="moved task: set_parent replaces the parent"
py subst "$R2/plans/q4.md" "$(printf 'stable_id: task:trace-propagation\n    feature_id: feat:checkout-tracing')" \
	"$(printf 'stable_id: task:trace-propagation\n    feature_id: feat:graceful-drain')"
gitc "$R2" commit -qam move
run 3 "$PMBOT" plan --format md --repo "$R2" --detailed-exitcode --out "$TMP/p.json" && {
	expect_eq "$(py eval "$TMP/p.json" 'ops(b)')" '["set_parent task:trace-propagation"]' &&
	expect_eq "$(py eval "$TMP/p.json" 'b["changesets"][0]["payload"]')" '{"parent":{"repo":"acme/widgets","stable_id":"feat:graceful-drain"},"replace":true}' &&
	expect_eq "$(py eval "$TMP/p.json" 'b["changesets"][0]["before"]["parent"]')" "$(py eval "$S2" '"acme/widgets#%d" % issue(b, "feat:checkout-tracing")["number"]')"
} && converge "$R2" &&
	expect_eq "$(py eval "$S2" 'issue(b, "task:trace-propagation")["parent"] == "acme/widgets#%d" % issue(b, "feat:graceful-drain")["number"]')" true && ok

CASE="removed dependency: not proposed while deny_operations lists it"
py subst "$R2/plans/q4.md" "    blocked_by: [task:drain-hook]
" ""
gitc "$R2" commit -qam "drop a dependency"
run 3 "$PMBOT" plan --format md --repo "$R2" --detailed-exitcode --out "$TMP/p.json" && {
	expect_in "$ERR" "warning DEPENDENCY_KEPT /tasks/1: 'test:drain-soak' stays blocked by task:drain-hook" &&
	expect_eq "$(py eval "$TMP/p.json" 'ops(b)')" '["update_issue_body test:drain-soak"]'
} && ok

CASE="removed dependency: remove_dependency once allowed, then no changes"
grep -v -e '^deny_operations:' -e '^  - remove_dependency' "$R2/.github/pm-bot.yml" >"$TMP/cfg" &&
	cp "$TMP/cfg" "$R2/.github/pm-bot.yml"
gitc "$R2" commit -qam "allow remove_dependency"
converge "$R2" && {
	expect_eq "$(py eval "$TMP/cv.json" 'ops(b)')" '["remove_dependency test:drain-soak","update_issue_body test:drain-soak"]' &&
	expect_eq "$(py eval "$TMP/cv.json" '[c["payload"] for c in b["changesets"] if c["operation"] == "remove_dependency"]')" \
		'[{"blocker":{"repo":"acme/widgets","stable_id":"task:drain-hook"}}]' &&
	expect_eq "$(py eval "$S2" 'issue(b, "test:drain-soak")["blocked_by"]')" '[]'
} && ok

# ---------------------------------------------------------------------------
CASE="human edit: a conflict, the body is not overwritten"
py edit "$S2" 'i = issue(s, "task:drain-hook"); i["body"] = i["body"].replace("### Goal\n_No response_", "### Goal\nA human wrote this.")'
py subst "$R2/plans/q4.md" "$(printf 'title: Add a preStop hook that waits for in-flight payments\n    area: checkout\n    priority: P1')" \
	"$(printf 'title: Add a preStop hook that waits for in-flight payments\n    area: checkout\n    priority: P2')"
gitc "$R2" commit -qam "lower the drain hook"
run 3 "$PMBOT" plan --format md --repo "$R2" --detailed-exitcode --out "$TMP/p.json" && {
	expect_in "$OUT" "### Conflicts" &&
	expect_in "$OUT" "not overwritten" &&
	expect_eq "$(py eval "$TMP/p.json" '[(c["stable_id"], c["reason"]) for c in b["conflicts"]]')" '[["task:drain-hook","body_edited"]]' &&
	expect_eq "$(py eval "$TMP/p.json" 'ops(b)')" '["add_labels task:drain-hook","remove_labels task:drain-hook","set_project_field task:drain-hook"]'
} && ok
run 0 "$PMBOT" apply --repo "$R2" --plan "$TMP/p.json" --approve "$(py eval "$TMP/p.json" 'b["plan_hash"]')" && {
	expect_in "$(py eval "$S2" 'issue(b, "task:drain-hook")["body"]')" "### Goal
A human wrote this." &&
	expect_in "$(py eval "$S2" 'issue(b, "task:drain-hook")["labels"]')" '"prio:P2"'
} && run 3 "$PMBOT" plan --format md --repo "$R2" --detailed-exitcode --format json &&
	expect_eq "$(printf '%s' "$OUT" | py eval /dev/stdin '[len(b["changesets"]), len(b["conflicts"])]')" '[0,1]' &&
	run 3 "$PMBOT" plan --format md --repo "$R2" --detailed-exitcode &&
	expect_in "$OUT" "**Nothing to apply, but 1 conflict needs a person** (see Conflicts): the state file does not match the reports." &&
	expect_not_in "$OUT" "already matches" && ok

# ---------------------------------------------------------------------------
CASE="spoofed marker: MARKER_UNTRUSTED and a create; duplicate marker: the item is left alone"
py edit "$S2" '
import copy
iss = s["repositories"][0]["issues"]
dup = copy.deepcopy(issue(s, "task:trace-propagation"))
dup.update(number=50, database_id=2000050, node_id="I_dup50", parent=None, blocked_by=[])
iss.append(dup)
iss.append({"number": 51, "database_id": 2000051, "node_id": "I_mal51", "title": "[task] Free money",
            "body": "pay me\n\n<!-- pm-bot:id=task:new-thing rev=" + "ab" * 32 + " -->", "labels": [],
            "state": "open", "author": "mallory", "author_type": "User",
            "updated_at": "2026-11-01T00:00:00Z", "parent": None, "blocked_by": []})'
py subst "$R2/plans/q4.md" "title: Propagate trace context through the payment client" \
	"title: Propagate trace context through the payment SDK"
py subst "$R2/plans/q4.md" '```

## Out of scope' "$(printf '  - stable_id: task:new-thing\n    feature_id: feat:checkout-tracing\n    title: A new thing\n    area: checkout\n    priority: P3\n```\n\n## Out of scope')"
gitc "$R2" commit -qam "a new task, a new title"
run 3 "$PMBOT" plan --format md --repo "$R2" --detailed-exitcode --out "$TMP/p.json" && {
	expect_in "$ERR" "acme/widgets#51: warning MARKER_UNTRUSTED" &&
	expect_in "$ERR" "'mallory', who is not a trusted author" &&
	expect_in "$ERR" "warning DUPLICATE_MARKER" &&
	expect_eq "$(py eval "$TMP/p.json" 'sorted(d["code"] for d in b["diagnostics"])')" '["DUPLICATE_MARKER","MARKER_UNTRUSTED"]' &&
	expect_eq "$(py eval "$TMP/p.json" '[o for o in ops(b) if "create" in o]')" '["create_issue task:new-thing"]' &&
	expect_eq "$(py eval "$TMP/p.json" '[o for o in ops(b) if "trace-propagation" in o]')" '[]'
} && ok
run 0 "$PMBOT" apply --repo "$R2" --plan "$TMP/p.json" --approve "$(py eval "$TMP/p.json" 'b["plan_hash"]')" && {
	expect_eq "$(py eval "$S2" '[i["title"] for i in issues(b) if i["number"] == 51]')" '["[task] Free money"]' &&
	expect_eq "$(py eval "$S2" 'issue(b, "task:new-thing")["title"]')" "[task] A new thing" &&
	expect_eq "$(py eval "$S2" 'sorted(i["title"] for i in issues(b) if "pm-bot:id=task:trace-propagation " in i["body"])')" \
		'["[task] Propagate trace context through the payment client","[task] Propagate trace context through the payment client"]'
} && run 3 "$PMBOT" plan --format md --repo "$R2" --detailed-exitcode &&
	expect_in "$OUT" "**Nothing to apply, but 1 conflict needs a person**" && ok

# ---------------------------------------------------------------------------
CASE="a person's edit the report then says too is adopted, not a conflict for ever"
py edit "$S2" 'i = issue(s, "feat:checkout-tracing"); i["body"] = i["body"].replace("### Estimate (hrs)\n24", "### Estimate (hrs)\n30")'
run 3 "$PMBOT" plan --format md --repo "$R2" --detailed-exitcode --format json &&
	expect_eq "$(printf '%s' "$OUT" | py eval /dev/stdin 'sorted(c["stable_id"] for c in b["conflicts"])')" '["feat:checkout-tracing","task:drain-hook"]' &&
	py subst "$R2/plans/q4.md" "estimate_hrs: 24" "estimate_hrs: 30" &&
	gitc "$R2" commit -qam "the estimate the team agreed on" &&
	run 3 "$PMBOT" plan --format md --repo "$R2" --detailed-exitcode --out "$TMP/adopt.json" &&
	expect_eq "$(py eval "$TMP/adopt.json" '[c["stable_id"] for c in b["conflicts"]]')" '["task:drain-hook"]' &&
	expect_in "$(py eval "$TMP/adopt.json" 'ops(b)')" "update_issue_body feat:checkout-tracing" &&
	TEXT='"\n".join(l for l in issue(b, "feat:checkout-tracing")["body"].split("\n") if not l.startswith("<!-- pm-bot:id="))' &&
	BEFORE=$(py eval "$S2" "$TEXT") && expect_in "$BEFORE" "30" &&
	run 0 "$PMBOT" apply --repo "$R2" --plan "$TMP/adopt.json" --approve "$(py eval "$TMP/adopt.json" 'b["plan_hash"]')" &&
	expect_eq "$(py eval "$S2" "$TEXT")" "$BEFORE" &&
	run 3 "$PMBOT" plan --format md --repo "$R2" --detailed-exitcode --format json &&
	expect_eq "$(printf '%s' "$OUT" | py eval /dev/stdin '[len(b["changesets"]), [c["stable_id"] for c in b["conflicts"]]]')" '[0,["task:drain-hook"]]' && ok

# ---------------------------------------------------------------------------
CASE="state list and show: what pm-bot manages, by the planner's rules"
run 0 "$PMBOT" state list --repo "$R2" && {
	expect_in "$OUT" "task:drain-hook" && expect_in "$OUT" "[edited by a person]" &&
	expect_in "$OUT" "[duplicate marker]" &&
	expect_eq "$(printf '%s\n' "$OUT" | grep -c 'duplicate marker')" 2 &&
	expect_eq "$(printf '%s\n' "$OUT" | grep -c 'Free money')" 0
} && run 0 "$PMBOT" state list --repo "$R2" --format json &&
	expect_eq "$(printf '%s' "$OUT" | py eval /dev/stdin 'sorted(i["stable_id"] for i in b if i["edited"])')" '["task:drain-hook"]' &&
	expect_eq "$(printf '%s' "$OUT" | py eval /dev/stdin 'len(b)')" "$(py eval "$S2" 'sum(1 for i in issues(b) if "pm-bot:id=" in i["body"] and i["author"] != "mallory")')" &&
	run 0 "$PMBOT" state show test:drain-soak --repo "$R2" &&
	expect_in "$OUT" "parent:     acme/widgets#" && expect_in "$OUT" "(feat:graceful-drain)" &&
	expect_in "$OUT" "body:       as pm-bot last wrote it" &&
	run 2 "$PMBOT" state show task:nope --repo "$R2" &&
	expect_in "$ERR" "no issue pm-bot manages in acme/widgets carries 'task:nope'" && ok

# ---------------------------------------------------------------------------
CASE="limits: a feature with 101 tasks is LIMIT_SUB_ISSUES; 100 are fine"
R5=$TMP/limits
git init -q -b main "$R5"
mkdir -p "$R5/plans" "$R5/.github"
printf 'reports: ["plans/**/*.md"]\nrepos: [acme/widgets]\n' >"$R5/.github/pm-bot.yml"
wide() {
	python3 - "$1" >"$R5/plans/wide.md" <<'PY'
import json, sys
n = int(sys.argv[1])
doc = {"schema_version": "report_ir/v1",
       "report": {"title": "Wide", "generated_at": "2026-11-02",
                  "scope": {"org": "acme", "repos": ["widgets"]}, "source": {"kind": "human"}},
       "epics": [{"stable_id": "epic:big", "title": "Big", "area": "infra", "priority": "P2"}],
       "features": [{"stable_id": "feat:wide", "epic_id": "epic:big", "title": "Wide",
                     "area": "infra", "priority": "P2"}],
       "tasks": [{"stable_id": "task:t%03d" % i, "feature_id": "feat:wide", "title": "Task %d" % i,
                  "area": "infra", "priority": "P2"} for i in range(n)]}
print("# Wide\n\n```pm-bot:report-ir/v1\n%s\n```" % json.dumps(doc, indent=1))
PY
	gitc "$R5" add -A && gitc "$R5" commit -qm "$1 tasks"
}
wide 100
run 0 "$PMBOT" plan --format md --repo "$R5" --format json && case "$OUT" in
	*LIMIT_*) fail "100 sub-issues reported as a limit" ;;
	*) ok ;;
	esac
wide 101
run 2 "$PMBOT" plan --format md --repo "$R5" --detailed-exitcode --out "$TMP/p.json" && {
	expect_in "$ERR" "error LIMIT_SUB_ISSUES /features/0: 'feat:wide' would have 101 sub-issues; GitHub allows 100" &&
	expect_in "$OUT" "cannot be approved" &&
	expect_eq "$(py eval "$TMP/p.json" '[d["code"] for d in b["diagnostics"] if d["severity"] == "error"]')" '["LIMIT_SUB_ISSUES"]'
} && ok
run 2 "$PMBOT" apply --repo "$R5" --plan "$TMP/p.json" --approve "$(py eval "$TMP/p.json" 'b["plan_hash"]')" && {
	[ ! -e "$R5/.pm-bot/state.json" ] || { fail "a plan with errors was applied"; false; }
} && ok

# ---------------------------------------------------------------------------
CASE="stale plan: the state changed after the plan, nothing is written"
py subst "$R1/plans/q4.md" "$(printf 'area: observability\n    priority: P3')" "$(printf 'area: observability\n    priority: P2')"
gitc "$R1" commit -qam "raise the sampling spike"
run 0 "$PMBOT" plan --format md --repo "$R1" --out "$TMP/stale.json" || true
py edit "$S1" 'issue(s, "task:trace-propagation")["title"] = "Edited by hand"'
cp "$S1" "$TMP/s1.before"
run 2 "$PMBOT" apply --repo "$R1" --plan "$TMP/stale.json" --approve "$(py eval "$TMP/stale.json" 'b["plan_hash"]')" && {
	expect_in "$ERR" "error STALE_PLAN" &&
	expect_in "$ERR" "the plan is stale" &&
	expect_in "$(tail -n 1 "$R1/.pm-bot/audit.jsonl")" '"event":"denial"' &&
	expect_in "$(tail -n 1 "$R1/.pm-bot/audit.jsonl")" '"reason":"STALE_PLAN"' &&
	same_bytes "$S1" "$TMP/s1.before"
} && ok

CASE="a plan file cannot point the state write at anything but a .json file"
cp "$TMP/stale.json" "$TMP/elsewhere.json"
py edit "$TMP/elsewhere.json" 's["source"]["backend"]["state"] = "'"$TMP"'/notes.txt"'
run 2 "$PMBOT" apply --repo "$R1" --plan "$TMP/elsewhere.json" --approve "$(py eval "$TMP/stale.json" 'b["plan_hash"]')" &&
	expect_in "$ERR" "not a .json file" && [ ! -e "$TMP/notes.txt" ] && same_bytes "$S1" "$TMP/s1.before" && ok

CASE="a damaged plan (a fingerprint entry without updated_at, its hash recomputed) is refused with where, never applied nor a crash"
# plan_hash is sha256 of the canonical JSON of {changesets, fingerprint} (plan.h):
# recomputed, the damage passes the hash and reaches the loader.
rehash() {
	python3 - "$1" <<'PY'
import hashlib, json, sys
b = json.load(open(sys.argv[1], encoding="utf-8"))
canon = lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
print(hashlib.sha256(canon({"changesets": b["changesets"], "fingerprint": b["fingerprint"]})).hexdigest())
PY
}
# A fresh plan (it would apply): only the damage may stop it.
run 0 "$PMBOT" plan --repo "$R1" --out "$TMP/damaged.json" &&
	expect_eq "$(rehash "$TMP/damaged.json")" "$(py eval "$TMP/damaged.json" 'b["plan_hash"]')" &&
	expect_eq "$(py eval "$TMP/damaged.json" 'str(len(b["fingerprint"]) > 0)')" True &&
	py edit "$TMP/damaged.json" 'del s["fingerprint"][0]["updated_at"]' &&
	H=$(rehash "$TMP/damaged.json") &&
	py edit "$TMP/damaged.json" 's["plan_hash"] = "'"$H"'"' &&
	run 2 "$PMBOT" apply --repo "$R1" --plan "$TMP/damaged.json" --approve "$H" &&
	expect_in "$ERR" "error PLAN_INVALID /fingerprint/0/updated_at: must be a string (it is missing)" &&
	expect_in "$ERR" "is not a plan pm-bot can apply: nothing applied" &&
	expect_in "$(tail -n 1 "$R1/.pm-bot/audit.jsonl")" '"reason":"PLAN_INVALID"' &&
	same_bytes "$S1" "$TMP/s1.before" && ok

CASE="stale plan: a wrong --approve hash is refused"
run 2 "$PMBOT" apply --repo "$R1" --plan "$TMP/stale.json" --approve "$(printf '0%.0s' $(seq 64))" && {
	expect_in "$ERR" "nothing applied" &&
	expect_in "$(tail -n 1 "$R1/.pm-bot/audit.jsonl")" '"reason":"APPROVAL_MISMATCH"' &&
	same_bytes "$S1" "$TMP/s1.before"
} && ok

CASE="stale plan: an edited plan file is refused"
py edit "$TMP/stale.json" 's["changesets"][0]["payload"]["labels"] = ["prio:P0"]'
run 2 "$PMBOT" apply --repo "$R1" --plan "$TMP/stale.json" --approve "$(py eval "$TMP/stale.json" 'b["plan_hash"]')" &&
	expect_in "$ERR" "PLAN_HASH_MISMATCH" && same_bytes "$S1" "$TMP/s1.before" && ok

CASE="stale plan: planning again converges, the hand edit reverted"
converge "$R1" && {
	expect_eq "$(py eval "$TMP/cv.json" 'ops(b)')" '["add_labels spike:trace-sampling","remove_labels spike:trace-sampling","set_project_field spike:trace-sampling","update_issue_body spike:trace-sampling","update_issue_title task:trace-propagation"]' &&
	expect_eq "$(py eval "$S1" 'issue(b, "task:trace-propagation")["title"]')" "[task] Propagate trace context through the payment client"
} && ok

# ---------------------------------------------------------------------------
# kill -9 after every changeset but the last, on a small report.
R7=$TMP/kill
git init -q -b main "$R7"
mkdir -p "$R7/plans" "$R7/.github"
printf 'reports: ["plans/**/*.md"]\nrepos: [acme/widgets]\nproject: {owner: acme, number: 1}\n' >"$R7/.github/pm-bot.yml"
cat >"$R7/plans/small.md" <<'MD'
# Small

```pm-bot:report-ir/v1
schema_version: report_ir/v1
report:
  title: Small
  generated_at: 2026-11-02
  scope: {org: acme, repos: [widgets]}
  source: {kind: human}
epics:
  - {stable_id: "epic:e", title: Epic, area: checkout, priority: P1}
features:
  - {stable_id: "feat:f", epic_id: "epic:e", title: Feature, area: checkout, priority: P1}
tasks:
  - {stable_id: "task:a", feature_id: "feat:f", title: Task A, area: checkout, priority: P2}
  - {stable_id: "task:b", feature_id: "feat:f", title: Task B, area: checkout, priority: P2, blocked_by: ["task:a"]}
```
MD
gitc "$R7" add -A && gitc "$R7" commit -qm small
empty_state "$TMP/kill-empty.json"

# The subshell keeps bash's "Killed" notice out of the test's output.
unquiet() { ( "$@"; exit $? ); }

CASE="kill -9: the uninterrupted apply"
cp "$TMP/kill-empty.json" "$TMP/ks.json"
converge "$R7" "$TMP/ks.json" && {
	expect_eq "$(py eval "$TMP/ks.json" '[len(issues(b)), len(b["project"]["items"])]')" '[4,4]' &&
	expect_eq "$(py eval "$TMP/cv.json" '[c["operation"] for c in b["changesets"]][:4]')" \
		'["create_issue","create_issue","create_issue","create_issue"]'
} && ok
WANT=$(py norm "$TMP/ks.json")
NCS=$(py eval "$TMP/cv.json" 'len(b["changesets"])')

for ((k = 1; k < NCS; k++)); do
	CASE="kill -9 after changeset $k of $NCS, then the same apply again"
	st=$TMP/k$k.json
	ledger=$TMP/k$k.jsonl
	cp "$TMP/kill-empty.json" "$st"
	run 0 "$PMBOT" plan --format md --repo "$R7" --state "$st" --out "$TMP/kp.json" || continue
	h=$(py eval "$TMP/kp.json" 'b["plan_hash"]')
	run 137 unquiet env PMBOT_TEST_KILL_AFTER=$k "$PMBOT" apply --repo "$R7" --state "$st" \
		--plan "$TMP/kp.json" --approve "$h" --audit "$ledger" || continue
	run 0 "$PMBOT" apply --repo "$R7" --state "$st" --plan "$TMP/kp.json" --approve "$h" \
		--audit "$ledger" || continue
	expect_in "$OUT" "failed 0, pending 0" &&
	expect_eq "$(py norm "$st")" "$WANT" &&
	run 0 "$PMBOT" plan --format md --repo "$R7" --state "$st" --detailed-exitcode &&
	expect_in "$OUT" "**No changes.**" &&
	run 0 "$PMBOT" audit verify "$ledger" &&
	expect_in "$OUT" "chain intact" &&
	ok
done

# ---------------------------------------------------------------------------
CASE="audit verify names the first broken line of a tampered ledger"
L=$R1/.pm-bot/audit.jsonl
run 0 "$PMBOT" audit verify "$L" && ok
sed '3s/"at":"2026-11-22T12:00:00Z"/"at":"2026-11-22T12:00:01Z"/' "$L" >"$TMP/edited.jsonl"
run 2 "$PMBOT" audit verify "$TMP/edited.jsonl" && expect_in "$ERR" "edited.jsonl:4: error AUDIT_BROKEN /prev: line 4" && ok
sed '3s/,/, /' "$L" >"$TMP/spaced.jsonl"
run 2 "$PMBOT" audit verify "$TMP/spaced.jsonl" && expect_in "$ERR" "spaced.jsonl:3: error AUDIT_BROKEN" && ok
sed '5d' "$L" >"$TMP/cut.jsonl"
run 2 "$PMBOT" audit verify "$TMP/cut.jsonl" && expect_in "$ERR" "cut.jsonl:5: error AUDIT_BROKEN /prev" && ok

# ---------------------------------------------------------------------------
CASE="a state whose repository offers issue types: the creates take them, and the next plan has nothing to do"
R8=$TMP/r8
new_repo "$R8"
python3 - "$R8/.pm-bot/state.json" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
st["extra"] = {"issue_types": {"acme/widgets": ["Epic", "Feature", "Task"]}}
json.dump(st, open(sys.argv[1], "w"))
PY
run 0 "$PMBOT" plan --format md --repo "$R8" --out "$TMP/t8.json" &&
	expect_eq "$(py eval "$TMP/t8.json" 'sum(c["operation"] == "set_issue_type" for c in b["changesets"])')" 0 &&
	run 0 "$PMBOT" apply --repo "$R8" --plan "$TMP/t8.json" --approve "$(py eval "$TMP/t8.json" 'b["plan_hash"]')" &&
	expect_in "$OUT" "failed 0, pending 0" &&
	expect_eq "$(py eval "$R8/.pm-bot/state.json" 'sorted(str(i.get("issue_type")) for r in b["repositories"] for i in r["issues"])')" \
		'["Epic","Feature","Feature","None","None","Task","Task"]' &&
	run 0 "$PMBOT" plan --format md --repo "$R8" --detailed-exitcode &&
	expect_in "$OUT" "**No changes.**" && ok

finish
