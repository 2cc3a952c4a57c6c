#!/usr/bin/env python3
"""Time the Python pm-bot's ReportIR intake on a report, for bench/goals.sh.

usage: py_ref.py MODULE REPORT MODE [REPEAT]

MODULE is the Python pm-bot's pm_bot/control_plane/models/report_ir_intake.py
(github.com/phys-sims/pm-bot; it needs only the standard library, so it is
loaded from its path and nothing of it is copied here). REPORT is a Markdown
report with one fenced pm-bot:report-ir/v1 JSON block. MODE is "validate"
(json.loads + validate_report_ir) or "preview" (json.loads +
validate_report_ir + build_changeset_preview). Prints the best CPU time of
REPEAT calls in milliseconds and what the calls returned. The interpreter's
start and the file read are left out, which favours the Python side.
"""

import importlib.util
import json
import re
import sys
import time

sys.dont_write_bytecode = True


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[3] not in ("validate", "preview"):
        sys.exit(__doc__)
    spec = importlib.util.spec_from_file_location("report_ir_intake", sys.argv[1])
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    text = open(sys.argv[2], encoding="utf-8").read()
    match = re.search(r"^```pm-bot:report-ir/v1\n(.*?)^```$", text, re.S | re.M)
    if not match:
        sys.exit(f"{sys.argv[2]}: no pm-bot:report-ir/v1 block")
    block = match.group(1)
    repeat = int(sys.argv[4]) if len(sys.argv) == 5 else 3
    best = None
    for _ in range(repeat):
        start = time.process_time()
        ir = json.loads(block)
        result = ref.validate_report_ir(ir)
        if sys.argv[3] == "preview":
            preview = ref.build_changeset_preview(ir)
        spent = time.process_time() - start
        best = spent if best is None else min(best, spent)
    what = f"{len(result['errors'])} errors"
    if sys.argv[3] == "preview":
        what += f", {len(preview['items'])} preview items"
    print(f"{best * 1000:.0f} {what}")


if __name__ == "__main__":
    main()
