// Package amd describes AMD GPUs as HAMi v2.10 schedules them (pkg/device/amd/device.go): devices registered
// in hami.io/node-amd-register (HAMi's JSON list, cores in compute units), a container asks for amd.com/gpu,
// amd.com/gpumem (MiB; absent: the whole GPU) and amd.com/gpucores (a percentage of each GPU's compute units,
// 1 to 100; absent: 100), and the pod's device lists name each GPU's registered model.
package amd

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

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
	count := device.Or(s.ResourceCountName, "amd.com/gpu")
	return []device.Kind{{
		Vendor: "amd", Name: "AMD", Word: "GPU",
		Register:   "hami.io/node-amd-register",
		ToAllocate: "hami.io/amd-devices-to-allocate",
		Allocated:  "hami.io/amd-devices-allocated",
		UseType:    "amd.com/use-gputype", NoUseType: "amd.com/nouse-gputype",
		UseUUID: "amd.com/use-gpu-uuid", NoUseUUID: "amd.com/nouse-gpu-uuid",
		Count:        count,
		Memory:       device.Or(s.ResourceMemoryName, "amd.com/gpumem"),
		Cores:        cores,
		DefaultCores: 100,
		WriteList:    device.ListByModel,
		ReadRegister: device.WhileServing(func(n *corev1.Node) (string, string) { return serving(n, count) }, device.RegisterList),
		ReadRequest:  readRequest,
		Mutate:       func(r *device.Request) string { return mutate(r, cores) },
	}}, nil
}

// serving is HAMi's AMD CheckHealth (pkg/device/amd/device.go:195-206): the node's capacity of the count
// resource is a whole number other than 0 (absent reads as 0); otherwise the device plugin is not serving and
// the node is not registered for AMD.
func serving(n *corev1.Node, count string) (field, problem string) {
	q := n.Status.Capacity[corev1.ResourceName(count)]
	if v, ok := q.AsInt64(); ok && v != 0 {
		return "", ""
	}
	return "status.capacity[" + count + "]", "is 0 or absent: HAMi does not register the node's GPUs while the device plugin reports none (its GPUs are not counted)"
}

// mutate is HAMi's MutateAdmission for AMD: a cores percentage outside 1..100 is refused.
func mutate(r *device.Request, coresRes string) string {
	if r.HasCores && (r.Cores < 1 || r.Cores > 100) {
		return fmt.Sprintf("%s %d is not an integer percentage between 1 and 100", coresRes, r.Cores)
	}
	return ""
}

// readRequest is HAMi's common reading with the cores resource a percentage of each device's own compute
// units (a device gives max(1, units x percent / 100)).
func readRequest(k *device.Kind, r *device.Reading) (device.Ask, bool) {
	a, ok := device.ShareRequest(k, r)
	a.CoresOfDevice = true
	return a, ok
}
