package kunlun_test

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/kunlun"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

const (
	klNum, xpuNum, xpuMem = "kunlunxin.com/xpu", "kunlunxin.com/vxpu", "kunlunxin.com/vxpu-memory"
	klAlloc, xpuAlloc     = "hami.io/kunlun-allocated", "hami.io/xpu-devices-allocated"
	xpuReg                = "hami.io/node-register-xpu"
)

// TestKunlunGates are HAMi v2.10's Kunlun cases (pkg/device/kunlun/device_test.go, vdevice_test.go and the
// topology cases of topo_test.go) as whole-pod evaluations: k1 has 8 whole XPUs from its capacity, x1 8
// registered vXPUs.
func TestKunlunGates(t *testing.T) {
	k1 := func() *corev1.Node { return ft.CapNode("k1", klNum, 8) }
	x1 := func(n int) *corev1.Node {
		return ft.RegNode("x1", xpuReg, ft.Devs("x1", "xpu", "XPU", n, 98304, 100, 4))
	}
	used := func(idx ...int) []*corev1.Pod {
		var out []*corev1.Pod
		for _, i := range idx {
			out = append(out, ft.Counted(ft.MkPod("ns", "u"+strconv.Itoa(i), ft.Ctr("c", klNum, 1)), "k1", klAlloc, "k1-kunlun-"+strconv.Itoa(i)+",kunlun,98304,100:;"))
		}
		return out
	}
	ft.Run(t, ft.Kinds(t, kunlun.Family{}), []ft.Case{
		{Name: "two whole XPUs from a free wing", Node: k1(),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", klNum, 2)),
			Want: [][]string{{"k1-kunlun-0", "k1-kunlun-1"}}, Annotations: map[string]string{klAlloc: "k1-kunlun-0,kunlun,98304,100:k1-kunlun-1,kunlun,98304,100:;", "BAIDU_COM_DEVICE_IDX": "0,1"},
			Absent: []string{"hami.io/kunlun-devices-to-allocate", codec.PodAllocatedAnnotation}},
		{Name: "one XPU goes where a wing has one free", Node: k1(), Counted: used(0, 1, 2, 4),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", klNum, 1)),
			Want: [][]string{{"k1-kunlun-3"}}, Annotations: map[string]string{klAlloc: "k1-kunlun-3,kunlun,98304,100:;", "BAIDU_COM_DEVICE_IDX": "3"}},
		{Name: "two XPUs across the wings take a cross-linked pair", Node: k1(), Counted: used(1, 2, 3, 5, 6, 7),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", klNum, 2)),
			Want: [][]string{{"k1-kunlun-0", "k1-kunlun-4"}}, Annotations: map[string]string{klAlloc: "k1-kunlun-0,kunlun,98304,100:k1-kunlun-4,kunlun,98304,100:;"}},
		// By index 0 and 5 are not linked, but at v2.10.0 graghSelect counts its wings by position in the
		// binpack-sorted list, where the two free XPUs come first: one "wing" holds both, and HAMi places them
		// (kunlun/topo.go:226-236, devicepick 208-220; class kunlun/kunlun-wings).
		{Name: "two XPUs not linked by index share a wing by position", Node: k1(), Counted: used(1, 2, 3, 4, 6, 7),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", klNum, 2)),
			Want: [][]string{{"k1-kunlun-0", "k1-kunlun-5"}}, Annotations: map[string]string{"BAIDU_COM_DEVICE_IDX": "0,5"}},
		{Name: "three XPUs is not a count Kunlun places", Node: k1(),
			Pod: ft.MkPod("ns", "p", ft.Ctr("c", klNum, 3)), Code: engine.NumaNotFit, Explains: "no 3 of them"},
		// HAMi's Kunlun Fit says only that graghSelect found no set (device.go:201-210): 1/1 NumaNotFit.
		{Name: "a used XPU is not shared", Node: ft.CapNode("k1", klNum, 1), Counted: used(0),
			Pod: ft.MkPod("ns", "p", ft.Ctr("c", klNum, 1)), Code: engine.NumaNotFit},
		{Name: "whole XPUs refused by UUID say CardUuidMismatch", Node: ft.CapNode("k1", klNum, 2),
			Pod:  ft.WithAnno(ft.MkPod("ns", "p", ft.Ctr("c", klNum, 1)), "baidu.com/nouse-gpuuuid", "k1-kunlun-0,k1-kunlun-1"),
			Code: engine.CardUUIDMismatch},
		{Name: "vXPU memory rounds up to a quarter XPU, cores in proportion", Node: x1(8),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", xpuNum, 1, xpuMem, 20000)),
			Want: [][]string{{"x1-xpu0"}}, Annotations: map[string]string{xpuAlloc: "x1-xpu0,XPU,24576,25:;", "hami.io/xpu-devices-to-allocate": "x1-xpu0,XPU,24576,25:;"}},
		{Name: "vXPU without memory takes the whole XPU", Node: x1(8),
			Pod:  ft.MkPod("ns", "p", ft.Ctr("c", xpuNum, 1)),
			Want: [][]string{{"x1-xpu0"}}, Annotations: map[string]string{xpuAlloc: "x1-xpu0,XPU,98304,100:;"}},
		{Name: "FitVXPU: an XPU cut in quarters takes only quarters", Node: x1(1),
			Counted: []*corev1.Pod{ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", xpuNum, 1, xpuMem, 20000)), "x1", xpuAlloc, "x1-xpu0,XPU,24576,25:;")},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", xpuNum, 1, xpuMem, 40000)), Code: engine.NumaNotFit,
			Detail: "cut in 24576 MiB slices"},
		// vdevice.go:257-266: with mutex, the used XPUs that FitVXPU would take are the reason.
		{Name: "vXPU mutex: a used XPU is ExclusiveDeviceAllocateConflict", Node: x1(1),
			Counted: []*corev1.Pod{ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", xpuNum, 1, xpuMem, 20000)), "x1", xpuAlloc, "x1-xpu0,XPU,24576,25:;")},
			Pod:     ft.WithAnno(ft.MkPod("ns", "p", ft.Ctr("c", xpuNum, 1, xpuMem, 1000)), "hami.io/gpu-scheduler-policy", "mutex"),
			Code:    engine.ExclusiveDeviceAllocateConflict},
		{Name: "FitVXPU: a second quarter fits", Node: x1(1),
			Counted: []*corev1.Pod{ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", xpuNum, 1, xpuMem, 20000)), "x1", xpuAlloc, "x1-xpu0,XPU,24576,25:;")},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", xpuNum, 1, xpuMem, 1000)),
			Want:    [][]string{{"x1-xpu0"}}, Annotations: map[string]string{xpuAlloc: "x1-xpu0,XPU,24576,25:;"}},
		{Name: "vXPU UUID selector", Node: x1(2),
			Pod:  ft.WithAnno(ft.MkPod("ns", "p", ft.Ctr("c", xpuNum, 1, xpuMem, 20000)), "hami.io/no-use-xpu-uuid", "x1-xpu0,x1-xpu1"),
			Code: engine.CardUUIDMismatch},
	})
}

