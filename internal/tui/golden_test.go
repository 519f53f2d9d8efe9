package tui

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// -update rewrites the golden files in testdata. teatest's golden package defines the same flag; both
// read it.
var _ = func() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files in testdata")
	}
	return true
}()

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// goldenViews drive the demo model to each view. The screens are compared without ANSI styling (colours
// are checked separately), at 80x24 and 160x48, with the clock fixed.
var goldenViews = []struct {
	name string
	keys []string
}{
	{"nodes", nil},
	{"nodes-compact", []string{"c"}},
	{"nodes-sorted-by-memory", []string{"s"}},
	{"nodes-filtered", []string{"/", "t4", "enter"}},
	{"node", []string{":", "node gpu-a100-02", "enter"}},
	{"quotas", []string{"3"}},
	{"pending", []string{"4"}},
	{"why-pending", []string{"4", "down", "enter"}},
	{"what-if", []string{"5"}},
	{"what-if-edited", []string{"5", "enter", "tab", "ctrl+u", "9000", "tab", "tab", "ctrl+u", "team-vision", "tab", "tab", "tab", "nvidia.com/vgpu-mode=mig"}},
	{"what-if-card", []string{"5", "enter", "tab", "tab", "tab", "tab", "NVIDIA-H100-80GB-HBM3|NVIDIA-A100-SXM4-80GB", "tab", "serving"}},
	{"queues", []string{"6"}},
	{"why-pending-card", []string{":", "pending reranker", "enter", "enter"}},
	{"help", []string{"?"}},
	{"pods", []string{"7"}},
	{"pods-sorted-by-node", []string{"7", "s"}},
	{"pod", []string{":", "pods finetune", "enter", "down", "enter"}},
	{"gpu-mig", []string{":", "node gpu-h100-mig", "enter", "enter"}},
	{"yaml-node", []string{"down", "y"}},
	{"describe-pending-pod", []string{"4", "d"}},
	{"pending-namespace", []string{":", "ns infer", "enter", "4"}},
	{"pending-sorted-by-reason", []string{"4", "R"}},
}

func TestGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		for _, g := range goldenViews {
			name := fmt.Sprintf("%s-%dx%d", g.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				m := newDemo(t, size[0], size[1])
				press(m, g.keys...)
				got := screen(m)
				checkScreen(t, m, got)
				golden(t, name, got)
			})
		}
	}
}

// checkScreen asserts the size invariants of every frame: exactly height lines, none wider than the window.
func checkScreen(t *testing.T, m *Model, plain string) {
	t.Helper()
	raw := m.View().Content
	lines := strings.Split(raw, "\n")
	if len(lines) != m.height {
		t.Errorf("%d lines, want %d", len(lines), m.height)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > m.width {
			t.Errorf("line %d is %d cells wide, more than %d: %q", i+1, w, m.width, ansi.Strip(l))
		}
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `go test ./internal/tui -run TestGolden -update` to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (rerun with -update if the change is intended):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
