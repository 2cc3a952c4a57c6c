#!/usr/bin/env bash
# `make demo`: the main job on the bundled example, no network needed.
set -euo pipefail
BIN=${1:-build/pm-bot}
EX=examples/plans/2026-q4-checkout.md

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "$2"; }

step "Validate the example report" "pm-bot validate $EX"
"$BIN" validate "$EX"

step "Its WorkGraph as a tree" "pm-bot graph --format tree $EX"
"$BIN" graph --format tree "$EX"

step "The same graph as Mermaid" "pm-bot graph --format mermaid $EX"
"$BIN" graph --format mermaid "$EX"

step "And as canonical JSON (workgraph/v1)" "pm-bot graph $EX"
"$BIN" graph "$EX"
