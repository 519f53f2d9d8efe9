package lint

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLintPendingIsWaiting: lint's "pending" is the shared rule (query.Waiting): a pod being deleted without a
// node waits for nothing, so a missing queue is a warning for it, not the error of a pod Volcano never places.
func TestLintPendingIsWaiting(t *testing.T) {
	deleting := func(p *corev1.Pod) *corev1.Pod {
		now := metav1.Now()
		p.DeletionTimestamp = &now
		return p
	}
	testCheck(t, "queue-missing", []lintCase{
		{"a pending pod", snap(queue("team-a", "{}"), pod("ns", "p", map[string]string{qAnn: "team-c"}, gpu1, "")),
			nil, []want{{Error, "Pod ns/p", queueField, "queue team-c does not exist: Volcano does not schedule the pod", ""}}},
		{"a pod being deleted", snap(queue("team-a", "{}"), deleting(pod("ns", "p", map[string]string{qAnn: "team-c"}, gpu1, ""))),
			nil, []want{{Warning, "Pod ns/p", queueField, "queue team-c does not exist", ""}}},
	})
}
