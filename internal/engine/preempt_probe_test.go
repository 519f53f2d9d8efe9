package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

func gpuPod(ns, name string, mem int64) *corev1.Pod {
	return mkPod(ns, name, tb.MakeContainer("c").GPUs(1).GPUMem(mem).Obj())
}

// The probe answers for a node with some pods gone, through each gate they hold back, and leaves the cluster
// as it found it.
func TestProbeFitsWithout(t *testing.T) {
	cases := []struct {
		name   string
		kube   bool
		nodes  []*corev1.Node
		pods   []*corev1.Pod
		quotas []*corev1.ResourceQuota
		pod    *corev1.Pod
		gone   []string
		want   bool
	}{
		{name: "GPU memory held by lower pods: nothing gone", nodes: []*corev1.Node{mkNode("n1", gpus("n1", 1, 81920))},
			pods: []*corev1.Pod{placedOn(gpuPod("lo", "a", 40000), "n1", "n1-g0,NVIDIA,40000,0:;"), placedOn(gpuPod("lo", "b", 40000), "n1", "n1-g0,NVIDIA,40000,0:;")},
			pod:  gpuPod("hi", "p", 20000), want: false},
		{name: "GPU memory held by lower pods: one gone", nodes: []*corev1.Node{mkNode("n1", gpus("n1", 1, 81920))},
			pods: []*corev1.Pod{placedOn(gpuPod("lo", "a", 40000), "n1", "n1-g0,NVIDIA,40000,0:;"), placedOn(gpuPod("lo", "b", 40000), "n1", "n1-g0,NVIDIA,40000,0:;")},
			pod:  gpuPod("hi", "p", 20000), gone: []string{"lo/a"}, want: true},
		{name: "a pod of another node changes nothing", nodes: []*corev1.Node{mkNode("n1", gpus("n1", 1, 81920)), mkNode("n2", gpus("n2", 1, 81920))},
			pods: []*corev1.Pod{placedOn(gpuPod("lo", "a", 80000), "n1", "n1-g0,NVIDIA,80000,0:;"), placedOn(gpuPod("lo", "b", 80000), "n2", "n2-g0,NVIDIA,80000,0:;")},
			pod:  gpuPod("hi", "p", 20000), gone: []string{"lo/b"}, want: false},
		{name: "namespace quota freed by a victim of the same namespace", nodes: []*corev1.Node{mkNode("n1", gpus("n1", 2, 81920))},
			pods:   []*corev1.Pod{placedOn(gpuPod("ml", "a", 40000), "n1", "n1-g0,NVIDIA,40000,0:;")},
			quotas: []*corev1.ResourceQuota{mkQuota("ml", "q", "limits.nvidia.com/gpumem", "50000")},
			pod:    gpuPod("ml", "p", 20000), gone: []string{"ml/a"}, want: true},
		{name: "namespace quota: a victim of another namespace frees none of it", nodes: []*corev1.Node{mkNode("n1", gpus("n1", 2, 81920))},
			pods:   []*corev1.Pod{placedOn(gpuPod("ml", "a", 40000), "n1", "n1-g0,NVIDIA,40000,0:;"), placedOn(gpuPod("lo", "b", 40000), "n1", "n1-g1,NVIDIA,40000,0:;")},
			quotas: []*corev1.ResourceQuota{mkQuota("ml", "q", "limits.nvidia.com/gpumem", "50000")},
			pod:    gpuPod("ml", "p", 20000), gone: []string{"lo/b"}, want: false},
		{name: "kube-scheduler's CPU check freed by a pod without GPUs", kube: true, nodes: []*corev1.Node{withCPUAlloc(mkNode("n1", gpus("n1", 1, 81920)), "4")},
			pods: []*corev1.Pod{cpuPod(placedOn(mkPod("lo", "cpu", tb.MakeContainer("c").Obj()), "n1", ""), "4")},
			pod:  cpuPod(gpuPod("hi", "p", 20000), "2"), gone: []string{"lo/cpu"}, want: true},
		{name: "kube-scheduler's CPU check: nothing gone", kube: true, nodes: []*corev1.Node{withCPUAlloc(mkNode("n1", gpus("n1", 1, 81920)), "4")},
			pods: []*corev1.Pod{cpuPod(placedOn(mkPod("lo", "cpu", tb.MakeContainer("c").Obj()), "n1", ""), "4")},
			pod:  cpuPod(gpuPod("hi", "p", 20000), "2"), want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tc.kube {
				cfg.SchedulerName = DefaultSchedulerName
			}
			c := NewCluster(cfg)
			for _, n := range tc.nodes {
				c.SetNode(n)
			}
			for _, p := range tc.pods {
				c.SetPod(p)
			}
			for _, q := range tc.quotas {
				c.SetQuota(q)
			}
			before := c.Evaluate(tc.pod, EvalOptions{DetailAll: true})
			probe := c.NewProbe(tc.pod, EvalOptions{})
			if probe == nil {
				t.Fatal("no probe for a HAMi GPU pod")
			}
			if got := probe.FitsWithout("n1", tc.gone); got != tc.want {
				t.Fatalf("FitsWithout(n1, %v) = %v, want %v", tc.gone, got, tc.want)
			}
			// The same answer from the cluster with the pods really removed.
			after := c.Evaluate(tc.pod, EvalOptions{DetailAll: true})
			if before.Summary != after.Summary || before.Quota.Memory != nil && before.Quota.Memory.Used != after.Quota.Memory.Used {
				t.Fatalf("the probe changed the cluster: %q -> %q", before.Summary, after.Summary)
			}
			for _, key := range tc.gone {
				ns, name, _ := cutKey(key)
				c.RemovePod(ns, name)
			}
			if got := c.Evaluate(tc.pod, EvalOptions{Nodes: []string{"n1"}}).Fits; got != tc.want {
				t.Fatalf("Evaluate with %v removed fits=%v, the probe said %v", tc.gone, got, tc.want)
			}
		})
	}
}

// The probe declines pods the engine does not place: another scheduler's, or one asking for no GPU.
func TestProbeDeclinesNonGPUPods(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SchedulerName = DefaultSchedulerName
	c := NewCluster(cfg)
	c.SetNode(mkNode("n1", gpus("n1", 1, 81920)))
	if c.NewProbe(mkPod("ns", "cpu", tb.MakeContainer("c").Obj()), EvalOptions{}) != nil {
		t.Fatal("a probe for a pod asking for no GPU")
	}
	other := gpuPod("ns", "p", 1000)
	other.Spec.SchedulerName = "volcano"
	if c.NewProbe(other, EvalOptions{}) != nil {
		t.Fatal("a probe for another scheduler's pod")
	}
}

func withCPUAlloc(n *corev1.Node, cpu string) *corev1.Node {
	n.Status.Allocatable["cpu"] = resource.MustParse(cpu)
	n.Status.Allocatable["memory"] = resource.MustParse("64Gi")
	n.Status.Allocatable["pods"] = resource.MustParse("110")
	return n
}

func cpuPod(p *corev1.Pod, cpu string) *corev1.Pod {
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse(cpu)}
	return p
}

func cutKey(key string) (string, string, bool) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:], true
		}
	}
	return "", key, false
}
