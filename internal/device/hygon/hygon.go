// Package hygon describes Hygon DCUs as HAMi v2.10 schedules them (pkg/device/hygon/device.go): the common
// walk with DCU's own type and UUID annotations, and 100 % cores (a whole DCU) when a container names none.
package hygon

import (
	"encoding/json"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Family is Hygon.
type Family struct{}

func (Family) Name() string    { return "hygon" }
func (Family) Section() string { return "hygon" }

// Kinds returns the DCU Kind.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceCountName  string `json:"resourceCountName"`
		ResourceMemoryName string `json:"resourceMemoryName"`
		ResourceCoreName   string `json:"resourceCoreName"`
		MemoryFactor       int64  `json:"memoryFactor"`
	}
	if err := device.Decode("hygon", section, &s); err != nil {
		return nil, err
	}
	return []device.Kind{{
		Vendor: "hygon", Name: "DCU", Word: "DCU",
		Register:   "hami.io/node-dcu-register",
		Handshake:  "hami.io/node-handshake-dcu",
		ToAllocate: "hami.io/dcu-devices-to-allocate",
		Allocated:  "hami.io/dcu-devices-allocated",
		UseType:    "hygon.com/use-dcutype", NoUseType: "hygon.com/nouse-dcutype",
		UseUUID: "hygon.com/use-gpuuuid", NoUseUUID: "hygon.com/nouse-gpuuuid",
		Count:        device.Or(s.ResourceCountName, "hygon.com/dcunum"),
		Memory:       device.Or(s.ResourceMemoryName, "hygon.com/dcumem"),
		Cores:        device.Or(s.ResourceCoreName, "hygon.com/dcucores"),
		MemoryFactor: s.MemoryFactor,
		DefaultCores: 100,
	}}, nil
}
