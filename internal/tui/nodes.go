package tui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// nodesView is the Nodes tab: every node with a per-GPU allocation bar under it (c: compact, one line a
// node). Its selection is the node the Node view shows.
type nodesView struct {
	tableView
	compact  bool
	followed string // the selection last told to the Node view
	narrow   bool   // the STATE column is short: a legend line under the table (abbrev.go)
}

// compactKey switches the Nodes view between one line a node and a line per GPU.
var compactKey = key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "compact/full"))

func newNodesView(Options) view {
	return &nodesView{tableView: tableView{t: newTable(sortCol{"name", false}, sortCol{"memory", true}, sortCol{"cores", true},
		sortCol{"slots", true}, sortCol{"pods", true}, sortCol{"gpus", true}, sortCol{"util", true})}}
}

func (v *nodesView) info() viewInfo {
	return viewInfo{name: "Nodes", commands: []string{"nodes", "no", "gpus", "gpu"}, drill: [2]string{"a node", "its GPUs"},
		keys: []key.Binding{compactKey}, headLines: 1, footLines: legendLines(v.narrow), live: true}
}

// legendLines is the line a view keeps under its table for the legend of short states, at narrow widths.
func legendLines(narrow bool) int {
	if narrow {
		return 1
	}
	return 0
}

// narrowState is whether the STATE column is short at the width (nodesLayout is not wide).
func (c *common) narrowState() bool { return c.width-2 < 110 }

func (v *nodesView) setData(c *common) { v.t.setRowsFrom(v.nodeRows(c)) }

func (v *nodesView) update(c *common, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case nodeSelectedMsg:
		if msg.clear {
			v.t.setFilter("")
			v.t.selectKey(msg.node)
		}
		return nil
	case tea.KeyPressMsg:
		if key.Matches(msg, compactKey) {
			v.compact = !v.compact
			v.setData(c)
		} else {
			v.move(c, msg)
		}
	default:
		v.move(c, msg)
	}
	return nil
}

// names are the node names, for `:nodes NAME`.
func (v *nodesView) names(c *common) []string { return nodeNames(c) }

// layout tells the Node view when the node selected here changed (a key, a click, the wheel, the filter).
func (v *nodesView) layout(c *common) {
	v.narrow = c.narrowState()
	if sel := v.t.selectedKey(); sel != "" && sel != v.followed {
		v.followed = sel
		c.send(nodeSelectedMsg{node: sel})
	}
}

// drill opens the selected node's GPUs in the Node view.
func (v *nodesView) drill(c *common) tea.Cmd {
	if sel := v.t.selectedKey(); sel != "" {
		c.send(openNodeMsg{node: sel})
		c.send(show("Node"))
	}
	return nil
}

// cell is one column of a line: its width and alignment. A width of -1 takes what is left of the line.
type cell struct {
	w     int
	right bool
}

