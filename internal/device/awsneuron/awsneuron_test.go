package awsneuron

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

const countRes, coreRes = "aws.amazon.com/neuron", "aws.amazon.com/neuroncore"

func node(name, instance string, devices, cores int64) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if instance != "" {
		n.Labels[InstanceTypeLabel] = instance
	}
	n.Status.Capacity = corev1.ResourceList{countRes: *resource.NewQuantity(devices, resource.DecimalSI)}
	if cores >= 0 {
		n.Status.Capacity[coreRes] = *resource.NewQuantity(cores, resource.DecimalSI)
	}
	return n
}

// TestNodeDevices follows HAMi's Test_GetNodeDevices (pkg/device/awsneuron/device_test.go): one inf2 device
// with two cores; HAMi registers the cores as the mask 3, kubectl-hami as the count 2.
func TestNodeDevices(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     *corev1.Node
		count int
		want  codec.DeviceInfo // the first device
	}{
		{"inf2, two cores", node("test", "inf2", 1, 2), 1,
			codec.DeviceInfo{ID: "test-AWSNeuron-0", Count: 2, Devcore: 2, Type: "inf2", Health: true}},
		{"inf1, four cores a device", node("n", "inf1.6xlarge", 4, 16), 4,
			codec.DeviceInfo{ID: "n-AWSNeuron-0", Count: 4, Devcore: 4, Type: "inf1.6xlarge", Health: true}},
		{"no cores listed: two, no instance type", node("n", "", 2, -1), 2,
			codec.DeviceInfo{ID: "n-AWSNeuron-0", Count: 2, Devcore: 2, Type: Name, Health: true}},
		{"no devices", node("n", "trn1", 0, 0), 0, codec.DeviceInfo{}},
	} {
		got := NodeDevices(tc.n, countRes, coreRes)
		if len(got) != tc.count {
			t.Fatalf("%s: %d devices, want %d", tc.name, len(got), tc.count)
		}
		if tc.count > 0 && !reflect.DeepEqual(got[0], tc.want) {
			t.Errorf("%s: device 0 = %+v, want %+v", tc.name, got[0], tc.want)
		}
	}
}

// TestMutate follows Test_MutateAdmission and Test_GenerateResourceRequests: a count takes whole devices; one
// or two cores take one device; more take whole devices, in pairs only.
func TestMutate(t *testing.T) {
	for _, tc := range []struct {
		in          device.Request
		count       int64
		cores       int64
		whole, fail bool
	}{
		{in: device.Request{Count: 2}, count: 2, whole: true},
		{in: device.Request{Count: 1}, count: 1, whole: true},
		{in: device.Request{Cores: 1, HasCores: true}, count: 1, cores: 1},
		{in: device.Request{Cores: 2, HasCores: true}, count: 1, cores: 2},
		{in: device.Request{Cores: 4, HasCores: true}, count: 2, cores: 4, whole: true},
		{in: device.Request{Cores: 3, HasCores: true}, fail: true, cores: 3},
		{in: device.Request{Cores: 0, HasCores: true}, fail: true},
	} {
		r := tc.in
		why := Mutate(&r)
		if (why != "") != tc.fail || r.Count != tc.count || r.Whole != tc.whole || r.Cores != tc.cores {
			t.Errorf("Mutate(%+v) = %+v %q", tc.in, r, why)
		}
	}
}

func upTo(n int, skip ...int) []int {
	var out []int
	for i := 0; i < n; i++ {
		if !contains(skip, i) {
			out = append(out, i)
		}
	}
	return out
}

func contains(v []int, x int) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}

// skip is whether each of n devices passed every gate, those in out not.
func skip(n int, out ...int) []bool {
	fit := make([]bool, n)
	for i := range fit {
		fit[i] = !contains(out, i)
	}
	return fit
}

