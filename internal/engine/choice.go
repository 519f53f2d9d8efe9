package engine

// Device selection beyond the walk's first fit: the Kind's module pairs (Ascend 910C), its Select rule
// (Kunlun's interconnect, AWS Neuron's runs) and its topology (Ascend's NetworkID groups).

import (
	"slices"
	"sort"
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// pairChoice is HAMi's 910C module rule (computeBestCombination910C, pkg/device/ascend/device.go): of the
// devices that passed every gate, only modules (index / pair) whose every device passed are taken, whole,
// until count devices are chosen. HAMi orders equally full modules by map iteration; kubectl-hami takes
// them in the order the walk found them, so the answer is deterministic.
func pairChoice(n *Node, sel []int, count, pair int) []int {
	byModule := map[int][]int{}
	var order []int
	for _, gi := range sel {
		m := n.GPUs[gi].Index / pair
		if _, ok := byModule[m]; !ok {
			order = append(order, m)
		}
		byModule[m] = append(byModule[m], gi)
	}
	var out []int
	for _, m := range order {
		if len(out) >= count {
			break
		}
		if devs := byModule[m]; len(devs) == pair {
			out = append(out, devs...)
		}
	}
	return out
}

// selectChoice applies a type's Select rule (Kunlun's interconnect) to the devices that passed every gate:
// it hands Select their Indexes in ascending order and maps its answer back to the node's devices. Devices
// Select names that did not pass are ignored, so a bad rule cannot place on a failing device.
func selectChoice(n *Node, sel []int, count int, choose func([]int, int, string) []int) []int {
	byIndex := make(map[int]int, len(sel))
	idx := make([]int, 0, len(sel))
	for _, gi := range sel {
		i := n.GPUs[gi].Index
		if _, dup := byIndex[i]; !dup {
			byIndex[i] = gi
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	var out []int
	model := ""
	if len(sel) > 0 {
		model = n.GPUs[sel[0]].Type
	}
	for _, i := range choose(idx, count, model) {
		if gi, ok := byIndex[i]; ok && len(out) < count {
			out = append(out, gi)
			delete(byIndex, i)
		}
	}
	return out
}

// selectInOrderChoice applies a type's SelectInOrder rule (Kunlun's graghSelect): it hands the rule the
// type's devices in HAMi's sorted order (f.order, which the walk reads from its end) with whether each passed
// every gate, and maps the Indexes it names back to devices that passed.
func (f *fitter) selectInOrderChoice(n *Node, sel []int, r *ContainerRequest, choose func([]int, []bool, int, string) []int) []int {
	passed := make(map[int]bool, len(sel))
	for _, gi := range sel {
		passed[gi] = true
	}
	var order []int
	var fit []bool
	byIndex := make(map[int]int, len(sel))
	for _, gi := range f.order {
		g := &n.GPUs[gi]
		if !n.judges(r.Kind, gi) {
			continue
		}
		order = append(order, g.Index)
		fit = append(fit, passed[gi])
		if _, dup := byIndex[g.Index]; passed[gi] && !dup {
			byIndex[g.Index] = gi
		}
	}
	model := ""
	if len(sel) > 0 {
		model = n.GPUs[sel[0]].Type
	}
	var out []int
	for _, i := range choose(order, fit, r.Count, model) {
		if gi, ok := byIndex[i]; ok && len(out) < r.Count {
			out = append(out, gi)
			delete(byIndex, i)
		}
	}
	return out
}

// pairFailure is HAMi's reason for a module request that placed nothing (Ascend 910C,
// pkg/device/ascend/device.go:582-589 at v2.10.0): the walk never stops early, every device that passed is a
// candidate, and computeBestCombination910C takes whole modules of them; when they are too few, the reason
// map holds each failing device's code and AllocatedCardsInsufficientRequest counts the devices of the whole
// modules found (0 included), all over the request, not the node's devices: "0/2
// AllocatedCardsInsufficientRequest, 4/2 CardUuidMismatch". It returns the node's most counted code (ties:
// the earlier gate) and the text.
func pairFailure(n *Node, r *ContainerRequest, pair int, statuses []GPUStatus) (Code, string) {
	var codes []Code
	counts := map[Code]int{}
	passed := map[int]int{} // devices that passed every gate, by module
	for gi := range n.GPUs {
		if !n.judges(r.Kind, gi) {
			continue
		}
		res := statuses[gi].Result
		if !res.Failed() || res.Gate == "set" {
			passed[n.GPUs[gi].Index/pair]++
			continue
		}
		if counts[res.Code] == 0 {
			codes = append(codes, res.Code)
		}
		counts[res.Code]++
	}
	whole := 0
	for _, c := range passed {
		if c == pair && whole < r.Count {
			whole += pair
		}
	}
	codes = append(codes, AllocatedCardsInsufficientRequest)
	counts[AllocatedCardsInsufficientRequest] = whole
	parts := make([]string, 0, len(codes))
	dom := codes[0]
	for _, c := range codes {
		parts = append(parts, itoa(counts[c])+"/"+itoa(r.Count)+" "+string(c))
		if counts[c] > counts[dom] || counts[c] == counts[dom] && GateRank(c) < GateRank(dom) {
			dom = c
		}
	}
	sort.Strings(parts)
	return dom, strings.Join(parts, ", ")
}

// prioritizeChoice is a Kind's Prioritize over the devices that passed, sel, in the walk's order: count of them,
// the first count of the walk when the family chooses none (or too few, or a device not in sel).
func (f *fitter) prioritizeChoice(n *Node, sel []int, r *ContainerRequest, prioritize func([]device.Candidate, int, int64, map[string]string) []int) []int {
	if len(sel) <= r.Count {
		return sel
	}
	walk := make([]device.Candidate, len(sel))
	for i, gi := range sel {
		walk[i] = device.Candidate{Index: n.GPUs[gi].Index, Group: n.GPUs[gi].networkID()}
	}
	picked := prioritize(walk, r.Count, r.Cores, f.req.annos)
	out := make([]int, 0, r.Count)
	for _, idx := range picked {
		for _, gi := range sel {
			if n.GPUs[gi].Index == idx && !slices.Contains(out, gi) {
				out = append(out, gi)
				break
			}
		}
	}
	if len(out) != r.Count {
		return sel[:r.Count]
	}
	return out
}

// familyTopology is the Kind's device topology on node n for request r (device.Kind.Topology: Ascend's
// NetworkID groups), given the devices the request sees in HAMi's sorted order; nil when the Kind has none or
// the node's devices do not make one.
func (f *fitter) familyTopology(n *Node, r *ContainerRequest, kind *device.Kind) func([]device.ScoredDevice, int) []int {
	if kind.Topology == nil {
		return nil
	}
	devs := make([]device.ScoredDevice, 0, n.devicesFor(r.Kind))
	for _, gi := range f.order {
		if n.judges(r.Kind, gi) {
			devs = append(devs, f.scoredDevice(&n.GPUs[gi]))
		}
	}
	return kind.Topology(devs)
}

// familyChoice maps a Kind's topology choice over the devices that passed every gate, in the order the walk
// found them, back to the node's devices; positions it names twice or outside sel are dropped. The walk has
// found at least count.
func (f *fitter) familyChoice(n *Node, sel []int, count int, choose func([]device.ScoredDevice, int) []int) []int {
	cands := make([]device.ScoredDevice, len(sel))
	for i, gi := range sel {
		cands[i] = f.scoredDevice(&n.GPUs[gi])
	}
	taken := make([]bool, len(sel))
	var out []int
	for _, pos := range choose(cands, count) {
		if pos >= 0 && pos < len(sel) && !taken[pos] && len(out) < count {
			taken[pos] = true
			out = append(out, sel[pos])
		}
	}
	return out
}

// scoredDevice is a device as the families' topology hooks see it.
func (f *fitter) scoredDevice(g *GPU) device.ScoredDevice {
	return device.ScoredDevice{Type: g.Type, Index: g.Index, Used: g.UsedSlots > 0, Vendor: f.c.kinds[g.Kind].Name, NetworkID: g.networkID()}
}
