//go:build linux && cgo

package nvmlmock

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// BusNumbers are the PCI buses of the mock GPUs, as on a DGX (the mock itself numbers them 00..07).
var BusNumbers = []int{0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd}

// NumaFiles is what the fake sysfs says for each GPU: "-1" (one NUMA node, as sysfs writes it) and "" (no file).
var NumaFiles = []string{"0", "0", "-1", "0", "1", "1", "1", ""}

// WantNUMA is the NUMA node each GPU must register with (negative and missing become 0).
var WantNUMA = []int{0, 0, 0, 0, 1, 1, 1, 0}

// GPUs is a mock server with the stubs the agent needs.
type GPUs struct {
	Server  *server.Server
	Devices []*server.Device
	// Events feeds the mock EventSet's Wait.
	Events chan nvml.EventData
	// SysRoot and ProcRoot are the fake /sys and /proc.
	SysRoot, ProcRoot string

	mu    sync.Mutex
	used  map[int]uint64
	util  map[int]uint32
	procs map[int][]nvml.ProcessInfo
	// migProcs are the processes of MIG devices, by MIG UUID.
	migProcs map[string][]nvml.ProcessInfo
}

// New stubs s (at most 8 GPUs) and writes the fake sysfs tree under sysRoot; fake processes go under procRoot.
func New(s *server.Server, sysRoot, procRoot string) (*GPUs, error) {
	if len(s.Devices) > len(BusNumbers) {
		return nil, fmt.Errorf("nvmlmock: %d GPUs, at most %d", len(s.Devices), len(BusNumbers))
	}
	m := &GPUs{
		Server: s, Events: make(chan nvml.EventData, 8), SysRoot: sysRoot, ProcRoot: procRoot,
		used: map[int]uint64{}, util: map[int]uint32{}, procs: map[int][]nvml.ProcessInfo{},
	}
	for i, d := range s.Devices {
		dev := d.(*server.Device)
		m.Devices = append(m.Devices, dev)
		dev.PciBusID = fmt.Sprintf("0000:%02x:00.0", BusNumbers[i])
		// The mock reports no bus id; NVML writes an 8-digit domain in upper case.
		nvmlBusID := fmt.Sprintf("00000000:%02X:00.0", BusNumbers[i])
		dev.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
			p := nvml.PciInfo{Bus: uint32(BusNumbers[i]), PciDeviceId: dev.Config.PciDeviceId}
			for j, c := range nvmlBusID {
				p.BusId[j] = int8(c)
			}
			return p, nvml.SUCCESS
		}
		dev.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			total := dev.MemoryInfo.Total
			return nvml.Memory_v2{Total: total, Used: m.used[i], Free: total - m.used[i]}, nvml.SUCCESS
		}
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			if cur, _, _ := dev.GetMigMode(); cur == nvml.DEVICE_MIG_ENABLE {
				return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			return nvml.Utilization{Gpu: m.util[i]}, nvml.SUCCESS
		}
		dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			return append([]nvml.ProcessInfo(nil), m.procs[i]...), nvml.SUCCESS
		}
		dev.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
		dev.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
			return nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError, nvml.SUCCESS
		}
		dev.RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS }

		dir := filepath.Join(sysRoot, "bus", "pci", "devices", dev.PciBusID)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if NumaFiles[i] != "" {
			if err := os.WriteFile(filepath.Join(dir, "numa_node"), []byte(NumaFiles[i]+"\n"), 0o644); err != nil {
				return nil, err
			}
		}
	}
	s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &mock.EventSet{
			WaitFunc: func(timeoutMs uint32) (nvml.EventData, nvml.Return) {
				select {
				case ev := <-m.Events:
					return ev, nvml.SUCCESS
				case <-time.After(time.Duration(timeoutMs) * time.Millisecond):
					return nvml.EventData{}, nvml.ERROR_TIMEOUT
				}
			},
			FreeFunc: func() nvml.Return { return nvml.SUCCESS },
		}, nvml.SUCCESS
	}
	return m, nil
}

// XID injects a critical XID event on GPU i.
func (m *GPUs) XID(i int, xid uint64) {
	m.Events <- nvml.EventData{Device: m.Devices[i], EventType: nvml.EventTypeXidCriticalError, EventData: xid}
}

// SetUsage sets GPU i's used memory, utilisation (percent) and processes.
func (m *GPUs) SetUsage(i int, used uint64, util uint32, procs ...nvml.ProcessInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used[i], m.util[i], m.procs[i] = used, util, procs
}

// Process writes a fake /proc/<pid>/cgroup with the given lines.
func (m *GPUs) Process(pid int, cgroupLines ...string) error {
	dir := filepath.Join(m.ProcRoot, fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "cgroup"), []byte(strings.Join(cgroupLines, "\n")+"\n"), 0o644)
}

// PodCgroup is the cgroup v2 line of a container of pod uid under kubelet's systemd cgroup driver.
func PodCgroup(uid, containerID string) string {
	return "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + strings.ReplaceAll(uid, "-", "_") +
		".slice/cri-containerd-" + containerID + ".scope"
}

// Busy gives every GPU 3 processes of 1 GiB, two of them in pods, 3 GiB used and 10 x index percent utilisation.
func (m *GPUs) Busy() error {
	for i := range m.Devices {
		var procs []nvml.ProcessInfo
		for j := range 3 {
			pid := 1000 + 10*i + j
			var err error
			if j < 2 {
				err = m.Process(pid, "0::/", PodCgroup(fmt.Sprintf("0b7c1a52-0000-4000-8000-%012d", pid), strings.Repeat("ab", 32)))
			} else {
				err = m.Process(pid, "0::/system.slice/some.service")
			}
			if err != nil {
				return err
			}
			procs = append(procs, nvml.ProcessInfo{Pid: uint32(pid), UsedGpuMemory: 1 << 30})
		}
		m.SetUsage(i, 3<<30, uint32(10*i), procs...)
	}
	return nil
}
