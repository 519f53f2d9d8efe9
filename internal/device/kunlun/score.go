package kunlun

import (
	"slices"
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// ScoreNode is HAMi v2.10.0's whole-XPU ScoreNode (pkg/device/kunlun/device.go:154-175 with calcscore,
// topo.go:50-97): 0 on a node with any device that is not a Kunlun XPU; else it compares the broken wings
// (countbubble, by index) of the XPUs used before the pod with those of the XPUs the pod takes alone: one
// fewer 3000, as many 2000, one more 1000, two more 0, else 1000. HAMi adds it to the node's score as it is
// (Kunlun is no policy-neutral scorer): binpack prefers the higher, spread the lower. The pod's XPUs are
// those of all its containers together, init containers' included (HAMi's current, device.go:165-172).
func ScoreNode(node []device.ScoredDevice, placed [][]int) float64 {
	var prev []int
	for _, d := range node {
		if !strings.Contains(d.Type, "kunlun") {
			return 0
		}
		if d.Used && !slices.Contains(prev, d.Index) {
			prev = append(prev, d.Index)
		}
	}
	var cur []int
	for _, ctr := range placed {
		for _, p := range ctr {
			if i := node[p].Index; !slices.Contains(cur, i) {
				cur = append(cur, i)
			}
		}
	}
	switch countBubble(cur) - countBubble(prev) {
	case -1:
		return 3000
	case 0:
		return 2000
	case 1:
		return 1000
	case 2:
		return 0
	}
	return 1000
}

// countBubble is HAMi's countbubble: each wing (by index) scores 0 with four XPUs, 2 with one, else 1; no
// XPUs at all is 1.
func countBubble(idx []int) int {
	left, right := 0, 0
	for _, i := range idx {
		if i < 4 {
			left++
		} else {
			right++
		}
	}
	if left == 0 && right == 0 {
		return 1
	}
	return wingValue(left) + wingValue(right)
}

func wingValue(n int) int {
	switch n {
	case 4:
		return 0
	case 1:
		return 2
	}
	return 1
}
