package engine

// The model's two indexes of pods: one entry per pod by namespace/name, and one record per node name for what
// the pods on it add, so that setting or removing a pod looks its key up once and its node once.

import "github.com/kubectl-hami/kubectl-hami/internal/kubefit"

// podEntry is what the model keeps of one pod by its namespace/name: its allocation while HAMi counts it, and
// where kube-scheduler counts its requests while it is bound (tracked only when Config.SchedulerName is set).
// A pod with neither has no entry.
type podEntry struct {
	alloc *PodAllocation
	kube  kubePod
}

// nodeRecord is what the pods on one node name add, whether or not the node is known: the engine's node (nil
// while it is not), its counted pods and its bound pods' kube-scheduler count. A record lives while any of
// the three is there (dropIfEmpty).
type nodeRecord struct {
	name string
	node *Node
	pods []*PodAllocation // the counted pods, in no order (PodAllocation.slot)
	kube kubefit.Usage    // the bound pods' count and requests; Pods 0: none
}

// record is the node name's record, made when there is none.
func (c *Cluster) record(name string) *nodeRecord {
	if r := c.records[name]; r != nil {
		return r
	}
	r := &nodeRecord{name: name, node: c.nodes[name]}
	c.records[name] = r
	return r
}

// dropIfEmpty forgets a record that holds nothing any more.
func (c *Cluster) dropIfEmpty(r *nodeRecord) {
	if r.node == nil && len(r.pods) == 0 && r.kube.Pods == 0 {
		delete(c.records, r.name)
	}
}

// unlist takes a counted pod out of the record's list: the last one takes its slot.
func (r *nodeRecord) unlist(p *PodAllocation) {
	last := len(r.pods) - 1
	moved := r.pods[last]
	r.pods[p.slot], moved.slot = moved, p.slot
	r.pods[last] = nil
	r.pods = r.pods[:last]
	if last == 0 {
		r.pods = nil // as a node without pods had no list
	}
}
