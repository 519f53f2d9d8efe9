//go:build linux && cgo

package agent

// errNoNVML: this platform can run the agent, but the binary was built without the nvml tag.
var errNoNVML = ErrBuiltWithoutNVML
