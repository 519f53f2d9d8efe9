package engine

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Summary is a verdict for callers that answer per node in HAMi's words and show nothing else (the extender's
// filter and prioritize): the verdict's answer (Fits, Summary, Reasons, Explanation, Hints, Placement, Quota,
// Card) and one row per evaluated node instead of a NodeStatus with its example GPU. Its rows say exactly
// what the verdict's nodes say (TestSummaryMatchesVerdict); evaluating a pod of HAMi's profile allocates them
// as one array without pointers (24 bytes a node, which the collector does not scan) and nothing per node:
// a node's code and reason text are an index into the summary's few distinct outcomes.
type Summary struct {
	// Verdict is Evaluate's verdict without Nodes and Feasible: Rows and Feasible stand for them.
	Verdict *Verdict

	nodeRows
	feasible []int // rows of the fitting nodes: best first, or in name order for EvalOptions.Unranked
	// request is, for each name of EvalOptions.Nodes, its row (-1: the cluster has no such node); nil when
	// every node was evaluated (then a node's row is its place in the cluster's names).
	request []int32
	// pos is, for each node of the cluster at version, its row plus one (0: not evaluated); nil when every
	// node was evaluated.
	pos     []int32
	cluster *Cluster
	version uint64
}

// NodeBrief is one node's answer in a Summary: NodeStatus without its container, numbers and GPUs; its code
// and reason text are Summary.Outcome's.
type NodeBrief struct {
	Score    float64
	CardRank int32
	outcome  uint32 // 1 + the index of the node's code and reason in Summary.outcomes; 0 for none
	Fits     bool
	// Kindless marks a node without any device of the pod's kind (MainReason leaves it out of scope).
	Kindless bool
	// more is 1 + the index of the node's extras in its range's part of a verdict's statusRows
	// (lazystatus.go); 0 for none and in a Summary.
	more uint32
}

// nodeRows are the evaluated nodes' rows, a Summary's and a verdict's until its statuses are built
// (lazystatus.go).
type nodeRows struct {
	nodes    []*Node      // the evaluated nodes, in name order (a copy: the cluster's list changes in place)
	rows     []NodeBrief  // parallel to nodes
	outcomes outcomeTable // NodeBrief.outcome-1 indexes it
}

// outcome is row i's code and reason text.
func (r *nodeRows) outcome(i int) (Code, string) {
	if k := r.rows[i].outcome; k > 0 {
		return r.outcomes[k-1].code, r.outcomes[k-1].reason
	}
	return "", ""
}

// statusesForSummaryLine gives summaryLine the node statuses it reads: only when a reason is one of
// kube-scheduler's checks (it counts their words per node), and then only each node's name, fit, code and text.
func (r *nodeRows) statusesForSummaryLine(reasons []ReasonCount) []NodeStatus {
	kube := false
	for _, rc := range reasons {
		kube = kube || IsKubeCheck(rc.Code)
	}
	if !kube {
		return nil
	}
	out := make([]NodeStatus, len(r.rows))
	for i := range r.rows {
		out[i] = NodeStatus{Node: r.nodes[i].Name, Fits: r.rows[i].Fits}
		out[i].Code, out[i].Reason = r.outcome(i)
	}
	return out
}

// nodeOutcome is a node's deciding code and HAMi's FailedNodes text (NodeStatus.Code and Reason).
type nodeOutcome struct {
	code   Code
	reason string
}

// outcomeTable collects the distinct outcomes of a range of nodes. Neighbouring nodes mostly share one (the
// reason texts of GPU failures are built once per fitter and shared), so the last few are compared.
type outcomeTable []nodeOutcome

func (t *outcomeTable) brief(ns *NodeStatus) NodeBrief {
	b := NodeBrief{Score: ns.Score, CardRank: int32(ns.CardRank), Fits: ns.Fits, Kindless: kindless(ns)}
	if ns.Code == "" && ns.Reason == "" {
		return b
	}
	for k := len(*t) - 1; k >= max(0, len(*t)-4); k-- {
		// The texts of neighbouring nodes are mostly the same strings (reasonsFor's cache): compared by pointer first.
		if o := &(*t)[k]; sameCode(o.code, ns.Code) && sameCode(Code(o.reason), Code(ns.Reason)) {
			b.outcome = uint32(k + 1)
			return b
		}
	}
	*t = append(*t, nodeOutcome{ns.Code, ns.Reason})
	b.outcome = uint32(len(*t))
	return b
}

func (b *NodeBrief) rank() nodeRank { return nodeRank{int(b.CardRank), b.Score} }

// Summarize is Evaluate answering in a Summary. EvalOptions.DetailNodes and DetailAll do not apply.
func (c *Cluster) Summarize(pod *corev1.Pod, opts EvalOptions) *Summary {
	opts.DetailNodes, opts.DetailAll = nil, false
	s := &Summary{cluster: c, version: c.version}
	s.Verdict = c.evaluate(pod, opts, s)
	if s.rows == nil && s.Verdict.nodes != nil {
		s.fromNodes(opts.Nodes)
	}
	return s
}

