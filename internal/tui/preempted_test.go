package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/examples"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// TestNominatedAndPreemptedPods: after a preemption, the Pending view says which node the preemptor is nominated
// for, and the Pods view shows the evicted pod as Preempted (not merely Terminating) until it is gone (#29).
func TestNominatedAndPreemptedPods(t *testing.T) {
	s, err := snapshot.Parse(examples.DemoCluster, "demo")
	if err != nil {
		t.Fatal(err)
	}
	s = s.WithWholePods() // edited below: a file's pods are records, built anew for each reader
	deleted := metav1.NewTime(fixedNow.Add(-time.Minute))
	found := 0
	for _, p := range s.Pods.Slice() {
		switch p.Namespace + "/" + p.Name {
		case "inference/llm-serve-2":
			p.Status.NominatedNodeName = "gpu-h100-01"
			found++
		case "team-vision/detector-0":
			p.DeletionTimestamp = &deleted
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget,
				Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler", Message: "kube-scheduler: preempting to accommodate a higher priority pod"})
			found++
		case "team-vision/detector-1":
			p.DeletionTimestamp = &deleted // deleted, not preempted
			found++
		}
	}
	if found != 3 {
		t.Fatalf("the demo lacks the pods this test edits (%d of 3 found)", found)
	}
	m, err := New(Options{Snapshot: s, DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: func() time.Time { return fixedNow }, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})

	press(m, "4")
	if l := lineWith(screen(m), "llm-serve-2"); !strings.Contains(l, "nominated for gpu-h100-01 (preempted pods leaving)") {
		t.Errorf("Pending row of the nominated pod: %q", l)
	}
	if l := lineWith(screen(m), "mig-large"); l == "" || strings.Contains(l, "nominated") {
		t.Errorf("a pod without a nomination reads nominated: %q", l)
	}

	press(m, "7")
	if l := lineWith(screen(m), "detector-0"); !strings.Contains(l, "Preempted") {
		t.Errorf("Pods row of the preempted pod: %q", l)
	}
	if l := lineWith(screen(m), "detector-1"); !strings.Contains(l, "Terminating") || strings.Contains(l, "Preempted") {
		t.Errorf("Pods row of a pod deleted without preemption: %q", l)
	}
}
