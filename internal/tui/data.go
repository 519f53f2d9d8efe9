package tui

import (
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/render"
)

// Data is one state of the cluster as the UI shows it. Nothing in it changes after it is built, so the UI
// can keep it while the world moves on.
type Data struct {
	Gen       uint64
	Source    string // "file demo-cluster.yaml (embedded)", "cluster https://..."
	Context   string // kubeconfig context, when live
	Live      bool
	Updated   time.Time
	Config    engine.Config
	ConfigErr string
	Nodes     []*NodeView    // sorted by name
	Quotas    []*QuotaView   // sorted by namespace
	Pending   []*PendingView // sorted by namespace/name
	// Volcano is true when the cluster runs Volcano (its Queue CRD exists, or queues were read); Queues are
	// its queues' card quotas, by name.
	Volcano  bool
	Queues   []*QueueView
	Problems []engine.Problem
	Totals   Totals
}

// Totals are the cluster-wide sums of the header (query.Totals) and the pending GPU pods.
type Totals struct {
	query.Totals
	Pending int
}

// NodeView is a node with a private copy of its GPUs, the pods counted on it and the sums over its GPUs.
type NodeView struct {
	Name   string
	Node   engine.Node
	Pods   []*engine.PodAllocation
	Health string
	query.NodeSums

	// objects are what Running reads of the pod objects of Pods (not found where the world has none); running
	// is made from them once, when first asked for. They are looked up when first needed (podObjects), not
	// for the first frame: lookup is the world to look them up in until then. Only these few fields are kept:
	// a pod object is built for the lookup and dropped (a file's pods stay records).
	objMu   sync.Mutex
	lookup  *world
	objects []podFacts
	once    sync.Once
	running []*PodView
}

// podFacts are what the Pods view shows of a pod object beside its allocation.
type podFacts struct {
	found     bool
	created   time.Time
	phase     corev1.PodPhase
	preempted bool
}

func factsOf(p *corev1.Pod) podFacts {
	if p == nil {
		return podFacts{}
	}
	return podFacts{found: true, created: p.CreationTimestamp.Time, phase: p.Status.Phase, preempted: preempted(p)}
}

// Running are the node's GPU pods as the Pods view lists them, in Pods' order. Only the Pods view and a pod's
// page show them: they are made at the first call, from what the node held when the NodeView was made
// (everything they read is a private copy or an object nothing changes).
func (v *NodeView) Running() []*PodView {
	v.once.Do(func() { v.running = podViews(v, v.podObjects()) })
	return v.running
}

// podObjects are the facts of the pod objects of Pods as the world held them when the view was made. The
// world's pods change only in apply, which first looks up the objects of every view still waiting
// (world.lookUpWaiting); until then the store holds what it held when the view was made. objMu orders a
// lookup here (the UI's goroutine) before apply's changes to the store.
func (v *NodeView) podObjects() []podFacts {
	v.objMu.Lock()
	defer v.objMu.Unlock()
	if w := v.lookup; w != nil {
		v.objects = make([]podFacts, len(v.Pods))
		for i, a := range v.Pods {
			v.objects[i] = factsOf(w.pods.get(podKey{a.Namespace, a.Name}))
		}
		v.lookup = nil
	}
	return v.objects
}

// PodView is a GPU pod counted on a node (running, or bound and starting): what it was given, on which GPUs.
type PodView struct {
	Namespace, Name, Node string
	// State is the pod's status.phase, "Terminating" while it is deleted (it holds its GPUs until it is gone),
	// "Preempted" when a preemption deleted it.
	State   string
	Created time.Time
	Devices []PodDevice
	// Mem and Cores are what it was given, summed over its devices (MiB, percent of a GPU).
	Mem, Cores int64
}

// Key is namespace/name.
func (p *PodView) Key() string { return p.Namespace + "/" + p.Name }

// PodDevice is one container's share of one GPU.
type PodDevice struct {
	Container, UUID, Type string
	Index                 int
	Mem, Cores            int64
}

// QuotaView is a namespace's HAMi-accounted quota beside Kubernetes' ResourceQuota status.
type QuotaView struct {
	Namespace string
	Status    engine.QuotaStatus
	Kube      map[string]string // ResourceQuota status.used by resource name (query.KubeQuotaUsed)
}

// QueueView is a Volcano queue's card quota and use, with the jobs waiting to enter it.
type QueueView struct {
	engine.QueueUsage
	// Missing is true for a queue that does not exist but that waiting jobs name.
	Missing bool
	Jobs    []*JobView
}

