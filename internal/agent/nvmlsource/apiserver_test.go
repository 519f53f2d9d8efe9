//go:build linux && cgo

package nvmlsource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestAgentOnAPIServer runs the agent against a real etcd and kube-apiserver; the subtests share one control plane
// and each uses its own Nodes.
func TestAgentOnAPIServer(t *testing.T) {
	env := testenv.Start(t)

	t.Run("registration decodes to exactly the mock's GPUs (dgxa100)", func(t *testing.T) {
		m := newMockGPUs(t, dgxa100.New())
		createNode(t, env, "a100-node", map[string]string{"keep": "me"})
		s := agent.DefaultSettings()
		s.SplitCount, s.MemoryScaling, s.CoreScaling = 7, 1.5, 2
		s.Exclude = []string{"5", m.dev[6].UUID}
		a := newTestAgent(t, m, env, "a100-node", func(o *agent.Options) { o.Settings = s })

		patched, err := a.RegisterOnce(context.Background())
		if err != nil || !patched {
			t.Fatalf("RegisterOnce = %v, %v; want a patch", patched, err)
		}
		node := getNode(t, env, "a100-node")
		if node.Annotations["keep"] != "me" {
			t.Errorf("the merge patch lost another annotation: %v", node.Annotations)
		}
		if _, ok := node.Annotations[codec.NodeHandshakeAnnotation]; ok {
			t.Errorf("JSON mode wrote %s; HAMi v2.8+ node components write nothing there", codec.NodeHandshakeAnnotation)
		}
		if v := node.Annotations[codec.NodeRegisterAnnotation]; !strings.HasPrefix(v, "[") {
			t.Fatalf("registration %q is not the JSON form", v)
		}
		var want []engine.GPU
		for i, d := range m.dev {
			if i == 5 || i == 6 {
				continue
			}
			want = append(want, engine.GPU{
				UUID: d.UUID, Index: i, Type: "NVIDIA-Mock NVIDIA A100-SXM4-40GB", Numa: wantNUMA[i], Mode: "hami-core",
				Healthy: true, Slots: 7, TotalMem: 40960 * 3 / 2, TotalCores: 200,
			})
		}
		if got := decodeNode(t, node).GPUs; !sameExported(got, want) {
			t.Errorf("engine decodes\n%+v\nwant\n%+v", got, want)
		}
		if patched, err := a.RegisterOnce(context.Background()); err != nil || patched {
			t.Errorf("second RegisterOnce = %v, %v; want no patch when nothing changed", patched, err)
		}
	})

	t.Run("registration with a MIG agent.GPU (dgxh100)", func(t *testing.T) {
		m := newMockGPUs(t, dgxh100.New())
		m.dev[1].SetMigMode(nvml.DEVICE_MIG_ENABLE)
		createNode(t, env, "h100-node", nil)
		a := newTestAgent(t, m, env, "h100-node", nil)
		if _, err := a.RegisterOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := decodeNode(t, getNode(t, env, "h100-node")).GPUs
		if len(got) != 8 {
			t.Fatalf("got %d GPUs, want 8", len(got))
		}
		for i, g := range got {
			want := engine.GPU{
				UUID: m.dev[i].UUID, Index: i, Type: "NVIDIA H100 80GB HBM3", Numa: wantNUMA[i], Mode: "hami-core",
				Healthy: true, Slots: 10, TotalMem: 81920, TotalCores: 100,
			}
			if i == 1 {
				want.Mode, want.Slots, want.MigProfiles = "mig", 7, g.MigProfiles
				checkMigProfiles(t, m.dev[1], g.MigProfiles)
			}
			if !sameExported(g, want) {
				t.Errorf("GPU %d: engine decodes %+v, want %+v", i, g, want)
			}
		}
	})

	t.Run("legacy format and handshake", func(t *testing.T) {
		m := newMockGPUs(t, dgxh100.New())
		createNode(t, env, "legacy-node", nil)
		a := newTestAgent(t, m, env, "legacy-node", func(o *agent.Options) { o.RegisterFormat = agent.FormatLegacy })
		if _, err := a.RegisterOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		node := getNode(t, env, "legacy-node")
		v := node.Annotations[codec.NodeRegisterAnnotation]
		if want := m.dev[0].UUID + ",10,81920,100,NVIDIA-NVIDIA H100 80GB HBM3,0,true,0,hami-core:"; !strings.HasPrefix(v, want) {
			t.Errorf("legacy registration %q does not start with %q", v, want)
		}
		n := decodeNodeAs(t, node, "2.7") // the text form is for HAMi v2.7 and earlier schedulers
		if len(n.GPUs) != 8 || n.GPUs[7].Type != "NVIDIA-NVIDIA H100 80GB HBM3" || !n.GPUs[7].Healthy {
			t.Errorf("engine decodes %+v", n.GPUs)
		}
		if n.Handshake.State != codec.HandshakeReported || n.Handshake.Time.IsZero() {
			t.Errorf("handshake %+v, want Reported with a time", n.Handshake)
		}
		if patched, _ := a.RegisterOnce(context.Background()); patched {
			t.Errorf("patched again although nothing changed and the handshake says Reported")
		}
		// A HAMi <= v2.7 scheduler asks again; the agent must answer.
		patchAnnotations(t, env, "legacy-node", map[string]string{codec.NodeHandshakeAnnotation: codec.FormatHandshakeRequesting(time.Now())})
		if patched, err := a.RegisterOnce(context.Background()); err != nil || !patched {
			t.Fatalf("RegisterOnce after Requesting_ = %v, %v; want a patch", patched, err)
		}
		if hs := decodeNodeAs(t, getNode(t, env, "legacy-node"), "2.7").Handshake; hs.State != codec.HandshakeReported {
			t.Errorf("handshake %+v, want Reported", hs)
		}
	})

	t.Run("only its own Node is patched", func(t *testing.T) {
		m := newMockGPUs(t, dgxa100.New())
		createNode(t, env, "own-node", nil)
		otherAnnos := map[string]string{codec.NodeRegisterAnnotation: "GPU-other,10,1024,100,NVIDIA-T4,0,true:", "x": "y"}
		before := createNode(t, env, "other-node", otherAnnos)
		a := newTestAgent(t, m, env, "own-node", func(o *agent.Options) { o.RegisterInterval = 100 * time.Millisecond })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx) }()
		waitFor(t, 10*time.Second, "own-node registered", func() bool {
			return len(registeredGPUs(t, env, "own-node")) == 8
		})
		m.xid(0, 79) // a change, so that the agent patches once more
		waitFor(t, 10*time.Second, "GPU 0 unhealthy on own-node", func() bool {
			return !registeredGPUs(t, env, "own-node")[0].Healthy
		})
		time.Sleep(300 * time.Millisecond) // a few more periods
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		after := getNode(t, env, "other-node")
		if after.ResourceVersion != before.ResourceVersion || !maps.Equal(after.Annotations, otherAnnos) {
			t.Errorf("other-node changed: resourceVersion %s -> %s, annotations %v", before.ResourceVersion, after.ResourceVersion, after.Annotations)
		}
	})

	t.Run("an XID event flips health within one period; an ignored XID does not", func(t *testing.T) {
		m := newMockGPUs(t, dgxa100.New())
		createNode(t, env, "xid-node", nil)
		const period = 3 * time.Second
		a := newTestAgent(t, m, env, "xid-node", func(o *agent.Options) { o.RegisterInterval = period })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}()
		waitFor(t, 10*time.Second, "xid-node registered", func() bool {
			gs := registeredGPUs(t, env, "xid-node")
			return len(gs) == 8 && gs[2].Healthy && gs[3].Healthy
		})
		m.xid(2, 31) // agent.GPU memory page fault: an application's fault, ignored by default
		waitFor(t, 5*time.Second, "XID 31 counted as ignored", func() bool {
			return counterValue(t, a, agent.MetricXIDEvents, map[string]string{"device_uuid": m.dev[2].UUID, "xid": "31", "action": "ignored"}) == 1
		})
		injected := time.Now()
		m.xid(3, 79) // agent.GPU has fallen off the bus
		waitFor(t, period, "GPU 3 unhealthy in the registration", func() bool {
			return !registeredGPUs(t, env, "xid-node")[3].Healthy
		})
		t.Logf("unhealthy agent.GPU registered %s after the XID", time.Since(injected).Round(time.Millisecond))
		gs := decodeNode(t, getNode(t, env, "xid-node")).GPUs
		for i, g := range gs {
			if g.Healthy != (i != 3) {
				t.Errorf("GPU %d healthy=%v; only agent.GPU 3 had a critical XID", i, g.Healthy)
			}
		}
	})

	t.Run("usage, metrics and pod attribution, through the API server's pod proxy", func(t *testing.T) {
		ctx := context.Background()
		m := newMockGPUs(t, dgxa100.New())
		createNode(t, env, "usage-node", nil)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ml"}}
		if _, err := env.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		trainer := createPod(t, env, "ml", "trainer", "usage-node")
		const cid = "3f2a9c0d4e5b6a7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7"
		m.process(4242, "0::/", podCgroup(string(trainer.UID), cid)) // cgroup v2 has one line; a v1 root line first
		m.process(777, "0::/system.slice/nvidia-persistenced.service")
		m.process(5151, "12:memory:/kubepods/besteffort/pod0b7c1a52-0000-4000-8000-000000000001/"+cid)
		const gib = 1 << 30
		m.SetUsage(0, 10*gib, 37,
			nvml.ProcessInfo{Pid: 4242, UsedGpuMemory: 6 * gib},
			nvml.ProcessInfo{Pid: 777, UsedGpuMemory: gib},
			nvml.ProcessInfo{Pid: 5151, UsedGpuMemory: gib / 2})
		m.SetUsage(1, 512<<20, 0)

		// The agent listens on a non-loopback address: the API server refuses to proxy to loopback.
		ip := nonLoopbackIP(t)
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		a := newTestAgent(t, m, env, "usage-node", func(o *agent.Options) {
			o.Listener, o.PodLookup, o.UsageMaxAge, o.ProcRoot = ln, true, 0, m.ProcRoot
		})
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- a.Run(runCtx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}()
		// The agent's own pod, as the DaemonSet would run it; kubelet would set its IP.
		agentPod := createPod(t, env, "ml", "hami-agent-x1", "usage-node")
		agentPod.Status.PodIP, agentPod.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
		if _, err := env.Client.CoreV1().Pods("ml").UpdateStatus(ctx, agentPod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		proxy := func(path string) []byte {
			b, err := env.Client.CoreV1().RESTClient().Get().
				AbsPath(fmt.Sprintf("/api/v1/namespaces/ml/pods/hami-agent-x1:%d/proxy%s", port, path)).DoRaw(ctx)
			if err != nil {
				t.Fatalf("GET %s through the pod proxy: %v: %s", path, err, b)
			}
			return b
		}

		var r agent.UsageReport
		waitFor(t, 10*time.Second, "the trainer pod named in /usage", func() bool {
			r = agent.UsageReport{}
			if err := json.Unmarshal(proxy("/usage"), &r); err != nil {
				t.Fatalf("/usage is not a agent.UsageReport: %v", err)
			}
			return len(r.GPUs) == 8 && len(r.GPUs[0].Processes) == 3 && r.GPUs[0].Processes[0].Pod != nil && r.GPUs[0].Processes[0].Pod.Name != ""
		})
		g0 := r.GPUs[0]
		if r.Node != "usage-node" || g0.UUID != m.dev[0].UUID || g0.Type != "NVIDIA-Mock NVIDIA A100-SXM4-40GB" ||
			g0.MemoryUsedBytes != 10*gib || g0.MemoryTotalBytes != 40960<<20 || g0.Utilization == nil || *g0.Utilization != 0.37 ||
			!g0.Healthy || !g0.Registered || g0.Mode != "hami-core" {
			t.Errorf("GPU 0 usage %+v", g0)
		}
		wantProcs := []agent.ProcessUsage{
			{PID: 4242, MemoryUsedBytes: 6 * gib, Pod: &agent.PodRef{Namespace: "ml", Name: "trainer", UID: trainer.UID}, ContainerID: cid},
			{PID: 777, MemoryUsedBytes: gib},
			{PID: 5151, MemoryUsedBytes: gib / 2, Pod: &agent.PodRef{UID: "0b7c1a52-0000-4000-8000-000000000001"}, ContainerID: cid},
		}
		if !reflect.DeepEqual(g0.Processes, wantProcs) {
			t.Errorf("processes %s, want %s", jsonString(g0.Processes), jsonString(wantProcs))
		}

		fams := parseMetrics(t, proxy("/metrics"))
		gpu0 := map[string]string{"node": "usage-node", "device_uuid": m.dev[0].UUID, "device_index": "0", "device_type": "NVIDIA-Mock NVIDIA A100-SXM4-40GB"}
		gpu1 := map[string]string{"node": "usage-node", "device_uuid": m.dev[1].UUID, "device_index": "1", "device_type": "NVIDIA-Mock NVIDIA A100-SXM4-40GB"}
		with := func(base map[string]string, kv ...string) map[string]string {
			out := maps.Clone(base)
			for i := 0; i < len(kv); i += 2 {
				out[kv[i]] = kv[i+1]
			}
			return out
		}
		for _, c := range []struct {
			name   string
			labels map[string]string
			want   float64
		}{
			{agent.MetricMemoryUsed, gpu0, 10 * gib},
			{agent.MetricMemoryUsed, gpu1, 512 << 20},
			{agent.MetricMemoryTotal, gpu0, 40960 << 20},
			{agent.MetricUtilization, gpu0, 0.37},
			{agent.MetricUtilization, gpu1, 0},
			{agent.MetricHealthy, gpu0, 1},
			{agent.MetricProcessMemoryUsed, with(gpu0, "pid", "4242", "namespace", "ml", "pod", "trainer", "pod_uid", string(trainer.UID)), 6 * gib},
			{agent.MetricProcessMemoryUsed, with(gpu0, "pid", "777", "namespace", "", "pod", "", "pod_uid", ""), gib},
			{agent.MetricPodMemoryUsed, with(gpu0, "namespace", "ml", "pod", "trainer", "pod_uid", string(trainer.UID)), 6 * gib},
		} {
			if got, ok := metricValue(fams, c.name, c.labels); !ok || got != c.want {
				t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
			}
		}
		if n := len(fams[agent.MetricMemoryUsed].GetMetric()); n != 8 {
			t.Errorf("%s has %d series, want 8", agent.MetricMemoryUsed, n)
		}
		if _, ok := fams["process_resident_memory_bytes"]; !ok {
			t.Errorf("no process_resident_memory_bytes (the agent's RSS)")
		}
	})
}

