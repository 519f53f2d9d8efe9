// Package withnvml puts NVML into the binary that imports it, when built with
// `-tags nvml,kustomize_disable_go_plugin_support` on linux with cgo (agent.BuildTags): it registers
// internal/agent/nvmlsource with agent.RegisterNVML, and the kubelet device plugin (internal/agent/deviceplugin,
// which links gRPC) with agent.RegisterDevicePlugin. Without the tags it is empty, and `kubectl hami agent`
// explains how to get a binary with NVML.
//
// Why a tag: go-nvml leaves NVML's symbols undefined until libnvidia-ml.so.1 is loaded, which needs lazy symbol
// binding; Go's linker asks for immediate binding whenever the `plugin` package is linked, and kubectl-hami links
// it through k8s.io/cli-runtime -> kustomize unless kustomize_disable_go_plugin_support is set. A default build
// with go-nvml would stop at start, every command, with "symbol lookup error: undefined symbol: nvml...".
package withnvml
