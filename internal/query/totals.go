package query

import "github.com/kubectl-hami/kubectl-hami/internal/engine"

// NodeSums are the sums over a node's GPUs: sharing slots, memory (MiB) and cores (percent), allocated and total.
type NodeSums struct {
	Slots, UsedSlots int64
	Mem, UsedMem     int64
	Cores, UsedCores int64
}

// SumNode adds up a node's GPUs; an unregistered node has none HAMi can use (its GPUs may still be read, as on
// a node whose register form the HAMi version cannot read).
func SumNode(n *engine.Node) NodeSums {
	var s NodeSums
	if !n.Registered {
		return s
	}
	for i := range n.GPUs {
		g := &n.GPUs[i]
		s.Slots += int64(g.Slots)
		s.UsedSlots += int64(g.UsedSlots)
		s.Mem += g.TotalMem
		s.UsedMem += g.UsedMem
		s.Cores += g.TotalCores
		s.UsedCores += g.UsedCores
	}
	return s
}

// Totals are the cluster-wide sums of top's summary line and the UI's header.
type Totals struct {
	Nodes, GPUs, Pods int
	NodeSums
}

// Add counts one node: its GPUs, the pods counted on it and its sums.
func (t *Totals) Add(n *engine.Node, sums NodeSums, pods int) {
	t.Nodes++
	if n.Registered {
		t.GPUs += len(n.GPUs)
	}
	t.Pods += pods
	t.Slots += sums.Slots
	t.UsedSlots += sums.UsedSlots
	t.Mem += sums.Mem
	t.UsedMem += sums.UsedMem
	t.Cores += sums.Cores
	t.UsedCores += sums.UsedCores
}

// ClusterTotals sums every node of the model.
func ClusterTotals(c *engine.Cluster) Totals {
	var t Totals
	for _, name := range c.NodeNames() {
		n := c.Node(name)
		t.Add(n, SumNode(n), c.PodCount(name))
	}
	return t
}
