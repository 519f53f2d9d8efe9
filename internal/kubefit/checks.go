// Package kubefit checks the standard node constraints kube-scheduler's Filter plugins apply before any
// scheduler extender (such as HAMi's) is called: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity
// and NodeResourcesFit, in the order of kube-scheduler v1.37's default profile. It is pure: it reads the
// objects it is given and does no I/O.
package kubefit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	schedcorev1 "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// Names of the checks, as kube-scheduler names its plugins.
const (
	CheckNodeName          = "NodeName"
	CheckNodeUnschedulable = "NodeUnschedulable"
	CheckNodeAffinity      = "NodeAffinity"
	CheckTaintToleration   = "TaintToleration"
	CheckNodeResourcesFit  = "NodeResourcesFit"
)

// kube-scheduler's reasons.
const (
	ReasonNodeName      = "node(s) didn't match the requested node name"
	ReasonUnschedulable = "node(s) were unschedulable"
	ReasonNodeAffinity  = "node(s) didn't match Pod's node affinity/selector"
	ReasonTooManyPods   = "Too many pods"
	// ReasonTaint is TaintToleration's reason in kube-scheduler v1.37 (older releases named the taint here);
	// the taint itself is in the failure's Message.
	ReasonTaint = "node(s) had untolerated taint(s)"
)

// Failure is one standard constraint a node fails for a pod.
type Failure struct {
	Check   string `json:"check"`   // NodeUnschedulable, NodeAffinity, TaintToleration, NodeResourcesFit, NodeName
	Reason  string `json:"reason"`  // kube-scheduler's wording, counted by Summary
	Message string `json:"message"` // the same with the numbers or names behind it
}

// NodeResult lists every standard constraint one node fails for the pod; none means it passes them all.
type NodeResult struct {
	Node     string    `json:"node"`
	Failures []Failure `json:"failures,omitempty"`
}

// podState is computed once per pod, as kube-scheduler's PreFilter does.
type podState struct {
	pod      *corev1.Pod
	requests corev1.ResourceList
	affinity nodeaffinity.RequiredNodeAffinity
	ignored  map[corev1.ResourceName]bool
	// hasAffinity: the pod has a nodeSelector or required node affinity (without, every node matches).
	hasAffinity bool
	// checked are the resources the pod requests that NodeResourcesFit compares, in its order;
	// checkedValues their requests as kube-scheduler counts them (milli-CPU, else the value).
	checked       []corev1.ResourceName
	checkedValues []int64
}

// nodeInfo is a node with the requests of the pods already bound to it, and the int64s kube-scheduler
// compares for the pods count, CPU (milli) and memory.
type nodeInfo struct {
	node *corev1.Node
	used *Usage
	pods int

	allocPods          int64
	hasPods            bool // allocatable lists pods
	allocCPU, allocMem int64
	usedCPU, usedMem   int64
}

// Node is a node object with its allocatable pods, CPU and memory read once as int64s.
type Node struct {
	Obj                *corev1.Node
	allocPods          int64
	hasPods            bool
	allocCPU, allocMem int64
	clean              bool // not cordoned, no taints (Quick.Clean), read once so Quick reads no node object
}

// NewNode reads the node's allocatable once for CheckNode.
func NewNode(obj *corev1.Node) *Node {
	n := nodeOf(obj)
	return &n
}

// nodeOf is NewNode as a value (a caller that reads it once allocates nothing).
func nodeOf(obj *corev1.Node) Node {
	n := Node{Obj: obj, clean: !obj.Spec.Unschedulable && len(obj.Spec.Taints) == 0}
	alloc := obj.Status.Allocatable
	if q, ok := alloc[corev1.ResourcePods]; ok {
		n.hasPods, n.allocPods = true, q.Value()
	}
	if q, ok := alloc[corev1.ResourceCPU]; ok {
		n.allocCPU = q.MilliValue()
	}
	if q, ok := alloc[corev1.ResourceMemory]; ok {
		n.allocMem = q.Value()
	}
	return n
}

func (n *Node) info(u *Usage) nodeInfo {
	return nodeInfo{node: n.Obj, used: u, pods: u.Pods, allocPods: n.allocPods, hasPods: n.hasPods,
		allocCPU: n.allocCPU, allocMem: n.allocMem, usedCPU: u.cpu, usedMem: u.mem}
}

// A check returns the failures of one constraint (the Check field is filled in by the caller), nil when it passes.
type check struct {
	name   string
	filter func(*podState, *nodeInfo) []Failure
}

