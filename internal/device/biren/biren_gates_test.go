package biren_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device/biren"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// TestSlotsOnlyGates are HAMi v2.10's Biren cases (pkg/device/biren/device.go Fit; device_test.go,
// device_cordon_test.go): a container takes one slot of each
// device, no memory and no cores, so a device is shared until its slots are used.
func TestSlotsOnlyGates(t *testing.T) {
	const brNum, brAlloc = "birentech.com/gpu", "hami.io/Biren-devices-allocated"
	b1 := func() *corev1.Node {
		return ft.RegNode("b1", "hami.io/node-biren-register", ft.Devs("b1", "gpu", "BR104", 2, 32768, 100, 2))
	}
	ft.Run(t, ft.Kinds(t, biren.Family{}), []ft.Case{
		{Name: "Biren: a slot, no memory, no cores", Node: b1(),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", brNum, 2)),
			Want: [][]string{{"b1-gpu1", "b1-gpu0"}}, Annotations: map[string]string{brAlloc: "b1-gpu1,Biren,0,0:b1-gpu0,Biren,0,0:;", "hami.io/Biren-devices-to-allocate": "b1-gpu1,Biren,0,0:b1-gpu0,Biren,0,0:;"}},
		{Name: "Biren: a used GPU is shared while it has slots", Node: b1(),
			Counted: []*corev1.Pod{ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", brNum, 2)), "b1", brAlloc, "b1-gpu0,Biren,0,0:b1-gpu1,Biren,0,0:;")},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", brNum, 1)),
			Want:    [][]string{{"b1-gpu1"}}, Annotations: map[string]string{brAlloc: "b1-gpu1,Biren,0,0:;"}},
		{Name: "Biren: slots used up", Node: b1(),
			Counted: []*corev1.Pod{ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", brNum, 2)), "b1", brAlloc, "b1-gpu0,Biren,0,0:b1-gpu1,Biren,0,0:;"),
				ft.Counted(ft.MkPod("ns", "b", ft.Ctr("c", brNum, 2)), "b1", brAlloc, "b1-gpu0,Biren,0,0:b1-gpu1,Biren,0,0:;")},
			Pod: ft.MkPod("ns", "p", ft.Ctr("c", brNum, 1)), Code: engine.CardTimeSlicingExhausted},
		{Name: "Biren: UUID selector", Node: b1(),
			Pod:  ft.WithAnno(ft.MkPod("ns", "p", ft.Ctr("c", brNum, 1)), "birentech.com/use-gpuuuid", "b1-gpu0"),
			Want: [][]string{{"b1-gpu0"}}, Annotations: map[string]string{brAlloc: "b1-gpu0,Biren,0,0:;"}},
	})
}
