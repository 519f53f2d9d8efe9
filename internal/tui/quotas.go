package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/render"
)

// quotasView is the Quotas tab: HAMi's GPU quota of every namespace beside Kubernetes' ResourceQuota
// status; enter lists the namespace's pending pods.
type quotasView struct{ tableView }

func newQuotasView(Options) view {
	return &quotasView{tableView{t: newTable(sortCol{"namespace", false}, sortCol{"memory", true}, sortCol{"cores", true})}}
}

func (v *quotasView) info() viewInfo {
	return viewInfo{name: "Quotas", commands: []string{"quotas", "quota", "resourcequotas", "rq"},
		drill: [2]string{"a quota", "its pending pods"}, headLines: 1}
}

func (v *quotasView) setData(c *common) { v.t.setRows(v.quotaRows(c)) }

// names are the namespaces, for `:quotas NAMESPACE`.
func (v *quotasView) names(c *common) []string {
	var out []string
	for _, q := range c.data.Quotas {
		out = append(out, q.Namespace)
	}
	return out
}

// drill lists the selected namespace's pending pods.
func (v *quotasView) drill(c *common) tea.Cmd {
	if i := v.t.selected(); i >= 0 {
		c.send(showFiltered("Pending", c.data.Quotas[i].Namespace+"/"))
	}
	return nil
}

// quotaRows are the Quotas view's rows, one per namespace with a GPU quota or GPU usage.
func (v *quotasView) quotaRows(c *common) []row {
	rows := make([]row, len(c.data.Quotas))
	for i, q := range c.data.Quotas {
		memPct, corePct := -1.0, -1.0
		if l := q.Status.Memory; l != nil {
			memPct = ratio(l.Used, l.Limit)
		}
		if l := q.Status.Cores; l != nil {
			corePct = ratio(l.Used, l.Limit)
		}
		h := 0
		for _, l := range render.QuotaLines(q.Status) {
			if l != nil {
				h++
			}
		}
		rows[i] = row{key: q.Namespace, text: q.Namespace, height: max(h, 1), keys: []sortKey{str(q.Namespace), num(memPct), num(corePct)}}
	}
	return rows
}

type quotaLayout struct {
	wide                      bool
	ns, res, bar, text, quota int
}

func (v *quotasView) quotaLayout(c *common) quotaLayout {
	w := c.width - 2
	if w >= 110 {
		l := quotaLayout{wide: true, ns: 20, res: 26, text: 24, quota: 14}
		l.bar = min(max(w-(l.ns+l.res+4+l.text+l.quota+18+6), 10), 40)
		return l
	}
	l := quotaLayout{ns: 16, res: 8, text: 11}
	l.bar = max(w-(l.ns+l.res+4+l.text+10+5), 6)
	return l
}

func (l quotaLayout) cols() []cell {
	if l.wide {
		return []cell{{l.ns, false}, {l.res, false}, {l.bar, false}, {4, true}, {l.text, true}, {l.quota, false}, {-1, false}}
	}
	return []cell{{l.ns, false}, {l.res, false}, {l.bar, false}, {4, true}, {l.text, true}, {-1, false}}
}

func (v *quotasView) render(c *common, height int) []string {
	s := c.styles
	l := v.quotaLayout(c)
	var header string
	if l.wide {
		header = line(l.cols(), "NAMESPACE", "RESOURCE", "HAMI USED OF LIMIT", "", "USED/LIMIT", "RESOURCEQUOTA", "KUBERNETES STATUS")
	} else {
		header = line(l.cols(), "NAMESPACE", "RESOURCE", "HAMI USED OF LIMIT", "", "USED/LIMIT", "KUBERNETES")
	}
	lines := []string{s.colHeader.Render("  " + header)}
	t := v.t
	if t.shown() == 0 {
		return append(lines, s.dim.Render(c.emptyText(t, "no namespace has a GPU quota or GPU usage")))
	}
	for _, p := range t.visible(height - 1) {
		q := c.data.Quotas[t.order[p]]
		marker, ns := "  ", q.Namespace
		if p == t.cursor {
			marker, ns = "▸ ", s.selected.Render(padRight(q.Namespace, l.ns))
		} else {
			ns = s.bold.Render(padRight(ns, l.ns))
		}
		first := true
		for _, ql := range render.QuotaLines(q.Status) {
			if ql == nil {
				continue
			}
			name := ns
			if !first {
				marker, name = "  ", ""
			}
			first = false
			res := shortResource(ql.Resource)
			if l.wide {
				res = ql.Resource
			}
			var text string
			switch {
			case ql.Unit == "MiB" && !l.wide:
				text = mib(ql.Used) + "/" + mib(ql.Limit)
			case ql.Unit == "%":
				text = fmt.Sprintf("%d/%d %%", ql.Used, ql.Limit)
			default:
				text = fmt.Sprintf("%d/%d %s", ql.Used, ql.Limit, ql.Unit)
			}
			kube := kubeInUnit(q.Kube[ql.Resource], ql.Unit, l.wide)
			vals := []string{name, res, s.bar(l.bar, ql.Used, ql.Limit, -1), s.pct(ql.Used, ql.Limit), text}
			if l.wide {
				vals = append(vals, ql.Source)
			}
			lines = append(lines, marker+line(l.cols(), append(vals, kube)...))
		}
		if first {
			lines = append(lines, marker+line([]cell{{l.ns, false}, {-1, false}}, ns, s.dim.Render("no GPU quota: HAMi counts the usage, nothing limits it")))
		}
	}
	return lines
}

// renderVerdict is the CLI's why-pending rendering; kept in one place so the pager and what-if agree.
var renderVerdict = render.Verdict

// kubeInUnit writes Kubernetes' ResourceQuota status (a quantity such as "48k") in HAMi's column's unit,
// so the two read side by side: 48000 MiB, not 48k. A value that is no quantity is shown as it is.
func kubeInUnit(v, unit string, wide bool) string {
	if v == "" {
		return "-"
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return v
	}
	n := q.Value()
	switch {
	case unit == "MiB" && !wide:
		return mib(n)
	case unit == "%":
		return fmt.Sprintf("%d %%", n)
	case unit != "":
		return fmt.Sprintf("%d %s", n, unit)
	}
	return fmt.Sprint(n)
}
