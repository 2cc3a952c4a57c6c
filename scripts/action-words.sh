#!/usr/bin/env bash
# The arguments of the Action's `command:` input, NUL-terminated on stdout
# (action.yml reads them with mapfile -d ''). Run in the workspace.
#
#   PMBOT_COMMAND  the input: split at white space; a word with * ? or [ is
#                  a file glob (`**` included), like an unquoted shell word
#                  (no match: the word stays as written). Nothing else is
#                  interpreted: no quotes, variables or command substitution.
#   PMBOT_CONFIG   passed as `--config PATH` right after `action`, before
#                  the caller's own words so that a --config among them wins.
#
# A path a glob found that begins with '-' is passed as ./PATH: a committed
# file named `--state=x.md` or `--out=…` must never become an option.
set -euo pipefail
shopt -s globstar

set -f
# shellcheck disable=SC2206  # splitting is the point; globbing is off here
raw=(${PMBOT_COMMAND:-})
set +f
[ ${#raw[@]} -gt 0 ] || raw=(action)

out() { printf '%s\0' "$@"; }

out "${raw[0]}"
if [ "${raw[0]}" = action ] && [ -n "${PMBOT_CONFIG:-}" ]; then
	out --config "$PMBOT_CONFIG"
fi
for w in "${raw[@]:1}"; do
	case $w in
	*[*?[]*)
		# shellcheck disable=SC2206  # the glob is expanded on purpose
		matches=($w)
		for m in "${matches[@]}"; do
			if [[ $m == -* ]] && [[ -e $m || -L $m ]]; then
				m=./$m
			fi
			out "$m"
		done
		;;
	*) out "$w" ;;
	esac
done
