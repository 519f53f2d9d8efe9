package nvidia_test

import (
	corev1 "k8s.io/api/core/v1"

	"testing"
	"time"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/nvidia"
)

// NVIDIA's own rows (pkg/device/nvidia/device.go): the devices-ready node gate, numa-bind, the namespace
// quota inside Fit and vgpu-mode; NVIDIA's Kind is built from the engine's Config, so the world schedules
// NVIDIA alone.
func TestNVIDIARows(t *testing.T) {
	k := nvidia.KindOf(nvidia.Config{})
	for _, r := range []device.Row{device.ReadyRow, device.NumaRow, device.QuotaRow, device.MIGRow, device.CordonRow} {
		if !k.Has(r.Name) {
			t.Errorf("NVIDIA's Kind lacks the %s row", r.Name)
		}
	}
	reg := ft.Register(
		codec.DeviceInfo{ID: "gpu-0", Index: 0, Count: 10, Devmem: 24576, Devcore: 100, Type: "NVIDIA-A10", Numa: 0, Health: true},
		codec.DeviceInfo{ID: "gpu-1", Index: 1, Count: 10, Devmem: 24576, Devcore: 100, Type: "NVIDIA-A10", Numa: 1, Health: true})
	annos := map[string]string{codec.NodeRegisterAnnotation: reg, codec.NodeHandshakeAnnotation: "Reported_2023-11-14 22:13:20"}
	node := ft.Node("n1", annos, map[string]string{"nvidia.com/gpu": "20"})
	stamped := func(at time.Time) map[string]string {
		return map[string]string{codec.NodeRegisterAnnotation: reg, codec.NodeHandshakeAnnotation: codec.FormatHandshakeRequesting(at)}
	}
	ask := func(count, mem string) map[string]string {
		return map[string]string{"nvidia.com/gpu": count, "nvidia.com/gpumem": mem}
	}
	ft.Run(t, []device.Kind{}, []ft.Case{
		{Name: "two GPUs on two NUMA nodes", Node: node, Pod: ft.Pod("p", nil, ask("2", "1000")), Want: [][]string{{"gpu-1", "gpu-0"}}},
		{Name: "numa-bind: the set restarts on each NUMA node", Node: node, Pod: ft.Pod("p", map[string]string{"nvidia.com/numa-bind": "true"}, ask("2", "1000")),
			Want: nil, Reason: "1/2 AllocatedCardsInsufficientRequest, 1/2 NumaNotFit"},
		{Name: "vgpu-mode picks the mode", Node: node, Pod: ft.Pod("p", map[string]string{"nvidia.com/vgpu-mode": "mig"}, ask("1", "1000")),
			Want: nil, Reason: "2/2 CardTypeMismatch"},
		{Name: "the quota row", Node: node, Quota: map[string]string{"limits.nvidia.com/gpumem": "1500"}, Pod: ft.Pod("p", nil, ask("2", "1000")),
			Want: nil, Reason: "1/2 AllocatedCardsInsufficientRequest, 1/2 ResourceQuotaNotFit"},
		// HAMi's registration pass keeps a node whose allocatable count is 0 unless its Requesting_ stamp is past
		// the 60 s grace (pkg/device/devices.go:576-613): a Reported handshake is stamped and judged.
		{Name: "devices-ready: allocatable 0, Reported handshake", Node: ft.Node("n1", annos, map[string]string{"nvidia.com/gpu": "0"}),
			Pod: ft.Pod("p", nil, ask("1", "1000")), Want: [][]string{{"gpu-1"}}},
		{Name: "devices-ready: allocatable 0, stamp past the grace", Node: ft.Node("n1", stamped(ft.TestTime.Add(-time.Minute)), map[string]string{"nvidia.com/gpu": "0"}),
			Pod: ft.Pod("p", nil, ask("1", "1000")), Want: nil, Reason: "NodeDevicesNotReady"},
		{Name: "devices-ready: allocatable 0, stamp within the grace", Node: ft.Node("n1", stamped(ft.TestTime.Add(-59*time.Second)), map[string]string{"nvidia.com/gpu": "0"}),
			Pod: ft.Pod("p", nil, ask("1", "1000")), Want: [][]string{{"gpu-1"}}},
	})
}

