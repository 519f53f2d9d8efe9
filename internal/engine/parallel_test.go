package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// TestParallelEvaluationEqualsSequential: spreading nodes over cores must give byte-for-byte the verdict
// of the sequential walk, for fitting and failing pods alike.
func TestParallelEvaluationEqualsSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := NewCluster(DefaultConfig())
	for i := 0; i < 300; i++ {
		name := fmt.Sprintf("n%03d", i)
		devs := gpus(name, 4, int64(16384+rng.IntN(3)*16384))
		if i%7 == 0 {
			devs[rng.IntN(4)].Health = false
		}
		if i%11 == 0 {
			devs[0].Type = "NVIDIA-Tesla T4"
		}
		annos := []string{}
		if i%13 == 0 {
			annos = append(annos, codec.NodeCordonAnnotation, devs[1].ID)
		}
		n := mkNode(name, devs, annos...)
		if i%29 == 0 {
			n.Annotations = map[string]string{}
		}
		c.SetNode(n)
		for j := 0; j < 6; j++ {
			g, mem := rng.IntN(4), int64(1000+rng.IntN(12)*1000)
			c.SetPod(placedOn(mkPod(fmt.Sprintf("ns%d", j%3), fmt.Sprintf("%s-p%d", name, j), tb.MakeContainer("c").GPUs(1).GPUMem(mem).GPUCores(10).Obj()),
				name, fmt.Sprintf("%s-g%d,NVIDIA,%d,10:;", name, g, mem)))
		}
	}
	c.SetQuota(mkQuota("ns1", "q", "limits.nvidia.com/gpumem", "900000"))
	pods := []*corev1.Pod{
		mkPod("ns0", "fits", tb.MakeContainer("c").GPUs(1).GPUMem(4000).GPUCores(10).Obj()),
		withAnno(mkPod("ns0", "spread", tb.MakeContainer("c").GPUs(2).GPUMem(4000).GPUCores(10).Obj()), AnnoNodePolicy, "spread"),
		mkPod("ns0", "too-big", tb.MakeContainer("c").GPUs(2).GPUMem(40000).GPUCores(10).Obj()),
		mkPod("ns1", "quota", tb.MakeContainer("c").GPUs(4).GPUMem(60000).GPUCores(10).Obj()),
		withAnno(mkPod("ns2", "filtered", tb.MakeContainer("c").GPUs(1).GPUMem(30000).GPUCores(10).Obj()), AnnoNoUseGPUType, "A100"),
	}
	defer func(old int) { parallelMinNodes = old }(parallelMinNodes)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer func(old bool) { judgeByFacts = old }(judgeByFacts)
	// With the facts and without (every failing node's example then a walk's): each range's statuses are kept
	// in its own extras (lazystatus.go), whose indices the merge moves.
	for _, facts := range []bool{true, false} {
		judgeByFacts = facts
		for _, p := range pods {
			parallelMinNodes = 1 << 30
			seq, _ := json.Marshal(c.Evaluate(p, EvalOptions{DetailNodes: []string{"n007", "n150"}}))
			parallelMinNodes = 1
			par, _ := json.Marshal(c.Evaluate(p, EvalOptions{DetailNodes: []string{"n007", "n150"}}))
			if string(seq) != string(par) {
				t.Errorf("pod %s (facts %v): parallel verdict differs from the sequential one", p.Name, facts)
			}
		}
	}
}
