// Package engine is kubectl-hami's single source of scheduling truth: it turns nodes, pods and quotas into
// HAMi's view of shared GPUs and decides, with numbers, where a pod fits and why it does not. It takes
// Kubernetes API objects as input and does no I/O; the extender, the CLI and the TUI only render its answers.
package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
	"github.com/kubectl-hami/kubectl-hami/internal/device/all"
	"github.com/kubectl-hami/kubectl-hami/internal/device/nvidia"
)

// Config mirrors the knobs of HAMi's device configuration that change scheduling decisions.
type Config struct {
	// Resource names, as HAMi's device ConfigMap can rename them.
	ResourceCountName            string `json:"resourceCountName"`
	ResourceMemoryName           string `json:"resourceMemoryName"`
	ResourceMemoryPercentageName string `json:"resourceMemoryPercentageName"`
	ResourceCoreName             string `json:"resourceCoreName"`
	ResourcePriorityName         string `json:"resourcePriorityName"`

	// DefaultMemory is the MiB a container gets when it names neither memory nor percentage; 0 means 100 %.
	DefaultMemory int64 `json:"defaultMemory"`
	// DefaultCores is the core percentage a container gets when it names none.
	DefaultCores int64 `json:"defaultCores"`
	// DefaultGPUNum is the GPU count the admission webhook adds when only memory or cores are asked for.
	DefaultGPUNum int64 `json:"defaultGPUNum"`
	// MemoryFactor multiplies every memory request and memory quota (HAMi's memoryFactor).
	MemoryFactor int64 `json:"memoryFactor"`

	// NodeSchedulerPolicy and GPUSchedulerPolicy are the cluster defaults a pod annotation can override.
	NodeSchedulerPolicy string `json:"nodeSchedulerPolicy"`
	GPUSchedulerPolicy  string `json:"gpuSchedulerPolicy"`

	// HandshakeGrace is how long a node whose device plugin has not reported yet still counts as healthy
	// after the scheduler's first Requesting_ stamp.
	HandshakeGrace time.Duration `json:"handshakeGrace"`

	// CardQuota switches the Volcano card-model quota gate: CardQuotaEnforce (the default) or CardQuotaOff
	// (numbers still shown, nodes not filtered).
	CardQuota string `json:"cardQuota,omitempty"`

	// SchedulerName is HAMi's scheduler profile. When set, only pods addressed to it (or naming none) get HAMi's
	// gates; the others get their own scheduler's checks. Empty (the extender's setting: kube-scheduler sends
	// it only its own pods) judges every pod as HAMi's.
	SchedulerName string `json:"schedulerName,omitempty"`
	// CountBoundOnly counts a placed pod's GPUs only while it is bound to the node it names (or is being
	// bound: hami.io/bind-phase allocating). HAMi counts every placed pod, bound or not; this deliberate
	// difference keeps a pod that never runs from holding GPUs with annotations alone. Off by default.
	CountBoundOnly bool `json:"countBoundOnly,omitempty"`
	// HAMiVersion is the HAMi release whose scheduler the cluster runs ("2.10"). kubectl-hami reads every
	// register format; a node whose annotation this version cannot read is reported as a problem.
	HAMiVersion string `json:"hamiVersion,omitempty"`

	// Vendors are the device types besides NVIDIA's (internal/device): Hygon DCU, the Ascend chips, ...
	// nil means HAMi's chart defaults for every registered family; an empty, non-nil slice means none.
	Vendors []device.Kind `json:"vendors,omitempty"`
}

// NoVendors is a Vendors value that schedules NVIDIA alone.
var NoVendors = []device.Kind{}

// Kinds lists every device type: NVIDIA's (from the resource names above) first, then Vendors.
func (c Config) Kinds() []device.Kind {
	c = c.normalized()
	out := make([]device.Kind, 0, 1+len(c.Vendors))
	out = append(out, nvidia.KindOf(nvidia.Config{
		ResourceCountName: c.ResourceCountName, ResourceMemoryName: c.ResourceMemoryName,
		ResourceMemoryPercentageName: c.ResourceMemoryPercentageName, ResourceCoreName: c.ResourceCoreName,
		DefaultMemory: c.DefaultMemory, DefaultCores: c.DefaultCores, MemoryFactor: c.MemoryFactor,
	}))
	out = append(out, c.Vendors...)
	// A GPU keeps its Kind in a byte; no device ConfigMap lists 255 types.
	return out[:min(len(out), MaxKinds)]
}

