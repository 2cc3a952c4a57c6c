#!/usr/bin/env bash
# usage: bench/github_bench.sh BIN
#
# `pm-bot plan --backend github` on a repository of 10,000 issues in the
# loopback emulator (tests/github-emu), then aliased GraphQL field updates.
# Figures only: nothing is asserted beyond the run working at all.
#
# The world: bench/gen_report.py writes a report of BENCH_ITEMS (1,000) work
# items; BIN plans it against an empty state and bench/gen_state.py applies
# that plan as pm-bot would (issues with parents, dependency edges, board
# items with values); bench/gen_github_seed.py puts BENCH_UNRELATED (9,000)
# unrelated issues in front and writes the emulator seed. A file-backend plan
# of the unchanged report against the seed's state must propose nothing (the
# seed is what pm-bot would have left). The committed report then has
# BENCH_DIFFER (5) items changed: every second one a new title, the others a
# new priority (body, labels and the board's Priority field change).
#
# Printed:
#   0. emulator start-up: an empty world and this seed, best of BENCH_REPEAT,
#      to the port file appearing (polled every 10 ms), and its resident size;
#   1. (a) cold plan (empty ETag cache) and (b) warm re-plan (the cache the
#      last cold run left), BENCH_REPEAT runs each: wall time, pm-bot's and the
#      emulator's CPU time, requests by kind from pm-bot's stats line and from
#      the emulator's log (/_emu/requests), and the floor the API allows;
#   2. BENCH_VALUES (500) text values set on the board through
#      gql_alias_bench with 1, 10, 25 and 50 mutations per request
#      (BENCH_BATCHES), pacing off, best wall time of BENCH_REPEAT, plus one
#      real run at the client's default 1 s pacing with the largest batch
#      (the first apply itself: bench/github_apply_bench.sh).
#
# The floor for the read (part 1), from the seed: pm-bot needs the issues it
# manages (M, those with its marker), the board's items with their values,
# and each managed issue's blockers, which ride on the issue pages
# (blockedBy(first: 50)).
#   issues:  GitHub pages GraphQL connections at 100 at most, so ceil(M / 100)
#            requests at best; pm-bot asks for the issues its own login
#            created (filterBy: {createdBy}), which here also returns the
#            unrelated issues github-actions[bot] opened, so it reads
#            ceil(created / 100) pages;
#   board:   items(first: 100): ceil(items / 100) requests, the fields riding
#            on the first page (an organization's board; a user's costs one
#            more request, the organization being asked first);
#   viewer:  one request to learn its own login.
# Issue 13's bound is ceil(M / 100) + ceil(items / 100) + 5. Warm, the count
# is the same: GraphQL is POST and never conditional.
#
# The gql_alias_bench program is found next to BIN (DIR/bench/gql_alias_bench,
# the Makefile's target) or as $GQL_ALIAS_BENCH; else it is compiled into the
# temporary directory from bench/gql_alias_bench.c and DIR/libpmbot.a.
# BENCH_KEEP=1 keeps the temporary directory (seed, reports, plans, logs).
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
bench_rusage
repeat=${BENCH_REPEAT:-3}
n_items=${BENCH_ITEMS:-1000}
n_unrelated=${BENCH_UNRELATED:-9000}
n_differ=${BENCH_DIFFER:-5}
n_values=${BENCH_VALUES:-500}
read -r -a batches <<<"${BENCH_BATCHES:-1 10 25 50}"
token=ghp_benchTOKEN0000000000000000000000

