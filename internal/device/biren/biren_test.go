package biren_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device/biren"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
)

// Biren's rules (pkg/device/biren/device.go): a container takes a slot of each GPU and no memory or cores, so
// only health, UUID, slots and the mutex policy decide; hami.io/device-cordon is NVIDIA's alone
// (pkg/device/nvidia/device.go:694-737), Biren's Fit places on a listed GPU.
func TestBirenRules(t *testing.T) {
	reg := ft.Register(
		codec.DeviceInfo{ID: "br-0", Index: 0, Count: 1, Devmem: 65536, Devcore: 100, Type: "Biren", Health: true},
		codec.DeviceInfo{ID: "br-1", Index: 1, Count: 2, Devmem: 65536, Devcore: 100, Type: "Biren", Health: true},
		codec.DeviceInfo{ID: "br-2", Index: 2, Count: 2, Devmem: 65536, Devcore: 100, Type: "Biren", Health: false})
	node := ft.Node("n1", map[string]string{"hami.io/node-biren-register": reg}, nil)
	full := []*corev1.Pod{ft.Counted(ft.Pod("used", nil, map[string]string{"birentech.com/gpu": "1"}), "n1", "hami.io/Biren-devices-allocated", "br-0,Biren,0,0:;")}
	one := map[string]string{"birentech.com/gpu": "1"}
	ft.Run(t, ft.Kinds(t, biren.Family{}), []ft.Case{
		{Name: "a slot is all a container takes", Node: node, Pod: ft.Pod("p", nil, map[string]string{"birentech.com/gpu": "2"}),
			Want: [][]string{{"br-1", "br-0"}}},
		{Name: "a GPU with every slot taken is skipped", Node: node, Counted: full, Pod: ft.Pod("p", nil, one),
			Want: [][]string{{"br-1"}}},
		{Name: "a cordon is ignored", Node: ft.Node("n1", map[string]string{"hami.io/node-biren-register": reg, codec.NodeCordonAnnotation: "br-0,br-1"}, nil),
			Pod: ft.Pod("p", nil, map[string]string{"birentech.com/gpu": "2"}), Want: [][]string{{"br-1", "br-0"}}},
		{Name: "three GPUs: one is unhealthy", Node: node, Pod: ft.Pod("p", nil, map[string]string{"birentech.com/gpu": "3"}),
			Want: nil, Reason: "1/3 CardNotHealth, 2/3 AllocatedCardsInsufficientRequest"},
	})
}
