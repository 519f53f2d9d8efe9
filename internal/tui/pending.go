package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/render"
)

// pendingView is the Pending tab: the GPU pods waiting for a node, each with the engine's one-line reason;
// enter opens the why-pending page.
type pendingView struct{ tableView }

func newPendingView(Options) view {
	return &pendingView{tableView{t: newTable(sortCol{"namespace", false}, sortCol{"gpus", true}, sortCol{"age", true},
		sortCol{"reason", false})}}
}

func (v *pendingView) info() viewInfo {
	return viewInfo{name: "Pending", commands: []string{"pending", "pe"}, usage: "[FILTER]",
		drill: [2]string{"a pending pod", "why"}, headLines: 1, verdicts: true}
}

// setData leaves the rows to when the table is first used (the view shown, `:pending`, a drill from Quotas
// or Queues): the rows of many waiting pods are remade on every change of the data and of the verdicts.
func (v *pendingView) setData(c *common) {
	d, verdicts := c.data, c.verdicts
	v.t.setRowsLater(func() { v.t.setRows(pendingRows(d, verdicts)) })
}

// names are the pending pods' names, for `:pending NAME`.
func (v *pendingView) names(c *common) []string {
	var out []string
	for _, p := range c.data.Pending {
		out = append(out, p.Name)
	}
	return out
}

// drill opens the why-pending page of the selected pod.
func (v *pendingView) drill(c *common) tea.Cmd {
	if i := v.t.selected(); i >= 0 {
		c.send(show("Why pending"))
		c.send(openWhyMsg{pod: c.data.Pending[i].Key()})
	}
	return nil
}

// pendingRows are the Pending view's rows, one per waiting GPU pod.
func pendingRows(d *Data, verdicts map[string]*engine.Verdict) []row {
	rows := make([]row, len(d.Pending))
	for i, p := range d.Pending {
		reason := pendingReason(verdicts, p)
		// The filter matches namespace/name and the deciding gate: fuzzy matching on the whole reason
		// would match almost anything.
		code := ""
		if v := verdicts[p.Key()]; v != nil && !v.Fits && len(v.Reasons) > 0 {
			code = " " + string(render.MainReasonOf(v).Code)
		}
		if p.Queue != "" {
			code += " " + queueFilter(p.Queue) // enter on a queue filters by it
		}
		rows[i] = row{key: p.Key(), text: p.Key() + code,
			keys: []sortKey{str(p.Key()), num(float64(p.GPUs)), num(float64(d.Updated.Sub(p.Created))), str(reason)}}
	}
	return rows
}

// queueFilter is the filter text that selects a queue's pending pods.
func queueFilter(queue string) string { return "queue=" + queue }

// reason is the one-line reason (render.OneLine), once the verdict is in.
func (c *common) reason(p *PendingView) string { return pendingReason(c.verdicts, p) }

func pendingReason(verdicts map[string]*engine.Verdict, p *PendingView) string {
	if v := verdicts[p.Key()]; v != nil {
		nominated := ""
		if p.Pod != nil {
			nominated = p.Pod.Status.NominatedNodeName
		}
		return render.PendingLine(v, nominated)
	}
	return "evaluating…"
}

func (v *pendingView) pendingCols(c *common) []cell {
	if c.width-2 >= 110 {
		return []cell{{20, false}, {30, false}, {4, true}, {4, true}, {-1, false}}
	}
	return []cell{{12, false}, {18, false}, {4, true}, {4, true}, {-1, false}}
}

func (v *pendingView) render(c *common, height int) []string {
	s := c.styles
	cols := v.pendingCols(c)
	lines := []string{s.colHeader.Render("  " + line(cols, "NAMESPACE", "POD", "GPUS", "AGE", "REASON (enter: why)"))}
	t := v.t
	if t.shown() == 0 {
		return append(lines, s.dim.Render(c.emptyText(t, "no GPU pod is waiting for a node")))
	}
	for _, p := range t.visible(height - 1) {
		pv := c.data.Pending[t.order[p]]
		marker, ns := "  ", pv.Namespace
		if p == t.cursor {
			marker, ns = "▸ ", s.selected.Render(padRight(pv.Namespace, cols[0].w))
		}
		age := c.age(pv.Created)
		reason := c.reason(pv)
		rs := s.warn
		if v := c.verdicts[pv.Key()]; v != nil && v.Fits {
			rs = s.ok
		} else if v == nil {
			rs = s.dim
		}
		lines = append(lines, marker+line(cols, ns, pv.Name, fmt.Sprint(pv.GPUs), age, rs.Render(reason)))
	}
	return lines
}
