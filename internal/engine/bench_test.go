package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// benchCluster generates a cluster of nodes with 8 x 80 GiB GPUs each and podsPerNode running pods, each
// holding one GPU share (2-8 GiB, 5-25 % cores): about 40 % of memory and 45 % of slots in use.
func benchCluster(t testing.TB, nodes, podsPerNode int) *Cluster {
	return benchClusterWith(t, DefaultConfig(), nodes, podsPerNode)
}

// benchKubeCluster is benchCluster as the commands build it (Config.SchedulerName set): kube-scheduler's checks
// are gates, every node has allocatable pods, CPU and memory, and every pod requests CPU and memory; no node is
// tainted or cordoned, so the checks pass everywhere (the common case, which must cost almost nothing).
func benchKubeCluster(t testing.TB, nodes, podsPerNode int) *Cluster {
	cfg := DefaultConfig()
	cfg.SchedulerName = DefaultSchedulerName
	return benchClusterWith(t, cfg, nodes, podsPerNode)
}

func benchClusterWith(t testing.TB, cfg Config, nodes, podsPerNode int) *Cluster {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	c := NewCluster(cfg)
	kube := cfg.SchedulerName != ""
	for i := 0; i < nodes; i++ {
		name := fmt.Sprintf("node-%05d", i)
		n := mkNode(name, gpus(name, 8, 81920))
		if kube {
			n.Status.Allocatable["pods"] = resource.MustParse("110")
			n.Status.Allocatable["cpu"] = resource.MustParse("128")
			n.Status.Allocatable["memory"] = resource.MustParse("1Ti")
		}
		c.SetNode(n)
		for j := 0; j < podsPerNode; j++ {
			mem := int64(2048 + rng.IntN(6)*1024)
			cores := int64(5 + rng.IntN(5)*5)
			g := rng.IntN(8)
			p := placedOn(mkPod("team-"+fmt.Sprint(i%20), fmt.Sprintf("%s-pod-%d", name, j), tb.MakeContainer("c").GPUs(1).GPUMem(mem).GPUCores(cores).Obj()),
				name, fmt.Sprintf("%s-g%d,NVIDIA,%d,%d:;", name, g, mem, cores))
			if kube {
				p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("4Gi")}
			}
			c.SetPod(p)
		}
	}
	return c
}

func benchEvaluate(b *testing.B, nodes, pods int, pod *corev1.Pod, wantFit bool) {
	benchEvaluateOn(b, benchCluster(b, nodes, pods/nodes), pod, wantFit)
}

func benchEvaluateOn(b *testing.B, c *Cluster, pod *corev1.Pod, wantFit bool) {
	if v := c.Evaluate(pod, EvalOptions{}); v.Fits != wantFit {
		b.Fatalf("fits=%v, want %v: %s", v.Fits, wantFit, v.Summary)
	}
	benchLoop(b, func() { c.Evaluate(pod, EvalOptions{}) })
}

// pendingPod asks for more memory than any GPU has free: every GPU of every node is examined.
func pendingPod() *corev1.Pod {
	return mkPod("team-1", "pending", tb.MakeContainer("c").GPUs(2).GPUMem(82000).GPUCores(10).Obj())
}

// fittingPod fits on most nodes: every node is still evaluated (the verdict lists them all).
func fittingPod() *corev1.Pod {
	return mkPod("team-1", "fits", tb.MakeContainer("c").GPUs(2).GPUMem(8000).GPUCores(10).Obj())
}

func BenchmarkEvaluatePending500Nodes10kPods(b *testing.B) {
	benchEvaluate(b, 500, 10000, pendingPod(), false)
}
func BenchmarkEvaluatePending5000Nodes100kPods(b *testing.B) {
	benchEvaluate(b, 5000, 100000, pendingPod(), false)
}

// The same with kube-scheduler's checks as gates (the commands' evaluation); the pod requests CPU and memory.
func BenchmarkEvaluatePending5000Nodes100kPodsKube(b *testing.B) {
	benchEvaluateOn(b, benchKubeCluster(b, 5000, 20), withCPU(pendingPod()), false)
}
func BenchmarkEvaluateFits5000Nodes100kPodsKube(b *testing.B) {
	benchEvaluateOn(b, benchKubeCluster(b, 5000, 20), withCPU(fittingPod()), true)
}

func withCPU(p *corev1.Pod) *corev1.Pod {
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse("2"), "memory": resource.MustParse("8Gi")}
	return p
}

func BenchmarkEvaluateFits500Nodes10kPods(b *testing.B) {
	benchEvaluate(b, 500, 10000, fittingPod(), true)
}
func BenchmarkEvaluateFits5000Nodes100kPods(b *testing.B) {
	benchEvaluate(b, 5000, 100000, fittingPod(), true)
}

// The same two with every list of the verdict read (Verdict.Nodes and Feasible, which a verdict builds when
// first read: lazystatus.go): what a why-pending -o json or a wide table pays on top of the evaluation.
func BenchmarkEvaluatePendingRead5000Nodes100kPods(b *testing.B) {
	benchEvaluateRead(b, pendingPod(), false)
}
func BenchmarkEvaluateFitsRead5000Nodes100kPods(b *testing.B) {
	benchEvaluateRead(b, fittingPod(), true)
}

