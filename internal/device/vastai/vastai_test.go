package vastai_test

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/vastai"
)

// Vastai's whole-card rules (pkg/device/vastai/device.go): a slot of each device, no memory or cores; the
// UUID selectors are Vastai's own.
func TestVastaiRules(t *testing.T) {
	reg := ft.Register(
		codec.DeviceInfo{ID: "va-0", Index: 0, Count: 1, Devmem: 16384, Devcore: 100, Type: "Vastai", Health: true},
		codec.DeviceInfo{ID: "va-1", Index: 1, Count: 1, Devmem: 16384, Devcore: 100, Type: "Vastai", Health: true})
	node := ft.Node("n1", map[string]string{"hami.io/node-va-register": reg}, nil)
	ft.Run(t, ft.Kinds(t, vastai.Family{}), []ft.Case{
		{Name: "one device", Node: node, Pod: ft.Pod("p", map[string]string{"vastaitech.com/use-gpuuuid": "va-1"}, map[string]string{"vastaitech.com/va": "1"}),
			Want: [][]string{{"va-1"}}, Annotations: map[string]string{"hami.io/Vastai-devices-allocated": "va-1,Vastai,0,0:;"}},
		{Name: "the no-use list", Node: node, Pod: ft.Pod("p", map[string]string{"vastaitech.com/nouse-gpuuuid": "va-0"}, map[string]string{"vastaitech.com/va": "2"}),
			Want: nil, Reason: "1/2 AllocatedCardsInsufficientRequest, 1/2 CardUuidMismatch"},
		{Name: "more devices than the node has", Node: node, Pod: ft.Pod("p", nil, map[string]string{"vastaitech.com/va": "3"}),
			Want: nil, Reason: "NodeInsufficientDevice"},
	})
}
