package engine

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// forgedDevices is the device list from issue 19: three entries of 2^62 MiB on one GPU, which wrapped the
// GPU's used memory around int64 when they were simply added.
const forgedDevices = "GPU-full-node-0,NVIDIA,4611686018427387904,0:GPU-full-node-0,NVIDIA,4611686018427387904,0:GPU-full-node-0,NVIDIA,4611686018427387904,0:;"

// forgedPod is a pod any namespace user can create: never scheduled, yet carrying HAMi's placement annotations.
func forgedPod(name, devices string) *corev1.Pod {
	p := withAnno(mkPod("attacker", name, tb.MakeContainer("c").GPUs(1).Obj()), codec.PodNodeAnnotation, "full-node", codec.PodAllocatedAnnotation, devices)
	p.Spec.SchedulerName = "no-such-scheduler"
	p.Status.Phase = corev1.PodPending
	return p
}

// fullNode is one 81920 MiB GPU, fully given to a running pod.
func fullNode() ([]*corev1.Node, []*corev1.Pod) {
	n := mkNode("full-node", []codec.DeviceInfo{dev("GPU-full-node-0", 0, 81920)})
	owner := placedOn(mkPod("team", "owner", tb.MakeContainer("c").GPUs(1).GPUMem(81920).GPUCores(0).Obj()), "full-node", "GPU-full-node-0,NVIDIA,81920,0:;")
	return []*corev1.Node{n}, []*corev1.Pod{owner}
}

func TestForgedPlacementCannotFreeAFullGPU(t *testing.T) {
	cases := []struct {
		name, devices, wantMsg string
	}{
		{"issue 19: 3 x 2^62 MiB wraps int64", forgedDevices, "larger than"},
		{"within int64 but above the GPU's memory", "GPU-full-node-0,NVIDIA,81920,0:GPU-full-node-0,NVIDIA,81920,0:;", "more than the GPU's registered 81920 MiB"},
		{"cores above the GPU's 100%", "GPU-full-node-0,NVIDIA,0,100:GPU-full-node-0,NVIDIA,0,100:;", "more than the GPU's registered 100%"},
		{"cores above any GPU", "GPU-full-node-0,NVIDIA,0,9223372036854775807:;", "larger than"},
		{"more slots than the GPU has", strings.Repeat("GPU-full-node-0,NVIDIA,0,0:", 11) + ";", "slots are more than"},
	}
	for _, tc := range cases {
		for _, podFirst := range []bool{false, true} {
			name := tc.name
			if podFirst {
				name += ", pod seen before its node"
			}
			t.Run(name, func(t *testing.T) {
				nodes, pods := fullNode()
				c := NewCluster(DefaultConfig())
				if podFirst {
					c.SetPod(forgedPod("forged", tc.devices))
				}
				for _, n := range nodes {
					c.SetNode(n)
				}
				for _, p := range pods {
					c.SetPod(p)
				}
				if !podFirst {
					c.SetPod(forgedPod("forged", tc.devices))
				}
				g := c.Node("full-node").GPUs[0]
				if g.UsedMem != 81920 || g.UsedSlots != 1 || g.UsedCores != 0 {
					t.Fatalf("GPU usage %d MiB, %d slots, %d cores; want the owner's 81920 MiB, 1 slot, 0 cores only", g.UsedMem, g.UsedSlots, g.UsedCores)
				}
				probe := mkPod("team", "probe", tb.MakeContainer("c").GPUs(1).GPUMem(30000).Obj())
				if v := c.Evaluate(probe, EvalOptions{}); v.Fits {
					t.Fatalf("a 30000 MiB pod fits on the full GPU: %s", v.Summary)
				}
				if cp := c.Capacity(probe, 10); cp.Copies != 0 {
					t.Fatalf("what-if says %d copies fit on the full GPU", cp.Copies)
				}
				var found bool
				for _, p := range c.Problems() {
					if p.Kind == "Pod" && p.Object == "attacker/forged" && strings.Contains(p.Field, codec.PodAllocatedAnnotation) && strings.Contains(p.Message, tc.wantMsg) {
						found = true
					}
				}
				if !found {
					t.Fatalf("no problem on attacker/forged naming %s and %q: %v", codec.PodAllocatedAnnotation, tc.wantMsg, c.Problems())
				}
				// Removing the forged pod takes back exactly what was added: nothing.
				c.RemovePod("attacker", "forged")
				if g := c.Node("full-node").GPUs[0]; g.UsedMem != 81920 || g.UsedSlots != 1 {
					t.Fatalf("after removing the forged pod the GPU uses %d MiB, %d slots", g.UsedMem, g.UsedSlots)
				}
			})
		}
	}
}

