package query

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// Namespaces are the namespaces that have pods or ResourceQuotas, sorted: the ones a snapshot knows (it holds
// no Namespace objects), against which a typed namespace is checked.
func Namespaces(pods []*corev1.Pod, quotas []*corev1.ResourceQuota) []string {
	out := make([]string, 0, len(pods)+len(quotas))
	for _, p := range pods {
		if p != nil {
			out = append(out, p.Namespace)
		}
	}
	for _, q := range quotas {
		if q != nil {
			out = append(out, q.Namespace)
		}
	}
	return SortedUnique(out)
}

// CardNames are the card models the nodes have and the queues' card quotas name, sorted: the ones a typed
// card (what-if's --card, the UI's Card field) is checked against.
func CardNames(c *engine.Cluster) []string {
	var out []string
	for _, name := range c.NodeNames() {
		for _, k := range c.Node(name).Cards {
			out = append(out, k.Name)
		}
	}
	for _, q := range c.QueueUsages() {
		for _, k := range q.Cards {
			out = append(out, k.Card)
		}
	}
	return SortedUnique(out)
}

// SortedUnique sorts names in place and drops repeats.
func SortedUnique(names []string) []string {
	sort.Strings(names)
	return slices.Compact(names)
}
