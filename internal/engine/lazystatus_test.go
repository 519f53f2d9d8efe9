package engine_test

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestNodeWithBuildsTheStatusItQuotes holds Verdict.NodeWith, which builds one node's status from a verdict's
// rows, to the statuses built whole: for every failing pod of generated worlds and of a world of every device
// type, and every code of its reasons, the same node with the same status (check, example, container, reason);
// and MainReason and Blocker, which read the rows too, to their answers from the statuses.
func TestNodeWithBuildsTheStatusItQuotes(t *testing.T) {
	first, n := worldgen.Seeds(100)
	compared := 0
	check := func(what string, c *engine.Cluster, pods []*corev1.Pod) {
		for _, p := range pods {
			v := c.Evaluate(p, engine.EvalOptions{})
			// MainReason and Blocker from the rows, then from the statuses built whole (a copy holding them).
			main, blocker := engine.MainReason(v), engine.Blocker(v)
			built := *v
			built.SetNodes(v.Nodes())
			if m, b := engine.MainReason(&built), engine.Blocker(&built); m != main || b != blocker {
				t.Fatalf("%s: pod %s: from the rows MainReason %v, Blocker %q; from the statuses %v, %q", what, p.Name, main, blocker, m, b)
			}
			for _, r := range v.Reasons {
				got := v.NodeWith(r.Code) // before the statuses are built: from the rows
				if w := quotedNode(v.Nodes(), r.Code); !reflect.DeepEqual(got, w) {
					t.Fatalf("%s: pod %s, code %s: NodeWith from the rows\n  %+v\nfrom the statuses\n  %+v", what, p.Name, r.Code, got, w)
				}
				if got == nil || got.Code != r.Code || got.Fits {
					t.Fatalf("%s: pod %s, code %s: NodeWith is %+v", what, p.Name, r.Code, got)
				}
				compared++
			}
			if v.NodeCount() != len(v.Nodes()) {
				t.Fatalf("%s: pod %s: NodeCount %d, %d statuses", what, p.Name, v.NodeCount(), len(v.Nodes()))
			}
		}
	}
	eachWorld(first, n, func(what string, _ uint64, c *engine.Cluster, pods []*corev1.Pod) { check(what, c, pods) })
	c, pods := everyKindWorld(t)
	check("every kind", c, pods)
	if compared == 0 {
		t.Fatal("no reason compared: the generators are broken")
	}
	t.Logf("%d worlds from seed %d: %d reasons compared", n, first, compared)
}

// quotedNode is what NodeWith says it returns, read from the statuses built whole: of the nodes failing with
// code at a node-level check the one with the most found (the first on a tie), else the first failing with it.
func quotedNode(nodes []engine.NodeStatus, code engine.Code) *engine.NodeStatus {
	var best *engine.NodeStatus
	for i := range nodes {
		if ns := &nodes[i]; ns.Code == code && ns.Check != nil && (best == nil || ns.Check.Have > best.Check.Have) {
			best = ns
		}
	}
	if best != nil {
		return best
	}
	for i := range nodes {
		if nodes[i].Code == code {
			return &nodes[i]
		}
	}
	return nil
}

// TestLazyListsConcurrent reads one verdict's lists from several goroutines at once, as the UI's views may: each
// list is built once and every reader gets the same (make test runs it under -race).
func TestLazyListsConcurrent(t *testing.T) {
	first, _ := worldgen.Seeds(1)
	read := 0
	eachWorld(first, 3, func(what string, _ uint64, c *engine.Cluster, pods []*corev1.Pod) {
		for _, p := range pods {
			v := c.Evaluate(p, engine.EvalOptions{})
			type lists struct {
				nodes    []engine.NodeStatus
				feasible []string
				count    int
				quoted   *engine.NodeStatus
			}
			got := make([]lists, 4)
			done := make(chan int)
			for g := range got {
				go func() {
					l := &got[g]
					l.nodes, l.feasible, l.count = v.Nodes(), v.Feasible(), v.NodeCount()
					if len(v.Reasons) > 0 {
						l.quoted = v.NodeWith(v.Reasons[0].Code)
					}
					done <- g
				}()
			}
			for range got {
				<-done
			}
			for g := 1; g < len(got); g++ {
				if len(got[g].nodes) > 0 && &got[g].nodes[0] != &got[0].nodes[0] || !reflect.DeepEqual(got[g].feasible, got[0].feasible) ||
					got[g].count != len(got[0].nodes) || !reflect.DeepEqual(got[g].quoted, got[0].quoted) {
					t.Fatalf("%s: pod %s: reader %d got other lists than reader 0", what, p.Name, g)
				}
			}
			read++
		}
	})
	if read == 0 {
		t.Fatal("no verdict read: the generators are broken")
	}
}
