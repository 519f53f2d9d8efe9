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
	setStr := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	setStr(&cfg.ResourceCountName, n.ResourceCountName)
	setStr(&cfg.ResourceMemoryName, n.ResourceMemoryName)
	setStr(&cfg.ResourceMemoryPercentageName, n.ResourceMemoryPercentageName)
	setStr(&cfg.ResourceCoreName, n.ResourceCoreName)
	setStr(&cfg.ResourcePriorityName, n.ResourcePriorityName)
	setInt := func(dst *int64, v *int64) {
		if v != nil {
			*dst = *v
		}
	}
	setInt(&cfg.DefaultMemory, n.DefaultMemory)
	setInt(&cfg.DefaultCores, n.DefaultCores)
	setInt(&cfg.DefaultGPUNum, n.DefaultGPUNum)
	setInt(&cfg.MemoryFactor, n.MemoryFactor)
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
	return cfg, nil
}
