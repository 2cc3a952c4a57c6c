#!/usr/bin/env python3
"""Write a GitHub emulator seed (docs/emulator.md) of a large repository.

usage: gen_github_seed.py --base STATE --token TOKEN [--unrelated N] [--on-board K]
                          [--now TIME] [--state-out FILE] [-o FILE]

STATE is the state pm-bot leaves after creating the issues of a report
(bench/gen_state.py --plan): its one repository holds only pm-bot's issues,
with parents, dependency edges and project items. The seed puts N unrelated
issues (default 9,000) in front of them, as in a repository that existed
before pm-bot came: the unrelated issues take numbers 1..N and pm-bot's are
moved up by N (every ref, parent, blocked_by and board item, follows; bodies
name stable ids, never numbers, so they stay valid). Database and node ids of
pm-bot's issues are kept; the unrelated ones get fresh ids after them.

The unrelated issues are what a busy repository has: human and bot authors,
about 40% closed, labels from a small catalogue (some spelled like pm-bot's),
bodies from empty to a few KB, some sub-issue trees and dependency edges
among themselves, some text mentioning "pm-bot:" without being pm-bot's. None
has a pm-bot marker, so pm-bot plans nothing for them and never reads their
dependencies.

The owner keeps GitHub's default issue types (Task, Bug, Feature: what the
emulator gives an organization the seed does not configure), and pm-bot's
issues have the type their kind names, as `issue_types: auto` creates them
(an epic, spike, test or chore has none). The seed says so in `issue_type`,
the state in `extra.issue_types` and each issue's `issue_type`, so that both
backends see the same world and plan nothing for it. --on-board K also puts the first K of them on the board, with no
field values.

TOKEN becomes a write token of github-actions[bot] (scopes repo, project),
the login pm-bot's default configuration trusts. --state-out writes the
seed's state alone (canonical JSON) for a file-backend cross-check.

Same arguments, same bytes: the generator has its own PRNG and no clock.
"""

import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_report  # noqa: E402  (its PRNG)
import gen_state  # noqa: E402  (node ids, times, refs)

HUMANS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi",
          "ivan", "judy", "mallory", "niaj", "olivia", "peggy", "rupert", "sybil"]
BOTS = ["dependabot[bot]", "renovate[bot]", "github-actions[bot]"]
LABELS = ["bug", "enhancement", "question", "documentation", "duplicate", "wontfix",
          "good first issue", "help wanted", "needs-triage", "regression",
          "area:checkout", "area:search", "prio:P1", "security", "performance"]
TOPICS = ["the checkout page", "search results", "the login form", "CSV export",
          "the mobile app", "webhooks", "the billing email", "dark mode",
          "the admin panel", "API pagination", "image uploads", "the status page"]
PROBLEMS = ["crashes when", "is slow when", "shows the wrong total when",
            "times out when", "ignores the locale when", "loses data when"]
TRIGGERS = ["the cart is empty", "two tabs are open", "the network drops",
            "a coupon is applied", "the user is new", "JavaScript is disabled"]
WORDS = ("steps expected actual version browser server client retry cache token "
         "session queue worker timeout header payload response request config "
         "deploy rollback metric alert trace log index shard replica").split()
# GitHub's default issue types, in its order (tests/github-emu/lib/world.js).
DEFAULT_TYPES = ["Task", "Bug", "Feature"]
# The configuration's type label prefix (docs/config.md, labels.type).
TYPE_PREFIX = "type:"
# Unrelated history: stamped from here on, one issue every ~40 minutes, so
# all of it is older than anything pm-bot created.
HISTORY_START = "2024-01-01T00:00:00Z"


def ref(repo, number):
    return "%s#%d" % (repo, number)


def body_text(rng, i):
    kind = rng.below(10)
    if kind == 0:
        return ""
    parts = ["%s %s %s." % (rng.pick(TOPICS).capitalize(), rng.pick(PROBLEMS), rng.pick(TRIGGERS))]
    # Mostly short reports, a tail of long ones (logs pasted in).
    n_words = rng.below(60) if kind < 8 else 200 + rng.below(600)
    line = []
    for _ in range(n_words):
        line.append(rng.pick(WORDS))
        if len(line) >= 12:
            parts.append(" ".join(line))
            line = []
    if line:
        parts.append(" ".join(line))
    if rng.chance(5):
        # Text that names pm-bot but is not its marker: must cost nothing.
        parts.append("Could pm-bot: track this too? See <!-- pm-bot: not a marker -->")
    if rng.chance(10):
        parts.append("### Blocked by\n#%d" % (1 + rng.below(max(1, i))))
    return "\n\n".join(parts)


