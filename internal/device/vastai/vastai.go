// Package vastai describes Vastaitech accelerators as HAMi v2.10 schedules them whole-card
// (pkg/device/vastai/device.go): devices registered in hami.io/node-va-register (HAMi's JSON list), a container
// asks for vastaitech.com/va only and takes a slot of each device, no memory and no cores.
//
// Not modelled: die mode (registered devices whose customInfo says DeviceStrategy "die": the walk collects
// every fitting die and computeBestCombination groups them by card, AIC) and its ScoreNode.
package vastai

import (
	"encoding/json"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Family is Vastaitech.
type Family struct{}

func (Family) Name() string    { return "vastai" }
func (Family) Section() string { return "vastai" }

// Kinds returns the Vastai Kind.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceCountName string `json:"resourceCountName"`
	}
	if err := device.Decode("vastai", section, &s); err != nil {
		return nil, err
	}
	return []device.Kind{{
		Vendor: "vastai", Name: "Vastai", Word: "VA",
		Register:   "hami.io/node-va-register",
		Handshake:  "hami.io/node-handshake-va",
		ToAllocate: "hami.io/Vastai-devices-to-allocate",
		Allocated:  "hami.io/Vastai-devices-allocated",
		UseUUID:    "vastaitech.com/use-gpuuuid", NoUseUUID: "vastaitech.com/nouse-gpuuuid",
		Count:       device.Or(s.ResourceCountName, "vastaitech.com/va"),
		ReadRequest: device.SlotRequest,
	}}, nil
}
