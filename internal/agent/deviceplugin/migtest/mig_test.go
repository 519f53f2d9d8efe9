//go:build linux && cgo

package migtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/agentapi"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/deviceplugin"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/deviceplugin/kubelettest"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/nvmlmock"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/nvmlsource"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// migChain is one node whose GPUs are go-nvml's MIG mock, all in MIG mode: the agent reads and registers them
// through the NVML source and creates MIG instances on them at Allocate. The agent can be stopped and started
// again on the same GPUs (a restart).
type migChain struct {
	*node
	kubelet *kubelettest.Kubelet
	coreDir string
	gpus    *nvmlmock.GPUs
	agent   *agent.Agent
	stop    func()
	count   int // virtual devices the plugin lists
}

func startMigChain(t *testing.T, env *testenv.Env, name string, srv *server.Server) *migChain {
	t.Helper()
	g, err := nvmlmock.New(srv, t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.Devices {
		g.EnableMIG(i)
	}
	agenttest.CreateNode(t, env, name, nil)
	sockDir, err := os.MkdirTemp("", "dp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	c := &migChain{node: &node{t: t, env: env, name: name}, coreDir: t.TempDir(), gpus: g, count: 7 * len(g.Devices)}
	c.kubelet = kubelettest.Start(t, sockDir, env.Client, name)
	c.startAgent()
	t.Cleanup(func() { c.stop() })
	return c
}

// startAgent starts the agent with its device plugin over the mock and waits for kubelet to see its devices.
func (c *migChain) startAgent() {
	t := c.t
	t.Helper()
	src, err := nvmlsource.NewFrom(c.gpus.Server, agent.NVMLOptions{SysRoot: c.gpus.SysRoot, EventWait: 50 * time.Millisecond, Log: agenttest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	o := agent.DefaultOptions()
	o.NodeName, o.Listen, o.PodLookup, o.ConfigMap, o.Log = c.name, "", true, "", agenttest.Logger(t)
	o.UsageMaxAge = 0
	dp := deviceplugin.DefaultOptions()
	dp.SocketDir, dp.HamiCoreDir = c.kubelet.Dir, c.coreDir
	dp.PollInterval, dp.RetryInterval, dp.MigReconcileInterval = 20*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond
	o.DevicePlugin = &dp
	a, err := agent.New(src, c.env.Client, o)
	if err != nil {
		t.Fatal(err)
	}
	c.agent = a
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	stopped := false
	c.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent: %v", err)
		}
	}
	c.kubelet.WaitDevices("the plugin's device list", func(d []*pluginapi.Device) bool { return len(d) == c.count })
}

// migAllocations is the pod's hami.io/vgpu-mig-allocations.
func migAllocations(t *testing.T, c *migChain, pod string) []codec.MigAllocation {
	t.Helper()
	as, err := codec.ParseMigAllocations(c.pod(pod).Annotations[codec.PodMigAllocationsAnnotation])
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// gpuIndex is the mock GPU of a UUID.
func (c *migChain) gpuIndex(uuid string) int {
	for i, d := range c.gpus.Devices {
		if d.UUID == uuid {
			return i
		}
	}
	c.t.Fatalf("no mock GPU %s", uuid)
	return -1
}

// instance is the mock's GPU instance at the reservation's placement, nil when there is none.
func (c *migChain) instance(a codec.MigAllocation) *server.GpuInstance {
	for _, gi := range c.gpus.GpuInstances(c.gpuIndex(a.GPUUUID)) {
		if int32(gi.Info.Placement.Start) == a.Placement.Start && int32(gi.Info.Placement.Size) == a.Placement.Size {
			return gi
		}
	}
	return nil
}

// instanceCount is how many GPU instances the mock GPUs hold.
func (c *migChain) instanceCount() int {
	n := 0
	for i := range c.gpus.Devices {
		n += len(c.gpus.GpuInstances(i))
	}
	return n
}

// checkRealized: the reservation has its instance at exactly its placement, of its profile, with one compute
// instance, and the annotation's runtime fields name it.
func (c *migChain) checkRealized(a codec.MigAllocation) {
	t := c.t
	t.Helper()
	gi := c.instance(a)
	if gi == nil {
		t.Fatalf("no GPU instance at [%d,%d) on %s for %+v", a.Placement.Start, a.Placement.Start+a.Placement.Size, a.GPUUUID, a)
	}
	profile := c.gpus.Devices[c.gpuIndex(a.GPUUUID)].Config.MIGProfiles.GpuInstanceProfiles[int(gi.Info.ProfileId)]
	if want := strings.SplitN(a.Profile, "g.", 2)[0]; fmt.Sprint(profile.SliceCount) != want {
		t.Errorf("GPU instance %d has %d slices, want profile %s", gi.Info.Id, profile.SliceCount, a.Profile)
	}
	if len(gi.ComputeInstances) != 1 {
		t.Errorf("GPU instance %d has %d compute instances, want 1", gi.Info.Id, len(gi.ComputeInstances))
	}
	if a.MigUUID != c.gpus.MigUUID(c.gpuIndex(a.GPUUUID), gi.Info.Id) || a.GPUInstanceID == nil || *a.GPUInstanceID != gi.Info.Id ||
		a.ComputeInstanceID == nil {
		t.Errorf("runtime fields of %+v do not name GPU instance %d (%s)", a, gi.Info.Id, c.gpus.MigUUID(c.gpuIndex(a.GPUUUID), gi.Info.Id))
	}
	for ci := range gi.ComputeInstances {
		if a.ComputeInstanceID != nil && *a.ComputeInstanceID != ci.Info.Id {
			t.Errorf("computeInstanceID %d, the instance's is %d", *a.ComputeInstanceID, ci.Info.Id)
		}
	}
}

// forContainer are the reservations of one container (its index among init then app containers).
func forContainer(as []codec.MigAllocation, ci int) []codec.MigAllocation {
	var out []codec.MigAllocation
	for _, a := range as {
		if a.ContainerIndex == ci {
			out = append(out, a)
		}
	}
	return out
}

func migUUIDs(as []codec.MigAllocation) string {
	var out []string
	for _, a := range as {
		out = append(out, a.MigUUID)
	}
	return strings.Join(out, ",")
}

// TestMigDevicePlugin runs MIG pods through the real extender and the agent's device plugin on go-nvml's DGX A100
// and H100 mocks: every container gets the MIG instances the extender chose, at their placements, and the runtime
// fields are written back as HAMi v2.10.0 writes them.
func TestMigDevicePlugin(t *testing.T) {
	env := testenv.Start(t)
	xt := startExtender(t, env)

	for _, tc := range []struct {
		name string
		srv  *server.Server
	}{
		{"dgxa100, two containers on one GPU", dgxa100.NewWithGPUs(gpus.A100_SXM4_40GB)},
		{"dgxh100, two GPUs", dgxh100.NewWithGPUs(gpus.H100_SXM5_80GB, gpus.H100_SXM5_80GB)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startMigChain(t, env, "mig-"+strings.Split(tc.name, ",")[0], tc.srv)
			pod := c.createPod("two", []ctrSpec{{name: "a", gpus: 1, mem: 4000}, {name: "sidecar"}, {name: "b", gpus: 1, mem: 9000}})
			xt.bind(t, pod, c.name)
			before := migAllocations(t, c, "two")
			if len(before) != 2 || before[0].ContainerIndex != 0 || before[1].ContainerIndex != 2 {
				t.Fatalf("the extender reserved %+v; want one MIG device for containers 0 and 2", before)
			}
			for step, ci := range []int{0, 2} {
				resp, err := c.kubelet.Allocate(1)
				if err != nil {
					t.Fatalf("Allocate for container %d: %v", ci, err)
				}
				as := migAllocations(t, c, "two")
				mine := forContainer(as, ci)
				c.checkRealized(mine[0])
				want := map[string]string{"NVIDIA_VISIBLE_DEVICES": migUUIDs(mine)}
				if !mapsEqual(resp.Envs, want) || len(resp.Mounts) != 0 {
					t.Errorf("container %d: env %v mounts %v, want only %v (HAMi gives MIG containers no HAMi-core)", ci, resp.Envs, resp.Mounts, want)
				}
				// The scheduler's fields are untouched; the other container's runtime fields come with its Allocate.
				for i, a := range as {
					b := before[i]
					if a.GPUUUID != b.GPUUUID || a.Profile != b.Profile || a.Placement != b.Placement || a.ContainerIndex != b.ContainerIndex {
						t.Errorf("reservation %d changed from %+v to %+v", i, b, a)
					}
					if done := a.ContainerIndex == 0 || step == 1; done != (a.MigUUID != "") {
						t.Errorf("after step %d reservation %d: %+v", step, i, a)
					}
				}
				// The agent as device plugin registers hami.io/node-nvidia-allocator, so the extender binds
				// without HAMi's node lock: no step holds one.
				phase, owner := "allocating", ""
				if step == 1 {
					phase = "success"
				}
				if got := c.pod("two").Annotations[codec.PodBindPhaseAnnotation]; got != phase {
					t.Errorf("bind-phase %q, want %q", got, phase)
				}
				if got := c.lockOwner(); got != owner {
					t.Errorf("lock owner %q, want %q", got, owner)
				}
			}
			if n := c.instanceCount(); n != 2 {
				t.Errorf("%d GPU instances, want 2", n)
			}
			c.checkUsage(migAllocations(t, c, "two"), "two")

			// The pod is deleted: its instances go, unless a process still runs on one.
			as := migAllocations(t, c, "two")
			busy := as[1]
			c.gpus.SetMigProcesses(c.gpuIndex(busy.GPUUUID), *busy.GPUInstanceID, nvml.ProcessInfo{Pid: 4242, UsedGpuMemory: 1 << 30})
			c.deletePod("two")
			waitFor(t, 20*time.Second, "the idle instance destroyed", func() bool { return c.instance(as[0]) == nil })
			time.Sleep(200 * time.Millisecond) // several reconciliations
			if c.instance(busy) == nil {
				t.Fatal("the instance a process runs on was destroyed")
			}
			c.gpus.SetMigProcesses(c.gpuIndex(busy.GPUUUID), *busy.GPUInstanceID)
			waitFor(t, 20*time.Second, "the instance destroyed once its process ended", func() bool { return c.instanceCount() == 0 })
		})
	}

	t.Run("one container with MIG devices on two GPUs", func(t *testing.T) {
		c := startMigChain(t, env, "mig-pair", dgxh100.NewWithGPUs(gpus.H100_SXM5_80GB, gpus.H100_SXM5_80GB))
		// 50000 MiB is the whole GPU's profile: HAMi's walk takes a MIG GPU again while it holds another instance.
		xt.bind(t, c.createPod("pair", []ctrSpec{{name: "a", gpus: 2, mem: 50000}}), c.name)
		resp, err := c.kubelet.Allocate(2)
		if err != nil {
			t.Fatal(err)
		}
		as := migAllocations(t, c, "pair")
		if len(as) != 2 || as[0].DeviceIndex != 0 || as[1].DeviceIndex != 1 || as[0].GPUUUID == as[1].GPUUUID {
			t.Fatalf("reservations %+v; want devices 0 and 1 on two GPUs", as)
		}
		c.checkRealized(as[0])
		c.checkRealized(as[1])
		if got, want := resp.Envs["NVIDIA_VISIBLE_DEVICES"], as[0].MigUUID+","+as[1].MigUUID; got != want {
			t.Errorf("NVIDIA_VISIBLE_DEVICES %q, want %q (device order)", got, want)
		}
		if got := c.pod("pair").Annotations[codec.PodBindPhaseAnnotation]; got != "success" {
			t.Errorf("bind-phase %q", got)
		}
	})

	// HAMi v2.10.0's Fit takes a MIG GPU again after taking it (pkg/device/nvidia/device.go:846-848), so the
	// extender may give one container two instances of one GPU: each reservation gets its own instance.
	t.Run("one container with two MIG instances of one GPU", func(t *testing.T) {
		c := startMigChain(t, env, "mig-same", dgxa100.NewWithGPUs(gpus.A100_SXM4_40GB))
		xt.bind(t, c.createPod("same", []ctrSpec{{name: "a", gpus: 2, mem: 4000}}), c.name)
		resp, err := c.kubelet.Allocate(2)
		if err != nil {
			t.Fatal(err)
		}
		as := migAllocations(t, c, "same")
		if len(as) != 2 || as[0].DeviceIndex != 0 || as[1].DeviceIndex != 1 || as[0].GPUUUID != as[1].GPUUUID || as[0].Placement == as[1].Placement {
			t.Fatalf("reservations %+v; want devices 0 and 1 on one GPU at two placements", as)
		}
		c.checkRealized(as[0])
		c.checkRealized(as[1])
		if as[0].MigUUID == as[1].MigUUID {
			t.Errorf("both reservations got MIG device %s", as[0].MigUUID)
		}
		if got, want := resp.Envs["NVIDIA_VISIBLE_DEVICES"], as[0].MigUUID+","+as[1].MigUUID; got != want {
			t.Errorf("NVIDIA_VISIBLE_DEVICES %q, want %q (device order)", got, want)
		}
		if n := c.instanceCount(); n != 2 {
			t.Errorf("%d GPU instances, want 2", n)
		}
	})

	t.Run("an agent restart between two containers keeps every assignment", func(t *testing.T) {
		c := startMigChain(t, env, "mig-restart", dgxa100.NewWithGPUs(gpus.A100_SXM4_40GB))
		xt.bind(t, c.createPod("r", []ctrSpec{{name: "a", gpus: 1, mem: 4000}, {name: "b", gpus: 1, mem: 4000}}), c.name)
		if _, err := c.kubelet.Allocate(1); err != nil {
			t.Fatal(err)
		}
		first := forContainer(migAllocations(t, c, "r"), 0)[0]
		c.checkRealized(first)

		// While the agent is down, an instance appears that no pod holds (the pod it was made for was deleted
		// meanwhile): the restarted agent destroys it.
		c.stop()
		stray := c.strayInstance(0, 6)
		c.startAgent()
		waitFor(t, 20*time.Second, "the stray instance destroyed", func() bool {
			return !slices.Contains(c.gpus.GpuInstances(0), stray)
		})
		// "r" is still allocating: the restarted plugin finds it again and gives its second container its instance.
		resp, err := c.kubelet.Allocate(1)
		if err != nil {
			t.Fatalf("Allocate after the restart: %v", err)
		}
		as := migAllocations(t, c, "r")
		c.checkRealized(as[0])
		c.checkRealized(as[1])
		if as[0] != first && (as[0].MigUUID != first.MigUUID || *as[0].GPUInstanceID != *first.GPUInstanceID) {
			t.Errorf("the first container's instance changed across the restart: %+v, was %+v", as[0], first)
		}
		if resp.Envs["NVIDIA_VISIBLE_DEVICES"] != as[1].MigUUID {
			t.Errorf("env %v, want %s", resp.Envs, as[1].MigUUID)
		}
		time.Sleep(200 * time.Millisecond)
		if n := c.instanceCount(); n != 2 {
			t.Errorf("%d GPU instances after the restart, want the 2 of pod r", n)
		}
	})

	t.Run("reservations that do not match the entry fail Allocate and leave no instance", func(t *testing.T) {
		c := startMigChain(t, env, "mig-bad", dgxa100.NewWithGPUs(gpus.A100_SXM4_40GB))
		for i, tc := range []struct {
			name  string
			edit  func(as []codec.MigAllocation) any // the new hami.io/vgpu-mig-allocations (nil removes it)
			wants string
		}{
			{"no reservations", func([]codec.MigAllocation) any { return nil }, "is in MIG mode but the pod has no hami.io/vgpu-mig-allocations"},
			{"a reservation of another container", func(as []codec.MigAllocation) any {
				as[0].ContainerIndex = 3
				return codec.FormatMigAllocations(as)
			}, "hami.io/vgpu-mig-allocations has 0 MIG reservations for container 0, but its entry 0 of hami.io/vgpu-devices-to-allocate has 1 GPUs"},
			{"a reservation on another GPU", func(as []codec.MigAllocation) any {
				as[0].GPUUUID = "GPU-elsewhere"
				return codec.FormatMigAllocations(as)
			}, "MIG reservation 0 of hami.io/vgpu-mig-allocations is on GPU GPU-elsewhere"},
			{"a profile the GPU does not offer", func(as []codec.MigAllocation) any {
				as[0].Profile = "9g.99gb"
				return codec.FormatMigAllocations(as)
			}, "offers no MIG profile \"9g.99gb\""},
			{"a placement NVML does not offer", func(as []codec.MigAllocation) any {
				as[0].Placement = codec.MigPlacement{Start: 1, Size: 2}
				return codec.FormatMigAllocations(as)
			}, "cannot be placed at slices [1,3)"},
		} {
			name := fmt.Sprintf("bad%d", i)
			xt.bind(t, c.createPod(name, []ctrSpec{{name: "a", gpus: 1, mem: 9000}}), c.name)
			c.patchPod(name, map[string]any{codec.PodMigAllocationsAnnotation: tc.edit(migAllocations(t, c, name))})
			_, err := c.kubelet.Allocate(1)
			if err == nil || !strings.Contains(err.Error(), "pod default/"+name+": ") || !strings.Contains(err.Error(), tc.wants) {
				t.Errorf("%s: Allocate: %v; want an error saying %q", tc.name, err, tc.wants)
			}
			if p := c.pod(name); p.Annotations[codec.PodBindPhaseAnnotation] != "failed" || c.lock() != "" {
				t.Errorf("%s: bind-phase %q lock %q", tc.name, p.Annotations[codec.PodBindPhaseAnnotation], c.lock())
			}
			if n := c.instanceCount(); n != 0 {
				t.Errorf("%s: %d GPU instances left", tc.name, n)
			}
			c.deletePod(name)
		}
	})

	t.Run("a placement that conflicts with an existing instance is refused and destroys nothing", func(t *testing.T) {
		c := startMigChain(t, env, "mig-conflict", dgxa100.NewWithGPUs(gpus.A100_SXM4_40GB))
		xt.bind(t, c.createPod("holder", []ctrSpec{{name: "a", gpus: 1, mem: 4000}}), c.name)
		if _, err := c.kubelet.Allocate(1); err != nil {
			t.Fatal(err)
		}
		held := migAllocations(t, c, "holder")[0]
		c.checkRealized(held)

		// The scheduler's view went wrong: the next pod is placed over the holder's slices, with a bigger profile.
		xt.bind(t, c.createPod("late", []ctrSpec{{name: "a", gpus: 1, mem: 9000}}), c.name)
		as := migAllocations(t, c, "late")
		as[0].Placement = codec.MigPlacement{Start: held.Placement.Start - held.Placement.Start%2, Size: 2}
		c.patchPod("late", map[string]any{codec.PodMigAllocationsAnnotation: codec.FormatMigAllocations(as)})
		_, err := c.kubelet.Allocate(1)
		if err == nil {
			t.Fatal("Allocate succeeded over another pod's instance")
		}
		for _, part := range []string{"node mig-conflict: pod default/late: MIG placement " + as[0].Profile, "conflicts with MIG instance " + held.Profile,
			"held by pod default/holder; nothing was destroyed", "hami.io/bind-phase=failed"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("error %q does not say %q", err, part)
			}
		}
		if p := c.pod("late"); p.Annotations[codec.PodBindPhaseAnnotation] != "failed" || c.lock() != "" {
			t.Errorf("bind-phase %q lock %q; want failed and released", p.Annotations[codec.PodBindPhaseAnnotation], c.lock())
		}
		c.checkRealized(held)
		if n := c.instanceCount(); n != 1 {
			t.Errorf("%d GPU instances, want only the holder's", n)
		}

		// An instance no pod holds but a process uses is not destroyed either, and refuses the placement too.
		// The process starts before the pods go, so no reconcile in between can find the instance idle.
		c.gpus.SetMigProcesses(0, *held.GPUInstanceID, nvml.ProcessInfo{Pid: 7, UsedGpuMemory: 1 << 20})
		c.deletePod("late")
		c.deletePod("holder")
		xt.bind(t, c.createPod("third", []ctrSpec{{name: "a", gpus: 1, mem: 4000}}), c.name)
		as = migAllocations(t, c, "third")
		as[0].Placement = held.Placement
		c.patchPod("third", map[string]any{codec.PodMigAllocationsAnnotation: codec.FormatMigAllocations(as)})
		if _, err := c.kubelet.Allocate(1); err == nil || !strings.Contains(err.Error(), "that no other pod holds but processes run on it; nothing was destroyed") {
			t.Errorf("Allocate over a busy instance: %v", err)
		}
		c.checkRealized(held)
	})
}

// strayInstance creates a 1-slice GPU instance with its compute instance at slice start of GPU i, as a pod's
// instance left behind would be.
func (c *migChain) strayInstance(i int, start uint32) *server.GpuInstance {
	c.t.Helper()
	dev := c.gpus.Devices[i]
	info, ret := dev.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_1_SLICE)
	if ret != nvml.SUCCESS {
		c.t.Fatal(ret)
	}
	gi, ret := dev.CreateGpuInstanceWithPlacement(&info, &nvml.GpuInstancePlacement{Start: start, Size: 1})
	if ret != nvml.SUCCESS {
		c.t.Fatal(ret)
	}
	ciInfo, ret := gi.GetComputeInstanceProfileInfo(nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if ret != nvml.SUCCESS {
		c.t.Fatal(ret)
	}
	if _, ret := gi.CreateComputeInstance(&ciInfo); ret != nvml.SUCCESS {
		c.t.Fatal(ret)
	}
	return gi.(*server.GpuInstance)
}

// checkUsage: the agent's live usage lists exactly the reservations' instances on their GPUs, each with the pod.
func (c *migChain) checkUsage(as []codec.MigAllocation, pod string) {
	t := c.t
	t.Helper()
	want := map[string]agentapi.MigInstanceUsage{}
	for _, a := range as {
		ci := *a.ComputeInstanceID
		want[a.MigUUID] = agentapi.MigInstanceUsage{Profile: a.Profile, Placement: a.Placement, GPUInstanceID: *a.GPUInstanceID,
			ComputeInstanceID: &ci, MigUUID: a.MigUUID, Pod: &agentapi.PodRef{Namespace: testNamespace, Name: pod, UID: c.pod(pod).UID}}
	}
	var last string
	ok := false
	for range 100 {
		r, err := c.agent.Usage()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]agentapi.MigInstanceUsage{}
		for _, g := range r.GPUs {
			for _, m := range g.MigInstances {
				if g.UUID != c.gpus.Devices[c.gpuIndex(g.UUID)].UUID || g.Mode != "mig" {
					t.Errorf("GPU %s (%s) lists %+v", g.UUID, g.Mode, m)
				}
				got[m.MigUUID] = m
			}
		}
		if ok = reflect.DeepEqual(got, want); ok {
			break
		}
		b, _ := json.Marshal(got)
		last = string(b)
		time.Sleep(20 * time.Millisecond)
	}
	if !ok {
		w, _ := json.Marshal(want)
		t.Errorf("usage lists the MIG instances %s, want %s", last, w)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	return !slices.ContainsFunc(keys, func(k string) bool { return a[k] != b[k] })
}
