package enflame

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodeDevices: HAMi's GetNodeDevices (pkg/device/enflame/gcu.go; gcu_test.go): one single-slot GCU of
// 100 memory and 100 cores per unit of capacity, none without capacity.
func TestNodeDevices(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "e"}, Status: corev1.NodeStatus{Capacity: corev1.ResourceList{
		"enflame.com/gcu": *resource.NewQuantity(2, resource.DecimalSI)}}}
	d := NodeDevices(n, "enflame.com/gcu")
	if len(d) != 2 || d[1].ID != "e-GCU-1" || d[1].Index != 1 || d[1].Count != 1 || d[1].Devmem != 100 || d[1].Devcore != 100 || d[1].Type != "GCU" || !d[1].Health {
		t.Errorf("devices %+v", d)
	}
	n.Status.Capacity["enflame.com/gcu"] = *resource.NewQuantity(0, resource.DecimalSI)
	if d := NodeDevices(n, "enflame.com/gcu"); d != nil {
		t.Errorf("zero capacity: %+v", d)
	}
}

// FuzzNodeDevices: whatever the capacity, no panic and one device per unit up to the bound.
func FuzzNodeDevices(f *testing.F) {
	f.Add(int64(8))
	f.Add(int64(-1))
	f.Add(int64(1 << 40))
	f.Fuzz(func(t *testing.T, c int64) {
		n := &corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{"enflame.com/gcu": *resource.NewQuantity(c, resource.DecimalSI)}}}
		d := NodeDevices(n, "enflame.com/gcu")
		if c <= 0 || c > 1024 {
			if d != nil {
				t.Fatalf("capacity %d: %d devices", c, len(d))
			}
			return
		}
		if int64(len(d)) != c {
			t.Fatalf("capacity %d: %d devices", c, len(d))
		}
	})
}
