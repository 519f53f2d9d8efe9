package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-hami/kubectl-hami/internal/render"
)

// podsView is the Pods tab: every GPU pod counted on a node across the cluster (k9s' :pods, nvitop's process
// list), with what it was given beside what the node agent measures; enter opens the pod's devices.
type podsView struct {
	tableView
	pods []*PodView // the rows' pods, in the data's node order
}

func newPodsView(Options) view {
	return &podsView{tableView: tableView{t: newTable(sortCol{"namespace", false}, sortCol{"node", false}, sortCol{"gpus", true},
		sortCol{"memory", true}, sortCol{"cores", true}, sortCol{"live", true}, sortCol{"util", true}, sortCol{"age", true},
		sortCol{"state", false})}}
}

func (v *podsView) info() viewInfo {
	return viewInfo{name: "Pods", about: ": running GPU pods", commands: []string{"pods", "po", "running"}, usage: "[FILTER]",
		drill: [2]string{"a pod", "its devices"}, headLines: 1, live: true,
		help: [][2]string{{"Pods", "GPU pods on nodes: ALLOC is what HAMi gave them, LIVE what the node agent measures (n/a without one)"}}}
}

// setData leaves the rows to when the table is first used (the Pods tab shown, `:pods`, a completion): the
// first frame is the Nodes view, and a change of the data need not remake 50,000 rows nobody looks at.
func (v *podsView) setData(c *common) {
	d, ns, metrics := c.data, c.namespace, c.metrics
	v.t.setRowsLater(func() { v.setRows(d, ns, metrics) })
}

// setRows makes the rows from the data, the namespace shown and the live usage as setData saw them. A row
// carries its key only; its filter text and sort values are made when a filter or a sort asks for them.
func (v *podsView) setRows(d *Data, ns string, metrics *MetricsMsg) {
	n := 0
	for _, node := range d.Nodes {
		n += len(node.Pods)
	}
	pods := make([]*PodView, 0, n)
	for _, node := range d.Nodes {
		for _, p := range node.Running() {
			if ns == "" || p.Namespace == ns {
				pods = append(pods, p)
			}
		}
	}
	rows := make([]row, len(pods))
	for i, p := range pods {
		rows[i] = row{key: p.Key()}
	}
	v.pods = pods
	v.t.setRowsFrom(rows, rowInfo{
		text: func(i int) string {
			p := pods[i]
			var b strings.Builder
			b.WriteString(rows[i].key + " " + p.Node + " " + p.State)
			for _, d := range p.Devices {
				b.WriteString(" " + shortType(d.Type))
			}
			return b.String()
		},
		sortKey: func(i, col int) sortKey {
			p := pods[i]
			switch col {
			case 0:
				return str(rows[i].key)
			case 1:
				return str(p.Node + "/" + rows[i].key)
			case 2:
				return num(float64(len(p.Devices)))
			case 3:
				return num(float64(p.Mem))
			case 4:
				return num(float64(p.Cores))
			case 5, 6:
				live, util := podUsage(metrics, p)
				if col == 5 {
					return num(float64(live))
				}
				return num(float64(util))
			case 7:
				return num(float64(d.Updated.Sub(p.Created)))
			default:
				return str(p.State)
			}
		},
	})
}

// names are the pods' names, for `:pods NAME`.
func (v *podsView) names(*common) []string {
	v.t.ready()
	out := make([]string, len(v.pods))
	for i, p := range v.pods {
		out[i] = p.Name
	}
	return out
}

// drill opens the selected pod's devices.
func (v *podsView) drill(c *common) tea.Cmd {
	if i := v.t.selected(); i >= 0 {
		c.send(openPodMsg{pod: v.pods[i].Key()})
		c.send(show("Pod"))
	}
	return nil
}

// podUsage is a pod's live memory (its processes on every GPU, MiB) and the mean utilisation of its GPUs; -1
// each when the agent has no number.
func (c *common) podUsage(p *PodView) (live int64, util int) { return podUsage(c.metrics, p) }

