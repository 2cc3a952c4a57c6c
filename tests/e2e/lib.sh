# Shared helpers of the end-to-end scripts: run the real binary ($PMBOT) and
# check exit codes and output. Sourced, not run.
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

expect_eq() {
	[ "$1" = "$2" ] || { fail "expected [$2], got [$1]"; return 1; }
}

finish() {
	echo "$(basename "$0"): $PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}
