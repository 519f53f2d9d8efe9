package mthreads_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/mthreads"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

const (
	mtNum, mtMem, mtCores = "mthreads.com/vgpu", "mthreads.com/sgpu-memory", "mthreads.com/sgpu-core"
	mtAlloc               = "hami.io/mthreads-vgpu-devices-allocated"
)

// TestMthreadsGates are HAMi v2.10's Mthreads cases (pkg/device/mthreads/device_test.go: TestDevices_Fit,
// Test_CustomFilterRule, Test_MutateAdmission, Test_PatchAnnotations) as whole-pod evaluations on nodes whose
// GPUs come from their capacity: m1 has two 4096 MiB GPUs (32 cores, 16 memory units), s1 eight S4000s.
func TestMthreadsGates(t *testing.T) {
	m1 := func() *corev1.Node { return ft.CapNode("m1", mtCores, 32, mtMem, 16) }
	s1 := func() *corev1.Node { return ft.CapNode("s1", mtCores, 128, mtMem, 768) }
	ft.Run(t, ft.Kinds(t, mthreads.Family{}), []ft.Case{
		{Name: "fit success: memory in 512 MiB units, cores in sixteenths", Node: m1(),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", mtNum, 1, mtMem, 2, mtCores, 8)),
			Want: [][]string{{"m1-mthreads-1"}}, Annotations: map[string]string{mtAlloc: "m1-mthreads-1,Mthreads,1024,8:;", "mthreads.com/gpu-index": "1",
				"mthreads.com/predicate-node": "m1", "mthreads.com/predicate-time": "1700000000000000000"},
			Absent: []string{"hami.io/mthreads-vgpu-devices-to-allocate", codec.PodAllocatedAnnotation}},
		{Name: "fit fail: memory not enough", Node: m1(),
			Pod: ft.MkPod("ns", "p", ft.Ctr("c", mtNum, 1, mtMem, 16, mtCores, 8)), Code: engine.CardInsufficientMemory},
		{Name: "fit fail: core not enough", Node: m1(),
			Counted: []*corev1.Pod{ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", mtNum, 2)), "m1", mtAlloc, "m1-mthreads-0,Mthreads,1024,16:m1-mthreads-1,Mthreads,1024,16:;")},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", mtNum, 1, mtMem, 2, mtCores, 8)), Code: engine.CardInsufficientCore},
		{Name: "fit fail: user assign use uuid mismatch", Node: m1(),
			Pod:  ft.WithAnno(ft.MkPod("ns", "p", ft.Ctr("c", mtNum, 1, mtMem, 2, mtCores, 8)), "mthreads.ai/use-gpuuuid", "dev-0"),
			Code: engine.CardUUIDMismatch},
		{Name: "webhook: two GPUs are taken whole, 16 cores and 96 units each", Node: s1(),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", mtNum, 2, mtMem, 2, mtCores, 1)),
			Want: [][]string{{"s1-mthreads-7", "s1-mthreads-6"}}, Annotations: map[string]string{mtAlloc: "s1-mthreads-7,Mthreads,49152,16:s1-mthreads-6,Mthreads,49152,16:;", "mthreads.com/gpu-index": "7,6"}},
		{Name: "webhook: one GPU without memory is taken whole", Node: s1(),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", mtNum, 1, mtCores, 1)),
			Want: [][]string{{"s1-mthreads-7"}}, Annotations: map[string]string{mtAlloc: "s1-mthreads-7,Mthreads,49152,16:;"}},
		{Name: "customFilterRule: a pod's containers share one GPU", Node: m1(),
			Pod: func() *corev1.Pod {
				p := ft.MkPod("ns", "p", ft.Ctr("a", mtNum, 1, mtMem, 2, mtCores, 4), ft.Ctr("b", mtNum, 1, mtMem, 2, mtCores, 4))
				return p
			}(),
			Want: [][]string{{"m1-mthreads-1"}, {"m1-mthreads-1"}}, Annotations: map[string]string{mtAlloc: "m1-mthreads-1,Mthreads,1024,4:;m1-mthreads-1,Mthreads,1024,4:;"}},
		{Name: "customFilterRule: the other GPU is refused when the first is full", Node: m1(),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("a", mtNum, 1, mtMem, 8, mtCores, 4), ft.Ctr("b", mtNum, 1, mtMem, 2, mtCores, 4)),
			Code: engine.CardInsufficientMemory, Detail: "an earlier container of the pod took m1-mthreads-1"},
	})
}

// TestMthreadsQuota: a counted Mthreads pod charges limits.mthreads.com/sgpu-memory in MiB (HAMi's quota keys
// are accounted for every type), without gating the Fit.
func TestMthreadsQuota(t *testing.T) {
	counted := ft.Counted(ft.MkPod("team", "a", ft.Ctr("c", mtNum, 1, mtMem, 2, mtCores, 8)), "m1", mtAlloc, "m1-mthreads-0,Mthreads,1024,8:;")
	w := ft.NewWorld(t, ft.Kinds(t, mthreads.Family{}), []*corev1.Node{ft.CapNode("m1", mtCores, 32, mtMem, 16)}, counted)
	w.C.SetQuota(&corev1.ResourceQuota{ObjectMeta: ft.MkPod("team", "q").ObjectMeta,
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"limits." + mtMem: *resource.NewQuantity(4, resource.DecimalSI)}}})
	if d := w.QuotaLine(t, "team", "limits."+mtMem); d.Used != 1024 || d.Limit != 2048 {
		t.Errorf("quota line %+v, want 1024 of 2048 MiB", d)
	}
	if v := w.Evaluate(ft.MkPod("team", "b", ft.Ctr("c", mtNum, 1, mtMem, 4, mtCores, 8))); !v.Fits {
		t.Fatalf("HAMi's Mthreads Fit does not gate the quota: %s", v.Summary)
	}
}
