package engine

// The bulk load: a model built from lists (a snapshot's nodes, then its pods), with the work that SetNode and
// SetPod repeat per object for an informer's events done once for the list.

import (
	"reflect"
	"unsafe"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
)

// bulkLoad is what SetPods keeps while it runs.
type bulkLoad struct {
	// requests are kubefit.ReadRequests of the one-container pods read so far, by their requests map: the
	// snapshot reader hands the pods of a workload one decoded map, and no object changes during SetPods.
	requests map[unsafe.Pointer]kubefit.Amounts
}

// SetNodes is SetNode of every node in order, the node maps sized once when the cluster has none yet.
func (c *Cluster) SetNodes(nodes []*corev1.Node) {
	if len(c.nodes) == 0 {
		c.nodes = make(map[string]*Node, len(nodes))
		c.kube.nodes = make(map[string]*kubefit.Node, len(nodes))
		c.nodeNames = make([]string, 0, len(nodes))
		c.nodeList = make([]*Node, 0, len(nodes))
	}
	for _, n := range nodes {
		c.SetNode(n)
	}
}

// SetPods is SetPod of every pod in order, with the same model and problems (Problems lists them): the pod
// maps are sized once when the cluster counts no pod yet, each node's kube-scheduler view (Node.kq) is
// refreshed once at the end instead of after every pod, and pods sharing one requests map read it once.
func (c *Cluster) SetPods(pods []*corev1.Pod) {
	c.SetPodsFrom(len(pods), func(i int) *corev1.Pod { return pods[i] })
}

// SetPodsFrom is SetPods of n pods, the i-th given by pod(i): a snapshot builds each pod for the call from
// its compact record, and the pods are never all held at once. The model keeps nothing of a pod object.
func (c *Cluster) SetPodsFrom(n int, pod func(i int) *corev1.Pod) {
	if len(c.pods) == 0 {
		c.pods = make(map[string]*PodAllocation, n)
		c.byNode = make(map[string][]*PodAllocation, len(c.nodes))
	}
	if c.cfg.SchedulerName != "" && len(c.kube.where) == 0 {
		c.kube.usage, c.kube.where = make(map[string]*kubeUse, len(c.nodes)), make(map[string]kubePod, n)
	}
	c.bulk = &bulkLoad{requests: map[unsafe.Pointer]kubefit.Amounts{}}
	for i := range n {
		c.SetPod(pod(i))
	}
	c.bulk = nil
	// A node whose last pod left during the load had its Quick reset then (untrackKubePod).
	for _, ku := range c.kube.usage {
		ku.requick()
	}
}

// readRequests is kubefit.ReadRequests(pod), from SetPods' memo for a pod of one container whose requests
// are all it asks (no init container, overhead or pod-level resources).
func (c *Cluster) readRequests(pod *corev1.Pod) kubefit.Amounts {
	s := &pod.Spec
	if c.bulk == nil || len(s.Containers) != 1 || len(s.InitContainers) > 0 || s.Overhead != nil || s.Resources != nil ||
		len(s.Containers[0].Resources.Requests) == 0 {
		return kubefit.ReadRequests(pod)
	}
	key := reflect.ValueOf(s.Containers[0].Resources.Requests).UnsafePointer()
	if a, ok := c.bulk.requests[key]; ok {
		return a
	}
	a := kubefit.ReadRequests(pod)
	c.bulk.requests[key] = a
	return a
}
