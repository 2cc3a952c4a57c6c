#!/usr/bin/env bash
# usage: scripts/fuzz.sh BUILD_DIR SECONDS
#
# Builds fuzz/fuzz_report.c with libFuzzer, ASan and UBSan against every
# src/**/*.c, seeds a corpus from the Markdown fixtures and examples, and
# fuzzes for SECONDS. A crash, leak, timeout or out-of-memory fails the
# script; the input that caused it is left in BUILD_DIR (crash-*, leak-*,
# timeout-*, oom-*). Inputs that found new coverage accumulate in
# BUILD_DIR/corpus across runs.
#
# Environment: FUZZ_JOBS=N runs N fuzzing processes (libFuzzer -fork=N);
# FUZZ_CFLAGS adds compiler flags (for example -fno-sanitize=nonnull-attribute
# to look past a known finding while it is being fixed).
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_DIR SECONDS" >&2
	exit 2
fi
build=$1
seconds=$2
case $seconds in
'' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if ! command -v clang >/dev/null ||
	! ls "$(clang -print-resource-dir 2>/dev/null)"/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
	scripts/install-deps.sh clang libclang-rt-14-dev
fi

pkgs="libgit2 libcurl jansson yaml-0.1 libcmark-gfm libcrypto"
version=$(sed -n 's/^VERSION[[:space:]]*:=[[:space:]]*//p' Makefile)
# The same -std, -D, -I and -include flags as the Makefile, so banned.h applies.
read -r -a pkg_cflags <<<"$(pkg-config --cflags $pkgs)"
read -r -a pkg_libs <<<"$(pkg-config --libs $pkgs)"
cflags=(-std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
	-Iinclude -include include/pmbot/banned.h "-DPMBOT_VERSION=\"$version\""
	-Wall -Wextra -Wno-unused-parameter
	"${pkg_cflags[@]}"
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
	-fno-omit-frame-pointer -g -O1)
read -r -a extra_cflags <<<"${FUZZ_CFLAGS:-}"
cflags+=("${extra_cflags[@]}")

mkdir -p "$build/obj" "$build/corpus"
mapfile -t srcs < <(find src -name '*.c' | sort)

echo "fuzz: compiling ${#srcs[@]} sources with clang" >&2
objs=()
pids=()
for src in "${srcs[@]}" fuzz/fuzz_report.c; do
	obj="$build/obj/${src%.c}.o"
	mkdir -p "$(dirname "$obj")"
	objs+=("$obj")
	clang "${cflags[@]}" -c "$src" -o "$obj" &
	pids+=($!)
	# Keep about one compiler per CPU.
	if [ ${#pids[@]} -ge "$(nproc)" ]; then
		wait "${pids[0]}"
		pids=("${pids[@]:1}")
	fi
done
for pid in "${pids[@]}"; do
	wait "$pid"
done

# An archive pulls in only what the target reaches, so a module that is
# still being written elsewhere in the tree does not break the link.
target_obj=${objs[-1]}
lib="$build/libpmbot-fuzz.a"
rm -f "$lib"
ar rcs "$lib" "${objs[@]:0:${#objs[@]}-1}"
clang "${cflags[@]}" -o "$build/fuzz_report" "$target_obj" "$lib" \
	"${pkg_libs[@]}" -lcmark-gfm-extensions -lm

# Seeds are rebuilt on every run; names are flattened paths so none collide.
seeds="$build/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"
while IFS= read -r -d '' f; do
	cp "$f" "$seeds/$(printf '%s' "$f" | tr '/' '_')"
done < <(find tests/fixtures examples -name '*.md' -type f -print0 2>/dev/null)
echo "fuzz: $(find "$seeds" -type f | wc -l) seed files, running for ${seconds}s" >&2

args=(-max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048
	-dict=fuzz/report.dict -artifact_prefix="$build/" -print_final_stats=1)
if [ "${FUZZ_JOBS:-1}" -gt 1 ]; then
	args+=(-fork="$FUZZ_JOBS")
fi

set +e
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	"$build/fuzz_report" "${args[@]}" "$build/corpus" "$seeds"
rc=$?
set -e

if [ $rc -ne 0 ]; then
	echo "fuzz: FAILED (exit $rc); reproduce with: $build/fuzz_report FILE" >&2
	find "$build" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
		-o -name 'oom-*' -o -name 'slow-unit-*' \) -newer "$build/fuzz_report" -print >&2
	exit 1
fi
echo "fuzz: no crash in ${seconds}s" >&2
