package kunlun

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// TestScoreNode is HAMi v2.10.0's Kunlun ScoreNode with calcscore (device.go:154-175, topo.go:50-97).
func TestScoreNode(t *testing.T) {
	xpus := func(used ...int) []device.ScoredDevice {
		out := make([]device.ScoredDevice, 8)
		for i := range out {
			out[i] = device.ScoredDevice{Type: "kunlun", Index: i}
		}
		for _, i := range used {
			out[i].Used = true
		}
		return out
	}
	mixed := append(xpus(), device.ScoredDevice{Type: "NVIDIA", Index: 0})
	for _, c := range []struct {
		name   string
		node   []device.ScoredDevice
		placed [][]int
		want   float64
	}{
		{"unused node, one XPU: bubbles 1 to 3", xpus(), [][]int{{0}}, 0},
		{"unused node, two in a wing: 1 to 2", xpus(), [][]int{{0, 1}}, 1000},
		{"unused node, a whole wing: 1 to 1", xpus(), [][]int{{0, 1, 2, 3}}, 2000},
		{"XPU 0 used (3), the pod takes a wing (1)", xpus(0), [][]int{{4, 5, 6, 7}}, 1000},
		{"0 and 4 used (4), the pod takes 1 (3)", xpus(0, 4), [][]int{{1}}, 3000},
		{"a device of another type: 0", mixed, [][]int{{0, 1}}, 0},
		// HAMi takes the XPUs of every container together (device.go:165-172), an XPU two take once.
		{"two containers, a wing together: 1 to 1", xpus(), [][]int{{0, 1}, {2, 3}}, 2000},
		{"an init container's XPU again in the app's: 1 to 2", xpus(), [][]int{{0, 1}, {0}}, 1000},
	} {
		if got := ScoreNode(c.node, c.placed); got != c.want {
			t.Errorf("%s: ScoreNode = %v, want %v", c.name, got, c.want)
		}
	}
}
