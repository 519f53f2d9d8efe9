package tui

import (
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/engine/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
	"github.com/kubectl-hami/kubectl-hami/internal/render"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
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

// Totals are the cluster-wide sums of the header.
type Totals struct {
	Nodes, GPUs, Pods, Pending int
	Slots, UsedSlots           int64
	Mem, UsedMem               int64
	Cores, UsedCores           int64
}

// NodeView is a node with a private copy of its GPUs and the pods counted on it.
type NodeView struct {
	Name   string
	Node   engine.Node
	Pods   []*engine.PodAllocation
	Health string
	// Sums over the node's GPUs.
	Slots, UsedSlots int64
	Mem, UsedMem     int64
	Cores, UsedCores int64
}

// QuotaView is a namespace's HAMi-accounted quota beside Kubernetes' ResourceQuota status.
type QuotaView struct {
	Namespace string
	Status    engine.QuotaStatus
	Kube      map[string]string // ResourceQuota status.used by resource name
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

// world is the engine model and the objects it was built from. It is changed only by apply (one caller at a
// time, under mu) and read by the evaluations the UI asks for.
type world struct {
	mu      sync.Mutex
	cmName  string
	source  string
	context string
	live    bool
	now     func() time.Time

	cfg    engine.Config
	cfgErr string
	c      *engine.Cluster
	nodes  map[string]*corev1.Node
	pods   map[string]*corev1.Pod
	quotas map[string]*corev1.ResourceQuota // namespace/name
	cms    map[string]*corev1.ConfigMap     // namespace/name
	events []*corev1.Event                  // from a snapshot file; live events are read on demand
	// Volcano's objects: queues by name, PodGroups by namespace/name; volcano is the snapshot's Volcano.
	queues    map[string]*unstructured.Unstructured
	podGroups map[string]*unstructured.Unstructured
	volcano   bool

	views   map[string]*NodeView
	pending map[string]*PendingView
	gen     uint64

	// kubeNodes and kubeByNode feed the Kubernetes node checks; rebuilt when a node or pod changed.
	kubeNodes  []*corev1.Node
	kubeByNode map[string][]*corev1.Pod
	kubeDirty  bool
	// hamiVersion is Options.HAMiVersion, applied at every build.
	hamiVersion string
}

func newWorld(s *snapshot.Snapshot, cmName, context string, live bool, now func() time.Time) *world {
	w := &world{cmName: cmName, source: s.Source, context: context, live: live, now: now,
		nodes: make(map[string]*corev1.Node, len(s.Nodes)), pods: make(map[string]*corev1.Pod, len(s.Pods)),
		quotas: map[string]*corev1.ResourceQuota{}, cms: map[string]*corev1.ConfigMap{}, events: s.Events,
		queues: map[string]*unstructured.Unstructured{}, podGroups: map[string]*unstructured.Unstructured{}, volcano: s.Volcano}
	for _, n := range s.Nodes {
		w.nodes[n.Name] = n
	}
	for _, p := range s.Pods {
		w.pods[p.Namespace+"/"+p.Name] = p
	}
	for _, q := range s.Quotas {
		w.quotas[q.Namespace+"/"+q.Name] = q
	}
	for _, cm := range s.ConfigMaps {
		w.cms[cm.Namespace+"/"+cm.Name] = cm
	}
	for _, q := range s.Queues {
		w.queues[q.GetName()] = q
	}
	for _, g := range s.PodGroups {
		w.podGroups[g.GetNamespace()+"/"+g.GetName()] = g
	}
	// The first build follows the snapshot's order, exactly as the CLI builds its cluster.
	w.build(s)
	return w
}

// build makes the engine model from scratch: at start and when HAMi's device ConfigMap changes.
func (w *world) build(s *snapshot.Snapshot) {
	if s == nil {
		s = &snapshot.Snapshot{}
		for _, cm := range w.cms {
			s.ConfigMaps = append(s.ConfigMaps, cm)
		}
		for _, n := range w.nodes {
			s.Nodes = append(s.Nodes, n)
		}
		for _, p := range w.pods {
			s.Pods = append(s.Pods, p)
		}
		for _, q := range w.quotas {
			s.Quotas = append(s.Quotas, q)
		}
		s.Volcano = w.volcano
		for _, q := range w.queues {
			s.Queues = append(s.Queues, q)
		}
		for _, g := range w.podGroups {
			s.PodGroups = append(s.PodGroups, g)
		}
	}
	cfg, err := s.Config(w.cmName)
	if w.hamiVersion != "" {
		cfg.HAMiVersion = w.hamiVersion
	}
	w.cfg, w.cfgErr = cfg, ""
	if err != nil {
		w.cfgErr = err.Error()
	}
	w.c, _ = s.Cluster(cfg)
	w.kubeDirty = true
	w.views = make(map[string]*NodeView, len(w.nodes))
	for _, name := range w.c.NodeNames() {
		w.views[name] = w.nodeView(name)
	}
	w.pending = map[string]*PendingView{}
	for key, p := range w.pods {
		w.updatePending(key, p)
	}
}

func (w *world) nodeView(name string) *NodeView {
	n := w.c.Node(name)
	if n == nil {
		return nil
	}
	v := &NodeView{Name: name, Node: *n, Pods: w.c.PodsOn(name), Health: render.NodeHealth(n)}
	v.Node.GPUs = make([]engine.GPU, len(n.GPUs))
	copy(v.Node.GPUs, n.GPUs)
	for i := range v.Node.GPUs {
		g := &v.Node.GPUs[i]
		g.MigUsed = append(g.MigUsed[:0:0], g.MigUsed...)
		v.Slots += int64(g.Slots)
		v.UsedSlots += int64(g.UsedSlots)
		v.Mem += g.TotalMem
		v.UsedMem += g.UsedMem
		v.Cores += g.TotalCores
		v.UsedCores += g.UsedCores
	}
	return v
}

// updatePending keeps the set of waiting GPU pods current for one pod (nil: deleted).
func (w *world) updatePending(key string, p *corev1.Pod) {
	if p == nil || p.Spec.NodeName != "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
		delete(w.pending, key)
		return
	}
	req, _ := engine.ParseRequest(p, w.cfg)
	// A pod that names a Volcano card waits on the card quota even when HAMi manages none of its GPUs (a MIG
	// or MPS slice), as in the CLI's pending list.
	if !req.WantsGPU() && p.Annotations[codec.CardNameAnnotation] == "" {
		delete(w.pending, key)
		return
	}
	w.pending[key] = &PendingView{Namespace: p.Namespace, Name: p.Name, Pod: p, GPUs: req.TotalGPUs(), Created: p.CreationTimestamp.Time,
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

// Object kinds of a change.
const (
	kindNode = iota
	kindPod
	kindQuota
	kindConfigMap
	kindQueue    // Volcano Queue (unstructured), keyed by name
	kindPodGroup // Volcano PodGroup (unstructured), keyed by namespace/name
)

// change is the latest state of one object (obj nil: deleted).
type change struct {
	kind int
	key  string // name or namespace/name
	obj  any
}

// resync lists every object an informer holds after its first list: objects of the first snapshot that are
// gone by then are removed.
type resync struct {
	nodes, pods, quotas map[string]bool
	// queues and podGroups are nil when Volcano's objects are not watched.
	queues, podGroups map[string]bool
}

// apply brings the engine model up to date with the changes and returns the new Data.
func (w *world) apply(changes []change, rs *resync) *Data {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rs != nil {
		changes = append(changes, w.gone(rs)...)
	}
	touched := map[string]bool{}
	full := false
	w.kubeDirty = w.kubeDirty || len(changes) > 0
	allocNode := func(ns, name string) {
		if a := w.c.Pod(ns, name); a != nil {
			touched[a.Node] = true
		}
	}
	for _, ch := range changes {
		switch ch.kind {
		case kindNode:
			if ch.obj == nil {
				if _, ok := w.nodes[ch.key]; ok {
					delete(w.nodes, ch.key)
					w.c.RemoveNode(ch.key)
					touched[ch.key] = true
				}
				continue
			}
			n := ch.obj.(*corev1.Node)
			if old := w.nodes[ch.key]; old != nil && old.ResourceVersion != "" && old.ResourceVersion == n.ResourceVersion {
				// Unchanged (the informers' first list repeats the snapshot): keep the informer's copy only,
				// so the snapshot's objects can be freed.
				w.nodes[ch.key] = n
				continue
			}
			w.nodes[ch.key] = n
			w.c.SetNode(n)
			touched[ch.key] = true
		case kindPod:
			ns, name, _ := strings.Cut(ch.key, "/")
			if ch.obj == nil {
				if _, ok := w.pods[ch.key]; ok {
					allocNode(ns, name)
					delete(w.pods, ch.key)
					w.c.RemovePod(ns, name)
					w.updatePending(ch.key, nil)
				}
				continue
			}
			p := ch.obj.(*corev1.Pod)
			if old := w.pods[ch.key]; old != nil && old.ResourceVersion != "" && old.ResourceVersion == p.ResourceVersion {
				w.pods[ch.key] = p
				if pv := w.pending[ch.key]; pv != nil {
					cp := *pv // the old one belongs to Data already handed out
					cp.Pod = p
					w.pending[ch.key] = &cp
				}
				continue
			}
			allocNode(ns, name)
			w.pods[ch.key] = p
			w.c.SetPod(p)
			allocNode(ns, name)
			w.updatePending(ch.key, p)
		case kindQuota:
			ns, name, _ := strings.Cut(ch.key, "/")
			if ch.obj == nil {
				delete(w.quotas, ch.key)
				w.c.RemoveQuota(ns, name)
				continue
			}
			q := ch.obj.(*corev1.ResourceQuota)
			old := w.quotas[ch.key]
			w.quotas[ch.key] = q
			if old == nil || old.ResourceVersion == "" || old.ResourceVersion != q.ResourceVersion {
				w.c.SetQuota(q)
			}
		case kindQueue:
			if ch.obj == nil {
				if _, ok := w.queues[ch.key]; ok {
					delete(w.queues, ch.key)
					w.c.RemoveQueue(ch.key)
				}
				continue
			}
			u, ok := ch.obj.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			old := w.queues[ch.key]
			w.queues[ch.key] = u
			w.volcano = true
			w.c.SetVolcano(true)
			if old == nil || old.GetResourceVersion() == "" || old.GetResourceVersion() != u.GetResourceVersion() {
				w.c.SetQueue(snapshot.EngineQueue(u))
			}
		case kindPodGroup:
			ns, name, _ := strings.Cut(ch.key, "/")
			if ch.obj == nil {
				if _, ok := w.podGroups[ch.key]; ok {
					delete(w.podGroups, ch.key)
					w.c.RemovePodGroup(ns, name)
					w.requeue(ns, name)
				}
				continue
			}
			u, ok := ch.obj.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			old := w.podGroups[ch.key]
			w.podGroups[ch.key] = u
			if old == nil || old.GetResourceVersion() == "" || old.GetResourceVersion() != u.GetResourceVersion() {
				w.c.SetPodGroup(snapshot.EnginePodGroup(u))
				w.requeue(ns, name)
			}
		case kindConfigMap:
			if ch.obj == nil {
				delete(w.cms, ch.key)
			} else {
				w.cms[ch.key] = ch.obj.(*corev1.ConfigMap)
			}
			full = true
		}
	}
	if full {
		w.build(nil)
	} else {
		for name := range touched {
			if v := w.nodeView(name); v != nil {
				w.views[name] = v
			} else {
				delete(w.views, name)
			}
		}
	}
	return w.dataLocked()
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

// gone lists deletions for the objects the informers do not hold.
func (w *world) gone(rs *resync) []change {
	var out []change
	if rs.nodes != nil {
		for k := range w.nodes {
			if !rs.nodes[k] {
				out = append(out, change{kind: kindNode, key: k})
			}
		}
	}
	if rs.pods != nil {
		for k := range w.pods {
			if !rs.pods[k] {
				out = append(out, change{kind: kindPod, key: k})
			}
		}
	}
	if rs.quotas != nil {
		for k := range w.quotas {
			if !rs.quotas[k] {
				out = append(out, change{kind: kindQuota, key: k})
			}
		}
	}
	if rs.queues != nil {
		for k := range w.queues {
			if !rs.queues[k] {
				out = append(out, change{kind: kindQueue, key: k})
			}
		}
	}
	if rs.podGroups != nil {
		for k := range w.podGroups {
			if !rs.podGroups[k] {
				out = append(out, change{kind: kindPodGroup, key: k})
			}
		}
	}
	return out
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
		t := &d.Totals
		t.Nodes++
		t.GPUs += len(v.Node.GPUs)
		t.Pods += len(v.Pods)
		t.Slots += v.Slots
		t.UsedSlots += v.UsedSlots
		t.Mem += v.Mem
		t.UsedMem += v.UsedMem
		t.Cores += v.Cores
		t.UsedCores += v.UsedCores
	}
	kube := map[string]map[string]string{}
	qkeys := make([]string, 0, len(w.quotas))
	for k := range w.quotas {
		qkeys = append(qkeys, k)
	}
	sort.Strings(qkeys) // the first quota (by name) that reports a resource wins, as in the CLI
	for _, k := range qkeys {
		q := w.quotas[k]
		m := kube[q.Namespace]
		if m == nil {
			m = map[string]string{}
			kube[q.Namespace] = m
		}
		for r, v := range q.Status.Used {
			if _, seen := m[string(r)]; !seen {
				m[string(r)] = v.String()
			}
		}
	}
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

// verdicts evaluates the pending pods (those still there) against the current model. The lock is taken
// pod by pod, so that many pending pods never hold an update back.
func (w *world) verdicts(pending []*PendingView) map[string]*engine.Verdict {
	out := make(map[string]*engine.Verdict, len(pending))
	for _, p := range pending {
		w.mu.Lock()
		if pod := w.pods[p.Key()]; pod != nil {
			out[p.Key()] = w.c.Evaluate(pod, engine.EvalOptions{Now: w.now()})
		}
		w.mu.Unlock()
	}
	return out
}

// explain is everything the why-pending explanation of one pod shows, as the CLI computes it.
func (w *world) explain(ns, name string) (render.VerdictInput, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	pod := w.pods[ns+"/"+name]
	if pod == nil {
		return render.VerdictInput{}, false
	}
	now := w.now()
	v := w.c.Evaluate(pod, engine.EvalOptions{Now: now})
	w.c.ProveFixes(pod, v, engine.EvalOptions{Now: now})
	in := render.VerdictInput{Verdict: v, Kube: w.kubeChecksLocked(pod), KubeQuotaUsed: w.kubeUsedLocked(ns), Now: now}
	if !w.live {
		s := snapshot.Snapshot{Events: w.events}
		in.Events = s.EventsFor(ns, name)
	}
	return in, true
}

// kubeChecksLocked runs the standard node constraints kube-scheduler applies before HAMi, sorted by node.
func (w *world) kubeChecksLocked(pod *corev1.Pod) []kubefit.NodeResult {
	if w.kubeDirty {
		w.kubeNodes = w.kubeNodes[:0]
		for _, n := range w.nodes {
			w.kubeNodes = append(w.kubeNodes, n)
		}
		sort.Slice(w.kubeNodes, func(i, j int) bool { return w.kubeNodes[i].Name < w.kubeNodes[j].Name })
		w.kubeByNode = map[string][]*corev1.Pod{}
		for _, p := range w.pods {
			if p.Spec.NodeName != "" {
				w.kubeByNode[p.Spec.NodeName] = append(w.kubeByNode[p.Spec.NodeName], p)
			}
		}
		w.kubeDirty = false
	}
	res := kubefit.Check(pod, w.kubeNodes, w.kubeByNode, w.cfg.ManagedResources())
	sort.SliceStable(res, func(i, j int) bool { return res[i].Node < res[j].Node })
	return res
}

func (w *world) kubeUsedLocked(ns string) map[string]string {
	s := snapshot.Snapshot{}
	for _, q := range w.quotas {
		if q.Namespace == ns {
			s.Quotas = append(s.Quotas, q)
		}
	}
	sort.Slice(s.Quotas, func(i, j int) bool { return s.Quotas[i].Name < s.Quotas[j].Name })
	out := map[string]string{}
	for _, q := range s.Quotas {
		for k, v := range q.Status.Used {
			if _, seen := out[string(k)]; !seen {
				out[string(k)] = kubeInUnit(v.String(), "", true) // as the CLI: 48000, not 48k
			}
		}
	}
	return out
}

// whatIf is the what-if command's answer for a hypothetical pod: webhook changes, verdict, copies that fit.
type whatIfAnswer struct {
	Pod      *corev1.Pod
	Changes  []string
	Refusal  *engine.WebhookRefusal // HAMi's webhook would not create the pod
	Verdict  *engine.Verdict
	Capacity engine.Capacity
	Input    render.VerdictInput
	// Warnings name the pod's namespace, queue or card models that the cluster does not know while a close one
	// is known (names.go).
	Warnings []string
}

// maxCopies bounds the copies counted, as in the what-if command.
const maxCopies = 10000

func (w *world) whatIf(pod *corev1.Pod) whatIfAnswer {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	p, changes := engine.Admit(pod, w.cfg)
	v := w.c.Evaluate(p, engine.EvalOptions{Now: now})
	w.c.ProveFixes(p, v, engine.EvalOptions{Now: now})
	a := whatIfAnswer{Pod: p, Changes: changes, Refusal: w.c.WebhookRefusal(p), Verdict: v, Warnings: w.nameWarningsLocked(p)}
	if !v.NoGPURequest {
		a.Capacity = w.c.Capacity(p, maxCopies)
	}
	a.Input = render.VerdictInput{Verdict: v, Kube: w.kubeChecksLocked(p), KubeQuotaUsed: w.kubeUsedLocked(p.Namespace), Now: now}
	return a
}

// config is the engine configuration in use.
func (w *world) config() engine.Config {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cfg
}
