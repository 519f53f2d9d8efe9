//go:build linux && cgo

package nvmlsource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/agentapi"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// AgentBinEnv names a kubectl-hami binary built with agent.BuildTags; when set, TestRealGPUAgent runs that
// binary's `agent` command (what the DaemonSet runs) instead of the agent in this test process.
const AgentBinEnv = "KUBECTL_HAMI_AGENT_BIN"

// TestRealGPUAgent runs the agent in full mode against this machine's GPUs through the real NVML and a real
// kube-apiserver: it must register every GPU in HAMi's format with NVML's UUID, memory and type, report them
// healthy, and serve /usage, /metrics, /healthz and /readyz with one entry per GPU. It skips where
// libnvidia-ml.so.1 is missing (run it on a GPU node: docs/agent.md "On a real GPU").
func TestRealGPUAgent(t *testing.T) {
	src, err := New(agent.NVMLOptions{Log: agenttest.Logger(t)})
	if errors.Is(err, agent.ErrLibraryNotFound) {
		t.Skip("no libnvidia-ml.so.1 on this machine")
	}
	if err != nil {
		t.Fatal(err)
	}
	checkAgentOnAPIServer(t, src, os.Getenv(AgentBinEnv))
}

// TestMockGPUAgentOnAPIServer runs TestRealGPUAgent's checks on go-nvml's DGX A100 mock, so that they are known
// to pass on a machine like the one they describe before they meet a real GPU.
func TestMockGPUAgentOnAPIServer(t *testing.T) {
	checkAgentOnAPIServer(t, newMockGPUs(t, dgxa100.New()).source(), "")
}

// checkAgentOnAPIServer runs the agent over src (or, when bin is set, bin's agent command over the machine's
// NVML) in full mode on a real kube-apiserver and checks its registration and its HTTP endpoints.
func checkAgentOnAPIServer(t *testing.T, src agent.GPUSource, bin string) {
	gpus, err := src.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) == 0 {
		t.Fatal("NVML lists no GPU")
	}
	env := testenv.Start(t)
	const node = "gpu-real"
	agenttest.CreateNode(t, env, node, nil)
	addr := freeAddr(t)

	if bin != "" {
		_ = src.Close() // the binary opens NVML itself
		runAgentBinary(t, bin, env, node, addr)
	} else {
		// Cleanups run last-in first-out: NVML is shut down after the agent has stopped.
		t.Cleanup(func() { _ = src.Close() })
		o := agent.DefaultOptions()
		o.NodeName, o.Listen, o.ConfigMap, o.RegisterInterval, o.Log = node, addr, "", 2*time.Second, agenttest.Logger(t)
		a, err := agent.New(src, env.Client, o)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}

	agenttest.WaitFor(t, 90*time.Second, "the GPUs' registration", func() bool {
		return len(agenttest.RegisteredGPUs(t, env, node)) == len(gpus)
	})
	n := agenttest.GetNode(t, env, node)
	t.Logf("%s: %s", codec.NodeRegisterAnnotation, n.Annotations[codec.NodeRegisterAnnotation])
	byUUID := map[string]agent.GPU{}
	for _, g := range gpus {
		byUUID[g.UUID] = g
	}
	for _, r := range agenttest.RegisteredGPUs(t, env, node) {
		g, ok := byUUID[r.UUID]
		if !ok {
			t.Errorf("registered GPU %s is not one NVML lists", r.UUID)
			continue
		}
		wantMode := "hami-core"
		if g.MIG {
			wantMode = "mig"
		}
		if !r.Healthy || r.TotalMem != g.MemoryMiB || r.Slots != 10 || r.TotalCores != 100 ||
			r.Type != agent.TypeName(g.Name, false) || r.Mode != wantMode || r.Numa != max(g.NUMA, 0) {
			t.Errorf("GPU %s registered as %+v; NVML says %+v (want healthy, %d MiB, 10 slots, 100 cores, mode %s)",
				r.UUID, r, g, g.MemoryMiB, wantMode)
		}
	}

	var rep agentapi.UsageReport
	if err := json.Unmarshal(get(t, addr, "/usage"), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Node != node || len(rep.GPUs) != len(gpus) {
		t.Fatalf("/usage: node %q with %d GPUs, want %q with %d", rep.Node, len(rep.GPUs), node, len(gpus))
	}
	fams := agenttest.ParseMetrics(t, get(t, addr, "/metrics"))
	for _, u := range rep.GPUs {
		g := byUUID[u.UUID]
		util := "n/a"
		if u.Utilization != nil {
			util = strconv.FormatFloat(*u.Utilization, 'f', 2, 64)
		}
		t.Logf("/usage GPU %d %s %q mode %s healthy %v: %d of %d MiB used, utilisation %s, %d processes, %d MIG instances",
			u.Index, u.UUID, u.Type, u.Mode, u.Healthy, u.MemoryUsedBytes>>20, u.MemoryTotalBytes>>20, util, len(u.Processes), len(u.MigInstances))
		if !u.Healthy || !u.Registered || u.MemoryTotalBytes>>20 < uint64(g.MemoryMiB) || u.MemoryUsedBytes > u.MemoryTotalBytes {
			t.Errorf("/usage GPU %s = %+v", u.UUID, u)
		}
		labels := map[string]string{"node": node, "device_uuid": u.UUID, "device_index": strconv.Itoa(u.Index), "device_type": u.Type}
		for _, m := range []string{agent.MetricMemoryUsed, agent.MetricMemoryTotal, agent.MetricHealthy} {
			if v, ok := agenttest.MetricValue(fams, m, labels); !ok {
				t.Errorf("/metrics has no %s%v", m, labels)
			} else {
				t.Logf("%s{device_index=%q} %v", m, labels["device_index"], v)
			}
		}
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		t.Logf("%s: %s", p, strings.TrimSpace(string(get(t, addr, p))))
	}
}

// runAgentBinary starts `bin agent` against env for node on addr and stops it when the test ends.
func runAgentBinary(t *testing.T, bin string, env *testenv.Env, node, addr string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "agent.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "agent", "--kubeconfig", env.Kubeconfig, "--node-name", node, "--listen", addr,
		"--configmap", "", "--register-interval", "2s")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		_ = logFile.Close()
		b, _ := os.ReadFile(logPath)
		t.Logf("agent log:\n%s", b)
		if strings.Contains(string(b), `"level":"ERROR"`) {
			t.Error("the agent logged an error")
		}
	})
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// get fetches path from the agent's listener, waiting for it to answer 200.
func get(t *testing.T, addr, path string) []byte {
	t.Helper()
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			last = err
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode == http.StatusOK {
			return b
		}
		last = fmt.Errorf("%s: %s", resp.Status, b)
	}
	t.Fatalf("GET %s: %v", path, last)
	return nil
}
