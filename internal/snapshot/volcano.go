package snapshot

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// Volcano's Queue and PodGroup, read through the dynamic client so that no Volcano Go module is needed.
var (
	QueueGVR    = schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "queues"}
	PodGroupGVR = schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}
)

const volcanoGroup = "scheduling.volcano.sh"

// EngineQueue turns a Queue object into the engine's queue; a bad card quota becomes a problem naming it.
func EngineQueue(u *unstructured.Unstructured) (engine.Queue, []engine.Problem) {
	state, _, _ := unstructured.NestedString(u.Object, "status", "state")
	return engine.NewQueue(u.GetName(), state, u.GetAnnotations())
}

// EnginePodGroup turns a PodGroup object into the engine's PodGroup.
func EnginePodGroup(u *unstructured.Unstructured) (engine.PodGroup, []engine.Problem) {
	queue, _, _ := unstructured.NestedString(u.Object, "spec", "queue")
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	var probs []engine.Problem
	minMember, found, err := unstructured.NestedInt64(u.Object, "spec", "minMember")
	if err != nil {
		probs = append(probs, engine.Problem{Kind: "PodGroup", Object: u.GetNamespace() + "/" + u.GetName(), Field: "spec.minMember", Message: err.Error()})
	}
	if !found {
		minMember = 1
	}
	if queue == "" {
		queue = "default" // Volcano's admission puts a PodGroup without a queue into the default queue
	}
	g, more := engine.NewPodGroup(u.GetNamespace(), u.GetName(), queue, int32(min(max(minMember, 0), 1<<30)), phase, u.GetAnnotations())
	return g, append(probs, more...)
}

// isVolcano reports whether an object of a file is a Volcano Queue or PodGroup.
func isVolcano(apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return err == nil && gv.Group == volcanoGroup && (kind == "Queue" || kind == "PodGroup")
}

// LiveVolcano reads Volcano's queues and PodGroups into the snapshot when their CRDs exist; a cluster
// without Volcano (or without the right to read them) is not an error.
func LiveVolcano(ctx context.Context, dyn dynamic.Interface, s *Snapshot, server string) error {
	queues, err := dyn.Resource(QueueGVR).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err):
		return nil
	case err != nil:
		return fmt.Errorf("cannot list Volcano queues from the cluster at %s: %w", server, err)
	}
	s.Volcano = true
	for i := range queues.Items {
		q := &queues.Items[i]
		q.SetManagedFields(nil)
		s.Queues = append(s.Queues, q)
	}
	groups, err := dyn.Resource(PodGroupGVR).Namespace("").List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		return nil
	case err != nil:
		return fmt.Errorf("cannot list Volcano PodGroups from the cluster at %s: %w", server, err)
	}
	for i := range groups.Items {
		g := &groups.Items[i]
		g.SetManagedFields(nil)
		s.PodGroups = append(s.PodGroups, g)
	}
	return nil
}
