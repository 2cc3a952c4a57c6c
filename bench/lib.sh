# shellcheck shell=bash disable=SC2034,SC2154  # bin, repo: set here for, or by, the sourcing script
# Sourced by the bench scripts after `set -euo pipefail`, so that the
# set-up they share is written once.
#
# bench_rusage: sets rusage, the timer built beside BIN (bench/rusage.c).
bench_rusage() {
	rusage=$(dirname "$bin")/bench/rusage
	if [ ! -x "$rusage" ]; then
		echo "$0: no $rusage: build it with make (the bench targets do)" >&2
		exit 2
	fi
}

# bench_init NAME ARGS...: the one argument is BIN; sets bin (absolute),
# here (bench/), root (the checkout), rusage (bench_rusage) and tmp (a fresh
# directory, removed on exit: a script that needs more clean-up sets its own
# EXIT trap after this and removes "$tmp" there), and pins git's
# configuration and pm-bot's clock (PMBOT_NOW) so that runs compare.
bench_init() {
	local name=$1
	shift
	if [ $# -ne 1 ]; then
		echo "usage: $0 BIN" >&2
		exit 2
	fi
	bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
	here=$(cd "$(dirname "$0")" && pwd)
	root=$(cd "$here/.." && pwd)
	bench_rusage
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/pmbot-$name.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
	export PMBOT_NOW=${PMBOT_NOW:-2026-11-22T12:00:00Z}
}

# git in "$repo", as the bench's committer.
g() { git -C "$repo" -c user.name=bench -c user.email=bench@example.com -c commit.gpgsign=false "$@"; }

# The number of changesets in a bundle file.
count() { python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["changesets"]))' "$1"; }

# bench_repo N [noproject]: a git repository at "$repo" whose one commit
# holds a report of N generated items (bench/gen_report.py) and a
# configuration for acme/widgets with the project acme/1, or without a
# project when the second argument is "noproject".
bench_repo() {
	local project='project: {owner: acme, number: 1}\n'
	[ "${2:-}" = noproject ] && project=
	git init -q -b main "$repo"
	mkdir -p "$repo/plans" "$repo/.github"
	# shellcheck disable=SC2059  # the format is ours: a project line or nothing
	printf "reports: [\"plans/**/*.md\"]\\nrepos: [acme/widgets]\\n$project" >"$repo/.github/pm-bot.yml"
	python3 "$here/gen_report.py" -o "$repo/plans/bench.md" "$1"
	g add -A && g commit -qm "bench: $1 items"
}
