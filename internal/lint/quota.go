package lint

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/query"
)

// quotaObjects lists the ResourceQuotas sorted by namespace and name.
func (in *input) quotaObjects() []*corev1.ResourceQuota { return query.SortedQuotas(in.s.Quotas) }

func hardKeys(rq *corev1.ResourceQuota) []string {
	keys := make([]string, 0, len(rq.Spec.Hard))
	for k := range rq.Spec.Hard {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	return keys
}

func quotaObject(rq *corev1.ResourceQuota) Object {
	return Object{Kind: "ResourceQuota", Namespace: rq.Namespace, Name: rq.Name}
}

func hardField(key string) string { return "spec.hard[" + key + "]" }

// checkQuotaKeys: ResourceQuota keys under a HAMi resource domain that HAMi ignores. HAMi enforces only
// limits.<memory resource> and limits.<cores resource>: requests. keys, bare keys, the percentage resource and
// misspelled names are accepted by Kubernetes and then do nothing for HAMi.
func checkQuotaKeys(in *input) []Finding {
	mem, cores := in.cfg.ResourceMemoryName, in.cfg.ResourceCoreName
	managed := map[string]bool{mem: true, cores: true}
	domains := map[string]bool{}
	for _, r := range []string{in.cfg.ResourceCountName, mem, cores, in.cfg.ResourceMemoryPercentageName, in.cfg.ResourcePriorityName} {
		if d, _, ok := strings.Cut(r, "/"); ok {
			domains[d] = true
		}
	}
	// Resources of the domain that Kubernetes counts natively or that another device plugin serves: a quota on
	// them is real Kubernetes quota, not a HAMi key.
	native := func(r string) bool {
		d, name, _ := strings.Cut(r, "/")
		return r == in.cfg.ResourceCountName || name == "gpu.shared" || strings.HasPrefix(name, "mig-") || !domains[d]
	}
	// limits.<res> keys set anywhere in each namespace: a rename must not clash, and a namespace may have
	// the right key in another ResourceQuota.
	nsHas := map[string]map[string]bool{}
	for _, rq := range in.quotaObjects() {
		if nsHas[rq.Namespace] == nil {
			nsHas[rq.Namespace] = map[string]bool{}
		}
		for _, k := range hardKeys(rq) {
			nsHas[rq.Namespace][k] = true
		}
	}
	var out []Finding
	for _, rq := range in.quotaObjects() {
		keys := hardKeys(rq)
		has := map[string]bool{}
		for _, k := range keys {
			has[k] = true
		}
		rename := func(from, to string) string {
			if has[to] {
				cur := rq.Spec.Hard[corev1.ResourceName(to)]
				return fmt.Sprintf("%s is set already (to %s): keep the value you mean there and remove %s: kubectl -n %s patch resourcequota %s --type=json -p '[{\"op\":\"remove\",\"path\":\"/spec/hard/%s\"}]'",
					to, cur.String(), from, rq.Namespace, rq.Name, jsonPointer(from))
			}
			return fmt.Sprintf("rename the key to %s: kubectl -n %s patch resourcequota %s --type=json -p '[{\"op\":\"move\",\"from\":\"/spec/hard/%s\",\"path\":\"/spec/hard/%s\"}]'",
				to, rq.Namespace, rq.Name, jsonPointer(from), jsonPointer(to))
		}
		for _, key := range keys {
			prefix, res := "", key
			if p, r, ok := strings.Cut(key, "."); ok && (p == "limits" || p == "requests") {
				prefix, res = p, r
			}
			if !strings.Contains(res, "/") || native(res) {
				continue
			}
			f := Finding{Object: quotaObject(rq), Field: hardField(key), Severity: Warning}
			switch {
			case managed[res] && prefix == "limits":
				continue
			case managed[res] && prefix == "requests":
				want := "limits." + res
				f.Message = fmt.Sprintf("HAMi ignores %s: it enforces only %s (Kubernetes counts the requests. key itself, per container and not per GPU, unlike HAMi)", key, want)
				if nsHas[rq.Namespace][want] {
					f.Severity = Info
					f.Fix = fmt.Sprintf("HAMi enforces %s already; remove %s unless you also want Kubernetes' own count", want, key)
				} else {
					f.Fix = rename(key, want)
				}
				rateKubeCounted(in, rq, key, res, want, &f)
			case managed[res]:
				want := "limits." + res
				f.Message = fmt.Sprintf("HAMi ignores %s: it enforces only %s", key, want)
				f.Fix = rename(key, want)
			case res == in.cfg.ResourceMemoryPercentageName:
				f.Message = fmt.Sprintf("HAMi has no quota on %s: percentage requests count against %s in MiB", res, "limits."+mem)
				f.Fix = fmt.Sprintf("limit GPU memory with %s (MiB) instead", "limits."+mem)
			case res == in.cfg.ResourcePriorityName:
				f.Message = fmt.Sprintf("HAMi has no quota on %s", res)
				f.Fix = "remove the key"
			default:
				want := suggestResource(res, mem, cores)
				if want == "" {
					f.Message = fmt.Sprintf("%s is not a HAMi resource: HAMi ignores the key (it enforces only limits.%s and limits.%s)", res, mem, cores)
					f.Fix = fmt.Sprintf("use limits.%s (MiB) or limits.%s (percent of a GPU)", mem, cores)
					break
				}
				f.Message = fmt.Sprintf("%s is not a HAMi resource (did you mean %s?): HAMi ignores the key", res, want)
				if !nsHas[rq.Namespace]["limits."+want] {
					f.Message += fmt.Sprintf(", so namespace %s has no GPU %s quota", rq.Namespace, map[bool]string{true: "memory", false: "cores"}[want == mem])
				}
				f.Fix = rename(key, "limits."+want)
			}
			out = append(out, f)
		}
	}
	return out
}

// rateKubeCounted rates a requests.<HAMi resource> key by what it does: HAMi ignores it, but Kubernetes' own
// quota admission counts it (each container's request, not per GPU) and refuses to create a pod that would take
// the count above the hard value, before HAMi ever sees the pod. So the key blocks pods when the namespace's pods
// already ask for more than it allows (error), or when it is tighter than HAMi's limits. key (warning).
func rateKubeCounted(in *input, rq *corev1.ResourceQuota, key, res, want string, f *Finding) {
	hard := rq.Spec.Hard[corev1.ResourceName(key)]
	asked, pods := kubeCounted(in, rq.Namespace, corev1.ResourceName(res))
	remove := fmt.Sprintf("kubectl -n %s patch resourcequota %s --type=json -p '[{\"op\":\"remove\",\"path\":\"/spec/hard/%s\"}]'",
		rq.Namespace, rq.Name, jsonPointer(key))
	if asked.Cmp(hard) > 0 {
		f.Severity = Error
		f.Message = fmt.Sprintf("Kubernetes' own quota counts %s (HAMi ignores it): the namespace's pods ask for %s in all (%s), above the hard %s, "+
			"so Kubernetes refuses to create any further pod asking for %s here (exceeded quota) before HAMi sees it",
			key, query.PlainQuantity(asked), strings.Join(pods, ", "), query.PlainQuantity(hard), res)
		if f.Fix == "" || strings.HasPrefix(f.Fix, "HAMi enforces") {
			f.Fix = fmt.Sprintf("HAMi enforces %s already: remove %s (%s), or raise it above %s", want, key, remove, query.PlainQuantity(asked))
		}
		return
	}
	if limit, ok := tightestHard(in, rq.Namespace, want); ok && hard.Cmp(limit) < 0 {
		f.Severity = Warning
		f.Message = fmt.Sprintf("Kubernetes' own quota counts %s (HAMi ignores it): its hard %s is below HAMi's %s of %s, "+
			"so Kubernetes refuses to create pods that HAMi would place (exceeded quota)", key, query.PlainQuantity(hard), want, query.PlainQuantity(limit))
		f.Fix = fmt.Sprintf("keep one GPU memory limit, HAMi's: remove %s (%s), or raise it to %s", key, remove, query.PlainQuantity(limit))
	}
}

// kubeCounted is what Kubernetes' quota counts of res in namespace ns: each unfinished pod's request (an
// extended resource's request is its limit), the sum of its containers or its largest init container. pods
// names the pods that ask for any, with their amounts.
func kubeCounted(in *input, ns string, res corev1.ResourceName) (resource.Quantity, []string) {
	var total resource.Quantity
	var pods []string
	amount := func(c corev1.Container) resource.Quantity {
		if q, ok := c.Resources.Requests[res]; ok {
			return q
		}
		return c.Resources.Limits[res]
	}
	for p := range in.pods.in(ns) {
		if p.Namespace != ns {
			continue
		}
		var sum, initMax resource.Quantity
		for _, c := range p.Spec.Containers {
			sum.Add(amount(c))
		}
		for _, c := range p.Spec.InitContainers {
			if q := amount(c); q.Cmp(initMax) > 0 {
				initMax = q
			}
		}
		if initMax.Cmp(sum) > 0 {
			sum = initMax
		}
		if sum.IsZero() {
			continue
		}
		total.Add(sum)
		pods = append(pods, fmt.Sprintf("%s %s", p.Name, query.PlainQuantity(sum)))
	}
	return total, pods
}

// tightestHard is the smallest hard value of key among namespace ns's ResourceQuotas.
func tightestHard(in *input, ns, key string) (resource.Quantity, bool) {
	var out resource.Quantity
	found := false
	for _, rq := range in.quotaObjects() {
		if rq.Namespace != ns {
			continue
		}
		if q, ok := rq.Spec.Hard[corev1.ResourceName(key)]; ok && (!found || q.Cmp(out) < 0) {
			out, found = q, true
		}
	}
	return out, found
}

// jsonPointer escapes a map key for a JSON patch path.
func jsonPointer(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// suggestResource is mem or cores when res looks like a misspelling of one of them, else "".
func suggestResource(res, mem, cores string) string {
	// Compare the names without their domain, so that a long shared "nvidia.com/" does not make any name close.
	short := func(r string) string {
		if _, n, ok := strings.Cut(r, "/"); ok {
			return n
		}
		return r
	}
	if best, ok := closest(short(res), []string{short(mem), short(cores)}); ok {
		if best == short(mem) {
			return mem
		}
		return cores
	}
	_, name, _ := strings.Cut(strings.ToLower(res), "/")
	switch {
	case strings.Contains(name, "mem") && !strings.Contains(name, "percent"):
		return mem
	case strings.Contains(name, "core"):
		return cores
	}
	return ""
}

// checkQuotaZero: limits.<memory> or limits.<cores> of 0. HAMi v2.10 denies every GPU pod of the namespace;
// older HAMi versions read 0 as unlimited. Either way the value rarely says what its author meant.
func checkQuotaZero(in *input) []Finding {
	var out []Finding
	for _, rq := range in.quotaObjects() {
		for _, res := range []string{in.cfg.ResourceMemoryName, in.cfg.ResourceCoreName} {
			key := "limits." + res
			q, ok := rq.Spec.Hard[corev1.ResourceName(key)]
			if !ok || !q.IsZero() {
				continue
			}
			out = append(out, Finding{Severity: Warning, Object: quotaObject(rq), Field: hardField(key),
				Message: "a quota of 0: HAMi v2.10 denies every GPU pod of the namespace, HAMi before v2.10 read 0 as unlimited",
				Fix:     fmt.Sprintf("remove the key for no limit, or set a positive %s", map[bool]string{true: "MiB amount", false: "percentage"}[res == in.cfg.ResourceMemoryName])})
		}
	}
	return out
}
