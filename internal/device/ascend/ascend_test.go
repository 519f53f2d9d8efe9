package ascend_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

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
		{Name: "hami-core keeps the request (on a node that runs it)", Node: ft.Node("n1", map[string]string{"hami.io/node-register-" + w: npus(1, w, -1), ascend.NodeVNPUCoreAnnotation: "true"}, nil), Pod: ft.Pod("p", map[string]string{ascend.VNPUModeAnnotation: ascend.VNPUModeHamiCore}, ask("10000")),
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
		// HAMi's reason (pkg/device/ascend/device.go:582-589 at v2.10.0): the failing NPUs' codes and the NPUs of
		// whole free modules, over the request.
		{Name: "four: module 0 is broken", Node: node, Pod: ft.Pod("p", nil, ask("4")),
			Want: nil, Reason: "1/4 CardNotHealth, 2/4 AllocatedCardsInsufficientRequest"},
	})
	eight := ft.Node("n1", map[string]string{"hami.io/node-register-" + w: npus(8, w, 1)}, nil)
	ft.Run(t, ft.Kinds(t, ascend.Family{}), []ft.Case{
		{Name: "every NPU filtered out: 0 in whole modules, counts over the request", Node: eight,
			Pod:    ft.Pod("p", map[string]string{"hami.io/use-" + w + "-uuid": "other"}, ask("2")),
			Reason: "0/2 AllocatedCardsInsufficientRequest, 1/2 CardNotHealth, 7/2 CardUuidMismatch"},
		{Name: "three modules broken by health and filters: one whole module of eight asked", Node: eight,
			Pod:    ft.Pod("p", map[string]string{"hami.io/no-use-" + w + "-uuid": "npu-2,npu-4"}, ask("8")),
			Reason: "1/8 CardNotHealth, 2/8 AllocatedCardsInsufficientRequest, 2/8 CardUuidMismatch"},
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

// HAMi v2.10.0's Ascend Fit turns a node away before its NPU loop when the pod asks for hami-core and the
// node does not run it (pkg/device/ascend/device.go:452-473): the node annotation hami-vnpu-core says, "true"
// only, and without it the vnpus section's hamiVnpuCore (false in the chart). One count over the node's NPUs,
// whatever they are; the device count comes first (pkg/scheduler/score.go:98-105).
func TestAscendVNPUCore(t *testing.T) {
	const w = "Ascend910B3"
	hamiCore := map[string]string{ascend.VNPUModeAnnotation: ascend.VNPUModeHamiCore}
	node := func(vnpuCore string, unhealthy int) *corev1.Node {
		annos := map[string]string{"hami.io/node-register-" + w: npus(4, w, unhealthy)}
		if vnpuCore != "" {
			annos[ascend.NodeVNPUCoreAnnotation] = vnpuCore
		}
		return ft.Node("n1", annos, nil)
	}
	ask := func(n, mem string) map[string]string {
		return map[string]string{"huawei.com/" + w: n, "huawei.com/" + w + "-memory": mem}
	}
	ft.Run(t, ft.Kinds(t, ascend.Family{}), []ft.Case{
		{Name: "hami-core on a node without the annotation", Node: node("", -1), Pod: ft.Pod("p", hamiCore, ask("1", "1000")),
			Reason: "1/4 ModeNotFit"},
		{Name: "hami-core on a node that says false", Node: node("false", -1), Pod: ft.Pod("p", hamiCore, ask("1", "1000")),
			Reason: "1/4 ModeNotFit"},
		{Name: "only \"true\" supports it", Node: node("True", -1), Pod: ft.Pod("p", hamiCore, ask("1", "1000")),
			Reason: "1/4 ModeNotFit"},
		{Name: "before the NPUs: memory no NPU has", Node: node("", -1), Pod: ft.Pod("p", hamiCore, ask("1", "70000")),
			Reason: "1/4 ModeNotFit"},
		{Name: "after the device count", Node: node("", -1), Pod: ft.Pod("p", hamiCore, ask("5", "1000")),
			Reason: "NodeInsufficientDevice"},
		{Name: "hami-core on a node that runs it", Node: node("true", 3), Pod: ft.Pod("p", hamiCore, ask("1", "1000")),
			Want: [][]string{{"npu-2"}}},
		{Name: "the NPUs judged where it runs", Node: node("true", -1), Pod: ft.Pod("p", hamiCore, ask("1", "70000")),
			Reason: "4/4 CardInsufficientMemory"},
		{Name: "a pod without hami-core ignores the annotation", Node: node("false", -1), Pod: ft.Pod("p", nil, ask("1", "1000")),
			Want: [][]string{{"npu-3"}}},
	})
	// The chart's devices.ascend.hamiVnpuCore: true makes every node without the annotation support it.
	kinds, err := ascend.Family{}.Kinds([]byte(`{"hamiVnpuCore": true}`))
	if err != nil {
		t.Fatal(err)
	}
	ft.Run(t, kinds, []ft.Case{
		{Name: "hamiVnpuCore true: no annotation supports it", Node: node("", -1), Pod: ft.Pod("p", hamiCore, ask("1", "1000")),
			Want: [][]string{{"npu-3"}}},
		{Name: "hamiVnpuCore true: the node's false wins", Node: node("false", -1), Pod: ft.Pod("p", hamiCore, ask("1", "1000")),
			Reason: "1/4 ModeNotFit"},
	})
}

// In hami-core mode HAMi's Ascend Fit compares the -core request with 100, not with the NPU's AI cores, in its
// cores, exclusive and compute checks (effectiveTotalCore, pkg/device/ascend/device.go:539-560 at v2.10.0). The
// hamioracle's `-family ascend910c -n 500 -seed 1`, seed 274: 50 cores on NPUs of 20 AI cores.
func TestAscendHamiCoreCores(t *testing.T) {
	const w = "Ascend910B3"
	hamiCore := map[string]string{ascend.VNPUModeAnnotation: ascend.VNPUModeHamiCore}
	node := ft.Node("n1", map[string]string{"hami.io/node-register-" + w: npus(1, w, -1), ascend.NodeVNPUCoreAnnotation: "true"}, nil)
	ask := func(cores string) map[string]string {
		return map[string]string{"huawei.com/" + w: "1", "huawei.com/" + w + "-memory": "1000", "huawei.com/" + w + "-core": cores}
	}
	held := func(cores string) *corev1.Pod {
		annos := map[string]string{ascend.VNPUModeAnnotation: ascend.VNPUModeHamiCore} // Counted writes into it
		return ft.Counted(ft.Pod("held", annos, ask(cores)), "n1", "hami.io/"+w+"-devices-allocated", "npu-0,"+w+",1000,"+cores+":;")
	}
	// Counted pods hold at most the NPU's registered 20 cores here: the engine refuses a counted use above what a
	// device registers (docs/compatibility.md, "Placement values no GPU has are refused, not added").
	ft.Run(t, ft.Kinds(t, ascend.Family{}), []ft.Case{
		{Name: "50 cores of an NPU of 20 AI cores", Node: node, Pod: ft.Pod("p", hamiCore, ask("50")), Want: [][]string{{"npu-0"}},
			Annotations: map[string]string{"hami.io/" + w + "-devices-allocated": "npu-0," + w + ",1000,50:;"}},
		{Name: "20 held are not every core: a 0-core pod fits", Node: node, Counted: []*corev1.Pod{held("20")}, Pod: ft.Pod("p", hamiCore, ask("0")),
			Want: [][]string{{"npu-0"}}},
		{Name: "100 cores: the NPU must be unused", Node: node, Counted: []*corev1.Pod{held("0")}, Pod: ft.Pod("p", hamiCore, ask("100")),
			Reason: "1/1 ExclusiveDeviceAllocateConflict"},
		{Name: "15 of 100 held, 90 more do not fit", Node: node, Counted: []*corev1.Pod{held("15")}, Pod: ft.Pod("p", hamiCore, ask("90")),
			Reason: "1/1 CardInsufficientCore"},
	})
}
