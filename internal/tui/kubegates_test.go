package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// TestKubeGatesPendingAndWhatIf is issue 25's repro in the UI: with gpu-t4-02 cordoned and gpu-t4-01 tainted,
// the pod selecting gpu-t4-01 does not "fit" in the Pending list, and the what-if form's answer and copies
// leave both nodes out.
func TestKubeGatesPendingAndWhatIf(t *testing.T) {
	s, err := snapshot.Parse(tb.KubeGatesDemo(), "kube-gates")
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Snapshot: s, DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: func() time.Time { return fixedNow }, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	press(m, "1")
	for _, want := range []string{"SchedulingDisabled", "taint dedicated=vision:NoSchedule"} { // gpu-t4-03's is in the goldens
		if !strings.Contains(screen(m), want) {
			t.Errorf("Nodes view lacks %q:\n%s", want, screen(m))
		}
	}
	press(m, "4")
	row := ""
	for _, l := range strings.Split(screen(m), "\n") {
		if strings.Contains(l, "vision-1") {
			row = l
		}
	}
	if row == "" || strings.Contains(row, "fits") || !strings.Contains(row, "TaintToleration") {
		t.Errorf("Pending row of vision-1: %q, want the taint, not a fit\n%s", row, screen(m))
	}
	press(m, "5")
	a := ansi.Strip(m.form().text)
	if !strings.Contains(a, "Copies:") || strings.Contains(a, "gpu-t4-01") || strings.Contains(a, "gpu-t4-02") {
		t.Errorf("the what-if form places or counts copies on the tainted or cordoned node:\n%s", a)
	}
}
