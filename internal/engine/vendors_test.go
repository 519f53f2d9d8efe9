package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// vendorNode is a node registering devs in the register annotation key (no NVIDIA annotation).
var testTime = time.Unix(1700000000, 0)

func vendorNode(name, key string, devs []codec.DeviceInfo, annos ...string) *corev1.Node {
	n := mkNode(name, nil, annos...)
	n.Annotations[key] = codec.FormatNodeRegister(devs)
	return n
}

// vdevs is n devices of a type named <node>-<word><i>, with memory, cores and slots.
func vdevs(node, word, typ string, n int, mem, cores int64, slots int32) []codec.DeviceInfo {
	out := make([]codec.DeviceInfo, n)
	for i := range out {
		out[i] = codec.DeviceInfo{ID: fmt.Sprintf("%s-%s%d", node, word, i), Index: i, Count: slots, Devmem: mem, Devcore: cores, Type: typ, Health: true}
	}
	return out
}

// vctr is a container asking for resources by name (value < 0 leaves it out).
func vctr(name string, kv ...any) corev1.Container {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i].(string))] = *resource.NewQuantity(int64(kv[i+1].(int)), resource.DecimalSI)
	}
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Limits: l}}
}

const (
	dcuReg    = "hami.io/node-dcu-register"
	b3Reg     = "hami.io/node-register-Ascend910B3"
	c910Reg   = "hami.io/node-register-Ascend910C"
	dcuNum    = "hygon.com/dcunum"
	dcuMem    = "hygon.com/dcumem"
	dcuCores  = "hygon.com/dcucores"
	b3        = "huawei.com/Ascend910B3"
	b3Mem     = "huawei.com/Ascend910B3-memory"
	c910      = "huawei.com/Ascend910C"
	dcuAlloc  = "hami.io/dcu-devices-allocated"
	b3Alloc   = "hami.io/Ascend910B3-devices-allocated"
	c910Alloc = "hami.io/Ascend910C-devices-allocated"
)

