package extender_test

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// xtLiveExtender is the extender running in-process against a real apiserver, served on a loopback
// httptest server whose handler can be swapped to restart the extender without changing its URL.
type xtLiveExtender struct {
	t      testing.TB
	client kubernetes.Interface
	dyn    dynamic.Interface // set: Volcano queues and PodGroups are watched too
	opts   extender.Options
	http   *httptest.Server

	mu       sync.RWMutex // held for reading while a request is served, for writing during a restart
	handler  http.Handler
	state    *extender.State
	cancel   context.CancelFunc
	factory  informers.SharedInformerFactory
	restarts int
}

// xtStartLiveExtender starts informers, a server (ReleaseLockAfterBind: no device plugin consumes the lock)
// and the loopback HTTP server; everything stops in t.Cleanup.
func xtStartLiveExtender(t testing.TB, client kubernetes.Interface, tlsServer bool) *xtLiveExtender {
	t.Helper()
	opts := extender.DefaultOptions()
	opts.ReleaseLockAfterBind = true
	opts.EventInterval = 10 * time.Second
	return xtStartLiveExtenderWith(t, client, opts, tlsServer)
}

// xtStartLiveExtenderWith is xtStartLiveExtender with the given options.
func xtStartLiveExtenderWith(t testing.TB, client kubernetes.Interface, opts extender.Options, tlsServer bool) *xtLiveExtender {
	t.Helper()
	x := &xtLiveExtender{t: t, client: client, opts: opts}
	x.start()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x.mu.RLock()
		defer x.mu.RUnlock()
		x.handler.ServeHTTP(w, r)
	})
	if tlsServer {
		x.http = httptest.NewTLSServer(h)
	} else {
		x.http = httptest.NewServer(h)
	}
	t.Cleanup(func() {
		x.http.Close()
		x.mu.Lock()
		defer x.mu.Unlock()
		x.stopLocked()
	})
	return x
}

func (x *xtLiveExtender) start() {
	x.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	state := extender.NewState(engine.DefaultConfig())
	logLevel := slog.LevelError
	if os.Getenv("KUBECTL_HAMI_EXTENDER_DEBUG") != "" {
		logLevel = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel}))
	srv := extender.NewServer(state, x.client, x.opts, log, time.Now)
	// The informers live on ctx (StartInformers runs them until it ends and returns once they synced).
	f, err := extender.StartInformers(ctx, x.client, state, time.Now)
	if err != nil {
		cancel()
		x.t.Fatalf("extender informers: %v", err)
	}
	if x.dyn != nil {
		if on, err := extender.StartVolcanoInformers(ctx, x.dyn, state, log); err != nil || !on {
			cancel()
			x.t.Fatalf("extender Volcano informers: on %v, %v", on, err)
		}
	}
	go srv.RunJanitor(ctx, time.Second) // as serve-extender runs it
	go srv.RunPreemptor(ctx)            // as serve-extender runs it
	x.handler, x.state, x.cancel, x.factory = srv.Handler(), state, cancel, f
}

func (x *xtLiveExtender) stopLocked() {
	if x.cancel != nil {
		x.cancel()
		x.factory.Shutdown()
		x.cancel = nil
	}
}

// restart stops the informers and the server (waiting for requests in flight), then starts a fresh
// State and Server on the same URL: the new state is rebuilt from the apiserver alone.
func (x *xtLiveExtender) restart() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.stopLocked()
	x.start()
	x.restarts++
}

func (x *xtLiveExtender) State() *extender.State {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.state
}

var xtHamiResources = engine.DefaultConfig().ManagedResources()

