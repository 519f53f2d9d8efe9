// Package nvidia describes NVIDIA GPUs as HAMi schedules them (pkg/device/nvidia/device.go). NVIDIA is a
// family like the others: its Kind opts into the engine's rows only NVIDIA's Fit has (the devices-ready node
// gate, numa-bind and topology-aware, the namespace quota inside Fit, MIG), and the engine asks the Kind, not
// its position. Its resource names come from the engine's Config (HAMi's nvidia section).
package nvidia

import (
	"encoding/json"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Family is NVIDIA.
type Family struct{}

// FamilyName is NVIDIA's registry name.
const FamilyName = "nvidia"

func (Family) Name() string    { return FamilyName }
func (Family) Section() string { return "nvidia" }

// Kinds returns the one NVIDIA Kind with the section's resource names.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceCountName            string `json:"resourceCountName"`
		ResourceMemoryName           string `json:"resourceMemoryName"`
		ResourceMemoryPercentageName string `json:"resourceMemoryPercentageName"`
		ResourceCoreName             string `json:"resourceCoreName"`
	}
	if err := device.Decode("nvidia", section, &s); err != nil {
		return nil, err
	}
	return []device.Kind{Kind(s.ResourceCountName, s.ResourceMemoryName, s.ResourceMemoryPercentageName, s.ResourceCoreName)}, nil
}

// Kind is NVIDIA's Kind with these resource names (HAMi's chart defaults for empty ones).
func Kind(count, mem, pct, cores string) device.Kind {
	return device.Kind{
		Vendor: "nvidia", Name: "NVIDIA", Word: "GPU",
		Register:   "hami.io/node-nvidia-register",
		Handshake:  "hami.io/node-handshake",
		ToAllocate: "hami.io/vgpu-devices-to-allocate",
		Allocated:  "hami.io/vgpu-devices-allocated",
		UseType:    "nvidia.com/use-gputype", NoUseType: "nvidia.com/nouse-gputype",
		UseUUID: "nvidia.com/use-gpuuuid", NoUseUUID: "nvidia.com/nouse-gpuuuid",
		Count:         device.Or(count, "nvidia.com/gpu"),
		Memory:        device.Or(mem, "nvidia.com/gpumem"),
		MemoryPercent: device.Or(pct, "nvidia.com/gpumem-percentage"),
		Cores:         device.Or(cores, "nvidia.com/gpucores"),
		Rows:          []device.Row{device.ReadyRow, device.NumaRow, device.QuotaRow, device.MIGRow, device.CordonRow},
	}
}