// TestKunlunReasons: HAMi v2.10.0's Kunlun Fit reports only graghSelect's failure, not each XPU's own:
// the UUID mismatches, else 1/N NumaNotFit (device.go:201-210); the vXPU Fit first the used XPUs under
// mutex (vdevice.go:257-275).
func TestKunlunReasons(t *testing.T) {
	k := func(n int) *corev1.Node { return ft.CapNode("n1", klNum, n) }
	x := func(n int) *corev1.Node {
		return ft.RegNode("n1", xpuReg, ft.Devs("n1", "xpu", "XPU", n, 98304, 100, 4))
	}
	usedK := ft.Counted(ft.MkPod("ns", "u", ft.Ctr("c", klNum, 1)), "n1", klAlloc, "n1-kunlun-0,kunlun,98304,100:;")
	usedX := ft.Counted(ft.MkPod("ns", "a", ft.Ctr("c", xpuNum, 1, xpuMem, 20000)), "n1", xpuAlloc, "n1-xpu0,XPU,24576,25:;")
	ft.Run(t, ft.Kinds(t, kunlun.Family{}), []ft.Case{
		{Name: "a used XPU: 1/1 NumaNotFit", Node: k(1), Counted: []*corev1.Pod{usedK},
			Pod: ft.MkPod("ns", "p", ft.Ctr("c", klNum, 1)), Reason: "1/1 NumaNotFit"},
		{Name: "three XPUs: 1/4 NumaNotFit", Node: k(4),
			Pod: ft.MkPod("ns", "p", ft.Ctr("c", klNum, 3)), Reason: "1/4 NumaNotFit"},
		{Name: "whole XPUs refused by UUID", Node: k(2),
			Pod:    ft.WithAnno(ft.MkPod("ns", "p", ft.Ctr("c", klNum, 1)), "baidu.com/nouse-gpuuuid", "n1-kunlun-0,n1-kunlun-1"),
			Reason: "2/2 CardUuidMismatch"},
		{Name: "vXPU cut in other slices: 1/1 NumaNotFit", Node: x(1), Counted: []*corev1.Pod{usedX},
			Pod: ft.MkPod("ns", "p", ft.Ctr("c", xpuNum, 1, xpuMem, 40000)), Reason: "1/1 NumaNotFit"},
		{Name: "vXPU mutex: the used XPU", Node: x(1), Counted: []*corev1.Pod{usedX},
			Pod:    ft.WithAnno(ft.MkPod("ns", "p", ft.Ctr("c", xpuNum, 1, xpuMem, 1000)), "hami.io/gpu-scheduler-policy", "mutex"),
			Reason: "1/1 ExclusiveDeviceAllocateConflict"},
	})
}

