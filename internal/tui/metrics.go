package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/internal/usage"
)

// DefaultMetricsInterval is how often a live UI reads the node agents.
const DefaultMetricsInterval = 5 * time.Second

// noMetricsNote is the header's note while no agent has given numbers.
const noMetricsNote = "live GPU usage: n/a (no agent metrics)"

// Messages of the agents' poll: metricsPollMsg carries a reading (and schedules the next), metricsTickMsg starts
// one. A MetricsMsg sent from outside only replaces the numbers.
type (
	metricsPollMsg struct{ MetricsMsg }
	metricsTickMsg struct{}
)

// agentFetcher reads the agents through the API server's pod proxy.
func agentFetcher(cs kubernetes.Interface, o usage.Options) func(context.Context) MetricsMsg {
	return func(ctx context.Context) MetricsMsg {
		r, err := usage.Fetch(ctx, cs, o)
		return metricsOf(r, err)
	}
}

// metricsOf turns one reading of the agents into the overlay: the GPUs of the agents that answered, the header's
// note (how many answered, the first failure) and each node's agent.
func metricsOf(r *usage.Result, err error) MetricsMsg {
	if err != nil {
		return MetricsMsg{Note: "live GPU usage: n/a (" + strings.Join(strings.Fields(err.Error()), " ") + ")", Warn: true}
	}
	if r == nil || len(r.Agents) == 0 {
		return MetricsMsg{Note: noMetricsNote}
	}
	mm := MetricsMsg{GPUs: map[string]GPUMetrics{}, Nodes: map[string]AgentStatus{}}
	for uuid, g := range r.GPUs() {
		mm.GPUs[uuid] = GPUMetrics{UsedMemMiB: g.UsedMiB, Utilization: g.Utilization}
	}
	for _, a := range r.Agents {
		mm.Nodes[a.Node] = AgentStatus{Pod: a.Pod, Error: a.Error}
		mm.addProcesses(a)
	}
	mm.Answered, mm.Agents = r.Answered(), len(r.Agents)
	mm.Note = fmt.Sprintf("live GPU usage: %d/%d node agents", mm.Answered, mm.Agents)
	if f := r.Failed(); len(f) > 0 {
		mm.Warn = true
		mm.Note = fmt.Sprintf("live GPU usage: %d/%d node agents answered; %s: %s", mm.Answered, mm.Agents, f[0].Node, f[0].Error)
		if len(f) > 1 {
			mm.Note += fmt.Sprintf(" (+%d more)", len(f)-1)
		}
	}
	if mm.Answered == 0 {
		mm.GPUs = nil
	}
	return mm
}

// addProcesses keeps the processes an agent found in pods, by pod.
func (mm *MetricsMsg) addProcesses(a usage.Agent) {
	if a.Usage == nil {
		return
	}
	for _, g := range a.Usage.GPUs {
		if g.Error != "" || g.UUID == "" {
			continue
		}
		for _, mi := range g.MigInstances {
			if mm.Migs == nil {
				mm.Migs = map[string][]MigMetrics{}
			}
			x := MigMetrics{Profile: mi.Profile, Start: mi.Placement.Start, Size: mi.Placement.Size, GPUInst: mi.GPUInstanceID, MigUUID: mi.MigUUID, Busy: mi.Busy}
			if mi.Pod != nil {
				x.Pod = mi.Pod.Namespace + "/" + mi.Pod.Name
			}
			mm.Migs[g.UUID] = append(mm.Migs[g.UUID], x)
		}
		for _, p := range g.Processes {
			if p.Pod == nil || p.Pod.Name == "" {
				continue
			}
			if mm.Pods == nil {
				mm.Pods = map[string][]ProcessMetrics{}
			}
			key := p.Pod.Namespace + "/" + p.Pod.Name
			mm.Pods[key] = append(mm.Pods[key], ProcessMetrics{GPU: g.UUID, PID: p.PID, UsedMemMiB: int64(p.MemoryUsedBytes >> 20)})
		}
	}
}

// pollMetrics reads the agents off the UI goroutine. Each agent has its own timeout (usage.Options); the
// reading as a whole has none, since its length grows with the number of agents, and ends with the UI.
func (m *Model) pollMetrics() tea.Cmd {
	fetch, ctx := m.fetchMetrics, m.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	return func() tea.Msg { return metricsPollMsg{fetch(ctx)} }
}

// nextMetrics waits one interval before the next reading.
func (m *Model) nextMetrics() tea.Cmd {
	return tea.Tick(m.metricsEvery, func(time.Time) tea.Msg { return metricsTickMsg{} })
}

// agentStatus is a node's agent line for the Node view: which pod, and why it has no numbers.
func (c *common) agentStatus(node string) string {
	s := c.styles
	if c.metrics == nil || c.metrics.Nodes == nil {
		return ""
	}
	a, ok := c.metrics.Nodes[node]
	if !ok {
		return s.dim.Render("live usage n/a: no node agent on this node")
	}
	if a.Error != "" {
		return s.warn.Render("live usage n/a: agent " + a.Pod + ": " + a.Error)
	}
	return s.dim.Render("live usage from agent " + a.Pod)
}
