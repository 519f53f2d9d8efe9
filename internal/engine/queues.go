package engine

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// Queue is a Volcano queue as the card quota sees it.
type Queue struct {
	Name  string `json:"name"`
	State string `json:"state,omitempty"`
	// HasCardQuota is true when the queue carries volcano.sh/card.quota. A card the quota does not list has
	// quota 0: Volcano's capacity-card plugin denies it.
	HasCardQuota bool             `json:"hasCardQuota"`
	CardQuota    map[string]int64 `json:"cardQuota,omitempty"`
	// QuotaError is why volcano.sh/card.quota could not be read; the plugin then denies every card.
	QuotaError string `json:"quotaError,omitempty"`
	RawQuota   string `json:"rawQuota,omitempty"`
}

// NewQueue reads a queue's card quota from its annotations.
func NewQueue(name, state string, annotations map[string]string) (Queue, []Problem) {
	q := Queue{Name: name, State: state}
	raw, ok := annotations[codec.CardQuotaAnnotation]
	if !ok {
		return q, nil
	}
	q.HasCardQuota, q.RawQuota = true, raw
	m, err := codec.ParseCardQuota(raw)
	if err != nil {
		q.QuotaError = err.Error()
		return q, []Problem{{Kind: "Queue", Object: name, Field: "metadata.annotations[" + codec.CardQuotaAnnotation + "]",
			Message: err.Error() + "; Volcano's capacity-card plugin reads this as an empty quota and denies every card"}}
	}
	q.CardQuota = m
	return q, nil
}

// PodGroup is a Volcano PodGroup (a job) as the card quota's enqueue check sees it.
type PodGroup struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Queue     string `json:"queue"`
	MinMember int32  `json:"minMember"`
	Phase     string `json:"phase,omitempty"` // Pending, Inqueue, Running, ...
	// CardRequest is volcano.sh/card.request: the job's total cards by card name (or "A|B").
	CardRequest  map[string]int64 `json:"cardRequest,omitempty"`
	RequestError string           `json:"requestError,omitempty"`
}

// Key is namespace/name.
func (g *PodGroup) Key() string { return g.Namespace + "/" + g.Name }

// NewPodGroup reads a PodGroup's card request from its annotations.
func NewPodGroup(namespace, name, queue string, minMember int32, phase string, annotations map[string]string) (PodGroup, []Problem) {
	g := PodGroup{Namespace: namespace, Name: name, Queue: queue, MinMember: minMember, Phase: phase}
	raw, ok := annotations[codec.CardRequestAnnotation]
	if !ok {
		return g, nil
	}
	m, err := codec.ParseCardRequest(raw)
	if err != nil {
		g.RequestError = err.Error()
		return g, []Problem{{Kind: "PodGroup", Object: g.Key(), Field: "metadata.annotations[" + codec.CardRequestAnnotation + "]", Message: err.Error()}}
	}
	g.CardRequest = m
	return g, nil
}

// cardPod is what the card quota needs of a pod that names a card.
type cardPod struct {
	namespace, name string
	alts            []string
	cardName        string // the annotation as written, "A|B"
	queue           string // scheduling.volcano.sh/queue-name
	group           string // scheduling.k8s.io/group-name
	amounts         map[string]int64
	node            string // bound or assumed node; empty while pending
	contrib         contribution
}

// readCardPod reads the card quota's view of a pod; nil when the pod names no card or no longer counts.
func readCardPod(pod *corev1.Pod) (*cardPod, []Problem) {
	raw, ok := pod.Annotations[codec.CardNameAnnotation]
	if !ok || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || pod.DeletionTimestamp != nil && pod.Spec.NodeName == "" {
		return nil, nil
	}
	key := pod.Namespace + "/" + pod.Name
	alts, err := codec.ParseCardName(raw)
	if err != nil {
		return nil, []Problem{{Kind: "Pod", Object: key, Field: "metadata.annotations[" + codec.CardNameAnnotation + "]", Message: err.Error()}}
	}
	p := &cardPod{namespace: pod.Namespace, name: pod.Name, alts: alts, cardName: strings.Join(alts, "|"),
		queue: strings.TrimSpace(pod.Annotations[codec.QueueNameAnnotation]), group: pod.Annotations[codec.GroupNameAnnotation],
		amounts: CardAmounts(pod), node: pod.Spec.NodeName}
	if p.node == "" {
		p.node = pod.Annotations[codec.PodNodeAnnotation]
	}
	return p, nil
}

