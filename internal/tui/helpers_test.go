package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-hami/kubectl-hami/examples"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// fixedNow is one hour after the demo cluster's pods were created (2026-11-20 09:00 UTC), as in the CLI tests.
var fixedNow = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

func demoSnapshot(t testing.TB) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.Parse(examples.DemoCluster, "demo-cluster.yaml (embedded)")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newDemo is the model on the demo cluster at a fixed time, sized width x height.
func newDemo(t testing.TB, width, height int) *Model {
	t.Helper()
	m, err := New(Options{Snapshot: demoSnapshot(t), DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: func() time.Time { return fixedNow }, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	return m
}

// screen is the model's content without ANSI styling, with trailing blanks trimmed per line.
func screen(m *Model) string {
	return trimLines(ansi.Strip(m.View().Content))
}

func trimLines(s string) string {
	lines := splitLines(s)
	for i, l := range lines {
		lines[i] = trimRight(l)
	}
	return joinLines(lines)
}

// press sends keys to the model: named keys ("enter", "esc", "tab", "shift+tab", "up", "down", "pgdown",
// "ctrl+c", "backspace") or text typed rune by rune. The commands they return run at once and their
// messages go back into Update, as a program would do; the last key's command is returned.
func press(m *Model, keys ...string) tea.Cmd {
	var last tea.Cmd
	for _, k := range keys {
		for _, msg := range keyMsgs(k) {
			_, last = m.Update(msg)
			runCmd(m, last)
		}
	}
	return last
}

// runCmd runs a command and feeds its messages to the model (quitting is left to the caller).
func runCmd(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil, tea.QuitMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			runCmd(m, c)
		}
	default:
		_, next := m.Update(msg)
		runCmd(m, next)
	}
}

func keyMsgs(k string) []tea.KeyPressMsg {
	named := map[string]tea.KeyPressMsg{
		"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "tab": {Code: tea.KeyTab},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift}, "up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown},
		"pgdown": {Code: tea.KeyPgDown}, "pgup": {Code: tea.KeyPgUp}, "backspace": {Code: tea.KeyBackspace},
		"ctrl+c": {Code: 'c', Mod: tea.ModCtrl}, "ctrl+u": {Code: 'u', Mod: tea.ModCtrl},
	}
	if msg, ok := named[k]; ok {
		return []tea.KeyPressMsg{msg}
	}
	var out []tea.KeyPressMsg
	for _, r := range k {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

func trimRight(s string) string { return strings.TrimRight(s, " ") }

func joinLines(l []string) string { return strings.Join(l, "\n") + "\n" }

// viewName is the name of the view shown ("Nodes", "Why pending").
func viewName(m *Model) string { return m.current().info().name }
