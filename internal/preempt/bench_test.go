package preempt

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// benchWorld is the engine benchmarks' big cluster (internal/engine/bench_test.go: 8 x 80 GiB GPUs per node, each
// pod one share of 2-7 GiB, every GPU holding one at least), every pod started at its own minute, with priorities drawn from prios.
func benchWorld(b *testing.B, nodes, podsPerNode int, prios []int32) (*engine.Cluster, []*corev1.Pod) {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	c := engine.NewCluster(engine.DefaultConfig())
	pods := make([]*corev1.Pod, 0, nodes*podsPerNode)
	for i := 0; i < nodes; i++ {
		name := fmt.Sprintf("node-%05d", i)
		c.SetNode(gpuNode(name, 8, 81920))
		for j := 0; j < podsPerNode; j++ {
			mem := int64(2048 + rng.IntN(6)*1024)
			gpu := rng.IntN(8)
			if j < 8 {
				gpu = j // every GPU holds at least one pod: a whole GPU is free nowhere
			}
			p := running(fmt.Sprintf("team-%d", i%20), fmt.Sprintf("%s-pod-%d", name, j), name, gpu, mem, prios[rng.IntN(len(prios))], rng.IntN(100000))
			c.SetPod(p)
			pods = append(pods, p)
		}
	}
	return c, pods
}

// benchSearch times the victim search for a pod that needs a whole GPU on a cluster where every GPU holds
// something: every node is examined until kube-scheduler's number of candidates is found.
func benchSearch(b *testing.B, prios []int32, prio int32, o Options) {
	c, pods := benchWorld(b, 5000, 20, prios)
	ix := NewIndex(pods, nil, nil)
	pod := pending("preemptor", prio, 81920)
	if v := c.Evaluate(pod, engine.EvalOptions{}); v.Fits {
		b.Fatalf("the preemptor fits without preemption: %s", v.Summary)
	}
	res := Search(c, ix, pod, o)
	if res.Chosen == nil {
		b.Fatalf("no preemption: %s", res.Reason)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		Search(c, ix, pod, o)
	}
	reportCPU(b, cpu)
}

// reportCPU adds the process's CPU time per iteration since start (cpu-ns/op): the development machine is
// shared, and under load the wall clock (ns/op) counts the time other processes ran too.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

// Every pod has a lower priority: every node is a candidate; the search stops at 500 (10 % of the nodes).
func BenchmarkSearch5000Nodes100kPods(b *testing.B) {
	benchSearch(b, []int32{0, 10, 100}, 1000, Options{})
}

// Half the pods outrank the preemptor: fewer GPUs can be freed, more nodes are examined per candidate.
func BenchmarkSearchMixed5000Nodes100kPods(b *testing.B) {
	benchSearch(b, []int32{0, 2000}, 1000, Options{})
}

// Every node searched (MaxCandidates -1): the upper bound of a search without kube-scheduler's early stop.
func BenchmarkSearchAll5000Nodes100kPods(b *testing.B) {
	benchSearch(b, []int32{0, 10, 100}, 1000, Options{MaxCandidates: -1})
}

// The index is built once per snapshot (the commands) or kept by the caller.
func BenchmarkIndex5000Nodes100kPods(b *testing.B) {
	_, pods := benchWorld(b, 5000, 20, []int32{0, 10, 100})
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		NewIndex(pods, nil, nil)
	}
	reportCPU(b, cpu)
}
