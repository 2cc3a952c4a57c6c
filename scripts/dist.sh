#!/usr/bin/env bash
# Writes the source tarball DISTDIR/pm-bot-VERSION.tar.gz (`make dist`):
#
#   scripts/dist.sh VERSION [DISTDIR]
#
# Every file is under pm-bot-VERSION/, with a VERSION file holding VERSION,
# so the tarball builds with a plain `make` and no git, and its
# `pm-bot --version` prints VERSION (scripts/version.sh reads the file first).
#
# A clean checkout gives the committed tree: `git archive HEAD` (export-ignore
# attributes apply). When tracked files have changes the version ends in
# "-dirty" and the tarball holds the work tree as `make` would build it: the
# tracked files as they are now, and untracked files that are not ignored.
#
# The same files give the same bytes: entries sorted by name, owner root,
# modes 644 or 755, every mtime SOURCE_DATE_EPOCH (default: the time of the
# HEAD commit), gzip without a name or time.
set -euo pipefail
export LC_ALL=C

die() { echo "dist.sh: $*" >&2; exit 1; }

version=${1:?usage: scripts/dist.sh VERSION [DISTDIR]}
distdir=${2:-.}
mkdir -p "$distdir"
distdir=$(cd "$distdir" && pwd -P)
top=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$top"

if ! command -v git >/dev/null 2>&1 ||
	[ "$(git rev-parse --show-toplevel 2>/dev/null)" != "$top" ]; then
	die "make dist needs a git checkout of pm-bot (this tree is not one)"
fi

name=pm-bot-$version
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/$name"

if [ -z "$(GIT_OPTIONAL_LOCKS=0 git status --porcelain --untracked-files=no)" ]; then
	git archive --format=tar HEAD | tar -x -C "$tmp/$name"
else
	echo "dist.sh: tracked files have uncommitted changes: packing the work tree as $name" >&2
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			# Deleted in the work tree but not yet from the index.
			if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
		done |
		tar --null --no-recursion -T - -cf - | tar -x -C "$tmp/$name"
fi
[ -f "$tmp/$name/Makefile" ] || die "no Makefile in the files to pack"
printf '%s\n' "$version" >"$tmp/$name/VERSION"

out=$distdir/$name.tar.gz
tar -C "$tmp" --sort=name --format=gnu --owner=0 --group=0 --numeric-owner \
	--mode='u=rwX,go=rX' --mtime="@$epoch" -cf - "$name" | gzip -9 -n >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
