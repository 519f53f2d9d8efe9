package tui

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// WhatIfForTest is the UI what-if form's answer for pod on the snapshot, in the fields the CLI's -o json has
// (the external test compares the two surfaces).
func WhatIfForTest(s *snapshot.Snapshot, pod *corev1.Pod, now func() time.Time) map[string]any {
	w := newWorld(s, snapshot.DefaultDeviceConfigMap, "", false, now)
	a := w.whatIf(pod)
	return map[string]any{"admission": a.Changes, "webhookRefusal": a.Refusal, "verdict": a.Verdict,
		"capacity": a.Capacity, "kubernetes": a.Input.Kube}
}