func podUsage(metrics *MetricsMsg, p *PodView) (live int64, util int) {
	live, util = -1, -1
	if metrics == nil {
		return live, util
	}
	if procs, ok := metrics.Pods[p.Key()]; ok {
		live = 0
		for _, pr := range procs {
			live += pr.UsedMemMiB
		}
	}
	seen, sum, n := map[string]bool{}, 0, 0
	for _, d := range p.Devices {
		if g, ok := metrics.GPUs[d.UUID]; ok && !seen[d.UUID] && g.Utilization >= 0 {
			seen[d.UUID] = true
			sum += g.Utilization
			n++
		}
	}
	if n > 0 {
		util = sum / n
	}
	return live, util
}

type podsLayout struct {
	wide bool
	cols []cell
}

func (c *common) podsLayout() podsLayout {
	if c.width-2 >= 110 {
		pod := min(max(c.width-2-(18+16+6+11+7+10+9+5+12+10), 20), 48)
		return podsLayout{wide: true, cols: []cell{{18, false}, {pod, false}, {16, false}, {5, true}, {10, true}, {6, true}, {9, true},
			{8, true}, {4, true}, {-1, false}}}
	}
	// 80 columns: no age, names cut to fit; the state's words are short (Running, Terminating is the longest).
	pod := max(c.width-2-(11+12+3+6+4+6+4+11+9), 10)
	return podsLayout{cols: []cell{{11, false}, {pod, false}, {12, false}, {3, true}, {6, true}, {4, true}, {6, true}, {4, true}, {-1, false}}}
}

func (v *podsView) render(c *common, height int) []string {
	s := c.styles
	l := c.podsLayout()
	var head string
	if l.wide {
		head = line(l.cols, "NAMESPACE", "POD", "NODE", "GPUS", "ALLOC MEM", "CORES", "LIVE MEM", "GPU UTIL", "AGE", "STATE")
	} else {
		head = line(l.cols, "NAMESPACE", "POD", "NODE", "GPU", "ALLOC", "CORE", "LIVE", "UTIL", "STATE")
	}
	lines := []string{s.colHeader.Render("  " + head)}
	t := v.t
	if t.shown() == 0 {
		return append(lines, s.dim.Render(c.emptyText(t, "no GPU pod is on a node")))
	}
	for _, p := range t.visible(height - 1) {
		pv := v.pods[t.order[p]]
		marker, ns := "  ", pv.Namespace
		if p == t.cursor {
			marker, ns = "▸ ", s.selected.Render(padRight(pv.Namespace, l.cols[0].w))
		}
		live, util := c.podUsage(pv)
		liveText, utilText := s.na.Render("n/a"), s.na.Render("n/a")
		if live >= 0 {
			liveText = s.live.Render(mib(live))
		}
		if util >= 0 {
			utilText = s.live.Render(fmt.Sprintf("%d%%", util))
		}
		state := s.ok.Render(pv.State)
		if pv.State != "Running" {
			state = s.warn.Render(pv.State)
		}
		vals := []string{ns, pv.Name, pv.Node, fmt.Sprint(len(pv.Devices)), mib(pv.Mem), fmt.Sprintf("%d%%", pv.Cores), liveText, utilText}
		if l.wide {
			vals = append(vals, c.age(pv.Created))
		}
		lines = append(lines, marker+line(l.cols, append(vals, state)...))
	}
	return lines
}

// age is how long ago t was: on a live cluster now (ages tick between changes, ageTickMsg), in a snapshot at
// its time; "-" when unknown.
func (c *common) age(t time.Time) string {
	at := c.data.Updated
	if c.data.Live {
		at = c.now()
	}
	if t.IsZero() || at.IsZero() {
		return "-"
	}
	return render.Age(at.Sub(t))
}

// podPage is the page of one GPU pod, under the Pods tab: the devices it was given, each with the agent's live
// numbers, and the processes the agent found in it.
type podPage struct {
	page
	pod string // namespace/name
	off int
}

func newPodPage(Options) view { return &podPage{} }

func (pp *podPage) info() viewInfo { return viewInfo{name: "Pod", parent: "Pods"} }

func (pp *podPage) update(c *common, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case openPodMsg:
		pp.pod, pp.off = msg.pod, 0
	case tea.KeyPressMsg:
		if d := c.scrollKey(msg); d != 0 {
			pp.off = min(max(pp.off+d, 0), max(len(pp.lines(c))-c.bodyHeight(), 0))
		}
	}
	return nil
}

