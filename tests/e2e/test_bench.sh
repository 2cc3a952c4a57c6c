#!/usr/bin/env bash
# End to end: the bench scripts still run, on a few items. They print
# figures only and are run by hand (`make bench-goals` and the others), so
# nothing else would notice one broken by a change to a command, an output
# or a bench program. Their figures are not checked here, only that they
# ran through and printed every row; nothing is timed.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
ROOT=$PWD
export BENCH_N=30 BENCH_REPEAT=1 BENCH_SIZES=20 BENCH_PROSE=0
unset PMBOT_PY_REF PMBOT_TEST_KILL_AFTER

CASE="bench/goals.sh prints every goal's row, and no ratio without the Python figure"
if run 0 bash "$ROOT/bench/goals.sh" "$PMBOT"; then
	expect_in "$OUT" "30 items, report" &&
		expect_in "$OUT" "validate " &&
		expect_in "$OUT" "plan, empty state (--format json)" &&
		expect_in "$OUT" "plan, nothing to do" &&
		expect_in "$OUT" "apply, empty-state plan (file backend)" &&
		expect_in "$OUT" "KiB an item" &&
		expect_eq "$(grep -c 'the same in-process' <<<"$OUT")" 2 &&
		expect_not_in "$OUT" "0.0x" && ok
fi

# A stand-in for the Python pm-bot's module that spends 40 ms of CPU a
# call: the Python column, its ratios and the CPUs taken in turn, with no
# checkout of the real one.
cat >"$TMP/report_ir_intake.py" <<'PY'
import time


def _spend():
    start = time.process_time()
    while time.process_time() - start < 0.04:
        pass


def validate_report_ir(ir):
    _spend()
    return {"errors": []}


def build_changeset_preview(ir):
    return {"items": ir.get("tasks", [])}
PY
CASE="bench/goals.sh with PMBOT_PY_REF prints the Python figures and the ratios"
if PMBOT_PY_REF=$TMP/report_ir_intake.py run 0 bash "$ROOT/bench/goals.sh" "$PMBOT"; then
	py_row=$(grep -m 1 '^validate ' <<<"$OUT")
	expect_in "$OUT" "best of 1 on " &&
		expect_eq "$(awk '{ print ($4 >= 40) }' <<<"$py_row")" 1 &&
		expect_eq "$(grep -cE '^(validate|plan, empty state).* [0-9]+\.[0-9]x ' <<<"$OUT")" 2 &&
		expect_eq "$(grep -c 'the same in-process.*[0-9]x' <<<"$OUT")" 2 && ok
fi

CASE="bench/apply_bench.sh leaves the state bench/gen_state.py makes"
run 0 bash "$ROOT/bench/apply_bench.sh" "$PMBOT" &&
	expect_in "$OUT" "the bytes bench/gen_state.py makes" &&
	expect_in "$OUT" "failed 0, pending 0" && ok

CASE="bench/plan_bench.sh and bench/run.sh print their rows"
run 0 bash "$ROOT/bench/plan_bench.sh" "$PMBOT" &&
	expect_in "$OUT" "plan, nothing changed" &&
	run 0 bash "$ROOT/bench/run.sh" "$PMBOT" &&
	expect_in "$OUT" "validate yaml n=20" && ok

finish
