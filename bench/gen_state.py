#!/usr/bin/env python3
"""Write a pm-bot state file (state/v1, docs/state.md) for benchmarks.

usage: gen_state.py [--base STATE] [--plan BUNDLE] [--now TIME] [-o FILE]

Without --plan: the base state, by default an empty acme/widgets with the
project acme/1 whose single-select options cover every value
bench/gen_report.py writes (Area, Priority, Size) plus the Estimate (hrs)
and Risk fields, and no issues.

With --plan: the state after every changeset of the ChangesetBundle has been
applied to the base, exactly as `pm-bot apply` would leave the file backend
(the same issue numbers, database and node ids, updated_at stamps and
canonical bytes), but in one pass instead of one file write per changeset:
applying 10,000 items through the real file backend rewrites a 6 MB file
some 80,000 times. `pm-bot plan` against the result proposes no change.

The output is canonical JSON (sorted keys, no whitespace) and a newline, as
the file backend writes it. Same arguments, same bytes.
"""

import argparse
import datetime
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_report  # noqa: E402  (its value lists define the project options)

FIRST_DATABASE_ID = 1000001
TRUSTED = "github-actions[bot]"
MARKER = re.compile(r"<!-- pm-bot:id=(\S+) rev=[0-9a-f]{64} -->")
B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def empty_state(repo, owner, number):
    def options(prefix, names):
        seen = []
        for n in names:
            if n not in seen:
                seen.append(n)
        return [{"id": "%s%d" % (prefix, i + 1), "name": n} for i, n in enumerate(seen)]

    return {
        "schema_version": "state/v1",
        "repositories": [{"repo": repo, "issues": []}],
        "project": {
            "owner": owner,
            "number": number,
            "node_id": "PVT_bench",
            "fields": [
                {"id": "PVTSSF_area", "name": "Area", "type": "single_select",
                 "options": options("a", gen_report.AREAS + ["triage"])},
                {"id": "PVTSSF_prio", "name": "Priority", "type": "single_select",
                 "options": options("p", ["P0", "P1", "P2", "P3"])},
                {"id": "PVTSSF_size", "name": "Size", "type": "single_select",
                 "options": options("s", gen_report.SIZES)},
                {"id": "PVTF_est", "name": "Estimate (hrs)", "type": "number"},
                {"id": "PVTF_risk", "name": "Risk", "type": "text"},
            ],
            "items": [],
        },
        "extra": {"next_database_id": FIRST_DATABASE_ID},
    }


def node_id(prefix, n):
    raw = n.to_bytes(8, "big").lstrip(b"\0")
    out = []
    for i in range(0, len(raw), 3):
        chunk = raw[i:i + 3]
        v = int.from_bytes(chunk + b"\0" * (3 - len(chunk)), "big")
        out.append(B64URL[v >> 18 & 63] + B64URL[v >> 12 & 63])
        if len(chunk) > 1:
            out.append(B64URL[v >> 6 & 63])
        if len(chunk) > 2:
            out.append(B64URL[v & 63])
    return prefix + "".join(out)


def parse_time(s):
    return int(datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
               .replace(tzinfo=datetime.timezone.utc).timestamp())


