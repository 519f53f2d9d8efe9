package kubefit

import (
	"fmt"
	"sort"
	"strings"
)

// Summary renders the results as kube-scheduler's FitError does: "0/3 nodes are available: 1 Insufficient cpu,
// 2 node(s) didn't match Pod's node affinity/selector." A node counts the reasons of its first failing check
// only (kube-scheduler stops at a node's first failing plugin), each reason once, the "count reason"
// strings are sorted as strings (so "10 x" sorts before "2 y", as in kube-scheduler), and the total is the
// number of results. It returns "" when every node passes.
func Summary(results []NodeResult) string {
	counts := map[string]int{}
	for _, r := range results {
		seen := map[string]bool{}
		for _, f := range r.Failures {
			if f.Check != r.Failures[0].Check {
				continue
			}
			if !seen[f.Reason] {
				seen[f.Reason] = true
				counts[f.Reason]++
			}
		}
	}
	if len(counts) == 0 {
		return ""
	}
	parts := make([]string, 0, len(counts))
	for reason, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, reason))
	}
	sort.Strings(parts)
	return fmt.Sprintf("0/%d nodes are available: %s.", len(results), strings.Join(parts, ", "))
}