// JobView is a PodGroup in phase Pending and the card quota's enqueue check for it.
type JobView struct {
	Key     string // namespace/name
	Enqueue *engine.EnqueueStatus
}

// PendingView is a GPU pod waiting for a node.
type PendingView struct {
	Namespace, Name string
	Pod             *corev1.Pod
	GPUs            int
	Created         time.Time
	Queue           string // its Volcano queue, when it names one (directly or through its PodGroup)
}

// Key is namespace/name.
func (p *PendingView) Key() string { return p.Namespace + "/" + p.Name }

func (w *world) nodeView(name string) *NodeView {
	n := w.c.Node(name)
	if n == nil {
		return nil
	}
	v := &NodeView{Name: name, Node: *n, Pods: w.c.PodsOn(name), Health: render.NodeHealth(n), NodeSums: query.SumNode(n)}
	v.Node.GPUs = make([]engine.GPU, len(n.GPUs))
	copy(v.Node.GPUs, n.GPUs)
	for i := range v.Node.GPUs {
		g := &v.Node.GPUs[i]
		g.MigUsed = append(g.MigUsed[:0:0], g.MigUsed...)
	}
	v.lookup = w
	w.waiting = append(w.waiting, v)
	return v
}

// lookUpWaiting looks up the pod objects of every view made since the last change (NodeView.podObjects),
// before apply changes the map of pods. The caller holds w.mu.
func (w *world) lookUpWaiting() {
	for _, v := range w.waiting {
		v.podObjects()
	}
	w.waiting = nil
}

// podViews are the GPU pods counted on a node, with their phase and age from the pod objects. The node's
// pod views and their devices are allocated in one block each.
func podViews(v *NodeView, objects []podFacts) []*PodView {
	devices := 0
	for _, a := range v.Pods {
		for _, c := range a.Containers {
			devices += len(c.Devices)
		}
	}
	views := make([]PodView, len(v.Pods))
	devs := make([]PodDevice, 0, devices)
	out := make([]*PodView, len(v.Pods))
	for i, a := range v.Pods {
		pv := &views[i]
		*pv = PodView{Namespace: a.Namespace, Name: a.Name, Node: v.Name, State: "-"}
		p := objects[i]
		if p.found {
			pv.Created = p.created
			if p.phase != "" {
				pv.State = string(p.phase)
			}
		}
		if a.Terminating {
			pv.State = "Terminating"
			if p.preempted {
				pv.State = "Preempted" // a preemption evicted it for a higher-priority pod; it leaves like any deleted pod
			}
		}
		first := len(devs)
		for _, c := range a.Containers {
			for _, d := range c.Devices {
				pd := PodDevice{Container: c.Name, UUID: d.UUID, Type: d.Type, Index: -1, Mem: d.UsedMem, Cores: d.UsedCores}
				if g := gpuByUUID(v.Node.GPUs, d.UUID); g != nil {
					pd.Index, pd.Type = g.Index, g.Type
				}
				devs = append(devs, pd)
				pv.Mem += d.UsedMem
				pv.Cores += d.UsedCores
			}
		}
		if len(devs) > first {
			pv.Devices = devs[first:len(devs):len(devs)]
		}
		out[i] = pv
	}
	return out
}

// gpuByUUID finds a GPU of the view's copy by a walk: the engine's index of its own node is not part of the
// copy (it changes with the node).
func gpuByUUID(gpus []engine.GPU, uuid string) *engine.GPU {
	for i := range gpus {
		if gpus[i].UUID == uuid {
			return &gpus[i]
		}
	}
	return nil
}

// updatePending keeps the set of waiting GPU pods (query.PendingGPU) current for one pod (nil: deleted).
func (w *world) updatePending(key string, p *corev1.Pod) {
	if pv := w.pendingView(p); pv != nil {
		w.pending[key] = pv
	} else {
		delete(w.pending, key)
	}
}

// pendingView is the pod as the Pending view lists it; nil when it is no waiting GPU pod (or nil).
func (w *world) pendingView(p *corev1.Pod) *PendingView {
	req, ok := query.PendingGPU(p, w.cfg)
	if !ok {
		return nil
	}
	return &PendingView{Namespace: p.Namespace, Name: p.Name, Pod: p, GPUs: req.TotalGPUs(), Created: p.CreationTimestamp.Time,
		Queue: w.podQueue(p)}
}

