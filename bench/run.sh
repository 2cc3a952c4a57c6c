#!/usr/bin/env bash
# usage: bench/run.sh BIN
#
# Generates reports of 1,000, 10,000 and 100,000 items (JSON and YAML block)
# with bench/gen_report.py and prints, for `BIN validate FILE` and
# `BIN graph --format json FILE`, the user+sys CPU time and the peak RSS of
# the best of BENCH_REPEAT runs (default 3), one line per case, then
# `BIN validate` of 64 MiB of prose without a block. Figures only:
# nothing is asserted. BENCH_SIZES overrides the list of sizes.
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_init bench "$@"
repeat=${BENCH_REPEAT:-3}
read -r -a sizes <<<"${BENCH_SIZES:-1000 10000 100000}"


# One line: the run with the least user+sys CPU of `repeat` runs.
measure() {
	local label=$1 file=$2
	shift 2
	local best="" i line u s m cpu status
	for ((i = 0; i < repeat; i++)); do
		status=0
		"$rusage" -o "$tmp/time" -f '%U %S %M' "$@" >/dev/null 2>"$tmp/stderr" || status=$?
		# One line, whatever the exit status (bench/rusage.c).
		line=$(tail -n 1 "$tmp/time")
		read -r u s m <<<"$line"
		cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%d", (u + s) * 1000 + 0.5 }')
		if [ -z "$best" ] || [ "$cpu" -lt "${best%% *}" ]; then
			best="$cpu $u $s $m $status"
		fi
	done
	read -r cpu u s m status <<<"$best"
	printf '%-50s %9s %8d ms  (user %6ss sys %6ss)  peak RSS %8d KiB  exit %d\n' \
		"$label" "$(stat -c %s "$file")" "$cpu" "$u" "$s" "$m" "$status"
}

printf '%-50s %9s %11s\n' "case" "bytes" "user+sys"
for n in "${sizes[@]}"; do
	for fmt in json yaml; do
		file="$tmp/report-$n-$fmt.md"
		if [ "$fmt" = yaml ]; then
			python3 "$here/gen_report.py" --yaml -o "$file" "$n"
		else
			python3 "$here/gen_report.py" -o "$file" "$n"
		fi
		measure "validate $fmt n=$n" "$file" "$bin" validate "$file"
		measure "graph --format json $fmt n=$n" "$file" "$bin" graph --format json "$file"
	done
done

# The issue's hostile bound: Markdown prose without a block, 64 MiB (the
# largest file read), plain and emphasis-heavy (cmark's costliest nodes),
# and emphasis-heavy with a fence at its end, since nothing after a file's
# last fence is parsed: as one paragraph, one list, one block quote and one
# list item (each read in pieces; one piece of it was 12 GB); and as link
# definitions without a blank line, at the top level and in a block quote,
# and text after a definition that fails or whose title is left open (a
# paragraph opening with '['). BENCH_PROSE=0 skips it.
if [ "${BENCH_PROSE:-1}" != 0 ]; then
	for kind in plain emphasis emphasis-fence-last list-fence-last quote-fence-last \
		item-fence-last definitions-fence-last quoted-definitions-fence-last \
		failed-definition-fence-last open-title-fence-last; do
		file="$tmp/prose-$kind.md"
		python3 - "$file" "$kind" <<'PY'
import sys
path, kind = sys.argv[1], sys.argv[2]
first = {"item": "- item\n", "failed": "[a]:\n",
         "open": "[a]: /u \"t\n"}.get(kind.split("-")[0], "")
if kind == "plain":
    unit = ("Lorem ipsum dolor sit amet, *consectetur* adipiscing elit, sed do "
            "[eiusmod](http://x) tempor incididunt ut labore @someone #12.\n\n")
elif kind.startswith("definitions"):
    unit = "[a]: /u\n"
elif kind.startswith("quoted"):
    unit = "> [a]: /u\n"
elif kind.startswith("failed") or kind.startswith("open"):
    unit = "(" + "*a* " * 20 + ")\n"
else:
    unit = {"list": "- ", "quote": "> ", "item": "  "}.get(kind.split("-")[0], "") + \
        "*a* " * 20 + "\n"
with open(path, "w") as f:
    f.write(first)
    # Room for the first line and the fence: at most 64 MiB in all.
    f.write(unit * ((64 * 1024 * 1024 - 16) // len(unit)))
    if kind.endswith("fence-last"):
        f.write("```\n")
PY
		measure "validate prose $kind 64MiB" "$file" "$bin" validate "$file"
	done
fi
