// Package enflame describes Enflame GCUs as HAMi v2.10 schedules them whole (pkg/device/enflame/gcu.go,
// GCUDevices): no register annotation (status.capacity[enflame.com/gcu] devices named <node>-GCU-<i>, one
// slot each), every container takes unused GCUs whole.
//
// Not modelled: the DRS-GCU hard partitions of device.go (EnflameDevices: enflame.com/drs-gcu slices or
// enflame.com/gcu-memory and gcu-core matched to a profile of the node's enflame.com/gcu-drs-capacity
// annotation); such pods are not managed by kubectl-hami.
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

// Kinds returns the whole-GCU Kind.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceNameGCU string `json:"resourceNameGCU"`
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
	}}, nil
}

// NodeDevices is HAMi's GetNodeDevices for GCUs: capacity[count] devices <node>-GCU-<i>, one slot, memory
// and cores 100 (percentages: a GCU is never shared).
func NodeDevices(n *corev1.Node, countRes string) []codec.DeviceInfo {
	return device.CapacityDevices(n, countRes, "GCU", codec.DeviceInfo{Count: 1, Devmem: 100, Devcore: 100, Type: "GCU", Health: true})
}
