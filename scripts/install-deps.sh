#!/usr/bin/env bash
# Installs the Debian packages pm-bot builds and tests with, only when one is
# missing; uses sudo only when not root. Safe to run again.
set -euo pipefail

# curl: the end-to-end tests talk to the GitHub emulator with it; groff-base:
# test_install.sh renders the manual page (neither is in a minimal Debian).
packages=(build-essential pkg-config libgit2-dev libcurl4-openssl-dev libjansson-dev
	libyaml-dev libcmark-gfm-dev libcmark-gfm-extensions-dev libssl-dev libcmocka-dev git
	python3 python3-jsonschema curl groff-base)
# The GitHub emulator used by the tests runs on Node.js (20 on this project's machines);
# Debian's own nodejs is installed only when there is no node at all.
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)
# Extra tools some targets need: named on the command line (for example `clang` for make fuzz).
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
