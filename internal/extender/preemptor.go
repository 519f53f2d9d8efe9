package extender

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/preempt"
)

// Extender-initiated preemption. kube-scheduler's preemption dry-runs its in-tree filters only: for a pod short
// of GPU memory, cores or slots alone, every node passes them with no pod removed, so its dry run finds no
// victim, no candidate, and never asks the preempt verb (kubernetes/kubernetes #139270). When /filter finds
// that such a pod fits on no node, the extender carries the preemption out itself, after a short delay and
// outside the filter's time budget, as kube-scheduler's asynchronous preemption does: the victims and node
// kube-scheduler's own method would pick (internal/preempt, judged by every gate, kube-scheduler's and HAMi's),
// the preemptor's status.nominatedNodeName, then each victim's DisruptionTarget condition and its deletion.
// The freed GPUs are held for the nominee (preempt_hold.go). Only the leader preempts.
//
// The order is kube-scheduler's: the nomination first, then the victims. Their DisruptionTarget condition has
// kube-scheduler's reason (PreemptionByScheduler), so kube-scheduler's PodEligibleToPreemptOthers keeps the
// nomination while they terminate (podTerminatingByPreemption); once they are gone the pod is retried, binds
// on the node the hold kept for it, or, when something of higher priority took it meanwhile, kube-scheduler's
// own preemption finds no candidate and clears the nomination, and the extender searches again.

// DefaultPreemptionDelay is how long after a failed filter the extender waits before it preempts: kube-scheduler
// runs its own preemption (and asks the preempt verb) right after the filter, and a pod it preempts for is not
// preempted for twice.
const DefaultPreemptionDelay = time.Second

// carriedTTL bounds how long a preemption carried out here keeps the pod from another search while the
// informer has not shown its victims terminating.
const carriedTTL = 2 * time.Minute

// preemptor is the queue of pods the filter found fitting nowhere, and what it carried out per pod.
type preemptor struct {
	mu      sync.Mutex
	queue   chan preemptItem
	queued  map[string]bool
	carried map[string]carried
	// searched holds, per pod whose last search found no preemption, the cluster's version then: until the
	// cluster changes the answer is the same, and the search is not run again.
	searched map[string]uint64
	// asked holds, per pod, when the preempt verb last answered kube-scheduler with nodes for it: kube-scheduler
	// is preempting for it (its victims' deletions are asynchronous), and the extender does not preempt too.
	asked map[string]time.Time
	// locked is how long the last search held the state's writer lock: the worker rests as long before the
	// next, so that a queue of searches never keeps /filter and /bind waiting more than half the time.
	locked time.Duration
}

type preemptItem struct {
	key string
	at  time.Time
}

// carried is a preemption this process carried out: its victims by UID.
type carried struct {
	node    string
	victims map[string]types.UID
	at      time.Time
}

func newPreemptor() *preemptor {
	return &preemptor{queue: make(chan preemptItem, 1024), queued: map[string]bool{}, carried: map[string]carried{}, searched: map[string]uint64{},
		asked: map[string]time.Time{}}
}

// Preemption is one the extender carried out: the pod nominated to Node, the Victims evicted.
type Preemption struct {
	Pod      string           `json:"pod"`
	Priority int32            `json:"priority"`
	Node     string           `json:"node"`
	Victims  []preempt.Victim `json:"victims"`
}

// Outcomes of PreemptFor, also the result label of kubectl_hami_extender_preemptions_total.
const (
	PreemptPreempted   = "preempted"    // carried out
	PreemptNoCandidate = "no_candidate" // no preemption makes it fit (or it may preempt no pod)
	PreemptWaiting     = "waiting"      // a preemption for it is under way (its victims terminate)
	PreemptFits        = "fits"         // it fits somewhere now: nothing to do
	PreemptSkipped     = "skipped"      // not this replica's, or the pod is gone, bound or not a GPU pod
	PreemptFailed      = "failed"       // an API call failed
)

// preemptVerbAnswered records that kube-scheduler is preempting for the pod (the preempt verb kept nodes).
func (s *Server) preemptVerbAnswered(pod *corev1.Pod, now time.Time) {
	s.preemptor.mu.Lock()
	defer s.preemptor.mu.Unlock()
	s.preemptor.asked[pod.Namespace+"/"+pod.Name] = now
}

// noticeUnschedulable queues the pod for preemption, once: the filter calls it when no node fits.
func (s *Server) noticeUnschedulable(pod *corev1.Pod) {
	if s.opts.DisablePreemption || !validPodRef(pod.Namespace, pod.Name) {
		return
	}
	p := s.preemptor
	key := pod.Namespace + "/" + pod.Name
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.queued[key] {
		return
	}
	select {
	case p.queue <- preemptItem{key: key, at: time.Now()}:
		p.queued[key] = true
	default: // full: the pod is noticed again at its next filter
	}
}

