package tui

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
	"github.com/kubectl-hami/kubectl-hami/internal/usage"
)

// fakeGPUs is a GPUSource with two T4s whose usage the test sets.
type fakeGPUs struct {
	mu    sync.Mutex
	usage []agent.Usage
}

func (f *fakeGPUs) Devices() ([]agent.GPU, error) {
	return []agent.GPU{
		{Index: 0, UUID: "GPU-live-0", Name: "Tesla T4", MemoryMiB: 15360, BusID: "00000000:3B:00.0"},
		{Index: 1, UUID: "GPU-live-1", Name: "Tesla T4", MemoryMiB: 15360, BusID: "00000000:5E:00.0"},
	}, nil
}

func (f *fakeGPUs) Usage() ([]agent.Usage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]agent.Usage(nil), f.usage...), nil
}

func (f *fakeGPUs) set(used0 uint64, util0 float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.usage = []agent.Usage{
		{Index: 0, UUID: "GPU-live-0", MemoryUsedBytes: used0, MemoryTotalBytes: 15360 << 20, Utilization: util0, UtilizationKnown: true},
		{Index: 1, UUID: "GPU-live-1", MemoryUsedBytes: 0, MemoryTotalBytes: 15360 << 20},
	}
}

func (f *fakeGPUs) Events(ctx context.Context) (<-chan agent.XIDEvent, error) {
	ch := make(chan agent.XIDEvent)
	go func() { <-ctx.Done(); close(ch) }()
	return ch, nil
}

func (f *fakeGPUs) Close() error { return nil }

// proxyableIP is an IPv4 address of this machine that kube-apiserver will proxy to (it refuses loopback and
// link-local pod IPs).
func proxyableIP(t *testing.T) string {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Skipf("cannot list the network interfaces: %v", err)
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
				return n.IP.String()
			}
		}
	}
	t.Skip("this machine has no non-loopback IPv4 address: kube-apiserver does not proxy to loopback or link-local pod IPs")
	return ""
}

// agentPod creates a pod of the agent DaemonSet on node, running at ip with its "metrics" port.
func agentPod(t *testing.T, ctx context.Context, env *testenv.Env, name, node, ip string, port int) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name,
			Labels: map[string]string{"app.kubernetes.io/name": "kubectl-hami-agent", "app.kubernetes.io/part-of": "kubectl-hami"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "agent", Image: "ghcr.io/kubectl-hami/kubectl-hami-agent:test",
			Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: int32(port)}}}}},
	}
	p, err := env.Client.CoreV1().Pods("kube-system").Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What kubelet would report.
	p.Status.Phase, p.Status.PodIP, p.Status.PodIPs = corev1.PodRunning, ip, []corev1.PodIP{{IP: ip}}
	if _, err := env.Client.CoreV1().Pods("kube-system").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestLiveAgentUsage runs the whole path on a real kube-apiserver: a node agent (over a fake GPU source) registers
