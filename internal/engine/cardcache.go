package engine

import (
	"slices"
	"sync"
)

// The card quota's accounting is cached: what each queue's allocated pods hold per card, and the cluster's
// card-to-resource map. Pods update it incrementally; a change of a node's cards or of a PodGroup (which can
// move pods between queues) drops it, and the next evaluation rebuilds it. Node status updates that leave
// the cards alone (heartbeats) keep it.
//
// Evaluations run concurrently under a reader lock (the extender), so the rebuild, the one write an
// evaluation makes, is serialised by mu; invalidation and incremental updates happen only in the writers
// (SetPod, SetNode, ...), which the callers already serialise against every evaluation.
type cardCache struct {
	mu    sync.Mutex
	ctx   *cardContext
	used  map[string]map[string]int64 // queue -> card -> cards held
	valid bool
}

// contribution is what one allocated card pod adds to its queue's usage.
type contribution struct {
	queue, card string
	amount      int64
}

func (c *Cluster) invalidateCards() { c.cards.valid = false }

// cardState returns the cached context and usage, rebuilding them when dropped.
func (c *Cluster) cardState() *cardCache {
	c.cards.mu.Lock()
	defer c.cards.mu.Unlock()
	if c.cards.valid {
		return &c.cards
	}
	c.cards.ctx = c.newCardContext()
	c.cards.used = map[string]map[string]int64{}
	for _, p := range c.cardPods {
		p.contrib = c.contributionOf(p)
		c.addContribution(p.contrib, +1)
	}
	c.cards.valid = true
	return &c.cards
}

// contributionOf is what an allocated pod holds of its queue's cards; zero for a pending pod or no queue.
func (c *Cluster) contributionOf(p *cardPod) contribution {
	if p.node == "" {
		return contribution{}
	}
	queue := c.podQueue(p)
	if queue == "" {
		return contribution{}
	}
	card := c.actualCard(p)
	return contribution{queue: queue, card: card, amount: p.amounts[c.cardResource(c.cards.ctx, card)]}
}

func (c *Cluster) addContribution(k contribution, sign int64) {
	if k.queue == "" {
		return
	}
	m := c.cards.used[k.queue]
	if m == nil {
		m = map[string]int64{}
		c.cards.used[k.queue] = m
	}
	m[k.card] += sign * k.amount
	// No zero entries: the usage must read the same whether kept incrementally or rebuilt.
	if m[k.card] == 0 {
		delete(m, k.card)
		if len(m) == 0 {
			delete(c.cards.used, k.queue)
		}
	}
}

// trackCardPod adds (or with sign -1 removes) a card pod's usage while the cache is valid.
func (c *Cluster) trackCardPod(p *cardPod, sign int64) {
	if !c.cards.valid {
		return
	}
	if sign > 0 {
		p.contrib = c.contributionOf(p)
	}
	c.addContribution(p.contrib, sign)
}

// sameCards reports whether two builds of a node offer the same cards.
func sameCards(a, b *Node) bool {
	return a.CardProduct == b.CardProduct && slices.Equal(a.Cards, b.Cards)
}
