package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// FuzzVendorAnnotations: whatever a node registers for DCUs and NPUs and whatever a counted pod's device lists
// say, nothing panics, usage never goes negative after the pod is removed, and a fitting placement's
// annotations read back as the same usage.
func FuzzVendorAnnotations(f *testing.F) {
	f.Add(codec.FormatNodeRegister(vdevs("n", "dcu", "DCU", 2, 16384, 100, 4)), "n-dcu0,DCU,1000,10:;", `[{"id":"n-npu0","count":4,"devmem":65536,"devcore":20,"health":true}]`, "n-npu0,Ascend910B3,16384,0:;", int64(2000), int64(1))
	f.Add("[", ";;;", "x", ",,,:", int64(-1), int64(3))
	f.Add(`[{"id":"n-dcu0","count":1,"devmem":10,"health":true}]`, "n-dcu0,DCU,99999,100:", "[]", "n-npu0,Ascend910B3,1,1:n-npu0,Ascend910B3,1,1:", int64(70000), int64(2))
	f.Fuzz(func(t *testing.T, dcuRegV, dcuPod, npuRegV, npuPod string, mem, count int64) {
		c := NewCluster(DefaultConfig())
		n := mkNode("n", nil)
		n.Annotations[dcuReg] = dcuRegV
		n.Annotations[b3Reg] = npuRegV
		c.SetNode(n)
		p := mkPod("ns", "a", vctr("c", dcuNum, 1), vctr("d", b3, 1))
		p.Spec.Containers[1].Name = "d"
		p.Annotations[codec.PodNodeAnnotation] = "n"
		p.Annotations[dcuAlloc] = dcuPod
		p.Annotations[b3Alloc] = npuPod
		c.SetPod(p)
		q := mkPod("ns", "b", vctr("c", dcuNum, int(count%5), dcuMem, int(mem%100000)), vctr("d", b3, int(count%3), b3Mem, int(mem%100000)))
		q.Spec.Containers[1].Name = "d"
		placeAndRemove(t, c, q)
	})
}

// placeAndRemove evaluates pod b on node n (and its capacity), counts it where it fits, then removes it and
// pod a: nothing may be left on any device or in the namespace's quota use.
func placeAndRemove(t *testing.T, c *Cluster, q *corev1.Pod) {
	t.Helper()
	v := c.Evaluate(q, EvalOptions{DetailAll: true})
	c.Capacity(q, 3)
	if v.Fits && v.Placement != nil {
		q.Spec.NodeName = "n"
		for k, val := range v.Placement.Annotations(testTime) {
			q.Annotations[k] = val
		}
		c.SetPod(q)
		c.RemovePod("ns", "b")
	}
	c.RemovePod("ns", "a")
	for _, g := range c.Node("n").GPUs {
		if g.UsedMem != 0 || g.UsedCores != 0 || g.UsedSlots != 0 {
			t.Fatalf("usage left after removing every pod: %+v", g)
		}
	}
	if u := c.nsUsed["ns"]; u != nil {
		for r, v := range u.dev {
			if v != 0 {
				t.Fatalf("quota %s left at %d", r, v)
			}
		}
	}
}

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
