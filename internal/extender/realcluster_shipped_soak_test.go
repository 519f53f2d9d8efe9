package extender_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// The shipped-configuration soak (make soak-extender): serve-extender with the Deployment's flags (no
// --release-node-lock, --leader-elect on a Lease), behind a real kube-scheduler, on 20 nodes whose device plugin
// is a stand-in that performs the plugin's side of the annotation protocol 250 ms after each bind: it consumes
// hami.io/vgpu-devices-to-allocate, writes bind-phase success and releases the node lock when the pod holds
// it, as HAMi's device plugin and the agent's do. Nodes either carry the agent's registration
// (hami.io/node-nvidia-allocator: the agent is their device plugin) or not (HAMi's device plugin).

// xtEachPod calls f with every pod of ns as a list and then a watch deliver it, watching again whenever the
// watch ends, until ctx ends.
func xtEachPod(ctx context.Context, c kubernetes.Interface, ns string, f func(*corev1.Pod)) {
	for ctx.Err() == nil {
		l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for i := range l.Items {
			f(&l.Items[i])
		}
		w, err := c.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
		if err != nil {
			continue
		}
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				f(p)
			}
		}
		w.Stop()
	}
}

// xtStandInPlugin plays every node's device plugin for the pods of ns until the test ends.
func xtStandInPlugin(t *testing.T, c kubernetes.Interface, ns string, delay time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var mu sync.Mutex
	handled := map[types.UID]bool{}
	go xtEachPod(ctx, c, ns, func(p *corev1.Pod) {
		if p.Spec.NodeName == "" || p.Annotations[codec.PodBindPhaseAnnotation] != codec.BindPhaseAllocating {
			return
		}
		mu.Lock()
		seen := handled[p.UID]
		handled[p.UID] = true
		mu.Unlock()
		if !seen {
			go xtStandInAllocate(ctx, c, p.DeepCopy(), delay)
		}
	})
}

// xtBindTimes records, from now on, when each pod of ns is first seen bound; the function it returns gives the
// times, sorted.
func xtBindTimes(t *testing.T, c kubernetes.Interface, ns string) func() []time.Time {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var mu sync.Mutex
	seen := map[string]time.Time{}
	go xtEachPod(ctx, c, ns, func(p *corev1.Pod) {
		if p.Spec.NodeName == "" {
			return
		}
		mu.Lock()
		if _, dup := seen[p.Name]; !dup {
			seen[p.Name] = time.Now()
		}
		mu.Unlock()
	})
	return func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		out := make([]time.Time, 0, len(seen))
		for _, at := range seen {
			out = append(out, at)
		}
		slices.SortFunc(out, time.Time.Compare)
		return out
	}
}

// xtStandInAllocate is one pod's allocation: its entries consumed, bind-phase success, its node lock released.
func xtStandInAllocate(ctx context.Context, c kubernetes.Interface, p *corev1.Pod, delay time.Duration) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(delay):
	}
	pd, _ := codec.ParsePodDevices(codec.PodToAllocateAnnotation, p.Annotations[codec.PodToAllocateAnnotation])
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		codec.PodToAllocateAnnotation: codec.FormatPodDevices(make(codec.PodDevices, len(pd))),
		codec.PodBindPhaseAnnotation:  codec.BindPhaseSuccess}}})
	if _, err := c.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return
	}
	for range 10 {
		n, err := c.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			return
		}
		l, err := codec.ParseNodeLock(n.Annotations[codec.NodeLockAnnotation])
		if err != nil || l.Namespace != p.Namespace || l.Pod != p.Name {
			return
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": n.ResourceVersion,
			"annotations": map[string]any{codec.NodeLockAnnotation: nil}}})
		if _, err = c.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{}); !apierrors.IsConflict(err) {
			return
		}
	}
}

// xtShippedSetup starts a control plane, serve-extender with the Deployment's flags, kube-scheduler, the
// stand-in device plugin and 20 nodes of one 81,920 MiB GPU, registered by the agent's device plugin or not.
func xtShippedSetup(t *testing.T, agentNodes bool) (*testenv.Env, *xtSoakExtender) {
	t.Helper()
	bin := xtSoakBinary(t)
	env := testenv.Start(t)
	x := &xtSoakExtender{t: t, bin: bin, kcfg: env.Kubeconfig, addr: xtFreeAddr(t), logs: filepath.Join(env.Dir, "serve-extender"),
		shipped: true, args: []string{"--leader-elect", "--leader-elect-lease", "default/kubectl-hami-extender"}}
	x.start()
	t.Cleanup(x.kill)
	env.StartScheduler(t, xtSchedulerConfig("http://"+x.addr))
	for i := range 20 {
		name := fmt.Sprintf("soak-%02d", i)
		n := xtNode(name, xtGPUs(name, 1, 81920, 10))
		if agentNodes {
			n.Annotations[codec.NodeAllocatorAnnotation] = codec.AllocatorKubectlHAMi
		}
		xtCreateNode(t, env.Client, n)
	}
	xtCreateNamespace(t, env.Client, "soak", nil)
	xtStandInPlugin(t, env.Client, "soak", 250*time.Millisecond)
	time.Sleep(time.Second) // the extender's informers see the nodes
	return env, x
}

