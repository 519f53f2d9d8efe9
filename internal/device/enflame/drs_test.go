package enflame_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
	"github.com/kubectl-hami/kubectl-hami/internal/device/enflame"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

const (
	drsGCU  = "enflame.com/drs-gcu"
	gcuMem  = "enflame.com/gcu-memory"
	gcuCore = "enflame.com/gcu-core"
)

// drsNode is node n1 registering GCUs of the given capacities (slices) with the profiles HAMi's tests and
// the Enflame S60 offer (1g.6gb, 3g.20gb, 6g.40gb: 40 GiB and 100 cores a GCU).
func drsNode(capacities ...int) *corev1.Node {
	var ds []string
	for i, c := range capacities {
		ds = append(ds, fmt.Sprintf(`{"index":"%d","minor":"%d","capacity":%d}`, i, i+10, c))
	}
	return ft.Node("n1", map[string]string{enflame.DRSCapacityAnnotation: `{"devices":[` + strings.Join(ds, ",") +
		`],"profiles":{"1g.6gb":"0","3g.20gb":"1","6g.40gb":"2"}}`}, nil)
}

// onDRS is a pod counted on n1 holding a slice of GCU i (mem MiB, cores %) per container.
func onDRS(name string, uses ...[3]int) *corev1.Pod {
	var ctrs []map[string]string
	list := ""
	for _, u := range uses {
		ctrs = append(ctrs, map[string]string{drsGCU: "1"})
		list += fmt.Sprintf("n1-enflame-drs-%d,Enflame,%d,%d:;", u[0], u[1], u[2])
	}
	return ft.Counted(ft.Pod(name, nil, ctrs...), "n1", enflame.DRSAllocated, list)
}

