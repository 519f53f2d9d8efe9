package hygon_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/hygon"
)

// Hygon's rules (pkg/device/hygon/device.go): the common walk, 100 % cores (a whole DCU) when a container
// names none, and DCU's own type selectors (HAMi's CheckType: use and no-use lists apply together).
func TestHygonRules(t *testing.T) {
	reg := ft.Register(
		codec.DeviceInfo{ID: "dcu-0", Index: 0, Count: 4, Devmem: 16384, Devcore: 100, Type: "DCU-Z100", Health: true},
		codec.DeviceInfo{ID: "dcu-1", Index: 1, Count: 4, Devmem: 16384, Devcore: 100, Type: "DCU-K100", Health: true})
	node := ft.Node("n1", map[string]string{"hami.io/node-dcu-register": reg}, nil)
	used := []*corev1.Pod{ft.Counted(ft.Pod("used", nil, map[string]string{"hygon.com/dcunum": "1"}),
		"n1", "hami.io/dcu-devices-allocated", "dcu-0,DCU,1000,30:;")}
	dcu := func(mem, cores string) map[string]string {
		m := map[string]string{"hygon.com/dcunum": "1", "hygon.com/dcumem": mem}
		if cores != "" {
			m["hygon.com/dcucores"] = cores
		}
		return m
	}
	ft.Run(t, ft.Kinds(t, hygon.Family{}), []ft.Case{
		{Name: "named cores share the used DCU", Node: node, Counted: used,
			Pod:  ft.Pod("p", map[string]string{"hygon.com/use-dcutype": "Z100"}, dcu("2000", "50")),
			Want: [][]string{{"dcu-0"}}},
		{Name: "no cores named takes a whole DCU, so not the used one", Node: node, Counted: used,
			Pod:  ft.Pod("p", map[string]string{"hygon.com/use-dcutype": "Z100"}, dcu("2000", "")),
			Want: nil, Reason: "1/2 CardInsufficientCore, 1/2 CardTypeMismatch"},
		{Name: "use and no-use lists apply together", Node: node,
			Pod:  ft.Pod("p", map[string]string{"hygon.com/use-dcutype": "DCU", "hygon.com/nouse-dcutype": "K100"}, dcu("2000", "10")),
			Want: [][]string{{"dcu-0"}}},
		{Name: "UUID selector", Node: node,
			Pod:  ft.Pod("p", map[string]string{"hygon.com/nouse-gpuuuid": "dcu-0,dcu-1"}, dcu("2000", "10")),
			Want: nil, Reason: "2/2 CardUuidMismatch"},
	})
}