func (pp *podPage) wheel(c *common, dir int) {
	pp.off = min(max(pp.off+dir*wheelStep, 0), max(len(pp.lines(c))-c.bodyHeight(), 0))
}

// find is the pod shown, in the data of this frame (nil when it is gone).
func (pp *podPage) find(c *common) *PodView {
	ns, name, _ := strings.Cut(pp.pod, "/")
	for _, n := range c.data.Nodes {
		for i, a := range n.Pods {
			if a.Namespace == ns && a.Name == name {
				return n.Running()[i] // only this node's pod views are made
			}
		}
	}
	return nil
}

func (pp *podPage) lines(c *common) []string {
	s := c.styles
	p := pp.find(c)
	if p == nil {
		return []string{s.dim.Render(fmt.Sprintf("  pod %s is gone: it holds no GPU any more", pp.pod))}
	}
	live, util := c.podUsage(p)
	title := s.title.Render(p.Key()) + fmt.Sprintf(" on %s · %s · age %s", p.Node, p.State, c.age(p.Created)) + s.dim.Render("  (esc back · ↑↓ scroll)")
	sum := fmt.Sprintf("allocated %d MiB and %d%% cores on %d devices", p.Mem, p.Cores, len(p.Devices))
	if live >= 0 {
		sum += " · " + s.live.Render(fmt.Sprintf("live %d MiB", live))
	}
	if util >= 0 {
		sum += " · " + s.live.Render(fmt.Sprintf("GPU utilisation %d%%", util))
	}
	if a := c.agentStatus(p.Node); a != "" {
		sum += " · " + a
	}
	// The UUID where it fits (it is what the agent and nvidia-smi name a GPU by).
	wide := c.width-2 >= 110
	cols := []cell{{12, false}, {18, false}, {10, true}, {6, true}, {10, true}, {5, true}, {-1, false}}
	head := []string{"CONTAINER", "GPU", "ALLOC MEM", "CORES", "LIVE MEM", "UTIL", ""}
	if wide {
		head[6] = "UUID"
	}
	lines := []string{title, sum, "", s.colHeader.Render("  " + line(cols, head...))}
	for _, d := range p.Devices {
		gpu := fmt.Sprintf("#%d %s", d.Index, shortType(d.Type))
		liveMem, liveUtil := s.na.Render("n/a"), s.na.Render("n/a")
		if c.metrics != nil {
			if g, ok := c.metrics.GPUs[d.UUID]; ok {
				liveMem = s.live.Render(fmt.Sprintf("%d MiB", g.UsedMemMiB))
				if g.Utilization >= 0 {
					liveUtil = s.live.Render(fmt.Sprintf("%d%%", g.Utilization))
				}
			}
		}
		uuid := ""
		if wide {
			uuid = s.dim.Render(d.UUID)
		}
		lines = append(lines, "  "+line(cols, d.Container, gpu, fmt.Sprintf("%d MiB", d.Mem), fmt.Sprintf("%d%%", d.Cores), liveMem, liveUtil, uuid))
	}
	lines = append(lines, "", s.bold.Render("Processes")+s.dim.Render(" (found by the node agent in the pod's cgroups)"))
	var procs []ProcessMetrics
	if c.metrics != nil {
		procs = c.metrics.Pods[p.Key()]
	}
	if len(procs) == 0 {
		return append(lines, s.dim.Render("  none known: no agent numbers for this node, or no process on a GPU"))
	}
	pcols := []cell{{8, true}, {28, false}, {12, true}}
	lines = append(lines, s.colHeader.Render("  "+line(pcols, "PID", "GPU", "MEMORY")))
	for _, pr := range procs {
		lines = append(lines, "  "+line(pcols, fmt.Sprint(pr.PID), pr.GPU, fmt.Sprintf("%d MiB", pr.UsedMemMiB)))
	}
	return lines
}

func (pp *podPage) render(c *common, height int) []string {
	lines := pp.lines(c)
	pp.off = min(pp.off, max(len(lines)-height, 0))
	return lines[pp.off:]
}
