package extender_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/extender"
)

func xtPrio(p *corev1.Pod, prio int32) *corev1.Pod {
	p.Spec.Priority = &prio
	return p
}

// The preempt verb keeps a node whose victims free the GPU, adds the lower-priority pods the GPU still needs
// gone, and drops a node where even that is not enough; turned off, it answers kube-scheduler's own candidates.
func TestPreemptVerb(t *testing.T) {
	objs := []runtime.Object{
		xtNode("n1", xtGPUs("n1", 1, 16384, 10)),
		xtPrio(xtPlaced(xtPod("lo", "a").GPUs(1).GPUMem(8000).Obj(), "n1", xtDev("n1", 0, 8000, 0)), 0),
		xtPrio(xtPlaced(xtPod("lo", "b").GPUs(1).GPUMem(8000).Obj(), "n1", xtDev("n1", 0, 8000, 0)), 0),
		xtNode("n2", xtGPUs("n2", 1, 16384, 10)),
		xtPrio(xtPlaced(xtPod("lo", "c").GPUs(1).GPUMem(14000).Obj(), "n2", xtDev("n2", 0, 14000, 0)), 0),
		xtNode("n3", xtGPUs("n3", 1, 16384, 10)),
		xtPrio(xtPlaced(xtPod("hi", "d").GPUs(1).GPUMem(14000).Obj(), "n3", xtDev("n3", 0, 14000, 0)), 500),
		xtPrio(xtPlaced(xtPod("lo", "e").GPUs(1).GPUMem(1000).Obj(), "n3", xtDev("n3", 0, 1000, 0)), 0),
	}
	pod := xtPrio(xtPod("hi", "p").GPUs(1).GPUMem(12000).Obj(), 100)
	args := extenderv1.ExtenderPreemptionArgs{Pod: pod, NodeNameToMetaVictims: map[string]*extenderv1.MetaVictims{
		"n1": {Pods: []*extenderv1.MetaPod{{UID: "uid-lo-a"}}},
		"n2": {Pods: []*extenderv1.MetaPod{{UID: "uid-lo-c"}}, NumPDBViolations: 1},
		"n3": {Pods: []*extenderv1.MetaPod{{UID: "uid-lo-e"}}},
	}}
	uids := func(mv *extenderv1.MetaVictims) []string {
		var out []string
		for _, p := range mv.Pods {
			out = append(out, p.UID)
		}
		slices.Sort(out)
		return out
	}

	e := newXTEnv(t, extender.Options{}, objs...)
	var res extenderv1.ExtenderPreemptionResult
	e.postJSON("/preempt", args, &res)
	if len(res.NodeNameToMetaVictims) != 2 || res.NodeNameToMetaVictims["n3"] != nil {
		t.Fatalf("nodes %v, want n1 and n2 (n3 cannot free 12000 MiB: its other pod outranks the preemptor)", res.NodeNameToMetaVictims)
	}
	if got := uids(res.NodeNameToMetaVictims["n1"]); !slices.Equal(got, []string{"uid-lo-a", "uid-lo-b"}) {
		t.Errorf("n1 victims %v, want kube-scheduler's uid-lo-a and the engine's uid-lo-b", got)
	}
	if n2 := res.NodeNameToMetaVictims["n2"]; !slices.Equal(uids(n2), []string{"uid-lo-c"}) || n2.NumPDBViolations != 1 {
		t.Errorf("n2 %v (%d PDB violations), want kube-scheduler's answer unchanged", uids(n2), n2.NumPDBViolations)
	}

	off := newXTEnv(t, extender.Options{DisablePreemption: true}, objs...)
	res = extenderv1.ExtenderPreemptionResult{}
	off.postJSON("/preempt", args, &res)
	if len(res.NodeNameToMetaVictims) != 3 || !slices.Equal(uids(res.NodeNameToMetaVictims["n3"]), []string{"uid-lo-e"}) {
		t.Fatalf("with preemption off: %v, want kube-scheduler's three candidates", res.NodeNameToMetaVictims)
	}
	if code, _ := e.post("/preempt", `{"NodeNameToMetaVictims":{}}`); code != 400 {
		t.Fatalf("a request without a pod: status %d, want 400", code)
	}
}

