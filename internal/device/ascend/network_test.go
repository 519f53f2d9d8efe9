package ascend

import (
	"slices"
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// HAMi v2.10.0's Ascend ScoreNode (pkg/device/ascend/device.go:388-424): 10 x each container's share of its
// NPUs in their largest NetworkID group, summed, on Ascend910* chips only, 0 when a taken NPU has no NetworkID.
func TestScoreNode(t *testing.T) {
	id := func(n int) *int { return &n }
	node := []device.ScoredDevice{
		{Type: "Ascend910B3", Index: 0, NetworkID: id(0)}, {Type: "Ascend910B3", Index: 1, NetworkID: id(0)},
		{Type: "Ascend910B3", Index: 2, NetworkID: id(1)}, {Type: "Ascend910B3", Index: 3},
	}
	score := scoreNode("Ascend910B3")
	for _, tc := range []struct {
		name   string
		placed [][]int
		want   float64
	}{
		{"one NPU", [][]int{{2}}, 10},
		{"one network", [][]int{{0, 1}}, 10},
		{"split two ways", [][]int{{1, 2}}, 5},
		{"two of three", [][]int{{0, 1, 2}}, float64(float32(2) / float32(3) * 10)},
		{"two containers, each on one network", [][]int{{0, 1}, {2}}, 20},
		{"two containers, one split", [][]int{{1, 2}, {0}}, 15},
		{"an NPU without NetworkID", [][]int{{0, 3}}, 0},
		{"an NPU without NetworkID in a later container", [][]int{{0, 1}, {3}}, 0},
		{"nothing placed", nil, 0},
	} {
		if got := score(node, tc.placed); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// An Ascend910B4 request placed on Ascend910B4-1 NPUs (Kind.Sees) is scored by their NetworkIDs, which HAMi
	// reads from the devices it took.
	seen := []device.ScoredDevice{{Type: "Ascend910B4-1", Index: 0, NetworkID: id(3)}, {Type: "Ascend910B4-1", Index: 1, NetworkID: id(3)}}
	if got := scoreNode("Ascend910B4")(seen, [][]int{{0, 1}}); got != 10 {
		t.Errorf("Ascend910B4 on Ascend910B4-1 NPUs: %v, want 10", got)
	}
	if scoreNode("Ascend310P") != nil {
		t.Error("Ascend310P has a network score; HAMi scores Ascend910* only")
	}
}

// HAMi v2.10.0's needTopology (pkg/device/ascend/device.go:476-480, 595-610, 619-629): only when every NPU the
// request sees has a NetworkID; then as many candidates as asked are all taken, one NPU is the first found, and
// more go by NetworkID group, the largest first, among the NPUs the chip's own plugin registered (631-676).
func TestNetworkTopology(t *testing.T) {
	id := func(n int) *int { return &n }
	const w = "Ascend910B4"
	with := []device.ScoredDevice{{Index: 0, Vendor: w, NetworkID: id(0)}, {Index: 1, Vendor: w, NetworkID: id(1)}, {Index: 2, Vendor: w, NetworkID: id(1)}}
	topology := networkTopology(w)
	if topology(append(slices.Clone(with), device.ScoredDevice{Index: 3, Vendor: w})) != nil {
		t.Fatal("an NPU without NetworkID: HAMi has no topology on the node")
	}
	choose := topology(with)
	if choose == nil {
		t.Fatal("every NPU has a NetworkID: HAMi's topology applies")
	}
	other := func(devs []device.ScoredDevice, vendor string, which ...int) []device.ScoredDevice {
		out := slices.Clone(devs)
		for _, i := range which {
			out[i].Vendor = vendor
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		cands []device.ScoredDevice
		count int
		want  []int
	}{
		{"one: the first found", with, 1, []int{0}},
		{"two: the larger network", with, 2, []int{1, 2}},
		{"as many as found: all, in the order found", with, 3, []int{0, 1, 2}},
		{"more than found: what there is (the walk's own failure)", with, 4, []int{0, 1, 2}},
		{"another chip's NPUs are dropped from the groups", other(with, "Ascend910B4-1", 2), 2, []int{0, 1}},
		{"none of the chip's own: nothing, which HAMi's Fit takes (seed 173)", other(with, "Ascend910B4-1", 0, 1, 2), 2, []int{}},
		{"one of another chip's: still the first found", other(with, "Ascend910B4-1", 0, 1, 2), 1, []int{0}},
	} {
		if got := choose(tc.cands, tc.count); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
