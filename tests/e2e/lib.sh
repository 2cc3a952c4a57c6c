# Shared helpers of the end-to-end scripts: run the real binary ($PMBOT) and
# check exit codes and output; for the scripts against the GitHub emulator,
# its seed, start and control, and the git repositories they plan from.
# Sourced from the repository root, not run.
set -u
PASS=0
FAIL=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# run EXPECTED_STATUS CMD... : runs CMD, keeps stdout/stderr in $OUT/$ERR.
run() {
	local want=$1
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	STATUS=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
	if [ "$STATUS" -ne "$want" ]; then
		fail "exit status $STATUS, expected $want: $*"
		printf '  stdout: %s\n  stderr: %s\n' "$OUT" "$ERR" >&2
		return 1
	fi
	return 0
}

ok() { PASS=$((PASS + 1)); }
fail() { FAIL=$((FAIL + 1)); echo "FAIL [$CASE]: $*" >&2; }

# expect_in HAYSTACK NEEDLE
expect_in() {
	case "$1" in
	*"$2"*) return 0 ;;
	*) fail "expected to find [$2] in [$1]"; return 1 ;;
	esac
}

# expect_not_in HAYSTACK NEEDLE
expect_not_in() {
	case "$1" in
	*"$2"*) fail "expected not to find [$2] in [$1]"; return 1 ;;
	*) return 0 ;;
	esac
}

expect_eq() {
	[ "$1" = "$2" ] || { fail "expected [$2], got [$1]"; return 1; }
}

finish() {
	echo "$(basename "$0"): $PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}

# ---- the GitHub emulator (tests/github-emu) and git, for the scripts that use them.
# The repository root (lib.sh is sourced from it), for the example's files.
E2E_ROOT=$PWD
# Where emu_start keeps the emulator's pid, port and log; a script's EXIT trap
# stops it with `scripts/emu.sh stop "$EMU"` (lib.sh's own trap only removes $TMP).
EMU="$TMP/emu"

# need_node: skip the whole script (exit 0, a SKIP line) when node, which the
# emulator needs, is not installed.
need_node() {
	command -v node >/dev/null && return 0
	echo "SKIP $(basename "$0"): node is not installed (the GitHub emulator needs it)"
	exit 0
}

# emu_env: what every emulator script runs with: no git configuration of the
# host, pm-bot's clock at the seeds' "now", and none of the host's settings
# that would change a run (a script unsets its own extras after).
emu_env() {
	export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 PMBOT_NOW=2026-11-22T12:00:00Z
	unset PMBOT_TEST_KILL_AFTER GITHUB_TOKEN PMBOT_VERBOSE PMBOT_GITHUB_STATS GITHUB_SERVER_URL
}

# emu_seed OUT [PYTHON [ARG...]]: write to OUT an emulator seed: the example's
# state (examples/state.json), now 2026-11-22T12:00:00Z, and $TOKEN acting as
# github-actions[bot] with scopes repo and project. PYTHON, statements run
# before the seed is written, may change `st` (the state), `seed` (the dict
# written, keys in that order) with `tok` ($TOKEN) and `args` (the ARGs).
emu_seed() {
	python3 - "$E2E_ROOT/examples/state.json" "$1" "$TOKEN" "${2:-}" "${@:3}" <<'PY'
import json, sys, textwrap
st = json.load(open(sys.argv[1]))
tok, args = sys.argv[3], sys.argv[5:]
seed = {"state": st, "now": "2026-11-22T12:00:00Z",
        "tokens": {tok: {"login": "github-actions[bot]", "scopes": ["repo", "project"]}}}
exec(textwrap.dedent(sys.argv[4]))
json.dump(seed, open(sys.argv[2], "w"))
PY
}

# emu_start SEED: start the emulator with SEED in $EMU, set URL to its base
# and point pm-bot at it (GITHUB_API_URL, GITHUB_GRAPHQL_URL, GH_TOKEN=$TOKEN,
# no pacing). Exits the script when it does not come up.
emu_start() {
	URL=$(scripts/emu.sh start "$1" "$EMU") || { echo "FAIL: the emulator did not start" >&2; exit 1; }
	export GITHUB_API_URL=$URL GITHUB_GRAPHQL_URL=$URL/graphql GH_TOKEN=$TOKEN PMBOT_GITHUB_PACE_MS=0
}

# ctl METHOD PATH [JSON]: a control request to the emulator; prints the answer.
ctl() {
	if [ $# -ge 3 ]; then
		curl -sf -X "$1" -H 'content-type: application/json' --data "$3" "$URL$2"
	else
		curl -sf -X "$1" "$URL$2"
	fi
}

# api TOKEN METHOD PATH [JSON]: a REST call to the emulator as a user would make it.
api() {
	local tok=$1 m=$2 p=$3
	shift 3
	curl -sf -X "$m" -H "authorization: Bearer $tok" -H 'accept: application/vnd.github+json' \
		-H 'x-github-api-version: 2022-11-28' -H 'content-type: application/json' \
		${1:+--data "$1"} "$URL$p"
}

# gitc DIR ARGS...: git in DIR as a throwaway committer, never signing.
gitc() {
	local d=$1
	shift
	git -C "$d" -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false "$@"
}

# example_repo DIR [CONFIG-LINE]: a new repository on main with the example's
# report (plans/q4.md) and configuration (CONFIG-LINE appended), committed.
example_repo() {
	git init -q -b main "$1"
	mkdir -p "$1/plans" "$1/.github"
	cp "$E2E_ROOT/examples/plans/2026-q4-checkout.md" "$1/plans/q4.md"
	cp "$E2E_ROOT/examples/.github/pm-bot.yml" "$1/.github/pm-bot.yml"
	if [ -n "${2:-}" ]; then
		printf '%s\n' "$2" >>"$1/.github/pm-bot.yml"
	fi
	gitc "$1" add plans .github && gitc "$1" commit -qm "the example"
}

# py FILE|- EXPR: EXPR over the JSON `d` of FILE (- for stdin); a string
# prints as is, anything else as JSON with sorted keys.
py() {
	python3 -c 'import json,sys; f=sys.argv[1]; d=json.load(sys.stdin if f=="-" else open(f)); v=eval(sys.argv[2]); print(v if isinstance(v,str) else json.dumps(v, sort_keys=True))' "$@"
}

# config_repo DIR: a new repository on main with only the example's
# configuration (and an empty plans/), committed as "config".
config_repo() {
	git init -q -b main "$1"
	mkdir -p "$1/.github" "$1/plans"
	cp "$E2E_ROOT/examples/.github/pm-bot.yml" "$1/.github/pm-bot.yml"
	gitc "$1" add .github && gitc "$1" commit -qm "config"
}

# event NAME FILE PYTHON-EXPR: write to FILE the payload EXPR evaluates to
# ($REPO_JSON, the script's repository object, as `repo`) and make it the
# event of the next `pm-bot action` (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH).
event() {
	python3 - "$2" "$REPO_JSON" "$3" <<'PY'
import json, sys
repo = json.loads(sys.argv[2])
json.dump(eval(sys.argv[3]), open(sys.argv[1], "w"))
PY
	export GITHUB_EVENT_NAME=$1 GITHUB_EVENT_PATH=$2
}

# until_after T: the seconds to wait until T (RFC 3339 UTC) has passed, at least 1.
until_after() {
	python3 -c 'import sys, datetime, time
t = datetime.datetime.strptime(sys.argv[1], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()
print(max(1, int(t - time.time()) + 1))' "$1"
}
