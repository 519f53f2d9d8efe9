// Package preempt answers "who would have to go" for a pod that fits nowhere: per node, the victims
// kube-scheduler's own preemption would pick (v1.37 pkg/scheduler/framework/preemption and the DefaultPreemption
// plugin's SelectVictimsOnNode), judged by the engine's gates, which know GPU memory, cores and slots that
// kube-scheduler's dry run ignores; and the node kube-scheduler's order would choose. Pure and deterministic:
// the same cluster and pod give the same answer.
package preempt

import (
	"fmt"
	"math"
	"sort"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Built-in PriorityClasses kube-apiserver creates (pkg/apis/scheduling: SystemCriticalPriority and above).
var builtinClasses = map[string]int32{
	"system-cluster-critical": 2000000000,
	"system-node-critical":    2000001000,
}

// noStart stands for a pod without status.startTime: kube-scheduler takes "now" for it, later than any start
// recorded, so it is the least important of its priority.
const noStart = math.MaxInt64

// Index is what the victim search reads besides the engine's cluster, prepared once per snapshot: each bound
// pod's priority and start time by node, the PriorityClasses and the PodDisruptionBudgets.
type Index struct {
	byNode map[string][]*podInfo
	// on, read and the lists: an index of a snapshot's pods read a node at a time (NewIndexByNode) keeps no
	// podInfo of its own; podsOn reads a node's pods when the search asks for them, into lists it reuses.
	on    func(node string) []int32
	read  func(i int) *corev1.Pod
	infos []podInfo
	list  []*podInfo
	// pod builds the i-th pod of the index's input whole (podInfo.at): the index keeps no pod object, which for
	// a snapshot's compact records would be every pod held whole again.
	pod     func(i int) *corev1.Pod
	classes map[string]*schedulingv1.PriorityClass
	global  *schedulingv1.PriorityClass // the globalDefault class, if any
	pdbs    []pdbInfo
	// Problems are the objects whose fields the index could not read (a PDB's selector); each is left out.
	Problems []string
}

// podInfo is a bound pod as preemption sees it: what the search reads, and where the whole pod is.
type podInfo struct {
	namespace, name string
	labels          map[string]string // a PodDisruptionBudget's selector reads them
	start           int64             // unix nanoseconds of status.startTime; noStart when unset
	at              int32             // the pod's position in the index's input (Index.pod)
	priority        int32
	deleting        bool // metadata.deletionTimestamp is set
	// protected: the pod is never a victim (protection says why). The fields are in this order, and this a
	// flag rather than the reason, so that an index of a large snapshot's pods takes 64 bytes a pod, not 88.
	protected bool
}

type pdbInfo struct {
	namespace string
	name      string
	selector  labels.Selector
	allowed   int32
	disrupted map[string]metav1.Time
}

// NewIndex indexes the pods bound to nodes (pending and finished pods hold nothing), the classes and the budgets.
func NewIndex(pods []*corev1.Pod, classes []*schedulingv1.PriorityClass, pdbs []*policyv1.PodDisruptionBudget) *Index {
	at := func(i int) *corev1.Pod { return pods[i] }
	return NewIndexFrom(len(pods), at, at, classes, pdbs)
}

// NewIndexFrom is NewIndex of n pods that a snapshot builds from its compact records when asked: read(i) is
// the i-th pod for building the index, valid until read's next call (the index keeps its strings and labels
// only); pod(i) is the i-th pod as an object of its own, for a proven victim (prove) and PodOn.
func NewIndexFrom(n int, read, pod func(i int) *corev1.Pod, classes []*schedulingv1.PriorityClass, pdbs []*policyv1.PodDisruptionBudget) *Index {
	ix := newIndex(pod, classes, pdbs)
	ix.byNode = map[string][]*podInfo{}
	infos := make([]podInfo, 0, n) // one allocation for every pod
	for i := range n {
		p := read(i)
		info, ok := ix.info(p, i)
		if !ok {
			continue
		}
		infos = append(infos, info)
		ix.byNode[p.Spec.NodeName] = append(ix.byNode[p.Spec.NodeName], &infos[len(infos)-1])
	}
	for _, list := range ix.byNode {
		sort.Slice(list, func(i, j int) bool { return moreImportant(list[i], list[j]) })
	}
	return ix
}

// NewIndexByNode is NewIndexFrom for a snapshot that knows the positions of the pods bound to each node (on:
// Snapshot.PodsBoundTo): a node's pods are read when the search asks for that node, and none is held between
// two such reads. A search that stops at its candidates reads the pods of those nodes only, and a large
// snapshot's index adds no podInfo per pod to a read command's memory (64 bytes each, 19 MB for 300,000 pods,
// alive at its peak). The answers are NewIndexFrom's (TestGeneratedWorldsPreemption). It serves one search at a
// time: the lists it reads into are its own.
func NewIndexByNode(on func(node string) []int32, read, pod func(i int) *corev1.Pod, classes []*schedulingv1.PriorityClass, pdbs []*policyv1.PodDisruptionBudget) *Index {
	ix := newIndex(pod, classes, pdbs)
	ix.on, ix.read = on, read
	return ix
}

// newIndex is an index without pods: the classes and budgets.
func newIndex(pod func(i int) *corev1.Pod, classes []*schedulingv1.PriorityClass, pdbs []*policyv1.PodDisruptionBudget) *Index {
	ix := &Index{classes: map[string]*schedulingv1.PriorityClass{}, pod: pod}
	for _, pc := range classes {
		ix.classes[pc.Name] = pc
		if pc.GlobalDefault && (ix.global == nil || pc.Value > ix.global.Value) {
			ix.global = pc // admission refuses a second global default; the highest wins if a snapshot has two
		}
	}
	for _, b := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil {
			ix.Problems = append(ix.Problems, fmt.Sprintf("PodDisruptionBudget %s/%s: spec.selector: %v; the budget is left out", b.Namespace, b.Name, err))
			continue
		}
		if sel.Empty() {
			continue // kube-scheduler's filterPodsWithPDBViolation skips a budget selecting nothing or everything
		}
		ix.pdbs = append(ix.pdbs, pdbInfo{namespace: b.Namespace, name: b.Name, selector: sel,
			allowed: b.Status.DisruptionsAllowed, disrupted: b.Status.DisruptedPods})
	}
	return ix
}