// checks run in kube-scheduler v1.37's default Filter plugin order (pkg/scheduler/apis/config/v1
// getDefaultPlugins: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
// then the volume and topology plugins a snapshot cannot judge).
var checks = []check{
	{CheckNodeUnschedulable, nodeUnschedulableFilter},
	{CheckNodeName, nodeNameFilter},
	{CheckTaintToleration, taintTolerationFilter},
	{CheckNodeAffinity, nodeAffinityFilter},
	{CheckNodeResourcesFit, nodeResourcesFitFilter},
}

// Pod is a pod prepared once for checks node by node (kube-scheduler's PreFilter state).
type Pod struct {
	st podState
	// amounts are st.requests as Usage adds them (a copy of the pod placed on a node).
	amounts Amounts
	// simple: no spec.nodeName, no selector or required affinity, no checked resource but CPU and memory;
	// cpu (milli) and mem are its requests of them (QuickPass).
	simple   bool
	cpu, mem int64
}

// Requests is a pod's requests as NodeResourcesFit counts them (init containers as their peak, overhead).
//
// Most pods have no init container, no overhead and no pod-level resources: their requests are the sum of the
// containers', which is what resourcehelper.PodRequests computes for them too, with one map instead of its
// three. Every pod is read this way (the engine counts each bound pod), so the common case is worth its line.
func Requests(pod *corev1.Pod) corev1.ResourceList {
	if len(pod.Spec.InitContainers) > 0 || pod.Spec.Overhead != nil || pod.Spec.Resources != nil {
		return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	}
	size := 0
	for i := range pod.Spec.Containers {
		size = max(size, len(pod.Spec.Containers[i].Resources.Requests))
	}
	out := make(corev1.ResourceList, size)
	for i := range pod.Spec.Containers {
		for name, q := range pod.Spec.Containers[i].Resources.Requests {
			if sum, ok := out[name]; ok {
				sum.Add(q)
				out[name] = sum
			} else {
				out[name] = q.DeepCopy()
			}
		}
	}
	return out
}

// Prepare reads the pod once for CheckNode; ignoredResources are left out of NodeResourcesFit.
func Prepare(pod *corev1.Pod, ignoredResources []string) *Pod {
	if pod == nil {
		pod = &corev1.Pod{}
	}
	p := &Pod{st: podState{
		pod:      pod,
		requests: Requests(pod),
		affinity: nodeaffinity.GetRequiredNodeAffinity(pod),
		ignored:  map[corev1.ResourceName]bool{},
	}}
	for _, r := range ignoredResources {
		p.st.ignored[corev1.ResourceName(r)] = true
	}
	a := pod.Spec.Affinity
	p.st.hasAffinity = len(pod.Spec.NodeSelector) > 0 || a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil
	p.st.checked = requestedResources(&p.st)
	p.amounts = AmountsOf(p.st.requests)
	p.simple = pod.Spec.NodeName == "" && !p.st.hasAffinity && !p.st.ignored[corev1.ResourcePods]
	for _, name := range p.st.checked {
		q := p.st.requests[name]
		switch name {
		case corev1.ResourceCPU:
			p.cpu = q.MilliValue()
			p.st.checkedValues = append(p.st.checkedValues, p.cpu)
		case corev1.ResourceMemory:
			p.mem = q.Value()
			p.st.checkedValues = append(p.st.checkedValues, p.mem)
		default:
			p.simple = false
			p.st.checkedValues = append(p.st.checkedValues, q.Value())
		}
	}
	return p
}

// CheckNode returns the failures of the first check the node fails, in kube-scheduler's order, as
// kube-scheduler stops at a node's first failing plugin (one plugin may report several reasons:
// NodeResourcesFit's "Insufficient cpu" and "Insufficient memory"); nil when the node passes them all.
// static runs only the checks that read the node object and the pod alone (NodeName, TaintToleration,
// NodeAffinity). u is the node's bound pods, the pod itself left out.
func (p *Pod) CheckNode(node *Node, u *Usage, static bool) []Failure {
	// The filters are called directly, not through the checks table: the node's info then stays on the
	// stack, and a node that passes costs no allocation.
	ni := node.info(u)
	st := &p.st
	if !static {
		if f := nodeUnschedulableFilter(st, &ni); f != nil {
			return named(f, CheckNodeUnschedulable)
		}
	}
	if f := nodeNameFilter(st, &ni); f != nil {
		return named(f, CheckNodeName)
	}
	if f := taintTolerationFilter(st, &ni); f != nil {
		return named(f, CheckTaintToleration)
	}
	if f := nodeAffinityFilter(st, &ni); f != nil {
		return named(f, CheckNodeAffinity)
	}
	if !static {
		if f := nodeResourcesFitFilter(st, &ni); f != nil {
			return named(f, CheckNodeResourcesFit)
		}
	}
	return nil
}

