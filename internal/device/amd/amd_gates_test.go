package amd_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device/amd"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// TestAMDGates are HAMi v2.10's AMD cases (pkg/device/amd/device.go Fit; device_test.go, device_alloctype_test.go):
// a1 has two MI300X GPUs of 196,608 MiB and 304 compute units. gpucores is a
// percentage of each GPU's compute units (at least one); absent, the whole GPU; the device list names the model.
func TestAMDGates(t *testing.T) {
	const amdNum, amdMem, amdCores, amdAlloc = "amd.com/gpu", "amd.com/gpumem", "amd.com/gpucores", "hami.io/amd-devices-allocated"
	a1 := func(typ string) *corev1.Node {
		n := ft.RegNode("a1", "hami.io/node-amd-register", ft.Devs("a1", "gpu", typ, 2, 196608, 304, 10))
		n.Status.Capacity = corev1.ResourceList{amdNum: resource.MustParse("2")}
		return n
	}
	ft.Run(t, ft.Kinds(t, amd.Family{}), []ft.Case{
		{Name: "memory only: the whole GPU's compute units", Node: a1("MI300X"),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", amdNum, 1, amdMem, 8000)),
			Want: [][]string{{"a1-gpu1"}}, Annotations: map[string]string{amdAlloc: "a1-gpu1,MI300X,8000,304:;", "hami.io/amd-devices-to-allocate": "a1-gpu1,MI300X,8000,304:;"}},
		{Name: "half the compute units", Node: a1("MI300X"),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", amdNum, 1, amdMem, 8000, amdCores, 50)),
			Want: [][]string{{"a1-gpu1"}}, Annotations: map[string]string{amdAlloc: "a1-gpu1,MI300X,8000,152:;"}},
		{Name: "1 % is at least one compute unit", Node: a1("MI300X"),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", amdNum, 1, amdMem, 8000, amdCores, 1)),
			Want: [][]string{{"a1-gpu1"}}, Annotations: map[string]string{amdAlloc: "a1-gpu1,MI300X,8000,3:;"}},
		{Name: "no memory: the whole GPU", Node: a1("MI300X"),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", amdNum, 2)),
			Want: [][]string{{"a1-gpu1", "a1-gpu0"}}, Annotations: map[string]string{amdAlloc: "a1-gpu1,MI300X,196608,304:a1-gpu0,MI300X,196608,304:;"}},
		{Name: "alloc type: a GPU that registers no type is listed as AMD", Node: a1(""),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", amdNum, 1, amdMem, 8000, amdCores, 50)),
			Want: [][]string{{"a1-gpu1"}}, Annotations: map[string]string{amdAlloc: "a1-gpu1,AMD,8000,152:;"}},
		{Name: "compute units used up", Node: a1("MI300X"),
			Counted: []*corev1.Pod{ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", amdNum, 2, amdMem, 1000)), "a1", amdAlloc, "a1-gpu0,MI300X,1000,304:a1-gpu1,MI300X,1000,304:;")},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", amdNum, 1, amdMem, 1000, amdCores, 10)), Code: engine.CardInsufficientCore},
		{Name: "type selector", Node: a1("MI300X"),
			Pod:  ft.WithAnno(ft.MkPod("ns", "p", ft.Ctr("c", amdNum, 1, amdMem, 1000)), "amd.com/use-gputype", "MI250"),
			Code: engine.CardTypeMismatch},
		// AMD's Fit does not read hami.io/device-cordon (only NVIDIA's does, pkg/device/nvidia/device.go:694-737).
		{Name: "a cordon is ignored", Node: func() *corev1.Node {
			n := a1("MI300X")
			n.Annotations[codec.NodeCordonAnnotation] = "a1-gpu0,a1-gpu1"
			return n
		}(),
			Pod: ft.MkPod("ns", "p", ft.Ctr("c", amdNum, 1, amdMem, 1000)), Want: [][]string{{"a1-gpu1"}}},
	})
	for cores, refused := range map[int]bool{0: true, 101: true, 1: false, 100: false} {
		_, probs := engine.ParseRequest(ft.MkPod("ns", "p", ft.Ctr("c", amdNum, 1, amdCores, cores)), engine.DefaultConfig())
		got := false
		for _, p := range probs {
			got = got || strings.Contains(p.Message, "not an integer percentage between 1 and 100")
		}
		if got != refused {
			t.Errorf("gpucores %d: refused %v, want %v (%v)", cores, got, refused, probs)
		}
	}
}

// TestAMDCapacityRegisters is HAMi v2.10.0's AMD CheckHealth (pkg/device/amd/device.go:195-206): a node whose
// amd.com/gpu capacity is 0, absent or not whole is never registered, whatever its register annotation says.
func TestAMDCapacityRegisters(t *testing.T) {
	for _, tc := range []struct {
		capacity string // "" leaves it out
		fits     bool
	}{{"2", true}, {"1", true}, {"0", false}, {"", false}, {"1500m", false}} {
		n := ft.RegNode("a1", "hami.io/node-amd-register", ft.Devs("a1", "gpu", "AMD-MI300X", 2, 196608, 304, 10))
		if tc.capacity != "" {
			n.Status.Capacity = corev1.ResourceList{"amd.com/gpu": resource.MustParse(tc.capacity)}
		}
		c := engine.NewCluster(engine.DefaultConfig())
		probs := c.SetNode(n)
		v := c.Evaluate(ft.MkPod("ns", "p", ft.Ctr("c", "amd.com/gpu", 1, "amd.com/gpumem", 1000)), engine.EvalOptions{})
		if v.Fits != tc.fits {
			t.Errorf("capacity %q: fits %v, want %v (%s)", tc.capacity, v.Fits, tc.fits, v.Summary)
		}
		if !tc.fits && (len(v.Reasons) != 1 || v.Reasons[0].Code != engine.NodeUnregistered || len(probs) != 1 ||
			!strings.Contains(probs[0].Message, "HAMi does not register the node's GPUs")) {
			t.Errorf("capacity %q: reasons %v, problems %v; want engine.NodeUnregistered and a problem saying why", tc.capacity, v.Reasons, probs)
		}
	}
}