// a100 is an A100-40GB in MIG mode with NVML's profiles and placements (the oracle's nvidia-mig batch).
func a100(id string, index int) codec.DeviceInfo {
	return codec.DeviceInfo{ID: id, Index: index, Count: 7, Devmem: 40960, Devcore: 100, Type: "NVIDIA A100-SXM4-40GB", Health: true, Mode: "mig",
		MigProfiles: []codec.MigProfile{
			{Name: "1g.5gb", MemoryMB: 4864, Core: 14, SliceCount: 1, Placements: []codec.MigPlacement{{Start: 0, Size: 1}, {Start: 1, Size: 1}, {Start: 2, Size: 1}, {Start: 3, Size: 1}, {Start: 4, Size: 1}, {Start: 5, Size: 1}, {Start: 6, Size: 1}}},
			{Name: "2g.10gb", MemoryMB: 9856, Core: 28, SliceCount: 2, Placements: []codec.MigPlacement{{Start: 0, Size: 2}, {Start: 2, Size: 2}, {Start: 4, Size: 2}}},
			{Name: "3g.20gb", MemoryMB: 19968, Core: 42, SliceCount: 3, Placements: []codec.MigPlacement{{Start: 0, Size: 4}, {Start: 4, Size: 4}}},
			{Name: "7g.40gb", MemoryMB: 40192, Core: 98, SliceCount: 7, Placements: []codec.MigPlacement{{Start: 0, Size: 8}}},
		}}
}

// NVIDIA's MIG walk (pkg/device/nvidia/device.go Fit at v2.10.0): a MIG GPU no allowed profile fits with a
// free placement says CardMigTopologyInfeasible (812-821), whatever the reason; the walk looks at a MIG GPU
// again after taking it (846-848), so one container may hold several instances of one GPU, and
// fitInDevices skips the node's device count for a MIG request (pkg/scheduler/score.go:99, 54-69).
func TestNVIDIAMIG(t *testing.T) {
	mig := func(devs ...codec.DeviceInfo) *corev1.Node {
		annos := map[string]string{codec.NodeRegisterAnnotation: ft.Register(devs...), codec.NodeHandshakeAnnotation: "Reported_2023-11-14 22:13:20"}
		return ft.Node("n1", annos, map[string]string{"nvidia.com/gpu": "14"})
	}
	noProfiles := a100("gpu-0", 0)
	noProfiles.MigProfiles = nil
	ask := func(count, mem string) map[string]string {
		return map[string]string{"nvidia.com/gpu": count, "nvidia.com/gpumem": mem}
	}
	ft.Run(t, []device.Kind{}, []ft.Case{
		{Name: "no profile large enough reads CardMigTopologyInfeasible", Node: mig(a100("gpu-0", 0)), Pod: ft.Pod("p", nil, ask("1", "40500")),
			Want: nil, Reason: "1/1 CardMigTopologyInfeasible"},
		{Name: "a MIG GPU with no profiles reads CardMigTopologyInfeasible", Node: mig(noProfiles), Pod: ft.Pod("p", nil, ask("1", "1000")),
			Want: nil, Reason: "1/1 CardMigTopologyInfeasible"},
		{Name: "three instances of one MIG GPU in one container", Node: mig(a100("gpu-0", 0)), Pod: ft.Pod("p", nil, ask("3", "9000")),
			Want: [][]string{{"gpu-0", "gpu-0", "gpu-0"}}},
		{Name: "the walk looks at the taken GPU again before the next", Node: mig(a100("gpu-0", 0), a100("gpu-1", 1)), Pod: ft.Pod("p", nil, ask("2", "4000")),
			Want: [][]string{{"gpu-1", "gpu-1"}}},
		{Name: "a taken GPU that holds no second instance counts twice", Node: mig(a100("gpu-0", 0), a100("gpu-1", 1)), Pod: ft.Pod("p", nil, ask("3", "20000")),
			Want: nil, Reason: "2/2 AllocatedCardsInsufficientRequest, 2/2 CardMigTopologyInfeasible"},
		{Name: "HAMi counts the set's reason per instance", Node: mig(a100("gpu-0", 0)), Pod: ft.Pod("p", nil, ask("3", "15000")),
			Want: nil, Reason: "1/1 CardMigTopologyInfeasible, 2/1 AllocatedCardsInsufficientRequest"},
		{Name: "vgpu-mode hami-core keeps the device count", Node: mig(a100("gpu-0", 0)), Pod: ft.Pod("p", map[string]string{"nvidia.com/vgpu-mode": "hami-core"}, ask("2", "1000")),
			Want: nil, Reason: "NodeInsufficientDevice"},
		{Name: "no device-count check for a MIG request", Node: mig(a100("gpu-0", 0)), Pod: ft.Pod("p", nil, ask("3", "20000")),
			Want: nil, Reason: "1/1 AllocatedCardsInsufficientRequest, 1/1 CardMigTopologyInfeasible"},
	})
}

