//go:build linux && cgo

package nvmlsource

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

var _ agent.MigManager = (*Source)(nil)

// ciProfileBySlices is the compute-instance profile spanning a whole GPU instance of that many slices: the
// device plugin gives a container one compute instance over its whole GPU instance, as HAMi does.
var ciProfileBySlices = map[uint32]int{
	1: nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE,
	2: nvml.COMPUTE_INSTANCE_PROFILE_2_SLICE,
	3: nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE,
	4: nvml.COMPUTE_INSTANCE_PROFILE_4_SLICE,
	6: nvml.COMPUTE_INSTANCE_PROFILE_6_SLICE,
	7: nvml.COMPUTE_INSTANCE_PROFILE_7_SLICE,
	8: nvml.COMPUTE_INSTANCE_PROFILE_8_SLICE,
}

// giProfile is one GPU-instance profile a GPU offers, with its registration name.
type giProfile struct {
	index int // nvml.GPU_INSTANCE_PROFILE_*
	name  string
	info  nvml.GpuInstanceProfileInfo
}

// migDevice is what a MIG device handle says about the instance it stands for.
type migDevice struct {
	uuid string
	ci   uint32
	busy bool
}

// migGPU is a GPU in MIG mode, opened for instance work.
type migGPU struct {
	uuid     string
	dev      nvml.Device
	profiles []giProfile
}

// openMigGPU finds the GPU by UUID and reads its profiles; the GPU must be in MIG mode.
func (s *Source) openMigGPU(uuid string) (*migGPU, error) {
	d, ret := s.lib.DeviceGetHandleByUUID(uuid)
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("GPU %s: %w", uuid, fail("DeviceGetHandleByUUID", ret))
	}
	return s.migGPU(d, uuid)
}

func (s *Source) migGPU(d nvml.Device, uuid string) (*migGPU, error) {
	cur, _, ret := d.GetMigMode()
	if ret != nvml.SUCCESS || cur != nvml.DEVICE_MIG_ENABLE {
		return nil, fmt.Errorf("GPU %s is not in MIG mode (the agent never changes a GPU's MIG mode)", uuid)
	}
	mem, ret := d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("GPU %s: %w", uuid, fail("GetMemoryInfo", ret))
	}
	g := &migGPU{uuid: uuid, dev: d}
	for id := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		info, ret := d.GetGpuInstanceProfileInfo(id)
		if ret != nvml.SUCCESS || info.InstanceCount == 0 || info.SliceCount == 0 {
			continue
		}
		g.profiles = append(g.profiles, giProfile{index: id, name: MigProfileName(id, info.SliceCount, info.MemorySizeMB, mem.Total), info: info})
	}
	return g, nil
}

// migDevices maps GPU-instance ids to the MIG device handles NVML lists (one per compute instance).
func (g *migGPU) migDevices() map[uint32]migDevice {
	out := map[uint32]migDevice{}
	n, ret := g.dev.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return out
	}
	for i := range n {
		md, ret := g.dev.GetMigDeviceHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		gi, r1 := md.GetGpuInstanceId()
		ci, r2 := md.GetComputeInstanceId()
		uuid, r3 := md.GetUUID()
		if r1 != nvml.SUCCESS || r2 != nvml.SUCCESS || r3 != nvml.SUCCESS {
			continue
		}
		out[uint32(gi)] = migDevice{uuid: uuid, ci: uint32(ci), busy: hasProcesses(md)}
	}
	return out
}

// hasProcesses reports whether a process runs on the device; a failed query counts as busy, so that nothing in
// use is destroyed on a guess.
func hasProcesses(d nvml.Device) bool {
	for _, get := range []func() ([]nvml.ProcessInfo, nvml.Return){d.GetComputeRunningProcesses, d.GetGraphicsRunningProcesses} {
		procs, ret := get()
		switch {
		case ret == nvml.ERROR_NOT_SUPPORTED:
		case ret != nvml.SUCCESS || len(procs) > 0:
			return true
		}
	}
	return false
}

