package agent

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// GPU is one physical GPU as a GPUSource reports it: the facts registration needs.
type GPU struct {
	// Index is the NVML index (the order nvidia-smi lists GPUs in).
	Index int
	// UUID is NVML's GPU UUID ("GPU-..."); empty when even that could not be read (see Err).
	UUID string
	// Name is NVML's product name, e.g. "NVIDIA A100-SXM4-80GB" or "Tesla T4".
	Name string
	// MemoryMiB is the total memory in MiB (bytes / 2^20).
	MemoryMiB int64
	// BusID is the PCI bus id as NVML reports it ("00000000:3B:00.0").
	BusID string
	// NUMA is the NUMA node from sysfs; 0 when unknown or negative.
	NUMA int
	// MIG is true when MIG mode is currently enabled on the GPU.
	MIG bool
	// MigProfiles are the GPU-instance profiles with their possible placements, when MIG is enabled.
	MigProfiles []codec.MigProfile
	// MigMaxInstances is the largest instance count over the MIG profiles (NVML's InstanceCount): how many MIG
	// devices the GPU can hold at once.
	MigMaxInstances int32
	// Err is set when the GPU could not be read completely (for example the GPU fell off the bus). The agent then
	// keeps its last good reading of the GPU and registers it unhealthy.
	Err error
}

// Process is one process holding memory on a GPU. PIDs are host PIDs.
type Process struct {
	PID             uint32
	UsedMemoryBytes uint64
}

// Usage is the live state of one GPU.
type Usage struct {
	Index            int
	UUID             string
	MemoryUsedBytes  uint64
	MemoryTotalBytes uint64
	// Utilization is the fraction of time a kernel ran over NVML's last sample period, 0..1; valid only when
	// UtilizationKnown (NVML does not report it for MIG-enabled GPUs).
	Utilization      float64
	UtilizationKnown bool
	Processes        []Process
	// Err is set when this GPU's usage could not be read; the other fields are then partial.
	Err error
}

// XIDEvent is one NVML critical XID event, or a lost GPU.
type XIDEvent struct {
	// UUID names the GPU; empty means every GPU (NVML reported a lost GPU without naming it).
	UUID string
	// XID is the XID number (NVML's event data); 0 with Lost.
	XID uint64
	// Lost is true when NVML reported the GPU as lost (ERROR_GPU_IS_LOST): always critical.
	Lost bool
	Time time.Time
}

// GPUSource is the narrow interface the agent reads GPUs through. Implementations are safe for concurrent use.
type GPUSource interface {
	// Devices lists the physical GPUs in index order. An error means no list could be read at all; a GPU that
	// could not be read completely comes back with its Err set.
	Devices() ([]GPU, error)
	// Usage reads the live usage of every GPU.
	Usage() ([]Usage, error)
	// Events streams critical XID events until ctx ends, then closes the channel. An error means health events
	// are not available on this node (the agent then runs without XID health checks).
	Events(ctx context.Context) (<-chan XIDEvent, error)
	// Close releases the source (NVML's Shutdown).
	Close() error
}

// NullSource is a GPUSource with no GPUs and no events: the fallback when NVML cannot start and
// --fail-on-init-error=false. The agent never registers from it, so a HAMi registration is never wiped.
type NullSource struct{}

var _ GPUSource = NullSource{}

// Devices returns no GPUs.
func (NullSource) Devices() ([]GPU, error) { return nil, nil }

// Usage returns no usage.
func (NullSource) Usage() ([]Usage, error) { return nil, nil }

// Events returns a channel that closes when ctx ends.
func (NullSource) Events(ctx context.Context) (<-chan XIDEvent, error) {
	ch := make(chan XIDEvent)
	go func() { <-ctx.Done(); close(ch) }()
	return ch, nil
}

// Close does nothing.
func (NullSource) Close() error { return nil }

// NVMLLibrary is the file name NVML is loaded from (dlopen, so the driver's library on the node is used).
const NVMLLibrary = "libnvidia-ml.so.1"

// BuildTags are the build tags that put NVML into the binary (internal/agent/withnvml). The second keeps Go's
// `plugin` package out (k8s.io/cli-runtime pulls it in through kustomize): with it the linker binds every symbol
// at start, and go-nvml's NVML symbols only exist once libnvidia-ml.so.1 is loaded. The third keeps
// golang.org/x/net/trace out of gRPC (the device plugin): it links html/template, whose reflection stops the linker
// from dropping unused methods, which made the binary 30 MB larger.
const BuildTags = "nvml,kustomize_disable_go_plugin_support,grpcnotrace"

var (
	// ErrUnsupportedPlatform is returned by NewNVMLSource in builds without NVML (not Linux, or CGO off).
	ErrUnsupportedPlatform = errors.New("kubectl hami agent runs on Linux GPU nodes: this binary was built without NVML support " +
		"(NVML needs linux and cgo); run the agent from the Linux image as a DaemonSet (see deploy/agent)")
	// ErrBuiltWithoutNVML is returned by NewNVMLSource on linux with cgo when the binary was built without NVML.
	ErrBuiltWithoutNVML = errors.New("kubectl hami agent runs on Linux GPU nodes from a binary built with NVML: this one was built without it; " +
		"use the agent image (deploy/agent), or build with CGO_ENABLED=1 go build -tags " + BuildTags + " ./cmd/kubectl-hami")
	// ErrLibraryNotFound is wrapped by NewNVMLSource when libnvidia-ml.so.1 cannot be loaded.
	ErrLibraryNotFound = errors.New("NVML library " + NVMLLibrary + " not found: the NVIDIA driver is not installed on this node, " +
		"or the container was not started with the NVIDIA runtime (runtimeClassName: nvidia, or NVIDIA_VISIBLE_DEVICES=all " +
		"with the NVIDIA container toolkit as the default runtime)")
)

// NVMLOptions configure NewNVMLSource.
type NVMLOptions struct {
	// LibraryPath overrides the NVML library to load; empty means NVMLLibrary from the loader's search path.
	LibraryPath string
	// SysRoot is the sysfs mount the NUMA node is read from; empty means /sys.
	SysRoot string
	// EventWait bounds one NVML event wait, which is how quickly Events notices that its context ended; 0 means 2s.
	EventWait time.Duration
	// Log receives warnings about GPUs whose events cannot be watched; nil discards them.
	Log *slog.Logger
}
