package engine

import (
	"slices"
	"sync/atomic"
)

// A node's facts are what its devices say before any pod is looked at: its score, how many devices are
// unhealthy, how many have no free slot, the free memory of the rest, and HAMi's device order under the plain
// spread and binpack rules. They change only when the node's usage or registration does, so they are computed
// once per change (lazily, by the first evaluation that asks) instead of once per evaluation. evalRange uses them
// three ways (docs/engine.md, "A node's facts"): a container asking for more memory than any open device has
// free is judged from the groups without the walk (quickShort); a fitting node whose container no later walk
// reads is judged by counting the devices that pass (quickFits); a node's first sort reads the cached order
// (orderFromFacts).

// judgeByFacts switches quickShort, quickFits, orderFromFacts and the cached score; tests turn it off to compare
// the answers with the walk's and the sort's.
var judgeByFacts = true

// nodeFacts is a node's devices summed up. Every node has its score; only a node of one device type with
// neither MIG nor cordoned devices gets the rest (ok); any other node is walked.
type nodeFacts struct {
	// score is the node's score (nodeScore) with no pod left out; every node has it.
	score float64
	ok    bool
	kind  int
	// unhealthy and noSlots count the devices that fail the health gate and, healthy, the slots gate (for a
	// type whose Fit checks slots); firstUnhealthy and firstNoSlot are the first of each (-1 for none), the
	// device each group offers as its example (every one shows the same headroom: none).
	unhealthy, noSlots          int
	firstUnhealthy, firstNoSlot int
	// open are the other devices' positions; free their free memory (total - used, as the memory gate reads
	// it), largest first, and bestOpen the first open device with the largest; total is their common total
	// memory, or -1 when they differ (a request in percent then needs the walk).
	open     int
	free     []int64
	bestOpen int
	total    int64
	// cores is the open devices' common total cores, or -1 when they differ (a quota on the way then sums
	// different shares depending on which devices the walk takes).
	cores int64
	// spread and binpack are HAMi's device order for a container of the node's type under the single spread
	// and binpack rules with the default weights, from the registration order and the node's own usage: what
	// fitContainer's first sort on the node gives when nothing of the pod is overlaid (ordered). nil when the
	// insertion sort does not apply (more than sortInsertionMax devices) or the type's score adds the request
	// (a type registering its CommonWord as the device type).
	spread, binpack []int
}

// defaultWeights are the device scoring weights of a pod without hami.io/device-scoring-weights.
var defaultWeights = Weights{Slot: 1, Core: 1, Memory: 1}

// factsCache holds a node's facts between changes. Evaluations may run at once on one cluster (and Capacity
// copies nodes meanwhile), so the facts are read and written atomically, behind a pointer the node keeps for
// its life: copying the node reads only that pointer. Two evaluations computing at once store equal facts.
type factsCache struct{ p atomic.Pointer[nodeFacts] }

// forget drops the facts after a change of the node's usage.
func (fc *factsCache) forget() {
	if fc != nil {
		fc.p.Store(nil)
	}
}

// factsOf returns n's facts, computing them on first use after a change (every time for a node built without
// a cache, as some tests build them).
func (c *Cluster) factsOf(n *Node) *nodeFacts {
	if n.facts == nil {
		return c.computeFacts(n)
	}
	if f := n.facts.p.Load(); f != nil {
		return f
	}
	f := c.computeFacts(n)
	n.facts.p.Store(f)
	return f
}

// computeFacts sums up n's devices (see nodeFacts).
func (c *Cluster) computeFacts(n *Node) *nodeFacts {
	score := nodeScore(n, nil)
	f := &nodeFacts{score: score, firstUnhealthy: -1, firstNoSlot: -1, bestOpen: -1, total: -1, cores: -1}
	if len(n.GPUs) == 0 {
		return f
	}
	f.kind = int(n.GPUs[0].Kind)
	f.free = make([]int64, 0, len(n.GPUs))
	unslotted := c.rows[f.kind].unslotted
	var best int64
	for i := range n.GPUs {
		g := &n.GPUs[i]
		if int(g.Kind) != f.kind || g.Mode == ModeMIG || g.Cordoned {
			return &nodeFacts{score: score}
		}
		switch {
		case !g.Healthy:
			if f.unhealthy++; f.firstUnhealthy < 0 {
				f.firstUnhealthy = i
			}
		case g.Slots <= g.UsedSlots && !unslotted:
			if f.noSlots++; f.firstNoSlot < 0 {
				f.firstNoSlot = i
			}
		default:
			free := g.TotalMem - g.UsedMem
			if f.open == 0 {
				f.total, f.cores = g.TotalMem, g.TotalCores
			} else {
				if f.total != g.TotalMem {
					f.total = -1
				}
				if f.cores != g.TotalCores {
					f.cores = -1
				}
			}
			if f.open == 0 || free > best {
				best, f.bestOpen = free, i
			}
			f.open++
			f.free = append(f.free, free)
		}
	}
	slices.Sort(f.free)
	slices.Reverse(f.free)
	f.ok = true
	c.orderFacts(n, f)
	return f
}

