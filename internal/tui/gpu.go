package tui

import (
	"fmt"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// The GPU page: enter on a GPU row of the Node view opens the pods on that GPU (namespace, pod, container
// and what each was given), with the GPU's own facts above. It is drawn from the data of every frame, so it
// stays live; esc goes back to the Node view.

// openGPU shows the GPU under the Node view's cursor.
func (m *Model) openGPU() {
	if uuid := m.node.selectedKey(); uuid != "" {
		m.gpuUUID, m.gpuOff = uuid, 0
		m.switchTo(viewGPU)
	}
}

// gpuOf finds the shown node's GPU by UUID.
func (m *Model) gpuOf(uuid string) (*NodeView, *engine.GPU) {
	n := m.nodeByName(m.detail)
	if n == nil {
		return nil, nil
	}
	for i := range n.Node.GPUs {
		if n.Node.GPUs[i].UUID == uuid {
			return n, &n.Node.GPUs[i]
		}
	}
	return n, nil
}

// gpuLines is the GPU page's whole text.
func (m *Model) gpuLines() []string {
	s := m.styles
	n, g := m.gpuOf(m.gpuUUID)
	if g == nil {
		return []string{s.dim.Render(fmt.Sprintf("  GPU %s is gone from node %s", m.gpuUUID, m.detail))}
	}
	pods := m.detailPods[g.UUID]
	lines := []string{
		s.title.Render(fmt.Sprintf("%s #%d %s", n.Name, g.Index, shortType(g.Type))) + s.dim.Render("  (esc back · ↑↓ scroll)"),
		fmt.Sprintf("%s · NUMA %d · state %s", g.UUID, g.Numa, m.gpuState(*g)),
		fmt.Sprintf("memory %d/%d MiB (%d%%) · cores %d/%d%% · slots %d/%d", g.UsedMem, g.TotalMem, percent(g.UsedMem, g.TotalMem),
			g.UsedCores, g.TotalCores, g.UsedSlots, g.Slots),
	}
	if used, util, ok := m.live([]engine.GPU{*g}); ok {
		live := fmt.Sprintf("live: %d MiB used", used)
		if util >= 0 {
			live += fmt.Sprintf(" · %d%% utilisation", util)
		}
		lines = append(lines, s.live.Render(live))
	}
	lines = append(lines, "")
	word := "pods"
	if len(pods) == 1 {
		word = "pod"
	}
	lines = append(lines, s.bold.Render(fmt.Sprintf("%d %s on this GPU", len(pods), word)))
	if len(pods) == 0 {
		return append(lines, s.dim.Render("  no pods: nothing is allocated here"))
	}
	cols := m.podCols()
	cols[len(cols)-1] = cell{6, true} // room for the CORES heading
	lines = append(lines, s.colHeader.Render("  "+line(cols, "NAMESPACE", "POD", "CONTAINER", "MEMORY", "CORES")))
	for _, pd := range pods {
		lines = append(lines, "  "+line(cols, pd.Namespace, pd.Pod, pd.Container, fmt.Sprintf("%d MiB", pd.Mem), fmt.Sprintf("%d%%", pd.Cores)))
	}
	return lines
}

func (m *Model) renderGPU(height int) []string {
	lines := m.gpuLines()
	m.gpuOff = min(m.gpuOff, max(len(lines)-height, 0))
	return lines[m.gpuOff:]
}

func (m *Model) scrollGPU(delta int) {
	m.gpuOff = min(max(m.gpuOff+delta, 0), max(len(m.gpuLines())-m.bodyHeight(), 0))
}
