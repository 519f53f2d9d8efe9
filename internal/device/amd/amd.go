// Package amd describes AMD GPUs as HAMi v2.10 schedules them (pkg/device/amd/device.go): devices registered
// in hami.io/node-amd-register (HAMi's JSON list, cores in compute units), a container asks for amd.com/gpu,
// amd.com/gpumem (MiB; absent: the whole GPU) and amd.com/gpucores (a percentage of each GPU's compute units,
// 1 to 100; absent: 100), and the pod's device lists name each GPU's registered model.
package amd

import (
	"encoding/json"
	"fmt"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Family is AMD.
type Family struct{}

func (Family) Name() string    { return "amd" }
func (Family) Section() string { return "amd" }

// Kinds returns the AMD Kind.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceCountName  string `json:"resourceCountName"`
		ResourceMemoryName string `json:"resourceMemoryName"`
		ResourceCoreName   string `json:"resourceCoreName"`
	}
	if err := device.Decode("amd", section, &s); err != nil {
		return nil, err
	}
	cores := device.Or(s.ResourceCoreName, "amd.com/gpucores")
	return []device.Kind{{
		Vendor: "amd", Name: "AMD", Word: "GPU",
		Register:   "hami.io/node-amd-register",
		ToAllocate: "hami.io/amd-devices-to-allocate",
		Allocated:  "hami.io/amd-devices-allocated",
		UseType:    "amd.com/use-gputype", NoUseType: "amd.com/nouse-gputype",
		UseUUID: "amd.com/use-gpu-uuid", NoUseUUID: "amd.com/nouse-gpu-uuid",
		Count:                device.Or(s.ResourceCountName, "amd.com/gpu"),
		Memory:               device.Or(s.ResourceMemoryName, "amd.com/gpumem"),
		Cores:                cores,
		DefaultCores:         100,
		CoresPercentOfDevice: true,
		ListDeviceType:       true,
		// CheckHealth: a node whose amd.com/gpu capacity is 0 (or absent) is never registered.
		CountCapacityRegisters: true,
		Mutate:                 func(r *device.Request) string { return mutate(r, cores) },
	}}, nil
}

// mutate is HAMi's MutateAdmission for AMD: a cores percentage outside 1..100 is refused.
func mutate(r *device.Request, coresRes string) string {
	if r.HasCores && (r.Cores < 1 || r.Cores > 100) {
		return fmt.Sprintf("%s %d is not an integer percentage between 1 and 100", coresRes, r.Cores)
	}
	return ""
}
