#!/usr/bin/env bash
# The modules of src/ depend one way, measured from the objects the compiler
# made (not from #include lines, which can lie in both directions): module A
# depends on module B when an object of src/A/ uses a symbol that an object
# of src/B/ defines. Each module may use only modules listed before it in
# LAYERS; a use of a later one (which is how every cycle starts) fails.
#
#   scripts/check-layers.sh OBJDIR        check; print each offending symbol
#   scripts/check-layers.sh --graph OBJDIR  print the module graph, lowest first
#
# OBJDIR is $(BUILD)/obj. A new folder under src/ must be placed in LAYERS.
set -euo pipefail

LAYERS="util doc report workgraph render repo source state net github llm backend plan apply action"

graph=0
if [ "${1:-}" = --graph ]; then
	graph=1
	shift
fi
objdir=${1:?usage: check-layers.sh [--graph] OBJDIR}

rank() {
	local i=0 m
	for m in $LAYERS; do
		[ "$m" = "$1" ] && { echo "$i"; return; }
		i=$((i + 1))
	done
	echo -1
}

bad=0
for d in "$objdir"/src/*/; do
	m=$(basename "$d")
	[ -d "$(dirname "$0")/../src/$m" ] || continue
	if [ "$(rank "$m")" -lt 0 ]; then
		echo "check-layers: src/$m/ is not in LAYERS (scripts/check-layers.sh): place it" >&2
		bad=1
	fi
done
[ "$bad" = 0 ] || exit 1

# "D module symbol" for definitions, "U module symbol object" for uses.
root=$(cd "$(dirname "$0")/.." && pwd)
syms=$(for o in "$objdir"/src/*/*.o; do
	m=$(basename "$(dirname "$o")")
	# An object left behind by a moved or deleted source is not the code.
	[ -f "$root/src/$m/$(basename "$o" .o).c" ] || continue
	nm -P "$o" | awk -v m="$m" -v o="${o#"$objdir"/}" \
		'$2 ~ /^[TDBRCV]$/ { print "D", m, $1 } $2 == "U" { print "U", m, $1, o }'
done)

# "user used symbol object", one per cross-module use.
# Definitions first: an object may use what a later one defines.
uses=$(LC_ALL=C sort -s -k1,1 <<<"$syms" | awk '$1 == "D" { def[$3] = $2; next }
	($3 in def) && def[$3] != $2 { print $2, def[$3], $3, $4 }' | LC_ALL=C sort -u)

if [ "$graph" = 1 ]; then
	for m in $LAYERS; do
		deps=$(awk -v m="$m" '$1 == m { print $2 }' <<<"$uses" | sort -u | tr '\n' ' ')
		printf '%-10s -> %s\n' "$m" "${deps:-(nothing)}"
	done
	exit 0
fi

while read -r user used sym obj; do
	[ -n "$user" ] || continue
	if [ "$(rank "$used")" -gt "$(rank "$user")" ]; then
		echo "check-layers: $obj ($user) uses $sym from $used, a higher layer" >&2
		bad=1
	fi
done <<<"$uses"
if [ "$bad" = 0 ]; then
	echo "check-layers: $(wc -l <<<"$uses" | tr -d ' ') cross-module uses, all downward ($LAYERS)"
fi
exit "$bad"
