#!/usr/bin/python3
"""pm-bot's schema layer and docs/schemas/report-ir.v1.schema.json must agree.

For hand-written cases and a few hundred seeded random mutations of a valid
ReportIR document, the JSON Schema (python3-jsonschema, draft 2020-12) and
`pm-bot validate --json` (any SCHEMA_* error) must give the same verdict.
Rule-layer codes (references, duplicates) are not schema verdicts and are
ignored. Known, documented difference: pm-bot also checks that dates exist on
the calendar (2026-02-30 is refused), which a regex pattern cannot; the random
pools hold no such dates.
"""
import copy
import json
import os
import random
import subprocess
import sys
import tempfile

import jsonschema

PMBOT = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
with open(os.path.join(ROOT, "docs/schemas/report-ir.v1.schema.json")) as f:
    SCHEMA = json.load(f)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

BASE = {
    "schema_version": "report_ir/v1",
    "report": {"title": "T", "generated_at": "2026-02-22T10:00:00Z",
               "scope": {"org": "acme", "repos": ["widgets"]},
               "source": {"kind": "human", "url": "https://x", "prompt_hash": "ab"}},
    "epics": [{"stable_id": "epic:e", "title": "E", "area": "a", "priority": "P1",
               "objective": "o", "features": ["feat:f"],
               "milestones": [{"title": "M", "target_date": "2026-03-01"}]}],
    "features": [{"stable_id": "feat:f", "title": "F", "area": "a", "priority": "P1",
                  "epic_id": "epic:e", "goal": "g", "tasks": ["task:t"], "size": "M",
                  "estimate_hrs": 4, "risk": "r", "depends_on": [], "links": ["l"],
                  "acceptance_criteria": ["ac"], "owners": ["@o"], "status": "backlog"}],
    "tasks": [{"stable_id": "task:t", "title": "T", "area": "a", "priority": "P2",
               "feature_id": "feat:f", "type": "task", "blocked_by": ["feat:f"],
               "estimate_hrs": 1.5}],
    "notes": ["n"],
}

POOL = ["", "x", "2026-02-22", "report_ir/v2", 0, 7, -1, 1.5, -0.5, True, None,
        [], ["a"], [""], [1], {}, {"title": "t"}, "task", "bug", "story"]


def pmbot_schema_errors(doc, tmp):
    path = os.path.join(tmp, "r.md")
    with open(path, "w") as f:
        f.write("# r\n\n```pm-bot:report-ir/v1\n" + json.dumps(doc) + "\n```\n")
    p = subprocess.run([PMBOT, "validate", "--json", path], capture_output=True, text=True)
    if p.returncode not in (0, 2):
        raise SystemExit(f"pm-bot exited {p.returncode}: {p.stderr}")
    res = json.loads(p.stdout)
    return sorted(e["code"] + " " + e["path"] for e in res["errors"]
                  if e["code"].startswith("SCHEMA_"))


def paths(v, at=()):
    yield at
    if isinstance(v, dict):
        for k, c in v.items():
            yield from paths(c, at + (k,))
    elif isinstance(v, list):
        for i, c in enumerate(v):
            yield from paths(c, at + (i,))


def mutate(doc, rnd):
    doc = copy.deepcopy(doc)
    for _ in range(rnd.choice([1, 1, 2])):
        all_paths = [p for p in paths(doc) if p]
        p = rnd.choice(all_paths)
        parent = doc
        for k in p[:-1]:
            parent = parent[k]
        if isinstance(parent, dict) and rnd.random() < 0.3:
            del parent[p[-1]]
        else:
            parent[p[-1]] = copy.deepcopy(rnd.choice(POOL))
    return doc


