#!/usr/bin/env bash
# End to end: installing like a Unix tool. make install / uninstall (PREFIX,
# DESTDIR, BINDIR, MANDIR), the pm-bot(1) page made from `pm-bot help`, the
# version (scripts/version.sh: VERSION file, git describe, base), and
# make dist: a deterministic tarball that builds on its own without git.
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh || exit 1
: "${PMBOT:?set PMBOT to the pm-bot binary}"
SRC=$(pwd -P)

# check DESCRIPTION CMD...: CMD must succeed.
check() {
	local what=$1
	shift
	if "$@"; then ok; else fail "$what"; fi
}

# Whether this tree is a git checkout of its own (what scripts/version.sh asks).
is_checkout() { [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$SRC" ]; }

# make as a person runs it, not as a sub-make of `make test` (no jobserver,
# -j or command-line variables of the outer make). BUILD is the build $PMBOT
# comes from; SANITIZE and DEVELOPER still come from the environment, so
# anything make rebuilds there is built with the same flags.
case "$PMBOT" in
"$SRC"/*) B=${PMBOT#"$SRC"/} ;;
*) B=$PMBOT ;;
esac
B=${B%/pm-bot}
if [ -z "${SANITIZE:-}" ] && grep -qa __asan_init "$PMBOT"; then export SANITIZE=1; fi
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u SOURCE_DATE_EPOCH \
		make --no-print-directory "$@"
}

# The roff spelling of a word: what the page has for `pm-bot help`'s text.
roff() { printf '%s' "$1" | sed 's/\\/\\e/g; s/-/\\-/g'; }

CASE="make install PREFIX DESTDIR"
DEST=$TMP/dest
PFX=/opt/pm-bot-test
BIN_I=$DEST$PFX/bin/pm-bot
MAN_I=$DEST$PFX/share/man/man1/pm-bot.1
if run 0 mk install BUILD="$B" PREFIX="$PFX" DESTDIR="$DEST"; then
	ok
	check "$BIN_I is installed with mode 755" [ "$(stat -c %a "$BIN_I" 2>&1)" = 755 ]
	check "$MAN_I is installed with mode 644" [ "$(stat -c %a "$MAN_I" 2>&1)" = 644 ]
	check "the installed binary is \$PMBOT as built" cmp -s "$BIN_I" "$PMBOT"
	check "the installed page is $B/pm-bot.1" cmp -s "$MAN_I" "$B/pm-bot.1"
	FILES=$(cd "$DEST" && find . ! -type d | sort | tr '\n' ' ')
	expect_eq "$FILES" "./opt/pm-bot-test/bin/pm-bot ./opt/pm-bot-test/share/man/man1/pm-bot.1 " && ok
	cp "$MAN_I" "$TMP/pm-bot.1"
fi

CASE="the installed binary prints the build's version"
V=$(mk -s BUILD="$B" print-version)
check "make print-version prints a version, not [$V]" grep -Eqx '[A-Za-z0-9._+-]+' <<<"$V"
run 0 "$BIN_I" --version && expect_in "$OUT" "pm-bot $V (libgit2 " && ok
VLINE=$OUT
run 0 "$PMBOT" version && expect_eq "$OUT" "$VLINE" && ok
run 0 "$BIN_I" help version && expect_in "$OUT" "pm-bot --version" && ok
if [ ! -f VERSION ] && is_checkout &&
	! git describe --tags --exact-match --match 'v[0-9]*' --match '[0-9]*' >/dev/null 2>&1; then
	# Untagged: the commit is in the version.
	expect_in "$V" "-g$(git rev-parse --short HEAD)" && ok
fi

CASE="the manual page covers every command of pm-bot help"
M=$TMP/pm-bot.1
NAMES=$("$PMBOT" help | awk '/^Commands:$/ { on = 1; next } on && NF == 0 { exit } on { print $1 }')
check "pm-bot help lists commands" [ "$(wc -w <<<"$NAMES")" -ge 10 ]
check ".TH names the page and the version" grep -qxE "^\.TH PM\\\\-BOT 1 \"[0-9-]*\" \"pm\\\\-bot $(roff "$V" | sed 's/[.\\+]/\\&/g')\" \"User Commands\"$" "$M"
for n in $NAMES; do
	check "no subsection for command $n" grep -qxF ".SS $(roff "$n")" "$M"
done
for s in NAME SYNOPSIS DESCRIPTION COMMANDS "EXIT STATUS" ENVIRONMENT "SEE ALSO"; do
	check "no section $s" grep -qxF ".SH $s" "$M"
done
check "GH_TOKEN is under ENVIRONMENT" grep -qxF ".B GH_TOKEN" "$M"
# Every control line is one of the macros the generator writes: a help line
# starting with "." or "'" must have come out escaped.
BAD=$(grep -nE "^[.']" "$M" | grep -vE "^[0-9]+:\.(\\\\\"|TH|SH|SS|PP|TP|nf|fi|B|BR|ad|nh)( |$)")
expect_eq "$BAD" "" && ok
check "a help line starting with '.' is escaped" grep -qF '\&.pm\-bot/state.json' "$M"

CASE="the manual page is deterministic"
SOURCE_DATE_EPOCH=86400 scripts/gen-man.sh "$PMBOT" >"$TMP/a.1"
SOURCE_DATE_EPOCH=86400 scripts/gen-man.sh "$PMBOT" >"$TMP/b.1"
check "two runs differ" cmp -s "$TMP/a.1" "$TMP/b.1"
check "SOURCE_DATE_EPOCH is not the date" grep -qF '.TH PM\-BOT 1 "1970-01-02"' "$TMP/a.1"
env -u SOURCE_DATE_EPOCH scripts/gen-man.sh "$PMBOT" >"$TMP/c.1"
check "without SOURCE_DATE_EPOCH the footer has a date" grep -qxF '.TH PM\-BOT 1 "" "pm\-bot '"$(roff "$V")"'" "User Commands"' "$TMP/c.1"
check "the page differs from make's beyond the date" cmp -s <(grep -v '^\.TH ' "$TMP/c.1") <(grep -v '^\.TH ' "$M")

CASE="the manual page renders cleanly and holds every line of every help text"
if command -v groff >/dev/null 2>&1; then
	groff -man -Tascii -P-c -ww -rLL=5000n -rHY=0 "$M" 2>"$TMP/groff.err" | sed 's/.\x08//g' >"$TMP/page.txt"
	expect_eq "$(cat "$TMP/groff.err")" "" && ok
	# Whitespace squeezed: roff fills paragraphs and indents options.
	PAGE=" $(tr -s ' \t\n' '   ' <"$TMP/page.txt") "
	missing=0
	for n in "" $NAMES; do
		while IFS= read -r l; do
			l=${l#usage: }
			[ -z "$n" ] && l=${l#Exit status: }
			l=$(tr -s ' \t' '  ' <<<"$l")
			l=${l# }
			[ -z "$l" ] && continue
			case "$PAGE" in
			*" $l "*) ;;
			*) fail "pm-bot help $n: [$l] is not in the rendered page"; missing=$((missing + 1)) ;;
			esac
		done < <(if [ -n "$n" ]; then "$PMBOT" help "$n"; else "$PMBOT" help; fi |
			sed '/^Commands:$/,/^$/d')
	done
	[ "$missing" -eq 0 ] && ok
else
	echo "$(basename "$0"): groff not installed: rendering not checked"
fi

CASE="make uninstall removes exactly what install wrote"
: >"$DEST$PFX/bin/other-tool"
run 0 mk uninstall BUILD="$B" PREFIX="$PFX" DESTDIR="$DEST" && ok
FILES=$(cd "$DEST" && find . ! -type d | sort | tr '\n' ' ')
expect_eq "$FILES" "./opt/pm-bot-test/bin/other-tool " && ok

CASE="BINDIR and MANDIR override PREFIX's directories"
run 0 mk install BUILD="$B" PREFIX=/nowhere BINDIR=/usr/sbin MANDIR=/usr/man DESTDIR="$TMP/dest2" && {
	FILES=$(cd "$TMP/dest2" && find . ! -type d | sort | tr '\n' ' ')
	expect_eq "$FILES" "./usr/man/man1/pm-bot.1 ./usr/sbin/pm-bot "
} && ok
run 0 mk uninstall BUILD="$B" PREFIX=/nowhere BINDIR=/usr/sbin MANDIR=/usr/man DESTDIR="$TMP/dest2" &&
	expect_eq "$(cd "$TMP/dest2" && find . ! -type d)" "" && ok

# A small repository of its own (the build files and scripts of this tree)
# for what depends on git's state: tags, commits, changes.
CASE="scripts/version.sh: VERSION file, git describe, base"
R=$TMP/repo
mkdir -p "$R/scripts" "$R/mk"
cp Makefile README.md .gitignore "$R/"
cp scripts/*.sh "$R/scripts/"
cp mk/*.mk "$R/mk/"
# git in that repository, whatever the user's configuration.
g() {
	GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
		GIT_AUTHOR_DATE=@1700000000 GIT_COMMITTER_DATE=@1700000000 \
		git -C "$R" -c init.defaultBranch=main -c user.name=pm-bot-test \
		-c user.email=test@example.invalid -c commit.gpgsign=false -c tag.gpgsign=false "$@"
}
ver() { sh "$R/scripts/version.sh" 7.7.7; }
g init -q && g add -A && g commit -q -m one
SHA=$(g rev-parse --short HEAD)
expect_eq "$(ver)" "7.7.7-g$SHA" && ok
echo "a change" >>"$R/README.md"
expect_eq "$(ver)" "7.7.7-g$SHA-dirty" && ok
echo new >"$R/NEW-FILE"
mkdir -p "$R/build" && echo junk >"$R/build/junk"

CASE="make dist of a tree with changes: the work tree, deterministic"
run 0 mk -C "$R" dist DISTDIR="$TMP/dd" && expect_in "$ERR" "uncommitted changes" && ok
T=$TMP/dd/pm-bot-0.1.0-g$SHA-dirty.tar.gz
check "no $T" [ -f "$T" ]
check "the tarball's VERSION is not the version" [ "$(tar -xzOf "$T" "pm-bot-0.1.0-g$SHA-dirty/VERSION" 2>&1)" = "0.1.0-g$SHA-dirty" ]
check "the changed README.md is not in the tarball" grep -q "a change" <(tar -xzOf "$T" "pm-bot-0.1.0-g$SHA-dirty/README.md")
LIST=$(tar -tzf "$T")
expect_in "$LIST" "pm-bot-0.1.0-g$SHA-dirty/NEW-FILE" && ok
case "$LIST" in *build/junk* | *.git/*) fail "ignored or git files in the tarball: $LIST" ;; *) ok ;; esac
cp "$T" "$TMP/first.tar.gz"
run 0 mk -C "$R" dist DISTDIR="$TMP/dd" && check "two make dist differ" cmp -s "$T" "$TMP/first.tar.gz"

CASE="a tag gives the version; untracked files do not make it dirty"
g checkout -q -- README.md
g tag v9.8.7
expect_eq "$(ver)" "9.8.7" && ok
run 0 mk -C "$R" -s print-version && expect_eq "$OUT" "9.8.7" && ok

CASE="make dist of a clean checkout: the committed tree"
run 0 mk -C "$R" dist DISTDIR="$TMP/dc" && expect_eq "$OUT" "$TMP/dc/pm-bot-9.8.7.tar.gz" && ok
T=$TMP/dc/pm-bot-9.8.7.tar.gz
LIST=$(tar -tzf "$T")
expect_in "$LIST" "pm-bot-9.8.7/mk/install.mk" && ok
case "$LIST" in *NEW-FILE*) fail "an untracked file in a clean tarball" ;; *) ok ;; esac
check "a file outside pm-bot-9.8.7/" [ -z "$(grep -v '^pm-bot-9\.8\.7/' <<<"$LIST")" ]
expect_eq "$(tar -xzOf "$T" pm-bot-9.8.7/VERSION)" "9.8.7" && ok
check "scripts keep their mode" grep -q '^-rwxr-xr-x 0/0 .* pm-bot-9.8.7/scripts/version.sh$' <(tar -tvzf "$T")
cp "$T" "$TMP/first.tar.gz"
run 0 mk -C "$R" dist DISTDIR="$TMP/dc" && check "two make dist differ" cmp -s "$T" "$TMP/first.tar.gz"

CASE="commits after a tag, and a VERSION file over git"
g commit -q --allow-empty -m two
expect_eq "$(ver)" "9.8.7-1-g$(g rev-parse --short HEAD)" && ok
echo 1.2.3 >"$R/VERSION"
expect_eq "$(ver)" "1.2.3" && ok
rm -rf "$R/.git" "$R/VERSION"
expect_eq "$(ver)" "7.7.7" && ok
run 2 mk -C "$R" dist DISTDIR="$TMP/dn" && expect_in "$ERR" "needs a git checkout" && ok

CASE="make dist of this tree builds on its own, without git"
if is_checkout; then
	# The version again: a commit since print-version would change it.
	run 0 mk dist DISTDIR="$TMP/dist" && ok
	T=$(tail -n1 <<<"$OUT")
	V=${T##*/pm-bot-}
	V=${V%.tar.gz}
	check "make dist printed [$T], not the tarball in DISTDIR" [ "$T" = "$TMP/dist/pm-bot-$V.tar.gz" ] && [ -f "$T" ]
	expect_eq "$(tar -xzOf "$T" "pm-bot-$V/VERSION")" "$V" && ok
	LIST=$(tar -tzf "$T")
	missing=0
	while IFS= read -r f; do
		[ -f "$f" ] || continue # deleted in the work tree
		grep -qxF "pm-bot-$V/$f" <<<"$LIST" || { fail "tracked $f is not in the tarball"; missing=1; }
	done < <(git ls-files)
	[ "$missing" -eq 0 ] && ok
	mkdir -p "$TMP/x/shim"
	printf '#!/bin/sh\necho "git $*" >>"%s"\nexit 1\n' "$TMP/x/git.log" >"$TMP/x/shim/git"
	chmod +x "$TMP/x/shim/git"
	tar -xzf "$T" -C "$TMP/x"
	# A plain `make -j2` as a user types it, with a git that records its calls.
	if (cd "$TMP/x/pm-bot-$V" && unset BUILD SANITIZE DEVELOPER HARDEN CFLAGS LDFLAGS &&
		export PATH="$TMP/x/shim:$PATH" && mk -j2 >"$TMP/x/build.log" 2>&1); then
		ok
	else
		fail "the tarball does not build: $(tail -n 20 "$TMP/x/build.log")"
	fi
	check "the build ran git: $(cat "$TMP/x/git.log" 2>/dev/null)" [ ! -e "$TMP/x/git.log" ]
	run 0 "$TMP/x/pm-bot-$V/build/pm-bot" --version && expect_in "$OUT" "pm-bot $V (" && ok
	check "the tarball's build has no man page" grep -q "^\.TH PM\\\\-BOT 1 " "$TMP/x/pm-bot-$V/build/pm-bot.1"
else
	echo "$(basename "$0"): not a git checkout: make dist not checked"
fi

finish
