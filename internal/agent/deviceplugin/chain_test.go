package deviceplugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/deviceplugin"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

const testNamespace = "default"

// The agent binary registers the device plugin in internal/agent/withnvml; the tests run without NVML.
func init() { agent.RegisterDevicePlugin(deviceplugin.ForAgent) }

// gpuSource is an agent.GPUSource with fixed GPUs whose XID events the test sends.
type gpuSource struct {
	gpus   []agent.GPU
	events chan agent.XIDEvent
}

func newGPUSource(node string, n int, memMiB int64) *gpuSource {
	s := &gpuSource{events: make(chan agent.XIDEvent)}
	for i := range n {
		s.gpus = append(s.gpus, agent.GPU{Index: i, UUID: fmt.Sprintf("GPU-%s-%d", node, i), Name: "NVIDIA A10", MemoryMiB: memMiB, NUMA: i % 2})
	}
	return s
}

func (s *gpuSource) Devices() ([]agent.GPU, error) { return append([]agent.GPU(nil), s.gpus...), nil }
func (s *gpuSource) Usage() ([]agent.Usage, error) { return nil, nil }
func (s *gpuSource) Close() error                  { return nil }

func (s *gpuSource) Events(ctx context.Context) (<-chan agent.XIDEvent, error) {
	out := make(chan agent.XIDEvent)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-s.events:
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// liveExtender is the real scheduler extender (internal/extender) on the test's API server; it binds pods the
// way kube-scheduler's bind call makes it, keeping the node lock for the device plugin.
type liveExtender struct {
	state   *extender.State
	handler http.Handler
}

func startExtender(t *testing.T, env *testenv.Env) *liveExtender {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	state := extender.NewState(engine.DefaultConfig())
	srv := extender.NewServer(state, env.Client, extender.DefaultOptions(), agenttest.Logger(t), time.Now)
	f, err := extender.StartInformers(ctx, env.Client, state, time.Now)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); f.Shutdown() })
	return &liveExtender{state: state, handler: srv.Handler()}
}

// bind asks the extender to bind the pod to node, once the extender sees the node's GPUs served by kubelet.
func (x *liveExtender) bind(t *testing.T, pod *corev1.Pod, node string) {
	t.Helper()
	waitFor(t, 20*time.Second, "the extender to see node "+node+" with allocatable GPUs", func() bool {
		ok := false
		x.state.Read(func(c *engine.Cluster) {
			n := c.Node(node)
			ok = n != nil && n.Registered && n.AllocatableGPUs > 0
		})
		return ok
	})
	body, _ := json.Marshal(extenderv1.ExtenderBindingArgs{PodName: pod.Name, PodNamespace: pod.Namespace, PodUID: pod.UID, Node: node})
	rec := httptest.NewRecorder()
	x.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/bind", bytes.NewReader(body)))
	var res extenderv1.ExtenderBindingResult
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("bind: HTTP %d %s: %v", rec.Code, rec.Body, err)
	}
	if res.Error != "" {
		t.Fatalf("the extender cannot bind %s to %s: %s", pod.Name, node, res.Error)
	}
}

// chain is one GPU node: the agent with its device plugin, and kubelet's side of the device-plugin API.
type chain struct {
	t        *testing.T
	env      *testenv.Env
	node     string
	src      *gpuSource
	kubelet  *fakeKubelet
	coreDir  string
	resource string
}

type chainConfig struct {
	gpus          int
	memMiB        int64
	split         int32
	memoryScaling float64
	hamiCore      bool   // libvgpu.so and ld.so.preload are on the host
	operatingMode string // the GPUs' mode (--operating-mode); "" is hami-core
	mig           bool   // the GPUs are in MIG mode (one 1g.10gb profile, 7 placements); the source cannot create instances
}

