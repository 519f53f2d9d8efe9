package amd_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device/amd"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
)

// AMD's rules (pkg/device/amd/device.go): cores are a percentage of each GPU's compute units, a node whose
// amd.com/gpu capacity is 0 or absent is not registered (CheckHealth), and the device lists name each GPU's
// registered model (allocType).
func TestAMDRules(t *testing.T) {
	reg := ft.Register(
		codec.DeviceInfo{ID: "amd-0", Index: 0, Count: 4, Devmem: 196608, Devcore: 120, Type: "MI300X", Health: true},
		codec.DeviceInfo{ID: "amd-1", Index: 1, Count: 4, Devmem: 196608, Devcore: 120, Type: "MI300X", Health: true})
	annos := map[string]string{"hami.io/node-amd-register": reg}
	node := ft.Node("n1", annos, map[string]string{"amd.com/gpu": "2"})
	busy := []*corev1.Pod{
		ft.Counted(ft.Pod("a", nil, map[string]string{"amd.com/gpu": "1"}), "n1", "hami.io/amd-devices-allocated", "amd-0,MI300X,1000,80:;"),
		ft.Counted(ft.Pod("b", nil, map[string]string{"amd.com/gpu": "1"}), "n1", "hami.io/amd-devices-allocated", "amd-1,MI300X,1000,80:;"),
	}
	ask := func(cores string) map[string]string {
		return map[string]string{"amd.com/gpu": "1", "amd.com/gpumem": "1000", "amd.com/gpucores": cores}
	}
	ft.Run(t, ft.Kinds(t, amd.Family{}), []ft.Case{
		{Name: "30 % is 36 of 120 compute units; the list names the model", Node: node, Pod: ft.Pod("p", map[string]string{"amd.com/use-gpu-uuid": "amd-1"}, ask("30")),
			Want: [][]string{{"amd-1"}}, Annotations: map[string]string{"hami.io/amd-devices-allocated": "amd-1,MI300X,1000,36:;"}},
		{Name: "50 % is 60 units; 40 are left", Node: node, Counted: busy, Pod: ft.Pod("p", nil, ask("50")),
			Want: nil, Reason: "2/2 CardInsufficientCore"},
		{Name: "30 % is 36 units; 40 are left", Node: node, Counted: busy, Pod: ft.Pod("p", nil, ask("30")), Want: [][]string{{"amd-1"}}},
		{Name: "no amd.com/gpu capacity: not registered", Node: ft.Node("n1", annos, nil), NodeProblems: true, Pod: ft.Pod("p", nil, ask("30")),
			Want: nil, Reason: "NodeUnregistered"},
	})
}
