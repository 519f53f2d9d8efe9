package lint

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// checkQuotaUnparsable: a volcano.sh/card.quota that cannot be read. Volcano's capacity-card plugin turns it
// into an empty quota and denies every card of the queue without saying why.
func checkQuotaUnparsable(in *input) []Finding {
	var out []Finding
	for _, name := range in.queueList {
		q := in.queues[name]
		if q.QuotaError == "" {
			continue
		}
		f := Finding{Severity: Error, Object: queueObject(name), Field: annotationField(codec.CardQuotaAnnotation),
			Message: strings.TrimPrefix(q.QuotaError, codec.CardQuotaAnnotation+": ") +
				"; Volcano's capacity-card plugin reads it as an empty quota and denies every card to the queue"}
		if fixed, ok := repairCardCounts(q.RawQuota); ok {
			f.Fix = fmt.Sprintf("kubectl annotate queue %s %s='%s' --overwrite", name, codec.CardQuotaAnnotation, fixed)
		} else {
			example := "NVIDIA-H200"
			if len(in.cardNames) > 0 {
				example = in.cardNames[0]
			}
			f.Fix = fmt.Sprintf("write a JSON object of card name to whole count, one key per card (no A|B), e.g. "+
				"kubectl annotate queue %s %s='{\"%s\":2}' --overwrite", name, codec.CardQuotaAnnotation, example)
		}
		out = append(out, f)
	}
	return out
}

// repairCardCounts reads a card quota leniently (YAML flow style, single quotes, counts as strings) and
// returns the JSON Volcano would read, when every entry is then a single card with a whole count.
func repairCardCounts(raw string) (string, bool) {
	if t := strings.TrimSpace(raw); !strings.HasPrefix(t, "{") || !strings.HasSuffix(t, "}") {
		return "", false // only a whole object is repaired: nothing of the value may be dropped
	}
	js, err := yaml.YAMLToJSON([]byte(raw))
	if err != nil {
		return "", false
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil || len(m) == 0 {
		return "", false
	}
	out := map[string]int64{}
	for k, v := range m {
		k = strings.TrimSpace(k)
		if k == "" || strings.Contains(k, "|") {
			return "", false
		}
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case string:
			n, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return "", false
			}
			f = n
		default:
			return "", false
		}
		if f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			return "", false
		}
		out[k] = int64(f)
	}
	fixed := codec.FormatCardCounts(out)
	if _, err := codec.ParseCardQuota(fixed); err != nil {
		return "", false
	}
	return fixed, true
}

// checkQuotaEmpty: a card quota that lists no card denies every card just as silently.
func checkQuotaEmpty(in *input) []Finding {
	var out []Finding
	for _, name := range in.queueList {
		q := in.queues[name]
		if !q.HasCardQuota || q.QuotaError != "" || len(q.CardQuota) > 0 {
			continue
		}
		out = append(out, Finding{Severity: Warning, Object: queueObject(name), Field: annotationField(codec.CardQuotaAnnotation),
			Message: fmt.Sprintf("the card quota is empty (%q): every card is denied to the queue", q.RawQuota),
			Fix:     fmt.Sprintf("list the cards the queue may use, e.g. '{%q:1}', or remove the annotation if the queue runs no card pods", firstOr(in.cardNames, "NVIDIA-H200"))})
	}
	return out
}

// checkCardNameUnparsable: a pod's volcano.sh/card.name that cannot be read (empty, an empty alternative).
func checkCardNameUnparsable(in *input) []Finding {
	var out []Finding
	for p := range in.pods.all() {
		raw, ok := p.Annotations[codec.CardNameAnnotation]
		if !ok {
			continue
		}
		if _, err := codec.ParseCardName(raw); err != nil {
			f := Finding{Severity: Error, Object: podObject(p), Field: annotationField(codec.CardNameAnnotation),
				Message: strings.TrimPrefix(err.Error(), codec.CardNameAnnotation+": ") + "; the card quota cannot tell which card the pod wants",
				Fix:     "name one card, or alternatives separated by |, e.g. " + firstOr(in.cardNames, "NVIDIA-H200")}
			if fixed := repairCardName(raw); fixed != "" {
				f.Fix = fmt.Sprintf("kubectl annotate pod -n %s %s %s='%s' --overwrite (and fix the template of the pod's controller)",
					p.Namespace, p.Name, codec.CardNameAnnotation, fixed)
			}
			out = append(out, f)
		}
	}
	return out
}