// TestVendorGates are HAMi v2.10's Fit cases of pkg/device/hygon and pkg/device/ascend (device_test.go,
// device_910c_pairing_test.go) as whole-pod evaluations.
func TestVendorGates(t *testing.T) {
	dcu := func() *corev1.Node { return vendorNode("d1", dcuReg, vdevs("d1", "dcu", "DCU-Z100", 2, 32768, 100, 4)) }
	npu := func() *corev1.Node {
		return vendorNode("a1", b3Reg, vdevs("a1", "npu", "Ascend910B3", 2, 65536, 20, 4))
	}
	pair := func() *corev1.Node {
		return vendorNode("c1", c910Reg, vdevs("c1", "npu", "Ascend910C", 4, 65536, 20, 1))
	}
	placed := func(p *corev1.Pod, node, key, val string) *corev1.Pod {
		p.Annotations[codec.PodNodeAnnotation] = node
		p.Annotations[key] = val
		p.Spec.NodeName = node
		return p
	}
	mlu := func(label string) *corev1.Node {
		n := mkNode("m1", nil)
		n.Status.Capacity = corev1.ResourceList{"cambricon.com/mlu.smlu.vcore": *resource.NewQuantity(200, resource.DecimalSI),
			"cambricon.com/mlu.smlu.vmemory": *resource.NewQuantity(128, resource.DecimalSI)}
		if label != "" {
			n.Labels = map[string]string{"Model": label}
		}
		return n
	}
	const mluNum, mluMem = "cambricon.com/mlu", "cambricon.com/mlu.smlu.vmemory"
	tests := []vendorCase{
		{name: "DCU fits with HAMi's default 100% cores", nodes: []*corev1.Node{dcu()},
			pod:  mkPod("ns", "p", vctr("c", dcuNum, 1, dcuMem, 2000)),
			fits: true, annos: map[string]string{dcuAlloc: "d1-dcu1,DCU,2000,100:;", "hami.io/dcu-devices-to-allocate": "d1-dcu1,DCU,2000,100:;"},
			absent: []string{codec.PodAllocatedAnnotation}},
		{name: "DCU whole-device default leaves no cores for a second pod", nodes: []*corev1.Node{dcu()},
			pods: []*corev1.Pod{placed(mkPod("ns", "a", vctr("c", dcuNum, 1)), "d1", dcuAlloc, "d1-dcu0,DCU,32768,100:;"),
				placed(mkPod("ns", "b", vctr("c", dcuNum, 1)), "d1", dcuAlloc, "d1-dcu1,DCU,32768,100:;")},
			pod: mkPod("ns", "p", vctr("c", dcuNum, 1, dcuMem, 1000)), code: CardInsufficientMemory},
		{name: "DCU cores exhausted", nodes: []*corev1.Node{dcu()},
			pods: []*corev1.Pod{placed(mkPod("ns", "a", vctr("c", dcuNum, 2, dcuMem, 1000)), "d1", dcuAlloc, "d1-dcu0,DCU,1000,100:d1-dcu1,DCU,1000,100:;")},
			pod:  mkPod("ns", "p", vctr("c", dcuNum, 1, dcuMem, 1000, dcuCores, 30)), code: CardInsufficientCore},
		{name: "DCU type selector", nodes: []*corev1.Node{dcu()},
			pod: func() *corev1.Pod {
				p := mkPod("ns", "p", vctr("c", dcuNum, 1, dcuMem, 1000, dcuCores, 10))
				p.Annotations["hygon.com/use-dcutype"] = "K100"
				return p
			}(), code: CardTypeMismatch},
		{name: "DCU UUID selector", nodes: []*corev1.Node{dcu()},
			pod: func() *corev1.Pod {
				p := mkPod("ns", "p", vctr("c", dcuNum, 1, dcuMem, 1000, dcuCores, 10))
				p.Annotations["hygon.com/use-gpuuuid"] = "d1-dcu0"
				return p
			}(), fits: true, annos: map[string]string{dcuAlloc: "d1-dcu0,DCU,1000,10:;"}},
		// CheckType and CheckUUID (pkg/device/devices.go:693-737): the use and no-use lists apply together.
		{name: "DCU type in the use and the no-use lists", nodes: []*corev1.Node{dcu()},
			pod: func() *corev1.Pod {
				p := mkPod("ns", "p", vctr("c", dcuNum, 1, dcuMem, 1000, dcuCores, 10))
				p.Annotations["hygon.com/use-dcutype"] = "Z100"
				p.Annotations["hygon.com/nouse-dcutype"] = "Z100"
				return p
			}(), code: CardTypeMismatch},
		{name: "DCU type in the use list, another in the no-use list", nodes: []*corev1.Node{dcu()},
			pod: func() *corev1.Pod {
				p := mkPod("ns", "p", vctr("c", dcuNum, 1, dcuMem, 1000, dcuCores, 10))
				p.Annotations["hygon.com/use-dcutype"] = "Z100"
				p.Annotations["hygon.com/nouse-dcutype"] = "K100"
				return p
			}(), fits: true},
		{name: "DCU UUID in the use and the no-use lists", nodes: []*corev1.Node{dcu()},
			pod: func() *corev1.Pod {
				p := mkPod("ns", "p", vctr("c", dcuNum, 1, dcuMem, 1000, dcuCores, 10))
				p.Annotations["hygon.com/use-gpuuuid"] = "d1-dcu0,d1-dcu1"
				p.Annotations["hygon.com/nouse-gpuuuid"] = "d1-dcu1"
				return p
			}(), fits: true, annos: map[string]string{dcuAlloc: "d1-dcu0,DCU,1000,10:;"}},
		{name: "DCU UUIDs all in the no-use list too", nodes: []*corev1.Node{dcu()},
			pod: func() *corev1.Pod {
				p := mkPod("ns", "p", vctr("c", dcuNum, 1, dcuMem, 1000, dcuCores, 10))
				p.Annotations["hygon.com/use-gpuuuid"] = "d1-dcu0"
				p.Annotations["hygon.com/nouse-gpuuuid"] = "d1-dcu0"
				return p
			}(), code: CardUUIDMismatch},
		{name: "NVIDIA pod on a DCU-only node: no GPU there", nodes: []*corev1.Node{dcu()},
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), code: NodeInsufficientDevice},
		{name: "DCU pod on an NVIDIA node", nodes: []*corev1.Node{mkNode("n1", gpus("n1", 2, 16384))},
			pod: mkPod("ns", "p", vctr("c", dcuNum, 1, dcuMem, 1000)), code: NodeInsufficientDevice},
		{name: "Ascend memory rounds up to the vNPU template", nodes: []*corev1.Node{npu()},
			pod:  mkPod("ns", "p", vctr("c", b3, 1, b3Mem, 3000)),
			fits: true, annos: map[string]string{b3Alloc: "a1-npu1,Ascend910B3,16384,0:;",
				"huawei.com/Ascend910B3": `[{"UUID":"a1-npu1","temp":"vir05_1c_16g","memory":16384}]`}},
		{name: "Ascend without memory takes the whole NPU", nodes: []*corev1.Node{npu()},
			pod:  mkPod("ns", "p", vctr("c", b3, 1)),
			fits: true, annos: map[string]string{b3Alloc: "a1-npu1,Ascend910B3,65536,0:;", "huawei.com/Ascend910B3": `[{"UUID":"a1-npu1","memory":65536}]`}},
		{name: "Ascend template no longer fits beside a 32 GiB slice", nodes: []*corev1.Node{vendorNode("a1", b3Reg, vdevs("a1", "npu", "Ascend910B3", 1, 65536, 20, 4))},
			pods: []*corev1.Pod{placed(mkPod("ns", "a", vctr("c", b3, 1, b3Mem, 40000)), "a1", b3Alloc, "a1-npu0,Ascend910B3,49152,0:;")},
			pod:  mkPod("ns", "p", vctr("c", b3, 1, b3Mem, 17000)), code: CardInsufficientMemory},
		{name: "910C one NPU is rounded up to a module of two", nodes: []*corev1.Node{pair()},
			pod:  mkPod("ns", "p", vctr("c", c910, 1)),
			fits: true, annos: map[string]string{c910Alloc: "c1-npu3,Ascend910C,65536,0:c1-npu2,Ascend910C,65536,0:;"}},
		{name: "910C takes whole modules only", nodes: []*corev1.Node{pair()},
			pods: []*corev1.Pod{placed(mkPod("ns", "a", vctr("c", c910, 1)), "c1", c910Alloc, "c1-npu1,Ascend910C,65536,0:;"),
				placed(mkPod("ns", "b", vctr("c", c910, 1)), "c1", c910Alloc, "c1-npu2,Ascend910C,65536,0:;")},
			pod: mkPod("ns", "p", vctr("c", c910, 2)), code: CardTimeSlicingExhausted, gpuDetail: "2 fit, but only 0 in whole modules of 2"},
		{name: "910C free module is found past a broken one", nodes: []*corev1.Node{pair()},
			pods: []*corev1.Pod{placed(mkPod("ns", "a", vctr("c", c910, 1)), "c1", c910Alloc, "c1-npu3,Ascend910C,65536,0:;")},
			pod:  mkPod("ns", "p", vctr("c", c910, 2)),
			fits: true, annos: map[string]string{c910Alloc: "c1-npu1,Ascend910C,65536,0:c1-npu0,Ascend910C,65536,0:;"}},
	}
	tests = append(tests, []vendorCase{
		{name: "MLUs from the node's capacity, memory in 256 MiB units", nodes: []*corev1.Node{mlu("MLU370-X8")},
			pod:  mkPod("ns", "p", vctr("c", mluNum, 1, mluMem, 16)),
			fits: true, annos: map[string]string{"hami.io/cambricon-mlu-devices-allocated": "m1-cambricon-mlu-1,MLU,4096,100:;",
				"CAMBRICON_DSMLU_PROFILE": "1_100_16", "CAMBRICON_DSMLU_ASSIGNED": "false"}},
		{name: "MLU quota is checked in Fit", nodes: []*corev1.Node{mlu("MLU370-X8")},
			quota: corev1.ResourceList{"limits." + mluMem: *resource.NewQuantity(8, resource.DecimalSI)},
			pod:   mkPod("ns", "p", vctr("c", mluNum, 1, mluMem, 16)), code: ResourceQuotaNotFit},
		// HAMi v2.10.0's Cambricon checkType accepts every MLU (pkg/device/cambricon/device.go:243-248).
		{name: "MLU of no known model ignores a type selector", nodes: []*corev1.Node{mlu("")},
			pod: func() *corev1.Pod {
				p := mkPod("ns", "p", vctr("c", mluNum, 1, mluMem, 16))
				p.Annotations["cambricon.com/nouse-mlutype"] = "MLU290"
				return p
			}(), fits: true},
		{name: "MLU ignores a use-mlutype it does not match", nodes: []*corev1.Node{mlu("MLU370-X4")},
			pod: func() *corev1.Pod {
				p := mkPod("ns", "p", vctr("c", mluNum, 1, mluMem, 16))
				p.Annotations["cambricon.com/use-mlutype"] = "X8"
				p.Annotations["cambricon.com/nouse-mlutype"] = "MLU370"
				return p
			}(), fits: true},
		// CheckUUID (pkg/device/devices.go:693-713): an MLU in both lists is refused.
		{name: "MLU in the use and the no-use UUID lists", nodes: []*corev1.Node{mlu("MLU370-X8")},
			pod: func() *corev1.Pod {
				p := mkPod("ns", "p", vctr("c", mluNum, 1, mluMem, 16))
				p.Annotations["cambricon.com/use-gpuuuid"] = "m1-cambricon-mlu-0"
				p.Annotations["cambricon.com/nouse-gpuuuid"] = "m1-cambricon-mlu-0"
				return p
			}(), code: CardUUIDMismatch},
		{name: "Iluvatar memory in 256 MiB units", nodes: []*corev1.Node{vendorNode("i1", "hami.io/node-MR-V100-register", vdevs("i1", "gpu", "MR-V100", 1, 32768, 100, 8))},
			pod:  mkPod("ns", "p", vctr("c", "iluvatar.ai/MR-V100-vgpu", 1, "iluvatar.ai/MR-V100.vMem", 4, "iluvatar.ai/MR-V100.vCore", 30)),
			fits: true, annos: map[string]string{"hami.io/MR-V100-devices-allocated": "i1-gpu0,MR-V100,1024,30:;"}},
		{name: "MetaX GPUs from the node's capacity, taken whole", nodes: []*corev1.Node{func() *corev1.Node {
			n := mkNode("x1", nil)
			n.Status.Capacity = corev1.ResourceList{"metax-tech.com/gpu": *resource.NewQuantity(2, resource.DecimalSI)}
			return n
		}()},
			pods: []*corev1.Pod{func() *corev1.Pod {
				p := mkPod("ns", "a", vctr("c", "metax-tech.com/gpu", 1))
				p.Annotations[codec.PodNodeAnnotation] = "x1"
				p.Annotations["hami.io/metax-gpu-devices-allocated"] = "x1-metax-1,Metax-GPU,65536,100:;"
				return p
			}()},
			pod:  mkPod("ns", "p", vctr("c", "metax-tech.com/gpu", 1)),
			fits: true, annos: map[string]string{"hami.io/metax-gpu-devices-allocated": "x1-metax-0,Metax-GPU,65536,100:;"}},
	}...)
	runVendorCases(t, tests)
}

