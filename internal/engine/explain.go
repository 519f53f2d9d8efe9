package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// example is one GPU that shows a reason's best case, e.g. the most free memory.
type example struct {
	node       string
	gpu        int
	need, have int64
	total      int64
	set        bool
	// gate and detail are the check's own, for a code that more than one gate reports.
	gate, detail string
}

func (e *example) offer(node string, gpu int, c *Check) {
	if !e.set || c.Have > e.have {
		*e = example{node: node, gpu: gpu, need: c.Need, have: c.Have, total: c.Total, set: true, gate: c.Gate, detail: c.Detail}
	}
}

// aggregate collects, while nodes are evaluated, the numbers the explanation needs.
type aggregate struct {
	codes []ReasonCount
	gpus  [numCodes]int // GPUs per code (arrays, not maps: add runs for every GPU of every failed node)
	best  [numCodes]example
	nodes [numCodes][]string // a few node names per node-level code
	types []string
	quota *Check
	// largest per-GPU memory that would fit now, for the failing container's count
	memFit      int64
	memFitNode  string
	memFitCount int
	filtered    [numCodes][]string // GPUs that only a filter or cordon excludes
	free        []int64
	card        *CardStatus
}

// add records a failed node. st is the node's GPU results for the failing container.
func (a *aggregate) add(f *fitter, n *Node, ns *NodeStatus, st []GPUStatus, res nodeFit) {
	a.countNode(ns.Code)
	if res.fitCheck != nil {
		a.ex(ns.Code).offer(n.Name, -1, res.fitCheck)
	}
	if ns.Check != nil {
		if len(a.nodes[codeIndex(ns.Code)]) < 5 {
			a.nodes[codeIndex(ns.Code)] = append(a.nodes[codeIndex(ns.Code)], n.Name)
		}
		a.ex(ns.Code).offer(n.Name, -1, ns.Check)
		return
	}
	r := &f.req.Containers[res.container]
	a.free = a.free[:0]
	var lastCode Code
	lastK := 0
	for i := range st {
		g := &st[i]
		if g.other {
			continue
		}
		code := g.Result.Code
		switch code {
		case "", CardInsufficientMemory, AllocatedCardsInsufficientRequest, NumaNotFit:
			_, used, _ := f.used(&n.GPUs[i], i) // what this container sees: the pod's own old share released
			a.free = append(a.free, max(n.GPUs[i].TotalMem-used, 0))
		case CardCordoned, CardTypeMismatch, CardUUIDMismatch:
			a.noteFiltered(f, n, i, r, code)
		}
		if code == "" {
			continue
		}
		if !sameCode(code, lastCode) { // a node's GPUs mostly share one code: look it up once
			lastCode, lastK = code, codeIndex(code)
		}
		k := lastK
		a.gpus[k]++
		a.best[k].offer(n.Name, n.GPUs[i].Index, &g.Result) // the walk's statuses carry no identity
		switch code {
		case CardTypeMismatch:
			if t := n.GPUs[i].Type; len(a.types) < 6 && !contains(a.types, t) {
				a.types = append(a.types, t)
			}
		case ResourceQuotaNotFit:
			if a.quota == nil {
				c := g.Result
				a.quota = &c
			}
		}
	}
	// The k-th largest beats memFit only when k values do: one pass rejects most nodes without the selection.
	if len(a.free) >= r.Count && countAbove(a.free, a.memFit) >= r.Count {
		if m := kthLargest(a.free, r.Count); m > a.memFit {
			a.memFit, a.memFitNode, a.memFitCount = m, n.Name, r.Count
		}
	}
}

// countNode counts one more failed node of code.
func (a *aggregate) countNode(code Code) {
	found := false
	for i := range a.codes {
		if a.codes[i].Code == code {
			a.codes[i].Nodes++
			found = true
		}
	}
	if !found {
		a.codes = append(a.codes, ReasonCount{Code: code, Nodes: 1})
	}
}

