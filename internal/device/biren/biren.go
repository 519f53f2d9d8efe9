// Package biren describes Biren GPUs as HAMi v2.10 schedules them (pkg/device/biren/device.go): devices
// registered in hami.io/node-biren-register (HAMi's JSON list), a container asks for birentech.com/gpu only
// and takes a slot of each GPU, no memory and no cores (HAMi's Fit checks health, cordon, UUID, slots and
// the mutex policy, nothing else).
package biren

import (
	"encoding/json"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Family is Biren.
type Family struct{}

func (Family) Name() string    { return "biren" }
func (Family) Section() string { return "biren" }

// Kinds returns the Biren Kind.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceCountName string `json:"resourceCountName"`
	}
	if err := device.Decode("biren", section, &s); err != nil {
		return nil, err
	}
	return []device.Kind{{
		Vendor: "biren", Name: "Biren", Word: "GPU",
		Register:   "hami.io/node-biren-register",
		Handshake:  "hami.io/node-handshake-biren",
		ToAllocate: "hami.io/Biren-devices-to-allocate",
		Allocated:  "hami.io/Biren-devices-allocated",
		UseUUID:    "birentech.com/use-gpuuuid", NoUseUUID: "birentech.com/nouse-gpuuuid",
		Count:       device.Or(s.ResourceCountName, "birentech.com/gpu"),
		ReadRequest: device.SlotRequest,
	}}, nil
}
