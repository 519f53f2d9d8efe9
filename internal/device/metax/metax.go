// Package metax describes MetaX GPUs as HAMi v2.10 schedules them whole (pkg/device/metax/device.go,
// MetaxDevices): no register annotation (status.capacity[metax-tech.com/gpu] devices named <node>-metax-<i>,
// 64 GiB each), every container takes its GPUs whole. MetaX's shared sGPU (sdevice.go) is package metaxsgpu.
package metax

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Family is MetaX.
type Family struct{}

func (Family) Name() string    { return "metax" }
func (Family) Section() string { return "metax" }

// Kinds returns the whole-GPU Kind.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceCountName string `json:"resourceCountName"`
	}
	if err := device.Decode("metax", section, &s); err != nil {
		return nil, err
	}
	count := device.Or(s.ResourceCountName, "metax-tech.com/gpu")
	return []device.Kind{{
		Vendor: "metax", Name: "Metax-GPU", Word: "GPU",
		ReadRegister: device.FromNode(func(n *corev1.Node) []codec.DeviceInfo { return nodeDevices(n, count) }),
		ToAllocate:   "hami.io/metax-gpu-devices-to-allocate",
		Allocated:    "hami.io/metax-gpu-devices-allocated",
		Count:        count,
		ReadRequest:  device.WholeRequest,
		Rows:         []device.Row{OneDeviceRow},
	}}, nil
}

// nodeDevices is HAMi's GetNodeDevices for MetaX GPUs: one 64 GiB, 100 % device per unit of capacity.
func nodeDevices(n *corev1.Node, countRes string) []codec.DeviceInfo {
	return device.CapacityDevices(n, countRes, "metax", codec.DeviceInfo{Count: 1, Devmem: 65536, Devcore: 100, Type: "Metax-GPU", Health: true})
}
