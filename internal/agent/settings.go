package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// Operating modes a GPU can be registered in.
const (
	ModeHamiCore = "hami-core"
	ModeMIG      = "mig"
	ModeMPS      = "mps"
)

// DefaultIgnoredXIDs are the XIDs that do not mark a GPU unhealthy (HAMi's and NVIDIA's device plugin list):
// 13 graphics engine exception, 31 GPU memory page fault, 43 GPU stopped processing, 45 preemptive cleanup,
// 68 video processor exception, 109 context switch timeout: all caused by applications, not by the GPU.
var DefaultIgnoredXIDs = []uint64{13, 31, 43, 45, 68, 109}

// Settings are the per-node knobs of registration and health.
type Settings struct {
	// SplitCount is the vGPU slots per GPU (HAMi's deviceSplitCount, chart default 10).
	SplitCount int32
	// MemoryScaling multiplies each GPU's memory (HAMi's deviceMemoryScaling; above 1 oversubscribes).
	MemoryScaling float64
	// CoreScaling multiplies each GPU's 100 % of cores (HAMi's deviceCoreScaling).
	CoreScaling float64
	// Exclude lists GPUs not to register, by UUID or NVML index.
	Exclude []string
	// OperatingMode is the mode written for GPUs without MIG: hami-core (default) or mps. GPUs with MIG enabled
	// are always registered as mig.
	OperatingMode string
	// IgnoredXIDs do not mark a GPU unhealthy.
	IgnoredXIDs []uint64
	// DisableHealthChecks turns XID health checks off (every GPU stays healthy).
	DisableHealthChecks bool
}

// DefaultSettings are HAMi's chart defaults.
func DefaultSettings() Settings {
	return Settings{
		SplitCount:    10,
		MemoryScaling: 1,
		CoreScaling:   1,
		OperatingMode: ModeHamiCore,
		IgnoredXIDs:   slices.Clone(DefaultIgnoredXIDs),
	}
}

// Validate checks the values.
func (s Settings) Validate() error {
	switch {
	case s.SplitCount < 1:
		return fmt.Errorf("split count %d: want at least 1", s.SplitCount)
	case !(s.MemoryScaling > 0):
		return fmt.Errorf("memory scaling %v: want a number above 0", s.MemoryScaling)
	case !(s.CoreScaling > 0):
		return fmt.Errorf("core scaling %v: want a number above 0", s.CoreScaling)
	}
	switch s.OperatingMode {
	case "", ModeHamiCore, ModeMPS, ModeMIG:
	default:
		return fmt.Errorf("operating mode %q: want %s, %s or %s", s.OperatingMode, ModeHamiCore, ModeMPS, ModeMIG)
	}
	return nil
}

// excluded reports whether the GPU is in Exclude.
func (s Settings) excluded(g GPU) bool {
	idx := strconv.Itoa(g.Index)
	for _, e := range s.Exclude {
		if e == idx || (g.UUID != "" && strings.EqualFold(e, g.UUID)) {
			return true
		}
	}
	return false
}

// ignoresXID reports whether xid is in IgnoredXIDs.
func (s Settings) ignoresXID(xid uint64) bool { return slices.Contains(s.IgnoredXIDs, xid) }