// TestVendorRequest reads the requests HAMi's webhooks and GenerateResourceRequests give.
func TestVendorRequest(t *testing.T) {
	cfg := DefaultConfig()
	tests := []struct {
		name    string
		c       corev1.Container
		annos   map[string]string
		want    string // "count mem% cores device template"
		problem string
	}{
		{"dcu defaults", vctr("c", dcuNum, 2), nil, "2 0/100 100 DCU ", ""},
		{"dcu memory and cores", vctr("c", dcuNum, 1, dcuMem, 3000, dcuCores, 40), nil, "1 3000/0 40 DCU ", ""},
		{"dcu cores above 100", vctr("c", dcuNum, 1, dcuCores, 150), nil, "1 0/100 100 DCU ", "above 100"},
		{"ascend template", vctr("c", b3, 1, b3Mem, 16385), nil, "1 32768/0 0 Ascend910B3 vir10_3c_32g", ""},
		{"ascend above every template", vctr("c", b3, 1, b3Mem, 40000), nil, "1 65536/0 0 Ascend910B3 ", ""},
		{"ascend hami-core keeps memory", vctr("c", b3, 1, b3Mem, 3000), map[string]string{"huawei.com/vnpu-mode": "hami-core"}, "1 3000/0 0 Ascend910B3 ", ""},
		{"ascend over capacity", vctr("c", b3, 1, b3Mem, 70000), nil, "1 70000/0 0 Ascend910B3 ", "HAMi's webhook refuses"},
		{"ascend vNPU on two devices", vctr("c", b3, 2, b3Mem, 1000), nil, "2 16384/0 0 Ascend910B3 vir05_1c_16g", "vNPU not supported for multiple devices"},
		{"910C odd count", vctr("c", c910, 3), nil, "3 65536/0 0 Ascend910C ", "must be 1 or 2*n, got 3"},
		{"two types in one container", vctr("c", "nvidia.com/gpu", 1, dcuNum, 1), nil, "1 0/100 0  ", "two device types"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mkPod("ns", "p", tc.c)
			for k, v := range tc.annos {
				p.Annotations[k] = v
			}
			req, probs := ParseRequest(p, cfg)
			if len(req.Containers) != 1 {
				t.Fatalf("containers %+v", req.Containers)
			}
			r := req.Containers[0]
			got := fmt.Sprintf("%d %d/%d %d %s %s", r.Count, r.MemoryMiB, r.MemoryPercent, r.Cores, r.Device, r.Template)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			var msgs []string
			for _, pr := range probs {
				msgs = append(msgs, pr.Message)
			}
			joined := strings.Join(msgs, "; ")
			if tc.problem == "" && joined != "" || tc.problem != "" && !strings.Contains(joined, tc.problem) {
				t.Errorf("problems %q, want %q", joined, tc.problem)
			}
		})
	}
}

