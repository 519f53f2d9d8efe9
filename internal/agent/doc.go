// Package agent is the node agent behind `kubectl hami agent`: it reads the node's GPUs through NVML, registers
// them on its own Node in HAMi's format (hami.io/node-nvidia-register), keeps their health current from NVML XID
// events, and serves live per-GPU usage (memory, utilisation, processes mapped to pods) as Prometheus metrics and
// JSON.
//
// NVML is reached through the narrow, cgo-free GPUSource interface. The NVML implementation (NewNVMLSource) is
// compiled only with `linux && cgo`; elsewhere NewNVMLSource returns ErrUnsupportedPlatform, so the plugin still
// cross-compiles for macOS and Windows with CGO off. NullSource is the implementation with no GPUs.
//
// Everything that touches the host is injectable for tests: the GPUSource, the sysfs root (NUMA nodes), the proc
// root (/proc/<pid>/cgroup, for pod attribution), the Kubernetes client and the clock.
package agent
