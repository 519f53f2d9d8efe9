package enflame_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device/enflame"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// TestEnflameGCUGates are HAMi v2.10's whole-GCU cases (pkg/device/enflame/gcu.go Fit): an unused GCU is taken
// whole, a used one never; a cordon is ignored (only NVIDIA's Fit reads hami.io/device-cordon,
// pkg/device/nvidia/device.go:694-737).
func TestEnflameGCUGates(t *testing.T) {
	const gcu, gcuAlloc = "enflame.com/gcu", "hami.io/enflame-gcu-devices-allocated"
	e1 := func(annos ...string) *corev1.Node {
		n := ft.CapNode("e1", gcu, 2)
		for i := 0; i+1 < len(annos); i += 2 {
			n.Annotations[annos[i]] = annos[i+1]
		}
		return n
	}
	ft.Run(t, ft.Kinds(t, enflame.Family{}), []ft.Case{
		{Name: "a GCU is taken whole", Node: e1(),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", gcu, 1)),
			Want: [][]string{{"e1-GCU-1"}}, Annotations: map[string]string{gcuAlloc: "e1-GCU-1,GCU,100,100:;", "hami.io/enflame-gcu-devices-to-allocate": "e1-GCU-1,GCU,100,100:;"}},
		{Name: "a cordoned GCU is taken as any other", Node: e1(codec.NodeCordonAnnotation, "e1-GCU-1, "),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", gcu, 1)),
			Want: [][]string{{"e1-GCU-1"}}, Annotations: map[string]string{gcuAlloc: "e1-GCU-1,GCU,100,100:;"}},
		{Name: "all GCUs cordoned still fit", Node: e1(codec.NodeCordonAnnotation, "e1-GCU-0,e1-GCU-1"),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", gcu, 1)),
			Want: [][]string{{"e1-GCU-1"}}, Annotations: map[string]string{gcuAlloc: "e1-GCU-1,GCU,100,100:;"}},
		// gcu.go:163-167: Used > 0 is ExclusiveDeviceAllocateConflict, checked before any slot count.
		{Name: "a used GCU is not shared", Node: e1(),
			Counted: []*corev1.Pod{ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", gcu, 2)), "e1", gcuAlloc, "e1-GCU-0,GCU,100,100:e1-GCU-1,GCU,100,100:;")},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", gcu, 1)), Code: engine.ExclusiveDeviceAllocateConflict},
	})
}