def format_time(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def ref_key(ref):
    repo, num = ref.rsplit("#", 1)
    return (repo.lower(), int(num))


class Backend:
    """The file backend's operations (src/backend/file_backend.c) on a dict."""

    def __init__(self, state, now):
        self.st = state
        self.now = now
        self.issues = {}    # (repo lower, number) -> issue
        self.by_id = {}     # stable_id -> issue (trusted markers only)
        self.latest = None  # the latest updated_at in the file, as seconds
        self.max_dbid = 0   # the highest issue database id in the file
        self.max_number = {}  # repo lower -> its highest issue number
        self.used_ids = set()
        for r in state.get("repositories", []):
            for i in r["issues"]:
                self.index(r["repo"], i)
        project = state.get("project") or {}
        for it in project.get("items", []):
            self.used_ids.add(it["id"])
        self.items = {ref_key(it["issue"]): it for it in project.get("items", [])}

    def index(self, repo, issue):
        issue["_repo"] = repo
        self.issues[(repo.lower(), issue["number"])] = issue
        self.used_ids.add(issue["node_id"])
        self.max_dbid = max(self.max_dbid, issue["database_id"])
        key = repo.lower()
        self.max_number[key] = max(self.max_number.get(key, 0), issue["number"])
        t = parse_time(issue["updated_at"])
        if self.latest is None or t > self.latest:
            self.latest = t
        m = MARKER.search(issue.get("body") or "")
        if m and issue.get("author") == TRUSTED:
            self.by_id[m.group(1)] = issue

    def stamp(self, issue):
        t = self.now if self.latest is None or self.now > self.latest else self.latest + 1
        self.latest = t
        issue["updated_at"] = format_time(t)

    def next_ids(self, prefix):
        extra = self.st.setdefault("extra", {}) or {}
        self.st["extra"] = extra
        n = max(FIRST_DATABASE_ID, extra.get("next_database_id", 0), self.max_dbid + 1)
        while node_id(prefix, n) in self.used_ids:
            n += 1
        extra["next_database_id"] = n + 1
        self.used_ids.add(node_id(prefix, n))
        return n, node_id(prefix, n)

    def repo_entry(self, repo):
        for r in self.st.setdefault("repositories", []):
            if r["repo"].lower() == repo.lower():
                return r
        r = {"repo": repo, "issues": []}
        self.st["repositories"].append(r)
        return r

    def resolve(self, binding):
        if "stable_id" in binding:
            issue = self.by_id.get(binding["stable_id"])
        else:
            issue = self.issues.get((binding["repo"].lower(), binding["number"]))
        if issue is None:
            raise SystemExit("gen_state.py: no issue for %s" % json.dumps(binding))
        return issue

    @staticmethod
    def ref(issue):
        return "%s#%d" % (issue["_repo"], issue["number"])

    def create_issue(self, target, p):
        r = self.repo_entry(target["repo"])
        number = 1 + self.max_number.get(r["repo"].lower(), 0)
        dbid, nid = self.next_ids("I_")
        issue = {"number": number, "database_id": dbid, "node_id": nid, "title": p["title"],
                 "body": p["body"], "labels": sorted(set(p["labels"])), "state": "open",
                 "author": TRUSTED, "author_type": "Bot", "parent": None, "blocked_by": []}
        self.stamp(issue)
        r["issues"].append(issue)
        self.index(r["repo"], issue)

    def update_issue_title(self, issue, p):
        issue["title"] = p["title"]
        self.stamp(issue)

    def update_issue_body(self, issue, p):
        issue["body"] = p["body"]
        self.stamp(issue)

    def add_labels(self, issue, p):
        issue["labels"] = sorted(set(issue["labels"]) | set(p["labels"]))
        self.stamp(issue)

    def remove_labels(self, issue, p):
        issue["labels"] = sorted(set(issue["labels"]) - set(p["labels"]))
        self.stamp(issue)

    def set_parent(self, issue, p):
        ref = self.ref(self.resolve(p["parent"]))
        if issue.get("parent") and ref_key(issue["parent"]) == ref_key(ref):
            return
        issue["parent"] = ref
        self.stamp(issue)

    def add_dependency(self, issue, p):
        issue["blocked_by"] = sorted(issue.get("blocked_by", []) + [self.ref(self.resolve(p["blocker"]))],
                                     key=ref_key)
        self.stamp(issue)

    def remove_dependency(self, issue, p):
        gone = ref_key(self.ref(self.resolve(p["blocker"])))
        issue["blocked_by"] = [b for b in issue.get("blocked_by", []) if ref_key(b) != gone]
        self.stamp(issue)

    def add_to_project(self, issue, p):
        key = (issue["_repo"].lower(), issue["number"])
        if key in self.items:
            return
        _, item_id = self.next_ids("PVTI_")
        it = {"id": item_id, "issue": self.ref(issue), "values": {}}
        self.st["project"]["items"].append(it)
        self.items[key] = it

    def set_project_field(self, issue, p):
        it = self.items[(issue["_repo"].lower(), issue["number"])]
        names = {f["name"].lower(): f["name"] for f in self.st["project"]["fields"]}
        name = names[p["field"].lower()]
        if p["value"] is None:
            it["values"].pop(name, None)
        else:
            it["values"][name] = p["value"]

    def apply(self, bundle):
        for cs in bundle.get("changesets", []):
            op = cs["operation"]
            fn = getattr(self, op, None)
            if fn is None or op.startswith("_"):
                raise SystemExit("gen_state.py: unknown operation %s" % op)
            if op == "create_issue":
                fn(cs["target"], cs["payload"])
            else:
                fn(self.resolve(cs["target"]), cs["payload"])

    def result(self):
        for r in self.st.get("repositories", []):
            r["issues"].sort(key=lambda i: i["number"])
            for i in r["issues"]:
                del i["_repo"]
        self.st.get("repositories", []).sort(key=lambda r: r["repo"].lower())
        if self.st.get("project"):
            self.st["project"]["items"].sort(key=lambda it: ref_key(it["issue"]))
        return self.st


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="start from this state file (default: an empty acme/widgets)")
    ap.add_argument("--plan", help="apply every changeset of this ChangesetBundle (JSON)")
    ap.add_argument("--now", default=os.environ.get("PMBOT_NOW") or "2026-11-22T12:00:00Z",
                    help="the clock, as PMBOT_NOW (default: $PMBOT_NOW or 2026-11-22T12:00:00Z)")
    ap.add_argument("-o", "--output", help="write here instead of standard output")
    args = ap.parse_args()
    if args.base:
        with open(args.base, encoding="utf-8") as f:
            state = json.load(f)
    else:
        state = empty_state("acme/widgets", "acme", 1)
    if args.plan:
        with open(args.plan, encoding="utf-8") as f:
            bundle = json.load(f)
        be = Backend(state, parse_time(args.now))
        be.apply(bundle)
        state = be.result()
    text = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
