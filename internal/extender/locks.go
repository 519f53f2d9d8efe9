package extender

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// lockNode takes hami.io/mutex.lock for the pod. A lock held by another pod is taken over when it is not live
// (see lockLive); otherwise the node is busy and bind fails, so that kube-scheduler retries later (HAMi's
// device plugin identifies the pod being allocated by this lock).
//
// It starts from the node as this extender's last write left it (binds to one node take turns, so consecutive
// binds need no read): the patch's resourceVersion precondition turns a stale copy into a conflict, and then
// the node is read afresh. A lock that blocks is always confirmed on a fresh read before the bind fails.
func (s *Server) lockNode(ctx context.Context, nodeName string, pod *corev1.Pod, now time.Time) (string, error) {
	nodes := s.client.CoreV1().Nodes()
	n, fresh := s.lastWritten(nodeName), false
	for attempt := 0; attempt < 5; attempt++ {
		if n == nil {
			got, err := nodes.Get(ctx, nodeName, metav1.GetOptions{})
			if err != nil {
				return "", fmt.Errorf("node %s: %w", nodeName, err)
			}
			n, fresh = got, true
		}
		if raw := n.Annotations[codec.NodeLockAnnotation]; raw != "" && !s.ownLock(nodeName, raw) {
			if l, err := codec.ParseNodeLock(raw); err == nil && (l.Namespace != pod.Namespace || l.Pod != pod.Name) {
				if live, why := s.lockLive(ctx, nodeName, raw, l, now, fresh); live {
					if !fresh {
						n = nil // our copy may predate the release: read the node before deciding
						attempt--
						continue
					}
					return "", fmt.Errorf("node %s is locked by pod %s/%s since %s (%s)",
						nodeName, l.Namespace, l.Pod, l.Time.Format(time.RFC3339), why)
				}
			}
		}
		value := codec.FormatNodeLock(codec.NodeLock{Time: now.UTC().Truncate(time.Second), Namespace: pod.Namespace, Pod: pod.Name})
		// resourceVersion in a merge patch is a precondition: a concurrent writer makes this a conflict.
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": n.ResourceVersion, "annotations": map[string]string{codec.NodeLockAnnotation: value}}})
		updated, err := nodes.Patch(ctx, nodeName, types.MergePatchType, patch, metav1.PatchOptions{})
		if err == nil {
			s.wrote(updated)
			return value, nil
		}
		if !apierrors.IsConflict(err) {
			return "", fmt.Errorf("node %s: cannot take %s: %w", nodeName, codec.NodeLockAnnotation, err)
		}
		n = nil
	}
	return "", fmt.Errorf("node %s: %s kept changing; try again", nodeName, codec.NodeLockAnnotation)
}

// ownLock reports, when locks are released after bind, whether raw is a lock this process wrote and has not
// released: held by the node's binds in flight, or left by a release that failed. Such a lock never blocks
// this process, and is released by it. With HAMi's device plugin a lock is never "own": it waits for the
// plugin.
func (s *Server) ownLock(node, raw string) bool {
	if !s.opts.ReleaseLockAfterBind || raw == "" {
		return false
	}
	if left, ok := s.leftLocks.Load(node); ok && left.(string) == raw {
		return true
	}
	return s.heldLock(node) == raw
}

// heldLock is the lock value the node's binds in flight share, or "".
func (s *Server) heldLock(node string) string {
	m, ok := s.nodeTurns.Load(node)
	if !ok {
		return ""
	}
	if raw := m.(*turn).raw.Load(); raw != nil {
		return *raw
	}
	return ""
}

