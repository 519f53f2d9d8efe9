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
	// checked are the resources the pod requests that NodeResourcesFit compares, in its order.
	checked []corev1.ResourceName
}

// nodeInfo is a node with the requests of the pods already bound to it.
type nodeInfo struct {
	node      *corev1.Node
	requested corev1.ResourceList
	pods      int
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

// staticChecks are the checks that read only the node object and the pod, not the pods already on the node
// nor the node's cordon: what a bind can still refuse when kube-scheduler's view was stale.
var staticChecks = []check{
	{CheckNodeName, nodeNameFilter},
	{CheckTaintToleration, taintTolerationFilter},
	{CheckNodeAffinity, nodeAffinityFilter},
}

// Pod is a pod prepared once for checks node by node (kube-scheduler's PreFilter state).
type Pod struct{ st podState }

// Usage is what the pods bound to a node take from it: their number and the sum of their requests.
type Usage struct {
	Pods      int
	Requested corev1.ResourceList
}

// Add adds (sign +1) or removes (-1) one pod's requests.
func (u *Usage) Add(requests corev1.ResourceList, sign int) {
	u.Pods += sign
	if u.Requested == nil {
		u.Requested = corev1.ResourceList{}
	}
	for name, q := range requests {
		sum := u.Requested[name]
		if sign > 0 {
			sum.Add(q)
		} else {
			sum.Sub(q)
		}
		u.Requested[name] = sum
	}
}

// Requests is a pod's requests as NodeResourcesFit counts them (init containers as their peak, overhead).
func Requests(pod *corev1.Pod) corev1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
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
	return p
}

// CheckNode returns the failures of the first check the node fails, in kube-scheduler's order, as
// kube-scheduler stops at a node's first failing plugin (one plugin may report several reasons:
// NodeResourcesFit's "Insufficient cpu" and "Insufficient memory"); nil when the node passes them all.
// static runs only the checks that read the node object and the pod alone (NodeName, TaintToleration,
// NodeAffinity). u is the node's bound pods, the pod itself left out.
func (p *Pod) CheckNode(node *corev1.Node, u Usage, static bool) []Failure {
	list := checks
	if static {
		list = staticChecks
	}
	ni := &nodeInfo{node: node, requested: u.Requested, pods: u.Pods}
	for _, c := range list {
		if f := c.filter(&p.st, ni); len(f) > 0 {
			for i := range f {
				f[i].Check = c.name
			}
			return f
		}
	}
	return nil
}

// AllFailures returns every check the node fails, in kube-scheduler's order (kube-scheduler stops at the
// first; the rest say what else would have to change).
func (p *Pod) AllFailures(node *corev1.Node, u Usage) []Failure {
	ni := &nodeInfo{node: node, requested: u.Requested, pods: u.Pods}
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
	if pod == nil {
		pod = &corev1.Pod{}
	}
	st := &Prepare(pod, ignoredResources).st
	results := make([]NodeResult, len(nodes))
	for i, node := range nodes {
		if node == nil {
			continue
		}
		ni := newNodeInfo(pod, node, podsByNode[node.Name])
		results[i].Node = node.Name
		for _, c := range checks {
			for _, f := range c.filter(st, ni) {
				f.Check = c.name
				results[i].Failures = append(results[i].Failures, f)
			}
		}
	}
	return results
}

func newNodeInfo(pod *corev1.Pod, node *corev1.Node, bound []*corev1.Pod) *nodeInfo {
	ni := &nodeInfo{node: node, requested: corev1.ResourceList{}}
	for _, p := range bound {
		if p == nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || samePod(p, pod) {
			continue
		}
		ni.pods++
		if len(p.Spec.InitContainers) == 0 && p.Spec.Overhead == nil && p.Spec.Resources == nil {
			// The common case, summed in place: PodRequests would build and merge a map per pod, which
			// dominates on large clusters, to return the same sum of container requests.
			for i := range p.Spec.Containers {
				for name, q := range p.Spec.Containers[i].Resources.Requests {
					sum := ni.requested[name]
					sum.Add(q)
					ni.requested[name] = sum
				}
			}
			continue
		}
		for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			sum := ni.requested[name]
			sum.Add(q)
			ni.requested[name] = sum
		}
	}
	return ni
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
		Reason:  fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value),
		Message: "the pod does not tolerate taint " + taint.ToString(),
	}}
}

// doNotScheduleTaint keeps the taints the filter looks at: NoSchedule and NoExecute, not PreferNoSchedule.
func doNotScheduleTaint(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// Requests is the prepared pod's requests (Requests of the pod given to Prepare).
func (p *Pod) Requests() corev1.ResourceList { return p.st.requests }

// UntoleratedTaint is the first NoSchedule or NoExecute taint of the node the pod does not tolerate.
func UntoleratedTaint(pod *corev1.Pod, node *corev1.Node) (corev1.Taint, bool) {
	t, bad := schedcorev1.FindMatchingUntoleratedTaint(logr.Discard(), node.Spec.Taints, pod.Spec.Tolerations, doNotScheduleTaint, false)
	return t, bad
}
