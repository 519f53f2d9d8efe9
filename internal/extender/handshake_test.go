package extender_test

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
)

// TestHandshakeStampsStartHAMisGrace follows a node whose device plugin never serves (allocatable 0) through
// HAMi's registration protocol: unstamped, HAMi would stamp and judge it, so it is feasible; serve-extender
// stamps it as HAMi's pass does, and 60 s after the stamp it is dropped, not judged forever.
func TestHandshakeStampsStartHAMisGrace(t *testing.T) {
	starting := xtNode("n-starting", xtGPUs("n-starting", 1, 16384, 10))
	starting.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("0")
	serving := xtNode("n-serving", xtGPUs("n-serving", 1, 16384, 10))
	stamped := xtNode("n-stamped", xtGPUs("n-stamped", 1, 16384, 10))
	stamped.Annotations[codec.NodeHandshakeAnnotation] = codec.FormatHandshakeRequesting(newXTClock().Now().Add(-time.Hour))
	e := newXTEnv(t, extender.Options{}, starting, serving, stamped, xtNode("n-cpu", nil))
	pod := xtPod("default", "p").GPUs(1).GPUMem(1000).GPUCores(10).Obj()
	filter := func() extenderv1.ExtenderFilterResult {
		t.Helper()
		names := []string{"n-starting", "n-serving", "n-stamped"}
		var res extenderv1.ExtenderFilterResult
		e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &names}, &res)
		return res
	}

	if res := filter(); res.NodeNames == nil || !slices.Contains(*res.NodeNames, "n-starting") {
		t.Fatalf("before any stamp: feasible %v, unresolvable %v; HAMi would stamp n-starting and judge its GPUs", res.NodeNames, res.FailedAndUnresolvableNodes)
	}
	if got, want := e.state.Unstamped(), []string{"n-serving", "n-starting"}; !slices.Equal(got, want) {
		t.Fatalf("Unstamped() = %v, want %v (a node without NVIDIA GPUs or already stamped needs none)", got, want)
	}
	stampedAt := e.clock.Now()
	n, err := e.srv.StampHandshakes(t.Context())
	if err != nil || n != 2 {
		t.Fatalf("StampHandshakes = %d, %v; want 2 nodes", n, err)
	}
	want := codec.FormatHandshakeRequesting(stampedAt)
	for _, name := range []string{"n-starting", "n-serving"} {
		if got := e.liveNode(name).Annotations[codec.NodeHandshakeAnnotation]; got != want {
			t.Errorf("%s handshake %q, want %q", name, got, want)
		}
	}
	if got := e.liveNode("n-stamped").Annotations[codec.NodeHandshakeAnnotation]; got == want {
		t.Errorf("n-stamped was stamped again: HAMi keeps a Requesting_ stamp")
	}
	if left := e.state.Unstamped(); len(left) != 0 {
		t.Errorf("Unstamped() after the pass = %v", left)
	}

	e.clock.Advance(59 * time.Second)
	if res := filter(); res.NodeNames == nil || !slices.Contains(*res.NodeNames, "n-starting") {
		t.Errorf("59 s after the stamp: feasible %v; still within HAMi's grace", res.NodeNames)
	}
	e.clock.Advance(time.Second)
	res := filter()
	if res.NodeNames == nil || slices.Contains(*res.NodeNames, "n-starting") || res.FailedAndUnresolvableNodes["n-starting"] != string(engine.NodeDevicesNotReady) {
		t.Errorf("60 s after the stamp: feasible %v, unresolvable %v; want n-starting %s", res.NodeNames, res.FailedAndUnresolvableNodes, engine.NodeDevicesNotReady)
	}
	if !slices.Contains(*res.NodeNames, "n-serving") || !slices.Contains(*res.NodeNames, "n-stamped") {
		t.Errorf("feasible %v: a node whose device plugin serves is judged whatever its stamp's age", *res.NodeNames)
	}
	if n, err := e.srv.StampHandshakes(t.Context()); err != nil || n != 0 {
		t.Errorf("second pass stamped %d (%v): a stamped node keeps its stamp", n, err)
	}
}

// TestHandshakeStampSkipsDeletedNode checks that a node deleted since the informer saw it is forgotten, not
// an error.
func TestHandshakeStampSkipsDeletedNode(t *testing.T) {
	e := newXTEnv(t, extender.Options{}, xtNode("n-gone", xtGPUs("n-gone", 1, 16384, 10)))
	if err := e.client.CoreV1().Nodes().Delete(t.Context(), "n-gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.srv.StampHandshakes(t.Context()); err != nil || n != 0 {
		t.Fatalf("StampHandshakes = %d, %v; want 0, nil", n, err)
	}
	if left := e.state.Unstamped(); len(left) != 0 {
		t.Errorf("Unstamped() = %v; the deleted node should be forgotten", left)
	}
}
