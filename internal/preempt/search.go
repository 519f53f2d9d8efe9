package preempt

import (
	"fmt"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// Options tune a search. The zero value searches as kube-scheduler's DefaultPreemption does by default.
type Options struct {
	// Eval are the evaluation options the gates run with (KubeOff on the extender's cluster).
	Eval engine.EvalOptions
	// MaxCandidates stops the search once this many nodes would work (with at least one violating no
	// PodDisruptionBudget): kube-scheduler's numCandidates. 0 is its default, 10 % of the nodes but at least
	// 100; a negative value searches every node.
	MaxCandidates int
}

// Victim is one pod the preemption would evict.
type Victim struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Priority  int32  `json:"priority"`
	// ViolatesPDB: evicting it takes a PodDisruptionBudget below its allowed disruptions.
	ViolatesPDB bool `json:"violatesPDB,omitempty"`
	start       int64
}

// Key is namespace/name.
func (v Victim) Key() string { return v.Namespace + "/" + v.Name }

// Candidate is a node where evicting its victims makes the pod fit.
type Candidate struct {
	Node string `json:"node"`
	// Victims are most important first (kube-scheduler's order).
	Victims       []Victim `json:"victims"`
	PDBViolations int      `json:"pdbViolations"`
}

// Result is the answer for one pod.
type Result struct {
	Pod      string `json:"pod"`
	Priority int32  `json:"priority"`
	// Chosen is the node and victims kube-scheduler's order picks; nil when preemption cannot help.
	Chosen *Candidate `json:"chosen,omitempty"`
	// Candidates is how many nodes the search found where preemption would work (it stops at
	// Options.MaxCandidates).
	Candidates int `json:"candidates"`
	// Reason says why there is no preemption, when Chosen is nil.
	Reason string `json:"reason,omitempty"`
}

// Search finds the preemption that would let the pod fit, as kube-scheduler's DefaultPreemption would choose
// it, with the engine's gates deciding "fits". It assumes the pod fits nowhere as things are (a node where it
// fits with no victim is no candidate, as in kube-scheduler). Like engine.Probe it changes the cluster while
// it runs and restores it: not safe beside other evaluations of the same cluster.
func Search(c *engine.Cluster, ix *Index, pod *corev1.Pod, o Options) Result {
	res := Result{Pod: pod.Namespace + "/" + pod.Name, Priority: ix.Priority(pod)}
	if ix.PreemptsNever(pod) {
		res.Reason = "its preemptionPolicy is Never: it waits for room and evicts no pod"
		return res
	}
	if why := ix.waitsForVictims(pod, res.Priority); why != "" {
		res.Reason = why
		return res
	}
	probe := c.NewProbe(pod, o.Eval)
	if probe == nil {
		res.Reason = "it asks for no GPU HAMi places: kube-scheduler's own preemption decides it"
		return res
	}
	nodes := c.NodeNames()
	if len(nodes) == 0 {
		res.Reason = "the cluster has no nodes"
		return res
	}
	want := numCandidates(len(nodes), o.MaxCandidates)
	// kube-scheduler starts at a random node so that pods spread their preemptions; a hash of the pod's name
	// spreads them the same way and gives the same answer every time.
	offset := int(keyHash(res.Pod) % uint64(len(nodes)))
	var cands []Candidate
	nonViolating, anyLower := 0, false
	var s scratch
	for i := range nodes {
		node := nodes[(offset+i)%len(nodes)]
		cand := ix.victimsOn(probe, node, res.Priority, &s)
		if cand == nil {
			continue
		}
		anyLower = anyLower || cand.Node != ""
		if len(cand.Victims) == 0 {
			continue
		}
		cands = append(cands, *cand)
		if cand.PDBViolations == 0 {
			nonViolating++
		}
		if nonViolating > 0 && len(cands) >= want {
			break
		}
	}
	res.Candidates = len(cands)
	if len(cands) == 0 {
		res.Reason = fmt.Sprintf("evicting every pod of priority below %d from a node would not make it fit on any node", res.Priority)
		if !anyLower {
			res.Reason = fmt.Sprintf("no node runs a pod of priority below %d that preemption may evict", res.Priority)
		}
		return res
	}
	best := 0
	for i := 1; i < len(cands); i++ {
		if better(&cands[i], &cands[best]) {
			best = i
		}
	}
	res.Chosen = &cands[best]
	return res
}

