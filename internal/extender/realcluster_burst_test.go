package extender_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestRealBurstWithShippedDefaults (real apiserver and kube-scheduler): 120 GPU pods created at once on 20
// nodes where 100 fit (one 81,920 MiB GPU each, pods of 16,384 MiB), through kube-scheduler, with the
// extender's shipped API budgets (serve-extender's --kube-api-qps and --kube-api-burst defaults) and options.
// Every pod that fits binds, well within the time limit (with client-go's default 5 requests/s the same burst
// bound 7 pods in 480 s); the rest stay Pending with HAMi's reason; no GPU is over its capacity and no lock
// stays. The throughput is logged (docs/benchmarks.md), not asserted.
func TestRealBurstWithShippedDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	const (
		nodes, fits, total = 20, 100, 120
		gpuMem, podMem     = 81920, 16384
		limit              = 60 * time.Second
	)
	began := time.Now()
	env := testenv.Start(t)
	clients, err := extender.NewClients(env.Config, extender.DefaultKubeAPIQPS, extender.DefaultKubeAPIBurst)
	if err != nil {
		t.Fatal(err)
	}
	opts := extender.DefaultOptions()
	opts.ReleaseLockAfterBind = true // no HAMi device plugin consumes the lock here
	opts.EventClient = clients.Events
	x := xtStartLiveExtenderWith(t, clients.Bind, opts, false)
	env.StartScheduler(t, xtSchedulerConfig(x.http.URL))
	c := env.Client
	for i := range nodes {
		name := fmt.Sprintf("burst-%02d", i)
		xtCreateNode(t, c, xtNode(name, xtGPUs(name, 1, gpuMem, 10)))
	}
	xtCreateNamespace(t, c, "burst", nil)
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool { return len(cl.NodeNames()) == nodes })
	t.Logf("ready in %s", time.Since(began).Round(time.Millisecond))

	ctx := context.Background()
	boundAt := xtWatchBound(t, c, "burst")
	created := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range total {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := c.CoreV1().Pods("burst").Create(ctx, xtLivePod(xtPod("burst", fmt.Sprintf("b-%03d", i)).GPUs(1).GPUMem(podMem).GPUCores(10).Obj()), metav1.CreateOptions{}); err != nil {
				t.Errorf("create: %v", err)
			}
		}()
	}
	wg.Wait()
	createdIn := time.Since(created)
	var bound, pendingWithReason int
	var allBound time.Duration
	for deadline := created.Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		l, err := c.CoreV1().Pods("burst").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		bound, pendingWithReason = 0, 0
		for i := range l.Items {
			if l.Items[i].Spec.NodeName != "" {
				bound++
			} else if xtUnschedulable(&l.Items[i], "CardInsufficientMemory") {
				pendingWithReason++
			}
		}
		if bound >= fits && allBound == 0 {
			allBound = time.Since(created)
		}
		if bound >= fits && pendingWithReason == total-fits {
			break
		}
	}
	if allBound == 0 {
		t.Fatalf("%d of %d pods that fit bound within %s", bound, fits, limit)
	}
	use, b, pending := xtSumAllocations(t, c, "burst")
	xtCheckNoOverbooking(t, use)
	if len(b) != fits || len(pending) != total-fits {
		t.Errorf("%d bound and %d pending, want %d and %d", len(b), len(pending), fits, total-fits)
	}
	if pendingWithReason != total-fits {
		t.Errorf("%d pending pods say CardInsufficientMemory, want %d", pendingWithReason, total-fits)
	}
	xtCheckNoLocks(t, c)
	for _, p := range b {
		if p.Status.Phase == corev1.PodFailed {
			t.Errorf("pod %s failed", p.Name)
		}
	}
	t.Logf("extender verbs: %s", xtVerbLatencies(t, x.http.URL))
	t.Logf("%d pods created in %s; the %d that fit bound %s after the first create: %.0f pods/s; total %s",
		total, createdIn.Round(time.Millisecond), fits, allBound.Round(time.Millisecond), float64(fits)/allBound.Seconds(), time.Since(began).Round(time.Millisecond))
	if times := boundAt(); len(times) >= fits {
		first, last, p90 := times[0].Sub(created), times[fits-1].Sub(created), times[fits*9/10-1].Sub(created)
		t.Logf("binds seen by a watch: first %s, 90%% by %s, last %s after the first create; %.0f pods/s from first to last bind",
			first.Round(time.Millisecond), p90.Round(time.Millisecond), last.Round(time.Millisecond), float64(fits-1)/(last-first).Seconds())
	} else {
		t.Logf("the watch saw %d of the %d binds (it may have been cut off)", len(times), fits)
	}
}

// xtWatchBound watches the namespace's pods from now on; the function it returns gives, sorted, the time each
// pod was first seen bound.
func xtWatchBound(t testing.TB, c kubernetes.Interface, ns string) func() []time.Time {
	t.Helper()
	w, err := c.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	seen := map[string]time.Time{}
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && p.Spec.NodeName != "" {
				mu.Lock()
				if _, dup := seen[p.Name]; !dup {
					seen[p.Name] = time.Now()
				}
				mu.Unlock()
			}
		}
	}()
	return func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		out := make([]time.Time, 0, len(seen))
		for _, at := range seen {
			out = append(out, at)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
		return out
	}
}

// xtVerbLatencies reads the extender's /metrics: count and mean latency per verb, and the bind results.
func xtVerbLatencies(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	sums, counts := map[string]float64{}, map[string]float64{}
	var binds []string
	for _, line := range strings.Split(string(b), "\n") {
		var verb string
		var v float64
		switch {
		case strings.HasPrefix(line, "kubectl_hami_extender_request_duration_seconds_sum{verb="):
			if _, err := fmt.Sscanf(strings.TrimPrefix(line, "kubectl_hami_extender_request_duration_seconds_sum{verb="), "%q} %g", &verb, &v); err == nil {
				sums[verb] = v
			}
		case strings.HasPrefix(line, "kubectl_hami_extender_request_duration_seconds_count{verb="):
			if _, err := fmt.Sscanf(strings.TrimPrefix(line, "kubectl_hami_extender_request_duration_seconds_count{verb="), "%q} %g", &verb, &v); err == nil {
				counts[verb] = v
			}
		case strings.HasPrefix(line, "kubectl_hami_extender_binds_total{"):
			binds = append(binds, strings.TrimPrefix(line, "kubectl_hami_extender_binds_total"))
		}
	}
	var out []string
	for _, verb := range []string{"filter", "prioritize", "bind"} {
		if counts[verb] > 0 {
			out = append(out, fmt.Sprintf("%s %.0f x %.1f ms", verb, counts[verb], 1000*sums[verb]/counts[verb]))
		}
	}
	return strings.Join(append(out, binds...), ", ")
}
