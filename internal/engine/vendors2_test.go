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

// TestMthreadsGates are HAMi v2.10's Mthreads cases (pkg/device/mthreads/device_test.go: TestDevices_Fit,
// Test_CustomFilterRule, Test_MutateAdmission, Test_PatchAnnotations) as whole-pod evaluations on nodes whose
// GPUs come from their capacity: m1 has two 4096 MiB GPUs (32 cores, 16 memory units), s1 eight S4000s.
func TestMthreadsGates(t *testing.T) {
	m1 := func() *corev1.Node { return capNode("m1", mtCores, 32, mtMem, 16) }
	s1 := func() *corev1.Node { return capNode("s1", mtCores, 128, mtMem, 768) }
	runVendorCases(t, []vendorCase{
		{name: "fit success: memory in 512 MiB units, cores in sixteenths", nodes: []*corev1.Node{m1()},
			pod:  mkPod("ns", "p", vctr("c", mtNum, 1, mtMem, 2, mtCores, 8)),
			fits: true, annos: map[string]string{mtAlloc: "m1-mthreads-1,Mthreads,1024,8:;", "mthreads.com/gpu-index": "1",
				"mthreads.com/predicate-node": "m1", "mthreads.com/predicate-time": "1700000000000000000"},
			absent: []string{"hami.io/mthreads-vgpu-devices-to-allocate", codec.PodAllocatedAnnotation}},
		{name: "fit fail: memory not enough", nodes: []*corev1.Node{m1()},
			pod: mkPod("ns", "p", vctr("c", mtNum, 1, mtMem, 16, mtCores, 8)), code: CardInsufficientMemory},
		{name: "fit fail: core not enough", nodes: []*corev1.Node{m1()},
			pods: []*corev1.Pod{counted(mkPod("ns", "a", vctr("c", mtNum, 2)), "m1", mtAlloc, "m1-mthreads-0,Mthreads,1024,16:m1-mthreads-1,Mthreads,1024,16:;")},
			pod:  mkPod("ns", "p", vctr("c", mtNum, 1, mtMem, 2, mtCores, 8)), code: CardInsufficientCore},
		{name: "fit fail: user assign use uuid mismatch", nodes: []*corev1.Node{m1()},
			pod:  withAnno(mkPod("ns", "p", vctr("c", mtNum, 1, mtMem, 2, mtCores, 8)), "mthreads.ai/use-gpuuuid", "dev-0"),
			code: CardUUIDMismatch},
		{name: "webhook: two GPUs are taken whole, 16 cores and 96 units each", nodes: []*corev1.Node{s1()},
			pod:  mkPod("ns", "p", vctr("c", mtNum, 2, mtMem, 2, mtCores, 1)),
			fits: true, annos: map[string]string{mtAlloc: "s1-mthreads-7,Mthreads,49152,16:s1-mthreads-6,Mthreads,49152,16:;", "mthreads.com/gpu-index": "7,6"}},
		{name: "webhook: one GPU without memory is taken whole", nodes: []*corev1.Node{s1()},
			pod:  mkPod("ns", "p", vctr("c", mtNum, 1, mtCores, 1)),
			fits: true, annos: map[string]string{mtAlloc: "s1-mthreads-7,Mthreads,49152,16:;"}},
		{name: "customFilterRule: a pod's containers share one GPU", nodes: []*corev1.Node{m1()},
			pod: func() *corev1.Pod {
				p := mkPod("ns", "p", vctr("a", mtNum, 1, mtMem, 2, mtCores, 4), vctr("b", mtNum, 1, mtMem, 2, mtCores, 4))
				return p
			}(),
			fits: true, annos: map[string]string{mtAlloc: "m1-mthreads-1,Mthreads,1024,4:;m1-mthreads-1,Mthreads,1024,4:;"}},
		{name: "customFilterRule: the other GPU is refused when the first is full", nodes: []*corev1.Node{m1()},
			pod:  mkPod("ns", "p", vctr("a", mtNum, 1, mtMem, 8, mtCores, 4), vctr("b", mtNum, 1, mtMem, 2, mtCores, 4)),
			code: CardInsufficientMemory, gpuDetail: "an earlier container of the pod took m1-mthreads-1"},
	})
}

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

