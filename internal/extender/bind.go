package extender

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// placementKeys are the pod annotations a bind writes and a rollback takes back, for every device type
// the extender schedules (engine.PlacementKeys).
func (s *Server) placementKeys() []string { return engine.PlacementKeys(s.state.Config()) }

// handleBind places the pod on the node kube-scheduler chose, the way HAMi's bind does, but safely: the
// placement is re-checked and assumed atomically before any API call, the node lock is taken with optimistic
// concurrency, the pod's annotations are written only over the version that was checked, and every failure
// is rolled back on a context of its own (see rollback).
func (s *Server) handleBind(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderBindingArgs
	if !decode(w, r, &args) {
		return
	}
	if err := validBindArgs(&args); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	res := extenderv1.ExtenderBindingResult{}
	if err := s.bind(r.Context(), &args); err != nil {
		res.Error = err.Error()
		s.log.Warn("bind failed", "pod", args.PodNamespace+"/"+args.PodName, "node", args.Node, "err", err)
		if errors.Is(err, errAlreadyBound) {
			s.metrics.alreadyBound()
		} else {
			s.metrics.bindResult(false)
		}
	} else {
		s.log.Info("bound", "pod", args.PodNamespace+"/"+args.PodName, "node", args.Node)
		s.metrics.bindResult(true)
	}
	writeJSON(w, res)
}

// validBindArgs checks the names before they reach an API path: a namespace is a DNS label, pod and node
// names DNS subdomains.
func validBindArgs(a *extenderv1.ExtenderBindingArgs) error {
	if errs := validation.IsDNS1123Label(a.PodNamespace); len(errs) > 0 {
		return fmt.Errorf("bind: podNamespace %q: %s", a.PodNamespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(a.PodName); len(errs) > 0 {
		return fmt.Errorf("bind: podName %q: %s", a.PodName, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(a.Node); len(errs) > 0 {
		return fmt.Errorf("bind: node %q: %s", a.Node, strings.Join(errs, "; "))
	}
	return nil
}

// validPodRef reports whether namespace/name can name a pod (checked before any API call with them).
func validPodRef(namespace, name string) bool {
	return len(validation.IsDNS1123Label(namespace)) == 0 && len(validation.IsDNS1123Subdomain(name)) == 0
}

// awaitLeader reports whether this replica leads, waiting up to LeaderWait (and ctx) for it to.
func (s *Server) awaitLeader(ctx context.Context) bool {
	if s.opts.IsLeader == nil || s.opts.IsLeader() {
		return true
	}
	if s.opts.LeaderWait <= 0 {
		return false
	}
	deadline := time.NewTimer(s.opts.LeaderWait)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return s.opts.IsLeader()
		case <-tick.C:
			if s.opts.IsLeader() {
				return true
			}
		}
	}
}

// errAlreadyBound marks a bind refused because the pod is bound, or being bound, already: nothing changed.
var errAlreadyBound = errors.New("already bound")

// bindFlight is a bind in progress in this process; failed is set once it is being rolled back.
type bindFlight struct {
	node   string
	failed atomic.Bool
}

func (s *Server) bind(ctx context.Context, args *extenderv1.ExtenderBindingArgs) error {
	if !s.awaitLeader(ctx) {
		return fmt.Errorf("this extender replica is not the leader")
	}
	key := args.PodNamespace + "/" + args.PodName
	// One bind per pod at a time: a second one (kube-scheduler retrying after a timeout, or anyone else)
	// changes nothing, whichever node it names.
	if f, busy := s.flights.LoadOrStore(key, &bindFlight{node: args.Node}); busy {
		return fmt.Errorf("pod %s is being bound to node %s already; nothing changed: %w", key, f.(*bindFlight).node, errAlreadyBound)
	}
	held := true
	defer func() {
		if held {
			s.flights.Delete(key)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, s.opts.BindTimeout)
	defer cancel()
	pods := s.client.CoreV1().Pods(args.PodNamespace)
	// The informer's copy: the reservation is taken before any round trip to the API server. A pod the
	// informer has not delivered yet is read.
	pod := s.state.Pod(args.PodNamespace, args.PodName)
	if pod == nil {
		got, err := pods.Get(ctx, args.PodName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("pod %s: %w", key, err)
		}
		pod = got
	}
	if err := bindable(pod, args); err != nil {
		return err
	}
	now := s.now()
	v, placed, undo, err := s.state.Reserve(pod, args.Node, now)
	if err != nil {
		return fmt.Errorf("%w: %w", err, errAlreadyBound)
	}
	if undo == nil && v != nil && v.Fits && v.NoGPURequest {
		// A pod the webhook sent here that asks for no device HAMi manages (only a resource it routes, such as
		// aws.amazon.com/neuroncore where no family reads it): no GPU to place or lock, so it is bound as it is,
		// as HAMi's Bind does for a pod none of its devices asks for.
		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
			Target: corev1.ObjectReference{Kind: "Node", Name: args.Node}}
		if err := pods.Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("pod %s: cannot bind to node %s: %w", key, args.Node, err)
		}
		return nil
	}
	if undo == nil {
		reason := v.Summary
		if ns := v.NodeStatus(args.Node); ns != nil && ns.Reason != "" {
			reason = ns.Reason
			if engine.IsKubeCheck(ns.Code) && ns.Check != nil {
				return fmt.Errorf("pod %s cannot be bound to node %s: kube-scheduler's %s check refuses it: %s (%s)", key, args.Node, ns.Code, reason, ns.Check.Detail)
			}
		}
		return fmt.Errorf("pod %s no longer fits on node %s: %s", key, args.Node, reason)
	}
	// Binds to one node coordinate through its turn: kube-scheduler sends them concurrently, and without it the
	// second would find the first one's hami.io/mutex.lock and fail instead of waiting a few milliseconds.
	lease, err := s.enterNode(ctx, args.Node, pod, now)
	if err != nil {
		held = false // the rollback lets the pod go
		s.rollback(ctx, rollbackJob{key: key, pod: pod, node: args.Node, placed: placed.Annotations, undo: undo})
		return err
	}
	patched := false
	fail := func(err error) error {
		held = false
		lease.leave(false) // the next bind need not wait for the rollback: a failed bind's lock is not live
		s.rollback(ctx, rollbackJob{key: key, pod: pod, node: args.Node, placed: placed.Annotations, lock: lease.ownsLock, patched: patched, undo: undo})
		return err
	}
	if s.bindCarriesPlacement(ctx, pod, placed) {
		// One round trip: the Binding carries HAMi's annotations and label, so the pod is bound and placed
		// at once (no moment where it is placed but unbound), under the same resourceVersion precondition.
		if uncertain, err := s.bindPlaced(ctx, pod, placed); err != nil {
			patched = uncertain // a Binding whose answer was lost may have gone through: the rollback looks
			return fail(err)
		}
		lease.leave(true)
		return nil
	}
	if written, err := s.writePlacement(ctx, pod, placed); err != nil {
		patched = written
		return fail(err)
	}
	patched = true
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target: corev1.ObjectReference{Kind: "Node", Name: args.Node}}
	if err := pods.Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fail(fmt.Errorf("pod %s: cannot bind to node %s: %w", key, args.Node, err))
	}
	lease.leave(true)
	return nil
}

