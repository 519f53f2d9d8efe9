package deviceplugin_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/deviceplugin"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestDevicePluginOnAPIServer runs the whole chain on a real API server: the agent registers the node's GPUs and
// serves them to a fake kubelet over the real device-plugin API, the real extender binds pods, and kubelet's
// Allocate calls must hand each container exactly the GPUs and limits of the pod's annotations. Each subtest has
// its own Node.
func TestDevicePluginOnAPIServer(t *testing.T) {
	env := testenv.Start(t)
	xt := startExtender(t, env)
	withCore := chainConfig{gpus: 2, memMiB: 16384, split: 10, memoryScaling: 1, hamiCore: true}

	t.Run("registers split-count devices and allocates a multi-container pod in order", func(t *testing.T) {
		c := startChain(t, env, "dp-multi", withCore)
		reg := c.kubelet.lastRegistration()
		if reg.ResourceName != "nvidia.com/gpu" || reg.Endpoint != deviceplugin.DefaultSocketName || reg.Options.GetPreStartRequired() {
			t.Errorf("registration %+v", reg)
		}
		devs := c.kubelet.waitDevices("20 healthy devices", func(d []*pluginapi.Device) bool { return len(d) == 20 })
		for i, d := range devs {
			gpu, slot := i/10, i%10
			if want := fmt.Sprintf("GPU-dp-multi-%d-%d", gpu, slot); d.ID != want || d.Health != pluginapi.Healthy ||
				len(d.Topology.GetNodes()) != 1 || d.Topology.Nodes[0].ID != int64(gpu%2) {
				t.Errorf("device %d: %+v, want %s healthy on NUMA node %d", i, d, want, gpu%2)
			}
		}

		pod := c.createPod("multi", []ctrSpec{{name: "setup", gpus: 1, mem: 1000, cores: 10}}, []ctrSpec{
			{name: "a", gpus: 2, mem: 3000, cores: 30},
			{name: "sidecar"},
			{name: "c", gpus: 1, mem: 2000, env: []corev1.EnvVar{{Name: "CUDA_DISABLE_CONTROL", Value: "true"}}},
		})
		xt.bind(t, pod, c.node)
		pod = c.pod("multi")
		// The agent registered as the node's device plugin: the extender binds without the node lock.
		if n, err := env.Client.CoreV1().Nodes().Get(context.Background(), c.node, metav1.GetOptions{}); err != nil ||
			n.Annotations[codec.NodeAllocatorAnnotation] != codec.AllocatorKubectlHAMi {
			t.Fatalf("the agent's Node lacks %s=%s: %v", codec.NodeAllocatorAnnotation, codec.AllocatorKubectlHAMi, err)
		}
		if got := c.lock(); got != "" {
			t.Fatalf("after bind the node lock is %q, want none", got)
		}
		entries := allocatedEntries(t, pod)
		if len(entries) != 4 || len(entries[0]) != 1 || len(entries[1]) != 2 || len(entries[2]) != 0 || len(entries[3]) != 1 {
			t.Fatalf("the extender wrote %q; want 4 entries (init, a, sidecar, c)", pod.Annotations[codec.PodAllocatedAnnotation])
		}
		// Kubelet admits the init container, then the app containers that ask for GPUs.
		order := []struct {
			entry     int
			container string
		}{{0, "setup"}, {1, "a"}, {3, "c"}}
		caches := map[string]bool{}
		for step, o := range order {
			cd := entries[o.entry]
			resp, err := c.kubelet.allocate(len(cd))
			if err != nil {
				t.Fatalf("Allocate for %s: %v", o.container, err)
			}
			env := maps.Clone(resp.Envs)
			cache := env["CUDA_DEVICE_MEMORY_SHARED_CACHE"]
			delete(env, "CUDA_DEVICE_MEMORY_SHARED_CACHE")
			if want := wantEnv(cd, false); !maps.Equal(env, want) {
				t.Errorf("container %s: env %v, want %v", o.container, env, want)
			}
			wantCache := "/usr/local/vgpu/" + string(pod.UID) + "_" + o.container + ".cache"
			if cache != wantCache || caches[cache] {
				t.Errorf("container %s: cache %q, want %q (and one per container)", o.container, cache, wantCache)
			}
			caches[cache] = true
			checkMounts(t, c, resp, string(pod.UID)+"_"+o.container, o.container != "c")

			// The entry is blanked; the others stay for the next containers.
			rest := slices.Clone(entries)
			for _, done := range order[:step+1] {
				rest[done.entry] = nil
			}
			now := c.pod("multi")
			last := step == len(order)-1
			if got, want := now.Annotations[codec.PodToAllocateAnnotation], codec.FormatPodDevices(rest); got != want {
				t.Errorf("after %s: to-allocate %q, want %q", o.container, got, want)
			}
			if now.Annotations[codec.PodAllocatedAnnotation] != pod.Annotations[codec.PodAllocatedAnnotation] {
				t.Errorf("after %s: %s changed", o.container, codec.PodAllocatedAnnotation)
			}
			wantPhase, wantOwner := "allocating", ""
			if last {
				wantPhase = "success"
			}
			if got := now.Annotations[codec.PodBindPhaseAnnotation]; got != wantPhase {
				t.Errorf("after %s: bind-phase %q, want %q", o.container, got, wantPhase)
			}
			if got := c.lockOwner(); got != wantOwner {
				t.Errorf("after %s: node lock owner %q, want %q", o.container, got, wantOwner)
			}
		}
	})

	t.Run("two pods bound at once each get their own entry, in the order kubelet sees them bound", func(t *testing.T) {
		c := startChain(t, env, "dp-two", withCore)
		first := c.createPod("two-first", nil, []ctrSpec{{name: "main", gpus: 1, mem: 1000, cores: 10}})
		second := c.createPod("two-second", nil, []ctrSpec{{name: "main", gpus: 1, mem: 2000, cores: 20}})
		xt.bind(t, first, c.node)
		xt.bind(t, second, c.node) // no lock: it need not wait for the first pod's allocation
		for _, name := range []string{"two-first", "two-second"} {
			entries := allocatedEntries(t, c.pod(name))
			resp, err := c.kubelet.allocate(1)
			if err != nil {
				t.Fatalf("Allocate for %s: %v", name, err)
			}
			env := maps.Clone(resp.Envs)
			delete(env, "CUDA_DEVICE_MEMORY_SHARED_CACHE")
			if want := wantEnv(entries[0], false); !maps.Equal(env, want) {
				t.Errorf("Allocate for %s: env %v, want its own entry's %v", name, env, want)
			}
			if p := c.pod(name); p.Annotations[codec.PodBindPhaseAnnotation] != "success" {
				t.Errorf("%s: bind-phase %q after its allocation", name, p.Annotations[codec.PodBindPhaseAnnotation])
			}
		}
	})

	t.Run("oversubscribed node without HAMi-core: limits as environment, no mounts", func(t *testing.T) {
		c := startChain(t, env, "dp-over", chainConfig{gpus: 1, memMiB: 8192, split: 4, memoryScaling: 2})
		pod := c.createPod("over", nil, []ctrSpec{{name: "main", gpus: 1, mem: 12000, cores: 50}})
		xt.bind(t, pod, c.node)
		entries := allocatedEntries(t, c.pod("over"))
		resp, err := c.kubelet.allocate(1)
		if err != nil {
			t.Fatal(err)
		}
		env := maps.Clone(resp.Envs)
		delete(env, "CUDA_DEVICE_MEMORY_SHARED_CACHE")
		if want := wantEnv(entries[0], true); !maps.Equal(env, want) || entries[0][0].UsedMem != 12000 {
			t.Errorf("env %v, want %v", env, want)
		}
		if len(resp.Mounts) != 0 {
			t.Errorf("mounts %v without HAMi-core on the host", resp.Mounts)
		}
		if p := c.pod("over"); p.Annotations[codec.PodBindPhaseAnnotation] != "success" || c.lock() != "" {
			t.Errorf("bind-phase %q, lock %q", p.Annotations[codec.PodBindPhaseAnnotation], c.lock())
		}
	})

	t.Run("GPUs in mps mode get HAMi-core's environment and mounts, as HAMi v2.10.0 gives them", func(t *testing.T) {
		// HAMi v2.10.0's device plugin does nothing MPS-specific (plugin/mps.go is a no-op at the tag): every mode but
		// mig gets HAMi-core's contract (plugin/server.go:832-897).
		c := startChain(t, env, "dp-mps", chainConfig{gpus: 1, memMiB: 16384, split: 4, memoryScaling: 1, hamiCore: true, operatingMode: "mps"})
		// The device list can reach kubelet before the registration reaches the Node: wait for the latter.
		agenttest.WaitFor(t, 20*time.Second, "the node's registration", func() bool {
			return agenttest.GetNode(t, env, c.node).Annotations[codec.NodeRegisterAnnotation] != ""
		})
		node := agenttest.GetNode(t, env, c.node)
		regs, err := codec.ParseNodeRegister(node.Annotations[codec.NodeRegisterAnnotation])
		if err != nil || len(regs) != 1 || regs[0].Mode != "mps" {
			t.Fatalf("registration %+v (%v); want one GPU in mps mode", regs, err)
		}
		pod := c.createPod("mps", nil, []ctrSpec{{name: "main", gpus: 1, mem: 3000, cores: 25}})
		xt.bind(t, pod, c.node)
		pod = c.pod("mps")
		entries := allocatedEntries(t, pod)
		resp, err := c.kubelet.allocate(1)
		if err != nil {
			t.Fatal(err)
		}
		env := maps.Clone(resp.Envs)
		cache := env["CUDA_DEVICE_MEMORY_SHARED_CACHE"]
		delete(env, "CUDA_DEVICE_MEMORY_SHARED_CACHE")
		if want := wantEnv(entries[0], false); !maps.Equal(env, want) {
			t.Errorf("env %v, want HAMi-core's %v", env, want)
		}
		if want := "/usr/local/vgpu/" + string(pod.UID) + "_main.cache"; cache != want {
			t.Errorf("cache %q, want %q", cache, want)
		}
		checkMounts(t, c, resp, string(pod.UID)+"_main", true)
		if p := c.pod("mps"); p.Annotations[codec.PodBindPhaseAnnotation] != "success" || c.lock() != "" {
			t.Errorf("bind-phase %q, lock %q", p.Annotations[codec.PodBindPhaseAnnotation], c.lock())
		}
	})

	t.Run("a MIG GPU's entry fails Allocate when the GPU source cannot create MIG instances", func(t *testing.T) {
		c := startChain(t, env, "dp-nomig", chainConfig{gpus: 1, memMiB: 81920, split: 10, memoryScaling: 1, mig: true})
		xt.bind(t, c.createPod("m", nil, []ctrSpec{{name: "main", gpus: 1, mem: 4000}}), c.node)
		if c.pod("m").Annotations[codec.PodMigAllocationsAnnotation] == "" {
			t.Fatal("the extender reserved no MIG instance")
		}
		_, err := c.kubelet.allocate(1)
		if want := "node dp-nomig: pod default/m: GPU GPU-dp-nomig-0 is in MIG mode, and this agent's GPU source cannot create MIG instances"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Allocate: %v; want %q", err, want)
		}
		if p := c.pod("m"); p.Annotations[codec.PodBindPhaseAnnotation] != "failed" || c.lock() != "" {
			t.Errorf("bind-phase %q lock %q", p.Annotations[codec.PodBindPhaseAnnotation], c.lock())
		}
	})

	t.Run("Allocate", func(t *testing.T) {
		tests := []struct {
			name    string
			pod     []ctrSpec                  // nil: no pod is bound
			prepare func(c *chain, pod string) // after bind
			devices int                        // what kubelet asks for
			wantErr []string                   // "" parts of the error; nil: success
		}{
			{name: "no pending pod", devices: 1,
				wantErr: []string{"node dp-a0: no pod waits for GPUs on this node"}},
			{name: "mismatched device count", pod: []ctrSpec{{name: "main", gpus: 1, mem: 1000}}, devices: 2,
				wantErr: []string{"node dp-a1: pod default/p1: kubelet allocates 2 nvidia.com/gpu but entry 0 of hami.io/vgpu-devices-to-allocate has 1 GPUs", "bind-phase=failed"}},
			{name: "annotation already consumed", pod: []ctrSpec{{name: "main", gpus: 1, mem: 1000}}, devices: 1,
				prepare: func(c *chain, pod string) { c.patchPod(pod, map[string]any{codec.PodToAllocateAnnotation: ";"}) },
				wantErr: []string{"node dp-a2: pod default/p2: hami.io/vgpu-devices-to-allocate has no container entry left (already consumed"}},
			{name: "annotation missing", pod: []ctrSpec{{name: "main", gpus: 1, mem: 1000}}, devices: 1,
				prepare: func(c *chain, pod string) { c.patchPod(pod, map[string]any{codec.PodToAllocateAnnotation: nil}) },
				wantErr: []string{"node dp-a3: pod default/p3: has no hami.io/vgpu-devices-to-allocate annotation"}},
			{name: "unreadable annotation", pod: []ctrSpec{{name: "main", gpus: 1, mem: 1000}}, devices: 1,
				prepare: func(c *chain, pod string) {
					c.patchPod(pod, map[string]any{codec.PodToAllocateAnnotation: "GPU-x,NVIDIA,lots,0:;"})
				},
				wantErr: []string{"node dp-a4: pod default/p4: ", "is not an integer"}},
			{name: "GPU of another node", pod: []ctrSpec{{name: "main", gpus: 1, mem: 1000}}, devices: 1,
				prepare: func(c *chain, pod string) {
					c.patchPod(pod, map[string]any{codec.PodToAllocateAnnotation: "GPU-elsewhere,NVIDIA,1000,0:;"})
				},
				wantErr: []string{"node dp-a5: pod default/p5: GPU GPU-elsewhere of hami.io/vgpu-devices-to-allocate is not a GPU of this node"}},
			{name: "lock already released: the pod is found by its bind-phase", pod: []ctrSpec{{name: "main", gpus: 1, mem: 1000}}, devices: 1,
				prepare: func(c *chain, _ string) { c.patchNode(map[string]any{codec.NodeLockAnnotation: nil}) }},
			{name: "lock of a deleted pod: the pod is found by its bind-phase", pod: []ctrSpec{{name: "main", gpus: 1, mem: 1000}}, devices: 1,
				prepare: func(c *chain, _ string) {
					c.patchNode(map[string]any{codec.NodeLockAnnotation: "2026-01-01T00:00:00Z,default,gone"})
				}},
		}
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				c := startChain(t, env, fmt.Sprintf("dp-a%d", i), chainConfig{gpus: 1, memMiB: 8192, split: 4, memoryScaling: 1})
				name := fmt.Sprintf("p%d", i)
				if tc.pod != nil {
					xt.bind(t, c.createPod(name, nil, tc.pod), c.node)
					if tc.prepare != nil {
						tc.prepare(c, name)
					}
				}
				lockBefore := c.lock()
				resp, err := c.kubelet.allocate(tc.devices)
				if tc.wantErr == nil {
					if err != nil {
						t.Fatalf("Allocate: %v", err)
					}
					if resp.Envs["NVIDIA_VISIBLE_DEVICES"] != "GPU-"+c.node+"-0" {
						t.Errorf("env %v", resp.Envs)
					}
					if p := c.pod(name); p.Annotations[codec.PodBindPhaseAnnotation] != "success" {
						t.Errorf("bind-phase %q, want success", p.Annotations[codec.PodBindPhaseAnnotation])
					}
					if got := c.lock(); got != lockBefore {
						t.Errorf("the lock changed from %q to %q although the pod did not hold it", lockBefore, got)
					}
					return
				}
				if err == nil {
					t.Fatalf("Allocate succeeded: %v", resp)
				}
				for _, part := range tc.wantErr {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q does not say %q", err, part)
					}
				}
				if tc.pod == nil {
					if c.lock() != lockBefore {
						t.Errorf("the lock changed without a pod: %q", c.lock())
					}
					return
				}
				if p := c.pod(name); p.Annotations[codec.PodBindPhaseAnnotation] != "failed" {
					t.Errorf("bind-phase %q, want failed", p.Annotations[codec.PodBindPhaseAnnotation])
				}
				if got := c.lock(); got != "" {
					t.Errorf("the failed pod's node lock is still there: %q", got)
				}
			})
		}
	})

	t.Run("kubelet restart: the plugin registers again and keeps allocating", func(t *testing.T) {
		c := startChain(t, env, "dp-restart", withCore)
		if n := c.kubelet.registrationCount(); n != 1 {
			t.Fatalf("%d registrations before the restart, want 1", n)
		}
		c.kubelet.restart()
		waitFor(t, 20*time.Second, "a second registration", func() bool { return c.kubelet.registrationCount() == 2 })
		c.kubelet.waitDevices("the device list after the restart", func(d []*pluginapi.Device) bool { return len(d) == 20 })
		if _, err := os.Stat(filepath.Join(c.kubelet.dir, c.kubelet.lastRegistration().Endpoint)); err != nil {
			t.Errorf("the plugin's socket was not recreated: %v", err)
		}
		pod := c.createPod("after-restart", nil, []ctrSpec{{name: "main", gpus: 1, mem: 1000}})
		xt.bind(t, pod, c.node)
		if _, err := c.kubelet.allocate(1); err != nil {
			t.Fatalf("Allocate after the restart: %v", err)
		}
	})

	t.Run("a critical XID turns the GPU's devices unhealthy on ListAndWatch", func(t *testing.T) {
		c := startChain(t, env, "dp-xid", withCore)
		c.src.events <- agent.XIDEvent{UUID: "GPU-dp-xid-1", XID: 79}
		devs := c.kubelet.waitDevices("GPU 1 unhealthy", func(d []*pluginapi.Device) bool {
			return len(d) == 20 && d[10].Health == pluginapi.Unhealthy
		})
		for i, d := range devs {
			want := pluginapi.Healthy
			if i >= 10 {
				want = pluginapi.Unhealthy
			}
			if d.Health != want {
				t.Errorf("device %s: %s, want %s", d.ID, d.Health, want)
			}
		}
		waitFor(t, 20*time.Second, "allocatable nvidia.com/gpu 10 on the Node", func() bool {
			q := agentNodeAllocatable(t, c)
			return q == 10
		})
		// An application XID (43) changes nothing.
		c.src.events <- agent.XIDEvent{UUID: "GPU-dp-xid-0", XID: 43}
		c.kubelet.waitDevices("GPU 0 still healthy", func(d []*pluginapi.Device) bool { return d[0].Health == pluginapi.Healthy })
	})
}

