package extender

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// candidates are the node names kube-scheduler offers, from NodeNames (nodeCacheCapable) or Nodes.
func candidates(args *extenderv1.ExtenderArgs) []string {
	if args.NodeNames != nil {
		return *args.NodeNames
	}
	if args.Nodes == nil {
		return nil
	}
	names := make([]string, len(args.Nodes.Items))
	for i := range args.Nodes.Items {
		names[i] = args.Nodes.Items[i].Name
	}
	return names
}

// handleFilter returns every feasible node, and HAMi's reason text for each other node so kube-scheduler's
// FailedScheduling event carries it. Unlike HAMi it does not pick the node here: prioritize ranks the
// feasible nodes and kube-scheduler's own scoring still counts.
//
// The evaluation is a summary (one row per node, nothing allocated per node) and the answer is written from
// its rows straight into the wire buffer: no per-request map or list of names (TestFilterAnswersAsBefore
// holds the bytes to what the handler wrote from a full verdict).
func (s *Server) handleFilter(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderArgs
	body, ok := decodePooledArgs(w, r, &args)
	if !ok {
		return
	}
	defer body.release() // NodeNames are views of the body: nothing below keeps them
	if args.Pod == nil {
		writeWire(w, func(b []byte) ([]byte, error) {
			return appendFilterResult(b, &extenderv1.ExtenderFilterResult{Error: "the request has no pod"})
		})
		return
	}
	names := candidates(&args)
	if !s.candidatesBounded(w, names) {
		return
	}
	now := s.now()
	var sum *engine.Summary
	s.state.Read(func(c *engine.Cluster) {
		// kube-scheduler has run its own filters on these nodes (with the pods it assumed, which the extender
		// cannot see): /filter answers for HAMi's gates only, in HAMi's words.
		sum = c.Summarize(args.Pod, engine.EvalOptions{Now: now, Nodes: nonNil(names), Unranked: true, Kube: engine.KubeOff})
		s.recent.store(args.Pod, c.Version(), sum)
	})
	v := sum.Verdict
	a := filterAnswers.Get().(*filterAnswer)
	defer filterAnswers.Put(a)
	a.reset(len(names))
	if v.NoGPURequest {
		for i := range names {
			a.kept[i] = true
		}
	} else {
		a.sort(s, sum, names, args.Pod, now)
	}
	if !v.NoGPURequest && !s.opts.DisablePreemption && s.state.holdsAny() {
		// GPUs freed by a preemption are held for the pod nominated to them (preempt_hold.go).
		for node, why := range s.state.heldNodes(args.Pod, a.fitsMap(sum), now) {
			a.drop(names, node, why)
		}
	}
	s.metrics.decision(sum)
	if !v.Fits && !v.NoGPURequest {
		s.events.pending(r.Context(), s, args.Pod, v)
	}
	if !v.NoGPURequest && a.fitting == 0 {
		s.noticeUnschedulable(args.Pod) // kube-scheduler's preemption will not help it (preemptor.go)
	}
	if args.NodeNames == nil && args.Nodes != nil {
		res := a.result()
		kept := &corev1.NodeList{}
		for i := range args.Nodes.Items {
			if a.kept[i] {
				kept.Items = append(kept.Items, args.Nodes.Items[i])
			}
		}
		res.Nodes = kept
		writeWire(w, func(b []byte) ([]byte, error) { return appendFilterResult(b, &res) })
		return
	}
	writeWire(w, func(b []byte) ([]byte, error) { return a.appendTo(b, names), nil })
}

// candidatesBounded answers 400 when the request names more candidate nodes than the cluster could have
// (kube-scheduler offers each node once): the work and the answer stay proportional to the cluster.
func (s *Server) candidatesBounded(w http.ResponseWriter, names []string) bool {
	nodes, _ := s.state.NodeStats()
	if limit := 2*nodes + 64; len(names) > limit {
		http.Error(w, fmt.Sprintf("the request names %d candidate nodes; the cluster has %d", len(names), nodes), http.StatusBadRequest)
		return false
	}
	return true
}