// kthLargest is the k-th largest of vals (1 <= k <= len(vals)), reordering vals: a partial selection, as k is
// a container's device count and vals a node's devices.
func kthLargest(vals []int64, k int) int64 {
	for i := 0; i < k; i++ {
		m := i
		for j := i + 1; j < len(vals); j++ {
			if vals[j] > vals[m] {
				m = j
			}
		}
		vals[i], vals[m] = vals[m], vals[i]
	}
	return vals[k-1]
}

// countAbove is how many of vals exceed v.
func countAbove(vals []int64, v int64) int {
	n := 0
	for _, x := range vals {
		if x > v {
			n++
		}
	}
	return n
}

// noteFiltered checks whether GPU i would pass every gate if filters and cordons did not apply.
func (a *aggregate) noteFiltered(f *fitter, n *Node, i int, r *ContainerRequest, code Code) {
	f.ignoreFilters = true
	chk := f.checkGPU(n, i, r, 0, 0, nil)
	f.ignoreFilters = false
	if chk.Failed() {
		return
	}
	k := codeIndex(code)
	a.filtered[k] = append(a.filtered[k], fmt.Sprintf("%s/GPU %d", n.Name, n.GPUs[i].Index))
}

// merge adds the aggregate of the node range that follows a; every "first wins" rule keeps a's entries.
func (a *aggregate) merge(b *aggregate) {
	for _, rc := range b.codes {
		found := false
		for i := range a.codes {
			if a.codes[i].Code == rc.Code {
				a.codes[i].Nodes += rc.Nodes
				found = true
			}
		}
		if !found {
			a.codes = append(a.codes, rc)
		}
	}
	for i := range b.gpus {
		a.gpus[i] += b.gpus[i]
		if e, mine := &b.best[i], &a.best[i]; e.set && (!mine.set || e.have > mine.have) {
			*mine = *e
		}
		for _, n := range b.nodes[i] {
			if len(a.nodes[i]) < 5 {
				a.nodes[i] = append(a.nodes[i], n)
			}
		}
		a.filtered[i] = append(a.filtered[i], b.filtered[i]...)
	}
	for _, t := range b.types {
		if len(a.types) < 6 && !contains(a.types, t) {
			a.types = append(a.types, t)
		}
	}
	if a.quota == nil {
		a.quota = b.quota
	}
	if b.memFit > a.memFit {
		a.memFit, a.memFitNode, a.memFitCount = b.memFit, b.memFitNode, b.memFitCount
	}
}

func (a *aggregate) ex(c Code) *example { return &a.best[codeIndex(c)] }

// counts is the node count per deciding code, most common first.
func (a *aggregate) counts() []ReasonCount {
	out := append([]ReasonCount(nil), a.codes...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Nodes != out[j].Nodes {
			return out[i].Nodes > out[j].Nodes
		}
		return out[i].Code < out[j].Code
	})
	return out
}

// explain turns the aggregate into sentences with numbers, most common reason first.
func explain(req *PodRequest, a *aggregate, q QuotaStatus) []string {
	var out []string
	for _, r := range req.Containers {
		kind := "container"
		if r.Init {
			kind = "init container"
		}
		out = append(out, fmt.Sprintf("%s %s asks for %d GPU(s)%s, each with %s and %s", kind, r.Name, r.Count, deviceSuffix(&r), r.MemoryString(), r.CoresString()))
	}
	codes := a.counts()
	seen := map[Code]bool{}
	for _, rc := range codes {
		seen[rc.Code] = true
	}
	// GPU-level reasons that are not any node's deciding reason still deserve a line.
	var gpuOnly []Code
	for i, n := range a.gpus {
		if n > 0 && i < len(tableCodes) && !seen[tableCodes[i]] {
			gpuOnly = append(gpuOnly, tableCodes[i])
		}
	}
	sort.Slice(gpuOnly, func(i, j int) bool { return GateRank(gpuOnly[i]) < GateRank(gpuOnly[j]) })
	for _, rc := range codes {
		out = append(out, a.sentence(rc.Code, rc.Nodes, req, q))
	}
	for _, c := range gpuOnly {
		out = append(out, a.sentence(c, 0, req, q))
	}
	return out
}

