package kunlun

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// free lists the indices 0-7 not in used.
func free(used ...int) []int {
	var out []int
	for i := range 8 {
		if !slices.Contains(used, i) {
			out = append(out, i)
		}
	}
	return out
}

// inOrder lays out XPUs by their indices in list order with the fitting ones marked.
func inOrder(order, fitting []int) ([]int, []bool) {
	fit := make([]bool, len(order))
	for pos, i := range order {
		fit[pos] = slices.Contains(fitting, i)
	}
	return order, fit
}

// TestGraphSelect is HAMi's own topology cases (pkg/device/kunlun/topo_test.go: TestGraghSelect_*,
// TestInterconnect_*, TestDevicepick) on a list in index order, where positions and indices agree.
func TestGraphSelect(t *testing.T) {
	tests := []struct {
		name  string
		fit   []int
		count int
		want  []int
	}{
		{"AllEightAvailable", free(), 8, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"EightNotFullyAvailable", free(0), 8, nil},
		{"SingleDevice: the left wing first", free(), 1, []int{0}},
		{"FourFromLeftWing", free(4, 5, 6, 7), 4, []int{0, 1, 2, 3}},
		{"XPU 7 used, the free left wing", free(7), 4, []int{0, 1, 2, 3}},
		{"Interconnect_TwoDevices: only the cross pair 0-4", []int{0, 4}, 2, []int{0, 4}},
		{"Interconnect_FourDevices: only the group 0-1-4-5", []int{0, 1, 4, 5}, 4, []int{0, 1, 4, 5}},
		{"Interconnect_UnsupportedCount", free(), 3, nil},
		{"one XPU prefers a wing with one free", []int{0, 1, 2, 5}, 1, []int{5}},
		{"two XPUs from the tighter wing", []int{0, 1, 2, 4, 5}, 2, []int{4, 5}},
		{"two XPUs, no wing has two, no cross pair", []int{0, 5}, 2, nil},
		{"four XPUs of six: the first group whose rest is linked", []int{0, 1, 2, 4, 5, 6}, 4, []int{0, 1, 4, 5}},
		{"four XPUs of six, no rest linked: the last group that fits", []int{0, 1, 2, 4, 5, 7}, 4, []int{0, 1, 4, 5}},
	}
	for _, tc := range tests {
		order, fit := inOrder(free(), tc.fit)
		if got := GraphSelect(order, fit, tc.count); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: GraphSelect(%v, %d) = %v, want %v", tc.name, tc.fit, tc.count, got, tc.want)
		}
	}
	// TestDevicepick: 1 and 3 used.
	order, fit := inOrder(free(), free(1, 3))
	for _, c := range []struct {
		start, count int
		want         []int
	}{{0, 2, []int{0, 2}}, {4, 3, []int{4, 5, 6}}, {6, 5, []int{6, 7}}} {
		if got := devicePick(order, fit, c.start, c.count); !reflect.DeepEqual(got, c.want) {
			t.Errorf("devicePick(%v, %d, %d) = %v, want %v", fit, c.start, c.count, got, c.want)
		}
	}
}

// TestGraphSelectByPosition: at v2.10.0 graghSelect reads the wings from positions in HAMi's score-sorted
// list (topo.go:226-236, devicepick 208-220), not from indices; HAMi's later topo_order_test.go fixed that.
func TestGraphSelectByPosition(t *testing.T) {
	tests := []struct {
		name       string
		order, fit []int
		count      int
		want       []int
	}{
		// Sorted 7..0: positions 0-3 are XPUs 7-4. XPU 7 used: the "left wing" (positions 0-3) has 3 fitting,
		// the right 4, so four XPUs come from positions 4-7, XPUs 3, 2, 1, 0.
		{"reversed list, XPU 7 used", []int{7, 6, 5, 4, 3, 2, 1, 0}, free(7), 4, []int{3, 2, 1, 0}},
		// One XPU: a wing with one fitting first; positions 0-3 hold XPUs 0, 4, 1, 5 of which only 4 fits.
		{"mixed list, one XPU", []int{0, 4, 1, 5, 2, 6, 3, 7}, []int{4, 2, 6, 3}, 1, []int{4}},
		// By index each wing has two (0, 1 and 4, 5): HAMi at the tag sees positions 0-3 = XPUs 0, 4, 1, 5,
		// all fitting, so four XPUs come from there.
		{"mixed list, four XPUs in one positional wing", []int{0, 4, 1, 5, 2, 6, 3, 7}, []int{0, 1, 4, 5}, 4, []int{0, 4, 1, 5}},
		// Two XPUs, no positional wing holds two: the first cross pair walking the list, XPU 6 before 2.
		{"two XPUs by cross pair in list order", []int{6, 0, 1, 3, 2, 4, 5, 7}, []int{6, 2}, 2, []int{6, 2}},
	}
	for _, tc := range tests {
		order, fit := inOrder(tc.order, tc.fit)
		if got := GraphSelect(order, fit, tc.count); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: GraphSelect(%v, %v, %d) = %v, want %v", tc.name, tc.order, tc.fit, tc.count, got, tc.want)
		}
	}
}

