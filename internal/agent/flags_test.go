package agent

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestCommandFlagsPrecedence(t *testing.T) {
	env := map[string]string{
		"NODE_NAME":                          "from-node-name",
		"HAMI_AGENT_DEVICE_SPLIT_COUNT":      "20",
		"HAMI_AGENT_DEVICE_MEMORY_SCALING":   "3",
		"HAMI_AGENT_EXCLUDE_DEVICES":         "GPU-a, 2",
		"HAMI_AGENT_MODE":                    "observe",
		"HAMI_AGENT_REGISTER_INTERVAL":       "10s",
		"HAMI_AGENT_IGNORE_XIDS":             "13",
		"HAMI_AGENT_DEVICE_CORES_SCALING":    "not a number but overridden by the flag",
		"HAMI_AGENT_UNKNOWN_SETTING_IGNORED": "x",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c := NewCommandFlags()
	if err := c.FlagSet().Parse([]string{"--device-split-count=5", "--device-cores-scaling=2"}); err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyEnv(lookup); err != nil {
		t.Fatal(err)
	}
	o, n, err := c.Options("48")
	if err != nil {
		t.Fatal(err)
	}
	s := o.Settings
	if o.NodeName != "from-node-name" || o.Mode != RunObserve || o.RegisterInterval != 10*time.Second ||
		s.SplitCount != 5 || s.MemoryScaling != 3 || s.CoreScaling != 2 ||
		!reflect.DeepEqual(s.Exclude, []string{"GPU-a", "2"}) || !reflect.DeepEqual(s.IgnoredXIDs, []uint64{13, 48}) ||
		n.SysRoot != "/sys" || o.ConfigMap != "kube-system/hami-device-plugin" {
		t.Errorf("options %+v, settings %+v, nvml %+v", o, s, n)
	}

	delete(env, "HAMI_AGENT_DEVICE_CORES_SCALING")
	c = NewCommandFlags()
	_ = c.FlagSet().Parse([]string{"--node-name=flag-node"})
	env["HAMI_AGENT_NODE_NAME"] = "env-node"
	if err := c.ApplyEnv(lookup); err != nil || c.NodeName != "flag-node" {
		t.Errorf("--node-name lost to the environment: %q, %v", c.NodeName, err)
	}
	c = NewCommandFlags()
	_ = c.FlagSet().Parse(nil)
	if err := c.ApplyEnv(lookup); err != nil || c.NodeName != "env-node" {
		t.Errorf("HAMI_AGENT_NODE_NAME should beat NODE_NAME: %q, %v", c.NodeName, err)
	}
	env["HAMI_AGENT_DEVICE_CORES_SCALING"] = "lots"
	c = NewCommandFlags()
	_ = c.FlagSet().Parse(nil)
	if err := c.ApplyEnv(lookup); err == nil {
		t.Errorf("a bad HAMI_AGENT_DEVICE_CORES_SCALING was accepted")
	}
}

func TestOptionsValidate(t *testing.T) {
	o := DefaultOptions()
	if err := o.Validate(); err == nil {
		t.Errorf("no node name accepted")
	}
	o.NodeName = "n"
	for _, edit := range []func(*Options){
		func(o *Options) { o.Mode = "both" },
		func(o *Options) { o.RegisterFormat = "yaml" },
		func(o *Options) { o.RegisterInterval = 0 },
		func(o *Options) { o.ConfigMap = "no-namespace" },
		func(o *Options) { o.Settings.MemoryScaling = 0 },
		func(o *Options) { o.Settings.OperatingMode = "vgpu" },
	} {
		bad := o
		edit(&bad)
		if err := bad.Validate(); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

func TestDevicePluginFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    *DevicePluginOptions // nil: the device plugin is off
		wantErr string
	}{
		{name: "off by default", args: nil, want: nil},
		{name: "on with defaults", args: []string{"--device-plugin"}, want: &DevicePluginOptions{
			SocketDir: "/var/lib/kubelet/device-plugins/", ResourceName: "nvidia.com/gpu", HamiCoreDir: "/usr/local/vgpu"}},
		{name: "from the environment", env: map[string]string{
			"HAMI_AGENT_DEVICE_PLUGIN": "true", "HAMI_AGENT_DEVICE_PLUGIN_DIR": "/k/dp", "HAMI_AGENT_DEVICE_PLUGIN_RESOURCE": "example.com/vgpu",
			"HAMI_AGENT_HAMI_CORE_DIR": "/opt/hami"},
			want: &DevicePluginOptions{SocketDir: "/k/dp", ResourceName: "example.com/vgpu", HamiCoreDir: "/opt/hami"}},
		{name: "observe mode has no device plugin", args: []string{"--device-plugin", "--mode=observe"}, wantErr: "--device-plugin needs --mode=full"},
		{name: "relative folder", args: []string{"--device-plugin", "--device-plugin-dir=dp"}, wantErr: "--device-plugin-dir"},
		{name: "resource without a domain", args: []string{"--device-plugin", "--device-plugin-resource=gpu"}, wantErr: "--device-plugin-resource"},
		{name: "kubernetes.io resource", args: []string{"--device-plugin", "--device-plugin-resource=kubernetes.io/gpu"}, wantErr: "--device-plugin-resource"},
		{name: "relative HAMi-core folder", args: []string{"--device-plugin", "--hami-core-dir=vgpu"}, wantErr: "--hami-core-dir"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCommandFlags()
			if err := c.FlagSet().Parse(append([]string{"--node-name=n"}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			if err := c.ApplyEnv(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }); err != nil {
				t.Fatal(err)
			}
			o, _, err := c.Options("")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (o.DevicePlugin == nil) != (tc.want == nil) {
				t.Fatalf("device plugin %+v, want %+v", o.DevicePlugin, tc.want)
			}
			if tc.want == nil {
				return
			}
			got := o.DevicePlugin
			if got.SocketDir != tc.want.SocketDir || got.ResourceName != tc.want.ResourceName || got.HamiCoreDir != tc.want.HamiCoreDir ||
				got.PollInterval <= 0 || got.RetryInterval <= 0 || got.SocketName == "" {
				t.Errorf("device plugin %+v, want %+v", got, tc.want)
			}
		})
	}
}
