package extender_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestRealSchedulerPreemptsWhereTheGPUFrees: kube-scheduler (v1.37) with serve-extender's preemptVerb. Both nodes
// are full of CPU held by low-priority pods, so kube-scheduler's own dry run finds a victim on each; on node-a a
// pod of higher priority holds the GPU, so evicting the low pod there frees CPU but no GPU. The preempt verb
// drops node-a: kube-scheduler evicts the pod on node-b only (never the one on node-a, which a plain extender
// leaves to chance), nominates node-b, and the pod binds there once its victim is gone; a pod of lower priority
// created meanwhile does not take the GPU held for it.
func TestRealSchedulerPreemptsWhereTheGPUFrees(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	env, x := xtStartLivePreempt(t)
	c := env.Client
	ctx := context.Background()
	for _, pc := range []struct {
		name  string
		value int32
	}{{"low", 10}, {"mid", 500}, {"high", 1000}} {
		if _, err := c.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: pc.name}, Value: pc.value}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"node-a", "node-b"} {
		n := xtNode(name, xtGPUs(name, 1, 16384, 10))
		for _, rl := range []corev1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
			rl[corev1.ResourceCPU] = resource.MustParse("4")
		}
		xtCreateNode(t, c, n)
	}
	withClass := func(p *corev1.Pod, class, cpu string) *corev1.Pod {
		p.Spec.PriorityClassName = class
		if cpu != "" {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		}
		return xtLivePod(p)
	}
	bound := []*corev1.Pod{
		withClass(xtPlaced(xtPod("default", "hi-gpu").GPUs(1).GPUMem(16000).Obj(), "node-a", xtDev("node-a", 0, 16000, 0)), "high", ""),
		withClass(xtPod("default", "lo-cpu-a").Node("node-a").Obj(), "low", "4"),
		withClass(xtPod("default", "lo-cpu-b").Node("node-b").Obj(), "low", "4"),
	}
	for _, p := range bound {
		if _, err := c.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", p.Name, err)
		}
	}
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool {
		n := cl.Node("node-a")
		return n != nil && cl.Node("node-b") != nil && n.GPUs[0].UsedMem == 16000
	})

	p := withClass(xtPod("default", "preemptor").GPUs(1).GPUMem(12000).Obj(), "mid", "2")
	if _, err := c.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// kube-scheduler evicts lo-cpu-b (DisruptionTarget, then a graceful delete no kubelet completes) and nominates node-b.
	victim := xtWaitPod(t, c, "default", "lo-cpu-b", 60*time.Second, func(p *corev1.Pod) bool { return p.DeletionTimestamp != nil })
	if !xtHasCondition(victim, corev1.DisruptionTarget) {
		t.Errorf("victim lo-cpu-b has no DisruptionTarget condition: %+v", victim.Status.Conditions)
	}
	nominated := xtWaitPod(t, c, "default", "preemptor", 30*time.Second, func(p *corev1.Pod) bool { return p.Status.NominatedNodeName != "" })
	if nominated.Status.NominatedNodeName != "node-b" {
		t.Fatalf("preemptor nominated to %s, want node-b", nominated.Status.NominatedNodeName)
	}
	// A pod of lower priority arriving meanwhile may not take the GPU the preemption freed for the nominee:
	// kube-scheduler's own checks pass node-b (it asks for no CPU), the extender holds the GPU.
	sneak := withClass(xtPod("default", "sneak").GPUs(1).GPUMem(8000).Obj(), "low", "")
	if _, err := c.CoreV1().Pods("default").Create(ctx, sneak, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	xtWaitUnschedulable(t, c, "default", "sneak", "held for pod default/preemptor")
	// The kubelet's part: the victim is gone.
	if err := c.CoreV1().Pods("default").Delete(ctx, "lo-cpu-b", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	got := xtWaitBound(t, c, "default", "preemptor", 60*time.Second)
	if got.Spec.NodeName != "node-b" {
		t.Fatalf("preemptor bound to %s, want node-b", got.Spec.NodeName)
	}
	xtCheckHAMiAnnotations(t, got)
	if p, err := c.CoreV1().Pods("default").Get(ctx, "sneak", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("the low-priority pod that came during the hold was bound to %q (err %v): 12000 + 8000 MiB do not fit one 16384 MiB GPU", p.Spec.NodeName, err)
	}
	spared, err := c.CoreV1().Pods("default").Get(ctx, "lo-cpu-a", metav1.GetOptions{})
	if err != nil || spared.DeletionTimestamp != nil {
		t.Fatalf("lo-cpu-a on node-a was evicted (err %v): evicting it frees no GPU", err)
	}
}

// xtStartLivePreempt is xtStartLive with the preemptVerb in kube-scheduler's extender configuration.
func xtStartLivePreempt(t testing.TB) (*testenv.Env, *xtLiveExtender) {
	t.Helper()
	env := testenv.Start(t)
	x := xtStartLiveExtender(t, env.Client, false)
	cfg := strings.Replace(xtSchedulerConfig(x.http.URL), "  bindVerb: bind\n", "  bindVerb: bind\n  preemptVerb: preempt\n", 1)
	if !strings.Contains(cfg, "preemptVerb: preempt") {
		t.Fatal("test setup: no bindVerb line to add the preemptVerb after")
	}
	env.StartScheduler(t, cfg)
	return env, x
}

// xtWaitPod waits until the pod satisfies ok.
func xtWaitPod(t testing.TB, c kubernetes.Interface, ns, name string, timeout time.Duration, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var got *corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = p
		return ok(p), nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s: condition not reached within %s: %v; status %+v; events: %s", ns, name, timeout, err, got.Status, xtPodEvents(t, c, ns, name))
	}
	return got
}

func xtHasCondition(p *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