// computeInstance is the first compute instance of a GPU instance.
func computeInstance(gi nvml.GpuInstance) (nvml.ComputeInstance, uint32, bool) {
	for id := range nvml.COMPUTE_INSTANCE_PROFILE_COUNT {
		info, ret := gi.GetComputeInstanceProfileInfo(id, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if ret != nvml.SUCCESS {
			continue
		}
		cis, ret := gi.GetComputeInstances(&info)
		if ret != nvml.SUCCESS {
			continue
		}
		for _, ci := range cis {
			if ci == nil {
				continue
			}
			if data, ret := ci.GetInfo(); ret == nvml.SUCCESS {
				return ci, data.Id, true
			}
		}
	}
	return nil, 0, false
}

// instance is one GPU instance with its profile.
type instance struct {
	gi      nvml.GpuInstance
	profile giProfile
	info    nvml.GpuInstanceInfo
}

// instances lists the GPU's GPU instances in id order.
func (g *migGPU) instances() ([]instance, error) {
	var out []instance
	for _, p := range g.profiles {
		gis, ret := g.dev.GetGpuInstances(&p.info)
		if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_NOT_FOUND {
			continue
		}
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("GPU %s: %w", g.uuid, fail("GetGpuInstances("+p.name+")", ret))
		}
		for _, gi := range gis {
			info, ret := gi.GetInfo()
			if ret != nvml.SUCCESS {
				return nil, fmt.Errorf("GPU %s: %w", g.uuid, fail("GpuInstance.GetInfo", ret))
			}
			out = append(out, instance{gi: gi, profile: p, info: info})
		}
	}
	slices.SortFunc(out, func(a, b instance) int { return int(a.info.Id) - int(b.info.Id) })
	return out, nil
}

// describe turns a GPU instance into the agent's MigInstance.
func (g *migGPU) describe(in instance, migs map[uint32]migDevice) agent.MigInstance {
	m := agent.MigInstance{
		GPUUUID: g.uuid, Profile: in.profile.name, GPUInstanceID: in.info.Id,
		Placement: codec.MigPlacement{Start: int32(in.info.Placement.Start), Size: int32(in.info.Placement.Size)},
	}
	if _, id, ok := computeInstance(in.gi); ok {
		m.ComputeInstanceID, m.HasComputeInstance = id, true
	}
	if md, ok := migs[in.info.Id]; ok {
		m.MigUUID, m.Busy = md.uuid, md.busy
	}
	return m
}

// MigInstances lists the MIG instances of every GPU in MIG mode.
func (s *Source) MigInstances() ([]agent.MigInstance, error) {
	n, ret := s.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fail("DeviceGetCount", ret)
	}
	var out []agent.MigInstance
	for i := range n {
		d, ret := s.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, fail(fmt.Sprintf("DeviceGetHandleByIndex(%d)", i), ret)
		}
		if cur, _, ret := d.GetMigMode(); ret != nvml.SUCCESS || cur != nvml.DEVICE_MIG_ENABLE {
			continue
		}
		uuid, ret := d.GetUUID()
		if ret != nvml.SUCCESS {
			return nil, fail(fmt.Sprintf("GetUUID (GPU %d)", i), ret)
		}
		g, err := s.migGPU(d, uuid)
		if err != nil {
			return nil, err
		}
		ins, err := g.instances()
		if err != nil {
			return nil, err
		}
		migs := g.migDevices()
		for _, in := range ins {
			out = append(out, g.describe(in, migs))
		}
	}
	return out, nil
}