// MaxKinds is the most device types a cluster schedules (NVIDIA's included).
const MaxKinds = 255

// DefaultHAMiVersion is the HAMi release kubectl-hami follows.
const DefaultHAMiVersion = "2.10"

// HAMiVersion is a HAMi release, major and minor.
type HAMiVersion struct{ Major, Minor int }

// ParseHAMiVersion reads "2.10", "v2.10" or "v2.10.0".
func ParseHAMiVersion(s string) (HAMiVersion, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.Split(t, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return HAMiVersion{}, fmt.Errorf("%q is not a HAMi version like 2.10", s)
	}
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return HAMiVersion{}, fmt.Errorf("%q is not a HAMi version like 2.10", s)
		}
		v[i] = n
	}
	if v[0] != 2 {
		return HAMiVersion{}, fmt.Errorf("%q: kubectl-hami knows HAMi 2.x only", s)
	}
	return HAMiVersion{v[0], v[1]}, nil
}

// AtLeast reports whether v is major.minor or later.
func (v HAMiVersion) AtLeast(major, minor int) bool {
	return v.Major > major || v.Major == major && v.Minor >= minor
}

func (v HAMiVersion) String() string { return fmt.Sprintf("v%d.%d", v.Major, v.Minor) }

// hamiVersion is the configured version, the default when unset or unreadable.
func (c Config) hamiVersion() HAMiVersion {
	if v, err := ParseHAMiVersion(c.HAMiVersion); err == nil {
		return v
	}
	v, _ := ParseHAMiVersion(DefaultHAMiVersion)
	return v
}

// Card quota switch values.
const (
	CardQuotaEnforce = "enforce"
	CardQuotaOff     = "off"
)

// Scheduling policies HAMi understands.
const (
	PolicyBinpack       = "binpack"
	PolicySpread        = "spread"
	PolicyTopologyAware = "topology-aware"
	PolicyMutex         = "mutex"
	PolicyNuma          = "numa"
)

// DefaultConfig is HAMi's chart default.
func DefaultConfig() Config {
	return Config{
		ResourceCountName:            "nvidia.com/gpu",
		ResourceMemoryName:           "nvidia.com/gpumem",
		ResourceMemoryPercentageName: "nvidia.com/gpumem-percentage",
		ResourceCoreName:             "nvidia.com/gpucores",
		ResourcePriorityName:         "nvidia.com/priority",
		DefaultGPUNum:                1,
		MemoryFactor:                 1,
		NodeSchedulerPolicy:          PolicyBinpack,
		GPUSchedulerPolicy:           PolicySpread,
		HandshakeGrace:               60 * time.Second,
	}
}

// normalized fills zero values with the defaults so a partly filled Config behaves.
func (c Config) normalized() Config {
	d := DefaultConfig()
	if c.ResourceCountName == "" {
		c.ResourceCountName = d.ResourceCountName
	}
	if c.ResourceMemoryName == "" {
		c.ResourceMemoryName = d.ResourceMemoryName
	}
	if c.ResourceMemoryPercentageName == "" {
		c.ResourceMemoryPercentageName = d.ResourceMemoryPercentageName
	}
	if c.ResourceCoreName == "" {
		c.ResourceCoreName = d.ResourceCoreName
	}
	if c.ResourcePriorityName == "" {
		c.ResourcePriorityName = d.ResourcePriorityName
	}
	if c.MemoryFactor <= 0 {
		c.MemoryFactor = 1
	}
	if c.NodeSchedulerPolicy == "" {
		c.NodeSchedulerPolicy = d.NodeSchedulerPolicy
	}
	if c.GPUSchedulerPolicy == "" {
		c.GPUSchedulerPolicy = d.GPUSchedulerPolicy
	}
	if c.Vendors == nil {
		c.Vendors = all.Defaults()
	}
	return c
}

// ManagedResources lists the resource names the extender must be told it manages.
func (c Config) ManagedResources() []string {
	c = c.normalized()
	out := []string{c.ResourceCountName, c.ResourceMemoryName, c.ResourceMemoryPercentageName, c.ResourceCoreName, c.ResourcePriorityName}
	seen := map[string]bool{}
	for _, r := range out {
		seen[r] = true
	}
	for i := range c.Vendors {
		for _, r := range c.Vendors[i].Resources() {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}
