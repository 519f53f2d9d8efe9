package engine

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// NodeCopies is how many copies land on one node.
type NodeCopies struct {
	Node   string `json:"node"`
	Copies int    `json:"copies"`
}

// Capacity is how many more copies of a pod fit right now.
type Capacity struct {
	Copies int          `json:"copies"`
	Capped bool         `json:"capped,omitempty"` // stopped at the limit; more may fit
	Nodes  []NodeCopies `json:"nodes,omitempty"`  // sorted by node name
	// Limit is the namespace quota (ResourceQuotaNotFit) or queue card quota (QueueCardQuotaNotFit) check that
	// stops one more copy on a node whose GPUs would take it; nil when the GPUs themselves are full.
	Limit *Check `json:"limit,omitempty"`
}

// Capacity places copies of the pod one by one with the same gates and node choice as Evaluate, without
// changing the cluster, and counts how many fit (at most limit). Only the node a copy lands on and the
// namespace quota change between copies, so each step re-fits one node instead of the whole cluster.
func (c *Cluster) Capacity(pod *corev1.Pod, limit int) Capacity {
	req, _ := parseRequest(pod, c.cfg, c.kinds)
	if !req.WantsGPU() || limit <= 0 {
		return Capacity{}
	}
	f := newFitter(c, req, nil, false)
	// Each copy also takes cards from the pod's queue (Volcano card quota); card is this run's own copy.
	f.card = c.cardStatus(pod)
	// Each copy also takes the pod's CPU, memory and pod count from its node (kube-scheduler's checks).
	if f.kube = c.kubeGateFor(pod, KubeAuto); f.kube != nil {
		f.kube.copies = map[string]int{}
		f.kube.self = kubePod{} // copies are new pods: none is counted yet
	}
	nodes := append([]*Node(nil), c.nodeList...)
	cloned := make([]bool, len(nodes))
	fits := make([]bool, len(nodes))
	scores := make([]float64, len(nodes))
	ranks := make([]int, len(nodes))
	copies := make([]int, len(nodes))
	maxGPUs := 0
	for _, n := range nodes {
		maxGPUs = max(maxGPUs, len(n.GPUs))
	}
	st := make([]GPUStatus, maxGPUs)
	var tree *bestTree
	// refit fits node i again; with build, the answer holds its placement (only the node a copy lands on
	// needs one: building every node's would allocate one per fitting node of the cluster).
	refit := func(i int, build bool) nodeFit {
		f.build = build
		res := f.fitNode(nodes[i], st[:len(nodes[i].GPUs)], nil)
		fits[i], scores[i] = res.ok, NodeScore(nodes[i])
		_, ranks[i] = f.card.gate(nodes[i], f.cardModels)
		tree.update(i)
		return res
	}
	for i := range nodes {
		refit(i, false)
	}
	// beats is the node choice: the lower card rank, then the better score under the node policy.
	beats := func(i, j int) bool {
		return ranks[i] < ranks[j] || ranks[i] == ranks[j] && better(req.NodePolicy, scores[i], scores[j])
	}
	if capacityTree {
		tree = newBestTree(fits, beats)
	}
	var out Capacity
	for out.Copies < limit {
		best := tree.best()
		if tree == nil {
			for i := range nodes {
				if fits[i] && (best < 0 || beats(i, best)) {
					best = i
				}
			}
		}
		if best < 0 {
			break
		}
		res := refit(best, true) // the quota may have moved since this node was last fitted
		if !res.ok {
			continue
		}
		if !cloned[best] {
			nodes[best], cloned[best] = nodes[best].clone(), true
		}
		alloc := placementAllocation(req, res.containers, c.kinds)
		c.applyToNode(nodes[best], alloc, +1)
		f.quota.memUsed += alloc.QuotaMem
		f.quota.coresUsed += alloc.QuotaCores
		for r, v := range alloc.VendorQuota() {
			if q := f.quota.dev[r]; q != nil {
				q.used += v
			}
		}
		copies[best]++
		out.Copies++
		if f.kube != nil {
			f.kube.copies[nodes[best].Name]++
		}
		refit(best, false)
		if f.card != nil && f.card.Enforced {
			f.card.consume(ranks[best])
			for i := range nodes {
				if fits[i] {
					if chk, _ := f.card.gate(nodes[i], f.cardModels); chk != nil {
						fits[i] = false
						tree.update(i)
					}
				}
			}
		}
	}
	out.Capped = out.Copies == limit
	if !out.Capped {
		f.build = true // quotaLimit reads the placement of the node it finds
		out.Limit = f.quotaLimit(nodes, st)
	}
	for i, n := range nodes {
		if copies[i] > 0 {
			out.Nodes = append(out.Nodes, NodeCopies{Node: n.Name, Copies: copies[i]})
		}
	}
	return out
}

