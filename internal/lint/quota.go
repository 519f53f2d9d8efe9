package lint

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

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
