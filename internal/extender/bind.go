package extender

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/engine/codec"
)

// handleBind places the pod on the node kube-scheduler chose, the way HAMi's bind does, but safely: the
// placement is re-checked and assumed atomically, the node lock is taken with optimistic concurrency, and
// every failure rolls the assumption back.
func (s *Server) handleBind(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderBindingArgs
	if !decode(w, r, &args) {
		return
	}
	res := extenderv1.ExtenderBindingResult{}
	if err := s.bind(r.Context(), &args); err != nil {
		res.Error = err.Error()
		s.log.Warn("bind failed", "pod", args.PodNamespace+"/"+args.PodName, "node", args.Node, "err", err)
		s.metrics.bindResult(false)
	} else {
		s.log.Info("bound", "pod", args.PodNamespace+"/"+args.PodName, "node", args.Node)
		s.metrics.bindResult(true)
	}
	writeJSON(w, res)
}

func (s *Server) bind(ctx context.Context, args *extenderv1.ExtenderBindingArgs) error {
	if s.opts.IsLeader != nil && !s.opts.IsLeader() {
		return fmt.Errorf("this extender replica is not the leader")
	}
	key := args.PodNamespace + "/" + args.PodName
	pods := s.client.CoreV1().Pods(args.PodNamespace)
	pod, err := pods.Get(ctx, args.PodName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("pod %s: %w", key, err)
	}
	if args.PodUID != "" && pod.UID != args.PodUID {
		return fmt.Errorf("pod %s was recreated (uid %s, bind asked for %s)", key, pod.UID, args.PodUID)
	}
	now := s.now()
	v, placed, undo := s.state.Reserve(pod, args.Node, now)
	if undo == nil {
		reason := v.Summary
		if ns := v.NodeStatus(args.Node); ns != nil && ns.Reason != "" {
			reason = ns.Reason
		}
		return fmt.Errorf("pod %s no longer fits on node %s: %s", key, args.Node, reason)
	}
	fail := func(err error) error {
		undo()
		s.markFailed(ctx, pod)
		s.releaseLock(ctx, args.Node, pod)
		return err
	}
	// Binds to one node take turns: kube-scheduler sends them concurrently, and without this the second would
	// find the first one's hami.io/mutex.lock and fail instead of waiting a few milliseconds.
	turn := s.nodeTurn(args.Node)
	turn.Lock()
	defer turn.Unlock()
	if err := s.lockNode(ctx, args.Node, pod, now); err != nil {
		undo()
		return err
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": placed.Annotations, "labels": map[string]string{codec.PodNodeAnnotation: args.Node}}})
	if _, err := pods.Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fail(fmt.Errorf("pod %s: cannot write HAMi's annotations: %w", key, err))
	}
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target: corev1.ObjectReference{Kind: "Node", Name: args.Node}}
	if err := pods.Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fail(fmt.Errorf("pod %s: cannot bind to node %s: %w", key, args.Node, err))
	}
	if s.opts.ReleaseLockAfterBind {
		s.releaseLock(ctx, args.Node, pod)
	}
	return nil
}

