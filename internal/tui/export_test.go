package tui

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/render"
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

// WhyPendingPageForTest is the text of the UI's why-pending page for a pod of the snapshot, unwrapped, and the
// same answer of the UI's world in why-pending -o wide's form (every part the answer has: kube-scheduler's
// checks per node too); the external test compares both with the CLI's why-pending.
func WhyPendingPageForTest(s *snapshot.Snapshot, namespace, name string, now func() time.Time) (page, wide string) {
	m := &common{world: newWorld(s, snapshot.DefaultDeviceConfigMap, "", false, now), width: 200}
	vp := newVerdictPage(Options{}).(*verdictPage)
	vp.open(m, namespace+"/"+name, nil, false)
	var b strings.Builder
	if a, ok := m.world.explain(namespace, name, nil); ok {
		if err := render.WhyPending(&b, &a, true, nil); err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
	}
	return vp.text, strings.TrimRight(b.String(), "\n")
}