// TestKunlunGates are HAMi v2.10's Kunlun cases (pkg/device/kunlun/device_test.go, vdevice_test.go and the
// topology cases of topo_test.go) as whole-pod evaluations: k1 has 8 whole XPUs from its capacity, x1 8
// registered vXPUs.
func TestKunlunGates(t *testing.T) {
	k1 := func() *corev1.Node { return capNode("k1", klNum, 8) }
	x1 := func(n int) *corev1.Node { return vendorNode("x1", xpuReg, vdevs("x1", "xpu", "XPU", n, 98304, 100, 4)) }
	used := func(idx ...int) []*corev1.Pod {
		var out []*corev1.Pod
		for _, i := range idx {
			out = append(out, counted(mkPod("ns", "u"+itoa(i), vctr("c", klNum, 1)), "k1", klAlloc, "k1-kunlun-"+itoa(i)+",kunlun,98304,100:;"))
		}
		return out
	}
	runVendorCases(t, []vendorCase{
		{name: "two whole XPUs from a free wing", nodes: []*corev1.Node{k1()},
			pod:  mkPod("ns", "p", vctr("c", klNum, 2)),
			fits: true, annos: map[string]string{klAlloc: "k1-kunlun-0,kunlun,98304,100:k1-kunlun-1,kunlun,98304,100:;", "BAIDU_COM_DEVICE_IDX": "0,1"},
			absent: []string{"hami.io/kunlun-devices-to-allocate", codec.PodAllocatedAnnotation}},
		{name: "one XPU goes where a wing has one free", nodes: []*corev1.Node{k1()}, pods: used(0, 1, 2, 4),
			pod:  mkPod("ns", "p", vctr("c", klNum, 1)),
			fits: true, annos: map[string]string{klAlloc: "k1-kunlun-3,kunlun,98304,100:;", "BAIDU_COM_DEVICE_IDX": "3"}},
		{name: "two XPUs across the wings take a cross-linked pair", nodes: []*corev1.Node{k1()}, pods: used(1, 2, 3, 5, 6, 7),
			pod:  mkPod("ns", "p", vctr("c", klNum, 2)),
			fits: true, annos: map[string]string{klAlloc: "k1-kunlun-0,kunlun,98304,100:k1-kunlun-4,kunlun,98304,100:;"}},
		// HAMi's node reason is NumaNotFit; kubectl-hami names each XPU's own: the six used ones are full, the
		// two free ones are NumaNotFit.
		{name: "two XPUs that are not linked", nodes: []*corev1.Node{k1()}, pods: used(1, 2, 3, 4, 6, 7),
			pod: mkPod("ns", "p", vctr("c", klNum, 2)), code: CardInsufficientMemory, gpuDetail: "2 fit, but no 2 of them are interconnected"},
		{name: "three XPUs is not a count Kunlun places", nodes: []*corev1.Node{k1()},
			pod: mkPod("ns", "p", vctr("c", klNum, 3)), code: NumaNotFit, explains: "no 3 of them"},
		{name: "a used XPU is not shared", nodes: []*corev1.Node{capNode("k1", klNum, 1)}, pods: used(0),
			pod: mkPod("ns", "p", vctr("c", klNum, 1)), code: CardInsufficientMemory},
		{name: "vXPU memory rounds up to a quarter XPU, cores in proportion", nodes: []*corev1.Node{x1(8)},
			pod:  mkPod("ns", "p", vctr("c", xpuNum, 1, xpuMem, 20000)),
			fits: true, annos: map[string]string{xpuAlloc: "x1-xpu0,XPU,24576,25:;", "hami.io/xpu-devices-to-allocate": "x1-xpu0,XPU,24576,25:;"}},
		{name: "vXPU without memory takes the whole XPU", nodes: []*corev1.Node{x1(8)},
			pod:  mkPod("ns", "p", vctr("c", xpuNum, 1)),
			fits: true, annos: map[string]string{xpuAlloc: "x1-xpu0,XPU,98304,100:;"}},
		{name: "FitVXPU: an XPU cut in quarters takes only quarters", nodes: []*corev1.Node{x1(1)},
			pods: []*corev1.Pod{counted(mkPod("ns", "a", vctr("c", xpuNum, 1, xpuMem, 20000)), "x1", xpuAlloc, "x1-xpu0,XPU,24576,25:;")},
			pod:  mkPod("ns", "p", vctr("c", xpuNum, 1, xpuMem, 40000)), code: CardNotFoundCustomFilterRule,
			gpuDetail: "cut in 24576 MiB slices", explains: "1 device(s): the XPU is cut in 24576 MiB slices"},
		{name: "FitVXPU: a second quarter fits", nodes: []*corev1.Node{x1(1)},
			pods: []*corev1.Pod{counted(mkPod("ns", "a", vctr("c", xpuNum, 1, xpuMem, 20000)), "x1", xpuAlloc, "x1-xpu0,XPU,24576,25:;")},
			pod:  mkPod("ns", "p", vctr("c", xpuNum, 1, xpuMem, 1000)),
			fits: true, annos: map[string]string{xpuAlloc: "x1-xpu0,XPU,24576,25:;"}},
		{name: "vXPU UUID selector", nodes: []*corev1.Node{x1(2)},
			pod:  withAnno(mkPod("ns", "p", vctr("c", xpuNum, 1, xpuMem, 20000)), "hami.io/no-use-xpu-uuid", "x1-xpu0,x1-xpu1"),
			code: CardUUIDMismatch},
	})
}

