#!/bin/sh
# Writes the pm-bot(1) manual page (roff, man macros) to standard output,
# made from the text the binary itself prints, so the page and `pm-bot help`
# never disagree:
#
#   scripts/gen-man.sh PMBOT > pm-bot.1
#
#   pm-bot help           SYNOPSIS (its usage lines), NAME and DESCRIPTION
#                         (its prose), the command list, EXIT STATUS
#   pm-bot help COMMAND   one subsection of COMMANDS per command, in the
#                         order of the list: usage lines, prose, options
#   pm-bot --version      the version in the page's footer
#
# The ENVIRONMENT section lists the GH_*, GITHUB_* and PM_BOT_* variables the
# command texts name. The same binary gives the same bytes: the date in the
# footer is SOURCE_DATE_EPOCH's when that is set, and empty otherwise.
#
# In the help texts a line "usage: ..." and the indented lines under it are
# usage lines, an indented line starting with "-" is an option (the option
# and its arguments, then two spaces or an argument that is not in capitals,
# then the description; deeper-indented lines continue it), anything else is
# prose; blank lines separate paragraphs.
set -eu
export LC_ALL=C

die() { echo "gen-man.sh: $*" >&2; exit 1; }

bin=${1:-}
[ -x "${bin:-/nonexistent}" ] || die "usage: scripts/gen-man.sh PMBOT > pm-bot.1"

version=$("$bin" --version | sed -n '1s/^pm-bot \([^ ]*\).*/\1/p')
[ -n "$version" ] || die "$bin --version printed no version"

date=
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
	date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d 2>/dev/null ||
		date -u -r "$SOURCE_DATE_EPOCH" +%Y-%m-%d) ||
		die "SOURCE_DATE_EPOCH is not a number of seconds: $SOURCE_DATE_EPOCH"
fi

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

# Every text, each after a line "\001overview" or "\001command NAME".
overview=$("$bin" help) || die "$bin help failed"
names=$(printf '%s\n' "$overview" | awk '/^Commands:$/ { on = 1; next } on && NF == 0 { exit } on { print $1 }')
[ -n "$names" ] || die "$bin help lists no commands"
{
	printf '\001overview\n%s\n' "$overview"
	for name in $names; do
		text=$("$bin" help "$name") || die "$bin help $name failed"
		printf '\001command %s\n%s\n' "$name" "$text"
	done
} >"$tmp"

awk -v version="$version" -v date="$date" '
# Roff text: backslashes, hyphen-minus (options must copy as "-"), quotes
# and backquotes kept as typed, no control character at the start.
function esc(s,    out, i, c) {
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\") out = out "\\e"
		else if (c == "-") out = out "\\-"
		else if (c == "`") out = out "\\(ga"
		else if (c == "\047") out = out "\\(aq"
		else out = out c
	}
	return out
}
function text(s) {
	s = esc(s)
	if (substr(s, 1, 1) == ".") s = "\\&" s
	return s
}
function emit(t, s) { buf[t] = buf[t] s "\n" }

# An option line: OPT_TERM (the option and its arguments) and OPT_DESC.
function option(s,    w, rest) {
	sub(/^ +/, "", s)
	if (match(s, /  +/)) {
		OPT_TERM = substr(s, 1, RSTART - 1)
		OPT_DESC = substr(s, RSTART + RLENGTH)
		return
	}
	OPT_TERM = ""
	rest = s
	while (rest != "") {
		if (match(rest, / +/)) { w = substr(rest, 1, RSTART - 1) } else { w = rest }
		if (OPT_TERM != "" && w !~ /^[A-Z][A-Z0-9_.\/|-]*$/ && w !~ /\|/) break
		OPT_TERM = OPT_TERM == "" ? w : OPT_TERM " " w
		rest = (w == rest) ? "" : substr(rest, RSTART + RLENGTH)
	}
	OPT_DESC = rest
}
function term(t,    n, w, i, out) {
	n = split(t, w, " ")
	out = "\\fB" esc(w[1]) "\\fR"
	for (i = 2; i <= n; i++) out = out " \\fI" esc(w[i]) "\\fR"
	return out
}

