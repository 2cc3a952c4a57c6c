#!/usr/bin/env bash
# `make check-distros`: build and test pm-bot where its users build it (issue 11).
#
#   host    this machine: a clang build and its unit tests
#           (make DEVELOPER=1 BUILD=build/clang CC=clang test-unit), next to the gcc
#           and sanitizer builds `make check` does;
#   trixie  a Debian 13 chroot: the hardened gcc build (make DEVELOPER=1), then
#           make check-normal (unit and end-to-end tests, the GitHub emulator included);
#   sid     a Debian unstable chroot: hardened gcc and clang builds, the unit tests
#           in each (no e2e: the emulator's npm packages are not Debian's).
#
# The chroots are made with debootstrap from the Debian mirror apt already uses on this
# machine (read from its sources at run time; PMBOT_DEBIAN_MIRROR overrides) and kept
# outside the clone, in $PMBOT_CHROOT_DIR (default /var/cache/pm-bot/chroots), so later
# runs only install what is missing (and upgrade at most once a day). A chroot is
# debootstrapped into a temporary directory and renamed into place when complete.
# The source tested is the working tree: tracked and untracked-not-ignored files.
#
# A chroot that cannot be made (no Debian mirror, debootstrap or apt failing, npm ci
# failing: an outside outage) is reported loudly and skipped; a build or test failure
# in one that exists fails the run. Needs root (or sudo without a password) for the
# chroots; without either they are skipped loudly.
#
# Environment:
#   PMBOT_CHROOT_DIR       where the chroots are kept   (/var/cache/pm-bot/chroots)
#   PMBOT_DISTROS          what to run                  ("host trixie sid")
#   PMBOT_DEBIAN_MIRROR    Debian archive to use        (apt's, from its sources)
#   PMBOT_DEBIAN_SECURITY_MIRROR  its security archive  (apt's, when found)
#   PMBOT_LOG_DIR          build logs                   (build/check-distros)
#   PMBOT_REFRESH_HOURS    upgrade a cached chroot when its last upgrade is older (24;
#                          0: every run; -1: never)
#   PMBOT_STEP_TIMEOUT     seconds allowed to one build or test step (1800)
#   JOBS                   make -j                      (2)
#
# Exit status: 0 when everything that ran passed (skips included), 1 when a build or a
# test failed, 2 on bad usage.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
SELF=$TOP/scripts/$(basename "$0")
cd "$TOP"

CHROOT_DIR=${PMBOT_CHROOT_DIR:-/var/cache/pm-bot/chroots}
DISTROS=${PMBOT_DISTROS:-host trixie sid}
LOG_DIR=${PMBOT_LOG_DIR:-$TOP/build/check-distros}
REFRESH_HOURS=${PMBOT_REFRESH_HOURS:-24}
STEP_TIMEOUT=${PMBOT_STEP_TIMEOUT:-1800}
SETUP_TIMEOUT=${PMBOT_SETUP_TIMEOUT:-1800}
JOBS=${JOBS:-2}
MARK=.pm-bot-chroot   # in a chroot's root: written last, before the rename
SRC_IN=/srv/pm-bot    # where the source goes inside a chroot
TAIL_LINES=${PMBOT_TAIL_LINES:-60}

# The make invoked here is not a sub-make of the one that may have started us:
# no jobserver, no command-line variables leaking in.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

for d in $DISTROS; do
	case $d in
	host | trixie | sid) ;;
	*)
		echo "check-distros: unknown distribution '$d' in PMBOT_DISTROS (host, trixie, sid)" >&2
		exit 2
		;;
	esac
done
case $REFRESH_HOURS in -1 | [0-9] | [0-9]*[0-9]) ;; *)
	echo "check-distros: PMBOT_REFRESH_HOURS must be a number of hours" >&2
	exit 2
	;;
esac

