//go:build linux && cgo

package nvmlsource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// New loads NVML (libnvidia-ml.so.1 through dlopen) and initialises it. Without the library the error wraps
// agent.ErrLibraryNotFound and names it.
func New(opts agent.NVMLOptions) (agent.GPUSource, error) {
	var libOpts []nvml.LibraryOption
	if opts.LibraryPath != "" {
		libOpts = append(libOpts, nvml.WithLibraryPath(opts.LibraryPath))
	}
	return NewFrom(nvml.New(libOpts...), opts)
}

// NewFrom initialises lib, any nvml.Interface (go-nvml's mock servers included), and wraps it.
func NewFrom(lib nvml.Interface, opts agent.NVMLOptions) (*Source, error) {
	if opts.SysRoot == "" {
		opts.SysRoot = "/sys"
	}
	if opts.EventWait <= 0 {
		opts.EventWait = 2 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			if opts.LibraryPath != "" {
				return nil, fmt.Errorf("%w (tried %s)", agent.ErrLibraryNotFound, opts.LibraryPath)
			}
			return nil, agent.ErrLibraryNotFound
		}
		return nil, fmt.Errorf("NVML init failed: %s (is the NVIDIA driver loaded on this node?)", nvmlString(ret))
	}
	s := &Source{lib: lib, opts: opts}
	// nvmlDeviceGetMemoryInfo_v2 (used memory without the driver's reservation, as nvidia-smi shows it) exists
	// only in drivers from 510 on.
	if ext := lib.Extensions(); ext != nil {
		s.memoryV2 = ext.LookupSymbol("nvmlDeviceGetMemoryInfo_v2") == nil
	}
	return s, nil
}

// Source is the GPUSource backed by NVML.
type Source struct {
	lib      nvml.Interface
	opts     agent.NVMLOptions
	memoryV2 bool

	closeOnce sync.Once
}

var _ agent.GPUSource = (*Source)(nil)

// nvmlString renders a Return without calling into a library that may not be loaded.
func nvmlString(r nvml.Return) string {
	if s := r.Error(); s != "" {
		return s
	}
	return fmt.Sprintf("NVML error %d", int32(r))
}

// nvmlError is an NVML call that failed.
type nvmlError struct {
	call string
	ret  nvml.Return
}

func (e *nvmlError) Error() string { return "NVML " + e.call + ": " + nvmlString(e.ret) }

func fail(call string, ret nvml.Return) error { return &nvmlError{call: call, ret: ret} }

// freeEventSet releases an XID event set. A failure leaves nothing to undo (the agent stops watching that set
// either way), so it is logged and not returned.
func (s *Source) freeEventSet(set nvml.EventSet) {
	if ret := set.Free(); ret != nvml.SUCCESS {
		s.opts.Log.Warn("freeing the NVML event set", "err", fail("EventSetFree", ret))
	}
}

// Devices reads every GPU.
func (s *Source) Devices() ([]agent.GPU, error) {
	n, ret := s.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fail("DeviceGetCount", ret)
	}
	out := make([]agent.GPU, n)
	for i := range n {
		out[i] = s.device(i)
	}
	return out, nil
}

// device reads GPU i; a failure is recorded in Err with whatever was read before it.
func (s *Source) device(i int) agent.GPU {
	g := agent.GPU{Index: i}
	d, ret := s.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		g.Err = fail(fmt.Sprintf("DeviceGetHandleByIndex(%d)", i), ret)
		return g
	}
	if g.UUID, ret = d.GetUUID(); ret != nvml.SUCCESS {
		g.UUID, g.Err = "", fail(fmt.Sprintf("GetUUID (GPU %d)", i), ret)
		return g
	}
	if g.Name, ret = d.GetName(); ret != nvml.SUCCESS {
		g.Err = fail("GetName ("+g.UUID+")", ret)
		return g
	}
	mem, ret := d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		g.Err = fail("GetMemoryInfo ("+g.UUID+")", ret)
		return g
	}
	g.MemoryMiB = int64(mem.Total / (1 << 20))
	pci, ret := d.GetPciInfo()
	if ret != nvml.SUCCESS {
		g.Err = fail("GetPciInfo ("+g.UUID+")", ret)
		return g
	}
	g.BusID = cString(pci.BusId[:])
	g.NUMA = agent.NumaNode(s.opts.SysRoot, g.BusID)
	current, _, ret := d.GetMigMode()
	switch {
	case ret == nvml.ERROR_NOT_SUPPORTED:
		// Not MIG-capable.
	case ret != nvml.SUCCESS:
		g.Err = fail("GetMigMode ("+g.UUID+")", ret)
		return g
	case current == nvml.DEVICE_MIG_ENABLE:
		g.MIG = true
		var err error
		if g.MigProfiles, g.MigMaxInstances, err = migProfiles(d, mem.Total); err != nil {
			g.Err = fmt.Errorf("%s: %w", g.UUID, err)
		}
	}
	return g
}

// cString reads a NUL-terminated C char array.
func cString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}

