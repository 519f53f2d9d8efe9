package ascend_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device/ascend"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

const (
	b3Reg     = "hami.io/node-register-Ascend910B3"
	c910Reg   = "hami.io/node-register-Ascend910C"
	b3        = "huawei.com/Ascend910B3"
	b3Mem     = "huawei.com/Ascend910B3-memory"
	c910      = "huawei.com/Ascend910C"
	b3Alloc   = "hami.io/Ascend910B3-devices-allocated"
	c910Alloc = "hami.io/Ascend910C-devices-allocated"
)

// TestAscendGates are HAMi v2.10's Fit cases of pkg/device/ascend (device_test.go,
// device_910c_pairing_test.go) as whole-pod evaluations: a1 has two 910B3 NPUs of 64 GiB, c1 four 910Cs.
func TestAscendGates(t *testing.T) {
	a1 := func(n int) *corev1.Node {
		return ft.RegNode("a1", b3Reg, ft.Devs("a1", "npu", "Ascend910B3", n, 65536, 20, 4))
	}
	c1 := func() *corev1.Node {
		return ft.RegNode("c1", c910Reg, ft.Devs("c1", "npu", "Ascend910C", 4, 65536, 20, 1))
	}
	ask := func(res string, kv ...any) *corev1.Pod {
		return ft.MkPod("ns", "p", ft.Ctr("c", append([]any{res, 1}, kv...)...))
	}
	ft.Run(t, ft.Kinds(t, ascend.Family{}), []ft.Case{
		{Name: "memory rounds up to the vNPU template", Node: a1(2), Pod: ask(b3, b3Mem, 3000),
			Want: [][]string{{"a1-npu1"}}, Annotations: map[string]string{b3Alloc: "a1-npu1,Ascend910B3,16384,0:;",
				b3: `[{"UUID":"a1-npu1","temp":"vir05_1c_16g","memory":16384}]`}},
		{Name: "without memory the whole NPU", Node: a1(2), Pod: ask(b3),
			Want: [][]string{{"a1-npu1"}}, Annotations: map[string]string{b3Alloc: "a1-npu1,Ascend910B3,65536,0:;", b3: `[{"UUID":"a1-npu1","memory":65536}]`}},
		{Name: "a template no longer fits beside a 32 GiB slice", Node: a1(1),
			Counted: []*corev1.Pod{ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", b3, 1, b3Mem, 40000)), "a1", b3Alloc, "a1-npu0,Ascend910B3,49152,0:;")},
			Pod:     ask(b3, b3Mem, 17000), Code: engine.CardInsufficientMemory},
		{Name: "910C: one NPU is rounded up to a module of two", Node: c1(), Pod: ask(c910),
			Want: [][]string{{"c1-npu3", "c1-npu2"}}, Annotations: map[string]string{c910Alloc: "c1-npu3,Ascend910C,65536,0:c1-npu2,Ascend910C,65536,0:;"}},
		{Name: "910C takes whole modules only", Node: c1(),
			Counted: []*corev1.Pod{ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", c910, 1)), "c1", c910Alloc, "c1-npu1,Ascend910C,65536,0:;"),
				ft.Counted(ft.MkPod("ns", "b", ft.Ctr("c", c910, 1)), "c1", c910Alloc, "c1-npu2,Ascend910C,65536,0:;")},
			Pod: ask(c910), Code: engine.CardTimeSlicingExhausted, Detail: "2 fit, but only 0 in whole modules of 2"},
		{Name: "910C: a free module is found past a broken one", Node: c1(),
			Counted: []*corev1.Pod{ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", c910, 1)), "c1", c910Alloc, "c1-npu3,Ascend910C,65536,0:;")},
			Pod:     ask(c910), Want: [][]string{{"c1-npu1", "c1-npu0"}}, Annotations: map[string]string{c910Alloc: "c1-npu1,Ascend910C,65536,0:c1-npu0,Ascend910C,65536,0:;"}},
	})
}

// Test910CPairing is HAMi's own 910C pairing cases (pkg/device/ascend/device_910c_pairing_test.go): a node's
// registered NPU indices, a request, and whether whole two-NPU modules can fill it.
func Test910CPairing(t *testing.T) {
	node := func(indices ...int) *corev1.Node {
		devs := make([]codec.DeviceInfo, len(indices))
		for i, idx := range indices {
			devs[i] = codec.DeviceInfo{ID: fmt.Sprintf("c-%d", idx), Index: idx, Count: 1, Devmem: 65536, Devcore: 20, Type: "Ascend910C", Health: true}
		}
		return ft.RegNode("c1", c910Reg, devs)
	}
	ask := func(n int) *corev1.Pod { return ft.MkPod("ns", "p", ft.Ctr("c", c910, n)) }
	ft.Run(t, ft.Kinds(t, ascend.Family{}), []ft.Case{
		{Name: "4 asked, one full module and three halves (FitPartialAllocationBug)", Node: node(0, 1, 2, 4, 6), Pod: ask(4)},
		{Name: "2 asked, two halves of different modules (FitExactCountBypassBug)", Node: node(0, 2), Pod: ask(2)},
		{Name: "2 asked, one full module (FitFullPairSucceeds)", Node: node(0, 1), Pod: ask(2), Want: [][]string{{"c-1", "c-0"}}},
		{Name: "4 asked, four halves (NoFullPairsReturnsEmpty)", Node: node(0, 2, 4, 6), Pod: ask(4)},
		{Name: "4 asked, two full modules among halves", Node: node(0, 1, 3, 4, 5, 6), Pod: ask(4), Want: [][]string{{"c-5", "c-4", "c-1", "c-0"}}},
	})
}

// TestAscendRequest reads the requests HAMi's webhook and GenerateResourceRequests give an NPU container.
func TestAscendRequest(t *testing.T) {
	kinds := ft.Kinds(t, ascend.Family{})
	for _, tc := range []struct {
		name    string
		c       corev1.Container
		annos   []string
		want    string // "count MiB/percent cores device template"
		problem string
	}{
		{"a template", ft.Ctr("c", b3, 1, b3Mem, 16385), nil, "1 32768/0 0 Ascend910B3 vir10_3c_32g", ""},
		{"above every template", ft.Ctr("c", b3, 1, b3Mem, 40000), nil, "1 65536/0 0 Ascend910B3 ", ""},
		{"hami-core keeps the memory", ft.Ctr("c", b3, 1, b3Mem, 3000), []string{ascend.VNPUModeAnnotation, ascend.VNPUModeHamiCore}, "1 3000/0 0 Ascend910B3 ", ""},
		{"over capacity", ft.Ctr("c", b3, 1, b3Mem, 70000), nil, "1 70000/0 0 Ascend910B3 ", "HAMi's webhook refuses"},
		{"vNPU on two devices", ft.Ctr("c", b3, 2, b3Mem, 1000), nil, "2 16384/0 0 Ascend910B3 vir05_1c_16g", "vNPU not supported for multiple devices"},
		{"910C odd count", ft.Ctr("c", c910, 3), nil, "3 65536/0 0 Ascend910C ", "must be 1 or 2*n, got 3"},
	} {
		got, problems := ft.Request(t, kinds, ft.WithAnno(ft.MkPod("ns", "p", tc.c), tc.annos...))
		if got != tc.want || (tc.problem == "") != (problems == "") || !strings.Contains(problems, tc.problem) {
			t.Errorf("%s: %q (problems %q), want %q (%q)", tc.name, got, problems, tc.want, tc.problem)
		}
	}
}
