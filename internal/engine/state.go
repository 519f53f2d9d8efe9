package engine

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
	"github.com/kubectl-hami/kubectl-hami/internal/device/nvidia"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
)

// GPU is one physical GPU with its registered capacity and what counted pods use of it.
type GPU struct {
	UUID     string `json:"uuid"`
	Index    int    `json:"index"`
	Type     string `json:"type"`
	Numa     int    `json:"numa"`
	Mode     string `json:"mode"`
	Healthy  bool   `json:"healthy"`
	Cordoned bool   `json:"cordoned,omitempty"`
	// Kind is the device type's index in Config.Kinds (0: NVIDIA), beside the flags so the struct does not grow.
	Kind        uint8                `json:"-"`
	Slots       int32                `json:"slots"`
	TotalMem    int64                `json:"totalMemMiB"`
	TotalCores  int64                `json:"totalCores"`
	MigProfiles []codec.MigProfile   `json:"migProfiles,omitempty"`
	UsedSlots   int32                `json:"usedSlots"`
	UsedMem     int64                `json:"usedMemMiB"`
	UsedCores   int64                `json:"usedCores"`
	MigUsed     []codec.MigPlacement `json:"migUsed,omitempty"`
	// Device is the device type of a device that is not an NVIDIA GPU (HAMi's CommonWord: "DCU",
	// "Ascend910B3"); empty for NVIDIA.
	Device string `json:"device,omitempty"`

	// qos counts, per QoS policy of its Kind (Kind.QosPolicies), the counted pods sharing the GPU (taking less
	// than its whole cores); a pod of another policy does not share it (MetaX sGPU).
	qos [device.MaxQosPolicies]int32
	// registered holds what a few families register beside HAMi's common fields; nil for most devices, so
	// that the GPU stays small for the walks over every device (one pointer, not a string and a pointer).
	registered *registeredExtra
	// coreBits are the cores counted pods hold, as a bit mask, for a type whose device list records one
	// (device.Kind.CoresMask: AWS Neuron); the bind gives the lowest others.
	coreBits int64

	// reg is the GPU's position in hami.io/node-nvidia-register: HAMi's device list starts in this order,
	// and its stable sort keeps it among equal GPUs.
	reg int
}

// FreeMem is the memory not yet given to counted pods (never negative on display).
func (g *GPU) FreeMem() int64 { return max(g.TotalMem-g.UsedMem, 0) }

// Node is a node as HAMi sees it: its registered GPUs and their usage.
type Node struct {
	Name string `json:"name"`
	// Registered is false when hami.io/node-nvidia-register is missing or unreadable; RegisterError says why.
	Registered    bool   `json:"registered"`
	RegisterError string `json:"registerError,omitempty"`
	// UnreadableBy is the HAMi version ("v2.10") that cannot read the node's hami.io/node-nvidia-register
	// form (--hami-version): the node is unregistered for it, as for HAMi, though its GPUs and their pods are
	// still read and shown.
	UnreadableBy string `json:"unreadableBy,omitempty"`
	// Unschedulable is spec.unschedulable (kubectl cordon: SchedulingDisabled); NotReady says the node's Ready
	// condition is not True ("False" or "Unknown"; empty when Ready or not reported); Taints are its NoSchedule
	// and NoExecute taints as key=value:Effect, the unschedulable taint of a cordon left out.
	Unschedulable bool     `json:"unschedulable,omitempty"`
	NotReady      string   `json:"notReady,omitempty"`
	Taints        []string `json:"taints,omitempty"`
	// AllocatableGPUs is status.allocatable of the count resource; -1 when the node does not list it.
	AllocatableGPUs int64                     `json:"allocatableGPUs"`
	Handshake       codec.Handshake           `json:"handshake"`
	Lock            *codec.NodeLock           `json:"lock,omitempty"`
	GPUs            []GPU                     `json:"gpus"`
	Pairs           map[string]map[string]int `json:"pairs,omitempty"`
	// CardProduct and Cards are the node's card models as Volcano's card quota names them; CardSlots is the
	// allocatable split-count figure the quota would wrongly count as cards on a HAMi node (0 when none).
	CardProduct string     `json:"cardProduct,omitempty"`
	Cards       []NodeCard `json:"cards,omitempty"`
	CardSlots   int64      `json:"cardSlots,omitempty"`

	uuids     uuidIndex         // finds a GPU by UUID (uuidindex.go)
	kq        kubefit.Quick     // kube-scheduler's view of the node for the common case (kubeGate.passes)
	kn        *kubefit.Node     // the node object as kube-scheduler's checks read it (kq's source)
	pos       int               // index in Cluster.nodeList
	kindCount []int             // devices per Config.Kinds index
	regOrder  []int             // GPU positions in registration order (GPU.reg), where every walk starts
	judged    [][]bool          // per Kind, the GPUs its requests are judged on when not its own (sees.go); nil mostly
	annos     map[string]string // the Node's annotations, for the families' node rows (device.Row.NodeCheck)
	facts     *factsCache       // its devices summed up (nodefacts.go), computed when first asked for after a change
}