// repairCardName drops empty and repeated alternatives; "" when nothing is left.
func repairCardName(raw string) string {
	var keep []string
	seen := map[string]bool{}
	for _, a := range strings.Split(raw, "|") {
		a = strings.TrimSpace(a)
		if a != "" && !seen[a] {
			seen[a] = true
			keep = append(keep, a)
		}
	}
	return strings.Join(keep, "|")
}

// checkCardRequestUnparsable: a PodGroup's volcano.sh/card.request that cannot be read.
func checkCardRequestUnparsable(in *input) []Finding {
	var out []Finding
	for _, g := range in.c.PodGroups() {
		if g.RequestError == "" {
			continue
		}
		f := Finding{Severity: Error, Object: groupObject(g), Field: annotationField(codec.CardRequestAnnotation),
			Message: strings.TrimPrefix(g.RequestError, codec.CardRequestAnnotation+": ") + "; the job's cards cannot be checked against its queue's quota before it starts",
			Fix:     "write a JSON object of card (or A|B) to the job's total count, e.g. '{\"" + firstOr(in.cardNames, "NVIDIA-H200") + "\":4}'"}
		if u := in.groups[g.Key()]; u != nil {
			if fixed, ok := repairCardCounts(u.GetAnnotations()[codec.CardRequestAnnotation]); ok {
				f.Fix = fmt.Sprintf("kubectl annotate podgroup -n %s %s %s='%s' --overwrite", g.Namespace, g.Name, codec.CardRequestAnnotation, fixed)
			}
		}
		out = append(out, f)
	}
	return out
}

// podCards reads a pod's card alternatives; nil when it names none or cannot be read.
func podCards(p *corev1.Pod) []string {
	raw, ok := p.Annotations[codec.CardNameAnnotation]
	if !ok {
		return nil
	}
	alts, err := codec.ParseCardName(raw)
	if err != nil {
		return nil
	}
	return alts
}

// sortedKeys lists a card map's keys in order.
func sortedKeys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkUnknownCards: card names in a queue's quota, a pod's card.name or a PodGroup's card.request that no
// node has. A quota for a card nobody has is harmless but usually a typo; a pod whose every alternative is
// missing can never be placed.
func checkUnknownCards(in *input) []Finding {
	var out []Finding
	fix := func(card, suggestion, what string) string {
		if nodes := in.labelled[card]; len(nodes) > 0 {
			return fmt.Sprintf("complete the card labels of %s (see its card-labels-incomplete finding)", listSome(nodes, 4))
		}
		if suggestion != "" {
			return fmt.Sprintf("write %s instead of %s in %s", suggestion, card, what)
		}
		if len(in.cardNames) == 0 {
			return in.noCardsFix()
		}
		return fmt.Sprintf("use a card name of the cluster (kubectl hami top lists them) in %s", what)
	}
	for _, name := range in.queueList {
		q := in.queues[name]
		for _, card := range sortedKeys(q.CardQuota) {
			if in.cards[card] != nil {
				continue
			}
			msg, sugg := in.unknownCard(card)
			out = append(out, Finding{Severity: Warning, Object: queueObject(name), Field: annotationField(codec.CardQuotaAnnotation),
				Message: msg + ": this quota entry grants nothing", Fix: fix(card, sugg, codec.CardQuotaAnnotation)})
		}
	}
	for p := range in.pods.all() {
		alts := podCards(p)
		if len(alts) == 0 {
			continue
		}
		missing := in.unknownCards(alts)
		for _, card := range missing {
			msg, sugg := in.unknownCard(card)
			sev := Warning
			switch {
			case len(missing) < len(alts):
				msg += "; the pod can still take another alternative"
			case pending(p):
				sev = Error
				msg += "; no alternative exists, so Volcano never places the pod"
			default:
				msg += "; the pod runs, but a new copy of it would never be placed"
			}
			out = append(out, Finding{Severity: sev, Object: podObject(p), Field: annotationField(codec.CardNameAnnotation),
				Message: msg, Fix: fix(card, sugg, codec.CardNameAnnotation+" (or in the template of the pod's controller)")})
		}
	}
	for _, g := range in.c.PodGroups() {
		for _, key := range sortedKeys(g.CardRequest) {
			alts, err := codec.ParseCardName(key)
			if err != nil {
				continue
			}
			missing := in.unknownCards(alts)
			for _, card := range missing {
				msg, sugg := in.unknownCard(card)
				sev := Warning
				if len(missing) == len(alts) {
					sev = Error
					msg += "; the job's request can never be met"
				}
				out = append(out, Finding{Severity: sev, Object: groupObject(g), Field: annotationField(codec.CardRequestAnnotation),
					Message: msg, Fix: fix(card, sugg, codec.CardRequestAnnotation)})
			}
		}
	}
	return out
}

