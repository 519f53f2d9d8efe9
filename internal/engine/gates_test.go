package engine

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// TestGates drives every gate and reason code through one node and checks the node's code, HAMi's
// FailedNodes text and the numbers the gate reports.
func TestGates(t *testing.T) {
	unhealthy := gpus("n1", 2, 16384)
	unhealthy[0].Health = false
	numa := gpus("n1", 4, 16384)
	numa[0].Numa, numa[1].Numa, numa[2].Numa, numa[3].Numa = 0, 1, 1, 0
	mig := []codec.DeviceInfo{{ID: "n1-g0", Count: 7, Devmem: 81920, Devcore: 100, Type: "NVIDIA-A100", Health: true, Mode: "mig",
		MigProfiles: []codec.MigProfile{{Name: "1g.10gb", MemoryMB: 9856, Core: 14, SliceCount: 1, Placements: []codec.MigPlacement{{Start: 0, Size: 1}}}}}}
	cases := []struct {
		name       string
		node       *corev1.Node
		pods       []*corev1.Pod
		quotas     []*corev1.ResourceQuota
		pod        *corev1.Pod
		wantCode   Code
		wantReason string
		check      func(t *testing.T, ns *NodeStatus)
	}{
		{name: "unregistered", node: mkNode("n1", nil), pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()),
			wantCode: NodeUnregistered, wantReason: "NodeUnregistered"},
		{name: "malformed register", node: mkNode("n1", nil, codec.NodeRegisterAnnotation, "GPU-a,10,abc,100,T,0,true:"),
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), wantCode: NodeUnregistered, wantReason: "NodeUnregistered",
			check: func(t *testing.T, ns *NodeStatus) {
				if !strings.Contains(ns.Check.Detail, codec.NodeRegisterAnnotation) {
					t.Errorf("detail %q does not name the annotation", ns.Check.Detail)
				}
			}},
		{name: "device plugin not serving past HAMi's handshake grace", node: func() *corev1.Node {
			n := mkNode("n1", gpus("n1", 2, 16384), codec.NodeHandshakeAnnotation, codec.FormatHandshakeRequesting(time.Unix(1700000000, 0)))
			n.Status.Allocatable = nil
			return n
		}(), pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), wantCode: NodeDevicesNotReady, wantReason: "NodeDevicesNotReady"},
		{name: "too few GPUs on node", node: mkNode("n1", gpus("n1", 2, 16384)), pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(3).GPUMem(1000).Obj()),
			wantCode: NodeInsufficientDevice, wantReason: "NodeInsufficientDevice",
			check: func(t *testing.T, ns *NodeStatus) {
				if ns.Check.Need != 3 || ns.Check.Have != 2 {
					t.Errorf("numbers need %d have %d, want 3 and 2", ns.Check.Need, ns.Check.Have)
				}
			}},
		{name: "unhealthy", node: mkNode("n1", unhealthy), pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(2).GPUMem(1000).Obj()),
			wantCode: CardNotHealth, wantReason: "1/2 AllocatedCardsInsufficientRequest, 1/2 CardNotHealth"},
		{name: "cordoned", node: mkNode("n1", gpus("n1", 2, 16384), codec.NodeCordonAnnotation, "n1-g0,n1-g1"),
			pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), wantCode: CardCordoned, wantReason: "2/2 CardCordoned"},
		{name: "type filter", node: mkNode("n1", gpus("n1", 2, 16384)),
			pod:      withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), AnnoUseGPUType, "H100"),
			wantCode: CardTypeMismatch, wantReason: "2/2 CardTypeMismatch"},
		{name: "nouse type filter is case-insensitive", node: mkNode("n1", gpus("n1", 2, 16384)),
			pod:      withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), AnnoNoUseGPUType, "a100"),
			wantCode: CardTypeMismatch, wantReason: "2/2 CardTypeMismatch"},
		{name: "vgpu-mode mismatch", node: mkNode("n1", gpus("n1", 1, 16384)),
			pod:      withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), AnnoVGPUMode, "mig"),
			wantCode: CardTypeMismatch, wantReason: "1/1 CardTypeMismatch"},
		{name: "numa bind", node: mkNode("n1", numa),
			pod:      withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(3).GPUMem(1000).Obj()), AnnoNumaBind, "true"),
			wantCode: NumaNotFit, wantReason: "2/4 AllocatedCardsInsufficientRequest, 2/4 NumaNotFit"},
		{name: "uuid filter", node: mkNode("n1", gpus("n1", 2, 16384)),
			pod:      withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), AnnoUseGPUUUID, "GPU-other"),
			wantCode: CardUUIDMismatch, wantReason: "2/2 CardUuidMismatch"},
		{name: "slots exhausted", node: mkNode("n1", func() []codec.DeviceInfo { d := gpus("n1", 1, 16384); d[0].Count = 1; return d }()),
			pods:     []*corev1.Pod{placedOn(mkPod("ns", "a", tb.MakeContainer("c").GPUs(1).GPUMem(100).Obj()), "n1", "n1-g0,NVIDIA,100,0:;")},
			pod:      mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()),
			wantCode: CardTimeSlicingExhausted, wantReason: "1/1 CardTimeSlicingExhausted"},
		{name: "mutex policy", node: mkNode("n1", gpus("n1", 1, 16384)),
			pods:     []*corev1.Pod{placedOn(mkPod("ns", "a", tb.MakeContainer("c").GPUs(1).GPUMem(100).Obj()), "n1", "n1-g0,NVIDIA,100,0:;")},
			pod:      withAnno(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()), AnnoGPUPolicy, "mutex"),
			wantCode: ExclusiveDeviceAllocateConflict, wantReason: "1/1 ExclusiveDeviceAllocateConflict"},
		{name: "quota", node: mkNode("n1", gpus("n1", 2, 16384)),
			quotas:   []*corev1.ResourceQuota{mkQuota("ns", "q", "limits.nvidia.com/gpumem", "3000")},
			pod:      mkPod("ns", "p", tb.MakeContainer("c").GPUs(2).GPUMem(2000).Obj()),
			wantCode: ResourceQuotaNotFit, wantReason: "1/2 AllocatedCardsInsufficientRequest, 1/2 ResourceQuotaNotFit",
			check: func(t *testing.T, ns *NodeStatus) {
				for _, g := range ns.GPUs {
					if g.Result.Code == ResourceQuotaNotFit && (g.Result.Need != 4000 || g.Result.Have != 3000) {
						t.Errorf("quota numbers need %d have %d, want 4000 (2 x 2000) and 3000", g.Result.Need, g.Result.Have)
					}
				}
			}},
		{name: "memory", node: mkNode("n1", gpus("n1", 2, 16384)), pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(20000).Obj()),
			wantCode: CardInsufficientMemory, wantReason: "2/2 CardInsufficientMemory",
			check: func(t *testing.T, ns *NodeStatus) {
				r := ns.GPUs[0].Result
				if r.Need != 20000 || r.Have != 16384 || r.Total != 16384 || r.Unit != "MiB" {
					t.Errorf("memory numbers %+v", r)
				}
			}},
		{name: "cores", node: mkNode("n1", gpus("n1", 1, 16384)),
			pods:     []*corev1.Pod{placedOn(mkPod("ns", "a", tb.MakeContainer("c").GPUs(1).GPUMem(100).GPUCores(80).Obj()), "n1", "n1-g0,NVIDIA,100,80:;")},
			pod:      mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(30).Obj()),
			wantCode: CardInsufficientCore, wantReason: "1/1 CardInsufficientCore"},
		{name: "whole GPU on a used GPU", node: mkNode("n1", gpus("n1", 1, 16384)),
			pods:     []*corev1.Pod{placedOn(mkPod("ns", "a", tb.MakeContainer("c").GPUs(1).GPUMem(100).Obj()), "n1", "n1-g0,NVIDIA,100,0:;")},
			pod:      mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).GPUCores(100).Obj()),
			wantCode: ExclusiveDeviceAllocateConflict, wantReason: "1/1 ExclusiveDeviceAllocateConflict"},
		{name: "compute exhausted", node: mkNode("n1", gpus("n1", 1, 16384)),
			pods:     []*corev1.Pod{placedOn(mkPod("ns", "a", tb.MakeContainer("c").GPUs(1).GPUMem(100).GPUCores(100).Obj()), "n1", "n1-g0,NVIDIA,100,100:;")},
			pod:      mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(1000).Obj()),
			wantCode: CardComputeUnitsExhausted, wantReason: "1/1 CardComputeUnitsExhausted"},
		{name: "mig placement taken", node: mkNode("n1", mig),
			pods: []*corev1.Pod{withAnno(placedOn(mkPod("ns", "a", tb.MakeContainer("c").GPUs(1).GPUMem(9000).Obj()), "n1", "n1-g0,NVIDIA,9856,0:;"),
				codec.PodMigAllocationsAnnotation, `[{"containerIndex":0,"deviceIndex":0,"gpuUUID":"n1-g0","profile":"1g.10gb","placement":{"start":0,"size":1}}]`)},
			pod:      mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(9000).Obj()),
			wantCode: CardMigTopologyInfeasible, wantReason: "1/1 CardMigTopologyInfeasible"},
		{name: "mig no profile big enough", node: mkNode("n1", mig), pod: mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(20000).Obj()),
			wantCode: CardMigTopologyInfeasible, wantReason: "1/1 CardMigTopologyInfeasible"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCluster([]*corev1.Node{tc.node}, tc.pods, tc.quotas...)
			v := c.Evaluate(tc.pod, EvalOptions{DetailAll: true})
			if v.Fits {
				t.Fatalf("pod fits on %s; want %s", v.Placement.Node, tc.wantCode)
			}
			ns := v.NodeStatus("n1")
			if ns.Code != tc.wantCode || ns.Reason != tc.wantReason {
				t.Fatalf("node code %q reason %q; want %q and %q", ns.Code, ns.Reason, tc.wantCode, tc.wantReason)
			}
			if want := "0/1 nodes are available: 1 " + string(tc.wantCode) + "."; v.Summary != want {
				t.Errorf("summary %q, want %q", v.Summary, want)
			}
			if tc.check != nil {
				tc.check(t, ns)
			}
		})
	}
}

// TestGatesPassWhenRoomIsLeft checks the positive side of the same gates: each fits when there is room.
func TestGatesPassWhenRoomIsLeft(t *testing.T) {
	c := newTestCluster([]*corev1.Node{mkNode("n1", gpus("n1", 2, 16384))},
		[]*corev1.Pod{placedOn(mkPod("ns", "a", tb.MakeContainer("c").GPUs(1).GPUMem(10000).GPUCores(50).Obj()), "n1", "n1-g0,NVIDIA,10000,50:;")},
		mkQuota("ns", "q", "limits.nvidia.com/gpumem", "20000", "limits.nvidia.com/gpucores", "100"))
	v := c.Evaluate(mkPod("ns", "p", tb.MakeContainer("c").GPUs(1).GPUMem(6000).GPUCores(50).Obj()), EvalOptions{})
	if !v.Fits {
		t.Fatalf("does not fit: %s %v", v.Summary, v.Explanation)
	}
	if got := v.Placement.Containers[0].Devices[0]; got.MemMiB != 6000 || got.Cores != 50 {
		t.Errorf("device %+v, want 6000 MiB 50%%", got)
	}
}
