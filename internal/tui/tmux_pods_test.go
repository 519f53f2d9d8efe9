package tui

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryInTmuxPods drives the built binary on the demo (simulated live usage) at 80x24 and 200x60: the
// Pods view with allocated and live numbers, its sort by utilisation and its filter, a pod's page with the
// processes the agent found, and the GPU page's utilisation sparkline.
func TestBinaryInTmuxPods(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not on PATH (%v): run `bash hack/ensure-tmux.sh` to install it", err)
	}
	bin := buildBinary(t)
	for _, size := range [][2]int{{80, 24}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			tm := startTmux(t, size[0], size[1], bin, "top", "--demo")
			tm.waitFor("the first frame", "gpu-a100-01", "simulated")
			tm.keys("7")
			tm.waitFor("the Pods view", "[7 Pods]", "batch-render", "pretrain-0", "ALLOC")
			// The simulated agent's numbers reach the rows: batch-render's LIVE and UTIL are not n/a.
			tm.waitUntil("batch-render's live numbers", func(s string) bool {
				l := lineWith(s, "batch-render")
				return l != "" && !strings.Contains(l, "n/a")
			})
			for range 6 {
				tm.keys("s")
			}
			tm.waitFor("the sort by utilisation", "util ↓")
			tm.keys("/")
			tm.text("team-vision")
			tm.keys("Enter")
			// Wait for the whole filter: while "team-vision" is still being typed, "/t 15 of 19" also holds "5 of 19".
			// A filter that keeps batch-render never gets here and fails with the screen.
			tm.waitUntil("the filter /team-vision without batch-render", func(s string) bool {
				return strings.Contains(s, " 5 of 19") && strings.Contains(s, "segmenter-0") && !strings.Contains(s, "batch-render")
			})
			tm.keys("Escape", ":")
			tm.text("pods batch-render")
			tm.keys("Enter", "Enter")
			tm.waitFor("the pod page", "default/batch-render on gpu-a100-02 · Running", "#0 A100-SXM4-80GB", "#1 A100-SXM4-80GB", "PID")
			tm.keys("Escape", ":")
			tm.text("node gpu-a100-02")
			tm.keys("Enter")
			tm.waitFor("the Node view", "alloc 30000 MiB")
			if size[0] >= 100 {
				tm.waitFor("the pods' live memory under their GPU", "LIVE MEM", "live ")
			}
			tm.keys("Enter")
			tm.waitFor("the GPU page's sparkline", "utilisation, last")
			for i, l := range strings.Split(tm.screen(), "\n") {
				if w := len([]rune(strings.TrimRight(l, " "))); w > size[0] {
					t.Errorf("line %d is %d wide at %d columns: %q", i, w, size[0], l)
				}
			}
			tm.keys("q")
			tm.waitExit()
		})
	}
}