// CardAmounts is the pod's amount of each extended resource (a name with a domain), as the card quota counts
// it: the sum of the app containers' limits (else requests), or the largest init container's when that is more.
func CardAmounts(pod *corev1.Pod) map[string]int64 {
	out := map[string]int64{}
	amount := func(c *corev1.Container, name corev1.ResourceName) int64 {
		if q, ok := c.Resources.Limits[name]; ok {
			return quantityValue(q)
		}
		if q, ok := c.Resources.Requests[name]; ok {
			return quantityValue(q)
		}
		return 0
	}
	names := func(c *corev1.Container) []corev1.ResourceName {
		var list []corev1.ResourceName
		for n := range c.Resources.Limits {
			list = append(list, n)
		}
		for n := range c.Resources.Requests {
			if _, ok := c.Resources.Limits[n]; !ok {
				list = append(list, n)
			}
		}
		return list
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		for _, n := range names(c) {
			if strings.Contains(string(n), "/") {
				out[string(n)] += amount(c, n)
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		for _, n := range names(c) {
			if strings.Contains(string(n), "/") {
				out[string(n)] = max(out[string(n)], amount(c, n))
			}
		}
	}
	return out
}

// SetQueue adds or replaces a Volcano queue. The first queue set turns the card quota on.
func (c *Cluster) SetQueue(q Queue, probs []Problem) {
	c.version++
	c.queues[q.Name] = &q
	c.setProblems("Queue/"+q.Name, probs)
}

// RemoveQueue forgets a queue.
func (c *Cluster) RemoveQueue(name string) {
	c.version++
	delete(c.queues, name)
	delete(c.problems, "Queue/"+name)
}

// SetVolcano says whether the cluster runs Volcano (its Queue CRD exists), even with no queue yet.
func (c *Cluster) SetVolcano(on bool) {
	c.version++
	c.volcano = on
}

// Volcano reports whether the card quota applies: the Queue CRD exists or a queue was set.
func (c *Cluster) Volcano() bool { return c.volcano || len(c.queues) > 0 }

// Queue returns the named queue, or nil.
func (c *Cluster) Queue(name string) *Queue { return c.queues[name] }

// Queues lists the queues by name.
func (c *Cluster) Queues() []*Queue {
	out := make([]*Queue, 0, len(c.queues))
	for _, q := range c.queues {
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SetPodGroup adds or replaces a PodGroup.
func (c *Cluster) SetPodGroup(g PodGroup, probs []Problem) {
	c.version++
	if old := c.podGroups[g.Key()]; old == nil || old.Queue != g.Queue {
		c.invalidateCards() // its pods may change queue
	}
	c.podGroups[g.Key()] = &g
	c.setProblems("PodGroup/"+g.Key(), probs)
}

// RemovePodGroup forgets a PodGroup.
func (c *Cluster) RemovePodGroup(namespace, name string) {
	c.version++
	if _, ok := c.podGroups[namespace+"/"+name]; ok {
		c.invalidateCards()
	}
	delete(c.podGroups, namespace+"/"+name)
	delete(c.problems, "PodGroup/"+namespace+"/"+name)
}

// PodGroup returns the named PodGroup, or nil.
func (c *Cluster) PodGroup(namespace, name string) *PodGroup { return c.podGroups[namespace+"/"+name] }

// PodGroups lists the PodGroups by namespace and name.
func (c *Cluster) PodGroups() []*PodGroup {
	out := make([]*PodGroup, 0, len(c.podGroups))
	for _, g := range c.podGroups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// podQueue is the queue a card pod belongs to: its queue-name annotation, else its PodGroup's queue.
func (c *Cluster) podQueue(p *cardPod) string {
	if p.queue != "" {
		return p.queue
	}
	if p.group != "" {
		if g := c.podGroups[p.namespace+"/"+p.group]; g != nil {
			return g.Queue
		}
	}
	return ""
}
