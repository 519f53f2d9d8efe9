package engine_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestFactsJudgeAsTheWalk holds the facts' judgement of a failing container (nodefacts.go) to the walk it
// skips: every verdict of generated worlds (every family, kube checks on and off, with and without quotas), of a
// world of every device type and of crowded nodes, whole (nodes, reasons, examples, explanation, hints).
func TestFactsJudgeAsTheWalk(t *testing.T) {
	first, n := worldgen.Seeds(300)
	judged := 0
	eachWorld(first, n, func(what string, _ uint64, c *engine.Cluster, pods []*corev1.Pod) {
		for _, p := range pods {
			judged += compareFacts(t, what, c, p)
		}
	})
	c, pods := everyKindWorld(t)
	for _, p := range pods {
		judged += compareFacts(t, "every kind", c, p)
	}
	if judged == 0 {
		t.Fatal("no node judged by its facts: the generators or quickShort are broken")
	}
	t.Logf("%d worlds from seed %d: %d nodes judged by their facts", n, first, judged)
}

// compareFacts evaluates p with the facts' judgement and without it and fails on any difference; it returns
// the number of nodes the facts judged.
func compareFacts(t *testing.T, what string, c *engine.Cluster, p *corev1.Pod) int {
	t.Helper()
	opts := engine.EvalOptions{}
	restore := engine.SetJudgeByFacts(false)
	walked := c.Evaluate(p, opts)
	restore()
	judged := c.Evaluate(p, opts)
	if d := engine.VerdictDiff(walked, judged); d != "" {
		t.Errorf("%s: pod %s/%s, walked then by facts: %s", what, p.Namespace, p.Name, d)
		return 0
	}
	return engine.FactsJudged(c, p)
}
