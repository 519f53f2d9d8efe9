package tui

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestBinaryInTmuxKeys drives the built binary on the demo at 80x24 and 200x60 with k9s' keys: y and d on a
// node and a pod, `:ns NAME` and 0, shift-letter sort (again reverses), `:` hints that lead with what enter
// opens; no STATE is cut (short words and their legend at 80 columns) and no name is split across lines;
// the MIG GPU's page shows its slices with the simulated agent's instances.
func TestBinaryInTmuxKeys(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not on PATH (%v): run `bash hack/ensure-tmux.sh` to install it", err)
	}
	bin := buildBinary(t)
	cut := regexp.MustCompile(`(unhea|cordo|devices|unregist)…`)
	for _, size := range [][2]int{{80, 24}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			tm := startTmux(t, size[0], size[1], bin, "top", "--demo")
			tm.waitFor("the first frame", "gpu-a100-01", "[1 Nodes]")
			if s := tm.screen(); cut.MatchString(s) {
				t.Errorf("a state is cut:\n%s", s)
			}
			if size[0] == 80 {
				tm.waitFor("the legend of the short states", "cdn cordoned · unh unhealthy", "n0 unh", "n1 cdn")
			}

			// y and d on the selected node, then back.
			tm.keys("y")
			tm.waitFor("the node's YAML", "YAML: Node cpu-01", "apiVersion: v1", "kind: Node")
			tm.keys("d")
			tm.waitFor("the node's description", "Describe: Node cpu-01", "Name:", "Labels:")
			tm.keys("Escape")
			tm.waitFor("back on Nodes", "[1 Nodes]", "NODE / GPU")

			// :ns NAME limits the pending pods; 0 shows every namespace again.
			tm.keys(":")
			tm.text("ns")
			tm.waitFor("the hint of :ns", "tab: ns")
			tm.text(" infer")
			tm.keys("Enter")
			tm.waitFor("the namespace in the header", "namespace inference", "2 pending")
			tm.keys("4")
			tm.waitFor("the namespace's pending pods", "llm-serve-2", "reranker-0")
			if s := tm.screen(); strings.Contains(s, "numa-allreduce") {
				t.Errorf(":ns inference still lists default/numa-allreduce:\n%s", s)
			}
			tm.keys("0")
			tm.waitFor("every namespace again", "numa-allreduce", "8 pending")

			// Shift-letter sort: R sorts by reason, R again reverses.
			tm.keys("R")
			tm.waitFor("the sort by reason", "reason ↑")
			tm.keys("R")
			tm.waitFor("the sort by reason reversed", "reason ↓")

			// d on a pending pod, and its why-pending page wraps without splitting a name.
			tm.keys("g", "d")
			tm.waitFor("the pod's description", "Describe: Pod", "Containers:", "Limits:")
			tm.keys("Escape", "Enter")
			tm.waitFor("the why-pending page", "Why pending:")
			for i, l := range strings.Split(tm.screen(), "\n") {
				if strings.HasSuffix(strings.TrimRight(l, " "), "-") {
					t.Errorf("line %d ends in a split name: %q", i, l)
				}
			}

			// `:po` hints Pods first, and enter opens it.
			tm.keys(":")
			tm.text("po")
			tm.waitFor("the hint of :po", "tab: pods · problems")
			tm.keys("Enter")
			tm.waitFor("the Pods view", "[7 Pods]")

			// The MIG GPU's page: its slices, the pod of each, the simulated agent's instances.
			tm.keys(":")
			tm.text("node gpu-h100-mig")
			tm.keys("Enter", "Enter")
			tm.waitFor("the MIG page", "MIG: 2 of 8 slices taken", "2g.20gb", "team-vision/mig-medium-0", "free placements")
			tm.waitUntil("the live instance", func(s string) bool {
				return strings.Contains(s, "GI 2 · busy") || strings.Contains(s, "GI 2 · idle")
			})
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
