#!/usr/bin/env bash
# bench-compare.sh: the regression gate. Builds the benchmark binaries of a base commit and of the working
# tree, runs them interleaved on one core (base and head alternate, the order flipping every round, so a
# machine that gets busier or quieter affects both alike), and prints benchstat's comparison.
#
#   make bench-compare BASE=00cc5cd              # every set below, COUNT rounds
#   make bench-compare BASE=HEAD~3 SETS=engine   # only the sets whose name matches SETS (a regex)
#
# Environment:
#   BASE     commit to compare against (default: HEAD when the tree has changes, else HEAD~1)
#   COUNT    rounds; each runs every benchmark once per side (default 6, benchstat's minimum for a p-value)
#   SETS     regex on the set names below (default: all)
#   CPU      -test.cpu (default 1)
#   OUT      folder for base.txt, head.txt and benchstat.txt (default bin/bench-compare)
#   BENCHSTAT  an installed benchstat; without it bin/benchstat is installed once from its Go module
#
# A benchmark file (bench*_test.go) that the base lacks, or has in another version, is copied into the base's
# tree when it compiles there, so both sides run the same benchmark code (a benchmark added with a change is
# measured on both, with the same metrics); when it does not compile, the base runs its own version or, when
# it has none, goes without it and benchstat lists that benchmark for head only. The engine's benchmarks
# report cpu-ns/op beside ns/op: on a busy machine compare that column.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
COUNT=${COUNT:-6}
SETS=${SETS:-.}
CPU=${CPU:-1}
OUT=${OUT:-bin/bench-compare}
BENCHSTAT_VERSION=v0.0.0-20260908200009-22c9c6c9d4da

source hack/bench-sets.sh

log() { printf '[bench-compare %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [[ -z ${BASE:-} ]]; then
	if [[ -n $(git status --porcelain --untracked-files=no) ]]; then BASE=HEAD; else BASE=HEAD~1; fi
fi
base_rev=$(git rev-parse --short "$BASE^{commit}") || { echo "bench-compare: BASE=$BASE is not a commit" >&2; exit 2; }
head_desc=$(git rev-parse --short HEAD)
if [[ -n $(git status --porcelain --untracked-files=no) ]]; then head_desc+="+changes"; fi

BENCHSTAT=${BENCHSTAT:-}
if [[ -z $BENCHSTAT ]]; then
	BENCHSTAT=bin/benchstat
	if [[ ! -x $BENCHSTAT ]]; then
		log "installing benchstat ($BENCHSTAT_VERSION) into bin/"
		GOBIN=$PWD/bin $GO install "golang.org/x/perf/cmd/benchstat@$BENCHSTAT_VERSION"
	fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/base" "$work/bin" "$OUT"
git archive "$base_rev" | tar -x -C "$work/base"

# selected sets, and the packages they need
selected=()
for row in "${SET_TABLE[@]}"; do
	read -r name _ _ _ <<<"$row"
	[[ $name =~ $SETS ]] && selected+=("$row")
done
((${#selected[@]})) || { echo "bench-compare: SETS=$SETS matches no set" >&2; exit 2; }


build_pkg() { # side dir pkg
	local side=$1 dir=$2 pkg=$3
	local out="$work/bin/$side-$(binname "$pkg")"
	[[ -x $out ]] && return 0
	if [[ $side == base ]]; then overlay_bench_files "$dir" "$pkg" "$out" "base $base_rev"; fi
	(cd "$dir" && $GO test -c -o "$out" "$pkg")
}

log "building $base_rev (base) and $head_desc (head)"
for row in "${selected[@]}"; do
	read -r _ pkg _ _ <<<"$row"
	build_pkg base "$work/base" "$pkg"
	build_pkg head "$PWD" "$pkg"
done

: >"$OUT/base.txt"
: >"$OUT/head.txt"
run_one() { # side pkg regex benchtime
	local side=$1 pkg=$2
	local bin="$work/bin/$side-$(binname "$pkg")"
	# run in the package's own folder, as go test does (testdata paths are relative)
	local dir=$PWD/$pkg
	[[ $side == base ]] && dir=$work/base/$pkg
	(cd "$dir" && "$bin" -test.run '^$' -test.bench "$3" -test.benchtime "$4" -test.count 1 -test.cpu "$CPU" \
		-test.benchmem) >>"$OUT/$side.txt" 2>&1 || { log "$side $pkg failed: see $OUT/$side.txt"; exit 1; }
}
for round in $(seq 1 "$COUNT"); do
	log "round $round/$COUNT"
	sides=(base head)
	((round % 2 == 0)) && sides=(head base)
	for row in "${selected[@]}"; do
		read -r _ pkg regex benchtime <<<"$row"
		for side in "${sides[@]}"; do run_one "$side" "$pkg" "$regex" "$benchtime"; done
	done
done

{
	echo "# bench-compare: base $base_rev, head $head_desc, $COUNT interleaved rounds, -test.cpu $CPU, $(date -u +%Y-%m-%dT%H:%MZ)"
	"$BENCHSTAT" base="$OUT/base.txt" head="$OUT/head.txt"
} | tee "$OUT/benchstat.txt"
