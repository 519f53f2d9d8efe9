package extender_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/extender"
)

// events lists the FilteringFailed events of a pod once their number has been want for a moment (they are
// sent asynchronously), failing when it is not reached or exceeded.
func (e *xtEnv) waitEvents(ns, pod string, want int) []corev1.Event {
	e.t.Helper()
	var got []corev1.Event
	list := func() {
		l, err := e.client.CoreV1().Events(ns).List(e.t.Context(), metav1.ListOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		got = got[:0]
		for _, ev := range l.Items {
			if ev.InvolvedObject.Name == pod && ev.Reason == extender.EventReason {
				got = append(got, ev)
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for list(); len(got) < want && time.Now().Before(deadline); list() {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(150 * time.Millisecond) // room for an extra one to show up
	list()
	if len(got) != want {
		msgs := make([]string, len(got))
		for i, ev := range got {
			msgs[i] = ev.Message
		}
		e.t.Fatalf("pod %s/%s has %d %s events, want %d: %q", ns, pod, len(got), extender.EventReason, want, msgs)
	}
	return got
}

func (e *xtEnv) filter(pod *corev1.Pod, names ...string) extenderv1.ExtenderFilterResult {
	e.t.Helper()
	var res extenderv1.ExtenderFilterResult
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &names}, &res)
	return res
}

func TestPendingEventsAreRateLimited(t *testing.T) {
	big := xtPod("default", "big").GPUs(1).GPUMem(20000).GPUCores(10).Obj()
	other := xtPod("default", "other").GPUs(1).GPUMem(20000).GPUCores(10).Obj()
	small := xtPod("default", "small").GPUs(1).GPUMem(1000).GPUCores(10).Obj()
	e := newXTEnv(t, extender.Options{EventInterval: time.Minute},
		xtNode("e1", xtGPUs("e1", 2, 16384, 10)), xtNode("e2", xtGPUs("e2", 1, 8192, 10)), big, other, small)

	for range 5 {
		e.filter(big, "e1")
	}
	evs := e.waitEvents("default", "big", 1)
	ev := evs[0]
	if ev.Type != corev1.EventTypeWarning || ev.InvolvedObject.Kind != "Pod" || ev.InvolvedObject.UID != big.UID {
		t.Errorf("event %+v: want a Warning about the pod (uid %s)", ev, big.UID)
	}
	for _, w := range []string{"0/1 nodes are available: 1 CardInsufficientMemory.", "20000 MiB", "16384"} {
		if !strings.Contains(ev.Message, w) {
			t.Errorf("event message %q does not contain %q", ev.Message, w)
		}
	}
	if len(ev.Message) > 1024 {
		t.Errorf("event message is %d bytes, over 1 KiB", len(ev.Message))
	}

	// Within the interval, the same summary: no new event.
	e.clock.Advance(30 * time.Second)
	e.filter(big, "e1")
	e.waitEvents("default", "big", 1)

	// The summary changes (another candidate): a new event at once.
	e.filter(big, "e1", "e2")
	evs = e.waitEvents("default", "big", 2)
	found := false
	for _, ev := range evs {
		found = found || strings.Contains(ev.Message, "0/2 nodes are available")
	}
	if !found {
		t.Errorf("no event carries the new summary: %v", evs)
	}
	e.filter(big, "e1", "e2")
	e.waitEvents("default", "big", 2)

	// After the interval the same summary is sent again.
	e.clock.Advance(61 * time.Second)
	e.filter(big, "e1", "e2")
	e.waitEvents("default", "big", 3)

	// Another pod has its own budget; a pod that fits gets none.
	e.filter(other, "e1")
	e.waitEvents("default", "other", 1)
	if res := e.filter(small, "e1"); res.NodeNames == nil || len(*res.NodeNames) != 1 {
		t.Fatalf("small pod does not fit: %+v", res)
	}
	e.waitEvents("default", "small", 0)
}

func TestPendingEventsDisabled(t *testing.T) {
	e := newXTEnv(t, extender.Options{EventInterval: 0}, xtNode("e1", xtGPUs("e1", 1, 16384, 10)))
	e.filter(xtPod("default", "big").GPUs(1).GPUMem(20000).GPUCores(10).Obj(), "e1")
	e.waitEvents("default", "big", 0)
}

// TestPendingEventsOnlyForPodsThatExist: a forged filter request names pods the cluster does not have (in any
// namespace, kube-system included) or a pod under another UID: no event is written for any of them.
func TestPendingEventsOnlyForPodsThatExist(t *testing.T) {
	real := xtPod("default", "real").GPUs(1).GPUMem(20000).GPUCores(10).Obj()
	e := newXTEnv(t, extender.Options{EventInterval: time.Minute}, xtNode("e1", xtGPUs("e1", 1, 16384, 10)), real)
	ghost := xtPod("kube-system", "ghost").GPUs(1).GPUMem(20000).GPUCores(10).Obj()
	impostor := real.DeepCopy()
	impostor.UID = "another-uid"
	bad := xtPod("default", "Not_A_Name").GPUs(1).GPUMem(20000).GPUCores(10).Obj()
	for _, p := range []*corev1.Pod{ghost, impostor, bad} {
		e.filter(p, "e1")
	}
	e.filter(real, "e1")
	e.waitEvents("default", "real", 1)
	for _, p := range []*corev1.Pod{ghost, bad} {
		e.waitEvents(p.Namespace, p.Name, 0)
	}
	evs, err := e.client.CoreV1().Events("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) != 1 || evs.Items[0].InvolvedObject.UID != real.UID {
		t.Errorf("events %+v: want exactly one, for default/real (uid %s)", evs.Items, real.UID)
	}
}