// lockLive reports whether a node lock still protects a bind or an allocation, and if so why:
//   - a lock older than HAMi's 5 minutes is not (a lock dated in the future counts from when this extender
//     first saw it, so it too expires after 5 minutes);
//   - a time-only lock (older HAMi) is, until it expires;
//   - a lock of a pod this extender is binding is; of one whose bind failed here, is not;
//   - a lock of a pod that is gone, finished, being deleted or whose bind-phase is success or failed is not;
//   - a lock of a pod that is not bound and that no bind here is working on is live for the bind timeout only
//     (an extender that crashed mid-bind, or an abandoned bind);
//   - a lock of a bound pod still "allocating" is live (HAMi's device plugin has not allocated it yet), unless
//     locks are released after bind (no device plugin consumes them).
//
// With useAPI, an owner the informer does not know is read from the API server; without, it counts as gone.
func (s *Server) lockLive(ctx context.Context, node, raw string, l codec.NodeLock, now time.Time, useAPI bool) (bool, string) {
	at := s.lockTime(node, raw, l, now)
	if now.Sub(at) > codec.NodeLockTTL {
		return false, "expired"
	}
	if l.Pod == "" {
		return true, "a lock without an owner, honoured until it expires"
	}
	key := l.Namespace + "/" + l.Pod
	if f, ok := s.flights.Load(key); ok {
		if f.(*bindFlight).failed.Load() {
			return false, "its bind failed"
		}
		return true, "a bind in progress"
	}
	if !validPodRef(l.Namespace, l.Pod) {
		return false, "it names no valid pod"
	}
	owner := s.state.Pod(l.Namespace, l.Pod)
	if owner == nil && useAPI {
		got, err := s.client.CoreV1().Pods(l.Namespace).Get(ctx, l.Pod, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return true, "its owner cannot be read: " + err.Error()
		default:
			owner = got
		}
	}
	if owner == nil {
		return false, "its owner is gone"
	}
	switch owner.Annotations[codec.PodBindPhaseAnnotation] {
	case codec.BindPhaseSuccess, codec.BindPhaseFailed:
		return false, "its owner's bind-phase is " + owner.Annotations[codec.PodBindPhaseAnnotation]
	}
	if owner.DeletionTimestamp != nil || owner.Status.Phase == corev1.PodSucceeded || owner.Status.Phase == corev1.PodFailed {
		return false, "its owner is finished"
	}
	if owner.Spec.NodeName == "" {
		if now.Sub(at) < s.opts.BindTimeout {
			return true, "a bind in progress"
		}
		return false, "its owner is not bound and no bind is in progress"
	}
	if s.opts.ReleaseLockAfterBind {
		// Binds to one node share a lock that names the first of them (see turn): until the bind timeout
		// others of the same process may still be binding under it.
		if now.Sub(at) < s.opts.BindTimeout {
			return true, "its owner is bound; binds sharing its lock may still be in progress"
		}
		return false, "its owner is bound"
	}
	return true, "HAMi's device plugin has not allocated it yet"
}

// lockSeen remembers, per node, a lock dated in the future and when this extender first saw it.
type lockSeen struct {
	raw string
	at  time.Time
}

// lockTime is the lock's time, or for a lock dated in the future the time this extender first saw it.
func (s *Server) lockTime(node, raw string, l codec.NodeLock, now time.Time) time.Time {
	if !l.Time.After(now) {
		return l.Time
	}
	v, _ := s.futureLocks.LoadOrStore(node, lockSeen{raw: raw, at: now})
	if seen := v.(lockSeen); seen.raw == raw {
		return seen.at
	}
	s.futureLocks.Store(node, lockSeen{raw: raw, at: now})
	return now
}

// lockedReason is filter's reason to leave a node out for this moment, given its lock raw: a live lock held for
// another pod by a bind that is not this extender's (its own binds to one node take turns, see nodeTurn). No
// API call.
func (s *Server) lockedReason(raw, node string, pod *corev1.Pod, now time.Time) string {
	if raw == "" {
		return ""
	}
	l, err := codec.ParseNodeLock(raw)
	if err != nil || (l.Namespace == pod.Namespace && l.Pod == pod.Name) || s.ownLock(node, raw) {
		return ""
	}
	if _, ours := s.flights.Load(l.Namespace + "/" + l.Pod); ours {
		return ""
	}
	if live, why := s.lockLive(context.Background(), node, raw, l, now, false); live {
		return fmt.Sprintf("%s: node %s is locked by pod %s/%s since %s (%s)", NodeLocked, node, l.Namespace, l.Pod, l.Time.UTC().Format(time.RFC3339), why)
	}
	return ""
}

// NodeLocked is the reason code filter gives a node held by a live hami.io/mutex.lock.
const NodeLocked = "NodeLocked"

// lastWritten is the node as this extender's last lock write returned it, or nil.
func (s *Server) lastWritten(node string) *corev1.Node {
	if n, ok := s.nodeWrites.Load(node); ok {
		return n.(*corev1.Node)
	}
	return nil
}

// wrote remembers, of a node returned by a lock write, what the next lock needs: its resourceVersion and
// lock annotation (not the whole Node). Entries of nodes the cluster no longer has are dropped now and then.
func (s *Server) wrote(n *corev1.Node) {
	if n == nil || n.Name == "" || n.ResourceVersion == "" {
		return // fakes that return nothing
	}
	keep := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.ResourceVersion, Annotations: map[string]string{}}}
	if l, ok := n.Annotations[codec.NodeLockAnnotation]; ok {
		keep.Annotations[codec.NodeLockAnnotation] = l
	}
	s.nodeWrites.Store(n.Name, keep)
	if s.writes.Add(1)%1024 == 0 {
		s.forgetGoneNodes()
	}
}

