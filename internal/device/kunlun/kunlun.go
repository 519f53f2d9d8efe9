// Package kunlun describes Kunlunxin XPUs as HAMi v2.10 schedules them (pkg/device/kunlun): two Kinds.
//
//   - "kunlun" (device.go): whole XPUs, no register annotation (kunlunxin.com/xpu capacity devices named
//     <node>-kunlun-<i>, 98,304 MiB each, the upper half on NUMA node 1); a container takes unused XPUs whole.
//   - "XPU" (vdevice.go): shared vXPUs registered in hami.io/node-register-xpu; a container asks for
//     kunlunxin.com/vxpu and vxpu-memory (MiB), which the webhook rounds up to a quarter, a half or the whole
//     XPU, with cores in proportion; an XPU is cut in equal slices only.
//
// Both pick their XPUs with HAMi's interconnect rule (topo.go, graghSelect): GraphSelect, over the XPUs in
// HAMi's sorted order.
package kunlun

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// MaxMemory is one XPU's memory in MiB (KunlunMaxMemory).
const MaxMemory = 98304

// Annotations of the two Kinds.
const (
	// WholeAllocated is the whole XPUs' device list; HAMi writes no to-allocate list for them.
	WholeAllocated = "hami.io/kunlun-allocated"
	// DeviceIndexAnnotation lists the last container's XPU indices for the Kunlunxin device plugin.
	DeviceIndexAnnotation = "BAIDU_COM_DEVICE_IDX"
	RegisterAnnotation    = "hami.io/node-register-xpu"
)

// Slices are the vXPU memory sizes (MiB) the webhook rounds a request up to (trimMemory); above the last,
// the whole XPU.
var Slices = []int64{24576, 49152}

// Family is Kunlunxin.
type Family struct{}

func (Family) Name() string    { return "kunlun" }
func (Family) Section() string { return "kunlun" }

// Kinds returns the whole-XPU and the vXPU Kinds.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceCountName   string `json:"resourceCountName"`
		ResourceVCountName  string `json:"resourceVCountName"`
		ResourceVMemoryName string `json:"resourceVMemoryName"`
	}
	if err := device.Decode("kunlun", section, &s); err != nil {
		return nil, err
	}
	count := device.Or(s.ResourceCountName, "kunlunxin.com/xpu")
	const rule = "are interconnected (Kunlun's wings of four and their links)"
	return []device.Kind{{
		Vendor: "kunlun", Name: "kunlun", Word: "XPU",
		ReadRegister: device.FromNode(func(n *corev1.Node) []codec.DeviceInfo { return NodeDevices(n, count) }),
		ToAllocate:   WholeAllocated,
		Allocated:    WholeAllocated,
		UseUUID:      "baidu.com/use-gpuuuid", NoUseUUID: "baidu.com/nouse-gpuuuid",
		Count:         count,
		ReadRequest:   device.WholeRequest,
		SelectInOrder: graphSelect,
		SelectRule:    rule,
		FitFailure:    WholeFitFailure,
		ScoreNode:     ScoreNode,
		BindExtra:     deviceIndex,
		ExtraKeys:     []string{DeviceIndexAnnotation},
	}, {
		Vendor: "kunlun", Name: "XPU", Word: "XPU",
		Register:   RegisterAnnotation,
		Handshake:  "hami.io/node-handshake-xpu",
		ToAllocate: "hami.io/xpu-devices-to-allocate",
		Allocated:  "hami.io/xpu-devices-allocated",
		UseUUID:    "hami.io/use-xpu-uuid", NoUseUUID: "hami.io/no-use-xpu-uuid",
		Count:         device.Or(s.ResourceVCountName, "kunlunxin.com/vxpu"),
		Memory:        device.Or(s.ResourceVMemoryName, "kunlunxin.com/vxpu-memory"),
		Mutate:        Mutate,
		Rows:          []device.Row{EqualShareRow},
		Unslotted:     true,
		SelectInOrder: graphSelect,
		SelectRule:    rule,
		FitFailure:    VFitFailure,
	}}, nil
}

// NodeDevices is HAMi's GetNodeDevices for whole XPUs: capacity[count] devices <node>-kunlun-<i>, 100 slots,
// 98,304 MiB, 100 % cores, the upper half on NUMA node 1.
func NodeDevices(n *corev1.Node, countRes string) []codec.DeviceInfo {
	out := device.CapacityDevices(n, countRes, "kunlun", codec.DeviceInfo{Count: 100, Devmem: MaxMemory, Devcore: 100, Type: "kunlun", Health: true})
	for i := range out {
		if i >= len(out)/2 {
			out[i].Numa = 1
		}
	}
	return out
}

// Mutate is the vXPU webhook and GenerateResourceRequests: memory rounded up to a slice (or the whole XPU),
// cores in proportion to it; no memory is the whole XPU (100 % cores).
func Mutate(r *device.Request) string {
	if !r.HasMemory {
		r.Memory, r.Cores, r.HasMemory, r.HasCores = MaxMemory, 100, true, true
		return ""
	}
	m := int64(MaxMemory)
	for _, s := range Slices {
		if r.Memory <= s {
			m = s
			break
		}
	}
	r.Memory, r.Cores, r.HasCores = m, m*100/MaxMemory, true
	return ""
}

// deviceIndex is the whole-XPU half of PatchAnnotations: the indices of the last container with XPUs.
func deviceIndex(_ *device.Kind, containers [][]device.Placed, _ map[string]string, _ int64) map[string]string {
	if idx := device.LastIndices(containers); idx != "" {
		return map[string]string{DeviceIndexAnnotation: idx}
	}
	return nil
}

// graphSelect is GraphSelect as the Kind's SelectInOrder: Kunlun's rule reads no model.
func graphSelect(order []int, fit []bool, count int, _ string) []int {
	return GraphSelect(order, fit, count)
}
