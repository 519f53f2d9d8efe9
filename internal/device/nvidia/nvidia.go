// Package nvidia describes NVIDIA GPUs as HAMi schedules them (pkg/device/nvidia/device.go). The engine's
// walk is NVIDIA's Fit; what only NVIDIA has (vgpu-mode, MIG, numa-bind, topology-aware pair scores, the
// namespace quota gate inside Fit) stays switched on for this Kind alone.
package nvidia

import (
	"encoding/json"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Vendor is NVIDIA.
type Vendor struct{}

func (Vendor) Name() string    { return "nvidia" }
func (Vendor) Section() string { return "nvidia" }

// Kinds returns the one NVIDIA Kind with the section's resource names.
func (Vendor) Kinds(section json.RawMessage) ([]device.Kind, error) {
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
	}
}
