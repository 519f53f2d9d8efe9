package engine

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// BenchmarkBuildKube5000Nodes50kPods is the engine's half of the read commands' and the UI's start: a new
// cluster model from 5,000 nodes and 50k pods, every node set, then every pod, as snapshot's Cluster does
// (Config.SchedulerName set: each pod's CPU and memory counted on its node). The objects have hack/genbig's
// shape and order (pods dealt round the nodes; pods with the same requests or limits share one map, as the
// snapshot reader decodes a repeated list once) and are made once; cpu-ns/op includes the collector's work on
// the model while it grows. It uses only the corev1 types and Cluster's API, so `make bench-compare` can run it
// against an older base.
func BenchmarkBuildKube5000Nodes50kPods(b *testing.B) {
	nodes, pods := genbigObjects(5000, 50000)
	cfg := DefaultConfig()
	cfg.SchedulerName = DefaultSchedulerName
	var c *Cluster
	benchLoop(b, func() {
		c = NewCluster(cfg)
		// The bulk entry points where the cluster has them (snapshot's Cluster calls them), else one by one.
		if bulk, ok := any(c).(interface {
			SetNodes([]*corev1.Node)
			SetPods([]*corev1.Pod)
		}); ok {
			bulk.SetNodes(nodes)
			bulk.SetPods(pods)
			return
		}
		for _, n := range nodes {
			c.SetNode(n)
		}
		for _, p := range pods {
			c.SetPod(p)
		}
	})
	b.StopTimer()
	if got := len(c.PodsOn("node-00000")); got != len(pods)/len(nodes) {
		b.Fatalf("node-00000 counts %d pods, want %d", got, len(pods)/len(nodes))
	}
	// model-MiB is what one built model keeps: the live heap with it less the live heap without it.
	with := liveHeap()
	runtime.KeepAlive(c)
	c = nil
	without := liveHeap()
	runtime.KeepAlive(nodes) // the objects stay: only the model is measured
	runtime.KeepAlive(pods)
	b.ReportMetric(float64(with-without)/(1<<20), "model-MiB")
}

// liveHeap is the bytes of live heap objects after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// genbigObjects makes hack/genbig's nodes (8 x 80 GiB GPUs, allocatable CPU, memory and pods) and its bound
// pods (one GPU share each, requesting CPU and memory), pod i on node i mod nodes.
func genbigObjects(nodes, pods int) ([]*corev1.Node, []*corev1.Pod) {
	rng := rand.New(rand.NewPCG(1, 2))
	ns := make([]*corev1.Node, nodes)
	for i := range ns {
		name := fmt.Sprintf("node-%05d", i)
		devs := make([]codec.DeviceInfo, 8)
		for g := range devs {
			devs[g] = codec.DeviceInfo{ID: fmt.Sprintf("GPU-%s-%d", name, g), Index: g, Count: 10, Devmem: 81920, Devcore: 100,
				Type: "NVIDIA A100-SXM4-80GB", Numa: g / 4, Health: true, Mode: "hami-core"}
		}
		n := mkNode(name, devs)
		n.Labels = map[string]string{"kubernetes.io/hostname": name}
		n.Status.Allocatable = corev1.ResourceList{"cpu": resource.MustParse("128"), "memory": resource.MustParse("1Ti"),
			"pods": resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("80")}
		ns[i] = n
	}
	ps := make([]*corev1.Pod, pods)
	requests := corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("4Gi")}
	limits := map[[2]int]corev1.ResourceList{}
	for i := range ps {
		node := fmt.Sprintf("node-%05d", i%nodes)
		mem := 2048 + rng.IntN(6)*1024
		cores := 5 + rng.IntN(5)*5
		g := rng.IntN(8)
		l := limits[[2]int{mem, cores}]
		if l == nil {
			l = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"), "nvidia.com/gpumem": *resource.NewQuantity(int64(mem), resource.DecimalSI),
				"nvidia.com/gpucores": *resource.NewQuantity(int64(cores), resource.DecimalSI)}
			limits[[2]int{mem, cores}] = l
		}
		p := mkPod(fmt.Sprintf("team-%d", i%20), fmt.Sprintf("job-%06d", i), corev1.Container{Name: "main", Image: "train:1",
			Resources: corev1.ResourceRequirements{Limits: l, Requests: requests}})
		p.Spec.SchedulerName = DefaultSchedulerName
		placedOn(p, node, fmt.Sprintf("GPU-%s-%d,NVIDIA,%d,%d:;", node, g, mem, cores))
		p.Annotations[codec.PodToAllocateAnnotation] = ""
		p.Annotations[codec.PodBindPhaseAnnotation] = "success"
		ps[i] = p
	}
	return ns, ps
}
