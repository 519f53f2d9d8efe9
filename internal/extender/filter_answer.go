package extender

import (
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// filterAnswer is one filter answer in the making, kept between requests: which candidates stay and the
// failed nodes with their texts, collected in the summary's name order, which is the order encoding/json
// writes a map's keys in.
type filterAnswer struct {
	kept    []bool // per candidate, in the request's order
	rowFits []bool // per summary row: fits and is not locked
	fitting int    // nodes kept (each counted once)
	failed  []failedNode
	unres   []failedNode
}

type failedNode struct{ node, reason string }

var filterAnswers = sync.Pool{New: func() any { return &filterAnswer{} }}

func (a *filterAnswer) reset(candidates int) {
	a.kept = grown(a.kept, candidates)
	clear(a.failed)
	clear(a.unres)
	a.failed, a.unres, a.fitting = a.failed[:0], a.unres[:0], 0
}

func grown(b []bool, n int) []bool {
	b = slices.Grow(b[:0], n)[:n]
	clear(b)
	return b
}

// sort files every evaluated node and every candidate as the handler always has: a fitting node is kept
// unless another bind's live lock holds it; a node HAMi has not registered, or refused for good, is
// unresolvable; any other node failed with its reason; a candidate the cluster does not know is
// unregistered, and so is a failed node without a reason text (it is in both lists then).
func (a *filterAnswer) sort(s *Server, sum *engine.Summary, names []string, pod *corev1.Pod, now time.Time) {
	locks := s.state.NodeLocks() // usually none or a few
	a.rowFits = grown(a.rowFits, sum.Len())
	for i := 0; i < sum.Len(); i++ {
		row, node := sum.Row(i), sum.Name(i)
		code, reason := sum.Outcome(i)
		switch {
		case row.Fits:
			if len(locks) > 0 {
				if why := s.lockedReason(locks[node], node, pod, now); why != "" {
					a.failed = append(a.failed, failedNode{node, why})
					continue
				}
			}
			a.rowFits[i] = true
			a.fitting++
		case code == engine.NodeUnregistered:
			a.unres = append(a.unres, failedNode{node, hamiUnregistered})
		case engine.Unresolvable(code):
			a.unres = append(a.unres, failedNode{node, cmpOr(reason, hamiUnregistered)})
		default:
			a.failed = append(a.failed, failedNode{node, reason})
			if reason == "" {
				a.unres = append(a.unres, failedNode{node, hamiUnregistered})
			}
		}
	}
	for i, name := range names {
		switch row := sum.Requested(i); {
		case row < 0:
			a.unres = append(a.unres, failedNode{name, hamiUnregistered}) // unknown to the informer yet
		case a.rowFits[row]:
			a.kept[i] = true
		}
	}
}

func cmpOr(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// fitsMap is the kept nodes by name (for heldNodes), built only when a pod is nominated somewhere.
func (a *filterAnswer) fitsMap(sum *engine.Summary) map[string]bool {
	fits := make(map[string]bool, a.fitting)
	for i := range a.rowFits {
		if a.rowFits[i] {
			fits[sum.Name(i)] = true
		}
	}
	return fits
}

// drop takes a held node out of the kept candidates, with its reason.
func (a *filterAnswer) drop(names []string, node, why string) {
	a.failed = append(a.failed, failedNode{node, why})
	for i, name := range names {
		if name == node {
			a.kept[i] = false
		}
	}
	a.fitting--
}

// byNode puts a list in name order, one entry per node (the last written, as a map keeps it); lists are
// usually in order already.
func byNode(list []failedNode) []failedNode {
	less := func(x, y failedNode) int { return strings.Compare(x.node, y.node) }
	if slices.IsSortedFunc(list, less) && !hasRepeats(list) {
		return list
	}
	slices.SortStableFunc(list, less)
	out := list[:0]
	for _, f := range list {
		if len(out) > 0 && out[len(out)-1].node == f.node {
			out[len(out)-1] = f
			continue
		}
		out = append(out, f)
	}
	return out
}

func hasRepeats(sorted []failedNode) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i].node == sorted[i-1].node {
			return true
		}
	}
	return false
}

// appendTo writes the answer for a NodeNames request as encoding/json writes the ExtenderFilterResult.
func (a *filterAnswer) appendTo(b []byte, names []string) []byte {
	b = append(b, `{"Nodes":null,"NodeNames":[`...)
	first := true
	for i, name := range names {
		if a.kept[i] {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendString(b, name)
		}
	}
	b = append(b, `],"FailedNodes":`...)
	b = appendFailedList(b, byNode(a.failed))
	b = append(b, `,"FailedAndUnresolvableNodes":`...)
	b = appendFailedList(b, byNode(a.unres))
	return append(b, `,"Error":""}`...)
}

func appendFailedList(b []byte, list []failedNode) []byte {
	b = append(b, '{')
	for i, f := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f.node)
		b = append(b, ':')
		b = appendString(b, f.reason)
	}
	return append(b, '}')
}

// result is the answer as an ExtenderFilterResult, for a request that sent whole Node objects (rare).
func (a *filterAnswer) result() extenderv1.ExtenderFilterResult {
	res := extenderv1.ExtenderFilterResult{FailedNodes: extenderv1.FailedNodesMap{}, FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{}}
	for _, f := range a.failed {
		res.FailedNodes[f.node] = f.reason
	}
	for _, f := range a.unres {
		res.FailedAndUnresolvableNodes[f.node] = f.reason
	}
	return res
}
