// Package nvmlmock completes go-nvml's mock servers (github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100, dgxh100, ...)
// for the agent's tests and benchmarks: it stubs the methods the agent calls that the mocks lack (unstubbed mock
// methods panic), reports DGX-like PCI bus ids, writes a fake sysfs tree with the GPUs' NUMA nodes and a fake /proc
// for pod attribution, and injects XID events. go-nvml needs cgo even for its mocks, so the package is empty
// outside linux with cgo.
package nvmlmock
