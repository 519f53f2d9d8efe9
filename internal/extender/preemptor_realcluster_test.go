package extender_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// The extender's own preemption (preemptor.go) behind a real kube-scheduler (v1.37) and kube-apiserver: the pods
// are short of GPU memory alone, so kube-scheduler's dry run finds no victim and never asks the preempt verb;
// the extender evicts, nominates and holds.

// xtPriorityClasses creates the classes low (10), high (1000) and polite (1000, preemptionPolicy Never).
func xtPriorityClasses(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	never := corev1.PreemptNever
	for _, pc := range []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Value: 10},
		{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
		{ObjectMeta: metav1.ObjectMeta{Name: "polite"}, Value: 1000, PreemptionPolicy: &never},
	} {
		if _, err := c.SchedulingV1().PriorityClasses().Create(context.Background(), pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// xtGPUPod is a pod of the class asking for memMiB of one GPU; bound (placed by HAMi on GPU 0) when node is set.
func xtGPUPod(name, class string, memMiB int64, node string, labels map[string]string) *corev1.Pod {
	p := xtPod("default", name).GPUs(1).GPUMem(memMiB).Obj()
	if node != "" {
		p = xtPlaced(p, node, xtDev(node, 0, memMiB, 0))
	}
	p.Spec.PriorityClassName = class
	p.Labels = labels
	return xtLivePod(p)
}

func xtCreateEach(t *testing.T, c kubernetes.Interface, pods ...*corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		if _, err := c.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", p.Name, err)
		}
	}
}

// xtTerminating says whether each pod is being deleted (a missing pod counts as deleted).
func xtTerminating(t *testing.T, c kubernetes.Interface, names ...string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, n := range names {
		p, err := c.CoreV1().Pods("default").Get(context.Background(), n, metav1.GetOptions{})
		out[n] = err != nil || p.DeletionTimestamp != nil
	}
	return out
}

// xtEventReasons lists the reasons of the pod's events.
func xtEventReasons(t *testing.T, c kubernetes.Interface, name string) []string {
	t.Helper()
	evs, err := c.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs.Items {
		out = append(out, e.Reason)
	}
	return out
}

// xtMetric reads one counter of the in-process extender's /metrics (0 when absent).
func xtMetric(t *testing.T, x *xtLiveExtender, series string) float64 {
	t.Helper()
	resp, err := http.Get(x.http.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(b.String())
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestRealSchedulerExtenderPreemptsForGPUs: node-a holds two low pods of 8,000 MiB under a PodDisruptionBudget that
// allows no disruption, node-b three low pods of 5,000, 5,000 and 6,000 MiB; a high pod asks for 8,000 MiB. On
// node-a one victim would do, but it violates the budget: kube-scheduler's order takes node-b, where the minimal
// victims are the two pods whose memory together frees enough (the 5,000 MiB pod kube-scheduler ranks first
// stays). The victims get DisruptionTarget and are deleted, the pod is nominated, events say so; a low pod
// arriving once the victims are gone is refused node-b (held), and the high pod binds there on their GPU.
func TestRealSchedulerExtenderPreemptsForGPUs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	env, x := xtStartLive(t)
	c := env.Client
	ctx := context.Background()
	xtPriorityClasses(t, c)
	for _, n := range []string{"node-a", "node-b"} {
		xtCreateNode(t, c, xtNode(n, xtGPUs(n, 1, 16384, 10)))
	}
	if _, err := c.PolicyV1().PodDisruptionBudgets("default").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "keep-a", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	app := map[string]string{"app": "a"}
	xtCreateEach(t, c,
		xtGPUPod("lo-a1", "low", 8000, "node-a", app), xtGPUPod("lo-a2", "low", 8000, "node-a", app),
		xtGPUPod("lo-b1", "low", 5000, "node-b", nil), xtGPUPod("lo-b2", "low", 5000, "node-b", nil), xtGPUPod("lo-b3", "low", 6000, "node-b", nil))
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool {
		a, b := cl.Node("node-a"), cl.Node("node-b")
		return a != nil && b != nil && a.GPUs[0].UsedMem == 16000 && b.GPUs[0].UsedMem == 16000
	})

	xtCreateEach(t, c, xtGPUPod("vip", "high", 8000, "", nil))
	vip := xtWaitPod(t, c, "default", "vip", 60*time.Second, func(p *corev1.Pod) bool { return p.Status.NominatedNodeName != "" })
	if vip.Status.NominatedNodeName != "node-b" {
		t.Fatalf("vip nominated to %s, want node-b (node-a's victim violates its PodDisruptionBudget)", vip.Status.NominatedNodeName)
	}
	for _, v := range []string{"lo-b2", "lo-b3"} {
		p := xtWaitPod(t, c, "default", v, 30*time.Second, func(p *corev1.Pod) bool { return p.DeletionTimestamp != nil })
		if !xtHasCondition(p, corev1.DisruptionTarget) {
			t.Errorf("victim %s has no DisruptionTarget condition: %+v", v, p.Status.Conditions)
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.DisruptionTarget && cond.Reason != corev1.PodReasonPreemptionByScheduler {
				t.Errorf("victim %s: DisruptionTarget reason %q, want kube-scheduler's %q", v, cond.Reason, corev1.PodReasonPreemptionByScheduler)
			}
		}
	}
	for name, gone := range xtTerminating(t, c, "lo-a1", "lo-a2", "lo-b1") {
		if gone {
			t.Errorf("%s was evicted: the minimal victims are lo-b2 and lo-b3", name)
		}
	}
	xtWaitEventReason(t, c, "lo-b2", "Preempted")
	xtWaitEventReason(t, c, "vip", "Preempting")
	if got := xtMetric(t, x, `kubectl_hami_extender_preemption_victims_total`); got != 2 {
		t.Errorf("kubectl_hami_extender_preemption_victims_total = %v, want 2", got)
	}

	// The kubelet's part, with the extender paused: its calls wait, so kube-scheduler cannot bind vip before
	// the extender is asked, as kube-scheduler would ask it, about a low pod that fits node-b once the victims
	// are gone (4,000 MiB beside lo-b1) but not beside vip.
	xtCreateEach(t, c, xtGPUPod("sneak", "low", 4000, "", nil))
	xtWaitUnschedulable(t, c, "default", "sneak", "")
	x.mu.Lock()
	for _, v := range []string{"lo-b2", "lo-b3"} {
		if err := c.CoreV1().Pods("default").Delete(ctx, v, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			x.mu.Unlock()
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var used int64
		x.state.Read(func(cl *engine.Cluster) { used = cl.Node("node-b").GPUs[0].UsedMem })
		if used == 5000 {
			break
		}
		if time.Now().After(deadline) {
			x.mu.Unlock()
			t.Fatalf("the extender still counts %d MiB on node-b after its victims were deleted", used)
		}
	}
	sneak, err := c.CoreV1().Pods("default").Get(ctx, "sneak", metav1.GetOptions{})
	if err != nil {
		x.mu.Unlock()
		t.Fatal(err)
	}
	body, _ := json.Marshal(extenderv1.ExtenderArgs{Pod: sneak, NodeNames: &[]string{"node-b"}})
	rec := httptest.NewRecorder()
	x.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/filter", strings.NewReader(string(body))))
	x.mu.Unlock()
	var res extenderv1.ExtenderFilterResult
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatalf("filter answer %s: %v", rec.Body.String(), err)
	}
	if why := res.FailedNodes["node-b"]; !strings.Contains(why, "held for pod default/vip") {
		t.Errorf("the low pod's filter on node-b: %q (kept %v), want the GPU held for default/vip", why, res.NodeNames)
	}

	got := xtWaitBound(t, c, "default", "vip", 60*time.Second)
	if got.Spec.NodeName != "node-b" {
		t.Fatalf("vip bound to %s, want node-b", got.Spec.NodeName)
	}
	xtCheckHAMiAnnotations(t, got)
	if devs := got.Annotations[codec.PodAllocatedAnnotation]; !strings.Contains(devs, xtUUID("node-b", 0)+",NVIDIA,8000") {
		t.Errorf("vip's devices %q: want 8000 MiB of %s, the GPU its victims held", devs, xtUUID("node-b", 0))
	}
	if p, err := c.CoreV1().Pods("default").Get(ctx, "sneak", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("the low pod was bound to %q (err %v): 5000 + 8000 + 4000 MiB do not fit 16384", p.Spec.NodeName, err)
	}
}