// FuzzGraphSelect: whatever the list order and what fits, GraphSelect answers nothing or count distinct
// indices, fitting ones when fewer than eight are asked for.
func FuzzGraphSelect(f *testing.F) {
	f.Add(uint16(0xff), 4, uint8(0))
	f.Add(uint16(0x11), 2, uint8(3))
	f.Add(uint16(0x377), 4, uint8(5))
	f.Fuzz(func(t *testing.T, mask uint16, count int, rot uint8) {
		order := make([]int, 8)
		fit := make([]bool, 8)
		for pos := range order {
			order[pos] = (pos + int(rot)) % 8
			fit[pos] = mask&(1<<order[pos]) != 0
		}
		got := GraphSelect(order, fit, count)
		if got == nil {
			return
		}
		if len(got) != count {
			t.Fatalf("GraphSelect(%v, %v, %d) = %v", order, fit, count, got)
		}
		seen := map[int]bool{}
		for _, i := range got {
			pos := slices.Index(order, i)
			if seen[i] || pos < 0 || !fit[pos] {
				t.Fatalf("GraphSelect(%v, %v, %d) = %v: repeated or not fitting", order, fit, count, got)
			}
			seen[i] = true
		}
	})
}

// TestMutate is HAMi's trimMemory and GenerateResourceRequests (vdevice.go; vdevice_test.go): memory to a
// quarter, a half or the whole XPU, cores in proportion; none is the whole XPU.
func TestMutate(t *testing.T) {
	for _, c := range []struct {
		in         device.Request
		mem, cores int64
	}{
		{device.Request{Count: 1}, MaxMemory, 100},
		{device.Request{Count: 1, Memory: 1, HasMemory: true}, 24576, 25},
		{device.Request{Count: 1, Memory: 24577, HasMemory: true}, 49152, 50},
		{device.Request{Count: 2, Memory: 60000, HasMemory: true}, MaxMemory, 100},
		{device.Request{Count: 1, Memory: 200000, HasMemory: true}, MaxMemory, 100},
	} {
		r := c.in
		if why := Mutate(&r); why != "" || r.Memory != c.mem || r.Cores != c.cores || !r.HasMemory || !r.HasCores {
			t.Errorf("Mutate(%+v) = %+v %q, want memory %d cores %d", c.in, r, why, c.mem, c.cores)
		}
	}
}

func TestNodeDevices(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "k"}, Status: corev1.NodeStatus{Capacity: corev1.ResourceList{
		"kunlunxin.com/xpu": *resource.NewQuantity(8, resource.DecimalSI)}}}
	d := NodeDevices(n, "kunlunxin.com/xpu")
	if len(d) != 8 || d[0].ID != "k-kunlun-0" || d[0].Numa != 0 || d[4].Numa != 1 || d[7].Devmem != MaxMemory || d[7].Count != 100 || d[7].Type != "kunlun" {
		t.Errorf("devices %+v", d)
	}
	if d := NodeDevices(&corev1.Node{}, "kunlunxin.com/xpu"); d != nil {
		t.Errorf("no capacity: %+v", d)
	}
}

func TestDeviceIndex(t *testing.T) {
	got := deviceIndex(nil, [][]device.Placed{{{Index: 2}}, {{Index: 4}, {Index: 0}}, {}}, nil, 0)
	if got[DeviceIndexAnnotation] != "4,0" {
		t.Errorf("%v", got)
	}
}
