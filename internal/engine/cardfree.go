package engine

// freeCards counts, per card name, the physical cards that can take a pod now: on each node, the cards its
// labels count, less those any allocated pod holds there (in a queue or not), and never more than the node's
// GPUs that are healthy, not cordoned and carry no HAMi allocation when HAMi registered them. A card that
// is held, unhealthy or cordoned is not free, whatever a queue's quota leaves (the queue's LEFT is separate).
func (c *Cluster) freeCards(cc *cardContext) map[string]int64 {
	held := map[string]map[string]int64{} // node -> card -> cards pods hold
	for _, p := range c.cardPods {
		if p.node == "" {
			continue
		}
		card := c.actualCard(p)
		if held[p.node] == nil {
			held[p.node] = map[string]int64{}
		}
		held[p.node][card] += p.amounts[c.cardResource(cc, card)]
	}
	free := map[string]int64{}
	for _, n := range c.nodeList {
		idle := int64(-1) // unknown: HAMi registered no GPU here
		if n.Registered && len(n.GPUs) > 0 {
			idle = 0
			for i := range n.GPUs {
				g := &n.GPUs[i]
				if g.Healthy && !g.Cordoned && g.UsedSlots == 0 && g.UsedMem == 0 && len(g.MigUsed) == 0 {
					idle++
				}
			}
		}
		for _, k := range n.Cards {
			f := max(k.Count-held[n.Name][k.Name], 0)
			if idle >= 0 {
				f = min(f, idle)
				idle -= f // two card names on one node share its idle GPUs
			}
			free[k.Name] += f
		}
	}
	return free
}
