#!/usr/bin/env bash
# krew-binaries.sh: make sure krew (as kubectl-krew, with a krew link) and krew's own manifest validator
# validate-krew-manifest (the one the krew-index CI runs) exist in a versioned cache folder, building them
# from the Go module sigs.k8s.io/krew only when they are missing. Prints the folder's path on stdout as its
# last line. Used by hack/test-release.sh.
#
# The build happens in a throw-away module under the cache folder (never inside the repository), as
# hack/k8s-binaries.sh does. The binaries carry no version stamp, so krew treats them as a development build
# and never checks GitHub for a newer krew.
#
# Environment:
#   KUBECTL_HAMI_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-hami)
#   GO                  go command (default go)
set -euo pipefail

KREW_VERSION=v0.4.4
GO=${GO:-go}

CACHE_ROOT=${KUBECTL_HAMI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-hami}
BIN_DIR=$CACHE_ROOT/krew-$KREW_VERSION

log() { printf '[krew-binaries %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

all_present() { [[ -x $BIN_DIR/kubectl-krew && -x $BIN_DIR/validate-krew-manifest && -L $BIN_DIR/krew ]]; }

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
	log "krew already built by another run"
	echo "$BIN_DIR"
	exit 0
fi

export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0
dir=$BIN_DIR/build
mkdir -p "$dir"
log "preparing throw-away module $dir for sigs.k8s.io/krew@$KREW_VERSION"
cat >"$dir/go.mod" <<EOF
module kubectl-hami.local/build/krew

go 1.26

require sigs.k8s.io/krew $KREW_VERSION
EOF
rm -f "$dir/go.sum"
cat >"$dir/tools.go" <<'EOF'
//go:build tools

package tools

import (
	_ "sigs.k8s.io/krew/cmd/krew"
	_ "sigs.k8s.io/krew/cmd/validate-krew-manifest"
)
EOF
(cd "$dir" && "$GO" mod tidy) >&2

start=$SECONDS
for spec in sigs.k8s.io/krew/cmd/krew:kubectl-krew sigs.k8s.io/krew/cmd/validate-krew-manifest:validate-krew-manifest; do
	pkg=${spec%%:*} bin=${spec##*:}
	log "building $bin from $pkg"
	rm -f "$BIN_DIR/.$bin.tmp"
	(cd "$dir" && "$GO" build -trimpath -ldflags "-s -w" -o "$BIN_DIR/.$bin.tmp" "$pkg") >&2
	mv -f "$BIN_DIR/.$bin.tmp" "$BIN_DIR/$bin"
done
ln -sfn kubectl-krew "$BIN_DIR/krew"
all_present || { log "some binaries are still missing in $BIN_DIR"; exit 1; }
log "krew $KREW_VERSION built in $BIN_DIR ($((SECONDS - start))s)"
echo "$BIN_DIR"
