package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// TestResizeKeepsPlace: at 80x24, G (last node), then a 200x60 window: every node fits, so the first one is
// shown again and no body line is left blank below the rows while rows above are hidden.
func TestResizeKeepsPlace(t *testing.T) {
	m := newDemo(t, 80, 24)
	press(m, "G")
	if strings.Contains(screen(m), "cpu-01 ") {
		t.Fatalf("at 80x24 after G the first node is still shown; the test needs a scrolled table:\n%s", screen(m))
	}
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 66})
	got := screen(m)
	if viewOf[*nodesView](m).t.offset != 0 {
		t.Errorf("offset %d after growing, want 0 (every node fits)", viewOf[*nodesView](m).t.offset)
	}
	for _, want := range []string{"cpu-01", "gpu-a100-01", "gpu-t4-03"} {
		if !strings.Contains(got, want) {
			t.Errorf("200x66 after G lacks %s:\n%s", want, got)
		}
	}
	if !strings.HasPrefix(selectedLine(t, m), "▸ gpu-t4-03") {
		t.Errorf("cursor moved off the last node: %q", selectedLine(t, m))
	}
	// Shrinking again keeps the cursor's row on screen.
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if !strings.Contains(screen(m), "gpu-t4-03") {
		t.Errorf("80x24 again: the selected node is off screen:\n%s", screen(m))
	}
}

// TestTableScrollFills: the table's offset never leaves room below the last row while rows above are hidden.
func TestTableScrollFills(t *testing.T) {
	tb := newTable()
	var rows []row
	for i := range 30 {
		rows = append(rows, row{key: string(rune('a' + i)), height: 1 + i%3})
	}
	tb.setRows(rows)
	tb.end()
	tb.scroll(10)
	if tb.offset == 0 {
		t.Fatalf("offset 0 on a 10-line screen at the last of 30 rows")
	}
	for _, h := range []int{10, 20, 40, 100} {
		tb.scroll(h)
		lines := 0
		for p := tb.offset; p < len(tb.order); p++ {
			lines += tb.rowHeight(tb.order[p])
		}
		if lines > h {
			t.Errorf("height %d: rows from offset %d take %d lines, more than the screen", h, tb.offset, lines)
		}
		if tb.offset > 0 && lines+tb.rowHeight(tb.order[tb.offset-1]) <= h {
			t.Errorf("height %d: offset %d leaves room for the row above (%d lines used)", h, tb.offset, lines)
		}
	}
}

// TestFooterFits: at every width the footer keeps "? help • q quit"; wider screens keep more keys.
func TestFooterFits(t *testing.T) {
	for _, w := range []int{200, 100, 80, 60, 40, 30} {
		m := newDemo(t, w, 24)
		lines := strings.Split(strings.TrimRight(screen(m), "\n"), "\n")
		foot := lines[len(lines)-1]
		if !strings.HasSuffix(foot, "? help • q quit") {
			t.Errorf("width %d: footer %q lacks ? help • q quit at its end", w, foot)
		}
		if strings.Contains(foot, "…") {
			t.Errorf("width %d: footer is cut: %q", w, foot)
		}
		if w >= 100 && !strings.Contains(foot, "s sort column") {
			t.Errorf("width %d: footer %q dropped keys that fit", w, foot)
		}
	}
}

