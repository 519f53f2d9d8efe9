package agent

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// EnvPrefix prefixes the environment variable of every flag: --device-split-count is HAMI_AGENT_DEVICE_SPLIT_COUNT.
const EnvPrefix = "HAMI_AGENT_"

// EnvName is the environment variable that sets flag name when the flag is not given.
func EnvName(flag string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// CommandFlags are the flags of `kubectl hami agent`.
type CommandFlags struct {
	NodeName         string
	Mode             string
	RegisterFormat   string
	RegisterInterval time.Duration
	RetryInterval    time.Duration
	SplitCount       int32
	MemoryScaling    float64
	CoreScaling      float64
	ExcludeDevices   []string
	OperatingMode    string
	IgnoreXIDs       string
	DisableHealth    bool
	ConfigMap        string
	Listen           string
	ProcRoot         string
	SysRoot          string
	NVMLLibrary      string
	PodLookup        bool
	UsageMaxAge      time.Duration
	FailOnInitError  bool
	LogLevel         string

	DevicePlugin         bool
	DevicePluginDir      string
	DevicePluginResource string
	HamiCoreDir          string

	fs *pflag.FlagSet
}

// NewCommandFlags declares the flags with their defaults.
func NewCommandFlags() *CommandFlags {
	d, s, dp := DefaultOptions(), DefaultSettings(), DefaultDevicePluginOptions()
	c := &CommandFlags{fs: pflag.NewFlagSet("agent", pflag.ContinueOnError)}
	f := c.fs
	f.StringVar(&c.NodeName, "node-name", "", "the Node this agent runs on and the only one it patches (else $NODE_NAME)")
	f.StringVar(&c.Mode, "mode", d.Mode, "full: register the GPUs and serve usage; observe: serve usage only (beside HAMi's device plugin)")
	f.StringVar(&c.RegisterFormat, "register-format", d.RegisterFormat, "json: HAMi v2.8+ JSON registration; legacy: the 9-field form (and Reported handshake) for HAMi v2.5-v2.7")
	f.DurationVar(&c.RegisterInterval, "register-interval", d.RegisterInterval, "period of scans and registrations")
	f.DurationVar(&c.RetryInterval, "retry-interval", d.RetryInterval, "wait after a failed scan or registration")
	f.Int32Var(&c.SplitCount, "device-split-count", s.SplitCount, "vGPU slots per GPU (HAMi's deviceSplitCount)")
	f.Float64Var(&c.MemoryScaling, "device-memory-scaling", s.MemoryScaling, "multiplier of each GPU's registered memory (HAMi's deviceMemoryScaling; above 1 oversubscribes)")
	f.Float64Var(&c.CoreScaling, "device-cores-scaling", s.CoreScaling, "multiplier of each GPU's 100% of cores (HAMi's deviceCoreScaling)")
	f.StringSliceVar(&c.ExcludeDevices, "exclude-devices", nil, "GPUs not to register, by UUID or NVML index (comma list)")
	f.StringVar(&c.OperatingMode, "operating-mode", s.OperatingMode, "mode registered for GPUs without MIG: hami-core or mps (MIG-enabled GPUs register as mig)")
	f.StringVar(&c.IgnoreXIDs, "ignore-xids", joinUints(s.IgnoredXIDs), "XIDs that do not mark a GPU unhealthy (comma list; empty: every critical XID counts)")
	f.BoolVar(&c.DisableHealth, "disable-health-checks", false, "do not watch XID events; GPUs stay healthy (also DP_DISABLE_HEALTHCHECKS=all)")
	f.StringVar(&c.ConfigMap, "configmap", "kube-system/hami-device-plugin", "namespace/name of HAMi's per-node ConfigMap (key config.json); its entry for this node overrides flags; empty for none")
	f.StringVar(&c.Listen, "listen", d.Listen, "HTTP address of /metrics, /usage, /devices, /healthz, /readyz; empty to serve nothing")
	f.StringVar(&c.ProcRoot, "proc-root", d.ProcRoot, "host proc mount, for /proc/<pid>/cgroup (pod attribution)")
	f.StringVar(&c.SysRoot, "sys-root", "/sys", "host sysfs mount, for the GPUs' NUMA nodes")
	f.StringVar(&c.NVMLLibrary, "nvml-library", "", "path of libnvidia-ml.so.1 when it is not on the loader's path")
	f.BoolVar(&c.PodLookup, "pod-lookup", d.PodLookup, "name the pods of GPU processes by watching this node's pods (needs list/watch pods)")
	f.DurationVar(&c.UsageMaxAge, "usage-max-age", d.UsageMaxAge, "how long one NVML usage reading serves scrapes and /usage")
	f.BoolVar(&c.FailOnInitError, "fail-on-init-error", true, "exit when NVML cannot start; false runs with no GPUs (serves empty usage, never registers)")
	f.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	f.BoolVar(&c.DevicePlugin, "device-plugin", false, "also be kubelet's device plugin for the GPUs (instead of HAMi's): split-count virtual devices, Allocate in HAMi-core's contract; needs --mode=full")
	f.StringVar(&c.DevicePluginDir, "device-plugin-dir", dp.SocketDir, "kubelet's device-plugin folder (kubelet.sock and the plugin's socket)")
	f.StringVar(&c.DevicePluginResource, "device-plugin-resource", dp.ResourceName, "extended resource the device plugin registers (HAMi's resourceCountName)")
	f.StringVar(&c.HamiCoreDir, "hami-core-dir", dp.HamiCoreDir, "host folder of HAMi-core (libvgpu.so, ld.so.preload) mounted into GPU containers; also holds their cache folders")
	return c
}

// FlagSet is the set to add to the command.
func (c *CommandFlags) FlagSet() *pflag.FlagSet { return c.fs }

// ApplyEnv sets every flag that was not given on the command line from its HAMI_AGENT_* variable, and
// --node-name from NODE_NAME as a last resort. Precedence: command line, then HAMI_AGENT_*, then NODE_NAME and
// DP_DISABLE_HEALTHCHECKS, then the default.
func (c *CommandFlags) ApplyEnv(lookupEnv func(string) (string, bool)) error {
	var err error
	c.fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed {
			return
		}
		name := EnvName(f.Name)
		if v, ok := lookupEnv(name); ok {
			if sv, isSlice := f.Value.(pflag.SliceValue); isSlice {
				// StringSlice's Set appends after the first call; replace instead.
				err = sv.Replace(splitList(v))
			} else {
				err = f.Value.Set(v)
			}
			if err != nil {
				err = fmt.Errorf("%s=%q: %w", name, v, err)
				return
			}
			f.Changed = true
		}
	})
	if err != nil {
		return err
	}
	if c.NodeName == "" {
		if v, ok := lookupEnv("NODE_NAME"); ok {
			c.NodeName = strings.TrimSpace(v)
		}
	}
	return nil
}

