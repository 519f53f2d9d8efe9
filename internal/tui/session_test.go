package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// sessionSteps is a short session of `kubectl hami top --demo` at 100x30, as a user would type it: the
// simulated live usage moves between frames. README.md shows the first frames and docs/tui.md all of them.
var sessionSteps = []struct {
	at      time.Duration // time since the start
	caption string
	keys    []string
}{
	{0, "$ kubectl hami top --demo", nil},
	{4 * time.Second, "4 (Pending)", []string{"4"}},
	{8 * time.Second, "enter (why-pending numa-allreduce)", []string{"enter"}},
	{14 * time.Second, "esc, 1, c (Nodes, compact: one line per node)", []string{"esc", "1", "c"}},
	{18 * time.Second, ":node gpu-a100-02 enter (a node's GPUs and their pods)", []string{":", "node gpu-a100-02", "enter"}},
	{24 * time.Second, "6 (Queues)", []string{"6"}},
}

// readmeFrames is how many of the session's frames README.md shows.
const readmeFrames = 3

// session renders the frames of sessionSteps.
func session(t *testing.T) []string {
	t.Helper()
	start := fixedNow
	now := start
	m, err := New(Options{Snapshot: demoSnapshot(t), DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: func() time.Time { return now },
		NoColor: true, Simulate: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	var frames []string
	for _, s := range sessionSteps {
		now = start.Add(s.at)
		m.Update(m.fetchMetrics(context.Background())) // the simulated readings of that moment
		press(m, s.keys...)
		checkScreen(t, m, screen(m))
		frames = append(frames, fmt.Sprintf("── %d:%02d  %s\n%s", int(s.at.Minutes()), int(s.at.Seconds())%60, s.caption, screen(m)))
	}
	return frames
}

// TestSessionCapture pins the session's frames (testdata/session-100x30.golden) and checks that README.md and
// docs/tui.md show them as they are (-update rewrites the blocks between their session markers).
func TestSessionCapture(t *testing.T) {
	frames := session(t)
	all := strings.Join(frames, "\n")
	golden(t, "session-100x30", all)
	for _, doc := range []struct {
		path   string
		frames int
	}{
		{filepath.Join("..", "..", "README.md"), readmeFrames},
		{filepath.Join("..", "..", "docs", "tui.md"), len(frames)},
	} {
		want := "```\n" + strings.Join(frames[:doc.frames], "\n") + "```\n"
		replaceBlock(t, doc.path, "<!-- session:begin -->\n", "<!-- session:end -->", want)
	}
}

// replaceBlock checks that the file holds want between the markers; -update writes it there.
func replaceBlock(t *testing.T, path, begin, end, want string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i := strings.Index(s, begin)
	j := -1
	if i >= 0 {
		if k := strings.Index(s[i+len(begin):], end); k >= 0 {
			j = i + len(begin) + k
		}
	}
	if i < 0 || j < 0 {
		t.Fatalf("%s: no %q … %q block", path, strings.TrimSpace(begin), end)
	}
	if got := s[i+len(begin) : j]; got != want {
		if !updating() {
			t.Errorf("%s: the session capture differs from the UI (rerun with -update):\n--- got\n%s\n--- want\n%s", path, got, want)
			return
		}
		if err := os.WriteFile(path, []byte(s[:i+len(begin)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDocCapturesAreGolden: every view captured in docs/tui.md ("## NAME" and its block) is the 80x24 golden
// file of that view, so the page shows the UI as it is (-update rewrites the blocks from the golden files).
func TestDocCapturesAreGolden(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "tui.md")
	checked := 0
	for _, g := range goldenViews {
		want, err := os.ReadFile(filepath.Join("testdata", g.name+"-80x24.golden"))
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		begin := "## " + g.name + "\n\n```\n"
		if !strings.Contains(string(data), begin) {
			continue // not every view is on the page
		}
		replaceBlock(t, path, begin, "```\n", string(want))
		checked++
	}
	if checked < 5 {
		t.Errorf("%s: only %d views captured", path, checked)
	}
}