func named(f []Failure, check string) []Failure {
	for i := range f {
		f[i].Check = check
	}
	return f
}

// AllFailures returns every check the node fails, in kube-scheduler's order (kube-scheduler stops at the
// first; the rest say what else would have to change).
func (p *Pod) AllFailures(node *Node, u *Usage) []Failure {
	info := node.info(u)
	ni := &info
	var out []Failure
	for _, c := range checks {
		for _, f := range c.filter(&p.st, ni) {
			f.Check = c.name
			out = append(out, f)
		}
	}
	return out
}

// Check evaluates the pod against every node. podsByNode are the pods already bound to each node
// (spec.nodeName), used for CPU/memory/pods-count accounting; pods in phase Succeeded/Failed do not count, nor
// does the pod itself. Unlike kube-scheduler, which stops at a node's first failing plugin, every check runs, so
// a node lists all that stand in the way. Results are in the order of nodes; a nil node gives an empty result.
func Check(pod *corev1.Pod, nodes []*corev1.Node, podsByNode map[string][]*corev1.Pod, ignoredResources []string) []NodeResult {
	return CheckOn(pod, nodes, func(node string) []*corev1.Pod { return podsByNode[node] }, ignoredResources)
}

// CheckOn is Check with the pods bound to a node given by podsOn, asked once per node: a snapshot builds them
// from its compact records one node at a time instead of holding every pod. A nil podsOn gives none.
func CheckOn(pod *corev1.Pod, nodes []*corev1.Node, podsOn func(node string) []*corev1.Pod, ignoredResources []string) []NodeResult {
	if pod == nil {
		pod = &corev1.Pod{}
	}
	if podsOn == nil {
		podsOn = func(string) []*corev1.Pod { return nil }
	}
	st := &Prepare(pod, ignoredResources).st
	results := make([]NodeResult, len(nodes))
	// One node's state and usage at a time, reused: a Failure keeps strings only, and a large cluster's
	// checks then make no garbage per node (a read command's peak of memory comes while they run).
	var ni nodeInfo
	var u Usage
	for i, node := range nodes {
		if node == nil {
			continue
		}
		nodeInfoOf(&ni, &u, pod, node, podsOn(node.Name))
		results[i].Node = node.Name
		for _, c := range checks {
			for _, f := range c.filter(st, &ni) {
				f.Check = c.name
				results[i].Failures = append(results[i].Failures, f)
			}
		}
	}
	return results
}

// nodeInfoOf sets ni to the node beside its bound pods (the pod itself left out), their requests summed into u,
// emptied first.
func nodeInfoOf(ni *nodeInfo, u *Usage, pod *corev1.Pod, node *corev1.Node, bound []*corev1.Pod) {
	*u = Usage{sums: u.sums[:0]}
	for _, p := range bound {
		if p == nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || samePod(p, pod) {
			continue
		}
		u.Pods++
		if len(p.Spec.InitContainers) == 0 && p.Spec.Overhead == nil && p.Spec.Resources == nil {
			// The common case, summed in place: PodRequests would build and merge a map per pod, which
			// dominates on large clusters, to return the same sum of container requests.
			for i := range p.Spec.Containers {
				for name, q := range p.Spec.Containers[i].Resources.Requests {
					u.addQuantity(name, q, +1)
				}
			}
			continue
		}
		for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			u.addQuantity(name, q, +1)
		}
	}
	n := nodeOf(node)
	*ni = n.info(u)
}

func samePod(a, b *corev1.Pod) bool {
	if a.UID != "" && b.UID != "" {
		return a.UID == b.UID
	}
	return a.Name != "" && a.Name == b.Name && a.Namespace == b.Namespace
}

func nodeNameFilter(st *podState, ni *nodeInfo) []Failure {
	want := st.pod.Spec.NodeName
	if want == "" || want == ni.node.Name {
		return nil
	}
	return []Failure{{Reason: ReasonNodeName, Message: fmt.Sprintf("pod asks for node %q by spec.nodeName", want)}}
}

