package tui

import (
	"strings"
	"testing"
)

// TestGPUPageMIG: a MIG GPU's page shows the slices its pods reserved and by which pod; with the agent's
// instances, each reservation gets its live instance, a reservation without one says "not created", and an
// instance no pod names is listed apart, its slices taken too.
func TestGPUPageMIG(t *testing.T) {
	m := newDemo(t, 120, 40)
	press(m, ":", "node gpu-h100-mig", "enter", "enter")
	got := screen(m)
	for _, want := range []string{"MIG: 2 of 8 slices taken", "A  2g.20gb  0-1", "team-vision/mig-medium-0", "2g.20gb ×2", "1g.10gb ×5"} {
		if !strings.Contains(got, want) {
			t.Errorf("the MIG GPU page lacks %q:\n%s", want, got)
		}
	}
	uuid := "GPU-gpu-h100-mig-0"
	m.Update(MetricsMsg{GPUs: map[string]GPUMetrics{uuid: {UsedMemMiB: 1000, Utilization: -1}}, Note: "live GPU usage: 1/1 node agents",
		Migs: map[string][]MigMetrics{uuid: {
			{Profile: "2g.20gb", Start: 0, Size: 2, GPUInst: 3, MigUUID: "MIG-a", Busy: true, Pod: "team-vision/mig-medium-0"},
			{Profile: "1g.10gb", Start: 6, Size: 1, GPUInst: 9, MigUUID: "MIG-b"},
		}}})
	got = screen(m)
	for _, want := range []string{"MIG: 3 of 8 slices taken", "GI 3 · busy", "no pod names it", "GI 9 · idle", "1g.10gb ×4", "LIVE: the node agent's instances"} {
		if !strings.Contains(got, want) {
			t.Errorf("with the agent's instances, the MIG GPU page lacks %q:\n%s", want, got)
		}
	}
	// The agent lists no instance for the reservation: it has not been created (yet).
	m.Update(MetricsMsg{GPUs: map[string]GPUMetrics{uuid: {UsedMemMiB: 0, Utilization: -1}}, Note: "live GPU usage: 1/1 node agents",
		Migs: map[string][]MigMetrics{"GPU-other": {{Profile: "1g.10gb", Size: 1}}}})
	if got = screen(m); !strings.Contains(got, "not created") {
		t.Errorf("a reservation without an instance does not say so:\n%s", got)
	}
}
