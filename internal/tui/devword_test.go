package tui

import (
	"strings"
	"testing"
)

// TestNodeAndGPUPagesSpeakOfTheDevice: an Ascend node's page counts NPUs and its GPU page says "on this NPU";
// an NVIDIA node keeps GPU.
func TestNodeAndGPUPagesSpeakOfTheDevice(t *testing.T) {
	m := newDemo(t, 120, 30)
	press(m, ":", "node gpu-mx-npu", "enter")
	if got := screen(m); !strings.Contains(got, "gpu-mx-npu · 4 NPUs · 2 pods") || !strings.Contains(got, "NPU / POD") {
		t.Errorf("the Ascend node's page does not speak of NPUs:\n%s", got)
	}
	press(m, "down", "enter")
	if got := screen(m); !strings.Contains(got, "1 pod on this NPU") {
		t.Errorf("the NPU's page does not say NPU:\n%s", got)
	}
	press(m, ":", "node gpu-a100-01", "enter")
	if got := screen(m); !strings.Contains(got, "GPUs · ") || !strings.Contains(got, "GPU / POD") {
		t.Errorf("the NVIDIA node's page lost its GPU words:\n%s", got)
	}
}
