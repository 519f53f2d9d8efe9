package ascend

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// HAMi v2.10.0's Ascend ScoreNode (pkg/device/ascend/device.go:388-424): 10 x the share of the pod's NPUs in
// their largest NetworkID group, on Ascend910* chips only, 0 when a taken NPU has no NetworkID.
func TestScoreNode(t *testing.T) {
	id := func(n int) *int { return &n }
	node := []device.ScoredDevice{
		{Type: "Ascend910B3", Index: 0, NetworkID: id(0)}, {Type: "Ascend910B3", Index: 1, NetworkID: id(0)},
		{Type: "Ascend910B3", Index: 2, NetworkID: id(1)}, {Type: "Ascend910B3", Index: 3},
		{Type: "NVIDIA-A100", Index: 2, NetworkID: id(7)},
	}
	score := scoreNode("Ascend910B3")
	for _, tc := range []struct {
		name   string
		placed []int
		want   float64
	}{
		{"one NPU", []int{2}, 10},
		{"one network", []int{0, 1}, 10},
		{"split two ways", []int{1, 2}, 5},
		{"two of three", []int{0, 1, 2}, float64(float32(2) / float32(3) * 10)},
		{"an NPU without NetworkID", []int{0, 3}, 0},
		{"nothing placed", nil, 0},
	} {
		if got := score(node, tc.placed); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if scoreNode("Ascend310P") != nil {
		t.Error("Ascend310P has a network score; HAMi scores Ascend910* only")
	}
}
