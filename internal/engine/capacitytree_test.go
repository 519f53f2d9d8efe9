package engine_test

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestCapacityTreeIsTheScan holds Capacity's tournament to the scan of every node it replaced: every pod of
// generated worlds (every family, kube checks on and off, with and without quotas), copies up to 40, and the
// same on a world of every device type.
func TestCapacityTreeIsTheScan(t *testing.T) {
	first, n := worldgen.Seeds(200)
	copies := 0
	check := func(what string, c *engine.Cluster, pods []*corev1.Pod) {
		for _, p := range pods {
			restore := engine.SetCapacityTree(false)
			scan := c.Capacity(p, 40)
			restore()
			tree := c.Capacity(p, 40)
			if !reflect.DeepEqual(scan, tree) {
				t.Fatalf("%s: pod %s/%s:\nscan %+v\ntree %+v", what, p.Namespace, p.Name, scan, tree)
			}
			copies += scan.Copies
		}
	}
	eachWorld(first, n, func(what string, _ uint64, c *engine.Cluster, pods []*corev1.Pod) { check(what, c, pods) })
	c, pods := everyKindWorld(t)
	check("every kind", c, pods)
	if copies == 0 {
		t.Fatal("no copy placed: the generators are broken")
	}
	t.Logf("%d worlds from seed %d: %d copies placed both ways", n, first, copies)
}
