//go:build linux && cgo

package nvmlsource

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// busyMock is the 8-agent.GPU DGX A100 mock with 3 processes on every agent.GPU, two of them in pods (fake /proc).
func busyMock(b *testing.B) *mockGPUs {
	m := newMockGPUs(b, dgxa100.New())
	if err := m.Busy(); err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkScan is one full scan of the 8 GPUs: devices (with NUMA from sysfs), the registration built from them,
// and live usage with every process mapped to its pod through /proc. Target: under 50 ms.
func BenchmarkScan(b *testing.B) {
	for _, mig := range []bool{false, true} {
		b.Run(fmt.Sprintf("8GPUs/mig=%v", mig), func(b *testing.B) {
			m := busyMock(b)
			if mig {
				for _, d := range m.dev {
					d.SetMigMode(nvml.DEVICE_MIG_ENABLE)
				}
			}
			o := agent.DefaultOptions()
			o.NodeName, o.Mode, o.Listen, o.PodLookup, o.UsageMaxAge, o.ProcRoot = "n", agent.RunObserve, "", false, 0, m.ProcRoot
			a, err := agent.New(m.source(), nil, o)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				devs, err := a.Scan(ctx)
				if err != nil || len(devs) != 8 {
					b.Fatal(len(devs), err)
				}
				r, err := a.Usage()
				if err != nil || len(r.GPUs[7].Processes) != 3 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIdleAgent runs the whole agent in full mode against a real API server (registration loop every 50 ms
// instead of 30 s, /metrics and /usage scraped every 100 ms, the pod watch on) for a few seconds, then reports the
// Go heap after a GC and the process's RSS (VmRSS, and the peak VmHWM, of the test binary, which also holds the test
// harness and the API client). Target: under 30 MiB.
func BenchmarkIdleAgent(b *testing.B) {
	env := testenv.Start(b)
	m := busyMock(b)
	createNode(b, env, "idle-node", nil)
	o := agent.DefaultOptions()
	o.NodeName, o.Listen, o.ConfigMap, o.ProcRoot, o.RegisterInterval = "idle-node", "", "", m.ProcRoot, 50*time.Millisecond
	a, err := agent.New(m.source(), env.Client, o)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	scrape := func(path string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	b.ResetTimer()
	for b.Loop() {
		deadline := time.Now().Add(3 * time.Second)
		for time.Now().Before(deadline) {
			scrape("/metrics")
			scrape("/usage")
			time.Sleep(100 * time.Millisecond)
		}
	}
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	const mib = 1 << 20
	b.ReportMetric(float64(ms.HeapInuse)/mib, "heap-inuse-MiB")
	b.ReportMetric(float64(ms.Sys)/mib, "go-sys-MiB")
	b.ReportMetric(statusMiB(b, "/proc/self/status", "VmRSS"), "rss-MiB")
	b.ReportMetric(statusMiB(b, "/proc/self/status", "VmHWM"), "peak-rss-MiB")
}

// statusMiB reads a kB field of a /proc/<pid>/status file in MiB.
func statusMiB(b *testing.B, file, field string) float64 {
	body, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatalf("no %s in %s", field, file)
	return 0
}

// BenchmarkIdleAgentProcess measures the agent alone: it builds testdata/idleagent (the agent in full mode over
// the 8-agent.GPU mock, with the pod watch), runs it as its own process against a real API server with registration
// every 50 ms (instead of 30 s) while /metrics and /usage are scraped every 100 ms, and reports the process's RSS
// (VmRSS, peak VmHWM) and its Go heap in use. Target: RSS under 30 MiB.
func BenchmarkIdleAgentProcess(b *testing.B) {
	bin := b.TempDir() + "/idleagent"
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/idleagent").CombinedOutput(); err != nil {
		b.Fatalf("go build ./testdata/idleagent: %v\n%s", err, out)
	}
	env := testenv.Start(b)
	createNode(b, env, "idle-node", nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--kubeconfig", env.Kubeconfig, "--node", "idle-node", "--listen", addr, "--interval", "50ms")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	get := func(path string) []byte {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return body
	}
	for deadline := time.Now().Add(10 * time.Second); get("/readyz") == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the agent did not start")
		}
	}
	b.ResetTimer()
	for b.Loop() {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			get("/metrics")
			get("/usage")
		}
	}
	b.StopTimer()
	fams := parseMetrics(b, get("/metrics"))
	heap, _ := metricValue(fams, "go_memstats_heap_inuse_bytes", nil)
	patched, _ := metricValue(fams, agent.MetricRegistrations, map[string]string{"result": "patched"})
	unchanged, _ := metricValue(fams, agent.MetricRegistrations, map[string]string{"result": "unchanged"})
	if patched < 1 || unchanged < 10 {
		b.Fatalf("the agent registered %v times and found it unchanged %v times", patched, unchanged)
	}
	const mib = 1 << 20
	b.ReportMetric(heap/mib, "heap-inuse-MiB")
	b.ReportMetric(statusMiB(b, fmt.Sprintf("/proc/%d/status", cmd.Process.Pid), "VmRSS"), "rss-MiB")
	b.ReportMetric(statusMiB(b, fmt.Sprintf("/proc/%d/status", cmd.Process.Pid), "VmHWM"), "peak-rss-MiB")
	// RSS split: anonymous memory (heap, stacks, runtime) and file pages (the mapped binary and libraries).
	b.ReportMetric(statusMiB(b, fmt.Sprintf("/proc/%d/status", cmd.Process.Pid), "RssAnon"), "rss-anon-MiB")
	b.ReportMetric(statusMiB(b, fmt.Sprintf("/proc/%d/status", cmd.Process.Pid), "RssFile"), "rss-file-MiB")
	sys, _ := metricValue(fams, "go_memstats_sys_bytes", nil)
	b.ReportMetric(sys/mib, "go-sys-MiB")
}