// RunPreemptor preempts for the pods the filter queued, one at a time, each PreemptionDelay after its filter,
// until ctx ends. serve-extender runs it on every replica; only the leader preempts.
func (s *Server) RunPreemptor(ctx context.Context) {
	p := s.preemptor
	for {
		var it preemptItem
		select {
		case <-ctx.Done():
			return
		case it = <-p.queue:
		}
		if wait := time.Until(it.at.Add(s.opts.PreemptionDelay)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		p.mu.Lock()
		delete(p.queued, it.key)
		p.locked = 0
		p.mu.Unlock()
		ns, name, _ := strings.Cut(it.key, "/")
		cctx, cancel := context.WithTimeout(ctx, 2*s.opts.BindTimeout)
		done, outcome, err := s.PreemptFor(cctx, ns, name)
		cancel()
		p.mu.Lock()
		rest := p.locked
		p.mu.Unlock()
		if rest > 0 {
			t := time.NewTimer(rest)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		switch {
		case err != nil:
			s.log.Warn("preemption failed", "pod", it.key, "err", err)
		case done != nil:
			s.log.Info("preempted", "pod", it.key, "node", done.Node, "victims", preempt.VictimList(done.Victims))
		default:
			s.log.Debug("no preemption", "pod", it.key, "outcome", outcome)
		}
	}
}

// PreemptFor preempts for the pending pod namespace/name when no node fits it and a preemption would, and
// says what it did (one of the Preempt* outcomes). The search and the hold happen under the state's writer
// lock; the API calls after it.
func (s *Server) PreemptFor(ctx context.Context, namespace, name string) (*Preemption, string, error) {
	outcome, done, err := s.preemptFor(ctx, namespace, name)
	s.metrics.preemption(outcome, done)
	return done, outcome, err
}

func (s *Server) preemptFor(ctx context.Context, namespace, name string) (string, *Preemption, error) {
	if s.opts.DisablePreemption || (s.opts.IsLeader != nil && !s.opts.IsLeader()) {
		return PreemptSkipped, nil, nil
	}
	key := namespace + "/" + name
	pod := s.state.Pod(namespace, name)
	if pod == nil || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return PreemptSkipped, nil, nil
	}
	now := s.now()
	if s.preemptionUnderWay(key, now) {
		return PreemptWaiting, nil, nil
	}
	// The questions that need no writer lock first: most clusters have no pod this one may preempt, and a pod
	// that fits somewhere now needs none.
	if !s.state.anyLowerBound(podPriority(pod)) {
		return PreemptNoCandidate, nil, nil
	}
	var v *engine.Verdict
	var version uint64
	s.state.Read(func(c *engine.Cluster) {
		// Every gate, kube-scheduler's included: a node its own checks refuse is no choice.
		v, version = c.Evaluate(pod, engine.EvalOptions{Now: now, Kube: engine.KubeAll, Unranked: true}), c.Version()
	})
	switch {
	case v.NoGPURequest || v.NotHAMi:
		return PreemptSkipped, nil, nil
	case v.Fits:
		return PreemptFits, nil, nil
	}
	s.preemptor.mu.Lock()
	last, seen := s.preemptor.searched[key]
	s.preemptor.mu.Unlock()
	if seen && last == version {
		return PreemptNoCandidate, nil, nil
	}
	var done *Preemption
	var victims []*corev1.Pod
	outcome := PreemptNoCandidate
	s.state.withSearch(func(c *engine.Cluster, ix *preempt.Index, _ []*corev1.Pod) {
		start := time.Now()
		defer func() {
			s.preemptor.mu.Lock()
			s.preemptor.locked = time.Since(start)
			if len(s.preemptor.searched) > 10000 { // forget pods long gone
				clear(s.preemptor.searched)
			}
			if done == nil {
				s.preemptor.searched[key] = c.Version()
			} else {
				delete(s.preemptor.searched, key)
			}
			s.preemptor.mu.Unlock()
		}()
		a := preempt.Explain(c, ix, pod, v, preempt.Options{Eval: engine.EvalOptions{Now: now, Kube: engine.KubeAll}})
		if a == nil || a.Preemption == nil {
			if a != nil && len(a.WaitsFor) > 0 {
				outcome = PreemptWaiting
			}
			return
		}
		cand := a.Preemption.Candidate
		for _, vic := range cand.Victims {
			p := ix.PodOn(cand.Node, vic.Namespace, vic.Name)
			if p == nil {
				return // cannot happen: the search names pods of the index
			}
			victims = append(victims, p)
		}
		// The nodes are held for the pod until the informer shows its nomination (preempt_hold.go).
		s.state.holdLocked(pod, []string{cand.Node}, now)
		done = &Preemption{Pod: key, Priority: a.Priority, Node: cand.Node, Victims: cand.Victims}
	})
	if done == nil {
		return outcome, nil, nil
	}
	c := carried{node: done.Node, victims: map[string]types.UID{}, at: now}
	for _, v := range victims {
		c.victims[v.Namespace+"/"+v.Name] = v.UID
	}
	s.preemptor.mu.Lock()
	s.preemptor.carried[key] = c
	s.preemptor.mu.Unlock()

	if err := s.nominate(ctx, pod, done.Node); err != nil {
		return PreemptFailed, nil, err
	}
	msg := fmt.Sprintf("%s: preempting to accommodate a higher priority pod", pod.Spec.SchedulerName)
	for _, v := range victims {
		if err := s.evict(ctx, v, msg); err != nil {
			// The next attempt finds the pod nominated: it waits for the victims that went, or searches again.
			s.preemptor.mu.Lock()
			delete(s.preemptor.carried, key)
			s.preemptor.mu.Unlock()
			return PreemptFailed, nil, err
		}
		s.recordEvent(v, "Preempted", fmt.Sprintf("Preempted by pod %s (uid %s, priority %d) on node %s: the GPUs it holds are needed there (kubectl-hami extender)",
			key, pod.UID, done.Priority, done.Node))
	}
	s.recordEvent(pod, "Preempting", fmt.Sprintf("Preempting %s on node %s, where this pod (priority %d) fits once they are gone; nominated to the node, whose freed GPUs are held for it",
		preempt.VictimList(done.Victims), done.Node, done.Priority))
	return PreemptPreempted, done, nil
}

// preemptionUnderWay reports whether a preemption for the pod is in progress and the informer has not caught up
// with it: the preempt verb answered kube-scheduler for it (within provisionalHold), this process preempted
// for it and its nomination has not shown yet, or this process evicted pods for it that the informer does not
// show terminating yet. A search meanwhile would not
// see the preemption and could choose more victims.
func (s *Server) preemptionUnderWay(key string, now time.Time) bool {
	s.preemptor.mu.Lock()
	c, ok := s.preemptor.carried[key]
	for k, old := range s.preemptor.carried {
		if now.Sub(old.at) > carriedTTL {
			delete(s.preemptor.carried, k)
		}
	}
	for k, at := range s.preemptor.asked {
		if now.Sub(at) > provisionalHold {
			delete(s.preemptor.asked, k)
		}
	}
	_, asked := s.preemptor.asked[key]
	s.preemptor.mu.Unlock()
	if asked {
		return true
	}
	st := s.state
	st.mu.RLock()
	defer st.mu.RUnlock()
	if pv, held := st.provisional[key]; held && !now.After(pv.until) {
		if cur := st.objects[key]; cur != nil && cur.Status.NominatedNodeName == "" {
			return true
		}
	}
	if !ok || now.Sub(c.at) > carriedTTL {
		return false
	}
	for k, uid := range c.victims {
		if v := st.objects[k]; v != nil && v.UID == uid && v.DeletionTimestamp == nil {
			return true
		}
	}
	return false
}

// nominate sets the pod's status.nominatedNodeName, on the pod of that UID only.
func (s *Server) nominate(ctx context.Context, pod *corev1.Pod, node string) error {
	patch, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": pod.UID},
		"status":   map[string]any{"nominatedNodeName": node},
	})
	if _, err := s.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("pod %s/%s: cannot set status.nominatedNodeName to %s: %w", pod.Namespace, pod.Name, node, err)
	}
	return nil
}

