package tui

import (
	"image/color"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// selectedName is the name on the line the cursor marks.
func selectedLine(t *testing.T, m *Model) string {
	t.Helper()
	for _, l := range strings.Split(screen(m), "\n") {
		if strings.HasPrefix(l, "▸ ") {
			return l
		}
	}
	t.Fatalf("no selected line on screen:\n%s", screen(m))
	return ""
}

func TestFilterNodes(t *testing.T) {
	m := newDemo(t, 80, 24)
	press(m, "/", "a100")
	if m.mode != modeFilter {
		t.Fatalf("mode %v after /, want the filter line", m.mode)
	}
	got := screen(m)
	for _, want := range []string{"gpu-a100-01", "gpu-a100-02", "/a100 2 of 11"} {
		if !strings.Contains(got, want) {
			t.Errorf("filtered screen lacks %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"gpu-t4-01", "gpu-h100-01", "cpu-01"} {
		if strings.Contains(got, gone) {
			t.Errorf("filtered screen still shows %s:\n%s", gone, got)
		}
	}
	// The filter is fuzzy: "t43" finds gpu-t4-03 only.
	press(m, "ctrl+u", "t43")
	if rows := viewOf[*nodesView](m).t.order; len(rows) != 1 || m.data.Nodes[rows[0]].Name != "gpu-t4-03" {
		t.Errorf("fuzzy filter t43 kept %d rows, want gpu-t4-03 only", len(rows))
	}
	// enter keeps the filter, esc (in the table) clears it.
	press(m, "enter")
	if m.mode != modeNormal || viewOf[*nodesView](m).t.filter != "t43" {
		t.Fatalf("after enter: mode %v filter %q, want normal mode keeping t43", m.mode, viewOf[*nodesView](m).t.filter)
	}
	press(m, "esc")
	if viewOf[*nodesView](m).t.filter != "" || len(viewOf[*nodesView](m).t.order) != 11 {
		t.Errorf("esc left filter %q and %d rows, want no filter and 11 rows", viewOf[*nodesView](m).t.filter, len(viewOf[*nodesView](m).t.order))
	}
	// esc while typing drops the filter at once.
	press(m, "/", "h100", "esc")
	if viewOf[*nodesView](m).t.filter != "" || m.mode != modeNormal {
		t.Errorf("esc while filtering left filter %q mode %v", viewOf[*nodesView](m).t.filter, m.mode)
	}
	// Each table keeps its own filter.
	press(m, "4", "/", "team", "enter")
	if got := len(viewOf[*pendingView](m).t.order); got != 2 {
		t.Errorf("pending filtered by team: %d rows, want 2 (team-vision)", got)
	}
	press(m, "1")
	if viewOf[*nodesView](m).t.filter != "" {
		t.Errorf("the pending filter leaked into nodes: %q", viewOf[*nodesView](m).t.filter)
	}
}

func TestDrillDownAndBack(t *testing.T) {
	m := newDemo(t, 80, 24)
	press(m, "down", "down") // cpu-01, gpu-a100-01, gpu-a100-02
	if l := selectedLine(t, m); !strings.Contains(l, "gpu-a100-02") {
		t.Fatalf("cursor on %q, want gpu-a100-02", l)
	}
	press(m, "enter")
	if viewName(m) != "Node" || viewOf[*nodeView](m).detail != "gpu-a100-02" {
		t.Fatalf("enter: view %v node %q, want the Node view of gpu-a100-02", viewName(m), viewOf[*nodeView](m).detail)
	}
	got := screen(m)
	for _, want := range []string{"gpu-a100-02 · 8 GPUs · 6 pods", "finetune-b", "batch-render", "notebook-alice", "40000 MiB", "unhealthy", "cordoned", "[2 Node]"} {
		if !strings.Contains(got, want) {
			t.Errorf("node detail lacks %q:\n%s", want, got)
		}
	}
	press(m, "esc")
	if viewName(m) != "Nodes" {
		t.Fatalf("esc: view %v, want Nodes", viewName(m))
	}
	if l := selectedLine(t, m); !strings.Contains(l, "gpu-a100-02") {
		t.Errorf("back in Nodes the cursor is on %q, want gpu-a100-02", l)
	}

	// Pending: enter opens the explanation, esc goes back.
	press(m, "4", "down", "enter")
	if viewName(m) != "Why pending" || viewOf[*verdictPage](m).pod != "inference/llm-serve-2" {
		t.Fatalf("enter on pending: view %v pod %q", viewName(m), viewOf[*verdictPage](m).pod)
	}
	got = screen(m)
	for _, want := range []string{"Why pending: inference/llm-serve-2", "ResourceQuotaNotFit"} {
		if !strings.Contains(got, want) {
			t.Errorf("why-pending page lacks %q:\n%s", want, got)
		}
	}
	if !strings.Contains(viewOf[*verdictPage](m).text, "Namespace quota (inference), as HAMi accounts it:") {
		t.Errorf("why-pending text lacks the quota section:\n%s", viewOf[*verdictPage](m).text)
	}
	// The page scrolls.
	before := viewOf[*verdictPage](m).pager.YOffset()
	press(m, "pgdown")
	if viewOf[*verdictPage](m).pager.YOffset() <= before {
		t.Errorf("pgdown did not scroll the explanation (offset %d)", viewOf[*verdictPage](m).pager.YOffset())
	}
	press(m, "esc")
	if viewName(m) != "Pending" {
		t.Errorf("esc from the explanation: view %v, want Pending", viewName(m))
	}

	// A quota drills into its namespace's pending pods.
	press(m, "3", "down", "enter")
	if viewName(m) != "Pending" || viewOf[*pendingView](m).t.filter != "inference/" {
		t.Errorf("enter on the inference quota: view %v filter %q", viewName(m), viewOf[*pendingView](m).t.filter)
	}
	if !strings.Contains(screen(m), "llm-serve-2") {
		t.Errorf("inference's pending pods not shown:\n%s", screen(m))
	}
	// esc clears the filter, then goes back.
	press(m, "esc", "esc")
	if viewName(m) != "Quotas" {
		t.Errorf("esc esc: view %v, want Quotas", viewName(m))
	}
}

// TestWhyPendingMatchesCLI: the explanation is the CLI's text (internal/cli/testdata, made by why-pending).
func TestWhyPendingMatchesCLI(t *testing.T) {
	m := newDemo(t, 200, 80)
	press(m, ":", "pending llm-serve", "enter", "enter")
	want, err := os.ReadFile("../cli/testdata/why-pending-quota.txt")
	if err != nil {
		t.Fatal(err)
	}
	if viewOf[*verdictPage](m).text != strings.TrimRight(string(want), "\n") {
		t.Errorf("explanation differs from `why-pending llm-serve-2 -n inference`:\n--- tui\n%s\n--- cli\n%s", viewOf[*verdictPage](m).text, want)
	}
}

func TestWhatIfAnswers(t *testing.T) {
	m := newDemo(t, 120, 40)
	press(m, "5")
	if !strings.Contains(screen(m), "✓ lands on gpu-t4-01 GPU 0 (8000 MiB, 30%)") {
		t.Errorf("default form answer:\n%s", screen(m))
	}
	// The what-if command's own case: -n team-vision --gpus 1 --gpumem 8000 --gpucores 20.
	press(m, "enter", "tab", "tab", "ctrl+u", "20", "tab", "ctrl+u", "team-vision", "esc")
	if m.form().editing {
		t.Fatal("esc did not leave the form")
	}
	got := m.form().text
	if !strings.Contains(got, "Copies: 7 fit now (gpu-a100-01: 7).") {
		t.Errorf("copies line missing:\n%s", got)
	}
	cli, err := os.ReadFile("../cli/testdata/what-if-fits.txt")
	if err != nil {
		t.Fatal(err)
	}
	explanation, _, _ := strings.Cut(string(cli), "\nCopies:")
	if !strings.Contains(ansi.Strip(got), strings.TrimRight(explanation, "\n")) {
		t.Errorf("what-if answer does not contain the what-if command's explanation:\n--- tui\n%s\n--- cli\n%s", got, explanation)
	}
	// Every key answers: a memory no GPU has does not fit. (enter returns to the field left: Namespace.)
	press(m, "enter", "up", "up", "ctrl+u", "90000")
	if a := ansi.Strip(m.form().text); !strings.Contains(a, "✗ does not fit now: ResourceQuotaNotFit on 6/11 nodes") || !strings.Contains(a, "Copies: 0 fit now.") {
		t.Errorf("90000 MiB answer:\n%s", m.form().text)
	}
	// Bad input says what is wrong instead of answering.
	press(m, "ctrl+u", "lots")
	if !strings.Contains(m.form().err, `memory "lots"`) {
		t.Errorf("error %q, want one about Memory", m.form().err)
	}
	// Percentages work, and the quota gate answers for inference.
	press(m, "ctrl+u", "50%", "tab", "tab", "ctrl+u", "inference")
	if !strings.Contains(ansi.Strip(m.form().text), "ResourceQuotaNotFit") {
		t.Errorf("50%% in inference should hit the quota:\n%s", m.form().text)
	}
	// While the form is edited, number keys type digits instead of switching views.
	press(m, "up", "ctrl+u", "2")
	if m.form().focused != fieldCores {
		t.Fatalf("focused field %d, want Cores", m.form().focused)
	}
	if viewName(m) != "What-if" || m.form().fields[fieldCores].input.Value() != "2" {
		t.Errorf("typing 2 in the form: view %v cores %q", viewName(m), m.form().fields[fieldCores].input.Value())
	}
}

func TestCommandsTabsAndSort(t *testing.T) {
	m := newDemo(t, 80, 24)
	press(m, ":", "quo", "enter")
	if viewName(m) != "Quotas" {
		t.Errorf(":quo -> view %v, want Quotas", viewName(m))
	}
	press(m, ":", "node gpu-t4-01", "enter")
	if viewName(m) != "Node" || viewOf[*nodeView](m).detail != "gpu-t4-01" {
		t.Errorf(":node gpu-t4-01 -> view %v node %q", viewName(m), viewOf[*nodeView](m).detail)
	}
	press(m, ":", "nosuch", "enter")
	if !strings.Contains(screen(m), `unknown view "nosuch"`) {
		t.Errorf("unknown command not reported:\n%s", screen(m))
	}
	press(m, ":", "node nosuch", "enter")
	if !strings.Contains(screen(m), `node "nosuch" not found`) {
		t.Errorf("unknown node not reported:\n%s", screen(m))
	}
	// tab cycles through the seven views and wraps; shift+tab goes back.
	press(m, "1")
	var seen []string
	for range 7 {
		press(m, "tab")
		seen = append(seen, viewName(m))
	}
	if want := []string{"Node", "Quotas", "Pending", "What-if", "Queues", "Pods", "Nodes"}; !equalViews(seen, want) {
		t.Errorf("tab went through %v, want %v", seen, want)
	}
	press(m, "shift+tab")
	if viewName(m) != "Pods" {
		t.Errorf("shift+tab from Nodes: %v, want Pods", viewName(m))
	}
	press(m, ":", "queues", "enter")
	if viewName(m) != "Queues" {
		t.Errorf(":queues -> view %v, want Queues", viewName(m))
	}
	// s cycles the sort column; S reverses it.
	press(m, "1", "s")
	if first := m.data.Nodes[viewOf[*nodesView](m).t.order[0]].Name; viewOf[*nodesView](m).t.sortName() != "memory ↓" || first != "gpu-a100-01" {
		t.Errorf("sort %q, first %q: want memory ↓ with gpu-a100-01 (85%%) first", viewOf[*nodesView](m).t.sortName(), first)
	}
	if !strings.Contains(selectedLine(t, m), "gpu-t4-01") {
		t.Errorf("sorting moved the cursor off gpu-t4-01: %q", selectedLine(t, m))
	}
	press(m, "g", "S")
	if viewOf[*nodesView](m).t.sortName() != "memory ↑" {
		t.Errorf("S: sort %q, want memory ↑", viewOf[*nodesView](m).t.sortName())
	}
	if first := m.data.Nodes[viewOf[*nodesView](m).t.order[0]].Name; first != "cpu-01" {
		t.Errorf("ascending memory starts with %s, want cpu-01 (no GPUs)", first)
	}
	// ? opens help, esc closes it.
	press(m, "?")
	if !strings.Contains(screen(m), "Keys") || m.overlay != overlayHelp {
		t.Errorf("? did not open the help")
	}
	press(m, "esc")
	if m.overlay == overlayHelp {
		t.Errorf("esc did not close the help")
	}
}

func equalViews(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestQuit(t *testing.T) {
	for _, keys := range [][]string{{"q"}, {"ctrl+c"}, {"/", "ctrl+c"}, {":", "q", "enter"}, {"5", "enter", "ctrl+c"}} {
		m := newDemo(t, 80, 24)
		cmd := press(m, keys...)
		if cmd == nil {
			t.Errorf("%v: no command, want tea.Quit", keys)
			continue
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%v: command does not quit", keys)
		}
	}
	// q types a q in the filter.
	m := newDemo(t, 80, 24)
	if cmd := press(m, "/", "q"); cmd != nil {
		if _, ok := cmd().(tea.QuitMsg); ok {
			t.Errorf("q while filtering quit")
		}
	}
}

// TestResize: every frame fits the window, down to very small ones, and a resize keeps the cursor visible.
func TestResize(t *testing.T) {
	m := newDemo(t, 160, 48)
	press(m, "G") // last node
	for _, size := range [][2]int{{80, 24}, {100, 30}, {60, 15}, {40, 10}, {200, 60}} {
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		for _, keys := range [][]string{{"1"}, {"2"}, {"3"}, {"4"}, {"4", "enter"}, {"5"}, {"?"}, {"esc", "1"}} {
			press(m, keys...)
			checkScreen(t, m, screen(m))
		}
		if !strings.Contains(screen(m), "gpu-t4-03") {
			t.Errorf("%dx%d: the selected last node is off screen:\n%s", size[0], size[1], screen(m))
		}
	}
}

var colourSGR = regexp.MustCompile(`\x1b\[[0-9;]*(38|48);[25];`)

func TestNoColor(t *testing.T) {
	m := newDemo(t, 80, 24) // NoColor
	if colourSGR.MatchString(m.View().Content) {
		t.Errorf("NO_COLOR frame has colour sequences")
	}
	if !strings.Contains(m.View().Content, "\x1b[") {
		t.Errorf("NO_COLOR frame lost its attributes (reverse video for the selection)")
	}
	c, err := New(Options{Snapshot: demoSnapshot(t), Now: m.now})
	if err != nil {
		t.Fatal(err)
	}
	c.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if !colourSGR.MatchString(c.View().Content) {
		t.Errorf("coloured frame has no colour sequences")
	}
	// A light terminal background switches the palette; the text stays the same.
	dark := screen(c)
	c.Update(tea.BackgroundColorMsg{Color: color.White})
	if c.dark {
		t.Errorf("white background read as dark")
	}
	if screen(c) != dark {
		t.Errorf("light palette changed the text")
	}
}

func TestThresholdColours(t *testing.T) {
	s := newStyles(true, false)
	for _, tc := range []struct {
		used int64
		want string
	}{{10, "ok"}, {69, "ok"}, {70, "warn"}, {89, "warn"}, {90, "crit"}, {100, "crit"}} {
		got := s.level(tc.used)
		want := map[string]string{"ok": s.ok.Render("x"), "warn": s.warn.Render("x"), "crit": s.crit.Render("x")}[tc.want]
		if got.Render("x") != want {
			t.Errorf("%d%%: not the %s style", tc.used, tc.want)
		}
	}
}

func TestBar(t *testing.T) {
	s := newStyles(true, true)
	for _, tc := range []struct {
		used, total, live int64
		want              string
	}{
		{0, 100, -1, "░░░░░░░░░░"},
		{50, 100, -1, "█████░░░░░"},
		{55, 100, -1, "█████▌░░░░"},
		{100, 100, -1, "██████████"},
		{1, 1000, -1, "▏░░░░░░░░░"}, // anything allocated shows
		{80, 100, 30, "███▒▒▒▒▒░░"}, // live usage overlaid on the allocation
		{0, 0, -1, "··········"},
	} {
		if got := ansi.Strip(s.bar(10, tc.used, tc.total, tc.live)); got != tc.want {
			t.Errorf("bar(%d/%d live %d) = %q, want %q", tc.used, tc.total, tc.live, got, tc.want)
		}
	}
}

// TestMetricsOverlay: the agent's numbers replace "n/a" and shade the bars.
func TestMetricsOverlay(t *testing.T) {
	m := newDemo(t, 160, 48)
	if !strings.Contains(screen(m), "n/a (no agent metrics)") {
		t.Fatalf("no n/a note without metrics")
	}
	m.Update(MetricsMsg{GPUs: map[string]GPUMetrics{"GPU-gpu-a100-01-0": {UsedMemMiB: 40960, Utilization: 57}}, Note: "live GPU usage from the agent"})
	got := screen(m)
	var gpu0 string
	for _, l := range strings.Split(got, "\n") {
		if strings.Contains(l, "#0 A100") {
			gpu0 = l
			break
		}
	}
	if !strings.Contains(gpu0, "40G") || !strings.Contains(gpu0, "57%") || !strings.Contains(gpu0, "▒") {
		t.Errorf("GPU 0 line lacks the live numbers or the overlay: %q", gpu0)
	}
	if !strings.Contains(got, "live GPU usage from the agent") {
		t.Errorf("metrics note not in the header")
	}
}

// TestRowsKeepSelectionOnUpdate: new data keeps the cursor on the same node.
func TestRowsKeepSelectionOnUpdate(t *testing.T) {
	m := newDemo(t, 80, 24)
	press(m, "/", "t4", "enter", "down")
	sel := viewOf[*nodesView](m).t.selectedKey()
	m.Update(dataMsg{m.store.data()})
	if viewOf[*nodesView](m).t.selectedKey() != sel || viewOf[*nodesView](m).t.filter != "t4" {
		t.Errorf("after new data: selected %q filter %q, want %q and t4", viewOf[*nodesView](m).t.selectedKey(), viewOf[*nodesView](m).t.filter, sel)
	}
}

// TestHeaderWarnings: malformed annotations are counted and the first one is named in the header.
func TestHeaderWarnings(t *testing.T) {
	s := demoSnapshot(t)
	for _, n := range s.Nodes {
		if n.Name == "gpu-t4-03" {
			n = n.DeepCopy()
			n.Annotations["hami.io/node-nvidia-register"] = "not json"
			for i := range s.Nodes {
				if s.Nodes[i].Name == n.Name {
					s.Nodes[i] = n
				}
			}
		}
	}
	m, err := New(Options{Snapshot: s, Now: func() time.Time { return fixedNow }, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	got := screen(m)
	if !strings.Contains(got, "⚠ 1 input problem (p): Node gpu-t4-03: metadata.annotations[hami.io/node-nvidia-register]") {
		t.Errorf("header does not warn about the bad annotation:\n%s", got)
	}
}
