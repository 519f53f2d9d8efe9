package tui

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// TestDocProseCaptures: the screens docs/tui.md shows beside its prose (each block after a
// `<!-- capture: NAME -->` marker) are the UI's, rendered here on the demo; -update rewrites them.
func TestDocProseCaptures(t *testing.T) {
	simulated := func(t *testing.T, w, h int) *Model {
		m, err := New(Options{Snapshot: demoSnapshot(t), DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: func() time.Time { return fixedNow },
			NoColor: true, Simulate: true})
		if err != nil {
			t.Fatal(err)
		}
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		m.Update(m.fetchMetrics(context.Background()))
		return m
	}
	connecting := func(t *testing.T, fail bool) string {
		load := func(context.Context) (Loaded, error) {
			return Loaded{}, errors.New(`Get "https://10.0.0.1:6443/api/v1/nodes": dial tcp 10.0.0.1:6443: i/o timeout`)
		}
		now := fixedNow
		m, err := New(Options{Load: load, Server: "https://10.0.0.1:6443", Context: "prod", DeviceConfigMap: snapshot.DefaultDeviceConfigMap,
			Now: func() time.Time { return now }, NoColor: true})
		if err != nil {
			t.Fatal(err)
		}
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 14})
		now = now.Add(4 * time.Second)
		if fail {
			m.Update(m.load()())
			now = now.Add(time.Second)
		}
		return screen(m)
	}
	demo := func(w, h int, keys ...string) func(t *testing.T) string {
		return func(t *testing.T) string {
			m := newDemo(t, w, h)
			press(m, keys...)
			return screen(m)
		}
	}
	captures := []struct {
		name   string
		render func(t *testing.T) string
	}{
		{"problems", demo(80, 24, "p")},
		{"gpu-page", demo(80, 24, ":", "node gpu-a100-02", "enter", "down", "enter")},
		{"prompt", demo(80, 24, ":", "node gpu-a1")},
		{"not-found", func(t *testing.T) string {
			m := newDemo(t, 80, 24)
			press(m, ":", "node gpu-a100-03", "enter")
			return lastLine(screen(m)) + "\n"
		}},
		{"connecting", func(t *testing.T) string { return connecting(t, false) }},
		{"connect-error", func(t *testing.T) string { return connecting(t, true) }},
		{"simulated", func(t *testing.T) string { return screen(simulated(t, 100, 16)) }},
		{"mig-page", func(t *testing.T) string {
			m := simulated(t, 100, 26)
			press(m, ":", "node gpu-h100-mig", "enter", "enter")
			return screen(m)
		}},
		{"namespace", demo(80, 24, ":", "ns inference", "enter", "4")},
		{"yaml", demo(80, 24, "4", "y")},
	}
	path := filepath.Join("..", "..", "docs", "tui.md")
	for _, c := range captures {
		got := c.render(t)
		if !strings.HasSuffix(got, "\n") {
			got += "\n"
		}
		replaceBlock(t, path, "<!-- capture: "+c.name+" -->\n```\n", "```\n", got)
	}
}