// forgetGoneNodes drops the saved copies (and bind turns) of nodes the cluster no longer has: with node
// autoscaling, names come and go for good.
func (s *Server) forgetGoneNodes() {
	var gone []string
	s.state.Read(func(c *engine.Cluster) {
		s.nodeWrites.Range(func(k, _ any) bool {
			if c.Node(k.(string)) == nil {
				gone = append(gone, k.(string))
			}
			return true
		})
	})
	for _, name := range gone {
		s.nodeWrites.Delete(name)
		s.nodeTurns.Delete(name) // a bind to a node that is gone fails anyway
		s.leftLocks.Delete(name)
		s.futureLocks.Delete(name)
	}
}

// turn coordinates the binds to one node in this process. When a HAMi device plugin releases the lock (the
// default), binds to the node take turns, each under a lock of its own pod, as HAMi's device plugin expects.
// When the lock is released after bind (no device plugin consumes it), the binds to the node share one lock:
// the first takes it, the others write their Bindings at the same time, and the lock is released LockHold
// after the last one ended unless another bind came meanwhile, so a burst takes and releases it once per node.
type turn struct {
	sync.Mutex
	sharing int                    // binds in flight under the shared lock (release-after-bind only)
	owner   *corev1.Pod            // the pod the shared lock names; nil when this process holds no lock on the node
	raw     atomic.Pointer[string] // the shared lock's value while held; read without the mutex (lockNode runs under it)
	at      time.Time              // when it was written
	gen     uint64                 // bumped by every entry, so that a pending release knows it is out of date
}

// nodeTurn is the node's turn.
func (s *Server) nodeTurn(node string) *turn {
	m, _ := s.nodeTurns.LoadOrStore(node, &turn{})
	return m.(*turn)
}

// nodeLease is a bind's hold on a node: ownsLock says whether the node lock is the bind's own (so that its
// rollback releases it); leave ends the hold.
type nodeLease struct {
	ownsLock bool
	leave    func(bound bool)
}

// enterNode waits for the node's turn and takes (or, sharing, joins) the node lock for the pod.
func (s *Server) enterNode(ctx context.Context, node string, pod *corev1.Pod, now time.Time) (nodeLease, error) {
	if s.state.LockFree(node) {
		// The node's device plugin is kubectl-hami's agent: it tells the pods allocating at once apart without
		// the lock (codec.NodeAllocatorAnnotation), so binds to the node run side by side and write no lock. A
		// live lock another scheduler took still holds the node: that plugin would take its owner first.
		if why := s.lockedReason(s.state.NodeLock(node), node, pod, now); why != "" {
			return nodeLease{}, errors.New(why)
		}
		return nodeLease{leave: func(bool) {}}, nil
	}
	t := s.nodeTurn(node)
	t.Lock()
	if !s.opts.ReleaseLockAfterBind {
		if _, err := s.lockNode(ctx, node, pod, now); err != nil {
			t.Unlock()
			return nodeLease{}, err
		}
		return nodeLease{ownsLock: true, leave: func(bool) { t.Unlock() }}, nil
	}
	t.gen++
	// Taken by the first bind; written again for a later one once half the bind timeout has passed, so that
	// other processes (a new leader) see it live while binds here still share it (lockLive).
	if t.owner == nil || now.Sub(t.at) > s.opts.BindTimeout/2 {
		raw, err := s.lockNode(ctx, node, pod, now)
		if err != nil {
			t.Unlock()
			return nodeLease{}, err
		}
		t.owner, t.at = pod, now
		t.raw.Store(&raw)
		s.leftLocks.Delete(node) // written over
	}
	t.sharing++
	t.Unlock()
	return nodeLease{leave: func(bool) {
		t.Lock()
		defer t.Unlock()
		if t.sharing--; t.sharing > 0 {
			return
		}
		if s.opts.LockHold <= 0 {
			s.releaseShared(node, t)
			return
		}
		gen := t.gen
		time.AfterFunc(s.opts.LockHold, func() {
			t.Lock()
			defer t.Unlock()
			if t.gen == gen && t.sharing == 0 && t.owner != nil {
				s.releaseShared(node, t)
			}
		})
	}}, nil
}

