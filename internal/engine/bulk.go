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
	requests map[unsafe.Pointer]*kubefit.Amounts
	// blocks are the counted pods' allocations, made a chunk at a time instead of one by one.
	blocks []podAllocationBlock
	// keys holds the pods' namespace/name keys, written one after another into chunks instead of a string
	// each (the model keeps them: its pod index and each allocation's Key).
	keys []byte
}

// keyChunk is the size of one chunk of pod keys (about 200 keys).
const keyChunk = 4 << 10

// podKey is namespace/name, from the bulk load's key chunks while it runs.
func (c *Cluster) podKey(namespace, name string) string {
	if c.bulk == nil {
		return namespace + "/" + name
	}
	b := c.bulk
	n := len(namespace) + 1 + len(name)
	if cap(b.keys)-len(b.keys) < n {
		b.keys = make([]byte, 0, max(keyChunk, n))
	}
	start := len(b.keys)
	b.keys = append(append(append(b.keys, namespace...), '/'), name...)
	return unsafe.String(&b.keys[start], n) // the bytes are never written again: a chunk is only appended to
}

// blockChunk is how many pod allocations SetPods makes at once, about 64 KiB of them (whole pages: no room is
// lost to rounding): a chunk stays in memory while one of its pods is counted, so a chunk is small beside a
// large cluster's pods and large beside the cost of one allocation.
const blockChunk = (64 << 10) / unsafe.Sizeof(podAllocationBlock{})

// slab is where podAllocation takes its blocks from: the bulk load's chunks, nil (one allocation a pod) when
// no bulk load runs.
func (b *bulkLoad) slab() *[]podAllocationBlock {
	if b == nil {
		return nil
	}
	return &b.blocks
}

// newBlock is a zero pod allocation block, from the slab's chunk when there is one.
func newBlock(slab *[]podAllocationBlock) *podAllocationBlock {
	if slab == nil {
		return new(podAllocationBlock)
	}
	if len(*slab) == 0 {
		*slab = make([]podAllocationBlock, blockChunk)
	}
	b := &(*slab)[0]
	*slab = (*slab)[1:]
	return b
}

// SetNodes is SetNode of every node in order, the node maps sized once when the cluster has none yet.
func (c *Cluster) SetNodes(nodes []*corev1.Node) {
	if len(c.nodes) == 0 {
		c.nodes = make(map[string]*Node, len(nodes))
		if len(c.records) == 0 {
			c.records = make(map[string]*nodeRecord, len(nodes))
		}
		c.kube.nodes = make(map[string]*kubefit.Node, len(nodes))
		c.nodeNames = make([]string, 0, len(nodes))
		c.nodeList = make([]*Node, 0, len(nodes))
		c.listShared.Store(false) // a new list: an answer keeps the old one
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
		c.pods = make(map[string]podEntry, n)
	}
	c.bulk = &bulkLoad{requests: map[unsafe.Pointer]*kubefit.Amounts{}}
	for i := range n {
		c.SetPod(pod(i))
	}
	c.bulk = nil
	if c.cfg.SchedulerName != "" {
		// A node whose last pod left during the load had its Quick reset then (untrackKubePod); refreshing a
		// record without bound pods gives the same Quick again.
		for _, r := range c.records {
			r.requick()
		}
	}
}

// noRequests is the requests of every pod that requests nothing: one value, never written.
var noRequests kubefit.Amounts

// readRequests is kubefit.ReadRequests(pod), from SetPods' memo for a pod of one container whose requests
// are all it asks (no init container, overhead or pod-level resources): the pods of the memo share one.
func (c *Cluster) readRequests(pod *corev1.Pod) *kubefit.Amounts {
	s := &pod.Spec
	if c.bulk == nil || len(s.Containers) != 1 || len(s.InitContainers) > 0 || s.Overhead != nil || s.Resources != nil ||
		len(s.Containers[0].Resources.Requests) == 0 {
		if a := kubefit.ReadRequests(pod); !a.Empty() {
			return &a
		}
		return &noRequests
	}
	key := reflect.ValueOf(s.Containers[0].Resources.Requests).UnsafePointer()
	if a, ok := c.bulk.requests[key]; ok {
		return a
	}
	a := kubefit.ReadRequests(pod)
	c.bulk.requests[key] = &a
	return &a
}
