// Package nvmlsource is the agent's GPUSource backed by NVML through github.com/NVIDIA/go-nvml (device handles by
// index, UUID, name, memory, PCI bus id and NUMA node, MIG mode and profiles with placements, utilisation, running
// processes, XID events). go-nvml needs cgo, so the package is empty outside linux with cgo; and since go-nvml
// leaves NVML's symbols undefined until libnvidia-ml.so.1 is loaded, only binaries built with
// `-tags nvml,kustomize_disable_go_plugin_support` link it (internal/agent/withnvml). Its tests run on go-nvml's
// mock servers (internal/agent/nvmlmock).
package nvmlsource
