package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// cardOnly explains a pod that names a Volcano card but asks for no GPU HAMi manages (a MIG or MPS slice):
// only the card gates are the engine's to explain.
func cardOnly(p *printer, in VerdictInput) error {
	v := in.Verdict
	p.line("%s", v.Summary)
	if !v.Fits {
		p.blank()
		t := NewTable(p, "GATE", "NODES", "EXAMPLE")
		for _, r := range v.Reasons {
			t.Row(string(r.Code), fmt.Sprint(r.Nodes), example(v, r.Code))
		}
		p.flush(t)
	}
	cardQuota(p, v)
	hints(p, v)
	events(p, in.Events, in.Now)
	return p.err
}

// cardQuota is the Volcano card-model quota section: one row per alternative of volcano.sh/card.name, in
// order of preference, in whole cards; then the job's enqueue check when its PodGroup waits for it.
func cardQuota(p *printer, v *engine.Verdict) {
	if c := v.Card; c != nil {
		p.blank()
		switch {
		case c.Note != "":
			p.line("Card quota: %s", c.Note)
		case !c.QueueFound:
			p.line("Card quota: queue %s does not exist: Volcano does not schedule the pod", c.Queue)
		default:
			title := fmt.Sprintf("Card quota (Volcano queue %s, volcano.sh/card.quota), in whole cards:", c.Queue)
			if !c.Enforced {
				title = fmt.Sprintf("Card quota (Volcano queue %s), not enforced (--card-quota=off):", c.Queue)
			}
			p.line("%s", title)
			if c.QuotaError != "" {
				p.line("  the queue's volcano.sh/card.quota cannot be read, so Volcano denies every card: %s", c.QuotaError)
			}
			t := NewTable(p, "  CARD", "RESOURCE", "USED", "QUOTA", "POD NEEDS", "NODES", "VERDICT")
			for _, a := range c.Alternatives {
				quota := fmt.Sprint(a.Quota)
				if !a.Listed {
					quota = "none"
				}
				t.Row("  "+a.Card, a.Resource, fmt.Sprint(a.Used), quota, fmt.Sprint(a.Need), fmt.Sprint(a.Nodes), altVerdict(a, c))
			}
			p.flush(t)
		}
	}
	if e := v.Enqueue; e != nil {
		p.blank()
		state := "may enter its queue"
		if !e.Fits {
			state = "cannot enter its queue"
		}
		p.line("Job (PodGroup %s, %s) %s:", e.PodGroup, e.Phase, state)
		for _, l := range e.Lines() {
			p.line("  %s", l)
		}
	}
}

func altVerdict(a engine.CardAlternative, c *engine.CardStatus) string {
	switch {
	case c.QuotaError != "":
		return "denied"
	case a.Fits && a.Nodes == 0:
		return "quota left, no node has it"
	case a.Fits:
		return "fits"
	case !a.Listed:
		return "no quota"
	}
	return "no quota left"
}

// Queues is the card quota table: per queue and card, the quota, what the queue's pods hold and wait for,
// and the cluster's physical and free cards of that model.
func Queues(w io.Writer, c *engine.Cluster) error {
	t := NewTable(w, "QUEUE", "CARD", "QUOTA", "USED", "LEFT", "PENDING", "PHYSICAL", "FREE")
	for _, q := range c.QueueUsages() {
		if q.QuotaError != "" {
			t.Row(q.Queue, "(unreadable volcano.sh/card.quota: every card denied)", "-", "-", "-", "-", "-", "-")
		}
		if len(q.Cards) == 0 && q.QuotaError == "" {
			t.Row(q.Queue, "(no card quota)", "-", "-", "-", "-", "-", "-")
		}
		for _, r := range q.Cards {
			quota, left, physical, free := fmt.Sprint(r.Quota), fmt.Sprint(max(r.Quota-r.Used, 0)), fmt.Sprint(r.Physical), fmt.Sprint(r.Free)
			switch {
			case strings.Contains(r.Card, "|"): // pending pods naming alternatives: not a quota entry of its own
				quota, left, physical, free = "-", "-", "-", "-"
			case !r.Listed:
				quota, left = "none", "-"
			}
			t.Row(q.Queue, r.Card, quota, fmt.Sprint(r.Used), left, fmt.Sprint(r.Pending), physical, free)
		}
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, g := range c.PodGroups() {
		if g.Phase != "Pending" {
			continue
		}
		if e := c.Enqueue(g.Namespace, g.Name); e != nil {
			for _, l := range e.Lines() {
				fmt.Fprintf(w, "waiting job: %s\n", l)
			}
		}
	}
	return nil
}
