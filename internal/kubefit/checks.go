// Package kubefit checks the standard node constraints kube-scheduler's Filter plugins apply before any
// scheduler extender (such as HAMi's) is called: NodeName, NodeUnschedulable, NodeAffinity, TaintToleration
// and NodeResourcesFit. It is pure: it reads the objects it is given and does no I/O.
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

// checks run in kube-scheduler's default Filter plugin order.
var checks = []check{
	{CheckNodeName, nodeNameFilter},
	{CheckNodeUnschedulable, nodeUnschedulableFilter},
	{CheckNodeAffinity, nodeAffinityFilter},
	{CheckTaintToleration, taintTolerationFilter},
	{CheckNodeResourcesFit, nodeResourcesFitFilter},
}

// Check evaluates the pod against every node. podsByNode are the pods already bound to each node
// (spec.nodeName), used for CPU/memory/pods-count accounting; pods in phase Succeeded/Failed do not count, nor
// does the pod itself. Unlike kube-scheduler, which stops at a node's first failing plugin, every check runs, so
// a node lists all that stand in the way. Results are in the order of nodes; a nil node gives an empty result.
func Check(pod *corev1.Pod, nodes []*corev1.Node, podsByNode map[string][]*corev1.Pod, ignoredResources []string) []NodeResult {
	if pod == nil {
		pod = &corev1.Pod{}
	}
	st := &podState{
		pod:      pod,
		requests: resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}),
		affinity: nodeaffinity.GetRequiredNodeAffinity(pod),
		ignored:  map[corev1.ResourceName]bool{},
	}
	for _, r := range ignoredResources {
		st.ignored[corev1.ResourceName(r)] = true
	}
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