// TestDRSGCU are HAMi v2.10.0's DRS-GCU rules (pkg/device/enflame/device.go): the request becomes one of
// the node's profiles (selectProfileByRequest, 499-529) or the node is "1/N ModeNotFit" (389-392); a GCU
// gives the profile's memory and cores (438-447) while it has a free slot (428-432); a container charges its
// GCU the profile's size in slots for the pod's later containers (AddResourceUsage, 371-380); the bind writes
// the device list and the profile of each container (PatchAnnotations, 245-296).
func TestDRSGCU(t *testing.T) {
	kinds := ft.Kinds(t, enflame.Family{})
	ft.Run(t, kinds, []ft.Case{
		{Name: "a slice count takes the profile of that size on one GCU (spread: the last of equal GCUs)",
			Node: drsNode(6, 6), Pod: ft.Pod("p", nil, map[string]string{drsGCU: "3"}),
			Want: [][]string{{"n1-enflame-drs-1"}},
			Annotations: map[string]string{
				enflame.DRSAllocated:       "n1-enflame-drs-1,Enflame,20480,50:;",
				enflame.PodHasAssignedGCU:  "false",
				enflame.PodAssignedGCUTime: "1700000000000000000",
				enflame.PodAssignedGCUIdx:  "1", enflame.PodAssignedGCUID: "1", enflame.PodAssignedGCUMin: "11",
				enflame.PodRequestGCUSize:  "3",
				enflame.AssignedContainers: `{"c0":{"allocated":false,"request":3,"profileID":"1","profileName":"3g.20gb"}}`,
			}},
		{Name: "a slice count no profile has is ModeNotFit once over the node's GCUs",
			Node: drsNode(6, 6), Pod: ft.Pod("p", nil, map[string]string{drsGCU: "2"}), Reason: "1/2 ModeNotFit"},
		{Name: "memory in GB takes the smallest profile holding it",
			Node: drsNode(6), Pod: ft.Pod("p", nil, map[string]string{gcuMem: "10"}), Want: [][]string{{"n1-enflame-drs-0"}},
			Annotations: map[string]string{enflame.DRSAllocated: "n1-enflame-drs-0,Enflame,20480,50:;", enflame.PodRequestGCUSize: "3"}},
		{Name: "memory above twice the largest profile is MiB",
			Node: drsNode(6), Pod: ft.Pod("p", nil, map[string]string{gcuMem: "6000"}), Want: [][]string{{"n1-enflame-drs-0"}},
			Annotations: map[string]string{enflame.DRSAllocated: "n1-enflame-drs-0,Enflame,6144,17:;"}},
		{Name: "cores pick a profile with that share of the largest slice",
			Node: drsNode(6), Pod: ft.Pod("p", nil, map[string]string{gcuMem: "6", gcuCore: "60"}), Want: [][]string{{"n1-enflame-drs-0"}},
			Annotations: map[string]string{enflame.DRSAllocated: "n1-enflame-drs-0,Enflame,40960,100:;"}},
		{Name: "memory no profile holds (GB up to twice the largest) is ModeNotFit",
			Node: drsNode(6, 6, 6), Pod: ft.Pod("p", nil, map[string]string{gcuMem: "64"}), Reason: "1/3 ModeNotFit"},
		{Name: "a used GCU without the profile's memory is CardInsufficientMemory",
			Node: drsNode(6, 6), Counted: []*corev1.Pod{onDRS("a", [3]int{1, 20480, 50})},
			Pod: ft.Pod("p", nil, map[string]string{drsGCU: "6"}), Want: [][]string{{"n1-enflame-drs-0"}}},
		{Name: "every GCU short of memory",
			Node: drsNode(6, 6), Counted: []*corev1.Pod{onDRS("a", [3]int{1, 6144, 17}), onDRS("b", [3]int{0, 6144, 17})},
			Pod: ft.Pod("p", nil, map[string]string{gcuMem: "40"}), Reason: "2/2 CardInsufficientMemory"},
		{Name: "cores short where memory is not",
			Node: drsNode(6), Counted: []*corev1.Pod{onDRS("a", [3]int{0, 0, 60})},
			Pod: ft.Pod("p", nil, map[string]string{drsGCU: "3"}), Reason: "1/1 CardInsufficientCore"},
		{Name: "a counted pod takes one slot per entry, whatever its profile",
			Node: drsNode(2), Counted: []*corev1.Pod{onDRS("a", [3]int{0, 6144, 17}), onDRS("b", [3]int{0, 6144, 17})},
			Pod: ft.Pod("p", nil, map[string]string{drsGCU: "1"}), Reason: "1/1 CardTimeSlicingExhausted"},
		{Name: "the pod's earlier container charges its profile's size in slots",
			Node: drsNode(4), Pod: ft.Pod("p", nil, map[string]string{drsGCU: "3"}, map[string]string{drsGCU: "1"}, map[string]string{drsGCU: "1"}),
			Reason: "1/1 CardTimeSlicingExhausted"},
		{Name: "two containers: the second takes the emptier GCU",
			Node: drsNode(6, 6), Pod: ft.Pod("p", nil, map[string]string{drsGCU: "3"}, map[string]string{drsGCU: "1"}),
			Want: [][]string{{"n1-enflame-drs-1"}, {"n1-enflame-drs-0"}},
			Annotations: map[string]string{
				enflame.AssignedContainers: `{"c0":{"allocated":false,"request":3,"profileID":"1","profileName":"3g.20gb"},"c1":{"allocated":false,"request":1,"profileID":"0","profileName":"1g.6gb"}}`,
				enflame.PodAssignedGCUIdx:  "1", enflame.PodRequestGCUSize: "3"}},
		{Name: "UUID selectors", Node: drsNode(6, 6),
			Pod:  ft.Pod("p", map[string]string{"enflame.com/nouse-gpuuuid": "n1-enflame-drs-1"}, map[string]string{drsGCU: "1"}),
			Want: [][]string{{"n1-enflame-drs-0"}}},
		{Name: "UUID selectors refuse every GCU", Node: drsNode(6, 6),
			Pod:    ft.Pod("p", map[string]string{"enflame.com/use-gpuuuid": "n1-enflame-drs-7"}, map[string]string{drsGCU: "1"}),
			Reason: "2/2 CardUuidMismatch"},
		{Name: "a whole-GCU node is no DRS node", Node: ft.Node("n1", nil, map[string]string{"enflame.com/gcu": "2"}),
			Pod: ft.Pod("p", nil, map[string]string{drsGCU: "1"}), Reason: "NodeInsufficientDevice"},
	})
}

