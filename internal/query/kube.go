package query

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
)

// PodsByNode groups the bound pods by spec.nodeName, in the order given.
func PodsByNode(pods []*corev1.Pod) map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for _, p := range pods {
		if p != nil && p.Spec.NodeName != "" {
			out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p)
		}
	}
	return out
}

// KubeChecks runs the standard node constraints kube-scheduler applies before HAMi sees the pod (resources,
// taints, selectors, affinity), sorted by node name like the verdict's nodes, whatever order nodes come in. The
// pod is read as the API server stores it (a limit stands for a missing request), as the verdict's gates read it.
// podsOn are the pods bound to a node (a snapshot builds them one node at a time: Snapshot.PodsOn).
func KubeChecks(pod *corev1.Pod, nodes []*corev1.Node, podsOn func(node string) []*corev1.Pod, cfg engine.Config) []kubefit.NodeResult {
	res := kubefit.CheckOn(engine.WithDefaultRequests(pod), nodes, podsOn, cfg.ManagedResources())
	sort.SliceStable(res, func(i, j int) bool { return res[i].Node < res[j].Node })
	return res
}

// KubeQuotaUsed is Kubernetes' own ResourceQuota status.used by namespace and resource name, shown beside HAMi's
// accounting. Where several ResourceQuotas of a namespace report a resource, the first by name wins, the order
// in which the engine ranks a namespace's quotas (engine.Cluster.Quota); values are PlainQuantity.
func KubeQuotaUsed(quotas []*corev1.ResourceQuota) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, q := range SortedQuotas(quotas) {
		m := out[q.Namespace]
		if m == nil {
			m = map[string]string{}
			out[q.Namespace] = m
		}
		for k, v := range q.Status.Used {
			if _, seen := m[string(k)]; !seen {
				m[string(k)] = PlainQuantity(v)
			}
		}
	}
	return out
}

// SortedQuotas is the ResourceQuotas (nil ones left out) by namespace and name, in a new slice.
func SortedQuotas(quotas []*corev1.ResourceQuota) []*corev1.ResourceQuota {
	out := make([]*corev1.ResourceQuota, 0, len(quotas))
	for _, q := range quotas {
		if q != nil {
			out = append(out, q)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// PlainQuantity writes a ResourceQuota status quantity as the whole number HAMi's columns use beside it (48000,
// not "48k": HAMi's memory resources count MiB, its cores percent). A fractional quantity keeps its Kubernetes
// form.
func PlainQuantity(q resource.Quantity) string {
	if v, ok := q.AsInt64(); ok {
		return fmt.Sprint(v)
	}
	return q.String()
}
