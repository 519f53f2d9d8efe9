package tui

import (
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// world is the engine model and the objects it was built from: a mirror of the cluster's objects, one table
// entry per kind (kinds), changed only by apply (one caller at a time, under mu). data.go makes the UI's Data
// from it; queries.go answers the questions the UI asks of it.
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
	pods   *podStore                        // the snapshot's records and the changes since: no pod object held for every pod
	quotas map[string]*corev1.ResourceQuota // namespace/name
	cms    map[string]*corev1.ConfigMap     // namespace/name
	events []*corev1.Event                  // from a snapshot file; live events are read on demand
	// leases are the schedulers' leader Leases of a snapshot (leasesRead: it could tell), for "why it may
	// still be Pending".
	leases     []*coordinationv1.Lease
	leasesRead bool
	// Volcano's objects: queues by name, PodGroups by namespace/name; volcano is the snapshot's Volcano.
	queues    map[string]*unstructured.Unstructured
	podGroups map[string]*unstructured.Unstructured
	volcano   bool
	// kinds mirrors each kind of object, indexed by kindNode ... kindPodGroup.
	kinds []mirror

	views map[string]*NodeView
	// waiting are the views made since the pods last changed whose pod objects are not looked up yet
	// (NodeView.podObjects); apply looks them up before it changes the store.
	waiting []*NodeView
	pending map[string]*PendingView
	gen     uint64

	// kubeNodes and kubeByNode feed the Kubernetes node checks; rebuilt when a node or pod changed.
	kubeNodes  []*corev1.Node
	kubeByNode *podsByNode
	kubeDirty  bool
	// hamiVersion is Options.HAMiVersion, applied at every build.
	hamiVersion string
}

