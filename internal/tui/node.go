package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/resolve"
)

// nodeView is the Node tab: one node's GPUs, each with the pods on it. It shows the node selected in the
// Nodes view (or named by `:node NAME`); enter on a GPU opens the GPU page.
type nodeView struct {
	tableView
	detail string                // the node shown
	pods   map[string][]podOnGPU // the pods on each of its GPUs, by UUID
	narrow bool                  // the STATE column is short: a legend line under the table (abbrev.go)
}

func newNodeView(Options) view {
	return &nodeView{tableView: tableView{t: newTable(sortCol{"gpu", false}, sortCol{"memory", true}, sortCol{"cores", true},
		sortCol{"pods", true}, sortCol{"util", true})}}
}

func (v *nodeView) info() viewInfo {
	return viewInfo{name: "Node", commands: []string{"node", "detail"}, usage: "NAME", drill: [2]string{"a GPU", "its pods"},
		headLines: 3, footLines: legendLines(v.narrow), live: true}
}

func (v *nodeView) layout(c *common) { v.narrow = c.narrowState() }

// setData rebuilds the GPU rows; until a node is selected (nodeSelectedMsg) it shows the first one, as the
// Nodes view selects it first.
func (v *nodeView) setData(c *common) {
	if v.detail == "" && len(c.data.Nodes) > 0 {
		v.detail = c.data.Nodes[0].Name
	}
	v.t.setRows(v.detailRows(c))
}

// focus shows the node selected in the Nodes view (it follows it by nodeSelectedMsg).
func (v *nodeView) focus(c *common, _ bool) { v.setData(c) }

// update follows the node selected in the Nodes view and opens a node drilled into; else it moves in the table.
func (v *nodeView) update(c *common, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case nodeSelectedMsg:
		// On screen, the Node view keeps its node: the Nodes view's selection moves only when the node shown
		// is deleted, and then this page says it is gone.
		if msg.node != v.detail && (msg.clear || !c.focused(v)) {
			v.detail = msg.node
			v.setData(c)
		}
	case openNodeMsg:
		v.detail = msg.node
		v.t.setFilter("")
		v.setData(c)
		v.t.home()
	default:
		v.move(c, msg)
	}
	return nil
}

// names are the node names, for `:node NAME`.
func (v *nodeView) names(c *common) []string { return nodeNames(c) }

// drill opens the GPU page of the selected GPU.
func (v *nodeView) drill(c *common) tea.Cmd {
	if uuid := v.t.selectedKey(); uuid != "" {
		c.send(openGPUMsg{node: v.detail, uuid: uuid})
		c.send(show("GPU"))
	}
	return nil
}

// jump is `:node NAME`: the node named (a unique prefix or another case is enough), selected in Nodes too.
func (v *nodeView) jump(c *common, args []string) bool {
	if len(args) == 0 {
		return true
	}
	name := args[0]
	if r := resolve.Resolve(name, nodeNames(c)); r.Found() {
		name = r.Name // gpu-a100 → gpu-a100-01 when it is the only one; case does not matter
	}
	if c.nodeByName(name) == nil {
		c.send(statusMsg(c.nodeNotFound(name)))
		return false
	}
	c.send(nodeSelectedMsg{node: name, clear: true}) // the Nodes view selects it too
	if name != v.detail {
		// switchTo does not refocus the Node view when it is already shown: its rows are the old node's GPUs.
		v.detail = name
		v.t.setFilter("")
		v.setData(c)
		v.t.home()
	}
	return true
}

// podOnGPU is one container's share of one GPU.
type podOnGPU struct {
	Namespace, Pod, Container string
	Mem, Cores                int64
}

const terminatingSuffix = " (Terminating)"

// podsOnGPUs are the containers on each GPU of a node, by UUID.
func podsOnGPUs(n *NodeView) map[string][]podOnGPU {
	on := map[string][]podOnGPU{}
	for _, p := range n.Pods {
		for _, ct := range p.Containers {
			for _, d := range ct.Devices {
				name := p.Name
				if p.Terminating {
					name += terminatingSuffix // kubectl's STATUS: it still holds the GPU until it is gone
				}
				on[d.UUID] = append(on[d.UUID], podOnGPU{Namespace: p.Namespace, Pod: name, Container: ct.Name, Mem: d.UsedMem, Cores: d.UsedCores})
			}
		}
	}
	return on
}

// detailRows are the Node view's rows, one per GPU with the pods on it.
func (v *nodeView) detailRows(c *common) []row {
	n := c.nodeByName(v.detail)
	if n == nil {
		return nil
	}
	on := podsOnGPUs(n)
	rows := make([]row, len(n.Node.GPUs))
	for i, g := range n.Node.GPUs {
		var tb strings.Builder
		fmt.Fprintf(&tb, "#%d %s %s", g.Index, shortType(g.Type), g.UUID)
		for _, p := range on[g.UUID] {
			tb.WriteString(" " + p.Namespace + "/" + p.Pod + " " + p.Container)
		}
		rows[i] = row{key: g.UUID, text: tb.String(), height: 1 + max(len(on[g.UUID]), 1),
			keys: []sortKey{num(float64(g.Index)), num(ratio(g.UsedMem, g.TotalMem)), num(ratio(g.UsedCores, g.TotalCores)), num(float64(len(on[g.UUID]))),
				num(c.utilKey([]engine.GPU{g}))}}
	}
	v.pods = on
	return rows
}