// HAMi charges a MIG instance's profile to the GPU once a container has it (AddResourceUsage,
// pkg/device/nvidia/device.go:645-663 at v2.10.0): memory and cores are the profile's, not the request's, for
// the pod's later containers and in the device list. The hamioracle's `-family nvidia-mig -n 200 -seed 1`, seed
// 163: two instances at 50 cores each left 56 of 100 cores charged (two 2g.10gb), not 100.
func TestNVIDIAMIGChargesProfileCores(t *testing.T) {
	node := ft.Node("n1", map[string]string{codec.NodeRegisterAnnotation: ft.Register(a100("gpu-0", 0)), codec.NodeHandshakeAnnotation: "Reported_2023-11-14 22:13:20"},
		map[string]string{"nvidia.com/gpu": "7"})
	ask := func(count, mem, cores string) map[string]string {
		m := map[string]string{"nvidia.com/gpu": count, "nvidia.com/gpumem": mem}
		if cores != "" {
			m["nvidia.com/gpucores"] = cores
		}
		return m
	}
	ft.Run(t, []device.Kind{}, []ft.Case{
		{Name: "seed 163: two instances at 50 cores charge 2 x 28, a later 0-core container fits", Node: node,
			Pod:         ft.Pod("p", nil, ask("2", "9000", "50"), ask("1", "3000", "")),
			Want:        [][]string{{"gpu-0", "gpu-0"}, {"gpu-0"}},
			Annotations: map[string]string{codec.PodAllocatedAnnotation: "gpu-0,NVIDIA,9856,28:gpu-0,NVIDIA,9856,28:;gpu-0,NVIDIA,4864,14:;"}},
		{Name: "a whole-GPU request charges the profile's cores", Node: node,
			Pod:         ft.Pod("p", nil, ask("1", "4000", "100"), ask("1", "4000", "")),
			Want:        [][]string{{"gpu-0"}, {"gpu-0"}},
			Annotations: map[string]string{codec.PodAllocatedAnnotation: "gpu-0,NVIDIA,4864,14:;gpu-0,NVIDIA,4864,14:;"}},
		{Name: "the profiles' cores add up: 98 charged leaves 2 for 50", Node: node,
			Pod:    ft.Pod("p", nil, ask("1", "40000", ""), ask("1", "500", "50")),
			Reason: "1/1 CardInsufficientCore"},
	})
}

// TestReadRegister: NVIDIA's register reader keeps each GPU's mode and the annotation's layout (which the
// engine checks against --hami-version), and says why a node without it is unregistered.
func TestReadRegister(t *testing.T) {
	k := nvidia.KindOf(nvidia.Config{})
	_, _, _, read, _ := k.Readers()
	var probs []string
	bad := device.ReportFunc(func(field, format string, args ...any) { probs = append(probs, field) })
	reg := ft.Register(codec.DeviceInfo{ID: "gpu-0", Count: 7, Devmem: 40960, Devcore: 100, Type: "NVIDIA-A100", Health: true, Mode: "mig"})
	r, ok := read(&k, ft.Node("n1", map[string]string{codec.NodeRegisterAnnotation: reg}, nil), bad)
	if !ok || len(r.Devices) != 1 || r.Devices[0].Mode != "mig" || r.Format != codec.RegisterJSON || r.Unregistered != "" {
		t.Errorf("read = %+v %v, want the GPU in mig mode, JSON", r, ok)
	}
	if r, ok := read(&k, ft.Node("n1", nil, nil), bad); ok || r.Unregistered != nvidia.Unregistered || len(probs) != 0 {
		t.Errorf("no annotation: %+v %v %v", r, ok, probs)
	}
	if r, ok := read(&k, ft.Node("n1", map[string]string{codec.NodeRegisterAnnotation: "[{"}, nil), bad); ok || r.Unregistered == "" || len(probs) != 1 {
		t.Errorf("unreadable annotation: %+v %v %v, want its error as the reason and one problem", r, ok, probs)
	}
}
