package extender

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/engine/codec"
)

// State is the engine's cluster model shared by every request. Informer events and binds write it; filter and
// prioritize read it. Pods bound here are "assumed": their usage counts at once, before the informer sees the
// annotations, so a concurrent filter never offers the same GPU share twice.
type State struct {
	mu      sync.RWMutex
	cluster *engine.Cluster
	// assumed holds pods this extender bound whose annotated version the informer has not delivered yet.
	assumed map[string]assumption
	synced  bool
}

type assumption struct {
	pod *corev1.Pod
	at  time.Time
}

// assumeTTL bounds how long an assumption outlives a silent informer (a lost watch event).
const assumeTTL = 2 * time.Minute

// NewState returns an empty state with the engine configuration.
func NewState(cfg engine.Config) *State {
	return &State{cluster: engine.NewCluster(cfg), assumed: map[string]assumption{}}
}

// Read runs f with the cluster under a read lock.
func (s *State) Read(f func(c *engine.Cluster)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	f(s.cluster)
}

// Config is the engine configuration in use.
func (s *State) Config() engine.Config {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cluster.Config()
}

// SetNode, RemoveNode, SetQuota and RemoveQuota mirror the informers.
func (s *State) SetNode(n *corev1.Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cluster.SetNode(n)
}

// RemoveNode forgets a node.
func (s *State) RemoveNode(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cluster.RemoveNode(name)
}

// SetQuota records a ResourceQuota.
func (s *State) SetQuota(q *corev1.ResourceQuota) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cluster.SetQuota(q)
}

// RemoveQuota forgets a ResourceQuota.
func (s *State) RemoveQuota(namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cluster.RemoveQuota(namespace, name)
}

// SetPod records a pod seen by the informer. A pod this extender assumed keeps its assumed usage until the
// informer delivers a version carrying the placement (or the assumption expires).
func (s *State) SetPod(p *corev1.Pod, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := p.Namespace + "/" + p.Name
	if a, ok := s.assumed[key]; ok {
		if p.Annotations[codec.PodNodeAnnotation] == "" && p.DeletionTimestamp == nil && now.Sub(a.at) < assumeTTL {
			return // an older view of a pod we just bound
		}
		delete(s.assumed, key)
	}
	s.cluster.SetPod(p)
}

// RemovePod forgets a deleted pod, assumed or not.
func (s *State) RemovePod(namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.assumed, namespace+"/"+name)
	s.cluster.RemovePod(namespace, name)
}

// SetSynced marks the informers' first lists as loaded; until then the extender is not ready.
func (s *State) SetSynced() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.synced = true
}

// Synced reports whether the state reflects the cluster.
func (s *State) Synced() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.synced
}

// Reserve re-evaluates a pod on one node and, when it fits, assumes the placement in the same critical
// section, so two binds racing for the same GPU share cannot both win. It returns the verdict, the pod with
// HAMi's annotations and an undo function (nil when the pod does not fit).
func (s *State) Reserve(pod *corev1.Pod, node string, now time.Time) (*engine.Verdict, *corev1.Pod, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.cluster.Evaluate(pod, engine.EvalOptions{Now: now, Nodes: []string{node}})
	if !v.Fits || v.Placement == nil {
		return v, nil, nil
	}
	placed := pod.DeepCopy()
	if placed.Annotations == nil {
		placed.Annotations = map[string]string{}
	}
	for k, val := range v.Placement.Annotations(now) {
		placed.Annotations[k] = val
	}
	if placed.Labels == nil {
		placed.Labels = map[string]string{}
	}
	placed.Labels[codec.PodNodeAnnotation] = node
	placed.Spec.NodeName = node
	key := pod.Namespace + "/" + pod.Name
	s.assumed[key] = assumption{pod: placed, at: now}
	s.cluster.SetPod(placed)
	return v, placed, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.assumed, key)
		s.cluster.SetPod(pod)
	}
}
