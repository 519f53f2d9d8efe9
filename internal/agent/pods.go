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

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// mirrorPodAnnotation holds, on a static pod's mirror, the UID kubelet uses for it (and so in its cgroups).
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// podResolver maps pod UIDs (as found in cgroup paths) to pod names, and MIG UUIDs to the pods holding them, from a
// watch on the pods of this node that keeps only their names and MIG reservations.
type podResolver struct {
	mu    sync.RWMutex
	byUID map[types.UID]PodRef
	byMig map[string]PodRef // MIG UUIDs of the pods' hami.io/vgpu-mig-allocations
}

// startPodResolver watches the pods bound to node until ctx ends. It needs list and watch on pods.
func startPodResolver(ctx context.Context, client kubernetes.Interface, node string) *podResolver {
	r := &podResolver{byUID: map[types.UID]PodRef{}, byMig: map[string]PodRef{}}
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
		for _, k := range []string{mirrorPodAnnotation, codec.PodMigAllocationsAnnotation} {
			if v, ok := p.Annotations[k]; ok {
				if slim.Annotations == nil {
					slim.Annotations = map[string]string{}
				}
				slim.Annotations[k] = v
			}
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
			ref := PodRef{Namespace: p.Namespace, Name: p.Name, UID: p.UID}
			for _, k := range keys(p) {
				r.byUID[k] = ref
			}
			for _, u := range migUUIDs(p) {
				r.byMig[u] = ref
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
				for _, u := range migUUIDs(p) {
					if r.byMig[u].UID == p.UID {
						delete(r.byMig, u)
					}
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

// lookupMig returns the pod whose MIG reservations name that MIG UUID.
func (r *podResolver) lookupMig(uuid string) (PodRef, bool) {
	if r == nil || uuid == "" {
		return PodRef{}, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.byMig[uuid]
	return p, ok
}

// migUUIDs are the MIG UUIDs the device plugin wrote into the pod's hami.io/vgpu-mig-allocations.
func migUUIDs(p *corev1.Pod) []string {
	raw := p.Annotations[codec.PodMigAllocationsAnnotation]
	if raw == "" {
		return nil
	}
	as, err := codec.ParseMigAllocations(raw)
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range as {
		if a.MigUUID != "" {
			out = append(out, a.MigUUID)
		}
	}
	return out
}