// DevicesOf is the number of the node's devices of kind k (an index in Config.Kinds).
func (n *Node) DevicesOf(k int) int {
	if k < len(n.kindCount) {
		return n.kindCount[k]
	}
	return 0
}

// GPUByUUID returns the node's GPU with that UUID, or nil.
func (n *Node) GPUByUUID(uuid string) *GPU {
	if i := n.gpuIndex(uuid); i >= 0 {
		return &n.GPUs[i]
	}
	return nil
}

// gpuIndex is the position in n.GPUs of the GPU with that UUID, -1 when none.
func (n *Node) gpuIndex(uuid string) int { return n.uuids.find(uuid) }

// clone copies the node deeply enough that usage changes on the copy never reach the original.
func (n *Node) clone() *Node {
	c := *n
	c.facts = new(factsCache) // the copy's usage changes apart from the original's
	c.kindCount = append([]int(nil), n.kindCount...)
	c.GPUs = make([]GPU, len(n.GPUs))
	copy(c.GPUs, n.GPUs)
	for i := range c.GPUs {
		c.GPUs[i].MigUsed = append([]codec.MigPlacement(nil), n.GPUs[i].MigUsed...)
	}
	return &c
}

// GPUUse is what one pod holds on one GPU after HAMi's init-container collapse.
type GPUUse struct {
	UUID  string `json:"uuid"`
	Slots int32  `json:"slots"`
	Mem   int64  `json:"memMiB"`
	Cores int64  `json:"cores"`
	// mask is the bit mask of the device's cores held, for a type whose device list records one (AWS Neuron).
	mask int64
}

// ContainerAllocation is the GPUs one container was given.
type ContainerAllocation struct {
	Name string `json:"name"`
	Init bool   `json:"init,omitempty"`
	// Kind is the device type's index in Config.Kinds, beside Init so that the allocation, kept for every
	// counted pod, does not grow.
	Kind    int32                   `json:"-"`
	Devices []codec.ContainerDevice `json:"devices"`
	// Device is the device type when it is not NVIDIA's ("DCU"), read from that type's annotation. A container
	// with devices of two types has one allocation per type.
	Device string `json:"device,omitempty"`
}

// PodAllocation is a counted pod's share of its node's GPUs.
type PodAllocation struct {
	Namespace  string                `json:"namespace"`
	Name       string                `json:"name"`
	Node       string                `json:"node"`
	Containers []ContainerAllocation `json:"containers"`
	Uses       []GPUUse              `json:"uses"`
	QuotaMem   int64                 `json:"quotaMemMiB"`
	QuotaCores int64                 `json:"quotaCores"`
	// Terminating: the pod is being deleted (metadata.deletionTimestamp) and still holds its GPUs until it is
	// gone, as kubectl's STATUS Terminating says.
	Terminating bool `json:"terminating,omitempty"`

	// slot is the allocation's index in its node's list (nodeRecord.pods), beside Terminating in its padding.
	slot int32

	key  string   // namespace/name, the key SetPod built (Key)
	rare *podRare // what few pods have; nil for most, so that the allocation stays small
}