HAND = [
    ("valid base", BASE),
    ("root is an array", [BASE]),
    ("no report", {"schema_version": "report_ir/v1"}),
    ("other version", dict(BASE, schema_version="report_ir/v2")),
    ("datetime without seconds", dict(BASE, report=dict(BASE["report"], generated_at="2026-02-22T10:00"))),
    ("bad date format", dict(BASE, report=dict(BASE["report"], generated_at="22.02.2026"))),
    ("generated_at 20260222", dict(BASE, report=dict(BASE["report"], generated_at="20260222"))),
    ("generated_at 20260222T100000Z", dict(BASE, report=dict(BASE["report"], generated_at="20260222T100000Z"))),
    ("generated_at 2026-02-22T10:00:00+0100", dict(BASE, report=dict(BASE["report"], generated_at="2026-02-22T10:00:00+0100"))),
    ("generated_at 2026-02-22T10:00:00+01", dict(BASE, report=dict(BASE["report"], generated_at="2026-02-22T10:00:00+01"))),
    ("generated_at 2026-W08", dict(BASE, report=dict(BASE["report"], generated_at="2026-W08"))),
    ("generated_at 2026-W08-7", dict(BASE, report=dict(BASE["report"], generated_at="2026-W08-7"))),
    ("generated_at 2026W087", dict(BASE, report=dict(BASE["report"], generated_at="2026W087"))),
    ("generated_at 2026-053", dict(BASE, report=dict(BASE["report"], generated_at="2026-053"))),
    ("generated_at 2026053", dict(BASE, report=dict(BASE["report"], generated_at="2026053"))),
    ("generated_at 2026-02-22T10:00:00,5Z", dict(BASE, report=dict(BASE["report"], generated_at="2026-02-22T10:00:00,5Z"))),
    ("generated_at 2026-02-22T100000Z", dict(BASE, report=dict(BASE["report"], generated_at="2026-02-22T100000Z"))),
    ("generated_at 20260222T10:00:00", dict(BASE, report=dict(BASE["report"], generated_at="20260222T10:00:00"))),
    ("generated_at 2026-02", dict(BASE, report=dict(BASE["report"], generated_at="2026-02"))),
    ("generated_at 2026-W08T10:00", dict(BASE, report=dict(BASE["report"], generated_at="2026-W08T10:00"))),
    ("generated_at 2026-02-22T10", dict(BASE, report=dict(BASE["report"], generated_at="2026-02-22T10"))),
    ("unknown top-level key", dict(BASE, x_org={"a": 1}, extra=1)),
    ("feature epic_id null", dict(BASE, features=[dict(BASE["features"][0], epic_id=None)])),
    ("feature epic_id empty", dict(BASE, features=[dict(BASE["features"][0], epic_id="")])),
    ("negative estimate", dict(BASE, tasks=[dict(BASE["tasks"][0], estimate_hrs=-1)])),
    ("integer estimate", dict(BASE, tasks=[dict(BASE["tasks"][0], estimate_hrs=3)])),
    ("open task type", dict(BASE, tasks=[dict(BASE["tasks"][0], type="story")])),
    ("open task type with digits and dash", dict(BASE, tasks=[dict(BASE["tasks"][0], type="load-test2")])),
    ("task type upper case", dict(BASE, tasks=[dict(BASE["tasks"][0], type="Bug")])),
    ("task type with a space", dict(BASE, tasks=[dict(BASE["tasks"][0], type="load test")])),
    ("task type with underscore", dict(BASE, tasks=[dict(BASE["tasks"][0], type="load_test")])),
    ("task type empty", dict(BASE, tasks=[dict(BASE["tasks"][0], type="")])),
    ("task type starting with a digit", dict(BASE, tasks=[dict(BASE["tasks"][0], type="7up")])),
    ("milestone without title", dict(BASE, epics=[dict(BASE["epics"][0], milestones=[{}])])),
    ("notes not an array", dict(BASE, notes="n")),
]


def main():
    rnd = random.Random(20261122)
    cases = list(HAND) + [(f"random #{i}", mutate(BASE, rnd)) for i in range(300)]
    disagree = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, doc in cases:
            js_ok = VALIDATOR.is_valid(doc)
            ours = pmbot_schema_errors(doc, tmp)
            if js_ok != (not ours):
                disagree += 1
                js = [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(doc)]
                print(f"DISAGREE [{name}]: jsonschema valid={js_ok} {js[:3]}; pm-bot {ours}\n"
                      f"  {json.dumps(doc)[:400]}", file=sys.stderr)
    print(f"schema agreement: {len(cases) - disagree} passed, {disagree} failed")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