// fromNodes turns the NodeStatus rows of the paths that fill them (another scheduler's pod, a card-only pod,
// kube-scheduler's checks alone) into the summary's.
func (s *Summary) fromNodes(requested []string) {
	v := s.Verdict
	s.nodes = make([]*Node, len(v.nodes))
	s.rows = make([]NodeBrief, len(v.nodes))
	var table outcomeTable
	for i := range v.nodes {
		s.nodes[i], s.rows[i] = s.cluster.nodes[v.nodes[i].Node], table.brief(&v.nodes[i])
	}
	s.outcomes = table
	s.feasible = make([]int, 0, len(v.feasible))
	for _, name := range v.feasible {
		s.feasible = append(s.feasible, s.search(name))
	}
	if requested != nil || len(s.nodes) != len(s.cluster.nodeNames) {
		// rows by name search: these paths are rare, and the names of a subset are sorted like the cluster's
		s.request = make([]int32, len(requested))
		for i, name := range requested {
			s.request[i] = int32(s.search(name))
		}
		s.pos = make([]int32, len(s.cluster.nodeList))
		for i, n := range s.nodes {
			s.pos[n.pos] = int32(i + 1)
		}
	}
	v.nodes, v.feasible = nil, nil
}

// Len is the number of evaluated nodes.
func (s *Summary) Len() int { return len(s.rows) }

// Name is the name of row i; rows are in name order.
func (s *Summary) Name(i int) string { return s.nodes[i].Name }

// Row is row i.
func (s *Summary) Row(i int) *NodeBrief { return &s.rows[i] }

// Outcome is row i's deciding code and HAMi's FailedNodes text (NodeStatus.Code and Reason); empty for a
// node that fits.
func (s *Summary) Outcome(i int) (Code, string) { return s.outcome(i) }

// Requested is the row of EvalOptions.Nodes[i], or -1 when the cluster has no such node.
func (s *Summary) Requested(i int) int {
	if s.request == nil { // every node evaluated, or none (a pod asking for no device)
		if i < len(s.rows) {
			return i
		}
		return -1
	}
	return int(s.request[i])
}

// Requests is the number of names EvalOptions.Nodes had (0 when it was nil).
func (s *Summary) Requests() int { return len(s.request) }

// Find is the row of the named node, or -1 when it was not evaluated. With the cluster the summary was made
// of, unchanged since (the caller holds its read lock), it costs a map lookup; otherwise a search by name.
func (s *Summary) Find(c *Cluster, name string) int {
	if c != s.cluster || c.version != s.version {
		return s.search(name)
	}
	n := c.nodes[name]
	switch {
	case n == nil:
		return -1
	case s.pos != nil:
		return int(s.pos[n.pos]) - 1
	case len(s.rows) == len(c.nodeList):
		return n.pos // every node was evaluated, in the cluster's order
	}
	return s.search(name) // no node was (a pod asking for no device)
}

func (s *Summary) search(name string) int {
	if i := sort.Search(len(s.nodes), func(i int) bool { return s.nodes[i].Name >= name }); i < len(s.nodes) && s.nodes[i].Name == name {
		return i
	}
	return -1
}

// Feasible is Verdict.Feasible: the fitting nodes, best first (in name order for EvalOptions.Unranked).
func (s *Summary) Feasible() []string {
	out := make([]string, len(s.feasible))
	for k, i := range s.feasible {
		out[k] = s.nodes[i].Name
	}
	return out
}

// MainReason is MainReason of the summary's verdict.
func (s *Summary) MainReason() ReasonCount {
	none := 0
	for i := range s.rows {
		if s.rows[i].Kindless {
			none++
		}
	}
	return mainReason(s.Verdict.Reasons, none)
}

// subsetIndexed is subset without the names, with each name's row (request) and each cluster node's row
// plus one (pos).
func (c *Cluster) subsetIndexed(names []string) (nodes []*Node, request, pos []int32) {
	pos = make([]int32, len(c.nodeList))
	request = make([]int32, len(names))
	count := 0
	for i, name := range names {
		n := c.nodes[name]
		if n == nil {
			request[i] = -1
			continue
		}
		request[i] = int32(n.pos)
		if pos[n.pos] == 0 {
			pos[n.pos] = 1
			count++
		}
	}
	nodes = make([]*Node, 0, count)
	for p, m := range pos {
		if m != 0 {
			nodes = append(nodes, c.nodeList[p])
			pos[p] = int32(len(nodes))
		}
	}
	for i, p := range request {
		if p >= 0 {
			request[i] = pos[p] - 1
		}
	}
	return nodes, request, pos
}
