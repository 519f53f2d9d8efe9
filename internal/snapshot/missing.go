package snapshot

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// missing says what a snapshot file lacks that its own objects refer to: a `kubectl get ... -o yaml` file
// without Volcano's queues judges a queue's pods as if the queue did not exist, and one without Events has
// nothing of what the scheduler said about its pending pods. Read from a cluster, none is missing (the
// reader asks for them); each becomes one problem, so the commands warn once.
func (s *Snapshot) missing() []engine.Problem {
	if s.file == "" {
		return nil
	}
	var out []engine.Problem
	if len(s.Queues) == 0 && !s.Volcano {
		if n, first := s.countPods(func(i int) bool { return s.Pods.annotation(i, codec.QueueNameAnnotation) != "" }); n > 0 {
			out = append(out, engine.Problem{Kind: "Snapshot", Object: s.file, Field: "Queue",
				Message: fmt.Sprintf("%d pod(s) name a Volcano queue (%s on %s) but the file has no Queue; a kubectl get ... -o yaml snapshot without Volcano queues changes verdicts: add `kubectl get queues.scheduling.volcano.sh -A -o yaml`",
					n, codec.QueueNameAnnotation, first)})
		}
	}
	if len(s.Events) == 0 {
		if n, first := s.countPods(func(i int) bool {
			_, _, node := s.Pods.Meta(i)
			return node == "" && s.Pods.phase(i) == corev1.PodPending
		}); n > 0 {
			out = append(out, engine.Problem{Kind: "Snapshot", Object: s.file, Field: "Event",
				Message: fmt.Sprintf("%d pending pod(s) (%s first) but the file has no Event, so nothing of what the scheduler said about them; add `kubectl get events -A --field-selector reason=FailedScheduling -o yaml`",
					n, first)})
		}
	}
	return out
}

// countPods counts the pods that match (by position, read without building them), and names the first.
func (s *Snapshot) countPods(match func(i int) bool) (int, string) {
	n, first := 0, ""
	for i := range s.Pods.Len() {
		if match(i) {
			if n == 0 {
				ns, name, _ := s.Pods.Meta(i)
				first = ns + "/" + name
			}
			n++
		}
	}
	return n, first
}
