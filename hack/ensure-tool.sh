#!/usr/bin/env bash
# ensure-tool.sh COMMAND PACKAGE HELP-URL: make sure COMMAND is on PATH for the tests that need it. When it is
# there already (any version) nothing happens; otherwise Debian's PACKAGE is installed with apt-get, through
# sudo unless running as root. Used by hack/ensure-kubectl.sh and hack/ensure-tmux.sh.
set -euo pipefail

if [[ $# -ne 3 ]]; then
	echo "usage: $0 COMMAND PACKAGE HELP-URL" >&2
	exit 2
fi
cmd=$1 pkg=$2 help=$3

log() { printf '[ensure-%s] %s\n' "$cmd" "$*" >&2; }

if command -v "$cmd" >/dev/null 2>&1; then
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	log "$cmd is not on PATH and apt-get is missing: install $cmd yourself ($help)"
	exit 1
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
	if ! command -v sudo >/dev/null 2>&1; then
		log "$cmd is not on PATH; installing it needs root, and sudo is missing: run this script as root"
		exit 1
	fi
	SUDO=(sudo)
fi

log "$cmd is not on PATH: installing Debian's $pkg"
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$pkg"

if ! command -v "$cmd" >/dev/null 2>&1; then
	log "$pkg is installed but $cmd is still not on PATH"
	exit 1
fi
log "installed $(command -v "$cmd")"
