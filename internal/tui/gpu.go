package tui

import (
	"fmt"
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// The GPU page: enter on a GPU row of the Node view opens the pods on that GPU (namespace, pod, container
// and what each was given), with the GPU's own facts above. It is drawn from the data of every frame, so it
// stays live; esc goes back to the Node view.

// gpuPage is the page of one GPU, under the Node tab.
type gpuPage struct {
	page
	node, uuid string // the GPU shown and its node
	off        int    // the scroll offset
}

func newGPUPage(Options) view { return &gpuPage{} }

func (gp *gpuPage) info() viewInfo { return viewInfo{name: "GPU", parent: "Node"} }

// update opens a GPU (openGPUMsg) and scrolls the page (keys reach only the focused view).
func (gp *gpuPage) update(c *common, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case openGPUMsg:
		gp.node, gp.uuid, gp.off = msg.node, msg.uuid, 0
	case tea.KeyPressMsg:
		if d := c.scrollKey(msg); d != 0 {
			gp.scroll(c, d)
		}
	}
	return nil
}

func (gp *gpuPage) wheel(c *common, dir int) { gp.scroll(c, dir*wheelStep) }

// gpuOf finds a node's GPU by UUID.
func (c *common) gpuOf(node, uuid string) (*NodeView, *engine.GPU) {
	n := c.nodeByName(node)
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
func (gp *gpuPage) lines(c *common) []string {
	s := c.styles
	n, g := c.gpuOf(gp.node, gp.uuid)
	if g == nil {
		return []string{s.dim.Render(fmt.Sprintf("  GPU %s is gone from node %s", gp.uuid, gp.node))}
	}
	pods := podsOnGPUs(n)[g.UUID]
	lines := []string{
		s.title.Render(fmt.Sprintf("%s #%d %s", n.Name, g.Index, shortType(g.Type))) + s.dim.Render("  (esc back · ↑↓ scroll)"),
		fmt.Sprintf("%s · NUMA %d · state %s", g.UUID, g.Numa, c.gpuState(*g)),
		fmt.Sprintf("memory %d/%d MiB (%d%%) · cores %d/%d%% · slots %d/%d", g.UsedMem, g.TotalMem, percent(g.UsedMem, g.TotalMem),
			g.UsedCores, g.TotalCores, g.UsedSlots, g.Slots),
	}
	if used, util, ok := c.live([]engine.GPU{*g}); ok {
		live := fmt.Sprintf("live: %d MiB used", used)
		if util >= 0 {
			live += fmt.Sprintf(" · %d%% utilisation", util)
		}
		lines = append(lines, s.live.Render(live))
	}
	if h := c.utilHist[g.UUID]; len(h) > 0 {
		lines = append(lines, "utilisation, last "+readings(len(h))+": "+s.live.Render(sparkline(h))+fmt.Sprintf(" (min %d%% max %d%%)", slices.Min(h), slices.Max(h)))
	}
	if g.Mode == engine.ModeMIG {
		lines = append(lines, c.migLines(n, g)...)
	}
	lines = append(lines, "")
	word := "pods"
	if len(pods) == 1 {
		word = "pod"
	}
	lines = append(lines, s.bold.Render(fmt.Sprintf("%d %s on this %s", len(pods), word, c.deviceWord([]engine.GPU{*g}))))
	if len(pods) == 0 {
		return append(lines, s.dim.Render("  no pods: nothing is allocated here"))
	}
	cols := c.podCols()
	cols[4] = cell{6, true} // room for the CORES heading
	lines = append(lines, s.colHeader.Render("  "+line(cols, "NAMESPACE", "POD", "CONTAINER", "ALLOCATED", "CORES", "LIVE")))
	for _, pd := range pods {
		lines = append(lines, "  "+line(cols, pd.Namespace, pd.Pod, pd.Container, fmt.Sprintf("%d MiB", pd.Mem), fmt.Sprintf("%d%%", pd.Cores),
			c.podLive(pd, g.UUID)))
	}
	return lines
}

func (gp *gpuPage) render(c *common, height int) []string {
	lines := gp.lines(c)
	gp.off = min(gp.off, max(len(lines)-height, 0))
	return lines[gp.off:]
}

func (gp *gpuPage) scroll(c *common, delta int) {
	gp.off = min(max(gp.off+delta, 0), max(len(gp.lines(c))-c.bodyHeight(), 0))
}

// readings is "1 reading", "12 readings".
func readings(n int) string {
	if n == 1 {
		return "1 reading"
	}
	return fmt.Sprintf("%d readings", n)
}
