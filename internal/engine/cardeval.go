package engine

import "fmt"

// evaluateCards answers for a pod that names a card and a queue but asks for no GPU HAMi manages (a MIG or
// MPS slice, or a card on a node without HAMi): only the card gates decide, kube-scheduler checks the rest.
func (c *Cluster) evaluateCards(v *Verdict, opts EvalOptions) *Verdict {
	v.NoGPURequest = true
	nodes, names := c.nodeList, c.nodeNames
	if opts.Nodes != nil {
		nodes, names = c.subset(opts.Nodes)
	}
	v.nodes = make([]NodeStatus, len(nodes))
	var agg aggregate
	agg.card = v.Card
	best := -1
	var feasible []int
	models := modelChecks{}
	for i, n := range nodes {
		ns := &v.nodes[i]
		ns.Node = names[i]
		chk, rank := v.Card.gate(n, models)
		if chk != nil {
			ns.Code, ns.Check, ns.Reason = chk.Code, chk, string(chk.Code)
			agg.add(nil, n, ns, nil, nodeFit{})
			continue
		}
		ns.Fits, ns.CardRank, ns.Score = true, max(rank, 0), CardPreference(rank)
		feasible = append(feasible, i)
		if best < 0 || ns.CardRank < v.nodes[best].CardRank {
			best = i
		}
	}
	v.Reasons = agg.counts()
	if best < 0 {
		v.Summary = summaryLine(len(nodes), v.Reasons, v.nodes)
		v.Explanation = explain(v.Request, &agg, v.Quota)
		v.Hints = v.Card.hints()
		return v
	}
	v.Fits = true
	for r := 0; len(v.feasible) < len(feasible); r++ {
		for _, i := range feasible {
			if v.nodes[i].CardRank == r {
				v.feasible = append(v.feasible, names[i])
			}
		}
	}
	card := "any node"
	if v.Card.Enforced {
		card = v.Card.Alternatives[v.nodes[best].CardRank].Card
	}
	v.Summary = fmt.Sprintf("%d/%d nodes pass the card quota; preferred: %s (%s); the pod asks for no GPU HAMi manages, so kube-scheduler places it",
		len(feasible), len(nodes), names[best], card)
	return v
}

// hints say what would let the pod's queue give it a card.
func (s *CardStatus) hints() []string {
	if s == nil || s.Fits || !s.Enforced {
		return nil
	}
	if !s.QueueFound {
		return []string{fmt.Sprintf("queue %s does not exist: create it, or name an existing queue in scheduling.volcano.sh/queue-name", s.Queue)}
	}
	if s.QuotaError != "" {
		return []string{fmt.Sprintf("fix volcano.sh/card.quota of queue %s: %s", s.Queue, s.QuotaError)}
	}
	var out []string
	for _, a := range s.Alternatives {
		switch {
		case !a.Listed:
			out = append(out, fmt.Sprintf("queue %s has no %s quota: add %q: %d to its volcano.sh/card.quota", s.Queue, a.Card, a.Card, a.Need))
		default:
			out = append(out, fmt.Sprintf("queue %s needs %d more %s (%d of %d used): raise its volcano.sh/card.quota to %d, or end one of its pods holding %s",
				s.Queue, a.Used+a.Need-a.Quota, a.Card, a.Used, a.Quota, a.Used+a.Need, a.Card))
		}
		if a.Nodes == 0 {
			out = append(out, fmt.Sprintf("no node has %s: check the card name against the nodes' <domain>/<type>.product labels", a.Card))
		}
	}
	return out
}
