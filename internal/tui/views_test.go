package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// probeView is a view that exists only in this test: one type, added to the registry by one line, to show
// that this is all a new view needs. It lists the nodes by name; enter counts.
type probeView struct {
	tableView
	drilled int
}

func newProbeView(Options) view {
	return &probeView{tableView: tableView{t: newTable(sortCol{"name", false})}}
}

func (v *probeView) info() viewInfo {
	return viewInfo{name: "Probe", commands: []string{"probe", "pr"}, usage: "[FILTER]", drill: [2]string{"a probe row", "a count"},
		help: [][2]string{{"Probe", "the test's own view: the nodes by name"}}, headLines: 1}
}

func (v *probeView) setData(m *common) {
	rows := make([]row, len(m.data.Nodes))
	for i, n := range m.data.Nodes {
		rows[i] = row{key: n.Name, text: n.Name, keys: []sortKey{str(n.Name)}}
	}
	v.t.setRows(rows)
}

func (v *probeView) render(m *common, height int) []string {
	lines := []string{m.styles.colHeader.Render("  PROBE NODE")}
	for _, p := range v.t.visible(height - 1) {
		marker := "  "
		if p == v.t.cursor {
			marker = "▸ "
		}
		lines = append(lines, marker+m.data.Nodes[v.t.order[p]].Name)
	}
	return lines
}

func (v *probeView) drill(*common) tea.Cmd {
	v.drilled++
	return nil
}

// withRegistry runs the test with views registered after the real ones, as a new view's line would add it.
func withRegistry(t *testing.T, extra ...func(Options) view) {
	t.Helper()
	saved := registry
	registry = append(slices.Clone(registry), extra...)
	t.Cleanup(func() { registry = saved })
}

// TestAddingAView: a view registered by one line gets a tab, the next number key, its `:` words and their
// completion, tab and shift+tab, a click on its tab, the filter, enter, and its lines in the help screen, with
// nothing else changed.
func TestAddingAView(t *testing.T) {
	withRegistry(t, newProbeView)
	if got := ViewKeys(); got != "1-8" {
		t.Errorf("ViewKeys %q, want 1-8", got)
	}
	m := newDemo(t, 200, 50)
	probe := viewOf[*probeView](m)
	if probe == nil {
		t.Fatal("the registered view is not in the model")
	}
	tabLine := func() string { return strings.Split(screen(m), "\n")[3] }
	if !strings.Contains(tabLine(), "7 Pods  8 Probe") {
		t.Errorf("tab bar %q lacks the new view after Pods", tabLine())
	}

	press(m, "8")
	if viewName(m) != "Probe" || !strings.Contains(tabLine(), "[8 Probe]") {
		t.Fatalf("8: view %q, tabs %q", viewName(m), tabLine())
	}
	if s := screen(m); !strings.Contains(s, "PROBE NODE") || !strings.Contains(s, "▸ cpu-01") || !strings.Contains(s, "  gpu-t4-03") {
		t.Errorf("the new view's body:\n%s", s)
	}
	press(m, "enter")
	if probe.drilled != 1 {
		t.Errorf("enter: drilled %d times, want 1", probe.drilled)
	}

	// tab from the last real view reaches it; tab again wraps to Nodes; shift+tab from Nodes comes back.
	press(m, "7", "tab")
	if viewName(m) != "Probe" {
		t.Errorf("tab from Pods: %q", viewName(m))
	}
	press(m, "tab")
	if viewName(m) != "Nodes" {
		t.Errorf("tab from Probe: %q, want Nodes", viewName(m))
	}
	press(m, "shift+tab")
	if viewName(m) != "Probe" {
		t.Errorf("shift+tab from Nodes: %q, want Probe", viewName(m))
	}

	// `:` completes its word, jumps by a prefix and filters by what follows.
	press(m, "1", ":", "pro")
	if hint := m.promptHint(); !strings.Contains(hint, "probe") {
		t.Errorf("completions of :pro %q lack probe", hint)
	}
	press(m, "esc", ":", "pr t4", "enter")
	if viewName(m) != "Probe" || probe.t.filter != "t4" || len(probe.t.order) != 3 {
		t.Fatalf(":pr t4: view %q filter %q, %d rows; want Probe filtered to the 3 T4 nodes", viewName(m), probe.t.filter, len(probe.t.order))
	}
	press(m, "esc", "esc")
	if viewName(m) != "Nodes" {
		t.Errorf("esc esc: %q, want Nodes (the filter first, then back)", viewName(m))
	}

	// A click on its tab shows it.
	x := strings.Index(tabLine(), " 8 Probe")
	m.Update(tea.MouseClickMsg{X: ansi.StringWidth(tabLine()[:x]) + 1, Y: 3, Button: tea.MouseLeft})
	if viewName(m) != "Probe" {
		t.Errorf("click on its tab: %q", viewName(m))
	}

	// The help screen names it in every list that the registry makes.
	press(m, "?")
	help := screen(m)
	for _, want := range []string{"1-8", "7 Pods: running GPU pods  8 Probe", ":pods [FILTER]  :probe [FILTER]  :problems",
		"on a quota or a queue: its pending pods; on a pod: its devices; on a probe row: a count", "Probe    the test's own view: the nodes by name"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
}

// TestEveryViewRenders: every registered view, tab or page, draws a whole frame at a small and a large size,
// before and after its data, without a panic and within the window.
func TestEveryViewRenders(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {200, 60}} {
		for i, mk := range registry {
			name := mk(Options{}).info().name
			t.Run(fmt.Sprintf("%s-%dx%d", name, size[0], size[1]), func(t *testing.T) {
				m := newDemo(t, size[0], size[1])
				m.switchTo(i)
				m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
				if viewName(m) != name {
					t.Fatalf("shown %q, want %q", viewName(m), name)
				}
				got := screen(m)
				checkScreen(t, m, got)
				if lines := strings.Split(got, "\n"); len(lines) < headerLines+1 || strings.TrimSpace(strings.Join(lines[headerLines:len(lines)-1], "")) == "" {
					t.Errorf("%s draws an empty body:\n%s", name, got)
				}
				// A whole new data set while it is shown.
				m.Update(dataMsg{m.store.data()})
				checkScreen(t, m, screen(m))
			})
		}
	}
}

// TestEmptyNodeViewNamesTheNodesKey: the Node view with no node chosen points at the Nodes tab by its key,
// taken from the registry.
func TestEmptyNodeViewNamesTheNodesKey(t *testing.T) {
	m, err := New(Options{Snapshot: &snapshot.Snapshot{}, DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: func() time.Time { return fixedNow }, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	press(m, "2")
	if got := screen(m); !strings.Contains(got, "no node selected: pick one in the Nodes view (1) and press enter") {
		t.Errorf("the empty Node view does not name the Nodes key:\n%s", got)
	}
}
