package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// benchCluster generates a cluster of nodes with 8 x 80 GiB GPUs each and podsPerNode running pods, each
// holding one GPU share (2-8 GiB, 5-25 % cores): about 40 % of memory and 45 % of slots in use.
func benchCluster(tb testing.TB, nodes, podsPerNode int) *Cluster {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	c := NewCluster(DefaultConfig())
	for i := 0; i < nodes; i++ {
		name := fmt.Sprintf("node-%05d", i)
		c.SetNode(mkNode(name, gpus(name, 8, 81920)))
		for j := 0; j < podsPerNode; j++ {
			mem := int64(2048 + rng.IntN(6)*1024)
			cores := int64(5 + rng.IntN(5)*5)
			g := rng.IntN(8)
			p := placedOn(mkPod("team-"+fmt.Sprint(i%20), fmt.Sprintf("%s-pod-%d", name, j), ctr("c", 1, mem, -1, cores)),
				name, fmt.Sprintf("%s-g%d,NVIDIA,%d,%d:;", name, g, mem, cores))
			c.SetPod(p)
		}
	}
	return c
}

func benchEvaluate(b *testing.B, nodes, pods int, pod *corev1.Pod, wantFit bool) {
	c := benchCluster(b, nodes, pods/nodes)
	if v := c.Evaluate(pod, EvalOptions{}); v.Fits != wantFit {
		b.Fatalf("fits=%v, want %v: %s", v.Fits, wantFit, v.Summary)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c.Evaluate(pod, EvalOptions{})
	}
}

// pendingPod asks for more memory than any GPU has free: every GPU of every node is examined.
func pendingPod() *corev1.Pod { return mkPod("team-1", "pending", ctr("c", 2, 82000, -1, 10)) }

// fittingPod fits on most nodes: every node is still evaluated (the verdict lists them all).
func fittingPod() *corev1.Pod { return mkPod("team-1", "fits", ctr("c", 2, 8000, -1, 10)) }

func BenchmarkEvaluatePending500Nodes10kPods(b *testing.B) {
	benchEvaluate(b, 500, 10000, pendingPod(), false)
}
func BenchmarkEvaluatePending5000Nodes100kPods(b *testing.B) {
	benchEvaluate(b, 5000, 100000, pendingPod(), false)
}
func BenchmarkEvaluateFits500Nodes10kPods(b *testing.B) {
	benchEvaluate(b, 500, 10000, fittingPod(), true)
}
func BenchmarkEvaluateFits5000Nodes100kPods(b *testing.B) {
	benchEvaluate(b, 5000, 100000, fittingPod(), true)
}

// benchPlace evaluates a pod, records its placement as the extender's bind does (SetPod with HAMi's
// annotations) and removes it again so every iteration sees the same cluster.
func benchPlace(b *testing.B, nodes, pods int) {
	c := benchCluster(b, nodes, pods/nodes)
	pod := fittingPod()
	now := time.Unix(1_800_000_000, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v := c.Evaluate(pod, EvalOptions{})
		if !v.Fits {
			b.Fatal(v.Summary)
		}
		placed := pod.DeepCopy()
		for k, val := range v.Placement.Annotations(now) {
			placed.Annotations[k] = val
		}
		c.SetPod(placed)
		c.RemovePod(placed.Namespace, placed.Name)
	}
}

func BenchmarkPlace500Nodes10kPods(b *testing.B)   { benchPlace(b, 500, 10000) }
func BenchmarkPlace5000Nodes100kPods(b *testing.B) { benchPlace(b, 5000, 100000) }

// BenchmarkEvaluatePendingSmallCluster shows that per-evaluation allocations depend on nodes, not pods:
// compare its allocs/op with the 500-node, 10k-pod run (same nodes, 20x the pods).
func BenchmarkEvaluatePending500Nodes500Pods(b *testing.B) {
	benchEvaluate(b, 500, 500, pendingPod(), false)
}
