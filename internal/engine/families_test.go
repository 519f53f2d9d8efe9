package engine

import (
	"strings"
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

// counted places p on node with the device list under key, as a bound pod.
func counted(p *corev1.Pod, node, key, val string) *corev1.Pod {
	p.Annotations[codec.PodNodeAnnotation] = node
	p.Annotations[key] = val
	p.Spec.NodeName = node
	return p
}

type vendorCase struct {
	name   string
	quota  corev1.ResourceList
	nodes  []*corev1.Node
	pods   []*corev1.Pod
	pod    *corev1.Pod
	fits   bool
	code   Code
	annos  map[string]string // wanted placement annotations (subset)
	absent []string
	// gpuDetail is wanted in some device's result on the first node.
	gpuDetail string
	// explains is wanted in the explanation of a pod that does not fit.
	explains string
}

func runVendorCases(t *testing.T, tests []vendorCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCluster(DefaultConfig())
			if tc.quota != nil {
				c.SetQuota(&corev1.ResourceQuota{ObjectMeta: mkPod("ns", "q").ObjectMeta, Spec: corev1.ResourceQuotaSpec{Hard: tc.quota}})
			}
			for _, n := range tc.nodes {
				if probs := c.SetNode(n); len(probs) > 0 {
					t.Fatalf("node problems: %v", probs)
				}
			}
			for _, p := range tc.pods {
				if probs := c.SetPod(p); len(probs) > 0 {
					t.Fatalf("pod problems: %v", probs)
				}
			}
			v := c.Evaluate(tc.pod, EvalOptions{DetailAll: true})
			if tc.gpuDetail != "" {
				found := false
				for _, g := range v.Nodes[0].GPUs {
					found = found || strings.Contains(g.Result.Detail, tc.gpuDetail)
				}
				if !found {
					t.Errorf("no device says %q: %+v", tc.gpuDetail, v.Nodes[0].GPUs)
				}
			}
			if v.Fits != tc.fits {
				t.Fatalf("fits = %v, want %v: %s %v", v.Fits, tc.fits, v.Summary, v.Reasons)
			}
			if !tc.fits {
				if len(v.Reasons) != 1 || v.Reasons[0].Code != tc.code {
					t.Fatalf("reasons %v, want %s: %s", v.Reasons, tc.code, v.Summary)
				}
				why := strings.Join(v.Explanation, "\n")
				if tc.explains != "" && !strings.Contains(why, tc.explains) {
					t.Errorf("explanation lacks %q:\n%s", tc.explains, why)
				}
				if strings.Contains(why, "MIG") || strings.Contains(why, "numa-bind") {
					t.Errorf("explanation of a %s pod speaks of NVIDIA's MIG or numa-bind:\n%s", tc.nodes[0].Name, why)
				}
				return
			}
			got := v.Placement.Annotations(testTime)
			for k, want := range tc.annos {
				if got[k] != want {
					t.Errorf("%s = %q, want %q", k, got[k], want)
				}
			}
			for _, k := range tc.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s is written", k)
				}
			}
		})
	}
}

const (
	mtNum, mtMem, mtCores = "mthreads.com/vgpu", "mthreads.com/sgpu-memory", "mthreads.com/sgpu-core"
	mtAlloc               = "hami.io/mthreads-vgpu-devices-allocated"
)

// TestMthreadsQuota: a counted Mthreads pod charges limits.mthreads.com/sgpu-memory in MiB (HAMi's quota keys
// are accounted for every type), without gating the Fit.
func TestMthreadsQuota(t *testing.T) {
	c := NewCluster(DefaultConfig())
	c.SetNode(capNode("m1", mtCores, 32, mtMem, 16))
	c.SetQuota(&corev1.ResourceQuota{ObjectMeta: mkPod("team", "q").ObjectMeta,
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"limits." + mtMem: *resource.NewQuantity(4, resource.DecimalSI)}}})
	if probs := c.SetPod(counted(mkPod("team", "a", vctr("c", mtNum, 1, mtMem, 2, mtCores, 8)), "m1", mtAlloc, "m1-mthreads-0,Mthreads,1024,8:;")); len(probs) > 0 {
		t.Fatal(probs)
	}
	q := c.Quota("team")
	var found bool
	for _, d := range q.Devices {
		if d.Resource == "limits."+mtMem {
			found = true
			if d.Used != 1024 || d.Limit != 2048 {
				t.Errorf("quota line %+v, want 1024 of 2048 MiB", d)
			}
		}
	}
	if !found {
		t.Fatalf("no quota line for %s: %+v", mtMem, q)
	}
}

const (
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
