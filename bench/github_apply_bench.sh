#!/usr/bin/env bash
# usage: bench/github_apply_bench.sh BIN
#
# The first `pm-bot apply --backend github` of a report of BENCH_ITEMS
# (1,000) new items (bench/gen_report.py: parents, dependency edges, board
# fields) against the loopback emulator holding the empty board acme/1 and
# BENCH_UNRELATED (9,000) issues pm-bot did not make, pacing and the write
# budget off, then a re-plan. Figures only: nothing is asserted beyond every
# changeset landing and the re-plan having no changes.
#
# The plan before the first apply must prove every item absent, which the
# filtered read cannot: it reads the whole repository once (ceil(issues/100)
# pages; the apply's staleness check does it again, immediately before it
# creates, and the executor starts from that read). The re-plan
# after it reads only the issues pm-bot's login created.
#
# Printed, from the emulator's request log (/_emu/requests), beside the
# floor the API allows for the write side:
#   creates:  one createIssue per new item (labels, parent, board membership
#             and issue type ride in it), so N;
#   fields:   ceil(fields / 50) aliased updateProjectV2ItemFieldValue requests;
#   edges:    ceil(edges / 50) aliased addBlockedBy requests;
#   labels:   one request per label the repository lacks (created once).
# Parents whose create comes after the child's in the run, or that GitHub
# refused inside the create, go as their own REST requests; they are counted.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