// TestVendorUsageAndQuota: counted DCU pods use their DCUs and charge limits.hygon.com/dcumem, which is shown
// and never gates (HAMi's DCU Fit does not check quota).
func TestVendorUsageAndQuota(t *testing.T) {
	c := NewCluster(DefaultConfig())
	c.SetNode(vendorNode("d1", dcuReg, vdevs("d1", "dcu", "DCU-Z100", 1, 32768, 100, 4)))
	p := mkPod("team", "a", vctr("c", dcuNum, 1, dcuMem, 8000, dcuCores, 25))
	p.Annotations[codec.PodNodeAnnotation] = "d1"
	p.Annotations[dcuAlloc] = "d1-dcu0,DCU,8000,25:;"
	if probs := c.SetPod(p); len(probs) > 0 {
		t.Fatal(probs)
	}
	c.SetQuota(&corev1.ResourceQuota{ObjectMeta: mkPod("team", "q").ObjectMeta,
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"limits." + dcuMem: *resource.NewQuantity(10000, resource.DecimalSI)}}})
	g := c.Node("d1").GPUByUUID("d1-dcu0")
	if g == nil || g.UsedMem != 8000 || g.UsedCores != 25 || g.UsedSlots != 1 || g.Device != "DCU" {
		t.Fatalf("DCU usage %+v", g)
	}
	q := c.Quota("team")
	if len(q.Devices) != 1 || q.Devices[0].Resource != "limits."+dcuMem || q.Devices[0].Used != 8000 || q.Devices[0].Limit != 10000 {
		t.Fatalf("quota %+v", q)
	}
	v := c.Evaluate(mkPod("team", "b", vctr("c", dcuNum, 1, dcuMem, 4000, dcuCores, 25)), EvalOptions{})
	if !v.Fits {
		t.Fatalf("HAMi's DCU Fit does not gate the quota: %s", v.Summary)
	}
	c.RemovePod("team", "a")
	if q := c.Quota("team"); q.Devices[0].Used != 0 || c.Node("d1").GPUs[0].UsedMem != 0 {
		t.Fatalf("after removal %+v %+v", q, c.Node("d1").GPUs[0])
	}
}

