package snapshot

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-hami/kubectl-hami/internal/volcano"
)

// Volcano's resources and converters live in internal/volcano (the extender and the UI use them without the
// snapshot reader); these names keep the readers' code short.
var (
	QueueGVR       = volcano.QueueGVR
	PodGroupGVR    = volcano.PodGroupGVR
	EngineQueue    = volcano.EngineQueue
	EnginePodGroup = volcano.EnginePodGroup
	isVolcano      = volcano.IsVolcano
)

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
