package engine

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// EnqueueCard is the job-level check for one card (or "A|B" key) of a job's request:
// request + allocated + inqueue - elastic <= capability, summed over the alternatives of an "A|B" key.
type EnqueueCard struct {
	Card       string `json:"card"`
	Request    int64  `json:"request"`
	Allocated  int64  `json:"allocated"`
	Inqueue    int64  `json:"inqueue"`
	Elastic    int64  `json:"elastic"`
	Capability int64  `json:"capability"`
	Fits       bool   `json:"fits"`
}

// Total is what the queue would hold with the job enqueued.
func (e EnqueueCard) Total() int64 { return e.Request + e.Allocated + e.Inqueue - e.Elastic }

// EnqueueStatus is whether a Pending PodGroup (a job) may enter its queue under the card quota.
type EnqueueStatus struct {
	PodGroup string `json:"podGroup"`
	Queue    string `json:"queue"`
	Phase    string `json:"phase,omitempty"`
	// FromPods is true when the job's pods exist: their per-pod cards replace volcano.sh/card.request.
	FromPods bool          `json:"fromPods"`
	Fits     bool          `json:"fits"`
	Cards    []EnqueueCard `json:"cards"`
	Note     string        `json:"note,omitempty"`
}

// Lines describes the check, one line per card.
func (s *EnqueueStatus) Lines() []string {
	if s == nil {
		return nil
	}
	if s.Note != "" {
		return []string{s.Note}
	}
	src := "volcano.sh/card.request"
	if s.FromPods {
		src = "its pods"
	}
	var out []string
	for _, c := range s.Cards {
		cmp, verdict := "<=", "fits"
		if !c.Fits {
			cmp, verdict = ">", "cannot enqueue"
		}
		out = append(out, fmt.Sprintf("job %s in queue %s: %s: %d asked (%s) + %d allocated + %d in queue - %d elastic = %d %s quota %d: %s",
			s.PodGroup, s.Queue, c.Card, c.Request, src, c.Allocated, c.Inqueue, c.Elastic, c.Total(), cmp, c.Capability, verdict))
	}
	return out
}

// podEnqueue is the enqueue check of the pod's PodGroup while that PodGroup is Pending; nil otherwise.
func (c *Cluster) podEnqueue(pod *corev1.Pod) *EnqueueStatus {
	group := pod.Annotations[codec.GroupNameAnnotation]
	if group == "" {
		return nil
	}
	g := c.podGroups[pod.Namespace+"/"+group]
	if g == nil || g.Phase != "Pending" {
		return nil
	}
	return c.Enqueue(pod.Namespace, group)
}

// Enqueue runs the card quota's job-level check for a PodGroup; nil when the PodGroup is unknown or asks
// for no card.
func (c *Cluster) Enqueue(namespace, name string) *EnqueueStatus {
	g := c.podGroups[namespace+"/"+name]
	if g == nil || g.Queue == "" {
		return nil
	}
	cc := c.cardContext()
	s := &EnqueueStatus{PodGroup: g.Key(), Queue: g.Queue, Phase: g.Phase}
	groups := c.groupCards(cc, g.Queue)
	request := groups.of(g).all
	if len(request) > 0 {
		s.FromPods = true
	} else {
		request = g.CardRequest
	}
	if len(request) == 0 {
		return nil
	}
	q := c.queues[g.Queue]
	switch {
	case q == nil:
		s.Note = fmt.Sprintf("job %s: queue %s does not exist", g.Key(), g.Queue)
		return s
	case q.QuotaError != "":
		s.Note = fmt.Sprintf("job %s: queue %s: volcano.sh/card.quota cannot be read (%s): every card is denied", g.Key(), g.Queue, q.QuotaError)
		return s
	}
	used := c.queueUsed(g.Queue, "")
	inqueue, elastic := map[string]int64{}, map[string]int64{}
	for _, other := range c.podGroups {
		if other == g || other.Queue != g.Queue {
			continue
		}
		gc := groups.of(other)
		allocated := gc.allocated
		switch other.Phase {
		case "Inqueue":
			for key, n := range other.CardRequest {
				inqueue[firstCard(key)] += max(n-allocated[key], 0)
			}
		case "Running":
			for key, n := range allocated {
				minReq, ok := other.CardRequest[key]
				if !ok {
					minReq = n / max(int64(gc.pods[key]), 1) * int64(other.MinMember)
				}
				elastic[firstCard(key)] += max(n-minReq, 0)
			}
		}
	}
	keys := make([]string, 0, len(request))
	for k := range request {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s.Fits = true
	for _, key := range keys {
		e := EnqueueCard{Card: key, Request: request[key]}
		for _, alt := range strings.Split(key, "|") {
			alt = strings.TrimSpace(alt)
			e.Capability += q.CardQuota[alt]
			e.Allocated += used[alt]
			e.Inqueue += inqueue[alt]
			e.Elastic += elastic[alt]
		}
		e.Fits = e.Total() <= e.Capability
		s.Fits = s.Fits && e.Fits
		s.Cards = append(s.Cards, e)
	}
	return s
}

// groupCardSums is what one PodGroup's pods ask for and hold, by their card.name ("A|B" stays one key).
type groupCardSums struct {
	all, allocated map[string]int64
	pods           map[string]int // allocated pods per key
}

// groupIndex is the card sums of PodGroups by namespace and name.
type groupIndex map[groupKey]*groupCardSums

type groupKey struct{ namespace, name string }

// of is the sums of one PodGroup; empty when none of its pods names a card.
func (gi groupIndex) of(g *PodGroup) *groupCardSums {
	if s := gi[groupKey{g.Namespace, g.Name}]; s != nil {
		return s
	}
	return &groupCardSums{}
}

// groupCards sums, in one pass over the card pods, the cards of every PodGroup whose queue is queue (and of
// the groups not known yet, which may be the one asked about).
func (c *Cluster) groupCards(cc *cardContext, queue string) groupIndex {
	out := groupIndex{}
	for _, p := range c.cardPods {
		if p.group == "" {
			continue
		}
		key := groupKey{p.namespace, p.group}
		if g := c.podGroups[p.namespace+"/"+p.group]; g != nil && g.Queue != queue {
			continue
		}
		sums := out[key]
		if sums == nil {
			sums = &groupCardSums{all: map[string]int64{}, allocated: map[string]int64{}, pods: map[string]int{}}
			out[key] = sums
		}
		n := p.amounts[c.cardResource(cc, p.alts[0])]
		sums.all[p.cardName] += n
		if p.node != "" {
			sums.allocated[p.cardName] += n
			sums.pods[p.cardName]++
		}
	}
	return out
}

func firstCard(key string) string {
	first, _, _ := strings.Cut(key, "|")
	return strings.TrimSpace(first)
}
