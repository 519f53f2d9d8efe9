package agent

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// mirrorPodAnnotation holds, on a static pod's mirror, the UID kubelet uses for it (and so in its cgroups).
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// podResolver maps pod UIDs (as found in cgroup paths) to pod names, from a watch on the pods of this node that
// keeps only their names.
type podResolver struct {
	mu    sync.RWMutex
	byUID map[types.UID]PodRef
}

// startPodResolver watches the pods bound to node until ctx ends. It needs list and watch on pods.
func startPodResolver(ctx context.Context, client kubernetes.Interface, node string) *podResolver {
	r := &podResolver{byUID: map[types.UID]PodRef{}}
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", node).String()
	}))
	inf := f.Core().V1().Pods().Informer()
	// Keep only what attribution needs: the informer's cache holds a few hundred bytes per pod.
	_ = inf.SetTransform(func(obj any) (any, error) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return obj, nil
		}
		slim := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID, ResourceVersion: p.ResourceVersion}}
		if m, ok := p.Annotations[mirrorPodAnnotation]; ok {
			slim.Annotations = map[string]string{mirrorPodAnnotation: m}
		}
		return slim, nil
	})
	keys := func(p *corev1.Pod) []types.UID {
		k := []types.UID{p.UID}
		if m := p.Annotations[mirrorPodAnnotation]; m != "" {
			k = append(k, types.UID(m))
		}
		return k
	}
	set := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok {
			r.mu.Lock()
			for _, k := range keys(p) {
				r.byUID[k] = PodRef{Namespace: p.Namespace, Name: p.Name, UID: p.UID}
			}
			r.mu.Unlock()
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				r.mu.Lock()
				for _, k := range keys(p) {
					delete(r.byUID, k)
				}
				r.mu.Unlock()
			}
		},
	})
	f.Start(ctx.Done())
	return r
}

// lookup returns the pod with that UID (or the static pod whose kubelet UID it is).
func (r *podResolver) lookup(uid string) (PodRef, bool) {
	if r == nil {
		return PodRef{}, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.byUID[types.UID(uid)]
	return p, ok
}
