package deviceplugin

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// twoGPUs is a Source of two 80 GiB GPUs.
type twoGPUs struct{}

func (twoGPUs) Devices() []codec.DeviceInfo {
	return []codec.DeviceInfo{{ID: "GPU-a", Count: 10, Devmem: 81920, Devcore: 100, Type: "NVIDIA", Health: true},
		{ID: "GPU-b", Index: 1, Count: 10, Devmem: 81920, Devcore: 100, Type: "NVIDIA", Health: true}}
}
func (twoGPUs) Subscribe() <-chan []codec.DeviceInfo { return nil }
func (twoGPUs) MemoryScaling() float64               { return 1 }

// allocatingPod is a pod bound to node n1 by the extender (no node lock: the node's agent is the device plugin)
// whose one container waits for the GPUs of entry, bound at bindTime.
func allocatingPod(name, entry string, gpus int, bindTime int64) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Annotations: map[string]string{
			codec.PodNodeAnnotation: "n1", codec.PodBindPhaseAnnotation: codec.BindPhaseAllocating,
			codec.PodBindTimeAnnotation: strconv.FormatInt(bindTime, 10), codec.PodToAllocateAnnotation: entry,
			codec.PodAllocatedAnnotation: entry,
		}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(strconv.Itoa(gpus))}}}}},
	}
}

// TestPendingPodsAllocatingAtOnce: three pods bound to one node at once (no node lock) wait for their GPUs.
// Kubelet admits them one at a time in the order it sees them bound, and each Allocate carries only a device
// count: the plugin gives each container the entry the extender wrote for THAT pod, by the count first (a
// two-GPU request is the two-GPU pod's even when it came later) and, between pods of the same count, by the
// order its own watch saw them bound (not hami.io/bind-time, which says the opposite here).
func TestPendingPodsAllocatingAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1",
		Annotations: map[string]string{codec.NodeAllocatorAnnotation: codec.AllocatorKubectlHAMi}}})
	opts := DefaultOptions()
	opts.NodeName, opts.HamiCoreDir = "n1", t.TempDir()
	p, err := New(twoGPUs{}, client, opts)
	if err != nil {
		t.Fatal(err)
	}
	go p.watchArrivals(ctx)
	eventually(t, 5*time.Second, "the watch to start", func() bool {
		_, _ = client.CoreV1().Pods("ns").Create(ctx, allocatingPod("probe", ";", 0, 0), metav1.CreateOptions{})
		return p.arrivals.seq("uid-probe") != ^uint64(0)
	})
	now := time.Now().Unix()
	pods := []*corev1.Pod{ // in the order they are bound, the order kubelet admits them
		allocatingPod("first", "GPU-a,NVIDIA,1000,10:;", 1, now),
		allocatingPod("pair", "GPU-a,NVIDIA,2000,20:GPU-b,NVIDIA,2000,20:;", 2, now-5),
		allocatingPod("second", "GPU-b,NVIDIA,3000,30:;", 1, now-10),
	}
	for _, pod := range pods {
		if _, err := client.CoreV1().Pods("ns").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 5*time.Second, "the watch to see the pods", func() bool { return p.arrivals.seq("uid-second") != ^uint64(0) })

	// Kubelet admits "first", then "pair", then "second"; "second" has waited longest by its bind-time.
	for _, want := range []struct {
		pod, gpus, mem string
		count          int
	}{{"first", "GPU-a", "1000m", 1}, {"pair", "GPU-a,GPU-b", "2000m", 2}, {"second", "GPU-b", "3000m", 1}} {
		ids := make([]string, want.count)
		resp, err := p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: ids}}})
		if err != nil {
			t.Fatalf("allocate for %s: %v", want.pod, err)
		}
		env := resp.ContainerResponses[0].Envs
		if env[EnvVisibleDevices] != want.gpus || env["CUDA_DEVICE_MEMORY_LIMIT_0"] != want.mem {
			t.Errorf("allocate for %s gave %s (%s), want %s (%s)", want.pod, env[EnvVisibleDevices], env["CUDA_DEVICE_MEMORY_LIMIT_0"], want.gpus, want.mem)
		}
		got, _ := client.CoreV1().Pods("ns").Get(ctx, want.pod, metav1.GetOptions{})
		if got.Annotations[codec.PodBindPhaseAnnotation] != codec.BindPhaseSuccess {
			t.Errorf("%s: bind-phase %q after its allocation, want success", want.pod, got.Annotations[codec.PodBindPhaseAnnotation])
		}
	}
}

// TestPendingPodOrderWithoutWatch: a pod bound before the watch started is admitted before one the watch saw;
// one the watch has not seen yet, after both.
func TestPendingPodOrderWithoutWatch(t *testing.T) {
	var a arrivals
	a.add("old", true)
	a.add("new", false)
	if !(a.seq("old") < a.seq("new") && a.seq("new") < a.seq("unseen")) {
		t.Errorf("order old %d, new %d, unseen %d", a.seq("old"), a.seq("new"), a.seq("unseen"))
	}
	a.remove("new")
	if a.seq("new") != a.seq("unseen") {
		t.Errorf("a deleted pod keeps its number")
	}
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
