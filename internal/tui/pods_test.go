package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// simulatedReading feeds the demo model one round of simulated agent readings (processes included) at t.
func simulatedReading(m *Model, t time.Time) MetricsMsg {
	mm := metricsOf(simulatedUsage(m.data, t), nil)
	m.Update(mm)
	return mm
}

// TestPodsView: every GPU pod on a node is a row, with its allocation beside the agent's live numbers; the
// table sorts by any column (utilisation included) and filters; enter opens the pod's devices and processes.
func TestPodsView(t *testing.T) {
	m := newDemo(t, 200, 60)
	mm := simulatedReading(m, fixedNow)
	press(m, "7")
	if viewName(m) != "Pods" {
		t.Fatalf("7 opened %q", viewName(m))
	}
	v := viewOf[*podsView](m)
	if got, want := len(v.t.rows), m.data.Totals.Pods; got != want {
		t.Errorf("%d rows, want the header's %d GPU pods", got, want)
	}
	// batch-render's live memory is the sum of its processes, as the agent reported them.
	var live int64
	for _, p := range mm.Pods["default/batch-render"] {
		live += p.UsedMemMiB
	}
	if live <= 0 {
		t.Fatalf("the simulated agent reports no process of default/batch-render: %+v", mm.Pods)
	}
	if l := lineWith(screen(m), "batch-render"); !strings.Contains(l, mib(live)) || !strings.Contains(l, "59G") || strings.Contains(l, "n/a") {
		t.Errorf("batch-render's row %q lacks its allocation 59G and live %s", l, mib(live))
	}

	// s cycles to util: the first row has the highest utilisation of all.
	for v.t.sortName() != "util ↓" {
		press(m, "s")
		if v.t.sortIdx == 0 {
			t.Fatalf("no util sort column (sorts %v)", v.t.cols)
		}
	}
	best := -1
	for _, p := range v.pods {
		_, u := m.podUsage(p)
		best = max(best, u)
	}
	first := v.pods[v.t.order[0]]
	if _, u := m.podUsage(first); u != best || best <= 0 {
		t.Errorf("sorted by util, the first pod %s has %d%%, the highest is %d%%", first.Key(), u, best)
	}

	press(m, "/", "team-vision", "enter")
	if len(v.t.order) != 5 {
		t.Errorf("/team-vision: %d rows, want team-vision's 5 pods", len(v.t.order))
	}
	press(m, "esc", "g")
	// The pod page: its devices and the processes the agent found.
	press(m, ":", "pods batch-render", "enter", "enter")
	s := screen(m)
	if viewName(m) != "Pod" || !strings.Contains(s, "default/batch-render on gpu-a100-02 · Running") {
		t.Fatalf("enter on batch-render: view %q\n%s", viewName(m), s)
	}
	for _, p := range mm.Pods["default/batch-render"] {
		if !strings.Contains(s, fmt.Sprintf("%8d %-28s %12s", p.PID, p.GPU, fmt.Sprintf("%d MiB", p.UsedMemMiB))) {
			t.Errorf("the pod page lacks process %d on %s:\n%s", p.PID, p.GPU, s)
		}
	}
	if !strings.Contains(s, "#0 A100-SXM4-80GB") || !strings.Contains(s, "#1 A100-SXM4-80GB") || !strings.Contains(s, "30000 MiB") {
		t.Errorf("the pod page lacks its two GPUs and what each was given:\n%s", s)
	}
	press(m, "esc")
	if viewName(m) != "Pods" {
		t.Errorf("esc from the pod page: %q, want Pods", viewName(m))
	}
}

