//go:build linux && cgo

package migtest

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/deviceplugin"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/deviceplugin/kubelettest"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/nvmlmock"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/nvmlsource"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestDevicePluginOnGPUs runs the whole chain on GPUs without MIG: the agent as device plugin over an NVML source,
// a fake kubelet, and the real extender binding a pod that asks for one GPU with 4000 MiB; Allocate must hand the
// container that GPU with HAMi-core's environment and end the bind in success. "real NVML" reads this machine's
// GPUs (skipped where libnvidia-ml.so.1 is missing: run it on a GPU node, hack/gpu-check.sh); "dgxa100 mock" runs
// the same checks here.
func TestDevicePluginOnGPUs(t *testing.T) {
	env := testenv.Start(t)
	xt := startExtender(t, env)
	t.Run("dgxa100 mock", func(t *testing.T) {
		g, err := nvmlmock.New(dgxa100.New(), t.TempDir(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		src, err := nvmlsource.NewFrom(g.Server, agent.NVMLOptions{SysRoot: g.SysRoot, EventWait: 50 * time.Millisecond, Log: agenttest.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		checkDevicePlugin(t, env, xt, "gpu-mock", src)
	})
	t.Run("real NVML", func(t *testing.T) {
		src, err := nvmlsource.New(agent.NVMLOptions{Log: agenttest.Logger(t)})
		if errors.Is(err, agent.ErrLibraryNotFound) {
			t.Skip("no libnvidia-ml.so.1 on this machine")
		}
		if err != nil {
			t.Fatal(err)
		}
		checkDevicePlugin(t, env, xt, "gpu-real", src)
	})
}

func checkDevicePlugin(t *testing.T, env *testenv.Env, xt *liveExtender, name string, src agent.GPUSource) {
	t.Cleanup(func() { _ = src.Close() }) // registered first, so it runs after the agent has stopped
	gpus, err := src.Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gpus {
		if g.MIG {
			t.Skipf("GPU %s is in MIG mode; this test needs a GPU without MIG (it never changes the mode)", g.UUID)
		}
	}
	agenttest.CreateNode(t, env, name, nil)
	sockDir, err := os.MkdirTemp("", "dp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	kubelet := kubelettest.Start(t, sockDir, env.Client, name)

	o := agent.DefaultOptions()
	o.NodeName, o.Listen, o.ConfigMap, o.Log = name, "", "", agenttest.Logger(t)
	dp := deviceplugin.DefaultOptions()
	dp.SocketDir, dp.HamiCoreDir = kubelet.Dir, t.TempDir()
	dp.PollInterval, dp.RetryInterval = 20*time.Millisecond, 50*time.Millisecond
	o.DevicePlugin = &dp
	a, err := agent.New(src, env.Client, o)
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
	devs := kubelet.WaitDevices("the plugin's device list", func(d []*pluginapi.Device) bool { return len(d) == 10*len(gpus) })
	t.Logf("ListAndWatch: %d virtual devices for %d GPUs, first %s %s", len(devs), len(gpus), devs[0].ID, devs[0].Health)

	n := &node{t: t, env: env, name: name}
	podName := "one-" + name
	pod := n.createPod(podName, []ctrSpec{{name: "main", gpus: 1, mem: 4000}})
	xt.bind(t, pod, name)
	resp, err := kubelet.Allocate(1)
	if err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	got := n.pod(podName).Annotations
	alloc, err := codec.ParsePodDevices(codec.PodAllocatedAnnotation, got[codec.PodAllocatedAnnotation])
	if err != nil || len(alloc) != 1 || len(alloc[0]) != 1 {
		t.Fatalf("%s = %q: %v", codec.PodAllocatedAnnotation, got[codec.PodAllocatedAnnotation], err)
	}
	d := alloc[0][0]
	want := map[string]string{
		"NVIDIA_VISIBLE_DEVICES":     d.UUID,
		"CUDA_DEVICE_MEMORY_LIMIT_0": strconv.FormatInt(d.UsedMem, 10) + "m",
		"CUDA_DEVICE_SM_LIMIT":       strconv.FormatInt(d.UsedCores, 10),
	}
	env2 := map[string]string{}
	for k, v := range resp.Envs {
		if k != "CUDA_DEVICE_MEMORY_SHARED_CACHE" {
			env2[k] = v
		}
	}
	t.Logf("Allocate: env %v, %d mounts", resp.Envs, len(resp.Mounts))
	if !mapsEqual(env2, want) || d.UsedMem != 4000 || resp.Envs["CUDA_DEVICE_MEMORY_SHARED_CACHE"] == "" {
		t.Errorf("Allocate env %v, want %v and a cache path (GPU %s with 4000 MiB)", resp.Envs, want, d.UUID)
	}
	if phase := got[codec.PodBindPhaseAnnotation]; phase != "success" {
		t.Errorf("bind-phase %q, want success", phase)
	}
}
