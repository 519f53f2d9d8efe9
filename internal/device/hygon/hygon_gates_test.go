package hygon_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/hygon"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

const (
	dcuReg   = "hami.io/node-dcu-register"
	dcuNum   = "hygon.com/dcunum"
	dcuMem   = "hygon.com/dcumem"
	dcuCores = "hygon.com/dcucores"
	dcuAlloc = "hami.io/dcu-devices-allocated"
)

// TestDCUGates are HAMi v2.10's Fit cases of pkg/device/hygon (device_test.go) as whole-pod evaluations on
// d1, two Z100 DCUs of 32 GiB and 4 slots.
func TestDCUGates(t *testing.T) {
	d1 := func() *corev1.Node {
		return ft.RegNode("d1", dcuReg, ft.Devs("d1", "dcu", "DCU-Z100", 2, 32768, 100, 4))
	}
	ask := func(kv ...any) *corev1.Pod {
		return ft.MkPod("ns", "p", ft.Ctr("c", append([]any{dcuNum, 1}, kv...)...))
	}
	ft.Run(t, ft.Kinds(t, hygon.Family{}), []ft.Case{
		{Name: "fits with HAMi's default 100% cores", Node: d1(), Pod: ask(dcuMem, 2000),
			Want: [][]string{{"d1-dcu1"}}, Annotations: map[string]string{dcuAlloc: "d1-dcu1,DCU,2000,100:;", "hami.io/dcu-devices-to-allocate": "d1-dcu1,DCU,2000,100:;"},
			Absent: []string{codec.PodAllocatedAnnotation}},
		{Name: "the whole-device default leaves no cores for a second pod", Node: d1(),
			Counted: []*corev1.Pod{ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", dcuNum, 1)), "d1", dcuAlloc, "d1-dcu0,DCU,32768,100:;"),
				ft.Counted(ft.MkPod("ns", "b", ft.Ctr("c", dcuNum, 1)), "d1", dcuAlloc, "d1-dcu1,DCU,32768,100:;")},
			Pod: ask(dcuMem, 1000), Code: engine.CardInsufficientMemory},
		{Name: "cores exhausted", Node: d1(),
			Counted: []*corev1.Pod{ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", dcuNum, 2, dcuMem, 1000)), "d1", dcuAlloc, "d1-dcu0,DCU,1000,100:d1-dcu1,DCU,1000,100:;")},
			Pod:     ask(dcuMem, 1000, dcuCores, 30), Code: engine.CardInsufficientCore},
		{Name: "type selector", Node: d1(), Pod: ft.WithAnno(ask(dcuMem, 1000, dcuCores, 10), "hygon.com/use-dcutype", "K100"),
			Code: engine.CardTypeMismatch, Explains: "no DCU here passes hygon.com/use-dcutype=K100; types seen: DCU-Z100"},
		{Name: "UUID selector", Node: d1(), Pod: ft.WithAnno(ask(dcuMem, 1000, dcuCores, 10), "hygon.com/use-gpuuuid", "d1-dcu0"),
			Want: [][]string{{"d1-dcu0"}}, Annotations: map[string]string{dcuAlloc: "d1-dcu0,DCU,1000,10:;"}},
		{Name: "UUID selector naming no DCU", Node: d1(), Pod: ft.WithAnno(ask(dcuMem, 1000), "hygon.com/use-gpuuuid", "K100"),
			Code: engine.CardUUIDMismatch, Explains: "2 DCU(s) are excluded by the UUID filter (hygon.com/use-gpuuuid=K100)"},
		// CheckType and CheckUUID (pkg/device/devices.go:693-737): the use and no-use lists apply together.
		{Name: "type in the use and the no-use lists", Node: d1(),
			Pod:  ft.WithAnno(ask(dcuMem, 1000, dcuCores, 10), "hygon.com/use-dcutype", "Z100", "hygon.com/nouse-dcutype", "Z100"),
			Code: engine.CardTypeMismatch},
		{Name: "type in the use list, another in the no-use list", Node: d1(),
			Pod:  ft.WithAnno(ask(dcuMem, 1000, dcuCores, 10), "hygon.com/use-dcutype", "Z100", "hygon.com/nouse-dcutype", "K100"),
			Want: [][]string{{"d1-dcu1"}}},
		{Name: "UUID in the use and the no-use lists", Node: d1(),
			Pod:  ft.WithAnno(ask(dcuMem, 1000, dcuCores, 10), "hygon.com/use-gpuuuid", "d1-dcu0,d1-dcu1", "hygon.com/nouse-gpuuuid", "d1-dcu1"),
			Want: [][]string{{"d1-dcu0"}}, Annotations: map[string]string{dcuAlloc: "d1-dcu0,DCU,1000,10:;"}},
		{Name: "UUIDs all in the no-use list too", Node: d1(),
			Pod:  ft.WithAnno(ask(dcuMem, 1000, dcuCores, 10), "hygon.com/use-gpuuuid", "d1-dcu0", "hygon.com/nouse-gpuuuid", "d1-dcu0"),
			Code: engine.CardUUIDMismatch},
	})
}

// TestDCURequest reads the requests HAMi's GenerateResourceRequests gives a DCU container.
func TestDCURequest(t *testing.T) {
	kinds := ft.Kinds(t, hygon.Family{})
	for _, tc := range []struct {
		name    string
		c       corev1.Container
		want    string // "count MiB/percent cores device template"
		problem string
	}{
		{"defaults", ft.Ctr("c", dcuNum, 2), "2 0/100 100 DCU ", ""},
		{"memory and cores", ft.Ctr("c", dcuNum, 1, dcuMem, 3000, dcuCores, 40), "1 3000/0 40 DCU ", ""},
		{"cores above 100", ft.Ctr("c", dcuNum, 1, dcuCores, 150), "1 0/100 100 DCU ", "150% is above 100%"},
	} {
		got, problems := ft.Request(t, kinds, ft.MkPod("ns", "p", tc.c))
		if got != tc.want || (tc.problem == "") != (problems == "") || !strings.Contains(problems, tc.problem) {
			t.Errorf("%s: %q (problems %q), want %q (%q)", tc.name, got, problems, tc.want, tc.problem)
		}
	}
}

// TestDCUUsageAndQuota: counted DCU pods use their DCUs and charge limits.hygon.com/dcumem, which is shown
// and never gates (HAMi's DCU Fit does not check the quota); removing the pod gives both back.
func TestDCUUsageAndQuota(t *testing.T) {
	counted := ft.Counted(ft.MkPod("team", "a", ft.Ctr("c", dcuNum, 1, dcuMem, 8000, dcuCores, 25)), "d1", dcuAlloc, "d1-dcu0,DCU,8000,25:;")
	w := ft.NewWorld(t, ft.Kinds(t, hygon.Family{}), []*corev1.Node{ft.RegNode("d1", dcuReg, ft.Devs("d1", "dcu", "DCU-Z100", 1, 32768, 100, 4))}, counted)
	w.C.SetQuota(&corev1.ResourceQuota{ObjectMeta: ft.MkPod("team", "q").ObjectMeta,
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"limits." + dcuMem: *resource.NewQuantity(10000, resource.DecimalSI)}}})
	g := w.C.Node("d1").GPUByUUID("d1-dcu0")
	if g == nil || g.UsedMem != 8000 || g.UsedCores != 25 || g.UsedSlots != 1 || g.Device != "DCU" {
		t.Fatalf("DCU usage %+v", g)
	}
	if d := w.QuotaLine(t, "team", "limits."+dcuMem); d.Used != 8000 || d.Limit != 10000 || len(w.C.Quota("team").Devices) != 1 {
		t.Fatalf("quota %+v, want 8000 of 10000 MiB, one line", w.C.Quota("team"))
	}
	if v := w.Evaluate(ft.MkPod("team", "b", ft.Ctr("c", dcuNum, 1, dcuMem, 4000, dcuCores, 25))); !v.Fits {
		t.Fatalf("HAMi's DCU Fit does not gate the quota: %s", v.Summary)
	}
	w.C.RemovePod("team", "a")
	if d := w.QuotaLine(t, "team", "limits."+dcuMem); d.Used != 0 || w.C.Node("d1").GPUs[0].UsedMem != 0 {
		t.Fatalf("after removal %+v %+v", d, w.C.Node("d1").GPUs[0])
	}
}