mkdir -p "$LOG_DIR"
LOG_DIR=$(cd "$LOG_DIR" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pm-bot-check-distros.XXXXXX")
# Results, one line per distribution: name, status, seconds, versions, what ran, note,
# separated by US (the ASCII unit separator: empty fields do not collapse as tabs do).
# Shared with the copy of this script run through sudo.
RESULTS=${PMBOT_RESULTS_FILE:-$WORK/results}
: >>"$RESULTS"

DIST_START=$(date +%s)
MOUNTS=()   # mounted by us, unmounted in reverse order on exit
CHILD=      # the step running now
CUR_CHROOT= # the chroot in use, for the process sweep
NEW_CHROOT= # a chroot being made, removed if we are stopped

say() { printf '%s\n' "$*"; }

# "   sid     42 s  what it does now": seconds since that distribution's start.
progress() { # name message
	printf '   %-7s %4s s  %s\n' "$1" "$(($(now) - DIST_START))" "$2"
}

now() { date +%s; }

cleanup() {
	local rc=$? i
	trap - EXIT INT TERM HUP
	if [ -n "$CHILD" ]; then
		# timeout(1) passes the signal on to its process group.
		kill -TERM "$CHILD" 2>/dev/null || true
		wait "$CHILD" 2>/dev/null || true
	fi
	[ -n "$CUR_CHROOT" ] && kill_chroot_procs "$CUR_CHROOT"
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null ||
			echo "check-distros: could not unmount ${MOUNTS[i]}" >&9
	done
	if [ -n "$NEW_CHROOT" ]; then
		kill_chroot_procs "$NEW_CHROOT"
		remove_tree "$NEW_CHROOT" || echo "check-distros: could not remove $NEW_CHROOT" >&9
	fi
	rm -rf "$WORK"
	exit "$rc"
}
# The traps may run while a step's output goes to its log: they write to fd 9.
exec 9>&2
trap cleanup EXIT
trap 'echo "check-distros: interrupted; unmounting and leaving" >&9; exit 130' INT
trap 'echo "check-distros: terminated; unmounting and leaving" >&9; exit 143' TERM HUP

# Runs "$@" in the background and waits for it, so that Ctrl-C and TERM reach the
# traps at once instead of after the step.
run() {
	local rc=0
	"$@" </dev/null &
	CHILD=$!
	wait "$CHILD" || rc=$?
	CHILD=
	return "$rc"
}

# Processes left running inside a chroot (a test's server, say) keep its mounts busy.
kill_chroot_procs() {
	local root=$1 p r pids=()
	for p in /proc/[0-9]*; do
		r=$(readlink "$p/root" 2>/dev/null) || continue
		[ "$r" = "$root" ] && pids+=("${p#/proc/}")
	done
	[ ${#pids[@]} -eq 0 ] && return 0
	kill -TERM "${pids[@]}" 2>/dev/null || true
	sleep 1
	kill -KILL "${pids[@]}" 2>/dev/null || true
}

record() { # name status seconds versions ran note
	printf '%s\037%s\037%s\037%s\037%s\037%s\n' "$1" "$2" "$3" "$4" "$5" "$6" >>"$RESULTS"
}

banner() { # stream-less: prints to stderr
	local line='################################################################################'
	{
		echo
		echo "$line"
		while [ $# -gt 0 ]; do
			echo "### $1"
			shift
		done
		echo "$line"
	} >&2
}

show_tail() { # log
	[ -s "$1" ] || return 0
	echo "----- last $TAIL_LINES lines of $1 -----" >&2
	tail -n "$TAIL_LINES" "$1" >&2
	echo "----- end of $1 -----" >&2
}

# ---------------------------------------------------------------------------
# Reading apt's own configuration: the Debian mirror, its security archive, the proxy.

# Prints "URI SUITE" for every enabled deb source apt uses.
apt_sources() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1 == "deb" {
			i = 2
			if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
			if (i + 1 <= NF) print $i, $(i + 1)
		}' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk '
		function flush(   nu, ns, u, s, a, b) {
			if (types ~ /(^|[ \t])deb([ \t]|$)/ && tolower(enabled) != "no") {
				nu = split(uris, a, /[ \t]+/); ns = split(suites, b, /[ \t]+/)
				for (u = 1; u <= nu; u++) for (s = 1; s <= ns; s++)
					if (a[u] != "" && b[s] != "") print a[u], b[s]
			}
			types = uris = suites = enabled = ""
		}
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		/^[ \t]/ { next }   # a continuation line (a key block, say)
		{
			key = tolower($0); sub(/:.*/, "", key)
			val = $0; sub(/^[^:]*:[ \t]*/, "", val)
			if (key == "types") types = val
			else if (key == "uris") uris = val
			else if (key == "suites") suites = val
			else if (key == "enabled") enabled = val
		}
		END { flush() }' "$f"
	done
}

# The Debian archive apt uses: the first source of a Debian release suite.
find_mirror() {
	local codename uri suite
	# shellcheck disable=SC1091
	codename=$(. /etc/os-release 2>/dev/null && [ "${ID:-}" = debian ] && echo "${VERSION_CODENAME:-}") || codename=
	while read -r uri suite; do
		case $uri in http://* | https://* | file:/*) ;; *) continue ;; esac
		case $suite in
		"$codename" | stable | testing | unstable | sid | trixie | forky) ;;
		*) continue ;;
		esac
		[ -n "$suite" ] || continue
		echo "${uri%/}"
		return 0
	done < <(apt_sources)
	return 1
}

find_security_mirror() {
	local uri suite
	while read -r uri suite; do
		case $uri in http://* | https://* | file:/*) ;; *) continue ;; esac
		case $suite in *-security) echo "${uri%/}" && return 0 ;; esac
	done < <(apt_sources)
	return 1
}

