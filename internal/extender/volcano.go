package extender

import (
	"context"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/volcano"
)

// SetQueue, RemoveQueue, SetPodGroup, RemovePodGroup and SetVolcano mirror Volcano's objects for the card quota.
func (s *State) SetQueue(q engine.Queue, probs []engine.Problem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cluster.SetQueue(q, probs)
}

// RemoveQueue forgets a queue.
func (s *State) RemoveQueue(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cluster.RemoveQueue(name)
}

// SetPodGroup records a PodGroup.
func (s *State) SetPodGroup(g engine.PodGroup, probs []engine.Problem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cluster.SetPodGroup(g, probs)
}

// RemovePodGroup forgets a PodGroup.
func (s *State) RemovePodGroup(namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cluster.RemovePodGroup(namespace, name)
}

// SetVolcano says whether Volcano's Queue CRD exists.
func (s *State) SetVolcano(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cluster.SetVolcano(on)
}

// StartVolcanoInformers watches Volcano's queues and PodGroups when their CRDs are served, for the card-model
// quota. A cluster without Volcano (or an extender without the right to read them) runs without card quota:
// it returns false and no error. It returns once the first lists are loaded.
func StartVolcanoInformers(ctx context.Context, dyn dynamic.Interface, s *State, log *slog.Logger) (bool, error) {
	if _, err := dyn.Resource(volcano.QueueGVR).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			if log != nil {
				log.Info("no Volcano queues to read: card quota off", "reason", err.Error())
			}
			return false, nil
		}
		return false, fmt.Errorf("cannot list Volcano queues: %w", err)
	}
	// PodGroups are probed too: an informer on a resource it cannot list would never sync and the extender
	// would never serve. Without them the pod-level card quota still works (queues from annotations).
	withGroups := true
	if _, err := dyn.Resource(volcano.PodGroupGVR).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		if !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
			return false, fmt.Errorf("cannot list Volcano PodGroups: %w", err)
		}
		withGroups = false
		if log != nil {
			log.Warn("Volcano PodGroups cannot be read: pods find their queue only through scheduling.volcano.sh/queue-name", "reason", err.Error())
		}
	}
	s.SetVolcano(true)
	f := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	queues := f.ForResource(volcano.QueueGVR).Informer()
	setQueue := func(o any) {
		if u, ok := o.(*unstructured.Unstructured); ok {
			s.SetQueue(volcano.EngineQueue(u))
		}
	}
	setGroup := func(o any) {
		if u, ok := o.(*unstructured.Unstructured); ok {
			s.SetPodGroup(volcano.EnginePodGroup(u))
		}
	}
	if _, err := queues.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    setQueue,
		UpdateFunc: func(_, o any) { setQueue(o) },
		DeleteFunc: func(o any) {
			if u, ok := tombstone[*unstructured.Unstructured](o); ok {
				s.RemoveQueue(u.GetName())
			}
		},
	}); err != nil {
		return false, err
	}
	if withGroups {
		groups := f.ForResource(volcano.PodGroupGVR).Informer()
		if _, err := groups.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    setGroup,
			UpdateFunc: func(_, o any) { setGroup(o) },
			DeleteFunc: func(o any) {
				if u, ok := tombstone[*unstructured.Unstructured](o); ok {
					s.RemovePodGroup(u.GetNamespace(), u.GetName())
				}
			},
		}); err != nil {
			return false, err
		}
	}
	f.Start(ctx.Done())
	for gvr, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return false, fmt.Errorf("informer for %s did not sync", gvr.Resource)
		}
	}
	return true, nil
}
