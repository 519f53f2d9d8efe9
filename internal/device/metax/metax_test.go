package metax_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/metax"
)

// MetaX whole GPUs (pkg/device/metax/device.go): devices from status.capacity[metax-tech.com/gpu], 64 GiB
// each, taken whole: a used GPU takes nobody.
func TestMetaxRules(t *testing.T) {
	node := ft.Node("n1", nil, map[string]string{"metax-tech.com/gpu": "2"})
	used := []*corev1.Pod{ft.Counted(ft.Pod("used", nil, map[string]string{"metax-tech.com/gpu": "1"}),
		"n1", "hami.io/metax-gpu-devices-allocated", "n1-metax-0,Metax-GPU,65536,100:;")}
	one := map[string]string{"metax-tech.com/gpu": "1"}
	ft.Run(t, ft.Kinds(t, metax.Family{}), []ft.Case{
		{Name: "devices from the capacity", Node: node, Pod: ft.Pod("p", nil, map[string]string{"metax-tech.com/gpu": "2"}),
			Want: [][]string{{"n1-metax-1", "n1-metax-0"}}},
		{Name: "a used GPU is not shared", Node: node, Counted: used, Pod: ft.Pod("p", nil, one), Want: [][]string{{"n1-metax-1"}},
			Annotations: map[string]string{"hami.io/metax-gpu-devices-allocated": "n1-metax-1,Metax-GPU,65536,100:;"}},
		// customFilterRule (device.go:156-166): the second container may not take a GPU other than the first's.
		{Name: "a later container gets no other GPU", Node: ft.Node("n1", nil, map[string]string{"metax-tech.com/gpu": "3"}),
			Pod: ft.Pod("p", nil, one, map[string]string{"metax-tech.com/gpu": "2"}), Want: nil,
			Reason: "1/3 CardTimeSlicingExhausted, 2/3 CardNotFoundCustomFilterRule"},
		{Name: "no capacity: not registered", Node: ft.Node("n1", nil, nil), Pod: ft.Pod("p", nil, one), Want: nil, Reason: "NodeUnregistered"},
	})
}