// ParseXIDList reads a comma-separated list of XIDs ("13,31,43"); blank gives an empty list.
func ParseXIDList(v string) ([]uint64, error) {
	var out []uint64
	for f := range strings.SplitSeq(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("XID %q is not a non-negative integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// ApplyDisableHealthChecks applies NVIDIA's device plugin variable DP_DISABLE_HEALTHCHECKS: "all" (or "xids")
// turns health checks off; a list of numbers adds those XIDs to the ignored ones.
func (s *Settings) ApplyDisableHealthChecks(v string) error {
	v = strings.TrimSpace(strings.ToLower(v))
	if v == "" {
		return nil
	}
	var extra []uint64
	for f := range strings.SplitSeq(v, ",") {
		f = strings.TrimSpace(f)
		switch f {
		case "":
		case "all", "xids":
			s.DisableHealthChecks = true
		default:
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return fmt.Errorf("DP_DISABLE_HEALTHCHECKS: %q is neither all, xids nor an XID", f)
			}
			extra = append(extra, n)
		}
	}
	for _, x := range extra {
		if !slices.Contains(s.IgnoredXIDs, x) {
			s.IgnoredXIDs = append(s.IgnoredXIDs, x)
		}
	}
	return nil
}

// NodeConfigKey is the key of HAMi's per-node device plugin ConfigMap (hami-device-plugin) that holds the JSON.
const NodeConfigKey = "config.json"

// NodeConfig is one entry of HAMi's per-node configuration (ConfigMap hami-device-plugin, key config.json,
// {"nodeconfig":[...]}). Absent fields leave the setting as it was.
type NodeConfig struct {
	Name                string        `json:"name"`
	OperatingMode       string        `json:"operatingmode,omitempty"`
	DeviceMemoryScaling *float64      `json:"devicememoryscaling,omitempty"`
	DeviceCoreScaling   *float64      `json:"devicecorescaling,omitempty"`
	DeviceSplitCount    *int32        `json:"devicesplitcount,omitempty"`
	FilterDevices       *FilterDevice `json:"filterdevices,omitempty"`
}

// FilterDevice lists GPUs a node does not register.
type FilterDevice struct {
	UUID  []string `json:"uuid,omitempty"`
	Index []uint   `json:"index,omitempty"`
}

// NodeConfigs is the whole config.json document.
type NodeConfigs struct {
	NodeConfig []NodeConfig `json:"nodeconfig"`
}

// ApplyConfigMap overlays the entry named node of the ConfigMap's config.json on s. found is false when the
// ConfigMap has no entry for the node (s is returned unchanged). Filtered devices add to Exclude.
func ApplyConfigMap(s Settings, cm *corev1.ConfigMap, node string) (out Settings, found bool, err error) {
	raw, ok := cm.Data[NodeConfigKey]
	if !ok {
		return s, false, fmt.Errorf("ConfigMap %s/%s has no %s key", cm.Namespace, cm.Name, NodeConfigKey)
	}
	var doc NodeConfigs
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		return s, false, fmt.Errorf("ConfigMap %s/%s: data[%s]: %w", cm.Namespace, cm.Name, NodeConfigKey, err)
	}
	for _, nc := range doc.NodeConfig {
		if nc.Name != node {
			continue
		}
		out = s
		out.Exclude = slices.Clone(s.Exclude)
		if nc.OperatingMode != "" {
			out.OperatingMode = nc.OperatingMode
		}
		if nc.DeviceMemoryScaling != nil {
			out.MemoryScaling = *nc.DeviceMemoryScaling
		}
		if nc.DeviceCoreScaling != nil {
			out.CoreScaling = *nc.DeviceCoreScaling
		}
		if nc.DeviceSplitCount != nil {
			out.SplitCount = *nc.DeviceSplitCount
		}
		if f := nc.FilterDevices; f != nil {
			out.Exclude = append(out.Exclude, f.UUID...)
			for _, i := range f.Index {
				out.Exclude = append(out.Exclude, strconv.FormatUint(uint64(i), 10))
			}
		}
		if err := out.Validate(); err != nil {
			return s, true, fmt.Errorf("ConfigMap %s/%s: node %s: %w", cm.Namespace, cm.Name, node, err)
		}
		return out, true, nil
	}
	return s, false, nil
}

// TypeName is the type string HAMi registers for a GPU named name. From v2.8 HAMi prefixes "NVIDIA-" only when the
// name does not already start with NVIDIA ("NVIDIA A100-SXM4-80GB" stays, "Tesla T4" becomes "NVIDIA-Tesla T4");
// up to v2.7 (legacy) the prefix was always added.
func TypeName(name string, legacy bool) string {
	if !legacy && strings.HasPrefix(name, "NVIDIA") {
		return name
	}
	return "NVIDIA-" + name
}

// DeviceInfos builds the registration of gpus: excluded GPUs are left out, memory is scaled (except on MIG GPUs,
// whose profiles are physical), cores are 100 x core scaling, slots the split count (on MIG GPUs the largest
// profile instance count), health from healthy (nil means every GPU is healthy).
func DeviceInfos(gpus []GPU, s Settings, legacyType bool, healthy func(uuid string) bool) []codec.DeviceInfo {
	out := make([]codec.DeviceInfo, 0, len(gpus))
	for _, g := range gpus {
		if g.UUID == "" || s.excluded(g) {
			continue
		}
		d := codec.DeviceInfo{
			ID:      g.UUID,
			Index:   g.Index,
			Count:   s.SplitCount,
			Devmem:  int64(float64(g.MemoryMiB) * s.MemoryScaling),
			Devcore: int64(100 * s.CoreScaling),
			Type:    TypeName(g.Name, legacyType),
			Numa:    max(g.NUMA, 0),
			Mode:    ModeHamiCore,
			Health:  g.Err == nil && (healthy == nil || healthy(g.UUID)),
		}
		if s.OperatingMode == ModeMPS {
			d.Mode = ModeMPS
		}
		if g.MIG {
			d.Mode = ModeMIG
			d.Devmem = g.MemoryMiB
			d.Devcore = 100
			d.MigProfiles = g.MigProfiles
			most := g.MigMaxInstances
			if most <= 0 {
				for _, p := range g.MigProfiles {
					most = max(most, migInstanceCount(p))
				}
			}
			if most > 0 {
				d.Count = most
			}
		}
		out = append(out, d)
	}
	return out
}

// migInstanceCount is how many instances of a profile fit when the source reports no instance count: its number
// of disjoint placements (placements come sorted by start from NVML).
func migInstanceCount(p codec.MigProfile) int32 {
	var n int32
	var end int32 = -1
	for _, pl := range p.Placements {
		if pl.Start >= end {
			n++
			end = pl.Start + pl.Size
		}
	}
	return n
}