// its Node and serves /usage on a non-loopback address; its pod's status.podIP points there. usage.Fetch and the
// live UI read it through the API server's pod proxy; a second agent pod whose port is closed shows its error on
// its node only.
func TestLiveAgentUsage(t *testing.T) {
	ip := proxyableIP(t)
	env := testenv.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, n := range []string{"gpu-live-1", "gpu-live-2"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}
		if n == "gpu-live-2" {
			node.Annotations = map[string]string{codec.NodeRegisterAnnotation: `[{"id":"GPU-dead-0","count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","numa":0,"health":true,"index":0,"mode":"hami-core"}]`}
		}
		if _, err := env.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	gpus := &fakeGPUs{}
	gpus.set(6<<30, 0.42)
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	o := agent.DefaultOptions()
	o.NodeName, o.Listener, o.PodLookup, o.UsageMaxAge, o.RegisterInterval, o.RetryInterval = "gpu-live-1", ln, false, 0, 200*time.Millisecond, 100*time.Millisecond
	a, err := agent.New(gpus, env.Client, o)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	// A closed port: the API server's proxy is refused.
	closed, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	agentPod(t, ctx, env, "kubectl-hami-agent-aaaaa", "gpu-live-1", ip, port)
	agentPod(t, ctx, env, "kubectl-hami-agent-bbbbb", "gpu-live-2", ip, closedPort)

	// The agent registers its Node.
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := env.Client.CoreV1().Nodes().Get(ctx, "gpu-live-1", metav1.GetOptions{})
		if err == nil && strings.Contains(n.Annotations[codec.NodeRegisterAnnotation], "GPU-live-0") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not register gpu-live-1: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The fetcher alone.
	r, err := usage.Fetch(ctx, env.Client, usage.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Agents) != 2 || r.Answered() != 1 {
		t.Fatalf("agents %+v", r.Agents)
	}
	a1, a2 := r.Agents[0], r.Agents[1]
	if a1.Node != "gpu-live-1" || a1.Pod != "kube-system/kubectl-hami-agent-aaaaa" || a1.Error != "" || a1.Usage == nil || a1.Usage.Node != "gpu-live-1" {
		t.Errorf("agent 1: %+v", a1)
	}
	if g := r.GPUs()["GPU-live-0"]; g != (usage.GPU{Node: "gpu-live-1", Index: 0, UsedMiB: 6144, TotalMiB: 15360, Utilization: 42, Healthy: true}) {
		t.Errorf("GPU-live-0 through the pod proxy: %+v", g)
	}
	if g := r.GPUs()["GPU-live-1"]; g.Utilization != -1 || g.UsedMiB != 0 {
		t.Errorf("GPU-live-1 (no utilisation): %+v", g)
	}
	if a2.Node != "gpu-live-2" || a2.Usage != nil || a2.Error == "" {
		t.Errorf("agent 2 (closed port): %+v", a2)
	}
	if !strings.Contains(a2.Error, "connection refused") && !strings.Contains(a2.Error, "error trying to reach service") {
		t.Errorf("agent 2's error does not say the proxy could not reach it: %q", a2.Error)
	}

	// The live UI.
	s, err := snapshot.Live(ctx, env.Client, snapshot.LiveOptions{DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Server: env.APIServerURL})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Snapshot: s, Client: env.Client, DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: time.Now, NoColor: true,
		Agents: &usage.Options{Timeout: 5 * time.Second}, MetricsInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	if err := watch(ctx, env.Client, snapshot.DefaultDeviceConfigMap, m.queue, m.watchErr); err != nil {
		t.Fatal(err)
	}
	l := newLoop(t, m)
	l.until("the agent's numbers", func() bool { return m.metrics != nil && m.metrics.GPUs["GPU-live-0"].UsedMemMiB == 6144 })
	got := screen(m)
	if !strings.Contains(got, "live GPU usage: 1/2 node agents answered; gpu-live-2: ") {
		t.Errorf("the header does not count the agents:\n%s", got)
	}
	if line := lineWith(got, "#0 "); !strings.Contains(line, " 6G ") || !strings.Contains(line, "42%") {
		t.Errorf("GPU 0 of gpu-live-1 lacks its live numbers: %q\n%s", line, got)
	}

	// The agent's next reading reaches the screen.
	gpus.set(9<<30, 0.91)
	l.until("the next reading", func() bool { return m.metrics.GPUs["GPU-live-0"].UsedMemMiB == 9216 })
	if line := lineWith(screen(m), "#0 "); !strings.Contains(line, "91%") {
		t.Errorf("GPU 0 does not follow the agent: %q", line)
	}
	press(m, ":", "node gpu-live-2", "enter")
	if got := screen(m); !strings.Contains(got, "live usage n/a: agent kube-system/kubectl-hami-agent-bbbbb: ") {
		t.Errorf("the Node view of gpu-live-2 does not name its agent and error:\n%s", got)
	}
}
