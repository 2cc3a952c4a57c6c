#!/usr/bin/env bash
# Start and stop the loopback GitHub emulator (tests/github-emu, docs/emulator.md).
#
#   scripts/emu.sh start SEED DIR   start it in the background with SEED (a seed
#                                   JSON file, or "-" for an empty world); print
#                                   its base URL. DIR keeps pid, port and log.
#   scripts/emu.sh stop DIR         stop the emulator started with DIR.
#
# Installs the emulator's pinned dependencies with `npm ci` when its
# node_modules is missing. Exits non-zero if the emulator does not come up.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
EMU="$ROOT/tests/github-emu"
START_TIMEOUT=${EMU_START_TIMEOUT:-60}

die() {
	echo "emu.sh: $*" >&2
	exit 1
}

usage() {
	echo "usage: scripts/emu.sh start SEED DIR | scripts/emu.sh stop DIR" >&2
	exit 2
}

alive() {
	[ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null
}

start() {
	local seed=$1 dir=$2 pid i port
	command -v node >/dev/null || die "node is not installed"
	if [ "$seed" != "-" ]; then
		[ -f "$seed" ] || die "no seed file $seed"
		seed=$(cd "$(dirname "$seed")" && pwd)/$(basename "$seed")
	fi
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if [ -f "$dir/pid" ] && alive "$(cat "$dir/pid")"; then
		die "an emulator already runs for $dir (pid $(cat "$dir/pid"))"
	fi
	if [ ! -d "$EMU/node_modules" ]; then
		(cd "$EMU" && npm ci --no-audit --no-fund --loglevel=error >&2) || die "npm ci failed in $EMU"
	fi
	rm -f "$dir/port" "$dir/pid"
	local args=(--port-file "$dir/port")
	[ "$seed" != "-" ] && args+=(--seed "$seed")
	node "$EMU/server.js" "${args[@]}" >"$dir/emu.log" 2>&1 </dev/null &
	pid=$!
	echo "$pid" >"$dir/pid"
	# The port file appears, renamed into place whole, once the server listens.
	for ((i = 0; i < START_TIMEOUT * 10; i++)); do
		if [ -s "$dir/port" ]; then
			port=$(cat "$dir/port")
			echo "http://127.0.0.1:$port"
			return 0
		fi
		alive "$pid" || {
			cat "$dir/emu.log" >&2
			rm -f "$dir/pid"
			die "the emulator exited before listening"
		}
		sleep 0.1
	done
	kill "$pid" 2>/dev/null || true
	rm -f "$dir/pid"
	die "the emulator did not listen within ${START_TIMEOUT}s (log: $dir/emu.log)"
}

stop() {
	local dir=$1 pid i
	[ -f "$dir/pid" ] || return 0
	pid=$(cat "$dir/pid")
	if alive "$pid"; then
		kill "$pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			alive "$pid" || break
			sleep 0.1
		done
		alive "$pid" && kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$dir/pid" "$dir/port"
}

case "${1:-}" in
start)
	[ $# -eq 3 ] || usage
	start "$2" "$3"
	;;
stop)
	[ $# -eq 2 ] || usage
	stop "$2"
	;;
*)
	usage
	;;
esac