// bindCarriesPlacement reports whether the placement can travel in the Binding itself: the API server merges a
// Binding's annotations into the pod (all supported versions) and its labels from Kubernetes 1.35
// (PodTopologyLabelsAdmission, on by default), but a Binding cannot remove an annotation, so a pod that
// carries a placement key the new placement lacks (a leftover MIG allocation, say) takes the two-step path.
func (s *Server) bindCarriesPlacement(ctx context.Context, pod, placed *corev1.Pod) bool {
	if !s.bindingLabels(ctx) {
		return false
	}
	for _, k := range s.placementKeys() {
		if _, has := pod.Annotations[k]; has {
			if _, keeps := placed.Annotations[k]; !keeps {
				return false
			}
		}
	}
	return true
}

// bindingLabels reports, once per server, whether the API server copies a Binding's labels onto the pod
// (Kubernetes 1.35 or newer); an unknown version says no.
func (s *Server) bindingLabels(context.Context) bool {
	s.bindingLabelsOnce.Do(func() {
		v, err := s.client.Discovery().ServerVersion()
		if err != nil || v == nil {
			return
		}
		major, _ := strconv.Atoi(strings.TrimRight(v.Major, "+"))
		minor, _ := strconv.Atoi(strings.TrimRight(v.Minor, "+"))
		s.bindingLabelsOK = major > 1 || (major == 1 && minor >= 35)
	})
	return s.bindingLabelsOK
}

