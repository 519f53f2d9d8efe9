package extender

import (
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
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
	// objects are the pods as the informer last delivered them (shared with its cache, never modified): bind
	// reserves from them without a round trip to the API server, filter sends events only for pods that exist.
	objects map[string]*corev1.Pod
	// locks holds each node's hami.io/mutex.lock as the informer last delivered it; longest is the longest
	// node name seen (it sizes the scheduler verbs' body limit).
	locks map[string]string
	// lockFree holds the nodes whose agent serves the device plugin and finds the pod it allocates without
	// hami.io/mutex.lock (codec.NodeAllocatorAnnotation).
	lockFree map[string]bool
	// unstamped holds the nodes with NVIDIA GPUs registered whose hami.io/node-handshake lacks the scheduler's
	// Requesting_ stamp (handshake.go).
	unstamped map[string]bool
	longest   int
	// nominated holds, per node, the pending pods nominated to it (preempt_hold.go).
	nominated map[string]map[string]*corev1.Pod
	// provisional holds, per pod, the nodes the preempt verb answered, until the informer shows its nomination.
	provisional map[string]provisional
	// classes and pdbs are the PriorityClasses and PodDisruptionBudgets the victim search reads (preemptor.go).
	classes map[string]*schedulingv1.PriorityClass
	pdbs    map[string]*policyv1.PodDisruptionBudget
}

type assumption struct {
	pod *corev1.Pod
	at  time.Time
}

// assumeTTL bounds how long an assumption outlives a silent informer (a lost watch event).
const assumeTTL = 2 * time.Minute

// NewState returns an empty state with the engine configuration.
func NewState(cfg engine.Config) *State {
	return &State{cluster: engine.NewCluster(cfg), assumed: map[string]assumption{}, objects: map[string]*corev1.Pod{}, locks: map[string]string{},
		lockFree: map[string]bool{}, unstamped: map[string]bool{}, classes: map[string]*schedulingv1.PriorityClass{}, pdbs: map[string]*policyv1.PodDisruptionBudget{}}
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
	if l := n.Annotations[codec.NodeLockAnnotation]; l != "" {
		s.locks[n.Name] = l
	} else {
		delete(s.locks, n.Name)
	}
	if n.Annotations[codec.NodeAllocatorAnnotation] == codec.AllocatorKubectlHAMi {
		s.lockFree[n.Name] = true
	} else {
		delete(s.lockFree, n.Name)
	}
	if needsStamp(n) {
		s.unstamped[n.Name] = true
	} else {
		delete(s.unstamped, n.Name)
	}
	s.longest = max(s.longest, len(n.Name))
}

// RemoveNode forgets a node.
func (s *State) RemoveNode(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cluster.RemoveNode(name)
	delete(s.locks, name)
	delete(s.lockFree, name)
	delete(s.unstamped, name)
}

// LockFree reports whether the node's agent registered as the device plugin that needs no node lock
// (codec.NodeAllocatorAnnotation), as the informer last delivered the Node. An unknown node is not.
func (s *State) LockFree(node string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lockFree[node]
}

// NodeLock is the node's hami.io/mutex.lock as the informer last delivered it.
func (s *State) NodeLock(node string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.locks[node]
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
	s.objects[key] = p
	s.trackNomination(p)
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
	delete(s.objects, namespace+"/"+name)
	s.untrackNomination(namespace + "/" + name)
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
//
// A pod this extender bound and the informer has not delivered bound yet is refused (errAssumed): binding it
// again would replace its counted placement with another one.
func (s *State) Reserve(pod *corev1.Pod, node string, now time.Time) (*engine.Verdict, *corev1.Pod, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := pod.Namespace + "/" + pod.Name
	if a, ok := s.assumed[key]; ok && now.Sub(a.at) < assumeTTL {
		return nil, nil, nil, fmt.Errorf("pod %s is already bound to node %s (by this extender, %s ago); nothing changed",
			key, a.pod.Spec.NodeName, now.Sub(a.at).Round(time.Millisecond))
	}
	// The bind's own check adds kube-scheduler's checks that read the node and the pod alone (name, taints,
	// selector and required affinity): a node they exclude is refused whatever sent the bind.
	v := s.cluster.Evaluate(pod, engine.EvalOptions{Now: now, Nodes: []string{node}, Kube: engine.KubeStatic})
	if !v.Fits || v.Placement == nil {
		return v, nil, nil, nil
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
	s.assumed[key] = assumption{pod: placed, at: now}
	s.cluster.SetPod(placed)
	return v, placed, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.assumed, key)
		s.cluster.SetPod(pod)
	}, nil
}

// Pod is the pod namespace/name as the informer last delivered it, or nil. It must not be modified.
func (s *State) Pod(namespace, name string) *corev1.Pod {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.objects[namespace+"/"+name]
}

// Pods calls f for every pod the informer delivered, under the read lock (f must not call the State).
func (s *State) Pods(f func(p *corev1.Pod)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, p := range s.objects {
		f(p)
	}
}

// NodeLocks copies every node's hami.io/mutex.lock as the informer last delivered it.
func (s *State) NodeLocks() map[string]string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]string, len(s.locks))
	for k, v := range s.locks {
		out[k] = v
	}
	return out
}

// NodeStats is the number of nodes and the longest node name seen.
func (s *State) NodeStats() (nodes, longest int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.cluster.NodeNames()), s.longest
}
