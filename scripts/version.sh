#!/bin/sh
# Prints pm-bot's version; the Makefile's VERSION comes from here.
#
#   scripts/version.sh BASE
#
# 1. A VERSION file at the top of the source tree wins: `make dist` writes
#    one into every tarball, so a tarball builds without git.
# 2. In a git checkout, `git describe --tags` against tags named v1.2.3 (or
#    1.2.3), without the "v": 1.2.3 on the tagged commit, 1.2.3-4-gabc1234
#    four commits later. With no such tag: BASE-g<abbreviated commit>.
#    "-dirty" is appended when tracked files differ from HEAD (untracked
#    files do not count, as with `git describe --dirty`).
# 3. Otherwise (a plain copy of the sources): BASE.
#
# Read-only: the dirty check runs with GIT_OPTIONAL_LOCKS=0, so building
# never rewrites .git/index under someone else's git command.
# Characters other than letters, digits and . _ + - become "_": the result
# goes into a C string, a file name and a man page.
set -eu

base=${1:?usage: scripts/version.sh BASE}
top=$(cd "$(dirname "$0")/.." && pwd -P)

from_git() {
	command -v git >/dev/null 2>&1 || return 1
	# Only this tree's own repository, not one it happens to sit inside.
	gtop=$(git -C "$top" rev-parse --show-toplevel 2>/dev/null) || return 1
	[ "$(cd "$gtop" && pwd -P)" = "$top" ] || return 1
	if v=$(git -C "$top" describe --tags --match 'v[0-9]*' --match '[0-9]*' 2>/dev/null); then
		v=${v#v}
	elif sha=$(git -C "$top" rev-parse --short HEAD 2>/dev/null); then
		v=$base-g$sha
	else
		return 1
	fi
	changes=$(GIT_OPTIONAL_LOCKS=0 git -C "$top" status --porcelain --untracked-files=no 2>/dev/null) || return 1
	[ -z "$changes" ] || v=$v-dirty
	printf '%s\n' "$v"
}

if [ -f "$top/VERSION" ]; then
	v=$(sed -n '1p' "$top/VERSION")
elif ! v=$(from_git); then
	v=$base
fi
[ -n "$v" ] || v=$base
printf '%s\n' "$v" | LC_ALL=C sed 's/[^A-Za-z0-9._+-]/_/g'
