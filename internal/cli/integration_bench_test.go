package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// LiveBenchEnv turns on the benchmarks against a real apiserver, whose setup (creating thousands of
// objects through the API) takes a while.
const LiveBenchEnv = "KUBECTL_HAMI_LIVE_BENCH"

const (
	liveBenchNodes = 1000
	liveBenchPods  = 10000
	liveBenchTeams = 20
	setupWorkers   = 8
)

// BenchmarkTopLive1000Nodes measures the read commands end to end, in-process, against a real kube-apiserver
// holding 1,000 nodes with 8 registered GPUs each and 10,000 bound GPU pods with HAMi's device annotations
// (the shape of hack/genbig's snapshots): kubeconfig loading, the paginated lists, decoding, the engine and
// rendering. Setup creates the objects through the API and is logged; it runs once for both sub-benchmarks.
//
//	KUBECTL_HAMI_LIVE_BENCH=1 go test ./internal/cli -run '^$' -bench TopLive1000Nodes -benchtime 10x
func BenchmarkTopLive1000Nodes(b *testing.B) {
	if os.Getenv(LiveBenchEnv) != "1" {
		b.Skipf("set %s=1 to run the benchmarks against a real apiserver (setup creates %d nodes and %d pods)", LiveBenchEnv, liveBenchNodes, liveBenchPods)
	}
	env := testenv.Start(b)
	began := time.Now()
	populateBig(b, env.Client)
	b.Logf("setup: created %d nodes and %d pods (+%d namespaces, quotas and 1 pending pod) through the apiserver in %s",
		liveBenchNodes, liveBenchPods, liveBenchTeams, time.Since(began).Round(time.Millisecond))
	kc := env.Kubeconfig

	// One run outside the timing checks the answers.
	out, errOut, err := runB(b, "top", "--kubeconfig", kc)
	if err != nil {
		b.Fatalf("top: %v\n%s", err, errOut)
	}
	if want := fmt.Sprintf("Nodes: %d   GPUs: %d   Pods on GPUs: %d   Pending GPU pods: 1", liveBenchNodes, 8*liveBenchNodes, liveBenchPods); !strings.Contains(out, want) {
		b.Fatalf("top header lacks %q:\n%s", want, firstLine(out))
	}
	out, errOut, err = runB(b, "why-pending", "pending-big", "-n", "team-1", "--kubeconfig", kc)
	if err != nil {
		b.Fatalf("why-pending: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "CardInsufficientMemory") {
		b.Fatalf("why-pending pending-big does not say CardInsufficientMemory:\n%s", out)
	}

	b.Run("top", func(b *testing.B) {
		for b.Loop() {
			if _, errOut, err := runB(b, "top", "--kubeconfig", kc); err != nil {
				b.Fatal(err, errOut)
			}
		}
	})
	b.Run("why-pending", func(b *testing.B) {
		for b.Loop() {
			if _, errOut, err := runB(b, "why-pending", "pending-big", "-n", "team-1", "--kubeconfig", kc); err != nil {
				b.Fatal(err, errOut)
			}
		}
	})
	// The same answer from a saved snapshot of this cluster: everything but the apiserver round trips.
	saved, errOut, err := runB(b, "snapshot", "-o", "json", "--kubeconfig", kc)
	if err != nil {
		b.Fatalf("snapshot: %v\n%s", err, errOut)
	}
	path := filepath.Join(b.TempDir(), "live.json")
	if err := os.WriteFile(path, []byte(saved), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("top-saved-snapshot", func(b *testing.B) {
		for b.Loop() {
			if _, errOut, err := runB(b, "top", "--snapshot", path); err != nil {
				b.Fatal(err, errOut)
			}
		}
	})
	// Reading alone (snapshot.Live, the ~23 list calls), with client-go's default client-side rate limit
	// (5 QPS, burst 10), which is what a rest.Config from the kubeconfig gets, and without any.
	for _, c := range []struct {
		name     string
		qps      float32
		burst    int
		pageSize int64
	}{{"live-read/default-qps", 0, 0, 0}, {"live-read/unthrottled", -1, 0, 0}, {"live-read/unthrottled-page-5000", -1, 0, 5000}} {
		b.Run(c.name, func(b *testing.B) {
			rc := rest.CopyConfig(env.Config)
			rc.QPS, rc.Burst = c.qps, c.burst
			cs, err := kubernetes.NewForConfig(rc)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				s, err := snapshot.Live(context.Background(), cs, snapshot.LiveOptions{DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Server: rc.Host, PageSize: c.pageSize})
				if err != nil {
					b.Fatal(err)
				}
				if s.Pods.Len() != liveBenchPods+1 {
					b.Fatalf("read %d pods, want %d", s.Pods.Len(), liveBenchPods+1)
				}
			}
		})
	}
}

// populateBig creates the benchmark cluster with a few concurrent workers.
func populateBig(b *testing.B, cs kubernetes.Interface) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	for t := 0; t < liveBenchTeams; t++ {
		ns := fmt.Sprintf("team-%d", t)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	parallel(b, liveBenchNodes, func(i int) error {
		name := fmt.Sprintf("node-%05d", i)
		devs := make([]codec.DeviceInfo, 8)
		for g := range devs {
			devs[g] = codec.DeviceInfo{ID: fmt.Sprintf("GPU-%s-%d", name, g), Index: g, Count: 10, Devmem: 81920, Devcore: 100,
				Type: "NVIDIA A100-SXM4-80GB", Numa: g / 4, Health: true, Mode: "hami-core"}
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name},
			Annotations: map[string]string{codec.NodeRegisterAnnotation: codec.FormatNodeRegister(devs)}}}
		created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		res := corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("128"), corev1.ResourceMemory: resource.MustParse("1Ti"),
			corev1.ResourcePods: resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("80"),
		}
		created.Status.Capacity, created.Status.Allocatable = res, res
		created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		return err
	})
	// Pods are spread round-robin over the nodes, one random GPU each, as hack/genbig does.
	type podSpec struct {
		mem, cores, gpu int
	}
	rng := rand.New(rand.NewPCG(7, 11))
	specs := make([]podSpec, liveBenchPods)
	for i := range specs {
		specs[i] = podSpec{mem: 2048 + rng.IntN(6)*1024, cores: 5 + rng.IntN(5)*5, gpu: rng.IntN(8)}
	}
	parallel(b, liveBenchPods, func(i int) error {
		node := fmt.Sprintf("node-%05d", i%liveBenchNodes)
		sp := specs[i]
		devs := codec.FormatPodDevices(codec.PodDevices{{{UUID: fmt.Sprintf("GPU-%s-%d", node, sp.gpu), Type: "NVIDIA", UsedMem: int64(sp.mem), UsedCores: int64(sp.cores)}}})
		pod := gpuPod(fmt.Sprintf("team-%d", i%liveBenchTeams), fmt.Sprintf("job-%06d", i), node, 1, sp.mem, sp.cores, map[string]string{
			codec.PodNodeAnnotation: node, codec.PodAllocatedAnnotation: devs, codec.PodToAllocateAnnotation: "", codec.PodBindPhaseAnnotation: "success"})
		_, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
	pending := gpuPod("team-1", "pending-big", "", 2, 82000, 10, nil)
	if _, err := cs.CoreV1().Pods("team-1").Create(ctx, pending, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	for t := 0; t < liveBenchTeams; t++ {
		q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("team-%d", t), Name: "gpu"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
				"limits.nvidia.com/gpumem": resource.MustParse("100000000"), "limits.nvidia.com/gpucores": resource.MustParse("1000000")}}}
		if _, err := cs.CoreV1().ResourceQuotas(q.Namespace).Create(ctx, q, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func gpuPod(ns, name, node string, count, mem, cores int, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: corev1.PodSpec{
			SchedulerName: "hami-scheduler",
			NodeName:      node,
			Containers: []corev1.Container{{Name: "main", Image: "train:1", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{
					"nvidia.com/gpu":      *resource.NewQuantity(int64(count), resource.DecimalSI),
					"nvidia.com/gpumem":   *resource.NewQuantity(int64(mem), resource.DecimalSI),
					"nvidia.com/gpucores": *resource.NewQuantity(int64(cores), resource.DecimalSI),
				},
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("4Gi")},
			}}},
		},
	}
}

// parallel runs create(0..n-1) on setupWorkers goroutines and fails on the first error.
func parallel(b *testing.B, n int, create func(i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for w := 0; w < setupWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := create(i); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n)) // stop the others
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
}
