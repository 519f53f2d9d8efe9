package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/resolve"
)

// The namespace the UI shows, k9s-style: `:ns NAME` limits the Pending, Quotas and Pods views to one
// namespace (as `top -n NAME` starts), `0` (or `:ns all`) shows every namespace again. Nodes, their GPUs and
// the queues stay whole: every namespace shares them.

// namespaceNames are the namespaces the cluster's GPU pods and quotas are in, sorted.
func (m *Model) namespaceNames() []string {
	seen := map[string]bool{}
	d := m.full
	if d == nil {
		return nil
	}
	for _, p := range d.Pending {
		seen[p.Namespace] = true
	}
	for _, q := range d.Quotas {
		seen[q.Namespace] = true
	}
	for _, n := range d.Nodes {
		for _, p := range n.Pods {
			seen[p.Namespace] = true
		}
	}
	out := make([]string, 0, len(seen))
	for ns := range seen {
		out = append(out, ns)
	}
	slices.Sort(out)
	return out
}

// setNamespace shows namespace ns only ("" every namespace) and says so in the footer.
func (m *Model) setNamespace(ns string) {
	m.opts.OnlyNamespace, m.namespace = ns, ns
	m.setData(m.full)
	if ns == "" {
		m.status = "all namespaces"
	} else {
		m.status = "namespace " + ns + " (0: all namespaces)"
	}
}

// nsCommand is `:ns [NAME]`: switch to a namespace (a unique prefix is enough); without a name, list them.
func (m *Model) nsCommand(args []string) {
	names := m.namespaceNames()
	if len(args) == 0 {
		cur := "all"
		if m.opts.OnlyNamespace != "" {
			cur = m.opts.OnlyNamespace
		}
		m.status = fmt.Sprintf("namespace %s · :ns NAME switches (%s) · 0 all", cur, strings.Join(names, ", "))
		return
	}
	switch a := args[0]; a {
	case "all", "-a", "*":
		m.setNamespace("")
		return
	default:
		r := resolve.Resolve(a, names)
		if !r.Found() {
			msg := fmt.Sprintf("namespace %q has no GPU pods or quotas", a)
			if s := resolve.DidYouMean(resolve.Closest(a, names, resolve.DefaultSuggestions)); s != "" {
				msg += "; " + s
			}
			m.status = msg
			return
		}
		m.setNamespace(r.Name)
	}
}
