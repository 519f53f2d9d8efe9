package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// capNode is a node whose device plugin registers no annotation: its devices come from status.capacity.
func capNode(name string, kv ...any) *corev1.Node {
	n := mkNode(name, nil)
	n.Status.Capacity = corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Status.Capacity[corev1.ResourceName(kv[i].(string))] = *resource.NewQuantity(int64(kv[i+1].(int)), resource.DecimalSI)
	}
	return n
}

const (
	mtNum, mtMem, mtCores = "mthreads.com/vgpu", "mthreads.com/sgpu-memory", "mthreads.com/sgpu-core"
	mtAlloc               = "hami.io/mthreads-vgpu-devices-allocated"
	klNum, xpuNum, xpuMem = "kunlunxin.com/xpu", "kunlunxin.com/vxpu", "kunlunxin.com/vxpu-memory"
	klAlloc, xpuAlloc     = "hami.io/kunlun-allocated", "hami.io/xpu-devices-allocated"
	xpuReg                = "hami.io/node-register-xpu"
)

// FuzzVendors2Annotations: whatever a node registers for vXPUs and whatever a counted pod's Mthreads, Kunlun
// and vXPU device lists say, nothing panics, usage never goes negative after the pods are removed, and a
// fitting placement's annotations read back as the same usage.
func FuzzVendors2Annotations(f *testing.F) {
	f.Add(codec.FormatNodeRegister(vdevs("n", "xpu", "XPU", 2, 98304, 100, 4)), "n-mthreads-0,Mthreads,1024,4:;", "n-kunlun-1,kunlun,98304,100:;", "n-xpu0,XPU,24576,25:;", int64(20000), int64(1))
	f.Add("[", ";;;", ",,,:", "x", int64(-1), int64(3))
	f.Add(`[{"id":"n-xpu0","count":1,"devmem":10,"health":true}]`, "n-mthreads-9,Mthreads,1,1:", "n-kunlun-0,kunlun,1,1:n-kunlun-0,kunlun,1,1:", "n-xpu0,XPU,99999,100:", int64(70000), int64(2))
	f.Fuzz(func(t *testing.T, xpuRegV, mtPod, klPod, xpuPod string, mem, count int64) {
		c := NewCluster(DefaultConfig())
		n := capNode("n", mtCores, 32, mtMem, 16, klNum, 8)
		n.Annotations[xpuReg] = xpuRegV
		c.SetNode(n)
		p := mkPod("ns", "a", vctr("c", mtNum, 1), vctr("d", klNum, 1), vctr("e", xpuNum, 1))
		p.Annotations[codec.PodNodeAnnotation] = "n"
		p.Annotations[mtAlloc] = mtPod
		p.Annotations[klAlloc] = klPod
		p.Annotations[xpuAlloc] = xpuPod
		c.SetPod(p)
		q := mkPod("ns", "b", vctr("c", mtNum, int(count%3), mtMem, int(mem%100)), vctr("d", klNum, int(count%9)), vctr("e", xpuNum, int(count%3), xpuMem, int(mem%200000)))
		placeAndRemove(t, c, q)
	})
}