apt_setting() { # name: its value in apt's configuration, or nothing
	command -v apt-config >/dev/null || return 0
	local v
	v=$(apt-config shell v "$1" 2>/dev/null) || return 0
	eval "$v"
	printf '%s' "${v:-}"
}

# ---------------------------------------------------------------------------
# The host: a clang build and its unit tests, in the working tree.

check_host() {
	local start log ver ran="make -j$JOBS DEVELOPER=1 BUILD=build/clang CC=clang; ... test-unit"
	start=$(now)
	DIST_START=$start
	log=$LOG_DIR/host.log
	: >"$log"
	say "== host: clang build and unit tests (log: $log)"
	if ! run scripts/install-deps.sh clang >>"$log" 2>&1; then
		banner "WARNING: check-distros: the host's clang build was SKIPPED, not tested:" \
			"scripts/install-deps.sh clang could not install clang (root or sudo needed," \
			"or apt failed). Log: $log"
		show_tail "$log"
		record host SKIPPED "$(($(now) - start))" "$(host_versions)" "$ran" "could not install clang"
		return 0
	fi
	local status=PASS note=
	progress host "make -j$JOBS DEVELOPER=1 BUILD=build/clang CC=clang"
	if ! run timeout --kill-after=30 "$STEP_TIMEOUT" make -j"$JOBS" DEVELOPER=1 BUILD=build/clang CC=clang >>"$log" 2>&1; then
		status=FAIL note="clang build failed"
	else
		progress host "make -j$JOBS DEVELOPER=1 BUILD=build/clang CC=clang test-unit"
		if ! run timeout --kill-after=30 "$STEP_TIMEOUT" make -j"$JOBS" DEVELOPER=1 BUILD=build/clang CC=clang test-unit >>"$log" 2>&1; then
			status=FAIL note="clang unit tests failed"
		fi
	fi
	ver=$(host_versions)
	if [ "$status" = FAIL ]; then
		banner "FAILURE: check-distros: host: $note. Log: $log"
		show_tail "$log"
	fi
	progress host "$status"
	record host "$status" "$(($(now) - start))" "$ver" "$ran" "$note"
}

# Run inside with bash -c: the compilers' and libraries' versions on one line.
# shellcheck disable=SC2016
VERSIONS_SH='
v() { "$@" 2>/dev/null || echo "?"; }
cc_ver() { command -v "$1" >/dev/null || { echo "none"; return; }
	case $1 in
	gcc) gcc -dumpfullversion ;;
	*) "$1" --version 2>/dev/null | sed -n "1s/.*version \([^ ]*\).*/\1/p" ;;
	esac; }
printf "gcc %s, clang %s; libgit2 %s, libcurl %s, cmocka %s" "$(cc_ver gcc)" "$(cc_ver clang)" \
	"$(v pkg-config --modversion libgit2)" "$(v pkg-config --modversion libcurl)" "$(v pkg-config --modversion cmocka)"
command -v node >/dev/null && printf "; node %s" "$(node --version 2>/dev/null)"
echo
'

