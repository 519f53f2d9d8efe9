package engine

import "math"

// sortByKeys is sortGPUs' insertion sort for the rules whose Less compares a score and a NUMA node (a single
// binpack or spread, with or without NUMA groups): each GPU's two comparisons folded into one integer key, so
// that the sort compares integers instead of calling Less. Key order is Less's order and the insertion sort is
// the same, so the order is the same (TestSortByKeysIsLess). It reports false, leaving f.order alone, for the
// other rules, a NUMA node outside int32 and a NaN score (Less finds no order between a NaN and anything; a key
// would).
func (f *fitter) sortByKeys(n *Node) bool { return sortByKeys(n, f.order, f.scores, &f.rule) }

// sortByKeys sorts o (positions in n.GPUs) by scores under rule r, as fitter.sortByKeys.
func sortByKeys(n *Node, o []int, scores []float32, r *sortRule) bool {
	if r.chain != nil || r.mutex || len(o) > sortInsertionMax {
		return false
	}
	var keys [sortInsertionMax]uint64
	for p, gi := range o {
		numa := n.GPUs[gi].Numa
		if numa < math.MinInt32 || numa > math.MaxInt32 || scores[gi] != scores[gi] {
			return false // a NaN score (weights from the pod's annotation: NaN, or Inf times 0) orders as Less does
		}
		score := orderedBits(scores[gi])    // ascending: binpack's scores
		node := uint32(int32(numa)) ^ 1<<31 // ascending
		if !r.binpack {
			score = ^score // spread: the highest score first
		}
		if r.numaGroups {
			if r.binpack {
				node = ^node // binpack over NUMA groups: the highest NUMA node first
			}
			keys[p] = uint64(node)<<32 | uint64(score)
		} else {
			keys[p] = uint64(score)<<32 | uint64(node)
		}
	}
	for i := 1; i < len(o); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
			o[j], o[j-1] = o[j-1], o[j]
		}
	}
	return true
}

// orderedBits maps a float32 other than NaN to a uint32 in the same order (infinities included); -0 and +0,
// equal as floats, map to one value.
func orderedBits(v float32) uint32 {
	if v == 0 {
		return 1 << 31
	}
	b := math.Float32bits(v)
	if b&(1<<31) != 0 {
		return ^b
	}
	return b | 1<<31
}
