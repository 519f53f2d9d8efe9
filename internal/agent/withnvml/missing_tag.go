//go:build linux && cgo && nvml && !kustomize_disable_go_plugin_support

package withnvml

// With the nvml tag alone the binary would link both go-nvml and Go's plugin package, and stop at start with
// "undefined symbol: nvml...": fail the build instead.
var _ = build_with_tags_nvml_and_kustomize_disable_go_plugin_support
