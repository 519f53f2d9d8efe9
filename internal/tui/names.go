package tui

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/resolve"
)

// nameWarningsLocked says which names of the what-if pod (namespace, queue, card models) the cluster does not
// know while a close one is known, with the names meant (as the CLI's --card, --queue and -n checks): the
// answer below would otherwise be advice about a misspelling. Names far from every known one get no warning
// (a new namespace; a card no node has, which the verdict explains).
func (w *world) nameWarningsLocked(p *corev1.Pod) []string {
	var out []string
	check := func(what, typed string, known []string) {
		if typed == "" || slices.Contains(known, typed) {
			return
		}
		if sugg := resolve.Closest(typed, known, resolve.DefaultSuggestions); len(sugg) > 0 {
			out = append(out, fmt.Sprintf("%s %q is not in the cluster; %s", what, typed, resolve.DidYouMean(sugg)))
		}
	}
	check("namespace", p.Namespace, query.SortedUnique(append(w.pods.namespaces(), query.Namespaces(nil, values(w.quotas))...)))
	var queues []string
	for _, q := range w.c.Queues() {
		queues = append(queues, q.Name)
	}
	check("queue", p.Annotations[codec.QueueNameAnnotation], queues)
	if alts, err := codec.ParseCardName(p.Annotations[codec.CardNameAnnotation]); err == nil {
		cards := query.CardNames(w.c)
		for _, alt := range alts {
			check("card", alt, cards)
		}
	}
	return out
}
