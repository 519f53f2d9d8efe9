package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// TestFactsOnCrowdedNodes holds the facts' judgement (nodefacts.go) to the walk where the generated worlds
// rarely go: nodes with unhealthy GPUs, GPUs out of slots, GPUs of different sizes, requests in MiB and in
// percent, several GPUs per container, init containers, pods evaluated again on their own node, and a
// namespace quota, the mutex policy and MIG GPUs. Every group of the facts must be met by a judged node.
func TestFactsOnCrowdedNodes(t *testing.T) {
	var judged, withUnhealthy, withNoSlots, withMemory int
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 5))
		c := NewCluster(DefaultConfig())
		var placed []*corev1.Pod
		for i := 0; i < 12; i++ {
			name := fmt.Sprintf("node-%02d", i)
			devs := gpus(name, 1+rng.IntN(8), []int64{15360, 40960, 81920}[rng.IntN(3)])
			for g := range devs {
				devs[g].Health = rng.IntN(6) > 0
				devs[g].Count = int32(1 + rng.IntN(4))
				if rng.IntN(5) == 0 {
					devs[g].Devmem = 24576 // a node of mixed sizes
				}
				if rng.IntN(12) == 0 { // a MIG GPU: its walk depends on its order, so no facts for its node
					devs[g].Mode = ModeMIG
					devs[g].MigProfiles = []codec.MigProfile{{Name: "3g.40gb", MemoryMB: 40192, Core: 42, SliceCount: 3,
						Placements: []codec.MigPlacement{{Start: 0, Size: 4}, {Start: 4, Size: 4}}}}
				}
			}
			c.SetNode(mkNode(name, devs))
			for j := 0; j < rng.IntN(14); j++ {
				g := rng.IntN(len(devs))
				mem := int64(1024 * (1 + rng.IntN(20)))
				p := placedOn(mkPod("team", fmt.Sprintf("%s-p%d", name, j), tb.MakeContainer("c").GPUs(1).GPUMem(mem).Obj()),
					name, fmt.Sprintf("%s-g%d,NVIDIA,%d,%d:;", name, g, mem, 10*rng.IntN(3)))
				c.SetPod(p)
				placed = append(placed, p)
			}
		}
		if seed%4 == 0 {
			c.SetQuota(mkQuota("team", "gpu", "limits.nvidia.com/gpumem", fmt.Sprint(40000+rng.IntN(200000))))
		}
		pods := placed[:min(len(placed), 4)] // evaluated again: their own share is overlaid on their node
		for i := 0; i < 10; i++ {
			var cs []corev1.Container
			for k := 0; k < 1+rng.IntN(2); k++ {
				ct := tb.MakeContainer(fmt.Sprintf("c%d", k)).GPUs(int64(1 + rng.IntN(4)))
				if rng.IntN(3) == 0 {
					ct = ct.GPUMemPercent(int64(10 * (1 + rng.IntN(10))))
				} else {
					ct = ct.GPUMem(int64(1024 * (1 + rng.IntN(80))))
				}
				cs = append(cs, ct.GPUCores(int64(10*rng.IntN(11))).Obj())
			}
			p := mkPod("team", fmt.Sprintf("pending-%d", i), cs...)
			if rng.IntN(4) == 0 {
				p = withAnno(p, AnnoGPUPolicy, "mutex")
			}
			if rng.IntN(3) == 0 {
				p.Spec.InitContainers = []corev1.Container{tb.MakeContainer("init").GPUs(int64(1 + rng.IntN(3))).GPUMem(int64(1024 * (1 + rng.IntN(80)))).Obj()}
			}
			pods = append(pods, p)
		}
		for i, p := range pods {
			if i%3 == 2 && len(placed) > 0 { // the facts of the nodes whose usage changes must follow
				moved := placed[rng.IntN(len(placed))]
				if rng.IntN(2) == 0 {
					c.RemovePod(moved.Namespace, moved.Name)
				} else {
					c.SetPod(moved)
				}
			}
			restore := SetJudgeByFacts(false)
			walked := c.Evaluate(p, EvalOptions{})
			restore()
			got := c.Evaluate(p, EvalOptions{})
			if d := VerdictDiff(walked, got); d != "" {
				t.Fatalf("seed %d pod %d, walked then got: %s", seed, i, d)
			}
			for _, n := range factsJudged(c, p) {
				facts := c.factsOf(n)
				judged++
				withUnhealthy += min(facts.unhealthy, 1)
				withNoSlots += min(facts.noSlots, 1)
				withMemory += min(facts.open, 1)
			}
		}
	}
	if withUnhealthy == 0 || withNoSlots == 0 || withMemory == 0 {
		t.Fatalf("the worlds did not reach every group: %d judged nodes, %d with unhealthy GPUs, %d with GPUs out of slots, %d with open GPUs",
			judged, withUnhealthy, withNoSlots, withMemory)
	}
	t.Logf("%d judged nodes: %d with unhealthy GPUs, %d with GPUs out of slots, %d with open GPUs", judged, withUnhealthy, withNoSlots, withMemory)
}

