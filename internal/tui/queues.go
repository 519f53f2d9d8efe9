package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// The Queues view: Volcano's card-model quota per queue and card (volcano.sh/card.quota, in whole cards),
// the queue's quota error, and the jobs (PodGroups in phase Pending) waiting to enter it with their
// enqueue check. Enter on a queue lists its pending pods.

// queuesView is the Queues tab.
type queuesView struct{ tableView }

func newQueuesView(Options) view {
	return &queuesView{tableView{t: newTable(sortCol{"queue", false}, sortCol{"used", true}, sortCol{"pending", true})}}
}

func (v *queuesView) info() viewInfo {
	return viewInfo{name: "Queues", about: ": card quota", commands: []string{"queues", "queue", "volcano", "vq", "cards"},
		drill: [2]string{"a queue", "its pending pods"}, headLines: 1, wraps: true,
		help: [][2]string{{"Queues", "Volcano volcano.sh/card.quota in whole cards: used of quota, left, pending, physical, free; waiting jobs"}}}
}

func (v *queuesView) setData(c *common) { v.t.setRows(v.queueRows(c)) }

// names are the queues, for `:queues QUEUE`.
func (v *queuesView) names(c *common) []string {
	var out []string
	for _, q := range c.data.Queues {
		out = append(out, q.Queue)
	}
	return out
}

// drill lists the selected queue's pending pods.
func (v *queuesView) drill(c *common) tea.Cmd {
	if i := v.t.selected(); i >= 0 {
		c.send(showFiltered("Pending", queueFilter(c.data.Queues[i].Queue)))
	}
	return nil
}

// queueRows are the Queues view's rows, one per queue; a row's height is its card lines and notes.
func (v *queuesView) queueRows(c *common) []row {
	l := v.queueLayout(c)
	rows := make([]row, len(c.data.Queues))
	for i, q := range c.data.Queues {
		used := -1.0
		text := []string{q.Queue}
		for _, c := range q.Cards {
			text = append(text, c.Card)
			if c.Listed && c.Quota > 0 {
				used = max(used, ratio(c.Used, c.Quota))
			}
		}
		for _, j := range q.Jobs {
			text = append(text, j.Key)
		}
		h := len(q.Cards) + len(v.queueNotes(c, l, q))
		if len(q.Cards) == 0 && !q.Missing && q.QuotaError == "" {
			h++ // "no card quota"
		}
		rows[i] = row{key: q.Queue, text: strings.Join(text, " "), height: max(h, 1),
			keys: []sortKey{str(q.Queue), num(used), num(float64(q.PendingPods + len(q.Jobs)))}}
	}
	return rows
}

type queueLayout struct {
	wide                   bool
	queue, card, bar, note int // note: the width of the lines under a queue's cards
}

func (v *queuesView) queueLayout(c *common) queueLayout {
	w := c.width - 2
	var l queueLayout
	// Wide: full card names (MIG profiles are long) and a bar of at least 20 cells.
	if w >= 130 {
		l = queueLayout{wide: true, queue: 16, card: 40}
		l.bar = min(w-(l.queue+l.card+4+6+6+6+8+9+6+9), 40)
	} else {
		l = queueLayout{queue: 10, card: 14}
		l.bar = min(max(w-(l.queue+l.card+4+5+4+4+4+4+4+9), 6), 40)
	}
	l.note = max(w-l.queue-1, 20)
	return l
}

func (l queueLayout) cols() []cell {
	if l.wide {
		return []cell{{l.queue, false}, {l.card, false}, {l.bar, false}, {4, true}, {6, true}, {6, true}, {6, true}, {8, true}, {9, true}, {6, true}}
	}
	return []cell{{l.queue, false}, {l.card, false}, {l.bar, false}, {4, true}, {5, true}, {4, true}, {4, true}, {4, true}, {4, true}, {4, true}}
}

// shortCard drops the vendor prefix of each alternative on narrow screens: NVIDIA-A100-SXM4-80GB -> A100-SXM4-80GB.
func (l queueLayout) shortCard(card string) string {
	if l.wide {
		return card
	}
	parts := strings.Split(card, "|")
	for i, p := range parts {
		if len(p) > 7 && strings.EqualFold(p[:7], "nvidia-") {
			parts[i] = p[7:]
		}
	}
	return strings.Join(parts, "|")
}

