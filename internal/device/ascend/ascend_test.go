package ascend_test

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device/ascend"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
)

func npus(n int, word string, unhealthy int) string {
	var devs []codec.DeviceInfo
	for i := 0; i < n; i++ {
		devs = append(devs, codec.DeviceInfo{ID: "npu-" + string(rune('0'+i)), Index: i, Count: 4, Devmem: 65536, Devcore: 20, Type: word, Health: i != unhealthy})
	}
	return ft.Register(devs...)
}

// Ascend's rules (pkg/device/ascend/device.go, vnpu.go): a memory request is rounded up to the chip's vNPU
// template unless the pod asks for hami-core, and the bind writes the template the device plugin cuts.
func TestAscendTemplates(t *testing.T) {
	const w = "Ascend910B3"
	node := ft.Node("n1", map[string]string{"hami.io/node-register-" + w: npus(1, w, -1)}, nil)
	ask := func(mem string) map[string]string {
		return map[string]string{"huawei.com/" + w: "1", "huawei.com/" + w + "-memory": mem}
	}
	ft.Run(t, ft.Kinds(t, ascend.Family{}), []ft.Case{
		{Name: "rounded up to the smallest template that holds it", Node: node, Pod: ft.Pod("p", nil, ask("10000")),
			Want: [][]string{{"npu-0"}}, Annotations: map[string]string{"huawei.com/" + w: `[{"UUID":"npu-0","temp":"vir05_1c_16g","memory":16384}]`}},
		{Name: "above every template: the whole NPU", Node: node, Pod: ft.Pod("p", nil, ask("40000")),
			Want: [][]string{{"npu-0"}}, Annotations: map[string]string{"huawei.com/" + w: `[{"UUID":"npu-0","memory":65536}]`}},
		{Name: "hami-core keeps the request", Node: node, Pod: ft.Pod("p", map[string]string{ascend.VNPUModeAnnotation: ascend.VNPUModeHamiCore}, ask("10000")),
			Want: [][]string{{"npu-0"}}, Annotations: map[string]string{"huawei.com/" + w: `[{"UUID":"npu-0","memory":10000}]`}},
	})
}

// Ascend 910C on a SuperPod: NPUs are taken in whole two-NPU modules (index / 2), and a request for one is
// rounded up to a module (computeBestCombination910C and the webhook).
func TestAscend910CModules(t *testing.T) {
	const w = "Ascend910C"
	node := ft.Node("n1", map[string]string{"hami.io/node-register-" + w: npus(4, w, 1)}, nil)
	ask := func(n string) map[string]string { return map[string]string{"huawei.com/" + w: n} }
	ft.Run(t, ft.Kinds(t, ascend.Family{}), []ft.Case{
		{Name: "two: the only whole module", Node: node, Pod: ft.Pod("p", nil, ask("2")), Want: [][]string{{"npu-3", "npu-2"}}},
		{Name: "one rounds up to a module", Node: node, Pod: ft.Pod("p", nil, ask("1")), Want: [][]string{{"npu-3", "npu-2"}}},
		{Name: "four: module 0 is broken", Node: node, Pod: ft.Pod("p", nil, ask("4")),
			Want: nil, Reason: "1/4 CardNotHealth, 3/4 AllocatedCardsInsufficientRequest"},
	})
}