host_versions() {
	local os
	# shellcheck disable=SC1091
	os=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}") || os=
	printf '%s: %s' "${os:-unknown system}" "$(bash -c "$VERSIONS_SH")"
}

# ---------------------------------------------------------------------------
# Chroots.

have_root() { [ "$(id -u)" -eq 0 ]; }

# Unmounts whatever is mounted under $1 (an interrupted debootstrap leaves /proc and
# /sys mounted), then removes it without crossing into another file system.
remove_tree() {
	local dir=$1 m
	[ -d "$dir" ] || return 0
	dir=$(cd "$dir" && pwd -P)
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done < <(awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r)
	rm -rf --one-file-system -- "$dir"
}

# Makes $CHROOT_DIR/$name with debootstrap unless a complete one is there.
ensure_chroot() { # name suite log
	local name=$1 suite=$2 log=$3 dir=$CHROOT_DIR/$1 tmp old
	if [ -f "$dir/$MARK" ]; then
		return 0
	fi
	if [ -e "$dir" ]; then
		SKIP_REASON="$dir exists but is not a chroot this script completed; remove it to have it made again"
		return 1
	fi
	for old in "$CHROOT_DIR/.$name.new."*; do
		[ -e "$old" ] || continue
		progress "$name" "removing $old, left by an interrupted run"
		remove_tree "$old"
	done
	if ! command -v debootstrap >/dev/null; then
		SKIP_REASON="debootstrap is not installed (scripts/install-deps.sh debootstrap installs it)"
		return 1
	fi
	tmp=$(mktemp -d "$CHROOT_DIR/.$name.new.XXXXXX")
	NEW_CHROOT=$tmp
	chmod 755 "$tmp"
	progress "$name" "debootstrap $suite from $MIRROR into $tmp"
	if ! run timeout --kill-after=30 "$SETUP_TIMEOUT" env "${PROXY_ENV[@]}" debootstrap --variant=minbase \
		--include=ca-certificates --components=main "$suite" "$tmp" "$MIRROR" >>"$log" 2>&1; then
		remove_tree "$tmp"
		NEW_CHROOT=
		SKIP_REASON="debootstrap $suite from $MIRROR failed"
		return 1
	fi
	printf 'suite=%s\nmirror=%s\ncreated=%s\n' "$suite" "$MIRROR" "$(date -u +%FT%TZ)" >"$tmp/$MARK"
	mv -T "$tmp" "$dir"
	NEW_CHROOT=
}

mount_chroot() { # dir
	local dir=$1
	mount -t proc proc "$dir/proc" && MOUNTS+=("$dir/proc") || return 1
	mkdir -p "$dir/dev/shm"
	mount -t tmpfs -o mode=1777,nosuid,nodev shm "$dir/dev/shm" && MOUNTS+=("$dir/dev/shm") || return 1
}

