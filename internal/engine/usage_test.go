package engine

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// TestUsageAccounting checks which pods count and how their device lists become per-GPU usage.
func TestUsageAccounting(t *testing.T) {
	withInit := func(p *corev1.Pod, inits ...corev1.Container) *corev1.Pod { p.Spec.InitContainers = inits; return p }
	cases := []struct {
		name             string
		pod              *corev1.Pod
		wantSlots        [2]int32
		wantMem          [2]int64
		wantCores        [2]int64
		wantProblemField string
	}{
		{name: "v2.9 layout, one app container", pod: placedOn(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(4096).GPUCores(0).Obj()), "n1", "n1-g0,NVIDIA,4096,0:;"),
			wantSlots: [2]int32{1, 0}, wantMem: [2]int64{4096, 0}},
		{name: "two GPUs in one container", pod: placedOn(mkPod("ns", "p", tb.MakeContainer("c").GPUs(2).GPUMem(2500).GPUCores(25).Obj()), "n1", "n1-g0,NVIDIA,2500,25:n1-g1,NVIDIA,2500,25:;"),
			wantSlots: [2]int32{1, 1}, wantMem: [2]int64{2500, 2500}, wantCores: [2]int64{25, 25}},
		{name: "two containers share a GPU: slots add up", pod: placedOn(mkPod("ns", "p", tb.MakeContainer("a").GPUs(1).GPUMem(1000).GPUCores(10).Obj(), tb.MakeContainer("b").GPUs(1).GPUMem(2000).GPUCores(20).Obj()), "n1",
			"n1-g0,NVIDIA,1000,10:;n1-g0,NVIDIA,2000,20:;"), wantSlots: [2]int32{2, 0}, wantMem: [2]int64{3000, 0}, wantCores: [2]int64{30, 0}},
		{name: "v2.9 leading empty init entry", pod: placedOn(withInit(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), tb.MakeContainer("init").Obj()), "n1",
			";n1-g1,NVIDIA,1000,0:;"), wantSlots: [2]int32{0, 1}, wantMem: [2]int64{0, 1000}},
		{name: "init peak beats app sum", pod: placedOn(withInit(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(10).Obj()), tb.MakeContainer("init").GPUs(1).GPUMem(6000).GPUCores(50).Obj()), "n1",
			"n1-g0,NVIDIA,6000,50:;n1-g0,NVIDIA,1000,10:;"), wantSlots: [2]int32{1, 0}, wantMem: [2]int64{6000, 0}, wantCores: [2]int64{50, 0}},
		{name: "v2.8 app-only layout with init containers", pod: placedOn(withInit(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), tb.MakeContainer("init").Obj()), "n1",
			"n1-g0,NVIDIA,1000,0:;"), wantSlots: [2]int32{1, 0}, wantMem: [2]int64{1000, 0}},
		{name: "v2.10.0 dropped empty entries (#2899)", pod: placedOn(mkPod("ns", "p", tb.MakeContainer("x").Obj(), tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj(), tb.MakeContainer("y").Obj()), "n1",
			"n1-g1,NVIDIA,1000,0:;"), wantSlots: [2]int32{0, 1}, wantMem: [2]int64{0, 1000}},
		{name: "old empty slot ,,0,0: is skipped", pod: placedOn(mkPod("ns", "p", tb.MakeContainer("a").Obj(), tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), "n1",
			",,0,0:;n1-g0,NVIDIA,1000,0:;"), wantSlots: [2]int32{1, 0}, wantMem: [2]int64{1000, 0}},
		{name: "MIG [t-s] suffix stripped", pod: placedOn(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), "n1", "n1-g1[1-2],NVIDIA,9856,0:;"),
			wantSlots: [2]int32{0, 1}, wantMem: [2]int64{0, 9856}},
		{name: "succeeded pods do not count", pod: func() *corev1.Pod {
			p := placedOn(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), "n1", "n1-g0,NVIDIA,1000,0:;")
			p.Status.Phase = corev1.PodSucceeded
			return p
		}()},
		{name: "terminating pods still count", pod: func() *corev1.Pod {
			p := placedOn(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), "n1", "n1-g0,NVIDIA,1000,0:;")
			p.DeletionTimestamp = &metavVal
			return p
		}(), wantSlots: [2]int32{1, 0}, wantMem: [2]int64{1000, 0}},
		{name: "pending pod without vgpu-node does not count", pod: withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), codec.PodAllocatedAnnotation, "n1-g0,NVIDIA,1000,0:;")},
		{name: "malformed device list: counted as nothing, problem names the key", pod: placedOn(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), "n1", "n1-g0,NVIDIA,lots,0:;"),
			wantProblemField: codec.PodAllocatedAnnotation},
		{name: "unknown GPU: problem names the key", pod: placedOn(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), "n1", "GPU-gone,NVIDIA,1000,0:;"),
			wantProblemField: codec.PodAllocatedAnnotation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCluster([]*corev1.Node{mkNode("n1", gpus("n1", 2, 16384))}, nil)
			probs := c.SetPod(tc.pod)
			n := c.Node("n1")
			for i := 0; i < 2; i++ {
				g := n.GPUs[i]
				if g.UsedSlots != tc.wantSlots[i] || g.UsedMem != tc.wantMem[i] || g.UsedCores != tc.wantCores[i] {
					t.Errorf("GPU %d used slots=%d mem=%d cores=%d; want %d %d %d", i, g.UsedSlots, g.UsedMem, g.UsedCores, tc.wantSlots[i], tc.wantMem[i], tc.wantCores[i])
				}
			}
			if tc.wantProblemField == "" && len(probs) > 0 {
				t.Errorf("unexpected problems %v", probs)
			}
			if tc.wantProblemField != "" && (len(probs) == 0 || !strings.Contains(probs[0].Field, tc.wantProblemField) || probs[0].Object != "ns/p") {
				t.Errorf("problems %v, want one naming ns/p and %s", probs, tc.wantProblemField)
			}
			// Removing the pod gives every unit back.
			c.RemovePod("ns", "p")
			for _, g := range c.Node("n1").GPUs {
				if g.UsedSlots != 0 || g.UsedMem != 0 || g.UsedCores != 0 {
					t.Errorf("after removal GPU %s still uses %d/%d/%d", g.UUID, g.UsedSlots, g.UsedMem, g.UsedCores)
				}
			}
		})
	}
}

