package engine

import (
	"strconv"
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// extraUse is usage a GPU carries during one node's evaluation on top of its counted usage: the pod's own
// earlier containers (positive) and, for a pod already counted, its own old share (negative).
type extraUse struct {
	slots int32
	mem   int64
	cores int64
	mig   []codec.MigPlacement
	// taken are the core bits given to the pod's containers so far, released those the pod itself held
	// when it is evaluated again (device.Kind.CoresMask).
	taken, released int64
}

// fitter evaluates one pod against nodes. It owns scratch buffers so that a whole evaluation allocates
// only what the verdict keeps.
type fitter struct {
	c     *Cluster
	req   *PodRequest
	self  *PodAllocation // the pod's own counted usage, left out of every number
	quota quotaView
	// card is the Volcano card quota's status for the pod (shared, read-only); nil when no card quota
	// concerns it. cardModels is this fitter's own cache of card-model checks.
	card       *CardStatus
	cardModels modelChecks
	// kube is kube-scheduler's own checks, run before HAMi's node gates; nil when the evaluation skips them.
	kube *kubeGate
	// detail asks for every gate's result per GPU, not only the first failure.
	detail bool
	// build asks fitNode to return the placement; without it only the yes/no and the statuses are kept.
	build bool
	// ignoreFilters lets cordon, type and UUID filters pass, to find GPUs only a filter excludes.
	ignoreFilters bool
	// orderStale says order must be reset to the node's registration order before the next sort; extraUsed
	// that extra holds something of the node fitted last (resetExtra clears it only then). quick lets a
	// container that quickShort judges fail without its walk (nodefacts.go): only callers that read a failed
	// node's answer through the facts (evalRange) set it; quickFacts are the facts of the node whose container
	// failed so, until the next node.
	// With quick, fitNode leaves the statuses of the last node as they are until a walk writes them
	// (clearPending): the facts' judgement never does.
	// migExtra says a MIG placement was added to extra since the last reset.
	orderStale, extraUsed, quick, clearPending, migExtra bool
	quickFacts                                           *nodeFacts
	// orig is the pod's request as read; req is the fitter's own copy of it when a type resolves its request
	// per node (ownRequest), else orig.
	orig *PodRequest

	reasonCache *reasonCache
	// rule is HAMi's GPU sort for this pod; order is the node's GPU list as HAMi holds it between containers,
	// scores and sorter are the sort's scratch.
	rule   sortRule
	order  []int
	scores []float32
	sorter gpuSorter
	extra  []extraUse
	sel    []int
	chosen []int
	// pending are the MIG GPUs whose placement a container's walk holds in extra[].mig, one entry each.
	pending []int
	// scored are the devices the pod's containers of a Kind with a node score took on the node being fitted;
	// nil until such a container is placed (one pointer keeps the fitter in its allocation size class).
	scored *scoredDevices
	// sels are the pod's type, mode, UUID and QoS selectors of each device type it asks for, by Kind index
	// (nil for the others); selsArr, selBuf and quotaKindArr back them and quota.kind without an allocation
	// for a cluster of the default types and a pod asking for one or two.
	sels         []*selectors
	selsArr      [32]*selectors
	selBuf       [2]selectors
	quotaKindArr [32][2]quotaRef
	// wantsReady is set when a container asks for a type with the devices-ready node gate (device.ReadyRow),
	// wantsMain when one asks for the main type (mainKind: NVIDIA's), whose annotation decides registration.
	// familyScored says a type the pod asks for scores nodes itself (device.Kind.ScoreNode).
	wantsReady, wantsMain, familyScored bool
	// dev, takenNode, takenGPU, otherTakenF and groupUsedF are familyCheck's scratch: a family row's view of one
	// device.
	dev         device.Dev
	takenNode   *Node
	takenGPU    int
	otherTakenF func() string
	groupUsedF  func() string
}

// quotaView is the namespace's managed quota with the pod's own old usage left out.
type quotaView struct {
	hasMem, hasCores      bool
	memLimit, coreLimit   int64
	memUsed, coresUsed    int64
	memSource, coreSource string
	// dev are the other device types' quota keys, by resource name.
	dev map[string]*devQuota
	// kind are the keys each type's quota row (device.QuotaRow) checks, by Kind index: memory, then cores.
	kind [][2]quotaRef
}

// quotaRef names one key of a quotaView: the configured memory or cores key, or one of dev.
type quotaRef struct {
	which uint8 // refNone, refMem, refCores or refDev
	dev   *devQuota
}

const (
	refNone uint8 = iota
	refMem
	refCores
	refDev
)

// refOf finds a type's quota resource among the view's keys: the configured memory and cores keys by name
// (NVIDIA's), else the other types' lines.
func (q *quotaView) refOf(res string, cfg *Config) quotaRef {
	// A configured key the namespace does not limit names nothing, so the walk skips the gate's arithmetic.
	switch {
	case res == "":
		return quotaRef{}
	case res == cfg.ResourceMemoryName:
		if !q.hasMem {
			return quotaRef{}
		}
		return quotaRef{which: refMem}
	case res == cfg.ResourceCoreName:
		if !q.hasCores {
			return quotaRef{}
		}
		return quotaRef{which: refCores}
	}
	if d := q.dev[res]; d != nil {
		return quotaRef{which: refDev, dev: d}
	}
	return quotaRef{}
}

// line is the key a ref names: limit, used, its ResourceQuota and unit; ok is false when it is unlimited.
func (q *quotaView) line(r quotaRef) (limit, used int64, source, unit string, ok bool) {
	switch r.which {
	case refMem:
		return q.memLimit, q.memUsed, q.memSource, "MiB", q.hasMem
	case refCores:
		return q.coreLimit, q.coresUsed, q.coreSource, "%", q.hasCores
	case refDev:
		return r.dev.limit, r.dev.used, r.dev.source, r.dev.unit, true
	}
	return 0, 0, "", "", false
}

type devQuota struct {
	limit, used int64
	source      string
	unit        string
}

func newQuotaView(st QuotaStatus, self *PodAllocation) quotaView {
	var q quotaView
	if st.Memory != nil {
		q.hasMem, q.memLimit, q.memUsed, q.memSource = true, st.Memory.Limit, st.Memory.Used, st.Memory.Source
	}
	if st.Cores != nil {
		q.hasCores, q.coreLimit, q.coresUsed, q.coreSource = true, st.Cores.Limit, st.Cores.Used, st.Cores.Source
	}
	if self != nil {
		q.memUsed -= self.QuotaMem
		q.coresUsed -= self.QuotaCores
	}
	for _, l := range st.Devices {
		if q.dev == nil {
			q.dev = map[string]*devQuota{}
		}
		r := strings.TrimPrefix(l.Resource, "limits.")
		dq := &devQuota{limit: l.Limit, used: l.Used, source: l.Source, unit: l.Unit}
		if self != nil {
			dq.used -= self.VendorQuota()[r]
		}
		q.dev[r] = dq
	}
	return q
}

func newFitter(c *Cluster, req *PodRequest, self *PodAllocation, detail bool) *fitter {
	f := &fitter{c: c, req: req, self: self, detail: detail, quota: newQuotaView(c.Quota(req.Namespace), self), cardModels: modelChecks{},
		rule: newSortRule(req)}
	f.ownRequest(req)
	if len(c.kinds) <= len(f.selsArr) {
		f.sels = f.selsArr[:len(c.kinds)]
	} else {
		f.sels = make([]*selectors, len(c.kinds))
	}
	used := 0
	for i := range req.Containers {
		k := req.Containers[i].Kind
		if f.sels[k] == nil {
			mode := ""
			if c.rows[k].mig {
				mode = req.Mode // vgpu-mode picks among the modes of a type with MIG (NVIDIA)
			}
			var s *selectors
			if used < len(f.selBuf) {
				s = &f.selBuf[used]
				used++
			} else {
				s = &selectors{}
			}
			newSelectors(s, &c.kinds[k], req.annos, mode)
			f.sels[k] = s
		}
		f.familyScored = f.familyScored || c.kinds[k].ScoreNode != nil
		f.wantsReady = f.wantsReady || c.rows[k].ready
		f.wantsMain = f.wantsMain || mainKind(&c.kinds[k])
		if c.rows[k].quota && f.quota.kind == nil {
			if len(c.kinds) <= len(f.quotaKindArr) {
				f.quota.kind = f.quotaKindArr[:len(c.kinds)]
			} else {
				f.quota.kind = make([][2]quotaRef, len(c.kinds))
			}
		}
		if c.rows[k].quota {
			f.quota.kind[k] = [2]quotaRef{f.quota.refOf(c.kinds[k].Memory, &c.cfg), f.quota.refOf(c.kinds[k].Cores, &c.cfg)}
		}
	}
	return f
}

// nodeFit is the outcome of fitting the pod on one node.
type nodeFit struct {
	ok        bool
	nodeCheck *Check // set for a node-level failure
	reason    string // kube-scheduler's reasons, for a failure of its checks; a family node row's HAMi text
	// fitCode and fitReason are the family's own reason for a failing container (Kind.FitFailure), in place
	// of the per-device count; "" when it has none.
	fitCode   Code
	fitReason string
	fitCheck  *Check
	// facts are the node's facts when its failing container was judged by them (quickShort): the statuses
	// are then not written.
	facts      *nodeFacts
	container  int // index into req.Containers of the first failing container
	gpus       []GPUStatus
	containers []ContainerPlacement
}

// resetExtra prepares the per-GPU overlay for node n: zero, minus the pod's own old share.
func (f *fitter) resetExtra(n *Node) {
	if cap(f.extra) < len(n.GPUs) {
		f.extra = make([]extraUse, len(n.GPUs))
	}
	if f.extraUsed || len(f.extra) != len(n.GPUs) {
		f.extra = f.extra[:len(n.GPUs)]
		if f.migExtra { // keep the placement lists' arrays for the next MIG walk
			for i := range f.extra {
				f.extra[i] = extraUse{mig: f.extra[i].mig[:0]}
			}
			f.migExtra = false
		} else {
			clear(f.extra)
		}
		f.extraUsed = false
	}
	if f.self != nil && f.self.Node == n.Name {
		f.extraUsed = true
		for _, u := range f.self.Uses {
			if i := n.gpuIndex(u.UUID); i >= 0 {
				f.extra[i].slots -= u.Slots
				f.extra[i].mem -= u.Mem
				f.extra[i].cores -= u.Cores
				f.extra[i].released |= u.mask
			}
		}
	}
}

// fitNode runs every gate for the pod on node n. statuses must have len(n.GPUs) entries; it is filled with
// the deciding container's per-GPU results, not with the GPUs' identity (identify adds it where a status
// leaves the walk: the scratch row is reused for every node, and strings written for each GPU of each node
// cost more than the gates).
func (f *fitter) fitNode(n *Node, statuses []GPUStatus, now nowFunc) nodeFit {
	res := nodeFit{container: -1, gpus: statuses}
	f.quickFacts = nil
	f.clearPending = true
	if !f.quick {
		f.clearStatuses(statuses)
	}
	// kube-scheduler's own filters run before it calls HAMi's: a node they reject is never HAMi's to judge.
	if f.kube != nil && !f.kube.passes(n) {
		if chk, reason := f.c.kubeCheck(f.kube, n.Name); chk != nil {
			res.nodeCheck, res.reason = chk, reason
			return res
		}
	}
	if chk := f.nodeGate(n, now); chk != nil {
		res.nodeCheck = chk
		return res
	}
	f.resetExtra(n)
	if f.scored != nil {
		f.scored.runs = f.scored.runs[:0]
	}
	var podMem, podCores int64
	// Init containers run one at a time: each is tried against the node alone and leaves nothing behind.
	for ci := range f.req.Containers {
		r := &f.req.Containers[ci]
		if !r.Init {
			continue
		}
		if chk := f.countGate(n, ci); chk != nil {
			res.nodeCheck, res.container = chk, ci
			return res
		}
		if chk, reason := f.nodeRowCheck(n, ci); chk != nil {
			res.nodeCheck, res.reason, res.container = chk, reason, ci
			return res
		}
		saved := f.snapshotExtra()
		f.orderStale = true
		cp, _, _, ok := f.fitContainer(n, ci, 0, 0, statuses)
		f.restoreExtra(saved)
		if !ok {
			res.container = ci
			if res.facts = f.quickFacts; res.facts == nil { // quickShort leaves out the kinds with a fitFailure
				res.fitCode, res.fitReason, res.fitCheck = f.fitFailure(n, ci, statuses)
			}
			return res
		}
		if f.build {
			res.containers = append(res.containers, cp)
		}
	}
	f.orderStale = true // f.order is HAMi's device list again before the first app container (resetOrder)
	for ci := range f.req.Containers {
		if f.req.Containers[ci].Init {
			continue
		}
		if chk := f.countGate(n, ci); chk != nil {
			res.nodeCheck, res.container = chk, ci
			return res
		}
		if chk, reason := f.nodeRowCheck(n, ci); chk != nil {
			res.nodeCheck, res.reason, res.container = chk, reason, ci
			return res
		}
		cp, mem, cores, ok := f.fitContainer(n, ci, podMem, podCores, statuses)
		if !ok {
			res.container = ci
			if res.facts = f.quickFacts; res.facts == nil { // quickShort leaves out the kinds with a fitFailure
				res.fitCode, res.fitReason, res.fitCheck = f.fitFailure(n, ci, statuses)
			}
			return res
		}
		podMem += mem
		podCores += cores
		if f.build {
			res.containers = append(res.containers, cp)
		}
	}
	res.ok = true
	if f.detail {
		f.clearStatuses(statuses) // a detailed node's statuses are read: cleared if no walk wrote them
	}
	return res
}

// clearStatuses clears the node's statuses once before the first walk writes them.
func (f *fitter) clearStatuses(statuses []GPUStatus) {
	if !f.clearPending {
		return
	}
	f.clearPending = false
	clear(statuses) // the identity fields too: the walk never reads them, and one clear costs less than a test per field
}

// identify fills the identity of node n's GPUs into st (one status per GPU, in the node's order).
func identify(n *Node, st []GPUStatus) {
	for i := range st {
		st[i].identify(&n.GPUs[i])
	}
}

// identify fills the status's identity from its GPU.
func (s *GPUStatus) identify(g *GPU) {
	s.Index, s.UUID, s.Type, s.Numa = g.Index, g.UUID, g.Type, g.Numa
}

func (f *fitter) snapshotExtra() []extraUse {
	out := make([]extraUse, len(f.extra))
	for i, e := range f.extra {
		out[i] = e
		out[i].mig = append([]codec.MigPlacement(nil), e.mig...)
	}
	return out
}

func (f *fitter) restoreExtra(saved []extraUse) { copy(f.extra, saved) }

type nowFunc func() int64 // unix seconds of the evaluation; 0 means no handshake grace

// unregistered says why an unregistered node has none of the devices the pod asks for: the node's own
// problem with the main type's annotation (mainKind: NVIDIA's, which the node reader reads first), or, for a
// pod of another type, the annotation (or capacity) that type's device plugin would have written.
func (f *fitter) unregistered(n *Node) string {
	if f.wantsMain || len(f.req.Containers) == 0 || n.RegisterError != noNVIDIARegister {
		return n.RegisterError
	}
	k := &f.c.kinds[f.req.Containers[0].Kind]
	if k.Register != "" {
		return "no " + k.Register + " annotation: the device plugin has not registered " + k.Word + "s"
	}
	// Such a family's devices come from the node's capacity of its own resources (not always the count).
	return "the node's capacity shows no " + k.Word + "s: the device plugin has not registered any"
}

// nodeGate is the checks made before any GPU; nil means the node passes.
func (f *fitter) nodeGate(n *Node, now nowFunc) *Check {
	if !n.Registered {
		return &Check{Gate: "registered", Code: NodeUnregistered, Detail: f.unregistered(n)}
	}
	// The allocatable count is that of the type with the devices-ready gate (NVIDIA's); a pod that asks for
	// other types only is not held by it.
	if n.AllocatableGPUs <= 0 && f.wantsReady && (n.DevicesOf(f.c.readyKind) > 0 || len(n.GPUs) == 0) {
		if chk := f.handshakeGate(n, now); chk != nil {
			return chk
		}
	}
	if chk, _ := f.card.gate(n, f.cardModels); chk != nil {
		return chk
	}
	return nil
}

// handshakeGate is HAMi v2.10.0's CheckHealth for a node whose allocatable count is 0 (pkg/device/devices.go:
// 576-613, pkg/device/nvidia/device.go:234-257): its registration pass drops the node only when the
// handshake holds a Requesting_ stamp older than the grace. Any other handshake (none, Reported, Deleted_, a
// stamp that does not parse) gets Requesting_<now> at that pass and the node keeps its GPUs for the grace, so
// HAMi judges them. Without an evaluation time a stamp cannot be judged, and the node is not ready.
func (f *fitter) handshakeGate(n *Node, now nowFunc) *Check {
	if n.Handshake.State != codec.HandshakeRequesting {
		return nil
	}
	grace := int64(f.c.cfg.HandshakeGrace.Seconds())
	stamp := n.Handshake.Time.Unix()
	detail := "allocatable " + f.c.cfg.ResourceCountName + " is 0: the device plugin is not serving GPUs"
	if now != nil {
		t := now()
		if t > 0 && t-stamp < grace {
			return nil
		}
		if t > 0 {
			// The stamp is said as written (the scheduler's local time), so the text reads the same in any zone.
			detail += ", and the scheduler's handshake " + codec.FormatHandshakeRequesting(n.Handshake.Time) +
				" is " + strconv.FormatInt(grace, 10) + " s old or more (HAMi's grace), so HAMi drops the node"
		}
	}
	return &Check{Gate: "devices-ready", Code: NodeDevicesNotReady, Have: max(n.AllocatableGPUs, 0), Unit: "GPUs", Detail: detail}
}

// countGate is NodeInsufficientDevice for one container. HAMi checks the count inside its walk over the
// containers (fitInDevices, pkg/scheduler/score.go), so an earlier container that fails on its GPUs decides the
// node's reason before a later container's count is looked at.
func (f *fitter) countGate(n *Node, ci int) *Check {
	r := &f.req.Containers[ci]
	if have := n.devicesFor(r.Kind); r.Count > have && !f.migRequest(n, r) {
		return &Check{Gate: "device-count", Code: NodeInsufficientDevice, Need: int64(r.Count), Have: int64(have), Unit: f.c.units[r.Kind],
			Detail: "container " + r.Name}
	}
	return nil
}

// migRequest is HAMi's isMIGRequest (pkg/scheduler/score.go:54-69 at v2.10.0): a request of the type with
// the MIG row, on a node with a device of that type in MIG mode, from a pod whose vgpu-mode, if set, names mig.
// fitInDevices skips the node's device count for it (score.go:99): the walk may take one GPU several times.
func (f *fitter) migRequest(n *Node, r *ContainerRequest) bool {
	if !f.c.rows[r.Kind].mig || f.req.Mode != "" && !strings.Contains(f.req.Mode, ModeMIG) {
		return false
	}
	for i := range n.GPUs {
		if g := &n.GPUs[i]; int(g.Kind) == r.Kind && g.Mode == ModeMIG {
			return true
		}
	}
	return false
}

// fitContainer picks GPUs for one container, walking the GPUs in policy order. It returns the placement
// and the memory and cores it adds to the pod's quota usage.
func (f *fitter) fitContainer(n *Node, ci int, podMem, podCores int64, statuses []GPUStatus) (ContainerPlacement, int64, int64, bool) {
	r := &f.req.Containers[ci]
	kind := &f.c.kinds[r.Kind]
	// numa-bind and topology-aware hold for a type with the numa row (NVIDIA's); every other type's checkType
	// says no NUMA.
	numa := f.c.rows[r.Kind].numa
	numaBind, topology := f.req.NumaBind && numa, f.req.TopologyAware && numa
	// HAMi's walk looks at a MIG GPU again right after taking it (pkg/device/nvidia/device.go:846-848 at
	// v2.10.0), so one container may hold several instances of one GPU; the instances taken so far hold their
	// placements in extra[].mig until the walk ends (CustomFilterRule places them again, 602-619).
	revisit := f.c.rows[r.Kind].mig && !topology
	judged := n.judgedMask(r.Kind) // nil: the Kind's own devices (sees.go)
	if judged == nil {
		if facts, ok := f.quickShort(n, r, numaBind, podMem, podCores); ok {
			f.quickFacts = facts // nodefacts.go: the facts say every device's first failing gate
			return ContainerPlacement{}, 0, 0, false
		}
	}
	if judged == nil && f.quickFits(n, ci, r, numaBind, topology, podMem, podCores) {
		return ContainerPlacement{}, 0, 0, true // nodefacts.go: only the yes is read
	}
	f.clearStatuses(statuses)
	if f.unsortedFailOK(r, numaBind) && f.certainlyShort(n, r, judged, revisit) {
		f.failUnsorted(n, r, podMem, podCores, statuses, judged) // unsorted.go: the sort cannot change a failure
		return ContainerPlacement{}, 0, 0, false
	}
	switch {
	case f.orderStale && f.orderFromFacts(n, r): // nodefacts.go: the first sort, when the node's usage alone decides it
		f.orderStale = false
	case f.orderStale: // set where HAMi starts from the node's device list; a failing container never reads it
		f.resetOrder(n)
		f.orderStale = false
		f.sortGPUs(n, r)
	default:
		f.sortGPUs(n, r)
	}
	sel := f.sel[:0]
	var selMem, selCores int64
	prevNuma, started := 0, false
	pending := f.pending[:0]
	defer func() {
		for i := len(pending) - 1; i >= 0; i-- {
			e := &f.extra[pending[i]]
			e.mig = e.mig[:len(e.mig)-1]
		}
		f.pending = pending[:0]
	}()
	choose := f.familyTopology(n, r, kind)
	// HAMi's Fit walks the sorted list from its end (pkg/device/nvidia/device.go).
	for k := len(f.order) - 1; k >= 0; k-- {
		gi := f.order[k]
		g := &n.GPUs[gi]
		if judged == nil && int(g.Kind) != r.Kind || judged != nil && !judged[gi] {
			// HAMi hands each type's Fit only that type's devices (getNodeResources, pkg/scheduler/score.go).
			statuses[gi].Selected, statuses[gi].other = false, true
			statuses[gi].Result = Check{Gate: "device", Detail: f.c.rows[r.Kind].otherDetail[g.Kind]}
			continue
		}
		// numa-bind restarts the set on a new NUMA node only for a GPU that passed the health, cordon and type
		// gates, which HAMi checks first.
		if numaBind && (!started || g.Numa != prevNuma) && !f.earlyFail(g) {
			// With topology-aware, HAMi keeps walking and restarts here even when the NUMA node already held
			// enough candidates: only the last NUMA node walked reaches the topology choice.
			detail := "NUMA node " + itoa(prevNuma) + " has too few fitting GPUs"
			if len(sel) >= r.Count {
				detail = "NUMA node " + itoa(prevNuma) + " is dropped: HAMi's topology-aware walk keeps only the last NUMA node it walks"
			}
			// HAMi counts NumaNotFit only when k.Nums moved, and in topology mode it never moves
			// (pkg/device/nvidia/device.go:746-748, 831-833): the dropped candidates count for no reason.
			code := NumaNotFit
			if topology {
				code = ""
			}
			for _, s := range sel {
				statuses[s].Result = Check{Gate: "numa", Code: code, Need: int64(r.Count), Have: int64(len(sel)), Unit: "GPUs",
					Detail: detail}
			}
			sel, selMem, selCores = sel[:0], 0, 0
			prevNuma, started = g.Numa, true
		}
		st := &statuses[gi]
		st.Selected, st.again, st.instances = false, "", 0
		f.checkInto(n, gi, r, podMem+selMem, podCores+selCores, nil, &st.Result)
		if f.detail {
			st.Checks = f.allChecks(n, gi, r, podMem+selMem, podCores+selCores)
		}
		if st.Result.Failed() {
			continue
		}
		done := false
		for {
			sel = append(sel, gi)
			st.instances++
			selMem += r.MemoryOn(g.TotalMem)
			selCores += r.CoresOn(g.TotalCores)
			if !topology && choose == nil && kind.Pair == 0 && kind.Select == nil && kind.SelectInOrder == nil && kind.Prioritize == nil && len(sel) == r.Count {
				done = true
				break
			}
			if !revisit || g.Mode != ModeMIG {
				break
			}
			_, pl, ok := f.migChoice(g, gi, r.MemoryOn(g.TotalMem))
			if !ok {
				break // no placement: the check passed, so this is not reached
			}
			f.extra[gi].mig = append(f.extra[gi].mig, pl)
			f.extraUsed, f.migExtra = true, true
			pending = append(pending, gi)
			// The second look counts its failure as one more reason of this GPU's.
			if again := f.checkGPU(n, gi, r, podMem+selMem, podCores+selCores, nil); again.Failed() {
				st.again = again.Code
				break
			}
		}
		if done {
			break
		}
	}
	f.sel = sel
	if len(sel) < r.Count {
		for _, s := range sel {
			statuses[s].Result = Check{Gate: "set", Code: AllocatedCardsInsufficientRequest, Need: int64(r.Count), Have: int64(len(sel)), Unit: f.c.units[r.Kind]}
		}
		return ContainerPlacement{}, 0, 0, false
	}
	// The final placement below chooses the MIG placements again, in the same order.
	for i := len(pending) - 1; i >= 0; i-- {
		e := &f.extra[pending[i]]
		e.mig = e.mig[:len(e.mig)-1]
	}
	pending = pending[:0]
	chosen := sel
	if kind.Pair > 1 && r.Count > 1 {
		chosen = pairChoice(n, sel, r.Count, kind.Pair)
		if len(chosen) < r.Count {
			for _, s := range sel {
				statuses[s].Result = Check{Gate: "set", Code: AllocatedCardsInsufficientRequest, Need: int64(r.Count), Have: int64(len(chosen)), Unit: f.c.units[r.Kind],
					Detail: itoa(len(sel)) + " fit, but only " + itoa(len(chosen)) + " in whole modules of " + itoa(kind.Pair)}
			}
			return ContainerPlacement{}, 0, 0, false
		}
	}
	if kind.Select != nil || kind.SelectInOrder != nil {
		if kind.SelectInOrder != nil {
			chosen = f.selectInOrderChoice(n, sel, r, kind.SelectInOrder)
		} else {
			chosen = selectChoice(n, sel, r.Count, kind.Select)
		}
		if len(chosen) < r.Count {
			for _, s := range sel {
				// HAMi's Kunlun Fit says NumaNotFit when its selection finds no set.
				statuses[s].Result = Check{Gate: "interconnect", Code: NumaNotFit, Need: int64(r.Count), Have: int64(len(chosen)), Unit: f.c.units[r.Kind],
					Detail: itoa(len(sel)) + " fit, but no " + itoa(r.Count) + " of them " + kind.SelectRule}
			}
			return ContainerPlacement{}, 0, 0, false
		}
	}
	if kind.Prioritize != nil {
		chosen = f.prioritizeChoice(n, sel, r, kind.Prioritize)
	}
	if choose != nil {
		chosen = f.familyChoice(n, sel, r.Count, choose) // HAMi's Fit takes what the choice gives, even fewer
	}
	if topology {
		chosen = f.topologyChoice(n, sel, r.Count)
		var mem, cores int64
		for _, gi := range chosen {
			mem += r.MemoryOn(n.GPUs[gi].TotalMem)
			cores += r.Cores
		}
		if chk, ok := f.quotaCheck(r.Kind, podMem+mem, podCores+cores); !ok {
			for _, gi := range chosen {
				statuses[gi].Result = chk
			}
			return ContainerPlacement{}, 0, 0, false
		}
	}
	var cp ContainerPlacement
	if f.build {
		cp = ContainerPlacement{Name: r.Name, Init: r.Init, Index: r.Index, Devices: make([]PlacedDevice, 0, len(chosen)), byCores: r.ByCores}
	}
	var mem, cores int64
	f.extraUsed = f.extraUsed || len(chosen) > 0
	for _, gi := range chosen {
		g := &n.GPUs[gi]
		d := PlacedDevice{UUID: g.UUID, Index: g.Index, Type: g.Type, MemMiB: r.MemoryOn(g.TotalMem), Cores: r.CoresOn(g.TotalCores), Device: g.Device, Kind: int(g.Kind), deviceCores: g.TotalCores, profile: r.profile}
		if d.Kind != r.Kind { // another Kind's device the request sees: HAMi records it under the request's type
			d.Device, d.Kind = deviceName(kind), r.Kind
		}
		if g.Mode == ModeMIG {
			if prof, pl, ok := f.migChoice(g, gi, d.MemMiB); ok {
				// HAMi charges the instance's profile, memory and cores, to the GPU and the device list
				// (AddResourceUsage, pkg/device/nvidia/device.go:651-652 at v2.10.0): later containers see it.
				d.MigProfile, d.MigPlacement, d.MemMiB, d.Cores = prof.Name, &pl, prof.MemoryMB, prof.Core
				f.extra[gi].mig = append(f.extra[gi].mig, pl)
				f.migExtra = true
			}
		}
		if kind.CoresMask {
			e := &f.extra[gi]
			d.CoreMask = coreMask(g.coreBits&^e.released|e.taken, g.TotalCores, d.Cores)
			e.taken |= d.CoreMask
		}
		f.extra[gi].slots += r.slotCharge()
		f.extra[gi].mem += d.MemMiB
		f.extra[gi].cores += d.Cores
		statuses[gi].Selected = true
		mem += d.MemMiB
		cores += d.Cores
		if f.build {
			cp.Devices = append(cp.Devices, d)
		}
	}
	if kind.ScoreNode != nil {
		f.noteScored(r.Kind, chosen)
	}
	return cp, mem, cores, true
}

// earlyFail reports whether a GPU fails a gate HAMi checks before the NUMA set: health, cordon or type.
func (f *fitter) earlyFail(g *GPU) bool {
	return !g.Healthy || !f.ignoreFilters && (g.Cordoned || !f.typeMatches(g))
}

// used is a GPU's effective usage during this evaluation.
func (f *fitter) used(g *GPU, gi int) (slots int32, mem, cores int64) {
	e := &f.extra[gi]
	return g.UsedSlots + e.slots, g.UsedMem + e.mem, g.UsedCores + e.cores
}

// checkGPU returns the first failing gate for one GPU, or a passing Check. When all is non-nil every
// gate's result is appended to it instead of stopping at the first failure.
func (f *fitter) checkGPU(n *Node, gi int, r *ContainerRequest, podMem, podCores int64, all *[]Check) Check {
	var c Check
	f.checkInto(n, gi, r, podMem, podCores, all, &c)
	return c
}

// checkInto is checkGPU writing its result into out: the walk passes the device's status, so the result is
// written once, not returned and copied.
func (f *fitter) checkInto(n *Node, gi int, r *ContainerRequest, podMem, podCores int64, all *[]Check, out *Check) {
	g := &n.GPUs[gi]
	// Each gate first decides pass or fail with plain comparisons; its Check, with the numbers, is built only
	// when it failed or when every result is wanted. Most GPUs pass most gates, and this runs for every GPU.
	want := all != nil
	stop := func(c *Check) bool {
		if want {
			*all = append(*all, *c)
			return false
		}
		return c.Failed()
	}
	if failed := !g.Healthy; failed || want {
		if c := (Check{Gate: "health"}); stop(failIf(&c, failed, f.c.rows[r.Kind].unhealthy, healthDetail)) {
			*out = c
			return
		}
	}
	if failed := g.Cordoned && !f.ignoreFilters; failed || want {
		if c := (Check{Gate: "cordon"}); stop(failIf(&c, failed, CardCordoned, "listed in "+codec.NodeCordonAnnotation)) {
			*out = c
			return
		}
	}
	if failed := !f.ignoreFilters && !f.sels[r.Kind].typeMatches(g.Type, g.Mode); failed || want {
		c := Check{Gate: "type"}
		if failed {
			c.Code, c.Detail = CardTypeMismatch, f.sels[r.Kind].typeDetail(g.Mode)
		}
		if stop(&c) {
			*out = c
			return
		}
	}
	kr := &f.c.rows[r.Kind] // the request's Kind: its Fit judges another Kind's device it sees (sees.go)
	usedSlots, usedMem, usedCores := f.used(g, gi)
	memNeed, coresNeed := r.MemoryOn(g.TotalMem), r.CoresOn(g.TotalCores)
	for _, row := range kr.early {
		if c, ok := f.familyCheck(row, n, gi, r, usedSlots, usedMem, usedCores, memNeed, coresNeed); ok && stop(&c) {
			*out = c
			return
		}
	}
	if failed := !f.ignoreFilters && !f.sels[r.Kind].uuidMatches(g.UUID); failed || want {
		c := Check{Gate: "uuid"}
		if failed {
			c.Code, c.Detail = CardUUIDMismatch, "excluded by "+f.sels[r.Kind].uuidFilterName(g.UUID)
		}
		if stop(&c) {
			*out = c
			return
		}
	}
	if failed := g.Slots <= usedSlots && !kr.unslotted; failed || want {
		c := slotsCheck(g, usedSlots)
		if stop(failIf(&c, failed, CardTimeSlicingExhausted, "")) {
			*out = c
			return
		}
	}
	if failed := f.req.Mutex && usedSlots > 0; failed || want {
		c := Check{Gate: "mutex", Have: int64(usedSlots), Unit: "slots used"}
		if stop(failIf(&c, failed, ExclusiveDeviceAllocateConflict, "the mutex policy needs an unused GPU")) {
			*out = c
			return
		}
	}
	// A type with the quota row checks the namespace quota in its Fit (NVIDIA: pkg/device/nvidia/device.go;
	// Cambricon: pkg/device/cambricon/device.go fitQuota); the other types' do not.
	if kr.quota && (want || f.limitedByQuota(r.Kind)) {
		if c, ok := f.quotaCheck(r.Kind, podMem+memNeed, podCores+coresNeed); !ok || want {
			if stop(&c) {
				*out = c
				return
			}
		}
	}
	if failed := g.TotalMem-usedMem < memNeed; failed || want {
		c := memoryCheck(g, usedMem, memNeed)
		if stop(failIf(&c, failed, CardInsufficientMemory, "")) {
			*out = c
			return
		}
	}
	totalCores := g.TotalCores
	if r.deviceCores > 0 { // the request's Kind reads every device's cores so (Ascend hami-core: 100)
		totalCores = r.deviceCores
	}
	if failed := totalCores-usedCores < coresNeed; failed || want {
		c := Check{Gate: "cores", Need: coresNeed, Have: totalCores - usedCores, Total: totalCores, Unit: "%"}
		if stop(failIf(&c, failed, CardInsufficientCore, "")) {
			*out = c
			return
		}
	}
	if failed := totalCores == 100 && coresNeed == 100 && usedSlots > 0; failed || want {
		c := Check{Gate: "exclusive", Need: coresNeed, Have: int64(usedSlots), Unit: "slots used"}
		if stop(failIf(&c, failed, ExclusiveDeviceAllocateConflict, "a whole-GPU request (100% cores) needs an unused GPU")) {
			*out = c
			return
		}
	}
	if failed := coresNeed == 0 && totalCores > 0 && usedCores >= totalCores; failed || want {
		c := Check{Gate: "compute", Need: coresNeed, Have: totalCores - usedCores, Total: totalCores, Unit: "%"}
		if stop(failIf(&c, failed, CardComputeUnitsExhausted, "every core is allocated; a 0-core request would starve")) {
			*out = c
			return
		}
	}
	for _, row := range kr.late {
		if c, ok := f.familyCheck(row, n, gi, r, usedSlots, usedMem, usedCores, memNeed, coresNeed); ok && stop(&c) {
			*out = c
			return
		}
	}
	if g.Mode == ModeMIG && kr.mig {
		// HAMi's Fit says CardMigTopologyInfeasible for every MIG GPU its CustomFilterRule rejects
		// (pkg/device/nvidia/device.go:812-821 at v2.10.0): no profiles, none large enough, or no free placement.
		c := Check{Gate: "mig", Need: memNeed, Unit: "MiB"}
		if len(g.MigProfiles) == 0 {
			c.Code, c.Detail = CardMigTopologyInfeasible, migNoProfile
		} else if _, _, ok := f.migChoice(g, gi, memNeed); !ok {
			c.Code, c.Detail = CardMigTopologyInfeasible, "no MIG profile with enough memory has a free placement"
			if !f.anyProfileHolds(g, memNeed) {
				c.Detail = migNoProfile
			}
		}
		if stop(&c) {
			*out = c
			return
		}
	}
	*out = Check{Gate: "fit"}
}

// migNoProfile is the detail of a MIG GPU none of whose profiles has the memory asked for.
const migNoProfile = "no MIG profile has enough memory"

// failIf marks c failed with code and detail when failed is true, and returns it.
func failIf(c *Check, failed bool, code Code, detail string) *Check {
	if failed {
		c.Code = code
		if detail != "" {
			c.Detail = detail
		}
	}
	return c
}

// healthDetail is the health gate's detail for an unhealthy device.
const healthDetail = "registered unhealthy"

// slotsCheck is the slots gate's numbers for g with usedSlots taken; memoryCheck the memory gate's with
// usedMem taken and need asked for (the code is the gate's to add).
func slotsCheck(g *GPU, usedSlots int32) Check {
	return Check{Gate: "slots", Need: 1, Have: max(int64(g.Slots-usedSlots), 0), Total: int64(g.Slots), Unit: "slots"}
}

func memoryCheck(g *GPU, usedMem, need int64) Check {
	return Check{Gate: "memory", Need: need, Have: g.TotalMem - usedMem, Total: g.TotalMem, Unit: "MiB"}
}

// allChecks is every gate's result for one GPU, for detailed explanations.
func (f *fitter) allChecks(n *Node, gi int, r *ContainerRequest, podMem, podCores int64) []Check {
	out := make([]Check, 0, 14)
	f.checkGPU(n, gi, r, podMem, podCores, &out)
	return out
}

// quotaCheck is the quota gate (docs/engine.md, gate 8) of a type with the quota row: it compares the pod's
// memory and cores so far with what the namespace has left of the type's keys, memory first.
func (f *fitter) quotaCheck(kind int, memTotal, coresTotal int64) (Check, bool) {
	if kind >= len(f.quota.kind) {
		return Check{Gate: "quota"}, true
	}
	k := &f.c.kinds[kind]
	return f.quotaRefsCheck(&f.quota.kind[kind], k.Memory, k.Cores, memTotal, coresTotal)
}

// limitedByQuota reports whether a namespace quota limits any key of the type's quota row: when none does, the
// gate passes whatever the numbers, and the walk over every GPU skips it.
func (f *fitter) limitedByQuota(kind int) bool {
	return kind < len(f.quota.kind) && (f.quota.kind[kind][0].which != refNone || f.quota.kind[kind][1].which != refNone)
}

// configQuotaCheck is the quota gate on the configured memory and cores keys (Config.ResourceMemoryName and
// ResourceCoreName), for usage counted on them (PodAllocation.QuotaMem, QuotaCores).
func (f *fitter) configQuotaCheck(memTotal, coresTotal int64) (Check, bool) {
	refs := [2]quotaRef{{which: refMem}, {which: refCores}}
	return f.quotaRefsCheck(&refs, f.c.cfg.ResourceMemoryName, f.c.cfg.ResourceCoreName, memTotal, coresTotal)
}

func (f *fitter) quotaRefsCheck(refs *[2]quotaRef, memRes, coresRes string, memTotal, coresTotal int64) (Check, bool) {
	if refs[0].which != refNone {
		if limit, used, source, unit, ok := f.quota.line(refs[0]); ok && used+memTotal > limit {
			return Check{Gate: "quota", Code: ResourceQuotaNotFit, Need: memTotal, Have: max(limit-used, 0), Total: limit, Unit: unit,
				Detail: "limits." + memRes + " in ResourceQuota " + source}, false
		}
	}
	if refs[1].which != refNone {
		if limit, used, source, unit, ok := f.quota.line(refs[1]); ok && used+coresTotal > limit {
			return Check{Gate: "quota", Code: ResourceQuotaNotFit, Need: coresTotal, Have: max(limit-used, 0), Total: limit, Unit: unit,
				Detail: "limits." + coresRes + " in ResourceQuota " + source}, false
		}
	}
	return Check{Gate: "quota"}, true
}

func (f *fitter) typeMatches(g *GPU) bool { return f.sels[g.Kind].typeMatches(g.Type, g.Mode) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func itoa(i int) string { return strconv.Itoa(i) }

// coreMask chooses n of a device's total cores for a type whose device list records cores as a bit mask
// (AWS Neuron): the lowest bits not in held, as HAMi's addCoreUsage does. When held leaves fewer than n (masks
// of counted pods that overlap), the lowest held bits make up the rest. 0 when the device has more cores than
// a mask holds.
func coreMask(held, total, n int64) int64 {
	if total <= 0 || total > 62 || n <= 0 {
		return 0
	}
	var out int64
	for pass := 0; pass < 2; pass++ {
		for bit := int64(0); bit < total && n > 0; bit++ {
			b := int64(1) << bit
			if out&b == 0 && (pass == 1 || held&b == 0) {
				out |= b
				n--
			}
		}
	}
	return out
}

// fitFailure is the family's own node reason for container ci that placed nothing (Kind.FitFailure), as
// HAMi's GenReason writes it over the Kind's devices, with the node's example for the explanation; "" when
// the Kind has none.
func (f *fitter) fitFailure(n *Node, ci int, statuses []GPUStatus) (Code, string, *Check) {
	r := &f.req.Containers[ci]
	kind := &f.c.kinds[r.Kind]
	if kind.Pair > 1 && r.Count > 1 {
		code, text := pairFailure(n, r, kind.Pair, statuses)
		return code, text, nil
	}
	if kind.FitFailure == nil {
		return "", "", nil
	}
	var first []device.Failure
	passed := 0
	for gi := range n.GPUs {
		if !n.judges(r.Kind, gi) {
			continue
		}
		res := statuses[gi].Result
		refused := !f.sels[r.Kind].uuidMatches(n.GPUs[gi].UUID)
		if !res.Failed() {
			passed++
			first = append(first, device.Failure{UUIDRefused: refused})
			continue
		}
		first = append(first, device.Failure{Gate: res.Gate, Code: string(res.Code), UUIDRefused: refused})
	}
	code, count := kind.FitFailure(first, r.Count)
	if code == "" {
		return "", "", nil
	}
	chk := &Check{Gate: "interconnect", Code: Code(code), Need: int64(r.Count), Have: int64(passed), Unit: f.c.units[r.Kind],
		Detail: itoa(passed) + " fit, but no " + itoa(r.Count) + " of them " + kind.SelectRule}
	if Code(code) != NumaNotFit {
		chk = nil // the devices' own checks say it
	}
	return Code(code), itoa(count) + "/" + itoa(len(first)) + " " + code, chk
}
