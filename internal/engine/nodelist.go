package engine

// The cluster's node list is shared with the answers that keep it: a verdict's or a summary's rows name their
// nodes by position in the list the evaluation walked, and the answer outlives the evaluation (and the
// extender's reader lock). Instead of a copy per evaluation (8 bytes a node, 40 KB at 5,000 nodes, fresh
// pages each time), the evaluation marks the list shared and the next change of the list copies it first.
// Changes have one writer at a time and no evaluation runs beside them (the Cluster's contract); evaluations
// may run beside one another (the extender's, under its reader lock) and each marks the list, hence an atomic
// flag, which the writer that comes after reads.

// sharedNodes is c.nodeList for an answer to keep: the next change copies the list before changing it.
func (c *Cluster) sharedNodes() []*Node {
	if !c.listShared.Load() {
		c.listShared.Store(true)
	}
	return c.nodeList
}

// ownNodes makes c.nodeList the cluster's own before a change: a copy when an answer keeps the list, room for
// one more node included.
func (c *Cluster) ownNodes() {
	if c.listShared.Load() {
		c.nodeList = append(make([]*Node, 0, len(c.nodeList)+1), c.nodeList...)
		c.listShared.Store(false)
	}
}