// unknownCards are the alternatives no node of the cluster offers.
func (in *input) unknownCards(alts []string) []string {
	var out []string
	for _, a := range alts {
		if in.cards[a] == nil {
			out = append(out, a)
		}
	}
	return out
}

// mixedResources describes alternatives that map to different resources, or "" when they all map to one.
func (in *input) mixedResources(alts []string) string {
	if len(alts) < 2 {
		return ""
	}
	first := in.cardResource(alts[0])
	mixed := false
	parts := make([]string, len(alts))
	for i, a := range alts {
		r := in.cardResource(a)
		parts[i] = a + " is " + r
		mixed = mixed || r != first
	}
	if !mixed {
		return ""
	}
	return strings.Join(parts, ", ")
}

const mixedFix = "list only alternatives of one resource (whole cards with whole cards, one MIG profile, one MPS size); " +
	"run separate workloads for the others"

// checkMixedAlternatives: "A|B" alternatives that map to different resource names (a whole card and a MIG
// slice, two MIG profiles). Seed 002: the scheduler does not support them, since the pod would have to ask
// for both resources and the device plugin would then allocate both.
func checkMixedAlternatives(in *input) []Finding {
	var out []Finding
	for p := range in.pods.all() {
		if d := in.mixedResources(podCards(p)); d != "" {
			out = append(out, Finding{Severity: Error, Object: podObject(p), Field: annotationField(codec.CardNameAnnotation),
				Message: "alternatives map to different resources (" + d + "): unsupported, the pod would get every resource it asks for, not one of them",
				Fix:     mixedFix})
		}
	}
	for _, g := range in.c.PodGroups() {
		for _, key := range sortedKeys(g.CardRequest) {
			alts, err := codec.ParseCardName(key)
			if err != nil {
				continue
			}
			if d := in.mixedResources(alts); d != "" {
				out = append(out, Finding{Severity: Error, Object: groupObject(g), Field: annotationField(codec.CardRequestAnnotation),
					Message: fmt.Sprintf("%q: alternatives map to different resources (%s): unsupported", key, d), Fix: mixedFix})
			}
		}
	}
	return out
}

// amounts is a pod's amount of each extended resource, the way the card quota counts it.
func amounts(p *corev1.Pod) map[string]int64 { return engine.CardAmounts(p) }

// checkCardAmountZero: a pod names a card but asks for none of the resource the card maps to (a MIG card
// name on a pod that asks for nvidia.com/gpu). The card quota counts it as 0 cards, so it never uses quota.
func checkCardAmountZero(in *input) []Finding {
	var out []Finding
	for p := range in.pods.all() {
		alts := podCards(p)
		if len(alts) == 0 || in.mixedResources(alts) != "" {
			continue
		}
		res := in.cardResource(alts[0])
		am := amounts(p)
		if am[res] > 0 {
			continue
		}
		var asked []string
		for r, v := range am {
			if v > 0 && strings.HasPrefix(r, in.domain()+"/") {
				asked = append(asked, r)
			}
		}
		sort.Strings(asked)
		msg := fmt.Sprintf("%s maps to %s, but the pod asks for no %s: the card quota counts it as 0 cards", strings.Join(alts, "|"), res, res)
		if len(asked) > 0 {
			msg += " (it asks for " + strings.Join(asked, ", ") + ")"
		}
		out = append(out, Finding{Severity: Warning, Object: podObject(p), Field: annotationField(codec.CardNameAnnotation),
			Message: msg, Fix: fmt.Sprintf("ask for %s in the container's limits, or name the card that matches the resource the pod asks for", res)})
	}
	return out
}