// newTestAgent builds an agent over the mock for node, talking to env; edit adjusts the options.
func newTestAgent(t *testing.T, m *mockGPUs, env *testenv.Env, node string, edit func(*agent.Options)) *agent.Agent {
	t.Helper()
	o := agent.DefaultOptions()
	o.NodeName, o.Listen, o.PodLookup, o.ProcRoot, o.ConfigMap = node, "", false, m.ProcRoot, ""
	o.Log = testLogger(t)
	if edit != nil {
		edit(&o)
	}
	a, err := agent.New(m.source(), env.Client, o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// checkMigProfiles compares profiles with the mock agent.GPU's MIG tables.
func checkMigProfiles(t *testing.T, d *server.Device, got []codec.MigProfile) {
	t.Helper()
	byName := map[string]codec.MigProfile{}
	for _, p := range got {
		byName[p.Name] = p
	}
	var want int
	for id, info := range d.Config.MIGProfiles.GpuInstanceProfiles {
		if info.InstanceCount == 0 {
			continue
		}
		want++
		name := MigProfileName(id, info.SliceCount, info.MemorySizeMB, d.MemoryInfo.Total)
		p, ok := byName[name]
		if !ok {
			t.Errorf("profile %d (%s) missing from %v", id, name, got)
			continue
		}
		if p.MemoryMB != int64(info.MemorySizeMB) || p.SliceCount != int32(info.SliceCount) {
			t.Errorf("profile %s: %+v, want memory %d, slices %d", name, p, info.MemorySizeMB, info.SliceCount)
		}
		var pls []codec.MigPlacement
		for _, pl := range d.Config.MIGProfiles.GpuInstancePlacements[int(info.Id)] {
			pls = append(pls, codec.MigPlacement{Start: int32(pl.Start), Size: int32(pl.Size)})
		}
		if !reflect.DeepEqual(p.Placements, pls) {
			t.Errorf("profile %s placements %v, want %v", name, p.Placements, pls)
		}
	}
	if len(got) != want {
		t.Errorf("%d profiles, want %d", len(got), want)
	}
}

// nonLoopbackIP returns an IPv4 address of this machine the API server may proxy to.
func nonLoopbackIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("this machine has no non-loopback IPv4 address; the API server will not proxy to loopback")
	return ""
}

// counterValue scrapes the agent's handler and returns one series' value (0 when absent).
func counterValue(t *testing.T, a *agent.Agent, name string, labels map[string]string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	v, _ := metricValue(parseMetrics(t, rec.Body.Bytes()), name, labels)
	return v
}

// sameExported compares what the engine exposes of its GPUs (their JSON form), not its private bookkeeping such
// as the registration position.
func sameExported(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
