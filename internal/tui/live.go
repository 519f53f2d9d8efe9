package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// queue coalesces informer events: it keeps the latest state of each changed object, and wakes the UI
// through a one-slot channel, so a burst of events costs one update.
type queue struct {
	mu      sync.Mutex
	changes map[string]change // kind/key -> latest
	resync  resync
	wake    chan struct{}
}

func newQueue() *queue {
	return &queue{changes: map[string]change{}, wake: make(chan struct{}, 1)}
}

func (q *queue) put(c change) {
	q.mu.Lock()
	q.changes[fmt.Sprint(c.kind)+"/"+c.key] = c
	q.mu.Unlock()
	q.notify()
}

// putResync queues a resync; one not yet drained is merged with it (each informer group sends its own).
func (q *queue) putResync(rs resync) {
	q.mu.Lock()
	for kind, held := range q.resync {
		if _, ok := rs[kind]; !ok {
			rs[kind] = held
		}
	}
	q.resync = rs
	q.mu.Unlock()
	q.notify()
}

// notify is a non-blocking send: when a wake-up is already waiting, this one merges with it.
func (q *queue) notify() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// drain takes every queued change.
func (q *queue) drain() ([]change, resync) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]change, 0, len(q.changes))
	for _, c := range q.changes {
		out = append(out, c)
	}
	clear(q.changes)
	rs := q.resync
	q.resync = nil
	return out, rs
}

// watch starts informers on nodes, pods, resourcequotas and HAMi's device ConfigMap, feeding q until ctx
// ends. It only lists and watches: the UI never writes to the cluster. List and watch errors are retried by
// the informers and reported on errc (without blocking) for the header.
func watch(ctx context.Context, cs kubernetes.Interface, cmName string, q *queue, errc chan<- error) error {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(stripManagedFields))
	nodes := f.Core().V1().Nodes().Informer()
	pods := f.Core().V1().Pods().Informer()
	quotas := f.Core().V1().ResourceQuotas().Informer()
	report := reporter(errc)
	for _, reg := range []struct {
		inf  cache.SharedIndexInformer
		kind int
	}{{nodes, kindNode}, {pods, kindPod}, {quotas, kindQuota}} {
		if _, err := reg.inf.AddEventHandler(handlers(q, reg.kind)); err != nil {
			return err
		}
		if err := reg.inf.SetWatchErrorHandler(report); err != nil {
			return err
		}
	}
	var cmf informers.SharedInformerFactory
	if ns, name, ok := strings.Cut(cmName, "/"); ok {
		cmf = informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns), informers.WithTransform(stripManagedFields),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
			}))
		inf := cmf.Core().V1().ConfigMaps().Informer()
		if _, err := inf.AddEventHandler(handlers(q, kindConfigMap)); err != nil {
			return err
		}
		if err := inf.SetWatchErrorHandler(report); err != nil {
			return err
		}
	}
	f.Start(ctx.Done())
	if cmf != nil {
		cmf.Start(ctx.Done())
	}
	go func() {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				if ctx.Err() == nil {
					report(nil, fmt.Errorf("the %v informer did not sync", typ))
				}
				return
			}
		}
		// Objects of the first snapshot that were deleted before the informers started never produce an
		// event: drop whatever the informers do not hold.
		q.putResync(resync{kindNode: storeKeys(nodes), kindPod: storeKeys(pods), kindQuota: storeKeys(quotas)})
	}()
	return nil
}

// handlers queues an informer's adds, updates and deletes of one kind of object.
func handlers(q *queue, kind int) cache.ResourceEventHandler {
	put := func(o any) {
		if k, ok := objectKey(o); ok {
			q.put(change{kind: kind, key: k, obj: o})
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    put,
		UpdateFunc: func(_, o any) { put(o) },
		DeleteFunc: func(o any) {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if k, ok := objectKey(o); ok {
				q.put(change{kind: kind, key: k})
			}
		},
	}
}

// objectKey is name for a cluster-scoped object, namespace/name otherwise (the informers' store keys).
func objectKey(o any) (string, bool) {
	m, ok := o.(metav1.Object)
	if !ok {
		return "", false
	}
	if m.GetNamespace() == "" {
		return m.GetName(), true
	}
	return m.GetNamespace() + "/" + m.GetName(), true
}

// reporter sends watch errors to the header instead of klog's stderr (which would scribble over the
// screen), without blocking; the informers retry by themselves.
func reporter(errc chan<- error) cache.WatchErrorHandler {
	return func(_ *cache.Reflector, err error) {
		select {
		case errc <- err:
		default:
		}
	}
}

// watchVolcano starts dynamic informers on Volcano's Queue and PodGroup objects, feeding q until ctx ends.
// Call it only when the cluster serves their CRDs (the first snapshot says so): the UI does not wait for
// Volcano to be installed. Like watch, it only lists and watches.
func watchVolcano(ctx context.Context, dyn dynamic.Interface, q *queue, errc chan<- error) error {
	f := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	queues := f.ForResource(snapshot.QueueGVR).Informer()
	groups := f.ForResource(snapshot.PodGroupGVR).Informer()
	for _, reg := range []struct {
		inf  cache.SharedIndexInformer
		kind int
	}{{queues, kindQueue}, {groups, kindPodGroup}} {
		if err := reg.inf.SetTransform(stripManagedFields); err != nil {
			return err
		}
		if _, err := reg.inf.AddEventHandler(handlers(q, reg.kind)); err != nil {
			return err
		}
		if err := reg.inf.SetWatchErrorHandler(reporter(errc)); err != nil {
			return err
		}
	}
	f.Start(ctx.Done())
	go func() {
		for gvr, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				if ctx.Err() == nil {
					reporter(errc)(nil, fmt.Errorf("the %s informer did not sync", gvr.Resource))
				}
				return
			}
		}
		q.putResync(resync{kindQueue: storeKeys(queues), kindPodGroup: storeKeys(groups)})
	}()
	return nil
}

// storeKeys is the set of keys an informer holds.
func storeKeys(inf cache.SharedIndexInformer) map[string]bool {
	out := map[string]bool{}
	for _, k := range inf.GetStore().ListKeys() {
		out[k] = true
	}
	return out
}

// stripManagedFields keeps the informer caches small: nothing here reads managed fields.
func stripManagedFields(o any) (any, error) {
	if m, ok := o.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return o, nil
}

// liveEvents reads the events about one pod (why-pending shows the recent scheduling ones).
func liveEvents(cs kubernetes.Interface) func(ctx context.Context, ns, name string) ([]*corev1.Event, error) {
	return func(ctx context.Context, ns, name string) ([]*corev1.Event, error) {
		s := &snapshot.Snapshot{}
		if err := snapshot.AddPodEvents(ctx, cs, s, ns, name); err != nil {
			return nil, err
		}
		return s.EventsFor(ns, name), nil
	}
}