// TestOrderFromFactsIsTheSort holds the cached device orders (orderFromFacts) to the sort they replace: on
// NVIDIA nodes and on nodes of types whose score adds the request (Ascend, whose plugin registers the type's
// own name), with GPUs of different sizes, NUMA nodes and usage, for pods of every sort rule and with scoring
// weights. Wherever the facts give an order it must be sortGPUs' order from the registration order.
func TestOrderFromFactsIsTheSort(t *testing.T) {
	policies := []string{"", "binpack", "spread", "binpack,numa", "mutex", "numa"}
	used := map[string]int{}
	for seed := uint64(1); seed <= 80; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		var nodes []*corev1.Node
		for i := 0; i < 6; i++ {
			name := fmt.Sprintf("node-%02d", i)
			var devs []codec.DeviceInfo
			if i%2 == 0 {
				devs = gpus(name, 1+rng.IntN(10), 81920)
			} else {
				devs = vdevs(name, "npu", "Ascend910B3", 1+rng.IntN(10), 65536, 100, 4)
			}
			for g := range devs {
				devs[g].Numa = rng.IntN(2)
				devs[g].Count = int32(2 + rng.IntN(8))
				devs[g].Devmem = []int64{24576, 65536, 81920}[rng.IntN(3)]
			}
			if i%2 == 0 {
				nodes = append(nodes, mkNode(name, devs))
			} else {
				nodes = append(nodes, vendorNode(name, b3Reg, devs))
			}
		}
		c := newTestCluster(nodes, nil)
		for _, n := range c.nodeList {
			for gi := range n.GPUs {
				g := &n.GPUs[gi]
				g.UsedSlots = int32(rng.IntN(int(g.Slots) + 1))
				g.UsedMem = int64(rng.IntN(int(g.TotalMem/1024)+1)) * 1024
				g.UsedCores = int64(rng.IntN(int(g.TotalCores) + 1))
			}
			n.facts.forget() // usage written by hand, as applyToNode does
		}
		for i := 0; i < 12; i++ {
			var p *corev1.Pod
			if i%2 == 0 {
				p = mkPod("ns", "p", tb.MakeContainer("c").GPUs(int64(1+rng.IntN(2))).GPUMem(int64(1024*(1+rng.IntN(20)))).GPUCores(int64(10*rng.IntN(5))).Obj())
			} else {
				p = mkPod("ns", "p", vctr("c", b3, 1+rng.IntN(2), b3Mem, 1024*(1+rng.IntN(20))))
			}
			if pol := policies[rng.IntN(len(policies))]; pol != "" {
				p = withAnno(p, AnnoGPUPolicy, pol)
			}
			if rng.IntN(3) == 0 {
				p = withAnno(p, AnnoDeviceScoreWeight, "slot=2,core=0.5,memory=1")
			}
			req, _ := parseRequest(p, c.cfg, c.kinds)
			for _, n := range c.nodeList {
				f := newFitter(c, req, nil, false)
				f.resetExtra(n)
				r := &f.req.Containers[0]
				if !f.orderFromFacts(n, r) {
					continue
				}
				got := append([]int(nil), f.order...)
				f.resetOrder(n)
				f.sortGPUs(n, r)
				if !slices.Equal(got, f.order) {
					t.Fatalf("seed %d pod %d node %s (%s, rule %+v): facts' order %v, the sort's %v", seed, i, n.Name, n.GPUs[0].Type, f.rule, got, f.order)
				}
				kind := "spread"
				if f.rule.binpack {
					kind = "binpack"
				}
				used[n.GPUs[0].Type+" "+kind]++
			}
		}
	}
	if used["NVIDIA-A100-SXM4-80GB spread"] == 0 || used["NVIDIA-A100-SXM4-80GB binpack"] == 0 {
		t.Fatalf("the facts' orders were not used for both rules: %v", used)
	}
	t.Logf("orders from facts compared: %v", used)
}