// A pod nominated to a node after a preemption holds the GPUs there against pods of lower priority, not
// against itself or pods of higher priority; nothing is held once preemption is off.
func TestFilterHoldsGPUsForNominatedPods(t *testing.T) {
	nominee := xtPrio(xtPod("default", "q").GPUs(1).GPUMem(12000).Obj(), 1000)
	nominee.Status.NominatedNodeName = "n1"
	objs := []runtime.Object{xtNode("n1", xtGPUs("n1", 1, 16384, 10)), xtNode("n2", xtGPUs("n2", 1, 16384, 10)), nominee}
	filter := func(e *xtEnv, p *corev1.Pod) extenderv1.ExtenderFilterResult {
		var res extenderv1.ExtenderFilterResult
		e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: p, NodeNames: &[]string{"n1", "n2"}}, &res)
		return res
	}
	e := newXTEnv(t, extender.Options{}, objs...)
	low := xtPrio(xtPod("default", "low").GPUs(1).GPUMem(8000).Obj(), 0)
	res := filter(e, low)
	if !slices.Equal(*res.NodeNames, []string{"n2"}) || !strings.Contains(res.FailedNodes["n1"], "held for pod default/q (priority 1000)") {
		t.Fatalf("low-priority pod: nodes %v, failed %v; want n2 only, n1 held for default/q", *res.NodeNames, res.FailedNodes)
	}
	for _, p := range []*corev1.Pod{nominee, xtPrio(xtPod("default", "high").GPUs(1).GPUMem(8000).Obj(), 2000)} {
		if res := filter(e, p); !slices.Equal(*res.NodeNames, []string{"n1", "n2"}) {
			t.Errorf("%s: nodes %v (failed %v), want both", p.Name, *res.NodeNames, res.FailedNodes)
		}
	}
	// A small pod fits beside the nominee: nothing it needs is held.
	if res := filter(e, xtPrio(xtPod("default", "small").GPUs(1).GPUMem(4000).Obj(), 0)); !slices.Equal(*res.NodeNames, []string{"n1", "n2"}) {
		t.Errorf("small pod: nodes %v (failed %v), want both", *res.NodeNames, res.FailedNodes)
	}
	// The nomination cleared: nothing held.
	cleared := nominee.DeepCopy()
	cleared.Status.NominatedNodeName = ""
	e.state.SetPod(cleared, e.clock.Now())
	if res := filter(e, low); !slices.Equal(*res.NodeNames, []string{"n1", "n2"}) {
		t.Errorf("after the nomination cleared: nodes %v (failed %v), want both", *res.NodeNames, res.FailedNodes)
	}
	off := newXTEnv(t, extender.Options{DisablePreemption: true}, objs...)
	if res := filter(off, low); !slices.Equal(*res.NodeNames, []string{"n1", "n2"}) {
		t.Errorf("preemption off: nodes %v, want both", *res.NodeNames)
	}
}

// Between the preempt verb's answer and the informer's view of the nomination, the nodes answered are held
// for the preemptor: a pod filtered in that gap cannot take the GPU either. The bridge ends when the informer
// shows the pod bound (or nominated, or gone).
func TestPreemptVerbHoldsUntilTheNominationIsSeen(t *testing.T) {
	preemptor := xtPrio(xtPod("default", "q").GPUs(1).GPUMem(12000).Obj(), 1000)
	objs := []runtime.Object{xtNode("n1", xtGPUs("n1", 1, 16384, 10)),
		xtPrio(xtPlaced(xtPod("lo", "a").GPUs(1).GPUMem(8000).Obj(), "n1", xtDev("n1", 0, 8000, 0)), 0), preemptor}
	e := newXTEnv(t, extender.Options{}, objs...)
	var res extenderv1.ExtenderPreemptionResult
	e.postJSON("/preempt", extenderv1.ExtenderPreemptionArgs{Pod: preemptor, NodeNameToMetaVictims: map[string]*extenderv1.MetaVictims{
		"n1": {Pods: []*extenderv1.MetaPod{{UID: "uid-lo-a"}}}}}, &res)
	if res.NodeNameToMetaVictims["n1"] == nil {
		t.Fatalf("n1 not kept: %v", res.NodeNameToMetaVictims)
	}
	e.state.RemovePod("lo", "a") // the victim is gone; the informer has not shown the nomination yet
	small := xtPrio(xtPod("default", "low").GPUs(1).GPUMem(8000).Obj(), 0)
	var fr extenderv1.ExtenderFilterResult
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: small, NodeNames: &[]string{"n1"}}, &fr)
	if len(*fr.NodeNames) != 0 || !strings.Contains(fr.FailedNodes["n1"], "held for pod default/q") {
		t.Fatalf("during the gap: nodes %v, failed %v; want n1 held for default/q", *fr.NodeNames, fr.FailedNodes)
	}
	bound := xtPlaced(preemptor, "n1", xtDev("n1", 0, 12000, 0))
	e.state.SetPod(bound, e.clock.Now())
	fr = extenderv1.ExtenderFilterResult{}
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: small, NodeNames: &[]string{"n1"}}, &fr)
	if strings.Contains(fr.FailedNodes["n1"], "held") {
		t.Fatalf("after the bind: n1 still held: %v", fr.FailedNodes)
	}
}