func (a *aggregate) sentence(c Code, nodes int, req *PodRequest, q QuotaStatus) string {
	k := codeIndex(c)
	e := &a.best[k]
	s := saying{nodes: nodes, gpus: a.gpus[k], e: e, few: a.nodes[k], req: req, q: q}
	prefix := fmt.Sprintf("%s (%d GPU(s)): ", c, s.gpus)
	if nodes > 0 {
		prefix = fmt.Sprintf("%s (%d node(s)): ", c, nodes)
	}
	if g := GateOf(c); g != nil && g.say != nil {
		// A family row sharing the code says its own failure (Enflame's used GCU is not NVIDIA's mutex).
		if own := deferSay(a, s, g); own != "" {
			return prefix + own
		}
		return prefix + g.say(a, s)
	}
	return prefix + string(c)
}

// hints say what would make the pod fit now.
func (c *Cluster) hints(v *Verdict, a *aggregate) []string {
	var out []string
	for _, r := range v.Request.Containers {
		if r.MemoryDefaulted && r.MemoryPercent == 100 {
			out = append(out, fmt.Sprintf("container %s names no %s, so it asks for 100%% of each GPU's memory (HAMi's default); set %s to share a GPU",
				r.Name, c.cfg.ResourceMemoryName, c.cfg.ResourceMemoryName))
		}
	}
	if a.gpus[codeIndex(CardInsufficientMemory)] > 0 && a.memFit > 0 {
		out = append(out, fmt.Sprintf("the largest memory request that fits now is %d MiB per GPU for %d GPU(s) (node %s)", a.memFit, a.memFitCount, a.memFitNode))
	}
	if q := v.Quota; a.quota != nil {
		if q.Memory != nil {
			out = append(out, fmt.Sprintf("namespace %s has %d MiB of %s left (used %d of %d, ResourceQuota %s)",
				q.Namespace, q.Memory.Free(), q.Memory.Resource, q.Memory.Used, q.Memory.Limit, q.Memory.Source))
		}
		if q.Cores != nil {
			out = append(out, fmt.Sprintf("namespace %s has %d%% of %s left (used %d of %d, ResourceQuota %s)",
				q.Namespace, q.Cores.Free(), q.Cores.Resource, q.Cores.Used, q.Cores.Limit, q.Cores.Source))
		}
	}
	out = append(out, v.Card.hints()...)
	what := map[Code]string{CardCordoned: "a cordon (hami.io/device-cordon)", CardTypeMismatch: "the pod's type or mode filter", CardUUIDMismatch: "the pod's UUID filter"}
	for _, code := range []Code{CardCordoned, CardTypeMismatch, CardUUIDMismatch} {
		list := a.filtered[codeIndex(code)]
		if len(list) == 0 {
			continue
		}
		shown := list
		if len(shown) > 5 {
			shown = shown[:5]
		}
		out = append(out, fmt.Sprintf("%d GPU(s) pass every other gate but are excluded by %s: %s", len(list), what[code], strings.Join(shown, ", ")))
	}
	return out
}

// filterText names the pod's type and mode selectors (uuid false) or its UUID selectors, as the user wrote
// them, for every device type the pod asks for.
func filterText(req *PodRequest, uuid bool) string {
	var parts []string
	add := func(key string, vals []string) {
		if key != "" && len(vals) > 0 {
			parts = append(parts, key+"="+strings.Join(vals, ","))
		}
	}
	if uuid {
		add(AnnoUseGPUUUID, req.UseUUIDs)
		add(AnnoNoUseGPUUUID, req.NoUseUUIDs)
	} else {
		add(AnnoUseGPUType, req.UseTypes)
		add(AnnoNoUseGPUType, req.NoUseTypes)
		if req.Mode != "" {
			parts = append(parts, AnnoVGPUMode+"="+req.Mode)
		}
	}
	kinds := make([]int, 0, len(req.vendorSel))
	for k := range req.vendorSel {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		s := req.vendorSel[k]
		if uuid {
			add(s.kind.UseUUID, s.useUUIDs)
			add(s.kind.NoUseUUID, s.noUseUUIDs)
		} else {
			add(s.kind.UseType, s.rawUseTypes)
			add(s.kind.NoUseType, s.rawNoUseTypes)
		}
	}
	return strings.Join(parts, " and ")
}