func (v *nodeView) render(c *common, height int) []string {
	s := c.styles
	n := c.nodeByName(v.detail)
	if n == nil {
		msg := "  no node selected: pick one in the Nodes view and press enter"
		if k := c.tabKey("Nodes"); k != "" {
			msg = "  no node selected: pick one in the Nodes view (" + k + ") and press enter"
		}
		if v.detail != "" {
			msg = fmt.Sprintf("  node %s is gone", v.detail)
		}
		return []string{s.dim.Render(msg)}
	}
	word := c.deviceWord(n.Node.GPUs)
	head := s.title.Render(n.Name) + fmt.Sprintf(" · %d %ss · %d pods · ", len(n.Node.GPUs), word, len(n.Pods))
	hs := s.ok
	if n.Health != "ok" {
		hs = s.warn
	}
	head += "health: " + hs.Render(n.Health)
	if a := c.agentStatus(n.Name); a != "" {
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
	l := c.nodesLayout([]string{n.Name})
	l.memText = 13
	if !l.wide {
		l.bar = max(l.bar-4, 4)
	}
	memW := l.bar + 1 + 4 + 1 + l.memText
	var header string
	if l.wide {
		header = line([]cell{{l.name, false}, {memW, false}, {l.coresBar + 5, false}, {l.slots, true}, {4, true}, {l.live, true}, {4, true}, {-1, false}},
			word+" / POD", "MEMORY ALLOCATED (MiB)", "CORES ALLOCATED", "SLOTS", "", "LIVE MEM", "UTIL", "STATE")
	} else {
		header = line([]cell{{l.name, false}, {memW, false}, {5, true}, {l.slots, true}, {l.live, true}, {-1, false}},
			word+" / POD", "MEMORY ALLOCATED (MiB)", "CORES", "SLOTS", "UTIL", "STATE")
	}
	lines := []string{head, second, s.colHeader.Render("  " + header)}
	t := v.t
	if t.shown() == 0 {
		return append(lines, s.dim.Render(c.emptyText(t, "no GPUs registered")))
	}
	podCols := c.podCols()
	for _, p := range t.visible(height - v.info().headLines - v.info().footLines) {
		if t.order[p] >= len(n.Node.GPUs) {
			continue // rows of another node; never shown, but never a panic
		}
		g := n.Node.GPUs[t.order[p]]
		marker := "  "
		if p == t.cursor {
			marker = "▸ "
		}
		lines = append(lines, marker+c.gpuLine(l, g, true, p == t.cursor))
		pods := v.pods[g.UUID]
		if len(pods) == 0 {
			lines = append(lines, s.dim.Render("      └ no pods"))
		}
		for _, pd := range pods {
			lines = append(lines, "      └ "+line(podCols, pd.Namespace, pd.Pod, pd.Container, fmt.Sprintf("alloc %d MiB", pd.Mem), fmt.Sprintf("%d%%", pd.Cores),
				c.podLive(pd, g.UUID)))
		}
	}
	return c.withLegend(lines, l.leg, v.narrow, height)
}

// podCols are the columns of a pod line under a GPU: namespace, pod, container, allocated memory and cores,
// and the pod's live memory on the GPU (where it fits).
func (c *common) podCols() []cell {
	w := c.width - 8
	ns, cont, mem, cores := 14, 12, 15, 4
	if w >= 110 {
		ns, cont = 20, 20
	}
	fixed, live := ns+cont+mem+cores+5, 15
	if w-fixed-live < 16 {
		live = 0 // 80 columns: the pod's name before its live memory; the GPU's line has the live numbers
	}
	pod := min(max(w-fixed-live, 10), 48)
	return []cell{{ns, false}, {pod, false}, {cont, false}, {mem, true}, {cores, true}, {-1, false}}
}

// podLive is a pod's live memory on one GPU from the agent ("live 9000 MiB"), "" when the agent has no number.
func (c *common) podLive(pd podOnGPU, uuid string) string {
	if c.metrics == nil || c.metrics.Pods == nil {
		return ""
	}
	procs, ok := c.metrics.Pods[pd.Namespace+"/"+strings.TrimSuffix(pd.Pod, terminatingSuffix)]
	if !ok {
		return ""
	}
	var used int64
	for _, p := range procs {
		if p.GPU == uuid {
			used += p.UsedMemMiB
		}
	}
	return c.styles.live.Render(fmt.Sprintf("live %d MiB", used))
}

// deviceWord is what people call a node's devices: their type's word (NPU, DCU ...) when all are of one type,
// else GPU.
func (c *common) deviceWord(gpus []engine.GPU) string {
	kinds := c.data.Config.Kinds()
	word := ""
	for i := range gpus {
		w := "GPU"
		if k := int(gpus[i].Kind); k < len(kinds) {
			w = kinds[k].Word
		}
		if word != "" && w != word {
			return "GPU"
		}
		word = w
	}
	if word == "" {
		return "GPU"
	}
	return word
}
