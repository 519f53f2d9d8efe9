//go:build !(linux && cgo)

package agent

// errNoNVML: NVML needs linux and cgo.
var errNoNVML = ErrUnsupportedPlatform