func agentNodeAllocatable(t *testing.T, c *chain) int64 {
	n, err := c.env.Client.CoreV1().Nodes().Get(t.Context(), c.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q := n.Status.Allocatable["nvidia.com/gpu"]
	return q.Value()
}

// checkMounts: HAMi-core's library read-only at /usr/local/vgpu/libvgpu.so, the container's own cache folder (created
// on the host, writable by all) at /usr/local/vgpu, the shared lock folder, and ld.so.preload unless the container
// opts out.
func checkMounts(t *testing.T, c *chain, resp *pluginapi.ContainerAllocateResponse, cacheName string, preload bool) {
	t.Helper()
	got := map[string]*pluginapi.Mount{}
	for _, m := range resp.Mounts {
		got[m.ContainerPath] = m
	}
	type mount struct {
		HostPath string
		ReadOnly bool
	}
	want := map[string]mount{
		"/usr/local/vgpu/libvgpu.so": {HostPath: filepath.Join(c.coreDir, "libvgpu.so"), ReadOnly: true},
		"/usr/local/vgpu":            {HostPath: filepath.Join(c.coreDir, "containers", cacheName)},
		"/tmp/vgpulock":              {HostPath: filepath.Join(c.coreDir, "vgpulock")},
	}
	if preload {
		want["/etc/ld.so.preload"] = mount{HostPath: filepath.Join(c.coreDir, "ld.so.preload"), ReadOnly: true}
	}
	if len(got) != len(want) {
		t.Errorf("mounts %v, want %v", resp.Mounts, want)
	}
	for path, w := range want {
		m := got[path]
		if m == nil || m.HostPath != w.HostPath || m.ReadOnly != w.ReadOnly {
			t.Errorf("mount at %s: %v, want %+v", path, m, w)
			continue
		}
		if !w.ReadOnly {
			if fi, err := os.Stat(m.HostPath); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o777 {
				t.Errorf("host folder %s: %v, %v; want a folder with mode 0777", m.HostPath, fi, err)
			}
		}
	}
}