// queueNotes are the lines under a queue's cards: its state when it is not open, why its quota cannot be
// read, and its waiting jobs' enqueue checks, wrapped to the width.
func (v *queuesView) queueNotes(c *common, l queueLayout, q *QueueView) []string {
	s := c.styles
	var out []string
	add := func(text string, st func(...string) string) {
		for i, w := range strings.Split(ansi.Wrap(text, l.note-2, ""), "\n") {
			if i > 0 {
				w = "  " + w
			}
			out = append(out, st(w))
		}
	}
	if q.Missing {
		add("the queue does not exist: Volcano does not enqueue the jobs that name it", s.crit.Render)
	}
	if q.State != "" && q.State != "Open" {
		add(fmt.Sprintf("state %s: the queue takes no new jobs", q.State), s.warn.Render)
	}
	if q.QuotaError != "" {
		add("volcano.sh/card.quota cannot be read, so every card is denied: "+q.QuotaError, s.crit.Render)
	}
	for _, j := range q.Jobs {
		st := s.warn.Render
		if j.Enqueue.Fits {
			st = s.ok.Render
		}
		for _, ln := range j.Enqueue.Lines() {
			add("waiting: "+ln, st)
		}
	}
	return out
}

func (v *queuesView) render(c *common, height int) []string {
	s := c.styles
	l := v.queueLayout(c)
	var header string
	if l.wide {
		header = line(l.cols(), "QUEUE", "CARD", "USED OF QUOTA (whole cards)", "", "QUOTA", "USED", "LEFT", "PENDING", "PHYSICAL", "FREE")
	} else {
		header = line(l.cols(), "QUEUE", "CARD", "USED OF QUOTA", "", "QUOTA", "USED", "LEFT", "PEND", "PHYS", "FREE")
	}
	lines := []string{s.colHeader.Render("  " + header)}
	t := v.t
	if t.shown() == 0 {
		none := "no Volcano queues"
		if !c.data.Volcano {
			none += ": the cluster has no Queue CRD (scheduling.volcano.sh), so no card quota applies"
		}
		return append(lines, s.dim.Render(c.emptyText(t, none)))
	}
	for _, p := range t.visible(height - 1) {
		q := c.data.Queues[t.order[p]]
		marker, name := "  ", s.bold.Render(padRight(q.Queue, l.queue))
		if p == t.cursor {
			marker, name = "▸ ", s.selected.Render(padRight(q.Queue, l.queue))
		}
		first := func() (string, string) {
			mk, n := marker, name
			marker, name = "  ", strings.Repeat(" ", l.queue)
			return mk, n
		}
		for _, c := range q.Cards {
			mk, n := first()
			quota, used, left, phys, free := fmt.Sprint(c.Quota), fmt.Sprint(c.Used), fmt.Sprint(max(c.Quota-c.Used, 0)), fmt.Sprint(c.Physical), fmt.Sprint(c.Free)
			pend := fmt.Sprint(c.Pending)
			if c.Pending > 0 {
				pend = s.warn.Render(pend)
			}
			var bar, pct string
			switch {
			case strings.Contains(c.Card, "|"):
				// Pending pods naming alternatives: counted here until they are bound to one card.
				quota, used, left, phys, free = "-", "-", "-", "-", "-"
				bar, pct = s.dim.Render(padRight("pods naming alternatives", l.bar)), s.na.Render(padLeft("-", 4))
			case !c.Listed:
				quota, left = "none", "-"
				bar, pct = s.crit.Render(padRight("not in the quota: denied", l.bar)), s.na.Render(padLeft("-", 4))
			default:
				bar, pct = s.bar(l.bar, c.Used, c.Quota, -1), s.pct(c.Used, c.Quota)
				if c.Quota-c.Used <= 0 {
					left = s.crit.Render(left)
				}
			}
			lines = append(lines, mk+line(l.cols(), n, l.shortCard(c.Card), bar, pct, quota, used, left, pend, phys, free))
		}
		if len(q.Cards) == 0 && !q.Missing && q.QuotaError == "" {
			mk, n := first()
			lines = append(lines, mk+line([]cell{{l.queue, false}, {-1, false}}, n, s.dim.Render("no card quota (no volcano.sh/card.quota)")))
		}
		for _, note := range v.queueNotes(c, l, q) {
			mk, n := first()
			lines = append(lines, mk+line([]cell{{l.queue, false}, {-1, false}}, n, note))
		}
	}
	return lines
}
