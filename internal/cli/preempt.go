package cli

import (
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/preempt"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// preemption is why-pending's and what-if's word on preemption (internal/preempt): the preemption that would
// make the pod fit, proven, or what a nominated pod waits for; nil when there is nothing to say, so that the
// output of a cluster without priorities is unchanged.
func preemption(s *snapshot.Snapshot, c *engine.Cluster, pod *corev1.Pod, v *engine.Verdict, now time.Time) *preempt.Answer {
	if pod.Status.NominatedNodeName == "" && (v == nil || v.Fits || v.NotHAMi || v.NoGPURequest) {
		return nil // nothing to say; the index over every pod is not built
	}
	ix := preempt.NewIndexByNode(s.PodsBoundTo, s.Pods.Reader(), s.Pods.At, s.PriorityClasses, s.PDBs)
	a := preempt.Explain(c, ix, pod, v, preempt.Options{Eval: engine.EvalOptions{Now: now}})
	if len(a.Lines()) == 0 {
		return nil
	}
	return a
}

// printPreemption writes the answer's lines under their own heading.
func printPreemption(w io.Writer, a *preempt.Answer) {
	lines := a.Lines()
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Preemption:")
	for _, l := range lines {
		fmt.Fprintf(w, "  - %s\n", l)
	}
}
