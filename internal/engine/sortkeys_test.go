package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// TestSortByKeysIsLess holds the keyed insertion sort to the insertion sort on Less it replaces: random scores
// with many ties (and -0 beside +0, negative scores from a released share), NUMA nodes with ties and negatives,
// every rule it takes, 1 to 12 GPUs from a shuffled starting order.
func TestSortByKeysIsLess(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 28))
	inf := float32(math.Inf(1))
	scores := []float32{0, float32(math.Copysign(0, -1)), 1.5, 1.5, 2.25, -0.75, 10, 3.0000002, 3, inf, -inf}
	for round := 0; round < 20000; round++ {
		k := 1 + rng.IntN(sortInsertionMax)
		n := &Node{GPUs: make([]GPU, k)}
		f := &fitter{rule: sortRule{binpack: rng.IntN(2) == 0, numaGroups: rng.IntN(2) == 0}, scores: make([]float32, k)}
		for i := range n.GPUs {
			n.GPUs[i].Numa = rng.IntN(4) - 1
			f.scores[i] = scores[rng.IntN(len(scores))]
		}
		start := rng.Perm(k)
		f.order = slices.Clone(start)
		if !f.sortByKeys(n) {
			t.Fatalf("round %d: rule %+v not taken", round, f.rule)
		}
		got := slices.Clone(f.order)
		f.order = slices.Clone(start)
		s := gpuSorter{f: f, n: n, sc: f.scores}
		for i := 1; i < k; i++ {
			for j := i; j > 0 && s.Less(j, j-1); j-- {
				f.order[j], f.order[j-1] = f.order[j-1], f.order[j]
			}
		}
		if !slices.Equal(got, f.order) {
			t.Fatalf("round %d, rule %+v, scores %v, numa %v, from %v: keys give %v, Less gives %v", round, f.rule, f.scores, numas(n), start, got, f.order)
		}
	}
	// A NaN score (weights from hami.io/device-scoring-weights such as slot=NaN) leaves the sort to Less, which
	// finds no order between NaNs: the keys would sort them by NUMA node.
	nan := float32(math.NaN())
	f := &fitter{order: []int{0, 1, 2}, scores: []float32{nan, nan, nan}}
	if f.sortByKeys(&Node{GPUs: []GPU{{Numa: 1}, {Numa: 0}, {Numa: 2}}}) {
		t.Fatal("NaN scores were taken")
	}
	f = &fitter{rule: sortRule{chain: []string{PolicySpread}}, order: []int{0}}
	if f.sortByKeys(&Node{GPUs: make([]GPU, 1)}) {
		t.Fatal("a chain rule was taken")
	}
	f = &fitter{order: []int{0}, scores: []float32{0}}
	if f.sortByKeys(&Node{GPUs: []GPU{{Numa: math.MaxInt32 + 1}}}) {
		t.Fatal("a NUMA node outside int32 was taken")
	}
}

func numas(n *Node) []int {
	out := make([]int, len(n.GPUs))
	for i := range n.GPUs {
		out[i] = n.GPUs[i].Numa
	}
	return out
}

// TestRankCompareIsBeats holds the feasible list's comparison to nodeRank.beats under both policies, with ties,
// NaN scores and card ranks.
func TestRankCompareIsBeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 28))
	scores := []float64{0, 1, 1, 2.5, math.NaN(), 30}
	for round := 0; round < 20000; round++ {
		ra := nodeRank{card: rng.IntN(3), score: scores[rng.IntN(len(scores))]}
		rb := nodeRank{card: rng.IntN(3), score: scores[rng.IntN(len(scores))]}
		a, b := rng.IntN(10), rng.IntN(10)
		for _, policy := range []string{PolicySpread, PolicyBinpack} {
			want := 1
			switch {
			case ra == rb:
				want = a - b
			case ra.beats(policy, rb):
				want = -1
			}
			if got := rankCompare(policy == PolicySpread, ra, rb, a, b); got != want {
				t.Fatalf("%s %+v %+v %d %d: %d, want %d", policy, ra, rb, a, b, got, want)
			}
		}
	}
}

