package extender

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// rollbackJob is what a failed bind did and must take back.
type rollbackJob struct {
	key     string
	pod     *corev1.Pod // the version the placement was written over
	node    string
	placed  map[string]string // the annotations the bind wrote: only a pod still carrying them is touched
	lock    bool              // the node lock was taken
	patched bool              // the placement annotations were (or may have been) written
	undo    func()
}

// rollback takes a failed bind back on a context of its own, with a deadline (RollbackTimeout), retrying every
// step until it is done: the request's context is often the reason for the failure (kube-scheduler gave up).
// Until it is done the pod stays "being bound" (another bind of it changes nothing) and its assumed usage
// stays counted, so nobody is offered its GPU share while its annotations may still say otherwise; its node
// lock counts as not live at once (lockLive). It waits for the rollback while the request is alive, at most
// a few seconds, and leaves the rest running.
func (s *Server) rollback(reqCtx context.Context, j rollbackJob) {
	if f, ok := s.flights.Load(j.key); ok {
		f.(*bindFlight).failed.Store(true)
	}
	if !j.lock && !j.patched {
		j.undo()
		s.flights.Delete(j.key)
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.RollbackTimeout)
		defer cancel()
		bound := false
		if j.patched {
			bound = s.clearPlacement(ctx, j)
		}
		if j.lock && (!bound || s.opts.ReleaseLockAfterBind) {
			s.releaseLockRetrying(ctx, j.node, j.pod)
		}
		if !bound {
			j.undo()
		}
		s.flights.Delete(j.key)
		s.metrics.rollback()
	}()
	wait := time.NewTimer(3 * time.Second)
	defer wait.Stop()
	select {
	case <-done:
	case <-reqCtx.Done():
	case <-wait.C:
	}
}

// clearPlacement takes HAMi's placement off a pod whose bind failed: bind-phase failed and no devices, as
// HAMi does, written over the version read (resourceVersion precondition) so that it never wipes a newer bind.
// A pod that turns out bound to the node after all (the binding went through, its answer was lost) keeps its
// placement and clearPlacement reports true; a pod bound elsewhere meanwhile gets its own annotations back.
func (s *Server) clearPlacement(ctx context.Context, j rollbackJob) (bound bool) {
	pods := s.client.CoreV1().Pods(j.pod.Namespace)
	retry(ctx, func() error {
		fresh, err := pods.Get(ctx, j.pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("pod %s: %w", j.key, err)
		}
		if fresh.UID != j.pod.UID {
			return nil
		}
		if fresh.Annotations[codec.PodNodeAnnotation] != j.placed[codec.PodNodeAnnotation] ||
			fresh.Annotations[codec.PodAllocatedAnnotation] != j.placed[codec.PodAllocatedAnnotation] {
			return nil // not this bind's placement (it never landed, or a newer one replaced it)
		}
		annos, labels := map[string]any{}, map[string]any{}
		switch fresh.Spec.NodeName {
		case j.node:
			if fresh.Annotations[codec.PodNodeAnnotation] == j.node {
				bound = true
				s.log.Info("bind went through although it reported an error", "pod", j.key, "node", j.node)
				return nil
			}
			fallthrough
		default:
			if fresh.Spec.NodeName != "" {
				// Bound by someone else after the placement was written: give back what it carried before.
				for _, k := range s.placementKeys() {
					annos[k] = orNil(j.pod.Annotations, k)
				}
				labels[codec.PodNodeAnnotation] = orNil(j.pod.Labels, codec.PodNodeAnnotation)
				break
			}
			for _, k := range append([]string{codec.PodNodeAnnotation, codec.PodMigAllocationsAnnotation}, engine.DeviceListKeys(s.state.Config())...) {
				annos[k] = nil
			}
			annos[codec.PodBindPhaseAnnotation] = codec.BindPhaseFailed
			labels[codec.PodNodeAnnotation] = nil
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": fresh.ResourceVersion, "annotations": annos, "labels": labels}})
		if _, err := pods.Patch(ctx, j.pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("pod %s: cannot take the placement back: %w", j.key, err)
		}
		return nil
	}, func(err error) {
		s.log.Error("cannot mark bind failed", "pod", j.key, "err", err)
	})
	return bound
}

func orNil(m map[string]string, k string) any {
	if v, ok := m[k]; ok {
		return v
	}
	return nil
}

// Sweep is one pass of the janitor, on the leader: it takes the placement off pods that carry one but are
// not bound and that no bind works on any more (an extender killed mid-bind, an abandoned bind), and releases
// node locks that are not live (lockLive): their owner is gone, finished, failed or abandoned. A placement or
// lock younger than the bind timeout is left alone, since a bind elsewhere may still be working on it.
func (s *Server) Sweep(ctx context.Context) {
	if s.opts.IsLeader != nil && !s.opts.IsLeader() {
		return
	}
	now := s.now()
	var orphans []*corev1.Pod
	s.state.Pods(func(p *corev1.Pod) {
		if p.Spec.NodeName == "" && p.DeletionTimestamp == nil && p.Annotations[codec.PodNodeAnnotation] != "" &&
			p.Annotations[codec.PodBindPhaseAnnotation] == codec.BindPhaseAllocating {
			orphans = append(orphans, p)
		}
	})
	for _, p := range orphans {
		key := p.Namespace + "/" + p.Name
		if _, busy := s.flights.Load(key); busy {
			continue
		}
		if at, err := strconv.ParseInt(p.Annotations[codec.PodBindTimeAnnotation], 10, 64); err == nil && now.Sub(time.Unix(at, 0)) < s.opts.BindTimeout {
			continue
		}
		if !s.claim(key) {
			continue
		}
		s.log.Info("taking the placement off a pod no bind works on", "pod", key, "node", p.Annotations[codec.PodNodeAnnotation])
		s.clearPlacement(ctx, rollbackJob{key: key, pod: p, node: p.Annotations[codec.PodNodeAnnotation], placed: p.Annotations})
		s.flights.Delete(key)
	}
	for node, raw := range s.state.NodeLocks() {
		l, err := codec.ParseNodeLock(raw)
		if err != nil {
			continue
		}
		if s.heldLock(node) == raw {
			continue // binds in flight here share it
		}
		live, why := s.lockLive(ctx, node, raw, l, now, true)
		if s.ownLock(node, raw) {
			live, why = false, "this extender's, its binds are over (a release failed)"
		}
		if !live {
			err := s.releaseLock(ctx, node, func(r string, _ codec.NodeLock) bool { return r == raw })
			if err == nil {
				s.leftLocks.CompareAndDelete(node, raw)
			}
			if err != nil {
				s.log.Warn("cannot release a stale node lock", "node", node, "lock", raw, "err", err)
			} else {
				s.log.Info("released a stale node lock", "node", node, "lock", raw, "why", why)
			}
		}
	}
}

// claim marks the pod as being worked on (as a bind does), or reports false when a bind already is.
func (s *Server) claim(key string) bool {
	f := &bindFlight{node: ""}
	f.failed.Store(true)
	_, busy := s.flights.LoadOrStore(key, f)
	return !busy
}

// RunJanitor sweeps every interval until ctx ends.
func (s *Server) RunJanitor(ctx context.Context, every time.Duration) {
	runEvery(ctx, every, func() {
		sctx, cancel := context.WithTimeout(ctx, every+s.opts.BindTimeout)
		defer cancel()
		s.Sweep(sctx)
	})
}
