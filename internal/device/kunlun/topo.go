package kunlun

import "slices"

// An 8-XPU Kunlun node is two wings of four (indices 0-3 and 4-7). Cross links join i and i+4; every pair
// within a wing is linked; the four-XPU groups spanning both wings are the ones listed in quads.
var (
	crossPairs = [][2]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}}
	quads      = [][4]int{{0, 1, 4, 5}, {2, 3, 6, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}, {0, 3, 4, 7}, {1, 2, 5, 6}}
	// oddOrder is the order in which a one-XPU request prefers a wing by its free XPUs: 1, 3, 2, 4.
	oddOrder = []int{1, 3, 2, 4}
)

// Select is HAMi's graghSelect (pkg/device/kunlun/topo.go) on the indices of the XPUs that fit, ascending:
//   - 8 XPUs: XPUs 0-7 all fit, or nothing;
//   - 1, 2 or 4 XPUs: when a wing has enough, the wing whose number of fitting XPUs is the smallest that
//     holds the request (for one XPU in the order 1, 3, 2, 4 free), left before right, its first XPUs;
//     else 2 XPUs take the first cross-linked pair, 4 XPUs the first spanning group (with 6 fitting, one
//     whose two left-over XPUs are linked, else the last group that fits);
//   - any other count: nothing.
//
// HAMi reads wings from positions in its score-sorted slice; kubectl-hami reads them from device indices,
// which is what HAMi's later fix (topo_order_test.go) does.
func Select(fit []int, count int, _ string) []int {
	left, right := 0, 0
	for _, i := range fit {
		if i < 4 {
			left++
		} else {
			right++
		}
	}
	switch count {
	case 8:
		// HAMi: eight fitting XPUs are 0-7; kubectl-hami checks that they are (a node of more than 8 XPUs).
		for i := range 8 {
			if !slices.Contains(fit, i) {
				return nil
			}
		}
		return []int{0, 1, 2, 3, 4, 5, 6, 7}
	case 1, 2, 4:
		if left >= count || right >= count {
			for slots := count; slots <= 4; slots++ {
				num := slots
				if count%2 == 1 {
					num = oddOrder[slots-1]
				}
				if left == num {
					return pick(fit, 0, count)
				}
				if right == num {
					return pick(fit, 4, count)
				}
			}
		}
		return interconnect(fit, count)
	}
	return nil
}

// pick is devicepick: the first count fitting indices from start.
func pick(fit []int, start, count int) []int {
	var out []int
	for _, i := range fit {
		if i >= start && len(out) < count {
			out = append(out, i)
		}
	}
	return out
}

func interconnect(fit []int, count int) []int {
	has := func(i int) bool { return slices.Contains(fit, i) }
	switch count {
	case 2:
		for _, a := range fit {
			for _, b := range fit {
				if a == b {
					continue
				}
				for _, p := range crossPairs {
					if p[0] == a && p[1] == b || p[0] == b && p[1] == a {
						return []int{a, b}
					}
				}
			}
		}
	case 4:
		var ret []int
		for _, q := range quads {
			if !has(q[0]) || !has(q[1]) || !has(q[2]) || !has(q[3]) {
				continue
			}
			switch len(fit) {
			case 4, 5:
				return q[:]
			case 6:
				ret = append(ret[:0], q[:]...)
				var rest []int
				for _, i := range fit {
					if !slices.Contains(q[:], i) {
						rest = append(rest, i)
					}
				}
				if linked(rest) {
					return ret
				}
			}
		}
		return ret
	}
	return nil
}

// linked reports whether two XPUs are joined: a cross link or the same wing.
func linked(two []int) bool {
	if len(two) != 2 {
		return false
	}
	a, b := min(two[0], two[1]), max(two[0], two[1])
	return b-a == 4 && a < 4 || a/4 == b/4 && b < 8
}
