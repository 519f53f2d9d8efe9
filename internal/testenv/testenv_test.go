package testenv_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

const gpuResource corev1.ResourceName = "nvidia.com/gpu"

func TestStartNodeWithGPUCapacity(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := t.Context()

	ns, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hami-test"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	if ns.UID == "" {
		t.Fatalf("namespace has no UID: %+v", ns)
	}

	createNode(t, env.Client, "gpu-node-1", corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("16"),
		gpuResource:        resource.MustParse("8"),
	})

	// Read it back through the kubeconfig file, to prove it works for client-go (and kubectl).
	cfg, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
	if err != nil {
		t.Fatalf("load kubeconfig: %v", err)
	}
	raw, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatalf("load kubeconfig file: %v", err)
	}
	if raw.CurrentContext != testenv.ContextName {
		t.Errorf("current context = %q, want %q", raw.CurrentContext, testenv.ContextName)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client from kubeconfig: %v", err)
	}
	got, err := kc.CoreV1().Nodes().Get(ctx, "gpu-node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node: %v", err)
	}
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"capacity", got.Status.Capacity}, {"allocatable", got.Status.Allocatable}} {
		q, ok := list.rl[gpuResource]
		if !ok || q.Value() != 8 {
			t.Errorf("status.%s[%s] = %v (present %v), want 8", list.name, gpuResource, q.String(), ok)
		}
		if cpu := list.rl[corev1.ResourceCPU]; cpu.Value() != 16 {
			t.Errorf("status.%s[cpu] = %v, want 16", list.name, cpu.String())
		}
	}

	if _, err := os.Stat(env.Dir); err != nil {
		t.Errorf("env dir: %v", err)
	}
}

const schedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: "{{KUBECONFIG}}"
profiles:
- schedulerName: test-scheduler
`

func TestSchedulerBindsPod(t *testing.T) {
	t.Parallel()
	began := time.Now()
	env := testenv.Start(t, testenv.WithScheduler(schedulerConfig))
	ctx := t.Context()
	startedIn := time.Since(began)

	createNode(t, env.Client, "node-a", corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	})

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			SchedulerName: "test-scheduler",
			Containers: []corev1.Container{{
				Name:  "c",
				Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("100m"),
					corev1.ResourceMemory: resource.MustParse("64Mi"),
				}},
			}},
		},
	}
	created := time.Now()
	if _, err := env.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	var got *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := env.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = p
		return p.Spec.NodeName != "", nil
	})
	if err != nil {
		t.Fatalf("pod not bound within 30s: %v; status: %+v", err, got.Status)
	}
	if got.Spec.NodeName != "node-a" {
		t.Fatalf("pod bound to %q, want node-a", got.Spec.NodeName)
	}
	var scheduled bool
	for _, c := range got.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			scheduled = true
		}
	}
	if !scheduled {
		t.Errorf("pod has no PodScheduled=True condition: %+v", got.Status.Conditions)
	}
	if got.Status.Phase != corev1.PodPending {
		t.Errorf("pod phase = %s, want Pending (there is no kubelet)", got.Status.Phase)
	}
	t.Logf("control plane with scheduler started in %s; pod bound %s after creation",
		startedIn.Round(time.Millisecond), time.Since(created).Round(time.Millisecond))
}

func TestMissingBinariesFailWithHint(t *testing.T) {
	t.Setenv(testenv.BinDirEnv, t.TempDir())
	if got := testenv.BinDir(); !strings.HasPrefix(got, os.Getenv(testenv.BinDirEnv)) {
		t.Fatalf("BinDir() = %q, want $%s", got, testenv.BinDirEnv)
	}
	ft := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		testenv.Start(ft)
	}()
	<-done
	if !strings.Contains(ft.msg, "make k8s-binaries") {
		t.Fatalf("Start with no binaries: fatal message %q does not mention make k8s-binaries", ft.msg)
	}
}

// fatalRecorder records the first Fatal message instead of failing the test (Start must fail, not skip).
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fatalRecorder) Fatalf(format string, args ...any) { f.Fatal(fmt.Sprintf(format, args...)) }

func (f *fatalRecorder) Skip(args ...any) {
	f.msg = "skipped: " + fmt.Sprint(args...)
	runtime.Goexit()
}

// createNode creates a schedulable Node, then sets its status (the create call drops status).
func createNode(t *testing.T, c kubernetes.Interface, name string, res corev1.ResourceList) *corev1.Node {
	t.Helper()
	ctx := t.Context()
	node, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	node.Status = corev1.NodeStatus{
		Capacity:    res,
		Allocatable: res,
		Conditions: []corev1.NodeCondition{{
			Type:               corev1.NodeReady,
			Status:             corev1.ConditionTrue,
			Reason:             "KubeletReady",
			LastHeartbeatTime:  metav1.Now(),
			LastTransitionTime: metav1.Now(),
		}},
	}
	node, err = c.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update node %s status: %v", name, err)
	}
	return node
}
