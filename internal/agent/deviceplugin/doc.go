// Package deviceplugin is the node agent's kubelet device plugin: it registers the node's GPUs as split-count
// virtual devices of one extended resource (nvidia.com/gpu), streams their health to kubelet, and answers
// Allocate with the GPUs the scheduler extender wrote into the pod's hami.io/vgpu-devices-to-allocate, in
// HAMi-core's environment contract. With it the agent replaces HAMi's device plugin entirely.
//
// The package needs no cgo and no NVML: it reads the GPUs from the agent's registration (Source).
package deviceplugin
