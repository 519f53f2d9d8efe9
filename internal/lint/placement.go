package lint

import (
	"fmt"
	"time"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// checkGPUsHeldUnbound finds pods that hold GPUs by HAMi's placement annotations on a node they are not bound
// to. HAMi counts them as used until the pod ends, so a pod that never runs (a failed bind, or annotations
// written by hand) keeps GPUs and its namespace's quota from everyone. Pods in the middle of their bind
// (bind-phase allocating) are left out: lint has no clock to tell a bind in progress from a stuck one.
func checkGPUsHeldUnbound(in *input) []Finding {
	var out []Finding
	for p := range in.pods.all() {
		why := engine.UnboundHolding(p, time.Time{})
		if why == "" {
			continue
		}
		sev := Warning
		if p.Spec.NodeName != "" {
			sev = Error // the GPUs are counted on one node while the pod runs on another
		}
		out = append(out, Finding{Severity: sev, Object: podObject(p), Field: annotationField(codec.PodNodeAnnotation),
			Message: fmt.Sprintf("%s; HAMi counts these GPUs as used until the pod ends", why[len("it "):]),
			Fix: fmt.Sprintf("if nothing should run it, delete the pod; where deploy/extender/placement-policy.yaml is not "+
				"applied (it stops anyone but the GPU scheduler from writing or removing these annotations) you may instead remove its placement: "+
				"kubectl -n %s annotate pod %s %s- %s- %s-",
				p.Namespace, p.Name, codec.PodNodeAnnotation, codec.PodAllocatedAnnotation, codec.PodToAllocateAnnotation)})
	}
	return out
}
