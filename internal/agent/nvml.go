package agent

// nvmlFactory builds the NVML GPUSource; nil in builds without NVML (see RegisterNVML).
var nvmlFactory func(NVMLOptions) (GPUSource, error)

// RegisterNVML installs the NVML implementation. internal/agent/withnvml does it in binaries built with
// `-tags nvml,kustomize_disable_go_plugin_support` on linux with cgo.
func RegisterNVML(f func(NVMLOptions) (GPUSource, error)) { nvmlFactory = f }

// NVMLSupported reports whether this binary can read GPUs through NVML.
func NVMLSupported() bool { return nvmlFactory != nil }

// NewNVMLSource loads NVML (libnvidia-ml.so.1) and initialises it. Without the library the error wraps
// ErrLibraryNotFound; in a binary without NVML support it is ErrUnsupportedPlatform (not linux, or CGO off) or
// ErrBuiltWithoutNVML.
func NewNVMLSource(opts NVMLOptions) (GPUSource, error) {
	if nvmlFactory == nil {
		return nil, errNoNVML
	}
	return nvmlFactory(opts)
}
