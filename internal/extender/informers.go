package extender

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// StartInformers keeps the state current from the API server: nodes, pods, resourcequotas, and for the victim
// search PriorityClasses and PodDisruptionBudgets. It returns once the first lists are loaded, so the state is
// complete before the first request is answered.
func StartInformers(ctx context.Context, cs kubernetes.Interface, s *State, now func() time.Time) (informers.SharedInformerFactory, error) {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(stripManagedFields))
	nodes := f.Core().V1().Nodes().Informer()
	pods := f.Core().V1().Pods().Informer()
	quotas := f.Core().V1().ResourceQuotas().Informer()
	if _, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.SetNode(o.(*corev1.Node)) },
		UpdateFunc: func(_, o any) { s.SetNode(o.(*corev1.Node)) },
		DeleteFunc: func(o any) {
			if n, ok := tombstone[*corev1.Node](o); ok {
				s.RemoveNode(n.Name)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.SetPod(o.(*corev1.Pod), now()) },
		UpdateFunc: func(_, o any) { s.SetPod(o.(*corev1.Pod), now()) },
		DeleteFunc: func(o any) {
			if p, ok := tombstone[*corev1.Pod](o); ok {
				s.RemovePod(p.Namespace, p.Name)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := quotas.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.SetQuota(o.(*corev1.ResourceQuota)) },
		UpdateFunc: func(_, o any) { s.SetQuota(o.(*corev1.ResourceQuota)) },
		DeleteFunc: func(o any) {
			if q, ok := tombstone[*corev1.ResourceQuota](o); ok {
				s.RemoveQuota(q.Namespace, q.Name)
			}
		},
	}); err != nil {
		return nil, err
	}
	classes := f.Scheduling().V1().PriorityClasses().Informer()
	if _, err := classes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.SetPriorityClass(o.(*schedulingv1.PriorityClass)) },
		UpdateFunc: func(_, o any) { s.SetPriorityClass(o.(*schedulingv1.PriorityClass)) },
		DeleteFunc: func(o any) {
			if pc, ok := tombstone[*schedulingv1.PriorityClass](o); ok {
				s.RemovePriorityClass(pc.Name)
			}
		},
	}); err != nil {
		return nil, err
	}
	pdbs := f.Policy().V1().PodDisruptionBudgets().Informer()
	if _, err := pdbs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.SetPDB(o.(*policyv1.PodDisruptionBudget)) },
		UpdateFunc: func(_, o any) { s.SetPDB(o.(*policyv1.PodDisruptionBudget)) },
		DeleteFunc: func(o any) {
			if b, ok := tombstone[*policyv1.PodDisruptionBudget](o); ok {
				s.RemovePDB(b.Namespace, b.Name)
			}
		},
	}); err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	s.SetSynced()
	return f, nil
}

// tombstone unwraps a delete event, which may carry the last known state instead of the object.
func tombstone[T any](o any) (T, bool) {
	if t, ok := o.(T); ok {
		return t, true
	}
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		t, ok := d.Obj.(T)
		return t, ok
	}
	var zero T
	return zero, false
}

// stripManagedFields keeps the informer caches small: nothing here reads managed fields.
func stripManagedFields(o any) (any, error) {
	if m, ok := o.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return o, nil
}

// Clients are the extender's API clients, each with its own rate budget: Bind for binds (lock, placement,
// binding, rollback), Watch for the informers' lists and watches (a relist after an API server restart does
// not take the binds' budget), Events for the pending-reason events (EventQPS, EventBurst).
type Clients struct {
	Bind, Watch, Events kubernetes.Interface
}

// NewClients builds the extender's clients from one configuration, Bind and Watch with qps and burst.
func NewClients(rc *rest.Config, qps float32, burst int) (Clients, error) {
	mk := func(q float32, b int) (kubernetes.Interface, error) {
		c := rest.CopyConfig(rc)
		c.QPS, c.Burst, c.RateLimiter = q, b, nil
		return kubernetes.NewForConfig(c)
	}
	var cs Clients
	var err error
	if cs.Bind, err = mk(qps, burst); err != nil {
		return cs, err
	}
	if cs.Watch, err = mk(qps, burst); err != nil {
		return cs, err
	}
	cs.Events, err = mk(EventQPS, EventBurst)
	return cs, err
}
