// Package mthreads describes Moore Threads GPUs (MTT S4000 ...) as HAMi v2.10 schedules them
// (pkg/device/mthreads/device.go): no register annotation (the devices are derived from the node's capacity
// of the core resource, 16 cores per GPU, and of the memory resource in 512 MiB units), a container asks for
// mthreads.com/vgpu with sgpu-memory (512 MiB units, one of 2, 4, 8, 16, 32, 64, 96) and sgpu-core (sixteenths
// of a GPU) as the total over its GPUs, every container of a pod shares one GPU, and the bind writes the GPU
// indices, node and time the Moore Threads device plugin reads.
package mthreads

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Units of HAMi's Mthreads resources.
const (
	// MemoryFactor is MiB per unit of mthreads.com/sgpu-memory.
	MemoryFactor = 512
	// CoresPerGPU are the sgpu-core units of one GPU.
	CoresPerGPU = 16
	// MemoryPerGPU are the sgpu-memory units the webhook gives a container that takes whole GPUs.
	MemoryPerGPU = 96
)

// Annotations the bind writes for the Moore Threads device plugin.
const (
	GPUIndexAnnotation      = "mthreads.com/gpu-index"
	PredicateNodeAnnotation = "mthreads.com/predicate-node"
	PredicateTimeAnnotation = "mthreads.com/predicate-time"
	// Allocated is both the to-allocate and the allocated list: HAMi writes only this one.
	Allocated = "hami.io/mthreads-vgpu-devices-allocated"
)

// LegalMemory are the sgpu-memory values HAMi's webhook accepts for one GPU.
var LegalMemory = []int64{2, 4, 8, 16, 32, 64, 96}

// Family is Moore Threads.
type Family struct{}

func (Family) Name() string    { return "mthreads" }
func (Family) Section() string { return "mthreads" }

// Kinds returns the Mthreads Kind.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceCountName  string `json:"resourceCountName"`
		ResourceMemoryName string `json:"resourceMemoryName"`
		ResourceCoreName   string `json:"resourceCoreName"`
	}
	if err := device.Decode("mthreads", section, &s); err != nil {
		return nil, err
	}
	mem := device.Or(s.ResourceMemoryName, "mthreads.com/sgpu-memory")
	cores := device.Or(s.ResourceCoreName, "mthreads.com/sgpu-core")
	return []device.Kind{{
		Vendor: "mthreads", Name: "Mthreads", Word: "GPU",
		ReadRegister: device.FromNode(func(n *corev1.Node) []codec.DeviceInfo { return NodeDevices(n, mem, cores) }),
		ToAllocate:   Allocated,
		Allocated:    Allocated,
		UseUUID:      "mthreads.ai/use-gpuuuid", NoUseUUID: "mthreads.ai/nouse-gpuuuid",
		Count:        device.Or(s.ResourceCountName, "mthreads.com/vgpu"),
		Memory:       mem,
		Cores:        cores,
		MemoryFactor: MemoryFactor,
		Mutate:       Mutate,
		ReadRequest:  device.Share{PerDevice: device.SplitEvenly}.Read,
		Rows:         []device.Row{OneDeviceRow},
		BindExtra:    bindExtra,
		ExtraKeys:    []string{GPUIndexAnnotation, PredicateNodeAnnotation, PredicateTimeAnnotation},
	}}, nil
}

// NodeDevices is HAMi's GetNodeDevices for Mthreads: capacity[cores]/16 GPUs (rounded up) named
// <node>-mthreads-<i>, each with 100 slots, 16 cores and an equal share of capacity[memory] x 512 MiB.
func NodeDevices(n *corev1.Node, memRes, coreRes string) []codec.DeviceInfo {
	cores, ok := device.CapacityCount(n, coreRes, CoresPerGPU*device.MaxCapacityDevices)
	if !ok {
		return nil
	}
	memTotal, _ := device.CapacityCount(n, memRes, 1<<30-1)
	var out []codec.DeviceInfo
	for i := int64(0); i*CoresPerGPU < cores; i++ {
		out = append(out, codec.DeviceInfo{ID: fmt.Sprintf("%s-mthreads-%d", n.Name, i), Index: int(i), Count: 100,
			Devmem: memTotal * MemoryFactor * CoresPerGPU / cores, Devcore: CoresPerGPU, Type: "Mthreads", Health: true})
	}
	return out
}

// Mutate is HAMi's MutateAdmission for Mthreads: a container of several GPUs, or of one GPU without memory,
// takes them whole (16 cores and 96 memory units each, whatever it named); one GPU with memory must name one
// of LegalMemory.
func Mutate(r *device.Request) string {
	if r.Count > 1 || !r.HasMemory {
		r.Cores, r.Memory, r.HasCores, r.HasMemory = r.Count*CoresPerGPU, r.Count*MemoryPerGPU, true, true
		return ""
	}
	for _, v := range LegalMemory {
		if r.Memory == v {
			return ""
		}
	}
	return fmt.Sprintf("sgpu memory %d is not one of %s", r.Memory, joinInts(LegalMemory))
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}

// bindExtra is HAMi's PatchAnnotations for Mthreads: the GPU indices of the last container that has GPUs,
// the node, and the bind time in nanoseconds.
func bindExtra(_ *device.Kind, containers [][]device.Placed, annos map[string]string, now int64) map[string]string {
	idx := device.LastIndices(containers)
	if idx == "" {
		return nil
	}
	return map[string]string{
		GPUIndexAnnotation:      idx,
		PredicateNodeAnnotation: annos[codec.PodNodeAnnotation],
		PredicateTimeAnnotation: strconv.FormatInt(now*1e9, 10),
	}
}