// TestDRSWebhook is MutateAdmission (device.go:113-177): HAMi's webhook refuses a slice count that is not
// positive, memory that is not positive and cores outside (0, 100].
func TestDRSWebhook(t *testing.T) {
	for _, tc := range []struct {
		res  map[string]string
		want string
	}{
		{map[string]string{drsGCU: "0"}, "enflame.com/drs-gcu must be greater than 0"},
		{map[string]string{drsGCU: "2", gcuMem: "0"}, ""},
		{map[string]string{gcuMem: "0"}, "enflame.com/gcu-memory must be greater than 0"},
		{map[string]string{gcuMem: "6", gcuCore: "101"}, "enflame.com/gcu-core must be in range (0,100]"},
		{map[string]string{gcuCore: "0"}, "enflame.com/gcu-core must be in range (0,100]"},
		{map[string]string{gcuMem: "6", gcuCore: "100"}, ""},
	} {
		ref := engine.AdmissionError(ft.Pod("p", nil, tc.res), engine.DefaultConfig())
		got := ""
		if ref != nil {
			got = ref.Message
		}
		if !strings.Contains(got, tc.want) || (tc.want == "") != (ref == nil) {
			t.Errorf("%v: refusal %q, want %q", tc.res, got, tc.want)
		}
	}
}

// FuzzDRSCapacity: whatever enflame.com/gcu-drs-capacity holds, reading it and resolving a request on it never
// panics; a node it registers has GCUs of positive slots and memory, and a resolved profile gives positive
// memory, cores up to 100 and its size in slots.
func FuzzDRSCapacity(f *testing.F) {
	f.Add(`{"devices":[{"index":"0","minor":"3","capacity":6}],"profiles":{"1g.6gb":"0","3g.20gb":"1","6g.40gb":"2"}}`, int64(3), int64(0), int64(0))
	f.Add(`{"devices":[{"index":"x","capacity":"4"}],"profiles":{"2g":"0","4g.9gb":"1"}}`, int64(0), int64(9), int64(50))
	f.Add(`{"devices":[{"capacity":-1}],"profiles":{"1g.1gb":"0"}}`, int64(0), int64(70000), int64(101))
	f.Add(`{"devices":[],"profiles":{}}`, int64(1), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, raw string, slices, mem, cores int64) {
		kinds := ft.Kinds(t, enflame.Family{})
		k := &kinds[1]
		n := ft.Node("n1", map[string]string{enflame.DRSCapacityAnnotation: raw}, nil)
		reg, ok := k.ReadRegister(k, n, device.ReportFunc(func(string, string, ...any) {}))
		if ok {
			for _, d := range reg.Devices {
				if d.Count <= 0 || d.Devmem <= 0 || d.Devcore != 100 {
					t.Fatalf("%q: device %+v", raw, d)
				}
			}
		}
		a := device.Ask{Count: 1, Profile: &device.Profile{Slices: slices, Memory: mem, Cores: cores}}
		o := enflame.ProfileRow.Resolve(n.Annotations, &a)
		if !o.Fail && !o.Skip && (a.MemoryMiB <= 0 || a.Cores <= 0 || a.Cores > 100 || int64(a.Slots) != a.Profile.Size) {
			t.Fatalf("%q: resolved %+v %+v", raw, a, *a.Profile)
		}
	})
}