// migProfiles lists the GPU-instance profiles of a MIG-enabled GPU with their possible placements, named the way
// NVIDIA names them ("1g.10gb", "1g.10gb+me", ...), and the largest instance count.
func migProfiles(d nvml.Device, totalBytes uint64) ([]codec.MigProfile, int32, error) {
	type row struct {
		id   int
		info nvml.GpuInstanceProfileInfo
		pls  []nvml.GpuInstancePlacement
	}
	var rows []row
	var maxSM uint32
	var maxSlices uint32
	var most int32
	for id := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		info, ret := d.GetGpuInstanceProfileInfo(id)
		if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_INVALID_ARGUMENT {
			continue
		}
		if ret != nvml.SUCCESS {
			return nil, 0, fail(fmt.Sprintf("GetGpuInstanceProfileInfo(%d)", id), ret)
		}
		if info.InstanceCount == 0 || info.SliceCount == 0 {
			continue
		}
		pls, ret := d.GetGpuInstancePossiblePlacements(&info)
		if ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_SUPPORTED {
			return nil, 0, fail(fmt.Sprintf("GetGpuInstancePossiblePlacements(%d)", id), ret)
		}
		rows = append(rows, row{id: id, info: info, pls: pls})
		maxSM = max(maxSM, info.MultiprocessorCount)
		maxSlices = max(maxSlices, info.SliceCount)
		most = max(most, int32(info.InstanceCount))
	}
	out := make([]codec.MigProfile, 0, len(rows))
	for _, r := range rows {
		p := codec.MigProfile{
			Name:       MigProfileName(r.id, r.info.SliceCount, r.info.MemorySizeMB, totalBytes),
			MemoryMB:   int64(r.info.MemorySizeMB),
			SliceCount: int32(r.info.SliceCount),
		}
		// Core is the profile's share of the GPU's compute, in percent rounded up: its SMs over the full profile's
		// SMs (1g on an A100 is 14 of 98 SMs: 15).
		if maxSM > 0 && r.info.MultiprocessorCount > 0 {
			p.Core = int64(math.Ceil(100 * float64(r.info.MultiprocessorCount) / float64(maxSM)))
		} else {
			p.Core = int64(math.Ceil(100 * float64(r.info.SliceCount) / float64(maxSlices)))
		}
		for _, pl := range r.pls {
			p.Placements = append(p.Placements, codec.MigPlacement{Start: int32(pl.Start), Size: int32(pl.Size)})
		}
		out = append(out, p)
	}
	return out, most, nil
}

// MigProfileName names a GPU-instance profile as NVIDIA does (go-nvlib, nvidia-smi mig -lgip): "<slices>g.<GB>gb"
// with the memory rounded up to eighths of the GPU and an attribute suffix for the profile variants (+me, -me,
// +me.all, +gfx). profileID is the NVML profile index (nvml.GPU_INSTANCE_PROFILE_*).
func MigProfileName(profileID int, slices uint32, memoryMB, totalBytes uint64) string {
	name := fmt.Sprintf("%dg.%dgb", slices, migMemoryGB(totalBytes, memoryMB))
	switch profileID {
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1:
		name += "+me"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME:
		name += "+me.all"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_NO_ME:
		name += "-me"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_2_SLICE_GFX,
		nvml.GPU_INSTANCE_PROFILE_3_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_4_SLICE_GFX:
		name += "+gfx"
	}
	return name
}

// migMemoryGB is go-nvlib's rounding: the profile's fraction of the GPU's memory rounded up to eighths, times the
// GPU's memory in whole GB (rounded up).
func migMemoryGB(totalBytes, memoryMB uint64) uint64 {
	const oneMB, oneGB = 1 << 20, 1 << 30
	if totalBytes == 0 {
		return (memoryMB + 1023) / 1024
	}
	frac := float64(memoryMB) * oneMB / float64(totalBytes)
	frac = math.Ceil(frac*8) / 8
	totalGB := float64((totalBytes + oneGB - 1) / oneGB)
	return uint64(math.Round(frac * totalGB))
}

// Usage reads memory, utilisation and processes of every GPU.
func (s *Source) Usage() ([]agent.Usage, error) {
	n, ret := s.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fail("DeviceGetCount", ret)
	}
	out := make([]agent.Usage, n)
	for i := range n {
		out[i] = s.usage(i)
	}
	return out, nil
}