// TestEnflameGCUGates are HAMi v2.10's whole-GCU cases (pkg/device/enflame/gcu.go Fit; device_cordon_test.go
// TestGCUFit_DeviceCordon): an unused GCU is taken whole, a used one never, a cordoned one is skipped.
func TestEnflameGCUGates(t *testing.T) {
	const gcu, gcuAlloc = "enflame.com/gcu", "hami.io/enflame-gcu-devices-allocated"
	e1 := func(annos ...string) *corev1.Node {
		n := capNode("e1", gcu, 2)
		for i := 0; i+1 < len(annos); i += 2 {
			n.Annotations[annos[i]] = annos[i+1]
		}
		return n
	}
	runVendorCases(t, []vendorCase{
		{name: "a GCU is taken whole", nodes: []*corev1.Node{e1()},
			pod:  mkPod("ns", "p", vctr("c", gcu, 1)),
			fits: true, annos: map[string]string{gcuAlloc: "e1-GCU-1,GCU,100,100:;", "hami.io/enflame-gcu-devices-to-allocate": "e1-GCU-1,GCU,100,100:;"}},
		{name: "cordoned device is skipped, healthy sibling still fits", nodes: []*corev1.Node{e1(codec.NodeCordonAnnotation, "e1-GCU-1, ")},
			pod:  mkPod("ns", "p", vctr("c", gcu, 1)),
			fits: true, annos: map[string]string{gcuAlloc: "e1-GCU-0,GCU,100,100:;"}},
		{name: "all devices cordoned fails with CardCordoned", nodes: []*corev1.Node{e1(codec.NodeCordonAnnotation, "e1-GCU-0,e1-GCU-1")},
			pod: mkPod("ns", "p", vctr("c", gcu, 1)), code: CardCordoned},
		// HAMi: ExclusiveDeviceAllocateConflict (Used > 0); kubectl-hami's slot gate comes first.
		{name: "a used GCU is not shared", nodes: []*corev1.Node{e1()},
			pods: []*corev1.Pod{counted(mkPod("ns", "a", vctr("c", gcu, 2)), "e1", gcuAlloc, "e1-GCU-0,GCU,100,100:e1-GCU-1,GCU,100,100:;")},
			pod:  mkPod("ns", "p", vctr("c", gcu, 1)), code: CardTimeSlicingExhausted},
	})
}

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

