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