// podRare is what a counted pod's allocation keeps only when the pod has it.
type podRare struct {
	// qos is the pod's QoS policy index by Kind index, for Kinds with policies; absent: none known.
	qos map[int]int
	// listKey is the device-list annotation the allocation was read from when it is not
	// codec.PodAllocatedAnnotation.
	listKey string
	probs   []Problem // problems found reading the pod, before any node was consulted
	// mig is the pod's MIG instances (hami.io/vgpu-devices-allocated's MIG form); vendorQuota what it charges
	// the quota keys of other device types. Both are PodAllocation's Mig and VendorQuota.
	mig         []codec.MigAllocation
	vendorQuota map[string]int64
}

// Mig is the MIG instances the pod holds (HAMi's MIG placements), nil for most pods.
func (p *PodAllocation) Mig() []codec.MigAllocation {
	if p.rare == nil {
		return nil
	}
	return p.rare.mig
}

// VendorQuota is what the pod charges the quota keys of other device types (limits.hygon.com/dcumem ...), by
// resource name; nil for most pods.
func (p *PodAllocation) VendorQuota() map[string]int64 {
	if p.rare == nil {
		return nil
	}
	return p.rare.vendorQuota
}

// setVendorQuota sets VendorQuota; an empty one makes no podRare.
func (p *PodAllocation) setVendorQuota(q map[string]int64) {
	if len(q) == 0 {
		if p.rare != nil {
			p.rare.vendorQuota = nil
		}
		return
	}
	p.rareFields().vendorQuota = q
}

// rareFields is the allocation's podRare, made on first use.
func (p *PodAllocation) rareFields() *podRare {
	if p.rare == nil {
		p.rare = &podRare{}
	}
	return p.rare
}

// annoKey is the device-list annotation the allocation was read from.
func (p *PodAllocation) annoKey() string {
	if p.rare == nil || p.rare.listKey == "" {
		return codec.PodAllocatedAnnotation
	}
	return p.rare.listKey
}

// readProblems are the problems found reading the pod, before any node was consulted.
func (p *PodAllocation) readProblems() []Problem {
	if p.rare == nil {
		return nil
	}
	return p.rare.probs
}

// qosOf is the pod's QoS policy index for Kind k, false when none is known.
func (p *PodAllocation) qosOf(k int) (int, bool) {
	if p.rare == nil {
		return 0, false
	}
	q, ok := p.rare.qos[k]
	return q, ok
}

// Key is namespace/name.
func (p *PodAllocation) Key() string {
	if p.key != "" {
		return p.key
	}
	return p.Namespace + "/" + p.Name
}

