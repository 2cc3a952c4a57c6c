#!/usr/bin/env bash
# usage: bench/apply_bench.sh BIN
#
# `pm-bot apply` with the file backend of the whole plan of 10,000 work
# items against an empty state (about 30,000 changesets). In a temporary git
# repository: bench/gen_report.py writes the report, `BIN plan` plans it
# against the empty state of bench/gen_state.py (as bench/plan_bench.sh
# does), and each of BENCH_REPEAT runs (default 3) applies that plan to a
# fresh copy of the empty state with its own audit ledger. The script prints
# the number of changesets and, for the run with the least user+sys CPU,
# user+sys, wall time and peak RSS; then the size of the state file, whether
# its bytes equal bench/gen_state.py's (what an apply must leave) and are the
# same in every run, and the ledger's length. Figures only: the target
# (at most 10 s) is not asserted. BENCH_N overrides the number of items.
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init apply-bench "$@"
repeat=${BENCH_REPEAT:-3}
n=${BENCH_N:-10000}

unset PMBOT_TEST_KILL_AFTER
repo=$tmp/repo

bench_repo "$n"

python3 "$here/gen_state.py" -o "$tmp/empty.json"
status=0
"$bin" plan --repo "$repo" --state "$tmp/empty.json" --format json --out "$tmp/plan.json" \
	>/dev/null 2>"$tmp/stderr" || status=$?
if [ "$status" -ne 0 ]; then
	echo "$0: planning against the empty state failed ($status)" >&2
	cat "$tmp/stderr" >&2
	exit 1
fi
hash=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["plan_hash"])' "$tmp/plan.json")
python3 "$here/gen_state.py" --base "$tmp/empty.json" --plan "$tmp/plan.json" -o "$tmp/want.json"
printf 'items %d, report %d bytes; plan %d changesets, %d bytes\n' "$n" \
	"$(stat -c %s "$repo/plans/bench.md")" "$(count "$tmp/plan.json")" "$(stat -c %s "$tmp/plan.json")"

best=""
for ((i = 0; i < repeat; i++)); do
	cp "$tmp/empty.json" "$tmp/state.json"
	rm -f "$tmp/audit.jsonl"
	status=0
	"$rusage" -o "$tmp/time" -f '%U %S %e %M' "$bin" apply --repo "$repo" --state "$tmp/state.json" \
		--plan "$tmp/plan.json" --approve "$hash" --audit "$tmp/audit.jsonl" \
		>"$tmp/stdout" 2>"$tmp/stderr" || status=$?
	if [ "$status" -ne 0 ]; then
		echo "$0: apply: exit status $status" >&2
		tail -n 5 "$tmp/stderr" >&2
		exit 1
	fi
	read -r u s e m <<<"$(tail -n 1 "$tmp/time")"
	cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%d", (u + s) * 1000 + 0.5 }')
	if [ -z "$best" ] || [ "$cpu" -lt "${best%% *}" ]; then
		best="$cpu $u $s $e $m"
	fi
	sha=$(sha256sum <"$tmp/state.json")
	if [ "$i" -eq 0 ]; then
		first=$sha
	elif [ "$sha" != "$first" ]; then
		echo "$0: run $((i + 1)) left a state file with other bytes than run 1" >&2
		exit 1
	fi
done
read -r cpu u s e m <<<"$best"
printf '%-44s %8d ms  (user %6ss sys %6ss)  wall %6ss  peak RSS %8d KiB\n' \
	"apply, $(count "$tmp/plan.json") changesets (file backend)" "$cpu" "$u" "$s" "$e" "$m"
tail -n 1 "$tmp/stdout"
if cmp -s "$tmp/state.json" "$tmp/want.json"; then same="the bytes bench/gen_state.py makes"; else same="NOT the bytes bench/gen_state.py makes"; fi
printf 'state %d bytes, %s, identical in %d runs; ledger %d lines\n' \
	"$(stat -c %s "$tmp/state.json")" "$same" "$repeat" "$(wc -l <"$tmp/audit.jsonl")"
