package engine

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// TestMemoryProblemFollowsTheLargestGPU: the "more than any GPU of the cluster has" problem compares with the
// largest GPU of the cluster as it is now, through node additions, replacements and removals.
func TestMemoryProblemFollowsTheLargestGPU(t *testing.T) {
	pod := mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(40000).Obj())
	largest := func(c *Cluster) string {
		for _, p := range c.Evaluate(pod, EvalOptions{}).Problems {
			if strings.Contains(p.Message, "more than any GPU") {
				return p.Message
			}
		}
		return ""
	}
	c := newTestCluster([]*corev1.Node{mkNode("a", gpus("a", 2, 16384)), mkNode("b", gpus("b", 1, 81920))}, nil)
	steps := []struct {
		name string
		do   func()
		want string // a part of the problem, "" for none
	}{
		{"an 80 GiB GPU", func() {}, ""},
		{"its node removed", func() { c.RemoveNode("b") }, "the largest has 16384 MiB"},
		{"a 48 GiB GPU added", func() { c.SetNode(mkNode("c", gpus("c", 1, 49152))) }, ""},
		{"that node now registers 24 GiB", func() { c.SetNode(mkNode("c", gpus("c", 1, 24576))) }, "the largest has 24576 MiB"},
		{"the 16 GiB node gone too", func() { c.RemoveNode("a") }, "the largest has 24576 MiB"},
	}
	for _, s := range steps {
		s.do()
		got := largest(c)
		if s.want == "" && got != "" || s.want != "" && !strings.Contains(got, s.want) {
			t.Errorf("%s: problem %q, want %q", s.name, got, s.want)
		}
	}
}

// TestKthLargestIsTheSortedValue: the partial selection gives what a full sort gives, duplicates included.
func TestKthLargestIsTheSortedValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := 0; round < 500; round++ {
		vals := make([]int64, 1+rng.IntN(16))
		for i := range vals {
			vals[i] = int64(rng.IntN(5)) * 1024
		}
		k := 1 + rng.IntN(len(vals))
		sorted := slices.Clone(vals)
		slices.Sort(sorted)
		if got, want := kthLargest(slices.Clone(vals), k), sorted[len(sorted)-k]; got != want {
			t.Fatalf("kthLargest(%v, %d) = %d, want %d", vals, k, got, want)
		}
	}
}