// TestKunlunNodeScore: HAMi adds the whole-XPU ScoreNode to a fitting node's score (node_policy.go:67-95):
// two XPUs of an unused node break one wing more (countbubble 1 to 2), 1000 on top of the default score.
func TestKunlunNodeScore(t *testing.T) {
	w := ft.NewWorld(t, ft.Kinds(t, kunlun.Family{}), []*corev1.Node{ft.CapNode("n1", klNum, 8)})
	v := w.Evaluate(ft.MkPod("ns", "p", ft.Ctr("c", klNum, 2)))
	if ns := v.NodeStatus("n1"); !v.Fits || ns.Score < 1000 || ns.Score > 1030 {
		t.Fatalf("fits %v, score %v: want 1000 plus the default score (0..30)", v.Fits, ns.Score)
	}
}

// HAMi v2.10.0 sorts the vXPUs with the container's own request in their score, because the vXPU CommonWord
// ("XPU") is the registered type (ComputeScore, pkg/scheduler/policy/gpu_policy.go:199-214): one slot more
// weighs more on an XPU of fewer slots, which moves it in the spread order, and graghSelect's wings are
// positions in that order (topo.go:222-268). Seed 21 of the oracle's kunlun-vxpu batch: XPUs 0, 6 and 7 have 2
// slots, the others 4; 2 and 5 are unhealthy.
func TestVXPUOrderCountsTheRequest(t *testing.T) {
	var devs []codec.DeviceInfo
	for i, slots := range []int32{2, 4, 4, 4, 4, 4, 2, 2} {
		devs = append(devs, codec.DeviceInfo{ID: "XPU-" + strconv.Itoa(i), Index: i, Count: slots, Devmem: 98304, Devcore: 100,
			Type: "XPU", Numa: i / 4, Health: i != 2 && i != 5})
	}
	node := ft.Node("n1", map[string]string{xpuReg: ft.Register(devs...)}, nil)
	ft.Run(t, ft.Kinds(t, kunlun.Family{}), []ft.Case{
		{Name: "two whole vXPUs: the right wing of the spread order", Node: node,
			Pod: ft.Pod("p", nil, map[string]string{xpuNum: "2", xpuMem: "98304"}), Want: [][]string{{"XPU-3", "XPU-4"}}},
	})
}

