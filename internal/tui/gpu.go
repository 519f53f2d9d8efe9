package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// The GPU page: enter on a GPU row of the Node view opens the pods on that GPU (namespace, pod, container
// and what each was given), with the GPU's own facts above. It is drawn from the data of every frame, so it
// stays live; esc goes back to the Node view.

// gpuPage is the page of one GPU, under the Node tab.
type gpuPage struct {
	page
	uuid string // the GPU shown
	off  int    // the scroll offset
}

func newGPUPage(Options) view { return &gpuPage{} }

func (gp *gpuPage) info() viewInfo { return viewInfo{name: "GPU", parent: "Node"} }

// update scrolls the page (keys reach only the focused view).
func (gp *gpuPage) update(m *Model, msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if d := m.scrollKey(k); d != 0 {
			gp.scroll(m, d)
		}
	}
	return nil
}

func (gp *gpuPage) wheel(m *Model, dir int) { gp.scroll(m, dir*wheelStep) }

// gpuOf finds the shown node's GPU by UUID.
func (m *Model) gpuOf(uuid string) (*NodeView, *engine.GPU) {
	n := m.nodeByName(viewOf[*nodeView](m).detail)
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

// lines is the GPU page's whole text.
func (gp *gpuPage) lines(m *Model) []string {
	s := m.styles
	nv := viewOf[*nodeView](m)
	n, g := m.gpuOf(gp.uuid)
	if g == nil {
		return []string{s.dim.Render(fmt.Sprintf("  GPU %s is gone from node %s", gp.uuid, nv.detail))}
	}
	pods := nv.pods[g.UUID]
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
	lines = append(lines, s.bold.Render(fmt.Sprintf("%d %s on this %s", len(pods), word, m.deviceWord([]engine.GPU{*g}))))
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

func (gp *gpuPage) render(m *Model, height int) []string {
	lines := gp.lines(m)
	gp.off = min(gp.off, max(len(lines)-height, 0))
	return lines[gp.off:]
}

func (gp *gpuPage) scroll(m *Model, delta int) {
	gp.off = min(max(gp.off+delta, 0), max(len(gp.lines(m))-m.bodyHeight(), 0))
}