// podQueue is the Volcano queue a pod names: its queue-name annotation, else its PodGroup's queue.
func (w *world) podQueue(p *corev1.Pod) string {
	if q := p.Annotations[codec.QueueNameAnnotation]; q != "" {
		return q
	}
	if g := p.Annotations[codec.GroupNameAnnotation]; g != "" && w.c != nil {
		if pg := w.c.PodGroup(p.Namespace, g); pg != nil {
			return pg.Queue
		}
	}
	return ""
}

// requeue refreshes the queue of the pending pods of a PodGroup that changed.
func (w *world) requeue(ns, group string) {
	for key, pv := range w.pending {
		if pv.Namespace == ns && pv.Pod.Annotations[codec.GroupNameAnnotation] == group {
			if q := w.podQueue(pv.Pod); q != pv.Queue {
				cp := *pv // the old one belongs to Data already handed out
				cp.Queue = q
				w.pending[key] = &cp
			}
		}
	}
}

// data returns the current Data.
func (w *world) data() *Data {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dataLocked()
}

func (w *world) dataLocked() *Data {
	w.gen++
	d := &Data{Gen: w.gen, Source: w.source, Context: w.context, Live: w.live, Updated: w.now(), Config: w.cfg, ConfigErr: w.cfgErr,
		Problems: w.c.Problems()}
	names := w.c.NodeNames()
	d.Nodes = make([]*NodeView, 0, len(names))
	for _, name := range names {
		v := w.views[name]
		if v == nil {
			continue
		}
		d.Nodes = append(d.Nodes, v)
		d.Totals.Add(&v.Node, v.NodeSums, len(v.Pods))
	}
	kube := query.KubeQuotaUsed(w.quotaList(""))
	for _, ns := range w.c.QuotaNamespaces() {
		d.Quotas = append(d.Quotas, &QuotaView{Namespace: ns, Status: w.c.Quota(ns), Kube: kube[ns]})
	}
	d.Pending = make([]*PendingView, 0, len(w.pending))
	for _, p := range w.pending {
		d.Pending = append(d.Pending, p)
	}
	sort.Slice(d.Pending, func(i, j int) bool {
		if d.Pending[i].Namespace != d.Pending[j].Namespace {
			return d.Pending[i].Namespace < d.Pending[j].Namespace
		}
		return d.Pending[i].Name < d.Pending[j].Name
	})
	d.Totals.Pending = len(d.Pending)
	d.Volcano, d.Queues = w.c.Volcano(), w.queueViewsLocked()
	return d
}

// quotaList is the ResourceQuotas of a namespace ("": of every namespace).
func (w *world) quotaList(ns string) []*corev1.ResourceQuota {
	out := make([]*corev1.ResourceQuota, 0, len(w.quotas))
	for _, q := range w.quotas {
		if ns == "" || q.Namespace == ns {
			out = append(out, q)
		}
	}
	return out
}

// queueViewsLocked is every queue's card rows with the PodGroups waiting to enter it (phase Pending, asking
// for cards); a queue that waiting jobs name but that does not exist gets a row of its own.
func (w *world) queueViewsLocked() []*QueueView {
	usages := w.c.QueueUsages()
	out := make([]*QueueView, 0, len(usages))
	byName := make(map[string]*QueueView, len(usages))
	for _, u := range usages {
		v := &QueueView{QueueUsage: u}
		out = append(out, v)
		byName[u.Queue] = v
	}
	missing := false
	for _, g := range w.c.PodGroups() {
		if g.Phase != "Pending" {
			continue
		}
		e := w.c.Enqueue(g.Namespace, g.Name)
		if e == nil {
			continue
		}
		v := byName[g.Queue]
		if v == nil {
			v = &QueueView{QueueUsage: engine.QueueUsage{Queue: g.Queue}, Missing: true}
			byName[g.Queue] = v
			out = append(out, v)
			missing = true
		}
		v.Jobs = append(v.Jobs, &JobView{Key: g.Key(), Enqueue: e})
	}
	if missing {
		sort.Slice(out, func(i, j int) bool { return out[i].Queue < out[j].Queue })
	}
	return out
}

// preempted: the pod carries the DisruptionTarget condition a preemption sets before deleting it (reason
// PreemptionByScheduler, kube-scheduler's and the extender's alike).
func preempted(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "PreemptionByScheduler" {
			return true
		}
	}
	return false
}
