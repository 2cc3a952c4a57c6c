#!/usr/bin/env python3
"""Run a command and write its CPU time, wall time and peak RSS, like GNU time.

usage: rusage.py -o FILE -f FORMAT COMMAND [ARG]...

FORMAT takes GNU time's %U (user seconds), %S (system seconds), %e (wall
seconds) and %M (peak RSS, KiB); the line goes to FILE. Unlike GNU time,
which truncates %U and %S to hundredths, seconds are written to the
microsecond: a 28 ms run must not read as 20. The command's standard
streams are its own and its exit status is this script's.
"""

import os
import resource
import subprocess
import sys
import time


def main():
    args = sys.argv[1:]
    if len(args) < 5 or args[0] != "-o" or args[2] != "-f":
        sys.exit(__doc__)
    out, fmt, cmd = args[1], args[3], args[4:]
    start = time.monotonic()
    pid = subprocess.Popen(cmd).pid
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - start
    fields = {
        "U": f"{usage.ru_utime:.6f}",
        "S": f"{usage.ru_stime:.6f}",
        "e": f"{wall:.6f}",
        "M": str(usage.ru_maxrss),
    }
    line, i = "", 0
    while i < len(fmt):
        if fmt[i] == "%" and i + 1 < len(fmt) and fmt[i + 1] in fields:
            line += fields[fmt[i + 1]]
            i += 2
        else:
            line += fmt[i]
            i += 1
    with open(out, "w", encoding="ascii") as f:
        f.write(line + "\n")
    sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main()