if [ $# -ne 1 ]; then
	echo "usage: $0 BIN" >&2
	exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
n_items=${BENCH_ITEMS:-1000}
n_unrelated=${BENCH_UNRELATED:-9000}
token=ghp_benchTOKEN0000000000000000000000

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pmbot-apply-bench.XXXXXX")
emu=$tmp/emu
cleanup() {
	"$root/scripts/emu.sh" stop "$emu" >/dev/null 2>&1 || true
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export PMBOT_NOW=${PMBOT_NOW:-2026-11-22T12:00:00Z}
unset GITHUB_TOKEN PMBOT_VERBOSE GITHUB_REPOSITORY PMBOT_TEST_KILL_AFTER
repo=$tmp/repo
ms() { echo $(($(date +%s%N) / 1000000)); }

bench_repo "$n_items"
python3 "$here/gen_state.py" -o "$tmp/empty.json"
python3 "$here/gen_github_seed.py" --base "$tmp/empty.json" --token "$token" --unrelated "$n_unrelated" \
	-o "$tmp/seed.json"
url=$("$root/scripts/emu.sh" start "$tmp/seed.json" "$emu")
export GITHUB_API_URL=$url GITHUB_GRAPHQL_URL=$url/graphql GH_TOKEN=$token PMBOT_GITHUB_PACE_MS=0
export PMBOT_GITHUB_WRITE_BUDGET=off
export PMBOT_GITHUB_CACHE_DIR=$tmp/cache
ctl() { curl -sf -X "$1" "$url$2"; }

ctl DELETE /_emu/requests >/dev/null
t0=$(ms)
"$bin" plan --repo "$repo" --backend github --out "$tmp/plan.json" >/dev/null
plan_wall=$(($(ms) - t0))
ctl GET /_emu/requests >"$tmp/plan-req.json"
hash=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["plan_hash"])' "$tmp/plan.json")
ctl DELETE /_emu/requests >/dev/null
t0=$(ms)
"$bin" apply --repo "$repo" --backend github --plan "$tmp/plan.json" --approve "$hash" --stats \
	>"$tmp/apply.out" 2>"$tmp/apply.err" || { cat "$tmp/apply.err" >&2; exit 1; }
wall=$(($(ms) - t0))
ctl GET /_emu/requests >"$tmp/req.json"
ctl DELETE /_emu/requests >/dev/null
t0=$(ms)
if "$bin" plan --repo "$repo" --backend github --detailed-exitcode >"$tmp/replan.out" 2>&1; then
	replan=no-changes
else
	replan="changes (exit $?)"
fi
replan_wall=$(($(ms) - t0))
ctl GET /_emu/requests >"$tmp/replan-req.json"

python3 - "$tmp/plan.json" "$tmp/req.json" "$wall" "$replan" "$tmp/plan-req.json" "$plan_wall" \
	"$tmp/replan-req.json" "$replan_wall" "$n_unrelated" <<'PY'
import collections, json, sys
plan = json.load(open(sys.argv[1]))
reqs = json.load(open(sys.argv[2]))["requests"]
wall, replan = int(sys.argv[3]), sys.argv[4]
plan_reqs, plan_wall = json.load(open(sys.argv[5]))["requests"], int(sys.argv[6])
replan_reqs, replan_wall = json.load(open(sys.argv[7]))["requests"], int(sys.argv[8])
unrelated = int(sys.argv[9])
ops = collections.Counter(c["operation"] for c in plan["changesets"])
def n(pred):
    return sum(1 for r in reqs if pred(r))
op = lambda r: r.get("operation") or ""
writes = n(lambda r: (r["kind"] == "rest" and r["method"] != "GET") or op(r).startswith("mutation"))
creates = n(lambda r: op(r) == "mutation createIssue")
labels = n(lambda r: r["kind"] == "rest" and r["method"] == "POST" and r["path"].endswith("/labels"))
fields = n(lambda r: "ProjectV2ItemFieldValue" in op(r))
edges = n(lambda r: "BlockedBy" in op(r))
parents = n(lambda r: r["path"].endswith("/sub_issues") and r["method"] == "POST")
items = n(lambda r: "addProjectV2ItemById" in op(r))
reads = len(reqs) - writes
N = ops["create_issue"]
ceil = lambda a, b: -(-a // b)
floor = N + ceil(ops["set_project_field"], 50) + ceil(ops["add_dependency"], 50) + labels
pages = lambda k: max(1, -(-k // 100))
print("cold plan before the first apply, %d new items among %d issues: %d requests in %.1f s;"
      " floor %d (every issue page, proving absence; the board; viewer)"
      % (ops["create_issue"], unrelated, len(plan_reqs), plan_wall / 1000, pages(unrelated) + 1 + 1))
print("re-plan after it, %d managed: %d requests in %.1f s; bound ceil(M/100) + ceil(board/100) + 5 = %d"
      % (ops["create_issue"], len(replan_reqs), replan_wall / 1000,
         pages(ops["create_issue"]) + pages(ops["add_to_project"]) + 5))
print("first apply of %d new items: %d changesets (%s)" % (N, sum(ops.values()),
      ", ".join("%d %s" % (v, k) for k, v in sorted(ops.items()))))
print("  %-34s %8s %8s" % ("", "measured", "floor"))
print("  %-34s %8d %8d" % ("createIssue (labels, parent, board, type)", creates, N))
print("  %-34s %8d %8d" % ("field batches (50 a request)", fields, ceil(ops["set_project_field"], 50)))
print("  %-34s %8d %8d" % ("edge batches (50 a request)", edges, ceil(ops["add_dependency"], 50)))
print("  %-34s %8d %8d" % ("labels created (once each)", labels, labels))
print("  %-34s %8d %8d" % ("separate set_parent / add_to_project", parents + items, 0))
print("  %-34s %8d %8d" % ("content-creating requests in all", writes, floor))
print("  %-34s %8.2f %8.2f" % ("writes per new item", writes / N, floor / N))
print("  %-34s %8.2f %8s" % ("writes per new item, batches aside", (creates + parents + items) / N, "1.00"))
print("  reads during the apply: %d; wall time %.1f s with pacing off; re-plan: %s" % (reads, wall / 1000, replan))
print("  at GitHub's 500 content-creating requests an hour: %.1f h (floor %.1f h)" % (writes / 500, floor / 500))
PY