// orderFacts fills f.spread and f.binpack (see nodeFacts).
func (c *Cluster) orderFacts(n *Node, f *nodeFacts) {
	if len(n.GPUs) > sortInsertionMax {
		return
	}
	var scores [sortInsertionMax]float32
	for i := range n.GPUs {
		g := &n.GPUs[i]
		if c.kinds[f.kind].Name == g.Type {
			return
		}
		if g.Slots != 0 && g.TotalCores != 0 && g.TotalMem != 0 {
			scores[i] = usageScore(g, g.UsedSlots, g.UsedMem, g.UsedCores, defaultWeights)
		}
	}
	orders := make([]int, 2*len(n.GPUs)) // one allocation for both
	for k, r := range [2]sortRule{{}, {binpack: true}} {
		o := orders[k*len(n.GPUs) : (k+1)*len(n.GPUs)]
		copy(o, n.regOrder)
		if len(n.regOrder) != len(n.GPUs) {
			copy(o, registrationOrder(n.GPUs))
		}
		if !sortByKeys(n, o, scores[:len(n.GPUs)], &r) {
			return
		}
	}
	f.spread, f.binpack = orders[:len(n.GPUs)], orders[len(n.GPUs):]
}

// orderFromFacts sets f.order to the node's cached order when it is the one sortGPUs would give: the first
// sort on the node (from the registration order), nothing of the pod overlaid, the default weights and a single
// spread or binpack rule without NUMA groups.
func (f *fitter) orderFromFacts(n *Node, r *ContainerRequest) bool {
	rule := &f.rule
	if !judgeByFacts || f.extraUsed || rule.chain != nil || rule.mutex || rule.numaGroups || f.req.Weights != defaultWeights {
		return false
	}
	facts := f.c.factsOf(n)
	if !facts.ok || facts.kind != r.Kind || facts.spread == nil {
		return false
	}
	if rule.binpack {
		f.order = append(f.order[:0], facts.binpack...)
	} else {
		f.order = append(f.order[:0], facts.spread...)
	}
	return true
}

// quickShort reports whether container r certainly fails on n with every device's first failing gate given by
// its group in n's facts: the walk then need not run (evalRange builds the node's answer from the facts). It
// holds when nothing but health, slots and memory can decide a device: no selector, family row, mutex, NUMA
// binding or per-device detail is in play, no usage of the pod's own is overlaid, no open device has the memory
// asked for, and a namespace quota on the way, if any, holds the container's first device (the walk takes none,
// so every open device meets the quota with the same sum: podMem and podCores, the pod's earlier containers,
// plus one device's share, which must be the same on each).
func (f *fitter) quickShort(n *Node, r *ContainerRequest, numaBind bool, podMem, podCores int64) (*nodeFacts, bool) {
	if !f.quick || f.extraUsed || f.req.Mutex || f.ignoreFilters || !f.orderFree(numaBind) {
		return nil, false
	}
	kr := &f.c.rows[r.Kind]
	if len(kr.early) > 0 || !f.sels[r.Kind].none() {
		return nil, false
	}
	if k := &f.c.kinds[r.Kind]; k.Pair > 1 && r.Count > 1 || k.FitFailure != nil {
		return nil, false
	}
	facts := f.c.factsOf(n)
	if !facts.ok || facts.kind != r.Kind {
		return nil, false
	}
	if facts.open > 0 {
		if r.MemoryMiB <= 0 && facts.total < 0 {
			return nil, false
		}
		if r.MemoryOn(facts.total) <= facts.free[0] {
			return nil, false
		}
		if !f.quotaHoldsEach(r, facts, podMem, podCores, 1) {
			return nil, false
		}
	}
	return facts, true
}

// orderFree reports whether no gate of a device depends on the devices the walk looked at before it, but for
// a quota on the way (quotaHoldsEach): no NUMA binding, no per-device detail.
func (f *fitter) orderFree(numaBind bool) bool { return !numaBind && !f.detail && unsortedFail }