func TestPodsArrivingBeforeTheirNodeAreCounted(t *testing.T) {
	c := NewCluster(DefaultConfig())
	c.SetPod(placedOn(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(10).Obj()), "n1", "n1-g0,NVIDIA,1000,10:;"))
	c.SetNode(mkNode("n1", gpus("n1", 1, 16384)))
	if g := c.Node("n1").GPUs[0]; g.UsedMem != 1000 || g.UsedCores != 10 || g.UsedSlots != 1 {
		t.Fatalf("usage %+v not applied when the node arrived", g)
	}
	// Re-registering the node keeps the usage exactly once.
	c.SetNode(mkNode("n1", gpus("n1", 1, 16384)))
	if g := c.Node("n1").GPUs[0]; g.UsedMem != 1000 || g.UsedSlots != 1 {
		t.Fatalf("usage %+v after re-registration", g)
	}
	if q := c.Quota("ns"); q.Memory != nil {
		t.Fatalf("no ResourceQuota, yet memory line %+v", q.Memory)
	}
}

func TestEvaluateIgnoresThePodsOwnUsage(t *testing.T) {
	// A pod already counted (for example re-checked at bind) must not be blocked by itself.
	p := placedOn(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(16000).GPUCores(0).Obj()), "n1", "n1-g0,NVIDIA,16000,0:;")
	c := newTestCluster([]*corev1.Node{mkNode("n1", gpus("n1", 1, 16384))}, []*corev1.Pod{p})
	if v := c.Evaluate(p, EvalOptions{}); !v.Fits {
		t.Fatalf("pod blocked by its own usage: %s", v.Summary)
	}
	other := mkPod("ns", "q", tb.MakeContainer("c").GPUs(1).GPUMem(16000).GPUCores(0).Obj())
	if v := c.Evaluate(other, EvalOptions{}); v.Fits {
		t.Fatalf("another pod fits on a full GPU")
	}
}

var metavVal = metav1.Now()
