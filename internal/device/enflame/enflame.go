// Package enflame describes Enflame GCUs as HAMi v2.10.0 schedules them: whole (pkg/device/enflame/gcu.go,
// GCUDevices: no register annotation, status.capacity[enflame.com/gcu] devices named <node>-GCU-<i>, one slot
// each, every container takes unused GCUs whole), and cut into DRS slices (pkg/device/enflame/device.go,
// EnflameDevices, drs.go: enflame.com/drs-gcu slices, or enflame.com/gcu-memory and gcu-core matched to a
// profile of the node's enflame.com/gcu-drs-capacity annotation).
package enflame

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Family is Enflame.
type Family struct{}

func (Family) Name() string    { return "enflame" }
func (Family) Section() string { return "enflame" }

// Kinds returns the whole-GCU Kind and the DRS-GCU Kind, in HAMi's registration order
// (pkg/scheduler/config/config.go:153-166).
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceNameGCU    string `json:"resourceNameGCU"`
		ResourceNameDRSGCU string `json:"resourceNameDRSGCU"`
		ResourceNameMemory string `json:"resourceNameGCUMemory"`
		ResourceNameCore   string `json:"resourceNameGCUCore"`
		ResourceNameVGCU   string `json:"resourceNameVGCU"`
	}
	if err := device.Decode("enflame", section, &s); err != nil {
		return nil, err
	}
	count := device.Or(s.ResourceNameGCU, "enflame.com/gcu")
	return []device.Kind{{
		Vendor: "enflame", Name: "GCU", Word: "GCU",
		ReadRegister: device.FromNode(func(n *corev1.Node) []codec.DeviceInfo { return NodeDevices(n, count) }),
		ToAllocate:   "hami.io/enflame-gcu-devices-to-allocate",
		Allocated:    "hami.io/enflame-gcu-devices-allocated",
		Count:        count,
		ReadRequest:  device.WholeRequest,
		Rows:         []device.Row{UsedRow},
	}, drsKind(device.Or(s.ResourceNameDRSGCU, device.Or(s.ResourceNameVGCU, "enflame.com/drs-gcu")),
		device.Or(s.ResourceNameMemory, "enflame.com/gcu-memory"), device.Or(s.ResourceNameCore, "enflame.com/gcu-core"))}, nil
}

// NodeDevices is HAMi's GetNodeDevices for GCUs: capacity[count] devices <node>-GCU-<i>, one slot, memory
// and cores 100 (percentages: a GCU is never shared).
func NodeDevices(n *corev1.Node, countRes string) []codec.DeviceInfo {
	return device.CapacityDevices(n, countRes, "GCU", codec.DeviceInfo{Count: 1, Devmem: 100, Devcore: 100, Type: "GCU", Health: true})
}