// TestAMDGates are HAMi v2.10's AMD cases (pkg/device/amd/device.go Fit; device_test.go, device_alloctype_test.go,
// device_cordon_test.go): a1 has two MI300X GPUs of 196,608 MiB and 304 compute units. gpucores is a
// percentage of each GPU's compute units (at least one); absent, the whole GPU; the device list names the model.
func TestAMDGates(t *testing.T) {
	const amdNum, amdMem, amdCores, amdAlloc = "amd.com/gpu", "amd.com/gpumem", "amd.com/gpucores", "hami.io/amd-devices-allocated"
	a1 := func(typ string) *corev1.Node {
		n := vendorNode("a1", "hami.io/node-amd-register", vdevs("a1", "gpu", typ, 2, 196608, 304, 10))
		n.Status.Capacity = corev1.ResourceList{amdNum: resource.MustParse("2")}
		return n
	}
	runVendorCases(t, []vendorCase{
		{name: "memory only: the whole GPU's compute units", nodes: []*corev1.Node{a1("MI300X")},
			pod:  mkPod("ns", "p", vctr("c", amdNum, 1, amdMem, 8000)),
			fits: true, annos: map[string]string{amdAlloc: "a1-gpu1,MI300X,8000,304:;", "hami.io/amd-devices-to-allocate": "a1-gpu1,MI300X,8000,304:;"}},
		{name: "half the compute units", nodes: []*corev1.Node{a1("MI300X")},
			pod:  mkPod("ns", "p", vctr("c", amdNum, 1, amdMem, 8000, amdCores, 50)),
			fits: true, annos: map[string]string{amdAlloc: "a1-gpu1,MI300X,8000,152:;"}},
		{name: "1 % is at least one compute unit", nodes: []*corev1.Node{a1("MI300X")},
			pod:  mkPod("ns", "p", vctr("c", amdNum, 1, amdMem, 8000, amdCores, 1)),
			fits: true, annos: map[string]string{amdAlloc: "a1-gpu1,MI300X,8000,3:;"}},
		{name: "no memory: the whole GPU", nodes: []*corev1.Node{a1("MI300X")},
			pod:  mkPod("ns", "p", vctr("c", amdNum, 2)),
			fits: true, annos: map[string]string{amdAlloc: "a1-gpu1,MI300X,196608,304:a1-gpu0,MI300X,196608,304:;"}},
		{name: "alloc type: a GPU that registers no type is listed as AMD", nodes: []*corev1.Node{a1("")},
			pod:  mkPod("ns", "p", vctr("c", amdNum, 1, amdMem, 8000, amdCores, 50)),
			fits: true, annos: map[string]string{amdAlloc: "a1-gpu1,AMD,8000,152:;"}},
		{name: "compute units used up", nodes: []*corev1.Node{a1("MI300X")},
			pods: []*corev1.Pod{counted(mkPod("ns", "a", vctr("c", amdNum, 2, amdMem, 1000)), "a1", amdAlloc, "a1-gpu0,MI300X,1000,304:a1-gpu1,MI300X,1000,304:;")},
			pod:  mkPod("ns", "p", vctr("c", amdNum, 1, amdMem, 1000, amdCores, 10)), code: CardInsufficientCore},
		{name: "type selector", nodes: []*corev1.Node{a1("MI300X")},
			pod:  withAnno(mkPod("ns", "p", vctr("c", amdNum, 1, amdMem, 1000)), "amd.com/use-gputype", "MI250"),
			code: CardTypeMismatch},
		{name: "cordoned GPUs", nodes: []*corev1.Node{func() *corev1.Node {
			n := a1("MI300X")
			n.Annotations[codec.NodeCordonAnnotation] = "a1-gpu0,a1-gpu1"
			return n
		}()},
			pod: mkPod("ns", "p", vctr("c", amdNum, 1, amdMem, 1000)), code: CardCordoned},
	})
	for cores, refused := range map[int]bool{0: true, 101: true, 1: false, 100: false} {
		_, probs := ParseRequest(mkPod("ns", "p", vctr("c", amdNum, 1, amdCores, cores)), DefaultConfig())
		got := false
		for _, p := range probs {
			got = got || strings.Contains(p.Message, "not an integer percentage between 1 and 100")
		}
		if got != refused {
			t.Errorf("gpucores %d: refused %v, want %v (%v)", cores, got, refused, probs)
		}
	}
}

// TestAMDCapacityRegisters is HAMi v2.10.0's AMD CheckHealth (pkg/device/amd/device.go:195-206): a node whose
// amd.com/gpu capacity is 0, absent or not whole is never registered, whatever its register annotation says.
func TestAMDCapacityRegisters(t *testing.T) {
	for _, tc := range []struct {
		capacity string // "" leaves it out
		fits     bool
	}{{"2", true}, {"1", true}, {"0", false}, {"", false}, {"1500m", false}} {
		n := vendorNode("a1", "hami.io/node-amd-register", vdevs("a1", "gpu", "AMD-MI300X", 2, 196608, 304, 10))
		if tc.capacity != "" {
			n.Status.Capacity = corev1.ResourceList{"amd.com/gpu": resource.MustParse(tc.capacity)}
		}
		c := NewCluster(DefaultConfig())
		probs := c.SetNode(n)
		v := c.Evaluate(mkPod("ns", "p", vctr("c", "amd.com/gpu", 1, "amd.com/gpumem", 1000)), EvalOptions{})
		if v.Fits != tc.fits {
			t.Errorf("capacity %q: fits %v, want %v (%s)", tc.capacity, v.Fits, tc.fits, v.Summary)
		}
		if !tc.fits && (len(v.Reasons) != 1 || v.Reasons[0].Code != NodeUnregistered || len(probs) != 1 ||
			!strings.Contains(probs[0].Message, "HAMi does not register the node's GPUs")) {
			t.Errorf("capacity %q: reasons %v, problems %v; want NodeUnregistered and a problem saying why", tc.capacity, v.Reasons, probs)
		}
	}
}

