// Package cambricon describes Cambricon MLUs as HAMi v2.10 schedules them (pkg/device/cambricon/device.go):
// no register annotation (the devices are derived from the node's capacity of the core resource, 100 per
// MLU, its memory resource in 256 MiB units, and the Model label), memory requested in 256 MiB units, 100 %
// cores when unnamed, the namespace quota checked inside Fit as for NVIDIA, and the CAMBRICON_DSMLU_*
// pod annotations the device plugin reads.
package cambricon

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// MemoryFactor is MiB per unit of cambricon.com/mlu.smlu.vmemory.
const MemoryFactor = 256

// Family is Cambricon.
type Family struct{}

func (Family) Name() string    { return "cambricon" }
func (Family) Section() string { return "cambricon" }

// Kinds returns the MLU Kind.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceCountName  string `json:"resourceCountName"`
		ResourceMemoryName string `json:"resourceMemoryName"`
		ResourceCoreName   string `json:"resourceCoreName"`
	}
	if err := device.Decode("cambricon", section, &s); err != nil {
		return nil, err
	}
	mem := device.Or(s.ResourceMemoryName, "cambricon.com/mlu.smlu.vmemory")
	cores := device.Or(s.ResourceCoreName, "cambricon.com/mlu.smlu.vcore")
	return []device.Kind{{
		Vendor: "cambricon", Name: "MLU", Word: "MLU",
		ReadRegister: device.FromNode(func(n *corev1.Node) []codec.DeviceInfo { return nodeDevices(n, mem, cores) }),
		ToAllocate:   "hami.io/cambricon-mlu-devices-to-allocate",
		Allocated:    "hami.io/cambricon-mlu-devices-allocated",
		UseUUID:      "cambricon.com/use-gpuuuid", NoUseUUID: "cambricon.com/nouse-gpuuuid",
		Count:        device.Or(s.ResourceCountName, "cambricon.com/mlu"),
		Memory:       mem,
		Cores:        cores,
		MemoryFactor: MemoryFactor,
		DefaultCores: 100,
		Rows:         []device.Row{device.QuotaRow},
		BindExtra:    dsmlu,
		ExtraKeys:    []string{"CAMBRICON_DSMLU_ASSIGNED", "CAMBRICON_DSMLU_PROFILE"},
	}}, nil
}

// nodeDevices is HAMi's GetNodeDevices for MLUs: capacity[cores]/100 devices named <node>-cambricon-mlu-<i>,
// each with 100 slots, 100 % cores and an equal share of capacity[memory] x 256 MiB, typed by the Model label
// when it names an MLU.
func nodeDevices(n *corev1.Node, memRes, coreRes string) []codec.DeviceInfo {
	cards, ok := device.CapacityCount(n, coreRes, 100*device.MaxCapacityDevices)
	if !ok {
		return nil
	}
	memTotal, _ := device.CapacityCount(n, memRes, 1<<40-1)
	typ := strings.TrimSpace(n.Labels["Model"])
	if !strings.Contains(strings.ToUpper(typ), "MLU") {
		typ = "MLU"
	}
	var out []codec.DeviceInfo
	for i := int64(0); i*100 < cards; i++ {
		out = append(out, codec.DeviceInfo{ID: fmt.Sprintf("%s-cambricon-mlu-%d", n.Name, i), Index: int(i), Count: 100,
			Devmem: memTotal * MemoryFactor * 100 / cards, Devcore: 100, Type: typ, Health: true})
	}
	return out
}

// dsmlu is HAMi's PatchAnnotations for MLUs: the first device's "<index>_<cores>_<memory/256>" profile.
func dsmlu(k *device.Kind, containers [][]device.Placed, podAnnos map[string]string, now int64) map[string]string {
	out := map[string]string{"CAMBRICON_DSMLU_ASSIGNED": "false"}
	for _, c := range containers {
		if len(c) > 0 {
			d := c[0]
			out["CAMBRICON_DSMLU_PROFILE"] = fmt.Sprintf("%d_%d_%d", d.Index, d.Cores, d.Mem/MemoryFactor)
			break
		}
	}
	return out
}