// problemSnapshot is the demo with two nodes' registrations broken.
func problemSnapshot(t *testing.T) *Model {
	t.Helper()
	s := demoSnapshot(t)
	for i, n := range s.Nodes {
		if n.Name == "gpu-t4-03" || n.Name == "gpu-t4-02" {
			n = n.DeepCopy()
			n.Annotations["hami.io/node-nvidia-register"] = "not json"
			s.Nodes[i] = n
		}
	}
	m, err := New(Options{Snapshot: s, Now: func() time.Time { return fixedNow }, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	return m
}

// TestProblemsOverlay: p and :problems open the list of every input problem; esc closes it.
func TestProblemsOverlay(t *testing.T) {
	m := problemSnapshot(t)
	n := len(m.data.Problems)
	if n < 2 {
		t.Fatalf("%d problems, want at least the two broken nodes", n)
	}
	if !strings.Contains(screen(m), fmt.Sprintf("⚠ %d input problems (p)", n)) {
		t.Errorf("header does not point at p:\n%s", screen(m))
	}
	press(m, "p")
	got := screen(m)
	if m.overlay != overlayProblems || !strings.Contains(got, fmt.Sprintf("%d input problems", n)) {
		t.Fatalf("p did not open the problems:\n%s", got)
	}
	for _, node := range []string{"Node gpu-t4-02", "Node gpu-t4-03"} {
		if !strings.Contains(got, node) {
			t.Errorf("problems list lacks %s:\n%s", node, got)
		}
	}
	press(m, "esc")
	if m.overlay != overlayNone || viewName(m) != "Nodes" {
		t.Errorf("esc left overlay %v view %v", m.overlay, viewName(m))
	}
	press(m, ":", "problems", "enter")
	if m.overlay != overlayProblems {
		t.Errorf(":problems did not open the list")
	}
	press(m, "p")
	if m.overlay != overlayNone {
		t.Errorf("p again did not close the list")
	}
}

// TestHelpScrolls: at 80x24 the help is longer than the screen; down scrolls it to its last line.
func TestHelpScrolls(t *testing.T) {
	m := newDemo(t, 80, 24)
	press(m, "?")
	// The help ends with the gate table's codes, each once, in the order of their first row.
	var last string
	seen := map[engine.Code]bool{}
	for _, g := range engine.Gates {
		if !seen[g.Code] {
			seen[g.Code], last = true, string(g.Code)
		}
	}
	if strings.Contains(screen(m), last) {
		t.Skip("the help fits 80x24; nothing to scroll")
	}
	press(m, "G")
	if !strings.Contains(screen(m), last) {
		t.Errorf("G in the help did not reach its end:\n%s", screen(m))
	}
	press(m, "g")
	if !strings.Contains(screen(m), "Keys") {
		t.Errorf("g in the help did not go back to its top:\n%s", screen(m))
	}
}

// TestEnterOnGPU: enter on a GPU row of the Node view opens the pods on that GPU; esc goes back to the Node
// view with the same GPU selected.
func TestEnterOnGPU(t *testing.T) {
	m := newDemo(t, 80, 24)
	press(m, ":", "node gpu-a100-02", "enter", "down", "enter")
	if viewName(m) != "GPU" {
		t.Fatalf("enter on a GPU row: view %v, want the GPU page", viewName(m))
	}
	got := screen(m)
	for _, want := range []string{"gpu-a100-02 #1 A100-SXM4-80GB", "3 pods on this GPU", "batch-render", "embedder-0", "notebook-alice", "12288 MiB", "CORES"} {
		if !strings.Contains(got, want) {
			t.Errorf("GPU page lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "notebook-bob") {
		t.Errorf("GPU page shows a pod of another GPU:\n%s", got)
	}
	if !strings.Contains(strings.Split(got, "\n")[3], "[2 Node]") {
		t.Errorf("the GPU page is not under the Node tab:\n%s", got)
	}
	press(m, "esc")
	if viewName(m) != "Node" || !strings.Contains(selectedLine(t, m), "#1 A100") {
		t.Errorf("esc: view %v, selected %q; want the Node view on #1", viewName(m), selectedLine(t, m))
	}
	// An empty GPU says so.
	press(m, "down", "down", "enter")
	if !strings.Contains(screen(m), "0 pods on this GPU") {
		t.Errorf("empty GPU page:\n%s", screen(m))
	}
}

// TestMouse: a click selects the row under it, a second click opens it; the wheel moves the selection and
// scrolls pages; a click on a tab switches the view; a click on the problems note opens them.
func TestMouse(t *testing.T) {
	m := newDemo(t, 80, 24)
	lines := strings.Split(screen(m), "\n")
	y := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "  gpu-a100-02") {
			y = i
		}
	}
	if y < 0 {
		t.Fatalf("gpu-a100-02 not on screen:\n%s", screen(m))
	}
	m.Update(tea.MouseClickMsg{X: 5, Y: y, Button: tea.MouseLeft})
	if viewOf[*nodesView](m).t.selectedKey() != "gpu-a100-02" || viewName(m) != "Nodes" {
		t.Fatalf("click on gpu-a100-02's line selected %q (view %v)", viewOf[*nodesView](m).t.selectedKey(), viewName(m))
	}
	// A click on one of its GPU lines (the same row) opens it. Selecting the node may have scrolled the table
	// to show its whole row (at 80x24 the legend of short states takes the body's last line): find it again.
	for i, l := range strings.Split(screen(m), "\n") {
		if strings.HasPrefix(l, "▸ gpu-a100-02") {
			y = i
		}
	}
	m.Update(tea.MouseClickMsg{X: 5, Y: y + 2, Button: tea.MouseLeft})
	if viewName(m) != "Node" || viewOf[*nodeView](m).detail != "gpu-a100-02" {
		t.Fatalf("second click: view %v node %q, want the Node view of gpu-a100-02", viewName(m), viewOf[*nodeView](m).detail)
	}
	// The wheel moves the selection down two GPUs.
	m.Update(tea.MouseWheelMsg{X: 5, Y: 10, Button: tea.MouseWheelDown})
	m.Update(tea.MouseWheelMsg{X: 5, Y: 10, Button: tea.MouseWheelDown})
	if got := viewOf[*nodeView](m).t.selectedKey(); got != "GPU-gpu-a100-02-2" {
		t.Errorf("after two wheel notches the Node view selects %q, want GPU #2", got)
	}
	m.Update(tea.MouseWheelMsg{X: 5, Y: 10, Button: tea.MouseWheelUp})
	if got := viewOf[*nodeView](m).t.selectedKey(); got != "GPU-gpu-a100-02-1" {
		t.Errorf("after wheel up the Node view selects %q, want GPU #1", got)
	}
	// Tabs: " 1 Nodes " is 9 columns, " 2 Node " 8, " 3 Quotas " 10: column 20 is Quotas.
	m.Update(tea.MouseClickMsg{X: 20, Y: 3, Button: tea.MouseLeft})
	if viewName(m) != "Quotas" {
		t.Errorf("click on the Quotas tab: view %v", viewName(m))
	}
	// The why-pending page scrolls with the wheel.
	press(m, "4", "enter")
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if viewOf[*verdictPage](m).pager.YOffset() != wheelStep {
		t.Errorf("wheel on the why-pending page: offset %d, want %d", viewOf[*verdictPage](m).pager.YOffset(), wheelStep)
	}
	// The problems note opens the problems.
	m.Update(tea.MouseClickMsg{X: 50, Y: 2, Button: tea.MouseLeft})
	if m.overlay != overlayProblems {
		t.Errorf("click on the problems note: overlay %v", m.overlay)
	}
	if m.View().MouseMode != tea.MouseModeCellMotion {
		t.Errorf("the view does not ask for mouse events")
	}
}

// TestConnecting: with Load the first frame says which API server is asked and for how long; an error is
// shown in full with the retry; r retries; the cluster appears when the list is in.
func TestConnecting(t *testing.T) {
	now := fixedNow
	tries := 0
	load := func(context.Context) (Loaded, error) {
		tries++
		if tries == 1 {
			return Loaded{}, errors.New(`Get "https://10.0.0.1:6443/api/v1/nodes": dial tcp 10.0.0.1:6443: i/o timeout`)
		}
		return Loaded{Snapshot: demoSnapshot(t)}, nil
	}
	m, err := New(Options{Load: load, Server: "https://10.0.0.1:6443", DeviceConfigMap: snapshot.DefaultDeviceConfigMap,
		Now: func() time.Time { return now }, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 24})
	now = now.Add(4 * time.Second)
	got := screen(m)
	for _, want := range []string{"◌ connecting…", "connecting to https://10.0.0.1:6443… 4s", "listing nodes", "? help • q quit"} {
		if !strings.Contains(got, want) {
			t.Errorf("connecting screen lacks %q:\n%s", want, got)
		}
	}
	// The first try fails: the error, the countdown, how to retry.
	m.Update(m.load()())
	got = screen(m)
	for _, want := range []string{"✗ not connected", "cannot list the cluster at https://10.0.0.1:6443", "i/o timeout", "retrying in 5s", "r retry now"} {
		if !strings.Contains(got, want) {
			t.Errorf("error screen lacks %q:\n%s", want, got)
		}
	}
	press(m, "r") // press runs the command: the second try
	if m.connect != nil || tries != 2 {
		t.Fatalf("after r: connect %+v, %d tries", m.connect, tries)
	}
	if got := screen(m); !strings.Contains(got, "gpu-a100-01") || strings.Contains(got, "connecting") {
		t.Errorf("loaded cluster not shown:\n%s", got)
	}
}

// TestTrueLabels: the Queues view's FREE counts physical cards no pod holds that are healthy and not
// cordoned (every demo A100 is held, unhealthy or cordoned: 0; six H100s of gpu-h100-01 are idle), apart
// from the queue's LEFT; Kubernetes' quota status is in HAMi's unit (MiB), not "80k".
func TestTrueLabels(t *testing.T) {
	m := newDemo(t, 160, 48)
	free := map[string]int64{}
	left := map[string]int64{}
	for _, q := range m.data.Queues {
		for _, c := range q.Cards {
			free[c.Card] = c.Free
			if q.Queue == "research" {
				left[c.Card] = max(c.Quota-c.Used, 0)
			}
		}
	}
	if free["NVIDIA-A100-SXM4-80GB"] != 0 || free["NVIDIA-H100-80GB-HBM3"] != 6 {
		t.Errorf("FREE: %v, want A100 0 and H100 6", free)
	}
	if left["NVIDIA-A100-SXM4-80GB"] != 4 {
		t.Errorf("research's A100 LEFT %d, want 4 (its quota 12 less 8 used), apart from FREE", left["NVIDIA-A100-SXM4-80GB"])
	}
	press(m, "3")
	got := screen(m)
	if !strings.Contains(got, "gpu-quota      80000 MiB") || strings.Contains(got, "80k") {
		t.Errorf("KUBERNETES STATUS not in MiB:\n%s", got)
	}
	for _, c := range []struct{ v, unit, want string }{{"48k", "MiB", "48000 MiB"}, {"70", "%", "70 %"}, {"", "MiB", "-"}, {"2", "", "2"}, {"x", "MiB", "x"}} {
		if got := kubeInUnit(c.v, c.unit, true); got != c.want {
			t.Errorf("kubeInUnit(%q, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}

// TestPromptCompletes: the `:` prompt lists completions as it is typed, tab takes the first, a near miss
// says "did you mean".
func TestPromptCompletes(t *testing.T) {
	m := newDemo(t, 120, 30)
	// The hint's first word is what enter opens: "no" is a word of Nodes, "po" of Pods, "ns" the namespace switch.
	for typed, want := range map[string]string{"no": "tab: nodes · node", "po": "tab: pods · problems", "ns": "tab: ns"} {
		press(m, ":", typed)
		if foot := lastLine(screen(m)); !strings.Contains(foot, want) {
			t.Errorf("footer while typing :%s = %q, want %q", typed, foot, want)
		}
		press(m, "esc")
	}
	press(m, ":", "no")
	press(m, "ctrl+u", "node gpu-a1")
	if foot := lastLine(screen(m)); !strings.Contains(foot, "tab: gpu-a100-01 · gpu-a100-02") {
		t.Errorf("footer while typing a node = %q", foot)
	}
	press(m, "tab")
	if got := m.input.Value(); got != "node gpu-a100-01 " {
		t.Errorf("tab completed to %q", got)
	}
	press(m, "enter")
	if viewName(m) != "Node" || viewOf[*nodeView](m).detail != "gpu-a100-01" {
		t.Errorf("after the completed :node, view %v node %q", viewName(m), viewOf[*nodeView](m).detail)
	}
	press(m, ":", "node gpu-a100-03", "enter")
	if !strings.Contains(m.status, `node "gpu-a100-03" not found; did you mean "gpu-a100-01"`) {
		t.Errorf("status after a near miss: %q", m.status)
	}
	press(m, ":", "node GPU-T4-01", "enter")
	if viewOf[*nodeView](m).detail != "gpu-t4-01" {
		t.Errorf(":node in capitals opened %q", viewOf[*nodeView](m).detail)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestSimulatedUsage: the demo's made-up readings go through the agents' wire type, are marked simulated,
// stay within what each GPU was given, move over time, and leave idle GPUs at zero.
func TestSimulatedUsage(t *testing.T) {
	now := fixedNow
	m, err := New(Options{Snapshot: demoSnapshot(t), DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: func() time.Time { return now },
		NoColor: true, Simulate: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	m.Update(m.fetchMetrics(context.Background())) // one reading (the poll would tick on)
	if m.metrics == nil || len(m.metrics.GPUs) == 0 {
		t.Fatalf("no simulated readings: %+v", m.metrics)
	}
	first := map[string]GPUMetrics{}
	for k, v := range m.metrics.GPUs {
		first[k] = v
	}
	got := screen(m)
	if !strings.Contains(got, "simulated") {
		t.Errorf("the screen does not say the usage is simulated:\n%s", got)
	}
	moved := false
	for _, n := range m.data.Nodes {
		if !n.Node.Registered {
			continue // no agent reports for GPUs HAMi cannot see (gpu-t4-03 under v2.10)
		}
		for _, g := range n.Node.GPUs {
			r, ok := first[g.UUID]
			if !ok {
				t.Errorf("%s: GPU %s has no simulated reading", n.Name, g.UUID)
				continue
			}
			if r.UsedMemMiB > g.UsedMem || r.UsedMemMiB < 0 {
				t.Errorf("%s #%d: simulated %d MiB used of %d allocated", n.Name, g.Index, r.UsedMemMiB, g.UsedMem)
			}
			if g.UsedMem == 0 && (r.UsedMemMiB != 0 || r.Utilization > 0) {
				t.Errorf("%s #%d: idle GPU shows %+v", n.Name, g.Index, r)
			}
			if (g.Mode == "mig") != (r.Utilization < 0) {
				t.Errorf("%s #%d (%s): utilisation %d", n.Name, g.Index, g.Mode, r.Utilization)
			}
		}
	}
	now = now.Add(7 * time.Second)
	m.Update(m.fetchMetrics(context.Background())) // one reading (the poll would tick on)
	for k, v := range m.metrics.GPUs {
		if v != first[k] {
			moved = true
		}
	}
	if !moved {
		t.Errorf("the simulated readings did not move in 7 s")
	}
}
