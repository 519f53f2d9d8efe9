package cli

import (
	"context"
	"fmt"
	"io"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/resolve"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// The names a flag can take (--node, -n, --queue, --card), read from the snapshot the command evaluates: the
// commands check what was typed against them (internal/resolve) and the shell completion offers them.

func nodeNames(s *snapshot.Snapshot) []string {
	out := make([]string, 0, len(s.Nodes))
	for _, n := range s.Nodes {
		out = append(out, n.Name)
	}
	return query.SortedUnique(out)
}

// namespaceNames are the namespaces that have pods or ResourceQuotas.
func namespaceNames(s *snapshot.Snapshot) []string {
	out := query.Namespaces(nil, s.Quotas)
	// Each namespace once as the pods are read (a snapshot of 300k pods has a few hundred namespaces, and a
	// list of every pod's would be the largest thing the command holds besides the model).
	seen := map[string]bool{}
	last := ""
	for ns := range s.Pods.Names() {
		if ns != last && !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
		last = ns
	}
	return query.SortedUnique(out)
}

func queueNames(s *snapshot.Snapshot) []string {
	out := make([]string, 0, len(s.Queues))
	for _, q := range s.Queues {
		out = append(out, q.GetName())
	}
	return query.SortedUnique(out)
}

// resolveNodes resolves every --node value: the exact name, or one equal but for case, or the only node it is a
// prefix of; anything else is an error that names the closest nodes.
func resolveNodes(s *snapshot.Snapshot, typed []string) ([]string, error) {
	if len(typed) == 0 {
		return typed, nil
	}
	names := nodeNames(s)
	out := make([]string, len(typed))
	for i, t := range typed {
		r := resolve.Resolve(t, names)
		if !r.Found() {
			return nil, notFound("--node", "node", t, s.Source, r.Suggestions)
		}
		out[i] = r.Name
	}
	return out, nil
}

// checkNamespace checks a namespace typed with -n. On a live cluster the API server says whether it exists: one
// that does not is refused with the closest names (a typo would otherwise show an empty namespace, or evaluate a
// pod against no quota); an empty namespace is fine. A snapshot holds no Namespace objects, so there a namespace
// without pods or quotas may well exist (team-a beside team-b): it gets a warning naming the close ones, not a
// refusal.
func checkNamespace(ctx context.Context, r *readFlags, s *snapshot.Snapshot, ns string, errOut io.Writer) error {
	names := namespaceNames(s)
	if ns == "" || slices.Contains(names, ns) {
		return nil
	}
	sugg := resolve.Closest(ns, names, resolve.DefaultSuggestions)
	// A name no namespace can have ("q?", "ML") is refused everywhere, before the API server is asked.
	if err := query.NamespaceNameError(ns); err != nil {
		if d := resolve.DidYouMean(sugg); d != "" {
			return fmt.Errorf("-n %q: %w; %s", ns, err, d)
		}
		return fmt.Errorf("-n %q: %w", ns, err)
	}
	if r.client != nil {
		_, err := r.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return nil // it exists, or this user may not ask: the command says what it finds
		}
		return notFound("-n", "namespace", ns, s.Source, sugg)
	}
	if len(sugg) > 0 {
		fmt.Fprintf(errOut, "warning: -n %q: namespace %s has no pods or ResourceQuotas in %s; %s\n", ns, ns, s.Source, resolve.DidYouMean(sugg))
	}
	return nil
}

// checkQueue refuses a --queue that does not exist when a queue close to it does: the verdict would otherwise
// explain a queue that was never meant.
func checkQueue(s *snapshot.Snapshot, queue string) error {
	return checkKnown("--queue", "queue", queue, queueNames(s), s.Source, "does not exist")
}

func checkKnown(flag, kind, typed string, names []string, source, absent string) error {
	if typed == "" || slices.Contains(names, typed) {
		return nil
	}
	if sugg := resolve.Closest(typed, names, resolve.DefaultSuggestions); len(sugg) > 0 {
		return fmt.Errorf("%s %q: %s %s %s in %s; %s", flag, typed, kind, typed, absent, source, resolve.DidYouMean(sugg))
	}
	return nil
}

// notFound is "--node "gpu-a100-1": no node gpu-a100-1 in SOURCE; did you mean "gpu-a100-01"?".
func notFound(flag, kind, typed, source string, suggestions []string) error {
	msg := fmt.Sprintf("%s %q: no %s %s in %s", flag, typed, kind, typed, source)
	if d := resolve.DidYouMean(suggestions); d != "" {
		msg += "; " + d
	}
	return fmt.Errorf("%s", msg)
}
