package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// TestUnsortedFailOnCrowdedNodes holds the unsorted walk of failing containers to the sorted walk where the
// generated worlds rarely go: pods asking for several GPUs where some but too few pass (the "set" results),
// init containers, nodes whose GPUs sit beside another device type's, unhealthy GPUs and a namespace quota.
func TestUnsortedFailOnCrowdedNodes(t *testing.T) {
	cfg := DefaultConfig()
	other := -1
	for k, kind := range cfg.Kinds() {
		if k > 0 && kind.Register != "" && kind.Count != "" {
			other = k
			break
		}
	}
	if other < 0 {
		t.Fatal("no second device type with a register annotation in the default config")
	}
	ok := cfg.Kinds()[other]
	shortSets, others := 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		c := NewCluster(cfg)
		for i := 0; i < 12; i++ {
			name := fmt.Sprintf("node-%02d", i)
			devs := gpus(name, 2+rng.IntN(7), []int64{15360, 81920}[rng.IntN(2)])
			for g := range devs {
				devs[g].Health = rng.IntN(8) > 0
			}
			var annos []string
			if rng.IntN(4) == 0 {
				annos = append(annos, ok.Register, codec.FormatNodeRegister([]codec.DeviceInfo{
					{ID: name + "-x0", Index: 0, Count: 4, Devmem: 65536, Devcore: 100, Type: ok.Name, Health: true}}))
			}
			c.SetNode(mkNode(name, devs, annos...))
			for j := 0; j < rng.IntN(12); j++ {
				g := rng.IntN(len(devs))
				mem := int64(1024 * (1 + rng.IntN(40)))
				c.SetPod(placedOn(mkPod("team", fmt.Sprintf("%s-p%d", name, j), tb.MakeContainer("c").GPUs(1).GPUMem(mem).Obj()),
					name, fmt.Sprintf("%s-g%d,NVIDIA,%d,%d:;", name, g, mem, 10*rng.IntN(5))))
			}
		}
		if seed%3 == 0 {
			c.SetQuota(mkQuota("team", "gpu", "limits.nvidia.com/gpumem", fmt.Sprint(40000+rng.IntN(200000))))
		}
		for i := 0; i < 8; i++ {
			var cs []corev1.Container
			for k := 0; k < 1+rng.IntN(2); k++ {
				cs = append(cs, tb.MakeContainer(fmt.Sprintf("c%d", k)).GPUs(int64(1+rng.IntN(4))).GPUMem(int64(1024*(1+rng.IntN(60)))).GPUCores(int64(10*rng.IntN(11))).Obj())
			}
			p := mkPod("team", fmt.Sprintf("pending-%d", i), cs...)
			if rng.IntN(3) == 0 {
				p.Spec.InitContainers = []corev1.Container{tb.MakeContainer("init").GPUs(int64(1 + rng.IntN(3))).GPUMem(int64(1024 * (1 + rng.IntN(60)))).Obj()}
			}
			restore := SetUnsortedFail(false)
			sorted := c.Evaluate(p, EvalOptions{})
			restore()
			unsorted := c.Evaluate(p, EvalOptions{})
			if d := VerdictDiff(sorted, unsorted); d != "" {
				t.Fatalf("seed %d pod %d, sorted then unsorted: %s", seed, i, d)
			}
			for _, ns := range sorted.Nodes() {
				if ns.Example != nil && ns.Example.Result.Gate == "set" {
					shortSets++
				}
				if ns.Reason != "" && c.nodes[ns.Node] != nil && c.nodes[ns.Node].DevicesOf(other) > 0 && !ns.Fits {
					others++
				}
			}
		}
	}
	if shortSets == 0 || others == 0 {
		t.Fatalf("the worlds did not reach the cases this test is for: %d nodes short of a set, %d failing beside another type", shortSets, others)
	}
	t.Logf("%d nodes short of a set, %d failing beside another device type", shortSets, others)
}
