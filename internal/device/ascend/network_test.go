package ascend

import (
	"slices"
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
	// An Ascend910B4 request placed on Ascend910B4-1 NPUs (Kind.Sees) is scored by their NetworkIDs, which HAMi
	// reads from the devices it took; a device of a type it does not see is never one of them.
	b4 := scoreNode("Ascend910B4")
	seen := []device.ScoredDevice{{Type: "Ascend910B4-1", Index: 0, NetworkID: id(3)}, {Type: "Ascend910B4-1", Index: 1, NetworkID: id(3)},
		{Type: "Ascend910B3", Index: 2, NetworkID: id(4)}}
	if got := b4(seen, []int{0, 1}); got != 10 {
		t.Errorf("Ascend910B4 on Ascend910B4-1 NPUs: %v, want 10", got)
	}
	if got := b4(seen, []int{2}); got != 0 {
		t.Errorf("Ascend910B4 on an Ascend910B3 NPU: %v, want 0 (not its device)", got)
	}
	if scoreNode("Ascend310P") != nil {
		t.Error("Ascend310P has a network score; HAMi scores Ascend910* only")
	}
}

// HAMi v2.10.0's needTopology (pkg/device/ascend/device.go:476-480, 595-610, 619-629): only when every NPU the
// request sees has a NetworkID; then as many candidates as asked are all taken, one NPU is the first found, and
// more go by NetworkID group, the largest first.
func TestNetworkTopology(t *testing.T) {
	id := func(n int) *int { return &n }
	with := []device.ScoredDevice{{Index: 0, NetworkID: id(0)}, {Index: 1, NetworkID: id(1)}, {Index: 2, NetworkID: id(1)}}
	if networkTopology(append(slices.Clone(with), device.ScoredDevice{Index: 3})) != nil {
		t.Fatal("an NPU without NetworkID: HAMi has no topology on the node")
	}
	choose := networkTopology(with)
	if choose == nil {
		t.Fatal("every NPU has a NetworkID: HAMi's topology applies")
	}
	for _, tc := range []struct {
		name  string
		count int
		want  []int
	}{
		{"one: the first found", 1, []int{0}},
		{"two: the larger network", 2, []int{1, 2}},
		{"as many as found: all, in the order found", 3, []int{0, 1, 2}},
		{"more than found: what there is (the walk's own failure)", 4, []int{0, 1, 2}},
	} {
		if got := choose(with, tc.count); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
