package engine

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Fix is one concrete change that the engine applied to a copy of the world (the pod, a ResourceQuota, a
// Volcano queue) and evaluated: Sufficient when the pod fits after it alone, else Then says what blocks next.
type Fix struct {
	What       string `json:"what"`   // the change in words
	Object     string `json:"object"` // Pod ns/name, ResourceQuota ns/name, Queue name
	Field      string `json:"field"`
	From       string `json:"from"`
	To         string `json:"to"`
	Sufficient bool   `json:"sufficient"`
	// Node is where the pod would go after the change (sufficient fixes of HAMi's pods).
	Node string `json:"node,omitempty"`
	// Then is the deciding reason after the change when it is not enough: "CardInsufficientCore on gpu-a100-02".
	Then string `json:"then,omitempty"`
	// With are changes applied before this one: a fix that is needed only once another one lets the pod past
	// an earlier gate ("with the card quota raised, raise the namespace quota too").
	With []Fix `json:"with,omitempty"`

	queue, card string // a card-quota fix's change, to apply it again under another
	want        int64
}

// Text is the fix as a line of "What would make it fit".
func (f Fix) Text() string {
	if len(f.With) > 0 {
		var parts []string
		for _, w := range f.With {
			parts = append(parts, w.What+" ("+w.Object+" "+w.Field+": "+w.From+" -> "+w.To+")")
		}
		g := f
		g.With = nil
		return "together with " + strings.Join(parts, " and ") + ": " + g.Text()
	}
	if f.Sufficient {
		s := f.What + " (" + f.Object + " " + f.Field + ": " + f.From + " -> " + f.To + ")"
		if f.Node != "" {
			s += ": then it fits on " + f.Node
		}
		return s
	}
	return f.What + " (" + f.Object + " " + f.Field + ": " + f.From + " -> " + f.To + ") is not enough: then " + f.Then
}

// ProveFixes fills v.Fixes for a pod that does not fit: each candidate change is applied to a copy of the pod
// or, for quotas and queues, to the cluster for the length of one evaluation (restored before returning), and
// the verdict after it decides whether it is printed as sufficient or says what blocks next. The evaluation
// hints that guessed the same changes without proof are dropped. Not safe to call concurrently with other
// evaluations of the same cluster (the CLI and the terminal UI call it from one goroutine).
func (c *Cluster) ProveFixes(pod *corev1.Pod, v *Verdict, opts EvalOptions) {
	if v == nil || v.Fits || v.NotHAMi || v.Request == nil {
		return
	}
	if v.NoGPURequest || !v.Request.WantsGPU() {
		// Only kube-scheduler's checks can refuse it.
		opts.Nodes, opts.DetailNodes, opts.DetailAll, opts.Unranked = nil, nil, false, true
		v.Fixes = c.kubeFixes(pod, v, func(p *corev1.Pod) *Verdict { return c.Evaluate(p, opts) })
		c.fixObjects(pod, v.Fixes)
		return
	}
	// The fixes rewrite one device type's resources and selectors: a pod mixing types is explained, not fixed.
	kind := v.Request.Containers[0].Kind
	for _, r := range v.Request.Containers {
		if r.Kind != kind {
			return
		}
	}
	t := c.fixTarget(kind)
	opts.Nodes, opts.DetailNodes, opts.DetailAll, opts.Unranked = nil, nil, false, true
	eval := func(p *corev1.Pod) *Verdict { return c.Evaluate(p, opts) }
	fits := func(p *corev1.Pod) bool { return c.fitsNow(p, opts) } // the searches' steps read only Fits
	var fixes []Fix

	// Cluster-side changes first: the pod stays as its owner wrote it. The namespace quota fix knows the
	// configured keys only (NVIDIA's; the other types' keys gate nothing but Cambricon's).
	if c.rows[kind].quota && c.kinds[kind].Memory == c.cfg.ResourceMemoryName {
		if q := c.quotaFix(pod, v, eval); q != nil {
			fixes = append(fixes, *q)
		}
	}
	if f := c.cardFix(pod, v, eval); f != nil {
		fixes = append(fixes, *f)
		if !f.Sufficient && strings.HasPrefix(f.Then, string(ResourceQuotaNotFit)+" ") {
			// The card quota was the first gate; with it raised, the namespace quota decides: prove both.
			c.withCardQuota(f.queue, f.card, f.want, func() {
				after := eval(pod)
				if q := c.quotaFix(pod, after, eval); q != nil {
					q.With = []Fix{*f}
					fixes = append(fixes, *q)
				}
			})
		}
	}
	// kube-scheduler's own checks: a toleration, an uncordon, the node selector.
	fixes = append(fixes, c.kubeFixes(pod, v, eval)...)
	// Pod-side changes.
	for _, f := range []func() *Fix{
		func() *Fix { return filterFix(pod, v, eval, CardTypeMismatch, t.useType, t.noUseType) },
		func() *Fix { return filterFix(pod, v, eval, CardUUIDMismatch, t.useUUID, t.noUseUUID) },
		func() *Fix { return c.memoryFix(pod, v, eval, fits, t) },
		func() *Fix { return countFix(pod, v, eval, fits, t) },
	} {
		if x := f(); x != nil {
			fixes = append(fixes, *x)
		}
	}
	c.fixObjects(pod, fixes)
	v.Fixes = fixes
	var hints []string
	for _, h := range v.Hints {
		if strings.HasPrefix(h, "the largest memory request that fits now") || strings.Contains(h, "raise its volcano.sh/card.quota") {
			continue // replaced by a proven fix (or proven impossible)
		}
		hints = append(hints, h)
	}
	v.Hints = hints
}

// fixObjects names the pod as the object of the fixes that change it.
func (c *Cluster) fixObjects(pod *corev1.Pod, fixes []Fix) {
	for i := range fixes {
		if fixes[i].Object == "" {
			fixes[i].Object = "Pod " + pod.Namespace + "/" + pod.Name
		}
	}
}

// outcome fills a fix's verdict fields from the evaluation after the change.
func outcome(f *Fix, after *Verdict) *Fix {
	f.Sufficient = after.Fits
	if after.Fits {
		if after.Placement != nil {
			f.Node = after.Placement.Node
		} else if len(after.Feasible()) > 0 {
			f.Node = after.Feasible()[0]
		}
		return f
	}
	f.Then = Blocker(after)
	return f
}

// podTotals is what the pod charges the namespace quota when every container gets what it asks for: MiB
// (absolute requests only; ok false when a percentage or the whole-GPU default makes it depend on the GPU)
// and core percent. Init containers run before the app containers, so the larger of the two sums counts.
func podTotals(req *PodRequest) (mem, cores int64, ok bool) {
	var appMem, appCores, initMem, initCores int64
	ok = true
	for _, cr := range req.Containers {
		if cr.MemoryMiB <= 0 {
			ok = false
		}
		m, k := int64(cr.Count)*cr.MemoryMiB, int64(cr.Count)*cr.Cores
		if cr.Init {
			initMem, initCores = max(initMem, m), max(initCores, k)
		} else {
			appMem, appCores = appMem+m, appCores+k
		}
	}
	return max(appMem, initMem), max(appCores, initCores), ok
}

// quotaFix raises the namespace's managed quota to what the pod needs, when the quota decides a node.
func (c *Cluster) quotaFix(pod *corev1.Pod, v *Verdict, eval func(*corev1.Pod) *Verdict) *Fix {
	if !hasReason(v, ResourceQuotaNotFit) {
		return nil
	}
	q := v.Quota // the pod's own old usage already left out
	mem, cores, memKnown := podTotals(v.Request)
	var memTo, coresTo *int64
	var fields, from, to []string
	source := ""
	if q.Memory != nil && memKnown && q.Memory.Used+mem > q.Memory.Limit {
		n := q.Memory.Used + mem
		memTo = &n
		fields, from, to = append(fields, q.Memory.Resource), append(from, fmt.Sprintf("%d MiB", q.Memory.Limit)), append(to, fmt.Sprintf("%d MiB", n))
		source = q.Memory.Source
	}
	if q.Cores != nil && q.Cores.Used+cores > q.Cores.Limit {
		n := q.Cores.Used + cores
		coresTo = &n
		fields, from, to = append(fields, q.Cores.Resource), append(from, fmt.Sprintf("%d%%", q.Cores.Limit)), append(to, fmt.Sprintf("%d%%", n))
		if source == "" {
			source = q.Cores.Source
		}
	}
	if len(fields) == 0 {
		return nil
	}
	ns := pod.Namespace
	old, had := c.quotas[ns]
	raised := map[string]quotaLimits{}
	for name, l := range old {
		if memTo != nil && l.mem != nil && *l.mem < *memTo {
			l.mem = memTo
		}
		if coresTo != nil && l.cores != nil && *l.cores < *coresTo {
			l.cores = coresTo
		}
		raised[name] = l
	}
	c.quotas[ns] = raised
	after := eval(pod)
	if had {
		c.quotas[ns] = old
	} else {
		delete(c.quotas, ns)
	}
	what := "raise " + strings.Join(fields, " and ") + " of namespace " + ns
	return outcome(&Fix{What: what, Object: "ResourceQuota " + ns + "/" + source, Field: "spec.hard[" + strings.Join(fields, "], spec.hard[") + "]",
		From: strings.Join(from, ", "), To: strings.Join(to, ", ")}, after)
}

// cardFix raises the pod's queue's card quota for its preferred card to what the pod needs.
func (c *Cluster) cardFix(pod *corev1.Pod, v *Verdict, eval func(*corev1.Pod) *Verdict) *Fix {
	s := v.Card
	if s == nil || s.Fits || !s.Enforced || !s.QueueFound || s.QuotaError != "" || !hasReason(v, QueueCardQuotaNotFit) {
		return nil
	}
	var alt *CardAlternative
	for i := range s.Alternatives {
		if s.Alternatives[i].Nodes > 0 {
			alt = &s.Alternatives[i]
			break
		}
	}
	old := c.queues[s.Queue]
	if alt == nil || old == nil {
		return nil
	}
	want := alt.Used + alt.Need
	var after *Verdict
	c.withCardQuota(s.Queue, alt.Card, want, func() { after = eval(pod) })
	f := outcome(&Fix{What: fmt.Sprintf("raise queue %s's card quota for %s", s.Queue, alt.Card), Object: "Queue " + s.Queue,
		Field: "metadata.annotations[volcano.sh/card.quota][" + alt.Card + "]", From: fmt.Sprint(alt.Quota), To: fmt.Sprint(want)}, after)
	f.queue, f.card, f.want = s.Queue, alt.Card, want
	return f
}

// withCardQuota runs fn with the queue's card quota for card set to n, then restores the queue.
func (c *Cluster) withCardQuota(queue, card string, n int64, fn func()) {
	old := c.queues[queue]
	if old == nil {
		fn()
		return
	}
	q := *old
	q.CardQuota = map[string]int64{}
	for k, v := range old.CardQuota {
		q.CardQuota[k] = v
	}
	q.CardQuota[card], q.HasCardQuota = n, true
	c.queues[queue] = &q
	c.invalidateCards()
	defer func() {
		c.queues[queue] = old
		c.invalidateCards()
	}()
	fn()
}

// fixTarget names what the pod-side fixes rewrite for one device type.
type fixTarget struct {
	kind                   int
	word                   string // GPU, NPU, DCU ...
	count, memory, percent string // resource names; memory "" when the type takes whole devices
	factor                 int64  // the memory resource's unit in MiB (HAMi's memoryFactor)
	useType, noUseType     string // selector annotations; "" when the type has none
	useUUID, noUseUUID     string
}

func (c *Cluster) fixTarget(kind int) fixTarget {
	k := &c.kinds[kind]
	t := fixTarget{kind: kind, word: k.Word, count: k.Count, memory: k.Memory, percent: k.MemoryPercent, factor: max(k.MemoryFactor, 1),
		useType: k.UseType, noUseType: k.NoUseType, useUUID: k.UseUUID, noUseUUID: k.NoUseUUID}
	return t
}

// filterFix drops the pod's type or UUID filters when devices are excluded only by them.
func filterFix(pod *corev1.Pod, v *Verdict, eval func(*corev1.Pod) *Verdict, code Code, use, nouse string) *Fix {
	if !hasReason(v, code) {
		return nil
	}
	var keys, vals []string
	for _, k := range []string{use, nouse} {
		if val, ok := pod.Annotations[k]; ok && k != "" {
			keys, vals = append(keys, k), append(vals, val)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	p := pod.DeepCopy()
	for _, k := range keys {
		delete(p.Annotations, k)
	}
	return outcome(&Fix{What: "drop the pod's " + strings.Join(keys, " and ") + " annotation", Field: "metadata.annotations[" + strings.Join(keys, ", ") + "]",
		From: strings.Join(vals, ", "), To: "(none)"}, eval(p))
}

// memoryFix finds the largest per-GPU memory request that fits now, by evaluating the pod with it: NUMA,
// cores, quotas and card quotas all take part. nil when even 1 MiB does not fit or the pod has no GPU container
// with a memory request to lower.
func (c *Cluster) memoryFix(pod *corev1.Pod, v *Verdict, eval func(*corev1.Pod) *Verdict, fits func(*corev1.Pod) bool, t fixTarget) *Fix {
	if !hasReason(v, CardInsufficientMemory) && !hasReason(v, ResourceQuotaNotFit) && !hasReason(v, CardMigTopologyInfeasible) &&
		!hasReason(v, CardNotFoundCustomFilterRule) || t.memory == "" {
		return nil
	}
	var most, current int64
	for _, n := range c.nodeList {
		for i := range n.GPUs {
			if int(n.GPUs[i].Kind) == t.kind {
				most = max(most, n.GPUs[i].TotalMem)
			}
		}
	}
	for _, cr := range v.Request.Containers {
		current = max(current, cr.MemoryMiB)
	}
	hi := most
	if current > 0 {
		hi = min(current-1, most)
	}
	if hi < 1 {
		return nil
	}
	with := func(mib int64) *corev1.Pod {
		p := pod.DeepCopy()
		for _, cs := range []*[]corev1.Container{&p.Spec.InitContainers, &p.Spec.Containers} {
			for i := range *cs {
				ct := &(*cs)[i]
				if _, ok := ct.Resources.Limits[corev1.ResourceName(t.count)]; !ok {
					if _, ok := ct.Resources.Requests[corev1.ResourceName(t.count)]; !ok {
						continue
					}
				}
				if ct.Resources.Limits == nil {
					ct.Resources.Limits = corev1.ResourceList{}
				}
				if t.percent != "" {
					delete(ct.Resources.Limits, corev1.ResourceName(t.percent))
					delete(ct.Resources.Requests, corev1.ResourceName(t.percent))
				}
				delete(ct.Resources.Requests, corev1.ResourceName(t.memory))
				ct.Resources.Limits[corev1.ResourceName(t.memory)] = *resource.NewQuantity(mib/t.factor, resource.DecimalSI)
			}
		}
		return p
	}
	if !fits(with(t.factor)) {
		return nil
	}
	lo := t.factor // fits
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(with(mid)) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	after := eval(with(lo))
	from := "100% of each " + t.word
	if current > 0 {
		from = fmt.Sprintf("%d MiB", current)
	}
	return outcome(&Fix{What: fmt.Sprintf("lower the pod's %s to %d MiB per %s, the largest request that fits now", t.memory, lo, t.word),
		Field: "spec.containers[*].resources.limits[" + t.memory + "]", From: from, To: fmt.Sprintf("%d MiB", lo)}, after)
}

// countFix finds the largest device count that fits now for a pod with one device container.
func countFix(pod *corev1.Pod, v *Verdict, eval func(*corev1.Pod) *Verdict, fits func(*corev1.Pod) bool, t fixTarget) *Fix {
	if len(v.Request.Containers) != 1 || v.Request.Containers[0].Count < 2 || v.Request.Containers[0].Init {
		return nil
	}
	cr := v.Request.Containers[0]
	name := corev1.ResourceName(t.count)
	for n := cr.Count - 1; n >= 1; n-- {
		p := pod.DeepCopy()
		ct := &p.Spec.Containers[cr.Index]
		if ct.Resources.Limits == nil {
			ct.Resources.Limits = corev1.ResourceList{}
		}
		ct.Resources.Limits[name] = *resource.NewQuantity(int64(n), resource.DecimalSI)
		if _, ok := ct.Resources.Requests[name]; ok {
			ct.Resources.Requests[name] = *resource.NewQuantity(int64(n), resource.DecimalSI)
		}
		if fits(p) {
			return outcome(&Fix{What: fmt.Sprintf("ask for %d %s(s) instead of %d, the most that fit now with the same memory and cores", n, t.word, cr.Count),
				Field: "spec.containers[" + cr.Name + "].resources.limits[" + string(name) + "]", From: fmt.Sprint(cr.Count), To: fmt.Sprint(n)}, eval(p))
		}
	}
	return nil
}

func hasReason(v *Verdict, code Code) bool {
	for _, r := range v.Reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}