// TestVendorRegisterProblems: a broken vendor annotation names its key and leaves the node's other types.
func TestVendorRegisterProblems(t *testing.T) {
	c := NewCluster(DefaultConfig())
	n := mkNode("m1", gpus("m1", 1, 16384))
	n.Annotations[dcuReg] = `[{"id":"x","devmem":-1}]`
	probs := c.SetNode(n)
	if len(probs) != 1 || !strings.Contains(probs[0].Field, dcuReg) || !strings.Contains(probs[0].Message, dcuReg) {
		t.Fatalf("problems %+v", probs)
	}
	if node := c.Node("m1"); !node.Registered || len(node.GPUs) != 1 {
		t.Fatalf("node %+v", node)
	}
	// A mixed node: one GPU and two DCUs, each kind walked on its own.
	n.Annotations[dcuReg] = codec.FormatNodeRegister(vdevs("m1", "dcu", "DCU", 2, 16384, 100, 4))
	c.SetNode(n)
	if node := c.Node("m1"); node.DevicesOf(0) != 1 || node.DevicesOf(1) != 2 {
		t.Fatalf("kinds %d %d", node.DevicesOf(0), node.DevicesOf(1))
	}
	v := c.Evaluate(mkPod("ns", "p", tb.MakeContainer("c").GPUs(2).GPUMem(1000).Obj()), EvalOptions{})
	if v.Fits || v.Reasons[0].Code != NodeInsufficientDevice {
		t.Fatalf("two GPUs on a node with one GPU and two DCUs: %v", v.Reasons)
	}
	v = c.Evaluate(mkPod("ns", "p", vctr("c", dcuNum, 2, dcuMem, 1000)), EvalOptions{})
	if !v.Fits {
		t.Fatalf("two DCUs: %s", v.Summary)
	}
	b, _ := json.Marshal(v.Placement.Containers)
	if !strings.Contains(string(b), `"device":"DCU"`) {
		t.Fatalf("placement %s", b)
	}
}

