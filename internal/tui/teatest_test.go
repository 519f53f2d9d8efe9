package tui

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestProgram runs the model in a real Bubble Tea program (teatest): the first frame reaches the terminal
// output, keys typed go through the program's input, and q ends it.
func TestProgram(t *testing.T) {
	m := newDemo(t, 100, 30)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitOutput(t, tm, "gpu-a100-01", "gpu-h100-01", "no agent metrics")

	// Filter, drill down, back.
	tm.Type("/a100")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyDown})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitOutput(t, tm, "finetune-a")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	// The what-if form answers as it is typed.
	tm.Type("5")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	tm.Send(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	tm.Type("70000")
	// The answer is computed off the UI goroutine: wait until it is drawn before quitting.
	waitOutput(t, tm, "6 fit now (gpu-h100-01: 6)")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	tm.Type("q")

	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if viewName(final) != "What-if" || viewOf[*nodesView](final).t.filter != "a100" || viewOf[*nodeView](final).detail != "gpu-a100-02" {
		t.Errorf("final state: view %v filter %q node %q", viewName(final), viewOf[*nodesView](final).t.filter, viewOf[*nodeView](final).detail)
	}
	if got := final.form().fields[fieldMemory].input.Value(); got != "70000" {
		t.Errorf("memory field %q, want 70000", got)
	}
	if !strings.Contains(final.form().text, "Copies: 6 fit now (gpu-h100-01: 6).") {
		t.Errorf("what-if answer:\n%s", final.form().text)
	}
}

// waitOutput waits until everything wanted has been written to the program's terminal.
func waitOutput(t *testing.T, tm *teatest.TestModel, wanted ...string) {
	t.Helper()
	var seen bytes.Buffer
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		seen.Write(b)
		for _, w := range wanted {
			if !bytes.Contains(seen.Bytes(), []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	_, _ = io.Copy(io.Discard, tm.Output())
}