function end_block(t) {
	if (mode == "usage") emit(t, ".fi")
	mode = ""
}
# One line of a help text into section t.
function body(t, l) {
	if (l ~ /^[ \t]*$/) { end_block(t); return }
	if (mode == "usage") {
		if (l ~ /^ /) {
			if (substr(l, 1, 7) == "       ") l = substr(l, 8)
			emit(t, text(l))
			return
		}
		end_block(t)
	}
	if (mode == "" && l ~ /^usage: /) {
		if (buf[t] != "") emit(t, ".PP")
		emit(t, ".nf")
		emit(t, text(substr(l, 8)))
		mode = "usage"
		return
	}
	if (l ~ /^ +-/) {
		option(l)
		emit(t, ".TP")
		emit(t, term(OPT_TERM))
		if (OPT_DESC != "") emit(t, text(OPT_DESC))
		mode = "opt"
		return
	}
	sub(/^[ \t]+/, "", l)
	if (mode != "para" && mode != "opt") {
		if (buf[t] != "") emit(t, ".PP")
		mode = "para"
	}
	emit(t, text(l))
}

# The GH_*, GITHUB_* and PM_BOT_* variables a line names, for ENVIRONMENT.
function note_env(l, cmd,    v) {
	while (match(l, /(GH|GITHUB|PM_BOT)_[A-Z0-9_]*[A-Z0-9]/)) {
		v = substr(l, RSTART, RLENGTH)
		l = substr(l, RSTART + RLENGTH)
		if (!(v in env)) { env[v] = ""; nenv++; envname[nenv] = v }
		if (index(" " env[v] " ", " " cmd " ") == 0) env[v] = env[v] == "" ? cmd : env[v] " " cmd
	}
}

/^\001overview$/ { sect = "overview"; part = "synopsis"; mode = ""; next }
/^\001command / {
	end_block("commands")
	sect = "command"; cmd = substr($0, 10); mode = ""
	emit("commands", ".SS " text(cmd))
	if (cmd in summary)
		emit("commands", text(toupper(substr(summary[cmd], 1, 1)) substr(summary[cmd], 2) "."))
	next
}
sect == "overview" {
	if (part == "list") {
		if (NF == 0) { part = "description"; mode = ""; next }
		summary[$1] = $0
		sub(/^ *[^ ]+ +/, "", summary[$1])
		next
	}
	if ($0 == "Commands:") { end_block(part); part = "list"; next }
	if (part == "synopsis" && mode == "" && $0 !~ /^usage: / && NF > 0) part = "description"
	if (part == "description" && NF > 0 && $0 !~ /^ /) {
		if (!have_name) { name_text = name_text (name_text == "" ? "" : " ") $0 }
		if ($0 ~ /^Exit status: /) { end_block(part); part = "exit"; sub(/^Exit status: /, "") }
	}
	if (NF == 0 && name_text != "") have_name = 1
	body(part, $0)
	next
}
sect == "command" { note_env($0, cmd); body("commands", $0) }

END {
	end_block("commands")
	# NAME: the first sentence of the description, without "pm-bot" and
	# without its parentheses.
	n = name_text
	sub(/\. .*/, "", n); sub(/\.$/, "", n)
	gsub(/ \([^)]*\)/, "", n)
	sub(/^pm-bot /, "", n)

	print ".\\\" pm-bot(1), generated by scripts/gen-man.sh from `pm-bot help`: do not edit."
	printf ".TH PM\\-BOT 1 \"%s\" \"pm\\-bot %s\" \"User Commands\"\n", date, esc(version)
	# Ragged right and no hyphenation: the texts are full of identifiers.
	print ".ad l"
	print ".nh"
	print ".SH NAME"
	print "pm\\-bot \\- " esc(n)
	print ".SH SYNOPSIS"
	printf "%s", buf["synopsis"]
	print ".SH DESCRIPTION"
	printf "%s", buf["description"]
	print ".SH COMMANDS"
	printf "%s", buf["commands"]
	print ".SH EXIT STATUS"
	printf "%s", buf["exit"]
	print ".PP"
	print "Each command lists its own exit statuses under COMMANDS."
	if (nenv > 0) {
		# Insertion sort: awk has no portable sort.
		for (i = 2; i <= nenv; i++)
			for (j = i; j > 1 && envname[j - 1] > envname[j]; j--) {
				v = envname[j]; envname[j] = envname[j - 1]; envname[j - 1] = v
			}
		print ".SH ENVIRONMENT"
		for (i = 1; i <= nenv; i++) {
			print ".TP"
			print ".B " esc(envname[i])
			k = split(env[envname[i]], c, " ")
			s = "See"
			for (j = 1; j <= k; j++) s = s (j > 1 ? "," : "") " \\fB" esc(c[j]) "\\fR"
			print s " under COMMANDS."
		}
	}
	print ".SH SEE ALSO"
	print ".BR git (1)"
	print ".PP"
	print "README.md and the guides under docs/ in pm\\-bot\\(aqs source distribution."
}
' "$tmp"