// xtSchedulerConfig is kube-scheduler's configuration with the hami-scheduler profile calling the extender,
// as HAMi wires it.
func xtSchedulerConfig(url string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: "%s"
  qps: 1000
  burst: 2000
profiles:
- schedulerName: %s
extenders:
- urlPrefix: "%s"
  filterVerb: filter
  prioritizeVerb: prioritize
  bindVerb: bind
  weight: 1
  nodeCacheCapable: true
  enableHTTPS: false
  httpTimeout: 30s
  managedResources:
`, testenv.KubeconfigPlaceholder, xtScheduler, url)
	for _, r := range xtHamiResources {
		fmt.Fprintf(&b, "  - name: %s\n    ignoredByScheduler: true\n", r)
	}
	return b.String()
}

// xtStartLive starts a control plane, the extender and kube-scheduler wired to it.
func xtStartLive(t testing.TB) (*testenv.Env, *xtLiveExtender) {
	t.Helper()
	env := testenv.Start(t)
	x := xtStartLiveExtender(t, env.Client, false)
	env.StartScheduler(t, xtSchedulerConfig(x.http.URL))
	return env, x
}

// xtCreateNode creates the node and sets its status (create drops it).
func xtCreateNode(t testing.TB, c kubernetes.Interface, n *corev1.Node) {
	t.Helper()
	ctx := context.Background()
	status := n.Status
	got, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create node %s: %v", n.Name, err)
	}
	got.Status = status
	if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("node %s status: %v", n.Name, err)
	}
}

func xtCreateNamespace(t testing.TB, c kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

// xtLivePod is a pod for the real apiserver: no UID, no status.
func xtLivePod(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	p.UID = ""
	p.Status = corev1.PodStatus{}
	return p
}

// xtPredictor is an engine.Cluster built from the apiserver's objects, separate from the extender's.
func xtPredictor(t testing.TB, c kubernetes.Interface) *engine.Cluster {
	t.Helper()
	ctx := context.Background()
	cl := engine.NewCluster(engine.DefaultConfig())
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes.Items {
		cl.SetNode(&nodes.Items[i])
	}
	pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		cl.SetPod(&pods.Items[i])
	}
	quotas, err := c.CoreV1().ResourceQuotas("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range quotas.Items {
		cl.SetQuota(&quotas.Items[i])
	}
	return cl
}

// xtWaitBound waits until the pod has a node.
func xtWaitBound(t testing.TB, c kubernetes.Interface, ns, name string, timeout time.Duration) *corev1.Pod {
	t.Helper()
	var got *corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = p
		return p.Spec.NodeName != "", nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s not bound within %s: %v; conditions %+v; events: %s", ns, name, timeout, err, got.Status.Conditions, xtPodEvents(t, c, ns, name))
	}
	return got
}

// xtPodEvents joins the reasons and messages of the pod's events.
func xtPodEvents(t testing.TB, c kubernetes.Interface, ns, name string) string {
	evs, err := c.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return err.Error()
	}
	var parts []string
	for _, ev := range evs.Items {
		parts = append(parts, fmt.Sprintf("[%s %s/%s: %s]", ev.Type, ev.Source.Component+ev.ReportingController, ev.Reason, ev.Message))
	}
	return strings.Join(parts, " ")
}

// xtWaitEvent waits for an event of the pod with the reason whose message contains every want.
func xtWaitEvent(t testing.TB, c kubernetes.Interface, ns, name, reason string, want []string, timeout time.Duration) corev1.Event {
	t.Helper()
	var found corev1.Event
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		evs, err := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.Reason != reason {
				continue
			}
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(ev.Message, w)
			}
			if ok {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s: no %s event containing %q within %s; events: %s", ns, name, reason, want, timeout, xtPodEvents(t, c, ns, name))
	}
	return found
}

// xtCheckHAMiAnnotations checks what bind writes on a bound pod.
func xtCheckHAMiAnnotations(t testing.TB, p *corev1.Pod) {
	t.Helper()
	a := p.Annotations
	if a[codec.PodNodeAnnotation] != p.Spec.NodeName || p.Labels[codec.PodNodeAnnotation] != p.Spec.NodeName {
		t.Errorf("pod %s on %s: %s annotation %q, label %q", p.Name, p.Spec.NodeName, codec.PodNodeAnnotation, a[codec.PodNodeAnnotation], p.Labels[codec.PodNodeAnnotation])
	}
	if a[codec.PodBindPhaseAnnotation] != "allocating" {
		t.Errorf("pod %s: bind-phase %q, want allocating", p.Name, a[codec.PodBindPhaseAnnotation])
	}
	if a[codec.PodAllocatedAnnotation] == "" || a[codec.PodToAllocateAnnotation] != a[codec.PodAllocatedAnnotation] {
		t.Errorf("pod %s: devices-to-allocate %q, devices-allocated %q", p.Name, a[codec.PodToAllocateAnnotation], a[codec.PodAllocatedAnnotation])
	}
	for _, k := range []string{codec.PodTimeAnnotation, codec.PodBindTimeAnnotation} {
		var sec int64
		if _, err := fmt.Sscan(a[k], &sec); err != nil || time.Since(time.Unix(sec, 0)) > 5*time.Minute || time.Until(time.Unix(sec, 0)) > time.Minute {
			t.Errorf("pod %s: %s = %q, want the unix time of the bind", p.Name, k, a[k])
		}
	}
}

// xtExtScore is the extender score prioritize gives (mirrors the documented mapping, 0..30 to 0..10).
func xtExtScore(policy string, s float64) int64 {
	f := min(max(s/30, 0), 1)
	if policy == engine.PolicySpread {
		f = 1 - f
	}
	return int64(f*float64(extenderv1.MaxExtenderPriority) + 0.5)
}

func TestRealSchedulerBindsWherePredicted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	began := time.Now()
	env, x := xtStartLive(t)
	c := env.Client
	ctx := context.Background()
	xtCreateNode(t, c, xtNode("node-a", xtGPUs("node-a", 2, 16384, 10)))
	xtCreateNode(t, c, xtNode("node-b", xtGPUs("node-b", 4, 24576, 10)))
	xtCreateNamespace(t, c, "team", nil)
	// A pod HAMi placed before (bound directly): node-b is not empty, so binpack prefers it.
	seed := xtLivePod(xtPlaced(xtPod("default", "seed").GPUs(1).GPUMem(24576).GPUCores(100).Obj(), "node-b", xtDev("node-b", 0, 24576, 100)))
	if _, err := c.CoreV1().Pods("default").Create(ctx, seed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool {
		n := cl.Node("node-b")
		return cl.Node("node-a") != nil && n != nil && n.GPUs[0].UsedMem == 24576
	})
	t.Logf("control plane, extender and scheduler ready in %s", time.Since(began).Round(time.Millisecond))

	two := xtPod("default", "s5-two-containers").GPUs(1).GPUMem(4000).GPUCores(10).Obj()
	two.Spec.Containers = append(two.Spec.Containers, corev1.Container{Name: "second", Image: "registry.k8s.io/pause:3.10",
		Resources: corev1.ResourceRequirements{Limits: two.Spec.Containers[0].Resources.Limits.DeepCopy()}})
	pods := []*corev1.Pod{
		xtPod("default", "s1").GPUs(1).GPUMem(8000).GPUCores(30).Obj(),
		xtWithAnnos(xtPod("default", "s2-binpack-gpus").GPUs(2).GPUMem(10000).GPUCores(20).Obj(), engine.AnnoGPUPolicy, engine.PolicyBinpack),
		xtWithAnnos(xtPod("default", "s3-spread-node").GPUs(1).GPUMem(3000).GPUCores(10).Obj(), engine.AnnoNodePolicy, engine.PolicySpread),
		xtPod("default", "s4-percent").GPUs(1).GPUMemPercent(50).GPUCores(10).Obj(),
		two,
		xtWithAnnos(xtPod("default", "s6-spread-node").GPUs(2).GPUMem(2000).GPUCores(5).Obj(), engine.AnnoNodePolicy, engine.PolicySpread),
	}
	strict := 0
	for _, p := range pods {
		pred := xtPredictor(t, c)
		v := pred.Evaluate(p, engine.EvalOptions{Now: time.Now()})
		if !v.Fits {
			t.Fatalf("test setup: %s does not fit: %s", p.Name, v.Summary)
		}
		created := time.Now()
		if _, err := c.CoreV1().Pods(p.Namespace).Create(ctx, xtLivePod(p), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got := xtWaitBound(t, c, p.Namespace, p.Name, 30*time.Second)
		xtCheckHAMiAnnotations(t, got)
		if !slices.Contains(v.Feasible(), got.Spec.NodeName) {
			t.Errorf("%s bound to %s, which the engine finds infeasible (feasible %v)", p.Name, got.Spec.NodeName, v.Feasible())
			continue
		}
		// The engine's best node must win when its extender score leads by 2 or more (kube-scheduler's own
		// score plugins move a node's total by a point or so; an extender point is worth 10).
		best := xtExtScore(v.Request.NodePolicy, v.NodeStatus(v.Placement.Node).Score)
		lead := true
		for _, n := range v.Feasible() {
			if n != v.Placement.Node && xtExtScore(v.Request.NodePolicy, v.NodeStatus(n).Score) > best-2 {
				lead = false
			}
		}
		if lead {
			strict++
			if got.Spec.NodeName != v.Placement.Node {
				t.Errorf("%s bound to %s, the engine predicts %s (%s)", p.Name, got.Spec.NodeName, v.Placement.Node, v.Summary)
			}
		}
		// The GPUs are the engine's for the node kube-scheduler chose.
		on := pred.Evaluate(p, engine.EvalOptions{Now: time.Now(), Nodes: []string{got.Spec.NodeName}})
		if want := codec.FormatPodDevices(on.Placement.PodDevices()); got.Annotations[codec.PodAllocatedAnnotation] != want {
			t.Errorf("%s on %s: devices %q, the engine predicts %q", p.Name, got.Spec.NodeName, got.Annotations[codec.PodAllocatedAnnotation], want)
		}
		t.Logf("%s -> %s %s in %s", p.Name, got.Spec.NodeName, got.Annotations[codec.PodAllocatedAnnotation], time.Since(created).Round(time.Millisecond))
	}
	if strict < 4 {
		t.Errorf("only %d pods had a unique best node; the scenario should pin most of them", strict)
	}

	// A pod that cannot fit anywhere stays Pending with HAMi's reason.
	huge := xtPod("default", "huge").GPUs(1).GPUMem(30000).GPUCores(10).Obj()
	if _, err := c.CoreV1().Pods("default").Create(ctx, xtLivePod(huge), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := xtWaitEvent(t, c, "default", "huge", extender.EventReason, []string{"0/2 nodes are available: 2 CardInsufficientMemory.", "30000 MiB"}, 20*time.Second)
	if ev.Type != corev1.EventTypeWarning {
		t.Errorf("FilteringFailed event type %s", ev.Type)
	}
	xtWaitEvent(t, c, "default", "huge", "FailedScheduling", []string{"CardInsufficientMemory"}, 20*time.Second)
	xtWaitUnschedulable(t, c, "default", "huge", "CardInsufficientMemory")

	// Namespace quota: 20000 MiB of limits.nvidia.com/gpumem in team.
	if _, err := c.CoreV1().ResourceQuotas("team").Create(ctx, xtQuota("team", "gpu-quota", "limits.nvidia.com/gpumem", "20000"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool { return cl.Quota("team").Memory != nil })
	q1 := xtPod("team", "q1").GPUs(1).GPUMem(12000).GPUCores(10).Obj()
	if _, err := c.CoreV1().Pods("team").Create(ctx, xtLivePod(q1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	xtWaitBound(t, c, "team", "q1", 30*time.Second)
	q2 := xtPod("team", "q2").GPUs(1).GPUMem(12000).GPUCores(10).Obj()
	if _, err := c.CoreV1().Pods("team").Create(ctx, xtLivePod(q2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	xtWaitEvent(t, c, "team", "q2", extender.EventReason, []string{"ResourceQuotaNotFit"}, 20*time.Second)
	xtWaitEvent(t, c, "team", "q2", "FailedScheduling", []string{"ResourceQuotaNotFit"}, 20*time.Second)
	q3 := xtPod("team", "q3").GPUs(1).GPUMem(8000).GPUCores(10).Obj() // exactly fills the quota
	if _, err := c.CoreV1().Pods("team").Create(ctx, xtLivePod(q3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	xtWaitBound(t, c, "team", "q3", 30*time.Second)
	time.Sleep(time.Second)
	teamPods, err := c.CoreV1().Pods("team").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var used int64
	for _, p := range teamPods.Items {
		if p.Spec.NodeName == "" {
			continue
		}
		devs, err := codec.ParsePodDevices(codec.PodAllocatedAnnotation, p.Annotations[codec.PodAllocatedAnnotation])
		if err != nil {
			t.Fatal(err)
		}
		for _, cd := range devs {
			for _, d := range cd {
				used += d.UsedMem
			}
		}
	}
	if used > 20000 {
		t.Errorf("team's bound pods hold %d MiB, over the 20000 MiB quota", used)
	}
	if p, _ := c.CoreV1().Pods("team").Get(ctx, "q2", metav1.GetOptions{}); p.Spec.NodeName != "" {
		t.Errorf("q2 was bound to %s over the quota", p.Spec.NodeName)
	}
	xtCheckNoLocks(t, c)
	t.Logf("done in %s", time.Since(began).Round(time.Millisecond))
}

func xtWithAnnos(p *corev1.Pod, kv ...string) *corev1.Pod {
	for i := 0; i+1 < len(kv); i += 2 {
		p.Annotations[kv[i]] = kv[i+1]
	}
	return p
}

// xtWaitSynced waits until the extender's state satisfies ok (its informers have caught up).
func xtWaitSynced(t testing.TB, x *xtLiveExtender, ok func(*engine.Cluster) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		var done bool
		x.State().Read(func(c *engine.Cluster) { done = ok(c) })
		return done, nil
	})
	if err != nil {
		t.Fatalf("the extender's state did not catch up: %v", err)
	}
}

// xtWaitUnschedulable waits for PodScheduled=False/Unschedulable whose message contains want.
func xtWaitUnschedulable(t testing.TB, c kubernetes.Interface, ns, name, want string) {
	t.Helper()
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = p
		return p.Spec.NodeName == "" && xtUnschedulable(p, want), nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s: want Pending, Unschedulable with %q; node %q, conditions %+v", ns, name, want, last.Spec.NodeName, last.Status.Conditions)
	}
}

func xtUnschedulable(p *corev1.Pod, want string) bool {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable &&
			strings.Contains(cond.Message, want) {
			return true
		}
	}
	return false
}

// xtCheckNoLocks: with ReleaseLockAfterBind, no node keeps hami.io/mutex.lock once binds are over: a shared
// lock is held LockHold after the node's last bind, so locks get a few seconds to go.
func xtCheckNoLocks(t testing.TB, c kubernetes.Interface) {
	t.Helper()
	var held []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		nodes, err := c.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		held = held[:0]
		for _, n := range nodes.Items {
			if l, ok := n.Annotations[codec.NodeLockAnnotation]; ok {
				held = append(held, fmt.Sprintf("node %s still carries %s=%s 5s after every bind finished", n.Name, codec.NodeLockAnnotation, l))
			}
		}
		if len(held) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, h := range held {
		t.Error(h)
	}
}

func TestRealWebhookSendsPodsToHAMiScheduler(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	began := time.Now()
	env, x := xtStartLive(t)
	c := env.Client
	ctx := context.Background()
	xtCreateNode(t, c, xtNode("node-w", xtGPUs("node-w", 2, 16384, 10)))
	xtCreateNamespace(t, c, "hooked", map[string]string{"hami-webhook": "on"})

	// The webhook on a loopback TLS server serving the extender's handler.
	hook := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x.mu.RLock()
		defer x.mu.RUnlock()
		x.handler.ServeHTTP(w, r)
	}))
	hook.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	hook.StartTLS()
	t.Cleanup(hook.Close)
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw})
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "hami-webhook"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "vgpu.hami.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(hook.URL + "/webhook"), CABundle: caBundle},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"hami-webhook": "on"}},
			TimeoutSeconds:          ptr.To[int32](10),
		}},
	}
	if _, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	plain := func(name string) *corev1.Pod {
		p := xtLivePod(xtPod("hooked", name).GPUs(1).Obj())
		p.Spec.SchedulerName = ""
		return p
	}
	// The apiserver picks the configuration up asynchronously: dry-run until the webhook answers.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := c.CoreV1().Pods("hooked").Create(ctx, plain("probe"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err
		}
		return p.Spec.SchedulerName == xtScheduler, nil
	})
	if err != nil {
		t.Fatalf("the webhook never mutated a dry-run pod: %v", err)
	}

	got, err := c.CoreV1().Pods("hooked").Create(ctx, plain("plain"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.SchedulerName != xtScheduler {
		t.Fatalf("schedulerName = %q, want %s", got.Spec.SchedulerName, xtScheduler)
	}
	if q := got.Spec.Containers[0].Resources.Limits["nvidia.com/gpucores"]; q.Value() != 100 {
		t.Errorf("whole-card pod: nvidia.com/gpucores = %s, want 100 added by the webhook", q.String())
	}
	bound := xtWaitBound(t, c, "hooked", "plain", 30*time.Second)
	xtCheckHAMiAnnotations(t, bound)
	if bound.Spec.NodeName != "node-w" {
		t.Errorf("bound to %s", bound.Spec.NodeName)
	}

	// Memory only: the webhook adds the GPU count.
	mem := xtLivePod(xtPod("hooked", "memonly").GPUMem(3000).GPUCores(20).Obj())
	mem.Spec.SchedulerName = ""
	got, err = c.CoreV1().Pods("hooked").Create(ctx, mem, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q := got.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]; q.Value() != 1 || got.Spec.SchedulerName != xtScheduler {
		t.Errorf("memory-only pod: nvidia.com/gpu %s, schedulerName %q", q.String(), got.Spec.SchedulerName)
	}
	xtWaitBound(t, c, "hooked", "memonly", 30*time.Second)

	// Denials reach the user with the numbers.
	bad := xtLivePod(xtPod("hooked", "pct").GPUs(1).GPUMemPercent(150).Obj())
	bad.Spec.SchedulerName = ""
	_, err = c.CoreV1().Pods("hooked").Create(ctx, bad, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "150") || !strings.Contains(err.Error(), "denied") {
		t.Errorf("percentage 150: create error %v, want the webhook's denial naming 150", err)
	}
	// A pod without GPU resources is untouched.
	cpu := xtLivePod(xtPod("hooked", "cpu").Obj())
	cpu.Spec.SchedulerName = ""
	got, err = c.CoreV1().Pods("hooked").Create(ctx, cpu, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.SchedulerName != corev1.DefaultSchedulerName {
		t.Errorf("pod without GPU resources: schedulerName %q, want default-scheduler", got.Spec.SchedulerName)
	}
	t.Logf("done in %s", time.Since(began).Round(time.Millisecond))
}