// victimsOn is kube-scheduler's SelectVictimsOnNode: every lower-priority pod that may go is removed; if the pod
// then fits, they are added back one at a time, most important first (those whose eviction would violate a
// budget before the others), and each one the pod cannot fit beside stays a victim. nil: no lower-priority pod
// may go there. A Candidate without victims: the pod does not fit even with them all gone, or fits with
// none gone; either way no candidate.
func (ix *Index) victimsOn(probe *engine.Probe, node string, prio int32, s *scratch) *Candidate {
	return ix.victimsBeside(probe, node, prio, nil, s)
}

// NodeVictims is the victim search on one node beside pods that go anyway (kube-scheduler's own victims, by
// namespace/name): the further lower-priority pods that must go for the pod to fit there. nil: no pod of lower
// priority may go there besides them. A Candidate without victims: the pod fits with only the fixed pods gone
// (Fits true), or not even with every lower-priority pod gone (Fits false).
func (ix *Index) NodeVictims(probe *engine.Probe, node string, prio int32, fixed []string) (cand *Candidate, fits bool) {
	var s scratch
	s.fixed = probe.Hold(node, fixed, nil)
	if probe.FitsWithoutHeld(node, s.fixed) {
		return &Candidate{Node: node}, true
	}
	skip := map[string]bool{}
	for _, k := range fixed {
		skip[k] = true
	}
	s.skip = skip
	cand = ix.victimsBeside(probe, node, prio, s.fixed, &s)
	return cand, cand != nil && len(cand.Victims) > 0
}

// victimsBeside is victimsOn with the fixed pods gone throughout (and never reprieved).
func (ix *Index) victimsBeside(probe *engine.Probe, node string, prio int32, fixed []engine.Held, s *scratch) *Candidate {
	lower := s.lower[:0]
	for _, p := range ix.podsOn(node) {
		if p.priority < prio && !p.protected && !s.skip[p.key()] {
			lower = append(lower, p)
		}
	}
	s.lower = lower
	if len(lower) == 0 {
		return nil
	}
	keys := s.keys[:0]
	for _, p := range lower {
		keys = append(keys, p.key())
	}
	s.keys = keys
	s.held = append(probe.Hold(node, keys, s.held), fixed...)
	held := s.held
	cand := &Candidate{Node: node}
	if !probe.FitsWithoutHeld(node, held) {
		return cand
	}
	// removed[i] says whether lower[i] is still gone; asking builds the list of those that are.
	removed := s.removed[:0]
	for range lower {
		removed = append(removed, true)
	}
	s.removed = removed
	reprieve := func(at int, violates bool) {
		p := lower[at]
		removed[at] = false
		gone := s.gone[:0]
		for i, r := range removed {
			if r {
				gone = append(gone, held[i])
			}
		}
		gone = append(gone, fixed...)
		s.gone = gone
		if probe.FitsWithoutHeld(node, gone) {
			return
		}
		removed[at] = true
		cand.Victims = append(cand.Victims, Victim{Namespace: p.namespace, Name: p.name, Priority: p.priority, ViolatesPDB: violates, start: p.start})
		if violates {
			cand.PDBViolations++
		}
	}
	violating, fine := ix.violating(lower)
	for _, i := range violating {
		reprieve(i, true)
	}
	for _, i := range fine {
		reprieve(i, false)
	}
	sortVictims(cand.Victims)
	return cand
}

// scratch holds the buffers one search reuses from node to node.
type scratch struct {
	fixed   []engine.Held
	skip    map[string]bool // pods that go anyway (NodeVictims)
	lower   []*podInfo
	keys    []string
	held    []engine.Held
	gone    []engine.Held
	removed []bool
}

// waitsForVictims is kube-scheduler's PodEligibleToPreemptOthers: a pod already nominated to a node where a
// pod of lower priority is terminating waits for it instead of preempting again.
func (ix *Index) waitsForVictims(pod *corev1.Pod, prio int32) string {
	node := pod.Status.NominatedNodeName
	if node == "" {
		return ""
	}
	for _, p := range ix.podsOn(node) {
		if p.deleting && p.priority < prio {
			return fmt.Sprintf("it is nominated to node %s and waits for pod %s (priority %d) there to terminate", node, p.key(), p.priority)
		}
	}
	return ""
}

// numCandidates is kube-scheduler's calculateNumCandidates with its defaults (minCandidateNodesPercentage 10,
// minCandidateNodesAbsolute 100).
func numCandidates(nodes, max int) int {
	switch {
	case max < 0:
		return nodes
	case max > 0:
		return min(max, nodes)
	}
	n := nodes * 10 / 100
	if n < 100 {
		n = 100
	}
	return min(n, nodes)
}

func keyHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