// TestSelect is HAMi's Test_graphSelect (pkg/device/awsneuron/device_test.go at v2.10.0) plus the single-device
// walk, and graphSelect's reading of positions in the sorted list as indices (device.go:390-473).
func TestSelect(t *testing.T) {
	rev := []int{3, 2, 1, 0}
	for _, tc := range []struct {
		name  string
		order []int
		fit   []bool
		count int
		model string
		want  []int
	}{
		{"full allocate", nil, skip(16), 16, "inf2", upTo(16)},
		{"8 allocate fail", nil, skip(16, 7, 13), 8, "trn", nil},
		{"8 allocate success", nil, skip(16, 7), 8, "trn", []int{8, 9, 10, 11, 12, 13, 14, 15}},
		{"8 allocate", nil, skip(16, 5, 14), 8, "inf", []int{6, 7, 8, 9, 10, 11, 12, 13}},
		{"one device: the walk from the end of the list", nil, skip(4, 3), 1, "trn1.2xlarge", []int{2}},
		{"one device, list reversed: still the end of the list", rev, []bool{true, true, false, false}, 1, "trn1.2xlarge", []int{2}},
		{"two on Trainium: not a count it places", nil, skip(4), 2, "trn1.32xlarge", nil},
		{"two on Inferentia: any start", nil, skip(4, 0), 2, "inf2.24xlarge", []int{1, 2}},
		{"more than the list", nil, skip(2), 4, "inf2", nil},
		{"positions are taken for indices", rev, []bool{true, true, false, false}, 2, "inf2", []int{0, 1}},
		{"a run of positions no index has takes fewer", []int{0, 5, 6}, []bool{true, true, false}, 2, "inf2", []int{0}},
	} {
		order := tc.order
		if order == nil { // devices 0..n-1 in index order
			order = upTo(len(tc.fit))
		}
		if got := Select(order, tc.fit, tc.count, tc.model); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Select = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// FuzzSelect checks that Select answers at most count distinct indices of the list, or nothing.
func FuzzSelect(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 5, 6, 7, 8}, []byte{1, 1, 1, 0, 1, 1, 1, 1}, 4, "trn1")
	f.Add([]byte{9, 1, 2}, []byte{1, 1, 0}, 2, "inf2")
	f.Fuzz(func(t *testing.T, raw, passed []byte, count int, model string) {
		seen := map[int]bool{}
		var order []int
		var fit []bool
		for i, b := range raw {
			if !seen[int(b)] {
				seen[int(b)] = true
				order = append(order, int(b))
				fit = append(fit, i < len(passed) && passed[i]%2 == 1)
			}
		}
		got := Select(order, fit, count%40, model)
		if len(got) > count%40 || got != nil && count%40 <= 0 {
			t.Fatalf("Select(%v, %v, %d) = %v", order, fit, count%40, got)
		}
		picked := map[int]bool{}
		for _, i := range got {
			if !seen[i] || picked[i] {
				t.Fatalf("Select(%v, %v, %d) = %v: repeated or not in the list", order, fit, count%40, got)
			}
			picked[i] = true
		}
	})
}

// FuzzNodeDevices feeds any capacity to NodeDevices: it never panics, and builds at most MaxCapacityDevices
// devices, each with at least one and at most 62 cores.
func FuzzNodeDevices(f *testing.F) {
	f.Add("2", "4", "inf2")
	f.Add("1k", "-3", "")
	f.Fuzz(func(t *testing.T, devices, cores, instance string) {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{InstanceTypeLabel: instance}}}
		n.Status.Capacity = corev1.ResourceList{}
		if q, err := resource.ParseQuantity(devices); err == nil {
			n.Status.Capacity[countRes] = q
		}
		if q, err := resource.ParseQuantity(cores); err == nil {
			n.Status.Capacity[coreRes] = q
		}
		got := NodeDevices(n, countRes, coreRes)
		if len(got) > device.MaxCapacityDevices {
			t.Fatalf("%d devices", len(got))
		}
		for _, d := range got {
			if d.Devcore < 1 || d.Devcore > 62 || int64(d.Count) != d.Devcore {
				t.Fatalf("device %+v", d)
			}
		}
	})
}

// TestBindExtra is HAMi's Test_PatchAnnotations: device indices for a count, NeuronCore indices (device index
// x cores per device + bit) for cores, across every container.
func TestBindExtra(t *testing.T) {
	ks, err := Family{}.Kinds(nil)
	if err != nil {
		t.Fatal(err)
	}
	k := &ks[0]
	annos := map[string]string{codec.PodNodeAnnotation: "n1"}
	got := bindExtra(k, [][]device.Placed{{{Index: 0, Mask: 3, DeviceCores: 2}, {Index: 1, Mask: 3, DeviceCores: 2}}}, annos, 7)
	want := map[string]string{IDsAnnotation: "0,1", AllocTimeAnnotation: "7000000000", AllocatedFlagAnnotation: "false", PredicateNodeAnnotation: "n1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("count: %v, want %v", got, want)
	}
	got = bindExtra(k, [][]device.Placed{nil, {{Index: 3, Mask: 2, DeviceCores: 2, ByCores: true}}, {{Index: 0, Mask: 3, DeviceCores: 2, ByCores: true}}}, annos, 7)
	want = map[string]string{IDsAnnotation: "7,0,1", ResourceTypeAnnotation: coreRes, AllocTimeAnnotation: "7000000000", AllocatedFlagAnnotation: "false", PredicateNodeAnnotation: "n1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cores: %v, want %v", got, want)
	}
	if got := bindExtra(k, [][]device.Placed{nil}, annos, 7); got != nil {
		t.Errorf("no devices: %v", got)
	}
}

// TestKinds: the awsneuron section of device-config.yaml renames both resources (HAMi's AWSNeuronConfig).
func TestKinds(t *testing.T) {
	ks, err := Family{}.Kinds([]byte(`{"resourceCountName":"example.com/neuron","resourceCoreName":"example.com/core"}`))
	if err != nil || len(ks) != 1 || ks[0].Count != "example.com/neuron" || ks[0].Cores != "example.com/core" {
		t.Fatalf("Kinds = %+v, %v", ks, err)
	}
	if err := ks[0].Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := (Family{}).Kinds([]byte(`{"resourceCountName":`)); err == nil {
		t.Error("a broken section is accepted")
	}
}
