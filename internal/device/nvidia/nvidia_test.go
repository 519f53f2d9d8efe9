package nvidia_test

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/nvidia"
)

// NVIDIA's own rows (pkg/device/nvidia/device.go): the devices-ready node gate, numa-bind, the namespace
// quota inside Fit and vgpu-mode; NVIDIA's Kind is built from the engine's Config, so the world schedules
// NVIDIA alone.
func TestNVIDIARows(t *testing.T) {
	k := nvidia.Kind("", "", "", "")
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
		{Name: "devices-ready: allocatable 0", Node: ft.Node("n1", annos, map[string]string{"nvidia.com/gpu": "0"}), Pod: ft.Pod("p", nil, ask("1", "1000")),
			Want: nil, Reason: "NodeDevicesNotReady"},
	})
}
