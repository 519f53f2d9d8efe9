#!/usr/bin/env bash
# helm-binaries.sh: make sure helm exists in a versioned cache folder, building it from the Go module
# helm.sh/helm/v3 only when it is missing. Prints the folder's path on stdout as its last line. Used by
# hack/test-helm.sh (the chart's checks of `make test-release`).
#
# The build happens in a throw-away module under the cache folder (never inside the repository), as
# hack/krew-binaries.sh does.
#
# Environment:
#   KUBECTL_HAMI_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-hami)
#   GO                  go command (default go)
set -euo pipefail

HELM_VERSION=v3.22.0
GO=${GO:-go}

CACHE_ROOT=${KUBECTL_HAMI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-hami}
BIN_DIR=$CACHE_ROOT/helm-$HELM_VERSION

log() { printf '[helm-binaries %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

all_present() { [[ -x $BIN_DIR/helm ]]; }

if all_present; then
	echo "$BIN_DIR"
	exit 0
fi

mkdir -p "$BIN_DIR"
exec 9>"$BIN_DIR/.lock"
if ! flock -n 9; then
	log "another build holds $BIN_DIR/.lock; waiting for it"
	flock 9
fi
if all_present; then
	log "helm already built by another run"
	echo "$BIN_DIR"
	exit 0
fi

export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0
dir=$BIN_DIR/build
mkdir -p "$dir"
log "preparing throw-away module $dir for helm.sh/helm/v3@$HELM_VERSION"
cat >"$dir/go.mod" <<EOF
module kubectl-hami.local/build/helm

go 1.26

require helm.sh/helm/v3 $HELM_VERSION
EOF
rm -f "$dir/go.sum"
cat >"$dir/tools.go" <<'EOF'
//go:build tools

package tools

import _ "helm.sh/helm/v3/cmd/helm"
EOF
(cd "$dir" && "$GO" mod tidy) >&2

start=$SECONDS
log "building helm from helm.sh/helm/v3/cmd/helm (several minutes the first time)"
rm -f "$BIN_DIR/.helm.tmp"
# The version stamp helm prints (helm version) and uses for its own checks; without it helm reports v3.x-dev.
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
(cd "$dir" && "$GO" build -trimpath -ldflags "$ldflags" -o "$BIN_DIR/.helm.tmp" helm.sh/helm/v3/cmd/helm) >&2
mv -f "$BIN_DIR/.helm.tmp" "$BIN_DIR/helm"
all_present || { log "helm is still missing in $BIN_DIR"; exit 1; }
log "helm $HELM_VERSION built in $BIN_DIR ($((SECONDS - start))s)"
echo "$BIN_DIR"
