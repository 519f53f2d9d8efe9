#!/usr/bin/env bash
# Build HAMi v2.10.0's real scheduler from a git mirror and run it beside kubectl-hami's what-if.
#   hack/hamioracle/run.sh [-family nvidia] [-n 500] [-seed 1] [-quota 0.3] [-out DIR] [-v]
# HAMI_MIRROR: a bare git mirror of github.com/Project-HAMi/HAMi (default /work/.mirror/Project-HAMi+HAMi/repo)
# HAMI_TAG: the tag to export (default v2.10.0)
# HAMIORACLE_CACHE: where the export, the module file and the binaries live (default ~/.cache/kubectl-hami/hamioracle)
# KUBECTL_HAMI: a kubectl-hami binary to use instead of building the working tree's
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mirror=${HAMI_MIRROR:-/work/.mirror/Project-HAMi+HAMi/repo}
tag=${HAMI_TAG:-v2.10.0}
cache=${HAMIORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-hami/hamioracle}
mkdir -p "$cache"

commit=$(git --git-dir="$mirror" rev-parse "$tag^{commit}")
export_dir="$cache/hami-$commit"
if [ ! -f "$export_dir/.exported" ]; then
	rm -rf "$export_dir"
	mkdir -p "$export_dir"
	git --git-dir="$mirror" archive "$tag" | tar -x -C "$export_dir"
	touch "$export_dir/.exported"
fi
# The one file of ours in HAMi's tree: it exposes, changes no logic.
cp "$here/expose.go.txt" "$export_dir/pkg/scheduler/zz_hamioracle_expose.go"

# A copy of go.mod whose replace points at the export; go.sum beside it.
cp "$here/go.mod" "$cache/go.mod"
cp "$here/go.sum" "$cache/go.sum" 2>/dev/null || cp "$export_dir/go.sum" "$cache/go.sum"
go mod edit -replace "github.com/Project-HAMi/HAMi=$export_dir" "$cache/go.mod"
(cd "$here" && go mod tidy -modfile="$cache/go.mod" >/dev/null && go build -modfile="$cache/go.mod" -o "$cache/hamioracle" .)

kh=${KUBECTL_HAMI:-}
if [ -z "$kh" ]; then
	kh="$cache/kubectl-hami"
	(cd "$root" && go build -o "$kh" ./cmd/kubectl-hami)
fi
echo "HAMi $tag ($commit) beside kubectl-hami $(cd "$root" && git rev-parse --short HEAD)" >&2
exec "$cache/hamioracle" -hami "$export_dir" -kubectl-hami "$kh" "$@"
