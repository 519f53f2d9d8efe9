package preempt

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// Answer is what why-pending and what-if say about preemption for one pod: the preemption that would make it
// fit, proven, or what a pod already nominated to a node waits for there. Built by Explain; the surfaces render
// its Lines and put the whole in their JSON.
type Answer struct {
	Priority int32 `json:"priority"`
	// Preemption is the proven preemption, when one would make the pod fit.
	Preemption *Proposal `json:"preemption,omitempty"`
	// Nominated is the pod's status.nominatedNodeName.
	Nominated string `json:"nominatedNodeName,omitempty"`
	// WaitsFor are the pods of lower priority terminating on the nominated node: what the nomination waits for.
	WaitsFor []Victim `json:"waitsFor,omitempty"`
	// NoPreemption says why no preemption would help (set when the pod does not fit).
	NoPreemption string `json:"noPreemption,omitempty"`
}

// Proposal is a preemption the engine proved: with its victims gone, the pod fits on the node.
type Proposal struct {
	Candidate
	// Candidates is how many nodes preemption would work on; the node is kube-scheduler's choice among them.
	Candidates int `json:"candidates"`
}

// Explain answers for a pod and its verdict on the cluster (nil when there is nothing to say: the pod fits and
// is not nominated). A preemption is proven the way the engine proves every fix: the victims are taken out of
// the cluster (RemovePod), the pod is evaluated on the chosen node, and they are put back (SetPod) before it
// returns. Not safe beside other evaluations of the same cluster.
func Explain(c *engine.Cluster, ix *Index, pod *corev1.Pod, v *engine.Verdict, o Options) *Answer {
	a := &Answer{Priority: ix.Priority(pod), Nominated: pod.Status.NominatedNodeName}
	if a.Nominated != "" {
		for _, p := range ix.podsOn(a.Nominated) {
			if p.deleting && p.priority < a.Priority {
				a.WaitsFor = append(a.WaitsFor, Victim{Namespace: p.namespace, Name: p.name, Priority: p.priority, start: p.start})
			}
		}
		sortVictims(a.WaitsFor)
	}
	if v == nil || v.Fits || v.NotHAMi || v.NoGPURequest {
		if a.Nominated == "" {
			return nil
		}
		return a
	}
	res := Search(c, ix, pod, o)
	if res.Chosen == nil {
		a.NoPreemption = res.Reason
		return a
	}
	if !ix.prove(c, pod, res.Chosen, o.Eval) {
		a.NoPreemption = fmt.Sprintf("the search chose node %s, but the pod does not fit there with its victims removed: please report this", res.Chosen.Node)
		return a
	}
	a.Preemption = &Proposal{Candidate: *res.Chosen, Candidates: res.Candidates}
	return a
}

// prove removes the victims from the cluster, evaluates the pod on the node, and puts them back.
func (ix *Index) prove(c *engine.Cluster, pod *corev1.Pod, cand *Candidate, eval engine.EvalOptions) bool {
	var removed []*corev1.Pod
	on := ix.podsOn(cand.Node)
	for _, v := range cand.Victims {
		for _, p := range on {
			if p.namespace == v.Namespace && p.name == v.Name {
				removed = append(removed, ix.pod(int(p.at)))
			}
		}
	}
	for _, p := range removed {
		c.RemovePod(p.Namespace, p.Name)
	}
	defer func() {
		for _, p := range removed {
			c.SetPod(p)
		}
	}()
	eval.Nodes, eval.DetailNodes, eval.DetailAll = []string{cand.Node}, nil, false
	return len(removed) == len(cand.Victims) && c.Evaluate(pod, eval).Fits
}

// Lines are the answer in words, one per line, for "What would make it fit" and the nomination.
func (a *Answer) Lines() []string {
	if a == nil {
		return nil
	}
	var out []string
	if p := a.Preemption; p != nil {
		s := fmt.Sprintf("preempting %s on node %s would make it fit (priority %d; kube-scheduler's choice of victims and node among %d node(s) where preemption works, proven by the engine's gates",
			VictimList(p.Victims), p.Node, a.Priority, p.Candidates)
		if p.PDBViolations > 0 {
			s += fmt.Sprintf("; %d of the evictions would violate a PodDisruptionBudget: no node avoids that", p.PDBViolations)
		}
		out = append(out, s+")")
	}
	if a.Nominated != "" {
		if len(a.WaitsFor) > 0 {
			out = append(out, fmt.Sprintf("it is nominated to node %s (status.nominatedNodeName) and waits for %s to terminate there",
				a.Nominated, VictimList(a.WaitsFor)))
		} else {
			out = append(out, fmt.Sprintf("it is nominated to node %s (status.nominatedNodeName), where no pod of lower priority is terminating: "+
				"it waits for room to free there, and kube-scheduler clears the nomination when a later preemption attempt finds no candidate", a.Nominated))
		}
	}
	return out
}

// VictimList is "pod a and pod b (priority 0)", each priority said once after the pods that have it.
func VictimList(vs []Victim) string {
	var parts []string
	for i := 0; i < len(vs); {
		j := i
		var names []string
		for ; j < len(vs) && vs[j].Priority == vs[i].Priority; j++ {
			names = append(names, "pod "+vs[j].Key())
		}
		parts = append(parts, joinAnd(names)+fmt.Sprintf(" (priority %d)", vs[i].Priority))
		i = j
	}
	return joinAnd(parts)
}

func joinAnd(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