func newWorld(s *snapshot.Snapshot, cmName, context string, live bool, now func() time.Time) *world {
	w := &world{cmName: cmName, source: s.Source, context: context, live: live, now: now,
		nodes: make(map[string]*corev1.Node, len(s.Nodes)), pods: newPodStore(s.Pods),
		quotas: map[string]*corev1.ResourceQuota{}, cms: map[string]*corev1.ConfigMap{}, events: s.Events,
		leases: s.Leases, leasesRead: s.LeasesRead,
		queues: map[string]*unstructured.Unstructured{}, podGroups: map[string]*unstructured.Unstructured{}, volcano: s.Volcano}
	w.kinds = w.mirrors()
	for _, n := range s.Nodes {
		w.nodes[n.Name] = n
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
		s = &snapshot.Snapshot{Volcano: w.volcano, ConfigMaps: values(w.cms), Nodes: values(w.nodes), Pods: snapshot.PodsOf(w.pods.all()...),
			Quotas: values(w.quotas), Queues: values(w.queues), PodGroups: values(w.podGroups)}
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
	w.lookUpWaiting() // views of an earlier build may have been handed out (apply looked them up already)
	w.views = make(map[string]*NodeView, len(w.nodes))
	for _, name := range w.c.NodeNames() {
		w.views[name] = w.nodeView(name)
	}
	w.pending = w.pendingOf(&s.Pods)
}

// pendingOf are the waiting GPU pods of the snapshot's pods, in its order, each built only when unbound (a
// bound pod does not wait: query.Waiting), held only when it waits; of a pod listed twice, the copy the
// store keeps (the last).
func (w *world) pendingOf(pods *snapshot.Pods) map[string]*PendingView {
	out := map[string]*PendingView{}
	waiting := map[podKey]bool{} // keys of out, for a later copy to take its place
	read := pods.Reader()
	for i := range pods.Len() {
		ns, name, node := pods.Meta(i)
		var pv *PendingView
		if node == "" {
			pv = w.pendingView(read(i))
		}
		k := podKey{ns, name}
		if pv == nil {
			if len(waiting) > 0 && waiting[k] {
				delete(waiting, k)
				delete(out, ns+"/"+name)
			}
			continue
		}
		pv.Pod = pods.At(i) // the reader's object is reused: the view holds one of its own
		waiting[k] = true
		out[pv.Key()] = pv
	}
	return out
}

func values[T any](m map[string]T) []T {
	out := make([]T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// Object kinds of a change: the index of their mirror in world.kinds.
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

// resync is, per kind, every key an informer holds after its first list: objects of the first snapshot that
// are gone by then are removed. A kind that is not watched has no entry.
type resync map[int]map[string]bool

// applying is what one apply has to redo once every change is in.
type applying struct {
	touched map[string]bool // nodes whose view is rebuilt
	full    bool            // the engine model is rebuilt (HAMi's device ConfigMap changed)
}

// allocNode marks the node a pod's allocation is counted on, if any.
func (a *applying) allocNode(w *world, key string) {
	ns, name, _ := strings.Cut(key, "/")
	if p := w.c.Pod(ns, name); p != nil {
		a.touched[p.Node] = true
	}
}

// mirror keeps one kind of object and the engine model in step with its changes.
type mirror interface {
	apply(w *world, key string, obj any, a *applying)
	keys() []string
}

// objects is the mirror of one kind: the objects by key, and what the engine model does when one changes or
// goes. An object whose resourceVersion did not change (the informers' first list repeats the snapshot) is only
// swapped for the informer's copy, so the snapshot's can be freed.
type objects[T any] struct {
	m       map[string]T
	version func(T) string // nil: every update counts as a change
	changed func(w *world, key string, obj T, a *applying)
	kept    func(w *world, key string, obj T) // an update with the same version; may be nil
	removed func(w *world, key string, a *applying)
}

func (o *objects[T]) apply(w *world, key string, obj any, a *applying) {
	if obj == nil {
		if _, ok := o.m[key]; ok {
			delete(o.m, key)
			o.removed(w, key, a)
		}
		return
	}
	t, ok := obj.(T)
	if !ok {
		return // not an object of this kind: ignored, as nothing can be made of it
	}
	old, had := o.m[key]
	o.m[key] = t
	if had && o.version != nil {
		if v := o.version(old); v != "" && v == o.version(t) {
			if o.kept != nil {
				o.kept(w, key, t)
			}
			return
		}
	}
	o.changed(w, key, t, a)
}

func (o *objects[T]) keys() []string {
	out := make([]string, 0, len(o.m))
	for k := range o.m {
		out = append(out, k)
	}
	return out
}

// mirrors is the table of kinds, indexed by kindNode ... kindPodGroup.
func (w *world) mirrors() []mirror {
	split := func(key string) (string, string) { ns, name, _ := strings.Cut(key, "/"); return ns, name }
	unstructuredVersion := func(u *unstructured.Unstructured) string { return u.GetResourceVersion() }
	volcano := func(w *world) {
		w.volcano = true
		w.c.SetVolcano(true)
	}
	return []mirror{
		kindNode: &objects[*corev1.Node]{m: w.nodes, version: func(n *corev1.Node) string { return n.ResourceVersion },
			changed: func(w *world, key string, n *corev1.Node, a *applying) {
				w.c.SetNode(n)
				a.touched[key] = true
			},
			removed: func(w *world, key string, a *applying) {
				w.c.RemoveNode(key)
				a.touched[key] = true
			}},
		kindPod: podMirror{w.pods},
		kindQuota: &objects[*corev1.ResourceQuota]{m: w.quotas, version: func(q *corev1.ResourceQuota) string { return q.ResourceVersion },
			changed: func(w *world, _ string, q *corev1.ResourceQuota, _ *applying) { w.c.SetQuota(q) },
			removed: func(w *world, key string, _ *applying) { w.c.RemoveQuota(split(key)) }},
		kindConfigMap: &objects[*corev1.ConfigMap]{m: w.cms,
			changed: func(_ *world, _ string, _ *corev1.ConfigMap, a *applying) { a.full = true },
			removed: func(_ *world, _ string, a *applying) { a.full = true }},
		kindQueue: &objects[*unstructured.Unstructured]{m: w.queues, version: unstructuredVersion,
			changed: func(w *world, _ string, u *unstructured.Unstructured, _ *applying) {
				volcano(w)
				w.c.SetQueue(snapshot.EngineQueue(u))
			},
			kept:    func(w *world, _ string, _ *unstructured.Unstructured) { volcano(w) },
			removed: func(w *world, key string, _ *applying) { w.c.RemoveQueue(key) }},
		kindPodGroup: &objects[*unstructured.Unstructured]{m: w.podGroups, version: unstructuredVersion,
			changed: func(w *world, key string, u *unstructured.Unstructured, _ *applying) {
				w.c.SetPodGroup(snapshot.EnginePodGroup(u))
				w.requeue(split(key))
			},
			removed: func(w *world, key string, _ *applying) {
				ns, name := split(key)
				w.c.RemovePodGroup(ns, name)
				w.requeue(ns, name)
			}},
	}
}

// apply brings the engine model up to date with the changes and returns the new Data.
func (w *world) apply(changes []change, rs resync) *Data {
	w.mu.Lock()
	defer w.mu.Unlock()
	changes = append(changes, w.gone(rs)...)
	w.lookUpWaiting() // the views handed out keep the pod objects of their moment
	a := &applying{touched: map[string]bool{}}
	w.kubeDirty = w.kubeDirty || len(changes) > 0
	for _, ch := range changes {
		if ch.kind >= 0 && ch.kind < len(w.kinds) {
			w.kinds[ch.kind].apply(w, ch.key, ch.obj, a)
		}
	}
	if rs[kindPod] != nil {
		w.pods.settle()
	}
	if a.full {
		w.build(nil)
	} else {
		for name := range a.touched {
			if v := w.nodeView(name); v != nil {
				w.views[name] = v
			} else {
				delete(w.views, name)
			}
		}
	}
	return w.dataLocked()
}

// gone lists deletions for the objects of the resynced kinds that the informers do not hold.
func (w *world) gone(rs resync) []change {
	var out []change
	for kind, m := range w.kinds { // in kind order: nodes before their pods, as the informers list them
		held, ok := rs[kind]
		if !ok || held == nil {
			continue
		}
		for _, k := range m.keys() {
			if !held[k] {
				out = append(out, change{kind: kind, key: k})
			}
		}
	}
	return out
}

// podMirror is the mirror of pods, kept in the world's podStore: the snapshot's pods stay records. An update
// with the same resourceVersion only swaps the pod for the informer's copy, as objects' do.
type podMirror struct{ s *podStore }

func (m podMirror) apply(w *world, key string, obj any, a *applying) {
	k := splitKey(key)
	if obj == nil {
		if m.s.has(k) {
			m.s.set(k, nil)
			a.allocNode(w, key)
			w.c.RemovePod(k.ns, k.name)
			w.updatePending(key, nil)
		}
		return
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return // not a pod: ignored, as nothing can be made of it
	}
	old := m.s.get(k)
	m.s.set(k, p)
	if old != nil && old.ResourceVersion != "" && old.ResourceVersion == p.ResourceVersion {
		if pv := w.pending[key]; pv != nil {
			cp := *pv // the old one belongs to Data already handed out
			cp.Pod = p
			w.pending[key] = &cp
		}
		return
	}
	a.allocNode(w, key)
	w.c.SetPod(p)
	a.allocNode(w, key)
	w.updatePending(key, p)
}

func (m podMirror) keys() []string { return m.s.keys() }