// HAMi v2.10.0's Kunlun Fit checks the UUID selectors before anything else (pkg/device/kunlun/vdevice.go:
// 247-256, device.go:190-198), so an unhealthy XPU the selectors refuse counts as a CardUuidMismatch too.
// Seed 147 of the oracle's kunlun-vxpu batch.
func TestKunlunUUIDBeforeHealth(t *testing.T) {
	var devs []codec.DeviceInfo
	for i, slots := range []int32{2, 4, 4, 2, 4, 4, 2, 4} {
		devs = append(devs, codec.DeviceInfo{ID: "XPU-" + strconv.Itoa(i), Index: i, Count: slots, Devmem: 98304, Devcore: 100,
			Type: "XPU", Numa: i / 4, Health: i != 6})
	}
	node := ft.Node("n1", map[string]string{xpuReg: ft.Register(devs...)}, nil)
	ft.Run(t, ft.Kinds(t, kunlun.Family{}), []ft.Case{
		{Name: "the unhealthy XPU 6 is refused by the selectors too", Node: node,
			Pod:    ft.Pod("p", map[string]string{"hami.io/use-xpu-uuid": "XPU-2,XPU-0"}, map[string]string{xpuNum: "4", xpuMem: "30k"}),
			Reason: "6/8 CardUuidMismatch"},
	})
}

// HAMi v2.10.0's vXPU Fit never compares an XPU's users with its registered count (FitVXPU checks health,
// memory and the equal share, pkg/device/kunlun/vdevice.go:294-306): an XPU registered with 2 slots and used
// twice still takes a third request of its slice size. Seeds 22 (devices) and 105 (feasible set) of the
// oracle's kunlun-vxpu batch.
func TestVXPUCountsNoSlots(t *testing.T) {
	devs := []codec.DeviceInfo{
		{ID: "XPU-0", Index: 0, Count: 2, Devmem: 98304, Devcore: 100, Type: "XPU", Health: true},
		{ID: "XPU-1", Index: 1, Count: 2, Devmem: 98304, Devcore: 100, Type: "XPU", Numa: 1, Health: true},
	}
	node := ft.Node("n1", map[string]string{xpuReg: ft.Register(devs...)}, nil)
	used := func(name, uuid string) *corev1.Pod {
		return ft.Counted(ft.Pod(name, nil, map[string]string{xpuNum: "1", xpuMem: "24576"}), "n1", "hami.io/xpu-devices-allocated", uuid+",XPU,24576,0:;")
	}
	ft.Run(t, ft.Kinds(t, kunlun.Family{}), []ft.Case{
		{Name: "both XPUs, one of them used as often as it has slots, in spread order (devicepick)", Node: node,
			Counted: []*corev1.Pod{used("a", "XPU-1"), used("b", "XPU-0"), used("c", "XPU-1")},
			Pod:     ft.Pod("p", nil, map[string]string{xpuNum: "2", xpuMem: "24576"}), Want: [][]string{{"XPU-1", "XPU-0"}}},
		{Name: "the full XPU is the fuller, first in spread's order, where graghSelect's devicepick starts", Node: node,
			Counted: []*corev1.Pod{used("a", "XPU-1"), used("c", "XPU-1")},
			Pod:     ft.Pod("p", nil, map[string]string{xpuNum: "1", xpuMem: "24576"}), Want: [][]string{{"XPU-1"}}},
		{Name: "the full XPU alone still takes its slice size", Node: node,
			Counted: []*corev1.Pod{used("a", "XPU-1"), used("c", "XPU-1")},
			Pod:     ft.Pod("p", map[string]string{"hami.io/use-xpu-uuid": "XPU-1"}, map[string]string{xpuNum: "1", xpuMem: "24576"}), Want: [][]string{{"XPU-1"}}},
	})
}
