#!/usr/bin/env bash
# ensure-tmux.sh: make sure tmux is on PATH, for the test that drives the built kubectl-hami's terminal UI in
# a real terminal (internal/tui/tmux_test.go: send-keys, capture-pane). When tmux is there already nothing
# happens; otherwise Debian's tmux package is installed with apt-get, through sudo unless running as root.
set -euo pipefail

log() { printf '[ensure-tmux] %s\n' "$*" >&2; }

if command -v tmux >/dev/null 2>&1; then
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	log "tmux is not on PATH and apt-get is missing: install tmux yourself (https://github.com/tmux/tmux/wiki/Installing)"
	exit 1
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
	if ! command -v sudo >/dev/null 2>&1; then
		log "tmux is not on PATH; installing it needs root, and sudo is missing: run this script as root"
		exit 1
	fi
	SUDO=(sudo)
fi

log "tmux is not on PATH: installing Debian's tmux"
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends tmux

if ! command -v tmux >/dev/null 2>&1; then
	log "tmux is installed but still not on PATH"
	exit 1
fi
log "installed $(command -v tmux) ($(tmux -V))"