func benchEvaluateRead(b *testing.B, pod *corev1.Pod, wantFit bool) {
	c := benchCluster(b, 5000, 20)
	if v := c.Evaluate(pod, EvalOptions{}); v.Fits != wantFit || len(v.Nodes()) != 5000 {
		b.Fatalf("fits=%v over %d statuses, want %v over 5000: %s", v.Fits, len(v.Nodes()), wantFit, v.Summary)
	}
	benchLoop(b, func() {
		v := c.Evaluate(pod, EvalOptions{})
		_, _ = v.Nodes(), v.Feasible()
	})
}

// benchPlace evaluates a pod, records its placement as the extender's bind does (SetPod with HAMi's
// annotations) and removes it again so every iteration sees the same cluster.
func benchPlace(b *testing.B, nodes, pods int) {
	c := benchCluster(b, nodes, pods/nodes)
	pod := fittingPod()
	now := time.Unix(1_800_000_000, 0)
	benchLoop(b, func() {
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
	})
}

func BenchmarkPlace500Nodes10kPods(b *testing.B)   { benchPlace(b, 500, 10000) }
func BenchmarkPlace5000Nodes100kPods(b *testing.B) { benchPlace(b, 5000, 100000) }

// BenchmarkEvaluatePendingSmallCluster shows that per-evaluation allocations depend on nodes, not pods:
// compare its allocs/op with the 500-node, 10k-pod run (same nodes, 20x the pods).
func BenchmarkEvaluatePending500Nodes500Pods(b *testing.B) {
	benchEvaluate(b, 500, 500, pendingPod(), false)
}

// benchCardCluster is benchCluster with GPU-feature-discovery labels (half the nodes H200, half H800), every
// fifth running pod naming a card and queue q1, and the queue's quota set so that the H200 quota is full.
func benchCardCluster(b *testing.B, nodes, pods int) *Cluster {
	c := benchCluster(b, nodes, pods/nodes)
	used := map[string]int64{}
	for i, name := range c.NodeNames() {
		product := []string{"NVIDIA-H200", "NVIDIA-H800"}[i%2]
		n := mkNode(name, gpus(name, 8, 81920))
		n.Labels = map[string]string{"nvidia.com/gpu.product": product, "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "81920"}
		c.SetNode(n)
		for j, p := range c.PodsOn(name) {
			if j%5 != 0 {
				continue
			}
			pod := placedOn(withAnno(mkPod(p.Namespace, p.Name, tb.MakeContainer("c").GPUs(1).GPUMem(p.QuotaMem).GPUCores(p.QuotaCores).Obj()),
				"volcano.sh/card.name", product, "scheduling.volcano.sh/queue-name", "q1"), name, "")
			pod.Annotations["hami.io/vgpu-devices-allocated"] = fmt.Sprintf("%s,NVIDIA,%d,%d:;", p.Uses[0].UUID, p.QuotaMem, p.QuotaCores)
			c.SetPod(pod)
			used[product]++
		}
	}
	q, probs := NewQueue("q1", "Open", map[string]string{"volcano.sh/card.quota": fmt.Sprintf(`{"NVIDIA-H200":%d,"NVIDIA-H800":%d}`, used["NVIDIA-H200"], used["NVIDIA-H800"]+1000)})
	c.SetQueue(q, probs)
	return c
}

// BenchmarkEvaluateCardQuota5000Nodes100kPods: a pod naming "H200|H800" in a queue whose H200 quota is full,
// with 20,000 card pods counted: half the nodes fail the card gate, the other half are fitted.
func BenchmarkEvaluateCardQuota5000Nodes100kPods(b *testing.B) {
	c := benchCardCluster(b, 5000, 100000)
	pod := withAnno(fittingPod(), "volcano.sh/card.name", "NVIDIA-H200|NVIDIA-H800", "scheduling.volcano.sh/queue-name", "q1")
	v := c.Evaluate(pod, EvalOptions{})
	if !v.Fits || v.Card == nil || v.Card.Alternatives[0].Fits || !v.Card.Alternatives[1].Fits {
		b.Fatalf("fits=%v card %+v: %s", v.Fits, v.Card, v.Summary)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c.Evaluate(pod, EvalOptions{})
	}
}

// BenchmarkEnqueue1000Groups: the job-level check of one Pending PodGroup in a queue with 1,000 other
// PodGroups (half Inqueue, half Running) whose 20,000 pods name cards.
func BenchmarkEnqueue1000Groups(b *testing.B) {
	c := benchCardCluster(b, 5000, 100000)
	i := 0
	for _, name := range c.NodeNames() {
		for _, p := range c.PodsOn(name) {
			if cp := c.cardPods[p.Key()]; cp != nil {
				cp.group = fmt.Sprintf("job-%d", i%1000) // what SetPod would read from scheduling.k8s.io/group-name
				i++
			}
		}
	}
	for g := 0; g < 1000; g++ {
		pg, probs := NewPodGroup("team-0", fmt.Sprintf("job-%d", g), "q1", 2, []string{"Inqueue", "Running"}[g%2], map[string]string{
			"volcano.sh/card.request": `{"NVIDIA-H800":4}`})
		c.SetPodGroup(pg, probs)
	}
	pg, probs := NewPodGroup("team-0", "waiting", "q1", 2, "Pending", map[string]string{"volcano.sh/card.request": `{"NVIDIA-H800":4}`})
	c.SetPodGroup(pg, probs)
	if s := c.Enqueue("team-0", "waiting"); s == nil || len(s.Cards) != 1 {
		b.Fatalf("enqueue: %+v", s)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c.Enqueue("team-0", "waiting")
	}
}