func nodeUnschedulableFilter(st *podState, ni *nodeInfo) []Failure {
	if !ni.node.Spec.Unschedulable {
		return nil
	}
	taint := &corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	if schedcorev1.TolerationsTolerateTaint(logr.Discard(), st.pod.Spec.Tolerations, taint, false) {
		return nil
	}
	return []Failure{{Reason: ReasonUnschedulable,
		Message: "node is cordoned (spec.unschedulable) and the pod does not tolerate " + taint.ToString()}}
}

func nodeAffinityFilter(st *podState, ni *nodeInfo) []Failure {
	if !st.hasAffinity {
		return nil
	}
	// Parse errors are ignored, as kube-scheduler does: an invalid term matches nothing.
	if ok, _ := st.affinity.Match(ni.node); ok {
		return nil
	}
	var missed []string
	for key, want := range st.pod.Spec.NodeSelector {
		if got, has := ni.node.Labels[key]; !has {
			missed = append(missed, fmt.Sprintf("%s=%s (node has no %s label)", key, want, key))
		} else if got != want {
			missed = append(missed, fmt.Sprintf("%s=%s (node has %s)", key, want, got))
		}
	}
	sort.Strings(missed)
	msg := "required node affinity matches no term for the node's labels and fields"
	if len(missed) > 0 {
		msg = "nodeSelector " + strings.Join(missed, ", ")
	}
	return []Failure{{Reason: ReasonNodeAffinity, Message: msg}}
}

func taintTolerationFilter(st *podState, ni *nodeInfo) []Failure {
	if len(ni.node.Spec.Taints) == 0 {
		return nil
	}
	// Comparison operators (Lt/Gt) are an alpha feature gate, off by default in v1.37.
	taint, untolerated := schedcorev1.FindMatchingUntoleratedTaint(logr.Discard(), ni.node.Spec.Taints,
		st.pod.Spec.Tolerations, doNotScheduleTaint, false)
	if !untolerated {
		return nil
	}
	return []Failure{{
		Reason:  ReasonTaint,
		Message: "the pod does not tolerate taint " + taint.ToString(),
	}}
}

// doNotScheduleTaint keeps the taints the filter looks at: NoSchedule and NoExecute, not PreferNoSchedule.
func doNotScheduleTaint(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// Requests is the prepared pod's requests (Requests of the pod given to Prepare).
func (p *Pod) Requests() corev1.ResourceList { return p.st.requests }

// Amounts is the prepared pod's requests as Usage adds them.
func (p *Pod) Amounts() Amounts { return p.amounts }

// UntoleratedTaint is the first NoSchedule or NoExecute taint of the node the pod does not tolerate.
func UntoleratedTaint(pod *corev1.Pod, node *corev1.Node) (corev1.Taint, bool) {
	t, bad := schedcorev1.FindMatchingUntoleratedTaint(logr.Discard(), node.Spec.Taints, pod.Spec.Tolerations, doNotScheduleTaint, false)
	return t, bad
}

// Quick is what the common case needs to know of a node, kept beside the caller's own per-node data so a
// walk over thousands of nodes reads no node object: whether it is clean (not cordoned, no taints), its
// allocatable pods, CPU (milli) and memory, and what its bound pods take of them.
type Quick struct {
	Clean                         bool
	HasPods                       bool
	AllocPods, AllocCPU, AllocMem int64
	Pods, CPU, Mem                int64
}

// Quick is the node's Quick with its bound pods' usage u (nil: none).
func (n *Node) Quick(u *Usage) Quick {
	q := Quick{Clean: n.clean, HasPods: n.hasPods,
		AllocPods: n.allocPods, AllocCPU: n.allocCPU, AllocMem: n.allocMem}
	if u != nil {
		q.Pods, q.CPU, q.Mem = int64(u.Pods), u.cpu, u.mem
	}
	return q
}

// QuickPass reports whether the node surely passes every check, from its Quick alone: the pod names no node,
// has no node selector or required affinity, requests nothing but CPU and memory that NodeResourcesFit checks,
// and the clean node has room. false means "run CheckNode", not "fails".
func (p *Pod) QuickPass(q *Quick) bool {
	return p.simple && q.Clean && (!q.HasPods || q.Pods+1 <= q.AllocPods) && p.cpu <= q.AllocCPU-q.CPU && p.mem <= q.AllocMem-q.Mem
}
