package query

import (
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// TestWhyWaiting: a pod that fits but stays Pending is told why, from what the snapshot can tell.
func TestWhyWaiting(t *testing.T) {
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	fits := &engine.Verdict{Fits: true, Scheduler: "hami-scheduler"}
	pod := func(mut ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
			Spec: corev1.PodSpec{SchedulerName: "hami-scheduler"}}
		for _, m := range mut {
			m(p)
		}
		return p
	}
	holder, dur := "hami-scheduler-7d9-abc", int32(15)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "hami-scheduler"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &metav1.MicroTime{Time: now.Add(-5 * time.Second)}}}
	stale := lease.DeepCopy()
	stale.Spec.RenewTime = &metav1.MicroTime{Time: now.Add(-time.Hour)}
	otherSystemPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns-1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	schedPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-scheduler-cp-1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	failed := []*corev1.Event{{Reason: "FailedScheduling"}}
	cases := []struct {
		name   string
		pod    *corev1.Pod
		v      *engine.Verdict
		events []*corev1.Event
		seen   SchedulerSighting
		want   []string // parts of the lines, in order; nil for none
	}{
		{"no scheduler seen", pod(), fits, nil, SeeScheduler("hami-scheduler", nil, true, slices.Values([]*corev1.Pod{otherSystemPod}), now),
			[]string{"no FailedScheduling event, and no scheduler named hami-scheduler is seen (no held leader Lease hami-scheduler"}},
		{"an expired lease is no scheduler", pod(), fits, nil, SeeScheduler("hami-scheduler", []*coordinationv1.Lease{stale}, true, nil, now),
			[]string{"no scheduler named hami-scheduler is seen"}},
		{"the snapshot cannot tell", pod(), fits, nil, SeeScheduler("hami-scheduler", nil, false, nil, now),
			[]string{"cannot be told from this snapshot"}},
		{"lease held", pod(), fits, nil, SeeScheduler("hami-scheduler", []*coordinationv1.Lease{lease}, true, nil, now),
			[]string{"hami-scheduler is running (Lease kube-system/hami-scheduler held by hami-scheduler-7d9-abc)"}},
		{"default-scheduler's static pod", pod(func(p *corev1.Pod) { p.Spec.SchedulerName = "default-scheduler" }), &engine.Verdict{Fits: true, Scheduler: "default-scheduler"}, nil,
			SeeScheduler("default-scheduler", nil, false, slices.Values([]*corev1.Pod{schedPod}), now), []string{"default-scheduler is running (pod kube-system/kube-scheduler-cp-1 Running)"}},
		{"gated", pod(func(p *corev1.Pod) { p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/quota"}} }), fits, nil,
			SchedulerSighting{Seen: true, Known: true, How: "x"}, []string{"schedulingGates (example.com/quota)"}},
		{"nominated", pod(func(p *corev1.Pod) { p.Status.NominatedNodeName = "gpu-1" }), fits, failed, SchedulerSighting{Seen: true, Known: true},
			[]string{"nominated node gpu-1"}},
		{"young", pod(func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(now.Add(-5 * time.Second)) }), fits, failed, SchedulerSighting{Seen: true, Known: true},
			[]string{"the pod is 5s old"}},
		{"tried and failed: nothing to add", pod(), fits, failed, SchedulerSighting{Seen: true, Known: true}, nil},
		{"does not fit", pod(), &engine.Verdict{}, nil, SchedulerSighting{}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := WhyWaiting(tc.pod, tc.v, tc.events, tc.seen, now)
			if len(got) != len(tc.want) {
				t.Fatalf("lines %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("line %d %q, want one with %q", i, got[i], w)
				}
			}
		})
	}
}

// TestSeeSchedulerFirstPodByName: the running scheduler pod named is the first by namespace/name, whatever the
// order the surface lists the pods in (the file's, the informers' map), and a nil pod is passed over.
func TestSeeSchedulerFirstPodByName(t *testing.T) {
	running := func(ns, name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	pods := []*corev1.Pod{running("kube-system", "hami-scheduler-b"), nil, running("hami", "hami-scheduler-z"),
		running("kube-system", "hami-scheduler-a"), running("a", "other")}
	for _, order := range [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {3, 0, 4, 1, 2}} {
		var list []*corev1.Pod
		for _, i := range order {
			list = append(list, pods[i])
		}
		got := SeeScheduler("hami-scheduler", nil, false, slices.Values(list), time.Time{})
		if want := "pod hami/hami-scheduler-z Running"; !got.Seen || !got.Known || got.How != want {
			t.Errorf("order %v: %+v, want %q", order, got, want)
		}
	}
}