// checkSlotsCounted: on a HAMi node allocatable nvidia.com/gpu is physical GPUs x split count. Volcano's
// capacity-card plugin counts allocatable as cards, so it would see split-count times too many cards.
func checkSlotsCounted(in *input) []Finding {
	if !in.c.Volcano() {
		return nil
	}
	var out []Finding
	for _, name := range in.c.NodeNames() {
		n := in.c.Node(name)
		if n == nil || n.CardSlots <= 0 {
			continue
		}
		physical := int64(len(n.GPUs))
		per := ""
		if physical > 0 && n.CardSlots%physical == 0 {
			per = fmt.Sprintf(" (%d GPUs x %d slots)", physical, n.CardSlots/physical)
		}
		out = append(out, Finding{Severity: Warning, Object: Object{Kind: "Node", Name: name},
			Field: "status.allocatable[" + in.cfg.ResourceCountName + "]",
			Message: fmt.Sprintf("allocatable %s is %d vGPU slots%s: Volcano's capacity-card plugin would count %d %s cards here, the node has %d physical GPUs",
				in.cfg.ResourceCountName, n.CardSlots, per, n.CardSlots, n.CardProduct, physical),
			Fix: fmt.Sprintf("enforce card quota for HAMi pods with kubectl hami serve-extender --card-quota=enforce, which counts the %d physical cards; "+
				"with Volcano's plugin alone, read its %s totals as vGPU slots, not cards", physical, n.CardProduct)})
	}
	return out
}

// checkCardLabels: a node with a <domain>/<type>.product label whose .count or .memory label is missing or
// bad, or an MPS node without <domain>/gpu.replicas. The card quota then sees no card (or no MPS card) there.
func checkCardLabels(in *input) []Finding {
	if !in.c.Volcano() {
		return nil
	}
	var out []Finding
	nodes := append([]*corev1.Node(nil), in.s.Nodes...)
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		if n == nil {
			continue
		}
		obj := Object{Kind: "Node", Name: n.Name}
		en := in.c.Node(n.Name)
		keys := make([]string, 0, len(n.Labels))
		for k := range n.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			prefix, domain, ok := engine.CardProductLabel(k)
			if !ok {
				continue
			}
			product := strings.TrimSpace(n.Labels[k])
			if product == "" {
				out = append(out, Finding{Severity: Warning, Object: obj, Field: "metadata.labels[" + k + "]",
					Message: "the card model label is empty: the card quota sees no card on this node",
					Fix:     fmt.Sprintf("kubectl label node %s %s=<card model, e.g. NVIDIA-H200> --overwrite", n.Name, k)})
				continue
			}
			count, hasCount := n.Labels[prefix+".count"]
			mem, hasMem := n.Labels[prefix+".memory"]
			var missing []string
			if !hasCount {
				missing = append(missing, prefix+".count")
			}
			if !hasMem {
				missing = append(missing, prefix+".memory")
			}
			if len(missing) > 0 {
				sugg := make([]string, len(missing))
				for i, l := range missing {
					v := "<n>"
					if strings.HasSuffix(l, ".memory") {
						v = "<MiB>"
					}
					if en != nil && len(en.GPUs) > 0 {
						if strings.HasSuffix(l, ".count") {
							v = strconv.Itoa(len(en.GPUs))
						} else {
							v = strconv.FormatInt(en.GPUs[0].TotalMem, 10)
						}
					}
					sugg[i] = l + "=" + v
				}
				out = append(out, Finding{Severity: Warning, Object: obj, Field: "metadata.labels[" + strings.Join(missing, ", ") + "]",
					Message: fmt.Sprintf("%s=%s but no %s label: Volcano's capacity-card plugin sees no %s card on this node", k, product, strings.Join(missing, " or "), product),
					Fix:     fmt.Sprintf("kubectl label node %s %s (GPU feature discovery sets them)", n.Name, strings.Join(sugg, " "))})
				continue
			}
			if _, err := strconv.ParseInt(strings.TrimSpace(count), 10, 64); err != nil {
				out = append(out, Finding{Severity: Info, Object: obj, Field: "metadata.labels[" + prefix + ".count]",
					Message: fmt.Sprintf("%q is not a whole number", count), Fix: "set it to the number of GPUs of the node"})
			}
			if _, err := strconv.ParseInt(strings.TrimSpace(mem), 10, 64); err != nil {
				out = append(out, Finding{Severity: Warning, Object: obj, Field: "metadata.labels[" + prefix + ".memory]",
					Message: fmt.Sprintf("%q is not a whole number of MiB: MPS card names on this node get the wrong size", mem),
					Fix:     "set it to each GPU's memory in MiB, e.g. 81920"})
			}
			if q, ok := n.Status.Allocatable[corev1.ResourceName(domain+"/gpu.shared")]; ok && q.Value() > 0 {
				if r, err := strconv.ParseInt(strings.TrimSpace(n.Labels[domain+"/gpu.replicas"]), 10, 64); err != nil || r <= 0 {
					out = append(out, Finding{Severity: Warning, Object: obj, Field: "metadata.labels[" + domain + "/gpu.replicas]",
						Message: fmt.Sprintf("allocatable %s/gpu.shared is %d but %s/gpu.replicas is missing or not a positive number: the card quota sees no MPS card on this node", domain, q.Value(), domain),
						Fix:     fmt.Sprintf("kubectl label node %s %s/gpu.replicas=<MPS replicas per GPU>", n.Name, domain)})
				}
			}
			break // the plugin reads one card model per node: the first complete product label
		}
	}
	return out
}