// quotaLimit finds, after the last copy, a node whose GPUs would take one more if the namespace quota and the
// queue's card quota did not apply, and returns the quota check that refuses it there.
func (f *fitter) quotaLimit(nodes []*Node, st []GPUStatus) *Check {
	quota, card := f.quota, f.card
	defer func() { f.quota, f.card = quota, card }()
	f.quota.hasMem, f.quota.hasCores, f.card = false, false, nil
	for _, n := range nodes {
		res := f.fitNode(n, st[:len(n.GPUs)], nil)
		if !res.ok {
			continue
		}
		if chk, _ := card.gate(n, f.cardModels); chk != nil && chk.Code == QueueCardQuotaNotFit {
			return chk
		}
		alloc := placementAllocation(f.req, res.containers, f.c.kinds)
		f.quota = quota
		chk, ok := f.configQuotaCheck(alloc.QuotaMem, alloc.QuotaCores)
		f.quota.hasMem, f.quota.hasCores = false, false
		if !ok {
			return &chk
		}
	}
	return nil
}

// placementAllocation is the usage a placement would add, computed exactly as for a counted pod.
func placementAllocation(req *PodRequest, containers []ContainerPlacement, kinds []device.Kind) *PodAllocation {
	p := &Placement{Containers: containers, InitContainers: req.InitContainers, AppContainers: req.AppContainers}
	alloc := &PodAllocation{Namespace: req.Namespace, Name: req.Name}
	if mig := p.MigAllocations(); len(mig) > 0 {
		alloc.rareFields().mig = mig
	}
	for _, cp := range containers {
		ca := ContainerAllocation{Name: cp.Name, Init: cp.Init}
		for _, d := range cp.Devices {
			t := "NVIDIA"
			if !mainKind(&kinds[d.Kind]) {
				t, ca.Kind, ca.Device = d.Device, int32(d.Kind), d.Device
			}
			ca.Devices = append(ca.Devices, codec.ContainerDevice{UUID: d.UUID, Type: t, UsedMem: d.MemMiB, UsedCores: d.Cores, CoreMask: d.CoreMask})
		}
		alloc.Containers = append(alloc.Containers, ca)
	}
	alloc.Uses = collapse(alloc.Containers)
	alloc.QuotaMem, alloc.QuotaCores = quotaUse(alloc.Containers)
	alloc.setVendorQuota(vendorQuotaUse(alloc.Containers, kinds))
	return alloc
}

// capacityTree switches Capacity's choice of the next node between the tournament and a scan of every node;
// tests turn it off to compare.
var capacityTree = true

// bestTree is a tournament over the nodes for Capacity's choice of the next copy's node: each inner slot holds
// the better fitting node of its two halves, the left one unless the right beats it, so the root is the first
// node no other beats, as a scan in node order keeps, and a change to one node replays only its path instead of
// a scan of every node per copy. beats must be a strict weak order (node scores are ratios of counts: never NaN).
// A nil tree is no tree: update does nothing and best says none.
type bestTree struct {
	size  int
	slot  []int // slot[1] the root; slot[size+i] node i, or -1 when it does not fit
	fits  []bool
	beats func(i, j int) bool
}

func newBestTree(fits []bool, beats func(i, j int) bool) *bestTree {
	size := 1
	for size < len(fits) {
		size <<= 1
	}
	t := &bestTree{size: size, slot: make([]int, 2*size), fits: fits, beats: beats}
	for i := range size {
		t.slot[size+i] = -1
		if i < len(fits) && fits[i] {
			t.slot[size+i] = i
		}
	}
	for k := size - 1; k >= 1; k-- {
		t.slot[k] = t.pick(t.slot[2*k], t.slot[2*k+1])
	}
	return t
}

// pick is the better of a and b (-1: none), a on a tie.
func (t *bestTree) pick(a, b int) int {
	if a < 0 || b >= 0 && t.beats(b, a) {
		return b
	}
	return a
}

// update replays node i's path after its fit, score or rank changed.
func (t *bestTree) update(i int) {
	if t == nil {
		return
	}
	k := t.size + i
	t.slot[k] = -1
	if t.fits[i] {
		t.slot[k] = i
	}
	for k >>= 1; k >= 1; k >>= 1 {
		t.slot[k] = t.pick(t.slot[2*k], t.slot[2*k+1])
	}
}

// best is the node the next copy goes to, -1 for none.
func (t *bestTree) best() int {
	if t == nil {
		return -1
	}
	return t.slot[1]
}
