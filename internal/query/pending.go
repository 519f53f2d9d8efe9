package query

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// Finished reports whether the pod ran to its end (Succeeded or Failed): it holds nothing and waits for nothing.
func Finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// Waiting reports whether the pod waits for a node: not bound, not finished and not being deleted.
func Waiting(p *corev1.Pod) bool {
	return p.Spec.NodeName == "" && !Finished(p) && p.DeletionTimestamp == nil
}

// PendingGPU reports whether the pod is a GPU pod that waits for a node, with its parsed request: it asks for a
// device HAMi manages, or it names a Volcano card (a MIG or MPS slice waits on the queue's card quota even when
// HAMi manages none of its GPUs). top's pending list and the UI's Pending view are these pods.
func PendingGPU(p *corev1.Pod, cfg engine.Config) (*engine.PodRequest, bool) {
	if p == nil || !Waiting(p) {
		return nil, false
	}
	req, _ := engine.ParseRequest(p, cfg)
	if !req.WantsGPU() && p.Annotations[codec.CardNameAnnotation] == "" {
		return nil, false
	}
	return req, true
}