// TestSameCodeIsEquality: sameCode's shortcut for one constant must not change what == says.
func TestSameCodeIsEquality(t *testing.T) {
	codes := []Code{"", CardInsufficientMemory, Code(strings.Clone(string(CardInsufficientMemory))), CardInsufficientCore,
		CardNotHealth, Code(string(CardInsufficientMemory)[:4]), "CardInsufficientMemorX"}
	for _, a := range codes {
		for _, b := range codes {
			if got := sameCode(a, b); got != (a == b) {
				t.Errorf("sameCode(%q, %q) = %v", a, b, got)
			}
		}
	}
}

// TestNaNWeightsKeepTheOrder: weights that make every GPU score NaN (slot=NaN, or slot=1e39: Inf times an unused
// GPU's 0) leave HAMi's sort with no order, so the walk from the end takes the last-registered GPU; the keyed sort
// must not reorder them by NUMA node.
func TestNaNWeightsKeepTheOrder(t *testing.T) {
	devs := []codec.DeviceInfo{dev("gpu-a", 0, 81920), dev("gpu-b", 1, 81920), dev("gpu-c", 2, 81920)}
	devs[0].Numa, devs[1].Numa, devs[2].Numa = 2, 0, 1
	c := newTestCluster([]*corev1.Node{mkNode("n1", devs)}, nil)
	for _, w := range []string{"slot=NaN", "slot=1e39"} {
		for _, policy := range []string{PolicyBinpack, PolicySpread} {
			p := withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(10).Obj()),
				AnnoDeviceScoreWeight, w, "hami.io/gpu-scheduler-policy", policy)
			v := c.Evaluate(p, EvalOptions{})
			if !v.Fits {
				t.Fatalf("%s %s: %s", w, policy, v.Summary)
			}
			if got := v.Placement.Containers[0].Devices[0].UUID; got != "gpu-c" {
				t.Errorf("%s, %s: placed on %s, want gpu-c (no order among NaN scores)", w, policy, got)
			}
		}
	}
}

// TestSortFeasibleIsRankCompare holds the feasible sort on keys to the sort by rankCompare it replaced, on random
// ranks with many ties, with and without card ranks, -0 and +0, infinities and a NaN, under both node policies.
func TestSortFeasibleIsRankCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	// Neighbours of 1.5 differ from it in the lowest byte only, as a radix sort's first pass sees them.
	scores := []float64{0, math.Copysign(0, -1), 1.5, 1.5, math.Nextafter(1.5, 2), math.Nextafter(1.5, 1), 2, -3, math.Inf(1), math.Inf(-1), 7.25}
	for round := 0; round < 3000; round++ {
		n := 1 + rng.IntN(60)
		ranks := make([]nodeRank, n)
		for i := range ranks {
			ranks[i] = nodeRank{score: scores[rng.IntN(len(scores))]}
			if round%2 == 0 { // card ranks on every other round: the others take the radix sort
				ranks[i].card = rng.IntN(3)
			}
			if rng.IntN(4) == 0 {
				ranks[i].score = rng.Float64() * 30
			}
		}
		if round%10 == 0 {
			ranks[rng.IntN(n)].score = math.NaN()
		}
		var feasible []int
		for i := range ranks {
			if rng.IntN(5) > 0 {
				feasible = append(feasible, i)
			}
		}
		for _, spread := range []bool{false, true} {
			want := slices.Clone(feasible)
			slices.SortFunc(want, func(a, b int) int { return rankCompare(spread, ranks[a], ranks[b], a, b) })
			got := slices.Clone(feasible)
			sortFeasible(got, spread, func(i int) nodeRank { return ranks[i] })
			if !slices.Equal(got, want) {
				t.Fatalf("round %d spread=%v ranks %v: got %v, want %v", round, spread, ranks, got, want)
			}
		}
	}
}
