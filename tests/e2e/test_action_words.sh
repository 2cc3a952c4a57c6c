#!/usr/bin/env bash
# The Action's `command:` input (scripts/action-words.sh, what action.yml
# runs): split and globbed like an unquoted shell word, nothing evaluated,
# and no file a pull request commits can become an option (issue 12, 16).
. "$(dirname "$0")/lib.sh"
WORDS=$(cd "$(dirname "$0")/../.." && pwd)/scripts/action-words.sh

# words COMMAND [CONFIG]: the arguments, one per line, in $W.
words() {
	W=$(cd "$TMP/ws" && PMBOT_COMMAND=$1 PMBOT_CONFIG=${2:-} "$WORDS" | tr '\0' '\n')
}

mkdir -p "$TMP/ws/plans/q" "$TMP/ws/--out=x"
touch "$TMP/ws/plans/a.md" "$TMP/ws/plans/q/b.md" "$TMP/ws/--state=.st.md" "$TMP/ws/-x.md"

CASE="a committed file named like an option is passed as a path"
words 'validate --json **/*.md'
expect_eq "$W" "validate
--json
./--state=.st.md
./-x.md
plans/a.md
plans/q/b.md" && ok

CASE="the caller's own options stay options"
words 'plan --format json --out plan.json plans/*.md'
expect_eq "$W" "plan
--format
json
--out
plan.json
plans/a.md" && ok

CASE="action gets --config first, so the caller's own --config wins"
words 'action --config other.yml' '.github/pm-bot.yml'
expect_eq "$W" "action
--config
.github/pm-bot.yml
--config
other.yml" && ok

CASE="an empty command is action"
words '' 'cfg.yml'
expect_eq "$W" "action
--config
cfg.yml" && ok

CASE="a glob with no match stays as written"
words 'validate nothing/*.md'
expect_eq "$W" "validate
nothing/*.md" && ok

CASE="nothing is evaluated"
words 'validate $(touch pwned) `touch pwned2` ${HOME} "a b"'
expect_eq "$W" 'validate
$(touch
pwned)
`touch
pwned2`
${HOME}
"a
b"' && [ ! -e "$TMP/ws/pwned" ] && [ ! -e "$TMP/ws/pwned2" ] && ok

CASE="the real binary takes a dash-named report as a file, not an option"
if [ -n "${PMBOT:-}" ]; then
	mkdir -p "$TMP/ws2"
	cp "$(dirname "$0")/../../examples/plans/2026-q4-checkout.md" "$TMP/ws2/--out=evil.md"
	W=$(cd "$TMP/ws2" && PMBOT_COMMAND='validate *.md' "$WORDS" | tr '\0' '\n')
	mapfile -t args <<<"$W"
	(cd "$TMP/ws2" && "$PMBOT" "${args[@]}") >"$TMP/out" 2>&1
	st=$?
	expect_eq "$st" 0 && expect_in "$(cat "$TMP/out")" "./--out=evil.md: valid" &&
		[ ! -e "$TMP/ws2/evil.md" ] && ok
fi

finish
