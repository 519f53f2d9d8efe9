package engine

import (
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
)

// SetParallelMinNodes lets the external tests force the sequential or the parallel walk; it returns the
// restore.
func SetParallelMinNodes(n int) func() {
	old := parallelMinNodes
	parallelMinNodes = n
	return func() { parallelMinNodes = old }
}

// SetUnsortedFail turns the unsorted walk of failing containers (unsorted.go) on or off; it returns the restore.
func SetUnsortedFail(on bool) func() {
	old := unsortedFail
	unsortedFail = on
	return func() { unsortedFail = old }
}

// SetJudgeByFacts turns the facts' judgement of failing containers (nodefacts.go) on or off; it returns the
// restore.
func SetJudgeByFacts(on bool) func() {
	old := judgeByFacts
	judgeByFacts = on
	return func() { judgeByFacts = old }
}

// FactsJudged counts the nodes where the facts, not the walk, judge pod's failing container in Evaluate.
func FactsJudged(c *Cluster, pod *corev1.Pod) int { return len(factsJudged(c, pod)) }

// factsJudged are the nodes where the facts judge pod's failing container in Evaluate.
func factsJudged(c *Cluster, pod *corev1.Pod) []*Node {
	req, _ := parseRequest(pod, c.cfg, c.kinds)
	if _, hami := c.schedulerOf(pod); !hami || !req.WantsGPU() {
		return nil
	}
	f := newFitter(c, req, c.pods[pod.Namespace+"/"+pod.Name].alloc, false)
	f.card, f.kube = c.cardStatus(pod), c.kubeGateFor(pod, EvalOptions{}.Kube)
	f.quick = true
	var out []*Node
	for _, node := range c.nodeList {
		if res := f.fitNode(node, make([]GPUStatus, len(node.GPUs)), nil); res.facts != nil {
			out = append(out, node)
		}
	}
	return out
}

// SetCapacityTree turns Capacity's tournament on or off (a scan of every node per copy); it returns the restore.
func SetCapacityTree(on bool) func() {
	old := capacityTree
	capacityTree = on
	return func() { capacityTree = old }
}

// VerdictDiff is "" when a and b are the same verdict, else the first node they differ on (or the verdicts
// whole): the comparison every test of a shortcut against the walk it skips makes.
func VerdictDiff(a, b *Verdict) string {
	an, bn := a.Nodes(), b.Nodes() // as read: a verdict's rows may hold the same statuses in other forms
	ra, rb := *a, *b
	ra.SetNodes(nil)
	rb.SetNodes(nil)
	ra.SetFeasible(a.Feasible())
	rb.SetFeasible(b.Feasible())
	if reflect.DeepEqual(an, bn) && reflect.DeepEqual(&ra, &rb) {
		return ""
	}
	for i := range an {
		if i < len(bn) && !reflect.DeepEqual(an[i], bn[i]) {
			return fmt.Sprintf("node %s:\n  %+v\n  %+v", an[i].Node, an[i], bn[i])
		}
	}
	if len(an) != len(bn) {
		return fmt.Sprintf("%d node statuses against %d", len(an), len(bn))
	}
	return fmt.Sprintf("the verdicts differ outside their nodes:\n  %+v\n  %+v", &ra, &rb)
}

// FitsNow is the proven fixes' question (fitsNow): whether pod fits anywhere, without a verdict.
func FitsNow(c *Cluster, pod *corev1.Pod, opts EvalOptions) bool { return c.fitsNow(pod, opts) }