// releaseShared releases the node's shared lock; t is held. It runs on a context of its own, retried: the
// request's may be over, and a lock left behind stalls the node for other schedulers until the janitor finds it.
func (s *Server) releaseShared(node string, t *turn) {
	rctx, cancel := context.WithTimeout(context.Background(), s.opts.RollbackTimeout)
	defer cancel()
	s.releaseSharedCtx(rctx, node, t)
}

func (s *Server) releaseSharedCtx(ctx context.Context, node string, t *turn) {
	raw := s.heldLock(node)
	s.leftLocks.Store(node, raw) // until it is known to be gone: own, whatever happens (see ownLock)
	retry(ctx, func() error {
		err := s.releaseLock(ctx, node, func(r string, _ codec.NodeLock) bool { return r == raw })
		if err == nil {
			s.leftLocks.CompareAndDelete(node, raw)
		}
		return err
	}, func(err error) {
		s.log.Warn("cannot release node lock; the janitor will", "node", node, "lock", raw, "err", err)
	})
	t.owner = nil
	t.raw.Store(nil)
}

// releaseHeldLocks releases, when the server stops, the shared locks its binds held a moment longer (LockHold)
// and any left by a failed release, so that the next leader need not wait for them to age (lockLive).
func (s *Server) releaseHeldLocks(ctx context.Context) {
	s.nodeTurns.Range(func(k, v any) bool {
		t := v.(*turn)
		t.Lock()
		if t.sharing == 0 && t.owner != nil {
			t.gen++ // a pending release has nothing left to do
			s.releaseSharedCtx(ctx, k.(string), t)
		}
		t.Unlock()
		return ctx.Err() == nil
	})
	s.leftLocks.Range(func(k, v any) bool {
		node, raw := k.(string), v.(string)
		if err := s.releaseLock(ctx, node, func(r string, _ codec.NodeLock) bool { return r == raw }); err == nil {
			s.leftLocks.CompareAndDelete(node, raw)
		}
		return ctx.Err() == nil
	})
}

// releaseLock removes the node lock when owns says it is the one to remove, retrying when another writer
// changed the node in between. It returns nil when the lock is gone or is not one to remove.
func (s *Server) releaseLock(ctx context.Context, nodeName string, owns func(raw string, l codec.NodeLock) bool) error {
	nodes := s.client.CoreV1().Nodes()
	n, fresh := s.lastWritten(nodeName), false
	for attempt := 0; attempt < 5; attempt++ {
		if n == nil {
			got, err := nodes.Get(ctx, nodeName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("node %s: %w", nodeName, err)
			}
			n, fresh = got, true
		}
		raw := n.Annotations[codec.NodeLockAnnotation]
		l, err := codec.ParseNodeLock(raw)
		if err != nil || !owns(raw, l) {
			if !fresh {
				n = nil // our copy may be out of date: only a fresh read says the lock is not ours
				attempt--
				continue
			}
			return nil
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": n.ResourceVersion, "annotations": map[string]any{codec.NodeLockAnnotation: nil}}})
		updated, err := nodes.Patch(ctx, nodeName, types.MergePatchType, patch, metav1.PatchOptions{})
		if err == nil {
			s.wrote(updated)
			return nil
		}
		n = nil
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("node %s: cannot release %s: %w", nodeName, codec.NodeLockAnnotation, err)
		}
	}
	return fmt.Errorf("node %s: cannot release %s: the node kept changing", nodeName, codec.NodeLockAnnotation)
}

// releaseLockRetrying releases the pod's lock on the node, retrying with backoff until it is done or ctx
// ends: a lock left behind stalls the node.
func (s *Server) releaseLockRetrying(ctx context.Context, nodeName string, pod *corev1.Pod) {
	owns := func(_ string, l codec.NodeLock) bool { return l.Namespace == pod.Namespace && l.Pod == pod.Name }
	retry(ctx, func() error { return s.releaseLock(ctx, nodeName, owns) }, func(err error) {
		s.log.Warn("cannot release node lock", "node", nodeName, "pod", pod.Namespace+"/"+pod.Name, "err", err)
	})
}

// retry runs f until it returns nil or ctx ends, with a backoff from 50 ms to 2 s; giveUp gets the last error.
func retry(ctx context.Context, f func() error, giveUp func(error)) {
	wait := 50 * time.Millisecond
	for {
		err := f()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			giveUp(fmt.Errorf("%w (giving up: %w)", err, ctx.Err()))
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}
