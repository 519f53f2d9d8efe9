#!/usr/bin/env bash
# bench-instr.sh: instructions per benchmark operation, base against the working tree, counted by valgrind's
# cachegrind. A count does not move with the machine's load (a timed benchmark on a shared 2-core machine spreads
# 15-40 %), so it shows a change in the work an operation does where bench-compare's times cannot; it does not
# see cache misses or the garbage collector (GOGC=off), which bench-compare's cpu-ns/op does.
#
#   hack/bench-instr.sh BASE [PKG] [BENCH-REGEX] [N]
#   hack/bench-instr.sh main ./internal/engine 'Evaluate(Pending|Fits)500Nodes10kPods$|Place500Nodes10kPods$' 20
#
# Each benchmark runs once with -test.benchtime 1x and once with (N+1)x; the difference over N is one
# operation's instructions (the setup, counted in both, cancels). Use the small benchmarks: valgrind runs
# 30-60x slower than the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${1:?usage: hack/bench-instr.sh BASE [PKG] [BENCH-REGEX] [N]}
PKG=${2:-./internal/engine}
BENCH=${3:-'Evaluate(Pending|Fits)500Nodes10kPods$|Place500Nodes10kPods$'}
N=${4:-20}
GO=${GO:-go}
command -v valgrind >/dev/null || { echo "bench-instr: valgrind is not installed" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
base_rev=$(git rev-parse --short "$BASE^{commit}")
mkdir -p "$work/base"
git archive "$base_rev" | tar -x -C "$work/base"
(cd "$work/base" && $GO test -c -o "$work/base.test" "$PKG")
$GO test -c -o "$work/head.test" "$PKG"

# instructions BIN BENCH ITERATIONS: cachegrind's total instruction count of one run
instructions() {
	GOMAXPROCS=1 GOGC=off valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$1" -test.run '^$' -test.bench "$2" -test.cpu 1 -test.benchtime "$3x" 2>&1 |
		awk '/I +refs:/ { gsub(",", "", $NF); print $NF }'
}

names=$("$work/head.test" -test.list "^Benchmark" | grep -E "${BENCH#^}" || true)
[[ -n $names ]] || { echo "bench-instr: no benchmark of $PKG matches $BENCH" >&2; exit 2; }
printf '%-45s %15s %15s %8s\n' "benchmark ($PKG)" "$base_rev" "head" "change"
for name in $names; do
	re="^$name\$"
	b=$(( ($(instructions "$work/base.test" "$re" $((N + 1))) - $(instructions "$work/base.test" "$re" 1)) / N ))
	h=$(( ($(instructions "$work/head.test" "$re" $((N + 1))) - $(instructions "$work/head.test" "$re" 1)) / N ))
	printf '%-45s %15d %15d %+7.1f%%\n' "${name#Benchmark}" "$b" "$h" "$(awk -v b="$b" -v h="$h" 'BEGIN { print (h - b) * 100 / b }')"
done
