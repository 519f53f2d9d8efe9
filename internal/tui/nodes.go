package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

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
}

func (m *Model) nodesLayout() nodesLayout {
	w := m.width - 2 // the cursor marker
	l := nodesLayout{name: 20, memText: 9, slots: 5, live: 4, state: 8}
	if w >= 110 {
		l.wide = true
		longest := 0
		for _, n := range m.visibleNodeNames() {
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

// visibleNodeNames are the names on screen, to size the name column.
func (m *Model) visibleNodeNames() []string {
	var out []string
	for _, p := range m.nodes.visible(m.tableHeight(viewNodes)) {
		out = append(out, m.data.Nodes[m.nodes.order[p]].Name)
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

func (m *Model) nodesHeader(l nodesLayout) string {
	s := m.styles
	memW := l.bar + 1 + 4 + 1 + l.memText
	if l.wide {
		return s.colHeader.Render("  " + line([]cell{{l.name, false}, {memW, false}, {l.coresBar + 5, false}, {l.slots, true}, {4, true},
			{l.live, true}, {4, true}, {-1, false}}, "NODE / GPU", "MEMORY ALLOCATED", "CORES ALLOCATED", "SLOTS", "PODS", "MEM USED", "UTIL", "STATE"))
	}
	return s.colHeader.Render("  " + line([]cell{{l.name, false}, {memW, false}, {5, true}, {l.slots, true}, {l.live, true}, {-1, false}},
		"NODE / GPU", "MEMORY ALLOCATED", "CORES", "SLOTS", "UTIL", "STATE"))
}

// nodeRows are the rows of the Nodes view, one per node.
func (m *Model) nodeRows() []row {
	rows := make([]row, len(m.data.Nodes))
	for i, n := range m.data.Nodes {
		types := map[string]bool{}
		var tb strings.Builder
		for _, g := range n.Node.GPUs {
			if t := shortType(g.Type); !types[t] {
				types[t] = true
				tb.WriteString(" " + t)
			}
		}
		h := 1
		if !m.compact {
			h += len(n.Node.GPUs)
		}
		rows[i] = row{key: n.Name, text: n.Name + tb.String() + " " + n.Health, height: h,
			keys: []sortKey{str(n.Name), num(ratio(n.UsedMem, n.Mem)), num(ratio(n.UsedCores, n.Cores)), num(ratio(n.UsedSlots, n.Slots)),
				num(float64(len(n.Pods))), num(float64(len(n.Node.GPUs)))}}
	}
	return rows
}

func ratio(a, b int64) float64 {
	if b <= 0 {
		return -1
	}
	return float64(a) / float64(b)
}

// live sums the agent's numbers over GPUs: used MiB and mean utilisation; ok is false when none is known.
func (m *Model) live(gpus []engine.GPU) (used int64, util int, ok bool) {
	if m.metrics == nil || m.metrics.GPUs == nil {
		return 0, 0, false
	}
	n, utilSum, utilN := 0, 0, 0
	for _, g := range gpus {
		if x, found := m.metrics.GPUs[g.UUID]; found {
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

// liveCells are the UTIL column (narrow: used memory shows on the bar) or MEM USED and UTIL (wide).
func (m *Model) liveCells(l nodesLayout, gpus []engine.GPU) []string {
	used, util, ok := m.live(gpus)
	s := m.styles
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

func (m *Model) liveMem(g engine.GPU) int64 {
	if m.metrics != nil && m.metrics.GPUs != nil {
		if x, ok := m.metrics.GPUs[g.UUID]; ok {
			return x.UsedMemMiB
		}
	}
	return -1
}

// nodeLines renders one node: its summary line and, unless compact, a line per GPU.
func (m *Model) nodeLines(l nodesLayout, n *NodeView, selected bool, compact bool) []string {
	s := m.styles
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
		out = append(out, marker+line(rest, name, s.dim.Render(note), s.warn.Render(n.Health)))
		return out
	}
	vals := []string{name, s.bar(l.bar, n.UsedMem, n.Mem, sumLive(m, n.Node.GPUs)), s.pct(n.UsedMem, n.Mem), mib(n.UsedMem) + "/" + mib(n.Mem)}
	if l.wide {
		vals = append(vals, s.bar(l.coresBar, n.UsedCores, n.Cores, -1), s.pct(n.UsedCores, n.Cores))
	} else {
		vals = append(vals, s.pct(n.UsedCores, n.Cores))
	}
	vals = append(vals, fmt.Sprintf("%d/%d", n.UsedSlots, n.Slots))
	if l.wide {
		vals = append(vals, fmt.Sprint(len(n.Pods)))
	}
	vals = append(vals, m.liveCells(l, n.Node.GPUs)...)
	health := n.Health
	hs := s.ok
	if health != "ok" {
		hs = s.warn
	}
	if n.Node.AllocatableGPUs == 0 {
		hs = s.crit
	}
	vals = append(vals, hs.Render(health))
	out = append(out, marker+line(cols, vals...))
	if compact {
		return out
	}
	for _, g := range n.Node.GPUs {
		out = append(out, "  "+m.gpuLine(l, g, false, false))
	}
	return out
}

// sumLive is the node's used memory from the agent, or -1.
func sumLive(m *Model, gpus []engine.GPU) int64 {
	used, _, ok := m.live(gpus)
	if !ok {
		return -1
	}
	return used
}

// gpuLine is one GPU: memory bar, cores, slots, live usage and its state (NUMA node, health, cordon, MIG).
func (m *Model) gpuLine(l nodesLayout, g engine.GPU, exact, selected bool) string {
	s := m.styles
	name := fmt.Sprintf("  #%d %s", g.Index, shortType(g.Type))
	if selected {
		name = s.selected.Render(padRight(name, l.name))
	}
	memText := mib(g.UsedMem) + "/" + mib(g.TotalMem)
	if exact {
		memText = fmt.Sprintf("%d/%d", g.UsedMem, g.TotalMem)
	}
	vals := []string{name, s.bar(l.bar, g.UsedMem, g.TotalMem, m.liveMem(g)), s.pct(g.UsedMem, g.TotalMem), memText}
	if l.wide {
		vals = append(vals, s.bar(l.coresBar, g.UsedCores, g.TotalCores, -1), s.pct(g.UsedCores, g.TotalCores))
	} else {
		vals = append(vals, s.pct(g.UsedCores, g.TotalCores))
	}
	vals = append(vals, fmt.Sprintf("%d/%d", g.UsedSlots, g.Slots))
	if l.wide {
		vals = append(vals, "")
	}
	vals = append(vals, m.liveCells(l, []engine.GPU{g})...)
	vals = append(vals, m.gpuState(g))
	return line(l.cols(), vals...)
}

func (m *Model) gpuState(g engine.GPU) string {
	s := m.styles
	parts := []string{s.dim.Render(fmt.Sprintf("n%d", g.Numa))}
	if !g.Healthy {
		parts = append(parts, s.crit.Render("unhealthy"))
	}
	if g.Cordoned {
		parts = append(parts, s.warn.Render("cordoned"))
	}
	if g.Healthy && !g.Cordoned {
		parts = append(parts, s.ok.Render("ok"))
	}
	if g.Mode == engine.ModeMIG {
		mig := "MIG"
		if len(g.MigUsed) > 0 {
			mig += fmt.Sprintf(" %d used", len(g.MigUsed))
		}
		parts = append(parts, s.live.Render(mig))
	} else if g.Mode != "" && g.Mode != engine.ModeHamiCore {
		parts = append(parts, g.Mode)
	}
	return strings.Join(parts, " ")
}

func (m *Model) renderNodes(height int) []string {
	l := m.nodesLayout()
	lines := []string{m.nodesHeader(l)}
	t := m.nodes
	if len(t.order) == 0 {
		return append(lines, m.styles.dim.Render(m.emptyText(t, "no nodes")))
	}
	for _, p := range t.visible(height - 1) {
		lines = append(lines, m.nodeLines(l, m.data.Nodes[t.order[p]], p == t.cursor, m.compact)...)
	}
	return lines
}

func (m *Model) emptyText(t *table, none string) string {
	if t.filter != "" {
		return fmt.Sprintf("  nothing matches %q (esc clears the filter)", t.filter)
	}
	return "  " + none
}

// nodeByName finds a node of the data.
func (m *Model) nodeByName(name string) *NodeView {
	ns := m.data.Nodes
	i := sort.Search(len(ns), func(i int) bool { return ns[i].Name >= name })
	if i < len(ns) && ns[i].Name == name {
		return ns[i]
	}
	return nil
}

// podOnGPU is one container's share of one GPU.
type podOnGPU struct {
	Namespace, Pod, Container string
	Mem, Cores                int64
}

// detailRows are the Node view's rows, one per GPU with the pods on it.
func (m *Model) detailRows() []row {
	n := m.nodeByName(m.detail)
	if n == nil {
		return nil
	}
	on := map[string][]podOnGPU{}
	for _, p := range n.Pods {
		for _, c := range p.Containers {
			for _, d := range c.Devices {
				on[d.UUID] = append(on[d.UUID], podOnGPU{Namespace: p.Namespace, Pod: p.Name, Container: c.Name, Mem: d.UsedMem, Cores: d.UsedCores})
			}
		}
	}
	rows := make([]row, len(n.Node.GPUs))
	for i, g := range n.Node.GPUs {
		var tb strings.Builder
		fmt.Fprintf(&tb, "#%d %s %s", g.Index, shortType(g.Type), g.UUID)
		for _, p := range on[g.UUID] {
			tb.WriteString(" " + p.Namespace + "/" + p.Pod + " " + p.Container)
		}
		rows[i] = row{key: g.UUID, text: tb.String(), height: 1 + max(len(on[g.UUID]), 1),
			keys: []sortKey{num(float64(g.Index)), num(ratio(g.UsedMem, g.TotalMem)), num(ratio(g.UsedCores, g.TotalCores)), num(float64(len(on[g.UUID])))}}
	}
	m.detailPods = on
	return rows
}

func (m *Model) renderNode(height int) []string {
	s := m.styles
	n := m.nodeByName(m.detail)
	if n == nil {
		msg := "  no node selected: pick one in the Nodes view (1) and press enter"
		if m.detail != "" {
			msg = fmt.Sprintf("  node %s is gone", m.detail)
		}
		return []string{s.dim.Render(msg)}
	}
	head := s.title.Render(n.Name) + fmt.Sprintf(" · %d GPUs · %d pods · ", len(n.Node.GPUs), len(n.Pods))
	hs := s.ok
	if n.Health != "ok" {
		hs = s.warn
	}
	head += "health: " + hs.Render(n.Health)
	if a := m.agentStatus(n.Name); a != "" {
		head += " · " + a
	}
	var second string
	if !n.Node.Registered {
		second = s.warn.Render("not registered: " + n.Node.RegisterError)
	} else {
		second = fmt.Sprintf("memory %d/%d MiB (%d%%) · cores %d/%d (%d%%) · slots %d/%d", n.UsedMem, n.Mem, percent(n.UsedMem, n.Mem),
			n.UsedCores, n.Cores, percent(n.UsedCores, n.Cores), n.UsedSlots, n.Slots)
		if hs := n.Node.Handshake; hs.State != "" {
			second += " · handshake " + hs.State
		}
		if n.Node.Lock != nil {
			second += " · " + s.warn.Render("locked by "+n.Node.Lock.Namespace+"/"+n.Node.Lock.Pod)
		}
	}
	l := m.nodesLayout()
	l.memText = 13
	if !l.wide {
		l.bar = max(l.bar-4, 4)
	}
	memW := l.bar + 1 + 4 + 1 + l.memText
	var header string
	if l.wide {
		header = line([]cell{{l.name, false}, {memW, false}, {l.coresBar + 5, false}, {l.slots, true}, {4, true}, {l.live, true}, {4, true}, {-1, false}},
			"GPU / POD", "MEMORY ALLOCATED (MiB)", "CORES ALLOCATED", "SLOTS", "", "MEM USED", "UTIL", "STATE")
	} else {
		header = line([]cell{{l.name, false}, {memW, false}, {5, true}, {l.slots, true}, {l.live, true}, {-1, false}},
			"GPU / POD", "MEMORY ALLOCATED (MiB)", "CORES", "SLOTS", "UTIL", "STATE")
	}
	lines := []string{head, second, s.colHeader.Render("  " + header)}
	t := m.node
	if len(t.order) == 0 {
		return append(lines, s.dim.Render(m.emptyText(t, "no GPUs registered")))
	}
	podCols := m.podCols()
	for _, p := range t.visible(height - 3) {
		if t.order[p] >= len(n.Node.GPUs) {
			continue // rows of another node; never shown, but never a panic
		}
		g := n.Node.GPUs[t.order[p]]
		marker := "  "
		if p == t.cursor {
			marker = "▸ "
		}
		lines = append(lines, marker+m.gpuLine(l, g, true, p == t.cursor))
		pods := m.detailPods[g.UUID]
		if len(pods) == 0 {
			lines = append(lines, s.dim.Render("      └ no pods"))
		}
		for _, pd := range pods {
			lines = append(lines, "      └ "+line(podCols, pd.Namespace, pd.Pod, pd.Container, fmt.Sprintf("%d MiB", pd.Mem), fmt.Sprintf("%d%%", pd.Cores)))
		}
	}
	return lines
}

// podCols are the columns of a pod line under a GPU: namespace, pod, container, memory, cores.
func (m *Model) podCols() []cell {
	w := m.width - 8
	ns, cont, mem, cores := 14, 12, 10, 4
	if w >= 110 {
		ns, cont = 20, 20
	}
	pod := min(max(w-ns-cont-mem-cores-4, 10), 48)
	return []cell{{ns, false}, {pod, false}, {cont, false}, {mem, true}, {cores, true}}
}