func (s *Source) usage(i int) agent.Usage {
	u := agent.Usage{Index: i}
	d, ret := s.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		u.Err = fail(fmt.Sprintf("DeviceGetHandleByIndex(%d)", i), ret)
		return u
	}
	if u.UUID, ret = d.GetUUID(); ret != nvml.SUCCESS {
		u.Err = fail(fmt.Sprintf("GetUUID (GPU %d)", i), ret)
		return u
	}
	if s.memoryV2 {
		m, ret := d.GetMemoryInfo_v2()
		if ret != nvml.SUCCESS {
			u.Err = fail("GetMemoryInfo_v2 ("+u.UUID+")", ret)
			return u
		}
		u.MemoryUsedBytes, u.MemoryTotalBytes = m.Used, m.Total
	} else {
		m, ret := d.GetMemoryInfo()
		if ret != nvml.SUCCESS {
			u.Err = fail("GetMemoryInfo ("+u.UUID+")", ret)
			return u
		}
		u.MemoryUsedBytes, u.MemoryTotalBytes = m.Used, m.Total
	}
	util, ret := d.GetUtilizationRates()
	switch ret {
	case nvml.SUCCESS:
		u.Utilization, u.UtilizationKnown = float64(util.Gpu)/100, true
	case nvml.ERROR_NOT_SUPPORTED:
		// MIG-enabled GPUs report no utilisation.
	default:
		u.Err = fail("GetUtilizationRates ("+u.UUID+")", ret)
	}
	seen := map[uint32]int{}
	for _, get := range []struct {
		call string
		f    func() ([]nvml.ProcessInfo, nvml.Return)
	}{{"GetComputeRunningProcesses", d.GetComputeRunningProcesses}, {"GetGraphicsRunningProcesses", d.GetGraphicsRunningProcesses}} {
		procs, ret := get.f()
		if ret == nvml.ERROR_NOT_SUPPORTED {
			continue
		}
		if ret != nvml.SUCCESS {
			if u.Err == nil {
				u.Err = fail(get.call+" ("+u.UUID+")", ret)
			}
			continue
		}
		for _, p := range procs {
			// A process that is both compute and graphics is listed twice; with MIG, once per instance.
			if j, ok := seen[p.Pid]; ok {
				if p.UsedGpuMemory != math.MaxUint64 {
					u.Processes[j].UsedMemoryBytes = max(u.Processes[j].UsedMemoryBytes, p.UsedGpuMemory)
				}
				continue
			}
			mem := p.UsedGpuMemory
			if mem == math.MaxUint64 { // NVML_VALUE_NOT_AVAILABLE (Windows WDDM, some vGPU setups)
				mem = 0
			}
			seen[p.Pid] = len(u.Processes)
			u.Processes = append(u.Processes, agent.Process{PID: p.Pid, UsedMemoryBytes: mem})
		}
	}
	return u
}

// Events registers every GPU that supports them for critical XID events and streams them.
func (s *Source) Events(ctx context.Context) (<-chan agent.XIDEvent, error) {
	set, ret := s.lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		return nil, fail("EventSetCreate", ret)
	}
	n, ret := s.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		s.freeEventSet(set)
		return nil, fail("DeviceGetCount", ret)
	}
	watched := 0
	for i := range n {
		d, ret := s.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			s.opts.Log.Warn("no XID health checks for a GPU", "index", i, "err", fail("DeviceGetHandleByIndex", ret))
			continue
		}
		uuid, _ := d.GetUUID()
		supported, ret := d.GetSupportedEventTypes()
		if ret != nvml.SUCCESS || supported&nvml.EventTypeXidCriticalError == 0 {
			s.opts.Log.Warn("no XID health checks for a GPU: it does not support XID events", "index", i, "uuid", uuid, "ret", nvmlString(ret))
			continue
		}
		if ret := d.RegisterEvents(nvml.EventTypeXidCriticalError, set); ret != nvml.SUCCESS {
			s.opts.Log.Warn("no XID health checks for a GPU", "index", i, "uuid", uuid, "err", fail("RegisterEvents", ret))
			continue
		}
		watched++
	}
	if watched == 0 {
		s.freeEventSet(set)
		return nil, errors.New("no GPU supports NVML XID events")
	}
	ch := make(chan agent.XIDEvent, 16)
	waitMs := uint32(s.opts.EventWait / time.Millisecond)
	go func() {
		defer close(ch)
		defer s.freeEventSet(set)
		send := func(ev agent.XIDEvent) bool {
			select {
			case ch <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for ctx.Err() == nil {
			data, ret := set.Wait(waitMs)
			switch ret {
			case nvml.SUCCESS:
				if data.EventType != nvml.EventTypeXidCriticalError {
					continue
				}
				ev := agent.XIDEvent{XID: data.EventData, Time: time.Now()}
				if data.Device != nil {
					ev.UUID, _ = data.Device.GetUUID()
				}
				if !send(ev) {
					return
				}
			case nvml.ERROR_TIMEOUT:
			case nvml.ERROR_GPU_IS_LOST:
				if !send(agent.XIDEvent{Lost: true, Time: time.Now()}) {
					return
				}
			default:
				s.opts.Log.Warn("waiting for NVML events failed; retrying", "err", fail("EventSetWait", ret))
				select {
				case <-ctx.Done():
				case <-time.After(s.opts.EventWait):
				}
			}
		}
	}()
	return ch, nil
}

// Close shuts NVML down.
func (s *Source) Close() error {
	var err error
	s.closeOnce.Do(func() {
		if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
			err = fail("Shutdown", ret)
		}
	})
	return err
}
