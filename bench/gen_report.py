#!/usr/bin/env python3
"""Write a synthetic pm-bot planning report with N work items.

usage: gen_report.py [--yaml] [--change-half] [-o FILE] N

About 5% epics, 25% features and 70% tasks (some typed bug/spike/test/chore);
features belong to epics and tasks to features; every item has area,
priority, size and estimate_hrs; about 30% carry 1-3 depends_on/blocked_by
entries naming earlier items of the report, so the dependency graph has no
cycle. The ReportIR block is JSON, or YAML with --yaml. The same arguments
always give the same bytes: the generator has its own PRNG and no clock.

--change-half writes the same report with the priority of every second item
(in document order: epics, features, tasks) moved to the next of P0..P3
(P3 wraps to P0), and nothing else changed: a plan against the state of the
unchanged report then updates half of the items (bench/plan_bench.sh).
"""

import argparse
import json
import sys

AREAS = ["checkout", "payments", "search", "catalog", "accounts", "observability",
         "infra", "mobile", "web", "data", "security", "docs"]
PRIORITIES = ["P0", "P1", "P1", "P2", "P2", "P2", "P3"]
SIZES = ["XS", "S", "S", "M", "M", "L", "XL"]
VERBS = ["Add", "Fix", "Remove", "Measure", "Cache", "Document", "Split", "Retry",
         "Validate", "Migrate", "Trace", "Rate-limit"]
NOUNS = ["the cart total", "webhook delivery", "session refresh", "the order queue",
         "image resizing", "the search index", "login throttling", "the export job",
         "price rounding", "the audit log", "feature flags", "the sitemap"]
TASK_TYPES = ["task"] * 16 + ["bug", "spike", "test", "chore"]