for tool in node python3 curl; do
	command -v "$tool" >/dev/null || { echo "$0: $tool is not installed" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pmbot-github-bench.XXXXXX")
emu=$tmp/emu
probe_pid=
cleanup() {
	[ -n "$probe_pid" ] && kill "$probe_pid" 2>/dev/null
	"$root/scripts/emu.sh" stop "$emu" >/dev/null 2>&1 || true
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		echo "kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export PMBOT_NOW=${PMBOT_NOW:-2026-11-22T12:00:00Z}
unset GITHUB_TOKEN PMBOT_VERBOSE GITHUB_REPOSITORY
repo=$tmp/repo
die() {
	echo "$0: $*" >&2
	exit 1
}
ms() { echo $(($(date +%s%N) / 1000000)); }
# CPU time (user + system) of a process so far, in ms.
cpu_ms() { awk -v t="$(getconf CLK_TCK)" '{ printf "%d", ($14 + $15) * 1000 / t }' "/proc/$1/stat"; }

# ---- the world ---------------------------------------------------------------

bench_repo "$n_items"

t0=$(ms)
python3 "$here/gen_state.py" -o "$tmp/empty.json"
"$bin" plan --repo "$repo" --state "$tmp/empty.json" --format json --out "$tmp/create.json" \
	>/dev/null 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; die "planning against the empty state failed"; }
python3 "$here/gen_state.py" --base "$tmp/empty.json" --plan "$tmp/create.json" -o "$tmp/pmbot.json"
python3 "$here/gen_github_seed.py" --base "$tmp/pmbot.json" --token "$token" \
	--unrelated "$n_unrelated" --state-out "$tmp/state.json" -o "$tmp/seed.json"
t_seed=$(($(ms) - t0))
"$bin" plan --repo "$repo" --state "$tmp/state.json" --format json --out "$tmp/same.json" \
	>/dev/null 2>&1 || true
[ "$(count "$tmp/same.json")" -eq 0 ] || die "the seed does not match the report: $(count "$tmp/same.json") changes"

# The few differences, then what the file backend plans for them.
python3 -B - "$here" "$n_items" "$n_differ" "$repo/plans/bench.md" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import gen_report
n, k, out = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
doc = gen_report.build(n)
items = [x for key in ("epics", "features", "tasks") for x in doc.get(key, [])]
for j in range(min(k, len(items))):
    it = items[(2 * j + 1) * len(items) // (2 * k)]
    if j % 2 == 0:
        it["title"] += " (revised)"
    else:
        it["priority"] = gen_report.NEXT_PRIORITY[it["priority"]]
with open(out, "w", encoding="utf-8", newline="\n") as f:
    f.write(gen_report.render(doc, False))
PY
g commit -qam "bench: $n_differ items differ"
"$bin" plan --repo "$repo" --state "$tmp/state.json" --format json --out "$tmp/file-plan.json" \
	>/dev/null 2>&1 || true
want_changes=$(count "$tmp/file-plan.json")

# The floor, from the seed (see the comment at the top).
read -r n_issues n_board n_managed n_created n_edges <<<"$(python3 - "$tmp/state.json" <<'PY'
import json, re, sys
st = json.load(open(sys.argv[1]))
issues = [i for r in st["repositories"] for i in r["issues"]]
marker = re.compile(r"<!-- pm-bot:id=\S+ rev=[0-9a-f]{64} -->")
print(len(issues), len((st.get("project") or {}).get("items", [])),
      sum(1 for i in issues if marker.search(i.get("body") or "")),
      sum(1 for i in issues if i.get("author") == "github-actions[bot]"),
      sum(1 for i in issues if i.get("blocked_by")))
PY
)"
pages() { echo $((($1 + 99) / 100 > 0 ? ($1 + 99) / 100 : 1)); }
min_issue_pages=$(pages "$n_managed")
min_board_pages=$(pages "$n_board")
min_total=$((min_issue_pages + min_board_pages + 1))
bound=$((min_issue_pages + min_board_pages + 5))

printf 'world: %d issues (%d unrelated, %d managed by pm-bot; %d created by its login; %d with dependency edges), board %d items\n' \
	"$n_issues" "$n_unrelated" "$n_managed" "$n_created" "$n_edges" "$n_board"
printf 'seed: %d bytes, generated in %d ms (plan + gen_state.py + gen_github_seed.py)\n' \
	"$(stat -c %s "$tmp/seed.json")" "$t_seed"
printf 'report: %d items, %d differ; the file backend plans %d changesets for them\n' \
	"$n_items" "$n_differ" "$want_changes"
printf 'host: %s CPUs, load average %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 0. emulator start-up ----------------------------------------------------

# probe SEED: spawn the server, wait for its port file (10 ms polls), stop it;
# sets probe_ms (spawn to listening) and probe_rss (KiB resident then).
probe() {
	local pf=$tmp/probe.port t i
	local args=(--port-file "$pf")
	rm -f "$pf"
	[ "$1" != "-" ] && args+=(--seed "$1")
	t=$(ms)
	node "$root/tests/github-emu/server.js" "${args[@]}" >"$tmp/probe.log" 2>&1 </dev/null &
	probe_pid=$!
	for ((i = 0; i < 6000; i++)); do
		[ -s "$pf" ] && break
		kill -0 "$probe_pid" 2>/dev/null || { cat "$tmp/probe.log" >&2; die "the emulator exited"; }
		sleep 0.01
	done
	probe_ms=$(($(ms) - t))
	probe_rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$probe_pid/status")
	kill "$probe_pid"
	wait "$probe_pid" 2>/dev/null || true
	probe_pid=
}
# best_start SEED: the least probe_ms of `repeat` starts, in best_ms.
best_start() {
	local i
	best_ms=
	for ((i = 0; i < repeat; i++)); do
		probe "$1"
		if [ -z "$best_ms" ] || [ "$probe_ms" -lt "$best_ms" ]; then best_ms=$probe_ms; fi
	done
}
best_start -
s_empty=$best_ms rss_empty=$probe_rss
best_start "$tmp/seed.json"
s_seed=$best_ms rss_seed=$probe_rss
printf '\n0. emulator start-up (best of %d, spawn to listening): empty world %d ms (%d MiB resident), this seed %d ms (%d MiB)\n' \
	"$repeat" "$s_empty" "$((rss_empty / 1024))" "$s_seed" "$((rss_seed / 1024))"

t0=$(ms)
url=$("$root/scripts/emu.sh" start "$tmp/seed.json" "$emu")
t_emu=$(($(ms) - t0))
emu_pid=$(cat "$emu/pid")
printf '   scripts/emu.sh start with the seed: %d ms (it polls every 100 ms)\n' "$t_emu"
export GITHUB_API_URL=$url GITHUB_GRAPHQL_URL=$url/graphql GH_TOKEN=$token
# The emulator here enforces no secondary limits, and these figures count
# requests and time, not GitHub's pacing: no pace, no write budget.
export PMBOT_GITHUB_PACE_MS=0 PMBOT_GITHUB_STATS=1 PMBOT_GITHUB_WRITE_BUDGET=off

ctl() {
	if [ $# -ge 3 ]; then
		curl -sf -X "$1" -H 'content-type: application/json' --data-binary "$3" "$url$2"
	else
		curl -sf -X "$1" "$url$2"
	fi
}

# ---- 1. plan: cold and warm --------------------------------------------------

printf '\n1. plan --backend github, %d managed among %d issues; floor: %d issue pages + %d board pages + 1 viewer = %d requests (GraphQL, no REST); bound ceil(M/100) + ceil(items/100) + 5 = %d; before issue 13: 410\n' \
	"$n_managed" "$n_issues" "$min_issue_pages" "$min_board_pages" "$min_total" "$bound"
printf '   %-8s %7s %10s %8s %9s | %-24s | %-24s | %s\n' "run" "wall ms" "pm-bot CPU" "emu CPU" \
	"RSS KiB" "stats: req  GQL REST 304" "log:   req  GQL REST 304" "over floor"

# plan_run LABEL: one plan with the cache in $tmp/cache; prints one line.
plan_run() {
	local label=$1 status=0 before after wall u s m stats req gql rest nm changes
	local l_req l_gql l_rest l_nm l_viewer
	ctl DELETE /_emu/requests >/dev/null
	before=$(cpu_ms "$emu_pid")
	"$rusage" -o "$tmp/time" -f '%e %U %S %M' \
		env PMBOT_GITHUB_CACHE_DIR="$tmp/cache" "$bin" plan --repo "$repo" --backend github \
		--format json --out "$tmp/gh-plan.json" >/dev/null 2>"$tmp/stderr" || status=$?
	after=$(cpu_ms "$emu_pid")
	if [ "$status" -ne 0 ]; then
		cat "$tmp/stderr" >&2
		die "$label: plan exited with $status"
	fi
	changes=$(count "$tmp/gh-plan.json")
	[ "$changes" -eq "$want_changes" ] ||
		die "$label: the GitHub backend planned $changes changesets, the file backend $want_changes"
	read -r wall u s m <<<"$(tail -n 1 "$tmp/time")"
	stats=$(grep -o '[0-9]* requests ([0-9]* REST, [0-9]* GraphQL, [0-9]* writes, [0-9]* not modified' \
		"$tmp/stderr" | tail -n 1)
	read -r req rest gql nm <<<"$(echo "$stats" | sed -E 's/^([0-9]+) requests \(([0-9]+) REST, ([0-9]+) GraphQL, [0-9]+ writes, ([0-9]+) not modified/\1 \2 \3 \4/')"
	read -r l_req l_gql l_rest l_nm l_viewer <<<"$(ctl GET /_emu/requests | python3 -c '
import json, sys
r = json.load(sys.stdin)["requests"]
print(len(r), sum(x["kind"] == "graphql" for x in r), sum(x["kind"] == "rest" for x in r),
      sum(bool(x["not_modified"]) for x in r),
      sum(x["kind"] == "graphql" and "viewer" in x["operation"].split(" ")[-1].split(",") for x in r))')"
	printf '   %-8s %7d %10d %8d %9d | %10s %4s %4s %4s | %10s %4s %4s %4s | %+d (%d viewer)\n' \
		"$label" "$(awk -v w="$wall" 'BEGIN { printf "%d", w * 1000 }')" \
		"$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%d", (u + s) * 1000 }')" \
		"$((after - before))" "$m" "${req:-?}" "${gql:-?}" "${rest:-?}" "${nm:-?}" \
		"$l_req" "$l_gql" "$l_rest" "$l_nm" "$((l_req - min_total))" "$l_viewer"
}

for ((i = 1; i <= repeat; i++)); do
	rm -rf "$tmp/cache"
	plan_run "cold $i"
done
for ((i = 1; i <= repeat; i++)); do
	plan_run "warm $i"
done
printf '   (the filter returns the %d issues its login created, %d pages; the floor counts the %d managed).\n' \
	"$n_created" "$(pages "$n_created")" "$n_managed"
printf '   Every run planned %d changesets, as the file backend; ETag cache %s.\n' \
	"$want_changes" "$( (du -sh "$tmp/cache" 2>/dev/null || echo 'none (no REST reads)') | cut -f1)"

# ---- 2. aliased field updates ------------------------------------------------

alias_bin=${GQL_ALIAS_BENCH:-$(dirname "$bin")/bench/gql_alias_bench}
if [ ! -x "$alias_bin" ]; then
	lib=$(dirname "$bin")/libpmbot.a
	[ -f "$lib" ] || die "no $alias_bin and no $lib to build it from"
	pkgs=(libgit2 libcurl jansson yaml-0.1 libcmark-gfm libcrypto)
	alias_bin=$tmp/gql_alias_bench
	# shellcheck disable=SC2046  # pkg-config prints several words on purpose
	(cd "$root" && ${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O2 -Iinclude \
		-Wall -Wextra -Werror $(pkg-config --cflags "${pkgs[@]}") \
		-o "$alias_bin" bench/gql_alias_bench.c "$lib" $(pkg-config --libs "${pkgs[@]}") \
		-lcmark-gfm-extensions -lm) || die "cannot build gql_alias_bench"
fi

# Back to the seed (fresh rate budgets too) before writing.
ctl POST /_emu/reset "@$tmp/seed.json" >/dev/null
printf '\n2. %d text values (field Risk) on board acme/1, GraphQL updateProjectV2ItemFieldValue, best of %d, pacing off\n' \
	"$n_values" "$repeat"
printf '   %-6s %8s %16s %8s %10s %15s %18s\n' "batch" "requests" "content-creating" "wall ms" \
	"ms/value" "at 1 s pacing" "secondary points"

# alias_run BATCH TAG PACE: one run; sets $line; checks every value landed.
alias_run() {
	local landed
	ctl DELETE /_emu/requests >/dev/null
	line=$("$alias_bin" -n "$n_values" -b "$1" -t "$2" -P "$3" acme 1) || die "gql_alias_bench -b $1 failed"
	landed=$(ctl GET /_emu/state | python3 -c '
import json, sys
tag = sys.argv[1] + "-"
items = json.load(sys.stdin)["state"]["project"]["items"]
print(sum(1 for it in items if str(it["values"].get("Risk", "")).startswith(tag)))' "$2")
	[ "$landed" -eq "$n_values" ] || die "batch $1: $landed of $n_values values landed"
	content=$(ctl GET /_emu/requests | python3 -c '
import json, sys
print(json.load(sys.stdin)["content_creating"])')
}
kv() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

for b in "${batches[@]}"; do
	best=
	for ((i = 1; i <= repeat; i++)); do
		alias_run "$b" "b$b-r$i" 0
		w=$(kv wall_ms)
		if [ -z "$best" ] || [ "$w" -lt "$(echo "$best" | tr ' ' '\n' | sed -n 's/^wall_ms=//p')" ]; then
			best=$line
			best_content=$content
		fi
	done
	line=$best
	printf '   %-6s %8s %16s %8s %10s %13ss %18s\n' "$b" "$(kv requests)" "$best_content" "$(kv wall_ms)" \
		"$(kv ms_per_value)" "$(kv paced_s)" "$(($(kv requests) * 5))"
done
big=${batches[${#batches[@]} - 1]}
alias_run "$big" "paced-b$big" 1000
printf '   batch %s at the default 1 s pacing, measured: %d requests in %.1f s (%s ms of it pacing)\n' \
	"$big" "$(kv requests)" "$(awk -v w="$(kv wall_ms)" 'BEGIN { print w / 1000 }')" "$(kv waited_ms)"

# The first apply itself (createIssue with everything on it, fields and
# edges in batches) is measured by bench/github_apply_bench.sh.
printf '   the first apply of a report, with these batches: bench/github_apply_bench.sh\n'
