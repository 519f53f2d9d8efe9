package tui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-hami/kubectl-hami/internal/agent/agentapi"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/usage"
)

func fptr(f float64) *float64 { return &f }

// TestMetricsOf: a reading of the agents becomes the overlay, the header's note and each node's agent.
func TestMetricsOf(t *testing.T) {
	if mm := metricsOf(nil, errors.New(`cannot list the agent pods: forbidden`)); mm.GPUs != nil || !mm.Warn ||
		mm.Note != "live GPU usage: n/a (cannot list the agent pods: forbidden)" {
		t.Errorf("list error: %+v", mm)
	}
	if mm := metricsOf(&usage.Result{}, nil); mm.GPUs != nil || mm.Warn || mm.Note != noMetricsNote {
		t.Errorf("no agents: %+v", mm)
	}
	r := &usage.Result{Agents: []usage.Agent{
		{Node: "gpu-a100-01", Pod: "kube-system/agent-1", Usage: &agentapi.UsageReport{Node: "gpu-a100-01", GPUs: []agentapi.GPUUsage{
			{UUID: "GPU-gpu-a100-01-0", MemoryUsedBytes: 40 << 30, MemoryTotalBytes: 80 << 30, Utilization: fptr(0.57)},
			{UUID: "GPU-gpu-a100-01-1", MemoryUsedBytes: 1 << 30, MemoryTotalBytes: 80 << 30},
		}}},
		{Node: "gpu-a100-02", Pod: "kube-system/agent-2", Error: "error trying to reach service: connection refused"},
	}}
	mm := metricsOf(r, nil)
	if mm.Agents != 2 || mm.Answered != 1 || !mm.Warn ||
		mm.Note != "live GPU usage: 1/2 node agents answered; gpu-a100-02: error trying to reach service: connection refused" {
		t.Errorf("partial: %+v", mm)
	}
	if g := mm.GPUs["GPU-gpu-a100-01-0"]; g != (GPUMetrics{UsedMemMiB: 40960, Utilization: 57}) {
		t.Errorf("GPU 0 %+v", g)
	}
	if g := mm.GPUs["GPU-gpu-a100-01-1"]; g != (GPUMetrics{UsedMemMiB: 1024, Utilization: -1}) {
		t.Errorf("GPU 1 %+v", g)
	}
	if mm.Nodes["gpu-a100-02"] != (AgentStatus{Pod: "kube-system/agent-2", Error: "error trying to reach service: connection refused"}) {
		t.Errorf("nodes %+v", mm.Nodes)
	}
	r.Agents = r.Agents[:1]
	if mm := metricsOf(r, nil); mm.Warn || mm.Note != "live GPU usage: 1/1 node agents" {
		t.Errorf("all answered: %+v", mm)
	}
	r.Agents[0] = usage.Agent{Node: "gpu-a100-01", Pod: "kube-system/agent-1", Error: "the agent pod is Pending, not Running"}
	if mm := metricsOf(r, nil); mm.GPUs != nil || !mm.Warn || mm.Nodes["gpu-a100-01"].Error == "" {
		t.Errorf("none answered: %+v", mm)
	}
}

// TestMetricsPoll: a live UI reads the agents at once and then every interval, one reading at a time, and the
// views follow; the demo and snapshots never read.
func TestMetricsPoll(t *testing.T) {
	s, objs := demoObjects(t)
	m, err := New(Options{Snapshot: s, Client: fake.NewClientset(objs...), DeviceConfigMap: snapshot.DefaultDeviceConfigMap,
		Now: func() time.Time { return fixedNow }, NoColor: true, Agents: &usage.Options{}, MetricsInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	if got := screen(m); !strings.Contains(got, "live GPU usage: asking the node agents…") {
		t.Errorf("the first frame does not say the agents are asked:\n%s", got)
	}
	var calls, running, overlap atomic.Int32
	var mu sync.Mutex
	used := int64(40960)
	m.fetchMetrics = func(context.Context) MetricsMsg {
		if running.Add(1) > 1 {
			overlap.Add(1)
		}
		defer running.Add(-1)
		calls.Add(1)
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		return metricsOf(&usage.Result{Agents: []usage.Agent{
			{Node: "gpu-a100-01", Pod: "kube-system/agent-1", Usage: &agentapi.UsageReport{GPUs: []agentapi.GPUUsage{
				{UUID: "GPU-gpu-a100-01-0", MemoryUsedBytes: uint64(used) << 20, Utilization: fptr(0.57)}}}},
			{Node: "gpu-a100-02", Pod: "kube-system/agent-2", Error: "no answer within 5s"},
		}}, nil)
	}
	l := newLoop(t, m)
	l.until("the first reading", func() bool { return m.metrics != nil && m.metrics.Answered == 1 })
	got := screen(m)
	if !strings.Contains(got, "live GPU usage: 1/2 node agents answered; gpu-a100-02: no answer within 5s") {
		t.Errorf("the header does not count the agents:\n%s", got)
	}
	if line := lineWith(got, "#0 A100"); !strings.Contains(line, "40G") || !strings.Contains(line, "57%") {
		t.Errorf("GPU 0 lacks its live numbers: %q", line)
	}
	mu.Lock()
	used = 12288
	mu.Unlock()
	l.until("the next readings", func() bool { return calls.Load() >= 4 && m.metrics.GPUs["GPU-gpu-a100-01-0"].UsedMemMiB == 12288 })
	if line := lineWith(screen(m), "#0 A100"); !strings.Contains(line, "12G") {
		t.Errorf("GPU 0 does not follow the agent: %q", line)
	}
	if overlap.Load() > 0 {
		t.Errorf("%d readings overlapped", overlap.Load())
	}
	press(m, ":", "node gpu-a100-02", "enter")
	if got := screen(m); !strings.Contains(got, "live usage n/a: agent kube-system/agent-2: no answer within 5s") {
		t.Errorf("the Node view does not say why its agent gave nothing:\n%s", got)
	}
	press(m, ":", "node gpu-a100-01", "enter")
	if got := screen(m); !strings.Contains(got, "live usage from agent kube-system/agent-1") {
		t.Errorf("the Node view does not name its agent:\n%s", got)
	}
	press(m, ":", "node gpu-t4-01", "enter")
	if got := screen(m); !strings.Contains(got, "live usage n/a: no node agent on this node") {
		t.Errorf("the Node view of a node without agent:\n%s", got)
	}

	// Not live: no reading, even with agent options.
	d, err := New(Options{Snapshot: demoSnapshot(t), Agents: &usage.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	if d.fetchMetrics != nil || d.metrics != nil {
		t.Error("a static UI reads agents")
	}
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