// TestQuickFitsQuotaWithOwnUsage: a pod counted on its node and evaluated again, with a namespace quota on the
// way. Its own released share lets a device outside the facts' open group (out of slots by its own use) pass,
// with another share than the open devices': the walk, taking that device first, meets the quota on the next;
// the facts must not say it fits (a reviewer's case).
func TestQuickFitsQuotaWithOwnUsage(t *testing.T) {
	c := NewCluster(DefaultConfig())
	big := dev("n0-g0", 1, 81920)
	big.Count = 1
	c.SetNode(mkNode("n0", []codec.DeviceInfo{dev("n0-g1", 0, 40960), big, dev("n0-g2", 2, 40960)}))
	c.SetPod(placedOn(mkPod("other", "a", tb.MakeContainer("c").GPUs(1).GPUMem(1024).Obj()), "n0", "n0-g1,NVIDIA,1024,0:;"))
	c.SetPod(placedOn(mkPod("other", "b", tb.MakeContainer("c").GPUs(1).GPUMem(1024).Obj()), "n0", "n0-g2,NVIDIA,1024,0:;"))
	self := placedOn(mkPod("team", "self", tb.MakeContainer("c").GPUs(2).GPUMemPercent(50).Obj()), "n0", "n0-g0,NVIDIA,40960,0:;")
	c.SetPod(self)
	c.SetQuota(mkQuota("team", "q", "limits.nvidia.com/gpumem", "51200"))
	restore := SetJudgeByFacts(false)
	walked := c.Evaluate(self, EvalOptions{})
	restore()
	if got := c.Evaluate(self, EvalOptions{}); !reflect.DeepEqual(walked, got) {
		t.Fatalf("the walk: fits=%v %s\nthe facts: fits=%v %s", walked.Fits, walked.Summary, got.Fits, got.Summary)
	}
	if walked.Fits {
		t.Fatalf("the case is gone: the walk fits (%s)", walked.Summary)
	}
}

// TestFactsConcurrentWithCapacity: Capacity copies nodes while other evaluations compute and store facts on the
// same nodes (run with -race: the copy reads only the cache's pointer).
func TestFactsConcurrentWithCapacity(t *testing.T) {
	c := benchCluster(t, 8, 4)
	pod := fittingPod()
	for round := 0; round < 50; round++ {
		for _, n := range c.nodeList {
			n.facts.forget()
		}
		done := make(chan *Verdict)
		go func() { done <- c.Evaluate(pod, EvalOptions{}) }()
		capa := c.Capacity(pod, 3)
		if v := <-done; !v.Fits || capa.Copies != 3 {
			t.Fatalf("round %d: fits=%v, copies %d, want a fit and 3", round, v.Fits, capa.Copies)
		}
	}
}
