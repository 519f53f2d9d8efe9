package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// TestOnlyNamespace: top -n inference shows that namespace's pending pods and quotas only, says so in the
// header, and keeps every node (nodes are shared by all namespaces). Run as a program (teatest).
func TestOnlyNamespace(t *testing.T) {
	m, err := New(Options{Snapshot: demoSnapshot(t), DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: func() time.Time { return fixedNow },
		NoColor: true, OnlyNamespace: "inference"})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 30))
	waitOutput(t, tm, "namespace inference", "gpu-a100-01", "gpu-t4-03", "2 pending")
	tm.Type("4") // the Pending view
	waitOutput(t, tm, "llm-serve-2", "reranker-0")
	tm.Type("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)

	var pending []string
	for _, p := range final.data.Pending {
		pending = append(pending, p.Key())
	}
	if got := strings.Join(pending, ","); got != "inference/llm-serve-2,inference/reranker-0" {
		t.Errorf("pending %s, want inference's two", got)
	}
	if len(final.data.Quotas) != 1 || final.data.Quotas[0].Namespace != "inference" {
		t.Errorf("quotas %d, want inference's only", len(final.data.Quotas))
	}
	if len(final.data.Nodes) != 11 {
		t.Errorf("nodes %d, want all 11", len(final.data.Nodes))
	}

	// Without the option every namespace shows.
	all := newDemo(t, 120, 30)
	if len(all.data.Pending) != 8 || strings.Contains(screen(all), "namespace inference") {
		t.Errorf("without -n: %d pending, header %q", len(all.data.Pending), strings.SplitN(screen(all), "\n", 2)[0])
	}
}
