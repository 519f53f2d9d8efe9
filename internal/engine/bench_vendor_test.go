package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// benchMixedCluster is benchCluster's cluster with one node in ten registering 8 Hygon DCUs and one in ten
// 8 Ascend 910B3 NPUs instead of NVIDIA GPUs (64 GiB each), their pods holding shares of those devices.
func benchMixedCluster(t testing.TB, nodes, podsPerNode int) *Cluster {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	c := NewCluster(DefaultConfig())
	for i := 0; i < nodes; i++ {
		name := fmt.Sprintf("node-%05d", i)
		kind, word, alloc, res := "", "NVIDIA", "", ""
		switch i % 10 {
		case 8:
			kind, word, alloc, res = dcuReg, "DCU", dcuAlloc, dcuNum
			c.SetNode(vendorNode(name, kind, vdevs(name, "g", "DCU-K100", 8, 65536, 100, 10)))
		case 9:
			kind, word, alloc, res = b3Reg, "Ascend910B3", b3Alloc, b3
			c.SetNode(vendorNode(name, kind, vdevs(name, "g", "Ascend910B3", 8, 65536, 20, 10)))
		default:
			c.SetNode(mkNode(name, gpus(name, 8, 81920)))
		}
		for j := 0; j < podsPerNode; j++ {
			mem := int64(2048 + rng.IntN(6)*1024)
			cores := int64(5 + rng.IntN(5)*5)
			g := rng.IntN(8)
			pod := mkPod("team-"+fmt.Sprint(i%20), fmt.Sprintf("%s-pod-%d", name, j), tb.MakeContainer("c").GPUs(1).GPUMem(mem).GPUCores(cores).Obj())
			if kind == "" {
				c.SetPod(placedOn(pod, name, fmt.Sprintf("%s-g%d,NVIDIA,%d,%d:;", name, g, mem, cores)))
				continue
			}
			if word != "DCU" {
				cores = 0
			}
			pod.Spec.Containers[0] = vctr("c", res, 1)
			pod.Annotations[codec.PodNodeAnnotation] = name
			pod.Annotations[alloc] = fmt.Sprintf("%s-g%d,%s,%d,%d:;", name, g, word, mem, cores)
			pod.Spec.NodeName = name
			c.SetPod(pod)
		}
	}
	return c
}

func benchMixed(b *testing.B, nodes, pods int, podFn func() *corev1.Pod, wantFit bool) {
	c := benchMixedCluster(b, nodes, pods/nodes)
	pod := podFn()
	if v := c.Evaluate(pod, EvalOptions{}); v.Fits != wantFit {
		b.Fatalf("fits=%v, want %v: %s", v.Fits, wantFit, v.Summary)
	}
	benchLoop(b, func() { c.Evaluate(pod, EvalOptions{}) })
}

// The NVIDIA pods of benchEvaluate on the mixed cluster: the DCU and NPU nodes fail at the device count.
func BenchmarkEvaluateMixedPending5000Nodes100kPods(b *testing.B) {
	benchMixed(b, 5000, 100000, pendingPod, false)
}
func BenchmarkEvaluateMixedFits5000Nodes100kPods(b *testing.B) {
	benchMixed(b, 5000, 100000, fittingPod, true)
}

// An NPU pod: 500 NPU nodes walked, 4,500 others fail at the device count.
func BenchmarkEvaluateMixedNPUFits5000Nodes100kPods(b *testing.B) {
	benchMixed(b, 5000, 100000, func() *corev1.Pod { return mkPod("team-1", "npu", vctr("c", b3, 2, b3Mem, 20000)) }, true)
}

// A DCU pod no DCU can hold: every DCU walked, every gate's numbers kept.
func BenchmarkEvaluateMixedDCUPending5000Nodes100kPods(b *testing.B) {
	benchMixed(b, 5000, 100000, func() *corev1.Pod { return mkPod("team-1", "dcu", vctr("c", dcuNum, 2, dcuMem, 70000)) }, false)
}