// CreateMigInstance creates the GPU instance of profile at placement and a compute instance over all of it.
func (s *Source) CreateMigInstance(gpuUUID, profile string, pl codec.MigPlacement) (agent.MigInstance, error) {
	g, err := s.openMigGPU(gpuUUID)
	if err != nil {
		return agent.MigInstance{}, err
	}
	i := slices.IndexFunc(g.profiles, func(p giProfile) bool { return p.name == profile })
	if i < 0 {
		names := make([]string, len(g.profiles))
		for j, p := range g.profiles {
			names[j] = p.name
		}
		return agent.MigInstance{}, fmt.Errorf("GPU %s offers no MIG profile %q (it offers %s)", gpuUUID, profile, strings.Join(names, ", "))
	}
	p := g.profiles[i]
	want := nvml.GpuInstancePlacement{Start: uint32(pl.Start), Size: uint32(pl.Size)}
	possible, ret := g.dev.GetGpuInstancePossiblePlacements(&p.info)
	if ret != nvml.SUCCESS {
		return agent.MigInstance{}, fmt.Errorf("GPU %s: %w", gpuUUID, fail("GetGpuInstancePossiblePlacements("+profile+")", ret))
	}
	if !slices.Contains(possible, want) {
		return agent.MigInstance{}, fmt.Errorf("GPU %s: MIG profile %s cannot be placed at slices [%d,%d) (NVML offers %s)",
			gpuUUID, profile, pl.Start, pl.Start+pl.Size, placementList(possible))
	}
	ciProfile, ok := ciProfileBySlices[p.info.SliceCount]
	if !ok {
		return agent.MigInstance{}, fmt.Errorf("GPU %s: MIG profile %s has %d slices: no compute-instance profile spans it", gpuUUID, profile, p.info.SliceCount)
	}
	existing, err := g.instances()
	if err != nil {
		return agent.MigInstance{}, err
	}
	var gi nvml.GpuInstance
	created := false
	for _, in := range existing {
		if in.profile.index == p.index && in.info.Placement == want {
			if _, _, has := computeInstance(in.gi); has {
				return agent.MigInstance{}, fmt.Errorf("GPU %s: a MIG instance %s already exists at slices [%d,%d) (GPU instance %d)",
					gpuUUID, profile, pl.Start, pl.Start+pl.Size, in.info.Id)
			}
			gi = in.gi
		}
	}
	if gi == nil {
		if gi, ret = g.dev.CreateGpuInstanceWithPlacement(&p.info, &want); ret != nvml.SUCCESS {
			return agent.MigInstance{}, fmt.Errorf("GPU %s: cannot create MIG instance %s at slices [%d,%d): %w",
				gpuUUID, profile, pl.Start, pl.Start+pl.Size, fail("CreateGpuInstanceWithPlacement", ret))
		}
		created = true
	}
	undo := func(err error) (agent.MigInstance, error) {
		if created {
			if ret := gi.Destroy(); ret != nvml.SUCCESS {
				err = errors.Join(err, fmt.Errorf("and the new GPU instance could not be destroyed: %w", fail("GpuInstance.Destroy", ret)))
			}
		}
		return agent.MigInstance{}, fmt.Errorf("GPU %s: MIG instance %s at slices [%d,%d): %w", gpuUUID, profile, pl.Start, pl.Start+pl.Size, err)
	}
	ciInfo, ret := gi.GetComputeInstanceProfileInfo(ciProfile, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if ret != nvml.SUCCESS {
		return undo(fail("GetComputeInstanceProfileInfo", ret))
	}
	ci, ret := gi.CreateComputeInstance(&ciInfo)
	if ret != nvml.SUCCESS {
		return undo(fail("CreateComputeInstance", ret))
	}
	info, ret := gi.GetInfo()
	if ret != nvml.SUCCESS {
		_ = ci.Destroy()
		return undo(fail("GpuInstance.GetInfo", ret))
	}
	m := g.describe(instance{gi: gi, profile: p, info: info}, g.migDevices())
	if m.MigUUID == "" {
		_ = ci.Destroy()
		return undo(fmt.Errorf("NVML lists no MIG device for GPU instance %d", info.Id))
	}
	s.opts.Log.Info("created a MIG instance", "gpu", gpuUUID, "profile", profile, "start", pl.Start, "size", pl.Size,
		"gpuInstance", m.GPUInstanceID, "computeInstance", m.ComputeInstanceID, "mig", m.MigUUID)
	return m, nil
}

// DestroyMigInstance destroys the GPU instance's compute instances and the GPU instance; one already gone is not
// an error. The instance is found by id and must still be at the same placement (ids are reused).
func (s *Source) DestroyMigInstance(inst agent.MigInstance) error {
	g, err := s.openMigGPU(inst.GPUUUID)
	if err != nil {
		return err
	}
	ins, err := g.instances()
	if err != nil {
		return err
	}
	for _, in := range ins {
		if in.info.Id != inst.GPUInstanceID {
			continue
		}
		if int32(in.info.Placement.Start) != inst.Placement.Start || int32(in.info.Placement.Size) != inst.Placement.Size {
			return fmt.Errorf("GPU %s: GPU instance %d is at slices [%d,%d) now, not [%d,%d): not destroyed", inst.GPUUUID, in.info.Id,
				in.info.Placement.Start, in.info.Placement.Start+in.info.Placement.Size, inst.Placement.Start, inst.Placement.Start+inst.Placement.Size)
		}
		for range nvml.COMPUTE_INSTANCE_PROFILE_COUNT * 8 {
			ci, _, ok := computeInstance(in.gi)
			if !ok {
				break
			}
			if ret := ci.Destroy(); ret != nvml.SUCCESS {
				return fmt.Errorf("GPU %s: GPU instance %d: %w", inst.GPUUUID, in.info.Id, fail("ComputeInstance.Destroy", ret))
			}
		}
		if ret := in.gi.Destroy(); ret != nvml.SUCCESS {
			return fmt.Errorf("GPU %s: GPU instance %d: %w", inst.GPUUUID, in.info.Id, fail("GpuInstance.Destroy", ret))
		}
		return nil
	}
	return nil
}

func placementList(pls []nvml.GpuInstancePlacement) string {
	parts := make([]string, len(pls))
	for i, p := range pls {
		parts[i] = fmt.Sprintf("[%d,%d)", p.Start, p.Start+p.Size)
	}
	return strings.Join(parts, " ")
}