func TestNamespaceUsageNeverWraps(t *testing.T) {
	var u usage
	if !u.charge(maxQuotaUse-1, 0) {
		t.Fatal("a charge below the bound was refused")
	}
	if u.charge(2, 0) {
		t.Fatal("a charge past the bound was accepted")
	}
	if u.mem != maxQuotaUse-1 {
		t.Fatalf("refused charge changed usage to %d", u.mem)
	}
	if u.charge(-5, 0) {
		t.Fatal("a negative charge was accepted")
	}
}

func TestQuotaLimitTimesFactorNeverWraps(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MemoryFactor = 1024
	c := NewCluster(cfg)
	probs := c.SetQuota(mkQuota("ns", "rq", "limits.nvidia.com/gpumem", "10000000000000000"))
	if len(probs) != 1 || !strings.Contains(probs[0].Message, "does not fit in 64 bits") || probs[0].Object != "ns/rq" {
		t.Fatalf("problems %v, want one naming ns/rq and the overflow", probs)
	}
	if q := c.Quota("ns"); q.Memory == nil || q.Memory.Limit != maxQuotaUse {
		t.Fatalf("quota line %+v, want the limit read as %d", q.Memory, maxQuotaUse)
	}
}

func TestUnboundHolding(t *testing.T) {
	now := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	allocating := func(at time.Time) *corev1.Pod {
		p := forgedPod("p", "GPU-full-node-0,NVIDIA,1000,0:;")
		p.Annotations[codec.PodBindPhaseAnnotation] = "allocating"
		p.Annotations[codec.PodBindTimeAnnotation] = strconv.FormatInt(at.Unix(), 10)
		return p
	}
	elsewhere := placedOn(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), "full-node", "GPU-full-node-0,NVIDIA,1000,0:;")
	elsewhere.Spec.NodeName = "other-node"
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		now  time.Time
		want string
	}{
		{"bound where it says", placedOn(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), "full-node", "GPU-full-node-0,NVIDIA,1000,0:;"), now, ""},
		{"never bound", forgedPod("p", "GPU-full-node-0,NVIDIA,1000,0:;"), now, `bound to no node (hami.io/bind-phase "", scheduler "no-such-scheduler")`},
		{"bound to another node", elsewhere, now, "but is bound to node other-node"},
		{"in its bind", allocating(now.Add(-time.Minute)), now, ""},
		{"allocating for longer than the bind window", allocating(now.Add(-10 * time.Minute)), now, `bound to no node (hami.io/bind-phase "allocating"`},
		{"allocating, no clock", allocating(now.Add(-10 * time.Minute)), time.Time{}, ""},
		{"not placed", mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(0).Obj()), now, ""},
	} {
		got := UnboundHolding(tc.pod, tc.now)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCountBoundOnlyLeavesUnboundHoldersOut(t *testing.T) {
	cfg := DefaultConfig()
	cfg.CountBoundOnly = true
	for _, bound := range []bool{false, true} {
		c := NewCluster(cfg)
		c.SetNode(mkNode("full-node", []codec.DeviceInfo{dev("GPU-full-node-0", 0, 81920)}))
		p := forgedPod("forged", "GPU-full-node-0,NVIDIA,40000,0:;")
		if bound {
			p.Spec.NodeName = "full-node"
		}
		probs := c.SetPod(p)
		used := c.Node("full-node").GPUs[0].UsedMem
		if bound && (used != 40000 || len(probs) != 0) {
			t.Fatalf("bound pod: used %d MiB, problems %v; want 40000 and none", used, probs)
		}
		if !bound && (used != 0 || len(probs) != 1 || !strings.Contains(probs[0].Message, "not counted")) {
			t.Fatalf("unbound pod: used %d MiB, problems %v; want 0 and one saying it is not counted", used, probs)
		}
		if q := c.Quota("attacker"); !bound && c.Pod("attacker", "forged") != nil {
			t.Fatalf("unbound pod still counted: %+v", q)
		}
	}
	// HAMi's rule (the default) counts it.
	c := NewCluster(DefaultConfig())
	c.SetNode(mkNode("full-node", []codec.DeviceInfo{dev("GPU-full-node-0", 0, 81920)}))
	c.SetPod(forgedPod("forged", "GPU-full-node-0,NVIDIA,40000,0:;"))
	if used := c.Node("full-node").GPUs[0].UsedMem; used != 40000 {
		t.Fatalf("default config: used %d MiB, want HAMi's 40000", used)
	}
}
