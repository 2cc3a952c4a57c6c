#!/usr/bin/env bash
# docs/schemas/report-ir.v1.schema.json and pm-bot's schema layer give the same verdicts.
cd "$(dirname "$0")/../.."
: "${PMBOT:?set PMBOT to the pm-bot binary}"
exec /usr/bin/python3 tests/schema/agreement.py "$PMBOT"
