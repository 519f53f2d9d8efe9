// Package metaxsgpu describes MetaX sGPUs (shared GPUs) as HAMi v2.10 schedules them
// (pkg/device/metax/sdevice.go, MetaxSDevices; protocol.go): the device plugin registers its own JSON list in
// metax-tech.com/node-gpu-devices, a container asks for metax-tech.com/sgpu (count), vcore (percent, 100 when
// unnamed) and vmemory (a bare number is GiB, one with a unit is bytes; unnamed: the whole device), the common
// walk decides, and the bind writes MetaX's own list (metax-tech.com/gpu-devices-allocated) and the predicate
// time beside HAMi's lists.
//
// The QoS policy rule (checkDeviceQos) is the family's QosRow: a used sGPU takes a pod asking for less
// than the whole GPU only when the pods sharing it have the pod's metax-tech.com/sgpu-qos-policy.
//
// A container asking for every core takes its sGPUs by MetaLink zone (Prioritize, prioritizeExclusiveDevices).
//
// Not modelled: app classes (metax-tech.com/sgpu-app-class online/offline) and the MetaLink node score
// (scoreExclusiveDevices, only with the pod's topology-aware annotation: sgpuTopologyAware is false in the
// chart).
package metaxsgpu

import (
	"encoding/json"
	"strconv"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Name is HAMi's CommonWord for the type, also the device type of every registered sGPU.
const Name = "Metax-SGPU"

// Annotations of MetaX sGPU (protocol.go).
const (
	RegisterAnnotation  = "metax-tech.com/node-gpu-devices"
	AllocatedAnnotation = "metax-tech.com/gpu-devices-allocated"
	PredicateTime       = "metax-tech.com/predicate-time"
	QosPolicyAnnotation = "metax-tech.com/sgpu-qos-policy"
)

// MemoryFactor turns a bare vmemory (GiB) into MiB.
const MemoryFactor = 1024

// Family is MetaX's shared GPU; it reads the same device-config.yaml section as the whole GPU.
type Family struct{}

func (Family) Name() string    { return "metax-sgpu" }
func (Family) Section() string { return "metax" }

// CardUnhealthy is the sGPU Fit's own reason for an unhealthy device (pkg/device/metax/sdevice.go:52, 347-351),
// where every other family says CardNotHealth.
const CardUnhealthy = "CardUnhealthy"

// Kinds returns the sGPU Kind.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceVCountName  string `json:"resourceVCountName"`
		ResourceVCoreName   string `json:"resourceVCoreName"`
		ResourceVMemoryName string `json:"resourceVMemoryName"`
	}
	if err := device.Decode("metax", section, &s); err != nil {
		return nil, err
	}
	return []device.Kind{{
		Vendor: "metax-sgpu", Name: Name, Word: "GPU",
		Register:     RegisterAnnotation,
		ReadRegister: device.RegisterParsed(ParseRegister),
		ToAllocate:   "hami.io/metax-sgpu-devices-to-allocate",
		Allocated:    "hami.io/metax-sgpu-devices-allocated",
		UseUUID:      "metax-tech.com/use-gpuuuid", NoUseUUID: "metax-tech.com/nouse-gpuuuid",
		Count:         device.Or(s.ResourceVCountName, "metax-tech.com/sgpu"),
		Cores:         device.Or(s.ResourceVCoreName, "metax-tech.com/vcore"),
		Memory:        device.Or(s.ResourceVMemoryName, "metax-tech.com/vmemory"),
		MemoryFactor:  MemoryFactor,
		ReadRequest:   device.Share{Check: device.CheckQos, MiB: device.BareTimesFactor}.Read,
		DefaultCores:  100,
		QosAnnotation: QosPolicyAnnotation,
		QosPolicies:   []string{"best-effort", "fixed-share", "burst-share"},
		Rows:          []device.Row{QosRow},
		Prioritize:    Prioritize,
		UnhealthyCode: CardUnhealthy,
		BindExtra:     bindExtra,
		ExtraKeys:     []string{AllocatedAnnotation, PredicateTime},
	}}, nil
}

// containerDevice is one entry of metax-tech.com/gpu-devices-allocated (ContainerMetaxSDevice).
type containerDevice struct {
	UUID    string `json:"uuid"`
	Compute int64  `json:"compute,omitempty"`
	VRam    int64  `json:"vRam,omitempty"`
}

// bindExtra is the MetaX half of HAMi's PatchAnnotations: every container's devices (uuid, cores, MiB) as a
// JSON list of lists, and the bind time in nanoseconds.
func bindExtra(_ *device.Kind, containers [][]device.Placed, _ map[string]string, now int64) map[string]string {
	list := make([][]containerDevice, len(containers))
	for i, c := range containers {
		list[i] = make([]containerDevice, len(c))
		for j, d := range c {
			list[i][j] = containerDevice{UUID: d.UUID, Compute: d.Cores, VRam: d.Mem}
		}
	}
	b, _ := json.Marshal(list) // strings and integers only: cannot fail
	return map[string]string{AllocatedAnnotation: string(b), PredicateTime: strconv.FormatInt(now*1e9, 10)}
}
