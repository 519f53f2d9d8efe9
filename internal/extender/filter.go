package extender

import (
	"fmt"
	"net/http"

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
func (s *Server) handleFilter(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderArgs
	if !decodeArgs(w, r, &args) {
		return
	}
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
	var v *engine.Verdict
	s.state.Read(func(c *engine.Cluster) {
		// kube-scheduler has run its own filters on these nodes (with the pods it assumed, which the extender
		// cannot see): /filter answers for HAMi's gates only, in HAMi's words.
		v = c.Evaluate(args.Pod, engine.EvalOptions{Now: now, Nodes: nonNil(names), Unranked: true, Kube: engine.KubeOff})
		s.recent.store(args.Pod, c.Version(), v)
	})
	locks := s.state.NodeLocks() // usually none or a few
	res := extenderv1.ExtenderFilterResult{FailedNodes: extenderv1.FailedNodesMap{}, FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{}}
	fits := make(map[string]bool, len(v.Nodes))
	if v.NoGPURequest {
		for _, n := range names {
			fits[n] = true
		}
	} else {
		for i := range v.Nodes {
			ns := &v.Nodes[i]
			switch {
			case ns.Fits:
				// A node held by another bind's live lock is out for this moment: a bind there would fail.
				if why := s.lockedReason(locks[ns.Node], ns.Node, args.Pod, now); why != "" {
					res.FailedNodes[ns.Node] = why
					continue
				}
				fits[ns.Node] = true
			case ns.Code == engine.NodeUnregistered:
				res.FailedAndUnresolvableNodes[ns.Node] = hamiUnregistered
			case engine.Unresolvable(ns.Code):
				res.FailedAndUnresolvableNodes[ns.Node] = ns.Reason
			default:
				res.FailedNodes[ns.Node] = ns.Reason
			}
		}
		for _, n := range names {
			if !fits[n] && res.FailedNodes[n] == "" && res.FailedAndUnresolvableNodes[n] == "" {
				res.FailedAndUnresolvableNodes[n] = hamiUnregistered // unknown to the informer yet
			}
		}
	}
	if !v.NoGPURequest && !s.opts.DisablePreemption {
		// GPUs freed by a preemption are held for the pod nominated to them (preempt_hold.go).
		for node, why := range s.state.heldNodes(args.Pod, fits, now) {
			delete(fits, node)
			res.FailedNodes[node] = why
		}
	}
	s.metrics.decision(v)
	if !v.Fits && !v.NoGPURequest {
		s.events.pending(r.Context(), s, args.Pod, v)
	}
	if !v.NoGPURequest && len(fits) == 0 {
		s.noticeUnschedulable(args.Pod) // kube-scheduler's preemption will not help it (preemptor.go)
	}
	if args.NodeNames != nil || args.Nodes == nil {
		kept := make([]string, 0, len(fits))
		for _, n := range names {
			if fits[n] {
				kept = append(kept, n)
			}
		}
		res.NodeNames = &kept
	} else {
		kept := &corev1.NodeList{}
		for i := range args.Nodes.Items {
			if fits[args.Nodes.Items[i].Name] {
				kept.Items = append(kept.Items, args.Nodes.Items[i])
			}
		}
		res.Nodes = kept
	}
	writeWire(w, func(b []byte) ([]byte, error) { return appendFilterResult(b, &res) })
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
	if !decodeArgs(w, r, &args) {
		return
	}
	names := candidates(&args)
	if !s.candidatesBounded(w, names) {
		return
	}
	out := make(extenderv1.HostPriorityList, 0, len(names))
	if args.Pod == nil {
		writeWire(w, func(b []byte) ([]byte, error) { return appendPriorities(b, out), nil })
		return
	}
	var v *engine.Verdict
	s.state.Read(func(c *engine.Cluster) {
		// kube-scheduler asks for priorities right after filtering: the filter's verdict answers when the
		// cluster has not changed in between and it covers every candidate.
		if cached := s.recent.get(args.Pod, c.Version()); cached != nil && covers(c, cached, names) {
			v = cached
			return
		}
		v = c.Evaluate(args.Pod, engine.EvalOptions{Now: s.now(), Nodes: nonNil(names), Kube: engine.KubeOff})
	})
	score := make(map[string]int64, len(v.Nodes))
	if !v.NoGPURequest {
		for i := range v.Nodes {
			if ns := &v.Nodes[i]; ns.Fits {
				score[ns.Node] = extenderScore(v.Request.NodePolicy, ns.Score)
				if v.Card != nil && v.Card.Enforced && len(v.Card.Alternatives) > 1 {
					score[ns.Node] = cardBand(ns.CardRank, score[ns.Node])
				}
			}
		}
	}
	for _, n := range names {
		out = append(out, extenderv1.HostPriority{Host: n, Score: score[n]})
	}
	writeWire(w, func(b []byte) ([]byte, error) { return appendPriorities(b, out), nil })
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
