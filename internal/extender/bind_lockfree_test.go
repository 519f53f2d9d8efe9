package extender_test

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
)

// xtLockFreeNode is a node whose agent registered as its device plugin (codec.NodeAllocatorAnnotation).
func xtLockFreeNode(name string, devs []codec.DeviceInfo) *corev1.Node {
	n := xtNode(name, devs)
	n.Annotations[codec.NodeAllocatorAnnotation] = codec.AllocatorKubectlHAMi
	return n
}

// TestBindLockFreeNodeRunsSideBySide: with the shipped options (the lock is not released after bind), binds to a
// node whose agent is its device plugin write no node lock and need not wait for each pod's allocation (that
// plugin finds each pod without the lock): every pod that fits is bound at once, racing, while none of them
// has been allocated. On a node of HAMi's device plugin, the first bound pod's lock holds the node until the
// plugin allocates it.
func TestBindLockFreeNodeRunsSideBySide(t *testing.T) {
	objs := []runtime.Object{xtLockFreeNode("b1", xtGPUs("b1", 1, 16000, 10)), xtNode("h1", xtGPUs("h1", 1, 16000, 10))}
	var pods []*corev1.Pod
	for i := range 12 {
		p := xtPod("default", "r"+strconv.Itoa(i)).GPUs(1).GPUMem(2000).GPUCores(10).Obj()
		pods, objs = append(pods, p), append(objs, p)
	}
	e := newXTEnv(t, extender.Options{}, objs...)
	var nodeWrites atomic.Int32
	e.client.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if pa, ok := a.(k8stesting.PatchAction); ok && pa.GetName() == "b1" {
			nodeWrites.Add(1)
		}
		return false, nil, nil
	})
	var wg sync.WaitGroup
	var bound atomic.Int32
	for _, p := range pods[:10] {
		wg.Go(func() {
			var r extenderv1.ExtenderBindingResult
			_, out := xtPost(t, e.http.URL+"/bind", extenderv1.ExtenderBindingArgs{PodName: p.Name, PodNamespace: p.Namespace, PodUID: p.UID, Node: "b1"})
			if xtJsonUnmarshal(out, &r) == nil && r.Error == "" {
				bound.Add(1)
			} else if strings.Contains(r.Error, "locked") {
				t.Errorf("%s: %s", p.Name, r.Error)
			}
		})
	}
	wg.Wait()
	if bound.Load() != 8 {
		t.Errorf("%d of 10 pods bound, want the 8 that fit", bound.Load())
	}
	if g := e.gpu("b1", 0); g.UsedMem != 16000 {
		t.Errorf("GPU holds %d MiB, want 16000", g.UsedMem)
	}
	if nodeWrites.Load() != 0 {
		t.Errorf("%d node writes, want none (no node lock)", nodeWrites.Load())
	}
	if _, held := xtLockOf(t, e.liveNode("b1")); held {
		t.Errorf("a node lock was written")
	}
	// HAMi's protocol: the second pod waits for the first one's allocation.
	if r := e.bind(pods[10], "h1"); r.Error != "" {
		t.Fatalf("first bind to h1: %s", r.Error)
	}
	if r := e.bind(pods[11], "h1"); !strings.Contains(r.Error, "locked") {
		t.Errorf("second bind to h1 before the first pod's allocation: error %q, want one saying the node is locked", r.Error)
	}
}

// TestBindLockFreeNodeRespectsForeignLock: a live lock another scheduler took on such a node (a pod it bound
// still allocating) holds the node: that pod's allocation comes first.
func TestBindLockFreeNodeRespectsForeignLock(t *testing.T) {
	e0 := newXTClock().Now()
	owner := xtPod("other", "owner").GPUs(1).GPUMem(1000).GPUCores(10).Obj()
	owner.Annotations[codec.PodBindPhaseAnnotation] = codec.BindPhaseAllocating
	owner.Spec.NodeName = "b1"
	n := xtLockFreeNode("b1", xtGPUs("b1", 1, 10000, 10))
	n.Annotations[codec.NodeLockAnnotation] = codec.FormatNodeLock(codec.NodeLock{Time: e0.Add(-time.Minute), Namespace: "other", Pod: "owner"})
	pod := xtPod("default", "p1").GPUs(1).GPUMem(6000).GPUCores(30).Obj()
	e := newXTEnv(t, extender.Options{}, n, pod, owner)
	if res := e.bind(pod, "b1"); !strings.Contains(res.Error, "locked") {
		t.Fatalf("bind onto a lock-free node locked by another scheduler's pod: error %q, want one saying it is locked", res.Error)
	}
	if g := e.gpu("b1", 0); g.UsedMem != 0 {
		t.Errorf("state not rolled back: %d MiB in use", g.UsedMem)
	}
	if a := e.livePod("default", "p1").Annotations; a[codec.PodNodeAnnotation] != "" {
		t.Errorf("pod annotated although the node is locked: %v", a)
	}
}
