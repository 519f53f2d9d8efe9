#!/usr/bin/env bash
# carry.sh ARCHIVE: packs what soak.sh needs to run on a machine without Go or the HAMi mirror: the built
# hamioracle (HAMi v2.10.0's scheduler), the working tree's kubectl-hami, and HAMi's chart (the device
# ConfigMap). There: tar -xJf ARCHIVE -C DIR && SOAK_PREBUILT=DIR/oracle hack/hamioracle/soak.sh N OUT P.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
archive=$1
"$here/run.sh" -n 0 >/dev/null
cache=${HAMIORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-hami/hamioracle}
hami="$cache/hami-$(git --git-dir="${HAMI_MIRROR:-/work/.mirror/Project-HAMi+HAMi/repo}" rev-parse "${HAMI_TAG:-v2.10.0}^{commit}")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/oracle/hami"
cp "$cache/hamioracle" "$work/oracle/hamioracle"
cp "${KUBECTL_HAMI:-$cache/kubectl-hami}" "$work/oracle/kubectl-hami"
cp -r "$hami/charts" "$work/oracle/hami/"
tar -C "$work" -cf - oracle | xz -T0 -4 >"$archive"
echo "carry.sh: $(du -h "$archive" | cut -f1) in $archive" >&2
