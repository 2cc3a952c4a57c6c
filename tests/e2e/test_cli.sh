#!/usr/bin/env bash
# End to end: the pm-bot binary's commands, output formats and exit codes.
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
EX=examples/plans/2026-q4-checkout.md
F=tests/fixtures/cli

CASE="version and help"
run 0 "$PMBOT" --version && expect_in "$OUT" "pm-bot 0.1.0" && ok
run 0 "$PMBOT" help && expect_in "$OUT" "validate" && expect_in "$OUT" "graph" && ok
run 0 "$PMBOT" help graph && expect_in "$OUT" "--format json|mermaid|tree" && ok
run 0 "$PMBOT" graph --help && expect_in "$OUT" "usage: pm-bot graph" && ok

CASE="libcurl, libgit2 and libcrypto are loaded when needed: validate maps none of them"
run 0 "$PMBOT" --version && expect_in "$OUT" "libcurl/" && ok
# LD_DEBUG=files: glibc's loader names every object it maps, on stderr.
run 0 env LD_DEBUG=files "$PMBOT" validate $EX && expect_not_in "$ERR" "libcurl" &&
	expect_not_in "$ERR" "file=libgit2" && expect_not_in "$ERR" "file=libcrypto" && ok
run 0 env LD_DEBUG=files "$PMBOT" --version && expect_in "$ERR" "file=libcurl.so.4" &&
	expect_in "$ERR" "file=libgit2.so." && ok
example_repo "$TMP/lazy"
run 0 env LD_DEBUG=files "$PMBOT" plan --repo "$TMP/lazy" --state "$TMP/lazy-none.json" \
	--format json --out "$TMP/lazy-plan.json" && expect_in "$ERR" "file=libgit2.so." &&
	expect_in "$ERR" "file=libcrypto.so." && expect_not_in "$ERR" "libcurl" && ok