// checkQuotaAbovePhysical: a queue's quota above the cluster's cards of that model can never be used in
// full; quotas that add up to more than the cluster has promise cards twice.
func checkQuotaAbovePhysical(in *input) []Finding {
	var out []Finding
	sum := map[string]int64{}
	by := map[string][]string{}
	for _, name := range in.queueList {
		q := in.queues[name]
		for _, card := range sortedKeys(q.CardQuota) {
			ci := in.cards[card]
			v := q.CardQuota[card]
			if ci == nil || v == 0 {
				continue
			}
			sum[card] += v
			by[card] = append(by[card], fmt.Sprintf("%s %d", name, v))
			if v > ci.count {
				out = append(out, Finding{Severity: Warning, Object: queueObject(name), Field: annotationField(codec.CardQuotaAnnotation),
					Message: fmt.Sprintf("quota %d %s, but the cluster has %d (%s): the queue can never use its quota in full", v, card, ci.count, listSome(ci.nodes, 4)),
					Fix:     fmt.Sprintf("lower %s to %d or add nodes with that card", card, ci.count)})
			}
		}
	}
	for _, card := range sortedKeys(sum) {
		ci := in.cards[card]
		if len(by[card]) < 2 || sum[card] <= ci.count {
			continue
		}
		out = append(out, Finding{Severity: Info, Object: Object{Kind: "Cluster", Name: card}, Field: "sum of " + codec.CardQuotaAnnotation + " over queues",
			Message: fmt.Sprintf("queues are promised %d %s (%s), the cluster has %d: they cannot all use their quota at once", sum[card], card, strings.Join(by[card], ", "), ci.count),
			Fix:     "fine when intended (overcommitted quota); otherwise lower the quotas so they add up to the cluster's cards"})
	}
	return out
}

// podQueue is the queue of a card pod: its queue-name annotation, else its PodGroup's queue.
func (in *input) podQueue(p *corev1.Pod) (queue, via string) {
	if q := strings.TrimSpace(p.Annotations[codec.QueueNameAnnotation]); q != "" {
		return q, annotationField(codec.QueueNameAnnotation)
	}
	if g := p.Annotations[codec.GroupNameAnnotation]; g != "" {
		if pg := in.c.PodGroup(p.Namespace, g); pg != nil {
			return pg.Queue, "PodGroup " + g
		}
	}
	return "", ""
}

