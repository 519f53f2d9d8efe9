#!/usr/bin/env bash
# Every unit of issue 27's table through hamioracle: N scenarios each, with and without a ResourceQuota,
# P batches at a time. Each batch's report goes to OUT/<unit>[-quota].txt (the disagreement classes' smallest
# examples to OUT/<unit>[-quota]/<class>/, made smaller first when SHRINK is set), and the table rows to
# OUT/table.md.
# QUOTA_N: scenarios of the -quota 0.5 batches (default N); SHRINK shrinks the examples of the batches without.
#   hack/hamioracle/soak.sh [N] [OUT] [P] [UNIT...]
# SOAK_PREBUILT=DIR runs binaries packed by carry.sh (DIR/hamioracle, DIR/kubectl-hami, DIR/hami/charts) on a
# machine without Go or the HAMi mirror, such as the borrowed many-core machine (README.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-500}
out=${2:-bin/hamioracle}
par=${3:-2}
shift $(( $# < 3 ? $# : 3 ))
units=("$@")
if [ ${#units[@]} -eq 0 ]; then
	units=(nvidia-mig nvidia-topology nvidia-policy hygon ascend ascend910c cambricon metax-sgpu metax iluvatar kunlun kunlun-vxpu
		enflame enflame-drs mthreads amd awsneuron biren vastai vastai-die mixed mixed-all)
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -n "${SOAK_PREBUILT:-}" ]; then
	# Binaries built elsewhere (carry.sh pack): a machine with neither Go nor the mirror runs the batches.
	cache=$SOAK_PREBUILT
	hami=$cache/hami
	kh=$cache/kubectl-hami
else
	# Build once (run.sh builds HAMi's side and kubectl-hami), then run the binaries directly.
	"$here/run.sh" -n 0 >/dev/null
	cache=${HAMIORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-hami/hamioracle}
	hami="$cache/hami-$(git --git-dir="${HAMI_MIRROR:-/work/.mirror/Project-HAMi+HAMi/repo}" rev-parse "${HAMI_TAG:-v2.10.0}^{commit}")"
	kh=${KUBECTL_HAMI:-$cache/kubectl-hami}
fi
jobs=()
for u in "${units[@]}"; do
	for q in "" "-quota"; do
		jobs+=("$u$q")
	done
done
run() {
	local job=$1 unit=${1%-quota} extra=() count=$n
	if [ "$job" != "$unit" ]; then
		extra=(-quota 0.5)
		count=${QUOTA_N:-$n}
	elif [ -n "${SHRINK:-}" ]; then
		extra=(-shrink)
	fi
	"$cache/hamioracle" -hami "$hami" -kubectl-hami "$kh" -family "$unit" -n "$count" -seed 1 "${extra[@]}" \
		-row "$job" -out "$out/$job" > "$out/$job.txt" 2>&1 || echo "FAILED" >> "$out/$job.txt"
}
export -f run
export cache hami kh n out SHRINK QUOTA_N
printf '%s\n' "${jobs[@]}" | xargs -P "$par" -I{} bash -c 'run {}'
for j in "${jobs[@]}"; do grep -h '^row: ' "$out/$j.txt" | sed 's/^row: //' || echo "| $j | failed |"; done > "$out/table.md"
cat "$out/table.md"