// quotaHoldsEach reports whether a namespace quota on r's way, if any, lets the walk take k of n's open devices
// one after another: each adds the same share (sameShare), so the k-th meets the quota with podMem and podCores
// plus k shares whichever devices they are.
func (f *fitter) quotaHoldsEach(r *ContainerRequest, facts *nodeFacts, podMem, podCores int64, k int) bool {
	if !f.quotaOnWay(r) {
		return true
	}
	if !sameShare(r, facts) {
		return false
	}
	_, ok := f.quotaCheck(r.Kind, podMem+int64(k)*r.MemoryOn(facts.total), podCores+int64(k)*r.CoresOn(facts.cores))
	return ok
}

// quotaOnWay reports whether the walk checks a namespace quota for r's devices.
func (f *fitter) quotaOnWay(r *ContainerRequest) bool {
	return f.c.rows[r.Kind].quota && f.limitedByQuota(r.Kind)
}

// sameShare reports whether r takes the same memory and cores from every open device of the facts' node: a
// request in MiB or on a common total, cores as asked or on a common total.
func sameShare(r *ContainerRequest, facts *nodeFacts) bool {
	return (r.MemoryMiB > 0 || facts.total >= 0) && (!r.CoresOfDevice || r.Cores <= 0 || facts.cores >= 0)
}

// none reports whether the selectors pass every device (no mode, type or UUID filter).
func (s *selectors) none() bool {
	return s == nil || s.mode == "" && len(s.useTypes) == 0 && len(s.noUseTypes) == 0 && len(s.useUUIDs) == 0 && len(s.noUseUUIDs) == 0
}

// quickReasons is gpuReasons for a node quickShort judged: the health, slots and memory codes by group.
func (f *fitter) quickReasons(n *Node, facts *nodeFacts, r *ContainerRequest) (Code, string) {
	var key reasonKey
	key.gpus = len(n.GPUs)
	if facts.unhealthy > 0 {
		key.add(f.c.rows[r.Kind].unhealthy, facts.unhealthy)
	}
	if facts.noSlots > 0 {
		key.add(CardTimeSlicingExhausted, facts.noSlots)
	}
	if facts.open > 0 {
		key.add(CardInsufficientMemory, facts.open)
	}
	return f.reasonsFor(key)
}

// quickCheck is the check of device gi of a node quickShort judged, in group (0 unhealthy, 1 out of slots, 2
// open, short of memory): checkInto's failing check for it, without the gates before.
func (f *fitter) quickCheck(n *Node, gi int, r *ContainerRequest, group int) Check {
	need, have, total := quickNumbers(&n.GPUs[gi], r, group)
	return quickResult(group, f.c.rows[r.Kind].unhealthy, need, have, total)
}

// quickNumbers are the numbers of quickCheck's gate for device g of group: slotsCheck's or memoryCheck's.
func quickNumbers(g *GPU, r *ContainerRequest, group int) (need, have, total int64) {
	switch group {
	case 0:
		return 0, 0, 0
	case 1:
		c := slotsCheck(g, g.UsedSlots)
		return c.Need, c.Have, c.Total
	}
	c := memoryCheck(g, g.UsedMem, r.MemoryOn(g.TotalMem))
	return c.Need, c.Have, c.Total
}

// quickResult is the result of a device of group (0 unhealthy, 1 out of slots, 2 open) with the gate's numbers:
// quickCheck's, and a lazily built verdict's example (lazystatus.go) from the numbers it kept.
func quickResult(group int, unhealthy Code, need, have, total int64) Check {
	switch group {
	case 0: // the unhealthy code is the device kind's
		return Check{Gate: "health", Code: unhealthy, Detail: healthDetail}
	case 1:
		return Check{Gate: "slots", Code: CardTimeSlicingExhausted, Need: need, Have: have, Total: total, Unit: "slots"}
	}
	return Check{Gate: "memory", Code: CardInsufficientMemory, Need: need, Have: have, Total: total, Unit: "MiB"}
}

// quickExample is the device exampleGPU would pick for code among a quickShort node's statuses: the first of
// its group with the most headroom.
func quickExample(facts *nodeFacts, code Code, unhealthy Code) (gi, group int) {
	switch {
	case sameCode(code, CardInsufficientMemory):
		return facts.bestOpen, 2
	case sameCode(code, CardTimeSlicingExhausted):
		return facts.firstNoSlot, 1
	case sameCode(code, unhealthy):
		return facts.firstUnhealthy, 0
	}
	return -1, -1
}

