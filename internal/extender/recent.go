package extender

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// recentVerdict is the last filter verdict, kept for the prioritize call that follows it for the same pod.
// It is used only at the same cluster version (nothing changed in between) and for the same pod object
// (UID and resourceVersion), so it is exactly the answer a new evaluation would give.
type recentVerdict struct {
	mu      sync.Mutex
	uid     types.UID
	rv      string
	version uint64
	v       *engine.Summary
}

func (r *recentVerdict) store(pod *corev1.Pod, version uint64, v *engine.Summary) {
	if pod.UID == "" {
		return // a pod without identity (a hand-made request) is never matched again
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.uid, r.rv, r.version, r.v = pod.UID, pod.ResourceVersion, version, v
}

// get returns the stored verdict for this pod at this cluster version, or nil.
func (r *recentVerdict) get(pod *corev1.Pod, version uint64) *engine.Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.v == nil || pod.UID == "" || pod.UID != r.uid || pod.ResourceVersion != r.rv || version != r.version {
		return nil
	}
	return r.v
}
