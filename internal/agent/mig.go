package agent

import "github.com/kubectl-hami/kubectl-hami/internal/codec"

// MigInstance is one MIG device on a GPU in MIG mode: a GPU instance of a profile at a placement, and its compute
// instance (the device plugin creates one compute instance spanning the whole GPU instance, as HAMi does).
type MigInstance struct {
	// GPUUUID is the parent GPU.
	GPUUUID string `json:"gpuUUID"`
	// Profile is the GPU-instance profile as the registration names it ("1g.10gb", "1g.10gb+me").
	Profile string `json:"profile"`
	// Placement is the instance's slices on the GPU.
	Placement codec.MigPlacement `json:"placement"`
	// GPUInstanceID and ComputeInstanceID are NVML's ids; HasComputeInstance is false for a GPU instance without
	// one (left by a failed creation or by hand).
	GPUInstanceID      uint32 `json:"gpuInstanceID"`
	ComputeInstanceID  uint32 `json:"computeInstanceID"`
	HasComputeInstance bool   `json:"-"`
	// MigUUID is the MIG device's UUID ("MIG-..."), what NVIDIA_VISIBLE_DEVICES names; empty without a compute
	// instance.
	MigUUID string `json:"migUUID,omitempty"`
	// Busy is true when a process runs on the instance (or NVML could not say): it is never destroyed then.
	Busy bool `json:"busy"`
}

// Overlaps reports whether the instance's slices intersect p.
func (m MigInstance) Overlaps(p codec.MigPlacement) bool {
	return m.Placement.Start < p.Start+p.Size && p.Start < m.Placement.Start+m.Placement.Size
}

// MigManager creates and destroys MIG instances. A GPUSource that can (the NVML source) implements it; the agent
// hands it to the device plugin, which creates the instances the scheduler placed at Allocate. It never changes a
// GPU's MIG mode.
type MigManager interface {
	// MigInstances lists every MIG instance on the GPUs in MIG mode.
	MigInstances() ([]MigInstance, error)
	// CreateMigInstance creates a GPU instance of profile at placement on the GPU and a compute instance over all
	// of it. When a GPU instance of that profile already exists at exactly that placement without a compute
	// instance, it gets one. It fails (and leaves nothing behind) when the placement is not one NVML offers for
	// the profile or the slices are taken.
	CreateMigInstance(gpuUUID, profile string, placement codec.MigPlacement) (MigInstance, error)
	// DestroyMigInstance destroys the compute instance and the GPU instance.
	DestroyMigInstance(inst MigInstance) error
}
