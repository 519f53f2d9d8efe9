package engine

import "sync"

// A verdict of thousands of nodes keeps each node's answer as a pointer-free row (NodeBrief, the extender's
// summary row) and a small side row for what a failing node adds (its container, node-level check, example
// device, detailed GPUs), and builds the NodeStatus list only when Verdict.Nodes is first read. Most readers
// want the summary, reasons, placement or feasible list (the UI's pending pods, proven fixes, preemption
// checks, the benchmarks): they no longer pay for 5,000 statuses and their examples, which were most of an
// evaluation's garbage and so most of the collector's work while a large model is live.

// statusRows is what a verdict keeps of its nodes until Verdict.Nodes builds their statuses.
type statusRows struct {
	once sync.Once
	nodeRows
	// parts are the extras of each range of rows the evaluation split the nodes into, in order, and starts
	// their first rows: a row's NodeBrief.more indexes its range's part (kept apart, not merged: no copy).
	parts  []rangeMore
	starts []int
	// containers are the request's container names and unhealthy the code its kind's devices fail with when
	// registered unhealthy (a facts-judged example of group 0), both by container index.
	containers []string
	unhealthy  []Code
	built      []NodeStatus // the statuses, once built
}

// nodeMore is what a node's status has beyond its row; NodeBrief.more is its index plus one in its range's part.
type nodeMore struct {
	check *Check // NodeStatus.Check
	// need, have and total are a facts-judged example's numbers (quickResult), on device gpu of the node.
	need, have, total int64
	gpu               int32
	container         int32 // index plus one in containers; 0: no container
	example           int32 // index plus one in its range's examples (a walk's); 0: none
	detail            int32 // index plus one in its range's details
	group             int8  // a facts-judged example's device group (nodefacts.go); -1: none
}

// rangeMore is what evaluating a range of nodes adds to a verdict's statusRows: its rows' extras, the
// examples as a walk left them and every GPU's result of the nodes asked for in detail.
type rangeMore struct {
	more     []nodeMore
	examples []GPUStatus
	details  [][]GPUStatus
}

// keep records node row's extras, when it has any.
func (m *rangeMore) keep(row *NodeBrief, x nodeMore) {
	if x.check == nil && x.container == 0 && x.example == 0 && x.detail == 0 && x.group < 0 {
		return
	}
	m.more = append(m.more, x)
	row.more = uint32(len(m.more))
}

// example keeps a walk's example and returns its index plus one; room is how many more the range may keep.
func (m *rangeMore) example(st GPUStatus, room int) int32 {
	if m.examples == nil {
		m.examples = make([]GPUStatus, 0, room) // one allocation, as the statuses' examples were
	}
	m.examples = append(m.examples, st)
	return int32(len(m.examples))
}

// detail keeps a node's every GPU result and returns its index plus one.
func (m *rangeMore) detail(gpus []GPUStatus) int32 {
	m.details = append(m.details, gpus)
	return int32(len(m.details))
}

// extras is row i's extras and its range's part, or nil.
func (s *statusRows) extras(i int) (*nodeMore, *rangeMore) {
	k := s.rows[i].more
	if k == 0 {
		return nil, nil
	}
	w := len(s.starts) - 1
	for s.starts[w] > i { // a handful of ranges, one per core
		w--
	}
	p := &s.parts[w]
	return &p.more[k-1], p
}

// statuses builds every row's NodeStatus, as the walk over the nodes would have written it.
func (s *statusRows) statuses() []NodeStatus {
	out := make([]NodeStatus, len(s.rows))
	count := 0
	for w := range s.parts {
		for _, m := range s.parts[w].more {
			if m.example > 0 || m.group >= 0 {
				count++
			}
		}
	}
	examples := make([]GPUStatus, count) // the statuses point into it: one per row that has an example
	var none GPUStatus                   // where a row without one writes nothing
	k := 0
	for i := range s.rows {
		ex := &none
		if k < len(examples) {
			ex = &examples[k]
		}
		if s.status(i, &out[i], ex) {
			k++
		}
	}
	return out
}

// status builds row i's NodeStatus into ns; a node with an example gets it in ex (and true).
func (s *statusRows) status(i int, ns *NodeStatus, ex *GPUStatus) bool {
	b := &s.rows[i]
	ns.Node, ns.Fits, ns.Score, ns.CardRank = s.nodes[i].Name, b.Fits, b.Score, int(b.CardRank)
	ns.Code, ns.Reason = s.outcome(i)
	m, part := s.extras(i)
	if m == nil {
		return false
	}
	ns.Check = m.check
	if m.container > 0 {
		ns.Container = s.containers[m.container-1]
	}
	if m.detail > 0 {
		ns.GPUs = part.details[m.detail-1]
	}
	switch {
	case m.example > 0:
		*ex = part.examples[m.example-1]
	case m.group >= 0:
		*ex = GPUStatus{Result: quickResult(int(m.group), s.unhealthy[m.container-1], m.need, m.have, m.total)}
		ex.identify(&s.nodes[i].GPUs[m.gpu])
	default:
		return false
	}
	ns.Example = ex
	return true
}

// check is row i's node-level check, or nil.
func (s *statusRows) check(i int) *Check {
	if m, _ := s.extras(i); m != nil {
		return m.check
	}
	return nil
}

// kindless counts the rows of nodes without any device of the pod's kind (MainReason).
func (s *statusRows) kindless() int {
	n := 0
	for i := range s.rows {
		if s.rows[i].Kindless {
			n++
		}
	}
	return n
}

// feasibleRanking is a verdict's fitting nodes until Verdict.Feasible first reads them: their rows, sorted
// then (best first) unless the evaluation was unranked.
type feasibleRanking struct {
	once     sync.Once
	names    []string
	nodes    []*Node     // the verdict's nodes (statusRows.nodes)
	rows     []NodeBrief // their ranks
	idx      []int       // the fitting rows, in name order
	unranked bool
	spread   bool
}

// rank sorts the fitting rows (sortFeasible) and names them.
func (r *feasibleRanking) rank() []string {
	if !r.unranked {
		sortFeasible(r.idx, r.spread, func(i int) nodeRank { return r.rows[i].rank() })
	}
	out := make([]string, len(r.idx))
	for k, i := range r.idx {
		out[k] = r.nodes[i].Name
	}
	return out
}