// TestRealSchedulerExtenderPreemptsNothingForEqualsOrNever: a pod of the victims' own priority, and one of higher
// priority whose class says preemptionPolicy Never, wait and evict nobody; a high pod then preempts (the
// preemptor was there all along).
func TestRealSchedulerExtenderPreemptsNothingForEqualsOrNever(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	env, x := xtStartLive(t)
	c := env.Client
	xtPriorityClasses(t, c)
	xtCreateNode(t, c, xtNode("node-c", xtGPUs("node-c", 1, 16384, 10)))
	xtCreateEach(t, c, xtGPUPod("lo-c", "low", 16000, "node-c", nil))
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool { n := cl.Node("node-c"); return n != nil && n.GPUs[0].UsedMem == 16000 })

	xtCreateEach(t, c, xtGPUPod("peer", "low", 8000, "", nil), xtGPUPod("polite", "polite", 8000, "", nil))
	const noCandidate = `kubectl_hami_extender_preemptions_total{result="no_candidate"}`
	for deadline := time.Now().Add(30 * time.Second); xtMetric(t, x, noCandidate) < 2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v after 30 s: the preemptor never looked at the two pods", noCandidate, xtMetric(t, x, noCandidate))
		}
	}
	time.Sleep(2 * time.Second) // a preemption under way would show by now
	if xtTerminating(t, c, "lo-c")["lo-c"] {
		t.Fatal("lo-c was evicted for a pod of its own priority or one whose preemptionPolicy is Never")
	}
	for _, n := range []string{"peer", "polite"} {
		if p, err := c.CoreV1().Pods("default").Get(context.Background(), n, metav1.GetOptions{}); err != nil || p.Status.NominatedNodeName != "" || p.Spec.NodeName != "" {
			t.Fatalf("%s: nominated %q, bound %q (err %v): want pending, not nominated", n, p.Status.NominatedNodeName, p.Spec.NodeName, err)
		}
	}
	xtCreateEach(t, c, xtGPUPod("vip", "high", 8000, "", nil))
	xtWaitPod(t, c, "default", "lo-c", 60*time.Second, func(p *corev1.Pod) bool { return p.DeletionTimestamp != nil })
}

// xtWaitEventReason waits for an event of the reason about the pod.
func xtWaitEventReason(t *testing.T, c kubernetes.Interface, pod, reason string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		for _, r := range xtEventReasons(t, c, pod) {
			if r == reason {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s: no %s event in 20 s; events: %s", pod, reason, xtPodEvents(t, c, "default", pod))
		}
	}
}
