package cambricon_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device/cambricon"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// TestMLUGates are HAMi v2.10's Fit cases of pkg/device/cambricon (device_test.go) as whole-pod evaluations
// on m1, two MLUs from its capacity (200 vcores, 128 vmemory units of 256 MiB) labelled with a model.
func TestMLUGates(t *testing.T) {
	const mluNum, mluMem = "cambricon.com/mlu", "cambricon.com/mlu.smlu.vmemory"
	m1 := func(model string) *corev1.Node {
		n := ft.CapNode("m1", "cambricon.com/mlu.smlu.vcore", 200, mluMem, 128)
		if model != "" {
			n.Labels = map[string]string{"Model": model}
		}
		return n
	}
	ask := func(annos ...string) *corev1.Pod {
		return ft.WithAnno(ft.MkPod("ns", "p", ft.Ctr("c", mluNum, 1, mluMem, 16)), annos...)
	}
	ft.Run(t, ft.Kinds(t, cambricon.Family{}), []ft.Case{
		{Name: "memory in 256 MiB units, 100 % cores when none are named", Node: m1("MLU370-X8"), Pod: ask(),
			Want: [][]string{{"m1-cambricon-mlu-1"}}, Annotations: map[string]string{"hami.io/cambricon-mlu-devices-allocated": "m1-cambricon-mlu-1,MLU,4096,100:;",
				"CAMBRICON_DSMLU_PROFILE": "1_100_16", "CAMBRICON_DSMLU_ASSIGNED": "false"}},
		{Name: "the quota is checked in Fit", Node: m1("MLU370-X8"), Quota: map[string]string{"limits." + mluMem: "8"}, Pod: ask(),
			Code: engine.ResourceQuotaNotFit},
		// HAMi v2.10.0's Cambricon checkType accepts every MLU (pkg/device/cambricon/device.go:243-248).
		{Name: "an MLU of no known model ignores a type selector", Node: m1(""), Pod: ask("cambricon.com/nouse-mlutype", "MLU290"),
			Want: [][]string{{"m1-cambricon-mlu-1"}}},
		{Name: "a use-mlutype it does not match is ignored", Node: m1("MLU370-X4"),
			Pod:  ask("cambricon.com/use-mlutype", "X8", "cambricon.com/nouse-mlutype", "MLU370"),
			Want: [][]string{{"m1-cambricon-mlu-1"}}},
		// CheckUUID (pkg/device/devices.go:693-713): an MLU in both lists is refused.
		{Name: "an MLU in the use and the no-use UUID lists", Node: m1("MLU370-X8"),
			Pod:  ask("cambricon.com/use-gpuuuid", "m1-cambricon-mlu-0", "cambricon.com/nouse-gpuuuid", "m1-cambricon-mlu-0"),
			Code: engine.CardUUIDMismatch},
	})
}