// xtShippedBurst creates 200 pods of 10,240 MiB (160 fit) and runs fault (if any) once 40 are bound; it waits
// until every pod that fits is bound and returns the times the watch saw each bind.
func xtShippedBurst(t *testing.T, c kubernetes.Interface, fault func()) (created time.Time, binds []time.Time, faultAt time.Time) {
	t.Helper()
	const total, fits = 200, 160
	ctx := context.Background()
	boundAt := xtBindTimes(t, c, "soak")
	created = time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range total {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := c.CoreV1().Pods("soak").Create(ctx, xtLivePod(xtPod("soak", fmt.Sprintf("s-%03d", i)).GPUs(1).GPUMem(10240).GPUCores(10).Obj()), metav1.CreateOptions{}); err != nil {
				t.Errorf("create: %v", err)
			}
		})
	}
	for deadline := created.Add(4 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		n := len(boundAt())
		if fault != nil && faultAt.IsZero() && n >= 40 {
			faultAt = time.Now()
			fault()
		}
		if n >= fits {
			break
		}
	}
	wg.Wait()
	binds = boundAt()
	use, b, pending := xtSumAllocations(t, c, "soak")
	xtCheckNoOverbooking(t, use)
	if len(b) != fits || len(pending) != total-fits {
		t.Errorf("%d bound (want %d), %d pending (want %d)", len(b), fits, len(pending), total-fits)
	}
	xtCheckNoLocks(t, c)
	return created, binds, faultAt
}

// TestSoakShippedBurst: 200 pods (160 fit) with the shipped flags. On nodes whose agent is the device plugin,
// binds run at kube-scheduler's speed (no node lock); on nodes of HAMi's device plugin, one pod per node per
// allocation (HAMi's lock, kept exactly). The rates are logged for docs/benchmarks.md.
func TestSoakShippedBurst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		agent bool
	}{{"agent device plugin", true}, {"HAMi device plugin", false}} {
		t.Run(tc.name, func(t *testing.T) {
			env, x := xtShippedSetup(t, tc.agent)
			created, binds, _ := xtShippedBurst(t, env.Client, nil)
			if len(binds) < 160 {
				t.Fatalf("%d of 160 pods bound", len(binds))
			}
			first, last := binds[0], binds[159]
			rate := 159 / last.Sub(first).Seconds()
			t.Logf("%s: 160 of 200 pods bound, first %s and last %s after the first create: %.1f pods/s from first to last bind",
				tc.name, first.Sub(created).Round(time.Millisecond), last.Sub(created).Round(time.Millisecond), rate)
			t.Logf("extender verbs: %s", xtVerbLatencies(t, "http://"+x.addr))
			if tc.agent && rate < 100 {
				t.Errorf("%.1f pods/s on nodes of the agent's device plugin, want at least 100", rate)
			}
		})
	}
}

// TestSoakShippedLeaderKilled: the shipped flags (--leader-elect on a Lease of the Deployment's settings); the
// leader gets SIGKILL mid-burst (its Lease is not released) and a replacement with a new identity starts at
// once, as the Deployment's Recreate does (kube-scheduler keeps running here). Binds resume within the Lease
// duration plus 5 s.
func TestSoakShippedLeaderKilled(t *testing.T) {
	env, x := xtShippedSetup(t, true)
	x.noWait = true
	_, binds, killed := xtShippedBurst(t, env.Client, func() {
		x.kill()
		x.start() // a new process: a new identity (host-pid)
	})
	var resumed time.Time
	for _, b := range binds {
		if b.After(killed.Add(time.Second)) { // a Binding sent before the kill may land just after it
			resumed = b
			break
		}
	}
	if resumed.IsZero() {
		t.Fatal("no bind after the kill")
	}
	took := resumed.Sub(killed)
	t.Logf("leader killed with %d binds seen; binds resumed %s after the kill; every pod that fits bound %s after it",
		xtCountBefore(binds, killed), took.Round(time.Millisecond), binds[len(binds)-1].Sub(killed).Round(time.Millisecond))
	if limit := extender.LeaseDuration + 5*time.Second; took > limit {
		t.Errorf("binds resumed %s after the kill, want within %s (the Lease duration plus 5 s)", took.Round(time.Millisecond), limit)
	}
}

func xtCountBefore(times []time.Time, at time.Time) int {
	n := 0
	for _, t := range times {
		if t.Before(at) {
			n++
		}
	}
	return n
}
