// Package vastai describes Vastaitech accelerators as HAMi v2.10 schedules them whole-card
// (pkg/device/vastai/device.go): devices registered in hami.io/node-va-register (HAMi's JSON list), a container
// asks for vastaitech.com/va only and takes a slot of each device, no memory and no cores.
//
// Die mode (die.go): devices whose customInfo says DeviceStrategy "die" are dies of a card (AIC); several
// dies are chosen card by card and the node scores the share of them on one card. Not modelled: die mode's
// mutex rule (an idle die on a card with a used die conflicts) and its node score for a pod whose dies
// several containers take.
package vastai

import (
	"encoding/json"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Name is HAMi's CommonWord for the type, also the registered type of its devices.
const Name = "Vastai"

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
		Vendor: "vastai", Name: Name, Word: "VA",
		Register:   "hami.io/node-va-register",
		Handshake:  "hami.io/node-handshake-va",
		ToAllocate: "hami.io/Vastai-devices-to-allocate",
		Allocated:  "hami.io/Vastai-devices-allocated",
		UseUUID:    "vastaitech.com/use-gpuuuid", NoUseUUID: "vastaitech.com/nouse-gpuuuid",
		Count:        device.Or(s.ResourceCountName, "vastaitech.com/va"),
		ReadRequest:  device.SlotRequest,
		ReadRegister: readRegister,
		Prioritize:   prioritize,
		ScoreNode:    scoreNode,
		Rows:         []device.Row{MutexCardRow},
	}}, nil
}
