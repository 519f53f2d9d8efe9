package kunlun

import "slices"

// An 8-XPU Kunlun node is two wings of four. Cross links join XPUs i and i+4 (InterGroupConnection); every
// pair within a wing is linked (GroupConnection); the four-XPU groups spanning both wings are the ones listed
// in quads (InterGroupConnection2). These name XPUs by index.
var (
	crossPairs = [][2]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}}
	quads      = [][4]int{{0, 1, 4, 5}, {2, 3, 6, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}, {0, 3, 4, 7}, {1, 2, 5, 6}}
	// oddOrder is the order in which a one-XPU request prefers a wing by its free XPUs: 1, 3, 2, 4.
	oddOrder = []int{1, 3, 2, 4}
)

// GraphSelect is HAMi v2.10.0's graghSelect (pkg/device/kunlun/topo.go:222-268) line by line. order is the
// Kind's XPUs by Index in the order HAMi hands them to Fit (its score-sorted list), fit whether each passed.
// As at the tag, the wings are positions 0-3 and 4-7 of that list, not indices, and devicepick takes the
// XPUs at those positions; the interconnect fallback names XPUs by index:
//   - 8 XPUs: eight fitting XPUs anywhere give indices 0-7, or nothing;
//   - 1, 2 or 4 XPUs: when a wing has enough, the wing whose number of fitting XPUs is the smallest that
//     holds the request (for one XPU in the order 1, 3, 2, 4 free), left before right, its first fitting
//     positions; else 2 XPUs take the first cross-linked pair in list order, 4 XPUs the first spanning group
//     (with 6 fitting, one whose two left-over XPUs are linked, else the last group that fits);
//   - any other count: nothing.
//
// HAMi's later fix (topo_order_test.go, not in the tag) reads the wings by index; --hami-version 2.10 is the
// tag.
func GraphSelect(order []int, fit []bool, count int) []int {
	left, right := 0, 0
	for pos := range order {
		if !fit[pos] {
			continue
		}
		if pos < 4 {
			left++
		} else {
			right++
		}
	}
	switch count {
	case 8:
		if left+right == count {
			return []int{0, 1, 2, 3, 4, 5, 6, 7}
		}
		return nil
	case 1, 2, 4:
		if left >= count || right >= count {
			for slots := count; slots <= 4; slots++ {
				num := slots
				if count%2 == 1 {
					num = oddOrder[slots-1]
				}
				if left == num {
					return devicePick(order, fit, 0, count)
				}
				if right == num {
					return devicePick(order, fit, 4, count)
				}
			}
		}
		return interconnect(order, fit, count)
	}
	return nil
}

// devicePick is devicepick: the indices of the first count fitting XPUs at positions start to 7. (HAMi
// indexes past a list shorter than 8 only when too few fit there, which the wing counts rule out.)
func devicePick(order []int, fit []bool, start, count int) []int {
	var out []int
	for pos := start; pos < 8 && pos < len(order); pos++ {
		if fit[pos] {
			out = append(out, order[pos])
			if len(out) == count {
				return out
			}
		}
	}
	return out
}

// interconnect is HAMi's interconnect: 2 XPUs, the first cross pair met walking the list twice; 4 XPUs, the
// first group of quads among the fitting indices (4 or 5 fitting), or with 6 fitting the first whose two
// others are linked, else the last that fits.
func interconnect(order []int, fit []bool, count int) []int {
	var unused []int
	for pos, i := range order {
		if fit[pos] {
			unused = append(unused, i)
		}
	}
	switch count {
	case 2:
		for _, a := range unused {
			for _, b := range unused {
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
		has := func(i int) bool { return slices.Contains(unused, i) }
		var ret []int
		for _, q := range quads {
			if !has(q[0]) || !has(q[1]) || !has(q[2]) || !has(q[3]) {
				continue
			}
			switch len(unused) {
			case 4, 5:
				return q[:]
			case 6:
				ret = append(ret[:0], q[:]...)
				var rest []int
				for _, i := range unused {
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

// linked reports whether two XPUs are joined: a cross link (i, i+4) or the same wing (GroupConnection).
func linked(two []int) bool {
	if len(two) != 2 {
		return false
	}
	a, b := min(two[0], two[1]), max(two[0], two[1])
	return b-a == 4 && a < 4 || a/4 == b/4 && b < 8
}
