#!/usr/bin/env bash
# usage: bench/plan_bench.sh BIN
#
# `pm-bot plan` on 10,000 work items against a state of 10,000 issues that
# all match them, with half of the items changed. In a temporary git
# repository: bench/gen_report.py writes the report, `BIN plan` plans it
# against an empty state holding the project, bench/gen_state.py applies
# that whole plan in one pass (the same bytes as `pm-bot apply` with the
# file backend, without rewriting the state file once per changeset), and a
# plan of the unchanged report must then propose nothing. A second commit
# moves the priority of every second item (gen_report.py --change-half:
# body, labels and the Priority field change), and the script prints, for
# each timed command (the whole plan against the empty state, in JSON and
# Markdown; nothing changed; half changed), the user+sys CPU time and peak
# RSS of the best of BENCH_REPEAT runs (default 3). Figures only: the target (under 1 s and
# 256 MB) is not asserted. BENCH_N overrides the number of items.
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init plan-bench "$@"
repeat=${BENCH_REPEAT:-3}
n=${BENCH_N:-10000}

repo=$tmp/repo


# One line: the run with the least user+sys CPU of `repeat` runs. A failing
# command (exit status other than 0 or 3, "changes pending") stops the script.
measure() {
	local label=$1
	shift
	local best="" i line u s m cpu status
	for ((i = 0; i < repeat; i++)); do
		status=0
		"$rusage" -o "$tmp/time" -f '%U %S %M' "$@" >/dev/null 2>"$tmp/stderr" || status=$?
		if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then
			echo "$0: $label: exit status $status" >&2
			cat "$tmp/stderr" >&2
			exit 1
		fi
		line=$(tail -n 1 "$tmp/time")
		read -r u s m <<<"$line"
		cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%d", (u + s) * 1000 + 0.5 }')
		if [ -z "$best" ] || [ "$cpu" -lt "${best%% *}" ]; then
			best="$cpu $u $s $m"
		fi
	done
	read -r cpu u s m <<<"$best"
	printf '%-44s %8d ms  (user %6ss sys %6ss)  peak RSS %8d KiB\n' "$label" "$cpu" "$u" "$s" "$m"
}

bench_repo "$n"

python3 "$here/gen_state.py" -o "$tmp/empty.json"
status=0
"$bin" plan --repo "$repo" --state "$tmp/empty.json" --format json --out "$tmp/create.json" \
	>/dev/null 2>"$tmp/stderr" || status=$?
if [ "$status" -ne 0 ]; then
	echo "$0: planning against the empty state failed ($status)" >&2
	cat "$tmp/stderr" >&2
	exit 1
fi
python3 "$here/gen_state.py" --base "$tmp/empty.json" --plan "$tmp/create.json" -o "$tmp/state.json"
"$bin" plan --repo "$repo" --state "$tmp/state.json" --format json --out "$tmp/same.json" \
	>/dev/null 2>"$tmp/stderr" || true
same=$(count "$tmp/same.json")
if [ "$same" -ne 0 ]; then
	echo "$0: the generated state does not match the report: $same changes" >&2
	exit 1
fi
issues=$(python3 -c 'import json, sys; print(sum(len(r["issues"]) for r in json.load(open(sys.argv[1]))["repositories"]))' "$tmp/state.json")

printf 'items %d, report %d bytes; state %d issues, %d bytes (built from %d changesets)\n' \
	"$n" "$(stat -c %s "$repo/plans/bench.md")" "$issues" "$(stat -c %s "$tmp/state.json")" \
	"$(count "$tmp/create.json")"
measure "plan against the empty state (--format json)" "$bin" plan --repo "$repo" \
	--state "$tmp/empty.json" --format json
measure "plan against the empty state (md)" "$bin" plan --repo "$repo" --state "$tmp/empty.json"
measure "plan, nothing changed (md)" "$bin" plan --repo "$repo" --state "$tmp/state.json"

python3 "$here/gen_report.py" --change-half -o "$repo/plans/bench.md" "$n"
g commit -qam "bench: change half of the priorities"
"$bin" plan --repo "$repo" --state "$tmp/state.json" --format json --out "$tmp/half.json" \
	>/dev/null 2>&1 || true
printf 'half changed: %d changesets, bundle %d bytes\n' "$(count "$tmp/half.json")" \
	"$(stat -c %s "$tmp/half.json")"
measure "plan, half changed (md + --out json)" "$bin" plan --repo "$repo" --state "$tmp/state.json" \
	--out "$tmp/plan.json"
measure "plan, half changed (--format json)" "$bin" plan --repo "$repo" --state "$tmp/state.json" \
	--format json
