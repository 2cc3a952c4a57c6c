#!/usr/bin/env bash
# usage: scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]
#
# Builds the libFuzzer targets fuzz/fuzz_<TARGET>.c with ASan and UBSan
# against every src/**/*.c (and the generated GraphQL and LLM file tables),
# replays the regression inputs of each target, seeds a corpus and fuzzes
# each target for SECONDS, one after the other. Without TARGET every
# fuzz/fuzz_*.c is run. Targets and what they take:
#   report      a planning report (Markdown): extraction .. WorkGraph
#   event       "<event name>\n<webhook payload>": pmbot_event_parse,
#               pmbot_event_decide, pmbot_command_parse
#   comment     a comment body: pmbot_comment_parse
#   capability  a model output, run through every capability's run_output
#   promptir    JSON: pmbot_promptir_from_json, governance, pipeline
#   config      .github/pm-bot.yml: pmbot_config_parse, pmbot_governance_new
#   body        an issue body: pmbot_body_parse, pmbot_body_get, pmbot_body_rev
#   state       a state snapshot: pmbot_state_parse, to_json, canonical
#   plan        a plan file (changeset bundle JSON): pmbot_apply_check,
#               pmbot_changeset_is_applied, pmbot_flow_compile/validate,
#               pmbot_plan_markdown
#   command     a comment body as raw bytes: pmbot_command_parse_bytes
#   bundle      a plan file's bytes: pmbot_bundle_parse (the loader apply and
#               the Action read plans through)
#
# A crash, leak, timeout or out-of-memory fails the script; the input that
# caused it is left in BUILD_DIR/TARGET (crash-*, leak-*, timeout-*, oom-*).
# Inputs that found new coverage accumulate in BUILD_DIR/TARGET/corpus
# across runs.
#
# Regression inputs live in tests/fixtures/fuzz-regressions/: the report
# target replays every *.md there (tests/e2e/test_cli.sh also runs them
# through `pm-bot validate`), every other target the files named
# TARGET-* (which must not end in .md). A replayed input that fails stops
# the script before any fuzzing.
#
# Environment: FUZZ_JOBS=N runs N fuzzing processes (libFuzzer -fork=N);
# FUZZ_CFLAGS adds compiler flags (for example -fno-sanitize=nonnull-attribute
# to look past a known finding while it is being fixed); FUZZ_ARGS adds
# libFuzzer flags (for example -max_len=4096).
set -euo pipefail

