package engine

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// CardAlternative is one card a pod may take, with its queue's whole-card numbers.
type CardAlternative struct {
	Card     string `json:"card"`
	Resource string `json:"resource"` // the resource the card maps to; the pod's amount of it is Need
	Need     int64  `json:"need"`
	Used     int64  `json:"used"`  // cards of this model the queue's other pods hold
	Quota    int64  `json:"quota"` // 0 when not listed
	Listed   bool   `json:"listed"`
	Fits     bool   `json:"fits"`
	Nodes    int    `json:"nodes"` // nodes that have this card
}

// CardStatus is the card quota's answer for one pod: its queue and each alternative in order of preference.
type CardStatus struct {
	Queue        string            `json:"queue"`
	QueueFound   bool              `json:"queueFound"`
	QuotaError   string            `json:"quotaError,omitempty"`
	Alternatives []CardAlternative `json:"alternatives"`
	// Fits is true when at least one alternative has quota left.
	Fits bool `json:"fits"`
	// Enforced is false when the card quota is switched off: the numbers are shown, nodes are not filtered.
	Enforced bool `json:"enforced"`
	// Note explains a status that is not enforced for a reason other than the switch.
	Note string `json:"note,omitempty"`

	// Built once by prepare, before any node is checked, then only read (node ranges are checked in
	// parallel): the names in order and each alternative's failing check.
	alts   []string
	failed []*Check
}

// modelChecks caches the card-model check per distinct set of node cards; one per goroutine.
type modelChecks map[string]*Check

// Lines describes the status, one line per alternative: "queue q1: NVIDIA-H200 3 of 3 used, the pod needs 1".
func (s *CardStatus) Lines() []string {
	if s == nil {
		return nil
	}
	if s.Note != "" {
		return []string{s.Note}
	}
	if !s.QueueFound {
		return []string{fmt.Sprintf("queue %s does not exist: Volcano does not schedule the pod", s.Queue)}
	}
	var out []string
	if s.QuotaError != "" {
		out = append(out, fmt.Sprintf("queue %s: %s cannot be read (%s): every card is denied", s.Queue, "volcano.sh/card.quota", s.QuotaError))
	}
	for i, a := range s.Alternatives {
		lead := fmt.Sprintf("queue %s: ", s.Queue)
		if i > 0 {
			lead = "alternative "
		}
		var body string
		switch {
		case !a.Listed:
			body = fmt.Sprintf("%s has no quota (not in volcano.sh/card.quota), the pod needs %d", a.Card, a.Need)
		default:
			body = fmt.Sprintf("%s %d of %d used, the pod needs %d", a.Card, a.Used, a.Quota, a.Need)
		}
		verdict := "no quota left"
		switch {
		case a.Fits && a.Nodes == 0:
			verdict = "fits the quota, but no node has this card"
		case a.Fits:
			verdict = "fits"
		case s.QuotaError != "":
			verdict = "denied"
		}
		out = append(out, lead+body+"; "+verdict)
	}
	return out
}

// cardContext is the card quota's per-evaluation state: the cluster's card-to-resource map.
type cardContext struct {
	resources map[string]string // card name -> resource
	nodes     map[string]int    // card name -> nodes that have it
	physical  map[string]int64  // card name -> cards in the cluster
}

// cardContext is the cached card context of the cluster.
func (c *Cluster) cardContext() *cardContext { return c.cardState().ctx }

func (c *Cluster) newCardContext() *cardContext {
	cc := &cardContext{resources: map[string]string{}, nodes: map[string]int{}, physical: map[string]int64{}}
	for _, n := range c.nodeList {
		for _, k := range n.Cards {
			if _, ok := cc.resources[k.Name]; !ok {
				cc.resources[k.Name] = k.Resource
			}
			cc.nodes[k.Name]++
			cc.physical[k.Name] += k.Count
		}
	}
	return cc
}

// resource is the resource a card maps to; a card no node has is mapped by its name's shape.
func (c *Cluster) cardResource(cc *cardContext, card string) string {
	if r, ok := cc.resources[card]; ok {
		return r
	}
	return CardResourceOf(card, c.cfg.ResourceCountName)
}

// actualCard is the card an allocated pod holds: the first of its alternatives its node has.
func (c *Cluster) actualCard(p *cardPod) string {
	if n := c.nodes[p.node]; n != nil {
		if i := n.cardChoice(p.alts); i >= 0 {
			return p.alts[i]
		}
	}
	return p.alts[0]
}

// queueUsed is the cards of each model the queue's allocated pods hold, leaving out the pod named skip.
func (c *Cluster) queueUsed(queue, skip string) map[string]int64 {
	st := c.cardState()
	used := make(map[string]int64, len(st.used[queue]))
	for card, n := range st.used[queue] {
		used[card] = n
	}
	if p := c.cardPods[skip]; p != nil && p.contrib.queue == queue {
		used[p.contrib.card] -= p.contrib.amount
	}
	return used
}