// line joins cells with one space, each cut or padded to its width.
func line(cols []cell, vals ...string) string {
	var b strings.Builder
	for i, c := range cols {
		if i >= len(vals) {
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		switch {
		case c.w < 0:
			b.WriteString(vals[i])
		case c.right:
			b.WriteString(padLeft(vals[i], c.w))
		default:
			b.WriteString(padRight(vals[i], c.w))
		}
	}
	return b.String()
}

// nodesLayout is the columns of the Nodes view (and the GPU lines of the Node view) for a screen width.
type nodesLayout struct {
	wide                                             bool
	name, bar, memText, coresBar, slots, live, state int
	// leg collects the short state words drawn (abbrev.go); the view shows them under its table.
	leg legend
}

// nodesLayout sizes the columns for the width; names are the node names on screen (the name column fits them).
func (c *common) nodesLayout(names []string) nodesLayout {
	w := c.width - 2 // the cursor marker
	l := nodesLayout{name: 20, memText: 9, slots: 5, live: 4, state: 8, leg: legend{}}
	if w >= 110 {
		l.wide = true
		longest := 0
		for _, n := range names {
			longest = max(longest, len(n))
		}
		l.name = min(max(longest+1, 22), 32)
		l.memText, l.coresBar, l.live, l.state = 11, 12, 9, 24
		fixed := l.name + 4 + l.memText + l.coresBar + 4 + l.slots + 4 + l.live + 4 + l.state + 11
		l.bar = min(max(w-fixed, 10), 40)
		l.state += max(w-fixed-l.bar, 0)
		return l
	}
	fixed := l.name + 4 + l.memText + 5 + l.slots + l.live + l.state + 8
	l.bar = max(w-fixed, 6)
	return l
}

// visibleNames are the names on screen, to size the name column.
func (v *nodesView) visibleNames(c *common, height int) []string {
	var out []string
	for _, p := range v.t.visible(height) {
		out = append(out, c.data.Nodes[v.t.order[p]].Name)
	}
	return out
}

func (l nodesLayout) cols() []cell {
	if l.wide {
		return []cell{{l.name, false}, {l.bar, false}, {4, true}, {l.memText, true}, {l.coresBar, false}, {4, true}, {l.slots, true},
			{4, true}, {l.live, true}, {4, true}, {-1, false}}
	}
	return []cell{{l.name, false}, {l.bar, false}, {4, true}, {l.memText, true}, {5, true}, {l.slots, true}, {l.live, true}, {-1, false}}
}

func (c *common) nodesHeader(l nodesLayout) string {
	s := c.styles
	memW := l.bar + 1 + 4 + 1 + l.memText
	if l.wide {
		return s.colHeader.Render("  " + line([]cell{{l.name, false}, {memW, false}, {l.coresBar + 5, false}, {l.slots, true}, {4, true},
			{l.live, true}, {4, true}, {-1, false}}, "NODE / GPU", "MEMORY ALLOCATED", "CORES ALLOCATED", "SLOTS", "PODS", "LIVE MEM", "UTIL", "STATE"))
	}
	return s.colHeader.Render("  " + line([]cell{{l.name, false}, {memW, false}, {5, true}, {l.slots, true}, {l.live, true}, {-1, false}},
		"NODE / GPU", "MEMORY ALLOCATED", "CORES", "SLOTS", "UTIL", "STATE"))
}

// nodeRows are the rows of the Nodes view, one per node. A row carries its key and height; its filter text
// (name, GPU types, health) and sort values are made when a filter or a sort asks for them.
func (v *nodesView) nodeRows(c *common) ([]row, rowInfo) {
	nodes, metrics := c.data.Nodes, c.metrics
	rows := make([]row, len(nodes))
	for i, n := range nodes {
		h := 1
		if !v.compact {
			h += len(n.Node.GPUs)
		}
		rows[i] = row{key: n.Name, height: h}
	}
	return rows, rowInfo{
		text: func(i int) string {
			n := nodes[i]
			types := map[string]bool{}
			var tb strings.Builder
			tb.WriteString(n.Name)
			for _, g := range n.Node.GPUs {
				if t := shortType(g.Type); !types[t] {
					types[t] = true
					tb.WriteString(" " + t)
				}
			}
			tb.WriteString(" " + n.Health)
			return tb.String()
		},
		sortKey: func(i, col int) sortKey {
			n := nodes[i]
			switch col {
			case 0:
				return str(n.Name)
			case 1:
				return num(ratio(n.UsedMem, n.Mem))
			case 2:
				return num(ratio(n.UsedCores, n.Cores))
			case 3:
				return num(ratio(n.UsedSlots, n.Slots))
			case 4:
				return num(float64(len(n.Pods)))
			case 5:
				return num(float64(len(n.Node.GPUs)))
			default:
				return num(utilKey(metrics, n.Node.GPUs))
			}
		},
	}
}

func ratio(a, b int64) float64 {
	if b <= 0 {
		return -1
	}
	return float64(a) / float64(b)
}

// live sums the agent's numbers over GPUs: used MiB and mean utilisation; ok is false when none is known.
func (c *common) live(gpus []engine.GPU) (used int64, util int, ok bool) {
	return liveUsage(c.metrics, gpus)
}

func liveUsage(metrics *MetricsMsg, gpus []engine.GPU) (used int64, util int, ok bool) {
	if metrics == nil || metrics.GPUs == nil {
		return 0, 0, false
	}
	n, utilSum, utilN := 0, 0, 0
	for _, g := range gpus {
		if x, found := metrics.GPUs[g.UUID]; found {
			n++
			used += x.UsedMemMiB
			if x.Utilization >= 0 {
				utilSum += x.Utilization
				utilN++
			}
		}
	}
	if n == 0 {
		return 0, 0, false
	}
	util = -1
	if utilN > 0 {
		util = utilSum / utilN
	}
	return used, util, true
}

// utilKey is the GPUs' mean live utilisation for sorting; -1 (last) when unknown.
func (c *common) utilKey(gpus []engine.GPU) float64 { return utilKey(c.metrics, gpus) }

func utilKey(metrics *MetricsMsg, gpus []engine.GPU) float64 {
	if _, util, ok := liveUsage(metrics, gpus); ok {
		return float64(util)
	}
	return -1
}

// liveCells are the UTIL column (narrow: used memory shows on the bar) or MEM USED and UTIL (wide).
func (c *common) liveCells(l nodesLayout, gpus []engine.GPU) []string {
	used, util, ok := c.live(gpus)
	s := c.styles
	if !ok {
		if l.wide {
			return []string{s.na.Render("n/a"), s.na.Render("n/a")}
		}
		return []string{s.na.Render("n/a")}
	}
	us := "n/a"
	if util >= 0 {
		us = fmt.Sprintf("%d%%", util)
	}
	if l.wide {
		return []string{s.live.Render(mib(used)), s.live.Render(us)}
	}
	return []string{s.live.Render(us)}
}

func (c *common) liveMem(g engine.GPU) int64 {
	if c.metrics != nil && c.metrics.GPUs != nil {
		if x, ok := c.metrics.GPUs[g.UUID]; ok {
			return x.UsedMemMiB
		}
	}
	return -1
}

// nodeLines renders one node: its summary line and, unless compact, a line per GPU.
func (c *common) nodeLines(l nodesLayout, n *NodeView, selected bool, compact bool) []string {
	s := c.styles
	cols := l.cols()
	marker, name := "  ", ""
	if selected {
		marker, name = "▸ ", s.selected.Render(padRight(n.Name, l.name))
	} else {
		name = s.bold.Render(padRight(n.Name, l.name))
	}
	var out []string
	if !n.Node.Registered || len(n.Node.GPUs) == 0 {
		note := "no GPUs registered"
		if n.Node.Registered {
			note = "no GPUs"
		}
		memW := l.bar + 1 + 4 + 1 + l.memText
		rest := []cell{{l.name, false}, {memW, false}, {-1, false}}
		prefix := marker + line(rest[:2], name, s.dim.Render(note))
		out = append(out, prefix+" "+fitHealth(n.Health, s.warn, c.width-ansi.StringWidth(prefix)-1, l.leg))
		return out
	}
	vals := []string{name, s.bar(l.bar, n.UsedMem, n.Mem, sumLive(c, n.Node.GPUs)), s.pct(n.UsedMem, n.Mem), mib(n.UsedMem) + "/" + mib(n.Mem)}
	if l.wide {
		vals = append(vals, s.bar(l.coresBar, n.UsedCores, n.Cores, -1), s.pct(n.UsedCores, n.Cores))
	} else {
		vals = append(vals, s.pct(n.UsedCores, n.Cores))
	}
	vals = append(vals, fmt.Sprintf("%d/%d", n.UsedSlots, n.Slots))
	if l.wide {
		vals = append(vals, fmt.Sprint(len(n.Pods)))
	}
	vals = append(vals, c.liveCells(l, n.Node.GPUs)...)
	health := n.Health
	hs := s.ok
	if health != "ok" {
		hs = s.warn
	}
	if n.Node.AllocatableGPUs == 0 {
		hs = s.crit
	}
	prefix := marker + line(cols, vals...)
	out = append(out, prefix+" "+fitHealth(health, hs, c.width-ansi.StringWidth(prefix)-1, l.leg))
	if compact {
		return out
	}
	for _, g := range n.Node.GPUs {
		out = append(out, "  "+c.gpuLine(l, g, false, false))
	}
	return out
}

// sumLive is the node's used memory from the agent, or -1.
func sumLive(c *common, gpus []engine.GPU) int64 {
	used, _, ok := c.live(gpus)
	if !ok {
		return -1
	}
	return used
}

// gpuLine is one GPU: memory bar, cores, slots, live usage and its state (NUMA node, health, cordon, MIG).
func (c *common) gpuLine(l nodesLayout, g engine.GPU, exact, selected bool) string {
	s := c.styles
	name := fmt.Sprintf("  #%d %s", g.Index, shortType(g.Type))
	if selected {
		name = s.selected.Render(padRight(name, l.name))
	}
	memText := mib(g.UsedMem) + "/" + mib(g.TotalMem)
	if exact {
		memText = fmt.Sprintf("%d/%d", g.UsedMem, g.TotalMem)
	}
	vals := []string{name, s.bar(l.bar, g.UsedMem, g.TotalMem, c.liveMem(g)), s.pct(g.UsedMem, g.TotalMem), memText}
	if l.wide {
		vals = append(vals, s.bar(l.coresBar, g.UsedCores, g.TotalCores, -1), s.pct(g.UsedCores, g.TotalCores))
	} else {
		vals = append(vals, s.pct(g.UsedCores, g.TotalCores))
	}
	vals = append(vals, fmt.Sprintf("%d/%d", g.UsedSlots, g.Slots))
	if l.wide {
		vals = append(vals, "")
	}
	vals = append(vals, c.liveCells(l, []engine.GPU{g})...)
	prefix := line(l.cols(), vals...)
	// The caller puts a 2-cell marker before the line.
	return prefix + " " + fitState(c.gpuStateParts(g), c.width-2-ansi.StringWidth(prefix)-1, l.leg)
}

// gpuState is a GPU's whole state: NUMA node, health, cordon, mode.
func (c *common) gpuState(g engine.GPU) string { return fitState(c.gpuStateParts(g), 0, nil) }

func (c *common) gpuStateParts(g engine.GPU) []statePart {
	s := c.styles
	parts := []statePart{{text: fmt.Sprintf("n%d", g.Numa), style: s.dim}}
	if !g.Healthy {
		parts = append(parts, statePart{text: "unhealthy", style: s.crit})
	}
	if g.Cordoned {
		parts = append(parts, statePart{text: "cordoned", style: s.warn})
	}
	if g.Healthy && !g.Cordoned {
		parts = append(parts, statePart{text: "ok", style: s.ok, ok: true})
	}
	if g.Mode == engine.ModeMIG {
		mig := "MIG"
		if len(g.MigUsed) > 0 {
			mig += fmt.Sprintf(" %d used", len(g.MigUsed))
		}
		parts = append(parts, statePart{text: mig, style: s.live})
	} else if g.Mode != "" && g.Mode != engine.ModeHamiCore {
		parts = append(parts, statePart{text: g.Mode, style: lipgloss.NewStyle()})
	}
	return parts
}

func (v *nodesView) render(c *common, height int) []string {
	head := v.info().headLines + v.info().footLines
	l := c.nodesLayout(v.visibleNames(c, height-head))
	lines := []string{c.nodesHeader(l)}
	t := v.t
	if t.shown() == 0 {
		return append(lines, c.styles.dim.Render(c.emptyText(t, "no nodes")))
	}
	for _, p := range t.visible(height - head) {
		lines = append(lines, c.nodeLines(l, c.data.Nodes[t.order[p]], p == t.cursor, v.compact)...)
	}
	return c.withLegend(lines, l.leg, v.narrow, height)
}

// withLegend puts the legend of the short states on screen on the body's last line.
func (c *common) withLegend(lines []string, leg legend, narrow bool, height int) []string {
	if !narrow || len(leg) == 0 {
		return lines
	}
	for len(lines) < height-1 {
		lines = append(lines, "")
	}
	return append(lines[:height-1], c.styles.dim.Render(fit(leg.text(), c.width)))
}

func (c *common) emptyText(t *table, none string) string {
	if t.filter != "" {
		return fmt.Sprintf("  nothing matches %q (esc clears the filter)", t.filter)
	}
	return "  " + none
}

// nodeNames are the names of the data's nodes.
func nodeNames(c *common) []string {
	var out []string
	for _, n := range c.data.Nodes {
		out = append(out, n.Name)
	}
	return out
}

// nodeByName finds a node of the data.
func (c *common) nodeByName(name string) *NodeView {
	ns := c.data.Nodes
	i := sort.Search(len(ns), func(i int) bool { return ns[i].Name >= name })
	if i < len(ns) && ns[i].Name == name {
		return ns[i]
	}
	return nil
}