// Test910CPairing is HAMi's own 910C pairing cases (pkg/device/ascend/device_910c_pairing_test.go): a node's
// registered NPU indices, a request, and whether whole two-NPU modules can fill it.
func Test910CPairing(t *testing.T) {
	tests := []struct {
		name    string
		indices []int
		count   int
		fits    bool
		want    string // the device list when it fits
	}{
		{"4 asked, one full module and three halves (FitPartialAllocationBug)", []int{0, 1, 2, 4, 6}, 4, false, ""},
		{"2 asked, two halves of different modules (FitExactCountBypassBug)", []int{0, 2}, 2, false, ""},
		{"2 asked, one full module (FitFullPairSucceeds)", []int{0, 1}, 2, true, "c-1,Ascend910C,65536,0:c-0,Ascend910C,65536,0:;"},
		{"4 asked, four halves (NoFullPairsReturnsEmpty)", []int{0, 2, 4, 6}, 4, false, ""},
		{"4 asked, two full modules among halves", []int{0, 1, 3, 4, 5, 6}, 4, true, "c-5,Ascend910C,65536,0:c-4,Ascend910C,65536,0:c-1,Ascend910C,65536,0:c-0,Ascend910C,65536,0:;"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			devs := make([]codec.DeviceInfo, len(tc.indices))
			for i, idx := range tc.indices {
				devs[i] = codec.DeviceInfo{ID: fmt.Sprintf("c-%d", idx), Index: idx, Count: 1, Devmem: 65536, Devcore: 20, Type: "Ascend910C", Health: true}
			}
			c := NewCluster(DefaultConfig())
			c.SetNode(vendorNode("c1", c910Reg, devs))
			v := c.Evaluate(mkPod("ns", "p", vctr("c", c910, tc.count)), EvalOptions{})
			if v.Fits != tc.fits {
				t.Fatalf("fits = %v, want %v: %s", v.Fits, tc.fits, v.Summary)
			}
			if tc.fits {
				if got := v.Placement.Annotations(testTime)[c910Alloc]; got != tc.want {
					t.Errorf("devices %q, want %q", got, tc.want)
				}
			}
		})
	}
}

