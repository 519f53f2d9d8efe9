package extender_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/testbuild"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// The helpers of this package's tests carry an xt prefix so they do not collide with other test files.

const (
	xtGPUType   = "NVIDIA-A100-SXM4-80GB"
	xtScheduler = "hami-scheduler"
)

// xtGPU is GPU i of a node: a healthy hami-core GPU with the given slots and memory and 100 cores.
func xtGPU(node string, i int, memMiB int64, slots int32) codec.DeviceInfo {
	return codec.DeviceInfo{ID: xtUUID(node, i), Index: i, Count: slots, Devmem: memMiB, Devcore: 100, Type: xtGPUType, Health: true}
}

func xtUUID(node string, i int) string { return fmt.Sprintf("GPU-%s-%d", node, i) }

// xtGPUs is n identical GPUs of a node.
func xtGPUs(node string, n int, memMiB int64, slots int32) []codec.DeviceInfo {
	out := make([]codec.DeviceInfo, n)
	for i := range out {
		out[i] = xtGPU(node, i, memMiB, slots)
	}
	return out
}

// xtNode is a Ready node registering devs (none: no register annotation) with allocatable nvidia.com/gpu
// equal to the sum of the slots, plus cpu, memory and pods for kube-scheduler.
func xtNode(name string, devs []codec.DeviceInfo) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{},
		Labels: map[string]string{"kubernetes.io/hostname": name}}}
	var slots int64
	if devs != nil {
		n.Annotations[codec.NodeRegisterAnnotation] = codec.FormatNodeRegister(devs)
		for _, d := range devs {
			slots += int64(d.Count)
		}
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("250"),
		"nvidia.com/gpu":      *resource.NewQuantity(slots, resource.DecimalSI),
	}
	n.Status = corev1.NodeStatus{Capacity: res, Allocatable: res.DeepCopy(), Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}}
	return n
}

// xtPod is a pending pod of the extender's scheduler profile with one container, "main"; chain its
// resources (GPUs, GPUMem ...) and call Obj().
func xtPod(ns, name string) *testbuild.PodWrapper {
	return testbuild.MakePod(ns, name).UID("uid-" + ns + "-" + name).SchedulerName(xtScheduler).
		Container("main").Image("registry.k8s.io/pause:3.10")
}

// xtPlaced marks a pod as placed by HAMi on node with one container's devices.
func xtPlaced(p *corev1.Pod, node string, devs ...codec.ContainerDevice) *corev1.Pod {
	p = p.DeepCopy()
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	v := codec.FormatPodDevices(codec.PodDevices{codec.ContainerDevices(devs)})
	p.Annotations[codec.PodNodeAnnotation] = node
	p.Annotations[codec.PodAllocatedAnnotation] = v
	p.Annotations[codec.PodToAllocateAnnotation] = v
	p.Annotations[codec.PodBindPhaseAnnotation] = "success"
	return p
}

// xtDev is one device share.
func xtDev(node string, i int, memMiB, cores int64) codec.ContainerDevice {
	return codec.ContainerDevice{UUID: xtUUID(node, i), Type: "NVIDIA", UsedMem: memMiB, UsedCores: cores}
}