def unrelated_issues(rng, repo, n, first_dbid, start_s):
    issues = []
    children = {}   # number -> count of sub-issues
    blocking = {}   # number -> count of issues it blocks
    t = start_s
    for k in range(n):
        number = k + 1
        dbid = first_dbid + k
        t += 600 + rng.below(4200)
        if rng.chance(8):
            author = rng.pick(BOTS)
        else:
            author = rng.pick(HUMANS)
        labels = []
        for _ in range(rng.below(4)):
            lab = rng.pick(LABELS)
            if lab not in labels:
                labels.append(lab)
        issue = {
            "number": number,
            "database_id": dbid,
            "node_id": gen_state.node_id("I_", dbid),
            "title": "%s %s %s (#%d)" % (rng.pick(TOPICS).capitalize(), rng.pick(PROBLEMS),
                                         rng.pick(TRIGGERS), number),
            "body": body_text(rng, number),
            "labels": sorted(labels),
            "state": "closed" if rng.chance(40) else "open",
            "author": author,
            "author_type": "Bot" if author.endswith("[bot]") else "User",
            "updated_at": gen_state.format_time(t),
            "parent": None,
            "blocked_by": [],
        }
        # Sub-issue trees one level deep (a parent is never itself a child),
        # well inside GitHub's 100 children and 8 levels.
        if number > 10 and rng.chance(10):
            p = 1 + rng.below(number - 1)
            if issues[p - 1]["parent"] is None and children.get(p, 0) < 20:
                issue["parent"] = ref(repo, p)
                children[p] = children.get(p, 0) + 1
        if number > 10 and rng.chance(5):
            refs = set()
            for _ in range(1 + rng.below(2)):
                b = 1 + rng.below(number - 1)
                if blocking.get(b, 0) < 20:
                    refs.add(b)
            for b in refs:
                blocking[b] = blocking.get(b, 0) + 1
            issue["blocked_by"] = [ref(repo, b) for b in sorted(refs)]
        issues.append(issue)
    return issues, t


def shift_ref(r, repo_lower, by):
    if r is None:
        return None
    name, num = r.rsplit("#", 1)
    if name.lower() != repo_lower:
        return r
    return "%s#%d" % (name, int(num) + by)


def build(state, n_unrelated, on_board):
    repos = state.get("repositories") or []
    if len(repos) != 1:
        raise SystemExit("gen_github_seed.py: the base state must hold exactly one repository")
    repo = repos[0]["repo"]
    low = repo.lower()
    pmbot = repos[0]["issues"]
    for i in pmbot:
        i["number"] += n_unrelated
        i["parent"] = shift_ref(i.get("parent"), low, n_unrelated)
        i["blocked_by"] = [shift_ref(b, low, n_unrelated) for b in i.get("blocked_by", [])]
    project = state.get("project")
    if project:
        for it in project.get("items", []):
            it["issue"] = shift_ref(it["issue"], low, n_unrelated)

    extra = state.setdefault("extra", {}) or {}
    state["extra"] = extra
    extra["issue_types"] = {repo: list(DEFAULT_TYPES)}
    by_kind = {t.lower(): t for t in DEFAULT_TYPES}
    for i in pmbot:
        kinds = [l[len(TYPE_PREFIX):] for l in i.get("labels", []) if l.startswith(TYPE_PREFIX)]
        kind = by_kind.get(kinds[0].lower()) if kinds else None
        if kind:
            i["issue_type"] = kind
    max_dbid = max([i["database_id"] for i in pmbot] or [0])
    first = max(gen_state.FIRST_DATABASE_ID, extra.get("next_database_id", 0), max_dbid + 1)
    rng = gen_report.Rng(0x5EED0F617 ^ n_unrelated)
    others, _ = unrelated_issues(rng, repo, n_unrelated, first, gen_state.parse_time(HISTORY_START))
    next_id = first + n_unrelated
    if project is not None and on_board:
        used = {it["id"] for it in project.get("items", [])}
        for i in others[:on_board]:
            while gen_state.node_id("PVTI_", next_id) in used:
                next_id += 1
            project["items"].append({"id": gen_state.node_id("PVTI_", next_id),
                                     "issue": ref(repo, i["number"]), "values": {}})
            next_id += 1
        project["items"].sort(key=lambda it: gen_state.ref_key(it["issue"]))
    extra["next_database_id"] = next_id
    repos[0]["issues"] = others + sorted(pmbot, key=lambda i: i["number"])
    return state


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True,
                    help="the state after pm-bot created the report's issues (gen_state.py --plan)")
    ap.add_argument("--token", required=True, help="the token of github-actions[bot]")
    ap.add_argument("--unrelated", type=int, default=9000,
                    help="issues that are not pm-bot's, numbered before them (default 9000)")
    ap.add_argument("--on-board", type=int, default=0,
                    help="put this many of the unrelated issues on the board too (default 0)")
    ap.add_argument("--now", default=os.environ.get("PMBOT_NOW") or "2026-11-22T12:00:00Z",
                    help="the emulator's clock (default: $PMBOT_NOW or 2026-11-22T12:00:00Z)")
    ap.add_argument("--state-out", help="also write the seed's state alone here")
    ap.add_argument("-o", "--output", help="write here instead of standard output")
    args = ap.parse_args()
    if args.unrelated < 0 or args.on_board < 0 or args.on_board > args.unrelated:
        ap.error("need 0 <= --on-board <= --unrelated")
    with open(args.base, encoding="utf-8") as f:
        state = build(json.load(f), args.unrelated, args.on_board)
    seed = {
        "state": state,
        "issue_type": {ref(r["repo"], i["number"]): i["issue_type"]
                       for r in state["repositories"] for i in r["issues"] if i.get("issue_type")},
        "tokens": {args.token: {"login": "github-actions[bot]", "scopes": ["repo", "project"]}},
        "now": args.now,
    }
    text = json.dumps(seed, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if args.state_out:
        with open(args.state_out, "w", encoding="utf-8", newline="\n") as f:
            f.write(json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