// checkCardNotInQueueQuota: a pod or a job asks for cards its queue's quota does not list (or lists at 0).
// The plugin denies it; the pod shows only "pod group is not ready".
func checkCardNotInQueueQuota(in *input) []Finding {
	var out []Finding
	unlisted := func(q *engine.Queue, alts []string) bool {
		for _, a := range alts {
			if q.CardQuota[a] > 0 {
				return false
			}
		}
		return true
	}
	fix := func(queue string, alts []string) string {
		return fmt.Sprintf("add %s to queue %s's %s, or move the workload to a queue that has quota for it", alts[0], queue, codec.CardQuotaAnnotation)
	}
	for p := range in.pods.all() {
		alts := podCards(p)
		qn, _ := in.podQueue(p)
		q := in.queues[qn]
		if len(alts) == 0 || q == nil || q.QuotaError != "" || !unlisted(q, alts) || !in.anyKnown(alts) {
			continue
		}
		sev := Info
		if pending(p) {
			sev = Warning
		}
		what := "lists none of them at more than 0"
		if len(alts) == 1 {
			what = "has no quota for it"
		}
		if !q.HasCardQuota {
			what = "has no " + codec.CardQuotaAnnotation + " at all"
		}
		out = append(out, Finding{Severity: sev, Object: podObject(p), Field: annotationField(codec.CardNameAnnotation),
			Message: fmt.Sprintf("the pod asks for %s in queue %s, which %s: Volcano's capacity-card plugin denies it", strings.Join(alts, "|"), qn, what),
			Fix:     fix(qn, alts)})
	}
	for _, g := range in.c.PodGroups() {
		q := in.queues[g.Queue]
		if q == nil || q.QuotaError != "" {
			continue
		}
		for _, key := range sortedKeys(g.CardRequest) {
			alts, err := codec.ParseCardName(key)
			if err != nil || g.CardRequest[key] == 0 || !unlisted(q, alts) || !in.anyKnown(alts) {
				continue
			}
			out = append(out, Finding{Severity: Warning, Object: groupObject(g), Field: annotationField(codec.CardRequestAnnotation),
				Message: fmt.Sprintf("the job asks for %d %s in queue %s, which has no quota for it: the job is never enqueued", g.CardRequest[key], key, g.Queue),
				Fix:     fix(g.Queue, alts)})
		}
	}
	return out
}

// checkQueueMissing: a pod or PodGroup names a Volcano queue that does not exist.
func checkQueueMissing(in *input) []Finding {
	if !in.c.Volcano() {
		return nil
	}
	var out []Finding
	fix := func(q string) string {
		if best, ok := closest(q, in.queueList); ok {
			return fmt.Sprintf("write %s (an existing queue) or create queue %s", best, q)
		}
		if len(in.queueList) == 0 {
			return fmt.Sprintf("create queue %s", q)
		}
		return fmt.Sprintf("use an existing queue (%s) or create queue %s", listSome(in.queueList, 6), q)
	}
	for p := range in.pods.all() {
		q := strings.TrimSpace(p.Annotations[codec.QueueNameAnnotation])
		if q == "" || in.queues[q] != nil {
			continue
		}
		sev := Warning
		msg := fmt.Sprintf("queue %s does not exist", q)
		if pending(p) {
			sev = Error
			msg += ": Volcano does not schedule the pod"
		}
		out = append(out, Finding{Severity: sev, Object: podObject(p), Field: annotationField(codec.QueueNameAnnotation), Message: msg, Fix: fix(q)})
	}
	for _, g := range in.c.PodGroups() {
		if in.queues[g.Queue] != nil {
			continue
		}
		out = append(out, Finding{Severity: Error, Object: groupObject(g), Field: "spec.queue",
			Message: fmt.Sprintf("queue %s does not exist: the job is never enqueued", g.Queue), Fix: fix(g.Queue)})
	}
	return out
}

// checkPodGroupMissing: a pod that names a card belongs to a PodGroup that was not found, so its queue (and
// card quota) is unknown. Checked only when PodGroups could be read.
func checkPodGroupMissing(in *input) []Finding {
	if !in.c.Volcano() || len(in.s.PodGroups) == 0 {
		return nil
	}
	var out []Finding
	for p := range in.pods.all() {
		g := p.Annotations[codec.GroupNameAnnotation]
		if g == "" || len(podCards(p)) == 0 || strings.TrimSpace(p.Annotations[codec.QueueNameAnnotation]) != "" || in.c.PodGroup(p.Namespace, g) != nil {
			continue
		}
		out = append(out, Finding{Severity: Warning, Object: podObject(p), Field: annotationField(codec.GroupNameAnnotation),
			Message: fmt.Sprintf("PodGroup %s/%s does not exist: the pod's queue, and so its card quota, is unknown", p.Namespace, g),
			Fix:     fmt.Sprintf("create PodGroup %s in namespace %s (Volcano's job controller does for Volcano Jobs) or set %s on the pod", g, p.Namespace, codec.QueueNameAnnotation)})
	}
	return out
}

// anyKnown reports whether a node has one of the cards (unknown cards are reported by checkUnknownCards).
func (in *input) anyKnown(alts []string) bool {
	for _, a := range alts {
		if in.cards[a] != nil {
			return true
		}
	}
	return false
}

func firstOr(names []string, def string) string {
	if len(names) > 0 {
		return names[0]
	}
	return def
}
