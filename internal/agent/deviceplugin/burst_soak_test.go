package deviceplugin_test

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestSoakBurstThroughAgentPlugins (KUBECTL_HAMI_SOAK=1): 200 one-GPU pods of 10,240 MiB (160 fit) through the
// real kube-scheduler and the extender with the shipped options, onto 20 nodes each served by the agent with its
// device plugin and a fake kubelet. Each node's "kubelet" admits the pods bound to it one at a time, in the order
// its watch of the node's pods delivers them (as kubelet does), and calls Allocate with the GPU count only. Every
// pod has the same count, so the plugin tells them apart by that order alone: each Allocate must answer with the
// GPU and memory limit the extender recorded for THAT pod. The bind rate from first to last bind is logged.
func TestSoakBurstThroughAgentPlugins(t *testing.T) {
	if os.Getenv("KUBECTL_HAMI_SOAK") == "" {
		t.Skip("soak: set KUBECTL_HAMI_SOAK=1")
	}
	const nodes, total, fits = 20, 200, 160
	env := testenv.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	state := extender.NewState(engine.DefaultConfig())
	srv := extender.NewServer(state, env.Client, extender.DefaultOptions(), nil, time.Now)
	f, err := extender.StartInformers(ctx, env.Client, state, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); f.Shutdown() }()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	env.StartScheduler(t, fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: "%s"
  qps: 1000
  burst: 2000
percentageOfNodesToScore: 100
profiles:
- schedulerName: hami-scheduler
extenders:
- urlPrefix: "%s"
  filterVerb: filter
  prioritizeVerb: prioritize
  bindVerb: bind
  weight: 1
  nodeCacheCapable: true
  httpTimeout: 30s
  managedResources:
  - name: nvidia.com/gpu
    ignoredByScheduler: true
  - name: nvidia.com/gpumem
    ignoredByScheduler: true
  - name: nvidia.com/gpucores
    ignoredByScheduler: true
`, testenv.KubeconfigPlaceholder, hs.URL))

	var mu sync.Mutex
	var mismatches []string
	allocated := 0
	var bmu sync.Mutex
	boundAt := map[string]time.Time{} // when a node's kubelet first saw the pod bound to it
	chains := make([]*chain, nodes)
	for i := range nodes {
		c := startChain(t, env, fmt.Sprintf("burst-%02d", i), chainConfig{gpus: 1, memMiB: 81920, split: 10, memoryScaling: 1})
		chains[i] = c
		// kube-scheduler's own filters need room for pods (retried: the fake kubelet writes the status too).
		for try := 0; ; try++ {
			n := agenttest.GetNode(t, env, c.node)
			if n.Status.Capacity == nil {
				n.Status.Capacity, n.Status.Allocatable = corev1.ResourceList{}, corev1.ResourceList{}
			}
			for k, v := range map[corev1.ResourceName]string{corev1.ResourcePods: "110", corev1.ResourceCPU: "64", corev1.ResourceMemory: "256Gi"} {
				n.Status.Capacity[k], n.Status.Allocatable[k] = resource.MustParse(v), resource.MustParse(v)
			}
			_, err := env.Client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
			if err == nil {
				break
			}
			if !apierrors.IsConflict(err) || try > 10 {
				t.Fatal(err)
			}
		}
		// The node's kubelet: admits its pods one at a time in the order its watch delivers them.
		w, err := env.Client.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + c.node})
		if err != nil {
			t.Fatal(err)
		}
		admit := make(chan *corev1.Pod, total)
		go func() {
			seen := map[string]bool{}
			for ev := range w.ResultChan() {
				p, ok := ev.Object.(*corev1.Pod)
				if !ok || seen[p.Name] {
					continue
				}
				seen[p.Name] = true
				bmu.Lock()
				boundAt[p.Name] = time.Now()
				bmu.Unlock()
				admit <- p
			}
		}()
		go func() {
			for p := range admit {
				entries, err := codec.ParsePodDevices(codec.PodAllocatedAnnotation, p.Annotations[codec.PodAllocatedAnnotation])
				if err != nil || len(entries) != 1 {
					mu.Lock()
					mismatches = append(mismatches, fmt.Sprintf("%s: allocated %q", p.Name, p.Annotations[codec.PodAllocatedAnnotation]))
					mu.Unlock()
					continue
				}
				resp, err := c.kubelet.allocate(len(entries[0]))
				mu.Lock()
				if err != nil {
					mismatches = append(mismatches, fmt.Sprintf("%s on %s: %v", p.Name, c.node, err))
				} else if env := maps.Clone(resp.Envs); true {
					delete(env, "CUDA_DEVICE_MEMORY_SHARED_CACHE")
					if want := wantEnv(entries[0], false); !maps.Equal(env, want) {
						mismatches = append(mismatches, fmt.Sprintf("%s on %s: got %v, want its own %v", p.Name, c.node, env, want))
					}
					allocated++
				}
				mu.Unlock()
			}
		}()
	}
	for _, c := range chains {
		waitFor(t, 30*time.Second, "the extender to see "+c.node, func() bool {
			ok := false
			state.Read(func(cl *engine.Cluster) {
				n := cl.Node(c.node)
				ok = n != nil && n.Registered && n.AllocatableGPUs > 0 && state.LockFree(c.node)
			})
			return ok
		})
	}

	created := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range total {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: fmt.Sprintf("b-%03d", i)},
				Spec: corev1.PodSpec{SchedulerName: "hami-scheduler", Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"),
						"nvidia.com/gpumem": resource.MustParse("10240"), "nvidia.com/gpucores": resource.MustParse("10")}}}}}}
			if _, err := env.Client.CoreV1().Pods(testNamespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Errorf("create: %v", err)
			}
		})
	}
	wg.Wait()
	waitFor(t, 3*time.Minute, "every pod that fits to be bound and allocated", func() bool {
		bmu.Lock()
		b := len(boundAt)
		bmu.Unlock()
		mu.Lock()
		defer mu.Unlock()
		return b >= fits && allocated+len(mismatches) >= fits
	})
	bmu.Lock()
	times := slices.SortedFunc(maps.Values(boundAt), time.Time.Compare)
	bmu.Unlock()
	first, last := times[0], times[fits-1]
	t.Logf("%d of %d pods bound, first %s and last %s after the first create: %.1f pods/s from first to last bind; %d allocated, %d wrong",
		len(times), total, first.Sub(created).Round(time.Millisecond), last.Sub(created).Round(time.Millisecond),
		float64(fits-1)/last.Sub(first).Seconds(), allocated, len(mismatches))
	for _, m := range mismatches {
		t.Error(m)
	}
	l, err := env.Client.CoreV1().Pods(testNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	perGPU := map[string]int64{}
	for _, p := range l.Items {
		if p.Spec.NodeName == "" {
			continue
		}
		if ph := p.Annotations[codec.PodBindPhaseAnnotation]; ph != codec.BindPhaseSuccess {
			t.Errorf("%s: bind-phase %q", p.Name, ph)
		}
		pd, _ := codec.ParsePodDevices(codec.PodAllocatedAnnotation, p.Annotations[codec.PodAllocatedAnnotation])
		for _, cd := range pd {
			for _, d := range cd {
				perGPU[d.UUID] += d.UsedMem
			}
		}
	}
	for uuid, mem := range perGPU {
		if mem > 81920 {
			t.Errorf("GPU %s holds %d MiB of 81,920", uuid, mem)
		}
	}
}
