package device

// GroupsLargestFirst is HAMi's computeBestCombination over device groups (Ascend's NetworkID,
// pkg/device/ascend/device.go:631-676 at v2.10.0; Vastai's cards, pkg/device/vastai/device.go:336-375): the
// candidates, in the order the Fit found them, grouped by their key; the groups the largest first, each group's
// candidates in that order, until count are taken. HAMi ranges over a map for the groups, so groups of one
// size come in an order of its own each time; here the group found first comes first. It returns positions in
// keys, fewer than count only when keys are fewer.
func GroupsLargestFirst(keys []int, count int) []int {
	var order []int       // group keys, in the order first found
	size := map[int]int{} // candidates per group
	for _, k := range keys {
		if size[k] == 0 {
			order = append(order, k)
		}
		size[k]++
	}
	// Largest first, ties in the order found: an insertion sort keeps it stable.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && size[order[j]] > size[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	out := make([]int, 0, count)
	for _, g := range order {
		for pos, k := range keys {
			if k != g {
				continue
			}
			if len(out) == count {
				return out
			}
			out = append(out, pos)
		}
	}
	return out
}

// GroupShareSum is the node score HAMi v2.10.0's Ascend and Vastai ScoreNode share (pkg/device/ascend/
// device.go:388-424, pkg/device/vastai/device.go:181-219): for each container (positions in node, init
// containers' included), the share of its devices in its most used NetworkID group (Ascend's network, Vastai's
// card), summed in float32 as HAMi adds them; 0 when any device the pod takes has no group.
func GroupShareSum(node []ScoredDevice, placed [][]int) float32 {
	var score float32
	for _, ctr := range placed {
		for _, p := range ctr {
			if node[p].NetworkID == nil {
				return 0
			}
		}
		most := 0
		for _, p := range ctr {
			most = max(most, inGroup(node, ctr, *node[p].NetworkID))
		}
		score += float32(most) / float32(len(ctr))
	}
	return score
}

// inGroup counts the devices of one container (positions in node) in the NetworkID group.
func inGroup(node []ScoredDevice, ctr []int, id int) int {
	n := 0
	for _, p := range ctr {
		if *node[p].NetworkID == id {
			n++
		}
	}
	return n
}