// hamiUnregistered is HAMi's FailedNodes text for a node it has not registered (pkg/scheduler/scheduler.go:851);
// the commands keep the code, NodeUnregistered.
const hamiUnregistered = "node unregistered"

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// handlePrioritize maps the engine's node scores (0..30, binpack prefers high, spread low) onto the
// extender range 0..10 for the feasible nodes; the others get 0.
func (s *Server) handlePrioritize(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderArgs
	body, ok := decodePooledArgs(w, r, &args)
	if !ok {
		return
	}
	defer body.release()
	names := candidates(&args)
	if !s.candidatesBounded(w, names) {
		return
	}
	if args.Pod == nil {
		writeWire(w, func(b []byte) ([]byte, error) { return append(b, "[]"...), nil })
		return
	}
	rows := rowBuffers.Get().(*[]int32)
	defer rowBuffers.Put(rows)
	var sum *engine.Summary
	s.state.Read(func(c *engine.Cluster) {
		// kube-scheduler asks for priorities right after filtering: the filter's verdict answers when the
		// cluster has not changed in between and it covers every candidate.
		if cached := s.recent.get(args.Pod, c.Version()); cached != nil {
			if *rows, ok = rowsOf(c, cached, names, (*rows)[:0]); ok {
				sum = cached
				return
			}
		}
		sum = c.Summarize(args.Pod, engine.EvalOptions{Now: s.now(), Nodes: nonNil(names), Kube: engine.KubeOff})
		*rows = (*rows)[:0]
		for i := range names {
			*rows = append(*rows, int32(sum.Requested(i)))
		}
	})
	v := sum.Verdict
	banded := v.Card != nil && v.Card.Enforced && len(v.Card.Alternatives) > 1
	writeWire(w, func(b []byte) ([]byte, error) {
		b = append(b, '[')
		for i, name := range names {
			if i > 0 {
				b = append(b, ',')
			}
			var score int64
			if row := (*rows)[i]; row >= 0 && !v.NoGPURequest {
				if nb := sum.Row(int(row)); nb.Fits {
					score = extenderScore(v.Request.NodePolicy, nb.Score)
					if banded {
						score = cardBand(int(nb.CardRank), score)
					}
				}
			}
			b = append(b, `{"Host":`...)
			b = appendString(b, name)
			b = append(b, `,"Score":`...)
			b = strconv.AppendInt(b, score, 10)
			b = append(b, '}')
		}
		return append(b, ']'), nil
	})
}

// rowBuffers keep prioritize's candidate rows between requests.
var rowBuffers = sync.Pool{New: func() any { b := make([]int32, 0, 1024); return &b }}

// rowsOf appends each candidate's row in the summary (-1 when not evaluated); false when a candidate the
// cluster knows was not evaluated (the summary does not cover it). Callers hold the cluster's read lock.
//
// kube-scheduler sends prioritize the nodes filter kept, in filter's order: each is looked for first among
// the next few fitting candidates of filter's request (a string compare; at most 64 candidates looked at),
// then by name (a map lookup).
func rowsOf(c *engine.Cluster, sum *engine.Summary, names []string, rows []int32) ([]int32, bool) {
	next := 0 // filter's candidate after the last one found
	for _, name := range names {
		row := -1
		for k, tried := next, 0; k < min(sum.Requests(), next+64) && tried < 4; k++ {
			r := sum.Requested(k)
			if r < 0 || !sum.Row(r).Fits {
				continue // filter did not keep it: prioritize does not get it
			}
			if sum.Name(r) == name {
				row, next = r, k+1
				break
			}
			tried++
		}
		if row < 0 {
			if row = sum.Find(c, name); row < 0 && c.Node(name) != nil {
				return rows, false
			}
		}
		rows = append(rows, int32(row))
	}
	return rows, true
}

// cardBand puts the card alternative preferred by volcano.sh/card.name ahead of the node policy: the first
// alternative's nodes score 6-10, the second's 3-5, later ones 0-2; the policy orders nodes within a band.
func cardBand(rank int, policyScore int64) int64 {
	switch rank {
	case 0:
		return 6 + policyScore*4/extenderv1.MaxExtenderPriority
	case 1:
		return 3 + policyScore*2/extenderv1.MaxExtenderPriority
	}
	return policyScore * 2 / extenderv1.MaxExtenderPriority
}

// extenderScore maps an engine node score (0..30) to 0..MaxExtenderPriority.
func extenderScore(policy string, engineScore float64) int64 {
	frac := min(max(engineScore/30, 0), 1)
	if policy == engine.PolicySpread {
		frac = 1 - frac
	}
	return int64(frac*float64(extenderv1.MaxExtenderPriority) + 0.5)
}