// Cluster is the engine's incremental model of a cluster. Adding or removing an object touches only the
// node and namespace it affects. Changes need one writer at a time (callers serialise them); evaluations may
// run concurrently with each other, as the extender's do under its reader lock (see cardcache.go).
type Cluster struct {
	cfg       Config
	kinds     []device.Kind // cfg.Kinds(): NVIDIA first
	units     []string      // per kind, the plural of its word ("GPUs", "NPUs"): a Check's unit
	vkeys     []vendorKey   // the other kinds' quota keys
	listKeys  listKeyIndex  // every kind's device-list annotation keys (kindallocation.go)
	rows      []kindRows    // per kind, its rows compiled (rows.go)
	readyKind int           // the kind with the devices-ready gate (NVIDIA's); -1 when none
	nodes     map[string]*Node
	nodeNames []string // sorted, so every walk over nodes is deterministic
	nodeList  []*Node  // parallel to nodeNames, so walks need no map lookups
	// listShared says an answer keeps nodeList: the next change copies it first (nodelist.go).
	listShared atomic.Bool
	gpuCount   int
	// memSizes counts the cluster's devices by registered memory, so the largest (memoryProblems) is known
	// without a walk over every device at each evaluation; largestMem is that largest.
	memSizes   map[int64]int
	largestMem int64
	pods       map[string]podEntry               // namespace/name -> the pod's allocation and kube tracking (records.go)
	records    map[string]*nodeRecord            // node name -> what the pods on it add (records.go)
	quotas     map[string]map[string]quotaLimits // namespace -> ResourceQuota name -> limits
	nsUsed     map[string]*usage
	problems   map[string][]Problem // object key -> problems found when it was last set
	// Volcano's card quota: queues, PodGroups and the pods that name a card.
	queues    map[string]*Queue
	podGroups map[string]*PodGroup
	cardPods  map[string]*cardPod
	volcano   bool
	cards     cardCache
	kube      kubeWorld
	bulk      *bulkLoad // while SetPods runs (bulk.go)
	// seesByType is, per device type, the Kinds whose Sees rule takes it (a bit per Kind), filled by SetNode.
	seesByType map[string]uint64
	seesKinds  uint64   // the Kinds with a Sees rule, a bit each (set with seesByType)
	seesLast   struct { // the last type sees looked up
		deviceType string
		bits       uint64
	}
	version uint64 // counts changes, so callers can reuse an answer given for the same state
}

// NewCluster returns an empty cluster model.
func NewCluster(cfg Config) *Cluster {
	cfg = cfg.normalized()
	kinds := cfg.Kinds()
	rows := compileRows(kinds)
	return &Cluster{
		cfg:       cfg,
		rows:      rows,
		readyKind: readyKind(rows),
		kinds:     kinds,
		units:     pluralWords(cfg.Kinds()),
		vkeys:     vendorQuotaKeys(cfg.Kinds()),
		listKeys:  listKeys(kinds),
		nodes:     map[string]*Node{},
		memSizes:  map[int64]int{},
		pods:      map[string]podEntry{},
		records:   map[string]*nodeRecord{},
		quotas:    map[string]map[string]quotaLimits{},
		nsUsed:    map[string]*usage{},
		problems:  map[string][]Problem{},
		queues:    map[string]*Queue{},
		podGroups: map[string]*PodGroup{},
		cardPods:  map[string]*cardPod{},
	}
}

// Version changes whenever the cluster does: two evaluations of the same pod at the same version agree.
func (c *Cluster) Version() uint64 { return c.version }

// Config is the configuration the cluster was built with.
func (c *Cluster) Config() Config { return c.cfg }

// Kinds lists the device types the cluster schedules, NVIDIA first (GPU.Kind indexes it). Must not be modified.
func (c *Cluster) Kinds() []device.Kind { return c.kinds }

// KindOf is the device type of a GPU.
func (c *Cluster) KindOf(g *GPU) *device.Kind { return &c.kinds[g.Kind] }

// Node returns the named node, or nil.
func (c *Cluster) Node(name string) *Node { return c.nodes[name] }

// NodeNames lists every node, sorted. The slice must not be modified.
func (c *Cluster) NodeNames() []string { return c.nodeNames }

// Pod returns the counted pod namespace/name, or nil.
func (c *Cluster) Pod(namespace, name string) *PodAllocation { return c.pods[namespace+"/"+name].alloc }