// bindPlaced binds the pod with its placement in one Binding over the version that was evaluated (see
// overVersions); a fresh pod bound here with this placement means an earlier attempt went through.
func (s *Server) bindPlaced(ctx context.Context, pod, placed *corev1.Pod) (uncertain bool, _ error) {
	node := placed.Spec.NodeName
	pods := s.client.CoreV1().Pods(pod.Namespace)
	landed := func(fresh *corev1.Pod) bool {
		if fresh.Spec.NodeName != node || fresh.Annotations[codec.PodNodeAnnotation] != node {
			return false
		}
		for _, k := range s.placementKeys() {
			if k != codec.PodTimeAnnotation && k != codec.PodBindTimeAnnotation && fresh.Annotations[k] != placed.Annotations[k] {
				return false
			}
		}
		return true
	}
	return s.overVersions(ctx, pod, "cannot bind to node "+node, landed, func(rv string) error {
		return pods.Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: rv,
				Annotations: placed.Annotations, Labels: map[string]string{codec.PodNodeAnnotation: node}},
			Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{})
	})
}

// overVersions runs write over the pod's resourceVersion (a precondition) and, while it conflicts, over the
// version of a fresh read: the pod changed in between, and only what the bind checked may be written over.
// A fresh pod that shows the write landed (an answer lost) ends it well; one bound by now, being deleted or
// recreated ends it with bindable's error. uncertain says whether a failed write may have landed all the same
// (an error whose outcome is unknown, such as a timeout), so that the rollback looks.
func (s *Server) overVersions(ctx context.Context, pod *corev1.Pod, what string, landed func(fresh *corev1.Pod) bool, write func(rv string) error) (uncertain bool, _ error) {
	key := pod.Namespace + "/" + pod.Name
	pods := s.client.CoreV1().Pods(pod.Namespace)
	rv := pod.ResourceVersion
	for attempt := 0; attempt < 3; attempt++ {
		err := write(rv)
		if err == nil {
			return false, nil
		}
		if !apierrors.IsConflict(err) {
			return !definite(err), fmt.Errorf("pod %s: %s: %w", key, what, err)
		}
		fresh, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("pod %s: %w", key, err)
		}
		if fresh.UID == pod.UID && landed != nil && landed(fresh) {
			return false, nil
		}
		if err := bindable(fresh, &extenderv1.ExtenderBindingArgs{PodUID: pod.UID}); err != nil {
			return false, err
		}
		rv = fresh.ResourceVersion
	}
	return false, fmt.Errorf("pod %s kept changing; try again", key)
}

// definite reports whether an API error says for sure that nothing was written.
func definite(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) ||
		apierrors.IsBadRequest(err) || apierrors.IsConflict(err)
}

// bindable refuses a pod that is bound already, being deleted, or another pod than kube-scheduler meant.
func bindable(pod *corev1.Pod, args *extenderv1.ExtenderBindingArgs) error {
	key := pod.Namespace + "/" + pod.Name
	if args.PodUID != "" && pod.UID != args.PodUID {
		return fmt.Errorf("pod %s was recreated (uid %s, bind asked for %s)", key, pod.UID, args.PodUID)
	}
	if pod.Spec.NodeName != "" {
		return fmt.Errorf("pod %s is already bound to node %s; nothing changed: %w", key, pod.Spec.NodeName, errAlreadyBound)
	}
	if pod.DeletionTimestamp != nil {
		return fmt.Errorf("pod %s is being deleted", key)
	}
	return nil
}

// writePlacement writes HAMi's annotations and the node label over exactly the version of the pod that was
// evaluated (resourceVersion is a precondition of the merge patch). When the pod changed in between it is
// read again: bound by now means nothing is written; otherwise the same placement goes over the new version.
// On failure, written says whether the placement may have been written all the same (an error whose outcome
// is unknown, such as a timeout), so that the rollback looks.
func (s *Server) writePlacement(ctx context.Context, pod, placed *corev1.Pod) (written bool, _ error) {
	node := placed.Spec.NodeName
	annos := map[string]any{}
	for _, k := range s.placementKeys() {
		if v, ok := placed.Annotations[k]; ok {
			annos[k] = v
		} else {
			annos[k] = nil
		}
	}
	pods := s.client.CoreV1().Pods(pod.Namespace)
	uncertain, err := s.overVersions(ctx, pod, "cannot write HAMi's annotations", nil, func(rv string) error {
		meta := map[string]any{"annotations": annos, "labels": map[string]string{codec.PodNodeAnnotation: node}}
		if rv != "" {
			meta["resourceVersion"] = rv
		}
		patch, _ := json.Marshal(map[string]any{"metadata": meta})
		_, err := pods.Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
	if err != nil {
		return uncertain, err
	}
	return true, nil
}
