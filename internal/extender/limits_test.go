package extender_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
)

// xtPaddedFilter is a filter request for the nodes whose pod carries an annotation that brings the body to
// about size bytes.
func xtPaddedFilter(t *testing.T, size int, nodes ...string) []byte {
	t.Helper()
	p := xtPod("default", "padded").GPUs(1).GPUMem(1000).GPUCores(10).Obj()
	p.Annotations["padding"] = strings.Repeat("x", size)
	b, err := json.Marshal(extenderv1.ExtenderArgs{Pod: p, NodeNames: &nodes})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWebhookBodyLimitIsTheAPIServers: /webhook takes up to 3 MiB (the API server never sends more), the
// scheduler verbs' default limit does not apply to it.
func TestWebhookBodyLimitIsTheAPIServers(t *testing.T) {
	e := newXTEnv(t, extender.DefaultOptions(), xtNode("w1", xtGPUs("w1", 1, 16384, 10)))
	over := []byte(`{"padding":"` + strings.Repeat("x", extender.WebhookMaxBodyBytes) + `"}`)
	if code, out := e.post("/webhook", over); code != http.StatusRequestEntityTooLarge {
		t.Errorf("POST /webhook with %d bytes: status %d (%.200s), want 413", len(over), code, out)
	}
	under := []byte(`{"padding":"` + strings.Repeat("x", extender.WebhookMaxBodyBytes-100) + `"}`)
	if code, out := e.post("/webhook", under); code == http.StatusRequestEntityTooLarge {
		t.Errorf("POST /webhook with %d bytes (under 3 MiB): 413 (%.200s)", len(under), out)
	}
}

// TestSchedulerBodyLimitFollowsTheCluster: with the default (0) the limit of filter, prioritize and bind is
// one pod (3 MiB) plus twice the node count times the longest name: a body of 3.3 MiB is refused on a
// 3-node cluster and taken once the cluster has 4,000 nodes with 60-character names.
func TestSchedulerBodyLimitFollowsTheCluster(t *testing.T) {
	e := newXTEnv(t, extender.DefaultOptions(), xtNode("s1", xtGPUs("s1", 1, 16384, 10)),
		xtNode("s2", xtGPUs("s2", 1, 16384, 10)), xtNode("s3", xtGPUs("s3", 1, 16384, 10)))
	body := xtPaddedFilter(t, 3<<20+300<<10, "s1")
	for _, path := range []string{"/filter", "/prioritize", "/bind"} {
		if code, out := e.post(path, body); code != http.StatusRequestEntityTooLarge {
			t.Errorf("POST %s with %d bytes on a 3-node cluster: status %d (%.200s), want 413", path, len(body), code, out)
		}
	}
	for i := range 4000 {
		name := fmt.Sprintf("node-%055d", i)
		e.state.SetNode(xtNode(name, xtGPUs(name, 1, 16384, 10)))
	}
	code, out := e.post("/filter", body)
	if code != http.StatusOK {
		t.Fatalf("POST /filter with %d bytes on a 4003-node cluster: status %d (%.200s), want 200", len(body), code, out)
	}
	var res extenderv1.ExtenderFilterResult
	if err := json.Unmarshal(out, &res); err != nil || res.NodeNames == nil || len(*res.NodeNames) != 1 {
		t.Errorf("filter answer %.300s: %v", out, err)
	}
}

// TestFilterRefusesMoreCandidatesThanTheClusterHas: a forged request naming many more nodes than exist is
// refused before any evaluation.
func TestFilterRefusesMoreCandidatesThanTheClusterHas(t *testing.T) {
	e := newXTEnv(t, extender.DefaultOptions(), xtNode("c1", xtGPUs("c1", 1, 16384, 10)))
	names := make([]string, 500)
	for i := range names {
		names[i] = fmt.Sprint("n", i)
	}
	for _, path := range []string{"/filter", "/prioritize"} {
		code, out := e.post(path, extenderv1.ExtenderArgs{Pod: xtPod("default", "p").GPUs(1).GPUMem(1000).GPUCores(10).Obj(), NodeNames: &names})
		if code != http.StatusBadRequest || !strings.Contains(string(out), "500 candidate nodes") {
			t.Errorf("POST %s with 500 candidates on a 1-node cluster: status %d (%s), want 400 naming the count", path, code, out)
		}
	}
}

// TestBindValidatesNamesBeforeAnyAPICall: names that are not DNS names answer 400 naming the field, and the
// API server is never asked.
func TestBindValidatesNamesBeforeAnyAPICall(t *testing.T) {
	pod := xtPod("default", "p1").GPUs(1).GPUMem(1000).GPUCores(10).Obj()
	e := newXTEnv(t, extender.DefaultOptions(), xtNode("b1", xtGPUs("b1", 1, 16384, 10)), pod)
	for _, tc := range []struct {
		args  extenderv1.ExtenderBindingArgs
		field string
	}{
		{extenderv1.ExtenderBindingArgs{PodNamespace: "default", PodName: "p1", Node: "../../nodes/gpu-0"}, "node"},
		{extenderv1.ExtenderBindingArgs{PodNamespace: "default", PodName: "p1/binding", Node: "b1"}, "podName"},
		{extenderv1.ExtenderBindingArgs{PodNamespace: "..", PodName: "p1", Node: "b1"}, "podNamespace"},
		{extenderv1.ExtenderBindingArgs{PodNamespace: "default", PodName: "", Node: "b1"}, "podName"},
		{extenderv1.ExtenderBindingArgs{PodNamespace: "default", PodName: strings.Repeat("a", 254), Node: "b1"}, "podName"},
	} {
		before := len(e.client.Actions())
		code, out := e.post("/bind", tc.args)
		if code != http.StatusBadRequest || !strings.Contains(string(out), tc.field) {
			t.Errorf("bind %+v: status %d (%s), want 400 naming %s", tc.args, code, out, tc.field)
		}
		if n := len(e.client.Actions()) - before; n != 0 {
			t.Errorf("bind %+v reached the API server (%d calls)", tc.args, n)
		}
	}
}

// TestBindOfABoundPodChangesNothing: kube-scheduler (or anyone) binding a pod that is bound already gets an
// error saying so, and neither the pod, the node nor the extender's count changes.
func TestBindOfABoundPodChangesNothing(t *testing.T) {
	placed := xtPlaced(xtPod("default", "p1").GPUs(1).GPUMem(8000).GPUCores(50).Obj(), "b1", xtDev("b1", 0, 8000, 50))
	e := newXTEnv(t, extender.Options{ReleaseLockAfterBind: true}, xtNode("b1", xtGPUs("b1", 1, 16384, 10)),
		xtNode("b2", xtGPUs("b2", 1, 16384, 10)), placed)
	before := len(e.client.Actions())
	for _, node := range []string{"b2", "b1"} {
		res := e.bind(placed, node)
		if !strings.Contains(res.Error, "already bound to node b1") || !strings.Contains(res.Error, "nothing changed") {
			t.Errorf("bind of a bound pod to %s: error %q, want one saying it is already bound and nothing changed", node, res.Error)
		}
	}
	if n := len(e.client.Actions()) - before; n != 0 {
		t.Errorf("the binds of a bound pod made %d API calls: %v", n, e.client.Actions()[before:])
	}
	if g := e.gpu("b1", 0); g.UsedMem != 8000 {
		t.Errorf("b1's GPU counts %d MiB, want the bound pod's 8000", g.UsedMem)
	}
	if g := e.gpu("b2", 0); g.UsedMem != 0 {
		t.Errorf("b2's GPU counts %d MiB, want 0", g.UsedMem)
	}
}

// TestFilterLeavesOutNodesUnderALiveLock: a node whose lock belongs to a live bind (an unbound owner locked a
// few seconds ago) is out for that moment with a reason; a lock whose owner is gone, failed or abandoned is
// not; a lock dated in the future holds for HAMi's 5 minutes from when it was first seen, not forever.
func TestFilterLeavesOutNodesUnderALiveLock(t *testing.T) {
	now := newXTClock().Now()
	owner := xtPod("other", "owner").GPUs(1).GPUMem(1000).GPUCores(10).Obj()
	owner.Annotations[codec.PodBindPhaseAnnotation] = "allocating"
	failed := xtPod("other", "failed").GPUs(1).GPUMem(1000).GPUCores(10).Obj()
	failed.Annotations[codec.PodBindPhaseAnnotation] = "failed"
	lock := func(name string, l codec.NodeLock) *corev1.Node {
		n := xtNode(name, xtGPUs(name, 1, 16384, 10))
		n.Annotations[codec.NodeLockAnnotation] = codec.FormatNodeLock(l)
		return n
	}
	e := newXTEnv(t, extender.DefaultOptions(), owner, failed,
		lock("live", codec.NodeLock{Time: now.Add(-2 * time.Second), Namespace: "other", Pod: "owner"}),
		lock("abandoned", codec.NodeLock{Time: now.Add(-time.Minute), Namespace: "other", Pod: "owner"}),
		lock("gone", codec.NodeLock{Time: now.Add(-2 * time.Second), Namespace: "other", Pod: "nobody"}),
		lock("failed", codec.NodeLock{Time: now.Add(-2 * time.Second), Namespace: "other", Pod: "failed"}),
		lock("future", codec.NodeLock{Time: now.Add(24 * time.Hour)}),
		xtNode("free", xtGPUs("free", 1, 16384, 10)))
	pod := xtPod("default", "p").GPUs(1).GPUMem(1000).GPUCores(10).Obj()
	check := func(wantFit []string, wantLocked []string) {
		t.Helper()
		res := e.filter(pod, "live", "abandoned", "gone", "failed", "future", "free")
		got := map[string]bool{}
		for _, n := range *res.NodeNames {
			got[n] = true
		}
		for _, n := range wantFit {
			if !got[n] {
				t.Errorf("node %s left out (%q), want it feasible", n, res.FailedNodes[n])
			}
		}
		for _, n := range wantLocked {
			if got[n] || !strings.Contains(res.FailedNodes[n], extender.NodeLocked) {
				t.Errorf("node %s: feasible %v, reason %q; want it left out as %s", n, got[n], res.FailedNodes[n], extender.NodeLocked)
			}
		}
	}
	check([]string{"abandoned", "gone", "failed", "free"}, []string{"live", "future"})
	if r := e.filter(pod, "live").FailedNodes["live"]; !strings.Contains(r, "other/owner") {
		t.Errorf("reason %q does not name the lock's owner", r)
	}
	e.clock.Advance(11 * time.Second) // the live lock's bind timeout passes: abandoned
	check([]string{"live", "free"}, []string{"future"})
	e.clock.Advance(5 * time.Minute) // the future lock has been seen for over 5 minutes
	check([]string{"live", "future", "free"}, nil)
}

// TestSweepTakesBackAbandonedPlacementsAndLocks: an extender killed mid-bind leaves a pod placed but unbound
// and its node locked; once the bind timeout has passed, one sweep takes the placement off and releases the
// lock, and leaves a fresh placement, a bound pod and a live lock alone.
func TestSweepTakesBackAbandonedPlacementsAndLocks(t *testing.T) {
	now := newXTClock().Now()
	unix := fmt.Sprint(now.Add(-time.Minute).Unix())
	orphan := xtPlaced(xtPod("default", "orphan").GPUs(1).GPUMem(8000).GPUCores(10).Obj(), "k1", xtDev("k1", 0, 8000, 10))
	orphan.Spec.NodeName = ""
	orphan.Annotations[codec.PodBindPhaseAnnotation] = "allocating"
	orphan.Annotations[codec.PodBindTimeAnnotation] = unix
	fresh := xtPlaced(xtPod("default", "fresh").GPUs(1).GPUMem(4000).GPUCores(10).Obj(), "k2", xtDev("k2", 0, 4000, 10))
	fresh.Spec.NodeName = ""
	fresh.Annotations[codec.PodBindPhaseAnnotation] = "allocating"
	fresh.Annotations[codec.PodBindTimeAnnotation] = fmt.Sprint(now.Add(-2 * time.Second).Unix())
	bound := xtPlaced(xtPod("default", "bound").GPUs(1).GPUMem(2000).GPUCores(10).Obj(), "k1", xtDev("k1", 0, 2000, 10))
	bound.Annotations[codec.PodBindPhaseAnnotation] = "allocating"
	bound.Annotations[codec.PodBindTimeAnnotation] = unix
	k1 := xtLockedNode("k1", codec.NodeLock{Time: now.Add(-time.Minute), Namespace: "default", Pod: "orphan"})
	k2 := xtLockedNode("k2", codec.NodeLock{Time: now.Add(-2 * time.Second), Namespace: "default", Pod: "fresh"})
	e := newXTEnv(t, extender.Options{ReleaseLockAfterBind: true}, k1, k2, orphan, fresh, bound)
	e.srv.Sweep(t.Context())
	got := e.livePod("default", "orphan")
	if got.Annotations[codec.PodNodeAnnotation] != "" || got.Annotations[codec.PodAllocatedAnnotation] != "" || got.Annotations[codec.PodBindPhaseAnnotation] != "failed" {
		t.Errorf("abandoned placement not taken back: %v", got.Annotations)
	}
	if _, held := xtLockOf(t, e.liveNode("k1")); held {
		t.Errorf("the abandoned lock on k1 is still held")
	}
	if a := e.livePod("default", "fresh").Annotations; a[codec.PodNodeAnnotation] != "k2" {
		t.Errorf("a placement younger than the bind timeout was taken back: %v", a)
	}
	if _, held := xtLockOf(t, e.liveNode("k2")); !held {
		t.Errorf("the live lock on k2 was released")
	}
	if a := e.livePod("default", "bound").Annotations; a[codec.PodNodeAnnotation] != "k1" || a[codec.PodBindPhaseAnnotation] != "allocating" {
		t.Errorf("a bound pod's placement changed: %v", a)
	}
}