// TestAllocatedVersusLive: the Node view says which numbers are allocated and which are live; the GPU page
// draws the utilisation history; Nodes and Node sort by utilisation.
func TestAllocatedVersusLive(t *testing.T) {
	m := newDemo(t, 160, 48)
	for i := range 3 {
		simulatedReading(m, fixedNow.Add(time.Duration(i)*7*time.Second))
	}
	press(m, ":", "node gpu-a100-02", "enter")
	s := screen(m)
	if !strings.Contains(s, "LIVE MEM") || !strings.Contains(s, "alloc 30000 MiB") {
		t.Errorf("the Node view does not say allocated and live apart:\n%s", s)
	}
	l := lineWith(screen(m), "batch-render")
	if !strings.Contains(l, "alloc 30000 MiB") || !strings.Contains(l, "live ") {
		t.Errorf("batch-render's line under GPU 0 %q lacks alloc and live", l)
	}
	press(m, "enter")
	s = screen(m)
	hist := m.utilHist["GPU-gpu-a100-02-0"]
	if len(hist) != 3 {
		t.Fatalf("GPU 0's history %v, want 3 readings", hist)
	}
	if !strings.Contains(s, "utilisation, last 3 readings: "+sparkline(hist)) {
		t.Errorf("the GPU page lacks the sparkline %q of %v:\n%s", sparkline(hist), hist, s)
	}
	if got := sparkline([]int{0, 50, 100}); got != "▁▄█" {
		t.Errorf("sparkline(0, 50, 100) = %q, want ▁▄█", got)
	}

	// Nodes sorted by util: the first node's mean utilisation is the highest.
	press(m, "esc", "esc", "1")
	nv := viewOf[*nodesView](m)
	for nv.t.sortName() != "util ↓" {
		press(m, "s")
		if nv.t.sortIdx == 0 {
			t.Fatalf("the Nodes view has no util sort (sorts %v)", nv.t.cols)
		}
	}
	top := m.utilKey(m.data.Nodes[nv.t.order[0]].Node.GPUs)
	for _, n := range m.data.Nodes {
		if u := m.utilKey(n.Node.GPUs); u > top {
			t.Errorf("node %s has %v%% utilisation, more than the first row's %v%%", n.Name, u, top)
		}
	}
}

// TestPodsRowsWaitUntilShown: the first frame (the Nodes view) does not make the Pods view's rows, nor does
// new data while the view is off screen; showing it, or completing `:pods `, makes them from the latest data.
func TestPodsRowsWaitUntilShown(t *testing.T) {
	m := newDemo(t, 200, 60)
	v := viewOf[*podsView](m)
	if !v.t.waiting() || len(v.t.rows) != 0 {
		t.Fatalf("after the first frame the Pods view has %d rows (waiting %v), want none made yet", len(v.t.rows), v.t.waiting())
	}
	for _, n := range m.data.Nodes {
		if n.running != nil {
			t.Fatalf("after the first frame node %s has its pod views made", n.Name)
		}
	}
	press(m, "7")
	if got, want := len(v.t.rows), m.data.Totals.Pods; got != want || want == 0 {
		t.Fatalf("the Pods view shows %d rows, want the header's %d GPU pods", got, want)
	}
	for _, n := range m.data.Nodes {
		if len(n.running) != len(n.Pods) {
			t.Errorf("node %s: %d pod views for %d pods", n.Name, len(n.running), len(n.Pods))
		}
	}
	press(m, "1")
	m.Update(dataMsg{m.store.data()})
	if !v.t.waiting() {
		t.Errorf("new data while the Pods view is off screen remade its rows at once")
	}
	if names := m.namesFor("pods"); len(names) != m.data.Totals.Pods || v.t.waiting() {
		t.Errorf("`:pods ` completes %d names (rows waiting %v), want the %d GPU pods", len(names), v.t.waiting(), m.data.Totals.Pods)
	}
}

// TestFirstFrameAsksNoVerdict: the first frame (the Nodes view) evaluates no pending pod and looks up no
// node's pod objects; showing the Pending view before Init's evaluation came back evaluates them then, so it
// lists reasons, not "evaluating…".
func TestFirstFrameAsksNoVerdict(t *testing.T) {
	m := newDemo(t, 200, 60)
	if m.verdicts != nil || len(m.data.Pending) == 0 {
		t.Fatalf("after the first frame: %d verdicts of %d pending pods, want none evaluated", len(m.verdicts), len(m.data.Pending))
	}
	for _, n := range m.data.Nodes {
		if n.lookup == nil || n.objects != nil {
			t.Fatalf("after the first frame node %s has its pod objects looked up", n.Name)
		}
	}
	press(m, "4")
	if len(m.verdicts) != len(m.data.Pending) {
		t.Fatalf("the Pending view shown: %d verdicts of %d pending pods", len(m.verdicts), len(m.data.Pending))
	}
	if got := screen(m); strings.Contains(got, "evaluating…") {
		t.Errorf("the Pending view waits for verdicts:\n%s", got)
	}
}
