package render

import (
	"fmt"
	"io"
	"time"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
)

// WhyPending writes why-pending's answer (query.Explain) as text: the CLI prints it, the UI's why-pending page
// pages it. Wide adds the per-node table; nodes adds the per-GPU gate table of those nodes.
func WhyPending(w io.Writer, a *query.Explanation, wide bool, nodes []string) error {
	name := a.Pod.Namespace + "/" + a.Pod.Name
	if a.Notice != "" {
		fmt.Fprintln(w, a.Notice)
	}
	if a.Verdict == nil {
		return placed(w, a, name)
	}
	fmt.Fprintf(w, "Pod %s is %s and not bound to a node.\n", name, orPending(a.Phase))
	if err := Verdict(w, VerdictInput{Verdict: a.Verdict, Kube: a.Kube, KubeQuotaUsed: a.KubeQuotaUsed, Events: a.Events,
		Now: a.Now, Wide: wide, Nodes: nodes, Waiting: a.Waiting}); err != nil {
		return err
	}
	unbound(w, a.Unbound)
	return nil
}

// placed answers for a pod that already has a node: where it runs and on which GPUs.
func placed(w io.Writer, a *query.Explanation, name string) error {
	pod := a.Pod
	if pod.DeletionTimestamp != nil {
		fmt.Fprintf(w, "Pod %s is not pending: it is Terminating on node %s (deleted %s, phase %s).\n", name, a.Node,
			pod.DeletionTimestamp.UTC().Format(time.RFC3339), orPending(string(pod.Status.Phase)))
		if a.Allocation != nil {
			fmt.Fprintln(w, "It still holds its GPUs until it is gone:")
		}
	} else {
		fmt.Fprintf(w, "Pod %s is not pending: it is %s on node %s.\n", name, orPending(a.Phase), a.Node)
	}
	if a.Allocation == nil {
		if pod.Annotations[codec.PodNodeAnnotation] == "" {
			fmt.Fprintln(w, "It holds no HAMi GPUs (no hami.io/vgpu-node annotation).")
		} else {
			fmt.Fprintln(w, "It no longer counts against its GPUs (the pod has finished).")
		}
		return nil
	}
	t := NewTable(w, "CONTAINER", "GPU", "UUID", "MEMORY", "CORES")
	for _, g := range a.Held {
		t.Row(g.Container, g.Index, g.UUID, fmt.Sprintf("%d MiB", g.MemMiB), fmt.Sprintf("%d%%", g.Cores))
	}
	return t.Flush()
}

// unbound says which pods hold GPUs without being bound: their GPUs look used to every other pod.
func unbound(w io.Writer, holders []query.UnboundHolder) {
	if len(holders) == 0 {
		return
	}
	fmt.Fprintf(w, "\nGPUs held by pods not bound to their node (HAMi counts them as used; see kubectl hami lint):\n")
	for i, h := range holders {
		if i == 5 {
			fmt.Fprintf(w, "  ... and %d more\n", len(holders)-i)
			break
		}
		fmt.Fprintf(w, "  - %s: %s\n", h.Pod, h.Message)
	}
}

func orPending(phase string) string {
	if phase == "" {
		return "Pending"
	}
	return phase
}
