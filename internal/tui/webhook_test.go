package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// TestWhatIfWebhookRefusal: the form says first, with the numbers, when HAMi's admission webhook would not
// even create the pod (ml-research has 156000 of 900000 MiB of gpumem quota left).
func TestWhatIfWebhookRefusal(t *testing.T) {
	m := newDemo(t, 160, 48)
	press(m, "5", "enter", "ctrl+u", "8", "tab", "ctrl+u", "70000", "tab", "tab", "ctrl+u", "ml-research", "esc")
	got := ansi.Strip(m.form().text)
	refusal := strings.Index(got, "✗ HAMi's webhook would refuse to create it: exceeding resource quota: limits.nvidia.com/gpumem in ResourceQuota gpu-quota: 744000 MiB used + 560000 MiB asked > 900000 MiB limit")
	if refusal < 0 {
		t.Fatalf("no webhook refusal:\n%s", got)
	}
	if verdict := strings.Index(got, "does not fit now"); verdict < refusal {
		t.Errorf("the refusal does not come first:\n%s", got)
	}
	// Within the quota: no refusal.
	press(m, "enter", "up", "up", "up", "ctrl+u", "1", "tab", "ctrl+u", "1000", "esc")
	if got := ansi.Strip(m.form().text); strings.Contains(got, "webhook would refuse") {
		t.Errorf("a pod within the quota is refused:\n%s", got)
	}
}

// TestHAMiVersionOption: with --hami-version 2.7 the JSON-registered nodes are the ones flagged, not the
// text-registered gpu-t4-03.
func TestHAMiVersionOption(t *testing.T) {
	m, err := New(Options{Snapshot: demoSnapshot(t), HAMiVersion: "2.7", Now: func() time.Time { return fixedNow }, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	var flagged []string
	for _, p := range m.store.data().Problems {
		if strings.Contains(p.Message, "do not read") {
			flagged = append(flagged, p.Object)
		}
	}
	if len(flagged) == 0 || slices.Contains(flagged, "gpu-t4-03") || !slices.Contains(flagged, "gpu-a100-01") {
		t.Errorf("flagged %v, want the JSON nodes and not gpu-t4-03", flagged)
	}
}