// cardStatus is the card quota's answer for a pod, nil when the quota does not concern it.
func (c *Cluster) cardStatus(pod *corev1.Pod) *CardStatus {
	p, _ := readCardPod(pod)
	if p == nil {
		return nil
	}
	p.node = "" // the pod is evaluated as if it were not placed yet
	queue := c.podQueue(p)
	if queue == "" {
		return nil
	}
	cc := c.cardContext()
	s := &CardStatus{Queue: queue, Enforced: c.cfg.CardQuota != CardQuotaOff}
	if !c.Volcano() {
		s.Note = fmt.Sprintf("queue %s: no Volcano Queue objects were read, so the card quota is not checked", queue)
		s.Enforced, s.Fits = false, true
		return s
	}
	q := c.queues[queue]
	s.QueueFound = q != nil
	var used map[string]int64
	if q != nil {
		s.QuotaError = q.QuotaError
		used = c.queueUsed(queue, pod.Namespace+"/"+pod.Name)
	}
	for _, alt := range p.alts {
		res := c.cardResource(cc, alt)
		a := CardAlternative{Card: alt, Resource: res, Need: p.amounts[res], Nodes: cc.nodes[alt], Used: used[alt]}
		if q != nil && q.QuotaError == "" {
			a.Quota, a.Listed = q.CardQuota[alt]
			a.Fits = a.Listed && a.Used+a.Need <= a.Quota
		}
		s.Fits = s.Fits || a.Fits
		s.Alternatives = append(s.Alternatives, a)
	}
	s.prepare()
	return s
}

// cardGate is the card quota's node check: the node has one of the pod's cards and the queue has quota for
// it. It returns the failing check, or nil and the index of the alternative the node offers (-1: no card gate).
func (s *CardStatus) gate(n *Node, cache modelChecks) (*Check, int) {
	if s == nil || !s.Enforced {
		return nil, -1
	}
	if !s.QueueFound {
		return &Check{Gate: "card-quota", Code: QueueCardQuotaNotFit, Detail: fmt.Sprintf("queue %s does not exist", s.Queue)}, -1
	}
	i := n.cardChoice(s.alts)
	if i < 0 {
		names := n.cardNames()
		chk := cache[names]
		if chk == nil {
			chk = &Check{Gate: "card-model", Code: CardModelNotRequested,
				Detail: fmt.Sprintf("node has %s; the pod asks for %s", names, strings.Join(s.alts, "|"))}
			if cache != nil {
				cache[names] = chk
			}
		}
		return chk, -1
	}
	return s.failed[i], i
}

// prepare builds what gate shares between nodes. Checks are shared read-only by every NodeStatus.
func (s *CardStatus) prepare() {
	s.alts = make([]string, len(s.Alternatives))
	s.failed = make([]*Check, len(s.Alternatives))
	for i := range s.Alternatives {
		a := &s.Alternatives[i]
		s.alts[i] = a.Card
		if a.Fits {
			continue
		}
		detail := fmt.Sprintf("queue %s: %s %d of %d used, the pod needs %d", s.Queue, a.Card, a.Used, a.Quota, a.Need)
		switch {
		case s.QuotaError != "":
			detail = fmt.Sprintf("queue %s: volcano.sh/card.quota cannot be read, every card is denied", s.Queue)
		case !a.Listed:
			detail = fmt.Sprintf("queue %s has no quota for %s", s.Queue, a.Card)
		}
		s.failed[i] = &Check{Gate: "card-quota", Code: QueueCardQuotaNotFit, Need: a.Need, Have: max(a.Quota-a.Used, 0), Total: a.Quota,
			Unit: "cards", Detail: detail}
	}
}

// consume records that one more copy of the pod took an alternative (capacity counting).
func (s *CardStatus) consume(i int) {
	if s == nil || i < 0 || i >= len(s.Alternatives) {
		return
	}
	a := &s.Alternatives[i]
	a.Used += a.Need
	a.Fits = a.Listed && s.QuotaError == "" && a.Used+a.Need <= a.Quota
	s.Fits = false
	for _, x := range s.Alternatives {
		s.Fits = s.Fits || x.Fits
	}
	s.prepare() // the failing checks carry the new numbers
}

// QueueCard is one card row of a queue: its quota, what the queue's pods hold and wait for, and the cluster's
// physical count and free cards of that model.
type QueueCard struct {
	Card     string `json:"card"`
	Quota    int64  `json:"quota"`
	Listed   bool   `json:"listed"`
	Used     int64  `json:"used"`
	Pending  int64  `json:"pending,omitempty"` // asked for by the queue's pending pods ("A|B" rows count pods naming alternatives)
	Physical int64  `json:"physical"`
	Free     int64  `json:"free"` // physical cards no pod holds, healthy and not cordoned (cardfree.go)
}

// QueueUsage is a queue's card quota and use.
type QueueUsage struct {
	Queue       string      `json:"queue"`
	State       string      `json:"state,omitempty"`
	QuotaError  string      `json:"quotaError,omitempty"`
	Cards       []QueueCard `json:"cards"`
	PendingPods int         `json:"pendingPods"`
}

// QueueUsages lists every queue's card rows, queues by name and cards by name.
func (c *Cluster) QueueUsages() []QueueUsage {
	cc := c.cardContext()
	free := c.freeCards(cc)
	var out []QueueUsage
	for _, q := range c.Queues() {
		u := QueueUsage{Queue: q.Name, State: q.State, QuotaError: q.QuotaError}
		rows := map[string]*QueueCard{}
		row := func(card string) *QueueCard {
			if r := rows[card]; r != nil {
				return r
			}
			r := &QueueCard{Card: card, Physical: cc.physical[card], Free: free[card]}
			r.Quota, r.Listed = q.CardQuota[card]
			rows[card] = r
			return r
		}
		for card := range q.CardQuota {
			row(card)
		}
		for card, n := range c.queueUsed(q.Name, "") {
			row(card).Used += n
		}
		for _, p := range c.cardPods {
			if p.node != "" || c.podQueue(p) != q.Name {
				continue
			}
			u.PendingPods++
			row(p.cardName).Pending += p.amounts[c.cardResource(cc, p.alts[0])]
		}
		for _, r := range rows {
			u.Cards = append(u.Cards, *r)
		}
		sort.Slice(u.Cards, func(i, j int) bool { return u.Cards[i].Card < u.Cards[j].Card })
		out = append(out, u)
	}
	return out
}