// TestSlotsOnlyGates are HAMi v2.10's Biren and Vastai cases (pkg/device/biren/device.go and
// pkg/device/vastai/device.go Fit; device_test.go, device_cordon_test.go): a container takes one slot of each
// device, no memory and no cores, so a device is shared until its slots are used.
func TestSlotsOnlyGates(t *testing.T) {
	const brNum, brAlloc, vaNum, vaAlloc = "birentech.com/gpu", "hami.io/Biren-devices-allocated", "vastaitech.com/va", "hami.io/Vastai-devices-allocated"
	b1 := func() *corev1.Node {
		return vendorNode("b1", "hami.io/node-biren-register", vdevs("b1", "gpu", "BR104", 2, 32768, 100, 2))
	}
	v1 := func() *corev1.Node {
		return vendorNode("v1", "hami.io/node-va-register", vdevs("v1", "va", "VA1", 1, 16384, 100, 2))
	}
	runVendorCases(t, []vendorCase{
		{name: "Biren: a slot, no memory, no cores", nodes: []*corev1.Node{b1()},
			pod:  mkPod("ns", "p", vctr("c", brNum, 2)),
			fits: true, annos: map[string]string{brAlloc: "b1-gpu1,Biren,0,0:b1-gpu0,Biren,0,0:;", "hami.io/Biren-devices-to-allocate": "b1-gpu1,Biren,0,0:b1-gpu0,Biren,0,0:;"}},
		{name: "Biren: a used GPU is shared while it has slots", nodes: []*corev1.Node{b1()},
			pods: []*corev1.Pod{counted(mkPod("ns", "a", vctr("c", brNum, 2)), "b1", brAlloc, "b1-gpu0,Biren,0,0:b1-gpu1,Biren,0,0:;")},
			pod:  mkPod("ns", "p", vctr("c", brNum, 1)),
			fits: true, annos: map[string]string{brAlloc: "b1-gpu1,Biren,0,0:;"}},
		{name: "Biren: slots used up", nodes: []*corev1.Node{b1()},
			pods: []*corev1.Pod{counted(mkPod("ns", "a", vctr("c", brNum, 2)), "b1", brAlloc, "b1-gpu0,Biren,0,0:b1-gpu1,Biren,0,0:;"),
				counted(mkPod("ns", "b", vctr("c", brNum, 2)), "b1", brAlloc, "b1-gpu0,Biren,0,0:b1-gpu1,Biren,0,0:;")},
			pod: mkPod("ns", "p", vctr("c", brNum, 1)), code: CardTimeSlicingExhausted},
		{name: "Biren: UUID selector", nodes: []*corev1.Node{b1()},
			pod:  withAnno(mkPod("ns", "p", vctr("c", brNum, 1)), "birentech.com/use-gpuuuid", "b1-gpu0"),
			fits: true, annos: map[string]string{brAlloc: "b1-gpu0,Biren,0,0:;"}},
		{name: "Vastai: whole-card mode, a slot", nodes: []*corev1.Node{v1()},
			pod:  mkPod("ns", "p", vctr("c", vaNum, 1)),
			fits: true, annos: map[string]string{vaAlloc: "v1-va0,Vastai,0,0:;"}},
		{name: "Vastai: cordoned", nodes: []*corev1.Node{func() *corev1.Node {
			n := v1()
			n.Annotations[codec.NodeCordonAnnotation] = "v1-va0"
			return n
		}()},
			pod: mkPod("ns", "p", vctr("c", vaNum, 1)), code: CardCordoned},
	})
}
