package tui

import (
	"iter"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// podKey is a pod's namespace and name: its strings are the snapshot's own, so a key costs no allocation.
type podKey struct{ ns, name string }

func splitKey(key string) podKey {
	ns, name, _ := strings.Cut(key, "/")
	return podKey{ns, name}
}

// podStore is the world's pods: the snapshot's as read (compact records from a file, whole pods read live) and
// what apply changed since. A pod object is built only where it is asked for (a pod's page, the rows a view
// draws, a pending pod), never for every pod at once: a file's 50k pods stay records for the life of the UI.
// The pods are changed only by apply (under world.mu); lookups may come from the UI's goroutine in between
// (NodeView.podObjects), hence the index is made under its own once.
type podStore struct {
	base snapshot.Pods
	// over are the pods apply set since the snapshot, by key; a nil pod is one removed.
	over map[podKey]*corev1.Pod

	indexOnce sync.Once
	index     map[podKey]int32 // base position of each key (of a pod listed twice, the last), made when first asked
}

func newPodStore(base snapshot.Pods) *podStore {
	return &podStore{base: base, over: map[podKey]*corev1.Pod{}}
}

func (s *podStore) positions() map[podKey]int32 {
	s.indexOnce.Do(func() {
		s.index = make(map[podKey]int32, s.base.Len())
		for i := range s.base.Len() {
			if ns, name, _ := s.base.Meta(i); name != "" || ns != "" {
				s.index[podKey{ns, name}] = int32(i)
			}
		}
	})
	return s.index
}

// get is the pod namespace/name, an object of its own (a record is built for the caller), or nil.
func (s *podStore) get(k podKey) *corev1.Pod {
	if p, ok := s.over[k]; ok {
		return p
	}
	if i, ok := s.positions()[k]; ok {
		return s.base.At(int(i))
	}
	return nil
}

// has says whether the pod is there, without building it.
func (s *podStore) has(k podKey) bool {
	if p, ok := s.over[k]; ok {
		return p != nil
	}
	_, ok := s.positions()[k]
	return ok
}

// set puts a pod (nil: removes it).
func (s *podStore) set(k podKey, p *corev1.Pod) { s.over[k] = p }

// settle drops the snapshot's pods once every one of them was replaced or removed (the informers' first list
// is in): a live world then holds the informers' objects alone, the snapshot's freed, as before the store.
func (s *podStore) settle() {
	if s.base.Len() == 0 {
		return
	}
	for k := range s.positions() {
		if _, changed := s.over[k]; !changed {
			return
		}
	}
	s.base, s.index = snapshot.Pods{}, map[podKey]int32{}
	for k, p := range s.over {
		if p == nil {
			delete(s.over, k)
		}
	}
}

// each calls f with every pod once (of a pod listed twice, the copy kept), base pods built into one reused
// object (valid until the next call; at is its base position, for At) and changed pods as set (at -1).
func (s *podStore) each(f func(p *corev1.Pod, at int) bool) {
	index := s.positions()
	read := s.base.Reader()
	for i := range s.base.Len() {
		ns, name, _ := s.base.Meta(i)
		k := podKey{ns, name}
		if _, changed := s.over[k]; changed || index[k] != int32(i) {
			continue
		}
		if p := read(i); p != nil && !f(p, i) {
			return
		}
	}
	for _, p := range s.over {
		if p != nil && !f(p, -1) {
			return
		}
	}
}

// scan is each as an iterator of pods read in a pass (query.ExplainInput.Pods).
func (s *podStore) scan() iter.Seq[*corev1.Pod] {
	return func(yield func(*corev1.Pod) bool) {
		s.each(func(p *corev1.Pod, _ int) bool { return yield(p) })
	}
}

// own is the pod each gave, as an object of its own.
func (s *podStore) own(p *corev1.Pod, at int) *corev1.Pod {
	if at < 0 {
		return p
	}
	return s.base.At(at)
}

// all is every pod as an object of its own: for a rebuild of the engine model (HAMi's device ConfigMap
// changed), never for a frame.
func (s *podStore) all() []*corev1.Pod {
	var out []*corev1.Pod
	s.each(func(p *corev1.Pod, at int) bool { out = append(out, s.own(p, at)); return true })
	return out
}

// keys are every pod's namespace/name (a resync compares them with the informers').
func (s *podStore) keys() []string {
	var out []string
	for k := range s.positions() {
		if _, changed := s.over[k]; !changed {
			out = append(out, k.ns+"/"+k.name)
		}
	}
	for k, p := range s.over {
		if p != nil {
			out = append(out, k.ns+"/"+k.name)
		}
	}
	return out
}

// namespaces are every pod's namespace, once each.
func (s *podStore) namespaces() []string {
	seen := map[string]bool{}
	var out []string
	s.eachName(func(k podKey) {
		if !seen[k.ns] {
			seen[k.ns] = true
			out = append(out, k.ns)
		}
	})
	return out
}

// eachName calls f with every pod's key, no pod built.
func (s *podStore) eachName(f func(podKey)) {
	for k := range s.positions() {
		if _, changed := s.over[k]; !changed {
			f(k)
		}
	}
	for k, p := range s.over {
		if p != nil {
			f(k)
		}
	}
}

// podsByNode are the pods bound to each node for the Kubernetes node checks (query.KubeChecks), built one node
// at a time as a snapshot's are (snapshot.Snapshot.PodsOn): positions of base pods, changed pods as set.
type podsByNode struct {
	s     *podStore
	at    map[string][]int32
	over  map[string][]*corev1.Pod
	reads []func(int) *corev1.Pod
	out   []*corev1.Pod
}

func (s *podStore) byNode() *podsByNode {
	b := &podsByNode{s: s, at: map[string][]int32{}, over: map[string][]*corev1.Pod{}}
	s.each(func(p *corev1.Pod, at int) bool {
		if n := p.Spec.NodeName; n != "" {
			if at < 0 {
				b.over[n] = append(b.over[n], p)
			} else {
				b.at[n] = append(b.at[n], int32(at))
			}
		}
		return true
	})
	return b
}

// on is the pods bound to node, valid until the next call.
func (b *podsByNode) on(node string) []*corev1.Pod {
	at := b.at[node]
	for len(b.reads) < len(at) {
		b.reads = append(b.reads, b.s.base.Reader())
	}
	out := b.out[:0]
	for j, i := range at {
		out = append(out, b.reads[j](int(i)))
	}
	out = append(out, b.over[node]...)
	b.out = out
	if len(out) == 0 {
		return nil
	}
	return out
}