// lockNode takes hami.io/mutex.lock for the pod. A lock held by another pod is taken over when it expired,
// when its owner is gone or has finished allocating; otherwise the node is busy and bind fails, so that
// kube-scheduler retries later (HAMi's device plugin identifies the pod being allocated by this lock).
//
// It starts from the node as this extender's last write left it (binds to one node take turns, so consecutive
// binds need no read): the patch's resourceVersion precondition turns a stale copy into a conflict, and then
// the node is read afresh. A lock that blocks is always confirmed on a fresh read before the bind fails.
func (s *Server) lockNode(ctx context.Context, nodeName string, pod *corev1.Pod, now time.Time) error {
	nodes := s.client.CoreV1().Nodes()
	n, fresh := s.lastWritten(nodeName), false
	for attempt := 0; attempt < 5; attempt++ {
		if n == nil {
			got, err := nodes.Get(ctx, nodeName, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("node %s: %w", nodeName, err)
			}
			n, fresh = got, true
		}
		if raw := n.Annotations[codec.NodeLockAnnotation]; raw != "" {
			if l, err := codec.ParseNodeLock(raw); err == nil && !l.Expired(now) && !(l.Namespace == pod.Namespace && l.Pod == pod.Name) {
				if !fresh {
					n = nil // our copy may predate the release: read the node before deciding
					attempt--
					continue
				}
				if s.lockOwnerActive(ctx, l) {
					return fmt.Errorf("node %s is locked by pod %s/%s since %s (HAMi's device plugin has not allocated it yet)",
						nodeName, l.Namespace, l.Pod, l.Time.Format(time.RFC3339))
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
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("node %s: cannot take %s: %w", nodeName, codec.NodeLockAnnotation, err)
		}
		n = nil
	}
	return fmt.Errorf("node %s: %s kept changing; try again", nodeName, codec.NodeLockAnnotation)
}

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
	}
}

// lockOwnerActive reports whether the lock's owner still waits for allocation.
func (s *Server) lockOwnerActive(ctx context.Context, l codec.NodeLock) bool {
	if l.Pod == "" {
		return true // legacy time-only lock: honour it until it expires
	}
	owner, err := s.client.CoreV1().Pods(l.Namespace).Get(ctx, l.Pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		return true
	}
	switch owner.Annotations[codec.PodBindPhaseAnnotation] {
	case "success", "failed":
		return false
	}
	return owner.Status.Phase != corev1.PodSucceeded && owner.Status.Phase != corev1.PodFailed
}

// nodeTurn is the in-process mutex that serialises binds to one node.
func (s *Server) nodeTurn(node string) *sync.Mutex {
	m, _ := s.nodeTurns.LoadOrStore(node, &sync.Mutex{})
	return m.(*sync.Mutex)
}

// releaseLock removes the node lock if this pod holds it, retrying when another writer changed the node in
// between: a lock left behind would stall the node for its whole 5-minute lifetime.
func (s *Server) releaseLock(ctx context.Context, nodeName string, pod *corev1.Pod) {
	nodes := s.client.CoreV1().Nodes()
	n, fresh := s.lastWritten(nodeName), false
	for attempt := 0; attempt < 5; attempt++ {
		if n == nil {
			got, err := nodes.Get(ctx, nodeName, metav1.GetOptions{})
			if err != nil {
				return
			}
			n, fresh = got, true
		}
		l, err := codec.ParseNodeLock(n.Annotations[codec.NodeLockAnnotation])
		if err != nil || l.Namespace != pod.Namespace || l.Pod != pod.Name {
			if !fresh {
				n = nil // our copy may be out of date: only a fresh read says the lock is not ours
				attempt--
				continue
			}
			return
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": n.ResourceVersion, "annotations": map[string]any{codec.NodeLockAnnotation: nil}}})
		updated, err := nodes.Patch(ctx, nodeName, types.MergePatchType, patch, metav1.PatchOptions{})
		if err == nil {
			s.wrote(updated)
			return
		}
		n = nil
		if !apierrors.IsConflict(err) {
			s.log.Warn("cannot release node lock", "node", nodeName, "err", err)
			return
		}
	}
	s.log.Warn("cannot release node lock: the node kept changing", "node", nodeName)
}

// markFailed records bind-phase=failed and clears the placement so that nobody counts the pod any more.
func (s *Server) markFailed(ctx context.Context, pod *corev1.Pod) {
	annos := map[string]any{codec.PodBindPhaseAnnotation: "failed"}
	for _, k := range []string{codec.PodNodeAnnotation, codec.PodToAllocateAnnotation, codec.PodAllocatedAnnotation, codec.PodMigAllocationsAnnotation} {
		annos[k] = nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annos}})
	if _, err := s.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil &&
		!strings.Contains(err.Error(), "not found") {
		s.log.Warn("cannot mark bind failed", "pod", pod.Namespace+"/"+pod.Name, "err", err)
	}
}
