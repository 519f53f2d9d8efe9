package engine_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestUnsortedFailIsTheSortedWalk holds the unsorted walk of a container that cannot fit (unsorted.go) to the
// sorted walk it skips: every verdict of generated worlds (every family, kube checks on and off, with and
// without quotas) and of a world of every device type, node by node and device by device.
func TestUnsortedFailIsTheSortedWalk(t *testing.T) {
	first, n := worldgen.Seeds(300)
	compared := 0
	eachWorld(first, n, func(what string, _ uint64, c *engine.Cluster, pods []*corev1.Pod) {
		for _, p := range pods {
			compared += compareWalks(t, what, c, p)
		}
	})
	c, pods := everyKindWorld(t)
	for _, p := range pods {
		compared += compareWalks(t, "every kind", c, p)
	}
	if compared == 0 {
		t.Fatal("no failing node compared: the generators are broken")
	}
	t.Logf("%d worlds from seed %d: %d failing nodes compared", n, first, compared)
}

// compareWalks evaluates p with the unsorted walk and without it and fails on any difference; it returns the
// number of nodes where the pod did not fit on devices (where the walks could differ).
func compareWalks(t *testing.T, what string, c *engine.Cluster, p *corev1.Pod) int {
	t.Helper()
	opts := engine.EvalOptions{}
	restore := engine.SetUnsortedFail(false)
	sorted := c.Evaluate(p, opts)
	restore()
	unsorted := c.Evaluate(p, opts)
	if d := engine.VerdictDiff(sorted, unsorted); d != "" {
		t.Errorf("%s: pod %s/%s, sorted then unsorted: %s", what, p.Namespace, p.Name, d)
		return 0
	}
	failing := 0
	for _, ns := range sorted.Nodes() {
		if !ns.Fits && ns.Check == nil {
			failing++
		}
	}
	return failing
}
