#!/usr/bin/env bash
# Every C source includes "pmbot/banned.h" as its last #include, after the
# system headers, and no header includes it: defined before a system
# header, its macros would rewrite the C library's declarations (and break
# the build under _FORTIFY_SOURCE). Prints each offender; exit 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."

bad=0
while IFS= read -r f; do
	last=$(grep -E '^[[:space:]]*#[[:space:]]*include' "$f" | tail -n 1 || true)
	if [ "$last" != '#include "pmbot/banned.h"' ]; then
		echo "$f: the last #include must be \"pmbot/banned.h\" (found: ${last:-none})" >&2
		bad=1
	fi
done < <(git ls-files -co --exclude-standard -- 'src/*.c' 'cmd/*.c' 'tests/unit/*.c' 'fuzz/*.c' 'bench/*.c')
while IFS= read -r h; do
	if grep -qE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"pmbot/banned\.h"' "$h"; then
		echo "$h: a header must not include \"pmbot/banned.h\" (the .c file does, last)" >&2
		bad=1
	fi
done < <(git ls-files -co --exclude-standard -- '*.h' | grep -v '^include/pmbot/banned\.h$' | grep -v node_modules)
exit "$bad"
