package metaxsgpu_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/metaxsgpu"
)

// TestPrioritize is prioritizeExclusiveDevices (pkg/device/metax/sdevice.go:579-645 at v2.10.0) on the
// candidates in the walk's order: the smallest MetaLink zone holding the request, else zones one after
// another (smallest first), then the unlinked devices; only for a request of every core without an app class.
func TestPrioritize(t *testing.T) {
	z := func(i int) *int { return &i }
	walk := func(zones ...int) []device.Candidate {
		var out []device.Candidate
		for i, zone := range zones {
			c := device.Candidate{Index: 10 + i}
			if zone >= 0 {
				c.Group = z(zone)
			}
			out = append(out, c)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		walk  []device.Candidate
		count int
		cores int64
		pod   map[string]string
		want  []int
	}{
		{"the smallest zone that holds one", walk(2, 2, 1), 1, 100, nil, []int{12}},
		{"the smallest zone that holds two", walk(3, 1, 2, 3, 2, 3), 2, 100, nil, []int{12, 14}},
		{"zones across, smallest first", walk(1, 2, 2, 3, 3, 3), 4, 100, nil, []int{10, 11, 12, 13}},
		{"unlinked devices last", walk(-1, 0, 1, 2), 3, 100, nil, []int{12, 13, 10}},
		{"zones of one size: the first the walk meets", walk(2, 1, 2, 1), 2, 100, nil, []int{10, 12}},
		{"not every core: HAMi's order", walk(2, 2, 1), 1, 50, nil, nil},
		{"an app class: HAMi's order or the online rule", walk(2, 2, 1), 1, 100, map[string]string{metaxsgpu.AppClassAnnotation: "offline"}, nil},
		{"no more candidates than asked", walk(2, 1), 2, 100, nil, nil},
	} {
		if got := metaxsgpu.Prioritize(tc.walk, tc.count, tc.cores, tc.pod); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// zoneNode is node n1 with sGPUs of these MetaLink zones, healthy but the unhealthy ones, on NUMA 0 for the
// first half; 64 GiB, 16 slots, 100 cores each, fixed-share.
func zoneNode(unhealthy []int, zones ...int) *corev1.Node {
	var entries []string
	for i, z := range zones {
		entries = append(entries, fmt.Sprintf(`{"uuid":"g%d","totalDevCount":16,"totalCompute":100,"totalVRam":65536,"numa":%d,"healthy":%v,"qosPolicy":"fixed-share","linkZone":%d}`,
			i, i*2/len(zones), !slices.Contains(unhealthy, i), z))
	}
	return ft.Node("n1", map[string]string{sgpuReg: "[" + strings.Join(entries, ",") + "]"}, nil)
}

// TestMetaxSGPUExclusiveByZone: HAMi v2.10.0's sGPU Fit hands a request of every core to
// prioritizeExclusiveDevices when more sGPUs fit than it asks for (sdevice.go:439-451). Seed 84 of the oracle's
// metax-sgpu batch: an init container asking one whole sGPU (vcore unnamed: 100) takes the one sGPU of
// MetaLink zone 1 left, not the first of the walk.
func TestMetaxSGPUExclusiveByZone(t *testing.T) {
	used := ft.Counted(ft.Pod("run", nil, map[string]string{sgpu: "1", sgpuMem: "1"}), "n1", sgpuAlloc, "g0,Metax-SGPU,1024,0:;")
	seed84 := ft.Pod("p", map[string]string{"metax-tech.com/nouse-gpuuuid": "g4"}, map[string]string{sgpu: "2", sgpuCore: "50"})
	seed84.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Limits: ft.Pod("x", nil, map[string]string{sgpu: "1", sgpuMem: "1"}).Spec.Containers[0].Resources.Limits}}}
	ft.Run(t, ft.Kinds(t, metaxsgpu.Family{}), []ft.Case{
		{Name: "seed 84: the init container's whole sGPU from the smaller zone", Node: zoneNode([]int{2}, 1, 1, 1, 2, 2, 2),
			Counted: []*corev1.Pod{used}, Pod: seed84, Want: [][]string{{"g1"}, {"g5", "g3"}}},
		{Name: "two whole sGPUs within one zone", Node: zoneNode(nil, 1, 2, 2, 3),
			Pod: ft.Pod("p", nil, map[string]string{sgpu: "2"}), Want: [][]string{{"g2", "g1"}}},
		{Name: "half the cores: the walk's first two", Node: zoneNode(nil, 1, 2, 2, 3),
			Pod: ft.Pod("p", nil, map[string]string{sgpu: "2", sgpuCore: "50"}), Want: [][]string{{"g3", "g2"}}},
	})
}