// TestUnregisteredSpeaksOfThePodsType: a node with no devices is unregistered for every pod, but the detail
// names the annotation of the type the pod asks for.
func TestUnregisteredSpeaksOfThePodsType(t *testing.T) {
	c := newTestCluster([]*corev1.Node{mkNode("cpu", nil)}, nil)
	for _, tc := range []struct {
		pod  *corev1.Pod
		want string
	}{
		{mkPod("ns", "gpu", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), "no hami.io/node-nvidia-register annotation: the node component has not registered GPUs"},
		{mkPod("ns", "dcu", vctr("c", dcuNum, 1, dcuMem, 1000)), "no hami.io/node-dcu-register annotation: the device plugin has not registered DCUs"},
		{mkPod("ns", "npu", vctr("c", b3, 1)), "no hami.io/node-register-Ascend910B3 annotation: the device plugin has not registered NPUs"},
	} {
		v := c.Evaluate(tc.pod, EvalOptions{Now: testTime})
		if len(v.Nodes) != 1 || v.Nodes[0].Check == nil || v.Nodes[0].Code != NodeUnregistered || v.Nodes[0].Check.Detail != tc.want {
			t.Errorf("%s: node status %+v, want NodeUnregistered %q", tc.pod.Name, v.Nodes, tc.want)
		}
	}
}

// TestVendorFilterSentences: the explanation names another type's selector annotations as the pod wrote them.
func TestVendorFilterSentences(t *testing.T) {
	c := newTestCluster([]*corev1.Node{vendorNode("d1", dcuReg, vdevs("d1", "dcu", "DCU-Z100", 2, 32768, 100, 4))}, nil)
	for anno, want := range map[string]string{
		"hygon.com/use-dcutype": "no DCU here passes hygon.com/use-dcutype=K100; types seen: DCU-Z100",
		"hygon.com/use-gpuuuid": "2 DCU(s) are excluded by the UUID filter (hygon.com/use-gpuuuid=K100)",
	} {
		p := withAnno(mkPod("ns", "p", vctr("c", dcuNum, 1, dcuMem, 1000)), anno, "K100")
		v := c.Evaluate(p, EvalOptions{Now: testTime})
		if !strings.Contains(strings.Join(v.Explanation, "\n"), want) {
			t.Errorf("%s: explanation %q, want a line with %q", anno, v.Explanation, want)
		}
	}
}
