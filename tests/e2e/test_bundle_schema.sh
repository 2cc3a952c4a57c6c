#!/usr/bin/env bash
# Bundles pm-bot writes validate against docs/schemas/changeset-bundle.v1.schema.json,
# before and after an apply (creates, then updates/labels/fields).
cd "$(dirname "$0")/../.."
. tests/e2e/lib.sh
: "${PMBOT:?set PMBOT to the pm-bot binary}"
ROOT=$PWD
R=$TMP/repo
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 PMBOT_NOW=2026-11-22T12:00:00Z
g() { git -C "$R" -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false "$@"; }
check_schema() {
	/usr/bin/python3 - "$ROOT/docs/schemas/changeset-bundle.v1.schema.json" "$1" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))))
for e in errors[:5]:
    print(f"{list(e.absolute_path)}: {e.message}", file=sys.stderr)
sys.exit(1 if errors else 0)
PY
}

git init -q -b main "$R"
cp -R "$ROOT/examples/plans" "$ROOT/examples/.github" "$R/"
mkdir -p "$R/.pm-bot" && cp "$ROOT/examples/state.json" "$R/.pm-bot/state.json"
g add plans .github && g commit -qm one

CASE="a plan of creates matches the schema"
run 0 "$PMBOT" plan --repo "$R" --out "$TMP/p1.json" --format json && check_schema "$TMP/p1.json" && ok

CASE="a plan of updates, labels and fields matches the schema"
hash=$(sed -n 's/.*"plan_hash":"\([0-9a-f]*\)".*/\1/p' "$TMP/p1.json")
run 0 "$PMBOT" apply --repo "$R" --plan "$TMP/p1.json" --approve "$hash" && ok
sed -i 's/    priority: P3/    priority: P1/; s/estimate_hrs: 16/estimate_hrs: 20/' "$R/plans/2026-q4-checkout.md"
g commit -qam two
run 0 "$PMBOT" plan --repo "$R" --out "$TMP/p2.json" --format json && {
	expect_in "$OUT" '"operation":"set_project_field"' && expect_in "$OUT" '"operation":"add_labels"' &&
	check_schema "$TMP/p2.json"
} && ok

finish
