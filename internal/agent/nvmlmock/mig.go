//go:build linux && cgo

package nvmlmock

import (
	"fmt"
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// EnableMIG turns MIG mode on for GPU i and completes go-nvml's MIG mock with what the device plugin needs and the
// mock lacks: a placement overlapping an existing GPU instance (or not offered for the profile) is refused as
// NVML refuses it, a GPU instance with compute instances cannot be destroyed, and every compute instance is a MIG
// device handle (GetMaxMigDeviceCount, GetMigDeviceHandleByIndex) with a stable MIG UUID and processes set by
// SetMigProcesses.
func (m *GPUs) EnableMIG(i int) {
	dev := m.Devices[i]
	dev.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	create := dev.CreateGpuInstanceWithPlacementFunc
	dev.CreateGpuInstanceWithPlacementFunc = func(info *nvml.GpuInstanceProfileInfo, pl *nvml.GpuInstancePlacement) (nvml.GpuInstance, nvml.Return) {
		if !slices.Contains(dev.Config.MIGProfiles.GpuInstancePlacements[int(info.Id)], *pl) {
			return nil, nvml.ERROR_INVALID_ARGUMENT
		}
		dev.RLock()
		for gi := range dev.GpuInstances {
			p := gi.Info.Placement
			if p.Start < pl.Start+pl.Size && pl.Start < p.Start+p.Size {
				dev.RUnlock()
				return nil, nvml.ERROR_INSUFFICIENT_RESOURCES
			}
		}
		dev.RUnlock()
		gi, ret := create(info, pl)
		if ret == nvml.SUCCESS {
			m.completeGI(gi.(*server.GpuInstance))
		}
		return gi, ret
	}
	dev.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	dev.GetMigDeviceHandleByIndexFunc = func(n int) (nvml.Device, nvml.Return) {
		migs := m.migDevices(i)
		if n < 0 || n >= len(migs) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return migs[n], nvml.SUCCESS
	}
}

// completeGI refuses to destroy a GPU instance that still has compute instances, as NVML does.
func (m *GPUs) completeGI(gi *server.GpuInstance) {
	destroy := gi.DestroyFunc
	gi.DestroyFunc = func() nvml.Return {
		gi.RLock()
		n := len(gi.ComputeInstances)
		gi.RUnlock()
		if n > 0 {
			return nvml.ERROR_IN_USE
		}
		return destroy()
	}
}

// MigUUID is the MIG UUID of GPU instance gi on GPU i (the mock's MIG devices keep theirs for the instance's life).
func (m *GPUs) MigUUID(i int, gi uint32) string {
	return fmt.Sprintf("MIG-%s-gi%d", m.Devices[i].UUID[len("GPU-"):], gi)
}

// SetMigProcesses sets the processes running on GPU i's MIG device of GPU instance gi.
func (m *GPUs) SetMigProcesses(i int, gi uint32, procs ...nvml.ProcessInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.migProcs == nil {
		m.migProcs = map[string][]nvml.ProcessInfo{}
	}
	m.migProcs[m.MigUUID(i, gi)] = procs
}

// GpuInstances lists GPU i's GPU instances, id order.
func (m *GPUs) GpuInstances(i int) []*server.GpuInstance {
	dev := m.Devices[i]
	dev.RLock()
	defer dev.RUnlock()
	var out []*server.GpuInstance
	for gi := range dev.GpuInstances {
		out = append(out, gi)
	}
	slices.SortFunc(out, func(a, b *server.GpuInstance) int { return int(a.Info.Id) - int(b.Info.Id) })
	return out
}

// migDevices are GPU i's MIG device handles: one per compute instance, in GPU-instance id order.
func (m *GPUs) migDevices(i int) []nvml.Device {
	var out []nvml.Device
	for _, gi := range m.GpuInstances(i) {
		gi.RLock()
		var cis []*server.ComputeInstance
		for ci := range gi.ComputeInstances {
			cis = append(cis, ci)
		}
		gi.RUnlock()
		for _, ci := range cis {
			giID, ciID, uuid := gi.Info.Id, ci.Info.Id, m.MigUUID(i, gi.Info.Id)
			parent := m.Devices[i]
			out = append(out, &mock.Device{
				GetUUIDFunc:                            func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
				GetGpuInstanceIdFunc:                   func() (int, nvml.Return) { return int(giID), nvml.SUCCESS },
				GetComputeInstanceIdFunc:               func() (int, nvml.Return) { return int(ciID), nvml.SUCCESS },
				IsMigDeviceHandleFunc:                  func() (bool, nvml.Return) { return true, nvml.SUCCESS },
				GetDeviceHandleFromMigDeviceHandleFunc: func() (nvml.Device, nvml.Return) { return parent, nvml.SUCCESS },
				GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
					m.mu.Lock()
					defer m.mu.Unlock()
					return append([]nvml.ProcessInfo(nil), m.migProcs[uuid]...), nvml.SUCCESS
				},
				GetGraphicsRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS },
			})
		}
	}
	return out
}
