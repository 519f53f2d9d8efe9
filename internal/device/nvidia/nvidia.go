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

// Config is NVIDIA's section of HAMi's device-config.yaml, as far as it changes scheduling (the engine's
// Config carries it as its own fields).
type Config struct {
	ResourceCountName            string `json:"resourceCountName"`
	ResourceMemoryName           string `json:"resourceMemoryName"`
	ResourceMemoryPercentageName string `json:"resourceMemoryPercentageName"`
	ResourceCoreName             string `json:"resourceCoreName"`
	// DefaultMemory is the MiB a container gets when it names neither memory nor percentage; 0 means 100 %.
	DefaultMemory int64 `json:"defaultMemory"`
	// DefaultCores is the core percentage a container gets when it names none.
	DefaultCores int64 `json:"defaultCores"`
	// MemoryFactor multiplies every memory request (0 or 1 leaves it).
	MemoryFactor int64 `json:"memoryFactor"`
}

// Kinds returns the one NVIDIA Kind of the section.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var c Config
	if err := device.Decode("nvidia", section, &c); err != nil {
		return nil, err
	}
	return []device.Kind{KindOf(c)}, nil
}

// KindOf is NVIDIA's Kind with the section's resource names (HAMi's chart defaults for empty ones) and
// defaults: its request reader is NVIDIA's own (request.go); its register and device-list annotations are
// HAMi's own (hami.io/node-nvidia-register, hami.io/vgpu-devices-*).
func KindOf(c Config) device.Kind {
	return device.Kind{
		Vendor: "nvidia", Name: "NVIDIA", Word: "GPU",
		Register:   "hami.io/node-nvidia-register",
		Handshake:  "hami.io/node-handshake",
		ToAllocate: "hami.io/vgpu-devices-to-allocate",
		Allocated:  "hami.io/vgpu-devices-allocated",
		UseType:    "nvidia.com/use-gputype", NoUseType: "nvidia.com/nouse-gputype",
		UseUUID: "nvidia.com/use-gpuuuid", NoUseUUID: "nvidia.com/nouse-gpuuuid",
		Count:         device.Or(c.ResourceCountName, "nvidia.com/gpu"),
		Memory:        device.Or(c.ResourceMemoryName, "nvidia.com/gpumem"),
		MemoryPercent: device.Or(c.ResourceMemoryPercentageName, "nvidia.com/gpumem-percentage"),
		Cores:         device.Or(c.ResourceCoreName, "nvidia.com/gpucores"),
		MemoryFactor:  c.MemoryFactor,
		DefaultCores:  c.DefaultCores,
		ReadRequest:   requestReader(c.DefaultMemory, c.DefaultCores),
		ReadRegister:  readRegister,
		Rows:          []device.Row{device.ReadyRow, device.NumaRow, device.QuotaRow, device.MIGRow, device.CordonRow},
	}
}
