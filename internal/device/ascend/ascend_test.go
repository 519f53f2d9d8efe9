package ascend_test

import (
	"strings"
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device/ascend"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
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

// HAMi's MutateAdmission errors (pkg/device/ascend/device.go:131-180) are webhook refusals
// (pkg/scheduler/webhook.go:88-94): the pod is never created.
func TestAscendWebhookRefusals(t *testing.T) {
	hamiCore := map[string]string{ascend.VNPUModeAnnotation: ascend.VNPUModeHamiCore}
	cases := []struct {
		name   string
		annos  map[string]string
		limits []any
		want   string // "" when admitted
	}{
		{"a template", nil, []any{"huawei.com/Ascend910B4", 1, "huawei.com/Ascend910B4-memory", 8000}, ""},
		{"memory above every template and the chip", nil, []any{"huawei.com/Ascend910B4", 1, "huawei.com/Ascend910B4-memory", 32769},
			"huawei.com/Ascend910B4-memory 32769 is invalid"},
		{"hami-core keeps any memory", hamiCore, []any{"huawei.com/Ascend910B4", 1, "huawei.com/Ascend910B4-memory", 32769}, ""},
		{"-core without hami-core", nil, []any{"huawei.com/Ascend910B3", 1, "huawei.com/Ascend910B3-core", 5},
			"huawei.com/Ascend910B3-core is only supported in hami-core (soft split) mode"},
		{"-core with hami-core", hamiCore, []any{"huawei.com/Ascend910B3", 1, "huawei.com/Ascend910B3-core", 5}, ""},
		{"several NPUs with a template", nil, []any{"huawei.com/Ascend910B3", 2, "huawei.com/Ascend910B3-memory", 1000},
			"vNPU not supported for multiple devices"},
		{"several whole NPUs", nil, []any{"huawei.com/Ascend910B3", 2, "huawei.com/Ascend910B3-memory", 40000}, ""},
		{"several NPUs, no memory", nil, []any{"huawei.com/Ascend910B3", 2}, ""},
		{"910C: one rounds up", nil, []any{"huawei.com/Ascend910C", 1}, ""},
		{"910C: one with a template (the count is read before rounding)", nil, []any{"huawei.com/Ascend910C", 1, "huawei.com/Ascend910C-memory", 1000}, ""},
		{"910C: odd count", nil, []any{"huawei.com/Ascend910C", 3}, "Ascend910C device request must be 1 or 2*n, got 3"},
		{"910C: odd count even with hami-core", hamiCore, []any{"huawei.com/Ascend910C", 3}, "got 3"},
		{"910C: four", nil, []any{"huawei.com/Ascend910C", 4}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := ft.MkPod("ns", "p", ft.Ctr("main", tc.limits...))
			for k, v := range tc.annos {
				p.Annotations[k] = v
			}
			r := engine.AdmissionError(p, engine.DefaultConfig())
			switch {
			case tc.want == "" && r != nil:
				t.Fatalf("refused: %s", r)
			case tc.want != "" && r == nil:
				t.Fatalf("admitted, want %q", tc.want)
			case tc.want != "" && !strings.Contains(r.Message, tc.want):
				t.Fatalf("refusal %q, want %q", r.Message, tc.want)
			}
		})
	}
}