func splitList(v string) []string {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Options turns the flags (after ApplyEnv) into the agent's options and the NVML options. dpDisable is the value
// of DP_DISABLE_HEALTHCHECKS.
func (c *CommandFlags) Options(dpDisable string) (Options, NVMLOptions, error) {
	o := DefaultOptions()
	o.NodeName, o.Mode, o.RegisterFormat = c.NodeName, c.Mode, c.RegisterFormat
	o.RegisterInterval, o.RetryInterval = c.RegisterInterval, c.RetryInterval
	o.ConfigMap, o.Listen, o.ProcRoot, o.PodLookup, o.UsageMaxAge = c.ConfigMap, c.Listen, c.ProcRoot, c.PodLookup, c.UsageMaxAge
	s := DefaultSettings()
	s.SplitCount, s.MemoryScaling, s.CoreScaling = c.SplitCount, c.MemoryScaling, c.CoreScaling
	s.Exclude = splitList(strings.Join(c.ExcludeDevices, ","))
	s.OperatingMode = c.OperatingMode
	s.DisableHealthChecks = c.DisableHealth
	xids, err := ParseXIDList(c.IgnoreXIDs)
	if err != nil {
		return o, NVMLOptions{}, fmt.Errorf("--ignore-xids: %w", err)
	}
	s.IgnoredXIDs = xids
	if err := s.ApplyDisableHealthChecks(dpDisable); err != nil {
		return o, NVMLOptions{}, err
	}
	o.Settings = s
	if c.DevicePlugin {
		dp := DefaultDevicePluginOptions()
		dp.SocketDir, dp.ResourceName, dp.HamiCoreDir = c.DevicePluginDir, c.DevicePluginResource, c.HamiCoreDir
		o.DevicePlugin = &dp
	}
	if err := o.Validate(); err != nil {
		return o, NVMLOptions{}, err
	}
	return o, NVMLOptions{LibraryPath: c.NVMLLibrary, SysRoot: c.SysRoot}, nil
}

func joinUints(v []uint64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatUint(x, 10)
	}
	return strings.Join(s, ",")
}
