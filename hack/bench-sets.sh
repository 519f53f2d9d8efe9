# bench-sets.sh: the benchmark sets of the regression gate, shared by bench-compare.sh (interleaved runs
# on this machine) and bench-carry.sh (the same runs on another machine, one without Go). Sourced, not run.

# The sets: name, package, benchmark regex, -test.benchtime. The engine runs at least 200 iterations so a
# first-call cost is neither averaged in nor out; the slower end-to-end benchmarks run a few iterations.
SET_TABLE=(
	"engine        ./internal/engine    ^Benchmark(Evaluate(Pending|Fits)|Place)5000Nodes100kPods$  200x"
	"engine-mixed  ./internal/engine    ^BenchmarkEvaluateMixed(Pending|Fits)5000Nodes100kPods$    200x"
	"engine-read   ./internal/engine    ^BenchmarkEvaluate(Pending|Fits)Read5000Nodes100kPods$     200x"
	"read-setpod   ./internal/engine    ^BenchmarkSetPod(Kube)?5000Nodes100kPods$                  20000x"
	"read-build    ./internal/engine    ^BenchmarkBuildKube5000Nodes50kPods$                       5x"
	"read-file     ./internal/snapshot  ^BenchmarkRead(JSON500Nodes5k|YAML200Nodes2k)Pods$          5x"
	"read-kept     ./internal/snapshot  ^BenchmarkReadKept(JSON500Nodes5k|RichJSON200Nodes2k)Pods$  3x"
	"extender      ./internal/extender  ^BenchmarkFilterPrioritizeHTTP5000Nodes$                   200x"
	"engine-summary ./internal/engine   ^BenchmarkExtender5000Nodes100kPods$                      200x"
	"tui           ./internal/tui       ^BenchmarkFirstFrame(File)?$                               5x"
)


# overlay_bench_files DIR PKG OUT LABEL: copies the working tree's benchmark files of PKG that DIR (another
# commit's tree) lacks, or has in another version, into DIR, keeping each that compiles there (test binary
# OUT), so both sides run the same benchmark code and report the same metrics (cpu-ns/op included); when one
# does not compile, DIR keeps its own version, or goes without it when it has none (that side then lacks
# those benchmarks). Needs GO, log and $work.
overlay_bench_files() {
	local dir=$1 pkg=$2 out=$3 label=$4 f
	for f in "$pkg"/bench*_test.go; do
		[[ -e $f ]] || continue
		[[ -e $dir/$f ]] && cmp -s "$f" "$dir/$f" && continue
		local had=0
		[[ -e $dir/$f ]] && { had=1; cp "$dir/$f" "$work/overlay.orig"; }
		cp "$f" "$dir/$f"
		if (cd "$dir" && $GO test -c -o "$out" "$pkg") >"$work/overlay.err" 2>&1; then
			log "$label: measured with head's $(basename "$f")"
		elif ((had)); then
			log "$label: head's $(basename "$f") does not compile there; it runs its own"
			cp "$work/overlay.orig" "$dir/$f"
		else
			log "$label: head's $(basename "$f") does not compile there; its benchmarks run on head only"
			rm -f "$dir/$f"
		fi
	done
}

# binname PKG: the test binary's name for a package, ./internal/engine -> internal_engine.test
binname() { local p=${1#./}; echo "${p//\//_}.test"; }