# Package tools learn of the libraries from FDO dlopen notes, as action.yml does.
objcopy -O binary --only-section=.note.dlopen "$PMBOT" "$TMP/dlopen-note"
run 0 python3 -c 'import json, struct, sys
d, names = open(sys.argv[1], "rb").read(), []
while d:
    namesz, descsz, kind = struct.unpack("<III", d[:12])
    assert (d[12:16], kind) == (b"FDO\0", 0x407c0c0a), d[:16]
    names += json.loads(d[16:16 + descsz].rstrip(b"\0"))[0]["soname"]
    d = d[16 + (descsz + 3) // 4 * 4:]
print(" ".join(sorted(n.split(".so.")[0] for n in names)))' "$TMP/dlopen-note" &&
	expect_eq "$OUT" "libcrypto libcurl libgit2" && ok
# broken_lib NAME SONAME FUNCTION ARGS...: with an empty library under
# SONAME first on the search path, pm-bot ARGS fails at run time and says
# which function NAME lacks.
broken_lib() {
	local name=$1 so=$2 fn=$3
	shift 3
	rm -rf "$TMP/fakelibs" && mkdir -p "$TMP/fakelibs"
	${CC:-cc} -shared -fPIC -o "$TMP/fakelibs/$so" -x c /dev/null
	run 1 env LD_LIBRARY_PATH="$TMP/fakelibs" "$PMBOT" "$@" &&
		expect_eq "$ERR" "pm-bot: cannot load $name: $so has no $fn: not the $name pm-bot was built for" &&
		expect_eq "$OUT" "" && ok
}
broken_lib libcurl libcurl.so.4 curl_global_init --version
# The sonames pm-bot was built for, as its notes say. libcrypto is loaded
# first: libgit2's own dependencies may need it.
so() { tr -d '\0' <"$TMP/dlopen-note" | grep -o "$1\\.so\\.[0-9.]*"; }
broken_lib libgit2 "$(so libgit2)" git_blob_free plan --repo "$TMP/lazy" --state "$TMP/lazy-none.json"
broken_lib libcrypto "$(so libcrypto)" EVP_MD_fetch plan --repo "$TMP/lazy" --state "$TMP/lazy-none.json"

CASE="usage errors exit 2"
run 2 "$PMBOT" && expect_in "$ERR" "usage: pm-bot <command>" && ok
run 2 "$PMBOT" frobnicate && expect_in "$ERR" "unknown command 'frobnicate'" && ok
run 2 "$PMBOT" validate --nope $EX && expect_in "$ERR" "unknown option '--nope'" && ok
run 2 "$PMBOT" validate && expect_in "$ERR" "at least one FILE" && ok
run 2 "$PMBOT" graph --format dot $EX && expect_in "$ERR" "unknown format 'dot'" && ok
run 2 "$PMBOT" graph $EX --format && expect_in "$ERR" "option '--format' needs a value" && ok
run 2 "$PMBOT" help nothing && ok

CASE="validate the example"
run 0 "$PMBOT" validate $EX && expect_eq "$OUT" "$EX: valid (0 errors, 0 warnings)" && expect_eq "$ERR" "" && ok

CASE="validate reports errors with file, line and code; exit 2"
run 2 "$PMBOT" validate $F/invalid.md && {
	expect_in "$ERR" "$F/invalid.md:9:5: error UNKNOWN_EPIC /features/0/epic_id: epic_id 'epic:nope' names no epic" &&
	expect_in "$ERR" "$F/invalid.md:13:5: error DUPLICATE_STABLE_ID /tasks/0/stable_id:" &&
	expect_in "$ERR" "warning MISSING_PRIORITY /tasks/1:" &&
	expect_in "$OUT" "$F/invalid.md: invalid (2 errors, 1 warning)"
} && ok

CASE="validate --json: one object for one file, an array for several"
run 2 "$PMBOT" validate --json $F/invalid.md && {
	expect_in "$OUT" '{"errors":[{"code":"UNKNOWN_EPIC","column":5,"line":9,"message":"epic_id '"'"'epic:nope'"'"' names no epic","path":"/features/0/epic_id"}' &&
	expect_in "$OUT" '"file":"tests/fixtures/cli/invalid.md","valid":false' &&
	expect_in "$OUT" '"warnings":[{"code":"MISSING_PRIORITY"'
} && ok
run 2 "$PMBOT" validate --json $EX $F/invalid.md && {
	expect_in "$OUT" '[{"errors":[],"file":"examples/plans/2026-q4-checkout.md","valid":true,"warnings":[]},{' &&
	expect_eq "$(printf '%s' "$OUT" | head -c 1)" "["
} && ok

CASE="validate reads standard input"
run 0 "$PMBOT" validate - < $EX && expect_eq "$OUT" "<stdin>: valid (0 errors, 0 warnings)" && ok

CASE="a file that cannot be read exits 1, even next to an invalid one"
run 1 "$PMBOT" validate $F/does-not-exist.md $F/invalid.md && expect_in "$ERR" "cannot read $F/does-not-exist.md" && ok

CASE="no block"
run 2 "$PMBOT" validate $F/no-block.md && expect_in "$ERR" "error REPORT_NO_BLOCK" && ok

CASE="graph json is canonical and stable"
run 0 "$PMBOT" graph $EX && {
	first=$OUT
	expect_in "$OUT" '{"edges":[{"edge_type":"parent_child","from_id":"epic:checkout-reliability","provenance":"report_ir","to_id":"feat:checkout-tracing"}' &&
	expect_in "$OUT" '"schema_version":"workgraph/v1"}'
} && run 0 "$PMBOT" graph --format json $EX && expect_eq "$OUT" "$first" && ok

CASE="graph tree and mermaid"
run 0 "$PMBOT" graph --format tree $EX && {
	expect_in "$OUT" "- epic:checkout-reliability [epic] Checkout survives deploys and explains its slow requests" &&
	expect_in "$OUT" "  - feat:checkout-tracing [feature] Trace a checkout across the cart, payment and order services (depends on feat:graceful-drain)" &&
	expect_in "$OUT" "    - test:drain-soak [test] Soak test a rolling deploy at 3x peak load (blocked by task:drain-hook)"
} && ok
run 0 "$PMBOT" graph --format mermaid $EX && expect_in "$OUT" "flowchart TD" && expect_in "$OUT" " -. depends on .-> " && ok

CASE="graph of an invalid report exits 2 and prints nothing on stdout"
run 2 "$PMBOT" graph $F/invalid.md && expect_eq "$OUT" "" && expect_in "$ERR" "UNKNOWN_EPIC" && ok

CASE="inputs the fuzzer once crashed on are handled"
for f in tests/fixtures/fuzz-regressions/*.md; do
	"$PMBOT" validate "$f" >/dev/null 2>"$TMP/err"; st=$?
	if [ "$st" -eq 0 ] || [ "$st" -eq 2 ]; then ok; else fail "$f: exit $st: $(cat "$TMP/err")"; fi
done

CASE="errors that say what to do next"
U=$TMP/uncommitted
git init -q -b main "$U" && cp -R examples/plans examples/.github "$U/"
run 2 env GIT_CONFIG_GLOBAL=/dev/null "$PMBOT" plan --repo "$U" &&
	expect_in "$ERR" "no commit yet: pm-bot reads reports and configuration from git objects" &&
	expect_in "$ERR" "commit them first" && ok
run 2 "$PMBOT" plan --state "$TMP/none.json" "$U/plans/2026-q4-checkout.md" &&
	expect_in "$ERR" "REPO_NOT_ALLOWED" &&
	expect_in "$ERR" "no --repo was given, so pm-bot used its built-in default configuration" && ok
git -C "$U" -c user.name=t -c user.email=t@e add -A && git -C "$U" -c user.name=t -c user.email=t@e commit -qm plan
run 0 "$PMBOT" validate --repo "$U" --base HEAD --rev HEAD &&
	expect_in "$ERR" "no report changed between HEAD and HEAD: nothing to validate" && ok

CASE="the command reference is the help text, and the README's synopsis agrees with it"
scripts/gen-commands.sh "$PMBOT" >"$TMP/commands.md" &&
	{ cmp -s "$TMP/commands.md" docs/commands.md || fail "docs/commands.md is stale: run make docs"; } &&
	{ python3 - "$PMBOT" <<'PY' || fail "the README's synopsis disagrees with pm-bot help"; } && ok
import re, subprocess, sys
pmbot = sys.argv[1]
text = open("README.md", encoding="utf-8").read()
block = text.split("```sh\npm-bot validate", 1)[1].split("```", 1)[0]
bad = []
for line in ("pm-bot validate" + block).splitlines():
    m = re.match(r"\s*pm-bot ([a-z][a-z-]*)", line)
    if not m or m.group(1) == "help":
        continue
    cmd = m.group(1)
    out = subprocess.run([pmbot, "help", cmd], capture_output=True, text=True)
    if out.returncode != 0:
        bad.append("README names `pm-bot %s`, which `pm-bot help` does not know" % cmd)
        continue
    for opt in re.findall(r"(--[a-z][a-z-]*)", line.split("#", 1)[0]):
        if opt not in out.stdout:
            bad.append("README gives `pm-bot %s %s`, which its help does not list" % (cmd, opt))
for b in bad:
    print("FAIL [README synopsis]: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

finish
