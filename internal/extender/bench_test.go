package extender_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
)

// xtBenchState is 5,000 nodes of 8 GPUs (80 GiB, 10 slots) holding 100,000 placed pods (20 per node,
// 2,000 to 9,000 MiB and 5 to 40 % cores each), loaded straight into the State.
func xtBenchState(b *testing.B, nodes, podsPerNode int) (*extender.State, []string) {
	b.Helper()
	s := extender.NewState(engine.DefaultConfig())
	now := time.Now()
	names := make([]string, nodes)
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		names[i] = name
		s.SetNode(xtNode(name, xtGPUs(name, 8, 81920, 10)))
		for j := range podsPerNode {
			k := i*podsPerNode + j
			mem, cores := int64(2000+(k*7919)%7001), int64(5+(k*31)%36)
			p := xtPod(fmt.Sprintf("ns-%d", k%50), fmt.Sprintf("pod-%07d", k)).GPUs(1).GPUMem(mem).GPUCores(cores).Obj()
			s.SetPod(xtPlaced(p, name, xtDev(name, (k*5)%8, mem, cores)), now)
		}
	}
	s.SetSynced()
	return s, names
}

func xtPercentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func xtMillis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkFilterPrioritizeHTTP5000Nodes: one pending pod, filter then prioritize over loopback HTTP,
// kube-scheduler's nodeCacheCapable calls with every node's name (prioritize gets the nodes filter kept).
// Reports p50/p99 of the pair and p99 of each verb. Target (issue 5): p99 under 10 ms.
func BenchmarkFilterPrioritizeHTTP5000Nodes(b *testing.B) {
	const nodes, podsPerNode = 5000, 20
	began := time.Now()
	state, names := xtBenchState(b, nodes, podsPerNode)
	b.Logf("state: %d nodes x 8 GPUs, %d pods, built in %s", nodes, nodes*podsPerNode, time.Since(began).Round(time.Millisecond))
	srv := extender.NewServer(state, nil, extender.Options{}, nil, time.Now)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	pod := xtPod("bench", "pending").GPUs(1).GPUMem(8000).GPUCores(30).Obj()
	filterBody, _ := json.Marshal(extenderv1.ExtenderArgs{Pod: pod, NodeNames: &names})
	post := func(path string, body []byte, out any) {
		resp, err := client.Post(hs.URL+path, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			msg, _ := io.ReadAll(resp.Body)
			b.Fatalf("POST %s: %d %s", path, resp.StatusCode, msg)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC() // the setup's garbage is not the requests' cost
	var pairs, filters, prios []time.Duration
	var kept int
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		var fr extenderv1.ExtenderFilterResult
		post("/filter", filterBody, &fr)
		if fr.NodeNames == nil || len(*fr.NodeNames) == 0 {
			b.Fatalf("no node passes the filter: %+v", fr.FailedNodes)
		}
		kept = len(*fr.NodeNames)
		t1 := time.Now()
		prioBody, _ := json.Marshal(extenderv1.ExtenderArgs{Pod: pod, NodeNames: fr.NodeNames})
		var pr extenderv1.HostPriorityList
		post("/prioritize", prioBody, &pr)
		if len(pr) != kept {
			b.Fatalf("prioritize answered %d hosts for %d", len(pr), kept)
		}
		t2 := time.Now()
		pairs, filters, prios = append(pairs, t2.Sub(t0)), append(filters, t1.Sub(t0)), append(prios, t2.Sub(t1))
	}
	b.ReportMetric(xtMillis(xtPercentile(pairs, 0.50)), "p50-ms")
	b.ReportMetric(xtMillis(xtPercentile(pairs, 0.99)), "p99-ms")
	b.ReportMetric(xtMillis(xtPercentile(filters, 0.99)), "filter-p99-ms")
	b.ReportMetric(xtMillis(xtPercentile(prios, 0.99)), "prioritize-p99-ms")
	b.Logf("%d iterations, %d of %d nodes feasible; filter+prioritize p50 %.2f ms, p99 %.2f ms (filter p50 %.2f, prioritize p50 %.2f)",
		len(pairs), kept, nodes, xtMillis(xtPercentile(pairs, 0.5)), xtMillis(xtPercentile(pairs, 0.99)), xtMillis(xtPercentile(filters, 0.5)), xtMillis(xtPercentile(prios, 0.5)))
}

// BenchmarkSchedulingThroughputRealScheduler: 1,000 pods created at once on 200 nodes (8 GPUs each) through
// the real kube-scheduler and the in-process extender; reports pods bound per second (creation of the
// first pod to the last bind). Target (issue 5): at least 100 pods/s. Opt in with KUBECTL_HAMI_LIVE_BENCH=1;
// run with -benchtime=1x.
func BenchmarkSchedulingThroughputRealScheduler(b *testing.B) {
	if os.Getenv("KUBECTL_HAMI_LIVE_BENCH") != "1" {
		b.Skip("set KUBECTL_HAMI_LIVE_BENCH=1 to run against a real control plane")
	}
	const nodes, pods = 200, 1000
	env, x := xtStartLive(b)
	c := env.Client
	for i := range nodes {
		name := fmt.Sprintf("bench-%03d", i)
		xtCreateNode(b, c, xtNode(name, xtGPUs(name, 8, 81920, 10)))
	}
	xtWaitSynced(b, x, func(cl *engine.Cluster) bool { return len(cl.NodeNames()) == nodes })
	// The ceiling on this machine: the same creates for pods no scheduler serves.
	b.Run("create-only", func(b *testing.B) {
		round := 0
		for b.Loop() {
			round++
			ns := fmt.Sprintf("create-only-%d", round)
			xtCreateNamespace(b, c, ns, nil)
			start := time.Now()
			xtCreatePods(b, c, ns, pods, func(p *corev1.Pod) { p.Spec.SchedulerName = "nobody" })
			rate := float64(pods) / time.Since(start).Seconds()
			b.ReportMetric(rate, "creates/s")
			b.Logf("%d pods created in %s: %.1f creates/s", pods, time.Since(start).Round(time.Millisecond), rate)
		}
	})
	for _, policy := range []string{engine.PolicyBinpack, engine.PolicySpread} {
		b.Run("node-policy="+policy, func(b *testing.B) {
			round := 0
			for b.Loop() {
				round++
				ns := fmt.Sprintf("%s-%d", policy, round)
				xtCreateNamespace(b, c, ns, nil)
				ctx := context.Background()
				start := time.Now()
				xtCreatePods(b, c, ns, pods, func(p *corev1.Pod) { p.Annotations[engine.AnnoNodePolicy] = policy })
				created := time.Since(start)
				bound, last := 0, time.Duration(0)
				deadline := start.Add(5 * time.Minute)
				for time.Now().Before(deadline) {
					l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for _, p := range l.Items {
						if p.Spec.NodeName != "" {
							n++
						}
					}
					if n > bound {
						bound, last = n, time.Since(start)
					}
					if bound == pods {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
				if bound < pods {
					b.Errorf("only %d of %d pods bound after 5 minutes", bound, pods)
				}
				use, _, _ := xtSumAllocations(b, c, "") // every namespace: earlier rounds share the GPUs
				xtCheckNoOverbooking(b, use)
				rate := float64(bound) / last.Seconds()
				b.ReportMetric(rate, "pods/s")
				b.ReportMetric(last.Seconds(), "s-to-last-bind")
				b.Logf("%s: %d pods created in %s, %d bound, the last %s after the first create: %.1f pods/s",
					policy, pods, created.Round(time.Millisecond), bound, last.Round(time.Millisecond), rate)
			}
		})
	}
}

// xtCreatePods creates n one-share pods in ns, 64 at a time.
func xtCreatePods(b testing.TB, c kubernetes.Interface, ns string, n int, edit func(*corev1.Pod)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range n {
		p := xtLivePod(xtPod(ns, fmt.Sprintf("p-%04d", i)).GPUs(1).GPUMem(4000).GPUCores(10).Obj())
		edit(p)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := c.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
}
