// Package agentapi holds the node agent's wire types: the bodies of its GET /usage and GET /devices. Readers
// (the usage reader, the terminal UI, the demo's simulated usage) import only this package, as kubelet's API
// types live apart from kubelet, so that they do not link the agent, NVML or Prometheus.
package agentapi

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// UsageReport is the body of GET /usage: the node's GPUs as they are now.
type UsageReport struct {
	Node string     `json:"node"`
	Time string     `json:"time"` // RFC 3339 with nanoseconds
	GPUs []GPUUsage `json:"gpus"`
}

// GPUUsage is one GPU's live usage.
type GPUUsage struct {
	Index int    `json:"index"`
	UUID  string `json:"uuid"`
	// Type is the type string the GPU registers with (HAMi v2.8+ rule).
	Type    string `json:"type"`
	Mode    string `json:"mode"`
	Healthy bool   `json:"healthy"`
	// Registered is false for GPUs excluded from the registration (or not registered in observe mode).
	Registered       bool   `json:"registered"`
	MemoryUsedBytes  uint64 `json:"memoryUsedBytes"`
	MemoryTotalBytes uint64 `json:"memoryTotalBytes"`
	// Utilization is 0..1; null when NVML does not report it (MIG-enabled GPUs).
	Utilization *float64       `json:"utilization"`
	Processes   []ProcessUsage `json:"processes"`
	// MigInstances are the MIG instances on a GPU in MIG mode (what profiles and slices are taken), in GPU-instance
	// id order; empty on other GPUs and where the GPU source cannot list them.
	MigInstances []MigInstanceUsage `json:"migInstances,omitempty"`
	Error        string             `json:"error,omitempty"`
}

// MigInstanceUsage is one MIG instance on a GPU: a GPU instance of a profile at a placement, with its compute
// instance, and the pod whose hami.io/vgpu-mig-allocations names its MIG UUID.
type MigInstanceUsage struct {
	// Profile is the GPU-instance profile as the GPU registers it ("1g.10gb").
	Profile string `json:"profile"`
	// Placement is the slices the instance takes: [start, start+size).
	Placement codec.MigPlacement `json:"placement"`
	// GPUInstanceID is NVML's GPU instance id.
	GPUInstanceID uint32 `json:"gpuInstanceID"`
	// ComputeInstanceID is null for a GPU instance without a compute instance.
	ComputeInstanceID *uint32 `json:"computeInstanceID"`
	// MigUUID is the MIG device's UUID, what the container's NVIDIA_VISIBLE_DEVICES names.
	MigUUID string `json:"migUUID,omitempty"`
	// Busy is true when processes run on the instance.
	Busy bool `json:"busy"`
	// Pod is the pod whose hami.io/vgpu-mig-allocations names the MIG UUID; absent when none does.
	Pod *PodRef `json:"pod,omitempty"`
}

// ProcessUsage is one process on a GPU, with its pod when it runs in one.
type ProcessUsage struct {
	PID             uint32 `json:"pid"`
	MemoryUsedBytes uint64 `json:"memoryUsedBytes"`
	// Pod is set when the process's cgroup names a pod; Namespace and Name are empty when the pod is not (or no
	// longer) known to the API server.
	Pod         *PodRef `json:"pod,omitempty"`
	ContainerID string  `json:"containerID,omitempty"`
}

// PodRef names a pod.
type PodRef struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
}

// DevicesReport is the body of GET /devices: the registration the agent builds (and in full mode writes).
type DevicesReport struct {
	Node       string             `json:"node"`
	Mode       string             `json:"mode"`
	Format     string             `json:"format"`
	Annotation string             `json:"annotation"`
	Value      string             `json:"value"`
	Devices    []codec.DeviceInfo `json:"devices"`
}