// evict marks the victim as kube-scheduler marks its own (the DisruptionTarget condition, reason
// PreemptionByScheduler) and deletes it, with its grace period, the pod of that UID only. A victim gone
// already is fine.
func (s *Server) evict(ctx context.Context, v *corev1.Pod, msg string) error {
	key := v.Namespace + "/" + v.Name
	pods := s.client.CoreV1().Pods(v.Namespace)
	patch, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": v.UID},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": corev1.DisruptionTarget, "status": corev1.ConditionTrue, "reason": corev1.PodReasonPreemptionByScheduler,
			"message": msg, "lastTransitionTime": metav1.NewTime(s.now()),
		}}},
	})
	if _, err := pods.Patch(ctx, v.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("victim %s: cannot set the DisruptionTarget condition: %w", key, err)
	}
	uid := v.UID
	if err := pods.Delete(ctx, v.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("victim %s: cannot delete it: %w", key, err)
	}
	return nil
}

// recordEvent writes a Normal event about the pod on the event client's budget; a failure is logged only.
func (s *Server) recordEvent(pod *corev1.Pod, reason, msg string) {
	if s.opts.EventClient == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	now := metav1.NewTime(s.now())
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Reason:         reason, Message: msg, Type: corev1.EventTypeNormal, Count: 1, FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "kubectl-hami-extender"},
	}
	if _, err := s.opts.EventClient.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		s.log.Warn("cannot record event", "pod", pod.Namespace+"/"+pod.Name, "reason", reason, "err", err)
	}
}
