#!/usr/bin/env bash
# bench-carry.sh: the regression gate's interleaved runs on another machine, one without Go: a quiet machine
# with many cores (such as the GPU machine the project borrows; docs/benchmarks.md) gives the absolute figures
# a busy 2-core development machine cannot. Two steps:
#
#   bash hack/bench-carry.sh pack ARCHIVE BASE...   # here: each BASE's and the working tree's test binaries,
#                                                   # built as bench-compare.sh builds them, and the set table
#   bash hack/bench-carry.sh run ARCHIVE OUTDIR     # there: ROUNDS rounds at once, each a chain of processes
#                                                   # pinned to its own core, the sides' order rotating per round
#   bin/benchstat 00cc5cd=OUTDIR/00cc5cd.txt head=OUTDIR/head.txt   # here again
#
# Environment: SETS (regex on the set names, default engine|engine-mixed|read-setpod|extender), ROUNDS
# (default 6), CPU (-test.cpu, default 1), GO. Binaries are stripped (-s -w) to travel small.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
SETS=${SETS:-'^(engine|engine-mixed|read-setpod|extender)$'}
ROUNDS=${ROUNDS:-6}
CPU=${CPU:-1}
source hack/bench-sets.sh
log() { printf '[bench-carry %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

pack() {
	local archive=$1; shift
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	mkdir -p "$work/carry/bin"
	local rows=() row name pkg
	for row in "${SET_TABLE[@]}"; do
		read -r name _ _ _ <<<"$row"
		[[ $name =~ $SETS ]] && rows+=("$row")
	done
	((${#rows[@]})) || { echo "bench-carry: SETS=$SETS matches no set" >&2; exit 2; }
	printf '%s\n' "${rows[@]}" >"$work/carry/sets"
	local sides=()
	for base in "$@"; do
		local rev; rev=$(git rev-parse --short "$base^{commit}")
		sides+=("$rev")
		mkdir -p "$work/$rev"
		git archive "$rev" | tar -x -C "$work/$rev"
		for row in "${rows[@]}"; do
			read -r _ pkg _ _ <<<"$row"
			local out="$work/carry/bin/$rev-$(binname "$pkg")"
			[[ -x $out ]] && continue
			overlay_bench_files "$work/$rev" "$pkg" "$out" "$rev"
			(cd "$work/$rev" && $GO test -c -ldflags '-s -w' -o "$out" "$pkg")
		done
	done
	sides+=(head)
	for row in "${rows[@]}"; do
		read -r _ pkg _ _ <<<"$row"
		local out="$work/carry/bin/head-$(binname "$pkg")"
		[[ -x $out ]] || $GO test -c -ldflags '-s -w' -o "$out" "$pkg"
	done
	echo "${sides[*]}" >"$work/carry/sides"
	echo "head $(git rev-parse --short HEAD)$([[ -n $(git status --porcelain --untracked-files=no) ]] && echo +changes); bases $*" >"$work/carry/about"
	log "packing ${sides[*]} into $archive"
	tar -C "$work" -cf - carry | xz -T0 -6 >"$archive"
}

run() {
	local archive=$1 outdir=$2
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	tar -C "$work" -xJf "$archive"
	mkdir -p "$outdir"
	local sides; read -r -a sides <"$work/carry/sides"
	# One logical CPU per physical core (the first of each core's hyperthreads), leaving the first core to the
	# system: two rounds on the two threads of one core would slow each other.
	local cpus=() c
	for c in /sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list; do
		[[ -r $c ]] && cpus+=("$(sed 's/[,-].*//' "$c")")
	done
	mapfile -t cpus < <(printf '%s\n' "${cpus[@]}" | sort -un)
	((${#cpus[@]} > 1)) && cpus=("${cpus[@]:1}")
	((${#cpus[@]})) || cpus=(0)
	((ROUNDS <= ${#cpus[@]})) || log "$ROUNDS rounds on ${#cpus[@]} physical cores: some rounds share a core"
	log "$(cat "$work/carry/about"); sides ${sides[*]}; $ROUNDS rounds on CPUs ${cpus[*]}"
	local r
	for ((r = 0; r < ROUNDS; r++)); do
		(
			# each round on its own core; the sides' order rotates so none always runs first
			local order=() i n=${#sides[@]}
			for ((i = 0; i < n; i++)); do order+=("${sides[(i + r) % n]}"); done
			local pin=(); command -v taskset >/dev/null && pin=(taskset -c "${cpus[r % ${#cpus[@]}]}")
			while read -r set pkg regex benchtime; do
				for side in "${order[@]}"; do
					(cd "${pkg#./}" 2>/dev/null || true
						"${pin[@]}" "$work/carry/bin/$side-$(binname "$pkg")" -test.run '^$' -test.bench "$regex" \
							-test.benchtime "$benchtime" -test.count 1 -test.cpu "$CPU" -test.benchmem) >"$work/r$r-$side-$set.txt" 2>&1 ||
						log "round $r $side $set failed"
				done
			done <"$work/carry/sets"
		) &
	done
	wait
	local side
	for side in "${sides[@]}"; do
		cat "$work"/r*-"$side"-*.txt >"$outdir/$side.txt"
	done
	cp "$work/carry/about" "$outdir/about"
	log "wrote ${sides[*]/%/.txt} to $outdir"
}

case ${1:-} in
pack) shift; (($# >= 2)) || { echo "usage: bench-carry.sh pack ARCHIVE BASE..." >&2; exit 2; }; pack "$@" ;;
run) shift; (($# == 2)) || { echo "usage: bench-carry.sh run ARCHIVE OUTDIR" >&2; exit 2; }; run "$@" ;;
*) echo "usage: bench-carry.sh pack ARCHIVE BASE... | run ARCHIVE OUTDIR" >&2; exit 2 ;;
esac