// startChain creates the Node, the fake kubelet and the agent (full mode, --device-plugin) over a fake GPU source.
func startChain(t *testing.T, env *testenv.Env, node string, cfg chainConfig) *chain {
	t.Helper()
	agenttest.CreateNode(t, env, node, nil)
	// Unix socket paths are limited to 108 bytes: t.TempDir() with long test names is too deep.
	sockDir, err := os.MkdirTemp("", "dp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	coreDir := t.TempDir()
	if cfg.hamiCore {
		for _, f := range []string{"libvgpu.so", "ld.so.preload"} {
			if err := os.WriteFile(filepath.Join(coreDir, f), []byte("/usr/local/vgpu/libvgpu.so\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := &chain{t: t, env: env, node: node, src: newGPUSource(node, cfg.gpus, cfg.memMiB), coreDir: coreDir, resource: "nvidia.com/gpu"}
	perGPU := int(cfg.split)
	if cfg.mig {
		perGPU = 7
		for i := range c.src.gpus {
			g := &c.src.gpus[i]
			g.MIG, g.MigMaxInstances = true, 7
			g.MigProfiles = []codec.MigProfile{{Name: "1g.10gb", MemoryMB: 9856, Core: 15, SliceCount: 1}}
			for s := range int32(7) {
				g.MigProfiles[0].Placements = append(g.MigProfiles[0].Placements, codec.MigPlacement{Start: s, Size: 1})
			}
		}
	}
	c.kubelet = startFakeKubelet(t, sockDir, env.Client, node)

	o := agent.DefaultOptions()
	o.NodeName, o.Listen, o.PodLookup, o.ConfigMap, o.Log = node, "", false, "", agenttest.Logger(t)
	o.Settings.SplitCount, o.Settings.MemoryScaling = cfg.split, cfg.memoryScaling
	if cfg.operatingMode != "" {
		o.Settings.OperatingMode = cfg.operatingMode
	}
	dp := deviceplugin.DefaultOptions()
	dp.SocketDir, dp.HamiCoreDir, dp.PollInterval, dp.RetryInterval = sockDir, coreDir, 20*time.Millisecond, 50*time.Millisecond
	o.DevicePlugin = &dp
	a, err := agent.New(c.src, env.Client, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent: %v", err)
		}
	})
	c.kubelet.waitDevices("the plugin's first device list", func(d []*pluginapi.Device) bool { return len(d) == cfg.gpus*perGPU })
	return c
}

// ctrSpec is one container of a test pod; gpus 0 asks for nothing.
type ctrSpec struct {
	name             string
	gpus, mem, cores int64
	env              []corev1.EnvVar
}

func (c *chain) createPod(name string, inits, apps []ctrSpec) *corev1.Pod {
	c.t.Helper()
	ctr := func(s ctrSpec) corev1.Container {
		out := corev1.Container{Name: s.name, Image: "registry.k8s.io/pause:3.10", Env: s.env}
		if s.gpus > 0 {
			l := corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(s.gpus, resource.DecimalSI)}
			if s.mem > 0 {
				l["nvidia.com/gpumem"] = *resource.NewQuantity(s.mem, resource.DecimalSI)
			}
			if s.cores > 0 {
				l["nvidia.com/gpucores"] = *resource.NewQuantity(s.cores, resource.DecimalSI)
			}
			out.Resources.Limits = l
		}
		return out
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name}}
	for _, s := range inits {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, ctr(s))
	}
	for _, s := range apps {
		pod.Spec.Containers = append(pod.Spec.Containers, ctr(s))
	}
	out, err := c.env.Client.CoreV1().Pods(testNamespace).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

func (c *chain) pod(name string) *corev1.Pod {
	c.t.Helper()
	p, err := c.env.Client.CoreV1().Pods(testNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return p
}

func (c *chain) patchPod(name string, annos map[string]any) {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annos}})
	if _, err := c.env.Client.CoreV1().Pods(testNamespace).Patch(context.Background(), name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *chain) patchNode(annos map[string]any) {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annos}})
	if _, err := c.env.Client.CoreV1().Nodes().Patch(context.Background(), c.node, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		c.t.Fatal(err)
	}
}

// lock is the Node's hami.io/mutex.lock, "" when there is none.
func (c *chain) lock() string {
	return agenttest.GetNode(c.t, c.env, c.node).Annotations[codec.NodeLockAnnotation]
}

// lockOwner is the pod named by the node lock.
func (c *chain) lockOwner() string {
	c.t.Helper()
	raw := c.lock()
	if raw == "" {
		return ""
	}
	l, err := codec.ParseNodeLock(raw)
	if err != nil {
		c.t.Fatalf("node %s: lock %q: %v", c.node, raw, err)
	}
	return l.Namespace + "/" + l.Pod
}

// allocatedEntries is the pod's hami.io/vgpu-devices-allocated, which the device plugin never changes.
func allocatedEntries(t *testing.T, pod *corev1.Pod) codec.PodDevices {
	t.Helper()
	pd, err := codec.ParsePodDevices(codec.PodAllocatedAnnotation, pod.Annotations[codec.PodAllocatedAnnotation])
	if err != nil {
		t.Fatal(err)
	}
	return pd
}

// wantEnv is HAMi-core's environment for one entry, without the cache path (checked on its own).
func wantEnv(cd codec.ContainerDevices, oversubscribe bool) map[string]string {
	env := map[string]string{}
	uuids := ""
	for i, d := range cd {
		if i > 0 {
			uuids += ","
		}
		uuids += d.UUID
		env["CUDA_DEVICE_MEMORY_LIMIT_"+strconv.Itoa(i)] = strconv.FormatInt(d.UsedMem, 10) + "m"
	}
	env["NVIDIA_VISIBLE_DEVICES"] = uuids
	env["CUDA_DEVICE_SM_LIMIT"] = strconv.FormatInt(cd[0].UsedCores, 10)
	if oversubscribe {
		env["CUDA_OVERSUBSCRIBE"] = "true"
	}
	return env
}