unmount_chroot() { # dir
	local dir=$1 i keep=()
	kill_chroot_procs "$dir"
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		case ${MOUNTS[i]} in
		"$dir"/*) umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" ;;
		*) keep=("${MOUNTS[i]}" "${keep[@]}") ;;
		esac
	done
	MOUNTS=("${keep[@]}")
}

# The environment inside: nothing of ours but the trust store, the proxy and CI.
chroot_env() {
	CHROOT_ENV=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
		LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "CI=${CI:-}"
		SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt SSL_CERT_DIR=/etc/ssl/certs
		CURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt GIT_SSL_CAINFO=/etc/ssl/certs/ca-certificates.crt
		NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
		npm_config_cafile=/etc/ssl/certs/ca-certificates.crt
		npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
		"${PROXY_ENV[@]}")
	# The npm registry this machine's npm uses, if it has one configured.
	if [ -n "$NPM_REGISTRY" ]; then
		CHROOT_ENV+=("npm_config_registry=$NPM_REGISTRY")
	fi
}

in_chroot() { # dir timeout log script...
	local dir=$1 t=$2 log=$3
	shift 3
	run timeout --kill-after=30 "$t" chroot "$dir" /usr/bin/env -i "${CHROOT_ENV[@]}" \
		/bin/bash -c "set -e; $*" >>"$log" 2>&1
}

# apt's sources, settings and trust inside the chroot; files written every run, so a
# chroot follows the machine's mirror, proxy and certificates.
configure_chroot() { # dir suite
	local dir=$1 suite=$2 f
	{
		echo "# written by pm-bot's scripts/check-distros.sh on each run"
		echo "deb $MIRROR $suite main"
		if [ "$suite" != sid ]; then
			echo "deb $MIRROR $suite-updates main"
			if [ -n "$SECURITY_MIRROR" ]; then
				echo "deb $SECURITY_MIRROR $suite-security main"
			fi
		fi
	} >"$dir/etc/apt/sources.list"
	{
		echo "// written by pm-bot's scripts/check-distros.sh on each run"
		echo 'Acquire::Languages "none";'
		echo 'Dpkg::Use-Pty "0";'
		echo 'APT::Install-Recommends "false";'
		echo 'quiet "1";'
		# A mirror serving a frozen snapshot: apt here accepts expired Release files.
		case $(apt_setting Acquire::Check-Valid-Until) in
		false | no | 0) echo 'Acquire::Check-Valid-Until "false";' ;;
		esac
	} >"$dir/etc/apt/apt.conf.d/50pm-bot"
	rm -f "$dir/etc/apt/apt.conf.d/51pm-bot-proxy"
	if [ -n "$APT_HTTP_PROXY$APT_HTTPS_PROXY" ]; then
		(
			umask 077
			if [ -n "$APT_HTTP_PROXY" ]; then
				printf 'Acquire::http::Proxy "%s";\n' "$APT_HTTP_PROXY"
			fi
			if [ -n "$APT_HTTPS_PROXY" ]; then
				printf 'Acquire::https::Proxy "%s";\n' "$APT_HTTPS_PROXY"
			fi
		) >"$dir/etc/apt/apt.conf.d/51pm-bot-proxy"
	fi
	# No daemon starts inside.
	printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
	chmod 755 "$dir/usr/sbin/policy-rc.d"
	# Name resolution and the machine's extra certificates (a proxy's own CA, say).
	for f in resolv.conf hosts; do
		rm -f "$dir/etc/$f"
		if [ -r "/etc/$f" ]; then
			cp -L "/etc/$f" "$dir/etc/$f"
		fi
	done
	rm -rf "$dir/usr/local/share/ca-certificates/pm-bot-host"
	if [ -d /usr/local/share/ca-certificates ]; then
		mkdir -p "$dir/usr/local/share/ca-certificates/pm-bot-host"
		find -L /usr/local/share/ca-certificates -type f -name '*.crt' \
			-exec cp -L {} "$dir/usr/local/share/ca-certificates/pm-bot-host/" \;
	fi
}

# Tracked and untracked-not-ignored files of the working tree, build/ and node_modules
# left out.
make_source_tar() { # tar
	local out=$1 f
	if git -C "$TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$TOP" ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do
			case $f in build/* | node_modules/* | */node_modules/*) continue ;; esac
			[ -e "$f" ] || [ -L "$f" ] || continue # deleted but not yet staged
			printf '%s\0' "$f"
		done | tar -C "$TOP" --null -T - -cf "$out"
	else
		tar -C "$TOP" --exclude=./build --exclude=node_modules --exclude=.git -cf "$out" .
	fi
}

chroot_skip() { # name start ran reason log
	banner "WARNING: check-distros: $1 was SKIPPED, NOT TESTED." \
		"Reason: $4." \
		"This is not a failure of pm-bot (exit status stays 0 for it), but nothing was" \
		"built or tested in $1 this run. Log: $5"
	show_tail "$5"
	record "$1" SKIPPED "$(($(now) - $2))" "${VERSIONS:-}" "$3" "$4"
}

# name suite extra-packages steps...; a step is "label|command".
check_chroot() {
	local name=$1 suite=$2 extra=$3
	shift 3
	local start log dir status=PASS notes=() ran=() step label cmd lockfd stamp age
	start=$(now)
	DIST_START=$start
	log=$LOG_DIR/$name.log
	dir=$CHROOT_DIR/$name
	VERSIONS=
	: >"$log"
	for step in "$@"; do ran+=("${step#*|}"); done
	local ran_s
	ran_s=$(printf '%s; ' "${ran[@]}")
	ran_s=${ran_s%; }
	say "== $name: Debian $suite chroot in $dir (log: $log)"

	if ! have_root; then
		chroot_skip "$name" "$start" "$ran_s" "not root and no password-less sudo: chroots need root" "$log"
		return 0
	fi
	if [ -z "$MIRROR" ]; then
		chroot_skip "$name" "$start" "$ran_s" "no Debian mirror found in apt's sources (set PMBOT_DEBIAN_MIRROR)" "$log"
		return 0
	fi
	if ! mkdir -p "$CHROOT_DIR" 2>>"$log" || ! : 2>>"$log" >>"$CHROOT_DIR/.$name.lock"; then
		chroot_skip "$name" "$start" "$ran_s" "cannot write to $CHROOT_DIR (set PMBOT_CHROOT_DIR)" "$log"
		return 0
	fi
	exec {lockfd}>"$CHROOT_DIR/.$name.lock"
	if ! flock -w 3600 "$lockfd"; then
		exec {lockfd}>&-
		chroot_skip "$name" "$start" "$ran_s" "another check-distros kept $dir locked for an hour" "$log"
		return 0
	fi

	SKIP_REASON=
	if ! ensure_chroot "$name" "$suite" "$log"; then
		exec {lockfd}>&-
		chroot_skip "$name" "$start" "$ran_s" "$SKIP_REASON" "$log"
		return 0
	fi
	dir=$(cd "$dir" && pwd -P)
	CUR_CHROOT=$dir
	if ! mount_chroot "$dir" >>"$log" 2>&1; then
		unmount_chroot "$dir"
		CUR_CHROOT=
		exec {lockfd}>&-
		chroot_skip "$name" "$start" "$ran_s" "could not mount /proc or /dev/shm in $dir" "$log"
		return 0
	fi
	configure_chroot "$dir" "$suite"

	local reason=
	if ! in_chroot "$dir" "$SETUP_TIMEOUT" "$log" update-ca-certificates; then
		reason="update-ca-certificates failed inside"
	fi
	# A cached chroot is upgraded at most every PMBOT_REFRESH_HOURS; a failing upgrade
	# (the archive in the middle of a transition) is reported and the chroot used as it is.
	stamp=$dir/var/lib/pm-bot-upgraded
	age=$(($(now) - $(stat -c %Y "$stamp" 2>/dev/null || echo 0)))
	if [ -z "$reason" ] && [ "$REFRESH_HOURS" -ge 0 ] && [ "$age" -ge $((REFRESH_HOURS * 3600)) ]; then
		progress "$name" "apt-get update and dist-upgrade"
		if in_chroot "$dir" "$SETUP_TIMEOUT" "$log" "dpkg --configure -a && apt-get update && apt-get -y \
			-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold dist-upgrade && apt-get clean"; then
			touch "$stamp"
		else
			banner "WARNING: check-distros: $name: upgrading the chroot's packages failed" \
				"(the archive's problem, most likely); going on with the packages it has. Log: $log"
			show_tail "$log"
		fi
	fi

	# The source under test, fresh each run.
	if [ -z "$reason" ]; then
		rm -rf --one-file-system "${dir:?}$SRC_IN"
		mkdir -p "$dir$SRC_IN"
		if ! make_source_tar "$WORK/src.tar" 2>>"$log"; then
			unmount_chroot "$dir"
			CUR_CHROOT=
			exec {lockfd}>&-
			banner "FAILURE: check-distros: $name: could not copy the working tree. Log: $log"
			show_tail "$log"
			record "$name" FAIL "$(($(now) - start))" "" "$ran_s" "could not copy the source"
			return 0
		fi
		chroot "$dir" tar -C "$SRC_IN" --no-same-owner -xf - <"$WORK/src.tar" >>"$log" 2>&1 ||
			reason="could not unpack the source inside"
	fi
	if [ -z "$reason" ]; then
		progress "$name" "scripts/install-deps.sh $extra"
		in_chroot "$dir" "$SETUP_TIMEOUT" "$log" "dpkg --configure -a && cd $SRC_IN && scripts/install-deps.sh $extra && apt-get clean" ||
			reason="apt-get could not install the build dependencies (scripts/install-deps.sh $extra): the archive or the mirror; if this lasts, remove $dir to have it made again"
	fi
	if [ -z "$reason" ]; then
		VERSIONS="Debian $suite ($(cat "$dir/etc/debian_version" 2>/dev/null || echo '?')): $(chroot "$dir" /usr/bin/env -i "${CHROOT_ENV[@]}" /bin/bash -c "$VERSIONS_SH" 2>/dev/null)"
		progress "$name" "$VERSIONS"
	fi
	if [ -z "$reason" ] && [ "$name" = trixie ]; then
		progress "$name" "npm ci (the emulator's packages, from the lockfile)"
		in_chroot "$dir" "$SETUP_TIMEOUT" "$log" "cd $SRC_IN && make emu-deps" ||
			reason="npm ci of the GitHub emulator's packages failed (the registry or the network)"
	fi
	if [ -n "$reason" ]; then
		unmount_chroot "$dir"
		CUR_CHROOT=
		exec {lockfd}>&-
		chroot_skip "$name" "$start" "$ran_s" "$reason" "$log"
		return 0
	fi

	# The builds and tests: every step runs unless the build it tests failed.
	local failed_build=
	for step in "$@"; do
		label=${step%%|*}
		cmd=${step#*|}
		if [ -n "$failed_build" ] && [ "${label%% *}" = "${failed_build%% *}" ]; then
			notes+=("$label not run")
			continue
		fi
		progress "$name" "$cmd"
		printf '\n===== %s: %s\n' "$label" "$cmd" >>"$log"
		local t0
		t0=$(now)
		if in_chroot "$dir" "$STEP_TIMEOUT" "$log" "cd $SRC_IN && $cmd"; then
			printf '===== %s: passed in %s s\n' "$label" "$(($(now) - t0))" >>"$log"
		else
			printf '===== %s: FAILED after %s s\n' "$label" "$(($(now) - t0))" >>"$log"
			status=FAIL
			notes+=("$label")
			case $label in *build) failed_build=$label ;; esac
			banner "FAILURE: check-distros: $name: $label failed: $cmd" "Log: $log"
			show_tail "$log"
		fi
	done
	unmount_chroot "$dir"
	CUR_CHROOT=
	exec {lockfd}>&-
	local note
	note=$(printf '%s; ' "${notes[@]}")
	[ ${#notes[@]} -eq 0 ] && note=
	progress "$name" "$status"
	record "$name" "$status" "$(($(now) - start))" "$VERSIONS" "$ran_s" "${note%; }"
}

# ---------------------------------------------------------------------------

summary() {
	local name status secs ver ran note rc=0
	echo
	echo "======================== check-distros summary ========================"
	while IFS=$'\037' read -r name status secs ver ran note; do
		printf '%-7s %-8s %5s s  %s\n' "$name" "$status" "$secs" "${ver:-versions unknown}"
		if [ "$status" = SKIPPED ]; then
			printf '        not run: %s\n' "${ran:-nothing}"
		else
			printf '        ran: %s\n' "${ran:-nothing}"
		fi
		case $status in
		FAIL)
			rc=1
			[ -z "$note" ] || printf '        FAILED: %s\n' "$note"
			printf '        log: %s/%s.log\n' "$LOG_DIR" "$name"
			;;
		SKIPPED)
			printf '        !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n'
			printf '        !!! %s SKIPPED: nothing was built or tested there this run.\n' "$name"
			printf '        !!! Reason: %s\n' "$note"
			printf '        !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n'
			;;
		*) [ -z "$note" ] || printf '        note: %s\n' "$note" ;;
		esac
	done <"$RESULTS"
	echo "========================================================================"
	if [ "$rc" -eq 0 ]; then
		echo "check-distros: no failure ($(grep -c $'\037SKIPPED\037' "$RESULTS" || true) skipped; logs in $LOG_DIR)"
	else
		echo "check-distros: FAILED (logs in $LOG_DIR)"
	fi
	return "$rc"
}

chroot_distros=()
for d in $DISTROS; do [ "$d" != host ] && chroot_distros+=("$d"); done

MIRROR=${PMBOT_DEBIAN_MIRROR:-}
SECURITY_MIRROR=${PMBOT_DEBIAN_SECURITY_MIRROR:-}
if [ -z "$MIRROR" ]; then
	MIRROR=$(find_mirror) || MIRROR=
	[ -z "$SECURITY_MIRROR" ] && { SECURITY_MIRROR=$(find_security_mirror) || SECURITY_MIRROR=; }
fi
APT_HTTP_PROXY=$(apt_setting Acquire::http::Proxy)
APT_HTTPS_PROXY=$(apt_setting Acquire::https::Proxy)
[ "$APT_HTTP_PROXY" = DIRECT ] && APT_HTTP_PROXY=
[ "$APT_HTTPS_PROXY" = DIRECT ] && APT_HTTPS_PROXY=
# The proxy variables of this environment go in as they are; apt's proxy serves
# debootstrap when none is set.
PROXY_ENV=()
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
	[ -n "${!v:-}" ] && PROXY_ENV+=("$v=${!v}")
done
if [ -z "${http_proxy:-}" ] && [ -n "$APT_HTTP_PROXY" ]; then
	PROXY_ENV+=("http_proxy=$APT_HTTP_PROXY")
fi
NPM_REGISTRY=
if command -v npm >/dev/null; then
	NPM_REGISTRY=$(npm config get registry 2>/dev/null </dev/null) || NPM_REGISTRY=
	case $NPM_REGISTRY in http://* | https://*) ;; *) NPM_REGISTRY= ;; esac
fi
chroot_env

# The chroots need root: through sudo when it asks for no password, the rest of the
# run staying ours (the host build's files belong to the user).
SUDO_RUN=0
if [ ${#chroot_distros[@]} -gt 0 ] && ! have_root && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
	SUDO_RUN=1
fi

say "check-distros: $DISTROS; chroots in $CHROOT_DIR; Debian mirror: ${MIRROR:-none found}; logs in $LOG_DIR"
for d in $DISTROS; do
	[ "$d" = host ] && check_host
done
if [ "$SUDO_RUN" = 1 ]; then
	say "check-distros: the chroots through sudo"
	run sudo -n env "PMBOT_RESULTS_FILE=$RESULTS" "PMBOT_DISTROS=${chroot_distros[*]}" \
		"PMBOT_CHROOT_DIR=$CHROOT_DIR" "PMBOT_LOG_DIR=$LOG_DIR" "PMBOT_REFRESH_HOURS=$REFRESH_HOURS" \
		"PMBOT_STEP_TIMEOUT=$STEP_TIMEOUT" "PMBOT_SETUP_TIMEOUT=$SETUP_TIMEOUT" "JOBS=$JOBS" \
		"PMBOT_DEBIAN_MIRROR=$MIRROR" "PMBOT_DEBIAN_SECURITY_MIRROR=$SECURITY_MIRROR" \
		"PMBOT_SUDO_CHILD=1" "CI=${CI:-}" "${PROXY_ENV[@]}" "$SELF" || true
	for d in "${chroot_distros[@]}"; do
		grep -q "^$d"$'\037' "$RESULTS" ||
			record "$d" FAIL 0 "" "" "the run through sudo ended without a result (see above)"
	done
else
	for d in "${chroot_distros[@]}"; do
		case $d in
		trixie)
			check_chroot trixie trixie "" \
				"gcc build|make -j$JOBS DEVELOPER=1" \
				"gcc check-normal|make -j$JOBS check-normal"
			;;
		sid)
			check_chroot sid sid clang \
				"gcc build|make -j$JOBS DEVELOPER=1 BUILD=build/gcc CC=gcc" \
				"gcc test-unit|make -j$JOBS DEVELOPER=1 BUILD=build/gcc CC=gcc test-unit" \
				"clang build|make -j$JOBS DEVELOPER=1 BUILD=build/clang CC=clang" \
				"clang test-unit|make -j$JOBS DEVELOPER=1 BUILD=build/clang CC=clang test-unit"
			;;
		esac
	done
fi

# The copy run through sudo leaves the summary to us.
if [ "${PMBOT_SUDO_CHILD:-0}" = 1 ]; then
	[ -n "${SUDO_UID:-}" ] && chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$LOG_DIR"/*.log 2>/dev/null
	exit 0
fi
summary
