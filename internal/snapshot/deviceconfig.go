package snapshot

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/device/all"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// DeviceConfigKey is the data key of HAMi's device ConfigMap.
const DeviceConfigKey = "device-config.yaml"

// deviceConfig is the nvidia section of HAMi's device-config.yaml, the fields that change scheduling.
type deviceConfig struct {
	Nvidia struct {
		ResourceCountName            string `json:"resourceCountName"`
		ResourceMemoryName           string `json:"resourceMemoryName"`
		ResourceMemoryPercentageName string `json:"resourceMemoryPercentageName"`
		ResourceCoreName             string `json:"resourceCoreName"`
		ResourcePriorityName         string `json:"resourcePriorityName"`
		DefaultMemory                *int64 `json:"defaultMemory"`
		DefaultCores                 *int64 `json:"defaultCores"`
		DefaultGPUNum                *int64 `json:"defaultGPUNum"`
		MemoryFactor                 *int64 `json:"memoryFactor"`
	} `json:"nvidia"`
}

// Config returns the engine configuration: HAMi's defaults, overridden by the device ConfigMap named
// namespace/name when the snapshot has it.
func (s *Snapshot) Config(configMap string) (engine.Config, error) {
	cfg := engine.DefaultConfig()
	// A snapshot holds every pod, whatever its scheduler: only HAMi's profile gets HAMi's gates.
	cfg.SchedulerName = engine.DefaultSchedulerName
	ns, name, _ := strings.Cut(configMap, "/")
	for _, cm := range s.ConfigMaps {
		if cm.Namespace == ns && cm.Name == name {
			return DeviceConfig(cm, cfg)
		}
	}
	return cfg, nil
}

// DeviceConfig overlays the nvidia section of a HAMi device ConfigMap on cfg.
func DeviceConfig(cm *corev1.ConfigMap, cfg engine.Config) (engine.Config, error) {
	raw, ok := cm.Data[DeviceConfigKey]
	if !ok {
		return cfg, fmt.Errorf("ConfigMap %s/%s: no %s key; using HAMi's defaults", cm.Namespace, cm.Name, DeviceConfigKey)
	}
	var dc deviceConfig
	if err := yaml.Unmarshal([]byte(raw), &dc); err != nil {
		return cfg, fmt.Errorf("ConfigMap %s/%s: data[%s]: %w", cm.Namespace, cm.Name, DeviceConfigKey, err)
	}
	n := dc.Nvidia
	// A key that is present but empty (null, "") or out of range is refused: HAMi's default stays for it, and
	// the error names the key (issue 26: a memoryFactor of 0 or a defaultGPUNum of -1 was taken silently).
	var present struct {
		Nvidia map[string]json.RawMessage `json:"nvidia"`
	}
	_ = yaml.Unmarshal([]byte(raw), &present)
	var refused []string
	refuse := func(key, why string) {
		refused = append(refused, fmt.Sprintf("nvidia.%s %s", key, why))
	}
	empty := func(key string) bool {
		v, ok := present.Nvidia[key]
		if ok && (len(v) == 0 || string(v) == "null" || strings.TrimSpace(strings.Trim(string(v), `"`)) == "") {
			refuse(key, "is empty")
			return true
		}
		return false
	}
	setStr := func(key string, dst *string, v string) {
		if !empty(key) && v != "" {
			*dst = v
		}
	}
	setStr("resourceCountName", &cfg.ResourceCountName, n.ResourceCountName)
	setStr("resourceMemoryName", &cfg.ResourceMemoryName, n.ResourceMemoryName)
	setStr("resourceMemoryPercentageName", &cfg.ResourceMemoryPercentageName, n.ResourceMemoryPercentageName)
	setStr("resourceCoreName", &cfg.ResourceCoreName, n.ResourceCoreName)
	setStr("resourcePriorityName", &cfg.ResourcePriorityName, n.ResourcePriorityName)
	setInt := func(key string, dst *int64, v *int64, lo, hi int64, want string) {
		switch {
		case empty(key) || v == nil:
		case *v < lo || *v > hi:
			refuse(key, fmt.Sprintf("is %d, out of range (want %s)", *v, want))
		default:
			*dst = *v
		}
	}
	const maxInt = int64(1) << 40 // no GPU has more MiB, and no pod asks for more GPUs
	setInt("defaultMemory", &cfg.DefaultMemory, n.DefaultMemory, 0, maxInt, "0 for the whole GPU, or MiB")
	setInt("defaultCores", &cfg.DefaultCores, n.DefaultCores, 0, 100, "0 to 100 percent")
	setInt("defaultGPUNum", &cfg.DefaultGPUNum, n.DefaultGPUNum, 1, 1<<20, "1 or more")
	setInt("memoryFactor", &cfg.MemoryFactor, n.MemoryFactor, 1, 1<<20, "1 or more")
	// The other families' sections (hygon, vnpus, ...): read only when one is present, so a ConfigMap with the
	// nvidia section alone keeps the chart defaults for every other family.
	var sections map[string]json.RawMessage
	if err := yaml.Unmarshal([]byte(raw), &sections); err != nil {
		return cfg, fmt.Errorf("ConfigMap %s/%s: data[%s]: %w", cm.Namespace, cm.Name, DeviceConfigKey, err)
	}
	for _, sec := range all.Sections() {
		if _, ok := sections[sec]; ok && sec != "nvidia" {
			kinds, err := all.Kinds(sections)
			if err != nil {
				return cfg, fmt.Errorf("ConfigMap %s/%s: data[%s]: %w", cm.Namespace, cm.Name, DeviceConfigKey, err)
			}
			cfg.Vendors = kinds
			break
		}
	}
	if len(refused) > 0 {
		return cfg, fmt.Errorf("ConfigMap %s/%s: data[%s]: %s; HAMi's default is used instead", cm.Namespace, cm.Name, DeviceConfigKey,
			strings.Join(refused, "; "))
	}
	return cfg, nil
}