// addQuick is aggregate.add for a node quickShort judged, from its facts: each group's count and example, and
// the open devices' free memory.
func (a *aggregate) addQuick(f *fitter, n *Node, ns *NodeStatus, facts *nodeFacts, r *ContainerRequest) {
	a.countNode(ns.Code)
	idx := &f.c.rows[r.Kind].groupCode
	if facts.unhealthy > 0 {
		a.offerQuick(f, n, facts.firstUnhealthy, r, 0, idx[0], facts.unhealthy, 0)
	}
	if facts.noSlots > 0 {
		a.offerQuick(f, n, facts.firstNoSlot, r, 1, idx[1], facts.noSlots, 0)
	}
	if facts.open > 0 {
		g := &n.GPUs[facts.bestOpen]
		a.offerQuick(f, n, facts.bestOpen, r, 2, idx[2], facts.open, g.TotalMem-g.UsedMem)
		// The free list add builds holds these values (memory failures); its k-th largest is free[k-1].
		if facts.open >= r.Count {
			if m := max(facts.free[r.Count-1], 0); m > a.memFit {
				a.memFit, a.memFitNode, a.memFitCount = m, n.Name, r.Count
			}
		}
	}
}

// offerQuick counts a group's devices in slot k and offers its example device gi, whose check shows the
// headroom have; the check is made only when it would become the example (add offers every device; the first
// with the most headroom stays).
func (a *aggregate) offerQuick(f *fitter, n *Node, gi int, r *ContainerRequest, group, k, count int, have int64) {
	a.gpus[k] += count
	e := &a.best[k]
	if e.set && have <= e.have {
		return
	}
	c := f.quickCheck(n, gi, r, group)
	e.offer(n.Name, n.GPUs[gi].Index, &c)
}

// quickFits reports whether container ci certainly fits on n, for a caller that needs only the yes (evalRange's
// fitting nodes: the chosen node is fitted again to build its placement). HAMi's walk takes each device that
// passes every gate until it holds r.Count; when no gate depends on what the walk took before (no NUMA binding
// or topology, no family rows or choices, no MIG device taken twice; a quota on the way only through the count
// taken, quotaHoldsEach) and nothing after this
// container reads what it took (the last app container, or an init container, which leaves nothing behind), the
// container fits exactly when r.Count devices pass, in whatever order they are looked at, and no sort is needed.
// The statuses are not written; false says nothing (the walk decides).
func (f *fitter) quickFits(n *Node, ci int, r *ContainerRequest, numaBind, topology bool, podMem, podCores int64) bool {
	if !f.quick || f.build || topology || !f.orderFree(numaBind) || !f.lastLook(ci) {
		return false
	}
	kr, kind := &f.c.rows[r.Kind], &f.c.kinds[r.Kind]
	if len(kr.early) > 0 || len(kr.late) > 0 || kind.Pair > 1 && r.Count > 1 || kind.Select != nil || kind.SelectInOrder != nil ||
		kind.Prioritize != nil || kind.Topology != nil || kind.ScoreNode != nil || kind.CoresMask {
		return false
	}
	facts := f.c.factsOf(n)
	if !facts.ok || facts.kind != r.Kind || facts.open < r.Count || r.MemoryMiB <= 0 && facts.total < 0 ||
		facts.free[r.Count-1] < r.MemoryOn(facts.total) {
		return false // (the facts' open devices with the memory: fewer than asked for means the walk must say why)
	}
	if f.quotaOnWay(r) && (!sameShare(r, facts) || f.extraUsed) {
		// (with the pod's own or earlier containers' usage overlaid, devices outside the open group may pass,
		// each with its own share)
		return false
	}
	// With a quota on the way each device is checked with the shares taken before it, as in the walk: the
	// quota refuses the k-th device whichever it is, and every one after it.
	pass := 0
	var c Check
	mem, cores := r.MemoryOn(facts.total), r.CoresOn(facts.cores)
	for gi := range n.GPUs {
		if f.checkInto(n, gi, r, podMem+int64(pass)*mem, podCores+int64(pass)*cores, nil, &c); !c.Failed() {
			if pass++; pass == r.Count {
				return true
			}
		}
	}
	return false
}

// lastLook reports whether nothing after container ci reads what its walk takes: an init container (tried
// against the node alone) or the last app container.
func (f *fitter) lastLook(ci int) bool {
	cs := f.req.Containers
	if cs[ci].Init {
		return true
	}
	for j := ci + 1; j < len(cs); j++ {
		if !cs[j].Init {
			return false
		}
	}
	return true
}
