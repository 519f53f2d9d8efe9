package extender

import (
	"context"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// EventReason is the reason of the Warning event a pending pod gets; HAMi uses the same word.
const EventReason = "FilteringFailed"

// eventLimiter emits at most one pending-reason event per pod per interval, or sooner when the reason
// changes, so a pod retried every second does not flood the namespace with events.
type eventLimiter struct {
	mu       sync.Mutex
	interval time.Duration
	last     map[string]sent
}

type sent struct {
	at      time.Time
	summary string
}

func newEventLimiter(interval time.Duration) *eventLimiter {
	return &eventLimiter{interval: interval, last: map[string]sent{}}
}

// allow reports whether an event with this summary may be sent for the pod now, and records it.
func (l *eventLimiter) allow(key, summary string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.last[key]; ok && s.summary == summary && now.Sub(s.at) < l.interval {
		return false
	}
	if len(l.last) > 10000 { // forget pods long gone
		for k, s := range l.last {
			if now.Sub(s.at) > 10*l.interval {
				delete(l.last, k)
			}
		}
	}
	l.last[key] = sent{at: now, summary: summary}
	return true
}

// pending sends the readable reason of a pending pod as a Warning event, without delaying the filter: only
// for a pod the informer knows (same UID), at most one per pod per interval, on the event client's own API
// budget, and with at most a few writes in flight (one more is dropped, never queued).
func (l *eventLimiter) pending(_ context.Context, s *Server, pod *corev1.Pod, v *engine.Verdict) {
	if s.opts.EventClient == nil || l.interval <= 0 || !validPodRef(pod.Namespace, pod.Name) {
		return
	}
	known := s.state.Pod(pod.Namespace, pod.Name)
	if known == nil || (pod.UID != "" && known.UID != pod.UID) {
		return
	}
	now := s.now()
	if !l.allow(pod.Namespace+"/"+pod.Name, v.Summary, now) {
		return
	}
	select {
	case s.eventSlots <- struct{}{}:
	default:
		return
	}
	msg := eventMessage(v)
	go func() {
		defer func() { <-s.eventSlots }()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: known.UID},
			Reason:         EventReason, Message: msg, Type: corev1.EventTypeWarning, Count: 1,
			FirstTimestamp: metav1.NewTime(now), LastTimestamp: metav1.NewTime(now),
			Source: corev1.EventSource{Component: "kubectl-hami-extender"},
		}
		if _, err := s.opts.EventClient.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			s.log.Warn("cannot record event", "pod", pod.Namespace+"/"+pod.Name, "err", err)
		}
	}()
}

// eventMessage is the summary and the explanation lines, within the 1 KiB an event message may hold.
func eventMessage(v *engine.Verdict) string {
	parts := append([]string{v.Summary}, v.Explanation...)
	parts = append(parts, v.Hints...)
	// One sentence per line of the explanation, so the event reads as text in `kubectl describe pod`.
	for i, p := range parts {
		if p != "" && !strings.HasSuffix(p, ".") {
			parts[i] = p + "."
		}
	}
	msg := strings.Join(parts, " ")
	if len(msg) > 1024 {
		msg = msg[:1021] + "..."
	}
	return msg
}
