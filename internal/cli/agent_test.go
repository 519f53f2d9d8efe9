package cli

import (
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestAgentCommandDevicePluginFlags: `kubectl hami agent` offers the device plugin and documents it.
func TestAgentCommandDevicePluginFlags(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	root := NewRootCommand(streams)
	cmd, _, err := root.Find([]string{"agent"})
	if err != nil || cmd.Name() != "agent" {
		t.Fatalf("no agent command: %v", err)
	}
	tests := []struct{ flag, def string }{
		{"device-plugin", "false"},
		{"device-plugin-dir", "/var/lib/kubelet/device-plugins/"},
		{"device-plugin-resource", "nvidia.com/gpu"},
		{"hami-core-dir", "/usr/local/vgpu"},
	}
	for _, tc := range tests {
		f := cmd.Flags().Lookup(tc.flag)
		if f == nil {
			t.Errorf("agent has no --%s", tc.flag)
			continue
		}
		if f.DefValue != tc.def {
			t.Errorf("--%s defaults to %q, want %q", tc.flag, f.DefValue, tc.def)
		}
	}
	if !strings.Contains(cmd.Long, "--device-plugin") {
		t.Errorf("the agent's help does not mention --device-plugin")
	}
}
