package vastai_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/vastai"
)

// TestVastaiGates are HAMi v2.10's Vastai cases (pkg/device/vastai/device.go Fit; device_test.go): whole-card
// mode, a slot of each device. Vastai's Fit does not read hami.io/device-cordon (only NVIDIA's does,
// pkg/device/nvidia/device.go:694-737), so a cordoned device is placed on.
func TestVastaiGates(t *testing.T) {
	const vaNum, vaAlloc = "vastaitech.com/va", "hami.io/Vastai-devices-allocated"
	v1 := func() *corev1.Node {
		return ft.RegNode("v1", "hami.io/node-va-register", ft.Devs("v1", "va", "VA1", 1, 16384, 100, 2))
	}
	ft.Run(t, ft.Kinds(t, vastai.Family{}), []ft.Case{
		{Name: "Vastai: whole-card mode, a slot", Node: v1(),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", vaNum, 1)),
			Want: [][]string{{"v1-va0"}}, Annotations: map[string]string{vaAlloc: "v1-va0,Vastai,0,0:;"}},
		{Name: "Vastai: a cordon is ignored", Node: func() *corev1.Node {
			n := v1()
			n.Annotations[codec.NodeCordonAnnotation] = "v1-va0"
			return n
		}(),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", vaNum, 1)),
			Want: [][]string{{"v1-va0"}}, Annotations: map[string]string{vaAlloc: "v1-va0,Vastai,0,0:;"}},
	})
}