// info is what the search reads of the i-th pod; false for a pod that holds nothing (pending or finished).
func (ix *Index) info(p *corev1.Pod, i int) (podInfo, bool) {
	if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return podInfo{}, false
	}
	info := podInfo{namespace: p.Namespace, name: p.Name, labels: p.Labels, deleting: p.DeletionTimestamp != nil, at: int32(i),
		priority: ix.Priority(p), start: noStart, protected: protection(p) != ""}
	if p.Status.StartTime != nil {
		info.start = p.Status.StartTime.UnixNano()
	}
	return info, true
}

// podsOn are the bound pods of a node that hold something, most important first. Read a node at a time
// (NewIndexByNode), the list is valid until the next call.
func (ix *Index) podsOn(node string) []*podInfo {
	if ix.on == nil {
		return ix.byNode[node]
	}
	infos := ix.infos[:0]
	for _, i := range ix.on(node) {
		if info, ok := ix.info(ix.read(int(i)), int(i)); ok {
			infos = append(infos, info)
		}
	}
	list := ix.list[:0]
	for k := range infos {
		list = append(list, &infos[k])
	}
	ix.infos, ix.list = infos, list
	sort.Slice(list, func(i, j int) bool { return moreImportant(list[i], list[j]) })
	return list
}

// Priority is the pod's priority as kube-scheduler reads it: spec.priority, which admission fills from the
// PriorityClass; for a pod written without it (a hand-made snapshot), its priorityClassName's value, else the
// global default class's, else 0.
func (ix *Index) Priority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	if pc := ix.class(p); pc != nil {
		return pc.Value
	}
	if v, ok := builtinClasses[p.Spec.PriorityClassName]; ok {
		return v
	}
	return 0
}

// PreemptsNever reports whether the pod's preemptionPolicy (its own, else its class's) is Never.
func (ix *Index) PreemptsNever(p *corev1.Pod) bool {
	if p.Spec.PreemptionPolicy != nil {
		return *p.Spec.PreemptionPolicy == corev1.PreemptNever
	}
	if pc := ix.class(p); pc != nil && pc.PreemptionPolicy != nil {
		return *pc.PreemptionPolicy == corev1.PreemptNever
	}
	return false
}

func (ix *Index) class(p *corev1.Pod) *schedulingv1.PriorityClass {
	if p.Spec.PriorityClassName != "" {
		return ix.classes[p.Spec.PriorityClassName]
	}
	return ix.global
}

// protection says why a bound pod is never a victim: the kubelet recreates a static pod (its mirror pod
// on the API server) at once, and a pod being deleted is already going.
func protection(p *corev1.Pod) string {
	if _, ok := p.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return "a mirror pod (static pods come back with their node's kubelet)"
	}
	for _, o := range p.OwnerReferences {
		if o.Kind == "Node" {
			return "a static pod (owned by its node)"
		}
	}
	if p.DeletionTimestamp != nil {
		return "already terminating"
	}
	return ""
}

// moreImportant is kube-scheduler's MoreImportantPod: higher priority first, then the earlier start; the key
// (namespace, then name) breaks the last tie so that the order is the same on every run.
func moreImportant(a, b *podInfo) bool {
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	if a.start != b.start {
		return a.start < b.start
	}
	if a.namespace != b.namespace {
		return a.namespace < b.namespace
	}
	return a.name < b.name
}

// key is namespace/name, the engine's name for a pod.
func (p *podInfo) key() string { return p.namespace + "/" + p.name }

// violating splits pods (most important first), by index, as kube-scheduler's filterPodsWithPDBViolation does: a pod
// violates when removing it, after the pods before it, takes a budget that selects it below zero
// disruptions allowed. A pod the budget already counts as disrupted takes nothing.
func (ix *Index) violating(pods []*podInfo) (violating, fine []int) {
	var allowed []int32
	for k, p := range pods {
		hit := false
		for i := range ix.pdbs {
			b := &ix.pdbs[i]
			if b.namespace != p.namespace || !b.selector.Matches(labels.Set(p.labels)) {
				continue
			}
			if _, gone := b.disrupted[p.name]; gone {
				continue
			}
			if allowed == nil {
				allowed = make([]int32, len(ix.pdbs))
				for j := range ix.pdbs {
					allowed[j] = ix.pdbs[j].allowed
				}
			}
			allowed[i]--
			if allowed[i] < 0 {
				hit = true
			}
		}
		if hit {
			violating = append(violating, k)
		} else {
			fine = append(fine, k)
		}
	}
	return violating, fine
}

// PodOn is the bound pod namespace/name on the node, or nil.
func (ix *Index) PodOn(node, namespace, name string) *corev1.Pod {
	for _, p := range ix.podsOn(node) {
		if p.namespace == namespace && p.name == name {
			return ix.pod(int(p.at))
		}
	}
	return nil
}
