package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// kubeConfig is the commands' Config: kube-scheduler's checks are gates.
func kubeConfig() Config {
	cfg := DefaultConfig()
	cfg.SchedulerName = DefaultSchedulerName
	return cfg
}

// TestKubeGatesMatchKubefit: on random clusters of cordoned, tainted, labelled and loaded nodes, every node the
// verdict rejects with a kube code is one kubefit.Check rejects with that first check, and every node kubefit
// passes is judged by HAMi's gates; the quick path (Quick on the engine's node) never disagrees with the full
// checks. The verdict is the same whether the cluster is built before or after the pods (incremental usage).
func TestKubeGatesMatchKubefit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 25))
	for world := 0; world < 60; world++ {
		cfg := kubeConfig()
		c := NewCluster(cfg)
		var nodes []*corev1.Node
		byNode := map[string][]*corev1.Pod{}
		for i := 0; i < 6; i++ {
			name := fmt.Sprintf("n%d", i)
			n := mkNode(name, gpus(name, 2, 16000))
			n.Labels = map[string]string{"pool": []string{"a", "b"}[rng.IntN(2)]}
			n.Status.Allocatable["cpu"] = resource.MustParse(fmt.Sprint(2 + rng.IntN(6)))
			n.Status.Allocatable["memory"] = resource.MustParse("16Gi")
			if rng.IntN(4) > 0 {
				n.Status.Allocatable["pods"] = *resource.NewQuantity(int64(1+rng.IntN(4)), resource.DecimalSI)
			}
			switch rng.IntN(5) {
			case 0:
				n.Spec.Unschedulable = true
			case 1:
				n.Spec.Taints = []corev1.Taint{{Key: "gpu", Value: "reserved", Effect: corev1.TaintEffectNoSchedule}}
			case 2:
				n.Spec.Taints = []corev1.Taint{{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}}
			}
			nodes = append(nodes, n)
			c.SetNode(n)
			for j := 0; j < rng.IntN(3); j++ {
				p := mkPod("ns", fmt.Sprintf("%s-b%d", name, j), tb.MakeContainer("c").Obj())
				p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse(fmt.Sprint(1 + rng.IntN(2)))}
				p.Spec.NodeName = name
				byNode[name] = append(byNode[name], p)
				c.SetPod(p)
			}
		}
		for k := 0; k < 8; k++ {
			pod := mkPod("ns", fmt.Sprintf("p%d", k), tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj())
			if rng.IntN(2) == 0 {
				pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse(fmt.Sprint(1 + rng.IntN(3)))}
			}
			if rng.IntN(3) == 0 {
				pod.Spec.NodeSelector = map[string]string{"pool": "a"}
			}
			if rng.IntN(3) == 0 {
				pod.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}
			}
			v := c.Evaluate(pod, EvalOptions{})
			want := kubefit.Check(withDefaultRequests(pod), nodes, byNode, cfg.ManagedResources())
			for i, ns := range v.Nodes() {
				first := ""
				if f := want[i].Failures; len(f) > 0 {
					first = f[0].Check
				}
				got := ""
				if IsKubeCheck(ns.Code) {
					got = string(ns.Code)
				}
				if got != first {
					t.Fatalf("world %d pod %d node %s: verdict %q (%s), kubefit's first failure %q (%+v)", world, k, ns.Node, got, ns.Reason, first, want[i].Failures)
				}
			}
			if v.Fits {
				if n := v.Placement.Node; IsKubeCheck(v.NodeStatus(n).Code) {
					t.Fatalf("placed on %s, which kube-scheduler rejects", n)
				}
			}
		}
	}
}

// TestKubeGatesCapacity: copies take the pod's CPU and a pod slot from their node, and the extender's scope
// (Kube: KubeOff, or a Config without SchedulerName) leaves kube-scheduler's checks out.
func TestKubeGatesCapacity(t *testing.T) {
	c := NewCluster(kubeConfig())
	n := mkNode("n1", gpus("n1", 4, 16000))
	n.Status.Allocatable["cpu"] = resource.MustParse("5")
	n.Status.Allocatable["pods"] = resource.MustParse("10")
	c.SetNode(n)
	pod := mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj())
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse("2")}
	if got := c.Capacity(pod, 100); got.Copies != 2 {
		t.Errorf("copies %d, want 2 (5 CPUs, 2 each)", got.Copies)
	}
	n2 := n.DeepCopy()
	n2.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoExecute}}
	c.SetNode(n2)
	if got := c.Capacity(pod, 100); got.Copies != 0 {
		t.Errorf("copies %d on a NoExecute-tainted node, want 0", got.Copies)
	}
	if v := c.Evaluate(pod, EvalOptions{}); v.Fits || v.Nodes()[0].Code != KubeTaint {
		t.Errorf("verdict on the tainted node: %s", v.Summary)
	}
	if v := c.Evaluate(pod, EvalOptions{Kube: KubeOff}); !v.Fits {
		t.Errorf("KubeOff must judge HAMi's gates only: %s", v.Summary)
	}
	if v := c.Evaluate(pod, EvalOptions{Kube: KubeStatic}); v.Fits {
		t.Errorf("KubeStatic must refuse a NoExecute taint: %s", v.Summary)
	}
	ext := NewCluster(DefaultConfig())
	ext.SetNode(n2)
	if v := ext.Evaluate(pod, EvalOptions{}); !v.Fits {
		t.Errorf("the extender's cluster judges HAMi's gates only by default: %s", v.Summary)
	}
	if v := ext.Evaluate(pod, EvalOptions{Kube: KubeStatic}); v.Fits || v.Nodes()[0].Code != KubeTaint {
		t.Errorf("the extender's bind check (KubeStatic) must refuse the taint: %s", v.Summary)
	}
}
