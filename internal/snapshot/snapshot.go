// Package snapshot turns a live cluster or a saved file into the objects the engine needs, and the engine
// cluster built from them. It is the only place where read commands touch the API server.
package snapshot

import (
	"sort"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
)

// Snapshot is the HAMi-relevant state of a cluster at one moment.
type Snapshot struct {
	Nodes      []*corev1.Node
	Pods       Pods // compact records when read from a file (pods.go)
	Quotas     []*corev1.ResourceQuota
	ConfigMaps []*corev1.ConfigMap // the HAMi device ConfigMap, when there is one
	Events     []*corev1.Event     // FailedScheduling events, when read
	// Leases are the schedulers' leader Leases read (by name: LiveOptions.Leases); LeasesRead says the
	// source could read them, so that none found means none held.
	Leases     []*coordinationv1.Lease
	LeasesRead bool
	// Volcano's queues and PodGroups (card-model quota); Volcano is true when its Queue CRD was found.
	Queues    []*unstructured.Unstructured
	PodGroups []*unstructured.Unstructured
	Volcano   bool
	// PriorityClasses and PodDisruptionBudgets are what preemption reads (a pod's priority when spec.priority is
	// unset, and which victims a budget protects); a snapshot without them still reads, as a cluster without.
	PriorityClasses []*schedulingv1.PriorityClass
	PDBs            []*policyv1.PodDisruptionBudget
	// Source says where the snapshot came from, for headers and errors ("file demo.yaml", "context kind-gpu").
	Source string
	// Skipped counts objects of other kinds found in a file.
	Skipped int
	// file is the name of the file read ("" for a cluster), for what it lacks (missing.go).
	file string
	// onNode are the positions of the pods bound to each node (PodsOn), made when first asked.
	onNode *podsByNode
	// onNodeRead and onNodeOut are PodsOn's readers (one per pod of a node) and its answer, reused.
	onNodeRead []func(int) *corev1.Pod
	onNodeOut  []*corev1.Pod
}

// Cluster builds the engine's model. Bad input on single objects becomes problems; the rest is still used.
func (s *Snapshot) Cluster(cfg engine.Config) (*engine.Cluster, []engine.Problem) {
	c := engine.NewCluster(cfg)
	c.SetNodes(s.Nodes)
	c.SetPodsFrom(s.Pods.Len(), s.Pods.Reader()) // the model keeps nothing of a pod object
	for _, q := range s.Quotas {
		c.SetQuota(q)
	}
	c.SetVolcano(s.Volcano || len(s.Queues) > 0)
	for _, u := range s.Queues {
		c.SetQueue(EngineQueue(u))
	}
	for _, u := range s.PodGroups {
		c.SetPodGroup(EnginePodGroup(u))
	}
	problems := append(c.Problems(), s.missing()...)
	return c, problems
}

// Pod finds a pod by namespace and name.
func (s *Snapshot) Pod(namespace, name string) *corev1.Pod { return s.Pods.Find(namespace, name) }

// PodsOn is the pods bound to a node (spec.nodeName), in the snapshot's order: what kube-scheduler's checks
// read one node at a time (query.KubeChecks). They are valid until the next call (their objects are reused,
// as Pods.Reader's).
func (s *Snapshot) PodsOn(node string) []*corev1.Pod {
	at := s.PodsBoundTo(node)
	if len(at) == 0 {
		return nil
	}
	for len(s.onNodeRead) < len(at) {
		s.onNodeRead = append(s.onNodeRead, s.Pods.Reader())
	}
	out := s.onNodeOut[:0]
	for j, i := range at {
		out = append(out, s.onNodeRead[j](int(i)))
	}
	s.onNodeOut = out
	return out
}

// PodsBoundTo are the positions in Pods of the pods bound to a node (spec.nodeName), in the snapshot's order:
// PodsOn without building them (preempt.NewIndexByNode). The index by node is made when first asked.
func (s *Snapshot) PodsBoundTo(node string) []int32 {
	if s.onNode == nil {
		s.onNode = indexByNode(&s.Pods)
	}
	return s.onNode.of(node)
}

// WithWholePods is the snapshot with every pod whole (the same snapshot when they are): for a surface that
// keeps every pod as an object anyway (the terminal UI's world).
func (s *Snapshot) WithWholePods() *Snapshot {
	if s.Pods.n == 0 {
		return s
	}
	w := *s
	w.Pods, w.onNode, w.onNodeRead, w.onNodeOut = PodsOf(s.Pods.Slice()...), nil, nil, nil
	return &w
}

// EventsFor lists the events about one pod, oldest first.
func (s *Snapshot) EventsFor(namespace, name string) []*corev1.Event {
	var out []*corev1.Event
	for _, e := range s.Events {
		if e.InvolvedObject.Namespace == namespace && e.InvolvedObject.Name == name && (e.InvolvedObject.Kind == "" || e.InvolvedObject.Kind == "Pod") {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return query.EventTime(out[i]).Before(query.EventTime(out[j])) })
	return out
}

// stripNoise drops fields no read command needs, so saved snapshots stay small and diffable.
func stripNoise(objs ...metaObject) {
	for _, o := range objs {
		o.SetManagedFields(nil)
	}
}

// podsByNode are the positions of a snapshot's pods bound to each node: one list of every bound pod's position,
// grouped by node in the snapshot's order, and each node's part of it; about 4 bytes a pod and 40 a node,
// where a list per node grown by append was about 30 bytes a pod and its garbage.
type podsByNode struct {
	node map[string]int32 // a node's index in span
	span []int32          // node i's positions are at[span[i]:span[i+1]]
	at   []int32
}

func indexByNode(ps *Pods) *podsByNode {
	x := &podsByNode{node: map[string]int32{}}
	nodeOf := make([]int32, ps.Len()) // each pod's node index + 1; 0: none
	var count []int32
	for i := range ps.Len() {
		_, _, n := ps.Meta(i)
		if n == "" {
			continue
		}
		k, ok := x.node[n]
		if !ok {
			k = int32(len(count))
			x.node[n] = k
			count = append(count, 0)
		}
		count[k]++
		nodeOf[i] = k + 1
	}
	x.span = make([]int32, len(count)+1)
	for k, c := range count {
		x.span[k+1] = x.span[k] + c
	}
	x.at = make([]int32, x.span[len(count)])
	next := count // now where each node's next position goes
	copy(next, x.span)
	for i, k := range nodeOf {
		if k > 0 {
			x.at[next[k-1]] = int32(i)
			next[k-1]++
		}
	}
	return x
}

// of is the positions of the pods bound to node, in the snapshot's order.
func (x *podsByNode) of(node string) []int32 {
	k, ok := x.node[node]
	if !ok {
		return nil
	}
	return x.at[x.span[k]:x.span[k+1]]
}
