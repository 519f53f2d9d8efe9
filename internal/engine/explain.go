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
}

func (e *example) offer(node string, gpu int, c Check) {
	if !e.set || c.Have > e.have {
		*e = example{node: node, gpu: gpu, need: c.Need, have: c.Have, total: c.Total, set: true}
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
	found := false
	for i := range a.codes {
		if a.codes[i].Code == ns.Code {
			a.codes[i].Nodes++
			found = true
		}
	}
	if !found {
		a.codes = append(a.codes, ReasonCount{Code: ns.Code, Nodes: 1})
	}
	if ns.Check != nil {
		if len(a.nodes[codeIndex(ns.Code)]) < 5 {
			a.nodes[codeIndex(ns.Code)] = append(a.nodes[codeIndex(ns.Code)], n.Name)
		}
		a.ex(ns.Code).offer(n.Name, -1, *ns.Check)
		return
	}
	r := &f.req.Containers[res.container]
	a.free = a.free[:0]
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
		k := codeIndex(code)
		a.gpus[k]++
		a.best[k].offer(n.Name, g.Index, g.Result)
		switch code {
		case CardTypeMismatch:
			if len(a.types) < 6 && !contains(a.types, g.Type) {
				a.types = append(a.types, g.Type)
			}
		case ResourceQuotaNotFit:
			if a.quota == nil {
				c := g.Result
				a.quota = &c
			}
		}
	}
	if len(a.free) >= r.Count {
		slices.Sort(a.free)
		if m := a.free[len(a.free)-r.Count]; m > a.memFit {
			a.memFit, a.memFitNode, a.memFitCount = m, n.Name, r.Count
		}
	}
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
		out = append(out, fmt.Sprintf("%s %s asks for %d GPU(s)%s, each with %s and %d%% cores", kind, r.Name, r.Count, deviceSuffix(&r), r.MemoryString(), r.Cores))
	}
	codes := a.counts()
	seen := map[Code]bool{}
	for _, rc := range codes {
		seen[rc.Code] = true
	}
	// GPU-level reasons that are not any node's deciding reason still deserve a line.
	var gpuOnly []Code
	for i, n := range a.gpus {
		if n > 0 && i < len(allCodes) && !seen[allCodes[i]] {
			gpuOnly = append(gpuOnly, allCodes[i])
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
	e := a.ex(c)
	where := fmt.Sprintf("node %s, GPU %d", e.node, e.gpu)
	prefix := ""
	if nodes > 0 {
		prefix = fmt.Sprintf("%s (%d node(s)): ", c, nodes)
	} else {
		prefix = fmt.Sprintf("%s (%d GPU(s)): ", c, a.gpus[codeIndex(c)])
	}
	switch c {
	case NodeUnregistered:
		if req.DeviceWord() != "GPU" {
			return prefix + "no device plugin registered any devices on " + strings.Join(a.nodes[codeIndex(c)], ", ")
		}
		return prefix + "no GPUs registered in hami.io/node-nvidia-register on " + strings.Join(a.nodes[codeIndex(c)], ", ")
	case NodeDevicesNotReady:
		return prefix + "allocatable GPUs are 0 (the device plugin is not serving) on " + strings.Join(a.nodes[codeIndex(c)], ", ")
	case CardModelNotRequested:
		alts := ""
		if a.card != nil {
			var names []string
			for _, x := range a.card.Alternatives {
				names = append(names, x.Card)
			}
			alts = strings.Join(names, "|")
		}
		return prefix + fmt.Sprintf("the pod names %s in volcano.sh/card.name; these nodes have other cards: %s", alts, strings.Join(a.nodes[codeIndex(c)], ", "))
	case QueueCardQuotaNotFit:
		return prefix + strings.Join(a.card.Lines(), "; ")
	case NodeInsufficientDevice:
		// e is the node this gate rejects with the most GPUs: larger nodes failed later gates.
		if nodes == 1 {
			return prefix + fmt.Sprintf("a container asks for %d GPUs on one node; %s has %d", e.need, e.node, e.have)
		}
		return prefix + fmt.Sprintf("a container asks for %d GPUs on one node; these nodes have at most %d (%s)", e.need, e.have, e.node)
	case CardNotHealth:
		return prefix + fmt.Sprintf("%d GPU(s) are registered unhealthy", a.gpus[codeIndex(c)])
	case CardCordoned:
		return prefix + fmt.Sprintf("%d GPU(s) are cordoned in hami.io/device-cordon", a.gpus[codeIndex(c)])
	case CardTypeMismatch:
		return prefix + fmt.Sprintf("no GPU here passes %s; types seen: %s", typeFilters(req), strings.Join(a.types, ", "))
	case CardUUIDMismatch:
		return prefix + fmt.Sprintf("%d GPU(s) are excluded by the UUID filter (%s)", a.gpus[codeIndex(c)], uuidFilters(req))
	case CardTimeSlicingExhausted:
		return prefix + fmt.Sprintf("%d GPU(s) have every vGPU slot taken (%d of %d on %s)", a.gpus[codeIndex(c)], e.total, e.total, where)
	case ExclusiveDeviceAllocateConflict:
		return prefix + fmt.Sprintf("the pod needs an unused GPU (100%% cores or the mutex policy) but %d GPU(s) are already shared", a.gpus[codeIndex(c)])
	case ResourceQuotaNotFit:
		if a.quota != nil {
			// The check fails on the running total of the GPUs chosen so far; say the pod's whole need.
			need := a.quota.Need
			if mem, cores, ok := podTotals(req); a.quota.Unit == "MiB" && ok {
				need = max(need, mem)
			} else if a.quota.Unit == "%" {
				need = max(need, cores)
			}
			return prefix + fmt.Sprintf("the pod needs %d %s in total but namespace %s has %d %s left of %d (%s)",
				need, a.quota.Unit, q.Namespace, a.quota.Have, a.quota.Unit, a.quota.Total, a.quota.Detail)
		}
		return prefix + "the namespace quota is exhausted"
	case CardInsufficientMemory:
		return prefix + fmt.Sprintf("needs %d MiB on one GPU; the most free on any GPU that passes the earlier gates is %d MiB of %d (%s)",
			e.need, e.have, e.total, where)
	case CardInsufficientCore:
		return prefix + fmt.Sprintf("needs %d%% cores on one GPU; the most free is %d%% of %d%% (%s)", e.need, e.have, e.total, where)
	case CardQosPolicyMismatch:
		return prefix + fmt.Sprintf("%d GPU(s) are shared by pods of another QoS policy (metax-tech.com/sgpu-qos-policy)", a.gpus[codeIndex(c)])
	case CardComputeUnitsExhausted:
		return prefix + fmt.Sprintf("%d GPU(s) have all their cores allocated and a 0-core request does not go there", a.gpus[codeIndex(c)])
	case CardMigTopologyInfeasible:
		return prefix + fmt.Sprintf("no free MIG placement for a profile of at least %d MiB (%s)", e.need, where)
	case CardNotFoundCustomFilterRule:
		return prefix + fmt.Sprintf("no MIG profile offers %d MiB (%s)", e.need, where)
	case NumaNotFit:
		return prefix + fmt.Sprintf("numa-bind needs %d GPUs on one NUMA node; at most %d fit together (node %s)", e.need, e.have, e.node)
	case AllocatedCardsInsufficientRequest:
		return prefix + fmt.Sprintf("needs %d GPUs on one node; at most %d pass every gate together (node %s)", e.need, e.have, e.node)
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

// typeFilters names the type and mode filters a pod set, as the user wrote them.
func typeFilters(req *PodRequest) string {
	var parts []string
	if len(req.UseTypes) > 0 {
		parts = append(parts, AnnoUseGPUType+"="+strings.Join(req.UseTypes, ","))
	}
	if len(req.NoUseTypes) > 0 {
		parts = append(parts, AnnoNoUseGPUType+"="+strings.Join(req.NoUseTypes, ","))
	}
	if req.Mode != "" {
		parts = append(parts, AnnoVGPUMode+"="+req.Mode)
	}
	return strings.Join(parts, " and ")
}

func uuidFilters(req *PodRequest) string {
	var parts []string
	if len(req.UseUUIDs) > 0 {
		parts = append(parts, AnnoUseGPUUUID+"="+strings.Join(req.UseUUIDs, ","))
	}
	if len(req.NoUseUUIDs) > 0 {
		parts = append(parts, AnnoNoUseGPUUUID+"="+strings.Join(req.NoUseUUIDs, ","))
	}
	return strings.Join(parts, " and ")
}
