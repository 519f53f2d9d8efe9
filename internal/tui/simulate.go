package tui

import (
	"context"
	"math"
	"time"

	"github.com/kubectl-hami/kubectl-hami/internal/agent/agentapi"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/usage"
)

// Simulated live usage (Options.Simulate, the demo): so that a first-time user sees the live overlay, its
// thresholds and the sort by utilisation without a cluster, the UI makes up the readings a node agent would
// serve, in the agent's own wire type (agentapi.UsageReport inside a usage.Result), and reads them through the
// same path as real ones (metricsOf). Every GPU that has pods uses a share of what it was given that moves
// over time; idle GPUs use nothing. The header says "simulated" whenever these numbers are shown.

// simulateEvery is how often the simulated readings move.
const simulateEvery = 2 * time.Second

const simulatedNote = "live GPU usage: simulated (demo: made-up readings in the node agent's format)"

// simulatedUsage is one round of made-up agent reports for the nodes of d at time t; deterministic in t.
func simulatedUsage(d *Data, t time.Time) *usage.Result {
	r := &usage.Result{}
	phase := float64(t.UnixMilli()%600_000) / 600_000 * 2 * math.Pi * 20 // a few swings a minute
	for _, n := range d.Nodes {
		if !n.Node.Registered || len(n.Node.GPUs) == 0 {
			continue
		}
		rep := &agentapi.UsageReport{Node: n.Name, Time: t.UTC().Format(time.RFC3339Nano)}
		for i, g := range n.Node.GPUs {
			rep.GPUs = append(rep.GPUs, simulatedGPU(g, phase+float64(i)*0.9+float64(len(n.Name))))
		}
		r.Agents = append(r.Agents, usage.Agent{Node: n.Name, Pod: "simulated/" + n.Name, Usage: rep})
	}
	return r
}

func simulatedGPU(g engine.GPU, phase float64) agentapi.GPUUsage {
	const mib = 1 << 20
	wave := 0.5 + 0.5*math.Sin(phase) // 0..1
	used := int64(0)
	util := 0.0
	if g.UsedMem > 0 {
		// Pods use 40-95% of the memory they were given, and keep their cores busy in proportion.
		used = int64(float64(g.UsedMem) * (0.4 + 0.55*wave))
		util = min(float64(g.UsedCores)/100*(0.3+0.7*wave), 1)
	}
	u := agentapi.GPUUsage{Index: g.Index, UUID: g.UUID, Type: g.Type, Mode: g.Mode, Healthy: g.Healthy, Registered: true,
		MemoryUsedBytes: uint64(used) * mib, MemoryTotalBytes: uint64(g.TotalMem) * mib}
	if g.Mode != engine.ModeMIG { // NVML reports no utilisation for a MIG-enabled GPU
		u.Utilization = &util
	}
	return u
}

// simulator is the metrics source of Options.Simulate.
func (m *Model) simulator() func(context.Context) MetricsMsg {
	w, now := m.world, m.now
	return func(context.Context) MetricsMsg {
		mm := metricsOf(simulatedUsage(w.data(), now()), nil)
		mm.Note, mm.Warn = simulatedNote, false
		return mm
	}
}
