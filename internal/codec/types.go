// Package codec reads and writes every annotation HAMi puts on nodes and pods. It is pure: strings in,
// values or errors out. Readers are lenient across HAMi versions; writers produce the newest layout
// unless a legacy one is asked for. Every error names the annotation key and the position of the bad field.
package codec

import "time"

// Annotation keys HAMi reads and writes.
const (
	NodeRegisterAnnotation      = "hami.io/node-nvidia-register"
	NodeHandshakeAnnotation     = "hami.io/node-handshake"
	NodeLockAnnotation          = "hami.io/mutex.lock"
	NodePairScoreAnnotation     = "hami.io/node-nvidia-score"
	NodeCordonAnnotation        = "hami.io/device-cordon"
	PodNodeAnnotation           = "hami.io/vgpu-node"
	PodTimeAnnotation           = "hami.io/vgpu-time"
	PodToAllocateAnnotation     = "hami.io/vgpu-devices-to-allocate"
	PodAllocatedAnnotation      = "hami.io/vgpu-devices-allocated"
	PodBindPhaseAnnotation      = "hami.io/bind-phase"
	PodBindTimeAnnotation       = "hami.io/bind-time"
	PodMigAllocationsAnnotation = "hami.io/vgpu-mig-allocations"
)

// NodeAllocatorAnnotation names, on a Node, the protocol its nvidia device plugin speaks with the scheduler.
// kubectl-hami's agent writes AllocatorKubectlHAMi when it serves the device plugin itself and removes the key
// otherwise; HAMi's device plugin never writes it. A Node without it speaks HAMi's protocol: the plugin knows
// the pod kubelet admits by hami.io/mutex.lock, so binds to the node wait, one pod at a time, for each
// allocation. With AllocatorKubectlHAMi the plugin finds the pod by the Allocate request itself (the entry
// that fits it, then kubelet's admission order), so the scheduler binds to the node without that lock.
const (
	NodeAllocatorAnnotation = "hami.io/node-nvidia-allocator"
	AllocatorKubectlHAMi    = "kubectl-hami/v1"
)

// Values of hami.io/bind-phase: the extender writes allocating at bind, the node's device plugin success or
// failed when it has allocated (or could not allocate) the devices; the extender also writes failed when it
// rolls a bind back.
const (
	BindPhaseAllocating = "allocating"
	BindPhaseSuccess    = "success"
	BindPhaseFailed     = "failed"
)

// DeviceInfo is one physical GPU as the node component registers it.
type DeviceInfo struct {
	ID          string       `json:"id,omitempty"`
	Index       int          `json:"index,omitempty"`
	Count       int32        `json:"count,omitempty"`
	Devmem      int64        `json:"devmem,omitempty"`  // MiB, already scaled by the memory scaling factor
	Devcore     int64        `json:"devcore,omitempty"` // percent, 100 x core scaling
	Type        string       `json:"type,omitempty"`
	Numa        int          `json:"numa,omitempty"`
	Mode        string       `json:"mode,omitempty"` // hami-core | mig | mps; empty means hami-core
	Health      bool         `json:"health,omitempty"`
	MigProfiles []MigProfile `json:"migProfiles,omitempty"`
	// QosPolicy is the device's QoS policy as a family's plugin registers it (MetaX sGPU's qosPolicy); not
	// part of HAMi's device list.
	QosPolicy string `json:"-"`
	// NetworkID is the device's customInfo.NetworkID (Ascend's NPU network), nil when its customInfo has no
	// number there; kubectl-hami reads nothing else of customInfo.
	NetworkID *int `json:"-"`
}

// MigProfile is one MIG profile a GPU offers, with the slice placements NVML reports for it.
type MigProfile struct {
	Name       string         `json:"name"`
	MemoryMB   int64          `json:"memoryMB"`
	Core       int64          `json:"core"`
	SliceCount int32          `json:"sliceCount"`
	Placements []MigPlacement `json:"placements,omitempty"`
}

// MigPlacement is a half-open slice interval [Start, Start+Size) on a MIG GPU.
type MigPlacement struct {
	Start int32 `json:"start"`
	Size  int32 `json:"size"`
}

// ContainerDevice is one GPU share given to one container.
type ContainerDevice struct {
	UUID      string `json:"uuid"`      // GPU UUID (a MIG `[t-s]` suffix is stripped on read)
	Type      string `json:"type"`      // the vendor word, "NVIDIA"
	UsedMem   int64  `json:"usedMem"`   // MiB
	UsedCores int64  `json:"usedCores"` // percent
	// CoreMask is the entry's cores field as written, for a type that records a bit mask of the device's
	// cores there (AWS Neuron); UsedCores is then its number of bits. 0 for other types.
	CoreMask int64 `json:"coreMask,omitempty"`
}

// ContainerDevices is the devices of one container; empty for a container without GPUs.
type ContainerDevices []ContainerDevice

// PodDevices is the per-container device list of a pod, in the order of the annotation's entries.
type PodDevices []ContainerDevices

// NodeLock is the value of hami.io/mutex.lock.
type NodeLock struct {
	Time      time.Time `json:"time"`
	Namespace string    `json:"namespace"` // empty in the legacy time-only form
	Pod       string    `json:"pod"`
}

// Handshake is the value of hami.io/node-handshake.
type Handshake struct {
	State string    `json:"state"` // "Requesting", "Reported", "Deleted" or "" when absent
	Time  time.Time `json:"time"`  // zero when the value has no parsable time
}

// PairScore is one GPU's link scores to its peers (hami.io/node-nvidia-score).
type PairScore struct {
	UUID   string         `json:"uuid,omitempty"`
	Scores map[string]int `json:"score,omitempty"`
}

// MigAllocation is one MIG device reservation in hami.io/vgpu-mig-allocations.
type MigAllocation struct {
	ContainerIndex    int          `json:"containerIndex"`
	DeviceIndex       int          `json:"deviceIndex"`
	GPUUUID           string       `json:"gpuUUID"`
	Profile           string       `json:"profile"`
	Placement         MigPlacement `json:"placement"`
	MigUUID           string       `json:"migUUID,omitempty"`
	GPUInstanceID     *uint32      `json:"gpuInstanceID,omitempty"`
	ComputeInstanceID *uint32      `json:"computeInstanceID,omitempty"`
}
