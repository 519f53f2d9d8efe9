#!/usr/bin/env bash
# ensure-kubectl.sh: make sure a kubectl is on PATH, for the test that runs kubectl-hami as a kubectl plugin
# (internal/cli/integration_plugin_test.go). When one is there already (any version: plugins only need
# kubectl to find kubectl-hami on PATH) nothing happens; otherwise Debian's kubernetes-client package is
# installed with apt-get, through sudo unless running as root.
set -euo pipefail

log() { printf '[ensure-kubectl] %s\n' "$*" >&2; }

if command -v kubectl >/dev/null 2>&1; then
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	log "kubectl is not on PATH and apt-get is missing: install kubectl yourself (https://kubernetes.io/docs/tasks/tools/)"
	exit 1
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
	if ! command -v sudo >/dev/null 2>&1; then
		log "kubectl is not on PATH; installing it needs root, and sudo is missing: run this script as root"
		exit 1
	fi
	SUDO=(sudo)
fi

log "kubectl is not on PATH: installing Debian's kubernetes-client"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends kubernetes-client

if ! command -v kubectl >/dev/null 2>&1; then
	log "kubernetes-client is installed but kubectl is still not on PATH"
	exit 1
fi
log "installed $(command -v kubectl)"
