package mthreads

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

func node(cores, mem int64) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "test"}, Status: corev1.NodeStatus{Capacity: corev1.ResourceList{
		"mthreads.com/sgpu-core":   *resource.NewQuantity(cores, resource.DecimalSI),
		"mthreads.com/sgpu-memory": *resource.NewQuantity(mem, resource.DecimalSI),
	}}}
}

// TestNodeDevices: HAMi's Test_GetNodeDevices (pkg/device/mthreads/device_test.go, "get node device": one
// core and one memory unit make one 8192 MiB, 16-core GPU) and an 8 x S4000 node (128 cores, 768 units).
func TestNodeDevices(t *testing.T) {
	d := NodeDevices(node(1, 1), "mthreads.com/sgpu-memory", "mthreads.com/sgpu-core")
	if len(d) != 1 || d[0].ID != "test-mthreads-0" || d[0].Count != 100 || d[0].Devmem != 8192 || d[0].Devcore != 16 || d[0].Type != "Mthreads" || !d[0].Health {
		t.Errorf("devices %+v", d)
	}
	d = NodeDevices(node(128, 768), "mthreads.com/sgpu-memory", "mthreads.com/sgpu-core")
	if len(d) != 8 || d[7].ID != "test-mthreads-7" || d[7].Index != 7 || d[7].Devmem != 49152 {
		t.Errorf("devices %+v", d)
	}
	for _, n := range []*corev1.Node{node(0, 1), node(-16, 1), {}} {
		if d := NodeDevices(n, "mthreads.com/sgpu-memory", "mthreads.com/sgpu-core"); d != nil {
			t.Errorf("no cores: devices %+v", d)
		}
	}
}

// FuzzNodeDevices: whatever the node's capacity says, NodeDevices does not panic, gives ceil(cores/16)
// devices and never negative memory.
func FuzzNodeDevices(f *testing.F) {
	f.Add(int64(1), int64(1))
	f.Add(int64(128), int64(768))
	f.Add(int64(1<<62), int64(-1))
	f.Fuzz(func(t *testing.T, cores, mem int64) {
		d := NodeDevices(node(cores, mem), "mthreads.com/sgpu-memory", "mthreads.com/sgpu-core")
		if cores <= 0 || cores > CoresPerGPU*1024 {
			if d != nil {
				t.Fatalf("cores %d: %d devices", cores, len(d))
			}
			return
		}
		if want := (cores + CoresPerGPU - 1) / CoresPerGPU; int64(len(d)) != want {
			t.Fatalf("cores %d: %d devices, want %d", cores, len(d), want)
		}
		for _, x := range d {
			if x.Devmem < 0 {
				t.Fatalf("negative memory %+v", x)
			}
		}
	})
}

// TestMutate: HAMi's Test_MutateAdmission cases (pkg/device/mthreads/device_test.go): several GPUs or one
// without memory are taken whole; one with memory must name a legal slice ("memory no exist
// legalMemoryslices": 3 is refused).
func TestMutate(t *testing.T) {
	tests := []struct {
		in, want device.Request
		refused  bool
	}{
		{in: device.Request{Count: 2, Memory: 2, Cores: 1, HasMemory: true, HasCores: true}, want: device.Request{Count: 2, Memory: 192, Cores: 32, HasMemory: true, HasCores: true}},
		{in: device.Request{Count: 1, Cores: 1, HasCores: true}, want: device.Request{Count: 1, Memory: 96, Cores: 16, HasMemory: true, HasCores: true}},
		{in: device.Request{Count: 1, Memory: 2, Cores: 1, HasMemory: true, HasCores: true}, want: device.Request{Count: 1, Memory: 2, Cores: 1, HasMemory: true, HasCores: true}},
		{in: device.Request{Count: 1, Memory: 3, Cores: 1, HasMemory: true, HasCores: true}, want: device.Request{Count: 1, Memory: 3, Cores: 1, HasMemory: true, HasCores: true}, refused: true},
	}
	for _, tc := range tests {
		r := tc.in
		why := Mutate(&r)
		if r != tc.want || (why != "") != tc.refused {
			t.Errorf("Mutate(%+v) = %+v %q, want %+v refused=%v", tc.in, r, why, tc.want, tc.refused)
		}
	}
	r := device.Request{Count: 1, Memory: 3, HasMemory: true}
	if why := Mutate(&r); !strings.Contains(why, "2, 4, 8, 16, 32, 64, 96") {
		t.Errorf("refusal %q does not list the legal values", why)
	}
}

// TestBindExtra: HAMi's Test_PatchAnnotations ("exist device": gpu-index 0) and the last container with
// GPUs deciding the index list.
func TestBindExtra(t *testing.T) {
	got := bindExtra(nil, [][]device.Placed{{{UUID: "a", Index: 0}}, {}, {{UUID: "b", Index: 3}, {UUID: "c", Index: 1}}, {}},
		map[string]string{"hami.io/vgpu-node": "n1"}, 1700000000)
	want := map[string]string{GPUIndexAnnotation: "3,1", PredicateNodeAnnotation: "n1", PredicateTimeAnnotation: "1700000000000000000"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if got := bindExtra(nil, [][]device.Placed{{}}, nil, 1); got != nil {
		t.Errorf("no GPUs: %v", got)
	}
}
