package ascend_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device/ascend"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
)

// HAMi v2.10.0 hands a request's Fit every NPU of the node whose type contains the request's type
// (getNodeResources, pkg/scheduler/score.go:43-52), and Ascend's checkType compares the request's type with the
// chip's CommonWord only (pkg/device/ascend/device.go:292-297): an Ascend910B4 pod is judged, and placed, on
// Ascend910B4-1 NPUs, by Ascend910B4's rules (its templates, its selectors), and the device list records it as
// Ascend910B4's. The hamioracle found it in `-family ascend -n 200 -seed 1`, seeds 173, 89 and 107.
func TestAscendSeesTypesContainingItsWord(t *testing.T) {
	const b4, b41 = "Ascend910B4", "Ascend910B4-1"
	b41Node := ft.Node("n1", map[string]string{"hami.io/node-register-" + b41: npus(2, b41, -1)}, nil)
	ask := func(word, n string, mem string) map[string]string {
		m := map[string]string{"huawei.com/" + word: n}
		if mem != "" {
			m["huawei.com/"+word+"-memory"] = mem
		}
		return m
	}
	// npu-1 held whole by an Ascend910B4 pod HAMi placed there (its device list is Ascend910B4's).
	holder := ft.Counted(ft.Pod("holder", nil, ask(b4, "1", "")), "n1", "hami.io/"+b4+"-devices-allocated", "npu-1,"+b4+",65536,0:;")
	hamiCore := map[string]string{ascend.VNPUModeAnnotation: ascend.VNPUModeHamiCore}
	ft.Run(t, ft.Kinds(t, ascend.Family{}), []ft.Case{
		{Name: "an Ascend910B4 pod on Ascend910B4-1 NPUs, by Ascend910B4's template", Node: b41Node, Pod: ft.Pod("p", nil, ask(b4, "1", "8000")),
			Want: [][]string{{"npu-1"}}, Annotations: map[string]string{
				"hami.io/" + b4 + "-devices-allocated": "npu-1," + b4 + ",8192,0:;",
				"huawei.com/" + b4:                     `[{"UUID":"npu-1","temp":"vir05_1c_8g","memory":8192}]`,
			}},
		{Name: "no memory: Ascend910B4's allocatable memory, not the NPU's", Node: b41Node, Pod: ft.Pod("p", nil, ask(b4, "2", "")),
			Want: [][]string{{"npu-1", "npu-0"}}, Annotations: map[string]string{"hami.io/" + b4 + "-devices-allocated": "npu-1," + b4 + ",32768,0:npu-0," + b4 + ",32768,0:;"}},
		{Name: "its node row counts the NPUs it sees (seed 89)", Node: b41Node, Pod: ft.Pod("p", hamiCore, ask(b4, "1", "16384")),
			Reason: "1/2 ModeNotFit"},
		{Name: "its count checks the NPUs it sees", Node: b41Node, Pod: ft.Pod("p", nil, ask(b4, "3", "")),
			Reason: "NodeInsufficientDevice"},
		{Name: "Ascend910B4's UUID selectors decide", Node: b41Node, Pod: ft.Pod("p", map[string]string{"hami.io/use-" + b4 + "-uuid": "npu-0"}, ask(b4, "1", "")),
			Want: [][]string{{"npu-0"}}},
		{Name: "Ascend910B4-1's UUID selectors do not", Node: b41Node, Pod: ft.Pod("p", map[string]string{"hami.io/use-" + b41 + "-uuid": "npu-0"}, ask(b4, "1", "")),
			Want: [][]string{{"npu-1"}}},
		{Name: "an Ascend910B4-1 pod does not see Ascend910B4 NPUs", Node: ft.Node("n1", map[string]string{"hami.io/node-register-" + b4: npus(2, b4, -1)}, nil),
			Pod: ft.Pod("p", nil, ask(b41, "1", "")), Reason: "NodeInsufficientDevice"},
		{Name: "an Ascend910B4 pod's use counts on the NPU for an Ascend910B4-1 pod", Node: b41Node, Counted: []*corev1.Pod{holder},
			Pod: ft.Pod("p", nil, ask(b41, "1", "")), Want: [][]string{{"npu-0"}}},
		{Name: "and for another Ascend910B4 pod", Node: b41Node, Counted: []*corev1.Pod{holder},
			Pod: ft.Pod("p", nil, ask(b4, "2", "")), Reason: "1/2 AllocatedCardsInsufficientRequest, 1/2 CardInsufficientMemory"},
	})
}