if [ $# -lt 2 ]; then
	echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
	exit 2
fi
build=$1
seconds=$2
shift 2
case $seconds in
'' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	mapfile -t targets < <(find fuzz -maxdepth 1 -name 'fuzz_*.c' | sed 's|^fuzz/fuzz_||; s|\.c$||' | sort)
fi
for t in "${targets[@]}"; do
	if [ ! -f "fuzz/fuzz_$t.c" ]; then
		echo "fuzz: no target '$t' (fuzz/fuzz_$t.c)" >&2
		exit 2
	fi
done

if ! command -v clang >/dev/null ||
	! ls "$(clang -print-resource-dir 2>/dev/null)"/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
	scripts/install-deps.sh clang libclang-rt-14-dev
fi

pkgs="libgit2 libcurl jansson yaml-0.1 libcmark-gfm libcrypto"
version=$(sed -n 's/^VERSION[[:space:]]*:=[[:space:]]*//p' Makefile)
# The same -std, -D and -I flags as the Makefile (each source includes banned.h itself).
read -r -a pkg_cflags <<<"$(pkg-config --cflags $pkgs)"
read -r -a pkg_libs <<<"$(pkg-config --libs $pkgs)"
cflags=(-std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
	-Iinclude "-DPMBOT_VERSION=\"$version\""
	-Wall -Wextra -Wno-unused-parameter
	"${pkg_cflags[@]}"
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
	-fno-omit-frame-pointer -g -O1)
read -r -a extra_cflags <<<"${FUZZ_CFLAGS:-}"
cflags+=("${extra_cflags[@]}")

mkdir -p "$build/obj" "$build/gen"
# The tables the Makefile generates: the GraphQL documents and the LLM
# prompts and schemas (capability.c reads the latter).
mapfile -t gql < <(find src/github/graphql -name '*.graphql' 2>/dev/null | LC_ALL=C sort)
scripts/embed-graphql.sh "$build/gen/graphql_docs.c" "${gql[@]}"
mapfile -t llm_files < <({ find src/llm/prompts -name '*.md'; find docs/schemas/llm -name '*.schema.json'; } 2>/dev/null | LC_ALL=C sort)
scripts/embed-files.sh "$build/gen/llm_files.c" pmbot/llm.h pmbot_embedded_file \
	pmbot_llm_files "${llm_files[@]}"
mapfile -t srcs < <(find src -name '*.c' | sort)
srcs+=("$build/gen/graphql_docs.c" "$build/gen/llm_files.c")
lib_count=${#srcs[@]}
for t in "${targets[@]}"; do
	srcs+=("fuzz/fuzz_$t.c")
done

echo "fuzz: compiling ${#srcs[@]} sources with clang" >&2
objs=()
pids=()
for src in "${srcs[@]}"; do
	case $src in
	"$build"/*) obj="$build/obj/gen/$(basename "${src%.c}").o" ;;
	*) obj="$build/obj/${src%.c}.o" ;;
	esac
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
lib="$build/libpmbot-fuzz.a"
rm -f "$lib"
ar rcs "$lib" "${objs[@]:0:$lib_count}"
for t in "${targets[@]}"; do
	clang "${cflags[@]}" -o "$build/fuzz_$t" "$build/obj/fuzz/fuzz_$t.o" "$lib" \
		"${pkg_libs[@]}" -lcmark-gfm-extensions
done

# Copies files into the seed directory under flattened names, so none collide.
add_seeds() {
	local dir=$1 f
	shift
	for f in "$@"; do
		[ -f "$f" ] && cp "$f" "$dir/$(printf '%s' "$f" | tr '/' '_')"
	done
	return 0
}

# Seeds are rebuilt on every run, from the committed fuzz/seeds/TARGET and
# from the fixtures the unit and end-to-end tests read.
make_seeds() {
	local t=$1 dir=$2 f name
	mapfile -t committed < <(find "fuzz/seeds/$t" -type f 2>/dev/null | sort)
	add_seeds "$dir" "${committed[@]}"
	case $t in
	report)
		mapfile -t files < <(find tests/fixtures examples -name '*.md' -type f 2>/dev/null | sort)
		add_seeds "$dir" "${files[@]}" ;;
	event)
		# The event name is the part of the fixture's name before the first dot.
		for f in tests/fixtures/events/*.json; do
			[ -f "$f" ] || continue
			name=$(basename "$f")
			{ printf '%s\n' "${name%%.*}"; cat "$f"; } >"$dir/$(printf '%s' "$f" | tr '/' '_')"
		done ;;
	comment)
		# The plan comment the bot posted, as it sits in a webhook payload.
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["comment"]["body"], end="")' \
			tests/fixtures/events/issue_comment.created.bot.json >"$dir/bot-comment" 2>/dev/null ||
			rm -f "$dir/bot-comment" ;;
	capability)
		mapfile -t files < <(find tests/fixtures/bundles tests/fixtures/promptir -name '*.json' -type f 2>/dev/null | sort)
		add_seeds "$dir" "${files[@]}" ;;
	promptir)
		mapfile -t files < <(find tests/fixtures/promptir -name '*.json' -type f 2>/dev/null | sort)
		add_seeds "$dir" "${files[@]}" ;;
	body)
		# The bodies of the issues in the state fixtures, one file each.
		python3 - "$dir" tests/fixtures/states/*.json tests/fixtures/bundles-apply/*.json \
			tests/fixtures/fieldsync/*.json <<'PY' 2>/dev/null || true
import json, sys
out, n = sys.argv[1], 0
def walk(v):
    global n
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "body" and isinstance(x, str) and x:
                n += 1
                open("%s/body-%d" % (out, n), "w", encoding="utf-8").write(x)
            else:
                walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
for f in sys.argv[2:]:
    try:
        walk(json.load(open(f, encoding="utf-8")))
    except Exception:
        pass
PY
		;;
	state)
		mapfile -t files < <(find tests/fixtures/states tests/fixtures/bundles-apply \
			tests/fixtures/fieldsync -name '*.json' -type f 2>/dev/null | sort)
		add_seeds "$dir" "${files[@]}" ;;
	plan | bundle)
		mapfile -t files < <(find tests/fixtures/bundles tests/fixtures/bundles-apply \
			-name '*.json' -type f 2>/dev/null | sort)
		add_seeds "$dir" "${files[@]}" ;;
	command)
		# Comment bodies as they sit in the webhook payloads, the plan comment among them.
		for f in tests/fixtures/events/issue_comment.*.json; do
			[ -f "$f" ] || continue
			python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["comment"]["body"], end="")' \
				"$f" >"$dir/$(basename "$f" .json)" 2>/dev/null || rm -f "$dir/$(basename "$f" .json)"
		done ;;
	config)
		mapfile -t files < <(find tests/fixtures/config -type f 2>/dev/null | sort)
		add_seeds "$dir" "${files[@]}"
		# Governance policy files, as the llm.policies of a config (JSON is YAML).
		for f in tests/fixtures/promptir/*policies*.json; do
			[ -f "$f" ] || continue
			{ printf '{"llm": {"policies": '; cat "$f"; printf '}}\n'; } \
				>"$dir/llm_$(basename "$f")"
		done ;;
	esac
}

regressions() {
	local t=$1
	if [ "$t" = report ]; then
		find tests/fixtures/fuzz-regressions -maxdepth 1 -type f -name '*.md' | sort
	else
		find tests/fixtures/fuzz-regressions -maxdepth 1 -type f -name "$t-*" ! -name '*.md' | sort
	fi
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
read -r -a extra_args <<<"${FUZZ_ARGS:-}"

for t in "${targets[@]}"; do
	bin="$build/fuzz_$t"
	out="$build/$t"
	mkdir -p "$out/corpus"

	mapfile -t regs < <(regressions "$t")
	if [ ${#regs[@]} -gt 0 ]; then
		echo "fuzz: $t: replaying ${#regs[@]} regression inputs" >&2
		if ! "$bin" -runs=1 -timeout=10 -rss_limit_mb=2048 "${regs[@]}" >"$out/replay.log" 2>&1; then
			cat "$out/replay.log" >&2
			echo "fuzz: $t: FAILED on a regression input" >&2
			exit 1
		fi
	fi

	seeds="$out/seeds"
	rm -rf "$seeds"
	mkdir -p "$seeds"
	make_seeds "$t" "$seeds"
	echo "fuzz: $t: $(find "$seeds" -type f | wc -l) seed files, running for ${seconds}s" >&2

	args=(-max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048
		-artifact_prefix="$out/" -print_final_stats=1)
	if [ -f "fuzz/$t.dict" ]; then
		args+=(-dict="fuzz/$t.dict")
	fi
	if [ "${FUZZ_JOBS:-1}" -gt 1 ]; then
		args+=(-fork="$FUZZ_JOBS")
	fi
	args+=("${extra_args[@]}")

	set +e
	"$bin" "${args[@]}" "$out/corpus" "$seeds"
	rc=$?
	set -e

	if [ $rc -ne 0 ]; then
		echo "fuzz: $t: FAILED (exit $rc); reproduce with: $bin FILE" >&2
		find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
			-o -name 'oom-*' -o -name 'slow-unit-*' \) -newer "$bin" -print >&2
		exit 1
	fi
	echo "fuzz: $t: no crash in ${seconds}s" >&2
done
echo "fuzz: ${targets[*]}: no crash" >&2
