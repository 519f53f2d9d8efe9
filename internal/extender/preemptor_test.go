package extender_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/extender"
)

// xtPreemptWorld is one node whose GPU a low pod (priority 10) fills, and a pending high pod (priority 1000)
// asking for half of it.
func xtPreemptWorld(t *testing.T, opts extender.Options) (*xtEnv, *corev1.Pod) {
	t.Helper()
	prio := func(p *corev1.Pod, v int32) *corev1.Pod { p.Spec.Priority = &v; return p }
	low := prio(xtPlaced(xtPod("default", "low").GPUs(1).GPUMem(16000).Obj(), "n1", xtDev("n1", 0, 16000, 0)), 10)
	high := prio(xtPod("default", "high").GPUs(1).GPUMem(8000).Obj(), 1000)
	return newXTEnv(t, opts, xtNode("n1", xtGPUs("n1", 1, 16384, 10)), low, high), high
}

func xtGone(e *xtEnv, ns, name string) bool {
	_, err := e.client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

// TestPreemptForOnlyOnTheLeaderAndWhenOn: a replica that does not lead, or one started with --preemption=false,
// evicts nothing; the leader preempts once (the low pod deleted, the high pod nominated, events on both) and,
// until the informer shows the victim terminating, does not search again.
func TestPreemptForOnlyOnTheLeaderAndWhenOn(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts func(*extender.Options)
	}{
		{"not leading", func(o *extender.Options) { o.IsLeader = func() bool { return false } }},
		{"preemption off", func(o *extender.Options) { o.DisablePreemption = true }},
	} {
		opts := extender.DefaultOptions()
		tc.opts(&opts)
		e, high := xtPreemptWorld(t, opts)
		done, outcome, err := e.srv.PreemptFor(ctx, high.Namespace, high.Name)
		if done != nil || err != nil || outcome != extender.PreemptSkipped || xtGone(e, "default", "low") {
			t.Errorf("%s: preempted %+v, outcome %s, err %v, low deleted %v; want nothing done", tc.name, done, outcome, err, xtGone(e, "default", "low"))
		}
	}

	opts := extender.DefaultOptions()
	opts.IsLeader = func() bool { return true }
	e, high := xtPreemptWorld(t, opts)
	done, outcome, err := e.srv.PreemptFor(ctx, high.Namespace, high.Name)
	if err != nil || done == nil || outcome != extender.PreemptPreempted {
		t.Fatalf("leader: preempted %+v, outcome %s, err %v", done, outcome, err)
	}
	if done.Node != "n1" || len(done.Victims) != 1 || done.Victims[0].Key() != "default/low" {
		t.Fatalf("preemption %+v, want default/low on n1", done)
	}
	if !xtGone(e, "default", "low") {
		t.Error("the victim was not deleted")
	}
	if got := e.livePod("default", "high").Status.NominatedNodeName; got != "n1" {
		t.Errorf("high nominated to %q, want n1", got)
	}
	for pod, reason := range map[string]string{"low": "Preempted", "high": "Preempting"} {
		evs, err := e.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ev := range evs.Items {
			found = found || (ev.InvolvedObject.Name == pod && ev.Reason == reason && ev.Type == corev1.EventTypeNormal)
		}
		if !found {
			t.Errorf("no Normal %s event on %s", reason, pod)
		}
	}
	// The state (no informer here) still shows the victim running: another search would not see the preemption.
	if done, outcome, _ := e.srv.PreemptFor(ctx, high.Namespace, high.Name); done != nil || outcome != extender.PreemptWaiting {
		t.Errorf("second attempt: preempted %+v, outcome %s; want %s", done, outcome, extender.PreemptWaiting)
	}
}

// TestFilterQueuesPreemption: a filter that finds no node for the pod queues it, and the preemptor carries the
// preemption out after PreemptionDelay.
func TestFilterQueuesPreemption(t *testing.T) {
	opts := extender.DefaultOptions()
	opts.PreemptionDelay = 10 * time.Millisecond
	e, high := xtPreemptWorld(t, opts)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.srv.RunPreemptor(ctx)
	var res extenderv1.ExtenderFilterResult
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: high, NodeNames: &[]string{"n1"}}, &res)
	if res.NodeNames == nil || len(*res.NodeNames) != 0 {
		t.Fatalf("filter kept %v: the world is meant to have no room", res.NodeNames)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return xtGone(e, "default", "low"), nil
	}); err != nil {
		t.Fatal("the preemptor did not evict the low pod after the filter found no node")
	}
}

// TestPreemptForLeavesKubeSchedulersPreemption: once the preempt verb has kept nodes for a pod, kube-scheduler is
// preempting for it (deleting its victims asynchronously): the extender preempts nothing more for it.
func TestPreemptForLeavesKubeSchedulersPreemption(t *testing.T) {
	e, high := xtPreemptWorld(t, extender.DefaultOptions())
	var res extenderv1.ExtenderPreemptionResult
	e.postJSON("/preempt", extenderv1.ExtenderPreemptionArgs{Pod: high, NodeNameToMetaVictims: map[string]*extenderv1.MetaVictims{
		"n1": {Pods: []*extenderv1.MetaPod{{UID: "uid-default-low"}}}}}, &res)
	if res.NodeNameToMetaVictims["n1"] == nil {
		t.Fatalf("the verb dropped n1: %+v", res.NodeNameToMetaVictims)
	}
	done, outcome, err := e.srv.PreemptFor(context.Background(), high.Namespace, high.Name)
	if done != nil || err != nil || outcome != extender.PreemptWaiting || xtGone(e, "default", "low") {
		t.Fatalf("after the verb: preempted %+v, outcome %s, err %v; want %s and nothing deleted", done, outcome, err, extender.PreemptWaiting)
	}
}
