// Package deviceplugin is the node agent's kubelet device plugin: it registers the node's GPUs as split-count
// virtual devices of one extended resource (nvidia.com/gpu), streams their health to kubelet, and answers
// Allocate with the GPUs the scheduler extender wrote into the pod's hami.io/vgpu-devices-to-allocate, in
// HAMi-core's environment contract; on GPUs in MIG mode it creates the MIG instances of the pod's
// hami.io/vgpu-mig-allocations and destroys those no live pod holds any more. With it the agent replaces HAMi's
// device plugin entirely.
//
// The package needs no cgo and no NVML: it reads the GPUs from the agent's registration (Source) and makes MIG
// instances through agent.MigManager (the NVML source).
package deviceplugin
