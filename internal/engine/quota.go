package engine

import (
	"fmt"
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// quotaLimits is what one ResourceQuota says about the managed keys; nil means the key is absent.
type quotaLimits struct {
	mem, cores *int64
	dev        map[string]int64 // other device types' keys, by resource name
}

type usage struct {
	mem, cores int64
	dev        map[string]int64 // other device types' keys, by resource name
}

// maxQuotaUse bounds a namespace's summed usage, far below int64's end, so that the quota gate's
// used+request comparison can never wrap either.
const maxQuotaUse int64 = 1 << 62

// maxInt64Quantity is the largest quantity AsInt64 can give exactly.
var maxInt64Quantity = *resource.NewQuantity(math.MaxInt64, resource.DecimalSI)

// charge adds a pod's usage unless the sum would pass maxQuotaUse; it reports whether it did.
func (u *usage) charge(mem, cores int64) bool {
	if mem < 0 || cores < 0 || mem > maxQuotaUse-u.mem || cores > maxQuotaUse-u.cores {
		return false
	}
	u.mem += mem
	u.cores += cores
	return true
}

// uncharge takes back what charge added.
func (u *usage) uncharge(mem, cores int64) {
	u.mem -= mem
	u.cores -= cores
}

func (c *Cluster) nsUsage(ns string) *usage {
	u := c.nsUsed[ns]
	if u == nil {
		u = &usage{}
		c.nsUsed[ns] = u
	}
	return u
}

// SetQuota adds or replaces a ResourceQuota. Only limits.<memory> and limits.<cores> are managed.
func (c *Cluster) SetQuota(rq *corev1.ResourceQuota) []Problem {
	c.version++
	key := "ResourceQuota/" + rq.Namespace + "/" + rq.Name
	var probs []Problem
	var l quotaLimits
	read := func(res string) *int64 {
		name := corev1.ResourceName("limits." + res)
		q, ok := rq.Spec.Hard[name]
		if !ok {
			return nil
		}
		v, exact := q.AsInt64()
		switch {
		case !exact && q.Cmp(maxInt64Quantity) > 0:
			// 1e30 and the like: Value() would wrap (to 0 for 1e30, which would deny every GPU pod). No GPU
			// count reaches it: read it as no limit, and say so.
			v = maxQuotaUse
			probs = append(probs, Problem{Kind: "ResourceQuota", Object: rq.Namespace + "/" + rq.Name, Field: "spec.hard[" + string(name) + "]",
				Message: fmt.Sprintf("%s is beyond 64 bits; it is read as unlimited", q.String())})
		case !exact:
			v = q.Value()
			probs = append(probs, Problem{Kind: "ResourceQuota", Object: rq.Namespace + "/" + rq.Name, Field: "spec.hard[" + string(name) + "]",
				Message: fmt.Sprintf("%s is not a whole number; HAMi reads it as %d", q.String(), v)})
		case v > maxQuotaUse:
			v = maxQuotaUse // as good as unlimited; keeps used+request comparisons and the factor below in range
		}
		return &v
	}
	l.mem = read(c.cfg.ResourceMemoryName)
	l.cores = read(c.cfg.ResourceCoreName)
	if l.mem != nil {
		m, ok := mulChecked(*l.mem, c.cfg.MemoryFactor)
		if !ok && *l.mem == maxQuotaUse {
			m, ok = maxQuotaUse, true // unlimited already
		}
		if !ok {
			name := "limits." + c.cfg.ResourceMemoryName
			probs = append(probs, Problem{Kind: "ResourceQuota", Object: rq.Namespace + "/" + rq.Name, Field: "spec.hard[" + name + "]",
				Message: fmt.Sprintf("%d x memory factor %d does not fit in 64 bits; it is read as %d", *l.mem, c.cfg.MemoryFactor, maxQuotaUse)})
			m = maxQuotaUse
		}
		l.mem = &m
	}
	for _, vk := range c.vendorQuotaKeys() {
		if v := read(vk.resource); v != nil {
			m, ok := mulChecked(*v, vk.factor)
			if !ok {
				m = maxQuotaUse
			}
			if l.dev == nil {
				l.dev = map[string]int64{}
			}
			l.dev[vk.resource] = m
		}
	}
	if c.quotas[rq.Namespace] == nil {
		c.quotas[rq.Namespace] = map[string]quotaLimits{}
	}
	c.quotas[rq.Namespace][rq.Name] = l
	c.setProblems(key, probs)
	return probs
}

// RemoveQuota forgets a ResourceQuota.
func (c *Cluster) RemoveQuota(namespace, name string) {
	c.version++
	delete(c.quotas[namespace], name)
	if len(c.quotas[namespace]) == 0 {
		delete(c.quotas, namespace)
	}
	delete(c.problems, "ResourceQuota/"+namespace+"/"+name)
}

// QuotaLine is one managed quota resource of a namespace.
type QuotaLine struct {
	Resource string `json:"resource"` // e.g. limits.nvidia.com/gpumem
	Used     int64  `json:"used"`
	Limit    int64  `json:"limit"`
	Unit     string `json:"unit"`   // MiB or %
	Source   string `json:"source"` // the ResourceQuota whose limit is the tightest
	// Looser lists the namespace's other ResourceQuotas with a higher limit for this key ("name (limit)"):
	// HAMi keeps the one it processed last, which may be one of these.
	Looser []string `json:"looser,omitempty"`
}

// Free is the headroom left, never negative.
func (q *QuotaLine) Free() int64 { return max(q.Limit-q.Used, 0) }

// QuotaStatus is a namespace's HAMi-accounted quota; a nil line means that resource is unlimited.
type QuotaStatus struct {
	Namespace string     `json:"namespace"`
	Memory    *QuotaLine `json:"memory,omitempty"`
	Cores     *QuotaLine `json:"cores,omitempty"`
	// Devices are the quota keys of other device types (limits.hygon.com/dcumem ...): accounted and shown;
	// HAMi v2.10's Fit checks them for NVIDIA only, so they never make a pod pending here.
	Devices []QuotaLine `json:"devices,omitempty"`
}

// Limited reports whether any managed quota applies.
func (q QuotaStatus) Limited() bool { return q.Memory != nil || q.Cores != nil || len(q.Devices) > 0 }

// Quota is the namespace's quota: the tightest limit over its ResourceQuotas, against HAMi's own usage.
func (c *Cluster) Quota(ns string) QuotaStatus {
	st := QuotaStatus{Namespace: ns}
	u := c.nsUsed[ns]
	if u == nil {
		u = &usage{}
	}
	names := make([]string, 0, len(c.quotas[ns]))
	for name := range c.quotas[ns] {
		names = append(names, name)
	}
	sort.Strings(names) // equal limits: the first name wins, deterministically
	for _, name := range names {
		l := c.quotas[ns][name]
		if l.mem != nil && (st.Memory == nil || *l.mem < st.Memory.Limit) {
			st.Memory = &QuotaLine{Resource: "limits." + c.cfg.ResourceMemoryName, Used: u.mem, Limit: *l.mem, Unit: "MiB", Source: name}
		}
		if l.cores != nil && (st.Cores == nil || *l.cores < st.Cores.Limit) {
			st.Cores = &QuotaLine{Resource: "limits." + c.cfg.ResourceCoreName, Used: u.cores, Limit: *l.cores, Unit: "%", Source: name}
		}
	}
	for _, vk := range c.vendorQuotaKeys() {
		var line *QuotaLine
		for _, name := range names {
			if v, ok := c.quotas[ns][name].dev[vk.resource]; ok && (line == nil || v < line.Limit) {
				line = &QuotaLine{Resource: "limits." + vk.resource, Used: u.dev[vk.resource], Limit: v, Unit: vk.unit, Source: name}
			}
		}
		if line != nil {
			st.Devices = append(st.Devices, *line)
		}
	}
	for _, name := range names {
		l := c.quotas[ns][name]
		if l.mem != nil && *l.mem > st.Memory.Limit {
			st.Memory.Looser = append(st.Memory.Looser, fmt.Sprintf("%s (%d MiB)", name, *l.mem))
		}
		if l.cores != nil && *l.cores > st.Cores.Limit {
			st.Cores.Looser = append(st.Cores.Looser, fmt.Sprintf("%s (%d%%)", name, *l.cores))
		}
	}
	return st
}

// quotaDisagreement is the verdict's line when the namespace quota decided and another ResourceQuota of the
// namespace sets a looser limit: HAMi keeps the last one it processed (pkg/device/quota.go, in informer and
// map order), kubectl-hami the tightest.
func quotaDisagreement(q QuotaStatus) []string {
	var out []string
	for _, l := range []*QuotaLine{q.Memory, q.Cores} {
		if l != nil && len(l.Looser) > 0 {
			out = append(out, fmt.Sprintf("HAMi may disagree: with several ResourceQuotas it keeps the one it processed last, and %s "+
				"set a looser %s than %s (%d %s); kubectl-hami applies the tightest, as Kubernetes does",
				strings.Join(l.Looser, ", "), l.Resource, l.Source, l.Limit, l.Unit))
		}
	}
	return out
}

// QuotaNamespaces lists namespaces that have managed quotas or counted usage, sorted.
func (c *Cluster) QuotaNamespaces() []string {
	seen := map[string]bool{}
	for ns := range c.quotas {
		seen[ns] = true
	}
	for ns, u := range c.nsUsed {
		if u.mem != 0 || u.cores != 0 {
			seen[ns] = true
		}
	}
	out := make([]string, 0, len(seen))
	for ns := range seen {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// mulChecked multiplies two non-negative-or-small numbers, reporting false when the product leaves
// [-maxQuotaUse, maxQuotaUse].
func mulChecked(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if p/b != a || p > maxQuotaUse || p < -maxQuotaUse {
		return 0, false
	}
	return p, true
}
