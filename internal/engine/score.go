package engine

import "github.com/kubectl-hami/kubectl-hami/internal/engine/codec"

// gpuScore is HAMi's device score from the GPU's current usage: 10 x weighted sum of the slot, core and
// memory fill ratios. HAMi adds the request only when request and device types are equal, which never
// happens on real nodes, so the score reflects existing usage only; kubectl-hami keeps that behaviour.
func (f *fitter) gpuScore(g *GPU, gi int) float64 {
	slots, mem, cores := f.used(g, gi)
	w := f.req.Weights
	s := 0.0
	if g.Slots > 0 {
		s += w.Slot * float64(slots) / float64(g.Slots)
	}
	if g.TotalCores > 0 {
		s += w.Core * float64(cores) / float64(g.TotalCores)
	}
	if g.TotalMem > 0 {
		s += w.Memory * float64(mem) / float64(g.TotalMem)
	}
	return 10 * s
}

// sortGPUs fills f.order with the node's GPU indexes in the order they are tried. HAMi sorts and then
// walks from the end; kubectl-hami builds the walk order directly: binpack tries the fullest GPU first,
// spread the emptiest, mutex the least used; numa-bind keeps NUMA nodes together. Ties go to the lower
// NUMA node, then the lower GPU index, so the same input always gives the same GPUs.
func (f *fitter) sortGPUs(n *Node) {
	f.order = f.order[:0]
	var scores [64]float64
	sc := scores[:0]
	if len(n.GPUs) > len(scores) {
		sc = make([]float64, 0, len(n.GPUs))
	}
	for i := range n.GPUs {
		f.order = append(f.order, i)
		sc = append(sc, f.gpuScore(&n.GPUs[i], i))
	}
	less := func(a, b int) bool {
		ga, gb := &n.GPUs[a], &n.GPUs[b]
		if f.req.NumaBind && ga.Numa != gb.Numa {
			return ga.Numa < gb.Numa
		}
		if f.req.Mutex {
			sa, _, _ := f.used(ga, a)
			sb, _, _ := f.used(gb, b)
			if sa != sb {
				return sa < sb
			}
		} else if sc[a] != sc[b] {
			if f.req.GPUPolicy == PolicyBinpack {
				return sc[a] > sc[b]
			}
			return sc[a] < sc[b]
		}
		if ga.Numa != gb.Numa {
			return ga.Numa < gb.Numa
		}
		return a < b
	}
	// Insertion sort: nodes have a handful of GPUs and this allocates nothing.
	o := f.order
	for i := 1; i < len(o); i++ {
		for j := i; j > 0 && less(o[j], o[j-1]); j-- {
			o[j], o[j-1] = o[j-1], o[j]
		}
	}
}

// NodeScore is HAMi's node score before placement: 10 x (slots, cores and memory fill over the node),
// 0..30. Binpack prefers the highest, spread the lowest.
func NodeScore(n *Node) float64 { return nodeScore(n, nil) }

// nodeScore leaves out the usage of self, a pod being re-evaluated, when it is counted on this node.
func nodeScore(n *Node, self *PodAllocation) float64 {
	var slots, usedSlots int32
	var mem, usedMem, cores, usedCores int64
	for i := range n.GPUs {
		g := &n.GPUs[i]
		slots += g.Slots
		usedSlots += g.UsedSlots
		mem += g.TotalMem
		usedMem += g.UsedMem
		cores += g.TotalCores
		usedCores += g.UsedCores
	}
	if self != nil && self.Node == n.Name {
		for _, u := range self.Uses {
			if n.GPUByUUID(u.UUID) != nil {
				usedSlots -= u.Slots
				usedMem -= u.Mem
				usedCores -= u.Cores
			}
		}
	}
	s := 0.0
	if slots > 0 {
		s += float64(usedSlots) / float64(slots)
	}
	if cores > 0 {
		s += float64(usedCores) / float64(cores)
	}
	if mem > 0 {
		s += float64(usedMem) / float64(mem)
	}
	return 10 * s
}

// topologyChoice picks count GPUs among the candidates by link quality: one GPU takes the worst-connected
// candidate (keeping well-linked GPUs for multi-GPU pods), several take the best-linked combination.
func (f *fitter) topologyChoice(n *Node, cand []int, count int) []int {
	if len(cand) == count {
		return cand
	}
	pair := func(a, b int) int {
		if n.Pairs == nil {
			return 0
		}
		return n.Pairs[n.GPUs[a].UUID][n.GPUs[b].UUID]
	}
	if count == 1 {
		best, bestSum := cand[0], -1
		for _, a := range cand {
			sum := 0
			for _, b := range cand {
				if a != b {
					sum += pair(a, b)
				}
			}
			if bestSum < 0 || sum < bestSum {
				best, bestSum = a, sum
			}
		}
		f.chosen = append(f.chosen[:0], best)
		return f.chosen
	}
	if binomial(len(cand), count) > maxTopologyCombinations {
		return cand[:count] // too many to enumerate: keep policy order
	}
	idx := make([]int, count)
	for i := range idx {
		idx[i] = i
	}
	bestSum := -1
	for {
		sum := 0
		for i := 0; i < count; i++ {
			for j := i + 1; j < count; j++ {
				sum += pair(cand[idx[i]], cand[idx[j]])
			}
		}
		if sum > bestSum {
			bestSum = sum
			f.chosen = f.chosen[:0]
			for _, i := range idx {
				f.chosen = append(f.chosen, cand[i])
			}
		}
		// next combination in lexicographic order
		i := count - 1
		for i >= 0 && idx[i] == len(cand)-count+i {
			i--
		}
		if i < 0 {
			break
		}
		idx[i]++
		for j := i + 1; j < count; j++ {
			idx[j] = idx[j-1] + 1
		}
	}
	return f.chosen
}

const maxTopologyCombinations = 20000

func binomial(n, k int) int {
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
		if r > maxTopologyCombinations {
			return r
		}
	}
	return r
}

// migChoice finds the smallest MIG profile with enough memory that has a free placement on the GPU.
func (f *fitter) migChoice(g *GPU, gi int, memNeed int64) (codec.MigProfile, codec.MigPlacement, bool) {
	var best *codec.MigProfile
	var bestPl codec.MigPlacement
	for pi := range g.MigProfiles {
		p := &g.MigProfiles[pi]
		if p.MemoryMB < memNeed {
			continue
		}
		if best != nil && (p.MemoryMB > best.MemoryMB || p.MemoryMB == best.MemoryMB && p.Name >= best.Name) {
			continue
		}
		for _, pl := range p.Placements {
			if !overlaps(pl, g.MigUsed) && !overlaps(pl, f.extra[gi].mig) {
				best, bestPl = p, pl
				break
			}
		}
	}
	if best == nil {
		return codec.MigProfile{}, codec.MigPlacement{}, false
	}
	return *best, bestPl, true
}

func (f *fitter) anyProfileHolds(g *GPU, memNeed int64) bool {
	for _, p := range g.MigProfiles {
		if p.MemoryMB >= memNeed {
			return true
		}
	}
	return false
}

func overlaps(p codec.MigPlacement, used []codec.MigPlacement) bool {
	for _, u := range used {
		if p.Start < u.Start+u.Size && u.Start < p.Start+p.Size {
			return true
		}
	}
	return false
}
