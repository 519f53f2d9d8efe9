package engine

import (
	"slices"
	"sort"
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// gpuScore is HAMi's device score from the GPU's current usage (DeviceListsScore.ComputeScore,
// pkg/scheduler/policy/gpu_policy.go): 10 x weighted sum of the slot, core and memory fill ratios, in float32
// as HAMi computes it, so that ties and near-ties compare exactly as they do there. HAMi adds the request only
// when request and device types are equal, which never happens on real nodes, so the score reflects existing
// usage only; kubectl-hami keeps that behaviour. A GPU registering 0 slots, cores or memory scores 0.
func (f *fitter) gpuScore(g *GPU, gi int, r *ContainerRequest) float32 {
	if g.Slots == 0 || g.TotalCores == 0 || g.TotalMem == 0 {
		return 0
	}
	slots, mem, cores := f.used(g, gi)
	// HAMi adds the container's own request where the request's type (its Kind's CommonWord) equals the device's
	// registered type (ComputeScore, pkg/scheduler/policy/gpu_policy.go:199-214 at v2.10.0): never for NVIDIA
	// ("NVIDIA" against "NVIDIA-A100"), but for Kunlun vXPU ("XPU"), Ascend and others whose plugin registers the
	// CommonWord as the type. One slot whatever the count, the cores as asked, the memory on this device.
	if r != nil && f.c.kinds[r.Kind].Name == g.Type {
		slots++
		cores += r.Cores
		mem += r.MemoryOn(g.TotalMem)
	}
	return usageScore(g, slots, mem, cores, f.req.Weights)
}

// usageScore is gpuScore's arithmetic for the usage given (a GPU registering no slots, cores or memory aside).
func usageScore(g *GPU, slots int32, mem, cores int64, w Weights) float32 {
	u := float32(slots) / float32(g.Slots)
	c := float32(cores) / float32(g.TotalCores)
	m := float32(mem) / float32(g.TotalMem)
	// Each product is rounded on its own (explicit conversions forbid fused multiply-add), as HAMi's amd64
	// build computes it.
	sum := float32(float32(w.Slot)*u) + float32(float32(w.Core)*c)
	sum = float32(sum) + float32(float32(w.Memory)*m)
	return float32(10 * sum)
}

// sortRule is how HAMi's DeviceUsageList.Less orders a pod's GPUs (gpu_policy.go, v2.10.0).
type sortRule struct {
	chain      []string // set for a comma chain or bare "numa": binpack, spread and numa keys in the order written
	mutex      bool     // single "mutex": busiest first
	binpack    bool     // single "binpack"; otherwise spread
	numaGroups bool     // nvidia.com/numa-bind: NUMA groups kept together
}

func newSortRule(req *PodRequest) sortRule {
	p := strings.TrimSpace(req.sortPolicy)
	if p == "" {
		p = PolicySpread
	}
	if strings.Contains(p, ",") || p == PolicyNuma {
		var chain []string
		for _, k := range strings.Split(p, ",") {
			k = strings.TrimSpace(k)
			if (k == PolicyBinpack || k == PolicySpread || k == PolicyNuma) && !slices.Contains(chain, k) {
				chain = append(chain, k)
			}
		}
		if len(chain) == 0 {
			chain = []string{PolicySpread}
		}
		if req.numaBindAnno && chain[0] != PolicyNuma {
			withNuma := []string{PolicyNuma}
			for _, k := range chain {
				if k != PolicyNuma {
					withNuma = append(withNuma, k)
				}
			}
			chain = withNuma
		}
		return sortRule{chain: chain}
	}
	return sortRule{mutex: p == PolicyMutex, binpack: p == PolicyBinpack, numaGroups: req.numaBindAnno}
}

// gpuSorter sorts fitter.order with HAMi's Less; sort.Sort on it is the very sort HAMi runs.
type gpuSorter struct {
	f  *fitter
	n  *Node
	sc []float32 // by GPU index in n.GPUs
}

func (s *gpuSorter) Len() int      { return len(s.f.order) }
func (s *gpuSorter) Swap(i, j int) { s.f.order[i], s.f.order[j] = s.f.order[j], s.f.order[i] }
func (s *gpuSorter) Less(i, j int) bool {
	a, b := s.f.order[i], s.f.order[j]
	ga, gb := &s.n.GPUs[a], &s.n.GPUs[b]
	si, sj, ni, nj := s.sc[a], s.sc[b], ga.Numa, gb.Numa
	r := &s.f.rule
	if r.chain != nil {
		for _, k := range r.chain {
			switch {
			case k == PolicyBinpack && si != sj:
				return si < sj
			case k == PolicySpread && si != sj:
				return si > sj
			case k == PolicyNuma && ni != nj:
				return ni < nj
			}
		}
		return ga.Index < gb.Index
	}
	if r.mutex {
		ui, _, _ := s.f.used(ga, a)
		uj, _, _ := s.f.used(gb, b)
		if ui != uj {
			return ui > uj
		}
		return ni < nj
	}
	if r.numaGroups {
		if ni == nj {
			if r.binpack {
				return si < sj
			}
			return si > sj
		}
		if r.binpack {
			return ni > nj
		}
		return ni < nj
	}
	if si != sj {
		if r.binpack {
			return si < sj
		}
		return si > sj
	}
	return ni < nj
}

// resetOrder puts f.order back to the node's registration order: HAMi starts every init container and the
// first app container from a fresh copy of the node's device list, which is in that order.
// The order is the node's own, computed once when the node is read (Node.regOrder).
func (f *fitter) resetOrder(n *Node) {
	if len(n.regOrder) == len(n.GPUs) {
		f.order = append(f.order[:0], n.regOrder...)
		return
	}
	f.order = append(f.order[:0], registrationOrder(n.GPUs)...)
}

// registrationOrder is the positions of gpus sorted by registration position (GPU.reg).
func registrationOrder(gpus []GPU) []int {
	o := make([]int, len(gpus))
	for i := range o {
		o[i] = i
	}
	for i := 1; i < len(o); i++ { // stable insertion by registration position; nodes hold a handful of GPUs
		for j := i; j > 0 && gpus[o[j]].reg < gpus[o[j-1]].reg; j-- {
			o[j], o[j-1] = o[j-1], o[j]
		}
	}
	return o
}

// sortGPUs sorts f.order in place the way HAMi sorts a node's devices before each container
// (sort.Sort(node.Devices), pkg/scheduler/score.go), scoring each GPU by its usage including the pod's earlier
// containers. The list is not re-made between app containers, so a container's ties keep the order the
// previous container's sort left. Fit then walks the list from its end (fitContainer).
//
// For up to 12 GPUs sort.Sort is an insertion sort, so it is stable: equal GPUs keep their order and the walk
// from the end takes the last-registered first. Above 12 it is pdqsort, which is not stable; kubectl-hami runs
// the same sort.Sort on the same sequence, which gives HAMi's order as long as both are built with the same Go
// sort (Go 1.19 on); Go does not promise that, so the order above 12 GPUs is documented as not guaranteed.
func (f *fitter) sortGPUs(n *Node, r *ContainerRequest) {
	if cap(f.scores) < len(n.GPUs) {
		f.scores = make([]float32, len(n.GPUs))
	}
	f.scores = f.scores[:len(n.GPUs)]
	for i := range n.GPUs {
		f.scores[i] = f.gpuScore(&n.GPUs[i], i, r)
	}
	f.sorter = gpuSorter{f: f, n: n, sc: f.scores}
	if len(f.order) > sortInsertionMax {
		sort.Sort(&f.sorter)
		return
	}
	// Up to 12 elements sort.Sort is exactly this insertion sort (pdqsort's maxInsertion, sort/zsortinterface.go);
	// run here with Less called directly, not through the interface, it gives the same order at a fraction of
	// the cost. TestPropertyHAMiGPUOrder compares both with HAMi's own order.
	if f.sortByKeys(n) {
		return
	}
	s, o := &f.sorter, f.order
	for i := 1; i < len(o); i++ {
		for j := i; j > 0 && s.Less(j, j-1); j-- {
			o[j], o[j-1] = o[j-1], o[j]
		}
	}
}

// sortInsertionMax is the length up to which sort.Sort runs an insertion sort (Go's pdqsort, maxInsertion).
const sortInsertionMax = 12

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

// familyScore is what the Kinds the pod asks for add to a fitting node's score (device.Kind.ScoreNode), from
// the node's devices before the pod and the devices each of the pod's containers took (f.scored after fitNode).
func (f *fitter) familyScore(n *Node) float64 {
	if !f.familyScored {
		return 0
	}
	var total float64
	var node []device.ScoredDevice
	for _, k := range f.kindsAsked() {
		kind := &f.c.kinds[k]
		if kind.ScoreNode == nil {
			continue
		}
		if node == nil {
			node = make([]device.ScoredDevice, len(n.GPUs))
			for gi := range n.GPUs {
				g := &n.GPUs[gi]
				node[gi] = device.ScoredDevice{Type: g.Type, Index: g.Index, Used: g.UsedSlots > 0, NetworkID: g.networkID()}
			}
		}
		total += kind.ScoreNode(node, f.placedBy(k))
	}
	return total
}

// scoredDevices are the devices the pod's containers of a Kind with a node score (device.Kind.ScoreNode) took
// on the node being fitted, in the order fitNode placed them (init containers first, HAMi's order).
type scoredDevices struct {
	// runs holds, for each container, its Kind, its count, then the positions in n.GPUs it took.
	runs []int
	// placed is placedBy's scratch.
	placed [][]int
}

// noteScored records what a container of Kind k took, for the Kind's node score.
func (f *fitter) noteScored(k int, chosen []int) {
	if f.scored == nil {
		f.scored = &scoredDevices{}
	}
	f.scored.runs = append(append(f.scored.runs, k, len(chosen)), chosen...)
}

// placedBy is what each container of Kind k took on the node fitNode last fitted, positions in its GPUs, in
// fitNode's order (HAMi's: init containers first); a container that took nothing is left out, as HAMi's
// ScoreNode skips an empty entry.
func (f *fitter) placedBy(k int) [][]int {
	if f.scored == nil {
		return nil
	}
	placed, runs := f.scored.placed[:0], f.scored.runs
	for i := 0; i < len(runs); {
		kind, n := runs[i], runs[i+1]
		if kind == k && n > 0 {
			placed = append(placed, runs[i+2:i+2+n])
		}
		i += 2 + n
	}
	f.scored.placed = placed
	return placed
}

// kindsAsked lists the Kinds the pod's containers ask for, each once, in container order.
func (f *fitter) kindsAsked() []int {
	var out []int
	for i := range f.req.Containers {
		if k := f.req.Containers[i].Kind; !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