func xtQuota(ns, name string, kv ...string) *corev1.ResourceQuota {
	rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
	for i := 0; i+1 < len(kv); i += 2 {
		rq.Spec.Hard[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return rq
}

// xtClock is a settable clock.
type xtClock struct {
	mu sync.Mutex
	t  time.Time
}

func newXTClock() *xtClock { return &xtClock{t: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)} }

func (c *xtClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *xtClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// xtEnv is a State and Server over a fake clientset, served on a loopback httptest server.
type xtEnv struct {
	t      *testing.T
	state  *extender.State
	client *fake.Clientset
	srv    *extender.Server
	http   *httptest.Server
	clock  *xtClock
}

// newXTEnv puts the objects into the fake clientset and the state (nodes, pods, quotas), marks the state
// synced and serves it. Reactors must be added to env.client before the first request.
func newXTEnv(t *testing.T, opts extender.Options, objs ...runtime.Object) *xtEnv {
	t.Helper()
	e := &xtEnv{t: t, state: extender.NewState(engine.DefaultConfig()), client: fake.NewClientset(objs...), clock: newXTClock()}
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Node:
			e.state.SetNode(o)
		case *corev1.Pod:
			e.state.SetPod(o, e.clock.Now())
		case *corev1.ResourceQuota:
			e.state.SetQuota(o)
		}
	}
	e.state.SetSynced()
	// The fake apiserver does not implement generateName (events use it).
	var generated atomic.Int64
	e.client.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if ca, ok := a.(k8stesting.CreateAction); ok && a.GetSubresource() == "" {
			if m, ok := ca.GetObject().(metav1.Object); ok && m.GetName() == "" && m.GetGenerateName() != "" {
				m.SetName(m.GetGenerateName() + strconv.FormatInt(generated.Add(1), 10))
			}
		}
		return false, nil, nil
	})
	e.srv = extender.NewServer(e.state, e.client, opts, nil, e.clock.Now)
	e.http = httptest.NewServer(e.srv.Handler())
	t.Cleanup(e.http.Close)
	return e
}

// post sends v (or raw bytes) as JSON and returns the status and body.
func (e *xtEnv) post(path string, v any) (int, []byte) {
	e.t.Helper()
	return xtPost(e.t, e.http.URL+path, v)
}

func xtPost(t testing.TB, url string, v any) (int, []byte) {
	t.Helper()
	var body []byte
	switch b := v.(type) {
	case []byte:
		body = b
	case string:
		body = []byte(b)
	default:
		var err error
		if body, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: read body: %v", url, err)
	}
	return resp.StatusCode, out
}

// postJSON posts v and decodes a 200 answer into out.
func (e *xtEnv) postJSON(path string, v, out any) {
	e.t.Helper()
	code, body := e.post(path, v)
	if code != http.StatusOK {
		e.t.Fatalf("POST %s: status %d: %s", path, code, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		e.t.Fatalf("POST %s: decode %s: %v", path, body, err)
	}
}

func (e *xtEnv) get(path string) (int, string) {
	e.t.Helper()
	resp, err := http.Get(e.http.URL + path)
	if err != nil {
		e.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// gpu returns a copy of GPU i of a node as the state sees it.
func (e *xtEnv) gpu(node string, i int) engine.GPU {
	e.t.Helper()
	var g engine.GPU
	e.state.Read(func(c *engine.Cluster) {
		n := c.Node(node)
		if n == nil || i >= len(n.GPUs) {
			e.t.Fatalf("state has no GPU %d on node %s", i, node)
		}
		g = n.GPUs[i]
	})
	return g
}

// xtLivePod reads a pod from the fake clientset.
func (e *xtEnv) livePod(ns, name string) *corev1.Pod {
	e.t.Helper()
	p, err := e.client.CoreV1().Pods(ns).Get(e.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get pod %s/%s: %v", ns, name, err)
	}
	return p
}

func (e *xtEnv) liveNode(name string) *corev1.Node {
	e.t.Helper()
	n, err := e.client.CoreV1().Nodes().Get(e.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get node %s: %v", name, err)
	}
	return n
}

func xtHttptestServer(t *testing.T, h http.Handler) *httptest.Server {
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func xtJsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// eachWorld runs check on count generated worlds (worldgen.Seeds: WORLD_SEED and WORLDS override), stopping at
// the first seed that fails with how to rerun it alone, and returns the sums of check's two counts, the first
// seed and the number of worlds.
func eachWorld(t *testing.T, count int, check func(t *testing.T, seed uint64) (int, int)) (a, b int, first uint64, n int) {
	t.Helper()
	first, n = worldgen.Seeds(count)
	for seed := first; seed < first+uint64(n); seed++ {
		x, y := check(t, seed)
		a, b = a+x, b+y
		if t.Failed() {
			t.Fatalf("seed %d failed; rerun with WORLD_SEED=%d WORLDS=1", seed, seed)
		}
	}
	return a, b, first, n
}
