package extender

import (
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/preempt"
)

// handlePreempt is kube-scheduler's preemptVerb. kube-scheduler asks it only about nodes where its own dry run
// found victims (its checks found CPU, memory or another in-tree resource short; the GPU resources it ignores):
// each such node comes back only when the pod's GPU request fits there once those victims are gone, with the
// lower-priority pods the engine adds (kube-scheduler's own method: every other lower-priority pod removed,
// then the most important added back while the pod still fits) when they are not enough. A node where even
// that does not fit is dropped, so kube-scheduler never evicts pods for a pod that still would not fit. With
// preemption off (--preemption=false) kube-scheduler's candidates come back unchanged, as if the extender had
// no preemptVerb.
func (s *Server) handlePreempt(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderPreemptionArgs
	if !decode(w, r, &args) {
		return
	}
	if args.Pod == nil {
		http.Error(w, "the request has no pod", http.StatusBadRequest)
		return
	}
	in := metaVictims(&args)
	if s.opts.DisablePreemption {
		writeJSON(w, extenderv1.ExtenderPreemptionResult{NodeNameToMetaVictims: in})
		return
	}
	out := map[string]*extenderv1.MetaVictims{}
	s.state.withSearch(func(c *engine.Cluster, ix *preempt.Index, pods []*corev1.Pod) {
		probe := c.NewProbe(args.Pod, engine.EvalOptions{Now: s.now(), Kube: engine.KubeOff})
		if probe == nil {
			out = in // no GPU HAMi places: kube-scheduler's own answer stands
			return
		}
		prio := ix.Priority(args.Pod)
		byUID := make(map[types.UID]*corev1.Pod, len(pods))
		for _, p := range pods {
			byUID[p.UID] = p
		}
		for node, mv := range in {
			var fixed []string
			for _, mp := range mv.Pods {
				if p := byUID[types.UID(mp.UID)]; p != nil {
					fixed = append(fixed, p.Namespace+"/"+p.Name)
				}
			}
			cand, fits := ix.NodeVictims(probe, node, prio, fixed)
			if !fits {
				s.metrics.preempt("node_dropped")
				continue
			}
			res := &extenderv1.MetaVictims{Pods: append([]*extenderv1.MetaPod(nil), mv.Pods...), NumPDBViolations: mv.NumPDBViolations}
			for _, v := range cand.Victims {
				if p := ix.PodOn(node, v.Namespace, v.Name); p != nil {
					res.Pods = append(res.Pods, &extenderv1.MetaPod{UID: string(p.UID)})
				}
			}
			if len(cand.Victims) > 0 {
				s.metrics.preempt("victims_added")
			} else {
				s.metrics.preempt("node_kept")
			}
			out[node] = res
		}
	})
	nodes := make([]string, 0, len(out))
	for n := range out {
		nodes = append(nodes, n)
	}
	s.state.holdProvisionally(args.Pod, nodes, s.now())
	if len(nodes) > 0 {
		s.preemptVerbAnswered(args.Pod, s.now()) // the extender's own preemption leaves the pod to kube-scheduler
	}
	writeJSON(w, extenderv1.ExtenderPreemptionResult{NodeNameToMetaVictims: out})
}

// metaVictims is kube-scheduler's candidates by pod UID, whichever form it sent (NodeNameToMetaVictims with
// nodeCacheCapable, NodeNameToVictims without).
func metaVictims(args *extenderv1.ExtenderPreemptionArgs) map[string]*extenderv1.MetaVictims {
	if args.NodeNameToMetaVictims != nil {
		return args.NodeNameToMetaVictims
	}
	out := make(map[string]*extenderv1.MetaVictims, len(args.NodeNameToVictims))
	for node, v := range args.NodeNameToVictims {
		if v == nil {
			continue
		}
		mv := &extenderv1.MetaVictims{NumPDBViolations: v.NumPDBViolations}
		for _, p := range v.Pods {
			mv.Pods = append(mv.Pods, &extenderv1.MetaPod{UID: string(p.UID)})
		}
		out[node] = mv
	}
	return out
}