// PodsOn lists the counted pods on a node, sorted by namespace/name.
func (c *Cluster) PodsOn(node string) []*PodAllocation {
	var out []*PodAllocation
	if r := c.records[node]; r != nil {
		out = append(out, r.pods...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// PodCount is len(PodsOn(node)) without the list: the tables count a node's pods for each of thousands of nodes.
func (c *Cluster) PodCount(node string) int {
	if r := c.records[node]; r != nil {
		return len(r.pods)
	}
	return 0
}

// Problems lists every input problem currently known, sorted by object.
func (c *Cluster) Problems() []Problem {
	keys := make([]string, 0, len(c.problems))
	for k := range c.problems {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Problem
	for _, k := range keys {
		out = append(out, c.problems[k]...)
	}
	return out
}

func (c *Cluster) setProblems(key string, p []Problem) {
	if len(p) == 0 {
		delete(c.problems, key)
		return
	}
	c.problems[key] = p
}

// SetNode adds or replaces a node. Its GPUs' usage is rebuilt from the pods already counted on it.
func (c *Cluster) SetNode(n *corev1.Node) []Problem {
	c.version++
	node, probs := c.buildNode(n)
	i := sort.SearchStrings(c.nodeNames, n.Name)
	c.ownNodes()
	if old, ok := c.nodes[n.Name]; ok {
		c.gpuCount -= len(old.GPUs)
		c.countMemSizes(old, -1)
		c.nodeList[i] = node
		node.pos = i
		if !sameCards(old, node) {
			c.invalidateCards()
		}
	} else {
		if len(node.Cards) > 0 {
			c.invalidateCards()
		}
		c.nodeNames = append(c.nodeNames, "")
		copy(c.nodeNames[i+1:], c.nodeNames[i:])
		c.nodeNames[i] = n.Name
		c.nodeList = append(c.nodeList, nil)
		copy(c.nodeList[i+1:], c.nodeList[i:])
		c.nodeList[i] = node
		c.renumber(i)
	}
	c.gpuCount += len(node.GPUs)
	c.countMemSizes(node, +1)
	c.nodes[n.Name] = node
	rec := c.record(n.Name)
	rec.node = node
	c.trackKubeNode(n, node)
	for _, p := range rec.pods {
		// The pod's problems are what reading it found plus what this node's GPUs say about its use.
		c.setProblems("Pod/"+p.Key(), append(append([]Problem(nil), p.readProblems()...), c.applyToNode(node, p, +1)...))
	}
	c.setProblems("Node/"+n.Name, probs)
	return probs
}

// RemoveNode forgets a node; pods bound to it stay counted against their namespace.
func (c *Cluster) RemoveNode(name string) {
	c.version++
	old, ok := c.nodes[name]
	if !ok {
		return
	}
	delete(c.nodes, name)
	delete(c.kube.nodes, name)
	if r := c.records[name]; r != nil {
		r.node = nil
		c.dropIfEmpty(r)
	}
	c.gpuCount -= len(old.GPUs)
	c.countMemSizes(old, -1)
	if len(old.Cards) > 0 {
		c.invalidateCards()
	}
	i := sort.SearchStrings(c.nodeNames, name)
	c.nodeNames = append(c.nodeNames[:i], c.nodeNames[i+1:]...)
	c.ownNodes()
	c.nodeList = append(c.nodeList[:i], c.nodeList[i+1:]...)
	c.renumber(i)
	delete(c.problems, "Node/"+name)
}

// countMemSizes adds (sign +1) or removes (-1) a node's devices in memSizes and keeps largestMem.
func (c *Cluster) countMemSizes(n *Node, sign int) {
	lost := false
	for i := range n.GPUs {
		m := n.GPUs[i].TotalMem
		c.memSizes[m] += sign
		if c.memSizes[m] <= 0 {
			delete(c.memSizes, m)
			lost = lost || m == c.largestMem
		}
		if sign > 0 && m > c.largestMem {
			c.largestMem = m
		}
	}
	if lost { // the last device of the largest size left: the next largest of the few sizes there are
		c.largestMem = 0
		for m := range c.memSizes {
			c.largestMem = max(c.largestMem, m)
		}
	}
}

// renumber sets the position of the nodes from index i on, after an insertion or removal there.
func (c *Cluster) renumber(i int) {
	for j := i; j < len(c.nodeList); j++ {
		c.nodeList[j].pos = j
	}
}

// noNVIDIARegister is the register error of a node without NVIDIA's annotation.
const noNVIDIARegister = nvidia.Unregistered

func (c *Cluster) buildNode(n *corev1.Node) (*Node, []Problem) {
	var probs []Problem
	bad := func(field, format string, args ...any) {
		probs = append(probs, Problem{Kind: "Node", Object: n.Name, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	node := &Node{Name: n.Name, AllocatableGPUs: -1, Unschedulable: n.Spec.Unschedulable, annos: n.Annotations, facts: new(factsCache)}
	for _, t := range n.Spec.Taints {
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && t.Key != corev1.TaintNodeUnschedulable {
			node.Taints = append(node.Taints, t.ToString())
		}
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status != corev1.ConditionTrue {
			node.NotReady = string(cond.Status)
		}
	}
	if q, ok := n.Status.Allocatable[corev1.ResourceName(c.cfg.ResourceCountName)]; ok {
		node.AllocatableGPUs = quantityValue(q)
	}
	annos := n.Annotations
	c.addDevices(n, node, bad)
	// Device type, then index, then UUID, for display; GPU walks start from the registration order (GPU.reg),
	// as HAMi's do.
	// A stable sort's result is the same whatever its algorithm: slices' needs no reflection per node.
	slices.SortStableFunc(node.GPUs, func(a, b GPU) int {
		if a.Kind != b.Kind {
			return cmp.Compare(a.Kind, b.Kind)
		}
		if a.Index != b.Index {
			return cmp.Compare(a.Index, b.Index)
		}
		return strings.Compare(a.UUID, b.UUID)
	})
	node.regOrder = registrationOrder(node.GPUs)
	node.kindCount = make([]int, len(c.kinds))
	node.uuids = newUUIDIndex(node.GPUs)
	for i := range node.GPUs {
		node.kindCount[node.GPUs[i].Kind]++
	}
	node.judged = c.judgedBy(node)
	for _, id := range codec.ParseCordon(annos[codec.NodeCordonAnnotation]) {
		if g := node.GPUByUUID(id); g != nil {
			g.Cordoned = c.rows[g.Kind].cordon // a type whose Fit ignores the annotation places on the device
		} else if node.Registered {
			bad("metadata.annotations["+codec.NodeCordonAnnotation+"]", "cordoned GPU %s is not registered on this node", id)
		}
	}
	if v, ok := annos[codec.NodePairScoreAnnotation]; ok && strings.TrimSpace(v) != "" {
		ps, err := codec.ParsePairScores(v)
		if err != nil {
			bad("metadata.annotations["+codec.NodePairScoreAnnotation+"]", "%v; topology-aware placement treats every pair as unscored", err)
		} else {
			node.Pairs = codec.PairScoreMap(ps)
		}
	}
	if v, ok := annos[codec.NodeHandshakeAnnotation]; ok {
		hs, err := codec.ParseHandshake(v)
		if err != nil {
			bad("metadata.annotations["+codec.NodeHandshakeAnnotation+"]", "%v", err)
		}
		node.Handshake = hs
	}
	node.CardProduct, node.Cards, node.CardSlots = nodeCards(n, len(node.GPUs), c.cfg)
	if v, ok := annos[codec.NodeLockAnnotation]; ok && strings.TrimSpace(v) != "" {
		l, err := codec.ParseNodeLock(v)
		if err != nil {
			bad("metadata.annotations["+codec.NodeLockAnnotation+"]", "%v", err)
		} else {
			node.Lock = &l
		}
	}
	return node, probs
}

// registerVersionProblem says when the configured HAMi version cannot read a register annotation that
// kubectl-hami reads: v2.8 and later read only the JSON form (pkg/device/devices.go), v2.7 and earlier only
// the text forms. "" when it can.
func registerVersionProblem(format string, v HAMiVersion) string {
	switch {
	case (format == codec.RegisterText7 || format == codec.RegisterText9) && v.AtLeast(2, 8):
		return fmt.Sprintf("registered in the %s text form, which HAMi v2.8 and later do not read: HAMi %s's scheduler "+
			"sees this node as unregistered (\"node unregistered\") and places nothing here; kubectl-hami shows it unregistered too", format, v)
	case format == codec.RegisterJSON && !v.AtLeast(2, 8):
		return fmt.Sprintf("registered in the JSON form, which HAMi v2.7 and earlier do not read: HAMi %s's scheduler "+
			"sees this node as unregistered and places nothing here; kubectl-hami shows it unregistered too", v)
	}
	return ""
}

// SetPod adds, updates or removes (when it no longer counts) a pod's usage.
func (c *Cluster) SetPod(pod *corev1.Pod) []Problem {
	c.version++
	key := c.podKey(pod.Namespace, pod.Name)
	c.removePod(key)
	entry := podEntry{kube: c.trackKubePod(pod)}
	alloc, probs := podAllocation(pod, key, c.cfg, c.kinds, &c.listKeys, c.bulk.slab())
	cp, cardProbs := readCardPod(pod)
	probs = append(probs, cardProbs...)
	if cp != nil {
		c.cardPods[key] = cp
		c.trackCardPod(cp, +1)
	}
	if alloc != nil {
		entry.alloc = alloc
		rec := entry.kube.at // mostly the node the pod is bound to: one lookup for both
		if rec == nil || rec.name != alloc.Node {
			rec = c.record(alloc.Node)
		}
		alloc.slot = int32(len(rec.pods))
		rec.pods = append(rec.pods, alloc)
		if !c.nsUsage(alloc.Namespace).charge(alloc.QuotaMem, alloc.QuotaCores) {
			probs = append(probs, Problem{Kind: "Pod", Object: key, Field: "metadata.annotations[" + alloc.annoKey() + "]",
				Message: fmt.Sprintf("%d MiB and %d%% cores would take namespace %s's HAMi usage past %d; the pod is not charged to its quota",
					alloc.QuotaMem, alloc.QuotaCores, alloc.Namespace, maxQuotaUse)})
			// What a pod charges is what was added: removing it, or leaving it out for a re-evaluation, takes back nothing.
			alloc.QuotaMem, alloc.QuotaCores = 0, 0
		}
		if !c.nsUsage(alloc.Namespace).chargeVendor(alloc.VendorQuota()) {
			alloc.setVendorQuota(nil)
		}
		if len(probs) > 0 {
			alloc.rareFields().probs = append([]Problem(nil), probs...)
		}
		if n := rec.node; n != nil {
			probs = append(probs, c.applyToNode(n, alloc, +1)...)
		}
	}
	if entry.alloc != nil || entry.kube.at != nil {
		c.pods[key] = entry
	}
	if len(probs) > 0 { // removePod forgot the old ones
		c.problems["Pod/"+key] = probs
	}
	return probs
}

// RemovePod forgets a pod's usage.
func (c *Cluster) RemovePod(namespace, name string) {
	c.removePod(namespace + "/" + name)
}

// removePod is RemovePod of the pod namespace/name (key).
func (c *Cluster) removePod(key string) {
	c.version++
	if len(c.problems) > 0 {
		// Its problems are filed under "Pod/"+key: looked up without building that string for each pod.
		var buf [80]byte
		if probKey := append(append(buf[:0], "Pod/"...), key...); c.problems[string(probKey)] != nil {
			delete(c.problems, string(probKey))
		}
	}
	if cp := c.cardPods[key]; cp != nil {
		c.trackCardPod(cp, -1)
		delete(c.cardPods, key)
	}
	entry, ok := c.pods[key]
	if !ok {
		return
	}
	delete(c.pods, key)
	c.untrackKubePod(&entry.kube)
	old := entry.alloc
	if old == nil {
		return
	}
	rec := c.records[old.Node]
	c.nsUsage(old.Namespace).uncharge(old.QuotaMem, old.QuotaCores)
	c.nsUsage(old.Namespace).unchargeVendor(old.VendorQuota())
	if n := rec.node; n != nil {
		c.applyToNode(n, old, -1)
	}
	rec.unlist(old)
	c.dropIfEmpty(rec)
}

// applyToNode adds (sign +1) or removes (-1) a pod's usage on its node's GPUs.
func (c *Cluster) applyToNode(n *Node, p *PodAllocation, sign int) []Problem {
	n.facts.forget() // its usage changes
	var probs []Problem
	for _, u := range p.Uses {
		g := n.GPUByUUID(u.UUID)
		if g == nil {
			if sign > 0 {
				probs = append(probs, Problem{Kind: "Pod", Object: p.Key(), Field: "metadata.annotations[" + codec.PodAllocatedAnnotation + "]",
					Message: fmt.Sprintf("GPU %s is not registered on node %s; its usage is not counted", u.UUID, n.Name)})
			}
			continue
		}
		// A use beyond the GPU's registered capacity cannot be real: it is refused rather than added, so
		// a forged or corrupt annotation can neither wrap the GPU's usage nor hold more than the whole GPU.
		// The check reads only this use and the GPU's registration, so adding and removing agree.
		if msg := overCapacity(u, g); msg != "" {
			if sign > 0 {
				probs = append(probs, Problem{Kind: "Pod", Object: p.Key(), Field: "metadata.annotations[" + p.annoKey() + "]",
					Message: fmt.Sprintf("GPU %s on node %s: %s; this use of the GPU is not counted", u.UUID, n.Name, msg)})
			}
			continue
		}
		if q, ok := p.qosOf(int(g.Kind)); ok && u.Cores < 100 {
			g.qos[q] += int32(sign)
		}
		if sign > 0 {
			g.coreBits |= u.mask
		} else {
			g.coreBits &^= u.mask
		}
		g.UsedSlots += int32(sign) * u.Slots
		g.UsedMem += int64(sign) * u.Mem
		g.UsedCores += int64(sign) * u.Cores
	}
	for _, m := range p.Mig() {
		g := n.GPUByUUID(m.GPUUUID)
		if g == nil {
			continue
		}
		if sign > 0 {
			g.MigUsed = append(g.MigUsed, m.Placement)
		} else {
			g.MigUsed = removePlacement(g.MigUsed, m.Placement)
		}
	}
	return probs
}

func removePlacement(list []codec.MigPlacement, p codec.MigPlacement) []codec.MigPlacement {
	for i, q := range list {
		if q == p {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// overCapacity says why one pod's use of a GPU is more than the GPU has registered, or "". A capacity of 0
// (not registered) is not checked.
func overCapacity(u GPUUse, g *GPU) string {
	switch {
	case g.TotalMem > 0 && u.Mem > g.TotalMem:
		return fmt.Sprintf("memory %d MiB is more than the GPU's registered %d MiB", u.Mem, g.TotalMem)
	case g.TotalCores > 0 && u.Cores > g.TotalCores:
		return fmt.Sprintf("cores %d%% are more than the GPU's registered %d%%", u.Cores, g.TotalCores)
	case g.Slots > 0 && u.Slots > g.Slots:
		return fmt.Sprintf("%d slots are more than the GPU's registered %d", u.Slots, g.Slots)
	}
	return ""
}

// registeredExtra is what some families' device plugins register beside HAMi's common device fields.
type registeredExtra struct {
	// qos is the QoS policy the device plugin registers for the GPU (MetaX sGPU's qosPolicy), which the
	// family's qos row reads (device.Dev.RegQos).
	qos string
	// networkID is the device's customInfo.NetworkID (Ascend), nil when none; ScoreNode reads it.
	networkID *int
}

// newRegisteredExtra is nil when the device registers neither field.
func newRegisteredExtra(qos string, networkID *int) *registeredExtra {
	if qos == "" && networkID == nil {
		return nil
	}
	return &registeredExtra{qos: qos, networkID: networkID}
}

// regQos is the QoS policy the device registers, "" when none.
func (g *GPU) regQos() string {
	if g.registered == nil {
		return ""
	}
	return g.registered.qos
}

// networkID is the device's registered NetworkID, nil when none.
func (g *GPU) networkID() *int {
	if g.registered == nil {
		return nil
	}
	return g.registered.networkID
}
