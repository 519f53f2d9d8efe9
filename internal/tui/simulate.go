package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-hami/kubectl-hami/internal/agent/agentapi"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/usage"
)

// Simulated live usage (Options.Simulate, the demo): so that a first-time user sees the live overlay, its
// thresholds and the sort by utilisation without a cluster, the UI makes up the readings a node agent would
// serve, in the agent's own wire type (agent.UsageReport inside a usage.Result), and reads them through the
// same path as real ones (metricsOf). Every GPU that has pods uses a share of what it was given that moves
// over time; idle GPUs use nothing. The header says "simulated" whenever these numbers are shown.

// simulateEvery is how often the simulated readings move.
const simulateEvery = 2 * time.Second

const simulatedNote = "live GPU usage: " + usage.SimulatedNote

// simulatedUsage is one round of made-up agent reports for the nodes of d at time t (usage.Simulate, which
// `top --demo --once` prints too); deterministic in t.
func simulatedUsage(d *Data, t time.Time) *usage.Result {
	nodes := make([]*engine.Node, 0, len(d.Nodes))
	for _, n := range d.Nodes {
		nodes = append(nodes, &n.Node)
	}
	r := usage.Simulate(nodes, t)
	simulateProcesses(r, d)
	simulateMig(r, d, t)
	return r
}

// simulateMig lists, on each MIG GPU, the instances its pods' hami.io/vgpu-mig-allocations name, as the agent
// lists them once its device plugin created them; each is busy half the time.
func simulateMig(r *usage.Result, d *Data, t time.Time) {
	byNode := make(map[string]*NodeView, len(d.Nodes))
	for _, n := range d.Nodes {
		byNode[n.Name] = n
	}
	for _, a := range r.Agents {
		n := byNode[a.Node]
		if n == nil || a.Usage == nil {
			continue
		}
		for i := range a.Usage.GPUs {
			g := &a.Usage.GPUs[i]
			gi := uint32(1)
			for _, p := range n.Pods {
				for _, ma := range p.Mig() {
					if ma.GPUUUID != g.UUID {
						continue
					}
					gi++
					g.MigInstances = append(g.MigInstances, agentapi.MigInstanceUsage{Profile: ma.Profile, Placement: ma.Placement, GPUInstanceID: gi,
						MigUUID: fmt.Sprintf("MIG-%s-%d", strings.TrimPrefix(g.UUID, "GPU-"), gi), Busy: (t.Unix()/int64(simulateEvery.Seconds())+int64(gi))%2 == 0,
						Pod: &agentapi.PodRef{Namespace: p.Namespace, Name: p.Name}})
				}
			}
		}
	}
}

// simulateProcesses gives each pod on a GPU one made-up process, as the agent finds them in the pods' cgroups:
// the GPU's used memory shared in proportion to what each pod was given.
func simulateProcesses(r *usage.Result, d *Data) {
	byNode := make(map[string]*NodeView, len(d.Nodes))
	for _, n := range d.Nodes {
		byNode[n.Name] = n
	}
	pid := uint32(4000)
	for _, a := range r.Agents {
		n := byNode[a.Node]
		if n == nil || a.Usage == nil {
			continue
		}
		on := podsOnGPUs(n)
		for i := range a.Usage.GPUs {
			g := &a.Usage.GPUs[i]
			var given int64
			for _, p := range on[g.UUID] {
				given += p.Mem
			}
			for _, p := range on[g.UUID] {
				if given <= 0 {
					break
				}
				pid++
				g.Processes = append(g.Processes, agentapi.ProcessUsage{PID: pid, MemoryUsedBytes: uint64(float64(g.MemoryUsedBytes) * float64(p.Mem) / float64(given)),
					Pod: &agentapi.PodRef{Namespace: p.Namespace, Name: strings.TrimSuffix(p.Pod, terminatingSuffix)}})
			}
		}
	}
}

// simulator is the metrics source of Options.Simulate.
func (m *Model) simulator() func(context.Context) MetricsMsg {
	w, now := m.store, m.now
	return func(context.Context) MetricsMsg {
		mm := metricsOf(simulatedUsage(w.data(), now()), nil)
		mm.Note, mm.Warn = simulatedNote, false
		return mm
	}
}