class Rng:
    """xorshift64*: fixed output on every Python version and platform."""

    def __init__(self, seed):
        self.s = seed or 1

    def next(self):
        s = self.s
        s ^= (s >> 12)
        s ^= (s << 25) & 0xFFFFFFFFFFFFFFFF
        s ^= (s >> 27)
        self.s = s
        return (s * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF

    def below(self, n):
        return (self.next() >> 11) % n

    def pick(self, seq):
        return seq[self.below(len(seq))]

    def chance(self, percent):
        return self.below(100) < percent


def build(n):
    rng = Rng(0x9E3779B97F4A7C15 ^ n)
    n_epics = max(1, round(n * 0.05))
    n_features = max(1, round(n * 0.25)) if n > 1 else 0
    n_tasks = max(0, n - n_epics - n_features)
    width = len(str(n))
    order = []  # stable_ids in document order, for dependencies
    epics, features, tasks = [], [], []

    parent = {}  # stable_id -> parent stable_id

    def common(item, index):
        item["title"] = "%s %s (%d)" % (rng.pick(VERBS), rng.pick(NOUNS), index)
        item["area"] = rng.pick(AREAS)
        item["priority"] = rng.pick(PRIORITIES)
        item["size"] = rng.pick(SIZES)
        # Mostly whole hours, some halves: both integers and reals are parsed.
        hours = 1 + rng.below(40)
        item["estimate_hrs"] = hours + 0.5 if rng.chance(20) else hours
        if order and rng.chance(30):
            key = rng.pick(["depends_on", "blocked_by"])
            # Never the item's own epic or feature: that would wait on itself.
            ancestors = set()
            up = parent.get(item["stable_id"])
            while up:
                ancestors.add(up)
                up = parent.get(up)
            refs = []
            for _ in range(1 + rng.below(3)):
                ref = order[rng.below(len(order))]
                if ref not in refs and ref not in ancestors:
                    refs.append(ref)
            if refs:
                item[key] = refs
        return item

    for i in range(n_epics):
        sid = "epic:e%0*d" % (width, i)
        e = {"stable_id": sid}
        common(e, i)
        e["objective"] = "Objective of epic %d." % i
        if rng.chance(30):
            e["milestones"] = [{"title": "Milestone %d" % i,
                                "target_date": "2026-%02d-%02d" % (1 + rng.below(12),
                                                                   1 + rng.below(28))}]
        epics.append(e)
        order.append(sid)
    for i in range(n_features):
        sid = "feat:f%0*d" % (width, i)
        f = {"stable_id": sid, "epic_id": epics[rng.below(n_epics)]["stable_id"]}
        parent[sid] = f["epic_id"]
        common(f, i)
        f["goal"] = "Feature %d delivers something measurable." % i
        if rng.chance(50):
            f["acceptance_criteria"] = ["Criterion %d.%d holds" % (i, k)
                                        for k in range(1 + rng.below(3))]
        features.append(f)
        order.append(sid)
    for i in range(n_tasks):
        ttype = rng.pick(TASK_TYPES)
        sid = "%s:t%0*d" % (ttype, width, i)
        t = {"stable_id": sid, "feature_id": features[rng.below(n_features)]["stable_id"]}
        parent[sid] = t["feature_id"]
        if ttype != "task":
            t["type"] = ttype
        common(t, i)
        if rng.chance(20):
            t["owners"] = ["dev%d" % rng.below(50)]
        tasks.append(t)
        order.append(sid)

    doc = {
        "schema_version": "report_ir/v1",
        "report": {
            "title": "Synthetic plan with %d items" % n,
            "generated_at": "2026-02-22",
            "scope": {"org": "acme", "repos": ["widgets"]},
            "source": {"kind": "other"},
        },
    }
    if epics:
        doc["epics"] = epics
    if features:
        doc["features"] = features
    if tasks:
        doc["tasks"] = tasks
    return doc


NEXT_PRIORITY = {"P0": "P1", "P1": "P2", "P2": "P3", "P3": "P0"}


def change_half(doc):
    """Move every second item's priority on; the PRNG is not consulted."""
    items = [x for k in ("epics", "features", "tasks") for x in doc.get(k, [])]
    for item in items[::2]:
        item["priority"] = NEXT_PRIORITY[item["priority"]]
    return doc


def yaml_scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    # A JSON string literal is a valid YAML double-quoted scalar.
    return json.dumps(v)


def yaml_lines(v, indent, out):
    pad = " " * indent
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, dict):
                out.append("%s%s:" % (pad, k))
                yaml_lines(x, indent + 2, out)
            elif isinstance(x, list) and x and isinstance(x[0], dict):
                out.append("%s%s:" % (pad, k))
                yaml_lines(x, indent + 2, out)
            elif isinstance(x, list):
                out.append("%s%s: [%s]" % (pad, k, ", ".join(yaml_scalar(y) for y in x)))
            else:
                out.append("%s%s: %s" % (pad, k, yaml_scalar(x)))
    else:
        for x in v:
            sub = []
            yaml_lines(x, indent + 2, sub)
            out.append("%s- %s" % (pad, sub[0][indent + 2:]))
            out.extend(sub[1:])


def render(doc, as_yaml):
    if as_yaml:
        lines = []
        yaml_lines(doc, 0, lines)
        block = "\n".join(lines)
    else:
        block = json.dumps(doc, indent=2, ensure_ascii=False)
    n = sum(len(doc.get(k, [])) for k in ("epics", "features", "tasks"))
    return ("# %s\n\n"
            "A generated report for benchmarking pm-bot: %d work items.\n\n"
            "```pm-bot:report-ir/v1\n%s\n```\n\n"
            "Nothing follows the block but this line.\n") % (doc["report"]["title"], n, block)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int, help="number of work items")
    ap.add_argument("--yaml", action="store_true", help="write the block as YAML")
    ap.add_argument("--change-half", action="store_true",
                    help="move the priority of every second item on (P0->P1->P2->P3->P0)")
    ap.add_argument("-o", "--output", help="write here instead of standard output")
    args = ap.parse_args()
    if args.n < 1:
        ap.error("N must be at least 1")
    doc = build(args.n)
    if args.change_half:
        change_half(doc)
    text = render(doc, args.yaml)
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
